//! Piecewise cubics of shared fixed-point values (after BOLT, Pang et al., S&P
//! 2024, and BumbleBee, Lu et al., NDSS 2025): shares of
//! [`sci_ir::spline::spline`] (erf, GELU, tanh-GELU), bit for bit.
//!
//! # Protocol
//! For shares of `x` at scale `s` ([`SplineParams`]):
//! 1. `d = DReLU(x)` ([`super::drelu`]) and `d·x` by one multiplexer
//!    ([`super::mux`]); `a = |x| = 2·d·x − x` locally;
//! 2. `e_j = DReLU(a − T_j)` for every knot `T_j`, one call of `k·n`;
//! 3. the powers `U₁ = a·2^{f−s−2}` (local), `U₂`, `U₃` by two rounded secret
//!    products ([`super::secmul::mul_round`], exact);
//! 4. each segment's `P_j = C_{j,0} + Σ C_{j,i}U_i` locally (public
//!    coefficients; `P_k` the limit), and `Y = P_0 + Σ_j e_j·(P_j − P_{j−1})`
//!    by `k·n` multiplexers in one call: `e` is monotone (`e_1 ≥ … ≥ e_k`), so
//!    the sum telescopes to the selected segment's `P_J`, exactly mod `2^ℓ`,
//!    whatever the unselected segments hold (their powers may have wrapped);
//! 5. `h` by one non-negative truncation by `σ` ([`super::trunc::trunc_nonneg`])
//!    of `Y + O + 2^{σ−1}`, minus `O/2^σ` (role `P1`);
//! 6. erf: `2·d·h − h` by one more multiplexer; GELU: `d·x − h` locally.
//!
//! # Cost
//! [`sci_ir::cost::math::spline`].

use super::{Ctx, ProtoError, Role, check, drelu, mux, secmul, trunc};
use crate::pack::mask;
use sci_ir::spline::SplineParams;

