//! The per-lane COT source: Ferret iterations run on demand, COTs handed out
//! in pieces ([`FerretSender::take`], [`FerretReceiver::take`]).
//!
//! Set-up (on the first request): a dedicated IKNP extension ([`super::super::ext`],
//! its own 128 base OTs, its secret `s = Δ` with low bit 1) gives the
//! `boot.reserve()` COTs of the bootstrapping iteration, whose outputs give
//! the reserve of the first main iteration and the first COTs handed out.
//! Every later iteration runs when the handed-out COTs are used up and
//! consumes the reserve kept from the previous one (its first
//! `main.reserve()` outputs; Ferret's bootstrapping, §5.3).
//!
//! # Announcements
//! An iteration's one message (the sender's, [`mpcot::announce`]) depends
//! on nothing the receiver sends, so it can go ahead of its use: when a
//! request will need the next iteration, the sender *announces* it right
//! after the request's first piece of the current iteration's COTs (the
//! receiver reads it there, in stream order) and runs it only when the COTs
//! run out (re-expanding its trees from the kept seeds, [`mpcot::expand`]).
//! A request of one piece per iteration (no batches) thus sends the message
//! exactly where the iteration runs; a request in batches gets it an
//! iteration's worth of pieces early, so a receiver that streams its pieces
//! ahead ([`super::derived`]) never waits for it. Memory: one iteration's
//! outputs and one reserve, `16·(n + k + t·h)` bytes per side (≈ 180 MB
//! with the production set), whatever the number of COTs taken.
//!
//! Each COT handed out, and each base COT of a GGM tree, gets a new index
//! (the engine's count of COTs consumed), its tweak for [`crate::crypto::Tccr`].

use super::super::ext::{ExtReceiver, ExtSender, choice_columns};
use super::super::{OtError, check};
use super::lpn::{HugeVec, LpnCode};
use super::mpcot::{self, Iteration, Scratch};
use crate::crypto::{Block, Mmo, Prg, Tccr};
use crate::net::{Channel, NetError, Outbox};
use sci_ir::cost::ferret::{FerretParams, LpnParams};

/// The state both sides share: parameters, codes, the reserve and the
/// current iteration's outputs.
struct Engine {
    params: FerretParams,
    codes: [LpnCode; 2],
    mmo: Mmo,
    tccr: Tccr,
    scratch: Scratch,
    /// The LPN secret and the base COTs, read at random: huge pages.
    reserve: HugeVec,
    cots: Vec<Block>,
    /// Next COT of `cots` to hand out; `None` before the set-up.
    pos: Option<usize>,
    /// Index of the next COT consumed (hash tweak).
    ids: u128,
    /// The tweak of the announced iteration's base COTs, until it runs.
    announced: Option<u128>,
}

/// The receiver's access to the sender's iteration messages, which it
/// reads where they stand in the sender's stream.
pub(super) trait Inflow {
    /// The sender's stream holds, at this point, a message of `len` bytes.
    fn announced(&mut self, len: usize) -> Result<(), OtError>;
    /// The message of the last announcement, into `buf`.
    fn message(&mut self, buf: &mut Vec<u8>) -> Result<(), OtError>;
}

/// A channel used in order by one thread: the receiver reads an announced
/// message at once and keeps it until its iteration runs.
pub(super) struct Inline<'a> {
    pub(super) ch: &'a mut Channel,
    msg: Vec<u8>,
}

