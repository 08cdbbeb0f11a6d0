//! Fusing the exporters' decomposed GELU into one `spline`.
//!
//! **Rewrites:** in a float program, the product `x · (erf(x · c) + 1) · ½` with
//! `c = 1/√2` — PyTorch's `nn.GELU()` as both ONNX exporters write it below opset 20
//! (`Div(x, √2)`, `Erf`, `Add 1`, `Mul x`, `Mul 0.5`; the frontend reads the division by
//! a constant as a product by its reciprocal) — into `spline x func=1` (GELU), and
//! `x · (tanh(c·(x + 0.044715·x³)) + 1) · ½` with `c = √(2/π)` (`nn.GELU("tanh")`,
//! GPT-2's `gelu_new`; `x³` is `Pow(x, 3)`, which the frontend writes as `x·x·x`) into
//! `spline x func=2` (tanh-GELU), in any association and operand order of the factors. The product keeps its name (its
//! users are unchanged); the intermediate values go, so each of them must have no user
//! outside the pattern: the scaled input and the `erf` one user each, the `erf + 1` and
//! the inner product one user inside the product. A product whose factors differ
//! (another constant, another operand), or whose intermediates are used elsewhere, is
//! left alone.
//!
//! **Why it is exact:** `x · ½(1 + erf(x/√2)) = x · Φ(x)` is GELU's definition, so in the
//! float program the rewrite changes nothing beyond f32 rounding (the tanh form is the
//! tanh-GELU's definition); the constants are matched within 2 f32 ULPs of `1/√2` (the
//! exporters' `1.4142135` and its reciprocal `0.70710677`), `√(2/π)` and `0.044715`, and
//! exactly for `½` and `1`. The fixed-point program then computes
//! GELU by its spline, within `SplineParams::MEASURED_ULPS` of the real GELU (2.08 ULPs
//! at ℓ = 32, `s = 12`), instead of the unfused chain's Erf spline (2.07 ULPs),
//! truncation and secret × secret product of `x` by `1 + erf` (for the tanh form: two
//! secret products for `x³`, the tanh protocol and the product by `1 + tanh`).
//!
//! **Why:** the secret product is gone: per element, one spline instead of a spline, a
//! product of two shared values (`proto::secmul`) and its truncation.

use crate::error::PassError;
use crate::rewrite::Rewriter;
use sci_ir::spline::SplineFn;
use sci_ir::{Op, Program, ValueId};

use crate::affine::const_f32;

/// The pass: see the module docs.
pub fn run(p: &Program) -> Result<Program, PassError> {
    let users = p.users();
    let fused: Vec<Option<(ValueId, SplineFn)>> =
        p.ids().map(|v| gelu_operand(p, &users, v)).collect();
    if fused.iter().all(Option::is_none) {
        return Ok(p.clone());
    }
    let mut rw = Rewriter::new(p);
    for v in p.ids() {
        match fused[v.index()] {
            Some((x, func)) => {
                let x = rw.get(x)?;
                let g = rw.push(&p.instr(v).name, Op::Spline { x, func })?;
                rw.set(v, g);
            }
            None => rw.copy(v)?,
        }
    }
    rw.finish()
}

/// The scalar value of the old value `v` if it is a one-element `f32` constant.
fn scalar(p: &Program, v: ValueId) -> Option<f32> {
    match const_f32(p, v)? {
        [c] => Some(*c),
        _ => None,
    }
}

/// Whether the old value `v` is a scalar constant within 2 f32 ULPs of `want`.
fn is_const(p: &Program, v: ValueId, want: f64) -> bool {
    let want = want as f32;
    let ulp = want.abs().next_up() - want.abs();
    scalar(p, v).is_some_and(|c| (c - want).abs() <= 2.0 * ulp)
}

/// `√(2/π)`, the tanh-GELU's inner scale.
const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;

/// The tanh-GELU's cubic coefficient.
const CUBIC: f64 = 0.044_715;

/// Whether the old value `v` is used by `user` only.
fn only_user(users: &[Vec<ValueId>], v: ValueId, user: ValueId) -> bool {
    users[v.index()] == [user]
}

