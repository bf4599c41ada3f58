/* tensor_ops.c: whole-tensor arithmetic (see tensor_ops.h for ownership and rounding). */
#include "core/tensor_ops.h"
#include "core/blasdl.h"
#include "core/err.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 0 if t is there, else -1 with "<fn>: <what> is missing". */
static int need(const ns_tensor *t, const char *fn, const char *what, char *err) {
  if (t) return 0;
  ns_seterr(err, "%s: %s is missing (NULL)", fn, what);
  return -1;
}

/* Element reads and writes with a fast path for fp64 storage. */
static double rd(const ns_tensor *t, size_t i) {
  if (t->dtype == NS_FP64) return ((const double *)t->data)[i];
  return ns_tensor_get(t, i);
}

static void wr(ns_tensor *t, size_t i, double v) {
  if (t->dtype == NS_FP64)
    ((double *)t->data)[i] = v;
  else
    ns_tensor_set(t, i, v);
}

/* Rank of each dtype in the promotion order; fp16 and bf16 tie. */
static int width(ns_dtype d) {
  switch (d) {
  case NS_FP64:
    return 3;
  case NS_FP32:
    return 2;
  default:
    return 1;
  }
}

ns_dtype ns_dtype_promote(ns_dtype a, ns_dtype b) {
  if (a == b) return a;
  int wa = width(a), wb = width(b);
  if (wa == wb) return NS_FP32; /* fp16 with bf16: neither holds the other */
  return wa > wb ? a : b;
}

int ns_broadcast_shape(int ra, const size_t *sa, int rb, const size_t *sb, int *rank, size_t *out,
                       char *err) {
  int r = ra > rb ? ra : rb;
  for (int k = 0; k < r; k++) {
    int ka = k - (r - ra), kb = k - (r - rb);
    size_t da = ka >= 0 ? sa[ka] : 1, db = kb >= 0 ? sb[kb] : 1;
    if (da != db && da != 1 && db != 1) {
      char fa[64], fb[64];
      ns_shape_format(ra, sa, fa, sizeof fa);
      ns_shape_format(rb, sb, fb, sizeof fb);
      ns_seterr(err, "shapes %s and %s do not broadcast (axis %d: %zu vs %zu)", fa, fb, k + 1, da,
                db);
      return -1;
    }
    out[k] = da == 1 ? db : da;
  }
  for (int k = r; k < NS_MAXRANK; k++) out[k] = 1;
  *rank = r;
  return 0;
}

/* Row-major strides of a shape. */
static void strides_of(int rank, const size_t *shape, size_t *st) {
  size_t s = 1;
  for (int k = rank - 1; k >= 0; k--) {
    st[k] = s;
    s *= shape[k];
  }
}

/* Strides of operand (ra, sa) read through the broadcast shape (r, out): 0 on axes it
 * lacks or has size 1 where the result does not. */
static void bstrides(int ra, const size_t *sa, int r, const size_t *out, size_t *bs) {
  size_t st[NS_MAXRANK];
  strides_of(ra, sa, st);
  for (int k = 0; k < r; k++) {
    int ka = k - (r - ra);
    bs[k] = (ka < 0 || (sa[ka] == 1 && out[k] != 1)) ? 0 : st[ka];
  }
}

static double apply2(ns_binop op, double x, double y) {
  switch (op) {
  case NS_OP_ADD:
    return x + y;
  case NS_OP_SUB:
    return x - y;
  case NS_OP_MUL:
    return x * y;
  default:
    return x / y;
  }
}