impl<'a> Inline<'a> {
    pub(super) fn new(ch: &'a mut Channel) -> Self {
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

/// A side's set-up.
trait Bootstrap {
    /// `n` COTs of a dedicated IKNP extension into `reserve` (emptied
    /// first).
    fn bootstrap(
        &mut self,
        ch: &mut Channel,
        n: usize,
        reserve: &mut HugeVec,
    ) -> Result<(), OtError>;
}

/// What differs between the two sides' iterations, over a link `L`.
trait Side<L> {
    /// The announcement of iteration `it`: the sender's message, sent or
    /// read.
    fn announce(
        &mut self,
        link: &mut L,
        it: &Iteration<'_>,
        s: &mut Scratch,
    ) -> Result<(), OtError>;

    /// This side's multi-point COT outputs of the announced iteration `it`
    /// into `out`.
    fn expand(
        &mut self,
        link: &mut L,
        it: &Iteration<'_>,
        out: &mut [Block],
        s: &mut Scratch,
    ) -> Result<(), OtError>;
}

impl Engine {
    fn new(params: FerretParams) -> Result<Engine, OtError> {
        check(params.valid(), || {
            format!("Ferret parameters {params:?} do not chain (see FerretParams::valid)")
        })?;
        Ok(Engine {
            codes: [params.boot, params.main].map(|p| LpnCode::new(p.k, p.n())),
            params,
            mmo: Mmo::new(),
            tccr: Tccr::new(),
            scratch: Scratch::default(),
            reserve: HugeVec::default(),
            cots: Vec::new(),
            pos: None,
            ids: 0,
            announced: None,
        })
    }

    fn set(&self, boot: bool) -> LpnParams {
        if boot {
            self.params.boot
        } else {
            self.params.main
        }
    }

    /// Announces the next iteration (`boot` or main) over the reserve:
    /// its base COTs (the reserve's last `t·h`) get the next indices,
    /// returned.
    fn announce<L>(
        &mut self,
        side: &mut impl Side<L>,
        link: &mut L,
        boot: bool,
    ) -> Result<u128, OtError> {
        let p = self.set(boot);
        debug_assert_eq!(self.reserve.len(), p.reserve());
        let it = Iteration {
            mmo: &self.mmo,
            tccr: &self.tccr,
            p,
            base: &self.reserve[p.k..],
            tweak: self.ids,
        };
        side.announce(link, &it, &mut self.scratch)?;
        self.ids += it.base.len() as u128;
        Ok(it.tweak)
    }

    /// Runs the announced iteration (announcing it first if it was not):
    /// multi-point COT of `n` outputs from the reserve's last `t·h` COTs,
    /// LPN encoding with its first `k`, then the first `main.reserve()`
    /// outputs become the next reserve.
    fn iterate<L>(
        &mut self,
        side: &mut impl Side<L>,
        link: &mut L,
        boot: bool,
    ) -> Result<(), OtError> {
        let tweak = match self.announced.take() {
            Some(t) => t,
            None => self.announce(side, link, boot)?,
        };
        let p = self.set(boot);
        let (secret, base) = self.reserve.split_at(p.k);
        self.cots.resize(p.n(), Block::ZERO);
        let it = Iteration {
            mmo: &self.mmo,
            tccr: &self.tccr,
            p,
            base,
            tweak,
        };
        side.expand(link, &it, &mut self.cots, &mut self.scratch)?;
        self.codes[usize::from(!boot)].encode(&mut self.cots, secret);
        let next = self.params.main.reserve();
        self.reserve.clear();
        self.reserve.extend(self.cots[..next].iter().copied());
        self.pos = Some(next);
        Ok(())
    }

    /// Hands out `n` COTs in pieces (the set-up must have run, [`Engine::prepare`]):
    /// `f(link, tweak, j, cots)` for each run of COTs numbered from `tweak`
    /// that serves the request's COTs from `j` on, a piece ending where a
    /// batch (`ends`, the running sums of the batches; see [`piece_end`])
    /// or an iteration's COTs end. The next iteration is announced after
    /// the first piece of the current one that the request continues past.
    fn take<L>(
        &mut self,
        side: &mut impl Side<L>,
        link: &mut L,
        n: usize,
        ends: &[usize],
        mut f: impl FnMut(&mut L, u128, usize, &[Block]) -> Result<(), OtError>,
    ) -> Result<(), OtError> {
        let mut j = 0;
        while j < n {
            let mut pos = self.pos.unwrap_or(0);
            if pos == self.cots.len() {
                self.iterate(side, link, false)?;
                pos = self.params.main.reserve();
            }
            let avail = self.cots.len() - pos;
            let len = (piece_end(ends, j, n) - j).min(avail);
            f(link, self.ids, j, &self.cots[pos..pos + len])?;
            self.pos = Some(pos + len);
            self.ids += len as u128;
            j += len;
            if n - j > avail - len && self.announced.is_none() {
                self.announced = Some(self.announce(side, link, false)?);
            }
        }
        Ok(())
    }

    /// Runs the set-up and the bootstrapping iteration unless done already.
    fn prepare<S>(&mut self, side: &mut S, ch: &mut Channel) -> Result<(), OtError>
    where
        S: Bootstrap + for<'a> Side<Inline<'a>>,
    {
        if self.pos.is_none() {
            let (boot, main) = (self.params.boot, self.params.main);
            self.reserve = HugeVec::with_capacity(boot.reserve().max(main.reserve()));
            side.bootstrap(ch, boot.reserve(), &mut self.reserve)?;
            self.iterate(side, &mut Inline::new(ch), true)?;
        }
        Ok(())
    }

    fn available(&self) -> Option<usize> {
        self.pos.map(|p| self.cots.len() - p)
    }
}

/// The end of the piece holding the request's COT `j`: the first of `ends`
/// above `j`, or `n` (the pieces of a request are `0..ends[0]`,
/// `ends[0]..ends[1]`, …, before the cuts at iterations' ends).
fn piece_end(ends: &[usize], j: usize, n: usize) -> usize {
    ends.get(ends.partition_point(|&e| e <= j))
        .copied()
        .unwrap_or(n)
        .min(n)
}

/// The sender's side: `Δ`, the tree seeds' generator and the set-up's.
struct Sending {
    prg: Prg,
    setup_prg: Prg,
    delta: Block,
}

impl Bootstrap for Sending {
    fn bootstrap(
        &mut self,
        ch: &mut Channel,
        n: usize,
        reserve: &mut HugeVec,
    ) -> Result<(), OtError> {
        let mut ext = ExtSender::<1>::setup_with_secret(ch, &mut self.setup_prg, [self.delta])?;
        reserve.clear();
        ext.extend(ch, n, |_, rows, _| {
            reserve.extend(rows[0].iter().map(|q| *q & !Block(1)));
            Ok(())
        })
    }
}

impl<L: Outbox> Side<L> for Sending {
    fn announce(
        &mut self,
        link: &mut L,
        it: &Iteration<'_>,
        s: &mut Scratch,
    ) -> Result<(), OtError> {
        mpcot::announce(link, it, &mut self.prg, self.delta, s)
    }

    fn expand(
        &mut self,
        _: &mut L,
        it: &Iteration<'_>,
        out: &mut [Block],
        s: &mut Scratch,
    ) -> Result<(), OtError> {
        mpcot::expand(it.mmo, self.delta, &it.p, s, out);
        Ok(())
    }
}

/// The receiver's side: the generator of the set-up's base OTs and
/// bootstrapping choices.
struct Receiving {
    prg: Prg,
}

impl Bootstrap for Receiving {
    fn bootstrap(
        &mut self,
        ch: &mut Channel,
        n: usize,
        reserve: &mut HugeVec,
    ) -> Result<(), OtError> {
        let mut ext = ExtReceiver::<1>::setup(ch, &mut self.prg)?;
        let choices = self.prg.bools(n);
        reserve.clear();
        ext.extend(
            ch,
            n,
            |range, cols| choice_columns(range, cols, n, |j| choices[j]),
            |off, rows, _| {
                let c = &choices[off..];
                reserve.extend(
                    rows[0]
                        .iter()
                        .zip(c)
                        .map(|(t, &b)| (*t & !Block(1)) | Block(u128::from(b))),
                );
                Ok(())
            },
        )
    }
}

impl<L: Inflow> Side<L> for Receiving {
    fn announce(
        &mut self,
        link: &mut L,
        it: &Iteration<'_>,
        _: &mut Scratch,
    ) -> Result<(), OtError> {
        link.announced(it.p.iteration_bytes() as usize)
    }

    fn expand(
        &mut self,
        link: &mut L,
        it: &Iteration<'_>,
        out: &mut [Block],
        s: &mut Scratch,
    ) -> Result<(), OtError> {
        link.message(&mut s.msg)?;
        check(s.msg.len() as u64 == it.p.iteration_bytes(), || {
            "an iteration ran before its announcement".into()
        })?;
        mpcot::recv(it, out, s);
        Ok(())
    }
}

/// The COT sender of a lane's silent engine: holds `Δ` (low bit 1); each COT
/// it hands out is a block `q` (low bit 0), the receiver's being `q ⊕ b·Δ`.
pub struct FerretSender {
    engine: Engine,
    side: Sending,
}

impl std::fmt::Debug for FerretSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FerretSender")
            .field("params", &self.engine.params)
            .finish_non_exhaustive()
    }
}

