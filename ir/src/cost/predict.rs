//! Per-instruction prediction: the bytes each party sends and the rounds each waits for,
//! for every instruction of a program as the runtime's executor runs it over `T` lanes.
//!
//! The executor maps an instruction to local work or to protocol *phases*; a phase cuts
//! its items into `T` contiguous chunks (the first `n mod T` one longer), chunk `i` on
//! lane `i`. In the elementwise protocols, pooling and ArgMax the server plays the
//! paper's `P0` in even chunks and `P1` in odd ones; in the OT-based products it is `P0`
//! on every lane. A party's bytes are summed over lanes; its rounds in a step are the
//! largest over lanes of what it waited for on that lane (lanes run in parallel), as
//! the run report measures them. Whether a receive is a round depends on what the party
//! did last on that lane, so [`predict_program`] replays the whole program from the
//! state after the OT set-up (the client sent last on every lane), in the executor's
//! order: the waves of [`crate::schedule`], where independent `relu`s (truncations,
//! divisions by the same `d`) of one level run as one call on their summed length,
//! independent products by the server's weights as one call of all of them (OT: on
//! each lane one [`linear::products`] over the lane's chunk of every product; HE: one
//! [`he::layer`] of the summed ciphertext counts), and the wave's cost is recorded on
//! its first member.
//!
//! The price of each [`Step`] (the instruction's protocol, [`Step::of`]):
//!
//! | step | phases |
//! |---|---|
//! | [`Step::Relu`] | [`select::relu`] per chunk |
//! | [`Step::ReluTrunc`] | [`div::relu_trunc`] per chunk |
//! | [`Step::Trunc`] | over `Z_{2^ℓ}` [`div::trunc`], or [`div::trunc_nonneg`] if marked `nonneg`; over `Z_n` [`div::rdiv`] by `2^s`, or [`div::rdiv_nonneg`] if marked |
//! | [`Step::Div`] | [`div::rdiv`], or [`div::rdiv_nonneg`] if the operand is provably non-negative |
//! | [`Step::AvgPool`] | [`div::rdiv`] of the outputs by their windows' counts |
//! | [`Step::MaxPool`], [`Step::ArgMax`] | exact mode: the inputs' signs; then [`pool::reduce`] over window chunks |
//! | [`Step::Product`] on [`Backend::Ot`] | [`linear::products`], each product's rows chunked, a convolution one product per group, all in one call per lane |
//! | [`Step::Product`] on [`Backend::He`] | [`he::layer`] of [`he::product`]'s ciphertexts, on lane 0 |
//! | [`Step::Product`] on [`Backend::Rlwe`] | [`rlwe::wave`] of the layouts, on lane 0, led by the keys of sets not yet sent ([`rlwe::key_setup`]) |
//! | [`Step::Smooth`] | [`math::smooth`] per chunk |
//! | [`Step::Rsqrt`] | [`math::rsqrt`] per chunk |
//! | [`Step::Spline`] | [`math::spline`] per chunk |
//! | [`Step::Softmax`] | [`math::softmax`] per chunk of the lines along the axis |
//! | [`Step::SecretProduct`] on [`Backend::Ot`] | [`secmul::products`], each product's rows (a `mul`'s elements) chunked, all in one call per lane, roles alternating across lanes |
//! | [`Step::SecretProduct`] on [`Backend::Rlwe`] | [`rlwe::wave`] of the two cross terms' layouts of each member ([`crate::rlwe::secret_matmul`]), on lane 0, led by the keys of sets not yet sent |
//! | [`Step::Reveal`] | the server's shares on lane 0 (`⌈n·ℓ/8⌉` bytes) |
//! | [`Step::Local`] | nothing |
//!
//! # OT engines
//! The set-up is the run's engine's ([`setup`]: IKNP's base OTs, or Ferret's
//! bootstrapping). A protocol's transcript holds its OT calls abstractly
//! ([`super::ot::OtCall`]); its flights are their IKNP pricing. On the silent engine
//! each lane replays its calls in the executor's order against its two COT sources
//! ([`ferret::Sources`], sized as the runtime sizes them: [`ferret_params`] of the
//! lane's demand over the session's inferences), so every call costs its bits per OT
//! and an iteration's message lands on the instruction that triggers it
//! ([`ferret::Sources::price`]); [`predict_session`] carries the COTs left from one
//! inference to the next. A SCI_HE program with HE products first sets up the HE
//! keys on lane 0 ([`he::key_setup`], [`Prediction::he_keys`]).

use super::ferret;
use super::{
    Modulus, Role, Transcript, Waiting, bytes_of, div, he, linear, math, ot, pool, rlwe, secmul,
    select,
};
use crate::analysis::nonneg::nonneg;
use crate::math::{RsqrtParams, SmoothParams, SoftmaxParams};
use crate::params::ferret::FerretParams;
use crate::params::lanes::split;
use crate::rlwe::ParamSet;
use crate::schedule::{Step, Wave, waves};
use crate::spline::SplineParams;
use crate::{Backend, Encoding, Op, OtKind, Owner, Pool2d, Program, ValueId};
use std::ops::{Add, AddAssign, Range};

