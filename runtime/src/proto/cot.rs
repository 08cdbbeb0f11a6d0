//! Additive correlated OT with a multi-field payload, on top of random OT.
//!
//! Instance `j` correlates a vector of fields with moduli `n_1, …, n_F`
//! ([`Modulus`]: `2^{w}` or odd `n`; the same layout for all instances): the
//! sender inputs `Δ_j` and gets random `r_j`; the receiver, with choice bit
//! `c_j`, gets `r_j + c_j·Δ_j` fieldwise mod `n_f`. From a random OT with
//! pads `(y_0, y_1)` (Asharov et al., CCS 2013): the sender takes `r = G(y_0)`
//! and sends `G(y_0) + Δ − G(y_1)`; the receiver adds it to `G(y_c)` if `c =
//! 1`. A field mod `2^w` takes `w` bits of the pad; a field mod an odd `n`
//! takes 128 bits, reduced mod `n` (statistical distance below `2^−65` from
//! uniform, [`Modulus::pad_bits`]). The pads are 128 bits; fields needing
//! more stretch them with [`Expander`]. Cost: λ + W bits per instance, `W =
//! Σ_f ⌈log₂ n_f⌉`, two messages (receiver first).
//!
//! Fields let one OT carry, e.g., a value and its sign bit at their own
//! widths (max-pooling), which the OT layer's equal-width vectors cannot.
//!
//! [`send_wide`] / [`recv_wide`] are the long-vector case of the OT-based
//! matrix product (§5.1.1): instance `j` correlates a vector of `k` elements
//! of `w_j` bits, the correlations are read and the outputs consumed through
//! closures, in steps that stay in cache, so nothing of size `n·k` is ever
//! materialised (the vectors of a matrix product repeat the same weight row
//! ℓ times).
//!
//! # Expansion of the pads
//! `G(y)` for a pad `y` is the sequence of blocks `π(y ⊕ t) ⊕ y ⊕ t`, `t = 0,
//! 1, …`, with `π` AES-128 under a fixed public key (Matyas–Meyer–Oseas with
//! a fixed key; Bellare et al., S&P 2013; Guo et al., S&P 2020). The pad the
//! receiver did not choose is a correlation-robust hash output it cannot
//! compute (128 bits of pseudo-entropy), and in the random-permutation model
//! `G(y)` is uniform unless some query to `π` hits `y ⊕ t` — probability at
//! most `q·T/2^128` for `q` queries and `T` expanded blocks. Unlike a PRG
//! keyed by `y`, this needs no key schedule per pad and runs on whole batches
//! of blocks.

use aes::Aes128;
use aes::cipher::array::Array;
use aes::cipher::{BlockCipherEncrypt, KeyInit};

use super::bits::Bits;
use super::modulus::Modulus;
use super::{Ctx, ProtoError};
use crate::crypto::{Block, as_aes_blocks_mut};
use crate::net::pack::{BitReader, BitWriter, mask, mask128, packed_len};
use crate::ot::LAMBDA;

/// The fixed public AES key of the expansion (the first 128 bits of the
/// fractional part of `e`; any public constant works).
const EXPAND_KEY: u128 = 0xb7e1_5162_8aed_2a6a_bf71_5880_9cf4_f3c7;

/// Pad expansion `G` (see the [module documentation](self)).
pub(crate) struct Expander {
    pi: Aes128,
    buf: Vec<Block>,
}

impl Expander {
    pub(crate) fn new() -> Expander {
        Expander {
            pi: Aes128::new(&Array::from(EXPAND_KEY.to_le_bytes())),
            buf: Vec::new(),
        }
    }

    /// `out[j·k .. (j+1)·k]` ← the first `k` 64-bit words of `G(seeds[j])`
    /// (block `t` gives words `2t` and `2t + 1`, low half first).
    pub(crate) fn expand(&mut self, seeds: &[u128], k: usize, out: &mut [u64]) {
        let bpi = k.div_ceil(2);
        self.buf.resize(seeds.len() * bpi, Block::ZERO);
        for (b, &y) in self.buf.chunks_exact_mut(bpi).zip(seeds) {
            for (t, x) in b.iter_mut().enumerate() {
                *x = Block(y ^ t as u128);
            }
        }
        self.pi.encrypt_blocks(as_aes_blocks_mut(&mut self.buf));
        for ((o, b), &y) in out
            .chunks_exact_mut(k)
            .zip(self.buf.chunks_exact(bpi))
            .zip(seeds)
        {
            let (pairs, rest) = o.as_chunks_mut::<2>();
            for (t, (pw, x)) in pairs.iter_mut().zip(b).enumerate() {
                let v = x.0 ^ y ^ t as u128;
                *pw = [v as u64, (v >> 64) as u64];
            }
            if let (Some(last), Some(x)) = (rest.first_mut(), b.last()) {
                *last = (x.0 ^ y ^ (bpi - 1) as u128) as u64;
            }
        }
    }
}

