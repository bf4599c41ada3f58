/* norm_kernels_avx2.c: the kernels compiled for AVX2 (8 float or 4 double lanes, gathers
 * for statistics side by side). Only called after __builtin_cpu_supports("avx2"); FMA is
 * deliberately not enabled, so no multiply-add is ever fused. Elsewhere than x86 with GCC
 * or clang this file is empty. */
#include "core/norm_kernels.h"

#ifdef NK_HAVE_AVX2
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC target("avx2")
#endif
#define NK_RUN nk_run_avx2
#define NK_AVX2 1
#include "core/norm_kernels_impl.h"
#if defined(__clang__)
#pragma clang attribute pop
#endif
#else
typedef int nk_no_avx2; /* ISO C wants a translation unit to declare something */
#endif
