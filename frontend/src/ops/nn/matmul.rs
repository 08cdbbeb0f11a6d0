//! `Gemm` and `MatMul` → IR `matmul`: by a constant operand (the server's weights,
//! paper §5.1.1), or a product of two run-time tensors (secret × secret; with batch
//! dimensions, one 2-D product per batch index, run as one wave); constant products
//! are folded.

use sci_ir::{Op, ValueId};

use super::scalar;
use crate::error::Result;
use crate::fold::{self, BinOp};
use crate::ops::shape_ops::reshape_value;
use crate::ops::{Ctx, Value};
use crate::shape;
use crate::tensor::Tensor;

/// Transposes a 2-D value: folded for constants, an IR `transpose` otherwise.
fn transpose_2d(cx: &mut Ctx<'_>, v: Value) -> Result<Value> {
    match &v {
        Value::Const(t) => fold::transpose(t, None)
            .map(Value::constant)
            .map_err(|e| cx.error(e)),
        Value::Act(x) => cx.emit_value(Op::Transpose {
            x: *x,
            perm: vec![1, 0],
        }),
    }
}

/// `t · k` for a constant `t`.
fn scaled(cx: &Ctx<'_>, t: &Tensor, k: f32) -> Result<Tensor> {
    fold::binary(&t.cast(crate::tensor::DType::F32), &scalar(k), BinOp::Mul)
        .map_err(|e| cx.error(e))
}

pub(super) fn gemm(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let node = cx.node;
    node.check_known_attrs(&["alpha", "beta", "transA", "transB", "broadcast"])?;
    let alpha = node.attr_float_or("alpha", 1.0)?;
    let beta = node.attr_float_or("beta", 1.0)?;
    let trans_a = node.attr_int_or("transA", 0)? != 0;
    let trans_b = node.attr_int_or("transB", 0)? != 0;
    let (a_shape, b_shape) = (cx.input_shape(0)?, cx.input_shape(1)?);
    if a_shape.len() != 2 || b_shape.len() != 2 {
        return Err(cx.error(format!(
            "Gemm needs 2-D operands, found {a_shape:?} and {b_shape:?}"
        )));
    }
    let mut a = cx.input(0)?.clone();
    let mut b = cx.input(1)?.clone();
    if trans_a {
        a = transpose_2d(cx, a)?;
    }
    if trans_b {
        b = transpose_2d(cx, b)?;
    }
    // Fold alpha into whichever operand is constant.
    let mut post_alpha = None;
    if alpha != 1.0 {
        match (&a, &b) {
            (_, Value::Const(t)) => b = Value::constant(scaled(cx, t, alpha)?),
            (Value::Const(t), _) => a = Value::constant(scaled(cx, t, alpha)?),
            _ => post_alpha = Some(alpha),
        }
    }
    let (m, k) = (cx.shape_of(&a)[0], cx.shape_of(&a)[1]);
    let (k2, n) = (cx.shape_of(&b)[0], cx.shape_of(&b)[1]);
    if k != k2 {
        return Err(cx.error(format!(
            "inner dimensions differ: A is {m}×{k}, B is {k2}×{n} (after transA/transB)"
        )));
    }
    // C (optional from opset 11), scaled by beta.
    let (bias, post_add) = match cx.opt_input(2).cloned() {
        None => (None, None),
        Some(c) => match gemm_c(cx, c, beta, [m, n], post_alpha.is_none())? {
            GemmC::Bias(b) => (Some(b), None),
            GemmC::Add(c) => (None, Some(c)),
        },
    };
    let mut y = matmul_2d(cx, &a, &b, bias, (0, 1))?;
    if let Some(alpha) = post_alpha {
        let k = cx.act(&Value::constant(scalar(alpha)), "alpha")?;
        y = cx.emit(Op::Mul { a: y, b: k })?;
    }
    if let Some(c) = post_add {
        y = cx.emit(Op::Add { a: y, b: c })?;
    }
    Ok(vec![Value::Act(y)])
}

/// How `Gemm`'s `C` (times `beta`) enters the result.
enum GemmC {
    /// As the `[N]` bias of the `matmul`.
    Bias(ValueId),
    /// Added to the product (after `alpha`).
    Add(ValueId),
}

