//! The OT layer: the base OTs of the set-up (Chou–Orlandi), IKNP correlated OT and
//! Kolesnikov–Kumaresan `(N 1)`-OT, as transcripts.
//!
//! An extension batch of `n` instances: the receiver sends λ-bit rows (2λ for KK) for
//! `8⌈n/8⌉` instances (the extension matrix is transposed in blocks of 8), then the
//! sender answers with its packed messages. An empty batch sends nothing.
//!
//! Every call is also recorded as an abstract [`OtCall`] (instances, batches, the
//! sender's answer widths, 1-of-N classes, the random OTs of bit triples), which the
//! silent engine prices in its own way ([`super::ferret::Sources::price`]).

use super::{Role, Transcript, bytes_of};
use crate::params::ot::{KkClass, LAMBDA, POINT_BYTES};
use std::ops::Range;

/// The sender's answer bits per instance of a correlated-OT call: runs of instances in
/// order; in a run `(count, cycle)`, the run's instance `j` carries `cycle[j mod
/// cycle.len()]` bits (a product's instances cycle through the bits of a pair, so
/// several products in one call are several runs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Widths(Vec<(usize, Vec<u64>)>);

impl Widths {
    /// `n` instances of `bits` bits each.
    pub fn uniform(n: usize, bits: u64) -> Widths {
        Widths::cycle(n, vec![bits])
    }

    /// `n` instances, instance `j` carrying `cycle[j mod cycle.len()]` bits.
    pub fn cycle(n: usize, cycle: Vec<u64>) -> Widths {
        Widths(vec![(n, cycle)])
    }

    /// `self`'s instances, then `next`'s.
    pub fn then(mut self, next: Widths) -> Widths {
        self.0.extend(next.0);
        self
    }

    /// Answer bits of the instances `r`, summed.
    pub fn bits(&self, r: Range<usize>) -> u64 {
        self.before(r.end) - self.before(r.start)
    }

    /// Answer bits of the instances `0..j`.
    fn before(&self, j: usize) -> u64 {
        let mut start = 0;
        let mut sum = 0;
        for (count, cycle) in &self.0 {
            let k = j.clamp(start, start + count) - start;
            if !cycle.is_empty() {
                let full: u64 = cycle.iter().sum();
                sum +=
                    (k / cycle.len()) as u64 * full + cycle[..k % cycle.len()].iter().sum::<u64>();
            }
            start += count;
        }
        sum
    }
}

/// One OT call of a protocol, as the engines see it (roles as in the transcript).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OtCall {
    /// Correlated OT with per-instance payloads: `batches` of instances (numbered on
    /// across batches), `receiver` choosing, the sender answering `widths` bits per
    /// instance; `streamed`: several batches in one exchange over a full-duplex lane.
    Cot {
        /// The choosing party.
        receiver: Role,
        /// Instances per batch.
        batches: Vec<usize>,
        /// The sender's answer bits per instance.
        widths: Widths,
        /// Whether the batches stream as one exchange.
        streamed: bool,
    },
    /// One `(N 1)`-OT call of `classes` (`receiver` choosing), then the random OTs
    /// with random choices of bit triples on the silent engine: per entry of
    /// `triples`, that many in each direction, `receiver.other()` the sender first
    /// (on IKNP the triples are classes of the call, priced in its flights).
    Kk {
        /// The choosing party.
        receiver: Role,
        /// The 1-of-N classes other than the triples', in call order.
        classes: Vec<KkClass>,
        /// Random OTs per direction of each batch of triples, in order.
        triples: Vec<usize>,
    },
}

impl OtCall {
    /// The same call with the roles exchanged.
    pub fn swapped(self) -> OtCall {
        match self {
            OtCall::Cot {
                receiver,
                batches,
                widths,
                streamed,
            } => OtCall::Cot {
                receiver: receiver.other(),
                batches,
                widths,
                streamed,
            },
            OtCall::Kk {
                receiver,
                classes,
                triples,
            } => OtCall::Kk {
                receiver: receiver.other(),
                classes,
                triples,
            },
        }
    }
}

/// Bytes of the extension rows of `n` instances of `w`·λ bits each.
fn rows(n: usize, w: u64) -> u64 {
    w * LAMBDA / 8 * n.next_multiple_of(8) as u64
}

/// One correlated-OT batch of `n` instances with `payload` correction bits in all
/// (`Σ_j W_j`), `receiver` sending first: λ bits per instance (padded to 8 instances)
/// from the receiver, `⌈payload/8⌉` bytes from the sender.
pub fn cot(receiver: Role, n: usize, payload: u64) -> Transcript {
    if n == 0 {
        return Transcript::new();
    }
    Transcript::new()
        .send(receiver, rows(n, 1))
        .send(receiver.other(), bytes_of(payload))
        .with_cots(n as u64)
}

