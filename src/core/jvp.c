/* jvp.c: J v of a normalization in closed form, and the walks over statistics without
 * index lists that it and the closed-form spectrum use. See jvp.h. */
#include "core/jvp.h"
#include "core/err.h"
#include "core/lanes.h"
#include "core/round.h"
#include "core/split.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The flat elements go line by line along the last axis. Within a line the statistic is
 * constant (the last axis is reduced: step 0) or grows by one per element (it is not:
 * step 1, the last axis is the fastest of the statistic's index too); a grouped last axis
 * (group norm of a matrix) changes group inside a line (step -1: ask the plan each time). */
typedef struct {
  size_t len; /* elements per line */
  int step;
} walk;

static walk walk_of(const ns_norm_plan *p) {
  walk w;
  int last = p->rank - 1;
  w.len = p->shape[last];
  if (last == 1 && p->groups > 1)
    w.step = -1;
  else
    w.step = (p->axes >> last) & 1u ? 0 : 1;
  return w;
}

/* The statistic of the line whose first element has coordinates c (c[last] = 0): the
 * rule of ns_norm_plan_stat_of, without its divisions by every axis (which cost more than a
 * short line itself); line_next steps c to the next line. */
static size_t line_stat(const ns_norm_plan *p, const size_t *c) {
  return ns_norm_plan_stat_at(p, c);
}

static void line_next(const ns_norm_plan *p, size_t *c) {
  for (int a = p->rank - 2; a >= 0; a--) {
    if (++c[a] < p->shape[a]) return;
    c[a] = 0;
  }
}

static size_t stat_at(const ns_norm_plan *p, walk w, size_t i0, size_t k0, size_t a) {
  return w.step >= 0 ? k0 + (size_t)w.step * a : ns_norm_plan_stat_of(p, i0 + a);
}

/* The stored values of x[i0 .. i0+len) as doubles: fp64 storage in place, others read
 * into buf (len doubles). */
static const double *line_values(const ns_tensor *x, size_t i0, size_t len, double *buf) {
  if (x->dtype == NS_FP64) return (const double *)x->data + i0;
  ns_tensor_read_range(x, i0, len, buf);
  return buf;
}

/* ns_stat_moments_exec's work on statistics [klo, khi): every line is walked in order but
 * only the elements of these statistics are read (step 0: a line has one statistic; step 1:
 * a line's elements are consecutive statistics; a grouped walk gets the whole range), so
 * each statistic is summed exactly as by one thread. */
typedef struct {
  const ns_tensor *x;
  const ns_norm_plan *p;
  walk w;
  int center;
  double *mu, *m2;
  atomic_int fail; /* a part could not get its line buffer */
} moments_job;

/* A line of step 1 (element a's statistic is k0 + a): each statistic gets one term, in the
 * line order every walk keeps (round.h: NS_VECTORIZE keeps each sum's bits). */
NS_VECTORIZE static void add_line(double *restrict mu, const double *restrict xv, size_t len) {
  for (size_t a = 0; a < len; a++) mu[a] += xv[a];
}

NS_VECTORIZE static void add_line_sq(double *restrict m2, const double *restrict mu,
                                     const double *restrict xv, size_t len) {
  for (size_t a = 0; a < len; a++) {
    double c = xv[a] - mu[a];
    m2[a] += c * c;
  }
}

static void moments_part(void *ctx, size_t klo, size_t khi) {
  moments_job *j = ctx;
  const ns_tensor *x = j->x;
  const ns_norm_plan *p = j->p;
  const walk w = j->w;
  double *mu = j->mu, *m2 = j->m2;
  double *buf = x->dtype == NS_FP64 ? NULL : malloc(w.len * sizeof *buf);
  if (x->dtype != NS_FP64 && !buf) {
    atomic_store(&j->fail, 1);
    return;
  }
  /* step 0: a line is one statistic's; step 1: statistics k0 .. k0 + len - 1, of which this
     part reads those in [klo, khi) only; step -1 (groups within a line): one part has all */
  for (int pass = j->center ? 0 : 1; pass < 2; pass++) {
    size_t lc[NS_MAXRANK] = {0};
    for (size_t i0 = 0; i0 < x->n; i0 += w.len, line_next(p, lc)) {
      size_t k0 = line_stat(p, lc);
      if (w.step == 0) { /* one statistic per line: sum in order into it */
        if (k0 < klo || k0 >= khi) continue;
        const double *xv = line_values(x, i0, w.len, buf);
        if (pass == 0) {
          double acc = mu[k0];
          for (size_t a = 0; a < w.len; a++) acc += xv[a];
          mu[k0] = acc;
        } else {
          double acc = m2[k0], mk = mu[k0];
          for (size_t a = 0; a < w.len; a++) acc += (xv[a] - mk) * (xv[a] - mk);
          m2[k0] = acc;
        }
      } else if (w.step == 1) {
        size_t a0 = klo > k0 ? klo - k0 : 0, a1 = khi - k0 < w.len ? khi - k0 : w.len;
        if (khi <= k0 || a0 >= a1) continue;
        const double *xv;
        if (x->dtype == NS_FP64)
          xv = (const double *)x->data + i0 + a0;
        else {
          ns_tensor_read_range(x, i0 + a0, a1 - a0, buf);
          xv = buf;
        }
        if (pass == 0)
          add_line(mu + k0 + a0, xv, a1 - a0);
        else
          add_line_sq(m2 + k0 + a0, mu + k0 + a0, xv, a1 - a0);
      } else {
        const double *xv = line_values(x, i0, w.len, buf);
        for (size_t a = 0; a < w.len; a++) {
          size_t k = stat_at(p, w, i0, k0, a);
          if (pass == 0)
            mu[k] += xv[a];
          else {
            double c = xv[a] - mu[k];
            m2[k] += c * c;
          }
        }
      }
    }
    if (pass == 0)
      for (size_t k = klo; k < khi; k++) mu[k] /= (double)p->count;
  }
  free(buf);
}

int ns_stat_moments(const ns_tensor *x, const ns_norm_plan *p, int center, double *mean, double *m2,
                    char *err) {
  return ns_stat_moments_exec(x, p, center, mean, m2, 1, err);
}

int ns_stat_moments_exec(const ns_tensor *x, const ns_norm_plan *p, int center, double *mean,
                         double *m2, int threads, char *err) {
  if (!x || !p || !m2) {
    ns_seterr(err, "stat_moments: %s is NULL", !x ? "input tensor" : !p ? "plan" : "output m2");
    return -1;
  }
  if (p->n != x->n || p->nstat == 0) {
    ns_seterr(err, "stat_moments: the plan is of %zu elements, x has %zu", p->n, x->n);
    return -1;
  }
  moments_job j = {x, p, walk_of(p), center, mean ? mean : malloc(p->nstat * sizeof *j.mu), m2, 0};
  if (!j.mu) {
    ns_seterr(err, "stat_moments: out of memory");
    return -1;
  }
  memset(j.mu, 0, p->nstat * sizeof *j.mu);
  memset(m2, 0, p->nstat * sizeof *m2);
  if (j.w.step >= 0 && threads > 1)
    ns_split_run(p->nstat, threads, moments_part, &j);
  else
    moments_part(&j, 0, p->nstat);
  if (!mean) free(j.mu);
  if (atomic_load(&j.fail)) {
    ns_seterr(err, "stat_moments: out of memory");
    return -1;
  }
  return 0;
}

int ns_stat_moments_some(const ns_tensor *x, const ns_norm_plan *p, int center, const size_t *stats,
                         size_t k, double *mean, double *m2, char *err) {
  if (!x || !p || !m2 || (k && !stats)) {
    ns_seterr(err, "stat_moments: %s is NULL",
              !x    ? "input tensor"
              : !p  ? "plan"
              : !m2 ? "output m2"
                    : "statistic list");
    return -1;
  }
  if (p->n != x->n || p->nstat == 0) {
    ns_seterr(err, "stat_moments: the plan is of %zu elements, x has %zu", p->n, x->n);
    return -1;
  }
  size_t *idx = malloc((p->count ? p->count : 1) * sizeof *idx);
  if (!idx) {
    ns_seterr(err, "stat_moments: out of memory");
    return -1;
  }
  for (size_t q = 0; q < k; q++) {
    size_t s = stats[q];
    if (ns_stat_members(p, s, idx, err) != 0) {
      free(idx);
      return -1;
    }
    /* the sums of ns_stat_moments, in the same index order: the same bits */
    double mu = 0, acc = 0;
    if (center) {
      for (size_t a = 0; a < p->count; a++) mu += ns_tensor_get(x, idx[a]);
      mu /= (double)p->count;
    }
    for (size_t a = 0; a < p->count; a++) {
      double c = ns_tensor_get(x, idx[a]) - mu;
      acc += c * c;
    }
    if (mean) mean[s] = mu;
    m2[s] = acc;
  }
  free(idx);
  return 0;
}

int ns_stat_members(const ns_norm_plan *p, size_t k, size_t *idx, char *err) {
  if (!p || !idx) {
    ns_seterr(err, "stat_members: %s is NULL", !p ? "plan" : "output");
    return -1;
  }
  if (k >= p->nstat) {
    ns_seterr(err, "stat_members: statistic %zu of %zu", k + 1, p->nstat);
    return -1;
  }
  if (p->members) {
    memcpy(idx, p->members + k * p->count, p->count * sizeof *idx);
    return 0;
  }
  /* straight from k's coordinates over the statistics' shape: each axis runs over all of
     itself (reduced), its group's channels (axis 1 of a grouped kind) or k's one value,
     nested in x's order, so the members come in index order. Walking every line of x to
     find them cost two statistics' checks 12 ms of a key over a 64 MB file. */
  size_t lo[NS_MAXRANK], hi[NS_MAXRANK], c[NS_MAXRANK], str[NS_MAXRANK], r = k, st = 1;
  for (int a = p->rank - 1; a >= 0; a--) {
    size_t sc = r % p->stat_shape[a];
    r /= p->stat_shape[a];
    str[a] = st, st *= p->shape[a];
    if (a == 1 && p->groups > 1) {
      size_t cpg = p->shape[1] / p->groups;
      lo[a] = sc * cpg, hi[a] = lo[a] + cpg;
    } else if ((p->axes >> a) & 1u) {
      lo[a] = 0, hi[a] = p->shape[a];
    } else {
      lo[a] = sc, hi[a] = sc + 1;
    }
    c[a] = lo[a];
  }
  size_t got = 0;
  while (got < p->count) {
    size_t i = 0;
    for (int a = 0; a < p->rank; a++) i += c[a] * str[a];
    idx[got++] = i;
    int a = p->rank - 1;
    for (; a >= 0 && ++c[a] == hi[a]; a--) c[a] = lo[a];
    if (a < 0) break;
  }
  if (got != p->count) {
    ns_seterr(err, "stat_members: found %zu members of statistic %zu, expected %zu", got, k + 1,
              p->count);
    return -1;
  }
  return 0;
}

/* The output loop of ns_jvp_n over a line of one statistic (round.h: NS_VECTORIZE keeps
 * each value's bits). The sums stay scalar and in order. */
NS_VECTORIZE static void jvp_line_out(double *restrict jd, const double *restrict vd,
                                      const double *restrict xv, size_t len, double g0, double svk,
                                      double sk, double mk, double qk) {
  for (size_t a = 0; a < len; a++) jd[a] = g0 * ((vd[a] - svk) / sk - (xv[a] - mk) * qk);
}

/* The sums of ns_jvp_n over a line of one statistic (mean mk) for directions d0 .. d0+nd-1
 * (nd <= JVP_SIDE): s1 += v, s2 += (x - mk) v, each direction's two sums in index order,
 * as it alone would add them, and added to sv[d nstat], scv[d nstat]. The directions'
 * chains of additions run side by side, so nd directions cost about one: at 1e6 values a
 * direction alone is a chain of 1e6 dependent additions. */
#define JVP_SIDE 4
static void jvp_line_sums(const double *const *v, int d0, int nd, size_t i0,
                          const double *restrict xv, size_t len, double mk, double *sv, double *scv,
                          size_t nstat) {
  /* four named pairs of sums (an array of them stayed in memory, a store per addition);
     with fewer directions the spare lanes repeat the first and are dropped */
  const double *p[JVP_SIDE];
  double s1[JVP_SIDE], s2[JVP_SIDE];
  for (int q = 0; q < JVP_SIDE; q++) {
    int d = d0 + (q < nd ? q : 0);
    p[q] = v[d] + i0, s1[q] = sv[(size_t)d * nstat], s2[q] = scv[(size_t)d * nstat];
  }
  const double *restrict p0 = p[0], *restrict p1 = p[1], *restrict p2 = p[2], *restrict p3 = p[3];
  double a0 = s1[0], a1 = s1[1], a2 = s1[2], a3 = s1[3];
  double b0 = s2[0], b1 = s2[1], b2 = s2[2], b3 = s2[3];
  for (size_t a = 0; a < len; a++) {
    double c = xv[a] - mk;
    a0 += p0[a], b0 += c * p0[a];
    a1 += p1[a], b1 += c * p1[a];
    a2 += p2[a], b2 += c * p2[a];
    a3 += p3[a], b3 += c * p3[a];
  }
  s1[0] = a0, s1[1] = a1, s1[2] = a2, s1[3] = a3;
  s2[0] = b0, s2[1] = b1, s2[2] = b2, s2[3] = b3;
  for (int q = 0; q < nd; q++)
    sv[(size_t)(d0 + q) * nstat] = s1[q], scv[(size_t)(d0 + q) * nstat] = s2[q];
}

static int all_finite(const double *v, size_t n, size_t *bad) {
  /* x - x is 0 for a finite x and NaN otherwise: one test per block of 64 (eight sums side
     by side: one chain of 64 additions made this scan cost as much as the sums of J v),
     then the block's first bad element */
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    double s[8] = {0};
    for (size_t a = 0; a < 64; a += 8)
      for (int q = 0; q < 8; q++) s[q] += v[i + a + q] - v[i + a + q];
    double t = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    if (t != 0 || t != t) break;
  }
  for (; i < n; i++)
    if (!isfinite(v[i])) {
      *bad = i;
      return 0;
    }
  return 1;
}