/// Derives the fields of `mods` from a 128-bit pad (`total` pad bits in all,
/// [`pad_total`]), expanding it with `G` when they need more than 128 bits.
fn fields(ex: &mut Expander, y: u128, mods: &[Modulus], total: u32, out: &mut [u64]) {
    if total <= 128 {
        let mut y = y;
        for (o, m) in out.iter_mut().zip(mods) {
            let w = m.pad_bits();
            *o = m.elem_from_pad(y & mask128(w));
            y = y.checked_shr(w).unwrap_or(0);
        }
    } else {
        let mut words = vec![0u64; total.div_ceil(64) as usize];
        ex.expand(&[y], words.len(), &mut words);
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut r = BitReader::new(&bytes);
        for (o, m) in out.iter_mut().zip(mods) {
            *o = m.elem_from_pad(r.read_u128(m.pad_bits()));
        }
    }
}

/// Pad bits consumed by one instance with fields `mods`.
fn pad_total(mods: &[Modulus]) -> u32 {
    mods.iter().map(|m| m.pad_bits()).sum()
}

/// Wire bits of one instance's correction with fields `mods`: `Σ ⌈log₂ n_f⌉`.
pub(crate) fn wire_bits(mods: &[Modulus]) -> u32 {
    mods.iter().map(|m| m.bits()).sum()
}

/// Exact bits of one correlated OT batch of `n` instances with `total`
/// payload bits each: the receiver's λ-bit rows for `8⌈n/8⌉` instances and
/// the sender's `⌈n·total/8⌉` bytes.
pub(crate) fn cost_bits(total: u32, n: usize) -> u64 {
    if n == 0 {
        return 0;
    }
    (LAMBDA * n.next_multiple_of(8)) as u64 + 8 * packed_len(n, total) as u64
}

/// Sender: `delta` holds `n·F` reduced field values (instance-major);
/// returns the random `r` (same layout). The receiver runs [`recv`] with `n`
/// choices.
pub(crate) fn send(
    ctx: &mut Ctx<'_>,
    mods: &[Modulus],
    delta: &[u64],
) -> Result<Vec<u64>, ProtoError> {
    let mut r = send_segments(ctx, &[(mods, delta)])?;
    Ok(r.pop().unwrap_or_default())
}

/// Receiver: returns `r_j + c_j·Δ_j` fieldwise (`n·F` values).
pub(crate) fn recv(
    ctx: &mut Ctx<'_>,
    mods: &[Modulus],
    choices: &Bits,
) -> Result<Vec<u64>, ProtoError> {
    let mut r = recv_segments(ctx, &[(mods, choices)])?;
    Ok(r.pop().unwrap_or_default())
}

/// Number of instances of a segment with field layout `mods` and `len`
/// values.
fn instances(mods: &[Modulus], len: usize) -> usize {
    len.checked_div(mods.len()).unwrap_or(0)
}

/// [`send`] for several segments, each with its own field layout, in one OT
/// batch and one correction message: `Σ_s n_s` instances.
pub(crate) fn send_segments(
    ctx: &mut Ctx<'_>,
    segs: &[(&[Modulus], &[u64])],
) -> Result<Vec<Vec<u64>>, ProtoError> {
    let n: usize = segs.iter().map(|(m, d)| instances(m, d.len())).sum();
    let pads = ctx.ot.send_rot::<u128>(ctx.ch, n, 128)?;
    let bits: u64 = segs
        .iter()
        .map(|(m, d)| wire_bits(m) as u64 * instances(m, d.len()) as u64)
        .sum();
    let mut w = BitWriter::with_capacity_bits(bits);
    let mut pads = pads.iter();
    let mut ex = Expander::new();
    let mut out = Vec::with_capacity(segs.len());
    for &(mods, delta) in segs {
        let nf = mods.len();
        let total = pad_total(mods);
        let mut r = vec![0u64; delta.len()];
        let mut y1 = vec![0u64; nf];
        // `pads` last in the zip: it must not be advanced past the segment.
        for ((rj, dj), pad) in r
            .chunks_exact_mut(nf)
            .zip(delta.chunks_exact(nf))
            .zip(pads.by_ref())
        {
            fields(&mut ex, pad[0], mods, total, rj);
            fields(&mut ex, pad[1], mods, total, &mut y1);
            for (((rv, y), d), md) in rj.iter().zip(&y1).zip(dj).zip(mods) {
                w.push(md.sub(md.add(*rv, *d), *y), md.bits());
            }
        }
        out.push(r);
    }
    if n > 0 {
        ctx.ch.send(&w.finish())?;
        ctx.ch.flush()?;
    }
    Ok(out)
}

