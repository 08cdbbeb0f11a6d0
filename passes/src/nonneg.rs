//! The `mark_nonneg` pass: flags every truncation of a provably non-negative value.
//!
//! **Analysis:** [`sci_ir::analysis::nonneg`] (in the IR, because the runtime uses the
//! same analysis to choose MaxPool's and ArgMax's comparison): a forward pass proving,
//! per value, that every element is ≥ 0 on every input, sound under the ring's wrapping
//! semantics (ops that can overflow never propagate the claim) and independent of the
//! server's weights (the flag is public).
//!
//! **Pass** ([`run`]): sets `nonneg: true` on every `trunc` whose operand is proven
//! non-negative (flags already set are kept). The runtime then uses the cheaper
//! truncation that skips the DReLU of Algorithm 5 (step 2), as CrypTFlow2 does after a
//! ReLU (§6.2).
//!
//! **Why it is exact:** for a non-negative input both truncation protocols compute the
//! same `⌊x / 2^s⌋`, and the analysis holds on every input, so the secure result stays
//! bitwise equal to the interpreter's; the interpreter checks the flag and fails if it
//! is ever wrong.

use crate::error::PassError;
use crate::rewrite::Rewriter;
use sci_ir::analysis::nonneg::nonneg;
use sci_ir::{Op, Program};

/// The `mark_nonneg` pass: see the module docs.
pub fn run(p: &Program) -> Result<Program, PassError> {
    let nn = nonneg(p);
    let mut rw = Rewriter::new(p);
    for v in p.ids() {
        let instr = p.instr(v);
        match &instr.op {
            Op::Trunc { x, s, nonneg } if !nonneg && nn[x.index()] => {
                let xn = rw.get(*x)?;
                let n = rw.push(
                    &instr.name,
                    Op::Trunc {
                        x: xn,
                        s: *s,
                        nonneg: true,
                    },
                )?;
                rw.set(v, n);
            }
            _ => rw.copy(v)?,
        }
    }
    rw.finish()
}
