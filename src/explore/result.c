/* result.c: the result record every view reads, computed from the explorer state
 * (ns_explore_compute) or updated part by part through a cache (ns_explore_update); and
 * the one table of the words of its condition codes. See result.h for the contract. */
#include "explore/result.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore/result_priv.h"
#include "core/jacobian.h"
#include "core/jvp.h"
#include "core/split.h"
#include "core/moments.h"
#include "core/rng.h"

/* ---------------------------------------------------------------- compute */

/* What the output part derives from r->norm (a renormalization of some statistics keeps
 * r->norm and recomputes these). */
static void clear_output_derived(ns_result *r) {
  ns_result_clear_parts(r, NS_RP_OUTD);
}

static void clear_closed(ns_result *r) {
  ns_result_clear_parts(r, NS_RP_CLOSED);
}

/* The full-Jacobian fields, what a job fills and ns_jac_job_apply moves into the screen's
 * result (jac_pending, the screen's own, stays). */
static void clear_jac(ns_result *r) {
  ns_result_clear_parts(r, NS_RP_JAC | NS_RP_JACW);
}

static void clear_batch(ns_result *r) {
  ns_result_clear_parts(r, NS_RP_BATCH);
}

static void clear_train(ns_result *r) {
  ns_result_clear_parts(r, NS_RP_TRAIN);
}

void ns_result_free(ns_result *r) {
  if (!r) return;
  ns_result_clear_parts(r, NS_RP_ALL);
  memset(r, 0, sizeof *r);
}

static double max_abs_diff_tensor(const ns_tensor *a, const ns_tensor *b) {
  double m = 0;
  for (size_t i = 0; i < a->n; i++) {
    double d = fabs(ns_tensor_get(a, i) - ns_tensor_get(b, i));
    if (d > m || isnan(d)) m = d;
    if (isnan(m)) break;
  }
  return m;
}

/* Normalizes a B x D fp64 matrix with one of the state's settings (kind batch: down the
 * columns; kind layer: across the rows; no affine, fp64). out: B*D values. */
static int norm_matrix(const double *v, size_t B, size_t D, ns_kind kind, const ns_state *s,
                       ns_mode mode, ns_running *run, double *out, char *err) {
  size_t shape[2] = {B, D};
  ns_tensor *t = ns_tensor_from(2, shape, NS_FP64, v, err);
  if (!t) return -1;
  ns_spec sp;
  ns_spec_default(&sp);
  sp.kind = kind;
  sp.eps = s->eps;
  sp.eps_at = s->eps_at;
  sp.ddof = s->ddof;
  sp.mode = mode;
  sp.running = run;
  ns_norm_result nr;
  memset(&nr, 0, sizeof nr);
  int rc = ns_normalize(t, &sp, &nr, err);
  if (rc == 0) ns_tensor_read(nr.y, out);
  ns_norm_result_free(&nr);
  ns_tensor_free(t);
  return rc;
}

int ns_eig_pair(const ns_eig *list, int n, const int *left, ns_label label, double value,
                double tol, int *relabelled) {
  int same = -1, any = -1;
  for (int i = 0; i < n; i++) {
    if (left && left[i] <= 0) continue;
    double d = fabs(list[i].value - value);
    if (list[i].label == label && (same < 0 || d < fabs(list[same].value - value))) same = i;
    if (any < 0 || d < fabs(list[any].value - value)) any = i;
  }
  /* the same label wins unless it is plainly another eigenvalue and one of another label
   * is close (a constant row has no radial direction: LAPACK calls its 1/s bulk) */
  int pick = same;
  if (same < 0 || (fabs(list[same].value - value) > tol * (1 + fabs(value)) &&
                   fabs(list[any].value - value) < fabs(list[same].value - value)))
    pick = any;
  if (relabelled) *relabelled = pick >= 0 && list[pick].label != label;
  return pick;
}

/* Largest |difference| between two labelled spectra over n eigenvalues, each eigenvalue of
 * a (with its multiplicity) paired with one of b by ns_eig_pair; NaN if either does not
 * account for exactly n values. */
static double eig_disagreement(const ns_eig *a, int na, const ns_eig *b, int nb, size_t n,
                               double tol) {
  int *left = malloc((size_t)(nb > 0 ? nb : 1) * sizeof *left);
  if (!left) return NAN;
  size_t ta = 0, tb = 0;
  for (int j = 0; j < nb; j++) tb += (size_t)(left[j] = b[j].mult);
  for (int i = 0; i < na; i++) ta += (size_t)a[i].mult;
  double m = ta == n && tb == n ? 0 : NAN;
  for (int i = 0; i < na && !isnan(m); i++)
    for (int k = 0; k < a[i].mult; k++) {
      int j = ns_eig_pair(b, nb, left, a[i].label, a[i].value, tol, NULL);
      if (j < 0) {
        m = NAN;
        break;
      }
      left[j]--;
      double d = hypot(a[i].value - b[j].value, a[i].imag - b[j].imag);
      if (d > m || isnan(d)) m = d;
    }
  free(left);
  return m;
}

/* The full Jacobian part into r's jac fields, for x (at most NS_EXPLORE_JAC_FULL_LIMIT
 * elements, no degenerate statistic) under the map on screen spec, whose smallest
 * denominator is smin; closed is the closed form it is compared with. The analytic J and
 * its LAPACK spectrum are those of the exact map (fp64, two-pass) at the values the output
 * sees (x rounded to spec's dtype); the finite differences are of the map on screen
 * (spec's dtype, acc and algo), with a step that dtype resolves. r->jac_tol and
 * r->jac_fd_tol say how close each pair must be. Reads nothing but its arguments (a job
 * runs it in another thread); stops early, jac_done 0, when *cancel becomes nonzero. */
/* Central differences of the map on screen itself: x stored in spec's dtype, each element
 * moved by +-h as that dtype stores it, y from ns_normalize with spec's dtype, acc and algo
 * (core/jacobian.c's ns_jacobian_fd evaluates in fp64). Divides by the step actually taken;
 * -1 with e when the dtype does not resolve h at some element. */
static int fd_of_map(const ns_tensor *x, const ns_spec *spec, double h, double *J, char *e) {
  size_t n = x->n;
  ns_spec s = *spec;
  if (s.mode == NS_MODE_TRAIN) s.running = NULL; /* a Jacobian updates no running stats */
  ns_tensor *xt = ns_tensor_new(x->rank, x->shape, spec->dtype, e);
  double *yp = malloc(n * sizeof *yp), *ym = malloc(n * sizeof *ym);
  int rc = xt && yp && ym ? 0 : -1;
  if (rc && xt) snprintf(e, NS_ERRLEN, "out of memory");
  for (size_t i = 0; rc == 0 && i < n; i++) ns_tensor_set(xt, i, ns_tensor_get(x, i));
  for (size_t j = 0; j < n && rc == 0; j++) {
    double x0 = ns_tensor_get(xt, j), steps[2];
    for (int sg = 0; sg < 2 && rc == 0; sg++) {
      ns_tensor_set(xt, j, sg ? x0 - h : x0 + h);
      steps[sg] = ns_tensor_get(xt, j);
      ns_norm_result nr;
      memset(&nr, 0, sizeof nr);
      rc = ns_normalize(xt, &s, &nr, e);
      if (rc == 0) ns_tensor_read(nr.y, sg ? ym : yp);
      ns_norm_result_free(&nr);
    }
    ns_tensor_set(xt, j, x0);
    double step = steps[0] - steps[1];
    if (rc == 0 && !(step > 0 && isfinite(step))) {
      snprintf(e, NS_ERRLEN, "%s does not resolve the step %.2g at x[%zu] = %g",
               ns_dtype_name(spec->dtype), h, j + 1, x0);
      rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < n; i++) J[i * n + j] = (yp[i] - ym[i]) / step;
  }
  ns_tensor_free(xt);
  free(yp);
  free(ym);
  return rc;
}

