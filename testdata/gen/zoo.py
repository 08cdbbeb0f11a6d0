"""The models people deploy today (issue 25 item 4), with random weights.

Two groups share this module:

* ``zoo`` (committed, ``zoo/``): reduced versions of MobileNetV3, EfficientNet,
  RegNetY, ConvNeXt, a vision transformer, a transformer text encoder over
  given token embeddings, a U-Net with transposed convolutions and
  upsampling, an LSTM and a GRU classifier and a ResNet with LeakyReLU, each
  exported by both PyTorch exporters (legacy TorchScript ``dynamo=False`` at
  opset 17; dynamo at its default opset with an external weight file).
  Reduced = a few blocks at small width and 32x32 inputs (the U-Net 16x16,
  sequences of 8 to 10 steps), so the whole directory stays well under 3 MB while keeping each
  family's ops (squeeze-excitation, SiLU/HardSwish, grouped convolutions,
  LayerNorm + GELU, attention, ConvTranspose + Resize, LSTM/GRU, LeakyRelu).
* ``zoo-large`` (git-ignored, ``zoo-large/``): the full-size torchvision
  networks of the same families (224x224), both exporters.

Each directory has an ``index.json`` (not ``manifest.json``: most of these
models do not compile yet, and the manifest's tests expect every model to):
per model the manifest-style entry of ``exporters.save_cases`` plus

* ``ops``: the op inventory, op type -> number of nodes (``domain.op`` for
  other domains), and ``exporter``;
* ``probes``: for every node whose op has a lowering that onnxruntime has not
  checked elsewhere (ConvTranspose, Resize, Upsample, ReduceMean, ReduceSum,
  Expand, Tile, GatherND), its output tensor and the file ``probe_<p>.npy`` in
  each case directory holding onnxruntime's value of it; a test compiles the
  model up to that tensor (``--output``) and compares.

Every case directory holds ``input_0.npy`` (seeded standard normal) and
onnxruntime's ``output_0.npy``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx

from .common import ROOT
from .exporters import _randomize_bn, _run_with, _small_resnet, _torch_export, save_cases

CASES = 3
# Ops whose lowerings onnxruntime checks here first: their outputs are probed.
PROBED = ("ConvTranspose", "Resize", "Upsample", "ReduceMean", "ReduceSum", "Expand", "Tile", "GatherND")
IMAGE = (1, 3, 32, 32)


def _inventory(m: onnx.ModelProto) -> dict[str, int]:
    ops: dict[str, int] = {}
    for n in m.graph.node:
        key = n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}.{n.op_type}"
        ops[key] = ops.get(key, 0) + 1
    return dict(sorted(ops.items()))


def _save_probes(rel: str, inputs: list[np.ndarray]) -> list[dict]:
    """onnxruntime's value of each probed node's output, per case, as `probe_<p>.npy`."""
    path = ROOT / rel
    m = onnx.load(str(path), load_external_data=False)
    probes = [{"node": n.name, "op": n.op_type, "tensor": n.output[0], "file": f"probe_{p}.npy"}
              for p, n in enumerate(x for x in m.graph.node if x.domain in ("", "ai.onnx") and x.op_type in PROBED)]
    if not probes:
        return []
    input_name = next(i.name for i in m.graph.input if i.name not in {t.name for t in m.graph.initializer})
    for k, x in enumerate(inputs):
        outs = _run_with(path, {input_name: x}, [p["tensor"] for p in probes])
        d = path.with_suffix(".cases") / str(k)
        for p in probes:
            np.save(d / p["file"], np.asarray(outs[p["tensor"]], dtype=np.float32))
    return probes


def _inputs(shape, seed: int) -> list[np.ndarray]:
    r = np.random.default_rng(seed)
    return [r.standard_normal(shape).astype(np.float32) for _ in range(CASES)]


def _perturb(model, seed: int) -> None:
    """Random BatchNorm statistics; LayerNorm affine parameters near 1 and 0; every
    parameter that initialises to all zeros (ViT's head and class token) or to a
    constant (ConvNeXt's layer scale, 1e-6) random: fresh values would make the
    networks' outputs constant or their blocks the identity."""
    import torch
    import torch.nn as nn

    _randomize_bn(model)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, nn.LayerNorm) and mod.elementwise_affine:
                mod.weight.copy_(1 + 0.2 * torch.randn(mod.weight.shape, generator=g))
                mod.bias.copy_(0.1 * torch.randn(mod.bias.shape, generator=g))
        for name, p in model.named_parameters():
            if p.numel() > 1 and torch.all(p == p.flatten()[0]) and "norm" not in name and "ln" not in name:
                p.copy_(0.3 * torch.randn(p.shape, generator=g))


def _unet():
    import torch
    import torch.nn as nn

    def block(i, o):
        return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.ReLU())

    class UNet(nn.Module):
        """Two-level U-Net: 3 -> 8 -> 16 channels down (MaxPool 2), a bottleneck with
        a channel-mean residual (ReduceMean over axis 1), up by a ConvTranspose2d (k2
        s2) and by a bilinear Upsample (align_corners=False), skip connections by
        Concat, a 1x1 head to 3 classes per pixel plus a nearest Upsample (x4) of a
        1x1 side head on the bottleneck."""

        def __init__(self):
            super().__init__()
            self.enc1, self.enc2 = block(3, 8), block(8, 16)
            self.pool = nn.MaxPool2d(2)
            self.mid = block(16, 16)
            self.up1 = nn.ConvTranspose2d(16, 16, 2, stride=2)
            self.dec1 = block(32, 8)
            self.up2 = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
            self.dec2 = block(16, 8)
            self.head = nn.Conv2d(8, 3, 1)
            self.side = nn.Conv2d(16, 3, 1)
            self.side_up = nn.Upsample(scale_factor=4, mode="nearest")

        def forward(self, x):
            e1 = self.enc1(x)  # 8 x 16 x 16
            e2 = self.enc2(self.pool(e1))  # 16 x 8 x 8
            m = self.mid(self.pool(e2))  # 16 x 4 x 4
            m = m + m.mean(dim=1, keepdim=True)
            d1 = self.dec1(torch.cat([self.up1(m), e2], dim=1))  # 8 x 8 x 8
            d2 = self.dec2(torch.cat([self.up2(d1), e1], dim=1))  # 8 x 16 x 16
            return self.head(d2) + self.side_up(self.side(m))

    return UNet()


