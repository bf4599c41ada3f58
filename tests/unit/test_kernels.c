/* test_kernels.c: the normalization kernels (norm_kernels.c) against the kept reference
 * path (ns_normalize_ref), bit for bit, on random specs and shapes; with the portable
 * and the SIMD build and 1, 2 and 3 threads. Then order = "pairwise" against sums and
 * layer norms that numpy computed in float32 (tests/data/pairwise.tsv, written by
 * tests/data/make-pairwise.py), and the moments' variance rounded to acc.
 *
 * A kernel that changed one operation's rounding, summed one statistic out of order,
 * read a wrong element, let threads overlap or left an element of its (not zeroed, or
 * reused and garbage-filled) output unwritten fails the random comparison. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jvp.h"
#include "core/norm_kernels.h"
#include "core/norm_kernels_tanh.h"
#include "core/normalize.h"
#include "core/sha256.h"
#include "tap.h"
#include "testdata.h"

static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void) {
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return rs;
}
static size_t rint_(size_t n) {
  return (size_t)(rnd() % n);
}
static double unif(void) {
  return (double)(rnd() >> 11) * 0x1p-53;
}
static double gauss(void) {
  double s = 0;
  for (int i = 0; i < 6; i++) s += unif();
  return (s - 3.0) * 1.4;
}

/* bitwise equality of doubles, every NaN equal to every NaN */
static int same(double a, double b) {
  if (isnan(a) && isnan(b)) return 1;
  return memcmp(&a, &b, sizeof a) == 0;
}
static int same_arr(const double *a, const double *b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!same(a[i], b[i])) return 0;
  return 1;
}
static int same_y(const ns_tensor *a, const ns_tensor *b, size_t *where) {
  if (a->dtype != b->dtype || a->n != b->n) return 0;
  for (size_t i = 0; i < a->n; i++)
    if (!same(ns_tensor_get(a, i), ns_tensor_get(b, i))) {
      *where = i;
      return 0;
    }
  return 1;
}

static const char *dn(int d) {
  return d < 0 ? "default" : ns_dtype_name((ns_dtype)d);
}

static void describe(char *buf, size_t len, const ns_tensor *x, const ns_spec *s) {
  char sh[96];
  ns_shape_format(x->rank, x->shape, sh, sizeof sh);
  snprintf(buf, len,
           "%s x%s(%s) axes 0x%x groups %d dtype %s acc %s algo %s order %s ddof %d eps_at %s "
           "center %d gamma %zu beta %zu mode %s",
           ns_kind_name(s->kind), sh, ns_dtype_name(x->dtype), s->axes, s->groups,
           ns_dtype_name(s->dtype), dn(s->acc), ns_algo_name(s->algo), ns_order_name(s->order),
           s->ddof, ns_eps_at_name(s->eps_at), s->center, s->gamma ? s->ngamma : 0,
           s->beta ? s->nbeta : 0, ns_mode_name(s->mode));
}

/* One random case: 0 if it matched (or both refused it), 1 if not. */
/* Changes 1-3 random elements of x, then compares ns_normalize_restat of their statistics
 * on a copy of the old result with a fresh normalization of the changed x, and
 * ns_stat_moments_some with ns_stat_moments. 0 when equal. */
static int restat_case(int trial, const ns_tensor *x, const ns_spec *s, const ns_norm_result *old,
                       const char *what) {
  char err[NS_ERRLEN];
  ns_tensor *x2 = ns_tensor_copy(x);
  size_t stats[3], k = 0, nch = 1 + rint_(3);
  for (size_t c = 0; c < nch; c++) {
    size_t i = rint_(x->n), st = ns_norm_plan_stat_of(&old->plan, i), at = k;
    ns_tensor_set(x2, i, rint_(10) == 0 ? NAN : 4.0 * gauss());
    while (at > 0 && stats[at - 1] > st) at--;
    if (at > 0 && stats[at - 1] == st) continue;
    memmove(stats + at + 1, stats + at, (k - at) * sizeof *stats);
    stats[at] = st, k++;
  }
  ns_norm_result fresh, inc;
  ns_exec ex = {(int)rint_(2), 1};
  int bad = 0;
  if (ns_normalize_exec(x, s, &ex, &inc, err) != 0 ||
      ns_normalize_exec(x2, s, &ex, &fresh, err) != 0) {
    tap_diag("trial %d: restat set-up failed: %s", trial, err);
    ns_tensor_free(x2);
    return 1;
  }
  size_t ns = fresh.plan.nstat, where = 0;
  const char *f = NULL;
  if (ns_normalize_restat(x2, s, &ex, stats, k, &inc, err) != 0)
    f = err;
  else if (!same_y(fresh.y, inc.y, &where))
    f = "y";
  else if (!same_arr(fresh.mean, inc.mean, ns) || !same_arr(fresh.var, inc.var, ns) ||
           !same_arr(fresh.denom, inc.denom, ns))
    f = "statistics";
  else if (memcmp(fresh.degenerate, inc.degenerate, ns) != 0 ||
           fresh.ndegenerate != inc.ndegenerate)
    f = "degenerate";
  else if (!same_arr((const double *)fresh.batch, (const double *)inc.batch, 3 * ns))
    f = "batch moments";
  if (!f) {
    double *m2a = calloc(ns, sizeof *m2a), *m2b = calloc(ns, sizeof *m2b);
    double *mua = calloc(ns, sizeof *mua), *mub = calloc(ns, sizeof *mub);
    int center = ns_spec_center(s);
    if (ns_stat_moments(x2, &fresh.plan, center, mua, m2a, err) != 0 ||
        ns_stat_moments_some(x2, &fresh.plan, center, stats, k, mub, m2b, err) != 0)
      f = err;
    for (size_t q = 0; !f && q < k; q++)
      if (!same(mua[stats[q]], mub[stats[q]]) || !same(m2a[stats[q]], m2b[stats[q]]))
        f = "exact moments of the changed statistics";
    for (int th = 2; !f && th <= 3; th++) { /* split over threads: the same bits */
      if (ns_stat_moments_exec(x2, &fresh.plan, center, mub, m2b, th, err) != 0) f = err;
      for (size_t q = 0; !f && q < ns; q++)
        if (!same(mua[q], mub[q]) || !same(m2a[q], m2b[q])) f = "exact moments on threads";
    }
    free(m2a), free(m2b), free(mua), free(mub);
  }
  if (f) {
    tap_diag("trial %d: restat of %zu statistics: %s differs: %s", trial, k, f, what);
    bad = 1;
  }
  ns_norm_result_free(&fresh);
  ns_norm_result_free(&inc);
  ns_tensor_free(x2);
  return bad;
}