static void jac_full(const ns_tensor *x, const ns_spec *spec, double smin, const ns_eig *closed,
                     int nclosed, const atomic_int *cancel, ns_result *r) {
  size_t n = x->n;
  char e[NS_ERRLEN] = "";
  r->jac_done = 0;
  ns_spec exact = *spec;
  exact.dtype = NS_FP64;
  exact.acc = NS_FP64;
  exact.algo = NS_ALGO_TWOPASS;
  ns_dtype acc = ns_spec_acc(spec);
  r->jac_dtype = spec->dtype;
  r->jac_acc = acc;
  r->jac_algo = spec->algo;
  r->jac_exact = spec->dtype != NS_FP64 || acc != NS_FP64 || spec->algo != NS_ALGO_TWOPASS;
  double u =
      ns_dtype_eps(spec->dtype) > ns_dtype_eps(acc) ? ns_dtype_eps(spec->dtype) : ns_dtype_eps(acc);
  double xmax = 1;
  r->jn = n;
  r->J = malloc(n * n * sizeof *r->J);
  r->J_fd = malloc(n * n * sizeof *r->J_fd);
  r->spec_numeric = malloc(n * sizeof *r->spec_numeric);
  r->spec_fd = malloc(n * sizeof *r->spec_fd);
  double *sv = malloc(n * sizeof *sv), *xr = malloc(n * sizeof *xr);
  ns_tensor *x64 = NULL;
  if (!r->J || !r->J_fd || !r->spec_numeric || !r->spec_fd || !sv || !xr) {
    snprintf(r->jac_skip, sizeof r->jac_skip, "Jacobian skipped: out of memory");
    free(sv);
    free(xr);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    xr[i] = ns_round(ns_tensor_get(x, i), spec->dtype);
    if (fabs(xr[i]) > xmax) xmax = fabs(xr[i]);
  }
  const char *stage = "analytic Jacobian";
#define CANCELLED (cancel && atomic_load(cancel))
  if (!(x64 = ns_tensor_from(x->rank, x->shape, NS_FP64, xr, e))) goto fail;
  if (ns_jacobian_analytic(x64, &exact, r->J, e) != 0) goto fail;
  /* Central differences of y = (x - mean)/s, relative to J's scale 1/s: truncation about
   * (h/s)^2, rounding of the inputs about u|x|/(s h). h = (u |x| s^2)^(1/3) balances them,
   * and at least 4 ulps of |x| so the dtype resolves the step. fp64 keeps the fixed step
   * the fp64 checks were written for. s: the smallest denominator of the map on screen. */
  if (!isfinite(smin)) smin = 1;
  if (CANCELLED) goto fail;
  if (r->jac_exact) {
    double h = cbrt(u * xmax * smin * smin);
    if (h < 4 * u * xmax) h = 4 * u * xmax;
    r->jac_fd_h = h;
    r->jac_fd_err = (h / smin) * (h / smin) + u * xmax / (smin * h);
    /* raw moments cancel: E[x^2] - E[x]^2 is off by about u x^2, so y by u x^2 / s^2 and
       the difference quotient by that over h (in J's units 1/s: u x^2 / (s h)) */
    if (spec->algo == NS_ALGO_RAW) r->jac_fd_err += u * xmax * xmax / (smin * h);
  } else {
    r->jac_fd_h = NS_EXPLORE_FD_H;
    r->jac_fd_err = 0;
  }
  r->jac_fd_s = smin;
  stage = "finite-difference Jacobian";
  if (CANCELLED) goto fail;
  if (r->jac_exact ? fd_of_map(x, spec, r->jac_fd_h, r->J_fd, e) != 0
                   : ns_jacobian_fd(x, spec, r->jac_fd_h, r->J_fd, e) != 0)
    goto fail;
  r->jac_fd_diff = ns_max_abs_diff(r->J, r->J_fd, n * n);
  /* the map on screen gives inf or NaN at x +- h (its variance cancelled to 0 there): its
     derivative is undetermined in that dtype, which the panel says; no FD spectrum */
  int fd_finite = 1;
  for (size_t i = 0; i < n * n && fd_finite; i++) fd_finite = isfinite(r->J_fd[i]);
  if (!fd_finite) r->jac_fd_err = r->jac_fd_diff = INFINITY;
  stage = "LAPACK spectrum";
  if (CANCELLED) goto fail;
  r->nnumeric = ns_spectrum_numeric(x64, &exact, r->J, r->spec_numeric, n, e);
  if (r->nnumeric < 0) goto fail;
  stage = "spectrum of the FD Jacobian";
  if (CANCELLED) goto fail;
  r->nfd = fd_finite ? ns_spectrum_numeric(x64, &exact, r->J_fd, r->spec_fd, n, e) : 0;
  if (r->nfd < 0) goto fail;
  r->symmetric = ns_is_symmetric(r->J, n, 1e-12);
  stage = "singular values";
  if (r->symmetric && ns_is_symmetric(r->J, n, 0)) {
    /* exactly symmetric: the singular values are |eigenvalues| (saves an SVD) */
    size_t k = 0;
    for (int i = 0; i < r->nnumeric; i++)
      for (int m = 0; m < r->spec_numeric[i].mult && k < n; m++)
        sv[k++] = fabs(r->spec_numeric[i].value);
    if (k != n) goto fail;
  } else if (ns_svdvals(r->J, n, n, sv, e) != 0) {
    goto fail;
  }
  r->smax = 0;
  for (size_t i = 0; i < n; i++)
    if (sv[i] > r->smax) r->smax = sv[i];
  r->rank_tol = 1e-10 * r->smax;
  r->rank = 0;
  for (size_t i = 0; i < n; i++)
    if (sv[i] > r->rank_tol) r->rank++;
  /* agreement relative to the spectrum's scale; FD of a narrow dtype to its own accuracy
   * (truncation and rounding both about u^(2/3) at the step above) */
  double scale = r->smax > 1 ? r->smax : 1;
  r->jac_tol = 1e-6 * scale;
  /* ten times the expected error, in J's units (1/s) */
  r->jac_fd_tol = r->jac_tol + (r->jac_exact ? 10 * r->jac_fd_err / smin : 0);
  r->eig_closed_vs_numeric =
      nclosed > 0 ? eig_disagreement(closed, nclosed, r->spec_numeric, r->nnumeric, n, 1e-6) : NAN;
  r->eig_numeric_vs_fd =
      eig_disagreement(r->spec_numeric, r->nnumeric, r->spec_fd, r->nfd, n, r->jac_fd_tol / scale);
  r->eig_disagree = r->eig_numeric_vs_fd;
  if (nclosed > 0 && !(r->eig_closed_vs_numeric <= r->eig_disagree))
    r->eig_disagree = r->eig_closed_vs_numeric;
  free(sv);
  free(xr);
  ns_tensor_free(x64);
  r->jac_done = 1;
  return;
fail:
  free(sv);
  free(xr);
  ns_tensor_free(x64);
  if (CANCELLED)
    snprintf(r->jac_skip, sizeof r->jac_skip, "cancelled");
  else
    snprintf(r->jac_skip, sizeof r->jac_skip, "%s failed: %.200s", stage,
             e[0] ? e : "unknown error");
#undef CANCELLED
}

/* Chunks [q0, q1) of x rounded into t (at_dtype's copy), one chunk of doubles at a time. */
typedef struct {
  const ns_tensor *x;
  ns_tensor *t;
  const ns_exec *ex;
} round_job;

static void round_part(void *ctx, size_t q0, size_t q1) {
  const round_job *j = ctx;
  size_t i0 = q0 * NS_EXPLORE_CHUNK, i1 = q1 * NS_EXPLORE_CHUNK;
  if (i1 > j->x->n) i1 = j->x->n;
  ns_exec_convert(j->ex, j->x, j->t, i0, i1 - i0);
}

/* s->x with its values rounded to dtype d: x itself when they already are (its storage is
 * d, or a dtype d holds exactly), else a copy in d. With a cache the copy is c->xd, kept for
 * x's stamp and brought up to date from x's log of cell writes; without one it is a new
 * tensor in *own, freed by the caller. */
static const ns_tensor *at_dtype(ns_explore_cache *c, const ns_state *s, ns_dtype d,
                                 ns_tensor **own, char *err) {
  const ns_tensor *x = s->x;
  *own = NULL;
  if (x->dtype == d || d == NS_FP64 ||
      (d == NS_FP32 && (x->dtype == NS_FP16 || x->dtype == NS_BF16))) {
    if (c) ns_tensor_free(c->xd), c->xd = NULL; /* not needed: give its memory back */
    return x;
  }
  ns_tensor *t = c ? c->xd : NULL;
  int fits = t && t->dtype == d && t->rank == x->rank && t->n == x->n;
  for (int a = 0; fits && a < x->rank; a++) fits = t->shape[a] == x->shape[a];
  if (fits) {
    size_t at[NS_STATE_XLOG];
    int k = c->xd_stamp == s->x_stamp ? 0 : ns_state_x_changes(s, c->xd_stamp, at);
    for (int i = 0; i < k && fits; i++) fits = at[i] < x->n;
    if (fits && k >= 0) { /* the cell writes since: those elements alone */
      for (int i = 0; i < k; i++) ns_tensor_set(t, at[i], ns_tensor_get(x, at[i]));
      c->xd_stamp = s->x_stamp;
      return t;
    }
  }
  if (c) ns_tensor_free(c->xd), c->xd = NULL;
  if (!(t = ns_tensor_new_uninit(x->rank, x->shape, d, err))) return NULL;
  round_job j = {x, t, c ? &c->exec : NULL};
  size_t nck = (x->n + NS_EXPLORE_CHUNK - 1) / NS_EXPLORE_CHUNK;
  ns_split_run(nck, c && nck >= 16 ? c->exec.threads : 1, round_part, &j);
  if (!c) return *own = t;
  c->xd = t;
  c->xd_stamp = s->x_stamp;
  return t;
}

/* The spec of the exact map the spectrum describes: fp64, two-pass, the same statistics. */
static ns_spec exact_spec(const ns_spec *spec) {
  ns_spec e = *spec;
  e.dtype = NS_FP64;
  e.acc = NS_FP64;
  e.algo = NS_ALGO_TWOPASS;
  e.order = NS_ORDER_SEQUENTIAL;
  return e;
}

/* What changed in x since the cache's state: nothing (changed 0), a few of its values
 * (x's log of in-place writes: at most NS_STATE_XLOG) in the chunks marked and, with
 * stat_ok, the statistics stat[0..nstat), or more (chunk NULL: assume everything). */
typedef struct {
  int changed;
  unsigned char *chunk; /* per NS_EXPLORE_CHUNK values: 1 where x changed */
  int stat_ok;
  size_t nstat, stat[NS_STATE_XLOG];
} x_edit;

/* m2 of every statistic of xd under the exact spec ex, as ns_stat_moments_exec computes it
 * (the same sums in the same order: the same bits: stats_case in tests/unit/test_kernels.c) but by
 * the kernels, eight statistics side by side (ns_normalize_stats) where ns_stat_moments_exec runs
 * one chain of additions per statistic: 0, or -1 when the kernels do not take the spec (a mask),
 * and the caller takes ns_stat_moments_exec. */
static int kernel_m2(const ns_tensor *xd, const ns_spec *ex, const ns_norm_plan *p, int center,
                     const ns_exec *exec, double *m2) {
  ns_spec k = *ex;
  k.running = NULL; /* train mode's batch statistics; nothing updated */
  k.gamma = k.beta = NULL, k.ngamma = k.nbeta = 0;
  if (k.mask) return -1;
  ns_norm_result res;
  char e[NS_ERRLEN];
  double *sq = center ? NULL : malloc(p->nstat * sizeof *sq);
  int rc = (!center && !sq) ? -1 : ns_normalize_stats(xd, &k, exec, &res, sq, e);
  if (rc == 0 && res.plan.nstat != p->nstat) rc = -1, ns_norm_result_free(&res);
  if (rc == 0) {
    for (size_t i = 0; i < p->nstat; i++) m2[i] = center ? res.batch[i].m2 : sq[i];
    ns_norm_result_free(&res);
  }
  free(sq);
  return rc;
}

/* The exact m2 of every statistic (train mode), from the cache when x and the grouping
 * are what it was computed for, updated in the statistics a cell edit touched only (c may
 * be NULL: computed into a fresh array, *own). */
static const double *exact_m2(ns_explore_cache *c, const x_edit *ed, const ns_tensor *xd,
                              const ns_spec *spec, const ns_norm_plan *p, double **own, char *err) {
  int center = ns_spec_center(spec);
  *own = NULL;
  if (c && c->m2_valid && c->m2_nstat == p->nstat && ns_spec_same_m2(&c->m2_spec, spec) &&
      c->m2_center == center && c->m2_dtype == (int)xd->dtype) {
    if (!ed->changed) return c->m2;
    if (ed->stat_ok) {
      if (ns_stat_moments_some(xd, p, center, ed->stat, ed->nstat, NULL, c->m2, err) != 0) {
        c->m2_valid = 0;
        return NULL;
      }
      c->m2_gen++;
      return c->m2;
    }
  }
  double *m2 = malloc(p->nstat * sizeof *m2);
  int threads = c ? c->exec.threads : 1;
  if (!m2 || (kernel_m2(xd, spec, p, center, c ? &c->exec : NULL, m2) != 0 &&
              ns_stat_moments_exec(xd, p, center, NULL, m2, threads, err) != 0)) {
    free(m2);
    return NULL;
  }
  if (!c) return *own = m2;
  free(c->m2);
  c->m2 = m2;
  c->m2_gen++;
  c->m2_nstat = p->nstat;
  c->m2_valid = 1;
  c->m2_spec = *spec; /* only its NS_SPEC_M2 fields are read; its pointers are not */
  c->m2_center = center;
  c->m2_dtype = (int)xd->dtype;
  return m2;
}