/// How the runtime connects the parties.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lanes {
    /// Number of lanes `T` (the plan's thread count), at least 1.
    pub threads: usize,
    /// Whether the lanes are full duplex (plain TCP; TLS lanes are not), so that the
    /// OT-based products stream.
    pub duplex: bool,
    /// The OT engine of the run (the plan's unless `sci-run --ot` overrides it).
    pub ot: OtKind,
}

impl Lanes {
    /// The lanes of a plan run over plain TCP: the plan's thread count and OT engine,
    /// full duplex.
    pub fn of(program: &Program) -> Lanes {
        Lanes {
            threads: program.params().threads.max(1) as usize,
            duplex: true,
            ot: program.params().ot,
        }
    }
}

/// Bytes each party sends and rounds each waits for, in one step or a sum of steps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cost {
    /// Bytes the server sends (the client receives them).
    pub server_bytes: u64,
    /// Bytes the client sends.
    pub client_bytes: u64,
    /// Rounds the server waits for (largest over lanes).
    pub server_rounds: u64,
    /// Rounds the client waits for.
    pub client_rounds: u64,
}

impl Cost {
    /// The step's latency in round trips: the larger of the two parties' rounds.
    pub fn rounds(&self) -> u64 {
        self.server_rounds.max(self.client_rounds)
    }

    /// Bytes in both directions.
    pub fn bytes(&self) -> u64 {
        self.server_bytes + self.client_bytes
    }

    /// Whether the step communicates at all.
    pub fn is_local(&self) -> bool {
        *self == Cost::default()
    }
}

impl Add for Cost {
    type Output = Cost;
    /// Sums bytes and rounds (steps one after the other).
    fn add(self, o: Cost) -> Cost {
        Cost {
            server_bytes: self.server_bytes + o.server_bytes,
            client_bytes: self.client_bytes + o.client_bytes,
            server_rounds: self.server_rounds + o.server_rounds,
            client_rounds: self.client_rounds + o.client_rounds,
        }
    }
}

impl AddAssign for Cost {
    fn add_assign(&mut self, o: Cost) {
        *self = *self + o;
    }
}

impl std::iter::Sum for Cost {
    fn sum<I: Iterator<Item = Cost>>(iter: I) -> Cost {
        iter.fold(Cost::default(), Add::add)
    }
}

/// What one step does on one lane: the bytes each party sends there and the rounds each
/// waits for ([`Cost`] of that lane alone), and the bytes the lane carries one flight
/// after the other (`serial_bytes`: both directions', or less where a product pipelines
/// over a full-duplex lane; see the [network model](super::net)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaneLoad {
    /// Bytes and rounds on this lane.
    pub cost: Cost,
    /// Bytes that cross the lane one flight after the other.
    pub serial_bytes: u64,
}

/// The prediction for a whole program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Prediction {
    /// The run's OT engine.
    pub ot: OtKind,
    /// The OT set-up of every lane (base OTs; the handshake before it is not included).
    pub setup: Cost,
    /// The control byte that starts the inference ([`CONTROL_BYTES`] from the client on
    /// lane 0, before anything else of the inference): a round for the server when it
    /// sent last on lane 0 (after an earlier inference's reveal), none after the set-up.
    pub control: Cost,
    /// SCI_HE's key set-up (the client's Galois and public keys, on lane 0, after the
    /// OT set-up and before the first instruction): zero unless the program is a
    /// SCI_HE program with HE products and this is the session's first inference.
    pub he_keys: Cost,
    /// One entry per instruction, in program order.
    pub instrs: Vec<Cost>,
    /// The instructions' bytes summed (set-ups excluded); rounds per party are the
    /// largest over lanes of that lane's rounds over the whole run (lanes run in
    /// parallel), as the run report's totals count them after the set-up. With one lane
    /// that is the sum of the instructions' rounds.
    pub total: Cost,
    /// One entry per instruction: what it does on each lane (for the network time,
    /// [`super::net`]).
    pub loads: Vec<Vec<LaneLoad>>,
    /// What the HE key set-up does on each lane (empty without it).
    pub he_keys_load: Vec<LaneLoad>,
    /// Per lane, the OTs of one inference in correlated OTs ([`Transcript::cots`], both
    /// directions together): the demand that sizes the silent engine on that lane
    /// ([`ferret_params`]).
    pub lane_cots: Vec<u64>,
    /// On the silent engine, each lane's COT sources after the inference (the COTs
    /// left in each direction, the iterations run so far); empty on IKNP.
    pub ferret: Vec<ferret::Sources>,
}

