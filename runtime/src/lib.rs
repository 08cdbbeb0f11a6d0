//! `sci-runtime`: channels, crypto, OT, the CrypTFlow2 protocols and the plan executor.

pub mod cheetah;
pub mod crypto;
pub mod exec;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzz_entry;
pub mod he;
pub mod net;
pub mod ot;
pub mod pack;
pub mod proto;
