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
//! run out (re-expanding its trees from the kept seeds, [`Trees::write`]).
//! A request of one piece per iteration (no batches) thus sends the message
//! exactly where the iteration runs; a request in batches gets it an
//! iteration's worth of pieces early, so a receiver that streams its pieces
//! ahead ([`super::derived`]) never waits for it.
//!
//! # Lazy outputs
//! An iteration's outputs are generated as they are handed out, a chunk of
//! whole GGM trees at a time ([`CHUNK`] blocks, rounded up to whole trees):
//! output `i` is leaf `i mod 2^h` of tree `i / 2^h` of the multi-point COT
//! ([`Trees::write`]: the sender from its kept tree seeds, the receiver from
//! the keys opened from the sender's message) XOR the LPN sum of column `i`
//! ([`LpnCode::encode`], addressed by `i`), so any run of trees is
//! generated on its own. When an iteration runs, the trees holding its
//! first `main.reserve()` outputs, the next reserve, are generated at once;
//! the rest chunk by chunk as [`Piece::parts`] visits them. A piece of a
//! request (what goes on the wire in one message) may span several chunks.
//!
//! Memory per side: the next reserve and the current iteration's (its LPN
//! secret, kept until its last chunk, while the next iteration may already
//! be announced), one chunk and the opened trees: about `2·16·(k + t·h) +
//! 16·CHUNK` bytes (≈ 21 MB with the production set, plus up to 2 MiB of
//! huge-page alignment per reserve), whatever the number of COTs taken,
//! instead of a whole iteration's outputs, `16·n` (170 MB).
//!
//! Each COT handed out, and each base COT of a GGM tree, gets a new index
//! (the engine's count of COTs consumed), its tweak for [`sci_net::crypto::Tccr`].
//! Each iteration that runs gets the next iteration index (the engine's
//! count of iterations, the bootstrapping one 0), which with the engine's
//! public seed keys its LPN code ([`LpnCode::new`]).

use super::super::ext::{ExtReceiver, ExtSender, choice_columns};
use super::super::{OtError, check};
use super::lpn::{HugeVec, LpnCode};
use super::mpcot::{self, Iteration, Scratch, Trees};
use crate::derived::{Inflow, Inline};
use sci_ir::params::ferret::{FerretParams, LpnParams};
use sci_net::crypto::{Block, Mmo, Prg, Tccr};
use sci_net::{Channel, Outbox};

/// Outputs generated per chunk (1 MiB), rounded up to whole trees: small
/// enough to stay in the L2 cache between their generation and their use.
const CHUNK: usize = 1 << 16;

/// The state both sides share: parameters, the code's seed, the next
/// reserve and the iteration being handed out.
struct Engine {
    params: FerretParams,
    /// The public seed of the LPN codes ([`LpnCode::new`]): the same on
    /// both sides, fresh per session.
    seed: Block,
    /// Iterations run so far (the bootstrapping one included): the index of
    /// the next iteration's code.
    iterations: u64,
    mmo: Mmo,
    tccr: Tccr,
    scratch: Scratch,
    /// The next iteration's reserve: its LPN secret and base COTs (the
    /// secret is read at random: huge pages).
    reserve: HugeVec,
    /// The iteration being handed out; `None` before the set-up.
    now: Option<Outputs>,
    /// Index of the next COT consumed (hash tweak).
    ids: u128,
    /// The tweak of the announced iteration's base COTs, until it runs.
    announced: Option<u128>,
    /// Outputs per chunk ([`CHUNK`]; tests use others).
    chunk: usize,
}

/// The iteration whose outputs are being handed out, generated lazily, a
/// chunk of whole trees at a time.
struct Outputs {
    p: LpnParams,
    /// Its LPN code (keyed by the engine's seed and the iteration's index).
    code: LpnCode,
    trees: Trees,
    /// The reserve it consumed, whose first `p.k` blocks are its LPN
    /// secret (huge pages).
    secret: HugeVec,
    /// Its outputs `start..start + chunk.len()`.
    chunk: Vec<Block>,
    start: usize,
    /// Its next output to hand out.
    pos: usize,
    /// Outputs per chunk, before rounding to whole trees.
    chunk_len: usize,
}

impl Outputs {
    /// Writes the iteration's outputs `first..first + out.len()` (whole
    /// trees) into `out`: the trees' multi-point COT outputs, then their
    /// LPN encoding. Cost per output: 2 AES blocks (GGM), 3 AES blocks and
    /// `D` random reads of the secret (LPN).
    fn generate(&self, mmo: &Mmo, first: usize, out: &mut [Block]) {
        let leaves = 1 << self.p.log_leaves;
        debug_assert!(first.is_multiple_of(leaves) && out.len().is_multiple_of(leaves));
        let mut sums = Vec::new();
        for (i, tree) in out.chunks_exact_mut(leaves).enumerate() {
            self.trees.write(mmo, first / leaves + i, tree, &mut sums);
        }
        self.code.encode(out, first, &self.secret[..self.p.k]);
    }

