#!/usr/bin/env python3
"""The overhead of the Python layer: time per inference through sci.Client.infer against
sci-run's client, both against the same sci-run server process, runs alternating.

usage: python scripts/bench-python.py MODEL [--runs R] [--inferences N] [--threads T]
           [--ot iknp|silent] [--backend ot|he]
  MODEL: lenet (testdata/digits/digits_lenet.onnx on samples/digit_3.npy) or
         squeezenet (testdata/bench/squeezenet.onnx on its case 0); ℓ = 32, s = 12.
Needs the package installed (pip install ./python) and target/release/sci-compile and
sci-run (cargo build --release). Per run, each client opens one session of N inferences
(the same input N times) against a `sci-run --serve` server; a run's time per inference
is its median over the N inferences after the first (the first includes the
connection and OT set-up, reported apart):
  sci-run:  the client's --report, each inference's totals.seconds (measured in Rust);
  Python:   wall time of each Client.infer call (numpy in, conversion, GIL, numpy out).
Prints per-run figures, the medians over runs, the ratio, the CPU seconds of each
client and the load average.
"""

import argparse
import json
import os
import pathlib
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import sci

ROOT = pathlib.Path(__file__).resolve().parents[1]
BIN = ROOT / "target" / "release"
MODELS = {
    "lenet": ("testdata/digits/digits_lenet.onnx", "testdata/digits/samples/digit_3.npy"),
    "squeezenet": ("testdata/bench/squeezenet.onnx", "testdata/bench/squeezenet.cases/0/input_0.npy"),
}


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def self_cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=MODELS)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--inferences", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--ot", default="iknp")
    ap.add_argument("--backend", default="ot")
    a = ap.parse_args()
    onnx, inp = (ROOT / p for p in MODELS[a.model])
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="sci-bench-python-"))
    plan, client = tmp / "plan.bin", tmp / "client.bin"
    subprocess.run(
        [BIN / "sci-compile", onnx, "-o", plan, "--client-plan", client, "--bits", "32", "--scale", "12",
         "--ot", a.ot, "--backend", a.backend, "--threads", str(a.threads)],
        check=True, stdout=subprocess.DEVNULL,
    )
    x = np.load(inp)
    batch = tmp / "batch.npy"
    np.save(batch, np.stack([x] * a.inferences))
    srv = subprocess.Popen(
        [BIN / "sci-run", "--party", "0", plan, "--serve", "--listen", "127.0.0.1:0", "--max-sessions", "1"],
        stderr=subprocess.PIPE, text=True,
    )
    try:
        line = srv.stderr.readline()
        addr = re.search(r"listening on (\S+)", line).group(1)
        cplan = sci.load(client)
        rows = {"sci-run": [], "python": []}
        setups = {"sci-run": [], "python": []}
        cpus = {"sci-run": [], "python": []}
        for run in range(a.runs):
            # sci-run's client process.
            rep = tmp / f"r{run}.json"
            c0 = children_cpu()
            subprocess.run(
                [BIN / "sci-run", "--party", "1", client, "--connect", addr, "--input", batch, "--report", rep],
                check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
            cpus["sci-run"].append(children_cpu() - c0)
            parties = json.loads(rep.read_text())["parties"]
            secs = [p["totals"]["seconds"] for p in parties]
            setups["sci-run"].append(secs[0])
            rows["sci-run"].append(statistics.median(secs[1:]))
            # The Python client, in this process.
            c0 = self_cpu()
            t0 = time.perf_counter()
            with sci.Client(cplan, connect=addr, expected_inferences=a.inferences) as c:
                times = []
                for k in range(a.inferences):
                    t = time.perf_counter()
                    c.infer(x)
                    times.append(time.perf_counter() - t)
                    if k == 0:
                        times[0] += t - t0  # the set-up, as sci-run's first report has it
            cpus["python"].append(self_cpu() - c0)
            setups["python"].append(times[0])
            rows["python"].append(statistics.median(times[1:]))
            print(
                f"run {run}: per inference sci-run {rows['sci-run'][-1]:.4f} s, Python {rows['python'][-1]:.4f} s; "
                f"first (set-up incl.) {setups['sci-run'][-1]:.3f} / {setups['python'][-1]:.3f} s; "
                f"client CPU {cpus['sci-run'][-1]:.2f} / {cpus['python'][-1]:.2f} s",
                flush=True,
            )
        m = {k: statistics.median(v) for k, v in rows.items()}
        print(
            f"{a.model}: median per inference sci-run {m['sci-run']:.4f} s, Python {m['python']:.4f} s, "
            f"ratio {m['python'] / m['sci-run']:.3f}; client CPU per run (median) "
            f"{statistics.median(cpus['sci-run']):.2f} / {statistics.median(cpus['python']):.2f} s; "
            f"load average {os.getloadavg()}"
        )
    finally:
        srv.send_signal(2)
        try:
            srv.wait(timeout=120)
        except subprocess.TimeoutExpired:
            srv.kill()


if __name__ == "__main__":
    sys.exit(main())
