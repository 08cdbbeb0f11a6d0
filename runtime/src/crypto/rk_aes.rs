//! Re-keyed AES-256 on eight keys at a time with AES-NI.
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
//! This module holds `unsafe` code: the call into the `aes`/`ssse3` kernel
//! after runtime detection. The kernel is tested against the `aes` crate.

use super::Block;

/// Whether the CPU has what [`hash8`] needs.
pub(crate) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("aes") && std::arch::is_x86_feature_detected!("ssse3")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `AES-256_{keys[k]}(pts[k])` for eight keys; `None` without AES-NI.
pub(crate) fn hash8(keys: &[[Block; 2]; 8], pts: &[u128; 8]) -> Option<[Block; 8]> {
    #[cfg(target_arch = "x86_64")]
    {
        if available() {
            // SAFETY: the CPU supports AES-NI and SSSE3 (checked just above).
            return Some(unsafe { x86::hash8(keys, pts) });
        }
    }
    let _ = (keys, pts);
    None
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Block;
    use std::arch::x86_64::*;

    #[target_feature(enable = "sse2")]
    #[inline]
    fn load(b: Block) -> __m128i {
        _mm_set_epi64x(b.hi() as i64, b.lo() as i64)
    }

    #[target_feature(enable = "sse2")]
    #[inline]
    fn store(x: __m128i) -> Block {
        let lo = _mm_cvtsi128_si64(x) as u64;
        let hi = _mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x)) as u64;
        Block::from_u64s(lo, hi)
    }

    /// `k ⊕ (k≪32) ⊕ (k≪64) ⊕ (k≪96) ⊕ t` (bytes shifted within the block).
    #[target_feature(enable = "sse2")]
    #[inline]
    fn mix(k: __m128i, t: __m128i) -> __m128i {
        let mut s = _mm_slli_si128::<4>(k);
        let mut k = _mm_xor_si128(k, s);
        s = _mm_slli_si128::<4>(s);
        k = _mm_xor_si128(k, s);
        s = _mm_slli_si128::<4>(s);
        k = _mm_xor_si128(k, s);
        _mm_xor_si128(k, t)
    }

    #[target_feature(enable = "aes,ssse3")]
    pub(super) fn hash8(keys: &[[Block; 2]; 8], pts: &[u128; 8]) -> [Block; 8] {
        // RotWord of word 3 into every word; word 3 into every word.
        let rot = _mm_set1_epi32(0x0c0f_0e0d);
        let bcast = _mm_set1_epi32(0x0f0e_0d0c);
        let zero = _mm_setzero_si128();
        let mut k1: [__m128i; 8] = [zero; 8];
        let mut k2: [__m128i; 8] = [zero; 8];
        let mut st: [__m128i; 8] = [zero; 8];
        for i in 0..8 {
            k1[i] = load(keys[i][0]);
            k2[i] = load(keys[i][1]);
            st[i] = _mm_xor_si128(load(Block(pts[i])), k1[i]);
            st[i] = _mm_aesenc_si128(st[i], k2[i]);
        }
        let mut rcon = 1i32;
        for round in 1..=7 {
            let rc = _mm_set1_epi32(rcon);
            for i in 0..8 {
                let t = _mm_aesenclast_si128(_mm_shuffle_epi8(k2[i], rot), rc);
                k1[i] = mix(k1[i], t);
            }
            if round == 7 {
                for i in 0..8 {
                    st[i] = _mm_aesenclast_si128(st[i], k1[i]);
                }
                break;
            }
            for i in 0..8 {
                st[i] = _mm_aesenc_si128(st[i], k1[i]);
                let t = _mm_aesenclast_si128(_mm_shuffle_epi8(k1[i], bcast), zero);
                k2[i] = mix(k2[i], t);
                st[i] = _mm_aesenc_si128(st[i], k2[i]);
            }
            rcon <<= 1;
        }
        let mut out = [Block::ZERO; 8];
        for i in 0..8 {
            out[i] = store(st[i]);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::Prg;
    use aes::Aes256;
    use aes::cipher::array::Array;
    use aes::cipher::{BlockCipherEncrypt, KeyInit};

    #[test]
    fn matches_aes_crate() {
        let mut g = Prg::new(Block(5));
        for _ in 0..50 {
            let keys: [[Block; 2]; 8] = std::array::from_fn(|_| [g.next_block(), g.next_block()]);
            let pts: [u128; 8] = std::array::from_fn(|_| g.next_block().0);
            let Some(got) = hash8(&keys, &pts) else {
                return; // no AES-NI: nothing to compare
            };
            for k in 0..8 {
                let mut kb = [0u8; 32];
                kb[..16].copy_from_slice(&keys[k][0].to_bytes());
                kb[16..].copy_from_slice(&keys[k][1].to_bytes());
                let c = Aes256::new(&Array::from(kb));
                let mut b = Array::from(pts[k].to_le_bytes());
                c.encrypt_block(&mut b);
                assert_eq!(got[k], Block::from_bytes(b.into()));
            }
        }
    }
}
