//! Value types: encoding (ring `Z_{2^ℓ}`, prime field `Z_n`, or `f32`), fixed-point scale,
//! shape and owner.
//!
//! The encodings follow the paper (CrypTFlow2, §2 and Appendix E): secret values live in
//! the ring `Z_L` with `L = 2^ℓ` (the OT-based protocols) or in a prime field `Z_n` (the
//! HE-based ones). An element is read as a signed integer: in `Z_{2^ℓ}` by two's
//! complement, in `Z_n` by `v ≥ ⌈n/2⌉ ⇒ v − n` (equation 2 of the paper). A value of
//! scale `s` represents the rational `signed(v) / 2^s` (see [`crate::fixed`]).
//!
//! [`Type`] values are valid by construction: [`Type::new`] rejects every invalid
//! combination with a [`TypeError`].

use std::fmt;
use thiserror::Error;

/// Largest number of elements a single tensor may have (2^32). Bounds every size
/// computation so that none can overflow, whatever a file declares.
pub const MAX_ELEMENTS: u64 = 1 << 32;

/// Largest number of dimensions a tensor may have.
pub const MAX_RANK: usize = 16;

/// How the elements of a tensor are represented.
///
/// The variants are public for matching; a [`Type`] can only be built around a valid
/// encoding ([`Encoding::validate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// IEEE-754 single precision: the pre-quantization stage emitted by the frontend.
    /// Its scale is always 0.
    Real,
    /// The ring `Z_{2^bits}`, `1 ≤ bits ≤ 64`, two's complement, wrapping arithmetic.
    Ring {
        /// ℓ, the bit width.
        bits: u32,
    },
    /// The prime field `Z_modulus`, modulus prime and `< 2^63`. Signed view: an element
    /// `v ≥ ⌈n/2⌉` stands for `v − n`.
    Field {
        /// n, a prime below 2^63.
        modulus: u64,
    },
}

impl Encoding {
    /// The ring `Z_{2^bits}`; errors unless `1 ≤ bits ≤ 64`.
    pub fn ring(bits: u32) -> Result<Encoding, TypeError> {
        let e = Encoding::Ring { bits };
        e.validate()?;
        Ok(e)
    }

    /// The prime field `Z_modulus`; errors unless `modulus` is a prime below 2^63.
    pub fn field(modulus: u64) -> Result<Encoding, TypeError> {
        let e = Encoding::Field { modulus };
        e.validate()?;
        Ok(e)
    }

    /// Checks the encoding's parameters (bit width in 1..=64; modulus prime and < 2^63).
    pub fn validate(&self) -> Result<(), TypeError> {
        match *self {
            Encoding::Real => Ok(()),
            Encoding::Ring { bits } => {
                if (1..=64).contains(&bits) {
                    Ok(())
                } else {
                    Err(TypeError::RingBits { bits })
                }
            }
            Encoding::Field { modulus } => {
                if modulus >= 1 << 63 {
                    Err(TypeError::FieldTooLarge { modulus })
                } else if !is_prime(modulus) {
                    Err(TypeError::FieldNotPrime { modulus })
                } else {
                    Ok(())
                }
            }
        }
    }

    /// True for [`Encoding::Real`].
    pub fn is_real(&self) -> bool {
        matches!(self, Encoding::Real)
    }

    /// The number of elements of the ring or field as a `u128` (`2^ℓ` or `n`); `None` for
    /// `Real`.
    pub fn modulus(&self) -> Option<u128> {
        match *self {
            Encoding::Real => None,
            Encoding::Ring { bits } => Some(1u128 << bits.min(64)),
            Encoding::Field { modulus } => Some(u128::from(modulus)),
        }
    }

    /// Bit mask of a ring element (`2^ℓ − 1`); for fields and `Real`, `u64::MAX`.
    pub fn mask(&self) -> u64 {
        match *self {
            Encoding::Ring { bits } if bits < 64 => (1u64 << bits) - 1,
            _ => u64::MAX,
        }
    }

