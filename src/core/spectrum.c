/* spectrum.c: the labelled spectrum of a normalization's Jacobian, in closed form and
 * numerically (the LAPACK wrappers it uses are in linalg.c). */
#include "core/spectrum.h"
#include "core/err.h"
#include "core/jvp.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ns_label_name(ns_label l) {
  switch (l) {
  case NS_LABEL_ONES:
    return "ones";
  case NS_LABEL_RADIAL:
    return "radial";
  case NS_LABEL_BULK:
    return "bulk";
  case NS_LABEL_MASKED:
    return "masked";
  }
  return "?";
}

/* ---- labelled spectra ------------------------------------------------------------ */

/* Eigenvalues closer than this are one value (merged, or one cluster for labelling):
 * generous enough to absorb LAPACK's rounding and the ~1e-10 noise of a
 * finite-difference Jacobian, far tighter than any gap the closed form predicts. */
static double merge_tol(const ns_eig *e, size_t k, double noise) {
  double mx = 0;
  for (size_t i = 0; i < k; i++)
    if (isfinite(e[i].value)) mx = fmax(mx, hypot(e[i].value, e[i].imag));
  return 1e-8 * mx + noise + 1e-12;
}

/* NaN sorts after everything; otherwise ascending. */
static int cmp_num(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) - isnan(b);
  return (a > b) - (a < b);
}

static int cmp_label_first(const void *pa, const void *pb) {
  const ns_eig *a = pa, *b = pb;
  if (a->label != b->label) return a->label < b->label ? -1 : 1;
  int c = cmp_num(a->value, b->value);
  return c ? c : cmp_num(a->imag, b->imag);
}

static int cmp_value_first(const void *pa, const void *pb) {
  const ns_eig *a = pa, *b = pb;
  int c = cmp_num(a->value, b->value);
  if (c) return c;
  c = cmp_num(a->imag, b->imag);
  if (c) return c;
  return (a->label > b->label) - (a->label < b->label);
}

static int near(double a, double b, double tol) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  if (a == b) return 1; /* also equal infinities */
  return fabs(a - b) <= tol;
}

/* Merges entries of equal label whose values agree within tol (each group keeps its
 * first, smallest value and sums the multiplicities), sorts by value, and copies them
 * to out. Returns the count, or -1 when out holds fewer than needed. */
static int merge_out(ns_eig *e, size_t k, double noise, ns_eig *out, size_t cap, const char *fn,
                     char *err) {
  double tol = merge_tol(e, k, noise);
  qsort(e, k, sizeof *e, cmp_label_first);
  size_t w = 0;
  for (size_t i = 0; i < k; i++) {
    if (w > 0 && e[w - 1].label == e[i].label && near(e[w - 1].value, e[i].value, tol) &&
        near(e[w - 1].imag, e[i].imag, tol)) {
      e[w - 1].mult += e[i].mult;
      continue;
    }
    e[w++] = e[i];
  }
  qsort(e, w, sizeof *e, cmp_value_first);
  /* values equal within tol but of different labels (the ones and radial zeros when
   * eps = 0) are ordered by label, so rounding noise never decides the order */
  for (size_t lo = 0, hi; lo < w; lo = hi) {
    for (hi = lo + 1;
         hi < w && near(e[hi].value, e[lo].value, tol) && near(e[hi].imag, e[lo].imag, tol); hi++)
      ;
    if (hi - lo > 1) qsort(e + lo, hi - lo, sizeof *e, cmp_label_first);
  }
  if (w > cap) {
    ns_seterr(err, "%s: %zu distinct eigenvalues do not fit in an output of %zu", fn, w, cap);
    return -1;
  }
  memcpy(out, e, w * sizeof *e);
  return (int)w;
}

/* Shared set-up: argument checks and the reduction plan. */
static int prepare(const char *fn, const ns_tensor *x, const ns_spec *spec, const void *out,
                   ns_norm_plan *p, char *err) {
  memset(p, 0, sizeof *p);
  if (!x || !spec || !out) {
    ns_seterr(err, "%s: %s is NULL", fn, !x ? "input tensor" : !spec ? "spec" : "output array");
    return -1;
  }
  return ns_spec_prepare(fn, x, spec, p, 1, err);
}

/* Per-statistic centred values c[0..m-1] of xv over members mem, and the denominator
 * s (returned). */
static double stat_denom(const double *xv, const size_t *mem, size_t m, const ns_spec *spec,
                         int center, double *c) {
  double mean = 0, ss = 0;
  if (center) {
    for (size_t a = 0; a < m; a++) mean += xv[mem[a]];
    mean /= (double)m;
  }
  for (size_t a = 0; a < m; a++) {
    c[a] = xv[mem[a]] - mean;
    ss += c[a] * c[a];
  }
  double var = ss / ((double)m - spec->ddof);
  return spec->eps_at == NS_EPS_STD ? sqrt(var) + spec->eps : sqrt(var + spec->eps);
}