/// The state of every lane: per lane, whether the server (index 0) and the client
/// (index 1) sent since they last received.
#[derive(Clone, Debug)]
struct LaneState {
    lanes: Vec<[bool; 2]>,
    /// Rounds of the server and the client on each lane so far.
    rounds: Vec<[u64; 2]>,
    /// OTs on each lane so far, in correlated OTs ([`Transcript::cots`]).
    cots: Vec<u64>,
    /// On the silent engine, each lane's COT sources (empty on IKNP).
    ferret: Vec<ferret::Sources>,
}

/// Who plays `P0` in a phase's chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Roles {
    /// The server in even chunks, the client in odd ones.
    Alternating,
    /// The server on every lane (OT-based products: the weight owner sends).
    ServerSends,
}

/// One phase: `n` items cut into chunks, the transcript of each chunk's items.
struct Phase<'a> {
    n: usize,
    roles: Roles,
    /// The bytes of a chunk that cross its lane one flight after the other
    /// ([`LaneLoad::serial_bytes`]); `None`: all of them (the flights alternate).
    serial: Option<Box<dyn Fn(Range<usize>) -> u64 + 'a>>,
    chunk: Box<dyn Fn(Range<usize>) -> Transcript + 'a>,
}

impl LaneState {
    /// The state after the OT set-up: on every lane the client sent last.
    fn after_setup(threads: usize, ferret: Vec<ferret::Sources>) -> LaneState {
        LaneState {
            lanes: vec![[false, true]; threads.max(1)],
            rounds: vec![[0; 2]; threads.max(1)],
            cots: vec![0; threads.max(1)],
            ferret,
        }
    }

    /// Replays `t` on `lane` with the server as `server_role`; adds its bytes and rounds
    /// to `load` (the lane's in this step) and returns the server's and the client's
    /// rounds.
    fn replay(
        &mut self,
        lane: usize,
        t: &Transcript,
        server_role: Role,
        serial: Option<u64>,
        load: &mut LaneLoad,
    ) -> [u64; 2] {
        let priced;
        let (t, serial) = match self.ferret.get_mut(lane) {
            Some(src) => {
                let (p, bytes) = src.price_serial(t, server_role);
                priced = p;
                (&priced, Some(bytes))
            }
            None => (t, serial),
        };
        let [s, c] = self.lanes[lane];
        let mut w = Waiting { sent: [s, c] };
        if server_role == Role::P1 {
            w.sent.swap(0, 1);
        }
        let mut r = t.replay(&mut w);
        if server_role == Role::P1 {
            w.sent.swap(0, 1);
            r.swap(0, 1);
        }
        self.lanes[lane] = w.sent;
        self.rounds[lane][0] += r[0];
        self.rounds[lane][1] += r[1];
        self.cots[lane] += t.cots();
        let (s, c) = (t.sent(server_role), t.sent(server_role.other()));
        load.cost.server_bytes += s;
        load.cost.client_bytes += c;
        load.cost.server_rounds += r[0];
        load.cost.client_rounds += r[1];
        load.serial_bytes += serial.unwrap_or(s + c);
        r
    }

