//! `sci-runtime`: the CrypTFlow2 protocols (and their successors) and the plan executor,
//! on the crates below it: `sci-net` (channels, crypto, packing), `sci-ot` (the OT
//! engines), `sci-he` (SCI_HE's BFV layers), `sci-cheetah` (the RLWE products),
//! re-exported here under their module names.

pub mod exec;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzz_entry;
pub mod proto;

pub use sci_cheetah as cheetah;
pub use sci_he as he;
pub use sci_net as net;
pub use sci_net::{crypto, pack};
pub use sci_ot as ot;
