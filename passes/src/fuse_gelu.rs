//! Fusing the exporters' decomposed GELU into one `spline`.
//!
//! **Rewrites:** in a float program, the product `x · (erf(x · c) + 1) · ½` with
//! `c = 1/√2` — PyTorch's `nn.GELU()` as both ONNX exporters write it below opset 20
//! (`Div(x, √2)`, `Erf`, `Add 1`, `Mul x`, `Mul 0.5`; the frontend reads the division by
//! a constant as a product by its reciprocal) — into `spline x func=1` (GELU), in any
//! association and operand order of the three factors. The product keeps its name (its
//! users are unchanged); the intermediate values go, so each of them must have no user
//! outside the pattern: the scaled input and the `erf` one user each, the `erf + 1` and
//! the inner product one user inside the product. A product whose factors differ
//! (another constant, another operand), or whose intermediates are used elsewhere, is
//! left alone.
//!
//! **Why it is exact:** `x · ½(1 + erf(x/√2)) = x · Φ(x)` is GELU's definition, so in the
//! float program the rewrite changes nothing beyond f32 rounding; the constants are
//! matched within 2 f32 ULPs of `1/√2` (the exporters' `1.4142135` and its reciprocal
//! `0.70710677`) and exactly for `½` and `1`. The fixed-point program then computes
//! GELU by its spline, within `SplineParams::MEASURED_ULPS` of the real GELU (2.08 ULPs
//! at ℓ = 32, `s = 12`), instead of the unfused chain's Erf spline (2.07 ULPs),
//! truncation and secret × secret product of `x` by `1 + erf`.
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
    let fused: Vec<Option<ValueId>> = p.ids().map(|v| gelu_operand(p, &users, v)).collect();
    if fused.iter().all(Option::is_none) {
        return Ok(p.clone());
    }
    let mut rw = Rewriter::new(p);
    for v in p.ids() {
        match fused[v.index()] {
            Some(x) => {
                let x = rw.get(x)?;
                let g = rw.push(
                    &p.instr(v).name,
                    Op::Spline {
                        x,
                        func: SplineFn::Gelu,
                    },
                )?;
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

/// Whether `c` is `1/√2` within 2 f32 ULPs.
fn is_inv_sqrt2(c: f32) -> bool {
    // An f32 ULP in [½, 1) is 2^-24 = ε/2.
    (c - std::f32::consts::FRAC_1_SQRT_2).abs() <= f32::EPSILON
}

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

/// If the old value `v` is `x · (erf(x·c) + 1) · ½` (see the module docs), `x`.
fn gelu_operand(p: &Program, users: &[Vec<ValueId>], v: ValueId) -> Option<ValueId> {
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
    // One factor is `erf(x·c) + 1` (its one user a product of the tree), the other `x`.
    let x = match (erf_plus_one(p, users, fs[0]), erf_plus_one(p, users, fs[1])) {
        (Some(x), _) if x == fs[1] => x,
        (_, Some(x)) if x == fs[0] => x,
        _ => return None,
    };
    (p.ty(x).shape() == p.ty(v).shape() && !matches!(p.instr(x).op, Op::Const { .. })).then_some(x)
}

/// If the old value `a` is `erf(x·c) + 1` with `c = 1/√2` and single-use intermediates,
/// `x`.
fn erf_plus_one(p: &Program, users: &[Vec<ValueId>], a: ValueId) -> Option<ValueId> {
    let Op::Add { a: l, b: r } = p.instr(a).op else {
        return None;
    };
    let e = match (scalar(p, l), scalar(p, r)) {
        (_, Some(c)) if c == 1.0 => l,
        (Some(c), _) if c == 1.0 => r,
        _ => return None,
    };
    let Op::Spline {
        x: d,
        func: SplineFn::Erf,
    } = p.instr(e).op
    else {
        return None;
    };
    let Op::Mul { a: dl, b: dr } = p.instr(d).op else {
        return None;
    };
    let x = match (scalar(p, dl), scalar(p, dr)) {
        (_, Some(c)) if is_inv_sqrt2(c) => dl,
        (Some(c), _) if is_inv_sqrt2(c) => dr,
        _ => return None,
    };
    (only_user(users, e, a) && only_user(users, d, e) && users[a.index()].len() == 1).then_some(x)
}
