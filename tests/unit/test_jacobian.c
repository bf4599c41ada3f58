/* test_jacobian.c: the analytic Jacobian against the claims (r5-jac-*, c15-rank-*,
 * c15-pre/post-norm), against central differences for every kind, rank, eps
 * placement, ddof and gamma, the identities J 1 = 0 and J c = eps/s^3 c, and the
 * closed-form labelled spectrum against LAPACK's eigenvectors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jacobian.h"
#include "core/spectrum.h"
#include "tap.h"

static unsigned long long lcg_state = 20261129;
static double lcg(void) {
  lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(lcg_state >> 11) / 9007199254740992.0;
}

static ns_tensor *vec(const double *v, size_t n) {
  size_t shape[1] = {n};
  return ns_tensor_from(1, shape, NS_FP64, v, NULL);
}

static double rayleigh(const double *J, size_t n, const double *v) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    double jv = 0;
    for (size_t j = 0; j < n; j++) jv += J[i * n + j] * v[j];
    num += v[i] * jv;
    den += v[i] * v[i];
  }
  return num / den;
}

/* max_i |(J v)_i - lambda v_i| */
static double eig_residual(const double *J, size_t n, const double *v, double lambda) {
  double worst = 0;
  for (size_t i = 0; i < n; i++) {
    double jv = 0;
    for (size_t j = 0; j < n; j++) jv += J[i * n + j] * v[j];
    worst = fmax(worst, fabs(jv - lambda * v[i]));
  }
  return worst;
}

static void claims_r5(void) {
  const double x[3] = {1, 2, 4};
  ns_tensor *t = vec(x, 3);
  ns_spec s;
  ns_spec_default(&s);
  s.eps = 0.01;
  double J[9], F[9];
  char err[NS_ERRLEN] = "";
  int rc = ns_jacobian_analytic(t, &s, J, err);
  tap_ok(rc == 0, "layer Jacobian of (1,2,4) %s", err);
  const double ones[3] = {1, 1, 1};
  const double mean = 7.0 / 3.0, c[3] = {1 - mean, 2 - mean, 4 - mean};
  /* a vector orthogonal to 1 and c: their cross product */
  const double b[3] = {ones[1] * c[2] - ones[2] * c[1], ones[2] * c[0] - ones[0] * c[2],
                       ones[0] * c[1] - ones[1] * c[0]};
  double lo = rayleigh(J, 3, ones), lr = rayleigh(J, 3, c), lb = rayleigh(J, 3, b);
  tap_close(lo, 0, 1e-12, "r5-jac-ones-eig");
  tap_close(lr, 0.005105017962, 1e-12, "r5-jac-radial-eig");
  /* the claim prints 10 digits, coarser than its 1e-12 tolerance: check the printed
   * value to its digits and the formula 1/s, s = sqrt(var + eps), var = 14/9, to 1e-12 */
  tap_close(lb, 0.7992189232, 1e-10, "r5-jac-bulk-eig (printed digits)");
  tap_close(lb, 1 / sqrt(14.0 / 9 + 0.01), 1e-12, "r5-jac-bulk-eig (1/s to 1e-12)");
  tap_ok(eig_residual(J, 3, ones, lo) < 1e-14 && eig_residual(J, 3, c, lr) < 1e-14 &&
             eig_residual(J, 3, b, lb) < 1e-14,
         "1, c and their complement are eigenvectors");
  rc = ns_jacobian_fd(t, &s, 1e-6, F, err);
  double e = ns_max_abs_diff(J, F, 9);
  tap_diag("r5 analytic vs finite differences: %.3g", e);
  tap_ok(rc == 0 && e < 1e-7, "r5-jac-fd-maxerr (%.3g < 1e-7)", e);

  ns_eig out[3];
  int k = ns_spectrum_closed(t, &s, out, 3, err);
  tap_ok(k == 3 && out[0].label == NS_LABEL_ONES && out[0].value == 0 &&
             out[1].label == NS_LABEL_RADIAL && fabs(out[1].value - 0.005105017962) < 1e-12 &&
             out[2].label == NS_LABEL_BULK && fabs(out[2].value - 0.7992189232) < 1e-10 &&
             out[0].mult == 1 && out[1].mult == 1 && out[2].mult == 1,
         "closed spectrum of (1,2,4): ones 0, radial, bulk %s", err);
  k = ns_spectrum_numeric(t, &s, J, out, 3, err);
  tap_ok(k == 3 && out[0].label == NS_LABEL_ONES && fabs(out[0].value) < 1e-14 &&
             out[1].label == NS_LABEL_RADIAL && fabs(out[1].value - 0.005105017962) < 1e-12 &&
             out[2].label == NS_LABEL_BULK && fabs(out[2].value - 0.7992189232) < 1e-10,
         "numeric spectrum of (1,2,4) labels ones, radial, bulk %s", err);
  ns_tensor_free(t);
}