    /// The cost of a step made of `phases` (and possibly a reveal on lane 0), and what
    /// it does on each lane.
    fn step(&mut self, phases: &[Phase<'_>], reveal: Option<u64>) -> (Cost, Vec<LaneLoad>) {
        let t = self.lanes.len();
        let mut loads = vec![LaneLoad::default(); t];
        for p in phases {
            for (i, range) in split(p.n, t).into_iter().enumerate() {
                let server_role = match p.roles {
                    Roles::ServerSends => Role::P0,
                    Roles::Alternating => Role::from_sender(i % 2 == 0),
                };
                let serial = p.serial.as_ref().map(|f| f(range.clone()));
                self.replay(i, &(p.chunk)(range), server_role, serial, &mut loads[i]);
            }
        }
        if let Some(bytes) = reveal {
            let t = Transcript::new().send(Role::P0, bytes);
            self.replay(0, &t, Role::P0, None, &mut loads[0]);
        }
        // Bytes add up over lanes; lanes run in parallel, so a step's rounds are the
        // slowest lane's.
        let cost = Cost {
            server_rounds: loads
                .iter()
                .map(|l| l.cost.server_rounds)
                .max()
                .unwrap_or(0),
            client_rounds: loads
                .iter()
                .map(|l| l.cost.client_rounds)
                .max()
                .unwrap_or(0),
            ..loads.iter().map(|l| l.cost).sum()
        };
        (cost, loads)
    }
}

/// The OT set-up of `threads` lanes on engine `kind`: bytes per party (rounds are not
/// predicted: they depend on the handshake before it). IKNP: the base OTs of IKNP and
/// KK both ways ([`ot::setup`]); silent: Ferret's bootstrapping both ways, the server
/// the Ferret sender first ([`ferret::setup`]; both of [`ferret::params_for`]'s sets
/// bootstrap alike, so the set-up does not depend on the demand).
pub fn setup(threads: usize, kind: OtKind) -> Cost {
    let t = setup_transcript(kind);
    let lanes = threads.max(1) as u64;
    Cost {
        server_bytes: lanes * t.sent(Role::P0),
        client_bytes: lanes * t.sent(Role::P1),
        ..Cost::default()
    }
}

/// The OT set-up of one lane on engine `kind`, the server as `P0` ([`setup`]).
pub fn setup_transcript(kind: OtKind) -> Transcript {
    match kind {
        OtKind::Iknp => ot::setup(Role::P0),
        OtKind::Silent => ferret::setup(Role::P0, &crate::params::ferret::FERRET)
            .then(ferret::setup(Role::P1, &crate::params::ferret::FERRET)),
    }
}

/// The prediction for every instruction of `program` run over `lanes`, replayed in
/// program order from the state after the OT set-up: the first inference of a session
/// of one ([`predict_session`]).
pub fn predict_program(program: &Program, lanes: Lanes) -> Prediction {
    predict_session(program, lanes, 1).swap_remove(0)
}

/// The predictions of the `inferences` (at least one) inferences of a session running
/// `program` over `lanes`, sized for as many ([`SessionPredictor`]).
pub fn predict_session(program: &Program, lanes: Lanes, inferences: u64) -> Vec<Prediction> {
    let mut p = SessionPredictor::new(program, lanes, inferences);
    (0..inferences.max(1))
        .map(|_| p.next_inference(program))
        .collect()
}

/// Bytes of the control byte the client sends on lane 0 before each inference of a
/// session (and once more to end it): the runtime's `exec::session`.
pub const CONTROL_BYTES: u64 = 1;

/// The predictions of a session's inferences, one after the other, as the runtime runs
/// them: the first replayed from the state after the OT set-up, each later one from
/// the state the previous one left on every lane (so its rounds are exact too), each
/// started by the client's control byte on lane 0 ([`Prediction::control`]). On the
/// silent engine every lane's LPN set is [`ferret_params`] of the number of inferences
/// the session was sized for (the client's announcement in the handshake; a session
/// may run more), and the COTs left after one inference are the next one's, so a later
/// inference may pay for iterations the first did not; on IKNP all inferences cost the
/// same bytes. The set-ups (OT, SCI_HE's keys) are the first inference's only.
#[derive(Clone, Debug)]
pub struct SessionPredictor {
    lanes: Lanes,
    state: LaneState,
    done: u64,
}

impl SessionPredictor {
    /// A session of `program` over `lanes`, its silent engine sized for `sized_for`
    /// inferences (at least one).
    pub fn new(program: &Program, lanes: Lanes, sized_for: u64) -> SessionPredictor {
        let ferret = match lanes.ot {
            OtKind::Iknp => Vec::new(),
            OtKind::Silent => ferret_params(program, lanes.threads, sized_for.max(1))
                .into_iter()
                .map(ferret::Sources::after_setup)
                .collect(),
        };
        SessionPredictor {
            lanes,
            state: LaneState::after_setup(lanes.threads, ferret),
            done: 0,
        }
    }

