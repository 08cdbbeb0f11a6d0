//! Pooling and reductions over an axis: `maxpool`, `avgpool`, `global_avgpool`,
//! `argmax`.

use super::{K, divisor_ok, modulus_str, rank_is};
use crate::ops::Pool2d;
use crate::types::Type;

/// `maxpool` / `avgpool` (`average`): `[N, C, H, W] → [N, C, H_out, W_out]` by
/// [`Pool2d::output`]; an average's largest divisor (the kernel size) must be below the
/// modulus.
pub(super) fn pool2d(x: &Type, pool: &Pool2d, average: bool) -> Result<Type, K> {
    let xs = rank_is("x", x, 4, "[N, C, H, W]")?;
    let [oh, ow] = pool.output([xs[2], xs[3]])?;
    if average {
        divisor_ok(
            "kernel",
            (pool.kernel[0] as u64).saturating_mul(pool.kernel[1] as u64),
            x.encoding(),
        )?;
    }
    Ok(x.with_shape(vec![xs[0], xs[1], oh, ow])?)
}

/// `global_avgpool`: `[N, C, H, W] → [N, C, 1, 1]`, `H·W` below the modulus.
pub(super) fn global_avgpool(x: &Type) -> Result<Type, K> {
    let xs = rank_is("x", x, 4, "[N, C, H, W]")?;
    let hw = (xs[2] as u64).saturating_mul(xs[3] as u64);
    divisor_ok("H·W", hw, x.encoding()).map_err(|_| K::Shape {
        operand: "x".into(),
        expected: format!("H·W in 1..{}", modulus_str(x.encoding())),
        found: xs.to_vec(),
    })?;
    Ok(x.with_shape(vec![xs[0], xs[1], 1, 1])?)
}

/// `argmax` along `axis`: scale 0, the axis removed (or kept as 1), the largest index
/// in the signed range.
pub(super) fn argmax(x: &Type, axis: usize, keepdims: bool) -> Result<Type, K> {
    let xs = x.shape();
    if axis >= xs.len() {
        return Err(K::Attribute {
            attr: "axis",
            reason: format!("{axis} is out of range for rank {}", xs.len()),
        });
    }
    let n = xs[axis];
    let max_index = match x.encoding().signed_range() {
        Some((_, hi)) => hi,
        None => 1 << 24, // integers exactly representable in f32
    };
    if n == 0 || (n - 1) as i128 > max_index {
        return Err(K::Shape {
            operand: "x".into(),
            expected: format!("axis {axis} of size 1..={}", max_index.saturating_add(1)),
            found: xs.to_vec(),
        });
    }
    let mut shape = xs.to_vec();
    if keepdims {
        shape[axis] = 1;
    } else {
        shape.remove(axis);
    }
    Ok(Type::new(x.encoding(), 0, shape, x.owner())?)
}
