//! OT engine tests: both parties in two threads, over the in-memory channel and
//! TCP loopback; outputs checked against the functionality, communication and
//! rounds pinned to the documented formulas.

use std::time::Duration;

use sci_runtime::crypto::{Block, Prg};
use sci_runtime::net::tcp::{self, TcpConfig};
use sci_runtime::net::{Channel, Party, Stats, mem};
use sci_runtime::ot::{CotFields, KkClass, OtKind, OtPack, Session, cot_bits, kk_bits};
use sci_runtime::pack::mask;

const TIMEOUT: Option<Duration> = Some(Duration::from_secs(30));

/// IKNP set-up traffic: 128 Chou–Orlandi base OTs.
const IKNP_SETUP: u64 = 32 + 128 * 32;
/// KK set-up traffic: 256 base OTs.
const KK_SETUP: u64 = 32 + 256 * 32;

fn tcp_cfg() -> TcpConfig {
    TcpConfig {
        timeout: TIMEOUT,
        connect_timeout: Duration::from_secs(10),
        ..TcpConfig::default()
    }
}

fn mem_pair() -> (Channel, Channel) {
    mem::pair(TIMEOUT)
}

fn tcp_pair() -> (Channel, Channel) {
    tcp::loopback_pair(&tcp_cfg()).expect("loopback pair")
}

fn rng(seed: u128) -> Prg {
    Prg::new(Block(seed))
}

/// The generator for `(label, index)` under the test process's seed
/// ([`sci_testkit::seed`]: printed on failure, replayable with
/// `SCI_TEST_SEED`).
fn test_prg(label: &str, index: u64) -> Prg {
    Prg::derive(Block(sci_testkit::seed().into()), label, index)
}

/// The OT pack of party `p` (0 or 1), its set-ups drawing from the test seed.
fn pack(p: u64) -> OtPack {
    OtPack::new(test_prg("test-pack", p), OtKind::Iknp)
}

/// A session of `party` seeded from the test seed.
fn session(party: Party, chans: Vec<Channel>) -> Session {
    let p = u64::from(party == Party::Client);
    Session::with_seed(party, chans, test_prg("test-session", p).next_block())
}

/// Runs the two parties in two threads; returns their results and stats.
fn run2<A, B>(
    (mut c0, mut c1): (Channel, Channel),
    f0: impl FnOnce(&mut Channel) -> A + Send,
    f1: impl FnOnce(&mut Channel) -> B + Send,
) -> (A, B, Stats, Stats)
where
    A: Send,
    B: Send,
{
    let ((a, s0), (b, s1)) = sci_testkit::run2(
        move || (f0(&mut c0), c0.stats()),
        move || (f1(&mut c1), c1.stats()),
    );
    (a, b, s0, s1)
}

/// IKNP receiver-to-sender bytes of one batch.
fn iknp_u(n: u64) -> u64 {
    16 * n.next_multiple_of(8)
}

fn check_ot(pair: (Channel, Channel), n: usize, bits: u32, seed: u128) {
    let mut g = rng(seed);
    let m = mask(bits.min(64)) as u128
        | if bits > 64 {
            ((1u128 << (bits - 64)) - 1) << 64
        } else {
            0
        };
    let msgs: Vec<[u128; 2]> = (0..n)
        .map(|_| [g.next_block().0 & m, g.next_block().0 & m])
        .collect();
    let choices = g.bools(n);
    let (_, got, s0, s1) = run2(
        pair,
        |ch| {
            let mut p = pack(0);
            p.send_ot(ch, &msgs, bits).expect("send_ot");
        },
        |ch| {
            let mut p = pack(1);
            p.recv_ot::<u128>(ch, &choices, bits).expect("recv_ot")
        },
    );
    for ((mm, &c), o) in msgs.iter().zip(&choices).zip(&got) {
        assert_eq!(*o, mm[c as usize]);
    }
    let nn = n as u64;
    let setup = if n == 0 { 0 } else { IKNP_SETUP };
    let msg = if n == 0 {
        0
    } else {
        (2 * nn * bits as u64).div_ceil(8)
    };
    assert_eq!(
        s0.bytes(),
        setup + if n == 0 { 0 } else { iknp_u(nn) } + msg
    );
    assert_eq!(s0.bytes_sent, s1.bytes_recv);
    assert_eq!(s1.bytes_sent, s0.bytes_recv);
    if n > 0 {
        // Sender: one round (base-OT message, then u). Receiver: one for the
        // base OTs, one for the batch.
        assert_eq!((s0.rounds, s1.rounds), (1, 2));
    }
}

