//! Fusing a ReLU with the non-negative truncation after it.
//!
//! **Rewrites:** `trunc (relu x) s nonneg` into `relu_trunc x s` when the ReLU's only
//! use is the truncation and the program is over a ring `Z_{2^ℓ}`. The fused
//! instruction keeps the truncation's name (its users and outputs are unchanged); the
//! ReLU goes. Truncations of a ReLU's output with other uses, truncations after a
//! MaxPool, a reshape or anything else between, and field programs (SCI_HE: there is no
//! fused protocol over `Z_n`) are left alone.
//!
//! **Why it is exact:** `relu_trunc x s` is defined as `max(x, 0) ≫ s`, which is what
//! the pair computes (the truncation's `nonneg` assertion holds: a ReLU's output is ≥ 0).
//!
//! **Why:** the runtime then runs the truncation's millionaires' (`Π_MILL^s` of the low
//! bits' carry) on the ReLU's *input* shares, beside the `DReLU`'s `Π_MILL^{ℓ−1}` in one
//! call, instead of after the ReLU's multiplexer (`proto::trunc::relu_trunc`): the same
//! bits, and the truncation's millionaires' rounds gone — at ℓ = 32, m = 4 a pair takes 5
//! rounds instead of 7 (`sci_ir::cost::div::relu_trunc`; SqueezeNet at ℓ = 37: 299 → 253).

use crate::error::PassError;
use crate::rewrite::Rewriter;
use sci_ir::{Encoding, Op, Program};

/// The pass: see the module docs.
pub fn run(p: &Program) -> Result<Program, PassError> {
    if !matches!(p.encoding(), Some(Encoding::Ring { .. })) {
        return Ok(p.clone());
    }
    let users = p.users();
    let n = p.instrs().len();
    // fused[r] for a ReLU whose only user is a non-negative truncation.
    let mut fused = vec![false; n];
    for v in p.ids() {
        if let Op::Trunc {
            x, nonneg: true, ..
        } = &p.instr(v).op
            && let Op::Relu { .. } = &p.instr(*x).op
            && users[x.index()] == [v]
        {
            fused[x.index()] = true;
        }
    }
    if !fused.contains(&true) {
        return Ok(p.clone());
    }
    let mut rw = Rewriter::new(p);
    for v in p.ids() {
        let instr = p.instr(v);
        match &instr.op {
            Op::Relu { .. } if fused[v.index()] => {}
            Op::Trunc { x, s, .. } if fused[x.index()] => {
                let Op::Relu { x: inner } = &p.instr(*x).op else {
                    return Err(PassError::Internal("fused value is not a ReLU".into()));
                };
                let inner = rw.get(*inner)?;
                let t = rw.push(&instr.name, Op::ReluTrunc { x: inner, s: *s })?;
                rw.set(v, t);
            }
            _ => rw.copy(v)?,
        }
    }
    rw.finish()
}
