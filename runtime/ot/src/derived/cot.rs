//! Correlated OT's payloads and element loops, shared by every engine.
//!
//! Additive correlated OT (Asharov et al., CCS 2013) from a random OT's pads
//! `(y_0, y_1)`, with a payload of elements in rings `Z_{n_1}, …, Z_{n_k}`
//! ([`CotFields`] of [`CotRing`]s: widths for `Z_{2^w}`, or odd moduli; may
//! differ per instance): the sender inputs `Δ_j` and gets random `r_j =
//! G_0`, sends `d_j = r_j + Δ_j − G_1` elementwise, the receiver with choice
//! `c_j` outputs `G_c + c·d = r_j + c_j·Δ_j`. `G_b` are the elements derived
//! from the pad `y_b`: consecutive bit fields (`w` bits for `Z_{2^w}`,
//! exactly uniform; 128 bits reduced mod an odd `n`, within `2^−65` of
//! uniform) of `y_b` itself while they fit in its 128 bits, else of the
//! first `⌈P/128⌉` blocks of its [`Mmo`] expansion `G(y_b)`, `P` the
//! elements' pad bits (so a payload costs one AES block per 128 pad bits,
//! e.g. `⌈64·w/128⌉` for the matrix product's 64 elements of `w` bits).
//! `W = Σ ⌈log₂ n_e⌉` bits go on the wire per instance. The element loops
//! (`CotSend`, `CotRecv`) run an AVX2/BMI2 build when the CPU has it
//! (run-time detection) and read or write two elements per access when
//! their bits fit in a word.

use super::super::{OtError, check};
use sci_net::crypto::{Block, Mmo};
use sci_net::pack::{BitReader, BitWriter, mask, mask128, unpack_fields};

/// The ring of one element of a correlated-OT payload: `Z_{2^w}` for a
/// width `w: u32` (1..=64), or another modulus implementing this trait
/// (e.g. [`crate::Modulus`], odd `Z_n`). Elements are `u64`
/// in `[0, n)`.
pub trait CotRing: Copy + PartialEq + 'static {
    /// Whether the parameters are supported (e.g. a width in 1..=64).
    fn valid(self) -> bool;
    /// Bits of one element on the wire, `⌈log₂ n⌉`.
    fn wire_bits(self) -> u32;
    /// Bits of a uniform pad consumed to derive one (close to) uniform
    /// element, at most 128.
    fn pad_bits(self) -> u32;
    /// The element derived from `pad_bits` uniform bits `y`.
    fn elem_of_pad(self, y: u128) -> u64;
    /// `a + b mod n` for reduced `a`, `b`.
    fn add(self, a: u64, b: u64) -> u64;
    /// `a − b mod n` for reduced `a`, `b`.
    fn sub(self, a: u64, b: u64) -> u64;
    /// `x mod n` for any `x` (a value read from the wire).
    fn reduce(self, x: u64) -> u64;
    /// `Some(w)` if the ring is `Z_{2^w}` with `w` pad and wire bits and
    /// the element of a pad its low `w` bits: a payload of such elements,
    /// all alike, runs through the whole-instance element loops
    /// ([`unpack_fields`], [`BitWriter::push_fields`]). `None` by default.
    fn pow2_bits(self) -> Option<u32> {
        None
    }
}

/// `Z_{2^w}`: `w` bits on the wire and of the pad, exactly uniform.
impl CotRing for u32 {
    fn valid(self) -> bool {
        (1..=64).contains(&self)
    }
    #[inline]
    fn wire_bits(self) -> u32 {
        self
    }
    #[inline]
    fn pad_bits(self) -> u32 {
        self
    }
    #[inline]
    fn elem_of_pad(self, y: u128) -> u64 {
        y as u64 & mask(self)
    }
    #[inline]
    fn add(self, a: u64, b: u64) -> u64 {
        a.wrapping_add(b) & mask(self)
    }
    #[inline]
    fn sub(self, a: u64, b: u64) -> u64 {
        a.wrapping_sub(b) & mask(self)
    }
    #[inline]
    fn reduce(self, x: u64) -> u64 {
        x & mask(self)
    }
    #[inline]
    fn pow2_bits(self) -> Option<u32> {
        Some(self)
    }
}

