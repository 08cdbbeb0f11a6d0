//! The OT layer on the silent engine ([`OtKind::Silent`]): [`OtPack`]'s
//! calls with both parties in two threads, across the engine's iterations
//! (a small LPN set, so calls straddle them), the communication of the
//! derived OTs pinned, and no correlation handed out twice. (The
//! functionality of every derived OT, on each engine, is the contract's
//! suite, `ot::derived::suite` in the library.)

use std::collections::HashSet;
use std::time::Duration;

use sci_ir::cost::ferret::{derived, derived_batches, setup};
use sci_ir::params::Role;
use sci_runtime::crypto::{Block, Prg};
use sci_runtime::net::{Channel, Party, Stats, mem};
use sci_runtime::ot::derived::nofn::ots_per_instance;
use sci_runtime::ot::ferret::TEST_FERRET;
use sci_runtime::ot::{CotFields, KkClass, OtError, OtKind, OtPack};
use sci_runtime::pack::mask;

fn test_prg(label: &str, index: u64) -> Prg {
    Prg::derive(Block(sci_testkit::seed().into()), label, index)
}

/// Party `p`'s silent pack, with the LPN seed both parties share (fresh per
/// test process).
fn pack(p: u64) -> OtPack {
    let mut ot = OtPack::new(test_prg("silent-pack", p), OtKind::Silent);
    ot.set_ferret_params(TEST_FERRET)
        .expect("TEST_FERRET chains");
    ot.set_lpn_seed(test_prg("silent-lpn", 0).next_block())
        .expect("nothing set up yet");
    ot
}

/// Runs `f0` (sender) and `f1` (receiver) on silent packs over `pair`.
fn run2<A: Send, B: Send>(
    (mut c0, mut c1): (Channel, Channel),
    f0: impl FnOnce(&mut OtPack, &mut Channel) -> A + Send,
    f1: impl FnOnce(&mut OtPack, &mut Channel) -> B + Send,
) -> (A, B, Stats, Stats) {
    let ((a, s0), (b, s1)) = sci_testkit::run2(
        move || {
            let mut p = pack(0);
            (f0(&mut p, &mut c0), c0.stats())
        },
        move || {
            let mut p = pack(1);
            (f1(&mut p, &mut c1), c1.stats())
        },
    );
    (a, b, s0, s1)
}

fn mem_pair() -> (Channel, Channel) {
    mem::pair(Some(Duration::from_secs(60)))
}

#[test]
fn one_of_n_from_log_n_random_ots() {
    let classes = [
        KkClass {
            n_msgs: 2,
            bits: 1,
            count: 5000,
        },
        KkClass {
            n_msgs: 3,
            bits: 7,
            count: 0,
        },
        KkClass {
            n_msgs: 4,
            bits: 2,
            count: 30_000,
        },
        KkClass {
            n_msgs: 16,
            bits: 8,
            count: 9000,
        },
        KkClass {
            n_msgs: 256,
            bits: 3,
            count: 700,
        },
        KkClass {
            n_msgs: 5,
            bits: 8,
            count: 33,
        },
    ];
    let mut g = test_prg("data", 2);
    let msgs: Vec<Vec<u8>> = classes
        .iter()
        .map(|k| {
            let mut m = vec![0u8; k.count * k.n_msgs];
            g.fill_bytes(&mut m);
            m.iter().map(|x| x & mask(k.bits) as u8).collect()
        })
        .collect();
    let choices: Vec<u8> = classes
        .iter()
        .flat_map(|k| {
            g.u64s(k.count)
                .into_iter()
                .map(|r| (r % k.n_msgs as u64) as u8)
        })
        .collect();
    // A warm-up takes the set-up's COTs, so the call starts an iteration
    // and straddles the next one.
    let warm = TEST_FERRET.first_available();
    let (d0, (got, d1), _, _) = run2(
        mem_pair(),
        |ot, ch| {
            ot.send_random_rot::<u8>(ch, warm, 1).expect("warm-up");
            let before = ch.stats();
            ot.send_kkot_classes(ch, &classes, |c, range, out: &mut [u8]| {
                let nm = classes[c].n_msgs;
                out.copy_from_slice(&msgs[c][range.start * nm..range.end * nm]);
            })
            .expect("send");
            ch.stats() - before
        },
        |ot, ch| {
            ot.recv_random_rot::<u8>(ch, warm, 1).expect("warm-up");
            let before = ch.stats();
            let got = ot
                .recv_kkot_classes::<u8>(ch, &classes, &choices)
                .expect("recv");
            (got, ch.stats() - before)
        },
    );
    let want: Vec<u8> = classes
        .iter()
        .enumerate()
        .flat_map(|(c, k)| (0..k.count).map(move |i| (c, k, i)))
        .zip(&choices)
        .map(|((c, k, i), &v)| msgs[c][i * k.n_msgs + v as usize])
        .collect();
    assert_eq!(got, want);
    // Σ count·⌈log₂ N⌉ = 5000 + 60,000 + 36,000 + 5600 + 99 random OTs in
    // two slices (an iteration's 60,800, then the rest): the receiver sends
    // one bit per OT per slice, the sender the iterations and, per slice,
    // the N messages of the instances whose last OT falls in it.
    let per_iter = TEST_FERRET.per_iteration();
    let (mut ots, mut answer) = (0usize, [0u64; 2]);
    for k in &classes {
        let l = ots_per_instance(k.n_msgs);
        for _ in 0..k.count {
            ots += l;
            answer[usize::from(ots > per_iter)] += (k.n_msgs as u64) * u64::from(k.bits);
        }
    }
    assert_eq!(ots, 106_699);
    let it = TEST_FERRET.main.iteration_bytes();
    assert_eq!(
        d1.bytes_sent,
        per_iter.div_ceil(8) as u64 + (ots - per_iter).div_ceil(8) as u64
    );
    assert_eq!(
        d0.bytes_sent,
        2 * it + answer[0].div_ceil(8) + answer[1].div_ceil(8)
    );
}

