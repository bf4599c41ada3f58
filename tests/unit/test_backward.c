/* test_backward.c: the batch-norm input gradient along its three paths (staged graph,
 * compact formula, J^T dy), against the claims, against finite differences of an
 * independent forward pass written here, and the two projections it must satisfy. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/jacobian.h"
#include "tap.h"

static unsigned long long lcg_state = 12345;
/* uniform in [0, 1) from a 64-bit LCG (Knuth's MMIX constants), top 53 bits */
static double lcg(void) {
  lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(lcg_state >> 11) / 9007199254740992.0;
}

/* Reference forward pass: L(x) = sum_i dy_i * g (x_i - mean) / sqrt(var + eps). */
static double loss(const double *x, size_t n, const double *dy, double g, double eps) {
  double mu = 0, v = 0, L = 0;
  for (size_t i = 0; i < n; i++) mu += x[i];
  mu /= (double)n;
  for (size_t i = 0; i < n; i++) v += (x[i] - mu) * (x[i] - mu);
  v /= (double)n;
  for (size_t i = 0; i < n; i++) L += dy[i] * g * (x[i] - mu) / sqrt(v + eps);
  return L;
}

static void xhat_of(const double *x, size_t n, double eps, double *xh) {
  double mu = 0, v = 0;
  for (size_t i = 0; i < n; i++) mu += x[i];
  mu /= (double)n;
  for (size_t i = 0; i < n; i++) v += (x[i] - mu) * (x[i] - mu);
  v /= (double)n;
  for (size_t i = 0; i < n; i++) xh[i] = (x[i] - mu) / sqrt(v + eps);
}

static void claims(void) {
  /* g-grad-*: x = (2,4,6,8), eps = 0, dy = (1,-2,0.5,3), gamma 1 */
  const double x[4] = {2, 4, 6, 8}, dy[4] = {1, -2, 0.5, 3};
  double xh[4];
  xhat_of(x, 4, 0, xh);
  for (int p = 0; p < 3; p++) {
    double dx[4];
    char err[NS_ERRLEN] = "";
    int rc = ns_bn_backward(x, 4, dy, 1.0, 0.0, (ns_bwd_path)p, dx, err);
    tap_ok(rc == 0, "%s path runs on the claim input %s", ns_bwd_path_name((ns_bwd_path)p), err);
    if (rc) continue;
    double sum = 0, dot = 0;
    for (int i = 0; i < 4; i++) sum += dx[i], dot += dx[i] * xh[i];
    char name[96];
    snprintf(name, sizeof name, "g-grad-sum (%s)", ns_bwd_path_name((ns_bwd_path)p));
    tap_close(sum, 0, 1e-12, name);
    snprintf(name, sizeof name, "g-grad-dot-xhat (%s)", ns_bwd_path_name((ns_bwd_path)p));
    tap_close(fabs(dot), 0, 1e-12, name);
    snprintf(name, sizeof name, "g-grad-first (%s)", ns_bwd_path_name((ns_bwd_path)p));
    tap_close(dx[0], 0.7379024326, 1e-10, name);
    /* by hand: (4*1 - 2.5 - (-3/sqrt5)(8.5/sqrt5)) / (4 sqrt5) = 1.65/sqrt5, to 1e-12 */
    snprintf(name, sizeof name, "g-grad-first = 1.65/sqrt(5) (%s)",
             ns_bwd_path_name((ns_bwd_path)p));
    tap_close(dx[0], 1.65 / sqrt(5.0), 1e-12, name);
  }
}