/// The factors of the float product `v`: `v`'s operands, each inner `mul` with `v`'s
/// product as its only user expanded in turn.
fn factors(p: &Program, users: &[Vec<ValueId>], v: ValueId, out: &mut Vec<ValueId>) {
    if let Op::Mul { a, b } = p.instr(v).op {
        for o in [a, b] {
            if matches!(p.instr(o).op, Op::Mul { .. }) && only_user(users, o, v) {
                factors(p, users, o, out);
            } else {
                out.push(o);
            }
        }
    }
}

/// If the old value `v` is `x · (f(x) + 1) · ½` for one of the two forms (see the module
/// docs), `x` and the spline that computes it.
fn gelu_operand(p: &Program, users: &[Vec<ValueId>], v: ValueId) -> Option<(ValueId, SplineFn)> {
    if !matches!(p.instr(v).op, Op::Mul { .. }) || !p.ty(v).encoding().is_real() {
        return None;
    }
    let mut fs = Vec::with_capacity(3);
    factors(p, users, v, &mut fs);
    if fs.len() != 3 {
        return None;
    }
    let half = fs.iter().position(|&f| scalar(p, f) == Some(0.5))?;
    fs.swap_remove(half);
    // One factor is `f(x) + 1` (its one user a product of the tree), the other `x`.
    let (x, func) = match (phi_plus_one(p, users, fs[0]), phi_plus_one(p, users, fs[1])) {
        (Some((x, f)), _) if x == fs[1] => (x, f),
        (_, Some((x, f))) if x == fs[0] => (x, f),
        _ => return None,
    };
    (p.ty(x).shape() == p.ty(v).shape() && !matches!(p.instr(x).op, Op::Const { .. }))
        .then_some((x, func))
}

/// If the old value `a` is `f(x) + 1` with `f(x)` = `erf(x/√2)` or `tanh(√(2/π)·(x +
/// 0.044715·x³))` and single-use intermediates, `x` and the GELU spline of that form.
fn phi_plus_one(p: &Program, users: &[Vec<ValueId>], a: ValueId) -> Option<(ValueId, SplineFn)> {
    let Op::Add { a: l, b: r } = p.instr(a).op else {
        return None;
    };
    let f = match (scalar(p, l), scalar(p, r)) {
        (_, Some(1.0)) => l,
        (Some(1.0), _) => r,
        _ => return None,
    };
    if !(only_user(users, f, a) && users[a.index()].len() == 1) {
        return None;
    }
    match p.instr(f).op {
        Op::Spline {
            x: d,
            func: SplineFn::Erf,
        } => Some((
            scaled(p, users, d, f, std::f64::consts::FRAC_1_SQRT_2)?,
            SplineFn::Gelu,
        )),
        Op::Tanh { x: d } => {
            let u = scaled(p, users, d, f, SQRT_2_OVER_PI)?;
            let Op::Add { a: ul, b: ur } = p.instr(u).op else {
                return None;
            };
            let (x, _) = [(ul, ur), (ur, ul)]
                .into_iter()
                .find(|&(x, w)| only_user(users, w, u) && is_cubic_of(p, users, w, x))?;
            Some((x, SplineFn::GeluTanh))
        }
        _ => None,
    }
}

/// If the old value `d`, used by `user` only, is `x · c` or `c · x` with `c` a scalar
/// constant within 2 ULPs of `want`, `x`.
fn scaled(
    p: &Program,
    users: &[Vec<ValueId>],
    d: ValueId,
    user: ValueId,
    want: f64,
) -> Option<ValueId> {
    let Op::Mul { a, b } = p.instr(d).op else {
        return None;
    };
    if !only_user(users, d, user) {
        return None;
    }
    if is_const(p, b, want) {
        Some(a)
    } else if is_const(p, a, want) {
        Some(b)
    } else {
        None
    }
}

/// Whether the old value `w` is the product `0.044715 · x · x · x` (any association,
/// single-use inner products).
fn is_cubic_of(p: &Program, users: &[Vec<ValueId>], w: ValueId, x: ValueId) -> bool {
    let mut fs = Vec::with_capacity(4);
    factors(p, users, w, &mut fs);
    fs.len() == 4
        && fs.iter().filter(|&&f| f == x).count() == 3
        && fs.iter().any(|&f| is_const(p, f, CUBIC))
}
