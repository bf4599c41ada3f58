/* tensor_ops.h: arithmetic on whole tensors: broadcasting elementwise operations,
 * unary maps, reductions over axes, matrix products, and shape changes.
 *
 * Ownership: every function that returns an ns_tensor * returns a NEW tensor that the
 * caller owns and frees with ns_tensor_free. Arguments are only read, never modified
 * or kept. On failure a function returns NULL (or -1) and writes a one-line reason
 * into err (NS_ERRLEN bytes) when err is not NULL.
 *
 * Values are read as doubles, combined in double, and rounded once to the result's
 * storage dtype. The result dtype of an operation on two tensors is the wider of the
 * two (fp64 > fp32 > fp16, bf16; fp16 with bf16 gives fp32); with a plain number it is
 * the tensor's own dtype. Axes are 0-based here; masks have bit k set for axis k.
 *
 *   char err[NS_ERRLEN];
 *   ns_tensor *mu = ns_op_reduce(x, 1u << 1, NS_RED_MEAN, 0, err);  // (B, D) -> (B, 1)
 *   ns_tensor *c = ns_op_binary(x, mu, NS_OP_SUB, err);               // broadcasts back
 *   ns_tensor_free(mu);
 *   ns_tensor_free(c);
 */
#ifndef NS_TENSOR_OPS_H
#define NS_TENSOR_OPS_H

#include <stddef.h>

#include "core/tensor.h"

typedef enum { NS_OP_ADD = 0, NS_OP_SUB, NS_OP_MUL, NS_OP_DIV } ns_binop;
typedef enum {
  NS_UN_NEG = 0,
  NS_UN_TANH,
  NS_UN_RELU,
  NS_UN_EXP,
  NS_UN_LOG,
  NS_UN_ABS,
  NS_UN_SQRT,
  NS_UN_SQUARE
} ns_unop;
typedef enum {
  NS_RED_SUM = 0,
  NS_RED_MEAN,
  NS_RED_VAR,
  NS_RED_STD,
  NS_RED_MIN,
  NS_RED_MAX,
  NS_RED_KURT /* Pearson kurtosis m4/m2^2 (population moments; 3 for a normal) */
} ns_redop;

/* The wider of two storage dtypes, as described above. */
ns_dtype ns_dtype_promote(ns_dtype a, ns_dtype b);

/* Shape of the numpy-style broadcast of two shapes (aligned at the trailing axis; each
 * pair of sizes equal or one of them 1). 0 with *rank/out filled, -1 with err. */
int ns_broadcast_shape(int ra, const size_t *sa, int rb, const size_t *sb, int *rank, size_t *out,
                       char *err);

/* a op b elementwise with broadcasting (so an operand whose shape is a trailing part
 * of the other's, or a reduction that kept its axes as 1, combines as expected).
 * IEEE semantics: x/0 = +-inf, 0/0 = NaN. */
ns_tensor *ns_op_binary(const ns_tensor *a, const ns_tensor *b, ns_binop op, char *err);
/* a op s (scalar_left == 0) or s op a (scalar_left != 0); result in a's dtype. */
ns_tensor *ns_op_scalar(const ns_tensor *a, double s, ns_binop op, int scalar_left, char *err);
/* f(a) elementwise, result in a's dtype (log of negatives is NaN, as in libm). */
ns_tensor *ns_op_unary(const ns_tensor *a, ns_unop op, char *err);

/* Reduction over the axes in mask (0 or all bits: every axis). The result keeps the
 * reduced axes with size 1, in a's dtype. Sums run in index order in double; var and
 * std are two-pass with divisor count - ddof (NaN when count <= ddof); min and max
 * propagate NaN. Kurtosis is Pearson's, not the excess: with d = x - mean,
 * mean(d^4) / mean(d^2)^2 (scipy.stats.kurtosis(fisher=False), 3 for a normal; ddof
 * ignored; NaN for a constant set). */
ns_tensor *ns_op_reduce(const ns_tensor *a, unsigned mask, ns_redop op, int ddof, char *err);
/* The same over all elements, as a double (not rounded to a's dtype). */
double ns_op_reduce_all(const ns_tensor *a, ns_redop op, int ddof);

/* Sorted copy along axis (0-based), ascending, NaN last (numpy's np.sort(a, axis)). */
ns_tensor *ns_op_sort(const ns_tensor *a, int axis, char *err);
/* numpy's np.quantile(a, q) over all elements, default (linear) method, for nq values
 * q[k] in [0, 1]: with the sorted values v and g = (n - 1) q, j = floor(g), t = g - j,
 * v[j] + (v[j+1] - v[j]) t (for t >= 1/2 written v[j+1] - (v[j+1] - v[j]) (1 - t), as
 * numpy does). NaN in a gives NaN. 0, or -1 with err (a q outside [0, 1] or NaN). */
int ns_op_quantile(const ns_tensor *a, const double *q, size_t nq, double *out, char *err);
/* numpy's np.median(a) over all elements into *out: the middle value, or the mean
 * (x + y) / 2 of the two middle values; NaN if a holds a NaN. 0, or -1 with err. */
int ns_op_median(const ns_tensor *a, double *out, char *err);

/* Matrix product of rank-2 tensors (m, k) x (k, n) through BLAS: sgemm when both are
 * fp32 (result fp32), otherwise dgemm in double with the result rounded to the
 * promoted dtype. */
ns_tensor *ns_op_matmul(const ns_tensor *a, const ns_tensor *b, char *err);
/* Outer product of the flattened u and v: shape (#u, #v). */
ns_tensor *ns_op_outer(const ns_tensor *u, const ns_tensor *v, char *err);
/* Transpose of a rank-2 tensor. */
ns_tensor *ns_op_transpose(const ns_tensor *a, char *err);

/* Same elements (row-major order) in a new shape with the same element count. */
ns_tensor *ns_op_reshape(const ns_tensor *a, int rank, const size_t *shape, char *err);
/* Elements from..to-1 (0-based, half-open) along axis; the other axes are kept. */
ns_tensor *ns_op_slice(const ns_tensor *a, int axis, size_t from, size_t to, char *err);
/* Joins count >= 1 tensors of equal rank along axis; all other sizes must agree. The
 * result has the promoted dtype of all parts. */
ns_tensor *ns_op_concat(const ns_tensor *const *parts, size_t count, int axis, char *err);
/* Copy with every element rounded (once) to dtype. */
ns_tensor *ns_op_astype(const ns_tensor *a, ns_dtype dtype, char *err);

/* A tensor of the shape with every element v (rounded to dtype). */
ns_tensor *ns_op_full(int rank, const size_t *shape, double v, ns_dtype dtype, char *err);
/* The n x n identity. */
ns_tensor *ns_op_eye(size_t n, ns_dtype dtype, char *err);

#endif
