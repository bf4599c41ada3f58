/* state_priv.h: the internals of the explorer state that state.c, history.c and edit.c
 * share; not part of the explorer's API (users include explore.h). */
#ifndef NS_EXPLORE_STATE_PRIV_H
#define NS_EXPLORE_STATE_PRIV_H

#include <stddef.h>

#include "core/err.h"
#include "explore/state.h"

/* The explorer reports errors as the core does: ns_seterr (core/err.h) fills err and
 * returns -1, as in `return ns_seterr(err, "eps must be > 0");`. */

/* ns_state_apply that, on success, moves into *old (when not NULL) the values s had: its
 * scalars, and the arrays the patch replaced (owned by old, their fields in *replaced;
 * arrays it kept are NULL in old). */
int ns_state_apply_keep(ns_state *s, const ns_state_patch *p, ns_state *old, ns_fieldset *replaced,
                        char *err);
/* Replaces dst's member of field f by a copy of src's (a tensor is shared, state.h; dst's
 * old one is NOT freed). 0, or -1 on allocation failure. */
int ns_field_copy(ns_state *dst, const ns_state *src, ns_field f);

/* Bitwise equality (NaN equals NaN) of doubles, arrays of doubles, and tensors (shape,
 * dtype and data). */
int ns_same_double(double a, double b);
int ns_same_doubles(const double *a, size_t na, const double *b, size_t nb);
int ns_same_tensor(const ns_tensor *a, const ns_tensor *b);

#endif
