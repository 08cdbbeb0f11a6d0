//! [`Modulus`]: the ring of arithmetic shares — `Z_{2^ℓ}` (SCI_OT) or `Z_n`
//! for an odd `n` (SCI_HE's prime field, CrypTFlow2 §2.2.4, §3.3).
//!
//! The correlated OTs carry elements of any [`Modulus`] (it is a [`CotRing`]);
//! the protocols whose algebra holds in any `Z_n` (`sci-runtime`'s multiplexer,
//! B2A, ReLU, division by Theorem 4.1, pooling) take one; only the sign test
//! differs between the two kinds (Algorithm 2 for `2^ℓ`, Algorithm 4 for odd
//! `n`, `sci-runtime`'s `proto::sign`). An element is a `u64` in `[0, n)`.
//!
//! Signed view (Appendix E, equation 2): for `2^ℓ` two's complement; for odd
//! `n`, `v ≥ ⌈n/2⌉` stands for `v − n`. In both cases `n' = ⌈n/2⌉` is the
//! smallest "negative" element, as in Theorem 4.1.
//!
//! `u32` converts to `Modulus::Pow2` (a ring width ℓ), so the protocols keep
//! their ring call sites `relu(ctx, ell, ..)`.

use crate::CotRing;
use sci_net::crypto::Prg;
use sci_net::pack::mask;

/// A [`Modulus`] outside the supported ranges ([`Modulus::check`]): what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidModulus(pub String);

/// Largest odd modulus accepted (exclusive): `2^63`, so that the sum of two
/// reduced elements fits a `u64`.
pub const MAX_ODD: u64 = 1 << 63;

/// The modulus of arithmetic shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Modulus {
    /// `Z_{2^ℓ}`, ℓ in 1..=64.
    Pow2(u32),
    /// `Z_n`, `n` odd, `3 ≤ n < 2^63`.
    Odd(u64),
}

impl From<u32> for Modulus {
    /// The ring `Z_{2^ℓ}` of width `ell`.
    fn from(ell: u32) -> Modulus {
        Modulus::Pow2(ell)
    }
}

/// The cost model's name for the same modulus.
impl From<Modulus> for sci_ir::params::Modulus {
    fn from(md: Modulus) -> Self {
        match md {
            Modulus::Pow2(ell) => sci_ir::params::Modulus::Pow2(ell),
            Modulus::Odd(n) => sci_ir::params::Modulus::Odd(n),
        }
    }
}

/// The modulus the cost model names.
impl From<sci_ir::params::Modulus> for Modulus {
    fn from(md: sci_ir::params::Modulus) -> Self {
        match md {
            sci_ir::params::Modulus::Pow2(ell) => Modulus::Pow2(ell),
            sci_ir::params::Modulus::Odd(n) => Modulus::Odd(n),
        }
    }
}

impl std::fmt::Display for Modulus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Modulus::Pow2(ell) => write!(f, "Z_2^{ell}"),
            Modulus::Odd(n) => write!(f, "Z_{n}"),
        }
    }
}

impl Modulus {
    /// The modulus of an IR encoding: `Z_{2^ℓ}` for a ring, `Z_n` for a field
    /// (prime, hence odd unless 2); `None` for `f32` or the field `Z_2`.
    pub fn of_encoding(enc: sci_ir::Encoding) -> Option<Modulus> {
        match enc {
            sci_ir::Encoding::Ring { bits } => Some(Modulus::Pow2(bits)),
            sci_ir::Encoding::Field { modulus } if modulus % 2 == 1 => Some(Modulus::Odd(modulus)),
            _ => None,
        }
    }

    /// Checks the parameters: ℓ in 1..=64, or `n` odd in `3..2^63`.
    pub fn check(self) -> Result<Modulus, InvalidModulus> {
        let valid = match self {
            Modulus::Pow2(ell) => (1..=64).contains(&ell),
            Modulus::Odd(n) => n >= 3 && n % 2 == 1 && n < MAX_ODD,
        };
        if valid {
            return Ok(self);
        }
        Err(InvalidModulus(match self {
            Modulus::Pow2(ell) => format!("ring width {ell} not in 1..=64"),
            Modulus::Odd(n) => format!("modulus {n} must be odd, at least 3 and below 2^63"),
        }))
    }

