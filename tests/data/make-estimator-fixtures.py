#!/usr/bin/python3
"""Writes tests/data/estimators.tsv: numpy 1.24's quantile, median, sort and the Pearson
kurtosis (mean(d**4) / mean(d**2)**2, scipy.stats.kurtosis(fisher=False)) of inputs that
tests/lua/estimators.lua draws again with ns.rng (bit-compatible with default_rng), and
c4(n) in exact arithmetic (factorials and a 60-digit pi, no floating-point Gamma).

Rows: name<TAB>value (%.17g; several values comma-separated)."""
import os
from decimal import Decimal, getcontext
from math import factorial

import numpy as np

out = []


def row(name, values):
    values = np.atleast_1d(np.asarray(values, dtype=np.float64)).ravel()
    out.append(name + "\t" + ",".join("%.17g" % v for v in values))


def kurt(a, axis=None):
    d = a - a.mean(axis=axis, keepdims=True)
    return (d**4).mean(axis=axis, keepdims=True) / (d**2).mean(axis=axis, keepdims=True) ** 2


qs = [0, 0.1, 0.25, 0.3, 0.5, 0.7, 0.75, 0.9, 0.99, 1]
for seed, shape in [(7, (5, 6)), (8, (7,)), (9, (2, 3, 4))]:
    a = np.random.default_rng(seed).normal(0, 1, shape)
    tag = "rng%d" % seed
    row(tag + ".quantile", np.quantile(a, qs))
    row(tag + ".median", np.median(a))
    row(tag + ".kurtosis", kurt(a))
    row(tag + ".sort", np.sort(a))
    for ax in range(a.ndim):
        row(tag + ".kurtosis.axis%d" % (ax + 1), kurt(a, ax))
        row(tag + ".sort.axis%d" % (ax + 1), np.sort(a, axis=ax))
ties = np.array([3.0, 1.0, 2.0, 2.0, 5.0, 1.0])
row("ties.quantile", np.quantile(ties, qs))
row("ties.median", np.median(ties))

getcontext().prec = 60
PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459")


def c4(n):
    # Gamma(m + 1/2) = (2m)! sqrt(pi) / (4^m m!), Gamma(m) = (m - 1)!
    def g(twice):  # Gamma(twice / 2)
        if twice % 2 == 0:
            return Decimal(factorial(twice // 2 - 1))
        m = (twice - 1) // 2
        return Decimal(factorial(2 * m)) * PI.sqrt() / (Decimal(4) ** m * Decimal(factorial(m)))

    return (Decimal(2) / Decimal(n - 1)).sqrt() * g(n) / g(n - 1)


ns = [2, 3, 4, 5, 8, 32, 256, 299, 300, 301, 302, 1000, 1001, 10000, 100001]
row("c4.n", ns)
row("c4", [float(c4(n)) for n in ns])

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "estimators.tsv")
with open(path, "w") as f:
    f.write("# made by tests/data/make-estimator-fixtures.py (numpy %s)\n" % np.__version__)
    f.write("\n".join(out) + "\n")
