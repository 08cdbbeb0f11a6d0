//! AES-128 pseudo-random generator in counter mode.
//!
//! `Prg::new(seed)` keys AES-128 with the seed and outputs
//! `AES_seed(0) ‖ AES_seed(1) ‖ …` (the counter as a little-endian block).
//! Output is produced with `encrypt_blocks` on whole buffers. The counter
//! never goes back, so two calls never return overlapping stream positions:
//! the OT extensions rely on this to consume fresh columns on every batch.
//!
//! # Where protocol randomness comes from
//! No protocol seeds itself: every run draws from a `Prg` it is handed (the
//! lane's, in `sci_runtime::proto::Ctx::prg` and inside `sci_runtime::ot::OtPack`),
//! as swanky's OT traits take an `rng`. In production the root of each
//! session is one seed from the operating system ([`Prg::from_os`], used by
//! `sci_runtime::ot::Session::new`); lanes and OT packs get children derived
//! from it with domain separation ([`Prg::derive`]), and a protocol that
//! needs a generator of its own takes a [`Prg::fork`] of the lane's, keyed
//! by fresh output of it, so no stream is ever used twice. Tests seed the
//! root from a printed seed instead (`sci_runtime::ot::Session::with_seed`), so
//! that a failing run can be replayed bit for bit.

use aes::Aes128;
use aes::cipher::array::Array;
use aes::cipher::{BlockCipherEncrypt, KeyInit};

use sha2::{Digest, Sha256};

use super::{Block, RandomnessError, as_aes_blocks_mut, random_block};

/// AES-128 in counter mode, keyed by a 128-bit seed.
#[derive(Clone)]
pub struct Prg {
    aes: Aes128,
    ctr: u128,
}

impl std::fmt::Debug for Prg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prg")
            .field("ctr", &self.ctr)
            .finish_non_exhaustive()
    }
}

impl Prg {
    /// The generator with key `seed`, at stream position 0.
    pub fn new(seed: Block) -> Prg {
        Prg {
            aes: Aes128::new(&Array::from(seed.to_bytes())),
            ctr: 0,
        }
    }

    /// A generator seeded from the operating system (the root of a
    /// production session's randomness).
    pub fn from_os() -> Result<Prg, RandomnessError> {
        Ok(Prg::new(random_block()?))
    }

    /// The generator for purpose `(label, index)` under `seed`: keyed by the
    /// first 128 bits of `SHA-256("sci/prg/derive" ‖ |label| ‖ label ‖ index
    /// ‖ seed)`, so distinct purposes get independent streams of one seed.
    /// One hash and one AES key expansion.
    pub fn derive(seed: Block, label: &str, index: u64) -> Prg {
        let d = Sha256::new()
            .chain_update(b"sci/prg/derive")
            .chain_update((label.len() as u64).to_le_bytes())
            .chain_update(label.as_bytes())
            .chain_update(index.to_le_bytes())
            .chain_update(seed.to_bytes())
            .finalize();
        let mut k = [0u8; 16];
        k.copy_from_slice(&d[..16]);
        Prg::new(Block::from_bytes(k))
    }

    /// A child generator keyed by the next output block of this one: the
    /// child's stream is independent of everything this generator outputs
    /// before or after (the key is consumed, never output elsewhere). One AES
    /// block and one key expansion.
    pub fn fork(&mut self) -> Prg {
        Prg::new(self.next_block())
    }

    /// Fills `out` with the next `out.len()` output blocks.
    pub fn fill_blocks(&mut self, out: &mut [Block]) {
        for (i, b) in out.iter_mut().enumerate() {
            *b = Block(self.ctr.wrapping_add(i as u128));
        }
        self.ctr = self.ctr.wrapping_add(out.len() as u128);
        self.aes.encrypt_blocks(as_aes_blocks_mut(out));
    }

    /// Fills `out` with the next `⌈out.len()/16⌉` output blocks (the unused
    /// tail of the last block is discarded).
    pub fn fill_bytes(&mut self, out: &mut [u8]) {
        let (chunks, rest) = out.as_chunks_mut::<16>();
        for (i, c) in chunks.iter_mut().enumerate() {
            *c = self.ctr.wrapping_add(i as u128).to_le_bytes();
        }
        self.ctr = self.ctr.wrapping_add(chunks.len() as u128);
        self.aes
            .encrypt_blocks(Array::cast_slice_from_core_mut(chunks));
        if !rest.is_empty() {
            let b = self.next_block().to_bytes();
            rest.copy_from_slice(&b[..rest.len()]);
        }
    }