static void claims_c15(void) {
  char err[NS_ERRLEN] = "";
  const double x[4] = {-2, -1, 1, 2};
  ns_tensor *t = vec(x, 4);
  ns_spec s;
  ns_spec_default(&s);
  s.eps = 0;
  double J[16];
  ns_jacobian_analytic(t, &s, J, err);
  tap_ok(ns_rank(J, 4, 4, 1e-10, err) == 2, "c15-rank-centered");
  s.kind = NS_KIND_RMS;
  ns_jacobian_analytic(t, &s, J, err);
  tap_ok(ns_rank(J, 4, 4, 1e-10, err) == 3, "c15-rank-rms");
  ns_tensor_free(t);

  /* pre-norm residual block F(x) = x + W N(x), post-norm N(x + W x) */
  const double W[16] = {0.5,  -0.2, 0.1, 0,    0.3, 0.4, -0.1, 0.2,
                        -0.2, 0.1,  0.6, -0.3, 0,   0.2, 0.1,  0.5};
  const double x2[4] = {0.5, -1, 2, 0.25};
  double JN[16], Jpre[16], Jpost[16], sv[4], u[4];
  ns_spec_default(&s);
  s.eps = 0;
  t = vec(x2, 4);
  ns_jacobian_analytic(t, &s, JN, err);
  ns_tensor_free(t);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) {
      double a = i == j;
      for (int k = 0; k < 4; k++) a += W[i * 4 + k] * JN[k * 4 + j];
      Jpre[i * 4 + j] = a;
    }
  ns_svdvals(Jpre, 4, 4, sv, err);
  tap_close(sv[3], 0.9204637556, 1e-9, "c15-pre-norm-smin");
  for (int i = 0; i < 4; i++) {
    u[i] = x2[i];
    for (int k = 0; k < 4; k++) u[i] += W[i * 4 + k] * x2[k];
  }
  t = vec(u, 4);
  ns_jacobian_analytic(t, &s, JN, err);
  ns_tensor_free(t);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) {
      double a = 0;
      for (int k = 0; k < 4; k++) a += JN[i * 4 + k] * ((k == j) + W[k * 4 + j]);
      Jpost[i * 4 + j] = a;
    }
  tap_ok(ns_rank(Jpost, 4, 4, 1e-10, err) == 2, "c15-post-norm-rank");
}

/* One configuration of the random sweep. */
typedef struct {
  ns_kind kind;
  int rank;
  size_t shape[4];
  unsigned axes;
} config;

