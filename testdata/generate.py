#!/usr/bin/env python3
"""Regenerate sci's test data deterministically.

    testdata/.venv/bin/python testdata/generate.py            # everything but keras
    testdata/.venv/bin/python testdata/generate.py --only ops # one group
    testdata/.venv-keras/bin/python testdata/generate.py --only keras
    testdata/.venv/bin/python testdata/generate.py --only exporters-large  # git-ignored
    testdata/.venv/bin/python testdata/generate.py --only bench-large      # git-ignored (ResNet-50)
    testdata/.venv/bin/python testdata/generate.py --only zoo-large        # git-ignored (224x224 zoo)

Groups: see GROUPS below and testdata/README.md. Each group owns one
directory; regenerating a group replaces that directory and its entries in
testdata/manifest.json.
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from gen import common  # noqa: E402

# name -> (module, directory it owns[, function]; default `generate`)
GROUPS = {
    "ops": ("gen.ops", "ops"),
    "onnx-node": ("gen.onnx_node", "onnx-node"),
    "digits": ("gen.digits", "digits"),
    "errors": ("gen.errors", "errors"),
    "bench": ("gen.bench", "bench"),
    "exporters": ("gen.exporters", "exporters"),
    "zoo": ("gen.zoo", "zoo"),
    # Needs TensorFlow: the venv of requirements-keras.txt (setup-venv.sh keras).
    "keras": ("gen.exporters", "keras", "generate_keras"),
}
# Groups not run by default: large files, git-ignored, tested when present.
OPTIONAL = {
    "exporters-large": ("gen.exporters", "exporters-large", "generate_large"),
    "bench-large": ("gen.bench", "bench-large", "generate_large"),
    "zoo-large": ("gen.zoo", "zoo-large", "generate_large"),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", choices=sorted({**GROUPS, **OPTIONAL}),
                    help="regenerate only this group (repeatable)")
    args = ap.parse_args()
    names = args.only or [g for g in GROUPS if g != "keras"]

    manifest_path = HERE / "manifest.json"
    manifest = json.loads(manifest_path.read_text())["models"] if manifest_path.exists() else {}

    for name in names:
        module, directory, *function = {**GROUPS, **OPTIONAL}[name]
        print(f"== {name}", flush=True)
        if (HERE / directory).exists():
            shutil.rmtree(HERE / directory)
        manifest = {k: v for k, v in manifest.items() if not k.startswith(directory + "/")}
        common.MANIFEST.clear()
        getattr(importlib.import_module(module), function[0] if function else "generate")()
        print(f"   {len(common.MANIFEST)} models", flush=True)
        manifest.update(common.MANIFEST)

    models = dict(sorted(manifest.items()))
    common.write_json(manifest_path, {
        "layout": "MODEL.onnx with MODEL.cases/<k>/input_<i>.npy (i-th runtime graph input, i.e. graph "
                  "inputs that are not initializers, in graph order) and output_<j>.npy (j-th graph "
                  "output, computed by onnxruntime CPU)",
        "models": models,
    })
    write_catalogue(models)


def _io(items) -> str:
    return ", ".join(f"`{i['name']}` {i['dtype']}{list(i['shape']) if i['shape'] is not None else '?'}" for i in items)


def write_catalogue(models: dict) -> None:
    """Replace the catalogue section of README.md with a table of every model."""
    readme = HERE / "README.md"
    text = readme.read_text()
    begin = text.index("<!-- BEGIN CATALOGUE")
    begin = text.index("\n", begin) + 1
    end = text.index("<!-- END CATALOGUE -->")
    lines = ["## Catalogue", "", f"{len(models)} models. Shapes use the batch size of the committed cases.", ""]
    group = None
    for path, e in models.items():
        g = path.split("/", 1)[0]
        if g != group:
            group = g
            lines += ["", f"### `{g}/`", "", "| model | opset / IR | inputs | outputs | cases | note |",
                      "|---|---|---|---|---|---|"]
        opset = ", ".join(f"{d}:{v}" if d != "ai.onnx" else str(v) for d, v in e["opset"].items())
        note = e.get("note", "").replace("|", "\\|")
        lines.append(f"| `{path}` | {opset} / {e['ir_version']} | {_io(e['inputs'])} | {_io(e['outputs'])} | "
                     f"{e['cases']} | {note} |")
    readme.write_text(text[:begin] + "\n".join(lines) + "\n" + text[end:])


if __name__ == "__main__":
    main()
