//! `Relu` and `Clip` (ReLU, ReLU6, identity) → IR `relu` and its combinations.

use sci_ir::Op;

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
            let v: Vec<f64> = t
                .to_f64()
                .iter()
                .map(|&e| {
                    e.max(lo.map_or(f64::NEG_INFINITY, f64::from))
                        .min(hi.map_or(f64::INFINITY, f64::from))
                })
                .collect();
            let t = Tensor::new(t.dtype(), t.shape().to_vec(), crate::tensor::Data::Float(v))
                .map_err(|e| cx.error(e))?;
            return Ok(vec![Value::constant(t)]);
        }
        Value::Act(x) => x,
    };
    // On run-time tensors only the ReLU forms: ReLU6 = relu(x) − relu(x − 6), which
    // the IR expresses exactly (ReLU and a subtraction of a public constant).
    let y = match (lo, hi) {
        (None, None) => x,
        (Some(0.0), None) => cx.emit(Op::Relu { x })?,
        (Some(0.0), Some(6.0)) => {
            let six = cx.public_const(&scalar(6.0), "max")?;
            let r = cx.emit(Op::Relu { x })?;
            let shifted = cx.emit(Op::Sub { a: x, b: six })?;
            let r6 = cx.emit(Op::Relu { x: shifted })?;
            cx.emit(Op::Sub { a: r, b: r6 })?
        }
        (l, h) => {
            let show = |b: Option<f32>| b.map_or("none".to_string(), |v| v.to_string());
            let attr = if l != Some(0.0) { "min" } else { "max" };
            return Err(cx.node.attr_error(
                attr,
                format!(
                    "Clip to [{}, {}] is not supported (supported: min = 0 with max = 6 (ReLU6) or no max (ReLU))",
                    show(l),
                    show(h)
                ),
            ));
        }
    };
    Ok(vec![Value::Act(y)])
}
