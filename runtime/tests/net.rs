//! Channel tests: typed helpers, counters, and failures (disconnect, short
//! data, timeouts) over both transports — errors, never hangs.

use std::io::ErrorKind;
use std::time::{Duration, Instant};

use sci_runtime::crypto::Block;
use sci_runtime::net::tcp::{self, TcpConfig};
use sci_runtime::net::{Channel, Inbox, Outbox, mem};

fn cfg(timeout_ms: u64) -> TcpConfig {
    TcpConfig {
        timeout: Some(Duration::from_millis(timeout_ms)),
        connect_timeout: Duration::from_secs(5),
        ..TcpConfig::default()
    }
}

fn pairs(timeout_ms: u64) -> Vec<(&'static str, Channel, Channel)> {
    let (a, b) = mem::pair(Some(Duration::from_millis(timeout_ms)));
    let (c, d) = tcp::loopback_pair(&cfg(timeout_ms)).expect("tcp pair");
    vec![("mem", a, b), ("tcp", c, d)]
}

#[test]
fn typed_helpers_roundtrip_and_count() {
    for (name, mut a, mut b) in pairs(10_000) {
        let vals: Vec<u64> = (0..1000u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        let bits: Vec<bool> = (0..77).map(|i| i % 5 == 0).collect();
        let blocks = vec![Block(1), Block(u128::MAX), Block(42 << 100)];
        let h = std::thread::spawn(move || {
            let v = b.recv_u64s(1000, 37).expect("u64s");
            let bl = b.recv_blocks(3).expect("blocks");
            let bi = b.recv_bits(77).expect("bits");
            b.send(&[9]).expect("reply");
            b.flush().expect("flush");
            (v, bl, bi, b.stats())
        });
        a.send_u64s(&vals, 37).expect("send");
        a.send_blocks(&blocks).expect("send");
        a.send_bits(&bits).expect("send");
        let mut reply = [0u8];
        a.recv(&mut reply).expect("reply");
        let (v, bl, bi, sb) = h.join().expect("thread");
        for (x, y) in vals.iter().zip(&v) {
            assert_eq!(x & ((1 << 37) - 1), *y, "{name}");
        }
        assert_eq!(bl, blocks);
        assert_eq!(bi, bits);
        let expect = (1000 * 37u64).div_ceil(8) + 48 + 10;
        assert_eq!(a.stats().bytes_sent, expect, "{name}");
        assert_eq!(sb.bytes_recv, expect, "{name}");
        assert_eq!((a.stats().rounds, sb.rounds), (1, 0), "{name}");
    }
}

#[test]
fn duplex_pipeline_costs_one_round_and_never_deadlocks() {
    // 16 messages of 4 MiB each way, far beyond TCP's socket buffers: one
    // side sends all its messages ahead from one thread and reads the answers
    // from another, the other answers each message once read.
    const N: usize = 16;
    const LEN: usize = 4 << 20;
    for (name, mut a, mut b) in pairs(30_000) {
        assert!(a.full_duplex() && b.full_duplex(), "{name}");
        let h = std::thread::spawn(move || {
            b.streamed(|b| {
                let mut m = vec![0u8; LEN];
                for i in 0..N {
                    b.recv(&mut m).expect("message");
                    assert!(m.iter().all(|&v| v == i as u8));
                    b.send(&vec![!(i as u8); LEN]).expect("answer");
                }
                b.flush().expect("flush");
            });
            b.stats()
        });
        let answers = a
            .duplex(|tx, rx| {
                std::thread::scope(|s| {
                    s.spawn(|| {
                        for i in 0..N {
                            tx.send(&vec![i as u8; LEN]).expect("send");
                        }
                        tx.flush().expect("flush");
                    });
                    let mut m = vec![0u8; LEN];
                    (0..N)
                        .map(|_| {
                            rx.recv(&mut m).expect("answer");
                            m[0]
                        })
                        .collect::<Vec<u8>>()
                })
            })
            .expect("duplex")
            .expect("full duplex");
        let sb = h.join().expect("thread");
        assert_eq!(
            answers,
            (0..N as u8).map(|i| !i).collect::<Vec<_>>(),
            "{name}"
        );
        let total = (N * LEN) as u64;
        assert_eq!(
            (a.stats().bytes_sent, a.stats().bytes_recv),
            (total, total),
            "{name}"
        );
        // One round for the pipelining side, none for the answering side,
        // which had not sent before its first receive.
        assert_eq!((a.stats().rounds, sb.rounds), (1, 0), "{name}");
    }
}

#[test]
fn both_sides_send_large_then_read_in_memory() {
    // The in-memory pipe is unbounded: no deadlock.
    let (mut a, mut b) = mem::pair(Some(Duration::from_secs(10)));
    let big = vec![7u8; 8 << 20];
    let big2 = big.clone();
    let h = std::thread::spawn(move || {
        b.send(&big2).expect("send");
        b.flush().expect("flush");
        b.recv_vec(8 << 20).expect("recv")
    });
    a.send(&big).expect("send");
    a.flush().expect("flush");
    let got = a.recv_vec(8 << 20).expect("recv");
    assert_eq!(got, big);
    assert_eq!(h.join().expect("thread"), big);
}

#[test]
fn disconnect_is_unexpected_eof() {
    for (name, mut a, b) in pairs(10_000) {
        drop(b);
        let mut buf = [0u8; 4];
        let e = a.recv(&mut buf).expect_err(name);
        assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "{name}: {e}");
    }
}

