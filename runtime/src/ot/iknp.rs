//! IKNP OT extension: chosen-message, random and correlated 1-of-2 OT.
//!
//! Built on the column extension of `ext` (Ishai–Kilian–Nissim–Petrank,
//! CRYPTO 2003; Asharov–Lindell–Schneider–Zohner, CCS 2013) with the sender's
//! pads `y_{j,0} = H(j, q_j)`, `y_{j,1} = H(j, q_j ⊕ s)` and the receiver's
//! `H(j, t_j) = y_{j,b_j}`, `H` the Guo–Katz–Wang–Yu TCCR hash
//! ([`crate::crypto::Tccr`]) and `j` the never-reused OT index.
//!
//! Per instance, the receiver sends λ = 128 bits (one row of the extension
//! matrix, see [`super`] for the padding of a batch) and the sender answers
//! with the packed messages:
//! - [`IknpSender::send_ot`]: `(2 1)-OT_ℓ`, ℓ ≤ 128: `m_0 ⊕ y_0, m_1 ⊕ y_1`,
//!   2ℓ bits — total λ + 2ℓ;
//! - [`IknpSender::send_rot`]: random OT, the sender gets `(y_0, y_1)`, nothing
//!   more is sent — total λ;
//! - [`IknpSender::send_cot`]: `(2 1)-COT_ℓ`, ℓ ≤ 64 (Asharov et al.): the
//!   sender gets `r = y_0 mod 2^ℓ`, sends `d = r + x − y_1 mod 2^ℓ`, the
//!   receiver outputs `y_b + b·d = r + b·x` — total λ + ℓ;
//! - [`IknpSender::send_cot_vec`]: the wide COT of the OT-based matrix product
//!   (paper §5.1.1): instance `j` correlates a vector of `k` elements of
//!   `w_j` bits; `y_0`, `y_1` are stretched to `k` words by the AES PRG when
//!   `k > 2` — total λ + k·w_j.
//!
//! All are two messages (receiver → sender → receiver; random OT only the
//! first): one round for the receiver.

use super::ext::{ExtReceiver, ExtSender};
use super::{OtError, Word, check, check_bits};
use crate::crypto::{Block, Prg, Tccr};
use crate::net::Channel;
use crate::net::pack::{BitReader, BitWriter, mask, mask128, packed_len};

/// Stretches a 128-bit pad to `out.len()` words: the two halves of `y` when
/// at most two are needed, else the AES PRG seeded with `y`.
#[inline]
fn expand(y: Block, out: &mut [u64]) {
    match out {
        [a] => *a = y.lo(),
        [a, b] => {
            *a = y.lo();
            *b = y.hi();
        }
        _ => Prg::new(y).fill_u64s(out),
    }
}

/// Validates wide-COT arguments; returns the total correction bits.
pub(crate) fn check_vec(
    n: usize,
    k: usize,
    widths: &[u8],
    what: &str,
    len: usize,
) -> Result<u64, OtError> {
    check(k >= 1, || "wide COT needs k >= 1".into())?;
    check(len == n * k, || {
        format!("{what} has {len} entries, expected {n}·{k}")
    })?;
    check(widths.iter().all(|&w| (1..=64).contains(&w)), || {
        "COT element widths must be in 1..=64".into()
    })?;
    Ok(widths.iter().map(|&w| w as u64 * k as u64).sum())
}

/// Validates the wide-COT receiver's arguments; returns the total
/// correction bits.
pub(crate) fn check_recv_vec(choices: &[bool], k: usize, widths: &[u8]) -> Result<u64, OtError> {
    check(choices.len() == widths.len(), || {
        format!("{} choices for {} widths", choices.len(), widths.len())
    })?;
    check_vec(widths.len(), k, widths, "output", widths.len() * k)
}

/// The sender side of IKNP (the base-OT receiver).
pub struct IknpSender {
    ext: ExtSender<1>,
    h: Tccr,
}

impl std::fmt::Debug for IknpSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IknpSender")
    }
}

impl IknpSender {
    /// Runs the 128 base OTs (as their receiver). Cost: 32 + 128·32 bytes,
    /// one round.
    pub fn setup(ch: &mut Channel) -> Result<Self, OtError> {
        Ok(IknpSender {
            ext: ExtSender::setup(ch)?,
            h: Tccr::new(),
        })
    }

