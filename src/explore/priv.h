/* priv.h: what the files of the explorer share (state.c, history.c, edit.c,
 * result.c); internal to src/explore, not part of its API (users include explore.h). */
#ifndef NS_EXPLORE_PRIV_H
#define NS_EXPLORE_PRIV_H

#include <stddef.h>

#include "core/err.h" /* NS_PRINTF */
#include "explore/explore.h"

/* 1 if patch p sets field f. */
#define NS_HAS(p, f) (((p)->set >> (f)) & 1u)

/* Formats the message into err (when not NULL) and returns -1:
 *   return ns_explore_fail(err, "eps must be > 0"); */
int ns_explore_fail(char *err, const char *fmt, ...) NS_PRINTF(2, 3);

/* Columns of the state's batch (0 without one). */
size_t ns_batch_cols(const ns_state *s);

/* Bitwise equality (NaN equals NaN) of doubles, arrays of doubles, and tensors (shape,
 * dtype and data). */
int ns_same_double(double a, double b);
int ns_same_doubles(const double *a, size_t na, const double *b, size_t nb);
int ns_same_tensor(const ns_tensor *a, const ns_tensor *b);

#endif
