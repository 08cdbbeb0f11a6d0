//! OTs derived from the engine's random COTs (the standard derandomisation,
//! e.g. Ferret §2 / Beaver's precomputed OT, with the IKNP pads of
//! Ishai–Kilian–Nissim–Petrank): random COT `j` gives the sender the pads
//! `y_0 = H(j, q_j)`, `y_1 = H(j, q_j ⊕ Δ)` ([`Tccr`], `j` never reused) and
//! the receiver `b_j` and `H(j, t_j) = y_{b_j}`. For a chosen choice `c_j`
//! the receiver sends `d_j = c_j ⊕ b_j` (one bit) and the sender uses the
//! pads in the order `(y_{d_j}, y_{1⊕d_j})`, of which the receiver knows the
//! `c_j`-th. Per slice of COTs ([`FerretSender::take`]) one message each way:
//! - random OT with chosen choices ([`FerretSender::send_rot`]): `1` bit;
//! - chosen-message `(2 1)-OT_ℓ` ([`FerretSender::send_ot`]): `1 + 2ℓ` bits;
//! - correlated OT over `Z_{2^ℓ}` ([`FerretSender::send_cot`]): the sender's
//!   output `r = y_{d}` (low ℓ bits), its correction `r + x − y_{1⊕d}`: `1 +
//!   ℓ` bits;
//!
//! plus the engine's share of its iterations, [`sci_ir::cost::ferret::derived`]
//! exactly. The same signatures as [`crate::ot::OtPack`]'s IKNP calls.

use super::source::{FerretReceiver, FerretSender};
use crate::crypto::Tccr;
use crate::net::Channel;
use crate::ot::{OtError, Word, check_bits};
use crate::pack::{BitReader, BitWriter, mask, mask128, pack_bits};

/// COTs hashed per step (in L1).
const STEP: usize = 1024;

impl FerretSender {
    /// The sender of `n` derived OTs: per OT `j`, `each(j, [a, b], w)` gets
    /// the pads of the receiver's choice 0 and 1 and writes its
    /// `answer_bits` bits of answer to `w`.
    fn send_derived(
        &mut self,
        ch: &mut Channel,
        n: usize,
        answer_bits: u64,
        mut each: impl FnMut(usize, [u128; 2], &mut BitWriter),
    ) -> Result<(), OtError> {
        let delta = self.delta();
        let h = Tccr::new();
        let (mut y0, mut y1) = (Vec::with_capacity(STEP), Vec::with_capacity(STEP));
        let mut done = 0;
        self.take(ch, n, |ch, j0, q| {
            let d = ch.recv_vec(q.len().div_ceil(8))?;
            let mut w = BitWriter::with_capacity_bits(q.len() as u64 * answer_bits);
            for (s, qs) in q.chunks(STEP).enumerate() {
                let tweak = j0 + (s * STEP) as u128;
                y0.clear();
                y0.extend_from_slice(qs);
                y1.clear();
                y1.extend(qs.iter().map(|x| *x ^ delta));
                h.hash_in_place(tweak, &mut y0);
                h.hash_in_place(tweak, &mut y1);
                for (i, (a, b)) in y0.iter().zip(&y1).enumerate() {
                    let k = s * STEP + i;
                    let flip = (d[k / 8] >> (k % 8)) & 1 == 1;
                    let pads = if flip { [b.0, a.0] } else { [a.0, b.0] };
                    each(done + k, pads, &mut w);
                }
            }
            done += q.len();
            if answer_bits > 0 {
                ch.send(&w.finish())?;
                ch.flush()?;
            }
            Ok(())
        })
    }

    /// Random 1-of-2 OT with the receiver's chosen choices
    /// ([`FerretReceiver::recv_rot`]): `n` pairs of random `bits`-bit
    /// messages. Cost: 1 bit per OT plus the engine's.
    pub fn send_rot<T: Word>(
        &mut self,
        ch: &mut Channel,
        n: usize,
        bits: u32,
    ) -> Result<Vec<[T; 2]>, OtError> {
        check_bits::<T>(bits)?;
        let m = mask128(bits);
        let mut out = Vec::with_capacity(n);
        self.send_derived(ch, n, 0, |_, [a, b], _| {
            out.push([T::from_u128(a & m), T::from_u128(b & m)])
        })?;
        Ok(out)
    }

    /// Chosen-message `(2 1)-OT_bits`: the receiver learns `msgs[j][c_j]`.
    /// Cost: `1 + 2·bits` bits per OT plus the engine's.
    pub fn send_ot<T: Word>(
        &mut self,
        ch: &mut Channel,
        msgs: &[[T; 2]],
        bits: u32,
    ) -> Result<(), OtError> {
        check_bits::<T>(bits)?;
        let m = mask128(bits);
        self.send_derived(ch, msgs.len(), 2 * u64::from(bits), |j, [a, b], w| {
            w.push_u128((msgs[j][0].to_u128() ^ a) & m, bits);
            w.push_u128((msgs[j][1].to_u128() ^ b) & m, bits);
        })
    }

