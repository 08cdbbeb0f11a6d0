//! Abuse on loopback (issue 26): a served plan (`exec::serve`, TLS) and a single-session
//! server (`link::accept`, TLS) under 200 idle connections, 50 slow-drip connections,
//! 100 junk TLS handshakes, 100 "busy" connections (lane 0 sent while the sessions are
//! taken, then silence) and clients that stop after their preamble. Meanwhile honest
//! clients (retrying when told "busy" or cut off) must finish within [`HONEST_WITHIN`]
//! with the cleartext outputs, and the process's threads and file descriptors (from
//! `/proc/self`, less the attackers' own sockets) stay within the set-up bounds
//! ([`session::MAX_PENDING`], [`session::MAX_WAITING`]) plus a fixed allowance.

mod common;

use common::*;
use sci_ir::{Plan, Tensor};
use sci_runtime::exec::handshake::{AbortReason, Hello, Status};
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

/// The sieges run one at a time: they count the whole process's threads and descriptors.
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

/// Lane 0 of a new session, TLS done and preamble sent, then nothing.
fn lane0(addr: &str, ccfg: &TcpConfig) -> Box<dyn Transport> {
    let mut t = tcp::connect_transport(addr, ccfg).unwrap();
    t.write_all(&session::preamble(SessionId::NONE, 0)).unwrap();
    t.flush().unwrap();
    t
}

/// The attackers' connections, open until dropped.
struct Attack {
    silent: Vec<Box<dyn Transport>>,
    busy: Vec<Box<dyn Transport>>,
    idle: Vec<TcpStream>,
}

impl Attack {
    /// Sockets the attack holds open in this process.
    fn held(&self) -> usize {
        self.silent.len() + self.busy.len() + self.idle.len() + DRIPS
    }
}

/// `silent` clients that stop after their preamble (taking session slots), 100 busy
/// ones, 100 junk TLS handshakes, 200 idle connections.
fn attack(addr: &str, ccfg: &TcpConfig, silent: usize) -> Attack {
    let silent = (0..silent).map(|_| lane0(addr, ccfg)).collect();
    // The server takes the silent ones first.
    std::thread::sleep(Duration::from_millis(200));
    let busy = (0..100).map(|_| lane0(addr, ccfg)).collect();
    for i in 0..100u8 {
        // A TLS handshake record of the right type and version with a garbage body.
        let mut g = TcpStream::connect(addr).unwrap();
        let _ = g.write_all(&[0x16, 3, 1, 0, 8, 1, 0, 0, 4, i, i, i, i]);
    }
    let idle = (0..200)
        .map(|_| TcpStream::connect(addr).unwrap())
        .collect();
    Attack { silent, busy, idle }
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

/// Runs the attack and `clients` honest clients against the server listening on
/// `addr`; checks the clients' outputs and time, the drip connections' closing, and
/// the peaks of threads and descriptors (at most `bound` beyond the attack's own).
fn besiege(
    addr: &str,
    plan: &Plan,
    ccfg: &TcpConfig,
    (silent, clients, bound): (usize, usize, usize),
) {
    let p = plan.program();
    let x = wide_inputs(p, 3);
    let want = sci_ir::interp::run(p, &x).unwrap();
    let client = plan.client_view();
    let (t0, f0) = (threads(), fds());
    let peak = Peak::default();
    std::thread::scope(|sc| {
        sc.spawn(|| peak.watch());
        let start = Instant::now();
        let until = start + HONEST_WITHIN;
        let (client, x) = (&client, &x);
        let dripper = sc.spawn(|| drip(addr));
        let att = attack(addr, ccfg, silent);
        let honest: Vec<_> = (0..clients)
            .map(|_| sc.spawn(move || honest(addr, client, x, ccfg, until)))
            .collect();
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
        assert!(pf <= f0 + att.held() + bound, "fds {f0} -> {pf}");
        // The busy ones heard "server busy" if the server serves many.
        if silent > 1 {
            let busy = att
                .busy
                .into_iter()
                .map(|t| Hello::read(&mut Channel::new(t)).map(|h| h.status))
                .filter(|s| matches!(s, Ok(Status::Abort(AbortReason::Busy))))
                .count();
            assert_eq!(busy, 100, "busy refusals");
        }
    });
}

/// `exec::serve` with 2 sessions at most, two of them taken by clients silent after
/// their preamble while 100 busy connections come.
#[test]
#[ignore = "hangs now and then under load (issue 26, open): run with --ignored"]
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
    std::thread::scope(|sc| {
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
        // Stops the server however `besiege` ends (a panic too).
        struct Stop<'a>(&'a AtomicBool);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
            }
        }
        let guard = Stop(&stop);
        besiege(
            &addr,
            &plan,
            &ccfg,
            (2, 2, session::MAX_PENDING + ALLOWANCE),
        );
        drop(guard);
        srv.join().unwrap().unwrap();
    });
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

/// `link::accept`: the first lane 0 it takes stays silent after its preamble; the
/// server waits on past it to the honest client.
#[test]
#[ignore = "hangs when run after the served siege (issue 26, open): run alone with --ignored"]
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
    std::thread::scope(|sc| {
        let srv = sc.spawn(|| {
            let p = plan.program();
            let c = link::accept(&acceptor, Party::Server, (p, &hello), &scfg)?;
            exec::serve_session(p, c.engine(p), &mut |_| {})
        });
        let bound = session::MAX_PENDING + session::MAX_WAITING + ALLOWANCE;
        besiege(&addr, &plan, &ccfg, (1, 1, bound));
        assert_eq!(srv.join().unwrap().unwrap().len(), 1);
    });
}

/// A lane 0 preamble dripped one byte each 300 ms (8.4 s for all of it) is cut off at
/// the set-up deadline, and no session sees it.
#[test]
fn a_dripped_preamble_fails_at_the_set_up_deadline() {
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