int ns_jvp(const ns_tensor *x, const ns_spec *spec, const double *v, double *jv, char *err) {
  if (!x || !spec || !v || !jv) { /* ns_jvp_n would name v "vector 1" */
    ns_seterr(err, "jvp: %s is NULL",
              !x      ? "input tensor"
              : !spec ? "spec"
              : !v    ? "vector v"
                      : "output jv");
    return -1;
  }
  return ns_jvp_n(x, spec, 1, &v, &jv, err);
}

/* The output loop of one line of one statistic split over threads by element: each value
 * is computed as on one thread. */
typedef struct {
  double *const *jv;
  const double *const *v;
  const double *xv, *sv, *scv, *denom, *mean;
  double g0;
  size_t nstat, k0, len;
  int nv;
} jvp_out_job;

static void jvp_out_part(void *ctx, size_t a, size_t z) {
  const jvp_out_job *o = ctx;
  for (int d = 0; d < o->nv; d++) {
    size_t dk = (size_t)d * o->nstat + o->k0;
    jvp_line_out(o->jv[d] + a, o->v[d] + a, o->xv + a, z - a, o->g0, o->sv[dk], o->denom[o->k0],
                 o->mean[o->k0], o->scv[dk]);
  }
}

/* The residuals of one line of one statistic: part q of every direction (lanes.h), each
 * J v value as jvp_line_out computes it (the same text), squared against lambda v. */