/* The denominator of a statistic from its m2 (the same arithmetic as stat_denom). */
static double denom_of_m2(double m2, size_t m, const ns_spec *spec) {
  double var = m2 / ((double)m - spec->ddof);
  return spec->eps_at == NS_EPS_STD ? sqrt(var) + spec->eps : sqrt(var + spec->eps);
}

/* Eval-mode denominators per statistic as ns_normalize resolves them (fp64, running
 * statistics). */
static int eval_denoms(const ns_tensor *x, const ns_spec *spec, double *denom, char *err) {
  ns_spec s = *spec;
  s.dtype = NS_FP64;
  s.acc = NS_FP64;
  ns_tensor *xt = ns_tensor_new(x->rank, x->shape, NS_FP64, err);
  if (!xt) return -1;
  ns_tensor_read(x, (double *)xt->data);
  ns_norm_result r;
  memset(&r, 0, sizeof r);
  int rc = ns_normalize(xt, &s, &r, err);
  if (rc == 0) memcpy(denom, r.denom, r.plan.nstat * sizeof *denom);
  ns_norm_result_free(&r);
  ns_tensor_free(xt);
  return rc;
}

/* gamma of each statistic into g (nstat values) when it is constant over the statistic's
 * members; returns 0 when it is not (no closed form), 1 when it is. Without gamma, or a
 * broadcast one, O(nstat); otherwise one walk over the elements. */
static int gamma_per_stat(const ns_spec *spec, const ns_norm_plan *p, double *g) {
  if (!spec->gamma || spec->ngamma == 1) {
    double g0 = spec->gamma ? spec->gamma[0] : 1.0;
    for (size_t k = 0; k < p->nstat; k++) g[k] = g0;
    return 1;
  }
  unsigned char *seen = calloc(p->nstat, 1);
  if (!seen) return -1;
  int ok = 1;
  for (size_t i = 0; i < p->n && ok; i++) {
    size_t k = ns_norm_plan_stat_of(p, i);
    double gi = ns_spec_gamma(spec, p, i);
    if (!seen[k])
      g[k] = gi, seen[k] = 1;
    else if (g[k] != gi)
      ok = 0;
  }
  free(seen);
  return ok;
}

int ns_spectrum_closed_m2(const ns_tensor *x, const ns_spec *spec, const double *m2, ns_eig *out,
                          size_t cap, char *err) {
  static const char fn[] = "spectrum";
  if (spec && spec->mask) return ns_spectrum_closed_masked(x, spec, out, cap, err);
  ns_norm_plan p;
  memset(&p, 0, sizeof p);
  if (!x || !spec || !out) {
    ns_seterr(err, "%s: %s is NULL", fn, !x ? "input tensor" : !spec ? "spec" : "output array");
    return -1;
  }
  if (ns_spec_prepare(fn, x, spec, &p, 0, err) != 0) return -1;
  size_t m = p.count, nstat = p.nstat, k = 0;
  int center = ns_spec_center(spec), rc = -1;
  ns_eig *e = malloc(3 * nstat * sizeof *e);
  double *g = malloc(nstat * sizeof *g), *s = malloc(nstat * sizeof *s);
  double *own = m2 ? NULL : malloc(nstat * sizeof *own);
  if (!e || !g || !s || (!m2 && !own)) {
    ns_seterr(err, "%s: out of memory", fn);
    goto done;
  }
  int gc = gamma_per_stat(spec, &p, g);
  if (gc < 0) {
    ns_seterr(err, "%s: out of memory", fn);
    goto done;
  }
  if (ns_spec_eval_running(spec, x->rank)) {
    /* J = diag(g_i / s_i): every direction is bulk, one value per statistic when gamma is
     * constant on it (a batch kind's gamma is per channel, so it is) */
    if (!gc) { /* gamma varies within a statistic: one entry per element */
      double *d = malloc(nstat * sizeof *d);
      ns_eig *pe = malloc(x->n * sizeof *pe);
      if (!d || !pe || eval_denoms(x, spec, d, err)) {
        if (!d || !pe) ns_seterr(err, "%s: out of memory", fn);
        free(d), free(pe);
        goto done;
      }
      for (size_t i = 0; i < x->n; i++)
        pe[i] = (ns_eig){ns_spec_gamma(spec, &p, i) / d[ns_norm_plan_stat_of(&p, i)], 0,
                         NS_LABEL_BULK, 1};
      rc = merge_out(pe, x->n, 0, out, cap, fn, err);
      free(d), free(pe);
      goto done;
    }
    if (eval_denoms(x, spec, s, err)) goto done;
    for (size_t st = 0; st < nstat; st++)
      e[k++] = (ns_eig){g[st] / s[st], 0, NS_LABEL_BULK, (int)m};
    rc = merge_out(e, k, 0, out, cap, fn, err);
    goto done;
  }
  if (!gc) { /* no closed form: J is not g times a symmetric block */
    rc = 0;
    goto done;
  }
  if (!m2) {
    if (ns_stat_moments(x, &p, center, NULL, own, err)) goto done;
    m2 = own;
  }
  for (size_t st = 0; st < nstat; st++) {
    double sd = denom_of_m2(m2[st], m, spec), gs = g[st];
    /* radial: J c = g eps/s^3 c (eps in the sqrt) or g eps/s^2 c (eps added to the std) */
    double radial =
        spec->eps_at == NS_EPS_STD ? gs * spec->eps / (sd * sd) : gs * spec->eps / (sd * sd * sd);
    radial += 0.0; /* -0 (negative gamma, eps 0) shows as 0 */
    size_t nbulk = center ? (m >= 2 ? m - 2 : 0) : m - 1;
    if (center) e[k++] = (ns_eig){0.0, 0, NS_LABEL_ONES, 1};
    if (!center || m >= 2) e[k++] = (ns_eig){radial, 0, NS_LABEL_RADIAL, 1};
    if (nbulk) e[k++] = (ns_eig){gs / sd, 0, NS_LABEL_BULK, (int)nbulk};
  }
  rc = merge_out(e, k, 0, out, cap, fn, err);
done:
  free(e), free(g), free(s), free(own);
  ns_norm_plan_free(&p);
  return rc;
}

