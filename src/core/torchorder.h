/* torchorder.h: PyTorch's CPU order of operations for LayerNorm, GroupNorm, BatchNorm and
 * InstanceNorm (torch 1.13), so that normscope's output can be compared with torch's bit for
 * bit (order = "torch").
 *
 * torch's layer_norm_kernel.cpp takes each row's moments from RowwiseMoments
 * (moments_utils.h): the row is read as vectors of L lanes (L = 32 bytes over the element
 * size: 8 for fp32, 4 for fp64), each lane runs Welford's recurrence over a chunk of 16
 * vectors (the chunk's k-th step multiplies by a rounded 1/k), chunks are merged into a
 * binary cascade (a stack of partial moments, like a binary counter), the lanes are then
 * merged one by one into the Welford moments of the scalar tail, and var = m2 / (N - ddof).
 * Every operation is rounded to the accumulation dtype, no fused multiply-add. The output
 * is then formed with rstd = 1 / sqrt(var + eps) as
 *   y = fma(fma(x, rstd, -rstd * mean), gamma, beta)
 * (the vector map's two multiply-adds are fused by the compiler in torch's build).
 *
 * Measured against torch 1.13 on CPU (tests/data/make-torch-layernorm.py): the means,
 * rstds and outputs of a (8, 128, 768) float32 LayerNorm agree bit for bit.
 *
 * GroupNorm (group_norm_kernel.cpp) takes each group's moments the same way (one row of
 * C/G * H*W values), rstd = 1 / sqrt(var + eps) in the accumulation dtype, and forms
 *   with gamma or beta:  scale = rstd gamma; bias = -scale mean + beta (two roundings);
 *                        y = fma(scale, x, bias)
 *   without either:      y = (x - mean) rstd
 *
 * BatchNorm (batch_norm_kernel.cpp, Normalization.cpp) is another scheme. The batch
 * moments of a channel, over its values in index order (example by example):
 *   planes of more than one element (N, C, L) or (N, C, H, W): sum in double, mean =
 *     float(sum / n); var_sum = float(sum in double of float((x - mean)^2));
 *   one element per plane (N, C): the "channels last" kernel sums in float, row by row:
 *     mean = float(sum / n) (the division in double); var_sum = fma(d, d, var_sum) with
 *     d = x - mean, all in float.
 * Train mode: var = float(var_sum / n); invstd = float(1 / sqrt(double(var) + eps)) with
 * eps in double. Eval mode: invstd = 1 / sqrt(running_var + float(eps)), all in float. Both:
 *   alpha = invstd gamma; beta = fma(-mean, alpha, bias); y = fma(x, alpha, beta).
 * Batch norm over every axis but the last (an (N, H, W, C) channels_last tensor, or (B, T, D)
 * as x.reshape(-1, D)) takes the channels-last kernel too, its rows being the C values of one
 * position. The running update (ns_running_update_torch, running.h) is torch's float
 * arithmetic.
 * InstanceNorm is BatchNorm of the input viewed as (1, N*C, ...) (Normalization.cpp,
 * instance_norm): the same formulas per (example, channel). "float" above is the
 * accumulation dtype (fp32, or fp64 for torch's double kernels, where double is the same
 * dtype). The vectors that check all of this: tests/data/make-torch-norms.py.
 *
 * These formulas hold with one torch thread (torch.set_num_threads(1)): with several,
 * torch's (N, C) BatchNorm splits the rows between threads and adds their float partial
 * sums in double, which this file does not follow.
 *
 * 16 bits: torch 1.13 has no fp16 kernel for these norms on CPU; fp16 or bf16 storage around
 * a float module (dtype fp16/bf16, acc fp32) and bf16 input to a float BatchNorm (torch's
 * mixed kernel) are reproduced bit for bit. A module whose weights are bf16 too (the whole
 * model in bf16) keeps its statistics in bf16, which is not followed.
 *
 * No allocation, no state:
 *
 *   ns_moments m;
 *   ns_moments_torch(row, 768, NS_FP32, &m);      // row: values already in fp32
 *   double var = ns_round(m.m2 / 768, NS_FP32);   // as torch's m2 / N
 */
#ifndef NS_TORCHORDER_H
#define NS_TORCHORDER_H

#include <stddef.h>

#include "core/dtype.h"
#include "core/moments.h"
#include "core/normalize.h"

/* The lanes torch's vectors hold for this accumulation dtype (8 for fp32, 4 for fp64), or
 * 0 for one the emulation does not cover (fp16, bf16). */
int ns_torch_lanes(ns_dtype acc);
/* The moments of x[0..n-1] (values already rounded to acc) in torch's order; mean and m2
 * rounded to acc. acc must be fp32 or fp64 (another gives NaN). */
void ns_moments_torch(const double *x, size_t n, ns_dtype acc, ns_moments *out);
/* fma(a, b, c) rounded once to acc (fp32: fmaf; fp64: fma). */
double ns_torch_fma(double a, double b, double c, ns_dtype acc);

