//! Data-movement ops and the constant shape subgraphs exporters emit.
//!
//! `Constant`, `ConstantOfShape`, `Shape`, `Size` and `Range` are evaluated at
//! compile time (`Shape` of a run-time tensor is known because every shape is);
//! `Reshape`, `Flatten`, `Transpose`, `Concat`,
//! `Squeeze`, `Unsqueeze` fold on constants and lower to the IR's `reshape`,
//! `flatten`, `transpose` and `concat` otherwise; `Identity` and `Dropout` lower
//! to `identity`; `Cast` between float types is the identity.

use sci_ir::Op;

use super::{Ctx, Registry, Value};
use crate::error::Result;
use crate::fold;
use crate::shape;
use crate::tensor::{DType, Tensor};

pub(crate) fn register(reg: &mut Registry) {
    reg.const_op("Constant", constant);
    reg.const_op("ConstantOfShape", constant_of_shape);
    reg.const_op("Shape", shape_op);
    reg.const_op("Size", size);
    reg.const_op("Range", range);
    reg.op("Reshape", reshape);
    reg.op("Flatten", flatten);
    reg.op("Transpose", transpose);
    reg.op("Concat", concat);
    reg.op("Squeeze", squeeze);
    reg.op("Unsqueeze", unsqueeze);
    reg.op("Identity", identity);
    reg.op("Dropout", dropout);
    reg.op("Cast", cast);
}

/// Wraps a folding result, naming the node on error.
fn folded(cx: &Ctx<'_>, r: std::result::Result<Tensor, String>) -> Result<Vec<Value>> {
    r.map(|t| vec![Value::constant(t)]).map_err(|e| cx.error(e))
}

/// `v` with a new shape: folded for constants, an IR `reshape` otherwise.
pub(crate) fn reshape_value(cx: &mut Ctx<'_>, v: &Value, new_shape: Vec<usize>) -> Result<Value> {
    match v {
        Value::Const(t) => t
            .reshaped(new_shape)
            .map(Value::constant)
            .map_err(|e| cx.error(e)),
        Value::Act(x) => {
            if cx.shape_of(v) == new_shape {
                return Ok(v.clone());
            }
            cx.emit_value(Op::Reshape {
                x: *x,
                shape: new_shape,
            })
        }
    }
}

fn constant(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let n = cx.node;
    // Opset 12 added the scalar/list forms; sparse_value (11+) and strings are not supported.
    let mut found: Vec<Tensor> = Vec::new();
    if let Some(t) = n.attr_tensor("value")? {
        let mut t = t.clone();
        if t.name.as_deref().unwrap_or("").is_empty() {
            t.name = n.outputs.first().cloned();
        }
        found.push(Tensor::from_proto(&t, None)?);
    }
    if cx.opset >= 12 {
        let err = |e: String| cx.error(e);
        if let Some(f) = n.attr_float("value_float")? {
            found.push(Tensor::from_f32(vec![], &[f]).map_err(err)?);
        }
        if let Some(fs) = n.attr_floats("value_floats")? {
            found.push(Tensor::from_f32(vec![fs.len()], &fs).map_err(err)?);
        }
        if let Some(i) = n.attr_int("value_int")? {
            found.push(Tensor::from_i64(vec![], vec![i]).map_err(err)?);
        }
        if let Some(is) = n.attr_ints("value_ints")? {
            found.push(Tensor::from_i64(vec![is.len()], is).map_err(err)?);
        }
    }
    for unsupported in ["sparse_value", "value_string", "value_strings"] {
        if n.has_attr(unsupported) {
            return Err(n.attr_error(
                unsupported,
                "not supported (supported: value, value_float, value_floats, value_int, value_ints)",
            ));
        }
    }
    match found.len() {
        1 => Ok(found.into_iter().map(Value::constant).collect()),
        0 => Err(n.attr_error(
            "value",
            "missing: a Constant needs exactly one value attribute",
        )),
        _ => Err(n.attr_error(
            "value",
            "a Constant needs exactly one value attribute, found several",
        )),
    }
}

fn constant_of_shape(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let shape_t = cx.const_input(0, "shape")?;
    let value = match cx.node.attr_tensor("value")? {
        Some(p) => Some(Tensor::from_proto(p, None)?),
        None => None,
    };
    folded(cx, fold::constant_of_shape(&shape_t, value.as_ref()))
}

