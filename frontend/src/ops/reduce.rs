//! Sums and means over any axes: `ReduceSum` and `ReduceMean`.
//!
//! A `ReduceMean` over exactly the spatial axes of an NCHW/NCW tensor stays the
//! IR's `global_avgpool` (see `nn::pool`). Every other reduction is a halving
//! tree per reduced axis: the first half of the axis (a `gather`) plus the second
//! half (another `gather`), the odd last entry concatenated back, until one entry
//! is left — `⌈log2 d⌉` rounds of local, exact, communication-free adds and data
//! movement. A mean then divides by the public count of summed entries
//! (`div_public`, the paper's `rdiv`, one truncation protocol). Constants fold.

use sci_ir::Op;

use super::nn::spatial_mean;
use super::select::gather_axis;
use super::shape_ops::reshape_value;
use super::{Ctx, Registry, Value};
use crate::error::Result;
use crate::fold::{self, BinOp};
use crate::shape;
use crate::tensor::Tensor;

pub(crate) fn register(reg: &mut Registry) {
    reg.op("ReduceSum", |cx| reduce(cx, false));
    reg.op("ReduceMean", |cx| reduce(cx, true));
}

/// `a + b` of two values of equal shape: folded on constants, an IR `add` otherwise.
fn add(cx: &mut Ctx<'_>, a: &Value, b: &Value) -> Result<Value> {
    if let (Value::Const(x), Value::Const(y)) = (a, b) {
        return fold::binary(x, y, BinOp::Add)
            .map(Value::constant)
            .map_err(|e| cx.error(e));
    }
    let (a, b) = (cx.act(a, "lhs")?, cx.act(b, "rhs")?);
    cx.emit_value(Op::Add { a, b })
}

/// `v` summed along `axis`, which is kept with size 1 (a halving tree of adds).
fn sum_axis(cx: &mut Ctx<'_>, mut v: Value, axis: usize) -> Result<Value> {
    loop {
        let d = cx.shape_of(&v)[axis];
        if d <= 1 {
            return Ok(v);
        }
        let h = d / 2;
        let lo = gather_axis(cx, &v, axis, (0..h).collect())?;
        let hi = gather_axis(cx, &v, axis, (h..2 * h).collect())?;
        let mut s = add(cx, &lo, &hi)?;
        if d % 2 == 1 {
            let last = gather_axis(cx, &v, axis, vec![d - 1])?;
            s = match (&s, &last) {
                (Value::Const(a), Value::Const(b)) => {
                    let parts = [a.as_ref(), b.as_ref()];
                    Value::constant(fold::concat(&parts, axis as i64).map_err(|e| cx.error(e))?)
                }
                _ => {
                    let xs = vec![cx.act(&s, "sum")?, cx.act(&last, "last")?];
                    cx.emit_value(Op::Concat { xs, axis })?
                }
            };
        }
        v = s;
    }
}

/// `v` summed along each of `axes`, which are kept with size 1.
fn sum_axes(cx: &mut Ctx<'_>, mut v: Value, axes: &[usize]) -> Result<Value> {
    for &axis in axes {
        v = sum_axis(cx, v, axis)?;
    }
    Ok(v)
}

/// The mean of `v` along `axes` (kept with size 1): the sum trees, then one
/// `div_public` by the count of summed entries (folded on a constant).
pub(crate) fn mean_axes(cx: &mut Ctx<'_>, v: Value, axes: &[usize]) -> Result<Value> {
    let shape = cx.shape_of(&v);
    let count: usize = axes.iter().map(|&a| shape[a]).product();
    match sum_axes(cx, v, axes)? {
        Value::Const(t) => {
            let d = Tensor::from_f32(vec![], &[count as f32]).map_err(|e| cx.error(e))?;
            let q = fold::binary(&t, &d, BinOp::Div).map_err(|e| cx.error(e))?;
            Ok(Value::constant(q))
        }
        Value::Act(x) => cx.emit_value(Op::DivPublic { x, d: count as u64 }),
    }
}

/// `ReduceSum` / `ReduceMean` (`mean`): `axes` as an attribute before opset 13
/// (`ReduceSum`) or 18 (`ReduceMean`), a constant input from then on (with
/// `noop_with_empty_axes`); `keepdims` (default 1). No axes: all of them.
fn reduce(cx: &mut Ctx<'_>, mean: bool) -> Result<Vec<Value>> {
    let node = cx.node;
    let axes_as_input = cx.opset >= if mean { 18 } else { 13 };
    let axes = if axes_as_input {
        node.check_known_attrs(&["keepdims", "noop_with_empty_axes"])?;
        cx.opt_const_ints(1, "axes")?
    } else {
        node.check_known_attrs(&["axes", "keepdims"])?;
        node.attr_ints("axes")?
    };
    let keepdims = node.attr_int_or("keepdims", 1)? != 0;
    let noop_empty = axes_as_input && node.attr_int_or("noop_with_empty_axes", 0)? != 0;
    let x = cx.input(0)?.clone();
    let x_shape = cx.shape_of(&x);
    let rank = x_shape.len();
    let mut axes = match axes {
        Some(a) if !a.is_empty() => a
            .iter()
            .map(|&v| shape::axis(v, rank))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| cx.error(e))?,
        _ if noop_empty => return Ok(vec![x]),
        _ => (0..rank).collect(),
    };
    axes.sort_unstable();
    axes.dedup();
    if mean
        && matches!(rank, 3 | 4)
        && axes.iter().copied().eq(2..rank)
        && matches!(x, Value::Act(_))
    {
        return Ok(vec![spatial_mean(cx, &x, keepdims)?]);
    }
    let v = if mean {
        mean_axes(cx, x.clone(), &axes)?
    } else {
        sum_axes(cx, x.clone(), &axes)?
    };
    let out: Vec<usize> = (0..rank)
        .filter_map(|a| match (axes.contains(&a), keepdims) {
            (false, _) => Some(x_shape[a]),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect();
    Ok(vec![reshape_value(cx, &v, out)?])
}
