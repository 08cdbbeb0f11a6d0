//! Fixed-point encoding and the exact integer semantics of truncation and division.
//!
//! **Encoding** (CrypTFlow2 Appendix E, with rounding to nearest instead of the paper's
//! floor): a real `x` at scale `s` in the ring `Z_{2^ℓ}` or the field `Z_n` is
//!
//! ```text
//! encode(x, s) = round_half_away_from_zero(x · 2^s)   computed in f64,
//! ```
//!
//! as a signed integer, reduced into the ring/field (two's complement / `mod n`). A
//! result outside the signed range of the encoding ([`Encoding::signed_range`]) is an
//! error: there is no silent wrap-around and no saturation. Non-finite inputs are errors.
//! Since `x` is an `f32` and `2^s` a power of two, `x · 2^s` is exact in `f64`; only the
//! rounding loses information.
//!
//! **Decoding**: `decode(v, s) = signed(v) / 2^s` (computed in f64, then rounded to f32).
//!
//! **Truncation** (`trunc`, Corollary 4.2): the arithmetic shift right by `s` of the
//! signed value, i.e. `⌊signed(v) / 2^s⌋`, reduced back into the ring/field.
//!
//! **Division** (`rdiv`, equation 2 of the paper): for a public `0 < d < n`,
//! `rdiv(a, d) = idiv(signed(a), d) mod n`, where `idiv` rounds towards −∞.
//! `trunc(a, s) = rdiv(a, 2^s)`.
//!
//! These functions are the single definition used by the interpreter, the passes and the
//! tests of the secure protocols.

use crate::tensor::{Data, Tensor, TensorError};
use crate::types::Encoding;
use thiserror::Error;

/// Why a value cannot be encoded.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum FixedError {
    /// The value is NaN or infinite.
    #[error("cannot encode non-finite value {value}")]
    NonFinite {
        /// The value.
        value: f32,
    },
    /// `round(x · 2^s)` is outside the encoding's signed range.
    #[error("{value} at scale {scale} does not fit the signed range of {encoding}")]
    Overflow {
        /// The value.
        value: f32,
        /// The scale.
        scale: u32,
        /// The encoding.
        encoding: Encoding,
    },
    /// The target encoding is `Real` (nothing to encode) or the scale does not fit it.
    #[error("cannot encode into {encoding} at scale {scale}")]
    Target {
        /// The encoding.
        encoding: Encoding,
        /// The scale.
        scale: u32,
    },
    /// The tensor given is not of the expected kind.
    #[error(transparent)]
    Tensor(#[from] TensorError),
}

/// `encode(x, s)`: `round_half_away_from_zero(x · 2^s)` reduced into `encoding`; errors on
/// non-finite `x`, on a result outside the signed range, or if `encoding` is `Real` or
/// the scale does not fit it.
pub fn encode(x: f32, scale: u32, encoding: Encoding) -> Result<u64, FixedError> {
    encode_f64(f64::from(x), scale, encoding)
}

/// [`encode`] of a float64 value (a float64 client input, encoded without a detour
/// through f32): `x · 2^s` is exact in f64 unless it overflows, which is an error.
/// Errors report the value rounded to f32.
pub fn encode_f64(x: f64, scale: u32, encoding: Encoding) -> Result<u64, FixedError> {
    let Some((lo, hi)) = encoding.signed_range() else {
        return Err(FixedError::Target { encoding, scale });
    };
    if encoding.validate().is_err() || !encoding.scale_fits(scale) {
        return Err(FixedError::Target { encoding, scale });
    }
    if !x.is_finite() {
        return Err(FixedError::NonFinite { value: x as f32 });
    }
    // 2^s ≤ 2^63, so the product is exact in f64 or infinite (an f32 `x` is below
    // 2^128: always finite); `as i128` saturates, and the magnitude check catches both.
    let y = (x * (2f64).powi(scale as i32)).round();
    let v = y as i128;
    if v < lo || v > hi || y.abs() >= 1.7e38 {
        return Err(FixedError::Overflow {
            value: x as f32,
            scale,
            encoding,
        });
    }
    Ok(encoding.reduce(v))
}

