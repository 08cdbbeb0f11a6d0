//! Elementwise arithmetic.
//!
//! `Add`, `Sub` and variadic `Sum` lower to the IR's broadcasting `add`/`sub`
//! (between run-time tensors or with a constant); `Mul` to the IR `mul` (by a server
//! constant: a product with the weights; of two run-time tensors: a secret product);
//! `Div` by a constant lowers to `div_public` when the divisor is one positive
//! integer, else to `mul` by the reciprocal. Variadic `Max`/`Min` with a run-time
//! operand lower pairwise to ReLUs: `max(a, b) = b + relu(a − b)`,
//! `min(a, b) = a − relu(a − b)` (exact on fixed-point values).
//! Before opset 7 these ops broadcast only with `broadcast = 1`, aligning the
//! second operand at `axis`; that legacy form is converted to numpy broadcasting.
//! The decomposed layer normalisation of the legacy exporter (`ReduceMean`, `Sub`,
//! `Pow(·, 2)`, `ReduceMean`, `Add ε`, `Sqrt`, `Div`): `Pow` of a run-time tensor by the
//! constant exponent 2 is its secret square (`mul x, x`); `Sqrt` of a run-time tensor
//! `b` is `b·rsqrt(b)` (the IR's `rsqrt`, then a secret product); and `Div` of a run-time
//! tensor by such a square root is `a·rsqrt(b)` (the product `b·rsqrt(b)` is then dead
//! code). Any other `Div` by a run-time tensor is an error naming the node.
//! The other ops here (`Neg`, `Equal`, `Where`, `Mod`, ...) appear in exporters'
//! shape and weight computations and are evaluated on constants only.

use sci_ir::Op;

use super::shape_ops::reshape_value;
use super::{Ctx, Registry, Value};
use crate::error::Result;
use crate::fold::{self, BinOp, UnOp};
use crate::shape;
use crate::tensor::{DType, Tensor};

pub(crate) fn register(reg: &mut Registry) {
    reg.op("Add", |cx| binary(cx, BinOp::Add));
    reg.op("Sub", |cx| binary(cx, BinOp::Sub));
    reg.op("Mul", |cx| binary(cx, BinOp::Mul));
    reg.op("Div", |cx| binary(cx, BinOp::Div));
    reg.op("Sum", sum);
    reg.const_op("Equal", |cx| binary(cx, BinOp::Equal));
    reg.const_op("Less", |cx| binary(cx, BinOp::Less));
    reg.const_op("Greater", |cx| binary(cx, BinOp::Greater));
    reg.op("Max", |cx| extremum(cx, BinOp::Max));
    reg.op("Min", |cx| extremum(cx, BinOp::Min));
    reg.const_op("Neg", |cx| unary_const(cx, UnOp::Neg));
    reg.op("Sqrt", sqrt);
    reg.op("Pow", pow);
    reg.const_op("Reciprocal", |cx| unary_const(cx, UnOp::Reciprocal));
    reg.const_op("Abs", |cx| unary_const(cx, UnOp::Abs));
    reg.const_op("Floor", |cx| unary_const(cx, UnOp::Floor));
    reg.const_op("Ceil", |cx| unary_const(cx, UnOp::Ceil));
    reg.const_op("Not", |cx| unary_const(cx, UnOp::Not));
    reg.const_op("Where", where_op);
    reg.const_op("Mod", |cx| {
        let op = if cx.node.attr_int_or("fmod", 0)? == 0 {
            BinOp::Mod
        } else {
            BinOp::Fmod
        };
        binary(cx, op)
    });
}

/// Before opset 7, `broadcast = 1` broadcasts `B` to `A`'s shape with `B`'s
/// dimensions aligned at `axis` (default: trailing); rewritten as a reshape of `B`
/// to `A`'s rank so that numpy broadcasting gives the same result.
fn legacy_broadcast(cx: &mut Ctx<'_>, a_shape: &[usize], b: Value) -> Result<Value> {
    let b_shape = cx.shape_of(&b);
    if cx.node.attr_int_or("broadcast", 0)? == 0 {
        if a_shape != b_shape.as_slice() {
            return Err(cx.node.attr_error(
                "broadcast",
                format!("operand shapes {a_shape:?} and {b_shape:?} differ but broadcast = 0"),
            ));
        }
        return Ok(b);
    }
    let Some(axis) = cx.node.attr_int("axis")? else {
        return Ok(b);
    };
    let ax = shape::axis(axis, a_shape.len()).map_err(|e| cx.node.attr_error("axis", e))?;
    if ax + b_shape.len() > a_shape.len() {
        return Err(cx.node.attr_error(
            "axis",
            format!("{b_shape:?} does not fit {a_shape:?} at axis {ax}"),
        ));
    }
    let mut aligned = vec![1; ax];
    aligned.extend_from_slice(&b_shape);
    aligned.resize(a_shape.len(), 1);
    reshape_value(cx, &b, aligned)
}

