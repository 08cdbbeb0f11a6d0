//! Both parties in one process: the server and the client on two threads, connected over
//! loopback TCP exactly as two `sci-run` processes would be (handshake, OT set-up, `T`
//! lanes). Used by `sci-run --local`, the demo and the end-to-end tests.
//!
//! The client runs on the client's view of the plan ([`Plan::client_view`]): it never
//! holds the weights. Several inputs may be run one after another in the same session
//! ([`super::session`]: the client's hello announces how many, to size the silent OT
//! engine; fresh protocol randomness for each; the OT extensions simply continue), which is how the accuracy test runs a whole test split.

use super::ExecError;
use super::executor::{self, Execution, Progress};
use super::handshake::{Hello, Status};
use super::link;
use super::report::PartyReport;
use super::session::{self, ClientSession};
use crate::net::Party;
use crate::net::session::Acceptor;
use crate::net::tcp::TcpConfig;
use crate::ot::OtKind;
use sci_ir::{Plan, Tensor};

/// The result of [`run_pair`].
#[derive(Debug)]
pub struct PairRun {
    /// The client's outputs for each input set, in order.
    pub outputs: Vec<Vec<Tensor>>,
    /// The server's report for each input set (the first includes the set-up).
    pub server: Vec<PartyReport>,
    /// The client's report for each input set.
    pub client: Vec<PartyReport>,
}

/// A failure of one of the two parties.
#[derive(Debug, thiserror::Error)]
#[error("{}: {error}", match party { Party::Server => "server", Party::Client => "client" })]
pub struct PairError {
    /// The party whose error is the root cause.
    pub party: Party,
    /// Its error.
    pub error: ExecError,
}

/// Runs `plan` (with its weights) on each of `inputs` (encoded input sets, as
/// [`super::io::load_inputs`] returns them) with both parties in this process, over
/// `threads` loopback TCP connections (with `cfg.link`, each party sends on an emulated
/// link of its own: [`crate::net::emulate`]). `observe` sees the client's progress. On failure
/// the root cause is returned: a party's own error rather than the other's
/// "peer disconnected". Both run the plan's OT engine ([`run_pair_on`] chooses another).
pub fn run_pair(
    plan: &Plan,
    inputs: Vec<Vec<Tensor>>,
    threads: u32,
    cfg: &TcpConfig,
    observe: &mut dyn FnMut(Progress<'_>),
) -> Result<PairRun, PairError> {
    let ot = plan.program().params().ot;
    run_pair_on(plan, inputs, (threads, ot), cfg, observe)
}

/// [`run_pair`] on OT engine `ot` (e.g. `sci-run --local --ot`), whatever the plan's.
pub fn run_pair_on(
    plan: &Plan,
    inputs: Vec<Vec<Tensor>>,
    (threads, ot): (u32, OtKind),
    cfg: &TcpConfig,
    observe: &mut dyn FnMut(Progress<'_>),
) -> Result<PairRun, PairError> {
    let server_err = |error| PairError {
        party: Party::Server,
        error,
    };
    let program = plan.program();
    executor::check_plan(program, Party::Server).map_err(server_err)?;
    let client_plan = plan.client_view();
    let acceptor =
        Acceptor::bind("127.0.0.1:0", cfg).map_err(|e| server_err(ExecError::Connect(e)))?;
    let addr = acceptor.local_addr().to_string();
    let client_cfg = cfg.with_fresh_link();
    let (srv, cl) = std::thread::scope(|sc| {
        let srv = sc.spawn(|| -> Result<Vec<PartyReport>, ExecError> {
            let hello = Hello::new(Party::Server, threads, ot, plan.hash(), Status::Ready);
            let conn = link::accept(&acceptor, Party::Server, (program, &hello), cfg)?;
            session::serve_session(program, conn.engine(program), &mut |_| {})
        });
        let cl = (|| -> Result<Vec<Execution>, ExecError> {
            let hello = Hello {
                inferences: u32::try_from(inputs.len())
                    .map_err(|_| ExecError::Inputs("more than 2^32 input sets".into()))?,
                ..Hello::new(
                    Party::Client,
                    threads,
                    ot,
                    client_plan.hash(),
                    Status::Ready,
                )
            };
            let conn = link::connect(
                &addr,
                Party::Client,
                (client_plan.program(), &hello),
                &client_cfg,
            )?;
            let mut session = ClientSession::new(conn.engine(client_plan.program()));
            let execs = inputs
                .into_iter()
                .map(|x| session.infer(client_plan.program(), x, observe))
                .collect::<Result<Vec<_>, _>>()?;
            session.end()?;
            Ok(execs)
        })();
        let srv = srv
            .join()
            .unwrap_or_else(|_| Err(ExecError::Inputs("the server thread panicked".into())));
        (srv, cl)
    });
    match (srv, cl) {
        (Ok(server), Ok(execs)) => {
            let mut outputs = Vec::with_capacity(execs.len());
            let mut client = Vec::with_capacity(execs.len());
            for e in execs {
                outputs.push(e.outputs.unwrap_or_default());
                client.push(e.report);
            }
            Ok(PairRun {
                outputs,
                server,
                client,
            })
        }
        (Err(s), Err(c)) if c.peer_gone() && !s.peer_gone() => Err(server_err(s)),
        (_, Err(error)) => Err(PairError {
            party: Party::Client,
            error,
        }),
        (Err(error), Ok(_)) => Err(server_err(error)),
    }
}