static const config configs[] = {
    {NS_KIND_LAYER, 1, {7}, 0},
    {NS_KIND_LAYER, 2, {3, 5}, 0},
    {NS_KIND_LAYER, 3, {2, 3, 4}, 0},
    {NS_KIND_LAYER, 4, {2, 4, 2, 2}, 0},
    {NS_KIND_RMS, 1, {6}, 0},
    {NS_KIND_RMS, 2, {3, 4}, 0},
    {NS_KIND_RMS, 3, {2, 3, 4}, 0},
    {NS_KIND_RMS, 4, {2, 2, 2, 3}, 0},
    {NS_KIND_BATCH, 1, {6}, 0},
    {NS_KIND_BATCH, 2, {5, 3}, 0},
    {NS_KIND_BATCH, 3, {3, 2, 4}, 0},
    {NS_KIND_BATCH, 4, {2, 3, 2, 2}, 0},
    {NS_KIND_INSTANCE, 3, {2, 3, 4}, 0},
    {NS_KIND_INSTANCE, 4, {2, 2, 3, 2}, 0},
    {NS_KIND_GROUP, 2, {3, 4}, 0},
    {NS_KIND_GROUP, 3, {2, 4, 3}, 0},
    {NS_KIND_GROUP, 4, {2, 4, 2, 2}, 0},
    {NS_KIND_LAYER, 3, {2, 3, 4}, 0x6},
    {NS_KIND_LAYER, 3, {3, 2, 4}, 0x5},
    {NS_KIND_LAYER, 2, {4, 3}, 0x1},
};

/* Largest value difference (relative to scale) between two labelled spectra; infinity
 * when counts, labels or multiplicities differ. */
static double spec_diff(const ns_eig *a, int ka, const ns_eig *b, int kb, double scale) {
  double d = ka == kb ? 0 : INFINITY;
  for (int i = 0; i < ka && ka == kb; i++) {
    if (a[i].label != b[i].label || a[i].mult != b[i].mult) d = INFINITY;
    d = fmax(d, fabs(a[i].value - b[i].value) / scale);
  }
  return d;
}

static void dump(const ns_eig *a, int ka, const ns_eig *b, int kb) {
  for (int i = 0; i < ka || i < kb; i++)
    tap_diag("  %-6s %.17g x%d | %-6s %.17g x%d", i < ka ? ns_label_name(a[i].label) : "",
             i < ka ? a[i].value : 0, i < ka ? a[i].mult : 0,
             i < kb ? ns_label_name(b[i].label) : "", i < kb ? b[i].value : 0,
             i < kb ? b[i].mult : 0);
}

