/* jacobian.c: the derivative of a normalization (analytic and central differences) and
 * the batch-norm backward pass along three routes that must agree. */
#include "core/jacobian.h"
#include "core/blasdl.h"
#include "core/err.h"
#include "core/linalg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double ns_max_abs_diff(const double *A, const double *B, size_t len) {
  double mx = 0;
  for (size_t i = 0; i < len; i++) {
    double d = fabs(A[i] - B[i]);
    if (isnan(d)) return NAN;
    if (d > mx) mx = d;
  }
  return mx;
}

/* Arguments shared by both Jacobians; 0 or -1 with err. */
static int check_args(const char *fn, const ns_tensor *x, const ns_spec *spec, const double *J,
                      char *err) {
  if (!x || !spec || !J) {
    ns_seterr(err, "%s: %s is NULL", fn, !x ? "input tensor" : !spec ? "spec" : "output matrix");
    return -1;
  }
  if (x->n == 0) {
    ns_seterr(err, "%s: input has no elements", fn);
    return -1;
  }
  if (x->n > NS_JAC_MAXN) {
    ns_seterr(err, "%s: input has %zu elements; the Jacobian is limited to %d (it is n x n)", fn,
              x->n, NS_JAC_MAXN);
    return -1;
  }
  if (ns_spec_prepare(fn, x, spec, NULL, 0, err) != 0) return -1;
  return 0;
}

/* gamma/beta lengths as ns_normalize accepts them (beta does not enter J, but a spec that
 * ns_normalize refuses is refused here too). */
static int check_affine(const char *fn, const ns_tensor *x, const ns_spec *spec,
                        const ns_norm_plan *p, char *err) {
  char why[NS_ERRLEN];
  if (ns_spec_check_affine(spec, p, x->rank, x->shape, why) != 0) {
    ns_seterr(err, "%s: %s", fn, why);
    return -1;
  }
  return 0;
}

/* A spec that ns_normalize evaluates in plain double: fp64 storage and accumulation, and
 * no running object in train mode (a Jacobian never updates running statistics). */
static ns_spec fp64_spec(const ns_spec *spec) {
  ns_spec s = *spec;
  s.dtype = NS_FP64;
  s.acc = NS_FP64;
  if (s.mode == NS_MODE_TRAIN) s.running = NULL;
  return s;
}

static ns_tensor *fp64_copy(const ns_tensor *x, char *err) {
  ns_tensor *t = ns_tensor_new(x->rank, x->shape, NS_FP64, err);
  if (t) ns_tensor_read(x, (double *)t->data);
  return t;
}

/* *keep: spec->mask expanded over x (malloc'd, the caller frees), or NULL without a mask. */
static int mask_keep(const char *fn, const ns_tensor *x, const ns_spec *spec, unsigned char **keep,
                     char *err) {
  *keep = NULL;
  if (!spec->mask) return 0;
  char why[NS_ERRLEN];
  if (!(*keep = malloc(x->n))) {
    ns_seterr(err, "%s: out of memory", fn);
    return -1;
  }
  if (ns_mask_expand(spec->mask, x->rank, x->shape, *keep, why) != 0) {
    free(*keep);
    *keep = NULL;
    ns_seterr(err, "%s: %s", fn, why);
    return -1;
  }
  return 0;
}

/* The kept members of statistic k into kmem (p->count room), in index order; returns their
 * count. Without a mask (keep NULL) every member is kept and kmem is not written. */
static size_t kept_members(const ns_norm_plan *p, size_t k, const unsigned char *keep,
                           size_t *kmem) {
  const size_t *mem = p->members + k * p->count;
  if (!keep) return p->count;
  size_t m = 0;
  for (size_t a = 0; a < p->count; a++)
    if (keep[mem[a]]) kmem[m++] = mem[a];
  return m;
}

