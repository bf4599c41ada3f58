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

/* As ns_tensor_set for a value that is a float. */
static inline void nk_write_f(void *y, size_t i, float v, ns_dtype ydt) {
  switch (ydt) {
  case NS_FP64:
    ((double *)y)[i] = v;
    break;
  case NS_FP32:
    ((float *)y)[i] = v;
    break;
  case NS_FP16:
    ((uint16_t *)y)[i] = nk_f2h(v);
    break;
  default:
    ((uint16_t *)y)[i] = nk_f2b(v);
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
  j->batch[s].m2 = j->m2_used ? m2 : NAN;
  if (j->sq) j->sq[s] = sq;
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

/* the lane loops unrolled, so each lane's running sums stay in registers */
#if defined(__GNUC__) && !defined(__clang__)
#define NK_UNROLL _Pragma("GCC unroll 8")
#elif defined(__clang__)
#define NK_UNROLL _Pragma("clang loop unroll(full)")
#else
#define NK_UNROLL
#endif

#if NK_AVX2
/* ---- AVX2 helpers: 8 float lanes. Conversions give exactly nk_h2f, nk_b2f, nk_f2h and
 * nk_f2b lane by lane (fp16 through F16C, which every AVX2 CPU has and pick() checks). ---- */
static inline __m256 nk_v_h2f(__m128i h16) {
  /* F16C converts exactly; only a NaN keeps its payload there, and ns_fp16_value makes every
   * NaN the default one: put sign | 0x7fc00000 in those lanes */
  __m256 f = _mm256_cvtph_ps(h16);
  __m256 nan = _mm256_cmp_ps(f, f, _CMP_UNORD_Q);
  __m256 canon =
      _mm256_or_ps(_mm256_and_ps(f, _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u))),
                   _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000)));
  return _mm256_blendv_ps(f, canon, nan);
}

static inline __m256 nk_v_b2f(__m128i h16) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h16), 16));
}

/* 8 lanes of 32-bit values below 2^16 packed to 8 uint16 */
static inline __m128i nk_v_pack16(__m256i r) {
  __m256i p = _mm256_packus_epi32(r, r); /* per 128-bit half: r0..r3 r0..r3 | r4..r7 r4..r7 */
  p = _mm256_permute4x64_epi64(p, 0x08); /* 64-bit pieces 0 and 2 */
  return _mm256_castsi256_si128(p);
}

static inline __m128i nk_v_f2h(__m256 v) {
  /* F16C rounds to nearest even like ns_fp16_bits; a NaN becomes sign | 0x7e00 first, as
   * ns_fp16_bits gives for every NaN */
  __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
  __m256 canon =
      _mm256_or_ps(_mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u))),
                   _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000)));
  return _mm256_cvtps_ph(_mm256_blendv_ps(v, canon, nan),
                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

static inline __m128i nk_v_f2b(__m256 v) {
  __m256i u = _mm256_castps_si256(v);
  __m256i a = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
  __m256i nan = _mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7f800000));
  __m256i r = _mm256_add_epi32(u, _mm256_set1_epi32(0x7fff));
  r = _mm256_add_epi32(r, _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1)));
  r = _mm256_srli_epi32(r, 16);
  __m256i q = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x8000)),
                              _mm256_set1_epi32(0x7fc0));
  return nk_v_pack16(_mm256_blendv_epi8(r, q, nan));
}

/* 8 consecutive elements of x from element i, as floats */
static inline __m256 nk_v_load8(const void *x, size_t i, ns_dtype xdt) {
  if (xdt == NS_FP32) return _mm256_loadu_ps((const float *)x + i);
  if (xdt == NK_F32_AS_F16) return nk_v_h2f(nk_v_f2h(_mm256_loadu_ps((const float *)x + i)));
  if (xdt == NK_F32_AS_BF16) return nk_v_b2f(nk_v_f2b(_mm256_loadu_ps((const float *)x + i)));
  __m128i h = _mm_loadu_si128((const __m128i *)((const uint16_t *)x + i));
  return xdt == NS_FP16 ? nk_v_h2f(h) : nk_v_b2f(h);
}

