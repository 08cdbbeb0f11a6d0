//! Math functions on shares (the runtime's `proto::exp`), after SIRNN (Rathee et al.,
//! S&P 2021).
//!
//! `exp` of `n` non-positive ℓ-bit inputs with `d`-bit digits (`K = ⌈ℓ/d⌉` digits,
//! [`crate::interp::math::ExpParams`]): the carries into digits `1..K` as one
//! millionaires' call of widths `d, 2d, …, (K−1)d`; their B2A into `Z_{2^d}`; the `K`
//! table lookups as `(2^d 1)-OT_ℓ` instances in one call (role `P0` sending); then per
//! level of the product tree one elementwise product of two shared tensors
//! ([`super::secmul`]) and one non-negative truncation by `s_out` ([`super::div`]).

use super::ot::{KkClass, kk_call};
use super::{Modulus, Role, Transcript, div, mill, secmul, select};

/// `exp` of `n` elements at ring width ℓ, digit width `d`, output scale `s_out`,
/// millionaires' radix `m`; the products streamed if `duplex`.
pub fn exp_neg(ell: u32, d: u32, s_out: u32, m: u32, n: usize, duplex: bool) -> Transcript {
    let k = ell.div_ceil(d) as usize;
    let mut t = Transcript::new();
    if n == 0 {
        return t;
    }
    if k > 1 {
        let specs: Vec<(u32, usize, usize)> = (1..k).map(|j| (j as u32 * d, 1, n)).collect();
        t = t
            .then(mill::mill_multi(m, &specs))
            .then(select::b2a(Modulus::Pow2(d), n * (k - 1)));
    }
    let lut = KkClass {
        n_msgs: 1 << d,
        bits: ell,
        count: n * k,
    };
    t = t.then(kk_call(Role::P1, &[lut], &[]));
    let mut len = k;
    while len > 1 {
        let pairs = len / 2;
        t = t
            .then(secmul::mul(ell, pairs * n, duplex))
            .then(div::trunc_nonneg(ell, s_out, m, pairs * n));
        len -= pairs;
    }
    t
}
