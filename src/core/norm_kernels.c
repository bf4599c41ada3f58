/* norm_kernels.c: ns_normalize_exec: the checks, the job description and the dispatch of
 * the kernels (norm_kernels.h) to the CPU's instruction set and to threads.
 *
 * Memory: the output tensor (new and not zeroed, or the caller's, ns_normalize_reuse), five arrays
 * of nstat entries, gamma and beta in acc (naffine entries each in double and float, or one each
 * when neither varies) and nothing per element. Threads (ns_exec.threads) take disjoint ranges
 * of statistics; each statistic is computed by the same code whatever the range, so the bits do
 * not depend on the number of threads or on the instruction set.
 */
#include "core/norm_kernels.h"
#include "core/normalize.h"
#include "core/round.h"
#include "core/err.h"
#include "core/split.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NK_RUN nk_run_base
#define NK_AVX2 0
#include "core/norm_kernels_impl.h"

void ns_exec_default(ns_exec *e) {
  if (!e) return;
  e->simd = 1;
  e->threads = 1;
}

typedef void (*nk_fn)(const nk_job *, size_t, size_t);

#ifdef NK_HAVE_AVX2
#include <cpuid.h>
/* F16C from CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports has no "f16c". */
static int has_f16c(void) {
  unsigned a, b, c, d;
  return __get_cpuid(1, &a, &b, &c, &d) && (c >> 29 & 1u);
}
#endif

#ifdef NK_HAVE_AVX2
/* What the CPU has, asked once: CPUID is a VM exit under a hypervisor, and the lesson
 * fuzzer spent 6% of its time asking on every call. A constant of the machine, so the one
 * static in the kernels is a cache, not state. */
static int cpu_avx2;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;
static void cpu_probe(void) {
  __builtin_cpu_init();
  cpu_avx2 = __builtin_cpu_supports("avx2") && has_f16c();
}
#endif

static nk_fn pick(const ns_exec *ex) {
#ifdef NK_HAVE_AVX2
  if (ex->simd) {
    pthread_once(&cpu_once, cpu_probe);
    if (cpu_avx2) return nk_run_avx2;
  }
#endif
  (void)ex;
  return nk_run_base;
}

const char *ns_exec_isa(const ns_exec *ex) {
  ns_exec d;
  if (!ex) ns_exec_default(&d), ex = &d;
#ifdef NK_HAVE_AVX2
  if (pick(ex) == nk_run_avx2) return "avx2";
#endif
#if defined(__x86_64__)
  return ex->simd ? "sse2" : "portable"; /* SSE2 is x86-64's baseline: the compiler's own */
#else
  return "portable";
#endif
}

typedef struct {
  const nk_job *job;
  nk_fn fn;
} nk_parts;

/* Blocks [b0, b1) of NK_LANES statistics (the last block may be short). */
static void part_blocks(void *ctx, size_t b0, size_t b1) {
  const nk_parts *p = ctx;
  size_t s1 = b1 * NK_LANES < p->job->nstat ? b1 * NK_LANES : p->job->nstat;
  p->fn(p->job, b0 * NK_LANES, s1);
}

/* Statistics [a, z): for fewer blocks than threads (below). */
static void part_stats(void *ctx, size_t a, size_t z) {
  const nk_parts *p = ctx;
  p->fn(p->job, a, z);
}

/* The statistics split over threads in whole blocks, so no block straddles two threads.
 * Fewer blocks than threads (a few large statistics) split by statistic instead, each
 * thread's share a shorter block: a statistic's arithmetic is its lane's alone, so the
 * bits are the same. A layer norm of (6, 1e6) fp64 values ran on one thread: 5.2 ms, now
 * 4.2 on two. Worth a thread (about 50 us to start) only from 2^16 elements. */
