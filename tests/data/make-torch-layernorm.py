#!/usr/bin/env python3
"""Writes tests/data/torch-layernorm: torch 1.13's own CPU LayerNorm outputs, against which
tests/audit/torch_layernorm.lua checks normscope's order="torch" (and measures the other
accumulations).

  x.npy, y.npy, y_plain.npy   a transformer-like residual stream (4, 32, 768) float32:
                              unit-normal activations, per-token offsets, per-feature
                              scales, and two outlier features (large constant offsets, as
                              in trained transformers); y through nn.LayerNorm(768) with
                              the weights below, y_plain without weights
                              (elementwise_affine=False: torch's scalar loop).
  gamma.npy, beta.npy         the LayerNorm's weight and bias (768,).
  y_numpy.npy                 the same layer norm written in numpy float32, as users write
                              it: (x - x.mean(-1)) / np.sqrt(x.var(-1) + eps), no weights
                              (numpy sums a contiguous row pairwise in float32).
  big.tsv                     the (8, 128, 768) input torch.manual_seed(0); torch.randn
                              (normscope rebuilds it with ns.torch_rng(0), bit for bit):
                              the sha256 of torch's output bytes (float32 little-endian)
                              with gamma/beta.
  big_mean.npy, big_rstd.npy  torch's per-row mean and rstd of that input (1024,).

Run from the top folder with torch 1.13: /usr/bin/python3 tests/data/make-torch-layernorm.py
"""
import hashlib
import os

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch-layernorm")
os.makedirs(OUT, exist_ok=True)
torch.set_num_threads(1)
D = 768

g = torch.Generator().manual_seed(1234)
gamma = (1 + 0.1 * torch.randn(D, generator=g)).float()
beta = (0.05 * torch.randn(D, generator=g)).float()

x = torch.randn(4, 32, D, generator=g)
x = x * (0.5 + torch.rand(D, generator=g))  # per-feature scale
x = x + 0.3 * torch.randn(4, 32, 1, generator=g)  # per-token offset
x[..., 17] += 25.0  # outlier features
x[..., 300] -= 12.0
x = x.float().contiguous()

ln = torch.nn.LayerNorm(D)
with torch.no_grad():
    ln.weight.copy_(gamma)
    ln.bias.copy_(beta)
    y = ln(x)
    y_plain = torch.nn.LayerNorm(D, elementwise_affine=False)(x)

xn = x.numpy()
mu = xn.mean(axis=-1, keepdims=True)
y_numpy = (xn - mu) / np.sqrt(xn.var(axis=-1, keepdims=True) + np.float32(1e-5))
assert y_numpy.dtype == np.float32
np.save(os.path.join(OUT, "y_numpy.npy"), y_numpy.astype("<f4"))

for name, t in (("x", x), ("y", y), ("y_plain", y_plain), ("gamma", gamma), ("beta", beta)):
    np.save(os.path.join(OUT, name + ".npy"), t.numpy().astype("<f4"))

torch.manual_seed(0)
xb = torch.randn(8, 128, D)
with torch.no_grad():
    yb, mb, rb = torch.native_layer_norm(xb, [D], gamma, beta, 1e-5)
np.save(os.path.join(OUT, "big_mean.npy"), mb.numpy().reshape(-1).astype("<f4"))
np.save(os.path.join(OUT, "big_rstd.npy"), rb.numpy().reshape(-1).astype("<f4"))
with open(os.path.join(OUT, "big.tsv"), "w") as f:
    f.write("# what\tsha256 of the float32 little-endian bytes (torch %s)\n" % torch.__version__)
    f.write("y\t%s\n" % hashlib.sha256(yb.numpy().astype("<f4").tobytes()).hexdigest())
