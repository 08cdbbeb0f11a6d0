//! OT-based linear layers with the server's weights (CrypTFlow2 §5.1.1): `Y = X·W` with
//! `X` (`R×C`) shared and `W` (`C×O`) the server's. Each element of the client's share
//! is decomposed into its ℓ bits; bit `i` is one correlated OT carrying the `O` weights
//! it multiplies mod `2^{ℓ−i}`: `R·C·(ℓλ + O·ℓ(ℓ+1)/2)` bits — the paper's `NKℓ`
//! instances of `COT_{O(ℓ+1)/2}` — in batches of at most [`BATCH_WORDS`](crate::params::linear::BATCH_WORDS) correlation
//! words, each padded as its own OT call. The server (weight owner) is role `P0`, the
//! OT sender, on every lane.
//!
//! The batches are streamed over a full-duplex lane (plain TCP): the client sends its
//! extension messages ahead while the server answers, one round for each party
//! whatever the size. Over a half-duplex lane (TLS) each batch is one exchange. A
//! convolution is a product of its `im2col` matrix (`N·oh·ow × (C/g)·kh·kw`) with the
//! transposed weights of each of its `g` groups; an elementwise product with server
//! weights is the case `C = O = 1`. Independent products — the groups of a convolution,
//! the products of one wave ([`crate::schedule`]) — run as one call ([`products`]):
//! their batches one after the other in one stream, so their bytes add up and their
//! rounds are those of one product.

use super::ot::{Widths, cot_call};
use super::{Role, Transcript};
use crate::params::linear::batch_pairs;

/// The OT batches (instances per batch) and the answer widths of the products
/// `R_k×C_k` by `C_k×O_k`, one product's after the other: `ℓ` instances per pair,
/// instance `j` of a product carrying `O·(ℓ − j mod ℓ)` bits (none for `O = 0`).
fn plan(ell: u32, products: &[(usize, usize, usize)]) -> (Vec<usize>, Widths) {
    let l = ell as usize;
    products.iter().fold(
        (Vec::new(), Widths::default()),
        |(mut batches, widths), &(rows, cols, outs)| {
            let total = if outs == 0 { 0 } else { rows * cols };
            batches.extend(batch_pairs(ell, total, outs).map(|np| np * l));
            let cycle = (0..u64::from(ell))
                .map(|i| (u64::from(ell) - i) * outs as u64)
                .collect();
            (batches, widths.then(Widths::cycle(total * l, cycle)))
        },
    )
}

/// The product `R×C` by `C×O` over `Z_{2^ℓ}` on one lane, streamed if `duplex`:
/// [`products`] of one.
pub fn matmul(ell: u32, dims: (usize, usize, usize), duplex: bool) -> Transcript {
    products(ell, &[dims], duplex)
}

/// Several products run as one correlated-OT call on one lane (a wave of independent
/// products, [`crate::schedule`]), in batches of at most [`BATCH_WORDS`](crate::params::linear::BATCH_WORDS) words, one
/// product's after the other; streamed if `duplex` (and there is more than one batch):
/// the bytes are the products' summed and, streamed, the rounds those of one product.
pub fn products(ell: u32, products: &[(usize, usize, usize)], duplex: bool) -> Transcript {
    let (batches, widths) = plan(ell, products);
    let streamed = duplex && batches.len() > 1;
    cot_call(Role::P1, batches, widths, streamed)
}

/// Bytes a lane carries one flight after the other in [`products`] (for the network
/// time, [`super::net`]): all of them over a half-duplex lane; over a full-duplex lane
/// the batches pipeline ([`pipelined_bytes`]).
pub fn products_serial_bytes(ell: u32, products: &[(usize, usize, usize)], duplex: bool) -> u64 {
    let t = self::products(ell, products, false);
    if duplex {
        pipelined_bytes(&t, Role::P1)
    } else {
        t.bits() / 8
    }
}

/// Bytes that cross a full-duplex lane one after the other when the exchanges of `t`
/// (each a request from `receiver` and its answer, in order) pipeline: the requests
/// flow while the other party answers the ones it has received, but an answer waits
/// for its whole request (the server transposes a batch's request matrix before it
/// answers), so the lane is busy for the longer of "every request, then the last
/// answer" and "the first request, then every answer". One exchange: both directions
/// one after the other.
pub fn pipelined_bytes(t: &Transcript, receiver: Role) -> u64 {
    let f = t.flights();
    let first_req = f
        .first()
        .filter(|f| f.from == receiver)
        .map_or(0, |f| f.bytes);
    let last_ans = f
        .last()
        .filter(|f| f.from != receiver)
        .map_or(0, |f| f.bytes);
    (t.sent(receiver) + last_ans).max(first_req + t.sent(receiver.other()))
}

/// [`products_serial_bytes`] of one product.
pub fn matmul_serial_bytes(ell: u32, dims: (usize, usize, usize), duplex: bool) -> u64 {
    products_serial_bytes(ell, &[dims], duplex)
}

/// Bits on the wire of [`matmul`] (the same streamed or not).
pub fn matmul_bits(ell: u32, dims: (usize, usize, usize)) -> u64 {
    matmul(ell, dims, true).bits()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_or_not_the_same_bytes() {
        let dims = (300, 100, 200);
        let (a, b) = (matmul(32, dims, true), matmul(32, dims, false));
        assert!(b.flights().len() > 2);
        assert_eq!(
            (a.sent(Role::P0), a.sent(Role::P1)),
            (b.sent(Role::P0), b.sent(Role::P1))
        );
        assert_eq!(a.rounds(Role::P1), 1);
        assert_eq!(a.rounds(Role::P0), 1);
        let elems = 300 * 100u64;
        assert_eq!(
            matmul_bits(32, (1, 8, 3)),
            8 * 32 * 128 + 8 * (8 * 3 * 528u64).div_ceil(8)
        );
        assert!(a.bits() >= elems * 32 * (128 + 200 * 33 / 2));
        // Pipelined over a full-duplex lane: less than both directions, more than the
        // larger one; one batch or half duplex: both directions.
        let (req, ans) = (a.sent(Role::P1), a.sent(Role::P0));
        let serial = matmul_serial_bytes(32, dims, true);
        assert!(serial < req + ans && serial > req.max(ans), "{serial}");
        assert_eq!(matmul_serial_bytes(32, dims, false), req + ans);
        let one = matmul(32, (1, 8, 3), true);
        assert_eq!(matmul_serial_bytes(32, (1, 8, 3), true), one.bits() / 8);
        assert_eq!(matmul_serial_bytes(32, (1, 8, 0), true), 0);
    }
}
