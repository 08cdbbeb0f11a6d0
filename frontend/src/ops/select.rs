//! Selection by constant indices: `Gather` and `GatherND` (constant indices),
//! `Slice` and `Split`; and `ScatterND`, on constants only (the attention masks
//! Swin's shifted windows build in-graph).
//!
//! On constants they fold; on run-time tensors they lower to the IR's `gather`
//! (one per selected axis, then a `reshape` where `Gather` drops or adds axes).
//! `gather` is data movement: local on secret shares, free in communication.

use sci_ir::Op;

use super::shape_ops::reshape_value;
use super::{Ctx, Registry, Value};
use crate::error::Result;
use crate::fold;
use crate::shape::{self, SliceAxis};

pub(crate) fn register(reg: &mut Registry) {
    reg.op("Gather", gather);
    reg.op("GatherND", gather_nd);
    reg.op("Slice", slice);
    reg.op("Split", split);
    reg.const_op("ScatterND", scatter_nd);
}

/// `ScatterND(data, indices, updates)` on constants ([`fold::scatter_nd`]):
/// `reduction` (opset 16: `none`, `add`, `mul`; 18: also `max`, `min`).
fn scatter_nd(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    cx.node.check_known_attrs(&["reduction"])?;
    let reduction = cx.node.attr_string("reduction")?;
    let how = match (reduction.as_deref().unwrap_or("none"), cx.opset) {
        ("none", _) => fold::Scatter::Replace,
        ("add", 16..) => fold::Scatter::Add,
        ("mul", 16..) => fold::Scatter::Mul,
        ("max", 18..) => fold::Scatter::Max,
        ("min", 18..) => fold::Scatter::Min,
        (r, opset) => {
            return Err(cx.node.attr_error(
                "reduction",
                format!("'{r}' is not a reduction of ScatterND at opset {opset}"),
            ));
        }
    };
    let data = cx.const_input(0, "data; ScatterND is only supported on constants")?;
    let (indices, updates) = (cx.const_input(1, "indices")?, cx.const_input(2, "updates")?);
    fold::scatter_nd(&data, &indices, &updates, how)
        .map(|t| vec![Value::constant(t)])
        .map_err(|e| cx.error(e))
}

/// `v` selected along `axis` by `indices` (each below the dimension): folded
/// for a constant, an IR `gather` otherwise (nothing if it selects everything
/// in order).
pub(crate) fn gather_axis(
    cx: &mut Ctx<'_>,
    v: &Value,
    axis: usize,
    indices: Vec<usize>,
) -> Result<Value> {
    let dim = cx.shape_of(v)[axis];
    if indices.iter().copied().eq(0..dim) {
        return Ok(v.clone());
    }
    match v {
        Value::Const(t) => {
            let ind = crate::tensor::Tensor::from_i64(
                vec![indices.len()],
                indices.iter().map(|&i| i as i64).collect(),
            )
            .map_err(|e| cx.error(e))?;
            fold::gather(t, &ind, axis as i64)
                .map(Value::constant)
                .map_err(|e| cx.error(e))
        }
        Value::Act(x) => {
            if indices.is_empty() {
                return Err(cx.error(format!(
                    "the result is empty along axis {axis}; empty tensors are not supported"
                )));
            }
            cx.emit_value(Op::Gather {
                x: *x,
                axis,
                indices,
            })
        }
    }
}

