//! The backends: how the linear layers with the server's weights run, and so which
//! ring or field the shares live in. The first two are CrypTFlow2's (§2.2.4, §5.1).
//!
//! * [`Backend::Ot`] (SCI_OT): shares in the ring `Z_{2^ℓ}`; products with the server's
//!   weights by correlated OT (§5.1.1).
//! * [`Backend::He`] (SCI_HE): shares in a prime field `Z_n`; products with the server's
//!   weights by BFV homomorphic encryption with Gazelle's packing (§5.1, App. F), the
//!   non-linear layers by the same protocols over `Z_n` (§3.3, §4.2.3).
//! * [`Backend::Rlwe`]: shares in the ring `Z_{2^ℓ}` as for OT (the non-linear layers
//!   are SCI_OT's ring protocols); products with the server's weights by RLWE with
//!   Cheetah's coefficient encoding, no rotations ([`crate::rlwe`]).
//!
//! OT and RLWE share their ring, so one program may run some products by OT and others
//! by RLWE: the program's backend is the default of its products and
//! [`crate::Program::set_product_backend`] records another per instruction
//! ([`Backend::mixes_with`]).
//!
//! SCI_HE's field doubles as the BFV plaintext modulus, so `n` must allow SIMD batching:
//! `n ≡ 1 (mod 2N)` with `N` = [`HE_DEGREE`]. For a bit width `b`, the compiler uses
//! [`he_prime`]`(b)`: the **largest prime below `2^b` with `n ≡ 1 (mod 2N)`** (one rule,
//! printed for every width by `he_primes_of_every_width` in the tests and listed in
//! `ir/README.md`). For `b = 32` that is `2^32 − 30·2^14 + 1 = 4294475777`; the paper
//! and the original implementation use `2^32 − 2^20 + 1`, another 32-bit prime of the
//! same form: the protocols' costs depend on `⌈log₂ n⌉` only. Widths without a `b`-bit
//! prime of that form (19) are refused.
//!
//! The BFV parameters ([`HE_DEGREE`], [`HE_MODULI`]) are fixed: the runtime implements
//! exactly these (128-bit security by the HomomorphicEncryption.org standard for
//! `N = 8192`, `log₂ Q = 218`). A plan records them (covered by its hash) and a plan
//! with other values is refused when loaded.

use crate::types::{Encoding, is_prime};
use std::fmt;
use std::ops::RangeInclusive;

/// Which protocols run the products with the server's weights.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Backend {
    /// SCI_OT: the ring `Z_{2^ℓ}`, OT-based linear layers.
    #[default]
    Ot,
    /// SCI_HE: the prime field `Z_n`, HE-based linear layers.
    He,
    /// The ring `Z_{2^ℓ}` as for OT, linear layers by RLWE with coefficient encoding
    /// (Cheetah).
    Rlwe,
}

impl Backend {
    /// Every backend.
    pub const ALL: [Backend; 3] = [Backend::Ot, Backend::He, Backend::Rlwe];