int ns_spectrum_closed(const ns_tensor *x, const ns_spec *spec, ns_eig *out, size_t cap,
                       char *err) {
  return ns_spectrum_closed_m2(x, spec, NULL, out, cap, err);
}

/* ---- the closed form checked along its eigenvectors, without J ------------------ */

/* ||a - lambda b||_2 over m values. */
static double resid2(const double *a, double lambda, const double *b, size_t m) {
  double ss = 0;
  for (size_t i = 0; i < m; i++) {
    double d = a[i] - lambda * b[i];
    ss += d * d;
  }
  return sqrt(ss);
}

static double norm2(const double *v, size_t m) {
  double ss = 0;
  for (size_t i = 0; i < m; i++) ss += v[i] * v[i];
  return sqrt(ss);
}

/* v -= (v . u) u for the unit u whose every entry is c (the ones vector), as orth computes
 * it with u stored */
static void orth_const(double *v, double c, size_t m) {
  double d = 0;
  for (size_t i = 0; i < m; i++) d += v[i] * c;
  for (size_t i = 0; i < m; i++) v[i] -= d * c;
}

/* v -= (v . u) u for a unit u. */
static void orth(double *v, const double *u, size_t m) {
  double d = 0;
  for (size_t i = 0; i < m; i++) d += v[i] * u[i];
  for (size_t i = 0; i < m; i++) v[i] -= d * u[i];
}

int ns_stat_block(const ns_tensor *x, const ns_spec *spec, size_t stat, ns_tensor **out,
                  ns_spec *out_spec, double *g, char *err) {
  static const char fn[] = "stat_block";
  if (!x || !spec || !out || !out_spec || !g) {
    ns_seterr(err, "%s: %s is NULL", fn, !x ? "input tensor" : !spec ? "spec" : "an output");
    return -1;
  }
  if (ns_mask_unsupported(spec, fn, err)) return -1;
  *out = NULL;
  ns_norm_plan p;
  if (ns_spec_prepare(fn, x, spec, &p, 0, err) != 0) return -1;
  if (stat >= p.nstat) {
    ns_seterr(err, "%s: statistic %zu of %zu", fn, stat + 1, p.nstat);
    return -1;
  }
  if (ns_spec_eval_running(spec, x->rank)) return 0; /* J is diagonal: no block map */
  size_t m = p.count;
  int center = ns_spec_center(spec), rc = -1;
  size_t *idx = malloc(m * sizeof *idx);
  if (!idx) {
    ns_seterr(err, "%s: out of memory", fn);
    goto done;
  }
  if (ns_stat_members(&p, stat, idx, err)) goto done;
  *g = ns_spec_gamma(spec, &p, idx[0]);
  if (spec->gamma && spec->ngamma > 1) /* one gamma is constant everywhere */
    for (size_t a = 1; a < m; a++)
      if (ns_spec_gamma(spec, &p, idx[a]) != *g) { /* no closed form on this statistic */
        rc = 0;
        goto done;
      }
  size_t shape1[1] = {m};
  /* the values straight into the block's fp64 tensor (no zeroed copy filled element by
     element): at 1e6 members that copy was a tenth of the check */
  if (!(*out = ns_tensor_new_uninit(1, shape1, NS_FP64, err))) goto done;
  double *xk = (*out)->data;
  if (x->dtype == NS_FP64) {
    const double *xv = x->data;
    for (size_t a = 0; a < m; a++) xk[a] = xv[idx[a]];
  } else
    for (size_t a = 0; a < m; a++) xk[a] = ns_tensor_get(x, idx[a]);
  ns_spec_default(out_spec);
  out_spec->kind = center ? NS_KIND_LAYER : NS_KIND_RMS;
  out_spec->center = center;
  out_spec->eps = spec->eps;
  out_spec->eps_at = spec->eps_at;
  out_spec->ddof = spec->ddof;
  out_spec->gamma = g;
  out_spec->ngamma = 1;
  rc = 1;
done:
  free(idx);
  ns_norm_plan_free(&p);
  return rc;
}

