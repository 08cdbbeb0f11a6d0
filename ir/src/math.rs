//! Fixed-point math functions over `Z_{2^ℓ}` (after SIRNN, Rathee et al., S&P 2021):
//! the definitions the secure protocols equal bit for bit, and their error bounds.
//!
//! # exp of non-positive inputs ([`exp_neg`])
//! `x ≤ 0` at scale `s_in` (ℓ-bit two's complement); the result `≈ e^{x/2^{s_in}}`
//! at scale `s_out`. With `y = −x mod 2^ℓ` read unsigned and cut into `K = ⌈ℓ/d⌉`
//! digits `v_k` of `d` bits (the top one `ℓ − (K−1)d`), `e^{−y/2^{s_in}} =
//! Π_k e^{−v_k·2^{kd − s_in}}`; each factor is a table `L_k[v] =
//! round(e^{−v·2^{kd−s_in}}·2^{s_out})` (half away from zero, ≤ `2^{s_out}`), and the
//! factors are multiplied in a balanced tree (adjacent pairs level by level, an odd
//! last one moving up), each product rounded back to scale `s_out`: `(a·b +
//! 2^{s_out−1}) >> s_out`. A positive `x` (outside the domain) has `y ≥ 2^{ℓ−1}`, so
//! its top digit is non-zero and its result 0 (as for any `x` below
//! `−2^{ℓ−1}`… which cannot occur) — callers clamp first.
//!
//! **Error**: every table entry is within ½ ULP (`2^{−s_out}`) of its factor, every
//! factor and entry is at most 1, and a rounded product of two values in `[0, 1]`
//! adds at most ½ ULP to the sum of its operands' errors, so the result is within
//! `(2K − 1)/2` ULPs of `e^{x/2^{s_in}}` ([`ExpParams::max_error_ulps`]: 3.5 at ℓ = 32
//! with 8-bit digits). Measured: see the tests and `docs/functions.md`.
//!
//! Parameters ([`ExpParams::new`]): `1 ≤ d ≤ 8` (tables of `2^d` entries, one `(2^d
//! 1)`-OT each in the protocol), `s_out ≥ 1` and `2·s_out + 2 ≤ ℓ` (a product of two
//! factors plus the rounding half stays below `2^{ℓ−1}`, so the protocol's ring
//! products and non-negative truncations are exact).
//!
//! **Indicator digits** ([`ExpParams::wide_digits`]): for the usual scales the high
//! digits' factors round to 0 at every non-zero value (`e^{−2^{kd−s_in}}·2^{s_out} <
//! ½`), so their tables hold only `0` and `2^{s_out}` (`2^{s_out}·[v_k = 0]`, the top
//! one periodic). A rounded product with such a factor is exact (`(a·2^{s_out} +
//! 2^{s_out−1}) >> s_out = a`, `(0 + 2^{s_out−1}) >> s_out = 0`), and the tree's
//! pairing restricted to the first `J` leaves is the tree of those `J` leaves (an
//! identity leaf at the end passes its partner up, as an odd last value does). So
//! when the digits from `J` on are indicators, `exp_neg(x)` is the product tree of
//! the first `J` factors times the AND of the indicator bits (tested exhaustively);
//! the protocol looks those digits up as bits (`(2^d 1)-OT_1`) and multiplexes, and
//! the result is the same value bit for bit.

use thiserror::Error;

/// Parameters of a math function out of range.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("invalid math-function parameters: {0}")]
pub struct MathError(pub(crate) String);

/// The parameters of [`exp_neg`]: ring width ℓ, input and output scales, digit width.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpParams {
    ell: u32,
    s_in: u32,
    s_out: u32,
    digit: u32,
    /// The digits' tables ([`ExpParams::table`]).
    tables: Vec<Vec<u64>>,
    /// [`ExpParams::wide_digits`].
    wide: usize,
}

impl ExpParams {
    /// Checks `ℓ ≤ 64`, `1 ≤ digit ≤ min(8, ℓ)`, `s_in ≤ 64`, `s_out ≥ 1`, `2·s_out + 2
    /// ≤ ℓ`.
    pub fn new(ell: u32, s_in: u32, s_out: u32, digit: u32) -> Result<ExpParams, MathError> {
        if ell > 64 || !(1..=8.min(ell)).contains(&digit) || s_in > 64 {
            return Err(MathError(format!(
                "ℓ = {ell} (≤ 64), digit = {digit} (1..=min(8, ℓ)), s_in = {s_in} (≤ 64)"
            )));
        }
        if s_out == 0 || 2 * s_out + 2 > ell {
            return Err(MathError(format!(
                "output scale {s_out} must be ≥ 1 with 2·s_out + 2 ≤ ℓ = {ell}"
            )));
        }
        let mut p = ExpParams {
            ell,
            s_in,
            s_out,
            digit,
            tables: Vec::new(),
            wide: 0,
        };
        p.tables = (0..p.digits()).map(|k| p.make_table(k)).collect();
        let one = 1u64 << s_out;
        let indicator = |t: &Vec<u64>| t.iter().all(|&v| v == 0 || v == one);
        let tail = p.tables.iter().rev().take_while(|t| indicator(t)).count();
        p.wide = (p.digits() - tail).max(1);
        Ok(p)
    }

    /// Ring width ℓ.
    pub fn ell(&self) -> u32 {
        self.ell
    }

    /// Output scale.
    pub fn s_out(&self) -> u32 {
        self.s_out
    }

    /// Digit width `d`.
    pub fn digit(&self) -> u32 {
        self.digit
    }

    /// Number of digits `K = ⌈ℓ/d⌉`.
    pub fn digits(&self) -> usize {
        self.ell.div_ceil(self.digit) as usize
    }

    /// `J`, the number of leading digits whose tables the protocol looks up as ℓ-bit
    /// values: the fewest (at least 1) such that every table from digit `J` on holds
    /// only `0` and `2^{s_out}` (an indicator digit: see the [module
    /// documentation](self)). ℓ = 32, `s_in` = 12, `s_out` ≤ 14, `d` = 8: 2 of 4.
    pub fn wide_digits(&self) -> usize {
        self.wide
    }

    /// Whether value `v` of digit `k ≥` [`ExpParams::wide_digits`] is an indicator
    /// digit's 1 (its table entry is `2^{s_out}`, not 0).
    pub fn indicator(&self, k: usize, v: usize) -> bool {
        self.tables[k][v] != 0
    }

    /// Table `k` (`2^d` entries): entry `v` is `round(e^{−(v mod 2^{w_k})·2^{kd −
    /// s_in}}·2^{s_out})`, `w_k` the width of digit `k` (`d`, or what is left of ℓ for
    /// the top one, whose table repeats with period `2^{w_k}`).
    pub fn table(&self, k: usize) -> &[u64] {
        &self.tables[k]
    }

    fn make_table(&self, k: usize) -> Vec<u64> {
        let d = self.digit;
        let w = (self.ell - k as u32 * d).min(d);
        let scale = (k as f64 * f64::from(d) - f64::from(self.s_in)).exp2();
        let one = f64::from(self.s_out).exp2();
        (0..1u64 << d)
            .map(|v| {
                let v = v & ((1 << w) - 1);
                ((-(v as f64) * scale).exp() * one).round() as u64
            })
            .collect()
    }

    /// The guaranteed bound on `|exp_neg(x)/2^{s_out} − e^{x/2^{s_in}}|` in ULPs of
    /// the output scale: `(2K − 1)/2`.
    pub fn max_error_ulps(&self) -> f64 {
        (2 * self.digits() - 1) as f64 / 2.0
    }

    /// `(a·b + 2^{s_out−1}) >> s_out`: one product of the tree.
    pub fn round_product(&self, a: u64, b: u64) -> u64 {
        ((u128::from(a) * u128::from(b) + (1u128 << (self.s_out - 1))) >> self.s_out) as u64
    }

    /// The balanced product tree's pairing: at each level adjacent pairs `(2i, 2i +
    /// 1)` multiply, an odd last value moves up. Returns the root.
    pub fn product_tree(&self, mut vals: Vec<u64>) -> u64 {
        while vals.len() > 1 {
            vals = vals
                .chunks(2)
                .map(|p| match *p {
                    [a, b] => self.round_product(a, b),
                    [a] => a,
                    _ => unreachable!("chunks of 2"),
                })
                .collect();
        }
        vals.first().copied().unwrap_or(0)
    }
}

