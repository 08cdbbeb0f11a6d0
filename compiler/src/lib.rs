//! `sci-compiler`: the driver behind `sci-compile` — load a model (ONNX through
//! [`sci_frontend`], or the IR text format), run the pass pipeline of [`sci_passes`] at a
//! given or autotuned (ℓ, s), check that the result can run securely, and describe it:
//! the plan files ([`sci_ir::plan`]) and a cost report ([`report`]) with the predicted
//! protocol calls of every layer ([`cost`]), and the choice of the backend from the
//! network ([`auto`]).

pub mod auto;
pub mod cost;
pub mod driver;
#[doc(hidden)]
pub mod fuzz_entry;
pub mod report;

pub use driver::{CompileError, Compiled, Options, Quantization, compile};