    /// Smallest and largest signed integer representable: `[−2^(ℓ−1), 2^(ℓ−1) − 1]` for a
    /// ring, `[−⌊n/2⌋, ⌈n/2⌉ − 1]` for a field; `None` for `Real`.
    pub fn signed_range(&self) -> Option<(i128, i128)> {
        match *self {
            Encoding::Real => None,
            Encoding::Ring { bits } => {
                let half = 1i128 << (bits.clamp(1, 64) - 1);
                Some((-half, half - 1))
            }
            Encoding::Field { modulus } => {
                let n = i128::from(modulus);
                Some((-(n / 2), (n - n / 2) - 1))
            }
        }
    }

    /// The signed view of the canonical element `v` (`v < modulus`): two's complement for
    /// a ring, `v − n` when `v ≥ ⌈n/2⌉` for a field. For `Real`, `v` is returned as is.
    pub fn signed(&self, v: u64) -> i64 {
        match *self {
            Encoding::Real => v as i64,
            Encoding::Ring { bits } => {
                let b = bits.clamp(1, 64);
                // Shift the sign bit of the ℓ-bit value into bit 63, then shift back
                // arithmetically.
                ((v << (64 - b)) as i64) >> (64 - b)
            }
            Encoding::Field { modulus } => {
                let half_up = modulus - modulus / 2; // ⌈n/2⌉
                if v >= half_up {
                    // v < n < 2^63, so both fit in i64.
                    v as i64 - modulus as i64
                } else {
                    v as i64
                }
            }
        }
    }

    /// Reduces an integer into the canonical representative of the ring or field
    /// (`x mod 2^ℓ` or `x mod n`, in `[0, modulus)`). For `Real` this returns the low 64
    /// bits (meaningless; callers don't use it for `Real`).
    pub fn reduce(&self, x: i128) -> u64 {
        match *self {
            Encoding::Field { modulus } if modulus > 0 => x.rem_euclid(i128::from(modulus)) as u64,
            _ => (x as u64) & self.mask(),
        }
    }

    /// Whether the scale `s` is valid for this encoding: `s = 0` for `Real`, `s < ℓ` for a
    /// ring, `2^s < n` for a field.
    pub fn scale_fits(&self, s: u32) -> bool {
        match *self {
            Encoding::Real => s == 0,
            Encoding::Ring { bits } => s < bits,
            Encoding::Field { modulus } => s < 64 && (1u128 << s) < u128::from(modulus),
        }
    }
}

impl fmt::Display for Encoding {
    /// `f32`, `i<ℓ>` (ring), `z<n>` (field): the text-format spelling.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Encoding::Real => write!(f, "f32"),
            Encoding::Ring { bits } => write!(f, "i{bits}"),
            Encoding::Field { modulus } => write!(f, "z{modulus}"),
        }
    }
}

/// Who knows a value in the clear.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Owner {
    /// Both parties know it (public constants, shapes).
    Public,
    /// Only the server (party 0) knows it: the model weights.
    Server,
    /// Only the client (party 1) knows it: the input.
    Client,
    /// Additively secret-shared between the parties: activations.
    Shared,
}

impl Owner {
    /// The owner of a value computed from values owned by `self` and `other`: `Public`
    /// only if both are public; a single private party if the other operand is public or
    /// owned by the same party; `Shared` if either is shared or the operands mix client
    /// and server data.
    pub fn combine(self, other: Owner) -> Owner {
        use Owner::*;
        match (self, other) {
            (Public, o) | (o, Public) => o,
            (a, b) if a == b => a,
            _ => Shared,
        }
    }

    /// Whether the server knows values with this owner in the clear.
    pub fn server_knows(self) -> bool {
        matches!(self, Owner::Public | Owner::Server)
    }

    /// Whether the client knows values with this owner in the clear.
    pub fn client_knows(self) -> bool {
        matches!(self, Owner::Public | Owner::Client)
    }

