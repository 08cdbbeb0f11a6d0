//! Per-channel affine maps `y ↦ α·y + β` and their folding into the weights of the
//! conv/matmul that produces `y` (shared by [`crate::fold_batchnorm`] and
//! [`crate::fold_affine`]).
//!
//! For a `conv2d` with weights `w[o, c, i, j]` and bias `b[o]`, the channel is the output
//! channel `o`: `α·conv(x, w, b) + β = conv(x, α·w, α·b + β)`. For a `matmul` `a × w + b`
//! with constant `w[k, n]`, the channel is the column `n`: `α·(a × w + b) + β =
//! a × (w·α) + (α·b + β)`. Both identities hold exactly over the reals; in f32 the folded
//! weights are computed in f64 and rounded once, so results agree within float
//! rounding. They are only applied to float (`Real`) programs.

use crate::error::PassError;
use crate::rewrite::Rewriter;
use sci_ir::{Op, Program, Tensor, Type, ValueId};

/// `y ↦ α[c]·y + β[c]` along the channel axis (axis 1).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Affine {
    pub alpha: Vec<f64>,
    pub beta: Vec<f64>,
}

/// The f32 data of the old value `v` if it is a `Real` constant with data.
pub(crate) fn const_f32(p: &Program, v: ValueId) -> Option<&[f32]> {
    match &p.instr(v).op {
        Op::Const { id, .. } => p.const_data(*id).and_then(Tensor::as_f32),
        _ => None,
    }
}

/// Whether an affine map of `y` (applied by `consumer`, its only user) can be folded into
/// the op producing `y`: a `Real` `conv2d` with constant weights, or a `matmul` whose
/// right operand (`[K, N]`, columns = channels) is constant; biases constant or absent.
pub(crate) fn foldable(p: &Program, users: &[Vec<ValueId>], y: ValueId, consumer: ValueId) -> bool {
    if users[y.index()] != [consumer] || !p.ty(y).encoding().is_real() {
        return false;
    }
    let bias_ok = |bias: &Option<ValueId>| bias.is_none_or(|b| const_f32(p, b).is_some());
    match &p.instr(y).op {
        Op::Conv2d { w, bias, .. } => const_f32(p, *w).is_some() && bias_ok(bias),
        Op::MatMul { b, bias, .. } => const_f32(p, *b).is_some() && bias_ok(bias),
        _ => false,
    }
}

/// The per-channel values of a constant `t` that broadcasts against `y_shape` (rank ≥ 2)
/// without enlarging it and varies at most along axis 1: `[C]` values (a single value is
/// repeated). `None` if `t` is not of that form.
pub(crate) fn per_channel(t: &Tensor, y_shape: &[usize]) -> Option<Vec<f64>> {
    let data = t.as_f32()?;
    let (r, k) = (y_shape.len(), t.shape().len());
    if r < 2 || k > r {
        return None;
    }
    let aligned: Vec<usize> = std::iter::repeat_n(1, r - k)
        .chain(t.shape().iter().copied())
        .collect();
    let c = y_shape[1];
    let ok = aligned
        .iter()
        .enumerate()
        .all(|(i, &d)| d == 1 || (i == 1 && d == c));
    if !ok {
        return None;
    }
    let v: Vec<f64> = data.iter().map(|&x| f64::from(x)).collect();
    match v.len() {
        1 => Some(vec![v[0]; c]),
        n if n == c => Some(v),
        _ => None,
    }
}

/// Emits the producer `y` (a [`foldable`] conv2d/matmul) with `aff` folded into its
/// weights and bias, under `y`'s name; returns the new value.
pub(crate) fn emit_folded(
    rw: &mut Rewriter<'_>,
    y: ValueId,
    aff: &Affine,
) -> Result<ValueId, PassError> {
    let p = rw.old;
    let instr = p.instr(y);
    let internal = || PassError::Internal(format!("%{}: not a foldable producer", instr.name));
    let (w, bias) = match &instr.op {
        Op::Conv2d { w, bias, .. } | Op::MatMul { b: w, bias, .. } => (*w, *bias),
        _ => return Err(internal()),
    };
    let wdata = const_f32(p, w).ok_or_else(internal)?;
    let wty = p.ty(w);
    let c = aff.alpha.len();
    let scaled: Vec<f32> = match &instr.op {
        // Weights [C_out, ...]: channel o is the outermost index.
        Op::Conv2d { .. } => {
            let inner = wdata.len() / c.max(1);
            wdata
                .iter()
                .enumerate()
                .map(|(i, &x)| (f64::from(x) * aff.alpha[i / inner.max(1)]) as f32)
                .collect()
        }
        // Weights [K, N]: channel n is the innermost index.
        _ => wdata
            .iter()
            .enumerate()
            .map(|(i, &x)| (f64::from(x) * aff.alpha[i % c.max(1)]) as f32)
            .collect(),
    };
    let wt = Tensor::real(wty.shape().to_vec(), scaled)
        .map_err(|e| PassError::Internal(e.to_string()))?;
    let w_new = rw.constant(&p.instr(w).name, wty.clone(), wt)?;
    let keep_no_bias = bias.is_none() && aff.beta.iter().all(|&b| b == 0.0);
    let old_bias: Vec<f64> = match bias {
        Some(b) => const_f32(p, b)
            .ok_or_else(internal)?
            .iter()
            .map(|&x| f64::from(x))
            .collect(),
        None => vec![0.0; c],
    };
    let new_bias: Vec<f32> = (0..c)
        .map(|o| (aff.alpha[o] * old_bias[o] + aff.beta[o]) as f32)
        .collect();
    let bias_name = match bias {
        Some(b) => p.instr(b).name.clone(),
        None => format!("{}.bias", instr.name),
    };
    let bty = Type::real(vec![c], wty.owner()).map_err(|e| PassError::Internal(e.to_string()))?;
    let bt = Tensor::real(vec![c], new_bias).map_err(|e| PassError::Internal(e.to_string()))?;
    let b_new = if keep_no_bias {
        None
    } else {
        Some(rw.constant(&bias_name, bty, bt)?)
    };
    let op = match &instr.op {
        Op::Conv2d { x, conv, .. } => Op::Conv2d {
            x: rw.get(*x)?,
            w: w_new,
            bias: b_new,
            conv: *conv,
        },
        Op::MatMul { a, .. } => Op::MatMul {
            a: rw.get(*a)?,
            b: w_new,
            bias: b_new,
        },
        _ => return Err(internal()),
    };
    rw.push(&instr.name, op)
}
