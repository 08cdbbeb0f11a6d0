//! `DReLU` over a ring `Z_n` with `n` odd (e.g. the prime fields of the
//! HE-based layers): `Π_DReLU^{ring,n}` (CrypTFlow2 Algorithm 4, §3.3).
//!
//! `DReLU(a) = 1{a < ⌈n/2⌉}`. With shares `a_0, a_1 ∈ [0, n)`, let `wrap =
//! 1{a_0 + a_1 > n − 1}`, `lt = 1{a_0 + a_1 > (n−1)/2}`, `rt = 1{a_0 + a_1 >
//! n + (n−1)/2}`; then `DReLU(a) = 1 ⊕ lt` if `wrap = 0`, else `1 ⊕ rt`.
//! Role `P0` knows which of `lt`, `rt` is constant (`lt = 1` if `a_0 >
//! (n−1)/2`, `rt = 0` otherwise), so two comparisons suffice, and both have
//! role `P1`'s input `(n−1)/2 + a_1`:
//! - `wrap`: role `P0`'s input `3(n−1)/2 − a_0`;
//! - `xt`: `2n − 1 − a_0` if `a_0 > (n−1)/2` (then `xt = rt`), else `n − 1 −
//!   a_0` (then `xt = lt`);
//!
//! computed by one `Π_MILL^{η+1}` with two comparisons per element
//! ([`mill::mill`], `k = 2`: the leaf OTs are shared). A `(4 1)-OT_1` in which
//! role `P1` chooses with its shares of `xt` and `wrap` gives the output
//! (steps 6–17 of Algorithm 4).
//!
//! Cost: `Π_MILL^{η+1}` with `k = 2` plus `2λ + 4` bits, `η = ⌈log₂ n⌉`;
//! rounds: the millionaires' plus one.

use super::bits::Bits;
use super::{Ctx, ProtoError, Role, check, mill};

/// `⌈log₂ n⌉`.
fn eta(n: u64) -> u32 {
    64 - (n - 1).leading_zeros()
}

/// Shares of `DReLU(a) = 1{a < ⌈n/2⌉}` for shares `a` (in `[0, n)`) of
/// elements of `Z_n`, `n` odd, `3 ≤ n < 2^63`.
pub fn drelu_field(ctx: &mut Ctx<'_>, n: u64, a: &[u64]) -> Result<Bits, ProtoError> {
    check(n >= 3 && n % 2 == 1 && n < 1 << 63, || {
        format!("modulus {n} must be odd, at least 3 and below 2^63")
    })?;
    check(a.iter().all(|&v| v < n), || {
        "shares must be reduced mod n".into()
    })?;
    let half = (n - 1) / 2;
    let bits = eta(n) + 1;
    let len = a.len();
    let input: Vec<u64> = match ctx.role {
        Role::P0 => a
            .iter()
            .flat_map(|&a0| {
                [
                    3 * half - a0,
                    if a0 > half {
                        2 * n - 1 - a0
                    } else {
                        n - 1 - a0
                    },
                ]
            })
            .collect(),
        Role::P1 => a.iter().map(|&a1| half + a1).collect(),
    };
    // Bits 2i (wrap) and 2i + 1 (xt).
    let cmp = mill::mill(ctx, bits, 2, &input)?;
    Ok(match ctx.role {
        Role::P0 => {
            let z = Bits::random(ctx.prg, len);
            let mut msgs = Vec::with_capacity(4 * len);
            for (i, &a0) in a.iter().enumerate() {
                let (wrap0, xt0) = (cmp.bit(2 * i), cmp.bit(2 * i + 1));
                for j in 0..4u64 {
                    // j = xt_1 + 2·wrap_1.
                    let (j0, j1) = (j & 1, j >> 1);
                    let t = 1 ^ xt0 ^ j0;
                    let w = wrap0 ^ j1;
                    let s = if a0 > half { t & w } else { t ^ ((1 ^ t) & w) };
                    msgs.push((s ^ z.bit(i)) as u8);
                }
            }
            ctx.ot.send_kkot(ctx.ch, 4, &msgs, 1)?;
            z
        }
        Role::P1 => {
            let choices: Vec<u8> = (0..len)
                .map(|i| (cmp.bit(2 * i + 1) | cmp.bit(2 * i) << 1) as u8)
                .collect();
            let out = ctx.ot.recv_kkot::<u8>(ctx.ch, 4, &choices, 1)?;
            Bits::from_bytes_bit(&out, 0)
        }
    })
}