int ns_spectrum_check(const ns_tensor *x, const ns_spec *spec, size_t stat, ns_eigcheck *out,
                      int cap, char *err) {
  static const char fn[] = "spectrum_check";
  if (!x || !spec || !out || cap < 3) {
    ns_seterr(err, "%s: %s", fn,
              !x      ? "input tensor is NULL"
              : !spec ? "spec is NULL"
              : !out  ? "output array is NULL"
                      : "the output needs room for 3 checks");
    return -1;
  }
  if (ns_mask_unsupported(spec, fn, err)) return -1;
  /* Statistic k's block of J is J of the same map on its m values alone: a layer (or
   * RMS) norm of a vector with the statistic's gamma, in fp64. */
  ns_tensor *xt = NULL, *t = NULL;
  ns_spec s1;
  double g;
  int got = ns_stat_block(x, spec, stat, &xt, &s1, &g, err);
  if (got <= 0) return got;
  size_t m = xt->n;
  int center = s1.center, rc = -1, nout = 0;
  const double *xk = xt->data;
  /* one block for the three work vectors (the ones vector is a constant, not stored); the
     FD inputs are written into one fp64 tensor and the two outputs of a step land in two
     recycled outputs (ns_normalize_reuse), read where they are: no allocation, copy or
     fresh page per step */
  size_t shape1[1] = {m}, shape3[1] = {3 * m};
  /* a tensor, not malloc: large ones get the 2 MB page hint (tensor.c), a 24 MB block at
     1e6 elements otherwise faults in 4 KB at a time at every call */
  ns_tensor *wt = ns_tensor_new_uninit(1, shape3, NS_FP64, err);
  double *work = wt ? wt->data : NULL;
  double *v = work, *jv = work + m, *rad = work + 2 * m, *xp = NULL;
  const double one = 1 / sqrt((double)m); /* every entry of the unit ones vector */
  ns_tensor *y_old[2] = {NULL, NULL};
  if (!work || !(t = ns_tensor_new_uninit(1, shape1, NS_FP64, err))) {
    ns_seterr(err, "%s: out of memory", fn);
    goto done;
  }
  xp = t->data;
  ns_eig lam[3];
  int nl = ns_spectrum_closed(xt, &s1, lam, 3, err);
  if (nl < 0) goto done;
  /* the labelled directions: ones, radial (x - mean; RMS: x), bulk (a fixed pattern with
   * those two projected out) */
  double mean = 0;
  if (center) {
    for (size_t a = 0; a < m; a++) mean += xk[a];
    mean /= (double)m;
  }
  for (size_t a = 0; a < m; a++) rad[a] = xk[a] - mean;
  double nc = norm2(rad, m);
  for (size_t a = 0; a < m; a++) rad[a] = nc > 0 ? rad[a] / nc : 0;
  /* the FD step: relative to the size of the statistic's spread, so each element moves by
   * about cbrt(u) of it (balances truncation, (h/|c|)^2, and rounding, u/h) */
  const double u = 0x1p-52, cu = cbrt(u);
  double h = cu * (nc > 0 && isfinite(nc) ? nc : 1);
  double sden = denom_of_m2(nc * nc, m, spec);
  double scale = fabs(g) / sden; /* the size of J */
  for (int i = 0; i < nl; i++) {
    ns_label lb = lam[i].label;
    if (lb == NS_LABEL_ONES)
      for (size_t a = 0; a < m; a++) v[a] = one;
    else if (lb == NS_LABEL_RADIAL) {
      if (!(nc > 0)) continue; /* all values equal: no radial direction to check */
      memcpy(v, rad, m * sizeof *v);
    } else {
      for (size_t a = 0; a < m; a++) /* a spread-out pattern of signs and sizes */
        v[a] = (double)((a * 2654435761u >> 7) % 1024) / 512.0 - 1.0;
      for (int pass = 0; pass < 2; pass++) { /* twice: orthogonal to rounding */
        if (center) orth_const(v, one, m);
        orth(v, rad, m);
      }
      double nv = norm2(v, m);
      if (!(nv > 0)) continue;
      for (size_t a = 0; a < m; a++) v[a] /= nv;
    }
    ns_eigcheck *c = &out[nout++];
    memset(c, 0, sizeof *c);
    c->label = lb;
    c->value = lam[i].value;
    c->h = h;
    if (ns_jvp(xt, &s1, v, jv, err)) goto done;
    c->jvp_res = resid2(jv, c->value, v, m);
    /* rounding of the sums over m terms (each off by up to m ulps): 4 m u of J's size */
    c->jvp_tol = 4 * u * ((double)m + 16) * scale;
    /* central differences of ns_normalize along v */
    double ymax = 0;
    const double *yv[2];
    for (int sgn = 0; sgn < 2; sgn++) {
      double hs = sgn ? -h : h;
      for (size_t a = 0; a < m; a++) xp[a] = xk[a] + hs * v[a];
      ns_norm_result r;
      memset(&r, 0, sizeof r);
      int nrc = ns_normalize_reuse(t, &s1, NULL, y_old[sgn], &r, err);
      y_old[sgn] = NULL; /* taken over by the call */
      if (nrc) {
        ns_norm_result_free(&r);
        goto done;
      }
      y_old[sgn] = r.y; /* this step's output, and where the next check's lands */
      r.y = NULL;
      ns_norm_result_free(&r);
      yv[sgn] = y_old[sgn]->data;
    }
    const double *yp = yv[0], *ym = yv[1];
    for (size_t a = 0; a < m; a++) {
      ymax = fmax(ymax, fabs(yp[a]));
      jv[a] = (yp[a] - ym[a]) / (2 * h);
    }
    c->fd_res = resid2(jv, c->value, v, m);
    /* ten times the truncation, (h/|c|)^2 of J's size, plus the rounding of y: its sums
     * over m terms make each y_i off by up to about m u |y|, which the 2h divides */
    double hr = h / (nc > 0 ? nc : 1);
    c->fd_tol = 10 * hr * hr * scale + 2 * u * (double)(m + 16) * fmax(ymax, 1) / h;
  }
  rc = nout;
done:
  ns_tensor_free(wt);
  ns_tensor_free(y_old[0]);
  ns_tensor_free(y_old[1]);
  ns_tensor_free(xt);
  ns_tensor_free(t);
  return rc;
}

