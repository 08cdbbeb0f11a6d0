//! Re-keyed AES-256 on many keys at a time with AES-NI or VAES-512.
//!
//! Each call of the KK13 hash uses a fresh AES-256 key (a 256-bit row of the
//! extension matrix, masked by a code word), so the key schedule costs as
//! much as the encryption. Following Gueron, Lindell, Nof and Pinkas, "Fast
//! Garbling of Circuits Under Standard Assumptions" (CCS 2015, J. Cryptology
//! 2018) and Gueron, "Intel's New AES Instructions" (white paper, 2010), the
//! schedule is computed with `pshufb` and `aesenclast` (which, on a register
//! holding the same word four times, is SubWord plus the round constant)
//! instead of the slow `aeskeygenassist`; eight registers of independent
//! keys are expanded and used in lockstep so the AES unit pipelines, and
//! each round key is applied to the block as soon as it is produced (no
//! schedule is stored).
//!
//! The prefix XOR of the four words of a round key, `k ⊕ (k≪32) ⊕ (k≪64) ⊕
//! (k≪96)`, is one 64-bit-lane shift (`k ⊕= k≪32` within each half, port 0)
//! and one byte shuffle that copies word 1 into words 2 and 3 (port 5), the
//! trick of the VAES kernel of EzPC SCI (`utils/vaes.h`); with AVX-512 the
//! last two XORs are one `vpternlogq`. A generated round key thus costs six
//! vector instructions (2 shuffles, 1 shift, 1 ternary XOR, 1 `aesenclast`, 1
//! `aesenc`) spread over ports 0 and 5, against nine with three whole-lane
//! byte shifts (all on port 5): on a core with one 512-bit AES unit the
//! kernel is bound by ports 0/5 at about 41 instructions per register of four
//! keys (≈10.5 cycles per hash), where the previous schedule needed ≈16.
//!
//! # Row hashing
//! [`hash_rows`] hashes the rows of a 1-of-N OT batch directly: the key of
//! hash `(j, v)` is `(q0[j] ⊕ m0[v]) ‖ (q1[j] ⊕ m1[v])` (row `j` masked by the
//! code word of message `v`), built in registers from the rows and the
//! masks, so nothing of size `n·N` is materialised. Outputs are laid out by
//! groups of [`LANES`] instances: hash `(j, v)` is at
//! `(⌊j/4⌋·N + v)·4 + j mod 4` ([`row_index`]), which is what a VAES register
//! of four keys with the same `v` writes.
//!
//! This module holds `unsafe` code: the calls into the kernels after runtime
//! feature detection, and the kernels' vector loads and stores of `Block`
//! slices (lengths checked first). Both kernels are tested against the `aes`
//! crate.

use aes::Aes256;
use aes::cipher::array::Array;
use aes::cipher::{BlockCipherEncrypt, KeyInit};

use super::Block;

/// Instances per group of the output layout of [`hash_rows`].
pub const LANES: usize = 4;

/// Position of hash `(j, v)` in the output of [`hash_rows`] with `n_msgs`
/// masks.
#[inline]
pub fn row_index(j: usize, v: usize, n_msgs: usize) -> usize {
    ((j / LANES) * n_msgs + v) * LANES + j % LANES
}

/// Output length of [`hash_rows`] for `n` instances and `n_msgs` masks: whole
/// groups of [`LANES`] instances.
pub fn rows_len(n: usize, n_msgs: usize) -> usize {
    n.div_ceil(LANES) * LANES * n_msgs
}