/* ns_normalize_stats: the statistics of ref (x under s) without an output, the same bits;
 * and under the exact spec (fp64, two-pass, in order) its m2 (batch m2, or sq for an
 * uncentered kind) is ns_stat_moments', which the explorer's spectrum takes it for. 0 when
 * equal. */
static int stats_case(int trial, const ns_tensor *x, const ns_spec *s, const ns_norm_result *ref,
                      const char *what) {
  char err[NS_ERRLEN];
  size_t ns = ref->plan.nstat;
  double *sq = malloc(ns * sizeof *sq), *mu = malloc(ns * sizeof *mu);
  double *m2 = malloc(ns * sizeof *m2);
  ns_exec ex = {(int)rint_(2), 1 + (int)rint_(3)};
  ns_norm_result st;
  const char *f = NULL;
  if (ns_normalize_stats(x, s, &ex, &st, sq, err) != 0) {
    f = err;
  } else {
    if (st.y || st.plan.nstat != ns)
      f = "y or the plan";
    else if (!same_arr(ref->mean, st.mean, ns) || !same_arr(ref->var, st.var, ns) ||
             !same_arr(ref->denom, st.denom, ns))
      f = "mean, var or denom";
    else if (memcmp(ref->degenerate, st.degenerate, ns) != 0 || ref->ndegenerate != st.ndegenerate)
      f = "degenerate";
    else if (!same_arr((const double *)ref->batch, (const double *)st.batch, 3 * ns))
      f = "batch moments";
    ns_norm_result_free(&st);
  }
  ns_spec e = *s;
  e.dtype = NS_FP64, e.acc = NS_FP64, e.algo = NS_ALGO_TWOPASS, e.order = NS_ORDER_SEQUENTIAL;
  e.mode = NS_MODE_TRAIN, e.gamma = e.beta = NULL, e.ngamma = e.nbeta = 0;
  int center = ns_spec_center(&e);
  if (!f && ns_normalize_stats(x, &e, &ex, &st, sq, err) != 0) f = err;
  if (!f) {
    for (size_t q = 0; q < ns; q++) m2[q] = center ? st.batch[q].m2 : sq[q];
    ns_norm_result_free(&st);
    double *want = sq; /* sq is read: it takes ns_stat_moments' m2 now */
    if (ns_stat_moments(x, &ref->plan, center, mu, want, err) != 0)
      f = err;
    else if (!same_arr(m2, want, ns))
      f = "the exact m2 (ns_stat_moments')";
  }
  if (f) tap_diag("trial %d: normalize_stats: %s differs: %s", trial, f, what);
  free(sq), free(mu), free(m2);
  return f != NULL;
}

