/* jacobian.h: the derivative of a normalization, analytic and by finite differences,
 * and the batch-norm backward pass along three routes.
 *
 * J is n x n, row-major, n = x->n, J[i*n + j] = d y_i / d x_j over the flattened
 * elements, so batch kinds show how one example's output depends on its companions.
 * The caller allocates J (n*n doubles). Train mode differentiates through the batch
 * statistics (the running object is never updated here); eval mode uses the running
 * statistics as constants (J diagonal). Computed in double, whatever spec->dtype.
 *
 * Per statistic with members k (count m, c = x - mean, s = denom, g = gamma):
 *   eps_at var:  dy_i/dx_j = g_i [ (delta_ij - 1/m) / s - c_i c_j / ((m-ddof) s^3) ]
 *   (uncentered: no 1/m term). For layer norm J 1 = 0 and J c = (eps/s^3) c.
 * With spec->mask (normalize.h, "Masks") the members are the kept ones (m = their count):
 * a masked output is the constant 0 and a masked input enters no statistic, so the rows
 * and the columns of masked elements are 0, and ns_vjp's dL/dx is 0 there.
 */
#ifndef NS_JACOBIAN_H
#define NS_JACOBIAN_H

#include "core/normalize.h"

/* Refuse Jacobians of more elements than this (the matrix would be n^2 doubles). */
#define NS_JAC_MAXN 4096

int ns_jacobian_analytic(const ns_tensor *x, const ns_spec *spec, double *J, char *err);
/* Central differences with step h (> 0): column j = (y(x + h e_j) - y(x - h e_j)) / 2h. */
int ns_jacobian_fd(const ns_tensor *x, const ns_spec *spec, double h, double *J, char *err);
/* max_ij |A_ij - B_ij| */
double ns_max_abs_diff(const double *A, const double *B, size_t len);

/* The input gradient split by the route it takes through the forward pass, one array of
 * n per route (the caller's; any may be NULL). Per statistic, with u = gamma * dL/dy,
 * c = x - mean (x uncentered), s = denom, m members, dof = m - ddof:
 *   direct  : u_j / s                              (y through x_j with mean, s fixed)
 *   via_mean: -(1/m) sum(u) / s                    (0 uncentered; dvar/dmean = 0)
 *   via_var : -c_j q sum(u c),  q = 1/(dof s^3) (eps at var), 1/(dof sd s^2) (eps at std,
 *             0 where sd = 0)
 * and dL/dx = direct + via_mean + via_var. Eval mode of a batch kind: direct only. */
typedef struct {
  double *direct, *via_mean, *via_var;
} ns_vjp_paths;

/* The backward pass of y = ns_normalize(x, spec) for upstream gradient gy (n values, x's
 * order), in closed form, in double (whatever spec->dtype): dx (n) = J^T gy; dgamma and
 * dbeta (each p.naffine values of the plan, see normalize.h; either may be NULL) sum
 * gy * xhat and gy over the elements sharing a gamma/beta entry (xhat = c / s); paths may
 * be NULL. No size limit (no matrix is formed). 0, or -1 with err. */
int ns_vjp(const ns_tensor *x, const ns_spec *spec, const double *gy, double *dx, double *dgamma,
           double *dbeta, const ns_vjp_paths *paths, char *err);

/* Where the normalization N sits in a residual block with a linear branch W. */
typedef enum {
  NS_PLACE_NONE = 0, /* y = x + W x:           J = I + W (no normalization; spec unused) */
  NS_PLACE_PRE,      /* y = x + W N(x):        J = I + W J_N(x) */
  NS_PLACE_POST      /* y = N(x + W x):        J = J_N(x + W x) (I + W) */
} ns_placement;
#define NS_PLACEMENT_NAMES                                                                         \
  { "none", "pre", "post", NULL } /* in ns_placement order */

/* The n x n Jacobian J (caller's, row-major, n = x->n) of a residual block. W is w x w,
 * row-major: w = n acts on the flattened x; w = D, the size of x's last axis, acts on
 * each row along it (the block-diagonal I (x) W, one example at a time). The identity
 * path I never passes through J_N in "pre"; in "post" every path does. 0 or -1 with err. */
int ns_residual_jacobian(const ns_tensor *x, const ns_spec *spec, const double *W, size_t w,
                         ns_placement placement, double *J, char *err);

typedef enum { NS_BWD_GRAPH = 0, NS_BWD_COMPACT, NS_BWD_JACOBIAN } ns_bwd_path;
/* Input gradient dx of batch norm of one feature x[0..n-1] (population variance,
 * eps inside the sqrt, scalar gamma) for upstream gradient dy:
 *   graph:    back through the staged graph (xhat, var, mean) one node at a time
 *   compact:  dx = g/(n s) (n dy - sum(dy) - xhat sum(dy xhat)), which is ns_vjp
 *   jacobian: dx = J^T dy with J from ns_jacobian_analytic
 * All three agree to rounding; sum(dx) = 0 and dx . xhat = 0. */
int ns_bn_backward(const double *x, size_t n, const double *dy, double gamma, double eps,
                   ns_bwd_path path, double *dx, char *err);
const char *ns_bwd_path_name(ns_bwd_path p); /* "graph", "compact", "jacobian" */

#endif