/// `≈ e^{x/2^{s_in}}` at scale `s_out` for `x ≤ 0` (an ℓ-bit ring element); see the
/// [module documentation](self).
pub fn exp_neg(p: &ExpParams, x: u64) -> u64 {
    let m = if p.ell == 64 {
        u64::MAX
    } else {
        (1 << p.ell) - 1
    };
    let y = x.wrapping_neg() & m;
    let d = p.digit;
    let vals = (0..p.digits())
        .map(|k| {
            let v = (y >> (k as u32 * d)) & ((1 << d) - 1);
            p.table(k)[v as usize]
        })
        .collect();
    p.product_tree(vals)
}

/// The parameters of [`recip`]: ring width ℓ, scale `t` of the input and the output,
/// number of Goldschmidt iterations.
///
/// # Reciprocal of `z ∈ [1, 2]` ([`recip`])
/// `z` at scale `t` (an integer in `[2^t, 2^{t+1}]`), the result `≈ 1/z` at scale `t`.
/// The initial approximation `w_0 = a − z/2`, `a = √12 − 2` (the minimax line of slope
/// `−1/2`), is exact at scale `t + 1`: `w_0 = A − z` with `A = round(a·2^{t+1})`; its
/// residual `r_0 = 1 − z·w_0` is at most `δ ≈ 0.0718` in magnitude
/// ([`RecipParams::delta`]). Then Goldschmidt's iteration: `e_0 = 1 − round(z·w_0)`,
/// `w_{k+1} = round(w_k·(1 + e_k))`, `e_{k+1} = round(e_k²)`, `n` times
/// ([`RecipParams::iters`]: the fewest with `δ^{2^n} ≤ 2^{−t−1}`), every product
/// rounded to scale `t` half up (`(v + 2^{k−1}) >> k`, `k` the product's excess
/// scale: `t + 1` in the first iteration, whose products involve `w_0`, and `t`
/// after; `e_0²` is doubled to scale `2t + 1` to share the first iteration's shift).
///
/// **Error** (the bound [`RecipParams::max_error_ulps`], proven): write `u = 2^{−t}`,
/// `r_k = 1 − z·w_k` the true residual of `w_k` and `α_k = e_k − r_k`. A rounded
/// product adds at most `u/2`, so `|α_0| ≤ u/2`, and from `w_{k+1} = w_k(1 + e_k) +
/// β_k`, `e_{k+1} = e_k² + γ_k` (`|β_k|, |γ_k| ≤ u/2`, `z ≤ 2`): `r_{k+1} = r_k² −
/// α_k(1 − r_k) − zβ_k` and `α_{k+1} = α_k(1 + r_k + α_k) + γ_k + zβ_k`. So with `R_0 =
/// δ`, `A_0 = u/2`, `R_{k+1} = R_k² + A_k(1 + R_k) + u`, `A_{k+1} = A_k(1 + R_k +
/// A_k) + 3u/2` bounding `|r_k|` and `|α_k|`, the result's error `|1/z − w_n| =
/// |r_n|/z` is at most `R_{n−1}² + A_{n−1}(1 + R_{n−1}) + u/2` (the last `β`
/// divided by `z ≥ 1`). At `t = 14`: 2.99 ULP (measured over every input: see the
/// tests).
///
/// Every product and its rounding half stays below `2^{2t+2}`, so `ℓ ≥ 2t + 3` keeps
/// the protocol's ring products and non-negative truncations exact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecipParams {
    ell: u32,
    t: u32,
    iters: u32,
}

impl RecipParams {
    /// Checks `1 ≤ t`, `2t + 3 ≤ ℓ ≤ 64`.
    pub fn new(ell: u32, t: u32) -> Result<RecipParams, MathError> {
        if t == 0 || ell > 64 || 2 * t + 3 > ell {
            return Err(MathError(format!(
                "reciprocal at scale {t} needs 1 ≤ t and 2t + 3 ≤ ℓ = {ell} ≤ 64"
            )));
        }
        let mut p = RecipParams { ell, t, iters: 1 };
        let (delta, half_ulp) = (p.delta(), f64::from(t + 1).exp2().recip());
        while delta.powi(1 << p.iters) > half_ulp {
            p.iters += 1;
        }
        Ok(p)
    }

    /// Ring width ℓ.
    pub fn ell(&self) -> u32 {
        self.ell
    }

    /// Scale `t` of the input and the output.
    pub fn t(&self) -> u32 {
        self.t
    }

    /// Number of Goldschmidt iterations `n`.
    pub fn iters(&self) -> u32 {
        self.iters
    }

    /// `A = round((√12 − 2)·2^{t+1})`: `w_0 = A − z` at scale `t + 1`.
    pub fn initial(&self) -> u64 {
        ((12f64.sqrt() - 2.0) * f64::from(self.t + 1).exp2()).round() as u64
    }

    /// `δ = max |1 − z·w_0|` over real `z ∈ [1, 2]`: at the ends or at the vertex `z =
    /// A/2^{t+1}` of the quadratic `1 − (A/2^{t+1})·z + z²/2`.
    pub fn delta(&self) -> f64 {
        let a = self.initial() as f64 / f64::from(self.t + 1).exp2();
        let f = |z: f64| (1.0 - a * z + z * z / 2.0).abs();
        f(1.0)
            .max(f(2.0))
            .max(if (1.0..=2.0).contains(&a) { f(a) } else { 0.0 })
    }

    /// The proven bound on `|recip(z)/2^t − 2^t/z|` in ULPs of scale `t` (see the
    /// type's documentation).
    pub fn max_error_ulps(&self) -> f64 {
        let u = f64::from(self.t).exp2().recip();
        let (mut r, mut a) = (self.delta(), u / 2.0);
        for _ in 1..self.iters {
            (r, a) = (r * r + a * (1.0 + r) + u, a * (1.0 + r + a) + 1.5 * u);
        }
        (r * r + a * (1.0 + r)) / u + 0.5
    }
}

/// `(v + 2^{k−1}) >> k` of a non-negative `v`, `k ≥ 1`.
fn round_shift(v: i128, k: u32) -> i128 {
    (v + (1 << (k - 1))) >> k
}

/// `≈ 2^{2t}/z` (the reciprocal at scale `t`) of `z ∈ [2^t, 2^{t+1}]`; see
/// [`RecipParams`].
pub fn recip(p: &RecipParams, z: u64) -> u64 {
    let t = p.t;
    let one = 1i128 << t;
    let z = i128::from(z);
    let mut w = i128::from(p.initial()) - z;
    let mut e = one - round_shift(z * w, t + 1);
    let mut shift = t + 1;
    for k in 0..p.iters {
        let next = round_shift(w * (one + e), shift);
        if k + 1 < p.iters {
            e = round_shift(e * (e << (shift - t)), shift);
        }
        w = next;
        shift = t;
    }
    w as u64
}

/// Which smooth activation [`smooth`] computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Smooth {
    /// `σ(x) = 1/(1 + e^{−x})`.
    Sigmoid,
    /// `tanh(x) = 2σ(2x) − 1`.
    Tanh,
}

