//! Running ReLU before MaxPool instead of after.
//!
//! **Rewrites:** `relu(maxpool(x))` into `maxpool(relu(x))` when the MaxPool's only use
//! is the ReLU. The new ReLU keeps the old ReLU's name, the new MaxPool the old
//! MaxPool's, and users of the old ReLU now read the new MaxPool. Repeats until nothing
//! changes (`relu(maxpool(maxpool(x)))` moves the ReLU before both).
//!
//! **Why it is exact:** ReLU is monotone, so the maximum of the ReLUs of a window is the
//! ReLU of its maximum: `max_i max(x_i, 0) = max(max_i x_i, 0)`. Padded positions are
//! never compared (see [`sci_ir::Op::MaxPool`]), so padding does not interfere. This
//! holds for f32 (no rounding is involved) and for signed fixed-point values alike.
//!
//! **Why this order:** it runs the ReLU on the larger tensor (`k²` times more elements
//! after a `k×k` pooling of stride `k`), which the paper avoids (its SqueezeNet's
//! largest ReLU layer has 64·56·56 elements, the size *after* the first MaxPool,
//! Appendix G). But sci's MaxPool must equal the interpreter on every input, and its
//! exact comparison of arbitrary signed values costs one more `DReLU` per input element
//! and an AND per comparison; over the non-negative output of a ReLU the runtime uses
//! the paper's cheaper comparison, exact there (`sci_ir::analysis::nonneg`; see the
//! runtime's executor). With the runtime's cost functions (`proto::relu::cost_bits`,
//! `proto::maxpool::cost_bits` and `rounds`; ℓ = 32, m = 4, both directions), ReLU first
//! is the cheaper order in bytes and in rounds for the pools networks use:
//!
//! | pooling | ReLU then MaxPool (narrow) | MaxPool (exact) then ReLU |
//! |---|---|---|
//! | SqueezeNet's first, 64×111×111, 3×3/2 (ceil) | 1155.8 MiB, 20 rounds | 1249.1 MiB, 28 rounds |
//! | 2×2/2 over 64×56×56 | 173.7 MiB, 12 rounds | 193.5 MiB, 18 rounds |
//! | 3×3/1 over 64×56×56 | 837.5 MiB, 20 rounds | 948.8 MiB, 28 rounds |
//! | 4×4/4 over 64×56×56 | 192.3 MiB, 20 rounds | 194.2 MiB, 28 rounds |
//! | 5×5/5 over 64×55×55 | 187.6 MiB, 24 rounds | 187.4 MiB, 33 rounds |
//!
//! (ℓ = 41 and m = 7 give the same picture: 7–12% less communication for 2×2 and 3×3
//! pools.) Only non-overlapping pools of 5×5 and more would send up to 2% less the other
//! way, still with more rounds, so one canonical order serves; the runtime's test
//! `relu_maxpool_order` recomputes these figures and checks the choice.

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
    // swapped[m] for a MaxPool whose only user is a ReLU.
    let mut swapped = vec![false; n];
    for v in p.ids() {
        if let Op::Relu { x } = &p.instr(v).op
            && matches!(p.instr(*x).op, Op::MaxPool { .. })
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
            Op::MaxPool { .. } if swapped[v.index()] => {}
            Op::Relu { x } if swapped[x.index()] => {
                let pool = p.instr(*x);
                let Op::MaxPool {
                    x: inner,
                    pool: geometry,
                } = &pool.op
                else {
                    return Err(PassError::Internal("swapped value is not a MaxPool".into()));
                };
                let inner = rw.get(*inner)?;
                let r = rw.push(&instr.name, Op::Relu { x: inner })?;
                let m = rw.push(
                    &pool.name,
                    Op::MaxPool {
                        x: r,
                        pool: *geometry,
                    },
                )?;
                rw.set(v, m);
            }
            _ => rw.copy(v)?,
        }
    }
    Ok((rw.finish()?, true))
}