#[test]
fn chosen_ot_sizes_and_widths() {
    for (n, bits) in [
        (0usize, 8u32),
        (1, 1),
        (7, 64),
        ((1 << 10) + 1, 17),
        (3000, 128),
        (100, 73),
    ] {
        check_ot(mem_pair(), n, bits, n as u128 * 1000 + bits as u128);
    }
}

#[test]
fn chosen_ot_over_tcp() {
    check_ot(tcp_pair(), (1 << 10) + 1, 41, 7);
}

#[test]
fn random_ot_receiver_learns_only_its_message() {
    let n = 5000;
    let choices = rng(3).bools(n);
    let (pads, got, s0, _) = run2(
        mem_pair(),
        |ch| pack(0).send_rot::<u128>(ch, n, 128).expect("send_rot"),
        |ch| {
            pack(1)
                .recv_rot::<u128>(ch, &choices, 128)
                .expect("recv_rot")
        },
    );
    for ((p, &c), g) in pads.iter().zip(&choices).zip(&got) {
        assert_eq!(*g, p[c as usize]);
        assert_ne!(
            *g,
            p[1 - c as usize],
            "receiver's value equals the unchosen pad"
        );
    }
    assert_eq!(s0.bytes(), IKNP_SETUP + iknp_u(n as u64));
}

fn check_cot(pair: (Channel, Channel), n: usize, bits: u32) {
    let mut g = rng(bits as u128 + 77);
    let x = g.ring_elems(n, bits);
    let b = g.bools(n);
    let (r, y, s0, s1) = run2(
        pair,
        |ch| pack(0).send_cot(ch, &x, bits).expect("send_cot"),
        |ch| pack(1).recv_cot(ch, &b, bits).expect("recv_cot"),
    );
    let m = mask(bits);
    let mut differs = 0;
    for j in 0..n {
        assert_eq!(r[j] & !m, 0);
        assert_eq!(
            y[j],
            r[j].wrapping_add(if b[j] { x[j] } else { 0 }) & m,
            "j = {j}, bits = {bits}"
        );
        // The receiver does not learn the other output r + (1-b)·x.
        let other = r[j].wrapping_add(if b[j] { 0 } else { x[j] }) & m;
        differs += usize::from(other != y[j]);
    }
    if bits >= 8 {
        assert!(differs > n * 9 / 10);
    }
    assert_eq!(
        s0.bytes(),
        IKNP_SETUP + iknp_u(n as u64) + (n as u64 * bits as u64).div_ceil(8)
    );
    assert_eq!((s0.rounds, s1.rounds), (1, 2));
}

#[test]
fn cot_all_widths() {
    for bits in [1u32, 8, 31, 32, 37, 64] {
        check_cot(mem_pair(), (1 << 10) + 1, bits);
    }
}

#[test]
fn cot_over_tcp_large() {
    check_cot(tcp_pair(), 40_000, 32);
}

