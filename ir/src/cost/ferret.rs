//! The Ferret silent-OT engine (Yang, Weng, Lan, Zhang, Wang, "Ferret: Fast
//! Extension for coRRElated oT with small communication", CCS 2020), as
//! transcripts: its LPN parameter sets, the bytes of the bootstrapping set-up,
//! of one iteration, and of the OTs derived from its random COTs.
//!
//! One iteration with parameters `(n, k, t)`, `n = t·2^h` (regular noise: one
//! noisy position in each of `t` blocks of `2^h`), consumes `k + t·h` COTs
//! reserved from the previous one and outputs `n`. Only the Δ holder (the COT
//! sender) speaks: per GGM tree, two masked level sums per level and one
//! correction block, `t·(2h + 1)·16` bytes in one message. The first
//! iteration (the bootstrapping set, smaller) consumes COTs of a dedicated
//! IKNP extension: 128 base OTs (the Ferret receiver is their sender: 32
//! bytes from it, `128·32` from the Ferret sender) and `16·8⌈m/8⌉` bytes of
//! extension rows from the receiver for its `m = k + t·h` COTs. With the
//! production set ([`FERRET`]) the set-up is 1,409,520 bytes.
//!
//! A run's OT calls ([`super::ot::OtCall`]) are priced per lane by
//! [`Sources`], which follows the COTs each direction has left as the runtime
//! hands them out: a call is cut into pieces where an iteration's COTs run out,
//! each piece costs the receiver's bit per OT and the sender's answer, and the
//! iteration's message is sent on the call that needs it.

use super::ot::OtCall;
use super::{Role, Step, Transcript, bytes_of, ot};
use crate::params::ferret::{FERRET, FERRET_SMALL, FerretParams};
use crate::params::ot::KkClass;

/// The LPN set for a lane that draws `cots` COTs per direction: of
/// [`FERRET_SMALL`] and [`FERRET`], the one whose set-up and iterations for
/// `cots` send fewer bytes ([`bytes_for`]), the small set on a
/// tie. Both parties compute it from the plan (the runtime's executor and
/// the cost model call this one function), so they agree without a message.
/// The small set wins up to 1,595,544 COTs (three of its iterations cost
/// more than one of the main set).
pub fn params_for(cots: u64) -> FerretParams {
    let m = usize::try_from(cots).unwrap_or(usize::MAX);
    if bytes_for(&FERRET_SMALL, m) <= bytes_for(&FERRET, m) {
        FERRET_SMALL
    } else {
        FERRET
    }
}

/// Bytes of one direction's set-up ([`setup`]) of `p` and of the iterations
/// that hand out `m` COTs in all (both parties' together).
pub fn bytes_for(p: &FerretParams, m: usize) -> u64 {
    setup(Role::P0, p).bits() / 8 + p.iterations(m) as u64 * p.main.iteration_bytes()
}

/// The bootstrapping set-up, `sender` being the COT sender (Δ holder): the
/// base OTs of the IKNP extension (`sender` is their receiver), the extension
/// rows of `boot.reserve()` COTs, then the first iteration.
pub fn setup(sender: Role, p: &FerretParams) -> Transcript {
    let receiver = sender.other();
    ot::base(receiver, 128)
        .send(receiver, 16 * p.boot.reserve().next_multiple_of(8) as u64)
        .send(sender, p.boot.iteration_bytes())
}

/// One later iteration: one message from `sender`.
pub fn iteration(sender: Role, p: &FerretParams) -> Transcript {
    Transcript::new().send(sender, p.main.iteration_bytes())
}

/// Handing out `m` random COTs when `available` are left from the set-up or
/// the last iteration (the set-up must have run): the iterations that run out
/// of COTs, nothing else.
pub fn random_cots(sender: Role, p: &FerretParams, available: usize, m: usize) -> Transcript {
    let runs = m.saturating_sub(available).div_ceil(p.per_iteration());
    (0..runs).fold(Transcript::new(), |t, _| t.then(iteration(sender, p)))
}