static int one_case(int trial, int *refused) {
  char err[NS_ERRLEN], err2[NS_ERRLEN];
  int rank = 1 + (int)rint_(4);
  size_t shape[NS_MAXRANK] = {1, 1, 1, 1}, n = 1;
  int big = rint_(6) == 0;
  for (int a = 0; a < rank; a++) {
    shape[a] = 1 + rint_(big ? 40 : 7);
    if (a == 1 && rint_(2)) shape[a] = 2 * (1 + rint_(4)); /* channels that groups divide */
    n *= shape[a];
  }
  while (n > 40000) { /* keep the reference's per-element lists small */
    for (int a = 0; a < rank; a++) shape[a] = (shape[a] + 1) / 2;
    n = 1;
    for (int a = 0; a < rank; a++) n *= shape[a];
  }
  ns_dtype xdt = rint_(2) ? NS_FP32 : (ns_dtype)rint_(4);
  double *v = malloc(n * sizeof *v);
  double shift = rint_(3) == 0 ? 1000.0 * gauss() : 0.0, scale = rint_(4) == 0 ? 1e-3 : 3.0;
  int constant = rint_(12) == 0;
  for (size_t i = 0; i < n; i++) {
    v[i] = constant ? 2.5 : shift + scale * gauss();
    if (rint_(400) == 0) v[i] = rint_(2) ? INFINITY : NAN;
    if (rint_(300) == 0) v[i] = 0.0;
  }
  ns_tensor *x = ns_tensor_from(rank, shape, xdt, v, err);
  free(v);
  ns_spec s;
  ns_spec_default(&s);
  s.kind = (ns_kind)rint_(5);
  if (rint_(5) == 0) s.axes = (unsigned)(1 + rint_((1u << rank) - 1));
  s.groups = s.kind == NS_KIND_GROUP ? (int)(1 + rint_(4)) : 1;
  s.eps = rint_(4) == 0 ? 0.0 : 1e-5 * (1 + (double)rint_(1000));
  s.eps_at = rint_(3) == 0 ? NS_EPS_STD : NS_EPS_VAR;
  s.ddof = (int)rint_(2);
  s.center = (int)rint_(3) - 1;
  s.dtype = (ns_dtype)rint_(4);
  if (rint_(3) == 0) s.dtype = xdt;
  s.acc = (int)rint_(5) - 1;
  s.algo = (ns_algo)rint_(3);
  s.order = rint_(3) == 0 ? NS_ORDER_PAIRWISE : NS_ORDER_SEQUENTIAL;
  s.mode = rint_(3) == 0 ? NS_MODE_EVAL : NS_MODE_TRAIN;
  /* gamma/beta: absent, one value or one per affine index (learned from a plan) */
  ns_norm_plan p;
  double *gam = NULL, *bet = NULL;
  if (ns_norm_plan_shape(rank, shape, &s, &p, err) == 0) {
    size_t na = p.naffine;
    int gk = (int)rint_(3), bk = (int)rint_(3);
    if (gk) {
      s.ngamma = gk == 1 ? 1 : na;
      gam = malloc(s.ngamma * sizeof *gam);
      for (size_t i = 0; i < s.ngamma; i++) gam[i] = 1.0 + 0.3 * gauss();
      s.gamma = gam;
    }
    if (bk) {
      s.nbeta = bk == 1 ? 1 : na;
      bet = malloc(s.nbeta * sizeof *bet);
      for (size_t i = 0; i < s.nbeta; i++) bet[i] = 0.5 * gauss();
      s.beta = bet;
    }
  }
  /* running statistics: none, fresh, or holding values (for batch kinds) */
  ns_running run0, runa, runb;
  int rk = (int)rint_(3), have_run = 0;
  /* (instance norm keeps one per channel and has no cumulative average) */
  const int inst = s.kind == NS_KIND_INSTANCE;
  if (rk && (ns_spec_is_batch(&s, rank) || inst) &&
      ns_norm_plan_shape(rank, shape, &s, &p, err) == 0) {
    size_t ns0 = rk == 2 ? (inst ? shape[1] : p.nstat) : 0;
    if (ns_running_init(&run0, 0.1, !inst && rint_(4) == 0, rint_(4) == 0, ns0, err) == 0) {
      have_run = 1;
      for (size_t i = 0; i < run0.nstat; i++) {
        run0.mean[i] = gauss();
        run0.var[i] = 0.5 + unif();
      }
    }
  }
  int bad = 0;
  ns_norm_result ref, fast;
  if (have_run) ns_running_copy(&runa, &run0, err), s.running = &runa;
  int rc_ref = ns_normalize_ref(x, &s, &ref, err);
  char what[400];
  describe(what, sizeof what, x, &s);
  static const int thr[] = {1, 2, 3};
  for (int simd = 0; simd < 2 && !bad; simd++) {
    for (int t = 0; t < 3 && !bad; t++) {
      ns_exec ex = {simd, thr[t]};
      if (have_run) ns_running_copy(&runb, &run0, err), s.running = &runb;
      int rc = ns_normalize_exec(x, &s, &ex, &fast, err2);
      if (rc != rc_ref) {
        tap_diag("trial %d: %s: reference rc %d (%s), kernels rc %d (%s)", trial, what, rc_ref,
                 rc_ref ? err : "", rc, rc ? err2 : "");
        bad = 1;
      } else if (rc != 0) {
        if (strcmp(err, err2) != 0) {
          tap_diag("trial %d: messages differ: '%s' vs '%s'", trial, err, err2);
          bad = 1;
        }
        *refused += simd == 0 && t == 0;
      } else {
        size_t ns = ref.plan.nstat, where = 0;
        const char *f = NULL;
        if (fast.plan.nstat != ns || fast.plan.count != ref.plan.count)
          f = "plan";
        else if (!same_y(ref.y, fast.y, &where))
          f = "y";
        else if (!same_arr(ref.mean, fast.mean, ns))
          f = "mean";
        else if (!same_arr(ref.var, fast.var, ns))
          f = "var";
        else if (!same_arr(ref.denom, fast.denom, ns))
          f = "denom";
        else if (memcmp(ref.degenerate, fast.degenerate, ns) != 0 ||
                 ref.ndegenerate != fast.ndegenerate)
          f = "degenerate";
        else if (!same_arr((const double *)ref.batch, (const double *)fast.batch, 3 * ns))
          f = "batch moments";
        else if (have_run && (runa.nstat != runb.nstat || runa.count != runb.count ||
                              !same_arr(runa.mean, runb.mean, runa.nstat) ||
                              !same_arr(runa.var, runb.var, runa.nstat)))
          f = "running statistics";
        if (f) {
          tap_diag("trial %d (simd %d, %d threads): %s differs: %s", trial, simd, thr[t], f, what);
          if (f[0] == 'y')
            tap_diag("  element %zu: reference %.17g kernels %.17g", where,
                     ns_tensor_get(ref.y, where), ns_tensor_get(fast.y, where));
          bad = 1;
        }
        ns_norm_result_free(&fast);
      }
      if (have_run) ns_running_free(&runb);
    }
  }
  /* into an output to reuse, full of garbage: every element must be written; a reuse of
   * the wrong shape or dtype is freed and a new output made (half the trials each) */
  if (rc_ref == 0 && !bad && !have_run) {
    int wrong = trial % 2;
    size_t flat[1] = {x->n + (x->rank == 1)}; /* rank 1: one element too many */
    ns_tensor *old = wrong ? ns_tensor_new(1, flat, rint_(2) ? s.dtype : NS_FP64, err)
                           : ns_tensor_new(x->rank, x->shape, s.dtype, err);
    void *data = old ? old->data : NULL;
    if (old) memset(old->data, 0xa5, old->n * ns_dtype_size(old->dtype));
    ns_exec ex = {1, 2};
    size_t where = 0;
    if (ns_normalize_reuse(x, &s, &ex, old, &fast, err2) != 0) {
      tap_diag("trial %d: reuse failed: %s", trial, err2);
      bad = 1;
    } else {
      if (!same_y(ref.y, fast.y, &where)) {
        tap_diag("trial %d: y written into a reused output differs at %zu: %s", trial, where, what);
        bad = 1;
      }
      if (!wrong && fast.y->data != data) {
        tap_diag("trial %d: an output of the right shape was not reused", trial);
        bad = 1;
      }
      ns_norm_result_free(&fast);
    }
  }
  /* a few elements changed: renormalizing only their statistics (ns_normalize_restat) gives
   * what normalizing the changed x gives, and so do their exact moments */
  if (rc_ref == 0 && !bad && !have_run) bad |= restat_case(trial, x, &s, &ref, what);
  if (rc_ref == 0 && !bad && !have_run) bad |= stats_case(trial, x, &s, &ref, what);
  if (rc_ref == 0) ns_norm_result_free(&ref);
  if (have_run) ns_running_free(&runa), ns_running_free(&run0);
  free(gam);
  free(bet);
  ns_tensor_free(x);
  return bad;
}

