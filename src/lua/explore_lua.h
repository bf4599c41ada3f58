/* explore_lua.h: the explorer state as seen from Lua (the screen's prompt, lessons).
 *
 * nsx_open registers globals that read and change ONE ns_state (explore.h) through
 * ns_state_apply, the same entry point the screen's keys use:
 *
 *   set{eps = 0, kind = "rms"}   change fields; unknown fields or bad values raise an
 *                                error naming the field, and change nothing
 *   get()                        the whole state as a table; set(get()) changes nothing
 *   undo(), redo()               step through the history; true if something changed
 *   reset()                      back to the default state (an undoable step)
 *   result()                     what the panels show, computed now (ns_result as a
 *                                table: y, shift_dev, jacobian.rank, batch.target_now,
 *                                train.exact.gap, precision.raw.digits, ...)
 *
 * Table fields (explore.h, ns_field_name): x and batch (tensor or nested table; get()
 * returns tensors), kind, axes (array of 1-based axes, or "default"), groups, eps,
 * eps_at, ddof, center (true, false or "default"), gamma and beta (number, array or
 * tensor; {} for none), dtype, acc (dtype name or "default"), algo, mode, baseline
 * (array, or false: the companion row), target, companion, seed (integer, or a decimal
 * string above 2^63), train_batches, batch_size, momentum (number, or false for the
 * cumulative average), train_source ("rng" or "batch"), train_loc, train_scale, shift,
 * scale, focus (panel name), cursor ({row, col}, 1-based).
 *
 * The state and history stay owned by the caller and must outlive L (or the globals).
 * on_change (may be NULL) runs after every successful change with ud.
 */
#ifndef NSX_EXPLORE_LUA_H
#define NSX_EXPLORE_LUA_H

#include <lua.h>

#include "explore/explore.h"

/* Registers set, get, undo, redo, reset and result as globals of L. h may be NULL (undo and redo
 * then do nothing and return false). */
void nsx_open(lua_State *L, ns_state *s, ns_history *h, void (*on_change)(void *), void *ud);

/* Pushes the state as the table get() returns. */
void nsx_pushstate(lua_State *L, const ns_state *s);
/* Pushes a result record as the table result() returns (copies; r stays the caller's). */
void nsx_pushresult(lua_State *L, const ns_result *r);

/* Applies the set{}-style table at idx to s (recorded on h when h is not NULL). Returns 0,
 * or raises a Lua error ("set: eps: must be finite and >= 0, got -1") with s unchanged. */
int nsx_settable(lua_State *L, int idx, ns_state *s, ns_history *h);

#endif
