//! The plan executor and what surrounds it in a run of `sci-run`: connection set-up
//! ([`link`]), the [`handshake`], the client's inputs and outputs ([`io`]), the walk
//! over the plan ([`executor`]) with its local steps (the reference interpreter's
//! kernels, [`sci_ir::interp::eval_op`]) and its protocol calls
//! (through [`crate::proto::engine::Engine`], which spreads each layer over the `T`
//! lanes), the cost [`report`], and both parties in one process ([`pair`]).
//!
//! A run: both parties load the plan; the server checks it has the weights and the
//! client encodes its input ([`io::load_inputs`]); they connect and handshake (magic,
//! versions, roles, plan hash, thread count — [`handshake`]), set up OT on every lane,
//! and execute the plan instruction by instruction ([`executor::execute`]). The client
//! ends with the outputs; the server learns nothing. See [`executor`] for what each
//! party holds and why sharing the input as `(0, x)` is secure.
//!
//! # Errors
//! Every failure is an [`ExecError`] with a message for the user; none panics. A peer
//! that disconnects or stays silent past the read timeout makes the current
//! instruction fail with [`ExecError::Step`], whose message says which instruction and
//! whether the peer went away ([`ExecError::peer_gone`]) or timed out
//! ([`ExecError::timed_out`]). When one party stops with an error it drops its
//! connections, so the other sees the disconnection at its next read.

pub mod executor;
pub mod handshake;
pub mod io;
pub mod link;
pub mod memory;
pub mod pair;
pub mod report;
pub mod serve;
pub mod session;

pub use executor::{Execution, Progress, check_plan, execute};
pub use handshake::{Hello, Status};
pub use pair::{PairError, PairRun, run_pair, run_pair_on};
pub use session::{ClientSession, serve_session};

use crate::net::NetError;
use crate::ot::OtError;
use crate::proto::ProtoError;
use std::io::ErrorKind;

/// The default TCP port of `sci-run`: the server listens on `127.0.0.1:7070` and the
/// client connects there unless told otherwise.
pub const DEFAULT_PORT: u16 = 7070;

/// Why one instruction failed.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// A protocol failed (its channel, OT or randomness, or invalid arguments).
    #[error(transparent)]
    Proto(#[from] ProtoError),
    /// The channel failed (revealing an output).
    #[error(transparent)]
    Net(#[from] NetError),
    /// A local computation (the reference interpreter's kernels) failed, e.g. a `trunc
    /// nonneg` on a negative value.
    #[error(transparent)]
    Local(#[from] sci_ir::interp::InterpError),
    /// The instruction cannot be executed by this runtime.
    #[error("{0}")]
    Unsupported(String),
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The plan is not securely executable.
    #[error("the plan cannot be executed securely: {0}")]
    NotSecure(sci_ir::SecureError),
    /// The plan's values are not in a ring `Z_{2^ℓ}`.
    #[error(
        "the plan's values are encoded as {0}; the runtime executes plans over a ring Z_2^ℓ (SCI_OT) or an HE field Z_n (SCI_HE): compile with sci-compile --backend ot or he"
    )]
    Encoding(String),
    /// The server's plan has no weights.
    #[error(
        "the server's plan has no weights (it is a client plan, written by sci-compile --client-plan): give party 0 the full plan"
    )]
    NoWeights,
    /// A `trunc` is marked `nonneg` but its operand is not provably non-negative.
    #[error(
        "%{name} = trunc nonneg: the operand %{operand} is not provably non-negative (sci-compile marks only proven truncations: recompile the plan)"
    )]
    UnprovenNonneg {
        /// The truncation.
        name: String,
        /// Its operand.
        operand: String,
    },
    /// The plan needs more memory than allowed ([`memory`]).
    #[error(
        "the plan needs about {need:.2} GiB ({sessions} session(s) of {tensors:.2} GiB of tensors and {threads} thread(s) × {lane:.3} GiB of OT engine), more than the memory limit of {limit:.2} GiB: use fewer threads or sessions, or raise the limit (sci-run --memory-limit) if the machine has the memory"
    )]
    MemoryLimit {
        /// The estimate, GiB.
        need: f64,
        /// Tensors of one session, GiB.
        tensors: f64,
        /// Threads per session.
        threads: u64,
        /// One lane's OT engine, GiB.
        lane: f64,
        /// Sessions at once.
        sessions: u64,
        /// The limit, GiB.
        limit: f64,
    },
    /// The client's inputs do not fit the plan.
    #[error("inputs: {0}")]
    Inputs(String),
    /// No peer connected in time.
    #[error("no peer connected within {0} s")]
    NoPeer(f64),
    /// Connecting, accepting or flushing failed.
    #[error("connection: {0}")]
    Connect(NetError),
    /// A connection failed TLS authentication (wrong or missing peer certificate).
    #[error("{0}")]
    Rejected(crate::net::session::Rejected),
    /// The handshake failed or a party stopped in it.
    #[error(transparent)]
    Handshake(#[from] handshake::HandshakeError),
    /// The OT set-up failed.
    #[error("OT set-up: {0}")]
    OtSetup(OtError),
    /// SCI_HE's key set-up failed.
    #[error("HE key set-up: {}", describe(.0))]
    HeSetup(Box<StepError>),
    /// Between inferences, the client neither started another nor ended the session
    /// (it disconnected or stayed silent past the read timeout).
    #[error("waiting for the client's next inference: {}", describe_net(.0))]
    Control(NetError),
    /// The client sent a control byte that is neither [`session::NEXT`] nor
    /// [`session::END`].
    #[error("the client's control byte {0} is neither 'next' (1) nor 'end' (0)")]
    BadControl(u8),
    /// An instruction failed.
    #[error("%{name} = {op} (instruction {} of {count}): {}", index + 1, describe(cause))]
    Step {
        /// Its position.
        index: usize,
        /// Instructions in the plan.
        count: usize,
        /// The value's name.
        name: String,
        /// The op.
        op: &'static str,
        /// What went wrong.
        cause: Box<StepError>,
    },
}