/// Exact bits on the wire of [`drelu_field`] on `len` elements at radix `m`.
pub fn cost_bits(n: u64, m: u32, len: usize) -> u64 {
    sci_ir::cost::sign::drelu_field(n, m, len).bits()
}

/// Rounds of [`drelu_field`] (role `P1`).
pub fn rounds(n: u64, m: u32) -> u64 {
    sci_ir::cost::sign::drelu_field(n, m, 1).rounds(Role::P1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::testutil::{RADICES, measured, open_bits, pin, prg, run2, run2_tcp};

    /// Random elements and the edges 0, 1, (n−1)/2, (n+1)/2, n−1, with
    /// random shares mod n: `(values, shares of P0, shares of P1)`.
    fn inputs(n: u64, len: usize, seed: u128) -> (Vec<u64>, Vec<u64>, Vec<u64>) {
        let mut g = prg(seed);
        let mut x: Vec<u64> = g.u64s(len).iter().map(|v| v % n).collect();
        x.extend([0, 1, (n - 1) / 2, n.div_ceil(2), n - 1, n - 2]);
        let r: Vec<u64> = g.u64s(x.len()).iter().map(|v| v % n).collect();
        let other = x.iter().zip(&r).map(|(&x, &r)| (x + n - r) % n).collect();
        (x, r, other)
    }

    fn check(n: u64, m: u32, len: usize, tcp: bool) {
        let (x, a0, a1) = inputs(n, len, n as u128 + m as u128);
        let f =
            |ctx: &mut Ctx<'_>| drelu_field(ctx, n, if ctx.role == Role::P0 { &a0 } else { &a1 });
        let r = if tcp { run2_tcp(m, f) } else { run2(m, f) };
        let got = open_bits(&r.p0, &r.p1);
        let field = sci_ir::Encoding::field(n).ok();
        for (i, (&v, &d)) in x.iter().zip(&got).enumerate() {
            assert_eq!(d, v < n.div_ceil(2), "n={n} m={m} i={i} v={v}");
            if let Some(f) = field {
                assert_eq!(d, f.signed(v) >= 0);
            }
        }
    }

    #[test]
    fn equals_sign_test() {
        // Primes (fields of the HE layers, a 2^k·N + 1 prime among them) and
        // other odd moduli.
        for n in [
            3u64,
            5,
            7,
            65537,
            1_073_872_897,
            (1 << 61) - 1,
            9,
            1_000_001,
            (1 << 63) - 25,
        ] {
            check(n, 4, 10_000, false);
        }
        for m in RADICES {
            check(65537, m, 2000, false);
        }
    }

    #[test]
    fn communication_and_rounds() {
        let n = 1_073_872_897u64; // η = 31
        let (_, a0, a1) = inputs(n, 4000, 1);
        let r = measured(4, |ctx, warm| {
            let a = if ctx.role == Role::P0 { &a0 } else { &a1 };
            drelu_field(ctx, n, if warm { &a[..8] } else { a })
        });
        pin!(r.bits(), cost_bits(n, 4, a0.len()));
        pin!(r.stats[1].rounds, rounds(n, 4));
        // Two 33-bit comparisons sharing P1's input: 1.5 millionaires' in the
        // paper's accounting (< 1.5λ(η+1) + 28(η+1) + 2λ + 4 bits).
        let per = cost_bits(n, 4, 1 << 16) as f64 / 65536.0;
        assert!(per < 1.5 * 128.0 * 32.0 + 28.0 * 32.0 + 260.0, "{per}");
    }

    #[test]
    fn over_tcp_loopback() {
        check(65537, 4, 1 << 16, true);
    }

    #[test]
    fn rejects_even_or_unreduced() {
        let r = run2(4, |ctx| {
            Ok(drelu_field(ctx, 8, &[1]).is_err() && drelu_field(ctx, 7, &[7]).is_err())
        });
        assert!(r.p0 && r.p1);
    }
}
