#!/usr/bin/python3
"""Writes the tiny .npy fixtures of tests/unit/test_npy.c into tests/data/npy/, and
tests/data/npy/expected.tsv, the values numpy itself holds for each of them.

Run with numpy (made with 1.24):  /usr/bin/python3 tests/data/make-fixtures.py
expected.tsv rows (tab-separated):
  NAME.npy  ok     DTYPE  SHAPE  V0 V1 ...     DTYPE the tensor should keep (fp16/fp32/fp64),
                                               SHAPE like 2x3, values as float64 repr, C order
  NAME.npy  error  TEXT                        the error message must contain TEXT
  savetxt.csv ok ...                           a CSV file from numpy.savetxt, read back with
                                               numpy.loadtxt
"""
import io
import os
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "npy")
os.makedirs(out, exist_ok=True)
rows = []


def save(name, arr, version=None, keep=None, error=None):
    path = os.path.join(out, name)
    with open(path, "wb") as f:
        if version is None:
            np.save(f, arr, allow_pickle=True)
        else:
            np.lib.format.write_array(f, arr, version=version, allow_pickle=True)
    if error is not None:
        rows.append("%s\terror\t%s" % (name, error))
        return
    back = np.load(path)  # what numpy reads back is the reference
    flat = back.astype(np.float64).ravel(order="C")
    rows.append("%s\tok\t%s\t%s\t%s" % (name, keep, "x".join(str(d) for d in back.shape),
                                         " ".join(repr(float(v)) for v in flat)))


f2 = np.array([0.0, -0.0, 1.0 / 3, 65504.0, 6e-08, -2.5, np.inf, np.nan], dtype=np.float16)
save("f2.npy", f2, keep="fp16")
save("f4.npy", np.array([[0.1, -1e-30, 3.4e38], [np.pi, -7.0, 1e-45]], dtype=np.float32), keep="fp32")
save("f8.npy", np.array([[0.1, -2.5], [1e300, 5e-324], [-np.inf, np.nan]]), keep="fp64")
save("be_f8.npy", np.array([[1.5, -0.1], [2.0 ** -1074, 123456.789]], dtype=">f8"), keep="fp64")
save("be_f4.npy", np.array([0.1, -3.0, 1e-40], dtype=">f4"), keep="fp32")
save("be_f2.npy", np.array([0.1, -3.0, 1e-7], dtype=">f2"), keep="fp16")
save("i4.npy", np.array([[-2147483648, -1, 0], [1, 7, 2147483647]], dtype=np.int32), keep="fp64")
save("be_i2.npy", np.array([-32768, -2, 300, 32767], dtype=">i2"), keep="fp64")
save("i8.npy", np.array([-(2 ** 63), -5, 2 ** 53, 2 ** 62], dtype=np.int64), keep="fp64")
# an 8-byte integer a double cannot hold exactly is refused, never rounded
save("i8_big.npy", np.array([-5, 2 ** 53 + 1], dtype=np.int64), error="cannot hold exactly")
save("u1.npy", np.array([0, 1, 128, 255], dtype=np.uint8), keep="fp64")
save("u8.npy", np.array([0, 2 ** 63, 2 ** 32], dtype=np.uint64), keep="fp64")
save("u8_big.npy", np.array([0, 2 ** 64 - 1], dtype=np.uint64), error="cannot hold exactly")
save("i1.npy", np.array([-128, -1, 0, 127], dtype=np.int8), keep="fp64")
save("bool.npy", np.array([True, False, True, True]), keep="fp64")
save("v2.npy", np.arange(6, dtype=np.float64).reshape(2, 3) / 8, version=(2, 0), keep="fp64")
save("v3.npy", np.array([1.25, -4.0], dtype=np.float32), version=(3, 0), keep="fp32")
save("rank3.npy", (np.arange(24, dtype=np.float64).reshape(2, 3, 4) - 11.5) / 3, keep="fp64")
save("rank4.npy", np.arange(12, dtype=np.float32).reshape(1, 2, 3, 2) * 0.5, keep="fp32")
save("fortran.npy", np.asfortranarray(np.arange(6.0).reshape(2, 3)), error="Fortran")
save("object.npy", np.array([1, "a", None], dtype=object), error="object")
save("complex.npy", np.array([1 + 2j]), error="complex")
save("structured.npy", np.zeros(2, dtype=[("a", "<f8"), ("b", "<i4")]), error="structured")
save("unicode.npy", np.array(["ab", "c"]), error="strings")
# a 0-d array loads as one value, shape (1) (version 2.0: it does not serialize back as ())
save("scalar.npy", np.array(3.5), version=(2, 0), keep="fp64")
rows[-1] = rows[-1].replace("\tfp64\t\t", "\tfp64\t1\t")
save("rank5.npy", np.zeros((1, 1, 1, 1, 2)), error="rank 5")
save("f16.npy", np.zeros(2, dtype=np.longdouble), error="f16")

# CSV as numpy.savetxt writes it: a '# ' header line, %.18e numbers, nan and inf.
csv = np.array([[0.1, -2.5, 1e-300], [np.nan, np.inf, -np.inf], [1.0 / 3, 0.0, 12345.678]])
np.savetxt(os.path.join(out, "savetxt.csv"), csv, delimiter=",", header="a,b,c")
back = np.loadtxt(os.path.join(out, "savetxt.csv"), delimiter=",")
rows.append("savetxt.csv\tok\tfp64\t%s\t%s" % ("x".join(str(d) for d in back.shape),
                                                 " ".join(repr(float(v)) for v in back.ravel())))

with open(os.path.join(out, "expected.tsv"), "w") as f:
    f.write("# made by tests/data/make-fixtures.py with numpy %s\n" % np.__version__)
    f.write("\n".join(rows) + "\n")
