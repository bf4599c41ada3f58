#!/usr/bin/python3
"""Writes tests/data/pairwise.tsv: what numpy's float32 reductions give on data that both
this script and tests/unit/test_kernels.c make from the same exact formula, so the C test
can check order = "pairwise" against numpy bit for bit without python.

Run with numpy (made with 1.24):  /usr/bin/python3 tests/data/make-pairwise.py
Data: value(i) = float32(((i * 2654435761) % 1000003 / 1000003.0 - 0.5) * (1.0 + (i % 13) * 100.0)
                 + SHIFT), i = 0, 1, ... (every double operation is exact or correctly rounded).
Rows (tab-separated, floats as float.hex of the float32 value):
  moments  N  SHIFT  SUM  MEAN  VAR0  VAR1      x.sum(), x.mean(), x.var(), x.var(ddof=1)
  layer    ROWS  COLS  SHIFT  EPS  SHA256       y = (x - mean) / sqrt(var + eps) over axis 1
                                                in float32 (x reshaped to ROWS x COLS); the
                                                SHA-256 of y's little-endian float32 bytes
"""
import hashlib
import os
import numpy as np


def data(n, shift):
    i = np.arange(n, dtype=np.int64)
    v = ((i * 2654435761) % 1000003) / 1000003.0 - 0.5
    v = v * (1.0 + (i % 13) * 100.0) + shift
    return v.astype(np.float32)


def h(v):
    return float(np.float32(v)).hex()


here = os.path.dirname(os.path.abspath(__file__))
rows = []
for n in (1, 5, 7, 8, 9, 100, 128, 129, 1000, 4099, 8192, 8193, 16385, 20000, 100003):
    for shift in (0.0, 1000.0):
        x = data(n, shift)
        rows.append("moments\t%d\t%r\t%s\t%s\t%s\t%s" % (
            n, shift, h(x.sum()), h(x.mean()), h(x.var()), h(x.var(ddof=1)) if n > 1 else "nan"))
for r, c, shift in ((3, 1000, 0.0), (4, 129, 1000.0), (2, 8192, 10.0), (2, 5000, 0.0)):
    x = data(r * c, shift).reshape(r, c)
    eps = np.float32(1e-5)
    y = (x - x.mean(axis=1, keepdims=True)) / np.sqrt(x.var(axis=1, keepdims=True) + eps)
    assert y.dtype == np.float32
    rows.append("layer\t%d\t%d\t%r\t%r\t%s" % (
        r, c, shift, 1e-5, hashlib.sha256(y.astype("<f4").tobytes()).hexdigest()))
with open(os.path.join(here, "pairwise.tsv"), "w") as f:
    f.write("\n".join(rows) + "\n")