    /// The text-format spelling (`public`, `server`, `client`, `shared`).
    pub fn as_str(self) -> &'static str {
        match self {
            Owner::Public => "public",
            Owner::Server => "server",
            Owner::Client => "client",
            Owner::Shared => "shared",
        }
    }
}

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a type (or encoding) is invalid.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum TypeError {
    /// Ring bit width outside 1..=64.
    #[error("ring bit width {bits} is outside 1..=64")]
    RingBits {
        /// The rejected width.
        bits: u32,
    },
    /// Field modulus ≥ 2^63.
    #[error("field modulus {modulus} is not below 2^63")]
    FieldTooLarge {
        /// The rejected modulus.
        modulus: u64,
    },
    /// Field modulus not prime.
    #[error("field modulus {modulus} is not prime")]
    FieldNotPrime {
        /// The rejected modulus.
        modulus: u64,
    },
    /// Scale does not fit the encoding.
    #[error(
        "scale {scale} does not fit encoding {encoding} (need s = 0 for f32, s < ℓ for a ring, 2^s < n for a field)"
    )]
    Scale {
        /// The encoding.
        encoding: Encoding,
        /// The rejected scale.
        scale: u32,
    },
    /// Too many dimensions.
    #[error("rank {rank} exceeds the maximum {MAX_RANK}")]
    Rank {
        /// The rejected rank.
        rank: usize,
    },
    /// Too many elements.
    #[error("shape {shape:?} has more than 2^32 elements")]
    TooLarge {
        /// The rejected shape.
        shape: Vec<usize>,
    },
}

/// The type of a value: encoding, scale (fraction bits), shape and owner. Always valid:
/// built only through [`Type::new`] and the `with_*` methods, which check it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Type {
    encoding: Encoding,
    scale: u32,
    shape: Vec<usize>,
    owner: Owner,
}

impl Type {
    /// A type; errors if the encoding is invalid, the scale does not fit it (`Real` needs
    /// 0, a ring `s < ℓ`, a field `2^s < n`), or the shape has more than [`MAX_RANK`]
    /// dimensions or [`MAX_ELEMENTS`] elements. Dimensions may be 0 (empty tensors).
    pub fn new(
        encoding: Encoding,
        scale: u32,
        shape: Vec<usize>,
        owner: Owner,
    ) -> Result<Type, TypeError> {
        encoding.validate()?;
        if !encoding.scale_fits(scale) {
            return Err(TypeError::Scale { encoding, scale });
        }
        check_shape(&shape)?;
        Ok(Type {
            encoding,
            scale,
            shape,
            owner,
        })
    }

    /// A `Real` (f32, scale 0) type.
    pub fn real(shape: Vec<usize>, owner: Owner) -> Result<Type, TypeError> {
        Type::new(Encoding::Real, 0, shape, owner)
    }

    /// The encoding.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The scale s (fraction bits).
    pub fn scale(&self) -> u32 {
        self.scale
    }

    /// The shape (NCHW for images).
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The owner.
    pub fn owner(&self) -> Owner {
        self.owner
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements (product of the shape; 1 for a scalar).
    pub fn numel(&self) -> usize {
        numel(&self.shape)
    }

    /// The same type with another shape.
    pub fn with_shape(&self, shape: Vec<usize>) -> Result<Type, TypeError> {
        Type::new(self.encoding, self.scale, shape, self.owner)
    }

    /// The same type with another scale.
    pub fn with_scale(&self, scale: u32) -> Result<Type, TypeError> {
        Type::new(self.encoding, scale, self.shape.clone(), self.owner)
    }

    /// The same type with another owner.
    pub fn with_owner(&self, owner: Owner) -> Type {
        Type {
            owner,
            ..self.clone()
        }
    }

    /// The same type with another encoding (and scale, which must fit it).
    pub fn with_encoding(&self, encoding: Encoding, scale: u32) -> Result<Type, TypeError> {
        Type::new(encoding, scale, self.shape.clone(), self.owner)
    }
}

impl fmt::Display for Type {
    /// Text-format spelling: `owner enc.scale[d0,d1,...]`, e.g. `shared i37.12[1,3,8,8]`;
    /// `Real` types omit the scale: `client f32[1,3,8,8]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.owner, self.encoding)?;
        if !self.encoding.is_real() {
            write!(f, ".{}", self.scale)?;
        }
        write!(f, "{}", ShapeDisplay(&self.shape))
    }
}

