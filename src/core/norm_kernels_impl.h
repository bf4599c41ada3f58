/* norm_kernels_impl.h: the kernels' text, included once per instruction set by
 * norm_kernels.c (portable) and norm_kernels_avx2.c (AVX2). Not a public header.
 *
 * The includer defines NK_RUN (the name of the entry point) and NK_AVX2 (0 or 1). This
 * file includes norm_kernels_body.h three times: arithmetic in float (acc fp32 on values
 * that need no rounding to be read), in double (acc fp64, likewise) and "generic" (double
 * with every operation rounded through ns_round_fast, for every other combination).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/norm_kernels.h"
#include "core/round.h"

#if NK_AVX2
#include <immintrin.h>
#endif

/* half -> float, exactly ns_fp16_value (a NaN becomes the default NaN with the sign) */
static inline float nk_h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, em = h & 0x7fffu, w;
  float f;
  if (em >= 0x7c00u) {
    f = em == 0x7c00u ? INFINITY : NAN;
    return sign ? -f : f;
  }
  w = em << 13; /* the half's bits as a float 2^112 times too small: scale exactly */
  memcpy(&f, &w, sizeof f);
  f *= 0x1p112f;
  return sign ? -f : f;
}

static inline float nk_b2f(uint16_t h) {
  uint32_t w = (uint32_t)h << 16;
  float f;
  memcpy(&f, &w, sizeof f);
  return f;
}

/* As ns_tensor_get. */
static inline double nk_read(const void *x, size_t i, ns_dtype xdt) {
  switch (xdt) {
  case NS_FP64:
    return ((const double *)x)[i];
  case NS_FP32:
    return ((const float *)x)[i];
  case NS_FP16:
    return nk_h2f(((const uint16_t *)x)[i]);
  default:
    return nk_b2f(((const uint16_t *)x)[i]);
  }
}

/* As ns_tensor_set. */
static inline void nk_write(void *y, size_t i, double v, ns_dtype ydt) {
  switch (ydt) {
  case NS_FP64:
    ((double *)y)[i] = v;
    break;
  case NS_FP32:
    ((float *)y)[i] = (float)v;
    break;
  case NS_FP16:
    ((uint16_t *)y)[i] = ns_fp16_bits(v);
    break;
  default:
    ((uint16_t *)y)[i] = ns_bf16_bits(v);
    break;
  }
}

/* Offset of statistic s's first element and its gamma/beta base. */
static inline void nk_stat_base(const nk_job *j, size_t s, size_t *base, size_t *abase) {
  size_t b = 0, a = 0;
  for (int l = j->nsl - 1; l >= 0; l--) {
    size_t c = s % j->sext[l];
    s /= j->sext[l];
    b += c * j->sstr[l];
    a += c * j->samul[l];
  }
  *base = b;
  *abase = a;
}

/* The statistic's scalars from its sums, as the reference computes them (double, every
 * operation rounded to acc); returns mean and denominator for the map. */
static inline void nk_finish(const nk_job *j, size_t s, double mean, double m2, double sq,
                             double *mu_out, double *den_out) {
  const ns_dtype acc = j->acc;
#define RR(v) ns_round_fast((v), acc)
  j->batch[s].n = (double)j->count;
  j->batch[s].mean = mean;
  j->batch[s].m2 = m2;
  double mu, v;
  if (j->eval) {
    const ns_running *run = j->run;
    double rm = run->nstat ? run->mean[s] : 0.0, rv = run->nstat ? run->var[s] : 1.0;
    mu = j->centered ? RR(rm) : 0.0;
    v = j->centered ? RR(rv) : RR(RR(rv) + RR(RR(rm) * RR(rm)));
  } else if (j->centered) {
    mu = mean;
    v = RR(m2 / j->rdof);
  } else {
    mu = 0.0;
    v = RR(sq / j->rdof);
  }
  double den = !j->eps_at_std ? RR(sqrt(RR(v + j->eps))) : RR(RR(sqrt(v)) + j->eps);
  j->mean[s] = mu;
  j->var[s] = v;
  j->denom[s] = den;
  j->degenerate[s] = !(den > 0) || !isfinite(den) || (!j->eval && j->count <= (size_t)j->ddof);
  *mu_out = mu;
  *den_out = den;
#undef RR
}

/* raw algorithm's mean and m2 from its sums (double, rounded to acc) */
static inline void nk_raw(const nk_job *j, double sum, double sumsq, double *mean, double *m2) {
  const ns_dtype acc = j->acc;
  double mn = ns_round_fast(sum / j->rn, acc);
  double msq = ns_round_fast(sumsq / j->rn, acc);
  double var = ns_round_fast(msq - ns_round_fast(mn * mn, acc), acc);
  *mean = mn;
  *m2 = ns_round_fast(var * j->rn, acc);
}

/* float arithmetic */
#define KT float
#define KN(n) n##_f32
#define KGEN 0
#define KF32 1
#include "core/norm_kernels_body.h"
#undef KT
#undef KN
#undef KGEN
#undef KF32

/* double arithmetic */
#define KT double
#define KN(n) n##_f64
#define KGEN 0
#define KF32 0
#include "core/norm_kernels_body.h"
#undef KT
#undef KN
#undef KGEN
#undef KF32

/* double arithmetic rounded to acc after every operation */
#define KT double
#define KN(n) n##_gen
#define KGEN 1
#define KF32 0
#include "core/norm_kernels_body.h"
#undef KT
#undef KN
#undef KGEN
#undef KF32

/* 1 if every value of dtype a is a value of dtype b */
static inline int nk_within(ns_dtype a, ns_dtype b) {
  return a == b || b == NS_FP64 || (b == NS_FP32 && (a == NS_FP16 || a == NS_BF16));
}

void NK_RUN(const nk_job *j, size_t s0, size_t s1) {
  const ns_dtype x = j->xdt, y = j->dt;
  int native = nk_within(x, j->dt) && nk_within(x, j->acc);
  if (native && j->acc == NS_FP32) {
    if (x == NS_FP32 && y == NS_FP32)
      run_f32(j, s0, s1, NS_FP32, NS_FP32);
    else if (x == NS_FP16 && y == NS_FP16)
      run_f32(j, s0, s1, NS_FP16, NS_FP16);
    else if (x == NS_BF16 && y == NS_BF16)
      run_f32(j, s0, s1, NS_BF16, NS_BF16);
    else
      run_f32(j, s0, s1, x, y);
  } else if (native && j->acc == NS_FP64) {
    if (x == NS_FP64 && y == NS_FP64)
      run_f64(j, s0, s1, NS_FP64, NS_FP64);
    else if (x == NS_FP32 && y == NS_FP32)
      run_f64(j, s0, s1, NS_FP32, NS_FP32);
    else
      run_f64(j, s0, s1, x, y);
  } else {
    run_gen(j, s0, s1, x, y);
  }
}