/* The blocks of the statistics whose closed form is checked (ns_stat_block), kept for a
 * job when the checks are deferred. A block without x (x[q] NULL) is one whose checks the
 * last result already holds, the same bits (kept[q], nkept[q] of them): not run again. */
typedef struct {
  int n;
  size_t stat[NS_EXPLORE_CHECK_STATS];
  ns_tensor *x[NS_EXPLORE_CHECK_STATS];
  ns_eigcheck kept[NS_EXPLORE_CHECK_STATS][3];
  int nkept[NS_EXPLORE_CHECK_STATS];
  ns_spec spec[NS_EXPLORE_CHECK_STATS];
  double g[NS_EXPLORE_CHECK_STATS];
  int threads; /* the cache's: for one block's central differences, or the blocks side by side */
} check_blocks;

static void blocks_free(check_blocks *b) {
  for (int i = 0; i < b->n; i++) ns_tensor_free(b->x[i]);
  memset(b, 0, sizeof *b);
}

/* Runs the checks of the blocks into r's eigchk fields. 0, or -1 with e. */
/* The checks of each block, on a thread of its own when the blocks are large (the two
 * statistics are independent): each writes its own slot, merged in order after. */
typedef struct {
  check_blocks *b;
  int threads; /* each block's: its passes and its central differences' map */
  ns_eigcheck ck[NS_EXPLORE_CHECK_STATS][3];
  int nk[NS_EXPLORE_CHECK_STATS];
  char err[NS_EXPLORE_CHECK_STATS][NS_ERRLEN];
} checks_par;

static void check_part(void *ctx, size_t a, size_t z) {
  checks_par *c = ctx;
  for (size_t q = a; q < z; q++) {
    if (!c->b->x[q]) { /* checked for the last result: the same statistic, the same values */
      memcpy(c->ck[q], c->b->kept[q], sizeof c->ck[q]);
      c->nk[q] = c->b->nkept[q];
      continue;
    }
    c->b->spec[q].gamma = &c->b->g[q]; /* the block's spec points at its own gamma */
    c->nk[q] =
        ns_spectrum_check_exec(c->b->x[q], &c->b->spec[q], 0, c->threads, c->ck[q], 3, c->err[q]);
  }
}

static int run_checks(check_blocks *b, ns_result *r, char *e) {
  r->neigchk = 0;
  r->eigchk_ok = 1;
  r->eigchk_jvp = r->eigchk_fd = 0;
  checks_par c;
  memset(&c, 0, sizeof c);
  c.b = b;
  int big = b->n > 1 && b->x[0] && b->x[1] && b->x[0]->n >= NS_EXPLORE_CHECK_SYNC / 4;
  /* two large blocks: one thread each; else the threads go to one block's differences */
  c.threads = big ? 1 : b->threads;
  ns_split_run((size_t)b->n, big ? b->n : 1, check_part, &c);
  for (int q = 0; q < b->n; q++) {
    int nk = c.nk[q];
    if (nk < 0) {
      snprintf(e, NS_ERRLEN, "%s", c.err[q]);
      return -1;
    }
    memcpy(r->eigchk + r->neigchk, c.ck[q], (size_t)nk * sizeof *c.ck[q]);
    for (int i = 0; i < nk; i++) {
      const ns_eigcheck *ck = &r->eigchk[r->neigchk];
      r->eigchk_stat[r->neigchk++] = b->stat[q];
      double a = ck->jvp_res / ck->jvp_tol, f = ck->fd_res / ck->fd_tol;
      if (!(a <= 1) || !(f <= 1)) r->eigchk_ok = 0;
      if (a > r->eigchk_jvp || isnan(a)) r->eigchk_jvp = a;
      if (f > r->eigchk_fd || isnan(f)) r->eigchk_fd = f;
    }
  }
  return 0;
}

/* The closed-form spectrum at any size and its checks along the labelled eigenvectors
 * (ns_spectrum_check), for the first statistic and the one with the smallest denominator.
 * O(n) when x changed, else O(nstat) plus O(n / last axis + m) for the checks. With defer
 * set and large statistics the checks' blocks go to *later (the job) instead. */
static void closed_part(ns_explore_cache *c, const x_edit *ed, const ns_state *s,
                        const ns_spec *spec, int defer, check_blocks *later, ns_result *r) {
  const ns_tensor *x = s->x;
  char e[NS_ERRLEN] = "";
  /* the last result's checks, when only x's values changed, in known statistics, and the
     checks had landed: a statistic picked again that the edit did not touch keeps its own */
  int can_keep =
      c && c->chk_n > 0 && ed->changed && ed->stat_ok && !r->eigchk_pending && !r->closed_skip[0];
  ns_eigcheck prev_ck[3 * NS_EXPLORE_CHECK_STATS];
  size_t prev_st[3 * NS_EXPLORE_CHECK_STATS], prev_pick[NS_EXPLORE_CHECK_STATS];
  int nprev = 0, nprev_pick = 0;
  if (can_keep) {
    nprev = r->neigchk;
    memcpy(prev_ck, r->eigchk, sizeof prev_ck);
    memcpy(prev_st, r->eigchk_stat, sizeof prev_st);
    nprev_pick = c->chk_n;
    memcpy(prev_pick, c->chk_stat, sizeof prev_pick);
  }
  if (c) c->chk_n = 0, c->last_chk_kept = 0;
  clear_closed(r);
  if (r->x_nan || r->x_inf || r->norm.ndegenerate) {
    snprintf(r->closed_skip, sizeof r->closed_skip, "Jacobian undefined: %s",
             r->norm.ndegenerate ? r->degenerate_why : "x holds NaN or Inf");
    return;
  }
  ns_spec ex = exact_spec(spec);
  ns_tensor *own = NULL;
  double *m2own = NULL;
  check_blocks b;
  memset(&b, 0, sizeof b);
  b.threads = c ? c->exec.threads : 1;
  const ns_tensor *xd = at_dtype(c, s, spec->dtype, &own, e);
  const ns_norm_plan *p = &r->norm.plan;
  /* up to three eigenvalues a statistic, plus the masked zeros (one entry); in train mode
     without a mask every statistic's ones value is one entry for all (ns_spectrum_closed_m2),
     so two a statistic and that one: 6 MB less to map over 262,144 statistics */
  int eval = ns_spec_eval_running(spec, x->rank);
  size_t nstat = p->nstat, per = eval || spec->mask ? 3 : 2;
  size_t cap = x->n < per * nstat + 1 ? x->n : per * nstat + 1;
  const double *m2 = NULL;
  const char *stage = "closed-form spectrum";
  if (!xd) goto fail;
  if (!eval && !(m2 = exact_m2(c, ed, xd, &ex, p, &m2own, e))) goto fail;
  if (!(r->spec_closed = malloc(cap * sizeof *r->spec_closed))) {
    snprintf(e, sizeof e, "out of memory");
    goto fail;
  }
  r->nclosed = ns_spectrum_closed_m2(xd, &ex, m2, r->spec_closed, cap, b.threads, e);
  if (r->nclosed < 0) goto fail;
  double big = 0;
  for (int i = 0; i < r->nclosed; i++) big = fmax(big, fabs(r->spec_closed[i].value));
  for (int i = 0; i < r->nclosed; i++)
    if (fabs(r->spec_closed[i].value) > 1e-10 * big) r->closed_rank += r->spec_closed[i].mult;
  /* the eigenvector checks walk whole statistics: a mask's kept subsets are checked by the
     full J (jacobian.c honours the mask) up to its limit instead */
  if (r->nclosed > 0 && !eval && !spec->mask) {
    /* the first statistic, and the most sensitive one (smallest m2: smallest s) */
    size_t pick[NS_EXPLORE_CHECK_STATS] = {0, 0};
    int npick = 1;
    for (size_t k = 1; k < nstat; k++)
      if (m2[k] < m2[pick[1]]) pick[1] = k;
    if (pick[1] != 0) npick = 2;
    stage = "eigenvector check";
    r->eigchk_m = p->count;
    int ncomp = 0; /* blocks to run */
    for (int q = 0; q < npick; q++) {
      int keep = 0;
      for (int j = 0; j < nprev_pick; j++) keep |= prev_pick[j] == pick[q];
      for (size_t i = 0; keep && i < ed->nstat; i++) keep = ed->stat[i] != pick[q];
      if (keep) {
        int nk = 0;
        for (int i = 0; i < nprev && nk < 3; i++)
          if (prev_st[i] == pick[q]) b.kept[b.n][nk++] = prev_ck[i];
        b.nkept[b.n] = nk;
        b.x[b.n] = NULL;
        b.stat[b.n++] = pick[q];
        c->last_chk_kept++;
        continue;
      }
      int got = ns_stat_block(xd, &ex, pick[q], &b.x[b.n], &b.spec[b.n], &b.g[b.n], e);
      if (got < 0) goto fail;
      if (got) b.stat[b.n++] = pick[q], ncomp++;
    }
    /* the picks the checks are for, kept only when every pick has a block (else the
       result's checks are not one per pick) */
    if (c && b.n == npick) {
      c->chk_n = npick;
      for (int q = 0; q < npick; q++) c->chk_stat[q] = pick[q];
    }
    if (defer && p->count * (size_t)ncomp > NS_EXPLORE_CHECK_SYNC) {
      *later = b; /* the job owns the blocks now */
      memset(&b, 0, sizeof b);
      r->eigchk_pending = 1;
    } else if (run_checks(&b, r, e) != 0) {
      goto fail;
    }
  }
  blocks_free(&b);
  ns_tensor_free(own);
  free(m2own);
  return;
fail:
  if (c) c->chk_n = 0, c->last_chk_kept = 0;
  blocks_free(&b);
  ns_tensor_free(own);
  free(m2own);
  clear_closed(r);
  snprintf(r->closed_skip, sizeof r->closed_skip, "%s failed: %.200s", stage,
           e[0] ? e : "unknown error");
}

/* ---------------------------------------------------------------- the Jacobian job */

struct ns_jac_job {
  int full;         /* the full Jacobian is to be computed (else only the checks) */
  check_blocks blk; /* the eigenvector checks to run (blk.n == 0: none) */
  char check_err[NS_ERRLEN];
  int check_rc;
  ns_tensor *x; /* a copy of the state's x (full only) */
  ns_spec spec; /* the map on screen, its arrays pointing at the job's copies */
  double *gamma, *beta;
  ns_running run; /* eval mode: the running statistics used */
  double smin;
  ns_eig *closed;
  int nclosed;
  unsigned gen; /* the cache's jac_gen it was made for */
  atomic_int cancel;
  int ran;
  ns_result part; /* only the jac fields */
};

void ns_jac_job_free(ns_jac_job *j) {
  if (!j) return;
  blocks_free(&j->blk);
  ns_tensor_free(j->x);
  free(j->gamma);
  free(j->beta);
  ns_running_free(&j->run);
  free(j->closed);
  ns_result_free(&j->part);
  free(j);
}

/* A job with copies of everything jac_full reads (x NULL: no full Jacobian, only the
 * checks of blk, which it takes over); NULL when out of memory. */