/// `out[row_index(j, v, N)] = AES-256_{(q0[j] ⊕ m0[v]) ‖ (q1[j] ⊕ m1[v])}(pts[j])`
/// for `j < q0.len()`, `v < N = m0.len()`, on the widest kernel the CPU has
/// (VAES-512: 32 hashes per step; AES-NI: 8; else the `aes` crate). `q0`,
/// `q1`, `pts` have equal lengths, `m0`, `m1` too, and `out.len()` is
/// [`rows_len`]`(q0.len(), N)`, or `q0.len()` when `N = 1` (then the layout
/// is the instance order). Entries of the padding instances of the last
/// group are hashes of zero rows.
pub fn hash_rows(
    q0: &[Block],
    q1: &[Block],
    pts: &[Block],
    m0: &[Block],
    m1: &[Block],
    out: &mut [Block],
) {
    debug_assert!(q0.len() == q1.len() && q0.len() == pts.len() && m0.len() == m1.len());
    debug_assert!(!m0.is_empty());
    debug_assert!(
        out.len() == rows_len(q0.len(), m0.len()) || (m0.len() == 1 && out.len() == q0.len())
    );
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("vaes") && has!("avx512f") && has!("avx512bw") {
            for h0 in (0..out.len()).step_by(32) {
                // SAFETY: the CPU has VAES, AVX-512F and AVX-512BW (checked).
                unsafe { x86::rows_vaes512(q0, q1, pts, m0, m1, h0, out) }
            }
            return;
        }
        if has!("aes") && has!("ssse3") {
            for h0 in (0..out.len()).step_by(8) {
                // SAFETY: the CPU has AES-NI and SSSE3 (checked).
                unsafe { x86::rows_aesni(q0, q1, pts, m0, m1, h0, out) }
            }
            return;
        }
    }
    hash_rows_portable(q0, q1, pts, m0, m1, out);
}