#[test]
fn derived_ot_bytes_are_the_cost_model() {
    // After the set-up, a call of m OTs sends exactly
    // `sci_ir::cost::ferret::derived` (its slices, the iterations between).
    for (m, bits) in [(10usize, 7u32), (50_000, 32), (130_000, 1)] {
        let x = test_prg("data", 3).ring_elems(m, bits);
        let c = test_prg("data", 4).bools(m);
        let (d0, d1, _, _) = run2(
            mem_pair(),
            |ot, ch| {
                ot.send_cot(ch, &[1], 1).expect("warm-up");
                let before = ch.stats();
                ot.send_cot(ch, &x, bits).expect("send");
                ch.stats() - before
            },
            |ot, ch| {
                ot.recv_cot(ch, &[true], 1).expect("warm-up");
                let before = ch.stats();
                ot.recv_cot(ch, &c, bits).expect("recv");
                ch.stats() - before
            },
        );
        // The set-up leaves boot.n − main.reserve COTs, the warm-up took one.
        let avail = TEST_FERRET.first_available() - 1;
        let t = derived(Role::P0, &TEST_FERRET, avail, m, u64::from(bits));
        assert_eq!(d0.bytes_sent, t.sent(Role::P0), "m={m}");
        assert_eq!(d1.bytes_sent, t.sent(Role::P1), "m={m}");
    }
}

#[test]
fn no_correlation_is_reused() {
    // Random OTs with random choices over three iterations and two calls:
    // every 128-bit pad is new, and each receiver's pad is its choice's.
    let (pads, (c, y), _, _) = run2(
        mem_pair(),
        |ot, ch| {
            let mut a = ot.send_random_rot::<u128>(ch, 100_000, 128).expect("a");
            a.extend(ot.send_random_rot::<u128>(ch, 90_000, 128).expect("b"));
            a
        },
        |ot, ch| {
            let (mut c, mut y) = ot.recv_random_rot::<u128>(ch, 100_000, 128).expect("a");
            let (c2, y2) = ot.recv_random_rot::<u128>(ch, 90_000, 128).expect("b");
            c.extend(c2);
            y.extend(y2);
            (c, y)
        },
    );
    let mut seen = HashSet::new();
    for (j, p) in pads.iter().enumerate() {
        assert_eq!(y[j], p[usize::from(c[j])]);
        assert!(seen.insert(p[0]) && seen.insert(p[1]), "pad {j} reused");
    }
    let ones = c.iter().filter(|&&b| b).count();
    assert!(
        (90_000..100_000).contains(&ones),
        "choices not random: {ones}"
    );
}

/// The silent engine does not run without the session's LPN seed: a typed
/// error before anything goes on the wire (IKNP needs none); a seed given
/// after the Ferret set-up is refused.
#[test]
fn the_silent_engine_needs_an_lpn_seed() {
    let (mut c0, _c1) = mem_pair();
    let mut ot = OtPack::new(test_prg("no-seed", 0), OtKind::Silent);
    assert!(ot.lpn_seed().is_none());
    let e = ot.send_random_rot::<u8>(&mut c0, 10, 1).unwrap_err();
    assert!(matches!(e, OtError::NoLpnSeed), "{e}");
    let e = ot.setup(&mut c0, Party::Server).unwrap_err();
    assert!(matches!(e, OtError::NoLpnSeed), "{e}");
    assert_eq!(c0.stats(), Stats::default(), "nothing sent");
    // Set up, a pack keeps its seed.
    run2(
        mem_pair(),
        |ot, ch| {
            ot.setup(ch, Party::Server).expect("setup");
            let e = ot.set_lpn_seed(Block(1)).unwrap_err();
            assert!(e.to_string().contains("after the Ferret set-up"), "{e}");
        },
        |ot, ch| ot.setup(ch, Party::Client).expect("setup"),
    );
}

