#!/usr/bin/env python3
"""Writes tests/data/torch-norms: torch's own CPU outputs and running buffers for BatchNorm1d,
BatchNorm2d, GroupNorm, InstanceNorm and LayerNorm, against which tests/audit/torch_norms.lua
checks normscope's order="torch" bit for bit.

cases.tsv has one line per case:
  case     the file prefix: CASE.x.npy (input), CASE.y.npy (torch's output), CASE.gamma.npy and
           CASE.beta.npy (weight and bias, when the module has them), CASE.rm0.npy/CASE.rv0.npy
           (running buffers before the call), CASE.rm1.npy/CASE.rv1.npy (after it)
  kind     batch, group, instance or layer
  dtype    the storage dtype of x and y: fp32, fp64, bf16 (stored as uint16 bit patterns,
           ns.load(f, {bf16 = true})) or fp16
  mode     train or eval
  groups   GroupNorm's groups, else -
  dims     LayerNorm's normalized trailing dims, else -
  eps      the module's eps
  momentum the module's momentum, "none" (cumulative average), or - without running buffers
  count    num_batches_tracked before the call, or -
and a last column saying in words what the case is.

buffers.safetensors holds bn2d_cma's buffers before the call with num_batches_tracked as
torch stores it (I64, 0-d), and I64 integers a double holds exactly and not; count.npy is the
same count as np.save writes it, and inexact_*.npy / exact_u8.npy 8-byte integers past 2^53.

The 16-bit cases are what torch does on CPU: bf16 BatchNorm with float weights and buffers
(the kernel computes in float and rounds y once), and 16-bit storage around a float module
(x rounded to bf16/fp16, the module in float, y rounded). torch 1.13 has no fp16 kernel for
any of these norms on CPU.

One torch thread (the BatchNorm1d (N, C) kernel splits rows between threads).
Run from the top folder: /usr/bin/python3 tests/data/make-torch-norms.py
Without torch it exits 77 (a skip, in automake's convention).
"""
import os
import sys

try:
    import numpy as np
    import torch
except ImportError:
    print("make-torch-norms.py: needs numpy and torch (python3-torch)", file=sys.stderr)
    sys.exit(77)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch-norms")
os.makedirs(OUT, exist_ok=True)
torch.set_num_threads(1)
g = torch.Generator().manual_seed(20261202)
rows = []


def save(name, t):
    t = t.detach()
    if t.dtype == torch.bfloat16:
        a = t.view(torch.int16).numpy().view(np.uint16).astype("<u2")
    elif t.dtype == torch.float16:
        a = t.numpy().astype("<f2")
    elif t.dtype == torch.float64:
        a = t.numpy().astype("<f8")
    else:
        a = t.float().numpy().astype("<f4")
    np.save(os.path.join(OUT, name + ".npy"), a)


def acts(shape, C_axis=1, offset=10.0, hard=None):
    """Activations with per-channel offsets and scales; hard: a channel with mean 300 and std
    0.05 (x*alpha + beta cancels there)."""
    C = shape[C_axis]
    view = [1] * len(shape)
    view[C_axis] = C
    x = torch.randn(*shape, generator=g)
    x = x * (0.2 + 3 * torch.rand(C, generator=g)).view(view)
    x = x + offset * torch.randn(C, generator=g).view(view)
    if hard is not None:
        idx = [slice(None)] * len(shape)
        idx[C_axis] = hard
        x[tuple(idx)] = 300 + 0.05 * torch.randn(x[tuple(idx)].shape, generator=g)
    return x.float().contiguous()


def affine(mod, C):
    with torch.no_grad():
        mod.weight.copy_(1 + 0.3 * torch.randn(C, generator=g))
        mod.bias.copy_(0.2 * torch.randn(C, generator=g))


def row(case, kind, dtype, mode, groups="-", dims="-", eps=1e-5, momentum="-", count="-",
        what=""):
    rows.append("\t".join(str(v) for v in (case, kind, dtype, mode, groups, dims, eps, momentum,
                                           count, what)))


