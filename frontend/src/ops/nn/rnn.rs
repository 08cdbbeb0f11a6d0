//! `LSTM` and `GRU` (ONNX opsets 7–22), unrolled over the sequence into IR ops: the
//! products by the server's weights `W` and `R` (`matmul` by constants), bias
//! additions, `sigmoid`/`tanh`, elementwise products of two secret tensors for the
//! gates (`mul`), and data movement (`gather`, `concat`, `reshape`, `transpose`).
//!
//! Per direction, the input projection `X·Wᵀ + Wb (+ Rb)` of the whole sequence is one
//! `matmul` (`[T·B, I] × [I, G·H]`, `G` gates stacked): it depends on no recurrence, so
//! it runs in the first product wave. Each step then issues one `matmul` of the hidden
//! state by the stacked `Rᵀ` (all gates at once), and one `sigmoid` over every gate:
//! the LSTM's cell gate `tanh(x) = 2σ(2x) − 1` is the sigmoid of its doubled
//! pre-activation (the factor 2 is folded into its rows of `W`, `R` and the biases),
//! so the four gates share one call. The products of a step (`f ⊙ c`, `i ⊙ g`) are
//! independent and share a wave, as do the two directions of a bidirectional layer:
//! the schedule batches equal protocol steps of one dependency level
//! ([`sci_ir::schedule::waves`]).
//!
//! | op | step `t` (ONNX default activations, gate order of `W`, `R`, `B`) |
//! |---|---|
//! | `LSTM` (`iofc`) | `[i,o,f,g'] = σ(x·Wᵀ + h·Rᵀ + Wb + Rb)` (doubled `c` rows), `g = 2g' − 1`, `c = f ⊙ c + i ⊙ g`, `h = o ⊙ tanh(c)` |
//! | `GRU` (`zrh`) | `[z,r] = σ(x·Wᵀ + h·Rᵀ + Wb + Rb)`; `n = tanh(x·W_hᵀ + Wb_h + r ⊙ (h·R_hᵀ + Rb_h))` (`linear_before_reset` 1) or `tanh(x·W_hᵀ + (r ⊙ h)·R_hᵀ + Rb_h + Wb_h)` (0); `h = n + z ⊙ (h − n)` |
//!
//! Cost per step and direction (LSTM, batch `B`, hidden `H`): one product by the
//! server's `[H, 4H]` weights, one sigmoid of `4BH` elements, three secret × secret
//! products of `BH` elements (two in one wave) and their truncations, one tanh of
//! `BH` elements. GRU: one product by `[H, 3H]` (`[H, 2H]` and `[H, H]` for
//! `linear_before_reset` 0), a sigmoid of `2BH`, a tanh of `BH`, two secret products
//! of `BH` elements.
//!
//! Supported: `layout` 0 and 1; `direction` forward, reverse and bidirectional; any
//! subset of the outputs `Y`, `Y_h` (and `Y_c`); `B` absent or constant;
//! `initial_h`/`initial_c` absent (zero), constant or computed; `sequence_lens`
//! absent or constant and equal to the sequence length everywhere. Refused with an
//! error naming the node: `activations` other than the defaults, `activation_alpha`,
//! `activation_beta`, `clip`, non-zero peepholes `P`, `input_forget` = 1, shorter
//! sequences in `sequence_lens`.

use std::ops::Range;

use sci_ir::{Op, ValueId};

use super::matmul::matmul_const;
use crate::error::Result;
use crate::fold::{self, BinOp};
use crate::ops::shape_ops::reshape_value;
use crate::ops::{Ctx, Value};
use crate::shape;
use crate::tensor::Tensor;

/// The recurrent cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cell {
    /// `LSTM`: gates `i, o, f, c`.
    Lstm,
    /// `GRU`: gates `z, r, h`.
    Gru {
        /// The reset gate multiplies `h·R_hᵀ + Rb_h` (1) instead of `h` (0).
        linear_before_reset: bool,
    },
}

