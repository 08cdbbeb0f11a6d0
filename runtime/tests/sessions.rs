//! Sessions over TCP between two threads: stray connections during set-up, TLS with
//! pinned certificates (byte-identical to plain TCP), wrong keys refused on both sides,
//! the per-session deadline.

mod common;

use common::*;
use sci_ir::{Plan, Tensor};
use sci_runtime::exec::handshake::{Hello, Status};
use sci_runtime::exec::report::PartyReport;
use sci_runtime::exec::{self, ExecError, link};
use sci_runtime::net::session::{self, Acceptor, SessionId};
use sci_runtime::net::tcp::TcpConfig;
use sci_runtime::net::tls::{self, Tls};
use sci_runtime::net::{Party, tcp};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn cfg(tls: Option<Arc<Tls>>) -> TcpConfig {
    TcpConfig {
        timeout: Some(Duration::from_secs(20)),
        connect_timeout: Duration::from_secs(10),
        tls,
        ..TcpConfig::default()
    }
}

type Outcome = Result<(Vec<Tensor>, PartyReport), ExecError>;

/// Runs `plan` on `x` with `threads` lanes: the server listening with `scfg`, the
/// client connecting with `ccfg`; `meddle` runs (with the server's address) during the
/// set-up: after the server took the client's lane 0, before it answers.
fn run(
    plan: &Plan,
    x: Vec<Tensor>,
    threads: u32,
    scfg: &TcpConfig,
    ccfg: &TcpConfig,
    meddle: impl FnOnce(&str) + Send,
) -> (Result<PartyReport, ExecError>, Outcome, u64) {
    let acceptor = Acceptor::bind("127.0.0.1:0", scfg).unwrap();
    let addr = acceptor.local_addr().to_string();
    let client = plan.client_view();
    std::thread::scope(|sc| {
        let srv = sc.spawn(|| {
            let ot = plan.program().params().ot;
            let hello = Hello::new(Party::Server, threads, ot, plan.hash(), Status::Ready);
            let inc = acceptor
                .next(scfg.connect_timeout)
                .map_err(ExecError::Connect)?
                .map_err(ExecError::Rejected)?;
            meddle(&addr);
            let c = link::accept_incoming(
                &acceptor,
                inc,
                Party::Server,
                (plan.program(), &hello),
                scfg,
            )?;
            let (mut e, setup) = c.engine(plan.program());
            exec::execute(plan.program(), &mut e, None, setup, &mut |_| {}).map(|e| e.report)
        });
        let cl = (|| {
            let ot = client.program().params().ot;
            let hello = Hello::new(Party::Client, threads, ot, client.hash(), Status::Ready);
            let c = link::connect(&addr, Party::Client, (client.program(), &hello), ccfg)?;
            let (mut e, setup) = c.engine(client.program());
            let ex = exec::execute(client.program(), &mut e, Some(x), setup, &mut |_| {})?;
            Ok((ex.outputs.unwrap_or_default(), ex.report))
        })();
        let srv = srv.join().expect("server thread");
        (srv, cl, acceptor.dropped())
    })
}

/// A key pair written to `dir` as NAME.key / NAME.crt.
fn identity(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let g = tls::keygen().unwrap();
    let (k, c) = (
        dir.join(format!("{name}.key")),
        dir.join(format!("{name}.crt")),
    );
    std::fs::write(&k, g.key_pem).unwrap();
    std::fs::write(&c, g.cert_pem).unwrap();
    (k, c)
}

fn tls(me: &(PathBuf, PathBuf), peer: &(PathBuf, PathBuf)) -> Option<Arc<Tls>> {
    Some(Arc::new(Tls::from_files(&me.0, &me.1, &peer.1).unwrap()))
}

#[test]
fn stray_connections_during_setup_do_not_break_the_session() {
    let p = protocol_program(16);
    let plan = Plan::new(p.clone());
    let x = wide_inputs(&p, 5);
    let want = sci_ir::interp::run(&p, &x).unwrap();
    let c = cfg(None);
    let mut strays = Vec::new();
    let mut second = None;
    let (s, cl, dropped) = run(&plan, x, 3, &c, &c, |addr| {
        // Garbage, a lane of an unknown session, a silent connection, and a second
        // client's lane 0 that never gets further.
        let mut g = std::net::TcpStream::connect(addr).unwrap();
        g.write_all(b"GET / HTTP/1.1\r\nHost: sci\r\n\r\n").unwrap();
        let mut l = std::net::TcpStream::connect(addr).unwrap();
        l.write_all(&session::preamble(SessionId([1; 16]), 1))
            .unwrap();
        strays.push(g);
        strays.push(l);
        strays.push(std::net::TcpStream::connect(addr).unwrap());
        let mut t = tcp::connect_transport(addr, &c).unwrap();
        t.write_all(&session::preamble(SessionId::NONE, 0)).unwrap();
        t.flush().unwrap();
        second = Some(t);
    });
    s.unwrap();
    assert_eq!(cl.unwrap().0, want);
    assert!(dropped >= 2, "dropped {dropped}");
}

