/* running.h: running statistics of a batch kind (PyTorch's running_mean/running_var).
 *
 * Ownership: the object owns its arrays; free them with ns_running_free (safe on a zeroed
 * struct). ns_normalize (normalize.h) updates a borrowed one in train mode and reads it in
 * eval mode. A typical call:
 *
 *   ns_running r;
 *   if (ns_running_init(&r, 0.1, 0, 0, 0, err) == 0) {   // nstat fixed by the first update
 *     ns_running_update(&r, batch_moments, nstat, err);
 *     ... r.mean[c], r.var[c] ...
 *     ns_running_free(&r);
 *   }
 */
#ifndef NS_RUNNING_H
#define NS_RUNNING_H

#include <stddef.h>

#include "core/moments.h"

/* Running statistics of a batch kind, one entry per statistic (channel).
 * PyTorch convention (exact == 0): starts at mean 0, var 1; each update
 *   mean = (1-f) mean + f batch_mean;  var = (1-f) var + f batch_var_unbiased
 * with f = momentum, or f = 1/count (cumulative average) when cumulative != 0.
 * Exact (exact != 0): merges the batch moments into acc[] (ns_moments_merge);
 * mean = merged mean, var = merged m2 / merged n (population).
 * The statistic count is fixed by the first update (or by ns_running_init's nstat). */
typedef struct ns_running {
  double momentum;
  int cumulative;
  int exact;
  size_t nstat;    /* 0 until known */
  double *mean;    /* nstat */
  double *var;     /* nstat */
  ns_moments *acc; /* nstat, exact mode only */
  long count;      /* number of updates so far (num_batches_tracked) */
} ns_running;

/* nstat may be 0 (decided by the first update). Returns 0, or -1 on bad momentum
 * (must be in [0, 1]) or allocation failure. */
int ns_running_init(ns_running *r, double momentum, int cumulative, int exact, size_t nstat,
                    char *err);
void ns_running_free(ns_running *r);
int ns_running_copy(ns_running *dst, const ns_running *src, char *err);
/* One update from per-statistic batch moments b[0..nstat-1]. -1 if nstat differs from
 * the one already fixed. */
int ns_running_update(ns_running *r, const ns_moments *b, size_t nstat, char *err);
/* The same update in torch's own arithmetic (batch_norm_cpu_update_stats_template, for
 * order = "torch"): with m = momentum (or 1/count) and every value rounded to acc (fp32 for
 * torch's float kernels, fp64 for its double ones), b[i].m2 being torch's var_sum:
 *   mean = m batch_mean + (1 - m) mean               (each product and the sum rounded)
 *   var  = m unbiased + round(1 - m) var) in double, rounded once, where unbiased =
 *          round(var_sum / round(n - 1))
 * Exact mode has no torch form: it merges as ns_running_update does. */
int ns_running_update_torch(ns_running *r, const ns_moments *b, size_t nstat, ns_dtype acc,
                            char *err);
/* InstanceNorm with track_running_stats (torch's instance_norm): b holds the moments of
 * nbatch * nchan statistics, example-major (b[e * nchan + c]); the running object has
 * nchan statistics. Every example's statistic updates its own copy of its channel's
 * running mean and var (the momentum rule above, unbiased variance), and the channel keeps
 * the average of the copies over the examples (torch sums them in index order in float and
 * divides by nbatch). acc: -1 for the double arithmetic of ns_running_update, or fp32/fp64
 * for torch's own (ns_running_update_torch's). Exact mode merges all nbatch statistics of a
 * channel. As torch's InstanceNorm, the count (num_batches_tracked) does not change, and
 * the cumulative average (momentum None), which torch's InstanceNorm does not have, is
 * refused. */
int ns_running_update_instance(ns_running *r, const ns_moments *b, size_t nbatch, size_t nchan,
                               int acc, char *err);
/* dst = src repeated times over (dst->mean[k * src->nstat + i] = src->mean[i]): the running
 * statistics of every (example, channel) of an InstanceNorm, as torch repeats them. A src
 * never updated (nstat 0) gives PyTorch's fresh values for nstat statistics. */
int ns_running_repeat(const ns_running *src, size_t nstat, size_t times, ns_running *dst,
                      char *err);

#endif
