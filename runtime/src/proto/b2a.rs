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

/// Role `P0`'s correlations: `Δ = c_0` (as 0 or 1).
pub(crate) fn delta(c: &Bits) -> Vec<u64> {
    (0..c.len()).map(|i| c.bit(i)).collect()
}

/// The arithmetic shares from this party's correlated-OT output `y` (role
/// `P0`: its random `x`, share `c_0 + 2x`; role `P1`: `x + c_0c_1`, share
/// `c_1 − 2y`).
pub(crate) fn finish(role: Role, ell: u32, c: &Bits, y: &[u64]) -> Vec<u64> {
    let m = mask(ell);
    y.iter()
        .enumerate()
        .map(|(i, &y)| match role {
            Role::P0 => c.bit(i).wrapping_add(y << 1) & m,
            Role::P1 => c.bit(i).wrapping_sub(y << 1) & m,
        })
        .collect()
}

/// Shares in `Z_{2^ℓ}` of the bits `c` (given as boolean shares).
pub fn b2a(ctx: &mut Ctx<'_>, ell: u32, c: &Bits) -> Result<Vec<u64>, ProtoError> {
    check_ell(ell)?;
    let y = match ctx.role {
        Role::P0 => cot::send(ctx, &[ell], &delta(c))?,
        Role::P1 => cot::recv(ctx, &[ell], c)?,
    };
    Ok(finish(ctx.role, ell, c, &y))
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
