//! Math functions on shares (the runtime's `proto::exp`, `proto::recip`,
//! `proto::sigmoid`), after SIRNN (Rathee et al., S&P 2021).
//!
//! `exp` of `n` non-positive ℓ-bit inputs with `d`-bit digits (`K = ⌈ℓ/d⌉` digits,
//! the first `J` wide, the rest indicators: [`crate::math::ExpParams::wide_digits`]): the
//! carries into digits `1..K` as one millionaires' call of widths `d, 2d, …, (K−1)d`;
//! their B2A into `Z_{2^d}`; the `K` table lookups in one call (role `P0` sending):
//! `J·n` instances of `(2^d 1)-OT_ℓ` and `(K − J)·n` of `(2^d 1)-OT_1` (the indicator
//! bits); per level of the product tree over the `J` wide digits one rounded product
//! of two shared tensors ([`super::secmul::mul_round`]); per level of the indicators'
//! AND tree one AND; one multiplexer of the tree's result by the AND (if `J < K`).
//!
//! The reciprocal ([`recip`]) is `n + 1` rounded products (`n` the Goldschmidt
//! iterations), and sigmoid/tanh ([`smooth`]) a `DReLU`, a multiplexer, `exp`, the
//! reciprocal, one non-negative truncation and a second multiplexer.
//!
//! The range reduction ([`normalize`]) is a ReLU, one `DReLU` and B2A of `(ℓ − 1)·n`
//! elements, a secret product and a non-negative truncation; the reciprocal square root
//! ([`rsqrt`]) adds `3n + 1` rounded products (`n` the Newton steps).
//!
//! A piecewise cubic ([`spline`], the runtime's `proto::spline`): two `DReLU`s and two
//! multiplexers per element beyond one per knot, two rounded products, one truncation.
//!
//! Softmax ([`softmax`]) over `r` lines of `n` elements: MaxPool's tournament over the
//! lines (exact mode: the inputs' signs first), exp of the `r·n` differences, the
//! range-reduced reciprocal of the `r` sums, one rounded product of `r·n` elements.

use super::ot::kk_call;
use super::{Modulus, Role, Transcript, div, mill, pool, secmul, select, sign};
use crate::math::{
    ExpParams, RecipParams, RecipRangeParams, RsqrtParams, SmoothParams, SoftmaxParams,
};
use crate::params::ot::KkClass;
use crate::spline::SplineParams;

/// `exp` of `n` elements ([`crate::math::exp_neg`] of `p`) at millionaires' radix
/// `m`; the products streamed if `duplex`.
pub fn exp_neg(p: &ExpParams, m: u32, n: usize, duplex: bool) -> Transcript {
    let (ell, d, k, wide) = (p.ell(), p.digit(), p.digits(), p.wide_digits());
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
    let lut = |bits: u32, count: usize| KkClass {
        n_msgs: 1 << d,
        bits,
        count,
    };
    let luts = [lut(ell, n * wide), lut(1, n * (k - wide))];
    t = t.then(kk_call(
        Role::P1,
        &luts[..if k > wide { 2 } else { 1 }],
        &[],
    ));
    // The product tree of the wide digits, then the indicators' AND tree.
    for (len, step) in [(wide, true), (k - wide, false)] {
        let mut len = len;
        while len > 1 {
            let pairs = len / 2;
            t = t.then(if step {
                secmul::mul_round(ell, p.s_out(), m, pairs * n, duplex)
            } else {
                select::and(pairs * n)
            });
            len -= pairs;
        }
    }
    if k > wide {
        t = t.then(select::mux(&[Modulus::Pow2(ell)], n));
    }
    t
}

/// The reciprocal of `n` elements ([`crate::math::recip`]) at radix `m`: the
/// rounded product `z·w_0` (by `t + 1`), then per iteration `k` one rounded product
/// of `2n` elements (`w_k·(1 + e_k)` and `e_k²`; `n` in the last), by `t + 1` in the
/// first and `t` after.
pub fn recip(p: &RecipParams, m: u32, n: usize, duplex: bool) -> Transcript {
    let (ell, t) = (p.ell(), p.t());
    if n == 0 {
        return Transcript::new();
    }
    let mut tr = secmul::mul_round(ell, t + 1, m, n, duplex);
    for k in 0..p.iters() {
        let count = if k + 1 < p.iters() { 2 * n } else { n };
        let shift = if k == 0 { t + 1 } else { t };
        tr = tr.then(secmul::mul_round(ell, shift, m, count, duplex));
    }
    tr
}

/// Sigmoid or tanh of `n` elements ([`crate::math::smooth`]) at radix `m`:
/// `DReLU^ℓ`, a multiplexer (`−|x|`), [`exp_neg`] at scale `t`, [`recip`], the
/// non-negative truncation by `t − s`, a multiplexer (the sign).
pub fn smooth(p: &SmoothParams, m: u32, n: usize, duplex: bool) -> Transcript {
    let (ell, e) = (p.ell(), p.exp());
    if n == 0 {
        return Transcript::new();
    }
    let mux = || select::mux(&[Modulus::Pow2(ell)], n);
    sign::drelu_ring(ell, m, n)
        .then(mux())
        .then(exp_neg(e, m, n, duplex))
        .then(recip(p.recip(), m, n, duplex))
        .then(div::trunc_nonneg(ell, p.t() - p.s(), m, n))
        .then(mux())
}

