/* test_torch_rng.c: the PyTorch-compatible generator against torch's own values.
 *
 * Reads tests/data/torch-rng-vectors.tsv (torch 1.13 made the values; copied by
 * tests/data/copy-torch-rng-vectors.sh from ../shared/data/torch-rng/): each group of rows
 * is one recorded call after torch.manual_seed(seed) and the calls listed in 'after';
 * every value must match bit for bit. Also checks the engine against the reference
 * MT19937's first outputs and the float32 polynomials against libm to a few ulps. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "core/torch_rng.h"
#include "tap.h"
#include "testdata.h"

typedef struct {
  char fn[8], after[64];
  unsigned long seed;
  size_t n;
  uint32_t *bits; /* n values */
  size_t got;
} group;

static uint32_t bits_of(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

/* Runs "randn(1) rand(2) ..." on g; 0, or -1 for a token it does not know. */
static int run_after(ns_torch_rng *g, const char *after) {
  char err[NS_ERRLEN];
  const char *p = after;
  if (strcmp(after, "-") == 0) return 0;
  while (*p) {
    char name[8];
    size_t k;
    int used;
    if (sscanf(p, " %7[a-z](%zu)%n", name, &k, &used) != 2) return -1;
    float *tmp = malloc((k ? k : 1) * sizeof *tmp);
    int rc = strcmp(name, "randn") == 0  ? ns_torch_rng_randn(g, tmp, k, err)
             : strcmp(name, "rand") == 0 ? ns_torch_rng_rand(g, tmp, k, err)
                                         : -1;
    free(tmp);
    if (rc) return -1;
    p += used;
    while (*p == ' ') p++;
  }
  return 0;
}

static int check_group(const group *gr) {
  char err[NS_ERRLEN];
  ns_torch_rng g;
  ns_torch_rng_seed(&g, gr->seed);
  if (run_after(&g, gr->after)) {
    tap_ok(0, "%s(%zu) seed %lu after '%s': cannot run the 'after' calls", gr->fn, gr->n, gr->seed,
           gr->after);
    return 0;
  }
  float *v = malloc(gr->n * sizeof *v);
  int rc = strcmp(gr->fn, "randn") == 0 ? ns_torch_rng_randn(&g, v, gr->n, err)
                                        : ns_torch_rng_rand(&g, v, gr->n, err);
  size_t bad = 0, first = 0;
  for (size_t i = 0; rc == 0 && i < gr->n; i++)
    if (bits_of(v[i]) != gr->bits[i] && bad++ == 0) first = i;
  tap_ok(rc == 0 && bad == 0 && gr->got == gr->n,
         "%s(%zu) seed %lu after '%s': %zu of %zu values differ from torch%s", gr->fn, gr->n,
         gr->seed, gr->after, bad, gr->n, bad ? "" : " (bit for bit)");
  if (bad)
    tap_diag("first at %zu: got 0x%08x, torch 0x%08x", first, (unsigned)bits_of(v[first]),
             (unsigned)gr->bits[first]);
  free(v);
  return (int)gr->n;
}

static void vectors(void) {
  size_t len;
  char *buf = (char *)test_slurp(test_data_path("torch-rng-vectors.tsv"), &len);
  tap_ok(buf != NULL, "torch-rng-vectors.tsv is readable");
  if (!buf) return;
  group gr = {0};
  int values = 0, groups = 0;
  char *save = NULL;
  for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (line[0] == '#') continue;
    char fn[8], after[64];
    unsigned long seed;
    size_t n, i;
    unsigned bits;
    if (sscanf(line, "%7[^\t]\t%lu\t%63[^\t]\t%zu\t%zu\t%x", fn, &seed, after, &n, &i, &bits) != 6)
      continue;
    if (i == 0) {
      if (gr.bits) {
        values += check_group(&gr);
        groups++;
        free(gr.bits);
      }
      memset(&gr, 0, sizeof gr);
      strcpy(gr.fn, fn);
      strcpy(gr.after, after);
      gr.seed = seed;
      gr.n = n;
      gr.bits = calloc(n, sizeof *gr.bits);
    }
    if (gr.bits && i < gr.n && i == gr.got) gr.bits[gr.got++] = bits;
  }
  if (gr.bits) {
    values += check_group(&gr);
    groups++;
    free(gr.bits);
  }
  free(buf);
  tap_ok(groups >= 78 && values >= 10263, "%d groups, %d torch values compared", groups, values);
}

