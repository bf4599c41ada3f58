/* probes.c: two experiments of the chapters as parts of the result: the residual block
 * (where the normalization sits: J of x + W N(x) against J of N(x + W x)) and the backward
 * pass through the statistics (dL/dx for an upstream gradient, split by path). See the
 * fields placement, W, upstream and w_seed (fields.h) and result.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jacobian.h"
#include "core/linalg.h"
#include "core/rng.h"
#include "explore/result_priv.h"

/* Singular values of the n x n J (descending) into sv, and the rank above 1e-10 smax. */
static int rank_of(const double *J, size_t n, double *sv, int *rank, char *err) {
  if (ns_svdvals(J, n, n, sv, err) != 0) return -1;
  double smax = n ? sv[0] : 0;
  *rank = 0;
  for (size_t i = 0; i < n; i++)
    if (sv[i] > 1e-10 * smax) (*rank)++;
  return 0;
}

void ns_resid_part(const ns_state *s, const ns_spec *spec, ns_result *r) {
  ns_resid_clear(r);
  const ns_tensor *x = s->x;
  size_t n = x->n, D = x->shape[x->rank - 1];
  char e[NS_ERRLEN] = "";
  if (s->placement == NS_PLACE_NONE) {
    snprintf(r->resid_skip, sizeof r->resid_skip,
             "no residual block: set placement = \"pre\" or \"post\"");
    return;
  }
  if (n > NS_EXPLORE_JAC_LIMIT) {
    snprintf(r->resid_skip, sizeof r->resid_skip,
             "residual Jacobians skipped: %zu elements, limit %d", n, NS_EXPLORE_JAC_LIMIT);
    return;
  }
  if (r->x_nan || r->x_inf || r->norm.ndegenerate) {
    snprintf(r->resid_skip, sizeof r->resid_skip, "residual Jacobians undefined: %s",
             r->norm.ndegenerate ? r->degenerate_why : "x holds NaN or Inf");
    return;
  }
  size_t w = s->W ? s->W->shape[0] : n;
  if (w != n && w != D) {
    snprintf(r->resid_skip, sizeof r->resid_skip,
             "W is %zu x %zu: x needs %zu x %zu (over all of x) or %zu x %zu (per row)", w, w, n, n,
             D, D);
    return;
  }
  r->rn = n;
  r->rw = w;
  r->W = malloc(w * w * sizeof *r->W);
  r->J_pre = malloc(n * n * sizeof *r->J_pre);
  r->J_post = malloc(n * n * sizeof *r->J_post);
  r->J_none = malloc(n * n * sizeof *r->J_none);
  r->sv_pre = malloc(n * sizeof *r->sv_pre);
  r->sv_post = malloc(n * sizeof *r->sv_post);
  if (!r->W || !r->J_pre || !r->J_post || !r->J_none || !r->sv_pre || !r->sv_post) {
    ns_resid_clear(r);
    snprintf(r->resid_skip, sizeof r->resid_skip, "residual Jacobians: out of memory");
    return;
  }
  if (s->W) {
    ns_tensor_read(s->W, r->W);
  } else { /* a random branch of the same scale as x: normal(0, 1/sqrt(w)) */
    ns_rng g;
    ns_rng_seed_u64(&g, s->w_seed + 1);
    for (size_t i = 0; i < w * w; i++) r->W[i] = ns_rng_normal(&g, 0, 1 / sqrt((double)w));
  }
  const char *stage = "J of x + W x";
  if (ns_residual_jacobian(x, spec, r->W, w, NS_PLACE_NONE, r->J_none, e) != 0) goto fail;
  stage = "J of x + W N(x)";
  if (ns_residual_jacobian(x, spec, r->W, w, NS_PLACE_PRE, r->J_pre, e) != 0) goto fail;
  stage = "J of N(x + W x)";
  if (ns_residual_jacobian(x, spec, r->W, w, NS_PLACE_POST, r->J_post, e) != 0) goto fail;
  stage = "singular values";
  if (rank_of(r->J_pre, n, r->sv_pre, &r->rank_pre, e) != 0 ||
      rank_of(r->J_post, n, r->sv_post, &r->rank_post, e) != 0)
    goto fail;
  r->resid_done = 1;
  return;
fail:
  ns_resid_clear(r);
  snprintf(r->resid_skip, sizeof r->resid_skip, "%s failed: %.200s", stage,
           e[0] ? e : "unknown error");
}