static ns_jac_job *job_make(const ns_tensor *x, const ns_spec *spec, double smin,
                            const ns_result *r, check_blocks *blk, unsigned gen) {
  ns_jac_job *j = calloc(1, sizeof *j);
  char e[NS_ERRLEN];
  if (!j) return NULL;
  atomic_init(&j->cancel, 0);
  j->blk = *blk;
  memset(blk, 0, sizeof *blk);
  j->spec = *spec;
  j->smin = smin;
  j->gen = gen;
  j->full = x != NULL;
  if (!x) return j;
  j->x = ns_tensor_copy(x);
  int ok = j->x != NULL;
  if (ok && spec->gamma) {
    ok = (j->gamma = malloc(spec->ngamma * sizeof *j->gamma)) != NULL;
    if (ok) memcpy(j->gamma, spec->gamma, spec->ngamma * sizeof *j->gamma);
    j->spec.gamma = j->gamma;
  }
  if (ok && spec->beta) {
    ok = (j->beta = malloc(spec->nbeta * sizeof *j->beta)) != NULL;
    if (ok) memcpy(j->beta, spec->beta, spec->nbeta * sizeof *j->beta);
    j->spec.beta = j->beta;
  }
  if (ok && spec->running) {
    ok = ns_running_copy(&j->run, spec->running, e) == 0;
    j->spec.running = &j->run;
  }
  if (ok && r->nclosed > 0) {
    ok = (j->closed = malloc((size_t)r->nclosed * sizeof *j->closed)) != NULL;
    if (ok) memcpy(j->closed, r->spec_closed, (size_t)r->nclosed * sizeof *j->closed);
    j->nclosed = r->nclosed;
  }
  if (!ok) {
    ns_jac_job_free(j);
    return NULL;
  }
  return j;
}

void ns_jac_job_run(ns_jac_job *j) {
  if (!j || j->ran) return;
  if (j->blk.n) j->check_rc = run_checks(&j->blk, &j->part, j->check_err);
  if (j->full && !atomic_load(&j->cancel))
    jac_full(j->x, &j->spec, j->smin, j->closed, j->nclosed, &j->cancel, &j->part);
  j->ran = 1;
}

void ns_jac_job_cancel(ns_jac_job *j) {
  if (j) atomic_store(&j->cancel, 1);
}

/* Moves the members of the given parts from src into dst (dst's are freed first): each is
 * copied, and what src owned is then dst's alone. */
/* clang-format off */
#define OWNS_VAL 0
#define OWNS_KEEP 0
#define OWNS_ONE 0
#define OWNS_NAN_ 0
#define OWNS_MEM 1
#define OWNS_TENSOR 1
#define OWNS_NORM 1
#define OWNS_EST 1
#define MOVE_(part, own, type, m, dim)                                                             \
  if (parts & NS_RP_##part) {                                                                      \
    memcpy(&dst->m, &src->m, sizeof dst->m);                                                       \
    if (OWNS_##own) memset(&src->m, 0, sizeof src->m);                                             \
  }
/* clang-format on */
static void move_parts(ns_result *dst, ns_result *src, unsigned parts) {
  ns_result_clear_parts(dst, parts);
  NS_RESULT(MOVE_)
}

int ns_jac_job_apply(ns_jac_job *j, const ns_explore_cache *c, ns_result *r) {
  if (!j || !c || !r || !j->ran || atomic_load(&j->cancel) || !c->valid || j->gen != c->jac_gen ||
      !(r->jac_pending || r->eigchk_pending))
    return 0;
  if (j->blk.n && r->eigchk_pending) {
    r->eigchk_pending = 0;
    if (j->check_rc != 0) { /* as closed_part reports a failed check */
      clear_closed(r);
      snprintf(r->closed_skip, sizeof r->closed_skip, "eigenvector check failed: %.200s",
               j->check_err[0] ? j->check_err : "unknown error");
    } else {
      r->neigchk = j->part.neigchk;
      r->eigchk_ok = j->part.eigchk_ok;
      r->eigchk_jvp = j->part.eigchk_jvp;
      r->eigchk_fd = j->part.eigchk_fd;
      memcpy(r->eigchk, j->part.eigchk, sizeof r->eigchk);
      memcpy(r->eigchk_stat, j->part.eigchk_stat, sizeof r->eigchk_stat);
    }
  }
  if (j->full && r->jac_pending) {
    ns_result_clear_parts(r, NS_RP_JACW);
    move_parts(r, &j->part, NS_RP_JAC);
    ns_vjp_check_jtg(r); /* the backward pass is checked against J^T g once J is here */
  }
  return 1;
}

ns_jac_job *ns_explore_take_job(ns_explore_cache *c) {
  if (!c) return NULL;
  ns_jac_job *j = c->job;
  c->job = NULL;
  return j;
}

/* The spectrum part: the closed form and its checks (closed_part), then the full Jacobian,
 * skipped (with the reason) above NS_EXPLORE_JAC_FULL_LIMIT or where J is undefined, else
 * computed now or, with c->defer_jac, left to a job with the deferred checks. */
static void spectrum_part(ns_explore_cache *c, const x_edit *ed, const ns_state *s,
                          const ns_spec *spec, ns_result *r) {
  const ns_tensor *x = s->x;
  size_t n = x->n;
  int defer = c && c->defer_jac;
  check_blocks later;
  memset(&later, 0, sizeof later);
  clear_jac(r);
  if (c) c->jac_gen++;
  if (c && c->job) { /* a job nobody took is for an older state */
    ns_jac_job_free(c->job);
    c->job = NULL;
  }
  closed_part(c, ed, s, spec, defer, &later, r);
  int full = 0;
  double smin = INFINITY;
  if (n > NS_EXPLORE_JAC_FULL_LIMIT) {
    snprintf(r->jac_skip, sizeof r->jac_skip, "full Jacobian not formed: %zu elements, limit %d", n,
             NS_EXPLORE_JAC_FULL_LIMIT);
  } else if (r->x_nan || r->x_inf || r->norm.ndegenerate) {
    snprintf(r->jac_skip, sizeof r->jac_skip, "Jacobian undefined: %s",
             r->norm.ndegenerate ? r->degenerate_why : "x holds NaN or Inf");
  } else {
    full = 1;
    for (size_t k = 0; r->norm.denom && k < r->norm.plan.nstat; k++)
      if (r->norm.denom[k] > 0 && r->norm.denom[k] < smin) smin = r->norm.denom[k];
  }
  if (defer && (full || later.n)) {
    c->job = job_make(full ? x : NULL, spec, smin, r, &later, c->jac_gen);
    if (c->job) {
      if (full) {
        r->jac_pending = 1;
        snprintf(r->jac_skip, sizeof r->jac_skip, "computing the full Jacobian...");
      }
      return;
    }
    /* out of memory for the copies: compute everything here */
    if (later.n && run_checks(&later, r, r->closed_skip) != 0) clear_closed(r);
    r->eigchk_pending = 0;
  }
  blocks_free(&later);
  if (full) jac_full(x, spec, smin, r->spec_closed, r->nclosed, NULL, r);
}

static void batch_probe(const ns_state *s, ns_result *r, char *err, int *rc) {
  size_t B = s->batch->shape[0], D = s->batch->shape[1];
  r->B = B;
  r->D = D;
  r->bn = malloc(B * D * sizeof *r->bn);
  r->ln = malloc(B * D * sizeof *r->ln);
  r->target_now = malloc(D * sizeof *r->target_now);
  r->target_base = malloc(D * sizeof *r->target_base);
  r->flip = calloc(D, 1);
  double *v = malloc(B * D * sizeof *v), *yb = malloc(B * D * sizeof *yb);
  if (!r->bn || !r->ln || !r->target_now || !r->target_base || !r->flip || !v || !yb) {
    *rc = ns_seterr(err, "batch panel: out of memory");
    goto out;
  }
  ns_tensor_read(s->batch, v);
  if (norm_matrix(v, B, D, NS_KIND_BATCH, s, NS_MODE_TRAIN, NULL, r->bn, err) != 0 ||
      norm_matrix(v, B, D, NS_KIND_LAYER, s, NS_MODE_TRAIN, NULL, r->ln, err) != 0) {
    *rc = -1;
    goto out;
  }
  size_t t = (size_t)s->target - 1, c = (size_t)s->companion - 1;
  for (size_t j = 0; j < D; j++) v[c * D + j] = s->baseline[j];
  if (norm_matrix(v, B, D, NS_KIND_BATCH, s, NS_MODE_TRAIN, NULL, yb, err) != 0) {
    *rc = -1;
    goto out;
  }
  r->nflip = 0;
  for (size_t j = 0; j < D; j++) {
    r->target_now[j] = r->bn[t * D + j];
    r->target_base[j] = yb[t * D + j];
    r->flip[j] = (r->target_now[j] > 0 && r->target_base[j] < 0) ||
                 (r->target_now[j] < 0 && r->target_base[j] > 0);
    r->nflip += r->flip[j];
  }
out:
  free(v);
  free(yb);
}

/* Per-feature population moments of a rows x D matrix, fp64 two-pass. */
static void column_moments(const double *v, size_t rows, size_t D, ns_moments *m) {
  for (size_t j = 0; j < D; j++)
    ns_moments_compute(v + j, rows, D, NS_FP64, NS_FP64, NS_ALGO_TWOPASS, &m[j]);
}

/* Max |a - b| over n values (NaN propagates). */
static double max_gap(const double *a, const double *b, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++) {
    double d = fabs(a[i] - b[i]);
    if (d > m || isnan(d)) m = d;
  }
  return m;
}

/* Training batch b into bx (bs x D): the user's batch itself (one), bs of its rows drawn
 * with replacement (bv), or bs draws of N(train_loc, train_scale). */
static void training_batch(const ns_state *s, ns_rng *g, const double *bv, size_t B, size_t D,
                           size_t bs, int one, double *bx) {
  if (one) {
    memcpy(bx, bv, B * D * sizeof *bx);
  } else if (bv) {
    for (size_t i = 0; i < bs; i++) { /* a row of the user's batch, with replacement */
      size_t row = (size_t)(ns_rng_random(g) * (double)B);
      if (row >= B) row = B - 1;
      memcpy(bx + i * D, bv + row * D, D * sizeof *bx);
    }
  } else {
    for (size_t i = 0; i < bs; i++) bx[i] = ns_rng_normal(g, s->train_loc, s->train_scale);
  }
}

/* The three estimators of r from the running statistics runs: their statistics, the eval
 * batch normalized with them, its gap to the own-statistics output and (ytrue: the rng
 * source) to the exact distribution's. 0, or -1 with err. */
