//! The two parties over the network: [`Server`] (serves a plan with its weights until
//! stopped) and [`Client`] (holds the client's view, keeps one session open across its
//! inferences). Both run the runtime's own loops (`exec::serve`, `exec::session`), as
//! `sci-run` does, with the GIL released while they run.

use crate::arrays::{self, Inputs};
use crate::errors::{PeerError, PlanError, chain, exec_err};
use crate::plan::{Plan, json_to_py};
use pyo3::prelude::*;
use sci_ir::cost::{Lanes, SessionPredictor};
use sci_runtime::exec::handshake::{Hello, Status};
use sci_runtime::exec::report::PartyReport;
use sci_runtime::exec::serve::{ServeOptions, serve};
use sci_runtime::exec::{ClientSession, check_plan, link};
use sci_runtime::net::Party;
use sci_runtime::net::session::Acceptor;
use sci_runtime::net::tcp::{self, TcpConfig};
use sci_runtime::net::tls::Tls;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The connection settings both parties take.
#[allow(clippy::too_many_arguments)]
fn config(
    (key, cert, peer_cert): (Option<PathBuf>, Option<PathBuf>, Option<PathBuf>),
    addr: &str,
    insecure_plaintext: bool,
    timeout: f64,
    connect_timeout: f64,
    session_timeout: f64,
) -> PyResult<TcpConfig> {
    let secs = |s: f64, what: &str| {
        Duration::try_from_secs_f64(s).map_err(|_| {
            pyo3::exceptions::PyValueError::new_err(format!("{what}={s}: not a valid duration"))
        })
    };
    let tls = match (key, cert, peer_cert) {
        (Some(k), Some(c), Some(p)) => Some(Arc::new(
            Tls::from_files(&k, &c, &p).map_err(|e| PeerError::new_err(chain(&e)))?,
        )),
        (None, None, None) => None,
        _ => {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "TLS needs key, cert and peer_cert together (files from sci-keygen)",
            ));
        }
    };
    if tls.is_none()
        && !insecure_plaintext
        && !tcp::is_loopback(addr).map_err(|e| PeerError::new_err(chain(&e)))?
    {
        return Err(PeerError::new_err(format!(
            "refusing plain TCP with {addr}, which is not a loopback address: give key, cert \
             and peer_cert (TLS, keys from sci-keygen), or insecure_plaintext=True"
        )));
    }
    Ok(TcpConfig {
        timeout: Some(secs(timeout, "timeout")?),
        connect_timeout: secs(connect_timeout, "connect_timeout")?,
        session_timeout: Some(secs(session_timeout, "session_timeout")?).filter(|d| !d.is_zero()),
        tls,
        ..TcpConfig::default()
    })
}

/// Serves a plan (with its weights) to clients: `serve()` blocks, accepting sessions
/// (up to `max_sessions` at once, each on threads of its own) until Ctrl-C or `stop()`
/// from another thread; then it accepts no more and returns when the running ones have
/// finished. The address is bound on construction (`address`; port 0 picks a free one).
#[pyclass(module = "sci._sci", frozen)]
pub struct Server {
    plan: sci_ir::Plan,
    acceptor: Acceptor,
    cfg: TcpConfig,
    hello: Hello,
    max_sessions: usize,
    stop: AtomicBool,
    sessions: Mutex<Vec<String>>,
}

