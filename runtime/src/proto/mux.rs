//! Multiplexer `Π_MUX` (CrypTFlow2 Algorithm 6, App. A.3), built on
//! correlated OT.
//!
//! Given arithmetic shares of `x` and boolean shares of `c`, the parties get
//! shares of `c·x`. Write `c = c_0 ⊕ c_1`, so `c·x_b = c_b·x_b +
//! c_{1−b}·(1 − 2c_b)·x_b`. Each party `b` is the sender of one correlated OT
//! with correlation `Δ_b = (1 − 2c_b)·x_b` and the receiver of the other with
//! choice `c_b`: from the OT it sends it gets `r_b`, from the one it receives
//! `r_{1−b} + c_b·Δ_{1−b}`, and it outputs `c_b·x_b − r_b + r_{1−b} +
//! c_b·Δ_{1−b}`. The sum is `(c_0 ⊕ c_1)·(x_0 + x_1)`.
//!
//! The paper realises each direction with a chosen-message `(2 1)-OT_η`
//! (2λ + 4η bits in all); a correlated OT suffices and costs λ + η per
//! direction: **2λ + 2η bits** per element (2λ + 2Σw with several fields).
//! Role `P0`'s OT runs first, then role `P1`'s (never both sending at once):
//! role `P1` sends its OT request, role `P0` answers it together with its own
//! request, role `P1` answers: 1.5 round trips, counted as [`ROUNDS`] = 1 by
//! role `P1` and 2 by role `P0`.
//!
//! [`mux_fields`] multiplexes several values per element at once (each with
//! its own width, e.g. a value and its index for ArgMax) with one OT per
//! direction.

use super::bits::Bits;
use super::{Ctx, ProtoError, Role, check, check_ell, cot};
use crate::net::pack::mask;

/// Rounds of a multiplexer as counted by role `P1` (after having sent).
pub const ROUNDS: u64 = 1;

/// Exact bits on the wire of [`mux_fields`] on `n` elements (both OTs).
pub fn cost_bits(widths: &[u32], n: usize) -> u64 {
    2 * cot::cost_bits(widths.iter().sum(), n)
}

/// Shares of `c·x` for shares `x` of ℓ-bit values and shares `c` of bits.
pub fn mux(ctx: &mut Ctx<'_>, ell: u32, x: &[u64], c: &Bits) -> Result<Vec<u64>, ProtoError> {
    check_ell(ell)?;
    mux_fields(ctx, &[ell], x, c)
}

/// Multiplexes `F = widths.len()` fields per element: `x` holds `n·F`
/// shares (element `i`'s fields at `i·F..(i+1)·F`, field `f` in
/// `Z_{2^{widths[f]}}`), `c` holds `n` bits; returns shares of `c_i·x_i`
/// fieldwise. Cost 2λ + 2·Σ widths bits per element.
pub fn mux_fields(
    ctx: &mut Ctx<'_>,
    widths: &[u32],
    x: &[u64],
    c: &Bits,
) -> Result<Vec<u64>, ProtoError> {
    let nf = widths.len();
    check(widths.iter().all(|w| (1..=64).contains(w)), || {
        "field widths must be in 1..=64".into()
    })?;
    check(x.len() == c.len() * nf, || {
        format!("{} values for {} choices of {nf} fields", x.len(), c.len())
    })?;
    let masks: Vec<u64> = widths.iter().map(|&w| mask(w)).collect();
    // Δ = (1 − 2c)·x: x if c = 0, −x if c = 1.
    let delta: Vec<u64> = x
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let f = i % nf;
            let v = if c.get(i / nf) { v.wrapping_neg() } else { v };
            v & masks[f]
        })
        .collect();
    let (r, y) = match ctx.role {
        Role::P0 => {
            let r = cot::send(ctx, widths, &delta)?;
            (r, cot::recv(ctx, widths, c)?)
        }
        Role::P1 => {
            let y = cot::recv(ctx, widths, c)?;
            (cot::send(ctx, widths, &delta)?, y)
        }
    };
    Ok(x.iter()
        .zip(r.iter().zip(&y))
        .enumerate()
        .map(|(i, (&v, (&r, &y)))| {
            let own = if c.get(i / nf) { v } else { 0 };
            own.wrapping_sub(r).wrapping_add(y) & masks[i % nf]
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::testutil::{ELLS, open, prg, run2, share};

    #[test]
    fn selects_value_or_zero() {
        for ell in ELLS {
            let mut g = prg(ell as u128 + 7);
            let n = 10_000;
            let x = g.ring_elems(n, ell);
            let (x0, x1) = share(&mut g, &x, ell);
            let (c, s) = (Bits::random(&mut g, n), Bits::random(&mut g, n));
            let (c0, c1) = (s.clone(), c.xor(&s));
            let r = run2(4, |ctx| {
                let (x, c) = if ctx.role == Role::P0 {
                    (&x0, &c0)
                } else {
                    (&x1, &c1)
                };
                mux(ctx, ell, x, c)
            });
            let z = open(&r.p0, &r.p1, ell);
            for i in 0..n {
                assert_eq!(z[i], if c.get(i) { x[i] } else { 0 }, "ℓ={ell}");
            }
            // 2λ + 2ℓ bits per element (+ two OT set-ups).
            let setup = 2 * 8 * (32 + 128 * 32);
            let per_dir = 128 * n as u64 + 8 * (n as u64 * ell as u64).div_ceil(8);
            assert_eq!(r.bits(), setup + 2 * per_dir);
            assert_eq!(cost_bits(&[ell], n), 2 * per_dir);
        }
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