    /// `ot`, `he` or `rlwe` (the `--backend` values and the IR text's `linear=`).
    pub fn name(self) -> &'static str {
        match self {
            Backend::Ot => "ot",
            Backend::He => "he",
            Backend::Rlwe => "rlwe",
        }
    }

    /// Whether the shares live in the ring `Z_{2^ℓ}` (OT and RLWE) rather than a field.
    pub fn on_ring(self) -> bool {
        matches!(self, Backend::Ot | Backend::Rlwe)
    }

    /// Whether a product of a program of backend `self` may run by `other`: both on
    /// the ring, or the same backend.
    pub fn mixes_with(self, other: Backend) -> bool {
        self == other || (self.on_ring() && other.on_ring())
    }

    /// The encoding of a program quantized at bit width `bits` for this backend: the
    /// ring `Z_{2^bits}`, or the field `Z_{he_prime(bits)}`.
    pub fn encoding(self, bits: u32) -> Result<Encoding, BackendError> {
        match self {
            Backend::Ot | Backend::Rlwe => {
                Encoding::ring(bits).map_err(|_| BackendError::RingBits(bits))
            }
            Backend::He => Ok(Encoding::Field {
                modulus: he_prime(bits)?,
            }),
        }
    }

    /// Whether `enc` is an encoding this backend executes: any ring for OT and RLWE;
    /// for HE a field whose modulus is a valid BFV plaintext modulus
    /// ([`he_modulus_ok`]).
    pub fn accepts(self, enc: Encoding) -> bool {
        match (self, enc) {
            (Backend::Ot | Backend::Rlwe, Encoding::Ring { .. }) => true,
            (Backend::He, Encoding::Field { modulus }) => he_modulus_ok(modulus),
            _ => false,
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Backend {
    type Err = BackendError;

    fn from_str(s: &str) -> Result<Backend, BackendError> {
        Backend::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| BackendError::Unknown(s.to_string()))
    }
}

/// The OT engines, one row each: the variant (with its doc), its code (a
/// byte of the plan and of the hello) and its name (the `--ot` values and
/// the IR text's `ot=`). Everything else about an engine is the runtime's
/// (`ot` in `sci-runtime`) and the cost model's.
macro_rules! ot_kinds {
    ($($(#[$attr:meta])* $kind:ident = $code:literal, $name:literal;)*) => {
        /// The OT engine every OT of a run comes from (the plan's choice; `sci-run
        /// --ot` may override it for a run, both parties alike). The type's default
        /// is IKNP (the IR text's, which prints only another engine); the tools'
        /// (`sci-compile` for an ONNX model, `sci-bench`) is silent.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub enum OtKind {
            $($(#[$attr])* $kind,)*
        }

        impl OtKind {
            /// Every engine, in the order of their codes.
            pub const ALL: &[OtKind] = &[$(OtKind::$kind),*];

            /// The engine's name: `iknp` or `silent` (the `--ot` values and the
            /// IR text's `ot=`).
            pub fn name(self) -> &'static str {
                match self {
                    $(OtKind::$kind => $name,)*
                }
            }

            /// The engine's code in a plan and in the hello.
            pub fn code(self) -> u8 {
                match self {
                    $(OtKind::$kind => $code,)*
                }
            }

            /// The engine of a code ([`OtKind::code`]), if any.
            pub fn from_code(code: u8) -> Option<OtKind> {
                match code {
                    $($code => Some(OtKind::$kind),)*
                    _ => None,
                }
            }
        }
    };
}

ot_kinds! {
    /// IKNP OT extension (λ = 128 bits from the receiver per OT) and KK13 for
    /// `(N 1)`-OT: the paper's engine (§2.2.2), kept for its figures.
    #[default]
    Iknp = 0, "iknp";
    /// Ferret silent OT ([`crate::cost::ferret`]): 1 bit from the receiver per OT
    /// plus under half a bit of the engine's iterations, after a set-up of about
    /// 1.4 MB per direction and lane.
    Silent = 1, "silent";
}

impl fmt::Display for OtKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for OtKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let names: Vec<&str> = OtKind::ALL.iter().map(|k| k.name()).collect();
        OtKind::ALL
            .iter()
            .copied()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("unknown OT engine {s:?} ({})", names.join(" or ")))
    }
}

/// Why a backend cannot be used as asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    /// Not `ot`, `he` or `rlwe`.
    #[error("unknown backend `{0}` (supported: ot, he, rlwe)")]
    Unknown(String),
    /// A ring width outside 1..=64.
    #[error("ring bit width {0} is outside 1..=64")]
    RingBits(u32),
    /// No HE field of this width.
    #[error(
        "no {0}-bit field for the HE backend: SCI_HE needs a prime n ≡ 1 mod {m} of {0} bits with {lo} ≤ bits ≤ {hi} (19 has none)",
        m = 2 * HE_DEGREE, lo = HE_BITS.start(), hi = HE_BITS.end()
    )]
    HeBits(u32),
}

/// BFV polynomial degree `N` of SCI_HE (slots per ciphertext).
pub const HE_DEGREE: u64 = 8192;

/// BFV ciphertext primes `q_0..q_4` of SCI_HE (each `≡ 1 mod 2N`; 43, 43, 44, 44, 44
/// bits, `log₂ Q = 218`): ciphertexts live at the first four, the fifth is the special
/// modulus of key switching.
pub const HE_MODULI: [u64; 5] = [
    0x7ff_fffd_8001,
    0x7ff_fffc_8001,
    0xfff_ffff_c001,
    0xfff_fff6_c001,
    0xfff_ffeb_c001,
];

/// Level of SCI_HE's ciphertexts before the server's final switch: `q_0···q_3` (level
/// `l` drops the last `l` primes of [`HE_MODULI`]); `q_4` is the special modulus of the
/// Galois keys (level 0).
pub const HE_CT_LEVEL: usize = 1;

/// Bound on an error coefficient of `fhe`'s centered binomial distribution (variance
/// 10): the rounding noise of one modulus switch is at most `(1 + 20N)/2`.
const HE_ERR_BOUND: f64 = 20.0;

