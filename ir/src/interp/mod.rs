//! The reference interpreter: executes a typed program on concrete tensors with exactly
//! the semantics of [`crate::Op`] — f32 for `Real`, wrapping ℓ-bit two's complement for
//! rings (ℓ = 1 and 64 included), arithmetic mod n for fields; `trunc` and `div_public`
//! are [`crate::fixed::trunc`] and [`crate::fixed::rdiv`] (CrypTFlow2 Corollary 4.2 and
//! equation 2); MaxPool/ArgMax keep the first maximum.
//!
//! It is the oracle the secure protocols and the executor are tested against, and the
//! frontend's float interpreter. Kernels are written once, generic over the element
//! domain (`domain`), and parallel (rayon) over output planes / rows for large layers.
//!
//! [`run`] returns the outputs; [`eval`] can also keep every intermediate value and
//! track, per value, the largest magnitude reached ([`Magnitude`]) — used by autotuning:
//! run at ℓ = 64, read the magnitudes, pick the smallest ℓ that holds them.

mod domain;
mod kernels;
pub mod linear;

use crate::check::CheckErrorKind;
use crate::fixed;
use crate::math;
use crate::ops::{ConvGeom, Op, Pool2d, Scalar};
use crate::program::{Program, ValueId};
use crate::spline::{SplineFn, SplineParams};
use crate::tensor::{Tensor, TensorError};
use crate::types::{Encoding, ShapeDisplay, Type};
use domain::{Dom, FieldD, RealD, RingD};
use kernels::PoolKind;
use math::{RsqrtParams, Smooth, SmoothParams, SoftmaxParams};
use thiserror::Error;

/// Evaluates `$body` with `$d` bound to the element domain of encoding `$enc` (the body
/// is instantiated once per domain).
macro_rules! with_dom {
    ($enc:expr, $d:ident => $body:expr) => {
        match $enc {
            Encoding::Real => {
                let $d = RealD;
                $body
            }
            enc @ Encoding::Ring { .. } => {
                let $d = RingD::new(enc);
                $body
            }
            enc @ Encoding::Field { modulus } => {
                let $d = FieldD::new(enc, modulus);
                $body
            }
        }
    };
}
pub(crate) use with_dom;

/// Why an evaluation failed.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum InterpError {
    /// Wrong number of inputs.
    #[error("the program has {expected} inputs, {found} were given")]
    InputCount {
        /// Inputs of the program.
        expected: usize,
        /// Inputs given.
        found: usize,
    },
    /// An input tensor does not match the declared type.
    #[error("input %{name}: expected {expected}, found {found}")]
    InputType {
        /// Input value name.
        name: String,
        /// Declared type.
        expected: Type,
        /// What was given (encoding and shape).
        found: String,
    },
    /// A constant's data is withheld (the client's view of a plan).
    #[error("constant %{name} has no data (server weights withheld in a client view)")]
    Withheld {
        /// Constant value name.
        name: String,
    },
    /// A `trunc` marked `nonneg` met a negative value.
    #[error("%{name} = trunc nonneg: element {index} of the operand is negative ({value})")]
    NonNegViolated {
        /// The trunc's value name.
        name: String,
        /// Row-major position of the offending element.
        index: usize,
        /// Its signed value.
        value: i64,
    },
    /// [`eval_op`]: the op does not type-check against the program's values.
    #[error("{0}")]
    Op(CheckErrorKind),
    /// [`eval_op`]: an operand tensor is missing or does not have its value's encoding
    /// and shape.
    #[error("operand %{name}: expected a tensor of its type, found {found}")]
    Operand {
        /// The operand's value name.
        name: String,
        /// What was supplied (encoding and shape), or "nothing".
        found: String,
    },
    /// [`eval_op`] on an `input`: its data is given, not computed.
    #[error("an input's data is given, not computed")]
    NotComputed,
    /// Internal: a result did not form a valid tensor (would indicate a bug).
    #[error("%{name}: {source}")]
    Tensor {
        /// Value name.
        name: String,
        /// The error.
        source: TensorError,
    },
}

/// The largest absolute value a tensor reached: `|signed(v)|` for rings and fields, `|x|`
/// for f32.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Magnitude {
    /// Largest `|signed(v)|` of a ring/field value.
    Int(u64),
    /// Largest `|x|` of an f32 value (NaNs ignored).
    Real(f32),
}

