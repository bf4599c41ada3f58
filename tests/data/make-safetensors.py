#!/usr/bin/env python3
"""Writes the safetensors fixtures under tests/data/safetensors with an independent
writer: only struct and json, not the safetensors package and not normscope.

  small.safetensors     tensors of each loadable dtype (and one I32, which is listed but
                        does not load), with __metadata__; small.tsv lists every value
                        (name, flat index, value as %.17g) as this script computed it.
  bad-*.safetensors     malformed files; bad.tsv gives each file and a word its error
                        message must contain.
  torch.safetensors     (when torch is installed) a state dict of real modules, their
                        inputs and torch's outputs in eval and train mode:
                        BatchNorm2d(4) after a Conv2d, GroupNorm(4, 8), LayerNorm(32).

Run from the top folder: python3 tests/data/make-safetensors.py
"""
import json
import os
import random
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "safetensors")

SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I32": 4, "I64": 8}


def f32_bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def bf16_pack(v):
    """v must be exactly representable in bf16 (the low 16 bits of its fp32 are 0)."""
    b = f32_bits(v)
    assert b & 0xFFFF == 0, v
    return struct.pack("<H", b >> 16)


def pack(dtype, values):
    if dtype == "F64":
        return struct.pack("<%dd" % len(values), *values)
    if dtype == "F32":
        return struct.pack("<%df" % len(values), *values)
    if dtype == "F16":
        return struct.pack("<%de" % len(values), *values)
    if dtype == "BF16":
        return b"".join(bf16_pack(v) for v in values)
    if dtype == "I32":
        return struct.pack("<%di" % len(values), *values)
    if dtype == "I64":
        return struct.pack("<%dq" % len(values), *values)
    raise ValueError(dtype)


def stored(dtype, v):
    """The value as the file stores it (what a reader must return)."""
    if dtype == "F32":
        return struct.unpack("<f", struct.pack("<f", v))[0]
    if dtype == "F16":
        return struct.unpack("<e", struct.pack("<e", v))[0]
    return float(v)


def build(tensors, metadata=None, header_pad=True):
    """tensors: list of (name, dtype, shape, values). Returns the file's bytes."""
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, values in tensors:
        raw = pack(dtype, values)
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    if header_pad:
        text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def raw_file(header_text, data):
    return struct.pack("<Q", len(header_text)) + header_text + data


def write(name, blob):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(blob)


