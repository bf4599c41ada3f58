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

/* order torch: each kind's output as torch forms it (torchorder.h), rounded to acc. LayerNorm:
 * y = fma(fma(x, rstd, -rstd mean), gamma, beta) with rstd = 1/denom; GroupNorm: scale and
 * bias from rstd; BatchNorm and InstanceNorm: x alpha + beta from invstd, which comes from
 * the variance (train: in double; eval: the running one, in acc). */
static void map_torch(const ns_norm_plan *p, const double *xa, const ns_spec *spec, ns_dtype acc,
                      int eval, ns_norm_result *res) {
#define R(v) ns_round_fast((v), acc)
  const int bn = spec->kind == NS_KIND_BATCH || spec->kind == NS_KIND_INSTANCE;
  for (size_t i = 0; i < p->n; i++) {
    size_t s = p->stat_of[i], k = p->affine_of[i];
    double g = spec->gamma ? R(spec->gamma[spec->ngamma == 1 ? 0 : k]) : 1.0;
    double b = spec->beta ? R(spec->beta[spec->nbeta == 1 ? 0 : k]) : 0.0;
    double t;
    if (bn) {
      t = ns_torch_bn_out(xa[i], res->mean[s],
                          ns_torch_bn_invstd(res->var[s], spec->eps, eval, acc), g, b, acc);
    } else if (spec->kind == NS_KIND_GROUP) {
      t = ns_torch_gn_out(xa[i], res->mean[s], R(1.0 / res->denom[s]), g, b,
                          spec->gamma || spec->beta, acc);
    } else {
      double rstd = R(1.0 / res->denom[s]), bias = R(-rstd * res->mean[s]);
      t = ns_torch_fma(ns_torch_fma(xa[i], rstd, bias, acc), g, b, acc);
    }
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

/* Order torch follows torch's modules: 1 for batch norm over every axis but the last, as
 * torch's BatchNorm2d on a channels_last tensor (x holding (N, H, W, C)) or BatchNorm1d on
 * x.reshape(-1, C) runs it (rows of C values, torch's channels-last kernel); 0 for the
 * modules' default axes (and any other order); -1 with err for axes no torch module has. */
static int torch_layout(const ns_tensor *x, const ns_spec *spec, char *err) {
  const int nhwc = spec->order == NS_ORDER_TORCH && spec->kind == NS_KIND_BATCH && x->rank >= 3 &&
                   spec->axes == (1u << (x->rank - 1)) - 1;
  if (spec->order == NS_ORDER_TORCH && spec->kind != NS_KIND_LAYER && spec->axes && !nhwc) {
    char e[NS_ERRLEN];
    unsigned d = ns_default_axes(spec->kind, x->rank, e);
    if (spec->axes != d && !(spec->kind == NS_KIND_GROUP && (spec->axes | 2u) == (d | 2u))) {
      ns_seterr(err,
                "order torch follows torch's %s module: its default axes only (or, for "
                "batch norm, every axis but the last: a channels_last input)",
                ns_kind_name(spec->kind));
      return -1;
    }
  }
  if (nhwc && (spec->gamma || spec->beta)) {
    ns_seterr(err, "order torch over every axis but the last takes no gamma or beta (they would "
                   "be per axis 2)");
    return -1;
  }
  return nhwc;
}

/* The moments of one statistic's k values xs in the spec's order, rounded to acc (plane:
 * torch's BatchNorm elements of a channel per example; npo: numpy's walk; sqbuf: k doubles
 * of scratch). */
static void stat_moments(const double *xs, size_t k, const ns_spec *spec, ns_dtype acc,
                         size_t plane, const ns_numpy_order *npo, double *sqbuf, ns_moments *out) {
  if (spec->order == NS_ORDER_TORCH &&
      (spec->kind == NS_KIND_BATCH || spec->kind == NS_KIND_INSTANCE))
    ns_torch_bn_moments(xs, k, plane, acc, out); /* torchorder.h */
  else if (spec->order == NS_ORDER_TORCH)        /* LayerNorm's and GroupNorm's Welford cascade */
    ns_moments_torch(xs, k, acc, out);
  else if (spec->order == NS_ORDER_NUMPY) { /* np.mean, then np.var's sum of (x - mean)^2 */
    double mean = ns_round_fast(ns_numpy_sum(xs, k, npo, acc) / ns_round_fast((double)k, acc), acc);
    for (size_t a = 0; a < k; a++) {
      double d = ns_round_fast(xs[a] - mean, acc);
      sqbuf[a] = ns_round_fast(d * d, acc);
    }
    out->n = (double)k;
    out->mean = mean;
    out->m2 = ns_numpy_sum(sqbuf, k, npo, acc);
  } else
    ns_moments_compute_ex(xs, k, 1, acc, acc, spec->algo, spec->order, out);
}

/* The uncentered mean square's sum of x^2 over the k values xs in the spec's order, rounded
 * to acc. */
static double sum_squares(const double *xs, size_t k, const ns_spec *spec, ns_dtype acc,
                          const ns_numpy_order *npo, double *sqbuf) {
  double sq = 0;
  if (spec->order == NS_ORDER_NUMPY) { /* np.mean(x**2) */
    for (size_t a = 0; a < k; a++) sqbuf[a] = ns_round_fast(xs[a] * xs[a], acc);
    sq = ns_numpy_sum(sqbuf, k, npo, acc);
  } else if (spec->order == NS_ORDER_PAIRWISE && spec->algo != NS_ALGO_WELFORD) {
    for (size_t a = 0; a < k; a++) sqbuf[a] = ns_round_fast(xs[a] * xs[a], acc);
    sq = ns_sum_pairwise(sqbuf, k, acc);
  } else {
    for (size_t a = 0; a < k; a++) sq = ns_round_fast(sq + ns_round_fast(xs[a] * xs[a], acc), acc);
  }
  return sq;
}

/* What every statistic of one call reads: the inputs xa (in dtype, then acc), the mask
 * (NULL keeps every element), two scratch rows of the plan's count, and the settings. */
typedef struct {
  const ns_spec *spec;
  const ns_norm_plan *p;
  const double *xa;
  const unsigned char *keep;
  double *buf, *sqbuf;
  ns_dtype acc;
  int centered, eval, update; /* update: the running statistics are updated (train mode) */
  const ns_running *erun;     /* what eval mode reads */
  size_t plane;               /* torch's elements of a channel per example */
  ns_numpy_order npo;         /* order numpy: how np.add.reduce walks a statistic */
  double eps;                 /* in acc */
} ref_pass;

#define R(v) ns_round_fast((v), acc)

/* Statistic s: its moments, then the mean, variance and denominator it normalizes by
 * (eval mode: the running ones), and whether it is degenerate. */
static void ref_stat(const ref_pass *c, size_t s, ns_norm_result *res) {
  const ns_spec *spec = c->spec;
  const ns_dtype acc = c->acc;
  const size_t m = c->p->count;
  /* members are distinct and ascending: first and last m-1 apart means contiguous,
   * read in place; otherwise gather them (with a mask: the kept ones, in index order) */
  const size_t *mem = c->p->members + s * m;
  const double *xs = c->buf;
  size_t k = m; /* the elements the statistic is over */
  if (c->keep) {
    k = 0;
    for (size_t a = 0; a < m; a++)
      if (c->keep[mem[a]]) c->buf[k++] = c->xa[mem[a]];
  } else if (mem[m - 1] - mem[0] == m - 1) {
    xs = c->xa + mem[0];
  } else {
    for (size_t a = 0; a < m; a++) c->buf[a] = c->xa[mem[a]];
  }
  stat_moments(xs, k, spec, acc, c->plane, &c->npo, c->sqbuf, &res->batch[s]);
  /* an uncentered kind (RMS) without a running update does not use m2 (normalize.h) */
  if (!c->centered && !c->update) res->batch[s].m2 = NAN;
  const double rdof = R((double)k - spec->ddof);
  double mu, v;
  if (c->eval) {
    double rm = c->erun->nstat ? c->erun->mean[s] : 0.0;
    double rv = c->erun->nstat ? c->erun->var[s] : 1.0;
    mu = c->centered ? R(rm) : 0.0;
    v = c->centered ? R(rv) : R(R(rv) + R(R(rm) * R(rm)));
  } else if (k == 0) {
    mu = v = NAN; /* a mask kept nothing to average */
  } else if (c->centered) {
    mu = res->batch[s].mean;
    v = R(res->batch[s].m2 / rdof);
  } else {
    mu = 0.0;
    v = R(sum_squares(xs, k, spec, acc, &c->npo, c->sqbuf) / rdof);
  }
  double den = spec->eps_at == NS_EPS_VAR ? R(sqrt(R(v + c->eps))) : R(R(sqrt(v)) + c->eps);
  res->mean[s] = mu;
  res->var[s] = v;
  res->denom[s] = den;
  if (!(den > 0) || !isfinite(den) || (!c->eval && k <= (size_t)spec->ddof) || k == 0) {
    res->degenerate[s] = 1;
    res->ndegenerate++;
  }
}

/* x rounded to dtype dt and then to acc, into xa (p->n values). */
static void ref_inputs(const ns_tensor *x, size_t n, ns_dtype dt, ns_dtype acc, double *xa) {
  if (x->dtype == NS_FP32) { /* the same values ns_tensor_read gives, without a call each */
    const float *xf = x->data;
    for (size_t i = 0; i < n; i++) xa[i] = R(ns_round_fast((double)xf[i], dt));
  } else {
    ns_tensor_read(x, xa);
    for (size_t i = 0; i < n; i++) xa[i] = R(ns_round_fast(xa[i], dt));
  }
}

#undef R

/* y from the statistics: torch's order, or map_out with the dtypes as constants where
 * they are the same (the compiler then folds the rounding). */
static void ref_map(const ref_pass *c, ns_dtype dt, ns_norm_result *res) {
  if (c->spec->order == NS_ORDER_TORCH)
    map_torch(c->p, c->xa, c->spec, c->acc, c->eval, res);
  else if (c->acc == NS_FP64 && dt == NS_FP64)
    map_out(c->p, c->xa, c->keep, c->spec, c->centered, NS_FP64, NS_FP64, res);
  else if (c->acc == NS_FP32 && dt == NS_FP32)
    map_out(c->p, c->xa, c->keep, c->spec, c->centered, NS_FP32, NS_FP32, res);
  else
    map_out(c->p, c->xa, c->keep, c->spec, c->centered, c->acc, dt, res);
}

/* The mask expanded to one flag per element of x into *keep (NULL without a mask). */
static int ref_mask(const ns_tensor *x, const ns_spec *spec, unsigned char **keep, char *err) {
  *keep = NULL;
  if (!spec->mask) return 0;
  if (!(*keep = malloc(x->n ? x->n : 1))) {
    ns_seterr(err, "out of memory for the mask of %zu elements", x->n);
    return -1;
  }
  if (ns_mask_expand(spec->mask, x->rank, x->shape, *keep, err) != 0) {
    free(*keep);
    *keep = NULL;
    return -1;
  }
  return 0;
}

/* The running statistics' update from this batch's moments, in the form the call asks
 * for: per channel (instance norm), over kept elements (a mask), torch's, or the plain
 * one. */
static int ref_update(ns_running *run, const ns_norm_result *res, int inst, int masked, size_t nex,
                      size_t nchan, const ns_spec *spec, ns_dtype acc, char *err) {
  const int torch = spec->order == NS_ORDER_TORCH;
  const size_t nstat = res->plan.nstat;
  if (inst)
    return ns_running_update_instance(run, res->batch, nex, nchan, torch ? (int)acc : -1, err);
  if (masked) return running_update_kept(run, res->batch, nstat, err);
  if (torch) return ns_running_update_torch(run, res->batch, nstat, acc, err);
  return ns_running_update(run, res->batch, nstat, err);
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
  if (ns_spec_check(spec, err) != 0 || ns_spec_running_check(spec, x->rank, err) != 0) return -1;
  const int nhwc = torch_layout(x, spec, err);
  if (nhwc < 0) return -1;
  char sh[96];
  ns_shape_format(x->rank, x->shape, sh, sizeof sh);
  /* a mask (normalize.h, "Masks"): keep[i] says whether element i enters its statistic */
  unsigned char *keep;
  if (ref_mask(x, spec, &keep, err) != 0) return -1;
  ns_norm_plan *p = &res->plan;
  if (ns_norm_plan_make(x->rank, x->shape, spec, p, err) != 0) {
    free(keep);
    return -1;
  }
  if (ns_spec_check_plan(spec, p, x->rank, x->shape, err) != 0) {
    ns_norm_result_free(res);
    free(keep);
    return -1;
  }
  const size_t nstat = p->nstat, m = p->count;
  const ns_dtype dt = spec->dtype, acc = ns_spec_acc(spec);
  const int eval = ns_spec_eval_running(spec, x->rank);
  ns_running *run = spec->running; /* checked by ns_spec_running_check and _check_plan */
  /* instance norm: one running statistic per channel, repeated over the examples as torch
     does (ns_running_repeat), so that statistic s reads its channel's values */
  const int inst = ns_spec_instance_running(spec, x->rank);
  const size_t nchan = x->rank >= 2 ? x->shape[1] : 1, nex = inst ? nstat / nchan : 1;
  ns_running rep;
  memset(&rep, 0, sizeof rep);
  if (inst && keep) {
    ns_seterr(err, "instance norm's running statistics have no masked form: leave out the mask "
                   "or the running statistics");
    ns_norm_result_free(res);
    free(keep);
    return -1;
  }
  if (inst && ns_running_repeat(run, nchan, nex, &rep, err) != 0) {
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
    ns_running_free(&rep);
    ns_seterr(err, "out of memory normalizing shape %s", sh);
    return -1;
  }
  ref_pass c = {.spec = spec,
                .p = p,
                .xa = xa,
                .keep = keep,
                .buf = buf,
                .sqbuf = sqbuf,
                .acc = acc,
                .centered = ns_spec_center(spec),
                .eval = eval,
                .update = run && !eval,
                .erun = inst ? &rep : run,
                .plane = 1,
                .eps = ns_round_fast(spec->eps, acc)};
  /* torch's BatchNorm kernel: the elements of a channel per example (1: the channels-last
     kernel); InstanceNorm runs it on the input viewed as (1, N*C, ...) */
  for (int a = 2; a < x->rank && !nhwc; a++) c.plane *= x->shape[a];
  ns_numpy_order_of(x->rank, x->shape, p->axes, spec->kind == NS_KIND_GROUP ? p->groups : 1,
                    &c.npo);
  ref_inputs(x, p->n, dt, acc, xa);
  for (size_t s = 0; s < nstat; s++) ref_stat(&c, s, res);
  ref_map(&c, dt, res);
  free(xa);
  free(buf);
  free(sqbuf);
  int masked = keep != NULL;
  free(keep);
  ns_running_free(&rep);
  if (run && !eval && ref_update(run, res, inst, masked, nex, nchan, spec, acc, err) != 0) {
    ns_norm_result_free(res);
    return -1;
  }
  return 0;
}