impl Magnitude {
    /// Smallest ring width ℓ whose signed range `[−2^(ℓ−1), 2^(ℓ−1) − 1]` holds every value
    /// of magnitude at most this one (both signs): `bit_length(m) + 1`. `None` for `Real`.
    pub fn ring_bits(&self) -> Option<u32> {
        match *self {
            Magnitude::Int(m) => Some(64 - m.leading_zeros() + 1),
            Magnitude::Real(_) => None,
        }
    }

    /// The larger of two magnitudes of the same kind (the first if kinds differ).
    pub fn max(self, other: Magnitude) -> Magnitude {
        match (self, other) {
            (Magnitude::Int(a), Magnitude::Int(b)) => Magnitude::Int(a.max(b)),
            (Magnitude::Real(a), Magnitude::Real(b)) => Magnitude::Real(a.max(b)),
            (a, _) => a,
        }
    }
}

/// What [`eval`] should keep besides the outputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Keep every intermediate value (otherwise values are freed after their last use).
    pub keep_values: bool,
    /// Record the largest magnitude of every value.
    pub track_ranges: bool,
}

/// The result of [`eval`].
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// The outputs, in the order of [`Program::outputs`].
    pub outputs: Vec<Tensor>,
    /// With [`Options::keep_values`]: every value, indexed by [`ValueId::index`].
    pub values: Option<Vec<Tensor>>,
    /// With [`Options::track_ranges`]: the largest magnitude of every value, indexed by
    /// [`ValueId::index`].
    pub ranges: Option<Vec<Magnitude>>,
}

/// Runs `program` on `inputs` (in the order of [`Program::inputs`]) and returns the
/// outputs (in the order of [`Program::outputs`]).
pub fn run(program: &Program, inputs: &[Tensor]) -> Result<Vec<Tensor>, InterpError> {
    eval(program, inputs, Options::default()).map(|e| e.outputs)
}

/// Runs `program` on `inputs` and also returns what `opts` asks for.
pub fn eval(
    program: &Program,
    inputs: &[Tensor],
    opts: Options,
) -> Result<Evaluation, InterpError> {
    let input_ids = program.inputs();
    if input_ids.len() != inputs.len() {
        return Err(InterpError::InputCount {
            expected: input_ids.len(),
            found: inputs.len(),
        });
    }
    // Last use of every value, to free it early.
    let n = program.instrs().len();
    let mut last_use = vec![0usize; n];
    for v in program.ids() {
        for o in program.instr(v).op.operands() {
            last_use[o.index()] = v.index();
        }
    }
    let mut vals: Vec<Option<Tensor>> = vec![None; n];
    let mut ranges = opts.track_ranges.then(|| Vec::with_capacity(n));
    let mut next_input = inputs.iter();
    let mut outputs = Vec::new();
    for v in program.ids() {
        let instr = program.instr(v);
        let t = match &instr.op {
            Op::Input { ty, .. } => {
                let t = next_input.next().expect("input count checked above");
                if t.encoding() != ty.encoding() || t.shape() != ty.shape() {
                    return Err(InterpError::InputType {
                        name: instr.name.clone(),
                        expected: ty.clone(),
                        found: format!("{}{}", t.encoding(), ShapeDisplay(t.shape())),
                    });
                }
                t.clone()
            }
            Op::Const { id, .. } => {
                program
                    .const_data(*id)
                    .cloned()
                    .ok_or_else(|| InterpError::Withheld {
                        name: instr.name.clone(),
                    })?
            }
            op => {
                let arg = |x: ValueId| {
                    vals[x.index()]
                        .as_ref()
                        .expect("operands are computed before use and freed after their last use")
                };
                compute(&instr.name, &instr.ty, op, &arg)?
            }
        };
        if let Some(r) = ranges.as_mut() {
            r.push(max_magnitude(&t));
        }
        if matches!(instr.op, Op::Output { .. }) {
            outputs.push(t.clone());
        }
        vals[v.index()] = Some(t);
        if !opts.keep_values {
            for o in instr.op.operands() {
                if last_use[o.index()] == v.index() {
                    vals[o.index()] = None;
                }
            }
        }
    }
    let values = opts.keep_values.then(|| {
        vals.into_iter()
            .map(|t| t.expect("every value is kept"))
            .collect()
    });
    Ok(Evaluation {
        outputs,
        values,
        ranges,
    })
}

/// The largest magnitude of a tensor ([`Magnitude`]).
pub fn max_magnitude(t: &Tensor) -> Magnitude {
    with_dom!(t.encoding(), d => d.max_magnitude(dom_slice(d, t)))
}