/* The reference MT19937 (init_genrand, genrand_int32): first outputs from its README. */
static void engine(void) {
  static const struct {
    uint64_t seed;
    uint32_t first[3];
  } ref[] = {{0, {2357136044u, 2546248239u, 3071714933u}},
             {12, {662124363u, 1916507803u, 3178489222u}},
             {5489, {3499211612u, 581869302u, 3890346734u}},
             {(UINT64_C(1) << 32) + 12, {662124363u, 1916507803u, 3178489222u}}};
  for (size_t k = 0; k < sizeof ref / sizeof ref[0]; k++) {
    ns_torch_rng g;
    ns_torch_rng_seed(&g, ref[k].seed);
    uint32_t a = ns_torch_rng_next32(&g), b = ns_torch_rng_next32(&g), c = ns_torch_rng_next32(&g);
    tap_ok(a == ref[k].first[0] && b == ref[k].first[1] && c == ref[k].first[2],
           "MT19937 seed %llu: first outputs %u %u %u", (unsigned long long)ref[k].seed, a, b, c);
  }
  /* The 10000th output of the reference generator seeded 5489 (C++ std::mt19937's check). */
  ns_torch_rng g;
  ns_torch_rng_seed(&g, 5489);
  uint32_t v = 0;
  for (int i = 0; i < 10000; i++) v = ns_torch_rng_next32(&g);
  tap_ok(v == 4123659995u, "MT19937 seed 5489: output 10000 is 4123659995 (got %u)", v);
  ns_torch_rng_seed(&g, 0);
  uint64_t w = ns_torch_rng_next64(&g);
  tap_ok(w == ((uint64_t)2357136044u << 32 | 2546248239u),
         "next64: the first output is the high word");
}

/* The polynomials are approximations of log, sin, cos: within a few float32 ulps. */
static void polynomials(void) {
  double worst_log = 0, worst_sc = 0;
  for (int k = 1; k <= 100000; k++) {
    float x = (float)k / 100000.0f;
    double d = fabs((double)ns_torch_logf(x) - log((double)x));
    double ulp = fmax(fabs(log((double)x)), 1e-3) * 0x1p-23;
    if (d / ulp > worst_log) worst_log = d / ulp;
    float th = (float)(6.283185307179586 * k / 100001.0), s, c;
    ns_torch_sincosf(th, &s, &c);
    double e = fmax(fabs(s - sin((double)th)), fabs(c - cos((double)th)));
    if (e > worst_sc) worst_sc = e;
  }
  tap_ok(worst_log < 4, "log polynomial within %.2f relative ulps of log on (0, 1]", worst_log);
  tap_ok(worst_sc < 4e-7, "sincos polynomial within %.2g of sin, cos on [0, 2 pi)", worst_sc);
  tap_ok(isnan(ns_torch_logf(0.0f)) && isnan(ns_torch_logf(-1.0f)), "log of x <= 0 is NaN");
}

static void errors(void) {
  char err[NS_ERRLEN] = "";
  float v[2];
  ns_torch_rng g;
  ns_torch_rng_seed(&g, 1);
  tap_ok(ns_torch_rng_randn(NULL, v, 2, err) == -1 && strstr(err, "generator"),
         "randn: NULL generator refused: %s", err);
  tap_ok(ns_torch_rng_rand(&g, NULL, 2, err) == -1 && strstr(err, "output"),
         "rand: NULL output refused: %s", err);
  tap_ok(ns_torch_rng_randn(&g, NULL, 0, err) == 0, "randn of 0 values needs no array");
}

int main(void) {
  engine();
  vectors();
  polynomials();
  errors();
  return tap_done();
}