static int estimators(const ns_state *s, ns_running runs[3], const double *ytrue, ns_result *r,
                      char *err) {
  size_t D = r->train_d, E = r->eval_n;
  for (int k = 0; k < 3; k++) {
    ns_estimator *est = &r->est[k];
    est->mean = malloc(D * sizeof *est->mean);
    est->var = malloc(D * sizeof *est->var);
    est->y = malloc(E * D * sizeof *est->y);
    if (!est->mean || !est->var || !est->y) {
      ns_seterr(err, "train/eval panel: out of memory");
      return -1;
    }
    memcpy(est->mean, runs[k].mean, D * sizeof *est->mean);
    memcpy(est->var, runs[k].var, D * sizeof *est->var);
    if (norm_matrix(r->eval_x, E, D, NS_KIND_BATCH, s, NS_MODE_EVAL, &runs[k], est->y, err) != 0)
      return -1;
    est->gap = max_gap(est->y, r->eval_y, E * D);
    r->est_gap[k] = ytrue ? max_gap(est->y, ytrue, E) : NAN;
  }
  return 0;
}

/* Train/eval panel. The training data: rng, train_batches batches of batch_size draws of
 * normal(train_loc, train_scale), then an evaluation batch of eval_size (or batch_size)
 * draws of normal(eval_loc, eval_scale) from the same stream; resample, batches of rows
 * drawn from the batch matrix, evaluated on the matrix; batch, one step on the batch
 * matrix as it is (a fresh module's first update), evaluated on the same matrix. */
static int train_probe(const ns_state *s, ns_result *r, char *err) {
  ns_rng g;
  ns_rng_seed_u64(&g, s->seed);
  int rng = s->train_source == NS_SOURCE_RNG, one = s->train_source == NS_SOURCE_BATCH;
  size_t B = s->batch->shape[0];
  size_t D = rng ? 1 : s->batch->shape[1];
  size_t bs = one ? B : (size_t)s->batch_size, nb = one ? 1 : (size_t)s->train_batches;
  size_t E = !rng ? B : s->eval_size > 0 ? (size_t)s->eval_size : (size_t)s->batch_size;
  double eloc = isnan(s->eval_loc) ? s->train_loc : s->eval_loc;
  double escale = isnan(s->eval_scale) ? s->train_scale : s->eval_scale;
  r->train_d = D;
  r->train_n = nb * bs;
  r->eval_n = E;
  r->eval_loc_used = rng ? eloc : NAN;
  r->eval_scale_used = rng ? escale : NAN;
  double *bv = NULL, *bx = malloc(bs * D * sizeof *bx), *ytrue = NULL;
  ns_moments *bm = malloc(D * sizeof *bm);
  ns_running runs[3], truth;
  memset(runs, 0, sizeof runs);
  memset(&truth, 0, sizeof truth);
  r->eval_x = malloc(E * D * sizeof *r->eval_x);
  r->eval_y = malloc(E * D * sizeof *r->eval_y);
  r->eval_mean = malloc(D * sizeof *r->eval_mean);
  r->eval_var = malloc(D * sizeof *r->eval_var);
  if (!rng) bv = malloc(B * D * sizeof *bv);
  if (rng) ytrue = malloc(E * sizeof *ytrue);
  int rc = -1;
  if (!bx || !bm || !r->eval_x || !r->eval_y || !r->eval_mean || !r->eval_var || (!rng && !bv) ||
      (rng && !ytrue)) {
    ns_seterr(err, "train/eval panel: out of memory");
    goto out;
  }
  if (bv) ns_tensor_read(s->batch, bv);
  static const char *const names[3] = {"momentum", "cumulative", "exact"};
  for (int k = 0; k < 3; k++) {
    r->trace_mean[k] = malloc(nb * sizeof *r->trace_mean[k]);
    r->trace_var[k] = malloc(nb * sizeof *r->trace_var[k]);
    if (!r->trace_mean[k] || !r->trace_var[k]) {
      ns_seterr(err, "train/eval panel: out of memory");
      goto out;
    }
  }
  for (int k = 0; k < 3; k++) {
    r->est[k].name = names[k];
    if (ns_running_init(&runs[k], s->momentum, k == 1, k == 2, D, err) != 0) goto out;
  }
  for (size_t b = 0; b < nb; b++) {
    training_batch(s, &g, bv, B, D, bs, one, bx);
    column_moments(bx, bs, D, bm);
    for (int k = 0; k < 3; k++) {
      if (ns_running_update(&runs[k], bm, D, err) != 0) goto out;
      r->trace_mean[k][b] = runs[k].mean[0];
      r->trace_var[k][b] = runs[k].var[0];
    }
  }
  if (bv)
    memcpy(r->eval_x, bv, E * D * sizeof *bv);
  else
    for (size_t i = 0; i < E; i++) r->eval_x[i] = ns_rng_normal(&g, eloc, escale);
  column_moments(r->eval_x, E, D, bm);
  for (size_t j = 0; j < D; j++) {
    r->eval_mean[j] = bm[j].mean;
    r->eval_var[j] = ns_moments_var(&bm[j], 0);
  }
  if (norm_matrix(r->eval_x, E, D, NS_KIND_BATCH, s, NS_MODE_TRAIN, NULL, r->eval_y, err) != 0)
    goto out;
  if (rng) { /* the exact training distribution as running statistics */
    if (ns_running_init(&truth, s->momentum, 0, 0, 1, err) != 0) goto out;
    truth.mean[0] = s->train_loc;
    truth.var[0] = s->train_scale * s->train_scale;
    if (norm_matrix(r->eval_x, E, 1, NS_KIND_BATCH, s, NS_MODE_EVAL, &truth, ytrue, err) != 0)
      goto out;
    r->shift_gap = max_gap(ytrue, r->eval_y, E);
  } else {
    r->shift_gap = NAN;
  }
  if (estimators(s, runs, ytrue, r, err) != 0) goto out;
  r->est_active = s->cumulative ? 1 : 0;
  rc = 0;
out:
  for (int k = 0; k < 3; k++) ns_running_free(&runs[k]);
  ns_running_free(&truth);
  free(bx);
  free(bv);
  free(bm);
  free(ytrue);
  return rc;
}

static void precision_probe(const double *xv, size_t n, const ns_state *s, ns_result *r) {
  ns_spec sp;
  ns_state_spec(s, &sp);
  ns_dtype acc = ns_spec_acc(&sp);
  ns_moments m;
  ns_moments_compute(xv, n, 1, NS_FP64, NS_FP64, NS_ALGO_TWOPASS, &m);
  r->var_ref = ns_moments_var(&m, 0);
  r->prec_dtype = s->dtype;
  r->prec_acc = acc;
  double avail = -log10(ns_dtype_eps(acc));
  for (int a = 0; a < 3; a++) {
    ns_moments_compute(xv, n, 1, s->dtype, acc, (ns_algo)a, &m);
    double v = ns_moments_var(&m, 0);
    double rel = r->var_ref != 0 ? fabs(v - r->var_ref) / fabs(r->var_ref) : fabs(v);
    double dig = rel == 0 ? NS_EXPLORE_DIGITS_CAP : -log10(rel);
    if (isnan(dig) || dig < 0) dig = 0;
    if (dig > NS_EXPLORE_DIGITS_CAP) dig = NS_EXPLORE_DIGITS_CAP;
    r->var_algo[a] = v;
    r->var_relerr[a] = rel;
    r->var_digits[a] = dig;
    r->var_lost[a] = avail - dig > 0 ? avail - dig : 0;
  }
}

/* The slice of x the probes use (r's probe_axis, probe_k, probe_n): all of x up to
 * NS_EXPLORE_PROBE_LIMIT elements, else the first probe_k entries along one axis (at least
 * one; a vector's first values). The axis is the first that no statistic reduces over
 * (axis 1 of a grouped kind is reduced in part), so every statistic of the slice is one of
 * x's, whole: over axis 0 of a (64, 256, 32, 32) file a slice along axis 0 left each
 * statistic one element, whose probes could not fail. Axis 0 when every axis is reduced (a
 * statistic cut short), with a mask (which the slice keeps leading rows of), or when eval
 * mode reads running statistics (per channel: no statistic of the data to keep whole). */
static void probe_geometry(const ns_tensor *x, const ns_spec *spec, const ns_norm_plan *p,
                           ns_result *r) {
  r->probe_axis = 0;
  r->probe_k = x->shape[0];
  r->probe_n = x->n;
  if (x->n <= NS_EXPLORE_PROBE_LIMIT) return;
  if (x->rank == 1) {
    r->probe_k = r->probe_n = NS_EXPLORE_PROBE_LIMIT;
    return;
  }
  int axis = 0;
  if (!spec->mask && !spec->running) {
    int grouped = ns_kinds[spec->kind].grouped;
    for (axis = 0; axis < x->rank; axis++)
      if (!((p->axes >> axis) & 1u) && !(grouped && axis == 1)) break;
    if (axis == x->rank) axis = 0;
  }
  size_t per = x->n / x->shape[axis], k = NS_EXPLORE_PROBE_LIMIT / per;
  if (k < 1) k = 1;
  if (k > x->shape[axis]) k = x->shape[axis];
  r->probe_axis = axis;
  r->probe_k = k;
  r->probe_n = k * per;
}

/* The elements of x in one entry of axis a: the product of the extents after it. */
static size_t probe_inner(const ns_tensor *x, int a) {
  size_t in = 1;
  for (int k = a + 1; k < x->rank; k++) in *= x->shape[k];
  return in;
}

size_t ns_probe_index(const ns_result *r, const ns_tensor *x, size_t i) {
  if (r->probe_n >= x->n) return i < x->n ? i : NS_PROBE_NONE;
  if (x->rank == 1) return i < r->probe_n ? i : NS_PROBE_NONE;
  const size_t in = probe_inner(x, r->probe_axis), ext = x->shape[r->probe_axis];
  size_t c = i / in % ext, outer = i / (in * ext);
  if (i >= x->n || c >= r->probe_k) return NS_PROBE_NONE;
  return (outer * r->probe_k + c) * in + i % in;
}

size_t ns_probe_elem(const ns_result *r, const ns_tensor *x, size_t j) {
  if (r->probe_n >= x->n || x->rank == 1) return j;
  const size_t in = probe_inner(x, r->probe_axis), ext = x->shape[r->probe_axis];
  size_t c = j / in % r->probe_k, outer = j / (in * r->probe_k);
  return (outer * ext + c) * in + j % in;
}

/* The values of the probe slice, in its own row-major order: a run of probe_k entries of
 * axis probe_axis for each index of the axes before it. NULL with err when out of memory. */
static double *probe_values(const ns_tensor *x, const ns_result *r, char *err) {
  double *v = malloc(r->probe_n * sizeof *v);
  if (!v) {
    ns_seterr(err, "out of memory reading x");
    return NULL;
  }
  if (r->probe_n >= x->n || x->rank == 1) {
    ns_tensor_read_range(x, 0, r->probe_n, v);
    return v;
  }
  const size_t in = probe_inner(x, r->probe_axis), run = r->probe_k * in;
  const size_t stride = x->shape[r->probe_axis] * in;
  for (size_t o = 0; o < r->probe_n / run; o++)
    ns_tensor_read_range(x, o * stride, run, v + o * run);
  return v;
}