static void run_parts(const nk_job *j, nk_fn fn, int threads) {
  nk_parts p = {j, fn};
  size_t blocks = (j->nstat + NK_LANES - 1) / NK_LANES;
  if (threads > 1 && blocks < (size_t)threads && j->nstat > 1 && j->n >= ((size_t)1 << 16))
    ns_split_run(j->nstat, threads, part_stats, &p);
  else
    ns_split_run(blocks, threads, part_blocks, &p);
}

/* The loops of the job: which axes a statistic's elements and the statistics run over. */
static void geometry(const ns_norm_plan *p, int grouped, nk_job *j) {
  const int rank = p->rank;
  size_t xs[NS_MAXRANK], st = 1;
  for (int a = rank - 1; a >= 0; a--) xs[a] = st, st *= p->shape[a];
  const size_t C = rank >= 2 ? p->shape[1] : 1, cpg = C / p->groups;
  size_t ext[NS_MAXRANK], str[NS_MAXRANK], am[NS_MAXRANK];
  int nm = 0;
  j->nsl = 0;
  for (int a = 0; a < rank; a++) {
    int red = (p->axes >> a) & 1u;
    if (grouped && a == 1) {
      ext[nm] = cpg, str[nm] = xs[1], am[nm] = 1, nm++;
      j->sext[j->nsl] = p->groups, j->sstr[j->nsl] = cpg * xs[1], j->samul[j->nsl] = cpg;
      j->nsl++;
    } else if (red) {
      ext[nm] = p->shape[a], str[nm] = xs[a], am[nm] = !p->per_element && a == 1, nm++;
    } else {
      j->sext[j->nsl] = p->shape[a], j->sstr[j->nsl] = xs[a];
      j->samul[j->nsl] = !p->per_element && a == 1;
      j->nsl++;
    }
  }
  if (p->per_element) { /* gamma/beta index: the element's ordinal within its statistic */
    size_t s = 1;
    for (int l = nm - 1; l >= 0; l--) am[l] = s, s *= ext[l];
  }
  /* drop extents of 1, merge a level into the next when they walk one run together */
  size_t me[NS_MAXRANK], ms[NS_MAXRANK], ma[NS_MAXRANK];
  int k = 0;
  for (int l = 0; l < nm; l++) {
    if (ext[l] == 1) continue;
    if (k > 0 && ms[k - 1] == ext[l] * str[l] && ma[k - 1] == ext[l] * am[l]) {
      me[k - 1] *= ext[l];
      ms[k - 1] = str[l];
      ma[k - 1] = am[l];
      continue;
    }
    me[k] = ext[l], ms[k] = str[l], ma[k] = am[l], k++;
  }
  int pad = NK_LEVELS - k;
  for (int l = 0; l < NK_LEVELS; l++) {
    if (l < pad)
      j->mext[l] = 1, j->mstr[l] = 0, j->mamul[l] = 0;
    else
      j->mext[l] = me[l - pad], j->mstr[l] = ms[l - pad], j->mamul[l] = ma[l - pad];
  }
}

/* Adjacent statistic levels that walk one run (the outer's step is the inner's whole
 * extent, in x and in gamma/beta) become one: the statistics and each one's offsets are
 * the same, but the innermost level is longer. The wide blocks of nk_v_wide span at most
 * one innermost level: over axis 0 of a (64, 256, 32, 32) file they were 32 statistics
 * wide (rows of 128 bytes), now 256 (fp64 statistics 29 -> 18 ms on one core). */
static void merge_stat_levels(nk_job *j) {
  int k = 0;
  for (int l = 0; l < j->nsl; l++) {
    if (j->sext[l] == 1) continue;
    if (k > 0 && j->sstr[k - 1] == j->sext[l] * j->sstr[l] &&
        j->samul[k - 1] == j->sext[l] * j->samul[l]) {
      j->sext[k - 1] *= j->sext[l];
      j->sstr[k - 1] = j->sstr[l];
      j->samul[k - 1] = j->samul[l];
      continue;
    }
    j->sext[k] = j->sext[l], j->sstr[k] = j->sstr[l], j->samul[k] = j->samul[l], k++;
  }
  j->nsl = k;
}

