#!/usr/bin/env python3
"""Writes tests/data/torch-running/: a torch BatchNorm2d(3, momentum=None) trained for five
batches, its state (running_mean, running_var, num_batches_tracked, an I64) as
bn.safetensors, and one more batch x.npy with what torch's cumulative update makes of it
(after.npy: mean then var, float64). Skipped (exit 77) without torch and safetensors'
format written by hand (torch 1.13 has no safetensors writer)."""
import json, os, struct, sys
try:
    import numpy as np
    import torch
except ImportError:
    sys.exit(77)
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch-running")
os.makedirs(out, exist_ok=True)
torch.manual_seed(7)
bn = torch.nn.BatchNorm2d(3, momentum=None)
bn.train()
for _ in range(5):
    bn(torch.randn(4, 3, 5, 5) * 2 + 1)
st = {k: v.detach().clone().numpy() for k, v in bn.state_dict().items()
      if k in ("running_mean", "running_var", "num_batches_tracked")}
hdr, data = {}, b""
for k in ("running_mean", "running_var", "num_batches_tracked"):
    a = st[k]
    dt = {"float32": "F32", "int64": "I64"}[str(a.dtype)]
    b = a.astype(a.dtype.newbyteorder("<")).tobytes()
    hdr["bn." + k] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [len(data), len(data) + len(b)]}
    data += b
h = json.dumps(hdr).encode()
h += b" " * (-len(h) % 8)
with open(os.path.join(out, "bn.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + data)
x = torch.randn(4, 3, 5, 5) * 3 - 2
np.save(os.path.join(out, "x.npy"), x.numpy())
bn(x)
after = (
        np.stack([bn.running_mean.double().numpy(), bn.running_var.double().numpy()]))
before = (
        np.stack([st["running_mean"].astype(np.float64), st["running_var"].astype(np.float64)]))

# torch's own move of each channel's running mean and variance, for the test to compare with
d = after - before
with open(os.path.join(out, "expected.tsv"), "w") as f:
    f.write("count\t%d\n" % int(st["num_batches_tracked"]))
    for c in range(3):
        f.write("move\t%d\t%.17g\t%.17g\n" % (c + 1, d[0, c], d[1, c]))
# the same state with a count a double cannot hold (2^53 + 1): refused
big = dict(hdr)
b = bytearray(data)
o = hdr["bn.num_batches_tracked"]["data_offsets"][0]
b[o:o + 8] = struct.pack("<q", 2**53 + 1)
with open(os.path.join(out, "bad-count.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h + bytes(b))
