/* bench.c: speed and memory of the paths a user waits on (run with `make bench`).
 *
 * 1. One explorer frame: ns_explore_compute for the default example and for inputs of
 *    16, 64 and 128 elements (with the full Jacobian, computed synchronously as headless
 *    callers get it), and just past NS_EXPLORE_JAC_FULL_LIMIT (closed form only).
 *    The screen's budget is one frame, 16 ms; the median and the worst of the runs are
 *    printed against it.
 *    Then single keys on a 2000 x 512 fp32 matrix through ns_explore_update (the screen's
 *    path): a cursor move, a probe parameter, a train setting, eps, one cell of x.
 * 2. Throughput of ns_normalize on a 1M-element fp32 activation tensor (64, 64, 16, 16)
 *    for each kind, in elements per second.
 * 3. Peak resident memory of the whole run (getrusage), against the 4 MB the fp32
 *    tensor itself needs.
 * Prints a table; exits 1 only if something fails to compute. Timings are information,
 * never asserted: they depend on the machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "explore/explore.h"
#include "core/normalize.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Times ns_explore_compute on s: median and max over reps runs, in ms. */
static int bench_frame(const char *name, const ns_state *s, int reps) {
  double *t = malloc(sizeof *t * (size_t)reps);
  char err[NS_ERRLEN];
  if (!t) return -1;
  for (int i = 0; i < reps; i++) {
    ns_result r;
    memset(&r, 0, sizeof r);
    double t0 = now();
    if (ns_explore_compute(s, &r, err) != 0) {
      fprintf(stderr, "bench: %s: %s\n", name, err);
      free(t);
      return -1;
    }
    t[i] = (now() - t0) * 1e3;
    ns_result_free(&r);
  }
  qsort(t, (size_t)reps, sizeof *t, cmp);
  printf("frame  %-28s median %8.3f ms   max %8.3f ms   budget 16 ms %s\n", name, t[reps / 2],
         t[reps - 1], t[reps / 2] <= 16.0 ? "ok" : "OVER");
  free(t);
  return 0;
}

static int frame_of_size(size_t n, int reps) {
  ns_state s;
  char err[NS_ERRLEN], name[64];
  if (ns_state_init(&s, err) != 0) return -1;
  double *v = malloc(sizeof *v * n);
  size_t shape[1] = {n};
  for (size_t i = 0; i < n; i++) v[i] = (double)((i * 7919) % 101) / 10.0 - 5.0;
  ns_tensor *x = ns_tensor_from(1, shape, NS_FP64, v, err);
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_X);
  p.v.x = x;
  int rc = ns_state_apply(&s, &p, err);
  if (rc == 0) {
    snprintf(name, sizeof name, "x of %zu elements", n);
    rc = bench_frame(name, &s, reps);
  } else {
    fprintf(stderr, "bench: %s\n", err);
  }
  ns_tensor_free(x);
  free(v);
  ns_state_free(&s);
  return rc;
}

/* One keypress on the screen: change applies `key` to s (alternating between two
 * values so every run changes something), then ns_explore_update recomputes what the
 * change touched. Median and max over reps keys, in ms. */
typedef int (*key_fn)(ns_state *s, int i, char *err);

static int bench_key(const char *name, ns_state *s, key_fn key, int reps) {
  double *t = malloc(sizeof *t * (size_t)reps);
  char err[NS_ERRLEN];
  ns_explore_cache c;
  ns_result r;
  memset(&r, 0, sizeof r);
  ns_explore_cache_init(&c);
  int rc = t ? ns_explore_update(&c, s, &r, err) : -1;
  for (int i = 0; rc == 0 && i < reps; i++) {
    double t0 = now();
    rc = key(s, i, err);
    if (rc == 0) rc = ns_explore_update(&c, s, &r, err);
    t[i] = (now() - t0) * 1e3;
  }
  if (rc == 0) {
    qsort(t, (size_t)reps, sizeof *t, cmp);
    printf("key    %-28s median %8.3f ms   max %8.3f ms   budget 16 ms %s\n", name, t[reps / 2],
           t[reps - 1], t[reps / 2] <= 16.0 ? "ok" : "OVER");
  } else {
    fprintf(stderr, "bench: %s: %s\n", name, t ? err : "out of memory");
  }
  ns_result_free(&r);
  ns_explore_cache_free(&c);
  free(t);
  return rc;
}

