#!/usr/bin/python3
"""Times numpy and torch on the cases of tests/bench/bench_norm (its --cases list on stdin).

Prints "i<TAB>numpy_ms<TAB>torch_ms" per case, best of 7 runs; '-' where the library is
missing or has no such dtype (numpy has no bf16; fp16 cases are left to the fp32 ratio).
numpy: mean and var over the axes, then (x - mean) / sqrt(var + eps) (rms: x / sqrt(mean(x^2)
+ eps)); torch: torch.nn.functional's batch_norm, group_norm, instance_norm, layer_norm, and
x * rsqrt(mean(x^2) + eps) for rms (torch 1.13 has no rms_norm), torch.set_num_threads(1).
"""
import sys
import time

try:
    import numpy as np
except ImportError:
    np = None
try:
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(1)
except ImportError:
    torch = None

EPS = 1e-5
REPS = 7


def best(f):
    t = 1e30
    for _ in range(REPS):
        t0 = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - t0)
    return t * 1e3


def np_case(kind, shape, groups, x):
    if kind == "rms":
        return lambda: x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS)
    if kind == "group":
        n = shape[0]

        def f():
            g = x.reshape(n, groups, -1)
            m = g.mean(axis=2, keepdims=True)
            v = g.var(axis=2, keepdims=True)
            return ((g - m) / np.sqrt(v + EPS)).reshape(shape)
        return f
    axes = {"batch": (0, 2, 3) if len(shape) == 4 else (0,),
            "instance": (2, 3),
            "layer": tuple(range(1, len(shape)))}[kind]

    def f():
        m = x.mean(axis=axes, keepdims=True)
        v = x.var(axis=axes, keepdims=True)
        return (x - m) / np.sqrt(v + EPS)
    return f


def torch_case(kind, shape, groups, t):
    if kind == "batch":
        return lambda: F.batch_norm(t, None, None, training=True, eps=EPS)
    if kind == "group":
        return lambda: F.group_norm(t, groups, eps=EPS)
    if kind == "instance":
        return lambda: F.instance_norm(t, eps=EPS)
    if kind == "layer":
        return lambda: F.layer_norm(t, tuple(shape[1:]), eps=EPS)
    return lambda: t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + EPS)


for line in sys.stdin:
    i, kind, shape, groups, dtype = line.split()
    shape = tuple(int(v) for v in shape.strip("()").split(","))
    groups = int(groups)
    npd = {"fp32": "float32", "fp64": "float64"}.get(dtype)
    a = b = "-"
    if np is not None and npd:
        rng = np.random.default_rng(1)
        x = (rng.random(shape) * 4.0 - 1.0).astype(npd)
        a = "%.2f" % best(np_case(kind, shape, groups, x))
        if torch is not None:
            b = "%.2f" % best(torch_case(kind, shape, groups, torch.from_numpy(x)))
        del x
    print("%s\t%s\t%s" % (i, a, b), flush=True)
