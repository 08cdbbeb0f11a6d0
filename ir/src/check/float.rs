//! The float-stage ops (`batchnorm`, `identity`): rejected outside `Real` programs with
//! the name of the pass that removes them.

use super::K;
use crate::id::ValueId;
use crate::ops::Op;
use crate::types::{Owner, Type};

/// An error if `op` is float-only and some operand is not `Real`.
pub(super) fn reject_outside_real(op: &Op, tys: &[&Type]) -> Result<(), K> {
    if op.is_float_only()
        && let Some(t) = tys.iter().find(|t| !t.encoding().is_real())
    {
        let pass = match op {
            Op::BatchNorm { .. } => "BatchNorm folding (sci-passes `fold_batchnorm`)",
            _ => "identity elimination (sci-passes `remove_identity`)",
        };
        return Err(K::FloatOnly {
            encoding: t.encoding(),
            pass,
        });
    }
    Ok(())
}

/// `batchnorm`: `x: [N, C, ...]`, four parameters `[C]` (`labeled`/`tys`: every operand,
/// `x` first), `epsilon` finite and ≥ 0.
pub(super) fn batchnorm(
    labeled: &[(String, &ValueId)],
    tys: &[&Type],
    epsilon: f32,
    owner: Owner,
) -> Result<Type, K> {
    let x = tys[0];
    if x.rank() < 2 {
        return Err(K::Shape {
            operand: "x".into(),
            expected: "[N, C, ...]".into(),
            found: x.shape().to_vec(),
        });
    }
    let c = x.shape()[1];
    for (i, (label, _)) in labeled.iter().enumerate().skip(1) {
        if tys[i].shape() != [c] {
            return Err(K::Shape {
                operand: label.clone(),
                expected: format!("[{c}]"),
                found: tys[i].shape().to_vec(),
            });
        }
    }
    if !epsilon.is_finite() || epsilon < 0.0 {
        return Err(K::Attribute {
            attr: "epsilon",
            reason: format!("must be finite and ≥ 0, found {epsilon}"),
        });
    }
    Ok(x.with_owner(owner))
}