typedef struct {
  double pones, prad; /* squared projections of the unit eigenvector */
  size_t idx;
} proj_idx;

static int cmp_pones(const void *pa, const void *pb) {
  const proj_idx *a = pa, *b = pb;
  return (a->pones < b->pones) - (a->pones > b->pones); /* descending */
}

static int cmp_prad(const void *pa, const void *pb) {
  const proj_idx *a = pa, *b = pb;
  return (a->prad < b->prad) - (a->prad > b->prad);
}

/* The eigenvalues of J (n x n) as bulk-labelled e[0..n-1], with the eigenvectors in the
 * columns of V and the noise of J (as merge_tol takes it) in *noise. Symmetric to 1e-8 (a
 * finite-difference J is, to its noise): the symmetric part (into A, n x n scratch) and
 * dsyevr, whose eigenvectors are orthonormal; otherwise dgeev. wi must be zeroed. */
static int eig_of_J(const char *fn, const double *J, size_t n, double *A, double *wr, double *wi,
                    double *V, ns_eig *e, double *noise, char *err) {
  if (ns_check_finite_matrix(fn, J, n, n, err)) return -1;
  *noise = 0;
  if (ns_is_symmetric(J, n, 1e-8)) {
    /* The asymmetry measures the noise in J (zero for an analytic J, ~1e-10 for central
     * differences); eigenvalues of the symmetric part move by up to about sqrt(n) times
     * it, so values that close count as equal. */
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < n; j++) {
        A[i * n + j] = 0.5 * (J[i * n + j] + J[j * n + i]);
        *noise = fmax(*noise, fabs(J[i * n + j] - J[j * n + i]));
      }
    *noise *= 4 * sqrt((double)n);
    if (ns_eig_sym(A, n, wr, V, err)) return -1;
  } else if (ns_eig_general(J, n, wr, wi, V, err)) {
    return -1;
  }
  for (size_t k = 0; k < n; k++) e[k] = (ns_eig){wr[k], wi[k], NS_LABEL_BULK, 1};
  return 0;
}

/* The checks every numeric spectrum makes of its Jacobian before the plan. */
static int check_J(const char *fn, const ns_tensor *x, const double *J, char *err) {
  if (!J) {
    ns_seterr(err, "%s: Jacobian is NULL", fn);
    return -1;
  }
  if (x && x->n > NS_LINALG_MAXN) {
    ns_seterr(err, "%s: %zu elements is larger than the limit %d", fn, x->n, NS_LINALG_MAXN);
    return -1;
  }
  return 0;
}

