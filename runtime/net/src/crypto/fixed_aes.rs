//! AES-128 under one key, its round keys expanded once and held in vector
//! registers: the permutation of the fixed-key hashes ([`super::Tccr`],
//! [`super::Mmo`]) and of the LPN code's public matrix.
//!
//! The `aes` crate broadcasts its round keys into registers on every call
//! and encrypts a call's last blocks one at a time; the silent engine hashes
//! in calls of 1 to 64 blocks (a `(N 1)`-OT hashes `N` pads), where that
//! overhead outweighs the encryption. Here [`FixedAes::encrypt_blocks`] (and
//! the fused Matyas–Meyer–Oseas [`FixedAes::mmo_blocks`]) run one of three
//! backends, chosen at construction:
//! - VAES with AVX-512: 32 blocks per step (eight 512-bit registers in
//!   lockstep), the tail by masked 4-block loads and stores;
//! - AES-NI: 8 blocks per step, the tail one block at a time;
//! - otherwise the `aes` crate.
//!
//! This module holds `unsafe` code: the calls into the kernels after feature
//! detection and their vector loads and stores of `Block` slices (in
//! bounds by construction). Every backend is tested against the `aes` crate.

use aes::Aes128;
use aes::cipher::array::Array;
use aes::cipher::{BlockCipherEncrypt, KeyInit};

use super::{Block, as_aes_blocks_mut};

/// The kernel a [`FixedAes`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Backend {
    Vaes512,
    AesNi,
    Portable,
}

impl Backend {
    /// The widest kernel this CPU runs.
    fn detect() -> Backend {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("aes") && has!("sse2") {
                if has!("vaes") && has!("avx512f") {
                    return Backend::Vaes512;
                }
                return Backend::AesNi;
            }
        }
        Backend::Portable
    }
}

/// AES-128 encryption under one key (see the [module documentation](self)).
#[derive(Clone)]
pub struct FixedAes {
    /// The eleven round keys (only with an AES-NI backend).
    rk: [Block; 11],
    /// The `aes` crate's cipher (the portable backend, and the reference).
    aes: Aes128,
    backend: Backend,
}

impl FixedAes {
    /// The cipher keyed by `key` (its little-endian bytes), on the widest
    /// backend of this CPU. Cost: one key expansion.
    pub fn new(key: Block) -> FixedAes {
        FixedAes::with_backend(key, Backend::detect())
    }

