//! `sci-passes`: graph-to-graph transformations of the IR and autotuning.
