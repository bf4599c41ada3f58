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

typedef enum { NS_BWD_GRAPH = 0, NS_BWD_COMPACT, NS_BWD_JACOBIAN } ns_bwd_path;
/* Input gradient dx of batch norm of one feature x[0..n-1] (population variance,
 * eps inside the sqrt, scalar gamma) for upstream gradient dy:
 *   graph:    back through the staged graph (xhat, var, mean) one node at a time
 *   compact:  dx = g/(n s) (n dy - sum(dy) - xhat sum(dy xhat))
 *   jacobian: dx = J^T dy with J from ns_jacobian_analytic
 * All three agree to rounding; sum(dx) = 0 and dx . xhat = 0. */
int ns_bn_backward(const double *x, size_t n, const double *dy, double gamma, double eps,
                   ns_bwd_path path, double *dx, char *err);
const char *ns_bwd_path_name(ns_bwd_path p); /* "graph", "compact", "jacobian" */

#endif
