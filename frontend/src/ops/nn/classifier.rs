//! The head of a classifier: `ArgMax` → IR `argmax`, and a trailing
//! `Softmax`/`LogSoftmax`, dropped because it is monotone; `Softmax` inside a
//! graph (attention) → IR `softmax`.

use sci_ir::Op;

use crate::error::Result;
use crate::note::Note;
use crate::ops::{Ctx, Value};
use crate::shape;
use crate::tensor::Tensor;

/// `Softmax`: dropped as the last op ([`trailing_monotone`]); inside a graph the IR's
/// `softmax`. Opset 13 on: along `axis` (default −1). Before (opsets 1, 11): the input
/// is coerced to 2-D `[Π d_{<axis}, Π d_{≥axis}]` (`axis` default 1) and every row
/// normalised, i.e. a `softmax` along the last axis of that matrix between two
/// reshapes (none when `axis` is the last). Constants fold.
pub(super) fn softmax(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    if cx.final_outputs.first().is_some_and(|o| !o.is_empty()) {
        return trailing_monotone(cx);
    }
    let node = cx.node;
    node.check_known_attrs(&["axis"])?;
    let in_shape = cx.input_shape(0)?;
    let rank = in_shape.len();
    let legacy = cx.opset < 13;
    let axis = node.attr_int_or("axis", if legacy { 1 } else { -1 })?;
    let axis = shape::axis(axis, rank).map_err(|e| node.attr_error("axis", e))?;
    // Before opset 13 with `axis` the last one, the rows are the lines along it.
    let (lines, line_axis) = if legacy && axis + 1 < rank {
        let outer = in_shape[..axis].iter().product::<usize>();
        (vec![outer, in_shape[axis..].iter().product()], 1)
    } else {
        (in_shape.clone(), axis)
    };
    match cx.input(0)?.clone() {
        Value::Const(t) => {
            let y = sci_ir::interp::softmax_f32(&t.to_f32(), &lines, line_axis);
            let y = Tensor::from_f32(in_shape, &y).map_err(|e| cx.error(e))?;
            Ok(vec![Value::constant(y)])
        }
        Value::Act(x) if lines == in_shape => {
            Ok(vec![cx.emit_value(Op::Softmax { x, axis: line_axis })?])
        }
        Value::Act(x) => {
            let x = cx.emit(Op::Reshape { x, shape: lines })?;
            let y = cx.emit(Op::Softmax { x, axis: 1 })?;
            Ok(vec![cx.emit_value(Op::Reshape {
                x: y,
                shape: in_shape,
            })?])
        }
    }
}

pub(super) fn argmax(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let node = cx.node;
    node.check_known_attrs(&["axis", "keepdims", "select_last_index"])?;
    if node.attr_int_or("select_last_index", 0)? != 0 {
        return Err(node.attr_error("select_last_index", "only 0 (first maximum) is supported"));
    }
    let rank = cx.input_shape(0)?.len();
    let axis =
        shape::axis(node.attr_int_or("axis", 0)?, rank).map_err(|e| node.attr_error("axis", e))?;
    let keepdims = node.attr_int_or("keepdims", 1)? != 0;
    let x = cx.input_act(0)?;
    Ok(vec![cx.emit_value(Op::ArgMax { x, axis, keepdims })?])
}

/// `Softmax`/`LogSoftmax` as the last op (followed at most by `Identity`, `Cast` and
/// `Reshape` to the requested outputs): monotone along its axis, so the argmax of the
/// output is that of the input; the op is dropped, the outputs carry its input (the
/// logits) and a note names them.
pub(super) fn trailing_monotone(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let outputs = cx.final_outputs.first().cloned().unwrap_or_default();
    if outputs.is_empty() {
        return Err(cx.error(format!(
            "{} is only supported as the last op, followed at most by Identity, Cast or Reshape \
             (it is then dropped: it is monotone, so the argmax is unchanged); here its output \
             is used by other nodes. Compile up to its input with --output {}",
            cx.node.op_type(),
            cx.input_name(0)
        )));
    }
    cx.notes.push(Note::DroppedMonotone {
        node: cx.node.desc.clone(),
        outputs,
    });
    Ok(vec![cx.input(0)?.clone()])
}
