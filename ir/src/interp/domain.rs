//! Element domains: the arithmetic the kernels are generic over.
//!
//! One implementation per encoding: [`RealD`] (f32), [`RingD`] (`Z_{2^ℓ}`, wrapping), and
//! [`FieldD`] (`Z_n`). Kernels (convolution, matrix product, pooling, ...) are written
//! once against [`Dom`]. Products are accumulated in [`Dom::Acc`]: wrapping `u64` for a
//! ring (reduced mod 2^ℓ at the end, which commutes with wrapping), `u128` with lazy
//! reduction for a field, `f32` for reals.

use super::Magnitude;
use crate::fixed;
use crate::tensor::{Data, Tensor};
use crate::types::Encoding;

/// Arithmetic over one element domain.
pub(crate) trait Dom: Copy + Send + Sync {
    /// Element.
    type E: Copy + Send + Sync + PartialEq + std::fmt::Debug;
    /// Accumulator of sums of products.
    type Acc: Copy + Send + Sync;

    /// The elements of a tensor of this domain (the program is well-typed, so the data
    /// kind always matches).
    fn slice(t: &Tensor) -> &[Self::E];
    /// Wraps elements into tensor data.
    fn wrap(v: Vec<Self::E>) -> Data;

    /// 0.
    fn zero(self) -> Self::E;
    /// An accumulator holding `e`.
    fn acc(self, e: Self::E) -> Self::Acc;
    /// `acc + a·b`.
    fn mac(self, acc: Self::Acc, a: Self::E, b: Self::E) -> Self::Acc;
    /// `acc + a`.
    fn acc_add(self, acc: Self::Acc, a: Self::E) -> Self::Acc;
    /// The element an accumulator holds.
    fn fin(self, acc: Self::Acc) -> Self::E;

    /// `a + b`.
    fn add(self, a: Self::E, b: Self::E) -> Self::E;
    /// `a − b`.
    fn sub(self, a: Self::E, b: Self::E) -> Self::E;
    /// `a · b`.
    fn mul(self, a: Self::E, b: Self::E) -> Self::E;
    /// `a · k` for a public integer `k`.
    fn mul_public(self, a: Self::E, k: i64) -> Self::E;
    /// `rdiv(a, d)` (f32 division for reals).
    fn div_public(self, a: Self::E, d: u64) -> Self::E;
    /// Signed `a > b`.
    fn gt(self, a: Self::E, b: Self::E) -> bool;
    /// Whether the signed value is negative.
    fn is_neg(self, a: Self::E) -> bool;
    /// The index `i` as an element (checked to fit by the type checker).
    fn index(self, i: usize) -> Self::E;
    /// The largest `|signed(x)|` over `xs` (0 if empty; NaNs are ignored).
    fn max_magnitude(self, xs: &[Self::E]) -> Magnitude;
}

/// `f32` arithmetic.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RealD;

impl Dom for RealD {
    type E = f32;
    type Acc = f32;

    fn slice(t: &Tensor) -> &[f32] {
        t.as_f32().expect("well-typed program: f32 value")
    }
    fn wrap(v: Vec<f32>) -> Data {
        Data::F32(v)
    }
    fn zero(self) -> f32 {
        0.0
    }
    fn acc(self, e: f32) -> f32 {
        e
    }
    fn mac(self, acc: f32, a: f32, b: f32) -> f32 {
        acc + a * b
    }
    fn acc_add(self, acc: f32, a: f32) -> f32 {
        acc + a
    }
    fn fin(self, acc: f32) -> f32 {
        acc
    }
    fn add(self, a: f32, b: f32) -> f32 {
        a + b
    }
    fn sub(self, a: f32, b: f32) -> f32 {
        a - b
    }
    fn mul(self, a: f32, b: f32) -> f32 {
        a * b
    }
    fn mul_public(self, a: f32, k: i64) -> f32 {
        a * k as f32
    }
    fn div_public(self, a: f32, d: u64) -> f32 {
        a / d as f32
    }
    fn gt(self, a: f32, b: f32) -> bool {
        a > b
    }
    fn is_neg(self, a: f32) -> bool {
        a < 0.0
    }
    fn index(self, i: usize) -> f32 {
        i as f32
    }
    fn max_magnitude(self, xs: &[f32]) -> Magnitude {
        Magnitude::Real(xs.iter().fold(0f32, |m, x| m.max(x.abs())))
    }
}

/// `Z_{2^ℓ}` arithmetic on canonical `u64` elements.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RingD {
    enc: Encoding,
    mask: u64,
}

impl RingD {
    pub(crate) fn new(enc: Encoding) -> RingD {
        RingD {
            enc,
            mask: enc.mask(),
        }
    }
}

