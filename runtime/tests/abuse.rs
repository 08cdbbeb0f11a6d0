//! Abuse on loopback (issue 26): a served plan (`exec::serve`, TLS) and a single-session
//! server (`link::accept`, TLS) under 100 "busy" connections (lane 0 sent while the
//! sessions are taken, then silence), then, while honest clients run, clients that
//! stop after their preamble, 100 junk TLS handshakes, 200 idle connections and 50
//! slow-drip connections. The honest clients (retrying when told "busy" or cut off)
//! must finish within [`HONEST_WITHIN`] with the cleartext outputs, and the process's
//! threads and file descriptors (from `/proc/self`, less the attackers' own sockets)
//! stay within the set-up bounds ([`session::MAX_PENDING`], [`session::MAX_WAITING`])
//! plus a fixed allowance.
//!
//! All the connections come from 127.0.0.1, one source: the server's per-source
//! set-up bound closes the oldest of them when many come at once, so the attack's own
//! connections may be closed during their set-up (they are counted, not unwrapped),
//! and the honest clients retry. Every wait in these tests is bounded, and a failure
//! stops the watcher and the server ([`Raise`]) so that it is reported, not hung on.

mod common;

use common::*;
use sci_ir::{Plan, Tensor};
use sci_runtime::exec::handshake::{self, AbortReason, Hello, Status};
use sci_runtime::exec::serve::{self, ServeOptions};
use sci_runtime::exec::{self, ClientSession, ExecError, link};
use sci_runtime::net::session::{self, Acceptor, SessionId};
use sci_runtime::net::tcp::{self, TcpConfig};
use sci_runtime::net::tls::{self, Tls};
use sci_runtime::net::{Channel, Party, Transport};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The servers' set-up deadline in these tests.
const SETUP: Duration = Duration::from_secs(2);

/// Honest clients finish within this, from the start of the attack.
const HONEST_WITHIN: Duration = Duration::from_secs(20);

/// Threads and descriptors allowed beyond the set-up bounds: the accepting thread,
/// running sessions and their lanes, the honest clients, the monitor and the dripper.
const ALLOWANCE: usize = 40;

fn cfg(tls: Option<Arc<Tls>>) -> TcpConfig {
    TcpConfig {
        timeout: Some(Duration::from_secs(30)),
        connect_timeout: Duration::from_secs(30),
        setup_timeout: SETUP,
        tls,
        ..TcpConfig::default()
    }
}

/// Server and client configurations with TLS keys of their own (in `dir`).
fn tls_pair(dir: &std::path::Path) -> (TcpConfig, TcpConfig) {
    let mut files = Vec::new();
    for name in ["server", "client"] {
        let g = tls::keygen().unwrap();
        let (k, c) = (
            dir.join(format!("{name}.key")),
            dir.join(format!("{name}.crt")),
        );
        std::fs::write(&k, g.key_pem).unwrap();
        std::fs::write(&c, g.cert_pem).unwrap();
        files.push((k, c));
    }
    let (s, c) = (&files[0], &files[1]);
    let tls = |me: &(PathBuf, PathBuf), peer: &(PathBuf, PathBuf)| {
        Some(Arc::new(Tls::from_files(&me.0, &me.1, &peer.1).unwrap()))
    };
    (cfg(tls(s, c)), cfg(tls(c, s)))
}

/// The tests run one at a time: the sieges count the whole process's threads and
/// descriptors.
static SERIAL: Mutex<()> = Mutex::new(());

fn threads() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap()
}

fn fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// The most threads and descriptors seen while it runs (every 20 ms).
#[derive(Default)]
struct Peak {
    stop: AtomicBool,
    threads: AtomicUsize,
    fds: AtomicUsize,
}

