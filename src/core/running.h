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

#endif
