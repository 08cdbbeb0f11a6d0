//! `(N 1)-OT_ℓ` from `L = ⌈log₂ N⌉` random 1-of-2 OTs with chosen choices
//! (Naor and Pinkas, "Computationally Secure Oblivious Transfer", J.
//! Cryptology 18(1), 2005, §4: 1-out-of-N from log N 1-out-of-2 OTs; the
//! cost CrypTFlow2 §3.1.1 counts for a silent `(N 1)-OT`, `N·ℓ + log N`
//! bits beside the engine's).
//!
//! Per instance the receiver, with choice `c < N` of bits `c_0 … c_{L−1}`,
//! takes `L` random OTs with chosen choices (the engine's pads, [`super`])
//! with choices `c_k`: it
//! sends `L` bits and learns `p_{k, c_k}` of the sender's 128-bit pads `(p_{k,0},
//! p_{k,1})`. The sender masks message `v` with `H(τ + v, X_v)`, `X_v = ⊕_k
//! p_{k, v_k}`, and sends the `N` masked messages (`N·ℓ` bits); the receiver
//! computes `X_c` and unmasks message `c`. For `v ≠ c`, `X_v` contains a pad
//! `p_{k, 1−c_k}` the receiver does not know (a [`Tccr`] output, uniform in
//! its view), and `H` is called on distinct tweaks, so the masks are
//! pseudorandom (random-oracle model for the XOR-combined inputs, as in
//! emp-ot / SCI's silent 1-of-N OT). The tweak `τ = 2^127 + 256·j` of an
//! instance whose last random OT has tweak `j` (never reused, below 2^119)
//! is disjoint from the engines' own tweaks (below 2^127).
//!
//! Several classes `(N, ℓ, count)` run in one call, instances in class order
//! (the [`crate::OtPack::send_kkot_classes`] contract): one message each
//! way per slice of COTs. Cost: `Σ count·(L + N·ℓ)` bits, the receiver's
//! bits in one message and the sender's in another (each padded to a byte),
//! plus the engine's. Over any engine ([`super::CorrelatedSender::send_classes`]):
//! the silent pack runs it; the IKNP pack runs KK13 instead.

use super::{CorrelatedReceiver, CorrelatedSender, Event, recv_derived, send_derived};
use crate::{KkClass, OtError, Word};
use sci_net::Channel;
use sci_net::crypto::{Block, Tccr};
use sci_net::pack::mask128;

/// Tweak domain of the masks (above every derived OT's tweak).
const DOMAIN: u128 = 1 << 127;

/// Random OTs per instance of a `(N 1)`-OT: `⌈log₂ N⌉` (1 for N = 2).
pub fn ots_per_instance(n_msgs: usize) -> usize {
    n_msgs.next_power_of_two().trailing_zeros().max(1) as usize
}

/// One class laid out over the random OTs of a call.
#[derive(Clone, Copy, Debug)]
struct Span {
    class: KkClass,
    /// Random OTs per instance.
    l: usize,
    /// Index of the class's first random OT.
    ot_start: usize,
    /// Global index of the class's first instance.
    inst_start: usize,
}

impl Span {
    fn ot_end(&self) -> usize {
        self.ot_start + self.class.count * self.l
    }

    /// Instances of the class whose last random OT is below `j`.
    fn completed_before(&self, j: usize) -> usize {
        (j.saturating_sub(self.ot_start) / self.l).min(self.class.count)
    }
}

/// The spans of `classes` and the total number of random OTs.
fn layout(classes: &[KkClass]) -> (Vec<Span>, usize) {
    let (mut ot, mut inst) = (0, 0);
    let spans = classes
        .iter()
        .map(|&class| {
            let s = Span {
                class,
                l: ots_per_instance(class.n_msgs),
                ot_start: ot,
                inst_start: inst,
            };
            ot = s.ot_end();
            inst += class.count;
            s
        })
        .collect();
    (spans, ot)
}

/// The class of the random OTs `j` of a call, met in increasing order:
/// the index into `spans` of the class holding `j`.
#[derive(Default)]
struct Cursor(usize);

impl Cursor {
    fn at(&mut self, spans: &[Span], j: usize) -> usize {
        while spans[self.0].ot_end() <= j {
            self.0 += 1;
        }
        self.0
    }
}

/// The mask tweak of an instance whose last random OT has tweak `t`.
fn instance_tweak(t: u128) -> u128 {
    DOMAIN | t << 8
}

