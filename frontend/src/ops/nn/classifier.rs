//! The head of a classifier: `ArgMax` → IR `argmax`, and a trailing
//! `Softmax`/`LogSoftmax`, dropped because it is monotone.

use sci_ir::Op;

use crate::error::Result;
use crate::note::Note;
use crate::ops::{Ctx, Value};
use crate::shape;

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