/// [`hash_rows`] with the `aes` crate only (one `Aes256::new` and one
/// `encrypt_block` per hash): the fallback without AES-NI, and the baseline
/// the benchmark compares the kernels with.
pub fn hash_rows_portable(
    q0: &[Block],
    q1: &[Block],
    pts: &[Block],
    m0: &[Block],
    m1: &[Block],
    out: &mut [Block],
) {
    let nm = m0.len();
    for (j, ((a, b), p)) in q0.iter().zip(q1).zip(pts).enumerate() {
        for (v, (c, d)) in m0.iter().zip(m1).enumerate() {
            let mut kb = [0u8; 32];
            kb[..16].copy_from_slice(&(*a ^ *c).to_bytes());
            kb[16..].copy_from_slice(&(*b ^ *d).to_bytes());
            let cipher = Aes256::new(&Array::from(kb));
            let mut blk = Array::from(p.to_bytes());
            cipher.encrypt_block(&mut blk);
            if let Some(o) = out.get_mut(row_index(j, v, nm)) {
                *o = Block::from_bytes(blk.into());
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Block;
    use std::arch::x86_64::*;

    // The loads and stores below read or write one (`load1`, `store1`) or up
    // to four (`load4`, `store4`) consecutive `Block`s: `Block` is
    // `repr(transparent)` over `u128`, so they are 16 or 64 contiguous bytes
    // whose little-endian layout is the lane layout of the vector. The slice
    // length is checked first: a short slice is read through a zero-padded
    // copy (or as zeros when empty) and written through a copy of its length.

    #[target_feature(enable = "sse2")]
    #[inline]
    fn load1(b: &[Block]) -> __m128i {
        match b.first() {
            // SAFETY: one whole `Block` (16 bytes) is readable; unaligned load.
            Some(x) => unsafe { _mm_loadu_si128(std::ptr::from_ref(x).cast()) },
            None => _mm_setzero_si128(),
        }
    }

    #[target_feature(enable = "sse2")]
    #[inline]
    fn store1(x: __m128i, out: &mut [Block]) {
        if let Some(o) = out.first_mut() {
            // SAFETY: one whole `Block` (16 bytes) is writable; unaligned store.
            unsafe { _mm_storeu_si128(std::ptr::from_mut(o).cast(), x) }
        }
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    fn load4(b: &[Block]) -> __m512i {
        match b.first_chunk::<4>() {
            // SAFETY: four whole `Block`s (64 bytes) are readable; unaligned load.
            Some(x) => unsafe { _mm512_loadu_si512(x.as_ptr().cast()) },
            None => {
                let mut t = [Block::ZERO; 4];
                let k = b.len().min(4);
                t[..k].copy_from_slice(&b[..k]);
                // SAFETY: `t` is four whole `Block`s (64 bytes); unaligned load.
                unsafe { _mm512_loadu_si512(t.as_ptr().cast()) }
            }
        }
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    fn store4(x: __m512i, out: &mut [Block]) {
        match out.first_chunk_mut::<4>() {
            // SAFETY: four whole `Block`s (64 bytes) are writable; unaligned store.
            Some(o) => unsafe { _mm512_storeu_si512(o.as_mut_ptr().cast(), x) },
            None => {
                if !out.is_empty() {
                    let mut t = [Block::ZERO; 4];
                    // SAFETY: `t` is four whole `Block`s (64 bytes); unaligned store.
                    unsafe { _mm512_storeu_si512(t.as_mut_ptr().cast(), x) };
                    let k = out.len();
                    out.copy_from_slice(&t[..k]);
                }
            }
        }
    }

    #[target_feature(enable = "sse2")]
    #[inline]
    fn bcast1(b: &Block) -> __m128i {
        load1(std::slice::from_ref(b))
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    fn bcast4(b: &Block) -> __m512i {
        _mm512_broadcast_i32x4(load1(std::slice::from_ref(b)))
    }

    #[target_feature(enable = "sse2")]
    #[inline]
    fn xor3_128(a: __m128i, b: __m128i, c: __m128i) -> __m128i {
        _mm_xor_si128(_mm_xor_si128(a, b), c)
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    fn xor3_512(a: __m512i, b: __m512i, c: __m512i) -> __m512i {
        _mm512_ternarylogic_epi64::<0x96>(a, b, c)
    }

    /// Per 128-bit lane: bytes 4..8 (word 1) into words 2 and 3, zeros in
    /// words 0 and 1 (`pshufb` zeroes a byte whose index has the top bit set).
    #[target_feature(enable = "sse2")]
    #[inline]
    fn word1_up_128() -> __m128i {
        _mm_set_epi32(0x0706_0504, 0x0706_0504, -1, -1)
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    fn word1_up_512() -> __m512i {
        _mm512_broadcast_i32x4(word1_up_128())
    }

    /// Generates a kernel computing 8·`$lanes` consecutive outputs of
    /// `hash_rows`, from output position `h0` on (`h0` a multiple of
    /// 8·`$lanes`): eight registers of `$lanes` keys, schedules and
    /// encryptions in lockstep. A register holds hashes `h, …, h + $lanes − 1`
    /// of the layout, i.e. `$lanes` instances of one group with the same mask.
    macro_rules! kernel {
        ($name:ident, $feat:literal, $v:ty, $lanes:literal, $load:ident, $store:ident,
         $bcast:ident, $enc:ident, $enclast:ident, $shuf:ident, $sll:ident, $xor:ident,
         $xor3:ident, $set1:ident, $zero:ident, $up:ident) => {
            /// See the macro documentation.
            #[target_feature(enable = $feat)]
            pub(super) fn $name(
                q0: &[Block],
                q1: &[Block],
                pts: &[Block],
                m0: &[Block],
                m1: &[Block],
                h0: usize,
                out: &mut [Block],
            ) {
                let nm = m0.len().max(1);
                // RotWord of word 3 into every word; word 3 into every word.
                let rot = $set1(0x0c0f_0e0d);
                let bcast = $set1(0x0f0e_0d0c);
                let up = $up();
                let zero = $zero();
                // `k ⊕ (k≪32) ⊕ (k≪64) ⊕ (k≪96) ⊕ t` within each lane.
                let mix = |k: $v, t: $v| -> $v {
                    let k = $xor(k, $sll::<32>(k));
                    $xor3(k, $shuf(k, up), t)
                };
                let mut k1: [$v; 8] = [zero; 8];
                let mut k2: [$v; 8] = [zero; 8];
                let mut st: [$v; 8] = [zero; 8];
                // Cursor over the layout: group g, mask v, lane.
                let item = h0 / super::LANES;
                let (mut g, mut v, mut lane) = (item / nm, item % nm, h0 % super::LANES);
                let zb = Block::ZERO;
                for i in 0..8 {
                    let j = g * super::LANES + lane;
                    let a = $load(q0.get(j..).unwrap_or(&[]));
                    let b = $load(q1.get(j..).unwrap_or(&[]));
                    let p = $load(pts.get(j..).unwrap_or(&[]));
                    k1[i] = $xor(a, $bcast(m0.get(v).unwrap_or(&zb)));
                    k2[i] = $xor(b, $bcast(m1.get(v).unwrap_or(&zb)));
                    st[i] = $enc($xor(p, k1[i]), k2[i]);
                    lane += $lanes;
                    if lane == super::LANES {
                        lane = 0;
                        v += 1;
                        if v == nm {
                            v = 0;
                            g += 1;
                        }
                    }
                }
                let mut rcon = 1i32;
                for round in 1..=7 {
                    let rc = $set1(rcon);
                    for i in 0..8 {
                        k1[i] = mix(k1[i], $enclast($shuf(k2[i], rot), rc));
                    }
                    if round == 7 {
                        for i in 0..8 {
                            st[i] = $enclast(st[i], k1[i]);
                        }
                        break;
                    }
                    for i in 0..8 {
                        st[i] = $enc(st[i], k1[i]);
                        k2[i] = mix(k2[i], $enclast($shuf(k1[i], bcast), zero));
                        st[i] = $enc(st[i], k2[i]);
                    }
                    rcon <<= 1;
                }
                for (i, s) in st.iter().enumerate() {
                    $store(*s, out.get_mut(h0 + $lanes * i..).unwrap_or(&mut []));
                }
            }
        };
    }

    kernel!(
        rows_aesni,
        "aes,ssse3",
        __m128i,
        1,
        load1,
        store1,
        bcast1,
        _mm_aesenc_si128,
        _mm_aesenclast_si128,
        _mm_shuffle_epi8,
        _mm_slli_epi64,
        _mm_xor_si128,
        xor3_128,
        _mm_set1_epi32,
        _mm_setzero_si128,
        word1_up_128
    );
    kernel!(
        rows_vaes512,
        "vaes,avx512f,avx512bw",
        __m512i,
        4,
        load4,
        store4,
        bcast4,
        _mm512_aesenc_epi128,
        _mm512_aesenclast_epi128,
        _mm512_shuffle_epi8,
        _mm512_slli_epi64,
        _mm512_xor_si512,
        xor3_512,
        _mm512_set1_epi32,
        _mm512_setzero_si512,
        word1_up_512
    );

    /// A kernel with its step (hashes per call), for the tests.
    #[cfg(test)]
    pub(super) type Kernel = (
        usize,
        fn(&[Block], &[Block], &[Block], &[Block], &[Block], usize, &mut [Block]),
    );

    #[cfg(test)]
    pub(super) fn kernels_for_test() -> Vec<Kernel> {
        use std::arch::is_x86_feature_detected as has;
        let mut v: Vec<Kernel> = Vec::new();
        if has!("aes") && has!("ssse3") {
            // SAFETY: the CPU has AES-NI and SSSE3 (checked).
            v.push((8, |a, b, p, c, d, h, o| unsafe {
                rows_aesni(a, b, p, c, d, h, o)
            }));
        }
        if has!("vaes") && has!("avx512f") && has!("avx512bw") {
            // SAFETY: the CPU has VAES, AVX-512F and AVX-512BW (checked).
            v.push((32, |a, b, p, c, d, h, o| unsafe {
                rows_vaes512(a, b, p, c, d, h, o)
            }));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::Prg;

    fn reference(k1: Block, k2: Block, pt: Block) -> Block {
        let mut out = [Block::ZERO];
        hash_rows_portable(
            &[k1],
            &[k2],
            &[pt],
            &[Block::ZERO],
            &[Block::ZERO],
            &mut out,
        );
        out[0]
    }

    fn blocks(g: &mut Prg, n: usize) -> Vec<Block> {
        let mut v = vec![Block::ZERO; n];
        g.fill_blocks(&mut v);
        v
    }

    #[test]
    fn portable_matches_fips197() {
        // FIPS-197 Appendix C.3: key 00..1f, plaintext 00112233..ff.
        let kb: [u8; 32] = std::array::from_fn(|i| i as u8);
        let k1 = Block::from_bytes(kb[..16].try_into().expect("16 bytes"));
        let k2 = Block::from_bytes(kb[16..].try_into().expect("16 bytes"));
        let pt: [u8; 16] = std::array::from_fn(|i| (i as u8) * 0x11);
        let expect = [
            0x8e, 0xa2, 0xb7, 0xca, 0x51, 0x67, 0x45, 0xbf, 0xea, 0xfc, 0x49, 0x90, 0x4b, 0x49,
            0x60, 0x89,
        ];
        assert_eq!(reference(k1, k2, Block::from_bytes(pt)).to_bytes(), expect);
    }

    /// Every kernel, on every output position of layouts with 1..=17 masks
    /// and a partial last group, against the `aes` crate.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn every_kernel_matches_aes_crate() {
        let mut g = Prg::new(Block(5));
        for (step, kernel) in x86::kernels_for_test() {
            for (n, nm) in [(4usize, 1usize), (7, 3), (9, 16), (13, 17), (2, 8)] {
                let (q0, q1, p) = (blocks(&mut g, n), blocks(&mut g, n), blocks(&mut g, n));
                let (m0, m1) = (blocks(&mut g, nm), blocks(&mut g, nm));
                let mut out = vec![Block::ZERO; rows_len(n, nm)];
                for h0 in (0..out.len()).step_by(step) {
                    kernel(&q0, &q1, &p, &m0, &m1, h0, &mut out);
                }
                for j in 0..n {
                    for v in 0..nm {
                        assert_eq!(
                            out[row_index(j, v, nm)],
                            reference(q0[j] ^ m0[v], q1[j] ^ m1[v], p[j]),
                            "step {step}, n {n}, N {nm}, j {j}, v {v}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn dispatch_matches_aes_crate() {
        let mut g = Prg::new(Block(6));
        for (n, nm) in [
            (0usize, 1usize),
            (1, 1),
            (33, 1),
            (100, 1),
            (5, 16),
            (37, 8),
        ] {
            let (q0, q1, p) = (blocks(&mut g, n), blocks(&mut g, n), blocks(&mut g, n));
            let (m0, m1) = (blocks(&mut g, nm), blocks(&mut g, nm));
            let len = if nm == 1 { n } else { rows_len(n, nm) };
            let mut out = vec![Block::ZERO; len];
            hash_rows(&q0, &q1, &p, &m0, &m1, &mut out);
            let mut port = vec![Block::ZERO; len];
            hash_rows_portable(&q0, &q1, &p, &m0, &m1, &mut port);
            for j in 0..n {
                for v in 0..nm {
                    let at = row_index(j, v, nm);
                    assert_eq!(out[at], port[at], "n {n}, N {nm}, j {j}, v {v}");
                }
                let want = reference(q0[j] ^ m0[nm - 1], q1[j] ^ m1[nm - 1], p[j]);
                assert_eq!(out[row_index(j, nm - 1, nm)], want);
            }
        }
    }
}