int ns_jacobian_analytic(const ns_tensor *x, const ns_spec *spec, double *J, char *err) {
  static const char fn[] = "jacobian";
  if (check_args(fn, x, spec, J, err)) return -1;
  size_t n = x->n;
  ns_norm_plan p;
  memset(&p, 0, sizeof p);
  if (ns_norm_plan_make(x->rank, x->shape, spec, &p, err)) return -1;
  if (check_affine(fn, x, spec, &p, err)) {
    ns_norm_plan_free(&p);
    return -1;
  }
  memset(J, 0, n * n * sizeof *J);
  unsigned char *keep = NULL; /* a mask's keep list (normalize.h, "Masks"); NULL: all kept */
  if (mask_keep(fn, x, spec, &keep, err)) {
    ns_norm_plan_free(&p);
    return -1;
  }

  if (ns_spec_eval_running(spec, x->rank)) {
    /* y_i = g_i (x_i - mu) / s with mu, s fixed by the running statistics: diagonal. Let
     * ns_normalize resolve the running statistics so both agree on them. */
    ns_spec s = fp64_spec(spec);
    ns_tensor *xt = fp64_copy(x, err);
    ns_norm_result r;
    memset(&r, 0, sizeof r);
    int rc = xt ? ns_normalize(xt, &s, &r, err) : -1;
    if (rc == 0)
      for (size_t i = 0; i < n; i++)
        if (!keep || keep[i]) J[i * n + i] = ns_spec_gamma(spec, &p, i) / r.denom[p.stat_of[i]];
    ns_norm_result_free(&r);
    ns_tensor_free(xt);
    ns_norm_plan_free(&p);
    free(keep);
    return rc;
  }

  double *xv = malloc(n * sizeof *xv), *c = malloc(p.count * sizeof *c);
  size_t *kmem = keep ? malloc(p.count * sizeof *kmem) : NULL;
  if (!xv || !c || (keep && !kmem)) {
    free(xv), free(c), free(kmem), free(keep);
    ns_norm_plan_free(&p);
    ns_seterr(err, "%s: out of memory", fn);
    return -1;
  }
  ns_tensor_read(x, xv);
  int center = ns_spec_center(spec);
  for (size_t k = 0; k < p.nstat; k++) {
    /* the statistic's kept members: a masked output is the constant 0 (its row of J is 0)
     * and a masked input enters nothing (its column is 0) */
    size_t m = kept_members(&p, k, keep, kmem);
    const size_t *mem = keep ? kmem : p.members + k * p.count;
    if (m == 0) continue;
    double dm = (double)m, dof = (double)m - spec->ddof;
    double mean = 0, ss = 0;
    if (center) {
      for (size_t a = 0; a < m; a++) mean += xv[mem[a]];
      mean /= dm;
    }
    for (size_t a = 0; a < m; a++) {
      c[a] = xv[mem[a]] - mean;
      ss += c[a] * c[a];
    }
    double var = ss / dof, sd = sqrt(var), s, coef;
    /* dy_i/dx_j = g_i [ (delta_ij - 1/m) / s - c_i (ds/dx_j) / s^2 ], ds/dx_j = c_j q:
     *   eps at var: s = sqrt(var + eps), q = 1 / (dof s)
     *   eps at std: s = sqrt(var) + eps, q = 1 / (dof sqrt(var)) */
    if (spec->eps_at == NS_EPS_STD) {
      s = sd + spec->eps;
      /* at c = 0 (a constant statistic) y = g c/eps + O(|c|^2): the c_i c_j term has
       * limit 0 although 1/sqrt(var) does not exist */
      coef = sd > 0 ? 1.0 / (dof * sd * s * s) : 0.0;
    } else {
      s = sqrt(var + spec->eps);
      coef = 1.0 / (dof * s * s * s);
    }
    double off = center ? 1.0 / dm : 0.0;
    for (size_t a = 0; a < m; a++) {
      size_t i = mem[a];
      double g = ns_spec_gamma(spec, &p, i);
      for (size_t b = 0; b < m; b++) {
        size_t j = mem[b];
        double d = ((a == b ? 1.0 : 0.0) - off) / s - c[a] * c[b] * coef;
        J[i * n + j] = g * d;
      }
    }
  }
  free(xv), free(c), free(kmem), free(keep);
  ns_norm_plan_free(&p);
  return 0;
}