#[test]
fn eager_setup_is_one_ferret_setup_per_direction() {
    // OtPack::setup: the server's pack as Ferret sender first, then as
    // receiver; a later call sets nothing up again.
    let (a, b, s0, s1) = run2(
        mem_pair(),
        |ot, ch| {
            ot.setup(ch, Party::Server).expect("setup");
            ot.setup(ch, Party::Server).expect("again: nothing");
            let before = ch.stats();
            ot.send_random_rot::<u8>(ch, 100, 1).expect("rot");
            ch.stats() - before
        },
        |ot, ch| {
            ot.setup(ch, Party::Client).expect("setup");
            ot.setup(ch, Party::Client).expect("again: nothing");
            let before = ch.stats();
            ot.recv_random_rot::<u8>(ch, 100, 1).expect("rot");
            ch.stats() - before
        },
    );
    let t = setup(Role::P0, &TEST_FERRET).then(setup(Role::P1, &TEST_FERRET));
    assert_eq!(s0.bytes_sent - a.bytes_sent, t.sent(Role::P0));
    assert_eq!(s1.bytes_sent - b.bytes_sent, t.sent(Role::P1));
    assert_eq!((a.bytes_sent, b.bytes_sent), (0, 0));
}

#[test]
fn batches_stream_in_one_round_across_iterations() {
    // After a warm-up, correlated OTs in batches over three iterations'
    // COTs: each party waits one round in all (the receiver streams its
    // pieces ahead, the iterations are announced ahead), and the bytes are
    // `derived_batches`' exactly.
    let widths = [[5u32], [32], [64]];
    let shapes = widths
        .each_ref()
        .map(|w| CotFields::new(w).expect("widths"));
    let batches = [5000usize, 0, 30_000, 40_000, 50_000, 1, 7];
    let n: usize = batches.iter().sum();
    let mut g = test_prg("data", 5);
    let x: Vec<u64> = (0..n)
        .map(|j| g.u64s(1)[0] & mask(widths[j % 3][0]))
        .collect();
    let c = g.bools(n);
    let warm = 1000;
    let ((r, d0), (v, d1), _, _) = run2(
        mem_pair(),
        |ot, ch| {
            ot.send_cot(ch, &vec![1; warm], 1).expect("warm-up");
            let before = ch.stats();
            let mut r = Vec::new();
            ot.send_cot_batches(
                ch,
                &batches,
                |j| shapes[j % 3],
                |j| std::slice::from_ref(&x[j]),
                |_, rj| r.extend_from_slice(rj),
            )
            .expect("send");
            (r, ch.stats() - before)
        },
        |ot, ch| {
            ot.recv_cot(ch, &vec![true; warm], 1).expect("warm-up");
            let before = ch.stats();
            let mut v = Vec::new();
            ot.recv_cot_batches(
                ch,
                &batches,
                |j| c[j],
                |j| shapes[j % 3],
                |_, vj| v.extend_from_slice(vj),
            )
            .expect("recv");
            (v, ch.stats() - before)
        },
    );
    for j in 0..n {
        let m = mask(widths[j % 3][0]);
        let want = r[j].wrapping_add(if c[j] { x[j] } else { 0 }) & m;
        assert_eq!(v[j], want, "instance {j}");
    }
    let avail = TEST_FERRET.first_available() - warm;
    assert!(n > avail + TEST_FERRET.per_iteration(), "three slices");
    let t = derived_batches(Role::P0, &TEST_FERRET, avail, &batches, |r| {
        r.map(|j| u64::from(widths[j % 3][0])).sum()
    });
    assert_eq!(d0.bytes_sent, t.sent(Role::P0));
    assert_eq!(d1.bytes_sent, t.sent(Role::P1));
    assert_eq!((d0.rounds, d1.rounds), (1, 1));
    // One batch: the pieces are the slices, as `derived`.
    let one = derived(Role::P0, &TEST_FERRET, avail, n, 32);
    let same = derived_batches(Role::P0, &TEST_FERRET, avail, &[n], |r| 32 * r.len() as u64);
    assert_eq!(one.flights(), same.flights());
}
