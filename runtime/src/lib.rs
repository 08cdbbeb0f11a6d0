//! `sci-runtime`: channels, crypto, OT, the CrypTFlow2 protocols and the plan executor.

pub mod cheetah;
pub mod exec;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzz_entry;
pub mod he;
pub mod ot;
pub mod proto;

pub use sci_net as net;
pub use sci_net::{crypto, pack};
