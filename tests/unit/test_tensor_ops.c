/* test_tensor_ops.c: core tensor arithmetic against hand-computed values and slow,
 * obviously right loops; shape errors; dtype promotion. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/tensor_ops.h"
#include "tap.h"

static ns_tensor *mk(int rank, size_t a, size_t b, const double *v) {
  size_t shape[NS_MAXRANK] = {a, b, 1, 1};
  return ns_tensor_from(rank, shape, NS_FP64, v, NULL);
}

static int same(const ns_tensor *t, const double *want, size_t n, double tol) {
  if (!t || t->n != n) return 0;
  for (size_t i = 0; i < n; i++)
    if (!(fabs(ns_tensor_get(t, i) - want[i]) <= tol)) return 0;
  return 1;
}

/* Naive triple loop, the reference for the BLAS products. */
static void naive_matmul(const double *a, const double *b, size_t m, size_t k, size_t n,
                         double *c) {
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      double s = 0;
      for (size_t l = 0; l < k; l++) s += a[i * k + l] * b[l * n + j];
      c[i * n + j] = s;
    }
}

int main(void) {
  char err[NS_ERRLEN];
  const double v23[6] = {1, 2, 3, 4, 5, 6};
  ns_tensor *t = mk(2, 2, 3, v23);
  const double row[3] = {10, 20, 30};
  ns_tensor *r = mk(1, 3, 1, row);

  ns_tensor *y = ns_op_binary(t, r, NS_OP_ADD, err);
  tap_ok(same(y, (double[]){11, 22, 33, 14, 25, 36}, 6, 0), "trailing broadcast add");
  ns_tensor_free(y);
  y = ns_op_binary(r, t, NS_OP_SUB, err);
  tap_ok(same(y, (double[]){9, 18, 27, 6, 15, 24}, 6, 0), "broadcast on the left operand");
  ns_tensor_free(y);

  ns_tensor *mu = ns_op_reduce(t, 1u << 1, NS_RED_MEAN, 0, err);
  tap_ok(mu && mu->rank == 2 && mu->shape[0] == 2 && mu->shape[1] == 1, "reduce keeps axes as 1");
  tap_ok(same(mu, (double[]){2, 5}, 2, 0), "row means");
  y = ns_op_binary(t, mu, NS_OP_SUB, err);
  tap_ok(same(y, (double[]){-1, 0, 1, -1, 0, 1}, 6, 0), "subtracting kept-axis means");
  ns_tensor_free(y);
  ns_tensor_free(mu);

  const double v2[2] = {1, 2};
  ns_tensor *bad = mk(1, 2, 1, v2);
  y = ns_op_binary(t, bad, NS_OP_MUL, err);
  tap_ok(!y && strstr(err, "do not broadcast"), "incompatible shapes refused: %s", err);
  ns_tensor_free(bad);

  y = ns_op_scalar(t, 2, NS_OP_DIV, 1, err);
  tap_ok(same(y, (double[]){2, 1, 2.0 / 3, 0.5, 0.4, 2.0 / 6}, 6, 1e-16), "scalar on the left");
  ns_tensor_free(y);

  const double u3[3] = {-1, 0, 4};
  ns_tensor *u = mk(1, 3, 1, u3);
  y = ns_op_unary(u, NS_UN_RELU, err);
  tap_ok(same(y, (double[]){0, 0, 4}, 3, 0), "relu");
  ns_tensor_free(y);
  y = ns_op_unary(u, NS_UN_SQRT, err);
  tap_ok(y && isnan(ns_tensor_get(y, 0)) && ns_tensor_get(y, 2) == 2, "sqrt of negatives is NaN");
  ns_tensor_free(y);

  tap_close(ns_op_reduce_all(t, NS_RED_SUM, 0), 21, 0, "sum");
  tap_close(ns_op_reduce_all(t, NS_RED_VAR, 1), 3.5, 1e-15, "sample variance");
  tap_close(ns_op_reduce_all(t, NS_RED_STD, 0), sqrt(17.5 / 6), 1e-15, "population std");
  tap_close(ns_op_reduce_all(t, NS_RED_MAX, 0), 6, 0, "max");
  y = ns_op_reduce(t, 1u << 0, NS_RED_VAR, 1, err);
  tap_ok(same(y, (double[]){4.5, 4.5, 4.5}, 3, 1e-15), "column variances, ddof 1");
  ns_tensor_free(y);
  y = ns_op_reduce(t, 1u << 3, NS_RED_SUM, 0, err);
  tap_ok(!y, "reduction axis beyond the rank refused: %s", err);

  /* matmul: BLAS against the naive loop on a 7 x 5 by 5 x 3 product */
  double A[35], B[15], C[21];
  for (int i = 0; i < 35; i++) A[i] = sin(i + 1.0);
  for (int i = 0; i < 15; i++) B[i] = cos(i * 0.7);
  naive_matmul(A, B, 7, 5, 3, C);
  ns_tensor *ta = mk(2, 7, 5, A), *tb = mk(2, 5, 3, B);
  y = ns_op_matmul(ta, tb, err);
  tap_ok(same(y, C, 21, 1e-14), "dgemm matches the naive product");
  ns_tensor_free(y);
  ns_tensor *fa = ns_op_astype(ta, NS_FP32, err), *fb = ns_op_astype(tb, NS_FP32, err);
  y = ns_op_matmul(fa, fb, err);
  tap_ok(y && y->dtype == NS_FP32 && same(y, C, 21, 1e-5), "sgemm for fp32 operands");
  ns_tensor_free(y);
  y = ns_op_matmul(ta, ta, err);
  tap_ok(!y && strstr(err, "do not match"), "matmul shape mismatch: %s", err);
  ns_tensor_free(fa);
  ns_tensor_free(fb);
  ns_tensor_free(ta);
  ns_tensor_free(tb);

  y = ns_op_transpose(t, err);
  tap_ok(same(y, (double[]){1, 4, 2, 5, 3, 6}, 6, 0) && y->shape[0] == 3, "transpose");
  ns_tensor_free(y);
  y = ns_op_outer(r, u, err);
  tap_ok(same(y, (double[]){-10, 0, 40, -20, 0, 80, -30, 0, 120}, 9, 0), "outer");
  ns_tensor_free(y);

  size_t s32[2] = {3, 2};
  y = ns_op_reshape(t, 2, s32, err);
  tap_ok(same(y, v23, 6, 0) && y->shape[0] == 3, "reshape keeps row-major order");
  ns_tensor_free(y);
  size_t s4[1] = {4};
  y = ns_op_reshape(t, 1, s4, err);
  tap_ok(!y && strstr(err, "cannot reshape"), "reshape count mismatch: %s", err);

  y = ns_op_slice(t, 1, 1, 3, err);
  tap_ok(same(y, (double[]){2, 3, 5, 6}, 4, 0), "slice along axis 2");
  ns_tensor_free(y);
  y = ns_op_slice(t, 0, 1, 1, err);
  tap_ok(!y, "empty slice refused: %s", err);

  const ns_tensor *parts[2] = {t, t};
  y = ns_op_concat(parts, 2, 1, err);
  tap_ok(same(y, (double[]){1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}, 12, 0) && y->shape[1] == 6,
         "concat along axis 2");
  ns_tensor_free(y);

  tap_ok(ns_dtype_promote(NS_FP16, NS_BF16) == NS_FP32, "fp16 with bf16 promotes to fp32");
  tap_ok(ns_dtype_promote(NS_FP32, NS_FP64) == NS_FP64, "fp32 with fp64 promotes to fp64");
  const double big = 1.00390625 + 1e-12;
  ns_tensor *bt = mk(1, 1, 1, &big);
  y = ns_op_astype(bt, NS_BF16, err);
  tap_ok(y && ns_tensor_get(y, 0) == 1.0078125, "astype bf16 rounds once");
  ns_tensor_free(y);
  ns_tensor_free(bt);

  y = ns_op_eye(3, NS_FP64, err);
  tap_ok(same(y, (double[]){1, 0, 0, 0, 1, 0, 0, 0, 1}, 9, 0), "eye");
  ns_tensor_free(y);
  y = ns_op_eye((size_t)1 << 20, NS_FP64, err);
  tap_ok(!y, "eye of 2^40 elements refused: %s", err);

  /* a missing operand is an error with a message, never a crash */
  {
    const ns_tensor *none[1] = {NULL};
    int nulls = 0;
    const char *names[13] = {0};
    err[0] = 0;
#define NOTHING(i, call)                                                                           \
  do {                                                                                             \
    err[0] = 0;                                                                                    \
    ns_tensor *z = (call);                                                                         \
    if (z || !err[0]) names[nulls++] = #i;                                                         \
    ns_tensor_free(z);                                                                             \
  } while (0)
    NOTHING(binary_a, ns_op_binary(NULL, t, NS_OP_ADD, err));
    NOTHING(binary_b, ns_op_binary(t, NULL, NS_OP_ADD, err));
    NOTHING(scalar, ns_op_scalar(NULL, 1, NS_OP_ADD, 0, err));
    NOTHING(unary, ns_op_unary(NULL, NS_UN_NEG, err));
    NOTHING(reduce, ns_op_reduce(NULL, 0, NS_RED_SUM, 0, err));
    NOTHING(matmul, ns_op_matmul(t, NULL, err));
    NOTHING(outer, ns_op_outer(NULL, t, err));
    NOTHING(transpose, ns_op_transpose(NULL, err));
    NOTHING(reshape, ns_op_reshape(NULL, 1, (size_t[]){6}, err));
    NOTHING(slice, ns_op_slice(NULL, 0, 0, 1, err));
    NOTHING(concat, ns_op_concat(none, 1, 0, err));
    NOTHING(concat_list, ns_op_concat(NULL, 1, 0, err));
    NOTHING(astype, ns_op_astype(NULL, NS_FP32, err));
#undef NOTHING
    tap_ok(nulls == 0, "NULL operands refused with a message by every op (first accepted: %s)",
           nulls ? names[0] : "none");
    tap_ok(isnan(ns_op_reduce_all(NULL, NS_RED_SUM, 0)), "reduce_all of NULL is NaN");
  }

  ns_tensor_free(t);
  ns_tensor_free(r);
  ns_tensor_free(u);
  tap_diag("core tensor arithmetic: %d checks", tap_n);
  return tap_done();
}