    /// Extends `n` instances and calls `f(offset, y0, y1)` per step.
    fn pads(
        &mut self,
        ch: &mut Channel,
        n: usize,
        mut f: impl FnMut(usize, &[Block], &[Block]),
    ) -> Result<(), OtError> {
        let s = self.ext.s()[0];
        let h = &self.h;
        let (mut y0, mut y1) = (Vec::new(), Vec::new());
        self.ext.extend(ch, n, |off, rows, tweak| {
            y0.clear();
            y0.extend_from_slice(&rows[0]);
            y1.clear();
            y1.extend(rows[0].iter().map(|q| *q ^ s));
            h.hash_in_place(tweak, &mut y0);
            h.hash_in_place(tweak, &mut y1);
            f(off, &y0, &y1);
            Ok(())
        })
    }

    /// Random 1-of-2 OT: returns `n` pairs of random `bits`-bit messages; the
    /// receiver learns one of each. Cost λ bits per instance.
    pub fn send_rot<T: Word>(
        &mut self,
        ch: &mut Channel,
        n: usize,
        bits: u32,
    ) -> Result<Vec<[T; 2]>, OtError> {
        check_bits::<T>(bits)?;
        let m = mask128(bits);
        let mut out = Vec::with_capacity(n);
        self.pads(ch, n, |_, y0, y1| {
            out.extend(
                y0.iter()
                    .zip(y1)
                    .map(|(a, b)| [T::from_u128(a.0 & m), T::from_u128(b.0 & m)]),
            );
        })?;
        Ok(out)
    }

    /// Chosen-message `(2 1)-OT_bits`: the receiver learns `msgs[j][b_j]`
    /// (reduced mod `2^bits`). Cost λ + 2·bits per instance.
    pub fn send_ot<T: Word>(
        &mut self,
        ch: &mut Channel,
        msgs: &[[T; 2]],
        bits: u32,
    ) -> Result<(), OtError> {
        check_bits::<T>(bits)?;
        let m = mask128(bits);
        let mut w = BitWriter::with_capacity_bits(2 * bits as u64 * msgs.len() as u64);
        self.pads(ch, msgs.len(), |off, y0, y1| {
            for ((pair, a), b) in msgs[off..].iter().zip(y0).zip(y1) {
                w.push_u128((pair[0].to_u128() ^ a.0) & m, bits);
                w.push_u128((pair[1].to_u128() ^ b.0) & m, bits);
            }
        })?;
        ch.send(&w.finish())?;
        ch.flush()?;
        Ok(())
    }

    /// `(2 1)-COT_bits` (`bits` in 1..=64): the sender inputs `corr[j] = x_j`
    /// and gets random `r_j`; the receiver gets `r_j + b_j·x_j mod 2^bits`.
    /// Cost λ + bits per instance.
    pub fn send_cot(
        &mut self,
        ch: &mut Channel,
        corr: &[u64],
        bits: u32,
    ) -> Result<Vec<u64>, OtError> {
        check_bits::<u64>(bits)?;
        self.send_cot_vec(ch, corr, 1, &vec![bits as u8; corr.len()])
    }

    /// Wide COT: `n = widths.len()` instances; instance `j` correlates the
    /// vector `x_j = corr[j·k..(j+1)·k]` of elements of `widths[j]` bits (1..=64).
    /// Returns the sender's random `r` (same layout); the receiver gets
    /// `r_j + b_j·x_j` elementwise mod `2^{widths[j]}`. Cost λ + `k·widths[j]`
    /// bits per instance (the correction message is exactly
    /// `⌈Σ_j k·widths[j] / 8⌉` bytes).
    pub fn send_cot_vec(
        &mut self,
        ch: &mut Channel,
        corr: &[u64],
        k: usize,
        widths: &[u8],
    ) -> Result<Vec<u64>, OtError> {
        let total = check_vec(widths.len(), k, widths, "correlation", corr.len())?;
        let mut r = vec![0u64; corr.len()];
        let mut p = vec![0u64; k];
        let mut w = BitWriter::with_capacity_bits(total);
        self.pads(ch, widths.len(), |off, y0, y1| {
            for (j, (a, b)) in (off..).zip(y0.iter().zip(y1)) {
                let wj = widths[j] as u32;
                let m = mask(wj);
                let rj = &mut r[j * k..(j + 1) * k];
                expand(*a, rj);
                expand(*b, &mut p);
                for ((rv, pv), x) in rj.iter_mut().zip(&p).zip(&corr[j * k..(j + 1) * k]) {
                    *rv &= m;
                    w.push(rv.wrapping_add(*x).wrapping_sub(*pv), wj);
                }
            }
        })?;
        ch.send(&w.finish())?;
        ch.flush()?;
        Ok(r)
    }
}

/// The receiver side of IKNP (the base-OT sender).
pub struct IknpReceiver {
    ext: ExtReceiver<1>,
    h: Tccr,
}

