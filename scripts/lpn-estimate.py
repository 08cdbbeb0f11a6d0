#!/usr/bin/env python3
"""Bit security of sci's Ferret LPN sets, by the Liu–Wang–Yang–Yu estimator.

    python3 scripts/lpn-estimate.py CODE_ESTIMATORS_CHECKOUT

CODE_ESTIMATORS_CHECKOUT is a checkout of github.com/1234wangtr/Code_estimators
(commit 41e013c was used for the figures in ir/src/cost/ferret.rs); it needs numpy
and scipy (e.g. scipy 1.14.1, numpy 2.1.3). For each set (regular noise over F_2:
`n` outputs, a `k`-block secret, `t` noisy positions) the estimator's
`analysisfor2regular` prints every attack's cost (algebraic, ISD, hybrid, regular
ISD, AGB 2.0) and the script prints their minimum. Nothing of the estimator is copied
here; it is run from the given checkout. Takes tens of minutes on one core.

Re-run on 2026-12-06 (scipy 1.14.1, numpy 2.1.3): the bootstrapping set gives 135.8
bits (the minimum is BJMM ISD; algebraic 157.7, hybrid 146.4, regular ISD
160.3/139.6/141.3, AGB 2.0 173.6), as recorded. On the main set the estimator's AGB
attack raises decimal.InvalidOperation (a logarithm of a non-positive number for some
of its (f, μ)); the main set's recorded 150.4 bits comes from an earlier run.
"""

import sys
import time

# The sets of ir/src/cost/ferret.rs, as (name, n, k, t): `FERRET.boot` (which every
# set of `FERRET_SMALL` also uses) and `FERRET.main`.
SETS = [
    ("bootstrapping (FERRET.boot)", 607_232, 69_454, 593),
    ("main (FERRET.main)", 10_608_640, 589_824, 1295),
]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.path.insert(0, sys.argv[1])
    from all_estimator import analysisfor2regular

    for name, n, k, t in SETS:
        start = time.monotonic()
        try:
            bits = f"{analysisfor2regular(n, k, t):.1f} bits"
        except ArithmeticError as e:  # the estimator's own failure, reported as such
            bits = f"the estimator failed: {type(e).__name__} {e}"
        print(f"{name}: n = {n}, k = {k}, t = {t}: {bits} "
              f"({time.monotonic() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