/* gamma or beta in acc, naff values (v broadcast when it has one), or absent (fill). */
static void affine_arrays(const double *v, size_t nv, size_t naff, double fill, ns_dtype acc,
                          double *d, float *f) {
  for (size_t i = 0; i < naff; i++) {
    double a = v ? ns_round_fast(v[nv == 1 ? 0 : i], acc) : fill;
    d[i] = a;
    f[i] = (float)a;
  }
}

/* How many gamma/beta values the kernels walk: one when neither varies (both absent or
 * broadcast from one value), so the output loops read no arrays of ones and zeros. */
static size_t affine_walked(const ns_spec *spec, const ns_norm_plan *p) {
  int uniform = (!spec->gamma || spec->ngamma == 1) && (!spec->beta || spec->nbeta == 1);
  return uniform ? 1 : p->naffine;
}

/* The job of normalizing x with spec into res (its plan, y and per-statistic arrays set;
 * aff/afff: 2 * affine_walked values each, filled here). */
static void job_make(const ns_tensor *x, const ns_spec *spec, ns_norm_result *res, int eval,
                     const ns_running *run, double *aff, float *afff, nk_job *j) {
  const ns_norm_plan *p = &res->plan;
  const ns_dtype acc = ns_spec_acc(spec);
  const size_t naff = affine_walked(spec, p), m = p->count;
  affine_arrays(spec->gamma, spec->ngamma, naff, 1.0, acc, aff, afff);
  affine_arrays(spec->beta, spec->nbeta, naff, -0.0, acc, aff + naff, afff + naff);
  memset(j, 0, sizeof *j);
  j->x = x->data;
  j->y = res->y ? res->y->data : NULL; /* NULL: the statistics alone */
  j->xdt = x->dtype;
  j->dt = spec->dtype;
  j->acc = acc;
  j->n = p->n;
  j->nstat = p->nstat;
  j->count = m;
  geometry(p, ns_kinds[spec->kind].grouped, j);
  if (naff == 1) { /* every element takes gamma[0] and beta[0] */
    memset(j->samul, 0, sizeof j->samul);
    memset(j->mamul, 0, sizeof j->mamul);
  }
  merge_stat_levels(j);
  j->centered = ns_spec_center(spec);
  j->m2_used = j->centered || (run && !eval);
  j->eval = eval;
  j->ddof = spec->ddof;
  j->algo = spec->algo;
  j->order = spec->order;
  j->eps_at_std = spec->eps_at == NS_EPS_STD;
  j->eps = ns_round_fast(spec->eps, acc);
  j->rn = ns_round_fast((double)m, acc);
  j->rdof = ns_round_fast((double)m - spec->ddof, acc);
  j->g64 = aff;
  j->b64 = aff + naff;
  j->g32 = afff;
  j->b32 = afff + naff;
  j->run = eval ? run : NULL;
  j->mean = res->mean;
  j->var = res->var;
  j->denom = res->denom;
  j->batch = res->batch;
  j->degenerate = res->degenerate;
}

/* ns_normalize_reuse; *reuse is set to NULL once the output owns it. borrowed: the
 * caller's tensor (ns_normalize_into), which an error never frees. stats: the statistics
 * alone (ns_normalize_stats), no output, sq (when not NULL) each one's sum of squares. */
