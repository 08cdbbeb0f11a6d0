"""Single-op models (onnx.helper) for every op the frontend supports.

Each model has its weights as initializers and its activation(s) as graph
inputs; several opsets are used where the op's semantics differ between
versions. Three random cases per model (seeded by the model name).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .common import f32, init, make_model, run_ort, runtime_inputs, save_model, vinfo

DIR = "ops"
NCASES = 3
# The newest default-domain opset of the pinned onnx (onnx.defs.onnx_opset_version()):
# every supported op has a model at it (`*_o28`).
NEWEST = 28


@dataclass
class A:
    """An activation (graph input) of the given shape."""

    shape: tuple
    scale: float = 1.0
    offset: float = 0.0


def seed_of(name: str) -> int:
    return zlib.crc32(name.encode())


def _finish(model: onnx.ModelProto) -> onnx.ModelProto:
    """Fill the graph outputs' shapes by strict shape inference."""
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    by_name = {v.name: v for v in list(inferred.graph.output) + list(inferred.graph.value_info)}
    missing = False
    for o in model.graph.output:
        if o.name in by_name and by_name[o.name].type.tensor_type.HasField("shape"):
            o.type.tensor_type.shape.CopyFrom(by_name[o.name].type.tensor_type.shape)
        else:
            missing = True
    if missing:
        # Shape inference cannot see through this graph (e.g. a shape
        # subgraph at an old opset): take the shapes onnxruntime produces.
        feeds = [
            np.zeros([d.dim_value for d in i.type.tensor_type.shape.dim], np.float32)
            for i in runtime_inputs(model)
        ]
        for o, val in zip(model.graph.output, run_ort(model, feeds)):
            o.type.tensor_type.ClearField("shape")
            for d in np.asarray(val).shape:
                o.type.tensor_type.shape.dim.add().dim_value = d
    return model


def random_cases(name: str, acts: list[A], ncases: int = NCASES) -> list[list[np.ndarray]]:
    r = np.random.default_rng(seed_of(name) + 1)
    return [
        [f32(r.standard_normal(a.shape) * a.scale + a.offset) for a in acts] for _ in range(ncases)
    ]


def single(
    name: str,
    op: str,
    inputs: list,
    opset: int,
    out_elem=TensorProto.FLOAT,
    note: str = "",
    cases=None,
    ref=None,
    atol: float = 1e-5,
    **attrs,
):
    """One-node model. `inputs` items: A(shape) activation, numpy array
    constant (initializer), or None for an omitted optional input. `atol`: the
    manifest's absolute tolerance of the float-stage interpreter against
    onnxruntime."""
    node_inputs, graph_inputs, inits, acts = [], [], [], []
    act_names = iter(["x", "y", "z"])
    for k, it in enumerate(inputs):
        if it is None:
            node_inputs.append("")
        elif isinstance(it, A):
            n = next(act_names)
            node_inputs.append(n)
            graph_inputs.append(vinfo(n, it.shape))
            acts.append(it)
        else:
            n = f"c{k}"
            node_inputs.append(n)
            inits.append(init(n, it))
    node = helper.make_node(op, node_inputs, ["out"], name=f"{op.lower()}0", **attrs)
    model = make_model([node], graph_inputs, [vinfo("out", None, out_elem)], inits, opset=opset, name=name)
    model = _finish(model)
    if cases is None:
        cases = random_cases(name, acts)
    ref_model = None
    if ref is not None:
        # ref = (opset, inputs, attrs): an equivalent node at an opset onnxruntime implements.
        r_opset, r_inputs, r_attrs = ref
        r_inits = [init(f"c{k}", it) for k, it in enumerate(r_inputs) if it is not None and not isinstance(it, A)]
        r_node_inputs = [node_inputs[k] if isinstance(it, A) or it is None else f"c{k}" for k, it in enumerate(r_inputs)]
        r_node = helper.make_node(op, r_node_inputs, ["out"], name=f"{op.lower()}0", **r_attrs)
        ref_model = make_model([r_node], graph_inputs, [model.graph.output[0]], r_inits, opset=r_opset, name=name)
    save_model(model, f"{DIR}/{name}.onnx", cases, note=note, ref_model=ref_model, atol=atol)


def w(name: str, shape, scale: float = 0.5, lo: float | None = None) -> np.ndarray:
    """Deterministic weights for `name` (uniform [lo, lo+scale) if lo is given)."""
    r = np.random.default_rng(seed_of(name + "/w" + str(shape)))
    if lo is not None:
        return f32(r.uniform(lo, lo + scale, size=shape))
    return f32(r.standard_normal(shape) * scale)


def i64(a) -> np.ndarray:
    return np.asarray(a, dtype=np.int64)


def gen_conv():
    x = A((1, 3, 7, 7))
    W = lambda n, s: w(n, s, 0.3)
    single("conv_pads1_bias_o11", "Conv", [x, W("a", (4, 3, 3, 3)), W("ab", (4,))], 11,
           pads=[1, 1, 1, 1], kernel_shape=[3, 3])
    single("conv_nopad_nobias_o7", "Conv", [x, W("b", (4, 3, 3, 3))], 7)
    single("conv_strides2_pads1_o13", "Conv", [x, W("c", (5, 3, 3, 3)), W("cb", (5,))], 13,
           strides=[2, 2], pads=[1, 1, 1, 1])
    single("conv_asym_pads_strides21_o13", "Conv", [x, W("d", (2, 3, 3, 3)), W("db", (2,))], 13,
           strides=[2, 1], pads=[0, 1, 2, 1])
    single("conv_same_upper_s2_o11", "Conv", [x, W("e", (4, 3, 3, 3)), W("eb", (4,))], 11,
           auto_pad="SAME_UPPER", strides=[2, 2], kernel_shape=[3, 3])
    single("conv_same_lower_s2_o11", "Conv", [x, W("f", (4, 3, 3, 3)), W("fb", (4,))], 11,
           auto_pad="SAME_LOWER", strides=[2, 2], kernel_shape=[3, 3])
    single("conv_same_upper_k2_o13", "Conv", [x, W("g", (3, 3, 2, 2))], 13,
           auto_pad="SAME_UPPER", kernel_shape=[2, 2])
    single("conv_same_lower_k2_o13", "Conv", [x, W("h", (3, 3, 2, 2))], 13,
           auto_pad="SAME_LOWER", kernel_shape=[2, 2])
    single("conv_valid_s2_o13", "Conv", [x, W("i", (4, 3, 3, 3)), W("ib", (4,))], 13,
           auto_pad="VALID", strides=[2, 2])
    single("conv_dilations2_pads2_o13", "Conv", [x, W("j", (4, 3, 3, 3)), W("jb", (4,))], 13,
           dilations=[2, 2], pads=[2, 2, 2, 2])
    single("conv_groups2_o13", "Conv", [A((1, 4, 6, 6)), W("k", (6, 2, 3, 3)), W("kb", (6,))], 13,
           group=2, pads=[1, 1, 1, 1])
    single("conv_depthwise_o13", "Conv", [A((1, 4, 6, 6)), W("l", (4, 1, 3, 3)), W("lb", (4,))], 13,
           group=4, pads=[1, 1, 1, 1])
    single("conv_depthwise_mult2_s2_o11", "Conv", [A((1, 4, 6, 6)), W("m", (8, 1, 3, 3))], 11,
           group=4, strides=[2, 2], pads=[1, 1, 1, 1])
    single("conv_pointwise_1x1_o13", "Conv", [A((1, 4, 5, 5)), W("n", (6, 4, 1, 1)), W("nb", (6,))], 13)
    single("conv_rect_kernel_3x1_o13", "Conv", [x, W("o", (2, 3, 3, 1)), W("ob", (2,))], 13,
           kernel_shape=[3, 1], pads=[1, 0, 1, 0])
    single("conv_rect_input_o21", "Conv", [A((1, 2, 5, 8)), W("p", (3, 2, 3, 3)), W("pb", (3,))], 21,
           pads=[1, 1, 1, 1], strides=[1, 2])
    single("conv_batch2_o13", "Conv", [A((2, 3, 5, 5)), W("q", (2, 3, 3, 3)), W("qb", (2,))], 13,
           pads=[1, 1, 1, 1], note="batch size 2")
    single("conv_o28", "Conv", [A((1, 2, 5, 8)), W("r", (3, 2, 3, 3)), W("rb", (3,))], NEWEST,
           pads=[1, 1, 1, 1], strides=[1, 2])


