/* explore_lua.h: the explorer state as seen from Lua (the screen's prompt, lessons,
 * scripts).
 *
 * nsx_open registers globals that read and change ONE ns_state (src/explore) through
 * ns_history_apply, the same entry point the screen's keys use; ns.explorer() (module
 * function, nsx_open_module) returns a headless explorer with the same functions as
 * methods (e:set{...}, e:get(), ...):
 *
 *   set{eps = 0, kind = "rms"}   change fields; unknown fields or bad values raise an
 *                                error naming the field, and change nothing
 *   get()                        the whole state as a table; set(get()) changes nothing
 *   undo(), redo()               step through the history; true if something changed
 *   reset()                      back to the default state (an undoable step)
 *   result()                     what the panels show, computed now (ns_result as a
 *                                table: y, shift_dev, cond, jacobian.rank, batch.target_now,
 *                                train.exact.gap, precision.raw.digits, ...)
 *   dump()                       the state as a Lua chunk of set{...} (bit for bit)
 *   save(FILE), load(FILE)       dump() written atomically; a state file applied (it runs
 *                                with nothing but set and ns.tensor in reach)
 *   plot([panel] [, opts])       the panel's figure (explore/panelfig.h) as text, the cells
 *                                the screen's figure view shows; on the screen it opens
 *                                that view too (the view fields focus and figure)
 *
 * The fields are those of src/explore/fields.h (`help set` lists them); a tensor field
 * also takes {file = PATH [, sha256 = HEX]}, which loads the file (and sets `source`);
 * set{} then returns a string for each load that skipped something (a CSV header), in
 * ns_file_load_note's words after the field: "x: PATH: its line 1, ... skipped".
 * A screen adds view fields (focus, cursor) through nsx_set_view; without one, those two
 * names are accepted and ignored so lessons and state files run headless too.
 *
 * The state and history given to nsx_open stay owned by the caller and must outlive L.
 * on_change (may be NULL) runs after every successful change with ud.
 */
#ifndef NSX_EXPLORE_LUA_H
#define NSX_EXPLORE_LUA_H

#include <lua.h>

#include "explore/explore.h"

typedef struct nsx_ctx nsx_ctx;

/* Fields a view (the screen) keeps itself: set{} hands them to check (which validates
 * the value at idx into a pending copy, or fills err and returns -1) and, once the state's
 * fields applied, calls commit; get() calls push to add them to the table on top, and set{}
 * and plot() call it first (into a table they drop), so the view can start its pending copy
 * from what it shows. */
typedef struct {
  const char *const *fields; /* NULL-terminated */
  int (*check)(lua_State *L, void *ud, const char *field, int idx, char *err);
  void (*commit)(void *ud);
  void (*push)(lua_State *L, void *ud);
} nsx_view;

/* The names of the functions nsx_open registers (and the explorer's methods). */
extern const char *const nsx_function_names[];

/* Registers set, get, undo, redo, reset, result, dump, save, load and plot as globals of L. h
 * may be NULL (undo and redo then do nothing and return false). load keeps Lua's own
 * load for everything but a state file: load(FILE) with one string naming an existing
 * file applies it; load(chunk, ...) is the standard function. */
nsx_ctx *nsx_open(lua_State *L, ns_state *s, ns_history *h, void (*on_change)(void *), void *ud);
/* nsx_open with flags: NSX_NO_FILES leaves out save and load (a sandbox: no files). */
enum { NSX_NO_FILES = 1 };
nsx_ctx *nsx_open_ex(lua_State *L, ns_state *s, ns_history *h, void (*on_change)(void *), void *ud,
                     unsigned flags);
/* Gives the globals a view (may be NULL); view and ud must outlive L. */
void nsx_set_view(nsx_ctx *c, const nsx_view *view, void *ud);
/* Adds ns.explorer to the module table at the top of the stack. */
void nsx_open_module(lua_State *L);

/* Pushes the state as the table get() returns. */
void nsx_pushstate(lua_State *L, const ns_state *s);
/* Pushes a result record as the table result() returns (copies; r stays the caller's). */
void nsx_pushresult(lua_State *L, const ns_result *r);
/* Checks result()'s tables against result.h's list of ns_result members: each member is
 * pushed by a row, read by a section's hand-written part, or listed as not shown (and the
 * lists name only members). 0, or -1 with what is wrong in err. */
int nsx_result_check(char *err, size_t len);

/* Applies the set{}-style table at idx to s (recorded on h when h is not NULL). Returns 0,
 * or raises a Lua error ("set: eps: must be finite and >= 0, got -1") with s unchanged. */
int nsx_settable(lua_State *L, int idx, ns_state *s, ns_history *h);
/* Applies a state chunk held in memory (text, len bytes, named name in messages) as load(FILE)
 * applies a state file: only set and ns.tensor in reach, the state file's instruction budget
 * and memory cap, against a copy of s, so s changes only when the whole chunk ran (one change,
 * recorded on h when h is not NULL). 0, or -1 with err (never raises). */
int nsx_load_text(lua_State *L, ns_state *s, ns_history *h, const char *text, size_t len,
                  const char *name, char *err);
/* Writes s as a state file (dump) atomically. 0, or -1 with err. */
int nsx_save(const ns_state *s, const char *path, char *err);

#endif
