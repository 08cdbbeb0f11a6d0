//! `sci-cheetah`: products by the server's weights over `Z_{2^ℓ}` shares by RLWE with
//! coefficient encoding and no rotations (Huang, Lu, Hong, Ding, "Cheetah:
//! Lean and Fast Secure Two-Party Deep Neural Network Inference", USENIX
//! Security 2022): convolutions with every attribute of the IR (strides as
//! phase channels, pads, dilations, groups, batch), matrix products in both
//! orientations, per-channel scaling (a depthwise 1×1 convolution), and
//! products of two secret matrices ([`secret`]). The
//! parameters, layouts, noise analysis and exact byte counts are in
//! [`sci_ir::rlwe`].
//!
//! # Protocol (one round trip per product)
//! The client (party 1) holds `x_1`, the server `x_0` and the weights `W`,
//! `x = x_0 + x_1 mod 2^ℓ`.
//! 1. Once per session and parameter set the client sends its public key
//!    ([`keys`], [`Keys::setup`]: the engine's `rlwe_keys` sends the plan's sets
//!    before its first instruction; a set not yet set up rides ahead of the first
//!    product that needs it). Independent products run as one exchange
//!    ([`run_all`]). Per product it cuts `x_1` into polynomials ([`encode`]) and
//!    encrypts each under its secret key: `c_0 = −a·s + e + ⌊q·x_1/2^ℓ⌉`, `c_1 =
//!    a` sent as a 16-byte seed.
//! 2. The server adds `⌊q·x_0/2^ℓ⌉`, multiplies by the kernel polynomials
//!    (NTT form, `tfhe-ntt`) and sums over input groups, re-randomizes with a
//!    public-key encryption of zero, subtracts a uniform mask `r` (its output
//!    share) and floods the coefficients that carry outputs, switches down to
//!    `2^k` and sends `c_1` and only those coefficients of `c_0`
//!    ([`protocol`]), its work spread over rayon's threads.
//! 3. The client decrypts `y_1 = W·x − r mod 2^ℓ` exactly (worst-case noise
//!    bounds: no decryption failure).
//!
//! # Products of two secret matrices ([`secret`])
//! For `A·B` with both operands shared (attention), the local terms `A_0·B_0`,
//! `A_1·B_1` need no message and each cross term is one product above whose
//! weights are the server's share: `A_0·B_1` with the client's `B_1` encrypted,
//! `A_1·B_0` with the client's `A_1` encrypted, the server adding no share of its
//! own (`x_0 = 0`); masked, flooded and trimmed as any product, all of a wave in
//! one exchange. The server's shares are flooded exactly as weights are (the
//! analysis in [`sci_ir::rlwe`] assumes worst-case weights `|w| ≤ 2^{ℓ−1}`); the
//! client's shares only travel encrypted.
//!
//! Received polynomials are checked (header, level, count, every residue
//! reduced); a malformed message is [`CheetahError::Malformed`] naming the
//! layer, never a panic ([`wire`]).

pub mod encode;
pub mod keys;
pub mod params;
pub mod protocol;
pub mod secret;
pub(crate) mod wire;

#[cfg(test)]
mod tests;

pub use encode::Layer;
pub use protocol::{Keys, run, run_all};
pub use secret::SecretMatMul;

use sci_net::NetError;

/// Errors of the RLWE products.
#[derive(Debug, thiserror::Error)]
pub enum CheetahError {
    /// The channel failed.
    #[error(transparent)]
    Net(#[from] NetError),
    /// No layout or parameter set fits the layer.
    #[error(transparent)]
    Layout(#[from] sci_ir::rlwe::RlweError),
    /// The caller passed inconsistent arguments (shapes, unreduced shares).
    #[error("invalid RLWE layer argument: {0}")]
    InvalidArgument(String),
    /// The peer sent something malformed.
    #[error("layer {layer}: malformed message from the peer: {what}")]
    Malformed {
        /// The layer's name.
        layer: String,
        /// What was wrong.
        what: String,
    },
}

impl CheetahError {
    pub(crate) fn malformed(layer: &str, what: String) -> CheetahError {
        CheetahError::Malformed {
            layer: layer.to_string(),
            what,
        }
    }
}