    fn with_backend(key: Block, backend: Backend) -> FixedAes {
        let rk = match backend {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: an AES-NI backend is only detected (or chosen by the
            // tests) on a CPU with AES-NI and SSE2.
            Backend::Vaes512 | Backend::AesNi => unsafe { x86::expand_key(key) },
            _ => [Block::ZERO; 11],
        };
        FixedAes {
            rk,
            aes: Aes128::new(&Array::from(key.to_bytes())),
            backend,
        }
    }

    /// In place, `x[i] ← AES_key(x[i])`. Cost: one AES block per block.
    pub fn encrypt_blocks(&self, x: &mut [Block]) {
        self.run::<false>(x);
    }

    /// In place, `x[i] ← AES_key(x[i]) ⊕ x[i]` (Matyas–Meyer–Oseas), without
    /// a copy of the inputs. Cost: one AES block per block.
    pub fn mmo_blocks(&self, x: &mut [Block]) {
        self.run::<true>(x);
    }

    /// `x[i] ← AES_key(x[i]) ⊕ (MMO ? x[i] : 0)` on the backend.
    fn run<const MMO: bool>(&self, x: &mut [Block]) {
        match self.backend {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the backend was detected on this CPU (VAES, AVX-512F).
            Backend::Vaes512 => unsafe { x86::encrypt_vaes512::<MMO>(&self.rk, x) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the backend was detected on this CPU (AES-NI, SSE2).
            Backend::AesNi => unsafe { x86::encrypt_aesni::<MMO>(&self.rk, x) },
            _ => {
                for chunk in x.chunks_mut(PORTABLE_STEP) {
                    let mut enc = [Block::ZERO; PORTABLE_STEP];
                    let enc = &mut enc[..chunk.len()];
                    enc.copy_from_slice(chunk);
                    self.aes.encrypt_blocks(as_aes_blocks_mut(enc));
                    for (c, e) in chunk.iter_mut().zip(enc.iter()) {
                        *c = if MMO { *c ^ *e } else { *e };
                    }
                }
            }
        }
    }
}

/// Blocks per call of the `aes` crate in the portable backend (in L1).
const PORTABLE_STEP: usize = 256;

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Block;
    use std::arch::x86_64::*;

    /// The ten rounds of AES-128 on the registers of the array `x`, in
    /// lockstep (round by round across the registers, so the AES unit
    /// pipelines), under the round keys `k` of the kernel's register width,
    /// with its intrinsics `xor`, `enc` and `last`.
    macro_rules! lockstep {
        ($x:expr, $k:expr, $xor:ident, $enc:ident, $last:ident) => {{
            let mut s = $x.map(|v| $xor(v, $k[0]));
            for key in &$k[1..10] {
                for v in &mut s {
                    *v = $enc(*v, *key);
                }
            }
            s.map(|v| $last(v, $k[10]))
        }};
    }

    // `Block` is `repr(transparent)` over `u128`: a block is 16 contiguous
    // bytes whose little-endian layout is the lane layout of the vector, so
    // `p.add(i)` of a `*const __m128i` (`__m512i`) at a block is block `i`
    // (blocks `4i..4i + 4`).

    /// One step of the AES-128 key schedule (FIPS-197 §5.2 with
    /// `aeskeygenassist`, Gueron's white paper, Fig. 20).
    #[target_feature(enable = "aes,sse2")]
    fn next_key<const RCON: i32>(k: __m128i) -> __m128i {
        let t = _mm_shuffle_epi32::<0xff>(_mm_aeskeygenassist_si128::<RCON>(k));
        let k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
        let k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
        let k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
        _mm_xor_si128(k, t)
    }

    /// The eleven round keys of `key`.
    #[target_feature(enable = "aes,sse2")]
    pub(super) fn expand_key(key: Block) -> [Block; 11] {
        let mut k = [_mm_setzero_si128(); 11];
        // SAFETY: `key` is one readable block (16 bytes); unaligned load.
        k[0] = unsafe { _mm_loadu_si128(std::ptr::from_ref(&key).cast()) };
        k[1] = next_key::<0x01>(k[0]);
        k[2] = next_key::<0x02>(k[1]);
        k[3] = next_key::<0x04>(k[2]);
        k[4] = next_key::<0x08>(k[3]);
        k[5] = next_key::<0x10>(k[4]);
        k[6] = next_key::<0x20>(k[5]);
        k[7] = next_key::<0x40>(k[6]);
        k[8] = next_key::<0x80>(k[7]);
        k[9] = next_key::<0x1b>(k[8]);
        k[10] = next_key::<0x36>(k[9]);
        let mut out = [Block::ZERO; 11];
        for (o, r) in out.iter_mut().zip(k) {
            // SAFETY: `o` is one writable block (16 bytes); unaligned store.
            unsafe { _mm_storeu_si128(std::ptr::from_mut(o).cast(), r) };
        }
        out
    }

    /// `x[i] ← AES(x[i]) ⊕ (MMO ? x[i] : 0)` with AES-NI, eight blocks in
    /// lockstep.
    #[target_feature(enable = "aes,sse2")]
    pub(super) fn encrypt_aesni<const MMO: bool>(rk: &[Block; 11], x: &mut [Block]) {
        let out = |v: __m128i, x: __m128i| if MMO { _mm_xor_si128(v, x) } else { v };
        // SAFETY: each round key is one readable block; unaligned loads.
        let k: [__m128i; 11] =
            std::array::from_fn(|r| unsafe { _mm_loadu_si128(std::ptr::from_ref(&rk[r]).cast()) });
        let mut chunks = x.chunks_exact_mut(8);
        for c in &mut chunks {
            let p: *mut __m128i = c.as_mut_ptr().cast();
            // SAFETY: `c` is eight writable blocks; unaligned loads/stores.
            unsafe {
                let x: [__m128i; 8] = std::array::from_fn(|i| _mm_loadu_si128(p.add(i)));
                let y = lockstep!(x, k, _mm_xor_si128, _mm_aesenc_si128, _mm_aesenclast_si128);
                for (i, (v, x)) in y.into_iter().zip(x).enumerate() {
                    _mm_storeu_si128(p.add(i), out(v, x));
                }
            }
        }
        for b in chunks.into_remainder() {
            let p: *mut __m128i = std::ptr::from_mut(b).cast();
            // SAFETY: `b` is one writable block; unaligned load and store.
            unsafe {
                let x = _mm_loadu_si128(p);
                let [v] = lockstep!(
                    [x],
                    k,
                    _mm_xor_si128,
                    _mm_aesenc_si128,
                    _mm_aesenclast_si128
                );
                _mm_storeu_si128(p, out(v, x));
            }
        }
    }

    /// `x[i] ← AES(x[i]) ⊕ (MMO ? x[i] : 0)` with VAES-512, 32 blocks
    /// (eight registers) in lockstep; the last up to 31 blocks by masked
    /// loads and stores of four.
    #[target_feature(enable = "vaes,avx512f")]
    pub(super) fn encrypt_vaes512<const MMO: bool>(rk: &[Block; 11], x: &mut [Block]) {
        let out = |v: __m512i, x: __m512i| if MMO { _mm512_xor_si512(v, x) } else { v };
        // SAFETY: each round key is one readable block; unaligned loads.
        let k: [__m512i; 11] = std::array::from_fn(|r| {
            _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(std::ptr::from_ref(&rk[r]).cast()) })
        });
        let mut chunks = x.chunks_exact_mut(32);
        for c in &mut chunks {
            let p: *mut __m512i = c.as_mut_ptr().cast();
            // SAFETY: `c` is 32 writable blocks (eight times 64 bytes);
            // unaligned loads and stores.
            unsafe {
                let x: [__m512i; 8] = std::array::from_fn(|i| _mm512_loadu_si512(p.add(i)));
                let y = lockstep!(
                    x,
                    k,
                    _mm512_xor_si512,
                    _mm512_aesenc_epi128,
                    _mm512_aesenclast_epi128
                );
                for (i, (v, x)) in y.into_iter().zip(x).enumerate() {
                    _mm512_storeu_si512(p.add(i), out(v, x));
                }
            }
        }
        for c in chunks.into_remainder().chunks_mut(4) {
            // Two 64-bit lanes per block present.
            let m: __mmask8 = ((1u16 << (2 * c.len())) - 1) as u8;
            let p: *mut i64 = c.as_mut_ptr().cast();
            // SAFETY: the mask covers exactly the `c.len()` blocks of `c`
            // (masked-off lanes are neither read nor written).
            unsafe {
                let x = _mm512_maskz_loadu_epi64(m, p);
                let [v] = lockstep!(
                    [x],
                    k,
                    _mm512_xor_si512,
                    _mm512_aesenc_epi128,
                    _mm512_aesenclast_epi128
                );
                _mm512_mask_storeu_epi64(p, m, out(v, x));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::Prg;

    /// Every backend this CPU runs, on every length 0..=100 and a long one,
    /// against the `aes` crate block by block.
    #[test]
    fn every_backend_matches_the_aes_crate() {
        let mut backends = vec![Backend::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("aes") && has!("sse2") {
                backends.push(Backend::AesNi);
                if has!("vaes") && has!("avx512f") {
                    backends.push(Backend::Vaes512);
                }
            }
        }
        assert!(backends.contains(&Backend::detect()));
        let mut g = Prg::new(Block(11));
        for backend in backends {
            let key = g.next_block();
            let f = FixedAes::with_backend(key, backend);
            let reference = Aes128::new(&Array::from(key.to_bytes()));
            for len in (0..=100).chain([1000, 1027]) {
                let mut x = vec![Block::ZERO; len + 1];
                g.fill_blocks(&mut x);
                let last = x[len];
                let mut want = x[..len].to_vec();
                reference.encrypt_blocks(as_aes_blocks_mut(&mut want));
                let want_mmo: Vec<Block> = want.iter().zip(&x).map(|(e, x)| *e ^ *x).collect();
                let mut mmo = x.clone();
                f.encrypt_blocks(&mut x[..len]);
                assert_eq!(&x[..len], &want[..], "{backend:?}, {len} blocks");
                assert_eq!(x[len], last, "{backend:?} wrote past {len} blocks");
                f.mmo_blocks(&mut mmo[..len]);
                assert_eq!(&mmo[..len], &want_mmo[..], "{backend:?} MMO, {len} blocks");
                assert_eq!(mmo[len], last, "{backend:?} MMO wrote past {len} blocks");
            }
        }
    }

    #[test]
    fn fips197_known_answer() {
        // FIPS-197 Appendix C.1: key 000102..0f, plaintext 00112233..ff.
        let key: [u8; 16] = std::array::from_fn(|i| i as u8);
        let pt: [u8; 16] = std::array::from_fn(|i| (i as u8) * 0x11);
        let mut x = [Block::from_bytes(pt)];
        FixedAes::new(Block::from_bytes(key)).encrypt_blocks(&mut x);
        let expect = [
            0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30, 0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4,
            0xc5, 0x5a,
        ];
        assert_eq!(x[0].to_bytes(), expect);
    }
}
