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
//! ([`sci_net::crypto::RkAes256`], as in the paper, §6.1, and in EzPC SCI's
//! `CCRF`) with the OT index `j` as plaintext; the sender's keys are built
//! in registers from the row and the masks `C(v) ∧ s` (computed once per
//! set-up), `N` hashes per instance.
//!
//! # Several classes in one call
//! A call may carry instances of several classes `(N, ℓ)` ([`KkClass`]): one
//! extension batch for all of them (their instances numbered class after
//! class), one receiver message and one sender message, so one round for
//! the receiver whatever the number of classes. The sender's messages are
//! produced by a closure per group of instances, written straight into a
//! small buffer, masked and packed: nothing of size `n·N` is built up front.
//!
//! Cost of a call with classes `(N_c, ℓ_c, n_c)`, `n = Σ n_c`: 2λ bits per
//! instance from the receiver (256-bit rows for `8⌈n/8⌉` instances, see
//! [`super`]) and `⌈Σ n_c·N_c·ℓ_c / 8⌉` bytes of masked messages from the
//! sender ([`kk_bits`]). Two messages, one round for the receiver. Set-up:
//! 256 base OTs, 32 + 256·32 bytes.

use std::ops::Range;

use super::ext::{ExtReceiver, ExtSender, xor_into};
use super::{OtError, Word, check, check_bits};
use sci_net::Channel;
use sci_net::crypto::{Block, Prg, hash_rows, row_index, rows_len};
use sci_net::pack::{BitReader, BitWriter, mask128};

/// Hashes per group of the sender (the group's keys, hashes and messages
/// stay in L1).
const GROUP_HASHES: usize = 1024;

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

/// The classes of a call and their exact bits on the wire: the cost model's
/// ([`sci_ir::cost::ot`]).
pub use sci_ir::cost::ot::kk_bits;
pub use sci_ir::params::ot::KkClass;

/// Validates the classes of a call (before any set-up or traffic); returns
/// the total number of instances.
pub(crate) fn check_classes<T: Word>(classes: &[KkClass]) -> Result<usize, OtError> {
    for c in classes {
        check((2..=256).contains(&c.n_msgs), || {
            format!("1-of-N OT needs N in 2..=256, got {}", c.n_msgs)
        })?;
        check_bits::<T>(c.bits)?;
    }
    Ok(classes.iter().map(|c| c.count).sum())
}

/// Validates the receiver's choices against the classes (one per instance,
/// class after class, each below its class's `N`).
pub(crate) fn check_choices(classes: &[KkClass], choices: &[u8]) -> Result<(), OtError> {
    let n: usize = classes.iter().map(|c| c.count).sum();
    check(choices.len() == n, || {
        format!("{} choices for {n} instances", choices.len())
    })?;
    let mut rest = choices;
    for c in classes {
        let (mine, tail) = rest.split_at(c.count);
        check(mine.iter().all(|&x| (x as usize) < c.n_msgs), || {
            format!("a choice is not below N = {}", c.n_msgs)
        })?;
        rest = tail;
    }
    Ok(())
}

/// The sender side of KK13 (the base-OT receiver).
pub struct KkSender {
    ext: ExtSender<2>,
    /// `C(v) ∧ s`, halves, for v in 0..256.
    masks: [Vec<Block>; 2],
    /// The last answer's bytes (the allocation is reused).
    answer: Vec<u8>,
}

impl std::fmt::Debug for KkSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KkSender")
    }
}