/// The parameters of [`smooth`]: the function, ring width ℓ, scale `s` of the input
/// and the output, the exp's digit width.
///
/// # Sigmoid and tanh ([`smooth`])
/// Internal scale `t = s + 2`. With `d = 1{x ≥ 0}` and `−|x| = x − 2·d·x`: `e =`
/// [`exp_neg`]`(−|x|)` at scale `t` (of `−2|x|` for tanh: the input read at scale `s
/// − 1`), `r =` [`recip`]`(2^t + e) ≈ 1/(1 + e^{−|x|})` (of `2|x|` for tanh). Then
/// - sigmoid: `r_s = (r + 2^{t−s−1}) >> (t−s)`, the result `r_s` if `d`, else `2^s −
///   r_s` (`σ(−y) = 1 − σ(y)`, exactly: the result is antisymmetric about ½);
/// - tanh: `v = ((2r + 2^{t−s−1}) >> (t−s)) − 2^s` (`2σ(2|x|) − 1` rounded to scale
///   `s`, a non-negative shift), the result `v` if `d`, else `−v` (exactly odd).
///
/// **Error** (proven, [`SmoothParams::max_error_ulps`]): `e` is within `E = (2K −
/// 1)/2` ULPs of scale `t` of the exponential, `1/(1 + e)` moves by at most as much
/// as `e` (its derivative is at most 1 in magnitude), the reciprocal adds at most
/// `R =` [`RecipParams::max_error_ulps`]; the final rounding adds ½ ULP of scale `s`.
/// So sigmoid is within `(E + R)·2^{s−t} + ½` ULPs of scale `s`, tanh within `2(E +
/// R)·2^{s−t} + ½`: 2.12 and 3.75 at ℓ = 32, `s = 12`, 8-bit digits (measured: the
/// tests).
///
/// Needs `s ≥ 1` and `ℓ ≥ 2s + 7` (the reciprocal's `2t + 3 ≤ ℓ`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SmoothParams {
    kind: Smooth,
    s: u32,
    exp: ExpParams,
    recip: RecipParams,
}

impl SmoothParams {
    /// The exp's digit width of the IR's `sigmoid` and `tanh` ([`SmoothParams::of_op`]):
    /// 8 bits, the fewest digits (ℓ = 32: four 256-entry tables, two levels of
    /// products).
    pub const OP_DIGIT: u32 = 8;

    /// The parameters of the IR's `sigmoid`/`tanh` at ring width ℓ and scale `s`: digit
    /// width [`SmoothParams::OP_DIGIT`].
    pub fn of_op(kind: Smooth, ell: u32, s: u32) -> Result<SmoothParams, MathError> {
        SmoothParams::new(kind, ell, s, SmoothParams::OP_DIGIT)
    }

    /// Checks `1 ≤ s`, `2s + 7 ≤ ℓ ≤ 64` and the exp's digit width (`1..=min(8, ℓ)`).
    pub fn new(kind: Smooth, ell: u32, s: u32, digit: u32) -> Result<SmoothParams, MathError> {
        if s == 0 || ell > 64 || 2 * s + 7 > ell {
            return Err(MathError(format!(
                "{kind:?} at scale {s} needs 1 ≤ s and 2s + 7 ≤ ℓ = {ell} ≤ 64"
            )));
        }
        let s_in = match kind {
            Smooth::Sigmoid => s,
            Smooth::Tanh => s - 1,
        };
        Ok(SmoothParams {
            kind,
            s,
            exp: ExpParams::new(ell, s_in, s + 2, digit)?,
            recip: RecipParams::new(ell, s + 2)?,
        })
    }

    /// The function.
    pub fn kind(&self) -> Smooth {
        self.kind
    }

    /// Ring width ℓ.
    pub fn ell(&self) -> u32 {
        self.exp.ell
    }

    /// Scale `s` of the input and the output.
    pub fn s(&self) -> u32 {
        self.s
    }

    /// Internal scale `t = s + 2`.
    pub fn t(&self) -> u32 {
        self.s + 2
    }

    /// The exponential's parameters (input scale `s`, or `s − 1` for tanh; output
    /// scale `t`).
    pub fn exp(&self) -> &ExpParams {
        &self.exp
    }

    /// The reciprocal's parameters (scale `t`).
    pub fn recip(&self) -> &RecipParams {
        &self.recip
    }

    /// The proven bound on the error in ULPs of scale `s` (see the type's
    /// documentation).
    pub fn max_error_ulps(&self) -> f64 {
        let inner = (self.exp.max_error_ulps() + self.recip.max_error_ulps()) / 4.0;
        match self.kind {
            Smooth::Sigmoid => inner + 0.5,
            Smooth::Tanh => 2.0 * inner + 0.5,
        }
    }
}

/// `≈ σ(x)` or `tanh(x)` at scale `s` of the ℓ-bit ring element `x` at scale `s`; see
/// [`SmoothParams`].
pub fn smooth(p: &SmoothParams, x: u64) -> u64 {
    let ell = p.ell();
    let m = if ell == 64 { u64::MAX } else { (1 << ell) - 1 };
    let neg = (x >> (ell - 1)) & 1 == 1;
    let neg_abs = if neg { x } else { x.wrapping_neg() & m };
    let e = exp_neg(&p.exp, neg_abs);
    let r = recip(&p.recip, (1 << p.t()) + e);
    let (k, s) = (p.t() - p.s, p.s);
    let v = match p.kind {
        Smooth::Sigmoid => (r + (1 << (k - 1))) >> k,
        Smooth::Tanh => ((2 * r + (1 << (k - 1))) >> k).wrapping_sub(1 << s),
    };
    let out = match (p.kind, neg) {
        (_, false) => v,
        (Smooth::Sigmoid, true) => (1u64 << s).wrapping_sub(v),
        (Smooth::Tanh, true) => v.wrapping_neg(),
    };
    out & m
}

/// The result of [`normalize`]: a positive value `v` (the clamped input), the position
/// `k` of its most significant bit (`2^k ≤ v < 2^{k+1}`) and `z = ⌊v·2^{t−k}⌋ ∈ [2^t,
/// 2^{t+1})`, i.e. `v·2^{−k} ∈ [1, 2)` at scale `t` (truncated).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Normalized {
    /// The clamped input: `x` if `0 < x < 2^{ℓ−1}`, else 1.
    pub v: u64,
    /// `⌊log₂ v⌋ ∈ [0, ℓ − 2]`.
    pub k: u32,
    /// `⌊v·2^{t−k}⌋` (scale `t`).
    pub z: u64,
}

/// Range reduction of the ℓ-bit ring element `x` (signed), internal scale `t ≤ ℓ − 2`.
///
/// # Range reduction ([`normalize`])
/// A non-positive `x` is first clamped to 1 (the smallest positive value), so `v ∈ [1,
/// 2^{ℓ−1})` and `k = ⌊log₂ v⌋ ≤ ℓ − 2`. With `F = ℓ − 2`, `z = ⌊v·2^{F−k} / 2^{F−t}⌋`:
/// the product `v·2^{F−k} ∈ [2^F, 2^{F+1})` is below `2^{ℓ−1}` and its multiplier
/// `2^{F−k}` an integer, so the protocol's product of `v` with the one-hot combination
/// `Σ_k h_k·2^{F−k}` and its non-negative truncation are exact; `z` is `v`'s top `t + 1`
/// bits (exact when `k ≤ t`, else at most one ULP of scale `t` below `v·2^{t−k}`).
pub fn normalize(ell: u32, t: u32, x: u64) -> Normalized {
    let v = if (x >> (ell - 1)) & 1 == 1 || x == 0 {
        1
    } else {
        x
    };
    let k = 63 - v.leading_zeros();
    let f = ell - 2;
    Normalized {
        v,
        k,
        z: (v << (f - k)) >> (f - t),
    }
}