static void sweep(void) {
  double worst_fd = 0, worst_ones = 0, worst_radial = 0, worst_spec = 0, worst_fdspec = 0;
  int runs = 0, failures = 0, fd_bad = 0, spec_bad = 0, fdspec_bad = 0, fdspec_cmp = 0,
      closed_none = 0, closed_cmp = 0;
  char where[160] = "";
  for (size_t ci = 0; ci < sizeof configs / sizeof *configs; ci++) {
    const config *cf = &configs[ci];
    for (int variant = 0; variant < 16; variant++) {
      ns_spec s;
      ns_spec_default(&s);
      s.kind = cf->kind;
      s.axes = cf->axes;
      s.groups = cf->kind == NS_KIND_GROUP ? 2 : 1;
      s.eps_at = (variant & 1) ? NS_EPS_STD : NS_EPS_VAR;
      s.ddof = (variant >> 1) & 1;
      const double epss[4] = {0, 1e-3, 0.1, 1e-5};
      s.eps = epss[(variant >> 2) & 3];
      if (variant % 5 == 4) s.center = cf->kind == NS_KIND_RMS ? 1 : 0;
      size_t n = 1;
      for (int d = 0; d < cf->rank; d++) n *= cf->shape[d];
      double xv[256], gam[256];
      double shift = 6 * lcg() - 3, scale = 0.5 + 2 * lcg();
      for (size_t i = 0; i < n; i++) xv[i] = shift + scale * (2 * lcg() - 1);
      char err[NS_ERRLEN] = "";
      ns_tensor *t = ns_tensor_from(cf->rank, cf->shape, NS_FP64, xv, err);
      ns_norm_plan p;
      memset(&p, 0, sizeof p);
      if (!t || ns_norm_plan_make(t->rank, t->shape, &s, &p, err)) {
        failures++;
        snprintf(where, sizeof where, "config %zu: %s", ci, err);
        ns_tensor_free(t);
        continue;
      }
      /* gamma: none, a scalar, or one per affine slot */
      int gk = variant % 3;
      for (size_t i = 0; i < p.naffine; i++) gam[i] = 0.5 + lcg();
      gam[0] = gk == 1 ? -0.75 : gam[0];
      s.gamma = gk == 0 ? NULL : gam;
      s.ngamma = gk == 0 ? 0 : gk == 1 ? 1 : p.naffine;
      double *J = malloc(n * n * sizeof *J), *F = malloc(n * n * sizeof *F);
      int rc = ns_jacobian_analytic(t, &s, J, err);
      if (rc == 0) rc = ns_jacobian_fd(t, &s, 1e-6, F, err);
      if (rc) {
        failures++;
        snprintf(where, sizeof where, "config %zu variant %d: %s", ci, variant, err);
        goto next;
      }
      runs++;
      double jmax = 0;
      for (size_t i = 0; i < n * n; i++) jmax = fmax(jmax, fabs(J[i]));
      double e = ns_max_abs_diff(J, F, n * n) / fmax(jmax, 1);
      if (!(e < 1e-6)) {
        fd_bad++;
        snprintf(where, sizeof where, "fd: config %zu variant %d err %.3g", ci, variant, e);
      }
      worst_fd = fmax(worst_fd, isnan(e) ? INFINITY : e);
      /* per statistic: J 1_k = 0 (centred) and J c_k = g eps/s^3 c_k (eps at var) or
       * g eps/s^2 c_k (eps at std), g the statistic's (constant) gamma */
      int center = ns_spec_center(&s);
      size_t m = p.count;
      for (size_t st = 0; st < p.nstat; st++) {
        const size_t *mem = p.members + st * m;
        double v1[256] = {0}, vc[256] = {0}, mu = 0, ss = 0;
        for (size_t a = 0; a < m; a++) mu += center ? xv[mem[a]] / (double)m : 0;
        for (size_t a = 0; a < m; a++) {
          v1[mem[a]] = 1;
          vc[mem[a]] = xv[mem[a]] - mu;
          ss += vc[mem[a]] * vc[mem[a]];
        }
        double var = ss / ((double)m - s.ddof);
        double sd = s.eps_at == NS_EPS_STD ? sqrt(var) + s.eps : sqrt(var + s.eps);
        double g = s.gamma ? s.gamma[s.ngamma == 1 ? 0 : p.affine_of[mem[0]]] : 1;
        int gconst = 1;
        for (size_t a = 0; a < m; a++)
          if (s.gamma && s.gamma[s.ngamma == 1 ? 0 : p.affine_of[mem[a]]] != g) gconst = 0;
        if (center) worst_ones = fmax(worst_ones, eig_residual(J, n, v1, 0) / fmax(jmax, 1));
        if (gconst) {
          double lam = s.eps_at == NS_EPS_STD ? g * s.eps / (sd * sd) : g * s.eps / (sd * sd * sd);
          worst_radial = fmax(worst_radial, eig_residual(J, n, vc, lam) / fmax(jmax, 1));
        }
      }
      /* closed form against LAPACK's labelled eigenvalues */
      {
        ns_eig cl[256], nu[256];
        int kc = ns_spectrum_closed(t, &s, cl, 256, err);
        int kn = ns_spectrum_numeric(t, &s, J, nu, 256, err);
        if (kc < 0 || kn < 0) {
          spec_bad++;
          snprintf(where, sizeof where, "spectrum: config %zu variant %d: %s", ci, variant, err);
        } else if (kc == 0) {
          closed_none++;
        } else {
          closed_cmp++;
          double d = spec_diff(cl, kc, nu, kn, fmax(jmax, 1));
          if (!(d < 1e-9)) {
            spec_bad++;
            dump(cl, kc, nu, kn);
            snprintf(where, sizeof where, "closed vs numeric: config %zu variant %d (%d vs %d)", ci,
                     variant, kc, kn);
          }
          /* Where central differences are accurate relative to J itself (not when J is
           * tiny, e.g. m = 2 with eps at std, all of whose eigenvalues are eps/s^2), the
           * finite-difference Jacobian labels and merges to the same spectrum. */
          int kf = 0;
          double df = 0;
          if (ns_max_abs_diff(J, F, n * n) < 1e-8 * jmax) {
            fdspec_cmp++;
            kf = ns_spectrum_numeric(t, &s, F, nu, 256, err);
            df = spec_diff(cl, kc, nu, kf, fmax(jmax, 1));
          }
          if (!(df < 1e-7)) {
            fdspec_bad++;
            dump(cl, kc, nu, kf);
            snprintf(where, sizeof where, "closed vs fd spectrum: config %zu variant %d (%d vs %d)",
                     ci, variant, kc, kf);
          }
          worst_fdspec = fmax(worst_fdspec, df);
          worst_spec = fmax(worst_spec, d);
        }
      }
    next:
      free(J), free(F);
      ns_norm_plan_free(&p);
      ns_tensor_free(t);
    }
  }
  if (where[0]) tap_diag("last problem: %s", where);
  tap_ok(failures == 0, "sweep: %d Jacobians computed, %d failures", runs, failures);
  tap_diag("worst relative |analytic - finite differences| over all kinds: %.3g", worst_fd);
  tap_ok(fd_bad == 0, "analytic matches finite differences everywhere (%d bad)", fd_bad);
  tap_diag("worst |J 1| %.3g, worst |J c - lambda c| %.3g", worst_ones, worst_radial);
  tap_ok(worst_ones < 1e-12, "J 1 = 0 for every centred statistic");
  tap_ok(worst_radial < 1e-12, "J c = g eps/s^3 c (eps at var) or g eps/s^2 c (at std)");
  tap_diag("closed vs numeric spectra: %d compared (worst %.3g), %d without closed form",
           closed_cmp, worst_spec, closed_none);
  tap_ok(spec_bad == 0 && closed_cmp > 100, "closed-form spectrum equals LAPACK's, labels too");
  tap_ok(closed_none > 0, "per-element gamma has no closed form (returns 0)");
  tap_diag("closed vs spectrum of the finite-difference Jacobian: %d compared, worst %.3g",
           fdspec_cmp, worst_fdspec);
  tap_ok(fdspec_bad == 0 && fdspec_cmp > 100,
         "finite-difference Jacobian gives the same labelled spectrum (%d bad)", fdspec_bad);
}

