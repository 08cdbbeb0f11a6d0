//! The closed set of IR operations, with their exact semantics.
//!
//! Every op defines exactly one value. Semantics are given for the fixed-point encodings
//! (ring `Z_{2^ℓ}`, wrapping; field `Z_n`); for `Real` (f32) programs each op is the
//! obvious f32 computation (accumulating in f32, in the order of the reference
//! interpreter). `signed(v)` is the signed view of an element ([`crate::Encoding::signed`]),
//! `trunc`/`rdiv` are defined in [`crate::fixed`].
//!
//! Operands are values (`V`, normally [`ValueId`]); the text parser instantiates `Op`
//! with value names before resolving them. Attributes are typed fields.
//!
//! Owner of a result: see [`crate::Owner::combine`] (Shared if any operand is shared or
//! client and server data mix; Public only if all operands are public). Unary ops keep the
//! owner of their operand.

mod conv;
mod pool;

pub use conv::{Conv2d, ConvGeom};
pub use pool::{Pool2d, PoolWindow};

use crate::id::{ConstId, ValueId};
use crate::math::Smooth;
use crate::types::Type;

/// A scalar attribute in the operand's encoding: an `f32` for `Real` operands, a signed
/// integer (already at the operand's scale) for rings and fields.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// For `Real` operands.
    F32(f32),
    /// For ring/field operands: a signed integer in the encoding's signed range.
    Int(i64),
}

