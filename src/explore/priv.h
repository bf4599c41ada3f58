/* priv.h: what the files of the explorer share (state.c, history.c, edit.c,
 * result.c); internal to src/explore, not part of its API (users include explore.h). */
#ifndef NS_EXPLORE_PRIV_H
#define NS_EXPLORE_PRIV_H

#include <stddef.h>

#include "core/err.h" /* NS_PRINTF */
#include "explore/result.h"
#include "explore/state.h"

/* Formats the message into err (when not NULL) and returns -1:
 *   return ns_explore_fail(err, "eps must be > 0"); */
int ns_explore_fail(char *err, const char *fmt, ...) NS_PRINTF(2, 3);

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

/* The residual-block and backward-pass parts of a result (probes.c): each frees what it
 * had, then fills its fields or its skip reason. */
void ns_resid_part(const ns_state *s, const ns_spec *spec, ns_result *r);
void ns_vjp_part(const ns_state *s, const ns_spec *spec, ns_result *r);
void ns_resid_clear(ns_result *r);
void ns_vjp_clear(ns_result *r);
/* vjp_vs_jtg = max |dL/dx - J^T g| when both the backward pass and the full J are there,
 * else NaN (probes.c; called again when a deferred J arrives). */
void ns_vjp_check_jtg(ns_result *r);

#endif
