"""The tiny torch module of the torch-path tests and its committed export.

``python python/tests/torch_tiny.py`` (with torch, onnx and the sci package installed)
rewrites ``data/torch_tiny.onnx`` (``sci.export_torch`` of the module: the file
``sci.compile(module, x)`` compiles), ``data/torch_tiny_input.npy`` (x) and
``data/torch_tiny_output.npy`` (the module's own output on x). The tests without torch
compile the committed file; the test with torch checks a fresh export equals it."""

import pathlib

import numpy as np

DATA = pathlib.Path(__file__).resolve().parent / "data"
ONNX = DATA / "torch_tiny.onnx"
INPUT = DATA / "torch_tiny_input.npy"
OUTPUT = DATA / "torch_tiny_output.npy"


def build(torch):
    """(module, example input): Conv 1->4 3x3, ReLU, Flatten, Linear 144->10 on 1x1x8x8,
    seeded."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3),
        torch.nn.ReLU(),
        torch.nn.Flatten(),
        torch.nn.Linear(4 * 6 * 6, 10),
    )
    return model.eval(), torch.randn(1, 1, 8, 8)


def main():
    import torch

    import sci

    model, x = build(torch)
    DATA.mkdir(exist_ok=True)
    sci.export_torch(model, x, ONNX)
    np.save(INPUT, x.numpy())
    np.save(OUTPUT, model(x).detach().numpy())
    print(f"wrote {ONNX}, {INPUT}, {OUTPUT}")


if __name__ == "__main__":
    main()