/// The kind of the channel error behind an OT error, if any.
fn ot_kind(e: &OtError) -> Option<ErrorKind> {
    match e {
        OtError::Net(n) => Some(n.kind()),
        _ => None,
    }
}

/// The kind of the channel error behind a step's error, if any.
fn step_kind(e: &StepError) -> Option<ErrorKind> {
    match e {
        StepError::Net(n) => Some(n.kind()),
        StepError::Proto(ProtoError::Net(n)) => Some(n.kind()),
        StepError::Proto(ProtoError::Ot(o)) => ot_kind(o),
        StepError::Proto(ProtoError::He(crate::he::HeError::Net(n))) => Some(n.kind()),
        StepError::Proto(ProtoError::Rlwe(crate::cheetah::CheetahError::Net(n))) => Some(n.kind()),
        StepError::Proto(_) => None,
        StepError::Local(_) | StepError::Unsupported(_) => None,
    }
}

/// An error behind a channel error of `kind` (if any), with what it means for the user.
fn explain(kind: Option<ErrorKind>, e: &dyn std::fmt::Display) -> String {
    match kind {
        Some(ErrorKind::UnexpectedEof | ErrorKind::BrokenPipe | ErrorKind::ConnectionReset) => {
            format!("the peer disconnected ({e})")
        }
        Some(ErrorKind::TimedOut) => format!("timed out waiting for the peer ({e})"),
        _ => e.to_string(),
    }
}

/// A channel error with what it means for the user.
fn describe_net(e: &NetError) -> String {
    explain(Some(e.kind()), e)
}

/// A step's error with what it means for the user.
fn describe(e: &StepError) -> String {
    explain(step_kind(e), e)
}

impl ExecError {
    /// The kind of the channel error behind this error, if any.
    fn net_kind(&self) -> Option<ErrorKind> {
        match self {
            ExecError::Step { cause, .. } | ExecError::HeSetup(cause) => step_kind(cause),
            ExecError::Connect(e) | ExecError::Control(e) => Some(e.kind()),
            ExecError::Rejected(r) => Some(r.error.kind()),
            ExecError::OtSetup(e) => ot_kind(e),
            ExecError::Handshake(handshake::HandshakeError::Net(e)) => Some(e.kind()),
            _ => None,
        }
    }

    /// Whether the run failed because the peer went away.
    pub fn peer_gone(&self) -> bool {
        matches!(
            self.net_kind(),
            Some(ErrorKind::UnexpectedEof | ErrorKind::BrokenPipe | ErrorKind::ConnectionReset)
        )
    }

    /// Whether the run failed because a read timed out.
    pub fn timed_out(&self) -> bool {
        self.net_kind() == Some(ErrorKind::TimedOut)
    }
}