def gen_gemm():
    single("gemm_bias_n_o13", "Gemm", [A((2, 4)), w("a", (4, 3)), w("ab", (3,))], 13)
    single("gemm_bias_1n_o11", "Gemm", [A((1, 4)), w("b", (4, 3)), w("bb", (1, 3))], 11)
    single("gemm_transB_o7", "Gemm", [A((1, 6)), w("c", (5, 6)), w("cb", (5,))], 7, transB=1)
    single("gemm_alpha_beta_transB_o11", "Gemm", [A((2, 6)), w("d", (5, 6)), w("db", (5,))], 11,
           alpha=0.5, beta=2.0, transB=1)
    single("gemm_transA_o13", "Gemm", [A((4, 2)), w("e", (4, 3)), w("eb", (3,))], 13, transA=1)
    single("gemm_transA_transB_o13", "Gemm", [A((4, 2)), w("f", (3, 4)), w("fb", (1, 3))], 13,
           transA=1, transB=1)
    single("gemm_nobias_o13", "Gemm", [A((1, 4)), w("g", (4, 3))], 13)
    single("gemm_bias_mn_o13", "Gemm", [A((2, 4)), w("h", (4, 3)), w("hb", (2, 3))], 13)
    single("gemm_bias_scalar_o13", "Gemm", [A((2, 4)), w("i", (4, 3)), w("ib", ())], 13)
    single("gemm_broadcast_attr_o6", "Gemm", [A((2, 4)), w("j", (3, 4)), w("jb", (3,))], 6,
           transB=1, broadcast=1, note="opset 6: bias broadcasting needs broadcast=1",
           ref=(7, [A((2, 4)), w("j", (3, 4)), w("jb", (3,))], dict(transB=1)))
    single("gemm_o21", "Gemm", [A((1, 8)), w("k", (10, 8)), w("kb", (10,))], 21, transB=1, alpha=1.5)
    single("gemm_o28", "Gemm", [A((1, 8)), w("l", (10, 8)), w("lb", (10,))], NEWEST, transB=1, beta=0.5)


def gen_matmul():
    single("matmul_act_const_o13", "MatMul", [A((2, 4)), w("a", (4, 3))], 13)
    single("matmul_const_act_o13", "MatMul", [w("b", (3, 2)), A((2, 4))], 13)
    single("matmul_act_const_3d_o13", "MatMul", [A((1, 3, 4)), w("c", (4, 5))], 13)
    single("matmul_act_const_o9", "MatMul", [A((1, 6)), w("d", (6, 2))], 9)
    single("matmul_const_act_o21", "MatMul", [w("e", (2, 5)), A((5, 3))], 21)
    single("matmul_act_const_o28", "MatMul", [A((1, 3, 4)), w("f", (4, 5))], NEWEST)
    single("matmul_act_act_o13", "MatMul", [A((3, 4)), A((4, 2))], 13,
           note="product of two activations (secret × secret)")
    single("matmul_act_act_batched_o13", "MatMul", [A((2, 2, 3, 4)), A((2, 2, 4, 3))], 13,
           note="a batch of secret × secret products (attention's Q·Kᵀ)")
    single("matmul_act_act_bcast_left_o13", "MatMul", [A((1, 3, 4)), A((2, 4, 2))], 13,
           note="secret × secret, the left operand's batch of 1 broadcast")
    single("matmul_act_act_bcast_rank_o13", "MatMul", [A((2, 3, 4)), A((2, 2, 4, 2))], 13,
           note="secret × secret, the left operand broadcast over a leading batch dimension")
    single("matmul_act_act_rows_o13", "MatMul", [A((2, 3, 4)), A((4, 2))], 13,
           note="secret × secret, the left operand's batch folded into its rows")


def gen_elementwise():
    x = A((1, 3, 4, 4))
    pc = w("pc", (3, 1, 1))
    single("add_const_per_channel_o13", "Add", [x, pc], 13)
    single("add_const_scalar_o7", "Add", [x, f32(0.75)], 7)
    single("add_const_first_bcast_last_o14", "Add", [w("l4", (4,)), x], 14)
    single("add_two_inputs_o13", "Add", [x, A((1, 3, 4, 4))], 13)
    single("add_two_inputs_bcast_o13", "Add", [x, A((1, 3, 1, 1))], 13,
           note="two activations with broadcasting")
    single("add_legacy_broadcast_axis1_o6", "Add", [x, w("b3", (3,))], 6, broadcast=1, axis=1,
           ref=(7, [x, w("b3", (3,)).reshape(3, 1, 1)], {}),
           note="opset 6 legacy broadcasting: B of shape [3] aligned at axis 1 (per channel)")
    single("add_const_o21", "Add", [x, pc], 21)
    single("add_const_o28", "Add", [x, pc], NEWEST)
    single("sub_const_per_channel_o13", "Sub", [x, pc], 13)
    single("sub_const_first_o13", "Sub", [pc, x], 13, note="constant minus activation")
    single("sub_two_inputs_o7", "Sub", [x, A((1, 3, 4, 4))], 7)
    single("sub_legacy_broadcast_axis1_o6", "Sub", [x, w("b3s", (3,))], 6, broadcast=1, axis=1,
           ref=(7, [x, w("b3s", (3,)).reshape(3, 1, 1)], {}))
    single("sum_three_inputs_o13", "Sum", [x, A((1, 3, 4, 4)), A((1, 3, 4, 4))], 13)
    single("sum_act_consts_bcast_o13", "Sum", [x, pc, w("sc2", (4,))], 13,
           note="Sum of an activation and two broadcast constants")
    single("sum_two_inputs_o6", "Sum", [x, A((1, 3, 4, 4))], 6, note="opset 6: no broadcasting")
    single("sum_one_input_o8", "Sum", [x], 8)
    single("sub_two_inputs_o28", "Sub", [x, A((1, 3, 1, 1))], NEWEST)
    single("sum_act_const_o28", "Sum", [x, pc], NEWEST)
    single("mul_const_scalar_o13", "Mul", [x, f32(0.5)], 13)
    single("mul_const_per_channel_o13", "Mul", [x, pc], 13)
    single("mul_const_first_per_channel_o7", "Mul", [pc, x], 7)
    single("mul_legacy_broadcast_axis1_o6", "Mul", [x, w("m3", (3,))], 6, broadcast=1, axis=1,
           ref=(7, [x, w("m3", (3,)).reshape(3, 1, 1)], {}))
    single("mul_const_scalar_1elem_o21", "Mul", [x, f32([1.25])], 21, note="constant of shape [1]")
    single("mul_const_per_channel_o28", "Mul", [x, pc], NEWEST)
    single("div_const_scalar_o13", "Div", [x, f32(4.0)], 13)
    single("div_const_per_channel_o13", "Div", [x, w("dv", (3, 1, 1), scale=1.5, lo=0.5)], 13)
    single("div_const_scalar_o7", "Div", [x, f32(3.0)], 7)
    single("div_legacy_broadcast_axis1_o6", "Div", [x, w("d3", (3,), scale=1.5, lo=0.5)], 6,
           broadcast=1, axis=1, ref=(7, [x, w("d3", (3,), scale=1.5, lo=0.5).reshape(3, 1, 1)], {}))
    single("div_const_scalar_o28", "Div", [x, f32(8.0)], NEWEST)
    single("mul_two_inputs_o13", "Mul", [x, A((1, 3, 4, 4))], 13,
           note="product of two activations (secret × secret)")
    single("mul_two_inputs_gate_o14", "Mul", [x, A((1, 3, 1, 1))], 14,
           note="activation times a per-channel activation (a squeeze-excitation gate)")
    single("max_two_inputs_bcast_o13", "Max", [x, A((1, 3, 1, 1))], 13)
    single("min_two_inputs_o13", "Min", [x, A((1, 3, 4, 4))], 13)
    single("max_three_inputs_const_o8", "Max", [x, A((1, 3, 4, 4)), f32(0.25)], 8,
           note="variadic, with a constant operand")
    single("min_act_const_o13", "Min", [x, pc], 13)


