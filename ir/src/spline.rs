//! Piecewise cubics over `Z_{2^ℓ}` (after BOLT, Pang et al., S&P 2024, and BumbleBee,
//! Lu et al., NDSS 2025): `erf` and both GELUs as a few public comparisons and one
//! cubic per segment with public coefficients on shared powers — the definition the
//! interpreter runs and the runtime's `proto::spline` equals bit for bit.
//!
//! # The functions
//! Each is a function `h` of `a = |x|` on `[0, 4)` ([`SplineFn`]): `erf(x) = sign(x)·h(a)`
//! with `h = erf`, and `gelu(x) = relu(x) − h(a)` with `h(a) = a·(1 − Φ(a))` (exact
//! GELU, `Φ` the normal CDF) or `a·½(1 − tanh(√(2/π)(a + 0.044715a³)))` (the tanh
//! approximation): `x·Φ(x) − relu(x)` is even. `h` is a cubic in `u = a/4` on each
//! segment between public knots and its limit (1, 0) beyond the last one. The knots and
//! coefficients are the table of `scripts/fit-spline.py` (a minimax fit per segment;
//! knots balancing the segments' errors).
//!
//! # Fixed point ([`SplineParams`], [`spline`])
//! For `x` at scale `s` in `Z_{2^ℓ}`: `d = 1{x ≥ 0}`, `a = d ? x : −x` (wrapping;
//! `a = −2^{ℓ−1}` for the most negative `x`). The powers at scale `f = ⌊(ℓ − 2)/2⌋`:
//! `U₁ = a·2^{f−s−2}`, `U₂ = ⌊(U₁² + 2^{f−1})/2^f⌋`, `U₃ = ⌊(U₂·U₁ + 2^{f−1})/2^f⌋`
//! (rounded, below `2^f` for `0 ≤ a < 4·2^s`). With the knots `T₁ < … < T_k` at scale
//! `s` (`T_k` the last), `J = #{j : signed(a − T_j) ≥ 0}` picks the segment; `Y =
//! C_{J,0} + C_{J,1}U₁ + C_{J,2}U₂ + C_{J,3}U₃` at scale `A = ℓ − 3 + e` (`e` = 0 for
//! erf, 2 for the GELUs, whose `h` is below 0.17; `C_{J,0}` at scale `A`, the others at
//! `A − f`), and `Y` the limit at scale `A` for `J = k`. With `O = 2^{ℓ−3}` and `σ = A
//! − s`: `h = ⌊(Y + O + 2^{σ−1})/2^σ⌋ − O/2^σ` (the value in brackets is in `[0,
//! 2^{ℓ−1})`). The result is `d ? h : −h` (erf) or `d·x − h` (GELU), mod `2^ℓ`.
//!
//! Needs `1 ≤ s`, `e ≤ s` and `ℓ ≥ 2s + 6` (`f ≥ s + 2`: the powers' products stay below
//! `2^{ℓ−2}`). Error on every fixed-point input (measured exhaustively, the tests):
//! [`SplineParams::MEASURED_ULPS`].

use crate::math::MathError;
use std::fmt;

/// The functions [`spline`] computes, each a piecewise cubic in `|x|`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SplineFn {
    /// The Gauss error function `erf(x)` (code 0; the default, a decoder's placeholder).
    #[default]
    Erf,
    /// `gelu(x) = x·Φ(x) = ½x(1 + erf(x/√2))` (code 1).
    Gelu,
    /// The tanh approximation `½x(1 + tanh(√(2/π)(x + 0.044715x³)))` (code 2).
    GeluTanh,
}

impl SplineFn {
    /// Every function, in code order.
    pub const ALL: [SplineFn; 3] = [SplineFn::Erf, SplineFn::Gelu, SplineFn::GeluTanh];

    /// The function's code in plans and the text format (`spline %x func=1`).
    pub fn code(self) -> u64 {
        self as u64
    }

    /// The function of a code, `None` for an unknown one.
    pub fn from_code(c: u64) -> Option<SplineFn> {
        SplineFn::ALL.get(usize::try_from(c).ok()?).copied()
    }

    /// The real function, in f64.
    pub fn eval(self, x: f64) -> f64 {
        match self {
            SplineFn::Erf => libm::erf(x),
            SplineFn::Gelu => 0.5 * x * (1.0 + libm::erf(x / std::f64::consts::SQRT_2)),
            SplineFn::GeluTanh => {
                let k0 = (2.0 / std::f64::consts::PI).sqrt();
                0.5 * x * (1.0 + (k0 * (x + 0.044_715 * x * x * x)).tanh())
            }
        }
    }

