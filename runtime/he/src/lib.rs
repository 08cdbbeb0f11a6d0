//! `sci-he`: SCI_HE's linear layers: convolutions, matrix products and elementwise
//! products with the server's weights, by homomorphic encryption (BFV, the
//! `fhe` crate), over the prime field `Z_t` of the shares (CrypTFlow2 §2.2.4,
//! §5.1.1 "HE based computation", App. F; Gazelle, Juvekar et al. 2018;
//! Delphi, Mishra et al. 2020).
//!
//! # Protocol (one round trip per layer)
//! The client (party 1) holds the share `x_1`, the server (party 0) `x_0` and
//! the weights `W`; they want shares of `W·(x_0 + x_1) mod t`.
//! 1. The client packs `x_1` into SIMD slot vectors ([`conv`], [`fc`],
//!    [`mul`] describe the packings), encrypts them under its secret key and
//!    sends them (`c_1` of each ciphertext as a 32-byte seed).
//! 2. The server adds `x_0` (as plaintexts), computes `W·x` homomorphically
//!    (plaintext products, rotations), subtracts a uniformly random mask `r`
//!    in **every** slot, re-randomizes and floods the noise (below), switches
//!    down to the smallest modulus that still decrypts, and sends the result.
//!    Its output share is `r` at the output positions.
//! 3. The client decrypts; its output share is `W·x − r` at the output
//!    positions. Slots that hold no output (packing padding, partial sums) are
//!    masked like the others and ignored.
//!
//! Cost: the client sends `in_cts` ciphertexts at 4 moduli (174 bits,
//! ≈178 KB each) and receives `out_cts` at 2 moduli (86 bits, ≈176 KB each);
//! the counts depend only on the shapes. Independent layers run together
//! ([`layer::run_all`], the executor's product waves): the client sends every
//! layer's ciphertexts in one flight, the server answers all in one, so they
//! share the round trip; the bytes are the layers' summed. Key material (13 Galois keys ≈ 11.6
//! MB and a public key ≈ 0.2 MB) goes once per session from the client.
//!
//! # Parameters ([`params`])
//! `N = 8192`; ciphertext modulus `Q = q_0···q_4`, five NTT primes of 43–44
//! bits, 218 bits in all — the largest `log₂ Q` for 128-bit security at `N =
//! 8192` in the HomomorphicEncryption.org security standard (Albrecht et al.,
//! 2018, Tables 1–3: 218 bits for uniform, error-distributed and ternary
//! secrets alike; `fhe` draws the secret and the errors from a centered
//! binomial distribution of variance 10, σ ≈ 3.2, the standard's error
//! width). Ciphertexts live at `q_0···q_3`; `q_4` is the special modulus of
//! the hybrid key switching (Galois keys at the full modulus). The plaintext
//! modulus is the field of the shares: a prime `t ≡ 1 (mod 2N)` (batching:
//! `N` slots, two rows of 4096 that rotate cyclically, and a row swap).
//!
//! # Circuit privacy ([`noise`])
//! The client knows the secret key, so it can read the noise of what it
//! decrypts; the noise of `W·x` depends on `W`, and the second component of
//! the ciphertext is a known linear function of the client's own ciphertexts.
//! The server therefore (a) adds a fresh public-key encryption of zero,
//! whose `a·u + e_2` makes the second component pseudorandom (RLWE with the
//! server's fresh `u`), and (b) floods: adds to every coefficient of the
//! first component a uniform integer in `[−F, F)`, `F = 2^f`. With `B` a
//! worst-case bound on the noise of the computation plus that of the
//! encryption of zero (both computed from the layer's structure, [`noise`]),
//! the result's noise is within statistical distance `N·B/(2F)` per
//! ciphertext of `U[−F, F)` — independent of `W`. `F` is the largest power of
//! two that keeps decryption correct; a layer whose output ciphertexts
//! together exceed distance `2^−40` ([`noise::STAT_SEC`]) is refused with
//! [`HeError::NoiseBudget`] (this happens only for plaintext moduli above
//! ≈ 2^43). The modulus switch afterwards is a public function of the
//! flooded ciphertext. The client's view is thus simulated from its output
//! share `W·x − r`, which is uniform.
//!
//! **The 2^−40 is per layer.** Distances add up (triangle inequality over
//! independent floodings): a plan of `L` HE layers is within `L·2^−40` of a
//! weight-independent view per inference, and `I` inferences with the same
//! weights within `I·L·2^−40` (e.g. 50 layers and 2^20 inferences: 2^−14.4).
//! A deployment expecting more inferences than that budget allows should use a
//! larger [`noise::STAT_SEC`] (a smaller plaintext modulus leaves the room).
//!
//! **Hiding the weights assumes an honest client key** (the semi-honest model of
//! the whole protocol): the bound `B` is computed for a public key and Galois
//! keys generated as specified (fresh errors within `[−20, 20]`). The server
//! validates what it can check (shapes, levels, reduced coefficients, the
//! variable-time flag cleared), but a malicious client that chooses keys or
//! ciphertexts with large errors could push the noise past `F` and learn about `W`; defending
//! against that needs a proof of well-formed keys, which sci does not do.
//!
//! Rotations are applied to products, so the key-switching noise adds to the
//! bound, except where a convolution rotates its inputs before the products
//! ([`conv`]: only where the worst-case bound, multiplied by the plaintexts,
//! still floods within the statistical distance); the bound used for the
//! flooding counts either way.

pub mod conv;
pub(crate) mod encode;
pub mod fc;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzz_entry;
pub mod keyswitch;
pub mod layer;
pub mod mul;
pub mod noise;
pub mod params;
pub(crate) mod rng;
pub mod session;
pub(crate) mod wire;

#[cfg(test)]
mod tests;

pub use layer::Packing;
pub use params::Params;
pub use session::Keys;

use sci_net::NetError;
use sci_net::crypto::RandomnessError;

/// Errors of the HE layers.
#[derive(Debug, thiserror::Error)]
pub enum HeError {
    /// The `fhe` library reported an error.
    #[error("BFV: {0}")]
    Fhe(String),
    /// The channel failed.
    #[error(transparent)]
    Net(#[from] NetError),
    /// The OS randomness source failed.
    #[error(transparent)]
    Randomness(#[from] RandomnessError),
    /// The caller passed inconsistent arguments (shapes, moduli, weights).
    #[error("invalid HE layer argument: {0}")]
    InvalidArgument(String),
    /// The peer sent something malformed.
    #[error("malformed message from the peer: {0}")]
    Malformed(String),
    /// The plaintext modulus leaves too little room for noise flooding.
    #[error(
        "the noise budget of this layer is exhausted: flooding hides the weights only up to statistical distance 2^{achieved:.1} (required 2^-{required}); use a smaller field (fewer bits)"
    )]
    NoiseBudget {
        /// log₂ of the achieved statistical distance.
        achieved: f64,
        /// The required security parameter.
        required: u32,
    },
}

impl From<fhe::Error> for HeError {
    fn from(e: fhe::Error) -> Self {
        HeError::Fhe(e.to_string())
    }
}

impl From<fhe_math::Error> for HeError {
    fn from(e: fhe_math::Error) -> Self {
        HeError::Fhe(e.to_string())
    }
}

/// Checks a condition on the caller's arguments.
pub(crate) fn check(cond: bool, msg: impl FnOnce() -> String) -> Result<(), HeError> {
    if cond {
        Ok(())
    } else {
        Err(HeError::InvalidArgument(msg()))
    }
}
