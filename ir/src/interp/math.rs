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

use thiserror::Error;

/// Parameters of a math function out of range.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("invalid math-function parameters: {0}")]
pub struct MathError(String);

/// The parameters of [`exp_neg`]: ring width ℓ, input and output scales, digit width.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpParams {
    ell: u32,
    s_in: u32,
    s_out: u32,
    digit: u32,
    /// The digits' tables ([`ExpParams::table`]).
    tables: Vec<Vec<u64>>,
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
        };
        p.tables = (0..p.digits()).map(|k| p.make_table(k)).collect();
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

    #[test]
    fn rejects_bad_parameters() {
        assert!(ExpParams::new(12, 6, 6, 4).is_err());
        assert!(ExpParams::new(12, 6, 0, 4).is_err());
        assert!(ExpParams::new(32, 12, 14, 9).is_err());
        assert!(ExpParams::new(65, 12, 14, 8).is_err());
        assert!(ExpParams::new(4, 0, 1, 8).is_err());
    }
}