int ns_spectrum_numeric(const ns_tensor *x, const ns_spec *spec, const double *J, ns_eig *out,
                        size_t cap, char *err) {
  static const char fn[] = "spectrum_numeric";
  if (spec && spec->mask) return ns_spectrum_numeric_masked(x, spec, J, out, cap, err);
  ns_norm_plan p;
  if (check_J(fn, x, J, err) || prepare(fn, x, spec, out, &p, err)) return -1;
  size_t n = x->n, m = p.count;
  int center = ns_spec_center(spec), rc = -1;
  double *A = malloc(n * n * sizeof *A), *V = malloc(n * n * sizeof *V);
  double *wr = malloc(n * sizeof *wr), *wi = calloc(n, sizeof *wi), *xv = malloc(n * sizeof *xv);
  double *rad = malloc(n * sizeof *rad), *c = malloc(m * sizeof *c);
  ns_eig *e = malloc(n * sizeof *e);
  proj_idx *pr = malloc(n * sizeof *pr);
  if (!A || !V || !wr || !wi || !xv || !rad || !c || !e || !pr) {
    ns_seterr(err, "%s: out of memory", fn);
    goto done;
  }
  double noise;
  if (eig_of_J(fn, J, n, A, wr, wi, V, e, &noise, err)) goto done;
  if (!ns_spec_eval_running(spec, x->rank)) {
    /* unit radial vector of each statistic: its centred values (RMS: the values) */
    ns_tensor_read(x, xv);
    for (size_t st = 0; st < p.nstat; st++) {
      const size_t *mem = p.members + st * m;
      stat_denom(xv, mem, m, spec, center, c);
      double nrm = 0;
      for (size_t a = 0; a < m; a++) nrm += c[a] * c[a];
      nrm = sqrt(nrm);
      for (size_t a = 0; a < m; a++) rad[mem[a]] = nrm > 0 && isfinite(nrm) ? c[a] / nrm : 0;
    }
    for (size_t k = 0; k < n; k++) {
      double nv = 0, po = 0, prr = 0;
      for (size_t i = 0; i < n; i++) nv += V[i * n + k] * V[i * n + k];
      for (size_t st = 0; st < p.nstat && nv > 0; st++) {
        const size_t *mem = p.members + st * m;
        double so = 0, sr = 0;
        for (size_t a = 0; a < m; a++) {
          so += V[mem[a] * n + k];
          sr += V[mem[a] * n + k] * rad[mem[a]];
        }
        if (center) po += so * so / (double)m;
        prr += sr * sr;
      }
      pr[k] = (proj_idx){nv > 0 ? po / nv : 0, nv > 0 ? prr / nv : 0, k};
    }
    /* Within a cluster of equal eigenvalues the eigenvectors are any basis of the
     * eigenspace, so count its ones and radial directions by the summed projections
     * (the trace of the product of projectors) and hand the labels to the vectors that
     * project most. A lone eigenvector is "ones" when its projection exceeds 1/2. */
    double tol = merge_tol(e, n, noise);
    for (size_t lo = 0, hi; lo < n; lo = hi) {
      for (hi = lo + 1; hi < n && near(e[hi].value, e[hi - 1].value, tol) &&
                        near(e[hi].imag, e[hi - 1].imag, tol);
           hi++)
        ;
      double so = 0, sr = 0;
      for (size_t k = lo; k < hi; k++) so += pr[k].pones, sr += pr[k].prad;
      size_t size = hi - lo, nones = (size_t)floor(so + 0.5), nrad = (size_t)floor(sr + 0.5);
      if (nones > size) nones = size;
      if (nrad > size - nones) nrad = size - nones;
      qsort(pr + lo, size, sizeof *pr, cmp_pones);
      for (size_t k = lo; k < lo + nones; k++) e[pr[k].idx].label = NS_LABEL_ONES;
      qsort(pr + lo + nones, size - nones, sizeof *pr, cmp_prad);
      for (size_t k = lo + nones; k < lo + nones + nrad; k++) e[pr[k].idx].label = NS_LABEL_RADIAL;
    }
  }
  rc = merge_out(e, n, noise, out, cap, fn, err);
done:
  free(A), free(V), free(wr), free(wi), free(xv), free(rad), free(c), free(e), free(pr);
  ns_norm_plan_free(&p);
  return rc;
}

/* ---- Masks (spectrum.h, "Masks"). A masked element's output is the constant 0 and its
 * input enters no statistic, so J is the Jacobian of the kept elements' map padded with
 * zero rows and columns: the closed form per statistic is the one above with the kept
 * count k for m, and every masked element adds the eigenvalue 0 on its own unit vector
 * ("masked"). ---- */

