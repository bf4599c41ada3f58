/* test_npy.c: .npy and CSV reading and writing.
 *
 * References: the fixtures in tests/data/npy/ and their expected values, both written
 * by numpy (tests/data/make-fixtures.py); byte-for-byte equality with files np.save
 * wrote; round trips through every dtype and rank; hand-made broken buffers, one per
 * failure mode, each with the words its error message must contain. */
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/npy.h"
#include "core/tensor.h"
#include "tap.h"
#include "testdata.h"

static char *data_path(const char *name) {
  char rel[512];
  snprintf(rel, sizeof rel, "npy/%s", name);
  return test_data_path(rel);
}

#define slurp test_slurp

/* Equal as numbers, NaN equal to NaN, and -0.0 distinct from 0.0. */
static int same(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return a == b && signbit(a) == signbit(b);
}

static void shape_str(const ns_tensor *t, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (int k = 0; k < t->rank && used < len; k++)
    used += (size_t)snprintf(buf + used, len - used, k ? "x%zu" : "%zu", t->shape[k]);
}

/* Compares t with dtype name, shape "2x3" and space-separated values. */
static void check_tensor(const ns_tensor *t, const char *dtype, const char *shape, char *vals,
                         const char *name) {
  char shp[64];
  shape_str(t, shp, sizeof shp);
  tap_ok(strcmp(ns_dtype_name(t->dtype), dtype) == 0 && strcmp(shp, shape) == 0,
         "%s: dtype %s shape %s (want %s %s)", name, ns_dtype_name(t->dtype), shp, dtype, shape);
  size_t i = 0, bad = 0;
  char *s = vals, *e;
  for (;;) {
    double want = strtod(s, &e);
    if (e == s) break;
    double got = i < t->n ? ns_tensor_get(t, i) : NAN;
    if (i >= t->n || !same(got, want)) {
      if (!bad) tap_diag("  %s[%zu]: got %.17g, want %.17g", name, i, got, want);
      bad++;
    }
    i++;
    s = e;
  }
  tap_ok(i == t->n && bad == 0, "%s: %zu values as numpy wrote them (%zu differ)", name, i, bad);
}

/* ---- fixtures written by numpy ------------------------------------------------------- */

static void check_fixtures(void) {
  size_t len;
  char *text = (char *)slurp(data_path("expected.tsv"), &len);
  if (!text) {
    tap_ok(0, "cannot read %s", data_path("expected.tsv"));
    return;
  }
  int rows = 0;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (line[0] == '#') continue;
    char *f[5] = {0};
    int nf = 0;
    for (char *p = line; nf < 5; nf++) {
      f[nf] = p;
      p = strchr(p, '\t');
      if (!p) {
        nf++;
        break;
      }
      *p++ = '\0';
    }
    rows++;
    size_t n;
    unsigned char *buf = slurp(data_path(f[0]), &n);
    if (!buf) {
      tap_ok(0, "cannot read fixture %s", f[0]);
      continue;
    }
    char err[NS_ERRLEN] = "";
    int is_csv = strstr(f[0], ".csv") != NULL;
    ns_tensor *t = is_csv ? ns_csv_parse((char *)buf, n, err) : ns_npy_parse(buf, n, err);
    if (strcmp(f[1], "error") == 0) {
      tap_ok(!t && strstr(err, f[2]) != NULL, "%s refused, naming '%s': %s", f[0], f[2], err);
    } else if (!t || nf < 5) {
      tap_ok(0, "%s parses: %s", f[0], err);
    } else {
      check_tensor(t, f[2], f[3], f[4], f[0]);
      /* Files np.save wrote as version 1.0 with little-endian floats come back byte for byte
       * from the writer: same header text, padding and data. */
      const char *d = n > 10 ? strstr((char *)buf + 10, "'descr': '<f") : NULL;
      if (!is_csv && buf[6] == 1 && d) {
        size_t outlen = 0;
        unsigned char *out = ns_npy_serialize(t, &outlen, err);
        tap_ok(out && outlen == n && memcmp(out, buf, n) == 0,
               "%s: serializing gives numpy's bytes exactly (%zu vs %zu bytes)", f[0], outlen, n);
        free(out);
      }
    }
    ns_tensor_free(t);
    free(buf);
  }
  tap_ok(rows >= 20, "expected.tsv: %d fixtures", rows);
  free(text);
}

/* ---- round trips ----------------------------------------------------------------------- */