/// Correlated OT with per-instance payloads: one element, bit fields up to
/// 128 bits, and long vectors stretched by MMO (several elements of mixed
/// widths, and `k` elements of a per-instance width as in the OT-based
/// matrix product); outputs satisfy `v = r + c·Δ` elementwise and the bytes
/// are `λ/8·8⌈n/8⌉ + ⌈Σ W_j / 8⌉`.
#[test]
fn cot_with_layouts() {
    let tables: Vec<Vec<u32>> = vec![
        vec![1],
        vec![32, 1],
        vec![5, 17, 64],
        vec![64, 64],
        vec![64, 64, 1],
        vec![7; 9],
        vec![64; 9],
        vec![13; 64],
    ];
    let shapes: Vec<CotFields<'_>> = tables
        .iter()
        .map(|t| CotFields::new(t).expect("widths"))
        .collect();
    for n in [1usize, 8, 1001] {
        let mut g = rng(n as u128);
        let shape = |j: usize| shapes[(j * 7 + n) % shapes.len()];
        let corr: Vec<Vec<u64>> = (0..n)
            .map(|j| {
                let w = shape(j);
                w.fields().iter().map(|&b| g.u64s(1)[0] & mask(b)).collect()
            })
            .collect();
        let b = g.bools(n);
        let (r, v, s0, s1) = run2(
            mem_pair(),
            |ch| {
                let mut r = vec![Vec::new(); n];
                pack(0)
                    .send_cot_with(ch, n, shape, |j| &corr[j], |j, rj| r[j] = rj.to_vec())
                    .expect("send");
                r
            },
            |ch| {
                let mut v = vec![Vec::new(); n];
                pack(1)
                    .recv_cot_with(ch, n, |j| b[j], shape, |j, vj| v[j] = vj.to_vec())
                    .expect("recv");
                v
            },
        );
        let mut payload = 0u64;
        let mut differs = 0;
        for j in 0..n {
            let w = shape(j);
            payload += w.wire_bits() as u64;
            for (e, &wd) in w.fields().iter().enumerate() {
                let m = mask(wd);
                let want = r[j][e].wrapping_add(if b[j] { corr[j][e] } else { 0 }) & m;
                assert_eq!(v[j][e], want, "n {n} j {j} e {e}");
                assert_eq!(r[j][e] & !m, 0);
                differs += usize::from(wd >= 8 && r[j][e] != corr[j][e]);
            }
        }
        assert!(differs > 0 || n < 8);
        assert_eq!(
            s0.bytes(),
            IKNP_SETUP + iknp_u(n as u64) + payload.div_ceil(8)
        );
        assert_eq!(s0.bytes(), IKNP_SETUP + cot_bits(n, payload) / 8);
        assert_eq!((s0.rounds, s1.rounds), (1, 2));
    }
}

fn check_kk(pair: (Channel, Channel), n_msgs: usize, n: usize, bits: u32) {
    let mut g = rng((n_msgs * 1000 + bits as usize) as u128);
    let m = if bits == 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    };
    let msgs: Vec<u128> = (0..n * n_msgs).map(|_| g.next_block().0 & m).collect();
    let choices: Vec<u8> = (0..n)
        .map(|_| (g.next_block().lo() % n_msgs as u64) as u8)
        .collect();
    let (_, got, s0, s1) = run2(
        pair,
        |ch| {
            pack(0)
                .send_kkot(ch, n_msgs, &msgs, bits)
                .expect("send_kkot")
        },
        |ch| {
            pack(1)
                .recv_kkot::<u128>(ch, n_msgs, &choices, bits)
                .expect("recv_kkot")
        },
    );
    for (j, (&c, o)) in choices.iter().zip(&got).enumerate() {
        assert_eq!(*o, msgs[j * n_msgs + c as usize]);
    }
    if n > 0 {
        let nn = n as u64;
        assert_eq!(
            s0.bytes(),
            KK_SETUP + 32 * nn.next_multiple_of(8) + (nn * n_msgs as u64 * bits as u64).div_ceil(8)
        );
        assert_eq!((s0.rounds, s1.rounds), (1, 2));
    } else {
        assert_eq!(s0.bytes() + s1.bytes(), 0);
    }
}

#[test]
fn kkot_all_n_and_widths() {
    for n_msgs in [2usize, 4, 8, 16, 256] {
        for bits in [1u32, 2, 8, 64, 73, 128] {
            let n = if n_msgs == 256 { 33 } else { 257 };
            check_kk(mem_pair(), n_msgs, n, bits);
        }
    }
    check_kk(mem_pair(), 16, 0, 2);
    check_kk(mem_pair(), 3, 1, 5);
}

#[test]
fn kkot_over_tcp() {
    check_kk(tcp_pair(), 16, (1 << 10) + 1, 2);
}

