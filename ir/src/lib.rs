//! `sci-ir`: the typed fixed-point IR of sci — the contract between the frontend, the
//! passes, the compiler, the plan files and the runtime.
//!
//! * [`types`]: value types — encoding (ring `Z_{2^ℓ}`, prime field `Z_n`, or f32), scale,
//!   shape, owner.
//! * [`ops`]: the closed set of operations ([`Op`]) with their exact semantics.
//! * [`program`]: the SSA arena ([`Program`]) and its [`Builder`], which type-checks
//!   every instruction ([`check`]), so every `Program` is well-typed.
//! * [`backend`]: SCI_OT or SCI_HE — which protocols run the linear layers, the HE
//!   field of every width and the BFV parameters.
//! * [`rlwe`]: parameters, layouts and exact costs of the RLWE products over `Z_{2^ℓ}`
//!   shares (Cheetah's coefficient encoding).
//! * [`secure`]: whether a program can be executed securely by the runtime.
//! * [`cost`]: the cost model — exact bytes per party and rounds of every protocol and
//!   of every instruction (shared by the compiler's report, the passes and the runtime).
//! * [`analysis`]: static analyses shared by the passes and the runtime (non-negativity).
//! * [`fixed`]: fixed-point encode/decode and the exact `trunc` / `rdiv` (CrypTFlow2
//!   equation 2, Corollary 4.2, Appendix E).
//! * [`tensor`]: concrete tensors (constant data, interpreter inputs and outputs).
//! * [`text`]: the textual IR — printer and lalrpop parser, exact round trip.
//! * [`math`]: the fixed-point math functions (exp, reciprocal, sigmoid/tanh, rsqrt,
//!   range reduction) with their parameters and error bounds: the definitions the
//!   interpreter runs and the protocols equal.
//! * [`spline`]: piecewise cubics (erf, GELU) on public knots and shared powers.
//! * [`interp`]: the reference interpreter (the oracle of every protocol and of the
//!   executor; also the frontend's float interpreter), with range tracking.
//! * [`plan`]: plan files — versioned, checksummed binary form with a public part and a
//!   server-only secret part; the client view; the program hash.
//! * [`npy`]: NumPy `.npy` reading and writing (inputs, outputs, validation sets).
//! * [`dataset`]: labelled data sets (`.npz` or a directory of `x.npy` / `y.npy`) for
//!   accuracy measurements and autotuning.
//!
//! The semantics (also summarised in the repository's `ARCHITECTURE.md`): arithmetic wraps in the ring (is mod n
//! in the field); products add scales; `trunc` is the floor shift of the signed value;
//! division by a public integer is the paper's `rdiv`; MaxPool/ArgMax break ties by first
//! index.

pub mod analysis;
pub mod backend;
pub mod check;
pub mod cost;
pub mod dataset;
mod error;
pub mod fixed;
#[doc(hidden)]
pub mod fuzz_entry;
mod id;
pub mod interp;
pub mod math;
pub mod npy;
pub mod ops;
pub mod params;
pub mod plan;
pub mod program;
pub mod rlwe;
pub mod schedule;
pub mod secure;
pub mod spline;
pub mod tensor;
pub mod text;
pub mod types;

pub use backend::{Backend, BackendError, OtKind};
pub use error::{CheckError, CheckErrorKind};
pub use id::{ConstId, ValueId};
pub use ops::{Conv2d, ConvGeom, Op, Pool2d, PoolWindow, Scalar};
pub use plan::{Plan, PlanError};
pub use program::{Builder, Instr, Params, ParamsError, ProductBackendError, Program};
pub use secure::SecureError;
pub use tensor::{Data, Tensor, TensorError};
pub use text::ParseError;
pub use types::{Encoding, Owner, Type, TypeError};