static void check_round_trips(void) {
  const size_t shapes[4][4] = {{7}, {3, 5}, {2, 3, 4}, {2, 1, 3, 2}};
  const ns_dtype dts[4] = {NS_FP64, NS_FP32, NS_FP16, NS_BF16};
  double vals[64];
  uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < 64; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift: varied signs and magnitudes */
    vals[i] = ((double)(int64_t)x / 9.2e18) * ldexp(1.0, (int)(x % 40) - 20);
  }
  vals[0] = -0.0;
  vals[1] = 1.0 / 3;
  vals[2] = INFINITY;
  vals[3] = NAN;
  for (int d = 0; d < 4; d++)
    for (int r = 1; r <= 4; r++) {
      char err[NS_ERRLEN] = "";
      ns_tensor *t = ns_tensor_from(r, shapes[r - 1], dts[d], vals, err);
      size_t len = 0;
      unsigned char *buf = t ? ns_npy_serialize(t, &len, err) : NULL;
      ns_tensor *u = buf ? ns_npy_parse(buf, len, err) : NULL;
      int ok = t && u && u->rank == r && u->n == t->n &&
               u->dtype == (dts[d] == NS_BF16 ? NS_FP32 : dts[d]);
      for (int k = 0; ok && k < r; k++) ok = u->shape[k] == t->shape[k];
      for (size_t i = 0; ok && i < t->n; i++) ok = same(ns_tensor_get(u, i), ns_tensor_get(t, i));
      /* v1.0 header: data at a multiple of 64, header ends in '\n' */
      size_t hlen = buf ? (size_t)buf[8] | (size_t)buf[9] << 8 : 0;
      int hdr_ok = buf && buf[6] == 1 && buf[7] == 0 && (10 + hlen) % 64 == 0 &&
                   buf[10 + hlen - 1] == '\n' &&
                   len == 10 + hlen + t->n * (u ? ns_dtype_size(u->dtype) : 0);
      tap_ok(ok && hdr_ok, "npy round trip %s rank %d%s", ns_dtype_name(dts[d]), r,
             err[0] ? err : "");
      ns_tensor_free(t);
      ns_tensor_free(u);
      free(buf);
    }
  /* Byte order of the output does not depend on the host: 1.0 as '<f8' */
  size_t one = 1, len = 0;
  double v = 1.0;
  ns_tensor *t = ns_tensor_from(1, &one, NS_FP64, &v, NULL);
  unsigned char *buf = ns_npy_serialize(t, &len, NULL);
  tap_ok(buf && len == 136 && buf[128] == 0 && buf[134] == 0xf0 && buf[135] == 0x3f,
         "1.0 is written little-endian: 00 .. f0 3f");
  tap_ok(buf &&
             memcmp(buf + 10, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", 57) == 0,
         "rank-1 shape written as numpy does, (1,)");
  free(buf);
  ns_tensor_free(t);
  char err[NS_ERRLEN] = "";
  tap_ok(ns_npy_serialize(NULL, &len, err) == NULL && err[0], "serialize(NULL) refused: %s", err);
}

/* ---- broken and hand-made buffers -------------------------------------------------------- */

/* A version 1.0 file with the given header dict (padded as numpy does) and data bytes. */
static unsigned char *make_npy(const char *dict, const void *data, size_t dlen, size_t *len) {
  size_t hl = strlen(dict), total = (10 + hl + 1 + 63) / 64 * 64;
  unsigned char *b = malloc(total + dlen + 1);
  memcpy(b, "\x93NUMPY\x01\x00", 8);
  b[8] = (unsigned char)((total - 10) & 0xff);
  b[9] = (unsigned char)((total - 10) >> 8);
  memcpy(b + 10, dict, hl);
  memset(b + 10 + hl, ' ', total - 10 - hl - 1);
  b[total - 1] = '\n';
  if (dlen) memcpy(b + total, data, dlen);
  *len = total + dlen;
  return b;
}

static void expect_error(const unsigned char *buf, size_t len, const char *want, const char *what) {
  char err[NS_ERRLEN] = "";
  ns_tensor *t = ns_npy_parse(buf, len, err);
  tap_ok(!t && strstr(err, want) != NULL, "%s refused, naming '%s': %s", what, want, err);
  ns_tensor_free(t);
}

static void expect_header_error(const char *dict, size_t ndata, const char *want) {
  size_t len;
  unsigned char *data = calloc(ndata ? ndata : 1, 1);
  unsigned char *b = make_npy(dict, data, ndata, &len);
  expect_error(b, len, want, dict);
  free(b);
  free(data);
}

