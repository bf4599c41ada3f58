/* normalize_ref.c: the reference normalization, kept as the definition of the results.
 *
 * This is the straightforward path ns_normalize took before its kernels (norm_kernels.c):
 * the full plan with per-element lists (ns_norm_plan_make), the whole input copied to
 * doubles and rounded to dtype then acc, each statistic's elements gathered into a buffer
 * and reduced by ns_moments_compute_ex, and one element-wise map through the lists. It is
 * slow (about 40 bytes of memory per element) and obviously right; the kernels must give
 * the same bits, and tests/unit/test_kernels.c compares the two on random inputs. The
 * spec decisions are the ones documented at the top of normalize.c.
 */
#include "core/normalize.h"
#include "core/round.h"
#include "core/torchorder.h"
#include "core/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* y = gamma * (x - mean) / denom + beta for every element, each operation rounded to acc
 * and y stored in dt; inlined once per common (acc, dt) pair so the roundings compile to
 * plain conversions. */
NS_ALWAYS_INLINE static inline void map_out(const ns_norm_plan *p, const double *xa,
                                            const unsigned char *keep, const ns_spec *spec,
                                            int centered, ns_dtype acc, ns_dtype dt,
                                            ns_norm_result *res) {
#define R(v) ns_round_fast((v), acc)
  double *yd = res->y->data;
  float *yf = res->y->data;
  for (size_t i = 0; i < p->n; i++) {
    size_t s = p->stat_of[i];
    double t = 0; /* a masked output is 0 */
    if (!keep || keep[i]) {
      double c = centered ? R(xa[i] - res->mean[s]) : xa[i];
      t = R(c / res->denom[s]);
      if (spec->gamma) t = R(t * R(spec->gamma[spec->ngamma == 1 ? 0 : p->affine_of[i]]));
      if (spec->beta) t = R(t + R(spec->beta[spec->nbeta == 1 ? 0 : p->affine_of[i]]));
    }
    if (dt == NS_FP64)
      yd[i] = t;
    else if (dt == NS_FP32)
      yf[i] = (float)t; /* as ns_tensor_set: one correctly rounded conversion */
    else
      ns_tensor_set(res->y, i, t);
  }
#undef R
}

/* order torch: y = fma(fma(x, rstd, -rstd mean), gamma, beta) with rstd = 1/denom, each
 * rounded to acc as torch's LayerNorm forms its output (torchorder.h). */
static void map_torch(const ns_norm_plan *p, const double *xa, const ns_spec *spec, ns_dtype acc,
                      ns_norm_result *res) {
#define R(v) ns_round_fast((v), acc)
  for (size_t i = 0; i < p->n; i++) {
    size_t s = p->stat_of[i], k = p->affine_of[i];
    double rstd = R(1.0 / res->denom[s]), bias = R(-rstd * res->mean[s]);
    double g = spec->gamma ? R(spec->gamma[spec->ngamma == 1 ? 0 : k]) : 1.0;
    double b = spec->beta ? R(spec->beta[spec->nbeta == 1 ? 0 : k]) : 0.0;
    double t = ns_torch_fma(ns_torch_fma(xa[i], rstd, bias, acc), g, b, acc);
    ns_tensor_set(res->y, i, t);
  }
#undef R
}

/* The running update from masked batch moments: a channel with no kept element keeps its
 * running mean and var (there is nothing to learn from it). */
static int running_update_kept(ns_running *run, const ns_moments *b, size_t nstat, char *err) {
  double *old = malloc(2 * nstat * sizeof *old);
  if (!old) {
    ns_seterr(err, "out of memory updating %zu running statistics", nstat);
    return -1;
  }
  int fresh = run->nstat == 0;
  for (size_t s = 0; s < nstat; s++) {
    old[s] = fresh ? 0.0 : run->mean[s]; /* a fresh object starts at mean 0, var 1 */
    old[nstat + s] = fresh ? 1.0 : run->var[s];
  }
  int rc = ns_running_update(run, b, nstat, err);
  if (rc == 0)
    for (size_t s = 0; s < nstat; s++)
      if (b[s].n == 0) {
        run->mean[s] = old[s];
        run->var[s] = old[nstat + s];
      }
  free(old);
  return rc;
}