/// `Gather(data, indices)` with constant `indices` (any shape; negative values
/// count from the end): the output shape is `data.shape[..axis]`,
/// `indices.shape`, `data.shape[axis + 1..]`.
fn gather(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    cx.node.check_known_attrs(&["axis"])?;
    let indices = cx.const_input(
        1,
        "indices; Gather on a run-time tensor needs constant indices",
    )?;
    let axis_attr = cx.node.attr_int_or("axis", 0)?;
    let data = cx.input(0)?.clone();
    if let Value::Const(t) = &data {
        return Ok(vec![Value::constant(
            fold::gather(t, &indices, axis_attr).map_err(|e| cx.error(e))?,
        )]);
    }
    let in_shape = cx.shape_of(&data);
    let axis = shape::axis(axis_attr, in_shape.len()).map_err(|e| cx.error(e))?;
    let dim = in_shape[axis];
    let ints = indices.as_ints().ok_or_else(|| {
        cx.error(format!(
            "input #1 (indices) must be an integer tensor, found {}",
            indices.dtype()
        ))
    })?;
    let flat =
        ints.iter()
            .map(|&i| {
                let j = if i < 0 { i + dim as i64 } else { i };
                usize::try_from(j).ok().filter(|&j| j < dim).ok_or_else(|| {
                    cx.error(format!("index {i} is out of range for dimension {dim}"))
                })
            })
            .collect::<Result<Vec<usize>>>()?;
    let selected = gather_axis(cx, &data, axis, flat)?;
    let mut out_shape = in_shape[..axis].to_vec();
    out_shape.extend_from_slice(indices.shape());
    out_shape.extend_from_slice(&in_shape[axis + 1..]);
    Ok(vec![reshape_value(cx, &selected, out_shape)?])
}

/// `GatherND(data, indices)` with constant `indices` of shape `[b…, m…, k]`
/// (`batch_dims` = the number of `b` axes, shared with `data`): each index tuple
/// selects the slice `data[b…, i_1, …, i_k, :]`, and the output has shape
/// `[b…, m…] ++ data.shape[batch_dims + k..]`. Lowered as `data` reshaped to
/// `[B·P, rest…]` (`B` the batch count, `P` the product of the `k` indexed
/// dimensions), one `gather` along axis 0 by the row-major flat indices, and a
/// reshape: data movement, free. Negative indices count from the end.
fn gather_nd(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    cx.node.check_known_attrs(&["batch_dims"])?;
    // Opset 12 added batch_dims.
    let batch_dims = if cx.opset >= 12 {
        cx.node.attr_int_or("batch_dims", 0)?
    } else {
        0
    };
    let indices = cx.const_input(
        1,
        "indices; GatherND on a run-time tensor needs constant indices",
    )?;
    let ints = cx.const_ints(1, "indices")?;
    let data = cx.input(0)?.clone();
    let d_shape = cx.shape_of(&data);
    let i_shape = indices.shape().to_vec();
    let b = usize::try_from(batch_dims)
        .ok()
        .filter(|&b| b < i_shape.len() && b < d_shape.len() && i_shape[..b] == d_shape[..b])
        .ok_or_else(|| {
            cx.node.attr_error(
                "batch_dims",
                format!(
                    "{batch_dims} does not fit data shape {d_shape:?} and indices shape {i_shape:?} \
                     (it must be below both ranks, on equal leading dimensions)"
                ),
            )
        })?;
    let k = i_shape[i_shape.len() - 1];
    if k == 0 || b + k > d_shape.len() {
        return Err(cx.error(format!(
            "index tuples of length {k} do not fit data of rank {} after {b} batch axes",
            d_shape.len()
        )));
    }
    let inner = &d_shape[b..b + k];
    let per_batch: usize = inner.iter().product();
    let tuples_per_batch: usize = i_shape[b..i_shape.len() - 1].iter().product();
    let mut flat = Vec::with_capacity(ints.len() / k);
    for (t, tuple) in ints.chunks(k).enumerate() {
        let mut f = t / tuples_per_batch * per_batch;
        for (&i, (&dim, stride)) in tuple.iter().zip(inner.iter().zip(shape::strides(inner))) {
            let j = if i < 0 { i + dim as i64 } else { i };
            let j = usize::try_from(j)
                .ok()
                .filter(|&j| j < dim)
                .ok_or_else(|| {
                    cx.error(format!("index {i} is out of range for dimension {dim}"))
                })?;
            f += j * stride;
        }
        flat.push(f);
    }
    let rest = &d_shape[b + k..];
    let batch: usize = d_shape[..b].iter().product();
    let mut rows = vec![batch * per_batch];
    rows.extend_from_slice(rest);
    let rows = reshape_value(cx, &data, rows)?;
    let selected = gather_axis(cx, &rows, 0, flat)?;
    let mut out_shape = i_shape[..i_shape.len() - 1].to_vec();
    out_shape.extend_from_slice(rest);
    Ok(vec![reshape_value(cx, &selected, out_shape)?])
}

