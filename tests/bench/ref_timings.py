#!/usr/bin/python3
"""Times numpy and torch on the cases of tests/bench/bench_norm (its --cases list on stdin).

Prints "i<TAB>numpy_ms<TAB>torch_ms" per case, best of 7 runs; '-' where the library is
missing or has no such dtype (numpy has no bf16; fp16 cases are left to the fp32 ratio).
numpy: mean and var over the axes, then (x - mean) / sqrt(var + eps) (rms: x / sqrt(mean(x^2)
+ eps)); torch: torch.nn.functional's batch_norm, group_norm, instance_norm, layer_norm, and
x * rsqrt(mean(x^2) + eps) for rms (torch 1.13 has no rms_norm), torch.set_num_threads(1). With BENCH_CPU set in the environment, CPU time of the process
(time.process_time) instead of wall time, as bench_norm measures then.

Then chapter 004's stack (ns.stack's defaults: 20 layers, width 256, batch 512, init 1/16,
default_rng(0), h first then each W, tanh, eps 1e-5 added to the std) as the plain numpy
loop, per norm none / batch / layer: one line "stack<TAB>NORM<TAB>cpu_min<TAB>cpu_median
<TAB>wall_min" (ms, 9 runs, CPU time of the whole process, BLAS threads included), doing
what ns.stack does per layer: draw W, z = h (init W), normalize, kurtosis and max |z|,
h = tanh(z), std and mean of h.
"""
import os
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


CLOCK = time.process_time if os.environ.get("BENCH_CPU") else time.perf_counter


def best(f):
    t = 1e30
    for _ in range(REPS):
        t0 = CLOCK()
        f()
        t = min(t, CLOCK() - t0)
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


def np_stack(norm, layers=20, width=256, batch=512, init=1.0 / 16, eps=EPS):
    rng = np.random.default_rng(0)
    h = rng.normal(0, 1, (batch, width))
    out = []
    for _ in range(layers):
        W = rng.normal(0, 1, (width, width)) * init
        z = h @ W
        if norm != "none":
            ax = 0 if norm == "batch" else 1
            z = (z - z.mean(axis=ax, keepdims=True)) / (z.std(axis=ax, keepdims=True) + eps)
        d = z - z.mean()
        v = (d * d).mean()
        kurt = ((d * d) ** 2).mean() / (v * v)
        h = np.tanh(z)
        out.append((h.std(), h.mean(), kurt, np.abs(z).max()))
    return out


if np is not None:
    for norm in ("none", "batch", "layer"):
        cpu, wall = [], []
        for _ in range(9):
            c0, w0 = time.process_time(), time.perf_counter()
            np_stack(norm)
            cpu.append(time.process_time() - c0)
            wall.append(time.perf_counter() - w0)
        cpu.sort()
        print("stack\t%s\t%.2f\t%.2f\t%.2f" % (norm, cpu[0] * 1e3, cpu[4] * 1e3, min(wall) * 1e3),
              flush=True)