/// The elements of the payload of one correlated-OT instance (their rings,
/// e.g. widths), with the pad and wire bits they take. Built once per layout
/// and copied per instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CotFields<'a, R = u32> {
    fields: &'a [R],
    /// Pad bits of all the elements, `P = Σ pad_bits`.
    pad: u32,
    wire: u32,
    /// The ring of every element, if they are all the same.
    uniform: Option<R>,
}

impl<'a, R: CotRing> CotFields<'a, R> {
    /// Checks that there is at least one element and every ring is valid.
    pub fn new(fields: &'a [R]) -> Result<Self, OtError> {
        check(
            !fields.is_empty() && fields.iter().all(|f| f.valid()),
            || "COT payload fields must be non-empty and valid (widths in 1..=64)".into(),
        )?;
        Ok(CotFields {
            fields,
            pad: fields.iter().map(|f| f.pad_bits()).sum(),
            uniform: fields.iter().all(|f| *f == fields[0]).then_some(fields[0]),
            wire: fields.iter().map(|f| f.wire_bits()).sum(),
        })
    }

    /// The elements' rings.
    pub fn fields(&self) -> &'a [R] {
        self.fields
    }

    /// Bits of one correction on the wire, `W = Σ ⌈log₂ n_e⌉`.
    pub fn wire_bits(&self) -> u32 {
        self.wire
    }

    /// Blocks of `G(y)` the elements are read from: `⌈P/128⌉`, or none when
    /// they fit in the pad itself (`P ≤ 128`).
    fn expanded_blocks(&self) -> usize {
        if self.pad <= 128 {
            0
        } else {
            self.pad.div_ceil(128) as usize
        }
    }
}

/// Exact bits on the wire of one correlated-OT batch: the cost model's
/// ([`sci_ir::cost::ot::cot`]).
pub use sci_ir::cost::ot::cot_bits;

/// Instances whose pads are expanded together ([`PadStreams::fill`]): a few
/// dozen keep the streams of both pads of a group in L1 (16 KiB for the
/// matrix product's at ℓ = 32), with AES runs long enough to pipeline.
const GROUP: usize = 32;

/// The pad streams of a group of instances, from which both sides derive
/// the same elements: instance `i`'s stream is its 128-bit pad `y` itself
/// when its fields take at most 128 pad bits (followed by a zero block, see
/// [`PadStreams::of`]), else the first `⌈P/128⌉` blocks of `y`'s [`Mmo`]
/// expansion `G(y)`, from block `start[i]` of `blocks`. A zero block ends
/// the group, so that reading a few bits past a stream stays in bounds.
#[derive(Default)]
struct PadStreams {
    blocks: Vec<Block>,
    start: Vec<usize>,
}

impl PadStreams {
    /// Derives the streams of the instances `(y, fields)` of a group: one
    /// AES block per expanded block, all in one pass.
    fn fill<'w, R: CotRing>(
        &mut self,
        ex: &mut Mmo,
        pads: impl Iterator<Item = (u128, CotFields<'w, R>)>,
    ) {
        let PadStreams { blocks, start } = self;
        blocks.clear();
        start.clear();
        for (y, f) in pads {
            start.push(blocks.len());
            blocks.extend((0..f.expanded_blocks()).map(|t| Block(y ^ t as u128)));
        }
        ex.hash_blocks(blocks);
        blocks.push(Block::ZERO);
    }

    /// The stream of instance `i` of the group, with fields `f` and the
    /// pad and a zero block in `pad`, up to the group's end (bit `b` of the
    /// stream is bit `b % 128` of block `b / 128`).
    #[inline]
    fn of<'a, R: CotRing>(
        &'a self,
        i: usize,
        f: CotFields<'_, R>,
        pad: &'a [Block; 2],
    ) -> &'a [Block] {
        if f.expanded_blocks() == 0 {
            pad
        } else {
            &self.blocks[self.start[i]..]
        }
    }
}

