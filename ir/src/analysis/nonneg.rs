//! Non-negativity: a forward analysis proving, per value, that every element is ≥ 0 (as
//! a signed fixed-point value — [`crate::Encoding::signed`] — or as an f32) on *every*
//! input.
//!
//! Rules: `relu`, `sigmoid` (in `[0, 2^s]`), `rsqrt`, `softmax` (in `[0, 2^s]`) and `argmax` results are non-negative; `maxpool`, `trunc`,
//! `div_public`, `reshape`, `flatten`, `transpose`, `identity`, `output` and
//! `mul_public` by 1 preserve it; `concat` needs all operands non-negative, `pad` also a
//! non-negative fill. Public constants are inspected; **server constants are not**: the
//! result is public (a `nonneg` flag is in the client's plan, and both parties must
//! choose the same protocol), so it must not depend on the weights.
//!
//! **Sound under wrapping.** Ops that can overflow — `add`, `scale_up`, `mul_public` by
//! `k ≠ 1`, products, the window sums of `avgpool`/`global_avgpool` — never propagate
//! the claim, since a wrapped sum or multiple of non-negative values can be negative;
//! `sub`, `conv2d`, `matmul`, `mul`, inputs and `batchnorm` never claim it. Every rule
//! that does propagate it maps a non-negative signed value to a non-negative one
//! without wrapping (`trunc` and `div_public` floor a non-negative value towards 0,
//! `maxpool` picks one of its inputs, data movement copies them), so the claim holds for
//! every input, not only for the inputs autotuning saw.
//!
//! **Used by** the `mark_nonneg` pass (sci-passes: the truncation that skips the DReLU of
//! CrypTFlow2 Algorithm 5) and the runtime's executor (MaxPool and ArgMax over provably
//! non-negative values compare with the paper's `DReLU` of the difference, which is
//! exact when no difference overflows: non-negative ℓ-bit values lie in
//! `[0, 2^(ℓ−1))`, so every difference lies in `(−2^(ℓ−1), 2^(ℓ−1))`).
//!
//! Cost: one pass over the program, O(1) per instruction (plus a scan of each public
//! constant's data).

use crate::ops::{Op, Scalar};
use crate::program::{Program, ValueId};
use crate::types::Owner;

/// For every value of `p` (indexed by [`ValueId::index`]): whether it is provably
/// non-negative on every input (see the module docs).
pub fn nonneg(p: &Program) -> Vec<bool> {
    let mut nn = vec![false; p.instrs().len()];
    for v in p.ids() {
        let of = |x: &ValueId| nn[x.index()];
        nn[v.index()] = match &p.instr(v).op {
            Op::Relu { .. }
            | Op::ReluTrunc { .. }
            | Op::ArgMax { .. }
            | Op::Sigmoid { .. }
            | Op::Rsqrt { .. }
            | Op::Softmax { .. } => true,
            Op::Const { id, ty } => {
                ty.owner() == Owner::Public
                    && p.const_data(*id)
                        .is_some_and(|t| match (t.as_f32(), t.to_signed()) {
                            (Some(f), _) => f.iter().all(|&x| x >= 0.0),
                            (None, Some(i)) => i.iter().all(|&x| x >= 0),
                            _ => false,
                        })
            }
            Op::MaxPool { x, .. }
            | Op::Trunc { x, .. }
            | Op::DivPublic { x, .. }
            | Op::Reshape { x, .. }
            | Op::Flatten { x, .. }
            | Op::Transpose { x, .. }
            | Op::Gather { x, .. }
            | Op::Identity { x }
            | Op::Output { x, .. } => of(x),
            Op::MulPublic { x, k } => *k == 1 && of(x),
            Op::Pad { x, value, .. } => {
                let fill_ok = match value {
                    Scalar::F32(f) => *f >= 0.0,
                    Scalar::Int(i) => *i >= 0,
                };
                fill_ok && of(x)
            }
            Op::Concat { xs, .. } => xs.iter().all(of),
            Op::Input { .. }
            | Op::Add { .. }
            | Op::AvgPool { .. }
            | Op::GlobalAvgPool { .. }
            | Op::ScaleUp { .. }
            | Op::Conv2d { .. }
            | Op::MatMul { .. }
            | Op::Mul { .. }
            | Op::Sub { .. }
            | Op::Tanh { .. }
            | Op::Spline { .. }
            | Op::BatchNorm { .. } => false,
        };
    }
    nn
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_only_what_survives_wrapping() {
        let p = Program::parse(
            "params mill_radix=4 threads=1\n\
             %x: client i8.0[1,1,2,2] = input \"x\"\n\
             %x2: client i8.2[1,1,2,2] = input \"x2\"\n\
             %r: client i8.0[1,1,2,2] = relu %x\n\
             %m: client i8.0[1,1,1,1] = maxpool %r kernel=[2,2] strides=[2,2] pads=[0,0,0,0]\n\
             %a: client i8.0[1,1,2,2] = add %r, %r\n\
             %r2: client i8.2[1,1,2,2] = relu %x2\n\
             %t: client i8.1[1,1,2,2] = trunc %r2 s=1\n\
             %k: public i8.0[1] = const [3]\n\
             %n: public i8.0[1] = const [-3]\n\
             %f: client i8.0[1,4] = flatten %r axis=0\n\
             %out: client i8.0[1,1,1,1] = output %m \"m\"\n\
             %out2: client i8.0[1,1,2,2] = output %a \"a\"\n\
             %out3: client i8.1[1,1,2,2] = output %t \"t\"\n\
             %out4: client i8.0[1,4] = output %f \"f\"\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let nn = nonneg(&p);
        let at = |n: &str| nn[p.lookup(n).expect("value").index()];
        for n in ["r", "m", "t", "k", "f", "out", "out3", "out4"] {
            assert!(at(n), "{n}");
        }
        // 127 + 127 wraps to −2 in i8: a sum never keeps the claim.
        for n in ["x", "a", "n", "out2"] {
            assert!(!at(n), "{n}");
        }
    }
}