/// Masks, XORs with the hashes and packs the messages of `len` instances of
/// one group (`msgs[i·N + v]`, hashes in the layout of `hash_rows`).
fn pack_group<T: Word>(
    w: &mut BitWriter,
    msgs: &[T],
    hashes: &[Block],
    len: usize,
    nm: usize,
    bits: u32,
) {
    let m = mask128(bits);
    if nm * bits as usize <= 64 {
        // The N messages of an instance in one word.
        for (i, row) in msgs.chunks_exact(nm).take(len).enumerate() {
            let at = row_index(i, 0, nm);
            let mut acc = 0u64;
            for (v, x) in row.iter().enumerate() {
                let y = (x.to_u128() ^ hashes[at + 4 * v].0) & m;
                acc |= (y as u64) << (v as u32 * bits);
            }
            w.push(acc, nm as u32 * bits);
        }
    } else {
        for (i, row) in msgs.chunks_exact(nm).take(len).enumerate() {
            let at = row_index(i, 0, nm);
            for (v, x) in row.iter().enumerate() {
                w.push_u128((x.to_u128() ^ hashes[at + 4 * v].0) & m, bits);
            }
        }
    }
}

impl KkSender {
    /// Runs the 256 base OTs (as their receiver), drawing the secret and the
    /// base OTs' scalars from `prg`. Cost 32 + 256·32 bytes.
    pub fn setup(ch: &mut Channel, prg: &mut Prg) -> Result<Self, OtError> {
        let ext = ExtSender::setup(ch, prg)?;
        let s = *ext.s();
        let (m0, m1) = (0..=255u8)
            .map(|v| {
                let c = codeword(v);
                (c[0] & s[0], c[1] & s[1])
            })
            .unzip();
        Ok(KkSender {
            ext,
            masks: [m0, m1],
            answer: Vec::new(),
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
        check((2..=256).contains(&n_msgs), || {
            format!("1-of-N OT needs N in 2..=256, got {n_msgs}")
        })?;
        check(msgs.len().is_multiple_of(n_msgs), || {
            format!("{} messages is not a multiple of N = {n_msgs}", msgs.len())
        })?;
        let class = KkClass {
            n_msgs,
            bits,
            count: msgs.len() / n_msgs,
        };
        self.send_classes(ch, &[class], |_, r, out: &mut [T]| {
            out.copy_from_slice(&msgs[r.start * n_msgs..r.end * n_msgs]);
        })
    }

    /// One call for all instances of `classes` (see the
    /// [module documentation](self)). `msgs(c, range, out)` writes the
    /// messages of instances `range` of class `c` (indices within the class):
    /// message `v` of instance `range.start + i` at `out[i·N + v]`; it is
    /// called once for each group of consecutive instances, in order.
    /// Messages are reduced mod `2^bits` of their class. Cost: [`kk_bits`].
    pub fn send_classes<T: Word>(
        &mut self,
        ch: &mut Channel,
        classes: &[KkClass],
        mut msgs: impl FnMut(usize, Range<usize>, &mut [T]),
    ) -> Result<(), OtError> {
        let n = check_classes::<T>(classes)?;
        if n == 0 {
            return Ok(());
        }
        let KkSender { ext, masks, answer } = self;
        let total: u64 = classes
            .iter()
            .map(|c| (c.count * c.n_msgs) as u64 * c.bits as u64)
            .sum();
        let mut w = BitWriter::reuse(std::mem::take(answer), total);
        let (mut hashes, mut pts, mut buf) = (Vec::new(), Vec::new(), Vec::<T>::new());
        // Cursor: class `c` covers instances `start..start + count`.
        let (mut c, mut start) = (0usize, 0usize);
        ext.extend(ch, n, |off, rows, tweak| {
            let end = off + rows[0].len();
            let mut j = off;
            while j < end {
                while start + classes[c].count <= j {
                    start += classes[c].count;
                    c += 1;
                }
                let KkClass {
                    n_msgs,
                    bits,
                    count,
                } = classes[c];
                let group = (GROUP_HASHES / n_msgs).max(1).next_multiple_of(4);
                let stop = end.min(start + count);
                while j < stop {
                    let g_end = stop.min(j + group);
                    let (a, b) = (j - off, g_end - off);
                    let len = b - a;
                    pts.clear();
                    pts.extend((a..b).map(|i| Block(tweak.wrapping_add(i as u128))));
                    hashes.resize(rows_len(len, n_msgs), Block::ZERO);
                    hash_rows(
                        &rows[0][a..b],
                        &rows[1][a..b],
                        &pts,
                        &masks[0][..n_msgs],
                        &masks[1][..n_msgs],
                        &mut hashes,
                    );
                    buf.clear();
                    buf.resize(len * n_msgs, T::default());
                    msgs(c, j - start..g_end - start, &mut buf);
                    pack_group(&mut w, &buf, &hashes, len, n_msgs, bits);
                    j = g_end;
                }
            }
            Ok(())
        })?;
        let bytes = w.finish();
        let sent = ch.send(&bytes).and_then(|()| ch.flush());
        *answer = bytes;
        Ok(sent?)
    }
}

/// The receiver side of KK13 (the base-OT sender).
pub struct KkReceiver {
    ext: ExtReceiver<2>,
    /// The last answer's bytes (the allocation is reused).
    answer: Vec<u8>,
}

impl std::fmt::Debug for KkReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KkReceiver")
    }
}

