//! Exact bit packing of ring elements.
//!
//! Values are written least-significant bit first into a little-endian bit
//! stream: value `k` of a sequence of `w`-bit values occupies stream bits
//! `k·w .. (k+1)·w`, and stream bit `p` is bit `p % 8` of byte `p / 8`. A
//! stream of `B` bits takes `⌈B/8⌉` bytes; the unused high bits of the last
//! byte are zero. Values of different widths can be mixed ([`BitWriter`],
//! [`BitReader`]); the widths are never sent, both sides know them.

/// `2^bits - 1` for `bits` in 0..=64.
#[inline]
pub fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// `2^bits - 1` for `bits` in 0..=128.
#[inline]
pub fn mask128(bits: u32) -> u128 {
    if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

/// Bytes taken by `n` values of `bits` bits: `⌈n·bits/8⌉`.
pub fn packed_len(n: usize, bits: u32) -> usize {
    (n as u64 * bits as u64).div_ceil(8) as usize
}

/// Appends values of up to 64 bits (or 128 with [`BitWriter::push_u128`]) to
/// a bit stream.
///
/// A push is branch-free (no misprediction whatever the widths): the pending
/// word is stored at the end of the complete bytes on every push, into
/// scratch space kept past them, and the write position advances by a
/// whole word when it is full.
#[derive(Debug, Default, Clone)]
pub struct BitWriter {
    /// `bytes[..done]` are complete; `bytes[done..]` is scratch space (at
    /// least 8 bytes once something is pushed), whose first `nacc` bits
    /// are the pending ones once pushed.
    bytes: Vec<u8>,
    done: usize,
    /// The pending bits (`nacc` < 64 of them).
    acc: u64,
    nacc: u32,
    bit_len: u64,
}

impl BitWriter {
    /// An empty stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty stream with room for `bits` bits.
    pub fn with_capacity_bits(bits: u64) -> Self {
        Self::reuse(Vec::new(), bits)
    }

    /// An empty stream with room for `bits` bits that writes into `buf`
    /// (its contents are overwritten): its allocation is reused, so a
    /// caller that hands back the finished bytes of one message for the
    /// next avoids fresh pages (and their zeroing) for every message.
    pub fn reuse(mut buf: Vec<u8>, bits: u64) -> Self {
        let want = bits.div_ceil(8) as usize + 8;
        if buf.len() < want {
            buf.resize(want, 0);
        }
        BitWriter {
            bytes: buf,
            ..Self::default()
        }
    }

    /// Makes room in `bytes` for the pending word at `done` (amortised: the
    /// scratch space at least doubles). Apart from the writer so that only
    /// the buffer's address is taken, never the accumulator's.
    #[cold]
    fn grow(bytes: &mut Vec<u8>, done: usize) {
        let len = (done + 8).max(2 * bytes.len()).max(64);
        bytes.resize(len, 0);
    }

    /// Appends the low `w` bits of `v` (`w` in 0..=64).
    #[inline]
    pub fn push(&mut self, v: u64, w: u32) {
        debug_assert!(w <= 64);
        let v = v & mask(w);
        let lo = self.acc | (v << self.nacc);
        // The bits of `v` that did not fit: `v >> (64 − nacc)`, 0 if none.
        let hi = (v >> 1) >> (63 - self.nacc);
        if self.bytes.len() < self.done + 8 {
            Self::grow(&mut self.bytes, self.done);
        }
        self.bytes[self.done..self.done + 8].copy_from_slice(&lo.to_le_bytes());
        let total = self.nacc + w;
        let full = total >= 64;
        self.done += 8 * usize::from(full);
        self.acc = if full { hi } else { lo };
        self.nacc = total & 63;
        self.bit_len += w as u64;
    }

    /// Appends the low `w` bits of `v` (`w` in 0..=128).
    #[inline]
    pub fn push_u128(&mut self, v: u128, w: u32) {
        if w <= 64 {
            self.push(v as u64, w);
        } else {
            self.push(v as u64, 64);
            self.push((v >> 64) as u64, w - 64);
        }
    }

    /// Appends `vals`, each at `w` bits (`w` in 1..=64, values reduced mod
    /// `2^w`): the same stream as one [`BitWriter::push`] per value, but
    /// with up to four values joined per 64-bit access (`⌊64/w⌋` of them)
    /// and the writer's state kept in registers. Cost: about one push per
    /// `min(4, ⌊64/w⌋)` values.
    #[inline]
    pub fn push_fields(&mut self, vals: &[u64], w: u32) {
        match 64 / w.clamp(1, 64) {
            1 => self.push_joined::<1>(vals, w),
            2 | 3 => self.push_joined::<2>(vals, w),
            _ => self.push_joined::<4>(vals, w),
        }
    }

    /// [`BitWriter::push_fields`] with `N` values (`N·w ≤ 64`) joined per
    /// push: the steps of [`BitWriter::push`] on local copies of the state
    /// (in registers: the buffer is grown once, up front, so no reference
    /// to the writer escapes the loop).
    #[inline(always)]
    fn push_joined<const N: usize>(&mut self, vals: &[u64], w: u32) {
        let bits = vals.len() as u64 * w as u64;
        let need = self.done + 8 * ((self.nacc as u64 + bits) / 64) as usize + 8;
        if self.bytes.len() < need {
            Self::grow(&mut self.bytes, need - 8);
        }
        let m = mask(w);
        let (mut acc, mut nacc, mut done) = (self.acc, self.nacc, self.done);
        let bytes = &mut self.bytes[..];
        let mut put = |v: u64, vw: u32| {
            let lo = acc | (v << nacc);
            let hi = (v >> 1) >> (63 - nacc);
            bytes[done..done + 8].copy_from_slice(&lo.to_le_bytes());
            let total = nacc + vw;
            let full = total >= 64;
            done += 8 * usize::from(full);
            acc = if full { hi } else { lo };
            nacc = total & 63;
        };
        let mut chunks = vals.chunks_exact(N);
        for c in &mut chunks {
            let v = c
                .iter()
                .rev()
                .fold(0u64, |a, &v| ((a << 1) << (w - 1)) | (v & m));
            put(v, N as u32 * w);
        }
        for &v in chunks.remainder() {
            put(v & m, w);
        }
        (self.acc, self.nacc, self.done) = (acc, nacc, done);
        self.bit_len += bits;
    }

    /// Number of bits pushed so far.
    pub fn bit_len(&self) -> u64 {
        self.bit_len
    }

    /// Removes and returns the bytes that are complete so far (a multiple of
    /// 8 bytes); the remaining bits stay in the writer. Used to stream a long
    /// packed message in pieces without changing its encoding.
    pub fn take_complete(&mut self) -> Vec<u8> {
        let rest = self.bytes.split_off(self.done);
        self.done = 0;
        std::mem::replace(&mut self.bytes, rest)
    }

    /// Ends the stream: returns the remaining bytes (the last one zero-padded).
    pub fn finish(mut self) -> Vec<u8> {
        let rest = self.nacc.div_ceil(8) as usize;
        if self.bytes.len() < self.done + 8 {
            Self::grow(&mut self.bytes, self.done);
        }
        self.bytes[self.done..self.done + 8].copy_from_slice(&self.acc.to_le_bytes());
        self.bytes.truncate(self.done + rest);
        self.bytes
    }
}

/// Reads values of given widths back from a packed byte stream. Reading past
/// the end yields zero bits (callers know the lengths; the channel layer
/// receives exactly `⌈B/8⌉` bytes).
#[derive(Debug, Clone)]
pub struct BitReader<'a> {
    bytes: &'a [u8],
    pos: u64,
}

