//! Multiplexer `Π_MUX^n` (CrypTFlow2 Algorithm 6, App. A.3), built on
//! correlated OT, over any [`Modulus`] (`Z_{2^ℓ}` or odd `Z_n`).
//!
//! Given arithmetic shares of `x` and boolean shares of `c`, the parties get
//! shares of `c·x`. All arithmetic is mod `n`. Write `c = c_0 ⊕ c_1`, so `c·x_b = c_b·x_b +
//! c_{1−b}·(1 − 2c_b)·x_b`. Each party `b` is the sender of one correlated OT
//! with correlation `Δ_b = (1 − 2c_b)·x_b` and the receiver of the other with
//! choice `c_b`: from the OT it sends it gets `r_b`, from the one it receives
//! `r_{1−b} + c_b·Δ_{1−b}`, and it outputs `c_b·x_b − r_b + r_{1−b} +
//! c_b·Δ_{1−b}`. The sum is `(c_0 ⊕ c_1)·(x_0 + x_1)`.
//!
//! The paper realises each direction with a chosen-message `(2 1)-OT_η`
//! (2λ + 4η bits in all); a correlated OT suffices and costs λ + η per
//! direction: **2λ + 2η bits** per element, `η = ⌈log₂ n⌉` (2λ + 2Σ η_f with
//! several fields).
//! Role `P0`'s OT runs first, then role `P1`'s (never both sending at once):
//! role `P1` sends its OT request, role `P0` answers it together with its own
//! request, role `P1` answers: 1.5 round trips, counted as [`rounds`] = 1 by
//! role `P1` and 2 by role `P0`.
//!
//! [`mux_fields`] multiplexes several values per element at once (each with
//! its own modulus, e.g. a value and its index for ArgMax, or a sign bit in
//! `Z_2`) with one OT per direction.

use super::Modulus;
use super::bits::Bits;
use super::{Ctx, ProtoError, Role, check};
use crate::ot::CotFields;

/// Exact bits on the wire of [`mux_fields`] with fields `fields` on `n`
/// elements (both OTs; [`sci_ir::cost::select::mux`]).
pub fn cost_bits<M: Copy + Into<Modulus>>(fields: &[M], n: usize) -> u64 {
    let fields: Vec<sci_ir::params::Modulus> = fields.iter().map(|&f| f.into().into()).collect();
    sci_ir::cost::select::mux(&fields, n).bits()
}

/// Rounds of a multiplexer as counted by role `P1` (after having sent): 1.
pub fn rounds() -> u64 {
    sci_ir::cost::select::mux(&[sci_ir::params::Modulus::Pow2(1)], 1).rounds(Role::P1)
}

/// Shares of `c·x` for shares `x` of elements of `Z_n` (`n = 2^ℓ` for an
/// ℓ given as `u32`) and shares `c` of bits.
pub fn mux(
    ctx: &mut Ctx<'_>,
    md: impl Into<Modulus>,
    x: &[u64],
    c: &Bits,
) -> Result<Vec<u64>, ProtoError> {
    mux_fields(ctx, &[md.into()], x, c)
}