/// Evaluates one op on given tensors without building a program: `op`'s operands are
/// values of `program`, and `operand(v)` supplies a tensor of `v`'s encoding and shape
/// (not necessarily `v`'s value: the runtime passes secret shares and applies a linear
/// op to each). The result has the type the type checker infers for `op` in `program`.
///
/// This is the interpreter's own evaluation of an instruction (the same kernels as
/// [`run`]), checked so that it never panics: `op` is type-checked against the program
/// (it may differ from the program's instructions, e.g. in a `pad` value), every
/// operand must be supplied with its value's encoding and shape, and an `input` (whose
/// data only the caller knows) is rejected. Cost: the kernel's, no copy of the operands.
pub fn eval_op<'t>(
    program: &Program,
    op: &Op,
    operand: &dyn Fn(ValueId) -> Option<&'t Tensor>,
) -> Result<Tensor, InterpError> {
    let ty = crate::check::infer(op, |v| program.get(v).map(|i| &i.ty), program.consts())
        .map_err(InterpError::Op)?;
    match op {
        Op::Input { .. } => Err(InterpError::NotComputed),
        Op::Const { id, .. } => program
            .const_data(*id)
            .cloned()
            .ok_or(InterpError::Withheld {
                name: format!("const #{}", id.index()),
            }),
        _ => {
            let mut args = Vec::with_capacity(op.operands().len());
            for &v in op.operands() {
                let expected = program.ty(v);
                let t = operand(v).ok_or_else(|| InterpError::Operand {
                    name: program.name(v).to_string(),
                    found: "nothing".into(),
                })?;
                if t.encoding() != expected.encoding() || t.shape() != expected.shape() {
                    return Err(InterpError::Operand {
                        name: program.name(v).to_string(),
                        found: format!("{}{}", t.encoding(), ShapeDisplay(t.shape())),
                    });
                }
                args.push((v, t));
            }
            let arg = |v: ValueId| {
                args.iter()
                    .find(|(o, _)| *o == v)
                    .map(|(_, t)| *t)
                    .expect("every operand was supplied and checked above")
            };
            compute(op.mnemonic(), &ty, op, &arg)
        }
    }
}

/// The elements of a tensor of domain `D`.
fn dom_slice<D: Dom>(_: D, t: &Tensor) -> &[D::E] {
    D::slice(t)
}

/// Computes a (non-input, non-constant) instruction named `name` of type `ty` in the
/// domain of its operands.
fn compute<'a>(
    name: &str,
    ty: &Type,
    op: &Op,
    arg: &impl Fn(ValueId) -> &'a Tensor,
) -> Result<Tensor, InterpError> {
    let enc = op
        .operands()
        .first()
        .map_or(ty.encoding(), |x| arg(**x).encoding());
    let data = with_dom!(enc, d => eval_kernel(d, name, ty, op, arg)?);
    Tensor::new(ty.encoding(), ty.shape().to_vec(), data).map_err(|source| InterpError::Tensor {
        name: name.to_string(),
        source,
    })
}

