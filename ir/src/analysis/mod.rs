//! Static analyses of programs, shared by the passes and the runtime.
//!
//! * [`nonneg`]: which values are provably non-negative on every input (sound under the
//!   wrapping semantics of the ring): the `mark_nonneg` pass uses it to pick the cheaper
//!   truncation, the executor to pick the cheaper comparison of MaxPool and ArgMax.
//!
//! An analysis reads only the *public* part of a program (never server constants), so
//! both parties of a secure run, the server with its plan and the client with the
//! client view, reach the same result and choose the same protocols.

pub mod nonneg;