/// OTs derived from `m` random COTs, `answer_bits` per OT from the sender
/// (`2ℓ` for chosen-message OT, `ℓ` for correlated OT over `Z_{2^ℓ}`, 0 for
/// random OT with chosen choices): per slice of COTs (the slices end where an
/// iteration's COTs run out), the receiver sends one bit per OT (its choice
/// xor the random COT's) and the sender answers. `available` as for
/// [`random_cots`]. [`derived_batches`] with one batch.
pub fn derived(
    sender: Role,
    p: &FerretParams,
    available: usize,
    m: usize,
    answer_bits: u64,
) -> Transcript {
    derived_batches(sender, p, available, &[m], |r| r.len() as u64 * answer_bits)
}

/// OTs derived from random COTs in batches (`batches[b]` OTs in batch `b`,
/// numbered on across batches), `answer_bits(range)` bits of the sender's
/// answer for the OTs `range` of a piece: each batch is cut into pieces
/// where an iteration's COTs run out, and per piece the receiver sends one
/// bit per OT and the sender answers (each padded to whole bytes). When
/// the call continues past the current iteration, the sender's message of
/// the next one (the *announcement*) follows its answer to the call's first
/// piece of the current one; with one batch that is where the iteration
/// runs. The flights are in the order of the sequential exchange; a
/// streamed one (several batches over a full-duplex channel) sends the
/// same bytes in one round.
pub fn derived_batches(
    sender: Role,
    p: &FerretParams,
    available: usize,
    batches: &[usize],
    answer_bits: impl Fn(std::ops::Range<usize>) -> u64,
) -> Transcript {
    let mut src = Source {
        available,
        iterations: 0,
    };
    take(sender, p, &mut src, batches, true, answer_bits)
}

/// `t`'s cost on the silent engine with the main set [`FERRET`], amortised over its
/// iterations, in bits times [`FerretParams::per_iteration`] (integral, so that costs
/// compare exactly): its bits on the wire with COTs to spare (no iteration runs), plus
/// the COTs it draws in both directions at the main set's `8·iteration_bytes /
/// per_iteration` bits each (≈ 0.447). The server plays `P0`. Divide by
/// `per_iteration` for bits ([`amortized_bits`]).
pub fn amortized_cost(t: &Transcript) -> u128 {
    let p = FERRET;
    let plenty = Source {
        available: usize::MAX / 2,
        iterations: 0,
    };
    let mut src = Sources {
        params: p,
        dirs: [plenty; 2],
    };
    let wire = src.price(t, Role::P0).bits();
    let cots: usize = src
        .dirs
        .iter()
        .map(|d| plenty.available - d.available)
        .sum();
    u128::from(wire) * p.per_iteration() as u128
        + cots as u128 * 8 * u128::from(p.main.iteration_bytes())
}

/// [`amortized_cost`] in bits: what `t` costs on the silent engine once its set-up
/// is paid, in a long run of whole iterations.
pub fn amortized_bits(t: &Transcript) -> f64 {
    amortized_cost(t) as f64 / FERRET.per_iteration() as f64
}

/// One direction's COT source as the cost model follows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Source {
    /// COTs left to hand out before the next iteration.
    pub available: usize,
    /// Iterations run after the set-up so far.
    pub iterations: u64,
}

/// [`derived_batches`] from the source `src` (updated: the COTs left after the call,
/// the iterations run); `choices`: whether the receiver sends its bit per OT (not for
/// random OTs with random choices, which send nothing but the iterations).
fn take(
    sender: Role,
    p: &FerretParams,
    src: &mut Source,
    batches: &[usize],
    choices: bool,
    answer_bits: impl Fn(std::ops::Range<usize>) -> u64,
) -> Transcript {
    let receiver = sender.other();
    let mut t = Transcript::new();
    let mut announced = false;
    let m: usize = batches.iter().sum();
    let mut ends = batches.iter().scan(0, |s, &b| {
        *s += b;
        Some(*s)
    });
    let mut end = 0;
    let mut j = 0;
    while j < m {
        while end <= j {
            end = ends.next().unwrap_or(m);
        }
        if src.available == 0 {
            if !announced {
                t = t.then(iteration(sender, p));
            }
            announced = false;
            src.available = p.per_iteration();
            src.iterations += 1;
        }
        let len = (end - j).min(src.available);
        if choices {
            t = t.send(receiver, bytes_of(len as u64));
        }
        t = t.send(sender, bytes_of(answer_bits(j..j + len)));
        src.available -= len;
        j += len;
        if m - j > src.available && !announced {
            t = t.then(iteration(sender, p));
            announced = true;
        }
    }
    t
}

