//! `exp` of non-positive fixed-point inputs (after SIRNN, Rathee et al., S&P
//! 2021): shares of [`sci_ir::math::exp_neg`], bit for bit.
//!
//! # Protocol
//! For shares of `x ≤ 0` each party negates its share locally: shares of `y =
//! −x mod 2^ℓ`. Digit `k` of `y` (bits `kd..(k+1)d`) is `(a_{0,k} + a_{1,k} +
//! c_k) mod 2^d`, `a_{b,k}` digit `k` of party `b`'s share and `c_k` the carry
//! out of the low `kd` bits of the shares' sum: the carries of digits
//! `1..K` are one millionaires' call (`1{2^{kd} − 1 − low_0 < low_1}`,
//! widths `d, 2d, …`, [`super::mill::mill_multi`]), brought into `Z_{2^d}`
//! by one B2A ([`super::b2a`]); each party then holds an additive share mod
//! `2^d` of every digit. Each digit's table lookup is one `(2^d 1)-OT_ℓ`: role
//! `P0`, with its index share `i_0` and a fresh random `r`, offers `L_k[(i_0 +
//! j) mod 2^d] − r` for `j < 2^d`, role `P1` chooses its share `i_1`; the
//! shares `r` and `L_k[i] − r` (all digits in one call). The `K` factors are
//! multiplied in the oracle's tree, all products of a level as one rounded
//! product ([`super::secmul::mul_round`]: each product plus `2^{s_out−1}`
//! truncated by `s_out`; exact: a product is below `2^{2·s_out} +
//! 2^{s_out−1} < 2^{ℓ−1}`).
//!
//! # Cost
//! [`sci_ir::cost::math::exp_neg`]: the millionaires' of widths `d..(K−1)d`,
//! `(K−1)` B2As into `Z_{2^d}`, `K` `(2^d 1)-OT_ℓ` (`2^d·ℓ` bits each plus the
//! OT's), and `K − 1` elementwise secret products and non-negative
//! truncations in `⌈log₂ K⌉` levels. Error: see [`sci_ir::math`].

use super::bits::Bits;
use super::drelu::carry_input;
use super::mill::{self, MillSpec};
use super::{Ctx, ProtoError, Role, b2a, check, secmul};
use crate::pack::mask;
use sci_ir::math::ExpParams;