impl Cell {
    /// The number of gates stacked in `W`, `R` and each half of `B`.
    fn gates(self) -> usize {
        match self {
            Cell::Lstm => 4,
            Cell::Gru { .. } => 3,
        }
    }

    /// The default `activations` of one direction.
    fn default_activations(self) -> &'static [&'static str] {
        match self {
            Cell::Lstm => &["Sigmoid", "Tanh", "Tanh"],
            Cell::Gru { .. } => &["Sigmoid", "Tanh"],
        }
    }

    /// The factor applied to gate `gate`'s pre-activation: 2 for the LSTM's cell gate
    /// (its tanh is computed as `2σ(2x) − 1`), else 1.
    fn gate_factor(self, gate: usize) -> f64 {
        if self == Cell::Lstm && gate == 3 {
            2.0
        } else {
            1.0
        }
    }
}

/// `LSTM`.
pub(super) fn lstm(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    rnn(cx, Cell::Lstm)
}

/// `GRU`.
pub(super) fn gru(cx: &mut Ctx<'_>) -> Result<Vec<Value>> {
    let lbr = cx.node.attr_int_or("linear_before_reset", 0)?;
    if !matches!(lbr, 0 | 1) {
        return Err(cx.node.attr_error(
            "linear_before_reset",
            format!("must be 0 or 1, found {lbr}"),
        ));
    }
    rnn(
        cx,
        Cell::Gru {
            linear_before_reset: lbr == 1,
        },
    )
}

/// The processing directions of the `direction` attribute.
fn directions(cx: &Ctx<'_>) -> Result<Vec<bool>> {
    let dir = cx.node.attr_string("direction")?;
    match dir.as_deref().unwrap_or("forward") {
        "forward" => Ok(vec![false]),
        "reverse" => Ok(vec![true]),
        "bidirectional" => Ok(vec![false, true]),
        other => Err(cx.node.attr_error(
            "direction",
            format!("must be forward, reverse or bidirectional, found '{other}'"),
        )),
    }
}

/// Refuses the attributes this lowering does not implement.
fn check_attrs(cx: &Ctx<'_>, cell: Cell, num_directions: usize) -> Result<()> {
    let node = cx.node;
    let mut known = vec![
        "activation_alpha",
        "activation_beta",
        "activations",
        "clip",
        "direction",
        "hidden_size",
        "layout",
    ];
    known.push(match cell {
        Cell::Lstm => "input_forget",
        Cell::Gru { .. } => "linear_before_reset",
    });
    node.check_known_attrs(&known)?;
    for attr in ["activation_alpha", "activation_beta", "clip"] {
        if node.has_attr(attr) {
            return Err(node.attr_error(attr, "not supported"));
        }
    }
    if let Some(a) = node
        .attributes
        .iter()
        .find(|a| a.name.as_deref() == Some("activations"))
    {
        let defaults = cell.default_activations();
        let given: Vec<&[u8]> = a.strings.iter().map(Vec::as_slice).collect();
        let expected: Vec<&[u8]> = (0..num_directions)
            .flat_map(|_| defaults.iter().map(|s| s.as_bytes()))
            .collect();
        if given != expected {
            return Err(node.attr_error(
                "activations",
                format!(
                    "only the defaults ({} per direction) are supported",
                    defaults.join(", ")
                ),
            ));
        }
    }
    if cell == Cell::Lstm && node.attr_int_or("input_forget", 0)? != 0 {
        return Err(node.attr_error("input_forget", "input_forget = 1 is not supported"));
    }
    Ok(())
}

