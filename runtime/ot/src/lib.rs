//! `sci-ot`: oblivious transfer for sci's two parties: base OT, two correlated-OT engines (IKNP, Ferret)
//! behind one contract, the OTs derived from them once for both (1-of-2 OT,
//! random OT, correlated OT with multi-element payloads, 1-of-N OT), and
//! Kolesnikov–Kumaresan 1-of-N OT (several classes per call).
//!
//! | module | protocol | paper |
//! |---|---|---|
//! | [`base`] | Chou–Orlandi "simplest OT" over Ristretto255, transcript-hashed keys | Chou, Orlandi, LATINCRYPT 2015 (eprint 2015/267) |
//! | [`derived`] | the engines' contract ([`CorrelatedSender`], [`CorrelatedReceiver`]) and every OT derived from it: random, chosen-message, correlated (ALSZ, multi-element payloads), `(N 1)` from `⌈log₂ N⌉` random OTs | Asharov, Lindell, Schneider, Zohner, CCS 2013; Naor, Pinkas, J. Cryptology 2005 |
//! | [`iknp`] | IKNP OT extension, an engine of the contract | Ishai, Kilian, Nissim, Petrank, CRYPTO 2003 |
//! | [`kkot`] | 1-of-N OT extension with a Walsh–Hadamard code | Kolesnikov, Kumaresan, CRYPTO 2013 |
//! | [`ferret`] | Ferret silent OT: GGM single-point COT, regular multi-point COT, primal LPN, bootstrapping, per-lane COT source | Yang, Weng, Lan, Zhang, Wang, CCS 2020 |
//! | [`transpose`] | 128×n bit-matrix transpose (SSE2/AVX2 `movemask`) | — |
//! | [`pack`] | [`OtPack`]: one lazily set-up extension per family and direction | — |
//! | [`session`] | [`Session`]: `T` channels with an [`OtPack`] each, chunked parallel runs | — |
//! | [`modulus`] | [`Modulus`]: the rings `Z_{2^ℓ}` and odd `Z_n` of the correlated OTs' payloads and of every protocol's shares | CrypTFlow2 §2.2.4 |
//!
//! Costs, with λ = 128 (bits on the wire, both directions, per instance; set-up
//! once per [`OtPack`] family and direction):
//! - `(2 1)-OT_ℓ`: λ + 2ℓ; `(2 1)-ROT`: λ; `(2 1)-COT_ℓ`: λ + ℓ; COT with a
//!   payload of `W` bits (elements of widths `w_e`, `W = Σ w_e`): λ + W
//!   ([`cot_bits`]); all 2 messages (1 round for the receiver; correlated OT
//!   in several batches streamed over a full-duplex channel, 1 round in
//!   all); set-up = 128 base OTs = 32 + 128·32 bytes.
//! - `(N 1)-OT_ℓ`: 2λ + N·ℓ ([`kk_bits`], several classes `(N, ℓ)` in one
//!   call); 2 messages; set-up = 256 base OTs = 32 + 256·32 bytes.
//!
//! The extension matrix of a batch of `n` instances has `⌈n/8⌉·8` rows (the
//! receiver's first message is whole bytes per column), so the exact
//! receiver-to-sender traffic of a batch is `λ/8 · 8⌈n/8⌉` bytes for IKNP and
//! twice that for KK; the sender's answer is the packed messages,
//! `⌈n·(bits per instance)/8⌉` bytes. A batch of `n = 0` sends nothing.
//!
//! # Security and freshness
//! Semi-honest security with λ = 128. Each batch consumes fresh extension
//! columns: the base-OT seeds key AES-128 PRGs whose counters only advance
//! ([`sci_net::crypto::Prg`]), and every extended OT gets a new index used as
//! the hash tweak, so no correlation or tweak is ever reused.

pub mod base;
pub mod derived;
mod ext;
pub mod ferret;
pub mod iknp;
pub mod kkot;
pub mod modulus;
pub mod pack;
pub mod session;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod transpose;

use std::fmt::Debug;

use sci_net::NetError;
use sci_net::crypto::RandomnessError;

pub use derived::{CorrelatedReceiver, CorrelatedSender, CotFields, CotRing, cot_bits};
pub use kkot::{KkClass, kk_bits};
pub use modulus::{InvalidModulus, Modulus};
pub use pack::{OtKind, OtPack};
pub use session::{Chunk, Lane, Session, lane_seed};

/// Security parameter λ (bits).
pub const LAMBDA: usize = sci_ir::params::ot::LAMBDA as usize;

/// Errors of the OT layer.
#[derive(Debug, thiserror::Error)]
pub enum OtError {
    /// The channel failed (peer gone, short data, timeout).
    #[error(transparent)]
    Net(#[from] NetError),
    /// The OS randomness source failed.
    #[error(transparent)]
    Randomness(#[from] RandomnessError),
    /// The caller passed inconsistent arguments (lengths, widths, choices).
    #[error("invalid OT argument: {0}")]
    InvalidArgument(String),
    /// The peer sent something malformed (e.g. an invalid curve point).
    #[error("OT peer sent invalid data: {0}")]
    Protocol(String),
    /// The silent engine was asked to run on a pack given no LPN seed (the
    /// session's public seed of Ferret's codes, [`OtPack::set_lpn_seed`]).
    #[error("the silent OT engine needs the session's LPN seed (OtPack::set_lpn_seed)")]
    NoLpnSeed,
}

/// Checks a condition on the caller's arguments.
pub(crate) fn check(cond: bool, msg: impl FnOnce() -> String) -> Result<(), OtError> {
    if cond {
        Ok(())
    } else {
        Err(OtError::InvalidArgument(msg()))
    }
}

/// An unsigned integer type holding OT messages of up to [`Word::BITS`] bits.
/// Messages are reduced mod `2^bits` for the message width `bits` of a call.
pub trait Word: Copy + Default + Send + Sync + PartialEq + Debug + 'static {
    /// Width of the type.
    const BITS: u32;
    /// The low bits of `x`.
    fn from_u128(x: u128) -> Self;
    /// Zero-extension to 128 bits.
    fn to_u128(self) -> u128;
}

macro_rules! word {
    ($($t:ty),*) => {$(
        impl Word for $t {
            const BITS: u32 = <$t>::BITS;
            #[inline]
            fn from_u128(x: u128) -> Self {
                x as $t
            }
            #[inline]
            fn to_u128(self) -> u128 {
                self as u128
            }
        }
    )*};
}
word!(u8, u16, u32, u64, u128);

/// Checks a message width against the message type and the 128-bit hash.
pub(crate) fn check_bits<T: Word>(bits: u32) -> Result<(), OtError> {
    check(bits >= 1 && bits <= T::BITS.min(128), || {
        format!("message width {bits} not in 1..={}", T::BITS.min(128))
    })
}
