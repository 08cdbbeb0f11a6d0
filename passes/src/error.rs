//! Errors of the passes.

use sci_ir::fixed::FixedError;
use sci_ir::interp::InterpError;
use sci_ir::{CheckError, Encoding, ParamsError};
use thiserror::Error;

/// Why a pass could not rewrite a program.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum PassError {
    /// A rewritten instruction did not type-check. The passes only build well-typed
    /// programs from well-typed ones, so this names a bug (or an unsupported corner of
    /// a hand-written IR file), at the offending instruction.
    #[error("rewritten program does not type-check: {0}")]
    Check(#[from] CheckError),
    /// The program's protocol parameters are invalid.
    #[error(transparent)]
    Params(#[from] ParamsError),
    /// The pass needs a program in another stage (e.g. quantization of a program that is
    /// already fixed-point).
    #[error("expected a {expected} program, found encoding {found}")]
    Stage {
        /// What the pass accepts.
        expected: &'static str,
        /// The encoding found.
        found: Encoding,
    },
    /// An instruction the pass cannot handle.
    #[error("%{value} = {op}: {reason}")]
    Unsupported {
        /// The value's name.
        value: String,
        /// The op's mnemonic.
        op: &'static str,
        /// Why.
        reason: String,
    },
    /// A constant (weight, bias) does not fit the ring at its scale.
    #[error(
        "constant %{value} does not fit: {error} (choose a larger bit width or a smaller scale)"
    )]
    DoesNotFit {
        /// The constant's name.
        value: String,
        /// The encoding error (value, scale, ring).
        error: FixedError,
    },
    /// Invalid quantization parameters.
    #[error("invalid quantization parameters: {0}")]
    Quant(String),
    /// Evaluating constant operands failed.
    #[error("constant folding %{value}: {error}")]
    Fold {
        /// The value being folded.
        value: String,
        /// The interpreter's error.
        error: InterpError,
    },
    /// An internal invariant of a pass was violated (a bug).
    #[error("internal error: {0}")]
    Internal(String),
}