/// Evaluates one (non-input, non-constant) op in domain `d`.
fn eval_kernel<'a, D: Dom>(
    d: D,
    name: &str,
    ty: &Type,
    op: &Op,
    arg: &impl Fn(ValueId) -> &'a Tensor,
) -> Result<crate::tensor::Data, InterpError> {
    let x_of = |v: ValueId| D::slice(arg(v));
    let shape_of = |v: ValueId| arg(v).shape();
    let out_shape = ty.shape();
    let map = |x: ValueId, f: &dyn Fn(D::E) -> D::E| -> Vec<D::E> {
        x_of(x).iter().map(|&e| f(e)).collect()
    };
    let v: Vec<D::E> = match op {
        Op::Input { .. } | Op::Const { .. } => unreachable!("handled by the driver"),
        Op::Conv2d { x, w, bias, conv } => {
            let (xs, ws) = (shape_of(*x), shape_of(*w));
            let g = ConvGeom {
                input: [xs[0], xs[1], xs[2], xs[3]],
                c_out: ws[0],
                kernel: [ws[2], ws[3]],
                conv: *conv,
            };
            kernels::conv2d(d, x_of(*x), x_of(*w), bias.map(x_of), &g)
        }
        Op::MatMul { a, b, bias } => {
            let (sa, sb) = (shape_of(*a), shape_of(*b));
            kernels::matmul(d, x_of(*a), x_of(*b), bias.map(x_of), (sa[0], sa[1], sb[1]))
        }
        Op::Add { a, b } | Op::Sub { a, b } | Op::Mul { a, b } => {
            let f = |p: D::E, q: D::E| match op {
                Op::Add { .. } => d.add(p, q),
                Op::Sub { .. } => d.sub(p, q),
                _ => d.mul(p, q),
            };
            kernels::broadcast(x_of(*a), shape_of(*a), x_of(*b), shape_of(*b), out_shape, f)
        }
        Op::MulPublic { x, k } => map(*x, &|e| d.mul_public(e, *k)),
        Op::ScaleUp { x, k } => return Ok(scale_up(arg(*x), *k)),
        Op::Trunc { x, s, nonneg } => return trunc(name, arg(*x), *s, *nonneg),
        Op::ReluTrunc { x, s } => return Ok(relu_trunc(arg(*x), *s)),
        Op::DivPublic { x, d: q } => map(*x, &|e| d.div_public(e, *q)),
        Op::Relu { x } => map(*x, &|e| if d.is_neg(e) { d.zero() } else { e }),
        Op::Sigmoid { x } | Op::Tanh { x } => {
            let kind = op.smooth().map_or(Smooth::Sigmoid, |(k, _)| k);
            return smooth(arg(*x), kind, ty.scale());
        }
        Op::Rsqrt { x } => return rsqrt(arg(*x), ty.scale()),
        Op::Spline { x, func } => return spline(arg(*x), *func, ty.scale()),
        Op::Softmax { x, axis } => return softmax(arg(*x), *axis, ty.scale()),
        Op::MaxPool { x, .. } | Op::AvgPool { x, .. } | Op::GlobalAvgPool { x } => {
            let xs = shape_of(*x);
            let xs = [xs[0], xs[1], xs[2], xs[3]];
            let (pool, kind) = match op {
                Op::MaxPool { pool, .. } => (*pool, PoolKind::Max),
                Op::AvgPool {
                    pool,
                    count_include_pad,
                    ..
                } => (
                    *pool,
                    PoolKind::Avg {
                        count_include_pad: *count_include_pad,
                    },
                ),
                _ => (
                    Pool2d::global([xs[2], xs[3]]),
                    PoolKind::Avg {
                        count_include_pad: false,
                    },
                ),
            };
            let out = (out_shape[2], out_shape[3]);
            kernels::pool2d(d, x_of(*x), xs, out, &pool, kind)
        }
        Op::ArgMax { x, axis, .. } => kernels::argmax(d, x_of(*x), shape_of(*x), *axis),
        Op::Reshape { x, .. }
        | Op::Flatten { x, .. }
        | Op::Identity { x }
        | Op::Output { x, .. } => x_of(*x).to_vec(),
        Op::Transpose { x, perm } => kernels::transpose(x_of(*x), shape_of(*x), perm),
        Op::Gather { x, axis, indices } => kernels::gather(x_of(*x), shape_of(*x), *axis, indices),
        Op::Concat { xs, axis } => {
            let parts: Vec<(&[D::E], &[usize])> =
                xs.iter().map(|&x| (x_of(x), shape_of(x))).collect();
            kernels::concat(&parts, *axis)
        }
        Op::Pad { x, pads, value } => {
            let fill = scalar_tensor(name, *value, arg(*x).encoding())?;
            kernels::pad(x_of(*x), shape_of(*x), pads, out_shape, D::slice(&fill)[0])
        }
        Op::BatchNorm {
            x,
            scale,
            bias,
            mean,
            var,
            epsilon,
        } => {
            let params = [*scale, *bias, *mean, *var].map(arg);
            return Ok(batchnorm(arg(*x), params, *epsilon));
        }
    };
    Ok(D::wrap(v))
}

/// The words of a fixed-point tensor (the type checker keeps f32 out of the ops that
/// call this).
fn words(t: &Tensor) -> &[u64] {
    t.as_u64()
        .expect("fixed-point only op on an integer tensor")
}

/// `scale_up`: `x · 2^k` mod 2^ℓ or n.
fn scale_up(t: &Tensor, k: u32) -> crate::tensor::Data {
    // Both factors are below 2^64, so the u128 product cannot overflow (k < ℓ ≤ 64 and
    // 2^k < n by the type checker).
    let enc = t.encoding();
    let m = enc.modulus().expect("fixed-point only op");
    let f = enc.reduce(1i128 << k.min(126));
    let v = words(t)
        .iter()
        .map(|&e| ((u128::from(e) * u128::from(f)) % m) as u64);
    crate::tensor::Data::U64(v.collect())
}