#[pymethods]
impl Server {
    #[new]
    #[pyo3(signature = (plan, *, listen="127.0.0.1:7070", key=None, cert=None, peer_cert=None, max_sessions=4, threads=None, ot=None, timeout=600.0, connect_timeout=30.0, session_timeout=3600.0, insecure_plaintext=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        plan: &Plan,
        listen: &str,
        key: Option<PathBuf>,
        cert: Option<PathBuf>,
        peer_cert: Option<PathBuf>,
        max_sessions: usize,
        threads: Option<u32>,
        ot: Option<&str>,
        timeout: f64,
        connect_timeout: f64,
        session_timeout: f64,
        insecure_plaintext: bool,
    ) -> PyResult<Server> {
        let plan = plan.plan.clone();
        check_plan(plan.program(), Party::Server).map_err(|e| exec_err(&e))?;
        let cfg = config(
            (key, cert, peer_cert),
            listen,
            insecure_plaintext,
            timeout,
            connect_timeout,
            session_timeout,
        )?;
        let acceptor = Acceptor::bind(listen, &cfg)
            .map_err(|e| PeerError::new_err(format!("listening on {listen}: {}", chain(&e))))?;
        let threads = threads.unwrap_or(plan.program().params().threads);
        let ot = match ot {
            Some(o) => o
                .parse()
                .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("ot={o:?}: {e}")))?,
            None => plan.program().params().ot,
        };
        let hello = Hello::new(Party::Server, threads, ot, plan.hash(), Status::Ready);
        Ok(Server {
            plan,
            acceptor,
            cfg,
            hello,
            max_sessions: max_sessions.max(1),
            stop: AtomicBool::new(false),
            sessions: Mutex::new(Vec::new()),
        })
    }

    /// The address it listens on, `"IP:PORT"`.
    #[getter]
    fn address(&self) -> String {
        self.acceptor.local_addr().to_string()
    }

    /// Serves until Ctrl-C (in the main thread) or `stop()`; returns the number of
    /// sessions accepted. Sessions that fail are logged on stderr and recorded in
    /// `sessions`; only a failure to accept raises.
    fn serve(&self, py: Python<'_>) -> PyResult<u64> {
        let on_session = |line: &serde_json::Value| {
            if let Ok(mut s) = self.sessions.lock() {
                s.push(line.to_string());
            }
        };
        let mut interrupted = false;
        let mut stop = || {
            if self.stop.load(Ordering::SeqCst) {
                return true;
            }
            // Signal handlers run in the main thread only; elsewhere this is a no-op.
            interrupted |= Python::attach(|py| py.check_signals().is_err());
            interrupted
        };
        let opts = ServeOptions {
            max_sessions: self.max_sessions,
            stop: &mut stop,
            on_session: &on_session,
            name: "sci.Server",
        };
        py.detach(|| serve(&self.acceptor, &self.plan, &self.hello, &self.cfg, opts))
            .map_err(|e| PeerError::new_err(format!("accepting connections: {}", chain(&e))))
    }

    /// Asks `serve()` to stop: no new sessions, return once the running ones finish.
    fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    /// One report dict per finished session (as `sci-run --serve --report` writes one
    /// JSON line per session): peer, outcome, inferences, set-up and totals.
    #[getter]
    fn sessions(&self, py: Python<'_>) -> PyResult<Vec<Py<PyAny>>> {
        let lines = self
            .sessions
            .lock()
            .map_err(|_| PlanError::new_err("the session log is poisoned"))?
            .clone();
        lines.iter().map(|l| json_to_py(py, l)).collect()
    }

    fn __repr__(&self) -> String {
        format!("<sci.Server on {}>", self.address())
    }
}

/// The client's side: connects (retrying for `connect_timeout` seconds) and hand-shakes
/// on construction, then runs an inference per input in `infer`, all in one session
/// (one connection and OT set-up). Close it (`close()`, or use it as a context
/// manager) to end the session cleanly. The server's read timeout (`sci-run
/// --timeout`, `Server(timeout=...)`) bounds the pause between two calls, and its
/// session timeout the session's life.
#[pyclass(module = "sci._sci", frozen)]
pub struct Client {
    plan: sci_ir::Plan,
    lanes: Lanes,
    expected: u64,
    state: Mutex<ClientState>,
}

struct ClientState {
    session: Option<ClientSession>,
    /// The cost model's predictions of this session's inferences, made when a report
    /// is asked for (not on the inferences' time).
    predictor: SessionPredictor,
    /// Inferences run, and predicted so far.
    done: u64,
    predicted: u64,
    /// The last inference's report, and its prediction once made.
    last: Option<PartyReport>,
    last_prediction: Option<sci_ir::cost::predict::Prediction>,
}