/// The weights of one direction, transposed for `x · Wᵀ`, with the gate factors
/// applied ([`Cell::gate_factor`]).
struct DirWeights {
    /// `Wᵀ`, `[I, G·H]`.
    wt: Weight,
    /// The input projection's bias, `[G·H]`: `Wb + Rb`, except `Rb_h` for a GRU with
    /// `linear_before_reset` 1.
    in_bias: Weight,
    /// The `Rᵀ` of the step's first product: every gate (`[H, G·H]`), but only `z, r`
    /// (`[H, 2H]`) for a GRU with `linear_before_reset` 0.
    rt: Weight,
    /// The bias of that product: `[0, 0, Rb_h]` (`[3H]`) for a GRU with
    /// `linear_before_reset` 1, else none.
    rec_bias: Option<Weight>,
    /// `R_hᵀ` (`[H, H]`) of a GRU with `linear_before_reset` 0, applied to `r ⊙ h`.
    rt_n: Option<Weight>,
}

/// A constant of the server, emitted as one IR constant on first use by a run-time
/// product (every step of the sequence reads the same one).
struct Weight {
    t: Tensor,
    id: Option<ValueId>,
}

impl Weight {
    fn new(t: Tensor) -> Weight {
        Weight { t, id: None }
    }

    /// The IR constant.
    fn id(&mut self, cx: &mut Ctx<'_>, suffix: &str) -> Result<ValueId> {
        if let Some(id) = self.id {
            return Ok(id);
        }
        let id = cx.act(&Value::constant(self.t.clone()), suffix)?;
        self.id = Some(id);
        Ok(id)
    }
}

/// Of `[D, rows, cols]` data `m` (flat), direction `d`'s matrix transposed to
/// `[cols, rows]`, its column `j` (row `j` of the original) times `factor(j)`.
fn transposed(
    m: &[f64],
    d: usize,
    [rows, cols]: [usize; 2],
    factor: impl Fn(usize) -> f64,
) -> Vec<f64> {
    let base = d * rows * cols;
    let mut out = vec![0.0; rows * cols];
    for j in 0..rows {
        for i in 0..cols {
            out[i * rows + j] = m[base + j * cols + i] * factor(j);
        }
    }
    out
}

/// Columns `range` of a `[rows, cols]` row-major matrix.
fn columns(m: &[f64], cols: usize, range: Range<usize>) -> Vec<f64> {
    m.chunks(cols)
        .flat_map(|row| row[range.clone()].iter().copied())
        .collect()
}

fn f32_tensor(cx: &Ctx<'_>, shape: Vec<usize>, v: &[f64]) -> Result<Tensor> {
    let v: Vec<f32> = v.iter().map(|&x| x as f32).collect();
    Tensor::from_f32(shape, &v).map_err(|e| cx.error(e))
}

/// Reads `W`, `R` and `B` (empty if absent) of direction `d`.
fn dir_weights(
    cx: &Ctx<'_>,
    cell: Cell,
    d: usize,
    [w, r, b]: [&[f64]; 3],
    [input, hidden]: [usize; 2],
) -> Result<DirWeights> {
    let gh = cell.gates() * hidden;
    let factor = |j: usize| cell.gate_factor(j / hidden);
    let wt = transposed(w, d, [gh, input], factor);
    let rt = transposed(r, d, [gh, hidden], factor);
    let (wb, rb) = if b.is_empty() {
        (vec![0.0; gh], vec![0.0; gh])
    } else {
        let base = d * 2 * gh;
        (
            b[base..base + gh].to_vec(),
            b[base + gh..base + 2 * gh].to_vec(),
        )
    };
    let lbr = match cell {
        Cell::Lstm => None,
        Cell::Gru {
            linear_before_reset,
        } => Some(linear_before_reset),
    };
    let n_gate = 2 * hidden..3 * hidden;
    let in_bias: Vec<f64> = (0..gh)
        .map(|j| {
            // Rb_h stays out where the reset gate multiplies it.
            let rbj = if lbr == Some(true) && n_gate.contains(&j) {
                0.0
            } else {
                rb[j]
            };
            (wb[j] + rbj) * factor(j)
        })
        .collect();
    let (rt, rt_n) = if lbr == Some(false) {
        let zr = columns(&rt, gh, 0..2 * hidden);
        let n = columns(&rt, gh, n_gate.clone());
        (
            f32_tensor(cx, vec![hidden, 2 * hidden], &zr)?,
            Some(Weight::new(f32_tensor(cx, vec![hidden, hidden], &n)?)),
        )
    } else {
        (f32_tensor(cx, vec![hidden, gh], &rt)?, None)
    };
    let rec_bias = match lbr {
        Some(true) => {
            let b: Vec<f64> = (0..gh)
                .map(|j| if n_gate.contains(&j) { rb[j] } else { 0.0 })
                .collect();
            Some(Weight::new(f32_tensor(cx, vec![gh], &b)?))
        }
        _ => None,
    };
    Ok(DirWeights {
        wt: Weight::new(f32_tensor(cx, vec![input, gh], &wt)?),
        in_bias: Weight::new(f32_tensor(cx, vec![gh], &in_bias)?),
        rt: Weight::new(rt),
        rec_bias,
        rt_n,
    })
}

