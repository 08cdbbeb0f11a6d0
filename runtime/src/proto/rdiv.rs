//! Division by public integers over `Z_{2^ℓ}`: `Π_DIV^{ring,n,d}` with
//! `n = 2^ℓ` (CrypTFlow2 Theorem 4.1, Algorithm 9, App. D): shares of
//! `rdiv(a, d) = ⌊signed(a) / d⌋ mod 2^ℓ` ([`sci_ir::fixed::rdiv`]).
//!
//! Theorem 4.1 with `n = 2^ℓ = n¹·d + n⁰`, `n' = 2^{ℓ−1}`, shares `a_b =
//! a_b¹·d + a_b⁰`, `x_b = 1{a_b ≥ n'} = MSB(a_b)`:
//!
//! `rdiv(a_0, d) + rdiv(a_1, d) + corr·n¹ + 1 − C − B ≡ rdiv(a, d)`,
//!
//! with `corr` as in Corollary 4.2, `A = a_0⁰ + a_1⁰ − (x_0 + x_1 − corr)·n⁰ ∈
//! [−2d + 2, 2d − 2]`, `B = Σ_b ⌊(a_b⁰ − x_b·n⁰)/d⌋` (local: each term is 0 or
//! −1) and `C = 1{A < d} + 1{A < 0} + 1{A < −d}`.
//!
//! # Protocol
//! 1. `DReLU^ℓ` gives shares of `MSB(a) = 1{a ≥ n'}`.
//! 2. One `(4 1)-OT` gives shares of `corr` (as in [`super::trunc`]). The
//!    paper sends `corr` mod `n` and mod `Δ = 2^δ` (ℓ + δ bits); here both
//!    moduli are powers of two, so shares mod `2^{max(ℓ,δ)}` give both by
//!    reduction: 2λ + 4·max(ℓ, δ) bits.
//! 3. Shares of `A` mod `2^δ`, `δ = ⌈log₂ 6d⌉`, are local; `A − d, A, A + d ∈
//!    [−3d + 2, 3d − 2]` do not overflow δ bits, so `1{A_j < 0} = MSB_δ(A_j)`.
//!    Role `P0` adds the `∓d`, so role `P1`'s share is the same for the three
//!    comparisons and their carries come from **one** `Π_MILL^{δ−1}` with three
//!    comparisons per element ([`mill::mill`] with `k = 3`): the leaf OTs are
//!    shared, `2λ` per leaf instead of `3·2λ` (the paper runs three separate
//!    `DReLU^δ`).
//! 4. One `Π_B2A` batch of the `3n` bits gives shares of `C`.
//!
//! Cost per element: `DReLU^ℓ + (2λ + 4·max(ℓ, δ)) + Π_MILL^{δ−1} (k = 3) +
//! 3(λ + ℓ)`. For ℓ = 32, d = 49 (δ = 9), m = 8: 3134 + 384 + 1024 + 480 =
//! 5022 bits (paper: 5570). [`cost_bits`] is exact.
//!
//! # Divisors
//! Each element may have its own divisor (average pooling without padding
//! in the count has per-position counts): one run handles them all with the
//! largest `δ`. If every divisor is the same power of two `2^s`, the cheaper
//! [`trunc()`] by `s` is used instead (`rdiv(a, 2^s) = a ≫ s`). Divisors must
//! satisfy `1 ≤ d < 2^ℓ` and `6d ≤ 2^64` (so that `δ ≤ 64`; only a
//! restriction for ℓ ≥ 63).
//!
//! # Rounds (role `P1`)
//! `DReLU^ℓ`, 1 (the OT), `Π_MILL^{δ−1}` (k = 3), 1 (B2A).

use super::bits::Bits;
use super::trunc::{self, trunc};
use super::{Ctx, ProtoError, Role, b2a, check, check_ell, drelu, mill};
use crate::net::pack::mask;

/// The per-element parameters of Theorem 4.1 for `n = 2^ℓ`.
#[derive(Clone, Copy, Debug)]
struct Div {
    d: u64,
    /// `n⁰ = 2^ℓ mod d`.
    n0: u64,
    /// `n¹ = ⌊2^ℓ / d⌋ mod 2^ℓ`.
    n1: u64,
}

impl Div {
    fn new(ell: u32, d: u64) -> Div {
        let n = 1u128 << ell;
        Div {
            d,
            n0: (n % d as u128) as u64,
            n1: (n / d as u128) as u64 & mask(ell),
        }
    }
}

/// `⌈log₂ 6d⌉`.
fn delta_bits(d: u64) -> u32 {
    128 - (6 * d as u128 - 1).leading_zeros()
}

/// The divisor of element `i` (`d` has one entry for all, or one each).
fn divisor(d: &[u64], i: usize) -> u64 {
    if d.len() == 1 { d[0] } else { d[i] }
}