/// `v` sliced along every axis of `axes` (one `gather` each).
fn slice_value(cx: &mut Ctx<'_>, v: &Value, axes: &[SliceAxis]) -> Result<Value> {
    let mut v = v.clone();
    for a in axes {
        let indices = (0..a.len)
            .map(|k| (a.start + k as i64 * a.step) as usize)
            .collect();
        v = gather_axis(cx, &v, a.axis, indices)?;
    }
    Ok(v)
}

fn slice(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let n = cx.node;
    // Opset 10 moved starts/ends/axes from attributes to inputs and added steps.
    let (starts, ends, axes, steps) = if cx.opset < 10 {
        n.check_known_attrs(&["starts", "ends", "axes"])?;
        let starts = n
            .attr_ints("starts")?
            .ok_or_else(|| n.attr_error("starts", "missing"))?;
        let ends = n
            .attr_ints("ends")?
            .ok_or_else(|| n.attr_error("ends", "missing"))?;
        (starts, ends, n.attr_ints("axes")?, None)
    } else {
        (
            cx.const_ints(1, "starts")?,
            cx.const_ints(2, "ends")?,
            cx.opt_const_ints(3, "axes")?,
            cx.opt_const_ints(4, "steps")?,
        )
    };
    let data = cx.input(0)?.clone();
    let axes = shape::slice(
        &cx.shape_of(&data),
        &starts,
        &ends,
        axes.as_deref(),
        steps.as_deref(),
    )
    .map_err(|e| cx.error(e))?;
    if let Value::Const(t) = &data {
        return Ok(vec![Value::constant(
            fold::slice(t, &axes).map_err(|e| cx.error(e))?,
        )]);
    }
    Ok(vec![slice_value(cx, &data, &axes)?])
}

/// `Split` along `axis` into consecutive parts, one per output: sizes from
/// `split` (an attribute before opset 13, an input from 13), else equal parts
/// (`num_outputs` from 18, where the last part may be smaller; the number of
/// outputs before).
fn split(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let n = cx.node;
    n.check_known_attrs(&["axis", "split", "num_outputs"])?;
    let data = cx.input(0)?.clone();
    let in_shape = cx.shape_of(&data);
    let axis = shape::axis(n.attr_int_or("axis", 0)?, in_shape.len()).map_err(|e| cx.error(e))?;
    let dim = in_shape[axis];
    let given = if cx.opset >= 13 || cx.opt_input(1).is_some() {
        cx.opt_const_ints(1, "split")?
    } else {
        n.attr_ints("split")?
    };
    let outputs = n.outputs.len();
    let sizes: Vec<usize> = match given {
        Some(s) => s
            .iter()
            .map(|&k| usize::try_from(k).map_err(|_| cx.error(format!("negative split size {k}"))))
            .collect::<Result<_>>()?,
        None => {
            let parts = if cx.opset >= 18 {
                let k = n
                    .attr_int("num_outputs")?
                    .ok_or_else(|| n.attr_error("num_outputs", "missing (and no split input)"))?;
                usize::try_from(k)
                    .ok()
                    .filter(|&k| k >= 1)
                    .ok_or_else(|| n.attr_error("num_outputs", format!("{k} is not positive")))?
            } else {
                outputs
            };
            let chunk = dim.div_ceil(parts);
            if cx.opset < 18 && !dim.is_multiple_of(parts) {
                return Err(cx.error(format!(
                    "dimension {axis} of size {dim} does not split into {parts} equal parts"
                )));
            }
            (0..parts)
                .map(|k| chunk.min(dim - (k * chunk).min(dim)))
                .collect()
        }
    };
    if sizes.len() != outputs || sizes.iter().sum::<usize>() != dim {
        return Err(cx.error(format!(
            "split sizes {sizes:?} do not cover dimension {axis} of size {dim} with {outputs} outputs"
        )));
    }
    let mut start = 0;
    let mut out = Vec::with_capacity(outputs);
    for len in sizes {
        out.push(gather_axis(
            cx,
            &data,
            axis,
            (start..start + len).collect(),
        )?);
        start += len;
    }
    Ok(out)
}