/// Whether `v` is a constant of zeros.
fn is_zero(v: &Value) -> bool {
    matches!(v, Value::Const(t) if t.to_f64().iter().all(|&x| x == 0.0))
}

/// Elementwise `a op b` (numpy broadcasting): folded when both are constant, and a
/// constant zero for a product with a constant zero; else the IR op (a constant
/// operand becomes a server constant).
fn binary(cx: &mut Ctx<'_>, a: &Value, b: &Value, op: BinOp) -> Result<Value> {
    let folds = matches!((a, b), (Value::Const(_), Value::Const(_)))
        || (op == BinOp::Mul && (is_zero(a) || is_zero(b)));
    if folds {
        let zero = |v: &Value, cx: &Ctx<'_>| -> Result<Tensor> {
            match v {
                Value::Const(t) => Ok((**t).clone()),
                Value::Act(_) => {
                    let shape = cx.shape_of(v);
                    let n = shape::numel(&shape).map_err(|e| cx.error(e))?;
                    Tensor::from_f32(shape, &vec![0.0; n]).map_err(|e| cx.error(e))
                }
            }
        };
        let (ta, tb) = (zero(a, cx)?, zero(b, cx)?);
        return fold::binary(&ta, &tb, op)
            .map(Value::constant)
            .map_err(|e| cx.error(e));
    }
    // x ± 0 and 0 + x (a zero of the result's shape).
    let shape = |v: &Value| cx.shape_of(v);
    if matches!(op, BinOp::Add | BinOp::Sub) && is_zero(b) && shape(a) == shape(b) {
        return Ok(a.clone());
    }
    if op == BinOp::Add && is_zero(a) && shape(a) == shape(b) {
        return Ok(b.clone());
    }
    let (x, y) = (cx.act(a, "k")?, cx.act(b, "k")?);
    cx.emit_value(match op {
        BinOp::Add => Op::Add { a: x, b: y },
        BinOp::Sub => Op::Sub { a: x, b: y },
        _ => Op::Mul { a: x, b: y },
    })
}

/// Indices `range` of `v` along `axis`: folded for a constant, an IR `gather` else.
fn take(cx: &mut Ctx<'_>, v: &Value, axis: usize, range: Range<usize>) -> Result<Value> {
    match v {
        Value::Const(t) => {
            let idx = Tensor::from_i64(vec![range.len()], range.map(|i| i as i64).collect())
                .map_err(|e| cx.error(e))?;
            fold::gather(t, &idx, axis as i64)
                .map(Value::constant)
                .map_err(|e| cx.error(e))
        }
        Value::Act(x) => cx.emit_value(Op::Gather {
            x: *x,
            axis,
            indices: range.collect(),
        }),
    }
}