int ns_normalize_ref(const ns_tensor *x, const ns_spec *spec, ns_norm_result *res, char *err) {
  if (!res) {
    ns_seterr(err, "no result to fill");
    return -1;
  }
  memset(res, 0, sizeof *res);
  if (!x || !spec) {
    ns_seterr(err, x ? "no normalization spec" : "no input tensor");
    return -1;
  }
  if (ns_spec_check(spec, err) != 0) return -1;
  char sh[96];
  ns_shape_format(x->rank, x->shape, sh, sizeof sh);
  /* a mask (normalize.h, "Masks"): keep[i] says whether element i enters its statistic;
     NULL keeps every element */
  unsigned char *keep = NULL;
  if (spec->mask) {
    if (!(keep = malloc(x->n ? x->n : 1))) {
      ns_seterr(err, "out of memory for the mask of %zu elements", x->n);
      return -1;
    }
    if (ns_mask_expand(spec->mask, x->rank, x->shape, keep, err) != 0) {
      free(keep);
      return -1;
    }
  }
  ns_norm_plan *p = &res->plan;
  if (ns_norm_plan_make(x->rank, x->shape, spec, p, err) != 0) {
    free(keep);
    return -1;
  }
  if (ns_spec_check_affine(spec, p, x->rank, x->shape, err) != 0) {
    ns_norm_result_free(res);
    free(keep);
    return -1;
  }
  const size_t nstat = p->nstat, m = p->count;
  const int centered = ns_spec_center(spec);
  const ns_dtype dt = spec->dtype, acc = ns_spec_acc(spec);
  const int eval = ns_spec_eval_running(spec, x->rank);
  ns_running *run = ns_spec_is_batch(spec, x->rank) ? spec->running : NULL;
  if (eval && !run) {
    ns_seterr(err, "eval mode of %s norm needs running statistics (none given)",
              ns_kind_name(spec->kind));
    ns_norm_result_free(res);
    free(keep);
    return -1;
  }
  if (run && run->nstat != 0 && run->nstat != nstat) {
    ns_seterr(err, "running statistics hold %zu channels but input of shape %s has %zu statistics",
              run->nstat, sh, nstat);
    ns_norm_result_free(res);
    free(keep);
    return -1;
  }
  res->y = ns_tensor_new(x->rank, x->shape, dt, err);
  res->mean = malloc(nstat * sizeof *res->mean);
  res->var = malloc(nstat * sizeof *res->var);
  res->denom = malloc(nstat * sizeof *res->denom);
  res->batch = malloc(nstat * sizeof *res->batch);
  res->degenerate = calloc(nstat, 1);
  double *xa = malloc(p->n * sizeof *xa); /* inputs in dtype, then acc */
  double *buf = malloc(m * sizeof *buf), *sqbuf = malloc(m * sizeof *sqbuf);
  if (!res->y || !res->mean || !res->var || !res->denom || !res->batch || !res->degenerate || !xa ||
      !buf || !sqbuf) {
    free(xa);
    free(buf);
    free(sqbuf);
    free(keep);
    ns_norm_result_free(res);
    ns_seterr(err, "out of memory normalizing shape %s", sh);
    return -1;
  }
#define R(v) ns_round_fast((v), acc)
  if (x->dtype == NS_FP32) { /* the same values ns_tensor_read gives, without a call each */
    const float *xf = x->data;
    for (size_t i = 0; i < p->n; i++) xa[i] = R(ns_round_fast((double)xf[i], dt));
  } else {
    ns_tensor_read(x, xa);
    for (size_t i = 0; i < p->n; i++) xa[i] = R(ns_round_fast(xa[i], dt));
  }
  const double eps = R(spec->eps);
  for (size_t s = 0; s < nstat; s++) {
    /* members are distinct and ascending: first and last m-1 apart means contiguous,
     * read in place; otherwise gather them (with a mask: the kept ones, in index order) */
    const size_t *mem = p->members + s * m;
    const double *xs = buf;
    size_t k = m; /* the elements the statistic is over */
    if (keep) {
      k = 0;
      for (size_t a = 0; a < m; a++)
        if (keep[mem[a]]) buf[k++] = xa[mem[a]];
    } else if (mem[m - 1] - mem[0] == m - 1) {
      xs = xa + mem[0];
    } else {
      for (size_t a = 0; a < m; a++) buf[a] = xa[mem[a]];
    }
    if (spec->order == NS_ORDER_TORCH) /* torch's LayerNorm moments (torchorder.h) */
      ns_moments_torch(xs, k, acc, &res->batch[s]);
    else
      ns_moments_compute_ex(xs, k, 1, acc, acc, spec->algo, spec->order, &res->batch[s]);
    /* an uncentered kind (RMS) without a running update does not use m2 (normalize.h) */
    if (!centered && !(run && !eval)) res->batch[s].m2 = NAN;
    const double rdof = R((double)k - spec->ddof);
    double mu, v;
    if (eval) {
      double rm = run->nstat ? run->mean[s] : 0.0, rv = run->nstat ? run->var[s] : 1.0;
      mu = centered ? R(rm) : 0.0;
      v = centered ? R(rv) : R(R(rv) + R(R(rm) * R(rm)));
    } else if (k == 0) {
      mu = v = NAN; /* a mask kept nothing to average */
    } else if (centered) {
      mu = res->batch[s].mean;
      v = R(res->batch[s].m2 / rdof);
    } else {
      double sq = 0;
      if (spec->order == NS_ORDER_PAIRWISE && spec->algo != NS_ALGO_WELFORD) {
        for (size_t a = 0; a < k; a++) sqbuf[a] = R(xs[a] * xs[a]);
        sq = ns_sum_pairwise(sqbuf, k, acc);
      } else {
        for (size_t a = 0; a < k; a++) sq = R(sq + R(xs[a] * xs[a]));
      }
      mu = 0.0;
      v = R(sq / rdof);
    }
    double den = spec->eps_at == NS_EPS_VAR ? R(sqrt(R(v + eps))) : R(R(sqrt(v)) + eps);
    res->mean[s] = mu;
    res->var[s] = v;
    res->denom[s] = den;
    if (!(den > 0) || !isfinite(den) || (!eval && k <= (size_t)spec->ddof) || k == 0) {
      res->degenerate[s] = 1;
      res->ndegenerate++;
    }
  }
  if (spec->order == NS_ORDER_TORCH)
    map_torch(p, xa, spec, acc, res);
  else if (acc == NS_FP64 && dt == NS_FP64)
    map_out(p, xa, keep, spec, centered, NS_FP64, NS_FP64, res);
  else if (acc == NS_FP32 && dt == NS_FP32)
    map_out(p, xa, keep, spec, centered, NS_FP32, NS_FP32, res);
  else
    map_out(p, xa, keep, spec, centered, acc, dt, res);
#undef R
  free(xa);
  free(buf);
  free(sqbuf);
  int masked = keep != NULL;
  free(keep);
  if (run && !eval &&
      (masked ? running_update_kept(run, res->batch, nstat, err)
              : ns_running_update(run, res->batch, nstat, err)) != 0) {
    ns_norm_result_free(res);
    return -1;
  }
  return 0;
}
