//! The piecewise-linear activations → IR `relu` and its combinations with linear ops,
//! exact on fixed-point values but for the rounding of their public constants (and one
//! truncation after each product by a non-integer slope):
//!
//! | ONNX | lowering | protocols on shares |
//! |---|---|---|
//! | `Relu` | `relu x` | one ReLU |
//! | `Clip` (constant bounds `lo ≤ hi`) | `relu(x − lo) − relu(x − hi) + lo` (one side: `lo + relu(x − lo)`, `x − relu(x − hi)`) | one ReLU per bound |
//! | `LeakyRelu` (`α`), `PRelu` (constant slope `α`) | `relu(x) + α·(x − relu(x))` | one ReLU, the product by `α` (public `α`: local; `PRelu`'s slope is a weight, the server's: an OT product), one truncation |
//! | `HardSigmoid` (`α`, `β`) | `clip(α·x + β, 0, 1)` | two ReLUs, one truncation |
//! | `HardSwish` | `x · HardSigmoid(x)` with `α = 1/6`, `β = 1/2` | the above and a secret × secret product, its truncation |
//!
//! The attributes `α`, `β` and the bounds are the model's structure (public constants);
//! a `PRelu` slope is a weight (a server constant).
//!
//! The smooth activations are IR ops of their own, exact to a few ULPs of the fixed-point
//! scale (`sci_ir::math::SmoothParams`):
//!
//! | ONNX | lowering | protocols on shares |
//! |---|---|---|
//! | `Sigmoid` | `sigmoid x` | SIRNN's exp, reciprocal and a sign (`proto::sigmoid`) |
//! | `Tanh` | `tanh x` | the same on `2x` |
//!
//! SiLU/Swish (`x · Sigmoid(x)`, as both PyTorch exporters write them) is `Sigmoid` and
//! a `Mul` of two activations (a secret × secret product).
//!
//! `Erf` and `Gelu` are piecewise cubics of `|x|` on public knots (`sci_ir::spline`):
//!
//! | ONNX | lowering | protocols on shares |
//! |---|---|---|
//! | `Erf` | `spline x func=0` | `proto::spline`: seven `DReLU`s, two rounded secret products, eight multiplexers, one truncation |
//! | `Gelu` (opset 20), `approximate = "none"` | `spline x func=1` | six `DReLU`s, two rounded secret products, six multiplexers, one truncation |
//! | `Gelu`, `approximate = "tanh"` | `spline x func=2` | the same |
//!
//! The exporters' exact GELU, `x · 0.5 · (1 + Erf(x / √2))`, is that `Erf` and
//! ordinary products. Errors against the real functions: `docs/functions.md`.

use sci_ir::spline::SplineFn;
use sci_ir::{Op, ValueId};

use super::scalar;
use crate::error::Result;
use crate::fold::{self, UnOp};
use crate::ops::{Ctx, Value};
use crate::tensor::Tensor;

pub(super) fn relu(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    match cx.input(0)?.clone() {
        Value::Const(t) => fold::unary(&t, UnOp::Relu)
            .map(|t| vec![Value::constant(t)])
            .map_err(|e| cx.error(e)),
        Value::Act(x) => Ok(vec![cx.emit_value(Op::Relu { x })?]),
    }
}

/// `Sigmoid` (`tanh` false) or `Tanh`: the IR op on an activation, folded on a constant.
pub(super) fn smooth(cx: &mut Ctx<'_>, tanh: bool) -> Result<Vec<Value>> {
    match cx.input(0)?.clone() {
        Value::Const(t) => map_const(cx, &t, |e| {
            if tanh {
                e.tanh()
            } else {
                1.0 / (1.0 + (-e).exp())
            }
        }),
        Value::Act(x) => {
            let op = if tanh {
                Op::Tanh { x }
            } else {
                Op::Sigmoid { x }
            };
            Ok(vec![cx.emit_value(op)?])
        }
    }
}

/// The Gauss error function `Erf` (opset 9, 13): the IR's `spline func=0` (a piecewise
/// cubic of `|x|`, [`sci_ir::spline`]) on an activation, folded on a constant.
pub(super) fn erf(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    match cx.input(0)?.clone() {
        Value::Const(t) => map_const(cx, &t, libm::erf),
        Value::Act(x) => Ok(vec![cx.emit_value(Op::Spline {
            x,
            func: SplineFn::Erf,
        })?]),
    }
}