def gen_activations():
    single("relu_o6", "Relu", [A((1, 3, 4, 4))], 6)
    single("relu_o14", "Relu", [A((1, 3, 4, 4))], 14)
    single("relu_2d_o13", "Relu", [A((2, 10))], 13)
    big = A((1, 3, 4, 4), scale=5.0)
    single("clip_attr_0_6_o6", "Clip", [big], 6, min=0.0, max=6.0, note="ReLU6, attribute form")
    single("clip_input_0_6_o11", "Clip", [big, f32(0.0), f32(6.0)], 11, note="ReLU6, input form")
    single("clip_input_0_6_o13", "Clip", [big, f32(0.0), f32(6.0)], 13, note="ReLU6, input form")
    single("clip_min_only_o13", "Clip", [big, f32(0.0)], 13, note="min=0 only: ReLU")
    single("clip_input_0_6_o21", "Clip", [big, f32(0.0), f32(6.0)], 21)
    single("relu_o28", "Relu", [A((1, 3, 4, 4))], NEWEST)
    single("clip_input_0_6_o28", "Clip", [big, f32(0.0), f32(6.0)], NEWEST)
    single("clip_input_pm1_o13", "Clip", [big, f32(-1.0), f32(1.0)], 13, note="any bounds: relu compositions")
    single("clip_max_only_o13", "Clip", [big, None, f32(2.5)], 13)
    single("clip_attr_min_only_o6", "Clip", [big], 6, min=-0.5)
    single("leakyrelu_o6", "LeakyRelu", [big], 6, note="default alpha 0.01")
    single("leakyrelu_alpha_o16", "LeakyRelu", [big], 16, alpha=0.2)
    single("prelu_per_channel_o16", "PRelu", [big, w("slope", (3, 1, 1))], 16, note="constant slope")
    single("prelu_scalar_o9", "PRelu", [big, f32([0.25])], 9)
    single("hardsigmoid_o6", "HardSigmoid", [big], 6, note="defaults alpha 0.2, beta 0.5")
    single("hardsigmoid_attrs_o22", "HardSigmoid", [big], 22, alpha=1.0 / 6.0, beta=0.5,
           note="PyTorch's Hardsigmoid")
    single("hardswish_o14", "HardSwish", [big], 14)
    single("hardswish_o22", "HardSwish", [big], 22)
    single("sigmoid_o6", "Sigmoid", [big], 6)
    single("sigmoid_o13", "Sigmoid", [big], 13)
    single("tanh_o6", "Tanh", [big], 6)
    single("tanh_o13", "Tanh", [big], 13)
    # sci lowers erf to tanh of an odd polynomial, within 3.7e-5 of erf (GELU: 5.5e-5;
    # frontend/src/ops/nn/activation.rs, ERF_POLY): the float stage's tolerance.
    ERF_ATOL = 1e-4
    single("erf_o9", "Erf", [A((1, 3, 4, 4), scale=2.0)], 9, atol=ERF_ATOL)
    single("erf_o13", "Erf", [A((1, 3, 4, 4), scale=2.0)], 13, atol=ERF_ATOL)
    single("gelu_o20", "Gelu", [big], 20, note="approximate none: x * Phi(x) with erf",
           atol=ERF_ATOL)
    single("gelu_tanh_o20", "Gelu", [big], 20, approximate="tanh")


def gen_layernorm():
    x = A((2, 4, 8))
    single("layernorm_o17", "LayerNormalization", [x, w("ln_g", (8,)), w("ln_b", (8,))], 17,
           note="default axis -1 and epsilon")
    single("layernorm_axis1_o17", "LayerNormalization",
           [A((1, 3, 4, 4), scale=3.0, offset=1.0), w("ln1_g", (3, 4, 4)), w("ln1_b", (3, 4, 4))],
           17, axis=1, epsilon=1e-3, note="normalised over the trailing axes from 1")
    single("layernorm_nobias_o17", "LayerNormalization", [x, w("ln2_g", (8,))], 17, axis=-1,
           stash_type=1, note="no bias")
    single("layernorm_o28", "LayerNormalization", [x, w("ln3_g", (8,)), w("ln3_b", (8,))], NEWEST)


