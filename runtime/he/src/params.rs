//! BFV parameters of SCI_HE (see the [module documentation](super) for the
//! security argument): `N = 8192`, five 43–44-bit ciphertext primes (218 bits,
//! the HE standard's bound for 128-bit security), ciphertexts at the first
//! four, the fifth as the special modulus of key switching, and the field of
//! the shares as plaintext modulus.

use std::sync::Arc;

use fhe::bfv::{BfvParameters, BfvParametersBuilder};

use super::encode::Encoder;
use super::{HeError, check};

/// Polynomial degree `N` (slots per ciphertext; [`sci_ir::backend::HE_DEGREE`],
/// recorded in every HE plan).
pub const DEGREE: usize = sci_ir::backend::HE_DEGREE as usize;

/// Slots per row: a column rotation rotates each of the two rows of
/// `DEGREE / 2` slots cyclically.
pub const ROW: usize = DEGREE / 2;

/// The ciphertext primes `q_0, …, q_4` (≡ 1 mod 2N; 43, 43, 44, 44, 44 bits:
/// `log₂ Q = 218`, HomomorphicEncryption.org standard, N = 8192, 128 bits;
/// [`sci_ir::backend::HE_MODULI`], recorded in every HE plan).
pub const MODULI: [u64; 5] = sci_ir::backend::HE_MODULI;

/// Level of the ciphertexts: `q_0···q_3` (level `l` drops the last `l`
/// primes); `q_4` is the special modulus of the Galois keys (level 0)
/// ([`sci_ir::backend::HE_CT_LEVEL`]).
pub const CT_LEVEL: usize = sci_ir::backend::HE_CT_LEVEL;

/// Smallest accepted plaintext modulus (exclusive): `2^16`.
pub const MIN_PLAIN_BITS: u32 = 16;

/// Largest accepted plaintext modulus (exclusive): `2^50` (layers check the
/// noise budget; in practice fields above ≈ 2^43 exhaust it).
pub const MAX_PLAIN_BITS: u32 = 50;

/// Variance of the centered binomial distribution of secrets and errors
/// (`fhe`'s default, set explicitly; [`super::noise`] bounds its values by 20).
pub const VARIANCE: usize = 10;

/// The BFV parameters for the plaintext modulus `t`.
#[derive(Clone, Debug)]
pub struct Params {
    /// The `fhe` parameters.
    pub(crate) bfv: Arc<BfvParameters>,
    /// The plaintext modulus (the field of the shares).
    pub t: u64,
    /// The encoder of the server's plaintexts (built once per session).
    pub(crate) encoder: Arc<Encoder>,
}

impl Params {
    /// Parameters for the field `Z_t`: `t` must be a prime `≡ 1 (mod 2N)` in
    /// `(2^16, 2^50)` ([`plain_modulus_ok`]).
    pub fn new(t: u64) -> Result<Params, HeError> {
        check(plain_modulus_ok(t), || {
            format!(
                "plaintext modulus {t} must be a prime ≡ 1 mod {} between 2^{MIN_PLAIN_BITS} and 2^{MAX_PLAIN_BITS}",
                2 * DEGREE
            )
        })?;
        let bfv = BfvParametersBuilder::new()
            .set_degree(DEGREE)
            .set_plaintext_modulus(t)
            .set_moduli(&MODULI)
            .set_variance(VARIANCE)
            .build_arc()?;
        let encoder = Arc::new(Encoder::new(&bfv, t)?);
        Ok(Params { bfv, t, encoder })
    }

    /// `Q_l`, the product of the primes of level `l`, as `log₂`.
    pub(crate) fn log_q(level: usize) -> f64 {
        MODULI[..MODULI.len() - level]
            .iter()
            .map(|&q| (q as f64).log2())
            .sum()
    }
}

/// Whether `t` can be the plaintext modulus: prime, `≡ 1 (mod 2N)`, in
/// `(2^16, 2^50)`.
pub fn plain_modulus_ok(t: u64) -> bool {
    t > 1 << MIN_PLAIN_BITS
        && t < 1 << MAX_PLAIN_BITS
        && t % (2 * DEGREE as u64) == 1
        && sci_ir::types::is_prime(t)
}

/// The smallest valid plaintext modulus above `2^bits` (for a field holding
/// every `bits`-bit two's complement value), or `None` if there is none below
/// `2^50`.
pub fn plain_modulus_above(bits: u32) -> Option<u64> {
    let step = 2 * DEGREE as u64;
    let lo = 1u64.checked_shl(bits.max(MIN_PLAIN_BITS))?;
    // The first t ≡ 1 (mod 2N) above lo (lo is a power of two ≥ 2N).
    let mut t = lo / step * step + 1;
    while t < 1 << MAX_PLAIN_BITS {
        if sci_ir::types::is_prime(t) {
            return Some(t);
        }
        t += step;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moduli_fit_the_standard_and_batching() {
        let log_q: f64 = MODULI.iter().map(|&q| (q as f64).log2()).sum();
        assert!(log_q <= 218.0, "{log_q}");
        for q in MODULI {
            assert!(sci_ir::types::is_prime(q) && q % (2 * DEGREE as u64) == 1);
        }
        assert!((Params::log_q(CT_LEVEL) - 174.0).abs() < 1.0);
    }

    #[test]
    fn plaintext_moduli() {
        for bits in [16u32, 20, 32, 37, 41, 45] {
            let t = plain_modulus_above(bits).expect("a prime");
            assert!(
                plain_modulus_ok(t) && t > 1 << bits && t < 1 << (bits + 1),
                "{bits}"
            );
            // The smallest: no valid modulus in between.
            let step = 2 * DEGREE as u64;
            let mut u = t - step;
            while u > 1 << bits {
                assert!(!plain_modulus_ok(u));
                u -= step;
            }
        }
        assert_eq!(plain_modulus_above(32), Some(4_295_049_217));
        assert!(plain_modulus_above(50).is_none());
        assert_eq!(plain_modulus_above(41), Some(2_199_023_288_321));
        assert!(!plain_modulus_ok(65521) && !plain_modulus_ok(4_293_918_721 + 2));
        assert!(plain_modulus_ok(4_293_918_721) && plain_modulus_ok(2_199_023_190_017));
        assert!(Params::new(4_293_918_721).is_ok());
        assert!(Params::new(65521).is_err());
    }
}
