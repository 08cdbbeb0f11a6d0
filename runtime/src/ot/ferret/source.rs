//! The per-lane COT source: Ferret iterations run on demand, COTs handed out
//! in slices ([`FerretSender::take`], [`FerretReceiver::take`]).
//!
//! Set-up (on the first request): a dedicated IKNP extension ([`super::super::ext`],
//! its own 128 base OTs, its secret `s = Δ` with low bit 1) gives the
//! `boot.reserve()` COTs of the bootstrapping iteration, whose outputs give
//! the reserve of the first main iteration and the first COTs handed out.
//! Every later iteration runs when the handed-out COTs are used up and
//! consumes the reserve kept from the previous one (its first
//! `main.reserve()` outputs; Ferret's bootstrapping, §5.3). Memory: one
//! iteration's outputs and one reserve, `16·(n + k + t·h)` bytes per side
//! (≈ 180 MB with the production set), whatever the number of COTs taken.
//!
//! Each COT handed out, and each base COT of a GGM tree, gets a new index
//! (the engine's count of COTs consumed), its tweak for [`crate::crypto::Tccr`].

use super::super::ext::{ExtReceiver, ExtSender};
use super::super::{OtError, check};
use super::lpn::{HugeVec, LpnCode};
use super::mpcot::{self, Scratch};
use crate::crypto::{Block, Mmo, Prg, Tccr};
use crate::net::Channel;
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
}

/// What one side does in an iteration: its half of the multi-point COT.
type Trees<'a> = dyn FnMut(
        &mut Channel,
        (&Mmo, &Tccr),
        &LpnParams,
        &[Block],
        u128,
        &mut [Block],
        &mut Scratch,
    ) -> Result<(), OtError>
    + 'a;

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
        })
    }

    /// One iteration (`boot` or main) over the reserve: multi-point COT of
    /// `n` outputs from its last `t·h` COTs, LPN encoding with its first `k`,
    /// then the first `main.reserve()` outputs become the next reserve.
    fn iterate(
        &mut self,
        ch: &mut Channel,
        boot: bool,
        trees: &mut Trees<'_>,
    ) -> Result<(), OtError> {
        let p = if boot {
            self.params.boot
        } else {
            self.params.main
        };
        debug_assert_eq!(self.reserve.len(), p.reserve());
        let (secret, base) = self.reserve.split_at(p.k);
        self.cots.resize(p.n(), Block::ZERO);
        trees(
            ch,
            (&self.mmo, &self.tccr),
            &p,
            base,
            self.ids,
            &mut self.cots,
            &mut self.scratch,
        )?;
        self.ids += base.len() as u128;
        self.codes[usize::from(!boot)].encode(&mut self.cots, secret);
        let next = self.params.main.reserve();
        self.reserve.clear();
        self.reserve.extend(self.cots[..next].iter().copied());
        self.pos = Some(next);
        Ok(())
    }

    /// Hands out `n` COTs in slices (see [`FerretSender::take`]); `setup`
    /// runs first if needed.
    fn take(
        &mut self,
        ch: &mut Channel,
        n: usize,
        setup: &mut dyn FnMut(&mut Engine, &mut Channel) -> Result<(), OtError>,
        trees: &mut Trees<'_>,
        mut f: impl FnMut(&mut Channel, u128, &[Block]) -> Result<(), OtError>,
    ) -> Result<(), OtError> {
        if n == 0 {
            return Ok(());
        }
        self.prepare(ch, setup, trees)?;
        let mut left = n;
        while left > 0 {
            let mut pos = self.pos.unwrap_or(0);
            if pos == self.cots.len() {
                self.iterate(ch, false, trees)?;
                pos = self.params.main.reserve();
            }
            let len = left.min(self.cots.len() - pos);
            f(ch, self.ids, &self.cots[pos..pos + len])?;
            self.pos = Some(pos + len);
            self.ids += len as u128;
            left -= len;
        }
        Ok(())
    }

    /// Runs `setup` and the bootstrapping iteration unless done already.
    fn prepare(
        &mut self,
        ch: &mut Channel,
        setup: &mut dyn FnMut(&mut Engine, &mut Channel) -> Result<(), OtError>,
        trees: &mut Trees<'_>,
    ) -> Result<(), OtError> {
        if self.pos.is_none() {
            let (boot, main) = (self.params.boot, self.params.main);
            self.reserve = HugeVec::with_capacity(boot.reserve().max(main.reserve()));
            setup(self, ch)?;
            self.iterate(ch, true, trees)?;
        }
        Ok(())
    }

    fn available(&self) -> Option<usize> {
        self.pos.map(|p| self.cots.len() - p)
    }
}