/* prepare() plus the mask's check and its keep list (malloc'd into *keep). */
static int prepare_masked(const char *fn, const ns_tensor *x, const ns_spec *spec, const void *out,
                          ns_norm_plan *p, unsigned char **keep, char *err) {
  *keep = NULL;
  if (prepare(fn, x, spec, out, p, err)) return -1;
  char why[NS_ERRLEN];
  if (spec->mask && ns_mask_check(spec->mask, x->rank, x->shape, why) != 0) {
    ns_seterr(err, "%s: %s", fn, why);
    ns_norm_plan_free(p);
    return -1;
  }
  if (!(*keep = malloc(x->n ? x->n : 1))) {
    ns_seterr(err, "%s: out of memory", fn);
    ns_norm_plan_free(p);
    return -1;
  }
  if (spec->mask)
    ns_mask_expand(spec->mask, x->rank, x->shape, *keep, why); /* checked above */
  else
    memset(*keep, 1, x->n);
  return 0;
}

/* The kept members of statistic st into kmem; returns their count. */
static size_t kept_of(const ns_norm_plan *p, size_t st, const unsigned char *keep, size_t *kmem) {
  const size_t *mem = p->members + st * p->count;
  size_t k = 0;
  for (size_t a = 0; a < p->count; a++)
    if (keep[mem[a]]) kmem[k++] = mem[a];
  return k;
}

int ns_spectrum_closed_masked(const ns_tensor *x, const ns_spec *spec, ns_eig *out, size_t cap,
                              char *err) {
  static const char fn[] = "spectrum";
  ns_norm_plan p;
  unsigned char *keep;
  if (prepare_masked(fn, x, spec, out, &p, &keep, err)) return -1;
  size_t n = x->n, m = p.count, ne = 0, nmasked = 0;
  int center = ns_spec_center(spec), rc = -1;
  ns_eig *e = malloc((n + 3 * p.nstat + 1) * sizeof *e);
  double *xv = malloc(n * sizeof *xv), *c = malloc(m * sizeof *c);
  size_t *kmem = malloc(m * sizeof *kmem);
  ns_tensor *xt = NULL;
  ns_norm_result r;
  memset(&r, 0, sizeof r);
  if (!e || !xv || !c || !kmem) {
    ns_seterr(err, "%s: out of memory", fn);
    goto done;
  }
  for (size_t i = 0; i < n; i++) nmasked += !keep[i];
  if (ns_spec_eval_running(spec, x->rank)) {
    /* J = diag(g_i / s_i) at the kept elements, with s from the running statistics as
     * ns_normalize resolves them */
    ns_spec s = *spec;
    s.dtype = NS_FP64;
    s.acc = NS_FP64;
    if (!(xt = ns_tensor_new(x->rank, x->shape, NS_FP64, err))) goto done;
    ns_tensor_read(x, (double *)xt->data);
    if (ns_normalize(xt, &s, &r, err) != 0) goto done;
    for (size_t i = 0; i < n; i++)
      if (keep[i])
        e[ne++] = (ns_eig){ns_spec_gamma(spec, &p, i) / r.denom[p.stat_of[i]], 0, NS_LABEL_BULK, 1};
  } else {
    ns_tensor_read(x, xv);
    for (size_t st = 0; st < p.nstat; st++) {
      size_t k = kept_of(&p, st, keep, kmem);
      if (k == 0) continue; /* all masked: only "masked" zeros */
      double g = ns_spec_gamma(spec, &p, kmem[0]);
      for (size_t a = 1; a < k; a++)
        if (ns_spec_gamma(spec, &p, kmem[a]) != g) { /* no closed form */
          rc = 0;
          goto done;
        }
      double s = stat_denom(xv, kmem, k, spec, center, c);
      double radial =
          spec->eps_at == NS_EPS_STD ? g * spec->eps / (s * s) : g * spec->eps / (s * s * s);
      radial += 0.0; /* -0 (negative gamma, eps 0) shows as 0 */
      size_t nbulk = center ? (k >= 2 ? k - 2 : 0) : k - 1;
      if (center) e[ne++] = (ns_eig){0.0, 0, NS_LABEL_ONES, 1};
      if (!center || k >= 2) e[ne++] = (ns_eig){radial, 0, NS_LABEL_RADIAL, 1};
      if (nbulk) e[ne++] = (ns_eig){g / s, 0, NS_LABEL_BULK, (int)nbulk};
    }
  }
  if (nmasked) e[ne++] = (ns_eig){0.0, 0, NS_LABEL_MASKED, (int)nmasked};
  rc = merge_out(e, ne, 0, out, cap, fn, err);
done:
  ns_norm_result_free(&r);
  ns_tensor_free(xt);
  free(e), free(xv), free(c), free(kmem), free(keep);
  ns_norm_plan_free(&p);
  return rc;
}

typedef struct {
  double proj[3]; /* squared projections of the unit eigenvector: ones, masked, radial */
  size_t idx;
} proj3;

#define PROJ_CMP(NAME, K)                                                                          \
  static int NAME(const void *pa, const void *pb) {                                                \
    const proj3 *a = pa, *b = pb;                                                                  \
    return (a->proj[K] < b->proj[K]) - (a->proj[K] > b->proj[K]); /* descending */                 \
  }