/// `a · w (+ bias)` for the server's `w` (`[K, N]`) and `bias` (`[N]`): folded for a
/// constant `a`, an IR `matmul` else.
fn times_weights(
    cx: &mut Ctx<'_>,
    a: &Value,
    w: &mut Weight,
    bias: Option<&mut Weight>,
) -> Result<Value> {
    match a {
        Value::Const(t) => {
            let p = matmul_const(cx, t, &w.t)?;
            match bias {
                Some(b) => fold::binary(&p, &b.t, BinOp::Add)
                    .map(Value::constant)
                    .map_err(|e| cx.error(e)),
                None => Ok(Value::constant(p)),
            }
        }
        Value::Act(x) => {
            let wv = w.id(cx, "W")?;
            let bias = match bias {
                Some(b) => Some(b.id(cx, "B")?),
                None => None,
            };
            cx.emit_value(Op::MatMul { a: *x, b: wv, bias })
        }
    }
}

/// `sigmoid` (`tanh` false) or `tanh` of `v`.
fn smooth(cx: &mut Ctx<'_>, v: &Value, tanh: bool) -> Result<Value> {
    let x = cx.act(v, "pre")?;
    cx.emit_value(if tanh {
        Op::Tanh { x }
    } else {
        Op::Sigmoid { x }
    })
}

/// Stacks values of equal shape `s` into `[n, ...s]` (a `concat` of their `[1, ...s]`
/// reshapes).
fn stack(cx: &mut Ctx<'_>, vs: &[Value]) -> Result<Value> {
    let mut ids = Vec::with_capacity(vs.len());
    for v in vs {
        let mut s = cx.shape_of(v);
        s.insert(0, 1);
        let r = reshape_value(cx, v, s)?;
        ids.push(cx.act(&r, "h")?);
    }
    if ids.len() == 1 {
        return Ok(Value::Act(ids[0]));
    }
    cx.emit_value(Op::Concat { xs: ids, axis: 0 })
}

/// A transpose of `v` by `perm`.
fn permute(cx: &mut Ctx<'_>, v: &Value, perm: Vec<usize>) -> Result<Value> {
    let x = cx.act(v, "t")?;
    cx.emit_value(Op::Transpose { x, perm })
}

/// The state of one direction: hidden state and (LSTM) cell state, `[B, H]` each.
struct State {
    h: Value,
    c: Option<Value>,
}

/// One step, an LSTM's if the state carries a cell state, else a GRU's: the gates'
/// input projection `xt` (`[B, G·H]`, this step's rows) and the previous state give
/// the next state.
fn step(cx: &mut Ctx<'_>, w: &mut DirWeights, xt: &Value, st: &State) -> Result<State> {
    let h = cx.shape_of(&st.h)[1];
    let cols = |cx: &mut Ctx<'_>, v: &Value, r: Range<usize>| take(cx, v, 1, r);
    let rec = times_weights(cx, &st.h, &mut w.rt, w.rec_bias.as_mut())?;
    // An LSTM carries a cell state, a GRU none.
    if let Some(c) = &st.c {
        let pre = binary(cx, xt, &rec, BinOp::Add)?;
        let s = smooth(cx, &pre, false)?;
        let i = cols(cx, &s, 0..h)?;
        let o = cols(cx, &s, h..2 * h)?;
        let f = cols(cx, &s, 2 * h..3 * h)?;
        // g = tanh(x) = 2σ(2x) − 1 = 2g' − 1 (the pre-activation is already doubled),
        // so i ⊙ g = 2(i ⊙ g') − i.
        let g = cols(cx, &s, 3 * h..4 * h)?;
        let fc = binary(cx, &f, c, BinOp::Mul)?;
        let ig = binary(cx, &i, &g, BinOp::Mul)?;
        let ig = binary(cx, &ig, &ig, BinOp::Add)?;
        let ig = binary(cx, &ig, &i, BinOp::Sub)?;
        let c = binary(cx, &fc, &ig, BinOp::Add)?;
        let tc = smooth(cx, &c, true)?;
        let h = binary(cx, &o, &tc, BinOp::Mul)?;
        return Ok(State { h, c: Some(c) });
    }
    let x_zr = cols(cx, xt, 0..2 * h)?;
    let x_n = cols(cx, xt, 2 * h..3 * h)?;
    let rec_zr = match w.rt_n {
        Some(_) => rec.clone(),
        None => cols(cx, &rec, 0..2 * h)?,
    };
    let pre = binary(cx, &x_zr, &rec_zr, BinOp::Add)?;
    let s = smooth(cx, &pre, false)?;
    let z = cols(cx, &s, 0..h)?;
    let r = cols(cx, &s, h..2 * h)?;
    let n_rec = match w.rt_n.as_mut() {
        // linear_before_reset = 0: (r ⊙ h)·R_hᵀ.
        Some(rt_n) => {
            let rh = binary(cx, &r, &st.h, BinOp::Mul)?;
            times_weights(cx, &rh, rt_n, None)?
        }
        // linear_before_reset = 1: r ⊙ (h·R_hᵀ + Rb_h).
        None => {
            let n = cols(cx, &rec, 2 * h..3 * h)?;
            binary(cx, &r, &n, BinOp::Mul)?
        }
    };
    let pre_n = binary(cx, &x_n, &n_rec, BinOp::Add)?;
    let n = smooth(cx, &pre_n, true)?;
    // h = (1 − z) ⊙ n + z ⊙ h = n + z ⊙ (h − n).
    let d = binary(cx, &st.h, &n, BinOp::Sub)?;
    let zd = binary(cx, &z, &d, BinOp::Mul)?;
    let h = binary(cx, &n, &zd, BinOp::Add)?;
    Ok(State { h, c: None })
}

