/* torch_rng.h: a generator bit-compatible with PyTorch's CPU default generator (torch
 * 1.13): torch.manual_seed(seed), then torch.rand(n) and torch.randn(n) in float32.
 *
 * MT19937 (reference seeding and twist), float uniforms from the low 24 bits of one
 * output, and the two normal paths torch takes: for n < 16 a double Box-Muller whose
 * second value is cached in the generator (and survives between calls), for n >= 16
 * the vectorised float32 Box-Muller with avx_mathfun's log and sincos polynomials,
 * evaluated with the same fused multiply-adds as the AVX2 build. The algorithm and the
 * test vectors are in ../shared/data/torch-rng/ (README.md); tests/data holds a copy.
 *
 * The generator is a plain struct the caller owns; no allocation, output arrays are the
 * caller's. Typical call:
 *   ns_torch_rng g;
 *   ns_torch_rng_seed(&g, 12);                 // torch.manual_seed(12)
 *   float x[80];
 *   ns_torch_rng_randn(&g, x, 80, err);        // torch.randn(2, 5, 8), C order
 */
#ifndef NS_TORCH_RNG_H
#define NS_TORCH_RNG_H

#include <stddef.h>
#include <stdint.h>

#define NS_MT_N 624

typedef struct {
  uint32_t mt[NS_MT_N];
  size_t next;   /* index of the next output in mt; NS_MT_N: twist first */
  int has_cache; /* a cached double normal from the scalar path */
  double cached;
} ns_torch_rng;

/* torch.manual_seed(seed): the engine from seed mod 2^32, no cached normal. */
void ns_torch_rng_seed(ns_torch_rng *g, uint64_t seed);
uint32_t ns_torch_rng_next32(ns_torch_rng *g);
/* Two outputs, the first one the high word. */
uint64_t ns_torch_rng_next64(ns_torch_rng *g);

/* torch.rand(n): n float uniforms in [0, 1). 0, or -1 with err (NULL g or out). */
int ns_torch_rng_rand(ns_torch_rng *g, float *out, size_t n, char *err);
/* torch.randn(n) for a contiguous float32 tensor of n elements. 0 or -1 with err. */
int ns_torch_rng_randn(ns_torch_rng *g, float *out, size_t n, char *err);

/* The float32 polynomials of the vectorised path, exposed for the tests:
 * log for x in [2^-24, 1], and (sin, cos) for 0 <= x < 2 pi. */
float ns_torch_logf(float x);
void ns_torch_sincosf(float x, float *s, float *c);

#endif
