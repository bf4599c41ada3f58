/* moments.h: mean and variance in a chosen precision, and their exact merge.
 *
 * ns_moments_compute rounds each input to dtype, then performs every arithmetic
 * operation (sums in index order, mean = sum/n, deviations, squares, products)
 * rounded to acc, so fp32 arithmetic on fp32 data is reproduced exactly:
 *
 *   double x[4] = {9998, 9999, 10001, 10002};
 *   ns_moments m;
 *   ns_moments_compute(x, 4, 1, NS_FP32, NS_FP32, NS_ALGO_RAW, &m);
 *   // ns_moments_var(&m, 0) == 0 : mean(x^2) - mean(x)^2 cancels in fp32
 *   ns_moments_compute(x, 4, 1, NS_FP32, NS_FP32, NS_ALGO_TWOPASS, &m);
 *   // ns_moments_var(&m, 0) == 2.5
 */
#ifndef NS_MOMENTS_H
#define NS_MOMENTS_H

#include <stddef.h>

#include "core/dtype.h"

typedef enum { NS_ALGO_TWOPASS = 0, NS_ALGO_WELFORD, NS_ALGO_RAW } ns_algo;

/* The order of every sum: sequential (index order, the default) or numpy's pairwise
 * scheme (ns_sum_pairwise). Welford's recurrence is sequential by nature and ignores it.
 * NS_ORDER_TORCH is torch's CPU LayerNorm, GroupNorm, BatchNorm and InstanceNorm
 * (torchorder.h): a normalization order taken by ns_normalize_ref; the functions of this
 * file treat it as sequential. NS_ORDER_NUMPY is numpy's np.mean/np.var of a C-contiguous
 * array over the statistic's axes (torchorder.h, ns_numpy_sum: pairwise runs along the
 * trailing reduced axes, added in iteration order; a strided reduction adds in index order):
 * also a normalization order; here, on one run of values, it is pairwise. */
typedef enum {
  NS_ORDER_SEQUENTIAL = 0,
  NS_ORDER_PAIRWISE,
  NS_ORDER_TORCH,
  NS_ORDER_NUMPY
} ns_order;

typedef struct {
  double n; /* count (a double so merged counts never overflow) */
  double mean;
  double m2; /* sum of squared deviations from the mean */
} ns_moments;

/* Moments of x[0], x[stride], ..., x[(n-1)*stride] as described above.
 * raw:     mean = sum/n; msq = sum(x^2)/n; var = msq - mean^2; m2 = var * n.
 * twopass: mean = sum/n; m2 = sum((x-mean)^2).
 * welford: k-th step d = x-mean; mean += d/k; m2 += d*(x-mean).
 * n == 0 gives n = 0, mean = NaN, m2 = NaN. */
void ns_moments_compute(const double *x, size_t n, size_t stride, ns_dtype dtype, ns_dtype acc,
                        ns_algo algo, ns_moments *out);
/* The same with an explicit summation order (ns_moments_compute is order sequential). */
void ns_moments_compute_ex(const double *x, size_t n, size_t stride, ns_dtype dtype, ns_dtype acc,
                           ns_algo algo, ns_order order, ns_moments *out);
/* numpy's pairwise sum of t[0..n-1] (values already in acc), every addition rounded to acc:
 * the values go in chunks of NS_PAIRWISE_CHUNK whose pairwise sums are added in order to 0.
 * A pairwise sum of k < 8 values adds them in order to 0; of k <= 128 keeps 8 partial sums
 * r[j] over t[j], t[j+8], ... (for the k - k%8 first values), combines them as
 * ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)) and adds the k%8 rest in order; a longer run is split
 * at k/2 rounded down to a multiple of 8 and the two halves' sums are added. */
#define NS_PAIRWISE_CHUNK 8192
double ns_sum_pairwise(const double *t, size_t n, ns_dtype acc);
/* Population (ddof 0) or sample (ddof 1) variance m2/(n-ddof); NaN when n <= ddof. */
double ns_moments_var(const ns_moments *m, int ddof);
/* The same rounded to acc as every other operation: R(m2 / R(n - ddof)). */
double ns_moments_var_acc(const ns_moments *m, int ddof, ns_dtype acc);
/* Moments of the union of the two samples (Chan, Golub and LeVeque's pairwise update),
 * in double: delta = b.mean - a.mean; mean = a.mean + delta*b.n/n;
 * m2 = a.m2 + b.m2 + delta^2*a.n*b.n/n. Either side may be empty (n = 0). */
ns_moments ns_moments_merge(ns_moments a, ns_moments b);

extern const char *const ns_algo_names[]; /* "twopass", "welford", "raw", NULL */
const char *ns_algo_name(ns_algo a);      /* "twopass", "welford", "raw" */
int ns_algo_parse(const char *name, ns_algo *out);
extern const char *const ns_order_names[]; /* "sequential", "pairwise", "torch", "numpy", NULL */
const char *ns_order_name(ns_order o);     /* "sequential", "pairwise", "torch", "numpy" */
int ns_order_parse(const char *name, ns_order *out);

#endif
