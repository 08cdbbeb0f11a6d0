//! `LayerNormalization` (opset 17) → IR ops: the mean and variance over the trailing
//! axes from `axis` on (`ReduceMean`'s sum trees and one `div_public` each), the
//! centred `d = x − μ`, `var = mean(d·d)` (a secret product, then its truncation),
//! `+ ε`, `rsqrt` (`proto::rsqrt`: range reduction and Newton's iteration), `d·rsqrt`
//! (a secret product), `·γ + β` (the scale and bias are weights: server constants).
//!
//! `stash_type` (the precision of the mean and variance) has no fixed-point
//! counterpart: they are computed at the program's scale, so every value is accepted.
//! Only the output `Y` is supported (`Mean` and `InvStdDev` are training outputs).

use sci_ir::Op;

use super::scalar;
use crate::error::Result;
use crate::ops::reduce::mean_axes;
use crate::ops::{Ctx, Value};
use crate::shape;

pub(super) fn layer_norm(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let node = cx.node;
    node.check_known_attrs(&["axis", "epsilon", "stash_type"])?;
    if node.outputs.iter().skip(1).any(|o| !o.is_empty()) {
        return Err(
            cx.error("only the output Y is supported (Mean and InvStdDev are training outputs)")
        );
    }
    let rank = cx.input_shape(0)?.len();
    let axis =
        shape::axis(node.attr_int_or("axis", -1)?, rank).map_err(|e| node.attr_error("axis", e))?;
    let epsilon = node.attr_float_or("epsilon", 1e-5)?;
    let axes: Vec<usize> = (axis..rank).collect();
    let x = cx.input_act(0)?;
    let mean = mean_axes(cx, Value::Act(x), &axes)?;
    let mean = cx.act(&mean, "mean")?;
    let d = cx.emit(Op::Sub { a: x, b: mean })?;
    let dd = cx.emit(Op::Mul { a: d, b: d })?;
    let var = mean_axes(cx, Value::Act(dd), &axes)?;
    let var = cx.act(&var, "var")?;
    let eps = cx.public_const(&scalar(epsilon), "epsilon")?;
    let shifted = cx.emit(Op::Add { a: var, b: eps })?;
    let r = cx.emit(Op::Rsqrt { x: shifted })?;
    let normed = cx.emit(Op::Mul { a: d, b: r })?;
    let gamma = cx.input_act(1)?;
    let mut y = cx.emit_value(Op::Mul {
        a: normed,
        b: gamma,
    })?;
    if cx.opt_input(2).is_some() {
        let (scaled, beta) = (cx.act(&y, "scaled")?, cx.input_act(2)?);
        y = cx.emit_value(Op::Add { a: scaled, b: beta })?;
    }
    Ok(vec![y])
}