/// Validates the divisors; returns `Some(s)` if they are all `2^s`.
fn check_divisors(ell: u32, n: usize, d: &[u64]) -> Result<Option<u32>, ProtoError> {
    check_ell(ell)?;
    check(d.len() == 1 || d.len() == n, || {
        format!("{} divisors for {n} elements", d.len())
    })?;
    check(
        d.iter()
            .all(|&d| d >= 1 && d <= mask(ell) && 6 * d as u128 <= 1 << 64),
        || format!("divisors must be in 1..2^{ell} and at most 2^64/6"),
    )?;
    let first = d.first().copied().unwrap_or(1);
    Ok((first.is_power_of_two() && d.iter().all(|&x| x == first)).then(|| first.trailing_zeros()))
}

/// The common `δ` of a batch.
fn batch_delta(d: &[u64]) -> u32 {
    d.iter().map(|&d| delta_bits(d)).max().unwrap_or(3)
}

/// Shares of `rdiv(a_i, d_i) = ⌊signed(a_i)/d_i⌋ mod 2^ℓ`. `d` holds one
/// divisor for all elements or one per element. Cost and rounds: see the
/// [module documentation](self).
pub fn rdiv(ctx: &mut Ctx<'_>, ell: u32, a: &[u64], d: &[u64]) -> Result<Vec<u64>, ProtoError> {
    let n = a.len();
    if let Some(s) = check_divisors(ell, n, d)? {
        return trunc(ctx, ell, s, a);
    }
    if n == 0 {
        return Ok(Vec::new());
    }
    let divs: Vec<Div> = (0..n).map(|i| Div::new(ell, divisor(d, i))).collect();
    let delta = batch_delta(d);
    let dmask = mask(delta);
    let p0 = ctx.role == Role::P0;

    let msb = drelu::msb(ctx, ell, a)?;
    let corr = trunc::corr(ctx, ell, a, &msb, ell.max(delta))?;

    // Shares of A mod 2^δ, then A − d, A, A + d (role P0 adds ∓d) and the
    // carries of their low δ − 1 bits against role P1's common share.
    let low = mask(delta - 1);
    let xb = |i: usize| (a[i] >> (ell - 1)) & 1;
    let big_a: Vec<u64> = (0..n)
        .map(|i| {
            let v = divs[i];
            let t = xb(i).wrapping_sub(corr[i]).wrapping_mul(v.n0);
            (a[i] % v.d).wrapping_sub(t) & dmask
        })
        .collect();
    let shares: Vec<u64> = if p0 {
        (0..3 * n)
            .map(|k| {
                let (i, j) = (k / 3, k % 3);
                let dv = divs[i].d;
                let off = [dv.wrapping_neg(), 0, dv][j];
                big_a[i].wrapping_add(off) & dmask
            })
            .collect()
    } else {
        big_a
    };
    let input: Vec<u64> = shares
        .iter()
        .map(|&x| if p0 { low - (x & low) } else { x & low })
        .collect();
    let mut neg = mill::mill(ctx, delta - 1, 3, &input)?;
    // MSB_δ(A_j) = carry ⊕ msb of both shares; role P1's share is the same
    // for the three comparisons.
    neg.xor_assign(&Bits::from_fn(3 * n, |k| {
        let own = if p0 { shares[k] } else { shares[k / 3] };
        (own >> (delta - 1)) & 1 == 1
    }));
    let c = b2a::b2a(ctx, ell, &neg)?;

    let m = mask(ell);
    Ok((0..n)
        .map(|i| {
            let v = divs[i];
            let signed = ((a[i] << (64 - ell)) as i64) >> (64 - ell);
            let own = (signed as i128).div_euclid(v.d as i128) as u64;
            let c_sum = c[3 * i]
                .wrapping_add(c[3 * i + 1])
                .wrapping_add(c[3 * i + 2]);
            // B_b = ⌊(a_b⁰ − x_b·n⁰)/d⌋ ∈ {−1, 0}.
            let b_term = if a[i] % v.d < xb(i) * v.n0 {
                u64::MAX
            } else {
                0
            };
            own.wrapping_add(corr[i].wrapping_mul(v.n1))
                .wrapping_add(u64::from(!p0))
                .wrapping_sub(c_sum)
                .wrapping_sub(b_term)
                & m
        })
        .collect())
}

/// Exact bits on the wire of [`rdiv`] on `n` elements with divisors `d`
/// (one for all or one each) at radix `m`.
pub fn cost_bits(ell: u32, d: &[u64], m: u32, n: usize) -> u64 {
    match check_divisors(ell, n, d) {
        Ok(Some(s)) => trunc::cost_bits(ell, s, m, n),
        _ if n == 0 => 0,
        _ => {
            let delta = batch_delta(d);
            drelu::cost_bits(ell, m, n)
                + mill::kk_bits(4, ell.max(delta), n)
                + mill::cost_bits(delta - 1, m, 3, n)
                + b2a::cost_bits(ell, 3 * n)
        }
    }
}