static void random_inputs(void) {
  double worst_agree = 0, worst_fd = 0, worst_sum = 0, worst_dot = 0;
  int trials = 200, fails = 0;
  for (int t = 0; t < trials; t++) {
    size_t n = 2 + (size_t)(lcg() * 14);
    double x[16], dy[16], dx[3][16], xh[16];
    double scale = pow(10.0, 4 * lcg() - 2), shift = 20 * lcg() - 10;
    for (size_t i = 0; i < n; i++) x[i] = shift + scale * (2 * lcg() - 1);
    for (size_t i = 0; i < n; i++) dy[i] = 2 * lcg() - 1;
    double g = 3 * lcg() - 1;
    const double epss[3] = {0, 1e-5, 0.1};
    double eps = epss[t % 3];
    char err[NS_ERRLEN];
    int ok = 1;
    for (int p = 0; p < 3; p++)
      if (ns_bn_backward(x, n, dy, g, eps, (ns_bwd_path)p, dx[p], err)) ok = 0;
    if (!ok) {
      fails++;
      continue;
    }
    /* |g| max|dy| / s bounds the gradient and sets the scale of rounding errors (the
     * gradient itself can vanish, e.g. for n = 2 with eps = 0) */
    double mu = 0, v = 0, dymax = 0;
    for (size_t i = 0; i < n; i++) mu += x[i] / (double)n;
    for (size_t i = 0; i < n; i++) v += (x[i] - mu) * (x[i] - mu) / (double)n;
    for (size_t i = 0; i < n; i++) dymax = fmax(dymax, fabs(dy[i]));
    double mag = fmax(fabs(g) * dymax / sqrt(v + eps), 1e-300);
    for (int p = 1; p < 3; p++)
      for (size_t i = 0; i < n; i++)
        worst_agree = fmax(worst_agree, fabs(dx[p][i] - dx[0][i]) / mag);
    xhat_of(x, n, eps, xh);
    /* dx . xhat vanishes for eps = 0; with eps it is g (dy . xhat) eps / s^3, the radial
     * eigenvalue of J acting on the scale direction */
    double dyxh = 0, s = sqrt(v + eps);
    for (size_t i = 0; i < n; i++) dyxh += dy[i] * xh[i];
    double want_dot = g * dyxh * eps / (s * s * s);
    for (int p = 0; p < 3; p++) {
      double sum = 0, dot = 0;
      for (size_t i = 0; i < n; i++) sum += dx[p][i], dot += dx[p][i] * xh[i];
      worst_sum = fmax(worst_sum, fabs(sum) / mag);
      worst_dot = fmax(worst_dot, fabs(dot - want_dot) / mag);
    }
    /* central differences of the reference loss, step relative to the spread */
    double h = 1e-5 * scale;
    for (size_t j = 0; j < n; j++) {
      double xp[16], xm[16];
      memcpy(xp, x, n * sizeof *x);
      memcpy(xm, x, n * sizeof *x);
      xp[j] += h;
      xm[j] -= h;
      double fd = (loss(xp, n, dy, g, eps) - loss(xm, n, dy, g, eps)) / (xp[j] - xm[j]);
      worst_fd = fmax(worst_fd, fabs(fd - dx[1][j]) / mag);
    }
  }
  tap_ok(fails == 0, "backward runs on %d random inputs (%d failures)", trials, fails);
  tap_diag("worst relative disagreement between paths %.3g", worst_agree);
  tap_ok(worst_agree < 1e-9, "graph, compact and jacobian paths agree (rel %.3g)", worst_agree);
  tap_diag("worst relative |sum dx| %.3g, |dx . xhat - g eps (dy . xhat) / s^3| %.3g", worst_sum,
           worst_dot);
  tap_ok(worst_sum < 1e-9, "sum(dx) = 0 on random inputs");
  tap_ok(worst_dot < 1e-9, "dx . xhat = 0 (eps 0), g eps (dy . xhat) / s^3 (eps > 0)");
  tap_diag("worst relative error against finite differences %.3g", worst_fd);
  tap_ok(worst_fd < 1e-5, "compact path matches finite differences of the loss");
}

static void bad_args(void) {
  const double x[3] = {1, 2, 4}, dy[3] = {1, 0, -1};
  double dx[3];
  char err[NS_ERRLEN];
  err[0] = 0;
  tap_ok(ns_bn_backward(x, 0, dy, 1, 0, NS_BWD_COMPACT, dx, err) == -1 && err[0],
         "n = 0 refused: %s", err);
  err[0] = 0;
  tap_ok(ns_bn_backward(NULL, 3, dy, 1, 0, NS_BWD_GRAPH, dx, err) == -1 && err[0],
         "NULL x refused: %s", err);
  err[0] = 0;
  tap_ok(ns_bn_backward(x, 3, dy, 1, -1, NS_BWD_GRAPH, dx, err) == -1 && err[0],
         "negative eps refused: %s", err);
  err[0] = 0;
  tap_ok(ns_bn_backward(x, 3, dy, 1, NAN, NS_BWD_JACOBIAN, dx, err) == -1 && err[0],
         "NaN eps refused: %s", err);
  err[0] = 0;
  tap_ok(ns_bn_backward(x, 3, dy, 1, 0, (ns_bwd_path)7, dx, err) == -1 && err[0],
         "unknown path refused: %s", err);
  err[0] = 0;
  tap_ok(ns_bn_backward(x, NS_JAC_MAXN + 1, dy, 1, 0, NS_BWD_JACOBIAN, dx, err) == -1 && err[0],
         "jacobian path refuses n > NS_JAC_MAXN: %s", err);
  /* a constant feature with eps = 0 is degenerate: IEEE NaN, no crash */
  const double c[3] = {5, 5, 5};
  tap_ok(ns_bn_backward(c, 3, dy, 1, 0, NS_BWD_COMPACT, dx, err) == 0 && isnan(dx[0]),
         "constant feature with eps 0 gives NaN, not a crash");
  tap_ok(strcmp(ns_bwd_path_name(NS_BWD_GRAPH), "graph") == 0 &&
             strcmp(ns_bwd_path_name(NS_BWD_COMPACT), "compact") == 0 &&
             strcmp(ns_bwd_path_name(NS_BWD_JACOBIAN), "jacobian") == 0,
         "path names");
}

int main(void) {
  claims();
  random_inputs();
  bad_args();
  return tap_done();
}