/// Input `i` as a constant's values (empty if absent), checked to have shape `want`.
fn weights(cx: &Ctx<'_>, i: usize, what: &str, want: &[usize]) -> Result<Vec<f64>> {
    let Some(t) = cx.opt_const_input(i, what)? else {
        return Ok(Vec::new());
    };
    if t.shape() != want {
        return Err(cx.error(format!(
            "{what} has shape {:?}, expected {want:?}",
            t.shape()
        )));
    }
    Ok(t.to_f64())
}

/// The initial state `initial_h`/`initial_c` (input `i`) of direction `d` as `[B, H]`;
/// zero when absent.
fn initial(
    cx: &mut Ctx<'_>,
    i: usize,
    d: usize,
    layout1: bool,
    [b, h]: [usize; 2],
) -> Result<Value> {
    let Some(v) = cx.opt_input(i).cloned() else {
        let zeros = Tensor::from_f32(vec![b, h], &vec![0.0; b * h]).map_err(|e| cx.error(e))?;
        return Ok(Value::constant(zeros));
    };
    let axis = usize::from(layout1);
    let s = cx.shape_of(&v);
    if s.len() != 3 || s[axis] <= d || s[1 - axis] != b || s[2] != h {
        return Err(cx.error(format!(
            "input #{i} ('{}') has shape {s:?}, expected {:?}",
            cx.input_name(i),
            if layout1 { "[B, D, H]" } else { "[D, B, H]" }
        )));
    }
    let one = take(cx, &v, axis, d..d + 1)?;
    reshape_value(cx, &one, vec![b, h])
}