    /// `n` (`2^ℓ` or the odd modulus).
    pub fn value(self) -> u128 {
        match self {
            Modulus::Pow2(ell) => 1u128 << ell,
            Modulus::Odd(n) => n.into(),
        }
    }

    /// Bits of an element on the wire: ℓ, or `η = ⌈log₂ n⌉`.
    pub fn bits(self) -> u32 {
        match self {
            Modulus::Pow2(ell) => ell,
            Modulus::Odd(n) => 64 - (n - 1).leading_zeros(),
        }
    }

    /// `n' = ⌈n/2⌉`: elements `≥ n'` are negative in the signed view.
    pub fn half(self) -> u64 {
        match self {
            Modulus::Pow2(ell) => 1 << (ell - 1),
            Modulus::Odd(n) => n.div_ceil(2),
        }
    }

    /// Whether the element `v` is negative in the signed view (`v ≥ n'`).
    #[inline]
    pub fn is_neg(self, v: u64) -> bool {
        v >= self.half()
    }

    /// The signed view of the element `v`.
    #[inline]
    pub fn signed(self, v: u64) -> i64 {
        match self {
            Modulus::Pow2(ell) => ((v << (64 - ell)) as i64) >> (64 - ell),
            Modulus::Odd(n) => {
                if v >= n.div_ceil(2) {
                    v as i64 - n as i64
                } else {
                    v as i64
                }
            }
        }
    }

    /// `x mod n` for any integer.
    #[inline]
    pub fn reduce_i128(self, x: i128) -> u64 {
        match self {
            Modulus::Pow2(ell) => x as u64 & mask(ell),
            Modulus::Odd(n) => x.rem_euclid(i128::from(n)) as u64,
        }
    }

    /// `x mod n` for any `u64` (e.g. a value read from the wire).
    #[inline]
    pub fn reduce(self, x: u64) -> u64 {
        match self {
            Modulus::Pow2(ell) => x & mask(ell),
            Modulus::Odd(n) => {
                if x >= n {
                    x % n
                } else {
                    x
                }
            }
        }
    }

    /// `a + b mod n` for reduced `a`, `b`.
    #[inline]
    pub fn add(self, a: u64, b: u64) -> u64 {
        match self {
            Modulus::Pow2(ell) => a.wrapping_add(b) & mask(ell),
            Modulus::Odd(n) => {
                // a, b < n < 2^63: no overflow.
                let s = a + b;
                if s >= n { s - n } else { s }
            }
        }
    }

    /// `a − b mod n` for reduced `a`, `b`.
    #[inline]
    pub fn sub(self, a: u64, b: u64) -> u64 {
        match self {
            Modulus::Pow2(ell) => a.wrapping_sub(b) & mask(ell),
            Modulus::Odd(n) => {
                if a >= b {
                    a - b
                } else {
                    a + (n - b)
                }
            }
        }
    }

    /// `−a mod n` for a reduced `a`.
    #[inline]
    pub fn neg(self, a: u64) -> u64 {
        self.sub(0, a)
    }

    /// `a·b mod n` for reduced `a`, `b`.
    #[inline]
    pub fn mul(self, a: u64, b: u64) -> u64 {
        match self {
            Modulus::Pow2(ell) => a.wrapping_mul(b) & mask(ell),
            Modulus::Odd(n) => (u128::from(a) * u128::from(b) % u128::from(n)) as u64,
        }
    }

    /// Bits of a 128-bit OT pad consumed to derive one uniform element: ℓ
    /// (exactly uniform), or 128 for odd `n` (`y mod n` for a uniform 128-bit
    /// `y` is within statistical distance `n/2^128 < 2^−65` of uniform).
    pub(crate) fn pad_bits(self) -> u32 {
        match self {
            Modulus::Pow2(ell) => ell,
            Modulus::Odd(_) => 128,
        }
    }

