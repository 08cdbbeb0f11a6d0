//! OTs derived from the engine's random COTs (the standard derandomisation,
//! e.g. Ferret §2 / Beaver's precomputed OT, with the IKNP pads of
//! Ishai–Kilian–Nissim–Petrank): random COT `j` gives the sender the pads
//! `y_0 = H(j, q_j)`, `y_1 = H(j, q_j ⊕ Δ)` ([`Tccr`], `j` never reused) and
//! the receiver `b_j` and `H(j, t_j) = y_{b_j}`. For a chosen choice `c_j`
//! the receiver sends `d_j = c_j ⊕ b_j` (one bit) and the sender uses the
//! pads in the order `(y_{d_j}, y_{1⊕d_j})`, of which the receiver knows the
//! `c_j`-th. Per *piece* of COTs (a batch of
//! [`FerretSender::send_cot_batches`], or the whole call, cut where an
//! iteration's COTs end; generated chunk by chunk, `source::Piece`) the
//! receiver sends its `d` bits in one message and the sender answers in
//! one:
//! - random OT with random choices ([`FerretSender::send_random_rot`]):
//!   nothing but the engine's share;
//! - random OT with chosen choices ([`FerretSender::send_rot`]): `1` bit;
//! - chosen-message `(2 1)-OT_ℓ` ([`FerretSender::send_ot`]): `1 + 2ℓ` bits;
//! - correlated OT with a payload of `W` bits in rings `Z_{n_e}`
//!   ([`FerretSender::send_cot_batches`], the IKNP layout of
//!   [`crate::ot::iknp`]: `r = G_0`, correction `r + Δ − G_1`): `1 + W` bits;
//!   over `Z_{2^ℓ}` ([`FerretSender::send_cot`]) `1 + ℓ`;
//! - `(N 1)-OT_ℓ` from `⌈log₂ N⌉` of them ([`super::nofn`]): `⌈log₂ N⌉ + N·ℓ`;
//!
//! plus the engine's share of its iterations: [`sci_ir::cost::ferret::derived`]
//! exactly for one piece. The same signatures as [`crate::ot::OtPack`]'s IKNP
//! calls.

use std::ops::Range;

use std::sync::mpsc::{self, Receiver, SyncSender};

use super::source::{FerretReceiver, FerretSender, Inflow, Inline, Piece};
use crate::crypto::{Block, Tccr};
use crate::net::{Channel, Inbox, Outbox, Tx};
use crate::ot::iknp::{CotRecv, CotSend};
use crate::ot::{CotFields, CotRing, OtError, Word, check_bits};
use crate::pack::{BitReader, BitWriter, mask128};

/// COTs hashed per step (in L1).
const STEP: usize = 1024;

/// Pieces the receiver of a batched call runs ahead of its decoding
/// ([`FerretReceiver::recv_derived`]): its memory holds the pads of at most
/// `WINDOW + 2` pieces (16 bytes per OT), as IKNP's batches.
const WINDOW: usize = 4;

/// The pieces of a batched call: the running sums of `batches`.
fn batch_ends(batches: &[usize]) -> Vec<usize> {
    batches
        .iter()
        .scan(0, |s, &n| {
            *s += n;
            Some(*s)
        })
        .collect()
}

/// The receiver's `d` bits of a piece, `choice(j) ⊕ b_j` for its COTs
/// (choice bit `b_j` in the low bit), 8 per byte, generating them
/// ([`Piece::parts`]); `run(tweak, j0, y)` gets the hashed pads `y` of each
/// run of at most [`STEP`] consecutive COTs `j0..` (`y` is scratch).
fn corrections(
    piece: Piece<'_>,
    choice: impl Fn(usize) -> bool,
    h: &Tccr,
    y: &mut Vec<Block>,
    mut run: impl FnMut(u128, usize, &[Block]),
) -> Result<Vec<u8>, OtError> {
    let first = piece.first();
    let mut d = vec![0u8; piece.len().div_ceil(8)];
    piece.parts(|id0, j, t| {
        for (s, ts) in t.chunks(STEP).enumerate() {
            let off = s * STEP;
            for (k, tk) in ts.iter().enumerate() {
                let (jk, x) = (j + off + k, j + off + k - first);
                d[x / 8] |= u8::from(choice(jk) ^ tk.bit(0)) << (x % 8);
            }
            y.clear();
            y.extend_from_slice(ts);
            h.hash_in_place(id0 + off as u128, y);
            run(id0 + off as u128, j + off, y);
        }
        Ok(())
    })?;
    Ok(d)
}

