//! The [`Pass`] trait (a named program-to-program transformation) and [`FnPass`], a
//! pass given by a function: below the pass manager and every pass with parameters
//! (such as [`crate::Quantize`]).

use crate::error::PassError;
use sci_ir::Program;

/// A program-to-program transformation.
pub trait Pass: Send + Sync {
    /// The pass's name (as in the pipeline table and IR dumps).
    fn name(&self) -> &'static str;
    /// Rewrites `p`; the result is well-typed (built through [`sci_ir::Builder`]).
    fn run(&self, p: &Program) -> Result<Program, PassError>;
}

/// A pass given by a name and a function (the passes without parameters).
pub struct FnPass {
    name: &'static str,
    f: fn(&Program) -> Result<Program, PassError>,
}

impl FnPass {
    /// A pass called `name` that runs `f`.
    pub const fn new(name: &'static str, f: fn(&Program) -> Result<Program, PassError>) -> Self {
        FnPass { name, f }
    }
}

impl Pass for FnPass {
    fn name(&self) -> &'static str {
        self.name
    }
    fn run(&self, p: &Program) -> Result<Program, PassError> {
        (self.f)(p)
    }
}
