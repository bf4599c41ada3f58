/* rng.c: numpy.random.default_rng(seed), bit for bit: SeedSequence turns the seed into
 * 256 bits, PCG64 (a 128-bit LCG with an XSL-RR output permutation) makes 64-bit words,
 * random() takes their top 53 bits and standard_normal() runs numpy's 256-layer
 * ziggurat on them. The algorithm is described in shared data numpy-rng/README.md.
 *
 * This file must be compiled without floating-point contraction (-ffp-contract=off is
 * in AM_CFLAGS): numpy computes loc + scale*z with two roundings, and a fused
 * multiply-add would change the last bit of many draws. */
#include "core/rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tensor.h"
#include "core/ziggurat_tables.h"

/* 128-bit arithmetic: the compiler's type when it has one, two 64-bit halves otherwise
 * (define NS_RNG_PORTABLE to force the halves, which the tests do to check both). */
#if defined(__SIZEOF_INT128__) && !defined(NS_RNG_PORTABLE)
#define NS_HAVE_U128 1
__extension__ typedef unsigned __int128 ns_u128;
#endif

/* ---- SeedSequence ---------------------------------------------------------------- */

#define SS_INIT_A 0x43b0d7e5u
#define SS_MULT_A 0x931e8875u
#define SS_INIT_B 0x8b51f9ddu
#define SS_MULT_B 0x58f38dedu
#define SS_MIX_L 0xca01f9ddu
#define SS_MIX_R 0x4973f715u
#define SS_POOL 4

/* One step of the entropy hash; the multiplier hc advances on every call. */
static uint32_t ss_hashmix(uint32_t v, uint32_t *hc) {
  v ^= *hc;
  *hc *= SS_MULT_A;
  v *= *hc;
  v ^= v >> 16;
  return v;
}

static uint32_t ss_mix(uint32_t x, uint32_t y) {
  uint32_t r = SS_MIX_L * x - SS_MIX_R * y;
  r ^= r >> 16;
  return r;
}

void ns_seedseq_pool(const uint32_t *words, size_t nwords, uint32_t pool[4]) {
  uint32_t hc = SS_INIT_A;
  for (size_t i = 0; i < SS_POOL; i++) pool[i] = ss_hashmix(i < nwords ? words[i] : 0, &hc);
  /* Every pool word absorbs every other one, so each depends on all the entropy. */
  for (size_t src = 0; src < SS_POOL; src++)
    for (size_t dst = 0; dst < SS_POOL; dst++)
      if (src != dst) pool[dst] = ss_mix(pool[dst], ss_hashmix(pool[src], &hc));
  /* Words beyond the pool size are folded into all four pool words. */
  for (size_t i = SS_POOL; i < nwords; i++)
    for (size_t dst = 0; dst < SS_POOL; dst++)
      pool[dst] = ss_mix(pool[dst], ss_hashmix(words[i], &hc));
}

void ns_seedseq_generate_u64(const uint32_t pool[4], uint64_t *out, size_t n) {
  uint32_t hc = SS_INIT_B;
  for (size_t k = 0; k < n; k++) {
    uint32_t half[2];
    for (int j = 0; j < 2; j++) {
      uint32_t v = pool[(2 * k + (size_t)j) % SS_POOL];
      v ^= hc;
      hc *= SS_MULT_B;
      v *= hc;
      v ^= v >> 16;
      half[j] = v;
    }
    out[k] = (uint64_t)half[0] | (uint64_t)half[1] << 32; /* little-endian pairs */
  }
}

/* ---- PCG64 ------------------------------------------------------------------------ */

#define PCG_MULT_HI 0x2360ed051fc65da4ULL
#define PCG_MULT_LO 0x4385df649fccf645ULL

#ifndef NS_HAVE_U128
/* High 64 bits of the 128-bit product a*b, from 32-bit pieces. */
static uint64_t mulhi64(uint64_t a, uint64_t b) {
  uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
  uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
  return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}
#endif

/* state = state * M + inc (mod 2^128) */
static void pcg_step(ns_rng *g) {
#ifdef NS_HAVE_U128
  ns_u128 s = (ns_u128)g->state_hi << 64 | g->state_lo;
  ns_u128 m = (ns_u128)PCG_MULT_HI << 64 | PCG_MULT_LO;
  ns_u128 c = (ns_u128)g->inc_hi << 64 | g->inc_lo;
  s = s * m + c;
  g->state_hi = (uint64_t)(s >> 64);
  g->state_lo = (uint64_t)s;
#else
  /* (sh 2^64 + sl)(mh 2^64 + ml) mod 2^128 = sl ml + 2^64 (sh ml + sl mh) */
  uint64_t lo = g->state_lo * PCG_MULT_LO;
  uint64_t hi =
      mulhi64(g->state_lo, PCG_MULT_LO) + g->state_hi * PCG_MULT_LO + g->state_lo * PCG_MULT_HI;
  uint64_t nlo = lo + g->inc_lo;
  hi += g->inc_hi + (nlo < lo);
  g->state_hi = hi;
  g->state_lo = nlo;
#endif
}

/* state += (hi, lo) (mod 2^128) */
static void pcg_add(ns_rng *g, uint64_t hi, uint64_t lo) {
  uint64_t nlo = g->state_lo + lo;
  g->state_hi += hi + (nlo < lo);
  g->state_lo = nlo;
}

