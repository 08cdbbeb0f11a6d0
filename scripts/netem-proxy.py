#!/usr/bin/env python3
"""A loopback TCP proxy that emulates a network link the way sci's emulator does.

usage: scripts/netem-proxy.py --listen PORT --forward PORT [--ports K] --net PROFILE
       scripts/netem-proxy.py --self-test

Listens on 127.0.0.1:LISTEN+i and forwards every connection it accepts there to
127.0.0.1:FORWARD+i, for i < K (default 1), until SIGINT or SIGTERM. PROFILE is `lan`
(377 MB/s, 0.3 ms round trip), `wan` (40 MB/s, 80 ms) or BANDWIDTH,RTT such as
`40MB/s,80ms` (units as `sci-run --net`: B/s, kB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s,
kbit/s, Mbit/s, Gbit/s; s, ms, us). It is for a peer system that cannot emulate a link
itself (scripts/bench-cheetah.sh runs OpenCheetah through it): the peer's server listens
on FORWARD+i, its client connects to LISTEN+i, and both directions of every byte cross
the emulated link. Python's standard library only.

The model is sci's (its `net::emulate` module, emulate.rs), mirrored exactly:
- One link per direction, shared by all the proxied connections: the connecting side's
  sending (client -> server) is one link, the accepting side's the other (a party's
  bandwidth is shared by its lanes; the two directions are independent: full duplex).
- What a side sends is cut into messages of at most FRAME = 64 KiB (here: what one
  recv() returns, at most FRAME) and each is booked on its direction's link: it leaves
  when the link is free and takes len / bandwidth; it is delivered RTT/2 after its last
  byte left. A round trip therefore costs RTT and n bytes n / bandwidth.
- The sender is held up only when it is more than BACKLOG = 4 MiB of link time ahead
  (the proxy stops reading from it; TCP's flow control does the rest), and a
  connection's delivery queue holds at most QUEUE = 64 messages.
Differences, all small: sci books a message when the sender flushes it, the proxy when
its bytes reach the proxy over loopback (tens of microseconds later, and writes that
arrive together are booked as one message); the proxy's own forwarding adds some tens
of microseconds per message (`--self-test` prints it: the round trip measured through a
zero-delay proxy); the operating system's sleep oversleeps by some tens of microseconds
here as in sci. Not emulated, as in sci: congestion control, loss, and the latency of
opening a connection (the proxy connects upstream only when a client has connected, and
retries for up to CONNECT_WAIT seconds while the server is not yet listening).

`--self-test` checks the model on loopback with ephemeral ports and exits 0 when every
check passes (1 otherwise), printing each measurement: 40 MB one way at 40 MB/s take
1 s + RTT/2; 40 MB over two connections at once take the same (one shared link);
20 MB each way at once take 0.5 s + RTT/2 (full duplex); a one-byte ping-pong takes one
RTT at 80 ms and at 0.3 ms (the LAN's; a looser bound, as the sleep's overshoot is
relatively large there); through a zero-delay proxy it prints the proxy's own overhead.
"""

import argparse
import collections
import queue
import re
import signal
import socket
import statistics
import sys
import threading
import time

FRAME = 64 * 1024
BACKLOG = 4 << 20
QUEUE = 64
CONNECT_WAIT = 60.0
HOST = "127.0.0.1"

Profile = collections.namedtuple("Profile", "bandwidth rtt")
LAN = Profile(377e6, 0.3e-3)
WAN = Profile(40e6, 80e-3)

RATES = {
    "B/s": 1.0, "kB/s": 1e3, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9,
    "KiB/s": 1024.0, "MiB/s": 1024.0**2, "GiB/s": 1024.0**3,
    "kbit/s": 1e3 / 8, "Kbit/s": 1e3 / 8, "Mbit/s": 1e6 / 8, "Gbit/s": 1e9 / 8,
}
TIMES = {"s": 1.0, "ms": 1e-3, "us": 1e-6}


def parse_profile(text):
    """`lan`, `wan` or BANDWIDTH,RTT (as sci's NetProfile::from_str); ValueError if not."""
    low = text.strip().lower()
    if low == "lan":
        return LAN
    if low == "wan":
        return WAN
    bw, sep, rtt = text.partition(",")
    if not sep:
        raise ValueError(f"network profile {text!r}: expected lan, wan or BANDWIDTH,RTT (e.g. 40MB/s,80ms)")

    def number_unit(s, units, what):
        m = re.fullmatch(r"([0-9.eE]+)\s*(\S+)", s.strip())
        if not m or m.group(2) not in units:
            raise ValueError(f"network profile: {what} {s.strip()!r} needs a number and one of {', '.join(units)}")
        try:
            return float(m.group(1)) * units[m.group(2)]
        except ValueError:
            raise ValueError(f"network profile: {what} {s.strip()!r} is not a number") from None

    bandwidth = number_unit(bw, RATES, "bandwidth")
    if not bandwidth > 0 or bandwidth == float("inf"):
        raise ValueError(f"network profile: bandwidth {bw.strip()!r} must be a positive rate")
    seconds = number_unit(rtt, TIMES, "round-trip time")
    if not seconds >= 0 or seconds == float("inf"):
        raise ValueError(f"network profile: round-trip time {rtt.strip()!r} must be non-negative")
    return Profile(bandwidth, seconds)