ns_tensor *ns_op_binary(const ns_tensor *a, const ns_tensor *b, ns_binop op, char *err) {
  if (need(a, "binary operation", "left operand", err) ||
      need(b, "binary operation", "right operand", err))
    return NULL;
  int r;
  size_t shape[NS_MAXRANK];
  if (ns_broadcast_shape(a->rank, a->shape, b->rank, b->shape, &r, shape, err) < 0) return NULL;
  ns_tensor *y = ns_tensor_new(r, shape, ns_dtype_promote(a->dtype, b->dtype), err);
  if (!y) return NULL;
  size_t sa[NS_MAXRANK], sb[NS_MAXRANK], idx[NS_MAXRANK] = {0};
  bstrides(a->rank, a->shape, r, shape, sa);
  bstrides(b->rank, b->shape, r, shape, sb);
  size_t ia = 0, ib = 0;
  for (size_t i = 0; i < y->n; i++) {
    wr(y, i, apply2(op, rd(a, ia), rd(b, ib)));
    /* advance the multi-index, carrying into earlier axes */
    for (int k = r - 1; k >= 0; k--) {
      idx[k]++;
      ia += sa[k];
      ib += sb[k];
      if (idx[k] < shape[k]) break;
      ia -= sa[k] * shape[k];
      ib -= sb[k] * shape[k];
      idx[k] = 0;
    }
  }
  return y;
}

ns_tensor *ns_op_scalar(const ns_tensor *a, double s, ns_binop op, int scalar_left, char *err) {
  if (need(a, "scalar operation", "tensor operand", err)) return NULL;
  ns_tensor *y = ns_tensor_new(a->rank, a->shape, a->dtype, err);
  if (!y) return NULL;
  for (size_t i = 0; i < a->n; i++) {
    double v = rd(a, i);
    wr(y, i, scalar_left ? apply2(op, s, v) : apply2(op, v, s));
  }
  return y;
}

static double apply1(ns_unop op, double x) {
  switch (op) {
  case NS_UN_NEG:
    return -x;
  case NS_UN_TANH:
    return tanh(x);
  case NS_UN_RELU:
    return x > 0 ? x : (isnan(x) ? x : 0.0);
  case NS_UN_EXP:
    return exp(x);
  case NS_UN_LOG:
    return log(x);
  case NS_UN_ABS:
    return fabs(x);
  case NS_UN_SQRT:
    return sqrt(x);
  default:
    return x * x;
  }
}

ns_tensor *ns_op_unary(const ns_tensor *a, ns_unop op, char *err) {
  if (need(a, "elementwise function", "tensor", err)) return NULL;
  ns_tensor *y = ns_tensor_new(a->rank, a->shape, a->dtype, err);
  if (!y) return NULL;
  for (size_t i = 0; i < a->n; i++) wr(y, i, apply1(op, rd(a, i)));
  return y;
}

/* Finishes one reduction from its accumulators (m4: sum of d^4, kurtosis only). */
static double finish(ns_redop op, double acc, double m2, double m4, size_t count, int ddof) {
  switch (op) {
  case NS_RED_SUM:
    return acc;
  case NS_RED_MEAN:
    return acc / (double)count;
  case NS_RED_VAR:
  case NS_RED_STD: {
    if ((double)count <= ddof) return NAN;
    double v = m2 / ((double)count - ddof);
    return op == NS_RED_STD ? sqrt(v) : v;
  }
  case NS_RED_KURT: {
    double v = m2 / (double)count;
    return (m4 / (double)count) / (v * v);
  }
  default:
    return acc;
  }
}

