//! Additive correlated OT with a multi-field payload, on top of random OT.
//!
//! Instance `j` correlates a vector of fields of widths `w_1, …, w_F` (each
//! 1..=64 bits, the same layout for all instances): the sender inputs `Δ_j`
//! and gets random `r_j`; the receiver, with choice bit `c_j`, gets
//! `r_j + c_j·Δ_j` fieldwise mod `2^{w_f}`. From a random OT with pads
//! `(y_0, y_1)` (Asharov et al., CCS 2013): the sender takes `r = y_0` and
//! sends `y_0 + Δ − y_1`; the receiver adds it to `y_c` if `c = 1`. The pads
//! are 128 bits; a payload of `W = Σ w_f > 128` bits stretches them with the
//! AES PRG. Cost: λ + W bits per instance, two messages (receiver first).
//!
//! Fields let one OT carry, e.g., a value and its sign bit at their own
//! widths (max-pooling), which the OT layer's equal-width vectors cannot.

use super::bits::Bits;
use super::{Ctx, ProtoError};
use crate::crypto::{Block, Prg};
use crate::net::pack::{BitReader, BitWriter, mask, packed_len};
use crate::ot::LAMBDA;

/// Splits a 128-bit pad into the fields of `widths` (`total` bits in all),
/// stretching it with the PRG when the fields need more than 128 bits.
fn fields(y: u128, widths: &[u32], total: u32, out: &mut [u64]) {
    if total <= 128 {
        let mut y = y;
        for (o, &w) in out.iter_mut().zip(widths) {
            *o = y as u64 & mask(w);
            y >>= w;
        }
    } else {
        let mut v = vec![0u8; packed_len(1, total)];
        Prg::new(Block(y)).fill_bytes(&mut v);
        let mut r = BitReader::new(&v);
        for (o, &w) in out.iter_mut().zip(widths) {
            *o = r.read(w);
        }
    }
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

/// Sender: `delta` holds `n·F` field values (instance-major); returns the
/// random `r` (same layout). The receiver runs [`recv`] with `n` choices.
pub(crate) fn send(
    ctx: &mut Ctx<'_>,
    widths: &[u32],
    delta: &[u64],
) -> Result<Vec<u64>, ProtoError> {
    let mut r = send_segments(ctx, &[(widths, delta)])?;
    Ok(r.pop().unwrap_or_default())
}

/// Receiver: returns `r_j + c_j·Δ_j` fieldwise (`n·F` values).
pub(crate) fn recv(
    ctx: &mut Ctx<'_>,
    widths: &[u32],
    choices: &Bits,
) -> Result<Vec<u64>, ProtoError> {
    let mut r = recv_segments(ctx, &[(widths, choices)])?;
    Ok(r.pop().unwrap_or_default())
}

/// Number of instances of a segment with field layout `widths` and `len`
/// values.
fn instances(widths: &[u32], len: usize) -> usize {
    len.checked_div(widths.len()).unwrap_or(0)
}

/// [`send`] for several segments, each with its own field layout, in one OT
/// batch and one correction message: `Σ_s n_s` instances.
pub(crate) fn send_segments(
    ctx: &mut Ctx<'_>,
    segs: &[(&[u32], &[u64])],
) -> Result<Vec<Vec<u64>>, ProtoError> {
    let n: usize = segs.iter().map(|(w, d)| instances(w, d.len())).sum();
    let pads = ctx.ot.send_rot::<u128>(ctx.ch, n, 128)?;
    let bits: u64 = segs
        .iter()
        .map(|(w, d)| w.iter().sum::<u32>() as u64 * instances(w, d.len()) as u64)
        .sum();
    let mut w = BitWriter::with_capacity_bits(bits);
    let mut pads = pads.iter();
    let mut out = Vec::with_capacity(segs.len());
    for &(widths, delta) in segs {
        let nf = widths.len();
        let total: u32 = widths.iter().sum();
        let mut r = vec![0u64; delta.len()];
        let mut y1 = vec![0u64; nf];
        // `pads` last in the zip: it must not be advanced past the segment.
        for ((rj, dj), pad) in r
            .chunks_exact_mut(nf)
            .zip(delta.chunks_exact(nf))
            .zip(pads.by_ref())
        {
            fields(pad[0], widths, total, rj);
            fields(pad[1], widths, total, &mut y1);
            for (((rv, y), d), &wd) in rj.iter().zip(&y1).zip(dj).zip(widths) {
                w.push(rv.wrapping_add(*d).wrapping_sub(*y) & mask(wd), wd);
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
    segs: &[(&[u32], &Bits)],
) -> Result<Vec<Vec<u64>>, ProtoError> {
    debug_assert!(segs.iter().all(|(w, _)| !w.is_empty()));
    let choices: Vec<bool> = segs.iter().flat_map(|(_, c)| c.to_bools()).collect();
    let n = choices.len();
    let pads = ctx.ot.recv_rot::<u128>(ctx.ch, &choices, 128)?;
    let bits: u64 = segs
        .iter()
        .map(|(w, c)| w.iter().sum::<u32>() as u64 * c.len() as u64)
        .sum();
    let bytes = if n > 0 {
        ctx.ch.recv_vec(bits.div_ceil(8) as usize)?
    } else {
        Vec::new()
    };
    let mut rd = BitReader::new(&bytes);
    let mut pads = pads.iter();
    let mut out = Vec::with_capacity(segs.len());
    for &(widths, c) in segs {
        let nf = widths.len();
        let total: u32 = widths.iter().sum();
        let mut o = vec![0u64; c.len() * nf];
        for (j, (oj, pad)) in o.chunks_exact_mut(nf).zip(pads.by_ref()).enumerate() {
            fields(*pad, widths, total, oj);
            let cj = c.bit(j).wrapping_neg();
            for (v, &wd) in oj.iter_mut().zip(widths) {
                let corr = rd.read(wd);
                *v = v.wrapping_add(corr & cj) & mask(wd);
            }
        }
        out.push(o);
    }
    Ok(out)
}
