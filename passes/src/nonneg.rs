//! Non-negativity analysis and the `mark_nonneg` pass.
//!
//! **Analysis** ([`analyze`]): a forward pass proving, per value, that every element is
//! ≥ 0 (as a signed fixed-point value, or as an f32):
//! `relu` and `argmax` results are; `maxpool`, `trunc`, `div_public`, `reshape`,
//! `flatten`, `transpose`, `identity` and `output` preserve it; `concat` needs all
//! operands non-negative, `pad` also a non-negative fill. Public constants are inspected;
//! **server constants are not**: a `nonneg` flag is public (it is in the client's plan),
//! so it must not depend on the weights.
//!
//! The analysis is sound under the ring's **wrapping** semantics, for every input, not
//! only for the inputs autotuning saw: ops that can overflow (`add`, `scale_up`,
//! `mul_public`, the window sums of `avgpool`/`global_avgpool`) never propagate the
//! claim, since a wrapped sum of non-negative values can be negative. This keeps the
//! secure result bitwise equal to the interpreter's on *every* input: the cheap
//! truncation computes a different function on negative inputs.
//!
//! **Pass** ([`run`], `mark_nonneg`): sets `nonneg: true` on every `trunc` whose operand
//! is proven non-negative (flags already set are kept). The runtime then uses the cheaper
//! truncation that skips the DReLU of Algorithm 5 (step 2), as CrypTFlow2 does after a
//! ReLU (§6.2).
//!
//! **Why it is exact:** for a non-negative input both truncation protocols compute the
//! same `⌊x / 2^s⌋`; the interpreter checks the flag and fails if it is ever wrong.

use crate::error::PassError;
use crate::rewrite::Rewriter;
use sci_ir::{Op, Owner, Program, Scalar};

/// For every value of `p`: whether it is provably non-negative (see the module docs).
pub fn analyze(p: &Program) -> Vec<bool> {
    let mut nn = vec![false; p.instrs().len()];
    for v in p.ids() {
        let instr = p.instr(v);
        let of = |x: &sci_ir::ValueId| nn[x.index()];
        nn[v.index()] = match &instr.op {
            Op::Relu { .. } | Op::ArgMax { .. } => true,
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
            | Op::BatchNorm { .. } => false,
        };
    }
    nn
}

/// The `mark_nonneg` pass: see the module docs.
pub fn run(p: &Program) -> Result<Program, PassError> {
    let nn = analyze(p);
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