/// The parameters of [`rsqrt`]: ring width ℓ, scale `s` of the input and the output,
/// internal scale `t`, the exponent `g` of the output factors, the Newton iterations.
///
/// # Reciprocal square root ([`rsqrt`])
/// `x` at scale `s`, the result `≈ 2^s/√(x/2^s)` at scale `s`; a non-positive `x` is
/// read as the smallest positive value `2^{−s}` (result `≈ 2^{s/2}`). [`normalize`]
/// gives `x = v`, `k` and `z ≈ v·2^{−k} ∈ [1, 2)` at scale `t = ⌊(ℓ − 6)/2⌋`, so `1/√(x/2^s)
/// = 2^{(s−k)/2}/√(v·2^{−k})`. Then
/// 1. `w_0 = A − z` at scale `t + 2` (`A = round(a·2^{t+2})`, `a =`
///    [`RsqrtParams::LINE`]: the minimax line of slope `−1/4` for `1/√z` on `[1, 2]`,
///    relative error `δ ≈ 0.0332`, [`RsqrtParams::delta`]);
/// 2. `n` Newton steps `w ← w(3 − z·w²)/2` as three rounded products (half up, to scale
///    `t`): `p = round(z·w)`, `q = round(p·w)`, `w' = round(w·(3·2^t − q)/2)` (shifts
///    `σ`, `σ`, `σ + 1` with `σ = t + 2` in the first step, `t` after);
/// 3. `y = round(w_n·G_k / 2^{t+g−s})` with `G_k = round(2^{(s−k)/2 + g})` (`g = ℓ − 2 −
///    t − ⌈s/2⌉`, so `w_n·G_k < 2^{ℓ−1}`): the power of two and, for odd `s − k`, the
///    `√2` factor, both selected by the range reduction's one-hot.
///
/// **Error** (proven, [`RsqrtParams::max_error_ulps_at`]): with `u = 2^{−t}` and `ε_i`
/// bounding the relative error of `w_i` against `1/√z` (`ε_0 = δ`), a step gives `1 −
/// 1.5ε² − 0.5ε³` relative exactly and its three roundings add at most `√2·((1 + ε)(2 +
/// ε)/4 + ½)·u` relative (`|p·w − z·w²| ≤ w·u/2 + u/2`, halved by the step, plus the
/// last rounding, times `√z ≤ √2`), so `ε_{i+1} ≤ 1.5ε_i² + 0.5ε_i³ + √2((1 + ε_i)(2 +
/// ε_i)/4 + ½)u`. The truncation of `z` moves `1/√z` by at most `u/2`, `G_k` is within
/// ½ of `2^{(s−k)/2+g}`, the final rounding adds ½: the result is within `2^{s + (s −
/// k)/2}(ε_n + u/2) + 2^{s−g−1}(1 + ε_n) + ½` ULPs of scale `s` of `2^s/√(x/2^s)`. The
/// absolute error grows with the result (`x` small, `k` small): at ℓ = 32, `s = 12` (`t
/// = 13`, `g = 11`, 2 steps) at most 2.5 ULPs for `x ≥ 1` and 64 ULPs (relative `2^{−12}`)
/// at `x = 2^{−12}`.
///
/// Needs `ℓ ≥ 10`, `ℓ ≥ s + ⌈s/2⌉ + 3`, `ℓ ≤ 64`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RsqrtParams {
    ell: u32,
    s: u32,
    t: u32,
    g: u32,
    iters: u32,
}

impl RsqrtParams {
    /// `a` of the initial approximation `w_0 = a − z/4`: minimises `max |1 − w_0·√z|`
    /// over `z ∈ [1, 2]` (found numerically; `δ ≈ 0.0332`).
    pub const LINE: f64 = 1.21678;

    /// Checks `10 ≤ ℓ ≤ 64` and `ℓ ≥ s + ⌈s/2⌉ + 3`; `t = ⌊(ℓ − 6)/2⌋`, `g = ℓ − 2 − t −
    /// ⌈s/2⌉`, Newton steps while a step at least halves the error bound.
    pub fn new(ell: u32, s: u32) -> Result<RsqrtParams, MathError> {
        if !(10..=64).contains(&ell) || ell < s + s.div_ceil(2) + 3 {
            return Err(MathError(format!(
                "rsqrt at scale {s} needs 10 ≤ ℓ = {ell} ≤ 64 and ℓ ≥ s + ⌈s/2⌉ + 3"
            )));
        }
        let t = (ell - 6) / 2;
        let mut p = RsqrtParams {
            ell,
            s,
            t,
            g: ell - 2 - t - s.div_ceil(2),
            iters: 1,
        };
        let u = f64::from(t).exp2().recip();
        // Steps while a step at least halves the bound (then the roundings dominate).
        let mut e = p.step(p.delta(), u);
        loop {
            let next = p.step(e, u);
            if next > e / 2.0 {
                break;
            }
            (e, p.iters) = (next, p.iters + 1);
        }
        Ok(p)
    }

    /// One Newton step's bound on the relative error (see the type's documentation).
    fn step(&self, e: f64, u: f64) -> f64 {
        1.5 * e * e + 0.5 * e * e * e + 2f64.sqrt() * ((1.0 + e) * (2.0 + e) / 4.0 + 0.5) * u
    }

    /// Ring width ℓ.
    pub fn ell(&self) -> u32 {
        self.ell
    }

    /// Scale `s` of the input and the output.
    pub fn s(&self) -> u32 {
        self.s
    }

    /// Internal scale `t` (of `z` and the Newton iterates).
    pub fn t(&self) -> u32 {
        self.t
    }

    /// Exponent `g` of the output factors `G_k`.
    pub fn g(&self) -> u32 {
        self.g
    }

    /// Number of Newton steps `n`.
    pub fn iters(&self) -> u32 {
        self.iters
    }

    /// `A = round(a·2^{t+2})`: `w_0 = A − z` at scale `t + 2`.
    pub fn initial(&self) -> u64 {
        (RsqrtParams::LINE * f64::from(self.t + 2).exp2()).round() as u64
    }

    /// The output factor `G_k = round(2^{(s−k)/2 + g})` for `k ∈ [0, ℓ − 2]`.
    pub fn factor(&self, k: u32) -> u64 {
        ((f64::from(self.s) - f64::from(k)) / 2.0 + f64::from(self.g))
            .exp2()
            .round() as u64
    }

    /// `δ = max |1 − w_0·√z|` over real `z ∈ [1, 2]`, `w_0 = A/2^{t+2} − z/4`: at the
    /// ends or at the critical point `z = 4A/(3·2^{t+2})`.
    pub fn delta(&self) -> f64 {
        let a = self.initial() as f64 / f64::from(self.t + 2).exp2();
        let f = |z: f64| (1.0 - (a - z / 4.0) * z.sqrt()).abs();
        let c = 4.0 * a / 3.0;
        f(1.0)
            .max(f(2.0))
            .max(if (1.0..=2.0).contains(&c) { f(c) } else { 0.0 })
    }

    /// `ε_n`: the bound on the Newton result's relative error.
    fn newton_error(&self) -> f64 {
        let u = f64::from(self.t).exp2().recip();
        (0..self.iters).fold(self.delta(), |e, _| self.step(e, u))
    }

    /// The proven bound on `|rsqrt(x) − 2^s/√(x/2^s)|` in ULPs of scale `s` for an input
    /// whose most significant bit is `k` (`2^k ≤ x < 2^{k+1}`); see the type's
    /// documentation. Decreasing in `k`.
    pub fn max_error_ulps_at(&self, k: u32) -> f64 {
        let (s, e) = (f64::from(self.s), self.newton_error());
        let u = f64::from(self.t).exp2().recip();
        (s + (s - f64::from(k)) / 2.0).exp2() * (e + u / 2.0)
            + (s - f64::from(self.g) - 1.0).exp2() * (1.0 + e)
            + 0.5
    }

    /// The bound over the whole domain (`k = 0`, `x = 2^{−s}`: the largest results).
    pub fn max_error_ulps(&self) -> f64 {
        self.max_error_ulps_at(0)
    }
}

/// `≈ 2^s/√(x/2^s)` (scale `s`) of the ℓ-bit ring element `x` at scale `s`; see
/// [`RsqrtParams`].
pub fn rsqrt(p: &RsqrtParams, x: u64) -> u64 {
    let t = p.t;
    let n = normalize(p.ell, t, x);
    let z = i128::from(n.z);
    let mut w = i128::from(p.initial()) - z;
    let mut sigma = t + 2;
    for _ in 0..p.iters {
        let q = round_shift(round_shift(z * w, sigma) * w, sigma);
        w = round_shift(w * ((3 << t) - q), sigma + 1);
        sigma = t;
    }
    round_shift(w * i128::from(p.factor(n.k)), t + p.g - p.s) as u64
}