/// `trunc` by `s`; with `nonneg`, an error at the first negative element of value
/// `name`.
fn trunc(name: &str, t: &Tensor, s: u32, nonneg: bool) -> Result<crate::tensor::Data, InterpError> {
    let enc = t.encoding();
    let xs = words(t);
    if nonneg && let Some(index) = xs.iter().position(|&e| enc.signed(e) < 0) {
        return Err(InterpError::NonNegViolated {
            name: name.to_string(),
            index,
            value: enc.signed(xs[index]),
        });
    }
    let v = xs.iter().map(|&e| fixed::trunc(e, s, enc));
    Ok(crate::tensor::Data::U64(v.collect()))
}

/// `relu_trunc`: `max(x, 0) ≫ s` of each element (0 for a negative one).
fn relu_trunc(t: &Tensor, s: u32) -> crate::tensor::Data {
    let enc = t.encoding();
    let v = words(t).iter().map(|&e| {
        if enc.signed(e) < 0 {
            0
        } else {
            fixed::trunc(e, s, enc)
        }
    });
    crate::tensor::Data::U64(v.collect())
}

/// `sigmoid`/`tanh` at scale `s`: over a ring [`math::smooth`] (the type checker
/// guarantees its parameters), in `f32` the float functions; not defined over a field.
fn smooth(t: &Tensor, kind: Smooth, s: u32) -> Result<crate::tensor::Data, InterpError> {
    let unsupported = |reason: String| {
        InterpError::Op(CheckErrorKind::Encoding {
            operand: "x".into(),
            expected: reason,
            found: t.encoding(),
        })
    };
    match (t.encoding(), t.as_f32()) {
        (_, Some(f)) => Ok(crate::tensor::Data::F32(
            f.iter()
                .map(|&v| match kind {
                    Smooth::Sigmoid => 1.0 / (1.0 + (-v).exp()),
                    Smooth::Tanh => v.tanh(),
                })
                .collect(),
        )),
        (Encoding::Ring { bits }, None) => {
            let p = SmoothParams::of_op(kind, bits, s).map_err(|e| unsupported(e.to_string()))?;
            let v = words(t).iter().map(|&e| math::smooth(&p, e));
            Ok(crate::tensor::Data::U64(v.collect()))
        }
        _ => Err(unsupported("f32 or a ring i<ℓ> (sigmoid and tanh)".into())),
    }
}

/// `spline` at scale `s`: over a ring [`crate::spline::spline`] (the type checker
/// guarantees its parameters), in `f32` the real function; not defined over a field.
fn spline(t: &Tensor, func: SplineFn, s: u32) -> Result<crate::tensor::Data, InterpError> {
    let unsupported = |reason: String| {
        InterpError::Op(CheckErrorKind::Encoding {
            operand: "x".into(),
            expected: reason,
            found: t.encoding(),
        })
    };
    match (t.encoding(), t.as_f32()) {
        (_, Some(f)) => Ok(crate::tensor::Data::F32(
            f.iter().map(|&v| func.eval(f64::from(v)) as f32).collect(),
        )),
        (Encoding::Ring { bits }, None) => {
            let p = SplineParams::new(func, bits, s).map_err(|e| unsupported(e.to_string()))?;
            let v = words(t).iter().map(|&e| crate::spline::spline(&p, e));
            Ok(crate::tensor::Data::U64(v.collect()))
        }
        _ => Err(unsupported("f32 or a ring i<ℓ> (spline)".into())),
    }
}

/// `rsqrt` at scale `s`: over a ring [`math::rsqrt`] (the type checker guarantees its
/// parameters), in `f32` `1/√max(x, 0)`; not defined over a field.
fn rsqrt(t: &Tensor, s: u32) -> Result<crate::tensor::Data, InterpError> {
    let unsupported = |reason: String| {
        InterpError::Op(CheckErrorKind::Encoding {
            operand: "x".into(),
            expected: reason,
            found: t.encoding(),
        })
    };
    match (t.encoding(), t.as_f32()) {
        (_, Some(f)) => Ok(crate::tensor::Data::F32(
            f.iter().map(|&v| v.max(0.0).sqrt().recip()).collect(),
        )),
        (Encoding::Ring { bits }, None) => {
            let p = RsqrtParams::new(bits, s).map_err(|e| unsupported(e.to_string()))?;
            let v = words(t).iter().map(|&e| math::rsqrt(&p, e));
            Ok(crate::tensor::Data::U64(v.collect()))
        }
        _ => Err(unsupported("f32 or a ring i<ℓ> (rsqrt)".into())),
    }
}

