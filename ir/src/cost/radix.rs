//! The millionaires' radix `m` each OT engine uses by default: the paper's on IKNP, the
//! cost model's cheapest ReLU on the silent engine. A protocol parameter chosen from the
//! prices ([`super::select::relu`], [`super::ferret`]), kept apart from the millionaires'
//! price list ([`super::mill`]), which the ReLU's price itself builds on.

use super::{Modulus, ferret, select};

/// Default radix `m` on the IKNP engine (the paper's fastest for ℓ = 32, §6.1).
pub const DEFAULT_RADIX: u32 = 4;

/// The default radix on an OT engine for shares mod `md` (`sci-compile` uses it unless
/// `--mill-radix` is given). IKNP: [`DEFAULT_RADIX`], the paper's choice (its
/// bytes-optimal radix is larger, m = 7 at ℓ = 32, §3.1.2, but the leaf OTs' `2^m`
/// messages cost computation). Silent: [`silent_radix`].
pub fn default_radix(ot: crate::OtKind, md: Modulus) -> u32 {
    match ot {
        crate::OtKind::Iknp => DEFAULT_RADIX,
        crate::OtKind::Silent => silent_radix(md),
    }
}

/// The radix `m` in 1..=8 that minimises the cost model's ReLU cost per element mod
/// `md` on the silent engine ([`silent_relu_cost`]), the smallest on a tie. A `(2^m
/// 1)-OT_ℓ` costs `m + 2^m·ℓ` bits there instead of `2λ + 2^m·ℓ`, so small digits win:
/// m = 2 for ℓ = 32 (≈ 327 bits against ≈ 329 at m = 3) and for every ℓ ≥ 31, while
/// narrower rings take m = 3 or 4 (e.g. ℓ = 8: m = 4, ℓ = 16: m = 3).
pub fn silent_radix(md: Modulus) -> u32 {
    (1..=8)
        .min_by_key(|&m| silent_relu_cost(md, m))
        .unwrap_or(DEFAULT_RADIX)
}

/// Elements of the ReLU batch [`silent_relu_cost`] prices (a multiple of 8, large
/// enough that the byte rounding of its messages is negligible).
const RADIX_BATCH: usize = 1 << 12;

/// The silent engine's cost of a ReLU of [`RADIX_BATCH`] shares mod `md` at radix `m`,
/// in bits times the COTs one iteration of the main set hands out
/// ([`FERRET`](crate::params::ferret::FERRET)): its bits on the wire beside the engine's, plus the COTs it
/// draws (both directions) at the main set's amortised `8·iteration_bytes /
/// per_iteration` bits each (≈ 0.447). Integer, so that the comparison is exact.
pub fn silent_relu_cost(md: Modulus, m: u32) -> u128 {
    ferret::amortized_cost(&select::relu(md, m, RADIX_BATCH))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The silent radix is the argmin of the model's ReLU cost at every ℓ in 2..=64 (and
    /// for a field), and 2 at ℓ = 32; IKNP keeps the paper's 4.
    #[test]
    fn silent_radix_is_the_models_argmin() {
        for ell in 2..=64 {
            let md = Modulus::Pow2(ell);
            let m = default_radix(crate::OtKind::Silent, md);
            for other in 1..=8 {
                let (a, b) = (silent_relu_cost(md, m), silent_relu_cost(md, other));
                assert!(
                    a < b || (a == b && m <= other),
                    "ℓ = {ell}: m = {m} vs {other}"
                );
            }
        }
        assert_eq!(silent_radix(Modulus::Pow2(32)), 2);
        assert_eq!(silent_radix(Modulus::Pow2(8)), 4);
        assert_eq!(silent_radix(Modulus::Pow2(16)), 3);
        let field = Modulus::Odd(4_293_918_721);
        assert!((1..=8).all(|m| silent_relu_cost(field, silent_radix(field)) <= silent_relu_cost(field, m)));
        assert_eq!(default_radix(crate::OtKind::Iknp, field), DEFAULT_RADIX);
        // ReLU at ℓ = 32, m = 2: 327.2 bits per element with the COTs amortised.
        let per = silent_relu_cost(Modulus::Pow2(32), 2) as f64
            / crate::params::ferret::FERRET.per_iteration() as f64
            / RADIX_BATCH as f64;
        assert!((327.0..327.5).contains(&per), "{per}");
    }
}