    /// The prediction of the session's next inference of `program` (the one it was
    /// made for).
    pub fn next_inference(&mut self, program: &Program) -> Prediction {
        let first = self.done == 0;
        self.done += 1;
        let mut p = replay(program, self.lanes, &mut self.state, first);
        if !first {
            p.setup = Cost::default();
        }
        p
    }
}

/// The prediction of one inference replayed from `state` (the lanes after the OT
/// set-up or after the previous inference), which it leaves as the inference does;
/// SCI_HE's key set-up only in the session's `first` inference.
fn replay(program: &Program, lanes: Lanes, state: &mut LaneState, first: bool) -> Prediction {
    let nn = nonneg(program);
    state.rounds.iter_mut().for_each(|r| *r = [0; 2]);
    state.cots.iter_mut().for_each(|c| *c = 0);
    let control = Transcript::new().send(Role::P1, CONTROL_BYTES);
    let mut control_load = LaneLoad::default();
    state.replay(0, &control, Role::P0, None, &mut control_load);
    let control = control_load.cost;
    state.rounds.iter_mut().for_each(|r| *r = [0; 2]);
    let has_he = first
        && program
            .ids()
            .any(|v| program.product_backend(v) == Some(Backend::He));
    let (he_keys, he_keys_load) = if has_he {
        let keys = Phase {
            n: 1,
            roles: Roles::ServerSends,
            serial: None,
            chunk: Box::new(|r: Range<usize>| {
                if r.is_empty() {
                    Transcript::new()
                } else {
                    he::key_setup()
                }
            }),
        };
        let step = state.step(&[keys], None);
        // The report counts the instructions' rounds from here.
        state.rounds.iter_mut().for_each(|r| *r = [0; 2]);
        step
    } else {
        (Cost::default(), Vec::new())
    };
    let n = program.instrs().len();
    let mut instrs = vec![Cost::default(); n];
    let mut loads = vec![vec![LaneLoad::default(); lanes.threads.max(1)]; n];
    // RLWE parameter sets whose keys the session holds: all of them after its first
    // inference; the first sends each set's key with the first wave using it.
    let mut keyed = if first {
        Vec::new()
    } else {
        crate::rlwe::program_sets(program)
    };
    for wave in waves(program, &nn) {
        let first = wave.members[0];
        let (phases, reveal) = phases(program, &wave, lanes, &mut keyed);
        let (cost, load) = state.step(&phases, reveal);
        instrs[first.index()] = cost;
        loads[first.index()] = load;
    }
    let slowest = |party: usize| state.rounds.iter().map(|r| r[party]).max().unwrap_or(0);
    let total = Cost {
        server_rounds: slowest(0),
        client_rounds: slowest(1),
        ..instrs.iter().copied().sum()
    };
    Prediction {
        ot: lanes.ot,
        setup: setup(lanes.threads, lanes.ot),
        control,
        he_keys,
        he_keys_load,
        total,
        instrs,
        loads,
        lane_cots: state.cots.clone(),
        ferret: state.ferret.clone(),
    }
}

/// The LPN set of each of `threads` lanes of a session running `inferences` inferences
/// of `program` on the silent engine: [`ferret::params_for`] of the lane's demand,
/// [`Prediction::lane_cots`] times the inferences (both directions together, so an
/// upper bound of either direction's). Both parties compute it from the plan's public
/// part, the thread count and the number of inferences, all checked or announced in
/// the handshake, so they agree without a message.
pub fn ferret_params(program: &Program, threads: usize, inferences: u64) -> Vec<FerretParams> {
    let lanes = Lanes {
        threads,
        duplex: true,
        ot: OtKind::Silent,
    };
    // The demand does not depend on the engine: the calls' IKNP pricing counts it.
    let mut state = LaneState::after_setup(threads, Vec::new());
    replay(program, lanes, &mut state, true)
        .lane_cots
        .iter()
        .map(|&c| ferret::params_for(c.saturating_mul(inferences)))
        .collect()
}

/// The modulus of the program's shares (`Z_{2^32}` for a float program, whose cost is
/// only indicative).
pub fn modulus(program: &Program) -> Modulus {
    match program.encoding() {
        Some(Encoding::Ring { bits }) => Modulus::Pow2(bits),
        Some(Encoding::Field { modulus }) => Modulus::Odd(modulus),
        _ => Modulus::Pow2(32),
    }
}

/// The window lengths of a 2-D pooling over `shape` (`[n, c, h, w]`, padding skipped),
/// outputs in `[n, c, oh, ow]` order, with average pooling's `count_include_pad`.
fn pool_counts(pool: &Pool2d, shape: &[usize], include_pad: bool) -> Vec<u64> {
    let d = |i: usize| shape.get(i).copied().unwrap_or(1);
    pool.window_counts([d(2), d(3)], include_pad)
        .unwrap_or_default()
        .repeat(d(0) * d(1))
}

/// The phases of a wave over `lanes` and the bytes of its reveal, the price of its
/// [`Step`] (see the [module documentation](self)). A wave is one instruction or a
/// batched wave of [`crate::schedule`]: elementwise steps run as one call on the
/// members' summed length, products by the server's weights as one call of all of them
/// ([`product_wave`]).
fn phases<'a>(
    program: &'a Program,
    wave: &Wave,
    lanes: Lanes,
    keyed: &mut Vec<&'static ParamSet>,
) -> (Vec<Phase<'a>>, Option<u64>) {
    let v = wave.members[0];
    let numel = wave.members.iter().map(|&v| program.ty(v).numel()).sum();
    let instr = program.instr(v);
    let md = modulus(program);
    let ell = md.bits();
    let m = program.params().mill_radix;
    let shape = |o: &ValueId| program.ty(*o).shape();
    let alt = |n: usize, chunk: Box<dyn Fn(Range<usize>) -> Transcript + 'a>| Phase {
        n,
        roles: Roles::Alternating,
        serial: None,
        chunk,
    };
    let reduction = |x: &ValueId, lens: Vec<usize>, exact: bool, index: bool| {
        let mut p = Vec::new();
        if exact {
            let n_in = program.ty(*x).numel();
            p.push(alt(
                n_in,
                Box::new(move |r: Range<usize>| pool::signs(md, m, r.len())),
            ));
        }
        p.push(alt(
            lens.len(),
            Box::new(move |r: Range<usize>| pool::reduce(md, m, &lens[r], exact, index)),
        ));
        p
    };
    let divide = |counts: Vec<u64>| {
        vec![alt(
            counts.len(),
            Box::new(move |r: Range<usize>| div::rdiv(md, &counts[r.clone()], m, r.len())),
        )]
    };
    let phases = match wave.step {
        Step::Local => Vec::new(),
        Step::Reveal => {
            let n: usize = instr
                .op
                .operands()
                .iter()
                .map(|o| program.ty(**o).numel())
                .sum();
            return (Vec::new(), Some(bytes_of(n as u64 * u64::from(ell))));
        }
        Step::Product {
            backend: Backend::Rlwe,
        }
        | Step::SecretProduct {
            backend: Backend::Rlwe,
        } => rlwe_wave(program, &wave.members, keyed),
        Step::Product { backend } => product_wave(program, &wave.members, backend, md, lanes),
        Step::SecretProduct { .. } => secret_wave(program, &wave.members, md, lanes),
        Step::Relu => vec![alt(
            numel,
            Box::new(move |r: Range<usize>| select::relu(md, m, r.len())),
        )],
        // The type checker guarantees the parameters over a ring; there is no
        // protocol over a field (refused by `check_secure`).
        Step::Smooth { kind, s } => match SmoothParams::of_op(kind, ell, s) {
            Ok(p) if matches!(md, Modulus::Pow2(_)) => vec![alt(
                numel,
                Box::new(move |r: Range<usize>| math::smooth(&p, m, r.len(), lanes.duplex)),
            )],
            _ => Vec::new(),
        },
        Step::Spline { func, s } => match SplineParams::new(func, ell, s) {
            Ok(p) if matches!(md, Modulus::Pow2(_)) => vec![alt(
                numel,
                Box::new(move |r: Range<usize>| math::spline(&p, m, r.len(), lanes.duplex)),
            )],
            _ => Vec::new(),
        },
        Step::Rsqrt { s } => match RsqrtParams::new(ell, s) {
            Ok(p) if matches!(md, Modulus::Pow2(_)) => vec![alt(
                numel,
                Box::new(move |r: Range<usize>| math::rsqrt(&p, m, r.len(), lanes.duplex)),
            )],
            _ => Vec::new(),
        },
        Step::Softmax { s, exact } => match &instr.op {
            Op::Softmax { x, axis } => {
                let n = shape(x).get(*axis).copied().unwrap_or(1);
                match SoftmaxParams::new(ell, s, n) {
                    Ok(p) if matches!(md, Modulus::Pow2(_)) => vec![alt(
                        numel / n.max(1),
                        Box::new(move |r: Range<usize>| {
                            math::softmax(&p, m, r.len(), exact, lanes.duplex)
                        }),
                    )],
                    _ => Vec::new(),
                }
            }
            op => unreachable!("{} is not a softmax", op.mnemonic()),
        },
        // Over a ring only (the fusion pass runs on ring programs; `check_secure`
        // refuses it over a field).
        Step::ReluTrunc { s } => match md {
            Modulus::Pow2(ell) => vec![alt(
                numel,
                Box::new(move |r: Range<usize>| div::relu_trunc(ell, s, m, r.len())),
            )],
            Modulus::Odd(_) => Vec::new(),
        },
        Step::Trunc { s, nonneg } => vec![alt(
            numel,
            Box::new(move |r: Range<usize>| match (md, nonneg) {
                (Modulus::Pow2(ell), true) => div::trunc_nonneg(ell, s, m, r.len()),
                (Modulus::Pow2(ell), false) => div::trunc(ell, s, m, r.len()),
                (Modulus::Odd(_), true) => div::rdiv_nonneg(md, &[1 << s], m, r.len()),
                (Modulus::Odd(_), false) => div::rdiv(md, &[1 << s], m, r.len()),
            }),
        )],
        Step::Div { d, nonneg } => vec![alt(
            numel,
            Box::new(move |r: Range<usize>| {
                if nonneg {
                    div::rdiv_nonneg(md, &[d], m, r.len())
                } else {
                    div::rdiv(md, &[d], m, r.len())
                }
            }),
        )],
        Step::AvgPool => match &instr.op {
            Op::AvgPool {
                x,
                pool,
                count_include_pad,
            } => divide(pool_counts(pool, shape(x), *count_include_pad)),
            Op::GlobalAvgPool { x } => {
                let s = shape(x);
                let pool = Pool2d::global([s[2], s[3]]);
                divide(pool_counts(&pool, s, false))
            }
            op => unreachable!("{} is not an average pooling", op.mnemonic()),
        },
        Step::MaxPool { exact } => match &instr.op {
            Op::MaxPool { x, pool } => {
                let s = shape(x);
                let d = |i: usize| s.get(i).copied().unwrap_or(1);
                match crate::params::pool::separable(pool, [d(2), d(3)], exact) {
                    // Narrow comparisons only: no signs.
                    Some(sep) => {
                        let (cols, rows) = (sep.cols_lens(d(0) * d(1)), sep.rows_lens(d(0) * d(1)));
                        vec![
                            alt(
                                cols.len(),
                                Box::new(move |r: Range<usize>| {
                                    pool::reduce(md, m, &cols[r], false, false)
                                }),
                            ),
                            alt(
                                rows.len(),
                                Box::new(move |r: Range<usize>| {
                                    pool::reduce(md, m, &rows[r], false, false)
                                }),
                            ),
                        ]
                    }
                    None => {
                        let lens = pool_counts(pool, s, false)
                            .into_iter()
                            .map(|c| c as usize)
                            .collect();
                        reduction(x, lens, exact, false)
                    }
                }
            }
            op => unreachable!("{} is not a maxpool", op.mnemonic()),
        },
        Step::ArgMax { exact } => match &instr.op {
            Op::ArgMax { x, axis, .. } => {
                let s = shape(x);
                let len = s.get(*axis).copied().unwrap_or(1);
                let windows = program.ty(*x).numel() / len.max(1);
                reduction(x, vec![len; windows], exact, true)
            }
            op => unreachable!("{} is not an argmax", op.mnemonic()),
        },
    };
    (phases, None)
}

