/* norm_kernels_tanh.h: tanh over an array, 4 doubles at a time with AVX2, for ns_stack's
 * activation (glibc's scalar tanh was half of a 20-layer stack's time).
 *
 * ns_tanh_fast is the scalar definition; the AVX2 path performs exactly the same IEEE
 * operations in the same order (no fused multiply-add anywhere), so the two give the same
 * bits for every input (test_kernels checks this over random and special values).
 *
 * It is not libm's tanh: for |x| in [2^-28, 22] it computes e = expm1(2|x|) (Cody-Waite
 * reduction by ln 2 and a degree-13 Taylor polynomial) and tanh = e / (e + 2) with x's
 * sign; below 2^-28 it returns x (then tanh(x) = x to within 2^-56 relatively), above 22
 * it returns +-1 (1 - tanh(22) < 2^-62). NaN gives x, +-inf gives +-1. Its distance from
 * glibc's tanh is at most NS_TANH_ULPS units in the last place: test_kernels measures it
 * over 2^21 values uniform in [-25, 25] and log-spaced down to 1e-300 (the largest seen is
 * 3 ulps, near |x| = 0.23, where e = expm1(2|x|) has one more rounding; glibc's own tanh is
 * within 2 ulps of the exact value by its manual).
 *
 * Nothing is allocated; h may be z. */
#ifndef NS_NORM_KERNELS_TANH_H
#define NS_NORM_KERNELS_TANH_H

#include <stddef.h>

#define NS_TANH_ULPS 4

double ns_tanh_fast(double x);
/* h[i] = ns_tanh_fast(z[i]) for i < n; simd 0 takes the scalar loop. */
void ns_tanh_array(const double *z, double *h, size_t n, int simd);
/* "avx2" when ns_tanh_array(..., 1) takes the vector path on this CPU, else "scalar". */
const char *ns_tanh_isa(void);

#endif
