//! The contract's test suite: the same test functions, generic over an
//! engine ([`Engine`]), instantiated once per engine ([`suite!`]). Each runs
//! both parties in two threads and checks every derived OT against its
//! functionality, over calls that straddle Ferret's iterations (the small
//! LPN set [`TEST_FERRET`]), with several batches both in order and
//! pipelined (TCP loopback), and that nothing is sent for nothing. The
//! engines' exact bytes and rounds are pinned apart, against the cost
//! model (`tests/ot.rs`, `tests/silent.rs`, `tests/ferret.rs`).

use std::time::Duration;

use super::{CorrelatedReceiver, CorrelatedSender, CotFields};
use crate::KkClass;
use crate::Modulus;
use crate::ferret::{FerretReceiver, FerretSender, TEST_FERRET};
use crate::iknp::{IknpReceiver, IknpSender};
use sci_net::crypto::{Block, Prg};
use sci_net::pack::mask;
use sci_net::{Channel, Stats, Transport, mem, tcp};

/// An engine under test: how each party opens its state on a channel.
trait Engine {
    type S: CorrelatedSender;
    type R: CorrelatedReceiver;
    fn sender(ch: &mut Channel, prg: Prg) -> Self::S;
    fn receiver(ch: &mut Channel, prg: Prg) -> Self::R;
}

struct Iknp;

impl Engine for Iknp {
    type S = IknpSender;
    type R = IknpReceiver;
    fn sender(ch: &mut Channel, mut prg: Prg) -> IknpSender {
        IknpSender::setup(ch, &mut prg).expect("IKNP set-up")
    }
    fn receiver(ch: &mut Channel, mut prg: Prg) -> IknpReceiver {
        IknpReceiver::setup(ch, &mut prg).expect("IKNP set-up")
    }
}

struct Ferret;

impl Engine for Ferret {
    type S = FerretSender;
    type R = FerretReceiver;
    fn sender(_: &mut Channel, prg: Prg) -> FerretSender {
        FerretSender::new(TEST_FERRET, lpn_seed(), prg).expect("TEST_FERRET chains")
    }
    fn receiver(_: &mut Channel, prg: Prg) -> FerretReceiver {
        FerretReceiver::new(TEST_FERRET, lpn_seed(), prg).expect("TEST_FERRET chains")
    }
}

/// The LPN seed of the Ferret pairs (the same on both sides, fresh per test
/// process).
fn lpn_seed() -> Block {
    test_prg("suite-lpn", 0).next_block()
}

fn test_prg(label: &str, index: u64) -> Prg {
    Prg::derive(Block(sci_testkit::seed().into()), label, index)
}

fn mem_pair() -> (Channel, Channel) {
    mem::pair(Some(Duration::from_secs(60)))
}

fn tcp_pair() -> (Channel, Channel) {
    tcp::loopback_pair(&tcp::TcpConfig {
        timeout: Some(Duration::from_secs(60)),
        ..tcp::TcpConfig::default()
    })
    .expect("loopback")
}

/// A transport that cannot write while a read waits (as TLS), over an
/// in-memory channel: a call's batches run in order, a round each.
struct InOrder(Channel);