/// The phase of a wave of products by the server's weights (`conv2d`, `matmul`, `mul`;
/// [`Step::Product`]) on `backend`, run as one call: SCI_HE, one exchange of every
/// layer's ciphertexts on lane 0 ([`he::layer`] of the summed [`he::product`] counts);
/// SCI_OT, on every lane one OT call ([`linear::products`]) over that lane's chunk of
/// rows of every product (a convolution one product per group), so its phase has one
/// item per lane. Empty for products the runtime does not run by a protocol.
fn product_wave<'a>(
    program: &'a Program,
    wave: &[ValueId],
    backend: Backend,
    md: Modulus,
    lanes: Lanes,
) -> Vec<Phase<'a>> {
    if let (Backend::He, Modulus::Odd(t)) = (backend, md) {
        let counts = wave.iter().filter_map(|&v| he::product(program, v)).fold(
            he::Counts::default(),
            |a, c| he::Counts {
                up: a.up + c.up,
                down: a.down + c.down,
            },
        );
        return vec![Phase {
            n: 1,
            roles: Roles::ServerSends,
            serial: None,
            chunk: Box::new(move |r: Range<usize>| {
                if r.is_empty() {
                    Transcript::new()
                } else {
                    he::layer(counts, t)
                }
            }),
        }];
    }
    let dims: Vec<(usize, usize, usize)> =
        wave.iter().flat_map(|&v| ot_products(program, v)).collect();
    if dims.is_empty() {
        return Vec::new();
    }
    let (ell, t, duplex) = (md.bits(), lanes.threads.max(1), lanes.duplex);
    let serial_dims = dims.clone();
    vec![Phase {
        n: t,
        roles: Roles::ServerSends,
        serial: Some(Box::new(move |r: Range<usize>| {
            linear::products_serial_bytes(ell, &lane_rows(&serial_dims, t, r.start), duplex)
        })),
        chunk: Box::new(move |r: Range<usize>| {
            linear::products(ell, &lane_rows(&dims, t, r.start), duplex)
        }),
    }]
}