def run_bn(case, mod, x, mode, what, dtype="fp32", store=None, count0=None):
    """mod: a BatchNorm or InstanceNorm module (float); x: its input (already in the dtype the
    module sees); store: the storage dtype of x and y in the files (default x's)."""
    C = mod.num_features
    if mod.track_running_stats:
        with torch.no_grad():
            mod.running_mean.copy_(3 * torch.randn(C, generator=g))
            mod.running_var.copy_(0.1 + 4 * torch.rand(C, generator=g))
            if count0 is not None:
                mod.num_batches_tracked.fill_(count0)
        save(case + ".rm0", mod.running_mean)
        save(case + ".rv0", mod.running_var)
        count = int(mod.num_batches_tracked.item())
    mod.train(mode == "train")
    with torch.no_grad():
        y = mod(x)
    xs, ys = x, y
    if store is not None:
        xs, ys = x.to(store), y.to(store)
    save(case + ".x", xs)
    save(case + ".y", ys)
    if mod.affine:
        save(case + ".gamma", mod.weight)
        save(case + ".beta", mod.bias)
    mom, cnt = "-", "-"
    if mod.track_running_stats:
        save(case + ".rm1", mod.running_mean)
        save(case + ".rv1", mod.running_var)
        mom = "none" if mod.momentum is None else mod.momentum
        cnt = count
    kind = "instance" if isinstance(mod, torch.nn.modules.instancenorm._InstanceNorm) else "batch"
    row(case, kind, dtype, mode, eps=mod.eps, momentum=mom, count=cnt, what=what)


# ---- BatchNorm2d: (N, C, H, W), double sums, x*alpha + beta ----
bn = torch.nn.BatchNorm2d(8)
affine(bn, 8)
run_bn("bn2d_train", bn, acts((4, 8, 6, 6), hard=3), "train",
       "BatchNorm2d(8) train, channel 3 at mean 300 std 0.05")
run_bn("bn2d_eval", bn, acts((4, 8, 6, 6), hard=3), "eval", "BatchNorm2d(8) eval")
bn = torch.nn.BatchNorm2d(8, momentum=None)
affine(bn, 8)
run_bn("bn2d_cma", bn, acts((4, 8, 5, 7)), "train",
       "BatchNorm2d(8, momentum=None) train from num_batches_tracked 3", count0=3)
bn = torch.nn.BatchNorm2d(6, affine=False)
run_bn("bn2d_plain", bn, acts((3, 6, 7, 7)), "train", "BatchNorm2d(6, affine=False) train")
# ---- BatchNorm1d: (N, C) takes torch's channels-last kernel (float sums, fused variance);
# (N, C, L) the contiguous one ----
bn = torch.nn.BatchNorm1d(16)
affine(bn, 16)
run_bn("bn1d_nc_train", bn, acts((64, 16)), "train", "BatchNorm1d(16) on (N, C) train")
run_bn("bn1d_nc_eval", bn, acts((64, 16)), "eval", "BatchNorm1d(16) on (N, C) eval")
bn = torch.nn.BatchNorm1d(6)
affine(bn, 6)
run_bn("bn1d_ncl_train", bn, acts((8, 6, 20)), "train", "BatchNorm1d(6) on (N, C, L) train")
run_bn("bn1d_ncl_eval", bn, acts((8, 6, 20)), "eval", "BatchNorm1d(6) on (N, C, L) eval")
# ---- InstanceNorm: batch_norm of x viewed as (1, N*C, H, W) ----
inn = torch.nn.InstanceNorm2d(6)
run_bn("in_plain", inn, acts((4, 6, 9, 9)), "train", "InstanceNorm2d(6)")
inn = torch.nn.InstanceNorm2d(6, affine=True)
affine(inn, 6)
run_bn("in_affine", inn, acts((4, 6, 9, 9)), "train", "InstanceNorm2d(6, affine=True)")
inn = torch.nn.InstanceNorm2d(5, affine=True, track_running_stats=True)
affine(inn, 5)
run_bn("in_track_train", inn, acts((3, 5, 8, 8)), "train",
       "InstanceNorm2d(5, track_running_stats) train: buffers averaged over 3 examples")
run_bn("in_track_eval", inn, acts((3, 5, 8, 8)), "eval",
       "InstanceNorm2d(5, track_running_stats) eval: the running buffers")
inn = torch.nn.InstanceNorm1d(3, track_running_stats=True)
run_bn("in1d_track_train", inn, acts((20, 3, 25)), "train",
       "InstanceNorm1d(3, track_running_stats) train over 20 examples")
