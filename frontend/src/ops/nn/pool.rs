//! `MaxPool`, `AveragePool`, `GlobalAveragePool`, `GlobalMaxPool` and a
//! spatial `ReduceMean` → IR `maxpool`, `avgpool`, `global_avgpool`.

use sci_ir::{Op, Pool2d};

use super::window::{from_4d, spatial_dims, to_4d, window};
use crate::error::Result;
use crate::ops::shape_ops::reshape_value;
use crate::ops::{Ctx, Value};

/// Max or average pooling.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum PoolKind {
    Max,
    Avg,
}

pub(super) fn pool(cx: &mut Ctx<'_>, kind: PoolKind) -> Result<Vec<Value>> {
    let node = cx.node;
    let x_shape = cx.input_shape(0)?;
    let spatial = spatial_dims(cx, &x_shape)?;
    let kernel = node
        .attr_ints("kernel_shape")?
        .ok_or_else(|| node.attr_error("kernel_shape", "missing"))?;
    if kernel.len() != spatial.len() || kernel.iter().any(|&k| k < 1) {
        return Err(node.attr_error(
            "kernel_shape",
            format!("{kernel:?} does not fit input {x_shape:?}"),
        ));
    }
    let kernel: Vec<usize> = kernel.iter().map(|&k| k as usize).collect();
    // ceil_mode: opset 10. MaxPool dilations: opset 10; AveragePool dilations: 19.
    // count_include_pad: opset 7. storage_order (MaxPool, 8+) only affects Indices.
    let ceil_mode = cx.opset >= 10 && node.attr_int_or("ceil_mode", 0)? != 0;
    let mut known = vec![
        "auto_pad",
        "kernel_shape",
        "pads",
        "strides",
        "ceil_mode",
        "dilations",
    ];
    known.push(if kind == PoolKind::Max {
        "storage_order"
    } else {
        "count_include_pad"
    });
    node.check_known_attrs(&known)?;
    let win = window(cx, &spatial, kernel, true)?;
    if win.dilations.iter().any(|&d| d != 1) {
        return Err(node.attr_error(
            "dilations",
            format!("{:?} is not supported (supported: all 1)", win.dilations),
        ));
    }
    let (kernel, strides, _, pads) = win.to_2d();
    let pool = Pool2d {
        kernel,
        strides,
        pads,
        ceil_mode,
    };
    let x = cx.input(0)?.clone();
    let xa = to_4d(cx, &x)?;
    let y = match kind {
        PoolKind::Max => cx.emit(Op::MaxPool { x: xa, pool })?,
        PoolKind::Avg => {
            let count_include_pad = cx.opset >= 7 && node.attr_int_or("count_include_pad", 0)? != 0;
            cx.emit(Op::AvgPool {
                x: xa,
                pool,
                count_include_pad,
            })?
        }
    };
    Ok(vec![from_4d(cx, y, x_shape.len())?])
}

pub(super) fn global_pool(cx: &mut Ctx<'_>, kind: PoolKind) -> Result<Vec<Value>> {
    cx.node.check_known_attrs(&[])?;
    let x_shape = cx.input_shape(0)?;
    spatial_dims(cx, &x_shape)?;
    let x = cx.input(0)?.clone();
    let xa = to_4d(cx, &x)?;
    let y = match kind {
        PoolKind::Avg => cx.emit(Op::GlobalAvgPool { x: xa })?,
        PoolKind::Max => {
            let hw = if x_shape.len() == 3 {
                [1, x_shape[2]]
            } else {
                [x_shape[2], x_shape[3]]
            };
            let pool = Pool2d {
                kernel: hw,
                strides: [1, 1],
                pads: [0; 4],
                ceil_mode: false,
            };
            cx.emit(Op::MaxPool { x: xa, pool })?
        }
    };
    Ok(vec![from_4d(cx, y, x_shape.len())?])
}

/// The mean over the spatial axes of an NCHW (or NCW) run-time tensor `x` (ONNX
/// `ReduceMean` over them, what exporters emit for Keras'
/// `GlobalAveragePooling2D`): a global average pool, reshaped to drop the axes
/// unless `keepdims`.
pub(crate) fn spatial_mean(cx: &mut Ctx<'_>, x: &Value, keepdims: bool) -> Result<Value> {
    let x_shape = cx.shape_of(x);
    let rank = x_shape.len();
    let xa = to_4d(cx, x)?;
    let y = cx.emit(Op::GlobalAvgPool { x: xa })?;
    let mut out = x_shape[..2].to_vec();
    if keepdims {
        out.extend(std::iter::repeat_n(1, rank - 2));
    }
    reshape_value(cx, &Value::Act(y), out)
}