int ns_jacobian_fd(const ns_tensor *x, const ns_spec *spec, double h, double *J, char *err) {
  static const char fn[] = "jacobian_fd";
  if (check_args(fn, x, spec, J, err)) return -1;
  if (!(h > 0) || isinf(h)) {
    ns_seterr(err, "%s: step h must be finite and > 0 (got %g)", fn, h);
    return -1;
  }
  size_t n = x->n;
  ns_spec s = fp64_spec(spec);
  ns_tensor *xt = fp64_copy(x, err);
  if (!xt) return -1;
  double *xd = xt->data;
  ns_norm_result rp, rm;
  memset(&rp, 0, sizeof rp);
  memset(&rm, 0, sizeof rm);
  int rc = 0;
  for (size_t j = 0; j < n && rc == 0; j++) {
    double x0 = xd[j], xp = x0 + h, xm = x0 - h;
    xd[j] = xp;
    rc = ns_normalize(xt, &s, &rp, err);
    xd[j] = xm;
    if (rc == 0) rc = ns_normalize(xt, &s, &rm, err);
    xd[j] = x0;
    /* divide by the step actually taken (x0 +- h is rounded); none at all (h below the
     * spacing of doubles near x0, or x0 + h overflowing) would give 0/0 or inf/inf */
    double step = xp - xm;
    if (rc == 0 && !(step > 0 && isfinite(step))) {
      ns_seterr(err,
                "%s: step h = %g does not work at x[%zu] = %g ((x + h) - (x - h) = %g in "
                "double); choose another h",
                fn, h, j, x0, step);
      rc = -1;
    }
    if (rc == 0) {
      const double *yp = rp.y->data, *ym = rm.y->data;
      for (size_t i = 0; i < n; i++) J[i * n + j] = (yp[i] - ym[i]) / step;
    }
    ns_norm_result_free(&rp);
    ns_norm_result_free(&rm);
    memset(&rp, 0, sizeof rp);
    memset(&rm, 0, sizeof rm);
  }
  ns_tensor_free(xt);
  return rc;
}

const char *ns_bwd_path_name(ns_bwd_path p) {
  switch (p) {
  case NS_BWD_GRAPH:
    return "graph";
  case NS_BWD_COMPACT:
    return "compact";
  case NS_BWD_JACOBIAN:
    return "jacobian";
  }
  return "?";
}

/* Forward y = g (x - mu) / sqrt(var + eps) as a chain of small nodes, then back through
 * each node in reverse, the way an autodiff tape would. */
static void bwd_graph(const double *x, size_t n, const double *dy, double g, double eps, double *dx,
                      double *xc) {
  double dn = (double)n, mu = 0, var = 0;
  for (size_t i = 0; i < n; i++) mu += x[i];
  mu /= dn;                                         /* node 1: mean */
  for (size_t i = 0; i < n; i++) xc[i] = x[i] - mu; /* node 2: centre */
  for (size_t i = 0; i < n; i++) var += xc[i] * xc[i];
  var /= dn;                  /* node 3: variance */
  double s = sqrt(var + eps); /* node 4: std */
  double inv = 1.0 / s;       /* node 5: reciprocal */
  /* node 6: xhat = xc * inv; node 7: y = g xhat */
  double dinv = 0;
  for (size_t i = 0; i < n; i++) dinv += g * dy[i] * xc[i]; /* d/d inv of sum dy g xc inv */
  double ds = -dinv / (s * s);
  double dvar = ds * 0.5 / s;
  double dmu = 0;
  for (size_t i = 0; i < n; i++) {
    dx[i] = g * dy[i] * inv + dvar * 2.0 * xc[i] / dn; /* d/d xc_i */
    dmu -= dx[i];
  }
  for (size_t i = 0; i < n; i++) dx[i] += dmu / dn; /* through the mean */
}

