//! The cost model: exact bytes sent by each party and rounds of every protocol of the
//! runtime, and of every instruction of a plan, as pure functions of shapes and
//! parameters (ring or field modulus, bit width ℓ, shift, divisors, millionaires' radix
//! `m`, λ, lane count).
//!
//! # Why it lives in `sci-ir`
//! The compiler (its cost report), the passes (autotuning, the ReLU/MaxPool swap) and
//! the runtime (whose protocol tests pin their measured traffic against it) all need the
//! same numbers, and every crate already depends on `sci-ir`. The model needs nothing but
//! shapes and parameters — no cryptography, no networking — so it adds no dependency and
//! there is one place of truth.
//!
//! # What is modelled: transcripts
//! A protocol run between the paper's roles `P0` and `P1` is a [`Transcript`]: the
//! sequence of its flights, each the bytes one role sends before it next reads. Bytes
//! per role are the sums of its flights. Rounds are counted as the runtime's channels
//! count them (`runtime/net/src/lib.rs`): a party counts a round each time it receives
//! after having sent since its previous receive. A transcript therefore also says when
//! each party waits, so its rounds depend on what came before on the same channel
//! (whether the party's last act was a send); [`Transcript::replay`] carries that state
//! from one protocol to the next. Protocols compose by concatenating transcripts.
//!
//! A streamed OT-based product (the client sends its extension messages ahead over a
//! full-duplex lane while the server answers batch after batch) counts like one flight
//! each way: one round for each party, as the runtime's `Channel::duplex` /
//! `Channel::streamed` count it. Over a half-duplex lane (TLS) each batch is an exchange
//! of its own ([`linear`]).
//!
//! # Modules (by protocol family)
//! | module | protocols |
//! |---|---|
//! | [`ot`] | base OTs of the set-up, IKNP correlated OT, KK13 `(N 1)`-OT; the abstract OT calls |
//! | [`ferret`] | the Ferret silent-OT engine: LPN sets, set-up, iterations, derived OTs, each lane's pricing of the OT calls |
//! | [`mill`] | millionaires' `Π_MILL^{ℓ,m}` (several instances in one call) |
//! | [`sign`] | `DReLU` over `Z_{2^ℓ}` (Alg. 2) and over `Z_n` (Alg. 4) |
//! | [`select`] | MUX (Alg. 6), B2A (Alg. 7), AND (App. A), ReLU (Alg. 8) |
//! | [`div`] | truncation (Alg. 5, non-negative variant), division (Thm. 4.1) |
//! | [`pool`] | MaxPool and ArgMax (§5.2.2), with exact or narrow comparisons |
//! | [`linear`] | OT-based products with the server's weights (§5.1.1) |
//! | [`math`] | exp of non-positive inputs (digit tables through 1-of-N OT, product tree) |
//! | [`secmul`] | products of two shared operands (two [`linear`] calls, one each way) |
//! | [`he`] | SCI_HE: ciphertexts of the HE-based products and the key set-up (§5.1.1, App. F) |
//! | [`rlwe`] | RLWE products over the ring (Cheetah): bytes of each product and of the key set-up |
//! | [`predict`] | per instruction of a program over `T` lanes, and the set-up |
//! | [`net`] | the time of that communication over a link of given bandwidth and RTT |
//!
//! Costs are those of this implementation, which the runtime's tests measure
//! exactly; the module docs compare them with the paper's formulas.

pub mod div;
pub mod ferret;
pub mod he;
pub mod linear;
pub mod math;
pub mod mill;
pub mod net;
pub mod ot;
pub mod pool;
pub mod predict;
pub mod radix;
pub mod rlwe;
pub mod secmul;
pub mod select;
pub mod sign;

pub use net::{NetProfile, Timing, predict_time};
pub use predict::{
    CONTROL_BYTES, Cost, Lanes, SessionPredictor, ferret_params, predict_program, predict_session,
    setup,
};

pub(crate) use crate::params::{Modulus, Role};

/// One flight: bytes a role sends before it next reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flight {
    /// The sender.
    pub from: Role,
    /// Bytes sent.
    pub bytes: u64,
}

/// The flights of a protocol run between `P0` and `P1`, in order (see the [module
/// documentation](self)). Consecutive flights of one role are merged and empty ones
/// dropped, so flights alternate.
///
/// A transcript also counts the OTs it runs, in the correlated OTs the silent engine
/// draws for them ([`Transcript::cots`]): the demand that sizes Ferret
/// ([`ferret::params_for`]).
///
/// Its flights are those of a run on the IKNP engine. Beside them it keeps its
/// [`Step`]s: the bytes sent outside OT, and each OT call as an abstract
/// [`ot::OtCall`], which the silent engine prices when the COTs left on the lane are
/// known ([`ferret::Sources::price`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Transcript {
    flights: Vec<Flight>,
    steps: Vec<Step>,
    cots: u64,
}

/// One step of a [`Transcript`], in order: bytes sent outside OT, or an OT call whose
/// bytes depend on the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Bytes a role sends (consecutive ones of a role merged).
    Send(Flight),
    /// An OT call (its IKNP flights are in the transcript's flights).
    Ot(ot::OtCall),
}

/// The state of one party on one channel that decides whether its next receive is a
/// round: whether it sent since it last received.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Waiting {
    /// Per role (`P0`, `P1`): sent since the last receive.
    pub sent: [bool; 2],
}

impl Transcript {
    /// The empty transcript (no communication).
    pub fn new() -> Transcript {
        Transcript::default()
    }