/// `LSTM`/`GRU` (module docs).
fn rnn(cx: &mut Ctx<'_>, cell: Cell) -> Result<Vec<Value>> {
    let dirs = directions(cx)?;
    let nd = dirs.len();
    check_attrs(cx, cell, nd)?;
    let layout1 = match cx.node.attr_int_or("layout", 0)? {
        0 => false,
        1 => true,
        other => {
            return Err(cx
                .node
                .attr_error("layout", format!("must be 0 or 1, found {other}")));
        }
    };
    let x = cx.input(0)?.clone();
    if matches!(x, Value::Const(_)) {
        return Err(cx.error("X must be a run-time tensor"));
    }
    let xs = cx.shape_of(&x);
    if xs.len() != 3 {
        return Err(cx.error(format!("X must have rank 3, found shape {xs:?}")));
    }
    let (t_len, batch, input) = if layout1 {
        (xs[1], xs[0], xs[2])
    } else {
        (xs[0], xs[1], xs[2])
    };
    if t_len == 0 {
        return Err(cx.error("an empty sequence"));
    }
    let r_shape = cx.input_shape(2)?;
    let hidden = match cx.node.attr_int("hidden_size")? {
        Some(h) if h > 0 => h as usize,
        Some(h) => {
            return Err(cx
                .node
                .attr_error("hidden_size", format!("must be positive, found {h}")));
        }
        None => r_shape.get(2).copied().unwrap_or(0),
    };
    let gh = cell.gates() * hidden;
    let w = weights(cx, 1, "W", &[nd, gh, input])?;
    let r = weights(cx, 2, "R", &[nd, gh, hidden])?;
    let b = weights(cx, 3, "B", &[nd, 2 * gh])?;
    if let Some(lens) = cx.opt_const_ints(4, "sequence_lens")?
        && lens.iter().any(|&l| l != t_len as i64)
    {
        return Err(cx.error(format!(
            "sequence_lens {lens:?}: only sequences of the full length {t_len} are supported"
        )));
    }
    if cell == Cell::Lstm
        && weights(cx, 7, "P", &[nd, 3 * hidden])?
            .iter()
            .any(|&p| p != 0.0)
    {
        return Err(cx.error("peepholes P other than zero are not supported"));
    }
    // X as [T·B, I], time-major.
    let x = if layout1 {
        permute(cx, &x, vec![1, 0, 2])?
    } else {
        x
    };
    let x = reshape_value(cx, &x, vec![t_len * batch, input])?;
    let mut ys: Vec<Vec<Value>> = Vec::with_capacity(nd);
    let mut last: Vec<State> = Vec::with_capacity(nd);
    for (d, &reverse) in dirs.iter().enumerate() {
        let mut wd = dir_weights(cx, cell, d, [&w, &r, &b], [input, hidden])?;
        let xw = times_weights(cx, &x, &mut wd.wt, Some(&mut wd.in_bias))?;
        let mut st = State {
            h: initial(cx, 5, d, layout1, [batch, hidden])?,
            c: match cell {
                Cell::Lstm => Some(initial(cx, 6, d, layout1, [batch, hidden])?),
                Cell::Gru { .. } => None,
            },
        };
        let mut hs = vec![None; t_len];
        for k in 0..t_len {
            let t = if reverse { t_len - 1 - k } else { k };
            let xt = take(cx, &xw, 0, t * batch..(t + 1) * batch)?;
            st = step(cx, &mut wd, &xt, &st)?;
            hs[t] = Some(st.h.clone());
        }
        ys.push(hs.into_iter().flatten().collect());
        last.push(st);
    }
    // Y: [T, D, B, H] (layout 1: [B, T, D, H]).
    let mut all = Vec::with_capacity(t_len * nd);
    for t in 0..t_len {
        all.extend(ys.iter().map(|hs| hs[t].clone()));
    }
    let y = stack(cx, &all)?;
    let y = reshape_value(cx, &y, vec![t_len, nd, batch, hidden])?;
    let mut outs = vec![if layout1 {
        permute(cx, &y, vec![2, 0, 1, 3])?
    } else {
        y
    }];
    // Y_h, Y_c: [D, B, H] (layout 1: [B, D, H]).
    let mut finals = vec![last.iter().map(|s| s.h.clone()).collect::<Vec<_>>()];
    if cell == Cell::Lstm {
        finals.push(last.iter().filter_map(|s| s.c.clone()).collect());
    }
    for vs in finals {
        let y = stack(cx, &vs)?;
        outs.push(if layout1 {
            permute(cx, &y, vec![1, 0, 2])?
        } else {
            y
        });
    }
    Ok(outs)
}