/// Bits `pos..pos + w` (`w` ≤ 128) of the stream `s`, which must hold the
/// two words after the word of bit `pos` (three for `w > 64`; a
/// [`PadStreams`] stream does). Two or three loads and a shift, no branch
/// for a loop-invariant `w`.
#[inline(always)]
fn bits_at(s: &[u64], pos: usize, w: u32) -> u128 {
    let (i, sh) = (pos / 64, (pos % 64) as u32);
    let mut v = (s[i] as u128 | (s[i + 1] as u128) << 64) >> sh;
    if w > 64 {
        // `s[i + 2] << (128 − sh)`, 0 for `sh = 0`.
        v |= ((s[i + 2] as u128) << 1) << (127 - sh);
    }
    v & mask128(w)
}

// The element loops below go two elements at a time: two elements whose
// bits fit in one 64-bit word are read or written with one access (the
// matrix product's widths are at most 32). They are compiled apart for
// payloads of one ring (`ring` a constant), whose widths and masks are then
// loop invariants.

/// `out[e]` ← element `e` of ring `ring(e)`, derived from bits `Σ_{e' < e}
/// pad_bits .. + pad_bits(e)` of the stream `s`.
#[inline(always)]
fn unpack_elems<R: CotRing>(ring: impl Fn(usize) -> R, s: &[u64], out: &mut [u64]) {
    let (mut pos, k) = (0, out.len());
    let mut pairs = out.chunks_exact_mut(2);
    for (h, o) in (&mut pairs).enumerate() {
        let (r0, r1) = (ring(2 * h), ring(2 * h + 1));
        let (w0, w1) = (r0.pad_bits(), r1.pad_bits());
        let (b0, b1) = if w0 + w1 <= 64 {
            let b = bits_at(s, pos, w0 + w1);
            (b & mask128(w0), b >> w0)
        } else {
            (bits_at(s, pos, w0), bits_at(s, pos + w0 as usize, w1))
        };
        o[0] = r0.elem_of_pad(b0);
        o[1] = r1.elem_of_pad(b1);
        pos += (w0 + w1) as usize;
    }
    if let [o] = pairs.into_remainder() {
        let r = ring(k - 1);
        *o = r.elem_of_pad(bits_at(s, pos, r.pad_bits()));
    }
}

/// Appends `d[e]` at `wire_bits(ring(e))` bits to `w`.
#[inline(always)]
fn pack_elems<R: CotRing>(ring: impl Fn(usize) -> R, d: &[u64], w: &mut BitWriter) {
    let mut pairs = d.chunks_exact(2);
    for (h, v) in (&mut pairs).enumerate() {
        let (w0, w1) = (ring(2 * h).wire_bits(), ring(2 * h + 1).wire_bits());
        if w0 + w1 <= 64 {
            w.push(v[0] | v[1] << w0, w0 + w1);
        } else {
            w.push(v[0], w0);
            w.push(v[1], w1);
        }
    }
    if let [v] = pairs.remainder() {
        w.push(*v, ring(d.len() - 1).wire_bits());
    }
}

/// `out[e]` ← the next `wire_bits(ring(e))` bits of `rd`.
#[inline(always)]
fn read_elems<R: CotRing>(ring: impl Fn(usize) -> R, rl: &mut BitReader<'_>, out: &mut [u64]) {
    let k = out.len();
    let mut pairs = out.chunks_exact_mut(2);
    for (h, o) in (&mut pairs).enumerate() {
        let (w0, w1) = (ring(2 * h).wire_bits(), ring(2 * h + 1).wire_bits());
        if w0 + w1 <= 64 {
            let b = rl.read(w0 + w1);
            o[0] = b & mask(w0);
            o[1] = b >> w0;
        } else {
            o[0] = rl.read(w0);
            o[1] = rl.read(w1);
        }
    }
    if let [o] = pairs.into_remainder() {
        *o = rl.read(ring(k - 1).wire_bits());
    }
}

/// [`CotSend::answer`] for one instance with correlation `x` (`k` values):
/// `r = G_0`, `d = r + x − G_1` (`d` holds `G_1` first), `d` packed.
#[inline(always)]
fn answer_one<R: CotRing>(
    ring: impl Fn(usize) -> R + Copy,
    [s0, s1]: [&[Block]; 2],
    x: &[u64],
    [r, d]: [&mut [u64]; 2],
    w: &mut BitWriter,
) {
    unpack_elems(ring, Block::as_words(s0), r);
    unpack_elems(ring, Block::as_words(s1), d);
    for (e, ((de, &re), &xe)) in d.iter_mut().zip(&*r).zip(x).enumerate() {
        let ring = ring(e);
        *de = ring.sub(ring.add(re, xe), *de);
    }
    pack_elems(ring, d, w);
}

