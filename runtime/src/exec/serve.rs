//! Serving a plan: accepting client sessions until told to stop, up to a number at once,
//! each on threads of its own with its own OT state and fresh randomness
//! ([`super::link::accept_incoming`], then [`super::session::serve_session`]); a
//! client beyond the limit, or one arriving after the stop, hears "server busy". On a
//! stop the server accepts no more sessions and waits for the running ones. Used by
//! `sci-run --serve` (stopped by SIGINT/SIGTERM) and the Python package's
//! `Server.serve` (stopped by Ctrl-C or `Server.stop`).

use super::handshake::{AbortReason, Hello};
use super::report::{OutputRecord, cost_line, sum_totals};
use super::{ExecError, link, session};
use crate::net::Party;
use crate::net::session::{Acceptor, Incoming};
use crate::net::tcp::TcpConfig;
use sci_ir::Plan;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How [`serve`] runs.
pub struct ServeOptions<'a> {
    /// Most sessions at once (at least 1).
    pub max_sessions: usize,
    /// Asked every 100 ms on the accepting thread: `true` stops accepting.
    pub stop: &'a mut (dyn FnMut() -> bool + Send),
    /// Sees each finished session's report line (on the session's thread), and a line
    /// for each connection rejected in TLS authentication (`"outcome": "rejected:
    /// ..."`, on the accepting thread).
    pub on_session: &'a (dyn Fn(&serde_json::Value) + Sync),
    /// The prefix of the messages on stderr (e.g. `sci-run`).
    pub name: &'a str,
}

/// Accepts sessions on `acceptor` for `plan` (with its weights; `hello` is the
/// server's, checked against each client's) until `opts.stop` says so, then waits for
/// the running ones; the number of sessions accepted. Fails only if accepting does.
pub fn serve(
    acceptor: &Acceptor,
    plan: &Plan,
    hello: &Hello,
    cfg: &TcpConfig,
    opts: ServeOptions<'_>,
) -> Result<u64, ExecError> {
    let running = AtomicUsize::new(0);
    let max = opts.max_sessions.max(1);
    let name = opts.name;
    let on_session = opts.on_session;
    let stop = opts.stop;
    let mut accepted = 0;
    std::thread::scope(|sc| -> Result<u64, ExecError> {
        let mut stopping = false;
        loop {
            if !stopping && stop() {
                stopping = true;
                eprintln!(
                    "{name}: stopping: no new sessions; waiting for {} running",
                    running.load(Ordering::SeqCst)
                );
            }
            if stopping && running.load(Ordering::SeqCst) == 0 {
                return Ok(accepted);
            }
            let incoming = match acceptor.next(Duration::from_millis(100)) {
                Ok(Ok(i)) => i,
                Ok(Err(rejected)) => {
                    eprintln!("{name}: rejected {rejected}");
                    on_session(&serde_json::json!({
                        "session": null,
                        "peer": rejected.peer.to_string(),
                        "plan_hash": plan.hash_hex(),
                        "outcome": format!("rejected: {rejected}"),
                    }));
                    continue;
                }
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => continue,
                Err(e) => return Err(ExecError::Connect(e)),
            };
            // Sessions beyond the limit, and any after a stop, hear "busy", on this
            // thread (one short write, no reading: [`link::refuse`]).
            if stopping || running.load(Ordering::SeqCst) >= max {
                eprintln!("{name}: {}: busy", incoming.peer);
                link::refuse(incoming, hello, AbortReason::Busy);
                continue;
            }
            running.fetch_add(1, Ordering::SeqCst);
            accepted += 1;
            let running = &running;
            sc.spawn(move || {
                let line = session_line(name, cfg, acceptor, plan, hello, incoming);
                on_session(&line);
                running.fetch_sub(1, Ordering::SeqCst);
            });
        }
    })
}

/// One served session; its report line.
fn session_line(
    name: &str,
    cfg: &TcpConfig,
    acceptor: &Acceptor,
    plan: &Plan,
    hello: &Hello,
    incoming: Incoming,
) -> serde_json::Value {
    let t0 = Instant::now();
    let peer = incoming.peer.to_string();
    let mut id = None;
    let program = plan.program();
    let run = link::accept_incoming(acceptor, incoming, Party::Server, (program, hello), cfg)
        .and_then(|c| {
            id = Some(c.id.to_string());
            session::serve_session(plan.program(), c.engine(plan.program()), &mut |_| {})
        });
    let seconds = t0.elapsed().as_secs_f64();
    let mut line = serde_json::json!({
        "session": id,
        "peer": peer,
        "plan_hash": plan.hash_hex(),
        "outputs": OutputRecord::of(plan.program()),
        "threads": hello.threads,
        "seconds": seconds,
    });
    match run {
        Ok(reports) => {
            eprintln!(
                "{name}: session {} from {peer}: done",
                id.unwrap_or_default()
            );
            eprintln!("{}", cost_line("server", &reports));
            line["outcome"] = "ok".into();
            line["inferences"] = reports.len().into();
            line["instructions"] = plan.program().instrs().len().into();
            let setup = reports.first().map(|r| r.setup.clone()).unwrap_or_default();
            line["setup"] = serde_json::to_value(setup).unwrap_or_default();
            line["totals"] = serde_json::to_value(sum_totals(&reports)).unwrap_or_default();
        }
        Err(e) => {
            eprintln!("{name}: session from {peer} failed: {e}");
            line["outcome"] = format!("error: {e}").into();
        }
    }
    line
}