/* ---- pairwise against numpy ---- */

static float fixture_value(size_t i, double shift) {
  double v = (double)((uint64_t)i * 2654435761ull % 1000003ull) / 1000003.0 - 0.5;
  return (float)(v * (1.0 + (double)(i % 13) * 100.0) + shift);
}

static void pairwise_fixtures(void) {
  size_t len;
  char *buf = (char *)test_slurp(test_data_path("pairwise.tsv"), &len);
  tap_ok(buf != NULL, "pairwise.tsv is readable");
  if (!buf) return;
  int nmom = 0, nlay = 0, badmom = 0, badlay = 0;
  for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
    char kind[16], hexs[4][64], sha[80];
    size_t nn, rows, cols;
    double shift, eps;
    if (sscanf(line, "moments %zu %lf %63s %63s %63s %63s", &nn, &shift, hexs[0], hexs[1], hexs[2],
               hexs[3]) == 6) {
      double *v = malloc(nn * sizeof *v), want[4];
      for (size_t i = 0; i < nn; i++) v[i] = fixture_value(i, shift);
      for (int k = 0; k < 4; k++) want[k] = strtod(hexs[k], NULL);
      double sum = ns_sum_pairwise(v, nn, NS_FP32);
      ns_moments m;
      ns_moments_compute_ex(v, nn, 1, NS_FP32, NS_FP32, NS_ALGO_TWOPASS, NS_ORDER_PAIRWISE, &m);
      double got[4] = {sum, m.mean, ns_moments_var_acc(&m, 0, NS_FP32),
                       ns_moments_var_acc(&m, 1, NS_FP32)};
      for (int k = 0; k < 4; k++)
        if (!same(got[k], want[k])) {
          tap_diag("moments n=%zu shift %g: value %d is %a, numpy %a", nn, shift, k, got[k],
                   want[k]);
          badmom++;
        }
      free(v);
      nmom++;
    } else if (sscanf(line, "%15s %zu %zu %lf %lf %79s", kind, &rows, &cols, &shift, &eps, sha) ==
                   6 &&
               strcmp(kind, "layer") == 0) {
      char err[NS_ERRLEN];
      size_t shape[2] = {rows, cols}, n = rows * cols;
      double *v = malloc(n * sizeof *v);
      for (size_t i = 0; i < n; i++) v[i] = fixture_value(i, shift);
      ns_tensor *x = ns_tensor_from(2, shape, NS_FP32, v, err);
      free(v);
      ns_spec s;
      ns_spec_default(&s);
      s.dtype = NS_FP32;
      s.eps = eps;
      s.order = NS_ORDER_PAIRWISE;
      for (int simd = 0; simd < 2; simd++) {
        ns_exec ex = {simd, 1};
        ns_norm_result r;
        char hex[65] = "";
        if (ns_normalize_exec(x, &s, &ex, &r, err) == 0) {
          ns_sha256_hex(r.y->data, n * sizeof(float), hex);
          ns_norm_result_free(&r);
        }
        if (strcmp(hex, sha) != 0) {
          tap_diag("layer %zux%zu shift %g simd %d: y differs from numpy's", rows, cols, shift,
                   simd);
          badlay++;
        }
      }
      ns_tensor_free(x);
      nlay++;
    }
  }
  free(buf);
  tap_ok(nmom >= 20 && badmom == 0,
         "pairwise sum, mean, var equal numpy float32 (%d sizes, %d off)", nmom, badmom);
  tap_ok(nlay >= 4 && badlay == 0, "pairwise layer norm equals numpy float32 (%d cases, %d off)",
         nlay, badlay);
}

/* The kernels' inline conversions against dtype.c: every 16-bit pattern, every midpoint
 * between neighbours and one float ulp either side, and random float patterns. */
static int bits_eq16(uint16_t a, uint16_t b) {
  return a == b;
}
static void conversions(void) {
  int bad_h2f = 0, bad_f2h = 0, bad_f2b = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    double want = ns_fp16_value_ref((uint16_t)h);
    float got = nk_h2f((uint16_t)h);
    if (!same((double)got, want) || !signbit(got) != !signbit(want)) bad_h2f++;
    if (!same((double)nk_b2f((uint16_t)h), ns_bf16_value((uint16_t)h))) bad_h2f++;
  }
  for (int fmt = 0; fmt < 2; fmt++)
    for (uint32_t h = 0; h < 65535; h++) {
      double a = fmt ? ns_bf16_value((uint16_t)h) : ns_fp16_value_ref((uint16_t)h);
      double b = fmt ? ns_bf16_value((uint16_t)(h + 1)) : ns_fp16_value_ref((uint16_t)(h + 1));
      float probe[6] = {(float)a, (float)((a + b) / 2), 0, 0, 0, 0};
      probe[2] = nextafterf(probe[1], INFINITY);
      probe[3] = nextafterf(probe[1], -INFINITY);
      probe[4] = nextafterf(probe[0], INFINITY);
      probe[5] = nextafterf(probe[0], -INFINITY);
      for (int k = 0; k < 6; k++) {
        if (fmt == 0 && !bits_eq16(nk_f2h(probe[k]), ns_fp16_bits_ref(probe[k]))) bad_f2h++;
        if (fmt == 1 && !bits_eq16(nk_f2b(probe[k]), ns_bf16_bits_ref(probe[k]))) bad_f2b++;
      }
    }
  for (int k = 0; k < 2000000; k++) {
    uint32_t u = (uint32_t)rnd();
    float f;
    memcpy(&f, &u, sizeof f);
    if (nk_f2h(f) != ns_fp16_bits_ref(f)) bad_f2h++;
    if (nk_f2b(f) != ns_bf16_bits_ref(f)) bad_f2b++;
  }