void ns_vjp_part(const ns_state *s, const ns_spec *spec, ns_result *r) {
  ns_vjp_clear(r);
  const ns_tensor *x = s->x;
  size_t n = x->n;
  char e[NS_ERRLEN] = "";
  if (n > NS_EXPLORE_PROBE_LIMIT) {
    snprintf(r->vjp_skip, sizeof r->vjp_skip, "backward pass skipped: %zu elements, limit %d", n,
             NS_EXPLORE_PROBE_LIMIT);
    return;
  }
  if (s->upstream && s->upstream->n != n) {
    snprintf(r->vjp_skip, sizeof r->vjp_skip,
             "upstream has %zu values, x has %zu: set upstream = false for a random one",
             s->upstream->n, n);
    return;
  }
  if (r->x_nan || r->x_inf || r->norm.ndegenerate) {
    snprintf(r->vjp_skip, sizeof r->vjp_skip, "backward pass undefined: %s",
             r->norm.ndegenerate ? r->degenerate_why : "x holds NaN or Inf");
    return;
  }
  const ns_norm_plan *p = &r->norm.plan;
  size_t na = p->naffine ? p->naffine : 1;
  r->vn = n;
  r->naffine = na;
  r->g = malloc(n * sizeof *r->g);
  r->dx = malloc(n * sizeof *r->dx);
  r->dx_direct = malloc(n * sizeof *r->dx_direct);
  r->dx_mean = malloc(n * sizeof *r->dx_mean);
  r->dx_var = malloc(n * sizeof *r->dx_var);
  r->dgamma = malloc(na * sizeof *r->dgamma);
  r->dbeta = malloc(na * sizeof *r->dbeta);
  if (!r->g || !r->dx || !r->dx_direct || !r->dx_mean || !r->dx_var || !r->dgamma || !r->dbeta) {
    ns_vjp_clear(r);
    snprintf(r->vjp_skip, sizeof r->vjp_skip, "backward pass: out of memory");
    return;
  }
  if (s->upstream) {
    ns_tensor_read(s->upstream, r->g);
  } else {
    ns_rng g;
    ns_rng_seed_u64(&g, s->w_seed);
    for (size_t i = 0; i < n; i++) r->g[i] = ns_rng_normal(&g, 0, 1);
  }
  ns_vjp_paths paths = {r->dx_direct, r->dx_mean, r->dx_var};
  if (ns_vjp(x, spec, r->g, r->dx, r->dgamma, r->dbeta, &paths, e) != 0) {
    ns_vjp_clear(r);
    snprintf(r->vjp_skip, sizeof r->vjp_skip, "backward pass failed: %.200s",
             e[0] ? e : "unknown error");
    return;
  }
  /* per statistic: sum(dL/dx) (the shift direction) and dL/dx . x_hat (the scale one) */
  double *sum = calloc(p->nstat, sizeof *sum), *dot = calloc(p->nstat, sizeof *dot);
  if (sum && dot) {
    for (size_t i = 0; i < n; i++) {
      size_t k = ns_norm_plan_stat_of(p, i);
      double xhat = (ns_tensor_get(x, i) - r->norm.mean[k]) / r->norm.denom[k];
      sum[k] += r->dx[i];
      dot[k] += r->dx[i] * xhat;
    }
    for (size_t k = 0; k < p->nstat; k++) {
      if (fabs(sum[k]) > r->dx_sum_max) r->dx_sum_max = fabs(sum[k]);
      if (fabs(dot[k]) > r->dx_xhat_max) r->dx_xhat_max = fabs(dot[k]);
    }
  }
  free(sum);
  free(dot);
  r->vjp_done = 1;
  ns_vjp_check_jtg(r);
}

void ns_vjp_check_jtg(ns_result *r) {
  size_t n = r->vn;
  r->vjp_vs_jtg = NAN;
  if (!r->vjp_done || !r->jac_done || r->jn != n || !r->J) return;
  double m = 0;
  for (size_t j = 0; j < n; j++) {
    double t = 0;
    for (size_t i = 0; i < n; i++) t += r->J[i * n + j] * r->g[i];
    double d = fabs(t - r->dx[j]);
    if (d > m || isnan(d)) m = d;
  }
  r->vjp_vs_jtg = m;
}