/// Reads the sender's answer of `bits` bits (padded to bytes) into `buf`.
fn read_answer<'b>(
    rx: &mut impl Inbox,
    buf: &'b mut Vec<u8>,
    bits: u64,
) -> Result<BitReader<'b>, OtError> {
    buf.clear();
    buf.resize(bits.div_ceil(8) as usize, 0);
    rx.recv(buf)?;
    Ok(BitReader::new(buf))
}

/// What [`FerretReceiver::recv_derived`] hands its caller, per piece: the
/// pads of its runs of OTs, then the sender's answer.
pub(super) enum Event<'y, 'r, 'b> {
    /// The pads `y[i] = y_{c_{j0+i}}` of the run of consecutive OTs `j0..`,
    /// whose hash tweaks follow from `tweak`: `Pads(tweak, j0, y)`.
    Pads(u128, usize, &'y [Block]),
    /// The sender's answer to the piece of OTs `piece` (whose pads came
    /// before): `Answer(piece, reader)`.
    Answer(Range<usize>, &'r mut BitReader<'b>),
}

/// What the streaming receiver's extending thread hands its decoding
/// thread, in the order of the sender's stream.
enum Item {
    /// A piece: its first COT's tweak, its first OT, its hashed pads.
    Piece(u128, usize, Vec<Block>),
    /// An announced iteration message of this many bytes.
    Message(usize),
}

/// The extending thread's link: corrections out on `tx`, pieces and
/// announcements to the decoding thread, which reads the messages.
struct Piped<'t, 'a> {
    tx: &'t mut Tx<'a>,
    items: SyncSender<Item>,
    msgs: Receiver<Vec<u8>>,
}

/// The decoding thread stopped (it failed; its error is reported).
fn stopped<T>(_: T) -> OtError {
    OtError::Protocol("the decoding thread stopped".into())
}

impl Inflow for Piped<'_, '_> {
    fn announced(&mut self, len: usize) -> Result<(), OtError> {
        self.items.send(Item::Message(len)).map_err(stopped)
    }

    fn message(&mut self, buf: &mut Vec<u8>) -> Result<(), OtError> {
        *buf = self.msgs.recv().map_err(stopped)?;
        Ok(())
    }
}

impl FerretSender {
    /// The sender of `n` derived OTs with chosen choices, in pieces cut at
    /// the batch ends `ends` and at iterations' ends. Per piece it reads
    /// the receiver's `d` bits (`⌈len/8⌉` bytes), then per run of
    /// consecutive OTs `j0..j0 + k` of the piece `each(tweak, j0, y0, y1,
    /// w)` gets the pads of the receiver's choice 0 and 1 (`y0[i]`, `y1[i]`
    /// for OT `j0 + i`, whose hash tweak is `tweak + i`) and writes its
    /// answer to `w`, sent (padded to whole bytes) when the piece ends. With
    /// several batches over a full-duplex channel the call is one streamed
    /// exchange ([`Channel::streamed`]): the receiver sends its pieces ahead.
    pub(super) fn send_derived(
        &mut self,
        ch: &mut Channel,
        n: usize,
        ends: &[usize],
        mut each: impl FnMut(u128, usize, &[Block], &[Block], &mut BitWriter),
    ) -> Result<(), OtError> {
        if n == 0 {
            return Ok(());
        }
        self.setup(ch)?;
        let delta = self.delta();
        let h = Tccr::new();
        let (mut y0, mut y1) = (Vec::with_capacity(STEP), Vec::with_capacity(STEP));
        let mut run = |ch: &mut Channel| {
            self.take_pieces(ch, n, ends, |ch, piece| {
                let first = piece.first();
                let d = ch.recv_vec(piece.len().div_ceil(8))?;
                let mut w = BitWriter::new();
                piece.parts(|id0, j, q| {
                    for (s, qs) in q.chunks(STEP).enumerate() {
                        let off = s * STEP;
                        y0.clear();
                        y0.extend_from_slice(qs);
                        y1.clear();
                        y1.extend(y0.iter().map(|x| *x ^ delta));
                        let tweak = id0 + off as u128;
                        h.hash_in_place(tweak, &mut y0);
                        h.hash_in_place(tweak, &mut y1);
                        for (i, (a, b)) in y0.iter_mut().zip(y1.iter_mut()).enumerate() {
                            let x = j + off + i - first;
                            if (d[x / 8] >> (x % 8)) & 1 == 1 {
                                std::mem::swap(a, b);
                            }
                        }
                        each(tweak, j + off, &y0, &y1, &mut w);
                    }
                    Ok(())
                })?;
                if w.bit_len() > 0 {
                    ch.send(&w.finish())?;
                    ch.flush()?;
                }
                Ok(())
            })
        };
        if ends.len() > 1 && ch.full_duplex() {
            ch.streamed(run)
        } else {
            run(ch)
        }
    }