/// The COT sender of a lane's silent engine: holds `Δ` (low bit 1); each COT
/// it hands out is a block `q` (low bit 0), the receiver's being `q ⊕ b·Δ`.
pub struct FerretSender {
    engine: Engine,
    /// The tree seeds' generator, and the set-up's (base OTs).
    prg: Prg,
    setup_prg: Prg,
    delta: Block,
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
            setup_prg: prg.fork(),
            prg,
            delta,
        })
    }

    /// The global correlation `Δ`.
    pub fn delta(&self) -> Block {
        self.delta
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
        f: impl FnMut(&mut Channel, u128, &[Block]) -> Result<(), OtError>,
    ) -> Result<(), OtError> {
        self.run(ch, Some((n, f)))
    }

    /// Runs the set-up now (the receiver calls [`FerretReceiver::setup`]):
    /// [`sci_ir::cost::ferret::setup`], nothing if done already.
    pub fn setup(&mut self, ch: &mut Channel) -> Result<(), OtError> {
        self.run(ch, None::<(usize, fn(&mut Channel, u128, &[Block]) -> _)>)
    }

    /// [`FerretSender::take`] with a request, else the set-up alone.
    fn run(
        &mut self,
        ch: &mut Channel,
        req: Option<(
            usize,
            impl FnMut(&mut Channel, u128, &[Block]) -> Result<(), OtError>,
        )>,
    ) -> Result<(), OtError> {
        let FerretSender {
            engine,
            prg,
            setup_prg,
            delta,
        } = self;
        let delta = *delta;
        let boot = engine.params.boot.reserve();
        let mut setup = |e: &mut Engine, ch: &mut Channel| -> Result<(), OtError> {
            let mut ext = ExtSender::<1>::setup_with_secret(ch, setup_prg, [delta])?;
            e.reserve.clear();
            ext.extend(ch, boot, |_, rows, _| {
                e.reserve.extend(rows[0].iter().map(|q| *q & !Block(1)));
                Ok(())
            })
        };
        let mut trees = |ch: &mut Channel,
                         h: (&Mmo, &Tccr),
                         p: &LpnParams,
                         base: &[Block],
                         tweak: u128,
                         out: &mut [Block],
                         s: &mut Scratch| {
            mpcot::send(ch, h, prg, delta, p, base, tweak, out, s)
        };
        match req {
            Some((n, f)) => engine.take(ch, n, &mut setup, &mut trees, f),
            None => engine.prepare(ch, &mut setup, &mut trees),
        }
    }
}

/// The COT receiver of a lane's silent engine: each COT it hands out is a
/// block `t = q ⊕ b·Δ` whose low bit is the random choice bit `b`.
pub struct FerretReceiver {
    engine: Engine,
    prg: Prg,
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
            prg,
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
        f: impl FnMut(&mut Channel, u128, &[Block]) -> Result<(), OtError>,
    ) -> Result<(), OtError> {
        self.run(ch, Some((n, f)))
    }

    /// The receiver of [`FerretSender::setup`].
    pub fn setup(&mut self, ch: &mut Channel) -> Result<(), OtError> {
        self.run(ch, None::<(usize, fn(&mut Channel, u128, &[Block]) -> _)>)
    }

    /// [`FerretReceiver::take`] with a request, else the set-up alone.
    fn run(
        &mut self,
        ch: &mut Channel,
        req: Option<(
            usize,
            impl FnMut(&mut Channel, u128, &[Block]) -> Result<(), OtError>,
        )>,
    ) -> Result<(), OtError> {
        let FerretReceiver { engine, prg } = self;
        let boot = engine.params.boot.reserve();
        let mut setup = |e: &mut Engine, ch: &mut Channel| -> Result<(), OtError> {
            let mut ext = ExtReceiver::<1>::setup(ch, prg)?;
            let choices = prg.bools(boot);
            e.reserve.clear();
            ext.extend(
                ch,
                boot,
                |range, cols| {
                    let cb = range.len() / 8;
                    let (first, rest) = cols.split_at_mut(cb);
                    for (i, j) in (range.start..range.end.min(boot)).enumerate() {
                        first[i / 8] |= u8::from(choices[j]) << (i % 8);
                    }
                    rest.chunks_exact_mut(cb)
                        .for_each(|col| col.copy_from_slice(first));
                },
                |off, rows, _| {
                    let c = &choices[off..];
                    e.reserve.extend(
                        rows[0]
                            .iter()
                            .zip(c)
                            .map(|(t, &b)| (*t & !Block(1)) | Block(u128::from(b))),
                    );
                    Ok(())
                },
            )
        };
        let mut trees =
            |ch: &mut Channel,
             h: (&Mmo, &Tccr),
             p: &LpnParams,
             base: &[Block],
             tweak: u128,
             out: &mut [Block],
             s: &mut Scratch| { mpcot::recv(ch, h, p, base, tweak, out, s) };
        match req {
            Some((n, f)) => engine.take(ch, n, &mut setup, &mut trees, f),
            None => engine.prepare(ch, &mut setup, &mut trees),
        }
    }
}
