//! Folding per-channel `mul`/`add`/`sub` by constants into the preceding conv/matmul
//! (float stage).
//!
//! **Rewrites:** `mul(y, k)`, `add(y, c)`, `sub(y, c)` and `sub(c, y)` (either operand
//! order for the commutative ones), where `k`/`c` are constants that vary at most along
//! the channel axis (shapes like `[]`, `[1]`, `[C,1,1]`, `[1,C,1,1]` for a conv output,
//! `[N]`, `[1,N]` for a matmul output) and do not broadcast `y` to a larger shape, are
//! the per-channel affine maps `y ↦ α·y + β` (`α = k`; `β = ±c`; `α = −1` for `c − y`).
//! When `y` comes from a conv2d/matmul with constant weights whose only use is this op,
//! the map is folded into the weights and bias (see the crate-private `affine` module). This removes e.g. the
//! `Mul` by Gemm's `alpha`, per-channel scalings, and BatchNorms lowered to `mul`+`add`.
//! The pass repeats until nothing folds, so `conv → mul → add` folds completely.
//!
//! **Why it is exact:** the folded op computes the same affine function of its input
//! over the reals; f32 results agree within rounding (the weights are computed in f64 and
//! rounded once). Only float (`Real`) programs are rewritten: in fixed point the folded
//! weights would be rounded differently, so the pass leaves those unchanged.

use crate::affine::{Affine, const_f32, emit_folded, foldable, per_channel};
use crate::error::PassError;
use crate::rewrite::{Rewriter, fixpoint};
use sci_ir::{Op, Program, Tensor, ValueId};

/// The pass: see the module docs.
pub fn run(p: &Program) -> Result<Program, PassError> {
    if !p.encoding().is_some_and(|e| e.is_real()) {
        return Ok(p.clone());
    }
    fixpoint(p, sweep)
}

/// One round of folds; reports whether anything changed.
fn sweep(p: &Program) -> Result<(Program, bool), PassError> {
    let users = p.users();
    let n = p.instrs().len();
    // For each producer to fold: (the consumer, the map).
    let mut fold: Vec<Option<(ValueId, Affine)>> = vec![None; n];
    let mut any = false;
    for v in p.ids() {
        if let Some((y, aff)) = as_affine(p, v)
            && foldable(p, &users, y, v)
        {
            fold[y.index()] = Some((v, aff));
            any = true;
        }
    }
    if !any {
        return Ok((p.clone(), false));
    }
    let mut rw = Rewriter::new(p);
    let mut folded_consumer = vec![false; n];
    for v in p.ids() {
        if let Some((consumer, aff)) = &fold[v.index()] {
            let y = emit_folded(&mut rw, v, aff)?;
            rw.set(v, y);
            rw.set(*consumer, y);
            folded_consumer[consumer.index()] = true;
        } else if !folded_consumer[v.index()] {
            rw.copy(v)?;
        }
    }
    Ok((rw.finish()?, true))
}

/// If `v` is `mul`/`add`/`sub` of a non-constant `y` and a per-channel constant, with the
/// result shape equal to `y`'s: `y` and the affine map.
fn as_affine(p: &Program, v: ValueId) -> Option<(ValueId, Affine)> {
    let instr = p.instr(v);
    let (a, b) = match &instr.op {
        Op::Mul { a, b } | Op::Add { a, b } | Op::Sub { a, b } => (*a, *b),
        _ => return None,
    };
    let is_const = |x: ValueId| const_f32(p, x).is_some();
    let (y, k, y_first) = match (is_const(a), is_const(b)) {
        (false, true) => (a, b, true),
        (true, false) => (b, a, false),
        _ => return None,
    };
    let shape = p.ty(y).shape();
    if instr.ty.shape() != shape {
        return None;
    }
    let Op::Const { id, .. } = &p.instr(k).op else {
        return None;
    };
    let kv = per_channel(
        p.const_data(*id)
            .filter(|t: &&Tensor| t.as_f32().is_some())?,
        shape,
    )?;
    let c = kv.len();
    let aff = match &instr.op {
        Op::Mul { .. } => Affine {
            alpha: kv,
            beta: vec![0.0; c],
        },
        Op::Add { .. } => Affine {
            alpha: vec![1.0; c],
            beta: kv,
        },
        // y − c
        _ if y_first => Affine {
            alpha: vec![1.0; c],
            beta: kv.iter().map(|x| -x).collect(),
        },
        // c − y
        _ => Affine {
            alpha: vec![-1.0; c],
            beta: kv,
        },
    };
    Some((y, aff))
}
