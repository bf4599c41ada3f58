/* rng.h: a generator bit-compatible with numpy.random.default_rng(seed) (numpy >= 1.17):
 * SeedSequence -> PCG64 (XSL-RR 128/64), random() doubles and the 256-layer ziggurat
 * standard normal. Same seed, same calls, same doubles as numpy, bit for bit.
 *
 * The generator is a plain struct the caller owns; no allocation.
 *
 *   ns_rng g;
 *   ns_rng_seed_u64(&g, 124);
 *   double z = ns_rng_normal(&g, 3.0, 2.0);   // numpy: default_rng(124).normal(3, 2)
 */
#ifndef NS_RNG_H
#define NS_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint64_t state_hi, state_lo; /* 128-bit LCG state */
  uint64_t inc_hi, inc_lo;     /* 128-bit increment (odd) */
} ns_rng;

/* Seeds from a non-negative integer given as 32-bit words, least significant first
 * (nwords >= 1; numpy's SeedSequence entropy). */
void ns_rng_seed_words(ns_rng *g, const uint32_t *words, size_t nwords);
void ns_rng_seed_u64(ns_rng *g, uint64_t seed);
/* Seeds from a non-negative decimal integer of any size ("9223372036854775813").
 * 0 on success, -1 with err if the string is not a non-negative decimal integer. */
int ns_rng_seed_decimal(ns_rng *g, const char *digits, char *err);

uint64_t ns_rng_next_u64(ns_rng *g);
double ns_rng_random(ns_rng *g);                           /* uniform [0, 1), 53 bits */
double ns_rng_standard_normal(ns_rng *g);                  /* ziggurat */
double ns_rng_normal(ns_rng *g, double loc, double scale); /* loc + scale*z, no FMA */

/* SeedSequence internals, exposed for the test vectors: the 4-word pool, and
 * generate_state(n) as n uint64 words. */
void ns_seedseq_pool(const uint32_t *words, size_t nwords, uint32_t pool[4]);
void ns_seedseq_generate_u64(const uint32_t pool[4], uint64_t *out, size_t n);

#endif