/// Lane `i`'s chunk of the rows of every product `R×C` by `C×O` over `t` lanes.
fn lane_rows(dims: &[(usize, usize, usize)], t: usize, i: usize) -> Vec<(usize, usize, usize)> {
    dims.iter()
        .map(|&(rows, cols, outs)| (split(rows, t)[i].len(), cols, outs))
        .collect()
}

/// The phase of a wave of products of two secret operands ([`Step::SecretProduct`]),
/// run as one call of [`secmul::products`] on every lane over that lane's chunk of rows
/// of every product (a `mul` is `n×1` by `1×1`), roles alternating across lanes (the
/// protocol is symmetric); one item per lane.
fn secret_wave<'a>(
    program: &Program,
    wave: &[ValueId],
    md: Modulus,
    lanes: Lanes,
) -> Vec<Phase<'a>> {
    let dims: Vec<(usize, usize, usize)> = wave
        .iter()
        .filter_map(|&v| secret_product_dims(program, v))
        .collect();
    let (ell, t, duplex) = (md.bits(), lanes.threads.max(1), lanes.duplex);
    let serial_dims = dims.clone();
    vec![Phase {
        n: t,
        roles: Roles::Alternating,
        serial: Some(Box::new(move |r: Range<usize>| {
            secmul::products_serial_bytes(ell, &lane_rows(&serial_dims, t, r.start), duplex)
        })),
        chunk: Box::new(move |r: Range<usize>| {
            secmul::products(ell, &lane_rows(&dims, t, r.start), duplex)
        }),
    }]
}