/// The level of the server's reply ciphertexts for the plaintext modulus `t`: the most
/// primes dropped (of the last four, the first stays) such that a ciphertext whose
/// noise is at the flooding limit `Q_1/(4t)` — the most the runtime's flooding lets it
/// reach — still decrypts after switching down (`‖v‖·Q_L/Q_1 + (L − 1)(1 + 20N)/2 <
/// Q_L/(2t)`, in `log₂`). The runtime switches to this level (a function of `t`
/// alone, so the bytes are known before the run): 3 (two primes) for the fields of 24
/// to 44 bits, 4 below.
pub fn reply_level(t: u64) -> usize {
    let log_q = |l: usize| -> f64 {
        HE_MODULI[..HE_MODULI.len() - l]
            .iter()
            .map(|&q| (q as f64).log2())
            .sum()
    };
    let t = t as f64;
    let limit = 2f64.powf(log_q(HE_CT_LEVEL)) / (4.0 * t);
    let switch = (1.0 + HE_DEGREE as f64 * HE_ERR_BOUND) / 2.0;
    (HE_CT_LEVEL..HE_MODULI.len())
        .rev()
        .find(|&l| {
            let ratio = 2f64.powf(log_q(l) - log_q(HE_CT_LEVEL));
            let v = limit * ratio + (l - HE_CT_LEVEL) as f64 * switch;
            (v * 2.0 * t).log2() < log_q(l)
        })
        .unwrap_or(HE_CT_LEVEL)
}

/// Field widths the HE backend offers: above 16 bits (BFV batching with these
/// parameters needs `t > 2^16`) and at most 44 (above that the noise budget of a
/// typical layer is exhausted; the runtime checks every layer's budget and reports
/// an exhausted one).
pub const HE_BITS: RangeInclusive<u32> = 17..=44;

/// Whether `n` is a valid SCI_HE field: prime, `≡ 1 (mod 2N)`, of a width in
/// [`HE_BITS`].
pub fn he_modulus_ok(n: u64) -> bool {
    let bits = 64 - n.leading_zeros();
    HE_BITS.contains(&bits) && n % (2 * HE_DEGREE) == 1 && is_prime(n)
}

/// The field of SCI_HE at width `bits`: the largest prime `n < 2^bits` with
/// `n ≡ 1 (mod 2N)`, if it has `bits` bits (module docs).
pub fn he_prime(bits: u32) -> Result<u64, BackendError> {
    if !HE_BITS.contains(&bits) {
        return Err(BackendError::HeBits(bits));
    }
    let step = 2 * HE_DEGREE;
    let top = 1u64 << bits;
    (1..)
        .map(|k| top - k * step + 1)
        .take_while(|&n| n > top / 2)
        .find(|&n| is_prime(n))
        .ok_or(BackendError::HeBits(bits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn he_primes_of_every_width() {
        for bits in HE_BITS {
            match he_prime(bits) {
                Ok(n) => {
                    assert!(he_modulus_ok(n), "{bits}: {n}");
                    assert_eq!(64 - n.leading_zeros(), bits);
                    // The largest: no prime of the form between it and 2^bits.
                    let mut m = n + 2 * HE_DEGREE;
                    while m < 1 << bits {
                        assert!(!is_prime(m), "{bits}: {m} is larger");
                        m += 2 * HE_DEGREE;
                    }
                    println!(
                        "{bits:>2} bits: n = {n} = 2^{bits} - {}",
                        (1u64 << bits) - n
                    );
                }
                Err(e) => {
                    assert_eq!(bits, 19, "{e}");
                }
            }
        }
        assert_eq!(he_prime(32), Ok(4_294_475_777));
        assert_eq!(he_prime(16), Err(BackendError::HeBits(16)));
        assert_eq!(he_prime(45), Err(BackendError::HeBits(45)));
        assert!(
            he_modulus_ok((1 << 32) - (1 << 20) + 1),
            "the paper's prime"
        );
    }

    #[test]
    fn backends_accept_their_encodings() {
        let he = Backend::He.encoding(32).unwrap();
        assert_eq!(
            he,
            Encoding::Field {
                modulus: 4_294_475_777
            }
        );
        assert!(Backend::He.accepts(he) && !Backend::Ot.accepts(he));
        let ot = Backend::Ot.encoding(32).unwrap();
        assert!(Backend::Ot.accepts(ot) && !Backend::He.accepts(ot));
        assert!(
            !Backend::He.accepts(Encoding::Field { modulus: 12_289 }),
            "too small"
        );
        assert!(
            !Backend::He.accepts(Encoding::Field { modulus: 65_539 }),
            "≢ 1 mod 2N"
        );
        assert_eq!("he".parse(), Ok(Backend::He));
        assert!("cheetah".parse::<Backend>().is_err());
        let rlwe = Backend::Rlwe.encoding(37).unwrap();
        assert_eq!(rlwe, Encoding::Ring { bits: 37 });
        assert!(Backend::Rlwe.accepts(rlwe) && !Backend::Rlwe.accepts(he));
        for b in Backend::ALL {
            assert_eq!(b.name().parse(), Ok(b));
        }
        assert!(Backend::Ot.mixes_with(Backend::Rlwe) && Backend::Rlwe.mixes_with(Backend::Ot));
        assert!(!Backend::He.mixes_with(Backend::Ot) && !Backend::Rlwe.mixes_with(Backend::He));
    }
}
