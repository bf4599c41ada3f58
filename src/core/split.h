/* split.h: one loop over [0, n) split into contiguous parts run on threads.
 *
 * Part t of T covers [n t / T, n (t + 1) / T); the calling thread runs the first part and
 * one new thread each of the others (a thread that cannot be started has its part run by
 * the caller). The parts are disjoint and each index is handled by the same code whatever
 * the split, so what fn writes per index never depends on the thread count. No state is
 * kept between calls. The parts on new threads run under the caller's memory account
 * (tensor.h: ns_mem_account_borrow), so what they allocate counts as the caller's.
 *
 *   static void sum_rows(void *ctx, size_t a, size_t b) { ... rows a .. b-1 ... }
 *   ns_split_run(nrows, 2, sum_rows, &ctx);
 */
#ifndef NS_SPLIT_H
#define NS_SPLIT_H

#include <stddef.h>

#define NS_SPLIT_MAXTHREADS 64

typedef void (*ns_split_fn)(void *ctx, size_t begin, size_t end);

/* threads < 1 counts as 1, above NS_SPLIT_MAXTHREADS as that, and never more than n. */
void ns_split_run(size_t n, int threads, ns_split_fn fn, void *ctx);

#endif
