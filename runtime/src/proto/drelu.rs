//! `DReLU` over `Z_{2^ℓ}`: `Π_DReLU^{int,ℓ}` (CrypTFlow2 Algorithm 2, §3.2).
//!
//! `DReLU(a) = 1 ⊕ MSB(a)` (1 iff the signed value is ≥ 0). With shares
//! `⟨a⟩_b = msb_b ‖ x_b`, `MSB(a) = msb_0 ⊕ msb_1 ⊕ carry` where
//! `carry = 1{x_0 + x_1 > 2^{ℓ−1} − 1} = 1{2^{ℓ−1} − 1 − x_0 < x_1}`: one
//! millionaires' `Π_MILL^{ℓ−1,m}` with role `P0`'s input `2^{ℓ−1} − 1 − x_0`
//! and role `P1`'s `x_1`. Cost and rounds are those of `Π_MILL^{ℓ−1}`
//! ([`mill::cost_bits`], [`mill::rounds`]); ℓ = 1 needs no communication.

use super::bits::Bits;
use super::{Ctx, ProtoError, Role, check_ell, mill};
use crate::pack::mask;

/// Exact bits on the wire of [`drelu`] (or [`msb`]) on `n` elements at
/// radix `m`: those of `Π_MILL^{ℓ−1,m}`.
pub fn cost_bits(ell: u32, m: u32, n: usize) -> u64 {
    sci_ir::cost::sign::drelu_ring(ell, m, n).bits()
}

/// Rounds of [`drelu`] (role `P1`): those of `Π_MILL^{ℓ−1,m}`.
pub fn rounds(ell: u32, m: u32) -> u64 {
    sci_ir::cost::sign::drelu_ring(ell, m, 1).rounds(Role::P1)
}

/// This party's millionaires' input for the carry out of the low `w` bits
/// of the two shares, `1{a_0 mod 2^w + a_1 mod 2^w ≥ 2^w} = 1{2^w − 1 −
/// a_0^0 < a_1^0}`: role `P0` passes `2^w − 1 − (a_0 mod 2^w)`, role `P1`
/// `a_1 mod 2^w`.
pub(crate) fn carry_input(role: Role, w: u32, a: &[u64]) -> Vec<u64> {
    let low = mask(w);
    match role {
        Role::P0 => a.iter().map(|&x| low - (x & low)).collect(),
        Role::P1 => a.iter().map(|&x| x & low).collect(),
    }
}

/// `MSB(a) = msb_0 ⊕ msb_1 ⊕ carry`: adds this party's share's top bit to
/// its share of the carry out of the low ℓ − 1 bits.
pub(crate) fn msb_from_carry(mut carry: Bits, ell: u32, a: &[u64]) -> Bits {
    carry.xor_assign(&Bits::from_fn(a.len(), |i| (a[i] >> (ell - 1)) & 1 == 1));
    carry
}

/// Shares of `MSB(a)` for shares `a` of ℓ-bit values (`1` iff negative).
pub fn msb(ctx: &mut Ctx<'_>, ell: u32, a: &[u64]) -> Result<Bits, ProtoError> {
    check_ell(ell)?;
    let input = carry_input(ctx.role, ell - 1, a);
    let carry = mill::mill(ctx, ell - 1, 1, &input)?;
    Ok(msb_from_carry(carry, ell, a))
}

/// Shares of `DReLU(a) = 1{signed(a) ≥ 0}` for shares `a` of ℓ-bit values.
pub fn drelu(ctx: &mut Ctx<'_>, ell: u32, a: &[u64]) -> Result<Bits, ProtoError> {
    let mut d = msb(ctx, ell, a)?;
    d.flip_if(ctx.role == Role::P1);
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::testutil::{
        ELLS, RADICES, open_bits, prg, run2, share, signed, values_with_edges,
    };

    fn check(ell: u32, m: u32, n: usize) {
        let mut g = prg(ell as u128 * 100 + m as u128);
        let x = values_with_edges(&mut g, n, ell);
        let (a0, a1) = share(&mut g, &x, ell);
        let r = run2(m, |ctx| {
            drelu(ctx, ell, if ctx.role == Role::P0 { &a0 } else { &a1 })
        });
        for (i, d) in open_bits(&r.p0, &r.p1).iter().enumerate() {
            assert_eq!(*d, signed(x[i], ell) >= 0, "ℓ={ell} m={m} x={}", x[i]);
        }
    }

    #[test]
    fn equals_sign_test() {
        for ell in ELLS {
            check(ell, 4, 10_000);
        }
        for m in RADICES {
            check(37, m, 2000);
        }
    }
}