/* a key that leaves the state as it is (what the model costs a view key) */
static int key_cursor(ns_state *s, int i, char *err) {
  (void)i;
  return ns_edit_set_shift(s, NULL, s->shift, err);
}
static int key_shift(ns_state *s, int i, char *err) {
  return ns_edit_set_shift(s, NULL, i % 2 ? 10 : 3, err);
}
static int key_eps(ns_state *s, int i, char *err) {
  return ns_edit_eps_decade(s, NULL, i % 2 ? -1 : 1, err);
}
static int key_cell(ns_state *s, int i, char *err) {
  return ns_edit_set_x(s, NULL, 7, i % 2 ? 1.5 : -0.5, err);
}
static int key_seed(ns_state *s, int i, char *err) {
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_SEED);
  p.v.seed = 1000u + (unsigned)i;
  return ns_state_apply(s, &p, err);
}

/* A 2000 x 512 fp32 activation matrix (layer norm across rows): far above the probe
 * limits, so a full frame is the cost of the normalization itself plus the bounded
 * probes; keys that do not touch x or the spec should cost next to nothing. */
static int frame_large(int reps) {
  ns_state s;
  char err[NS_ERRLEN];
  if (ns_state_init(&s, err) != 0) return -1;
  size_t shape[2] = {2000, 512};
  ns_tensor *x = ns_tensor_new(2, shape, NS_FP32, err);
  if (!x) {
    ns_state_free(&s);
    return -1;
  }
  for (size_t i = 0; i < x->n; i++) ns_tensor_set(x, i, (double)((i * 7919) % 1013) / 100.0 - 5.0);
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_X) | NS_FIELDBIT(NS_F_DTYPE);
  p.v.x = x;
  p.v.dtype = NS_FP32;
  int rc = ns_state_apply(&s, &p, err);
  if (rc == 0) {
    rc |= bench_frame("x 2000x512 fp32", &s, reps);
    rc |= bench_key("view key (no change), 2000x512", &s, key_cursor, 4 * reps);
    rc |= bench_key("shift probe, 2000x512", &s, key_shift, reps);
    rc |= bench_key("seed (train), 2000x512", &s, key_seed, reps);
    rc |= bench_key("eps decade, 2000x512", &s, key_eps, reps);
    rc |= bench_key("edit a cell, 2000x512", &s, key_cell, reps);
  } else {
    fprintf(stderr, "bench: %s\n", err);
  }
  ns_tensor_free(x);
  ns_state_free(&s);
  return rc;
}

static int throughput(void) {
  size_t shape[4] = {64, 64, 16, 16};
  char err[NS_ERRLEN];
  ns_tensor *x = ns_tensor_new(4, shape, NS_FP32, err);
  if (!x) return -1;
  unsigned long long r = 88172645463325252ULL;
  for (size_t i = 0; i < x->n; i++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    ns_tensor_set(x, i, (double)(r >> 11) * 0x1p-53 * 4.0 - 2.0);
  }
  static const ns_kind kinds[] = {NS_KIND_BATCH, NS_KIND_LAYER, NS_KIND_RMS, NS_KIND_INSTANCE,
                                  NS_KIND_GROUP};
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
    ns_spec sp;
    ns_spec_default(&sp);
    sp.kind = kinds[k];
    sp.dtype = NS_FP32;
    if (sp.kind == NS_KIND_GROUP) sp.groups = 8;
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
      ns_norm_result res;
      memset(&res, 0, sizeof res);
      double t0 = now();
      if (ns_normalize(x, &sp, &res, err) != 0) {
        fprintf(stderr, "bench: normalize %s: %s\n", ns_kind_name(sp.kind), err);
        ns_norm_result_free(&res);
        ns_tensor_free(x);
        return -1;
      }
      double dt = now() - t0;
      if (dt < best) best = dt;
      ns_norm_result_free(&res);
    }
    printf("normalize %-9s fp32 (64,64,16,16)  %8.1f ms   %6.1f M elements/s\n",
           ns_kind_name(sp.kind), best * 1e3, (double)x->n / best / 1e6);
  }
  ns_tensor_free(x);
  return 0;
}

int main(void) {
  ns_state s;
  char err[NS_ERRLEN];
  int rc = 0;
  if (ns_state_init(&s, err) != 0) {
    fprintf(stderr, "bench: %s\n", err);
    return 1;
  }
  rc |= bench_frame("default example", &s, 200);
  ns_state_free(&s);
  rc |= frame_of_size(16, 100);
  rc |= frame_of_size(64, 50);
  rc |= frame_of_size(128, 20);
  rc |= frame_of_size(NS_EXPLORE_JAC_FULL_LIMIT + 1, 10); /* past it: no full Jacobian */
  rc |= frame_large(10);
  rc |= throughput();
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("peak resident memory %.1f MB (the fp32 tensor itself: 4.0 MB)\n", ru.ru_maxrss / 1024.0);
  return rc ? 1 : 0;
}