    /// The element derived from [`Modulus::pad_bits`] uniform bits `y`.
    #[inline]
    pub(crate) fn elem_from_pad(self, y: u128) -> u64 {
        match self {
            Modulus::Pow2(ell) => y as u64 & mask(ell),
            Modulus::Odd(n) => (y % u128::from(n)) as u64,
        }
    }

    /// `len` uniformly random elements (odd `n`: from 128 random bits each,
    /// see [`Modulus::pad_bits`]).
    pub fn random(self, prg: &mut Prg, len: usize) -> Vec<u64> {
        match self {
            Modulus::Pow2(ell) => prg.ring_elems(len, ell),
            Modulus::Odd(_) => (0..len)
                .map(|_| self.elem_from_pad(prg.next_block().0))
                .collect(),
        }
    }
}

/// A modulus is a ring of correlated-OT payloads (the OT layer's
/// [`crate::CotRing`]), with the pad derivation of
/// [`Modulus::pad_bits`] and [`Modulus::elem_from_pad`].
impl CotRing for Modulus {
    fn valid(self) -> bool {
        self.check().is_ok()
    }
    #[inline]
    fn wire_bits(self) -> u32 {
        self.bits()
    }
    #[inline]
    fn pad_bits(self) -> u32 {
        Modulus::pad_bits(self)
    }
    #[inline]
    fn elem_of_pad(self, y: u128) -> u64 {
        self.elem_from_pad(y)
    }
    #[inline]
    fn add(self, a: u64, b: u64) -> u64 {
        Modulus::add(self, a, b)
    }
    #[inline]
    fn sub(self, a: u64, b: u64) -> u64 {
        Modulus::sub(self, a, b)
    }
    #[inline]
    fn reduce(self, x: u64) -> u64 {
        Modulus::reduce(self, x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_matches_integers() {
        let mods = [
            Modulus::Pow2(1),
            Modulus::Pow2(37),
            Modulus::Pow2(64),
            Modulus::Odd(3),
            Modulus::Odd(65537),
            Modulus::Odd((1 << 61) - 1),
            Modulus::Odd(MAX_ODD - 25),
        ];
        let mut g = Prg::new(sci_net::crypto::Block(5));
        for md in mods {
            let n = md.value() as i128;
            let mut v = md.random(&mut g, 200);
            v.extend([0, 1, md.half() - 1, md.half(), (n - 1) as u64]);
            for &a in &v {
                assert!((a as u128) < md.value());
                let sa = md.signed(a) as i128;
                assert_eq!(sa.rem_euclid(n), a as i128);
                assert_eq!(sa < 0, md.is_neg(a));
                assert!(-n / 2 - 1 <= sa && sa <= n / 2);
                for &b in v.iter().take(20) {
                    let (ai, bi) = (a as i128, b as i128);
                    assert_eq!(md.add(a, b) as i128, (ai + bi).rem_euclid(n));
                    assert_eq!(md.sub(a, b) as i128, (ai - bi).rem_euclid(n));
                    assert_eq!(md.mul(a, b) as u128, (a as u128 * b as u128) % md.value());
                }
                assert_eq!(md.neg(a) as i128, (-(a as i128)).rem_euclid(n));
                assert_eq!(md.reduce_i128(sa - 5 * n), a);
            }
            assert_eq!(md.reduce(u64::MAX) as u128, u64::MAX as u128 % md.value());
        }
        assert_eq!(Modulus::Odd(65537).bits(), 17);
        assert_eq!(Modulus::Odd(65535 + 2).half(), 32769);
        assert_eq!(Modulus::Odd((1 << 32) + 15).bits(), 33);
        assert_eq!(Modulus::from(32u32).bits(), 32);
    }

    #[test]
    fn rejects_bad_parameters() {
        for md in [
            Modulus::Pow2(0),
            Modulus::Pow2(65),
            Modulus::Odd(1),
            Modulus::Odd(8),
            Modulus::Odd(MAX_ODD + 1),
        ] {
            assert!(md.check().is_err(), "{md}");
        }
        assert_eq!(
            Modulus::of_encoding(sci_ir::Encoding::field(65537).expect("field")),
            Some(Modulus::Odd(65537))
        );
    }
}
