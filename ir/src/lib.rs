//! `sci-ir`: the typed fixed-point IR, its text format, the reference interpreter and plan files.
