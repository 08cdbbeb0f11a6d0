//! The pass manager: one explicit pipeline of named passes (in the manner of
//! Cranelift's `Context::optimize`), with the type checker run on every instruction of
//! every pass's output (each pass rebuilds its program through [`sci_ir::Builder`],
//! which type-checks as it goes) and an optional observer that sees the IR after each
//! pass (for `sci-compile --dump-ir`).
//!
//! The standard pipeline, in order:
//!
//! | # | pass | stage | what |
//! |---|---|---|---|
//! | 1 | [`remove_identity`] | float | `identity`, no-op reshapes/transposes |
//! | 2 | [`fold_constants`] | float | ops of constants only (e.g. transposed weights) |
//! | 3 | [`fuse_gelu`] | float | the exporters' `x·(erf(x/√2) + 1)·½` → `spline x func=1` |
//! | 4 | [`fold_batchnorm`] | float | BatchNorm into conv/matmul, else mul + add |
//! | 5 | [`fold_affine`] | float | per-channel `mul`/`add`/`sub` by constants into conv/matmul |
//! | 6 | [`swap_relu_maxpool`] | float | `relu(maxpool(x))` → `maxpool(relu(x))` |
//! | 7 | [`dce`] | float | dead code |
//! | 8 | [`quantize`](crate::quantize) | float → fixed | ring types, encoded constants, `trunc` after products |
//! | 9 | [`swap_relu_maxpool`] | fixed | again, for already-quantized input files |
//! | 10 | [`place_truncs`] | fixed | move `trunc` past ReLU/MaxPool/add, merge those of a concat (§6.2) |
//! | 11 | [`fold_constants`] | fixed | e.g. `scale_up` of constants left by 10 |
//! | 12 | [`mark_nonneg`](crate::nonneg) | fixed | `trunc nonneg` where the input is provably ≥ 0 |
//! | 13 | [`dce`] | fixed | dead code |
//! | 14 | [`he_field`](crate::he_field) | fixed | SCI_HE only (`sci-compile --backend he`): the ring program re-encoded into the HE field of the same width |
//!
//! Float-only passes leave fixed-point programs unchanged, and the fixed-point ones find
//! nothing to do in float programs, so an already-quantized IR file goes through the same
//! pipeline without step 8. Autotuning runs the float stage (1–7) once and the fixed stage
//! (8–13) once per candidate scale.

use crate::error::PassError;
use crate::pass::{FnPass, Pass};
use crate::quantize::Quantize;
use crate::{
    dce, fold_affine, fold_batchnorm, fold_constants, fuse_gelu, nonneg, place_truncs,
    remove_identity, swap_relu_maxpool,
};
use sci_ir::Program;
use thiserror::Error;

/// A pass failed: which one, and why.
#[derive(Clone, Debug, PartialEq, Error)]
#[error("pass `{pass}`: {error}")]
pub struct PipelineError {
    /// The failing pass.
    pub pass: &'static str,
    /// Its error.
    pub error: Box<PassError>,
}

/// An ordered list of passes.
pub struct Pipeline {
    passes: Vec<Box<dyn Pass>>,
}

impl Pipeline {
    /// The float stage (passes 1–7 of the module table).
    pub fn float_stage() -> Pipeline {
        Pipeline {
            passes: vec![
                Box::new(FnPass::new("remove_identity", remove_identity::run)),
                Box::new(FnPass::new("fold_constants", fold_constants::run)),
                Box::new(FnPass::new("fuse_gelu", fuse_gelu::run)),
                Box::new(FnPass::new("fold_batchnorm", fold_batchnorm::run)),
                Box::new(FnPass::new("fold_affine", fold_affine::run)),
                Box::new(FnPass::new("swap_relu_maxpool", swap_relu_maxpool::run)),
                Box::new(FnPass::new("dce", dce::run)),
            ],
        }
    }

    /// The fixed-point stage (passes 8–13): quantization at `quant` if given (for a float
    /// program), then the ReLU/MaxPool swap, truncation placement, constant folding,
    /// non-negativity marking and dead-code elimination.
    pub fn fixed_stage(quant: Option<Quantize>) -> Pipeline {
        let mut passes: Vec<Box<dyn Pass>> = Vec::new();
        if let Some(q) = quant {
            passes.push(Box::new(q));
        }
        passes.push(Box::new(FnPass::new(
            "swap_relu_maxpool",
            swap_relu_maxpool::run,
        )));
        passes.push(Box::new(FnPass::new("place_truncs", place_truncs::run)));
        passes.push(Box::new(FnPass::new("fold_constants", fold_constants::run)));
        passes.push(Box::new(FnPass::new("mark_nonneg", nonneg::run)));
        passes.push(Box::new(FnPass::new("dce", dce::run)));
        Pipeline { passes }
    }

    /// The whole pipeline: [`Pipeline::float_stage`] then [`Pipeline::fixed_stage`].
    pub fn standard(quant: Option<Quantize>) -> Pipeline {
        let mut p = Pipeline::float_stage();
        p.passes.extend(Pipeline::fixed_stage(quant).passes);
        p
    }

    /// The passes' names, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.passes.iter().map(|p| p.name()).collect()
    }

    /// Runs the passes in order on `p`; `observe` sees each pass's name and output.
    pub fn run_observed(
        &self,
        p: &Program,
        observe: &mut dyn FnMut(&'static str, &Program),
    ) -> Result<Program, PipelineError> {
        let mut cur = p.clone();
        for pass in &self.passes {
            cur = pass.run(&cur).map_err(|error| PipelineError {
                pass: pass.name(),
                error: Box::new(error),
            })?;
            observe(pass.name(), &cur);
        }
        Ok(cur)
    }

    /// Runs the passes in order on `p`.
    pub fn run(&self, p: &Program) -> Result<Program, PipelineError> {
        self.run_observed(p, &mut |_, _| {})
    }
}
