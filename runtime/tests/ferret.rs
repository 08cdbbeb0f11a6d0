//! Ferret silent-OT engine tests: both parties in two threads over the
//! in-memory channel; every COT's correlation checked over several
//! iterations (bootstrapping included) and odd sizes, the derived OTs against
//! their functionality, and the bytes on the wire against the cost model
//! (`sci_ir::cost::ferret`), exactly.

use std::time::Duration;

use sci_ir::cost::Transcript;
use sci_ir::cost::ferret as cost;
use sci_ir::params::Role;
use sci_ir::params::ferret::{FERRET, FerretParams, LpnParams};
use sci_runtime::crypto::{Block, Prg};
use sci_runtime::net::{Channel, mem};
use sci_runtime::ot::ferret::{FerretReceiver, FerretSender};
use sci_runtime::ot::{CorrelatedReceiver, CorrelatedSender};
use sci_runtime::pack::mask;

/// Small sets for the tests (insecure: `k` far too small): an iteration of
/// 1024 COTs hands out 1024 − 608 = 416.
const SMALL: FerretParams = FerretParams {
    boot: LpnParams {
        k: 256,
        t: 12,
        log_leaves: 6,
    },
    main: LpnParams {
        k: 512,
        t: 16,
        log_leaves: 6,
    },
};

fn test_prg(label: &str, index: u64) -> Prg {
    Prg::derive(Block(sci_testkit::seed().into()), label, index)
}

/// A sender and a receiver with the same LPN seed (fresh per test process).
fn pair(p: FerretParams) -> (FerretSender, FerretReceiver) {
    let seed = test_prg("ferret-lpn", 0).next_block();
    seeded_pair(p, [seed, seed])
}

/// A sender and a receiver with LPN seeds `seeds` (sender's, receiver's), their
/// other randomness always the same.
fn seeded_pair(p: FerretParams, seeds: [Block; 2]) -> (FerretSender, FerretReceiver) {
    (
        FerretSender::new(p, seeds[0], test_prg("ferret-s", 0)).expect("sender"),
        FerretReceiver::new(p, seeds[1], test_prg("ferret-r", 0)).expect("receiver"),
    )
}

/// Runs the sender and the receiver in two threads over the in-memory
/// channel; returns their results and the bytes each sent.
fn run<A: Send, B: Send>(
    f0: impl FnOnce(&mut Channel) -> A + Send,
    f1: impl FnOnce(&mut Channel) -> B + Send,
) -> (A, B, u64, u64) {
    let (mut c0, mut c1) = mem::pair(Some(Duration::from_secs(60)));
    let ((a, s0), (b, s1)) = sci_testkit::run2(
        move || (f0(&mut c0), c0.stats().bytes_sent),
        move || (f1(&mut c1), c1.stats().bytes_sent),
    );
    (a, b, s0, s1)
}

/// Takes the random COTs of `sizes` on both sides; checks `t = q ⊕ b·Δ`
/// for each and the bytes against the cost model.
fn check_random_cots(p: FerretParams, sizes: &[usize]) {
    let (mut s, mut r) = pair(p);
    let delta = s.delta();
    let total: usize = sizes.iter().sum();
    let ((qs, avail), ts, b0, b1) = run(
        |ch| {
            let mut qs = Vec::with_capacity(total);
            let mut avail = Vec::new();
            for &n in sizes {
                avail.push(s.available());
                s.take(ch, n, |_, _, q| {
                    qs.extend_from_slice(q);
                    Ok(())
                })
                .expect("sender");
            }
            (qs, avail)
        },
        |ch| {
            let mut ts = Vec::with_capacity(total);
            for &n in sizes {
                r.take(ch, n, |_, _, t| {
                    ts.extend_from_slice(t);
                    Ok(())
                })
                .expect("receiver");
            }
            ts
        },
    );
    assert_eq!(qs.len(), total);
    assert_eq!(ts.len(), total);
    assert_eq!(delta.0 & 1, 1);
    let mut ones = 0;
    for (j, (q, t)) in qs.iter().zip(&ts).enumerate() {
        let b = t.bit(0);
        assert!(!q.bit(0), "COT {j}: the sender's low bit is 0");
        let want = if b { *q ^ delta } else { *q };
        assert_eq!(*t, want, "COT {j}");
        ones += usize::from(b);
    }
    // Random choices: far from constant.
    assert!(
        total == 0 || (ones > total / 4 && ones < 3 * total / 4),
        "{ones} of {total}"
    );
    // The bytes: the set-up (if anything was asked), then the iterations
    // each request ran; the COTs left after each as the model counts them.
    let mut t = if total > 0 {
        cost::setup(Role::P0, &p)
    } else {
        Transcript::new()
    };
    let mut left = p.first_available();
    for (&n, a) in sizes.iter().zip(&avail) {
        if let Some(a) = a {
            assert_eq!(*a, left, "COTs left before a request of {n}");
        }
        t = t.then(cost::random_cots(Role::P0, &p, left, n));
        if n > 0 {
            let runs = n.saturating_sub(left).div_ceil(p.per_iteration());
            left = left + runs * p.per_iteration() - n;
        }
    }
    assert_eq!(b0, t.sent(Role::P0), "sender's bytes");
    assert_eq!(b1, t.sent(Role::P1), "receiver's bytes");
}

#[test]
fn random_cots_hold_over_iterations_and_odd_sizes() {
    // 160 from the bootstrapping, then 416 per iteration: several
    // iterations, requests across their ends, one request over many.
    check_random_cots(SMALL, &[1, 159, 3, 333, 1000, 7, 2500]);
}