    /// Random 1-of-2 OT with random choices: `n` pairs of random `bits`-bit
    /// messages `(y_0, y_1)`; the receiver ([`FerretReceiver::recv_random_rot`])
    /// gets a random bit `b` and `y_b`. No message of its own: only the
    /// engine's iterations ([`sci_ir::cost::ferret::random_cots`]).
    pub fn send_random_rot<T: Word>(
        &mut self,
        ch: &mut Channel,
        n: usize,
        bits: u32,
    ) -> Result<Vec<[T; 2]>, OtError> {
        check_bits::<T>(bits)?;
        let (m, delta, h) = (mask128(bits), self.delta(), Tccr::new());
        let mut out = Vec::with_capacity(n);
        let (mut y0, mut y1) = (Vec::with_capacity(STEP), Vec::with_capacity(STEP));
        self.take(ch, n, |_, id0, q| {
            for (s, qs) in q.chunks(STEP).enumerate() {
                let tweak = id0 + (s * STEP) as u128;
                y0.clear();
                y0.extend_from_slice(qs);
                y1.clear();
                y1.extend(qs.iter().map(|x| *x ^ delta));
                h.hash_in_place(tweak, &mut y0);
                h.hash_in_place(tweak, &mut y1);
                out.extend(
                    y0.iter()
                        .zip(&y1)
                        .map(|(a, b)| [T::from_u128(a.0 & m), T::from_u128(b.0 & m)]),
                );
            }
            Ok(())
        })?;
        Ok(out)
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
        self.send_derived(ch, n, &[], |_, _, y0, y1, _| {
            out.extend(
                y0.iter()
                    .zip(y1)
                    .map(|(a, b)| [T::from_u128(a.0 & m), T::from_u128(b.0 & m)]),
            )
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
        self.send_derived(ch, msgs.len(), &[], |_, j0, y0, y1, w| {
            for ((pair, a), b) in msgs[j0..].iter().zip(y0).zip(y1) {
                w.push_u128((pair[0].to_u128() ^ a.0) & m, bits);
                w.push_u128((pair[1].to_u128() ^ b.0) & m, bits);
            }
        })
    }

    /// `(2 1)-COT_bits` over `Z_{2^bits}` (`bits` in 1..=64): the sender
    /// inputs `corr[j] = x_j` and gets random `r_j`; the receiver gets `r_j +
    /// c_j·x_j`. One batch of [`FerretSender::send_cot_batches`]. Cost: `1 +
    /// bits` bits per OT plus the engine's.
    pub fn send_cot(
        &mut self,
        ch: &mut Channel,
        corr: &[u64],
        bits: u32,
    ) -> Result<Vec<u64>, OtError> {
        check_bits::<u64>(bits)?;
        let ws = [bits];
        let f = CotFields::new(&ws)?;
        let mut r = Vec::with_capacity(corr.len());
        self.send_cot_batches(
            ch,
            &[corr.len()],
            |_| f,
            |j| std::slice::from_ref(&corr[j]),
            |_, rj| r.extend_from_slice(rj),
        )?;
        Ok(r)
    }

    /// Correlated OT with per-instance payloads in several batches (the
    /// semantics of [`crate::ot::iknp::IknpSender::send_cot_batches`]):
    /// instance `j` (numbered on across batches) has the elements
    /// `fields_of(j)` and the correlation `corr(j)`; `out(j, r_j)` gets the
    /// sender's random `r_j`, the receiver `r_j + c_j·Δ_j` elementwise. All
    /// batches are one exchange per slice of COTs: the receiver's `d` bits,
    /// then one answer per batch (`⌈Σ W_j / 8⌉` bytes). Cost `1 + W_j` bits
    /// per instance plus the engine's; one round for the receiver (plus one
    /// per iteration of the engine run meanwhile).
    pub fn send_cot_batches<'w, 'c, R: CotRing>(
        &mut self,
        ch: &mut Channel,
        batches: &[usize],
        fields_of: impl Fn(usize) -> CotFields<'w, R>,
        corr: impl Fn(usize) -> &'c [u64],
        mut out: impl FnMut(usize, &[u64]),
    ) -> Result<(), OtError> {
        let ends = batch_ends(batches);
        let n = ends.last().copied().unwrap_or(0);
        let mut cot = CotSend::default();
        self.send_derived(ch, n, &ends, |_, j0, y0, y1, w| {
            cot.answer(j0, [y0, y1], &fields_of, &corr, w, &mut out)
        })
    }
}

impl FerretReceiver {
    /// The receiver of [`FerretSender::send_derived`] with choices
    /// `choice(j)`: per piece, `on` gets its pads run by run
    /// ([`Event::Pads`]), then the receiver sends the piece's `d` bits and
    /// reads the answer of `answer_bits(piece)` bits, which `on` reads
    /// ([`Event::Answer`]). What of the pads the answer needs is the
    /// caller's to keep: the inline path holds none of a piece's pads, so
    /// the memory of a piece is the caller's (its outputs) and `d`.
    ///
    /// With several batches over a full-duplex channel this is a pipeline
    /// of two threads, as IKNP's ([`crate::ot::iknp::IknpReceiver::recv_cot_batches`]):
    /// one takes the COTs piece after piece and sends the pieces' `d` bits
    /// ahead, at most [`WINDOW`] pieces ahead of the other (their pads
    /// kept), which reads the sender's stream in order (answers, and the
    /// iteration messages announced in it, handed back to the first) and
    /// decodes (`on` runs on the calling thread). One round
    /// in all, and the iterations wait for no round trip: each is announced
    /// an iteration's worth of pieces ahead. Otherwise the pieces run one
    /// after the other, a round each.
    pub(super) fn recv_derived(
        &mut self,
        ch: &mut Channel,
        n: usize,
        choice: impl Fn(usize) -> bool + Sync,
        ends: &[usize],
        answer_bits: impl Fn(Range<usize>) -> u64,
        mut on: impl FnMut(Event<'_, '_, '_>),
    ) -> Result<(), OtError> {
        if n == 0 {
            return Ok(());
        }
        self.setup(ch)?;
        let h = Tccr::new();
        let mut buf = Vec::new();
        if ends.len() > 1 && ch.full_duplex() {
            let (choice, h, this) = (&choice, &h, &mut *self);
            let piped = ch.duplex(|tx, rx| {
                std::thread::scope(|s| {
                    let (items, ready) = mpsc::sync_channel::<Item>(WINDOW);
                    let (back, msgs) = mpsc::channel::<Vec<u8>>();
                    let (spare_tx, spare) = mpsc::channel::<Vec<Block>>();
                    let writer = s.spawn(move || {
                        let mut link = Piped { tx, items, msgs };
                        let mut scratch = Vec::with_capacity(STEP);
                        this.take_with(&mut link, n, ends, |l, piece| {
                            let (id0, j) = (piece.tweak(), piece.first());
                            let mut y = spare.try_recv().unwrap_or_default();
                            y.clear();
                            let d = corrections(piece, choice, h, &mut scratch, |_, _, ys| {
                                y.extend_from_slice(ys)
                            })?;
                            l.tx.send(&d)?;
                            l.tx.flush()?;
                            l.items.send(Item::Piece(id0, j, y)).map_err(stopped)
                        })
                    });
                    let read = (|| {
                        // Closed early only when the writer failed.
                        while let Ok(item) = ready.recv() {
                            match item {
                                Item::Piece(id0, j, y) => {
                                    let piece = j..j + y.len();
                                    on(Event::Pads(id0, j, &y));
                                    let bits = answer_bits(piece.clone());
                                    on(Event::Answer(piece, &mut read_answer(rx, &mut buf, bits)?));
                                    let _ = spare_tx.send(y);
                                }
                                Item::Message(len) => {
                                    let mut m = vec![0u8; len];
                                    rx.recv(&mut m)?;
                                    if back.send(m).is_err() {
                                        break;
                                    }
                                }
                            }
                        }
                        Ok(())
                    })();
                    drop(ready);
                    let wrote = writer
                        .join()
                        .unwrap_or_else(|p| std::panic::resume_unwind(p));
                    read.and(wrote)
                })
            })?;
            if let Some(r) = piped {
                return r;
            }
        }
        let mut y = Vec::with_capacity(STEP);
        self.take_with(&mut Inline::new(ch), n, ends, |l, piece| {
            let range = piece.first()..piece.first() + piece.len();
            let d = corrections(piece, &choice, &h, &mut y, |t, j, y| {
                on(Event::Pads(t, j, y))
            })?;
            l.ch.send(&d)?;
            l.ch.flush()?;
            let bits = answer_bits(range.clone());
            on(Event::Answer(
                range,
                &mut read_answer(l.ch, &mut buf, bits)?,
            ));
            Ok(())
        })
    }

    /// Receiver of [`FerretSender::send_random_rot`]: `n` random choice bits
    /// and the chosen messages.
    pub fn recv_random_rot<T: Word>(
        &mut self,
        ch: &mut Channel,
        n: usize,
        bits: u32,
    ) -> Result<(Vec<bool>, Vec<T>), OtError> {
        check_bits::<T>(bits)?;
        let (m, h) = (mask128(bits), Tccr::new());
        let (mut c, mut out) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let mut y = Vec::with_capacity(STEP);
        self.take(ch, n, |_, id0, t| {
            for (s, ts) in t.chunks(STEP).enumerate() {
                y.clear();
                y.extend_from_slice(ts);
                h.hash_in_place(id0 + (s * STEP) as u128, &mut y);
                c.extend(ts.iter().map(|t| t.bit(0)));
                out.extend(y.iter().map(|v| T::from_u128(v.0 & m)));
            }
            Ok(())
        })?;
        Ok((c, out))
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
        let n = choices.len();
        self.recv_derived(
            ch,
            n,
            |j| choices[j],
            &[],
            |_| 0,
            |e| {
                if let Event::Pads(_, _, y) = e {
                    out.extend(y.iter().map(|v| T::from_u128(v.0 & m)))
                }
            },
        )?;
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
        let per = 2 * u64::from(bits);
        // The pads go to `out` and the answer is xored in.
        self.recv_derived(
            ch,
            choices.len(),
            |j| choices[j],
            &[],
            |r| r.len() as u64 * per,
            |e| match e {
                Event::Pads(_, _, y) => out.extend(y.iter().map(|v| T::from_u128(v.0 & m))),
                Event::Answer(piece, r) => {
                    for j in piece {
                        let (e0, e1) = (r.read_u128(bits), r.read_u128(bits));
                        let e = if choices[j] { e1 } else { e0 };
                        out[j] = T::from_u128((out[j].to_u128() ^ e) & m);
                    }
                }
            },
        )?;
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
        let ws = [bits];
        let f = CotFields::new(&ws)?;
        let mut v = Vec::with_capacity(choices.len());
        self.recv_cot_batches(
            ch,
            &[choices.len()],
            |j| choices[j],
            |_| f,
            |_, vj| v.extend_from_slice(vj),
        )?;
        Ok(v)
    }

    /// Receiver of [`FerretSender::send_cot_batches`] (the same `batches`):
    /// choices `choice(j)`, the sender's `fields_of(j)`; `out(j, v_j)` gets
    /// `r_j + c_j·Δ_j` elementwise, in instance order.
    pub fn recv_cot_batches<'w, R: CotRing>(
        &mut self,
        ch: &mut Channel,
        batches: &[usize],
        choice: impl Fn(usize) -> bool + Sync,
        fields_of: impl Fn(usize) -> CotFields<'w, R>,
        mut out: impl FnMut(usize, &[u64]),
    ) -> Result<(), OtError> {
        let ends = batch_ends(batches);
        let n = ends.last().copied().unwrap_or(0);
        let mut cot = CotRecv::default();
        // The pads of the piece being answered.
        let mut kept = Vec::new();
        self.recv_derived(
            ch,
            n,
            &choice,
            &ends,
            |r| r.map(|j| u64::from(fields_of(j).wire_bits())).sum(),
            |e| match e {
                Event::Pads(_, _, y) => kept.extend_from_slice(y),
                Event::Answer(piece, rd) => {
                    cot.decode(piece.start, &kept, &choice, &fields_of, rd, &mut out);
                    kept.clear();
                }
            },
        )
    }
}