/// The silent engine's COT sources of one lane (one per direction) as the cost model
/// follows them through a run: the LPN set and the COTs each direction has left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sources {
    /// The lane's LPN set (both directions').
    pub params: FerretParams,
    /// The two directions, indexed by the COT sender: the server (0) and the client
    /// (1).
    pub dirs: [Source; 2],
}

impl Sources {
    /// The sources after the set-up ([`setup`] both ways): the bootstrapping's
    /// COTs to hand out in each direction.
    pub fn after_setup(params: FerretParams) -> Sources {
        Sources {
            params,
            dirs: [Source {
                available: params.first_available(),
                iterations: 0,
            }; 2],
        }
    }

    /// `t` run on the silent engine, the server playing `server_role`: its bytes
    /// outside OT as they are, each OT call priced from the COTs left (which it
    /// consumes), an iteration's message on the call that triggers it. Its
    /// [`Transcript::cots`] are `t`'s.
    pub fn price(&mut self, t: &Transcript, server_role: Role) -> Transcript {
        self.price_serial(t, server_role).0
    }

    /// [`Sources::price`] and the bytes of the run that cross the lane one after the
    /// other (for the network time, [`super::net`]): all of them, except in a
    /// streamed call, whose pieces pipeline — the longer of "every piece's bits, then
    /// the last answer" and "the first piece's bits, then every answer", as
    /// [`super::linear::pipelined_bytes`] counts IKNP's batches.
    pub fn price_serial(&mut self, t: &Transcript, server_role: Role) -> (Transcript, u64) {
        let mut out = Transcript::new().with_cots(t.cots());
        let mut serial = 0;
        for s in t.steps() {
            out = match s {
                Step::Send(f) => {
                    serial += f.bytes;
                    out.send(f.from, f.bytes)
                }
                Step::Ot(call) => {
                    let (c, bytes) = self.call(call, server_role);
                    serial += bytes;
                    out.then(c)
                }
            };
        }
        (out, serial)
    }

    /// The direction whose COT sender plays `sender`.
    fn left(&mut self, sender: Role, server_role: Role) -> &mut Source {
        &mut self.dirs[usize::from(sender != server_role)]
    }

    /// One OT call on the silent engine (see the runtime's `ot::derived`, its
    /// `nofn`, and `ot::ferret::pads`) and its serial bytes ([`Sources::price_serial`]).
    fn call(&mut self, call: &OtCall, server_role: Role) -> (Transcript, u64) {
        let p = self.params;
        match call {
            OtCall::Cot {
                receiver,
                batches,
                widths,
                streamed,
            } => {
                let sender = receiver.other();
                let left = self.left(sender, server_role);
                let t = take(sender, &p, left, batches, true, |r| widths.bits(r));
                let (req, ans) = (t.sent(*receiver), t.sent(sender));
                if !*streamed {
                    return (t, req + ans);
                }
                // One exchange: every piece's bits ahead, every answer (and
                // announced iteration) in the sender's stream.
                let one = Transcript::new().send(*receiver, req).send(sender, ans);
                (one, super::linear::pipelined_bytes(&t, *receiver))
            }
            OtCall::Kk {
                receiver,
                classes,
                triples,
            } => {
                let sender = receiver.other();
                let (spans, n) = nofn_spans(classes);
                let answer = |r: std::ops::Range<usize>| {
                    spans
                        .iter()
                        .map(|&(start, l, c)| {
                            let done = |j: usize| (j.saturating_sub(start) / l).min(c.count);
                            ((done(r.end) - done(r.start)) * c.n_msgs) as u64 * u64::from(c.bits)
                        })
                        .sum()
                };
                let left = self.left(sender, server_role);
                let mut t = take(sender, &p, left, &[n], true, answer);
                for &k in triples {
                    for s in [sender, *receiver] {
                        let left = self.left(s, server_role);
                        t = t.then(take(s, &p, left, &[k], false, |_| 0));
                    }
                }
                let bytes = t.bits() / 8;
                (t, bytes)
            }
        }
    }
}

