//! Worst-case noise bounds, noise flooding and the final modulus switch.
//!
//! Noise is measured relative to `(Q/t)·m`: a ciphertext `(c_0, c_1)` of `m`
//! has `c_0 + c_1·s = (Q/t)·m + v (mod Q)`, and decrypts correctly while
//! `‖v‖∞ < Q/(2t)`. `fhe` encodes `m` as `⌊Q·m/t⌋`, so with this reference
//! every bound below is exact arithmetic, no `t²` term: for a plaintext
//! polynomial `P` (coefficients in `[0, t)`), `⌊Qm/t⌋·P = (Q/t)·[mP]_t + Q·k −
//! ε·P` with `|ε| < 1`.
//!
//! | step | bound on `‖v‖∞` |
//! |---|---|
//! | client's encryption (error from a centered binomial, `|e| ≤ 20`), plus the server's share added as a plaintext | [`fresh`] `= 20 + 2` |
//! | product with a plaintext | `N·(t − 1)·v` ([`product`]) |
//! | sum | sum of the bounds |
//! | rotation (automorphism, then hybrid key switching with the special prime `P = q_4`) | `v + B_ks`, `B_ks = N·20·Σ_{i<4} q_i / P + (1 + 20N)/2` ([`key_switch`]) |
//! | re-randomization: `+ Enc_pk(0)` (public key switched to level 1) | `+ B_rr = N·20·(1 + 20N/2 + 20) + 20 + 20²N` ([`rerandomization`]) |
//! | subtracting the mask (a plaintext) | `+ 1` |
//! | flooding with `U[−F, F)` | `+ F` |
//! | switching from `Q_1` down to `Q_L` | `v·Q_L/Q_1 + (L − 1)·(1 + 20N)/2`; `L` = [`sci_ir::backend::reply_level`]`(t)`, the lowest level that decrypts `v = Q_1/(4t)` |
//!
//! Flooding ([`Flood::choose`]): `F = 2^f` is the largest power of two with
//! `B + F < Q_1/(4t)` (one bit of margin), where `B` bounds the computation's
//! and the re-randomization's noise. A coefficient `v_i` with `|v_i| ≤ B`
//! plus `U[−F, F)` is within statistical distance `B/(2F)` of `U[−F, F)`, so
//! the ciphertext is within `N·B/(2F)` of one whose noise is independent of
//! the weights. A layer requires the sum over its output ciphertexts to be at
//! most `2^−STAT_SEC`.

use super::params::{CT_LEVEL, DEGREE, MODULI, Params};
use super::{HeError, check};

/// Statistical security parameter of the flooding, per layer: the output
/// ciphertexts of a layer are within statistical distance `2^−40` of
/// ciphertexts whose noise does not depend on the weights.
pub const STAT_SEC: u32 = 40;

/// Bound on a fresh error (and secret) coefficient: the centered binomial
/// distribution of variance 10 takes values in `[−20, 20]`.
const B_ERR: f64 = 20.0;

/// `N` as a float.
const N: f64 = DEGREE as f64;

/// Bound on the noise of the client's ciphertext after the server added its
/// share as a plaintext: the error, plus one floor-encoding error each.
pub fn fresh() -> f64 {
    B_ERR + 2.0
}

/// Bound after multiplying a ciphertext of noise `v` by a plaintext mod `t`.
pub fn product(v: f64, t: u64) -> f64 {
    N * (t - 1) as f64 * v
}

/// Noise added by one key switch (rotation) of a level-1 ciphertext with a
/// Galois key at level 0.
pub fn key_switch() -> f64 {
    let digits: f64 = MODULI[..MODULI.len() - CT_LEVEL]
        .iter()
        .map(|&q| q as f64)
        .sum();
    let special = MODULI[MODULI.len() - 1] as f64;
    N * B_ERR * digits / special + (1.0 + N * B_ERR) / 2.0
}

/// Noise of a public-key encryption of zero at level 1.
pub fn rerandomization() -> f64 {
    // The public key's error after its switch from level 0 to level 1.
    let pk_err = 1.0 + N * B_ERR / 2.0 + B_ERR;
    N * B_ERR * pk_err + B_ERR + N * B_ERR * B_ERR
}

/// The flooding and the final level of one output ciphertext.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Flood {
    /// `log₂ F`: the flooding noise is uniform in `[−2^f, 2^f)`.
    pub f: u32,
    /// The level to switch to before sending.
    pub level: usize,
    /// `log₂` of the statistical distance `N·B/(2F)` achieved.
    pub log_distance: f64,
}

impl Flood {
    /// Flooding for a computation noise bound `b` (before re-randomization)
    /// at plaintext modulus `t`: see the [module documentation](self).
    pub fn choose(params: &Params, b: f64) -> Result<Flood, HeError> {
        let t = params.t as f64;
        let b = b + rerandomization() + 1.0;
        let log_limit = Params::log_q(CT_LEVEL) - (2.0 * t).log2();
        // F + b < Q_1/(4t): f = ⌊log₂(Q_1/(4t) − b)⌋.
        let room = (2f64.powf(log_limit - 1.0) - b).max(1.0);
        let f = room.log2().floor() as u32;
        let big_f = 2f64.powi(f as i32);
        let log_distance = (N * b / (2.0 * big_f)).log2();
        check(f >= 1 && b < big_f, || {
            format!("noise bound 2^{:.1} leaves no room to flood", b.log2())
        })?;
        // The level depends on `t` only: the one that decrypts the largest noise the
        // flooding allows, `b + F ≤ Q_1/(4t)` (so the cost model knows the bytes).
        let level = sci_ir::backend::reply_level(params.t);
        Ok(Flood {
            f,
            level,
            log_distance,
        })
    }
}

/// Checks that `distances` (log₂ per ciphertext) sum to at most `2^−STAT_SEC`.
pub fn check_distance(distances: impl IntoIterator<Item = f64>) -> Result<(), HeError> {
    let total: f64 = distances.into_iter().map(|d| 2f64.powf(d)).sum();
    if total <= 2f64.powi(-(STAT_SEC as i32)) {
        Ok(())
    } else {
        Err(HeError::NoiseBudget {
            achieved: total.log2(),
            required: STAT_SEC,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_for_typical_fields() {
        // A MiniONN-sized convolution: 576 products per output ciphertext and
        // ~600 rotations.
        for (t, ok) in [
            (4_295_049_217u64, true),
            (2_199_023_288_321, true),
            (35_184_372_121_601, false),
        ] {
            let p = Params::new(t).expect("params");
            let b = 576.0 * product(fresh(), t) + 700.0 * key_switch();
            let fl = Flood::choose(&p, b).expect("room to flood");
            let layer = check_distance(std::iter::repeat_n(fl.log_distance, 16));
            assert_eq!(layer.is_ok(), ok, "t={t}: {fl:?}");
            // Two primes suffice after the switch.
            assert_eq!(fl.level, 3, "t={t}");
        }
        assert!(key_switch() < 2f64.powi(20) && rerandomization() < 2f64.powi(34));
    }
}