    /// Appends `bytes` sent by `from` (merged into the last flight if that is `from`'s
    /// too; nothing if `bytes` is 0).
    pub fn send(mut self, from: Role, bytes: u64) -> Transcript {
        if bytes == 0 {
            return self;
        }
        self.push_flight(from, bytes);
        self.push_step(Step::Send(Flight { from, bytes }));
        self
    }

    /// Appends `s` to the steps (bytes merged into the last step if it is a send of
    /// the same role).
    fn push_step(&mut self, s: Step) {
        match (self.steps.last_mut(), s) {
            (Some(Step::Send(last)), Step::Send(f)) if last.from == f.from => last.bytes += f.bytes,
            (_, s) => self.steps.push(s),
        }
    }

    /// Appends `bytes` from `from` to the flights only.
    fn push_flight(&mut self, from: Role, bytes: u64) {
        match self.flights.last_mut() {
            Some(last) if last.from == from => last.bytes += bytes,
            _ => self.flights.push(Flight { from, bytes }),
        }
    }

    /// The OT call `call`, whose run on the IKNP engine is `iknp` (its flights and
    /// [`Transcript::cots`]); the empty transcript if `iknp` is.
    pub fn ot(call: ot::OtCall, iknp: Transcript) -> Transcript {
        if iknp.flights.is_empty() {
            return Transcript::new();
        }
        Transcript {
            flights: iknp.flights,
            steps: vec![Step::Ot(call)],
            cots: iknp.cots,
        }
    }

    /// `self` followed by `next`.
    pub fn then(mut self, next: Transcript) -> Transcript {
        self.cots += next.cots;
        for f in next.flights {
            self.push_flight(f.from, f.bytes);
        }
        for s in next.steps {
            self.push_step(s);
        }
        self
    }

    /// The steps in order: bytes outside OT and OT calls.
    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    /// The same run with `n` more OTs counted in [`Transcript::cots`] (no bytes).
    pub fn with_cots(mut self, n: u64) -> Transcript {
        self.cots += n;
        self
    }

    /// The correlated OTs the silent engine draws for this run's OTs, both
    /// directions together: one per `(2 1)`-OT ([`ot::cot`]), `⌈log₂ N⌉` per `(N
    /// 1)`-OT ([`ot::kk`]). For the AND triples of the millionaires' (classes `(16
    /// 1)` and `(8 1)`, four COTs per two triples and three per correlated pair) this
    /// is at least the two random OTs per triple or pair the silent engine uses, so
    /// the count bounds the silent engine's demand from above.
    pub fn cots(&self) -> u64 {
        self.cots
    }

    /// The same run with the roles exchanged.
    pub fn swapped(self) -> Transcript {
        let swap = |f: Flight| Flight {
            from: f.from.other(),
            bytes: f.bytes,
        };
        Transcript {
            flights: self.flights.into_iter().map(swap).collect(),
            steps: self
                .steps
                .into_iter()
                .map(|s| match s {
                    Step::Send(f) => Step::Send(swap(f)),
                    Step::Ot(c) => Step::Ot(c.swapped()),
                })
                .collect(),
            cots: self.cots,
        }
    }

    /// The flights in order.
    pub fn flights(&self) -> &[Flight] {
        &self.flights
    }

    /// Bytes sent by `role`.
    pub fn sent(&self, role: Role) -> u64 {
        self.flights
            .iter()
            .filter(|f| f.from == role)
            .map(|f| f.bytes)
            .sum()
    }

    /// Bits on the wire, both directions.
    pub fn bits(&self) -> u64 {
        8 * self.flights.iter().map(|f| f.bytes).sum::<u64>()
    }

    /// Rounds of `role` when the run starts with both parties having sent (as inside
    /// any larger protocol, the way the protocols' docs count them).
    pub fn rounds(&self, role: Role) -> u64 {
        let mut w = Waiting { sent: [true; 2] };
        self.replay(&mut w)[role.index()]
    }

    /// Rounds of `P0` and `P1` from the state `w`, which is updated to the state after
    /// the run.
    pub fn replay(&self, w: &mut Waiting) -> [u64; 2] {
        let mut rounds = [0; 2];
        for f in &self.flights {
            let (s, r) = (f.from.index(), f.from.other().index());
            w.sent[s] = true;
            if w.sent[r] {
                rounds[r] += 1;
                w.sent[r] = false;
            }
        }
        rounds
    }
}

/// Bytes of `bits` bits rounded up to whole bytes.
pub(crate) fn bytes_of(bits: u64) -> u64 {
    bits.div_ceil(8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flights_merge_and_count_rounds_as_the_channels_do() {
        // A sends, B answers: A waits one round, B none (it had not sent).
        let t = Transcript::new().send(Role::P0, 3).send(Role::P1, 4);
        let mut w = Waiting::default();
        assert_eq!(t.replay(&mut w), [1, 0]);
        assert_eq!(w.sent, [false, true]);
        // Again on the same channel: now B's receive follows its send.
        assert_eq!(t.replay(&mut w), [1, 1]);
        let t2 = t.clone().send(Role::P1, 1).send(Role::P1, 0);
        assert_eq!(t2.flights().len(), 2);
        assert_eq!(
            (t2.sent(Role::P0), t2.sent(Role::P1), t2.bits()),
            (3, 5, 64)
        );
        assert_eq!(t2.clone().swapped().sent(Role::P0), 5);
        assert_eq!(Transcript::new().then(t.clone()), t);
        assert_eq!(Modulus::Odd(65537).bits(), 17);
        assert_eq!(Modulus::Odd(65535).bits(), 16);
    }
}