def small():
    rnd = random.Random(13)
    a = [rnd.uniform(-3, 3) for _ in range(6)]
    b = [rnd.gauss(0, 1) for _ in range(4)]
    h = [0.5, -1.25, 65504.0, 6.103515625e-05]
    bf = [1.5, -2.25, 0.0078125, 3.0e38 // 2 ** 104 * 2 ** 104]
    bf[3] = struct.unpack("<f", struct.pack("<I", f32_bits(3.0e38) & 0xFFFF0000))[0]
    tensors = [("layer.a", "F32", (2, 3), a), ("b", "F64", (4,), b), ("h", "F16", (3, 1), h[:3]),
               ("bf", "BF16", (2, 2), bf), ("ids", "I32", (2,), [7, -9])]
    write("small.safetensors", build(tensors, {"format": "pt", "note": "caf\u00e9 \"q\""}))
    with open(os.path.join(OUT, "small.tsv"), "w") as f:
        f.write("# name\tindex\tvalue (as stored), written by make-safetensors.py\n")
        for name, dtype, shape, values in tensors:
            if dtype.startswith("I"):
                continue
            for i, v in enumerate(values):
                f.write("%s\t%d\t%s\n" % (name, i, repr(stored(dtype, v))))
    # a single tensor: ns_file_load needs no name
    write("one.safetensors", build([("only", "F64", (2, 2), [1.0, 2.0, 3.0, 4.0])]))
    # names in raw UTF-8 (not \u escapes), as json.dumps(ensure_ascii=False) writes them
    hdr = json.dumps({"\u00e9t\u00e9.\u03bc": {"dtype": "F32", "shape": [1],
                                              "data_offsets": [0, 4]}},
                     ensure_ascii=False).encode("utf-8")
    write("utf8.safetensors", raw_file(hdr, pack("F32", [2.5])))


def bad():
    good = build([("x", "F32", (2, 2), [1, 2, 3, 4])])
    cases = []

    def case(name, blob, word):
        write("bad-%s.safetensors" % name, blob)
        cases.append(("bad-%s.safetensors" % name, word))

    case("truncated-data", good[:-3], "truncated")
    case("truncated-length", good[:5], "8-byte")
    case("huge-header", struct.pack("<Q", 1 << 60) + good[8:], "absurd")
    case("header-beyond-file", struct.pack("<Q", 4096) + good[8:], "truncated")
    data = pack("F32", [1, 2, 3, 4])
    case("overlap", raw_file(json.dumps({
        "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
        "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}).encode(), data + data[:4]),
        "overlaps")
    case("bad-dtype", raw_file(json.dumps({
        "x": {"dtype": "F33", "shape": [2, 2], "data_offsets": [0, 16]}}).encode(), data),
        "unknown dtype")
    case("size-mismatch", raw_file(json.dumps({
        "x": {"dtype": "F32", "shape": [3, 2], "data_offsets": [0, 16]}}).encode(), data),
        "needs 24 bytes")
    case("huge-shape", raw_file(json.dumps({
        "x": {"dtype": "F64", "shape": [1 << 40, 1 << 40], "data_offsets": [0, 16]}}).encode(),
        data), "overflows")
    case("huge-offsets", raw_file(json.dumps({
        "x": {"dtype": "F32", "shape": [4], "data_offsets": [1 << 62, (1 << 62) + 16]}}).encode(),
        data), "only 16 bytes")
    case("not-json", raw_file(b"{\"x\": {\"dtype\": \"F32\", \"shape\": [4], ", data), "header")
    case("trailing", raw_file(json.dumps({
        "x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode() + b" }", data),
        "text after")
    case("duplicate", raw_file(b'{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},'
                               b'"x":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}', data),
         "twice")
    case("gap", raw_file(json.dumps({
        "x": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}}).encode(), data), "gap")
    case("extra-key", raw_file(json.dumps({
        "x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16], "x": 1}}).encode(), data),
        "unknown key")
    case("negative", raw_file(b'{"x":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}}', data),
         "integer")
    case("fraction", raw_file(b'{"x":{"dtype":"F32","shape":[4.0],"data_offsets":[0,16]}}', data),
         "fraction")
    case("not-object", raw_file(b'[1, 2, 3]', b""), "JSON object")
    case("bad-utf8", raw_file(b'{"x\xff":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}',
                              data), "UTF-8")
    case("overlong-utf8", raw_file(b'{"x\xc0\xaf":{"dtype":"F32","shape":[4],'
                                   b'"data_offsets":[0,16]}}', data), "UTF-8")
    with open(os.path.join(OUT, "bad.tsv"), "w") as f:
        f.write("# file\ta word its error message contains (make-safetensors.py)\n")
        for name, word in cases:
            f.write("%s\t%s\n" % (name, word))


def from_torch(t):
    import torch
    t = t.detach().contiguous()
    if t.dtype == torch.float32:
        return "F32", tuple(t.shape), t.flatten().tolist()
    if t.dtype == torch.float64:
        return "F64", tuple(t.shape), t.flatten().tolist()
    if t.dtype == torch.int64:
        return "I64", tuple(t.shape), [int(v) for v in t.flatten().tolist()]
    raise ValueError(t.dtype)


def torch_fixture():
    try:
        import torch
    except ImportError:
        print("torch not installed: torch.safetensors not written")
        return
    torch.manual_seed(2026)
    torch.set_num_threads(1)
    conv = torch.nn.Conv2d(3, 4, 3)
    bn = torch.nn.BatchNorm2d(4, momentum=0.1)
    gn = torch.nn.GroupNorm(4, 8)
    ln = torch.nn.LayerNorm(32)
    with torch.no_grad():
        for p in (bn.weight, gn.weight, ln.weight):
            p.uniform_(0.5, 1.5)
        for p in (bn.bias, gn.bias, ln.bias):
            p.uniform_(-0.5, 0.5)
    # a few training steps fill the running buffers from activations off centre
    for _ in range(5):
        img = torch.randn(16, 3, 14, 14) * 2 + 1
        bn.train()
        with torch.no_grad():
            bn(conv(img))
    img = torch.randn(32, 3, 14, 14) * 2 + 1
    with torch.no_grad():
        x_bn = conv(img)  # (32, 4, 12, 12): 4608 elements per channel
        bn.eval()
        y_bn_eval = bn(x_bn)
        bn_train = torch.nn.BatchNorm2d(4)
        bn_train.load_state_dict(bn.state_dict())
        bn_train.train()
        y_bn_train = bn_train(x_bn)
        x_gn = torch.randn(4, 8, 5, 5) * 3 - 2
        y_gn = gn(x_gn)
        x_ln = torch.randn(8, 16, 32) * 0.5 + 3
        y_ln = ln(x_ln)
    sd = {}
    for k, v in bn.state_dict().items():
        sd["bn." + k] = v
    for k, v in gn.state_dict().items():
        sd["gn." + k] = v
    for k, v in ln.state_dict().items():
        sd["ln." + k] = v
    sd.update({"x_bn": x_bn, "y_bn_eval": y_bn_eval, "y_bn_train": y_bn_train, "x_gn": x_gn,
               "y_gn": y_gn, "x_ln": x_ln, "y_ln": y_ln})
    tensors = [(k,) + from_torch(v) for k, v in sd.items()]
    write("torch.safetensors", build(tensors, {"torch": torch.__version__,
                                               "bn.eps": repr(bn.eps), "gn.eps": repr(gn.eps),
                                               "ln.eps": repr(ln.eps)}))


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    small()
    bad()
    torch_fixture()
