//! Hash functions that mask the sender's messages in OT extension.
//!
//! - [`Tccr`]: the tweakable circular correlation-robust hash of Guo, Katz,
//!   Wang and Yu, "Efficient and Secure Multiparty Computation from Fixed-Key
//!   Block Ciphers" (IEEE S&P 2020, eprint 2019/074):
//!   `H(i, x) = π(π(x) ⊕ i) ⊕ π(x)` with `π` fixed-key AES-128 — two AES
//!   calls per hash, secure for IKNP-style OT extension in the random
//!   permutation model when every tweak `i` is used for one OT only.
//! - [`Mmo`]: `h(x) = π'(x) ⊕ x` (Matyas–Meyer–Oseas with a fixed public
//!   key) in counter mode, `G(y) = h(y ⊕ 0) ‖ h(y ⊕ 1) ‖ …`, to stretch a
//!   128-bit OT pad `y` to a longer correlated-OT payload (see [`Mmo`] for
//!   the security argument).
//! - [`RkAes256`]: re-keyed AES-256, `H(i, x) = AES-256_x(i)` for the 256-bit
//!   rows of Kolesnikov–Kumaresan 1-of-N OT extension, the instantiation used
//!   by CrypTFlow2 (§6.1) after ABY (Demmler et al. 2015) and Dessouky et al.
//!   2017 (ideal-cipher model: a key with ≥ 128 bits of entropy unknown to the
//!   receiver gives an output that looks random).

use super::{Block, FixedAes};

/// Blocks hashed per inner step (kept in L1).
const STEP: usize = 64;

/// The fixed public AES-128 key of the random permutation π (the first 128
/// bits of the fractional part of π; any public constant works).
const FIXED_KEY: u128 = 0x243f_6a88_85a3_08d3_1319_8a2e_0370_7344;

/// Guo–Katz–Wang–Yu tweakable correlation-robust hash from fixed-key AES.
#[derive(Clone)]
pub struct Tccr {
    pi: FixedAes,
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
            pi: FixedAes::new(Block(FIXED_KEY)),
        }
    }

    /// In place: `data[k] ← H(tweak0 + k, data[k])`. Two AES calls per block.
    ///
    /// With `p = π(x)`, `π(p ⊕ i) ⊕ p = h(p ⊕ i) ⊕ i` for the MMO function
    /// `h(y) = π(y) ⊕ y`, so the hash is an encryption, a tweak XOR, a fused
    /// MMO pass and a tweak XOR, in place (no copy of `π(x)`).
    pub fn hash_in_place(&self, tweak0: u128, data: &mut [Block]) {
        self.hash_with(data, |k| tweak0.wrapping_add(k as u128));
    }

    /// In place: `data[k] ← H(tweaks[k], data[k])` (`tweaks` as long as
    /// `data`), for blocks whose tweaks do not run on: many short hashes in
    /// one pass. Two AES calls per block.
    pub fn hash_tweaked(&self, data: &mut [Block], tweaks: &[u128]) {
        assert_eq!(data.len(), tweaks.len(), "one tweak per block");
        self.hash_with(data, |k| tweaks[k]);
    }

    /// `data[k] ← H(tweak(k), data[k])`, in steps of [`STEP`] blocks (see
    /// [`Tccr::hash_in_place`]).
    fn hash_with(&self, data: &mut [Block], tweak: impl Fn(usize) -> u128) {
        for (c, chunk) in data.chunks_mut(STEP).enumerate() {
            let tweaks = |chunk: &mut [Block]| {
                for (k, d) in chunk.iter_mut().enumerate() {
                    *d ^= Block(tweak(c * STEP + k));
                }
            };
            self.pi.encrypt_blocks(chunk);
            tweaks(chunk);
            self.pi.mmo_blocks(chunk);
            tweaks(chunk);
        }
    }
}

/// The fixed public AES-128 key of [`Mmo`]'s permutation π' (the first 128
/// bits of the fractional part of `e`), distinct from [`Tccr`]'s.
const MMO_KEY: u128 = 0xb7e1_5162_8aed_2a6a_bf71_5880_9cf4_f3c7;

/// Stretches 128-bit OT pads: `G(y)` is the sequence of blocks `h(y ⊕ t)`,
/// `t = 0, 1, …`, with `h(x) = π'(x) ⊕ x` and `π'` AES-128 under a fixed
/// public key.
///
/// # Security
/// `h` is correlation robust (CR) in the random-permutation model (Guo,
/// Katz, Wang, Yu, S&P 2020, eprint 2019/074, which shows fixed-key MMO CR
/// but not *circular* CR, hence [`Tccr`] for the IKNP pads): for a uniform
/// secret `R`, the oracle `x ↦ h(x ⊕ R)` on distinct queries is
/// indistinguishable from a random function except with probability
/// `O((q·p + q²)/2^128)` for `q` oracle and `p` permutation queries. For the
/// pad `y` of an OT that the receiver did not choose (a TCCR output it
/// cannot compute, so uniform in its view by [`Tccr`]'s security; `π'` is
/// independent of `Tccr`'s permutation), `G(y)` is exactly the oracle on the
/// distinct public offsets `t`, so the stretched pad is pseudorandom. Over
/// `n` pads of `T` blocks each the loss is `O((n·T·p + (n·T)²)/2^128)`,
/// e.g. below `2^-60` for `n·T ≤ 2^32` and `p ≤ 2^64`. Unlike a PRG keyed by
/// `y`, no key schedule runs per pad, and many pads are stretched in one
/// batch of AES blocks.
#[derive(Clone)]
pub struct Mmo {
    pi: FixedAes,
}