typedef struct {
  const jvp_out_job *o;
  const double *lambda;
  double s[3][NS_LANE_PARTS];
  int nv;
} jvp_res_job;

#define JVP_VAL(v, x) (g0 * (((v)-svk) / sk - ((x)-mk) * qk))
static void jvp_res_part(void *ctx, size_t qa, size_t qz) {
  jvp_res_job *rj = ctx;
  const jvp_out_job *o = rj->o;
  for (size_t q = qa; q < qz; q++)
    for (int d = 0; d < rj->nv; d++) {
      size_t dk = (size_t)d * o->nstat + o->k0;
      const double g0 = o->g0, svk = o->sv[dk], sk = o->denom[o->k0], mk = o->mean[o->k0];
      const double qk = o->scv[dk], lv = rj->lambda[d];
      const double *restrict vd = o->v[d], *restrict xv = o->xv;
      size_t i = NS_LANE_LO(q, o->len), hi = NS_LANE_LO(q + 1, o->len);
      ns_v2 sa = {0, 0}, sb = {0, 0};
      for (; i + 4 <= hi; i += 4) {
        ns_v2 va = ns_v2_ld(vd + i), vb = ns_v2_ld(vd + i + 2);
        ns_v2 fa = JVP_VAL(va, ns_v2_ld(xv + i)) - lv * va;
        ns_v2 fb = JVP_VAL(vb, ns_v2_ld(xv + i + 2)) - lv * vb;
        sa += fa * fa, sb += fb * fb;
      }
      for (; i < hi; i++) {
        double f = JVP_VAL(vd[i], xv[i]) - lv * vd[i];
        sa[0] += f * f;
      }
      rj->s[d][q] = ns_v2_sum4(sa, sb);
    }
}
#undef JVP_VAL