/// The random OTs of a silent 1-of-N call of `classes`: per class its first random
/// OT, the OTs per instance (`⌈log₂ N⌉`, at least 1) and the class; and their total.
fn nofn_spans(classes: &[KkClass]) -> (Vec<(usize, usize, KkClass)>, usize) {
    let mut start = 0;
    let spans = classes
        .iter()
        .map(|&c| {
            let l = (c.n_msgs.next_power_of_two().trailing_zeros() as usize).max(1);
            let s = (start, l, c);
            start += c.count * l;
            s
        })
        .collect();
    (spans, start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::ferret::LpnParams;

    #[test]
    fn production_sets_chain() {
        assert!(FERRET.valid());
        assert_eq!(FERRET.main.n(), 10_608_640);
        assert_eq!(FERRET.boot.n(), 607_232);
        assert_eq!(FERRET.main.reserve(), 589_824 + 1295 * 13);
        assert_eq!(FERRET.boot.reserve(), 69_454 + 593 * 10);
        // 1295 trees of 27 blocks: under 0.45 bits per COT handed out.
        assert_eq!(FERRET.main.iteration_bytes(), 559_440);
        let bits = 8.0 * 559_440.0 / FERRET.per_iteration() as f64;
        assert!(bits < 0.45, "{bits}");
        let s = setup(Role::P0, &FERRET);
        assert_eq!(s.sent(Role::P1), 32 + 16 * 75_384);
        assert_eq!(s.sent(Role::P0), 128 * 32 + 593 * 21 * 16);
        assert_eq!(s.bits() / 8, 1_409_520);
    }

    #[test]
    fn demand_chooses_the_set() {
        assert!(FERRET_SMALL.valid());
        assert_eq!(FERRET_SMALL.first_available(), 531_848);
        assert_eq!(FERRET_SMALL.per_iteration(), 531_848);
        assert_eq!(FERRET_SMALL.main.iteration_bytes(), 199_248);
        // Equal set-ups: the same bootstrapping.
        assert_eq!(bytes_for(&FERRET_SMALL, 0), bytes_for(&FERRET, 0));
        assert_eq!(params_for(0), FERRET_SMALL);
        // Up to two small iterations beyond the set-up's COTs.
        let last: usize = 3 * 531_848;
        assert_eq!(last, 1_595_544);
        assert_eq!(params_for(last as u64), FERRET_SMALL);
        assert!(bytes_for(&FERRET_SMALL, last) <= bytes_for(&FERRET, last));
        assert_eq!(params_for(last as u64 + 1), FERRET);
        assert!(bytes_for(&FERRET_SMALL, last + 1) > bytes_for(&FERRET, last + 1));
        assert_eq!(params_for(u64::MAX), FERRET);
    }

    #[test]
    fn derived_slices_at_iteration_ends() {
        let p = FerretParams {
            boot: LpnParams {
                k: 20,
                t: 4,
                log_leaves: 4,
            },
            main: LpnParams {
                k: 20,
                t: 4,
                log_leaves: 4,
            },
        };
        assert!(p.valid());
        assert_eq!(p.per_iteration(), 64 - 36);
        // 10 available, 30 asked: a slice of 10, an iteration, a slice of 20.
        let t = derived(Role::P0, &p, 10, 30, 3);
        let it = p.main.iteration_bytes();
        assert_eq!(t.sent(Role::P1), 2 + 3);
        assert_eq!(t.sent(Role::P0), 4 + it + 8);
        assert_eq!(random_cots(Role::P0, &p, 10, 30).sent(Role::P0), it);
        assert_eq!(p.iterations(0), 0);
    }
}