/* a*x + b on the probe slice, stored in dt: the normalization rounds its input to its
 * dtype first, so storing the values already rounded to it gives the same bits and lets
 * the kernels take their path for that dtype (an fp64 copy of fp32 values took the generic
 * path, ten times slower). */
static ns_tensor *affine_copy(const ns_tensor *x, const ns_result *r, double a, double b,
                              ns_dtype dt, char *err) {
  size_t shape[NS_MAXRANK];
  for (int k = 0; k < x->rank; k++) shape[k] = x->shape[k];
  shape[r->probe_axis] = r->probe_k;
  double *v = probe_values(x, r, err);
  if (!v) return NULL;
  for (size_t i = 0; i < r->probe_n; i++) v[i] = a * v[i] + b;
  ns_tensor *t = ns_tensor_from(x->rank, shape, dt, v, err);
  free(v);
  return t;
}

/* 1 when the state's normalization of x reads running statistics: eval mode of a batch
 * kind, which includes explicit axes over axis 1 (ns_spec_eval_running). */
static int state_eval_running(const ns_state *s) {
  ns_spec spec;
  ns_state_spec(s, &spec);
  return ns_spec_eval_running(&spec, s->x->rank);
}

/* The parts of a result computed for state a that differ for state b: the union of the
 * table's stale masks of the fields that differ, plus the rules that cross panels. */
static unsigned stale_parts(ns_fieldset diff, const ns_state *b) {
  unsigned m = 0;
  for (int f = 0; f < NS_F_COUNT; f++)
    if (diff & NS_FIELDBIT(f)) m |= ns_fields[f].stale;
  /* the train panel draws from the batch when that is its source */
  if ((diff & NS_FIELDBIT(NS_F_BATCH)) && b->train_source != NS_SOURCE_RNG) m |= NS_PART_TRAIN;
  /* eval-mode batch norm of x reads the train panel's running statistics */
  if ((m & NS_PART_TRAIN) && state_eval_running(b)) m |= NS_PART_OUTPUT;
  if (m & NS_PART_OUTPUT) m |= NS_PART_SHIFT | NS_PART_SCALE | NS_PART_JAC;
  if (m & (NS_PART_OUTPUT | NS_PART_INPUT)) m |= NS_PART_RESID | NS_PART_VJP;
  if (m & NS_PART_JAC) m |= NS_PART_VJP; /* it is checked against J^T g */
  return m;
}

/* Values t[i0 .. i0+len) as doubles into buf: the big tensors are read in chunks of this
 * many, so no pass needs a double copy of all of them (128 MB for a 16M-element x). */
enum { READ_CHUNK = NS_EXPLORE_CHUNK };
static void read_range(const ns_tensor *t, size_t i0, size_t len, double *buf) {
  ns_tensor_read_range(t, i0, len, buf);
}

/* Sums for the panels' display statistics over a chunk: eight partial sums (one add chain
 * each, so the adds overlap instead of waiting on one another), combined pairwise. sq: of
 * squares of v - c; else of v - c. The sums are eight locals, not an array: with p[8] the
 * compiler stored and reloaded them at every step, which made an eps key on a 64 MB tensor
 * spend a third of its time here. One text for doubles and for fp32 values read straight
 * from the tensor (the same sums, bit for bit, without a copy into a buffer). */
#define NS_DEV(e) ((double)(e)-c)
#define NS_DEV2(e) (((double)(e)-c) * ((double)(e)-c))
#define NS_SUM8(F)                                                                                 \
  for (; a + 8 <= len; a += 8) {                                                                   \
    const T *w = v + a;                                                                            \
    p0 += F(w[0]), p1 += F(w[1]), p2 += F(w[2]), p3 += F(w[3]);                                    \
    p4 += F(w[4]), p5 += F(w[5]), p6 += F(w[6]), p7 += F(w[7]);                                    \
  }
#define NS_PARTIAL_SUMS(name, T_)                                                                  \
  static double name(const T_ *v, size_t len, double c, int sq) {                                  \
    typedef T_ T;                                                                                  \
    double p0 = 0, p1 = 0, p2 = 0, p3 = 0, p4 = 0, p5 = 0, p6 = 0, p7 = 0;                         \
    size_t a = 0;                                                                                  \
    if (sq)                                                                                        \
      NS_SUM8(NS_DEV2)                                                                             \
    else                                                                                           \
      NS_SUM8(NS_DEV)                                                                              \
    for (; a < len; a++) p0 += sq ? NS_DEV2(v[a]) : NS_DEV(v[a]);                                  \
    return ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7));                                      \
  }
NS_PARTIAL_SUMS(chunk_sum, double)
NS_PARTIAL_SUMS(chunk_sum_f32, float)
#undef NS_PARTIAL_SUMS
#undef NS_SUM8
#undef NS_DEV2
#undef NS_DEV

/* One value into the input scan: NaN and Inf counts, min and max (NaN compares false and
 * is left out), in select form so the loops that call it vectorize. */
static inline void scan_value(double d, size_t *nnan, size_t *ninf, double *mn, double *mx) {
  *nnan += d != d;
  *ninf += d == INFINITY || d == -INFINITY;
  *mn = d < *mn ? d : *mn;
  *mx = d > *mx ? d : *mx;
}

/* The values of chunk q of t (READ_CHUNK of them, the last one shorter). */
static size_t chunk_len(size_t n, size_t q) {
  size_t i0 = q * READ_CHUNK;
  return n - i0 < READ_CHUNK ? n - i0 : READ_CHUNK;
}

/* One chunk's summary; scan: also min, max, the NaN/Inf counts and the sum of squares
 * (x's chunks), else only sum and m2 (y's). */
static void chunk_summary(const ns_tensor *t, size_t q, int scan, double *buf, ns_chunk_sum *ck) {
  size_t i0 = q * READ_CHUNK, len = chunk_len(t->n, q);
  double mn = INFINITY, mx = -INFINITY;
  size_t nnan = 0, ninf = 0;
  /* fp32 is summed straight from the tensor; other dtypes are read into buf once for
     every pass below (fp64 copied, fp16/bf16 converted) */
  const int direct = t->dtype == NS_FP32;
  if (!direct) read_range(t, i0, len, buf);
  if (scan) {
    /* min, max (NaN compares false: left out) and the NaN/Inf counts, in locals and in
       select form so the loop vectorizes; fp32 values compare as their doubles do */
    if (direct) {
      const float *v = (const float *)t->data + i0;
      for (size_t a = 0; a < len; a++) scan_value(v[a], &nnan, &ninf, &mn, &mx);
    } else {
      for (size_t a = 0; a < len; a++) scan_value(buf[a], &nnan, &ninf, &mn, &mx);
    }
  }
  ck->mn = mn, ck->mx = mx, ck->nnan = nnan, ck->ninf = ninf;
  const float *f = direct ? (const float *)t->data + i0 : NULL;
  ck->sum = f ? chunk_sum_f32(f, len, 0, 0) : chunk_sum(buf, len, 0, 0);
  double c = ck->sum / (double)len;
  ck->m2 = f ? chunk_sum_f32(f, len, c, 1) : chunk_sum(buf, len, c, 1);
  ck->sq = !scan ? 0 : f ? chunk_sum_f32(f, len, 0, 1) : chunk_sum(buf, len, 0, 1);
}

typedef struct {
  const ns_tensor *t;
  int scan;
  const unsigned char *dirty;
  ns_chunk_sum *ck;
} chunk_job;

static void chunk_part(void *ctx, size_t q0, size_t q1) {
  const chunk_job *j = ctx;
  double buf[READ_CHUNK];
  for (size_t q = q0; q < q1; q++)
    if (!j->dirty || j->dirty[q]) chunk_summary(j->t, q, j->scan, buf, &j->ck[q]);
}

/* Summaries of t's chunks into ck: those marked in dirty, or all (dirty NULL), on up to
 * `threads` threads when there are many (each chunk's sums are its own: the same bits). */
static void chunk_summaries(const ns_tensor *t, int scan, const unsigned char *dirty, int threads,
                            ns_chunk_sum *ck) {
  size_t nck = (t->n + READ_CHUNK - 1) / READ_CHUNK;
  chunk_job j = {t, scan, dirty, ck};
  ns_split_run(nck, dirty || nck < 16 ? 1 : threads, chunk_part, &j);
}

/* Mean and population std of n values from their chunks: the sums added in order, and
 * the squared deviations combined as Chan, Golub and LeVeque do (each chunk's m2 about its
 * own mean, plus its size times its mean's squared distance from the whole mean), so an
 * edit that touched one chunk recomputes one chunk and the same bits come out. */
static void chunk_moments(const ns_chunk_sum *ck, size_t n, double *mean, double *std) {
  size_t nck = (n + READ_CHUNK - 1) / READ_CHUNK;
  double sum = 0, m2 = 0;
  for (size_t q = 0; q < nck; q++) sum += ck[q].sum;
  double mu = sum / (double)n;
  for (size_t q = 0; q < nck; q++) {
    double len = (double)chunk_len(n, q), d = ck[q].sum / len - mu;
    m2 += ck[q].m2 + len * d * d;
  }
  *mean = mu;
  *std = sqrt(m2 / (double)n);
}

/* Input statistics over all of x from its chunks (recomputing the dirty ones, or all). */
static void input_stats(const ns_tensor *x, ns_chunk_sum *ck, const unsigned char *dirty,
                        int threads, ns_result *r) {
  size_t n = x->n, nck = (n + READ_CHUNK - 1) / READ_CHUNK;
  chunk_summaries(x, 1, dirty, threads, ck);
  double sq = 0, mn = INFINITY, mx = -INFINITY;
  size_t nnan = 0, ninf = 0;
  for (size_t q = 0; q < nck; q++) {
    sq += ck[q].sq;
    nnan += ck[q].nnan, ninf += ck[q].ninf;
    mn = ck[q].mn < mn ? ck[q].mn : mn;
    mx = ck[q].mx > mx ? ck[q].mx : mx;
  }
  r->n = n;
  r->x_min = mn;
  r->x_max = mx;
  r->x_nan = nnan;
  r->x_inf = ninf;
  chunk_moments(ck, n, &r->x_mean, &r->x_std);
  r->x_rms = sqrt(sq / (double)n);
}

/* The spec's mask for the probe slice t of x: the mask itself when it broadcasts to t, else
 * (it runs along axis 1 of x) its leading rows, as t's (*own, the caller frees). */
static const ns_tensor *probe_mask(const ns_tensor *mask, const ns_tensor *t, ns_tensor **own,
                                   char *err) {
  *own = NULL;
  char e[NS_ERRLEN];
  if (!mask || ns_mask_check(mask, t->rank, t->shape, e) == 0) return mask;
  size_t shape[NS_MAXRANK];
  for (int k = 0; k < mask->rank; k++) shape[k] = mask->shape[k];
  shape[0] = t->shape[0];
  double *v = malloc(mask->n * sizeof *v);
  if (!v) {
    ns_seterr(err, "out of memory");
    return NULL;
  }
  ns_tensor_read(mask, v); /* row-major: the leading rows come first */
  *own = ns_tensor_from(mask->rank, shape, NS_FP64, v, err);
  free(v);
  return *own;
}