impl<'a> BitReader<'a> {
    /// A reader at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        BitReader { bytes, pos: 0 }
    }

    /// Moves to stream bit `pos`.
    pub fn seek(&mut self, pos: u64) {
        self.pos = pos;
    }

    /// Reads the next `w` bits (`w` in 0..=64).
    #[inline]
    pub fn read(&mut self, w: u32) -> u64 {
        debug_assert!(w <= 64);
        let i = (self.pos / 8) as usize;
        let sh = (self.pos % 8) as u32;
        self.pos += w as u64;
        // Bytes i..i+16 hold the w + sh ≤ 71 bits.
        let window = match self.bytes.get(i..).and_then(|s| s.first_chunk::<16>()) {
            Some(c) => u128::from_le_bytes(*c),
            None => {
                let mut c = [0u8; 16];
                let tail = self.bytes.get(i..).unwrap_or(&[]);
                let k = tail.len().min(16);
                c[..k].copy_from_slice(&tail[..k]);
                u128::from_le_bytes(c)
            }
        };
        let (lo, hi) = (window as u64, (window >> 64) as u64);
        // `(hi << 1) << (63 − sh)` is `hi << (64 − sh)`, and 0 for `sh = 0`.
        ((lo >> sh) | ((hi << 1) << (63 - sh))) & mask(w)
    }

    /// Reads the next `w` bits (`w` in 0..=128).
    #[inline]
    pub fn read_u128(&mut self, w: u32) -> u128 {
        if w <= 64 {
            self.read(w) as u128
        } else {
            let lo = self.read(64) as u128;
            lo | ((self.read(w - 64) as u128) << 64)
        }
    }
}