    /// Makes the chunk hold output `pos` (below `p.n()`): if it does not,
    /// generates the chunk of trees from `pos`'s on.
    fn load(&mut self, mmo: &Mmo) {
        if (self.start..self.start + self.chunk.len()).contains(&self.pos) {
            return;
        }
        let leaves = 1 << self.p.log_leaves;
        let first = self.pos / leaves * leaves;
        let len = self
            .chunk_len
            .next_multiple_of(leaves)
            .min(self.p.n() - first);
        let mut chunk = std::mem::take(&mut self.chunk);
        chunk.resize(len, Block::ZERO);
        self.generate(mmo, first, &mut chunk);
        (self.chunk, self.start) = (chunk, first);
    }
}

/// A piece of a request ([`Engine::take`]): its `len` COTs, the request's
/// from `j` on, numbered (hash tweaks) from `tweak`, generated as
/// [`Piece::parts`] visits them.
pub(super) struct Piece<'a> {
    tweak: u128,
    j: usize,
    len: usize,
    now: &'a mut Outputs,
    mmo: &'a Mmo,
}

impl Piece<'_> {
    /// The request's index of the piece's first COT.
    pub(super) fn first(&self) -> usize {
        self.j
    }

    /// The piece's number of COTs.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Visits the piece's COTs in order, generating them chunk by chunk:
    /// `g(tweak, j, cots)` for each run of COTs numbered from `tweak` that
    /// serves the request's COTs from `j` on (a run ends where a chunk
    /// does). COTs not visited (an error) are never handed out.
    pub(super) fn parts(
        self,
        mut g: impl FnMut(u128, usize, &[Block]) -> Result<(), OtError>,
    ) -> Result<(), OtError> {
        let mut done = 0;
        while done < self.len {
            self.now.load(self.mmo);
            let o = &mut *self.now;
            let at = o.pos - o.start;
            let len = (o.chunk.len() - at).min(self.len - done);
            g(
                self.tweak + done as u128,
                self.j + done,
                &o.chunk[at..at + len],
            )?;
            o.pos += len;
            done += len;
        }
        Ok(())
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

    /// Opens the announced iteration `it`: what this side keeps to write
    /// its multi-point COT outputs tree by tree.
    fn open(&mut self, link: &mut L, it: &Iteration<'_>, s: &mut Scratch)
    -> Result<Trees, OtError>;
}

impl Engine {
    fn new(params: FerretParams, seed: Block) -> Result<Engine, OtError> {
        check(params.valid(), || {
            format!("Ferret parameters {params:?} do not chain (see FerretParams::valid)")
        })?;
        Ok(Engine {
            params,
            seed,
            iterations: 0,
            mmo: Mmo::new(),
            tccr: Tccr::new(),
            scratch: Scratch::default(),
            reserve: HugeVec::default(),
            now: None,
            ids: 0,
            announced: None,
            chunk: CHUNK,
        })
    }

    fn set(&self, boot: bool) -> LpnParams {
        if boot {
            self.params.boot
        } else {
            self.params.main
        }
    }

    /// The outputs of set `p`'s iteration generated when it runs: the
    /// trees holding the next reserve.
    fn eager(&self, p: LpnParams) -> usize {
        let r = self.params.main.reserve();
        r.next_multiple_of(1 << p.log_leaves).min(p.n())
    }

    /// Blocks a reserve's buffer holds: the set-up's reserve, or an
    /// iteration's eager outputs.
    fn reserve_capacity(&self) -> usize {
        let (boot, main) = (self.params.boot, self.params.main);
        boot.reserve().max(self.eager(boot)).max(self.eager(main))
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
    /// opens its multi-point COT of `n` outputs over the reserve's last
    /// `t·h` COTs, keeps the reserve's first `k` as its LPN secret, builds
    /// its code (from the engine's seed and the iteration's index), and
    /// generates its first `main.reserve()` outputs, the next reserve (the
    /// rest of their trees start its first chunk).
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
        let it = Iteration {
            mmo: &self.mmo,
            tccr: &self.tccr,
            p,
            base: &self.reserve[p.k..],
            tweak,
        };
        let trees = side.open(link, &it, &mut self.scratch)?;
        let (mut secret, chunk) = match self.now.take() {
            Some(o) => (o.secret, o.chunk),
            None => (HugeVec::with_capacity(self.reserve_capacity()), Vec::new()),
        };
        std::mem::swap(&mut secret, &mut self.reserve);
        let r = self.params.main.reserve();
        let code = LpnCode::new(self.seed, p.k, p.n(), self.iterations);
        self.iterations += 1;
        let mut now = Outputs {
            p,
            code,
            trees,
            secret,
            chunk,
            start: r,
            pos: r,
            chunk_len: self.chunk,
        };
        self.reserve.resize(self.eager(p));
        now.generate(&self.mmo, 0, &mut self.reserve);
        now.chunk.clear();
        now.chunk.extend_from_slice(&self.reserve[r..]);
        self.reserve.resize(r);
        self.now = Some(now);
        Ok(())
    }

    /// Hands out `n` COTs in pieces (the set-up must have run, [`Engine::prepare`]):
    /// `f(link, piece)` for each run of COTs that serves the request's COTs
    /// from `piece.first()` on, a piece ending where a batch (`ends`, the
    /// running sums of the batches; see [`piece_end`]) or an iteration's
    /// COTs end; its COTs are generated as `f` visits them
    /// ([`Piece::parts`]). The next iteration is announced after the first
    /// piece of the current one that the request continues past.
    fn take<L>(
        &mut self,
        side: &mut impl Side<L>,
        link: &mut L,
        n: usize,
        ends: &[usize],
        mut f: impl FnMut(&mut L, Piece<'_>) -> Result<(), OtError>,
    ) -> Result<(), OtError> {
        let mut j = 0;
        while j < n {
            if self.available() == Some(0) {
                self.iterate(side, link, false)?;
            }
            let now = self.now.as_mut().expect("the set-up ran");
            let (pos, avail) = (now.pos, now.p.n() - now.pos);
            let len = (piece_end(ends, j, n) - j).min(avail);
            let piece = Piece {
                tweak: self.ids,
                j,
                len,
                now,
                mmo: &self.mmo,
            };
            f(link, piece)?;
            if let Some(now) = self.now.as_mut() {
                now.pos = pos + len;
            }
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
        if self.now.is_none() {
            self.reserve = HugeVec::with_capacity(self.reserve_capacity());
            side.bootstrap(ch, self.params.boot.reserve(), &mut self.reserve)?;
            self.iterate(side, &mut Inline::new(ch), true)?;
        }
        Ok(())
    }

    fn available(&self) -> Option<usize> {
        self.now.as_ref().map(|o| o.p.n() - o.pos)
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

    fn open(&mut self, _: &mut L, _: &Iteration<'_>, s: &mut Scratch) -> Result<Trees, OtError> {
        Ok(Trees::sender(self.delta, s))
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

    fn open(
        &mut self,
        link: &mut L,
        it: &Iteration<'_>,
        s: &mut Scratch,
    ) -> Result<Trees, OtError> {
        link.message(&mut s.msg)?;
        check(s.msg.len() as u64 == it.p.iteration_bytes(), || {
            "an iteration ran before its announcement".into()
        })?;
        Ok(Trees::receiver(it, s))
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
    /// A sender with the given parameters and LPN seed `lpn_seed` (public,
    /// fresh per session, the receiver's must be the same: iteration `i`'s
    /// code is `LpnCode::new(lpn_seed, k, n, i)`), drawing `Δ`, the base
    /// OTs' scalars and the tree seeds from `prg`. Nothing runs until the
    /// first request. Errors if the parameters do not chain.
    pub fn new(
        params: FerretParams,
        lpn_seed: Block,
        mut prg: Prg,
    ) -> Result<FerretSender, OtError> {
        let delta = prg.next_block() | Block(1);
        Ok(FerretSender {
            engine: Engine::new(params, lpn_seed)?,
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
    /// iteration's COTs or a chunk of them (a few MiB) end. Cost: [`sci_ir::cost::ferret::setup`] once, then
    /// [`sci_ir::cost::ferret::random_cots`].
    pub fn take(
        &mut self,
        ch: &mut Channel,
        n: usize,
        mut f: impl FnMut(&mut Channel, u128, &[Block]) -> Result<(), OtError>,
    ) -> Result<(), OtError> {
        self.take_pieces(ch, n, &[], |ch, piece| piece.parts(|t, _, q| f(ch, t, q)))
    }

    /// [`FerretSender::take`] in pieces cut also at the batch ends `ends`:
    /// `f(ch, piece)` serves the request's COTs from `piece.first()` on
    /// (see `Engine::take`, which also places the announcements).
    pub(super) fn take_pieces(
        &mut self,
        ch: &mut Channel,
        n: usize,
        ends: &[usize],
        f: impl FnMut(&mut Channel, Piece<'_>) -> Result<(), OtError>,
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
    /// A receiver with the given parameters and LPN seed (the sender's,
    /// [`FerretSender::new`]), drawing the base OTs' scalars and the
    /// bootstrapping choice bits from `prg`. Errors if the parameters do not
    /// chain.
    pub fn new(params: FerretParams, lpn_seed: Block, prg: Prg) -> Result<FerretReceiver, OtError> {
        Ok(FerretReceiver {
            engine: Engine::new(params, lpn_seed)?,
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
        self.take_with(&mut Inline::new(ch), n, &[], |l, piece| {
            piece.parts(|t, _, b| f(l.ch, t, b))
        })
    }

    /// The receiver of [`FerretSender::take_pieces`] over `link` (the
    /// set-up must have run): the announced messages come from `link`.
    pub(super) fn take_with<L: Inflow>(
        &mut self,
        link: &mut L,
        n: usize,
        ends: &[usize],
        f: impl FnMut(&mut L, Piece<'_>) -> Result<(), OtError>,
    ) -> Result<(), OtError> {
        self.engine.take(&mut self.side, link, n, ends, f)
    }

    /// The receiver of [`FerretSender::setup`].
    pub fn setup(&mut self, ch: &mut Channel) -> Result<(), OtError> {
        self.engine.prepare(&mut self.side, ch)
    }
}

#[cfg(test)]
mod tests {
    use super::super::TEST_FERRET;
    use super::*;
    use sci_net::mem;
    use std::time::Duration;

    /// One side with chunks of `chunk` outputs hands out the bootstrapping
    /// iteration's COTs, then the first main iteration's in requests of
    /// odd sizes; returns the main iteration's outputs as handed out (after
    /// its reserve), the reserve it left, and all its `n` outputs generated
    /// at once (the eager reference, [`Outputs::generate`] on the whole
    /// range).
    fn lazy_and_eager<S>(
        e: &mut Engine,
        side: &mut S,
        ch: &mut Channel,
        chunk: usize,
    ) -> [Vec<Block>; 3]
    where
        S: Bootstrap + for<'a> Side<Inline<'a>>,
    {
        let p = TEST_FERRET;
        e.chunk = chunk;
        e.prepare(side, ch).unwrap();
        let mut lazy = Vec::new();
        let per = p.per_iteration();
        for n in [p.first_available(), 1000, 7, 3001, per - 4008] {
            e.take(side, &mut Inline::new(ch), n, &[], |_, piece| {
                piece.parts(|_, _, q| {
                    lazy.extend_from_slice(q);
                    Ok(())
                })
            })
            .unwrap();
        }
        assert_eq!(e.available(), Some(0));
        let now = e.now.as_ref().expect("set up");
        assert_eq!(
            e.iterations, 2,
            "the bootstrapping and the first main iteration"
        );
        // Its code is the one of the seed and iteration 1, not another's.
        let code = |it| LpnCode::new(e.seed, p.main.k, p.main.n(), it).column(5);
        assert_eq!(now.code.column(5), code(1));
        assert_ne!(now.code.column(5), code(2));
        let mut eager = vec![Block::ZERO; p.main.n()];
        now.generate(&e.mmo, 0, &mut eager);
        lazy.drain(..p.first_available());
        [lazy, e.reserve.to_vec(), eager]
    }

    fn check_lazy_equals_eager(chunk: usize) {
        let (mut c0, mut c1) = mem::pair(Some(Duration::from_secs(60)));
        let seed = Block(sci_testkit::seed().into());
        let lpn = Prg::derive(seed, "lazy-lpn", 0).next_block();
        let mut s = FerretSender::new(TEST_FERRET, lpn, Prg::derive(seed, "lazy-s", 0)).unwrap();
        let mut r = FerretReceiver::new(TEST_FERRET, lpn, Prg::derive(seed, "lazy-r", 0)).unwrap();
        let delta = s.delta();
        let (sent, got) = sci_testkit::run2(
            || lazy_and_eager(&mut s.engine, &mut s.side, &mut c0, chunk),
            || lazy_and_eager(&mut r.engine, &mut r.side, &mut c1, chunk),
        );
        let reserve = TEST_FERRET.main.reserve();
        for [lazy, kept, eager] in [&sent, &got] {
            assert_eq!(lazy.len(), eager.len() - reserve);
            for (i, (a, b)) in lazy.iter().zip(&eager[reserve..]).enumerate() {
                assert_eq!(a, b, "output {} (chunk {chunk})", reserve + i);
            }
            assert_eq!(kept[..], eager[..reserve], "the next reserve");
        }
        // And the outputs are COTs.
        for (q, t) in sent[2].iter().zip(&got[2]) {
            assert_eq!(*t, if t.bit(0) { *q ^ delta } else { *q });
        }
    }

    #[test]
    fn lazy_outputs_equal_the_eager_generation() {
        // 3 trees of 1024 leaves per chunk (64 trees, 3 ∤ 64; the eager
        // trees end at tree 5), a chunk rounded up to a tree, one tree.
        for chunk in [3 << 10, 2500, 1] {
            check_lazy_equals_eager(chunk);
        }
    }
}
