/* jvp.h: the Jacobian-vector product J v of a normalization in closed form, and the
 * per-statistic walks it and the O(n) closed-form spectrum (spectrum.h) share. Nothing
 * here forms the n x n Jacobian or the plan's per-element index lists, so every function
 * works at any size (a 1e6-element vector, a 16M-element activation tensor).
 *
 * Ownership: the caller owns every array; nothing is kept. All functions return 0, or -1
 * with err.
 *
 *   double *jv = malloc(x->n * sizeof *jv);
 *   if (ns_jvp(x, &spec, v, jv, err) == 0) { ... jv[i] = (J v)_i ... }
 *
 * Per statistic (m members, c = x - mean (x uncentered), s = denom, dof = m - ddof,
 * g = gamma, vbar = mean of v over the members (0 uncentered)), train mode:
 *   (J v)_i = g_i [ (v_i - vbar) / s - c_i q sum(c v) ]
 *   q = 1/(dof s^3) (eps at var), 1/(dof sd s^2) (eps at std, sd = sqrt(var); 0 at sd = 0)
 * which is row i of jacobian.h's J times v. Eval mode of a batch kind: (J v)_i = g_i v_i / s.
 */
#ifndef NS_JVP_H
#define NS_JVP_H

#include <stddef.h>

#include "core/normalize.h"

/* J v for y = ns_normalize(x, spec) at x's stored values, in double whatever spec->dtype
 * (the exact map, as ns_jacobian_analytic); v and jv have x->n values in x's order. The
 * statistics come from ns_normalize of an fp64 copy (memory: two n-double arrays). */
int ns_jvp(const ns_tensor *x, const ns_spec *spec, const double *v, double *jv, char *err);
/* J v_d for nv directions at once (v[d], jv[d]: x->n values each): the statistics and each
 * walk over x are shared, and J v_d has the bits of ns_jvp(x, spec, v[d], jv[d]) whatever
 * nv (ns_jvp is the case nv = 1). */
int ns_jvp_n(const ns_tensor *x, const ns_spec *spec, int nv, const double *const *v,
             double *const *jv, char *err);
/* ns_jvp_n with the train-mode statistics given: mean and m2 as ns_stat_moments(x, plan of
 * spec, center of spec) writes them (both NULL, or eval mode: computed here). The same
 * bits, one walk over x fewer. threads > 1 splits the output of one long line (x of one
 * statistic, from 2^16 values) over that many threads by element: the same bits. */
int ns_jvp_n_m2(const ns_tensor *x, const ns_spec *spec, const double *mean, const double *m2,
                int nv, const double *const *v, int threads, double *const *jv, char *err);
/* ns_jvp_n_m2's products reduced to their residuals against given values, for x of one
 * statistic in train mode with one gamma (the spectrum check's block; an error otherwise):
 * res[d] = ||J v_d - lambda[d] v_d||_2^2, each value of J v_d the bits ns_jvp_n_m2 gives
 * it, the sum over fixed parts of the values (core/lanes.h): the same bits on any thread
 * count. nv <= 3. No n-value output: at 1e6 values the products were 24 MB written and
 * read back. */
int ns_jvp_resid(const ns_tensor *x, const ns_spec *spec, const double *mean, const double *m2,
                 int nv, const double *const *v, const double *lambda, int threads, double *res,
                 char *err);

/* Per-statistic moments of x's stored values under plan p (from ns_norm_plan_shape or
 * _make for x's shape), in fp64, two passes, each sum in index order: mean[k] (0 when
 * center is 0) and m2[k] = sum (x - mean)^2 over the members (p->nstat values each; mean
 * may be NULL). O(n) time, O(nstat) memory. */
int ns_stat_moments(const ns_tensor *x, const ns_norm_plan *p, int center, double *mean, double *m2,
                    char *err);
/* ns_stat_moments with the statistics split over threads (when each line along the last
 * axis belongs to one statistic; else one thread): the same bits whatever the count. */
int ns_stat_moments_exec(const ns_tensor *x, const ns_norm_plan *p, int center, double *mean,
                         double *m2, int threads, char *err);
/* The same for statistics stats[0..k) only, into mean[stats[i]] and m2[stats[i]] (the other
 * entries untouched): the same bits as ns_stat_moments, in O(n / last axis + k count)
 * time and O(count) memory. For updating the m2 of the statistics a cell edit touched. */
int ns_stat_moments_some(const ns_tensor *x, const ns_norm_plan *p, int center, const size_t *stats,
                         size_t k, double *mean, double *m2, char *err);

/* The flat indices of statistic k's members in index order into idx (p->count values).
 * O(n) time, no lists. */
int ns_stat_members(const ns_norm_plan *p, size_t k, size_t *idx, char *err);

#endif