#ifdef NK_HAVE_AVX2
  __builtin_cpu_init();
  if (strcmp(ns_exec_isa(NULL), "avx2") == 0) { /* the kernels' own check: AVX2 and F16C */
    /* the same probes through the AVX2 conversions, 8 at a time */
    enum { N = 8 * 4096 };
    static float in[N], fh[N], fb[N];
    static uint16_t h[N], b[N];
    int bad_v = 0;
    for (int round = 0; round < 40; round++) {
      for (int k = 0; k < N; k++) {
        uint32_t pick = (uint32_t)rnd();
        uint16_t p16 = (uint16_t)(pick >> 8);
        double a = pick & 1 ? ns_bf16_value(p16) : ns_fp16_value_ref(p16);
        double nx =
            pick & 1 ? ns_bf16_value((uint16_t)(p16 + 1)) : ns_fp16_value_ref((uint16_t)(p16 + 1));
        float f = (float)a;
        switch ((pick >> 1) & 7) {
        case 0:
          break;
        case 1:
          f = (float)((a + nx) / 2);
          break;
        case 2:
          f = nextafterf((float)((a + nx) / 2), INFINITY);
          break;
        case 3:
          f = nextafterf((float)((a + nx) / 2), -INFINITY);
          break;
        default: {
          uint32_t u = (uint32_t)rnd();
          memcpy(&f, &u, sizeof f);
        }
        }
        in[k] = f;
      }
      nk_avx2_convert(in, N, h, b, fh, fb);
      for (int k = 0; k < N; k++) {
        uint16_t wh = ns_fp16_bits_ref(in[k]), wb = ns_bf16_bits_ref(in[k]);
        if (h[k] != wh || b[k] != wb) bad_v++;
        float rh = nk_h2f(h[k]), rb = nk_b2f(b[k]);
        if (memcmp(&rh, &fh[k], sizeof rh) != 0 || memcmp(&rb, &fb[k], sizeof rb) != 0) bad_v++;
      }
    }
    tap_ok(bad_v == 0, "AVX2 conversions equal the scalar ones on %d probes (%d off)", 40 * N,
           bad_v);
    /* ns_exec_convert (the explorer's fp16/bf16 copy of x) gives ns_tensor_convert_range's
       bits, from an odd offset with a tail, with the vector path and without */
    char err[NS_ERRLEN];
    size_t nn[1] = {N};
    ns_tensor *src = ns_tensor_new_uninit(1, nn, NS_FP32, err);
    memcpy(src->data, in, sizeof in);
    int bad_c = 0;
    for (int d = 0; d < 2; d++)
      for (int simd = 0; simd < 2; simd++) {
        ns_dtype to = d ? NS_BF16 : NS_FP16;
        ns_tensor *a = ns_tensor_new(1, nn, to, err), *w = ns_tensor_new(1, nn, to, err);
        ns_exec ex = {simd, 1};
        ns_exec_convert(&ex, src, a, 3, N - 5);
        ns_tensor_convert_range(src, w, 3, N - 5);
        bad_c += memcmp(a->data, w->data, N * 2) != 0;
        ns_tensor_free(a);
        ns_tensor_free(w);
      }
    ns_tensor_free(src);
    tap_ok(bad_c == 0, "ns_exec_convert fp32 -> fp16/bf16 gives convert_range's bits (%d off)",
           bad_c);
  }
#endif
  /* dtype.c's own fast versions (half.h for values that are floats) against its
     references, on doubles that are floats and doubles that are not */
  int bad_dt = 0;
  for (uint32_t h = 0; h < 65536; h++)
    if (!same(ns_fp16_value((uint16_t)h), ns_fp16_value_ref((uint16_t)h)) ||
        !signbit(ns_fp16_value((uint16_t)h)) != !signbit(ns_fp16_value_ref((uint16_t)h)))
      bad_dt++;
  for (int k = 0; k < 2000000; k++) {
    uint64_t u = rnd();
    double d;
    memcpy(&d, &u, sizeof d);
    if (k % 4 == 0) d = (double)(float)d;              /* a float */
    if (k % 4 == 1) d = ldexp((double)(u >> 11), -70); /* a small one in fp16's range */
    if (k % 4 == 2) d = (double)(float)(d * 0x1p-1000);
    if (ns_fp16_bits(d) != ns_fp16_bits_ref(d) || ns_bf16_bits(d) != ns_bf16_bits_ref(d)) bad_dt++;
  }
  tap_ok(bad_dt == 0, "ns_fp16_value/_bits and ns_bf16_bits equal their references (%d off)",
         bad_dt);
  tap_ok(bad_h2f == 0, "fp16/bf16 -> float equals dtype.c for all 65536 patterns (%d off)",
         bad_h2f);
  tap_ok(bad_f2h == 0, "float -> fp16 equals ns_fp16_bits at every midpoint (%d off)", bad_f2h);
  tap_ok(bad_f2b == 0, "float -> bf16 equals ns_bf16_bits at every midpoint (%d off)", bad_f2b);
}

/* ulps between two finite doubles of the same sign (or both zero) */
static double ulps(double a, double b) {
  if (a == b) return 0;
  if (isnan(a) || isnan(b) || (a < 0) != (b < 0)) return INFINITY;
  int64_t ia, ib;
  memcpy(&ia, &a, sizeof ia);
  memcpy(&ib, &b, sizeof ib);
  ia &= INT64_MAX, ib &= INT64_MAX;
  return (double)(ia > ib ? ia - ib : ib - ia);
}

