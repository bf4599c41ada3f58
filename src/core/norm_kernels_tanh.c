/* norm_kernels_tanh.c: tanh as expm1(2|x|) / (expm1(2|x|) + 2), scalar and AVX2 (see
 * norm_kernels_tanh.h for the bounds). Every operation is a plain IEEE add, subtract,
 * multiply, divide or an exact bit operation, in the same order in both paths: that is
 * what makes their bits equal, so no multiply-add is fused here. */
#include "core/norm_kernels_tanh.h"

/* a compiler targeting FMA must not fuse the scalar path's products and sums */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <math.h>
#include <stdint.h>
#include <string.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define TANH_HAVE_AVX2 1
#include <immintrin.h>
#include <pthread.h>
#endif

/* ln 2 split so that k * LN2_HI is exact for |k| < 2^20 (fdlibm's constants); the Taylor
 * coefficients 1/n! of expm1 on |r| <= ln2/2, whose remainder r^14/14! is below 2^-56 r. */
#define INV_LN2 1.44269504088896338700e+00
#define LN2_HI 6.93147180369123816490e-01
#define LN2_LO 1.90821492927058770002e-10
#define C2 (1.0 / 2)
#define C3 (1.0 / 6)
#define C4 (1.0 / 24)
#define C5 (1.0 / 120)
#define C6 (1.0 / 720)
#define C7 (1.0 / 5040)
#define C8 (1.0 / 40320)
#define C9 (1.0 / 362880)
#define C10 (1.0 / 3628800)
#define C11 (1.0 / 39916800)
#define C12 (1.0 / 479001600)
#define C13 (1.0 / 6227020800.0)
#define TINY 0x1p-28
#define BIG 22.0

double ns_tanh_fast(double x) {
  double a = fabs(x);
  if (!(a >= TINY)) return x; /* tiny, zero or NaN */
  if (a > BIG) return copysign(1.0, x);
  double y = a + a;
  double kf = nearbyint(y * INV_LN2);
  double r = (y - kf * LN2_HI) - kf * LN2_LO;
  double q = C13;
  q = q * r + C12;
  q = q * r + C11;
  q = q * r + C10;
  q = q * r + C9;
  q = q * r + C8;
  q = q * r + C7;
  q = q * r + C6;
  q = q * r + C5;
  q = q * r + C4;
  q = q * r + C3;
  q = q * r + C2;
  double p = r + (r * r) * q; /* expm1(r) */
  uint64_t bits = (uint64_t)((int64_t)kf + 1023) << 52;
  double s;
  memcpy(&s, &bits, sizeof s);  /* 2^k, k in 0 .. 64 */
  double e = (s - 1.0) + s * p; /* expm1(y) = 2^k (1 + p) - 1 */
  return copysign(e / (e + 2.0), x);
}

static void tanh_scalar(const double *z, double *h, size_t n) {
  for (size_t i = 0; i < n; i++) h[i] = ns_tanh_fast(z[i]);
}

#ifdef TANH_HAVE_AVX2
__attribute__((target("avx2"))) static void tanh_avx2(const double *z, double *h, size_t n) {
  const __m256d sign = _mm256_set1_pd(-0.0), one = _mm256_set1_pd(1.0), two = _mm256_set1_pd(2.0);
  const __m256d tiny = _mm256_set1_pd(TINY), big = _mm256_set1_pd(BIG);
  const __m256d c[12] = {_mm256_set1_pd(C13), _mm256_set1_pd(C12), _mm256_set1_pd(C11),
                         _mm256_set1_pd(C10), _mm256_set1_pd(C9),  _mm256_set1_pd(C8),
                         _mm256_set1_pd(C7),  _mm256_set1_pd(C6),  _mm256_set1_pd(C5),
                         _mm256_set1_pd(C4),  _mm256_set1_pd(C3),  _mm256_set1_pd(C2)};
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    __m256d x = _mm256_loadu_pd(z + i);
    __m256d sx = _mm256_and_pd(x, sign), a = _mm256_andnot_pd(sign, x);
    __m256d y = _mm256_add_pd(a, a);
    /* beyond BIG or NaN, k may be anything: those lanes are replaced below */
    __m256d yc = _mm256_min_pd(y, _mm256_set1_pd(2 * BIG));
    __m256d kf = _mm256_round_pd(_mm256_mul_pd(yc, _mm256_set1_pd(INV_LN2)),
                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256d r = _mm256_sub_pd(_mm256_sub_pd(yc, _mm256_mul_pd(kf, _mm256_set1_pd(LN2_HI))),
                              _mm256_mul_pd(kf, _mm256_set1_pd(LN2_LO)));
    __m256d q = c[0];
    for (int k = 1; k < 12; k++) q = _mm256_add_pd(_mm256_mul_pd(q, r), c[k]);
    __m256d p = _mm256_add_pd(r, _mm256_mul_pd(_mm256_mul_pd(r, r), q));
    __m256i k64 = _mm256_cvtepi32_epi64(_mm256_cvtpd_epi32(kf));
    __m256d s =
        _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(k64, _mm256_set1_epi64x(1023)), 52));
    __m256d e = _mm256_add_pd(_mm256_sub_pd(s, one), _mm256_mul_pd(s, p));
    __m256d t = _mm256_or_pd(_mm256_div_pd(e, _mm256_add_pd(e, two)), sx);
    __m256d ge = _mm256_cmp_pd(a, tiny, _CMP_GE_OQ), gt = _mm256_cmp_pd(a, big, _CMP_GT_OQ);
    t = _mm256_blendv_pd(x, t, ge);
    t = _mm256_blendv_pd(t, _mm256_or_pd(one, sx), gt);
    _mm256_storeu_pd(h + i, t);
  }
  tanh_scalar(z + i, h + i, n - i);
}

static int cpu_avx2;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;
static void cpu_probe(void) {
  __builtin_cpu_init();
  cpu_avx2 = __builtin_cpu_supports("avx2");
}
#endif

void ns_tanh_array(const double *z, double *h, size_t n, int simd) {
#ifdef TANH_HAVE_AVX2
  if (simd) {
    pthread_once(&cpu_once, cpu_probe);
    if (cpu_avx2) {
      tanh_avx2(z, h, n);
      return;
    }
  }
#endif
  (void)simd;
  tanh_scalar(z, h, n);
}

const char *ns_tanh_isa(void) {
#ifdef TANH_HAVE_AVX2
  pthread_once(&cpu_once, cpu_probe);
  if (cpu_avx2) return "avx2";
#endif
  return "scalar";
}
