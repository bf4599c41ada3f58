/* round.h: ns_round inlined for the hot loops of the core (internal, not public API).
 *
 * ns_round_fast(v, d) returns exactly what ns_round(v, d) returns, bit for bit: fp64 is the
 * identity, fp32 the C conversion (NaN passed through unchanged, as ns_round does), and
 * fp16/bf16 call ns_round itself. Inlining the two common cases removes a function call
 * per arithmetic operation from the emulated-precision loops (normalize, moments). */
#ifndef NS_ROUND_H
#define NS_ROUND_H

#include <math.h>

#include "core/dtype.h"

#if defined(__GNUC__) || defined(__clang__)
#define NS_ALWAYS_INLINE __attribute__((always_inline))
#else
#define NS_ALWAYS_INLINE
#endif

/* For a function of elementwise loops that GCC's -O2 leaves scalar (its cost model refuses
 * loops of unknown length): IEEE arithmetic element by element, so the vector code gives
 * each value the bits of the scalar loop. Sums are not vectorized by it (no reassociation). */
#if defined(__GNUC__) && !defined(__clang__)
#define NS_VECTORIZE __attribute__((optimize("tree-loop-vectorize", "vect-cost-model=dynamic")))
#else
#define NS_VECTORIZE
#endif

static inline double ns_round_fast(double v, ns_dtype d) {
  if (d == NS_FP64) return v;
  if (d == NS_FP32) return isnan(v) ? v : (double)(float)v;
  return ns_round(v, d);
}

#endif
