//! [`OtPack`]: all OT families, both directions, over one channel, on
//! either engine ([`OtKind`]).
//!
//! With [`OtKind::Iknp`] an `OtPack` holds up to four extension states: IKNP
//! as sender, IKNP as receiver, KK13 as sender, KK13 as receiver. With
//! [`OtKind::Silent`] it holds up to two Ferret COT sources (sender and
//! receiver, [`super::ferret`]) and serves every call from their random COTs
//! (1 bit up per OT instead of λ), `(N 1)`-OT from `⌈log₂ N⌉` of them
//! ([`super::derived::nofn`]). Either way the 1-of-2 calls are the derived
//! OTs of [`super::derived`], the same code on both engines (the engine's
//! state is a [`CorrelatedSender`] / [`CorrelatedReceiver`]; the pack
//! forwards the contract's methods to the one its kind selects, `on!`).
//! Each state is set up (its base OTs run, and
//! for Ferret its bootstrapping) the first time it is used, then reused for
//! the whole run.
//!
//! # Contract
//! The two parties' packs on a channel must be of the same kind and make
//! *matching calls in the same order*: when one calls `send_X`, the other
//! calls `recv_X` with the same `n`
//! (and widths, `k`, `N`, `bits`). Then lazy set-ups happen at the same point
//! on both sides, the base OTs pair up, and the extension streams stay in
//! step. A batch of `n = 0` instances is a no-op on both sides (no set-up, no
//! traffic). [`OtPack::setup`] runs all set-ups eagerly, in an order
//! that depends only on the party, so both sides may call it at the same
//! point instead.
//!
//! # Randomness
//! The set-ups (the extension secrets and the base OTs' scalars; Ferret's
//! `Δ` and tree seeds; the receiver's choices of random-choice OTs over IKNP)
//! draw from the pack's own [`Prg`], given at construction (in a
//! [`super::Session`], a child of the lane's, itself derived from the
//! session's OS seed). The extensions need no other randomness. The silent
//! engine also needs a *public* seed shared by both parties, that of its LPN
//! codes ([`OtPack::set_lpn_seed`]; in a run, derived from the session id).

use super::derived::{CorrelatedReceiver, CorrelatedSender, CotFields, CotRing, Inflow};
use super::derived::{RecvEvent, SendEvent};
use super::ferret::{FERRET, FerretParams, FerretReceiver, FerretSender};
use super::iknp::{IknpReceiver, IknpSender};
use super::kkot::{KkClass, KkReceiver, KkSender, check_choices, check_classes};
use super::{OtError, Word, check, check_bits};
use sci_net::crypto::{Block, Prg};
use sci_net::{Channel, Party};

/// Lazily set-up OT extension states for one channel. See the
/// [module documentation](self) for the contract between the two parties.
#[derive(Debug)]
pub struct OtPack {
    prg: Prg,
    kind: OtKind,
    iknp_s: Option<IknpSender>,
    iknp_r: Option<IknpReceiver>,
    kk_s: Option<KkSender>,
    kk_r: Option<KkReceiver>,
    fer_s: Option<FerretSender>,
    fer_r: Option<FerretReceiver>,
    ferret: FerretParams,
    lpn_seed: Option<Block>,
}

/// The OT engine of a pack (every call of [`OtPack`] runs on it): the plan's
/// [`sci_ir::OtKind`]. With [`OtKind::Silent`] a pack runs Ferret with the
/// production set [`FERRET`] unless given another ([`OtPack::set_ferret_params`]).
pub use sci_ir::OtKind;

/// Returns the state in `slot`, creating it with `setup` (drawing from
/// `prg`) first if needed.
fn lazy<'a, S>(
    slot: &'a mut Option<S>,
    ch: &mut Channel,
    prg: &mut Prg,
    setup: impl FnOnce(&mut Channel, &mut Prg) -> Result<S, OtError>,
) -> Result<&'a mut S, OtError> {
    match slot {
        Some(s) => Ok(s),
        None => Ok(slot.insert(setup(ch, prg)?)),
    }
}