/* stream: a non-temporal store where the address allows it (large outputs: y is not read
 * again soon, and the store then needs no read of the line it replaces) */
static inline void nk_v_store8(void *y, size_t i, __m256 v, ns_dtype ydt, int stream) {
  if (ydt == NS_FP32) {
    float *p = (float *)y + i;
    if (stream && (uintptr_t)p % 32 == 0)
      _mm256_stream_ps(p, v);
    else
      _mm256_storeu_ps(p, v);
  } else {
    __m128i *p = (__m128i *)((uint16_t *)y + i);
    __m128i h = ydt == NS_FP16 ? nk_v_f2h(v) : nk_v_f2b(v);
    if (stream && (uintptr_t)p % 16 == 0)
      _mm_stream_si128(p, h);
    else
      _mm_storeu_si128(p, h);
  }
}

/* element base[l] + o of x for each lane l */
static inline __m256 nk_v_lanes(const void *x, const size_t *base, size_t o, ns_dtype xdt) {
  if (xdt == NS_FP32 || xdt == NK_F32_AS_F16 || xdt == NK_F32_AS_BF16) {
    const float *f = (const float *)x + o;
    __m256 v = _mm256_setr_ps(f[base[0]], f[base[1]], f[base[2]], f[base[3]], f[base[4]],
                              f[base[5]], f[base[6]], f[base[7]]);
    return xdt == NS_FP32         ? v
           : xdt == NK_F32_AS_F16 ? nk_v_h2f(nk_v_f2h(v))
                                  : nk_v_b2f(nk_v_f2b(v));
  }
  const uint16_t *h = (const uint16_t *)x + o;
  __m128i v =
      _mm_setr_epi16((short)h[base[0]], (short)h[base[1]], (short)h[base[2]], (short)h[base[3]],
                     (short)h[base[4]], (short)h[base[5]], (short)h[base[6]], (short)h[base[7]]);
  return xdt == NS_FP16 ? nk_v_h2f(v) : nk_v_b2f(v);
}

/* r[l] = 8 consecutive values of lane l  ->  r[k] = value k of every lane */
static inline void nk_v_transpose8(__m256 r[8]) {
  __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xee);
  __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xee);
  __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xee);
  __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xee);
  r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

/* One pass over 8 statistics in float lanes (storage fp32, fp16 or bf16). Pass 0: S += v
 * and, uncentered, Q += v*v; pass 1: D += (v - M)^2. Contiguous runs go 8 values per lane
 * at a time through a transpose, so every lane still adds its own values one by one in
 * index order. Inlined with pass and centered constant. */
NS_ALWAYS_INLINE static inline void nk_v_pass(const nk_job *j, const size_t *base, const int pass,
                                              const int centered, const ns_dtype xdt, __m256 *S,
                                              __m256 *Q, __m256 M, __m256 *D) {
  const void *x = j->x;
  const size_t e3 = j->mext[3], t3 = j->mstr[3];
  int adj = 1;
  for (int l = 1; l < 8; l++) adj &= base[l] == base[0] + (size_t)l;
  __m256 s = *S, q = *Q, d2 = *D, r[8];
  for (size_t i0 = 0; i0 < j->mext[0]; i0++)
    for (size_t i1 = 0; i1 < j->mext[1]; i1++)
      for (size_t i2 = 0; i2 < j->mext[2]; i2++) {
        size_t o2 = i0 * j->mstr[0] + i1 * j->mstr[1] + i2 * j->mstr[2], i3 = 0;
        if (t3 == 1)
          for (; i3 + 8 <= e3; i3 += 8) {
            NK_UNROLL
            for (int l = 0; l < 8; l++) r[l] = nk_v_load8(x, base[l] + o2 + i3, xdt);
            nk_v_transpose8(r);
            NK_UNROLL
            for (int k = 0; k < 8; k++) {
              if (pass == 0) {
                s = _mm256_add_ps(s, r[k]);
                if (!centered) q = _mm256_add_ps(q, _mm256_mul_ps(r[k], r[k]));
              } else {
                __m256 d = _mm256_sub_ps(r[k], M);
                d2 = _mm256_add_ps(d2, _mm256_mul_ps(d, d));
              }
            }
          }
        for (; i3 < e3; i3++) {
          /* adjacent statistics (e.g. the columns of batch norm over (B, D)): one load */
          __m256 v = adj ? nk_v_load8(x, base[0] + o2 + i3 * t3, xdt)
                         : nk_v_lanes(x, base, o2 + i3 * t3, xdt);
          if (pass == 0) {
            s = _mm256_add_ps(s, v);
            if (!centered) q = _mm256_add_ps(q, _mm256_mul_ps(v, v));
          } else {
            __m256 d = _mm256_sub_ps(v, M);
            d2 = _mm256_add_ps(d2, _mm256_mul_ps(d, d));
          }
        }
      }
  *S = s, *Q = q, *D = d2;
}