/* The first direction (from d) with a value that is not finite, and that value: -1 if none. */
static int first_bad(const double *const *v, int d, int nv, size_t n, size_t *bad) {
  for (; d < nv; d++)
    if (!all_finite(v[d], n, bad)) return d;
  return -1;
}

static void bad_vector(char *err, const char *fn, int d, int nv, size_t i) {
  if (nv == 1)
    ns_seterr(err, "%s: element %zu of v is not finite", fn, i + 1);
  else
    ns_seterr(err, "%s: element %zu of vector %d is not finite", fn, i + 1, d + 1);
}

int ns_jvp_n(const ns_tensor *x, const ns_spec *spec, int nv, const double *const *v,
             double *const *jv, char *err) {
  return ns_jvp_n_m2(x, spec, NULL, NULL, nv, v, 1, jv, err);
}

/* ns_jvp_n_m2, or with lambda and res set ns_jvp_resid (jv NULL) */
static int jvp_run(const ns_tensor *x, const ns_spec *spec, const double *mean, const double *m2,
                   int nv, const double *const *v, int threads, double *const *jv,
                   const double *lambda, double *res, char *err);

int ns_jvp_n_m2(const ns_tensor *x, const ns_spec *spec, const double *mean, const double *m2,
                int nv, const double *const *v, int threads, double *const *jv, char *err) {
  if (!jv) {
    ns_seterr(err, "jvp: the vector arrays are NULL");
    return -1;
  }
  return jvp_run(x, spec, mean, m2, nv, v, threads, jv, NULL, NULL, err);
}