    /// Whether the result is `sign(x)·h(|x|)` (erf) rather than `relu(x) − h(|x|)`.
    pub fn is_odd(self) -> bool {
        self == SplineFn::Erf
    }

    fn table(self) -> &'static Table {
        match self {
            SplineFn::Erf => &ERF,
            SplineFn::Gelu => &GELU,
            SplineFn::GeluTanh => &GELU_TANH,
        }
    }
}

impl fmt::Display for SplineFn {
    /// The code (the text format's `func=…`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.code())
    }
}

/// One function's segments: the knots of `a = |x|` (the last one where `h` becomes
/// `limit`), the cubic in `u = a/4` of each segment below it, the extra accumulator bits.
struct Table {
    knots: &'static [f64],
    coeffs: &'static [[f64; 4]],
    limit: f64,
    extra: u32,
}

// The tables of `scripts/fit-spline.py` (numpy 2.4.6, scipy 1.17.1).
const ERF: Table = Table {
    knots: &[0.40625, 0.75, 1.171875, 1.6875, 2.203125, 3.0],
    coeffs: &[
        [
            -2.2723836527166326e-05,
            4.5199146740147,
            -0.27493667488159945,
            -20.83880455206406,
        ],
        [
            -0.017555551296393863,
            5.005873073555664,
            -4.891633785919981,
            -5.755382757290809,
        ],
        [
            -0.10733650598542013,
            6.426154177958364,
            -12.454788627877841,
            7.802276931825885,
        ],
        [
            -0.11687084923454003,
            6.633940338039952,
            -13.543018700684815,
            9.476679190714774,
        ],
        [
            0.3235656932928959,
            3.523560479613158,
            -6.196221786791862,
            3.672352525688228,
        ],
        [
            0.8519915750733691,
            0.6263563734988349,
            -0.8855414989413538,
            0.4180319762365936,
        ],
    ],
    limit: 1.0,
    extra: 0,
};

const GELU: Table = Table {
    knots: &[0.53125, 1.296875, 1.890625, 2.890625, 4.0],
    coeffs: &[
        [
            -3.4982282254677026e-05,
            2.00859032646042,
            -6.716238949368734,
            4.189612749783144,
        ],
        [
            -0.0035104926381854004,
            2.121912384555513,
            -7.854332189040345,
            7.84729082323778,
        ],
        [
            0.1753407216479663,
            0.504455927787716,
            -2.938029428970846,
            2.823012694381861,
        ],
        [
            0.5550810078795853,
            -1.914818862847579,
            2.2261065696887803,
            -0.8698544116594211,
        ],
        [
            0.29432952858380007,
            -0.9120991027376262,
            0.946925819355608,
            -0.3290622110082349,
        ],
    ],
    limit: 0.0,
    extra: 2,
};

const GELU_TANH: Table = Table {
    knots: &[0.53125, 1.296875, 1.90625, 2.890625, 4.0],
    coeffs: &[
        [
            -3.50433993107636e-05,
            2.008609784724242,
            -6.717184514993995,
            4.204779224403183,
        ],
        [
            -0.003286232800781938,
            2.1178701127597,
            -7.830870664957373,
            7.8135757325990465,
        ],
        [
            0.1767393813837675,
            0.4920425670555334,
            -2.894859334849229,
            2.7737387281169994,
        ],
        [
            0.5581829434022075,
            -1.9216259195257341,
            2.222884368574248,
            -0.8617649247219625,
        ],
        [
            0.3005104168243077,
            -0.9391593054958903,
            0.9819146371333218,
            -0.34323058433418036,
        ],
    ],
    limit: 0.0,
    extra: 2,
};

/// The fixed-point parameters of [`spline`] at ring width ℓ and scale `s` (see the
/// [module documentation](self)): the knots at scale `s`, the integer coefficients, the
/// powers' scale `f` and the accumulator's scale `A`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplineParams {
    func: SplineFn,
    ell: u32,
    s: u32,
    f: u32,
    acc: u32,
    knots: Vec<u64>,
    coeffs: Vec<[u64; 4]>,
    limit: u64,
}

impl SplineParams {
    /// The degree of every segment's polynomial.
    pub const DEGREE: usize = 3;

