/* torch_rng.c: PyTorch's CPU generator (MT19937) and its rand/randn float32 streams.
 *
 * Every step follows ../shared/data/torch-rng/README.md. The multiply-adds that the
 * AVX2 build of torch fuses are written as fmaf (one rounding); everything else rounds
 * each operation to float32, which -ffp-contract=off guarantees. */
#include "core/torch_rng.h"
#include "core/err.h"

#include <math.h>
#include <string.h>

void ns_torch_rng_seed(ns_torch_rng *g, uint64_t seed) {
  g->mt[0] = (uint32_t)seed;
  for (uint32_t i = 1; i < NS_MT_N; i++)
    g->mt[i] = 1812433253u * (g->mt[i - 1] ^ (g->mt[i - 1] >> 30)) + i;
  g->next = NS_MT_N;
  g->has_cache = 0;
  g->cached = 0;
}

/* The reference twist, in place: late k read words already updated. */
static void twist(uint32_t *mt) {
  for (size_t k = 0; k < NS_MT_N; k++) {
    uint32_t y = (mt[k] & 0x80000000u) | (mt[(k + 1) % NS_MT_N] & 0x7fffffffu);
    mt[k] = mt[(k + 397) % NS_MT_N] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
  }
}

uint32_t ns_torch_rng_next32(ns_torch_rng *g) {
  if (g->next >= NS_MT_N) {
    twist(g->mt);
    g->next = 0;
  }
  uint32_t y = g->mt[g->next++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

uint64_t ns_torch_rng_next64(ns_torch_rng *g) {
  uint64_t hi = ns_torch_rng_next32(g);
  return (hi << 32) | ns_torch_rng_next32(g);
}

/* Low 24 bits of one output, times 2^-24: exact in float32. */
static float uniform_f32(ns_torch_rng *g) {
  return (float)(ns_torch_rng_next32(g) & 0xffffffu) * 0x1p-24f;
}

/* Low 53 bits of two outputs, times 2^-53: exact in double. */
static double uniform_f64(ns_torch_rng *g) {
  return (double)(ns_torch_rng_next64(g) & ((UINT64_C(1) << 53) - 1)) * 0x1p-53;
}

static int check(const char *fn, const ns_torch_rng *g, const float *out, size_t n, char *err) {
  if (!g || (!out && n > 0)) {
    ns_seterr(err, "%s: %s is NULL", fn, g ? "output array" : "generator");
    return -1;
  }
  return 0;
}

int ns_torch_rng_rand(ns_torch_rng *g, float *out, size_t n, char *err) {
  if (check("torch_rand", g, out, n, err)) return -1;
  for (size_t i = 0; i < n; i++) out[i] = uniform_f32(g);
  return 0;
}

static float f32_of_bits(uint32_t b) {
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

static uint32_t bits_of_f32(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

/* avx_mathfun's log256_ps for one lane: x = m 2^e, m in [0.5, 1), shifted to
 * [sqrt(1/2), sqrt(2)); log(1 + t) by a degree-9 polynomial, plus e log 2 in two parts
 * (Q2 + Q1 = log 2). */
float ns_torch_logf(float x) {
  static const uint32_t P[9] = {0x3d9021bb, 0xbdebd1b8, 0x3def251a, 0xbdfe5d4f, 0x3e11e9bf,
                                0xbe2aae50, 0x3e4cceac, 0xbe7ffffc, 0x3eaaaaaa};
  const float sqrthf = f32_of_bits(0x3f3504f3), q1 = f32_of_bits(0xb95e8083),
              q2 = f32_of_bits(0x3f318000);
  if (!(x > 0)) return NAN;
  if (x < 0x1p-126f) x = 0x1p-126f; /* denormals are raised, as the vector code does */
  uint32_t b = bits_of_f32(x);
  float e = (float)((int32_t)(b >> 23) - 127) + 1.0f;
  float m = f32_of_bits((b & 0x807fffffu) | 0x3f000000u), t;
  if (m < sqrthf) {
    e = e - 1.0f;
    t = (m - 1.0f) + m;
  } else {
    t = m - 1.0f;
  }
  float z = t * t;
  float y = f32_of_bits(P[0]);
  for (int k = 1; k < 9; k++) y = fmaf(y, t, f32_of_bits(P[k]));
  y = y * t;
  y = fmaf(y, z, e * q1); /* e*q1 rounded first, as the build does */
  y = y - 0.5f * z;
  float r = t + y;
  return fmaf(e, q2, r);
}

/* avx_mathfun's sincos256_ps for one lane, x >= 0: reduce by the even octant j (x - j
 * pi/4 in three parts), evaluate both polynomials, and swap and negate by octant. */
void ns_torch_sincosf(float x, float *s, float *c) {
  const float fopi = f32_of_bits(0x3fa2f983), dp1 = f32_of_bits(0xbf490000),
              dp2 = f32_of_bits(0xb97da000), dp3 = f32_of_bits(0xb3222169);
  const float s0 = f32_of_bits(0xb94ca1f9), s1 = f32_of_bits(0x3c08839e),
              s2 = f32_of_bits(0xbe2aaaa3);
  const float c0 = f32_of_bits(0x37ccf5ce), c1 = f32_of_bits(0xbab6061a),
              c2 = f32_of_bits(0x3d2aaaa5);
  int32_t j = (int32_t)(x * fopi); /* truncation, as cvttps does */
  j = (j + 1) & ~1;
  float y = (float)j;
  x = fmaf(y, dp1, x);
  x = fmaf(y, dp2, x);
  x = fmaf(y, dp3, x);
  float z = x * x;
  float pc = c0;
  pc = fmaf(pc, z, c1);
  pc = fmaf(pc, z, c2);
  pc = pc * z;
  pc = fmaf(pc, z, -(0.5f * z));
  pc = pc + 1.0f;
  float ps = s0;
  ps = fmaf(ps, z, s1);
  ps = fmaf(ps, z, s2);
  ps = ps * z;
  ps = fmaf(ps, x, x);
  float sv = ps, cv = pc;
  if (j & 2) {
    sv = pc;
    cv = ps;
  }
  if (j & 4) sv = -sv;
  if (((j - 2) & 4) == 0) cv = -cv;
  *s = sv;
  *c = cv;
}

/* Eight lanes: the first half of d sets the radius, the second half the angle. */
static void normal_block(float *d) {
  const float two_pi = f32_of_bits(0x40c90fdb);
  for (int j = 0; j < 8; j++) {
    float u1 = 1.0f - d[j], u2 = d[j + 8];
    float radius = sqrtf(-2.0f * ns_torch_logf(u1));
    float theta = two_pi * u2, sn, cs;
    ns_torch_sincosf(theta, &sn, &cs);
    d[j] = fmaf(radius * cs, 1.0f, 0.0f); /* std 1, mean 0: -0 becomes +0 */
    d[j + 8] = fmaf(radius * sn, 1.0f, 0.0f);
  }
}

int ns_torch_rng_randn(ns_torch_rng *g, float *out, size_t n, char *err) {
  if (check("torch_randn", g, out, n, err)) return -1;
  if (n < 16) {
    /* Scalar path: angle from the first double uniform, radius from the second; the
     * sine waits in the generator for the next element (of this call or a later one). */
    for (size_t i = 0; i < n; i++) {
      double v;
      if (g->has_cache) {
        v = g->cached;
        g->has_cache = 0;
      } else {
        double u1 = uniform_f64(g), u2 = uniform_f64(g);
        double r = sqrt(-2.0 * log(1.0 - u2)), t = 2.0 * 3.141592653589793 * u1;
        g->cached = r * sin(t);
        g->has_cache = 1;
        v = r * cos(t);
      }
      out[i] = (float)(v * 1.0 + 0.0);
    }
    return 0;
  }
  for (size_t i = 0; i < n; i++) out[i] = uniform_f32(g);
  for (size_t b = 0; b + 16 <= n; b += 16) normal_block(out + b);
  if (n % 16) {
    /* A ragged tail: 16 fresh uniforms overwrite the last 16 slots, transformed again. */
    for (size_t i = n - 16; i < n; i++) out[i] = uniform_f32(g);
    normal_block(out + n - 16);
  }
  return 0;
}
