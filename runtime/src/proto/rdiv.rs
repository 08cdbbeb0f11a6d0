//! Division by public integers `Π_DIV^{ring,n,d}` (CrypTFlow2 Theorem 4.1,
//! Algorithm 9, App. D) over any [`Modulus`]: `Z_{2^ℓ}` (SCI_OT) or an odd
//! `Z_n` (SCI_HE's field). Shares of `rdiv(a, d) = ⌊signed(a) / d⌋ mod n`
//! ([`sci_ir::fixed::rdiv`]); truncation in `Z_n` is the division by `2^s`
//! (§5.1.1, "Faithful truncation").
//!
//! Theorem 4.1 with `n = n¹·d + n⁰`, `n' = ⌈n/2⌉`, shares `a_b = a_b¹·d +
//! a_b⁰`, `x_b = 1{a_b ≥ n'}` (for `2^ℓ`: `MSB(a_b)`):
//!
//! `rdiv(a_0, d) + rdiv(a_1, d) + corr·n¹ + 1 − C − B ≡ rdiv(a, d)  (mod n)`,
//!
//! with `corr` as in Corollary 4.2, `A = a_0⁰ + a_1⁰ − (x_0 + x_1 − corr)·n⁰ ∈
//! [−2d + 2, 2d − 2]`, `B = Σ_b ⌊(a_b⁰ − x_b·n⁰)/d⌋` (local: each term is 0 or
//! −1) and `C = 1{A < d} + 1{A < 0} + 1{A < −d}`.
//!
//! # Protocol (Algorithm 9)
//! 1. `DReLU^{ring,n}` ([`sign::negative`]) gives shares of `1{a ≥ n'}`.
//! 2. One `(4 1)-OT` gives shares of `corr` mod `n` and mod `Δ = 2^δ`
//!    ([`trunc::corr`], steps 6–17). For `n = 2^ℓ` both moduli are powers of
//!    two, so shares mod `2^{max(ℓ,δ)}` give both by reduction: 2λ +
//!    4·max(ℓ, δ) bits; for odd `n` the message holds both, 2λ + 4(η + δ).
//! 3. Shares of `A` mod `2^δ` are local; the comparisons `A_j < 0` for `A_j ∈
//!    {A − d, A, A + d}` are `MSB_δ(A_j)` as long as the `A_j` fit δ signed
//!    bits. Role `P0` adds the `∓d`, so role `P1`'s share is the same for all
//!    comparisons and their carries come from **one** `Π_MILL^{δ−1}` with `k`
//!    comparisons per element ([`mill::mill`]): the leaf OTs are shared, `2λ`
//!    per leaf instead of `k·2λ` (the paper runs `k` separate `DReLU^δ`).
//! 4. One `Π_B2A^n` batch of the `k·len` bits gives shares of `C`.
//!
//! # Two or three comparisons (§4.2.3)
//! In general `k = 3` and `δ = ⌈log₂ 6d⌉` (`A ± d ∈ [−3d + 2, 3d − 2]`). If
//! `2·n⁰ ≤ d` then `A ≥ −2n⁰ ≥ −d`, so `1{A < −d} = 0`: the third comparison
//! is dropped (`k = 2`) and `δ = ⌈log₂ 4d⌉` suffices (`A − d, A ∈ [−2d, 2d −
//! 2]`). This is the paper's truncation in rings with special structure: an
//! HE plaintext prime `n ≡ 1 (mod 2N)` has `n⁰ = n mod 2^s = 1` for `2^s ≤
//! 2N`, so every truncation of SCI_HE takes the cheaper path. The test
//! applies to any modulus and divisor (per batch: all elements must pass).
//!
//! # Cost per element
//! `DReLU^{ring,n} + (2λ + 4·W) + Π_MILL^{δ−1} (k comparisons) + k(λ + η)`,
//! `W` the bits of the `corr` message. For ℓ = 32, d = 49 (δ = 9), m = 8:
//! 3134 + 384 + 1024 + 480 = 5022 bits (paper: 5570). Over `Z_n` with η =
//! 32 (`n = 2^32 − 5`), d = 49, m = 7: 4904 + 420 + 1352 + 480 = 7156 bits
//! and 7 rounds (paper, Table 3: 7796 bits, 14 rounds); with the HE prime
//! `2^32 − 2^20 + 1` (two comparisons) 6152 bits, and its truncation by
//! `2^12` 6984 bits. [`cost_bits`] is exact.
//!
//! # Divisors
//! Each element may have its own divisor (average pooling without padding
//! in the count has per-position counts): one run handles them all with the
//! largest `δ`. Over `Z_{2^ℓ}`, if every divisor is the same power of two
//! `2^s`, the cheaper [`trunc()`] by `s` is used instead (`rdiv(a, 2^s) = a ≫
//! s`). Divisors must satisfy `1 ≤ d < n` and `6d ≤ 2^64` (so that `δ ≤ 64`).
//!
//! # Rounds (role `P1`)
//! `DReLU`, 1 (the OT), `Π_MILL^{δ−1}` (`k` comparisons), 1 (B2A).

