/* moments.c: mean and variance with every operation rounded to an accumulation dtype.
 *
 * R(v) = ns_round(v, acc) (inlined: round.h) follows each +, -, *, / done in double. For fp32, fp16
 * and bf16 operands the double result of one operation rounded once more to the narrow format
 * equals the correctly rounded narrow operation (double has more than 2p+2 bits), so this
 * reproduces native narrow arithmetic exactly.
 *
 * Inputs are rounded to dtype and then to acc (when acc is narrower than dtype the
 * data is converted before use, as numpy does for x.astype(acc)). The count n is also
 * converted to acc before dividing. */
#include "core/moments.h"
#include "core/round.h"

#include <math.h>
#include <string.h>

#define R(v, acc) ns_round_fast((v), (acc))

/* numpy's pairwise_sum on one chunk (n <= NS_PAIRWISE_CHUNK, so the recursion is shallow). */
static double pairwise_block(const double *t, size_t n, ns_dtype acc) {
  if (n < 8) {
    double r = 0;
    for (size_t i = 0; i < n; i++) r = R(r + t[i], acc);
    return r;
  }
  if (n <= 128) {
    double r[8];
    for (int j = 0; j < 8; j++) r[j] = t[j];
    size_t i;
    for (i = 8; i < n - n % 8; i += 8)
      for (int j = 0; j < 8; j++) r[j] = R(r[j] + t[i + j], acc);
    double res = R(R(R(r[0] + r[1], acc) + R(r[2] + r[3], acc), acc) +
                       R(R(r[4] + r[5], acc) + R(r[6] + r[7], acc), acc),
                   acc);
    for (; i < n; i++) res = R(res + t[i], acc);
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return R(pairwise_block(t, n2, acc) + pairwise_block(t + n2, n - n2, acc), acc);
}

double ns_sum_pairwise(const double *t, size_t n, ns_dtype acc) {
  double res = 0;
  if (!t) return NAN;
  for (size_t i = 0; i < n; i += NS_PAIRWISE_CHUNK) {
    size_t k = n - i < NS_PAIRWISE_CHUNK ? n - i : NS_PAIRWISE_CHUNK;
    res = R(res + pairwise_block(t + i, k, acc), acc);
  }
  return res;
}

/* Pairwise sum of the terms term(i), i = 0..n-1, made one chunk at a time. */
#define PAIRWISE_OF(res, n, acc, term)                                                             \
  do {                                                                                             \
    double chunk_[NS_PAIRWISE_CHUNK];                                                              \
    (res) = 0;                                                                                     \
    for (size_t c0_ = 0; c0_ < (n); c0_ += NS_PAIRWISE_CHUNK) {                                    \
      size_t k_ = (n)-c0_ < NS_PAIRWISE_CHUNK ? (n)-c0_ : NS_PAIRWISE_CHUNK;                       \
      for (size_t j_ = 0; j_ < k_; j_++) {                                                         \
        size_t i = c0_ + j_;                                                                       \
        chunk_[j_] = (term);                                                                       \
      }                                                                                            \
      (res) = R((res) + pairwise_block(chunk_, k_, (acc)), (acc));                                 \
    }                                                                                              \
  } while (0)

/* Twopass and raw with pairwise sums (rare: not inlined per acc). */
static void moments_pairwise(const double *x, size_t n, size_t stride, ns_dtype dtype, ns_dtype acc,
                             ns_algo algo, ns_moments *out) {
  double rn = R((double)n, acc);
#define XI(i) R(ns_round_fast(x[(i)*stride], dtype), acc)
  if (algo == NS_ALGO_RAW) {
    double sum, sumsq;
    PAIRWISE_OF(sum, n, acc, XI(i));
    PAIRWISE_OF(sumsq, n, acc, R(XI(i) * XI(i), acc));
    double mean = R(sum / rn, acc);
    double msq = R(sumsq / rn, acc);
    double var = R(msq - R(mean * mean, acc), acc);
    out->mean = mean;
    out->m2 = R(var * rn, acc);
  } else {
    double sum, m2;
    PAIRWISE_OF(sum, n, acc, XI(i));
    double mean = R(sum / rn, acc);
    PAIRWISE_OF(m2, n, acc, R(R(XI(i) - mean, acc) * R(XI(i) - mean, acc), acc));
    out->mean = mean;
    out->m2 = m2;
  }
#undef XI
}

/* The loops, for a given acc; inlined into ns_moments_compute once per common acc so the
 * rounding of every operation compiles to its own instructions instead of a branch. */
NS_ALWAYS_INLINE static inline void moments_loops(const double *x, size_t n, size_t stride,
                                                  ns_dtype dtype, ns_dtype acc, ns_algo algo,
                                                  ns_moments *out) {
  double rn = R((double)n, acc);
#define XI(i) R(ns_round_fast(x[(i)*stride], dtype), acc)
  switch (algo) {
  case NS_ALGO_RAW: {
    double sum = 0, sumsq = 0;
    for (size_t i = 0; i < n; i++) {
      double v = XI(i);
      sum = R(sum + v, acc);
      sumsq = R(sumsq + R(v * v, acc), acc);
    }
    double mean = R(sum / rn, acc);
    double msq = R(sumsq / rn, acc);
    double var = R(msq - R(mean * mean, acc), acc);
    out->mean = mean;
    out->m2 = R(var * rn, acc);
    break;
  }
  case NS_ALGO_WELFORD: {
    double mean = 0, m2 = 0;
    for (size_t i = 0; i < n; i++) {
      double v = XI(i);
      double k = R((double)(i + 1), acc);
      double d = R(v - mean, acc);
      mean = R(mean + R(d / k, acc), acc);
      m2 = R(m2 + R(d * R(v - mean, acc), acc), acc);
    }
    out->mean = mean;
    out->m2 = m2;
    break;
  }
  case NS_ALGO_TWOPASS:
  default: {
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum = R(sum + XI(i), acc);
    double mean = R(sum / rn, acc);
    double m2 = 0;
    for (size_t i = 0; i < n; i++) {
      double d = R(XI(i) - mean, acc);
      m2 = R(m2 + R(d * d, acc), acc);
    }
    out->mean = mean;
    out->m2 = m2;
    break;
  }
  }
#undef XI
}

void ns_moments_compute(const double *x, size_t n, size_t stride, ns_dtype dtype, ns_dtype acc,
                        ns_algo algo, ns_moments *out) {
  ns_moments_compute_ex(x, n, stride, dtype, acc, algo, NS_ORDER_SEQUENTIAL, out);
}

void ns_moments_compute_ex(const double *x, size_t n, size_t stride, ns_dtype dtype, ns_dtype acc,
                           ns_algo algo, ns_order order, ns_moments *out) {
  if (!out) return;
  out->n = (double)n;
  if (n == 0 || !x) {
    out->n = 0;
    out->mean = NAN;
    out->m2 = NAN;
    return;
  }
  if (stride == 0) stride = 1;
  if ((order == NS_ORDER_PAIRWISE || order == NS_ORDER_NUMPY) && algo != NS_ALGO_WELFORD)
    moments_pairwise(x, n, stride, dtype, acc, algo, out);
  else if (acc == NS_FP64)
    moments_loops(x, n, stride, dtype, NS_FP64, algo, out);
  else if (acc == NS_FP32)
    moments_loops(x, n, stride, dtype, NS_FP32, algo, out);
  else
    moments_loops(x, n, stride, dtype, acc, algo, out);
}

double ns_moments_var(const ns_moments *m, int ddof) {
  if (!m || m->n <= (double)ddof) return NAN;
  return m->m2 / (m->n - (double)ddof);
}

double ns_moments_var_acc(const ns_moments *m, int ddof, ns_dtype acc) {
  if (!m || m->n <= (double)ddof) return NAN;
  return R(m->m2 / R(m->n - (double)ddof, acc), acc);
}

ns_moments ns_moments_merge(ns_moments a, ns_moments b) {
  if (!(b.n > 0)) return a;
  if (!(a.n > 0)) return b;
  ns_moments r;
  r.n = a.n + b.n;
  double delta = b.mean - a.mean;
  r.mean = a.mean + delta * b.n / r.n;
  r.m2 = a.m2 + b.m2 + delta * delta * a.n * b.n / r.n;
  return r;
}

const char *const ns_algo_names[] = {"twopass", "welford", "raw", NULL};

const char *ns_algo_name(ns_algo a) {
  return (unsigned)a <= NS_ALGO_RAW ? ns_algo_names[a] : "?";
}

int ns_algo_parse(const char *name, ns_algo *out) {
  ns_algo a;
  if (!name) return -1;
  if (strcmp(name, "twopass") == 0 || strcmp(name, "two-pass") == 0)
    a = NS_ALGO_TWOPASS;
  else if (strcmp(name, "welford") == 0)
    a = NS_ALGO_WELFORD;
  else if (strcmp(name, "raw") == 0)
    a = NS_ALGO_RAW;
  else
    return -1;
  if (out) *out = a;
  return 0;
}

const char *const ns_order_names[] = {"sequential", "pairwise", "torch", "numpy", NULL};

const char *ns_order_name(ns_order o) {
  return (unsigned)o <= NS_ORDER_NUMPY ? ns_order_names[o] : "?";
}

int ns_order_parse(const char *name, ns_order *out) {
  if (!name) return -1;
  ns_order o;
  if (strcmp(name, "sequential") == 0)
    o = NS_ORDER_SEQUENTIAL;
  else if (strcmp(name, "pairwise") == 0)
    o = NS_ORDER_PAIRWISE;
  else if (strcmp(name, "torch") == 0)
    o = NS_ORDER_TORCH;
  else if (strcmp(name, "numpy") == 0)
    o = NS_ORDER_NUMPY;
  else
    return -1;
  if (out) *out = o;
  return 0;
}