/// One IR operation. `V` is the operand type: [`ValueId`] in programs.
#[derive(Clone, Debug, PartialEq)]
pub enum Op<V = ValueId> {
    /// A client-owned input with declared type `ty` (owner must be `Client`); `name` is its
    /// external name (the ONNX graph input name).
    Input {
        /// External name.
        name: String,
        /// Declared type.
        ty: Type,
    },
    /// A constant with declared type `ty` (owner `Server` for weights, `Public` for public
    /// constants); its data is entry `id` of the program's constant table (server data is
    /// withheld in the client's view).
    Const {
        /// Index into the constant table.
        id: ConstId,
        /// Declared type.
        ty: Type,
    },
    /// 2-D convolution, NCHW. `x: [N, C, H, W]`, `w: [C_out, C/groups, kH, kW]`,
    /// `bias: [C_out]` at scale `s_x + s_w`. Output `[N, C_out, H_out, W_out]` with
    /// `H_out = ⌊(H + p_top + p_bottom − d_h·(kH − 1) − 1) / stride_h⌋ + 1` (same for W),
    /// scale `s_x + s_w`:
    /// `y[n,o,i,j] = bias[o] + Σ_{c,a,b} x[n, g·C/groups + c, i·t_h − p_top + a·d_h, j·t_w − p_left + b·d_w] · w[o,c,a,b]`
    /// with `g = o / (C_out/groups)` and out-of-range (padding) positions contributing 0.
    /// Sums and products wrap in the ring (are mod n in the field).
    Conv2d {
        /// Input `[N, C, H, W]`.
        x: V,
        /// Weights `[C_out, C/groups, kH, kW]`.
        w: V,
        /// Optional bias `[C_out]`, scale `s_x + s_w`.
        bias: Option<V>,
        /// Strides, pads, dilations, groups.
        conv: Conv2d,
    },
    /// Matrix product `[M, K] × [K, N] → [M, N]` plus an optional bias `[N]` added to every
    /// row (scale `s_a + s_b`). Output scale `s_a + s_b`; wraps in the ring.
    MatMul {
        /// Left operand `[M, K]`.
        a: V,
        /// Right operand `[K, N]`.
        b: V,
        /// Optional bias `[N]`.
        bias: Option<V>,
    },
    /// Elementwise `a + b` with numpy broadcasting; equal encodings and scales.
    Add {
        /// Left operand.
        a: V,
        /// Right operand.
        b: V,
    },
    /// Elementwise `a − b` with numpy broadcasting; equal encodings and scales.
    Sub {
        /// Left operand.
        a: V,
        /// Right operand.
        b: V,
    },
    /// Elementwise product with numpy broadcasting (e.g. by a constant tensor); equal
    /// encodings, output scale `s_a + s_b`.
    Mul {
        /// Left operand.
        a: V,
        /// Right operand.
        b: V,
    },
    /// Product by a public integer: `x · k` (k reduced into the ring/field); scale
    /// unchanged.
    MulPublic {
        /// Operand.
        x: V,
        /// The public factor.
        k: i64,
    },
    /// `x · 2^k` (exact; wraps), scale `s + k` (which must fit the encoding). Fixed-point
    /// only.
    ScaleUp {
        /// Operand.
        x: V,
        /// Exponent, ≥ 1.
        k: u32,
    },
    /// Arithmetic shift right by `s` of the signed value, `⌊signed(x) / 2^s⌋` (the
    /// paper's `≫`, Corollary 4.2); scale `s_x − s`, so `1 ≤ s ≤ s_x`. `nonneg` asserts the
    /// input is ≥ 0 (the runtime may then use the cheaper protocol); the interpreter
    /// returns an error if the assertion is false.
    Trunc {
        /// Operand.
        x: V,
        /// Shift, `1 ≤ s ≤ s_x`.
        s: u32,
        /// The input is known to be non-negative.
        nonneg: bool,
    },
    /// The paper's `rdiv(x, d)` (equation 2): `⌊signed(x) / d⌋` for a public `0 < d <
    /// modulus`; scale unchanged. For `Real`, `x / d`.
    DivPublic {
        /// Operand.
        x: V,
        /// The public divisor.
        d: u64,
    },
    /// `max(x, 0)` of the signed value.
    Relu {
        /// Operand.
        x: V,
    },
    /// The logistic sigmoid `σ(x) = 1/(1 + e^{−x})`, scale unchanged. Over a ring
    /// `Z_{2^ℓ}` at scale `s` (`s ≥ 1`, `ℓ ≥ 2s + 7`): exactly
    /// [`crate::math::smooth`] with [`crate::math::SmoothParams::of_op`]
    /// (within 2.2 ULPs of `σ` at ℓ = 32, `s = 12`: the bound is
    /// [`crate::math::SmoothParams::max_error_ulps`]); `f32` in a float program;
    /// not defined over a field (refused by [`crate::secure`]).
    Sigmoid {
        /// Operand.
        x: V,
    },
    /// The hyperbolic tangent `tanh(x) = 2σ(2x) − 1`, scale unchanged; fixed point as
    /// [`Op::Sigmoid`] (within 3.8 ULPs at ℓ = 32, `s = 12`).
    Tanh {
        /// Operand.
        x: V,
    },
    /// The reciprocal square root `1/√x`, scale unchanged. Over a ring `Z_{2^ℓ}` at scale
    /// `s` (`10 ≤ ℓ`, `ℓ ≥ s + ⌈s/2⌉ + 3`): exactly [`crate::math::rsqrt`] with
    /// [`crate::math::RsqrtParams::new`]; a non-positive `x` is read as the
    /// smallest positive value `2^{−s}` (the result `≈ 2^{s/2}`). Within 2.5 ULPs for `x ≥
    /// 1` at ℓ = 32, `s = 12` ([`crate::math::RsqrtParams::max_error_ulps_at`]; the
    /// error is relative, `≈ 2^{−12}`, for smaller `x`). `f32` in a float program (`1/√x`
    /// of `max(x, 0)`, infinite at 0); not defined over a field.
    Rsqrt {
        /// Operand.
        x: V,
    },
    /// Softmax along `axis`, scale unchanged: `y_i = e^{x_i}/Σ_j e^{x_j}` over each line
    /// of the axis. Over a ring `Z_{2^ℓ}` at scale `s` (`ℓ ≥ 2s + 4`, the line length `n`
    /// with `⌊(ℓ−2)/2⌋ + ⌊log₂ n⌋ + 2 ≤ ℓ`): exactly [`crate::math::softmax`] with
    /// [`crate::math::SoftmaxParams::new`] (the maximum subtracted, exp, the sum's
    /// range-reduced reciprocal, one rounded product); within
    /// [`crate::math::SoftmaxParams::max_error_ulps`] ULPs (`≈ 1.6 + 0.44·n` at ℓ = 32,
    /// `s = 12`) where a line's spread is below `2^{ℓ−1}`. `f32` in a float program; not
    /// defined over a field.
    Softmax {
        /// Operand.
        x: V,
        /// The axis the lines run along.
        axis: usize,
    },
    /// Max pooling over 2-D windows (NCHW). Padded positions are ignored (never compared);
    /// among equal maxima the first in row-major window order wins (irrelevant to the
    /// value, stated for the protocol's comparisons).
    MaxPool {
        /// Input `[N, C, H, W]`.
        x: V,
        /// Window geometry.
        pool: Pool2d,
    },
    /// Average pooling: window sum, then `rdiv` by the window count. The count is the
    /// number of window positions inside the padded input `[−p_top, H + p_bottom)` ×
    /// `[−p_left, W + p_right)` if `count_include_pad`, otherwise inside the input
    /// `[0, H) × [0, W)`; it may vary per output position. Padded positions add 0.
    AvgPool {
        /// Input `[N, C, H, W]`.
        x: V,
        /// Window geometry.
        pool: Pool2d,
        /// Whether padding counts in the divisor.
        count_include_pad: bool,
    },
    /// Sum over H×W then `rdiv` by `H·W`: `[N, C, H, W] → [N, C, 1, 1]`.
    GlobalAvgPool {
        /// Input `[N, C, H, W]`.
        x: V,
    },
    /// Index of the first maximum (signed comparison) along `axis`. The result is an
    /// integer tensor: same encoding, scale 0, the axis removed (or kept as size 1 with
    /// `keepdims`). The largest index must fit the signed range.
    ArgMax {
        /// Operand.
        x: V,
        /// Axis to reduce.
        axis: usize,
        /// Keep the reduced axis as size 1.
        keepdims: bool,
    },
    /// Same data (row-major), new shape of equal element count.
    Reshape {
        /// Operand.
        x: V,
        /// The new shape.
        shape: Vec<usize>,
    },
    /// Reshape to 2-D `[d_0·…·d_{axis−1}, d_axis·…·d_{r−1}]`, `0 ≤ axis ≤ rank`.
    Flatten {
        /// Operand.
        x: V,
        /// Split point.
        axis: usize,
    },
    /// Permutes dimensions: output dim `i` is input dim `perm[i]`.
    Transpose {
        /// Operand.
        x: V,
        /// A permutation of `0..rank`.
        perm: Vec<usize>,
    },
    /// Selection along `axis` by constant indices: output index `j` on that axis reads
    /// input index `indices[j]` (each below the input's dimension; repeats and any order
    /// allowed; at least one), every other dimension is unchanged. ONNX `Gather` with
    /// constant indices, `Slice`, `Split` and the `reflect`/`edge` modes of `Pad` are
    /// chains of it. Data movement: local on secret shares, exact in every encoding.
    Gather {
        /// Operand.
        x: V,
        /// The axis selected along.
        axis: usize,
        /// The input index of each output index along `axis`.
        indices: Vec<usize>,
    },
    /// Concatenation along `axis` of one or more tensors of equal encoding, scale, rank
    /// and other dimensions.
    Concat {
        /// Operands, in order.
        xs: Vec<V>,
        /// Concatenation axis.
        axis: usize,
    },
    /// Constant padding: `pads` has `2·rank` entries (all begins, then all ends, as in
    /// ONNX); new positions hold `value` (in the operand's encoding and scale).
    Pad {
        /// Operand.
        x: V,
        /// Begin pads for each axis, then end pads.
        pads: Vec<usize>,
        /// Fill value.
        value: Scalar,
    },
    /// Reveals `x` to the client under the external name `name`. The result is owned by
    /// the client (or public if `x` is).
    Output {
        /// The revealed value.
        x: V,
        /// External name (the ONNX graph output name).
        name: String,
        /// `x` is the input of a trailing `Softmax`/`LogSoftmax` the frontend dropped
        /// (monotone, so the argmax is unchanged): the output holds logits (pre-softmax),
        /// not the ONNX tensor's probabilities. Printed `logits`; reported by the runtime.
        logits: bool,
    },
    /// Float stage only (removed by the BatchNorm-folding pass): inference-mode batch
    /// normalization over axis 1, `y = scale·(x − mean)/sqrt(var + epsilon) + bias`, the
    /// four parameters of shape `[C]`.
    BatchNorm {
        /// Input `[N, C, ...]`.
        x: V,
        /// γ, `[C]`.
        scale: V,
        /// β, `[C]`.
        bias: V,
        /// Running mean, `[C]`.
        mean: V,
        /// Running variance, `[C]`.
        var: V,
        /// ε.
        epsilon: f32,
    },
    /// Float stage only (removed by identity elimination): `y = x`.
    Identity {
        /// Operand.
        x: V,
    },
}

