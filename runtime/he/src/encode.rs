//! The server's plaintexts for products, encoded straight into the NTT form
//! that the products read, and the fused sums of products with them.
//!
//! [`Encoder::encode`] computes the polynomial of `fhe`'s SIMD
//! `Plaintext::try_encode` at the ciphertexts' level — the batching map of
//! SEAL and `fhe` (slot `i` of row `r` at the bit-reversed index of `3^i` or
//! `−3^i`), an inverse NTT mod `t`, the coefficients reduced into each prime,
//! a forward NTT per prime — without `fhe`'s intermediate copies (its
//! plaintext keeps the coefficient vector and is cloned out of a vector of
//! plaintexts). Per plaintext: one NTT mod `t` and one per ciphertext prime.

use std::sync::Arc;

use fhe::bfv::{BfvParameters, Ciphertext};
use fhe_math::ntt::NttOperator;
use fhe_math::rq::traits::TryConvertFrom;
use fhe_math::rq::{Context, Poly, Representation};
use fhe_math::zq::Modulus;

use super::HeError;
use sci_ir::backend::HE_CT_LEVEL as CT_LEVEL;

/// The ring degree `N` ([`sci_ir::backend::HE_DEGREE`], as `super::params::DEGREE`).
const DEGREE: usize = sci_ir::backend::HE_DEGREE as usize;

/// SIMD encoder for the plaintext modulus `t` at the ciphertexts' level.
#[derive(Debug)]
pub(crate) struct Encoder {
    /// Slot `i` → coefficient index before the inverse NTT.
    index: Box<[usize]>,
    /// The NTT mod `t`.
    ntt_t: NttOperator,
    /// The ciphertexts' context (level [`CT_LEVEL`]).
    ctx: Arc<Context>,
}

impl Encoder {
    /// The encoder of `bfv` (plaintext modulus `t`).
    pub(crate) fn new(bfv: &Arc<BfvParameters>, t: u64) -> Result<Encoder, HeError> {
        let ntt_t = NttOperator::new(&Modulus::new(t)?, DEGREE)
            .ok_or_else(|| HeError::InvalidArgument(format!("no NTT of size {DEGREE} mod {t}")))?;
        // SEAL's batching map (`fhe` computes the same).
        let (row, m) = (DEGREE / 2, 2 * DEGREE);
        let shift = DEGREE.leading_zeros() + 1;
        let mut index = vec![0usize; DEGREE];
        let mut pos: usize = 1;
        for i in 0..row {
            index[i] = ((pos - 1) >> 1).reverse_bits() >> shift;
            index[row | i] = ((m - pos - 1) >> 1).reverse_bits() >> shift;
            pos = (pos * 3) & (m - 1);
        }
        Ok(Encoder {
            index: index.into(),
            ntt_t,
            ctx: bfv.context_at_level(CT_LEVEL)?.clone(),
        })
    }

    /// The NTT-form polynomial of the slot vector `slots` (at most `N` values
    /// mod `t`; the rest are zero).
    pub(crate) fn encode(&self, slots: &[u64]) -> Result<Poly, HeError> {
        let mut v = vec![0u64; DEGREE];
        for (&i, &x) in self.index.iter().zip(slots) {
            v[i] = x;
        }
        self.ntt_t.backward(&mut v);
        let mut coeffs = Vec::with_capacity(self.ctx.moduli().len() * DEGREE);
        for q in self.ctx.moduli_operators() {
            let start = coeffs.len();
            coeffs.extend_from_slice(&v);
            q.reduce_vec(&mut coeffs[start..]);
        }
        let mut p = Poly::try_convert_from(coeffs, &self.ctx, false, Representation::PowerBasis)?;
        p.change_representation(Representation::Ntt);
        Ok(p)
    }
}

/// `Σ ct ⊙ p` over `(ct, p)` pairs (ciphertexts and plaintexts of
/// [`Encoder::encode`], all at the ciphertexts' level), `None` if there is
/// none: the products accumulate in 128 bits and are reduced once per
/// coefficient (`fhe`'s `dot_product_scalar`, for our plaintexts).
pub(crate) fn dot(
    bfv: &Arc<BfvParameters>,
    terms: &[(&Ciphertext, &Poly)],
) -> Result<Option<Ciphertext>, HeError> {
    let Some((first, _)) = terms.first() else {
        return Ok(None);
    };
    let ctx = first[0].ctx();
    let ops = ctx.moduli_operators();
    let rows = ops.len();
    // Each product is below 2^88 (44-bit primes): 2^40 terms fit in 128 bits.
    super::check(terms.len() < 1 << 40, || {
        format!("{} products in one sum", terms.len())
    })?;
    let layout = || HeError::InvalidArgument("a polynomial not in row-major layout".into());
    let mut acc = vec![0u128; 2 * rows * DEGREE];
    for (ct, p) in terms {
        // The same primes (comparing the contexts themselves would compare
        // their NTT tables).
        let moduli = ctx.moduli();
        super::check(
            ct.len() == 2
                && ct.iter().all(|c| c.ctx().moduli() == moduli)
                && p.ctx().moduli() == moduli
                && *p.representation() == Representation::Ntt,
            || "a product of polynomials of different levels or forms".into(),
        )?;
        let pc = p.coefficients();
        let pc = pc.as_slice().ok_or_else(layout)?;
        for (j, c) in ct.iter().enumerate() {
            let cc = c.coefficients();
            let cc = cc.as_slice().ok_or_else(layout)?;
            let a = &mut acc[j * rows * DEGREE..][..rows * DEGREE];
            for ((a, &x), &y) in a.iter_mut().zip(cc).zip(pc) {
                *a += u128::from(x) * u128::from(y);
            }
        }
    }
    let polys = (0..2)
        .map(|j| {
            let v: Vec<u64> = (0..rows)
                .flat_map(|r| {
                    let q = &ops[r];
                    acc[(j * rows + r) * DEGREE..][..DEGREE]
                        .iter()
                        .map(move |&a| q.reduce_u128(a))
                })
                .collect();
            Poly::try_convert_from(v, ctx, false, Representation::Ntt)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(Ciphertext::new(polys, bfv)?))
}