/* torch's sum over axis 0 of a contiguous (rows, cols) tensor, column col (SumKernel.cpp,
 * one thread): v is the row-major tensor, every addition rounded to acc. torch sums a column
 * either "by levels" (multi_row_sum: blocks of 2^p rows, p = max(4, ceil(log2 rows) / 4),
 * added into four levels of partial sums that carry like a counter) or "interleaved"
 * (row_sum: four such sums over the rows i = k mod 4, the rest added to the first, then the
 * other three), depending on where the column falls in torch's vector blocks (32 columns at
 * a time for 8 or more columns, 4 at a time below; the others interleaved); one column is a
 * contiguous sum of 8 lanes. For fewer than 16 rows, and a column summed by levels, that is
 * the sum in index order. InstanceNorm's running buffers are averaged this way. */
double ns_torch_sum_dim0(const double *v, size_t rows, size_t cols, size_t col, ns_dtype acc);
/* BatchNorm's batch moments of one channel (or InstanceNorm's of one (example, channel)):
 * x[0..n-1] its values (already in acc) in index order; plane: the elements of the channel
 * per example (1 selects torch's channels-last kernel, see above). out->mean is torch's
 * mean and out->m2 its var_sum, both in acc. acc fp32 or fp64 (another gives NaN). */
void ns_torch_bn_moments(const double *x, size_t n, size_t plane, ns_dtype acc, ns_moments *out);
/* BatchNorm's invstd from the variance var (in acc): train mode (var = var_sum / n):
 * 1 / sqrt(var + eps) in double, rounded once to acc; eval mode (var: the running one),
 * every operation rounded to acc with eps rounded to acc first. */
double ns_torch_bn_invstd(double var, double eps, int eval, ns_dtype acc);
/* BatchNorm's output y = fma(x, alpha, fma(-mean, alpha, b)) with alpha = invstd g. */
double ns_torch_bn_out(double x, double mean, double invstd, double g, double b, ns_dtype acc);
/* GroupNorm's output: affine (gamma or beta given): scale = rstd g, y = fma(scale, x,
 * -scale mean + b); otherwise (x - mean) rstd. */
double ns_torch_gn_out(double x, double mean, double rstd, double g, double b, int affine,
                       ns_dtype acc);

/* ---- numpy's order (order = "numpy") ----
 * What a numpy user's float32 normalization sums, (x - x.mean(axes)) / np.sqrt(x.var(axes) +
 * eps) on a C-contiguous array (numpy 1.24): np.add.reduce walks the array in index order,
 * the reduced axes of size > 1 that end the shape being the inner loop. When that inner run
 * is the whole statistic (layer, instance and group norm, every axis reduced), the statistic
 * is one pairwise sum (ns_sum_pairwise, with its chunks of 8192); when other reduced axes lie
 * outside it (batch norm over (N, H, W)), each run of the trailing reduced axes is summed
 * pairwise and the runs are added in order, from 0; when the last axis is kept (batch norm
 * of (N, C), a strided reduction), every value is added in index order. mean = sum / n and
 * var = sum((x - mean)^2) / (n - ddof), each operation in the accumulation dtype. Measured
 * against numpy 1.24 for runs up to 8192 values; numpy's buffering splits longer runs of a
 * reduction with axes outside the run differently, which this does not follow. */
typedef struct {
  int mode;   /* 0: one pairwise sum; 1: pairwise runs of `run` values, added in order;
                 2: in index order */
  size_t run; /* mode 1: the values per run */
} ns_numpy_order;
/* The order of a statistic of x's shape whose reduced axes are the bits of axes (bit k:
 * axis k); groups > 1: group norm (each statistic one contiguous run). */
void ns_numpy_order_of(int rank, const size_t *shape, unsigned axes, size_t groups,
                       ns_numpy_order *o);
/* The sum of t[0..n-1] (one statistic's values in index order, already in acc) in that order,
 * every addition rounded to acc. */
double ns_numpy_sum(const double *t, size_t n, const ns_numpy_order *o, ns_dtype acc);

/* ---- what a framework computes ----
 * The spec of what torch 1.13's float32 module (NS_FW_TORCH) or a numpy user's float32 code
 * (NS_FW_NUMPY) computes for the normalization *in: *out is *in with dtype and acc fp32 and
 * the framework's order (order torch: LayerNorm, GroupNorm, BatchNorm, InstanceNorm, centered;
 * order numpy: every kind), and *words (static text) says how, for a report. Returns 1, or 0
 * when the framework has no such module (torch: RMS norm or an uncentered map; *words says
 * so, *out is unchanged). ns_normalize(x, out) may still refuse axes torch's module cannot
 * take (a reduction other than its own): the caller reports that as not emulated. For the
 * audit's "torch float32" and "numpy float32" columns:
 *   ns_spec t;
 *   const char *how;
 *   if (ns_framework_spec(&probe, NS_FW_TORCH, &t, &how) && ns_normalize(x, &t, &y, err) == 0)
 *     ... max |y - y_fp64| is torch's own float32 error ...
 */
typedef enum { NS_FW_TORCH = 0, NS_FW_NUMPY } ns_framework;
int ns_framework_spec(const ns_spec *in, ns_framework fw, ns_spec *out, const char **words);

#endif