# the average over the examples is torch's sum over axis 0, whose order depends on the
# number of examples and channels (torchorder.h, ns_torch_sum_dim0)
for case, shape in {"in1d_track_n300": (300, 5, 2), "in1d_track_c1": (40, 1, 6),
                    "in1d_track_c12": (70, 12, 3), "in1d_track_c40": (20, 40, 3)}.items():
    inn = torch.nn.InstanceNorm1d(shape[1], track_running_stats=True)
    run_bn(case, inn, acts(shape), "train",
           "InstanceNorm1d(%d, track_running_stats) train over %d examples" % shape[1::-1])
# ---- GroupNorm: LayerNorm's Welford cascade per group ----
for case, (G, C, shape, aff, what) in {
        "gn_g4": (4, 12, (3, 12, 5, 7), True, "GroupNorm(4, 12)"),
        "gn_g1": (1, 16, (2, 16, 6, 6), True, "GroupNorm(1, 16)"),
        "gn_g8_plain": (8, 32, (2, 32, 8, 8), False, "GroupNorm(8, 32, affine=False)"),
        "gn_g32": (32, 64, (2, 64, 4, 4), True, "GroupNorm(32, 64)"),
}.items():
    gn = torch.nn.GroupNorm(G, C, affine=aff)
    if aff:
        affine(gn, C)
    x = acts(shape)
    with torch.no_grad():
        y = gn(x)
    save(case + ".x", x)
    save(case + ".y", y)
    if aff:
        save(case + ".gamma", gn.weight)
        save(case + ".beta", gn.bias)
    row(case, "group", "fp32", "train", groups=G, eps=gn.eps, what=what)
# ---- LayerNorm ----
for case, (shape, nd, what) in {"ln_last": ((2, 5, 48), 1, "LayerNorm(48)"),
                                "ln_last2": ((3, 6, 20), 2, "LayerNorm([6, 20])")}.items():
    ln = torch.nn.LayerNorm(list(shape[-nd:]))
    with torch.no_grad():
        ln.weight.copy_(1 + 0.3 * torch.randn(shape[-nd:], generator=g))
        ln.bias.copy_(0.2 * torch.randn(shape[-nd:], generator=g))
    x = acts(shape, C_axis=len(shape) - 1)
    with torch.no_grad():
        y = ln(x)
    save(case + ".x", x)
    save(case + ".y", y)
    save(case + ".gamma", ln.weight.reshape(-1))
    save(case + ".beta", ln.bias.reshape(-1))
    row(case, "layer", "fp32", "train", dims=nd, eps=ln.eps, what=what)
# ---- 16 bits ----
bn = torch.nn.BatchNorm2d(8)
affine(bn, 8)
run_bn("bn2d_bf16_train", bn, acts((4, 8, 5, 5)).bfloat16(), "train",
       "bf16 input to a float BatchNorm2d (torch's mixed kernel) train", dtype="bf16")
run_bn("bn2d_bf16_eval", bn, acts((4, 8, 5, 5)).bfloat16(), "eval",
       "bf16 input to a float BatchNorm2d eval", dtype="bf16")
bn = torch.nn.BatchNorm1d(16)
affine(bn, 16)
run_bn("bn1d_fp16_train", bn, acts((32, 16)).half().float(), "train",
       "fp16 storage around a float BatchNorm1d", dtype="fp16", store=torch.float16)
gn = torch.nn.GroupNorm(4, 12)
affine(gn, 12)
for dt, tdt in (("bf16", torch.bfloat16), ("fp16", torch.float16)):
    x = acts((2, 12, 6, 6)).to(tdt).float()
    with torch.no_grad():
        y = gn(x)
    case = "gn_" + dt
    save(case + ".x", x.to(tdt))
    save(case + ".y", y.to(tdt))
    save(case + ".gamma", gn.weight)
    save(case + ".beta", gn.bias)
    row(case, "group", dt, "train", groups=4, eps=gn.eps,
        what="%s storage around a float GroupNorm(4, 12)" % dt)
inn = torch.nn.InstanceNorm2d(4, affine=True, track_running_stats=True)
affine(inn, 4)
run_bn("in_fp16_train", inn, acts((2, 4, 6, 6)).half().float(), "train",
       "fp16 storage around a float InstanceNorm2d(track_running_stats)", dtype="fp16",
       store=torch.float16)
