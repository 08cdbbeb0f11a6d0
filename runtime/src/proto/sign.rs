//! Sign tests of shared values over any [`Modulus`]: `DReLU(a) = 1{a < n'}`
//! and its complement `1{a ≥ n'}` (`n' = ⌈n/2⌉`; for `Z_{2^ℓ}` that is
//! `MSB(a)`), by `Π_DReLU^{int,ℓ}` (CrypTFlow2 Algorithm 2, [`drelu`]) for
//! `Z_{2^ℓ}` and `Π_DReLU^{ring,n}` (Algorithm 4, [`drelu_field`]) for odd
//! `n`. Cost and rounds are those of the protocol used.

use super::Modulus;
use super::bits::Bits;
use super::{Ctx, ProtoError, Role, drelu, drelu_field};

/// Shares of `DReLU(a) = 1{signed(a) ≥ 0}` for shares `a` mod `md`.
pub fn drelu(ctx: &mut Ctx<'_>, md: impl Into<Modulus>, a: &[u64]) -> Result<Bits, ProtoError> {
    match md.into().check()? {
        Modulus::Pow2(ell) => drelu::drelu(ctx, ell, a),
        Modulus::Odd(n) => drelu_field::drelu_field(ctx, n, a),
    }
}

/// Shares of `1{signed(a) < 0} = 1 ⊕ DReLU(a)` for shares `a` mod `md`
/// (`MSB(a)` for `Z_{2^ℓ}`).
pub fn negative(ctx: &mut Ctx<'_>, md: impl Into<Modulus>, a: &[u64]) -> Result<Bits, ProtoError> {
    match md.into().check()? {
        Modulus::Pow2(ell) => drelu::msb(ctx, ell, a),
        Modulus::Odd(n) => {
            let mut d = drelu_field::drelu_field(ctx, n, a)?;
            d.flip_if(ctx.role == Role::P1);
            Ok(d)
        }
    }
}

/// Exact bits on the wire of [`drelu`] (or [`negative`]) on `len` elements
/// at radix `m`.
pub fn cost_bits(md: impl Into<Modulus>, m: u32, len: usize) -> u64 {
    sci_ir::cost::sign::drelu(md.into().into(), m, len).bits()
}

/// Rounds of [`drelu`] (role `P1`).
pub fn rounds(md: impl Into<Modulus>, m: u32) -> u64 {
    sci_ir::cost::sign::drelu(md.into().into(), m, 1).rounds(Role::P1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::testutil::{FIELDS, open_bits, prg, run2, share, values_with_edges};

    #[test]
    fn negative_is_the_sign_of_the_signed_view() {
        let mut mods: Vec<Modulus> = FIELDS.iter().map(|&n| Modulus::Odd(n)).collect();
        mods.extend([Modulus::Pow2(1), Modulus::Pow2(32), Modulus::Pow2(64)]);
        for md in mods {
            let mut g = prg(md.value());
            let x = match md {
                Modulus::Pow2(ell) => values_with_edges(&mut g, 1000, ell),
                Modulus::Odd(_) => values_with_edges(&mut g, 1000, md),
            };
            let (a0, a1) = match md {
                Modulus::Pow2(ell) => share(&mut g, &x, ell),
                Modulus::Odd(_) => share(&mut g, &x, md),
            };
            let r = run2(4, |ctx| {
                let a = if ctx.role == Role::P0 { &a0 } else { &a1 };
                Ok((negative(ctx, md, a)?, drelu(ctx, md, a)?))
            });
            let neg = open_bits(&r.p0.0, &r.p1.0);
            let pos = open_bits(&r.p0.1, &r.p1.1);
            for (i, &v) in x.iter().enumerate() {
                assert_eq!(neg[i], md.signed(v) < 0, "{md} v={v}");
                assert_eq!(pos[i], !neg[i]);
            }
        }
    }
}
