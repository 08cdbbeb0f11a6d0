//! The CrypTFlow2 protocols (Rathee et al., CCS 2020) on secret shares.
//!
//! Every protocol takes and returns shares of whole tensors: arithmetic
//! shares in `Z_{2^ℓ}` are `u64` slices (values reduced mod `2^ℓ`, ℓ in
//! 1..=64), boolean shares are packed [`Bits`]. Protocols are batched: their
//! round count does not depend on the number of elements.
//!
//! What needs no communication is not here: linear ops and data movement
//! on shares (§5.1: additions, public products, transposes, padding, the
//! window sums of `Avgpool_d`, §5.1.2) are the reference interpreter's own
//! kernels applied to each share ([`sci_ir::interp::eval_op`],
//! [`sci_ir::interp::linear`]), called by the executor
//! ([`crate::exec::executor`]); average pooling
//! ([`engine::Engine::avgpool`]) is those window sums followed by [`rdiv`].
//!
//! | module | protocol | paper |
//! |---|---|---|
//! | [`and`] | AND from regular / correlated bit triples | App. A.1, A.2 |
//! | [`mill`] | millionaires' `Π_MILL^{ℓ,m}` (also `k` comparisons per input of `P1`) | Alg. 1, §3.1 |
//! | [`drelu`] | `DReLU` (and `MSB`) over `Z_{2^ℓ}` | Alg. 2 |
//! | [`drelu_field`] | `DReLU` over `Z_n`, `n` odd | Alg. 4 |
//! | [`mux`] | multiplexer | Alg. 6 |
//! | [`b2a`] | boolean to arithmetic | Alg. 7 |
//! | [`relu`] | `ReLU` over `Z_{2^ℓ}` | Alg. 8 |
//! | [`trunc`] | truncation (arithmetic shift), general and non-negative | Alg. 5, Cor. 4.2 |
//! | [`rdiv`] | division by public integers over `Z_{2^ℓ}` | Thm. 4.1, Alg. 9 |
//! | [`maxpool`] | `Maxpool_d`, `Argmax_d` (tree reduction) | §5.2.2 |
//! | [`matmul`] | OT-based matrix product, convolution, elementwise product | §5.1.1 |
//! | [`exp`] | exp of non-positive inputs: digit tables by 1-of-N OT, product tree | SIRNN |
//! | [`secmul`] | products of two shared operands (elementwise, matrix) | §5.1.1, twice |
//! | [`recip`] | reciprocal of `[1, 2]` by Goldschmidt's iteration | SIRNN |
//! | [`sigmoid`] | sigmoid and tanh from exp, reciprocal and the sign | SIRNN |
//! | [`normalize`] | range reduction: most significant bit, one-hot, `v·2^{−k}` | SIRNN |
//! | [`rsqrt`] | reciprocal square root: range reduction, Newton's iteration | SIRNN |
//! | [`spline`] | erf, GELU: piecewise cubics on public knots and shared powers | BOLT, BumbleBee |
//! | [`engine`] | every layer over all lanes of a [`crate::ot::Session`] | — |
//! | [`bits`] | packed boolean shares | — |
//!
//! # Roles
//! The paper's protocols have a party `P0` (the sender of the one-way OTs)
//! and a party `P1`. Which of the two real parties plays `P0` in one run is
//! the [`Role`] in the [`Ctx`]: every protocol on shares is symmetric, so
//! chunks run on different lanes may alternate roles and load both
//! directions of the link (`ARCHITECTURE.md`, "Runtime"). A public constant
//! is added by one party only: those the paper adds "for `b = 1`" by role
//! `P1`, the others as each module documents. The OT-based linear layers are
//! the exception: the weight owner (the server) is role `P0` in every run.
//!
//! # Messages and deadlock freedom
//! No step has both parties send a large message before reading: where both
//! must speak (opening masked AND inputs), role `P0` speaks first and role
//! `P1` answers (`exchange`); the two OTs of a multiplexer run one after
//! the other. So every protocol is safe over a transport with bounded
//! buffers (TCP). The exception is the OT-based linear layers' pipeline
//! ([`matmul`]), where both directions carry large data at once: there the
//! client reads and writes from two threads over a full-duplex channel
//! (the argument is in [`crate::ot::derived`]).
//!
//! # Randomness
//! No protocol seeds itself: each draws from the generator of its context
//! ([`Ctx::prg`], the lane's, never rewound), so a run's randomness is fresh
//! and a whole transcript is reproducible from the session's seed. In
//! production that seed comes from the operating system
//! ([`crate::ot::Session::new`]); see [`crate::crypto::Prg`].

