//! Truncation `Π_Trunc^{int,ℓ,s}` (CrypTFlow2 Algorithm 5, Corollary 4.2):
//! shares of `a ≫ s`, the arithmetic shift of the signed value
//! ([`sci_ir::fixed::trunc`]).
//!
//! Notation: `a_b` are the unsigned shares, `A_b = signed(a_b)`, `x_b =
//! MSB(a_b)`, `a_b^0 = a_b mod 2^s`, `c = 1{a_0^0 + a_1^0 ≥ 2^s}`. Corollary 4.2,
//! where `a_b ≫ s` is the *arithmetic* shift of the share (that is how it
//! follows from Theorem 4.1, whose `rdiv` of a share is signed):
//!
//! `a ≫ s = (a_0 ≫ s) + (a_1 ≫ s) + corr·2^{ℓ−s} + c  (mod 2^ℓ)`,
//!
//! with `corr = −1` if `MSB(a) = 1` and `x_0 = x_1 = 0`, `+1` if `MSB(a) = 0`
//! and `x_0 = x_1 = 1`, else 0.
//!
//! # [`trunc`]: the general protocol (Algorithm 5)
//! One `DReLU^ℓ` gives shares of `MSB(a)`; one `(4 1)-OT` (role `P1` chooses
//! with its shares of `MSB(a)` and `x_1`) gives arithmetic shares of `corr`;
//! `Π_MILL^s` on `2^s − 1 − a_0^0` and `a_1^0` gives shares of `c`, and
//! `Π_B2A` lifts them. Since only `corr·2^{ℓ−s} mod 2^ℓ` is used, the shares
//! of `corr` are needed mod `2^s` only: the OT carries `s`-bit messages
//! (the paper uses ℓ), 2λ + 4s bits instead of 2λ + 4ℓ. Cost:
//! `DReLU^ℓ + (2λ + 4s) + Π_MILL^s + (λ + ℓ)`; for ℓ = 32, s = 12, m = 7:
//! 4230 bits (paper 4310).
//!
//! # [`trunc_nonneg`]: inputs known to be non-negative
//! If `signed(a) ≥ 0` no `DReLU` is needed: `corr = x_0 ∧ x_1 = x_0·x_1`.
//!
//! *Proof.* Let `a_u ∈ [0, 2^{ℓ−1})` be the unsigned value of `a`. Each `A_b ∈
//! [−2^{ℓ−1}, 2^{ℓ−1})` and `A_0 + A_1 ≡ a_u (mod 2^ℓ)`, so `A_0 + A_1 = a_u +
//! t·2^ℓ` with `A_0 + A_1 ∈ [−2^ℓ, 2^ℓ − 2]` forcing `t ∈ {−1, 0}`. If `x_0 = x_1
//! = 1` then `A_0 + A_1 < 0 ≤ a_u`, so `t = −1`. Otherwise `A_0 + A_1 ≥
//! −2^{ℓ−1}`, while `t = −1` would give `A_0 + A_1 = a_u − 2^ℓ < −2^{ℓ−1}`; so
//! `t = 0`. Hence `a_u = A_0 + A_1 + (x_0 x_1)·2^ℓ`. Write `A_b = Q_b·2^s +
//! a_b^0` with `Q_b = ⌊A_b / 2^s⌋ = a_b ≫ s` (arithmetic) and `a_b^0 = A_b mod
//! 2^s = a_b mod 2^s`. Then `a_u = (Q_0 + Q_1 + x_0x_1·2^{ℓ−s})·2^s + a_0^0 +
//! a_1^0` with `0 ≤ a_0^0 + a_1^0 < 2^{s+1}`, so `⌊a_u / 2^s⌋ = Q_0 + Q_1 +
//! x_0x_1·2^{ℓ−s} + c`, and `a ≫ s = ⌊a_u / 2^s⌋` because `a ≥ 0`. ∎
//!
//! The product `x_0·x_1` of two bits held by different parties is one
//! correlated OT (role `P0` sends `Δ = x_0` mod `2^s`, role `P1` chooses with
//! `x_1`), run in the same OT batch as the B2A of `c`. Cost: `Π_MILL^s +
//! (λ + ℓ) + (λ + s)`; for ℓ = 32, s = 12, m = 4: 1144 + 160 + 140 = 1444 bits
//! (the general protocol: 3828 + 304 + 1144 + 160 = 5436).
//!
//! The two millionaires' of the general protocol (`Π_MILL^{ℓ−1}` inside the
//! `DReLU` and `Π_MILL^s`) do not depend on each other: they run together
//! ([`mill::mill_multi`]: one OT call for the leaves and triples of both,
//! one exchange per tree level for both), so the truncation costs the rounds
//! of the deeper one.
//!
//! # Rounds (role `P1`)
//! General: the millionaires' (those of `Π_MILL^{ℓ−1}`), one for the `corr`
//! OT, one for B2A. Non-negative: `Π_MILL^s` and one.

