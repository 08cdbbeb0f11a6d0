//! Ferret silent OT (Yang, Weng, Lan, Zhang, Wang, "Ferret: Fast Extension
//! for coRRElated oT with small communication", CCS 2020, eprint 2020/924),
//! semi-honest: random correlated OTs at under half a bit each.
//!
//! | module | construction | paper |
//! |---|---|---|
//! | [`spcot`] | single-point COT from a GGM tree (punctured PRF) | Boyle, Couteau, Gilboa, Ishai, Kohl, Scholl, CCS/CRYPTO 2019; Ferret §4 |
//! | [`mpcot`] | multi-point COT with regular noise (`t` trees of `n/t` leaves) | Ferret §5 |
//! | [`lpn`] | primal-LPN expansion with a local linear code, `d = 10`, keyed per session and iteration | Ferret §5.1, §6 |
//! | `source` | [`FerretSender`] / [`FerretReceiver`]: per-lane COT source, bootstrapping from IKNP, outputs generated lazily a chunk of trees at a time | Ferret §5.3 |
//! | `pads` | the engine's contract ([`crate::derived`]): its random COTs derandomised to chosen choices (1 bit each), or handed out with their random choices | — |
//!
//! # The correlation
//! As the rows of IKNP ([`super::ext`]): the sender holds a global `Δ` and
//! a block `q_j` per COT, the receiver a random choice bit `b_j` and `t_j =
//! q_j ⊕ b_j·Δ`. Here `Δ` has low bit 1 and every `q_j` low bit 0, so `b_j`
//! is the low bit of `t_j` (emp-ot's convention; `Δ` keeps 127 secret bits).
//!
//! # One iteration (parameters `(n, k, t)`, `n = t·2^h`)
//! From `k + t·h` COTs reserved by the previous iteration: the multi-point
//! COT gives `(e, w = v ⊕ e·Δ)` over `n` positions, `e` of weight `t`, one
//! nonzero per block of `2^h` (one message from the sender, `t·(2h + 1)`
//! blocks); the LPN encoding with the `k` secret COTs gives the `n` outputs,
//! whose first `k + t·h` are the next iteration's reserve. Each iteration
//! has a code of its own (next section). Parameters and
//! exact bytes: [`sci_ir::cost::ferret`] ([`FERRET`]: with the production
//! set, 559,440 bytes per 10,001,981 COTs, 0.447 bits per COT).
//!
//! # The LPN codes
//! The `k × n` matrix is public, but not one constant: iteration `i` (the
//! bootstrapping one is 0, then each extension counts on) runs on the code
//! keyed by `(seed, i)` and its parameter set (`lpn::code_key`), where
//! `seed` is a public random seed fresh per session, given to both parties'
//! sources ([`FerretSender::new`], [`FerretReceiver::new`]; through
//! [`crate::OtPack::set_lpn_seed`]). As in emp-ot's Ferret (which draws
//! its LPN seed per session and re-keys it each iteration), no two sessions
//! or deployments, and no two iterations of one, share a matrix, so nothing
//! can be precomputed against a fixed code. In `sci-run` (and the Python
//! package) the seed is the session id, 16 fresh random bytes that the
//! listening side draws and both hellos already carry
//! (`sci-runtime`'s `exec::handshake`): no extra bytes, so the cost model is
//! unchanged; each lane uses [`crate::lane_seed`] of it. Both parties
//! count iterations alike, so they build the same codes; with different
//! seeds their outputs are not COTs. A pack without a seed refuses to run
//! the silent engine ([`crate::OtError::NoLpnSeed`]).
//!
//! # Memory
//! Output `i` depends only on tree `i / 2^h` and column `i` of the code, so
//! the source generates an iteration's outputs as it hands them out, a
//! chunk of whole trees (1 MiB) at a time, and keeps per side two reserves
//! (the next iteration's, and the LPN secret of the current one) and one
//! chunk: ≈ 21 MB with the production set, not the `16·n` = 170 MB of a
//! whole iteration. The derived OTs keep what their answers need: the
//! outputs, and for correlated OT the pads of one piece.
//!
//! # Security
//! Semi-honest, λ = 128 (Δ: 127 bits); the LPN set's security as cited at
//! [`FERRET`]. The GGM PRG and the pads are fixed-key AES in the random
//! permutation model ([`sci_net::crypto::Mmo`], [`sci_net::crypto::Tccr`] with a
//! new tweak per COT). Tree seeds and `Δ` come from the lane's [`Prg`]
//! (`sci_net::crypto::Prg`), so from the session's OS seed.

pub(crate) mod lpn;
pub(crate) mod mpcot;
mod pads;
mod source;
pub(crate) mod spcot;

pub use sci_ir::params::ferret::{FERRET, FerretParams, LpnParams};

/// A small chaining LPN set for tests, **insecure** (`k` far too small):
/// iterations of `64·2^10` COTs, 60,800 handed out each, bootstrapped from
/// 1,168 IKNP COTs, so that tests' calls straddle the engine's iterations.
pub const TEST_FERRET: FerretParams = FerretParams {
    boot: LpnParams {
        k: 1024,
        t: 16,
        log_leaves: 9,
    },
    main: LpnParams {
        k: 4096,
        t: 64,
        log_leaves: 10,
    },
};
pub use source::{FerretReceiver, FerretSender};
