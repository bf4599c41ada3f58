/* dtype.c: correct (single) rounding of doubles into fp32, fp16 and bf16.
 *
 * fp16 and bf16 are rounded by integer arithmetic on the double's bit pattern, so
 * there is exactly one rounding step whatever the value. fp32 uses the C conversion
 * (double)(float)v, which on IEEE hardware is one correctly rounded step too. */
#include "core/dtype.h"
#include "core/half.h"

#include <math.h>
#include <string.h>

/* A binary format with p significand bits (implicit bit included), minimum normal
 * exponent emin, maximum exponent emax and exponent bias, with the encodings of +inf and
 * of a quiet NaN. */
typedef struct {
  int p;
  int emin;
  int emax;
  int bias;
  uint16_t inf_bits; /* +inf */
  uint16_t nan_bits; /* a quiet NaN */
} fmt16;

static const fmt16 FP16 = {11, -14, 15, 15, 0x7c00, 0x7e00};
static const fmt16 BF16 = {8, -126, 127, 127, 0x7f80, 0x7fc0};

static uint64_t dbits(double v) {
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return u;
}

/* Rounds |v| (sign handled by the caller through the returned sign bit) to the
 * format, ties to even, and returns the 16-bit encoding. The encoding of a finite
 * result is ((biased exponent of the quantum's binade) - 1) << (p-1) plus the integer
 * significand m: that single formula covers subnormals (exponent field 0), the carry
 * into the next binade when m reaches 2^p, and the carry into inf. */
static uint16_t round_bits(double v, const fmt16 *f) {
  uint64_t u = dbits(v);
  uint16_t sign = (uint16_t)((u >> 63) ? (1u << 15) : 0u);
  int ebits = (int)((u >> 52) & 0x7ff);
  uint64_t frac = u & ((UINT64_C(1) << 52) - 1);
  if (ebits == 0x7ff) return (uint16_t)(sign | (frac ? f->nan_bits : f->inf_bits));
  /* value = M * 2^(e - 52) with M < 2^53 */
  uint64_t M;
  int e;
  if (ebits == 0) {
    if (frac == 0) return sign; /* +-0 */
    M = frac;                   /* double subnormal: far below any 16-bit subnormal */
    e = -1022;
  } else {
    M = frac | (UINT64_C(1) << 52);
    e = ebits - 1023;
  }
  if (e > f->emax) return (uint16_t)(sign | f->inf_bits);
  int qe = e < f->emin ? f->emin : e; /* binade whose quantum applies */
  int q = qe - (f->p - 1);            /* quantum is 2^q */
  int s = 52 + q - e;                 /* value / 2^q = M / 2^s, s >= 52-(p-1) > 0 */
  uint64_t m;
  if (s >= 54) {
    m = 0; /* M / 2^s < 1/2: rounds to zero */
  } else {
    uint64_t rem = M & ((UINT64_C(1) << s) - 1);
    uint64_t half = UINT64_C(1) << (s - 1);
    m = M >> s;
    if (rem > half || (rem == half && (m & 1))) m++;
  }
  uint64_t bits = ((uint64_t)(qe + f->bias - 1) << (f->p - 1)) + m;
  if (bits >= f->inf_bits) bits = f->inf_bits;
  return (uint16_t)(sign | bits);
}

uint16_t ns_fp16_bits_ref(double v) {
  return round_bits(v, &FP16);
}

uint16_t ns_bf16_bits_ref(double v) {
  return round_bits(v, &BF16);
}

/* A value that is a float (every fp32 value read from x, every fp32 result) goes through
 * half.h's float conversions, a few integer operations; any other double through
 * round_bits. Both round the exact value once, so the bits are the same (test_kernels
 * compares the two ways on every 16-bit neighbourhood and on random patterns). */
uint16_t ns_fp16_bits(double v) {
  float f = (float)v;
  return (double)f == v ? nk_f2h(f) : round_bits(v, &FP16);
}

uint16_t ns_bf16_bits(double v) {
  float f = (float)v;
  return (double)f == v ? nk_f2b(f) : round_bits(v, &BF16);
}

double ns_fp16_value(uint16_t bits) {
  return (double)nk_h2f(bits); /* exact, as ns_fp16_value_ref */
}

double ns_fp16_value_ref(uint16_t bits) {
  int sign = bits >> 15;
  int ex = (bits >> 10) & 0x1f;
  int man = bits & 0x3ff;
  double r;
  if (ex == 0x1f)
    r = man ? NAN : INFINITY;
  else if (ex == 0)
    r = ldexp((double)man, -24);
  else
    r = ldexp((double)(man | 0x400), ex - 25);
  return sign ? -r : r;
}

double ns_bf16_value(uint16_t bits) {
  /* bf16 is the top half of an fp32 pattern: widening is exact. */
  uint32_t w = (uint32_t)bits << 16;
  float fv;
  memcpy(&fv, &w, sizeof fv);
  return (double)fv;
}

double ns_round(double v, ns_dtype d) {
  if (isnan(v)) return v;
  switch (d) {
  case NS_FP64:
    return v;
  case NS_FP32:
    return (double)(float)v;
  case NS_FP16:
    return ns_fp16_value(ns_fp16_bits(v));
  case NS_BF16:
    return ns_bf16_value(ns_bf16_bits(v));
  default:
    return NAN;
  }
}

const char *const ns_dtype_names[NS_DTYPE_COUNT + 1] = {"fp64", "fp32", "fp16", "bf16", NULL};

const char *ns_dtype_name(ns_dtype d) {
  if ((unsigned)d >= NS_DTYPE_COUNT) return "?";
  return ns_dtype_names[d];
}

int ns_dtype_parse(const char *name, ns_dtype *out) {
  static const struct {
    const char *name;
    ns_dtype d;
  } alias[] = {{"fp64", NS_FP64}, {"float64", NS_FP64}, {"f8", NS_FP64}, {"double", NS_FP64},
               {"fp32", NS_FP32}, {"float32", NS_FP32}, {"f4", NS_FP32}, {"float", NS_FP32},
               {"fp16", NS_FP16}, {"float16", NS_FP16}, {"f2", NS_FP16}, {"half", NS_FP16},
               {"bf16", NS_BF16}, {"bfloat16", NS_BF16}};
  if (!name) return -1;
  for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++) {
    if (strcmp(name, alias[i].name) == 0) {
      if (out) *out = alias[i].d;
      return 0;
    }
  }
  return -1;
}

size_t ns_dtype_size(ns_dtype d) {
  switch (d) {
  case NS_FP64:
    return 8;
  case NS_FP32:
    return 4;
  case NS_FP16:
  case NS_BF16:
    return 2;
  default:
    return 0;
  }
}

double ns_dtype_eps(ns_dtype d) {
  switch (d) {
  case NS_FP64:
    return ldexp(1.0, -52);
  case NS_FP32:
    return ldexp(1.0, -23);
  case NS_FP16:
    return ldexp(1.0, -10);
  case NS_BF16:
    return ldexp(1.0, -7);
  default:
    return NAN;
  }
}
