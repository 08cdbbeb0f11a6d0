//! The reciprocal of shared fixed-point values in `[1, 2]` (after SIRNN, Rathee
//! et al., S&P 2021, whose reciprocal is Goldschmidt's iteration from an
//! initial approximation): shares of [`sci_ir::math::recip`], bit for
//! bit.
//!
//! # Protocol
//! For shares of `z ∈ [2^t, 2^{t+1}]` (scale `t`): `w_0 = A − z` is local
//! (role `P1` adds the public `A`); `e_0 = 2^t − round(z·w_0)` is one rounded
//! product ([`super::secmul::mul_round`], by `t + 1`) and a local
//! subtraction; each Goldschmidt iteration is one rounded product of both
//! `w_k·(1 + e_k)` and `e_k²` (`2e_k` by `t + 1` in the first iteration, `e_k`
//! by `t` after; the last iteration only the first). All products and
//! halves stay below `2^{2t+2} ≤ 2^{ℓ−1}`, so the non-negative truncations
//! are exact.
//!
//! # Cost
//! [`sci_ir::cost::math::recip`]: `n + 1` rounded products (an elementwise
//! secret product and a non-negative truncation each), the `n − 1` middle
//! ones of twice the elements; `n` the iterations (2 at `t = 14`).
//!
//! # Range-reduced reciprocal ([`recip_range`])
//! For `x ∈ [1, 2^{K+1})` at scale `s`: the range reduction ([`super::normalize`]),
//! [`recip`] of its `z` at scale `t`, and one rounded product by the power of two
//! `G_k` that the one-hot selects (local): shares of
//! [`sci_ir::math::recip_range`], priced by
//! [`sci_ir::cost::math::recip_range`].

use super::{Ctx, ProtoError, Role, check, normalize, secmul};
use crate::pack::mask;
use sci_ir::math::{RecipParams, RecipRangeParams};

/// Shares of [`sci_ir::math::recip`] (scale `t`) of shared `z ∈ [2^t,
/// 2^{t+1}]` (the result is unspecified outside).
pub fn recip(ctx: &mut Ctx<'_>, p: &RecipParams, z: &[u64]) -> Result<Vec<u64>, ProtoError> {
    let (ell, t) = (p.ell(), p.t());
    let m = mask(ell);
    check(z.iter().all(|&v| v & !m == 0), || {
        format!("shares must be reduced mod 2^{ell}")
    })?;
    let n = z.len();
    if n == 0 {
        return Ok(Vec::new());
    }
    let public = |v: u64| if ctx.role == Role::P1 { v } else { 0 };
    let (a, one) = (public(p.initial()), public(1 << t));
    let mut w: Vec<u64> = z.iter().map(|&v| a.wrapping_sub(v) & m).collect();
    let zw = secmul::mul_round(ctx, ell, t + 1, z, &w)?;
    let mut e: Vec<u64> = zw.iter().map(|&v| one.wrapping_sub(v) & m).collect();
    let mut shift = t + 1;
    for k in 0..p.iters() {
        let mut x = w;
        let mut y: Vec<u64> = e.iter().map(|&v| v.wrapping_add(one) & m).collect();
        let last = k + 1 == p.iters();
        if !last {
            x.extend_from_slice(&e);
            y.extend(e.iter().map(|&v| (v << (shift - t)) & m));
        }
        let mut out = secmul::mul_round(ctx, ell, shift, &x, &y)?;
        if !last {
            e = out.split_off(n);
        }
        w = out;
        shift = t;
    }
    Ok(w)
}