int ns_bn_backward(const double *x, size_t n, const double *dy, double gamma, double eps,
                   ns_bwd_path path, double *dx, char *err) {
  static const char fn[] = "bn_backward";
  if (!x || !dy || !dx) {
    ns_seterr(err, "%s: %s is NULL", fn, !x ? "x" : !dy ? "dy" : "dx");
    return -1;
  }
  if (n == 0) {
    ns_seterr(err, "%s: x has no elements", fn);
    return -1;
  }
  if (!ns_eps_ok(eps)) {
    ns_seterr(err, "%s: eps " NS_EPS_RULE ", got %g", fn, eps);
    return -1;
  }
  if (path == NS_BWD_GRAPH) {
    double *tmp = malloc(n * sizeof *tmp);
    if (!tmp) {
      ns_seterr(err, "%s: out of memory", fn);
      return -1;
    }
    bwd_graph(x, n, dy, gamma, eps, dx, tmp);
    free(tmp);
    return 0;
  }
  if (path != NS_BWD_JACOBIAN && path != NS_BWD_COMPACT) {
    ns_seterr(err, "%s: unknown path %d", fn, (int)path);
    return -1;
  }
  if (path == NS_BWD_JACOBIAN && n > NS_JAC_MAXN) {
    ns_seterr(err, "%s: %zu elements is above the Jacobian limit %d", fn, n, NS_JAC_MAXN);
    return -1;
  }
  size_t shape[1] = {n};
  ns_tensor *xt = ns_tensor_from(1, shape, NS_FP64, x, err);
  double *J = path == NS_BWD_JACOBIAN ? malloc(n * n * sizeof *J) : NULL;
  if (!xt || (path == NS_BWD_JACOBIAN && !J)) {
    if (xt) ns_seterr(err, "%s: out of memory", fn);
    ns_tensor_free(xt);
    free(J);
    return -1;
  }
  ns_spec s;
  ns_spec_default(&s);
  s.kind = NS_KIND_BATCH;
  s.axes = 0;
  s.eps = eps;
  s.eps_at = NS_EPS_VAR;
  s.ddof = 0;
  s.center = 1;
  s.gamma = &gamma;
  s.ngamma = 1;
  s.beta = NULL;
  s.nbeta = 0;
  s.dtype = NS_FP64;
  s.acc = NS_FP64;
  s.mode = NS_MODE_TRAIN;
  s.running = NULL;
  if (path == NS_BWD_COMPACT) {
    int rc = ns_vjp(xt, &s, dy, dx, NULL, NULL, NULL, err);
    ns_tensor_free(xt);
    return rc;
  }
  int rc = ns_jacobian_analytic(xt, &s, J, err);
  if (rc == 0)
    for (size_t j = 0; j < n; j++) {
      double acc = 0;
      for (size_t i = 0; i < n; i++) acc += J[i * n + j] * dy[i];
      dx[j] = acc;
    }
  ns_tensor_free(xt);
  free(J);
  return rc;
}

