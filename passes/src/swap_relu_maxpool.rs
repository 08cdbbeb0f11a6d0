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
//! **When:** per pool, when the cost model ([`sci_ir::cost`]) predicts fewer bytes in
//! both directions for the swapped pair (rounds break ties). The swapped order runs the
//! ReLU on the larger tensor (`k²` times more elements after a `k×k` pooling of stride
//! `k`), which the paper avoids (its SqueezeNet's largest ReLU layer has 64·56·56
//! elements, the size *after* the first MaxPool, Appendix G). But sci's MaxPool must
//! equal the interpreter on every input, and its exact comparison of arbitrary signed
//! values costs one more `DReLU` per input element and an AND per comparison; over the
//! non-negative output of a ReLU the runtime uses the paper's cheaper comparison, exact
//! there (`sci_ir::analysis::nonneg`; see the runtime's executor). With the model (ℓ =
//! 32, m = 4, one lane, both directions):
//!
//! | pooling | ReLU then MaxPool (narrow) | MaxPool (exact) then ReLU |
//! |---|---|---|
//! | SqueezeNet's first, 64×111×111, 3×3/2 (ceil) | 1155.8 MiB, 20 rounds | 1249.1 MiB, 28 rounds |
//! | 2×2/2 over 64×56×56 | 173.7 MiB, 12 rounds | 193.5 MiB, 18 rounds |
//! | 3×3/1 over 64×56×56 | 837.5 MiB, 20 rounds | 948.8 MiB, 28 rounds |
//! | 4×4/4 over 64×56×56 | 192.3 MiB, 20 rounds | 194.2 MiB, 28 rounds |
//! | 5×5/5 over 64×55×55 | 187.6 MiB, 24 rounds | 187.4 MiB, 33 rounds |
//!
//! so the 5×5/5 pool keeps its order (a test checks it) and the others swap. A MaxPool
//! whose operand is already provably non-negative gains nothing from the swap and keeps
//! its order. The model is evaluated at the program's ℓ when it is quantized (the fixed
//! stage runs this pass again for quantized input files), at ℓ = 32 on a float program
//! (ℓ = 41 and m = 7 give the same decisions on the shapes above), at the program's
//! radix `m`. The runtime's test `relu_maxpool_order` recomputes these figures.

use crate::error::PassError;
use crate::rewrite::{Rewriter, fixpoint};
use sci_ir::cost::{Transcript, pool, select};
use sci_ir::params::{Modulus, Role};
use sci_ir::{Encoding, Op, Pool2d, Program, ValueId};

/// The pass: see the module docs.
pub fn run(p: &Program) -> Result<Program, PassError> {
    fixpoint(p, sweep)
}

/// The ring the cost model is evaluated in: the program's, or `Z_{2^32}` for a float
/// program.
fn modulus(p: &Program) -> Modulus {
    match p.encoding() {
        Some(Encoding::Ring { bits }) => Modulus::Pow2(bits),
        Some(Encoding::Field { modulus }) => Modulus::Odd(modulus),
        _ => Modulus::Pow2(32),
    }
}

/// `(bits, rounds of role P1)` of a transcript: the order of the comparison.
fn score(t: &Transcript) -> (u64, u64) {
    (t.bits(), t.rounds(Role::P1))
}

/// Whether `maxpool(relu(x))` is predicted cheaper than `relu(maxpool(x))` for a pool
/// `pool` over `x` (one lane; `x_nonneg`: `x` is provably non-negative, so the pool
/// already compares narrowly).
pub fn swap_is_cheaper(p: &Program, x: ValueId, pool: &Pool2d, x_nonneg: bool) -> bool {
    let (md, m) = (modulus(p), p.params().mill_radix);
    let s = p.ty(x).shape();
    let d = |i: usize| s.get(i).copied().unwrap_or(1);
    let shape = [d(0), d(1), d(2), d(3)];
    let n_in = p.ty(x).numel();
    let n_out = pool
        .output([d(2), d(3)])
        .map_or(0, |[oh, ow]| d(0) * d(1) * oh * ow);
    let swapped = select::relu(md, m, n_in).then(pool::maxpool2d(md, m, shape, pool, false));
    let kept = pool::maxpool2d(md, m, shape, pool, !x_nonneg).then(select::relu(md, m, n_out));
    score(&swapped) < score(&kept)
}

fn sweep(p: &Program) -> Result<(Program, bool), PassError> {
    let users = p.users();
    let n = p.instrs().len();
    let nonneg = sci_ir::analysis::nonneg::nonneg(p);
    // swapped[m] for a MaxPool whose only user is a ReLU, where swapping is cheaper.
    let mut swapped = vec![false; n];
    for v in p.ids() {
        if let Op::Relu { x } = &p.instr(v).op
            && let Op::MaxPool { x: inner, pool } = &p.instr(*x).op
            && users[x.index()] == [v]
            && swap_is_cheaper(p, *inner, pool, nonneg[inner.index()])
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `relu(maxpool(x))` over a client `[1, c, h, w]` input with a `k×k/k` pool.
    fn relu_after_pool(c: usize, h: usize, k: usize) -> Program {
        let o = h / k;
        Program::parse(&format!(
            "%x: client f32[1,{c},{h},{h}] = input \"x\"\n\
             %p: client f32[1,{c},{o},{o}] = maxpool %x kernel=[{k},{k}] strides=[{k},{k}] pads=[0,0,0,0]\n\
             %r: client f32[1,{c},{o},{o}] = relu %p\n\
             %y: client f32[1,{c},{o},{o}] = output %r \"y\"\n"
        ))
        .expect("valid IR")
    }

    fn relu_first(p: &Program) -> bool {
        matches!(p.instrs()[1].op, Op::Relu { .. })
    }

    #[test]
    fn swaps_only_where_the_model_predicts_fewer_bytes() {
        // 2×2/2 over 64×56×56: ReLU first sends less (173.7 vs 193.5 MiB).
        assert!(relu_first(&run(&relu_after_pool(64, 56, 2)).expect("pass")));
        // 5×5/5 over 64×55×55: the exact MaxPool first sends less (187.4 vs 187.6 MiB).
        let p = relu_after_pool(64, 55, 5);
        let x = p.inputs()[0];
        let Op::MaxPool { pool, .. } = p.instrs()[1].op else {
            panic!("a maxpool")
        };
        assert!(!swap_is_cheaper(&p, x, &pool, false));
        assert_eq!(run(&p).expect("pass"), p);
        // Over a non-negative operand the MaxPool is narrow already: no swap.
        assert!(!swap_is_cheaper(&p, x, &pool, true));
    }
}
