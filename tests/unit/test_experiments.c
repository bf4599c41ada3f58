/* test_experiments.c: the core of the chapters' experiments called directly: ns_vjp
 * against J^T g from ns_jacobian_analytic, ns_residual_jacobian's three placements on a
 * case with a closed form, ns_stack's determinism and limits, the estimator helpers
 * (sort, quantile, median, kurtosis, c4) on hand-checked values, and every refusal
 * (NULL pointers, bad sizes, out-of-range options) with its message. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/err.h"
#include "core/estimators.h"
#include "core/jacobian.h"
#include "core/stack.h"
#include "core/tensor_ops.h"
#include "tap.h"

static ns_tensor *vec(size_t n, const double *v) {
  size_t shape[1] = {n};
  return ns_tensor_from(1, shape, NS_FP64, v, NULL);
}

static void vjp(void) {
  char err[NS_ERRLEN] = "";
  const double xv[5] = {0.3, -1.2, 2.0, 0.7, -0.4}, g[5] = {1, -0.5, 2, 0.25, -1};
  const double gam[5] = {1.5, -1, 0.5, 2, 1};
  ns_tensor *x = vec(5, xv);
  ns_spec s;
  ns_spec_default(&s);
  s.eps = 1e-3;
  s.gamma = gam;
  s.ngamma = 5;
  double J[25], dx[5], dg[5], db[5], d[5], m[5], v[5], worst = 0, route = 0;
  ns_vjp_paths paths = {d, m, v};
  int rc = ns_jacobian_analytic(x, &s, J, err) | ns_vjp(x, &s, g, dx, dg, db, &paths, err);
  for (int j = 0; j < 5; j++) {
    double acc = 0;
    for (int i = 0; i < 5; i++) acc += J[i * 5 + j] * g[i];
    worst = fmax(worst, fabs(acc - dx[j]));
    route = fmax(route, fabs(d[j] + m[j] + v[j] - dx[j]));
  }
  tap_ok(rc == 0 && worst < 1e-14, "vjp: layer norm dx = J^T g (%.1e)", worst);
  tap_ok(route < 1e-15, "vjp: the three routes sum to dx");
  tap_ok(db[2] == g[2], "vjp: dbeta of a per-element beta is g itself");
  tap_ok(ns_vjp(NULL, &s, g, dx, NULL, NULL, NULL, err) == -1 && strstr(err, "input"),
         "vjp: NULL x refused: %s", err);
  tap_ok(ns_vjp(x, &s, NULL, dx, NULL, NULL, NULL, err) == -1 && strstr(err, "upstream"),
         "vjp: NULL g refused: %s", err);
  const double bad[5] = {1, NAN, 0, 0, 0};
  tap_ok(ns_vjp(x, &s, bad, dx, NULL, NULL, NULL, err) == -1 && strstr(err, "element 2"),
         "vjp: NaN in g refused: %s", err);
  s.ngamma = 3;
  tap_ok(ns_vjp(x, &s, g, dx, NULL, NULL, NULL, err) == -1 && strstr(err, "gamma"),
         "vjp: gamma of the wrong length refused: %s", err);
  ns_tensor_free(x);
}

static void residual(void) {
  char err[NS_ERRLEN] = "";
  /* RMS norm at eps = 0 of x = (3, 4): J_N = (I - x x^T / |x|^2) sqrt(2) / |x|; W = a I. */
  const double xv[2] = {3, 4}, a = 0.5;
  ns_tensor *x = vec(2, xv);
  ns_spec s;
  ns_spec_default(&s);
  s.kind = NS_KIND_RMS;
  s.eps = 0;
  const double W[4] = {a, 0, 0, a};
  double Jn[4], J[4], worst = 0;
  const double r = 5, k = sqrt(2.0) / r;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) Jn[i * 2 + j] = k * ((i == j) - xv[i] * xv[j] / (r * r));
  int rc = ns_residual_jacobian(x, &s, W, 2, NS_PLACE_PRE, J, err);
  for (int i = 0; i < 4; i++) worst = fmax(worst, fabs(J[i] - ((i % 3 == 0) + a * Jn[i])));
  tap_ok(rc == 0 && worst < 1e-15, "residual pre: I + a J_N (%.1e)", worst);
  /* post: N((1 + a) x) has J_N((1+a) x) = J_N(x) / (1 + a), times (1 + a) I: J_N(x) */
  rc = ns_residual_jacobian(x, &s, W, 2, NS_PLACE_POST, J, err);
  worst = 0;
  for (int i = 0; i < 4; i++) worst = fmax(worst, fabs(J[i] - Jn[i]));
  tap_ok(rc == 0 && worst < 1e-15, "residual post: scale invariance leaves J_N(x) (%.1e)", worst);
  rc = ns_residual_jacobian(x, &s, W, 2, NS_PLACE_NONE, J, err);
  tap_ok(rc == 0 && J[0] == 1 + a && J[1] == 0 && J[3] == 1 + a, "residual none: I + W");
  tap_ok(ns_residual_jacobian(x, &s, W, 3, NS_PLACE_PRE, J, err) == -1 && strstr(err, "3 x 3"),
         "residual: W of the wrong size refused: %s", err);
  tap_ok(ns_residual_jacobian(x, &s, NULL, 2, NS_PLACE_PRE, J, err) == -1 && strstr(err, "W"),
         "residual: NULL W refused: %s", err);
  tap_ok(ns_residual_jacobian(x, &s, W, 2, (ns_placement)7, J, err) == -1 &&
             strstr(err, "placement"),
         "residual: unknown placement refused: %s", err);
  const double Wn[4] = {a, NAN, 0, a};
  tap_ok(ns_residual_jacobian(x, &s, Wn, 2, NS_PLACE_PRE, J, err) == -1 && strstr(err, "NaN"),
         "residual: NaN in W refused: %s", err);
  ns_tensor_free(x);
}

