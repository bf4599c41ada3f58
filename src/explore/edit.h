/* edit.h: the undoable edits the screen's keys (and anyone else) make: each builds a
 * patch and calls ns_history_apply (h may be NULL: no undo step). Every one returns 0, or
 * -1 with err and s unchanged. They know no keys: the screen's keymap binds them.
 *
 *   ns_edit_eps_decade(&s, &h, +1, err);     // eps 1e-5 -> 1e-4, one undo step
 */
#ifndef NS_EXPLORE_EDIT_H
#define NS_EXPLORE_EDIT_H

#include <stddef.h>

#include "explore/history.h"
#include "explore/state.h"

/* Next/previous kind (dir +1/-1) that is defined for x's rank (skips instance/group for a
 * vector); clears explicit axes. */
int ns_edit_cycle_kind(ns_state *s, ns_history *h, int dir, char *err);
/* eps times 10^dir; from 0 up goes to 1e-12; down from <= 1e-12 goes to 0. */
int ns_edit_eps_decade(ns_state *s, ns_history *h, int dir, char *err);
int ns_edit_set_eps(ns_state *s, ns_history *h, double eps, char *err);
int ns_edit_toggle_eps_at(ns_state *s, ns_history *h, char *err);
int ns_edit_toggle_ddof(ns_state *s, ns_history *h, char *err);
/* default -> on -> off -> default */
/* default -> the opposite of the kind's default -> default */
int ns_edit_cycle_center(ns_state *s, ns_history *h, char *err);
/* default, then the subsets of x's axes in turn, skipping the kind's own default subset */
int ns_edit_cycle_axes(ns_state *s, ns_history *h, int dir, char *err);
int ns_edit_cycle_dtype(ns_state *s, ns_history *h, int dir, char *err);
/* default -> fp64 -> fp32 -> fp16 -> bf16 -> default */
int ns_edit_cycle_acc(ns_state *s, ns_history *h, int dir, char *err);
int ns_edit_cycle_algo(ns_state *s, ns_history *h, int dir, char *err);
int ns_edit_toggle_mode(ns_state *s, ns_history *h, char *err);
/* Toggle axis k (1-based) in the explicit axes (starting from the kind's default). */
int ns_edit_toggle_axis(ns_state *s, ns_history *h, int axis, char *err);
int ns_edit_groups_step(ns_state *s, ns_history *h, int dir, char *err);
/* momentum * 2^dir clamped to (0, 1]; */
int ns_edit_momentum_step(ns_state *s, ns_history *h, int dir, char *err);
int ns_edit_toggle_cumulative(ns_state *s, ns_history *h, char *err);
/* Sets the flat element i of x (0-based) to v. */
int ns_edit_set_x(ns_state *s, ns_history *h, size_t i, double v, char *err);
/* x as a vector or matrix: add/remove a row (axis 1) or column (axis 2) at index `at`
 * (0-based; insertion before it, at == count appends). A vector is one row of columns:
 * axis 2 adds/removes elements, adding a row makes it a (2, D) matrix. New cells are 0.
 * gamma/beta that no longer fit are dropped. x of rank 3/4: error. */
int ns_edit_x_insert(ns_state *s, ns_history *h, int axis, size_t at, char *err);
int ns_edit_x_remove(ns_state *s, ns_history *h, int axis, size_t at, char *err);
/* The same on the batch matrix (row, col 0-based). */
int ns_edit_set_batch(ns_state *s, ns_history *h, size_t row, size_t col, double v, char *err);
int ns_edit_batch_insert(ns_state *s, ns_history *h, int axis, size_t at, char *err);
int ns_edit_batch_remove(ns_state *s, ns_history *h, int axis, size_t at, char *err);
/* Target/companion rows (1-based). */
int ns_edit_set_target(ns_state *s, ns_history *h, int row, char *err);
int ns_edit_set_companion(ns_state *s, ns_history *h, int row, char *err);
/* Probe parameters. */
int ns_edit_set_shift(ns_state *s, ns_history *h, double b, char *err);
int ns_edit_set_scale(ns_state *s, ns_history *h, double a, char *err);
#endif