/// `Gelu` (opset 20): `x · Φ(x)` with `Φ(x) = ½ + ½·erf(x/√2)` (`approximate =
/// "none"`) or `½ + ½·tanh(√(2/π)·(x + 0.044715·x³))` (`"tanh"`): the IR's `spline`
/// (`func=1`, `func=2`) on an activation, folded on a constant.
pub(super) fn gelu(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    cx.node.check_known_attrs(&["approximate"])?;
    let func = match cx.node.attr_string("approximate")?.as_deref() {
        None | Some("none") => SplineFn::Gelu,
        Some("tanh") => SplineFn::GeluTanh,
        Some(other) => {
            return Err(cx.node.attr_error(
                "approximate",
                format!("'{other}' (expected 'none' or 'tanh')"),
            ));
        }
    };
    match cx.input(0)?.clone() {
        Value::Const(t) => map_const(cx, &t, |v| func.eval(v)),
        Value::Act(x) => Ok(vec![cx.emit_value(Op::Spline { x, func })?]),
    }
}

/// A scalar bound of `Clip`: `None` when absent or unbounded (±inf, ±f32::MAX).
fn bound(v: Option<f64>) -> Option<f32> {
    v.filter(|b| b.is_finite() && b.abs() < f64::from(f32::MAX))
        .map(|b| b as f32)
}

pub(super) fn clip(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    // Opset 11 moved min/max from attributes to optional inputs.
    let (lo, hi) = if cx.opset < 11 {
        (
            cx.node.attr_float("min")?.map(f64::from),
            cx.node.attr_float("max")?.map(f64::from),
        )
    } else {
        let one = |i: usize, what: &str| -> Result<Option<f64>> {
            match cx.opt_const_input(i, what)? {
                None => Ok(None),
                Some(t) => match t.to_f64().as_slice() {
                    [v] => Ok(Some(*v)),
                    _ => Err(cx.error(format!("{what} must be a scalar"))),
                },
            }
        };
        (one(1, "min")?, one(2, "max")?)
    };
    let (lo, hi) = (bound(lo), bound(hi));
    if let (Some(l), Some(h)) = (lo, hi)
        && l > h
    {
        return Err(cx.error(format!("min {l} is greater than max {h}")));
    }
    let x = match cx.input(0)?.clone() {
        Value::Const(t) => {
            return map_const(cx, &t, |e| {
                e.max(lo.map_or(f64::NEG_INFINITY, f64::from))
                    .min(hi.map_or(f64::INFINITY, f64::from))
            });
        }
        Value::Act(x) => x,
    };
    Ok(vec![Value::Act(clip_act(cx, x, lo, hi)?)])
}

/// `clip(x, lo, hi)` of a run-time `x` for public bounds (`lo ≤ hi` where both are
/// given): `relu(x − lo) − relu(x − hi) + lo`, or one side of it — ReLU6 is
/// `relu(x) − relu(x − 6)`; a zero bound is not subtracted. Cost: one ReLU per bound.
fn clip_act(cx: &mut Ctx<'_>, x: ValueId, lo: Option<f32>, hi: Option<f32>) -> Result<ValueId> {
    let lo_c = match lo {
        Some(l) if l != 0.0 => Some(cx.public_const(&scalar(l), "min")?),
        _ => None,
    };
    let hi_c = match hi {
        Some(h) => Some(cx.public_const(&scalar(h), "max")?),
        None => None,
    };
    // max(x, lo) = lo + relu(x − lo).
    let above = match (lo, lo_c) {
        (None, _) => None,
        (Some(_), None) => Some(cx.emit(Op::Relu { x })?),
        (Some(_), Some(c)) => {
            let d = cx.emit(Op::Sub { a: x, b: c })?;
            Some(cx.emit(Op::Relu { x: d })?)
        }
    };
    // min(·, hi): subtract relu(x − hi), the excess over hi (for lo ≤ hi, after the
    // lower bound too).
    let y = match hi_c {
        None => above.unwrap_or(x),
        Some(c) => {
            let d = cx.emit(Op::Sub { a: x, b: c })?;
            let excess = cx.emit(Op::Relu { x: d })?;
            cx.emit(Op::Sub {
                a: above.unwrap_or(x),
                b: excess,
            })?
        }
    };
    match (above, lo_c) {
        (Some(_), Some(c)) => cx.emit(Op::Add { a: y, b: c }),
        _ => Ok(y),
    }
}

