/* half.h: exact conversions between float and the 16-bit formats, inlined (internal to the
 * core). dtype.c's ns_fp16_value, ns_fp16_bits and the bf16 pair are defined through them,
 * and the kernels (norm_kernels.h) call them in their loops: one text for both. Nothing here
 * calls libm, so they cost a few integer operations each (ldexp in ns_fp16_value made an
 * fp16 view of a 64 MB file spend seconds converting). */
#ifndef NS_HALF_H
#define NS_HALF_H

#include <stdint.h>
#include <string.h>

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

#endif
