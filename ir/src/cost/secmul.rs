//! Products of two secret-shared operands over `Z_{2^ℓ}` (elementwise and matrix
//! products; the runtime's `proto::secmul`).
//!
//! `X·Y = X·Y_0 + X·Y_1` for shares `Y = Y_0 + Y_1`: each term is an OT-based product
//! of the shared `X` with a matrix one party holds ([`super::linear`]), role `P0`
//! sending its `Y_0` first, then role `P1` its `Y_1` (the same call with the roles
//! exchanged). So a product `R×C` by `C×O` costs twice [`linear::products`]:
//! `2·R·C·(ℓλ + O·ℓ(ℓ+1)/2)` bits on IKNP (an elementwise product, `C = O = 1`:
//! `2ℓλ + ℓ(ℓ+1)` bits per element, 9,248 at ℓ = 32), plus each call's batch padding.
//! Independent products run as one call per direction (their bytes add up, their
//! rounds are those of one). Rounds, inside a larger protocol: role `P1` requests,
//! role `P0` answers and requests, role `P1` answers: 1 for role `P1`, 2 for role `P0`.

use super::Transcript;
use super::{div, linear};

/// The products `R_k×C_k` by `C_k×O_k` of two shared operands on one lane, as two
/// [`linear::products`] calls, role `P1` choosing first; streamed if `duplex`.
pub fn products(ell: u32, dims: &[(usize, usize, usize)], duplex: bool) -> Transcript {
    let one = linear::products(ell, dims, duplex);
    one.clone().then(one.swapped())
}

/// Bytes a lane carries one flight after the other in [`products`] (for the network
/// time, [`super::net`]): those of each of its two [`linear::products`] calls, one after
/// the other.
pub fn products_serial_bytes(ell: u32, dims: &[(usize, usize, usize)], duplex: bool) -> u64 {
    2 * linear::products_serial_bytes(ell, dims, duplex)
}

/// One matrix product `R×C` by `C×O` of two shared operands ([`products`] of one).
pub fn matmul(ell: u32, dims: (usize, usize, usize), duplex: bool) -> Transcript {
    products(ell, &[dims], duplex)
}

/// The elementwise product of two shared tensors of `n` elements ([`products`] of
/// one `n×1` by `1×1`).
pub fn mul(ell: u32, n: usize, duplex: bool) -> Transcript {
    products(ell, &[(n, 1, 1)], duplex)
}

/// The rounded product of two shared tensors of `n` elements (the runtime's
/// `secmul::mul_round`): [`mul`], then the non-negative truncation by `s`
/// ([`div::trunc_nonneg`]) at millionaires' radix `m`.
pub fn mul_round(ell: u32, s: u32, m: u32, n: usize, duplex: bool) -> Transcript {
    mul(ell, n, duplex).then(div::trunc_nonneg(ell, s, m, n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Role;

    #[test]
    fn twice_the_product_with_known_weights() {
        let n = 1 << 12;
        // 2ℓλ + ℓ(ℓ+1) bits per element.
        assert_eq!(mul(32, n, true).bits(), n as u64 * (2 * 32 * 128 + 32 * 33));
        assert_eq!(mul(8, n, true).bits(), n as u64 * (2 * 8 * 128 + 8 * 9));
        let t = matmul(37, (5, 7, 3), true);
        assert_eq!(t.sent(Role::P0), t.sent(Role::P1));
        assert_eq!(t.bits(), 2 * linear::matmul_bits(37, (5, 7, 3)));
        assert_eq!((t.rounds(Role::P0), t.rounds(Role::P1)), (2, 1));
        // Two products in one call: the bytes add up, the rounds stay.
        let both = products(16, &[(4, 4, 4), (9, 1, 1)], true);
        assert_eq!(
            both.bits(),
            matmul(16, (4, 4, 4), true).bits() + mul(16, 9, true).bits()
        );
        assert_eq!((both.rounds(Role::P0), both.rounds(Role::P1)), (2, 1));
    }
}