/// [`recv`] for several segments (see [`send_segments`]).
pub(crate) fn recv_segments(
    ctx: &mut Ctx<'_>,
    segs: &[(&[Modulus], &Bits)],
) -> Result<Vec<Vec<u64>>, ProtoError> {
    debug_assert!(segs.iter().all(|(m, _)| !m.is_empty()));
    let choices: Vec<bool> = segs.iter().flat_map(|(_, c)| c.to_bools()).collect();
    let n = choices.len();
    let pads = ctx.ot.recv_rot::<u128>(ctx.ch, &choices, 128)?;
    let bits: u64 = segs
        .iter()
        .map(|(m, c)| wire_bits(m) as u64 * c.len() as u64)
        .sum();
    let bytes = if n > 0 {
        ctx.ch.recv_vec(bits.div_ceil(8) as usize)?
    } else {
        Vec::new()
    };
    let mut rd = BitReader::new(&bytes);
    let mut pads = pads.iter();
    let mut ex = Expander::new();
    let mut out = Vec::with_capacity(segs.len());
    for &(mods, c) in segs {
        let nf = mods.len();
        let total = pad_total(mods);
        let mut o = vec![0u64; c.len() * nf];
        for (j, (oj, pad)) in o.chunks_exact_mut(nf).zip(pads.by_ref()).enumerate() {
            fields(&mut ex, *pad, mods, total, oj);
            let cj = c.bit(j).wrapping_neg();
            for (v, md) in oj.iter_mut().zip(mods) {
                // Reduced: a peer's out-of-range correction gives a wrong but
                // valid share, never an unreduced one.
                let corr = md.reduce(rd.read(md.bits()));
                *v = md.add(*v, corr & cj);
            }
        }
        out.push(o);
    }
    Ok(out)
}

/// Instances per step of [`send_wide`] / [`recv_wide`] for vectors of `k`
/// words (about 2^13 words per buffer).
fn step(k: usize) -> usize {
    (1 << 13) / k.max(1) + 1
}

/// Sender of `n` wide correlated OTs: instance `j` correlates the `k`
/// words `corr(j)` mod `2^{width(j)}`; `out(j, r_j)` receives the sender's
/// random vector. Cost λ + k·width(j) bits per instance.
pub(crate) fn send_wide<'a>(
    ctx: &mut Ctx<'_>,
    n: usize,
    k: usize,
    width: impl Fn(usize) -> u32,
    corr: impl Fn(usize) -> &'a [u64],
    mut out: impl FnMut(usize, &[u64]),
) -> Result<(), ProtoError> {
    if n == 0 || k == 0 {
        return Ok(());
    }
    let pads = ctx.ot.send_rot::<u128>(ctx.ch, n, 128)?;
    let bits: u64 = (0..n).map(|j| width(j) as u64 * k as u64).sum();
    let mut w = BitWriter::with_capacity_bits(bits);
    let mut ex = Expander::new();
    let st = step(k);
    let (mut y0, mut y1) = (Vec::new(), Vec::new());
    let (mut r, mut p) = (vec![0u64; st * k], vec![0u64; st * k]);
    for (c, chunk) in pads.chunks(st).enumerate() {
        y0.clear();
        y1.clear();
        y0.extend(chunk.iter().map(|p| p[0]));
        y1.extend(chunk.iter().map(|p| p[1]));
        let len = chunk.len() * k;
        ex.expand(&y0, k, &mut r[..len]);
        ex.expand(&y1, k, &mut p[..len]);
        for (i, (rj, pj)) in r[..len]
            .chunks_exact_mut(k)
            .zip(p.chunks_exact(k))
            .enumerate()
        {
            let j = c * st + i;
            let wd = width(j);
            let m = mask(wd);
            for ((rv, &pv), &x) in rj.iter_mut().zip(pj).zip(corr(j)) {
                *rv &= m;
                w.push(rv.wrapping_add(x).wrapping_sub(pv), wd);
            }
            out(j, rj);
        }
    }
    ctx.ch.send(&w.finish())?;
    ctx.ch.flush()?;
    Ok(())
}

/// Receiver of [`send_wide`]: `out(j, v_j)` receives `r_j + c_j·Δ_j`
/// elementwise mod `2^{width(j)}`.
pub(crate) fn recv_wide(
    ctx: &mut Ctx<'_>,
    choices: &[bool],
    k: usize,
    width: impl Fn(usize) -> u32,
    mut out: impl FnMut(usize, &[u64]),
) -> Result<(), ProtoError> {
    let n = choices.len();
    if n == 0 || k == 0 {
        return Ok(());
    }
    let pads = ctx.ot.recv_rot::<u128>(ctx.ch, choices, 128)?;
    let bits: u64 = (0..n).map(|j| width(j) as u64 * k as u64).sum();
    let bytes = ctx.ch.recv_vec(bits.div_ceil(8) as usize)?;
    let mut rd = BitReader::new(&bytes);
    let mut ex = Expander::new();
    let st = step(k);
    let mut v = vec![0u64; st * k];
    for (c, chunk) in pads.chunks(st).enumerate() {
        let len = chunk.len() * k;
        ex.expand(chunk, k, &mut v[..len]);
        for (i, vj) in v[..len].chunks_exact_mut(k).enumerate() {
            let j = c * st + i;
            let wd = width(j);
            let m = mask(wd);
            let sel = u64::from(choices[j]).wrapping_neg();
            for e in vj.iter_mut() {
                *e = e.wrapping_add(rd.read(wd) & sel) & m;
            }
            out(j, vj);
        }
    }
    Ok(())
}