impl Transport for InOrder {
    fn write_all(&mut self, data: &[u8]) -> std::io::Result<()> {
        self.0.send(data).map_err(std::io::Error::other)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush().map_err(std::io::Error::other)
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> std::io::Result<()> {
        self.0.recv(buf).map_err(std::io::Error::other)
    }
}

/// Two connected channels over [`InOrder`] transports.
fn in_order_pair() -> (Channel, Channel) {
    let (a, b) = mem_pair();
    let wrap = |c| Channel::new(Box::new(InOrder(c)));
    (wrap(a), wrap(b))
}

/// Runs `f0` on engine `E`'s sender and `f1` on its receiver over `pair`,
/// in two threads; returns their results and the channels' statistics.
fn run2<E: Engine, A: Send, B: Send>(
    (mut c0, mut c1): (Channel, Channel),
    f0: impl FnOnce(&mut E::S, &mut Channel) -> A + Send,
    f1: impl FnOnce(&mut E::R, &mut Channel, &mut Prg) -> B + Send,
) -> (A, B, Stats, Stats) {
    let ((a, s0), (b, s1)) = sci_testkit::run2(
        move || {
            let mut s = E::sender(&mut c0, test_prg("suite-engine", 0));
            (f0(&mut s, &mut c0), c0.stats())
        },
        move || {
            let mut g = test_prg("suite-engine", 1);
            let mut r = E::receiver(&mut c1, g.fork());
            (f1(&mut r, &mut c1, &mut g), c1.stats())
        },
    );
    (a, b, s0, s1)
}

/// Chosen-message OT and random OT with chosen choices: the receiver gets
/// the chosen message, not the other; widths 1 to 128.
fn chosen_and_random_ots<E: Engine>() {
    let mut g = test_prg("suite-data", 0);
    let sizes = [
        (1usize, 1u32),
        (1000, 2),
        (30_000, 37),
        (3000, 64),
        (40_000, 128),
    ];
    let data: Vec<_> = sizes
        .iter()
        .map(|&(n, bits)| {
            let m = mask(bits.min(64)) as u128 | if bits > 64 { u128::MAX << 64 } else { 0 };
            let msgs: Vec<[u128; 2]> = (0..n)
                .map(|_| [g.next_block().0 & m, g.next_block().0 & m])
                .collect();
            (n, bits, msgs, g.bools(n))
        })
        .collect();
    let (sent, got, _, _) = run2::<E, _, _>(
        mem_pair(),
        |s, ch| {
            data.iter()
                .map(|(n, bits, msgs, _)| {
                    s.send_ot(ch, msgs, *bits).expect("send_ot");
                    s.send_rot::<u128>(ch, *n, *bits).expect("send_rot")
                })
                .collect::<Vec<_>>()
        },
        |r, ch, _| {
            data.iter()
                .map(|(_, bits, _, c)| {
                    let ot = r.recv_ot::<u128>(ch, c, *bits).expect("recv_ot");
                    (ot, r.recv_rot::<u128>(ch, c, *bits).expect("recv_rot"))
                })
                .collect::<Vec<_>>()
        },
    );
    for (((n, bits, msgs, c), rot), (ot, rot_r)) in data.iter().zip(&sent).zip(&got) {
        for j in 0..*n {
            let b = usize::from(c[j]);
            assert_eq!(ot[j], msgs[j][b], "OT n={n} bits={bits} j={j}");
            assert_eq!(rot_r[j], rot[j][b], "ROT n={n} bits={bits} j={j}");
            assert!(*bits < 64 || rot_r[j] != rot[j][1 - b], "ROT n={n} j={j}");
        }
    }
}

/// Random OT with random choices: the receiver's messages are the ones
/// its choices select, and the choices are not constant.
fn random_choice_ots<E: Engine>() {
    let (sent, (c, got), _, _) = run2::<E, _, _>(
        mem_pair(),
        |s, ch| {
            let mut all = s.send_random_rot::<u64>(ch, 50_000, 64).expect("send");
            all.extend(s.send_random_rot::<u64>(ch, 30_000, 20).expect("send"));
            all
        },
        |r, ch, g| {
            let (mut c, mut y) = r.recv_random_rot::<u64>(ch, 50_000, 64, g).expect("recv");
            let (c2, y2) = r.recv_random_rot::<u64>(ch, 30_000, 20, g).expect("recv");
            c.extend(c2);
            y.extend(y2);
            (c, y)
        },
    );
    assert_eq!((c.len(), got.len(), sent.len()), (80_000, 80_000, 80_000));
    for (j, ((&cj, &y), pair)) in c.iter().zip(&got).zip(&sent).enumerate() {
        assert_eq!(y, pair[usize::from(cj)], "OT {j}");
        // The other message differs (only checked at 64 bits: two 20-bit messages
        // collide with probability 2^-20, i.e. somewhere in 30,000 OTs about 3% of runs).
        if j < 50_000 {
            assert_ne!(y, pair[usize::from(!cj)], "OT {j}");
        }
    }
    let ones = c.iter().filter(|&&b| b).count();
    assert!(
        (35_000..45_000).contains(&ones),
        "{ones} choices of 1 in 80,000"
    );
}

/// Correlated OT over `Z_{2^ℓ}` for every width: `v = r + c·x`.
fn correlated_ots_every_width<E: Engine>() {
    let mut g = test_prg("suite-data", 1);
    let data: Vec<_> = (1..=64u32)
        .map(|bits| {
            let n = 300 + 17 * bits as usize;
            (bits, g.ring_elems(n, bits), g.bools(n))
        })
        .collect();
    let (rs, vs, _, _) = run2::<E, _, _>(
        mem_pair(),
        |s, ch| {
            data.iter()
                .map(|(bits, x, _)| s.send_cot(ch, x, *bits).expect("send_cot"))
                .collect::<Vec<_>>()
        },
        |r, ch, _| {
            data.iter()
                .map(|(bits, _, c)| r.recv_cot(ch, c, *bits).expect("recv_cot"))
                .collect::<Vec<_>>()
        },
    );
    for ((bits, x, c), (r, v)) in data.iter().zip(rs.iter().zip(&vs)) {
        for j in 0..x.len() {
            let want = r[j].wrapping_add(x[j] * u64::from(c[j])) & mask(*bits);
            assert_eq!(v[j], want, "COT bits={bits} j={j}");
        }
    }
}

/// Correlated OT in several batches with mixed payloads (an element of
/// `Z_{2^5}`, of `Z_{2^64}`, of an odd `Z_n`, and 40 of `Z_{2^61}`, whose
/// pads are stretched) over `pair`: in order ([`InOrder`]) or pipelined
/// (a full-duplex channel). Returns the receiver's rounds.
fn correlated_batches<E: Engine>(pair: (Channel, Channel)) -> u64 {
    let mut rings = vec![Modulus::Pow2(5), Modulus::Pow2(64), Modulus::Odd(1_000_003)];
    rings.extend([Modulus::Pow2(61); 40]);
    let (wide, narrow) = (
        CotFields::new(&rings).expect("fields"),
        CotFields::new(&rings[..3]).expect("fields"),
    );
    let fields = |j: usize| if j.is_multiple_of(3) { wide } else { narrow };
    let batches = [0usize, 17, 25_000, 0, 40_000, 1];
    let n: usize = batches.iter().sum();
    let mut g = test_prg("suite-data", 2);
    let k = rings.len();
    let corr: Vec<u64> = (0..n)
        .flat_map(|_| {
            rings
                .iter()
                .map(|r| r.random(&mut g, 1)[0])
                .collect::<Vec<_>>()
        })
        .collect();
    let c = g.bools(n);
    let (r, v, _, s1) = run2::<E, _, _>(
        pair,
        |s, ch| {
            let mut r = vec![Vec::new(); n];
            s.send_cot_batches(
                ch,
                &batches,
                fields,
                |j| &corr[k * j..k * j + k],
                |j, rj| r[j] = rj.to_vec(),
            )
            .expect("send");
            r
        },
        |rc, ch, _| {
            let mut v = vec![Vec::new(); n];
            rc.recv_cot_batches(ch, &batches, |j| c[j], fields, |j, vj| v[j] = vj.to_vec())
                .expect("recv");
            v
        },
    );
    for j in 0..n {
        let len = fields(j).fields().len();
        assert_eq!((r[j].len(), v[j].len()), (len, len), "instance {j}");
        for (e, ring) in rings[..len].iter().enumerate() {
            let add = if c[j] { corr[k * j + e] } else { 0 };
            assert_eq!(v[j][e], ring.add(r[j][e], add), "instance {j} element {e}");
        }
    }
    s1.rounds
}

/// `(N 1)`-OT in several classes from `⌈log₂ N⌉` random OTs each.
fn one_of_n<E: Engine>() {
    let class = |n_msgs, bits, count| KkClass {
        n_msgs,
        bits,
        count,
    };
    let classes = [
        class(2, 1, 5000),
        class(3, 7, 0),
        class(4, 2, 20_000),
        class(256, 3, 700),
        class(5, 8, 33),
    ];
    let mut g = test_prg("suite-data", 3);
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
    let (_, got, _, _) = run2::<E, _, _>(
        mem_pair(),
        |s, ch| {
            s.send_classes(ch, &classes, |c, range, out: &mut [u8]| {
                let nm = classes[c].n_msgs;
                out.copy_from_slice(&msgs[c][range.start * nm..range.end * nm]);
            })
            .expect("send")
        },
        |r, ch, _| r.recv_classes::<u8>(ch, &classes, &choices).expect("recv"),
    );
    let want: Vec<u8> = classes
        .iter()
        .enumerate()
        .flat_map(|(c, k)| (0..k.count).map(move |i| (c, k, i)))
        .zip(&choices)
        .map(|((c, k, i), &v)| msgs[c][i * k.n_msgs + v as usize])
        .collect();
    assert_eq!(got, want);
}

/// Calls of no OTs send nothing (after the engine's set-up), and bad
/// widths are typed errors before any traffic.
fn nothing_for_nothing<E: Engine>() {
    let (a, b, s0, s1) = run2::<E, _, _>(
        mem_pair(),
        |s, ch| {
            let before = ch.stats();
            s.send_ot::<u8>(ch, &[], 8).expect("ot");
            s.send_rot::<u8>(ch, 0, 8).expect("rot");
            s.send_random_rot::<u8>(ch, 0, 8).expect("random rot");
            s.send_cot(ch, &[], 8).expect("cot");
            let f = CotFields::new(&[3u32]).expect("fields");
            s.send_cot_batches(ch, &[0, 0], |_| f, |_| &[], |_, _| ())
                .expect("batches");
            s.send_classes::<u8>(ch, &[], |_, _, _| ())
                .expect("classes");
            assert!(s.send_cot(ch, &[1], 65).is_err());
            assert!(s.send_rot::<u8>(ch, 1, 9).is_err());
            ch.stats() - before
        },
        |r, ch, g| {
            let before = ch.stats();
            r.recv_ot::<u8>(ch, &[], 8).expect("ot");
            r.recv_rot::<u8>(ch, &[], 8).expect("rot");
            r.recv_random_rot::<u8>(ch, 0, 8, g).expect("random rot");
            r.recv_cot(ch, &[], 8).expect("cot");
            let f = CotFields::new(&[3u32]).expect("fields");
            r.recv_cot_batches(ch, &[0, 0], |_| false, |_| f, |_, _| ())
                .expect("batches");
            r.recv_classes::<u8>(ch, &[], &[]).expect("classes");
            assert!(r.recv_cot(ch, &[true], 65).is_err());
            ch.stats() - before
        },
    );
    assert_eq!((a.bytes(), b.bytes()), (0, 0));
    assert_eq!(s0.bytes_sent, s1.bytes_recv);
}

/// The suite's tests for each engine, in a module named after it.
macro_rules! suite {
    ($($module:ident: $engine:ty),*) => {$(
        mod $module {
            #[test]
            fn chosen_and_random_ots() {
                super::chosen_and_random_ots::<$engine>()
            }
            #[test]
            fn random_choice_ots() {
                super::random_choice_ots::<$engine>()
            }
            #[test]
            fn correlated_ots_every_width() {
                super::correlated_ots_every_width::<$engine>()
            }
            /// In order, a round per non-empty batch (4); pipelined, one
            /// for them all.
            #[test]
            fn correlated_batches_in_order_and_pipelined() {
                let in_order = super::correlated_batches::<$engine>(super::in_order_pair());
                let pipelined = super::correlated_batches::<$engine>(super::mem_pair());
                assert!(in_order >= pipelined + 3, "{in_order} vs {pipelined} rounds");
            }
            #[test]
            fn correlated_batches_pipelined_over_tcp() {
                super::correlated_batches::<$engine>(super::tcp_pair());
            }
            #[test]
            fn one_of_n() {
                super::one_of_n::<$engine>()
            }
            #[test]
            fn nothing_for_nothing() {
                super::nothing_for_nothing::<$engine>()
            }
        }
    )*};
}

suite!(iknp: super::Iknp, ferret: super::Ferret);
