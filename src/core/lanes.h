/* lanes.h: the sums of the spectrum check's passes over long vectors (spectrum.c, jvp.c).
 *
 * A sum over m values runs over NS_LANE_PARTS fixed parts of them, whatever the thread
 * count, with four sums side by side in each part (term i into sum (i - start) mod 4, the
 * part's tail into the first), the four added as (s0 + s1) + (s2 + s3) and the parts in
 * order: the chains of additions overlap, so a pass over 1e6 values costs a quarter of one
 * serial sum, and the parts run on threads; the same bits on any thread count.
 *
 * The loops take four values at a time as two pairs of GCC/clang vectors (SSE2's on
 * x86-64's baseline; four-wide vectors measured four times slower without AVX): pair a
 * holds terms i and i + 1, pair b i + 2 and i + 3, so lane by lane they are the four sums,
 * and each lane's arithmetic is the scalar expression's, operation for operation: a value
 * has the same bits in a lane as in a loop's scalar tail. */
#ifndef NS_LANES_H
#define NS_LANES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define NS_LANE_PARTS 2
#define NS_LANE_LO(q, m) ((m) * (size_t)(q) / NS_LANE_PARTS) /* part q's first value */

typedef double ns_v2 __attribute__((vector_size(16)));
typedef int64_t ns_l2 __attribute__((vector_size(16)));

static inline ns_v2 ns_v2_ld(const double *p) {
  ns_v2 v;
  memcpy(&v, p, sizeof v);
  return v;
}
static inline void ns_v2_st(double *p, ns_v2 v) {
  memcpy(p, &v, sizeof v);
}
/* the four sums of pairs a, b added as the scalar loops add theirs */
static inline double ns_v2_sum4(ns_v2 a, ns_v2 b) {
  return (a[0] + a[1]) + (b[0] + b[1]);
}
/* |v| (the sign bit cleared, as fabs) and lane by lane a > b ? a : b (a NaN a is not
   taken) */
static inline ns_v2 ns_v2_abs(ns_v2 v) {
  return (ns_v2)((ns_l2)v & INT64_MAX);
}
static inline ns_v2 ns_v2_max(ns_v2 a, ns_v2 b) {
  ns_l2 gt = a > b;
  return (ns_v2)(((ns_l2)a & gt) | ((ns_l2)b & ~gt));
}

#endif