use super::Modulus;
use super::bits::Bits;
use super::mill::MillSpec;
use super::{Ctx, ProtoError, Role, b2a, check, check_ell, drelu, mill, mux};
use crate::ot::{CotFields, KkClass, Word};
use crate::pack::{mask, mask128};
use sci_ir::cost;

/// Exact bits on the wire of [`trunc`] on `n` elements at radix `m`.
pub fn cost_bits(ell: u32, s: u32, m: u32, n: usize) -> u64 {
    cost::div::trunc(ell, s, m, n).bits()
}

/// Exact bits on the wire of [`trunc_nonneg`] on `n` elements at radix `m`
/// (one correlated-OT batch of 2n instances, nℓ + ns correction bits, after
/// the millionaires').
pub fn cost_bits_nonneg(ell: u32, s: u32, m: u32, n: usize) -> u64 {
    cost::div::trunc_nonneg(ell, s, m, n).bits()
}

/// Rounds of [`trunc`] (role `P1`).
pub fn rounds(ell: u32, s: u32, m: u32) -> u64 {
    cost::div::trunc(ell, s, m, 1).rounds(Role::P1)
}

/// Rounds of [`trunc_nonneg`] of ℓ-bit shares (role `P1`).
pub fn rounds_nonneg(ell: u32, s: u32, m: u32) -> u64 {
    cost::div::trunc_nonneg(ell, s, m, 1).rounds(Role::P1)
}

/// `a_b ≫ s`, the arithmetic shift of the ℓ-bit share, reduced mod `2^ℓ`.
pub(crate) fn ashr(a: u64, ell: u32, s: u32) -> u64 {
    let signed = ((a << (64 - ell)) as i64) >> (64 - ell);
    (signed >> s) as u64 & mask(ell)
}

/// Checks the arguments shared by both truncations.
fn check_args(ell: u32, s: u32) -> Result<(), ProtoError> {
    check_ell(ell)?;
    check(s < ell, || format!("shift {s} not below ℓ = {ell}"))
}

/// Shares of `c = 1{a_0^0 + a_1^0 ≥ 2^s}` from `Π_MILL^s`.
fn low_carry(ctx: &mut Ctx<'_>, s: u32, a: &[u64]) -> Result<Bits, ProtoError> {
    let input = drelu::carry_input(ctx.role, s, a);
    mill::mill(ctx, s, 1, &input)
}

/// Shares of `MSB(a)` and of the low bits' carry `c = 1{a_0^0 + a_1^0 ≥ 2^s}`: the
/// `DReLU`'s `Π_MILL^{ℓ−1}` and `Π_MILL^s` as one [`mill::mill_multi`] (the rounds of
/// the deeper one).
fn msb_and_low_carry(
    ctx: &mut Ctx<'_>,
    ell: u32,
    s: u32,
    a: &[u64],
) -> Result<(Bits, Bits), ProtoError> {
    let (hi, lo) = (
        drelu::carry_input(ctx.role, ell - 1, a),
        drelu::carry_input(ctx.role, s, a),
    );
    let specs = [
        MillSpec {
            bits: ell - 1,
            k: 1,
            input: &hi,
        },
        MillSpec {
            bits: s,
            k: 1,
            input: &lo,
        },
    ];
    let mut carries = mill::mill_multi(ctx, &specs)?.into_iter();
    let (Some(carry), Some(c)) = (carries.next(), carries.next()) else {
        return Err(ProtoError::InvalidArgument(
            "millionaires' returned fewer results than specs".into(),
        ));
    };
    Ok((drelu::msb_from_carry(carry, ell, a), c))
}