impl Default for Mmo {
    fn default() -> Self {
        Mmo::new()
    }
}

impl std::fmt::Debug for Mmo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Mmo")
    }
}

impl Mmo {
    /// The expansion with the fixed public permutation.
    pub fn new() -> Mmo {
        Mmo {
            pi: FixedAes::new(Block(MMO_KEY)),
        }
    }

    /// In place, `x[i] ← h(x[i]) = π'(x[i]) ⊕ x[i]`: block `t` of `G(y)`
    /// for an input `y ⊕ t`. Callers lay out the inputs of many pads and
    /// hash them in one call (a long slice keeps the AES pipeline full,
    /// where one short pad at a time does not). Cost: one AES block per
    /// block.
    pub fn hash_blocks(&mut self, x: &mut [Block]) {
        self.pi.mmo_blocks(x);
    }
}

impl Mmo {
    /// The first two blocks of `G(y)` for each parent `y`: `children[2p + b]
    /// = h(parents[p] ⊕ b)`, the length-doubling PRG of a GGM tree level
    /// (`sci_runtime::ot::ferret`; `children` holds `2·parents.len()` blocks, the
    /// rest is left alone). One fused pass over the level, in place.
    /// Cost: one AES block per child.
    pub fn expand_children(&self, parents: &[Block], children: &mut [Block]) {
        let out = &mut children[..2 * parents.len()];
        for (o, p) in out.chunks_exact_mut(2).zip(parents) {
            o[0] = *p;
            o[1] = *p ^ Block(1);
        }
        self.pi.mmo_blocks(out);
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
        let n = k1.len().min(k2.len()).min(pts.len()).min(out.len());
        let z = [Block::ZERO];
        super::rk_aes::hash_rows(&k1[..n], &k2[..n], &pts[..n], &z, &z, &mut out[..n]);
    }

    /// [`RkAes256::hash`] with the `aes` crate only (one `Aes256::new` and
    /// one `encrypt_block` per key): the fallback without AES-NI, and the
    /// baseline the benchmark compares the SIMD kernels with.
    pub fn hash_portable(k1: &[Block], k2: &[Block], pts: &[Block], out: &mut [Block]) {
        let n = k1.len().min(k2.len()).min(pts.len()).min(out.len());
        let z = [Block::ZERO];
        super::rk_aes::hash_rows_portable(&k1[..n], &k2[..n], &pts[..n], &z, &z, &mut out[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::as_aes_blocks_mut;
    use aes::Aes128;
    use aes::cipher::array::Array;
    use aes::cipher::{BlockCipherEncrypt, KeyInit};

    #[test]
    fn tccr_matches_definition() {
        let h = Tccr::new();
        let pi = |x: Block| {
            let mut b = [x];
            h.pi.encrypt_blocks(&mut b);
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
        // Tweaks given one by one: the same hashes.
        let tweaks: Vec<u128> = (0..xs.len() as u128).map(|k| 1000 + k).collect();
        let mut each = xs.clone();
        h.hash_tweaked(&mut each, &tweaks);
        assert_eq!(each, got);
        // Different tweaks give different outputs on the same input.
        let mut a = [xs[0], xs[0]];
        h.hash_in_place(5, &mut a);
        assert_ne!(a[0], a[1]);
    }

    #[test]
    fn mmo_matches_definition() {
        let mut ex = Mmo::new();
        let pi = Aes128::new(&Array::from(MMO_KEY.to_le_bytes()));
        let h = |x: u128| {
            let mut b = [Block(x)];
            pi.encrypt_blocks(as_aes_blocks_mut(&mut b));
            b[0].0 ^ x
        };
        // Longer than a kernel step, with a tail.
        let xs: Vec<Block> = (0..2051u128)
            .map(|i| Block(i.wrapping_mul(0x0123_4567_89ab_cdef_fedc_ba98_7654_3211)))
            .collect();
        let mut got = xs.clone();
        ex.hash_blocks(&mut got);
        for (x, g) in xs.iter().zip(&got) {
            assert_eq!(g.0, h(x.0), "input {x:?}");
        }
    }

    #[test]
    fn expand_children_is_the_first_two_blocks_of_g() {
        let mut ex = Mmo::new();
        let parents: Vec<Block> = (0..700u128)
            .map(|i| Block(i * 0x9e37_79b9_7f4a_7c15))
            .collect();
        let mut children = vec![Block::ZERO; 2 * parents.len()];
        ex.expand_children(&parents, &mut children);
        let mut g: Vec<Block> = parents.iter().flat_map(|p| [*p, *p ^ Block(1)]).collect();
        ex.hash_blocks(&mut g);
        assert_eq!(children, g);
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