# ---- torch's double kernels ----
bn = torch.nn.BatchNorm2d(4).double()
affine(bn, 4)
run_bn("bn2d_fp64_train", bn, acts((3, 4, 5, 5)).double(), "train", "BatchNorm2d in double",
       dtype="fp64")
bn = torch.nn.BatchNorm1d(5).double()
affine(bn, 5)
run_bn("bn1d_fp64_train", bn, acts((40, 5)).double(), "train", "BatchNorm1d (N, C) in double",
       dtype="fp64")
gn = torch.nn.GroupNorm(2, 6).double()
affine(gn, 6)
x = acts((2, 6, 5, 5)).double()
with torch.no_grad():
    y = gn(x)
save("gn_fp64.x", x)
save("gn_fp64.y", y)
save("gn_fp64.gamma", gn.weight)
save("gn_fp64.beta", gn.bias)
row("gn_fp64", "group", "fp64", "train", groups=2, eps=gn.eps, what="GroupNorm(2, 6) in double")

# ---- channels_last memory: torch takes its channels-last kernel (float sums, fused variance); the
# files hold x and y as (N, H, W, C) arrays (a case named *_nhwc: axes 1, 2, 3, no affine)
bn = torch.nn.BatchNorm2d(8, affine=False)
xl = acts((4, 8, 6, 6)).to(memory_format=torch.channels_last)
with torch.no_grad():
    bn.running_mean.copy_(3 * torch.randn(8, generator=g))
    bn.running_var.copy_(0.1 + 4 * torch.rand(8, generator=g))
save("bn2d_nhwc.rm0", bn.running_mean)
save("bn2d_nhwc.rv0", bn.running_var)
bn.train()
with torch.no_grad():
    yl = bn(xl)
save("bn2d_nhwc.x", xl.permute(0, 2, 3, 1).contiguous())
save("bn2d_nhwc.y", yl.permute(0, 2, 3, 1).contiguous())
save("bn2d_nhwc.rm1", bn.running_mean)
save("bn2d_nhwc.rv1", bn.running_var)
row("bn2d_nhwc", "batch", "fp32", "train", eps=bn.eps, momentum=bn.momentum, count=0,
    what="BatchNorm2d(8) on a channels_last tensor, stored as (N, H, W, C)")
# ---- the audit's precision column: BatchNorm2d without affine on a channel at mean 300,
# std 0.05, where torch's x*alpha + beta cancels (its error is torch's own, 100x fp64's)
bn = torch.nn.BatchNorm2d(6, affine=False, track_running_stats=False)
xh = acts((4, 6, 8, 8), hard=2)
with torch.no_grad():
    yh = bn(xh)
save("audit_bn_hard.x", xh)
save("audit_bn_hard.y", yh)
xn = xh.numpy()
yn = (xn - xn.mean(axis=(0, 2, 3), keepdims=True)) / np.sqrt(
    xn.var(axis=(0, 2, 3), keepdims=True) + np.float32(1e-5))
np.save(os.path.join(OUT, "audit_bn_hard.y_numpy.npy"), yn.astype("<f4"))
# ---- I64 buffers: num_batches_tracked as torch keeps it (a 0-d int64), in .npy and in a
# safetensors file written by hand (the format: an 8-byte little-endian header length, the
# JSON header, the data), with integers at and past 2^53 ----
import json
import struct


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [off, off + len(data)]}
        blobs.append(data)
        off += len(data)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


nbt = 3  # bn2d_cma's num_batches_tracked before its call
write_safetensors(os.path.join(OUT, "buffers.safetensors"), {
    "bn.running_mean": ("F32", [8], np.load(os.path.join(OUT, "bn2d_cma.rm0.npy")).tobytes()),
    "bn.running_var": ("F32", [8], np.load(os.path.join(OUT, "bn2d_cma.rv0.npy")).tobytes()),
    "bn.num_batches_tracked": ("I64", [], torch.tensor(nbt).numpy().astype("<i8").tobytes()),
    "exact": ("I64", [3], np.array([2**53, -2**53, -5], dtype="<i8").tobytes()),
    "inexact": ("I64", [2], np.array([7, 2**53 + 1], dtype="<i8").tobytes()),
})
np.save(os.path.join(OUT, "count.npy"), torch.tensor(nbt).numpy().astype("<i8"))
np.save(os.path.join(OUT, "inexact_i8.npy"), np.array([1, -(2**53) - 1], dtype="<i8"))
np.save(os.path.join(OUT, "inexact_u8.npy"), np.array([2**64 - 1], dtype="<u8"))
np.save(os.path.join(OUT, "exact_u8.npy"), np.array([2**63, 2**53], dtype="<u8"))

