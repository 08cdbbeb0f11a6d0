//! Primal-LPN expansion with a local linear code (Ferret, Yang, Weng, Lan,
//! Zhang, Wang, CCS 2020, §5.1 and §6: each output is the XOR of `D = 10`
//! entries of the secret at positions drawn from a PRG with a public seed).
//!
//! From `k` COTs `(u, s)` (receiver's choice bits `u`, blocks `s = r ⊕ u·Δ`
//! against the sender's `r`) and `n` multi-point COTs `(e, w = v ⊕ e·Δ)`, both
//! sides apply the same public `k × n` matrix `A`: the receiver's `x = u·A ⊕
//! e`, `z = s·A ⊕ w`, the sender's `y = r·A ⊕ v`, so `z = y ⊕ x·Δ`, and `x`
//! is an LPN sample with regular noise `e` (pseudorandom to the sender). With
//! the choice bit in each block's low bit ([`super::mpcot`]), the encoding
//! only XORs blocks: `out_i ^= ⊕_{j<D} secret[A_{i,j}]`.
//!
//! Column `i`'s positions are the 32-bit words of three AES blocks
//! `AES_key(3i), AES_key(3i+1), AES_key(3i+2)` (ten of their twelve
//! words), each mapped to `[0, k)` by `⌊r·k/2^32⌋` (bias below `k/2^32`;
//! repeated positions cancel, as in Ferret's code). The code is memory-bound:
//! `D` random reads of the `16k`-byte secret per output.
//!
//! # The code's key
//! The matrix is public but not fixed: its AES key ([`code_key`]) is derived
//! from a per-session public random seed and the engine's iteration index
//! (with the parameter set), so every session, and every iteration within
//! one, uses a fresh code, as emp-ot's Ferret does (it draws the LPN seed
//! per session and re-keys the code per iteration). One fixed matrix for
//! every deployment would let an attacker precompute against it once. Both
//! parties hold the seed (the session id, [`crate::OtPack::set_lpn_seed`])
//! and count iterations alike, so they build the same code without talking.

use sci_net::crypto::{Block, FixedAes, Prg};

/// Nonzeros per column of the code.
pub const D: usize = 10;

/// Words of AES output per column: three blocks, of which the first `D`
/// words are used.
const W: usize = 12;

/// Outputs whose positions are drawn in one AES pass (48 KiB of blocks).
const STEP: usize = 1024;

/// Columns whose secret entries are prefetched ahead of their use: the reads
/// are random over `16k` bytes (9 MiB with the production set, beyond L2),
/// so the encoding waits on memory unless many reads are in flight.
const AHEAD: usize = 16;

/// Asks the cache for the line of `x` (no effect on the result; `x` need
/// not point to valid memory: a prefetch never faults).
#[inline(always)]
fn prefetch(x: *const Block) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch is a hint that never faults or writes; SSE is
        // part of the x86_64 baseline.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(x.cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// A vector of blocks whose data starts on a 2 MiB boundary of an
/// allocation the OS is asked to back with transparent huge pages (Linux
/// `madvise(MADV_HUGEPAGE)`; elsewhere, or if the kernel declines, ordinary
/// pages). For the LPN secret, read at random: with 4 KiB pages its 9 MiB
/// (production set) outgrow the TLB, and under a hypervisor's nested paging
/// each TLB miss is a long page walk; with 2 MiB pages the reads of
/// [`LpnCode::encode`] miss the cache only. Growing past the capacity
/// reallocates (correct, but ordinary pages again).
#[derive(Default)]
pub(crate) struct HugeVec {
    /// `off` unused blocks, then the data.
    buf: Vec<Block>,
    off: usize,
}

/// The huge page size of x86_64 and aarch64 Linux.
const HUGE_PAGE: usize = 2 << 20;

impl HugeVec {
    /// An empty vector with room for `cap` blocks. Cost: one allocation of
    /// `16·cap` bytes plus 2 MiB, one system call, and zeroing up to 2 MiB
    /// (the unused head).
    pub(crate) fn with_capacity(cap: usize) -> HugeVec {
        let slack = HUGE_PAGE / std::mem::size_of::<Block>();
        let mut buf: Vec<Block> = Vec::with_capacity(cap + slack);
        let start = buf.as_ptr() as usize;
        let aligned = start.next_multiple_of(HUGE_PAGE);
        #[cfg(target_os = "linux")]
        {
            let end = (start + buf.capacity() * std::mem::size_of::<Block>()) & !(HUGE_PAGE - 1);
            if aligned < end {
                // SAFETY: `[aligned, end)` lies inside `buf`'s allocation
                // (page aligned, as its ends are), which nothing has touched
                // yet; MADV_HUGEPAGE only changes how the kernel backs those
                // pages, never their contents. An error (no THP support)
                // changes nothing, so it is ignored.
                let _ = unsafe {
                    libc::madvise(
                        aligned as *mut libc::c_void,
                        end - aligned,
                        libc::MADV_HUGEPAGE,
                    )
                };
            }
        }
        let off = (aligned - start) / std::mem::size_of::<Block>();
        buf.resize(off, Block::ZERO);
        HugeVec { buf, off }
    }