impl FerretSender {
    /// A sender with the given parameters, drawing `Δ`, the base OTs'
    /// scalars and the tree seeds from `prg`. Nothing runs until the first
    /// request. Errors if the parameters do not chain.
    pub fn new(params: FerretParams, mut prg: Prg) -> Result<FerretSender, OtError> {
        let delta = prg.next_block() | Block(1);
        Ok(FerretSender {
            engine: Engine::new(params)?,
            side: Sending {
                setup_prg: prg.fork(),
                prg,
                delta,
            },
        })
    }

    /// The global correlation `Δ`.
    pub fn delta(&self) -> Block {
        self.side.delta
    }

    /// COTs left from the last iteration (`None` before the set-up): the
    /// cost model's `available` ([`sci_ir::cost::ferret::derived`]).
    pub fn available(&self) -> Option<usize> {
        self.engine.available()
    }

    /// Hands out `n` random COTs: calls `f(ch, j0, q)` with consecutive
    /// slices `q` of the sender's blocks, numbered from `j0` (never reused),
    /// running the set-up and new iterations when needed (the receiver calls
    /// [`FerretReceiver::take`] with the same `n`). A slice ends where an
    /// iteration's COTs do. Cost: [`sci_ir::cost::ferret::setup`] once, then
    /// [`sci_ir::cost::ferret::random_cots`].
    pub fn take(
        &mut self,
        ch: &mut Channel,
        n: usize,
        mut f: impl FnMut(&mut Channel, u128, &[Block]) -> Result<(), OtError>,
    ) -> Result<(), OtError> {
        self.take_pieces(ch, n, &[], |ch, t, _, q| f(ch, t, q))
    }