# ---- numpy: a user's float32 normalization, (x - mean) / sqrt(var + eps) over the axes, for
# order = "numpy" (numpy.tsv: case, kind, 1-based axes or -, groups or -, centered, affine) ----
nrows = []
rng = np.random.RandomState(7)


def np_case(case, kind, shape, axes, groups=None, center=True, affine=False, what=""):
    x = (rng.randn(*shape) * (0.3 + 3 * rng.rand(*([1] + list(shape[1:])))) +
         20 * rng.randn(*([1] + list(shape[1:])))).astype(np.float32)
    xs = x.reshape(shape[0], groups, -1) if groups else x
    ax = (2,) if groups else axes
    eps = np.float32(1e-5)
    if center:
        y = (xs - xs.mean(axis=ax, keepdims=True)) / np.sqrt(xs.var(axis=ax, keepdims=True) + eps)
    else:
        y = xs / np.sqrt(np.mean(xs * xs, axis=ax, keepdims=True) + eps)
    y = y.reshape(shape)
    if affine:
        cshape = [1] * len(shape)
        cshape[1] = shape[1]
        gam = (1 + 0.3 * rng.randn(shape[1])).astype(np.float32)
        bet = (0.2 * rng.randn(shape[1])).astype(np.float32)
        y = y * gam.reshape(cshape) + bet.reshape(cshape)
        np.save(os.path.join(OUT, case + ".gamma.npy"), gam.astype("<f4"))
        np.save(os.path.join(OUT, case + ".beta.npy"), bet.astype("<f4"))
    assert y.dtype == np.float32
    np.save(os.path.join(OUT, case + ".x.npy"), x.astype("<f4"))
    np.save(os.path.join(OUT, case + ".y.npy"), y.astype("<f4"))
    nrows.append("\t".join(str(v) for v in (
        case, kind, ",".join(str(a + 1) for a in axes) if axes else "-", groups or "-",
        int(center), int(affine), what)))


np_case("np_bn2d", "batch", (4, 8, 6, 6), (0, 2, 3), affine=True,
        what="over (N, H, W): pairwise runs of H*W added in order")
np_case("np_bn2d_2304", "batch", (2, 2, 48, 48), (0, 2, 3), what="runs of 48*48")
np_case("np_bn1d_nc", "batch", (64, 16), (0,), what="(N, C) over N: strided, in index order")
np_case("np_bn1d_ncl", "batch", (8, 6, 20), (0, 2), what="(N, C, L) over (N, L)")
np_case("np_ln", "layer", (3, 5, 300), (2,), what="the last axis: one pairwise sum")
np_case("np_in", "instance", (2, 3, 10, 10), (2, 3), what="instance norm over (H, W)")
np_case("np_gn", "group", (2, 12, 5, 5), None, groups=4, what="x.reshape(N, G, -1) over axis 2")
np_case("np_all", "layer", (3, 700), (0, 1), what="every axis: one pairwise sum in chunks")
np_case("np_mixed", "layer", (3, 4, 5, 6), (1, 3), what="axes 2 and 4: runs of 6")
np_case("np_rms", "rms", (4, 33), (1,), center=False, what="np.sqrt(np.mean(x * x) + eps)")
with open(os.path.join(OUT, "numpy.tsv"), "w") as f:
    f.write("# case\tkind\taxes\tgroups\tcentered\taffine\twhat (numpy %s)\n" % np.__version__)
    for r in nrows:
        f.write(r + "\n")

with open(os.path.join(OUT, "cases.tsv"), "w") as f:
    f.write("# case\tkind\tdtype\tmode\tgroups\tdims\teps\tmomentum\tcount\twhat (torch %s)\n"
            % torch.__version__)
    for r in rows:
        f.write(r + "\n")