    /// Removes every block.
    pub(crate) fn clear(&mut self) {
        self.buf.truncate(self.off);
    }

    /// Keeps the first `len` blocks, or appends zero blocks up to `len`.
    pub(crate) fn resize(&mut self, len: usize) {
        self.buf.resize(self.off + len, Block::ZERO);
    }

    /// Appends the blocks of `it`.
    pub(crate) fn extend(&mut self, it: impl IntoIterator<Item = Block>) {
        self.buf.extend(it);
    }
}

impl std::ops::Deref for HugeVec {
    type Target = [Block];
    fn deref(&self) -> &[Block] {
        &self.buf[self.off..]
    }
}

impl std::ops::DerefMut for HugeVec {
    fn deref_mut(&mut self) -> &mut [Block] {
        &mut self.buf[self.off..]
    }
}

/// The AES key of the public code of iteration `iteration` of a Ferret
/// engine keyed by `seed`, for a secret of `k` blocks and `n` outputs: two
/// domain-separated [`Prg::derive`]s, first of `seed` for the iteration, then
/// of that block for the parameter set, `key = derive(derive(seed,
/// "sci/ferret/lpn", iteration), "sci/ferret/lpn-set", (n << 32) ^ k)`. Both
/// parties compute it from public values only (the session's seed, the
/// iteration counter and the parameters), so they build the same matrix
/// without talking; another seed or iteration gives an independent key.
pub(crate) fn code_key(seed: Block, k: usize, n: usize, iteration: u64) -> Block {
    let it = Prg::derive(seed, "sci/ferret/lpn", iteration).next_block();
    Prg::derive(it, "sci/ferret/lpn-set", ((n as u64) << 32) ^ k as u64).next_block()
}

/// `out[i] = ⌊words[i]·k/2^32⌋` (a 32-bit word mapped to `[0, k)`), for
/// `i < out.len() ≤ words.len()`: on x86_64 with AVX2 (run-time detection;
/// the crate targets baseline x86-64) the same loop compiled for it, four
/// 32×32-bit products per instruction instead of two.
fn scale_words(words: &[u32], k: u64, out: &mut [u32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked).
        return unsafe { scale_words_avx2(words, k, out) };
    }
    scale_words_in(words, k, out);
}

/// [`scale_words`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn scale_words_avx2(words: &[u32], k: u64, out: &mut [u32]) {
    scale_words_in(words, k, out);
}

/// The loop of [`scale_words`] (inlined into each build of it).
#[inline(always)]
fn scale_words_in(words: &[u32], k: u64, out: &mut [u32]) {
    for (o, &w) in out.iter_mut().zip(words) {
        *o = ((u64::from(w) * k) >> 32) as u32;
    }
}

/// The public local linear code of one iteration.
#[derive(Clone)]
pub(crate) struct LpnCode {
    aes: FixedAes,
    k: usize,
}

impl LpnCode {
    /// The code of iteration `iteration` (counted from 0, the
    /// bootstrapping one) of an engine keyed by the public `seed`, for a
    /// secret of `k` blocks and `n` outputs: AES under [`code_key`].
    pub(crate) fn new(seed: Block, k: usize, n: usize, iteration: u64) -> LpnCode {
        LpnCode {
            aes: FixedAes::new(code_key(seed, k, n, iteration)),
            k,
        }
    }

    /// Writes the positions of columns `first..first + out.len()/W` into
    /// `out`, [`W`] words per column of which the first `D` are its
    /// positions (all twelve words of its three blocks are mapped, in one
    /// vectorisable pass), using `blocks` as scratch.
    fn positions(&self, first: usize, blocks: &mut Vec<Block>, out: &mut [u32]) {
        let cols = out.len() / W;
        blocks.clear();
        blocks.extend((3 * first..3 * (first + cols)).map(|c| Block(c as u128)));
        self.aes.encrypt_blocks(blocks);
        // Word `i` of the output is 32-bit word `i mod 4` of block `⌊i/4⌋`,
        // from its low end.
        scale_words(Block::as_u32s(blocks), self.k as u64, out);
    }