/// Shares of [`sci_ir::math::recip_range`] (scale `s_out`) of the
/// shared ℓ-bit `x` at scale `s` (see the [module documentation](self)).
pub fn recip_range(
    ctx: &mut Ctx<'_>,
    p: &RecipRangeParams,
    x: &[u64],
) -> Result<Vec<u64>, ProtoError> {
    if x.is_empty() {
        return Ok(Vec::new());
    }
    let red = normalize::normalize(ctx, p.ell(), p.recip().t(), x)?;
    let w = recip(ctx, p.recip(), &red.z)?;
    let g = red.combine(|k| p.factor(k));
    secmul::mul_round(ctx, p.ell(), p.shift(), &w, &g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::testutil::{measured, open, prg, share};
    use sci_ir::cost;
    use sci_ir::math;

    fn check_recip(p: &RecipParams, z: &[u64], seed: u128) {
        let ell = p.ell();
        let (z0, z1) = share(&mut prg(seed), z, ell);
        let r = measured(4, |ctx, warm| {
            let z = if ctx.role == Role::P0 { &z0 } else { &z1 };
            recip(ctx, p, if warm { &z[..2] } else { z })
        });
        let want: Vec<u64> = z.iter().map(|&v| math::recip(p, v)).collect();
        assert_eq!(open(&r.p0, &r.p1, ell), want, "{p:?}");
        let model = |n| cost::math::recip(p, 4, n, true);
        let (warm, t) = (model(2), model(z.len()));
        if let Some(rounds) = r.pin_costs(&warm, &t, &format!("{p:?}")) {
            eprintln!(
                "recip ℓ={ell} t={}: {} bits per element, rounds {rounds:?}",
                p.t(),
                t.bits() as f64 / z.len() as f64
            );
        }
    }

    /// Every input at ℓ = 12 (`s = 3`, `K = 5`) and random ones of every magnitude in
    /// the domain and outside at ℓ = 32 (`s = 12`, `s_out = 14`, `K = 10`).
    #[test]
    fn range_reduced_equals_oracle() {
        for (ell, s, so, k) in [(12u32, 3u32, 4u32, 5u32), (32, 12, 14, 10)] {
            let p = RecipRangeParams::new(ell, s, so, k).unwrap();
            let m = mask(ell);
            let x: Vec<u64> = if ell == 12 {
                (0..1 << ell).collect()
            } else {
                let r = prg(9).u64s(1500).into_iter();
                r.map(|v| (v >> (v % 62)) & m)
                    .chain([0, 1, m, 1 << s])
                    .collect()
            };
            let (x0, x1) = share(&mut prg(10), &x, ell);
            let r = measured(4, |ctx, warm| {
                let x = if ctx.role == Role::P0 { &x0 } else { &x1 };
                recip_range(ctx, &p, if warm { &x[..2] } else { x })
            });
            let want: Vec<u64> = x.iter().map(|&v| math::recip_range(&p, v)).collect();
            assert_eq!(open(&r.p0, &r.p1, ell), want, "{p:?}");
            let model = |n| cost::math::recip_range(&p, 4, n, true);
            let (warm, t) = (model(2), model(x.len()));
            if let Some(rounds) = r.pin_costs(&warm, &t, &format!("{p:?}")) {
                eprintln!(
                    "recip_range ℓ={ell} s={s} s_out={so} K={k}: {} bits per element, rounds {rounds:?}",
                    t.bits() as f64 / x.len() as f64
                );
            }
        }
    }

    /// Every input at `t = 4` and `t = 8`; random ones and the ends at `t = 14`
    /// (ℓ = 32) and `t = 17` (ℓ = 37).
    #[test]
    fn equals_oracle() {
        for (ell, t) in [(11u32, 4u32), (19, 8)] {
            let p = RecipParams::new(ell, t).unwrap();
            let z: Vec<u64> = (1u64 << t..=2 << t).collect();
            check_recip(&p, &z, u128::from(t));
        }
        for (ell, t) in [(32u32, 14u32), (37, 17)] {
            let p = RecipParams::new(ell, t).unwrap();
            let z: Vec<u64> = prg(u128::from(ell))
                .u64s(2000)
                .into_iter()
                .map(|v| (1 << t) + v % ((1 << t) + 1))
                .chain([1 << t, (1 << t) + 1, (2 << t) - 1, 2 << t])
                .collect();
            check_recip(&p, &z, 5);
        }
    }
}
