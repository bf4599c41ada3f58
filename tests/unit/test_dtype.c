/* test_dtype.c: single correct rounding into fp32, fp16 and bf16.
 *
 * References are independent of src/core/dtype.c: 16-bit patterns are decoded here
 * with a plain formula, and random doubles are rounded with the "add and subtract a
 * big constant" trick, which makes the FPU do exactly one rounding at the quantum of
 * the target binade. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/dtype.h"
#include "tap.h"

typedef struct {
  int p, emin, emax;
} fmt;
static const fmt F16 = {11, -14, 15}, B16 = {8, -126, 127}, F32 = {24, -126, 127};

static double maxfinite(const fmt *f) {
  return ldexp(ldexp(1.0, f->p) - 1.0, f->emax - f->p + 1);
}

/* Reference rounding: one FPU rounding of v + C, where C's last bit weighs one quantum. */
static double ref_round(double v, const fmt *f) {
  if (isnan(v) || v == 0 || isinf(v)) return v;
  int e = ilogb(v);
  if (e > f->emax) return v > 0 ? INFINITY : -INFINITY;
  int qe = e < f->emin ? f->emin : e;
  double ulp = ldexp(1.0, qe - f->p + 1);
  volatile double C = ldexp(1.5, 52) * ulp;
  volatile double s = v + C;
  double r = s - C;
  if (fabs(r) > maxfinite(f)) return v > 0 ? INFINITY : -INFINITY;
  if (r == 0) r = copysign(0.0, v);
  return r;
}

/* Decodes a 16-bit pattern with exponent width w (5 for fp16, 8 for bf16). */
static double ref_decode16(unsigned bits, int w) {
  int mbits = 15 - w;
  unsigned ex = (bits >> mbits) & ((1u << w) - 1);
  unsigned man = bits & ((1u << mbits) - 1);
  int bias = (1 << (w - 1)) - 1;
  double sgn = (bits & 0x8000) ? -1.0 : 1.0;
  if (ex == (1u << w) - 1) return man ? NAN : sgn * INFINITY;
  double frac = man / (double)(1u << mbits);
  if (ex == 0) return sgn * frac * pow(2.0, 1 - bias);
  return sgn * (1.0 + frac) * pow(2.0, (int)ex - bias);
}

static uint64_t lcg_state = 0x9e3779b97f4a7c15u;
static uint64_t rnd64(void) {
  lcg_state = lcg_state * 6364136223846793005u + 1442695040888963407u;
  uint64_t a = lcg_state >> 32;
  lcg_state = lcg_state * 6364136223846793005u + 1442695040888963407u;
  return (a << 32) | (lcg_state >> 32);
}