    /// The largest error against the real function over every fixed-point input, in ULPs
    /// of scale `s`, measured at (ℓ, s) = (32, 12) and (37, 14) for erf, GELU and
    /// tanh-GELU (`cargo test --release -p sci-ir --lib spline -- --nocapture`).
    pub const MEASURED_ULPS: [(u32, u32, [f64; 3]); 2] =
        [(32, 12, [1.81, 1.38, 1.33]), (37, 14, [2.07, 2.08, 1.85])];

    /// Checks `1 ≤ s`, `e ≤ s` and `2s + 6 ≤ ℓ ≤ 64`, and quantizes the function's table.
    pub fn new(func: SplineFn, ell: u32, s: u32) -> Result<SplineParams, MathError> {
        let t = func.table();
        if s == 0 || t.extra > s || ell > 64 || 2 * s + 6 > ell {
            return Err(MathError(format!(
                "spline {func:?} at scale {s} needs {} ≤ s and 2s + 6 ≤ ℓ = {ell} ≤ 64",
                t.extra.max(1)
            )));
        }
        let f = (ell - 2) / 2;
        let acc = ell - 3 + t.extra;
        let m = mask(ell);
        let at = |v: f64, k: u32| ((v * (k as f64).exp2()).round() as i64 as u64) & m;
        Ok(SplineParams {
            func,
            ell,
            s,
            f,
            acc,
            knots: t.knots.iter().map(|&k| at(k, s)).collect(),
            coeffs: t
                .coeffs
                .iter()
                .map(|c| {
                    [
                        at(c[0], acc),
                        at(c[1], acc - f),
                        at(c[2], acc - f),
                        at(c[3], acc - f),
                    ]
                })
                .collect(),
            limit: at(t.limit, acc),
        })
    }

    /// The function.
    pub fn func(&self) -> SplineFn {
        self.func
    }

    /// Ring width ℓ.
    pub fn ell(&self) -> u32 {
        self.ell
    }

    /// Scale `s` of the input and the output.
    pub fn s(&self) -> u32 {
        self.s
    }

    /// Scale `f = ⌊(ℓ − 2)/2⌋` of the powers of `|x|/4`.
    pub fn f(&self) -> u32 {
        self.f
    }

    /// The left shift of `|x|` into `U₁`: `f − s − 2`.
    pub fn lift(&self) -> u32 {
        self.f - self.s - 2
    }

    /// The final rounding shift `σ = A − s`.
    pub fn shift(&self) -> u32 {
        self.acc - self.s
    }

    /// The offset `O = 2^{ℓ−3}` that makes the accumulator non-negative.
    pub fn offset(&self) -> u64 {
        1 << (self.ell - 3)
    }

    /// The knots `T₁ < … < T_k` at scale `s` (ring elements; the last is where the
    /// function becomes its limit).
    pub fn knots(&self) -> &[u64] {
        &self.knots
    }

    /// `[C₀, C₁, C₂, C₃]` of each segment below the last knot (ring elements).
    pub fn coeffs(&self) -> &[[u64; 4]] {
        &self.coeffs
    }

    /// The accumulator's value beyond the last knot (the limit at scale `A`).
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// `(u·v + 2^{f−1}) >> f` of two powers (`u·v < 2^{ℓ−1} − 2^{f−1}`).
    pub fn round_product(&self, u: u64, v: u64) -> u64 {
        (u.wrapping_mul(v).wrapping_add(1 << (self.f - 1)) & mask(self.ell)) >> self.f
    }

    /// `Y` of segment `j` (below the last knot) on the powers `U₁, U₂, U₃`, mod `2^ℓ`;
    /// without the constant `C_{j,0}` unless `constant` (on shares: one party adds it).
    pub fn segment(&self, j: usize, u: [u64; 3], constant: bool) -> u64 {
        let c = &self.coeffs[j];
        let c0 = if constant { c[0] } else { 0 };
        c0.wrapping_add(c[1].wrapping_mul(u[0]))
            .wrapping_add(c[2].wrapping_mul(u[1]))
            .wrapping_add(c[3].wrapping_mul(u[2]))
            & mask(self.ell)
    }

    /// `h` at scale `s` of the accumulator `Y` (the final rounding).
    pub fn finish(&self, y: u64) -> u64 {
        let m = mask(self.ell);
        let sh = self.shift();
        let v = y.wrapping_add(self.offset() + (1 << (sh - 1))) & m;
        (v >> sh).wrapping_sub(self.offset() >> sh) & m
    }
}