#[test]
fn short_data_is_unexpected_eof() {
    for (name, mut a, mut b) in pairs(10_000) {
        b.send(&[1, 2, 3]).expect("send");
        b.flush().expect("flush");
        drop(b);
        let mut buf = [0u8; 8];
        let e = a.recv(&mut buf).expect_err(name);
        assert_eq!(e.kind(), ErrorKind::UnexpectedEof, "{name}: {e}");
        assert!(e.to_string().contains("receiving 8 bytes"), "{e}");
    }
}

#[test]
fn silent_peer_times_out() {
    for (name, mut a, b) in pairs(200) {
        let t = Instant::now();
        let mut buf = [0u8; 1];
        let e = a.recv(&mut buf).expect_err(name);
        assert_eq!(e.kind(), ErrorKind::TimedOut, "{name}: {e}");
        assert!(t.elapsed() < Duration::from_secs(5));
        drop(b);
    }
}

#[test]
fn connect_retries_until_listener_appears_and_many_connections_pair_up() {
    // Reserve a free port, release it, connect before the listener exists.
    let port = tcp::listen("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let addr = format!("127.0.0.1:{port}");
    let a2 = addr.clone();
    let h = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        let l = tcp::listen(a2).expect("listen");
        tcp::accept_many(&l, 3, &cfg(10_000)).expect("accept")
    });
    let mut cons = tcp::connect_many(addr, 3, &cfg(10_000)).expect("connect");
    let mut accs = h.join().expect("thread");
    for (i, (c, a)) in cons.iter_mut().zip(accs.iter_mut()).enumerate() {
        c.send(&[i as u8]).expect("send");
        c.flush().expect("flush");
        let mut b = [0u8];
        a.recv(&mut b).expect("recv");
        assert_eq!(b[0], i as u8);
    }
}

#[test]
fn connect_without_listener_fails_in_time() {
    // Port 0 is never listening: the connection is refused, every time.
    let port = 0;
    let c = TcpConfig {
        connect_timeout: Duration::from_millis(300),
        ..cfg(1000)
    };
    let t = Instant::now();
    let e = tcp::connect(("127.0.0.1", port), &c).expect_err("nobody listens");
    assert_eq!(e.kind(), ErrorKind::ConnectionRefused);
    assert!(t.elapsed() < Duration::from_secs(5));
}
