//! Neural-network layers: `Conv`, `Gemm`, `MatMul`, `BatchNormalization`,
//! `Relu`, `Clip`, `MaxPool`, `AveragePool`, `GlobalAveragePool`,
//! `GlobalMaxPool`, `ReduceMean` (spatial), `Pad`, `ArgMax`, and a trailing
//! `Softmax`/`LogSoftmax`.
//!
//! The IR's convolution and pooling are 2-D (NCHW); 1-D ONNX layers (`[N, C, W]`)
//! are lowered as 2-D layers over `[N, C, 1, W]` between two reshapes. Matrix
//! products need one constant operand (the server's weights, paper §5.1.1).

use sci_ir::{Op, Pool2d, Scalar, ValueId};

use super::shape_ops::reshape_value;
use super::{Ctx, Registry, Value};
use crate::error::Result;
use crate::fold::{self, BinOp, UnOp};
use crate::note::Note;
use crate::shape;
use crate::tensor::Tensor;

pub(crate) fn register(reg: &mut Registry) {
    reg.op("Conv", conv);
    reg.op("Gemm", gemm);
    reg.op("MatMul", matmul);
    reg.op("BatchNormalization", batch_norm);
    reg.op("Relu", relu);
    reg.op("Clip", clip);
    reg.op("MaxPool", |cx| pool(cx, PoolKind::Max));
    reg.op("AveragePool", |cx| pool(cx, PoolKind::Avg));
    reg.op("GlobalAveragePool", |cx| global_pool(cx, PoolKind::Avg));
    reg.op("GlobalMaxPool", |cx| global_pool(cx, PoolKind::Max));
    reg.op("ReduceMean", reduce_mean);
    reg.op("Pad", pad);
    reg.op("ArgMax", argmax);
    reg.op("Softmax", trailing_monotone);
    reg.op("LogSoftmax", trailing_monotone);
}

/// Window geometry of a convolution or pooling node, per spatial axis.
struct Window {
    kernel: Vec<usize>,
    strides: Vec<usize>,
    dilations: Vec<usize>,
    pads_begin: Vec<usize>,
    pads_end: Vec<usize>,
}

/// A list attribute of `n` positive entries (default all ones).
fn positive_ints(cx: &Ctx<'_>, name: &str, n: usize) -> Result<Vec<usize>> {
    match cx.node.attr_ints(name)? {
        None => Ok(vec![1; n]),
        Some(v) if v.len() == n && v.iter().all(|&x| x >= 1) => {
            Ok(v.iter().map(|&x| x as usize).collect())
        }
        Some(v) => Err(cx
            .node
            .attr_error(name, format!("expected {n} positive values, found {v:?}"))),
    }
}

/// Reads `strides`, `dilations`, `pads` and `auto_pad` for a window of `kernel`
/// over the spatial dims `spatial` of the input.
fn window(cx: &Ctx<'_>, spatial: &[usize], kernel: Vec<usize>, dilations: bool) -> Result<Window> {
    let n = spatial.len();
    let node = cx.node;
    let strides = positive_ints(cx, "strides", n)?;
    let dilations = if dilations {
        positive_ints(cx, "dilations", n)?
    } else {
        vec![1; n]
    };
    let auto_pad = node
        .attr_string("auto_pad")?
        .unwrap_or_else(|| "NOTSET".into());
    let (pads_begin, pads_end) = match auto_pad.as_str() {
        "NOTSET" => match node.attr_ints("pads")? {
            None => (vec![0; n], vec![0; n]),
            Some(p) if p.len() == 2 * n && p.iter().all(|&x| x >= 0) => {
                let p: Vec<usize> = p.iter().map(|&x| x as usize).collect();
                (p[..n].to_vec(), p[n..].to_vec())
            }
            Some(p) => {
                return Err(node.attr_error(
                    "pads",
                    format!("expected {} non-negative values, found {p:?}", 2 * n),
                ));
            }
        },
        "VALID" => (vec![0; n], vec![0; n]),
        "SAME_UPPER" | "SAME_LOWER" => {
            let upper = auto_pad == "SAME_UPPER";
            let mut b = Vec::with_capacity(n);
            let mut e = Vec::with_capacity(n);
            for i in 0..n {
                let (pb, pe) =
                    shape::same_pads(spatial[i], kernel[i], strides[i], dilations[i], upper)
                        .map_err(|m| node.attr_error("auto_pad", m))?;
                b.push(pb);
                e.push(pe);
            }
            (b, e)
        }
        other => {
            return Err(node.attr_error(
                "auto_pad",
                format!("value '{other}' is not supported (supported: NOTSET, VALID, SAME_UPPER, SAME_LOWER)"),
            ));
        }
    };
    Ok(Window {
        kernel,
        strides,
        dilations,
        pads_begin,
        pads_end,
    })
}

