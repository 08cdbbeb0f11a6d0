//! Hash functions that mask the sender's messages in OT extension.
//!
//! - [`Tccr`]: the tweakable circular correlation-robust hash of Guo, Katz,
//!   Wang and Yu, "Efficient and Secure Multiparty Computation from Fixed-Key
//!   Block Ciphers" (IEEE S&P 2020, eprint 2019/074):
//!   `H(i, x) = π(π(x) ⊕ i) ⊕ π(x)` with `π` fixed-key AES-128 — two AES
//!   calls per hash, secure for IKNP-style OT extension in the random
//!   permutation model when every tweak `i` is used for one OT only.
//! - [`RkAes256`]: re-keyed AES-256, `H(i, x) = AES-256_x(i)` for the 256-bit
//!   rows of Kolesnikov–Kumaresan 1-of-N OT extension, the instantiation used
//!   by CrypTFlow2 (§6.1) after ABY (Demmler et al. 2015) and Dessouky et al.
//!   2017 (ideal-cipher model: a key with ≥ 128 bits of entropy unknown to the
//!   receiver gives an output that looks random).

use aes::cipher::array::Array;
use aes::cipher::{BlockCipherEncrypt, KeyInit};
use aes::{Aes128, Aes256};

use super::{Block, as_aes_blocks_mut};

/// Blocks hashed per inner step (kept in L1).
const STEP: usize = 64;

/// The fixed public AES-128 key of the random permutation π (the first 128
/// bits of the fractional part of π; any public constant works).
const FIXED_KEY: u128 = 0x243f_6a88_85a3_08d3_1319_8a2e_0370_7344;

/// Guo–Katz–Wang–Yu tweakable correlation-robust hash from fixed-key AES.
#[derive(Clone)]
pub struct Tccr {
    pi: Aes128,
}

impl Default for Tccr {
    fn default() -> Self {
        Tccr::new()
    }
}

impl std::fmt::Debug for Tccr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tccr")
    }
}

impl Tccr {
    /// The hash with the fixed public permutation.
    pub fn new() -> Tccr {
        Tccr {
            pi: Aes128::new(&Array::from(FIXED_KEY.to_le_bytes())),
        }
    }

    /// In place: `data[k] ← H(tweak0 + k, data[k])`. Two AES calls per block.
    pub fn hash_in_place(&self, tweak0: u128, data: &mut [Block]) {
        let mut pix = [Block::ZERO; STEP];
        for (c, chunk) in data.chunks_mut(STEP).enumerate() {
            let base = tweak0.wrapping_add((c * STEP) as u128);
            let pix = &mut pix[..chunk.len()];
            pix.copy_from_slice(chunk);
            self.pi.encrypt_blocks(as_aes_blocks_mut(pix));
            for (k, (d, p)) in chunk.iter_mut().zip(pix.iter()).enumerate() {
                *d = *p ^ Block(base.wrapping_add(k as u128));
            }
            self.pi.encrypt_blocks(as_aes_blocks_mut(chunk));
            for (d, p) in chunk.iter_mut().zip(pix.iter()) {
                *d ^= *p;
            }
        }
    }
}

/// Re-keyed AES-256 hash for 256-bit rows: `H(i, x) = AES-256_x(i)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct RkAes256;

impl RkAes256 {
    /// `out[k] = AES-256_{k1[k] ‖ k2[k]}(pts[k])`: the 256-bit key is the 32
    /// bytes of `k1[k]` then `k2[k]`. One key expansion and one encryption
    /// each, on the widest SIMD kernel available. All slices have the same
    /// length (extra entries of longer ones are ignored).
    pub fn hash(k1: &[Block], k2: &[Block], pts: &[Block], out: &mut [Block]) {
        let done = super::rk_aes::hash_prefix(k1, k2, pts, out);
        Self::hash_portable_from(done, k1, k2, pts, out);
    }

    /// [`RkAes256::hash`] with the `aes` crate only (one `Aes256::new` and
    /// one `encrypt_block` per key): the fallback without AES-NI, and the
    /// baseline the benchmark compares the SIMD kernels with.
    pub fn hash_portable(k1: &[Block], k2: &[Block], pts: &[Block], out: &mut [Block]) {
        Self::hash_portable_from(0, k1, k2, pts, out);
    }

    fn hash_portable_from(
        done: usize,
        k1: &[Block],
        k2: &[Block],
        pts: &[Block],
        out: &mut [Block],
    ) {
        let keys = k1.iter().zip(k2).zip(pts);
        for (((a, b), p), o) in keys.zip(out.iter_mut()).skip(done) {
            let mut kb = [0u8; 32];
            kb[..16].copy_from_slice(&a.to_bytes());
            kb[16..].copy_from_slice(&b.to_bytes());
            let c = Aes256::new(&Array::from(kb));
            let mut blk = Array::from(p.to_bytes());
            c.encrypt_block(&mut blk);
            *o = Block::from_bytes(blk.into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tccr_matches_definition() {
        let h = Tccr::new();
        let pi = |x: Block| {
            let mut b = [x];
            h.pi.encrypt_blocks(as_aes_blocks_mut(&mut b));
            b[0]
        };
        let xs: Vec<Block> = (0..150u128)
            .map(|i| Block(i.wrapping_mul(0xdead_beef_1234_5678_9abc)))
            .collect();
        let mut got = xs.clone();
        h.hash_in_place(1000, &mut got);
        for (k, (x, g)) in xs.iter().zip(&got).enumerate() {
            let px = pi(*x);
            assert_eq!(*g, pi(px ^ Block(1000 + k as u128)) ^ px);
        }
        // Different tweaks give different outputs on the same input.
        let mut a = [xs[0], xs[0]];
        h.hash_in_place(5, &mut a);
        assert_ne!(a[0], a[1]);
    }

    #[test]
    fn rk_aes256_known_answer() {
        // FIPS-197 Appendix C.3: key 00..1f, plaintext 00112233..ff.
        let kb: [u8; 32] = std::array::from_fn(|i| i as u8);
        let k1 = Block::from_bytes(kb[..16].try_into().expect("16 bytes"));
        let k2 = Block::from_bytes(kb[16..].try_into().expect("16 bytes"));
        let pt: [u8; 16] = std::array::from_fn(|i| (i as u8) * 0x11);
        let mut out = [Block::ZERO];
        RkAes256::hash(&[k1], &[k2], &[Block::from_bytes(pt)], &mut out);
        let expect = [
            0x8e, 0xa2, 0xb7, 0xca, 0x51, 0x67, 0x45, 0xbf, 0xea, 0xfc, 0x49, 0x90, 0x4b, 0x49,
            0x60, 0x89,
        ];
        assert_eq!(out[0].to_bytes(), expect);
    }
}