pub mod and;
pub mod b2a;
pub mod bits;
pub mod drelu;
pub mod drelu_field;
pub mod engine;
pub mod exp;
mod kk;
pub mod matmul;
pub mod maxpool;
pub mod mill;
pub mod mux;
pub mod normalize;
pub mod rdiv;
pub mod recip;
pub mod relu;
pub mod rsqrt;
pub mod secmul;
pub mod sigmoid;
pub mod sign;
pub mod softmax;
pub mod spline;
pub mod trunc;

#[cfg(test)]
mod engine_rlwe_tests;
#[cfg(test)]
mod silent_pins;
#[cfg(test)]
pub(crate) mod testutil;

pub use bits::Bits;
pub use sci_ot::{InvalidModulus, Modulus};

use crate::crypto::{Prg, RandomnessError};
use crate::net::{Channel, NetError};
use crate::ot::{OtError, OtPack};

/// The millionaires' default radices per OT engine: the cost model's, so that
/// `sci-compile` and the runtime agree.
pub use sci_ir::cost::radix::{DEFAULT_RADIX, default_radix};

/// Errors of the protocols.
#[derive(Debug, thiserror::Error)]
pub enum ProtoError {
    /// An OT failed.
    #[error(transparent)]
    Ot(#[from] OtError),
    /// The channel failed.
    #[error(transparent)]
    Net(#[from] NetError),
    /// The OS randomness source failed.
    #[error(transparent)]
    Randomness(#[from] RandomnessError),
    /// The caller passed inconsistent arguments (lengths, widths, parameters).
    #[error("invalid protocol argument: {0}")]
    InvalidArgument(String),
    /// An HE linear layer failed ([`crate::he`]).
    #[error(transparent)]
    He(#[from] crate::he::HeError),
    /// An RLWE product or its key set-up failed ([`crate::cheetah`]).
    #[error(transparent)]
    Rlwe(#[from] crate::cheetah::CheetahError),
}

/// A modulus outside the supported ranges is an invalid argument of the protocol.
impl From<InvalidModulus> for ProtoError {
    fn from(e: InvalidModulus) -> ProtoError {
        ProtoError::InvalidArgument(e.0)
    }
}

/// Checks a condition on the caller's arguments.
pub(crate) fn check(cond: bool, msg: impl FnOnce() -> String) -> Result<(), ProtoError> {
    if cond {
        Ok(())
    } else {
        Err(ProtoError::InvalidArgument(msg()))
    }
}

/// Checks a ring width ℓ (1..=64).
pub(crate) fn check_ell(ell: u32) -> Result<(), ProtoError> {
    check((1..=64).contains(&ell), || {
        format!("ring width {ell} not in 1..=64")
    })
}

/// Which of the paper's two parties this party plays in one protocol run (`P0`:
/// sender of the one-way OTs, first to speak in an exchange); the cost model's
/// [`sci_ir::params::Role`], so that transcripts and runs name the roles alike.
pub use sci_ir::params::Role;

/// What a protocol run needs: the channel to the peer, the OT states of that
/// channel, the generator the run draws its randomness from, this party's
/// role in the run and the millionaires' radix `m` (1..=8; both parties must
/// use the same).
#[derive(Debug)]
pub struct Ctx<'a> {
    /// The channel.
    pub ch: &'a mut Channel,
    /// The OT extension states of this channel.
    pub ot: &'a mut OtPack,
    /// The randomness of the run (the lane's generator: seeded from the OS
    /// in production, from a test's seed in tests).
    pub prg: &'a mut Prg,
    /// This party's role.
    pub role: Role,
    /// Radix `m` of the millionaires' protocol.
    pub radix: u32,
}

impl<'a> Ctx<'a> {
    /// A context with the [`DEFAULT_RADIX`].
    pub fn new(ch: &'a mut Channel, ot: &'a mut OtPack, prg: &'a mut Prg, role: Role) -> Self {
        Ctx {
            ch,
            ot,
            prg,
            role,
            radix: DEFAULT_RADIX,
        }
    }

    /// The same context with radix `m`.
    pub fn with_radix(mut self, radix: u32) -> Self {
        self.radix = radix;
        self
    }
}

/// Both parties send a message of the same length and receive the other's:
/// role `P0` sends first, role `P1` reads first, so the exchange cannot
/// deadlock on bounded buffers. One round.
pub(crate) fn exchange(ctx: &mut Ctx<'_>, mine: &[u8]) -> Result<Vec<u8>, ProtoError> {
    match ctx.role {
        Role::P0 => {
            ctx.ch.send(mine)?;
            ctx.ch.flush()?;
            Ok(ctx.ch.recv_vec(mine.len())?)
        }
        Role::P1 => {
            let theirs = ctx.ch.recv_vec(mine.len())?;
            ctx.ch.send(mine)?;
            ctx.ch.flush()?;
            Ok(theirs)
        }
    }
}