/// Elements of one ring per instance from which the whole-instance loops
/// ([`answer_pow2`], [`decode_pow2`]) run: below, their fixed set-up costs
/// more than the pairwise loops ([`answer_one`], [`decode_one`]).
const WHOLE_MIN: usize = 8;

/// [`answer_one`] for `k` elements of `Z_{2^b}` ([`CotRing::pow2_bits`]),
/// on the whole instance: with AVX2 and `b ≤ 56`, four elements at a time
/// in registers from both streams ([`x86::answer_groups`]), the rest a
/// pass per step ([`unpack_fields`]); then the packing
/// ([`BitWriter::push_fields`]).
#[inline(always)]
fn answer_pow2(
    b: u32,
    [s0, s1]: [&[Block]; 2],
    x: &[u64],
    [r, d]: [&mut [u64]; 2],
    w: &mut BitWriter,
) {
    let (s0, s1) = (Block::as_bytes(s0), Block::as_bytes(s1));
    #[cfg(target_arch = "x86_64")]
    let done = if b <= 56 && wide_simd() {
        // SAFETY: the CPU has AVX2 (checked).
        unsafe { x86::answer_groups(b, [s0, s1], x, [&mut *r, &mut *d]) }
    } else {
        0
    };
    #[cfg(not(target_arch = "x86_64"))]
    let done = 0;
    let from = done as u64 * b as u64;
    unpack_fields(s0, from, b, &mut r[done..]);
    unpack_fields(s1, from, b, &mut d[done..]);
    let m = mask(b);
    for ((de, &re), &xe) in d.iter_mut().zip(&*r).zip(x).skip(done) {
        *de = re.wrapping_add(xe).wrapping_sub(*de) & m;
    }
    w.push_fields(d, b);
}

/// [`CotRecv::decode`] for one instance: `v = G_c + (d & sel)`, `sel` all
/// ones for the choice 1; `d` is scratch.
#[inline(always)]
fn decode_one<R: CotRing>(
    ring: impl Fn(usize) -> R + Copy,
    s: &[Block],
    sel: u64,
    rd: &mut BitReader<'_>,
    [v, d]: [&mut [u64]; 2],
) {
    read_elems(ring, rd, d);
    unpack_elems(ring, Block::as_words(s), v);
    for (e, (ve, &de)) in v.iter_mut().zip(&*d).enumerate() {
        let ring = ring(e);
        *ve = ring.add(*ve, ring.reduce(de) & sel);
    }
}

/// [`decode_one`] for `k` elements of `Z_{2^b}`, on the whole instance as
/// in [`answer_pow2`] ([`x86::decode_groups`]).
#[inline(always)]
fn decode_pow2(b: u32, s: &[Block], sel: u64, rd: &mut BitReader<'_>, [v, d]: [&mut [u64]; 2]) {
    let s = Block::as_bytes(s);
    #[cfg(target_arch = "x86_64")]
    let done = if b <= 56 && wide_simd() {
        let (wire, pos) = rd.parts();
        // SAFETY: the CPU has AVX2 (checked).
        unsafe { x86::decode_groups(b, s, (wire, pos), sel, &mut *v) }
    } else {
        0
    };
    #[cfg(not(target_arch = "x86_64"))]
    let done = 0;
    rd.skip(done as u64 * b as u64);
    rd.read_fields(b, &mut d[done..]);
    unpack_fields(s, done as u64 * b as u64, b, &mut v[done..]);
    let m = mask(b);
    for (ve, &de) in v.iter_mut().zip(&*d).skip(done) {
        *ve = ve.wrapping_add(de & sel) & m;
    }
}

/// The AVX2 groups of [`answer_pow2`] and [`decode_pow2`].
#[cfg(target_arch = "x86_64")]
mod x86 {
    use sci_net::pack::x86::{FieldGroups, load4, store4};
    use std::arch::x86_64::*;