impl KkReceiver {
    /// Runs the 256 base OTs (as their sender, scalar from `prg`). Cost
    /// 32 + 256·32 bytes.
    pub fn setup(ch: &mut Channel, prg: &mut Prg) -> Result<Self, OtError> {
        Ok(KkReceiver {
            ext: ExtReceiver::setup(ch, prg)?,
            answer: Vec::new(),
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
        let class = KkClass {
            n_msgs,
            bits,
            count: choices.len(),
        };
        self.recv_classes(ch, &[class], choices)
    }

    /// Receiver of [`KkSender::send_classes`]: `choices` holds one choice per
    /// instance, class after class; returns the chosen messages in the same
    /// order.
    pub fn recv_classes<T: Word>(
        &mut self,
        ch: &mut Channel,
        classes: &[KkClass],
        choices: &[u8],
    ) -> Result<Vec<T>, OtError> {
        let n = check_classes::<T>(classes)?;
        check_choices(classes, choices)?;
        if n == 0 {
            return Ok(Vec::new());
        }
        let KkReceiver { ext, answer } = self;
        // The receiver's pads H(j, t_j), truncated to T, become the outputs.
        let mut out: Vec<T> = Vec::with_capacity(n);
        let (mut bitcols, mut pts, mut hashes) = (Vec::new(), Vec::new(), Vec::new());
        let zero = [Block::ZERO];
        ext.extend(
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
                let len = rows[0].len();
                pts.clear();
                pts.extend((0..len).map(|j| Block(tweak.wrapping_add(j as u128))));
                hashes.resize(len, Block::ZERO);
                hash_rows(&rows[0], &rows[1], &pts, &zero, &zero, &mut hashes);
                out.extend(hashes.iter().map(|y| T::from_u128(y.0)));
                Ok(())
            },
        )?;
        let total: u64 = classes
            .iter()
            .map(|c| (c.count * c.n_msgs) as u64 * c.bits as u64)
            .sum();
        answer.resize(total.div_ceil(8) as usize, 0);
        ch.recv(answer)?;
        let mut r = BitReader::new(answer);
        let (mut j, mut base) = (0usize, 0u64);
        for c in classes {
            let m = mask128(c.bits);
            for (o, &x) in out[j..j + c.count].iter_mut().zip(&choices[j..]) {
                r.seek(base + x as u64 * c.bits as u64);
                *o = T::from_u128((r.read_u128(c.bits) ^ o.to_u128()) & m);
                base += (c.n_msgs as u64) * c.bits as u64;
            }
            j += c.count;
        }
        Ok(out)
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

    #[test]
    fn cost_of_classes() {
        let c = |n_msgs, bits, count| KkClass {
            n_msgs,
            bits,
            count,
        };
        assert_eq!(kk_bits(&[]), 0);
        assert_eq!(kk_bits(&[c(16, 2, 0)]), 0);
        // 11 instances pad to 16 rows; 11·16·2 + 5·8·2 = 432 bits = 54 bytes.
        assert_eq!(kk_bits(&[c(16, 2, 11), c(8, 2, 5)]), 256 * 16 + 432);
        assert_eq!(kk_bits(&[c(4, 3, 1)]), 256 * 8 + 16);
    }
}
