/* torchorder.h: PyTorch's CPU order of operations for LayerNorm (torch 1.13), so that
 * normscope's output can be compared with torch's bit for bit (order = "torch").
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

/* The lanes torch's vectors hold for this accumulation dtype (8 for fp32, 4 for fp64), or
 * 0 for one the emulation does not cover (fp16, bf16). */
int ns_torch_lanes(ns_dtype acc);
/* The moments of x[0..n-1] (values already rounded to acc) in torch's order; mean and m2
 * rounded to acc. acc must be fp32 or fp64 (another gives NaN). */
void ns_moments_torch(const double *x, size_t n, ns_dtype acc, ns_moments *out);
/* fma(a, b, c) rounded once to acc (fp32: fmaf; fp64: fma). */
double ns_torch_fma(double a, double b, double c, ns_dtype acc);

#endif