#[test]
fn tls_runs_are_byte_identical_to_plain_tcp() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (identity(dir.path(), "a"), identity(dir.path(), "b"));
    let p = protocol_program(16);
    let plan = Plan::new(p.clone());
    let x = wide_inputs(&p, 9);
    let want = sci_ir::interp::run(&p, &x).unwrap();
    let plain = run(&plan, x.clone(), 2, &cfg(None), &cfg(None), |_| {});
    let secure = run(&plan, x, 2, &cfg(tls(&a, &b)), &cfg(tls(&b, &a)), |_| {});
    let (ps, (pout, pc)) = (plain.0.unwrap(), plain.1.unwrap());
    let (ss, (sout, sc)) = (secure.0.unwrap(), secure.1.unwrap());
    assert_eq!(pout, want);
    assert_eq!(sout, want);
    let counts = |r: &PartyReport| {
        (
            r.totals.bytes_sent,
            r.totals.bytes_recv,
            r.totals.rounds,
            r.setup.bytes_sent,
            r.setup.rounds,
        )
    };
    assert_eq!(counts(&ps), counts(&ss));
    assert_eq!(counts(&pc), counts(&sc));
}

#[test]
fn a_wrong_pinned_key_stops_both_sides() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, m) = (
        identity(dir.path(), "a"),
        identity(dir.path(), "b"),
        identity(dir.path(), "mallory"),
    );
    let p = protocol_program(16);
    let plan = Plan::new(p.clone());
    let x = wide_inputs(&p, 1);
    let short = |t| TcpConfig {
        connect_timeout: Duration::from_secs(3),
        ..cfg(t)
    };
    // The client expects b but the server is a; then the server expects m.
    for (scfg, ccfg) in [
        (short(tls(&a, &b)), short(tls(&b, &b))),
        (short(tls(&a, &m)), short(tls(&b, &a))),
        (short(tls(&a, &b)), short(None)),
    ] {
        let t0 = Instant::now();
        let (s, cl, _) = run(&plan, x.clone(), 1, &scfg, &ccfg, |_| {});
        let (se, ce) = (s.unwrap_err().to_string(), cl.unwrap_err().to_string());
        assert!(se.contains("TLS") && se.contains("cert"), "server: {se}");
        // A client without TLS may only see the server close the connection.
        let plain = ccfg.tls.is_none();
        assert!(
            (ce.contains("TLS") && ce.contains("cert")) || (plain && ce.contains("handshake")),
            "client: {ce}"
        );
        assert!(t0.elapsed() < Duration::from_secs(8), "{:?}", t0.elapsed());
    }
}

#[test]
fn the_session_deadline_stops_a_session() {
    let p = protocol_program(16);
    let plan = Plan::new(p.clone());
    let x = wide_inputs(&p, 2);
    let c = cfg(None);
    // The deadline runs from the connection's opening: lane 0 must still be routed
    // before it (so it is not too short for a loaded machine), and the set-up then
    // waits past it.
    let late = TcpConfig {
        session_timeout: Some(Duration::from_millis(500)),
        ..cfg(None)
    };
    let t0 = Instant::now();
    let (s, _, _) = run(&plan, x, 1, &late, &c, |_| {
        std::thread::sleep(Duration::from_millis(1500))
    });
    let e = s.unwrap_err();
    assert!(e.timed_out(), "{e}");
    assert!(e.to_string().contains("deadline"), "{e}");
    assert!(t0.elapsed() < Duration::from_secs(8));
}

/// A single-session TLS server (`link::accept`) outlives junk: an HTTP request and a
/// plain-TCP client fail the TLS handshake, and the real client that comes after them
/// is served, with the cleartext outputs.
#[test]
fn a_tls_server_waits_on_past_junk_connections() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (identity(dir.path(), "a"), identity(dir.path(), "b"));
    let (scfg, ccfg) = (cfg(tls(&a, &b)), cfg(tls(&b, &a)));
    let p = protocol_program(16);
    let plan = Plan::new(p.clone());
    let x = wide_inputs(&p, 9);
    let want = sci_ir::interp::run(&p, &x).unwrap();
    let acceptor = Acceptor::bind("127.0.0.1:0", &scfg).unwrap();
    let addr = acceptor.local_addr().to_string();
    let client = plan.client_view();
    std::thread::scope(|sc| {
        let srv = sc.spawn(|| {
            let ot = plan.program().params().ot;
            let hello = Hello::new(Party::Server, 1, ot, plan.hash(), Status::Ready);
            let c = link::accept(&acceptor, Party::Server, (plan.program(), &hello), &scfg)?;
            let (mut e, setup) = c.engine(plan.program());
            exec::execute(plan.program(), &mut e, None, setup, &mut |_| {}).map(|e| e.report)
        });
        for junk in [&b"GET / HTTP/1.1\r\nHost: sci\r\n\r\n"[..], &[0u8; 64][..]] {
            let mut g = std::net::TcpStream::connect(&addr).unwrap();
            g.write_all(junk).unwrap();
            drop(g);
        }
        let start = Instant::now();
        while acceptor.dropped() < 2 && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(acceptor.dropped(), 2, "the junk was not seen first");
        let ot = client.program().params().ot;
        let hello = Hello::new(Party::Client, 1, ot, client.hash(), Status::Ready);
        let c = link::connect(&addr, Party::Client, (client.program(), &hello), &ccfg).unwrap();
        let (mut e, setup) = c.engine(client.program());
        let ex = exec::execute(client.program(), &mut e, Some(x), setup, &mut |_| {}).unwrap();
        assert_eq!(ex.outputs.unwrap(), want);
        srv.join().expect("server thread").unwrap();
    });
}
