//! Connection set-up for one session: lane 0, the [`handshake`], the other `T − 1`
//! lanes, and the OT set-up of every lane.
//!
//! The listening side (by default the server) takes a new session's lane 0 from an
//! [`Acceptor`]; the connecting side (by default the client) opens it, retrying a
//! refused connection for [`TcpConfig::connect_timeout`] so the two processes may start
//! in either order. The listening side picks a fresh random [`SessionId`], awaits the
//! session's further lanes under it ([`Acceptor::expect`]) and sends it in its hello;
//! the connecting side opens lanes `1..T` presenting it ([`session::connect_lanes`]).
//! A connection that presents another id (a stray client, a second client during this
//! one's set-up, a third party trying to splice in) is never mixed into this session.
//! The hellos are exchanged on lane 0 *before* the remaining lanes are opened, so a
//! thread count mismatch is reported as such instead of leaving one side waiting for
//! connections that never come. Then both sides put every lane on the run's OT engine
//! (the hellos', which must agree; on the silent engine with the LPN set sized by the
//! plan's OT demand for the session's inferences, [`sci_ir::cost::ferret_params`], and
//! the LPN codes keyed by the session id, public and fresh per session, one seed per
//! lane: [`crate::ot::Session::with_lpn_seed`]; no extra bytes on the wire) and
//! run its set-up on every lane ([`crate::ot::OtPack::setup`], in parallel over lanes:
//! base OTs, or Ferret's bootstrapping) so that the per-instruction costs of the report
//! exclude it.

use super::handshake::{self, AbortReason, HandshakeError, Hello, Status};
use super::{ExecError, report::Cost};
use crate::crypto::Block;
use crate::net::session::{self, Acceptor, Incoming, SessionId};
use crate::net::tcp::TcpConfig;
use crate::net::{Channel, NetError, Party};
use crate::ot::{OtKind, Session};
use crate::proto::engine::Engine;
use sci_ir::Program;
use sci_ir::cost::ferret_params;
use std::net::SocketAddr;
use std::time::Instant;

/// A connected, handshaken session with its set-up cost.
#[derive(Debug)]
pub struct Connected {
    /// The lanes to the peer, OT set-up done.
    pub session: Session,
    /// The session's id.
    pub id: SessionId,
    /// The peer's address (`None` when this side connected).
    pub peer: Option<SocketAddr>,
    /// Inferences the client runs in this session ([`Hello::inferences`]).
    pub inferences: u32,
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

/// The client's number of inferences, from whichever hello is the client's.
fn client_inferences(party: Party, ours: &Hello, theirs: &Hello) -> u32 {
    match party {
        Party::Client => ours.inferences,
        Party::Server => theirs.inferences,
    }
}

/// Sets up OT on every lane, on engine `ot` (see the module docs).
fn finish(
    party: Party,
    (program, ot): (&Program, OtKind),
    channels: Vec<Channel>,
    (id, inferences): (SessionId, u32),
    peer: Option<SocketAddr>,
    start: Instant,
) -> Result<Connected, ExecError> {
    let ferret = match ot {
        OtKind::Silent => ferret_params(program, channels.len(), u64::from(inferences)),
        OtKind::Iknp => Vec::new(),
    };
    let mut session = Session::new(party, channels)
        .map_err(|e| ExecError::OtSetup(e.into()))?
        .with_engine(ot, &ferret)
        .and_then(|s| s.with_lpn_seed(Block::from_bytes(id.0)))
        .map_err(ExecError::OtSetup)?;
    session
        .run(0, |c| c.lane.ot.setup(&mut c.lane.ch, party))
        .map_err(ExecError::OtSetup)?;
    let setup = Cost::from_stats(session.stats(), start.elapsed().as_secs_f64());
    Ok(Connected {
        session,
        id,
        peer,
        inferences,
        setup,
    })
}

/// Waits (at most `cfg.connect_timeout`) for a new session's lane 0 on `acceptor` and
/// sets the session up ([`accept_incoming`]) to run `program` (this party's view of the
/// plan whose hash `hello` carries). A connection that fails TLS authentication (junk,
/// no TLS, a wrong certificate) or sends no sci hello by its set-up deadline (silent,
/// slow or not sci: [`is_junk`]) does not end the wait: the server waits on for its
/// peer until the connect timeout, and then reports the last such failure
/// ([`ExecError::Rejected`] or the handshake's), or [`ExecError::NoPeer`] if there
/// was none. A sci peer's hello that does not fit (versions, plan, abort) ends it.
pub fn accept(
    acceptor: &Acceptor,
    party: Party,
    (program, hello): (&Program, &Hello),
    cfg: &TcpConfig,
) -> Result<Connected, ExecError> {
    let deadline = Instant::now() + cfg.connect_timeout;
    let mut last = None;
    loop {
        match acceptor.next(deadline.saturating_duration_since(Instant::now())) {
            Ok(Ok(incoming)) => {
                match accept_incoming(acceptor, incoming, party, (program, hello), cfg) {
                    Err(e) if is_junk(&e) => last = Some(e),
                    done => return done,
                }
            }
            Ok(Err(r)) => last = Some(ExecError::Rejected(r)),
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                return Err(last.unwrap_or(ExecError::NoPeer(cfg.connect_timeout.as_secs_f64())));
            }
            Err(e) => return Err(ExecError::Connect(e)),
        }
    }
}