int ns_jvp_resid(const ns_tensor *x, const ns_spec *spec, const double *mean, const double *m2,
                 int nv, const double *const *v, const double *lambda, int threads, double *res,
                 char *err) {
  if (!lambda || !res || nv > 3) {
    ns_seterr(err, "jvp_resid: %s", nv > 3 ? "at most 3 directions" : "lambda or res is NULL");
    return -1;
  }
  return jvp_run(x, spec, mean, m2, nv, v, threads, NULL, lambda, res, err);
}

static int jvp_run(const ns_tensor *x, const ns_spec *spec, const double *mean, const double *m2,
                   int nv, const double *const *v, int threads, double *const *jv,
                   const double *lambda, double *res, char *err) {
  const char *fn = res ? "jvp_resid" : "jvp";
  if (!x || !spec || !v || nv < 1) {
    ns_seterr(err, "%s: %s", fn,
              !x       ? "input tensor is NULL"
              : !spec  ? "spec is NULL"
              : nv < 1 ? "no vector to multiply"
                       : "the vector arrays are NULL");
    return -1;
  }
  for (int d = 0; d < nv; d++)
    if (!v[d] || (!res && !jv[d])) {
      ns_seterr(err, "%s: %s %d is NULL", fn, !v[d] ? "vector" : "output", d + 1);
      return -1;
    }
  if (ns_mask_unsupported(spec, fn, err)) return -1;
  if (ns_spec_prepare(fn, x, spec, NULL, 0, err) != 0) return -1;
  size_t n = x->n;
  /* A value of v that is not finite: in eval mode found here; in train mode from the sums
   * of v (a NaN or an infinity makes its statistic's sum of v not finite), so the vectors
   * are not read once more for it (at 1e6 values, a tenth of the spectrum check's JVP).
   * The same message either way: the first such direction's first such element. */
  int eval = ns_spec_eval_running(spec, x->rank), center = ns_spec_center(spec);
  if (eval) {
    size_t i;
    int d = first_bad(v, 0, nv, n, &i);
    if (d >= 0) {
      bad_vector(err, fn, d, nv, i);
      return -1;
    }
  }
  /* The statistics in double: in train mode the two-pass moments in index order, which is
   * what ns_normalize computes in fp64 (mean = sum/m, var = m2/(m - ddof)); in eval mode
   * the running ones, as ns_normalize resolves them (from an fp64 copy of x). */
  ns_norm_result r;
  memset(&r, 0, sizeof r);
  ns_norm_plan plan;
  memset(&plan, 0, sizeof plan);
  ns_tensor *xt = NULL;
  double *sv = NULL, *scv = NULL, *buf = NULL;
  int rc = -1;
  const ns_norm_plan *p = &plan;
  if (eval) {
    ns_spec s = *spec;
    s.dtype = NS_FP64;
    s.acc = NS_FP64;
    if (!(xt = ns_tensor_new(x->rank, x->shape, NS_FP64, err))) goto out;
    ns_tensor_read(x, (double *)xt->data);
    if (ns_normalize(xt, &s, &r, err) != 0) goto out;
    p = &r.plan;
  } else {
    if (ns_spec_prepare(fn, x, spec, &plan, 0, err) != 0) goto out;
    r.mean = malloc(plan.nstat * sizeof *r.mean);
    r.var = malloc(plan.nstat * sizeof *r.var);
    r.denom = malloc(plan.nstat * sizeof *r.denom);
    if (!r.mean || !r.var || !r.denom) {
      ns_seterr(err, "%s: out of memory", fn);
      goto out;
    }
    if (mean && m2) { /* the caller's ns_stat_moments: the same values */
      memcpy(r.mean, mean, plan.nstat * sizeof *r.mean);
      memcpy(r.var, m2, plan.nstat * sizeof *r.var);
    } else if (ns_stat_moments(x, &plan, center, r.mean, r.var, err) != 0)
      goto out;
    for (size_t k = 0; k < plan.nstat; k++) {
      r.var[k] /= (double)plan.count - spec->ddof;
      r.denom[k] =
          spec->eps_at == NS_EPS_STD ? sqrt(r.var[k]) + spec->eps : sqrt(r.var[k] + spec->eps);
    }
  }
  size_t nstat = p->nstat, m = p->count;
  int gconst = !spec->gamma || spec->ngamma == 1;
  double g0 = !spec->gamma ? 1.0 : spec->gamma[0];
  walk w = walk_of(p);
  if (res && (eval || nstat != 1 || w.step != 0 || w.len != n || !gconst)) {
    ns_seterr(err, "%s: x must be one statistic in train mode with one gamma", fn);
    goto out;
  }
  /* direction d's sums per statistic at sv[d nstat + k], scv[d nstat + k] */
  sv = calloc(nstat * (size_t)nv, sizeof *sv);
  scv = calloc(nstat * (size_t)nv, sizeof *scv);
  buf = malloc(w.len * sizeof *buf);
  if (!sv || !scv || !buf) {
    ns_seterr(err, "%s: out of memory", fn);
    goto out;
  }
  /* Every direction's arithmetic is that of ns_jvp on it alone, in the same order: the
   * directions only share the statistics and the walk, so J v_d has the same bits whatever
   * nv. A line of one statistic (step 0) keeps its two sums in locals, which add the same
   * terms in the same order as adding to sv[k] itself. */
  if (!eval) { /* sum(v) and sum(c v) per statistic */
    size_t lc[NS_MAXRANK] = {0};
    for (size_t i0 = 0; i0 < n; i0 += w.len, line_next(p, lc)) {
      size_t k0 = line_stat(p, lc);
      const double *xv = line_values(x, i0, w.len, buf);
      if (w.step == 0) { /* up to JVP_SIDE directions' sums in one pass, side by side */
        for (int d0 = 0; d0 < nv; d0 += JVP_SIDE)
          jvp_line_sums(v, d0, nv - d0 < JVP_SIDE ? nv - d0 : JVP_SIDE, i0, xv, w.len, r.mean[k0],
                        sv + k0, scv + k0, nstat);
        continue;
      }
      for (int d = 0; d < nv; d++) {
        const double *vd = v[d] + i0;
        double *svd = sv + (size_t)d * nstat, *scvd = scv + (size_t)d * nstat;
        for (size_t a = 0; a < w.len; a++) {
          size_t k = stat_at(p, w, i0, k0, a);
          svd[k] += vd[a];
          scvd[k] += (xv[a] - r.mean[k]) * vd[a];
        }
      }
    }
  }
  if (!eval) /* sums not finite: a value of v that is not, or sums that overflowed */
    for (int d = 0; d < nv; d++) {
      const double *svd = sv + (size_t)d * nstat, *scvd = scv + (size_t)d * nstat;
      size_t k = 0, i;
      while (k < nstat && isfinite(svd[k]) && isfinite(scvd[k])) k++;
      if (k == nstat) continue;
      int bad = first_bad(v, d, nv, n, &i);
      if (bad >= 0) {
        bad_vector(err, fn, bad, nv, i);
        goto out;
      }
      break; /* every value finite: no later direction has one either */
    }
  double dof = (double)m - spec->ddof;
  for (size_t k = 0; k < nstat; k++) {
    /* reuse the two arrays: sv becomes the subtracted mean of v, scv the factor q sum(c v) */
    double q = 0, sd = r.denom[k];
    if (!eval) {
      if (spec->eps_at == NS_EPS_STD) {
        double st = sqrt(r.var[k]);
        q = st > 0 ? 1.0 / (dof * st * sd * sd) : 0.0;
      } else {
        q = 1.0 / (dof * sd * sd * sd);
      }
    }
    for (int d = 0; d < nv; d++) {
      size_t dk = (size_t)d * nstat + k;
      sv[dk] = !eval && center ? sv[dk] / (double)m : 0.0;
      scv[dk] *= q;
    }
  }
  size_t lc2[NS_MAXRANK] = {0};
  for (size_t i0 = 0; i0 < n; i0 += w.len, line_next(p, lc2)) {
    size_t k0 = line_stat(p, lc2);
    const double *xv = line_values(x, i0, w.len, buf);
    for (int d = 0; d < nv; d++) {
      const double *vd = v[d] + i0;
      double *jd = res ? NULL : jv[d] + i0;
      const double *svd = sv + (size_t)d * nstat, *scvd = scv + (size_t)d * nstat;
      if (res) { /* the residuals alone: one line of one statistic (checked above) */
        jvp_out_job o = {NULL, v, xv, sv, scv, r.denom, r.mean, g0, nstat, k0, n, nv};
        jvp_res_job rj = {&o, lambda, {{0}}, nv};
        ns_split_run(NS_LANE_PARTS, n >= ((size_t)1 << 16) ? threads : 1, jvp_res_part, &rj);
        for (int e = 0; e < nv; e++) {
          res[e] = 0;
          for (int q = 0; q < NS_LANE_PARTS; q++) res[e] += rj.s[e][q];
        }
        break;
      }
      if (w.step == 0 && gconst && w.len == n && threads > 1 && n >= ((size_t)1 << 16)) {
        /* one line of one statistic: its elements over the threads, every direction */
        jvp_out_job o = {jv, v, xv, sv, scv, r.denom, r.mean, g0, nstat, k0, n, nv};
        ns_split_run(n, threads, jvp_out_part, &o);
        break;
      }
      if (w.step == 0 && gconst) {
        const double svk = svd[k0], sk = r.denom[k0], mk = r.mean[k0], qk = scvd[k0];
        jvp_line_out(jd, vd, xv, w.len, g0, svk, sk, mk, qk);
        continue;
      }
      for (size_t a = 0; a < w.len; a++) {
        size_t i = i0 + a, k = stat_at(p, w, i0, k0, a);
        double g = gconst ? g0 : ns_spec_gamma(spec, p, i);
        jd[a] = g * ((vd[a] - svd[k]) / r.denom[k] - (xv[a] - r.mean[k]) * scvd[k]);
      }
    }
  }
  rc = 0;
out:
  free(sv);
  free(scv);
  free(buf);
  if (!eval) { /* the arrays were ours, not a normalize result's */
    free(r.mean), free(r.var), free(r.denom);
    r.mean = r.var = r.denom = NULL;
  }
  ns_norm_result_free(&r);
  ns_norm_plan_free(&plan);
  ns_tensor_free(xt);
  return rc;
}