/// `(R, C, O)` of a product of two secret operands ([`Program::is_secret_product`]):
/// a `matmul` `[R, C] × [C, O]`, a `mul` `(n, 1, 1)` over its broadcast output. None for
/// any other instruction.
pub fn secret_product_dims(program: &Program, v: ValueId) -> Option<(usize, usize, usize)> {
    if !program.is_secret_product(v) {
        return None;
    }
    let instr = program.instr(v);
    let shape = |o: &ValueId| program.ty(*o).shape();
    match &instr.op {
        Op::MatMul { a, b, .. } => Some((shape(a)[0], shape(a)[1], shape(b)[1])),
        Op::Mul { .. } => Some((instr.ty.numel(), 1, 1)),
        _ => None,
    }
}

/// The phase of a wave of RLWE products ([`Step::Product`] on [`Backend::Rlwe`], or
/// [`Step::SecretProduct`] on it: two cross terms each, [`crate::rlwe::layouts`]): one
/// exchange on lane 0 ([`rlwe::wave`] of the members' layouts), the client's flight led
/// by the public keys of the parameter sets not yet in `keyed` ([`rlwe::key_setup`]),
/// which it then records. Empty for a wave without a layout (the runtime refuses it).
fn rlwe_wave<'a>(
    program: &Program,
    wave: &[ValueId],
    keyed: &mut Vec<&'static ParamSet>,
) -> Vec<Phase<'a>> {
    let layouts: Vec<_> = wave
        .iter()
        .filter_map(|&v| crate::rlwe::layouts(program, v)?.ok())
        .flatten()
        .collect();
    if layouts.is_empty() {
        return Vec::new();
    }
    let fresh: Vec<&'static ParamSet> = crate::rlwe::sets(&layouts)
        .into_iter()
        .filter(|s| !keyed.iter().any(|k| k.id == s.id))
        .collect();
    let transcript = rlwe::key_setup(&fresh).then(rlwe::wave(&layouts));
    keyed.extend(fresh);
    vec![Phase {
        n: 1,
        roles: Roles::ServerSends,
        serial: None,
        chunk: Box::new(move |r: Range<usize>| {
            if r.is_empty() {
                Transcript::new()
            } else {
                transcript.clone()
            }
        }),
    }]
}

/// The OT products (`R×C` by `C×O`) of instruction `v` if it multiplies a secret
/// operand by the server's weights: one per group of a convolution, `W·X` as `Xᵀ·Wᵀ`,
/// `mul` elementwise (`C = O = 1`). None otherwise.
fn ot_products(program: &Program, v: ValueId) -> Vec<(usize, usize, usize)> {
    let instr = program.instr(v);
    let owner = |o: &ValueId| program.ty(*o).owner();
    let shape = |o: &ValueId| program.ty(*o).shape();
    let server = |o: &ValueId| owner(o) == Owner::Server;
    let public = |o: &ValueId| owner(o) == Owner::Public;
    match &instr.op {
        Op::Conv2d { x: _, w, conv, .. } if server(w) => {
            let ws = shape(w);
            let ys = instr.ty.shape();
            let g = conv.groups.max(1);
            let rows = ys[0] * ys[2] * ys[3];
            let cols = ws[1] * ws[2] * ws[3];
            vec![(rows, cols, ws[0] / g); g]
        }
        Op::MatMul { a, b, .. } if !public(a) && !public(b) && server(b) => {
            let (sa, sb) = (shape(a), shape(b));
            vec![(sa[0], sa[1], sb[1])]
        }
        Op::MatMul { a, b, .. } if !public(a) && !public(b) && server(a) => {
            let (sa, sb) = (shape(a), shape(b));
            vec![(sb[1], sb[0], sa[0])]
        }
        Op::Mul { a, b } if !public(a) && !public(b) && (server(a) || server(b)) => {
            vec![(instr.ty.numel(), 1, 1)]
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_matches_the_sessions() {
        assert_eq!(split(5, 2), vec![0..3, 3..5]);
        assert_eq!(split(1, 3), vec![0..1, 1..1, 1..1]);
    }

    #[test]
    fn alternating_lanes_balance_the_directions() {
        let t = select::relu(Modulus::Pow2(32), 4, 500);
        let mut s = LaneState::after_setup(2, Vec::new());
        let phases = [Phase {
            n: 1000,
            roles: Roles::Alternating,
            serial: None,
            chunk: Box::new(|r: Range<usize>| select::relu(Modulus::Pow2(32), 4, r.len())),
        }];
        let (c, loads) = s.step(&phases, None);
        assert_eq!(loads.len(), 2);
        assert_eq!(loads[0].serial_bytes, t.sent(Role::P0) + t.sent(Role::P1));
        assert_eq!(c.server_bytes, t.sent(Role::P0) + t.sent(Role::P1));
        assert_eq!(c.server_bytes, c.client_bytes);
    }
}
