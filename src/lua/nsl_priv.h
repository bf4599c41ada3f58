/* nsl_priv.h: helpers shared by the files of the Lua binding (not a public interface).
 *
 * Memory rule of the binding: a C function may raise a Lua error at any point, so
 * every malloc'd object it creates lives in a garbage-collected userdata from the
 * moment it exists ("boxes" for tensors, Lua-allocated scratch for double arrays),
 * never in a bare local that an error would leak.
 *
 * Errors that blame an argument use nsl_argerror, which formats like lua_pushfstring
 * (%s %d %I %f, no %zu) and raises "bad argument #N to 'f' (message)".
 */
#ifndef NSL_PRIV_H
#define NSL_PRIV_H

#include <lauxlib.h>
#include <lua.h>

#include "core/normalize.h"
#include "core/tensor.h"
#include "lua/nsl_budget.h"

/* Work (nsl_budget.h): every function charges nsl_charge(L, units) before its C work, so a
 * sandbox's budget sees it: one unit per element read or written, and for products and
 * decompositions one more per NSL_FLOPS floating-point operations (about 20 ns of them,
 * the time a few VM instructions take). Without a budget a charge costs one lookup. */
#define NSL_FLOPS 256.0

#define NSL_TENSOR_MT "normscope.tensor"
#define NSL_RUNNING_MT "normscope.running"
#define NSL_RNG_MT "normscope.rng"

/* ---- nsl_args.c: argument checks. Each raises "bad argument #arg to 'f' (...)"
 * naming `what` (an argument or a field such as "spec.axes") and what it got. ---- */

/* Files: a sandbox (a lesson) calls nsl_files_deny once on its state; from then on every
 * function of the binding that would read or write a file (ns.load/save/tensors/audit of a
 * path, set{x={file=}}, an explorer's save/load) calls nsl_checkfiles first, which raises
 * "<what>: ... cannot read or write files" instead. */
void nsl_files_deny(lua_State *L);
void nsl_checkfiles(lua_State *L, const char *what);
/* The one read a sandbox allows: a lesson's own data, set{x = {file = NAME, sha256 = HEX}}
 * with NAME a .npy file's name alone (no folder) in the folder dir that nsl_files_dir gave
 * (the lesson's, as normscope record writes its large tensors). nsl_datafile puts the path
 * to open into out: path itself outside a sandbox; in one, dir/NAME, or it raises why
 * not. */
void nsl_files_dir(lua_State *L, const char *dir);
void nsl_datafile(lua_State *L, const char *what, const char *path, int has_digest, char *out,
                  size_t len);

/* Options of the table at arg: opts.NAME as an integer lo..hi, or a boolean; def when
 * absent; else "opts.NAME must be ..." blaming argument arg. */
int nsl_optint(lua_State *L, int arg, const char *name, int lo, int hi, int def);
int nsl_optbool(lua_State *L, int arg, const char *name, int def);
/* opts.ascii and opts.glyphs together (nsl_plot.c): a plot_glyphs value; they must agree. */
int nsl_optglyphs(lua_State *L, int arg);

/* Raises "bad argument #arg to 'f' (formatted message)". Never returns. */
int nsl_argerror(lua_State *L, int arg, const char *fmt, ...);
/* A short description of the value at idx for the end of a message ("got ..."):
 * numbers and booleans as Lua writes them, strings quoted (long ones by length),
 * objects by their type name ("tensor", "a released tensor"). Pushes a string. */
const char *nsl_got(lua_State *L, int idx);
/* Pushes s[0..len) sanitized (core/text.h: escape sequences and control characters made
 * harmless), for a message that quotes a string from input; returns it. */
const char *nsl_safe(lua_State *L, const char *s, size_t len);
/* 0 for an absent argument, 1 for a table; anything else is an error
 * "<what> must be a table". */
int nsl_opttable(lua_State *L, int arg, const char *what);
/* Every key of the table at arg must be one of names[]: else "unknown <noun> 'k'
 * (known: ...)". */
void nsl_checkfields(lua_State *L, int arg, const char *noun, const char *const *names);
/* The string at idx as an index into names[] (NULL-terminated); def when nil; else
 * "<what> must be one of ...". */
int nsl_choiceat(lua_State *L, int idx, int arg, const char *what, const char *const *names,
                 int def);
/* 1 and *out when the value at idx is an integer in lo..hi (a float with an exact
 * integer value counts), else 0: the caller words the error. */