/// `(a_b ≫ s) + corr_b·2^{ℓ−s} + d_b mod 2^ℓ`.
fn combine(a: &[u64], corr: &[u64], d: &[u64], ell: u32, s: u32) -> Vec<u64> {
    a.iter()
        .zip(corr)
        .zip(d)
        .map(|((&a, &c), &d)| {
            ashr(a, ell, s).wrapping_add(c << (ell - s)).wrapping_add(d) & mask(ell)
        })
        .collect()
}

/// Shares of the correction term `corr ∈ {−1, 0, 1}` of Corollary 4.2 and
/// Theorem 4.1, given boolean shares `msb` of `1{a ≥ n'}` and each party's
/// bits `x_b = 1{a_b ≥ n'}`: one `(4 1)-OT` in which role `P1` chooses `j =
/// m_1 + 2x_1` and role `P0`, with random `r`, offers `−r + t_j·(x_0 = 0 ?
/// −1 : +1)`, `t_j = (m_0 ⊕ j_0 ⊕ x_0) ∧ (m_0 ⊕ j_0 ⊕ j_1)` (Algorithm 5,
/// steps 6–17; Algorithm 9, steps 6–17). The message carries one share per
/// modulus of `fields` (e.g. mod `n` and mod `2^δ` for the division in
/// `Z_n`): returns `len·F` shares, element-major. Cost 2λ + 4·Σ_f ⌈log₂
/// n_f⌉ bits per element (at most 128 message bits), one round.
pub(crate) fn corr(
    ctx: &mut Ctx<'_>,
    x: &Bits,
    msb: &Bits,
    fields: &[Modulus],
) -> Result<Vec<u64>, ProtoError> {
    let bits = fields.iter().map(|f| f.bits()).sum::<u32>();
    check(bits <= 128, || format!("{bits}-bit correction messages"))?;
    if bits <= 64 {
        corr_ot::<u64>(ctx, x, msb, fields, bits)
    } else {
        corr_ot::<u128>(ctx, x, msb, fields, bits)
    }
}

/// [`corr`] with `T`-typed OT messages of `bits` bits.
fn corr_ot<T: Word>(
    ctx: &mut Ctx<'_>,
    x: &Bits,
    msb: &Bits,
    fields: &[Modulus],
    bits: u32,
) -> Result<Vec<u64>, ProtoError> {
    let n = x.len();
    Ok(match ctx.role {
        Role::P0 => {
            let mut prg = ctx.prg.fork();
            let per_field: Vec<Vec<u64>> = fields.iter().map(|f| f.random(&mut prg, n)).collect();
            let corr0: Vec<u64> = (0..n * fields.len())
                .map(|k| per_field[k % fields.len()][k / fields.len()])
                .collect();
            let class = [KkClass {
                n_msgs: 4,
                bits,
                count: n,
            }];
            let nf = fields.len();
            ctx.ot
                .send_kkot_classes(ctx.ch, &class, |_, range, out: &mut [T]| {
                    for (row, i) in out.chunks_exact_mut(4).zip(range) {
                        let (m0, x0) = (msb.bit(i), x.bit(i));
                        let r = &corr0[i * nf..(i + 1) * nf];
                        for (j, o) in (0..4u64).zip(row.iter_mut()) {
                            let (j0, j1) = (j & 1, j >> 1);
                            let t = (m0 ^ j0 ^ x0) & (m0 ^ j0 ^ j1);
                            let (mut msg, mut at) = (0u128, 0);
                            for (&r, f) in r.iter().zip(fields) {
                                let v = f.neg(r);
                                let v = match (t, x0) {
                                    (0, _) => v,
                                    (_, 0) => f.sub(v, f.reduce(1)),
                                    _ => f.add(v, f.reduce(1)),
                                };
                                msg |= u128::from(v) << at;
                                at += f.bits();
                            }
                            *o = T::from_u128(msg);
                        }
                    }
                })?;
            corr0
        }
        Role::P1 => {
            let choices: Vec<u8> = (0..n).map(|i| (msb.bit(i) | x.bit(i) << 1) as u8).collect();
            let got = ctx.ot.recv_kkot::<T>(ctx.ch, 4, &choices, bits)?;
            got.iter()
                .flat_map(|m| {
                    let mut m = m.to_u128();
                    fields.iter().map(move |f| {
                        let v = f.reduce((m & mask128(f.bits())) as u64);
                        m >>= f.bits();
                        v
                    })
                })
                .collect()
        }
    })
}

