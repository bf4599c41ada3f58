/* normalize_mask.c: masks (normalize.h, "Masks") and the normalization of a masked spec.
 *
 * The masked path is the reference path (normalize_ref.c) with one change per statistic:
 * only its kept members are gathered (still in index order) and counted, so k replaces the
 * plan's count in the mean, in m - ddof and in the degenerate test; masked outputs are 0.
 * Every rounding is the reference's, which is why a mask of ones reproduces ns_normalize
 * bit for bit (tests/unit/test_mask.c). There are no fast kernels for masks: the cost is
 * the reference's (about 40 bytes per element) plus one byte per element for the keep list.
 */
#include "core/normalize.h"
#include "core/round.h"
#include "core/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int ns_mask_check(const ns_tensor *mask, int rank, const size_t *shape, char *err) {
  if (!mask || !shape) {
    ns_seterr(err, "mask: %s is NULL", !mask ? "the mask tensor" : "x's shape");
    return -1;
  }
  char ms[96], xs[96];
  ns_shape_format(mask->rank, mask->shape, ms, sizeof ms);
  ns_shape_format(rank, shape, xs, sizeof xs);
  int ok = mask->rank >= 1 && mask->rank <= rank;
  for (int k = 1; ok && k <= mask->rank; k++) { /* aligned at the last axis */
    size_t a = mask->shape[mask->rank - k], b = shape[rank - k];
    ok = a == 1 || a == b;
  }
  if (!ok) {
    ns_seterr(err,
              "mask: shape %s does not broadcast to x's shape %s (align at the last axis; "
              "each size 1 or x's: e.g. a (B,T) padding mask of a (B,T,D) input is (B,T,1))",
              ms, xs);
    return -1;
  }
  for (size_t i = 0; i < mask->n; i++) {
    double v = ns_tensor_get(mask, i);
    if (v != 0 && v != 1) {
      ns_seterr(err, "mask: element %zu is %g; a mask holds only 1 (keep) and 0 (leave out)", i + 1,
                v);
      return -1;
    }
  }
  return 0;
}

int ns_mask_expand(const ns_tensor *mask, int rank, const size_t *shape, unsigned char *keep,
                   char *err) {
  if (!keep) {
    ns_seterr(err, "mask: no keep array to fill");
    return -1;
  }
  if (ns_mask_check(mask, rank, shape, err) != 0) return -1;
  /* stride of each of x's axes into the mask: 0 where the mask broadcasts (size 1 or
   * absent), else the mask's own row-major stride */
  size_t mstride[NS_MAXRANK] = {0}, idx[NS_MAXRANK] = {0}, n = 1, step = 1;
  for (int k = 1; k <= mask->rank; k++) {
    size_t a = mask->shape[mask->rank - k];
    mstride[rank - k] = a == 1 ? 0 : step;
    step *= a;
  }
  for (int k = 0; k < rank; k++) n *= shape[k];
  size_t at = 0; /* the mask's flat index of x's element i, kept up to date like an odometer */
  for (size_t i = 0; i < n; i++) {
    keep[i] = ns_tensor_get(mask, at) != 0;
    for (int k = rank - 1; k >= 0; k--) {
      if (++idx[k] < shape[k]) {
        at += mstride[k];
        break;
      }
      at -= mstride[k] * (shape[k] - 1);
      idx[k] = 0;
    }
  }
  return 0;
}

int ns_mask_keeps(const ns_tensor *mask, int rank, const size_t *shape, size_t i) {
  if (!mask || !shape || rank < mask->rank) return 1;
  size_t at = 0, step = 1;
  for (int k = 1; k <= rank; k++) { /* x's axes from the last; i's index along each */
    size_t along = i % shape[rank - k];
    i /= shape[rank - k];
    if (k <= mask->rank) {
      size_t a = mask->shape[mask->rank - k];
      if (a != 1) at += along * step;
      step *= a;
    }
  }
  return at < mask->n && ns_tensor_get(mask, at) != 0;
}

