/* norm_kernels_avx2.c: the kernels compiled for AVX2 and F16C (8 float or 4 double lanes,
 * 8x8 and 4x4 transposes for statistics side by side, F16C for fp16). Only called after
 * __builtin_cpu_supports says the CPU has both. FMA is deliberately not enabled, so no
 * multiply-add is ever fused. Elsewhere than x86 with GCC or clang this file is empty. */
#include "core/norm_kernels.h"

#ifdef NK_HAVE_AVX2
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,f16c"))), apply_to = function)
#else
#pragma GCC target("avx2,f16c")
#endif
#define NK_RUN nk_run_avx2
#define NK_AVX2 1
#include "core/norm_kernels_impl.h"

void nk_avx2_convert(const float *in, size_t n, uint16_t *h, uint16_t *b, float *fromh,
                     float *fromb) {
  for (size_t i = 0; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps(in + i);
    __m128i hv = nk_v_f2h(v), bv = nk_v_f2b(v);
    _mm_storeu_si128((__m128i *)(h + i), hv);
    _mm_storeu_si128((__m128i *)(b + i), bv);
    _mm256_storeu_ps(fromh + i, nk_v_h2f(hv));
    _mm256_storeu_ps(fromb + i, nk_v_b2f(bv));
  }
}

void nk_avx2_f32_to_16(const float *in, size_t n, uint16_t *out, int bf16) {
  size_t i = 0;
  if (bf16)
    for (; i + 8 <= n; i += 8)
      _mm_storeu_si128((__m128i *)(out + i), nk_v_f2b(_mm256_loadu_ps(in + i)));
  else
    for (; i + 8 <= n; i += 8)
      _mm_storeu_si128((__m128i *)(out + i), nk_v_f2h(_mm256_loadu_ps(in + i)));
  for (; i < n; i++) out[i] = bf16 ? nk_f2b(in[i]) : nk_f2h(in[i]);
}
#if defined(__clang__)
#pragma clang attribute pop
#endif
#else
typedef int nk_no_avx2; /* ISO C wants a translation unit to declare something */
#endif