impl Peak {
    fn watch(&self) {
        while !self.stop.load(Ordering::Relaxed) {
            self.threads.fetch_max(threads(), Ordering::Relaxed);
            self.fds.fetch_max(fds(), Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Sets a flag when dropped, however the scope it lives in ends (a failed assertion
/// too): stops the [`Peak`] watcher or a server, so that a failure inside a
/// `thread::scope` is reported instead of the scope waiting for them forever.
struct Raise<'a>(&'a AtomicBool);

impl Drop for Raise<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Lane 0 of a new session, TLS done and preamble sent, then nothing; `None` if the
/// server closed it during its set-up (the set-up bounds may close any connection of
/// a source that opens many at once: all of these come from 127.0.0.1).
fn lane0(addr: &str, ccfg: &TcpConfig) -> Option<Box<dyn Transport>> {
    let mut t = tcp::connect_transport(addr, ccfg).ok()?;
    t.write_all(&session::preamble(SessionId::NONE, 0)).ok()?;
    t.flush().ok()?;
    Some(t)
}

/// A client that takes a session slot and keeps it: it completes the handshake and
/// opens its second lane, then sends nothing, so the server's session waits in its OT
/// set-up (for its per-read timeout) until this is dropped.
fn holder(addr: &str, plan: &Plan, ccfg: &TcpConfig) -> Vec<Channel> {
    let p = plan.program();
    let hello = Hello::new(Party::Client, 2, p.params().ot, plan.hash(), Status::Ready);
    let mut lane0 = session::connect_first(addr, ccfg).expect("a holder's lane 0");
    let theirs = handshake::handshake(&mut lane0, &hello).expect("a holder's handshake");
    let mut lanes =
        session::connect_lanes(addr, theirs.session, 1, ccfg).expect("a holder's lane 1");
    lanes.insert(0, lane0);
    lanes
}

/// The attackers' connections, open until dropped.
struct Attack {
    silent: Vec<Box<dyn Transport>>,
    busy: Vec<Channel>,
    idle: Vec<TcpStream>,
}

impl Attack {
    /// Sockets the attack holds open in this process.
    fn held(&self) -> usize {
        self.silent.len() + self.busy.len() + self.idle.len() + DRIPS
    }
}

/// Busy connections in an attack.
const BUSY: usize = 100;

/// The first wave: `holders` clients take the session slots ([`holder`]), [`BUSY`]
/// lanes 0 come while they are taken (and stay silent after their preamble), then the
/// holders let go. With holders, each busy one's answer is read before they let go
/// (so that no busy one can find a free slot): how many heard "busy". On a
/// single-session server (no holders) the first busy one is the session the server
/// takes, the others wait in its queue or are closed: nothing is read.
fn busy_wave(addr: &str, plan: &Plan, ccfg: &TcpConfig, holders: usize) -> (Vec<Channel>, usize) {
    let held: Vec<_> = (0..holders).map(|_| holder(addr, plan, ccfg)).collect();
    let mut busy: Vec<_> = (0..BUSY)
        .filter_map(|_| lane0(addr, ccfg).map(Channel::new))
        .collect();
    let busy_heard = |c: &mut Channel| matches!(Hello::read(c), Ok(h) if h.status == Status::Abort(AbortReason::Busy));
    let refused = if holders > 0 {
        busy.iter_mut().map(busy_heard).filter(|&b| b).count()
    } else {
        0
    };
    drop(held);
    (busy, refused)
}

/// The second wave, while honest clients run: `silent` clients that stop after their
/// preamble (taking free session slots until their set-up deadline), 100 junk TLS
/// handshakes, 200 idle connections.
fn second_wave(
    addr: &str,
    ccfg: &TcpConfig,
    silent: usize,
) -> (Vec<Box<dyn Transport>>, Vec<TcpStream>) {
    let silent = (0..silent).filter_map(|_| lane0(addr, ccfg)).collect();
    for i in 0..100u8 {
        // A TLS handshake record of the right type and version with a garbage body.
        if let Ok(mut g) = TcpStream::connect(addr) {
            let _ = g.write_all(&[0x16, 3, 1, 0, 8, 1, 0, 0, 4, i, i, i, i]);
        }
    }
    let idle = (0..200)
        .filter_map(|_| TcpStream::connect(addr).ok())
        .collect();
    (silent, idle)
}

const DRIPS: usize = 50;

/// 50 connections that send a lane 0 preamble one byte each 250 ms (7 s for all of
/// it); the longest any of them stayed open, or `None` if one was still open after 6 s.
fn drip(addr: &str) -> Option<Duration> {
    let start = Instant::now();
    let mut conns: Vec<Option<TcpStream>> = (0..DRIPS)
        .map(|_| {
            let s = TcpStream::connect(addr).unwrap();
            s.set_nonblocking(true).unwrap();
            Some(s)
        })
        .collect();
    let pre = session::preamble(SessionId::NONE, 0);
    let mut longest = Duration::ZERO;
    let mut i = 0;
    loop {
        if conns.iter().all(Option::is_none) {
            return Some(longest);
        }
        if start.elapsed() > Duration::from_secs(6) {
            return None;
        }
        for c in &mut conns {
            let Some(s) = c else { continue };
            let mut b = [0u8; 64];
            let closed = match s.read(&mut b) {
                Ok(0) => true,
                Ok(_) => false,
                Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
            } || s.write_all(&pre[i % pre.len()..][..1]).is_err();
            if closed {
                longest = start.elapsed();
                *c = None;
            }
        }
        i += 1;
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// An honest client: runs `x` in a session, retrying on failure (busy, cut off) until
/// `until`; the outputs.
fn honest(addr: &str, plan: &Plan, x: &[Tensor], ccfg: &TcpConfig, until: Instant) -> Vec<Tensor> {
    let p = plan.program();
    loop {
        let run = (|| -> Result<Vec<Tensor>, ExecError> {
            let hello = Hello::new(Party::Client, 2, p.params().ot, plan.hash(), Status::Ready);
            let c = link::connect(addr, Party::Client, (p, &hello), ccfg)?;
            let mut s = ClientSession::new(c.engine(p));
            let ex = s.infer(p, x.to_vec(), &mut |_| {})?;
            s.end()?;
            Ok(ex.outputs.unwrap_or_default())
        })();
        match run {
            Ok(y) => return y,
            Err(e) if Instant::now() < until => {
                eprintln!("honest client: {e}; retrying");
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => panic!("the honest client did not finish in time: {e}"),
        }
    }
}

/// How [`besiege`] attacks.
struct Siege {
    /// Clients holding the session slots during the busy wave ([`busy_wave`]).
    holders: usize,
    /// Clients silent after their preamble in the second wave ([`second_wave`]).
    silent: usize,
    /// Honest clients.
    clients: usize,
    /// The most descriptors beyond the attack's own.
    bound: usize,
}

/// Runs the attack on the server listening on `addr`: the busy wave, then the second
/// wave and the slow drips while `siege.clients` honest clients run. Checks the
/// clients' outputs and time, that every busy connection heard "busy" if the server
/// had holders, the drip connections' closing,
/// and the peaks of threads and descriptors.
fn besiege(addr: &str, plan: &Plan, ccfg: &TcpConfig, siege: Siege) {
    let p = plan.program();
    let x = wide_inputs(p, 3);
    let want = sci_ir::interp::run(p, &x).unwrap();
    let client = plan.client_view();
    let (t0, f0) = (threads(), fds());
    let peak = Peak::default();
    std::thread::scope(|sc| {
        // Declared before anything that can fail: the watcher stops however this ends.
        let _watching = Raise(&peak.stop);
        sc.spawn(|| peak.watch());
        let (busy, refused) = busy_wave(addr, plan, ccfg, siege.holders);
        let start = Instant::now();
        let until = start + HONEST_WITHIN;
        let (client, x) = (&client, &x);
        let honest: Vec<_> = (0..siege.clients)
            .map(|_| sc.spawn(move || honest(addr, client, x, ccfg, until)))
            .collect();
        let dripper = sc.spawn(|| drip(addr));
        let (silent, idle) = second_wave(addr, ccfg, siege.silent);
        let att = Attack { silent, busy, idle };
        for h in honest {
            assert_eq!(h.join().unwrap(), want);
        }
        let took = start.elapsed();
        let dripped = dripper.join().unwrap();
        peak.stop.store(true, Ordering::Relaxed);
        let (pt, pf) = (
            peak.threads.load(Ordering::Relaxed),
            peak.fds.load(Ordering::Relaxed),
        );
        eprintln!(
            "honest clients done in {took:?}; drips closed by {dripped:?}; threads {t0} -> \
             peak {pt}; fds {f0} -> peak {pf} (the attack holds {})",
            att.held()
        );
        assert!(took < HONEST_WITHIN, "{took:?}");
        let dripped = dripped.expect("a slow-drip connection outlived the set-up deadline");
        assert!(dripped < SETUP + Duration::from_millis(1500), "{dripped:?}");
        assert!(
            pt <= t0 + session::MAX_PENDING + ALLOWANCE,
            "threads {t0} -> {pt}"
        );
        assert!(pf <= f0 + att.held() + siege.bound, "fds {f0} -> {pf}");
        // While the holders held the slots, every busy one heard "busy".
        if siege.holders > 0 {
            assert_eq!(refused, BUSY, "busy refusals");
        }
    });
}

/// `exec::serve` with 2 sessions at most: two holders take them while 100 busy
/// connections come, then two clients silent after their preamble take them for
/// their set-up deadline while two honest clients run.
#[test]
fn a_served_plan_survives_abuse() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (scfg, ccfg) = tls_pair(dir.path());
    let plan = Plan::new(protocol_program(16));
    let acceptor = Acceptor::bind("127.0.0.1:0", &scfg).unwrap();
    let addr = acceptor.local_addr().to_string();
    let hello = Hello::new(
        Party::Server,
        2,
        plan.program().params().ot,
        plan.hash(),
        Status::Ready,
    );
    let stop = AtomicBool::new(false);
    let lines = Mutex::new(Vec::new());
    let started = Instant::now();
    std::thread::scope(|sc| {
        // Stops the server however `besiege` ends (a failure too).
        let _stopping = Raise(&stop);
        let srv = sc.spawn(|| {
            let on_session = |l: &serde_json::Value| lines.lock().unwrap().push(l.clone());
            let opts = ServeOptions {
                max_sessions: 2,
                stop: &mut || stop.load(Ordering::Relaxed),
                on_session: &on_session,
                name: "abuse",
            };
            serve::serve(&acceptor, &plan, &hello, &scfg, opts)
        });
        let siege = Siege {
            holders: 2,
            silent: 2,
            clients: 2,
            bound: session::MAX_PENDING + ALLOWANCE,
        };
        besiege(&addr, &plan, &ccfg, siege);
        stop.store(true, Ordering::Relaxed);
        srv.join().unwrap().unwrap();
    });
    eprintln!("served siege: {:?} in all", started.elapsed());
    let lines = lines.into_inner().unwrap();
    let ok = lines.iter().filter(|l| l["outcome"] == "ok").count();
    let rejected = lines
        .iter()
        .filter(|l| {
            l["outcome"]
                .as_str()
                .is_some_and(|o| o.starts_with("rejected"))
        })
        .count();
    assert_eq!(ok, 2, "{lines:?}");
    assert!(rejected > 0, "no junk TLS handshake was reported");
}

/// `link::accept`: the first lane 0 it takes (the first busy one) stays silent after
/// its preamble; the server waits on past it, and past the rest, to the honest client.
#[test]
fn a_single_session_server_survives_abuse() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let (scfg, ccfg) = tls_pair(dir.path());
    let plan = Plan::new(protocol_program(16));
    let acceptor = Acceptor::bind("127.0.0.1:0", &scfg).unwrap();
    let addr = acceptor.local_addr().to_string();
    let hello = Hello::new(
        Party::Server,
        2,
        plan.program().params().ot,
        plan.hash(),
        Status::Ready,
    );
    let started = Instant::now();
    std::thread::scope(|sc| {
        let srv = sc.spawn(|| {
            let p = plan.program();
            let c = link::accept(&acceptor, Party::Server, (p, &hello), &scfg)?;
            exec::serve_session(p, c.engine(p), &mut |_| {})
        });
        let siege = Siege {
            holders: 0,
            silent: 1,
            clients: 1,
            bound: session::MAX_PENDING + session::MAX_WAITING + ALLOWANCE,
        };
        besiege(&addr, &plan, &ccfg, siege);
        assert_eq!(srv.join().unwrap().unwrap().len(), 1);
    });
    eprintln!("single-session siege: {:?} in all", started.elapsed());
}

/// Threads of this process named `name` now (from `/proc/self/task/*/comm`).
fn named_threads(name: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|c| c.trim_end() == name)
        .count()
}

/// A burst of 600 connections from 6 threads at once, each new one evicting an old one
/// (all from 127.0.0.1), never has more than [`session::MAX_PENDING`] set-up threads
/// alive (counted by name, sampled all along), however slowly the evicted ones exit.
#[test]
fn set_up_threads_stay_bounded_in_a_burst() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let acceptor = Acceptor::bind("127.0.0.1:0", &cfg(None)).unwrap();
    let addr = acceptor.local_addr();
    let (done, most) = (AtomicBool::new(false), AtomicUsize::new(0));
    let held = std::thread::scope(|sc| {
        let _stop = Raise(&done);
        sc.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                most.fetch_max(named_threads("sci-lane-setup"), Ordering::Relaxed);
            }
        });
        let burst: Vec<_> = (0..6)
            .map(|_| {
                sc.spawn(move || {
                    (0..100)
                        .filter_map(|_| TcpStream::connect(addr).ok())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let held: Vec<_> = burst.into_iter().flat_map(|b| b.join().unwrap()).collect();
        // Until the acceptor has taken all of them in.
        let end = Instant::now() + Duration::from_secs(10);
        while acceptor.dropped() + (acceptor.pending() as u64) < held.len() as u64 {
            assert!(
                Instant::now() < end,
                "the acceptor did not take the burst in"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        held
    });
    let most = most.into_inner();
    eprintln!("{} connections: at most {most} set-up threads", held.len());
    // (A joined thread may still be listed for a moment while the kernel tears it
    // down: a few more than the bound. Before the acceptor joined them, a burst like
    // this one could leave 84 alive.)
    assert!(most <= session::MAX_PENDING + 4, "{most} set-up threads");
    assert!(most > 0);
}

/// A lane 0 preamble dripped one byte each 300 ms (8.4 s for all of it) is cut off at
/// the set-up deadline, and no session sees it.
#[test]
fn a_dripped_preamble_fails_at_the_set_up_deadline() {
    let _one = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let scfg = TcpConfig {
        setup_timeout: Duration::from_millis(1500),
        ..cfg(None)
    };
    let acceptor = Acceptor::bind("127.0.0.1:0", &scfg).unwrap();
    let mut s = TcpStream::connect(acceptor.local_addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let start = Instant::now();
    let closed = session::preamble(SessionId::NONE, 0).iter().any(|b| {
        let mut buf = [0u8; 1];
        s.write_all(&[*b]).is_err()
            || match s.read(&mut buf) {
                Ok(_) => true,
                Err(e) => !matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ),
            }
            || start.elapsed() > Duration::from_secs(4)
    });
    let took = start.elapsed();
    assert!(closed, "the whole preamble went through in {took:?}");
    assert!(
        took >= Duration::from_millis(1400) && took < Duration::from_secs(3),
        "closed after {took:?}"
    );
    assert!(acceptor.next(Duration::from_millis(100)).is_err());
    assert_eq!(acceptor.dropped(), 1);
}