impl BitReader<'_> {
    /// Reads `out.len()` values of `w` bits (`w` in 1..=64), as that many
    /// [`BitReader::read`]s ([`unpack_fields`]).
    pub fn read_fields(&mut self, w: u32, out: &mut [u64]) {
        unpack_fields(self.bytes, self.pos, w, out);
        self.skip(out.len() as u64 * w as u64);
    }

    /// The stream and the position of the next bit.
    pub fn parts(&self) -> (&[u8], u64) {
        (self.bytes, self.pos)
    }

    /// Moves `bits` bits forward.
    pub fn skip(&mut self, bits: u64) {
        self.pos += bits;
    }
}

/// `out[e]` ← bits `pos + e·w .. pos + (e+1)·w` of `bytes` (`w` in 1..=64;
/// zero bits past the end), as [`BitReader::read`] reads them. With AVX2
/// (run-time detection) and `w ≤ 56`, four values take two 16-byte loads,
/// a byte shuffle, a shift and a mask, where they fit in `bytes`; the rest
/// are read one by one.
pub fn unpack_fields(bytes: &[u8], pos: u64, w: u32, out: &mut [u64]) {
    if out.is_empty() {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    let done = if (1..=56).contains(&w) && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked).
        unsafe { x86::unpack_fields_avx2(bytes, pos, w, out) }
    } else {
        0
    };
    #[cfg(not(target_arch = "x86_64"))]
    let done = 0;
    let mut r = BitReader::new(bytes);
    r.seek(pos + done as u64 * w as u64);
    out[done..].iter_mut().for_each(|o| *o = r.read(w));
}

/// The AVX2 field extraction of [`unpack_fields`], for callers that
/// combine the fields of several streams in registers.
#[cfg(target_arch = "x86_64")]
pub mod x86 {
    use super::mask;
    use std::arch::x86_64::*;

    /// Groups of four `w`-bit fields (`w` in 1..=56) of a stream from bit
    /// `pos`: value `e` at bit `o_e = pos + e·w` is the 64-bit little-endian
    /// word at byte `o_e / 8` shifted right by `o_e % 8` (`w + 7 ≤ 63`
    /// bits, so one word holds it) and masked; the 128-bit lane `l` of group
    /// `g` loads the 16 bytes at the word of value `4g + 2l`, which hold
    /// the next value's word too (`⌈(7 + w)/8⌉ + 8 ≤ 16` bytes). `o_e % 8`
    /// has period 8 in `e`, so two shuffle and shift patterns, for even and
    /// odd groups, serve the whole run.
    #[derive(Clone, Copy)]
    pub struct FieldGroups {
        pos: u64,
        w: u64,
        pats: [(__m256i, __m256i); 2],
        m: __m256i,
    }

    impl FieldGroups {
        /// The groups of `w`-bit fields from bit `pos` (`w` in 1..=56).
        ///
        /// # Safety
        /// The CPU must have AVX2 (callers check `is_x86_feature_detected!("avx2")`).
        #[target_feature(enable = "avx2")]
        pub fn new(pos: u64, w: u32) -> Self {
            debug_assert!((1..=56).contains(&w));
            let w = w as u64;
            // Lane `l` (values at `o_l = o + 2l·w` and `o_l + w`) moves bytes
            // `0..8` and `δ_l..δ_l + 8`, `δ_l = (o_l % 8 + w) / 8`, of its 16
            // to its two words, shifted right by `o_l % 8` and `(o_l + w) % 8`.
            let pattern = |o: u64| {
                let (s0, s1) = (o % 8, (o + 2 * w) % 8);
                let (d0, d1) = ((s0 + w) / 8, (s1 + w) / 8);
                let ones = 0x0101_0101_0101_0101u64;
                let ctrl = _mm256_add_epi8(
                    _mm256_set1_epi64x(0x0706_0504_0302_0100),
                    _mm256_set_epi64x((d1 * ones) as i64, 0, (d0 * ones) as i64, 0),
                );
                let sh = _mm256_set_epi64x(
                    ((s1 + w) % 8) as i64,
                    s1 as i64,
                    ((s0 + w) % 8) as i64,
                    s0 as i64,
                );
                (ctrl, sh)
            };
            FieldGroups {
                pos,
                w,
                pats: [pattern(pos), pattern(pos + 4 * w)],
                m: _mm256_set1_epi64x(mask(w as u32) as i64),
            }
        }