/// `decode(v, s) = signed(v) / 2^s` as f32 (for a ring or field element `v`).
pub fn decode(v: u64, scale: u32, encoding: Encoding) -> f32 {
    (encoding.signed(v) as f64 / (2f64).powi(scale as i32)) as f32
}

/// Arithmetic shift right by `s` of the signed value (`⌊signed(v) / 2^s⌋`), reduced into
/// the encoding: the paper's `a ≫ s` (Corollary 4.2), equal to `rdiv(v, 2^s)`.
/// `s` must be below 64.
pub fn trunc(v: u64, s: u32, encoding: Encoding) -> u64 {
    encoding.reduce(i128::from(encoding.signed(v)) >> s.min(127))
}

/// The paper's `rdiv(a, d)` (equation 2): floor division of the signed value by the
/// public positive integer `d`, reduced into the encoding. `d = 0` is treated as 1 (the
/// type checker rejects it before any evaluation).
pub fn rdiv(v: u64, d: u64, encoding: Encoding) -> u64 {
    let d = i128::from(d.max(1));
    encoding.reduce(i128::from(encoding.signed(v)).div_euclid(d))
}

/// Encodes every element of a `Real` tensor ([`encode`]) into `encoding` at `scale`.
pub fn encode_tensor(t: &Tensor, scale: u32, encoding: Encoding) -> Result<Tensor, FixedError> {
    let Some(xs) = t.as_f32() else {
        return Err(FixedError::Tensor(TensorError::Kind {
            encoding: t.encoding(),
            found: "integer",
        }));
    };
    encode_values(t.shape(), xs.iter().map(|&x| f64::from(x)), scale, encoding)
}

/// Encodes float64 values ([`encode_f64`]) in row-major order into a tensor of `shape`.
pub fn encode_values(
    shape: &[usize],
    xs: impl IntoIterator<Item = f64>,
    scale: u32,
    encoding: Encoding,
) -> Result<Tensor, FixedError> {
    let data = xs
        .into_iter()
        .map(|x| encode_f64(x, scale, encoding))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Tensor::canonical(encoding, shape.to_vec(), data)?)
}

