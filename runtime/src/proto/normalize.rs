//! Range reduction of shared positive fixed-point values (after SIRNN, Rathee
//! et al., S&P 2021): shares of [`sci_ir::math::normalize`], bit for
//! bit, and of the one-hot of the most significant bit, from which callers
//! form public functions of it by local linear combinations
//! ([`Reduced::combine`]). Used by [`super::rsqrt`].
//!
//! # Protocol
//! For shares of ℓ-bit `x` and an internal scale `t ≤ ℓ − 3`:
//! 1. `r = ReLU(x)` ([`super::relu`]);
//! 2. `c_j = 1{r ≥ 2^j}` for `j = 0..=ℓ−2` by one batched `DReLU(r − 2^j)`
//!    over `(ℓ − 1)·n` elements (no wrap-around: `0 ≤ r < 2^{ℓ−1}`) and one
//!    B2A ([`super::drelu`], [`super::b2a`]);
//! 3. locally: the clamped `v = r + 1 − c_0` (1 where `x ≤ 0`), the one-hot
//!    `h_k = c_k − c_{k+1}` (`c_0` read as 1, `c_{ℓ−1}` as 0) of `k =
//!    ⌊log₂ v⌋`, and `M = Σ_k h_k·2^{F−k}` (`F = ℓ − 2`);
//! 4. `z = (v·M) >> (F − t)` by one secret product ([`super::secmul::mul`])
//!    and one non-negative truncation (`v·M < 2^{F+1} = 2^{ℓ−1}`: exact).
//!
//! # Cost
//! [`sci_ir::cost::math::normalize`]: a ReLU, `DReLU^ℓ` and B2A of `(ℓ −
//! 1)·n` elements, one elementwise secret product, one non-negative
//! truncation by `ℓ − 2 − t`.

use super::{Ctx, ProtoError, Role, b2a, check, drelu, relu, secmul, trunc};
use crate::pack::mask;

/// Shares of the range reduction of `n` values: the clamped `v`, the one-hot
/// of `k = ⌊log₂ v⌋` and `z = ⌊v·2^{t−k}⌋`.
pub struct Reduced {
    ell: u32,
    /// Shares of the clamped values `v ∈ [1, 2^{ℓ−1})`.
    pub v: Vec<u64>,
    /// Shares of `h_k = 1{⌊log₂ v⌋ = k}`, `k`-major: `onehot[k·n + i]` for
    /// `k ∈ [0, ℓ − 2]`.
    pub onehot: Vec<u64>,
    /// Shares of `z = ⌊v·2^{t−k}⌋ ∈ [2^t, 2^{t+1})` (scale `t`).
    pub z: Vec<u64>,
}

impl Reduced {
    /// Shares of `f(k)` for each element, `k = ⌊log₂ v⌋`: `Σ_k h_k·f(k)`
    /// mod `2^ℓ` (local).
    pub fn combine(&self, f: impl Fn(u32) -> u64) -> Vec<u64> {
        let (n, m) = (self.v.len(), mask(self.ell));
        let mut out = vec![0u64; n];
        for (k, h) in self.onehot.chunks(n.max(1)).enumerate() {
            let c = f(k as u32);
            for (o, &h) in out.iter_mut().zip(h) {
                *o = o.wrapping_add(h.wrapping_mul(c)) & m;
            }
        }
        out
    }
}