        /// How many of the first `n / 4` groups have their loads inside a
        /// stream of `len` bytes (all but those in its last 16 bytes).
        #[inline(always)]
        pub fn groups(&self, len: usize, n: usize) -> usize {
            let last_load = |g: usize| ((self.pos + (4 * g as u64 + 2) * self.w) / 8) as usize + 16;
            let mut groups = n / 4;
            while groups > 0 && last_load(groups - 1) > len {
                groups -= 1;
            }
            groups
        }

        /// Values `4g .. 4g + 4` of `bytes`, for `g` below
        /// [`FieldGroups::groups`] (panics otherwise).
        ///
        /// # Safety
        /// The CPU must have AVX2 (callers check `is_x86_feature_detected!("avx2")`).
        #[inline]
        #[target_feature(enable = "avx2")]
        pub fn get(&self, bytes: &[u8], g: usize) -> __m256i {
            let o = self.pos + 4 * g as u64 * self.w;
            let b0 = (o / 8) as usize;
            let b1 = ((o + 2 * self.w) / 8) as usize;
            let (lo, hi) = (&bytes[b0..b0 + 16], &bytes[b1..b1 + 16]);
            let (ctrl, sh) = self.pats[g % 2];
            // SAFETY: `lo` and `hi` are 16 bytes; the loads are unaligned.
            let v = unsafe { _mm256_loadu2_m128i(hi.as_ptr().cast(), lo.as_ptr().cast()) };
            _mm256_and_si256(_mm256_srlv_epi64(_mm256_shuffle_epi8(v, ctrl), sh), self.m)
        }

        /// The field mask, `2^w − 1` in each word.
        pub fn mask(&self) -> __m256i {
            self.m
        }
    }

    /// Loads words `4g .. 4g + 4` of `s` (panics past its end).
    ///
    /// # Safety
    /// The CPU must have AVX2 (callers check `is_x86_feature_detected!("avx2")`).
    #[inline]
    #[target_feature(enable = "avx2")]
    pub fn load4(s: &[u64], g: usize) -> __m256i {
        let s = &s[4 * g..4 * g + 4];
        // SAFETY: `s` is 4 words (32 bytes); the load is unaligned.
        unsafe { _mm256_loadu_si256(s.as_ptr().cast()) }
    }

    /// Stores `v` to words `4g .. 4g + 4` of `s` (panics past its end).
    ///
    /// # Safety
    /// The CPU must have AVX2 (callers check `is_x86_feature_detected!("avx2")`).
    #[inline]
    #[target_feature(enable = "avx2")]
    pub fn store4(s: &mut [u64], g: usize, v: __m256i) {
        let s = &mut s[4 * g..4 * g + 4];
        // SAFETY: `s` is 4 words (32 bytes); the store is unaligned.
        unsafe { _mm256_storeu_si256(s.as_mut_ptr().cast(), v) }
    }

    /// The AVX2 part of [`super::unpack_fields`] (`w` in 1..=56): the
    /// values of every group whose loads stay in `bytes`; returns how many
    /// it wrote (a multiple of 4).
    #[target_feature(enable = "avx2")]
    pub(super) fn unpack_fields_avx2(bytes: &[u8], pos: u64, w: u32, out: &mut [u64]) -> usize {
        let f = FieldGroups::new(pos, w);
        let groups = f.groups(bytes.len(), out.len());
        for g in 0..groups {
            store4(out, g, f.get(bytes, g));
        }
        4 * groups
    }
}

/// Packs `values` at `bits` bits each (reduced mod `2^bits`).
pub fn pack_u64s(values: &[u64], bits: u32) -> Vec<u8> {
    let mut w = BitWriter::with_capacity_bits(values.len() as u64 * bits as u64);
    for &v in values {
        w.push(v, bits);
    }
    w.finish()
}

/// Unpacks `n` values of `bits` bits from `bytes`.
pub fn unpack_u64s(bytes: &[u8], n: usize, bits: u32) -> Vec<u64> {
    let mut r = BitReader::new(bytes);
    (0..n).map(|_| r.read(bits)).collect()
}

/// Packs bits 8 per byte, bit `i` in bit `i % 8` of byte `i / 8`.
pub fn pack_bits(bits: &[bool]) -> Vec<u8> {
    let mut out = vec![0u8; bits.len().div_ceil(8)];
    for (byte, chunk) in out.iter_mut().zip(bits.chunks(8)) {
        for (k, &b) in chunk.iter().enumerate() {
            *byte |= (b as u8) << k;
        }
    }
    out
}