ns_tensor *ns_op_reduce(const ns_tensor *a, unsigned mask, ns_redop op, int ddof, char *err) {
  if (need(a, "reduction", "tensor", err)) return NULL;
  int r = a->rank;
  unsigned all = (1u << r) - 1;
  if (mask & ~all) {
    ns_seterr(err, "reduction axis out of range for a rank-%d tensor", r);
    return NULL;
  }
  if (mask == 0) mask = all;
  size_t oshape[NS_MAXRANK], ost[NS_MAXRANK];
  for (int k = 0; k < NS_MAXRANK; k++) oshape[k] = k < r && !(mask & (1u << k)) ? a->shape[k] : 1;
  ns_tensor *y = ns_tensor_new(r, oshape, a->dtype, err);
  if (!y) return NULL;
  strides_of(r, oshape, ost);
  size_t nout = y->n, count = a->n / nout;
  double *acc = calloc(nout, sizeof *acc);
  double *m2 = calloc(nout, sizeof *m2), *m4 = calloc(nout, sizeof *m4);
  size_t *map = malloc(a->n * sizeof *map);
  if (!acc || !m2 || !m4 || !map) {
    free(acc);
    free(m2);
    free(m4);
    free(map);
    ns_tensor_free(y);
    ns_seterr(err, "out of memory reducing %zu elements", a->n);
    return NULL;
  }
  /* map[i]: the output element that input element i contributes to */
  size_t idx[NS_MAXRANK] = {0};
  for (size_t i = 0; i < a->n; i++) {
    size_t o = 0;
    for (int k = 0; k < r; k++)
      if (!(mask & (1u << k))) o += idx[k] * ost[k];
    map[i] = o;
    for (int k = r - 1; k >= 0; k--) {
      if (++idx[k] < a->shape[k]) break;
      idx[k] = 0;
    }
  }
  if (op == NS_RED_MIN || op == NS_RED_MAX) {
    for (size_t o = 0; o < nout; o++) acc[o] = op == NS_RED_MIN ? INFINITY : -INFINITY;
    for (size_t i = 0; i < a->n; i++) {
      double v = rd(a, i), *p = &acc[map[i]];
      if (isnan(*p)) continue;
      if (isnan(v) || (op == NS_RED_MIN ? v < *p : v > *p)) *p = v;
    }
  } else {
    for (size_t i = 0; i < a->n; i++) acc[map[i]] += rd(a, i);
    if (op == NS_RED_VAR || op == NS_RED_STD || op == NS_RED_KURT) {
      for (size_t o = 0; o < nout; o++) acc[o] /= (double)count; /* now the mean */
      for (size_t i = 0; i < a->n; i++) {
        double d = rd(a, i) - acc[map[i]], d2 = d * d;
        m2[map[i]] += d2;
        m4[map[i]] += d2 * d2;
      }
    }
  }
  for (size_t o = 0; o < nout; o++) wr(y, o, finish(op, acc[o], m2[o], m4[o], count, ddof));
  free(acc);
  free(m2);
  free(m4);
  free(map);
  return y;
}

double ns_op_reduce_all(const ns_tensor *a, ns_redop op, int ddof) {
  if (!a) return NAN;
  if (op == NS_RED_MIN || op == NS_RED_MAX) {
    double best = op == NS_RED_MIN ? INFINITY : -INFINITY;
    for (size_t i = 0; i < a->n; i++) {
      double v = rd(a, i);
      if (isnan(v)) return v;
      if (op == NS_RED_MIN ? v < best : v > best) best = v;
    }
    return best;
  }
  double s = 0, m2 = 0, m4 = 0;
  for (size_t i = 0; i < a->n; i++) s += rd(a, i);
  if (op == NS_RED_VAR || op == NS_RED_STD || op == NS_RED_KURT) {
    double mean = s / (double)a->n;
    for (size_t i = 0; i < a->n; i++) {
      double d = rd(a, i) - mean, d2 = d * d;
      m2 += d2;
      m4 += d2 * d2;
    }
  }
  return finish(op, s, m2, m4, a->n, ddof);
}

/* Ascending with NaN last, as numpy sorts. */
static int cmp_nan_last(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  if (isnan(a) || isnan(b)) return isnan(a) - isnan(b);
  return (a > b) - (a < b);
}

ns_tensor *ns_op_sort(const ns_tensor *a, int axis, char *err) {
  if (need(a, "sort", "tensor", err)) return NULL;
  if (axis < 0 || axis >= a->rank) {
    ns_seterr(err, "sort: axis %d out of range for a rank-%d tensor", axis + 1, a->rank);
    return NULL;
  }
  size_t st[NS_MAXRANK], len = a->shape[axis];
  strides_of(a->rank, a->shape, st);
  size_t step = st[axis], lines = a->n / len;
  ns_tensor *y = ns_tensor_new(a->rank, a->shape, a->dtype, err);
  double *line = y ? malloc(len * sizeof *line) : NULL;
  if (!line) {
    if (y) ns_seterr(err, "sort: out of memory for %zu elements", len);
    ns_tensor_free(y);
    return NULL;
  }
  /* Line k starts at (k / step) * step * len + k % step and walks with stride step. */
  for (size_t k = 0; k < lines; k++) {
    size_t base = (k / step) * step * len + k % step;
    for (size_t i = 0; i < len; i++) line[i] = rd(a, base + i * step);
    qsort(line, len, sizeof *line, cmp_nan_last);
    for (size_t i = 0; i < len; i++) wr(y, base + i * step, line[i]);
  }
  free(line);
  return y;
}

