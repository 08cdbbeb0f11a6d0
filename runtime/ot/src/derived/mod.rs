//! The contract of an OT engine, and every OT derived from it, written once.
//!
//! An engine is a *source of correlated OT* (emp-ot's `COT`, swanky's
//! `CorrelatedSender`/`CorrelatedReceiver`): per OT `j` the sender holds a
//! block `q_j` and a global `Δ`, the receiver a choice bit `b_j` and `t_j =
//! q_j ⊕ b_j·Δ`. It implements [`CorrelatedSender`] and
//! [`CorrelatedReceiver`], whose one required method each, `pads`, hands out
//! the hashed pads `y_0 = H(j, q_j)`, `y_1 = H(j, q_j ⊕ Δ)` ([`Tccr`],
//! tweak `j` never reused) of OTs with the receiver's *chosen* choices `c_j`
//! (the receiver knows `y_{c_j}`), in pieces, each closed by the receiver's
//! message of the piece:
//! - IKNP ([`super::iknp`]): the choices are the extension's columns, λ bits
//!   per OT up; a piece is a batch (an OT call of its own on the wire);
//! - Ferret ([`super::ferret`]): random COTs derandomised by `d_j = c_j ⊕
//!   b_j`, 1 bit per OT up; pieces also end where an iteration's COTs end.
//!
//! Everything else is a provided method, the same code on every engine: per
//! piece the sender answers in one message (the bits its derivation writes,
//! padded to bytes, nothing if none) and the receiver reads it:
//! - random OT with chosen choices (`send_rot`/`recv_rot`): no answer;
//! - random OT with random choices (`send_random_rot`/`recv_random_rot`),
//!   from `random_pads`: by default `pads` with choices drawn by the
//!   receiver from the pack's generator (IKNP); an engine whose COTs have
//!   random choices already overrides `random_pads` to hand them out with
//!   nothing on the wire (Ferret);
//! - chosen-message `(2 1)-OT_ℓ` (`send_ot`/`recv_ot`): `2ℓ` bits;
//! - correlated OT with a payload of `W` bits per instance, in several
//!   batches streamed as one exchange (`send_cot_batches`), and one
//!   element of `Z_{2^ℓ}` (`send_cot`): `W` bits, the element loops of
//!   [`cot`];
//! - `(N 1)-OT_ℓ` from `⌈log₂ N⌉` random OTs ([`nofn`], `send_classes`):
//!   `N·ℓ` bits. The IKNP pack runs KK13 ([`super::kkot`]) instead, which
//!   costs `2λ` bits per instance up rather than `⌈log₂ N⌉·λ`.
//!
//! So a call costs the engine's share (λ bits per OT for IKNP, [`cot_bits`]
//! and [`super::iknp`]; 1 bit per OT plus the iterations for Ferret,
//! [`sci_ir::cost::ferret::derived`]) plus the derivation's answer.
//!
//! # Streaming
//! With several batches over a full-duplex channel a call is one round: the
//! sender runs in a [`Channel::streamed`] section, and the receiver is a
//! pipeline of two threads (`recv_derived`): one runs the engine's `pads`
//! piece after piece, sending each piece's message ahead, at most
//! `WINDOW` pieces ahead of the other, which reads the sender's stream in
//! order (answers, and the engine's own messages announced in it,
//! [`Inflow`]) and decodes (the caller's closures run on the calling
//! thread). Deadlock freedom on bounded buffers: the decoding thread only
//! reads, so the sender's writes always drain; the sender reads each piece's
//! message whole before answering; and the first thread waits for nothing
//! but its writes and the window, which the decoding thread frees.
//! Otherwise the pieces run one after the other, a round each.

pub mod cot;
pub mod nofn;

use std::ops::Range;
use std::sync::mpsc::{self, Receiver, SyncSender};

pub use cot::{CotFields, CotRing};
use cot::{CotRecv, CotSend};

use super::{KkClass, OtError, Word, check_bits};
use sci_net::crypto::{Block, Prg, Tccr};
use sci_net::pack::{BitReader, BitWriter, mask128};
use sci_net::{Channel, Inbox, NetError, Outbox, Tx};

/// Exact bits on the wire of one IKNP correlated-OT batch: the cost model's
/// ([`sci_ir::cost::ot::cot`]).
pub use sci_ir::cost::ot::cot_bits;

/// Pads hashed per step by the engines (in L1).
pub(crate) const STEP: usize = 1024;

