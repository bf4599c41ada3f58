/* norm_kernels.h: the normalization kernels behind ns_normalize (internal to the core).
 *
 * ns_normalize_exec (norm_kernels.c) checks the spec, allocates the result and describes
 * the work as an nk_job: where each statistic's elements are (strides, no per-element
 * lists), the spec's constants already rounded to acc, and the arrays to fill. A kernel
 * then computes statistics [s0, s1) of it; statistics never share an output, so threads
 * may take disjoint ranges. The kernels exist twice, compiled from norm_kernels.inc: the
 * portable build (nk_run_base; SSE2 on x86-64, which the compiler may use by itself) and,
 * on x86, an AVX2 build (nk_run_avx2, only called when the CPU has AVX2).
 *
 * Bits: every kernel computes exactly what ns_normalize_ref computes. Sums run in each
 * statistic's index order; several statistics run side by side (one lane each), which
 * changes nothing in any lane's order. Arithmetic on fp32 (fp64) values with acc fp32
 * (fp64) is done natively in float (double): one IEEE operation equals the double
 * operation rounded to float, as round.h explains; every other combination rounds each
 * operation through ns_round_fast like the reference.
 */
#ifndef NS_NORM_KERNELS_H
#define NS_NORM_KERNELS_H

#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/moments.h"
#include "core/running.h"
#include "core/tensor.h"

/* Exact conversions between float and the 16-bit formats (the same bits as dtype.c). */
/* half -> float, exactly ns_fp16_value (a NaN becomes the default NaN with the sign) */
static inline float nk_h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, em = h & 0x7fffu, w = em << 13;
  float f;
  memcpy(&f, &w, sizeof f);
  f *= 0x1p112f; /* the half's bits read as a float are 2^112 times too small: exact */
  memcpy(&w, &f, sizeof w);
  if (em >= 0x7c00u) w = em == 0x7c00u ? 0x7f800000u : 0x7fc00000u; /* inf, NaN */
  w |= sign; /* no branch on the sign: random signs would mispredict */
  memcpy(&f, &w, sizeof f);
  return f;
}

static inline float nk_b2f(uint16_t h) {
  uint32_t w = (uint32_t)h << 16;
  float f;
  memcpy(&f, &w, sizeof f);
  return f;
}

/* float -> half, ties to even: exactly ns_fp16_bits((double)f) (NaN: sign | 0x7e00) */
static inline uint16_t nk_f2h(float f) {
  uint32_t u, sign;
  memcpy(&u, &f, sizeof u);
  sign = (u >> 16) & 0x8000u;
  u &= 0x7fffffffu;
  if (u >= 0x47800000u) /* 2^16 and above: inf (or NaN) */
    return (uint16_t)(sign | (u > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (u < 0x38800000u) { /* below 2^-14: a half subnormal; let a float addition round it */
    float a;
    uint32_t r;
    memcpy(&a, &u, sizeof a);
    a += 0.5f; /* the half's quantum 2^-24 becomes the float's ulp at 0.5 */
    memcpy(&r, &a, sizeof r);
    return (uint16_t)(sign | (r - 0x3f000000u));
  }
  u += ((uint32_t)(15 - 127) << 23) + 0xfffu + ((u >> 13) & 1u);
  return (uint16_t)(sign | (u >> 13)); /* a carry into exponent 31 is inf, as it should */
}

/* float -> bf16, ties to even: exactly ns_bf16_bits((double)f) (NaN: sign | 0x7fc0) */
static inline uint16_t nk_f2b(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)(((u >> 16) & 0x8000u) | 0x7fc0u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}

#define NK_LEVELS 4 /* member loop levels, padded in front with extent 1 */
#define NK_LANES 8  /* statistics reduced side by side */

typedef struct {
  const void *x;
  void *y;
  ns_dtype xdt, dt, acc; /* x's storage dtype, the spec dtype (= y's), accumulation */
  size_t n, nstat, count;
  /* statistic s: its coordinates over the stat levels (row-major, s = sum c_l * prod ext)
   * give the offset of its first element sum c_l * sstr_l and its gamma/beta base
   * sum c_l * samul_l */
  int nsl;
  size_t sext[NS_MAXRANK], sstr[NS_MAXRANK], samul[NS_MAXRANK];
  /* the elements of a statistic, in index order: NK_LEVELS nested loops */
  size_t mext[NK_LEVELS], mstr[NK_LEVELS], mamul[NK_LEVELS];
  int centered, eval, ddof;
  int stream; /* y is large and reused: the AVX2 kernels write it with non-temporal stores */
  ns_algo algo;
  ns_order order;
  int eps_at_std;
  double eps, rn, rdof; /* in acc */
  /* gamma/beta in acc, naffine values each (1 and -0.0 where absent: exact no-ops) */
  const double *g64, *b64;
  const float *g32, *b32;
  const ns_running *run; /* eval mode's source of statistics, else NULL */
  double *mean, *var, *denom;
  ns_moments *batch;
  unsigned char *degenerate;
} nk_job;

void nk_run_base(const nk_job *j, size_t s0, size_t s1);
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define NK_HAVE_AVX2 1
void nk_run_avx2(const nk_job *j, size_t s0, size_t s1);
/* The AVX2 conversions on n (a multiple of 8) floats, for the tests: h, b the fp16 and bf16
 * patterns of in, fromh, fromb those patterns read back as floats. AVX2 CPUs only. */
void nk_avx2_convert(const float *in, size_t n, uint16_t *h, uint16_t *b, float *fromh,
                     float *fromb);
#endif

#endif