/// `f` applied to every line of `x` (shape `shape`) along `axis`, the results written
/// back in place of the line.
fn map_lines<T: Copy + Default>(
    x: &[T],
    shape: &[usize],
    axis: usize,
    mut f: impl FnMut(&[T]) -> Vec<T>,
) -> Vec<T> {
    let len = shape.get(axis).copied().unwrap_or(1);
    let inner: usize = shape.iter().skip(axis + 1).product();
    let outer = x.len() / (len * inner).max(1);
    let mut out = vec![T::default(); x.len()];
    let mut line = Vec::with_capacity(len);
    for o in 0..outer {
        for i in 0..inner {
            let at = |j: usize| (o * len + j) * inner + i;
            line.clear();
            line.extend((0..len).map(|j| x[at(j)]));
            for (j, v) in f(&line).into_iter().enumerate() {
                out[at(j)] = v;
            }
        }
    }
    out
}

/// The float softmax of `x` (shape `shape`) along `axis`: `e^{x − max}/Σ e^{x − max}`
/// on every line (the float program's [`Op::Softmax`]; the frontend folds constants
/// with it). Cost: `O(numel)`.
pub fn softmax_f32(x: &[f32], shape: &[usize], axis: usize) -> Vec<f32> {
    map_lines(x, shape, axis, |l| {
        let m = l.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let e: Vec<f32> = l.iter().map(|&v| (v - m).exp()).collect();
        let total: f32 = e.iter().sum();
        e.iter().map(|&v| v / total).collect()
    })
}

/// `softmax` along `axis` at scale `s`: over a ring [`math::softmax`] on every line (the
/// type checker guarantees its parameters), in `f32` `e^{x − max}/Σ e^{x − max}`; not
/// defined over a field.
fn softmax(t: &Tensor, axis: usize, s: u32) -> Result<crate::tensor::Data, InterpError> {
    let unsupported = |reason: String| {
        InterpError::Op(CheckErrorKind::Encoding {
            operand: "x".into(),
            expected: reason,
            found: t.encoding(),
        })
    };
    let shape = t.shape();
    match (t.encoding(), t.as_f32()) {
        (_, Some(f)) => Ok(crate::tensor::Data::F32(softmax_f32(f, shape, axis))),
        (Encoding::Ring { bits }, None) => {
            let n = shape.get(axis).copied().unwrap_or(1);
            let p = SoftmaxParams::new(bits, s, n).map_err(|e| unsupported(e.to_string()))?;
            Ok(crate::tensor::Data::U64(map_lines(
                words(t),
                shape,
                axis,
                |l| math::softmax(&p, l).unwrap_or_default(),
            )))
        }
        _ => Err(unsupported("f32 or a ring i<ℓ> (softmax)".into())),
    }
}

/// A scalar attribute as a one-element tensor of encoding `enc`.
fn scalar_tensor(name: &str, value: Scalar, enc: Encoding) -> Result<Tensor, InterpError> {
    match value {
        Scalar::F32(f) => Tensor::real(vec![], vec![f]),
        Scalar::Int(i) => Tensor::signed(enc, vec![], &[i]),
    }
    .map_err(|source| InterpError::Tensor {
        name: name.to_string(),
        source,
    })
}

/// `batchnorm` (f32 only, checked): `y = (x − mean) / sqrt(var + ε) · scale + bias`
/// over axis 1, `params` = scale, bias, mean, var.
fn batchnorm(x: &Tensor, params: [&Tensor; 4], epsilon: f32) -> crate::tensor::Data {
    fn f32s(t: &Tensor) -> &[f32] {
        t.as_f32().expect("batchnorm is float-only")
    }
    let [g, b, m, s2] = params.map(f32s);
    let sh = x.shape();
    let c = sh[1];
    let inner: usize = sh[2..].iter().product();
    let y = f32s(x).iter().enumerate().map(|(i, &e)| {
        let ch = (i / inner.max(1)) % c.max(1);
        (e - m[ch]) / (s2[ch] + epsilon).sqrt() * g[ch] + b[ch]
    });
    crate::tensor::Data::F32(y.collect())
}