def gen_pools():
    x6 = A((1, 2, 6, 6))
    x5 = A((1, 2, 5, 5))
    single("maxpool_k2s2_o8", "MaxPool", [x6], 8, kernel_shape=[2, 2], strides=[2, 2])
    single("maxpool_k2_default_strides_o12", "MaxPool", [x5], 12, kernel_shape=[2, 2],
           note="strides default to 1")
    single("maxpool_k3s2_pads1_o11", "MaxPool", [x6], 11, kernel_shape=[3, 3], strides=[2, 2],
           pads=[1, 1, 1, 1])
    single("maxpool_k3s1_pads1_o13", "MaxPool", [x5], 13, kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    single("maxpool_k3s2_ceil_o10", "MaxPool", [x6], 10, kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)
    single("maxpool_k2s2_pads1_ceil_o12", "MaxPool", [x5], 12, kernel_shape=[2, 2], strides=[2, 2],
           pads=[1, 1, 1, 1], ceil_mode=1)
    single("maxpool_k2s2_asym_pads_o11", "MaxPool", [x5], 11, kernel_shape=[2, 2], strides=[2, 2],
           pads=[0, 0, 1, 1])
    single("maxpool_k3s2_same_upper_o11", "MaxPool", [x5], 11, kernel_shape=[3, 3], strides=[2, 2],
           auto_pad="SAME_UPPER")
    single("maxpool_k3s2_o21", "MaxPool", [A((1, 3, 7, 7))], 21, kernel_shape=[3, 3], strides=[2, 2])
    single("maxpool_k2s2_batch2_o13", "MaxPool", [A((2, 2, 4, 4))], 13, kernel_shape=[2, 2], strides=[2, 2])
    single("maxpool_k3s2_pads1_ceil_o28", "MaxPool", [x6], NEWEST, kernel_shape=[3, 3], strides=[2, 2],
           pads=[1, 1, 1, 1], ceil_mode=1)

    single("avgpool_k2s2_o7", "AveragePool", [x6], 7, kernel_shape=[2, 2], strides=[2, 2])
    single("avgpool_k3s2_pads1_cip0_o11", "AveragePool", [x6], 11, kernel_shape=[3, 3], strides=[2, 2],
           pads=[1, 1, 1, 1], count_include_pad=0)
    single("avgpool_k3s2_pads1_cip1_o11", "AveragePool", [x6], 11, kernel_shape=[3, 3], strides=[2, 2],
           pads=[1, 1, 1, 1], count_include_pad=1)
    single("avgpool_k3s1_pads1_cip1_o13", "AveragePool", [x5], 13, kernel_shape=[3, 3],
           pads=[1, 1, 1, 1], count_include_pad=1)
    single("avgpool_k3s2_ceil_cip0_o10", "AveragePool", [x6], 10, kernel_shape=[3, 3], strides=[2, 2],
           ceil_mode=1)
    single("avgpool_k2s2_pads1_ceil_cip1_o19", "AveragePool", [x5], 19, kernel_shape=[2, 2],
           strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1)
    single("avgpool_k2s2_pads1_ceil_cip0_o19", "AveragePool", [x5], 19, kernel_shape=[2, 2],
           strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=0)
    single("avgpool_k3s2_same_upper_o11", "AveragePool", [x5], 11, kernel_shape=[3, 3], strides=[2, 2],
           auto_pad="SAME_UPPER")
    single("avgpool_k2s2_o21", "AveragePool", [A((1, 3, 8, 8))], 21, kernel_shape=[2, 2], strides=[2, 2])
    single("avgpool_k3s2_pads1_cip0_dil1_o28", "AveragePool", [x6], NEWEST, kernel_shape=[3, 3],
           strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=0, dilations=[1, 1],
           note="dilations (opset 19+) of 1")

    single("globalavgpool_o7", "GlobalAveragePool", [A((1, 3, 5, 5))], 7)
    single("globalavgpool_o21", "GlobalAveragePool", [A((1, 4, 3, 3))], 21)
    single("globalavgpool_o28", "GlobalAveragePool", [A((1, 4, 3, 3))], NEWEST)
    single("globalmaxpool_o28", "GlobalMaxPool", [A((1, 4, 3, 3))], NEWEST)
    single("reducemean_spatial_o28", "ReduceMean", [A((1, 4, 3, 3)), i64([2, 3])], NEWEST, keepdims=1)


def gen_batchnorm():
    c = 3
    def params(tag):
        return [w(tag + "s", (c,)), w(tag + "b", (c,)), w(tag + "m", (c,)), w(tag + "v", (c,), scale=1.5, lo=0.25)]
    x = A((1, c, 4, 4), scale=2.0, offset=0.5)
    single("batchnorm_o7", "BatchNormalization", [x, *params("a")], 7, epsilon=1e-5)
    single("batchnorm_o9", "BatchNormalization", [x, *params("b")], 9, epsilon=1e-3)
    single("batchnorm_o14", "BatchNormalization", [x, *params("c")], 14)
    single("batchnorm_o15", "BatchNormalization", [x, *params("d")], 15, epsilon=1e-4, momentum=0.8)
    single("batchnorm_2d_o15", "BatchNormalization", [A((2, c)), *params("e")], 15,
           note="N x C input (after a Gemm)")
    single("batchnorm_o28", "BatchNormalization", [x, *params("f")], NEWEST, epsilon=1e-4)


def gen_shape_ops():
    x = A((1, 3, 2, 2))
    single("flatten_axis1_o9", "Flatten", [x], 9, axis=1)
    single("flatten_default_o13", "Flatten", [x], 13)
    single("flatten_axis0_o11", "Flatten", [x], 11, axis=0)
    single("flatten_axis2_o13", "Flatten", [x], 13, axis=2)
    single("flatten_neg_axis_o13", "Flatten", [x], 13, axis=-1)
    single("flatten_o21", "Flatten", [x], 21)
    single("flatten_o28", "Flatten", [x], NEWEST, axis=2)

    single("reshape_neg1_o5", "Reshape", [x, i64([1, -1])], 5)
    single("reshape_zero_neg1_o13", "Reshape", [x, i64([0, -1])], 13)
    single("reshape_zero_mid_o13", "Reshape", [x, i64([0, 0, -1])], 13)
    single("reshape_explicit_o14", "Reshape", [x, i64([1, 2, 6])], 14, allowzero=0)
    single("reshape_neg1_first_o21", "Reshape", [x, i64([-1, 4])], 21)
    single("reshape_zero_neg1_o28", "Reshape", [x, i64([0, -1])], NEWEST)

    single("transpose_nchw_nhwc_o7", "Transpose", [x], 7, perm=[0, 2, 3, 1])
    single("transpose_default_reverse_o13", "Transpose", [x], 13)
    single("transpose_2d_o13", "Transpose", [A((3, 4))], 13, perm=[1, 0])
    single("transpose_o21", "Transpose", [A((1, 2, 3, 4))], 21, perm=[0, 3, 1, 2])
    single("transpose_o28", "Transpose", [A((1, 2, 3, 4))], NEWEST, perm=[0, 2, 3, 1])

    single("concat_act_const_axis1_o11", "Concat", [x, w("cc", (1, 2, 2, 2))], 11, axis=1)
    single("concat_two_inputs_axis1_o13", "Concat", [x, A((1, 2, 2, 2))], 13, axis=1)
    single("concat_three_inputs_axis1_o4", "Concat", [x, A((1, 1, 2, 2)), A((1, 3, 2, 2))], 4, axis=1)
    single("concat_neg_axis_o13", "Concat", [x, w("cn", (1, 3, 2, 1))], 13, axis=-1)
    single("concat_o21", "Concat", [x, A((1, 4, 2, 2))], 21, axis=1)
    single("concat_act_const_o28", "Concat", [x, w("c28", (1, 2, 2, 2))], NEWEST, axis=1)

    xp = A((1, 2, 3, 3))
    single("pad_attr_o2", "Pad", [xp], 2, mode="constant", pads=[0, 0, 1, 1, 0, 0, 1, 1])
    single("pad_attr_value_asym_o2", "Pad", [xp], 2, pads=[0, 0, 0, 1, 0, 0, 2, 0], value=1.5)
    single("pad_input_o11", "Pad", [xp, i64([0, 0, 1, 1, 0, 0, 1, 1]), f32(0.0)], 11, mode="constant")
    single("pad_input_value_asym_o11", "Pad", [xp, i64([0, 0, 2, 0, 0, 0, 0, 1]), f32(-0.5)], 11)
    single("pad_input_novalue_o13", "Pad", [xp, i64([0, 0, 1, 2, 0, 0, 1, 0])], 13)
    single("pad_input_axes_o18", "Pad", [xp, i64([1, 0, 0, 1]), f32(0.25), i64([2, 3])], 18,
           note="opset 18 axes input: pads apply to axes 2 and 3")
    single("pad_input_o21", "Pad", [xp, i64([0, 0, 1, 1, 0, 0, 1, 1]), f32(0.0)], 21)
    single("pad_input_axes_o28", "Pad", [xp, i64([1, 2, 0, 1]), f32(-0.25), i64([2, 3])], NEWEST)
    # ReflectionPad2d / ReplicationPad2d / circular: data movement (gathers).
    single("pad_reflect_attr_o2", "Pad", [xp], 2, mode="reflect", pads=[0, 0, 1, 2, 0, 0, 2, 1])
    single("pad_reflect_o13", "Pad", [xp, i64([0, 0, 2, 1, 0, 0, 1, 2])], 13, mode="reflect")
    single("pad_edge_o11", "Pad", [xp, i64([0, 0, 3, 0, 0, 0, 1, 2])], 11, mode="edge")
    single("pad_edge_axes_o18", "Pad", [xp, i64([2, 0, 1, 3]), None, i64([-1, 2])], 18, mode="edge")
    single("pad_wrap_o19", "Pad", [xp, i64([0, 0, 1, 2, 0, 0, 2, 1])], 19, mode="wrap")
    single(f"pad_reflect_o{NEWEST}", "Pad", [xp, i64([0, 0, 1, 1, 0, 0, 1, 1])], NEWEST, mode="reflect")

    s = A((1, 3, 1, 4))
    single("squeeze_attr_o7", "Squeeze", [s], 7, axes=[2])
    single("squeeze_attr_neg_o11", "Squeeze", [s], 11, axes=[-2])
    single("squeeze_attr_two_axes_o11", "Squeeze", [s], 11, axes=[0, 2])
    single("squeeze_input_o13", "Squeeze", [s, i64([2])], 13)
    single("squeeze_input_noaxes_o13", "Squeeze", [s], 13, note="no axes: squeeze all 1-dims")
    single("squeeze_input_o21", "Squeeze", [s, i64([0, -2])], 21)
    single("squeeze_input_o28", "Squeeze", [s, i64([2])], NEWEST)
    u = A((3, 4))
    single("unsqueeze_attr_o7", "Unsqueeze", [u], 7, axes=[0])
    single("unsqueeze_attr_two_axes_o11", "Unsqueeze", [u], 11, axes=[0, -1])
    single("unsqueeze_input_o13", "Unsqueeze", [u, i64([0, 3])], 13)
    single("unsqueeze_input_o21", "Unsqueeze", [u, i64([1])], 21)
    single("unsqueeze_input_o28", "Unsqueeze", [u, i64([0, 2])], NEWEST)


def gen_misc():
    x = A((1, 3, 4, 4))
    single("identity_o13", "Identity", [x], 13)
    single("identity_o7", "Identity", [x], 7)
    single("cast_float_to_float_o9", "Cast", [x], 9, to=TensorProto.FLOAT)
    single("cast_float_to_float_o13", "Cast", [x], 13, to=TensorProto.FLOAT)
    single("cast_float_to_float_o21", "Cast", [x], 21, to=TensorProto.FLOAT)
    single("cast_float_to_float_o6", "Cast", [x], 6, to=TensorProto.FLOAT)
    single("identity_o28", "Identity", [x], NEWEST)
    single("cast_float_to_float_o28", "Cast", [x], NEWEST, to=TensorProto.FLOAT, saturate=1,
           round_mode="up", note="saturate (19+) and round_mode (24+) only apply to float8 targets")
    single("dropout_attr_o7", "Dropout", [x], 7, ratio=0.3)
    single("dropout_is_test_o6", "Dropout", [x], 6, is_test=1, ratio=0.5,
           ref=(7, [x], dict(ratio=0.5)))
    single("dropout_o10", "Dropout", [x], 10, ratio=0.2)
    single("dropout_ratio_input_o12", "Dropout", [x, f32(0.4)], 12)
    single("dropout_training_false_o13", "Dropout", [x, f32(0.4), np.asarray(False)], 13)
    single("dropout_o21", "Dropout", [x], 21)
    single("dropout_o28", "Dropout", [x, f32(0.1), np.asarray(False)], NEWEST)

    v = A((1, 10))
    single("argmax_axis1_keepdims_o11", "ArgMax", [v], 11, out_elem=TensorProto.INT64, axis=1)
    single("argmax_axis1_nokeepdims_o13", "ArgMax", [A((2, 10))], 13, out_elem=TensorProto.INT64,
           axis=1, keepdims=0)
    single("argmax_neg_axis_o13", "ArgMax", [v], 13, out_elem=TensorProto.INT64, axis=-1)
    single("argmax_axis1_o7", "ArgMax", [v], 7, out_elem=TensorProto.INT64, axis=1, keepdims=1)
    single("argmax_nchw_axis1_o13", "ArgMax", [A((1, 4, 2, 3))], 13, out_elem=TensorProto.INT64, axis=1)
    ties = [
        [f32([[0.5, 2.0, -1.0, 2.0, 0.0, 2.0, 1.0, -3.0, 0.0, 1.5]])],
        [f32(np.zeros((1, 10)))],
        [f32([[-1.0, -1.0, -2.0, -5.0, -1.0, -3.0, -4.0, -6.0, -7.0, -1.0]])],
    ]
    single("argmax_ties_first_o12", "ArgMax", [v], 12, out_elem=TensorProto.INT64, axis=1,
           select_last_index=0, cases=ties, note="inputs with ties: the first maximal index wins")

    single("softmax_o11", "Softmax", [v], 11)
    single("softmax_o13", "Softmax", [v], 13)
    single("softmax_4d_coerced_o11", "Softmax", [A((1, 3, 2, 2))], 11,
           note="opset < 13: input coerced to 2-D at axis=1, softmax over all 12 values")
    single("softmax_4d_axis1_o13", "Softmax", [A((1, 3, 2, 2))], 13, axis=1,
           note="opset >= 13: softmax along axis 1 only")
    single("logsoftmax_o11", "LogSoftmax", [v], 11)
    single("logsoftmax_o13", "LogSoftmax", [v], 13)
    single("softmax_o21", "Softmax", [v], 21)
    single("argmax_axis1_keepdims_o28", "ArgMax", [v], NEWEST, out_elem=TensorProto.INT64, axis=1)
    single("softmax_o28", "Softmax", [v], NEWEST)
    single("logsoftmax_o28", "LogSoftmax", [v], NEWEST)


def _graph_model(name, nodes, inputs, outputs, inits, opset, note="", atol=1e-5):
    model = make_model(nodes, inputs, outputs, inits, opset=opset, name=name)
    model = _finish(model)
    acts = [A(tuple(d.dim_value for d in i.type.tensor_type.shape.dim)) for i in inputs]
    save_model(model, f"{DIR}/{name}.onnx", random_cases(name, acts), note=note, atol=atol)


def gen_softmax():
    """Softmax inside a graph (a bias added after it, so it is not the trailing op
    sci drops): per axis from opset 13, over the input coerced to 2-D before; and
    single-head attention softmax(q·kᵀ/√d)·v of one activation."""
    N = helper.make_node
    for name, shape, opset, attrs, note in (
        ("softmax_last_o13", (2, 3, 8), 13, {}, "default axis -1"),
        ("softmax_axis1_o13", (1, 4, 3, 3), 13, {"axis": 1}, "along the channels"),
        ("softmax_flatten_o11", (2, 3, 4), 11, {}, "default axis 1: rows of 12 (coerced to 2-D)"),
        ("softmax_axis0_o11", (2, 3, 4), 11, {"axis": 0}, "axis 0: one row of 24"),
        ("softmax_axis2_o9", (2, 3, 4), 9, {"axis": 2}, "opset 9 (Softmax-1), the last axis"),
        ("softmax_axis_m2_o28", (2, 5, 4), NEWEST, {"axis": -2}, "axis -2"),
    ):
        b = w(name + "b", shape[-1:])
        _graph_model(
            name,
            [N("Softmax", ["x"], ["s"], **attrs), N("Add", ["s", "B"], ["out"])],
            [vinfo("x", shape)], [vinfo("out", None)], [init("B", b)], opset,
            note=f"Softmax ({note}) + bias",
        )
    d = 8
    name = "attention_o17"
    _graph_model(
        name,
        [
            N("MatMul", ["x", "Wq"], ["q"]),
            N("MatMul", ["x", "Wk"], ["k"]),
            N("MatMul", ["x", "Wv"], ["v"]),
            N("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
            N("MatMul", ["q", "kt"], ["qk"]),
            N("Mul", ["qk", "scale"], ["logits"]),
            N("Softmax", ["logits"], ["p"], axis=-1),
            N("MatMul", ["p", "v"], ["out"]),
        ],
        [vinfo("x", (1, 5, d))], [vinfo("out", None)],
        [init("Wq", w(name + "q", (d, d))), init("Wk", w(name + "k", (d, d))),
         init("Wv", w(name + "v", (d, d))), init("scale", f32(1.0 / np.sqrt(d)))], 17,
        note="single-head attention: softmax(q·kᵀ/√d)·v, secret × secret products",
    )


def gen_composites():
    """Small graphs: trailing softmax, shape subgraphs feeding Reshape,
    computed weights, and an old-style (IR 3) model."""
    N = helper.make_node
    C = lambda out, arr: N("Constant", [], [out], value=init(out, arr))
    # Gemm followed by a trailing Softmax / LogSoftmax.
    for op, opset in (("Softmax", 13), ("LogSoftmax", 11)):
        name = f"gemm_{op.lower()}_o{opset}"
        _graph_model(
            name,
            [N("Gemm", ["x", "W", "B"], ["logits"], transB=1), N(op, ["logits"], ["out"], axis=1)],
            [vinfo("x", (1, 6))], [vinfo("out", None)],
            [init("W", w(name, (4, 6))), init("B", w(name + "b", (4,)))], opset,
            note=f"trailing {op} after Gemm",
        )

    # SiLU / Swish as both PyTorch exporters write it: x * Sigmoid(x).
    _graph_model(
        "silu_o14",
        [N("Sigmoid", ["x"], ["s"]), N("Mul", ["x", "s"], ["out"])],
        [vinfo("x", (1, 3, 4, 4))], [vinfo("out", None)], [], 14,
        note="SiLU: x * Sigmoid(x), a product of two activations",
    )

    # GELU as the opset-17 exporter writes it: x * 0.5 * (1 + Erf(x / sqrt 2)).
    _graph_model(
        "gelu_erf_o17",
        [
            C("sqrt2", f32(np.sqrt(2.0))),
            N("Div", ["x", "sqrt2"], ["u"]),
            N("Erf", ["u"], ["e"]),
            C("one", f32(1.0)),
            N("Add", ["e", "one"], ["e1"]),
            N("Mul", ["x", "e1"], ["xe"]),
            C("half", f32(0.5)),
            N("Mul", ["xe", "half"], ["out"]),
        ],
        [vinfo("x", (1, 3, 4, 4))], [vinfo("out", None)], [], 17,
        note="GELU: x * 0.5 * (1 + Erf(x / sqrt 2)), as torch.onnx.export writes it",
        atol=1e-4,
    )

    # The layer normalisation as the legacy PyTorch exporter writes it before opset 17.
    for opset, square in ((13, "Pow"), (13, "Mul")):
        name = f"layernorm_decomposed_{square.lower()}_o{opset}"
        sq = (N("Pow", ["d", "two"], ["sq"]) if square == "Pow" else N("Mul", ["d", "d"], ["sq"]))
        _graph_model(
            name,
            [
                N("ReduceMean", ["x"], ["mu"], axes=[-1]),
                N("Sub", ["x", "mu"], ["d"]),
                sq,
                N("ReduceMean", ["sq"], ["var"], axes=[-1]),
                N("Add", ["var", "eps"], ["ve"]),
                N("Sqrt", ["ve"], ["sd"]),
                N("Div", ["d", "sd"], ["n"]),
                N("Mul", ["n", "G"], ["g"]),
                N("Add", ["g", "B"], ["out"]),
            ],
            [vinfo("x", (2, 4, 8))], [vinfo("out", None)],
            [init("two", f32(2.0)), init("eps", f32(1e-5)), init("G", w(name, (8,))),
             init("B", w(name + "b", (8,)))], opset,
            note=f"ReduceMean, Sub, {square}, ReduceMean, Add, Sqrt, Div (legacy exporter)",
        )

    # Shape -> Gather -> Unsqueeze -> Concat -> Reshape (what torch emits for
    # x.view(x.size(0), -1)), plus ConstantOfShape feeding an Add.
    x = vinfo("x", (1, 3, 2, 2))
    for opset in (9, 11, 13, NEWEST):
        name = f"shape_subgraph_reshape_o{opset}"
        nodes = [
            N("Shape", ["x"], ["shp"]),
            C("idx0", np.asarray(0, dtype=np.int64)),
            N("Gather", ["shp", "idx0"], ["batch"], axis=0),
        ]
        if opset >= 13:
            nodes += [C("ax0", i64([0])), N("Unsqueeze", ["batch", "ax0"], ["batch1"])]
        else:
            nodes += [N("Unsqueeze", ["batch"], ["batch1"], axes=[0])]
        nodes += [
            C("minus1", i64([-1])),
            N("Concat", ["batch1", "minus1"], ["newshape"], axis=0),
        ]
        if opset >= 13:
            nodes += [N("Cast", ["newshape"], ["newshape64"], to=TensorProto.INT64)]
        else:
            nodes += [N("Identity", ["newshape"], ["newshape64"])]
        nodes += [
            N("Reshape", ["x", "newshape64"], ["flat"]),
            C("cshape", i64([1, 12])),
            N("ConstantOfShape", ["cshape"], ["bias"], value=init("v", f32([0.25]))),
            N("Add", ["flat", "bias"], ["out"]),
        ]
        _graph_model(name, nodes, [x], [vinfo("out", None)], [], opset,
                     note="shape subgraph feeding Reshape, ConstantOfShape bias; folds to Reshape [1,12] + 0.25")

    # Computed weights: a Constant scale vector Unsqueezed to [C,1,1] feeding Mul,
    # a ConstantOfShape offset feeding Add, a Constant weight feeding Conv.
    name = "computed_weights_o13"
    nodes = [
        C("scale", w(name + "s", (3,))),
        C("axes12", i64([1, 2])),
        N("Unsqueeze", ["scale", "axes12"], ["scale3"]),
        N("Mul", ["x", "scale3"], ["m"]),
        C("oshape", i64([3, 1, 1])),
        N("ConstantOfShape", ["oshape"], ["off"], value=init("v", f32([-0.5]))),
        N("Add", ["m", "off"], ["a"]),
        C("W", w(name + "w", (2, 3, 3, 3), 0.3)),
        N("Conv", ["a", "W"], ["out"], pads=[1, 1, 1, 1]),
    ]
    _graph_model(name, nodes, [vinfo("x", (1, 3, 4, 4))], [vinfo("out", None)], [], 13,
                 note="weights computed from Constant/Unsqueeze/ConstantOfShape")

    # The constant-only ops at the newest opset, folded into the weights of a Mul
    # and an Add: Range over float16 (27+: computed in float, `stash_type` 1),
    # Cast, Expand, Neg, Abs, Sqrt, Reciprocal, Floor, Ceil, Max, Min, Less,
    # Greater, Equal, Not, Where, Slice, Gather, Size.
    name = f"const_ops_o{NEWEST}"
    f16 = lambda v: np.asarray(v, dtype=np.float16)
    nodes = [
        C("start", f16(0.5)), C("limit", f16(2.5)), C("delta", f16(0.5)),
        N("Range", ["start", "limit", "delta"], ["r16"]),
        N("Cast", ["r16"], ["r"], to=TensorProto.FLOAT),
        C("eshape", i64([1, 4])),
        N("Expand", ["r", "eshape"], ["e"]),
        N("Neg", ["e"], ["n"]), N("Abs", ["n"], ["a"]), N("Sqrt", ["a"], ["q"]),
        N("Reciprocal", ["q"], ["rc"]), N("Floor", ["e"], ["fl"]), N("Ceil", ["e"], ["ce"]),
        N("Max", ["fl", "q"], ["mx"]), N("Min", ["ce", "rc"], ["mn"]),
        N("Less", ["mn", "mx"], ["lt"]), N("Greater", ["fl", "rc"], ["gt"]),
        N("Equal", ["fl", "ce"], ["eq"]), N("Not", ["eq"], ["ne"]),
        N("Where", ["lt", "mx", "rc"], ["w1"]), N("Where", ["gt", "w1", "mn"], ["w2"]),
        N("Where", ["ne", "w2", "e"], ["w3"]),
        C("st", i64([0])), C("en", i64([3])), C("ax", i64([1])),
        N("Slice", ["w3", "st", "en", "ax"], ["scale"]),
        C("idx", i64([3, 0, 2])),
        N("Gather", ["w3", "idx"], ["shift"], axis=1),
        N("Size", ["shift"], ["sz"]), N("Cast", ["sz"], ["szf"], to=TensorProto.FLOAT),
        N("Mul", ["x", "scale"], ["m"]), N("Add", ["m", "shift"], ["m2"]),
        N("Div", ["m2", "szf"], ["out"]),
    ]
    _graph_model(name, nodes, [vinfo("x", (1, 3))], [vinfo("out", None)], [], NEWEST,
                 note="constant-only ops at the newest opset, folded into a Mul, an Add and a Div")

    # Selection on activations: Gather with constant indices, Slice, Split.
    x4 = vinfo("x", (1, 3, 4, 4))
    name = "gather_act_scalar_index_o13"  # x[:, 0], torchvision GoogLeNet's transform_input
    _graph_model(name, [C("i0", np.asarray(0, dtype=np.int64)), N("Gather", ["x", "i0"], ["out"], axis=1)],
                 [x4], [vinfo("out", None)], [], 13, note="scalar index: the axis is dropped")
    name = f"gather_act_indices_2d_o{NEWEST}"
    _graph_model(name, [C("ii", i64([[2, 0], [-1, 1]])), N("Gather", ["x", "ii"], ["out"], axis=-1)],
                 [x4], [vinfo("out", None)], [], NEWEST, note="2-D indices with a negative one, last axis")
    name = "gather_transform_input_o13"
    nodes = []
    for c, (k, b) in enumerate([(0.5, 0.1), (2.0, -0.2), (-1.0, 0.3)]):
        nodes += [
            C(f"i{c}", i64([c])), N("Gather", ["x", f"i{c}"], [f"g{c}"], axis=1),
            C(f"k{c}", f32(k)), N("Mul", [f"g{c}", f"k{c}"], [f"m{c}"]),
            C(f"b{c}", f32(b)), N("Add", [f"m{c}", f"b{c}"], [f"a{c}"]),
        ]
    nodes.append(N("Concat", ["a0", "a1", "a2"], ["out"], axis=1))
    _graph_model(name, nodes, [x4], [vinfo("out", None)], [], 13,
                 note="per-channel affine via Gather/Mul/Add/Concat (GoogLeNet transform_input)")
    name = "slice_act_steps_o13"
    _graph_model(name, [C("st", i64([3, 0])), C("en", i64([-5, 4])), C("ax", i64([3, 1])), C("sp", i64([-2, 2])),
                        N("Slice", ["x", "st", "en", "ax", "sp"], ["out"])],
                 [x4], [vinfo("out", None)], [], 13, note="negative step on axis 3, step 2 on axis 1")
    name = f"slice_act_o{NEWEST}"
    _graph_model(name, [C("st", i64([1])), C("en", i64([3])), C("ax", i64([2])),
                        N("Slice", ["x", "st", "en", "ax"], ["out"])],
                 [x4], [vinfo("out", None)], [], NEWEST)
    name = "slice_act_attr_o9"
    _graph_model(name, [N("Slice", ["x"], ["out"], starts=[1, 0], ends=[3, 100], axes=[1, 3])],
                 [x4], [vinfo("out", None)], [], 9, note="opset < 10: attributes; end clamped")
    name = "chunk_legacy_o17"  # torch.chunk by the legacy exporter: Shape -> Gather -> Div -> Slice
    nodes = [
        N("Shape", ["x"], ["shp"]), C("one", np.asarray(1, dtype=np.int64)),
        N("Gather", ["shp", "one"], ["c"], axis=0), C("two", np.asarray(2, dtype=np.int64)),
        C("three", np.asarray(3, dtype=np.int64)), N("Add", ["c", "three"], ["c3"]),
        N("Div", ["c3", "two"], ["half"]), C("ax0", i64([0])), N("Unsqueeze", ["half", "ax0"], ["half1"]),
        C("zero1", i64([0])), C("big", i64([2**62])), C("ax1", i64([1])),
        N("Slice", ["x", "zero1", "half1", "ax1"], ["lo"]), N("Slice", ["x", "half1", "big", "ax1"], ["hi"]),
        N("Relu", ["lo"], ["out0"]), N("Transpose", ["hi"], ["out1"], perm=[0, 1, 3, 2]),
    ]
    model = make_model(nodes, [vinfo("x", (1, 6, 2, 2))], [vinfo("out0", None), vinfo("out1", None)], [],
                       opset=17, name=name)
    model = _finish(model)
    save_model(model, f"{DIR}/{name}.onnx", random_cases(name, [A((1, 6, 2, 2))]),
               note="chunk(2) by Shape/Gather/Div/Slice (folded ends): [1,6,2,2] into 3 + 3 channels")
    for opset, extra, attrs in (
        (11, [], dict(axis=1, split=[1, 2])),
        (13, [C("sp", i64([2, 1]))], dict(axis=1)),
        (13, [], dict(axis=-1)),
        (NEWEST, [], dict(axis=2, num_outputs=2)),
        (NEWEST, [], dict(axis=1, num_outputs=2)),
    ):
        ins = ["x"] + (["sp"] if extra else [])
        nout = len(attrs.get("split", [])) or attrs.get("num_outputs") or (2 if opset == 13 else 2)
        tag = "input" if extra else "attr" if "split" in attrs else f"n{nout}" if "num_outputs" in attrs else "equal"
        name = f"split_{tag}_axis{attrs['axis']}_o{opset}".replace("-", "m")
        outs = [f"out{k}" for k in range(nout)]
        shape = (1, 3, 4, 4) if attrs["axis"] != -1 else (1, 3, 4, 6)
        model = make_model(extra + [N("Split", ins, outs, **attrs)], [vinfo("x", shape)],
                           [vinfo(o, None) for o in outs], [], opset=opset, name=name)
        model = _finish(model)
        save_model(model, f"{DIR}/{name}.onnx", random_cases(name, [A(shape)]),
                   note="3 channels into 2 + 1: the last part is smaller" if attrs == dict(axis=1, num_outputs=2) else "")

    # Old style: IR 3, opset 7, every initializer also listed as a graph input.
    for opset in (7, 8):
        name = f"oldstyle_ir3_o{opset}"
        W1, B1 = w(name + "w1", (4, 1, 3, 3), 0.4), w(name + "b1", (4,), 0.1)
        W2, B2 = w(name + "w2", (3, 16), 0.3), w(name + "b2", (3,), 0.1)
        inits = [init("W1", W1), init("B1", B1), init("W2", W2), init("B2", B2)]
        nodes = [
            N("Conv", ["x", "W1", "B1"], ["c"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
            N("Relu", ["c"], ["r"]),
            N("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
            N("Flatten", ["p"], ["f"], axis=1),
            N("Gemm", ["f", "W2", "B2"], ["out"], transB=1),
        ]
        graph_inputs = [vinfo("x", (1, 1, 4, 4))] + [vinfo(t.name, t.dims) for t in inits]
        model = make_model(nodes, graph_inputs, [vinfo("out", (1, 3))], inits, opset=opset, name=name,
                           ir_version=3)
        save_model(model, f"{DIR}/{name}.onnx", random_cases(name, [A((1, 1, 4, 4))]),
                   note="IR 3: initializers W1,B1,W2,B2 are also graph inputs (weights, not client inputs)")


def gen_rnn():
    """LSTM and GRU: directions, layouts, optional inputs and outputs."""
    N = helper.make_node

    def rnn(name, op, opset, x_shape, hidden, outs, bias=True, init_h=False, init_c=False,
            seq_lens=False, note="", **attrs):
        dirs = 2 if attrs.get("direction") == "bidirectional" else 1
        gates = 4 if op == "LSTM" else 3
        layout = attrs.get("layout", 0)
        t_len, batch = (x_shape[1], x_shape[0]) if layout else (x_shape[0], x_shape[1])
        inits = [init("W", w(name + "W", (dirs, gates * hidden, x_shape[2]))),
                 init("R", w(name + "R", (dirs, gates * hidden, hidden)))]
        ins = ["x", "W", "R"]
        if bias:
            inits.append(init("B", w(name + "B", (dirs, 2 * gates * hidden), 0.3)))
        ins.append("B" if bias else "")
        if seq_lens:
            inits.append(init("L", np.full((batch,), t_len, np.int32)))
        ins.append("L" if seq_lens else "")
        state = (batch, dirs, hidden) if layout else (dirs, batch, hidden)
        for flag, n in ((init_h, "H0"), (init_c, "C0")):
            if flag:
                inits.append(init(n, w(name + n, state, 0.5)))
        ins.append("H0" if init_h else "")
        if op == "LSTM":
            ins.append("C0" if init_c else "")
        while ins[-1] == "":
            ins.pop()
        names = ["Y", "Y_h", "Y_c"]
        node_outs = [names[k] if k in outs else "" for k in range(max(outs) + 1)]
        node = N(op, ins, node_outs, name=f"{op.lower()}0", hidden_size=hidden, **attrs)
        model = make_model([node], [vinfo("x", x_shape)], [vinfo(names[k], None) for k in outs],
                           inits, opset=opset, name=name)
        model = _finish(model)
        ref_model = None
        if layout:
            # onnxruntime implements layout 0 only: the same layer between transposes.
            ref_inits = [numpy_helper.from_array(
                numpy_helper.to_array(t).transpose(1, 0, 2) if t.name in ("H0", "C0")
                else numpy_helper.to_array(t), name=t.name) for t in inits]
            perms = {"Y": [2, 0, 1, 3], "Y_h": [1, 0, 2], "Y_c": [1, 0, 2]}
            ref_outs = [o + "_0" if o else "" for o in node_outs]
            nodes = [N("Transpose", ["x"], ["x_0"], perm=[1, 0, 2]),
                     N(op, ["x_0"] + ins[1:], ref_outs, name=f"{op.lower()}0", hidden_size=hidden,
                       **{k: v for k, v in attrs.items() if k != "layout"})]
            nodes += [N("Transpose", [names[k] + "_0"], [names[k]], perm=perms[names[k]]) for k in outs]
            ref_model = make_model(nodes, [vinfo("x", x_shape)], list(model.graph.output), ref_inits,
                                   opset=opset, name=name)
        save_model(model, f"{DIR}/{name}.onnx", random_cases(name, [A(x_shape)]), note=note,
                   ref_model=ref_model)

    rnn("lstm_forward_o14", "LSTM", 14, (4, 2, 3), 5, [0, 1, 2],
        note="Y, Y_h, Y_c; with B")
    rnn("lstm_bidirectional_layout1_o14", "LSTM", 14, (2, 4, 3), 4, [0, 1, 2], init_h=True,
        init_c=True, seq_lens=True, direction="bidirectional", layout=1,
        note="batch-first, constant initial_h/initial_c, sequence_lens all full")
    rnn("lstm_reverse_o7", "LSTM", 7, (3, 1, 4), 3, [1], bias=False, direction="reverse",
        note="Y_h only; no B")
    rnn("gru_forward_lbr0_o14", "GRU", 14, (4, 2, 3), 5, [0, 1], note="linear_before_reset 0")
    rnn("gru_bidirectional_lbr1_layout1_o22", "GRU", 22, (2, 3, 4), 4, [0, 1], init_h=True,
        direction="bidirectional", layout=1, linear_before_reset=1,
        note="batch-first, linear_before_reset 1, constant initial_h")
    rnn("gru_reverse_lbr1_o7", "GRU", 7, (3, 2, 3), 3, [1], bias=False, direction="reverse",
        linear_before_reset=1, note="Y_h only; no B")


def generate():
    gen_conv()
    gen_gemm()
    gen_matmul()
    gen_elementwise()
    gen_activations()
    gen_layernorm()
    gen_softmax()
    gen_pools()
    gen_batchnorm()
    gen_shape_ops()
    gen_misc()
    gen_composites()
    gen_rnn()