/// The parameters of [`recip_range`]: ring width ℓ, input scale `s`, output scale
/// `s_out`, the domain's exponent `K` (`x ∈ [1, 2^{K+1})`), and the reciprocal's
/// parameters at the internal scale `t`.
///
/// # Range-reduced reciprocal ([`recip_range`])
/// [`normalize`] gives `k = ⌊log₂ v⌋` and `z ≈ v·2^{−k} ∈ [1, 2)` at scale `t`, [`recip`]
/// `w ≈ 2^t/z`, and `1/(v/2^s) = 2^{s−k}/(v·2^{−k})`, so `y = round(w·G_k / 2^{t+K−s_out})`
/// with the exact power of two `G_k = 2^{s−k+K}` for `s ≤ k ≤ s + K` (selected by the
/// range reduction's one-hot, local). Outside the domain: `G_k = 2^K` for `k < s` (`x <
/// 1` gives the reciprocal of its mantissa `v·2^{−k}`) and `G_k = 0` for `k > s + K`
/// (the result 0); a non-positive `x` reads as `2^{−s}`.
///
/// **Error** (proven, [`RecipRangeParams::max_error_ulps`]): `w` is within `R =`
/// [`RecipParams::max_error_ulps`] ULPs of scale `t` of `2^t/z`, the truncation of `z`
/// (by less than `2^{−t}`, `z ≥ 1`) moves `1/z` by less than one more, and `G_k` scales
/// by `2^{s−k} ≤ 1` exactly: `y` is within `(R + 1)·2^{s_out−t} + ½` ULPs of scale
/// `s_out` of `2^{s_out}/(x/2^s)` on the domain.
///
/// Needs `t = min(⌊(ℓ − 3)/2⌋, ℓ − 3 − K) ≥ 1` and `1 ≤ t + K − s_out`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecipRangeParams {
    s: u32,
    s_out: u32,
    k_max: u32,
    recip: RecipParams,
}

impl RecipRangeParams {
    /// Checks the conditions above (`ℓ ≤ 64`).
    pub fn new(ell: u32, s: u32, s_out: u32, k_max: u32) -> Result<RecipRangeParams, MathError> {
        let t = if (8..=64).contains(&ell) && k_max + 4 <= ell {
            ((ell - 3) / 2).min(ell - 3 - k_max)
        } else {
            0
        };
        if t == 0 || t + k_max <= s_out || s + k_max + 2 > ell {
            return Err(MathError(format!(
                "range-reduced reciprocal: ℓ = {ell}, s = {s}, s_out = {s_out}, K = {k_max} need \
                 t = min(⌊(ℓ − 3)/2⌋, ℓ − 3 − K) ≥ 1, s_out < t + K, s + K + 2 ≤ ℓ ≤ 64"
            )));
        }
        Ok(RecipRangeParams {
            s,
            s_out,
            k_max,
            recip: RecipParams::new(ell, t)?,
        })
    }

    /// Ring width ℓ.
    pub fn ell(&self) -> u32 {
        self.recip.ell
    }

    /// Input scale `s`.
    pub fn s(&self) -> u32 {
        self.s
    }

    /// Output scale `s_out`.
    pub fn s_out(&self) -> u32 {
        self.s_out
    }

    /// The domain's exponent `K`.
    pub fn k_max(&self) -> u32 {
        self.k_max
    }

    /// The reciprocal's parameters (internal scale `t`).
    pub fn recip(&self) -> &RecipParams {
        &self.recip
    }

    /// The output factor `G_k` (see the type's documentation).
    pub fn factor(&self, k: u32) -> u64 {
        match k.checked_sub(self.s) {
            None => 1 << self.k_max,
            Some(e) if e <= self.k_max => 1 << (self.k_max - e),
            Some(_) => 0,
        }
    }

    /// The final rounding's shift `t + K − s_out`.
    pub fn shift(&self) -> u32 {
        self.recip.t + self.k_max - self.s_out
    }

    /// The proven bound in ULPs of scale `s_out` on the domain `[1, 2^{K+1})`.
    pub fn max_error_ulps(&self) -> f64 {
        (self.recip.max_error_ulps() + 1.0)
            * (f64::from(self.s_out) - f64::from(self.recip.t)).exp2()
            + 0.5
    }
}

/// `≈ 2^{s_out}·2^s/x` (scale `s_out`) of the ℓ-bit ring element `x` at scale `s`; see
/// [`RecipRangeParams`].
pub fn recip_range(p: &RecipRangeParams, x: u64) -> u64 {
    let n = normalize(p.ell(), p.recip.t, x);
    let w = recip(&p.recip, n.z);
    round_shift(i128::from(w) * i128::from(p.factor(n.k)), p.shift()) as u64
}

/// The parameters of [`softmax`]: ring width ℓ, scale `s` of the input and the output,
/// the length `n` of the axis, the exp's and the reciprocal's parameters.
///
/// # Softmax along an axis ([`softmax`])
/// A line `x_0 … x_{n−1}` at scale `s` (signed ℓ-bit ring elements), the result `y_i ≈
/// 2^s·e^{x_i}/Σ_j e^{x_j}` at scale `s`. With the internal scale `t = ⌊(ℓ − 2)/2⌋`
/// (the exp's `2t + 2 ≤ ℓ`), the reciprocal's output scale `s_r = min(ℓ − 3 − t, t_r + K
/// − 1)` (`K = ⌊log₂ n⌋`, `t_r` the reciprocal's internal scale):
/// 1. `m = max_j x_j` (exact signed comparisons), `d_i = x_i − m ≤ 0` (mod `2^ℓ`: exact
///    when the line's spread `max − min` is below `2^{ℓ−1}`, e.g. every `|x_i| <
///    2^{ℓ−2}`);
/// 2. `e_i =` [`exp_neg`]`(d_i)` at scale `t` (input scale `s`, 8-bit digits): `e_i ≤
///    2^t`, and `e_i = 2^t` exactly where `d_i = 0`;
/// 3. `S = Σ_i e_i ∈ [2^t, n·2^t]` (no wrap: `t + K + 2 ≤ ℓ`), `r =`
///    [`recip_range`]`(S)` at scale `s_r` (input scale `t`, domain `[1, 2^{K+1}) ∋ S/2^t`);
/// 4. `y_i = (e_i·r + 2^{σ−1}) >> σ`, `σ = t + s_r − s` (`e_i·r < 2^{t + s_r + 1} ≤
///    2^{ℓ−2}`: the protocol's product and truncation are exact).
///
/// **Error** (proven, [`SoftmaxParams::max_error_ulps`]): write `a_i = e^{d_i/2^s}`, `A =
/// Σ a_j ≥ 1`, `ê_i = e_i/2^t`, `Ŝ = Σ ê_j ≥ 1` (the maximum's term is exactly 1 in
/// both), `|ê_i − a_i| ≤ E·2^{−t}` (`E = (2K_e − 1)/2`, [`ExpParams::max_error_ulps`],
/// `K_e = ⌈ℓ/8⌉` digits), so `|Ŝ − A| ≤ (n − 1)·E·2^{−t}`; `r̂ = r/2^{s_r}` is within
/// `R·2^{−s_r}` of `1/Ŝ` (`R =` [`RecipRangeParams::max_error_ulps`]). Then `|ê_i·r̂ −
/// a_i/A| ≤ ê_i·|r̂ − 1/Ŝ| + |ê_i − a_i|/Ŝ + (a_i/A)·|A − Ŝ|/Ŝ ≤ R·2^{−s_r} + n·E·2^{−t}`
/// (`ê_i ≤ 1`, `a_i ≤ A`), and the final rounding adds ½: `y_i` is within `2^{s−s_r}·R +
/// n·E·2^{s−t} + ½` ULPs of scale `s` of `2^s·softmax(x)_i`. The bound grows with `n`
/// (every exponential's error adds to the denominator's); measured errors are far below
/// it (`docs/functions.md`).
///
/// Needs `1 ≤ n`, `ℓ ≤ 64`, `s + 1 ≤ t` (`ℓ ≥ 2s + 4`) and the reciprocal's conditions
/// ([`RecipRangeParams::new`]; `t + K + 2 ≤ ℓ`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SoftmaxParams {
    s: u32,
    n: usize,
    exp: ExpParams,
    recip: RecipRangeParams,
}

impl SoftmaxParams {
    /// The exp's digit width: 8 bits, as [`SmoothParams::OP_DIGIT`].
    pub const DIGIT: u32 = SmoothParams::OP_DIGIT;