/// Unpacks `n` bits packed by [`pack_bits`] (missing bytes read as zero).
pub fn unpack_bits(bytes: &[u8], n: usize) -> Vec<bool> {
    (0..n)
        .map(|i| bytes.get(i / 8).is_some_and(|b| (b >> (i % 8)) & 1 == 1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixed_widths_roundtrip() {
        let widths: Vec<u32> = (0..300).map(|i| (i * 7 % 128) as u32 + 1).collect();
        let vals: Vec<u128> = (0..300u128)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835))
            .collect();
        let mut w = BitWriter::new();
        let mut streamed = Vec::new();
        for (k, (&v, &b)) in vals.iter().zip(&widths).enumerate() {
            w.push_u128(v, b);
            if k % 17 == 0 {
                streamed.extend(w.take_complete());
            }
        }
        let total: u64 = widths.iter().map(|&b| b as u64).sum();
        assert_eq!(w.bit_len(), total);
        streamed.extend(w.finish());
        assert_eq!(streamed.len() as u64, total.div_ceil(8));
        let mut r = BitReader::new(&streamed);
        for (&v, &b) in vals.iter().zip(&widths) {
            assert_eq!(r.read_u128(b), v & mask128(b));
        }
    }

    /// A reused buffer's old contents never leak into the stream, whatever
    /// its length.
    #[test]
    fn reused_buffer_is_overwritten() {
        let vals: Vec<u64> = (0..77u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        for stale in [0usize, 3, 9, 500] {
            let mut w = BitWriter::reuse(vec![0xa5; stale], 0);
            let mut f = BitWriter::new();
            for (i, &v) in vals.iter().enumerate() {
                let b = (i as u32 * 5) % 64 + 1;
                w.push(v, b);
                f.push(v, b);
            }
            assert_eq!(w.finish(), f.finish(), "stale {stale}");
        }
    }

    /// [`unpack_fields`] and [`BitReader::read_fields`] read what
    /// [`BitReader::read`] reads, and [`BitWriter::push_fields`] writes what
    /// [`BitWriter::push`] writes, for every width, bit offset and length
    /// (vector groups, scalar tails, reads past the end).
    #[test]
    fn field_runs_match_one_by_one() {
        let bytes: Vec<u8> = (0..203u64)
            .map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 29) as u8)
            .collect();
        for w in 1..=64u32 {
            for pos in [0u64, 1, 5, 7, 8, 13, 64, 100] {
                for n in [0usize, 1, 3, 4, 7, 9, 64, 70] {
                    let mut got = vec![u64::MAX; n];
                    unpack_fields(&bytes, pos, w, &mut got);
                    let mut r = BitReader::new(&bytes);
                    r.seek(pos);
                    let want: Vec<u64> = (0..n).map(|_| r.read(w)).collect();
                    assert_eq!(got, want, "w {w} pos {pos} n {n}");
                    let mut rf = BitReader::new(&bytes);
                    rf.seek(pos);
                    rf.read_fields(w, &mut got);
                    assert_eq!(got, want, "w {w} pos {pos} n {n}");
                    assert_eq!((rf.read(64), rf.read(3)), (r.read(64), r.read(3)));
                    // After a few odd bits, as in a stream of instances.
                    let (mut a, mut b) = (BitWriter::new(), BitWriter::new());
                    a.push(0b101, 3);
                    b.push(0b101, 3);
                    let vals: Vec<u64> = want.iter().map(|v| v ^ (u64::MAX << 3)).collect();
                    a.push_fields(&vals, w);
                    vals.iter().for_each(|&v| b.push(v, w));
                    assert_eq!(a.bit_len(), b.bit_len());
                    assert_eq!(a.finish(), b.finish(), "w {w} n {n}");
                }
            }
        }
    }

    #[test]
    fn u64s_and_bits() {
        for bits in [1u32, 7, 8, 31, 32, 37, 63, 64] {
            let vals: Vec<u64> = (0..101u64)
                .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
                .collect();
            let p = pack_u64s(&vals, bits);
            assert_eq!(p.len(), packed_len(101, bits));
            let back = unpack_u64s(&p, 101, bits);
            for (a, b) in vals.iter().zip(&back) {
                assert_eq!(a & mask(bits), *b);
            }
        }
        let bits: Vec<bool> = (0..77).map(|i| i % 3 == 0).collect();
        let p = pack_bits(&bits);
        assert_eq!(p.len(), 10);
        assert_eq!(unpack_bits(&p, 77), bits);
        // Same layout as BitWriter with 1-bit values.
        let mut w = BitWriter::new();
        bits.iter().for_each(|&b| w.push(b as u64, 1));
        assert_eq!(w.finish(), p);
    }
}
