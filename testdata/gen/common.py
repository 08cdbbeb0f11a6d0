"""Shared helpers: build, check, run and save test models with their cases.

Layout written for a model ``DIR/NAME.onnx`` (see testdata/README.md):

    DIR/NAME.onnx
    DIR/NAME.cases/<k>/input_<i>.npy    i-th runtime graph input (graph inputs
                                        that are not initializers, graph order)
    DIR/NAME.cases/<k>/output_<j>.npy   j-th graph output, from onnxruntime

Every saved model is also recorded in testdata/manifest.json (names, shapes,
dtypes, number of cases) by generate.py.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parent.parent  # testdata/

# Highest opset and IR version we emit for hand-built models: the frontend
# supports opsets 6..21 (IR 10 is the IR version of opset 21).
MAX_OPSET = 21

# Models recorded by save_model during this run: relative path -> entry.
MANIFEST: dict[str, dict] = {}


def ir_for_opset(opset: int) -> int:
    """Smallest IR version that allows `opset` (and >= 4, so initializers need
    not be listed as graph inputs)."""
    ir = None
    for _rel, ir_v, ai_onnx, _ml, *_ in helper.VERSION_TABLE:
        if ai_onnx >= opset:
            ir = ir_v
            break
    assert ir is not None, f"unknown opset {opset}"
    return max(ir, 4)


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def f32(a) -> np.ndarray:
    return np.asarray(a, dtype=np.float32)


def init(name: str, arr) -> TensorProto:
    """An initializer from a numpy array (dtype kept)."""
    return numpy_helper.from_array(np.asarray(arr), name=name)


def vinfo(name: str, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, list(shape) if shape is not None else None)


def make_model(
    nodes,
    inputs,
    outputs,
    initializers=(),
    opset: int = 13,
    name: str = "g",
    ir_version: int | None = None,
    extra_opsets=(),
    value_info=(),
) -> onnx.ModelProto:
    graph = helper.make_graph(
        list(nodes), name, list(inputs), list(outputs), initializer=list(initializers),
        value_info=list(value_info),
    )
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    model = helper.make_model(
        graph,
        opset_imports=opsets,
        producer_name="sci-testdata",
        ir_version=ir_version if ir_version is not None else ir_for_opset(opset),
    )
    return model


def runtime_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    inits = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def session(model_bytes: bytes) -> ort.InferenceSession:
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    # Run the graph as written: no fusions that could change rounding.
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    return ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])


def run_ort(model: onnx.ModelProto, feeds: list[np.ndarray], output_names=None) -> list[np.ndarray]:
    sess = session(model.SerializeToString())
    names = [i.name for i in runtime_inputs(model)]
    assert len(names) == len(feeds), (names, [f.shape for f in feeds])
    return sess.run(output_names, dict(zip(names, feeds)))


def _dims(vi: onnx.ValueInfoProto):
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in t.shape.dim]


def save_model(
    model: onnx.ModelProto,
    rel: str,
    cases: list[list[np.ndarray]],
    note: str = "",
    check: bool = True,
    rtol: float = 1e-4,
    atol: float = 1e-5,
    extra: dict | None = None,
    ref_model: onnx.ModelProto | None = None,
) -> list[list[np.ndarray]]:
    """Check `model`, save it at testdata/`rel`, run every case through
    onnxruntime and save inputs/outputs. Returns the outputs per case.

    `ref_model`, when given, is a semantically equivalent model that
    onnxruntime runs instead (for old opsets it has no kernel for)."""
    if check:
        onnx.checker.check_model(model, full_check=True)
    path = ROOT / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, path)
    cases_dir = path.with_suffix(".cases")
    if cases_dir.exists():
        shutil.rmtree(cases_dir)
    all_outs = []
    rt_inputs = runtime_inputs(model)
    for k, feeds in enumerate(cases):
        outs = run_ort(ref_model if ref_model is not None else model, feeds)
        d = cases_dir / str(k)
        d.mkdir(parents=True)
        for i, a in enumerate(feeds):
            np.save(d / f"input_{i}.npy", a)
        for j, o in enumerate(outs):
            o = np.asarray(o)
            if o.dtype == np.float64:
                o = o.astype(np.float32)
            assert np.all(np.isfinite(o)) if o.dtype.kind == "f" else True, rel
            np.save(d / f"output_{j}.npy", o)
        all_outs.append(outs)
    opset = {o.domain or "ai.onnx": o.version for o in model.opset_import}
    entry = {
        "path": rel,
        "ir_version": model.ir_version,
        "opset": opset,
        "inputs": [
            {"name": i.name, "dtype": helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type).name,
             "shape": _dims(i)}
            for i in rt_inputs
        ],
        "outputs": [
            {"name": o.name, "dtype": str(np.asarray(all_outs[0][j]).dtype) if all_outs else None,
             "shape": list(np.asarray(all_outs[0][j]).shape) if all_outs else _dims(o)}
            for j, o in enumerate(model.graph.output)
        ],
        "cases": len(cases),
        "rtol": rtol,
        "atol": atol,
        "note": note,
    }
    if extra:
        entry.update(extra)
    if ref_model is not None:
        onnx.checker.check_model(ref_model, full_check=True)
        entry["reference"] = "onnxruntime on an equivalent model at opset %d (no kernel for this opset)" % max(
            o.version for o in ref_model.opset_import if o.domain in ("", "ai.onnx"))
    MANIFEST[rel] = entry
    return all_outs


def write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")
