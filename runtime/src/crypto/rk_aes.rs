//! Re-keyed AES-256 on many keys at a time with AES-NI or VAES-512.
//!
//! Each call of the KK13 hash uses a fresh AES-256 key (the 256-bit row), so
//! the key schedule costs as much as the encryption. Following Gueron,
//! Lindell, Nof and Pinkas, "Fast Garbling of Circuits Under Standard
//! Assumptions" (CCS 2015, J. Cryptology 2018) and Gueron, "Intel's New AES
//! Instructions" (white paper, 2010), the schedule is computed with `pshufb`
//! and `aesenclast` (which, on a register holding the same word four times,
//! is SubWord plus the round constant) instead of the slow `aeskeygenassist`;
//! eight independent keys are expanded and used in lockstep so the AES unit
//! pipelines, and each round key is applied to the block as soon as it is
//! produced (no schedule is stored).
//!
//! Two kernels are generated from one macro: AES-NI on `__m128i` (8 keys in
//! lockstep) and VAES with AVX-512 on `__m512i` (32 keys: four per register),
//! chosen at run time. On the development machine (Xeon with VAES and
//! AVX-512BW; `sci-bench hash`, best of six runs) a hash (key schedule plus
//! encryption) takes ≈6 ns with the VAES kernel against ≈100 ns with the
//! `aes` crate's `Aes256::new` plus `encrypt_block`.
//!
//! This module holds `unsafe` code: the calls into the kernels after runtime
//! feature detection, and the kernels' vector loads and stores of `Block`
//! slices (lengths checked first). Both kernels are tested against the `aes` crate.

use super::Block;

/// `out[k] = AES-256_{k1[k] ‖ k2[k]}(pts[k])` with the widest kernel the CPU
/// has: VAES-512 (32 keys per step, four per register), AES-NI (8 keys per
/// step), or none. Returns how many leading entries were done (the caller
/// does the rest with the portable `aes` crate). All slices have the same
/// length.
pub(crate) fn hash_prefix(k1: &[Block], k2: &[Block], pts: &[Block], out: &mut [Block]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("vaes") && has!("avx512f") && has!("avx512bw") {
            // SAFETY: the CPU has VAES, AVX-512F and AVX-512BW (checked).
            return batched::<32>(k1, k2, pts, out, |a, b, p, o| unsafe {
                x86::hash_vaes512(a, b, p, o)
            });
        }
        if has!("aes") && has!("ssse3") {
            // SAFETY: the CPU has AES-NI and SSSE3 (checked).
            return batched::<8>(k1, k2, pts, out, |a, b, p, o| unsafe {
                x86::hash_aesni(a, b, p, o)
            });
        }
    }
    let _ = (k1, k2, pts, out);
    0
}

