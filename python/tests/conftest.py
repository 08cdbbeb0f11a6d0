"""Shared fixtures: the repository's test data, the sci-compile binary built by cargo,
and compiled digits plans."""

import os
import pathlib
import subprocess

import numpy as np
import pytest

import sci

ROOT = pathlib.Path(__file__).resolve().parents[2]
DIGITS = ROOT / "testdata" / "digits"
BIN = pathlib.Path(os.environ.get("SCI_BIN_DIR", ROOT / "target" / "release"))


def sci_compile(*args):
    """Runs the sci-compile binary (built by `cargo build --release`); its stdout."""
    exe = BIN / "sci-compile"
    if not exe.exists():
        pytest.fail(f"{exe} is missing: run `cargo build --release -p sci-compiler` first")
    r = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture(scope="session")
def lenet_plan():
    """The digits LeNet at (32, 12), IKNP, one lane: quick to run."""
    return sci.compile(DIGITS / "digits_lenet.onnx", bits=32, scale=12, ot="iknp")


@pytest.fixture(scope="session")
def mlp_plan():
    """The digits MLP at (32, 12), silent OT (the default engine)."""
    return sci.compile(DIGITS / "digits_mlp.onnx", bits=32, scale=12)


@pytest.fixture(scope="session")
def digits():
    """The digits test split: images (float32, N×1×8×8) and labels."""
    x = np.load(DIGITS / "test" / "x.npy")
    y = np.load(DIGITS / "test" / "y.npy")
    return x, y
