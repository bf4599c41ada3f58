/* bench_norm.c: ns_normalize on activation-sized inputs, side by side with numpy and torch.
 *
 *   bench_norm --cases            prints the cases (one list, here) for ref_timings.py
 *   bench_norm [REFS.tsv]         times every case and prints one table
 *
 * Per case: normscope's best of REPS runs with 1 and 2 threads (ns_normalize_exec, SIMD on;
 * the portable path too for the first cases) and with 1 thread into a reused output
 * (ns_normalize_reuse: no fresh pages to fault in and zero), numpy's and torch's best times from
 * REFS.tsv (written by tests/bench/ref_timings.py; a missing value leaves its column empty), the
 * ratios, the share of this machine's memcpy bandwidth for the bytes the map must move (x
 * read once, y written once: what memcpy of x moves, timed into a touched buffer), and the
 * peak resident memory of a child process that did nothing but this case, against x's size.
 * Then the ceiling of the ratios: numpy's and torch's times over memcpy's, into a new buffer
 * and into a reused one, i.e. what a kernel that only moved the bytes would reach.
 * Timings are printed, never asserted.
 *
 * Where the time goes (perf record -e cpu-clock, layer norm (8192,2048) fp32, 1 thread, on
 * the 2-core VM the targets were set on): with a new output about 45% is the system faulting in and
 * zeroing the 64 MB output (clear_page_erms under the kernels' first stores, 2 MB pages),
 * the rest the kernels: the output loop (bound by one vdivps per 8 values; the division
 * stays, it is what the reference computes) and the two sums, each a chain of additions
 * per statistic with 8 statistics side by side. Into a reused output the kernels alone
 * run at about 75% of memcpy's bandwidth; into a new one, memcpy itself only manages
 * about 55% of that ("new%").
 */
#define _DEFAULT_SOURCE 1 /* wait4 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/normalize.h"

#define REPS 7

typedef struct {
  const char *name;
  ns_kind kind;
  int groups;
  int rank;
  size_t shape[4];
  ns_dtype dtype; /* storage and spec dtype; acc is the default (fp32 for fp16/bf16) */
} bcase;

static const bcase CASES[] = {
    {"batch", NS_KIND_BATCH, 1, 4, {64, 256, 32, 32}, NS_FP32},
    {"group32", NS_KIND_GROUP, 32, 4, {64, 256, 32, 32}, NS_FP32},
    {"instance", NS_KIND_INSTANCE, 1, 4, {64, 256, 32, 32}, NS_FP32},
    {"layer", NS_KIND_LAYER, 1, 4, {64, 256, 32, 32}, NS_FP32},
    {"layer", NS_KIND_LAYER, 1, 2, {8192, 2048, 1, 1}, NS_FP32},
    {"rms", NS_KIND_RMS, 1, 2, {8192, 2048, 1, 1}, NS_FP32},
    {"batch", NS_KIND_BATCH, 1, 4, {64, 256, 32, 32}, NS_FP64},
    {"group32", NS_KIND_GROUP, 32, 4, {64, 256, 32, 32}, NS_FP64},
    {"instance", NS_KIND_INSTANCE, 1, 4, {64, 256, 32, 32}, NS_FP64},
    {"layer", NS_KIND_LAYER, 1, 4, {64, 256, 32, 32}, NS_FP64},
    {"layer", NS_KIND_LAYER, 1, 2, {8192, 2048, 1, 1}, NS_FP64},
    {"rms", NS_KIND_RMS, 1, 2, {8192, 2048, 1, 1}, NS_FP64},
    {"batch", NS_KIND_BATCH, 1, 4, {64, 256, 32, 32}, NS_FP16},
    {"layer", NS_KIND_LAYER, 1, 2, {8192, 2048, 1, 1}, NS_FP16},
    {"rms", NS_KIND_RMS, 1, 2, {8192, 2048, 1, 1}, NS_FP16},
    {"batch", NS_KIND_BATCH, 1, 4, {64, 256, 32, 32}, NS_BF16},
    {"layer", NS_KIND_LAYER, 1, 2, {8192, 2048, 1, 1}, NS_BF16},
    {"rms", NS_KIND_RMS, 1, 2, {8192, 2048, 1, 1}, NS_BF16},
    {"batch1d", NS_KIND_BATCH, 1, 2, {65536, 256, 1, 1}, NS_FP32}, /* BatchNorm1d: columns */
    {"batch1d", NS_KIND_BATCH, 1, 2, {65536, 256, 1, 1}, NS_FP64},
};
#define NCASES (sizeof CASES / sizeof *CASES)