    /// The parameters of softmax over lines of `n` elements at ring width ℓ and scale
    /// `s`; checks the conditions above.
    pub fn new(ell: u32, s: u32, n: usize) -> Result<SoftmaxParams, MathError> {
        if n == 0 || !(8..=64).contains(&ell) || 2 * s + 4 > ell {
            return Err(MathError(format!(
                "softmax at scale {s} over {n} elements needs 1 ≤ n and 2s + 4 ≤ ℓ = {ell}, 8 ≤ ℓ ≤ 64"
            )));
        }
        let t = (ell - 2) / 2;
        let k = n.ilog2();
        let t_r = ((ell - 3) / 2).min((ell - 3).saturating_sub(k));
        let s_r = (ell - 3 - t).min((t_r + k).saturating_sub(1));
        Ok(SoftmaxParams {
            s,
            n,
            exp: ExpParams::new(ell, s, t, SoftmaxParams::DIGIT)?,
            recip: RecipRangeParams::new(ell, t, s_r, k)?,
        })
    }

    /// Ring width ℓ.
    pub fn ell(&self) -> u32 {
        self.exp.ell
    }

    /// Scale `s` of the input and the output.
    pub fn s(&self) -> u32 {
        self.s
    }

    /// The length `n` of a line.
    pub fn line_len(&self) -> usize {
        self.n
    }

    /// Internal scale `t` of the exponentials and their sum.
    pub fn t(&self) -> u32 {
        self.exp.s_out
    }

    /// The exponential's parameters (input scale `s`, output scale `t`).
    pub fn exp(&self) -> &ExpParams {
        &self.exp
    }

    /// The reciprocal's parameters (input scale `t`, output scale `s_r`, `K = ⌊log₂ n⌋`).
    pub fn recip(&self) -> &RecipRangeParams {
        &self.recip
    }

    /// The final rounding's shift `σ = t + s_r − s`.
    pub fn shift(&self) -> u32 {
        self.t() + self.recip.s_out() - self.s
    }

    /// The proven bound on `|y_i − 2^s·softmax(x)_i|` in ULPs of scale `s` (see the
    /// type's documentation).
    pub fn max_error_ulps(&self) -> f64 {
        let s = f64::from(self.s);
        (s - f64::from(self.recip.s_out())).exp2() * self.recip.max_error_ulps()
            + self.n as f64 * self.exp.max_error_ulps() * (s - f64::from(self.t())).exp2()
            + 0.5
    }
}

