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
#[macro_use]
mod table;

pub use conv::{Conv2d, ConvGeom};
pub use pool::{Pool2d, PoolWindow};
pub(crate) use table::{Attr, Fields};

use crate::id::{ConstId, ValueId};
use crate::math::Smooth;
use crate::spline::SplineFn;
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

op_table! {
    /// One IR operation. `V` is the operand type: [`ValueId`] in programs.
    pub enum Op<V = ValueId> {
        /// A client-owned input with declared type `ty` (owner must be `Client`); `name` is its
        /// external name (the ONNX graph input name).
        Input = 0 "input" {
            /// External name.
            name: String => label,
            /// Declared type.
            ty: Type => ty,
        },
        /// A constant with declared type `ty` (owner `Server` for weights, `Public` for public
        /// constants); its data is entry `id` of the program's constant table (server data is
        /// withheld in the client's view).
        Const = 1 "const" {
            /// Index into the constant table.
            id: ConstId => const_id,
            /// Declared type.
            ty: Type => ty,
        },
        /// 2-D convolution, NCHW. `x: [N, C, H, W]`, `w: [C_out, C/groups, kH, kW]`,
        /// `bias: [C_out]` at scale `s_x + s_w`. Output `[N, C_out, H_out, W_out]` with
        /// `H_out = ⌊(H + p_top + p_bottom − d_h·(kH − 1) − 1) / stride_h⌋ + 1` (same for W),
        /// scale `s_x + s_w`:
        /// `y[n,o,i,j] = bias[o] + Σ_{c,a,b} x[n, g·C/groups + c, i·t_h − p_top + a·d_h, j·t_w − p_left + b·d_w] · w[o,c,a,b]`
        /// with `g = o / (C_out/groups)` and out-of-range (padding) positions contributing 0.
        /// Sums and products wrap in the ring (are mod n in the field).
        Conv2d = 2 "conv2d" {
            /// Input `[N, C, H, W]`.
            x: V => operand,
            /// Weights `[C_out, C/groups, kH, kW]`.
            w: V => operand,
            /// Optional bias `[C_out]`, scale `s_x + s_w`.
            bias: Option<V> => optional,
            /// Strides, pads, dilations, groups.
            conv: Conv2d => conv,
        },
        /// Matrix product `[M, K] × [K, N] → [M, N]` plus an optional bias `[N]` added to every
        /// row (scale `s_a + s_b`). Output scale `s_a + s_b`; wraps in the ring.
        MatMul = 3 "matmul" {
            /// Left operand `[M, K]`.
            a: V => operand,
            /// Right operand `[K, N]`.
            b: V => operand,
            /// Optional bias `[N]`.
            bias: Option<V> => optional,
        },
        /// Elementwise `a + b` with numpy broadcasting; equal encodings and scales.
        Add = 4 "add" {
            /// Left operand.
            a: V => operand,
            /// Right operand.
            b: V => operand,
        },
        /// Elementwise `a − b` with numpy broadcasting; equal encodings and scales.
        Sub = 5 "sub" {
            /// Left operand.
            a: V => operand,
            /// Right operand.
            b: V => operand,
        },
        /// Elementwise product with numpy broadcasting (e.g. by a constant tensor); equal
        /// encodings, output scale `s_a + s_b`.
        Mul = 6 "mul" {
            /// Left operand.
            a: V => operand,
            /// Right operand.
            b: V => operand,
        },
        /// Product by a public integer: `x · k` (k reduced into the ring/field); scale
        /// unchanged.
        MulPublic = 7 "mul_public" {
            /// Operand.
            x: V => operand,
            /// The public factor.
            k: i64 => int,
        },
        /// `x · 2^k` (exact; wraps), scale `s + k` (which must fit the encoding). Fixed-point
        /// only.
        ScaleUp = 8 "scale_up" {
            /// Operand.
            x: V => operand,
            /// Exponent, ≥ 1.
            k: u32 => attr,
        },
        /// Arithmetic shift right by `s` of the signed value, `⌊signed(x) / 2^s⌋` (the
        /// paper's `≫`, Corollary 4.2); scale `s_x − s`, so `1 ≤ s ≤ s_x`. `nonneg` asserts the
        /// input is ≥ 0 (the runtime may then use the cheaper protocol); the interpreter
        /// returns an error if the assertion is false.
        Trunc = 9 "trunc" {
            /// Operand.
            x: V => operand,
            /// Shift, `1 ≤ s ≤ s_x`.
            s: u32 => attr,
            /// The input is known to be non-negative.
            nonneg: bool => flag,
        },
        /// The paper's `rdiv(x, d)` (equation 2): `⌊signed(x) / d⌋` for a public `0 < d <
        /// modulus`; scale unchanged. For `Real`, `x / d`.
        DivPublic = 10 "div_public" {
            /// Operand.
            x: V => operand,
            /// The public divisor.
            d: u64 => attr,
        },
        /// `max(x, 0)` of the signed value.
        Relu = 11 "relu" {
            /// Operand.
            x: V => operand,
        },
        /// `max(x, 0) ≫ s`: a ReLU and the truncation after it, fused — exactly `trunc (relu
        /// x) s nonneg` (equal to `relu (trunc x s)`, since `⌊x / 2^s⌋ < 0` iff `x < 0`);
        /// scale `s_x − s`, `1 ≤ s ≤ s_x`. The compiler fuses the pair over rings
        /// (`sci-passes`' `fuse_relu_trunc`) so that the truncation's millionaires' runs
        /// beside the ReLU's (`proto::relu_trunc`).
        ReluTrunc = 30 "relu_trunc" {
            /// Operand.
            x: V => operand,
            /// Shift, `1 ≤ s ≤ s_x`.
            s: u32 => attr,
        },
        /// The logistic sigmoid `σ(x) = 1/(1 + e^{−x})`, scale unchanged. Over a ring
        /// `Z_{2^ℓ}` at scale `s` (`s ≥ 1`, `ℓ ≥ 2s + 7`): exactly
        /// [`crate::math::smooth`] with [`crate::math::SmoothParams::of_op`]
        /// (within 2.2 ULPs of `σ` at ℓ = 32, `s = 12`: the bound is
        /// [`crate::math::SmoothParams::max_error_ulps`]); `f32` in a float program;
        /// not defined over a field (refused by [`crate::secure`]).
        Sigmoid = 25 "sigmoid" {
            /// Operand.
            x: V => operand,
        },
        /// The hyperbolic tangent `tanh(x) = 2σ(2x) − 1`, scale unchanged; fixed point as
        /// [`Op::Sigmoid`] (within 3.8 ULPs at ℓ = 32, `s = 12`).
        Tanh = 26 "tanh" {
            /// Operand.
            x: V => operand,
        },
        /// The reciprocal square root `1/√x`, scale unchanged. Over a ring `Z_{2^ℓ}` at scale
        /// `s` (`10 ≤ ℓ`, `ℓ ≥ s + ⌈s/2⌉ + 3`): exactly [`crate::math::rsqrt`] with
        /// [`crate::math::RsqrtParams::new`]; a non-positive `x` is read as the
        /// smallest positive value `2^{−s}` (the result `≈ 2^{s/2}`). Within 2.5 ULPs for `x ≥
        /// 1` at ℓ = 32, `s = 12` ([`crate::math::RsqrtParams::max_error_ulps_at`]; the
        /// error is relative, `≈ 2^{−12}`, for smaller `x`). `f32` in a float program (`1/√x`
        /// of `max(x, 0)`, infinite at 0); not defined over a field.
        Rsqrt = 27 "rsqrt" {
            /// Operand.
            x: V => operand,
        },
        /// Softmax along `axis`, scale unchanged: `y_i = e^{x_i}/Σ_j e^{x_j}` over each line
        /// of the axis. Over a ring `Z_{2^ℓ}` at scale `s` (`ℓ ≥ 2s + 4`, the line length `n`
        /// with `⌊(ℓ−2)/2⌋ + ⌊log₂ n⌋ + 2 ≤ ℓ`): exactly [`crate::math::softmax`] with
        /// [`crate::math::SoftmaxParams::new`] (the maximum subtracted, exp, the sum's
        /// range-reduced reciprocal, one rounded product); within
        /// [`crate::math::SoftmaxParams::max_error_ulps`] ULPs (`≈ 1.6 + 0.44·n` at ℓ = 32,
        /// `s = 12`) where a line's spread is below `2^{ℓ−1}`. `f32` in a float program; not
        /// defined over a field.
        Softmax = 28 "softmax" {
            /// Operand.
            x: V => operand,
            /// The axis the lines run along.
            axis: usize => attr,
        },
        /// Erf, GELU or tanh-GELU (`func`: [`crate::spline::SplineFn`], code 0, 1, 2) as a
        /// piecewise cubic of `|x|` on public knots, scale unchanged. Over a ring `Z_{2^ℓ}`
        /// at scale `s` (`ℓ ≥ 2s + 6`, `s ≥ 1`, `s ≥ 2` for the GELUs): exactly
        /// [`crate::spline::spline`] with [`crate::spline::SplineParams::new`], within
        /// [`crate::spline::SplineParams::MEASURED_ULPS`] of the real function on every
        /// input (at most 2.08 ULPs at ℓ = 32, `s = 12` and ℓ = 37, `s = 14`). `f32` in a
        /// float program (the real function); not defined over a field.
        Spline = 29 "spline" {
            /// Operand.
            x: V => operand,
            /// The function.
            func: SplineFn => attr,
        },
        /// Max pooling over 2-D windows (NCHW). Padded positions are ignored (never compared);
        /// among equal maxima the first in row-major window order wins (irrelevant to the
        /// value, stated for the protocol's comparisons).
        MaxPool = 12 "maxpool" {
            /// Input `[N, C, H, W]`.
            x: V => operand,
            /// Window geometry.
            pool: Pool2d => pool,
        },
        /// Average pooling: window sum, then `rdiv` by the window count. The count is the
        /// number of window positions inside the padded input `[−p_top, H + p_bottom)` ×
        /// `[−p_left, W + p_right)` if `count_include_pad`, otherwise inside the input
        /// `[0, H) × [0, W)`; it may vary per output position. Padded positions add 0.
        AvgPool = 13 "avgpool" {
            /// Input `[N, C, H, W]`.
            x: V => operand,
            /// Window geometry.
            pool: Pool2d => pool,
            /// Whether padding counts in the divisor.
            count_include_pad: bool => flag,
        },
        /// Sum over H×W then `rdiv` by `H·W`: `[N, C, H, W] → [N, C, 1, 1]`.
        GlobalAvgPool = 14 "global_avgpool" {
            /// Input `[N, C, H, W]`.
            x: V => operand,
        },
        /// Index of the first maximum (signed comparison) along `axis`. The result is an
        /// integer tensor: same encoding, scale 0, the axis removed (or kept as size 1 with
        /// `keepdims`). The largest index must fit the signed range.
        ArgMax = 15 "argmax" {
            /// Operand.
            x: V => operand,
            /// Axis to reduce.
            axis: usize => attr,
            /// Keep the reduced axis as size 1.
            keepdims: bool => flag,
        },
        /// Same data (row-major), new shape of equal element count.
        Reshape = 16 "reshape" {
            /// Operand.
            x: V => operand,
            /// The new shape.
            shape: Vec<usize> => list,
        },
        /// Reshape to 2-D `[d_0·…·d_{axis−1}, d_axis·…·d_{r−1}]`, `0 ≤ axis ≤ rank`.
        Flatten = 17 "flatten" {
            /// Operand.
            x: V => operand,
            /// Split point.
            axis: usize => attr,
        },
        /// Permutes dimensions: output dim `i` is input dim `perm[i]`.
        Transpose = 18 "transpose" {
            /// Operand.
            x: V => operand,
            /// A permutation of `0..rank`.
            perm: Vec<usize> => list,
        },
        /// Selection along `axis` by constant indices: output index `j` on that axis reads
        /// input index `indices[j]` (each below the input's dimension; repeats and any order
        /// allowed; at least one), every other dimension is unchanged. ONNX `Gather` with
        /// constant indices, `Slice`, `Split` and the `reflect`/`edge` modes of `Pad` are
        /// chains of it. Data movement: local on secret shares, exact in every encoding.
        Gather = 24 "gather" {
            /// Operand.
            x: V => operand,
            /// The axis selected along.
            axis: usize => attr,
            /// The input index of each output index along `axis`.
            indices: Vec<usize> => list,
        },
        /// Concatenation along `axis` of one or more tensors of equal encoding, scale, rank
        /// and other dimensions.
        Concat = 19 "concat" {
            /// Operands, in order.
            xs: Vec<V> => operands,
            /// Concatenation axis.
            axis: usize => attr,
        },
        /// Constant padding: `pads` has `2·rank` entries (all begins, then all ends, as in
        /// ONNX); new positions hold `value` (in the operand's encoding and scale).
        Pad = 20 "pad" {
            /// Operand.
            x: V => operand,
            /// Begin pads for each axis, then end pads.
            pads: Vec<usize> => list,
            /// Fill value.
            value: Scalar => fill(x),
        },
        /// Reveals `x` to the client under the external name `name`. The result is owned by
        /// the client (or public if `x` is).
        Output = 21 "output" {
            /// The revealed value.
            x: V => operand,
            /// External name (the ONNX graph output name).
            name: String => label,
            /// `x` is the input of a trailing `Softmax`/`LogSoftmax` the frontend dropped
            /// (monotone, so the argmax is unchanged): the output holds logits (pre-softmax),
            /// not the ONNX tensor's probabilities. Printed `logits`; reported by the runtime.
            logits: bool => flag,
        },
        /// Float stage only (removed by the BatchNorm-folding pass): inference-mode batch
        /// normalization over axis 1, `y = scale·(x − mean)/sqrt(var + epsilon) + bias`, the
        /// four parameters of shape `[C]`.
        BatchNorm = 22 "batchnorm" {
            /// Input `[N, C, ...]`.
            x: V => operand,
            /// γ, `[C]`.
            scale: V => operand,
            /// β, `[C]`.
            bias: V => operand,
            /// Running mean, `[C]`.
            mean: V => operand,
            /// Running variance, `[C]`.
            var: V => operand,
            /// ε.
            epsilon: f32 => float,
        },
        /// Float stage only (removed by identity elimination): `y = x`.
        Identity = 23 "identity" {
            /// Operand.
            x: V => operand,
        },
    }
}

impl<V> Op<V> {
    /// For `sigmoid` and `tanh`: the function and the operand.
    pub fn smooth(&self) -> Option<(Smooth, &V)> {
        match self {
            Op::Sigmoid { x } => Some((Smooth::Sigmoid, x)),
            Op::Tanh { x } => Some((Smooth::Tanh, x)),
            _ => None,
        }
    }

    /// The operands, in order.
    pub fn operands(&self) -> Vec<&V> {
        self.labeled_operands()
            .into_iter()
            .map(|(_, v)| v)
            .collect()
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