/// Shares of [`sci_ir::math::exp_neg`] (at scale `s_out`) of the
/// shared ℓ-bit inputs `x ≤ 0` (a positive input gives 0).
pub fn exp_neg(ctx: &mut Ctx<'_>, p: &ExpParams, x: &[u64]) -> Result<Vec<u64>, ProtoError> {
    let (ell, d, s) = (p.ell(), p.digit(), p.s_out());
    let m = mask(ell);
    check(x.iter().all(|&v| v & !m == 0), || {
        format!("shares must be reduced mod 2^{ell}")
    })?;
    let n = x.len();
    if n == 0 {
        return Ok(Vec::new());
    }
    let k = p.digits();
    let dm = mask(d);
    let y: Vec<u64> = x.iter().map(|&v| v.wrapping_neg() & m).collect();
    let digit = |j: usize, i: usize| (y[i] >> (j as u32 * d)) & dm;
    // Carries into digits 1..K, as shares mod 2^d (digit-major).
    let carries = if k > 1 {
        let inputs: Vec<Vec<u64>> = (1..k)
            .map(|j| carry_input(ctx.role, j as u32 * d, &y))
            .collect();
        let specs: Vec<MillSpec<'_>> = inputs
            .iter()
            .enumerate()
            .map(|(j, input)| MillSpec {
                bits: (j as u32 + 1) * d,
                k: 1,
                input,
            })
            .collect();
        let c = mill::mill_multi(ctx, &specs)?;
        b2a::b2a(ctx, d, &Bits::concat(&c))?
    } else {
        Vec::new()
    };
    // This party's share of every digit, digit-major.
    let idx: Vec<u64> = (0..k)
        .flat_map(|j| (0..n).map(move |i| (j, i)))
        .map(|(j, i)| {
            let c = if j == 0 { 0 } else { carries[(j - 1) * n + i] };
            (digit(j, i) + c) & dm
        })
        .collect();
    // The table lookups: role P0 offers the tables rotated by its share.
    let size = 1usize << d;
    let mut vals = match ctx.role {
        Role::P0 => {
            let r = ctx.prg.ring_elems(n * k, ell);
            let mut msgs = vec![0u64; n * k * size];
            for (t, (&i0, &rt)) in idx.iter().zip(&r).enumerate() {
                let table = p.table(t / n);
                for (j, msg) in msgs[t * size..(t + 1) * size].iter_mut().enumerate() {
                    let v = table[(i0 as usize + j) & (size - 1)];
                    *msg = v.wrapping_sub(rt) & m;
                }
            }
            ctx.ot.send_kkot(ctx.ch, size, &msgs, ell)?;
            r
        }
        Role::P1 => {
            let choices: Vec<u8> = idx.iter().map(|&i| i as u8).collect();
            ctx.ot.recv_kkot(ctx.ch, size, &choices, ell)?
        }
    };
    // The product tree, one level per call.
    let mut len = k;
    while len > 1 {
        let pairs = len / 2;
        let (a, b): (Vec<u64>, Vec<u64>) = (0..pairs)
            .flat_map(|q| (0..n).map(move |i| (q, i)))
            .map(|(q, i)| (vals[2 * q * n + i], vals[(2 * q + 1) * n + i]))
            .unzip();
        let mut next = secmul::mul_round(ctx, ell, s, &a, &b)?;
        if len % 2 == 1 {
            next.extend_from_slice(&vals[(len - 1) * n..len * n]);
        }
        vals = next;
        len -= pairs;
    }
    Ok(vals)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::testutil::{measured, open, prg, run2, share};
    use sci_ir::cost;
    use sci_ir::math;

    fn check_exp(p: &ExpParams, x: &[u64], seed: u128) {
        let ell = p.ell();
        let (x0, x1) = share(&mut prg(seed), x, ell);
        let r = measured(4, |ctx, warm| {
            let x = if ctx.role == Role::P0 { &x0 } else { &x1 };
            exp_neg(ctx, p, if warm { &x[..2] } else { x })
        });
        let want: Vec<u64> = x.iter().map(|&v| math::exp_neg(p, v)).collect();
        assert_eq!(open(&r.p0, &r.p1, ell), want, "{p:?}");
        let model = |n| cost::math::exp_neg(ell, p.digit(), p.s_out(), 4, n, true);
        let (warm, t) = (model(2), model(x.len()));
        if let Some(rounds) = r.pin_costs(&warm, &t, &format!("{p:?}")) {
            eprintln!(
                "exp ℓ={ell} d={}: {} bits per element, rounds {rounds:?}",
                p.digit(),
                t.bits() as f64 / x.len() as f64
            );
        }
    }

    /// Every non-positive input at ℓ = 12 (and the positive ones, which give 0).
    #[test]
    fn exhaustive_at_twelve_bits() {
        for (s_in, s_out, d) in [(6u32, 5u32, 4u32), (8, 5, 3), (4, 4, 8)] {
            let p = ExpParams::new(12, s_in, s_out, d).unwrap();
            let x: Vec<u64> = (0..1u64 << 12).collect();
            check_exp(&p, &x, u128::from(d));
        }
    }

    #[test]
    fn random_at_32_and_37_bits() {
        for (ell, s_in, s_out, d) in [
            (32u32, 12u32, 14u32, 8u32),
            (37, 16, 16, 8),
            (37, 12, 17, 6),
        ] {
            let p = ExpParams::new(ell, s_in, s_out, d).unwrap();
            let mut g = prg(u128::from(ell + d));
            let range = 24u64 << s_in;
            let x: Vec<u64> = g
                .u64s(3000)
                .into_iter()
                .map(|v| (v % range).wrapping_neg() & mask(ell))
                .chain([0, mask(ell), 1 << (ell - 1), (1 << (ell - 1)) + 1])
                .collect();
            check_exp(&p, &x, 3);
        }
    }

    #[test]
    fn rejects_unreduced_shares() {
        let p = ExpParams::new(12, 6, 5, 4).unwrap();
        let r = run2(4, |ctx| Ok(exp_neg(ctx, &p, &[1 << 12]).is_err()));
        assert!(r.p0 && r.p1);
    }
}