/// Multiplexes `F = fields.len()` fields per element: `x` holds `n·F`
/// shares (element `i`'s fields at `i·F..(i+1)·F`, field `f` reduced mod
/// `fields[f]`), `c` holds `n` bits; returns shares of `c_i·x_i` fieldwise.
/// Cost 2λ + 2·Σ_f ⌈log₂ n_f⌉ bits per element.
pub fn mux_fields<M: Copy + Into<Modulus>>(
    ctx: &mut Ctx<'_>,
    fields: &[M],
    x: &[u64],
    c: &Bits,
) -> Result<Vec<u64>, ProtoError> {
    let mods = fields
        .iter()
        .map(|&m| m.into().check())
        .collect::<Result<Vec<Modulus>, _>>()?;
    let nf = mods.len();
    check(x.len() == c.len() * nf, || {
        format!("{} values for {} choices of {nf} fields", x.len(), c.len())
    })?;
    check(
        x.iter()
            .enumerate()
            .all(|(i, &v)| u128::from(v) < mods[i % nf].value()),
        || "shares must be reduced".into(),
    )?;
    // Δ = (1 − 2c)·x: x if c = 0, −x if c = 1.
    let delta: Vec<u64> = x
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            if c.get(i / nf) {
                mods[i % nf].neg(v)
            } else {
                v
            }
        })
        .collect();
    let n = c.len();
    if n == 0 {
        return Ok(Vec::new());
    }
    let f = CotFields::new(&mods)?;
    // This party's share: c·x − r (from the OT it sends) + r' + c·Δ' (from
    // the one it receives), accumulated as the OTs stream their outputs.
    let mut z: Vec<u64> = x
        .iter()
        .enumerate()
        .map(|(i, &v)| if c.get(i / nf) { v } else { 0 })
        .collect();
    let send = |ctx: &mut Ctx<'_>, z: &mut [u64]| {
        ctx.ot.send_cot_with(
            ctx.ch,
            n,
            |_| f,
            |j| &delta[j * nf..(j + 1) * nf],
            |j, r| {
                for ((a, &b), md) in z[j * nf..(j + 1) * nf].iter_mut().zip(r).zip(&mods) {
                    *a = md.sub(*a, b);
                }
            },
        )
    };
    let recv = |ctx: &mut Ctx<'_>, z: &mut [u64]| {
        ctx.ot.recv_cot_with(
            ctx.ch,
            n,
            |j| c.get(j),
            |_| f,
            |j, v| {
                for ((a, &b), md) in z[j * nf..(j + 1) * nf].iter_mut().zip(v).zip(&mods) {
                    *a = md.add(*a, b);
                }
            },
        )
    };
    match ctx.role {
        Role::P0 => {
            send(ctx, &mut z)?;
            recv(ctx, &mut z)?;
        }
        Role::P1 => {
            recv(ctx, &mut z)?;
            send(ctx, &mut z)?;
        }
    }
    Ok(z)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pack::mask;
    use crate::proto::testutil::{moduli, open, pin, prg, run2, share, values_with_edges};

    #[test]
    fn selects_value_or_zero() {
        for md in moduli() {
            let mut g = prg(md.value() + 7);
            let len = if let Modulus::Pow2(_) = md {
                10_000
            } else {
                3000
            };
            let x = values_with_edges(&mut g, len, md);
            let (x0, x1) = share(&mut g, &x, md);
            let k = x.len();
            let (c, s) = (Bits::random(&mut g, k), Bits::random(&mut g, k));
            let (c0, c1) = (s.clone(), c.xor(&s));
            let r = run2(4, |ctx| {
                let (x, c) = if ctx.role == Role::P0 {
                    (&x0, &c0)
                } else {
                    (&x1, &c1)
                };
                mux(ctx, md, x, c)
            });
            let z = open(&r.p0, &r.p1, md);
            for i in 0..k {
                assert_eq!(z[i], if c.get(i) { x[i] } else { 0 }, "{md}");
            }
            // 2λ + 2·⌈log₂ n⌉ bits per element (+ two OT set-ups).
            let setup = 2 * 8 * (32 + 128 * 32);
            let per_dir =
                128 * k.next_multiple_of(8) as u64 + 8 * (k as u64 * md.bits() as u64).div_ceil(8);
            pin!(r.bits(), setup + 2 * per_dir);
            assert_eq!(cost_bits(&[md], k), 2 * per_dir);
        }
    }

    #[test]
    fn mixed_moduli_fields() {
        // A value mod a 61-bit prime, its index mod 2^64 and a bit in Z_2: 128 +
        // 64 + 1 pad bits, stretched.
        let mods = [
            Modulus::Odd((1 << 61) - 1),
            Modulus::Pow2(64),
            Modulus::Pow2(1),
        ];
        let mut g = prg(17);
        let n = 2000;
        let x: Vec<u64> = (0..n * 3)
            .map(|i| mods[i % 3].random(&mut g, 1)[0])
            .collect();
        let r0: Vec<u64> = (0..n * 3)
            .map(|i| mods[i % 3].random(&mut g, 1)[0])
            .collect();
        let x1: Vec<u64> = (0..n * 3).map(|i| mods[i % 3].sub(x[i], r0[i])).collect();
        let (c, s) = (Bits::random(&mut g, n), Bits::random(&mut g, n));
        let (c0, c1) = (s.clone(), c.xor(&s));
        let r = run2(4, |ctx| {
            let (x, c) = if ctx.role == Role::P0 {
                (&r0, &c0)
            } else {
                (&x1, &c1)
            };
            mux_fields(ctx, &mods, x, c)
        });
        for i in 0..n * 3 {
            let z = mods[i % 3].add(r.p0[i], r.p1[i]);
            assert_eq!(z, if c.get(i / 3) { x[i] } else { 0 });
        }
    }

    #[test]
    fn rejects_unreduced_shares() {
        let r = run2(4, |ctx| {
            Ok(mux(ctx, Modulus::Odd(7), &[7], &Bits::zeros(1)).is_err()
                && mux(ctx, Modulus::Odd(8), &[1], &Bits::zeros(1)).is_err())
        });
        assert!(r.p0 && r.p1);
    }

    #[test]
    fn several_fields_of_different_widths() {
        // 64 + 64 + 1 > 128 bits: the pads are stretched by the PRG.
        for widths in [vec![32u32, 1], vec![64, 64, 1], vec![5, 17, 64]] {
            let mut g = prg(99);
            let n = 3000;
            let nf = widths.len();
            let x: Vec<u64> = (0..n * nf)
                .map(|i| g.next_block().lo() & mask(widths[i % nf]))
                .collect();
            let r0: Vec<u64> = (0..n * nf)
                .map(|i| g.next_block().lo() & mask(widths[i % nf]))
                .collect();
            let x1: Vec<u64> = (0..n * nf)
                .map(|i| x[i].wrapping_sub(r0[i]) & mask(widths[i % nf]))
                .collect();
            let (c, s) = (Bits::random(&mut g, n), Bits::random(&mut g, n));
            let (c0, c1) = (s.clone(), c.xor(&s));
            let r = run2(4, |ctx| {
                let (x, c) = if ctx.role == Role::P0 {
                    (&r0, &c0)
                } else {
                    (&x1, &c1)
                };
                mux_fields(ctx, &widths, x, c)
            });
            for i in 0..n * nf {
                let z = r.p0[i].wrapping_add(r.p1[i]) & mask(widths[i % nf]);
                assert_eq!(z, if c.get(i / nf) { x[i] } else { 0 });
            }
        }
    }
}
