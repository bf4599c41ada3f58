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

#define NSL_TENSOR_MT "normscope.tensor"
#define NSL_RUNNING_MT "normscope.running"
#define NSL_RNG_MT "normscope.rng"

/* Raises "bad argument #arg to 'f' (formatted message)". Never returns. */
int nsl_argerror(lua_State *L, int arg, const char *fmt, ...);

/* Pushes an empty tensor userdata and returns its slot: store a tensor there and the
 * GC owns it. A slot left NULL is harmless. */
ns_tensor **nsl_newbox(lua_State *L);
/* Pushes a tensor userdata for t (takes ownership) or raises with err if t is NULL. */
void nsl_pushnew(lua_State *L, ns_tensor *t, const char *err);
/* The tensor at arg, or one converted from a (nested) table of numbers, in which case
 * its box is pushed on the stack (so use absolute indices). `what` names the argument
 * in messages ("values", "x"). */
ns_tensor *nsl_tensorarg(lua_State *L, int arg, const char *what);
/* The same for the value at stack index idx, blaming argument arg in messages. */
ns_tensor *nsl_tensorat(lua_State *L, int idx, int arg, const char *what);
/* Lua-allocated scratch of n doubles (pushed on the stack). */
double *nsl_scratch(lua_State *L, size_t n);
/* Reads a shape (a positive integer or an array of 1 to 4 of them) from arg. */
void nsl_checkshape(lua_State *L, int arg, const char *what, int *rank, size_t *shape);
/* A dtype name at arg (error lists the names); def when absent and def >= 0. */
ns_dtype nsl_checkdtype(lua_State *L, int arg, const char *what, int def);
/* The dtype name at stack index idx, blaming argument arg. */
ns_dtype nsl_dtypeat(lua_State *L, int idx, int arg, const char *what);
/* Reduction axes at arg: nil -> 0 (all), an integer or an array of distinct 1-based
 * axes within rank -> bit mask. */
unsigned nsl_checkaxes(lua_State *L, int arg, const char *what, int rank);

/* The normalize spec at arg (nil: defaults), checked field by field against the input
 * x; gamma/beta arrays are Lua scratch pushed on the stack. */
void nsl_checkspec(lua_State *L, int arg, const ns_tensor *x, ns_spec *s);
/* The running-statistics object at idx, or NULL / an argument error. */
ns_running *nsl_torunning(lua_State *L, int idx);

/* Each file adds its functions to the module table at the top of the stack. */
void nsl_open_tensor(lua_State *L);
void nsl_open_normalize(lua_State *L);
void nsl_open_stats(lua_State *L);
void nsl_open_rng(lua_State *L);
void nsl_open_io(lua_State *L);

#endif
