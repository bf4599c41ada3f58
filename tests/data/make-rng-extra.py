#!/usr/bin/python3
"""Writes rng-extra.tsv: more numpy.random.default_rng outputs for tests/unit/test_rng.c,
beyond the shared numpy-rng-vectors.tsv: seeds of more than 64 bits (SeedSequence folds
words past the fourth into the pool), long runs that reach the ziggurat's tail (|z| > R)
and wedge paths many times, and uniform draws.

Run with numpy (made with 1.24):  /usr/bin/python3 tests/data/make-rng-extra.py
Rows (tab-separated):
  seedseq  SEED  pool  w0 w1 w2 w3                (uint32 hex)
  seedseq  SEED  state  u0 u1 u2 u3               (generate_state(4, uint64), hex)
  raw      SEED  first next_uint64  0xHEX         (bit_generator.random_raw())
  std      SEED  N  i=repr ...                    (standard_normal(N): every value with
                                                   |z| > 3.6541528853610088, every 4999th, the last)
  random   SEED  N  i=repr ...                    (random(N): every 997th and the last)
  normal   SEED  N  LOC  SCALE  i=repr ...        (normal(LOC, SCALE, N): every 97th and the
                                                   last; scales that are not powers of two
                                                   catch a fused multiply-add)
"""
import os
import numpy as np

R = 3.6541528853610087963519472518
here = os.path.dirname(os.path.abspath(__file__))
seeds = [0, 1, 124, 2**32, 2**64 + 1, 2**127 + 3, 2**200 + 12345, 10**50 + 7,
         int("9" * 80), int("31415926535" * 70)]
lines = ["# numpy.random.default_rng outputs made by make-rng-extra.py with numpy %s"
         % np.__version__]
for s in seeds:
    ss = np.random.SeedSequence(s)
    lines.append("seedseq\t%d\tpool\t%s" % (s, " ".join("%08x" % w for w in ss.pool)))
    st = ss.generate_state(4, np.uint64)
    lines.append("seedseq\t%d\tstate\t%s" % (s, " ".join("%016x" % w for w in st)))
    raw = np.random.default_rng(s).bit_generator.random_raw()
    lines.append("raw\t%d\tfirst next_uint64\t0x%016x" % (s, int(raw)))
for s, n in [(124, 200000), (90, 200000), (2**64 + 1, 100000), (10**50 + 7, 100000), (7, 50000)]:
    z = np.random.default_rng(s).standard_normal(n)
    keep = [i for i in range(n) if abs(z[i]) > R or i % 4999 == 0 or i == n - 1]
    lines.append("std\t%d\t%d\t%s" % (s, n, " ".join("%d=%r" % (i, float(z[i])) for i in keep)))
for s, n in [(5, 10000), (2**200 + 12345, 10000)]:
    u = np.random.default_rng(s).random(n)
    keep = [i for i in range(n) if i % 997 == 0 or i == n - 1]
    lines.append("random\t%d\t%d\t%s" % (s, n, " ".join("%d=%r" % (i, float(u[i])) for i in keep)))
for s, n, loc, scale in [(124, 5000, 3.0, 1.7), (11, 5000, -0.3, 0.1), (2**70, 3000, 1e-3, 123.456)]:
    z = np.random.default_rng(s).normal(loc, scale, n)
    keep = [i for i in range(n) if i % 97 == 0 or i == n - 1]
    lines.append("normal\t%d\t%d\t%r\t%r\t%s" % (s, n, loc, scale,
                 " ".join("%d=%r" % (i, float(z[i])) for i in keep)))
with open(os.path.join(here, "rng-extra.tsv"), "w") as f:
    f.write("\n".join(lines) + "\n")