/* Twopass sums of 8 statistics: s1 (sum), s2 (sum of squares, uncentered only), the means
 * (rounded to fp32 as the reference does) and m2 (sum of squared deviations). */
NS_ALWAYS_INLINE static inline void nk_v_twopass(const nk_job *j, const size_t *base,
                                                 const int centered, const ns_dtype xdt, float *s1,
                                                 float *s2, float *m2, double *mean) {
  __m256 S = _mm256_setzero_ps(), Q = S, D = S, M;
  nk_v_pass(j, base, 0, centered, xdt, &S, &Q, S, &D);
  float mk[8];
  _mm256_storeu_ps(s1, S);
  _mm256_storeu_ps(s2, Q);
  for (int l = 0; l < 8; l++)
    mean[l] = ns_round_fast((double)s1[l] / j->rn, NS_FP32), mk[l] = (float)mean[l];
  if (!j->m2_used) { /* RMS: the sum of squares is the statistic; no second pass */
    for (int l = 0; l < 8; l++) m2[l] = NAN;
    return;
  }
  M = _mm256_loadu_ps(mk);
  nk_v_pass(j, base, 1, centered, xdt, &S, &Q, M, &D);
  _mm256_storeu_ps(m2, D);
}

/* 4 consecutive elements of x (fp64, or fp32 widened exactly) from element i */
/* 4 consecutive elements of x from element i (fp64, fp32, fp16 or bf16 storage) as doubles,
 * each exactly the value ns_tensor_get reads (a NaN of fp16 the default one, as nk_v_h2f) */
static inline __m256d nk_v_load4d(const void *x, size_t i, ns_dtype xdt) {
  if (xdt == NS_FP64) return _mm256_loadu_pd((const double *)x + i);
  if (xdt == NS_FP32) return _mm256_cvtps_pd(_mm_loadu_ps((const float *)x + i));
  __m128i h = _mm_loadl_epi64((const __m128i *)((const uint16_t *)x + i));
  __m256 f = xdt == NS_FP16 ? nk_v_h2f(h) : nk_v_b2f(h); /* lanes 4-7 are zeros */
  return _mm256_cvtps_pd(_mm256_castps256_ps128(f));
}

/* 4 doubles to y[i..i+4): fp64 (streaming where asked and aligned) or rounded to fp32 (the
 * scalar (float) conversion's rounding, to nearest) */
static inline void nk_v_store4d(void *y, size_t i, __m256d v, ns_dtype ydt, int stream) {
  if (ydt == NS_FP32) {
    _mm_storeu_ps((float *)y + i, _mm256_cvtpd_ps(v));
    return;
  }
  double *p = (double *)y + i;
  if (stream && (uintptr_t)p % 32 == 0)
    _mm256_stream_pd(p, v);
  else
    _mm256_storeu_pd(p, v);
}

static inline double nk_elem_d(const void *x, size_t i, ns_dtype xdt) {
  if (xdt == NS_FP64) return ((const double *)x)[i];
  if (xdt == NS_FP32) return (double)((const float *)x)[i];
  uint16_t h = ((const uint16_t *)x)[i];
  return xdt == NS_FP16 ? (double)nk_h2f(h) : (double)nk_b2f(h);
}