/* ns_tanh_array (vector path) against ns_tanh_fast (the scalar definition), bit for bit,
 * and both against the C library's tanh within NS_TANH_ULPS, over uniform values in
 * [-25, 25], log-spaced magnitudes down to 1e-300, the switch points and special values. */
static void tanh_check(void) {
  enum { N = 1 << 21, NSPEC = 22 };
  double *z = malloc(N * sizeof *z), *hv = malloc(N * sizeof *hv);
  if (!z || !hv) {
    tap_ok(0, "tanh: out of memory");
    free(z), free(hv);
    return;
  }
  const double spec[NSPEC] = {0.0,
                              -0.0,
                              NAN,
                              -NAN,
                              INFINITY,
                              -INFINITY,
                              0x1p-28,
                              -0x1p-28,
                              0x1.fffffffffffffp-29,
                              22.0,
                              -22.0,
                              0x1.6000000000001p+4,
                              0.34657359027997264,
                              0.6931471805599453,
                              1e-300,
                              -5e-324,
                              0x1p-1022,
                              1.0,
                              -1.0,
                              0.5,
                              19.06,
                              0.17328679513998632};
  for (size_t i = 0; i < N; i++) {
    if (i < NSPEC)
      z[i] = spec[i];
    else if (i % 2)
      z[i] = unif() * 50.0 - 25.0;
    else
      z[i] = (rnd() & 1 ? -1 : 1) * pow(10.0, -300.0 * unif() * unif() + 1.4 * unif());
  }
  ns_tanh_array(z, hv, N, 1);
  size_t differ = 0, over = 0, nan_ok = 0;
  double worst = 0, worst_at = 0;
  for (size_t i = 0; i < N; i++) {
    double s = ns_tanh_fast(z[i]), l = tanh(z[i]);
    uint64_t bs, bv;
    memcpy(&bs, &s, sizeof bs);
    memcpy(&bv, &hv[i], sizeof bv);
    differ += bs != bv;
    if (isnan(z[i])) {
      nan_ok += isnan(s) != 0;
      continue;
    }
    double u = ulps(s, l);
    if (u > worst) worst = u, worst_at = z[i];
    over += u > NS_TANH_ULPS;
  }
  tap_ok(differ == 0, "tanh: the %s path gives the scalar path's bits on %d values (%zu differ)",
         ns_tanh_isa(), N, differ);
  tap_ok(over == 0 && nan_ok == 2,
         "tanh: within %d ulps of the C library's tanh on %d values (worst %.0f ulps at %.17g; "
         "%zu over)",
         NS_TANH_ULPS, N, worst, worst_at, over);
  tap_ok(ns_tanh_fast(-0.0) == 0 && signbit(ns_tanh_fast(-0.0)) && ns_tanh_fast(INFINITY) == 1 &&
             ns_tanh_fast(-INFINITY) == -1 && ns_tanh_fast(1e-300) == 1e-300,
         "tanh: -0, +-inf and tiny values exactly");
  ns_tanh_array(z, hv, 7, 0); /* the scalar loop, and a tail shorter than a vector */
  int tail = 1;
  for (size_t i = 0; i < 7; i++) tail &= memcmp(&hv[i], &(double){ns_tanh_fast(z[i])}, 8) == 0;
  tap_ok(tail, "tanh: simd off and a 7-value tail agree with the scalar definition");
  free(z), free(hv);
}