/// `beta · C` for an `[m, n]` product: a bias when `C` is constant and constant
/// along M (and `as_bias`: no `alpha` is applied after the product), else a value
/// to add after the product.
fn gemm_c(
    cx: &mut Ctx<'_>,
    c: Value,
    beta: f32,
    [m, n]: [usize; 2],
    as_bias: bool,
) -> Result<GemmC> {
    let c_shape = cx.shape_of(&c);
    shape::broadcast(&c_shape, &[m, n])
        .ok()
        .filter(|s| s == &[m, n])
        .ok_or_else(|| {
            cx.error(format!(
                "C of shape {c_shape:?} does not broadcast to [{m}, {n}]"
            ))
        })?;
    let scaled_c = |cx: &Ctx<'_>, t: &Tensor| {
        if beta != 1.0 {
            scaled(cx, t, beta)
        } else {
            Ok(t.clone())
        }
    };
    Ok(match c {
        Value::Const(t) if as_bias && (c_shape.len() < 2 || c_shape[0] == 1) => {
            let t = scaled_c(cx, &t)?;
            let row = fold::binary(&t.cast(crate::tensor::DType::F32), &zeros(n), BinOp::Add)
                .and_then(|r| r.reshaped(vec![n]))
                .map_err(|e| cx.error(e))?;
            let unchanged = beta == 1.0 && c_shape == [n];
            GemmC::Bias(if unchanged {
                cx.input_act(2)?
            } else {
                cx.act(&Value::constant(row), "C")?
            })
        }
        Value::Const(t) => {
            let t = scaled_c(cx, &t)?;
            GemmC::Add(cx.act(&Value::constant(t), "C")?)
        }
        Value::Act(c) if beta != 1.0 => {
            let k = cx.act(&Value::constant(scalar(beta)), "beta")?;
            GemmC::Add(cx.emit(Op::Mul { a: c, b: k })?)
        }
        Value::Act(c) => GemmC::Add(c),
    })
}

/// A float zero vector of length `n` (to broadcast a bias to `[1, n]`).
fn zeros(n: usize) -> Tensor {
    Tensor::from_f32(vec![1, n], &vec![0.0; n]).expect("n zeros fill [1, n]")
}

/// The IR `matmul` of 2-D `a` and `b` (by the server's weights if one is constant,
/// else a product of two secret tensors). `inputs` are the node input indices of `a`
/// and `b`, used to name (and share) constants that are exactly a node input.
fn matmul_2d(
    cx: &mut Ctx<'_>,
    a: &Value,
    b: &Value,
    bias: Option<ValueId>,
    inputs: (usize, usize),
) -> Result<ValueId> {
    let same = |cx: &Ctx<'_>, v: &Value, i: usize| match (v, cx.opt_input(i)) {
        (Value::Const(x), Some(Value::Const(y))) => std::rc::Rc::ptr_eq(x, y),
        _ => false,
    };
    let av = if same(cx, a, inputs.0) {
        cx.input_act(inputs.0)?
    } else {
        cx.act(a, "A")?
    };
    let bv = if same(cx, b, inputs.1) {
        cx.input_act(inputs.1)?
    } else {
        cx.act(b, "B")?
    };
    cx.emit(Op::MatMul { a: av, b: bv, bias })
}

pub(super) fn matmul(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let a = cx.input(0)?.clone();
    let b = cx.input(1)?.clone();
    Ok(vec![matmul_values(cx, &a, &b)?])
}

/// ONNX `MatMul` (numpy semantics) of `a` and `b`, either of which may be
/// constant: folded when both are matrices, else IR `matmul`s as the module says.
pub(super) fn matmul_values(cx: &mut Ctx<'_>, a: &Value, b: &Value) -> Result<Value> {
    let (a, b) = (a.clone(), b.clone());
    let (a_shape, b_shape) = (cx.shape_of(&a), cx.shape_of(&b));
    if a_shape.is_empty() || b_shape.is_empty() {
        return Err(cx.error("MatMul operands must have rank at least 1"));
    }
    if let (Value::Const(x), Value::Const(y)) = (&a, &b)
        && a_shape.len() <= 2
        && b_shape.len() <= 2
    {
        return matmul_const(cx, x, y).map(Value::constant);
    }
    // numpy semantics: 1-D operands get a unit dimension that is removed afterwards.
    let a2 = if a_shape.len() == 1 {
        vec![1, a_shape[0]]
    } else {
        a_shape.clone()
    };
    let b2 = if b_shape.len() == 1 {
        vec![b_shape[0], 1]
    } else {
        b_shape.clone()
    };
    let (ra, rb) = (a2.len(), b2.len());
    let (m, k) = (a2[ra - 2], a2[ra - 1]);
    let (k2, n) = (b2[rb - 2], b2[rb - 1]);
    if k != k2 {
        return Err(cx.error(format!(
            "inner dimensions differ: {a_shape:?} × {b_shape:?}"
        )));
    }
    let batch = shape::broadcast(&a2[..ra - 2], &b2[..rb - 2]).map_err(|e| cx.error(e))?;
    let mut out: Vec<usize> = batch.clone();
    if a_shape.len() > 1 {
        out.push(m);
    }
    if b_shape.len() > 1 {
        out.push(n);
    }
    let g = shape::numel(&batch).map_err(|e| cx.error(e))?;
    let a_batch = shape::numel(&a2[..ra - 2]).map_err(|e| cx.error(e))?;
    let y = if b2[..rb - 2].iter().all(|&d| d == 1) {
        // One right matrix (weights or a run-time tensor): the batch of the left
        // operand folds into its rows.
        if a_batch != g {
            return Err(
                cx.error("broadcasting the left operand over the right's batch is not supported")
            );
        }
        let a_flat = reshape_value(cx, &a, vec![a_batch * m, k])?;
        let b_flat = reshape_value(cx, &b, vec![k, n])?;
        matmul_2d(cx, &a_flat, &b_flat, None, (0, 1))?
    } else if let (Value::Act(x), Value::Act(y)) = (&a, &b) {
        return batched_secret(cx, [*x, *y], &a2, &b2, &out);
    } else {
        batched_const_rhs(cx, &a, &b, &batch, (m, k, n))?
    };
    reshape_value(cx, &Value::Act(y), out)
}

