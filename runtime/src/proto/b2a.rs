//! Boolean to arithmetic conversion `Π_B2A` (CrypTFlow2 Algorithm 7, App.
//! A.4).
//!
//! For `c = c_0 ⊕ c_1`, `c = c_0 + c_1 − 2c_0c_1`. One correlated OT with role
//! `P0` as sender (correlation `Δ = c_0`) and role `P1` as receiver (choice
//! `c_1`): `P0` gets `x`, `P1` gets `x + c_0c_1`; with `y_0 = −x`, `y_1 =
//! x + c_0c_1`, the shares `d_b = c_b − 2y_b` sum to `c`. Cost λ + ℓ bits per
//! element, one OT exchange (1 round).

use super::bits::Bits;
use super::{Ctx, ProtoError, Role, check_ell, cot};
use crate::net::pack::mask;

/// Exact bits on the wire of [`b2a`] on `n` elements.
pub fn cost_bits(ell: u32, n: usize) -> u64 {
    cot::cost_bits(ell, n)
}

/// Shares in `Z_{2^ℓ}` of the bits `c` (given as boolean shares).
pub fn b2a(ctx: &mut Ctx<'_>, ell: u32, c: &Bits) -> Result<Vec<u64>, ProtoError> {
    check_ell(ell)?;
    let m = mask(ell);
    let cb = |i: usize| c.bit(i);
    Ok(match ctx.role {
        Role::P0 => {
            let delta: Vec<u64> = (0..c.len()).map(cb).collect();
            let x = cot::send(ctx, &[ell], &delta)?;
            // d_0 = c_0 − 2·(−x) = c_0 + 2x.
            x.iter()
                .enumerate()
                .map(|(i, &x)| cb(i).wrapping_add(x << 1) & m)
                .collect()
        }
        Role::P1 => {
            let y = cot::recv(ctx, &[ell], c)?;
            y.iter()
                .enumerate()
                .map(|(i, &y)| cb(i).wrapping_sub(y << 1) & m)
                .collect()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::testutil::{ELLS, open, prg, run2};

    #[test]
    fn converts_bits() {
        for ell in ELLS {
            let mut g = prg(ell as u128);
            let n = 10_000;
            let (c, s) = (Bits::random(&mut g, n), Bits::random(&mut g, n));
            let (c0, c1) = (s.clone(), c.xor(&s));
            let r = run2(4, |ctx| {
                b2a(ctx, ell, if ctx.role == Role::P0 { &c0 } else { &c1 })
            });
            let d = open(&r.p0, &r.p1, ell);
            assert!(d.iter().enumerate().all(|(i, &v)| v == c.bit(i)), "ℓ={ell}");
            // λ + ℓ bits per element (+ the OT set-up and batch padding).
            let setup = 8 * (32 + 128 * 32);
            assert_eq!(
                r.bits(),
                setup + 128 * n as u64 + 8 * (n as u64 * ell as u64).div_ceil(8)
            );
            assert_eq!(r.bits(), setup + cost_bits(ell, n));
        }
    }
}