/// Shares of [`sci_ir::spline::spline`] (at scale `s`) of the shared ℓ-bit
/// inputs `x` at scale `s`.
pub fn spline(ctx: &mut Ctx<'_>, p: &SplineParams, x: &[u64]) -> Result<Vec<u64>, ProtoError> {
    let ell = p.ell();
    let m = mask(ell);
    check(x.iter().all(|&v| v & !m == 0), || {
        format!("shares must be reduced mod 2^{ell}")
    })?;
    if x.is_empty() {
        return Ok(Vec::new());
    }
    let n = x.len();
    let p1 = ctx.role == Role::P1;
    let public = move |v: u64| if p1 { v } else { 0 };
    let d = drelu::drelu(ctx, ell, x)?;
    let dx = mux::mux(ctx, ell, x, &d)?;
    let a: Vec<u64> = x
        .iter()
        .zip(&dx)
        .map(|(&v, &r)| (r << 1).wrapping_sub(v) & m)
        .collect();
    let knots = p.knots();
    let diffs: Vec<u64> = knots
        .iter()
        .flat_map(|&t| a.iter().map(move |&v| v.wrapping_sub(public(t)) & m))
        .collect();
    let e = drelu::drelu(ctx, ell, &diffs)?;
    let u1: Vec<u64> = a.iter().map(|&v| (v << p.lift()) & m).collect();
    let u2 = secmul::mul_round(ctx, ell, p.f(), &u1, &u1)?;
    let u3 = secmul::mul_round(ctx, ell, p.f(), &u2, &u1)?;
    // The segments' values, segment-major: P_j for j < k, then the limit.
    let seg = |j: usize, i: usize| -> u64 {
        if j == knots.len() {
            public(p.limit())
        } else {
            p.segment(j, [u1[i], u2[i], u3[i]], p1)
        }
    };
    let steps: Vec<u64> = (1..=knots.len())
        .flat_map(|j| (0..n).map(move |i| (j, i)))
        .map(|(j, i)| seg(j, i).wrapping_sub(seg(j - 1, i)) & m)
        .collect();
    let chosen = mux::mux(ctx, ell, &steps, &e)?;
    let sh = p.shift();
    let bias = public(p.offset() + (1 << (sh - 1)));
    let y: Vec<u64> = (0..n)
        .map(|i| {
            (0..knots.len())
                .map(|j| chosen[j * n + i])
                .fold(seg(0, i).wrapping_add(bias), u64::wrapping_add)
                & m
        })
        .collect();
    let h: Vec<u64> = trunc::trunc_nonneg(ctx, ell, sh, &y)?
        .into_iter()
        .map(|v| v.wrapping_sub(public(p.offset() >> sh)) & m)
        .collect();
    if p.func().is_odd() {
        let dh = mux::mux(ctx, ell, &h, &d)?;
        Ok(dh
            .iter()
            .zip(&h)
            .map(|(&r, &v)| (r << 1).wrapping_sub(v) & m)
            .collect())
    } else {
        Ok(dx
            .iter()
            .zip(&h)
            .map(|(&r, &v)| r.wrapping_sub(v) & m)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::testutil::{measured, open, prg, run2, share};
    use sci_ir::cost;
    use sci_ir::spline::{self as sp, SplineFn};

    fn check_spline(p: &SplineParams, x: &[u64], seed: u128) {
        let ell = p.ell();
        let (x0, x1) = share(&mut prg(seed), x, ell);
        let r = measured(4, |ctx, warm| {
            let x = if ctx.role == Role::P0 { &x0 } else { &x1 };
            spline(ctx, p, if warm { &x[..2] } else { x })
        });
        let want: Vec<u64> = x.iter().map(|&v| sp::spline(p, v)).collect();
        assert_eq!(open(&r.p0, &r.p1, ell), want, "{p:?}");
        let model = |n| cost::math::spline(p, 4, n, true);
        let (warm, t) = (model(2), model(x.len()));
        if let Some(rounds) = r.pin_costs(&warm, &t, &format!("{p:?}")) {
            eprintln!(
                "spline {:?} ℓ={ell} s={}: {} bits per element, rounds {rounds:?}",
                p.func(),
                p.s(),
                t.bits() as f64 / x.len() as f64
            );
        }
    }

    /// Every input at ℓ = 14 (`s = 4`); random inputs over the knots' range and
    /// beyond, and the edges (0, ±1, the knots and their neighbours, ±2^{ℓ−1}
    /// and its neighbours, the largest values) at ℓ = 16, 32 and 37.
    #[test]
    fn equals_oracle() {
        for func in SplineFn::ALL {
            let p = SplineParams::new(func, 14, 4).unwrap();
            let x: Vec<u64> = (0..1u64 << 14).collect();
            check_spline(&p, &x, 1);
            for (ell, s) in [(16u32, 4u32), (32, 12), (37, 14)] {
                let p = SplineParams::new(func, ell, s).unwrap();
                let m = mask(ell);
                let range = 6u64 << s;
                let half = 1u64 << (ell - 1);
                let knots = p.knots().iter().flat_map(|&t| {
                    [t, t + 1, t.wrapping_sub(1)]
                        .into_iter()
                        .flat_map(move |v| [v & m, v.wrapping_neg() & m])
                });
                let x: Vec<u64> = prg(u128::from(ell))
                    .u64s(1500)
                    .into_iter()
                    .map(|v| ((v % (2 * range)).wrapping_sub(range)) & m)
                    .chain([0, 1, m, half - 1, half, half + 1, m - 1])
                    .chain(knots)
                    .collect();
                check_spline(&p, &x, 2);
            }
        }
    }

    #[test]
    fn rejects_unreduced_shares() {
        let p = SplineParams::new(SplineFn::Erf, 14, 4).unwrap();
        let r = run2(4, |ctx| Ok(spline(ctx, &p, &[1 << 14]).is_err()));
        assert!(r.p0 && r.p1);
    }
}