#[test]
fn kkot_receiver_does_not_get_other_messages() {
    // With messages that are all distinct, the output matches only the chosen one.
    let (n_msgs, n, bits) = (16usize, 500usize, 64u32);
    let mut g = rng(99);
    let msgs: Vec<u64> = (0..n * n_msgs).map(|_| g.u64s(1)[0]).collect();
    let choices: Vec<u8> = (0..n).map(|j| (j % n_msgs) as u8).collect();
    let (_, got, _, _) = run2(
        mem_pair(),
        |ch| pack(0).send_kkot(ch, n_msgs, &msgs, bits).expect("send"),
        |ch| {
            pack(1)
                .recv_kkot::<u64>(ch, n_msgs, &choices, bits)
                .expect("recv")
        },
    );
    for (j, o) in got.iter().enumerate() {
        let hits: Vec<usize> = (0..n_msgs)
            .filter(|&v| msgs[j * n_msgs + v] == *o)
            .collect();
        assert_eq!(hits, vec![choices[j] as usize]);
    }
}

/// Several classes `(N, ℓ)` in one 1-of-N call: one round for the receiver,
/// `kk_bits` bytes, and the chosen messages of every class.
#[test]
fn kkot_several_classes_in_one_call() {
    let classes = [
        KkClass {
            n_msgs: 16,
            bits: 2,
            count: 1001,
        },
        KkClass {
            n_msgs: 8,
            bits: 1,
            count: 0,
        },
        KkClass {
            n_msgs: 4,
            bits: 61,
            count: 77,
        },
        KkClass {
            n_msgs: 256,
            bits: 8,
            count: 5,
        },
        KkClass {
            n_msgs: 3,
            bits: 5,
            count: 20_000,
        },
    ];
    let mut g = rng(42);
    let msgs: Vec<Vec<u64>> = classes
        .iter()
        .map(|c| {
            (0..c.count * c.n_msgs)
                .map(|_| g.u64s(1)[0] & mask(c.bits))
                .collect()
        })
        .collect();
    let choices: Vec<u8> = classes
        .iter()
        .flat_map(|c| (0..c.count).map(|j| (j * 7 % c.n_msgs) as u8))
        .collect();
    let mut calls = Vec::new();
    let (_, got, s0, s1) = run2(
        tcp_pair(),
        |ch| {
            pack(0)
                .send_kkot_classes(ch, &classes, |c, range, out: &mut [u64]| {
                    let nm = classes[c].n_msgs;
                    calls.push((c, range.clone()));
                    out.copy_from_slice(&msgs[c][range.start * nm..range.end * nm]);
                })
                .expect("send")
        },
        |ch| {
            pack(1)
                .recv_kkot_classes::<u64>(ch, &classes, &choices)
                .expect("recv")
        },
    );
    let mut j = 0;
    for (c, cl) in classes.iter().enumerate() {
        for i in 0..cl.count {
            assert_eq!(
                got[j],
                msgs[c][i * cl.n_msgs + choices[j] as usize],
                "class {c}"
            );
            j += 1;
        }
    }
    // The writer saw every instance once, in order, class by class.
    let mut next = vec![0usize; classes.len()];
    let mut last = 0;
    for (c, r) in &calls {
        assert!(*c >= last && r.start == next[*c] && !r.is_empty());
        next[*c] = r.end;
        last = *c;
    }
    assert_eq!(next, classes.iter().map(|c| c.count).collect::<Vec<_>>());
    assert_eq!(s0.bytes(), KK_SETUP + kk_bits(&classes) / 8);
    assert_eq!((s0.rounds, s1.rounds), (1, 2));
}

