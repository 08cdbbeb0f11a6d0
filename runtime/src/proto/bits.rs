//! [`Bits`]: a packed vector of bits, the representation of boolean shares.
//!
//! Bit `i` is bit `i % 64` of word `i / 64`. Bits at positions `len..` of the
//! last word are always zero (every operation keeps that invariant), so two
//! equal vectors have equal words and whole-word operations need no masking.

use crate::crypto::Prg;
use crate::pack::{BitReader, BitWriter};

/// A packed bit vector (boolean shares of a batch, one bit per element).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bits {
    words: Vec<u64>,
    len: usize,
}

/// Mask of the valid bits of the last word of a vector of `len` bits.
#[inline]
fn tail_mask(len: usize) -> u64 {
    match len % 64 {
        0 => u64::MAX,
        r => (1u64 << r) - 1,
    }
}

impl Bits {
    /// `len` zero bits.
    pub fn zeros(len: usize) -> Bits {
        Bits {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    /// `len` one bits.
    pub fn ones(len: usize) -> Bits {
        let mut b = Bits {
            words: vec![u64::MAX; len.div_ceil(64)],
            len,
        };
        b.clear_tail();
        b
    }

    /// Bit `i` is `f(i)`.
    pub fn from_fn(len: usize, mut f: impl FnMut(usize) -> bool) -> Bits {
        let mut words = vec![0u64; len.div_ceil(64)];
        for (w, word) in words.iter_mut().enumerate() {
            let base = w * 64;
            let top = (len - base).min(64);
            let mut acc = 0u64;
            for k in 0..top {
                acc |= (f(base + k) as u64) << k;
            }
            *word = acc;
        }
        Bits { words, len }
    }

    /// From booleans.
    pub fn from_bools(b: &[bool]) -> Bits {
        Bits::from_fn(b.len(), |i| b[i])
    }

    /// Bit `k` (0..8) of each byte, i.e. one bit plane of a vector of small
    /// messages. Eight bytes at a time: the masked bits `b_i·2^{8i}` times
    /// `0x0102_0408_1020_4080` land, without carries, at bits `56 + i`.
    pub fn from_bytes_bit(bytes: &[u8], k: u32) -> Bits {
        let mut words = vec![0u64; bytes.len().div_ceil(64)];
        for (w, chunk) in words.iter_mut().zip(bytes.chunks(64)) {
            for (i, c8) in chunk.chunks(8).enumerate() {
                let mut b = [0u8; 8];
                b[..c8.len()].copy_from_slice(c8);
                let x = (u64::from_le_bytes(b) >> (k & 7)) & 0x0101_0101_0101_0101;
                *w |= (x.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * i);
            }
        }
        Bits {
            words,
            len: bytes.len(),
        }
    }

    /// From packed words (bits beyond `len` are cleared). Missing words are zero.
    pub fn from_words(mut words: Vec<u64>, len: usize) -> Bits {
        words.resize(len.div_ceil(64), 0);
        let mut b = Bits { words, len };
        b.clear_tail();
        b
    }

    /// `len` uniformly random bits.
    pub fn random(prg: &mut Prg, len: usize) -> Bits {
        Bits::from_words(prg.u64s(len.div_ceil(64)), len)
    }

    /// The booleans.
    pub fn to_bools(&self) -> Vec<bool> {
        (0..self.len).map(|i| self.get(i)).collect()
    }

    /// Number of bits.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no bits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The packed words (bits beyond `len` are zero).
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Bit `i` (`i < len`).
    #[inline]
    pub fn get(&self, i: usize) -> bool {
        debug_assert!(i < self.len);
        (self.words[i / 64] >> (i % 64)) & 1 == 1
    }

    /// Bit `i` as 0 or 1.
    #[inline]
    pub fn bit(&self, i: usize) -> u64 {
        (self.words[i / 64] >> (i % 64)) & 1
    }

    fn clear_tail(&mut self) {
        if let Some(last) = self.words.last_mut() {
            *last &= tail_mask(self.len);
        }
    }

    /// `self ⊕= other` (equal lengths).
    pub fn xor_assign(&mut self, other: &Bits) {
        debug_assert_eq!(self.len, other.len);
        self.words
            .iter_mut()
            .zip(&other.words)
            .for_each(|(a, b)| *a ^= b);
    }

    /// `self ⊕ other`.
    pub fn xor(&self, other: &Bits) -> Bits {
        let mut r = self.clone();
        r.xor_assign(other);
        r
    }

    /// `self ∧ other`.
    pub fn and(&self, other: &Bits) -> Bits {
        debug_assert_eq!(self.len, other.len);
        Bits {
            words: self
                .words
                .iter()
                .zip(&other.words)
                .map(|(a, b)| a & b)
                .collect(),
            len: self.len,
        }
    }

    /// Flips every bit if `flip` (adds the public constant 1 to a boolean
    /// sharing when done by exactly one party).
    pub fn flip_if(&mut self, flip: bool) {
        if flip {
            self.words.iter_mut().for_each(|w| *w = !*w);
            self.clear_tail();
        }
    }

    /// Bits `start..start + len` as a new vector.
    pub fn slice(&self, start: usize, len: usize) -> Bits {
        debug_assert!(start + len <= self.len);
        let (w0, sh) = (start / 64, start % 64);
        let words = (0..len.div_ceil(64))
            .map(|k| {
                let lo = self.words[w0 + k] >> sh;
                let hi = match (sh, self.words.get(w0 + k + 1)) {
                    (0, _) | (_, None) => 0,
                    (_, Some(&h)) => h << (64 - sh),
                };
                lo | hi
            })
            .collect();
        Bits::from_words(words, len)
    }

    /// Appends `other`.
    pub fn append(&mut self, other: &Bits) {
        if self.len.is_multiple_of(64) {
            self.words.extend_from_slice(&other.words);
        } else {
            let sh = self.len % 64;
            for &w in &other.words {
                if let Some(last) = self.words.last_mut() {
                    *last |= w << sh;
                }
                self.words.push(w >> (64 - sh));
            }
        }
        self.len += other.len;
        self.words.truncate(self.len.div_ceil(64));
        self.clear_tail();
    }

    /// The concatenation of `parts`.
    pub fn concat(parts: &[Bits]) -> Bits {
        let mut r = Bits::zeros(0);
        parts.iter().for_each(|p| r.append(p));
        r
    }

    /// Writes the bits to a packed stream (exactly `len` bits).
    pub(crate) fn write(&self, w: &mut BitWriter) {
        let full = self.len / 64;
        for &word in &self.words[..full] {
            w.push(word, 64);
        }
        if !self.len.is_multiple_of(64) {
            w.push(self.words[full], (self.len % 64) as u32);
        }
    }

    /// Reads `len` bits written by [`Bits::write`].
    pub(crate) fn read(r: &mut BitReader<'_>, len: usize) -> Bits {
        let words = (0..len.div_ceil(64))
            .map(|k| r.read(((len - k * 64).min(64)) as u32))
            .collect();
        Bits { words, len }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::Block;

    fn sample(len: usize, seed: u128) -> Vec<bool> {
        Prg::new(Block(seed)).bools(len)
    }

    #[test]
    fn slice_append_concat_match_bools() {
        for (la, lb) in [(0, 5), (64, 64), (63, 130), (7, 1), (200, 0), (129, 77)] {
            let a = sample(la, 1);
            let b = sample(lb, 2);
            let mut x = Bits::from_bools(&a);
            x.append(&Bits::from_bools(&b));
            let ab: Vec<bool> = a.iter().chain(&b).copied().collect();
            assert_eq!(x, Bits::from_bools(&ab));
            assert_eq!(x.to_bools(), ab);
            for (s, l) in [(0, ab.len()), (ab.len() / 3, ab.len() / 2), (ab.len(), 0)] {
                assert_eq!(x.slice(s, l).to_bools(), ab[s..s + l].to_vec());
            }
            let parts = [Bits::from_bools(&a), Bits::from_bools(&b), x.clone()];
            let cat: Vec<bool> = ab.iter().chain(&ab).copied().collect();
            assert_eq!(Bits::concat(&parts).to_bools(), cat);
        }
    }

    #[test]
    fn logic_and_stream_roundtrip() {
        let (a, b) = (sample(131, 3), sample(131, 4));
        let (x, y) = (Bits::from_bools(&a), Bits::from_bools(&b));
        let want_xor: Vec<bool> = a.iter().zip(&b).map(|(p, q)| p ^ q).collect();
        let want_and: Vec<bool> = a.iter().zip(&b).map(|(p, q)| p & q).collect();
        assert_eq!(x.xor(&y).to_bools(), want_xor);
        assert_eq!(x.and(&y).to_bools(), want_and);
        let mut z = x.clone();
        z.flip_if(true);
        assert_eq!(z, Bits::from_fn(131, |i| !a[i]));
        assert_eq!(Bits::ones(70), Bits::from_fn(70, |_| true));
        let mut w = BitWriter::new();
        w.push(1, 3);
        x.write(&mut w);
        y.write(&mut w);
        let bytes = w.finish();
        assert_eq!(bytes.len(), (3 + 262usize).div_ceil(8));
        let mut r = BitReader::new(&bytes);
        assert_eq!(r.read(3), 1);
        assert_eq!(Bits::read(&mut r, 131), x);
        assert_eq!(Bits::read(&mut r, 131), y);
        assert_eq!(
            Bits::from_bytes_bit(&[1, 2, 3], 1).to_bools(),
            vec![false, true, true]
        );
        let bytes: Vec<u8> = (0..203u32).map(|i| (i * 37 % 256) as u8).collect();
        for k in 0..8 {
            assert_eq!(
                Bits::from_bytes_bit(&bytes, k),
                Bits::from_fn(bytes.len(), |i| (bytes[i] >> k) & 1 == 1)
            );
        }
    }
}
