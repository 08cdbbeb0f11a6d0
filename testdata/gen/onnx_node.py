"""Vendored ONNX backend node tests.

The test-case definitions come from the installed `onnx` package
(onnx/backend/test/case/node/*.py, Copyright (c) ONNX Project Contributors,
Apache-2.0). Running them yields a one-node model and reference data per test.
We keep the tests listed in testdata/onnx-node-tests.txt (the allow-list the
frontend must pass) and rewrite each so that it fits sci's model shape:

* graph inputs after the first `ACTIVATIONS[test]` (default 1) become
  initializers holding the test's data (weights, biases, shapes, pads, ...);
* an opset above 21 (the frontend's maximum) is lowered to 21 when the op's
  opset-21 schema accepts the node (the later versions only add types);
* reference outputs are recomputed by onnxruntime (CPU) and checked against the
  numpy reference outputs shipped with the test (rtol 1e-3, atol 1e-6).
"""

from __future__ import annotations

import warnings

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .common import MAX_OPSET, ROOT, ir_for_opset, save_model

DIR = "onnx-node"
ALLOW_LIST = ROOT / "onnx-node-tests.txt"

# Tests whose first N inputs stay graph inputs (activations); default 1.
ACTIVATIONS = {
    "test_add": 2, "test_add_bcast": 2, "test_sub": 2, "test_sub_bcast": 2, "test_sub_example": 2,
    "test_sum_example": 3, "test_sum_two_inputs": 2,
}
for _t in ("1d_axis_0", "1d_axis_negative_1", "2d_axis_0", "2d_axis_1", "2d_axis_negative_1",
           "2d_axis_negative_2", "3d_axis_0", "3d_axis_1", "3d_axis_2", "3d_axis_negative_1",
           "3d_axis_negative_2", "3d_axis_negative_3"):
    ACTIVATIONS["test_concat_" + _t] = 2


def allow_list() -> list[str]:
    names = []
    for line in ALLOW_LIST.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(line)
    return names


def _as_array(v) -> np.ndarray:
    return numpy_helper.to_array(v) if isinstance(v, onnx.TensorProto) else np.asarray(v)


def convert(tc) -> tuple[onnx.ModelProto, list[np.ndarray], list[np.ndarray]]:
    model = onnx.ModelProto()
    model.CopyFrom(tc.model)
    inputs, expected = tc.data_sets[0]
    inputs = [_as_array(v) for v in inputs]
    expected = [_as_array(v) for v in expected]
    nact = ACTIVATIONS.get(tc.name, 1)
    g = model.graph
    assert len(g.input) == len(inputs), tc.name
    keep = list(g.input[:nact])
    for vi, arr in zip(list(g.input[nact:]), inputs[nact:]):
        g.initializer.append(numpy_helper.from_array(arr, name=vi.name))
    del g.input[:]
    g.input.extend(keep)
    for op in model.opset_import:
        if op.domain in ("", "ai.onnx") and op.version > MAX_OPSET:
            op.version = MAX_OPSET
            model.ir_version = ir_for_opset(MAX_OPSET)
    model.producer_name = "onnx-backend-test (sci testdata)"
    return model, inputs[:nact], expected


def generate():
    from onnx.backend.test.case.node import collect_testcases

    wanted = allow_list()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        cases = {tc.name: tc for tc in collect_testcases()}
    missing = [n for n in wanted if n not in cases]
    assert not missing, f"not in this onnx version: {missing}"
    for name in wanted:
        tc = cases[name]
        model, feeds, expected = convert(tc)
        outs = save_model(model, f"{DIR}/{name}.onnx", [feeds],
                          note=f"ONNX backend node test {name} (Apache-2.0)", rtol=1e-4, atol=1e-5)[0]
        for o, e in zip(outs, expected):
            assert o.shape == e.shape and np.allclose(o, e, rtol=1e-3, atol=1e-6), (name, o, e)
