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
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/half.h"
#include "core/moments.h"
#include "core/running.h"
#include "core/tensor.h"

/* Two storage kinds that exist only inside the kernels, passed where a dtype of x goes:
 * fp32 values that the spec's dtype (fp16 or bf16) rounds on reading. An fp32 file explored
 * with dtype fp16 is this case; with it the float kernels round each value as they load it
 * (exactly ns_round_fast to that dtype, whose values floats hold) instead of leaving the
 * whole job to the generic path, which rounds every operation in software. */
#define NK_F32_AS_F16 ((ns_dtype)(NS_DTYPE_COUNT + 0))
#define NK_F32_AS_BF16 ((ns_dtype)(NS_DTYPE_COUNT + 1))

#define NK_LEVELS 4 /* member loop levels, padded in front with extent 1 */
#define NK_LANES 8  /* statistics reduced side by side */

typedef struct {
  const void *x;
  void *y;               /* NULL: the statistics alone, no output loop (ns_normalize_stats) */
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
  /* the batch moments' m2 is needed: a centered kind, or a running update; else (RMS) the
     second pass over the data would only fill it, and it is NaN (normalize.h) */
  int m2_used;
  double *sq; /* each statistic's sum of squares, when not NULL (ns_normalize_stats) */
  int stream; /* y is large and reused: the AVX2 kernels write it with non-temporal stores */
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
/* The AVX2 conversions on n (a multiple of 8) floats, for the tests: h, b the fp16 and bf16
 * patterns of in, fromh, fromb those patterns read back as floats. AVX2 CPUs only. */
void nk_avx2_convert(const float *in, size_t n, uint16_t *h, uint16_t *b, float *fromh,
                     float *fromb);
/* n floats rounded to fp16 (bf16 set: bf16) patterns, the bits of nk_f2h (nk_f2b) */
void nk_avx2_f32_to_16(const float *in, size_t n, uint16_t *out, int bf16);
#endif

#endif
