"""Malformed files and unsupported models for error tests.

Written to testdata/errors/ with errors/errors.json describing, per file,
what it is and the error the frontend must report (never a panic). These are
not in manifest.json (they have no reference cases).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from .common import ROOT, f32, init, ir_for_opset, make_model, run_ort, vinfo, write_json

DIR = "errors"


def _w(seed, shape, scale=0.3):
    return f32(np.random.default_rng(seed).standard_normal(shape) * scale)


def generate():
    base = ROOT / DIR
    base.mkdir(parents=True, exist_ok=True)
    N = helper.make_node
    table = {}

    def model_file(name, model, expect, node=None, op=None, check=True, runs=True, **more):
        if check:
            onnx.checker.check_model(model, full_check=True)
        if runs:  # a valid model that onnxruntime runs: only sci rejects it
            feeds = [np.zeros([d.dim_value for d in i.type.tensor_type.shape.dim],
                              helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type))
                     for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
            run_ort(model, feeds)
        onnx.save(model, base / name)
        table[name] = {"expect": expect, "node": node, "op_type": op, "valid_onnx": check, **more}

    # 1. Bytes that are not a model.
    lenet = (ROOT / "digits" / "digits_lenet.onnx").read_bytes()
    trunc = lenet[: len(lenet) // 2]
    (base / "truncated.onnx").write_bytes(trunc)
    _assert_unparsable(trunc)
    table["truncated.onnx"] = {
        "expect": "parse error (truncated protobuf): the first half of digits/digits_lenet.onnx",
        "node": None, "op_type": None, "valid_onnx": False}

    rnd = np.random.default_rng(1234).integers(0, 256, size=4096, dtype=np.uint8).tobytes()
    _assert_unparsable(rnd)
    (base / "random_bytes.onnx").write_bytes(rnd)
    table["random_bytes.onnx"] = {"expect": "parse error: 4096 random bytes (seed 1234)",
                                  "node": None, "op_type": None, "valid_onnx": False}

    (base / "empty.onnx").write_bytes(b"")
    table["empty.onnx"] = {
        "expect": "error: empty file (0 bytes). Note: protobuf decodes it as an empty ModelProto, "
                  "so the error must come from the missing graph / opset_import, not from the decoder",
        "node": None, "op_type": None, "valid_onnx": False}

    (base / "not_onnx.txt.onnx").write_bytes(b"this is not an ONNX model\n")
    table["not_onnx.txt.onnx"] = {"expect": "parse error: a line of ASCII text", "node": None,
                                  "op_type": None, "valid_onnx": False}

    # 2. Valid ONNX that sci does not support.
    x = vinfo("x", (1, 1, 4, 4))
    conv_inits = [init("W", _w(1, (2, 1, 3, 3))), init("B", _w(2, (2,)))]
    gemm_inits = [init("W2", _w(3, (3, 8))), init("B2", _w(4, (3,)))]
    mid = lambda op_node: [
        N("Conv", ["x", "W", "B"], ["c"], name="conv0", pads=[1, 1, 1, 1]),
        op_node,
        N("MaxPool", ["s"], ["p"], name="pool0", kernel_shape=[2, 2], strides=[2, 2]),
        N("Flatten", ["p"], ["f"], name="flatten0"),
        N("Gemm", ["f", "W2", "B2"], ["out"], name="gemm0", transB=1),
    ]
    out = [vinfo("out", (1, 3))]
    model_file("unsupported_op_sin.onnx",
               make_model(mid(N("Sin", ["c"], ["s"], name="sin_mid")), [x], out,
                          conv_inits + gemm_inits, opset=13),
               "unsupported op: node `sin_mid`, op Sin (between Conv and MaxPool)",
               node="sin_mid", op="Sin")

    det_inits = [init("Wd", _w(5, (9, 9))), init("shape", np.asarray([1, 3, 3], np.int64))]
    model_file("unsupported_op_det.onnx",
               make_model([
                   N("MatMul", ["x", "Wd"], ["m"], name="matmul0"),
                   N("Reshape", ["m", "shape"], ["m3"], name="reshape0"),
                   N("Det", ["m3"], ["out"], name="det0"),
               ], [vinfo("x", (1, 9))], [vinfo("out", (1,))], det_inits, opset=14),
               "unsupported op: node `det0`, op Det", node="det0", op="Det")

    model_file("unsupported_dtype_int8_weights.onnx",
               make_model([
                   N("Cast", ["Wq"], ["Wf"], name="cast_int8", to=TensorProto.FLOAT),
                   N("MatMul", ["x", "Wf"], ["out"], name="matmul0"),
               ], [vinfo("x", (1, 4))], [vinfo("out", (1, 3))],
                   [init("Wq", np.random.default_rng(8).integers(-128, 128, (4, 3)).astype(np.int8))], opset=13),
               "unsupported dtype: initializer `Wq` is int8 (Cast int8→float in node `cast_int8`)",
               node="cast_int8", op="Cast", tensor="Wq", dtype="int8")

    model_file("unsupported_dtype_float64.onnx",
               make_model([N("MatMul", ["x", "W"], ["out"], name="matmul_f64")],
                          [vinfo("x", (1, 4), TensorProto.DOUBLE)], [vinfo("out", (1, 3), TensorProto.DOUBLE)],
                          [init("W", _w(9, (4, 3)).astype(np.float64))], opset=13),
               "unsupported dtype: input `x` and weight `W` are float64 (node `matmul_f64`)",
               node="matmul_f64", op="MatMul", tensor="x", dtype="float64")

    model_file("unsupported_attr_pad_reflect.onnx",
               make_model([N("Pad", ["x", "pads"], ["out"], name="pad_reflect", mode="reflect")],
                          [x], [vinfo("out", (1, 1, 6, 6))],
                          [init("pads", np.asarray([0, 0, 1, 1, 0, 0, 1, 1], np.int64))], opset=13),
               "unsupported attribute value: node `pad_reflect`, op Pad, mode=reflect (only constant)",
               node="pad_reflect", op="Pad", attribute="mode")

    model_file("unsupported_attr_clip_bounds.onnx",
               make_model([N("Clip", ["x", "lo", "hi"], ["out"], name="clip_pm1")], [x], [vinfo("out", (1, 1, 4, 4))],
                          [init("lo", f32(-1.0)), init("hi", f32(1.0))], opset=13),
               "unsupported attribute value: node `clip_pm1`, op Clip with min=-1, max=1 (only min=0, max=6 "
               "or min=0 alone)", node="clip_pm1", op="Clip", attribute="min")

    # A Softmax inside a graph runs (the IR's softmax); a LogSoftmax only as the last op.
    model_file("unsupported_logsoftmax_not_last.onnx",
               make_model([
                   N("Gemm", ["x", "Wa"], ["h"], name="gemm0", transB=1),
                   N("LogSoftmax", ["h"], ["s"], name="logsoftmax_mid", axis=1),
                   N("Gemm", ["s", "Wb"], ["out"], name="gemm1", transB=1),
               ], [vinfo("x", (1, 4))], [vinfo("out", (1, 2))],
                   [init("Wa", _w(10, (5, 4))), init("Wb", _w(11, (2, 5)))], opset=13),
               "unsupported: node `logsoftmax_mid`, op LogSoftmax is not the last op (its output feeds Gemm)",
               node="logsoftmax_mid", op="LogSoftmax")

    model_file("unsupported_domain_custom_op.onnx",
               make_model([N("Swish", ["x"], ["out"], name="custom0", domain="com.example")], [x],
                          [vinfo("out", (1, 1, 4, 4))], [], opset=13, extra_opsets=[("com.example", 1)]),
               "unsupported op: node `custom0`, op Swish in domain com.example",
               node="custom0", op="Swish", check=False, runs=False)

    model_file("unsupported_opset_5.onnx",
               make_model([N("Relu", ["x"], ["out"], name="relu0")], [x], [vinfo("out", (1, 1, 4, 4))], [], opset=5),
               "unsupported opset: ai.onnx opset 5 (supported 6..21)", node=None, op=None, runs=False, opset=5)

    # One above the newest opset of the pinned onnx (28), which its checker cannot know.
    model_file("unsupported_opset_29.onnx",
               make_model([N("Relu", ["x"], ["out"], name="relu0")], [x], [vinfo("out", (1, 1, 4, 4))], [],
                          opset=29, ir_version=ir_for_opset(28)),
               "unsupported opset: ai.onnx opset 29 (supported 1..28)", node=None, op=None, check=False,
               runs=False, opset=29)

    # 3. Protobuf-valid but inconsistent graphs.
    bad = make_model([N("Relu", ["nowhere"], ["out"], name="relu_dangling")], [x],
                     [vinfo("out", (1, 1, 4, 4))], [], opset=13)
    model_file("invalid_dangling_input.onnx", bad,
               "invalid graph: node `relu_dangling` reads `nowhere`, which no input, initializer or node defines",
               node="relu_dangling", op="Relu", check=False, runs=False)

    badshape = make_model([N("Conv", ["x", "W"], ["out"], name="conv_badw")], [x], [vinfo("out", None)],
                          [init("W", _w(12, (2, 3, 3, 3)))], opset=13)
    model_file("invalid_conv_channels.onnx", badshape,
               "shape error: node `conv_badw` (Conv) weight W has 3 input channels but x has 1",
               node="conv_badw", op="Conv", check=False, runs=False)

    badattr = make_model([N("MaxPool", ["x"], ["out"], name="pool_nokernel")], [x], [vinfo("out", None)], [],
                         opset=13)
    model_file("invalid_missing_attribute.onnx", badattr,
               "missing attribute: node `pool_nokernel` (MaxPool) has no kernel_shape",
               node="pool_nokernel", op="MaxPool", attribute="kernel_shape", check=False, runs=False)

    write_json(base / "errors.json", table)


def _assert_unparsable(data: bytes):
    m = onnx.ModelProto()
    try:
        m.ParseFromString(data)
    except Exception:
        return
    raise AssertionError("expected a protobuf parse error")