static int normalize(const ns_tensor *x, const ns_spec *spec, const ns_exec *ex, ns_tensor **reuse,
                     const ns_tensor *borrowed, int stats, double *sq, ns_norm_result *res,
                     char *err) {
  if (!res) {
    ns_seterr(err, "no result to fill");
    return -1;
  }
  memset(res, 0, sizeof *res);
  if (!x || !spec) {
    ns_seterr(err, x ? "no normalization spec" : "no input tensor");
    return -1;
  }
  if (stats && (spec->mask || spec->order == NS_ORDER_TORCH || spec->order == NS_ORDER_NUMPY ||
                spec->running)) {
    ns_seterr(err, "normalize_stats: %s",
              spec->mask      ? "a masked normalization has no kernel"
              : spec->running ? "running statistics are read or updated as a whole"
                              : "torch's and numpy's orders have no kernel");
    return -1;
  }
  if (spec->mask) return ns_normalize_ref(x, spec, res, err); /* masks: the reference path */
  ns_exec dflt;
  if (!ex) ns_exec_default(&dflt), ex = &dflt;
  if (ns_spec_check(spec, err) != 0 || ns_spec_running_check(spec, x->rank, err) != 0) return -1;
  /* torch's orders have no kernel: the reference path computes them (torchorder.h) */
  if (spec->order == NS_ORDER_TORCH || spec->order == NS_ORDER_NUMPY)
    return ns_normalize_ref(x, spec, res, err);
  char sh[96];
  ns_shape_format(x->rank, x->shape, sh, sizeof sh);
  ns_norm_plan *p = &res->plan;
  if (ns_norm_plan_shape(x->rank, x->shape, spec, p, err) != 0) return -1;
  if (ns_spec_check_plan(spec, p, x->rank, x->shape, err) != 0) {
    ns_norm_result_free(res);
    return -1;
  }
  const size_t nstat = p->nstat;
  const int eval = ns_spec_eval_running(spec, x->rank);
  ns_running *run = spec->running; /* checked by ns_spec_running_check and _check_plan */
  /* instance norm: one running statistic per channel, repeated over the examples for eval
     mode as torch does (normalize_ref.c does the same) */
  const int inst = ns_spec_instance_running(spec, x->rank);
  const size_t nchan = x->rank >= 2 ? x->shape[1] : 1, nex = inst ? nstat / nchan : 1;
  ns_running rep;
  memset(&rep, 0, sizeof rep);
  if (inst && ns_running_repeat(run, nchan, nex, &rep, err) != 0) {
    ns_norm_result_free(res);
    return -1;
  }
  const size_t naff = affine_walked(spec, p);
  ns_tensor *r = reuse ? *reuse : NULL;
  int fits = r && r->rank == x->rank && r->dtype == spec->dtype && r->n == x->n && r->data;
  for (int a = 0; fits && a < x->rank; a++) fits = r->shape[a] == x->shape[a];
  if (stats)
    res->y = NULL;
  else if (fits)
    res->y = r, *reuse = NULL; /* its pages are mapped already: nothing to fault in */
  else {
    /* a reuse of another dtype or shape is freed first: the allocator hands its memory
       (mapped, ns_mem_keep_freed) to the new output, which then faults nothing in when it
       is no larger (a dtype key: fp32 to fp16 took 67 ms of faults, 9 ms without) */
    if (r && r != borrowed) ns_tensor_free(r), *reuse = NULL;
    res->y = ns_tensor_new_uninit(x->rank, x->shape, spec->dtype, err); /* all written */
  }
  res->mean = malloc(nstat * sizeof *res->mean);
  res->var = malloc(nstat * sizeof *res->var);
  res->denom = malloc(nstat * sizeof *res->denom);
  res->batch = malloc(nstat * sizeof *res->batch);
  res->degenerate = calloc(nstat, 1);
  double *aff = malloc(2 * naff * sizeof *aff);
  float *afff = malloc(2 * naff * sizeof *afff);
  if ((!stats && !res->y) || !res->mean || !res->var || !res->denom || !res->batch ||
      !res->degenerate || !aff || !afff) {
    free(aff);
    free(afff);
    ns_running_free(&rep);
    if (borrowed && res->y == borrowed) res->y = NULL;
    ns_norm_result_free(res);
    ns_seterr(err, "out of memory normalizing shape %s", sh);
    return -1;
  }
  nk_job j;
  job_make(x, spec, res, eval, inst ? &rep : run, aff, afff, &j);
  /* Streaming stores only into a reused output of 4- or 8-byte values, the caller's or a
   * kept mapping's (recycled): a fresh one was just zeroed by the operating system through
   * the cache, where plain stores find its lines, and 16-byte streaming stores of fp16/bf16
   * measured slower than plain ones either way. A new output in a kept mapping took plain
   * stores, each line read before it was written: RMS of (8192, 2048) fp32 9.0 -> 5.8 ms. */
  j.sq = sq;
  j.stream = !stats && (fits || res->y->recycled) && ns_dtype_size(res->y->dtype) >= 4 &&
             res->y->n * ns_dtype_size(res->y->dtype) >= ((size_t)16 << 20);
  run_parts(&j, pick(ex), ex->threads);
  free(aff);
  free(afff);
  ns_running_free(&rep);
  for (size_t s = 0; s < nstat; s++) res->ndegenerate += res->degenerate[s];
  if (run && !eval &&
      (inst ? ns_running_update_instance(run, res->batch, nex, nchan, -1, err)
            : ns_running_update(run, res->batch, nstat, err)) != 0) {
    if (borrowed && res->y == borrowed) res->y = NULL;
    ns_norm_result_free(res);
    return -1;
  }
  return 0;
}