/// The Ferret source in `slot` ([`FerretSender::new`] or
/// [`FerretReceiver::new`] as `new`, with parameters `p`, LPN seed `seed`
/// and a child of `prg`), created first if needed; its bootstrapping runs on
/// first use. Errors ([`OtError::NoLpnSeed`]) if it must be created and
/// there is no seed.
fn ferret<'a, F>(
    slot: &'a mut Option<F>,
    ch: &mut Channel,
    prg: &mut Prg,
    (p, seed): (FerretParams, Option<Block>),
    new: fn(FerretParams, Block, Prg) -> Result<F, OtError>,
) -> Result<&'a mut F, OtError> {
    lazy(slot, ch, prg, |_, g| {
        new(p, seed.ok_or(OtError::NoLpnSeed)?, g.fork())
    })
}

/// The set-up state of one direction of one OT family on the pack's
/// engine: an IKNP (or KK13) state `I`, or the Ferret source `F` of that
/// direction. For 1-of-2 OT it is itself a correlated-OT engine that
/// forwards to the state it holds, so the derived OTs run on it; for 1-of-N
/// both states have `send_classes` / `recv_classes` ([`on!`]).
enum Engine<'a, I, F> {
    Iknp(&'a mut I),
    Ferret(&'a mut F),
}

/// Runs `$call` on whichever state the [`Engine`] `$e` holds, bound to
/// `$s`: the one dispatch of every call.
macro_rules! on {
    ($e:expr, $s:ident => $call:expr) => {
        match $e {
            Engine::Iknp($s) => $call,
            Engine::Ferret($s) => $call,
        }
    };
}

/// Forwards the contract (the required and overridable methods) to the
/// state: the derived OTs are the contract's provided methods.
impl<I: CorrelatedSender, F: CorrelatedSender> CorrelatedSender for Engine<'_, I, F> {
    fn prepare(&mut self, ch: &mut Channel) -> Result<(), OtError> {
        on!(self, s => s.prepare(ch))
    }

    fn pads(
        &mut self,
        ch: &mut Channel,
        n: usize,
        ends: &[usize],
        f: impl FnMut(SendEvent<'_>) -> Result<(), OtError>,
    ) -> Result<(), OtError> {
        on!(self, s => s.pads(ch, n, ends, f))
    }

    fn random_pads(
        &mut self,
        ch: &mut Channel,
        n: usize,
        f: impl FnMut(&[Block], &[Block]),
    ) -> Result<(), OtError> {
        on!(self, s => s.random_pads(ch, n, f))
    }
}

/// As the [`CorrelatedSender`] forwarding.
impl<I: CorrelatedReceiver, F: CorrelatedReceiver> CorrelatedReceiver for Engine<'_, I, F> {
    fn prepare(&mut self, ch: &mut Channel) -> Result<(), OtError> {
        on!(self, r => r.prepare(ch))
    }

    fn pads<L: Inflow>(
        &mut self,
        link: &mut L,
        n: usize,
        choice: impl Fn(usize) -> bool + Sync,
        ends: &[usize],
        f: impl FnMut(RecvEvent<'_, L>) -> Result<(), OtError>,
    ) -> Result<(), OtError> {
        on!(self, r => r.pads(link, n, choice, ends, f))
    }

    fn random_pads(
        &mut self,
        ch: &mut Channel,
        n: usize,
        prg: &mut Prg,
        f: impl FnMut(&[bool], &[Block]),
    ) -> Result<(), OtError> {
        on!(self, r => r.random_pads(ch, n, prg, f))
    }
}

impl OtPack {
    /// A pack on `kind` with nothing set up yet, whose set-ups draw from
    /// `prg`.
    pub fn new(prg: Prg, kind: OtKind) -> Self {
        OtPack {
            prg,
            kind,
            iknp_s: None,
            iknp_r: None,
            kk_s: None,
            kk_r: None,
            fer_s: None,
            fer_r: None,
            ferret: FERRET,
            lpn_seed: None,
        }
    }

    /// Runs the later calls on `kind` (states already set up on the other
    /// engine are kept, unused).
    pub fn set_kind(&mut self, kind: OtKind) {
        self.kind = kind;
    }

    /// Gives the silent engine the LPN parameters `p` instead of the
    /// production set [`FERRET`] (e.g. a small set, insecure, that makes
    /// tests run many iterations); both parties must use the same. Errors
    /// if the sets do not chain ([`FerretParams::valid`]) or a Ferret state
    /// is set up already.
    pub fn set_ferret_params(&mut self, p: FerretParams) -> Result<(), OtError> {
        check(
            p.valid() && self.fer_s.is_none() && self.fer_r.is_none(),
            || format!("Ferret parameters {p:?} invalid or set after the set-up"),
        )?;
        self.ferret = p;
        Ok(())
    }

    /// Gives the silent engine the public seed of its LPN codes: iteration
    /// `i` of each Ferret source runs on the code keyed by `(seed, i)`
    /// ([`super::ferret`]). Both parties' packs on a channel must get the
    /// same seed, fresh per session (in a run, the session id, one seed per
    /// lane: [`super::Session::with_lpn_seed`]); without one the silent
    /// engine refuses to run ([`OtError::NoLpnSeed`]). Errors if a Ferret
    /// state is set up already (it keeps the seed it was built with).
    pub fn set_lpn_seed(&mut self, seed: Block) -> Result<(), OtError> {
        check(self.fer_s.is_none() && self.fer_r.is_none(), || {
            "LPN seed set after the Ferret set-up".into()
        })?;
        self.lpn_seed = Some(seed);
        Ok(())
    }

    /// The seed given by [`OtPack::set_lpn_seed`], if any (e.g. for a
    /// Ferret source built outside the pack on the same lane).
    pub fn lpn_seed(&self) -> Option<Block> {
        self.lpn_seed
    }

    /// The engine of this pack.
    pub fn kind(&self) -> OtKind {
        self.kind
    }

    /// The 1-of-2 sender on the pack's engine, set up first if needed.
    fn sender(
        &mut self,
        ch: &mut Channel,
    ) -> Result<Engine<'_, IknpSender, FerretSender>, OtError> {
        let (g, p) = (&mut self.prg, (self.ferret, self.lpn_seed));
        Ok(match self.kind {
            OtKind::Iknp => Engine::Iknp(lazy(&mut self.iknp_s, ch, g, IknpSender::setup)?),
            OtKind::Silent => Engine::Ferret(ferret(&mut self.fer_s, ch, g, p, FerretSender::new)?),
        })
    }

    /// The 1-of-2 receiver on the pack's engine, set up first if needed.
    fn receiver(
        &mut self,
        ch: &mut Channel,
    ) -> Result<Engine<'_, IknpReceiver, FerretReceiver>, OtError> {
        Ok(self.receiver_and_prg(ch)?.0)
    }

    /// [`OtPack::receiver`] and the pack's generator.
    fn receiver_and_prg(
        &mut self,
        ch: &mut Channel,
    ) -> Result<(Engine<'_, IknpReceiver, FerretReceiver>, &mut Prg), OtError> {
        let (g, p) = (&mut self.prg, (self.ferret, self.lpn_seed));
        let e = match self.kind {
            OtKind::Iknp => Engine::Iknp(lazy(&mut self.iknp_r, ch, g, IknpReceiver::setup)?),
            OtKind::Silent => {
                Engine::Ferret(ferret(&mut self.fer_r, ch, g, p, FerretReceiver::new)?)
            }
        };
        Ok((e, g))
    }

    /// The 1-of-N sender: KK13 on IKNP, else the Ferret sender.
    fn n_sender(
        &mut self,
        ch: &mut Channel,
    ) -> Result<Engine<'_, KkSender, FerretSender>, OtError> {
        let (g, p) = (&mut self.prg, (self.ferret, self.lpn_seed));
        Ok(match self.kind {
            OtKind::Iknp => Engine::Iknp(lazy(&mut self.kk_s, ch, g, KkSender::setup)?),
            OtKind::Silent => Engine::Ferret(ferret(&mut self.fer_s, ch, g, p, FerretSender::new)?),
        })
    }

    /// The 1-of-N receiver: KK13 on IKNP, else the Ferret receiver.
    fn n_receiver(
        &mut self,
        ch: &mut Channel,
    ) -> Result<Engine<'_, KkReceiver, FerretReceiver>, OtError> {
        let (g, p) = (&mut self.prg, (self.ferret, self.lpn_seed));
        Ok(match self.kind {
            OtKind::Iknp => Engine::Iknp(lazy(&mut self.kk_r, ch, g, KkReceiver::setup)?),
            OtKind::Silent => {
                Engine::Ferret(ferret(&mut self.fer_r, ch, g, p, FerretReceiver::new)?)
            }
        })
    }

    /// Sets up all states now. IKNP: `P0` in the order IKNP-send, IKNP-recv,
    /// KK-send, KK-recv, and `P1` in the mirrored order (IKNP-recv first);
    /// cost 2·(32 + 128·32) + 2·(32 + 256·32) bytes, 4 messages each way.
    /// Silent: `P0` as Ferret sender first, then receiver (`P1` mirrored);
    /// cost twice [`sci_ir::cost::ferret::setup`] (1,409,520 bytes each).
    pub fn setup(&mut self, ch: &mut Channel, party: Party) -> Result<(), OtError> {
        let first_send = party == Party::Server;
        let families: &[bool] = match self.kind {
            OtKind::Iknp => &[false, true],
            OtKind::Silent => &[false],
        };
        for &kk in families {
            for sending in [first_send, !first_send] {
                match (kk, sending) {
                    (false, true) => self.sender(ch)?.prepare(ch)?,
                    (false, false) => self.receiver(ch)?.prepare(ch)?,
                    (true, true) => self.n_sender(ch).map(drop)?,
                    (true, false) => self.n_receiver(ch).map(drop)?,
                }
            }
        }
        Ok(())
    }

    /// Chosen-message `(2 1)-OT_bits`, sender side; see [`CorrelatedSender::send_ot`].
    pub fn send_ot<T: Word>(
        &mut self,
        ch: &mut Channel,
        msgs: &[[T; 2]],
        bits: u32,
    ) -> Result<(), OtError> {
        if msgs.is_empty() {
            return Ok(());
        }
        check_bits::<T>(bits)?;
        self.sender(ch)?.send_ot(ch, msgs, bits)
    }

    /// Chosen-message `(2 1)-OT_bits`, receiver side; see [`CorrelatedReceiver::recv_ot`].
    pub fn recv_ot<T: Word>(
        &mut self,
        ch: &mut Channel,
        choices: &[bool],
        bits: u32,
    ) -> Result<Vec<T>, OtError> {
        if choices.is_empty() {
            return Ok(Vec::new());
        }
        check_bits::<T>(bits)?;
        self.receiver(ch)?.recv_ot(ch, choices, bits)
    }

    /// Random 1-of-2 OT, sender side; see [`CorrelatedSender::send_rot`].
    pub fn send_rot<T: Word>(
        &mut self,
        ch: &mut Channel,
        n: usize,
        bits: u32,
    ) -> Result<Vec<[T; 2]>, OtError> {
        if n == 0 {
            return Ok(Vec::new());
        }
        check_bits::<T>(bits)?;
        self.sender(ch)?.send_rot(ch, n, bits)
    }

    /// Random 1-of-2 OT, receiver side; see [`CorrelatedReceiver::recv_rot`].
    pub fn recv_rot<T: Word>(
        &mut self,
        ch: &mut Channel,
        choices: &[bool],
        bits: u32,
    ) -> Result<Vec<T>, OtError> {
        if choices.is_empty() {
            return Ok(Vec::new());
        }
        check_bits::<T>(bits)?;
        self.receiver(ch)?.recv_rot(ch, choices, bits)
    }

    /// Random 1-of-2 OT with *random* choices, sender side: `n` pairs of
    /// random `bits`-bit messages `(y_0, y_1)`; the receiver
    /// ([`OtPack::recv_random_rot`]) gets a random bit `b` and `y_b`. Silent:
    /// no message beyond the engine's iterations
    /// ([`CorrelatedSender::random_pads`]); IKNP: random OT with
    /// choices drawn by the receiver's pack, λ bits per OT.
    pub fn send_random_rot<T: Word>(
        &mut self,
        ch: &mut Channel,
        n: usize,
        bits: u32,
    ) -> Result<Vec<[T; 2]>, OtError> {
        if n == 0 {
            return Ok(Vec::new());
        }
        check_bits::<T>(bits)?;
        self.sender(ch)?.send_random_rot(ch, n, bits)
    }

    /// Receiver of [`OtPack::send_random_rot`]: the random choices and the
    /// chosen messages.
    pub fn recv_random_rot<T: Word>(
        &mut self,
        ch: &mut Channel,
        n: usize,
        bits: u32,
    ) -> Result<(Vec<bool>, Vec<T>), OtError> {
        if n == 0 {
            return Ok((Vec::new(), Vec::new()));
        }
        check_bits::<T>(bits)?;
        let (mut r, prg) = self.receiver_and_prg(ch)?;
        r.recv_random_rot(ch, n, bits, prg)
    }

    /// `(2 1)-COT_bits`, sender side; see [`CorrelatedSender::send_cot`].
    pub fn send_cot(
        &mut self,
        ch: &mut Channel,
        corr: &[u64],
        bits: u32,
    ) -> Result<Vec<u64>, OtError> {
        if corr.is_empty() {
            return Ok(Vec::new());
        }
        check_bits::<u64>(bits)?;
        self.sender(ch)?.send_cot(ch, corr, bits)
    }

    /// `(2 1)-COT_bits`, receiver side; see [`CorrelatedReceiver::recv_cot`].
    pub fn recv_cot(
        &mut self,
        ch: &mut Channel,
        choices: &[bool],
        bits: u32,
    ) -> Result<Vec<u64>, OtError> {
        if choices.is_empty() {
            return Ok(Vec::new());
        }
        check_bits::<u64>(bits)?;
        self.receiver(ch)?.recv_cot(ch, choices, bits)
    }

    /// Correlated OT with per-instance payloads, sender side; see
    /// [`CorrelatedSender::send_cot_batches`] (one batch).
    pub fn send_cot_with<'w, 'c, R: CotRing>(
        &mut self,
        ch: &mut Channel,
        n: usize,
        widths: impl Fn(usize) -> CotFields<'w, R>,
        corr: impl Fn(usize) -> &'c [u64],
        out: impl FnMut(usize, &[u64]),
    ) -> Result<(), OtError> {
        self.send_cot_batches(ch, &[n], widths, corr, out)
    }

    /// Correlated OT with per-instance payloads, receiver side; see
    /// [`CorrelatedReceiver::recv_cot_batches`] (one batch).
    pub fn recv_cot_with<'w, R: CotRing>(
        &mut self,
        ch: &mut Channel,
        n: usize,
        choice: impl Fn(usize) -> bool + Sync,
        widths: impl Fn(usize) -> CotFields<'w, R> + Sync,
        out: impl FnMut(usize, &[u64]),
    ) -> Result<(), OtError> {
        self.recv_cot_batches(ch, &[n], choice, widths, out)
    }

    /// Correlated OT in several batches streamed as one exchange, sender
    /// side; see [`CorrelatedSender::send_cot_batches`].
    pub fn send_cot_batches<'w, 'c, R: CotRing>(
        &mut self,
        ch: &mut Channel,
        batches: &[usize],
        widths: impl Fn(usize) -> CotFields<'w, R>,
        corr: impl Fn(usize) -> &'c [u64],
        out: impl FnMut(usize, &[u64]),
    ) -> Result<(), OtError> {
        if batches.iter().all(|&n| n == 0) {
            return Ok(());
        }
        self.sender(ch)?
            .send_cot_batches(ch, batches, widths, corr, out)
    }

    /// Correlated OT in several batches, receiver side; see
    /// [`CorrelatedReceiver::recv_cot_batches`].
    pub fn recv_cot_batches<'w, R: CotRing>(
        &mut self,
        ch: &mut Channel,
        batches: &[usize],
        choice: impl Fn(usize) -> bool + Sync,
        widths: impl Fn(usize) -> CotFields<'w, R> + Sync,
        out: impl FnMut(usize, &[u64]),
    ) -> Result<(), OtError> {
        if batches.iter().all(|&n| n == 0) {
            return Ok(());
        }
        self.receiver(ch)?
            .recv_cot_batches(ch, batches, choice, widths, out)
    }

    /// `(N 1)-OT_bits`, sender side; see [`KkSender::send`].
    pub fn send_kkot<T: Word>(
        &mut self,
        ch: &mut Channel,
        n_msgs: usize,
        msgs: &[T],
        bits: u32,
    ) -> Result<(), OtError> {
        if msgs.is_empty() {
            return Ok(());
        }
        check(msgs.len().is_multiple_of(n_msgs), || {
            format!("{} messages is not a multiple of N = {n_msgs}", msgs.len())
        })?;
        let class = KkClass {
            n_msgs,
            bits,
            count: msgs.len() / n_msgs,
        };
        self.send_kkot_classes(ch, &[class], |_, r, out: &mut [T]| {
            out.copy_from_slice(&msgs[r.start * n_msgs..r.end * n_msgs])
        })
    }

    /// `(N 1)-OT_bits`, receiver side; see [`KkReceiver::recv`].
    pub fn recv_kkot<T: Word>(
        &mut self,
        ch: &mut Channel,
        n_msgs: usize,
        choices: &[u8],
        bits: u32,
    ) -> Result<Vec<T>, OtError> {
        self.recv_kkot_classes(
            ch,
            &[KkClass {
                n_msgs,
                bits,
                count: choices.len(),
            }],
            choices,
        )
    }

    /// Several classes of 1-of-N OT in one call (one round), sender side;
    /// see [`KkSender::send_classes`].
    pub fn send_kkot_classes<T: Word>(
        &mut self,
        ch: &mut Channel,
        classes: &[KkClass],
        msgs: impl FnMut(usize, std::ops::Range<usize>, &mut [T]),
    ) -> Result<(), OtError> {
        if check_classes::<T>(classes)? == 0 {
            return Ok(());
        }
        on!(self.n_sender(ch)?, s => s.send_classes(ch, classes, msgs))
    }

    /// Several classes of 1-of-N OT in one call, receiver side; see
    /// [`KkReceiver::recv_classes`].
    pub fn recv_kkot_classes<T: Word>(
        &mut self,
        ch: &mut Channel,
        classes: &[KkClass],
        choices: &[u8],
    ) -> Result<Vec<T>, OtError> {
        if check_classes::<T>(classes)? == 0 {
            return Ok(Vec::new());
        }
        check_choices(classes, choices)?;
        on!(self.n_receiver(ch)?, r => r.recv_classes(ch, classes, choices))
    }
}