use super::bits::Bits;
use super::modulus::Modulus;
use super::trunc::{self, trunc};
use super::{Ctx, ProtoError, Role, b2a, check, mill, sign};
use crate::pack::mask;
use sci_ir::cost;

/// The per-element parameters of Theorem 4.1.
#[derive(Clone, Copy, Debug)]
struct Div {
    d: u64,
    /// `n⁰ = n mod d`.
    n0: u64,
    /// `n¹ = ⌊n / d⌋ mod n`.
    n1: u64,
}

impl Div {
    fn new(md: Modulus, d: u64) -> Div {
        let n = md.value();
        Div {
            d,
            n0: (n % u128::from(d)) as u64,
            n1: md.reduce_i128((n / u128::from(d)) as i128),
        }
    }
}

/// The divisor of element `i` (`d` has one entry for all, or one each).
fn divisor(d: &[u64], i: usize) -> u64 {
    if d.len() == 1 { d[0] } else { d[i] }
}

/// Validates the divisors; returns `Some(s)` if the modulus is `2^ℓ` and the
/// divisors are all `2^s`.
fn check_divisors(md: Modulus, n: usize, d: &[u64]) -> Result<Option<u32>, ProtoError> {
    md.check()?;
    check(d.len() == 1 || d.len() == n, || {
        format!("{} divisors for {n} elements", d.len())
    })?;
    check(
        d.iter()
            .all(|&d| d >= 1 && u128::from(d) < md.value() && 6 * d as u128 <= 1 << 64),
        || format!("divisors must be in 1..{md} and at most 2^64/6"),
    )?;
    let first = d.first().copied().unwrap_or(1);
    let pow2 =
        matches!(md, Modulus::Pow2(_)) && first.is_power_of_two() && d.iter().all(|&x| x == first);
    Ok(pow2.then(|| first.trailing_zeros()))
}

/// The comparisons per element (`k`) and their width `δ` for a batch
/// ([`sci_ir::cost::div::batch_shape`]).
fn batch_shape(md: Modulus, d: &[u64]) -> (usize, u32) {
    cost::div::batch_shape(md.into(), d)
}

/// The moduli of the `corr` shares: one field mod `2^{max(ℓ,δ)}` for
/// `2^ℓ`, or `(n, 2^δ)` for odd `n` ([`sci_ir::cost::div::corr_fields`]).
fn corr_fields(md: Modulus, delta: u32) -> Vec<Modulus> {
    cost::div::corr_fields(md.into(), delta)
        .into_iter()
        .map(Modulus::from)
        .collect()
}

