"""sci.compile gives the plans sci-compile gives, from a path, from bytes and from a
torch module; bad models raise CompileError with the compiler's message."""

import os
import pathlib

import numpy as np
import pytest

import sci
import torch_tiny

from conftest import DIGITS, sci_compile


def plan_bytes(plan, tmp_path, name):
    path = tmp_path / name
    plan.save(path)
    return path.read_bytes()


@pytest.mark.parametrize(
    "model, opts, flags",
    [
        ("digits_lenet.onnx", dict(bits=32, scale=12), ["--bits", "32", "--scale", "12"]),
        (
            "digits_mlp.onnx",
            dict(bits=37, scale=14, ot="iknp", threads=2),
            ["--bits", "37", "--scale", "14", "--ot", "iknp", "--threads", "2"],
        ),
        ("digits_lenet.onnx", dict(validation=DIGITS / "val"), ["--validation", DIGITS / "val"]),
        ("digits_mlp.onnx", dict(backend="he", bits=32, scale=12), ["--backend", "he", "--bits", "32", "--scale", "12"]),
    ],
)
def test_compile_equals_sci_compile(tmp_path, model, opts, flags):
    onnx = DIGITS / model
    plan = sci.compile(onnx, **opts)
    sci_compile(onnx, "-o", tmp_path / "cli.bin", "--client-plan", tmp_path / "cli-client.bin", *flags)
    assert plan_bytes(plan, tmp_path, "py.bin") == (tmp_path / "cli.bin").read_bytes()
    assert plan_bytes(plan.client_view(), tmp_path, "py-client.bin") == (tmp_path / "cli-client.bin").read_bytes()
    assert plan.client_view().is_client_view and not plan.is_client_view
    # The report is sci-compile's (as --report writes it).
    report = plan.report
    assert report["plan_hash"] == plan.hash
    assert report["bits"] == (37 if opts.get("bits") == 37 else report["bits"])
    # A saved plan loads back to the same plan (no compile report then).
    loaded = sci.load(tmp_path / "py.bin")
    assert loaded.hash == plan.hash and loaded.report is None


def test_compile_from_bytes_equals_from_path(tmp_path):
    onnx = DIGITS / "digits_lenet.onnx"
    a = sci.compile(onnx.read_bytes(), bits=32, scale=12)
    b = sci.compile(str(onnx), bits=32, scale=12)
    assert plan_bytes(a, tmp_path, "a.bin") == plan_bytes(b, tmp_path, "b.bin")


def test_compile_auto_needs_a_network():
    with pytest.raises(ValueError, match="net="):
        sci.compile(DIGITS / "digits_lenet.onnx", backend="auto")
    plan = sci.compile(DIGITS / "digits_mlp.onnx", backend="auto", net="wan", bits=32, scale=12)
    assert plan.report["backend_choice"] is not None


def test_bad_models_raise_compile_error(tmp_path):
    with pytest.raises(sci.CompileError, match="nothing.onnx"):
        sci.compile(tmp_path / "nothing.onnx")
    with pytest.raises(sci.CompileError) as e:
        sci.compile(b"this is not an ONNX model", bits=32, scale=12)
    assert "model.onnx" in str(e.value) and len(str(e.value)) > 20
    assert isinstance(e.value, sci.SciError)
    with pytest.raises(ValueError, match="not both"):
        sci.compile(DIGITS / "digits_lenet.onnx", validation=DIGITS / "val", bits=32)
    with pytest.raises(TypeError):
        sci.compile(42)


def test_load_rejects_a_corrupt_plan(tmp_path):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"SCIPLAN\0 but then nothing sensible")
    with pytest.raises(sci.PlanError):
        sci.load(bad)
    with pytest.raises(sci.PlanError):
        sci.load(tmp_path / "missing.bin")


def test_compile_a_torch_module_equals_sci_compile_of_its_export(tmp_path):
    torch = pytest.importorskip(
        "torch", reason="torch is not installed (optional): sci.compile(torch_module) is not tested"
    )
    pytest.importorskip("onnx", reason="torch.onnx.export needs the onnx package, not installed")
    model, x = torch_tiny.build(torch)
    plan = sci.compile(model, x, bits=32, scale=12)
    onnx = tmp_path / "m.onnx"
    sci.export_torch(model, x, onnx)
    sci_compile(onnx, "-o", tmp_path / "cli.bin", "--bits", "32", "--scale", "12")
    assert plan_bytes(plan, tmp_path, "py.bin") == (tmp_path / "cli.bin").read_bytes()
    # The committed export (compiled by the test below, without torch) is this one.
    assert onnx.read_bytes() == torch_tiny.ONNX.read_bytes(), (
        "the committed export is stale: rerun `python python/tests/torch_tiny.py`"
    )
    want = model(x).detach().numpy()
    assert np.array_equal(want, np.load(torch_tiny.OUTPUT))
    got = plan.run_cleartext(x.numpy())
    assert np.abs(got - want).max() < 0.05


def test_committed_torch_export_compiles_as_sci_compile(tmp_path):
    """No torch needed: the file sci.export_torch wrote for the tiny module (checked
    against a fresh export by the test above when torch is installed) gives sci-compile's
    plan, and the interpreter is close to torch's own output."""
    plan = sci.compile(torch_tiny.ONNX, bits=32, scale=12)
    sci_compile(torch_tiny.ONNX, "-o", tmp_path / "cli.bin", "--bits", "32", "--scale", "12")
    assert plan_bytes(plan, tmp_path, "py.bin") == (tmp_path / "cli.bin").read_bytes()
    want = np.load(torch_tiny.OUTPUT)
    got = plan.run_cleartext(np.load(torch_tiny.INPUT))
    assert got.shape == want.shape == (1, 10)
    assert np.abs(got - want).max() < 0.05
    assert got.argmax() == want.argmax()


def test_export_torch_rejects_what_is_not_a_module(tmp_path):
    pytest.importorskip("torch", reason="torch is not installed (optional): sci.export_torch is not tested")
    with pytest.raises(TypeError, match="torch.nn.Module"):
        sci.export_torch(42, None, tmp_path / "m.onnx")