/* The values of a sorted ascending, NaN last (malloc'd), or NULL. */
static double *sorted_values(const ns_tensor *a) {
  double *v = malloc((a->n ? a->n : 1) * sizeof *v);
  if (!v) return NULL;
  ns_tensor_read(a, v);
  qsort(v, a->n, sizeof *v, cmp_nan_last);
  return v;
}

int ns_op_quantile(const ns_tensor *a, const double *q, size_t nq, double *out, char *err) {
  if (need(a, "quantile", "tensor", err)) return -1;
  if (!q || !out) {
    ns_seterr(err, "quantile: %s is NULL", q ? "output array" : "q array");
    return -1;
  }
  for (size_t k = 0; k < nq; k++)
    if (!(q[k] >= 0 && q[k] <= 1)) {
      ns_seterr(err, "quantile: q must be in [0, 1], got %g", q[k]);
      return -1;
    }
  double *v = sorted_values(a);
  if (!v) {
    ns_seterr(err, "quantile: out of memory for %zu elements", a->n);
    return -1;
  }
  size_t n = a->n;
  int has_nan = isnan(v[n - 1]);
  for (size_t k = 0; k < nq; k++) {
    double g = (double)(n - 1) * q[k];
    if (has_nan) {
      out[k] = NAN;
    } else if (g >= (double)(n - 1)) {
      out[k] = v[n - 1];
    } else {
      size_t j = (size_t)floor(g);
      double t = g - (double)j, lo = v[j], hi = v[j + 1], diff = hi - lo;
      out[k] = t >= 0.5 ? hi - diff * (1 - t) : lo + diff * t;
    }
  }
  free(v);
  return 0;
}

int ns_op_median(const ns_tensor *a, double *out, char *err) {
  if (need(a, "median", "tensor", err)) return -1;
  if (!out) {
    ns_seterr(err, "median: output is NULL");
    return -1;
  }
  double *v = sorted_values(a);
  if (!v) {
    ns_seterr(err, "median: out of memory for %zu elements", a->n);
    return -1;
  }
  size_t n = a->n;
  *out = isnan(v[n - 1]) ? NAN : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  free(v);
  return 0;
}

/* A double copy of t's elements (malloc'd), or NULL. */
static double *as_doubles(const ns_tensor *t) {
  double *v = malloc((t->n ? t->n : 1) * sizeof *v);
  if (v) ns_tensor_read(t, v);
  return v;
}

ns_tensor *ns_op_matmul(const ns_tensor *a, const ns_tensor *b, char *err) {
  if (need(a, "matmul", "left matrix", err) || need(b, "matmul", "right matrix", err)) return NULL;
  if (a->rank != 2 || b->rank != 2) {
    ns_seterr(err, "matmul needs rank-2 tensors (got rank %d and rank %d)", a->rank, b->rank);
    return NULL;
  }
  size_t m = a->shape[0], k = a->shape[1], n = b->shape[1];
  if (b->shape[0] != k) {
    ns_seterr(err, "matmul shapes (%zu, %zu) and (%zu, %zu) do not match (%zu != %zu)", m, k,
              b->shape[0], n, k, b->shape[0]);
    return NULL;
  }
  if (m > INT_MAX || k > INT_MAX || n > INT_MAX) {
    ns_seterr(err, "matmul dimensions exceed the BLAS integer range");
    return NULL;
  }
  const ns_cblas *cb = ns_cblas_get("matmul", err);
  if (!cb) return NULL;
  size_t shape[2] = {m, n};
  ns_dtype dt = ns_dtype_promote(a->dtype, b->dtype);
  if (a->dtype == NS_FP32 && b->dtype == NS_FP32) {
    ns_tensor *y = ns_tensor_new(2, shape, NS_FP32, err);
    if (!y) return NULL;
    cb->sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0f,
              (const float *)a->data, (int)k, (const float *)b->data, (int)n, 0.0f,
              (float *)y->data, (int)n);
    return y;
  }
  ns_tensor *y = ns_tensor_new(2, shape, dt, err);
  if (!y) return NULL;
  double *da = as_doubles(a), *db = as_doubles(b), *dy = NULL;
  if (dt != NS_FP64) dy = malloc(m * n * sizeof *dy);
  if (!da || !db || (dt != NS_FP64 && !dy)) {
    free(da);
    free(db);
    free(dy);
    ns_tensor_free(y);
    ns_seterr(err, "out of memory in matmul");
    return NULL;
  }
  double *out = dt == NS_FP64 ? (double *)y->data : dy;
  cb->dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0, da, (int)k, db,
            (int)n, 0.0, out, (int)n);
  if (dy)
    for (size_t i = 0; i < m * n; i++) ns_tensor_set(y, i, dy[i]);
  free(da);
  free(db);
  free(dy);
  return y;
}