fn shape_op(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let dims: Vec<i64> = cx.input_shape(0)?.iter().map(|&d| d as i64).collect();
    let rank = dims.len() as i64;
    // Opset 15 added `start` and `end` (clamped like Slice).
    let (start, end) = if cx.opset >= 15 {
        (
            cx.node.attr_int_or("start", 0)?,
            cx.node.attr_int_or("end", rank)?,
        )
    } else {
        (0, rank)
    };
    let norm = |v: i64| (if v < 0 { v + rank } else { v }).clamp(0, rank) as usize;
    let (s, e) = (norm(start), norm(end));
    let dims = if s < e { dims[s..e].to_vec() } else { vec![] };
    folded(cx, Tensor::from_i64(vec![dims.len()], dims))
}

fn size(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let n = shape::numel(&cx.input_shape(0)?).map_err(|e| cx.error(e))?;
    folded(cx, Tensor::from_i64(vec![], vec![n as i64]))
}

/// `Range`. From opset 27 float16/bfloat16 operands are allowed, computed in
/// the precision `stash_type` names: only 1 (FLOAT, the default) is supported,
/// which is what [`fold::range`] does for them.
fn range(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let (s, l, d) = (
        cx.const_input(0, "start")?,
        cx.const_input(1, "limit")?,
        cx.const_input(2, "delta")?,
    );
    if cx.opset >= 27 {
        cx.node.check_known_attrs(&["stash_type"])?;
        let stash = cx.node.attr_int_or("stash_type", 1)?;
        if matches!(s.dtype(), DType::F16 | DType::BF16) && stash != 1 {
            return Err(cx.node.attr_error(
                "stash_type",
                format!("{stash} is not supported (supported: 1, FLOAT)"),
            ));
        }
    }
    folded(cx, fold::range(&s, &l, &d))
}

fn reshape(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let in_shape = cx.input_shape(0)?;
    // Opset 5 moved the target shape from an attribute to an input; 14 added allowzero.
    let target = if cx.opset < 5 {
        cx.node
            .attr_ints("shape")?
            .ok_or_else(|| cx.node.attr_error("shape", "missing"))?
    } else {
        cx.const_ints(1, "shape")?
    };
    let allowzero = cx.opset >= 14 && cx.node.attr_int_or("allowzero", 0)? != 0;
    let out = shape::reshape(&in_shape, &target, allowzero).map_err(|e| cx.error(e))?;
    let x = cx.input(0)?.clone();
    Ok(vec![reshape_value(cx, &x, out)?])
}

fn flatten(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let in_shape = cx.input_shape(0)?;
    let axis = cx.node.attr_int_or("axis", 1)?;
    let out = shape::flatten(&in_shape, axis).map_err(|e| cx.node.attr_error("axis", e))?;
    match cx.input(0)?.clone() {
        v @ Value::Const(_) => Ok(vec![reshape_value(cx, &v, out)?]),
        Value::Act(x) => {
            let axis = if axis < 0 {
                axis + in_shape.len() as i64
            } else {
                axis
            } as usize;
            Ok(vec![cx.emit_value(Op::Flatten { x, axis })?])
        }
    }
}

fn transpose(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let perm = cx.node.attr_ints("perm")?;
    match cx.input(0)?.clone() {
        Value::Const(t) => folded(cx, fold::transpose(&t, perm.as_deref())),
        Value::Act(x) => {
            let in_shape = cx.input_shape(0)?;
            let (perm, _) = shape::transpose(&in_shape, perm.as_deref())
                .map_err(|e| cx.node.attr_error("perm", e))?;
            Ok(vec![cx.emit_value(Op::Transpose { x, perm })?])
        }
    }
}

