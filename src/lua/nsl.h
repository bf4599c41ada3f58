/* nsl.h: the Lua binding of the core (module "normscope").
 *
 * Used by the normscope binary (global `ns`), by the explorer's own Lua functions
 * (set/get) and by the stock-Lua module normscope.so.
 *
 * Ownership: nsl_pushtensor takes ownership of the tensor (freed by the Lua GC);
 * nsl_checktensor returns a pointer owned by the Lua value at that index.
 */
#ifndef NSL_H
#define NSL_H

#include <lua.h>

#include "core/normalize.h"
#include "core/spectrum.h"
#include "core/tensor.h"

/* The module table: ns.tensor, ns.normalize, ... (luaL_requiref-compatible). */
int luaopen_normscope(lua_State *L);

/* ns_exec from NS_SIMD (off/0: portable loops) and NS_THREADS (1..64; else def_threads,
 * 1 for the library, the number of cores for the screen). */
void nsl_exec_from_env(ns_exec *ex, int def_threads);
/* NS_THREADS: 0 with *threads (untouched when unset or empty), or -1 with err when it is not
 * a whole number from 1 to 64 ("NS_THREADS: ..." is the caller's). The readers below use a
 * value it refuses as unset; the program refuses it first (main, a usage error). */
int nsl_threads_from_env(int *threads, char *err);
/* nsl_blas.c: the lazily loaded BLAS/LAPACKE's sonames and OpenBLAS's thread count from
 * NS_LAPACK_SONAME, NS_BLAS_SONAME, OPENBLAS_NUM_THREADS and NS_THREADS (every Lua state
 * made calls it; the program also calls it first thing, for commands that make none). */
void nsl_blas_from_env(void);

/* Passes NS_MAX_ELEMENTS from the environment to the core (ns_set_max_elements): read once
 * by each entry point, luaopen_normscope and main. Unset or empty leaves the cap as it is;
 * a value ns_max_elements_parse refuses also leaves it, and returns -1 with err (the
 * program reports that as a usage error, the module ignores it). 0 otherwise. */
int nsl_max_elements_from_env(char *err);

/* A new state with the standard libraries, the module loaded as global `ns` and in
 * package.loaded["normscope"]. NULL with err on allocation failure. */
lua_State *nsl_newstate(char *err);

/* Pushes t as a tensor userdata (takes ownership; frees t and raises on failure). */
void nsl_pushtensor(lua_State *L, ns_tensor *t);
/* The tensor at idx, or a Lua error naming argument idx. */
ns_tensor *nsl_checktensor(lua_State *L, int idx);
/* The tensor at idx, or NULL if the value is not a tensor userdata. */
ns_tensor *nsl_totensor(lua_State *L, int idx);
/* A tensor the caller owns (ns_tensor_free): a share of the tensor at idx (tensors are
 * read-only in Lua), or a new one from a flat/nested table of numbers; raises a Lua error
 * naming `what` on ragged/non-numeric/too-deep input. */
ns_tensor *nsl_checktensorlike(lua_State *L, int idx, const char *what);

/* Pushes a labelled spectrum as ns.spectrum returns it: a list of {value=, label=, mult=}
 * tables, with imag= only on complex eigenvalues. */
void nsl_pusheigs(lua_State *L, const ns_eig *e, int n);

#endif
