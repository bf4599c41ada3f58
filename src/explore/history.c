/* history.c: the undo/redo history of explorer states. See explore.h for the contract. */
#include "explore/explore.h"

#include <stdlib.h>
#include <string.h>

#include "explore/priv.h"

/* ---------------------------------------------------------------- history */

size_t ns_state_bytes(const ns_state *s) {
  size_t b = sizeof *s;
  if (s->x) b += s->x->n * ns_dtype_size(s->x->dtype);
  if (s->batch) /* and the baseline, one value per column */
    b += s->batch->n * ns_dtype_size(s->batch->dtype) + s->batch->shape[1] * sizeof(double);
  return b + (s->ngamma + s->nbeta) * sizeof(double);
}

void ns_history_init(ns_history *h, size_t depth) {
  memset(h, 0, sizeof *h);
  h->depth = depth ? depth : 1;
  h->max_bytes = NS_HISTORY_MAX_BYTES;
}

/* Drops the oldest undo steps while the copies exceed max_bytes (keeping one). */
static void history_trim(ns_history *h) {
  size_t total = 0;
  for (size_t i = 0; i < h->nundo; i++) total += ns_state_bytes(&h->undo[i]);
  for (size_t i = 0; i < h->nredo; i++) total += ns_state_bytes(&h->redo[i]);
  size_t drop = 0;
  while (total > h->max_bytes && h->nundo - drop > 1) total -= ns_state_bytes(&h->undo[drop++]);
  if (drop == 0) return;
  for (size_t i = 0; i < drop; i++) ns_state_free(&h->undo[i]);
  memmove(h->undo, h->undo + drop, (h->nundo - drop) * sizeof *h->undo);
  h->nundo -= drop;
}

static void free_stack(ns_state **v, size_t *n) {
  for (size_t i = 0; i < *n; i++) ns_state_free(&(*v)[i]);
  free(*v);
  *v = NULL;
  *n = 0;
}

void ns_history_free(ns_history *h) {
  free_stack(&h->undo, &h->nundo);
  free_stack(&h->redo, &h->nredo);
}

/* Takes ownership of *st (moved into the stack). */
static int stack_push(ns_state **v, size_t *n, size_t depth, ns_state *st, char *err) {
  if (*n >= depth) { /* drop the oldest */
    ns_state_free(&(*v)[0]);
    memmove(*v, *v + 1, (*n - 1) * sizeof **v);
    (*n)--;
  }
  ns_state *nv = realloc(*v, (*n + 1) * sizeof **v);
  if (!nv) {
    ns_state_free(st);
    return ns_explore_fail(err, "out of memory recording the undo step");
  }
  *v = nv;
  nv[(*n)++] = *st;
  return 0;
}

int ns_history_push(ns_history *h, const ns_state *s, char *err) {
  ns_state c;
  if (ns_state_copy(&c, s, err) != 0) return -1;
  free_stack(&h->redo, &h->nredo);
  if (stack_push(&h->undo, &h->nundo, h->depth, &c, err) != 0) return -1;
  history_trim(h);
  return 0;
}

int ns_history_apply(ns_history *h, ns_state *s, const ns_state_patch *p, char *err) {
  int view_only = 1;
  for (int f = 0; f < NS_F_COUNT; f++)
    if (NS_HAS(p, f) && !ns_field_is_view((ns_field)f)) view_only = 0;
  if (!h || view_only) return ns_state_apply(s, p, err);
  ns_state before;
  if (ns_state_copy(&before, s, err) != 0) return -1;
  if (ns_state_apply(s, p, err) != 0) {
    ns_state_free(&before);
    return -1;
  }
  free_stack(&h->redo, &h->nredo);
  if (stack_push(&h->undo, &h->nundo, h->depth, &before, err) == 0) history_trim(h);
  return 0; /* applied (even if the undo step could not be recorded) */
}

static int history_swap(ns_state **from, size_t *nfrom, ns_state **to, size_t *nto, size_t depth,
                        ns_state *s) {
  if (*nfrom == 0) return 0;
  ns_state prev = (*from)[--(*nfrom)];
  ns_state cur = *s;
  *s = prev;
  (void)stack_push(to, nto, depth, &cur, NULL); /* on failure cur is freed: no redo step */
  return 1;
}

int ns_history_undo(ns_history *h, ns_state *s) {
  return history_swap(&h->undo, &h->nundo, &h->redo, &h->nredo, (size_t)-1, s);
}

int ns_history_redo(ns_history *h, ns_state *s) {
  return history_swap(&h->redo, &h->nredo, &h->undo, &h->nundo, h->depth, s);
}