impl std::fmt::Debug for IknpReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IknpReceiver")
    }
}

impl IknpReceiver {
    /// Runs the 128 base OTs (as their sender). Cost: 32 + 128·32 bytes.
    pub fn setup(ch: &mut Channel) -> Result<Self, OtError> {
        Ok(IknpReceiver {
            ext: ExtReceiver::setup(ch)?,
            h: Tccr::new(),
        })
    }

    /// Extends with the given choices and calls `f(offset, y)` per step,
    /// `y[j] = y_{offset+j, b}`.
    fn pads(
        &mut self,
        ch: &mut Channel,
        choices: &[bool],
        mut f: impl FnMut(usize, &[Block]),
    ) -> Result<(), OtError> {
        let n = choices.len();
        let h = &self.h;
        let mut y = Vec::new();
        self.ext.extend(
            ch,
            n,
            |range, cols| {
                let cb = range.len() / 8;
                let (first, rest) = cols.split_at_mut(cb);
                let mine = choices.get(range.start..range.end.min(n)).unwrap_or(&[]);
                for (j, &c) in mine.iter().enumerate() {
                    first[j / 8] |= (c as u8) << (j % 8);
                }
                rest.chunks_exact_mut(cb)
                    .for_each(|col| col.copy_from_slice(first));
            },
            |off, rows, tweak| {
                y.clear();
                y.extend_from_slice(&rows[0]);
                h.hash_in_place(tweak, &mut y);
                f(off, &y);
                Ok(())
            },
        )
    }

    /// Receiver of [`IknpSender::send_rot`]: the chosen random messages.
    pub fn recv_rot<T: Word>(
        &mut self,
        ch: &mut Channel,
        choices: &[bool],
        bits: u32,
    ) -> Result<Vec<T>, OtError> {
        check_bits::<T>(bits)?;
        let m = mask128(bits);
        let mut out = Vec::with_capacity(choices.len());
        self.pads(ch, choices, |_, y| {
            out.extend(y.iter().map(|v| T::from_u128(v.0 & m)))
        })?;
        Ok(out)
    }

    /// Receiver of [`IknpSender::send_ot`]: `msgs[j][choices[j]]`.
    pub fn recv_ot<T: Word>(
        &mut self,
        ch: &mut Channel,
        choices: &[bool],
        bits: u32,
    ) -> Result<Vec<T>, OtError> {
        check_bits::<T>(bits)?;
        let m = mask128(bits);
        let mut ys = Vec::with_capacity(choices.len());
        self.pads(ch, choices, |_, y| ys.extend(y.iter().map(|v| v.0 & m)))?;
        let bytes = ch.recv_vec(packed_len(2 * choices.len(), bits))?;
        let mut r = BitReader::new(&bytes);
        Ok(ys
            .iter()
            .zip(choices)
            .map(|(y, &b)| {
                let c0 = r.read_u128(bits);
                let c1 = r.read_u128(bits);
                T::from_u128(if b { c1 } else { c0 } ^ y)
            })
            .collect())
    }

    /// Receiver of [`IknpSender::send_cot`]: `r_j + b_j·x_j mod 2^bits`.
    pub fn recv_cot(
        &mut self,
        ch: &mut Channel,
        choices: &[bool],
        bits: u32,
    ) -> Result<Vec<u64>, OtError> {
        check_bits::<u64>(bits)?;
        self.recv_cot_vec(ch, choices, 1, &vec![bits as u8; choices.len()])
    }

    /// Receiver of [`IknpSender::send_cot_vec`]: `r_j + b_j·x_j` elementwise
    /// mod `2^{widths[j]}`, `k` elements per instance.
    pub fn recv_cot_vec(
        &mut self,
        ch: &mut Channel,
        choices: &[bool],
        k: usize,
        widths: &[u8],
    ) -> Result<Vec<u64>, OtError> {
        let total = check_recv_vec(choices, k, widths)?;
        let mut v = vec![0u64; widths.len() * k];
        self.pads(ch, choices, |off, y| {
            for (j, yj) in (off..).zip(y) {
                expand(*yj, &mut v[j * k..(j + 1) * k]);
            }
        })?;
        let bytes = ch.recv_vec(total.div_ceil(8) as usize)?;
        let mut r = BitReader::new(&bytes);
        for ((vj, &wj), &b) in v.chunks_exact_mut(k).zip(widths).zip(choices) {
            let m = mask(wj as u32);
            for e in vj.iter_mut() {
                let d = r.read(wj as u32);
                *e = e.wrapping_add(d & (b as u64).wrapping_neg()) & m;
            }
        }
        Ok(v)
    }
}
