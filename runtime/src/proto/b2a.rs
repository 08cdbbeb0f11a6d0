//! Boolean to arithmetic conversion `Π_B2A^n` (CrypTFlow2 Algorithm 7, App.
//! A.4), over any [`Modulus`] (`Z_{2^ℓ}` or odd `Z_n`).
//!
//! For `c = c_0 ⊕ c_1`, `c = c_0 + c_1 − 2c_0c_1`. One correlated OT with role
//! `P0` as sender (correlation `Δ = c_0`) and role `P1` as receiver (choice
//! `c_1`): `P0` gets `x`, `P1` gets `x + c_0c_1`; with `y_0 = −x`, `y_1 =
//! x + c_0c_1`, the shares `d_b = c_b − 2y_b` sum to `c` mod `n`. Cost λ + η
//! bits per element (`η = ⌈log₂ n⌉`), one OT exchange (1 round).

use super::Modulus;
use super::bits::Bits;
use super::{Ctx, ProtoError, Role};
use crate::ot::CotFields;

/// Exact bits on the wire of [`b2a`] into `md` on `n` elements.
pub fn cost_bits(md: impl Into<Modulus>, n: usize) -> u64 {
    sci_ir::cost::select::b2a(md.into().into(), n).bits()
}

/// Role `P0`'s correlations: `Δ = c_0` (as 0 or 1).
pub(crate) fn delta(c: &Bits) -> Vec<u64> {
    (0..c.len()).map(|i| c.bit(i)).collect()
}

/// The arithmetic shares from this party's correlated-OT output `y` (role
/// `P0`: its random `x`, share `c_0 + 2x`; role `P1`: `x + c_0c_1`, share
/// `c_1 − 2y`).
pub(crate) fn finish(role: Role, md: Modulus, c: &Bits, y: &[u64]) -> Vec<u64> {
    y.iter()
        .enumerate()
        .map(|(i, &y)| {
            let (cb, y2) = (md.reduce(c.bit(i)), md.add(y, y));
            match role {
                Role::P0 => md.add(cb, y2),
                Role::P1 => md.sub(cb, y2),
            }
        })
        .collect()
}

/// Shares mod `md` (`Z_{2^ℓ}` for an ℓ given as `u32`) of the bits `c`
/// (given as boolean shares).
pub fn b2a(ctx: &mut Ctx<'_>, md: impl Into<Modulus>, c: &Bits) -> Result<Vec<u64>, ProtoError> {
    let md = md.into().check()?;
    let mods = [md];
    let f = CotFields::new(&mods)?;
    let n = c.len();
    let mut y = Vec::with_capacity(n);
    match ctx.role {
        Role::P0 => {
            let d = delta(c);
            ctx.ot.send_cot_with(
                ctx.ch,
                n,
                |_| f,
                |j| std::slice::from_ref(&d[j]),
                |_, r| y.extend_from_slice(r),
            )?
        }
        Role::P1 => ctx.ot.recv_cot_with(
            ctx.ch,
            n,
            |j| c.get(j),
            |_| f,
            |_, v| y.extend_from_slice(v),
        )?,
    }
    Ok(finish(ctx.role, md, c, &y))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::testutil::{ELLS, FIELDS, open, pin, prg, run2};

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
            pin!(
                r.bits(),
                setup + 128 * n as u64 + 8 * (n as u64 * ell as u64).div_ceil(8)
            );
            pin!(r.bits(), setup + cost_bits(ell, n));
        }
    }

    #[test]
    fn converts_bits_mod_odd_n() {
        for n in FIELDS {
            let md = Modulus::Odd(n);
            let mut g = prg(n as u128);
            let len = 3000;
            let (c, s) = (Bits::random(&mut g, len), Bits::random(&mut g, len));
            let (c0, c1) = (s.clone(), c.xor(&s));
            let r = run2(4, |ctx| {
                b2a(ctx, md, if ctx.role == Role::P0 { &c0 } else { &c1 })
            });
            let d = open(&r.p0, &r.p1, md);
            assert!(d.iter().enumerate().all(|(i, &v)| v == c.bit(i)), "n={n}");
            let setup = 8 * (32 + 128 * 32);
            pin!(r.bits(), setup + cost_bits(md, len));
            assert_eq!(
                cost_bits(md, len),
                128 * len as u64 + 8 * (len as u64 * md.bits() as u64).div_ceil(8)
            );
        }
    }
}