/* y(a*x + b) on the probe slice, with the output's spec (and running object); gamma and
 * beta per channel are cut to the slice's channels when it runs along axis 1. */
static ns_tensor *affine_probe(const ns_state *s, const ns_result *r, const ns_spec *spec, double a,
                               double b, const ns_exec *ex, char *err) {
  ns_norm_result nr;
  memset(&nr, 0, sizeof nr);
  ns_tensor *t = affine_copy(s->x, r, a, b, spec->dtype, err), *y = NULL, *pm = NULL;
  ns_spec sp = *spec;
  if (t && r->probe_axis == 1 && !r->norm.plan.per_element) {
    if (sp.ngamma > 1) sp.ngamma = r->probe_k;
    if (sp.nbeta > 1) sp.nbeta = r->probe_k;
  }
  if (t && spec->mask && !(sp.mask = probe_mask(spec->mask, t, &pm, err))) {
    ns_tensor_free(t);
    return NULL;
  }
  spec = &sp;
  if (t && ns_normalize_exec(t, spec, ex, &nr, err) == 0) {
    y = nr.y;
    nr.y = NULL;
  }
  ns_norm_result_free(&nr);
  ns_tensor_free(t);
  ns_tensor_free(pm);
  return y;
}

/* The running statistics eval-mode batch norm of x uses (into *out, owned): those of the
 * train panel's selected estimator in r when its feature count fits x's nstat (0: unknown,
 * planned here), else fresh ones (mean 0, var 1). Sets the output's note. */
static int eval_running(const ns_state *s, const ns_result *r, size_t nstat, ns_running *out,
                        ns_evalsrc *src, char *err) {
  if (!nstat) { /* not known from a current output: plan the normalization of x */
    ns_spec spec;
    ns_state_spec(s, &spec);
    ns_norm_plan plan;
    memset(&plan, 0, sizeof plan);
    if (ns_norm_plan_shape(s->x->rank, s->x->shape, &spec, &plan, err) != 0) return -1;
    nstat = plan.nstat;
    ns_norm_plan_free(&plan);
  }
  const ns_estimator *est = r->train_d == nstat ? &r->est[r->est_active] : NULL;
  *src = !est ? NS_EVALSRC_FRESH : s->cumulative ? NS_EVALSRC_CUMULATIVE : NS_EVALSRC_MOMENTUM;
  if (ns_running_init(out, s->momentum, s->cumulative, 0, nstat, err) != 0) return -1;
  for (size_t j = 0; j < nstat; j++) {
    out->mean[j] = est ? est->mean[j] : 0;
    out->var[j] = est ? est->var[j] : 1;
  }
  return 0;
}

/* The names and words of the condition codes, from result.h's NS_CONDS. */
#define NS_COND_NAME_(ID, name, words) name,
const char *const ns_cond_names[NS_COND_COUNT + 1] = {NS_CONDS(NS_COND_NAME_) NULL};
#undef NS_COND_NAME_
#define NS_COND_WORDS_(ID, name, words) words,
static const char *const cond_words[NS_COND_COUNT] = {NS_CONDS(NS_COND_WORDS_)};
#undef NS_COND_WORDS_

static const char *const evalsrc_words[NS_EVALSRC_COUNT] = {
    [NS_EVALSRC_NONE] = NULL,
    [NS_EVALSRC_NOT_BATCH] = "eval mode changes batch norm only",
    [NS_EVALSRC_MOMENTUM] = "eval mode: running statistics of the train panel (momentum)",
    [NS_EVALSRC_CUMULATIVE] = "eval mode: running statistics of the train panel (cumulative)",
    [NS_EVALSRC_FRESH] = "eval mode: fresh running stats (mean 0, var 1): train panel features "
                         "differ",
};

const char *ns_cond_words(ns_cond c) {
  return (unsigned)c < NS_COND_COUNT ? cond_words[c] : "?";
}

const char *ns_evalsrc_words(ns_evalsrc e) {
  return (unsigned)e < NS_EVALSRC_COUNT ? evalsrc_words[e] : NULL;
}

const char *ns_cond_format(const ns_result *r, char *buf, size_t len) {
  const char *w = ns_cond_words(r->cond);
  if (strstr(w, "%s"))
    snprintf(buf, len, w, ns_dtype_name(r->cond_dtype));
  else if (strstr(w, "%g"))
    snprintf(buf, len, w, r->cond_value);
  else
    snprintf(buf, len, "%s", w);
  return buf;
}

/* 1 if the elements of statistic k of x are not all equal once stored in dtype d. */
static int stat_values_differ(const ns_tensor *x, const ns_norm_plan *p, size_t k, ns_dtype d) {
  int have = 0;
  double first = 0;
  for (size_t i = 0; i < x->n; i++) { /* O(1) memory: the plan of a result has no lists */
    if (ns_norm_plan_stat_of(p, i) != k) continue;
    double v = ns_round(ns_tensor_get(x, i), d);
    if (!have) {
      first = v;
      have = 1;
    } else if (v != first) {
      return 1;
    }
  }
  return 0;
}

/* Finds why the output's statistics are degenerate (the first degenerate one's cause; they
 * are counted in r->norm.ndegenerate), or that a centered kind with one value per statistic
 * maps everything to beta. */
static void degenerate_cond(const ns_state *s, ns_result *r) {
  const ns_norm_result *nr = &r->norm;
  ns_spec spec;
  ns_state_spec(s, &spec);
  int centered = ns_spec_center(&spec);
  r->cond = NS_COND_NONE;
  r->cond_dtype = s->dtype;
  r->cond_value = 0;
  int eval = ns_spec_eval_running(&spec, s->x->rank);
  if (!nr->ndegenerate) {
    if (centered && nr->plan.count == 1 && !eval) r->cond = NS_COND_ONE_VALUE;
  } else {
    size_t k = 0;
    while (k < nr->plan.nstat && !nr->degenerate[k]) k++;
    if (k == nr->plan.nstat) return;
    if (spec.mask && nr->batch[k].n == 0)
      r->cond = NS_COND_MASK_EMPTY;
    else if (!eval && spec.mask && nr->batch[k].n <= s->ddof)
      r->cond = NS_COND_DDOF_ONE;
    else if (!eval && nr->plan.count <= (size_t)s->ddof)
      r->cond = NS_COND_DDOF_ONE;
    else if (!eval && !isfinite(nr->batch[k].mean))
      r->cond = r->x_nan || r->x_inf ? NS_COND_X_NONFINITE : NS_COND_X_OVERFLOW;
    else if (nr->denom[k] == 0 && centered && eval)
      r->cond = NS_COND_RUNNING_ZERO;
    else if (nr->denom[k] == 0 && centered) {
      r->cond =
          stat_values_differ(s->x, &nr->plan, k, s->dtype) ? NS_COND_CANCELLED : NS_COND_ALL_EQUAL;
      r->cond_dtype = ns_spec_acc(&spec);
    } else if (nr->denom[k] == 0)
      r->cond = NS_COND_ALL_ZERO;
    else if (isinf(nr->denom[k]))
      r->cond = NS_COND_DENOM_INF;
    else {
      r->cond = NS_COND_DENOM_BAD;
      r->cond_value = nr->denom[k];
    }
  }
  ns_cond_format(r, r->degenerate_why, sizeof r->degenerate_why);
}

/* y's mean and population std over all elements, from its chunks (the dirty ones or all
 * recomputed). */
static int y_moments(ns_result *r, ns_chunk_sum *ck, const unsigned char *dirty, int threads) {
  chunk_summaries(r->norm.y, 0, dirty, threads, ck);
  chunk_moments(ck, r->norm.y->n, &r->y_mean, &r->y_std);
  return 0;
}

/* The same over the kept outputs only (the masked ones are the constant 0). */
static int masked_y_moments(const ns_tensor *x, const ns_spec *spec, ns_result *r, char *err) {
  size_t n = x->n;
  double *yv = malloc(n * sizeof *yv);
  unsigned char *keep = malloc(n);
  if (!yv || !keep || ns_mask_expand(spec->mask, x->rank, x->shape, keep, err) != 0) {
    if (!yv || !keep) ns_seterr(err, "out of memory");
    free(keep), free(yv);
    return -1;
  }
  ns_tensor_read(r->norm.y, yv);
  size_t ny = 0;
  for (size_t i = 0; i < n; i++)
    if (keep[i]) yv[ny++] = yv[i];
  free(keep);
  double ys = 0, yq = 0;
  for (size_t i = 0; i < ny; i++) ys += yv[i];
  r->y_mean = ys / (double)ny;
  for (size_t i = 0; i < ny; i++) yq += (yv[i] - r->y_mean) * (yv[i] - r->y_mean);
  r->y_std = sqrt(yq / (double)ny);
  free(yv);
  return 0;
}

/* The chunks of y that hold members of ed's statistics, marked in a new array (NULL when
 * out of memory: then every chunk is recomputed). */
static unsigned char *stat_chunks(const ns_norm_plan *p, const x_edit *ed, size_t nck) {
  unsigned char *d = calloc(nck, 1);
  size_t *idx = malloc((p->count ? p->count : 1) * sizeof *idx);
  char e[NS_ERRLEN];
  int ok = d && idx;
  for (size_t q = 0; ok && q < ed->nstat; q++) {
    ok = ns_stat_members(p, ed->stat[q], idx, e) == 0;
    for (size_t a = 0; ok && a < p->count; a++) d[idx[a] / READ_CHUNK] = 1;
  }
  free(idx);
  if (!ok) free(d), d = NULL;
  return d;
}

/* The main normalization of x with spec (and, for a large x, of its probe slice on its
 * own: the probes compare against that). After a cell edit (ed's statistics known, the
 * spec as before, y's chunks kept) only the touched statistics are renormalized, into the
 * last y, with the same bits; otherwise all of it, into the last y's memory when it fits. */
