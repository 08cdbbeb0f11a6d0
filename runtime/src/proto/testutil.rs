//! Test harness: both parties in two threads, sharing and reconstruction.
//!
//! # OT engine
//! Every two-party run uses the engine [`engine`]: IKNP by default, the
//! silent (Ferret) engine with `SCI_TEST_OT=silent`, so the whole protocol
//! suite runs on either (`.ci/run` runs it on both). The silent runs use the
//! small LPN set [`TEST_FERRET`] (not secure: 60,800 COTs per iteration), so
//! that every protocol's OTs also straddle the engine's iterations. Bytes and
//! rounds are pinned against the cost model's IKNP figures on IKNP runs only
//! ([`costed`]); the silent engine's are pinned against the model's silent
//! pricing in `proto::silent_pins` (and in the OT layer's tests).

use std::time::Duration;

pub(crate) use sci_ot::testing::{encoding, open, reference, share};

use super::Modulus;
use super::{Bits, Ctx, ProtoError, Role};
use crate::crypto::{Block, Prg};
use crate::net::{Channel, Stats, mem, tcp};
use crate::ot::ferret::TEST_FERRET;
use crate::ot::{OtKind, OtPack, lane_seed};

/// Results and counters of a two-party run, by role.
pub(crate) struct Run<R> {
    pub p0: R,
    pub p1: R,
    /// Counters of role P0's and role P1's channel.
    pub stats: [Stats; 2],
}

impl<R> Run<R> {
    /// Bits sent by both parties.
    pub fn bits(&self) -> u64 {
        8 * (self.stats[0].bytes_sent + self.stats[1].bytes_sent)
    }

    /// With [`costed`] engines: checks this measured call (after a warm-up whose
    /// transcript is `warm`) against the transcript `t`, bytes per role and rounds per
    /// role counted from the state the warm-up leaves, and returns those rounds.
    pub fn pin_costs(
        &self,
        warm: &sci_ir::cost::Transcript,
        t: &sci_ir::cost::Transcript,
        what: &str,
    ) -> Option<[u64; 2]> {
        if !costed() {
            return None;
        }
        let mut w = sci_ir::cost::Waiting { sent: [true; 2] };
        warm.replay(&mut w);
        let rounds = t.replay(&mut w);
        assert_eq!(
            [self.stats[0].bytes_sent, self.stats[1].bytes_sent],
            [t.sent(Role::P0), t.sent(Role::P1)],
            "{what}: bytes"
        );
        assert_eq!(self.stats.map(|s| s.rounds), rounds, "{what}: rounds");
        Some(rounds)
    }
}

/// A deterministic PRG for test data.
pub(crate) fn prg(seed: u128) -> Prg {
    Prg::new(Block(seed))
}

/// The protocol randomness of `role` in a test run: derived from the test
/// process's seed ([`sci_testkit::seed`], printed on failure, replayable with
/// `SCI_TEST_SEED`), one independent stream per role.
pub(crate) fn role_prg(role: Role) -> Prg {
    Prg::derive(Block(sci_testkit::seed().into()), "test-role", role as u64)
}

/// The OT engine of the test runs: `SCI_TEST_OT` (`iknp`, the default, or
/// `silent`); panics on another value.
pub(crate) fn engine() -> OtKind {
    match std::env::var("SCI_TEST_OT") {
        Ok(v) => v.parse().unwrap_or_else(|e| panic!("SCI_TEST_OT: {e}")),
        Err(_) => OtKind::Iknp,
    }
}

/// Whether the runs' bytes and rounds are the cost model's (IKNP runs).
pub(crate) fn costed() -> bool {
    engine() == OtKind::Iknp
}

/// Puts a fresh pack, lane `lane`'s, on [`engine`] (with [`TEST_FERRET`]
/// and the lane's LPN seed: [`lane_seed`] of a seed derived from the test
/// process's, the same for both roles).
pub(crate) fn use_engine(ot: &mut OtPack, lane: usize) {
    ot.set_kind(engine());
    ot.set_ferret_params(TEST_FERRET)
        .expect("TEST_FERRET chains, nothing set up yet");
    let seed = Prg::derive(Block(sci_testkit::seed().into()), "test-lpn", 0).next_block();
    ot.set_lpn_seed(lane_seed(seed, lane as u64))
        .expect("nothing set up yet");
}

/// `assert_eq!` of a measured count (bytes, rounds) against the cost model,
/// checked on the IKNP runs only ([`costed`]).
macro_rules! pin {
    ($($t:tt)*) => {
        if $crate::proto::testutil::costed() {
            assert_eq!($($t)*);
        }
    };
}
pub(crate) use pin;

/// A fresh pack on [`engine`] drawing from `prg`.
pub(crate) fn pack(prg: Prg) -> OtPack {
    let mut ot = OtPack::new(prg, OtKind::Iknp);
    use_engine(&mut ot, 0);
    ot
}