/// Rounds of [`rdiv`] (role `P1`).
pub fn rounds(ell: u32, d: &[u64], m: u32) -> u64 {
    match check_divisors(ell, d.len(), d) {
        Ok(Some(s)) => trunc::rounds(ell, s, m),
        _ => drelu::rounds(ell, m) + 1 + mill::rounds(batch_delta(d) - 1, m, 3) + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::testutil::{ELLS, RADICES, measured, open, prg, run2, run2_tcp, share};
    use sci_ir::Encoding;
    use sci_ir::fixed;

    /// Random values, extremes, and `k·d + {−1, 0, 1}` for small `k`.
    fn inputs(ell: u32, d: u64, n: usize) -> Vec<u64> {
        let mut g = prg((ell as u128) << 64 | d as u128);
        let mut v = g.ring_elems(n, ell);
        let half = 1i128 << (ell - 1);
        for k in -3i128..=3 {
            for off in -1i128..=1 {
                v.push((k * d as i128 + off) as u64);
            }
        }
        v.extend([0, 1, -1, half - 1, -half, -half + 1].map(|x| x as u64));
        v.iter().map(|&x| x & mask(ell)).collect()
    }

    fn check(ell: u32, x: &[u64], d: &[u64], m: u32) {
        let (a0, a1) = share(&mut prg(7), x, ell);
        let r = run2(m, |ctx| {
            rdiv(ctx, ell, if ctx.role == Role::P0 { &a0 } else { &a1 }, d)
        });
        let enc = Encoding::ring(ell).expect("ring");
        for (i, (&x, z)) in x.iter().zip(open(&r.p0, &r.p1, ell)).enumerate() {
            let dv = divisor(d, i);
            assert_eq!(z, fixed::rdiv(x, dv, enc), "ℓ={ell} d={dv} m={m} x={x:#x}");
        }
    }

    fn divisors(ell: u32) -> Vec<u64> {
        [
            1u64,
            2,
            3,
            7,
            8,
            49,
            100,
            12345,
            mask(ell).min(u64::MAX / 6),
        ]
        .into_iter()
        .filter(|&d| d <= mask(ell) && 6 * d as u128 <= 1 << 64)
        .collect()
    }

    #[test]
    fn equals_reference_for_all_widths_and_divisors() {
        for ell in ELLS {
            for d in divisors(ell) {
                let n = if d == 49 { 10_000 } else { 1500 };
                check(ell, &inputs(ell, d, n), &[d], 4);
            }
        }
        for m in RADICES {
            check(41, &inputs(41, 49, 2000), &[49], m);
        }
    }

    #[test]
    fn per_element_divisors() {
        // The counts of a 3×3 average pool with padding 1, not counting pads.
        for ell in [8u32, 32, 64] {
            let x = inputs(ell, 9, 3000);
            let d: Vec<u64> = (0..x.len()).map(|i| [4, 6, 9, 9, 6, 1][i % 6]).collect();
            check(ell, &x, &d, 4);
        }
    }

    #[test]
    fn rejects_bad_divisors() {
        let r = run2(4, |ctx| {
            Ok([
                rdiv(ctx, 8, &[1, 2], &[0]).is_err(),
                rdiv(ctx, 8, &[1, 2], &[256]).is_err(),
                rdiv(ctx, 8, &[1, 2], &[3, 3, 3]).is_err(),
                rdiv(ctx, 64, &[1], &[1 << 62]).is_err(),
            ])
        });
        assert_eq!(r.p0, [true; 4]);
    }

    #[test]
    fn communication_and_rounds() {
        for (ell, d, m, n) in [
            (32u32, 49u64, 8u32, 1000usize),
            (32, 49, 4, 4096),
            (37, 7, 7, 333),
            (32, 16, 4, 512),
        ] {
            let x = inputs(ell, d, n);
            let (a0, a1) = share(&mut prg(8), &x, ell);
            let r = measured(m, |ctx, warm| {
                let a = if ctx.role == Role::P0 { &a0 } else { &a1 };
                rdiv(ctx, ell, if warm { &a[..8] } else { a }, &[d])
            });
            assert_eq!(
                r.bits(),
                cost_bits(ell, &[d], m, x.len()),
                "ℓ={ell} d={d} m={m}"
            );
            assert_eq!(
                r.stats[1].rounds,
                rounds(ell, &[d], m),
                "ℓ={ell} d={d} m={m}"
            );
        }
        // ℓ = 32, d = 49, m = 8 at n = 2^16: 5022 bits per element (paper 5570,
        // required ≤ 5849).
        let n = 1 << 16;
        assert_eq!(
            cost_bits(32, &[49], 8, n),
            (3134 + 384 + 1024 + 480) * n as u64
        );
        assert_eq!(rounds(32, &[49], 8), 6 + 1 + 1 + 1);
    }

    #[test]
    fn over_tcp_loopback() {
        let x = inputs(32, 49, 1 << 16);
        check(32, &x[..0], &[49], 4);
        let (a0, a1) = share(&mut prg(9), &x, 32);
        let r = run2_tcp(4, |ctx| {
            rdiv(ctx, 32, if ctx.role == Role::P0 { &a0 } else { &a1 }, &[49])
        });
        let enc = Encoding::ring(32).expect("ring");
        let want: Vec<u64> = x.iter().map(|&x| fixed::rdiv(x, 49, enc)).collect();
        assert_eq!(open(&r.p0, &r.p1, 32), want);
    }
}
