//! 128-row bit-matrix transpose for OT extension.
//!
//! IKNP produces the extension matrix by columns (one PRG stream per base OT)
//! and consumes it by rows (one 128-bit row per OT). [`transpose128`] turns
//! 128 rows of `cb` bytes into `8·cb` [`Block`]s.
//!
//! On x86-64 the work is done in tiles of 16 rows × 16 bytes (SSE2, always
//! available on x86-64) or 16 rows × 32 bytes (AVX2, detected at run time):
//! a 16×16 byte transpose with `unpack` instructions puts byte `b` of the 16
//! rows into one register, and eight `movemask`/`add` steps then peel off the
//! bits of that byte, each `movemask` giving 16 bits of one output row (the
//! technique of EMP's `sse_trans`, applied to register tiles instead of
//! gathered bytes). Columns left over (fewer than a tile) and other
//! architectures use the portable bit loop.
//!
//! This module holds `unsafe` code: unaligned vector loads from slices whose
//! bounds are checked just before, and the call into the AVX2 kernel after
//! runtime detection. Both kernels are tested against [`transpose128_naive`].

use sci_net::crypto::Block;

/// Transposes 128 rows of `cb = input.len() / 128` bytes each (row `i` is
/// `input[i·cb..(i+1)·cb]`) into `out[..8·cb]`: bit `i` of `out[j]` is bit
/// `j % 8` of byte `j / 8` of row `i`. Uses at most `out.len() / 8` bytes per
/// row.
pub fn transpose128(input: &[u8], out: &mut [Block]) {
    let cb = (input.len() / 128).min(out.len() / 8);
    let done = tiles(input, cb, out);
    portable(input, cb, done, out);
}

/// The plain bit-by-bit transpose (reference for tests, and the fallback).
pub fn transpose128_naive(input: &[u8], out: &mut [Block]) {
    let cb = (input.len() / 128).min(out.len() / 8);
    portable(input, cb, 0, out);
}