/// A correlated-OT call of `batches`, `receiver` sending first, the sender answering
/// `widths` bits per instance: per batch, λ bits per instance (padded to 8 instances)
/// from the receiver and its answer padded to whole bytes from the sender; if
/// `streamed`, all requests in one flight and all answers in the next.
pub fn cot_call(receiver: Role, batches: Vec<usize>, widths: Widths, streamed: bool) -> Transcript {
    let mut start = 0;
    let iknp = batches.iter().fold(Transcript::new(), |t, &n| {
        let answer = widths.bits(start..start + n);
        start += n;
        t.then(cot(receiver, n, answer))
    });
    let iknp = if streamed {
        let (req, ans) = (iknp.sent(receiver), iknp.sent(receiver.other()));
        let cots = iknp.cots();
        Transcript::new()
            .send(receiver, req)
            .send(receiver.other(), ans)
            .with_cots(cots)
    } else {
        iknp
    };
    let call = OtCall::Cot {
        receiver,
        batches,
        widths,
        streamed,
    };
    Transcript::ot(call, iknp)
}

/// One 1-of-N call of `classes` and of the bit triples `triples` (`(regular, correlated
/// pairs)` per batch), `receiver` choosing: on IKNP one [`kk`] call with the triples'
/// classes after `classes` (two regular triples per `(16 1)-OT_2`, a correlated pair
/// per `(8 1)-OT_2`); on the silent engine the triples are random OTs, one per triple
/// or pair in each direction ([`OtCall::Kk`]).
pub fn kk_call(receiver: Role, classes: &[KkClass], triples: &[(usize, usize)]) -> Transcript {
    let all: Vec<KkClass> = classes
        .iter()
        .copied()
        .chain(triples.iter().flat_map(|&(reg, cor)| {
            [
                KkClass {
                    n_msgs: 16,
                    bits: 2,
                    count: reg.div_ceil(2),
                },
                KkClass {
                    n_msgs: 8,
                    bits: 2,
                    count: cor,
                },
            ]
        }))
        .collect();
    let call = OtCall::Kk {
        receiver,
        classes: classes.iter().copied().filter(|c| c.count > 0).collect(),
        triples: triples
            .iter()
            .map(|&(reg, cor)| reg + cor)
            .filter(|&n| n > 0)
            .collect(),
    };
    Transcript::ot(call, kk(receiver, &all))
}

/// Bits on the wire of [`cot`] (both directions).
pub fn cot_bits(n: usize, payload: u64) -> u64 {
    cot(Role::P1, n, payload).bits()
}

/// One KK13 call with `classes` (in call order), `receiver` sending first: 2λ bits per
/// instance (padded to 8 instances) from the receiver, `⌈Σ count·N·bits / 8⌉` bytes from
/// the sender.
pub fn kk(receiver: Role, classes: &[KkClass]) -> Transcript {
    let n: usize = classes.iter().map(|c| c.count).sum();
    if n == 0 {
        return Transcript::new();
    }
    let msg: u64 = classes
        .iter()
        .map(|c| (c.count * c.n_msgs) as u64 * u64::from(c.bits))
        .sum();
    let cots: u64 = classes
        .iter()
        .map(|c| c.count as u64 * u64::from(c.n_msgs.next_power_of_two().trailing_zeros()))
        .sum();
    Transcript::new()
        .send(receiver, rows(n, 2))
        .send(receiver.other(), bytes_of(msg))
        .with_cots(cots)
}

/// Bits on the wire of [`kk`] (both directions).
pub fn kk_bits(classes: &[KkClass]) -> u64 {
    kk(Role::P1, classes).bits()
}

/// `n` base OTs (Chou–Orlandi over Ristretto255), `sender` first: one point from the
/// sender, one point per OT from the receiver.
pub fn base(sender: Role, n: usize) -> Transcript {
    Transcript::new()
        .send(sender, POINT_BYTES)
        .send(sender.other(), POINT_BYTES * n as u64)
}

/// The OT set-up of one lane, `first` being the party that is the extension sender
/// first (the server): IKNP with `first` as extension sender (it is the base OTs'
/// receiver, 128 base OTs), IKNP the other way, then KK (256 base OTs) in the same two
/// orders. `2·(32 + 128·32) + 2·(32 + 256·32)` bytes, half each way.
pub fn setup(first: Role) -> Transcript {
    let second = first.other();
    base(second, 128)
        .then(base(first, 128))
        .then(base(second, 256))
        .then(base(first, 256))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_sizes() {
        assert_eq!(cot_bits(0, 5), 0);
        assert_eq!(cot_bits(1, 5), 128 * 8 + 8);
        assert_eq!(cot_bits(9, 9 * 33), 128 * 16 + 8 * 38);
        let c = KkClass {
            n_msgs: 16,
            bits: 2,
            count: 3,
        };
        assert_eq!(kk_bits(&[c]), 256 * 8 + 8 * 12);
        let s = setup(Role::P0);
        assert_eq!(s.sent(Role::P0), 32 + 128 * 32 + 32 + 256 * 32);
        assert_eq!(s.sent(Role::P1), s.sent(Role::P0));
    }
}