impl Window {
    /// The 2-D form (a 1-D window gets a leading axis of size 1, no padding).
    fn to_2d(&self) -> ([usize; 2], [usize; 2], [usize; 2], [usize; 4]) {
        let two = |v: &[usize], fill: usize| {
            if v.len() == 1 {
                [fill, v[0]]
            } else {
                [v[0], v[1]]
            }
        };
        let (k, s, d) = (
            two(&self.kernel, 1),
            two(&self.strides, 1),
            two(&self.dilations, 1),
        );
        let b = two(&self.pads_begin, 0);
        let e = two(&self.pads_end, 0);
        (k, s, d, [b[0], b[1], e[0], e[1]])
    }
}

/// The spatial dims of an NCHW/NCW input, checking the rank is 3 or 4.
fn spatial_dims(cx: &Ctx<'_>, x_shape: &[usize]) -> Result<Vec<usize>> {
    match x_shape.len() {
        3 | 4 => Ok(x_shape[2..].to_vec()),
        r => Err(cx.error(format!(
            "input of rank {r} (shape {x_shape:?}) is not supported (supported: 1-D [N, C, W] and 2-D [N, C, H, W])"
        ))),
    }
}

/// Reshapes a 1-D layer's input `[N, C, W]` to `[N, C, 1, W]` (2-D inputs unchanged).
fn to_4d(cx: &mut Ctx<'_>, x: &Value) -> Result<ValueId> {
    let s = cx.shape_of(x);
    let v = if s.len() == 3 {
        reshape_value(cx, x, vec![s[0], s[1], 1, s[2]])?
    } else {
        x.clone()
    };
    cx.act(&v, "x")
}

/// Undoes [`to_4d`] on the output when the input was 1-D.
fn from_4d(cx: &mut Ctx<'_>, y: ValueId, rank: usize) -> Result<Value> {
    let y = Value::Act(y);
    if rank == 3 {
        let s = cx.shape_of(&y);
        reshape_value(cx, &y, vec![s[0], s[1], s[3]])
    } else {
        Ok(y)
    }
}

