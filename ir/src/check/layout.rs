//! Data layout: `reshape`, `flatten`, `transpose`, `concat`, `pad` (the operand's
//! encoding and scale, a new shape).

use super::{K, same_encoding, scalar_ok};
use crate::ops::Scalar;
use crate::types::{Owner, ShapeDisplay, Type, numel};

/// `reshape` to `shape` of equal element count.
pub(super) fn reshape(x: &Type, shape: &[usize]) -> Result<Type, K> {
    let t = x.with_shape(shape.to_vec())?;
    if t.numel() != x.numel() {
        return Err(K::Attribute {
            attr: "shape",
            reason: format!(
                "{} has {} elements, the operand {} has {}",
                ShapeDisplay(shape),
                t.numel(),
                ShapeDisplay(x.shape()),
                x.numel()
            ),
        });
    }
    Ok(t)
}

/// `flatten` at `axis ≤ rank`: 2-D.
pub(super) fn flatten(x: &Type, axis: usize) -> Result<Type, K> {
    if axis > x.rank() {
        return Err(K::Attribute {
            attr: "axis",
            reason: format!("{axis} exceeds the rank {}", x.rank()),
        });
    }
    let (l, r) = x.shape().split_at(axis);
    Ok(x.with_shape(vec![numel(l), numel(r)])?)
}

/// `transpose` by a permutation `perm` of `0..rank`.
pub(super) fn transpose(x: &Type, perm: &[usize]) -> Result<Type, K> {
    let not_a_permutation = || K::Attribute {
        attr: "perm",
        reason: format!("{perm:?} is not a permutation of 0..{}", x.rank()),
    };
    let mut seen = vec![false; x.rank()];
    for &p in perm {
        match seen.get_mut(p) {
            Some(s) if !*s => *s = true,
            _ => return Err(not_a_permutation()),
        }
    }
    if perm.len() != x.rank() {
        return Err(not_a_permutation());
    }
    Ok(x.with_shape(perm.iter().map(|&p| x.shape()[p]).collect())?)
}

/// `gather` along `axis`: at least one index, each below the dimension; the output
/// has `indices.len()` along `axis`.
pub(super) fn gather(x: &Type, axis: usize, indices: &[usize]) -> Result<Type, K> {
    let Some(&dim) = x.shape().get(axis) else {
        return Err(K::Attribute {
            attr: "axis",
            reason: format!("{axis} is out of range for rank {}", x.rank()),
        });
    };
    if indices.is_empty() {
        return Err(K::Attribute {
            attr: "indices",
            reason: "gather needs at least one index".into(),
        });
    }
    if let Some(&i) = indices.iter().find(|&&i| i >= dim) {
        return Err(K::Attribute {
            attr: "indices",
            reason: format!("index {i} is out of range for dimension {axis} of size {dim}"),
        });
    }
    let mut shape = x.shape().to_vec();
    shape[axis] = indices.len();
    Ok(x.with_shape(shape)?)
}

/// `concat` of one or more operands of equal encoding, scale, rank and dimensions
/// other than `axis`.
pub(super) fn concat(tys: &[&Type], axis: usize, owner: Owner) -> Result<Type, K> {
    let Some(first) = tys.first() else {
        return Err(K::Attribute {
            attr: "xs",
            reason: "concat needs at least one operand".into(),
        });
    };
    if axis >= first.rank() {
        return Err(K::Attribute {
            attr: "axis",
            reason: format!("{axis} is out of range for rank {}", first.rank()),
        });
    }
    let mut shape = first.shape().to_vec();
    for (i, t) in tys.iter().enumerate().skip(1) {
        let label = format!("xs[{i}]");
        same_encoding(&label, t, first.encoding())?;
        if t.scale() != first.scale() {
            return Err(K::Scale {
                operand: label,
                expected: first.scale(),
                found: t.scale(),
            });
        }
        let compatible = t.rank() == first.rank()
            && (0..first.rank()).all(|d| d == axis || t.shape()[d] == first.shape()[d]);
        if !compatible {
            return Err(K::Shape {
                operand: label,
                expected: format!("{} except along axis {axis}", ShapeDisplay(first.shape())),
                found: t.shape().to_vec(),
            });
        }
        shape[axis] = shape[axis].saturating_add(t.shape()[axis]);
    }
    Ok(Type::new(first.encoding(), first.scale(), shape, owner)?)
}

/// `pad` by `2·rank` begin and end pads, with a fill `value` valid in the encoding.
pub(super) fn pad(x: &Type, pads: &[usize], value: &Scalar) -> Result<Type, K> {
    let r = x.rank();
    if pads.len() != 2 * r {
        return Err(K::Attribute {
            attr: "pads",
            reason: format!("needs 2·rank = {} entries, found {}", 2 * r, pads.len()),
        });
    }
    scalar_ok("value", value, x.encoding())?;
    let shape = (0..r)
        .map(|d| {
            x.shape()[d]
                .saturating_add(pads[d])
                .saturating_add(pads[d + r])
        })
        .collect();
    Ok(x.with_shape(shape)?)
}