def _text_encoder():
    import torch
    import torch.nn as nn

    class TextEncoder(nn.Module):
        """Two post-norm transformer encoder layers (d = 16, 2 heads, feed-forward 32,
        ReLU) over given token embeddings [1, 8, 16] plus a learned position
        embedding, mean over the tokens, a linear head to 4 classes."""

        def __init__(self):
            super().__init__()
            self.pos = nn.Parameter(0.3 * torch.randn(1, 8, 16))
            layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = nn.Linear(16, 4)

        def forward(self, x):
            return self.head(self.encoder(x + self.pos).mean(dim=1))

    return TextEncoder()


def _rnn_classifier(cell):
    import torch.nn as nn

    class RnnClassifier(nn.Module):
        """One recurrent layer (8 features -> 16 hidden) over a [1, 10, 8] sequence; a
        linear head to 4 classes on the last step's output."""

        def __init__(self):
            super().__init__()
            self.rnn = cell(8, 16, batch_first=True)
            self.head = nn.Linear(16, 4)

        def forward(self, x):
            out, _ = self.rnn(x)
            return self.head(out[:, -1])

    return RnnClassifier()


def _leaky_resnet(net):
    """`net` with every ReLU module replaced by LeakyReLU(0.1)."""
    import torch.nn as nn

    for mod in list(net.modules()):
        for name, child in list(mod.named_children()):
            if isinstance(child, nn.ReLU):
                setattr(mod, name, nn.LeakyReLU(0.1))
    return net