fn conv(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
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

/// A scalar constant of the lowered program's element type.
fn scalar(v: f32) -> Tensor {
    Tensor::from_f32(vec![], &[v]).expect("a scalar has one element")
}

/// `t · k` for a constant `t`.
fn scaled(cx: &Ctx<'_>, t: &Tensor, k: f32) -> Result<Tensor> {
    fold::binary(&t.cast(crate::tensor::DType::F32), &scalar(k), BinOp::Mul)
        .map_err(|e| cx.error(e))
}

fn gemm(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
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
    // C (optional from opset 11), scaled by beta: a [N] bias when it is constant and
    // constant along M, else added after the product.
    let mut bias = None;
    let mut post_add = None;
    if let Some(c) = cx.opt_input(2).cloned() {
        let c_shape = cx.shape_of(&c);
        shape::broadcast(&c_shape, &[m, n])
            .ok()
            .filter(|s| s == &[m, n])
            .ok_or_else(|| {
                cx.error(format!(
                    "C of shape {c_shape:?} does not broadcast to [{m}, {n}]"
                ))
            })?;
        match c {
            Value::Const(t) if post_alpha.is_none() && (c_shape.len() < 2 || c_shape[0] == 1) => {
                let t = if beta != 1.0 {
                    scaled(cx, &t, beta)?
                } else {
                    (*t).clone()
                };
                let row = fold::binary(&t.cast(crate::tensor::DType::F32), &zeros(n), BinOp::Add)
                    .and_then(|r| r.reshaped(vec![n]))
                    .map_err(|e| cx.error(e))?;
                let unchanged = beta == 1.0 && c_shape == [n];
                bias = Some(if unchanged {
                    cx.input_act(2)?
                } else {
                    cx.act(&Value::constant(row), "C")?
                });
            }
            Value::Const(t) => {
                let t = if beta != 1.0 {
                    scaled(cx, &t, beta)?
                } else {
                    (*t).clone()
                };
                post_add = Some(cx.act(&Value::constant(t), "C")?);
            }
            Value::Act(c) => {
                let c = if beta != 1.0 {
                    let k = cx.act(&Value::constant(scalar(beta)), "beta")?;
                    cx.emit(Op::Mul { a: c, b: k })?
                } else {
                    c
                };
                post_add = Some(c);
            }
        }
    }
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

/// A float zero vector of length `n` (to broadcast a bias to `[1, n]`).
fn zeros(n: usize) -> Tensor {
    Tensor::from_f32(vec![1, n], &vec![0.0; n]).expect("n zeros fill [1, n]")
}

/// The IR `matmul` of 2-D `a` and `b`, one of which must be constant. `inputs` are
/// the node input indices of `a` and `b`, used to name (and share) constants that
/// are exactly a node input.
fn matmul_2d(
    cx: &mut Ctx<'_>,
    a: &Value,
    b: &Value,
    bias: Option<ValueId>,
    inputs: (usize, usize),
) -> Result<ValueId> {
    if let (Value::Act(_), Value::Act(_)) = (a, b) {
        return Err(cx.error(
            "matrix product of two run-time tensors is not supported (supported: one constant operand, the weights)",
        ));
    }
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

fn matmul(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let a = cx.input(0)?.clone();
    let b = cx.input(1)?.clone();
    let (a_shape, b_shape) = (cx.shape_of(&a), cx.shape_of(&b));
    if a_shape.is_empty() || b_shape.is_empty() {
        return Err(cx.error("MatMul operands must have rank at least 1"));
    }
    if let (Value::Const(x), Value::Const(y)) = (&a, &b)
        && a_shape.len() <= 2
        && b_shape.len() <= 2
    {
        return matmul_const(cx, x, y).map(|t| vec![Value::constant(t)]);
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
        // One weight matrix: the batch of the left operand folds into its rows.
        if a_batch != g {
            return Err(
                cx.error("broadcasting the left operand over the right's batch is not supported")
            );
        }
        if a_batch != 1 && matches!(b, Value::Act(_)) {
            return Err(cx.error("a batched left operand needs a constant right operand"));
        }
        let a_flat = reshape_value(cx, &a, vec![a_batch * m, k])?;
        let b_flat = reshape_value(cx, &b, vec![k, n])?;
        matmul_2d(cx, &a_flat, &b_flat, None, (0, 1))?
    } else {
        batched_const_rhs(cx, &a, &b, &batch, (m, k, n))?
    };
    Ok(vec![reshape_value(cx, &Value::Act(y), out)?])
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
fn matmul_const(cx: &Ctx<'_>, a: &Tensor, b: &Tensor) -> Result<Tensor> {
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

fn batch_norm(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
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

fn relu(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    match cx.input(0)?.clone() {
        Value::Const(t) => fold::unary(&t, UnOp::Relu)
            .map(|t| vec![Value::constant(t)])
            .map_err(|e| cx.error(e)),
        Value::Act(x) => Ok(vec![cx.emit_value(Op::Relu { x })?]),
    }
}

/// A scalar bound of `Clip`: `None` when absent or unbounded (±inf, ±f32::MAX).
fn bound(v: Option<f64>) -> Option<f32> {
    v.filter(|b| b.is_finite() && b.abs() < f64::from(f32::MAX))
        .map(|b| b as f32)
}

fn clip(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    // Opset 11 moved min/max from attributes to optional inputs.
    let (lo, hi) = if cx.opset < 11 {
        (
            cx.node.attr_float("min")?.map(f64::from),
            cx.node.attr_float("max")?.map(f64::from),
        )
    } else {
        let one = |i: usize, what: &str| -> Result<Option<f64>> {
            match cx.opt_const_input(i, what)? {
                None => Ok(None),
                Some(t) => match t.to_f64().as_slice() {
                    [v] => Ok(Some(*v)),
                    _ => Err(cx.error(format!("{what} must be a scalar"))),
                },
            }
        };
        (one(1, "min")?, one(2, "max")?)
    };
    let (lo, hi) = (bound(lo), bound(hi));
    if let (Some(l), Some(h)) = (lo, hi)
        && l > h
    {
        return Err(cx.error(format!("min {l} is greater than max {h}")));
    }
    let x = match cx.input(0)?.clone() {
        Value::Const(t) => {
            let v: Vec<f64> = t
                .to_f64()
                .iter()
                .map(|&e| {
                    e.max(lo.map_or(f64::NEG_INFINITY, f64::from))
                        .min(hi.map_or(f64::INFINITY, f64::from))
                })
                .collect();
            let t = Tensor::new(t.dtype(), t.shape().to_vec(), crate::tensor::Data::Float(v))
                .map_err(|e| cx.error(e))?;
            return Ok(vec![Value::constant(t)]);
        }
        Value::Act(x) => x,
    };
    // On run-time tensors only the ReLU forms: ReLU6 = relu(x) − relu(x − 6), which
    // the IR expresses exactly (ReLU and a subtraction of a public constant).
    let y = match (lo, hi) {
        (None, None) => x,
        (Some(0.0), None) => cx.emit(Op::Relu { x })?,
        (Some(0.0), Some(6.0)) => {
            let six = cx.public_const(&scalar(6.0), "max")?;
            let r = cx.emit(Op::Relu { x })?;
            let shifted = cx.emit(Op::Sub { a: x, b: six })?;
            let r6 = cx.emit(Op::Relu { x: shifted })?;
            cx.emit(Op::Sub { a: r, b: r6 })?
        }
        (l, h) => {
            let show = |b: Option<f32>| b.map_or("none".to_string(), |v| v.to_string());
            let attr = if l != Some(0.0) { "min" } else { "max" };
            return Err(cx.node.attr_error(
                attr,
                format!(
                    "Clip to [{}, {}] is not supported (supported: min = 0 with max = 6 (ReLU6) or no max (ReLU))",
                    show(l),
                    show(h)
                ),
            ));
        }
    };
    Ok(vec![Value::Act(y)])
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PoolKind {
    Max,
    Avg,
}

fn pool(cx: &mut Ctx<'_>, kind: PoolKind) -> Result<Vec<Value>> {
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

fn global_pool(cx: &mut Ctx<'_>, kind: PoolKind) -> Result<Vec<Value>> {
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

/// `ReduceMean` over the spatial axes of an NCHW (or NCW) tensor is a global
/// average pool (what exporters emit for Keras' `GlobalAveragePooling2D`).
fn reduce_mean(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let node = cx.node;
    // Opset 18 moved `axes` from an attribute to an optional input and added
    // `noop_with_empty_axes`.
    let axes = if cx.opset < 18 {
        node.attr_ints("axes")?
    } else {
        cx.opt_const_ints(1, "axes")?
    };
    let keepdims = node.attr_int_or("keepdims", 1)? != 0;
    let x_shape = cx.input_shape(0)?;
    let rank = x_shape.len();
    let mut axes = match axes {
        Some(a) if !a.is_empty() => a
            .iter()
            .map(|&v| shape::axis(v, rank))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| cx.error(e))?,
        _ => (0..rank).collect(),
    };
    axes.sort_unstable();
    let spatial: Vec<usize> = (2..rank).collect();
    if !matches!(rank, 3 | 4) || axes != spatial {
        return Err(node.attr_error(
            "axes",
            format!(
                "ReduceMean over axes {axes:?} of a rank-{rank} tensor is not supported                  (supported: the spatial axes [2, 3] of NCHW or [2] of NCW, a global average pool)"
            ),
        ));
    }
    let x = cx.input(0)?.clone();
    let xa = to_4d(cx, &x)?;
    let y = cx.emit(Op::GlobalAvgPool { x: xa })?;
    let mut out = x_shape[..2].to_vec();
    if keepdims {
        out.extend(std::iter::repeat_n(1, rank - 2));
    }
    Ok(vec![reshape_value(cx, &Value::Act(y), out)?])
}

fn pad(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let node = cx.node;
    let x_shape = cx.input_shape(0)?;
    let rank = x_shape.len();
    let mode = node
        .attr_string("mode")?
        .unwrap_or_else(|| "constant".into());
    if mode != "constant" {
        return Err(node.attr_error(
            "mode",
            format!("value '{mode}' is not supported (supported: constant)"),
        ));
    }
    // Opset 11 moved pads and the fill value from attributes to inputs; 18 added axes.
    let (raw_pads, value) = if cx.opset < 11 {
        // Opset 2 renamed `paddings` to `pads`.
        let name = if cx.opset < 2 { "paddings" } else { "pads" };
        let pads = node
            .attr_ints(name)?
            .ok_or_else(|| node.attr_error(name, "missing"))?;
        (pads, node.attr_float_or("value", 0.0)?)
    } else {
        let pads = cx.const_ints(1, "pads")?;
        let value = match cx.opt_const_input(2, "constant_value")? {
            None => 0.0,
            Some(t) => match t.to_f64().as_slice() {
                [v] => *v as f32,
                _ => return Err(cx.error("constant_value must be a scalar")),
            },
        };
        (pads, value)
    };
    let axes: Vec<usize> = match if cx.opset >= 18 {
        cx.opt_const_ints(3, "axes")?
    } else {
        None
    } {
        None => (0..rank).collect(),
        Some(a) => a
            .iter()
            .map(|&v| shape::axis(v, rank))
            .collect::<Result<_, _>>()
            .map_err(|e| cx.error(e))?,
    };
    if raw_pads.len() != 2 * axes.len() {
        return Err(cx.error(format!(
            "pads {raw_pads:?} must have {} entries",
            2 * axes.len()
        )));
    }
    if raw_pads.iter().any(|&p| p < 0) {
        return Err(cx.error(format!(
            "negative pads {raw_pads:?} (cropping) are not supported"
        )));
    }
    let mut pads = vec![0usize; 2 * rank];
    for (i, &ax) in axes.iter().enumerate() {
        pads[ax] = raw_pads[i] as usize;
        pads[rank + ax] = raw_pads[axes.len() + i] as usize;
    }
    let x = cx.input_act(0)?;
    Ok(vec![cx.emit_value(Op::Pad {
        x,
        pads,
        value: Scalar::F32(value),
    })?])
}

fn argmax(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
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

/// `Softmax`/`LogSoftmax` as the last op: monotone along its axis, so the argmax
/// of the output is that of the input; the op is dropped and a note recorded.
fn trailing_monotone(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let is_last = cx.final_outputs.first().copied().unwrap_or(false);
    if !is_last {
        return Err(cx.error(format!(
            "{} is only supported as the last op (it is then dropped: it is monotone, so the argmax is unchanged); \
             here its output is used by other nodes. Compile up to its input with --output {}",
            cx.node.op_type(),
            cx.input_name(0)
        )));
    }
    let output = cx.node.outputs.first().cloned().unwrap_or_default();
    cx.notes.push(Note::DroppedMonotone {
        node: cx.node.desc.clone(),
        output,
    });
    Ok(vec![cx.input(0)?.clone()])
}