#[pymethods]
impl Client {
    #[new]
    #[pyo3(signature = (plan, *, connect="127.0.0.1:7070", key=None, cert=None, peer_cert=None, threads=None, ot=None, timeout=600.0, connect_timeout=30.0, session_timeout=3600.0, insecure_plaintext=false, expected_inferences=1))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        plan: &Plan,
        connect: &str,
        key: Option<PathBuf>,
        cert: Option<PathBuf>,
        peer_cert: Option<PathBuf>,
        threads: Option<u32>,
        ot: Option<&str>,
        timeout: f64,
        connect_timeout: f64,
        session_timeout: f64,
        insecure_plaintext: bool,
        expected_inferences: u32,
    ) -> PyResult<Client> {
        let plan = plan.plan.client_view();
        check_plan(plan.program(), Party::Client).map_err(|e| exec_err(&e))?;
        let cfg = config(
            (key, cert, peer_cert),
            connect,
            insecure_plaintext,
            timeout,
            connect_timeout,
            session_timeout,
        )?;
        let threads = threads.unwrap_or(plan.program().params().threads);
        let ot = match ot {
            Some(o) => o
                .parse()
                .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("ot={o:?}: {e}")))?,
            None => plan.program().params().ot,
        };
        let expected = expected_inferences.max(1);
        let hello = Hello {
            inferences: expected,
            ..Hello::new(Party::Client, threads, ot, plan.hash(), Status::Ready)
        };
        let conn = py
            .detach(|| link::connect(connect, Party::Client, (plan.program(), &hello), &cfg))
            .map_err(|e| exec_err(&e))?;
        let session = ClientSession::new(conn.engine(plan.program()));
        let lanes = Lanes {
            threads: threads.max(1) as usize,
            duplex: cfg.tls.is_none(),
            ot,
        };
        let predictor = SessionPredictor::new(plan.program(), lanes, u64::from(expected));
        Ok(Client {
            lanes,
            expected: u64::from(expected),
            state: Mutex::new(ClientState {
                session: Some(session),
                predictor,
                done: 0,
                predicted: 0,
                last: None,
                last_prediction: None,
            }),
            plan,
        })
    }

    /// Runs the inference of `x` (one array for a single-input plan, or a dict of
    /// arrays by input name) with the server and returns the outputs as float32 arrays
    /// (one array for a single-output plan, else a dict by output name). With a leading
    /// batch axis, one inference per item, in this session, the outputs stacked alike.
    /// Raises `InputError` (before anything is sent) or `PeerError`; after a
    /// `PeerError` the session is closed.
    fn infer(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        let program = self.plan.program();
        let Inputs { sets, stacked } = arrays::input_sets(program, x)?;
        // The state is locked only with the GIL released, so a thread waiting for it
        // never holds the GIL the running inference needs back.
        let outs = py.detach(|| -> PyResult<Vec<_>> {
            let mut state = self
                .state
                .lock()
                .map_err(|_| PeerError::new_err("the client's state is poisoned"))?;
            let state = &mut *state;
            let mut outs = Vec::with_capacity(sets.len());
            for set in sets {
                let Some(session) = state.session.as_mut() else {
                    return Err(PeerError::new_err("the session is closed"));
                };
                let e = match session.infer(program, set, &mut |_| {}) {
                    Ok(e) => e,
                    Err(err) => {
                        state.session = None;
                        return Err(exec_err(&err));
                    }
                };
                state.done += 1;
                state.last = Some(e.report);
                outs.push(e.outputs.unwrap_or_default());
            }
            Ok(outs)
        })?;
        arrays::outputs(py, program, &outs, stacked)
    }

    /// The client's report of its last inference (as in `sci-run --report`): per
    /// instruction the measured seconds, bytes and rounds beside the cost model's
    /// prediction, the set-up (first inference only), the control byte and totals.
    #[getter]
    fn last_report(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let program = self.plan.program();
        let json = py.detach(|| -> PyResult<Option<String>> {
            let mut state = self
                .state
                .lock()
                .map_err(|_| PeerError::new_err("the client's state is poisoned"))?;
            let state = &mut *state;
            while state.predicted < state.done {
                state.last_prediction = Some(state.predictor.next_inference(program));
                state.predicted += 1;
            }
            let (Some(report), Some(pred)) = (&state.last, &state.last_prediction) else {
                return Ok(None);
            };
            let mut report = report.clone();
            report.add_prediction(Party::Client, pred, None);
            serde_json::to_string(&report)
                .map(Some)
                .map_err(|e| PlanError::new_err(format!("encoding the report: {e}")))
        })?;
        json.map(|j| json_to_py(py, &j)).transpose()
    }

    /// Ends the session (the server's session finishes cleanly); idempotent.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| {
            let session = self
                .state
                .lock()
                .map_err(|_| PeerError::new_err("the client's state is poisoned"))?
                .session
                .take();
            match session {
                Some(s) => s.end().map_err(|e| exec_err(&e)),
                None => Ok(()),
            }
        })
    }

    /// Whether the session is open.
    #[getter]
    fn is_open(&self) -> bool {
        self.state
            .lock()
            .map(|s| s.session.is_some())
            .unwrap_or(false)
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!(
            "<sci.Client {} lane(s), {} OT, sized for {} inference(s){}>",
            self.lanes.threads,
            self.lanes.ot.name(),
            self.expected,
            if self.is_open() { "" } else { ", closed" }
        )
    }
}

/// A fresh TLS identity, as `sci-keygen` makes: `(key_pem, cert_pem, fingerprint)` (the
/// key is secret; give the peer the certificate).
#[pyfunction]
pub fn keygen() -> PyResult<(String, String, String)> {
    let g = sci_runtime::net::tls::keygen().map_err(|e| PeerError::new_err(chain(&e)))?;
    Ok((g.key_pem, g.cert_pem, g.fingerprint))
}
