//! Running ReLU after MaxPool instead of before.
//!
//! **Rewrites:** `maxpool(relu(x))` into `relu(maxpool(x))` when the ReLU's only use is
//! the MaxPool. The new MaxPool keeps the old MaxPool's name, the new ReLU the old
//! ReLU's, and users of the old MaxPool now read the new ReLU. Repeats until nothing
//! changes (`maxpool(maxpool(relu(x)))` moves the ReLU past both).
//!
//! **Why it is exact:** ReLU is monotone, so the maximum of the ReLUs of a window is the
//! ReLU of its maximum: `max_i max(x_i, 0) = max(max_i x_i, 0)`. Padded positions are
//! never compared (see [`sci_ir::Op::MaxPool`]), so padding does not interfere. This
//! holds for f32 (no rounding is involved) and for signed fixed-point values alike.
//!
//! **Why it pays:** a secure ReLU costs one DReLU and one MUX per element; after a
//! `k×k` MaxPool with stride `k` there are `k²` times fewer elements. CrypTFlow2 does the
//! same: its SqueezeNet's largest ReLU layer has 200,704 = 64·56·56 elements, the size
//! after the first MaxPool, not the 64·111·111 before it (paper, Appendix G).

use crate::error::PassError;
use crate::rewrite::{Rewriter, fixpoint};
use sci_ir::{Op, Program};

/// The pass: see the module docs.
pub fn run(p: &Program) -> Result<Program, PassError> {
    fixpoint(p, sweep)
}

fn sweep(p: &Program) -> Result<(Program, bool), PassError> {
    let users = p.users();
    let n = p.instrs().len();
    // swapped[r] for a ReLU whose only user is a MaxPool.
    let mut swapped = vec![false; n];
    for v in p.ids() {
        if let Op::MaxPool { x, .. } = &p.instr(v).op
            && matches!(p.instr(*x).op, Op::Relu { .. })
            && users[x.index()] == [v]
        {
            swapped[x.index()] = true;
        }
    }
    if !swapped.contains(&true) {
        return Ok((p.clone(), false));
    }
    let mut rw = Rewriter::new(p);
    for v in p.ids() {
        let instr = p.instr(v);
        match &instr.op {
            Op::Relu { .. } if swapped[v.index()] => {}
            Op::MaxPool { x, pool } if swapped[x.index()] => {
                let relu = p.instr(*x);
                let Op::Relu { x: inner } = &relu.op else {
                    return Err(PassError::Internal("swapped value is not a ReLU".into()));
                };
                let inner = rw.get(*inner)?;
                let m = rw.push(
                    &instr.name,
                    Op::MaxPool {
                        x: inner,
                        pool: *pool,
                    },
                )?;
                let r = rw.push(&relu.name, Op::Relu { x: m })?;
                rw.set(v, r);
            }
            _ => rw.copy(v)?,
        }
    }
    Ok((rw.finish()?, true))
}