static void expect_header_ok(const char *dict, const char *shape, const char *what) {
  size_t len;
  const double d[6] = {1, 2, 3, 4, 5, 6};
  unsigned char *b = make_npy(dict, d, sizeof d, &len);
  char err[NS_ERRLEN] = "", shp[64] = "?";
  ns_tensor *t = ns_npy_parse(b, len, err);
  if (t) shape_str(t, shp, sizeof shp);
  tap_ok(t && strcmp(shp, shape) == 0 && ns_tensor_get(t, 5) == 6, "%s: shape %s %s", what, shp,
         err);
  ns_tensor_free(t);
  free(b);
}

static void check_broken(void) {
  const char *good = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
  /* Header spelling numpy could have used, or a person writing it by hand. */
  expect_header_ok(good, "2x3", "numpy's own header");
  expect_header_ok("{'shape':(2,3),'descr':'<f8','fortran_order':False}", "2x3",
                   "reordered, no spaces");
  expect_header_ok("{ \"descr\" : \"<f8\" ,\n 'fortran_order' : False , 'shape' : ( 6 , ) , }", "6",
                   "double quotes, odd spacing, trailing commas");
  expect_header_ok("{'descr': '<f8', 'fortran_order': False, 'shape': (3L, 2L)}", "3x2",
                   "Python 2 long integers");
  /* numpy's rule (format.py): the three keys and nothing else (issue 23) */
  expect_header_error("{'descr': '<f8', 'extra': {'a': (1, [2, ')']), 'b': 'x,}'}, "
                      "'fortran_order': False, 'shape': (1, 1, 2, 3)}",
                      8, "and nothing else");

  unsigned char tiny[16] = "\x93NUMPY\x01\x00";
  expect_error(tiny, 4, "bad magic", "4 bytes");
  expect_error((const unsigned char *)"\x93NUMPX\x01\x00\x10\x00{}", 12, "bad magic",
               "wrong magic");
  expect_error((const unsigned char *)"PK\x03\x04 this is a zip", 20, "bad magic", "a .npz");
  expect_error(tiny, 8, "truncated", "magic and version only");
  expect_error(NULL, 0, "no data", "NULL buffer");
  unsigned char v4[16] = "\x93NUMPY\x04\x00\x00\x00";
  expect_error(v4, 12, "version 4.0", "version 4.0");

  size_t len;
  unsigned char *b = make_npy(good, NULL, 0, &len);
  b[8] = 0xff, b[9] = 0xff; /* header length 65535 in a 64-byte buffer */
  expect_error(b, len, "beyond the end", "header length past the buffer");
  free(b);
  unsigned char v2[16] = "\x93NUMPY\x02\x00\x00\x00\x20\x00"; /* 2 MiB header length */
  expect_error(v2, 16, "absurd", "header length of 2 MiB");
  unsigned char v3[16] = "\x93NUMPY\x03\x00\xff\xff\xff\xff";
  expect_error(v3, 16, "absurd", "header length of 4 GiB");
  unsigned char v2s[11] = "\x93NUMPY\x02\x00\x00\x00";
  expect_error(v2s, 11, "truncated", "version 2.0 cut inside the length");

  expect_header_error(good, 47, "truncated .npy data");
  expect_header_error(good, 0, "needs 48 bytes");
  expect_header_error("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", 48, "Fortran");
  expect_header_error("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 16, "object");
  expect_header_error("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,), }", 16,
                      "structured");
  expect_header_error("{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }", 16, "complex");
  expect_header_error("{'descr': '<U4', 'fortran_order': False, 'shape': (1,), }", 16, "strings");
  expect_header_error("{'descr': '|S4', 'fortran_order': False, 'shape': (1,), }", 16, "strings");
  expect_header_error("{'descr': '|V8', 'fortran_order': False, 'shape': (1,), }", 16, "void");
  expect_header_error("{'descr': '<M8[D]', 'fortran_order': False, 'shape': (1,), }", 16, "dates");
  expect_header_error("{'descr': '<f3', 'fortran_order': False, 'shape': (1,), }", 16, "'<f3'");
  expect_header_error("{'descr': '<i3', 'fortran_order': False, 'shape': (1,), }", 16, "'<i3'");
  expect_header_error("{'descr': 'float64', 'fortran_order': False, 'shape': (1,), }", 16,
                      "'float64' is not supported");
  { /* a 0-d array (np.save of a scalar, such as num_batches_tracked) loads as shape (1) */
    size_t zlen;
    const double v = 7;
    unsigned char *zb =
        make_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", &v, sizeof v, &zlen);
    char err[NS_ERRLEN] = "";
    ns_tensor *t = ns_npy_parse(zb, zlen, err);
    tap_ok(t && t->rank == 1 && t->shape[0] == 1 && ns_tensor_get(t, 0) == 7,
           "a 0-d array loads as one value of shape (1) %s", err);
    ns_tensor_free(t);
    free(zb);
  }
  expect_header_error("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 1, 1, 2), }", 16,
                      "shape (1, 1, 1, 1, 2) has rank 5");
  expect_header_error("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }", 0, "is 0");
  expect_header_error("{'descr': '<f8', 'fortran_order': False, 'shape': (2147483649,), }", 8,
                      "too many elements");
  expect_header_error(
      "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }",
      8, "too many elements");
  expect_header_error(
      "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999999,), }", 8,
      "too large");
  expect_header_error("{'descr': '<f8', 'fortran_order': False, 'shape': (2, -3), }", 8,
                      "non-negative integers");
  expect_header_error("{'descr': '<f8', 'fortran_order': False, 'shape': 6, }", 8, "not a tuple");
  expect_header_error("{'descr': '<f8', 'fortran_order': False, 'shape': (2 3), }", 8,
                      "well-formed");
  expect_header_error("{'descr': '<f8', 'fortran_order': False}", 8, "no 'shape'");
  expect_header_error("{'fortran_order': False, 'shape': (1,)}", 8, "no 'descr'");
  expect_header_error("{'descr' '<f8', 'fortran_order': False, 'shape': (1,)}", 8, "expected ':'");
  expect_header_error("{'descr': '<f8' 'fortran_order': False, 'shape': (1,)}", 8,
                      "expected ',' or '}'");
  expect_header_error("{'descr': '<f8', 'fortran_order': Maybe, 'shape': (1,)}", 8,
                      "neither True nor False");
  expect_header_error("['descr', '<f8']", 8, "not a Python dict");
  expect_header_error("{'descr': '<f8, 'fortran_order': False, 'shape': (1,)}", 8, "npy header");
}

/* ---- CSV ----------------------------------------------------------------------------------- */

static void csv_ok(const char *text, const char *shape, const char *vals, const char *what) {
  char err[NS_ERRLEN] = "";
  ns_tensor *t = ns_csv_parse(text, strlen(text), err);
  if (!t) {
    tap_ok(0, "CSV %s parses: %s", what, err);
    return;
  }
  char *v = strdup(vals);
  check_tensor(t, "fp64", shape, v, what);
  free(v);
  ns_tensor_free(t);
}

static void csv_bad(const char *text, const char *want) {
  char err[NS_ERRLEN] = "";
  ns_tensor *t = ns_csv_parse(text, strlen(text), err);
  tap_ok(!t && strcmp(err, want) == 0, "CSV refused: \"%s\"", err);
  if (t || strcmp(err, want) != 0) tap_diag("  want \"%s\"", want);
  ns_tensor_free(t);
}

static void check_csv(void) {
  csv_ok("1,2,3\n4,5,6\n", "2x3", "1 2 3 4 5 6", "plain");
  csv_ok("x, y\r\n 1 ,\t2 \r\n3,4", "2x2", "1 2 3 4",
         "header, CRLF, spaces and tabs, no final newline");
  csv_ok("# made by hand\n\n1.5,-2e3 # trailing comment\n   \n# more\n0.25,1e-310\n\n", "2x2",
         "1.5 -2000 0.25 1e-310", "comments and blank lines");
  csv_ok("7\n8\n9\n", "3x1", "7 8 9", "single column stays rank 2");
  csv_ok("7,8,9", "1x3", "7 8 9", "single row stays rank 2");
  csv_ok("nan,inf,-inf,+1,-0.0,.5,5.\n", "1x7", "nan inf -inf 1 -0.0 0.5 5", "nan and inf");
  csv_ok("0.1000000000000000055511151231257827,1e-320\n", "1x2", "0.1 1e-320",
         "long digit strings");

  { /* the header line skipped, and which it was; none for a file of numbers */
    char err[NS_ERRLEN] = "", head[8];
    size_t hl = 99;
    const char *named = "# made by hand\n\n  x, y,zeta \n1,2,3\n";
    ns_tensor *t = ns_csv_parse_header(named, strlen(named), &hl, head, sizeof head, err);
    tap_ok(t && hl == 3 && strcmp(head, "x, y,ze") == 0,
           "CSV header: line %zu, '%s' (cut to the room given)", hl, head);
    ns_tensor_free(t);
    t = ns_csv_parse_header("1,2\n", 4, &hl, head, sizeof head, err);
    tap_ok(t && hl == 0 && head[0] == 0, "CSV without a header: line 0, no text");
    ns_tensor_free(t);
  }
  csv_bad("1,2\n3,abc\n", "line 2, column 2: 'abc' is not a number");
  csv_bad("a,b\n1,2\n3,4\nabc,5\n", "line 4, column 1: 'abc' is not a number");
  csv_bad("1,2\n3\n", "line 2 has 1 value, but line 1 (the first row) has 2");
  csv_bad("# c\n1,2\n\n3,4,5\n", "line 4 has 3 values, but line 2 (the first row) has 2");
  csv_bad("1,,2\n", "line 1, column 2: empty value");
  csv_bad("1,2,\n", "line 1, column 3: empty value");
  csv_bad("x,1\n", "line 1, column 1: 'x' is not a number");
  csv_bad("1,0x10\n", "line 1, column 2: '0x10' is not a number");
  csv_bad("1,2\n3;4\n", "line 2, column 1: '3;4' is not a number (values are separated by "
                        "commas, not ';', and decimals take a point)");
  csv_bad("1,2\n3,4 5\n", "line 2, column 2: '4 5' is not a number");
  csv_bad("a,b\n", "the CSV text has a header line but no rows of numbers");
  /* numbers separated by ';' are no header line: the first such line says what to change */
  csv_bad("1;2;3\n4;5;6\n", "line 1, column 1: '1;2;3' is not a number (values are separated "
                            "by commas, not ';', and decimals take a point)");
  csv_bad("a;b\n1.5; 2\n", "line 2, column 1: '1.5; 2' is not a number (values are separated "
                           "by commas, not ';', and decimals take a point)");
  csv_bad("1,2\n3,a;b\n", "line 2, column 2: 'a;b' is not a number");
  csv_bad("", "the CSV text has no numbers");
  csv_bad("# only a comment\n\n", "the CSV text has no numbers");
  csv_bad("a,b\nc,d\n", "line 2, column 1: 'c' is not a number");
  const char nul[] = "1,2\n3,\0\n";
  char err[NS_ERRLEN] = "";
  tap_ok(!ns_csv_parse(nul, sizeof nul - 1, err) && strstr(err, "line 2, column 2"),
         "a NUL byte inside the text is not a number: %s", err);
  tap_ok(!ns_csv_parse(NULL, 0, err) && err[0], "CSV parse of NULL refused: %s", err);

  /* Writing: rank 2 as rows, rank 1 one value per line, every double back exactly. */
  const double v[6] = {0.1, -1.0 / 3, 5e-324, -0.0, NAN, -INFINITY};
  size_t s23[2] = {2, 3}, s6 = 6, s3[3] = {1, 2, 3};
  ns_tensor *t = ns_tensor_from(2, s23, NS_FP64, v, NULL);
  char *text = ns_csv_serialize(t, err);
  ns_tensor *u = text ? ns_csv_parse(text, strlen(text), err) : NULL;
  int ok = u && u->rank == 2 && u->shape[0] == 2 && u->shape[1] == 3;
  for (size_t i = 0; ok && i < 6; i++) ok = same(ns_tensor_get(u, i), v[i]);
  tap_ok(ok, "CSV round trip of a 2x3 fp64 tensor with 5e-324, -0, nan, -inf");
  tap_ok(text && strcmp(text, "0.10000000000000001,-0.33333333333333331,4.9406564584124654e-324\n"
                              "-0,nan,-inf\n") == 0,
         "CSV text: %s", text ? text : err);
  free(text);
  ns_tensor_free(t);
  ns_tensor_free(u);
  t = ns_tensor_from(1, &s6, NS_FP32, v, NULL);
  text = ns_csv_serialize(t, err);
  tap_ok(text && strncmp(text, "0.10000000149011612\n-0.3333333432674408\n", 40) == 0,
         "rank 1 fp32: one value per line, the stored float exactly");
  free(text);
  ns_tensor_free(t);
  t = ns_tensor_from(3, s3, NS_FP64, v, NULL);
  err[0] = '\0';
  tap_ok(ns_csv_serialize(t, err) == NULL && strstr(err, "shape (1, 2, 3)"),
         "rank 3 refused for CSV: %s", err);
  ns_tensor_free(t);

  /* A locale with a decimal comma must not change the format (skipped if none installed). */
  const char *locs[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "nl_NL.UTF-8"};
  const char *got = NULL;
  for (size_t i = 0; i < 4 && !got; i++) got = setlocale(LC_NUMERIC, locs[i]);
  if (got) {
    csv_ok("1.5,2.25\n", "1x2", "1.5 2.25", "under a decimal-comma locale");
    setlocale(LC_NUMERIC, "C");
  } else {
    tap_diag("no decimal-comma locale installed: locale check skipped");
  }
}

int main(void) {
  (void)tap_close; /* tap.h helper unused here */
  check_fixtures();
  check_round_trips();
  check_broken();
  check_csv();
  return tap_done();
}
