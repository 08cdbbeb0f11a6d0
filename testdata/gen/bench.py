"""Cost-benchmark networks with random (He-initialised) weights.

minionn_cifar.onnx  MiniONN's CIFAR-10 network (Liu et al., CCS 2017, Fig. 13;
                    CrypTFlow2 Table 5): 7 convolutions, 2 mean pools, ReLUs,
                    one fully connected 10-way layer. Input 1x3x32x32.
squeezenet.onnx     SqueezeNet 1.1 for ImageNet (Iandola et al. 2016, the v1.1
                    of the reference implementation; CrypTFlow2 Table 7): 26
                    convolutions incl. 8 fire modules with Concat, 3 MaxPools,
                    final 13x13 average pool, 1000 classes. Input 1x3x224x224.

Weights: W ~ N(0, 2 / fan_in) (He), biases ~ N(0, 0.01^2); then, in graph
order, each Conv/Gemm's W and b are divided by the RMS of its output on the
reference input (layer-sequential unit-variance scaling, as in LSUV init), so
every pre-activation has RMS 1 and no value grows through the depth. The
largest intermediate magnitude is recorded in the manifest
(`max_abs_intermediate`). Inputs: uniform [0,1) images
normalised with per-channel mean/std outside the model (CIFAR-10 resp.
ImageNet statistics), seeded.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from . import common
from .common import f32, init, make_model, run_ort, save_model, vinfo

DIR = "bench"


class Builder:
    """Tiny graph builder: tracks the current tensor and collects nodes and initializers."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []
        self.count = {}

    def _name(self, kind: str) -> str:
        k = self.count.get(kind, 0)
        self.count[kind] = k + 1
        return f"{kind}{k}"

    def conv(self, x: str, cin: int, cout: int, k: int, stride: int = 1, pad: int = 0, name=None) -> str:
        name = name or self._name("conv")
        W = f32(self.rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k)))
        B = f32(self.rng.standard_normal(cout) * 0.01)
        self.inits += [init(name + ".weight", W), init(name + ".bias", B)]
        self.nodes.append(helper.make_node(
            "Conv", [x, name + ".weight", name + ".bias"], [name], name=name,
            kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4))
        return name

    def op(self, op: str, inputs, kind: str | None = None, **attrs) -> str:
        name = self._name(kind or op.lower())
        self.nodes.append(helper.make_node(op, list(inputs), [name], name=name, **attrs))
        return name

    def relu(self, x: str) -> str:
        return self.op("Relu", [x])

    def gemm(self, x: str, fin: int, fout: int, name: str) -> str:
        W = f32(self.rng.standard_normal((fout, fin)) * np.sqrt(2.0 / fin))
        B = f32(self.rng.standard_normal(fout) * 0.01)
        self.inits += [init(name + ".weight", W), init(name + ".bias", B)]
        self.nodes.append(helper.make_node("Gemm", [x, name + ".weight", name + ".bias"], [name], name=name,
                                           transB=1))
        return name


def minionn_cifar() -> onnx.ModelProto:
    b = Builder(seed=2017)
    x = "input"
    x = b.relu(b.conv(x, 3, 64, 3, pad=1))
    x = b.relu(b.conv(x, 64, 64, 3, pad=1))
    x = b.op("AveragePool", [x], kernel_shape=[2, 2], strides=[2, 2])  # 16x16
    x = b.relu(b.conv(x, 64, 64, 3, pad=1))
    x = b.relu(b.conv(x, 64, 64, 3, pad=1))
    x = b.op("AveragePool", [x], kernel_shape=[2, 2], strides=[2, 2])  # 8x8
    x = b.relu(b.conv(x, 64, 64, 3, pad=1))
    x = b.relu(b.conv(x, 64, 64, 1))
    x = b.relu(b.conv(x, 64, 16, 1))
    x = b.op("Flatten", [x], axis=1)  # 16*8*8 = 1024
    x = b.gemm(x, 1024, 10, name="fc")
    b.nodes.append(helper.make_node("Identity", [x], ["logits"], name="output"))
    return make_model(b.nodes, [vinfo("input", (1, 3, 32, 32))], [vinfo("logits", (1, 10))], b.inits,
                      opset=13, name="minionn_cifar")