class Link:
    """One direction of the emulated network: its profile and when it is next free."""

    def __init__(self, profile):
        self.profile = profile
        self.free_at = time.monotonic()
        self.lock = threading.Lock()

    def book(self, n):
        """Books n bytes sent now: (when they are delivered, how long the sender waits)."""
        now = time.monotonic()
        with self.lock:
            start = max(self.free_at, now)
            end = start + n / self.profile.bandwidth
            self.free_at = end
        wait = max(0.0, end - now - BACKLOG / self.profile.bandwidth)
        return end + self.profile.rtt / 2, wait


def _shutdown(s, how):
    """Shuts a socket's reading or writing, ignoring one already gone."""
    try:
        s.shutdown(how)
    except OSError:
        pass


def pump(src, dst, link):
    """Forwards src to dst through link until src ends, then shuts dst's sending."""
    q = queue.Queue(QUEUE)

    def deliver():
        broken = False
        while True:
            at, data = q.get()
            if data is None:
                break
            if broken:
                continue  # drain, so that the reader never waits on a full queue
            left = at - time.monotonic()
            if left > 0:
                time.sleep(left)
            try:
                dst.sendall(data)
            except OSError:
                broken = True
                _shutdown(src, socket.SHUT_RD)  # the reader then stops
        if not broken:
            _shutdown(dst, socket.SHUT_WR)

    t = threading.Thread(target=deliver, daemon=True)
    t.start()
    try:
        while True:
            data = src.recv(FRAME)
            if not data:
                break
            at, wait = link.book(len(data))
            q.put((at, data))
            if wait > 0:
                time.sleep(wait)
    except OSError:
        pass
    finally:
        q.put((0.0, None))
    t.join()


def connect_upstream(port):
    """A connection to HOST:port, retried while nothing listens there (CONNECT_WAIT s)."""
    deadline = time.monotonic() + CONNECT_WAIT
    while True:
        try:
            s = socket.create_connection((HOST, port))
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return s
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.005)


class Proxy:
    """Listens on HOST:listen+i and forwards to HOST:forward+i (i < count) over the
    emulated links `up` (accepted side's sending) and `down` (the upstream's)."""

    def __init__(self, listen, forward, count, profile):
        self.up, self.down = Link(profile), Link(profile)
        self.forward = forward
        self.servers = []
        for i in range(count):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((HOST, listen + i if listen else 0))
            s.listen(16)
            self.servers.append(s)
        self.ports = [s.getsockname()[1] for s in self.servers]

    def start(self):
        """Accepts on every port in background threads."""
        for i, s in enumerate(self.servers):
            threading.Thread(target=self._accept, args=(s, self.forward + i), daemon=True).start()
        return self

    def _accept(self, server, target):
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=self._session, args=(client, target), daemon=True).start()

    def _session(self, client, target):
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            upstream = connect_upstream(target)
        except OSError as e:
            print(f"netem-proxy: cannot reach {HOST}:{target}: {e}", file=sys.stderr)
            client.close()
            return
        back = threading.Thread(target=pump, args=(upstream, client, self.down), daemon=True)
        back.start()
        pump(client, upstream, self.up)
        back.join()
        client.close()
        upstream.close()

    def close(self):
        for s in self.servers:
            s.close()


# ---- self-test ---------------------------------------------------------------------

def _listener():
    s = socket.socket()
    s.bind((HOST, 0))
    s.listen(16)
    return s


def _sink(server, conns, done):
    """Accepts `conns` connections, reads each to its end; done() gets the end time."""
    def read(c):
        while c.recv(1 << 20):
            pass
        c.close()

    ts = []
    for _ in range(conns):
        c, _ = server.accept()
        t = threading.Thread(target=read, args=(c,))
        t.start()
        ts.append(t)
    for t in ts:
        t.join()
    done(time.monotonic())


