//! Kolesnikov–Kumaresan 1-of-N OT extension, `N` in 2..=256.
//!
//! V. Kolesnikov and R. Kumaresan, "Improved OT Extension for Transferring
//! Short Secrets", CRYPTO 2013. The IKNP column extension of `ext` runs with
//! 256 base OTs, and the receiver's column bits are the code word `C(r_j)` of
//! its choice `r_j` instead of a repeated choice bit. `C` is the
//! Walsh–Hadamard code of dimension 8, `C(v)_i = ⟨v, i⟩ mod 2` for
//! `i ∈ [256]`: 256 code words of 256 bits with pairwise distance exactly 128,
//! which gives λ = 128 bits of security with 256-bit rows (the factor 2 of the
//! paper's footnote 7). By rows, `q_j = t_j ⊕ (C(r_j) ∧ s)`; the sender's pad
//! for message `v` is `H(j, q_j ⊕ (C(v) ∧ s))` and the receiver knows
//! `H(j, t_j)`, the pad of `v = r_j`. `H` is re-keyed AES-256
//! ([`crate::crypto::RkAes256`], as in the paper, §6.1) with the OT index `j`
//! as plaintext.
//!
//! Cost per instance: 2λ = 256 bits from the receiver (a 256-bit row; see
//! [`super`] for the padding of a batch) and `N·ℓ` bits of masked messages
//! from the sender: 2λ + N·ℓ. Two messages, one round for the receiver. Set-up:
//! 256 base OTs, 32 + 256·32 bytes.

use super::ext::{ExtReceiver, ExtSender, xor_into};
use super::{OtError, Word, check, check_bits};
use crate::crypto::{Block, RkAes256};
use crate::net::Channel;
use crate::net::pack::{BitReader, BitWriter, mask128, packed_len};

/// The Walsh–Hadamard code word of `v`: bit `i` (of 256) is the parity of
/// `v & i`; bits 0..128 in block 0, 128..256 in block 1.
pub fn codeword(v: u8) -> [Block; 2] {
    let mut c = [0u128; 2];
    for i in 0..256usize {
        let bit = ((v as usize & i).count_ones() & 1) as u128;
        c[i / 128] |= bit << (i % 128);
    }
    [Block(c[0]), Block(c[1])]
}

fn check_n(n_msgs: usize) -> Result<(), OtError> {
    check((2..=256).contains(&n_msgs), || {
        format!("1-of-N OT needs N in 2..=256, got {n_msgs}")
    })
}

/// Validates the sender's arguments (before any set-up or traffic).
pub(crate) fn check_send<T: Word>(n_msgs: usize, msgs: &[T], bits: u32) -> Result<(), OtError> {
    check_n(n_msgs)?;
    check_bits::<T>(bits)?;
    check(msgs.len().is_multiple_of(n_msgs), || {
        format!("{} messages is not a multiple of N = {n_msgs}", msgs.len())
    })
}

/// Validates the receiver's arguments (before any set-up or traffic).
pub(crate) fn check_recv<T: Word>(n_msgs: usize, choices: &[u8], bits: u32) -> Result<(), OtError> {
    check_n(n_msgs)?;
    check_bits::<T>(bits)?;
    check(choices.iter().all(|&c| (c as usize) < n_msgs), || {
        format!("a choice is not below N = {n_msgs}")
    })
}

/// The sender side of KK13 (the base-OT receiver).
pub struct KkSender {
    ext: ExtSender<2>,
}

impl std::fmt::Debug for KkSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KkSender")
    }
}

impl KkSender {
    /// Runs the 256 base OTs (as their receiver). Cost 32 + 256·32 bytes.
    pub fn setup(ch: &mut Channel) -> Result<Self, OtError> {
        Ok(KkSender {
            ext: ExtSender::setup(ch)?,
        })
    }