static int output_part(ns_explore_cache *c, const ns_state *s, const ns_spec *spec,
                       const x_edit *ed, ns_result *r, char *err) {
  const ns_tensor *x = s->x;
  unsigned char *ydirty = NULL;
  int restat = 0;
  c->last_restat = 0;
  if (ed->stat_ok && c->yck_ok && r->norm.y && !spec->mask) {
    char e[NS_ERRLEN];
    restat = ns_normalize_restat(x, spec, &c->exec, ed->stat, ed->nstat, &r->norm, e) == 0;
  }
  c->yck_ok = 0;
  if (restat) {
    clear_output_derived(r);
    c->last_restat = ed->nstat;
    ydirty = stat_chunks(&r->norm.plan, ed, c->nck);
  } else {
    /* the last y's memory takes the new y when the shape and dtype stayed (a fresh large
       output costs the system as much to map and zero as the normalization itself) */
    ns_tensor *old_y = r->norm.y;
    r->norm.y = NULL;
    clear_output_derived(r);
    ns_norm_result_free(&r->norm);
    if (ns_normalize_reuse(x, spec, &c->exec, old_y, &r->norm, err) != 0) return -1;
  }
  int rc = spec->mask ? masked_y_moments(x, spec, r, err)
                      : y_moments(r, c->yck, ydirty, c->exec.threads);
  free(ydirty);
  if (rc != 0) return -1;
  c->yck_ok = !spec->mask;
  degenerate_cond(s, r);
  probe_geometry(x, spec, &r->norm.plan, r);
  if (r->probe_n < x->n && !(r->y_probe = affine_probe(s, r, spec, 1, 0, &c->exec, err))) return -1;
  return 0;
}

/* What changed in x since the cache's state, into ed (its chunk array the caller frees):
 * from x's log of in-place writes (a cell edit, its undo and redo) when it reaches back to
 * the cache's stamp, with p (the last result's plan, for a change of x's values alone)
 * also the statistics of the written elements. Otherwise ed->chunk stays NULL: everything
 * is recomputed. -1 when out of memory. */
static int find_edit(const ns_explore_cache *c, const ns_state *s, const ns_norm_plan *p,
                     x_edit *ed) {
  memset(ed, 0, sizeof *ed);
  ed->changed = 1;
  const ns_tensor *x = s->x;
  size_t nck = (x->n + READ_CHUNK - 1) / READ_CHUNK, at[NS_STATE_XLOG];
  int k = c->valid && c->xck_ok && c->nck == nck ? ns_state_x_changes(s, c->prev.x_stamp, at) : -1;
  if (k < 0) return 0;
  if (!(ed->chunk = calloc(nck ? nck : 1, 1))) return -1;
  for (int i = 0; i < k; i++) {
    if (at[i] >= x->n) { /* not this x's: trust nothing */
      free(ed->chunk);
      ed->chunk = NULL;
      return 0;
    }
    ed->chunk[at[i] / READ_CHUNK] = 1;
  }
  if (!p || p->n != x->n || p->nstat == 0) return 0;
  ed->stat_ok = 1;
  for (int i = 0; i < k; i++) {
    size_t st = ns_norm_plan_stat_of(p, at[i]), j = ed->nstat;
    while (j > 0 && ed->stat[j - 1] > st) j--;
    if (j > 0 && ed->stat[j - 1] == st) continue;
    memmove(ed->stat + j + 1, ed->stat + j, (ed->nstat - j) * sizeof *ed->stat);
    ed->stat[j] = st;
    ed->nstat++;
  }
  return 0;
}

/* The chunk arrays sized for n values; their contents are kept only when the size is. */
static int ensure_chunks(ns_explore_cache *c, size_t n) {
  size_t nck = (n + READ_CHUNK - 1) / READ_CHUNK;
  if (c->xck && c->nck == nck) return 0;
  free(c->xck), free(c->yck);
  c->xck = malloc((nck ? nck : 1) * sizeof *c->xck);
  c->yck = malloc((nck ? nck : 1) * sizeof *c->yck);
  c->nck = nck;
  c->xck_ok = c->yck_ok = 0;
  if (c->xck && c->yck) return 0;
  free(c->xck), free(c->yck);
  c->xck = c->yck = NULL;
  c->nck = 0;
  return -1;
}

void ns_explore_cache_init(ns_explore_cache *c) {
  memset(c, 0, sizeof *c);
  ns_exec_default(&c->exec);
}

void ns_explore_cache_free(ns_explore_cache *c) {
  if (!c) return;
  ns_state_free(&c->prev);
  ns_jac_job_free(c->job);
  free(c->m2);
  ns_tensor_free(c->xd);
  free(c->xck);
  free(c->yck);
  memset(c, 0, sizeof *c);
}

/* Remembers s as the state the result now belongs to, without x: x's stamp says whether
 * it changed and its log what (a copy of a 64 MB x would cost 64 MB and a copy per edit). */
static int cache_store(ns_explore_cache *c, const ns_state *s, char *err) {
  ns_state_free(&c->prev);
  ns_state tmp = *s;
  tmp.x = NULL;
  return ns_state_copy(&c->prev, &tmp, err);
}

/* The values of x the precision panel reads (the first NS_EXPLORE_PROBE_LIMIT of a big x),
 * malloc'd; NULL with err when out of memory. */
static double *leading_values(const ns_tensor *x, char *err) {
  size_t lead = x->n < NS_EXPLORE_PROBE_LIMIT ? x->n : NS_EXPLORE_PROBE_LIMIT;
  double *xv = malloc(lead * sizeof *xv);
  if (!xv) {
    ns_seterr(err, "out of memory reading x");
    return NULL;
  }
  read_range(x, 0, lead, xv);
  return xv;
}

/* The shift and scale probes the parts ask for, against the output. 0, or -1 with err. */
static int affine_probes(ns_explore_cache *c, const ns_state *s, const ns_spec *spec,
                         unsigned parts, ns_result *r, char *err) {
  const ns_tensor *ybase = r->y_probe ? r->y_probe : r->norm.y;
  if (parts & NS_PART_SHIFT) {
    ns_tensor_free(r->y_shift);
    if (!(r->y_shift = affine_probe(s, r, spec, 1, s->shift, &c->exec, err))) return -1;
    r->shift_dev = max_abs_diff_tensor(r->y_shift, ybase);
  }
  if (parts & NS_PART_SCALE) {
    ns_tensor_free(r->y_scale);
    if (!(r->y_scale = affine_probe(s, r, spec, s->scale, 0, &c->exec, err))) return -1;
    r->scale_dev = max_abs_diff_tensor(r->y_scale, ybase);
  }
  return 0;
}

int ns_explore_update(ns_explore_cache *c, const ns_state *s, ns_result *r, char *err) {
  ns_fieldset diff = c->valid ? ns_state_diff(&c->prev, s) : 0;
  unsigned parts = c->valid ? stale_parts(diff, s) : NS_PART_ALL;
  c->last_parts = parts;
  c->last_restat = 0;
  if (!c->valid) ns_result_free(r);
  if (!parts) return 0;
  const ns_tensor *x = s->x;
  size_t n = x->n;
  ns_running eval_run;
  memset(&eval_run, 0, sizeof eval_run);
  double *xv = NULL;
  int rc = -1;
  x_edit ed; /* what changed in x: a cell edit rescans and renormalizes what it touched */
  memset(&ed, 0, sizeof ed);
  /* where x came from changes no number: a cell edit that forgot the file (or its undo)
     is a change of x's values alone */
  ns_fieldset xdiff = diff & ~NS_FIELDBIT(NS_F_SOURCE);
  if (parts & NS_PART_INPUT) {
    int values_only = c->valid && xdiff == NS_FIELDBIT(NS_F_X) && r->norm.y;
    if (find_edit(c, s, values_only ? &r->norm.plan : NULL, &ed) != 0 || ensure_chunks(c, n) != 0) {
      ns_seterr(err, "out of memory");
      goto out;
    }
  }
  if ((parts & NS_PART_PREC) && !(xv = leading_values(x, err))) goto out;

  /* 1 input: two-pass statistics over all elements */
  if (parts & NS_PART_INPUT) {
    c->xck_ok = 0;
    input_stats(x, c->xck, ed.chunk, c->exec.threads, r);
    c->xck_ok = 1;
  }

  /* 6 train/eval first: eval mode of the output may use its running statistics */
  if (parts & NS_PART_TRAIN) {
    clear_train(r);
    if (train_probe(s, r, err) != 0) goto out;
  }

  /* 3 output, and the spec every probe of it shares */
  ns_spec spec;
  ns_state_spec(s, &spec);
  ns_evalsrc src = s->mode == NS_MODE_EVAL ? NS_EVALSRC_NOT_BATCH : NS_EVALSRC_NONE;
  if (ns_spec_eval_running(&spec, x->rank) &&
      (parts & (NS_PART_OUTPUT | NS_PART_SHIFT | NS_PART_SCALE | NS_PART_JAC | NS_PART_RESID |
                NS_PART_VJP))) {
    size_t nstat = parts & NS_PART_OUTPUT ? 0 : r->norm.plan.nstat;
    if (eval_running(s, r, nstat, &eval_run, &src, err) != 0) goto out;
    spec.running = &eval_run;
  }
  /* a copy of x in another dtype than the spec's is of no more use (at_dtype): its memory
     goes back before y takes some (the dtype key's outputs then find the kept mappings) */
  if (c->xd && c->xd->dtype != spec.dtype) ns_tensor_free(c->xd), c->xd = NULL;
  if (parts & NS_PART_OUTPUT) {
    r->evalsrc = src;
    r->eval_note = ns_evalsrc_words(src);
    if (ed.stat_ok && (xdiff != NS_FIELDBIT(NS_F_X) || spec.running)) ed.stat_ok = 0;
    if (output_part(c, s, &spec, &ed, r, err) != 0) goto out;
  }
  if (affine_probes(c, s, &spec, parts, r, err) != 0) goto out;

  /* 4 spectrum: the closed form and its checks at any size, then the full J */
  unsigned m2_gen = c->m2_gen;
  if (parts & NS_PART_JAC) spectrum_part(c, &ed, s, &spec, r);
  /* the kept m2 belongs to the x it was computed for: when x changed and the spectrum did
     not update it (eval mode, NaN in x, a degenerate statistic), it is no one's now */
  if (ed.changed && c->m2_gen == m2_gen) c->m2_valid = 0;

  /* the residual block and the backward pass (after J: the pass is checked against J^T g) */
  if (parts & NS_PART_RESID) ns_resid_part(s, &spec, r);
  if (parts & NS_PART_VJP) ns_vjp_part(s, &spec, r);

  /* 5 batch */
  if (parts & NS_PART_BATCH) {
    clear_batch(r);
    rc = 0;
    batch_probe(s, r, err, &rc);
    if (rc != 0) goto out;
  }

  /* 7 precision, on the first values of a large x */
  if (parts & NS_PART_PREC) {
    r->prec_n = n < NS_EXPLORE_PROBE_LIMIT ? n : NS_EXPLORE_PROBE_LIMIT;
    precision_probe(xv, r->prec_n, s, r);
  }
  rc = cache_store(c, s, err);
  c->valid = rc == 0;
out:
  ns_running_free(&eval_run);
  free(xv);
  free(ed.chunk);
  if (rc != 0) {
    ns_result_free(r);
    c->valid = 0;
  }
  return rc;
}

int ns_explore_compute(const ns_state *s, ns_result *r, char *err) {
  ns_explore_cache c;
  ns_explore_cache_init(&c);
  memset(r, 0, sizeof *r);
  int rc = ns_explore_update(&c, s, r, err);
  ns_explore_cache_free(&c);
  return rc;
}