/// Displays a shape as `[d0,d1,...]`.
pub struct ShapeDisplay<'a>(pub &'a [usize]);

impl fmt::Display for ShapeDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

/// Number of elements of a shape checked by [`check_shape`] (0 if any dimension is 0;
/// saturates instead of overflowing for an unchecked shape).
pub fn numel(shape: &[usize]) -> usize {
    if shape.contains(&0) {
        return 0;
    }
    shape.iter().fold(1usize, |a, &d| a.saturating_mul(d))
}

/// Checks a shape's rank and element count against [`MAX_RANK`] and [`MAX_ELEMENTS`].
pub fn check_shape(shape: &[usize]) -> Result<(), TypeError> {
    if shape.len() > MAX_RANK {
        return Err(TypeError::Rank { rank: shape.len() });
    }
    let mut n: u64 = 1;
    for &d in shape {
        n = n.saturating_mul(d as u64);
    }
    // Every dimension is bounded too, so that the element count of an empty tensor (a
    // zero dimension) cannot overflow however it is multiplied out.
    let too_big_dim = shape.iter().any(|&d| d as u64 > MAX_ELEMENTS);
    if too_big_dim || (n > MAX_ELEMENTS && !shape.contains(&0)) {
        return Err(TypeError::TooLarge {
            shape: shape.to_vec(),
        });
    }
    Ok(())
}

