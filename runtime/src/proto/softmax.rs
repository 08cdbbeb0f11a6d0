//! Softmax of shared fixed-point lines: shares of [`sci_ir::math::softmax`],
//! bit for bit.
//!
//! # Protocol
//! For shares of `r` lines of `n` ℓ-bit elements at scale `s` (contiguous;
//! internal scale `t`, the reciprocal's output scale `s_r`:
//! [`SoftmaxParams`]):
//! 1. the lines' maxima `m` by MaxPool's tournament ([`super::maxpool`]: `⌈log₂
//!    n⌉` levels of comparisons, exact signed ones unless the inputs are known
//!    to be non-negative) and `d = x − m` locally;
//! 2. `e = exp(d)` at scale `t` ([`super::exp::exp_neg`], all `r·n` elements in
//!    one call);
//! 3. each line's sum `S` locally and its range-reduced reciprocal
//!    ([`super::recip::recip_range`], the `r` sums in one call);
//! 4. `y = (e·r + 2^{σ−1}) >> σ` by one rounded product
//!    ([`super::secmul::mul_round`], exact: every product is below `2^{ℓ−2}`).
//!
//! Every step is batched over all the lines: the rounds do not depend on `r`
//! or `n` beyond the tournament's `⌈log₂ n⌉` levels.
//!
//! # Cost
//! [`sci_ir::cost::math::softmax`]: the tournament's comparisons (`r·(n − 1)`;
//! in exact mode one sign test per element and one AND per comparison), exp of
//! `r·n` elements, the range-reduced reciprocal of `r`, one rounded product of
//! `r·n` elements.

use super::maxpool::{self, Compare, Windows};
use super::{Ctx, ProtoError, check, exp, recip, secmul};
use crate::pack::mask;
use sci_ir::math::SoftmaxParams;