/// Shares of `x_0·x_1` mod each modulus of `fields`, for bits `x_b` held by role
/// `P_b` (e.g. `x_b = 1{a_b ≥ n'}`): one batch of correlated OTs in which role `P0`
/// offers `Δ = x_0` in every field and role `P1` chooses with `x_1`; role `P0`'s share
/// is `−r`. This is the correction `corr` of Theorem 4.1 for a dividend known to be
/// non-negative ([`super::rdiv::rdiv_nonneg`]). Returns `len·F` shares, element-major.
/// Cost `λ + Σ_f ⌈log₂ n_f⌉` bits per element, one round.
pub(crate) fn and_of_bits(
    ctx: &mut Ctx<'_>,
    x: &Bits,
    fields: &[Modulus],
) -> Result<Vec<u64>, ProtoError> {
    let f = CotFields::new(fields)?;
    let n = x.len();
    let mut shares = Vec::with_capacity(n * fields.len());
    match ctx.role {
        Role::P0 => {
            let (zero, one) = (vec![0u64; fields.len()], vec![1u64; fields.len()]);
            ctx.ot.send_cot_with(
                ctx.ch,
                n,
                |_| f,
                |j| if x.bit(j) == 1 { &one } else { &zero },
                |_, r| shares.extend(r.iter().zip(fields).map(|(&r, m)| m.neg(r))),
            )?;
        }
        Role::P1 => ctx.ot.recv_cot_with(
            ctx.ch,
            n,
            |j| x.get(j),
            |_| f,
            |_, v| shares.extend_from_slice(v),
        )?,
    }
    Ok(shares)
}

/// Each share's bit `x_b = MSB(a_b)` of ℓ-bit shares.
pub(crate) fn top_bits(a: &[u64], ell: u32) -> Bits {
    Bits::from_fn(a.len(), |i| (a[i] >> (ell - 1)) & 1 == 1)
}

/// Shares of `a ≫ s` (arithmetic shift of the signed value) for shares `a`
/// of ℓ-bit values, `0 ≤ s < ℓ` (`s = 0` returns the shares unchanged).
/// Cost and rounds: see the [module documentation](self).
pub fn trunc(ctx: &mut Ctx<'_>, ell: u32, s: u32, a: &[u64]) -> Result<Vec<u64>, ProtoError> {
    check_args(ell, s)?;
    if s == 0 {
        return Ok(a.to_vec());
    }
    let (msb, c) = msb_and_low_carry(ctx, ell, s, a)?;
    let corr = corr(ctx, &top_bits(a, ell), &msb, &[Modulus::Pow2(s)])?;
    let d = b2a::b2a(ctx, ell, &c)?;
    Ok(combine(a, &corr, &d, ell, s))
}

/// [`trunc`] for inputs whose signed value is known to be non-negative (the
/// result is unspecified otherwise): no `DReLU`. Cost and proof: see the
/// [module documentation](self).
pub fn trunc_nonneg(
    ctx: &mut Ctx<'_>,
    ell: u32,
    s: u32,
    a: &[u64],
) -> Result<Vec<u64>, ProtoError> {
    check_args(ell, s)?;
    if s == 0 {
        return Ok(a.to_vec());
    }
    let c = low_carry(ctx, s, a)?;
    nonneg_from_carry(ctx, ell, s, a, &c)
}