/// Runs `f` as role P0 on one end and role P1 on the other of a channel pair.
/// `f` gets the context and may run several protocols (e.g. a warm-up).
pub(crate) fn run_on<R, F>(a: Channel, b: Channel, radix: u32, f: F) -> Run<R>
where
    R: Send,
    F: Fn(&mut Ctx<'_>) -> Result<R, ProtoError> + Sync,
{
    let party = |mut ch: Channel, role: Role| {
        let mut prg = role_prg(role);
        let mut ot = pack(prg.fork());
        let mut ctx = Ctx::new(&mut ch, &mut ot, &mut prg, role).with_radix(radix);
        let r = f(&mut ctx).unwrap_or_else(|e| panic!("role {role:?}: {e}"));
        (r, ch.stats())
    };
    let ((p0, s0), (p1, s1)) = sci_testkit::run2(|| party(a, Role::P0), || party(b, Role::P1));
    Run {
        p0,
        p1,
        stats: [s0, s1],
    }
}

/// Runs `f(ctx, true)` (a warm-up doing the OT set-ups) then `f(ctx, false)`
/// over an in-memory pair; the counters are those of the second call only.
pub(crate) fn measured<R, F>(radix: u32, f: F) -> Run<R>
where
    R: Send,
    F: Fn(&mut Ctx<'_>, bool) -> Result<R, ProtoError> + Sync,
{
    let r = run2(radix, |ctx| {
        f(ctx, true)?;
        let before = ctx.ch.stats();
        let out = f(ctx, false)?;
        Ok((out, ctx.ch.stats() - before))
    });
    Run {
        p0: r.p0.0,
        p1: r.p1.0,
        stats: [r.p0.1, r.p1.1],
    }
}

/// [`run_on`] over an in-memory channel pair.
pub(crate) fn run2<R, F>(radix: u32, f: F) -> Run<R>
where
    R: Send,
    F: Fn(&mut Ctx<'_>) -> Result<R, ProtoError> + Sync,
{
    let (a, b) = mem::pair(Some(Duration::from_secs(120)));
    run_on(a, b, radix, f)
}

/// [`run_on`] over a TCP loopback pair.
pub(crate) fn run2_tcp<R, F>(radix: u32, f: F) -> Run<R>
where
    R: Send,
    F: Fn(&mut Ctx<'_>) -> Result<R, ProtoError> + Sync,
{
    let cfg = tcp::TcpConfig {
        timeout: Some(Duration::from_secs(120)),
        ..tcp::TcpConfig::default()
    };
    let (a, b) = tcp::loopback_pair(&cfg).expect("loopback pair");
    run_on(a, b, radix, f)
}

/// `len` random elements mod `md` followed by the edges of its signed range
/// `[lo, hi]`: 0, ±1, ±2, `hi`, `lo`, `hi − 1`, `lo + 1` (reduced mod `md`).
pub(crate) fn values_with_edges(g: &mut Prg, len: usize, md: impl Into<Modulus>) -> Vec<u64> {
    let md = md.into();
    let mut v = md.random(g, len);
    let hi = i128::from(md.half()) - 1;
    let lo = hi + 1 - md.value() as i128;
    for e in [0i128, 1, -1, 2, -2, hi, lo, hi - 1, lo + 1] {
        v.push(md.reduce_i128(e));
    }
    v
}

/// Every modulus the protocols are tested at: the rings `Z_{2^ℓ}` of
/// [`ELLS`], then the fields of [`FIELDS`].
pub(crate) fn moduli() -> impl Iterator<Item = Modulus> {
    ELLS.into_iter()
        .map(Modulus::Pow2)
        .chain(FIELDS.into_iter().map(Modulus::Odd))
}

/// Odd moduli every protocol over `Z_n` is tested at: small primes, the
/// Mersenne prime 2^31 − 1, HE plaintext primes `≡ 1 mod 2N` (2^16 + 1,
/// a 32-bit and a 41-bit NTT prime), a 61-bit prime and the largest prime
/// below 2^63.
pub(crate) const FIELDS: [u64; 9] = [
    3,
    7,
    65537,
    (1 << 31) - 1,
    4_293_918_721,
    2_199_023_190_017,
    (1 << 61) - 1,
    9_223_372_036_854_775_783,
    1_000_003,
];

/// `b_0 ⊕ b_1` as booleans.
pub(crate) fn open_bits(b0: &Bits, b1: &Bits) -> Vec<bool> {
    b0.xor(b1).to_bools()
}

/// The signed value of an ℓ-bit element.
pub(crate) fn signed(v: u64, ell: u32) -> i64 {
    ((v << (64 - ell)) as i64) >> (64 - ell)
}

/// The ring widths every protocol is tested at.
pub(crate) const ELLS: [u32; 8] = [1, 2, 8, 31, 32, 37, 41, 64];

/// The millionaires' radices every protocol is tested at.
pub(crate) const RADICES: [u32; 5] = [1, 2, 4, 7, 8];
