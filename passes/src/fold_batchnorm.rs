//! BatchNorm folding (float stage).
//!
//! **Rewrites:** `batchnorm(y, γ, β, μ, σ², ε)` (inference mode, constant parameters) is
//! the per-channel affine map `y ↦ α·y + (β − α·μ)` with `α = γ / √(σ² + ε)`. When `y`
//! is produced by a `conv2d` with constant weights (or a `matmul` with constant right
//! operand) whose only use is the BatchNorm, the map is folded into that op's weights and
//! bias (see the crate-private `affine` module); otherwise the BatchNorm is lowered to `mul` and `add` by
//! constants of shape `[1, C, 1, …]` (then quantized like any product).
//!
//! **Why it is exact:** both rewrites compute the same affine map (over the reals). The
//! parameters are combined in f64 and rounded to f32 once, so the f32 results agree with
//! the unfolded BatchNorm within float rounding (the tests check a tolerance).

use crate::affine::{Affine, const_f32, emit_folded, foldable};
use crate::error::PassError;
use crate::rewrite::Rewriter;
use sci_ir::{Op, Program, Tensor, Type, ValueId};

/// The pass: see the module docs.
pub fn run(p: &Program) -> Result<Program, PassError> {
    let users = p.users();
    let n = p.instrs().len();
    // For each BatchNorm: its affine map; for each foldable producer: the BatchNorm.
    let mut affine: Vec<Option<Affine>> = vec![None; n];
    let mut fold_into: Vec<Option<ValueId>> = vec![None; n];
    for v in p.ids() {
        if let Op::BatchNorm { x, .. } = &p.instr(v).op {
            affine[v.index()] = Some(batchnorm_affine(p, v)?);
            if foldable(p, &users, *x, v) {
                fold_into[x.index()] = Some(v);
            }
        }
    }
    let mut rw = Rewriter::new(p);
    for v in p.ids() {
        let instr = p.instr(v);
        if let Some(bn) = fold_into[v.index()] {
            let aff = affine[bn.index()]
                .as_ref()
                .ok_or_else(|| PassError::Internal("folded BatchNorm without parameters".into()))?;
            let y = emit_folded(&mut rw, v, aff)?;
            rw.set(v, y);
            rw.set(bn, y);
        } else if let (Op::BatchNorm { x, .. }, Some(aff)) = (&instr.op, &affine[v.index()]) {
            if fold_into[x.index()].is_none() {
                let y = lower(&mut rw, v, *x, aff)?;
                rw.set(v, y);
            }
        } else {
            rw.copy(v)?;
        }
    }
    rw.finish()
}

/// `α = γ/√(σ²+ε)`, `β' = β − α·μ` per channel, in f64.
fn batchnorm_affine(p: &Program, v: ValueId) -> Result<Affine, PassError> {
    let instr = p.instr(v);
    let Op::BatchNorm {
        scale,
        bias,
        mean,
        var,
        epsilon,
        ..
    } = &instr.op
    else {
        return Err(PassError::Internal("not a BatchNorm".into()));
    };
    let param = |o: &ValueId| {
        const_f32(p, *o).ok_or_else(|| PassError::Unsupported {
            value: instr.name.clone(),
            op: "batchnorm",
            reason: format!(
                "parameter %{} is not a constant with data (only inference-mode BatchNorm with constant parameters is supported)",
                p.name(*o)
            ),
        })
    };
    let (g, b, m, s2) = (param(scale)?, param(bias)?, param(mean)?, param(var)?);
    let eps = f64::from(*epsilon);
    let alpha: Vec<f64> = g
        .iter()
        .zip(s2)
        .map(|(&g, &s2)| f64::from(g) / (f64::from(s2) + eps).sqrt())
        .collect();
    let beta = alpha
        .iter()
        .zip(b.iter().zip(m))
        .map(|(a, (&b, &m))| f64::from(b) - a * f64::from(m))
        .collect();
    Ok(Affine { alpha, beta })
}

/// Lowers BatchNorm `bn` of `x` to `x · α + β` with constants of shape `[1, C, 1, …]`.
fn lower(
    rw: &mut Rewriter<'_>,
    bn: ValueId,
    x: ValueId,
    aff: &Affine,
) -> Result<ValueId, PassError> {
    let p = rw.old;
    let name = &p.instr(bn).name;
    let rank = p.ty(x).rank();
    let c = aff.alpha.len();
    let mut shape = vec![1; rank];
    shape[1] = c;
    // The folded constants belong to whoever owns the parameters (normally the server).
    let const_owner = p
        .instr(bn)
        .op
        .operands()
        .iter()
        .skip(1)
        .fold(sci_ir::Owner::Public, |o, v| o.combine(p.ty(**v).owner()));
    let ty =
        Type::real(shape.clone(), const_owner).map_err(|e| PassError::Internal(e.to_string()))?;
    let to_tensor = |v: &[f64]| {
        Tensor::real(shape.clone(), v.iter().map(|&x| x as f32).collect())
            .map_err(|e| PassError::Internal(e.to_string()))
    };
    let k = rw.constant(&format!("{name}.scale"), ty.clone(), to_tensor(&aff.alpha)?)?;
    let s = rw.constant(&format!("{name}.shift"), ty, to_tensor(&aff.beta)?)?;
    let xn = rw.get(x)?;
    let m = rw.push(&format!("{name}.mul"), Op::Mul { a: xn, b: k })?;
    rw.push(name, Op::Add { a: m, b: s })
}