static void stack(void) {
  char err[NS_ERRLEN] = "";
  ns_stack_opts o;
  ns_stack_default(&o);
  o.layers = 3;
  o.width = 8;
  o.batch = 4;
  o.norm = NS_STACK_BATCH;
  ns_stack_result a = {0}, b = {0};
  int rc = ns_stack(&o, &a, err) | ns_stack(&o, &b, err);
  tap_ok(rc == 0 && a.layers == 3 && a.h && a.h->shape[0] == 4 && a.h->shape[1] == 8,
         "stack: 3 layers, h is batch x width");
  tap_ok(rc == 0 && memcmp(a.h->data, b.h->data, 32 * sizeof(double)) == 0 && a.std[2] == b.std[2],
         "stack: the same seed gives the same run");
  tap_ok(rc == 0 && a.maxabs[0] <= sqrt(3.0), "stack: batch 4 keeps |z| <= sqrt(3)");
  o.seed = 1;
  ns_stack_result c = {0};
  rc = ns_stack(&o, &c, err);
  tap_ok(rc == 0 && c.std[2] != a.std[2], "stack: another seed, another run");
  ns_stack_result_free(&a);
  ns_stack_result_free(&b);
  ns_stack_result_free(&c);
  ns_stack_result_free(&c); /* safe twice: the struct is zeroed */
  ns_stack_default(&o);
  o.layers = 0;
  tap_ok(ns_stack(&o, &a, err) == -1 && strstr(err, "layers"), "stack: 0 layers refused: %s", err);
  ns_stack_default(&o);
  o.batch = NS_STACK_MAXELEMS;
  tap_ok(ns_stack(&o, &a, err) == -1 && strstr(err, "batch"), "stack: huge batch refused: %s", err);
  ns_stack_default(&o);
  o.init = INFINITY;
  tap_ok(ns_stack(&o, &a, err) == -1 && strstr(err, "init"), "stack: infinite init refused: %s",
         err);
  tap_ok(ns_stack(NULL, &a, err) == -1, "stack: NULL options refused");
}

static void estimators(void) {
  char err[NS_ERRLEN] = "";
  const double v[6] = {3, 1, 2, 2, 5, 1};
  ns_tensor *t = vec(6, v);
  double q[3] = {0, 0.5, 1}, out[3], med;
  int rc = ns_op_quantile(t, q, 3, out, err);
  tap_ok(rc == 0 && out[0] == 1 && out[1] == 2 && out[2] == 5, "quantile 0, 1/2, 1 of a sample");
  tap_ok(ns_op_median(t, &med, err) == 0 && med == 2, "median of an even count");
  double qb = 1.5;
  tap_ok(ns_op_quantile(t, &qb, 1, out, err) == -1 && strstr(err, "[0, 1]"),
         "quantile: q outside [0, 1] refused: %s", err);
  tap_ok(ns_op_quantile(NULL, q, 1, out, err) == -1, "quantile: NULL tensor refused");
  tap_ok(ns_op_median(t, NULL, err) == -1, "median: NULL output refused");
  ns_tensor *s = ns_op_sort(t, 0, err);
  tap_ok(s && ns_tensor_get(s, 0) == 1 && ns_tensor_get(s, 5) == 5, "sort ascending");
  tap_ok(ns_op_sort(t, 1, err) == NULL && strstr(err, "axis"), "sort: axis out of range: %s", err);
  const double two[4] = {-1, 1, -1, 1}, spike[4] = {0, 0, 0, 4};
  ns_tensor *a = vec(4, two), *b = vec(4, spike);
  /* spike: mean 1, d = (-1,-1,-1,3): m2 = 12/4 = 3, m4 = (1+1+1+81)/4 = 21: 21/9 */
  tap_ok(ns_op_reduce_all(a, NS_RED_KURT, 0) == 1, "kurtosis of a two-point sample is 1");
  tap_close(ns_op_reduce_all(b, NS_RED_KURT, 0), 21.0 / 9, 1e-15, "kurtosis of (0,0,0,4) is 7/3");
  double c;
  tap_ok(ns_c4(2, &c, err) == 0 && fabs(c - sqrt(2 / 3.141592653589793)) < 1e-16,
         "c4(2) = sqrt(2/pi)");
  tap_ok(ns_c4(1, &c, err) == -1 && strstr(err, "> 1"), "c4(1) refused: %s", err);
  tap_ok(ns_c4(NAN, &c, err) == -1, "c4(NaN) refused");
  tap_ok(ns_c4(8, NULL, err) == -1, "c4: NULL output refused");
  tap_ok(ns_lgamma(1) == 0 && fabs(ns_lgamma(5) - log(24)) < 1e-15,
         "lgamma(1) = 0, lgamma(5) = log 24");
  ns_tensor_free(t);
  ns_tensor_free(s);
  ns_tensor_free(a);
  ns_tensor_free(b);
}

int main(void) {
  vjp();
  residual();
  stack();
  estimators();
  return tap_done();
}
