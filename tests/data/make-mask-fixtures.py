#!/usr/bin/python3
"""Writes tests/data/mask.tsv: masked normalizations computed by numpy (masked arrays and
explicit selection of the kept elements), for tests/lua/mask.lua.

Run with numpy (made with 1.24):  /usr/bin/python3 tests/data/make-mask-fixtures.py
Rows (tab-separated): CASE.FIELD <TAB> comma-separated float64 reprs, C order. Fields:
  x, x.shape, mask, mask.shape   the input and its mask (1 keeps, 0 leaves out)
  y                              the masked normalization (0 at masked positions)
  mean, var, n                   per statistic, over the kept elements (n: their count)
  y.nomask                       the same spec without the mask (where it differs)
  y.unpadded                     (pad cases) each sequence's real tokens normalized alone,
                                 scattered back into the padded layout (0 at padding)
Cases and their specs are listed in tests/lua/mask.lua.
"""
import os
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
rows = ["# made by tests/data/make-mask-fixtures.py (numpy %s)" % np.__version__]


def put(name, arr):
    a = np.asarray(arr, dtype=np.float64).ravel(order="C")
    rows.append("%s\t%s" % (name, ",".join(repr(float(v)) for v in a)))


def masked_norm(x, keep, axes, eps=1e-5, ddof=0, center=True, gamma=None, beta=None,
                eps_at="var"):
    """numpy.ma: statistics over the kept elements along axes; 0 at masked positions."""
    xm = np.ma.array(x, mask=~keep)
    n = keep.sum(axis=axes, keepdims=True).astype(np.float64)
    mean = xm.mean(axis=axes, keepdims=True) if center else np.zeros_like(n)
    c = xm - mean
    var = (c * c).sum(axis=axes, keepdims=True) / (n - ddof)
    den = np.sqrt(var + eps) if eps_at == "var" else np.sqrt(var) + eps
    y = c / den
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    y = np.where(keep, np.ma.getdata(y), 0.0)
    return y, np.ma.getdata(mean), np.ma.getdata(var), n


def plain_norm(x, axes, eps=1e-5):
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def case(name, x, keep, axes, **kw):
    y, mean, var, n = masked_norm(x, keep, axes, **kw)
    put(name + ".x", x)
    put(name + ".x.shape", x.shape)
    mask = np.broadcast_to(keep, x.shape).astype(np.float64)
    put(name + ".mask", mask)
    put(name + ".mask.shape", mask.shape)
    put(name + ".y", y)
    put(name + ".mean", mean)
    put(name + ".var", var)
    put(name + ".n", n)
    return y


rng = np.random.default_rng(12)

# 002, Level 4 / exercise 12: a batch of 3 sequences of 5 positions x 4 features with
# lengths 5, 3 and 2, zero padding. Normalize each feature across the positions of its
# sequence (axis 2): masked, it equals each sequence's real tokens normalized alone.
B, T, D, lengths = 3, 5, 4, [5, 3, 2]
x = rng.normal(1.0, 2.0, size=(B, T, D))
keep = np.zeros((B, T, 1), dtype=bool)
for b, L in enumerate(lengths):
    keep[b, :L] = True
    x[b, L:] = 0.0
case("pad", x, np.broadcast_to(keep, x.shape), axes=(1,))
put("pad.y.nomask", plain_norm(x, axes=(1,)))
unpadded = np.zeros_like(x)
for b, L in enumerate(lengths):  # explicit selection: only the real tokens exist
    unpadded[b, :L] = plain_norm(x[b, :L], axes=(0,))
put("pad.y.unpadded", unpadded)

# The same batch, statistics over the batch and the positions (axes 1, 2: one per
# feature over all 10 real tokens), and its unpadded computation: the real tokens
# stacked into a (10, 4) matrix, batch norm down its rows.
case("padbt", x, np.broadcast_to(keep, x.shape), axes=(0, 1))
real = np.concatenate([x[b, :L] for b, L in enumerate(lengths)], axis=0)
rb = plain_norm(real, axes=(0,))
back = np.zeros_like(x)
r = 0
for b, L in enumerate(lengths):
    back[b, :L] = rb[r:r + L]
    r += L
put("padbt.y.unpadded", back)
put("padbt.y.nomask", plain_norm(x, axes=(0, 1)))

# An irregular elementwise mask, layer norm over the last axis, ddof 1, gamma and beta per
# element (the last axis), eps at the std.
x2 = rng.normal(0.0, 1.0, size=(4, 6))
keep2 = rng.random((4, 6)) < 0.7
keep2[:, 0] = True
keep2[:, 1] = True  # at least 2 kept per row for ddof 1
gamma = rng.normal(1.0, 0.3, size=6)
beta = rng.normal(0.0, 0.3, size=6)
case("ln", x2, keep2, axes=(1,), ddof=1, gamma=gamma, beta=beta, eps_at="std", eps=1e-3)
put("ln.gamma", gamma)
put("ln.beta", beta)

# RMS over the last axis with a (1, 6) mask broadcast over the rows.
keep3 = np.array([[True, True, False, True, False, True]])
case("rms", x2, np.broadcast_to(keep3, x2.shape), axes=(1,), center=False)
put("rms.mask.small", keep3.astype(np.float64))

# Moments of the kept elements of a vector (numpy on the explicit selection).
v = rng.normal(3.0, 1.5, size=12)
kv = np.array([1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 0, 1], dtype=bool)
put("mom.x", v)
put("mom.mask", kv.astype(np.float64))
put("mom.mean", [v[kv].mean()])
put("mom.var", [v[kv].var()])
put("mom.var1", [v[kv].var(ddof=1)])
put("mom.n", [kv.sum()])

with open(os.path.join(here, "mask.tsv"), "w") as f:
    f.write("\n".join(rows) + "\n")
