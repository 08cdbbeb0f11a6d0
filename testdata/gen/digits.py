"""Models trained on scikit-learn's bundled `load_digits` (8x8, values 0..16).

Inputs are normalised to [0, 1] by dividing by 16 *outside* the model: every
committed x (val/test splits, samples, cases) is already divided by 16.

Split: stratified 60/20/20 train/val/test with fixed seeds (see `split`).
Models (float top-1 accuracy measured with onnxruntime on the exported file):
  digits_lenet.onnx   torch CNN, torch.onnx.export dynamo exporter, opset 18
  digits_resnet.onnx  torch CNN with BatchNorm (kept), residual Add and
                      GlobalAveragePool; legacy TorchScript exporter, opset 13,
                      no constant folding, dynamic batch dimension "N"
  digits_mlp.onnx     torch MLP with Gemm layers; legacy exporter, opset 11
  digits_skl_mlp.onnx scikit-learn MLPClassifier via skl2onnx (ai.onnx.ml
                      label lookup and ZipMap after the probabilities)
"""

from __future__ import annotations

import numpy as np
import onnx
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from .common import ROOT, run_ort, save_model, session, write_json

DIR = "digits"
SPLIT_SEED = 20240601
TORCH_SEED = 7


def split():
    d = load_digits()
    x = (d.images.astype(np.float32) / 16.0).reshape(-1, 1, 8, 8)
    y = d.target.astype(np.int64)
    x_tr, x_rest, y_tr, y_rest = train_test_split(x, y, test_size=0.4, stratify=y, random_state=SPLIT_SEED)
    x_va, x_te, y_va, y_te = train_test_split(x_rest, y_rest, test_size=0.5, stratify=y_rest,
                                              random_state=SPLIT_SEED)
    return (x_tr, y_tr), (x_va, y_va), (x_te, y_te)


def samples(x_te, y_te):
    """One test image per digit 0..9 (the first of each class in the test split)."""
    out = []
    for label in range(10):
        i = int(np.flatnonzero(y_te == label)[0])
        out.append((label, i, x_te[i : i + 1]))
    return out


# ---------------------------------------------------------------- torch models

