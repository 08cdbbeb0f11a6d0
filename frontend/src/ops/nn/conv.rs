//! `Conv` → IR `conv2d` (1-D as 2-D), with its optional bias.

use sci_ir::Op;

use super::window::{from_4d, spatial_dims, to_4d, window};
use crate::error::Result;
use crate::ops::shape_ops::reshape_value;
use crate::ops::{Ctx, Value};

pub(super) fn conv(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let node = cx.node;
    node.check_known_attrs(&[
        "auto_pad",
        "dilations",
        "group",
        "kernel_shape",
        "pads",
        "strides",
    ])?;
    let x_shape = cx.input_shape(0)?;
    let spatial = spatial_dims(cx, &x_shape)?;
    let w_shape = cx.input_shape(1)?;
    if w_shape.len() != x_shape.len() {
        return Err(cx.error(format!(
            "weight shape {w_shape:?} does not match input shape {x_shape:?}"
        )));
    }
    let kernel = w_shape[2..].to_vec();
    if let Some(k) = node.attr_ints("kernel_shape")?
        && k.iter().map(|&v| v as usize).ne(kernel.iter().copied())
    {
        return Err(node.attr_error(
            "kernel_shape",
            format!("{k:?} differs from the weight's {kernel:?}"),
        ));
    }
    let groups = node.attr_int_or("group", 1)?;
    let groups = usize::try_from(groups)
        .ok()
        .filter(|&g| g >= 1)
        .ok_or_else(|| node.attr_error("group", format!("must be at least 1, found {groups}")))?;
    let win = window(cx, &spatial, kernel, true)?;
    let (_, strides, dilations, pads) = win.to_2d();
    let x = cx.input(0)?.clone();
    let xa = to_4d(cx, &x)?;
    let w = cx.input(1)?.clone();
    let wa = if w_shape.len() == 3 {
        let v = reshape_value(cx, &w, vec![w_shape[0], w_shape[1], 1, w_shape[2]])?;
        cx.act(&v, "W")?
    } else {
        cx.input_act(1)?
    };
    let bias = match cx.opt_input(2) {
        Some(_) => Some(cx.input_act(2)?),
        None => None,
    };
    let y = cx.emit(Op::Conv2d {
        x: xa,
        w: wa,
        bias,
        conv: sci_ir::Conv2d {
            strides,
            pads,
            dilations,
            groups,
        },
    })?;
    Ok(vec![from_4d(cx, y, x_shape.len())?])
}