#[test]
fn nothing_is_sent_for_nothing() {
    check_random_cots(SMALL, &[0, 0]);
}

#[test]
fn production_parameters_one_main_iteration() {
    // The bootstrapping (IKNP, then the 607,232-COT set) and one main
    // iteration of 10,608,640.
    check_random_cots(FERRET, &[FERRET.first_available() + 1]);
}

#[test]
fn parameters_that_do_not_chain_are_rejected() {
    let mut p = SMALL;
    p.boot.t = 2;
    let e = FerretSender::new(p, Block(2), Prg::new(Block(1))).unwrap_err();
    assert!(e.to_string().contains("do not chain"), "{e}");
    assert!(FerretReceiver::new(p, Block(2), Prg::new(Block(1))).is_err());
}

/// `n` random COTs of a pair with LPN seeds `seeds` (sender's, receiver's)
/// and otherwise the same randomness: `Δ`, the sender's blocks, the
/// receiver's, and how many of them hold `t = q ⊕ b·Δ`.
fn cots_with_seeds(n: usize, seeds: [Block; 2]) -> (Vec<Block>, Vec<Block>, usize) {
    let (mut s, mut r) = seeded_pair(SMALL, seeds);
    let delta = s.delta();
    let (qs, ts, _, _) = run(
        |ch| {
            let mut qs = Vec::with_capacity(n);
            s.take(ch, n, |_, _, q| {
                qs.extend_from_slice(q);
                Ok(())
            })
            .expect("sender");
            qs
        },
        |ch| {
            let mut ts = Vec::with_capacity(n);
            r.take(ch, n, |_, _, t| {
                ts.extend_from_slice(t);
                Ok(())
            })
            .expect("receiver");
            ts
        },
    );
    let good = qs
        .iter()
        .zip(&ts)
        .filter(|(q, t)| **t == if t.bit(0) { **q ^ delta } else { **q })
        .count();
    (qs, ts, good)
}

/// The LPN code is keyed by the session's seed: two sessions with different
/// seeds (and otherwise the same randomness) hand out different COTs, both
/// correct; the same seed replays the same COTs; and parties whose seeds
/// differ compute with different codes, so their outputs are not COTs.
#[test]
fn each_session_seed_keys_its_own_code() {
    // The bootstrapping iteration's 160 COTs and several main iterations.
    let n = 2000;
    let (a, b) = (Block(0xa), Block(0xb));
    let (qa, ta, good_a) = cots_with_seeds(n, [a, a]);
    let (qb, tb, good_b) = cots_with_seeds(n, [b, b]);
    assert_eq!(
        (good_a, good_b),
        (n, n),
        "matching seeds: every COT correct"
    );
    let same = qa.iter().zip(&qb).filter(|(x, y)| x == y).count();
    assert_eq!(same, 0, "another seed, another code: no COT in common");
    assert_ne!(ta, tb);
    assert_eq!(
        cots_with_seeds(n, [a, a]),
        (qa, ta, n),
        "same seed, same run"
    );
    // Mismatched seeds: the transcript fits, the correlation does not.
    let (_, _, good) = cots_with_seeds(n, [a, b]);
    assert_eq!(good, 0, "mismatched seeds: no COT holds t = q ⊕ b·Δ");
}

#[test]
fn derived_ots_match_their_functionality_and_the_cost_model() {
    for (n, bits) in [(1usize, 1u32), (777, 32), (1500, 37), (300, 64)] {
        let mut g = test_prg("ferret-derived", n as u64);
        let x = g.ring_elems(n, bits);
        let choices = g.bools(n);
        let msgs: Vec<[u128; 2]> = (0..n)
            .map(|_| [g.next_block().0, g.next_block().0])
            .collect();
        let (mut s, mut r) = pair(SMALL);
        let ((rs, rot_s, before), (vs, ot_r, rot_r), b0, b1) = run(
            |ch| {
                let mut before = Vec::new();
                before.push(s.available());
                let rs = s.send_cot(ch, &x, bits).expect("cot");
                before.push(s.available());
                s.send_ot(ch, &msgs, 128).expect("ot");
                before.push(s.available());
                let rot = s.send_rot::<u128>(ch, n, 128).expect("rot");
                (rs, rot, before)
            },
            |ch| {
                let vs = r.recv_cot(ch, &choices, bits).expect("cot");
                let ot = r.recv_ot::<u128>(ch, &choices, 128).expect("ot");
                let rot = r.recv_rot::<u128>(ch, &choices, 128).expect("rot");
                (vs, ot, rot)
            },
        );
        let m = mask(bits);
        for j in 0..n {
            let c = choices[j];
            let want = if c {
                rs[j].wrapping_add(x[j]) & m
            } else {
                rs[j]
            };
            assert_eq!(vs[j], want, "COT_{bits} {j}");
            assert_eq!(ot_r[j], msgs[j][usize::from(c)], "OT {j}");
            assert_eq!(rot_r[j], rot_s[j][usize::from(c)], "ROT {j}");
            // The unchosen random message is not what the receiver holds.
            assert_ne!(rot_r[j], rot_s[j][usize::from(!c)], "ROT {j}");
        }
        let mut t = cost::setup(Role::P0, &SMALL);
        let answers = [u64::from(bits), 256, 0];
        for (i, a) in answers.iter().enumerate() {
            let avail = before[i].unwrap_or(SMALL.first_available());
            t = t.then(cost::derived(Role::P0, &SMALL, avail, n, *a));
        }
        assert_eq!(b0, t.sent(Role::P0), "n {n} bits {bits}: sender's bytes");
        assert_eq!(b1, t.sent(Role::P1), "n {n} bits {bits}: receiver's bytes");
    }
}