/// The end of [`trunc_nonneg`] given shares `c` of the low bits' carry: one OT batch of
/// `2n` instances (the B2A of `c`, then `x_0·x_1` mod `2^s`) and the local sum of
/// Corollary 4.2. Shares of `a ≫ s` wherever `a ≥ 0` (unspecified elsewhere).
fn nonneg_from_carry(
    ctx: &mut Ctx<'_>,
    ell: u32,
    s: u32,
    a: &[u64],
    c: &Bits,
) -> Result<Vec<u64>, ProtoError> {
    let n = a.len();
    let x = top_bits(a, ell);
    let (w_ell, w_s) = ([ell], [s]);
    let (w_ell, w_s) = (CotFields::new(&w_ell)?, CotFields::new(&w_s)?);
    let fields = |j: usize| if j < n { w_ell } else { w_s };
    // One OT batch of 2n instances: the B2A of c (Δ = c_0, choice c_1), then
    // x_0·x_1 mod 2^s (Δ = x_0, choice x_1; role P0's share is −r).
    let mut y = Vec::with_capacity(n);
    let mut corr = Vec::with_capacity(n);
    match ctx.role {
        Role::P0 => {
            let d: Vec<u64> = b2a::delta(c)
                .into_iter()
                .chain((0..n).map(|i| x.bit(i)))
                .collect();
            ctx.ot.send_cot_with(
                ctx.ch,
                2 * n,
                fields,
                |j| std::slice::from_ref(&d[j]),
                |j, r| {
                    if j < n {
                        y.push(r[0]);
                    } else {
                        corr.push(r[0].wrapping_neg());
                    }
                },
            )?;
        }
        Role::P1 => {
            ctx.ot.recv_cot_with(
                ctx.ch,
                2 * n,
                |j| if j < n { c.get(j) } else { x.get(j - n) },
                fields,
                |j, v| {
                    if j < n {
                        y.push(v[0]);
                    } else {
                        corr.push(v[0]);
                    }
                },
            )?;
        }
    }
    let d = b2a::finish(ctx.role, Modulus::Pow2(ell), c, &y);
    Ok(combine(a, &corr, &d, ell, s))
}