/// `≈ 2^s·softmax(x)` (scale `s`) of one line `x` of [`SoftmaxParams::line_len`] ℓ-bit ring
/// elements at scale `s`; see [`SoftmaxParams`]. `None` if `x` has another length.
pub fn softmax(p: &SoftmaxParams, x: &[u64]) -> Option<Vec<u64>> {
    if x.len() != p.n {
        return None;
    }
    let ell = p.ell();
    let m = if ell == 64 { u64::MAX } else { (1 << ell) - 1 };
    let signed = |v: u64| ((v << (64 - ell)) as i64) >> (64 - ell);
    let max = x.iter().copied().max_by_key(|&v| signed(v))?;
    let e: Vec<u64> = x
        .iter()
        .map(|&v| exp_neg(&p.exp, v.wrapping_sub(max) & m))
        .collect();
    let sum = e.iter().fold(0u64, |a, &v| a.wrapping_add(v)) & m;
    let r = recip_range(&p.recip, sum);
    let sigma = p.shift();
    Some(
        e.iter()
            .map(|&v| round_shift(i128::from(v) * i128::from(r), sigma) as u64 & m)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Largest error in ULPs of the output scale of `exp_neg` over `xs` (signed).
    fn max_ulps(p: &ExpParams, xs: impl Iterator<Item = i64>, s_in: u32) -> f64 {
        xs.map(|x| {
            let got = exp_neg(p, x as u64 & mask(p.ell)) as f64;
            let want = (x as f64 / f64::from(s_in).exp2()).exp() * f64::from(p.s_out).exp2();
            (got - want).abs()
        })
        .fold(0.0, f64::max)
    }

    fn mask(ell: u32) -> u64 {
        if ell == 64 { u64::MAX } else { (1 << ell) - 1 }
    }

    #[test]
    fn exhaustive_at_twelve_bits() {
        for (s_in, s_out, d) in [(6u32, 5u32, 4u32), (8, 5, 3), (4, 4, 8), (0, 5, 2)] {
            let p = ExpParams::new(12, s_in, s_out, d).unwrap();
            let err = max_ulps(&p, -(1 << 11)..=0, s_in);
            eprintln!(
                "ℓ={} s_in={s_in} s_out={} d={}: max error {err} ULP (bound {})",
                p.ell,
                p.s_out,
                p.digit,
                p.max_error_ulps()
            );
            assert!(err <= p.max_error_ulps(), "{p:?}: {err}");
            // Positive inputs (outside the domain) give 0.
            assert!((1..1 << 11).all(|x| exp_neg(&p, x) == 0), "{p:?}");
        }
        assert_eq!(exp_neg(&ExpParams::new(12, 6, 5, 4).unwrap(), 0), 32);
    }

    /// The indicator digits' identity (module documentation): the tree of the wide
    /// digits times the AND of the indicator bits is `exp_neg`, on every input at ℓ =
    /// 12 and 14 and at the edges and random inputs at ℓ = 32, 37.
    #[test]
    fn indicator_digits_factor_out() {
        let split = |p: &ExpParams, x: u64| {
            let y = x.wrapping_neg() & mask(p.ell);
            let d = p.digit;
            let v = |k: usize| ((y >> (k as u32 * d)) & ((1 << d) - 1)) as usize;
            let j = p.wide_digits();
            let tree = p.product_tree((0..j).map(|k| p.table(k)[v(k)]).collect());
            let on = (j..p.digits()).all(|k| p.indicator(k, v(k)));
            if on { tree } else { 0 }
        };
        for (ell, s_in, s_out, d, wide) in [
            (12u32, 6u32, 5u32, 4u32, 3usize),
            (12, 8, 5, 3, 4),
            (12, 4, 4, 8, 1),
            (12, 0, 5, 2, 2),
            (14, 6, 6, 4, 3),
            (14, 2, 6, 3, 2),
            (32, 12, 14, 8, 2),
            (32, 11, 14, 8, 2),
            (32, 12, 12, 8, 2),
            (32, 20, 14, 8, 3),
            (37, 16, 16, 8, 3),
            (37, 12, 17, 6, 3),
        ] {
            let p = ExpParams::new(ell, s_in, s_out, d).unwrap();
            assert_eq!(p.wide_digits(), wide, "{p:?}");
            for k in wide..p.digits() {
                assert!(
                    p.table(k).iter().all(|&v| v == 0 || v == 1 << s_out),
                    "{p:?} {k}"
                );
            }
            let xs: Vec<u64> = if ell <= 14 {
                (0..1u64 << ell).collect()
            } else {
                let mut g = u64::from(ell * 7 + s_in);
                (0..20_000)
                    .map(|i| {
                        g = g.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                        let r = 1u64 << (i % (ell as u64));
                        (g >> 11) % r
                    })
                    .flat_map(|v| [v.wrapping_neg() & mask(ell), v & mask(ell)])
                    .chain([0, mask(ell), 1 << (ell - 1)])
                    .collect()
            };
            for &x in &xs {
                assert_eq!(split(&p, x), exp_neg(&p, x), "{p:?} x = {x}");
            }
        }
    }

    #[test]
    fn random_at_32_and_37_bits() {
        let mut g = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            g ^= g << 13;
            g ^= g >> 7;
            g ^= g << 17;
            g
        };
        for (ell, s_in, s_out, d) in [
            (32u32, 12u32, 14u32, 8u32),
            (37, 16, 16, 8),
            (37, 12, 17, 6),
        ] {
            let p = ExpParams::new(ell, s_in, s_out, d).unwrap();
            // Mostly in the range where e^x is not negligible, and the edges.
            let range = 20i64 << s_in;
            let xs: Vec<i64> = (0..200_000)
                .map(|_| -((next() % range as u64) as i64))
                .chain([0, -1, -(1i64 << (ell - 1)), -(1i64 << (ell - 1)) + 1])
                .collect();
            let err = max_ulps(&p, xs.into_iter(), s_in);
            eprintln!(
                "ℓ={} s_in={s_in} s_out={} d={}: max error {err} ULP (bound {})",
                p.ell,
                p.s_out,
                p.digit,
                p.max_error_ulps()
            );
            assert!(err <= p.max_error_ulps(), "{p:?}: {err}");
        }
    }

    /// Every input `z ∈ [2^t, 2^{t+1}]` of the reciprocal against `2^{2t}/z`.
    #[test]
    fn recip_exhaustive() {
        for t in [1u32, 3, 4, 8, 12, 14, 16, 18] {
            let p = RecipParams::new(2 * t + 3, t).unwrap();
            let one = f64::from(t).exp2();
            let err = (1u64 << t..=2 << t)
                .map(|z| (recip(&p, z) as f64 - one * one / z as f64).abs())
                .fold(0.0, f64::max);
            eprintln!(
                "recip t={t}: {} iterations, max error {err:.3} ULP (bound {:.3})",
                p.iters(),
                p.max_error_ulps()
            );
            assert!(err <= p.max_error_ulps(), "{p:?}: {err}");
        }
        assert!(RecipParams::new(16, 7).is_err());
        assert!(RecipParams::new(16, 0).is_err());
    }

    /// Largest error of [`smooth`] in ULPs of scale `s` over `xs` (signed).
    fn smooth_ulps(p: &SmoothParams, xs: impl Iterator<Item = i64>) -> f64 {
        let (ell, one) = (p.ell(), f64::from(p.s()).exp2());
        xs.map(|x| {
            let got = smooth(p, x as u64 & mask(ell));
            let got = ((got << (64 - ell)) as i64 >> (64 - ell)) as f64;
            let v = x as f64 / one;
            let want = match p.kind() {
                Smooth::Sigmoid => 1.0 / (1.0 + (-v).exp()),
                Smooth::Tanh => v.tanh(),
            };
            (got - want * one).abs()
        })
        .fold(0.0, f64::max)
    }

    fn report_smooth(p: &SmoothParams, err: f64) {
        eprintln!(
            "{:?} ℓ={} s={} d={}: max error {err:.3} ULP (bound {:.3})",
            p.kind(),
            p.ell(),
            p.s(),
            p.exp().digit(),
            p.max_error_ulps()
        );
        assert!(err <= p.max_error_ulps(), "{p:?}: {err}");
    }

    #[test]
    fn smooth_exhaustive_at_small_widths() {
        for kind in [Smooth::Sigmoid, Smooth::Tanh] {
            for (ell, s, d) in [(9u32, 1u32, 3u32), (14, 3, 4), (16, 4, 5), (18, 5, 8)] {
                let p = SmoothParams::new(kind, ell, s, d).unwrap();
                let half = 1i64 << (ell - 1);
                report_smooth(&p, smooth_ulps(&p, -half..half));
                // Sigmoid is in [0, 2^s] (`analysis::nonneg` relies on it).
                if kind == Smooth::Sigmoid {
                    let all = (0..1u64 << ell).map(|x| smooth(&p, x));
                    assert!(all.into_iter().all(|y| y <= 1 << s), "{p:?}");
                }
            }
        }
    }

    #[test]
    fn smooth_random_at_32_and_37_bits() {
        let mut g = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            g ^= g << 13;
            g ^= g >> 7;
            g ^= g << 17;
            g
        };
        for kind in [Smooth::Sigmoid, Smooth::Tanh] {
            for (ell, s, d) in [(32u32, 12u32, 8u32), (32, 12, 4), (37, 15, 8), (37, 12, 6)] {
                let p = SmoothParams::new(kind, ell, s, d).unwrap();
                let half = 1i64 << (ell - 1);
                let range = 24u64 << s;
                let xs: Vec<i64> = (0..300_000)
                    .map(|_| (next() % (2 * range)) as i64 - range as i64)
                    .chain([0, 1, -1, half - 1, -half, -half + 1])
                    .collect();
                report_smooth(&p, smooth_ulps(&p, xs.into_iter()));
            }
        }
        // Exactly antisymmetric about ½ (sigmoid) and odd (tanh).
        let sig = SmoothParams::new(Smooth::Sigmoid, 32, 12, 8).unwrap();
        let tanh = SmoothParams::new(Smooth::Tanh, 32, 12, 8).unwrap();
        for x in [1u64, 77, 4096, 123_456] {
            let neg = x.wrapping_neg() & mask(32);
            assert_eq!(smooth(&sig, x) + smooth(&sig, neg), 1 << 12);
            assert_eq!(
                smooth(&tanh, x).wrapping_add(smooth(&tanh, neg)) & mask(32),
                0
            );
        }
        assert_eq!(smooth(&sig, 0), 1 << 11);
        assert_eq!(smooth(&tanh, 0), 0);
        assert!(SmoothParams::new(Smooth::Tanh, 32, 13, 8).is_err());
        assert!(SmoothParams::new(Smooth::Sigmoid, 32, 0, 8).is_err());
    }

    /// Largest error of [`rsqrt`] over the positive `xs`, each against its own bound
    /// ([`RsqrtParams::max_error_ulps_at`]); returns the largest errors for `x < 1` and
    /// `x ≥ 1`.
    fn rsqrt_ulps(p: &RsqrtParams, xs: impl Iterator<Item = u64>) -> (f64, f64) {
        let s = f64::from(p.s());
        let (mut small, mut large) = (0f64, 0f64);
        for x in xs {
            let got = rsqrt(p, x) as f64;
            let want = (1.5 * s).exp2() / (x as f64).sqrt();
            let err = (got - want).abs();
            let k = 63 - x.leading_zeros();
            assert!(err <= p.max_error_ulps_at(k), "{p:?} x={x}: {err}");
            if k < p.s() {
                small = small.max(err);
            } else {
                large = large.max(err);
            }
        }
        (small, large)
    }

    fn report_rsqrt(p: &RsqrtParams, (small, large): (f64, f64)) {
        eprintln!(
            "rsqrt ℓ={} s={} t={} g={} n={}: max error {small:.3} ULP for x < 1 (bound {:.3}), {large:.3} for x ≥ 1 (bound {:.3})",
            p.ell(),
            p.s(),
            p.t(),
            p.g(),
            p.iters(),
            p.max_error_ulps(),
            p.max_error_ulps_at(p.s())
        );
    }

    #[test]
    fn rsqrt_exhaustive_at_small_widths() {
        for (ell, s) in [(10u32, 4u32), (12, 4), (14, 6), (16, 8), (18, 6), (20, 10)] {
            let p = RsqrtParams::new(ell, s).unwrap();
            report_rsqrt(&p, rsqrt_ulps(&p, 1..1u64 << (ell - 1)));
            // Non-positive inputs read as the smallest positive value.
            let at_one = rsqrt(&p, 1);
            let m = mask(ell);
            for x in [0, m, 1 << (ell - 1), (1 << (ell - 1)) + 1] {
                assert_eq!(rsqrt(&p, x), at_one, "{p:?} x={x}");
            }
        }
    }

    #[test]
    fn rsqrt_random_at_32_and_37_bits() {
        let mut g = 0x6a09_e667_f3bc_c908u64;
        let mut next = move || {
            g ^= g << 13;
            g ^= g >> 7;
            g ^= g << 17;
            g
        };
        for (ell, s) in [(32u32, 12u32), (32, 16), (37, 12), (37, 16)] {
            let p = RsqrtParams::new(ell, s).unwrap();
            let top = 1u64 << (ell - 1);
            // Log-uniform over the whole positive range, and the edges.
            let xs: Vec<u64> = (0..300_000)
                .map(|_| {
                    let r = next();
                    let k = (r % u64::from(ell - 1)) as u32;
                    (1 << k) | ((r >> 8) & ((1 << k) - 1))
                })
                .chain([1, 2, 3, (1 << s) - 1, 1 << s, (1 << s) + 1, top - 1])
                .collect();
            report_rsqrt(&p, rsqrt_ulps(&p, xs.into_iter()));
        }
        let p = RsqrtParams::new(32, 12).unwrap();
        assert!(
            p.max_error_ulps_at(12) <= 2.5,
            "{}",
            p.max_error_ulps_at(12)
        );
        assert_eq!(rsqrt(&p, 1 << 12), 1 << 12);
        assert_eq!(rsqrt(&p, 4 << 12), 1 << 11);
        assert!(RsqrtParams::new(9, 2).is_err());
        assert!(RsqrtParams::new(32, 20).is_err());
        assert!(RsqrtParams::new(65, 12).is_err());
    }

    /// The range reduction: `2^k ≤ v < 2^{k+1}` and `z` is `v`'s top `t + 1` bits.
    #[test]
    fn normalize_exhaustive() {
        for (ell, t) in [(8u32, 2u32), (12, 5), (12, 10)] {
            for x in 0..1u64 << ell {
                let n = normalize(ell, t, x);
                let positive = x != 0 && x < 1 << (ell - 1);
                assert_eq!(n.v, if positive { x } else { 1 });
                assert!(1 << n.k <= n.v && n.v < 2 << n.k);
                let exact = (n.v as f64) * f64::from(t).exp2() / f64::from(n.k).exp2();
                assert_eq!(n.z, exact.floor() as u64, "ℓ={ell} t={t} x={x}");
            }
        }
    }

    /// The range-reduced reciprocal against `2^{s_out}/x` over its domain `[1, 2^{K+1})`:
    /// every input at small widths, random ones at ℓ = 32 and 37.
    #[test]
    fn recip_range_error() {
        let check = |p: &RecipRangeParams, xs: &mut dyn Iterator<Item = u64>| {
            let (s, so) = (f64::from(p.s()), f64::from(p.s_out()));
            let err = xs
                .map(|x| {
                    let want = (s + so).exp2() / x as f64;
                    (recip_range(p, x) as f64 - want).abs()
                })
                .fold(0.0, f64::max);
            eprintln!(
                "recip_range ℓ={} s={} s_out={} K={} t={}: max error {err:.3} ULP (bound {:.3})",
                p.ell(),
                p.s(),
                p.s_out(),
                p.k_max(),
                p.recip().t(),
                p.max_error_ulps()
            );
            assert!(err <= p.max_error_ulps(), "{p:?}: {err}");
        };
        for (ell, s, so, k) in [(12u32, 3u32, 4u32, 5u32), (16, 4, 6, 8), (20, 6, 8, 10)] {
            let p = RecipRangeParams::new(ell, s, so, k).unwrap();
            check(&p, &mut ((1u64 << s)..(2 << (s + k))));
            // Outside: x > 2^{K+1} gives 0; x ≤ 0 reads as 2^{−s}, x < 1 as its mantissa.
            assert_eq!(recip_range(&p, 2 << (s + k)), 0);
            assert_eq!(recip_range(&p, 0), recip_range(&p, 1 << s));
        }
        let mut g = 0xbb67_ae85_84ca_a73bu64;
        let mut next = move || {
            g ^= g << 13;
            g ^= g >> 7;
            g ^= g << 17;
            g
        };
        for (ell, s, so, k) in [(32u32, 12u32, 14u32, 10u32), (37, 16, 16, 12)] {
            let p = RecipRangeParams::new(ell, s, so, k).unwrap();
            let mut xs = (0..300_000)
                .map(|_| {
                    let r = next();
                    let e = s + (r % u64::from(k + 1)) as u32;
                    (1 << e) | ((r >> 8) & ((1 << e) - 1))
                })
                .chain([1 << s, (2 << (s + k)) - 1]);
            check(&p, &mut xs);
        }
        assert!(RecipRangeParams::new(32, 12, 40, 10).is_err());
    }

    /// Largest error of [`softmax`] in ULPs of scale `s` over the lines `xs` (signed
    /// values with `|x| < 2^{ℓ−2}`), each line checked against the proven bound.
    fn softmax_ulps(p: &SoftmaxParams, lines: impl Iterator<Item = Vec<i64>>) -> f64 {
        let (ell, s) = (p.ell(), f64::from(p.s()));
        let mut worst = 0f64;
        for line in lines {
            let words: Vec<u64> = line.iter().map(|&v| v as u64 & mask(ell)).collect();
            let y = softmax(p, &words).unwrap();
            let max = line.iter().copied().max().unwrap();
            let a: Vec<f64> = line
                .iter()
                .map(|&v| ((v - max) as f64 / s.exp2()).exp())
                .collect();
            let total: f64 = a.iter().sum();
            for (&yi, ai) in y.iter().zip(&a) {
                let err = (yi as f64 - ai / total * s.exp2()).abs();
                assert!(err <= p.max_error_ulps(), "{p:?} {line:?}: {err}");
                worst = worst.max(err);
            }
        }
        eprintln!(
            "softmax ℓ={} s={} n={} t={} s_r={}: max error {worst:.3} ULP (bound {:.3})",
            ell,
            p.s(),
            p.line_len(),
            p.t(),
            p.recip().s_out(),
            p.max_error_ulps()
        );
        worst
    }

    /// Every line of `n` inputs with `|x| < 2^{ℓ−2}` at small widths.
    #[test]
    fn softmax_exhaustive_at_small_widths() {
        for (ell, s, n) in [
            (8u32, 2u32, 1usize),
            (8, 2, 2),
            (8, 2, 3),
            (10, 3, 2),
            (12, 4, 2),
        ] {
            let p = SoftmaxParams::new(ell, s, n).unwrap();
            let q = 1i64 << (ell - 2);
            let lines = (0..(2 * q).pow(n as u32)).map(|c| {
                (0..n as u32)
                    .map(|j| (c / (2 * q).pow(j)) % (2 * q) - q)
                    .collect::<Vec<i64>>()
            });
            softmax_ulps(&p, lines);
        }
    }

    /// Random lines at ℓ = 32 and 37 (spreads from zero to the whole half range,
    /// all-equal lines, a single line element), and the exact cases.
    #[test]
    fn softmax_random_at_32_and_37_bits() {
        let mut g = 0x3c6e_f372_fe94_f82bu64;
        let mut next = move || {
            g ^= g << 13;
            g ^= g >> 7;
            g ^= g << 17;
            g
        };
        for (ell, s) in [(32u32, 12u32), (32, 8), (37, 12), (37, 16)] {
            for n in [1usize, 2, 5, 17, 64, 197] {
                let p = SoftmaxParams::new(ell, s, n).unwrap();
                let lines: Vec<Vec<i64>> = (0..20_000 / n + 50)
                    .map(|i| {
                        // Spread 2^w: w from 0 (all equal) to ℓ − 3.
                        let w = (next() % u64::from(ell - 2)) as u32;
                        let base = (next() >> 40) as i64 - (1 << 23);
                        (0..n)
                            .map(|_| match i % 7 {
                                0 => base,
                                _ => base + ((next() >> 1) % (1u64 << w)) as i64 - (1 << w) / 2,
                            })
                            .collect()
                    })
                    .collect();
                softmax_ulps(&p, lines.into_iter());
            }
        }
        // One element: exactly 1; two equal ones: exactly ½.
        let p = SoftmaxParams::new(32, 12, 1).unwrap();
        assert_eq!(softmax(&p, &[12345]), Some(vec![1 << 12]));
        let p = SoftmaxParams::new(32, 12, 2).unwrap();
        assert_eq!(softmax(&p, &[7, 7]), Some(vec![1 << 11, 1 << 11]));
        assert_eq!(softmax(&p, &[7]), None);
        assert!(SoftmaxParams::new(32, 15, 4).is_err());
        assert!(SoftmaxParams::new(32, 12, 0).is_err());
        assert!(SoftmaxParams::new(32, 12, 1 << 20).is_err());
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(ExpParams::new(12, 6, 6, 4).is_err());
        assert!(ExpParams::new(12, 6, 0, 4).is_err());
        assert!(ExpParams::new(32, 12, 14, 9).is_err());
        assert!(ExpParams::new(65, 12, 14, 8).is_err());
        assert!(ExpParams::new(4, 0, 1, 8).is_err());
    }
}