/* y as the reference's map_out, with masked outputs 0. */
static void map_out_masked(const ns_norm_plan *p, const double *xa, const unsigned char *keep,
                           const ns_spec *spec, int centered, ns_dtype acc, ns_norm_result *res) {
#define R(v) ns_round_fast((v), acc)
  for (size_t i = 0; i < p->n; i++) {
    double t = 0;
    if (keep[i]) {
      size_t s = p->stat_of[i];
      double c = centered ? R(xa[i] - res->mean[s]) : xa[i];
      t = R(c / res->denom[s]);
      if (spec->gamma) t = R(t * R(spec->gamma[spec->ngamma == 1 ? 0 : p->affine_of[i]]));
      if (spec->beta) t = R(t + R(spec->beta[spec->nbeta == 1 ? 0 : p->affine_of[i]]));
    }
    ns_tensor_set(res->y, i, t); /* one correctly rounded conversion to dtype */
  }
#undef R
}

/* The running update from the masked batch moments; a channel with no kept element keeps
 * its running mean and var (there is nothing to learn from it). */
static int running_update_masked(ns_running *run, const ns_moments *b, size_t nstat, char *err) {
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

int ns_normalize_masked(const ns_tensor *x, const ns_spec *spec, ns_norm_result *res, char *err) {
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
  unsigned char *keep = malloc(x->n ? x->n : 1); /* the mask over x, checked as it is made */
  if (!keep) {
    ns_seterr(err, "out of memory for the mask of %zu elements", x->n);
    return -1;
  }
  if (!spec->mask)
    memset(keep, 1, x->n);
  else if (ns_mask_expand(spec->mask, x->rank, x->shape, keep, err) != 0) {
    free(keep);
    return -1;
  }
  char sh[96];
  ns_shape_format(x->rank, x->shape, sh, sizeof sh);
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
    free(xa), free(buf), free(sqbuf), free(keep);
    ns_norm_result_free(res);
    ns_seterr(err, "out of memory normalizing shape %s", sh);
    return -1;
  }
#define R(v) ns_round_fast((v), acc)
  ns_tensor_read(x, xa);
  for (size_t i = 0; i < p->n; i++) xa[i] = R(ns_round_fast(xa[i], dt));
  const double eps = R(spec->eps);
  for (size_t s = 0; s < nstat; s++) {
    const size_t *mem = p->members + s * m;
    size_t k = 0; /* kept members, gathered in index order */
    for (size_t a = 0; a < m; a++)
      if (keep[mem[a]]) buf[k++] = xa[mem[a]];
    ns_moments_compute_ex(buf, k, 1, acc, acc, spec->algo, spec->order, &res->batch[s]);
    const double rdof = R((double)k - spec->ddof);
    double mu, v;
    if (eval) {
      double rm = run->nstat ? run->mean[s] : 0.0, rv = run->nstat ? run->var[s] : 1.0;
      mu = centered ? R(rm) : 0.0;
      v = centered ? R(rv) : R(R(rv) + R(R(rm) * R(rm)));
    } else if (k == 0) {
      mu = v = NAN; /* nothing to average */
    } else if (centered) {
      mu = res->batch[s].mean;
      v = R(res->batch[s].m2 / rdof);
    } else {
      double sq = 0;
      if (spec->order == NS_ORDER_PAIRWISE && spec->algo != NS_ALGO_WELFORD) {
        for (size_t a = 0; a < k; a++) sqbuf[a] = R(buf[a] * buf[a]);
        sq = ns_sum_pairwise(sqbuf, k, acc);
      } else {
        for (size_t a = 0; a < k; a++) sq = R(sq + R(buf[a] * buf[a]));
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
  map_out_masked(p, xa, keep, spec, centered, acc, res);
#undef R
  free(xa), free(buf), free(sqbuf), free(keep);
  if (run && !eval && running_update_masked(run, res->batch, nstat, err) != 0) {
    ns_norm_result_free(res);
    return -1;
  }
  return 0;
}

int ns_mask_unsupported(const ns_spec *spec, const char *fn, char *err) {
  if (!spec->mask) return 0;
  ns_seterr(err, "%s: a masked spec is not supported (ns_jacobian honours the mask)", fn);
  return 1;
}