/// `relu(x) + α·(x − relu(x))`: `x` where `x ≥ 0`, `α·x` below (LeakyReLU, PReLU).
/// Cost: one ReLU, the product by `α` and its truncation.
fn leaky(cx: &mut Ctx<'_>, x: ValueId, alpha: ValueId) -> Result<ValueId> {
    let r = cx.emit(Op::Relu { x })?;
    let below = cx.emit(Op::Sub { a: x, b: r })?;
    let scaled = cx.emit(Op::Mul { a: below, b: alpha })?;
    cx.emit(Op::Add { a: r, b: scaled })
}

/// `LeakyRelu(x) = x` for `x ≥ 0`, `α·x` below (`alpha`, default 0.01, public).
pub(super) fn leaky_relu(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let alpha = cx.node.attr_float_or("alpha", 0.01)?;
    match cx.input(0)?.clone() {
        Value::Const(t) => map_const(cx, &t, |v| if v >= 0.0 { v } else { f64::from(alpha) * v }),
        Value::Act(x) => {
            let a = cx.public_const(&scalar(alpha), "alpha")?;
            Ok(vec![Value::Act(leaky(cx, x, a)?)])
        }
    }
}

/// `PRelu(x, slope) = x` for `x ≥ 0`, `slope·x` below, the slope a constant (a weight,
/// broadcast to `x`).
pub(super) fn prelu(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    cx.const_input(1, "slope")?;
    match cx.input(0)?.clone() {
        Value::Const(_) => Err(cx.error("PRelu of a constant is not supported")),
        Value::Act(x) => {
            let slope = cx.input_act(1)?;
            Ok(vec![Value::Act(leaky(cx, x, slope)?)])
        }
    }
}

/// `clip(α·x + β, 0, 1)` of a run-time `x`, `α` and `β` public ([`clip_act`]).
fn hard_sigmoid_act(cx: &mut Ctx<'_>, x: ValueId, alpha: f32, beta: f32) -> Result<ValueId> {
    let a = cx.public_const(&scalar(alpha), "alpha")?;
    let ax = cx.emit(Op::Mul { a: x, b: a })?;
    let b = cx.public_const(&scalar(beta), "beta")?;
    let t = cx.emit(Op::Add { a: ax, b })?;
    clip_act(cx, t, Some(0.0), Some(1.0))
}

/// `HardSigmoid(x) = max(0, min(1, α·x + β))` (`alpha` 0.2, `beta` 0.5 by default).
pub(super) fn hard_sigmoid(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let alpha = cx.node.attr_float_or("alpha", 0.2)?;
    let beta = cx.node.attr_float_or("beta", 0.5)?;
    match cx.input(0)?.clone() {
        Value::Const(t) => map_const(cx, &t, |v| {
            (f64::from(alpha) * v + f64::from(beta)).clamp(0.0, 1.0)
        }),
        Value::Act(x) => Ok(vec![Value::Act(hard_sigmoid_act(cx, x, alpha, beta)?)]),
    }
}

/// `HardSwish(x) = x · HardSigmoid(x)` with `α = 1/6`, `β = 1/2`: a secret × secret
/// product of `x` and its gate.
pub(super) fn hard_swish(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let (alpha, beta) = (1.0f32 / 6.0, 0.5f32);
    match cx.input(0)?.clone() {
        Value::Const(t) => map_const(cx, &t, |v| {
            v * (f64::from(alpha) * v + f64::from(beta)).clamp(0.0, 1.0)
        }),
        Value::Act(x) => {
            let gate = hard_sigmoid_act(cx, x, alpha, beta)?;
            Ok(vec![cx.emit_value(Op::Mul { a: x, b: gate })?])
        }
    }
}

/// `f` applied to every element of the constant `t` (folded at compile time).
fn map_const(cx: &Ctx<'_>, t: &Tensor, f: impl Fn(f64) -> f64) -> Result<Vec<Value>> {
    let v: Vec<f64> = t.to_f64().iter().map(|&e| f(e)).collect();
    Tensor::new(t.dtype(), t.shape().to_vec(), crate::tensor::Data::Float(v))
        .map(|t| vec![Value::constant(t)])
        .map_err(|e| cx.error(e))
}