/// Runs `kernel` on groups of `B` keys in place; the last, short group is
/// copied into zero-padded buffers.
#[cfg(target_arch = "x86_64")]
fn batched<const B: usize>(
    k1: &[Block],
    k2: &[Block],
    pts: &[Block],
    out: &mut [Block],
    kernel: impl Fn(&[Block], &[Block], &[Block], &mut [Block]),
) -> usize {
    let n = k1.len().min(k2.len()).min(pts.len()).min(out.len());
    let full = n / B * B;
    for i in (0..full).step_by(B) {
        kernel(
            &k1[i..i + B],
            &k2[i..i + B],
            &pts[i..i + B],
            &mut out[i..i + B],
        );
    }
    if full < n {
        let pad = |src: &[Block]| {
            let mut a = [Block::ZERO; B];
            a[..n - full].copy_from_slice(&src[full..n]);
            a
        };
        let mut o = [Block::ZERO; B];
        kernel(&pad(k1), &pad(k2), &pad(pts), &mut o);
        out[full..n].copy_from_slice(&o[..n - full]);
    }
    n
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Block;
    use std::arch::x86_64::*;

    // The loads and stores below read or write exactly one (`load1`,
    // `store1`) or four (`load4`, `store4`) consecutive `Block`s: `Block` is
    // `repr(transparent)` over `u128`, so they are 16 or 64 contiguous bytes
    // whose little-endian layout is the lane layout of the vector. The slice
    // length is checked first; short slices read zeros / write nothing.

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
            None => _mm512_setzero_si512(),
        }
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    fn store4(x: __m512i, out: &mut [Block]) {
        if let Some(o) = out.first_chunk_mut::<4>() {
            // SAFETY: four whole `Block`s (64 bytes) are writable; unaligned store.
            unsafe { _mm512_storeu_si512(o.as_mut_ptr().cast(), x) }
        }
    }

    /// Generates a kernel hashing `8·$lanes` keys: eight registers of `$lanes`
    /// 128-bit lanes, key schedules and encryptions in lockstep.
    macro_rules! kernel {
        ($name:ident, $feat:literal, $v:ty, $lanes:literal, $load:ident, $store:ident,
         $enc:ident, $enclast:ident, $shuf:ident, $sll:ident, $xor:ident, $set1:ident,
         $zero:ident) => {
            /// `out[k] = AES-256_{k1[k] ‖ k2[k]}(pts[k])` for `8·$lanes` keys.
            #[target_feature(enable = $feat)]
            pub(super) fn $name(k1s: &[Block], k2s: &[Block], pts: &[Block], out: &mut [Block]) {
                let at =
                    |s: &[Block], i: usize| -> $v { $load(s.get($lanes * i..).unwrap_or(&[])) };
                // `k ⊕ (k≪32) ⊕ (k≪64) ⊕ (k≪96) ⊕ t` within each lane.
                let mix = |k: $v, t: $v| -> $v {
                    let mut s = $sll::<4>(k);
                    let mut k = $xor(k, s);
                    s = $sll::<4>(s);
                    k = $xor(k, s);
                    s = $sll::<4>(s);
                    k = $xor(k, s);
                    $xor(k, t)
                };
                // RotWord of word 3 into every word; word 3 into every word.
                let rot = $set1(0x0c0f_0e0d);
                let bcast = $set1(0x0f0e_0d0c);
                let zero = $zero();
                let mut k1: [$v; 8] = [zero; 8];
                let mut k2: [$v; 8] = [zero; 8];
                let mut st: [$v; 8] = [zero; 8];
                for i in 0..8 {
                    k1[i] = at(k1s, i);
                    k2[i] = at(k2s, i);
                    st[i] = $enc($xor(at(pts, i), k1[i]), k2[i]);
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
                    $store(*s, out.get_mut($lanes * i..).unwrap_or(&mut []));
                }
            }
        };
    }

    kernel!(
        hash_aesni,
        "aes,ssse3",
        __m128i,
        1,
        load1,
        store1,
        _mm_aesenc_si128,
        _mm_aesenclast_si128,
        _mm_shuffle_epi8,
        _mm_slli_si128,
        _mm_xor_si128,
        _mm_set1_epi32,
        _mm_setzero_si128
    );
    kernel!(
        hash_vaes512,
        "vaes,avx512f,avx512bw",
        __m512i,
        4,
        load4,
        store4,
        _mm512_aesenc_epi128,
        _mm512_aesenclast_epi128,
        _mm512_shuffle_epi8,
        _mm512_bslli_epi128,
        _mm512_xor_si512,
        _mm512_set1_epi32,
        _mm512_setzero_si512
    );

    #[cfg(test)]
    pub(super) type Kernel = fn(&[Block], &[Block], &[Block], &mut [Block]);

    #[cfg(test)]
    pub(super) fn kernels_for_test() -> Vec<(usize, Kernel)> {
        use std::arch::is_x86_feature_detected as has;
        let mut v: Vec<(usize, Kernel)> = Vec::new();
        if has!("aes") && has!("ssse3") {
            // SAFETY: the CPU has AES-NI and SSSE3 (checked).
            v.push((8, |a, b, p, o| unsafe { hash_aesni(a, b, p, o) }));
        }
        if has!("vaes") && has!("avx512f") && has!("avx512bw") {
            // SAFETY: the CPU has VAES, AVX-512F and AVX-512BW (checked).
            v.push((32, |a, b, p, o| unsafe { hash_vaes512(a, b, p, o) }));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::Prg;
    use aes::Aes256;
    use aes::cipher::array::Array;
    use aes::cipher::{BlockCipherEncrypt, KeyInit};

    fn reference(k1: Block, k2: Block, pt: Block) -> Block {
        let mut kb = [0u8; 32];
        kb[..16].copy_from_slice(&k1.to_bytes());
        kb[16..].copy_from_slice(&k2.to_bytes());
        let c = Aes256::new(&Array::from(kb));
        let mut b = Array::from(pt.to_bytes());
        c.encrypt_block(&mut b);
        Block::from_bytes(b.into())
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn every_kernel_matches_aes_crate() {
        let mut g = Prg::new(Block(5));
        for (width, kernel) in x86::kernels_for_test() {
            for _ in 0..20 {
                let mut k1 = vec![Block::ZERO; width];
                let mut k2 = vec![Block::ZERO; width];
                let mut p = vec![Block::ZERO; width];
                g.fill_blocks(&mut k1);
                g.fill_blocks(&mut k2);
                g.fill_blocks(&mut p);
                let mut out = vec![Block::ZERO; width];
                kernel(&k1, &k2, &p, &mut out);
                for i in 0..width {
                    assert_eq!(
                        out[i],
                        reference(k1[i], k2[i], p[i]),
                        "width {width}, key {i}"
                    );
                }
            }
        }
    }

    #[test]
    fn dispatch_matches_aes_crate_on_odd_lengths() {
        let mut g = Prg::new(Block(6));
        for n in [0usize, 1, 7, 8, 9, 31, 33, 100] {
            let (mut k1, mut k2) = (vec![Block::ZERO; n], vec![Block::ZERO; n]);
            g.fill_blocks(&mut k1);
            g.fill_blocks(&mut k2);
            let pts: Vec<Block> = (0..n).map(|k| Block(1000 + k as u128)).collect();
            let mut out = vec![Block::ZERO; n];
            let done = hash_prefix(&k1, &k2, &pts, &mut out);
            assert!(done == n || done == 0);
            for i in 0..done {
                assert_eq!(out[i], reference(k1[i], k2[i], pts[i]));
            }
        }
    }
}
