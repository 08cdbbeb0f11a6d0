//! `BatchNormalization` (inference form) → IR `batchnorm`, folded into the
//! neighbouring affine layer by the passes.

use sci_ir::Op;

use crate::error::Result;
use crate::ops::{Ctx, Value};

pub(super) fn batch_norm(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let node = cx.node;
    node.check_known_attrs(&[
        "epsilon",
        "momentum",
        "spatial",
        "is_test",
        "training_mode",
        "consumed_inputs",
    ])?;
    let epsilon = node.attr_float_or("epsilon", 1e-5)?;
    // Before opset 9, `spatial = 0` means per-activation statistics: not supported.
    if cx.opset < 9 && node.attr_int_or("spatial", 1)? != 1 {
        return Err(node.attr_error("spatial", "only spatial = 1 is supported"));
    }
    if cx.opset >= 14 && node.attr_int_or("training_mode", 0)? != 0 {
        return Err(node.attr_error(
            "training_mode",
            "only inference (training_mode = 0) is supported",
        ));
    }
    let x_shape = cx.input_shape(0)?;
    if x_shape.len() < 2 {
        return Err(cx.error(format!("input of shape {x_shape:?} has no channel axis")));
    }
    for i in 1..5 {
        let s = cx.input_shape(i)?;
        if s != [x_shape[1]] {
            return Err(cx.error(format!(
                "parameter #{i} has shape {s:?}, expected [{}]",
                x_shape[1]
            )));
        }
    }
    let ids = (0..5)
        .map(|i| cx.input_act(i))
        .collect::<Result<Vec<_>>>()?;
    let y = cx.emit(Op::BatchNorm {
        x: ids[0],
        scale: ids[1],
        bias: ids[2],
        mean: ids[3],
        var: ids[4],
        epsilon,
    })?;
    Ok(vec![Value::Act(y)])
}