def _torch_models():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 3, padding=1)
            self.conv2 = nn.Conv2d(6, 16, 3, padding=1)
            self.fc = nn.Linear(64, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)  # 6x4x4
            x = F.avg_pool2d(F.relu(self.conv2(x)), 2)  # 16x2x2
            x = torch.flatten(x, 1)
            return self.fc(x)

    class ResBlock(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(c)
            self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(c)

        def forward(self, x):
            y = F.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return F.relu(x + y)  # residual Add between two activations

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(1, 16, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(16)
            self.block1 = ResBlock(16)
            self.block2 = ResBlock(16)
            self.fc = nn.Linear(16, 10)

        def forward(self, x):
            x = F.relu(self.bn(self.stem(x)))
            x = self.block1(x)
            x = F.max_pool2d(x, 2)  # 16x4x4
            x = self.block2(x)
            x = F.adaptive_avg_pool2d(x, 1)  # GlobalAveragePool
            x = x.view(x.size(0), -1)  # Shape/Gather/Unsqueeze/Concat/Reshape in the export
            return self.fc(x)

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(64, 32)
            self.fc2 = nn.Linear(32, 10)

        def forward(self, x):
            x = torch.flatten(x, 1)
            return self.fc2(F.relu(self.fc1(x)))

    return LeNet, ResNet, MLP


def _train(model, x_tr, y_tr, epochs: int, lr: float, seed: int):
    import torch

    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    xt, yt = torch.from_numpy(x_tr), torch.from_numpy(y_tr)
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    loss_fn = torch.nn.CrossEntropyLoss()
    model.train()
    for _ in range(epochs):
        perm = torch.randperm(len(xt), generator=g)
        for k in range(0, len(xt), 32):
            idx = perm[k : k + 32]
            opt.zero_grad()
            loss_fn(model(xt[idx]), yt[idx]).backward()
            opt.step()
        sched.step()
    model.eval()
    return model


def _export(model, path, dynamo: bool, opset: int, dynamic_batch: bool = False):
    import torch

    x = torch.zeros(1, 1, 8, 8)
    kw = dict(input_names=["input"], output_names=["logits"], opset_version=opset)
    if dynamo:
        torch.onnx.export(model, (x,), str(path), dynamo=True, external_data=False, verbose=False, **kw)
    else:
        if dynamic_batch:
            kw["dynamic_axes"] = {"input": {0: "N"}, "logits": {0: "N"}}
        torch.onnx.export(model, (x,), str(path), dynamo=False, do_constant_folding=False, **kw)
    m = onnx.load(str(path))
    # The dynamo exporter records Python stack traces (with this checkout's
    # absolute paths) in node metadata: drop them so the file is reproducible.
    for node in m.graph.node:
        keep = [p for p in node.metadata_props if p.key != "pkg.torch.onnx.stack_trace"]
        del node.metadata_props[:]
        node.metadata_props.extend(keep)
    return m


def accuracy(model: onnx.ModelProto, x: np.ndarray, y: np.ndarray, output: str | None = None,
             flatten: bool = False) -> float:
    """Top-1 accuracy of `model` run by onnxruntime one image at a time."""
    sess = session(model.SerializeToString())
    name = sess.get_inputs()[0].name
    correct = 0
    for i in range(len(x)):
        xi = x[i : i + 1].reshape(1, -1) if flatten else x[i : i + 1]
        out = sess.run([output] if output else None, {name: xi})[0]
        pred = int(np.asarray(out).reshape(-1)[0]) if output == "output_label" else int(np.argmax(out))
        correct += pred == int(y[i])
    return correct / len(x)


def generate():
    import torch

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    (x_tr, y_tr), (x_va, y_va), (x_te, y_te) = split()
    base = ROOT / DIR
    for sub, (x, y) in (("val", (x_va, y_va)), ("test", (x_te, y_te))):
        (base / sub).mkdir(parents=True, exist_ok=True)
        np.save(base / sub / "x.npy", x)
        np.save(base / sub / "y.npy", y)
    smp = samples(x_te, y_te)
    (base / "samples").mkdir(parents=True, exist_ok=True)
    labels = {}
    for label, i, xi in smp:
        np.save(base / "samples" / f"digit_{label}.npy", xi)
        labels[f"digit_{label}.npy"] = {"label": label, "test_index": i}
    write_json(base / "samples" / "labels.json", labels)
    cases = [[xi] for _, _, xi in smp]

    results = {}
    LeNet, ResNet, MLP = _torch_models()
    specs = [
        ("digits_lenet", LeNet, dict(epochs=60, lr=1e-2), dict(dynamo=True, opset=18),
         "LeNet-style CNN; torch.onnx.export (dynamo exporter), opset 18"),
        ("digits_resnet", ResNet, dict(epochs=30, lr=3e-3), dict(dynamo=False, opset=13, dynamic_batch=True),
         "BatchNorm (not folded), residual Add, GlobalAveragePool, x.view(x.size(0), -1) shape subgraph; "
         "legacy TorchScript exporter, opset 13, do_constant_folding=False, dynamic batch N"),
        ("digits_mlp", MLP, dict(epochs=60, lr=3e-3), dict(dynamo=False, opset=11),
         "MLP 64-32-10 with Gemm; legacy TorchScript exporter, opset 11"),
    ]
    for i, (name, cls, train_kw, export_kw, note) in enumerate(specs):
        torch.manual_seed(TORCH_SEED + i)
        model = _train(cls(), x_tr, y_tr, seed=TORCH_SEED + i, **train_kw)
        onnx_model = _export(model, base / f"{name}.onnx", **export_kw)
        # torch's own eval output must agree with onnxruntime's.
        with torch.no_grad():
            ref = model(torch.from_numpy(x_te[:16])).numpy()
        got = np.concatenate([run_ort(onnx_model, [x_te[k : k + 1]])[0] for k in range(16)])
        assert np.allclose(ref, got, rtol=1e-4, atol=1e-5), name
        acc = {"val": accuracy(onnx_model, x_va, y_va), "test": accuracy(onnx_model, x_te, y_te)}
        results[name] = {**acc, "output": "logits", "input": "input", "input_shape": [1, 1, 8, 8]}
        save_model(onnx_model, f"{DIR}/{name}.onnx", cases, note=note + f"; float top-1 val {acc['val']:.4f} test {acc['test']:.4f}",
                   extra={"accuracy": acc})

    results["digits_skl_mlp"] = _sklearn(base, x_tr, y_tr, x_va, y_va, x_te, y_te, smp)
    write_json(base / "accuracy.json", {
        "note": "float top-1 accuracy of each ONNX model run by onnxruntime; inputs x/16 in [0,1]",
        "split": {"seed": SPLIT_SEED, "train": len(y_tr), "val": len(y_va), "test": len(y_te)},
        "models": results,
    })
    for name, r in results.items():
        print(f"   {name}: val {r['val']:.4f} test {r['test']:.4f}")


def _sklearn(base, x_tr, y_tr, x_va, y_va, x_te, y_te, smp):
    from skl2onnx import to_onnx
    from sklearn.neural_network import MLPClassifier

    clf = MLPClassifier(hidden_layer_sizes=(32,), activation="relu", max_iter=1000, random_state=0)
    clf.fit(x_tr.reshape(len(x_tr), -1), y_tr)
    model = to_onnx(clf, x_tr[:1].reshape(1, -1), target_opset={"": 17, "ai.onnx.ml": 3})
    # The graph's probabilities tensor before ZipMap: the one to compile.
    zipmap = next(n for n in model.graph.node if n.op_type == "ZipMap")
    prob_name = zipmap.input[0]
    softmax = next(n for n in model.graph.node if n.op_type == "Softmax" and n.output[0] == prob_name)
    logits_name = softmax.input[0]
    onnx.checker.check_model(model, full_check=True)
    rel = f"{DIR}/digits_skl_mlp.onnx"
    onnx.save(model, ROOT / rel)
    acc = {
        "val": accuracy(model, x_va, y_va, output="output_label", flatten=True),
        "test": accuracy(model, x_te, y_te, output="output_label", flatten=True),
    }
    sk_test = float((clf.predict(x_te.reshape(len(x_te), -1)) == y_te).mean())
    assert abs(sk_test - acc["test"]) < 1e-9, (sk_test, acc)
    # Cases: outputs with ZipMap's list of maps rewritten as a float32 [1, 10]
    # array in class order, plus the pre-ZipMap tensor as named_<name>.npy.
    sess = session(model.SerializeToString())
    in_name = sess.get_inputs()[0].name
    out_names = [o.name for o in model.graph.output]
    cases_dir = (ROOT / rel).with_suffix(".cases")
    for k, (_, _, xi) in enumerate(smp):
        feed = xi.reshape(1, -1)
        outs = sess.run(None, {in_name: feed})
        prob = session_output(model, feed, prob_name)
        d = cases_dir / str(k)
        d.mkdir(parents=True, exist_ok=True)
        np.save(d / "input_0.npy", feed)
        for j, o in enumerate(outs):
            if isinstance(o, list):
                o = np.asarray([[m[c] for c in sorted(m)] for m in o], dtype=np.float32)
            np.save(d / f"output_{j}.npy", np.asarray(o))
        np.save(d / f"named_{prob_name}.npy", prob.astype(np.float32))
        assert np.allclose(np.load(d / "output_1.npy"), prob)
    from .common import MANIFEST

    MANIFEST[rel] = {
        "path": rel,
        "ir_version": model.ir_version,
        "opset": {o.domain or "ai.onnx": o.version for o in model.opset_import},
        "inputs": [{"name": in_name, "dtype": "float32", "shape": [1, 64]}],
        "outputs": [
            {"name": out_names[0], "dtype": "int64", "shape": [1]},
            {"name": out_names[1], "dtype": "float32", "shape": [1, 10],
             "stored_as": "ZipMap's seq(map(int64, float)) as a float32 [1, 10] array in class order"},
        ],
        "compile_output": {"name": prob_name, "dtype": "float32", "shape": [1, 10],
                           "file": f"named_{prob_name}.npy", "logits": logits_name},
        "cases": len(smp),
        "rtol": 1e-4,
        "atol": 1e-5,
        "accuracy": acc,
        "note": f"scikit-learn MLPClassifier(32) via skl2onnx; input is x.reshape(1, 64); compile with "
                f"--output {prob_name} (Softmax output, before ai.onnx.ml ZipMap/label lookup) or "
                f"--output {logits_name} (logits before the Softmax); float top-1 val "
                f"{acc['val']:.4f} test {acc['test']:.4f}",
    }
    return {**acc, "output": prob_name, "input": in_name, "input_shape": [1, 64]}


def session_output(model: onnx.ModelProto, feed: np.ndarray, name: str) -> np.ndarray:
    """Value of intermediate tensor `name` (exposed as an extra graph output)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.output[:]
    m.graph.output.extend([onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None)])
    sess = session(m.SerializeToString())
    return np.asarray(sess.run([name], {sess.get_inputs()[0].name: feed})[0])
