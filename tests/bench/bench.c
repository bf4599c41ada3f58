/* bench.c: speed and memory of the paths a user waits on (run with `make bench`).
 *
 * 1. Frames from scratch: ns_explore_compute of a whole result, as the explorer does when
 *    it opens x. For the default example and inputs of 16, 64 and 128 elements (with the
 *    full Jacobian, computed synchronously as headless callers get it), and just past
 *    NS_EXPLORE_JAC_FULL_LIMIT (closed form only), the budget is one 16 ms frame
 *    (doc/ARCHITECTURE.md: every change within a frame at the default sizes). On a 2000 x 512 and a
 *    (64,256,32,32) fp32 tensor it is the 100 ms target for a settings key, the most a load
 *    or a settings key may cost. The median and the worst of the runs are printed against
 *    the budget, the verdict on the median. The keys on those two tensors (view keys,
 *    settings keys, cell edits, on the screen's path) are bench_live's lines.
 * 2. Throughput of ns_normalize on a 1M-element fp32 activation tensor (64, 64, 16, 16)
 *    for each kind, in elements per second.
 * 3. Peak resident memory of the whole run (getrusage), against the largest tensor's
 *    own size.
 * Prints a table; exits 1 only if something fails to compute. Timings are information,
 * never asserted: they depend on the machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "core/blasdl.h"
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

/* Times ns_explore_compute on s from scratch: median and max over reps runs, in ms,
 * against budget ms (what for: why). */
static int bench_frame(const char *name, const ns_state *s, int reps, double budget,
                       const char *why) {
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
  printf("frame  %-35s median %8.3f ms   max %8.3f ms   target %3.0f ms %-4s (%s)\n", name,
         t[reps / 2], t[reps - 1], budget, t[reps / 2] <= budget ? "ok" : "OVER", why);
  free(t);
  return 0;
}

/* the budgets: one frame at the default sizes, a settings key's on large inputs */
#define FRAME_MS 16.0
#define SETTINGS_MS 100.0
/* up to NS_EXPLORE_JAC_FULL_LIMIT the full Jacobian is in the time (the screen would hand it
 * to its worker thread) */
static const char frame_why[] = "one frame", frame_j_why[] = "one frame; full J inline",
                  large_why[] = "a load or settings key";

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
    rc = bench_frame(name, &s, reps, FRAME_MS,
                     n <= NS_EXPLORE_JAC_FULL_LIMIT ? frame_j_why : frame_why);
  } else {
    fprintf(stderr, "bench: %s\n", err);
  }
  ns_tensor_free(x);
  free(v);
  ns_state_free(&s);
  return rc;
}

/* A large fp32 activation tensor (layer norm, the default kind): far above the probe
 * limits, so a frame from scratch is the cost of the normalization itself plus the
 * bounded probes. */
static int frame_large(const char *name, int rank, const size_t *shape, int reps) {
  ns_state s;
  char err[NS_ERRLEN];
  if (ns_state_init(&s, err) != 0) return -1;
  ns_tensor *x = ns_tensor_new(rank, shape, NS_FP32, err);
  if (!x) {
    ns_state_free(&s);
    return -1;
  }
  float *xv = x->data;
  for (size_t i = 0; i < x->n; i++) xv[i] = (float)((double)((i * 7919) % 1013) / 100.0 - 5.0);
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_X) | NS_FIELDBIT(NS_F_DTYPE);
  p.v.x = x;
  p.v.dtype = NS_FP32;
  int rc = ns_state_apply(&s, &p, err);
  if (rc == 0)
    rc = bench_frame(name, &s, reps, SETTINGS_MS, large_why);
  else
    fprintf(stderr, "bench: %s\n", err);
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
  /* one OpenBLAS thread, as the normscope program sets it (src/lua/nsl_blas.c): left to
     itself OpenBLAS starts one per core, and on a busy 2-core machine its spinning threads
     made a 128-element frame with the full Jacobian take 345 ms instead of 6 ms */
  ns_blas_set_threads(1);
  ns_mem_keep_freed(); /* as the program does at start-up (core/tensor.h) */
  if (ns_state_init(&s, err) != 0) {
    fprintf(stderr, "bench: %s\n", err);
    return 1;
  }
  rc |= bench_frame("default example", &s, 200, FRAME_MS, frame_j_why);
  ns_state_free(&s);
  rc |= frame_of_size(16, 100);
  rc |= frame_of_size(64, 50);
  rc |= frame_of_size(128, 20);
  rc |= frame_of_size(NS_EXPLORE_JAC_FULL_LIMIT + 1, 10); /* past it: no full Jacobian */
  size_t m2[2] = {2000, 512}, a4[4] = {64, 256, 32, 32};
  rc |= frame_large("x 2000x512 fp32, from scratch", 2, m2, 10);
  rc |= frame_large("x (64,256,32,32) fp32, from scratch", 4, a4, 3);
  rc |= throughput();
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double peak = ru.ru_maxrss / 1024.0; /* kB -> MB */
  printf("peak resident memory %.1f MB = %.2fx the largest tensor ((64,256,32,32) fp32, 64.0 MB)\n",
         peak, peak / 64.0);
  return rc ? 1 : 0;
}