int main(void) {
  conversions();
  tanh_check();
  int bad = 0, refused = 0, trials = 1500;
  for (int t = 0; t < trials; t++) bad += one_case(t, &refused);
  tap_ok(bad == 0,
         "kernels equal the reference bit for bit on %d random cases, and so do renormalizing "
         "the statistics of a few changed elements alone, the statistics without an output "
         "(ns_normalize_stats) and its exact m2 (%d refused by both, %d differ)",
         trials, refused, bad);
  tap_ok(refused < trials / 2, "most random cases are valid specs (%d refused)", refused);

  /* the same large case through 1, 2, 3 threads and both instruction sets */
  {
    char err[NS_ERRLEN];
    size_t shape[4] = {6, 20, 9, 11};
    size_t n = 6 * 20 * 9 * 11;
    double *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = 100.0 + gauss();
    ns_tensor *x = ns_tensor_from(4, shape, NS_FP32, v, err);
    free(v);
    ns_spec s;
    ns_spec_default(&s);
    s.kind = NS_KIND_BATCH;
    s.dtype = NS_FP32;
    ns_norm_result r0, r;
    ns_exec e0 = {0, 1};
    ns_normalize_exec(x, &s, &e0, &r0, err);
    int ok = 1;
    for (int simd = 0; simd < 2; simd++)
      for (int th = 1; th <= 3; th++) {
        ns_exec e = {simd, th};
        size_t w;
        if (ns_normalize_exec(x, &s, &e, &r, err) != 0) {
          ok = 0;
          continue;
        }
        ok &= same_y(r0.y, r.y, &w) && same_arr(r0.mean, r.mean, r0.plan.nstat);
        ns_norm_result_free(&r);
      }
    tap_ok(ok, "batch norm of %zu fp32 values: 1, 2, 3 threads, simd on and off, same bits", n);
    ns_exec e1 = {1, 1};
    tap_diag("instruction set with simd on: %s", ns_exec_isa(&e1));
    ns_norm_result_free(&r0);
    ns_tensor_free(x);
  }

  /* fewer blocks of statistics than threads: a few large statistics split by statistic
   * (norm_kernels.c run_parts), each thread's share a short block; the same bits as one
   * thread and as the reference, for rows from 2 to 7 and a trailing part of 1 */
  {
    char err[NS_ERRLEN];
    int ok = 1, cases = 0;
    for (size_t rows = 2; rows <= 7; rows++)
      for (int dt = 0; dt < 2; dt++) {
        size_t shape[2] = {rows, 70001}, n = rows * 70001;
        double *v = malloc(n * sizeof *v);
        for (size_t i = 0; i < n; i++) v[i] = (double)(i % 7) + gauss();
        ns_tensor *x = ns_tensor_from(2, shape, dt ? NS_FP64 : NS_FP32, v, err);
        free(v);
        ns_spec s;
        ns_spec_default(&s);
        s.kind = rows % 2 ? NS_KIND_RMS : NS_KIND_LAYER;
        s.dtype = x->dtype;
        ns_norm_result rr, r;
        if (ns_normalize_ref(x, &s, &rr, err) != 0) {
          ok = 0;
          tap_diag("reference: %s", err);
          ns_tensor_free(x);
          continue;
        }
        for (int th = 1; th <= 3; th++) {
          ns_exec e = {1, th};
          size_t w;
          if (ns_normalize_exec(x, &s, &e, &r, err) != 0) {
            ok = 0;
            continue;
          }
          int same1 = same_y(rr.y, r.y, &w) && same_arr(rr.mean, r.mean, rows) &&
                      same_arr(rr.denom, r.denom, rows);
          if (!same1)
            tap_diag("%zu rows, %s, %d threads: element %zu differs", rows, ns_dtype_name(x->dtype),
                     th, w);
          ok &= same1;
          cases++;
          ns_norm_result_free(&r);
        }
        ns_norm_result_free(&rr);
        ns_tensor_free(x);
      }
    tap_ok(ok && cases == 36,
           "2 to 7 statistics of 70001 values, fp32 and fp64, on 1, 2, 3 threads: the "
           "reference's bits (%d cases)",
           cases);
  }

  /* fixed geometries through every vector path: statistics side by side in memory (batch
   * over (B, D)), contiguous runs with remainders, groups, explicit axes; every dtype,
   * the default acc and fp64 acc, gamma/beta per channel or per element */
  {
    char err[NS_ERRLEN];
    /* the last two reduce over axis 0 alone: their statistics' levels walk one run, so
       the wide blocks cross rows and channels (two levels when gamma is per channel) */
    struct {
      ns_kind kind;
      int rank;
      size_t shape[4];
      unsigned axes;
      int groups;
    } geo[] = {
        {NS_KIND_BATCH, 2, {37, 24, 1, 1}, 0, 1},   {NS_KIND_BATCH, 2, {9, 19, 1, 1}, 0, 1},
        {NS_KIND_BATCH, 3, {5, 16, 13, 1}, 0, 1},   {NS_KIND_BATCH, 4, {3, 9, 5, 7}, 0, 1},
        {NS_KIND_LAYER, 2, {17, 45, 1, 1}, 0, 1},   {NS_KIND_LAYER, 3, {4, 6, 33, 1}, 0, 1},
        {NS_KIND_RMS, 2, {10, 64, 1, 1}, 0, 1},     {NS_KIND_INSTANCE, 4, {2, 12, 5, 8}, 0, 1},
        {NS_KIND_GROUP, 4, {3, 12, 4, 5}, 0, 3},    {NS_KIND_LAYER, 3, {16, 3, 20, 1}, 0x1, 1},
        {NS_KIND_BATCH, 3, {11, 8, 16, 1}, 0x3, 1}, {NS_KIND_RMS, 4, {2, 16, 3, 3}, 0x9, 1},
        {NS_KIND_BATCH, 4, {6, 4, 8, 8}, 0x1, 1},   {NS_KIND_LAYER, 4, {5, 3, 4, 12}, 0x1, 1},
    };
    int off = 0, cases = 0;
    for (size_t gi = 0; gi < sizeof geo / sizeof *geo; gi++)
      for (int d = 0; d < 4; d++)
        for (int variant = 0; variant < 12; variant++) {
          size_t n = 1;
          for (int a = 0; a < geo[gi].rank; a++) n *= geo[gi].shape[a];
          ns_tensor *x = ns_tensor_new(geo[gi].rank, geo[gi].shape, (ns_dtype)d, err);
          for (size_t i = 0; i < n; i++)
            ns_tensor_set(x, i, 2.0 * gauss() + (variant & 1 ? 40 : 0));
          /* variants 4-11: the same under Welford and under raw sums, uncentered in half */
          ns_spec s;
          ns_spec_default(&s);
          s.kind = geo[gi].kind;
          s.axes = geo[gi].axes;
          s.groups = geo[gi].groups;
          s.dtype = (ns_dtype)d;
          if (variant % 4 == 3) s.acc = NS_FP64;
          if (variant >= 4) s.algo = variant < 8 ? NS_ALGO_WELFORD : NS_ALGO_RAW;
          if (variant >= 4 && variant % 2) s.center = 0;
          ns_norm_plan p;
          double aff[4096];
          if (ns_norm_plan_shape(geo[gi].rank, geo[gi].shape, &s, &p, err) != 0 ||
              p.naffine > 2048) {
            ns_tensor_free(x);
            off++;
            continue;
          }
          for (size_t i = 0; i < 2 * p.naffine; i++) aff[i] = 1.0 + 0.5 * gauss();
          if (variant % 4 >= 2)
            s.gamma = aff, s.ngamma = p.naffine, s.beta = aff + p.naffine, s.nbeta = p.naffine;
          ns_norm_result r0, r;
          if (ns_normalize_ref(x, &s, &r0, err) != 0) {
            off++;
            ns_tensor_free(x);
            continue;
          }
          for (int simd = 0; simd < 2; simd++) {
            ns_exec e = {simd, 1 + simd};
            size_t w = 0;
            if (ns_normalize_exec(x, &s, &e, &r, err) != 0) {
              off++;
              continue;
            }
            if (!same_y(r0.y, r.y, &w) || !same_arr(r0.mean, r.mean, r0.plan.nstat) ||
                !same_arr(r0.denom, r.denom, r0.plan.nstat)) {
              char what[400];
              describe(what, sizeof what, x, &s);
              tap_diag("fixed geometry, simd %d: %s: y differs from element %zu", simd, what, w);
              off++;
            }
            ns_norm_result_free(&r);
          }
          ns_norm_result_free(&r0);
          ns_tensor_free(x);
          cases++;
        }
    tap_ok(
        off == 0,
        "%d fixed geometries x dtypes x affine x algorithms: kernels equal the reference (%d off)",
        cases, off);
  }

  /* reused fp32/fp64 outputs of 16 MB and more take the streaming stores (odd sizes:
   * unaligned runs), and so do new ones in a kept mapping (recycled); new ones in fresh
   * memory and fp16 take plain stores */
  {
    char err[NS_ERRLEN];
    ns_mem_keep_freed();
    static const ns_kind kinds[] = {NS_KIND_BATCH, NS_KIND_LAYER};
    static const ns_dtype dts[] = {NS_FP32, NS_FP64, NS_FP16};
    for (int kd = 0; kd < 2; kd++)
      for (int d = 0; d < 3; d++) {
        size_t shape[4] = {5, 8, dts[d] == NS_FP16 ? 667 : 333, 317};
        size_t n = shape[0] * shape[1] * shape[2] * shape[3];
        ns_tensor *x = ns_tensor_new(4, shape, dts[d], err);
        for (size_t i = 0; i < n; i++) ns_tensor_set(x, i, 3.0 * gauss() + 0.25);
        ns_spec s;
        ns_spec_default(&s);
        s.kind = kinds[kd];
        s.dtype = dts[d];
        double gam[8] = {1, 2, 0.5, -1, 3, 0.25, 1.5, 0.75};
        if (kd == 0) s.gamma = gam, s.ngamma = 8;
        ns_norm_result r0, r;
        ns_exec e = {1, 2};
        size_t w = 0;
        int ok =
            ns_normalize_ref(x, &s, &r0, err) == 0 && ns_normalize_exec(x, &s, &e, &r, err) == 0;
        ok = ok && same_y(r0.y, r.y, &w) && same_arr(r0.denom, r.denom, r0.plan.nstat);
        if (ok) { /* again into that output, garbage-filled */
          ns_tensor *old = r.y;
          r.y = NULL;
          ns_norm_result_free(&r);
          memset(old->data, 0x5a, n * ns_dtype_size(dts[d]));
          ok = ns_normalize_reuse(x, &s, &e, old, &r, err) == 0 && r.y->data == old->data &&
               same_y(r0.y, r.y, &w);
        }
        int recycled = 0, kept = 0;
        if (ok) { /* a new output again: in the mapping the last one leaves, garbage-filled */
          memset(r.y->data, 0xa5, n * ns_dtype_size(dts[d]));
          ns_norm_result_free(&r);
          kept = ns_mem_kept_bytes() > 0; /* none under AddressSanitizer: malloc's memory */
          ok = ns_normalize_exec(x, &s, &e, &r, err) == 0 && same_y(r0.y, r.y, &w);
          recycled = ok && r.y->recycled;
        }
        tap_ok(ok && (recycled || !kept),
               "%s norm of %zu %s values (new, reused and recycled output: %d) equals the "
               "reference",
               ns_kind_name(s.kind), n, ns_dtype_name(dts[d]), recycled);
        if (ok) ns_norm_result_free(&r0), ns_norm_result_free(&r);
        ns_tensor_free(x);
      }
  }

  pairwise_fixtures();

  /* reuse: the input itself is refused (and stays the caller's); NULL is a plain call */
  {
    char err[NS_ERRLEN] = "";
    size_t shape[2] = {3, 8};
    ns_tensor *x = ns_tensor_new(2, shape, NS_FP32, err);
    for (size_t i = 0; i < x->n; i++) ns_tensor_set(x, i, (double)(i % 5));
    ns_spec s;
    ns_spec_default(&s);
    s.dtype = NS_FP32;
    ns_norm_result r;
    int rc = ns_normalize_reuse(x, &s, NULL, x, &r, err);
    tap_ok(rc == -1 && strstr(err, "input") && r.y == NULL && ns_tensor_get(x, 4) == 4.0,
           "reusing the input as output is refused: %s", err);
    rc = ns_normalize_reuse(x, &s, NULL, NULL, &r, err);
    tap_ok(rc == 0 && r.y && r.y != x, "reuse NULL makes a new output");
    if (rc == 0) ns_norm_result_free(&r);
    ns_tensor_free(x);
  }

  /* the plan without lists answers like the one with them */
  {
    char err[NS_ERRLEN];
    int ok = 1;
    for (int k = 0; k < 5; k++) {
      size_t shape[4] = {3, 4, 2, 5};
      ns_spec s;
      ns_spec_default(&s);
      s.kind = (ns_kind)k;
      s.groups = 2;
      ns_norm_plan full, light;
      if (ns_norm_plan_make(4, shape, &s, &full, err) != 0 ||
          ns_norm_plan_shape(4, shape, &s, &light, err) != 0) {
        ok = 0;
        continue;
      }
      ok &= light.members == NULL && light.stat_of == NULL;
      for (size_t i = 0; i < full.n; i++)
        ok &= ns_norm_plan_stat_of(&light, i) == full.stat_of[i] &&
              ns_norm_plan_affine_of(&light, i) == full.affine_of[i];
      ns_norm_plan_free(&full);
    }
    tap_ok(ok, "ns_norm_plan_stat_of / affine_of computed from the shape equal the lists");
  }

  /* numpy: np.array([1, 2, 4], np.float32).var() == 1.5555557012557983 */
  {
    double v[3] = {1, 2, 4};
    ns_moments m;
    ns_moments_compute(v, 3, 1, NS_FP32, NS_FP32, NS_ALGO_TWOPASS, &m);
    tap_ok(ns_moments_var_acc(&m, 0, NS_FP32) == 1.5555557012557983,
           "variance rounded to fp32 is numpy's 1.5555557012557983 (got %.17g)",
           ns_moments_var_acc(&m, 0, NS_FP32));
  }
  return tap_done();
}