impl Dom for RingD {
    type E = u64;
    type Acc = u64;

    fn slice(t: &Tensor) -> &[u64] {
        t.as_u64().expect("well-typed program: integer value")
    }
    fn wrap(v: Vec<u64>) -> Data {
        Data::U64(v)
    }
    fn zero(self) -> u64 {
        0
    }
    fn acc(self, e: u64) -> u64 {
        e
    }
    fn mac(self, acc: u64, a: u64, b: u64) -> u64 {
        acc.wrapping_add(a.wrapping_mul(b))
    }
    fn acc_add(self, acc: u64, a: u64) -> u64 {
        acc.wrapping_add(a)
    }
    fn fin(self, acc: u64) -> u64 {
        acc & self.mask
    }
    fn add(self, a: u64, b: u64) -> u64 {
        a.wrapping_add(b) & self.mask
    }
    fn sub(self, a: u64, b: u64) -> u64 {
        a.wrapping_sub(b) & self.mask
    }
    fn mul(self, a: u64, b: u64) -> u64 {
        a.wrapping_mul(b) & self.mask
    }
    fn mul_public(self, a: u64, k: i64) -> u64 {
        a.wrapping_mul(k as u64) & self.mask
    }
    fn div_public(self, a: u64, d: u64) -> u64 {
        fixed::rdiv(a, d, self.enc)
    }
    fn gt(self, a: u64, b: u64) -> bool {
        self.enc.signed(a) > self.enc.signed(b)
    }
    fn is_neg(self, a: u64) -> bool {
        self.enc.signed(a) < 0
    }
    fn index(self, i: usize) -> u64 {
        i as u64 & self.mask
    }
    fn max_magnitude(self, xs: &[u64]) -> Magnitude {
        Magnitude::Int(
            xs.iter()
                .map(|&x| self.enc.signed(x).unsigned_abs())
                .max()
                .unwrap_or(0),
        )
    }
}

/// `Z_n` arithmetic on canonical `u64` elements (`n < 2^63`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct FieldD {
    enc: Encoding,
    n: u64,
}

impl FieldD {
    pub(crate) fn new(enc: Encoding, n: u64) -> FieldD {
        FieldD { enc, n }
    }
}

/// Accumulators are reduced once they pass 2^126, so adding one more product (< 2^126,
/// as both factors are < 2^63) cannot overflow a `u128`.
const FIELD_ACC_LIMIT: u128 = 1 << 126;

impl Dom for FieldD {
    type E = u64;
    type Acc = u128;

    fn slice(t: &Tensor) -> &[u64] {
        t.as_u64().expect("well-typed program: integer value")
    }
    fn wrap(v: Vec<u64>) -> Data {
        Data::U64(v)
    }
    fn zero(self) -> u64 {
        0
    }
    fn acc(self, e: u64) -> u128 {
        u128::from(e)
    }
    fn mac(self, acc: u128, a: u64, b: u64) -> u128 {
        let acc = if acc >= FIELD_ACC_LIMIT {
            acc % u128::from(self.n)
        } else {
            acc
        };
        acc + u128::from(a) * u128::from(b)
    }
    fn acc_add(self, acc: u128, a: u64) -> u128 {
        self.mac(acc, a, 1)
    }
    fn fin(self, acc: u128) -> u64 {
        (acc % u128::from(self.n)) as u64
    }
    fn add(self, a: u64, b: u64) -> u64 {
        // a, b < n < 2^63: no overflow.
        let s = a + b;
        if s >= self.n { s - self.n } else { s }
    }
    fn sub(self, a: u64, b: u64) -> u64 {
        if a >= b { a - b } else { a + self.n - b }
    }
    fn mul(self, a: u64, b: u64) -> u64 {
        ((u128::from(a) * u128::from(b)) % u128::from(self.n)) as u64
    }
    fn mul_public(self, a: u64, k: i64) -> u64 {
        self.mul(a, self.enc.reduce(i128::from(k)))
    }
    fn div_public(self, a: u64, d: u64) -> u64 {
        fixed::rdiv(a, d, self.enc)
    }
    fn gt(self, a: u64, b: u64) -> bool {
        self.enc.signed(a) > self.enc.signed(b)
    }
    fn is_neg(self, a: u64) -> bool {
        self.enc.signed(a) < 0
    }
    fn index(self, i: usize) -> u64 {
        i as u64 % self.n
    }
    fn max_magnitude(self, xs: &[u64]) -> Magnitude {
        Magnitude::Int(
            xs.iter()
                .map(|&x| self.enc.signed(x).unsigned_abs())
                .max()
                .unwrap_or(0),
        )
    }
}
