//! Identity removal.
//!
//! **Rewrites:** every use of `identity x` (ONNX `Identity`, `Dropout` in inference,
//! `Cast` between float types) by a use of `x`; likewise `reshape`/`flatten` whose result
//! shape equals the operand's, and `transpose` by the identity permutation.
//!
//! **Why it is exact:** each of these ops returns its operand unchanged (same data, same
//! shape, same type), so replacing its value by the operand changes nothing.

use crate::error::PassError;
use crate::rewrite::Rewriter;
use sci_ir::{Op, Program};

/// The pass: see the module docs.
pub fn run(p: &Program) -> Result<Program, PassError> {
    let mut rw = Rewriter::new(p);
    for v in p.ids() {
        let instr = p.instr(v);
        let same = |x: &sci_ir::ValueId| p.ty(*x).shape() == instr.ty.shape();
        let forward = match &instr.op {
            Op::Identity { x } => Some(*x),
            Op::Reshape { x, .. } | Op::Flatten { x, .. } if same(x) => Some(*x),
            Op::Transpose { x, perm } if perm.iter().enumerate().all(|(i, &q)| i == q) => Some(*x),
            _ => None,
        };
        match forward {
            Some(x) => {
                let n = rw.get(x)?;
                rw.set(v, n);
            }
            None => rw.copy(v)?,
        }
    }
    rw.finish()
}
