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
//! # Non-negative dividends ([`rdiv_nonneg`])
//! If the dividend is known to be non-negative (`a_u < n'`; the executor
//! uses this for a `trunc` marked `nonneg` — after a ReLU or a MaxPool of
//! one — and a `div_public` whose operand the `nonneg` analysis proves
//! non-negative), then `1{a_u ≥ n'} = 0` and only rows 1, 3, 5 and 7 of the
//! truth table of Theorem 4.1's proof (App. C, Table 8) occur. Exactly this
//! vanishes:
//! * the sign test: step 1 (`DReLU^{ring,n}` of `a`) is not run;
//! * in `corr`: its `−1` case (it needs `a_u ≥ n'`); `corr = 1` exactly in
//!   row 7 (`x_0 = x_1 = 1`), so `corr = x_0·x_1`, a product of two bits
//!   held by different parties: one correlated OT ([`trunc::and_of_bits`]:
//!   role `P0` offers `Δ = x_0` mod `n` and mod `2^δ`, role `P1` chooses
//!   with `x_1`), `λ + η + δ` bits instead of the `(4 1)-OT`'s `2λ + 4(η +
//!   δ)`;
//! * the third comparison: `A = a_0⁰ + a_1⁰ − (x_0 ∨ x_1)·n⁰ ≥ −n⁰ > −d`,
//!   so `1{A < −d} = 0` for **every** modulus and divisor (the general
//!   protocol drops it only when `2n⁰ ≤ d`): `k = 2`, and `A − d, A ∈ [−2d
//!   + 1, 2d − 2]` fit `δ = ⌈log₂ 4d⌉` signed bits.
//!
//! `B` and the comparisons `1{A < d}`, `1{A < 0}` remain. Unlike over
//! `Z_{2^ℓ}` (where `n⁰ = 0` for `d = 2^s`, and `1{A < 0}` vanishes too:
//! Corollary 4.2, [`trunc_nonneg`]), `1{A < 0}` does not vanish over `Z_n`:
//! `A < 0` when `x_0 ∨ x_1` and `a_0⁰ + a_1⁰ < n⁰`. Both variants are one
//! code path ([`Sign`]); they differ in how `corr` is obtained and in `k`.
//! Cost: `(λ + η + δ) + Π_MILL^{δ−1}` (two comparisons) `+ 2(λ + η)`; for
//! the 32-bit HE field, `s = 12`, `m = 4`: 174 + 2340 + 320 = 2834 bits per
//! element against 9560 for the general division. Rounds (role `P1`): 1,
//! the millionaires', 1. Over `Z_{2^ℓ}` with every divisor `2^s` it is
//! [`trunc_nonneg`].
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

use super::Modulus;
use super::bits::Bits;
use super::trunc::{self, trunc, trunc_nonneg};
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
/// ([`sci_ir::params::div::batch_shape`]).
fn batch_shape(md: Modulus, d: &[u64], known: Sign) -> (usize, u32) {
    sci_ir::params::div::batch_shape(md.into(), d, known == Sign::NonNeg)
}

/// The moduli of the `corr` shares: one field mod `2^{max(ℓ,δ)}` for
/// `2^ℓ`, or `(n, 2^δ)` for odd `n` ([`sci_ir::params::div::corr_fields`]).
fn corr_fields(md: Modulus, delta: u32) -> Vec<Modulus> {
    sci_ir::params::div::corr_fields(md.into(), delta)
        .into_iter()
        .map(Modulus::from)
        .collect()
}

/// What is known of the dividends' sign.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sign {
    /// Nothing: the general protocol (Algorithm 9).
    Any,
    /// Every dividend is in `[0, n/2)` (signed value `≥ 0`): the variant of the
    /// [module documentation](self) ("Non-negative dividends"); the result is
    /// unspecified for a negative dividend.
    NonNeg,
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
    divide(ctx, md.into(), a, d, Sign::Any)
}

