//! The reciprocal square root of shared fixed-point values (after SIRNN,
//! Rathee et al., S&P 2021): shares of [`sci_ir::math::rsqrt`], bit
//! for bit.
//!
//! # Protocol
//! For shares of ℓ-bit `x` at scale `s` (internal scale `t`, output factor
//! exponent `g`: [`RsqrtParams`]):
//! 1. the range reduction ([`super::normalize`]): `z ≈ v·2^{−k} ∈ [1, 2)` at
//!    scale `t` and the one-hot of `k`;
//! 2. `w_0 = A − z` (role `P1` adds the public `A`; scale `t + 2`);
//! 3. per Newton step three rounded products ([`super::secmul::mul_round`]):
//!    `p = z·w`, `q = p·w`, `w ← w·(3·2^t − q)` (shifts `σ`, `σ`, `σ + 1`;
//!    `σ = t + 2` in the first step, `t` after);
//! 4. `G = Σ_k h_k·G_k` locally from the one-hot, `y = round(w·G / 2^{t+g−s})`
//!    by one rounded product.
//!
//! Every product is non-negative and below `2^{ℓ−1}` with its half, so the
//! truncations are exact.
//!
//! # Cost
//! [`sci_ir::cost::math::rsqrt`]: the range reduction and `3n + 1` rounded
//! products of `n` elements (`n` the Newton steps, 2 at ℓ = 32).

use super::{Ctx, ProtoError, Role, normalize, secmul};
use crate::pack::mask;
use sci_ir::math::RsqrtParams;

/// Shares of [`sci_ir::math::rsqrt`] (scale `s`) of the shared
/// ℓ-bit inputs `x` at scale `s` (a non-positive input reads as `2^{−s}`).
pub fn rsqrt(ctx: &mut Ctx<'_>, p: &RsqrtParams, x: &[u64]) -> Result<Vec<u64>, ProtoError> {
    let (ell, t) = (p.ell(), p.t());
    let m = mask(ell);
    if x.is_empty() {
        return Ok(Vec::new());
    }
    let red = normalize::normalize(ctx, ell, t, x)?;
    let public = |v: u64| if ctx.role == Role::P1 { v } else { 0 };
    let (a, three) = (public(p.initial()), public(3 << t));
    let z = &red.z;
    let mut w: Vec<u64> = z.iter().map(|&v| a.wrapping_sub(v) & m).collect();
    let mut sigma = t + 2;
    for _ in 0..p.iters() {
        let pz = secmul::mul_round(ctx, ell, sigma, z, &w)?;
        let q = secmul::mul_round(ctx, ell, sigma, &pz, &w)?;
        let c: Vec<u64> = q.iter().map(|&v| three.wrapping_sub(v) & m).collect();
        w = secmul::mul_round(ctx, ell, sigma + 1, &w, &c)?;
        sigma = t;
    }
    let g = red.combine(|k| p.factor(k));
    secmul::mul_round(ctx, ell, t + p.g() - p.s(), &w, &g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::testutil::{measured, open, prg, run2, share};
    use sci_ir::cost;
    use sci_ir::math;

    fn check_rsqrt(p: &RsqrtParams, x: &[u64], seed: u128) {
        let ell = p.ell();
        let (x0, x1) = share(&mut prg(seed), x, ell);
        let r = measured(4, |ctx, warm| {
            let x = if ctx.role == Role::P0 { &x0 } else { &x1 };
            rsqrt(ctx, p, if warm { &x[..2] } else { x })
        });
        let want: Vec<u64> = x.iter().map(|&v| math::rsqrt(p, v)).collect();
        assert_eq!(open(&r.p0, &r.p1, ell), want, "{p:?}");
        let model = |n| cost::math::rsqrt(p, 4, n, true);
        let (warm, t) = (model(2), model(x.len()));
        if let Some(rounds) = r.pin_costs(&warm, &t, &format!("{p:?}")) {
            eprintln!(
                "rsqrt ℓ={ell} s={}: {} bits per element, rounds {rounds:?}",
                p.s(),
                t.bits() as f64 / x.len() as f64
            );
        }
    }

    /// Every input at ℓ = 10 and 12; random inputs of every magnitude and the
    /// edges (0, ±1, ±max) at ℓ = 32 and 37.
    #[test]
    fn equals_oracle() {
        for (ell, s) in [(10u32, 4u32), (12, 5)] {
            let p = RsqrtParams::new(ell, s).unwrap();
            let x: Vec<u64> = (0..1u64 << ell).collect();
            check_rsqrt(&p, &x, 1);
        }
        for (ell, s) in [(32u32, 12u32), (37, 16)] {
            let p = RsqrtParams::new(ell, s).unwrap();
            let (m, half) = (mask(ell), 1u64 << (ell - 1));
            let x: Vec<u64> = prg(u128::from(ell))
                .u64s(1500)
                .into_iter()
                .map(|v| (v >> (v % 64)) & m)
                .chain([0, 1, m, half - 1, half, half + 1, 1 << s])
                .collect();
            check_rsqrt(&p, &x, 2);
        }
    }

    #[test]
    fn rejects_unreduced_shares() {
        let p = RsqrtParams::new(12, 4).unwrap();
        let r = run2(4, |ctx| Ok(rsqrt(ctx, &p, &[1 << 12]).is_err()));
        assert!(r.p0 && r.p1);
    }
}