/// An operand of a binary op: its value, and the node input it is exactly equal
/// to (so that a constant input becomes the IR constant named after that tensor).
struct Operand {
    v: Value,
    input: Option<usize>,
}

impl Operand {
    fn of_input(cx: &Ctx<'_>, i: usize) -> Result<Operand> {
        Ok(Operand {
            v: cx.input(i)?.clone(),
            input: Some(i),
        })
    }

    /// The operand as an IR value.
    fn act(&self, cx: &mut Ctx<'_>, suffix: &str) -> Result<sci_ir::ValueId> {
        match self.input {
            Some(i) => cx.input_act(i),
            None => cx.act(&self.v, suffix),
        }
    }
}

/// The two operands of a binary op, with legacy broadcasting resolved.
fn operands(cx: &mut Ctx<'_>) -> Result<(Operand, Operand)> {
    let a = Operand::of_input(cx, 0)?;
    let mut b = Operand::of_input(cx, 1)?;
    if cx.opset < 7 {
        let a_shape = cx.shape_of(&a.v);
        let aligned = legacy_broadcast(cx, &a_shape, b.v.clone())?;
        if cx.shape_of(&aligned) != cx.shape_of(&b.v) {
            b = Operand {
                v: aligned,
                input: None,
            };
        }
    }
    Ok((a, b))
}

fn binary(cx: &mut Ctx<'_>, op: BinOp) -> Result<Vec<Value>> {
    let (a, b) = operands(cx)?;
    Ok(vec![combine(cx, op, &a, &b)?])
}

/// `a op b`: folded if both are constant, else lowered to the IR.
fn combine(cx: &mut Ctx<'_>, op: BinOp, a: &Operand, b: &Operand) -> Result<Value> {
    let out_shape =
        shape::broadcast(&cx.shape_of(&a.v), &cx.shape_of(&b.v)).map_err(|e| cx.error(e))?;
    match (op, &a.v, &b.v) {
        (_, Value::Const(x), Value::Const(y)) => fold::binary(x, y, op)
            .map(Value::constant)
            .map_err(|e| cx.error(e)),
        (BinOp::Add | BinOp::Sub, _, _) => {
            let (x, y) = (a.act(cx, "A")?, b.act(cx, "B")?);
            let ir = if op == BinOp::Add {
                Op::Add { a: x, b: y }
            } else {
                Op::Sub { a: x, b: y }
            };
            cx.emit_value(ir)
        }
        (BinOp::Max | BinOp::Min, _, _) => {
            let (x, y) = (a.act(cx, "A")?, b.act(cx, "B")?);
            let d = cx.emit(Op::Sub { a: x, b: y })?;
            let r = cx.emit(Op::Relu { x: d })?;
            cx.emit_value(if op == BinOp::Max {
                Op::Add { a: y, b: r }
            } else {
                Op::Sub { a: x, b: r }
            })
        }
        (BinOp::Mul, _, _) => {
            let (x, y) = (a.act(cx, "A")?, b.act(cx, "B")?);
            cx.emit_value(Op::Mul { a: x, b: y })
        }
        (BinOp::Div, Value::Act(x), Value::Const(d)) => {
            if let Some(k) = single_positive_integer(d)
                && out_shape == cx.shape_of(&a.v)
            {
                return cx.emit_value(Op::DivPublic { x: *x, d: k });
            }
            // x / d = x · (1/d), with 1/d rounded to the element type.
            let recip = fold::unary(d, UnOp::Reciprocal).map_err(|e| cx.error(e))?;
            let r = cx.act(&Value::constant(recip), "reciprocal")?;
            cx.emit_value(Op::Mul { a: *x, b: r })
        }
        (BinOp::Div, _, Value::Act(d)) => match *cx.ir_op(*d) {
            // a / Sqrt(b) with Sqrt(b) lowered to b·rsqrt(b): a·rsqrt(b).
            Op::Mul { a: b, b: r } if matches!(*cx.ir_op(r), Op::Rsqrt { x } if x == b) => {
                let x = a.act(cx, "A")?;
                cx.emit_value(Op::Mul { a: x, b: r })
            }
            _ => Err(cx.error(
                "Div is only supported with a constant divisor or by Sqrt of a run-time tensor                  (supported: run-time tensor / constant, a / Sqrt(b))",
            )),
        },
        _ => Err(cx.error(format!(
            "{op:?} is only supported on constants (it appears in shape computations)"
        ))),
    }
}

/// If every element of `d` is the same positive integer (up to 2^24, so that it is
/// exact in f32), that integer.
fn single_positive_integer(d: &Tensor) -> Option<u64> {
    let v = d.to_f64();
    let first = *v.first()?;
    (v.iter().all(|&x| x == first)
        && first >= 1.0
        && first <= f64::from(1u32 << 24)
        && first.fract() == 0.0)
        .then_some(first as u64)
}

