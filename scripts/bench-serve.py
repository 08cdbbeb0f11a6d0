#!/usr/bin/env python3
"""Load benchmark of `sci-run --serve`: the digits LeNet served to N clients at once.

    python3 scripts/bench-serve.py [--clients 1,2,4,8,16] [--max-sessions 4]
                                   [--inferences 2] [--bin target/release]

Compiles testdata/digits/digits_lenet.onnx (ℓ = 32, s = 12, the default backend),
starts one server (`sci-run --party 0 --serve --max-sessions K` on loopback), then for
each N starts N client processes at the same moment, each one session of `--inferences`
inferences on the bundled samples. Per N it prints one table row: sessions served and
refused ("server busy"), inferences per second over the whole wave, p50/p99 of the
served sessions' wall time, whether every served output equals `sci-run --cleartext`
byte for byte, the server's peak threads and open file descriptors (sampled from
/proc every 20 ms), and the 1-minute load average after the wave. Needs the release
binaries (`cargo build --release --workspace --bins`); standard library only.
"""

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(cmd, **kw):
    out = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if out.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed ({out.returncode}):\n{out.stderr}")
    return out


class Sampler(threading.Thread):
    """Peak thread count and open descriptors of one process, from /proc."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.threads, self.fds = pid, 0, 0
        self.stopped = threading.Event()

    def run(self):
        while not self.stopped.is_set():
            try:
                for line in open(f"/proc/{self.pid}/status"):
                    if line.startswith("Threads:"):
                        self.threads = max(self.threads, int(line.split()[1]))
                self.fds = max(self.fds, len(os.listdir(f"/proc/{self.pid}/fd")))
            except OSError:
                return
            time.sleep(0.02)


def one_client(sci_run, client_plan, port, inputs, outputs, timeout):
    """One client session; (served, seconds, stderr)."""
    t = time.monotonic()
    out = subprocess.run(
        [sci_run, "--party", "1", client_plan, "--connect", f"127.0.0.1:{port}",
         "--input", inputs, "--output", outputs],
        capture_output=True, text=True, timeout=timeout,
    )
    return out.returncode == 0, time.monotonic() - t, out.stderr


def percentile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clients", default="1,2,4,8,16")
    ap.add_argument("--max-sessions", type=int, default=4)
    ap.add_argument("--inferences", type=int, default=2)
    ap.add_argument("--bin", default=str(ROOT / "target" / "release"))
    ap.add_argument("--timeout", type=float, default=600.0)
    a = ap.parse_args()
    sci_compile, sci_run = (str(Path(a.bin) / b) for b in ("sci-compile", "sci-run"))
    work = Path(tempfile.mkdtemp(prefix="sci-bench-serve-"))
    plan, client_plan = work / "plan.bin", work / "client.bin"
    run([sci_compile, ROOT / "testdata/digits/digits_lenet.onnx", "-o", plan,
         "--client-plan", client_plan, "--bits", "32", "--scale", "12"])
    samples = sorted((ROOT / "testdata/digits/samples").glob("*.npy"))
    inputs = work / "inputs"
    inputs.mkdir()
    for i in range(a.inferences):
        shutil.copy(samples[i % len(samples)], inputs / f"x{i:03}.npy")
    expected = work / "expected"
    run([sci_run, "--cleartext", plan, "--input", inputs, "--output", expected])

    port = free_port()
    server = subprocess.Popen(
        [sci_run, "--party", "0", plan, "--serve", "--max-sessions", str(a.max_sessions),
         "--listen", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    sys.exit(f"the server did not start:\n{server.stderr.read()}")
                time.sleep(0.1)
        # The probe connection above is junk to the server; let it time out.
        time.sleep(0.2)
        print(f"digits LeNet (ℓ = 32, s = 12), --max-sessions {a.max_sessions}, "
              f"{a.inferences} inferences per session, {os.cpu_count()} cores")
        print("| clients | served | refused | inferences/s | p50 s | p99 s | "
              "outputs == cleartext | server peak threads | peak fds | load |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for n in (int(c) for c in a.clients.split(",")):
            sampler = Sampler(server.pid)
            sampler.start()
            results = [None] * n
            errors = []

            def client(i):
                try:
                    results[i] = one_client(sci_run, client_plan, port, inputs,
                                            work / f"out{n}_{i}", a.timeout)
                except Exception as e:  # reported below, never swallowed
                    errors.append(f"client {i}: {e!r}")

            t = time.monotonic()
            threads = [threading.Thread(target=client, args=(i,)) for i in range(n)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            wall = time.monotonic() - t
            sampler.stopped.set()
            sampler.join()
            if errors:
                sys.exit("\n".join(errors))
            served = [r for r in results if r[0]]
            refused = [r for r in results if not r[0]]
            for _, _, err in refused:
                if "busy" not in err:
                    sys.exit(f"a client failed for another reason than a busy server:\n{err}")
            same = all(
                (work / f"out{n}_{i}" / f.name).read_bytes() == f.read_bytes()
                for i, r in enumerate(results) if r[0]
                for f in expected.iterdir()
            )
            secs = [r[1] for r in served]
            print(f"| {n} | {len(served)} | {len(refused)} | "
                  f"{len(served) * a.inferences / wall:.2f} | "
                  f"{percentile(secs, 0.5):.2f} | {percentile(secs, 0.99):.2f} | "
                  f"{'yes' if same else 'NO'} | {sampler.threads} | {sampler.fds} | "
                  f"{os.getloadavg()[0]:.1f} |", flush=True)
        if server.poll() is not None:
            sys.exit(f"the server stopped:\n{server.stderr.read()}")
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