ns_tensor *ns_op_outer(const ns_tensor *u, const ns_tensor *v, char *err) {
  if (need(u, "outer", "first vector", err) || need(v, "outer", "second vector", err)) return NULL;
  size_t shape[2] = {u->n, v->n};
  ns_tensor *y = ns_tensor_new(2, shape, ns_dtype_promote(u->dtype, v->dtype), err);
  if (!y) return NULL;
  for (size_t i = 0; i < u->n; i++) {
    double ui = rd(u, i);
    for (size_t j = 0; j < v->n; j++) wr(y, i * v->n + j, ui * rd(v, j));
  }
  return y;
}

ns_tensor *ns_op_transpose(const ns_tensor *a, char *err) {
  if (need(a, "transpose", "tensor", err)) return NULL;
  if (a->rank != 2) {
    ns_seterr(err, "transpose needs a rank-2 tensor (got rank %d)", a->rank);
    return NULL;
  }
  size_t m = a->shape[0], n = a->shape[1], shape[2] = {n, m};
  ns_tensor *y = ns_tensor_new(2, shape, a->dtype, err);
  if (!y) return NULL;
  size_t es = ns_dtype_size(a->dtype);
  const unsigned char *src = a->data;
  unsigned char *dst = y->data;
  /* bytes are copied as stored: a transpose never rounds */
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) memcpy(dst + (j * m + i) * es, src + (i * n + j) * es, es);
  return y;
}

ns_tensor *ns_op_reshape(const ns_tensor *a, int rank, const size_t *shape, char *err) {
  if (need(a, "reshape", "tensor", err)) return NULL;
  if (ns_shape_check(rank, shape, err) < 0) return NULL;
  size_t n = 1;
  for (int k = 0; k < rank; k++) n *= shape[k];
  if (n != a->n) {
    char fa[64], fb[64];
    ns_shape_format(a->rank, a->shape, fa, sizeof fa);
    ns_shape_format(rank, shape, fb, sizeof fb);
    ns_seterr(err, "cannot reshape %s (%zu elements) to %s (%zu elements)", fa, a->n, fb, n);
    return NULL;
  }
  ns_tensor *y = ns_tensor_new(rank, shape, a->dtype, err);
  if (!y) return NULL;
  memcpy(y->data, a->data, a->n * ns_dtype_size(a->dtype));
  return y;
}

/* Sizes before and after an axis: the tensor is viewed as (outer, shape[axis], inner). */
static void split_at(const ns_tensor *a, int axis, size_t *outer, size_t *inner) {
  *outer = 1;
  *inner = 1;
  for (int k = 0; k < axis; k++) *outer *= a->shape[k];
  for (int k = axis + 1; k < a->rank; k++) *inner *= a->shape[k];
}

ns_tensor *ns_op_slice(const ns_tensor *a, int axis, size_t from, size_t to, char *err) {
  if (need(a, "slice", "tensor", err)) return NULL;
  if (axis < 0 || axis >= a->rank) {
    ns_seterr(err, "axis %d out of range for a rank-%d tensor", axis + 1, a->rank);
    return NULL;
  }
  if (from >= to || to > a->shape[axis]) {
    ns_seterr(err, "slice %zu..%zu is empty or outside axis %d of size %zu", from + 1, to, axis + 1,
              a->shape[axis]);
    return NULL;
  }
  size_t shape[NS_MAXRANK], outer, inner, len = a->shape[axis], w = to - from;
  memcpy(shape, a->shape, sizeof shape);
  shape[axis] = w;
  ns_tensor *y = ns_tensor_new(a->rank, shape, a->dtype, err);
  if (!y) return NULL;
  split_at(a, axis, &outer, &inner);
  size_t es = ns_dtype_size(a->dtype);
  const unsigned char *src = a->data;
  unsigned char *dst = y->data;
  for (size_t o = 0; o < outer; o++)
    memcpy(dst + o * w * inner * es, src + (o * len + from) * inner * es, w * inner * es);
  return y;
}