    /// `r = G_0`, `d = r + x − G_1` mod `2^b` for the elements of the groups
    /// of four whose loads stay in both streams; returns how many (a
    /// multiple of 4).
    #[target_feature(enable = "avx2")]
    pub(super) fn answer_groups(
        b: u32,
        [s0, s1]: [&[u8]; 2],
        x: &[u64],
        [r, d]: [&mut [u64]; 2],
    ) -> usize {
        let f = FieldGroups::new(0, b);
        let n = r.len().min(d.len()).min(x.len());
        let groups = f.groups(s0.len().min(s1.len()), n);
        for g in 0..groups {
            let (rv, gv) = (f.get(s0, g), f.get(s1, g));
            let dv = _mm256_sub_epi64(_mm256_add_epi64(rv, load4(x, g)), gv);
            store4(r, g, rv);
            store4(d, g, _mm256_and_si256(dv, f.mask()));
        }
        4 * groups
    }

    /// `v = G_c + (d & sel)` mod `2^b`, `d` read from `wire` at bit `pos`,
    /// for the groups of four whose loads stay in both; returns how many.
    #[target_feature(enable = "avx2")]
    pub(super) fn decode_groups(
        b: u32,
        s: &[u8],
        (wire, pos): (&[u8], u64),
        sel: u64,
        v: &mut [u64],
    ) -> usize {
        let (fs, fw) = (FieldGroups::new(0, b), FieldGroups::new(pos, b));
        let groups = fs
            .groups(s.len(), v.len())
            .min(fw.groups(wire.len(), v.len()));
        let sel = _mm256_set1_epi64x(sel as i64);
        for g in 0..groups {
            let dv = _mm256_and_si256(fw.get(wire, g), sel);
            let vv = _mm256_add_epi64(fs.get(s, g), dv);
            store4(v, g, _mm256_and_si256(vv, fs.mask()));
        }
        4 * groups
    }
}

/// Whether the element loops run their AVX2/BMI2 build (run-time
/// detection: the crate itself targets baseline x86-64).
#[cfg(target_arch = "x86_64")]
fn wide_simd() -> bool {
    use std::arch::is_x86_feature_detected as has;
    has!("avx2") && has!("bmi1") && has!("bmi2")
}

/// The sender's half of correlated OT from its random-OT pads `(y_0, y_1)`
/// (see the [module documentation](self)): `r = G_0`, `d = r + Δ − G_1`,
/// with its buffers (kept across calls).
#[derive(Default)]
pub(crate) struct CotSend {
    ex: Mmo,
    streams: [PadStreams; 2],
    /// `r_j`, then `d_j`, then `Δ_j` completed with zeros.
    r: Vec<u64>,
}

impl CotSend {
    /// Instances `j0 + i` for `i < y0.len()`, with pads `(y0[i], y1[i])`,
    /// fields `fields_of(j)` and correlations `corr(j)` (one value per
    /// element; missing values are 0): appends each `d_j` to `w` and calls
    /// `out(j, r_j)`, in instance order. Cost: one AES block per expanded
    /// pad block ([`PadStreams`]), a few operations per element.
    pub(crate) fn answer<'w, 'c, R: CotRing>(
        &mut self,
        j0: usize,
        y: [&[Block]; 2],
        fields_of: impl Fn(usize) -> CotFields<'w, R>,
        corr: impl Fn(usize) -> &'c [u64],
        w: &mut BitWriter,
        out: impl FnMut(usize, &[u64]),
    ) {
        #[cfg(target_arch = "x86_64")]
        if wide_simd() {
            // SAFETY: the CPU has AVX2, BMI1 and BMI2 (checked).
            return unsafe { self.answer_avx2(j0, y, fields_of, corr, w, out) };
        }
        self.answer_in(j0, y, fields_of, corr, w, out)
    }