    /// `(N 1)-OT_bits` with `N = n_msgs`: `msgs[j·N + v]` is message `v` of
    /// instance `j` (reduced mod `2^bits`, `bits` ≤ 128); the receiver learns
    /// message `choices[j]` of instance `j`. Cost 2λ + N·bits per instance.
    pub fn send<T: Word>(
        &mut self,
        ch: &mut Channel,
        n_msgs: usize,
        msgs: &[T],
        bits: u32,
    ) -> Result<(), OtError> {
        check_send(n_msgs, msgs, bits)?;
        let n = msgs.len() / n_msgs;
        let s = *self.ext.s();
        let cs: Vec<[Block; 2]> = (0..n_msgs)
            .map(|v| {
                let c = codeword(v as u8);
                [c[0] & s[0], c[1] & s[1]]
            })
            .collect();
        let m = mask128(bits);
        let mut w = BitWriter::with_capacity_bits(n as u64 * n_msgs as u64 * bits as u64);
        // Instances hashed together, so the AES kernels see long key batches.
        const GROUP: usize = 64;
        let (mut k1, mut k2, mut pts) = (Vec::new(), Vec::new(), Vec::new());
        let mut ys = vec![Block::ZERO; GROUP * n_msgs];
        self.ext.extend(ch, n, |off, rows, tweak| {
            for (g, (q0s, q1s)) in rows[0].chunks(GROUP).zip(rows[1].chunks(GROUP)).enumerate() {
                let j0 = g * GROUP;
                k1.clear();
                k2.clear();
                pts.clear();
                for (j, (q0, q1)) in (j0..).zip(q0s.iter().zip(q1s)) {
                    k1.extend(cs.iter().map(|c| *q0 ^ c[0]));
                    k2.extend(cs.iter().map(|c| *q1 ^ c[1]));
                    pts.extend(std::iter::repeat_n(Block(tweak + j as u128), n_msgs));
                }
                let ys = &mut ys[..k1.len()];
                RkAes256::hash(&k1, &k2, &pts, ys);
                let first = (off + j0) * n_msgs;
                for (x, y) in msgs[first..first + ys.len()].iter().zip(ys.iter()) {
                    w.push_u128((x.to_u128() ^ y.0) & m, bits);
                }
            }
            Ok(())
        })?;
        ch.send(&w.finish())?;
        ch.flush()?;
        Ok(())
    }
}

/// The receiver side of KK13 (the base-OT sender).
pub struct KkReceiver {
    ext: ExtReceiver<2>,
}

impl std::fmt::Debug for KkReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KkReceiver")
    }
}

impl KkReceiver {
    /// Runs the 256 base OTs (as their sender). Cost 32 + 256·32 bytes.
    pub fn setup(ch: &mut Channel) -> Result<Self, OtError> {
        Ok(KkReceiver {
            ext: ExtReceiver::setup(ch)?,
        })
    }

    /// Receiver of [`KkSender::send`]: message `choices[j]` (< N) of each
    /// instance.
    pub fn recv<T: Word>(
        &mut self,
        ch: &mut Channel,
        n_msgs: usize,
        choices: &[u8],
        bits: u32,
    ) -> Result<Vec<T>, OtError> {
        check_recv::<T>(n_msgs, choices, bits)?;
        let n = choices.len();
        let m = mask128(bits);
        let mut ys = Vec::with_capacity(n);
        let mut bitcols = Vec::new();
        let mut pts = Vec::new();
        let mut out = Vec::new();
        self.ext.extend(
            ch,
            n,
            |range, cols| {
                // Columns of the bits of the choices, then column i of the
                // code words = XOR of the bit columns selected by i.
                let cb = range.len() / 8;
                bitcols.clear();
                bitcols.resize(8 * cb, 0u8);
                let mine = choices.get(range.start..range.end.min(n)).unwrap_or(&[]);
                for (j, &r) in mine.iter().enumerate() {
                    for b in 0..8 {
                        bitcols[b * cb + j / 8] |= ((r >> b) & 1) << (j % 8);
                    }
                }
                for i in 1..256usize {
                    let low = i.trailing_zeros() as usize;
                    let prev = i & (i - 1);
                    cols.copy_within(prev * cb..(prev + 1) * cb, i * cb);
                    xor_into(
                        &mut cols[i * cb..(i + 1) * cb],
                        &bitcols[low * cb..(low + 1) * cb],
                    );
                }
            },
            |_, rows, tweak| {
                pts.clear();
                pts.extend((0..rows[0].len()).map(|j| Block(tweak + j as u128)));
                out.resize(pts.len(), Block::ZERO);
                RkAes256::hash(&rows[0], &rows[1], &pts, &mut out);
                ys.extend(out.iter().map(|y| y.0 & m));
                Ok(())
            },
        )?;
        let bytes = ch.recv_vec(packed_len(n * n_msgs, bits))?;
        let mut r = BitReader::new(&bytes);
        Ok(ys
            .iter()
            .zip(choices)
            .enumerate()
            .map(|(j, (y, &c))| {
                r.seek((j * n_msgs + c as usize) as u64 * bits as u64);
                T::from_u128(r.read_u128(bits) ^ y)
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walsh_hadamard_distance() {
        let words: Vec<[Block; 2]> = (0..=255u8).map(codeword).collect();
        for a in 0..256 {
            for b in (a + 1)..256 {
                let d = (words[a][0] ^ words[b][0]).0.count_ones()
                    + (words[a][1] ^ words[b][1]).0.count_ones();
                assert_eq!(d, 128, "{a} {b}");
            }
        }
    }
}