PROJ_CMP(cmp_ones, 0)
PROJ_CMP(cmp_masked, 1)
PROJ_CMP(cmp_radial, 2)

static int near_tol(double a, double b, double tol) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return a == b || fabs(a - b) <= tol;
}

int ns_spectrum_numeric_masked(const ns_tensor *x, const ns_spec *spec, const double *J,
                               ns_eig *out, size_t cap, char *err) {
  static const char fn[] = "spectrum_numeric";
  ns_norm_plan p;
  unsigned char *keep;
  if (check_J(fn, x, J, err) || prepare_masked(fn, x, spec, out, &p, &keep, err)) return -1;
  size_t n = x->n, m = p.count;
  int center = ns_spec_center(spec), rc = -1;
  double *A = malloc(n * n * sizeof *A), *V = malloc(n * n * sizeof *V);
  double *wr = malloc(n * sizeof *wr), *wi = calloc(n, sizeof *wi), *xv = malloc(n * sizeof *xv);
  double *rad = calloc(n, sizeof *rad), *c = malloc(m * sizeof *c);
  size_t *kmem = malloc(m * sizeof *kmem);
  ns_eig *e = malloc(n * sizeof *e);
  proj3 *pr = malloc(n * sizeof *pr);
  if (!A || !V || !wr || !wi || !xv || !rad || !c || !kmem || !e || !pr) {
    ns_seterr(err, "%s: out of memory", fn);
    goto done;
  }
  double noise;
  if (eig_of_J(fn, J, n, A, wr, wi, V, e, &noise, err)) goto done;

  int eval = ns_spec_eval_running(spec, x->rank);
  if (!eval) { /* unit radial vector of each statistic over its kept members */
    ns_tensor_read(x, xv);
    for (size_t st = 0; st < p.nstat; st++) {
      size_t k = kept_of(&p, st, keep, kmem);
      if (k == 0) continue;
      stat_denom(xv, kmem, k, spec, center, c);
      double nrm = 0;
      for (size_t a = 0; a < k; a++) nrm += c[a] * c[a];
      nrm = sqrt(nrm);
      for (size_t a = 0; a < k; a++) rad[kmem[a]] = nrm > 0 && isfinite(nrm) ? c[a] / nrm : 0;
    }
  }
  for (size_t q = 0; q < n; q++) {
    double nv = 0, po = 0, pm = 0, prr = 0;
    for (size_t i = 0; i < n; i++) {
      double v = V[i * n + q];
      nv += v * v;
      if (!keep[i]) pm += v * v;
    }
    for (size_t st = 0; !eval && st < p.nstat && nv > 0; st++) {
      size_t k = kept_of(&p, st, keep, kmem);
      double so = 0, sr = 0;
      for (size_t a = 0; a < k; a++) {
        so += V[kmem[a] * n + q];
        sr += V[kmem[a] * n + q] * rad[kmem[a]];
      }
      if (center && k) po += so * so / (double)k;
      prr += sr * sr;
    }
    pr[q] = (proj3){{nv > 0 ? po / nv : 0, nv > 0 ? pm / nv : 0, nv > 0 ? prr / nv : 0}, q};
  }
  /* As spectrum.c: within a cluster of equal eigenvalues count each family's directions by
   * the summed projections and hand its label to the vectors that project most, ones
   * first, then masked, then radial. */
  double tol = merge_tol(e, n, noise);
  static int (*const cmp[3])(const void *, const void *) = {cmp_ones, cmp_masked, cmp_radial};
  static const ns_label lab[3] = {NS_LABEL_ONES, NS_LABEL_MASKED, NS_LABEL_RADIAL};
  for (size_t lo = 0, hi; lo < n; lo = hi) {
    for (hi = lo + 1; hi < n && near_tol(e[hi].value, e[hi - 1].value, tol) &&
                      near_tol(e[hi].imag, e[hi - 1].imag, tol);
         hi++)
      ;
    size_t from = lo;
    for (int f = 0; f < 3; f++) {
      double sum = 0;
      for (size_t q = from; q < hi; q++) sum += pr[q].proj[f];
      size_t cnt = (size_t)floor(sum + 0.5);
      if (cnt > hi - from) cnt = hi - from;
      qsort(pr + from, hi - from, sizeof *pr, cmp[f]);
      for (size_t q = from; q < from + cnt; q++) e[pr[q].idx].label = lab[f];
      from += cnt;
    }
  }
  rc = merge_out(e, n, noise, out, cap, fn, err);
done:
  free(A), free(V), free(wr), free(wi), free(xv), free(rad), free(c), free(kmem), free(e), free(pr);
  free(keep);
  ns_norm_plan_free(&p);
  return rc;
}