/// Pieces the receiver of a streamed call runs ahead of its decoding
/// ([`recv_derived`]): its memory holds the pads of at most `WINDOW + 2`
/// pieces (16 bytes per OT), and the window of messages in flight covers a
/// round trip as long as `WINDOW` pieces take longer to answer than the
/// link's round-trip time (milliseconds per batch of the matrix product).
const WINDOW: usize = 4;

/// What an engine's [`CorrelatedSender::pads`] hands its caller.
pub enum SendEvent<'a> {
    /// The pads of the run of consecutive OTs `j0..j0 + k` of the current
    /// piece, in the order of the receiver's choices: `y0[i]` is the pad
    /// the receiver holds when it chose 0 for OT `j0 + i`, `y1[i]` when it
    /// chose 1; their hash tweaks are `tweak + i`: `Pads(tweak, j0, y0,
    /// y1)`.
    Pads(u128, usize, &'a [Block], &'a [Block]),
    /// The piece ends (its pads came before): the caller sends its answer
    /// on the channel.
    End(&'a mut Channel),
}

/// What an engine's [`CorrelatedReceiver::pads`] hands its caller.
pub enum RecvEvent<'a, L> {
    /// The chosen pads `y[i] = y_{c_{j0+i}}` of the run of consecutive OTs
    /// `j0..`, whose hash tweaks follow from `tweak`: `Pads(tweak, j0, y)`.
    Pads(u128, usize, &'a [Block]),
    /// The piece of OTs `piece` ends: its pads came before and its message
    /// is sent on the link. `End(link, piece)`.
    End(&'a mut L, Range<usize>),
}

/// The receiver's link while its engine runs: where it sends
/// ([`Outbox`]), and the engine's own messages that the sender placed in its
/// stream before the answers (Ferret's iterations), which the receiver reads
/// where they stand.
pub trait Inflow: Outbox {
    /// The sender's stream holds, at this point, a message of `len` bytes.
    fn announced(&mut self, len: usize) -> Result<(), OtError>;
    /// The message of the last announcement, into `buf`.
    fn message(&mut self, buf: &mut Vec<u8>) -> Result<(), OtError>;
}

/// A channel used in order by one thread: the receiver reads an announced
/// message at once and keeps it until it is asked for.
pub(crate) struct Inline<'a> {
    pub(crate) ch: &'a mut Channel,
    msg: Vec<u8>,
}

impl<'a> Inline<'a> {
    pub(crate) fn new(ch: &'a mut Channel) -> Self {
        Inline {
            ch,
            msg: Vec::new(),
        }
    }
}

impl Inflow for Inline<'_> {
    fn announced(&mut self, len: usize) -> Result<(), OtError> {
        self.msg.resize(len, 0);
        Ok(self.ch.recv(&mut self.msg)?)
    }

    fn message(&mut self, buf: &mut Vec<u8>) -> Result<(), OtError> {
        std::mem::swap(buf, &mut self.msg);
        Ok(())
    }
}

impl Outbox for Inline<'_> {
    fn send(&mut self, data: &[u8]) -> Result<(), NetError> {
        self.ch.send(data)
    }

    fn flush(&mut self) -> Result<(), NetError> {
        self.ch.flush()
    }
}

/// The sender of a correlated-OT engine, and the OTs derived from it (see
/// the [module documentation](self)). Both parties call the same methods
/// with the same `n` (batches, widths, classes), the receiver the
/// [`CorrelatedReceiver`] counterpart.
pub trait CorrelatedSender: Send {
    /// Runs what must run before a call's exchange (Ferret's set-up); by
    /// default nothing.
    fn prepare(&mut self, _ch: &mut Channel) -> Result<(), OtError> {
        Ok(())
    }