static inline void nk_v_transpose4d(__m256d r[4]) {
  __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
  __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
  r[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
  r[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
  r[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
  r[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

/* nk_v_pass in double lanes (acc fp64; storage fp64, fp32, fp16 or bf16): 8 statistics as two
 * groups of 4 lanes in the same loop, so two chains of additions are in flight (one group after the
 * other waited on the adder's latency at every element). */
NS_ALWAYS_INLINE static inline void nk_v_pass_d(const nk_job *j, const size_t *bs, const int pass,
                                                const int centered, const ns_dtype xdt, __m256d *S,
                                                __m256d *Q, const __m256d *M, __m256d *D) {
  const void *x = j->x;
  const size_t e3 = j->mext[3], t3 = j->mstr[3];
  int adj[2] = {1, 1};
  for (int g = 0; g < 2; g++)
    for (int l = 1; l < 4; l++) adj[g] &= bs[4 * g + l] == bs[4 * g] + (size_t)l;
  __m256d s[2] = {S[0], S[1]}, q[2] = {Q[0], Q[1]}, d2[2] = {D[0], D[1]}, r[2][4];
  for (size_t i0 = 0; i0 < j->mext[0]; i0++)
    for (size_t i1 = 0; i1 < j->mext[1]; i1++)
      for (size_t i2 = 0; i2 < j->mext[2]; i2++) {
        size_t o2 = i0 * j->mstr[0] + i1 * j->mstr[1] + i2 * j->mstr[2], i3 = 0;
        if (t3 == 1)
          for (; i3 + 4 <= e3; i3 += 4) {
            NK_UNROLL
            for (int g = 0; g < 2; g++) {
              NK_UNROLL
              for (int l = 0; l < 4; l++) r[g][l] = nk_v_load4d(x, bs[4 * g + l] + o2 + i3, xdt);
              nk_v_transpose4d(r[g]);
            }
            NK_UNROLL
            for (int k = 0; k < 4; k++) {
              NK_UNROLL
              for (int g = 0; g < 2; g++) {
                if (pass == 0) {
                  s[g] = _mm256_add_pd(s[g], r[g][k]);
                  if (!centered) q[g] = _mm256_add_pd(q[g], _mm256_mul_pd(r[g][k], r[g][k]));
                } else {
                  __m256d d = _mm256_sub_pd(r[g][k], M[g]);
                  d2[g] = _mm256_add_pd(d2[g], _mm256_mul_pd(d, d));
                }
              }
            }
          }
        for (; i3 < e3; i3++) {
          size_t o = o2 + i3 * t3;
          NK_UNROLL
          for (int g = 0; g < 2; g++) {
            const size_t *b = bs + 4 * g;
            __m256d v =
                adj[g] ? nk_v_load4d(x, b[0] + o, xdt)
                       : _mm256_setr_pd(nk_elem_d(x, b[0] + o, xdt), nk_elem_d(x, b[1] + o, xdt),
                                        nk_elem_d(x, b[2] + o, xdt), nk_elem_d(x, b[3] + o, xdt));
            if (pass == 0) {
              s[g] = _mm256_add_pd(s[g], v);
              if (!centered) q[g] = _mm256_add_pd(q[g], _mm256_mul_pd(v, v));
            } else {
              __m256d d = _mm256_sub_pd(v, M[g]);
              d2[g] = _mm256_add_pd(d2[g], _mm256_mul_pd(d, d));
            }
          }
        }
      }
  for (int g = 0; g < 2; g++) S[g] = s[g], Q[g] = q[g], D[g] = d2[g];
}

NS_ALWAYS_INLINE static inline void nk_v_twopass_d(const nk_job *j, const size_t *base,
                                                   const int centered, const ns_dtype xdt,
                                                   double *s1, double *s2, double *m2,
                                                   double *mean) {
  const __m256d z = _mm256_setzero_pd();
  __m256d S[2] = {z, z}, Q[2] = {z, z}, D[2] = {z, z}, M[2] = {z, z};
  nk_v_pass_d(j, base, 0, centered, xdt, S, Q, M, D);
  for (int g = 0; g < 2; g++) {
    _mm256_storeu_pd(s1 + 4 * g, S[g]);
    _mm256_storeu_pd(s2 + 4 * g, Q[g]);
  }
  for (int l = 0; l < 8; l++) mean[l] = s1[l] / j->rn;
  if (!j->m2_used) { /* RMS: no second pass (nk_v_twopass) */
    for (int l = 0; l < 8; l++) m2[l] = NAN;
    return;
  }
  M[0] = _mm256_loadu_pd(mean), M[1] = _mm256_loadu_pd(mean + 4);
  nk_v_pass_d(j, base, 1, centered, xdt, S, Q, M, D);
  for (int g = 0; g < 2; g++) _mm256_storeu_pd(m2 + 4 * g, D[g]);
}
/* The map for 8 adjacent statistics at once (their elements sit side by side: base[l] =
 * base[0] + l, gamma/beta constant within each statistic): lane l computes statistic l's
 * elements with exactly the scalar operations, 8 values per load and store. */
static inline void nk_v_out_lanes(const nk_job *j, size_t b0, const size_t *abase, const float *mu,
                                  const float *den, int centered, ns_dtype xdt, ns_dtype ydt) {
  const __m256 M = _mm256_loadu_ps(mu), Dn = _mm256_loadu_ps(den);
  const float *G = j->g32, *B = j->b32;
  const __m256 Gv = _mm256_setr_ps(G[abase[0]], G[abase[1]], G[abase[2]], G[abase[3]], G[abase[4]],
                                   G[abase[5]], G[abase[6]], G[abase[7]]);
  const __m256 Bv = _mm256_setr_ps(B[abase[0]], B[abase[1]], B[abase[2]], B[abase[3]], B[abase[4]],
                                   B[abase[5]], B[abase[6]], B[abase[7]]);
  for (size_t i0 = 0; i0 < j->mext[0]; i0++)
    for (size_t i1 = 0; i1 < j->mext[1]; i1++)
      for (size_t i2 = 0; i2 < j->mext[2]; i2++) {
        size_t o2 = b0 + i0 * j->mstr[0] + i1 * j->mstr[1] + i2 * j->mstr[2];
        for (size_t i3 = 0; i3 < j->mext[3]; i3++) {
          size_t o = o2 + i3 * j->mstr[3];
          __m256 v = nk_v_load8(j->x, o, xdt);
          if (centered) v = _mm256_sub_ps(v, M);
          v = _mm256_add_ps(_mm256_mul_ps(_mm256_div_ps(v, Dn), Gv), Bv);
          nk_v_store8(j->y, o, v, ydt, 0);
        }
      }
}

static inline void nk_v_out_lanes_d(const nk_job *j, size_t b0, const size_t *abase,
                                    const double *mu, const double *den, int centered, ns_dtype xdt,
                                    ns_dtype ydt) {
  const double *G = j->g64, *B = j->b64;
  for (int g = 0; g < 2; g++) {
    const size_t *ab = abase + 4 * g;
    const __m256d M = _mm256_loadu_pd(mu + 4 * g), Dn = _mm256_loadu_pd(den + 4 * g);
    const __m256d Gv = _mm256_setr_pd(G[ab[0]], G[ab[1]], G[ab[2]], G[ab[3]]);
    const __m256d Bv = _mm256_setr_pd(B[ab[0]], B[ab[1]], B[ab[2]], B[ab[3]]);
    for (size_t i0 = 0; i0 < j->mext[0]; i0++)
      for (size_t i1 = 0; i1 < j->mext[1]; i1++)
        for (size_t i2 = 0; i2 < j->mext[2]; i2++) {
          size_t o2 = b0 + 4 * (size_t)g + i0 * j->mstr[0] + i1 * j->mstr[1] + i2 * j->mstr[2];
          for (size_t i3 = 0; i3 < j->mext[3]; i3++) {
            size_t o = o2 + i3 * j->mstr[3];
            __m256d v = nk_v_load4d(j->x, o, xdt);
            if (centered) v = _mm256_sub_pd(v, M);
            v = _mm256_add_pd(_mm256_mul_pd(_mm256_div_pd(v, Dn), Gv), Bv);
            nk_v_store4d(j->y, o, v, ydt, 0);
          }
        }
  }
}
/* Wide blocks for adjacent statistics whose elements are strided (batch norm over (B, D):
 * statistic = column). NW adjacent statistics (a multiple of the vector width, at most 64)
 * go together, so every row segment read is whole cache lines, and each lane is one
 * statistic summed in index order as everywhere else. Twopass in sequential order, Welford
 * (always in index order) and raw sums: the algorithms of KN(block), lane for lane. */
#define NK_WIDE 256
/* The first pass of a wide block reads each member row's segment from memory: rows far
 * apart, a few lines each, which the hardware prefetcher does not follow. It asks for the
 * segment NK_PF rows on as it starts a row (the later passes find the block in L2). On the
 * (64, 256, 32, 32) fp32 file over axis 1: fp64 statistics 44 -> 30 ms on one core. */
#define NK_PF 8

static void nk_v_wide(const nk_job *j, size_t s, size_t nw, int centered, ns_dtype xdt,
                      ns_dtype ydt) {
  const size_t nv = nw / 8;
  /* Welford and raw moments come out of the first pass (S: Welford's mean, D its m2; raw:
     S and Q the sums), with the block loop's operations in its order, lane by lane */
  const int welf = j->algo == NS_ALGO_WELFORD, raw = j->algo == NS_ALGO_RAW;
  const int sq0 = !centered || raw;
  size_t b0, a0;
  nk_stat_base(j, s, &b0, &a0);
  __m256 S[NK_WIDE / 8], Q[NK_WIDE / 8], M[NK_WIDE / 8], D[NK_WIDE / 8];
  for (size_t v = 0; v < nv; v++) S[v] = Q[v] = D[v] = _mm256_setzero_ps();
  for (int pass = 0; pass < 3; pass++) {
    if (pass == 1 && (welf || raw)) continue;
    if (pass == 1) {
      float s1[NK_WIDE], mk[NK_WIDE];
      for (size_t v = 0; v < nv; v++) _mm256_storeu_ps(s1 + 8 * v, S[v]);
      for (size_t l = 0; l < nw; l++) mk[l] = (float)ns_round_fast((double)s1[l] / j->rn, NS_FP32);
      for (size_t v = 0; v < nv; v++) M[v] = _mm256_loadu_ps(mk + 8 * v);
    } else if (pass == 2) {
      float s1[NK_WIDE], s2[NK_WIDE], m2[NK_WIDE], mk[NK_WIDE], dk[NK_WIDE], gk[NK_WIDE],
          bk[NK_WIDE];
      for (size_t v = 0; v < nv; v++) {
        _mm256_storeu_ps(s1 + 8 * v, S[v]);
        _mm256_storeu_ps(s2 + 8 * v, Q[v]);
        _mm256_storeu_ps(m2 + 8 * v, D[v]);
      }
      for (size_t l = 0; l < nw; l++) {
        double mu, den, mean = s1[l], mm = m2[l];
        size_t bi, ai;
        if (raw)
          nk_raw(j, s1[l], s2[l], &mean, &mm);
        else if (!welf)
          mean = ns_round_fast((double)s1[l] / j->rn, NS_FP32);
        nk_finish(j, s + l, mean, mm, s2[l], &mu, &den);
        mk[l] = (float)mu, dk[l] = (float)den;
        nk_stat_base(j, s + l, &bi, &ai);
        gk[l] = j->g32[ai], bk[l] = j->b32[ai];
      }
      for (size_t v = 0; v < nv; v++) {
        M[v] = _mm256_loadu_ps(mk + 8 * v);
        D[v] = _mm256_loadu_ps(dk + 8 * v);
        S[v] = _mm256_loadu_ps(gk + 8 * v); /* S, Q now hold gamma and beta */
        Q[v] = _mm256_loadu_ps(bk + 8 * v);
      }
    }
    if (pass == 2 && !j->y) return; /* the statistics alone */
    size_t k = 0;                   /* the member's ordinal: Welford's count */
    for (size_t i0 = 0; i0 < j->mext[0]; i0++)
      for (size_t i1 = 0; i1 < j->mext[1]; i1++)
        for (size_t i2 = 0; i2 < j->mext[2]; i2++) {
          size_t o2 = b0 + i0 * j->mstr[0] + i1 * j->mstr[1] + i2 * j->mstr[2];
          for (size_t i3 = 0; i3 < j->mext[3]; i3++, k++) {
            size_t o = o2 + i3 * j->mstr[3];
            if (pass == 0 && i3 + NK_PF < j->mext[3]) {
              size_t es = xdt == NS_FP16 || xdt == NS_BF16 ? 2 : xdt == NS_FP64 ? 8 : 4;
              const char *pf = (const char *)j->x + (o + NK_PF * j->mstr[3]) * es;
              for (size_t b = 0; b < nw * es; b += 64) _mm_prefetch(pf + b, _MM_HINT_T0);
            }
            const __m256 KK = _mm256_set1_ps(
                welf && pass == 0 ? (float)ns_round_fast((double)(k + 1), j->acc) : 1.0f);
            for (size_t v = 0; v < nv; v++) {
              __m256 x8 = nk_v_load8(j->x, o + 8 * v, xdt);
              if (pass == 0) {
                if (welf) {
                  __m256 d = _mm256_sub_ps(x8, S[v]);
                  S[v] = _mm256_add_ps(S[v], _mm256_div_ps(d, KK));
                  D[v] = _mm256_add_ps(D[v], _mm256_mul_ps(d, _mm256_sub_ps(x8, S[v])));
                } else {
                  S[v] = _mm256_add_ps(S[v], x8);
                }
                if (sq0) Q[v] = _mm256_add_ps(Q[v], _mm256_mul_ps(x8, x8));
              } else if (pass == 1) {
                __m256 d = _mm256_sub_ps(x8, M[v]);
                D[v] = _mm256_add_ps(D[v], _mm256_mul_ps(d, d));
              } else {
                if (centered) x8 = _mm256_sub_ps(x8, M[v]);
                x8 = _mm256_add_ps(_mm256_mul_ps(_mm256_div_ps(x8, D[v]), S[v]), Q[v]);
                nk_v_store8(j->y, o + 8 * v, x8, ydt, j->stream);
              }
            }
          }
        }
  }
}

static void nk_v_wide_d(const nk_job *j, size_t s, size_t nw, int centered, ns_dtype xdt,
                        ns_dtype ydt) {
  const size_t nv = nw / 4;
  const int welf = j->algo == NS_ALGO_WELFORD, raw = j->algo == NS_ALGO_RAW; /* as nk_v_wide */
  const int sq0 = !centered || raw;
  size_t b0, a0;
  nk_stat_base(j, s, &b0, &a0);
  __m256d S[NK_WIDE / 4], Q[NK_WIDE / 4], M[NK_WIDE / 4], D[NK_WIDE / 4];
  for (size_t v = 0; v < nv; v++) S[v] = Q[v] = D[v] = _mm256_setzero_pd();
  for (int pass = 0; pass < 3; pass++) {
    if (pass == 1 && (welf || raw)) continue;
    if (pass == 1) {
      double s1[NK_WIDE];
      for (size_t v = 0; v < nv; v++) _mm256_storeu_pd(s1 + 4 * v, S[v]);
      for (size_t l = 0; l < nw; l++) s1[l] = s1[l] / j->rn;
      for (size_t v = 0; v < nv; v++) M[v] = _mm256_loadu_pd(s1 + 4 * v);
    } else if (pass == 2) {
      double s1[NK_WIDE], s2[NK_WIDE], m2[NK_WIDE], mk[NK_WIDE], dk[NK_WIDE], gk[NK_WIDE],
          bk[NK_WIDE];
      for (size_t v = 0; v < nv; v++) {
        _mm256_storeu_pd(s1 + 4 * v, S[v]);
        _mm256_storeu_pd(s2 + 4 * v, Q[v]);
        _mm256_storeu_pd(m2 + 4 * v, D[v]);
      }
      for (size_t l = 0; l < nw; l++) {
        size_t bi, ai;
        double mean = s1[l], mm = m2[l];
        if (raw)
          nk_raw(j, s1[l], s2[l], &mean, &mm);
        else if (!welf)
          mean = s1[l] / j->rn;
        nk_finish(j, s + l, mean, mm, s2[l], &mk[l], &dk[l]);
        nk_stat_base(j, s + l, &bi, &ai);
        gk[l] = j->g64[ai], bk[l] = j->b64[ai];
      }
      for (size_t v = 0; v < nv; v++) {
        M[v] = _mm256_loadu_pd(mk + 4 * v);
        D[v] = _mm256_loadu_pd(dk + 4 * v);
        S[v] = _mm256_loadu_pd(gk + 4 * v);
        Q[v] = _mm256_loadu_pd(bk + 4 * v);
      }
    }
    if (pass == 2 && !j->y) return; /* the statistics alone */
    size_t k = 0;
    for (size_t i0 = 0; i0 < j->mext[0]; i0++)
      for (size_t i1 = 0; i1 < j->mext[1]; i1++)
        for (size_t i2 = 0; i2 < j->mext[2]; i2++) {
          size_t o2 = b0 + i0 * j->mstr[0] + i1 * j->mstr[1] + i2 * j->mstr[2];
          for (size_t i3 = 0; i3 < j->mext[3]; i3++, k++) {
            size_t o = o2 + i3 * j->mstr[3];
            if (pass == 0 && i3 + NK_PF < j->mext[3]) {
              size_t es = xdt == NS_FP16 || xdt == NS_BF16 ? 2 : xdt == NS_FP64 ? 8 : 4;
              const char *pf = (const char *)j->x + (o + NK_PF * j->mstr[3]) * es;
              for (size_t b = 0; b < nw * es; b += 64) _mm_prefetch(pf + b, _MM_HINT_T0);
            }
            const __m256d KK =
                _mm256_set1_pd(welf && pass == 0 ? ns_round_fast((double)(k + 1), j->acc) : 1.0);
            for (size_t v = 0; v < nv; v++) {
              __m256d x4 = nk_v_load4d(j->x, o + 4 * v, xdt);
              if (pass == 0) {
                if (welf) {
                  __m256d d = _mm256_sub_pd(x4, S[v]);
                  S[v] = _mm256_add_pd(S[v], _mm256_div_pd(d, KK));
                  D[v] = _mm256_add_pd(D[v], _mm256_mul_pd(d, _mm256_sub_pd(x4, S[v])));
                } else {
                  S[v] = _mm256_add_pd(S[v], x4);
                }
                if (sq0) Q[v] = _mm256_add_pd(Q[v], _mm256_mul_pd(x4, x4));
              } else if (pass == 1) {
                __m256d d = _mm256_sub_pd(x4, M[v]);
                D[v] = _mm256_add_pd(D[v], _mm256_mul_pd(d, d));
              } else {
                if (centered) x4 = _mm256_sub_pd(x4, M[v]);
                x4 = _mm256_add_pd(_mm256_mul_pd(_mm256_div_pd(x4, D[v]), S[v]), Q[v]);
                nk_v_store4d(j->y, o + 4 * v, x4, ydt, j->stream);
              }
            }
          }
        }
  }
}
#endif

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

static void nk_dispatch(const nk_job *j, size_t s0, size_t s1);

void NK_RUN(const nk_job *j, size_t s0, size_t s1) {
  nk_dispatch(j, s0, s1);
#if NK_AVX2
  _mm_sfence(); /* streaming stores are weakly ordered: finish them before returning */
#endif
}

static void nk_dispatch(const nk_job *j, size_t s0, size_t s1) {
  const ns_dtype x = j->xdt, y = j->dt;
  int native = nk_within(x, j->dt) && nk_within(x, j->acc);
  if (j->acc == NS_FP32 && x == NS_FP32 && (y == NS_FP16 || y == NS_BF16)) {
    /* fp32 values rounded to the spec's 16-bit dtype as they are read (NK_F32_AS_F16) */
    if (y == NS_FP16)
      run_f32(j, s0, s1, NK_F32_AS_F16, NS_FP16);
    else
      run_f32(j, s0, s1, NK_F32_AS_BF16, NS_BF16);
  } else if (native && j->acc == NS_FP32) {
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