/// Decodes every element of a ring/field tensor ([`decode`]) into a `Real` tensor; a
/// `Real` tensor is returned unchanged.
pub fn decode_tensor(t: &Tensor, scale: u32) -> Tensor {
    match t.data() {
        Data::F32(_) => t.clone(),
        Data::U64(v) => {
            let data = v.iter().map(|&x| decode(x, scale, t.encoding())).collect();
            Tensor::real(t.shape().to_vec(), data)
                .expect("same shape and element count as a valid tensor")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(bits: u32) -> Encoding {
        Encoding::ring(bits).unwrap()
    }

    #[test]
    fn encode_rounds_half_away_from_zero() {
        let r = ring(16);
        let enc = |x: f32, s| r.signed(encode(x, s, r).unwrap());
        assert_eq!(enc(1.5, 0), 2);
        assert_eq!(enc(2.5, 0), 3);
        assert_eq!(enc(-1.5, 0), -2);
        assert_eq!(enc(-2.5, 0), -3);
        assert_eq!(enc(0.49, 0), 0);
        assert_eq!(enc(-0.49, 0), 0);
        assert_eq!(enc(1.0, 8), 256);
        assert_eq!(enc(-0.75, 2), -3);
        assert_eq!(enc(0.1, 4), 2); // 1.6 → 2
        assert_eq!(enc(-0.1, 4), -2);
        assert_eq!(enc(3.0 / 64.0, 4), 1); // 0.75 → 1
    }

    #[test]
    fn encode_rejects_overflow_and_non_finite() {
        let r = ring(8);
        assert_eq!(r.signed(encode(127.0, 0, r).unwrap()), 127);
        assert_eq!(r.signed(encode(-128.0, 0, r).unwrap()), -128);
        assert!(matches!(
            encode(128.0, 0, r),
            Err(FixedError::Overflow { .. })
        ));
        assert!(matches!(
            encode(127.5, 0, r),
            Err(FixedError::Overflow { .. })
        ));
        assert!(matches!(
            encode(-128.6, 0, r),
            Err(FixedError::Overflow { .. })
        ));
        assert!(matches!(
            encode(1.0, 7, r),
            Err(FixedError::Overflow { .. })
        ));
        assert!(matches!(
            encode(f32::NAN, 0, r),
            Err(FixedError::NonFinite { .. })
        ));
        assert!(matches!(
            encode(f32::INFINITY, 0, r),
            Err(FixedError::NonFinite { .. })
        ));
        assert!(matches!(encode(1.0, 8, r), Err(FixedError::Target { .. })));
        assert!(matches!(
            encode(1.0, 0, Encoding::Real),
            Err(FixedError::Target { .. })
        ));
        let r64 = ring(64);
        assert!(encode(f32::MAX, 0, r64).is_err());
        assert_eq!(r64.signed(encode(-9.223372e18, 0, r64).unwrap()), i64::MIN);
        assert!(encode(9.223372e18, 0, r64).is_err()); // exactly 2^63
        let r1 = ring(1);
        assert_eq!(encode(-1.0, 0, r1), Ok(1));
        assert!(encode(1.0, 0, r1).is_err());
        let f = Encoding::field(7).unwrap();
        assert_eq!(encode(-3.0, 0, f), Ok(4));
        assert!(encode(4.0, 0, f).is_err());
        assert_eq!(encode(0.75, 2, f), Ok(3));
    }

    #[test]
    fn decode_inverts_encode() {
        let r = ring(32);
        for x in [0.0f32, 1.0, -1.0, 0.5, -0.25, 100.125, -7.75] {
            assert_eq!(decode(encode(x, 8, r).unwrap(), 8, r), x);
        }
        let f = Encoding::field(65537).unwrap();
        assert_eq!(decode(encode(-3.5, 2, f).unwrap(), 2, f), -3.5);
    }

    #[test]
    fn trunc_and_rdiv_floor_the_signed_value() {
        let r = ring(8);
        let t = |x: i64, s| r.signed(trunc(r.reduce(x.into()), s, r));
        assert_eq!(t(7, 1), 3);
        assert_eq!(t(-7, 1), -4);
        assert_eq!(t(-1, 3), -1);
        assert_eq!(t(-128, 7), -1);
        assert_eq!(t(127, 7), 0);
        let d = |x: i64, d| r.signed(rdiv(r.reduce(x.into()), d, r));
        assert_eq!(d(7, 3), 2);
        assert_eq!(d(-7, 3), -3);
        assert_eq!(d(-6, 3), -2);
        assert_eq!(d(-128, 255), -1);
        let f = Encoding::field(11).unwrap();
        // signed range [-5, 5]: rdiv(-5, 2) = -3, rdiv(5, 2) = 2.
        assert_eq!(f.signed(rdiv(f.reduce(-5), 2, f)), -3);
        assert_eq!(f.signed(rdiv(5, 2, f)), 2);
        assert_eq!(f.signed(trunc(f.reduce(-5), 1, f)), -3);
        let r64 = ring(64);
        assert_eq!(r64.signed(trunc(1 << 63, 63, r64)), -1);
        assert_eq!(
            r64.signed(rdiv(1 << 63, 3, r64)),
            (i64::MIN as i128).div_euclid(3) as i64
        );
    }

    #[test]
    fn tensor_helpers() {
        let r = ring(12);
        let t = Tensor::real(vec![2, 2], vec![0.5, -0.5, 1.25, -2.0]).unwrap();
        let e = encode_tensor(&t, 4, r).unwrap();
        assert_eq!(e.to_signed().unwrap(), vec![8, -8, 20, -32]);
        assert_eq!(decode_tensor(&e, 4), t);
        assert!(encode_tensor(&e, 4, r).is_err());
    }
}
