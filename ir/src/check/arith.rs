//! Elementwise arithmetic and rescaling: `add`, `sub`, `mul` (numpy broadcasting),
//! `scale_up`, `trunc`, `div_public`, the smooth activations `sigmoid`, `tanh`, and
//! `rsqrt`.

use super::{CheckErrorKind, K, divisor_ok, fixed_only, same_encoding};
use crate::math::{RsqrtParams, Smooth, SmoothParams, SoftmaxParams};
use crate::spline::{SplineFn, SplineParams};
use crate::types::{Encoding, Owner, Type};

/// `add`/`sub` (`product` false: equal scales) and `mul` (`product` true: scales add):
/// equal encodings, the broadcast shape.
pub(super) fn elementwise(a: &Type, b: &Type, product: bool, owner: Owner) -> Result<Type, K> {
    same_encoding("b", b, a.encoding())?;
    let scale = if product {
        a.scale() + b.scale()
    } else {
        if b.scale() != a.scale() {
            return Err(K::Scale {
                operand: "b".into(),
                expected: a.scale(),
                found: b.scale(),
            });
        }
        a.scale()
    };
    let shape = broadcast(a.shape(), b.shape())?;
    Ok(Type::new(a.encoding(), scale, shape, owner)?)
}

/// `scale_up` by `k ≥ 1`: scale `s + k`, fixed-point only.
pub(super) fn scale_up(x: &Type, k: u32) -> Result<Type, K> {
    fixed_only("x", x)?;
    if k == 0 {
        return Err(K::Attribute {
            attr: "k",
            reason: "must be ≥ 1 (scale_up by 0 is a no-op)".into(),
        });
    }
    Ok(x.with_scale(x.scale().saturating_add(k))?)
}

/// `trunc` by `1 ≤ s ≤ s_x`: scale `s_x − s`, fixed-point only.
pub(super) fn trunc(x: &Type, s: u32) -> Result<Type, K> {
    fixed_only("x", x)?;
    if s == 0 || s > x.scale() {
        return Err(K::Attribute {
            attr: "s",
            reason: format!(
                "must be in 1..={} (the operand's scale), found {s}",
                x.scale()
            ),
        });
    }
    Ok(x.with_scale(x.scale() - s)?)
}

/// `sigmoid`/`tanh`: the operand's type; over a ring `Z_{2^ℓ}` at scale `s` the fixed-point
/// function's conditions (`s ≥ 1`, `ℓ ≥ 2s + 7`:
/// [`crate::math::SmoothParams::of_op`]).
pub(super) fn smooth(x: &Type, kind: Smooth) -> Result<Type, K> {
    if let Encoding::Ring { bits } = x.encoding()
        && let Err(e) = SmoothParams::of_op(kind, bits, x.scale())
    {
        return Err(K::Encoding {
            operand: "x".into(),
            expected: format!("a ring i<ℓ> with ℓ ≥ 2s + 7 at a scale s ≥ 1 ({e})"),
            found: x.encoding(),
        });
    }
    Ok(x.clone())
}

/// `spline`: the operand's type; over a ring `Z_{2^ℓ}` at scale `s` the fixed-point
/// function's conditions ([`crate::spline::SplineParams::new`]).
pub(super) fn spline(x: &Type, func: SplineFn) -> Result<Type, K> {
    if let Encoding::Ring { bits } = x.encoding()
        && let Err(e) = SplineParams::new(func, bits, x.scale())
    {
        return Err(K::Encoding {
            operand: "x".into(),
            expected: format!("a ring i<ℓ> with ℓ ≥ 2s + 6 at a scale s ≥ 1 ({e})"),
            found: x.encoding(),
        });
    }
    Ok(x.clone())
}

/// `rsqrt`: the operand's type; over a ring `Z_{2^ℓ}` at scale `s` the fixed-point
/// function's conditions (`10 ≤ ℓ`, `ℓ ≥ s + ⌈s/2⌉ + 3`:
/// [`crate::math::RsqrtParams::new`]).
pub(super) fn rsqrt(x: &Type) -> Result<Type, K> {
    if let Encoding::Ring { bits } = x.encoding()
        && let Err(e) = RsqrtParams::new(bits, x.scale())
    {
        return Err(K::Encoding {
            operand: "x".into(),
            expected: format!("a ring i<ℓ> with 10 ≤ ℓ and ℓ ≥ s + ⌈s/2⌉ + 3 ({e})"),
            found: x.encoding(),
        });
    }
    Ok(x.clone())
}

/// `softmax` along `axis`: the operand's type; the axis in range and of length at least
/// 1, and over a ring `Z_{2^ℓ}` at scale `s` the fixed-point function's conditions
/// ([`crate::math::SoftmaxParams::new`]: `ℓ ≥ 2s + 4`, the axis not too long for the
/// reciprocal's domain).
pub(super) fn softmax(x: &Type, axis: usize) -> Result<Type, K> {
    let Some(&n) = x.shape().get(axis) else {
        return Err(K::Attribute {
            attr: "axis",
            reason: format!("{axis} is out of range for rank {}", x.shape().len()),
        });
    };
    if n == 0 {
        return Err(K::Shape {
            operand: "x".into(),
            expected: format!("axis {axis} of size at least 1"),
            found: x.shape().to_vec(),
        });
    }
    if let Encoding::Ring { bits } = x.encoding()
        && let Err(e) = SoftmaxParams::new(bits, x.scale(), n)
    {
        return Err(K::Encoding {
            operand: "x".into(),
            expected: format!("a ring i<ℓ> with ℓ ≥ 2s + 4 for softmax over {n} elements ({e})"),
            found: x.encoding(),
        });
    }
    Ok(x.clone())
}

/// `div_public` by `0 < d < modulus`: the operand's type.
pub(super) fn div_public(x: &Type, d: u64) -> Result<Type, K> {
    divisor_ok("d", d, x.encoding())?;
    Ok(x.clone())
}

/// Numpy broadcasting of two shapes: the one definition of broadcast shapes in sci (the
/// interpreter, the frontend and the passes call it). Cost `O(rank)`.
pub fn broadcast(a: &[usize], b: &[usize]) -> Result<Vec<usize>, CheckErrorKind> {
    let r = a.len().max(b.len());
    let dim = |s: &[usize], i: usize| {
        if i < r - s.len() {
            1
        } else {
            s[i - (r - s.len())]
        }
    };
    (0..r)
        .map(|i| match (dim(a, i), dim(b, i)) {
            (x, y) if x == y => Ok(x),
            (1, y) => Ok(y),
            (x, 1) => Ok(x),
            _ => Err(K::Broadcast {
                a: a.to_vec(),
                b: b.to_vec(),
            }),
        })
        .collect()
}