static void eval_mode(void) {
  char err[NS_ERRLEN] = "";
  size_t shape[2] = {4, 3};
  double xv[12];
  for (int i = 0; i < 12; i++) xv[i] = sin(1.7 * i) * 3;
  ns_tensor *t = ns_tensor_from(2, shape, NS_FP64, xv, err);
  ns_running run;
  ns_running_init(&run, 0.1, 0, 0, 0, err);
  ns_spec s;
  ns_spec_default(&s);
  s.kind = NS_KIND_BATCH;
  s.running = &run;
  ns_norm_result r;
  memset(&r, 0, sizeof r);
  ns_normalize(t, &s, &r, err); /* one update: running stats now differ from 0/1 */
  ns_norm_result_free(&r);
  long count = run.count;
  double m0 = run.mean[0];
  double J[144], F[144];
  int rc = ns_jacobian_analytic(t, &s, J, err);
  rc |= ns_jacobian_fd(t, &s, 1e-6, F, err);
  ns_eig out[12];
  rc |= ns_spectrum_closed(t, &s, out, 12, err) < 0;
  tap_ok(rc == 0 && run.count == count && run.mean[0] == m0,
         "train-mode Jacobian and spectrum leave the running statistics alone %s", err);
  s.mode = NS_MODE_EVAL;
  double gam[3] = {2, -1, 0.5};
  s.gamma = gam;
  s.ngamma = 3;
  rc = ns_jacobian_analytic(t, &s, J, err);
  rc |= ns_jacobian_fd(t, &s, 1e-6, F, err);
  int diag_ok = 1;
  for (int i = 0; i < 12; i++)
    for (int j = 0; j < 12; j++) {
      double want = 0;
      if (i == j) want = gam[i % 3] / sqrt(run.var[i % 3] + s.eps);
      if (fabs(J[i * 12 + j] - want) > 1e-14) diag_ok = 0;
    }
  tap_ok(rc == 0 && diag_ok, "eval mode: J = diag(gamma / sqrt(running var + eps)) %s", err);
  tap_ok(ns_max_abs_diff(J, F, 144) < 1e-8, "eval mode: analytic matches finite differences");
  int k = ns_spectrum_closed(t, &s, out, 12, err);
  int k2 = ns_spectrum_numeric(t, &s, J, out + 0, 12, err);
  tap_ok(k == 3 && k2 == 3 && out[0].label == NS_LABEL_BULK && out[0].mult == 4,
         "eval spectrum: three bulk values of multiplicity 4 (%d, %d) %s", k, k2, err);
  tap_ok(run.count == count, "eval mode leaves the running statistics alone");
  s.running = NULL;
  err[0] = 0;
  tap_ok(ns_jacobian_analytic(t, &s, J, err) == -1 && err[0],
         "eval batch norm without running statistics refused: %s", err);
  ns_running_free(&run);
  ns_tensor_free(t);
}