int ns_vjp(const ns_tensor *x, const ns_spec *spec, const double *gy, double *dx, double *dgamma,
           double *dbeta, const ns_vjp_paths *paths, char *err) {
  static const char fn[] = "vjp";
  if (!x || !spec || !gy || !dx) {
    ns_seterr(err, "%s: %s is NULL", fn,
              !x      ? "input tensor"
              : !spec ? "spec"
              : !gy   ? "upstream gradient"
                      : "output dx");
    return -1;
  }
  if (x->n == 0) {
    ns_seterr(err, "%s: input has no elements", fn);
    return -1;
  }
  if (ns_spec_prepare(fn, x, spec, NULL, 0, err) != 0) return -1;
  size_t n = x->n;
  for (size_t i = 0; i < n; i++)
    if (!isfinite(gy[i])) {
      ns_seterr(err, "%s: upstream gradient element %zu is not finite", fn, i + 1);
      return -1;
    }
  /* The forward statistics (mean, var, denom) exactly as ns_normalize finds them, in
   * double; in eval mode these are the running ones. */
  ns_spec s = fp64_spec(spec);
  ns_tensor *xt = fp64_copy(x, err);
  ns_norm_result r;
  memset(&r, 0, sizeof r);
  if (!xt || ns_normalize(xt, &s, &r, err) != 0) {
    ns_norm_result_free(&r);
    ns_tensor_free(xt);
    return -1;
  }
  /* ns_normalize's plan has no per-element lists: walk the statistics with the full one */
  ns_norm_plan full;
  memset(&full, 0, sizeof full);
  const ns_norm_plan *p = &full;
  if (ns_norm_plan_make(x->rank, x->shape, spec, &full, err) != 0 ||
      check_affine(fn, x, spec, p, err)) {
    ns_norm_plan_free(&full);
    ns_norm_result_free(&r);
    ns_tensor_free(xt);
    return -1;
  }
  const double *xv = xt->data;
  int eval = ns_spec_eval_running(spec, x->rank), center = ns_spec_center(spec);
  /* with a mask: masked elements get dL/dx = 0 (their inputs enter nothing) and add
   * nothing to dgamma, dbeta (their outputs are the constant 0) */
  unsigned char *keep = NULL;
  size_t *kmem = NULL;
  if (mask_keep(fn, x, spec, &keep, err) || (keep && !(kmem = malloc(p->count * sizeof *kmem)))) {
    if (keep) ns_seterr(err, "%s: out of memory", fn);
    free(keep);
    ns_norm_plan_free(&full);
    ns_norm_result_free(&r);
    ns_tensor_free(xt);
    return -1;
  }
  if (keep)
    for (size_t i = 0; i < n; i++)
      if (!keep[i]) {
        dx[i] = 0;
        if (paths && paths->direct) paths->direct[i] = 0;
        if (paths && paths->via_mean) paths->via_mean[i] = 0;
        if (paths && paths->via_var) paths->via_var[i] = 0;
      }
  if (dgamma) memset(dgamma, 0, p->naffine * sizeof *dgamma);
  if (dbeta) memset(dbeta, 0, p->naffine * sizeof *dbeta);
  for (size_t k = 0; k < p->nstat; k++) {
    size_t m = kept_members(p, k, keep, kmem);
    const size_t *mem = keep ? kmem : p->members + k * p->count;
    if (m == 0) continue;
    double dof = (double)m - spec->ddof;
    double mean = r.mean[k], sdn = r.denom[k], su = 0, suc = 0;
    for (size_t a = 0; a < m; a++) {
      size_t i = mem[a];
      double u = ns_spec_gamma(spec, p, i) * gy[i];
      su += u;
      suc += u * (xv[i] - mean);
    }
    double q = 0; /* the via_var factor of jacobian.h; 0 in eval mode (s is fixed) */
    if (!eval) {
      if (spec->eps_at == NS_EPS_STD) {
        double sd = sqrt(r.var[k]);
        q = sd > 0 ? 1.0 / (dof * sd * sdn * sdn) : 0.0;
      } else {
        q = 1.0 / (dof * sdn * sdn * sdn);
      }
    }
    double vm = !eval && center ? -su / ((double)m * sdn) : 0.0;
    for (size_t a = 0; a < m; a++) {
      size_t i = mem[a];
      double c = xv[i] - mean, u = ns_spec_gamma(spec, p, i) * gy[i];
      double d = u / sdn, vv = -c * q * suc;
      dx[i] = d + vm + vv;
      if (paths && paths->direct) paths->direct[i] = d;
      if (paths && paths->via_mean) paths->via_mean[i] = vm;
      if (paths && paths->via_var) paths->via_var[i] = vv;
      size_t ai = p->affine_of[i];
      if (dgamma) dgamma[ai] += gy[i] * (c / sdn);
      if (dbeta) dbeta[ai] += gy[i];
    }
  }
  free(keep), free(kmem);
  ns_norm_plan_free(&full);
  ns_norm_result_free(&r);
  ns_tensor_free(xt);
  return 0;
}

