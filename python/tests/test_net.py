"""A Server in a thread and a Client in the test, over TCP and over TLS with pinned
keys: the outputs equal the cleartext ones; one session across infer calls; a wrong
peer certificate and a mismatched plan raise clear exceptions on both sides; Ctrl-C
stops a serving process cleanly."""

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import sci

from conftest import DIGITS


class Serving:
    """A Server serving in a thread until the with-block ends."""

    def __init__(self, plan, **kw):
        self.server = sci.Server(plan, listen="127.0.0.1:0", **kw)
        self.result = {}
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        try:
            self.result["sessions"] = self.server.serve()
        except Exception as e:  # recorded for the test to see
            self.result["error"] = e

    def __enter__(self):
        self.thread.start()
        return self.server

    def __exit__(self, *exc):
        self.server.stop()
        self.thread.join(timeout=60)
        assert not self.thread.is_alive(), "serve() did not return after stop()"
        assert "error" not in self.result, self.result.get("error")


def wait_for_sessions(server, n, timeout=60):
    t0 = time.time()
    while len(server.sessions) < n:
        assert time.time() - t0 < timeout, "the server did not finish the session"
        time.sleep(0.05)
    return server.sessions


def test_client_over_tcp_keeps_one_session(lenet_plan, digits):
    x, _ = digits
    with Serving(lenet_plan) as server:
        with sci.Client(lenet_plan.client_view(), connect=server.address) as client:
            outs = [client.infer(x[i : i + 1]) for i in range(3)]
            r = client.last_report
            batch = client.infer(x[3:5][:, None])
        sessions = wait_for_sessions(server, 1)
    for i, got in enumerate(outs):
        assert np.array_equal(got, lenet_plan.run_cleartext(x[i : i + 1]))
    assert np.array_equal(batch, lenet_plan.run_cleartext(x[3:5][:, None]))
    # One session of five inferences; the later ones have no set-up.
    (s,) = sessions
    assert s["outcome"] == "ok" and s["inferences"] == 5, s
    assert r["setup"]["bytes_sent"] == 0 and r["control"]["bytes_sent"] == 1
    # Measured equals predicted, per instruction and in total (one lane).
    for i in r["instructions"]:
        assert i["predicted"]["bytes_sent"] == i["bytes_sent"], i
        assert i["predicted"]["rounds"] == i["rounds"], i
    assert r["predicted"]["bytes_sent"] == r["totals"]["bytes_sent"]
    assert r["predicted"]["rounds"] == r["totals"]["rounds"]
    assert not client.is_open


def test_client_over_tls_with_pinned_keys(tmp_path, mlp_plan, digits):
    x, _ = digits
    skey, scert = sci.keygen(tmp_path, "server")
    ckey, ccert = sci.keygen(tmp_path, "client")
    assert oct(os.stat(skey).st_mode & 0o777) == "0o600"
    with Serving(mlp_plan, key=skey, cert=scert, peer_cert=ccert) as server:
        with sci.Client(mlp_plan.client_view(), connect=server.address, key=ckey, cert=ccert, peer_cert=scert) as c:
            got = c.infer(x[:1])
            again = c.infer(x[:1])
        wait_for_sessions(server, 1)
    want = mlp_plan.run_cleartext(x[:1])
    assert np.array_equal(got, want) and np.array_equal(again, want)


def test_a_wrong_peer_certificate_fails_on_both_sides(tmp_path, lenet_plan, digits):
    x, _ = digits
    skey, scert = sci.keygen(tmp_path, "server")
    ckey, ccert = sci.keygen(tmp_path, "client")
    okey, ocert = sci.keygen(tmp_path, "other")
    with Serving(lenet_plan, key=skey, cert=scert, peer_cert=ccert, connect_timeout=5) as server:
        # The client presents "other"'s certificate: the server rejects it; the client
        # pins the right server certificate but hears the rejection.
        with pytest.raises(sci.PeerError) as e:
            sci.Client(
                lenet_plan.client_view(),
                connect=server.address,
                key=okey,
                cert=ocert,
                peer_cert=scert,
                connect_timeout=5,
                timeout=10,
            )
        assert str(e.value)
        # The client pins a certificate the server does not have.
        with pytest.raises(sci.PeerError) as e2:
            sci.Client(
                lenet_plan.client_view(),
                connect=server.address,
                key=ckey,
                cert=ccert,
                peer_cert=ocert,
                connect_timeout=5,
                timeout=10,
            )
        assert "certificate" in str(e2.value).lower() or "tls" in str(e2.value).lower(), str(e2.value)
        # The server saw both connections fail TLS authentication.
        lines = wait_for_sessions(server, 2)
    assert all(l["outcome"].startswith("rejected") for l in lines), lines


