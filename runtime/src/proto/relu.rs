//! `ReLU` over `Z_{2^ℓ}` (`Π_ReLU^{int,ℓ}`, CrypTFlow2 Algorithm 8, App. B)
//! and over `Z_n`, `n` odd (`Π_ReLU^{ring,n}`, App. B: "follows similarly").
//!
//! `ReLU(a) = DReLU(a)·a`: one [`sign::drelu`] and one [`mux::mux`] over the
//! same modulus.
//!
//! Over `Z_{2^ℓ}`: `Π_MILL^{ℓ−1}` plus 2λ + 2ℓ bits (the paper's multiplexer
//! costs 2λ + 4ℓ; ours uses correlated OT, see [`super::mux`]). For ℓ = 32
//! that is 4148 bits at m = 4 (paper: 4212) and 3234 at m = 7 (paper: 3298),
//! plus the OT layer's padding. Rounds (role `P1`): those of `Π_MILL^{ℓ−1}`
//! plus 1 — 4 for ℓ = 32, m = 4 (the paper counts 7, Table 2).
//!
//! Over `Z_n`: `Π_DReLU^{ring,n}` (two `Π_MILL^{η+1}` sharing role `P1`'s
//! input, plus a `(4 1)-OT_1`) plus 2λ + 2η bits, `η = ⌈log₂ n⌉`. For η = 32
//! at m = 7: 5224 bits (paper, Table 2: 5288, with its 2λ + 4η
//! multiplexer); rounds (role `P1`): the millionaires', one for the
//! `(4 1)-OT` and one for the multiplexer — 5 for η = 32, m = 7 (the paper
//! counts 9; our millionaires' makes one OT call for all its classes).

use super::Modulus;
use super::{Ctx, ProtoError, mux, sign};

/// Exact bits on the wire of [`relu`] mod `md` on `n` elements at radix `m`.
pub fn cost_bits(md: impl Into<Modulus>, m: u32, n: usize) -> u64 {
    sci_ir::cost::select::relu(md.into().into(), m, n).bits()
}

/// Rounds of [`relu`] (role `P1`): the DReLU's plus the multiplexer's 1.
pub fn rounds(md: impl Into<Modulus>, m: u32) -> u64 {
    sci_ir::cost::select::relu(md.into().into(), m, 1).rounds(super::Role::P1)
}

/// Shares of `max(a, 0)` (of the signed view) for shares `a` mod `md`
/// (`Z_{2^ℓ}` for an ℓ given as `u32`).
pub fn relu(ctx: &mut Ctx<'_>, md: impl Into<Modulus>, a: &[u64]) -> Result<Vec<u64>, ProtoError> {
    let md = md.into();
    let d = sign::drelu(ctx, md, a)?;
    mux::mux(ctx, md, a, &d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::Role;
    use crate::proto::testutil::{
        RADICES, measured, moduli, open, pin, prg, reference, run2, run2_tcp, share,
        values_with_edges,
    };

    /// ReLU of `len` random values mod `md` and the edges of its signed range,
    /// against the reference interpreter.
    fn check(md: Modulus, m: u32, len: usize, tcp: bool) {
        let mut g = prg(md.value() * 3 + m as u128);
        let x = values_with_edges(&mut g, len, md);
        let (a0, a1) = share(&mut g, &x, md);
        let f = |ctx: &mut Ctx<'_>| relu(ctx, md, if ctx.role == Role::P0 { &a0 } else { &a1 });
        let r = if tcp { run2_tcp(m, f) } else { run2(m, f) };
        let z = open(&r.p0, &r.p1, md);
        let want = reference(md, &[(&x, &[x.len()], sci_ir::Owner::Client)], |v| {
            sci_ir::Op::Relu { x: v[0] }
        })
        .0;
        assert_eq!(z, want, "{md} m={m}");
        assert!(
            x.iter()
                .zip(&z)
                .all(|(&x, &z)| z == if md.signed(x) < 0 { 0 } else { x })
        );
    }

    #[test]
    fn equals_reference_interpreter() {
        for md in moduli() {
            let len = if let Modulus::Pow2(_) = md {
                10_000
            } else {
                3000
            };
            check(md, 4, len, false);
        }
        for md in [Modulus::Pow2(41), Modulus::Odd(2_199_023_190_017)] {
            for m in RADICES {
                check(md, m, 1000, false);
            }
        }
    }

    #[test]
    fn communication_and_rounds() {
        // Rings at ℓ = 32; fields at η = 32 (a 32-bit HE plaintext prime) and
        // η = 41.
        for (md, m, n) in [
            (Modulus::Pow2(32), 4u32, 4096usize),
            (Modulus::Pow2(32), 7, 1000),
            (Modulus::Odd(4_293_918_721), 7, 1000),
            (Modulus::Odd(2_199_023_190_017), 4, 2000),
        ] {
            let mut g = prg(5);
            let x = md.random(&mut g, n);
            let (a0, a1) = share(&mut g, &x, md);
            let r = measured(m, |ctx, warm| {
                let a = if ctx.role == Role::P0 { &a0 } else { &a1 };
                relu(ctx, md, if warm { &a[..8] } else { a })
            });
            pin!(r.bits(), cost_bits(md, m, n), "{md} m={m}");
            pin!(r.stats[1].rounds, rounds(md, m), "{md} m={m}");
        }
        // Per element at n = 2^16 (including the one-time OT set-ups: 256
        // base OTs for 1-of-N OT one way, 128 for IKNP each way): the paper's
        // 4212 (m = 4) and 3298 (m = 7) less 2ℓ for the correlated-OT
        // multiplexer; the required bounds are 4423 and 3463.
        let n = 1 << 16;
        let setup = 8 * ((32 + 256 * 32) + 2 * (32 + 128 * 32)) as u64;
        assert_eq!(cost_bits(32, 4, n), (4212 - 64) * n as u64);
        assert_eq!(cost_bits(32, 7, n), (3298 - 64) * n as u64);
        let per_elem = |c: u64| (c + setup) as f64 / n as f64;
        assert!(per_elem(cost_bits(32, 4, n)) < 4151.0 && per_elem(cost_bits(32, 7, n)) < 3237.0);
        assert_eq!(rounds(32, 4), 4);
        assert_eq!(rounds(32, 7), 4);
        // Table 2, ReLU over Z_n at η = 32, m = 7: the paper's 5288 bits less
        // 2η for the correlated-OT multiplexer (required ≤ 5552 = 1.05·5288).
        let md = Modulus::Odd(4_293_918_721);
        assert_eq!(cost_bits(md, 7, n), (5288 - 64) * n as u64);
        assert_eq!(rounds(md, 7), 5);
    }

    #[test]
    fn over_tcp_loopback() {
        check(Modulus::Pow2(32), 4, 1 << 16, true);
    }
}
