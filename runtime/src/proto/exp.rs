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
//! shares `r` and `L_k[i] − r`. The indicator digits (`k ≥ J`,
//! [`sci_ir::math::ExpParams::wide_digits`]: tables of only 0 and `2^{s_out}`) are
//! looked up the same way as bits, `(2^d 1)-OT_1` of `[L_k[·] ≠ 0] ⊕ r` (all digits
//! in one call). The `J` wide factors are multiplied in the oracle's tree, all
//! products of a level as one rounded product ([`super::secmul::mul_round`]: each
//! product plus `2^{s_out−1}` truncated by `s_out`; exact: a product is below
//! `2^{2·s_out} + 2^{s_out−1} < 2^{ℓ−1}`); the indicator bits are ANDed in a tree
//! ([`super::and::and`]) and the product multiplexed by the AND ([`super::mux`]):
//! the oracle's value, bit for bit (the identity in [`sci_ir::math`]).
//!
//! # Cost
//! [`sci_ir::cost::math::exp_neg`]: the millionaires' of widths `d..(K−1)d`,
//! `(K−1)` B2As into `Z_{2^d}`, `J` `(2^d 1)-OT_ℓ` (`2^d·ℓ` bits each plus the
//! OT's) and `K − J` `(2^d 1)-OT_1`, `J − 1` elementwise secret products and
//! non-negative truncations in `⌈log₂ J⌉` levels, `K − J − 1` ANDs in `⌈log₂ (K −
//! J)⌉` levels and one multiplexer. Error: see [`sci_ir::math`].

use super::bits::Bits;
use super::drelu::carry_input;
use super::mill::{self, MillSpec};
use super::{Ctx, ProtoError, Role, and, b2a, check, mux, secmul};
use crate::ot::KkClass;
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
    // The table lookups: role P0 offers the tables rotated by its share, the wide
    // digits' entries (ℓ bits) then the indicators' bits.
    let wide = p.wide_digits();
    let size = 1usize << d;
    let class = |bits: u32, count: usize| KkClass {
        n_msgs: size,
        bits,
        count,
    };
    let classes = [class(ell, n * wide), class(1, n * (k - wide))];
    let classes = &classes[..if k > wide { 2 } else { 1 }];
    let looked = match ctx.role {
        Role::P0 => {
            let r: Vec<u64> = ctx
                .prg
                .ring_elems(n * wide, ell)
                .into_iter()
                .chain(ctx.prg.ring_elems(n * (k - wide), 1))
                .collect();
            ctx.ot
                .send_kkot_classes(ctx.ch, classes, |c, range, out: &mut [u64]| {
                    for (t, msgs) in range.zip(out.chunks_mut(size)) {
                        let t = t + c * n * wide;
                        let (digit, i0, rt) = (t / n, idx[t] as usize, r[t]);
                        for (j, msg) in msgs.iter_mut().enumerate() {
                            let v = (i0 + j) & (size - 1);
                            *msg = if c == 0 {
                                p.table(digit)[v].wrapping_sub(rt) & m
                            } else {
                                u64::from(p.indicator(digit, v)) ^ rt
                            };
                        }
                    }
                })?;
            r
        }
        Role::P1 => {
            let choices: Vec<u8> = idx.iter().map(|&i| i as u8).collect();
            ctx.ot.recv_kkot_classes(ctx.ch, classes, &choices)?
        }
    };
    let (vals, bits) = looked.split_at(n * wide);
    // The product tree of the wide digits, one level per call.
    let mut vals = vals.to_vec();
    let mut len = wide;
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
    if k == wide {
        return Ok(vals);
    }
    // The indicators' AND tree (digit-major bits), then the multiplexer.
    let mut on: Vec<Bits> = bits
        .chunks(n)
        .map(|c| Bits::from_fn(n, |i| c[i] & 1 == 1))
        .collect();
    while on.len() > 1 {
        let pairs = on.len() / 2;
        let lhs = Bits::concat(&on[..pairs]);
        let rhs = Bits::concat(&on[pairs..2 * pairs]);
        let both = and::and(ctx, &lhs, &rhs)?;
        let mut next: Vec<Bits> = (0..pairs).map(|q| both.slice(q * n, n)).collect();
        next.extend(on.drain(2 * pairs..));
        on = next;
    }
    mux::mux(ctx, ell, &vals, &on[0])
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
        let model = |n| cost::math::exp_neg(p, 4, n, true);
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
        // Wide digits of all (3 of 3, 4 of 4), 1 of 2 (one indicator, no AND) and 2
        // of 6 (four indicators: two levels of ANDs).
        for (s_in, s_out, d) in [(6u32, 5u32, 4u32), (8, 5, 3), (4, 4, 8), (0, 5, 2)] {
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