fn sum(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    // Opset 8 added multidirectional broadcasting; before, shapes must be equal.
    let mut acc = Operand::of_input(cx, 0)?;
    for i in 1..cx.num_inputs() {
        let term = Operand::of_input(cx, i)?;
        if cx.opset < 8 && cx.shape_of(&acc.v) != cx.shape_of(&term.v) {
            return Err(cx.error("Sum operands must have equal shapes before opset 8"));
        }
        acc = Operand {
            v: combine(cx, BinOp::Add, &acc, &term)?,
            input: None,
        };
    }
    Ok(vec![acc.v])
}

/// Variadic `Max` (`op` = [`BinOp::Max`]) or `Min` with broadcasting: folded on
/// constants, else pairwise from the left by [`combine`] (one ReLU per pair and output
/// element, on shares the ReLU protocol).
fn extremum(cx: &mut Ctx<'_>, op: BinOp) -> Result<Vec<Value>> {
    let mut acc = Operand::of_input(cx, 0)?;
    for i in 1..cx.num_inputs() {
        let term = Operand::of_input(cx, i)?;
        acc = Operand {
            v: combine(cx, op, &acc, &term)?,
            input: None,
        };
    }
    Ok(vec![acc.v])
}

fn unary_const(cx: &mut Ctx<'_>, op: UnOp) -> Result<Vec<Value>> {
    let x = cx.const_input(0, "operand; only supported on constants")?;
    fold::unary(&x, op)
        .map(|t| vec![Value::constant(t)])
        .map_err(|e| cx.error(e))
}

/// `Sqrt`: folded on a constant; of a run-time tensor `b`, `b·rsqrt(b)` (a division by
/// it becomes `·rsqrt(b)`, see [`combine`]).
fn sqrt(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    match cx.input(0)?.clone() {
        Value::Const(t) => fold::unary(&t, UnOp::Sqrt)
            .map(|t| vec![Value::constant(t)])
            .map_err(|e| cx.error(e)),
        Value::Act(b) => {
            let r = cx.emit(Op::Rsqrt { x: b })?;
            Ok(vec![cx.emit_value(Op::Mul { a: b, b: r })?])
        }
    }
}

/// `Pow`: of a run-time tensor by the constant exponent 2, its secret square; of two
/// constants, folded. Other exponents of run-time tensors are an error.
/// The largest integer exponent `Pow` of an activation accepts.
const MAX_POW: u32 = 16;

/// `Pow`: folded on constants; on an activation with a constant integer exponent `k` in
/// `1..=16` (the same for every element), `x^k` by square-and-multiply, one `mul` of
/// two activations per squaring and per set bit below the top one (`x³ = x²·x`: 2).
fn pow(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let e = cx.const_input(1, "exponent")?;
    let exps = e.to_f64();
    let k = match exps.first() {
        Some(&k) if exps.iter().all(|&v| v == k) && k.fract() == 0.0 && k >= 1.0 => {
            (k <= f64::from(MAX_POW)).then_some(k as u32)
        }
        _ => None,
    };
    match cx.input(0)?.clone() {
        Value::Const(t) => {
            let (b, e) = (t.to_f64(), e.to_f64());
            let shape = shape::broadcast(t.shape(), cx.const_input(1, "exponent")?.shape())
                .map_err(|err| cx.error(err))?;
            if e.len() != 1 && e.len() != b.len() {
                return Err(cx.error("Pow of constants needs a scalar or same-shape exponent"));
            }
            let v = b
                .iter()
                .enumerate()
                .map(|(i, &x)| x.powf(e[if e.len() == 1 { 0 } else { i }]))
                .collect();
            Tensor::new(t.dtype(), shape, crate::tensor::Data::Float(v))
                .map(|t| vec![Value::constant(t)])
                .map_err(|err| cx.error(err))
        }
        Value::Act(x) => {
            let k = k.ok_or_else(|| {
                cx.error(format!(
                    "Pow of a run-time tensor is only supported with one constant integer \
                     exponent in 1..={MAX_POW} (got {exps:?})"
                ))
            })?;
            // Bits of k from the top: square, then multiply by x where the bit is set.
            let mut acc = x;
            for bit in (0..k.ilog2()).rev() {
                acc = cx.emit(Op::Mul { a: acc, b: acc })?;
                if k >> bit & 1 == 1 {
                    acc = cx.emit(Op::Mul { a: acc, b: x })?;
                }
            }
            Ok(vec![Value::Act(acc)])
        }
    }
}

fn where_op(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let c = cx.const_input(0, "condition; Where is only supported on constants")?;
    let (x, y) = (cx.const_input(1, "X")?, cx.const_input(2, "Y")?);
    if c.dtype() != DType::Bool {
        return Err(cx.error(format!("Where condition must be BOOL, found {}", c.dtype())));
    }
    fold::where_(&c, &x, &y)
        .map(|t| vec![Value::constant(t)])
        .map_err(|e| cx.error(e))
}