static double now(void) {
  struct timespec ts;
  clock_gettime(getenv("BENCH_CPU") ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void shape_text(const bcase *c, char *buf, size_t len) {
  int k = snprintf(buf, len, "(");
  for (int a = 0; a < c->rank; a++)
    k += snprintf(buf + k, len - (size_t)k, "%s%zu", a ? "," : "", c->shape[a]);
  snprintf(buf + k, len - (size_t)k, ")");
}

/* what the child reports */
typedef struct {
  double t1, t2, tport, tcopy; /* seconds: 1 thread, 2 threads, portable 1 thread, memcpy */
  double treuse;               /* 1 thread into the previous call's output */
  double tfresh;               /* calloc of a new buffer (2 MB pages asked) + memcpy + free */
  int ok;
} bresult;

/* reuse: every call writes into the previous call's output (ns_normalize_reuse), as the
 * explorer recomputing one shape can; else each call gets a new output, as numpy's does */
static double time_norm(const ns_tensor *x, const ns_spec *s, int simd, int threads, int reuse) {
  char err[NS_ERRLEN];
  ns_exec ex = {simd, threads};
  double best = 1e30;
  ns_tensor *old = NULL;
  for (int r = 0; r < REPS + reuse; r++) {
    ns_norm_result res;
    double t0 = now();
    if (ns_normalize_reuse(x, s, &ex, old, &res, err) != 0) {
      fprintf(stderr, "bench_norm: %s\n", err);
      return -1;
    }
    double t = now() - t0;
    old = NULL;
    if (reuse) old = res.y, res.y = NULL;
    ns_norm_result_free(&res);
    if (t < best && (!reuse || r > 0)) best = t; /* reuse: the first call makes the output */
  }
  ns_tensor_free(old);
  return best;
}

static volatile unsigned char sink;

static void run_case(const bcase *c, int with_portable, bresult *out) {
  char err[NS_ERRLEN];
  memset(out, 0, sizeof *out);
  ns_tensor *x = ns_tensor_new(c->rank, c->shape, c->dtype, err);
  if (!x) return;
  uint64_t r = 88172645463325252ull;
  for (size_t i = 0; i < x->n; i++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    ns_tensor_set(x, i, (double)(r >> 11) * 0x1p-53 * 4.0 - 1.0);
  }
  ns_spec s;
  ns_spec_default(&s);
  s.kind = c->kind;
  s.groups = c->groups;
  s.dtype = c->dtype;
  out->t1 = time_norm(x, &s, 1, 1, 0);
  out->t2 = time_norm(x, &s, 1, 2, 0);
  out->treuse = time_norm(x, &s, 1, 1, 1);
  out->tport = with_portable ? time_norm(x, &s, 0, 1, 0) : 0;
  size_t bytes = x->n * ns_dtype_size(x->dtype);
  unsigned char *dst = malloc(bytes);
  if (dst) {
    memset(dst, 1, bytes);
    out->tcopy = 1e30;
    for (int k = 0; k < REPS; k++) {
      double t0 = now();
      memcpy(dst, x->data, bytes);
      double t = now() - t0;
      sink += dst[(size_t)k * 4099 % bytes]; /* the copy is used: it cannot be left out */
      if (t < out->tcopy) out->tcopy = t;
    }
    free(dst);
  }
  out->tfresh = 1e30;
  for (int k = 0; k < REPS; k++) {
    double t0 = now();
    unsigned char *d = calloc(bytes, 1);
    if (!d) break;
    size_t huge = (size_t)2 << 20;
    uintptr_t a = ((uintptr_t)d + huge - 1) & ~(uintptr_t)(huge - 1);
    uintptr_t e = ((uintptr_t)d + bytes) & ~(uintptr_t)(huge - 1);
    if (e > a) madvise((void *)a, e - a, MADV_HUGEPAGE);
    memcpy(d, x->data, bytes);
    sink += d[(size_t)k * 4099 % bytes];
    free(d);
    double t = now() - t0;
    if (t < out->tfresh) out->tfresh = t;
  }
  out->ok = out->t1 > 0 && out->t2 > 0;
  ns_tensor_free(x);
}

/* numpy and torch ms for case i from REFS.tsv ("i<TAB>numpy_ms<TAB>torch_ms", '-' = none) */
static void refs_of(const char *path, double np[NCASES], double th[NCASES]) {
  for (size_t i = 0; i < NCASES; i++) np[i] = th[i] = -1;
  FILE *f = path ? fopen(path, "r") : NULL;
  if (!f) return;
  char line[256];
  while (fgets(line, sizeof line, f)) {
    unsigned i;
    char a[64], b[64];
    if (sscanf(line, "%u %63s %63s", &i, a, b) == 3 && i < NCASES) {
      np[i] = a[0] == '-' ? -1 : strtod(a, NULL);
      th[i] = b[0] == '-' ? -1 : strtod(b, NULL);
    }
  }
  fclose(f);
}

static void cell(char *buf, size_t len, double v, const char *fmt) {
  if (v > 0)
    snprintf(buf, len, fmt, v);
  else
    snprintf(buf, len, "-");
}

int main(int argc, char **argv) {
  ns_mem_keep_freed(); /* as the program does at start-up (core/tensor.h) */
  if (argc > 1 && strcmp(argv[1], "--cases") == 0) {
    for (size_t i = 0; i < NCASES; i++) {
      char sh[64];
      shape_text(&CASES[i], sh, sizeof sh);
      printf("%zu\t%s\t%s\t%d\t%s\n", i, ns_kind_name(CASES[i].kind), sh, CASES[i].groups,
             ns_dtype_name(CASES[i].dtype));
    }
    return 0;
  }
  if (argc > 2 && strcmp(argv[1], "--only") == 0) { /* one case, no fork: for a profiler */
    bresult br;
    size_t i = (size_t)strtoul(argv[2], NULL, 10);
    if (i >= NCASES) return 2;
    run_case(&CASES[i], !getenv("BENCH_NOPORT"), &br);
    printf("%s %s: 1 thread %.2f ms, 2 threads %.2f ms, reused output %.2f ms, portable %.2f ms, "
           "memcpy %.2f ms, into a new buffer %.2f ms\n",
           CASES[i].name, ns_dtype_name(CASES[i].dtype), br.t1 * 1e3, br.t2 * 1e3, br.treuse * 1e3,
           br.tport * 1e3, br.tcopy * 1e3, br.tfresh * 1e3);
    return 0;
  }
  double np[NCASES], th[NCASES];
  refs_of(argc > 1 ? argv[1] : NULL, np, th);
  ns_exec e1 = {1, 1};
  printf("ns_normalize, best of %d runs, SIMD %s; numpy %s and torch (1 thread) from "
         "tests/bench/ref_timings.py\n",
         REPS, ns_exec_isa(&e1), "1.24");
  printf("fp16/bf16 rows: storage and dtype fp16/bf16, acc fp32; 'x fp32' compares with the "
         "fp32 row of the same case\n");
  printf("%-9s %-18s %-5s %8s %8s %8s %8s %8s %8s %7s %7s %7s %7s %7s %8s %9s\n", "case", "shape",
         "dtype", "ns 1thr", "ns 2thr", "reused", "portabl", "numpy", "torch", "xnumpy", "xtorch",
         "memcpy%", "new%", "reuse%", "x fp32", "peak/x");
  printf("%-9s %-18s %-5s %8s %8s %8s %8s %8s %8s %7s %7s %7s %7s %7s %8s %9s\n", "", "", "", "ms",
         "ms", "ms", "ms", "ms", "ms", "", "", "", "", "", "", "");
  double fp32_t1[NCASES], fresh_ms[NCASES], copy_ms[NCASES];
  int rc = 0;
  for (size_t i = 0; i < NCASES; i++) {
    const bcase *c = &CASES[i];
    int fd[2];
    bresult br;
    memset(&br, 0, sizeof br);
    fresh_ms[i] = copy_ms[i] = -1;
    fflush(stdout);
    if (pipe(fd) != 0) return 1;
    pid_t pid = fork();
    if (pid == 0) {
      close(fd[0]);
      run_case(c, i < 6, &br);
      ssize_t w = write(fd[1], &br, sizeof br);
      _exit(w == (ssize_t)sizeof br ? 0 : 1);
    }
    close(fd[1]);
    ssize_t got = pid > 0 ? read(fd[0], &br, sizeof br) : -1;
    close(fd[0]);
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    int status = 0;
    if (pid > 0) wait4(pid, &status, 0, &ru);
    if (got != (ssize_t)sizeof br || !br.ok) {
      printf("%-9s failed\n", c->name);
      rc = 1;
      continue;
    }
    char sh[64], a[7][32];
    shape_text(c, sh, sizeof sh);
    size_t n = 1;
    for (int k = 0; k < c->rank; k++) n *= c->shape[k];
    double xmb = (double)(n * ns_dtype_size(c->dtype)) / (1 << 20);
    double t1 = br.t1 * 1e3, t2 = br.t2 * 1e3;
    fp32_t1[i] = c->dtype == NS_FP32 ? t1 : -1;
    fresh_ms[i] = br.tfresh * 1e3, copy_ms[i] = br.tcopy * 1e3;
    double vs32 = -1;
    if (c->dtype == NS_FP16 || c->dtype == NS_BF16)
      for (size_t k = 0; k < NCASES; k++)
        if (CASES[k].dtype == NS_FP32 && CASES[k].kind == c->kind && CASES[k].rank == c->rank &&
            fp32_t1[k] > 0)
          vs32 = t1 / fp32_t1[k];
    cell(a[0], sizeof a[0], br.tport * 1e3, "%8.1f");
    cell(a[1], sizeof a[1], np[i], "%8.1f");
    cell(a[2], sizeof a[2], th[i], "%8.1f");
    cell(a[3], sizeof a[3], np[i] > 0 ? np[i] / t1 : -1, "%6.1fx");
    cell(a[4], sizeof a[4], th[i] > 0 ? th[i] / t1 : -1, "%6.1fx");
    cell(a[5], sizeof a[5], vs32, "%7.2fx");
    printf("%-9s %-18s %-5s %8.1f %8.1f %8.1f %8s %8s %8s %7s %7s %6.0f%% %6.0f%% %6.0f%% %8s "
           "%4.0fMB/%.0f\n",
           c->name, sh, ns_dtype_name(c->dtype), t1, t2, br.treuse * 1e3, a[0], a[1], a[2], a[3],
           a[4], 100.0 * br.tcopy * 1e3 / t1, 100.0 * br.tfresh * 1e3 / t1,
           100.0 * br.tcopy / br.treuse, a[5], ru.ru_maxrss / 1024.0, xmb);
  }
  /* What the goals' ratios can reach at all: a kernel that did nothing but move the bytes
     would take memcpy's time, into a new buffer (what a new output costs) or a touched one. */
  printf("\nceiling: numpy and torch over memcpy of x's bytes, the time of a kernel that only "
         "moved the data\n");
  printf("%-9s %-18s %-5s %17s %17s\n", "case", "shape", "dtype", "new buffer np/th",
         "reused np/th");
  for (size_t i = 0; i < NCASES; i++) {
    const bcase *c = &CASES[i];
    if (np[i] <= 0 && th[i] <= 0) continue;
    if (!(fresh_ms[i] > 0) || !(copy_ms[i] > 0)) continue;
    char sh[64], a[4][32];
    shape_text(c, sh, sizeof sh);
    cell(a[0], sizeof a[0], np[i] > 0 ? np[i] / fresh_ms[i] : -1, "%6.1fx");
    cell(a[1], sizeof a[1], th[i] > 0 ? th[i] / fresh_ms[i] : -1, "%6.1fx");
    cell(a[2], sizeof a[2], np[i] > 0 ? np[i] / copy_ms[i] : -1, "%6.1fx");
    cell(a[3], sizeof a[3], th[i] > 0 ? th[i] / copy_ms[i] : -1, "%6.1fx");
    printf("%-9s %-18s %-5s %8s %8s %8s %8s\n", c->name, sh, ns_dtype_name(c->dtype), a[0], a[1],
           a[2], a[3]);
  }
  /* the kept reference path, i.e. ns_normalize as it was before the kernels, once each */
  printf(
      "\nbefore: ns_normalize_ref (the straightforward path ns_normalize used to take), one run\n");
  for (size_t i = 0; i < NCASES && i < 6; i++) {
    const bcase *c = &CASES[i];
    int fd[2];
    double t = -1;
    fflush(stdout);
    if (pipe(fd) != 0) return 1;
    pid_t pid = fork();
    if (pid == 0) {
      close(fd[0]);
      char err[NS_ERRLEN];
      ns_tensor *x = ns_tensor_new(c->rank, c->shape, c->dtype, err);
      ns_spec s;
      ns_spec_default(&s);
      s.kind = c->kind;
      s.groups = c->groups;
      s.dtype = c->dtype;
      ns_norm_result res;
      double t0 = now();
      if (x && ns_normalize_ref(x, &s, &res, err) == 0) {
        t = now() - t0;
        ns_norm_result_free(&res);
      }
      ssize_t w = write(fd[1], &t, sizeof t);
      _exit(w == (ssize_t)sizeof t ? 0 : 1);
    }
    close(fd[1]);
    ssize_t got = pid > 0 ? read(fd[0], &t, sizeof t) : -1;
    close(fd[0]);
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    int status = 0;
    if (pid > 0) wait4(pid, &status, 0, &ru);
    char sh[64];
    shape_text(c, sh, sizeof sh);
    if (got == (ssize_t)sizeof t && t > 0)
      printf("%-9s %-18s %-5s %8.1f ms  peak %5.0f MB  (now %.1fx faster)\n", c->name, sh,
             ns_dtype_name(c->dtype), t * 1e3, ru.ru_maxrss / 1024.0,
             fp32_t1[i] > 0 ? t * 1e3 / fp32_t1[i] : 0.0);
  }
  printf("xnumpy, xtorch: how many times faster than numpy / torch (1 thread each); memcpy%%: "
         "memcpy of x's bytes (one read, one write)\n"
         "into a touched buffer over normscope's 1-thread time; new%%: the same into a new buffer\n"
         "(calloc, the kernel's page zeroing included, as ns_normalize's output pays it); reused,\n"
         "reuse%%: 1 thread writing into the previous call's output (ns_normalize_reuse, no fresh\n"
         "pages) and memcpy over it; peak/x: "
         "peak resident MB of the case's process / "
         "x's MB (x, y and the program)\n");
  return rc;
}