int ns_residual_jacobian(const ns_tensor *x, const ns_spec *spec, const double *W, size_t w,
                         ns_placement placement, double *J, char *err) {
  static const char fn[] = "residual_jacobian";
  if (check_args(fn, x, spec, J, err)) return -1;
  if (!W) {
    ns_seterr(err, "%s: W is NULL", fn);
    return -1;
  }
  size_t n = x->n, last = x->shape[x->rank - 1];
  if (w != n && w != last) {
    ns_seterr(err,
              "%s: W is %zu x %zu; it must be %zu x %zu (all of x) or %zu x %zu (x's last axis)",
              fn, w, w, n, n, last, last);
    return -1;
  }
  if (placement != NS_PLACE_NONE && placement != NS_PLACE_PRE && placement != NS_PLACE_POST) {
    ns_seterr(err, "%s: unknown placement %d", fn, (int)placement);
    return -1;
  }
  if (ns_check_finite_matrix(fn, W, w, w, err)) return -1;
  const ns_cblas *cb = placement == NS_PLACE_NONE ? NULL : ns_cblas_get(fn, err);
  if (placement != NS_PLACE_NONE && !cb) return -1;
  /* M = I (x) W, never formed: block b of w rows (or columns) at a time, through BLAS. */
  size_t nb = n / w;
  double *A = placement == NS_PLACE_NONE ? NULL : malloc(n * n * sizeof *A);
  ns_tensor *xt = fp64_copy(x, err);
  int rc = -1;
  if ((placement != NS_PLACE_NONE && !A) || !xt) {
    if (xt) ns_seterr(err, "%s: out of memory", fn);
    goto done;
  }
  double *xv = xt->data;
  if (placement == NS_PLACE_NONE) { /* J = I + M */
    memset(J, 0, n * n * sizeof *J);
    for (size_t b = 0; b < nb; b++)
      for (size_t i = 0; i < w; i++)
        for (size_t j = 0; j < w; j++) J[(b * w + i) * n + b * w + j] = W[i * w + j];
  } else if (placement == NS_PLACE_PRE) {
    if (ns_jacobian_analytic(xt, spec, A, err)) goto done; /* A = J_N(x) */
    /* J = I + M A: rows of block b are W times the same rows of A */
    for (size_t b = 0; b < nb; b++)
      cb->dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)w, (int)n, (int)w, 1.0, W, (int)w,
                A + b * w * n, (int)n, 0.0, J + b * w * n, (int)n);
  } else {
    /* z = x + M x, one block at a time, then A = J_N(z) */
    double *z = malloc(n * sizeof *z);
    if (!z) {
      ns_seterr(err, "%s: out of memory", fn);
      goto done;
    }
    for (size_t b = 0; b < nb; b++)
      for (size_t i = 0; i < w; i++) {
        double acc = xv[b * w + i];
        for (size_t k = 0; k < w; k++) acc += W[i * w + k] * xv[b * w + k];
        z[b * w + i] = acc;
      }
    memcpy(xv, z, n * sizeof *z);
    free(z);
    if (ns_jacobian_analytic(xt, spec, A, err)) goto done;
    /* J = A (I + M) = A + A M: columns of block b are those columns of A times W */
    for (size_t b = 0; b < nb; b++)
      cb->dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)w, (int)w, 1.0, A + b * w,
                (int)n, W, (int)w, 0.0, J + b * w, (int)n);
    for (size_t i = 0; i < n * n; i++) J[i] += A[i];
  }
  if (placement != NS_PLACE_POST)
    for (size_t i = 0; i < n; i++) J[i * n + i] += 1;
  rc = 0;
done:
  free(A);
  ns_tensor_free(xt);
  return rc;
}