    /// The `D` positions of column `i` (for tests).
    #[cfg(test)]
    pub(crate) fn column(&self, i: usize) -> [u32; D] {
        let mut out = [0u32; W];
        self.positions(i, &mut Vec::new(), &mut out);
        std::array::from_fn(|j| out[j])
    }

    /// `out[i] ^= ⊕_{j<D} secret[A_{first+i,j}]` for every `i`: outputs
    /// `first..first + out.len()` of the encoding (`secret` has `k` blocks;
    /// each column is addressed by its index, so any range of outputs can be
    /// encoded on its own). Cost: `3·out.len()` AES blocks and `D·out.len()`
    /// random reads.
    pub(crate) fn encode(&self, out: &mut [Block], first: usize, secret: &[Block]) {
        assert_eq!(secret.len(), self.k, "LPN secret length");
        let mut blocks = Vec::with_capacity(3 * STEP);
        let mut pos = vec![0u32; W * STEP];
        let ptr = secret.as_ptr();
        let ask = |col: &[u32]| {
            col[..D]
                .iter()
                .for_each(|&j| prefetch(ptr.wrapping_add(j as usize)))
        };
        for (c, chunk) in out.chunks_mut(STEP).enumerate() {
            let pos = &mut pos[..W * chunk.len()];
            self.positions(first + c * STEP, &mut blocks, pos);
            pos.chunks_exact(W).take(AHEAD).for_each(ask);
            // The columns `AHEAD` outputs on, whose reads are requested now.
            let mut ahead = pos.chunks_exact(W).skip(AHEAD);
            for (o, col) in chunk.iter_mut().zip(pos.chunks_exact(W)) {
                if let Some(next) = ahead.next() {
                    ask(next);
                }
                *o = col[..D].iter().fold(*o, |a, &j| {
                    // SAFETY: a position `⌊r·k/2^32⌋` with `r < 2^32` is below
                    // `k = secret.len()` (asserted above).
                    a ^ unsafe { *secret.get_unchecked(j as usize) }
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_sides_build_the_same_matrix_and_encode_linearly() {
        let (k, n) = (300, 2500);
        let seed = Block(0x5eed);
        let (a, b) = (LpnCode::new(seed, k, n, 3), LpnCode::new(seed, k, n, 3));
        let other = LpnCode::new(seed, k + 1, n, 3);
        let mut differ = false;
        for i in [0, 1, 1023, 1024, 2499] {
            let ca = a.column(i);
            assert_eq!(ca, b.column(i));
            assert!(ca.iter().all(|&j| (j as usize) < k));
            differ |= ca != other.column(i);
        }
        assert!(differ, "the code depends on its parameters");
        // encode = the XOR of the columns' positions, chunk boundaries too.
        let mut prg = Prg::new(Block(3));
        let mut secret = vec![Block::ZERO; k];
        prg.fill_blocks(&mut secret);
        let mut e = vec![Block::ZERO; n];
        prg.fill_blocks(&mut e);
        let mut out = e.clone();
        a.encode(&mut out, 0, &secret);
        // Any range encodes on its own, as the whole.
        let mut part = e[1000..2100].to_vec();
        a.encode(&mut part, 1000, &secret);
        assert_eq!(part, out[1000..2100]);
        for i in 0..n {
            let want = a
                .column(i)
                .iter()
                .fold(e[i], |x, &j| x ^ secret[j as usize]);
            assert_eq!(out[i], want, "output {i}");
        }
        // Positions spread over the whole secret.
        let mut hit = vec![false; k];
        (0..n).for_each(|i| a.column(i).iter().for_each(|&j| hit[j as usize] = true));
        assert!(hit.iter().all(|&h| h));
    }

    /// The columns are the module documentation's definition, computed here
    /// with the `aes` crate one column at a time.
    #[test]
    fn columns_follow_the_definition() {
        use aes::Aes128;
        use aes::cipher::array::Array;
        use aes::cipher::{BlockCipherEncrypt, KeyInit};
        let (k, n) = (589_824usize, 1295usize << 13);
        let (seed, iteration) = (Block(0x0123_4567_89ab_cdef), 7);
        let code = LpnCode::new(seed, k, n, iteration);
        let it = Prg::derive(seed, "sci/ferret/lpn", iteration).next_block();
        let key = Prg::derive(it, "sci/ferret/lpn-set", ((n as u64) << 32) ^ k as u64).next_block();
        let aes = Aes128::new(&Array::from(key.to_bytes()));
        for i in [0usize, 1, 5, STEP - 1, STEP, 3 * STEP + 7, n - 1] {
            let words: Vec<u32> = (0..3)
                .flat_map(|b| {
                    let mut blk = Array::from(((3 * i + b) as u128).to_le_bytes());
                    aes.encrypt_block(&mut blk);
                    let v = u128::from_le_bytes(blk.into());
                    (0..4).map(move |w| (v >> (32 * w)) as u32)
                })
                .collect();
            let want: Vec<u32> = words[..D]
                .iter()
                .map(|&r| ((u64::from(r) * k as u64) >> 32) as u32)
                .collect();
            assert_eq!(code.column(i).to_vec(), want, "column {i}");
        }
    }

    /// Every build of the word scaling (the AVX2 one where the CPU has it)
    /// gives `⌊r·k/2^32⌋`, on odd lengths and the extreme words too.
    #[test]
    fn word_scaling_matches_its_definition() {
        let mut g = Prg::new(Block(5));
        let mut words = vec![0, 1, u32::MAX, u32::MAX - 1, 1 << 31];
        words.extend(g.u64s(1000).iter().map(|&v| v as u32));
        for k in [1u64, 69_454, 589_824, u64::from(u32::MAX), 1 << 32] {
            let want: Vec<u32> = words
                .iter()
                .map(|&r| ((u128::from(r) * u128::from(k)) >> 32) as u32)
                .collect();
            for len in [0, 1, 7, 8, 9, 17, words.len()] {
                let mut out = vec![0u32; len];
                scale_words(&words, k, &mut out);
                assert_eq!(out, want[..len], "k = {k}, {len} words");
                scale_words_in(&words, k, &mut out);
                assert_eq!(out, want[..len], "k = {k}, {len} words (portable)");
            }
        }
    }

    /// The code is keyed by the session's seed and the iteration: another
    /// seed or another iteration moves the columns' positions; the same
    /// inputs give the same code (both parties' view).
    #[test]
    fn each_seed_and_iteration_has_its_own_code() {
        let (k, n) = (4096, 1 << 16);
        let cols = |seed: u128, it: u64| -> Vec<[u32; D]> {
            let code = LpnCode::new(Block(seed), k, n, it);
            [0, 1, 2, 1000, n - 1].map(|i| code.column(i)).to_vec()
        };
        let base = cols(1, 0);
        assert_eq!(base, cols(1, 0), "same seed and iteration, same code");
        for (seed, it) in [(2, 0), (1, 1), (2, 1), (1 << 64, 0), (1, 1 << 32)] {
            let other = cols(seed, it);
            // Each column differs (ten positions of 4096 agreeing: ~2^-120).
            for (i, (a, b)) in base.iter().zip(&other).enumerate() {
                assert_ne!(a, b, "seed {seed}, iteration {it}, column {i}");
            }
        }
        assert_ne!(
            code_key(Block(1), k, n, 0),
            code_key(Block(1), k, n + 1, 0),
            "the parameters key the code too"
        );
    }

    #[test]
    fn huge_vec_holds_its_blocks_from_a_huge_page_boundary() {
        assert!(HugeVec::default().is_empty());
        let mut v = HugeVec::with_capacity(100_000);
        assert!(v.is_empty());
        assert_eq!(v.as_ptr() as usize % HUGE_PAGE, 0);
        v.extend((0..100_000u128).map(Block));
        assert!(v.iter().zip(0..).all(|(b, i)| *b == Block(i)));
        assert_eq!(v.len(), 100_000);
        v[7] = Block::ONES;
        assert_eq!(v[7], Block::ONES);
        v.resize(3);
        assert_eq!(&v[..], &[Block(0), Block(1), Block(2)]);
        v.resize(5);
        assert_eq!(&v[3..], &[Block::ZERO; 2]);
        v.clear();
        assert!(v.is_empty());
        v.extend([Block(5), Block(6)]);
        assert_eq!(&v[..], &[Block(5), Block(6)]);
        // Past the capacity it reallocates and keeps its blocks.
        v.extend((0..300_000u128).map(Block));
        assert_eq!(v.len(), 300_002);
        assert_eq!(
            (v[1], v[2], v[300_001]),
            (Block(6), Block(0), Block(299_999))
        );
    }
}
