/* spectrum_mask.c: the labelled spectrum of a masked normalization's Jacobian (spectrum.h,
 * "Masks"), in closed form and numerically.
 *
 * A masked element's output is the constant 0 and its input enters no statistic, so J is
 * the Jacobian of the kept elements' map padded with zero rows and columns: the closed
 * form per statistic is spectrum.h's with the kept count k for m, and every masked element
 * adds the eigenvalue 0 on its own unit vector ("masked").
 */
#include "core/spectrum.h"
#include "core/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Argument checks, the full plan and the keep list (malloc'd into *keep). */
static int prepare_masked(const char *fn, const ns_tensor *x, const ns_spec *spec, const void *out,
                          ns_norm_plan *p, unsigned char **keep, char *err) {
  memset(p, 0, sizeof *p);
  *keep = NULL;
  if (!x || !spec || !out) {
    ns_seterr(err, "%s: %s is NULL", fn, !x ? "input tensor" : !spec ? "spec" : "output array");
    return -1;
  }
  char why[NS_ERRLEN];
  if (ns_spec_check(spec, why) != 0 ||
      (spec->mask && ns_mask_check(spec->mask, x->rank, x->shape, why) != 0)) {
    ns_seterr(err, "%s: %s", fn, why);
    return -1;
  }
  if (ns_norm_plan_make(x->rank, x->shape, spec, p, err)) return -1;
  if (ns_spec_check_affine(spec, p, x->rank, x->shape, why) != 0) {
    ns_seterr(err, "%s: %s", fn, why);
    ns_norm_plan_free(p);
    return -1;
  }
  if (!(*keep = malloc(x->n))) {
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

/* Centred (or, uncentered, plain) values c[0..k-1] of the kept members and the denominator
 * over them, in double: spectrum.c's formula with k for m. */
static double kept_denom(const double *xv, const size_t *kmem, size_t k, const ns_spec *spec,
                         int center, double *c) {
  double mean = 0, ss = 0;
  if (center) {
    for (size_t a = 0; a < k; a++) mean += xv[kmem[a]];
    mean /= (double)k;
  }
  for (size_t a = 0; a < k; a++) {
    c[a] = xv[kmem[a]] - mean;
    ss += c[a] * c[a];
  }
  double var = ss / ((double)k - spec->ddof);
  return spec->eps_at == NS_EPS_STD ? sqrt(var) + spec->eps : sqrt(var + spec->eps);
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
      double s = kept_denom(xv, kmem, k, spec, center, c);
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
  rc = ns_spectrum_merge(e, ne, 0, out, cap, fn, err);
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
  if (!J) {
    ns_seterr(err, "%s: Jacobian is NULL", fn);
    return -1;
  }
  if (x && x->n > NS_LINALG_MAXN) {
    ns_seterr(err, "%s: %zu elements is larger than the limit %d", fn, x->n, NS_LINALG_MAXN);
    return -1;
  }
  ns_norm_plan p;
  unsigned char *keep;
  if (prepare_masked(fn, x, spec, out, &p, &keep, err)) return -1;
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
  if (ns_check_finite_matrix(fn, J, n, n, err)) goto done;
  double noise = 0; /* as spectrum.c: the asymmetry of J measures its noise */
  if (ns_is_symmetric(J, n, 1e-8)) {
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < n; j++) {
        A[i * n + j] = 0.5 * (J[i * n + j] + J[j * n + i]);
        noise = fmax(noise, fabs(J[i * n + j] - J[j * n + i]));
      }
    noise *= 4 * sqrt((double)n);
    if (ns_eig_sym(A, n, wr, V, err)) goto done;
  } else if (ns_eig_general(J, n, wr, wi, V, err))
    goto done;
  for (size_t k = 0; k < n; k++) e[k] = (ns_eig){wr[k], wi[k], NS_LABEL_BULK, 1};

  int eval = ns_spec_eval_running(spec, x->rank);
  if (!eval) { /* unit radial vector of each statistic over its kept members */
    ns_tensor_read(x, xv);
    for (size_t st = 0; st < p.nstat; st++) {
      size_t k = kept_of(&p, st, keep, kmem);
      if (k == 0) continue;
      kept_denom(xv, kmem, k, spec, center, c);
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
  double tol = ns_spectrum_tol(e, n, noise);
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
  rc = ns_spectrum_merge(e, n, noise, out, cap, fn, err);
done:
  free(A), free(V), free(wr), free(wi), free(xv), free(rad), free(c), free(kmem), free(e), free(pr);
  free(keep);
  ns_norm_plan_free(&p);
  return rc;
}