int ns_normalize_restat(const ns_tensor *x, const ns_spec *spec, const ns_exec *ex,
                        const size_t *stats, size_t k, ns_norm_result *res, char *err) {
  if (!x || !spec || !res || (k && !stats)) {
    ns_seterr(err, "restat: %s is NULL",
              !x      ? "input tensor"
              : !spec ? "spec"
              : !res  ? "result"
                      : "statistic list");
    return -1;
  }
  const ns_norm_plan *p = &res->plan;
  const ns_tensor *y = res->y;
  int same = y && res->mean && res->var && res->denom && res->batch && res->degenerate &&
             y->rank == x->rank && y->n == x->n && p->n == x->n && y->dtype == spec->dtype;
  for (int a = 0; same && a < x->rank; a++) same = y->shape[a] == x->shape[a];
  if (!same) {
    ns_seterr(err, "restat: the result is not a normalization of a tensor of this shape");
    return -1;
  }
  int run = ns_spec_eval_running(spec, x->rank) ||
            (ns_spec_is_batch(spec, x->rank) && spec->running) ||
            ns_spec_instance_running(spec, x->rank);
  if (spec->mask || spec->order == NS_ORDER_TORCH || spec->order == NS_ORDER_NUMPY || run) {
    ns_seterr(err, "restat: %s",
              spec->mask ? "a masked normalization has no kernel"
              : run      ? "running statistics are read or updated as a whole"
                         : "torch's and numpy's orders have no kernel");
    return -1;
  }
  if (ns_spec_check(spec, err) != 0) return -1;
  for (size_t i = 0; i < k; i++)
    if (stats[i] >= p->nstat) {
      ns_seterr(err, "restat: statistic %zu of %zu", stats[i] + 1, p->nstat);
      return -1;
    }
  ns_exec dflt;
  if (!ex) ns_exec_default(&dflt), ex = &dflt;
  const size_t naff = affine_walked(spec, p);
  double *aff = malloc(2 * naff * sizeof *aff + 1);
  float *afff = malloc(2 * naff * sizeof *afff + 1);
  if (!aff || !afff) {
    free(aff);
    free(afff);
    ns_seterr(err, "restat: out of memory");
    return -1;
  }
  nk_job j;
  job_make(x, spec, res, 0, NULL, aff, afff, &j);
  nk_fn fn = pick(ex);
  for (size_t i = 0; i < k;) { /* runs of consecutive statistics go together */
    size_t e = i + 1;
    while (e < k && stats[e] == stats[e - 1] + 1) e++;
    fn(&j, stats[i], stats[e - 1] + 1);
    i = e;
  }
  free(aff);
  free(afff);
  res->ndegenerate = 0;
  for (size_t s = 0; s < p->nstat; s++) res->ndegenerate += res->degenerate[s];
  return 0;
}