/// Shares of `max(a, 0) ≫ s` (`relu_trunc`, the IR's fused ReLU and non-negative
/// truncation) for shares `a` of ℓ-bit values, `1 ≤ s < ℓ`.
///
/// `max(a, 0) ≫ s = DReLU(a)·t` where `t` is any sharing equal to `a ≫ s` wherever
/// `a ≥ 0`: [`trunc_nonneg`]'s formula on `a` itself (exact for `a ≥ 0` by the proof in
/// the module docs; whatever it gives for `a < 0` is multiplied by 0). So both
/// millionaires' — `Π_MILL^{ℓ−1}` of the `DReLU` and `Π_MILL^s` of the low carry — run on
/// the shares of `a` as one [`mill::mill_multi`], before anything else: then the
/// non-negative truncation's OT batch, then the ReLU's multiplexer. Bits: exactly those
/// of [`super::relu::relu`] followed by [`trunc_nonneg`]; rounds (role `P1`): those of
/// `Π_MILL^{ℓ−1}`, plus 2 — the truncation's millionaires' no longer add theirs
/// ([`sci_ir::cost::div::relu_trunc`]).
pub fn relu_trunc(ctx: &mut Ctx<'_>, ell: u32, s: u32, a: &[u64]) -> Result<Vec<u64>, ProtoError> {
    check_args(ell, s)?;
    check(s >= 1, || "relu_trunc needs a shift s ≥ 1".into())?;
    let (mut positive, c) = msb_and_low_carry(ctx, ell, s, a)?;
    positive.flip_if(ctx.role == Role::P1);
    let t = nonneg_from_carry(ctx, ell, s, a, &c)?;
    mux::mux(ctx, Modulus::Pow2(ell), &t, &positive)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::testutil::{ELLS, RADICES, measured, open, pin, prg, run2, run2_tcp, share};
    use sci_ir::Encoding;
    use sci_ir::fixed;

    /// Random values, the ring's extremes and values around multiples of
    /// `2^s` (negative and positive); with `nonneg`, only values ≥ 0.
    fn inputs(ell: u32, s: u32, n: usize, nonneg: bool) -> Vec<u64> {
        let mut g = prg((ell * 100 + s) as u128);
        let top = if nonneg { ell - 1 } else { ell };
        let mut v: Vec<u64> = g
            .ring_elems(n, top.max(1))
            .iter()
            .map(|x| x & mask(top))
            .collect();
        let half = 1i128 << (ell - 1);
        for k in -3i128..=3 {
            for off in -1i128..=1 {
                v.push(((k << s) + off) as u64);
            }
        }
        v.extend([half - 1, -half, -half + 1, half - 2].map(|x| x as u64));
        v.iter()
            .map(|&x| x & mask(ell))
            .filter(|&x| !nonneg || (x >> (ell - 1)) & 1 == 0)
            .collect()
    }

    fn check(ell: u32, s: u32, m: u32, n: usize, nonneg: bool) {
        let x = inputs(ell, s, n, nonneg);
        let (a0, a1) = share(&mut prg(3), &x, ell);
        let r = run2(m, |ctx| {
            let a = if ctx.role == Role::P0 { &a0 } else { &a1 };
            if nonneg {
                trunc_nonneg(ctx, ell, s, a)
            } else {
                trunc(ctx, ell, s, a)
            }
        });
        let enc = Encoding::ring(ell).expect("ring");
        let z = open(&r.p0, &r.p1, ell);
        for (i, (&x, &z)) in x.iter().zip(&z).enumerate() {
            assert_eq!(
                z,
                fixed::trunc(x, s, enc),
                "ℓ={ell} s={s} m={m} i={i} x={x:#x}"
            );
        }
    }

    fn shifts(ell: u32) -> Vec<u32> {
        let mut s: Vec<u32> = [0, 1, 12, ell - 1]
            .into_iter()
            .filter(|&s| s < ell)
            .collect();
        s.dedup();
        s
    }

    #[test]
    fn equals_reference_for_all_widths_and_shifts() {
        for ell in ELLS {
            for s in shifts(ell) {
                check(ell, s, 4, 10_000, false);
            }
        }
        for m in RADICES {
            check(37, 12, m, 2000, false);
        }
    }

    #[test]
    fn nonneg_equals_reference_for_all_widths_and_shifts() {
        for ell in ELLS {
            for s in shifts(ell) {
                check(ell, s, 4, 10_000, true);
            }
        }
        for m in RADICES {
            check(41, 13, m, 2000, true);
        }
    }

    #[test]
    fn communication_and_rounds() {
        for (ell, s, m, n, nonneg) in [
            (32, 12, 4, 4096, false),
            (32, 12, 7, 1000, false),
            (32, 12, 4, 4096, true),
            (37, 1, 2, 999, false),
            (41, 40, 8, 333, true),
        ] {
            let x = inputs(ell, s, n, nonneg);
            let (a0, a1) = share(&mut prg(4), &x, ell);
            let r = measured(m, |ctx, warm| {
                let a = if ctx.role == Role::P0 { &a0 } else { &a1 };
                let a = if warm { &a[..8] } else { &a[..] };
                if nonneg {
                    trunc_nonneg(ctx, ell, s, a)
                } else {
                    trunc(ctx, ell, s, a)
                }
            });
            let n = x.len();
            let (bits, rounds) = if nonneg {
                (cost_bits_nonneg(ell, s, m, n), rounds_nonneg(ell, s, m))
            } else {
                (cost_bits(ell, s, m, n), super::rounds(ell, s, m))
            };
            pin!(r.bits(), bits, "ℓ={ell} s={s} m={m} nonneg={nonneg}");
            pin!(
                r.stats[1].rounds,
                rounds,
                "ℓ={ell} s={s} m={m} nonneg={nonneg}"
            );
        }
        // ℓ = 32, s = 12, m = 7 at n = 2^16: the paper's 4310 bits less 4(ℓ − s)
        // for the s-bit corr OT; required ≤ 4526.
        let n = 1 << 16;
        assert_eq!(cost_bits(32, 12, 7, n), (4310 - 80) * n as u64);
        assert_eq!(
            cost_bits_nonneg(32, 12, 4, n),
            (1144 + 160 + 140) * n as u64
        );
        // Both millionaires' at once (the deeper, Π_MILL^31, has 3 rounds),
        // then the corr OT and the B2A.
        assert_eq!(super::rounds(32, 12, 4), 3 + 1 + 1);
        assert_eq!(rounds_nonneg(32, 12, 4), 2 + 1);
        assert_eq!(super::rounds(32, 12, 7), 3 + 1 + 1);
    }

    /// `relu_trunc` on random values, the ring's extremes and values around multiples
    /// of `2^s` (both signs) against the interpreter's `relu_trunc` (`max(x, 0) ≫ s`), at every width and
    /// shift, every radix; over TCP at ℓ = 37.
    #[test]
    fn relu_trunc_equals_the_interpreter() {
        let check = |ell: u32, s: u32, m: u32, n: usize, tcp: bool| {
            let x = inputs(ell, s, n, false);
            let (a0, a1) = share(&mut prg(6), &x, ell);
            let f = |ctx: &mut Ctx<'_>| {
                relu_trunc(ctx, ell, s, if ctx.role == Role::P0 { &a0 } else { &a1 })
            };
            let r = if tcp { run2_tcp(m, f) } else { run2(m, f) };
            let enc = Encoding::ring(ell).expect("ring");
            let want: Vec<u64> = x
                .iter()
                .map(|&x| {
                    if enc.signed(x) < 0 {
                        0
                    } else {
                        fixed::trunc(x, s, enc)
                    }
                })
                .collect();
            assert_eq!(open(&r.p0, &r.p1, ell), want, "ℓ={ell} s={s} m={m}");
        };
        for ell in ELLS.into_iter().filter(|&l| l >= 2) {
            for s in shifts(ell).into_iter().filter(|&s| s >= 1) {
                check(ell, s, 4, 5000, false);
            }
        }
        for m in RADICES {
            check(37, 12, m, 2000, false);
        }
        check(37, 12, 4, 1 << 15, true);
    }

    /// `relu_trunc`'s bits and rounds are the cost model's; its bits are those of a
    /// ReLU and a non-negative truncation, its rounds the ReLU's plus one.
    #[test]
    fn relu_trunc_costs_what_the_model_prices() {
        for (ell, s, m, n) in [(32, 12, 4, 4096), (37, 12, 4, 999), (41, 13, 7, 333)] {
            let x = inputs(ell, s, n, false);
            let (a0, a1) = share(&mut prg(7), &x, ell);
            let r = measured(m, |ctx, warm| {
                let a = if ctx.role == Role::P0 { &a0 } else { &a1 };
                relu_trunc(ctx, ell, s, if warm { &a[..8] } else { &a[..] })
            });
            let t = cost::div::relu_trunc(ell, s, m, x.len());
            pin!(r.bits(), t.bits(), "ℓ={ell} s={s} m={m}");
            pin!(r.stats[1].rounds, t.rounds(Role::P1), "ℓ={ell} s={s} m={m}");
        }
        let n = 1 << 16;
        let apart = super::super::relu::cost_bits(32, 4, n) + cost_bits_nonneg(32, 12, 4, n);
        assert_eq!(cost::div::relu_trunc(32, 12, 4, n).bits(), apart);
        let relu_rounds = super::super::relu::rounds(32u32, 4);
        assert_eq!(
            cost::div::relu_trunc(32, 12, 4, 1).rounds(Role::P1),
            relu_rounds + 1
        );
        assert_eq!(relu_rounds + rounds_nonneg(32, 12, 4), relu_rounds + 3);
    }

    #[test]
    fn over_tcp_loopback() {
        for nonneg in [false, true] {
            let x = inputs(32, 12, 1 << 16, nonneg);
            let (a0, a1) = share(&mut prg(5), &x, 32);
            let r = run2_tcp(4, |ctx| {
                let a = if ctx.role == Role::P0 { &a0 } else { &a1 };
                if nonneg {
                    trunc_nonneg(ctx, 32, 12, a)
                } else {
                    trunc(ctx, 32, 12, a)
                }
            });
            let enc = Encoding::ring(32).expect("ring");
            let want: Vec<u64> = x.iter().map(|&x| fixed::trunc(x, 12, enc)).collect();
            assert_eq!(open(&r.p0, &r.p1, 32), want);
        }
    }
}
