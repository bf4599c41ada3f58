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
/* Population (ddof 0) or sample (ddof 1) variance m2/(n-ddof); NaN when n <= ddof. */
double ns_moments_var(const ns_moments *m, int ddof);
/* Moments of the union of the two samples (Chan, Golub and LeVeque's pairwise update),
 * in double: delta = b.mean - a.mean; mean = a.mean + delta*b.n/n;
 * m2 = a.m2 + b.m2 + delta^2*a.n*b.n/n. Either side may be empty (n = 0). */
ns_moments ns_moments_merge(ns_moments a, ns_moments b);

extern const char *const ns_algo_names[]; /* "twopass", "welford", "raw", NULL */
const char *ns_algo_name(ns_algo a);      /* "twopass", "welford", "raw" */
int ns_algo_parse(const char *name, ns_algo *out);

#endif