/// Several classes of `(N 1)-OT` (checked by the caller: `N` in
/// 2..=256, widths fitting `T`), sender side: `msgs(c, range, out)`
/// writes the messages of instances `range` of class `c` (`out[i·N +
/// v]`, zeroed beforehand). See the [module documentation](self).
pub(super) fn send<T: Word, S: CorrelatedSender + ?Sized>(
    source: &mut S,
    ch: &mut Channel,
    classes: &[KkClass],
    mut msgs: impl FnMut(usize, std::ops::Range<usize>, &mut [T]),
) -> Result<(), OtError> {
    let (spans, n) = layout(classes);
    let h = Tccr::new();
    let mut pads: Vec<[Block; 2]> = Vec::with_capacity(8);
    let mut cursor = Cursor::default();
    // Per run of random OTs, the instances it completes: their masks'
    // inputs `X_v` side by side and tweaks (hashed in one pass), and
    // (class, index in the class, first `X_0`) of each.
    let (mut x, mut tweaks, mut done) = (Vec::new(), Vec::new(), Vec::new());
    let mut buf = [T::default(); 256];
    send_derived(source, ch, n, &[], |tweak, j0, y0, y1, w| {
        x.clear();
        tweaks.clear();
        done.clear();
        for (i, (a, b)) in y0.iter().zip(y1).enumerate() {
            let j = j0 + i;
            let c = cursor.at(&spans, j);
            let s = &spans[c];
            pads.push([*a, *b]);
            if pads.len() < s.l {
                continue;
            }
            let (at, nm) = (x.len(), s.class.n_msgs);
            x.push(pads.iter().fold(Block::ZERO, |acc, p| acc ^ p[0]));
            for v in 1..nm {
                let k = v.trailing_zeros() as usize;
                x.push(x[at + (v & (v - 1))] ^ pads[k][0] ^ pads[k][1]);
            }
            pads.clear();
            let t = instance_tweak(tweak + i as u128);
            tweaks.extend((0..nm as u128).map(|v| t + v));
            done.push((c, (j - s.ot_start) / s.l, at));
        }
        h.hash_tweaked(&mut x, &tweaks);
        for &(c, local, at) in &done {
            let (nm, bits) = (spans[c].class.n_msgs, spans[c].class.bits);
            buf[..nm].fill(T::default());
            msgs(c, local..local + 1, &mut buf[..nm]);
            let m = mask128(bits);
            for (msg, xv) in buf[..nm].iter().zip(&x[at..at + nm]) {
                w.push_u128((msg.to_u128() ^ xv.0) & m, bits);
            }
        }
    })
}

/// Receiver of [`send`] with one choice per instance (`choices[i] < N` of
/// its class, checked by the caller): the chosen messages, in instance
/// order.
pub(super) fn recv<T: Word, R: CorrelatedReceiver + ?Sized>(
    source: &mut R,
    ch: &mut Channel,
    classes: &[KkClass],
    choices: &[u8],
) -> Result<Vec<T>, OtError> {
    let (spans, n) = layout(classes);
    let h = Tccr::new();
    // The choice bit of every random OT, 64 per word.
    let mut bits = vec![0u64; n.div_ceil(64)];
    for s in &spans {
        for (i, &c) in choices[s.inst_start..s.inst_start + s.class.count]
            .iter()
            .enumerate()
        {
            for b in 0..s.l {
                let j = s.ot_start + i * s.l + b;
                bits[j / 64] |= u64::from((c >> b) & 1) << (j % 64);
            }
        }
    }
    let choice = |j: usize| (bits[j / 64] >> (j % 64)) & 1 == 1;
    let answer_bits = |r: std::ops::Range<usize>| -> u64 {
        spans
            .iter()
            .map(|s| {
                let done = s.completed_before(r.end) - s.completed_before(r.start);
                (done * s.class.n_msgs) as u64 * u64::from(s.class.bits)
            })
            .sum()
    };
    // Each instance's mask `H(X_c)` goes to `out` when its random OTs
    // are generated; the answer, read later, is xored in.
    let mut out = Vec::with_capacity(choices.len());
    let (mut acc, mut k, mut cur) = (Block::ZERO, 0usize, 0usize);
    let mut cursor = Cursor::default();
    // Per run of random OTs, the instances it completes: `X_c`, its
    // tweak and its message width.
    let (mut xc, mut tweaks, mut widths) = (Vec::new(), Vec::new(), Vec::new());
    // The instances answered so far, and the span of the next.
    let (mut answered, mut span) = (0usize, 0usize);
    recv_derived(source, ch, n, choice, &[], answer_bits, |e| match e {
        Event::Pads(tweak, j0, y) => {
            xc.clear();
            tweaks.clear();
            widths.clear();
            for (i, yi) in y.iter().enumerate() {
                let s = &spans[cursor.at(&spans, j0 + i)];
                acc ^= *yi;
                k += 1;
                if k < s.l {
                    continue;
                }
                xc.push(acc);
                tweaks.push(instance_tweak(tweak + i as u128) + u128::from(choices[cur]));
                widths.push(s.class.bits);
                (acc, k) = (Block::ZERO, 0);
                cur += 1;
            }
            h.hash_tweaked(&mut xc, &tweaks);
            out.extend(
                xc.iter()
                    .zip(&widths)
                    .map(|(x, &w)| T::from_u128(x.0 & mask128(w))),
            );
        }
        Event::Answer(_, r) => {
            for (i, o) in out.iter_mut().enumerate().skip(answered) {
                while spans[span].inst_start + spans[span].class.count <= i {
                    span += 1;
                }
                let (c, class) = (u64::from(choices[i]), spans[span].class);
                let width = u64::from(class.bits);
                r.skip(c * width);
                let e = r.read_u128(class.bits);
                r.skip((class.n_msgs as u64 - 1 - c) * width);
                *o = T::from_u128(o.to_u128() ^ e);
            }
            answered = out.len();
        }
    })?;
    Ok(out)
}
