//! Sigmoid and tanh of shared fixed-point values (after SIRNN, Rathee et al.,
//! S&P 2021): shares of [`sci_ir::math::smooth`], bit for bit.
//!
//! # Protocol
//! For shares of `x` at scale `s` (internal scale `t = s + 2`):
//! 1. `d = DReLU(x)` ([`super::drelu`]) as boolean shares and `d·x` by one
//!    multiplexer ([`super::mux`]); `−|x| = x − 2·d·x` locally;
//! 2. `e = exp(−|x|)` at scale `t` ([`super::exp`]; for tanh the input read at
//!    scale `s − 1`, i.e. `−2|x|`);
//! 3. `r = 1/(1 + e)` at scale `t` ([`super::recip`], role `P1` adding `2^t`);
//! 4. rounded to scale `s` by one non-negative truncation by `t − s`
//!    ([`super::trunc::trunc_nonneg`]) of `r` (sigmoid) or `2r` (tanh) plus
//!    the half; tanh subtracts `2^s` (role `P1`);
//! 5. the sign by one multiplexer with the same `d`: sigmoid `2^s − r_s +
//!    d·(2r_s − 2^s)`, tanh `−v + d·2v`.
//!
//! # Cost
//! [`sci_ir::cost::math::smooth`]: `DReLU^ℓ`, two multiplexers, `exp`, the
//! reciprocal, one non-negative truncation. Error: see
//! [`sci_ir::math::SmoothParams`].

use super::{Ctx, ProtoError, Role, check, drelu, exp, mux, recip, trunc};
use crate::pack::mask;
use sci_ir::math::{Smooth, SmoothParams};

/// Shares of [`sci_ir::math::smooth`] (sigmoid or tanh at scale `s`)
/// of the shared ℓ-bit inputs `x` at scale `s`.
pub fn smooth(ctx: &mut Ctx<'_>, p: &SmoothParams, x: &[u64]) -> Result<Vec<u64>, ProtoError> {
    let (ell, s, t) = (p.ell(), p.s(), p.t());
    let m = mask(ell);
    check(x.iter().all(|&v| v & !m == 0), || {
        format!("shares must be reduced mod 2^{ell}")
    })?;
    if x.is_empty() {
        return Ok(Vec::new());
    }
    let p1 = ctx.role == Role::P1;
    let public = move |v: u64| if p1 { v } else { 0 };
    let d = drelu::drelu(ctx, ell, x)?;
    let dx = mux::mux(ctx, ell, x, &d)?;
    let neg_abs: Vec<u64> = x
        .iter()
        .zip(&dx)
        .map(|(&v, &r)| v.wrapping_sub(r << 1) & m)
        .collect();
    let e = exp::exp_neg(ctx, p.exp(), &neg_abs)?;
    let z: Vec<u64> = e
        .iter()
        .map(|&v| v.wrapping_add(public(1 << t)) & m)
        .collect();
    let r = recip::recip(ctx, p.recip(), &z)?;
    let (k, unit) = (t - s, public(1 << s));
    // Sigmoid rounds `r`, tanh `2r` (and subtracts 1 after).
    let doubling = u32::from(p.kind() == Smooth::Tanh);
    let half = public(1 << (k - 1));
    let r2: Vec<u64> = r
        .iter()
        .map(|&v| ((v << doubling).wrapping_add(half)) & m)
        .collect();
    let rounded = trunc::trunc_nonneg(ctx, ell, k, &r2)?;
    // The value when x ≥ 0 (`pos`) and when x < 0 (`neg`): the result is `neg
    // + d·(pos − neg)`.
    let (pos, neg): (Vec<u64>, Vec<u64>) = match p.kind() {
        Smooth::Sigmoid => rounded
            .iter()
            .map(|&v| (v, unit.wrapping_sub(v) & m))
            .unzip(),
        Smooth::Tanh => rounded
            .iter()
            .map(|&v| {
                let v = v.wrapping_sub(unit) & m;
                (v, v.wrapping_neg() & m)
            })
            .unzip(),
    };
    let diff: Vec<u64> = pos
        .iter()
        .zip(&neg)
        .map(|(&a, &b)| a.wrapping_sub(b) & m)
        .collect();
    let chosen = mux::mux(ctx, ell, &diff, &d)?;
    Ok(neg
        .iter()
        .zip(&chosen)
        .map(|(&b, &c)| b.wrapping_add(c) & m)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::testutil::{measured, open, prg, run2, share};
    use sci_ir::cost;
    use sci_ir::math;

    fn check_smooth(p: &SmoothParams, x: &[u64], seed: u128) {
        let ell = p.ell();
        let (x0, x1) = share(&mut prg(seed), x, ell);
        let r = measured(4, |ctx, warm| {
            let x = if ctx.role == Role::P0 { &x0 } else { &x1 };
            smooth(ctx, p, if warm { &x[..2] } else { x })
        });
        let want: Vec<u64> = x.iter().map(|&v| math::smooth(p, v)).collect();
        assert_eq!(open(&r.p0, &r.p1, ell), want, "{p:?}");
        let model = |n| cost::math::smooth(p, 4, n, true);
        let (warm, t) = (model(2), model(x.len()));
        if let Some(rounds) = r.pin_costs(&warm, &t, &format!("{p:?}")) {
            eprintln!(
                "{:?} ℓ={ell} s={} d={}: {} bits per element, rounds {rounds:?}",
                p.kind(),
                p.s(),
                p.exp().digit(),
                t.bits() as f64 / x.len() as f64
            );
        }
    }

    /// Every input at ℓ = 11 (`s = 2`); random inputs in the interesting range
    /// and the edges (0, ±1, ±max, saturation) at ℓ = 16, 32 and 37.
    #[test]
    fn equals_oracle() {
        for kind in [Smooth::Sigmoid, Smooth::Tanh] {
            let p = SmoothParams::new(kind, 11, 2, 4).unwrap();
            let x: Vec<u64> = (0..1u64 << 11).collect();
            check_smooth(&p, &x, 1);
            for (ell, s, d) in [(16u32, 4u32, 5u32), (32, 12, 8), (32, 12, 4), (37, 15, 8)] {
                let p = SmoothParams::new(kind, ell, s, d).unwrap();
                let m = mask(ell);
                let range = 24u64 << s;
                let half = 1u64 << (ell - 1);
                let x: Vec<u64> = prg(u128::from(ell + d))
                    .u64s(1500)
                    .into_iter()
                    .map(|v| ((v % (2 * range)).wrapping_sub(range)) & m)
                    .chain([0, 1, m, half - 1, half, half + 1, 40 << s, (40 << s) ^ m])
                    .collect();
                check_smooth(&p, &x, 2);
            }
        }
    }

    #[test]
    fn rejects_unreduced_shares() {
        let p = SmoothParams::new(Smooth::Sigmoid, 11, 2, 4).unwrap();
        let r = run2(4, |ctx| Ok(smooth(ctx, &p, &[1 << 11]).is_err()));
        assert!(r.p0 && r.p1);
    }
}