    /// [`CotSend::answer`] compiled for AVX2 and BMI2 (the element loops
    /// and the caller's closures inlined in it).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi1,bmi2")]
    fn answer_avx2<'w, 'c, R: CotRing>(
        &mut self,
        j0: usize,
        y: [&[Block]; 2],
        fields_of: impl Fn(usize) -> CotFields<'w, R>,
        corr: impl Fn(usize) -> &'c [u64],
        w: &mut BitWriter,
        out: impl FnMut(usize, &[u64]),
    ) {
        self.answer_in(j0, y, fields_of, corr, w, out)
    }

    #[inline(always)]
    fn answer_in<'w, 'c, R: CotRing>(
        &mut self,
        j0: usize,
        [y0, y1]: [&[Block]; 2],
        fields_of: impl Fn(usize) -> CotFields<'w, R>,
        corr: impl Fn(usize) -> &'c [u64],
        w: &mut BitWriter,
        mut out: impl FnMut(usize, &[u64]),
    ) {
        let CotSend {
            ex,
            streams: [s0, s1],
            r,
        } = self;
        // A local writer: its state stays in registers, not behind a pointer
        // that the stores of the loops might alias.
        let mut wl = std::mem::take(w);
        for g in (0..y0.len().min(y1.len())).step_by(GROUP) {
            let group = g..(g + GROUP).min(y0.len()).min(y1.len());
            s0.fill(ex, group.clone().map(|i| (y0[i].0, fields_of(j0 + i))));
            s1.fill(ex, group.clone().map(|i| (y1[i].0, fields_of(j0 + i))));
            for (k, i) in group.enumerate() {
                let j = j0 + i;
                let f = fields_of(j);
                let x = corr(j);
                let n = f.fields.len();
                r.resize(3 * n, 0);
                let (rj, rest) = r.split_at_mut(n);
                let (d, xs) = rest.split_at_mut(n);
                let x = if x.len() >= n {
                    &x[..n]
                } else {
                    xs[..x.len()].copy_from_slice(x);
                    xs[x.len()..].fill(0);
                    &xs[..]
                };
                let pads = [[y0[i], Block::ZERO], [y1[i], Block::ZERO]];
                let s = [s0.of(k, f, &pads[0]), s1.of(k, f, &pads[1])];
                match f.uniform {
                    Some(u) => match u.pow2_bits().filter(|_| n >= WHOLE_MIN) {
                        Some(b) => answer_pow2(b, s, x, [rj, d], &mut wl),
                        None => answer_one(|_| u, s, x, [rj, d], &mut wl),
                    },
                    None => answer_one(|e| f.fields[e], s, x, [rj, d], &mut wl),
                }
                out(j, &r[..n]);
            }
        }
        *w = wl;
    }
}

/// The receiver's half of correlated OT from its chosen pads `y_c`: `G_c +
/// c·d`, with its buffers (kept across calls).
#[derive(Default)]
pub(crate) struct CotRecv {
    ex: Mmo,
    streams: PadStreams,
    /// `v_j`, then `d_j`.
    v: Vec<u64>,
}

