//! `sci-passes`: the graph-to-graph transformations of sci, their pass manager, and
//! autotuning of the bit width and scale.
//!
//! Every pass is a module whose doc comment states what it rewrites and why the rewrite
//! is exact; every pass rebuilds its program through [`sci_ir::Builder`], so its output is
//! type-checked instruction by instruction. [`Pipeline`] runs them in one explicit order
//! (see [`manager`]); [`autotune`] picks (ℓ, s) on a validation set (CrypTFlow2 §6.2).

mod affine;
pub mod autotune;
pub mod dce;
mod error;
pub mod fold_affine;
pub mod fold_batchnorm;
pub mod fold_constants;
pub mod fuse_gelu;
pub mod fuse_relu_trunc;
pub mod he_field;
pub mod manager;
pub mod nonneg;
pub mod pass;
pub mod place_truncs;
pub mod quantize;
pub mod remove_identity;
mod rewrite;
pub mod swap_relu_maxpool;

pub use error::PassError;
pub use he_field::HeField;
pub use manager::{Pipeline, PipelineError};
pub use pass::{FnPass, Pass};
pub use quantize::Quantize;
