//! Connection set-up for one run: lane 0, the [`handshake`], the other `T − 1` lanes,
//! and the OT set-up of every lane.
//!
//! The listening side (by default the server) accepts lane 0, the connecting side (by
//! default the client) connects it, retrying a refused connection for
//! [`TcpConfig::connect_timeout`] so the two processes may start in either order. The
//! hellos are exchanged on lane 0 *before* the remaining lanes are opened, so a thread
//! count mismatch is reported as such instead of leaving one side waiting for
//! connections that never come. Then both sides run the base OTs of every lane
//! ([`crate::ot::OtPack::setup`], in parallel over lanes) so that the per-instruction
//! costs of the report exclude them.

use super::handshake::{self, Hello};
use super::{ExecError, report::Cost};
use crate::net::tcp::{self, TcpConfig};
use crate::net::{Channel, Party};
use crate::ot::Session;
use crate::proto::engine::Engine;
use sci_ir::Program;
use std::net::TcpListener;
use std::time::Instant;

/// A connected, handshaken session with its set-up cost.
#[derive(Debug)]
pub struct Connected {
    /// The lanes to the peer, OT set-up done.
    pub session: Session,
    /// Handshake and OT set-up: time from the first connection, bytes and rounds.
    pub setup: Cost,
}

impl Connected {
    /// The protocol engine over this session, with the plan's millionaires' radix.
    pub fn engine(self, program: &Program) -> (Engine, Cost) {
        (
            Engine::new(self.session, program.params().mill_radix),
            self.setup,
        )
    }
}

/// Handshakes on lane 0, then opens the other lanes with `more` and sets up OT.
fn finish(
    party: Party,
    mut lane0: Channel,
    hello: &Hello,
    start: Instant,
    more: impl FnOnce(usize) -> Result<Vec<Channel>, crate::net::NetError>,
) -> Result<Connected, ExecError> {
    handshake::handshake(&mut lane0, hello)?;
    let t = hello.threads as usize;
    let mut channels = vec![lane0];
    if t > 1 {
        channels.extend(more(t - 1).map_err(ExecError::Connect)?);
    }
    let mut session = Session::new(party, channels).map_err(|e| ExecError::OtSetup(e.into()))?;
    session
        .run(0, |c| c.lane.ot.setup(&mut c.lane.ch, party))
        .map_err(ExecError::OtSetup)?;
    let setup = Cost::from_stats(session.stats(), start.elapsed().as_secs_f64());
    Ok(Connected { session, setup })
}

/// Accepts a peer on `listener` (waiting at most `cfg.connect_timeout`, else
/// [`ExecError::NoPeer`]) and sets up a session with it.
pub fn accept(
    listener: &TcpListener,
    party: Party,
    hello: &Hello,
    cfg: &TcpConfig,
) -> Result<Connected, ExecError> {
    let lane0 = tcp::accept(listener, cfg).map_err(|e| {
        if e.kind() == std::io::ErrorKind::TimedOut {
            ExecError::NoPeer(cfg.connect_timeout.as_secs_f64())
        } else {
            ExecError::Connect(e)
        }
    })?;
    finish(party, lane0, hello, Instant::now(), |n| {
        tcp::accept_many(listener, n, cfg)
    })
}

/// Connects to a peer listening at `addr` (retrying refused connections for
/// `cfg.connect_timeout`) and sets up a session with it.
pub fn connect(
    addr: &str,
    party: Party,
    hello: &Hello,
    cfg: &TcpConfig,
) -> Result<Connected, ExecError> {
    let lane0 = tcp::connect(addr, cfg).map_err(ExecError::Connect)?;
    finish(party, lane0, hello, Instant::now(), |n| {
        tcp::connect_many(addr, n, cfg)
    })
}