/// A batch of products of two run-time tensors `a: [..., M, K]` and `b: [..., K, N]`
/// (`a2`, `b2`: their shapes with 1-D operands widened as numpy does; batch
/// dimensions broadcast as numpy's, a dimension of 1 repeating its one slice), as
/// one 2-D IR `matmul` per output batch index between `gather`s of the operands'
/// slices and a `concat` of the results, reshaped to `out`. The products are
/// independent, so the schedule runs them as one wave: one `secmul` call whose
/// rounds are those of one product and whose bytes are the products' sum
/// ([`sci_ir::schedule::waves`]); the values are those of `G` separate products.
fn batched_secret(
    cx: &mut Ctx<'_>,
    [a, b]: [ValueId; 2],
    a2: &[usize],
    b2: &[usize],
    out: &[usize],
) -> Result<Value> {
    let (ra, rb) = (a2.len(), b2.len());
    let (m, k, n) = (a2[ra - 2], a2[ra - 1], b2[rb - 1]);
    let batch = shape::broadcast(&a2[..ra - 2], &b2[..rb - 2]).map_err(|e| cx.error(e))?;
    // The operands as [G_a, M, K] and [G_b, K, N].
    let flat = |cx: &mut Ctx<'_>, x: ValueId, dims: &[usize], rows: usize, cols: usize| {
        let g = shape::numel(&dims[..dims.len() - 2]).map_err(|e| cx.error(e))?;
        cx.emit(Op::Reshape {
            x,
            shape: vec![g, rows, cols],
        })
    };
    let a3 = flat(cx, a, a2, m, k)?;
    let b3 = flat(cx, b, b2, k, n)?;
    // Slice `i` of a `[G, R, C]` value as `[R, C]`, emitted once.
    let mut slices: std::collections::HashMap<(ValueId, usize), ValueId> = Default::default();
    let mut slice = |cx: &mut Ctx<'_>, x: ValueId, i: usize, rc: [usize; 2]| -> Result<ValueId> {
        if let Some(&s) = slices.get(&(x, i)) {
            return Ok(s);
        }
        let g = cx.emit(Op::Gather {
            x,
            axis: 0,
            indices: vec![i],
        })?;
        let s = cx.emit(Op::Reshape {
            x: g,
            shape: rc.to_vec(),
        })?;
        slices.insert((x, i), s);
        Ok(s)
    };
    let g = shape::numel(&batch).map_err(|e| cx.error(e))?;
    let mut products = Vec::with_capacity(g);
    for flat_index in 0..g {
        let ia = broadcast_index(&batch, &a2[..ra - 2], flat_index);
        let ib = broadcast_index(&batch, &b2[..rb - 2], flat_index);
        let x = slice(cx, a3, ia, [m, k])?;
        let y = slice(cx, b3, ib, [k, n])?;
        let p = cx.emit(Op::MatMul {
            a: x,
            b: y,
            bias: None,
        })?;
        products.push(cx.emit(Op::Reshape {
            x: p,
            shape: vec![1, m, n],
        })?);
    }
    let all = if products.len() == 1 {
        products[0]
    } else {
        cx.emit(Op::Concat {
            xs: products,
            axis: 0,
        })?
    };
    reshape_value(cx, &Value::Act(all), out.to_vec())
}

/// The flat index into an operand with batch dimensions `dims` (right-aligned with
/// `batch`, numpy broadcasting: a dimension of 1 repeats) of the flat index `i` of the
/// broadcast `batch`.
fn broadcast_index(batch: &[usize], dims: &[usize], mut i: usize) -> usize {
    let offset = batch.len() - dims.len();
    let (mut index, mut stride) = (0, 1);
    for axis in (0..batch.len()).rev() {
        let coord = i % batch[axis];
        i /= batch[axis];
        if axis >= offset {
            let d = dims[axis - offset];
            if d != 1 {
                index += coord * stride;
            }
            stride *= d;
        }
    }
    index
}