def squeezenet() -> onnx.ModelProto:
    b = Builder(seed=2016)

    def fire(x, cin, s, e1, e3, idx):
        sq = b.relu(b.conv(x, cin, s, 1, name=f"fire{idx}.squeeze"))
        a = b.relu(b.conv(sq, s, e1, 1, name=f"fire{idx}.expand1x1"))
        c = b.relu(b.conv(sq, s, e3, 3, pad=1, name=f"fire{idx}.expand3x3"))
        return b.op("Concat", [a, c], axis=1)

    def maxpool(x):
        return b.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)

    x = b.relu(b.conv("input", 3, 64, 3, stride=2, name="conv1"))  # 111x111
    x = maxpool(x)  # 55x55
    x = fire(x, 64, 16, 64, 64, 2)
    x = fire(x, 128, 16, 64, 64, 3)
    x = maxpool(x)  # 27x27
    x = fire(x, 128, 32, 128, 128, 4)
    x = fire(x, 256, 32, 128, 128, 5)
    x = maxpool(x)  # 13x13
    x = fire(x, 256, 48, 192, 192, 6)
    x = fire(x, 384, 48, 192, 192, 7)
    x = fire(x, 384, 64, 256, 256, 8)
    x = fire(x, 512, 64, 256, 256, 9)
    x = b.op("Dropout", [x])  # inference: identity
    x = b.relu(b.conv(x, 512, 1000, 1, name="conv10"))
    x = b.op("AveragePool", [x], kernel_shape=[13, 13])  # 1x1
    b.nodes.append(helper.make_node("Flatten", [x], ["logits"], name="flatten", axis=1))
    return make_model(b.nodes, [vinfo("input", (1, 3, 224, 224))], [vinfo("logits", (1, 1000))], b.inits,
                      opset=13, name="squeezenet1_1")


def resnet50() -> onnx.ModelProto:
    """ResNet-50 as torchvision 0.29.2 builds it (v1.5: the stride of a down-sampling
    bottleneck on its 3x3 convolution; a 1x1 projection shortcut on each stage's first
    block), written with the graph builder instead of exported from torch (torch is
    several GB and only needed for other groups). BatchNorm is left out: with random
    weights it is an affine map per channel that sci folds into the convolution before
    it, so neither the cost nor the protocols change."""
    b = Builder(seed=2015)

    def bottleneck(x, cin, width, stride, idx):
        out = width * 4
        y = b.relu(b.conv(x, cin, width, 1, name=f"{idx}.conv1"))
        y = b.relu(b.conv(y, width, width, 3, stride=stride, pad=1, name=f"{idx}.conv2"))
        y = b.conv(y, width, out, 1, name=f"{idx}.conv3")
        short = x
        if stride != 1 or cin != out:
            short = b.conv(x, cin, out, 1, stride=stride, name=f"{idx}.downsample")
        return b.relu(b.op("Add", [y, short]))

    x = b.relu(b.conv("input", 3, 64, 7, stride=2, pad=3, name="conv1"))  # 112x112
    x = b.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])  # 56x56
    cin = 64
    for stage, (width, blocks, stride) in enumerate(((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)), 1):
        for k in range(blocks):
            x = bottleneck(x, cin, width, stride if k == 0 else 1, f"layer{stage}.{k}")
            cin = width * 4
    x = b.op("GlobalAveragePool", [x])
    x = b.op("Flatten", [x], axis=1)
    x = b.gemm(x, 2048, 1000, name="fc")
    b.nodes.append(helper.make_node("Identity", [x], ["logits"], name="output"))
    return make_model(b.nodes, [vinfo("input", (1, 3, 224, 224))], [vinfo("logits", (1, 1000))], b.inits,
                      opset=13, name="resnet50")


