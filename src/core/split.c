/* split.c: see split.h. */
#include "core/split.h"

#include <pthread.h>

#include "core/tensor.h"

typedef struct {
  ns_split_fn fn;
  void *ctx;
  size_t a, b;
  ns_mem_account *acct; /* the caller's: what the part allocates is charged to it */
} part;

static void *part_main(void *arg) {
  part *p = arg;
  p->fn(p->ctx, p->a, p->b);
  return NULL;
}

/* A part on a thread of its own runs under the caller's memory account, so a sandbox's cap
 * covers the tensors its parts make wherever they run. */
static void *part_thread(void *arg) {
  part *p = arg;
  ns_mem_account *prev = ns_mem_account_borrow(p->acct);
  p->fn(p->ctx, p->a, p->b);
  ns_mem_account_unborrow(prev);
  return NULL;
}

void ns_split_run(size_t n, int threads, ns_split_fn fn, void *ctx) {
  if (!fn || n == 0) return;
  if (threads > NS_SPLIT_MAXTHREADS) threads = NS_SPLIT_MAXTHREADS;
  if (threads < 1) threads = 1;
  if ((size_t)threads > n) threads = (int)n;
  if (threads == 1) {
    fn(ctx, 0, n);
    return;
  }
  part pt[NS_SPLIT_MAXTHREADS];
  pthread_t tid[NS_SPLIT_MAXTHREADS];
  int started[NS_SPLIT_MAXTHREADS] = {0};
  ns_mem_account *acct = ns_mem_account_current();
  for (int t = 0; t < threads; t++) {
    pt[t].fn = fn;
    pt[t].ctx = ctx;
    pt[t].a = n * (size_t)t / (size_t)threads;
    pt[t].b = n * (size_t)(t + 1) / (size_t)threads;
    pt[t].acct = acct;
  }
  for (int t = 1; t < threads; t++)
    started[t] = pthread_create(&tid[t], NULL, part_thread, &pt[t]) == 0;
  part_main(&pt[0]);
  for (int t = 1; t < threads; t++) {
    if (started[t])
      pthread_join(tid[t], NULL);
    else
      part_main(&pt[t]); /* no thread: this one does the part itself */
  }
}