/// The range reduction of `n` ℓ-bit elements at internal scale `t` (the runtime's
/// `proto::normalize`) at radix `m`: a ReLU, `DReLU^ℓ` and B2A of `(ℓ − 1)·n`
/// elements, the secret product `v·M`, the non-negative truncation by `ℓ − 2 − t`.
pub fn normalize(ell: u32, t: u32, m: u32, n: usize, duplex: bool) -> Transcript {
    if n == 0 {
        return Transcript::new();
    }
    let md = Modulus::Pow2(ell);
    let cmp = (ell as usize - 1) * n;
    select::relu(md, m, n)
        .then(sign::drelu_ring(ell, m, cmp))
        .then(select::b2a(md, cmp))
        .then(secmul::mul(ell, n, duplex))
        .then(div::trunc_nonneg(ell, ell - 2 - t, m, n))
}

/// The reciprocal square root of `n` elements ([`crate::math::rsqrt`]) at radix
/// `m`: [`normalize`] at scale `t`, three rounded products per Newton step (by `t + 2`,
/// `t + 2`, `t + 3` in the first, `t`, `t`, `t + 1` after), the rounded product by the
/// output factor (by `t + g − s`).
pub fn rsqrt(p: &RsqrtParams, m: u32, n: usize, duplex: bool) -> Transcript {
    let (ell, t) = (p.ell(), p.t());
    if n == 0 {
        return Transcript::new();
    }
    let mut tr = normalize(ell, t, m, n, duplex);
    let mut sigma = t + 2;
    for _ in 0..p.iters() {
        for shift in [sigma, sigma, sigma + 1] {
            tr = tr.then(secmul::mul_round(ell, shift, m, n, duplex));
        }
        sigma = t;
    }
    tr.then(secmul::mul_round(ell, t + p.g() - p.s(), m, n, duplex))
}

/// The range-reduced reciprocal of `n` elements ([`crate::math::recip_range`])
/// at radix `m`: [`normalize`] at the reciprocal's scale `t`, [`recip`], one rounded
/// product by the output factor.
pub fn recip_range(p: &RecipRangeParams, m: u32, n: usize, duplex: bool) -> Transcript {
    if n == 0 {
        return Transcript::new();
    }
    let r = p.recip();
    normalize(p.ell(), r.t(), m, n, duplex)
        .then(recip(r, m, n, duplex))
        .then(secmul::mul_round(p.ell(), p.shift(), m, n, duplex))
}

/// Softmax of `rows` lines of [`SoftmaxParams::line_len`] elements ([`crate::math::softmax`];
/// the runtime's `proto::softmax`) at radix `m`: the lines' maxima
/// ([`pool::maxpool`], exact comparisons if `exact`), [`exp_neg`] of every difference
/// at scale `t`, [`recip_range`] of every line's sum, the rounded product of every
/// exponential by its line's reciprocal (by `t + s_r − s`).
pub fn softmax(p: &SoftmaxParams, m: u32, rows: usize, exact: bool, duplex: bool) -> Transcript {
    if rows == 0 {
        return Transcript::new();
    }
    let (ell, e, len) = (p.ell(), p.exp(), p.line_len());
    let n = rows * len;
    pool::maxpool(Modulus::Pow2(ell), m, n, &vec![len; rows], exact, false)
        .then(exp_neg(e, m, n, duplex))
        .then(recip_range(p.recip(), m, rows, duplex))
        .then(secmul::mul_round(ell, p.shift(), m, n, duplex))
}

/// A piecewise cubic of `n` elements ([`crate::spline::spline`]; the runtime's
/// `proto::spline`) with `k` knots at radix `m`: `DReLU^ℓ` of `x` and a multiplexer
/// (`|x|`), `DReLU^ℓ` of the `k·n` differences to the knots, the rounded products `U₁²`
/// and `U₂·U₁` (by `f`), `k·n` multiplexers (the segments' differences), the
/// non-negative truncation by `σ`, and for erf one more multiplexer (the sign).
pub fn spline(p: &SplineParams, m: u32, n: usize, duplex: bool) -> Transcript {
    if n == 0 {
        return Transcript::new();
    }
    let (ell, k) = (p.ell(), p.knots().len());
    let mux = |c: usize| select::mux(&[Modulus::Pow2(ell)], c);
    let t = sign::drelu_ring(ell, m, n)
        .then(mux(n))
        .then(sign::drelu_ring(ell, m, k * n))
        .then(secmul::mul_round(ell, p.f(), m, n, duplex))
        .then(secmul::mul_round(ell, p.f(), m, n, duplex))
        .then(mux(k * n))
        .then(div::trunc_nonneg(ell, p.shift(), m, n));
    if p.func().is_odd() { t.then(mux(n)) } else { t }
}