    /// `(2 1)-COT_bits` over `Z_{2^bits}` (`bits` in 1..=64): the sender
    /// inputs `corr[j] = x_j` and gets random `r_j`; the receiver gets `r_j +
    /// c_j·x_j`. Cost: `1 + bits` bits per OT plus the engine's.
    pub fn send_cot(
        &mut self,
        ch: &mut Channel,
        corr: &[u64],
        bits: u32,
    ) -> Result<Vec<u64>, OtError> {
        check_bits::<u64>(bits)?;
        let m = mask(bits);
        let mut r = Vec::with_capacity(corr.len());
        self.send_derived(ch, corr.len(), u64::from(bits), |j, [a, b], w| {
            let (ra, rb) = (a as u64 & m, b as u64 & m);
            r.push(ra);
            w.push(ra.wrapping_add(corr[j]).wrapping_sub(rb) & m, bits);
        })?;
        Ok(r)
    }
}

impl FerretReceiver {
    /// The receiver of [`FerretSender::send_derived`]: per OT `j`, `each(j,
    /// c_j, y, r)` gets its choice, its pad `y = y_{c_j}` and the reader of
    /// the slice's answer.
    fn recv_derived(
        &mut self,
        ch: &mut Channel,
        choices: &[bool],
        answer_bits: u64,
        mut each: impl FnMut(usize, bool, u128, &mut BitReader),
    ) -> Result<(), OtError> {
        let h = Tccr::new();
        let mut y = Vec::with_capacity(STEP);
        let mut done = 0;
        let mut answer = Vec::new();
        self.take(ch, choices.len(), |ch, j0, t| {
            let c = &choices[done..done + t.len()];
            let d: Vec<bool> = t.iter().zip(c).map(|(t, &c)| c ^ t.bit(0)).collect();
            ch.send(&pack_bits(&d))?;
            ch.flush()?;
            answer.resize((t.len() as u64 * answer_bits).div_ceil(8) as usize, 0);
            ch.recv(&mut answer)?;
            let mut r = BitReader::new(&answer);
            for (s, ts) in t.chunks(STEP).enumerate() {
                y.clear();
                y.extend_from_slice(ts);
                h.hash_in_place(j0 + (s * STEP) as u128, &mut y);
                for (i, yi) in y.iter().enumerate() {
                    let k = s * STEP + i;
                    each(done + k, c[k], yi.0, &mut r);
                }
            }
            done += t.len();
            Ok(())
        })
    }

    /// Receiver of [`FerretSender::send_rot`]: the chosen random messages.
    pub fn recv_rot<T: Word>(
        &mut self,
        ch: &mut Channel,
        choices: &[bool],
        bits: u32,
    ) -> Result<Vec<T>, OtError> {
        check_bits::<T>(bits)?;
        let m = mask128(bits);
        let mut out = Vec::with_capacity(choices.len());
        self.recv_derived(ch, choices, 0, |_, _, y, _| out.push(T::from_u128(y & m)))?;
        Ok(out)
    }

    /// Receiver of [`FerretSender::send_ot`]: `msgs[j][choices[j]]`.
    pub fn recv_ot<T: Word>(
        &mut self,
        ch: &mut Channel,
        choices: &[bool],
        bits: u32,
    ) -> Result<Vec<T>, OtError> {
        check_bits::<T>(bits)?;
        let m = mask128(bits);
        let mut out = Vec::with_capacity(choices.len());
        self.recv_derived(ch, choices, 2 * u64::from(bits), |_, c, y, r| {
            let (e0, e1) = (r.read_u128(bits), r.read_u128(bits));
            out.push(T::from_u128((if c { e1 } else { e0 } ^ y) & m));
        })?;
        Ok(out)
    }

    /// Receiver of [`FerretSender::send_cot`]: `r_j + c_j·x_j mod 2^bits`.
    pub fn recv_cot(
        &mut self,
        ch: &mut Channel,
        choices: &[bool],
        bits: u32,
    ) -> Result<Vec<u64>, OtError> {
        check_bits::<u64>(bits)?;
        let m = mask(bits);
        let mut out = Vec::with_capacity(choices.len());
        self.recv_derived(ch, choices, u64::from(bits), |_, c, y, r| {
            let corr = r.read(bits);
            out.push((y as u64).wrapping_add(corr & u64::from(c).wrapping_neg()) & m);
        })?;
        Ok(out)
    }
}