def _send(port, n):
    """Connects through the proxy and sends n bytes (then closes the connection)."""
    s = socket.create_connection((HOST, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    chunk = b"\0" * FRAME
    left = n
    while left:
        k = min(left, FRAME)
        s.sendall(chunk[:k])
        left -= k
    s.close()


def _one_way(profile, conns, total):
    """Seconds for `total` bytes split over `conns` connections sent at once, to the
    last byte received."""
    server = _listener()
    p = Proxy(0, server.getsockname()[1], 1, profile).start()
    end = []
    sink = threading.Thread(target=_sink, args=(server, conns, end.append))
    sink.start()
    t0 = time.monotonic()
    senders = [threading.Thread(target=_send, args=(p.ports[0], total // conns)) for _ in range(conns)]
    for s in senders:
        s.start()
    for s in senders:
        s.join()
    sink.join()
    p.close()
    server.close()
    return end[0] - t0


def _duplex(profile, n):
    """Seconds for n bytes each way at once on one connection (to both last bytes)."""
    server = _listener()
    p = Proxy(0, server.getsockname()[1], 1, profile).start()
    ends = []

    def serve():
        c, _ = server.accept()
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        w = threading.Thread(target=lambda: (c.sendall(b"\0" * n), c.shutdown(socket.SHUT_WR)))
        w.start()
        while c.recv(1 << 20):
            pass
        ends.append(time.monotonic())
        w.join()
        c.close()

    srv = threading.Thread(target=serve)
    srv.start()
    t0 = time.monotonic()
    s = socket.create_connection((HOST, p.ports[0]))
    w = threading.Thread(target=lambda: (s.sendall(b"\0" * n), s.shutdown(socket.SHUT_WR)))
    w.start()
    while s.recv(1 << 20):
        pass
    ends.append(time.monotonic())
    w.join()
    srv.join()
    s.close()
    p.close()
    server.close()
    return max(ends) - t0


def _ping_pong(profile, reps):
    """Median seconds of a one-byte round trip through the proxy (reps round trips)."""
    server = _listener()
    p = Proxy(0, server.getsockname()[1], 1, profile).start()

    def echo():
        c, _ = server.accept()
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while True:
            b = c.recv(1)
            if not b:
                break
            c.sendall(b)
        c.close()

    e = threading.Thread(target=echo)
    e.start()
    s = socket.create_connection((HOST, p.ports[0]))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    times = []
    for _ in range(reps):
        t0 = time.monotonic()
        s.sendall(b"x")
        if s.recv(1) != b"x":
            raise RuntimeError("echo lost")
        times.append(time.monotonic() - t0)
    s.close()
    e.join()
    p.close()
    server.close()
    return statistics.median(times)


def self_test():
    """Runs the checks named in the module's docstring; returns the exit status."""
    fails = 0

    def check(what, got, want, tol):
        nonlocal fails
        ok = abs(got - want) <= tol
        fails += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {what}: {got * 1e3:.2f} ms (expected {want * 1e3:.2f} ± {tol * 1e3:.2f} ms)")

    wan = WAN
    check("40 MB one way at 40 MB/s, 80 ms RTT", _one_way(wan, 1, 40_000_000), 1.0 + wan.rtt / 2, 0.1)
    check("40 MB over two connections at once (one shared link)", _one_way(wan, 2, 40_000_000), 1.0 + wan.rtt / 2, 0.1)
    check("20 MB each way at once (full duplex)", _duplex(wan, 20_000_000), 0.5 + wan.rtt / 2, 0.1)
    check("one-byte ping-pong at 80 ms RTT (median of 10)", _ping_pong(wan, 10), wan.rtt, 0.005)
    check("one-byte ping-pong at the LAN's 0.3 ms RTT (median of 200)", _ping_pong(LAN, 200), LAN.rtt, 0.0015)
    zero = _ping_pong(Profile(1e12, 0.0), 200)
    print(f"info the proxy's own overhead: a one-byte ping-pong through a zero-delay proxy takes {zero * 1e3:.3f} ms")
    print("self-test passed" if not fails else f"self-test: {fails} check(s) failed")
    return 1 if fails else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--listen", type=int, help="first port to listen on (127.0.0.1)")
    ap.add_argument("--forward", type=int, help="first port to forward to (127.0.0.1)")
    ap.add_argument("--ports", type=int, default=1, help="number of consecutive ports (default 1)")
    ap.add_argument("--net", help="lan, wan or BANDWIDTH,RTT (e.g. 40MB/s,80ms)")
    ap.add_argument("--self-test", action="store_true", help="check the emulation and exit")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    if a.listen is None or a.forward is None or a.net is None:
        ap.error("--listen, --forward and --net are required (or --self-test)")
    if a.ports < 1 or not (0 < a.listen and a.listen + a.ports <= 65536) or not (0 < a.forward and a.forward + a.ports <= 65536):
        ap.error("ports out of range: LISTEN+K and FORWARD+K must be at most 65536, K at least 1")
    try:
        profile = parse_profile(a.net)
    except ValueError as e:
        ap.error(str(e))
    try:
        p = Proxy(a.listen, a.forward, a.ports, profile).start()
    except OSError as e:
        print(f"netem-proxy: cannot listen on {HOST}:{a.listen}..{a.listen + a.ports - 1}: {e}", file=sys.stderr)
        return 1
    print(f"netem-proxy: {HOST}:{a.listen}..{a.listen + a.ports - 1} -> {HOST}:{a.forward}..{a.forward + a.ports - 1}, "
          f"{profile.bandwidth / 1e6:g} MB/s, {profile.rtt * 1e3:g} ms RTT", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    while not stop.wait(1.0):
        pass
    p.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