impl<V> Op<V> {
    /// The op's mnemonic, as in the text format (`conv2d`, `matmul`, ...).
    pub fn mnemonic(&self) -> &'static str {
        match self {
            Op::Input { .. } => "input",
            Op::Const { .. } => "const",
            Op::Conv2d { .. } => "conv2d",
            Op::MatMul { .. } => "matmul",
            Op::Add { .. } => "add",
            Op::Sub { .. } => "sub",
            Op::Mul { .. } => "mul",
            Op::MulPublic { .. } => "mul_public",
            Op::ScaleUp { .. } => "scale_up",
            Op::Trunc { .. } => "trunc",
            Op::DivPublic { .. } => "div_public",
            Op::Relu { .. } => "relu",
            Op::Sigmoid { .. } => "sigmoid",
            Op::Tanh { .. } => "tanh",
            Op::Rsqrt { .. } => "rsqrt",
            Op::Softmax { .. } => "softmax",
            Op::MaxPool { .. } => "maxpool",
            Op::AvgPool { .. } => "avgpool",
            Op::GlobalAvgPool { .. } => "global_avgpool",
            Op::ArgMax { .. } => "argmax",
            Op::Reshape { .. } => "reshape",
            Op::Flatten { .. } => "flatten",
            Op::Transpose { .. } => "transpose",
            Op::Gather { .. } => "gather",
            Op::Concat { .. } => "concat",
            Op::Pad { .. } => "pad",
            Op::Output { .. } => "output",
            Op::BatchNorm { .. } => "batchnorm",
            Op::Identity { .. } => "identity",
        }
    }

    /// For `sigmoid` and `tanh`: the function and the operand.
    pub fn smooth(&self) -> Option<(Smooth, &V)> {
        match self {
            Op::Sigmoid { x } => Some((Smooth::Sigmoid, x)),
            Op::Tanh { x } => Some((Smooth::Tanh, x)),
            _ => None,
        }
    }

    /// The operands with a label for each (`x`, `w`, `bias`, `xs[2]`, ...), in order.
    pub fn labeled_operands(&self) -> Vec<(String, &V)> {
        let l = |s: &str, v| (s.to_string(), v);
        match self {
            Op::Input { .. } | Op::Const { .. } => vec![],
            Op::Conv2d { x, w, bias, .. } => {
                let mut v = vec![l("x", x), l("w", w)];
                v.extend(bias.iter().map(|b| l("bias", b)));
                v
            }
            Op::MatMul { a, b, bias } => {
                let mut v = vec![l("a", a), l("b", b)];
                v.extend(bias.iter().map(|b| l("bias", b)));
                v
            }
            Op::Add { a, b } | Op::Sub { a, b } | Op::Mul { a, b } => vec![l("a", a), l("b", b)],
            Op::MulPublic { x, .. }
            | Op::ScaleUp { x, .. }
            | Op::Trunc { x, .. }
            | Op::DivPublic { x, .. }
            | Op::Relu { x }
            | Op::Sigmoid { x }
            | Op::Tanh { x }
            | Op::Rsqrt { x }
            | Op::Softmax { x, .. }
            | Op::MaxPool { x, .. }
            | Op::AvgPool { x, .. }
            | Op::GlobalAvgPool { x }
            | Op::ArgMax { x, .. }
            | Op::Reshape { x, .. }
            | Op::Flatten { x, .. }
            | Op::Transpose { x, .. }
            | Op::Gather { x, .. }
            | Op::Pad { x, .. }
            | Op::Output { x, .. }
            | Op::Identity { x } => vec![l("x", x)],
            Op::Concat { xs, .. } => xs
                .iter()
                .enumerate()
                .map(|(i, x)| (format!("xs[{i}]"), x))
                .collect(),
            Op::BatchNorm {
                x,
                scale,
                bias,
                mean,
                var,
                ..
            } => vec![
                l("x", x),
                l("scale", scale),
                l("bias", bias),
                l("mean", mean),
                l("var", var),
            ],
        }
    }

    /// The operands, in order.
    pub fn operands(&self) -> Vec<&V> {
        self.labeled_operands()
            .into_iter()
            .map(|(_, v)| v)
            .collect()
    }

    /// The same op with every operand mapped through `f` (stops at the first error).
    /// Passes use it to remap operands into a new program.
    pub fn try_map_operands<W, E>(
        &self,
        mut f: impl FnMut(&V) -> Result<W, E>,
    ) -> Result<Op<W>, E> {
        Ok(match self {
            Op::Input { name, ty } => Op::Input {
                name: name.clone(),
                ty: ty.clone(),
            },
            Op::Const { id, ty } => Op::Const {
                id: *id,
                ty: ty.clone(),
            },
            Op::Conv2d { x, w, bias, conv } => Op::Conv2d {
                x: f(x)?,
                w: f(w)?,
                bias: bias.as_ref().map(&mut f).transpose()?,
                conv: *conv,
            },
            Op::MatMul { a, b, bias } => Op::MatMul {
                a: f(a)?,
                b: f(b)?,
                bias: bias.as_ref().map(&mut f).transpose()?,
            },
            Op::Add { a, b } => Op::Add { a: f(a)?, b: f(b)? },
            Op::Sub { a, b } => Op::Sub { a: f(a)?, b: f(b)? },
            Op::Mul { a, b } => Op::Mul { a: f(a)?, b: f(b)? },
            Op::MulPublic { x, k } => Op::MulPublic { x: f(x)?, k: *k },
            Op::ScaleUp { x, k } => Op::ScaleUp { x: f(x)?, k: *k },
            Op::Trunc { x, s, nonneg } => Op::Trunc {
                x: f(x)?,
                s: *s,
                nonneg: *nonneg,
            },
            Op::DivPublic { x, d } => Op::DivPublic { x: f(x)?, d: *d },
            Op::Relu { x } => Op::Relu { x: f(x)? },
            Op::Sigmoid { x } => Op::Sigmoid { x: f(x)? },
            Op::Tanh { x } => Op::Tanh { x: f(x)? },
            Op::Rsqrt { x } => Op::Rsqrt { x: f(x)? },
            Op::Softmax { x, axis } => Op::Softmax {
                x: f(x)?,
                axis: *axis,
            },
            Op::MaxPool { x, pool } => Op::MaxPool {
                x: f(x)?,
                pool: *pool,
            },
            Op::AvgPool {
                x,
                pool,
                count_include_pad,
            } => Op::AvgPool {
                x: f(x)?,
                pool: *pool,
                count_include_pad: *count_include_pad,
            },
            Op::GlobalAvgPool { x } => Op::GlobalAvgPool { x: f(x)? },
            Op::ArgMax { x, axis, keepdims } => Op::ArgMax {
                x: f(x)?,
                axis: *axis,
                keepdims: *keepdims,
            },
            Op::Reshape { x, shape } => Op::Reshape {
                x: f(x)?,
                shape: shape.clone(),
            },
            Op::Flatten { x, axis } => Op::Flatten {
                x: f(x)?,
                axis: *axis,
            },
            Op::Transpose { x, perm } => Op::Transpose {
                x: f(x)?,
                perm: perm.clone(),
            },
            Op::Gather { x, axis, indices } => Op::Gather {
                x: f(x)?,
                axis: *axis,
                indices: indices.clone(),
            },
            Op::Concat { xs, axis } => Op::Concat {
                xs: xs.iter().map(&mut f).collect::<Result<_, _>>()?,
                axis: *axis,
            },
            Op::Pad { x, pads, value } => Op::Pad {
                x: f(x)?,
                pads: pads.clone(),
                value: *value,
            },
            Op::Output { x, name, logits } => Op::Output {
                x: f(x)?,
                name: name.clone(),
                logits: *logits,
            },
            Op::BatchNorm {
                x,
                scale,
                bias,
                mean,
                var,
                epsilon,
            } => Op::BatchNorm {
                x: f(x)?,
                scale: f(scale)?,
                bias: f(bias)?,
                mean: f(mean)?,
                var: f(var)?,
                epsilon: *epsilon,
            },
            Op::Identity { x } => Op::Identity { x: f(x)? },
        })
    }

    /// The same op with every operand mapped through an infallible `f`.
    pub fn map_operands<W>(&self, mut f: impl FnMut(&V) -> W) -> Op<W> {
        match self.try_map_operands(|v| Ok::<W, std::convert::Infallible>(f(v))) {
            Ok(op) => op,
            Err(never) => match never {},
        }
    }

    /// Whether the op exists only in the float (`Real`) stage: `BatchNorm`, `Identity`.
    pub fn is_float_only(&self) -> bool {
        matches!(self, Op::BatchNorm { .. } | Op::Identity { .. })
    }
}