def _zoo_small():
    """(name, model, input shape, note) of the committed zoo networks."""
    import torch
    import torch.nn as nn
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf
    from torchvision.models.mobilenetv3 import MobileNetV3, _mobilenet_v3_conf
    from torchvision.models.regnet import BlockParams, RegNet
    from torchvision.models.vision_transformer import VisionTransformer

    nets = []

    def add(name, build, shape, note):
        torch.manual_seed(len(nets))
        net = build()
        _perturb(net, seed=len(nets))
        nets.append((name, net.eval(), shape, note))

    def mobilenet_v3():
        setting, _ = _mobilenet_v3_conf("mobilenet_v3_small", width_mult=0.25)
        return MobileNetV3(setting[:4], last_channel=64, num_classes=10)

    def efficientnet():
        setting, _ = _efficientnet_conf("efficientnet_b0", width_mult=0.25, depth_mult=0.25)
        return EfficientNet(setting[:4], dropout=0.2, last_channel=64, num_classes=10)

    def regnet_y():
        params = BlockParams.from_init_params(depth=4, w_0=8, w_a=8.0, w_m=2.0, group_width=8, se_ratio=0.25)
        return RegNet(params, num_classes=10, stem_width=8)

    def convnext():
        return ConvNeXt([CNBlockConfig(16, 32, 1), CNBlockConfig(32, None, 1)], stochastic_depth_prob=0.0,
                        num_classes=10)

    def vit():
        return VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=16, mlp_dim=32,
                                 num_classes=10)

    add("mobilenet_v3_small_tiny", mobilenet_v3, IMAGE,
        "torchvision MobileNetV3 (mobilenet_v3_small, width 0.25, its first 4 blocks, last channel 64): "
        "squeeze-excitation (HardSigmoid, Mul), HardSwish; 10 classes, 32x32")
    add("efficientnet_b0_tiny", efficientnet, IMAGE,
        "torchvision EfficientNet (efficientnet_b0, width 0.25, depth 0.25, its first 4 stages, last channel 64): "
        "SiLU (Sigmoid, Mul), squeeze-excitation; 10 classes, 32x32")
    add("regnet_y_tiny", regnet_y, IMAGE,
        "torchvision RegNet with BlockParams(depth 4, w_0 8, w_a 8, w_m 2, group width 8, SE ratio 0.25) = a RegNetY: "
        "grouped convolutions, squeeze-excitation (Sigmoid, Mul); 10 classes, 32x32")
    add("convnext_tiny_tiny", convnext, IMAGE,
        "torchvision ConvNeXt, 2 stages (16, 32 channels, 1 block each): depthwise 7x7, LayerNorm (channels-last "
        "Permute), GELU, layer scale; 10 classes, 32x32")
    add("vit_tiny", vit, IMAGE,
        "torchvision VisionTransformer (32x32, patch 8, 2 layers, 2 heads, hidden 16, MLP 32): class token (Expand, "
        "Concat), LayerNorm, attention (MatMul of activations, Softmax), GELU; 10 classes")
    add("text_encoder_tiny", _text_encoder, (1, 8, 16),
        "torch.nn.TransformerEncoder (2 layers, d 16, 2 heads, feed-forward 32, ReLU, post-norm) over given token "
        "embeddings [1, 8, 16] + a learned position embedding, mean over tokens (ReduceMean), linear head, 4 classes")
    add("unet_tiny", _unet, (1, 3, 16, 16),
        "U-Net: 3 -> 8 -> 16 channels down (Conv 3x3 + ReLU, MaxPool 2), bottleneck plus its channel mean "
        "(ReduceMean axis 1), up by ConvTranspose2d (k2 s2) and bilinear Upsample (Resize linear, half_pixel), skip "
        "Concat, 1x1 head to 3 classes plus a nearest Upsample (x4) of a 1x1 side head; per-pixel logits [1, 3, 16, 16]")
    add("lstm_classifier", lambda: _rnn_classifier(nn.LSTM), (1, 10, 8),
        "nn.LSTM(8, 16, batch_first) over a [1, 10, 8] sequence, linear head on the last step, 4 classes")
    add("gru_classifier", lambda: _rnn_classifier(nn.GRU), (1, 10, 8),
        "nn.GRU(8, 16, batch_first) over a [1, 10, 8] sequence, linear head on the last step, 4 classes")
    add("resnet_leaky_tiny", lambda: _leaky_resnet(_small_resnet(base=4)), IMAGE,
        "torchvision ResNet (BasicBlock, [1, 1, 1, 1]) at 1/16 width (4..32 channels) with every ReLU a "
        "LeakyReLU(0.1); 10 classes, 32x32")
    return nets


def _zoo_large():
    """(name, model, input shape, note) of the full-size torchvision networks."""
    import torch
    from torchvision import models

    nets = []
    for name, build in [
        ("mobilenet_v3_small", lambda: models.mobilenet_v3_small(weights=None)),
        ("efficientnet_b0", lambda: models.efficientnet_b0(weights=None)),
        ("regnet_y_400mf", lambda: models.regnet_y_400mf(weights=None)),
        ("convnext_tiny", lambda: models.convnext_tiny(weights=None)),
        ("vit_b_16", lambda: models.vit_b_16(weights=None)),
        # ViT-Tiny/16 (DeiT-Tiny's shape: width 192, 12 layers, 3 heads) on torchvision's
        # VisionTransformer: the end-to-end transformer benchmark.
        ("vit_tiny_16", lambda: models.VisionTransformer(
            image_size=224, patch_size=16, num_layers=12, num_heads=3, hidden_dim=192,
            mlp_dim=768)),
        ("resnet18_leaky", lambda: _leaky_resnet(models.resnet18(weights=None))),
    ]:
        torch.manual_seed(len(nets))
        net = build()
        _perturb(net, seed=len(nets))
        nets.append((name, net.eval(), (1, 3, 224, 224), f"torchvision {name}, random weights, 224x224"))
    return nets


def _export_all(nets, directory: str) -> None:
    index = []
    for name, net, shape, note in nets:
        for dynamo in (False, True):
            rel = f"{directory}/{name}_{'dynamo' if dynamo else 'legacy_o17'}.onnx"
            how = _torch_export(net, rel, shape, dynamo)
            print(f"   {rel}: {how}", flush=True)
            inputs = _inputs(shape, seed=len(name))
            entry = save_cases(rel, inputs, f"{note}; {how}", committed=False)
            m = onnx.load(str(ROOT / rel), load_external_data=False)
            entry["exporter"] = "dynamo" if dynamo else "legacy"
            entry["ops"] = _inventory(m)
            entry["probes"] = _save_probes(rel, inputs)
            index.append(entry)
    Path(ROOT / directory / "index.json").write_text(json.dumps({"models": index}, indent=1, sort_keys=True) + "\n")


def generate() -> None:
    """The committed reduced models (`zoo/`) and their index."""
    _export_all(_zoo_small(), "zoo")


def generate_large() -> None:
    """The full-size torchvision models (`zoo-large/`, git-ignored) and their index."""
    _export_all(_zoo_large(), "zoo-large")