def test_a_mismatched_plan_fails_on_both_sides(lenet_plan, mlp_plan, digits):
    x, _ = digits
    with Serving(lenet_plan) as server:
        with pytest.raises(sci.PeerError, match="plan"):
            sci.Client(mlp_plan.client_view(), connect=server.address, timeout=10)
        (s,) = wait_for_sessions(server, 1)
    assert s["outcome"].startswith("error") and "plan" in s["outcome"], s


def test_no_server_is_a_clear_error(lenet_plan):
    with pytest.raises(sci.PeerError, match="connect|refused"):
        sci.Client(lenet_plan.client_view(), connect="127.0.0.1:9", connect_timeout=0.5)


def test_server_needs_the_weights(lenet_plan):
    with pytest.raises(sci.PlanError, match="no weights"):
        sci.Server(lenet_plan.client_view(), listen="127.0.0.1:0")


def test_plain_tcp_off_loopback_is_refused(lenet_plan):
    with pytest.raises(sci.PeerError, match="insecure_plaintext"):
        sci.Server(lenet_plan, listen="0.0.0.0:0")


SERVE = """
import sys, sci
plan = sci.load(sys.argv[1])
server = sci.Server(plan, listen="127.0.0.1:0")
print(server.address, flush=True)
n = server.serve()
print("served", n, flush=True)
"""


def test_ctrl_c_stops_a_serving_process(tmp_path, lenet_plan, digits):
    x, _ = digits
    lenet_plan.save(tmp_path / "plan.bin")
    p = subprocess.Popen(
        [sys.executable, "-c", SERVE, str(tmp_path / "plan.bin")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        address = p.stdout.readline().strip()
        assert address, p.stderr.read()
        with sci.Client(lenet_plan.client_view(), connect=address) as c:
            got = c.infer(x[:1])
        assert np.array_equal(got, lenet_plan.run_cleartext(x[:1]))
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, err
    assert "served 1" in out, (out, err)
    assert "stopping" in err, err


def test_a_vanished_server_is_a_peer_error(tmp_path, lenet_plan, digits):
    x, _ = digits
    lenet_plan.save(tmp_path / "plan.bin")
    p = subprocess.Popen(
        [sys.executable, "-c", SERVE, str(tmp_path / "plan.bin")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        address = p.stdout.readline().strip()
        c = sci.Client(lenet_plan.client_view(), connect=address, timeout=20)
        c.infer(x[:1])
        p.kill()
        p.wait(timeout=30)
        with pytest.raises(sci.PeerError, match="disconnected|reset|closed"):
            c.infer(x[:1])
        assert not c.is_open
        with pytest.raises(sci.PeerError, match="closed"):
            c.infer(x[:1])
        c.close()
    finally:
        if p.poll() is None:
            p.kill()


def test_threads_share_a_client(lenet_plan, digits):
    x, _ = digits
    with Serving(lenet_plan) as server:
        with sci.Client(lenet_plan.client_view(), connect=server.address) as c:
            results = {}

            def work(k):
                results[k] = [c.infer(x[k + 2 * i : k + 2 * i + 1]) for i in range(3)]

            ts = [threading.Thread(target=work, args=(k,)) for k in range(2)]
            for t in ts:
                t.start()
            for t in ts:
                t.join(timeout=120)
            assert not any(t.is_alive() for t in ts)
        (s,) = wait_for_sessions(server, 1)
    assert s["inferences"] == 6
    for k in range(2):
        for i, got in enumerate(results[k]):
            assert np.array_equal(got, lenet_plan.run_cleartext(x[k + 2 * i : k + 2 * i + 1]))