void ns_rng_seed_words(ns_rng *g, const uint32_t *words, size_t nwords) {
  static const uint32_t zero = 0;
  uint32_t pool[4];
  uint64_t v[4];
  if (nwords == 0) { /* numpy treats an empty entropy as 0 */
    words = &zero;
    nwords = 1;
  }
  ns_seedseq_pool(words, nwords, pool);
  ns_seedseq_generate_u64(pool, v, 4);
  /* initstate = v0:v1, initseq = v2:v3; inc = initseq << 1 | 1 */
  g->inc_hi = v[2] << 1 | v[3] >> 63;
  g->inc_lo = v[3] << 1 | 1u;
  g->state_hi = 0;
  g->state_lo = 0;
  pcg_step(g);
  pcg_add(g, v[0], v[1]);
  pcg_step(g);
}

void ns_rng_seed_u64(ns_rng *g, uint64_t seed) {
  uint32_t w[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
  ns_rng_seed_words(g, w, w[1] ? 2 : 1);
}

int ns_rng_seed_decimal(ns_rng *g, const char *digits, char *err) {
  size_t n = digits ? strlen(digits) : 0;
  size_t i;
  if (n == 0) {
    if (err) snprintf(err, NS_ERRLEN, "seed is empty: expected a non-negative decimal integer");
    return -1;
  }
  for (i = 0; i < n; i++) {
    if (digits[i] < '0' || digits[i] > '9') {
      if (err)
        snprintf(err, NS_ERRLEN,
                 "seed '%.40s%s' is not a non-negative decimal integer (character %zu is '%c')",
                 digits, n > 40 ? "..." : "", i + 1,
                 (digits[i] >= 32 && digits[i] < 127) ? digits[i] : '?');
      return -1;
    }
  }
  /* 10^9 < 2^32, so every 9 digits add at most one 32-bit word. */
  size_t cap = n / 9 + 2, nw = 1;
  uint32_t small[64];
  uint32_t *w = cap <= 64 ? small : malloc(cap * sizeof *w);
  if (!w) {
    if (err) snprintf(err, NS_ERRLEN, "seed of %zu digits: out of memory", n);
    return -1;
  }
  w[0] = 0;
  for (i = 0; i < n;) {
    /* Take up to 9 digits as a chunk, then words = words * 10^k + chunk. */
    uint32_t chunk = 0, scale = 1;
    for (size_t k = 0; k < 9 && i < n; k++, i++) {
      chunk = chunk * 10 + (uint32_t)(digits[i] - '0');
      scale *= 10;
    }
    uint64_t carry = chunk;
    for (size_t j = 0; j < nw; j++) {
      uint64_t t = (uint64_t)w[j] * scale + carry;
      w[j] = (uint32_t)t;
      carry = t >> 32;
    }
    if (carry) w[nw++] = (uint32_t)carry;
  }
  ns_rng_seed_words(g, w, nw);
  if (w != small) free(w);
  return 0;
}

uint64_t ns_rng_next_u64(ns_rng *g) {
  pcg_step(g);
  /* XSL-RR: fold the halves together, rotate right by the top 6 bits */
  uint64_t x = g->state_hi ^ g->state_lo;
  unsigned rot = (unsigned)(g->state_hi >> 58);
  return (x >> rot) | (x << ((64u - rot) & 63u));
}

double ns_rng_random(ns_rng *g) {
  return (double)(ns_rng_next_u64(g) >> 11) * (1.0 / 9007199254740992.0);
}

/* ---- standard normal: numpy's 256-layer ziggurat ---------------------------------- */

#define ZIG_R 3.6541528853610087963519472518
/* numpy uses this literal, not 1/ZIG_R (which differs in the last bit). */
#define ZIG_INV_R 0.27366123732975827203338247596

double ns_rng_standard_normal(ns_rng *g) {
  for (;;) {
    /* One word gives: 8 bits of layer index, a sign bit, 52 bits of abscissa. */
    uint64_t r = ns_rng_next_u64(g);
    int idx = (int)(r & 0xff);
    r >>= 8;
    int sign = (int)(r & 1);
    uint64_t rabs = (r >> 1) & 0x000fffffffffffffULL;
    double x = (double)rabs * ns_zig_wi[idx];
    if (sign) x = -x;
    if (rabs < ns_zig_ki[idx]) return x; /* inside the rectangle: the common case */
    if (idx == 0) {
      /* Tail beyond R, Marsaglia's method; 1 - U avoids log(0). */
      for (;;) {
        double xx = -ZIG_INV_R * log1p(-ns_rng_random(g));
        double yy = -log1p(-ns_rng_random(g));
        if (yy + yy > xx * xx) return ((rabs >> 8) & 1) ? -(ZIG_R + xx) : ZIG_R + xx;
      }
    }
    /* Wedge between layers: accept under the density curve. */
    if ((ns_zig_fi[idx - 1] - ns_zig_fi[idx]) * ns_rng_random(g) + ns_zig_fi[idx] <
        exp(-0.5 * x * x))
      return x;
  }
}

double ns_rng_normal(ns_rng *g, double loc, double scale) {
  double z = ns_rng_standard_normal(g);
  double sz = scale * z; /* rounded on its own, as numpy does */
  return loc + sz;
}