    /// [`FerretSender::take`] in pieces cut also at the batch ends `ends`:
    /// `f(ch, j0, j, q)` serves the request's COTs from `j` on (see
    /// `Engine::take`, which also places the announcements).
    pub(super) fn take_pieces(
        &mut self,
        ch: &mut Channel,
        n: usize,
        ends: &[usize],
        f: impl FnMut(&mut Channel, u128, usize, &[Block]) -> Result<(), OtError>,
    ) -> Result<(), OtError> {
        if n == 0 {
            return Ok(());
        }
        self.setup(ch)?;
        self.engine.take(&mut self.side, ch, n, ends, f)
    }

    /// Runs the set-up now (the receiver calls [`FerretReceiver::setup`]):
    /// [`sci_ir::cost::ferret::setup`], nothing if done already.
    pub fn setup(&mut self, ch: &mut Channel) -> Result<(), OtError> {
        self.engine.prepare(&mut self.side, ch)
    }
}

/// The COT receiver of a lane's silent engine: each COT it hands out is a
/// block `t = q ⊕ b·Δ` whose low bit is the random choice bit `b`.
pub struct FerretReceiver {
    engine: Engine,
    side: Receiving,
}

impl std::fmt::Debug for FerretReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FerretReceiver")
            .field("params", &self.engine.params)
            .finish_non_exhaustive()
    }
}

impl FerretReceiver {
    /// A receiver with the given parameters, drawing the base OTs' scalars
    /// and the bootstrapping choice bits from `prg`.
    pub fn new(params: FerretParams, prg: Prg) -> Result<FerretReceiver, OtError> {
        Ok(FerretReceiver {
            engine: Engine::new(params)?,
            side: Receiving { prg },
        })
    }

    /// As [`FerretSender::available`].
    pub fn available(&self) -> Option<usize> {
        self.engine.available()
    }

    /// The receiver of [`FerretSender::take`]: `f(ch, j0, t)` with the
    /// receiver's blocks (choice bit `t.bit(0)`).
    pub fn take(
        &mut self,
        ch: &mut Channel,
        n: usize,
        mut f: impl FnMut(&mut Channel, u128, &[Block]) -> Result<(), OtError>,
    ) -> Result<(), OtError> {
        if n == 0 {
            return Ok(());
        }
        self.setup(ch)?;
        self.take_with(&mut Inline::new(ch), n, &[], |l, t, _, b| f(l.ch, t, b))
    }

    /// The receiver of [`FerretSender::take_pieces`] over `link` (the
    /// set-up must have run): the announced messages come from `link`.
    pub(super) fn take_with<L: Inflow>(
        &mut self,
        link: &mut L,
        n: usize,
        ends: &[usize],
        f: impl FnMut(&mut L, u128, usize, &[Block]) -> Result<(), OtError>,
    ) -> Result<(), OtError> {
        self.engine.take(&mut self.side, link, n, ends, f)
    }

    /// The receiver of [`FerretSender::setup`].
    pub fn setup(&mut self, ch: &mut Channel) -> Result<(), OtError> {
        self.engine.prepare(&mut self.side, ch)
    }
}