/// A batch of products `a[g] × b[g]` with a run-time `a` (batch `batch`, not
/// broadcast) and a constant `b`, as one IR `matmul`: `a` is rearranged to
/// `[M, G·K]` and multiplied by the block-diagonal `[G·K, G·N]` matrix of the
/// `b[g]`; the result `[M, G·N]` is rearranged to `[G, M, N]`. Exact, at the cost
/// of `G` times the multiplications of the batch.
fn batched_const_rhs(
    cx: &mut Ctx<'_>,
    a: &Value,
    b: &Value,
    batch: &[usize],
    mkn: (usize, usize, usize),
) -> Result<ValueId> {
    let (m, k, n) = mkn;
    let g = shape::numel(batch).map_err(|e| cx.error(e))?;
    let (Value::Act(_), Value::Const(bt)) = (a, b) else {
        return Err(cx.error(
            "a batched right operand must be a constant and the left operand a run-time tensor",
        ));
    };
    let a_shape = cx.shape_of(a);
    if Some(shape::numel(&a_shape).map_err(|e| cx.error(e))?) != g.checked_mul(m * k) {
        return Err(
            cx.error("broadcasting the left operand over the right's batch is not supported")
        );
    }
    let size = g
        .checked_mul(k)
        .and_then(|r| r.checked_mul(g * n))
        .filter(|&s| s <= shape::MAX_FOLD_ELEMENTS);
    let size = size.ok_or_else(|| {
        cx.error("the block-diagonal weights of this batched MatMul are too large")
    })?;
    // b expanded to [G, K, N].
    let mut full = batch.to_vec();
    full.extend([k, n]);
    let zeros = Tensor::new(
        bt.dtype(),
        full,
        crate::tensor::Data::Float(vec![0.0; g * k * n]),
    )
    .map_err(|e| cx.error(e))?;
    let bv = fold::binary(bt, &zeros, BinOp::Add)
        .map_err(|e| cx.error(e))?
        .to_f64();
    let mut blocks = vec![0.0f64; size];
    for gi in 0..g {
        for i in 0..k {
            for j in 0..n {
                blocks[(gi * k + i) * (g * n) + gi * n + j] = bv[(gi * k + i) * n + j];
            }
        }
    }
    let blocks = Tensor::new(
        bt.dtype(),
        vec![g * k, g * n],
        crate::tensor::Data::Float(blocks),
    )
    .map_err(|e| cx.error(e))?;
    let a3 = reshape_value(cx, a, vec![g, m, k])?;
    let a3 = cx.act(&a3, "A")?;
    let at = cx.emit(Op::Transpose {
        x: a3,
        perm: vec![1, 0, 2],
    })?;
    let a_wide = reshape_value(cx, &Value::Act(at), vec![m, g * k])?;
    let y = matmul_2d(cx, &a_wide, &Value::constant(blocks), None, (0, 1))?;
    let y3 = reshape_value(cx, &Value::Act(y), vec![m, g, n])?;
    let y3 = cx.act(&y3, "Y")?;
    cx.emit(Op::Transpose {
        x: y3,
        perm: vec![1, 0, 2],
    })
}

/// The product of two constant matrices (rank ≤ 2), for weights computed in-graph.
pub(super) fn matmul_const(cx: &Ctx<'_>, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (av, bv) = (a.to_f64(), b.to_f64());
    let (m, k) = match a.shape() {
        [k] => (1, *k),
        [m, k] => (*m, *k),
        _ => return Err(cx.error("constant MatMul needs rank ≤ 2")),
    };
    let (k2, n) = match b.shape() {
        [k] => (*k, 1),
        [k, n] => (*k, *n),
        _ => return Err(cx.error("constant MatMul needs rank ≤ 2")),
    };
    if k != k2 {
        return Err(cx.error(format!(
            "inner dimensions differ: {:?} × {:?}",
            a.shape(),
            b.shape()
        )));
    }
    let numel = shape::fold_numel(&[m, n]).map_err(|e| cx.error(e))?;
    let mut out = vec![0.0f64; numel];
    for i in 0..m {
        for j in 0..n {
            out[i * n + j] = (0..k).map(|l| av[i * k + l] * bv[l * n + j]).sum();
        }
    }
    let mut shape = Vec::new();
    if a.shape().len() == 2 {
        shape.push(m);
    }
    if b.shape().len() == 2 {
        shape.push(n);
    }
    Tensor::new(a.dtype(), shape, crate::tensor::Data::Float(out)).map_err(|e| cx.error(e))
}