impl CotRecv {
    /// Instances `j0 + i` for `i < y.len()`, with chosen pads `y[i]`,
    /// choices `choice(j)` and fields `fields_of(j)`: reads each `d_j` from
    /// `rd` and calls `out(j, r_j + c_j·Δ_j)`, in instance order. A peer's
    /// out-of-range correction gives a wrong but reduced element, never an
    /// unreduced one. Cost as [`CotSend::answer`] with one pad.
    pub(crate) fn decode<'w, R: CotRing>(
        &mut self,
        j0: usize,
        y: &[Block],
        choice: impl Fn(usize) -> bool,
        fields_of: impl Fn(usize) -> CotFields<'w, R>,
        rd: &mut BitReader<'_>,
        out: impl FnMut(usize, &[u64]),
    ) {
        #[cfg(target_arch = "x86_64")]
        if wide_simd() {
            // SAFETY: the CPU has AVX2, BMI1 and BMI2 (checked).
            return unsafe { self.decode_avx2(j0, y, choice, fields_of, rd, out) };
        }
        self.decode_in(j0, y, choice, fields_of, rd, out)
    }

    /// [`CotRecv::decode`] compiled for AVX2 and BMI2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi1,bmi2")]
    fn decode_avx2<'w, R: CotRing>(
        &mut self,
        j0: usize,
        y: &[Block],
        choice: impl Fn(usize) -> bool,
        fields_of: impl Fn(usize) -> CotFields<'w, R>,
        rd: &mut BitReader<'_>,
        out: impl FnMut(usize, &[u64]),
    ) {
        self.decode_in(j0, y, choice, fields_of, rd, out)
    }

    #[inline(always)]
    fn decode_in<'w, R: CotRing>(
        &mut self,
        j0: usize,
        y: &[Block],
        choice: impl Fn(usize) -> bool,
        fields_of: impl Fn(usize) -> CotFields<'w, R>,
        rd: &mut BitReader<'_>,
        mut out: impl FnMut(usize, &[u64]),
    ) {
        let CotRecv { ex, streams, v } = self;
        // A local reader (see `CotSend::answer_in`).
        let mut rl = rd.clone();
        for g in (0..y.len()).step_by(GROUP) {
            let group = g..(g + GROUP).min(y.len());
            streams.fill(ex, group.clone().map(|i| (y[i].0, fields_of(j0 + i))));
            for (k, i) in group.enumerate() {
                let j = j0 + i;
                let f = fields_of(j);
                let sel = u64::from(choice(j)).wrapping_neg();
                let n = f.fields.len();
                v.resize(2 * n, 0);
                let (vj, d) = v.split_at_mut(n);
                let pad = [y[i], Block::ZERO];
                let s = streams.of(k, f, &pad);
                match f.uniform {
                    Some(u) => match u.pow2_bits().filter(|_| n >= WHOLE_MIN) {
                        Some(b) => decode_pow2(b, s, sel, &mut rl, [vj, d]),
                        None => decode_one(|_| u, s, sel, &mut rl, [vj, d]),
                    },
                    None => decode_one(|e| f.fields[e], s, sel, &mut rl, [vj, d]),
                }
                out(j, &v[..n]);
            }
        }
        *rd = rl;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Modulus;

    /// Pad streams: the pad itself for `P ≤ 128`, else the first `⌈P/128⌉`
    /// blocks of `G(y)`, `h(y ⊕ t)`.
    #[test]
    fn pad_streams_are_the_pad_or_its_expansion() {
        let (small, large) = ([13u32, 64, 51], [32u32; 9]);
        let shapes = [
            CotFields::new(&small).expect("widths"),
            CotFields::new(&large).expect("widths"),
        ];
        let ys: Vec<u128> = (1..=7u128)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835))
            .collect();
        let shape = |i: usize| shapes[usize::from(i.is_multiple_of(3))];
        let mut ps = PadStreams::default();
        let mut ex = Mmo::new();
        ps.fill(&mut ex, ys.iter().enumerate().map(|(i, &y)| (y, shape(i))));
        for (i, &y) in ys.iter().enumerate() {
            let want: Vec<Block> = match shape(i).expanded_blocks() {
                0 => vec![Block(y)],
                nb => {
                    let mut b: Vec<Block> = (0..nb).map(|t| Block(y ^ t as u128)).collect();
                    ex.hash_blocks(&mut b);
                    b
                }
            };
            let pad = [Block(y), Block::ZERO];
            let s = ps.of(i, shape(i), &pad);
            assert_eq!(&s[..want.len()], &want[..], "pad {i}");
            // Readable a block past the stream.
            assert!(s.len() > want.len(), "pad {i}");
        }
    }

    /// The element loops read and write consecutive fields exactly as a
    /// field-by-field [`BitReader`] / [`BitWriter`] does, for uniform and
    /// mixed layouts, pairs that fit in a word and pairs that do not, odd
    /// counts and 128-bit pad fields (odd moduli).
    #[test]
    fn element_loops_match_field_by_field_access() {
        let words: Vec<u64> = (0..40u64)
            .map(|i| {
                (i + 1)
                    .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                    .rotate_left(i as u32)
            })
            .collect();
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let layouts: [&[u32]; 6] = [
            &[1],
            &[32; 7],
            &[13; 64],
            &[5, 17, 64, 40, 3],
            &[64, 1, 63],
            &[33; 5],
        ];
        for layout in layouts {
            let ring = |e: usize| layout[e];
            let k = layout.len();
            let mut got = vec![0u64; k];
            unpack_elems(ring, &words, &mut got);
            let mut rd = BitReader::new(&bytes);
            let want: Vec<u64> = layout.iter().map(|&w| rd.read(w)).collect();
            assert_eq!(got, want, "{layout:?}");
            let mut wr = BitWriter::new();
            pack_elems(ring, &want, &mut wr);
            let mut fw = BitWriter::new();
            layout.iter().zip(&want).for_each(|(&w, &v)| fw.push(v, w));
            assert_eq!(wr.finish(), fw.finish(), "{layout:?}");
            let mut rl = BitReader::new(&bytes);
            read_elems(ring, &mut rl, &mut got);
            assert_eq!(got, want, "{layout:?}");
        }
        // Odd moduli: a 128-bit field per element, reduced.
        let mods = [Modulus::Odd(1_000_003), Modulus::Odd(3)];
        let ring = |e: usize| mods[e % 2];
        let mut got = vec![0u64; 3];
        unpack_elems(ring, &words, &mut got);
        let mut rd = BitReader::new(&bytes);
        for (e, g) in got.iter().enumerate() {
            let y = rd.read_u128(128);
            assert_eq!(*g, (y % ring(e).value()) as u64, "element {e}");
        }
    }

    /// The whole-instance loops for `Z_{2^b}` payloads ([`answer_pow2`],
    /// [`decode_pow2`]: AVX2 groups, then the rest field by field) give the
    /// pairwise loops' results bit for bit: every width 1..=64, counts with
    /// and without a partial group, streams ending a block after their
    /// fields (as [`PadStreams`] gives them, so the last groups fall back),
    /// a wire read from an odd bit position to its very end, both choices.
    #[test]
    fn whole_instance_loops_match_the_pairwise_loops() {
        let mut z = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            z ^= z << 13;
            z ^= z >> 7;
            z ^= z << 17;
            z
        };
        for b in 1..=64u32 {
            for k in [8usize, 9, 13, 16, 31, 64] {
                let blocks = (k * b as usize).div_ceil(128) + 1;
                let mut stream = || -> Vec<Block> {
                    let mut s: Vec<Block> = (0..blocks)
                        .map(|_| Block(u128::from(next()) << 64 | u128::from(next())))
                        .collect();
                    s[blocks - 1] = Block::ZERO;
                    s
                };
                let s = [stream(), stream()];
                let s = [&s[0][..], &s[1][..]];
                let x: Vec<u64> = (0..k).map(|_| next() & mask(b)).collect();
                let run = |pow2: bool| {
                    let (mut r, mut d) = (vec![0u64; k], vec![0u64; k]);
                    let mut w = BitWriter::new();
                    w.push(0b101, 3);
                    if pow2 {
                        answer_pow2(b, s, &x, [&mut r, &mut d], &mut w);
                    } else {
                        answer_one(|_| b, s, &x, [&mut r, &mut d], &mut w);
                    }
                    (r, d, w.finish())
                };
                let (want, got) = (run(false), run(true));
                assert_eq!(got, want, "answer, b = {b}, k = {k}");
                let wire = want.2;
                for sel in [0, u64::MAX] {
                    let decode = |pow2: bool| {
                        let (mut v, mut d) = (vec![0u64; k], vec![0u64; k]);
                        let mut rd = BitReader::new(&wire);
                        rd.skip(3);
                        let sc = s[usize::from(sel != 0)];
                        if pow2 {
                            decode_pow2(b, sc, sel, &mut rd, [&mut v, &mut d]);
                        } else {
                            decode_one(|_| b, sc, sel, &mut rd, [&mut v, &mut d]);
                        }
                        (v, rd.parts().1)
                    };
                    let want = decode(false);
                    assert_eq!(decode(true), want, "decode, b = {b}, k = {k}");
                    // The receiver holds r + c·x.
                    let rx = |e: usize| got.0[e].wrapping_add(x[e] & sel) & mask(b);
                    assert!((0..k).all(|e| want.0[e] == rx(e)), "b = {b}, k = {k}");
                    assert_eq!(want.1, 3 + (k * b as usize) as u64, "b = {b}, k = {k}");
                }
            }
        }
    }
}