static double bits_to_double(uint64_t u) {
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

/* A random double whose exponent lies around the target's range; half of them sit
 * exactly on, or one double-ulp off, a rounding midpoint of the target. */
static double random_near(const fmt *f) {
  uint64_t r = rnd64();
  int span = f->emax - f->emin + f->p + 6;
  int e = f->emin - f->p - 3 + (int)(rnd64() % (uint64_t)span);
  uint64_t man = r & ((UINT64_C(1) << 52) - 1);
  int kind = (int)(rnd64() % 4);
  if (kind > 0) {
    int drop = 53 - f->p; /* bits below the target quantum for normal values */
    if (e < f->emin) drop += f->emin - e;
    if (drop > 52) drop = 52;
    man &= ~((UINT64_C(1) << drop) - 1);
    man |= UINT64_C(1) << (drop - 1); /* exact midpoint */
    if (kind == 2) man += 1;          /* just above */
    if (kind == 3) man -= 1;          /* just below */
  }
  uint64_t sign = (rnd64() & 1) << 63;
  if (e < -1022) e = -1022;
  return bits_to_double(sign | ((uint64_t)(e + 1023) << 52) | man);
}

static void sweep16(const char *name, int w, const fmt *f, uint16_t (*tobits)(double),
                    double (*toval)(uint16_t)) {
  int bad_decode = 0, bad_self = 0, bad_mid = 0, bad_off = 0;
  for (unsigned b = 0; b < 0x10000; b++) {
    double v = ref_decode16(b, w);
    double got = toval((uint16_t)b);
    if (!((isnan(v) && isnan(got)) || (v == got && signbit(v) == signbit(got)))) bad_decode++;
    if (!isnan(v) && tobits(v) != b) bad_self++;
  }
  /* adjacent positive patterns a, a+1 (the last pair is max finite and inf, where the
   * "next value" is 2^(emax+1) for the purposes of rounding) */
  unsigned top = (unsigned)tobits(INFINITY);
  for (unsigned a = 0; a < top; a++) {
    double lo = ref_decode16(a, w);
    double hi = a + 1 == top ? ldexp(1.0, f->emax + 1) : ref_decode16(a + 1, w);
    double mid = (lo + hi) / 2; /* exact in double */
    unsigned even = (a & 1) ? a + 1 : a;
    for (int s = 0; s < 2; s++) {
      double sg = s ? -1.0 : 1.0;
      unsigned sb = s ? 0x8000u : 0u;
      if (tobits(sg * mid) != (even | sb)) bad_mid++;
      if (tobits(sg * nextafter(mid, 0)) != (a | sb)) bad_off++;
      if (tobits(sg * nextafter(mid, INFINITY)) != ((a + 1) | sb)) bad_off++;
    }
  }
  tap_ok(bad_decode == 0, "%s: all 65536 patterns decode like the reference (%d bad)", name,
         bad_decode);
  tap_ok(bad_self == 0, "%s: every value rounds to its own pattern (%d bad)", name, bad_self);
  tap_ok(bad_mid == 0, "%s: every midpoint rounds to the even neighbour (%d bad)", name, bad_mid);
  tap_ok(bad_off == 0, "%s: one double-ulp off each midpoint rounds to the near side (%d bad)",
         name, bad_off);
}

static void random_vs_ref(const char *name, ns_dtype d, const fmt *f) {
  int bad = 0;
  double first_bad = 0;
  for (int i = 0; i < 300000; i++) {
    double v = random_near(f);
    double want = ref_round(v, f);
    double got = ns_round(v, d);
    if (!(got == want && signbit(got) == signbit(want))) {
      if (!bad) first_bad = v;
      bad++;
    }
  }
  tap_ok(bad == 0, "%s: 300000 random doubles near ties agree with the add-constant reference",
         name);
  if (bad) tap_diag("%d mismatches, first at %.17g", bad, first_bad);
}

static void exact(double got, double want, const char *name) {
  int ok = (isnan(got) && isnan(want)) || (got == want && signbit(got) == signbit(want));
  tap_ok(ok, "%s", name);
  if (!ok) tap_diag("got %.17g, want %.17g", got, want);
}

int main(void) {
  /* --- bf16 --- */
  double v = 1.00390625 + 1e-12;
  exact(ns_round(v, NS_BF16), 1.0078125, "bf16(1.00390625+1e-12) = 1.0078125 (single rounding)");
  exact(ns_round((double)(float)v, NS_BF16), 1.0, "going through fp32 first would give 1.0");
  exact(ns_round(1.00390625, NS_BF16), 1.0, "bf16 tie 1+2^-8 -> 1 (even)");
  exact(ns_round(1.01171875, NS_BF16), 1.015625, "bf16 tie 1+3*2^-8 -> 1+2^-6 (even)");
  double bmax = ldexp(2.0 - ldexp(1, -7), 127);
  exact(ns_round(bmax, NS_BF16), bmax, "bf16 largest finite kept");
  tap_ok(ns_bf16_bits(bmax) == 0x7f7f, "bf16 largest finite is 0x7f7f");
  exact(ns_round(ldexp(2.0 - ldexp(1, -8), 127), NS_BF16), INFINITY,
        "bf16 overflow midpoint -> inf");
  exact(ns_round(nextafter(ldexp(2.0 - ldexp(1, -8), 127), 0), NS_BF16), bmax,
        "bf16 just below overflow midpoint -> largest finite");
  exact(ns_round(1e300, NS_BF16), INFINITY, "bf16 1e300 -> inf");
  exact(ns_round(-1e300, NS_BF16), -INFINITY, "bf16 -1e300 -> -inf");
  exact(ns_round(ldexp(1, -133), NS_BF16), ldexp(1, -133), "bf16 smallest subnormal 2^-133 kept");
  exact(ns_round(ldexp(1, -134), NS_BF16), 0.0, "bf16 half the smallest subnormal -> 0 (even)");
  exact(ns_round(ldexp(1.0000001, -134), NS_BF16), ldexp(1, -133),
        "bf16 just above half the smallest subnormal -> 2^-133");
  exact(ns_round(ldexp(3, -134), NS_BF16), ldexp(1, -132), "bf16 1.5 subnormal quanta -> 2 (even)");
  tap_ok(ns_bf16_bits(1.0) == 0x3f80, "bf16 bits of 1 are 0x3f80");
  tap_ok(ns_bf16_bits(-2.0) == 0xc000, "bf16 bits of -2 are 0xc000");

  /* --- fp16 --- */
  exact(ns_round(65520.0, NS_FP16), INFINITY, "fp16 65520 -> inf");
  exact(ns_round(65519.99, NS_FP16), 65504.0, "fp16 65519.99 -> 65504");
  exact(ns_round(65504.0, NS_FP16), 65504.0, "fp16 65504 kept");
  exact(ns_round(-65520.0, NS_FP16), -INFINITY, "fp16 -65520 -> -inf");
  exact(ns_round(1e10, NS_FP16), INFINITY, "fp16 1e10 -> inf");
  tap_ok(ns_fp16_bits(65504.0) == 0x7bff, "fp16 largest finite is 0x7bff");
  tap_ok(ns_fp16_bits(65520.0) == 0x7c00, "fp16 65520 gives the inf pattern 0x7c00");
  exact(ns_round(1.0 + ldexp(1, -11), NS_FP16), 1.0, "fp16 tie 1+2^-11 -> 1 (even)");
  exact(ns_round(1.0 + 3 * ldexp(1, -11), NS_FP16), 1.0 + ldexp(1, -9),
        "fp16 tie 1+3*2^-11 -> 1+2^-9 (even)");
  exact(ns_round(0.1, NS_FP16), 0.0999755859375, "fp16 0.1 -> 0.0999755859375");
  exact(ns_round(ldexp(1, -24), NS_FP16), ldexp(1, -24), "fp16 smallest subnormal 2^-24 kept");
  tap_ok(ns_fp16_bits(ldexp(1, -24)) == 0x0001, "fp16 smallest subnormal is 0x0001");
  exact(ns_round(ldexp(1, -25), NS_FP16), 0.0, "fp16 2^-25 (half the smallest) -> 0 (even)");
  exact(ns_round(-ldexp(1, -25), NS_FP16), -0.0, "fp16 -2^-25 -> -0");
  exact(ns_round(nextafter(ldexp(1, -25), 1), NS_FP16), ldexp(1, -24),
        "fp16 just above 2^-25 -> 2^-24");
  exact(ns_round(ldexp(3, -25), NS_FP16), ldexp(1, -23), "fp16 3*2^-25 -> 2^-23 (even)");
  exact(ns_round(ldexp(1, -14) - ldexp(1, -25), NS_FP16), ldexp(1, -14),
        "fp16 tie between largest subnormal and smallest normal -> 2^-14");
  tap_ok(ns_fp16_bits(ldexp(1, -14)) == 0x0400, "fp16 smallest normal is 0x0400");
  exact(ns_round(ldexp(1023, -24), NS_FP16), ldexp(1023, -24), "fp16 largest subnormal kept");
  tap_ok(ns_fp16_bits(1.0) == 0x3c00 && ns_fp16_bits(-2.0) == 0xc000,
         "fp16 bits of 1 and -2 are 0x3c00, 0xc000");
  tap_close(ns_fp16_value(0x3555), 0.333251953125, 0, "fp16 0x3555 is 0.333251953125");

  /* --- fp32 --- */
  exact(ns_round(1.0 + ldexp(1, -24), NS_FP32), 1.0, "fp32 tie 1+2^-24 -> 1");
  exact(ns_round(1.0 + 3 * ldexp(1, -24), NS_FP32), 1.0 + ldexp(1, -22), "fp32 tie 1+3*2^-24");
  double fmax = ldexp(ldexp(1, 24) - 1, 104);
  exact(ns_round(fmax, NS_FP32), fmax, "fp32 largest finite kept");
  exact(ns_round(ldexp(ldexp(1, 25) - 1, 103), NS_FP32), INFINITY, "fp32 overflow midpoint -> inf");
  exact(ns_round(ldexp(1, -149), NS_FP32), ldexp(1, -149), "fp32 smallest subnormal kept");
  exact(ns_round(ldexp(1, -150), NS_FP32), 0.0, "fp32 half the smallest subnormal -> 0");
  exact(ns_round(ldexp(3, -150), NS_FP32), ldexp(1, -148), "fp32 1.5 subnormal quanta -> 2");

  /* --- all formats: zeros, NaN, inf, double subnormals, fp64 identity --- */
  for (int d = 0; d < NS_DTYPE_COUNT; d++) {
    char nm[96];
    snprintf(nm, sizeof nm, "%s: -0 stays -0", ns_dtype_name((ns_dtype)d));
    exact(ns_round(-0.0, (ns_dtype)d), -0.0, nm);
    snprintf(nm, sizeof nm, "%s: NaN stays NaN", ns_dtype_name((ns_dtype)d));
    tap_ok(isnan(ns_round(NAN, (ns_dtype)d)), "%s", nm);
    snprintf(nm, sizeof nm, "%s: -inf stays -inf", ns_dtype_name((ns_dtype)d));
    exact(ns_round(-INFINITY, (ns_dtype)d), -INFINITY, nm);
  }
  exact(ns_round(5e-324, NS_FP16), 0.0, "fp16: smallest double subnormal -> 0");
  exact(ns_round(-5e-324, NS_BF16), -0.0, "bf16: negative double subnormal -> -0");
  exact(ns_round(0.1, NS_FP64), 0.1, "fp64 is the identity");
  tap_ok(ns_fp16_bits(NAN) >> 10 == 0x1f && (ns_fp16_bits(NAN) & 0x3ff),
         "fp16 NaN pattern has exponent all ones and non-zero mantissa");
  tap_ok((ns_bf16_bits(NAN) & 0x7f80) == 0x7f80 && (ns_bf16_bits(NAN) & 0x7f),
         "bf16 NaN pattern has exponent all ones and non-zero mantissa");
  tap_ok(ns_fp16_bits(-0.0) == 0x8000 && ns_bf16_bits(-0.0) == 0x8000, "-0 patterns are 0x8000");

  /* --- exhaustive sweeps and random comparisons --- */
  sweep16("fp16", 5, &F16, ns_fp16_bits, ns_fp16_value);
  sweep16("bf16", 8, &B16, ns_bf16_bits, ns_bf16_value);
  random_vs_ref("fp16", NS_FP16, &F16);
  random_vs_ref("bf16", NS_BF16, &B16);
  random_vs_ref("fp32", NS_FP32, &F32);

  /* --- names, parsing, sizes, eps --- */
  ns_dtype d = NS_FP64;
  tap_ok(strcmp(ns_dtype_name(NS_FP64), "fp64") == 0 &&
             strcmp(ns_dtype_name(NS_FP32), "fp32") == 0 &&
             strcmp(ns_dtype_name(NS_FP16), "fp16") == 0 &&
             strcmp(ns_dtype_name(NS_BF16), "bf16") == 0,
         "dtype names");
  static const struct {
    const char *s;
    ns_dtype d;
  } al[] = {{"fp64", NS_FP64}, {"float64", NS_FP64}, {"f8", NS_FP64}, {"double", NS_FP64},
            {"fp32", NS_FP32}, {"float32", NS_FP32}, {"f4", NS_FP32}, {"float", NS_FP32},
            {"fp16", NS_FP16}, {"float16", NS_FP16}, {"f2", NS_FP16}, {"half", NS_FP16},
            {"bf16", NS_BF16}, {"bfloat16", NS_BF16}};
  int badparse = 0;
  for (size_t i = 0; i < sizeof al / sizeof al[0]; i++)
    if (ns_dtype_parse(al[i].s, &d) != 0 || d != al[i].d) badparse++;
  tap_ok(badparse == 0, "all dtype aliases parse");
  d = NS_FP16;
  tap_ok(ns_dtype_parse("fp8", &d) == -1 && d == NS_FP16,
         "unknown dtype name refused, out untouched");
  tap_ok(ns_dtype_parse(NULL, &d) == -1, "NULL dtype name refused");
  tap_ok(ns_dtype_size(NS_FP64) == 8 && ns_dtype_size(NS_FP32) == 4 &&
             ns_dtype_size(NS_FP16) == 2 && ns_dtype_size(NS_BF16) == 2,
         "dtype sizes 8 4 2 2");
  tap_ok(ns_dtype_eps(NS_FP64) == 0x1p-52 && ns_dtype_eps(NS_FP32) == 0x1p-23 &&
             ns_dtype_eps(NS_FP16) == 0x1p-10 && ns_dtype_eps(NS_BF16) == 0x1p-7,
         "machine epsilons");
  exact(ns_round(1.0 + ns_dtype_eps(NS_BF16), NS_BF16), 1.0 + ns_dtype_eps(NS_BF16),
        "1 + eps(bf16) is representable");
  return tap_done();
}