/// Deterministic Miller–Rabin primality test for 64-bit integers (the first 12 primes as
/// bases are a proof for all n < 3.3·10^24).
pub fn is_prime(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    const BASES: [u64; 12] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37];
    for p in BASES {
        if n.is_multiple_of(p) {
            return n == p;
        }
    }
    let mut d = n - 1;
    let mut r = 0;
    while d.is_multiple_of(2) {
        d /= 2;
        r += 1;
    }
    let mul = |a: u64, b: u64| ((u128::from(a) * u128::from(b)) % u128::from(n)) as u64;
    let pow = |mut b: u64, mut e: u64| {
        let mut acc = 1u64;
        while e > 0 {
            if e & 1 == 1 {
                acc = mul(acc, b);
            }
            b = mul(b, b);
            e >>= 1;
        }
        acc
    };
    'bases: for a in BASES {
        let mut x = pow(a, d);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..r {
            x = mul(x, x);
            if x == n - 1 {
                continue 'bases;
            }
        }
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_are_validated() {
        assert!(Encoding::ring(0).is_err());
        assert!(Encoding::ring(65).is_err());
        assert!(Encoding::ring(1).is_ok());
        assert!(Encoding::ring(64).is_ok());
        assert!(Encoding::field(65537).is_ok());
        assert_eq!(
            Encoding::field(65535),
            Err(TypeError::FieldNotPrime { modulus: 65535 })
        );
        assert!(Encoding::field((1 << 63) + 29).is_err());
        // 2^61 - 1 is a Mersenne prime.
        assert!(Encoding::field((1 << 61) - 1).is_ok());
        assert!(Encoding::field(1).is_err());
        assert!(Encoding::field(2).is_ok());
    }

    #[test]
    fn primality() {
        let small: Vec<u64> = (0..60).filter(|&n| is_prime(n)).collect();
        assert_eq!(
            small,
            vec![
                2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59
            ]
        );
        // Carmichael numbers and a strong pseudoprime to several bases.
        for n in [561u64, 1105, 3_215_031_751, 3_825_123_056_546_413_051] {
            assert!(!is_prime(n), "{n}");
        }
        assert!(is_prime(18_446_744_073_709_551_557)); // largest u64 prime
        assert!(is_prime(9_223_372_036_854_775_783)); // largest prime below 2^63
    }

    #[test]
    fn scales_are_validated() {
        let r8 = Encoding::ring(8).unwrap();
        assert!(Type::new(r8, 7, vec![2], Owner::Shared).is_ok());
        assert_eq!(
            Type::new(r8, 8, vec![2], Owner::Shared),
            Err(TypeError::Scale {
                encoding: r8,
                scale: 8
            })
        );
        assert!(Type::new(Encoding::Real, 1, vec![], Owner::Public).is_err());
        let f = Encoding::field(257).unwrap();
        assert!(Type::new(f, 8, vec![], Owner::Public).is_ok());
        assert!(Type::new(f, 9, vec![], Owner::Public).is_err());
        assert!(Type::new(f, 200, vec![], Owner::Public).is_err());
        assert!(Type::new(Encoding::Ring { bits: 0 }, 0, vec![], Owner::Public).is_err());
        assert!(Type::new(r8, 0, vec![1 << 20, 1 << 20], Owner::Public).is_err());
        assert!(Type::new(r8, 0, vec![0, usize::MAX, 3], Owner::Public).is_err());
        assert!(Type::new(r8, 0, vec![1 << 31, 1 << 31, 0], Owner::Public).is_ok());
        assert!(Type::new(r8, 0, vec![1; 17], Owner::Public).is_err());
    }

    #[test]
    fn signed_views() {
        let r = Encoding::ring(8).unwrap();
        assert_eq!(r.signed(0xff), -1);
        assert_eq!(r.signed(0x80), -128);
        assert_eq!(r.signed(0x7f), 127);
        assert_eq!(r.reduce(-1), 0xff);
        assert_eq!(r.reduce(256 + 3), 3);
        let r1 = Encoding::ring(1).unwrap();
        assert_eq!(r1.signed(1), -1);
        assert_eq!(r1.signed(0), 0);
        assert_eq!(r1.signed_range(), Some((-1, 0)));
        let r64 = Encoding::ring(64).unwrap();
        assert_eq!(r64.signed(u64::MAX), -1);
        assert_eq!(r64.reduce(-1), u64::MAX);
        assert_eq!(
            r64.signed_range(),
            Some((i64::MIN as i128, i64::MAX as i128))
        );
        let f = Encoding::field(7).unwrap();
        // ⌈7/2⌉ = 4: 4,5,6 are −3,−2,−1.
        assert_eq!(
            (0..7).map(|v| f.signed(v)).collect::<Vec<_>>(),
            vec![0, 1, 2, 3, -3, -2, -1]
        );
        assert_eq!(f.signed_range(), Some((-3, 3)));
        assert_eq!(f.reduce(-1), 6);
        let f2 = Encoding::field(2).unwrap();
        assert_eq!(f2.signed(1), -1);
        assert_eq!(f2.signed_range(), Some((-1, 0)));
    }

    #[test]
    fn owners_combine() {
        use Owner::*;
        assert_eq!(Public.combine(Public), Public);
        assert_eq!(Public.combine(Server), Server);
        assert_eq!(Client.combine(Public), Client);
        assert_eq!(Client.combine(Server), Shared);
        assert_eq!(Server.combine(Server), Server);
        assert_eq!(Shared.combine(Public), Shared);
        assert_eq!(Client.combine(Shared), Shared);
    }

    #[test]
    fn display() {
        let t = Type::new(Encoding::ring(37).unwrap(), 12, vec![1, 3], Owner::Shared).unwrap();
        assert_eq!(t.to_string(), "shared i37.12[1,3]");
        let t = Type::real(vec![], Owner::Client).unwrap();
        assert_eq!(t.to_string(), "client f32[]");
        let t = Type::new(Encoding::field(65537).unwrap(), 3, vec![4], Owner::Server).unwrap();
        assert_eq!(t.to_string(), "server z65537.3[4]");
    }
}
