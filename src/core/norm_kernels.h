/* norm_kernels.h: the normalization kernels behind ns_normalize (internal to the core).
 *
 * ns_normalize_exec (norm_kernels.c) checks the spec, allocates the result and describes
 * the work as an nk_job: where each statistic's elements are (strides, no per-element
 * lists), the spec's constants already rounded to acc, and the arrays to fill. A kernel
 * then computes statistics [s0, s1) of it; statistics never share an output, so threads
 * may take disjoint ranges. The kernels exist twice, compiled from norm_kernels.inc: the
 * portable build (nk_run_base; SSE2 on x86-64, which the compiler may use by itself) and,
 * on x86, an AVX2 build (nk_run_avx2, only called when the CPU has AVX2).
 *
 * Bits: every kernel computes exactly what ns_normalize_ref computes. Sums run in each
 * statistic's index order; several statistics run side by side (one lane each), which
 * changes nothing in any lane's order. Arithmetic on fp32 (fp64) values with acc fp32
 * (fp64) is done natively in float (double): one IEEE operation equals the double
 * operation rounded to float, as round.h explains; every other combination rounds each
 * operation through ns_round_fast like the reference.
 */
#ifndef NS_NORM_KERNELS_H
#define NS_NORM_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "core/moments.h"
#include "core/running.h"
#include "core/tensor.h"

#define NK_LEVELS 4 /* member loop levels, padded in front with extent 1 */
#define NK_LANES 8  /* statistics reduced side by side */

typedef struct {
  const void *x;
  void *y;
  ns_dtype xdt, dt, acc; /* x's storage dtype, the spec dtype (= y's), accumulation */
  size_t n, nstat, count;
  /* statistic s: its coordinates over the stat levels (row-major, s = sum c_l * prod ext)
   * give the offset of its first element sum c_l * sstr_l and its gamma/beta base
   * sum c_l * samul_l */
  int nsl;
  size_t sext[NS_MAXRANK], sstr[NS_MAXRANK], samul[NS_MAXRANK];
  /* the elements of a statistic, in index order: NK_LEVELS nested loops */
  size_t mext[NK_LEVELS], mstr[NK_LEVELS], mamul[NK_LEVELS];
  int centered, eval, ddof;
  ns_algo algo;
  ns_order order;
  int eps_at_std;
  double eps, rn, rdof; /* in acc */
  /* gamma/beta in acc, naffine values each (1 and -0.0 where absent: exact no-ops) */
  const double *g64, *b64;
  const float *g32, *b32;
  const ns_running *run; /* eval mode's source of statistics, else NULL */
  double *mean, *var, *denom;
  ns_moments *batch;
  unsigned char *degenerate;
} nk_job;

void nk_run_base(const nk_job *j, size_t s0, size_t s1);
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define NK_HAVE_AVX2 1
void nk_run_avx2(const nk_job *j, size_t s0, size_t s1);
#endif

#endif