fn concat(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    // Opset 4 made `axis` required; before, it defaults to 1.
    let axis = match cx.node.attr_int("axis")? {
        Some(a) => a,
        None if cx.opset < 4 => 1,
        None => return Err(cx.node.attr_error("axis", "missing")),
    };
    let n = cx.num_inputs();
    if cx.all_const() {
        let ts = (0..n)
            .map(|i| cx.const_input(i, "operand"))
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<&Tensor> = ts.iter().map(|t| t.as_ref()).collect();
        return folded(cx, fold::concat(&refs, axis));
    }
    let rank = cx.input_shape(0)?.len();
    let ax = shape::axis(axis, rank).map_err(|e| cx.node.attr_error("axis", e))?;
    let mut xs = Vec::with_capacity(n);
    for i in 0..n {
        // Empty constant operands (exporters sometimes concatenate those) are dropped.
        if let Value::Const(t) = cx.input(i)?
            && t.is_empty()
        {
            continue;
        }
        xs.push(cx.input_act(i)?);
    }
    Ok(vec![cx.emit_value(Op::Concat { xs, axis: ax })?])
}

fn squeeze(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    // Opset 13 moved `axes` from an attribute to an optional input.
    let axes = if cx.opset < 13 {
        cx.node.attr_ints("axes")?
    } else {
        cx.opt_const_ints(1, "axes")?
    };
    let in_shape = cx.input_shape(0)?;
    let out = shape::squeeze(&in_shape, axes.as_deref()).map_err(|e| cx.error(e))?;
    let x = cx.input(0)?.clone();
    Ok(vec![reshape_value(cx, &x, out)?])
}

fn unsqueeze(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    // Opset 13 moved `axes` from a (required) attribute to a (required) input.
    let axes = if cx.opset < 13 {
        cx.node
            .attr_ints("axes")?
            .ok_or_else(|| cx.node.attr_error("axes", "missing"))?
    } else {
        cx.const_ints(1, "axes")?
    };
    let in_shape = cx.input_shape(0)?;
    let out = shape::unsqueeze(&in_shape, &axes).map_err(|e| cx.error(e))?;
    let x = cx.input(0)?.clone();
    Ok(vec![reshape_value(cx, &x, out)?])
}

/// The identity: constants pass through, run-time values become an IR `identity`
/// (removed by the identity-elimination pass).
fn identity_of(cx: &mut Ctx<'_>, v: Value) -> Result<Value> {
    match v {
        Value::Const(_) => Ok(v),
        Value::Act(x) => cx.emit_value(Op::Identity { x }),
    }
}

fn identity(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let v = cx.input(0)?.clone();
    Ok(vec![identity_of(cx, v)?])
}

fn dropout(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    // Inference: the identity (the mask output is not produced; the driver rejects a
    // needed node that reads it). Opset 12 made training_mode an input: it must be false.
    // Before opset 7, `is_test` is ignored: exported inference graphs mean the identity.
    if cx.opset >= 12
        && let Some(t) = cx.opt_const_input(2, "training_mode")?
        && t.to_f64().iter().any(|&v| v != 0.0)
    {
        return Err(cx.error("training_mode = true is not supported (inference only)"));
    }
    let v = cx.input(0)?.clone();
    Ok(vec![identity_of(cx, v)?])
}

fn cast(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let n = cx.node;
    // Opset 6 made `to` a TensorProto.DataType code; before, it is the type's name.
    let to = if cx.opset < 6 {
        let name = n
            .attr_string("to")?
            .ok_or_else(|| n.attr_error("to", "missing"))?;
        crate::pb::tensor_proto::DataType::from_str_name(&name.to_ascii_uppercase())
            .ok_or_else(|| n.attr_error("to", format!("unknown data type '{name}'")))?
            as i32
    } else {
        let to = n
            .attr_int("to")?
            .ok_or_else(|| n.attr_error("to", "missing"))?;
        i32::try_from(to).map_err(|_| n.attr_error("to", format!("invalid data type {to}")))?
    };
    let target = DType::from_onnx(to, &format!("output of {}", n.desc))?;
    match cx.input(0)?.clone() {
        Value::Const(t) => Ok(vec![Value::constant(t.cast(target))]),
        v @ Value::Act(_) if target.is_float() => Ok(vec![v]),
        Value::Act(_) => Err(n.attr_error(
            "to",
            format!(
                "Cast of a run-time tensor to {target} is not supported (supported: FLOAT, DOUBLE, FLOAT16, BFLOAT16); \
                 if this is post-processing, compile up to its input with --output {}",
                cx.input_name(0)
            ),
        )),
    }
}