/// Shares of [`sci_ir::math::normalize`] (with the one-hot of `k`) of
/// the shared ℓ-bit `x` at internal scale `t ≤ ℓ − 3`; see the [module
/// documentation](self).
pub fn normalize(ctx: &mut Ctx<'_>, ell: u32, t: u32, x: &[u64]) -> Result<Reduced, ProtoError> {
    let m = mask(ell);
    check((4..=64).contains(&ell) && t + 3 <= ell, || {
        format!("range reduction needs 4 ≤ ℓ = {ell} ≤ 64 and t = {t} ≤ ℓ − 3")
    })?;
    check(x.iter().all(|&v| v & !m == 0), || {
        format!("shares must be reduced mod 2^{ell}")
    })?;
    let n = x.len();
    let p1 = ctx.role == Role::P1;
    let public = move |v: u64| if p1 { v } else { 0 };
    let r = relu::relu(ctx, ell, x)?;
    let diffs: Vec<u64> = (0..ell - 1)
        .flat_map(|j| r.iter().map(move |&v| v.wrapping_sub(public(1 << j)) & m))
        .collect();
    let bits = drelu::drelu(ctx, ell, &diffs)?;
    let c = b2a::b2a(ctx, ell, &bits)?;
    let v: Vec<u64> = r
        .iter()
        .zip(&c[..n])
        .map(|(&r, &c0)| r.wrapping_add(public(1)).wrapping_sub(c0) & m)
        .collect();
    let onehot: Vec<u64> = (0..ell as usize - 1)
        .flat_map(|k| {
            let c = &c;
            (0..n).map(move |i| {
                let ck = if k == 0 { public(1) } else { c[k * n + i] };
                let next = c.get((k + 1) * n + i).copied().unwrap_or(0);
                ck.wrapping_sub(next) & m
            })
        })
        .collect();
    let mut red = Reduced {
        ell,
        v,
        onehot,
        z: Vec::new(),
    };
    let f = ell - 2;
    let big_m = red.combine(|k| 1 << (f - k));
    let vm = secmul::mul(ctx, ell, &red.v, &big_m)?;
    red.z = trunc::trunc_nonneg(ctx, ell, f - t, &vm)?;
    Ok(red)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::testutil::{measured, open, prg, share};
    use sci_ir::cost;
    use sci_ir::math;

    /// Every input at ℓ = 8; random ones and the edges at ℓ = 32: `v`, `z` and
    /// the one-hot reconstruct to the oracle's; bytes and rounds as modelled.
    #[test]
    fn equals_oracle() {
        for (ell, t) in [(8u32, 3u32), (32, 13)] {
            let (m, half) = (mask(ell), 1u64 << (ell - 1));
            let x: Vec<u64> = if ell == 8 {
                (0..1 << ell).collect()
            } else {
                // Every magnitude: random words shifted right by 0..60 bits.
                let r = prg(u128::from(ell)).u64s(600).into_iter();
                r.map(|v| (v >> (v % 60)) & m)
                    .chain([0, 1, m, half - 1, half, half + 1])
                    .collect()
            };
            let (x0, x1) = share(&mut prg(3), &x, ell);
            let r = measured(4, |ctx, warm| {
                let x = if ctx.role == Role::P0 { &x0 } else { &x1 };
                let red = normalize(ctx, ell, t, if warm { &x[..2] } else { x })?;
                let k = red.combine(u64::from);
                Ok((red.v, red.z, k, red.onehot))
            });
            let want: Vec<_> = x.iter().map(|&v| math::normalize(ell, t, v)).collect();
            assert_eq!(
                open(&r.p0.0, &r.p1.0, ell),
                want.iter().map(|w| w.v).collect::<Vec<_>>()
            );
            assert_eq!(
                open(&r.p0.1, &r.p1.1, ell),
                want.iter().map(|w| w.z).collect::<Vec<_>>()
            );
            assert_eq!(
                open(&r.p0.2, &r.p1.2, ell),
                want.iter().map(|w| u64::from(w.k)).collect::<Vec<_>>()
            );
            let hot = open(&r.p0.3, &r.p1.3, ell);
            assert!(hot.iter().all(|&h| h <= 1) && hot.iter().sum::<u64>() == x.len() as u64);
            let model = |n| cost::math::normalize(ell, t, 4, n, true);
            let (warm, all) = (model(2), model(x.len()));
            if let Some(rounds) = r.pin_costs(&warm, &all, "normalize") {
                eprintln!(
                    "normalize ℓ={ell} t={t}: {} bits per element, rounds {rounds:?}",
                    all.bits() as f64 / x.len() as f64
                );
            }
        }
    }
}