/// Shares of `rdiv(a_i, d_i) = ⌊signed(a_i)/d_i⌋ mod n` for shares `a` mod
/// `md` (`Z_{2^ℓ}` for an ℓ given as `u32`). `d` holds one divisor for all
/// elements or one per element. Cost and rounds: see the [module
/// documentation](self).
pub fn rdiv(
    ctx: &mut Ctx<'_>,
    md: impl Into<Modulus>,
    a: &[u64],
    d: &[u64],
) -> Result<Vec<u64>, ProtoError> {
    let md = md.into();
    let n = a.len();
    if let (Some(s), Modulus::Pow2(ell)) = (check_divisors(md, n, d)?, md) {
        return trunc(ctx, ell, s, a);
    }
    check(a.iter().all(|&v| u128::from(v) < md.value()), || {
        format!("shares must be reduced mod {md}")
    })?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let divs: Vec<Div> = (0..n).map(|i| Div::new(md, divisor(d, i))).collect();
    let (k, delta) = batch_shape(md, d);
    let dmask = mask(delta);
    let p0 = ctx.role == Role::P0;

    let x = Bits::from_fn(n, |i| md.is_neg(a[i]));
    let neg_a = sign::negative(ctx, md, a)?;
    let fields = corr_fields(md, delta);
    let nf = fields.len();
    let corr = trunc::corr(ctx, &x, &neg_a, &fields)?;
    // Shares of corr mod n and mod 2^δ.
    let corr_n = |i: usize| md.reduce(corr[i * nf]);
    let corr_d = |i: usize| corr[i * nf + nf - 1] & dmask;

    // Shares of A mod 2^δ, then A − d, A (, A + d) (role P0 adds the
    // offsets) and the carries of their low δ − 1 bits against role P1's
    // common share.
    let low = mask(delta - 1);
    let big_a: Vec<u64> = (0..n)
        .map(|i| {
            let v = divs[i];
            let t = x.bit(i).wrapping_sub(corr_d(i)).wrapping_mul(v.n0);
            (a[i] % v.d).wrapping_sub(t) & dmask
        })
        .collect();
    let shares: Vec<u64> = if p0 {
        (0..k * n)
            .map(|c| {
                let (i, j) = (c / k, c % k);
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
        .map(|&v| if p0 { low - (v & low) } else { v & low })
        .collect();
    let mut neg = mill::mill(ctx, delta - 1, k, &input)?;
    // MSB_δ(A_j) = carry ⊕ msb of both shares; role P1's share is the same
    // for the k comparisons.
    neg.xor_assign(&Bits::from_fn(k * n, |c| {
        let own = if p0 { shares[c] } else { shares[c / k] };
        (own >> (delta - 1)) & 1 == 1
    }));
    let c = b2a::b2a(ctx, md, &neg)?;

    let one = md.reduce(1);
    Ok((0..n)
        .map(|i| {
            let v = divs[i];
            let own = md.reduce_i128(i128::from(md.signed(a[i])).div_euclid(i128::from(v.d)));
            let mut z = md.add(own, md.mul(corr_n(i), v.n1));
            if !p0 {
                z = md.add(z, one);
            }
            for &cj in &c[k * i..k * (i + 1)] {
                z = md.sub(z, cj);
            }
            // B_b = ⌊(a_b⁰ − x_b·n⁰)/d⌋ ∈ {−1, 0}.
            if a[i] % v.d < x.bit(i) * v.n0 {
                z = md.add(z, one);
            }
            z
        })
        .collect())
}

/// Exact bits on the wire of [`rdiv`] mod `md` on `n` elements with
/// divisors `d` (one for all or one each) at radix `m`
/// ([`sci_ir::cost::div::rdiv`]; the divisors must be valid).
pub fn cost_bits(md: impl Into<Modulus>, d: &[u64], m: u32, n: usize) -> u64 {
    cost::div::rdiv(md.into().into(), d, m, n).bits()
}

/// Rounds of [`rdiv`] mod `md` (role `P1`).
pub fn rounds(md: impl Into<Modulus>, d: &[u64], m: u32) -> u64 {
    cost::div::rdiv(md.into().into(), d, m, d.len().max(1)).rounds(Role::P1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::testutil::{
        RADICES, encoding, measured, moduli, open, prg, run2, run2_tcp, share, values_with_edges,
    };
    use sci_ir::fixed;

    /// Random elements mod `md`, the edges of its signed range, and
    /// `k·d + {−1, 0, 1}` for small `k`.
    fn inputs(md: Modulus, d: u64, len: usize) -> Vec<u64> {
        let mut g = prg(md.value() ^ u128::from(d) << 64);
        let mut v = values_with_edges(&mut g, len, md);
        for k in -3i128..=3 {
            for off in -1i128..=1 {
                v.push(md.reduce_i128(k * i128::from(d) + off));
            }
        }
        v
    }

    /// Secure division of `x` by `d` (one divisor or one per element) against
    /// the reference's `rdiv`.
    fn check(md: Modulus, x: &[u64], d: &[u64], m: u32) {
        let (a0, a1) = share(&mut prg(7), x, md);
        let r = run2(m, |ctx| {
            rdiv(ctx, md, if ctx.role == Role::P0 { &a0 } else { &a1 }, d)
        });
        let enc = encoding(md);
        for (i, (&x, z)) in x.iter().zip(open(&r.p0, &r.p1, md)).enumerate() {
            let dv = divisor(d, i);
            assert_eq!(z, fixed::rdiv(x, dv, enc), "{md} d={dv} m={m} x={x:#x}");
        }
    }

    /// Divisors tested mod `md`: small ones, a power of two, and ones near
    /// the largest element (at most `2^64/6`, the protocol's bound).
    fn divisors(md: Modulus) -> Vec<u64> {
        let top = (md.value() - 1) as u64;
        let mut d: Vec<u64> = [1u64, 2, 3, 7, 8, 49, 100, 1 << 12, 12345, top / 3, top]
            .into_iter()
            .map(|d| d.min(u64::MAX / 6))
            .filter(|&d| d >= 1 && d <= top)
            .collect();
        d.sort_unstable();
        d.dedup();
        d
    }

    #[test]
    fn equals_reference_for_all_moduli_and_divisors() {
        for md in moduli() {
            for d in divisors(md) {
                let len = match md {
                    Modulus::Pow2(_) if d == 49 => 10_000,
                    Modulus::Pow2(_) => 1500,
                    Modulus::Odd(_) => 600,
                };
                check(md, &inputs(md, d, len), &[d], 4);
            }
        }
        for md in [Modulus::Pow2(41), Modulus::Odd(2_199_023_190_017)] {
            for m in RADICES {
                check(md, &inputs(md, 49, 1000), &[49], m);
            }
        }
    }

    #[test]
    fn per_element_divisors() {
        // The counts of a 3×3 average pool with padding 1, not counting pads.
        for md in [8u32, 32, 64]
            .map(Modulus::Pow2)
            .into_iter()
            .chain([Modulus::Odd(4_293_918_721)])
        {
            let x = inputs(md, 9, 3000);
            let d: Vec<u64> = (0..x.len()).map(|i| [4, 6, 9, 9, 6, 1][i % 6]).collect();
            check(md, &x, &d, 4);
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
        for (md, d, m, n) in [
            (Modulus::Pow2(32), 49u64, 8u32, 1000usize),
            (Modulus::Pow2(32), 49, 4, 4096),
            (Modulus::Pow2(37), 7, 7, 333),
            (Modulus::Pow2(32), 16, 4, 512),
            (Modulus::Odd(4_293_918_721), 49, 7, 1000),
            (Modulus::Odd(4_293_918_721), 1 << 12, 4, 777),
            (Modulus::Odd(2_199_023_190_017), 169, 4, 500),
            (Modulus::Odd((1 << 61) - 1), 1 << 20, 8, 300),
        ] {
            let x = inputs(md, d, n);
            let (a0, a1) = share(&mut prg(8), &x, md);
            let r = measured(m, |ctx, warm| {
                let a = if ctx.role == Role::P0 { &a0 } else { &a1 };
                rdiv(ctx, md, if warm { &a[..8] } else { a }, &[d])
            });
            assert_eq!(
                r.bits(),
                cost_bits(md, &[d], m, x.len()),
                "{md} d={d} m={m}"
            );
            assert_eq!(r.stats[1].rounds, rounds(md, &[d], m), "{md} d={d} m={m}");
        }
        // ℓ = 32, d = 49, m = 8 at n = 2^16: 5022 bits per element (paper 5570,
        // required ≤ 5849).
        let n = 1 << 16;
        assert_eq!(
            cost_bits(32, &[49], 8, n),
            (3134 + 384 + 1024 + 480) * n as u64
        );
        assert_eq!(rounds(32, &[49], 8), 2 + 1 + 1 + 1);
        // Table 3, Avgpool_49 over Z_n at η = 32, m = 7, three comparisons
        // (n = 2^32 − 5: n⁰ = 34 > 49/2).
        let md = Modulus::Odd(4_294_967_291);
        assert_eq!(batch_shape(md, &[49]), (3, 9));
        assert_eq!(cost_bits(md, &[49], 7, n), 7156 * n as u64);
        // Rounds: DReLU^{ring,n} (its millionaires' in one OT call: 3, plus
        // its (4 1)-OT), the corr OT, Π_MILL^8 (1), the B2A.
        assert_eq!(rounds(md, &[49], 7), 4 + 1 + 1 + 1);
        // The 32-bit HE prime 2^32 − 2^20 + 1 (n⁰ = 15 ≤ 49/2): two
        // comparisons; its truncation by 2^12 likewise.
        let md = Modulus::Odd(4_293_918_721);
        assert_eq!(cost_bits(md, &[49], 7, n), 6152 * n as u64);
        assert_eq!(batch_shape(md, &[1 << 12]), (2, 14));
        assert_eq!(cost_bits(md, &[1 << 12], 7, n), 6984 * n as u64);
    }

    #[test]
    fn over_tcp_loopback() {
        let md = Modulus::Pow2(32);
        let x = inputs(md, 49, 1 << 16);
        check(md, &x[..0], &[49], 4);
        let (a0, a1) = share(&mut prg(9), &x, md);
        let r = run2_tcp(4, |ctx| {
            rdiv(ctx, md, if ctx.role == Role::P0 { &a0 } else { &a1 }, &[49])
        });
        let enc = encoding(md);
        let want: Vec<u64> = x.iter().map(|&x| fixed::rdiv(x, 49, enc)).collect();
        assert_eq!(open(&r.p0, &r.p1, md), want);
    }

    #[test]
    fn field_truncation_takes_two_comparisons() {
        // HE plaintext primes n ≡ 1 mod 2^14: n⁰ = n mod 2^s = 1 ≤ 2^s / 2.
        for n in [4_293_918_721u64, 2_199_023_190_017, 65537] {
            let md = Modulus::Odd(n);
            for s in [1u32, 5, 12] {
                let d = 1u64 << s;
                assert_eq!(batch_shape(md, &[d]), (2, s + 2), "n={n} s={s}");
                check(md, &inputs(md, d, 1500), &[d], 4);
            }
        }
        // 2^31 − 1 ≡ 2^s − 1 (mod 2^s): three comparisons.
        assert_eq!(
            batch_shape(Modulus::Odd((1 << 31) - 1), &[1 << 12]),
            (3, 15)
        );
        // The optimisation applies to rings too: 2^37 ≡ 2 (mod 7).
        assert_eq!(batch_shape(Modulus::Pow2(37), &[7]), (2, 5));
    }
}