/// Several batches in both directions and families on one pack: set-ups happen
/// once per family and direction, and rounds add up as documented.
#[test]
fn pack_reuse_both_directions() {
    let n = 300usize;
    let x: Vec<u64> = rng(5).ring_elems(n, 32);
    let b = rng(6).bools(n);
    let kch: Vec<u8> = (0..n).map(|j| (j % 4) as u8).collect();
    let kmsgs: Vec<u8> = (0..4 * n).map(|i| (i % 3) as u8).collect();
    let ((r1, r2, y3), (y1, y2, r3), s0, s1) = run2(
        mem_pair(),
        |ch| {
            let mut p = pack(0);
            let r1 = p.send_cot(ch, &x, 32).expect("a");
            let r2 = p.send_cot(ch, &x, 32).expect("b");
            let y3 = p.recv_cot(ch, &b, 32).expect("c");
            p.send_kkot(ch, 4, &kmsgs, 2).expect("d");
            (r1, r2, y3)
        },
        |ch| {
            let mut p = pack(1);
            let y1 = p.recv_cot(ch, &b, 32).expect("a");
            let y2 = p.recv_cot(ch, &b, 32).expect("b");
            let r3 = p.send_cot(ch, &x, 32).expect("c");
            let k = p.recv_kkot::<u8>(ch, 4, &kch, 2).expect("d");
            for (j, v) in k.iter().enumerate() {
                assert_eq!(*v, kmsgs[4 * j + kch[j] as usize]);
            }
            (y1, y2, r3)
        },
    );
    let m = mask(32);
    for j in 0..n {
        let bx = if b[j] { x[j] } else { 0 };
        assert_eq!(y1[j], r1[j].wrapping_add(bx) & m);
        assert_eq!(y2[j], r2[j].wrapping_add(bx) & m);
        assert_eq!(y3[j], r3[j].wrapping_add(bx) & m);
        // Fresh correlations: the two batches give unrelated pads.
        assert!(r1[j] != r2[j] || j > 0 && r1[j - 1] != r2[j - 1]);
    }
    let nn = n as u64;
    let cot = iknp_u(nn) + nn * 4;
    let kk = 32 * nn.next_multiple_of(8) + nn * 4 * 2 / 8;
    assert_eq!(s0.bytes(), 2 * IKNP_SETUP + 3 * cot + KK_SETUP + kk);
    assert_eq!(s0.bytes(), s1.bytes());
    // P0: recv u after its base-OT message (1), recv u after d (2), recv B
    // after A (3), recv d after u (4), [recv A: nothing sent since] recv u
    // after its KK base-OT message (5).
    // P1: recv B after A (1), recv d (2), recv d (3), [recv A], recv u after
    // its base-OT message (4), recv B after A (5), recv c after u (6).
    assert_eq!((s0.rounds, s1.rounds), (5, 6));
}

#[test]
fn session_results_independent_of_threads() {
    let n = 2001usize;
    let bits = 37;
    let x = rng(11).ring_elems(n, bits);
    let b = rng(12).bools(n);
    let m = mask(bits);
    let mut prev: Option<Vec<u64>> = None;
    for t in [1usize, 2, 3] {
        let (c0, c1) = mem::pairs(t, TIMEOUT);
        let mut s0 = session(Party::Server, c0);
        let mut s1 = session(Party::Client, c1);
        // Each party holds x (as sender) or b (as receiver) per chunk role;
        // the reconstructed value r_s + r_r - r_s... is b·x in every chunk.
        let party = |s: &mut Session| -> Vec<(bool, Vec<u64>)> {
            s.run(n, |c| {
                let out = if c.sender {
                    c.lane
                        .ot
                        .send_cot(&mut c.lane.ch, &x[c.range.clone()], bits)
                } else {
                    c.lane
                        .ot
                        .recv_cot(&mut c.lane.ch, &b[c.range.clone()], bits)
                };
                out.map(|v| (c.sender, v))
            })
            .expect("session run")
        };
        let (o0, o1) = sci_testkit::run2(|| party(&mut s0), || party(&mut s1));
        let mut bx = Vec::with_capacity(n);
        for ((snd0, v0), (snd1, v1)) in o0.iter().zip(&o1) {
            assert_ne!(snd0, snd1);
            let (r, y) = if *snd0 { (v0, v1) } else { (v1, v0) };
            bx.extend(r.iter().zip(y).map(|(r, y)| y.wrapping_sub(*r) & m));
        }
        let expect: Vec<u64> = x
            .iter()
            .zip(&b)
            .map(|(x, b)| if *b { *x } else { 0 })
            .collect();
        assert_eq!(bx, expect, "t = {t}");
        if let Some(p) = &prev {
            assert_eq!(p, &bx);
        }
        prev = Some(bx);
        assert_eq!(s0.threads(), t);
        assert!(s0.stats().bytes_sent > 0 && s1.stats().bytes_sent > 0);
    }
}