    /// Hands out the pads of `n` OTs with the receiver's chosen choices
    /// ([`CorrelatedReceiver::pads`]), in pieces cut at least at the batch
    /// ends `ends` (running sums of the batches ending at `n`; empty: one
    /// batch) and never across them: per piece, after reading the
    /// receiver's message, `f` gets the pads run by run
    /// ([`SendEvent::Pads`]), then [`SendEvent::End`]. Cost: the engine's
    /// share of the OTs.
    fn pads(
        &mut self,
        ch: &mut Channel,
        n: usize,
        ends: &[usize],
        f: impl FnMut(SendEvent<'_>) -> Result<(), OtError>,
    ) -> Result<(), OtError>;

    /// The pads `f(y0, y1)` of `n` OTs whose choices are random, drawn by
    /// the receiver ([`CorrelatedReceiver::random_pads`]). By default
    /// [`CorrelatedSender::pads`] as one piece; an engine whose COTs come
    /// with random choices overrides it to hand them out as they are.
    fn random_pads(
        &mut self,
        ch: &mut Channel,
        n: usize,
        mut f: impl FnMut(&[Block], &[Block]),
    ) -> Result<(), OtError> {
        self.pads(ch, n, &[], |e| {
            if let SendEvent::Pads(_, _, y0, y1) = e {
                f(y0, y1)
            }
            Ok(())
        })
    }

    /// Random 1-of-2 OT with random choices: `n` pairs of random `bits`-bit
    /// messages `(y_0, y_1)`; the receiver gets a random bit `b` and `y_b`.
    /// Cost: [`CorrelatedSender::random_pads`]'s.
    fn send_random_rot<T: Word>(
        &mut self,
        ch: &mut Channel,
        n: usize,
        bits: u32,
    ) -> Result<Vec<[T; 2]>, OtError> {
        check_bits::<T>(bits)?;
        let m = mask128(bits);
        let mut out = Vec::with_capacity(n);
        self.random_pads(ch, n, |y0, y1| out.extend(pairs(y0, y1, m)))?;
        Ok(out)
    }

    /// Random 1-of-2 OT with the receiver's chosen choices: `n` pairs of
    /// random `bits`-bit messages. Cost: the engine's share only.
    fn send_rot<T: Word>(
        &mut self,
        ch: &mut Channel,
        n: usize,
        bits: u32,
    ) -> Result<Vec<[T; 2]>, OtError> {
        check_bits::<T>(bits)?;
        let m = mask128(bits);
        let mut out = Vec::with_capacity(n);
        send_derived(self, ch, n, &[], |_, _, y0, y1, _| {
            out.extend(pairs(y0, y1, m))
        })?;
        Ok(out)
    }

    /// Chosen-message `(2 1)-OT_bits`: the receiver learns `msgs[j][c_j]`
    /// (reduced mod `2^bits`). Cost: `2·bits` bits per OT plus the engine's.
    fn send_ot<T: Word>(
        &mut self,
        ch: &mut Channel,
        msgs: &[[T; 2]],
        bits: u32,
    ) -> Result<(), OtError> {
        check_bits::<T>(bits)?;
        let m = mask128(bits);
        send_derived(self, ch, msgs.len(), &[], |_, j0, y0, y1, w| {
            for ((pair, a), b) in msgs[j0..].iter().zip(y0).zip(y1) {
                w.push_u128((pair[0].to_u128() ^ a.0) & m, bits);
                w.push_u128((pair[1].to_u128() ^ b.0) & m, bits);
            }
        })
    }

    /// `(2 1)-COT_bits` over `Z_{2^bits}` (`bits` in 1..=64): the sender
    /// inputs `corr[j] = x_j` and gets random `r_j`; the receiver gets `r_j
    /// + c_j·x_j`. One batch of [`CorrelatedSender::send_cot_batches`].
    /// Cost: `bits` bits per OT plus the engine's.
    fn send_cot(&mut self, ch: &mut Channel, corr: &[u64], bits: u32) -> Result<Vec<u64>, OtError> {
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

    /// Correlated OT with per-instance payloads ([`cot`]) in several
    /// batches, `batches[b]` instances in batch `b`, numbered on across
    /// batches: instance `j` has the elements `fields_of(j)` and the
    /// correlation `corr(j)` (one reduced value per element; missing values
    /// are 0); `out(j, r_j)` gets the sender's random `r_j`, in instance
    /// order; the receiver gets `r_j + c_j·Δ_j` elementwise. One answer of
    /// `⌈Σ W_j / 8⌉` bytes per piece; over a full-duplex channel with
    /// several batches one streamed exchange (one round for the receiver
    /// whatever the batch count). Cost: `W_j` bits per instance plus the
    /// engine's.
    fn send_cot_batches<'w, 'c, R: CotRing>(
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
        send_derived(self, ch, n, &ends, |_, j0, y0, y1, w| {
            cot.answer(j0, [y0, y1], &fields_of, &corr, w, &mut out)
        })
    }

    /// Several classes of `(N 1)-OT` from `⌈log₂ N⌉` random OTs each
    /// ([`nofn`]; `N` in 2..=256 and widths fitting `T`, checked by the
    /// caller): `msgs(c, range, out)` writes the messages of instances
    /// `range` of class `c` (`out[i·N + v]`, zeroed beforehand). Cost:
    /// `N·ℓ` bits per instance plus the engine's share of its random OTs.
    fn send_classes<T: Word>(
        &mut self,
        ch: &mut Channel,
        classes: &[KkClass],
        msgs: impl FnMut(usize, Range<usize>, &mut [T]),
    ) -> Result<(), OtError> {
        nofn::send(self, ch, classes, msgs)
    }
}

/// The receiver of a correlated-OT engine, and the OTs derived from it: the
/// counterparts of [`CorrelatedSender`]'s methods.
pub trait CorrelatedReceiver: Send {
    /// Runs what must run before a call's exchange (Ferret's set-up); by
    /// default nothing.
    fn prepare(&mut self, _ch: &mut Channel) -> Result<(), OtError> {
        Ok(())
    }

    /// The receiver of [`CorrelatedSender::pads`] with choices `choice(j)`
    /// (the set-up must have run, [`CorrelatedReceiver::prepare`]): per
    /// piece, `f` gets the chosen pads run by run ([`RecvEvent::Pads`]),
    /// then, once the piece's message is sent on `link`,
    /// [`RecvEvent::End`]. The engine's own messages in the sender's stream
    /// come from `link` ([`Inflow`]).
    fn pads<L: Inflow>(
        &mut self,
        link: &mut L,
        n: usize,
        choice: impl Fn(usize) -> bool + Sync,
        ends: &[usize],
        f: impl FnMut(RecvEvent<'_, L>) -> Result<(), OtError>,
    ) -> Result<(), OtError>;

    /// The receiver of [`CorrelatedSender::random_pads`]: `f(c, y)` per run
    /// of OTs, `c[i]` the random choice and `y[i]` the chosen pad of each.
    /// By default the choices are drawn from `prg` and run through
    /// [`CorrelatedReceiver::pads`]; an engine whose COTs come with random
    /// choices overrides it (and ignores `prg`).
    fn random_pads(
        &mut self,
        ch: &mut Channel,
        n: usize,
        prg: &mut Prg,
        mut f: impl FnMut(&[bool], &[Block]),
    ) -> Result<(), OtError> {
        let c = prg.bools(n);
        recv_derived(
            self,
            ch,
            n,
            |j| c[j],
            &[],
            |_| 0,
            |e| {
                if let Event::Pads(_, j0, y) = e {
                    f(&c[j0..j0 + y.len()], y)
                }
            },
        )
    }

    /// Receiver of [`CorrelatedSender::send_random_rot`]: `n` random choice
    /// bits (drawn from `prg` unless the engine's COTs have them) and the
    /// chosen messages.
    fn recv_random_rot<T: Word>(
        &mut self,
        ch: &mut Channel,
        n: usize,
        bits: u32,
        prg: &mut Prg,
    ) -> Result<(Vec<bool>, Vec<T>), OtError> {
        check_bits::<T>(bits)?;
        let m = mask128(bits);
        let (mut c, mut out) = (Vec::with_capacity(n), Vec::with_capacity(n));
        self.random_pads(ch, n, prg, |ci, y| {
            c.extend_from_slice(ci);
            out.extend(chosen::<T>(y, m));
        })?;
        Ok((c, out))
    }

    /// Receiver of [`CorrelatedSender::send_rot`]: the chosen random
    /// messages.
    fn recv_rot<T: Word>(
        &mut self,
        ch: &mut Channel,
        choices: &[bool],
        bits: u32,
    ) -> Result<Vec<T>, OtError> {
        check_bits::<T>(bits)?;
        let m = mask128(bits);
        let mut out = Vec::with_capacity(choices.len());
        recv_derived(
            self,
            ch,
            choices.len(),
            |j| choices[j],
            &[],
            |_| 0,
            |e| {
                if let Event::Pads(_, _, y) = e {
                    out.extend(chosen::<T>(y, m))
                }
            },
        )?;
        Ok(out)
    }

    /// Receiver of [`CorrelatedSender::send_ot`]: `msgs[j][choices[j]]`.
    fn recv_ot<T: Word>(
        &mut self,
        ch: &mut Channel,
        choices: &[bool],
        bits: u32,
    ) -> Result<Vec<T>, OtError> {
        check_bits::<T>(bits)?;
        let m = mask128(bits);
        let mut out: Vec<T> = Vec::with_capacity(choices.len());
        let per = 2 * u64::from(bits);
        // The pads go to `out` and the answer is xored in.
        recv_derived(
            self,
            ch,
            choices.len(),
            |j| choices[j],
            &[],
            |r| r.len() as u64 * per,
            |e| match e {
                Event::Pads(_, _, y) => out.extend(chosen::<T>(y, m)),
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

    /// Receiver of [`CorrelatedSender::send_cot`]: `r_j + c_j·x_j mod
    /// 2^bits`.
    fn recv_cot(
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

    /// Receiver of [`CorrelatedSender::send_cot_batches`] (the same
    /// `batches`): choices `choice(j)`, the sender's `fields_of(j)`; `out(j,
    /// v_j)` gets `r_j + c_j·Δ_j` elementwise, in instance order. A peer's
    /// out-of-range correction gives a wrong but reduced element.
    fn recv_cot_batches<'w, R: CotRing>(
        &mut self,
        ch: &mut Channel,
        batches: &[usize],
        choice: impl Fn(usize) -> bool + Sync,
        fields_of: impl Fn(usize) -> CotFields<'w, R> + Sync,
        mut out: impl FnMut(usize, &[u64]),
    ) -> Result<(), OtError> {
        let ends = batch_ends(batches);
        let n = ends.last().copied().unwrap_or(0);
        let mut cot = CotRecv::default();
        // The pads of the piece being answered.
        let mut kept = Vec::new();
        recv_derived(
            self,
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

    /// Receiver of [`CorrelatedSender::send_classes`] with one choice per
    /// instance (`choices[i] < N` of its class, checked by the caller): the
    /// chosen messages, in instance order.
    fn recv_classes<T: Word>(
        &mut self,
        ch: &mut Channel,
        classes: &[KkClass],
        choices: &[u8],
    ) -> Result<Vec<T>, OtError> {
        nofn::recv(self, ch, classes, choices)
    }
}

/// The pairs of the pads `y0`, `y1` reduced by the mask `m`.
fn pairs<T: Word>(y0: &[Block], y1: &[Block], m: u128) -> impl Iterator<Item = [T; 2]> {
    y0.iter()
        .zip(y1)
        .map(move |(a, b)| [T::from_u128(a.0 & m), T::from_u128(b.0 & m)])
}

/// The pads `y` reduced by the mask `m`.
fn chosen<T: Word>(y: &[Block], m: u128) -> impl Iterator<Item = T> + '_ {
    y.iter().map(move |v| T::from_u128(v.0 & m))
}

/// The sender's pads of the blocks `q` (tweaks from `tweak`) into `y`:
/// `y[0][i] = H(tweak + i, q_i)`, `y[1][i] = H(tweak + i, q_i ⊕ Δ)`.
pub(crate) fn hash_pairs(
    h: &Tccr,
    tweak: u128,
    q: &[Block],
    delta: Block,
    y: &mut [Vec<Block>; 2],
) {
    let [y0, y1] = y;
    y0.clear();
    y0.extend_from_slice(q);
    y1.clear();
    y1.extend(q.iter().map(|x| *x ^ delta));
    h.hash_in_place(tweak, y0);
    h.hash_in_place(tweak, y1);
}

/// The batch ends of a call: the running sums of `batches`.
fn batch_ends(batches: &[usize]) -> Vec<usize> {
    batches
        .iter()
        .scan(0, |s, &n| {
            *s += n;
            Some(*s)
        })
        .collect()
}

/// The batches `start..end` of `n` OTs cut at `ends` ([`CorrelatedSender::pads`]):
/// one batch of `n` if `ends` is empty; empty batches included.
pub(crate) fn batches(n: usize, ends: &[usize]) -> impl Iterator<Item = Range<usize>> + '_ {
    let whole = ends.is_empty().then_some(n);
    ends.iter().copied().chain(whole).scan(0, |start, end| {
        let r = *start..end;
        *start = end;
        Some(r)
    })
}

/// The sender of `n` derived OTs with chosen choices, in pieces cut at the
/// batch ends `ends` and where the engine cuts them: per run of
/// consecutive OTs `j0..j0 + k` of a piece, `each(tweak, j0, y0, y1, w)`
/// gets the pads of the receiver's choice 0 and 1 ([`SendEvent::Pads`]) and
/// writes its answer to `w`, sent (padded to whole bytes) when the piece
/// ends, nothing if empty. With several batches over a full-duplex channel
/// the call is one streamed exchange ([`Channel::streamed`]).
fn send_derived<S: CorrelatedSender + ?Sized>(
    source: &mut S,
    ch: &mut Channel,
    n: usize,
    ends: &[usize],
    mut each: impl FnMut(u128, usize, &[Block], &[Block], &mut BitWriter),
) -> Result<(), OtError> {
    if n == 0 {
        return Ok(());
    }
    source.prepare(ch)?;
    let mut w = BitWriter::new();
    let mut run = |ch: &mut Channel| {
        source.pads(ch, n, ends, |e| {
            match e {
                SendEvent::Pads(tweak, j0, y0, y1) => each(tweak, j0, y0, y1, &mut w),
                SendEvent::End(ch) => {
                    if w.bit_len() > 0 {
                        let bytes = std::mem::take(&mut w).finish();
                        ch.send(&bytes)?;
                        ch.flush()?;
                        // The next piece's answer reuses the allocation.
                        w = BitWriter::reuse(bytes, 0);
                    }
                }
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

/// What [`recv_derived`] hands its caller, per piece: the pads of its runs
/// of OTs, then the sender's answer.
pub(crate) enum Event<'y, 'r, 'b> {
    /// The pads `y[i] = y_{c_{j0+i}}` of the run of consecutive OTs `j0..`,
    /// whose hash tweaks follow from `tweak`: `Pads(tweak, j0, y)`.
    Pads(u128, usize, &'y [Block]),
    /// The sender's answer to the piece of OTs `piece` (whose pads came
    /// before): `Answer(piece, reader)`.
    Answer(Range<usize>, &'r mut BitReader<'b>),
}

/// What the streaming receiver's engine thread hands its decoding thread,
/// in the order of the sender's stream.
enum Item {
    /// A piece: its first OT's tweak, its OTs, their chosen pads.
    Piece(u128, Range<usize>, Vec<Block>),
    /// An announced engine message of this many bytes.
    Message(usize),
}

/// The engine thread's link: messages out on `tx`, pieces and
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

impl Outbox for Piped<'_, '_> {
    fn send(&mut self, data: &[u8]) -> Result<(), NetError> {
        self.tx.send(data)
    }

    fn flush(&mut self) -> Result<(), NetError> {
        self.tx.flush()
    }
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

/// The receiver of [`send_derived`] with choices `choice(j)`: per piece,
/// `on` gets its pads run by run ([`Event::Pads`]), then the receiver
/// reads the answer of `answer_bits(piece)` bits, which `on` reads
/// ([`Event::Answer`]). What of the pads the answer needs is the caller's
/// to keep: the inline path holds none of a piece's pads. With several
/// batches over a full-duplex channel, the pipeline of the [module
/// documentation](self).
pub(crate) fn recv_derived<R: CorrelatedReceiver + ?Sized>(
    source: &mut R,
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
    source.prepare(ch)?;
    let mut buf = Vec::new();
    if ends.len() > 1 && ch.full_duplex() {
        let (choice, this) = (&choice, &mut *source);
        let piped = ch.duplex(|tx, rx| {
            std::thread::scope(|s| {
                let (items, ready) = mpsc::sync_channel::<Item>(WINDOW);
                let (back, msgs) = mpsc::channel::<Vec<u8>>();
                let (spare_tx, spare) = mpsc::channel::<Vec<Block>>();
                let writer = s.spawn(move || {
                    let mut link = Piped { tx, items, msgs };
                    let (mut y, mut id0) = (Vec::new(), 0);
                    this.pads(&mut link, n, choice, ends, |e| match e {
                        RecvEvent::Pads(tweak, _, ys) => {
                            if y.is_empty() {
                                id0 = tweak;
                            }
                            y.extend_from_slice(ys);
                            Ok(())
                        }
                        RecvEvent::End(l, piece) => {
                            let mut next = spare.try_recv().unwrap_or_default();
                            next.clear();
                            let pads = std::mem::replace(&mut y, next);
                            l.items.send(Item::Piece(id0, piece, pads)).map_err(stopped)
                        }
                    })
                });
                let read = (|| {
                    // Closed early only when the writer failed.
                    while let Ok(item) = ready.recv() {
                        match item {
                            Item::Piece(id0, piece, y) => {
                                on(Event::Pads(id0, piece.start, &y));
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
    source.pads(&mut Inline::new(ch), n, &choice, ends, |e| match e {
        RecvEvent::Pads(tweak, j0, y) => {
            on(Event::Pads(tweak, j0, y));
            Ok(())
        }
        RecvEvent::End(l, piece) => {
            let bits = answer_bits(piece.clone());
            on(Event::Answer(
                piece,
                &mut read_answer(l.ch, &mut buf, bits)?,
            ));
            Ok(())
        }
    })
}

#[cfg(test)]
mod suite;