/// Shares of [`sci_ir::math::softmax`] (scale `s`) of every line of the shared
/// ℓ-bit `x` (lines of [`SoftmaxParams::line_len`] elements, one after the other);
/// `cmp` as for [`maxpool::maxpool`].
pub fn softmax(
    ctx: &mut Ctx<'_>,
    p: &SoftmaxParams,
    cmp: Compare,
    x: &[u64],
) -> Result<Vec<u64>, ProtoError> {
    let (ell, n) = (p.ell(), p.line_len());
    let m = mask(ell);
    check(x.len().is_multiple_of(n), || {
        format!("{} elements are not lines of {n}", x.len())
    })?;
    if x.is_empty() {
        return Ok(Vec::new());
    }
    let windows = Windows::axis(&[x.len() / n, n], 1)?;
    let max = maxpool::maxpool(ctx, ell, x, &windows, cmp)?;
    let d: Vec<u64> = x
        .iter()
        .enumerate()
        .map(|(i, &v)| v.wrapping_sub(max[i / n]) & m)
        .collect();
    let e = exp::exp_neg(ctx, p.exp(), &d)?;
    let sums: Vec<u64> = e
        .chunks(n)
        .map(|line| line.iter().fold(0u64, |a, &v| a.wrapping_add(v)) & m)
        .collect();
    let r = recip::recip_range(ctx, p.recip(), &sums)?;
    let r: Vec<u64> = (0..x.len()).map(|i| r[i / n]).collect();
    secmul::mul_round(ctx, ell, p.shift(), &e, &r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::testutil::{measured, open, prg, run2, share};
    use sci_ir::cost;
    use sci_ir::math;

    /// Two-party softmax of the lines `x` against the oracle, costs pinned.
    fn check_softmax(p: &SoftmaxParams, cmp: Compare, x: &[u64], seed: u128) {
        let (ell, n) = (p.ell(), p.line_len());
        let (x0, x1) = share(&mut prg(seed), x, ell);
        let r = measured(4, |ctx, warm| {
            let x = if ctx.role == super::super::Role::P0 {
                &x0
            } else {
                &x1
            };
            softmax(ctx, p, cmp, if warm { &x[..n] } else { x })
        });
        let want: Vec<u64> = x
            .chunks(n)
            .flat_map(|line| math::softmax(p, line).unwrap())
            .collect();
        assert_eq!(open(&r.p0, &r.p1, ell), want, "{p:?} {cmp:?}");
        let exact = cmp == Compare::Exact;
        let model = |rows| cost::math::softmax(p, 4, rows, exact, true);
        let (warm, t) = (model(1), model(x.len() / n));
        if let Some(rounds) = r.pin_costs(&warm, &t, &format!("{p:?} {cmp:?}")) {
            eprintln!(
                "softmax ℓ={ell} s={} n={n} {cmp:?}: {} bits per element, rounds {rounds:?}",
                p.s(),
                t.bits() as f64 / x.len() as f64
            );
        }
    }

    /// Lines of `n` random values of random spreads (up to `2^{ℓ−3}`), every
    /// fourth all-equal, and one line holding the extremes `±2^{ℓ−3}`.
    fn lines(ell: u32, n: usize, count: usize, seed: u128) -> Vec<u64> {
        let mut g = prg(seed);
        let m = mask(ell);
        let mut x = Vec::with_capacity(count * n);
        for line in 0..count {
            let [a, b] = [g.u64s(1)[0], g.u64s(1)[0]];
            let w = (a % u64::from(ell - 3)) as u32;
            let base = (b >> (68 - ell)).wrapping_sub(1 << (ell - 5));
            let vals = g.u64s(n);
            x.extend(vals.iter().map(|&v| {
                let off = if line % 4 == 0 { 0 } else { v % (1 << w) };
                base.wrapping_add(off).wrapping_sub(1 << w >> 1) & m
            }));
        }
        let q = 1u64 << (ell - 3);
        x.extend((0..n).map(|j| {
            if j % 2 == 0 {
                q - 1
            } else {
                q.wrapping_neg() & m
            }
        }));
        x
    }

    /// Every pair of inputs at ℓ = 8 (`|x| < 2^{ℓ−2}`: the domain); random lines
    /// (all-equal ones, large spreads, the extremes) at ℓ = 16, 32 and 37,
    /// lines of 1, 2, 7 and 16, exact and narrow comparisons.
    #[test]
    fn equals_oracle() {
        let p = SoftmaxParams::new(8, 2, 2).unwrap();
        let q = 1u64 << 6;
        let x: Vec<u64> = (0..2 * q)
            .flat_map(|a| (0..2 * q).flat_map(move |b| [a, b]))
            .map(|v| v.wrapping_sub(q) & mask(8))
            .collect();
        check_softmax(&p, Compare::Exact, &x, 1);
        for (ell, s) in [(16u32, 6u32), (32, 12), (37, 16)] {
            for n in [1usize, 2, 7, 16] {
                let p = SoftmaxParams::new(ell, s, n).unwrap();
                let x = lines(ell, n, 600 / n + 3, u128::from(ell) * 100 + n as u128);
                check_softmax(&p, Compare::Exact, &x, 2);
            }
        }
        // Non-negative inputs (as after a ReLU): the paper's comparisons.
        let p = SoftmaxParams::new(32, 12, 5).unwrap();
        let x: Vec<u64> = prg(9).u64s(500).iter().map(|v| v >> 36).collect();
        check_softmax(&p, Compare::Narrow, &x, 3);
    }

    #[test]
    fn rejects_ragged_lines_and_unreduced_shares() {
        let p = SoftmaxParams::new(16, 4, 3).unwrap();
        let r = run2(4, |ctx| {
            Ok(softmax(ctx, &p, Compare::Exact, &[1, 2]).is_err()
                && softmax(ctx, &p, Compare::Exact, &[1 << 16, 0, 0]).is_err())
        });
        assert!(r.p0 && r.p1);
    }
}
