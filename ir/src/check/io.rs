//! Inputs, constants and outputs.

use super::K;
use crate::id::ConstId;
use crate::tensor::{Data, Tensor};
use crate::types::{Owner, ShapeDisplay, Type};

/// `input`: the declared type, which must be the client's.
pub(super) fn input(ty: &Type) -> Result<Type, K> {
    if ty.owner() != Owner::Client {
        return Err(K::Owner {
            operand: "type".into(),
            expected: "client (inputs are the client's)".into(),
            found: ty.owner(),
        });
    }
    Ok(ty.clone())
}

/// `output`: the operand's type, owned by the client (public stays public).
pub(super) fn output(x: &Type) -> Type {
    let owner = if x.owner() == Owner::Public {
        Owner::Public
    } else {
        Owner::Client
    };
    x.with_owner(owner)
}

/// `const`: the declared type (server or public), whose constant-table entry must
/// exist and match it (public data cannot be withheld; f32 data has no NaN).
pub(super) fn constant(id: ConstId, ty: &Type, consts: &[Option<Tensor>]) -> Result<Type, K> {
    let reason = |r: String| Err(K::Const { reason: r });
    if !matches!(ty.owner(), Owner::Server | Owner::Public) {
        return Err(K::Owner {
            operand: "type".into(),
            expected: "server or public".into(),
            found: ty.owner(),
        });
    }
    let Some(entry) = consts.get(id.index()) else {
        return reason(format!("no constant-table entry #{}", id.0));
    };
    let Some(t) = entry else {
        if ty.owner() == Owner::Public {
            return reason("public constant data cannot be withheld".into());
        }
        return Ok(ty.clone());
    };
    if t.encoding() != ty.encoding() || t.shape() != ty.shape() {
        return reason(format!(
            "data is {}{}, the declared type says {}{}",
            t.encoding(),
            ShapeDisplay(t.shape()),
            ty.encoding(),
            ShapeDisplay(ty.shape())
        ));
    }
    if let Data::F32(v) = t.data()
        && let Some(i) = v.iter().position(|x| x.is_nan())
    {
        return reason(format!("element {i} is NaN"));
    }
    Ok(ty.clone())
}