def _image(seed: int, shape, mean, std) -> np.ndarray:
    img = np.random.default_rng(seed).random(shape, dtype=np.float64)
    m = np.asarray(mean).reshape(1, -1, 1, 1)
    s = np.asarray(std).reshape(1, -1, 1, 1)
    return f32((img - m) / s)


def unit_rms(model: onnx.ModelProto, x: np.ndarray) -> onnx.ModelProto:
    """Rescale each Conv/Gemm (in graph order) so its output has RMS 1 on `x`."""
    inits = {t.name: t for t in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type not in ("Conv", "Gemm"):
            continue
        probe = onnx.ModelProto()
        probe.CopyFrom(model)
        del probe.graph.output[:]
        probe.graph.output.extend([helper.make_tensor_value_info(node.output[0], onnx.TensorProto.FLOAT, None)])
        out = run_ort(probe, [x])[0]
        rms = float(np.sqrt(np.mean(np.square(out, dtype=np.float64))))
        for name in node.input[1:]:
            t = inits[name]
            t.CopyFrom(init(name, f32(numpy_helper.to_array(t) / rms)))
    return model


def max_abs_intermediate(model: onnx.ModelProto, x: np.ndarray) -> float:
    """Largest |value| of any node output (run with every node output exposed)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.output[:]
    for n in m.graph.node:
        m.graph.output.extend([helper.make_tensor_value_info(n.output[0], onnx.TensorProto.FLOAT, None)])
    return float(max(np.abs(o).max() for o in run_ort(m, [x])))


def _generate(models, directory: str, bound: float) -> None:
    for name, build, shape, mean, std, seed, note in models:
        x = _image(seed, shape, mean, std)
        model = unit_rms(build(), x)
        peak = max_abs_intermediate(model, x)
        assert peak < bound, (name, peak)
        nconv = sum(n.op_type == "Conv" for n in model.graph.node)
        params = sum(int(np.prod(t.dims)) for t in model.graph.initializer)
        save_model(model, f"{directory}/{name}.onnx", [[x]], note=note,
                   extra={"max_abs_intermediate": round(peak, 4), "convolutions": nconv, "parameters": params})
        print(f"   {name}: {nconv} convs, {params} parameters, max |intermediate| {peak:.3f}")


def generate_large():
    """`bench-large/` (git-ignored: ~100 MB): ResNet-50 with random weights, input
    1x3x224x224, for the network-profile benchmarks (scripts/bench-net.sh). Its
    manifest entry goes to `bench-large/index.json`, not to testdata/manifest.json."""
    # The identity shortcuts add up unit-RMS residuals, so values grow with the depth;
    # at l = 37, s = 12 products at scale 24 have room up to 2^12.
    _generate((("resnet50", resnet50, (1, 3, 224, 224), (0.485, 0.456, 0.406), (0.229, 0.224, 0.225), 50,
                "ResNet-50 (torchvision v1.5 layout, 53 convs, BatchNorm folded away), random He weights"),),
              "bench-large", 256)
    index = {k: common.MANIFEST.pop(k) for k in list(common.MANIFEST) if k.startswith("bench-large/")}
    common.write_json(common.ROOT / "bench-large/index.json", {"models": index})


def generate():
    _generate((
        ("minionn_cifar", minionn_cifar, (1, 3, 32, 32), (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616), 32,
         "MiniONN CIFAR-10 net: conv64-conv64-avgpool-conv64-conv64-avgpool-conv64-conv64(1x1)-conv16(1x1)-FC10, "
         "random He weights"),
        ("squeezenet", squeezenet, (1, 3, 224, 224), (0.485, 0.456, 0.406), (0.229, 0.224, 0.225), 224,
         "SqueezeNet 1.1 (26 convs, 8 fire modules, 3 ceil-mode MaxPools, 13x13 AveragePool), random He weights"),
    ), DIR, 16)  # products at scale 24 stay far below 2^31