int nsl_intat(lua_State *L, int idx, lua_Integer lo, lua_Integer hi, lua_Integer *out);
/* A size (a positive integer up to NS_MAXELEMS) at idx. */
size_t nsl_sizeat(lua_State *L, int idx, int arg, const char *what);
/* Reads a shape (a positive integer or an array of 1 to 4 of them) from arg. */
void nsl_checkshape(lua_State *L, int arg, const char *what, int *rank, size_t *shape);
/* A dtype name at arg (error lists the names); def when absent and def >= 0. */
ns_dtype nsl_checkdtype(lua_State *L, int arg, const char *what, int def);
/* The dtype name at stack index idx, blaming argument arg. */
ns_dtype nsl_dtypeat(lua_State *L, int idx, int arg, const char *what);
/* One 1-based axis at idx within rank; returns it 0-based. */
int nsl_axisat(lua_State *L, int idx, int arg, const char *what, int rank);
/* Reduction axes at idx: nil -> 0 (all), an integer or an array of distinct 1-based
 * axes within rank -> bit mask. nsl_checkaxes: the same for argument arg. */
unsigned nsl_axesat(lua_State *L, int idx, int arg, const char *what, int rank);
unsigned nsl_checkaxes(lua_State *L, int arg, const char *what, int rank);

/* ---- nsl_tensor.c: tensor userdata ---- */

/* Pushes an empty tensor userdata and returns its slot: store a tensor there and the
 * GC owns it. A slot left NULL is harmless. */
ns_tensor **nsl_newbox(lua_State *L);
/* The data of the last large tensor the collector freed (see nsl_tensor.c), as a tensor of
 * this shape and dtype when it has that many elements of it, else NULL. For outputs that
 * overwrite every element (ns_normalize_reuse): its contents are whatever it held. */
ns_tensor *nsl_take_spare(lua_State *L, int rank, const size_t *shape, ns_dtype dtype);
/* The tensor at arg, or one converted from a (nested) table of numbers, in which case
 * its box is pushed on the stack (so use absolute indices). `what` names the argument
 * in messages ("values", "x"). */
ns_tensor *nsl_tensorarg(lua_State *L, int arg, const char *what);
/* The same for the value at stack index idx, blaming argument arg. */
ns_tensor *nsl_tensorat(lua_State *L, int idx, int arg, const char *what);
/* Lua-allocated scratch of n doubles (pushed on the stack). */
double *nsl_scratch(lua_State *L, size_t n);
/* Pushes a zeroed userdata of size bytes with metatable tname and returns it: a C
 * struct that the GC owns (its __gc frees what it points to). */
void *nsl_newobj(lua_State *L, size_t size, const char *tname);
/* Creates metatable tname with gc as its only metamethod, if it does not exist yet. */
void nsl_gcmeta(lua_State *L, const char *tname, lua_CFunction gc);
/* Pushes len bytes of the malloc'd text as a string and frees the text, also when Lua
 * runs out of memory on the way (the memory error then goes on, nothing leaked). */
void nsl_pushtext_free(lua_State *L, char *text, size_t len);

/* The normalize spec at arg (nil: defaults), checked field by field against the input
 * x; gamma/beta arrays are Lua scratch pushed on the stack. */
void nsl_checkspec(lua_State *L, int arg, const ns_tensor *x, ns_spec *s);
/* The mask at field `name` of the table at arg for input x (nil or false: NULL), checked by
 * ns_mask_check with messages naming `what` ("spec.mask"); it (and a converted table's
 * tensor) stays on the stack. */
const ns_tensor *nsl_maskat(lua_State *L, int arg, const char *name, const ns_tensor *x,
                            const char *what);
/* The running-statistics object at idx, or NULL (inline: nsl_normalize.c and nsl_io.c then
 * call nothing of nsl_stats.c, which calls nsl_normalize.c's nsl_maskat). */
static inline ns_running *nsl_torunning(lua_State *L, int idx) {
  return luaL_testudata(L, idx, NSL_RUNNING_MT);
}

/* Each file adds its functions to the module table at the top of the stack. */
void nsl_open_tensor(lua_State *L);
void nsl_open_normalize(lua_State *L);
void nsl_open_stats(lua_State *L);
void nsl_open_rng(lua_State *L);
void nsl_open_io(lua_State *L);
void nsl_open_plot(lua_State *L); /* nsl_plot.c: ns.plot */

#endif
