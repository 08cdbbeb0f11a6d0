//! A session's inferences, as both parties run them after [`super::link`] has
//! connected them: the client starts each inference with a control byte on lane 0
//! ([`NEXT`]) and ends the session with another ([`END`]); the server runs an
//! inference for each [`NEXT`] until [`END`]. So a client may keep one session open
//! across as many inferences as it likes (a Python `Client` across `.infer` calls)
//! without announcing their number (the handshake's [`super::Hello::inferences`] only
//! sizes the silent OT engine), and `sci-run`, the Python package and the tests share
//! this one loop.
//!
//! Cost: [`sci_ir::cost::CONTROL_BYTES`] from the client per inference, before anything
//! else of it; for the server a round when it sent last on lane 0 (an earlier
//! inference's reveal), none in the first inference (the client sent last in the OT
//! set-up). The cost model prices it ([`sci_ir::cost::Prediction::control`]) and the
//! report records it ([`PartyReport::control`]). The closing [`END`] is one more byte
//! after the last report.

use super::ExecError;
use super::executor::{self, Execution, Progress, lane_stats};
use super::report::{Cost, PartyReport};
use crate::proto::engine::Engine;
use sci_ir::{Program, Tensor};
use std::time::Instant;

/// The control byte that starts an inference.
pub const NEXT: u8 = 1;
/// The control byte that ends a session.
pub const END: u8 = 0;

/// Runs `f` on the session's lane 0, measuring the lanes' counters around it.
fn on_lane0<T>(
    engine: &mut Engine,
    f: impl FnOnce(&mut crate::net::Channel) -> Result<T, ExecError>,
) -> Result<(T, Cost), ExecError> {
    let before = lane_stats(engine);
    let t0 = Instant::now();
    let lane = engine
        .session_mut()
        .lanes_mut()
        .first_mut()
        .ok_or_else(|| ExecError::Inputs("a session without lanes".into()))?;
    let r = f(&mut lane.ch)?;
    let cost = Cost::between(&before, &lane_stats(engine), t0.elapsed().as_secs_f64());
    Ok((r, cost))
}

/// Adds the control byte's cost to an inference's report.
fn with_control(mut e: Execution, control: Cost) -> Execution {
    let t = &mut e.report.totals;
    t.seconds += control.seconds;
    t.bytes_sent += control.bytes_sent;
    t.bytes_recv += control.bytes_recv;
    t.rounds += control.rounds;
    e.report.control = control;
    e
}

/// The server's side of a session of `program` on `engine` (whose set-up cost
/// `setup`, as [`super::link::Connected::engine`] gives them): an inference for each [`NEXT`] until
/// the client's [`END`]; one report per inference (the first includes the set-up).
/// `observe` sees each inference's progress. A client that disconnects or stays silent
/// between inferences instead of ending the session is [`ExecError::Control`].
pub fn serve_session(
    program: &Program,
    (mut engine, setup): (Engine, Cost),
    observe: &mut dyn FnMut(Progress<'_>),
) -> Result<Vec<PartyReport>, ExecError> {
    let mut setup = Some(setup);
    let mut reports = Vec::new();
    loop {
        let (byte, control) = on_lane0(&mut engine, |ch| {
            let mut b = [0u8; 1];
            ch.recv(&mut b).map_err(ExecError::Control)?;
            Ok(b[0])
        })?;
        match byte {
            NEXT => {}
            END => return Ok(reports),
            b => return Err(ExecError::BadControl(b)),
        }
        let s = setup.take().unwrap_or_default();
        let e = executor::execute(program, &mut engine, None, s, observe)?;
        reports.push(with_control(e, control).report);
    }
}

/// The client's side of a session: [`ClientSession::infer`] as often as wanted, then
/// [`ClientSession::end`] (dropping the session ends it too, best effort).
#[derive(Debug)]
pub struct ClientSession {
    engine: Engine,
    /// The set-up's cost, until the first inference reports it.
    setup: Option<Cost>,
    /// Whether the session is between inferences and not ended: after a failed
    /// inference the peer may be mid-protocol, so no [`END`] is sent then.
    open: bool,
}

impl ClientSession {
    /// The client's session on `engine`, whose set-up cost `setup` (as
    /// [`super::link::Connected::engine`] gives them).
    pub fn new((engine, setup): (Engine, Cost)) -> ClientSession {
        ClientSession {
            engine,
            setup: Some(setup),
            open: true,
        }
    }

    /// Runs one inference of `program` on the encoded input set `inputs` ([`NEXT`],
    /// then [`executor::execute`]): the outputs and this party's report (the first
    /// inference's includes the set-up). `observe` sees the progress.
    pub fn infer(
        &mut self,
        program: &Program,
        inputs: Vec<Tensor>,
        observe: &mut dyn FnMut(Progress<'_>),
    ) -> Result<Execution, ExecError> {
        if !std::mem::replace(&mut self.open, false) {
            return Err(ExecError::Inputs(
                "the session is closed (an earlier inference failed or it was ended)".into(),
            ));
        }
        let ((), control) = on_lane0(&mut self.engine, |ch| {
            ch.send(&[NEXT]).map_err(ExecError::Connect)
        })?;
        let s = self.setup.take().unwrap_or_default();
        let e = executor::execute(program, &mut self.engine, Some(inputs), s, observe)?;
        self.open = true;
        Ok(with_control(e, control))
    }

    /// Ends the session ([`END`]), so the server's session finishes cleanly (nothing is
    /// sent after a failed inference).
    pub fn end(mut self) -> Result<(), ExecError> {
        self.send_end()
    }

    fn send_end(&mut self) -> Result<(), ExecError> {
        if !std::mem::replace(&mut self.open, false) {
            return Ok(());
        }
        on_lane0(&mut self.engine, |ch| {
            ch.send(&[END]).map_err(ExecError::Connect)?;
            ch.flush().map_err(ExecError::Connect)
        })
        .map(|_| ())
    }
}

impl Drop for ClientSession {
    fn drop(&mut self) {
        let _ = self.send_end();
    }
}
