#!/usr/bin/env python3
"""Fits the piecewise cubics of `sci_ir::spline` (issue 25) and prints their table.

Each function is `h(|x|)` on `a = |x| ∈ [0, R)`, `R = 4`: Erf `h = erf(a)`, the GELUs
`h(a) = a·(1 − Φ(a))` (exact) and `a·½(1 − tanh(√(2/π)(a + 0.044715a³)))` (tanh), so
that `erf(x) = sign(x)·h(|x|)` and `gelu(x) = relu(x) − h(|x|)`. Beyond the last knot `h`
is its limit (1 for Erf, 0 for the GELUs). On each segment a polynomial of degree 3 in
`u = a/R`, fitted by Lawson's iteratively reweighted least squares (a minimax fit) on
4,001 points; the knots balance the segments' errors (bisection on the target error),
rounded to multiples of 1/64 (exact at every scale s ≥ 6).

Reproduce (pinned: Python 3.12, numpy 2.4.6, scipy 1.17.1, as in /work/venv-torch):
    python scripts/fit-spline.py > /tmp/table.rs
and compare with `ir/src/spline.rs`'s `TABLES`.
"""
import math

import numpy as np
from scipy.special import erf
from scipy.stats import norm

R = 4.0
DEGREE = 3
K0 = math.sqrt(2 / math.pi)

FUNCTIONS = {
    # name: (h, where h becomes its limit, number of segments)
    "Erf": (erf, 3.0, 6),
    "Gelu": (lambda a: a * norm.cdf(-a), 4.0, 5),
    "GeluTanh": (lambda a: a * 0.5 * (1 - np.tanh(K0 * (a + 0.044715 * a**3))), 4.0, 5),
}


def fit(h, lo, hi, iters=30):
    """Minimax-like fit (Lawson) of degree DEGREE in u = a/R on [lo, hi]: (coeffs, max error)."""
    a = np.linspace(lo, hi, 4001)
    v = np.vander(a / R, DEGREE + 1, increasing=True)
    y = h(a)
    w = np.ones_like(a)
    for _ in range(iters):
        c, *_ = np.linalg.lstsq(v * np.sqrt(w)[:, None], y * np.sqrt(w), rcond=None)
        e = np.abs(v @ c - y)
        w = w * (e + 1e-300)
        w /= w.sum()
    return c, e.max()


def knots(h, end, nseg):
    """Inner knots balancing the segments' errors on [0, end]."""
    lo, hi, best = 1e-9, 1.0, None
    for _ in range(40):
        target = (lo * hi) ** 0.5
        ks, x = [], 0.0
        for _ in range(nseg - 1):
            if fit(h, x, end, 20)[1] <= target:
                break
            a, b = x, end
            for _ in range(25):
                m = (a + b) / 2
                if fit(h, x, m, 20)[1] <= target:
                    a = m
                else:
                    b = m
            x = a
            ks.append(x)
        if fit(h, x, end, 20)[1] <= target:
            hi, best = target, ks
        else:
            lo = target
    return [round(k * 64) / 64 for k in best]


for name, (h, end, nseg) in FUNCTIONS.items():
    ks = knots(h, end, nseg)
    edges = [0.0] + ks + [end]
    print(f"// {name}")
    print(f"knots: &{[*ks, end]},")
    print("coeffs: &[")
    for lo, hi in zip(edges[:-1], edges[1:]):
        c, e = fit(h, lo, hi)
        print(f"    [{', '.join(repr(float(v)) for v in c)}], // [{lo}, {hi}): {e:.3e}")
    print("],")
