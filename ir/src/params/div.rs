//! The shape of a division by public integers (CrypTFlow2 Theorem 4.1, §4.2.3): how
//! many comparisons per element, of which width, and the moduli its correction is
//! shared in. Its price: `cost::div`.

use super::Modulus;

/// `⌈log₂ (2k·d)⌉`: the comparison width δ for `k` comparisons.
fn delta_bits(d: u64, k: usize) -> u32 {
    128 - (2 * k as u128 * u128::from(d) - 1).leading_zeros()
}

/// The comparisons per element `k` and their width δ for a batch with divisors `d`
/// (§4.2.3: two comparisons when `2·(n mod d) ≤ d` for all, or when the dividends are
/// known to be non-negative (`nonneg`): then `A ≥ −(n mod d) > −d`).
pub fn batch_shape(md: Modulus, d: &[u64], nonneg: bool) -> (usize, u32) {
    let n = md.value();
    let k = if nonneg || d.iter().all(|&d| 2 * (n % u128::from(d)) <= u128::from(d)) {
        2
    } else {
        3
    };
    (k, d.iter().map(|&d| delta_bits(d, k)).max().unwrap_or(3))
}

/// The moduli of the correction's shares: `2^{max(ℓ,δ)}` for `2^ℓ`, `(n, 2^δ)` for odd
/// `n`.
pub fn corr_fields(md: Modulus, delta: u32) -> Vec<Modulus> {
    match md {
        Modulus::Pow2(ell) => vec![Modulus::Pow2(ell.max(delta))],
        Modulus::Odd(_) => vec![md, Modulus::Pow2(delta)],
    }
}

/// `Some(s)` if `md` is `2^ℓ` and every divisor is `2^s` (then the division is a
/// truncation).
pub fn pow2_divisor(md: Modulus, d: &[u64]) -> Option<u32> {
    let first = *d.first()?;
    (matches!(md, Modulus::Pow2(_)) && first.is_power_of_two() && d.iter().all(|&x| x == first))
        .then(|| first.trailing_zeros())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_per_element() {
        assert_eq!(
            batch_shape(Modulus::Odd(4_293_918_721), &[4096], false).0,
            2
        );
        // The non-negative variant: two comparisons even where the general needs three.
        assert_eq!(
            batch_shape(Modulus::Odd(4_294_967_291), &[49], false),
            (3, 9)
        );
        assert_eq!(
            batch_shape(Modulus::Odd(4_294_967_291), &[49], true),
            (2, 8)
        );
    }
}