    /// The next output block.
    pub fn next_block(&mut self) -> Block {
        let mut b = [Block::ZERO];
        self.fill_blocks(&mut b);
        b[0]
    }

    /// `n` uniformly random 64-bit words.
    pub fn u64s(&mut self, n: usize) -> Vec<u64> {
        let mut v = vec![0u64; n];
        self.fill_u64s(&mut v);
        v
    }

    /// Fills `out` with uniformly random 64-bit words (two per block).
    pub fn fill_u64s(&mut self, out: &mut [u64]) {
        let mut blocks = [Block::ZERO; 32];
        for part in out.chunks_mut(64) {
            let blocks = &mut blocks[..part.len().div_ceil(2)];
            self.fill_blocks(blocks);
            for (pair, b) in part.chunks_mut(2).zip(blocks.iter()) {
                pair[0] = b.lo();
                if let Some(h) = pair.get_mut(1) {
                    *h = b.hi();
                }
            }
        }
    }

    /// `n` uniformly random elements of `Z_{2^bits}` (`bits` in 1..=64).
    pub fn ring_elems(&mut self, n: usize, bits: u32) -> Vec<u64> {
        let m = crate::pack::mask(bits);
        let mut v = self.u64s(n);
        v.iter_mut().for_each(|x| *x &= m);
        v
    }

    /// `n` uniformly random bits.
    pub fn bools(&mut self, n: usize) -> Vec<bool> {
        let mut bytes = vec![0u8; n.div_ceil(8)];
        self.fill_bytes(&mut bytes);
        crate::pack::unpack_bits(&bytes, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aes128_known_answer() {
        // FIPS-197 Appendix C.1: key 000102..0f, plaintext 00112233..ff.
        let key: [u8; 16] = std::array::from_fn(|i| i as u8);
        let pt: [u8; 16] = std::array::from_fn(|i| (i as u8) * 0x11);
        let mut p = Prg::new(Block::from_bytes(key));
        p.ctr = u128::from_le_bytes(pt);
        let ct = p.next_block().to_bytes();
        let expect = [
            0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30, 0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4,
            0xc5, 0x5a,
        ];
        assert_eq!(ct, expect);
    }

    #[test]
    fn bytes_and_blocks_agree() {
        let seed = Block(0x0123_4567_89ab_cdef_0011_2233_4455_6677);
        let mut a = Prg::new(seed);
        let mut b = Prg::new(seed);
        let mut bytes = vec![0u8; 16 * 5 + 3];
        a.fill_bytes(&mut bytes);
        let mut blocks = vec![Block::ZERO; 6];
        b.fill_blocks(&mut blocks);
        for (k, byte) in bytes.iter().enumerate() {
            assert_eq!(*byte, blocks[k / 16].to_bytes()[k % 16]);
        }
        // Streams continue at the same position.
        assert_eq!(a.next_block(), b.next_block());
    }

    #[test]
    fn derived_and_forked_streams_are_distinct_and_reproducible() {
        let seed = Block(42);
        let first = |mut p: Prg| p.next_block();
        let lane0 = first(Prg::derive(seed, "lane", 0));
        assert_eq!(lane0, first(Prg::derive(seed, "lane", 0)));
        let others = [
            first(Prg::derive(seed, "lane", 1)),
            first(Prg::derive(seed, "ot", 0)),
            first(Prg::derive(Block(43), "lane", 0)),
            first(Prg::new(seed)),
        ];
        assert!(others.iter().all(|&b| b != lane0));
        // Forks of one parent differ from each other and from the parent's
        // later output, and replay alike from the same parent state.
        let (mut p, mut q) = (Prg::new(seed), Prg::new(seed));
        let (c1, c2) = (p.fork().next_block(), p.fork().next_block());
        assert_ne!(c1, c2);
        assert_ne!(c1, p.next_block());
        assert_eq!(c1, q.fork().next_block());
    }
}
