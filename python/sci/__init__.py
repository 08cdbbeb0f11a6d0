"""sci: two-party secure neural-network inference (CrypTFlow2), from Python.

The same Rust crates as the command-line tools (``sci-compile``, ``sci-run``), with numpy
arrays in and out::

    import numpy as np, sci

    plan = sci.compile("model.onnx", validation="val/")    # or a torch.nn.Module + example input
    plan.save("plan.bin"); plan.client_view().save("client.bin")
    y = plan.run_cleartext(x)                              # the reference interpreter
    assert np.array_equal(plan.run_local(x), y)            # both parties in this process

    server = sci.Server(plan, listen="127.0.0.1:7070")     # server process: holds the weights
    server.serve()                                         # until Ctrl-C or server.stop()

    with sci.Client(sci.load("client.bin"), connect="127.0.0.1:7070") as client:
        y = client.infer(x)                                # one session across calls
        print(client.last_report["totals"])

Errors are exceptions carrying the Rust error's message: :class:`CompileError`,
:class:`PlanError`, :class:`InputError`, :class:`PeerError` (all :class:`SciError`).
The GIL is released while the protocols run.
"""

from __future__ import annotations

import inspect
import os
import tempfile
import warnings
from typing import Any, Optional, Sequence, Tuple, Union

from ._sci import (
    WIRE_VERSION,
    Client,
    CompileError,
    InputError,
    PeerError,
    Plan,
    PlanError,
    SciError,
    Server,
    compile_file,
    load,
)
from ._sci import keygen as _keygen

__all__ = [
    "WIRE_VERSION",
    "Client",
    "CompileError",
    "InputError",
    "PeerError",
    "Plan",
    "PlanError",
    "SciError",
    "Server",
    "compile",
    "export_torch",
    "keygen",
    "load",
]


def keygen(out: Union[str, os.PathLike], name: str = "sci") -> Tuple[str, str]:
    """Writes a TLS key and self-signed certificate, as ``sci-keygen --out OUT --name
    NAME``: ``OUT/NAME.key`` (secret, readable by its owner only) and ``OUT/NAME.crt``
    (give it to the peer). Refuses to overwrite. Returns the two paths."""
    os.makedirs(out, exist_ok=True)
    key = os.path.join(out, f"{name}.key")
    cert = os.path.join(out, f"{name}.crt")
    for p in (key, cert):
        if os.path.exists(p):
            raise FileExistsError(f"{p} exists: not overwriting it")
    key_pem, cert_pem, _fingerprint = _keygen()
    fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(key_pem)
    with open(cert, "x") as f:
        f.write(cert_pem)
    return key, cert


def _is_torch_module(model: Any) -> bool:
    try:
        import torch  # noqa: F401  (optional dependency)
    except ImportError:
        return False
    return isinstance(model, torch.nn.Module)


def export_torch(model: Any, example_input: Any, path: Union[str, os.PathLike], opset: int = 17) -> None:
    """Writes the ONNX file that ``sci.compile(model, example_input, opset=opset)``
    compiles: ``torch.onnx.export`` with the TorchScript exporter (``dynamo=False``,
    which needs no onnxscript; torch >= 2.9 defaults to the dynamo exporter, whose
    graph differs), input names ``input`` (``input0``, ``input1``, ... for several),
    output name ``output``, the module in eval mode. ``example_input``: a tensor or
    array of the model's input shape (float32), or a tuple of them. The export is
    deterministic: the same module and input give the same bytes. Raises
    :class:`CompileError` when the exporter fails, ``ImportError`` without torch."""
    import torch

    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"sci.export_torch: model must be a torch.nn.Module, not {type(model).__name__}")
    if example_input is None:
        raise CompileError(
            "compiling a torch.nn.Module needs an example input (a tensor of the model's input shape)"
        )
    if not isinstance(example_input, tuple):
        example_input = (example_input,)
    example_input = tuple(
        torch.as_tensor(x, dtype=torch.float32) if not isinstance(x, torch.Tensor) else x
        for x in example_input
    )
    model.eval()
    names = ["input"] if len(example_input) == 1 else [f"input{i}" for i in range(len(example_input))]
    extra = {}
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        extra["dynamo"] = False  # the TorchScript exporter: no onnxscript needed
    try:
        with warnings.catch_warnings():
            # torch >= 2.9 warns that the TorchScript exporter is deprecated: chosen on purpose.
            warnings.simplefilter("ignore", DeprecationWarning)
            torch.onnx.export(
                model,
                example_input,
                os.fspath(path),
                input_names=names,
                output_names=["output"],
                opset_version=opset,
                **extra,
            )
    except Exception as e:  # torch's exporter raises many kinds
        raise CompileError(f"exporting the torch module to ONNX: {e}") from e


def compile(
    model: Union[str, os.PathLike, bytes, Any],
    example_input: Any = None,
    *,
    validation: Optional[Union[str, os.PathLike]] = None,
    bits: Optional[int] = None,
    scale: Optional[int] = None,
    backend: str = "rlwe",
    net: Optional[str] = None,
    batch: int = 1,
    threads: Optional[int] = None,
    ot: Optional[str] = None,
    mill_radix: Optional[int] = None,
    outputs: Sequence[str] = (),
    tolerance: float = 0.5,
    opset: int = 17,
) -> Plan:
    """Compiles a model into a :class:`Plan`, exactly as ``sci-compile`` does.

    ``model``: a path to an ONNX file (or IR text), the bytes of an ONNX model, or a
    ``torch.nn.Module`` with ``example_input`` (exported by :func:`export_torch` at
    ``opset``; needs torch). ``validation``: a directory of inputs and labels (the
    layout of ``testdata/digits/val``) to autotune the bit width and scale; else
    ``bits``/``scale`` (default 32 and 12, untuned). ``backend``: ``"rlwe"`` (default:
    linear layers by RLWE over Z_2^ℓ shares, what ``"auto"`` keeps for the bundled
    CNNs on both profiles), ``"ot"``, ``"he"`` or ``"auto"`` (with ``net``: the one
    predicted fastest there, RLWE's products each moved to OT where that is faster). ``net``: ``"lan"``,
    ``"wan"`` or ``"BANDWIDTH,RTT"``, adds the predicted network time to the report.
    ``batch``: inputs per inference. ``threads``: lanes (TCP connections) per session.
    ``ot``: ``"silent"`` (default) or ``"iknp"``. Raises :class:`CompileError`.
    """
    kwargs = dict(
        validation=None if validation is None else os.fspath(validation),
        bits=bits,
        scale=scale,
        backend=backend,
        net=net,
        batch=batch,
        threads=threads,
        ot=ot,
        mill_radix=mill_radix,
        outputs=list(outputs),
        tolerance=tolerance,
    )
    if isinstance(model, (str, os.PathLike)):
        return compile_file(os.fspath(model), **kwargs)
    with tempfile.TemporaryDirectory(prefix="sci-") as tmp:
        path = os.path.join(tmp, "model.onnx")
        if isinstance(model, (bytes, bytearray, memoryview)):
            with open(path, "wb") as f:
                f.write(bytes(model))
        elif _is_torch_module(model):
            export_torch(model, example_input, path, opset)
        else:
            raise TypeError(
                f"sci.compile: model must be a path, ONNX bytes or a torch.nn.Module, not {type(model).__name__}"
            )
        return compile_file(path, **kwargs)