#[test]
fn invalid_arguments_are_errors() {
    let (mut a, _b) = mem_pair();
    let mut p = pack(0);
    assert!(p.send_cot(&mut a, &[1], 65).is_err());
    assert!(p.send_cot(&mut a, &[1], 0).is_err());
    assert!(p.send_ot::<u8>(&mut a, &[[1, 2]], 9).is_err());
    assert!(p.recv_kkot::<u8>(&mut a, 1, &[0], 2).is_err());
    assert!(p.recv_kkot::<u8>(&mut a, 4, &[4], 2).is_err());
    assert!(p.send_kkot::<u8>(&mut a, 257, &[0; 257], 2).is_err());
    assert!(CotFields::<u32>::new(&[]).is_err());
    assert!(CotFields::new(&[8, 65]).is_err());
    assert!(CotFields::new(&[8, 0]).is_err());
    let bad = [KkClass {
        n_msgs: 4,
        bits: 2,
        count: 2,
    }];
    assert!(p.recv_kkot_classes::<u8>(&mut a, &bad, &[1]).is_err());
    assert!(p.recv_kkot_classes::<u8>(&mut a, &bad, &[1, 4]).is_err());
    assert_eq!(a.stats(), Stats::default());
}

#[test]
fn peer_disconnect_is_an_error() {
    let (c0, c1) = mem_pair();
    drop(c1);
    let mut c0 = c0;
    let e = pack(0)
        .send_cot(&mut c0, &[1, 2, 3], 8)
        .expect_err("peer gone");
    assert!(e.to_string().contains("receiving"), "{e}");
    // Over TCP, a peer that quits in the middle of a batch.
    let (c0, c1) = tcp_pair();
    let (r0, _, _, _) = run2(
        (c0, c1),
        |ch| pack(0).send_cot(ch, &[1u64; 100], 8).map(drop),
        |ch| {
            // Act as the base-OT sender, then vanish.
            ch.send(&[0u8; 32]).expect("send");
            ch.flush().expect("flush");
        },
    );
    let e = r0.expect_err("should fail");
    assert!(
        matches!(
            e,
            sci_runtime::ot::OtError::Protocol(_) | sci_runtime::ot::OtError::Net(_)
        ),
        "{e}"
    );
}

#[test]
fn session_setup_then_no_more_base_ots() {
    let (c0, c1) = mem::pairs(2, TIMEOUT);
    let mut s0 = session(Party::Server, c0);
    let mut s1 = session(Party::Client, c1);
    let n = 100usize;
    let x = rng(1).ring_elems(n, 16);
    let b = rng(2).bools(n);
    let work = |s: &mut Session| {
        s.setup().expect("setup");
        let after_setup = s.stats();
        s.run(n, |c| {
            if c.sender {
                c.lane.ot.send_cot(&mut c.lane.ch, &x[c.range.clone()], 16)
            } else {
                c.lane.ot.recv_cot(&mut c.lane.ch, &b[c.range.clone()], 16)
            }
        })
        .expect("run");
        (after_setup, s.stats())
    };
    let ((a0, z0), (a1, z1)) = sci_testkit::run2(|| work(&mut s0), || work(&mut s1));
    let setup_per_lane = 2 * IKNP_SETUP + 2 * KK_SETUP;
    assert_eq!(a0.bytes_sent + a1.bytes_sent, 2 * setup_per_lane);
    // Two chunks of 50 COT_16, no further set-up.
    let batch = iknp_u(50) + (50 * 16u64).div_ceil(8);
    assert_eq!((z0 - a0).bytes_sent + (z1 - a1).bytes_sent, 2 * batch);
}