int ns_normalize_reuse(const ns_tensor *x, const ns_spec *spec, const ns_exec *ex, ns_tensor *reuse,
                       ns_norm_result *res, char *err) {
  if (reuse && x && (reuse == x || reuse->data == x->data)) {
    if (res) memset(res, 0, sizeof *res);
    ns_seterr(err, "the output to reuse is the input tensor itself");
    return -1; /* the caller keeps x, of course */
  }
  int rc = normalize(x, spec, ex, &reuse, NULL, 0, NULL, res, err);
  ns_tensor_free(reuse); /* not taken: a shape or dtype that does not fit, or an error */
  return rc;
}

int ns_normalize_into(const ns_tensor *x, const ns_spec *spec, const ns_exec *ex, ns_tensor *y,
                      ns_norm_result *res, char *err) {
  if (res) memset(res, 0, sizeof *res);
  if (!x || !spec || !y || !res) {
    ns_seterr(err, "%s", !res ? "no result to fill" : !y ? "no output tensor" : "no input");
    return -1;
  }
  char want[96], got[96];
  int fits = y->rank == x->rank && y->n == x->n && y->dtype == spec->dtype && y->data;
  for (int a = 0; fits && a < x->rank; a++) fits = y->shape[a] == x->shape[a];
  if (!fits) {
    ns_shape_format(x->rank, x->shape, want, sizeof want);
    ns_shape_format(y->rank, y->shape, got, sizeof got);
    ns_seterr(err, "the output must have x's shape %s and the spec's dtype %s, got %s %s", want,
              ns_dtype_name(spec->dtype), got, ns_dtype_name(y->dtype));
    return -1;
  }
  if (y == x || y->data == x->data) {
    ns_seterr(err, "the output is the input tensor itself");
    return -1;
  }
  ns_tensor *r = y;
  int rc = normalize(x, spec, ex, &r, y, 0, NULL, res, err);
  if (rc != 0) return rc;
  if (res->y != y) { /* the reference paths (mask, torch order) made their own: copy it */
    memcpy(y->data, res->y->data, y->n * ns_dtype_size(y->dtype));
    ns_tensor_free(res->y);
  }
  res->y = NULL; /* the output is y, the caller's */
  return 0;
}

void ns_exec_convert(const ns_exec *ex, const ns_tensor *src, ns_tensor *dst, size_t i0,
                     size_t len) {
  ns_exec dflt;
  if (!ex) ns_exec_default(&dflt), ex = &dflt;
#ifdef NK_HAVE_AVX2
  if (src->dtype == NS_FP32 && (dst->dtype == NS_FP16 || dst->dtype == NS_BF16) &&
      pick(ex) == nk_run_avx2) {
    nk_avx2_f32_to_16((const float *)src->data + i0, len, (uint16_t *)dst->data + i0,
                      dst->dtype == NS_BF16);
    return;
  }
#endif
  ns_tensor_convert_range(src, dst, i0, len);
}

int ns_normalize_stats(const ns_tensor *x, const ns_spec *spec, const ns_exec *ex,
                       ns_norm_result *res, double *sq, char *err) {
  return normalize(x, spec, ex, NULL, NULL, 1, sq, res, err);
}

int ns_normalize_exec(const ns_tensor *x, const ns_spec *spec, const ns_exec *ex,
                      ns_norm_result *res, char *err) {
  return ns_normalize_reuse(x, spec, ex, NULL, res, err);
}

/* The default execution (vector instructions where the CPU has them, one thread). */
int ns_normalize(const ns_tensor *x, const ns_spec *spec, ns_norm_result *res, char *err) {
  return ns_normalize_exec(x, spec, NULL, res, err);
}
