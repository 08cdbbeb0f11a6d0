//! The link emulator (`net::emulate`): a round trip costs the RTT, bytes cost their
//! transfer at the bandwidth, the lanes of one direction share it, the two directions
//! do not, and the data arrives intact — over the in-memory and the TCP transports.
//!
//! Times are lower-bounded by what the link allows (the emulator may only be slower,
//! by the scheduler's oversleeping and the machine's load) and upper-bounded loosely.

use std::time::{Duration, Instant};

use sci_runtime::net::emulate::{Link, NetProfile};
use sci_runtime::net::tcp::{self, TcpConfig};
use sci_runtime::net::{Channel, mem};

const TIMEOUT: Option<Duration> = Some(Duration::from_secs(30));

fn profile(bandwidth: f64, rtt_ms: f64) -> NetProfile {
    NetProfile {
        bandwidth,
        rtt: rtt_ms / 1e3,
    }
}

/// `t` emulated lane pairs over memory and over loopback TCP.
fn transports(t: usize, p: NetProfile) -> Vec<(&'static str, Vec<Channel>, Vec<Channel>)> {
    let (a, b) = mem::emulated_pairs(t, TIMEOUT, p).expect("mem pairs");
    let cfg = TcpConfig {
        timeout: TIMEOUT,
        link: Some(Link::new(p)),
        ..TcpConfig::default()
    };
    let (c, d) = tcp::loopback_pairs(t, &cfg).expect("tcp pairs");
    vec![("mem", a, b), ("tcp", c, d)]
}

fn one(mut v: Vec<Channel>) -> Channel {
    v.pop().expect("a channel")
}

#[test]
fn a_round_trip_costs_the_rtt() {
    let p = profile(1e9, 40.0);
    for (name, a, b) in transports(1, p) {
        let (mut a, mut b) = (one(a), one(b));
        let k = 5;
        let echo = std::thread::spawn(move || {
            let mut x = [0u8; 8];
            for _ in 0..k {
                b.recv(&mut x).expect("ping");
                b.send(&x).expect("pong");
                b.flush().expect("flush");
            }
        });
        let t = Instant::now();
        for i in 0..k {
            a.send(&[i as u8; 8]).expect("ping");
            let mut x = [0u8; 8];
            a.recv(&mut x).expect("pong");
            assert_eq!(x, [i as u8; 8], "{name}");
        }
        let dt = t.elapsed().as_secs_f64();
        echo.join().expect("echo thread");
        let want = k as f64 * p.rtt;
        assert!(dt >= want && dt < want + 0.5, "{name}: {dt} s for {want} s");
        assert_eq!(a.stats().rounds, k as u64);
    }
}

#[test]
fn bandwidth_is_shared_by_lanes_and_not_across_directions() {
    // 4 MB/s, no latency to speak of: 1 MB on each of two lanes one way and 1 MB on
    // each lane the other way takes 2 MB / 4 MB/s = 0.5 s (not 0.25 s: the lanes share
    // a direction; not 1 s: the directions are independent).
    let p = profile(4e6, 0.0);
    let n = 1_000_000;
    for (name, a, b) in transports(2, p) {
        let t = Instant::now();
        let run = |mut lanes: Vec<Channel>| {
            std::thread::spawn(move || {
                let hs: Vec<_> = lanes
                    .drain(..)
                    .map(|mut ch| {
                        std::thread::spawn(move || {
                            let data: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
                            // Both directions at once: the two halves of a full-duplex lane.
                            let got = ch
                                .duplex(|tx, rx| {
                                    use sci_runtime::net::{Inbox, Outbox};
                                    std::thread::scope(|s| {
                                        let w =
                                            s.spawn(|| tx.send(&data).and_then(|()| tx.flush()));
                                        let mut got = vec![0u8; n];
                                        rx.recv(&mut got).expect("recv");
                                        w.join().expect("writer").expect("send");
                                        got
                                    })
                                })
                                .expect("duplex")
                                .expect("full duplex");
                            assert_eq!(got, data);
                        })
                    })
                    .collect();
                hs.into_iter().for_each(|h| h.join().expect("lane"));
            })
        };
        let (ha, hb) = (run(a), run(b));
        ha.join().expect("party a");
        hb.join().expect("party b");
        let dt = t.elapsed().as_secs_f64();
        let want = 2.0 * n as f64 / p.bandwidth;
        assert!(
            dt >= 0.95 * want && dt < 1.6 * want,
            "{name}: {dt} s for {want} s"
        );
    }
}

#[test]
fn a_long_message_streams_and_arrives_after_half_a_round_trip() {
    // 2 MB at 10 MB/s with a 100 ms RTT: the last byte arrives 0.2 s + 50 ms after the
    // send began, not 0.2 s + 50 ms per frame.
    let p = profile(10e6, 100.0);
    for (name, a, b) in transports(1, p) {
        let (mut a, mut b) = (one(a), one(b));
        let n = 2_000_000;
        let t = Instant::now();
        let rx = std::thread::spawn(move || {
            let v = b.recv_vec(n).expect("recv");
            (v, Instant::now())
        });
        let data: Vec<u8> = (0..n).map(|i| (i * 7 % 256) as u8).collect();
        a.send(&data).expect("send");
        a.flush().expect("flush");
        let (got, done) = rx.join().expect("receiver");
        assert_eq!(got, data, "{name}");
        let dt = (done - t).as_secs_f64();
        let want = n as f64 / p.bandwidth + p.rtt / 2.0;
        assert!(dt >= want && dt < want + 0.4, "{name}: {dt} s for {want} s");
    }
}