static void bad_args(void) {
  char err[NS_ERRLEN];
  const double x[3] = {1, 2, 4};
  ns_tensor *t = vec(x, 3);
  ns_spec s;
  ns_spec_default(&s);
  double J[9];
  err[0] = 0;
  tap_ok(ns_jacobian_analytic(NULL, &s, J, err) == -1 && err[0], "NULL input refused: %s", err);
  err[0] = 0;
  tap_ok(ns_jacobian_fd(t, &s, 0, J, err) == -1 && err[0], "h = 0 refused: %s", err);
  {
    /* x +- h rounds back to x: the difference quotient would be 0/0 */
    const double xb[3] = {1e20, 2e20, 4e20};
    ns_tensor *tx = vec(xb, 3);
    err[0] = 0;
    tap_ok(tx && ns_jacobian_fd(tx, &s, 1e-6, J, err) == -1 && strstr(err, "step"),
           "h lost to rounding at x = 1e20 refused: %s", err);
    ns_tensor_free(tx);
  }
  err[0] = 0;
  tap_ok(ns_jacobian_fd(t, &s, NAN, J, err) == -1 && err[0], "h = NaN refused: %s", err);
  s.eps = -1;
  err[0] = 0;
  tap_ok(ns_jacobian_analytic(t, &s, J, err) == -1 && err[0], "negative eps refused: %s", err);
  s.eps = 1e-5;
  double g2[2] = {1, 2};
  s.gamma = g2;
  s.ngamma = 2;
  err[0] = 0;
  tap_ok(ns_jacobian_analytic(t, &s, J, err) == -1 && err[0], "gamma of wrong length refused: %s",
         err);
  s.gamma = NULL;
  s.ngamma = 0;
  /* beta does not enter J, but a spec ns_normalize refuses is refused by all three */
  s.beta = g2;
  s.nbeta = 2;
  err[0] = 0;
  tap_ok(ns_jacobian_analytic(t, &s, J, err) == -1 && strstr(err, "beta has 2"),
         "beta of wrong length refused by the analytic Jacobian: %s", err);
  err[0] = 0;
  tap_ok(ns_jacobian_fd(t, &s, 1e-6, J, err) == -1 && strstr(err, "beta has 2"),
         "... and by finite differences: %s", err);
  ns_eig o3[3];
  err[0] = 0;
  tap_ok(ns_spectrum_closed(t, &s, o3, 3, err) == -1 && strstr(err, "beta has 2"),
         "... and by the closed spectrum: %s", err);
  s.beta = NULL;
  s.nbeta = 0;
  err[0] = 0;
  tap_ok(ns_spectrum_closed(t, &s, NULL, 0, err) == -1 && strstr(err, "NULL"),
         "NULL output refused: %s", err);
  ns_eig out[3];
  err[0] = 0;
  tap_ok(ns_spectrum_closed(t, &s, out, 2, err) == -1 && err[0], "cap too small refused: %s", err);
  double Jn[9] = {1, 0, 0, 0, NAN, 0, 0, 0, 1};
  err[0] = 0;
  tap_ok(ns_spectrum_numeric(t, &s, Jn, out, 3, err) == -1 && err[0],
         "NaN Jacobian refused by the numeric spectrum: %s", err);
  ns_tensor_free(t);

  size_t big[1] = {NS_JAC_MAXN + 1};
  ns_tensor *tb = ns_tensor_new(1, big, NS_FP64, err);
  err[0] = 0;
  tap_ok(tb && ns_jacobian_analytic(tb, &s, J, err) == -1 && strstr(err, "4096"),
         "n > NS_JAC_MAXN refused: %s", err);
  err[0] = 0;
  tap_ok(tb && ns_jacobian_fd(tb, &s, 1e-6, J, err) == -1 && err[0],
         "n > NS_JAC_MAXN refused by fd: %s", err);
  ns_tensor_free(tb);

  /* degenerate: constant input with eps = 0 gives NaN, not a crash */
  const double c[3] = {2, 2, 2};
  t = vec(c, 3);
  s.eps = 0;
  int rc = ns_jacobian_analytic(t, &s, J, err);
  tap_ok(rc == 0 && isnan(J[0]), "constant input, eps 0: NaN Jacobian, no crash");
  int k = ns_spectrum_closed(t, &s, out, 3, err);
  tap_ok(k >= 1, "constant input, eps 0: closed spectrum still returns (%d entries)", k);
  /* constant input, eps added to the std: y = g c/eps + O(|c|^2), so J = (I - 11^T/m)/eps */
  s.eps = 0.1;
  s.eps_at = NS_EPS_STD;
  double Fd[9];
  rc = ns_jacobian_analytic(t, &s, J, err);
  rc |= ns_jacobian_fd(t, &s, 1e-6, Fd, err);
  double dev = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) dev = fmax(dev, fabs(J[i * 3 + j] - ((i == j) - 1.0 / 3) / 0.1));
  tap_ok(rc == 0 && dev < 1e-12, "constant input, eps at std: J = (I - 11/m)/eps (dev %.3g)", dev);
  tap_ok(ns_max_abs_diff(J, Fd, 9) < 1e-4, "... and finite differences agree (%.3g)",
         ns_max_abs_diff(J, Fd, 9));
  s.eps_at = NS_EPS_VAR;
  /* d = 1 for a centred kind: J = 0 */
  s.eps = 1e-5;
  ns_tensor *t1 = vec(c, 1);
  rc = ns_jacobian_analytic(t1, &s, J, err);
  k = ns_spectrum_closed(t1, &s, out, 3, err);
  tap_ok(rc == 0 && J[0] == 0 && k == 1 && out[0].label == NS_LABEL_ONES && out[0].mult == 1,
         "d = 1 layer norm: J = 0, one 'ones' eigenvalue");
  ns_tensor_free(t1);
  ns_tensor_free(t);
}

int main(void) {
  claims_r5();
  claims_c15();
  sweep();
  eval_mode();
  bad_args();
  return tap_done();
}
