/* result_priv.h: the internals of the explorer result that result.c and probes.c share;
 * not part of the explorer's API (users include explore.h). */
#ifndef NS_EXPLORE_RESULT_PRIV_H
#define NS_EXPLORE_RESULT_PRIV_H

#include "explore/result.h"
#include "explore/state_priv.h"

/* The residual-block and backward-pass parts of a result (probes.c): each frees what it
 * had, then fills its fields or its skip reason. */
void ns_resid_part(const ns_state *s, const ns_spec *spec, ns_result *r);
void ns_vjp_part(const ns_state *s, const ns_spec *spec, ns_result *r);
/* Frees and resets the members of the given parts (NS_RP_* bits), walking NS_RESULT
 * (result_clear.c); the two below are its residual and backward parts. */
void ns_result_clear_parts(ns_result *r, unsigned parts);
void ns_resid_clear(ns_result *r);
void ns_vjp_clear(ns_result *r);
/* vjp_vs_jtg = max |dL/dx - J^T g| when both the backward pass and the full J are there,
 * else NaN (probes.c; called again when a deferred J arrives). */
void ns_vjp_check_jtg(ns_result *r);

#endif
