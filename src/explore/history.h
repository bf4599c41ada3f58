/* history.h: undo and redo of explorer states.
 *
 * A step stores only what a change changed: the old values of the fields that differ
 * (a settings key on a 64 MB x stores a few bytes), and for x a list of the changed
 * elements when few changed (a cell edit stores one element), so hundreds of steps fit
 * where whole copies of x would not. Undo swaps those values back into the state, so the
 * same step then describes the redo.
 *
 * Ownership: the history owns its steps; ns_history_free releases them.
 *
 *   ns_history h;
 *   ns_history_init(&h, 256);
 *   ns_history_apply(&h, &s, &patch, err);   // s changed, one undo step
 *   ns_history_undo(&h, &s);                 // s as before
 *   ns_history_free(&h);
 */
#ifndef NS_EXPLORE_HISTORY_H
#define NS_EXPLORE_HISTORY_H

#include <stddef.h>

#include "explore/state.h"

/* The steps are bounded in count (depth) and in memory: when undo plus redo hold more
 * than max_bytes, the oldest undo steps are dropped (at least one is kept). */
#define NS_HISTORY_MAX_BYTES ((size_t)256 << 20)

typedef struct {
  ns_fieldset set;       /* the fields this step swaps */
  ns_state v;            /* their values; v owns the arrays of the fields in set (x may be NULL:
                            then the change of x is the element list below) */
  size_t ndx;            /* changed elements of x (same shape and dtype) */
  size_t *dx_idx;        /* their flat indices */
  unsigned char *dx_val; /* their values, ns_dtype_size bytes each */
} ns_history_step;

typedef struct {
  ns_history_step *undo; /* oldest first */
  size_t nundo;
  ns_history_step *redo; /* most recently undone last */
  size_t nredo;
  size_t depth;     /* at most this many undo steps are kept (>= 1) */
  size_t max_bytes; /* NS_HISTORY_MAX_BYTES after ns_history_init; may be changed */
} ns_history;

void ns_history_init(ns_history *h, size_t depth);
void ns_history_free(ns_history *h);
/* Records the whole of s as an undo step (undoing it restores s) and clears redo. */
int ns_history_push(ns_history *h, const ns_state *s, char *err);
/* Applies p to s (ns_state_apply); on success records what changed as an undo step
 * (nothing when nothing changed, or when h is NULL) and clears redo. 0 or -1 with err
 * (s unchanged). */
int ns_history_apply(ns_history *h, ns_state *s, const ns_state_patch *p, char *err);
/* Sets element i of x to v (rounded to x's dtype) in place, as one undo step holding that
 * element alone: no copy of x, so a cell edit of a large x costs O(1) here. An x that
 * still is a loaded file's tensor (s->source set) forgets its source, and undoing the step
 * brings it back. 0, or -1 with err (s unchanged). */
int ns_history_set_x(ns_history *h, ns_state *s, size_t i, double v, char *err);
/* Undo (redo) one step. 1 if something was undone (redone), else 0. */
int ns_history_undo(ns_history *h, ns_state *s);
int ns_history_redo(ns_history *h, ns_state *s);
/* Bytes the steps hold. */
size_t ns_history_bytes(const ns_history *h);

#endif