/// [`rdiv`] of dividends known to be non-negative (signed value in `[0,
/// n/2)`; the result is unspecified otherwise): no sign test. Over `Z_n`
/// this is the truncation of a non-negative value. Cost and proof: see the
/// [module documentation](self).
pub fn rdiv_nonneg(
    ctx: &mut Ctx<'_>,
    md: impl Into<Modulus>,
    a: &[u64],
    d: &[u64],
) -> Result<Vec<u64>, ProtoError> {
    divide(ctx, md.into(), a, d, Sign::NonNeg)
}

/// [`rdiv`] or [`rdiv_nonneg`]: they differ only in how the shares of
/// `corr` are obtained and in `k`.
fn divide(
    ctx: &mut Ctx<'_>,
    md: Modulus,
    a: &[u64],
    d: &[u64],
    known: Sign,
) -> Result<Vec<u64>, ProtoError> {
    let n = a.len();
    if let (Some(s), Modulus::Pow2(ell)) = (check_divisors(md, n, d)?, md) {
        return match known {
            Sign::Any => trunc(ctx, ell, s, a),
            Sign::NonNeg => trunc_nonneg(ctx, ell, s, a),
        };
    }
    check(a.iter().all(|&v| u128::from(v) < md.value()), || {
        format!("shares must be reduced mod {md}")
    })?;
    if n == 0 {
        return Ok(Vec::new());
    }
    let divs: Vec<Div> = (0..n).map(|i| Div::new(md, divisor(d, i))).collect();
    let (k, delta) = batch_shape(md, d, known);
    let dmask = mask(delta);
    let p0 = ctx.role == Role::P0;

    let x = Bits::from_fn(n, |i| md.is_neg(a[i]));
    let fields = corr_fields(md, delta);
    let nf = fields.len();
    let corr = match known {
        Sign::Any => {
            let neg_a = sign::negative(ctx, md, a)?;
            trunc::corr(ctx, &x, &neg_a, &fields)?
        }
        Sign::NonNeg => trunc::and_of_bits(ctx, &x, &fields)?,
    };
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

/// The cost model's transcript of [`rdiv`] (`Sign::Any`) or [`rdiv_nonneg`]
/// on `n` elements ([`sci_ir::cost::div::rdiv`], [`sci_ir::cost::div::rdiv_nonneg`]).
pub fn transcript(md: Modulus, d: &[u64], m: u32, n: usize, known: Sign) -> cost::Transcript {
    match known {
        Sign::Any => cost::div::rdiv(md.into(), d, m, n),
        Sign::NonNeg => cost::div::rdiv_nonneg(md.into(), d, m, n),
    }
}

/// Exact bits on the wire of [`rdiv`] (`Sign::Any`) or [`rdiv_nonneg`] mod
/// `md` on `n` elements with divisors `d` (one for all or one each) at radix
/// `m` (the divisors must be valid).
pub fn cost_bits(md: impl Into<Modulus>, d: &[u64], m: u32, n: usize, known: Sign) -> u64 {
    transcript(md.into(), d, m, n, known).bits()
}

/// Rounds of [`rdiv`] (`Sign::Any`) or [`rdiv_nonneg`] mod `md` (role `P1`).
pub fn rounds(md: impl Into<Modulus>, d: &[u64], m: u32, known: Sign) -> u64 {
    transcript(md.into(), d, m, d.len().max(1), known).rounds(Role::P1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::testutil::{
        FIELDS, RADICES, encoding, measured, moduli, open, pin, prg, run2, run2_tcp, share,
        values_with_edges,
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
        check_known(md, x, d, m, Sign::Any);
    }

    /// [`check`] by [`rdiv`] or [`rdiv_nonneg`] (then `x` must be
    /// non-negative).
    fn check_known(md: Modulus, x: &[u64], d: &[u64], m: u32, known: Sign) {
        let (a0, a1) = share(&mut prg(7), x, md);
        let r = run2(m, |ctx| {
            let a = if ctx.role == Role::P0 { &a0 } else { &a1 };
            divide(ctx, md, a, d, known)
        });
        let enc = encoding(md);
        for (i, (&x, z)) in x.iter().zip(open(&r.p0, &r.p1, md)).enumerate() {
            let dv = divisor(d, i);
            assert_eq!(
                z,
                fixed::rdiv(x, dv, enc),
                "{md} d={dv} m={m} {known:?} x={x:#x}"
            );
        }
    }

    /// Non-negative dividends mod `md` for divisor `d`: random ones below
    /// `n/2`, 0, 1, 2, the largest `⌈n/2⌉ − 1`, and `k·d + {−1, 0, 1}` for
    /// small `k ≥ 0` and near the top.
    fn nonneg_inputs(md: Modulus, d: u64, len: usize) -> Vec<u64> {
        let half = md.value().div_ceil(2) as u64;
        let mut g = prg(md.value() ^ u128::from(d) << 64 ^ 1);
        let mut v: Vec<u64> = md
            .random(&mut g, len)
            .into_iter()
            .map(|x| x % half)
            .collect();
        v.extend([0, 1, 2, half - 1, half - 2]);
        let top = (half - 1) / d * d;
        for k in [0, d, 2 * d, 3 * d, top, top.saturating_sub(d)] {
            for off in [-1i128, 0, 1] {
                let x = i128::from(k) + off;
                if (0..i128::from(half)).contains(&x) {
                    v.push(x as u64);
                }
            }
        }
        v.sort_unstable();
        v.dedup();
        v
    }

    #[test]
    fn nonneg_equals_reference_for_fields_widths_and_shifts() {
        // Truncations of SCI_HE: the HE fields of several widths (the
        // compiler's primes of 17, 20, 32 and 44 bits) and others, shifts
        // from 1 to near the width.
        let he = [114_689u64, 1_032_193, 4_294_475_777, 17_592_186_028_033];
        for n in he.into_iter().chain(FIELDS) {
            let md = Modulus::Odd(n);
            let eta = md.bits();
            let mut shifts: Vec<u32> = [1, 2, 9, 12, 15, eta / 2, eta - 2]
                .into_iter()
                .filter(|&s| s >= 1 && (1u128 << s) < md.value() / 2)
                .collect();
            shifts.sort_unstable();
            shifts.dedup();
            for s in shifts {
                let d = 1u64 << s;
                check_known(md, &nonneg_inputs(md, d, 400), &[d], 4, Sign::NonNeg);
            }
        }
        // Radices, and divisors that are not powers of two (three comparisons
        // in the general protocol: 2^31 − 1 ≡ 34 mod 49 > 49/2), over fields
        // and rings.
        for m in RADICES {
            let md = Modulus::Odd(4_294_475_777);
            check_known(md, &nonneg_inputs(md, 512, 500), &[512], m, Sign::NonNeg);
        }
        for md in [
            Modulus::Odd((1 << 31) - 1),
            Modulus::Pow2(32),
            Modulus::Pow2(37),
        ] {
            for d in [3u64, 49, 1 << 12, 12345] {
                assert_eq!(batch_shape(md, &[d], Sign::NonNeg).0, 2);
                check_known(md, &nonneg_inputs(md, d, 500), &[d], 4, Sign::NonNeg);
            }
        }
        // Per-element divisors.
        let md = Modulus::Odd(4_294_475_777);
        let x = nonneg_inputs(md, 9, 600);
        let d: Vec<u64> = (0..x.len()).map(|i| [4, 6, 9, 9, 6, 1][i % 6]).collect();
        check_known(md, &x, &d, 4, Sign::NonNeg);
    }

    #[test]
    fn nonneg_communication_and_rounds() {
        for (md, d, m, n) in [
            (Modulus::Odd(4_294_475_777), 1u64 << 12, 4u32, 1000usize),
            (Modulus::Odd(4_294_475_777), 1 << 9, 7, 333),
            (Modulus::Odd(17_592_186_028_033), 1 << 20, 8, 300),
            (Modulus::Odd((1 << 31) - 1), 49, 4, 500),
            (Modulus::Pow2(32), 49, 4, 700),
            (Modulus::Pow2(32), 1 << 12, 4, 700),
        ] {
            let x = nonneg_inputs(md, d, n);
            let (a0, a1) = share(&mut prg(8), &x, md);
            let r = measured(m, |ctx, warm| {
                let a = if ctx.role == Role::P0 { &a0 } else { &a1 };
                rdiv_nonneg(ctx, md, if warm { &a[..8] } else { a }, &[d])
            });
            let known = Sign::NonNeg;
            pin!(
                r.bits(),
                cost_bits(md, &[d], m, x.len(), known),
                "{md} d={d} m={m}"
            );
            pin!(
                r.stats[1].rounds,
                rounds(md, &[d], m, known),
                "{md} d={d} m={m}"
            );
        }
        // The 32-bit HE field, s = 12, m = 4, at n = 2^16: the correlated OT
        // (λ + 32 + 14), Π_MILL^13 with two comparisons, B2A of 2 bits: 2834
        // bits against 9560 for the general division; rounds 1 + 2 + 1.
        let (md, n) = (Modulus::Odd(4_294_475_777), 1 << 16);
        assert_eq!(
            cost_bits(md, &[1 << 12], 4, n, Sign::NonNeg),
            (174 + 2340 + 320) * n as u64
        );
        assert_eq!(cost_bits(md, &[1 << 12], 4, n, Sign::Any), 9560 * n as u64);
        assert_eq!(rounds(md, &[1 << 12], 4, Sign::NonNeg), 1 + 2 + 1);
        // Over a ring with a power-of-two divisor: the ring's truncation.
        assert_eq!(
            cost_bits(32, &[1 << 12], 4, n, Sign::NonNeg),
            trunc::cost_bits_nonneg(32, 12, 4, n)
        );
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
            pin!(
                r.bits(),
                cost_bits(md, &[d], m, x.len(), Sign::Any),
                "{md} d={d} m={m}"
            );
            pin!(
                r.stats[1].rounds,
                rounds(md, &[d], m, Sign::Any),
                "{md} d={d} m={m}"
            );
        }
        // ℓ = 32, d = 49, m = 8 at n = 2^16: 5022 bits per element (paper 5570,
        // required ≤ 5849).
        let n = 1 << 16;
        assert_eq!(
            cost_bits(32, &[49], 8, n, Sign::Any),
            (3134 + 384 + 1024 + 480) * n as u64
        );
        assert_eq!(rounds(32, &[49], 8, Sign::Any), 2 + 1 + 1 + 1);
        // Table 3, Avgpool_49 over Z_n at η = 32, m = 7, three comparisons
        // (n = 2^32 − 5: n⁰ = 34 > 49/2).
        let md = Modulus::Odd(4_294_967_291);
        assert_eq!(batch_shape(md, &[49], Sign::Any), (3, 9));
        assert_eq!(cost_bits(md, &[49], 7, n, Sign::Any), 7156 * n as u64);
        // Rounds: DReLU^{ring,n} (its millionaires' in one OT call: 3, plus
        // its (4 1)-OT), the corr OT, Π_MILL^8 (1), the B2A.
        assert_eq!(rounds(md, &[49], 7, Sign::Any), 4 + 1 + 1 + 1);
        // The 32-bit HE prime 2^32 − 2^20 + 1 (n⁰ = 15 ≤ 49/2): two
        // comparisons; its truncation by 2^12 likewise.
        let md = Modulus::Odd(4_293_918_721);
        assert_eq!(cost_bits(md, &[49], 7, n, Sign::Any), 6152 * n as u64);
        assert_eq!(batch_shape(md, &[1 << 12], Sign::Any), (2, 14));
        assert_eq!(cost_bits(md, &[1 << 12], 7, n, Sign::Any), 6984 * n as u64);
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
                assert_eq!(batch_shape(md, &[d], Sign::Any), (2, s + 2), "n={n} s={s}");
                check(md, &inputs(md, d, 1500), &[d], 4);
            }
        }
        // 2^31 − 1 ≡ 2^s − 1 (mod 2^s): three comparisons.
        assert_eq!(
            batch_shape(Modulus::Odd((1 << 31) - 1), &[1 << 12], Sign::Any),
            (3, 15)
        );
        // The optimisation applies to rings too: 2^37 ≡ 2 (mod 7).
        assert_eq!(batch_shape(Modulus::Pow2(37), &[7], Sign::Any), (2, 5));
    }
}