fn mask(ell: u32) -> u64 {
    if ell == 64 { u64::MAX } else { (1 << ell) - 1 }
}

/// The function of `p` at scale `s` of the ℓ-bit ring element `x` at scale `s`; see the
/// [module documentation](self).
pub fn spline(p: &SplineParams, x: u64) -> u64 {
    let (ell, m) = (p.ell, mask(p.ell));
    let d = (x >> (ell - 1)) & 1 == 0;
    let a = if d { x } else { x.wrapping_neg() & m };
    let top = 1u64 << (ell - 1);
    let j = p
        .knots
        .iter()
        .filter(|&&t| a.wrapping_sub(t) & m & top == 0)
        .count();
    let y = if j == p.knots.len() {
        p.limit
    } else {
        let u1 = (a << p.lift()) & m;
        let u2 = p.round_product(u1, u1);
        let u3 = p.round_product(u2, u1);
        p.segment(j, [u1, u2, u3], true)
    };
    let h = p.finish(y);
    match (p.func.is_odd(), d) {
        (true, true) => h,
        (true, false) => h.wrapping_neg() & m,
        (false, true) => x.wrapping_sub(h) & m,
        (false, false) => h.wrapping_neg() & m,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The largest error in ULPs over every input at scale `s` in `[−r, r]` (beyond,
    /// erf is the constant ±1 and the GELUs `relu(x)`, within `2·10⁻⁶` of the real
    /// function), and where.
    fn max_ulps(p: &SplineParams, r: i64) -> (f64, f64) {
        let (s, m) = (p.s(), mask(p.ell()));
        let one = (f64::from(s)).exp2();
        let mut worst = (0.0, 0.0);
        for i in -(r << s)..=(r << s) {
            let x = i as f64 / one;
            let y = spline(p, (i as u64) & m);
            let y = (((y << (64 - p.ell())) as i64) >> (64 - p.ell())) as f64 / one;
            let e = (y - p.func().eval(x)).abs() * one;
            if e > worst.0 {
                worst = (e, x);
            }
        }
        worst
    }

    /// Every fixed-point input in `[−8, 8]` at the two measured widths: the maxima
    /// of [`SplineParams::MEASURED_ULPS`], at most the tanh-based lowering's (Erf 1.87,
    /// GELU 3.45, tanh-GELU 3.29 ULPs at s = 12; 2.38, 4.50, 3.91 at s = 14).
    #[test]
    fn errors_on_every_fixed_point_input() {
        for (ell, s, measured) in SplineParams::MEASURED_ULPS {
            for (func, want) in SplineFn::ALL.into_iter().zip(measured) {
                let p = SplineParams::new(func, ell, s).unwrap();
                let (e, at) = max_ulps(&p, 8);
                eprintln!("spline {func:?} ℓ = {ell}, s = {s}: {e:.2} ULP at {at}");
                assert!(e <= want + 0.005, "{func:?} ℓ={ell} s={s}: {e} at {at}");
                assert!(
                    e >= want - 0.005,
                    "{func:?} ℓ={ell} s={s}: {e} at {at} (update)"
                );
            }
        }
    }

    /// The edges: 0, ±1, the knots, the most negative and the largest values.
    #[test]
    fn edges() {
        let p = SplineParams::new(SplineFn::Erf, 16, 4).unwrap();
        let m = mask(16);
        assert_eq!(spline(&p, 0), 0);
        assert_eq!(spline(&p, 1 << 15), (1u64 << 4).wrapping_neg() & m);
        assert_eq!(spline(&p, (1 << 15) - 1), 1 << 4);
        let g = SplineParams::new(SplineFn::Gelu, 16, 4).unwrap();
        assert_eq!(spline(&g, 1 << 15), 0);
        assert_eq!(spline(&g, (1 << 15) - 1), (1 << 15) - 1);
        assert_eq!(spline(&g, 0), 0);
    }

    #[test]
    fn refuses_narrow_rings() {
        assert!(SplineParams::new(SplineFn::Erf, 29, 12).is_err());
        assert!(SplineParams::new(SplineFn::Erf, 30, 12).is_ok());
        assert!(SplineParams::new(SplineFn::Gelu, 12, 1).is_err());
        assert!(SplineParams::new(SplineFn::Erf, 16, 0).is_err());
    }
}