/// Whether a failed set-up came from something that is not a sci peer: no complete
/// hello by the set-up deadline (silent, dripping, closed), or bytes that are not a
/// sci hello.
pub fn is_junk(e: &ExecError) -> bool {
    matches!(
        e,
        ExecError::Handshake(
            HandshakeError::Net(_)
                | HandshakeError::BadMagic(_)
                | HandshakeError::PeerUsesTls
                | HandshakeError::Malformed(_)
        )
    )
}

/// Sets up the session whose lane 0 is `incoming`: a fresh session id, the handshake
/// (by lane 0's set-up deadline, [`Incoming::setup`], which it then lifts), the
/// further lanes (waiting at most [`TcpConfig::setup_timeout`] for them), OT (for
/// `program`, as [`accept`]).
pub fn accept_incoming(
    acceptor: &Acceptor,
    incoming: Incoming,
    party: Party,
    (program, hello): (&Program, &Hello),
    cfg: &TcpConfig,
) -> Result<Connected, ExecError> {
    let start = Instant::now();
    let Incoming {
        mut channel,
        peer,
        setup: deadline,
    } = incoming;
    let id = SessionId::fresh().map_err(|e| {
        ExecError::Connect(NetError::new(
            "choosing a session id",
            std::io::Error::other(e),
        ))
    })?;
    let lanes = acceptor.expect(id);
    let hello = Hello {
        session: id,
        ..hello.clone()
    };
    let theirs = handshake::handshake(&mut channel, &hello)?;
    deadline.lift();
    let inferences = client_inferences(party, &hello, &theirs);
    let mut channels = vec![channel];
    let t = hello.threads as usize;
    if t > 1 {
        channels.extend(
            lanes
                .collect(t - 1, cfg.setup_timeout)
                .map_err(ExecError::Connect)?,
        );
    }
    finish(
        party,
        (program, hello.ot),
        channels,
        (id, inferences),
        Some(peer),
        start,
    )
}

/// Answers a new session's lane 0 with an abort hello (e.g. [`AbortReason::Busy`]),
/// so that its peer stops at once, and closes it without reading the peer's hello.
/// Cost: one hello written (it fits the socket's buffer, so this does not wait on the
/// peer; at worst until lane 0's set-up deadline).
pub fn refuse(incoming: Incoming, hello: &Hello, reason: AbortReason) {
    let mut ch = incoming.channel;
    let hello = Hello {
        status: Status::Abort(reason),
        ..hello.clone()
    };
    let _ = ch.send(&hello.to_bytes()).and_then(|()| ch.flush());
}

/// Connects to a peer listening at `addr` (retrying refused connections for
/// `cfg.connect_timeout`) and sets up a session with it to run `program` (as
/// [`accept`]).
pub fn connect(
    addr: &str,
    party: Party,
    (program, hello): (&Program, &Hello),
    cfg: &TcpConfig,
) -> Result<Connected, ExecError> {
    let start = Instant::now();
    let mut lane0 = session::connect_first(addr, cfg).map_err(ExecError::Connect)?;
    let theirs = handshake::handshake(&mut lane0, hello)?;
    let t = hello.threads as usize;
    let mut channels = vec![lane0];
    if t > 1 {
        channels.extend(
            session::connect_lanes(addr, theirs.session, t - 1, cfg).map_err(ExecError::Connect)?,
        );
    }
    let inferences = client_inferences(party, hello, &theirs);
    finish(
        party,
        (program, hello.ot),
        channels,
        (theirs.session, inferences),
        None,
        start,
    )
}
