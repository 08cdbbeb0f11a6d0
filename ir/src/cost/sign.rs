//! Sign tests: `DReLU` (and `MSB`) over `Z_{2^ℓ}` (`Π_DReLU^{int,ℓ}`, CrypTFlow2
//! Algorithm 2) and over an odd `Z_n` (`Π_DReLU^{ring,n}`, Algorithm 4).
//!
//! * `Z_{2^ℓ}`: one `Π_MILL^{ℓ−1,m}` on the low bits of the shares (ℓ = 1 needs no
//!   communication). Rounds (role `P1`): those of the millionaires'.
//! * `Z_n`, `η = ⌈log₂ n⌉`: one `Π_MILL^{η+1}` with two comparisons per element (the
//!   leaf OTs shared) and a `(4 1)-OT_1` (2λ + 4 bits); rounds: the millionaires' plus 1.

use super::mill::{kk_call, mill};
use super::{Modulus, Transcript};

/// `DReLU` (or `MSB`) of `n` shares over `Z_{2^ℓ}` at radix `m`.
pub fn drelu_ring(ell: u32, m: u32, n: usize) -> Transcript {
    mill(ell - 1, m, 1, n)
}

/// `DReLU` of `n` shares over the odd `Z_modulus` at radix `m`.
pub fn drelu_field(modulus: u64, m: u32, n: usize) -> Transcript {
    let eta = Modulus::Odd(modulus).bits();
    mill(eta + 1, m, 2, n).then(kk_call(4, 1, n))
}

/// The sign test of `n` shares mod `md` (either `DReLU` or its complement: the same
/// transcript).
pub fn drelu(md: Modulus, m: u32, n: usize) -> Transcript {
    match md {
        Modulus::Pow2(ell) => drelu_ring(ell, m, n),
        Modulus::Odd(modulus) => drelu_field(modulus, m, n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Role;

    #[test]
    fn rounds_of_the_sign_tests() {
        assert_eq!(drelu(Modulus::Pow2(32), 4, 100).rounds(Role::P1), 3);
        assert_eq!(drelu(Modulus::Pow2(1), 4, 100), Transcript::new());
        assert_eq!(
            drelu(Modulus::Odd(4_293_918_721), 7, 100).rounds(Role::P1),
            4
        );
    }
}