ns_tensor *ns_op_concat(const ns_tensor *const *parts, size_t count, int axis, char *err) {
  if (count == 0) {
    ns_seterr(err, "concat needs at least one tensor");
    return NULL;
  }
  if (!parts) {
    ns_seterr(err, "concat: the list of tensors is missing (NULL)");
    return NULL;
  }
  for (size_t i = 0; i < count; i++)
    if (!parts[i]) {
      ns_seterr(err, "concat: tensor %zu is missing (NULL)", i + 1);
      return NULL;
    }
  const ns_tensor *p0 = parts[0];
  if (axis < 0 || axis >= p0->rank) {
    ns_seterr(err, "axis %d out of range for rank-%d tensors", axis + 1, p0->rank);
    return NULL;
  }
  size_t shape[NS_MAXRANK];
  memcpy(shape, p0->shape, sizeof shape);
  ns_dtype dt = p0->dtype;
  size_t total = 0;
  for (size_t i = 0; i < count; i++) {
    const ns_tensor *p = parts[i];
    if (p->rank != p0->rank) {
      ns_seterr(err, "tensor %zu has rank %d, tensor 1 has rank %d", i + 1, p->rank, p0->rank);
      return NULL;
    }
    for (int k = 0; k < p0->rank; k++)
      if (k != axis && p->shape[k] != p0->shape[k]) {
        ns_seterr(err, "tensor %zu has size %zu on axis %d, tensor 1 has %zu", i + 1, p->shape[k],
                  k + 1, p0->shape[k]);
        return NULL;
      }
    total += p->shape[axis];
    if (total > NS_MAXELEMS) {
      ns_seterr(err, "concatenated axis too long");
      return NULL;
    }
    dt = ns_dtype_promote(dt, p->dtype);
  }
  shape[axis] = total;
  ns_tensor *y = ns_tensor_new(p0->rank, shape, dt, err);
  if (!y) return NULL;
  size_t outer, inner, off = 0;
  split_at(y, axis, &outer, &inner);
  for (size_t i = 0; i < count; i++) {
    const ns_tensor *p = parts[i];
    size_t len = p->shape[axis];
    for (size_t o = 0; o < outer; o++)
      for (size_t j = 0; j < len * inner; j++)
        wr(y, (o * total + off) * inner + j, rd(p, o * len * inner + j));
    off += len;
  }
  return y;
}

ns_tensor *ns_op_astype(const ns_tensor *a, ns_dtype dtype, char *err) {
  if (need(a, "astype", "tensor", err)) return NULL;
  ns_tensor *y = ns_tensor_new(a->rank, a->shape, dtype, err);
  if (!y) return NULL;
  if (dtype == a->dtype)
    memcpy(y->data, a->data, a->n * ns_dtype_size(dtype));
  else
    for (size_t i = 0; i < a->n; i++) ns_tensor_set(y, i, rd(a, i));
  return y;
}

ns_tensor *ns_op_full(int rank, const size_t *shape, double v, ns_dtype dtype, char *err) {
  ns_tensor *y = ns_tensor_new(rank, shape, dtype, err);
  if (!y) return NULL;
  for (size_t i = 0; i < y->n; i++) wr(y, i, v);
  return y;
}

ns_tensor *ns_op_eye(size_t n, ns_dtype dtype, char *err) {
  size_t shape[2] = {n, n};
  if (ns_shape_check(2, shape, err) < 0) return NULL;
  ns_tensor *y = ns_op_full(2, shape, 0.0, dtype, err);
  if (!y) return NULL;
  for (size_t i = 0; i < n; i++) wr(y, i * n + i, 1.0);
  return y;
}