/// Transposes byte columns `from..cb` bit by bit.
fn portable(input: &[u8], cb: usize, from: usize, out: &mut [Block]) {
    for byte in from..cb {
        let mut rows = [0u128; 8];
        for i in 0..128 {
            let v = input[i * cb + byte];
            for (k, r) in rows.iter_mut().enumerate() {
                *r |= (((v >> k) & 1) as u128) << i;
            }
        }
        for (k, r) in rows.iter().enumerate() {
            out[8 * byte + k] = Block(*r);
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn tiles(_input: &[u8], _cb: usize, _out: &mut [Block]) -> usize {
    0
}

/// Runs the widest available SIMD kernel; returns the bytes per row done.
#[cfg(target_arch = "x86_64")]
fn tiles(input: &[u8], cb: usize, out: &mut [Block]) -> usize {
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above).
        unsafe { x86::tiles_avx2(input, cb, out) }
    } else {
        x86::tiles_sse2(input, cb, out)
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Block;
    use std::arch::x86_64::*;

    /// Generates a tile kernel for one vector type: `$bytes` bytes of 16 rows
    /// per register, `$lanes` = `$bytes / 16` 128-bit lanes.
    macro_rules! kernel {
        ($name:ident, $feat:literal, $v:ty, $bytes:literal, $lanes:literal,
         $load:ident, $u8:ident, $u16:ident, $u32:ident, $u64:ident, $h8:ident, $h16:ident,
         $h32:ident, $h64:ident, $add:ident, $mm:ident, $zero:ident) => {
            #[target_feature(enable = $feat)]
            pub(super) fn $name(input: &[u8], cb: usize, out: &mut [Block]) -> usize {
                let ntiles = cb / $bytes;
                // tmp[j][g]: 16 bits (rows 16g..16g+16) of output row j of the tile.
                let mut tmp = [[0u16; 8]; 8 * $bytes];
                for t in 0..ntiles {
                    let c = t * $bytes;
                    for g in 0..8 {
                        let mut x: [$v; 16] = [$zero(); 16];
                        for (i, xi) in x.iter_mut().enumerate() {
                            let start = (16 * g + i) * cb + c;
                            let row = &input[start..start + $bytes];
                            // SAFETY: `row` is exactly `$bytes` bytes long;
                            // the load is unaligned.
                            *xi = unsafe { $load(row.as_ptr().cast()) };
                        }
                        // 16×16 byte transpose inside each 128-bit lane.
                        let mut a = x;
                        for k in 0..8 {
                            a[k] = $u8(x[2 * k], x[2 * k + 1]);
                            a[k + 8] = $h8(x[2 * k], x[2 * k + 1]);
                        }
                        // a[k]: cols 0..8 of rows 2k,2k+1; a[k+8]: cols 8..16.
                        let mut b = a;
                        for r in 0..4 {
                            for h in 0..2 {
                                let (p, q) = (a[8 * h + 2 * r], a[8 * h + 2 * r + 1]);
                                b[4 * r + 2 * h] = $u16(p, q);
                                b[4 * r + 2 * h + 1] = $h16(p, q);
                            }
                        }
                        // b[4r + m]: cols 4m..4m+4 of rows 4r..4r+4.
                        let mut d = b;
                        for r in 0..2 {
                            for m in 0..4 {
                                let (p, q) = (b[8 * r + m], b[8 * r + 4 + m]);
                                d[8 * r + 2 * m] = $u32(p, q);
                                d[8 * r + 2 * m + 1] = $h32(p, q);
                            }
                        }
                        // d[8r + e]: cols 2e, 2e+1 of rows 8r..8r+8.
                        let mut w = d;
                        for e in 0..8 {
                            w[2 * e] = $u64(d[e], d[8 + e]);
                            w[2 * e + 1] = $h64(d[e], d[8 + e]);
                        }
                        // w[col]: byte `col` of rows 0..16 (per lane).
                        for (col, mut v) in w.into_iter().enumerate() {
                            for k in (0..8).rev() {
                                let m = $mm(v) as u32;
                                for l in 0..$lanes {
                                    tmp[8 * (16 * l + col) + k][g] = (m >> (16 * l)) as u16;
                                }
                                v = $add(v, v);
                            }
                        }
                    }
                    for (j, t) in tmp.iter().enumerate() {
                        let mut r = 0u128;
                        for (g, &h) in t.iter().enumerate() {
                            r |= (h as u128) << (16 * g);
                        }
                        out[8 * c + j] = Block(r);
                    }
                }
                ntiles * $bytes
            }
        };
    }

    kernel!(
        tiles_sse2_impl,
        "sse2",
        __m128i,
        16,
        1,
        _mm_loadu_si128,
        _mm_unpacklo_epi8,
        _mm_unpacklo_epi16,
        _mm_unpacklo_epi32,
        _mm_unpacklo_epi64,
        _mm_unpackhi_epi8,
        _mm_unpackhi_epi16,
        _mm_unpackhi_epi32,
        _mm_unpackhi_epi64,
        _mm_add_epi8,
        _mm_movemask_epi8,
        _mm_setzero_si128
    );
    kernel!(
        tiles_avx2,
        "avx2",
        __m256i,
        32,
        2,
        _mm256_loadu_si256,
        _mm256_unpacklo_epi8,
        _mm256_unpacklo_epi16,
        _mm256_unpacklo_epi32,
        _mm256_unpacklo_epi64,
        _mm256_unpackhi_epi8,
        _mm256_unpackhi_epi16,
        _mm256_unpackhi_epi32,
        _mm256_unpackhi_epi64,
        _mm256_add_epi8,
        _mm256_movemask_epi8,
        _mm256_setzero_si256
    );

    /// SSE2 kernel (SSE2 is part of the x86-64 baseline).
    pub(super) fn tiles_sse2(input: &[u8], cb: usize, out: &mut [Block]) -> usize {
        // SAFETY: SSE2 is part of the x86-64 baseline, every x86-64 CPU has it.
        unsafe { tiles_sse2_impl(input, cb, out) }
    }

    #[cfg(test)]
    pub(super) fn tiles_avx2_checked(input: &[u8], cb: usize, out: &mut [Block]) -> Option<usize> {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            Some(unsafe { tiles_avx2(input, cb, out) })
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sci_net::crypto::Prg;

    fn random_input(cb: usize) -> Vec<u8> {
        let mut v = vec![0u8; 128 * cb];
        Prg::new(Block(cb as u128 + 99)).fill_bytes(&mut v);
        v
    }

    #[test]
    fn all_kernels_match_naive() {
        for cb in [0usize, 1, 15, 16, 17, 32, 47, 64, 100, 2048 + 5] {
            let input = random_input(cb);
            let mut expect = vec![Block::ZERO; 8 * cb];
            transpose128_naive(&input, &mut expect);
            let mut got = vec![Block::ZERO; 8 * cb];
            transpose128(&input, &mut got);
            assert_eq!(got, expect, "dispatch, cb = {cb}");
            #[cfg(target_arch = "x86_64")]
            {
                let mut g = vec![Block::ZERO; 8 * cb];
                let done = x86::tiles_sse2(&input, cb, &mut g);
                portable(&input, cb, done, &mut g);
                assert_eq!(g, expect, "sse2, cb = {cb}");
                let mut g = vec![Block::ZERO; 8 * cb];
                if let Some(done) = x86::tiles_avx2_checked(&input, cb, &mut g) {
                    portable(&input, cb, done, &mut g);
                    assert_eq!(g, expect, "avx2, cb = {cb}");
                }
            }
        }
    }

    #[test]
    fn naive_definition() {
        let mut input = vec![0u8; 128 * 2];
        // Row 5, bit 9 (byte 1, bit 1); row 127, bit 0.
        input[5 * 2 + 1] = 0b10;
        input[127 * 2] = 1;
        let mut out = vec![Block::ZERO; 16];
        transpose128_naive(&input, &mut out);
        assert_eq!(out[9], Block(1 << 5));
        assert_eq!(out[0], Block(1 << 127));
        assert!(
            out.iter()
                .enumerate()
                .all(|(j, b)| j == 0 || j == 9 || *b == Block::ZERO)
        );
    }
}
