//! Neural-network layers, one module per family (as tract's `onnx/src/ops/nn/`):
//! [`conv`] (`Conv`), [`conv_transpose`] (`ConvTranspose`), [`matmul`] (`Gemm`,
//! `MatMul`), [`einsum`] (`Einsum` around one matrix product), [`norm`] (`BatchNormalization`), [`layernorm`] (`LayerNormalization`),
//! [`activation`] (`Relu`, `Clip`,
//! `LeakyRelu`, `PRelu`, `HardSigmoid`, `HardSwish`), [`pool`] (`MaxPool`,
//! `AveragePool`, `GlobalAveragePool`, `GlobalMaxPool`, the spatial mean of `ReduceMean`),
//! [`pad`] (`Pad`), [`rnn`] (`LSTM`, `GRU`, unrolled) and [`classifier`] (`ArgMax`, a trailing
//! `Softmax`/`LogSoftmax`, `Softmax` inside a graph); [`window`] holds the window geometry that
//! convolution and pooling share.
//!
//! The IR's convolution and pooling are 2-D (NCHW); 1-D ONNX layers (`[N, C, W]`)
//! are lowered as 2-D layers over `[N, C, 1, W]` between two reshapes. A matrix
//! product has a constant operand (the server's weights, paper §5.1.1) or is a
//! product of two run-time tensors (secret × secret products; a batch of them is one
//! 2-D product per batch index, run as one wave).

mod activation;
mod classifier;
mod conv;
mod conv_transpose;
mod einsum;
mod layernorm;
mod matmul;
mod norm;
mod pad;
mod pool;
mod rnn;
mod window;

use super::Registry;
use crate::tensor::Tensor;
use pool::PoolKind;
pub(crate) use pool::spatial_mean;

pub(crate) fn register(reg: &mut Registry) {
    reg.op("Conv", conv::conv);
    reg.op("ConvTranspose", conv_transpose::conv_transpose);
    reg.op("Gemm", matmul::gemm);
    reg.op("MatMul", matmul::matmul);
    reg.op("Einsum", einsum::einsum);
    reg.op("BatchNormalization", norm::batch_norm);
    reg.op("LayerNormalization", layernorm::layer_norm);
    reg.op("Relu", activation::relu);
    reg.op("Clip", activation::clip);
    reg.op("LeakyRelu", activation::leaky_relu);
    reg.op("PRelu", activation::prelu);
    reg.op("HardSigmoid", activation::hard_sigmoid);
    reg.op("HardSwish", activation::hard_swish);
    reg.op("Sigmoid", |cx| activation::smooth(cx, false));
    reg.op("Tanh", |cx| activation::smooth(cx, true));
    reg.op("Erf", activation::erf);
    reg.op("Gelu", activation::gelu);
    reg.op("MaxPool", |cx| pool::pool(cx, PoolKind::Max));
    reg.op("AveragePool", |cx| pool::pool(cx, PoolKind::Avg));
    reg.op("GlobalAveragePool", |cx| {
        pool::global_pool(cx, PoolKind::Avg)
    });
    reg.op("GlobalMaxPool", |cx| pool::global_pool(cx, PoolKind::Max));
    reg.op("Pad", pad::pad);
    reg.op("LSTM", rnn::lstm);
    reg.op("GRU", rnn::gru);
    reg.op("ArgMax", classifier::argmax);
    reg.op("Softmax", classifier::softmax);
    reg.op("LogSoftmax", classifier::trailing_monotone);
}

/// A scalar constant of the lowered program's element type.
pub(super) fn scalar(v: f32) -> Tensor {
    Tensor::from_f32(vec![], &[v]).expect("a scalar has one element")
}
