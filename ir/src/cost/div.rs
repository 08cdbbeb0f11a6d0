//! Truncation and division by public integers: `Π_Trunc^{int,ℓ,s}` (CrypTFlow2
//! Algorithm 5), its variant for non-negative inputs (Corollary 4.2), and
//! `Π_DIV^{ring,n,d}` (Theorem 4.1, Algorithm 9) with its variant for non-negative
//! dividends.
//!
//! * General truncation: the `Π_MILL^{ℓ−1}` of the sign and the `Π_MILL^s` of the low
//!   carry in one millionaires' call, a `(4 1)-OT_s` for the correction (2λ + 4s bits),
//!   a B2A into `Z_{2^ℓ}`. 5436 bits per element at ℓ = 32, s = 12, m = 4. Rounds (role
//!   `P1`): the deeper millionaires', 1, 1.
//! * Non-negative inputs: `Π_MILL^s` and one batch of `2n` correlated OTs (the B2A of the
//!   carry and the product `x_0·x_1`): 1444 bits at ℓ = 32, s = 12, m = 4.
//! * Division by `d` over `md` (`η` bits): a sign test, a `(4 1)-OT` of the correction
//!   mod `n` and `2^δ`, one `Π_MILL^{δ−1}` with `k` comparisons per element, a B2A of the
//!   `k·n` bits; `k = 2` and `δ = ⌈log₂ 4d⌉` when `2·(n mod d) ≤ d` for every divisor,
//!   else `k = 3`, `δ = ⌈log₂ 6d⌉`. Over `Z_{2^ℓ}` a batch whose divisors are all the
//!   same `2^s` is a general truncation by `s`.
//! * Division of a dividend known to lie in `[0, n/2)` (sci-runtime's `rdiv_nonneg`;
//!   over `Z_n` the truncation of a non-negative value): no sign test; the correction
//!   is `x_0·x_1`, one batch of `n` correlated OTs carrying it mod `n` and mod `2^δ`;
//!   then `Π_MILL^{δ−1}` with `k = 2` comparisons for every modulus and divisor
//!   (`δ = ⌈log₂ 4d⌉`) and the B2A of the `2n` bits. Over the 32-bit HE field,
//!   truncation by `2^12` at m = 4: 2834 bits per element against 9560 for the
//!   general division. Over `Z_{2^ℓ}` with every divisor `2^s` it is
//!   [`trunc_nonneg`].

use super::mill::{kk_call, mill, mill_multi};
use super::ot::{Widths, cot_call};
use super::select::{b2a, cots, mux};
use super::{Modulus, Role, Transcript};
use crate::params::div::{batch_shape, corr_fields, pow2_divisor};

/// General truncation by `s` of `n` shares over `Z_{2^ℓ}` at radix `m` (nothing for
/// `s = 0`).
pub fn trunc(ell: u32, s: u32, m: u32, n: usize) -> Transcript {
    if s == 0 {
        return Transcript::new();
    }
    mill_multi(m, &[(ell - 1, 1, n), (s, 1, n)])
        .then(kk_call(4, s, n))
        .then(b2a(Modulus::Pow2(ell), n))
}

/// Truncation by `s` of `n` shares of non-negative values over `Z_{2^ℓ}`.
pub fn trunc_nonneg(ell: u32, s: u32, m: u32, n: usize) -> Transcript {
    if s == 0 || n == 0 {
        return Transcript::new();
    }
    mill(s, m, 1, n).then(nonneg_batch(ell, s, n))
}

/// The OT batch of [`trunc_nonneg`] after its millionaires': `2n` correlated OTs, the
/// B2A of the low carry (ℓ bits) and `x_0·x_1` mod `2^s`.
fn nonneg_batch(ell: u32, s: u32, n: usize) -> Transcript {
    let widths = Widths::uniform(n, u64::from(ell)).then(Widths::uniform(n, u64::from(s)));
    cot_call(Role::P1, vec![2 * n], widths, false)
}

/// `relu_trunc` of `n` shares over `Z_{2^ℓ}` by `s ≥ 1` at radix `m`
/// (`proto::trunc::relu_trunc`): the `DReLU`'s `Π_MILL^{ℓ−1}` and the low carry's
/// `Π_MILL^s` as one call, then [`trunc_nonneg`]'s OT batch, then the ReLU's
/// multiplexer — the bits of [`super::select::relu`] and [`trunc_nonneg`] together,
/// in fewer rounds.
pub fn relu_trunc(ell: u32, s: u32, m: u32, n: usize) -> Transcript {
    if n == 0 {
        return Transcript::new();
    }
    mill_multi(m, &[(ell - 1, 1, n), (s, 1, n)])
        .then(nonneg_batch(ell, s, n))
        .then(mux(&[Modulus::Pow2(ell)], n))
}

/// Division of `n` shares mod `md` by the divisors `d` (one for all or one per element;
/// valid: `1 ≤ d < n`, `6d ≤ 2^64`) at radix `m`.
pub fn rdiv(md: Modulus, d: &[u64], m: u32, n: usize) -> Transcript {
    divide(md, d, m, n, false)
}

/// [`rdiv`] of dividends known to lie in `[0, n/2)` (see the [module
/// documentation](self)).
pub fn rdiv_nonneg(md: Modulus, d: &[u64], m: u32, n: usize) -> Transcript {
    divide(md, d, m, n, true)
}

/// [`rdiv`] (`nonneg` false) or [`rdiv_nonneg`]: the sign test and the `(4 1)-OT` of
/// the correction, or the correlated OT of `x_0·x_1`; then the comparisons and the
/// B2A.
fn divide(md: Modulus, d: &[u64], m: u32, n: usize, nonneg: bool) -> Transcript {
    match (pow2_divisor(md, d), md) {
        (Some(s), Modulus::Pow2(ell)) if nonneg => trunc_nonneg(ell, s, m, n),
        (Some(s), Modulus::Pow2(ell)) => trunc(ell, s, m, n),
        _ if n == 0 => Transcript::new(),
        _ => {
            let (k, delta) = batch_shape(md, d, nonneg);
            let corr_bits: u32 = corr_fields(md, delta).iter().map(|f| f.bits()).sum();
            let corr = if nonneg {
                cots(Role::P1, n, u64::from(corr_bits))
            } else {
                super::sign::drelu(md, m, n).then(kk_call(4, corr_bits, n))
            };
            corr.then(mill(delta - 1, m, k, n)).then(b2a(md, k * n))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_element_costs() {
        let n = 1 << 12;
        assert_eq!(trunc(32, 12, 4, n).bits(), 5436 * n as u64);
        assert_eq!(trunc_nonneg(32, 12, 4, n).bits(), 1444 * n as u64);
        assert_eq!(rdiv(Modulus::Pow2(32), &[4096], 4, n), trunc(32, 12, 4, n));
        assert_eq!(rdiv(Modulus::Pow2(32), &[49], 8, n).bits(), 5022 * n as u64);
        let he = Modulus::Odd(4_294_475_777);
        assert_eq!(rdiv(he, &[4096], 4, n).bits(), 9560 * n as u64);
        assert_eq!(rdiv_nonneg(he, &[4096], 4, n).bits(), 2834 * n as u64);
        assert_eq!(rdiv_nonneg(he, &[4096], 4, n).rounds(Role::P1), 1 + 2 + 1);
        assert_eq!(
            rdiv_nonneg(Modulus::Pow2(32), &[4096], 4, n),
            trunc_nonneg(32, 12, 4, n)
        );
    }
}
