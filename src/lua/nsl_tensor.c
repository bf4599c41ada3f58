/* nsl_tensor.c: the tensor userdata (methods, metamethods) and tensor constructors.
 * The arithmetic itself lives in core/tensor_ops.c; this file checks arguments and
 * moves values between Lua and C. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tensor_ops.h"
#include "lua/nsl.h"
#include "lua/nsl_priv.h"

/* The collector sees only a box, a pointer: told nothing of the data, it would let the
 * tensors a loop drops pile up (30 normalizations of a 64 MB x reached 1.6 GB). So each new
 * box first steps it as if the last box's data (filled by now, when that box is still
 * alive: a weak reference) had been allocated in Lua, unless the program stopped it. */
static const char LASTBOX_KEY[] = "normscope.lastbox";

static void gc_account_last(lua_State *L) {
  luaL_checkstack(L, 4, "creating a tensor");
  if (lua_getfield(L, LUA_REGISTRYINDEX, LASTBOX_KEY) != LUA_TTABLE) { /* {box}, weak */
    lua_pop(L, 1);
    lua_createtable(L, 1, 0);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "v");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, LASTBOX_KEY);
  }
  size_t kb = 0;
  if (lua_rawgeti(L, -1, 1) == LUA_TUSERDATA) {
    ns_tensor **last = lua_touserdata(L, -1);
    if (*last) kb = (*last)->n * ns_dtype_size((*last)->dtype) >> 10;
  }
  lua_pop(L, 2);
  if (kb >= 64 && lua_gc(L, LUA_GCISRUNNING))
    lua_gc(L, LUA_GCSTEP, kb > (size_t)INT_MAX ? INT_MAX : (int)kb);
}

ns_tensor **nsl_newbox(lua_State *L) {
  gc_account_last(L);
  ns_tensor **box = lua_newuserdatauv(L, sizeof *box, 0);
  *box = NULL;
  luaL_setmetatable(L, NSL_TENSOR_MT);
  if (lua_getfield(L, LUA_REGISTRYINDEX, LASTBOX_KEY) == LUA_TTABLE) {
    lua_pushvalue(L, -2);
    lua_rawseti(L, -2, 1);
  }
  lua_pop(L, 1);
  return box;
}

/* Protected body of nsl_pushtensor: allocate the box, then hand the tensor over. */
static int pushbox_raw(lua_State *L) {
  ns_tensor *t = lua_touserdata(L, 1);
  ns_tensor **box = nsl_newbox(L);
  *box = t;
  return 1;
}

void nsl_pushtensor(lua_State *L, ns_tensor *t) {
  if (!t) luaL_error(L, "internal error: no tensor to push");
  if (!lua_checkstack(L, 3)) {
    ns_tensor_free(t);
    luaL_error(L, "Lua stack overflow");
  }
  lua_pushcfunction(L, pushbox_raw);
  lua_pushlightuserdata(L, t);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) { /* the box was never made: t is still ours */
    ns_tensor_free(t);
    lua_error(L);
  }
}

ns_tensor *nsl_totensor(lua_State *L, int idx) {
  ns_tensor **box = luaL_testudata(L, idx, NSL_TENSOR_MT);
  return box ? *box : NULL;
}

ns_tensor *nsl_checktensor(lua_State *L, int idx) {
  ns_tensor **box = luaL_testudata(L, idx, NSL_TENSOR_MT);
  if (!box) nsl_argerror(L, idx, "tensor expected, got %s", nsl_got(L, idx));
  if (!*box) nsl_argerror(L, idx, "tensor has been released");
  return *box;
}

double *nsl_scratch(lua_State *L, size_t n) {
  if (n > NS_MAXELEMS) luaL_error(L, "scratch array of %I elements is too large", (lua_Integer)n);
  return lua_newuserdatauv(L, (n ? n : 1) * sizeof(double), 0);
}

void *nsl_newobj(lua_State *L, size_t size, const char *tname) {
  void *p = lua_newuserdatauv(L, size, 0);
  memset(p, 0, size);
  luaL_setmetatable(L, tname);
  return p;
}

void nsl_gcmeta(lua_State *L, const char *tname, lua_CFunction gc) {
  if (luaL_newmetatable(L, tname)) {
    lua_pushcfunction(L, gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
}

/* Protected body of nsl_pushtext_free: the text (light userdata 1) of length (2). */
static int pushtext_raw(lua_State *L) {
  lua_pushlstring(L, lua_touserdata(L, 1), (size_t)lua_tointeger(L, 2));
  return 1;
}

void nsl_pushtext_free(lua_State *L, char *text, size_t len) {
  lua_pushcfunction(L, pushtext_raw); /* a light C function: no allocation */
  lua_pushlightuserdata(L, text);
  lua_pushinteger(L, (lua_Integer)len);
  int rc = lua_pcall(L, 2, 1, 0);
  free(text);
  if (rc != LUA_OK) lua_error(L);
}

/* ---- conversion of nested Lua arrays ---------------------------------------------- */

/* Shape of the nested array at the top of the stack, read along first elements. */
static void table_shape(lua_State *L, int arg, const char *what, int *rank, size_t *shape) {
  int r = 0;
  lua_pushvalue(L, -1);
  while (lua_type(L, -1) == LUA_TTABLE) {
    size_t len = lua_rawlen(L, -1);
    if (len == 0) nsl_argerror(L, arg, "%s is empty or has an empty row", what);
    if (r == NS_MAXRANK) nsl_argerror(L, arg, "%s nests deeper than rank 4", what);
    shape[r++] = len;
    lua_rawgeti(L, -1, 1); /* first element */
    lua_remove(L, -2);
  }
  lua_pop(L, 1);
  *rank = r;
}

/* Copies the nested array at the top of the stack into t from *pos, checking that
 * every level has the expected length and every leaf is a number. */
static void fill(lua_State *L, int arg, int depth, int rank, const size_t *shape, ns_tensor *t,
                 size_t *pos, char *path, size_t plen) {
  size_t len = lua_rawlen(L, -1);
  if (len != shape[depth])
    nsl_argerror(L, arg, "%s has %I elements, expected %I (ragged array)", path, (lua_Integer)len,
                 (lua_Integer)shape[depth]);
  size_t used = strlen(path);
  for (size_t i = 1; i <= len; i++) {
    snprintf(path + used, plen - used, "[%zu]", i);
    int ty = lua_rawgeti(L, -1, (lua_Integer)i);
    if (depth < rank - 1) {
      if (ty != LUA_TTABLE)
        nsl_argerror(L, arg, "%s is a %s, expected an array (ragged array)", path,
                     lua_typename(L, ty));
      fill(L, arg, depth + 1, rank, shape, t, pos, path, plen);
    } else {
      if (ty != LUA_TNUMBER)
        nsl_argerror(L, arg, "%s is a %s, expected a number", path, lua_typename(L, ty));
      ns_tensor_set(t, (*pos)++, lua_tonumber(L, -1));
    }
    lua_pop(L, 1);
  }
  path[used] = '\0';
}

/* Tensor from the value at idx (a tensor, or a nested table converted into a new
 * boxed fp64 tensor pushed on the stack). */
ns_tensor *nsl_tensorat(lua_State *L, int idx, int arg, const char *what) {
  idx = lua_absindex(L, idx);
  ns_tensor *t = nsl_totensor(L, idx);
  if (t) {
    nsl_charge(L, (double)t->n); /* every caller reads all of it */
    return t;
  }
  if (luaL_testudata(L, idx, NSL_TENSOR_MT)) nsl_argerror(L, arg, "%s has been released", what);
  if (lua_type(L, idx) != LUA_TTABLE)
    nsl_argerror(L, arg, "%s must be a tensor or an array of numbers, got %s", what,
                 nsl_got(L, idx));
  int rank;
  size_t shape[NS_MAXRANK];
  char err[NS_ERRLEN];
  lua_pushvalue(L, idx);
  table_shape(L, arg, what, &rank, shape);
  lua_pop(L, 1);
  if (rank == 0) nsl_argerror(L, arg, "%s must be an array of numbers", what);
  if (ns_shape_check(rank, shape, err) < 0) nsl_argerror(L, arg, "%s: %s", what, err);
  double n = 1;
  for (int k = 0; k < rank; k++) n *= (double)shape[k];
  nsl_charge(L, 2 * n); /* the table read, the tensor written */
  ns_tensor **box = nsl_newbox(L);
  *box = ns_tensor_new(rank, shape, NS_FP64, err);
  if (!*box) nsl_argerror(L, arg, "%s: %s", what, err);
  char path[160];
  snprintf(path, sizeof path, "%s", what);
  size_t pos = 0;
  lua_pushvalue(L, idx);
  fill(L, arg, 0, rank, shape, *box, &pos, path, sizeof path);
  lua_pop(L, 1);
  return *box;
}

ns_tensor *nsl_tensorarg(lua_State *L, int arg, const char *what) {
  return nsl_tensorat(L, arg, arg, what);
}

ns_tensor *nsl_checktensorlike(lua_State *L, int idx, const char *what) {
  idx = lua_absindex(L, idx);
  ns_tensor *t = nsl_totensor(L, idx);
  if (t) { /* tensors are read-only in Lua: the caller shares this one (tensor.h) */
    nsl_charge(L, (double)t->n);
    return ns_tensor_share(t);
  }
  int top = lua_gettop(L);
  nsl_tensorat(L, idx, idx, what);
  ns_tensor **box = lua_touserdata(L, -1);
  ns_tensor *c = *box; /* steal it from the box */
  *box = NULL;
  lua_settop(L, top);
  return c;
}

static ns_tensor *self(lua_State *L) {
  return nsl_checktensor(L, 1);
}

/* self, for a method that touches each element `per` times (read and written: 2). */
static ns_tensor *self_work(lua_State *L, double per) {
  ns_tensor *t = nsl_checktensor(L, 1);
  nsl_charge(L, per * (double)t->n);
  return t;
}

/* n log2 n: the comparisons of a sort of n elements. */
static double nlogn(size_t n) {
  double lg = 1;
  for (size_t m = n; m > 1; m >>= 1) lg++;
  return (double)n * lg;
}

/* ---- methods --------------------------------------------------------------------- */

/* t:shape() -> array of sizes */
static int t_shape(lua_State *L) {
  ns_tensor *t = self(L);
  lua_createtable(L, t->rank, 0);
  for (int k = 0; k < t->rank; k++) {
    lua_pushinteger(L, (lua_Integer)t->shape[k]);
    lua_rawseti(L, -2, k + 1);
  }
  return 1;
}

/* t:dtype() -> "fp64" | "fp32" | "fp16" | "bf16" */
static int t_dtype(lua_State *L) {
  lua_pushstring(L, ns_dtype_name(self(L)->dtype));
  return 1;
}

/* t:flat() -> every element in row-major order */
static int t_flat(lua_State *L) {
  ns_tensor *t = self_work(L, 2);
  if (t->n > (size_t)1 << 26)
    luaL_error(L, "flat: %I elements are too many for a Lua table", (lua_Integer)t->n);
  lua_createtable(L, (int)t->n, 0);
  for (size_t i = 0; i < t->n; i++) {
    lua_pushnumber(L, ns_tensor_get(t, i));
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static void nest(lua_State *L, const ns_tensor *t, int depth, size_t *pos) {
  lua_createtable(L, (int)t->shape[depth], 0);
  for (size_t i = 0; i < t->shape[depth]; i++) {
    if (depth == t->rank - 1)
      lua_pushnumber(L, ns_tensor_get(t, (*pos)++));
    else
      nest(L, t, depth + 1, pos);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

/* t:totable() -> nested arrays of the tensor's shape */
static int t_totable(lua_State *L) {
  ns_tensor *t = self_work(L, 2);
  if (t->n > (size_t)1 << 26)
    luaL_error(L, "totable: %I elements are too many for a Lua table", (lua_Integer)t->n);
  size_t pos = 0;
  nest(L, t, 0, &pos);
  return 1;
}

/* t:reshape(shape) or t:reshape(d1, d2, ...); one size may be -1 (inferred) */
static int t_reshape(lua_State *L) {
  ns_tensor *t = self_work(L, 2);
  int nargs = lua_gettop(L) - 1, rank = 0, infer = -1;
  size_t shape[NS_MAXRANK];
  char err[NS_ERRLEN];
  if (nargs < 1) return nsl_argerror(L, 2, "shape expected");
  int tab = lua_type(L, 2) == LUA_TTABLE;
  int count = tab ? (int)lua_rawlen(L, 2) : nargs;
  if (tab && nargs > 1) return nsl_argerror(L, 3, "give the shape as one array or as sizes");
  if (count < 1 || count > NS_MAXRANK)
    return nsl_argerror(L, 2, "shape must have 1 to 4 sizes, got %d", count);
  size_t known = 1;
  for (int k = 0; k < count; k++) {
    int arg = tab ? 2 : 2 + k;
    if (tab)
      lua_rawgeti(L, 2, k + 1);
    else
      lua_pushvalue(L, 2 + k);
    lua_Integer v;
    if (!nsl_intat(L, -1, -1, LUA_MAXINTEGER, &v) || v == 0)
      return nsl_argerror(L, arg, "shape[%d] must be a positive integer or -1, got %s", k + 1,
                          nsl_got(L, -1));
    lua_pop(L, 1);
    if (v == -1) {
      if (infer >= 0) return nsl_argerror(L, arg, "only one size may be -1");
      infer = k;
      shape[k] = 1;
    } else {
      if ((unsigned long long)v > NS_MAXELEMS)
        return nsl_argerror(L, arg, "shape[%d] = %I is too large", k + 1, v);
      shape[k] = (size_t)v;
      known *= shape[k];
      if (known > NS_MAXELEMS) return nsl_argerror(L, arg, "shape has too many elements");
    }
  }
  rank = count;
  for (int k = rank; k < NS_MAXRANK; k++) shape[k] = 1;
  if (infer >= 0) {
    if (t->n % known)
      return nsl_argerror(L, 2, "cannot infer the -1 size: %I elements do not divide by %I",
                          (lua_Integer)t->n, (lua_Integer)known);
    shape[infer] = t->n / known;
  }
  ns_tensor **out = nsl_newbox(L);
  *out = ns_op_reshape(t, rank, shape, err);
  if (!*out) return nsl_argerror(L, 2, "%s", err);
  return 1;
}

/* Resolves a 1-based, possibly negative (from the end) index into 0-based. */
static size_t slice_index(lua_State *L, int arg, const char *what, lua_Integer v, size_t len) {
  lua_Integer n = (lua_Integer)len;
  if (v < 0) v = n + 1 + v;
  if (v < 1 || v > n) nsl_argerror(L, arg, "%s index %I is out of range 1..%I", what, v, n);
  return (size_t)(v - 1);
}

/* t:slice(axis, from [, to]): elements from..to (1-based, inclusive; negative counts
 * from the end) along axis. */
static int t_slice(lua_State *L) {
  ns_tensor *t = self_work(L, 2);
  char err[NS_ERRLEN];
  int axis = nsl_axisat(L, 2, 2, "axis", t->rank);
  lua_Integer from, to = -1;
  if (!nsl_intat(L, 3, LUA_MININTEGER, LUA_MAXINTEGER, &from))
    return nsl_argerror(L, 3, "from must be an integer index, got %s", nsl_got(L, 3));
  if (!lua_isnoneornil(L, 4) && !nsl_intat(L, 4, LUA_MININTEGER, LUA_MAXINTEGER, &to))
    return nsl_argerror(L, 4, "to must be an integer index, got %s", nsl_got(L, 4));
  size_t f = slice_index(L, 3, "from", from, t->shape[axis]);
  size_t e = slice_index(L, 4, "to", to, t->shape[axis]);
  if (e < f)
    return nsl_argerror(L, 4, "to (%I) is before from (%I): the slice would be empty",
                        (lua_Integer)e + 1, (lua_Integer)f + 1);
  ns_tensor **out = nsl_newbox(L);
  *out = ns_op_slice(t, axis, f, e + 1, err);
  if (!*out) return luaL_error(L, "slice: %s", err);
  return 1;
}

/* t:copy() -> an independent tensor */
static int t_copy(lua_State *L) {
  ns_tensor *t = self_work(L, 2);
  ns_tensor **out = nsl_newbox(L);
  *out = ns_tensor_copy(t);
  if (!*out) return luaL_error(L, "copy: out of memory");
  return 1;
}

/* t:astype(dtype) -> a copy stored in dtype (each element rounded once) */
static int t_astype(lua_State *L) {
  ns_tensor *t = self_work(L, 2);
  char err[NS_ERRLEN];
  ns_dtype d = nsl_checkdtype(L, 2, "dtype", -1);
  ns_tensor **out = nsl_newbox(L);
  *out = ns_op_astype(t, d, err);
  if (!*out) return luaL_error(L, "astype: %s", err);
  return 1;
}

/* t:T() -> rank-2 transpose */
static int t_T(lua_State *L) {
  ns_tensor *t = self_work(L, 2);
  char err[NS_ERRLEN];
  if (t->rank != 2) return nsl_argerror(L, 1, "T needs a rank-2 tensor, got rank %d", t->rank);
  ns_tensor **out = nsl_newbox(L);
  *out = ns_op_transpose(t, err);
  if (!*out) return luaL_error(L, "T: %s", err);
  return 1;
}

static int unary(lua_State *L, ns_unop op) {
  ns_tensor *t = self_work(L, 2);
  char err[NS_ERRLEN];
  ns_tensor **out = nsl_newbox(L);
  *out = ns_op_unary(t, op, err);
  if (!*out) return luaL_error(L, "%s", err);
  return 1;
}

static int t_tanh(lua_State *L) {
  return unary(L, NS_UN_TANH);
}
static int t_relu(lua_State *L) {
  return unary(L, NS_UN_RELU);
}
static int t_exp(lua_State *L) {
  return unary(L, NS_UN_EXP);
}
static int t_log(lua_State *L) {
  return unary(L, NS_UN_LOG);
}
static int t_abs(lua_State *L) {
  return unary(L, NS_UN_ABS);
}
static int t_sqrt(lua_State *L) {
  return unary(L, NS_UN_SQRT);
}
static int t_square(lua_State *L) {
  return unary(L, NS_UN_SQUARE);
}

/* t:map(f) -> f applied to every element (f must return a number) */
static int t_map(lua_State *L) {
  ns_tensor *t = self_work(L, 2);
  char err[NS_ERRLEN];
  if (lua_type(L, 2) != LUA_TFUNCTION)
    return nsl_argerror(L, 2, "f must be a function, got %s", nsl_got(L, 2));
  ns_tensor **out = nsl_newbox(L);
  *out = ns_tensor_new(t->rank, t->shape, t->dtype, err);
  if (!*out) return luaL_error(L, "map: %s", err);
  for (size_t i = 0; i < t->n; i++) {
    lua_pushvalue(L, 2);
    lua_pushnumber(L, ns_tensor_get(t, i));
    lua_call(L, 1, 1);
    int isnum;
    double v = lua_tonumberx(L, -1, &isnum);
    if (!isnum || lua_type(L, -1) != LUA_TNUMBER)
      return luaL_error(L, "map: the function returned a %s for element %I, expected a number",
                        luaL_typename(L, -1), (lua_Integer)i + 1);
    ns_tensor_set(*out, i, v);
    lua_pop(L, 1);
  }
  return 1;
}

/* Shared body of the reductions: no axes -> a number; axes -> a tensor that keeps the
 * reduced axes as size 1. */
static int reduce(lua_State *L, ns_redop op) {
  ns_tensor *t = self_work(L, 2);
  char err[NS_ERRLEN];
  unsigned mask = nsl_checkaxes(L, 2, "axes", t->rank);
  int ddof = 0;
  if (op == NS_RED_VAR || op == NS_RED_STD) {
    lua_Integer d = 0;
    if (!lua_isnoneornil(L, 3) && !nsl_intat(L, 3, 0, 1000000, &d))
      return nsl_argerror(L, 3, "ddof must be >= 0, got %s", nsl_got(L, 3));
    ddof = (int)d;
  } else if (!lua_isnone(L, 3)) {
    return nsl_argerror(L, 3, "unexpected extra argument");
  }
  if (lua_isnoneornil(L, 2)) {
    lua_pushnumber(L, ns_op_reduce_all(t, op, ddof));
    return 1;
  }
  ns_tensor **out = nsl_newbox(L);
  *out = ns_op_reduce(t, mask, op, ddof, err);
  if (!*out) return luaL_error(L, "%s", err);
  return 1;
}

static int t_sum(lua_State *L) {
  return reduce(L, NS_RED_SUM);
}
static int t_mean(lua_State *L) {
  return reduce(L, NS_RED_MEAN);
}
static int t_var(lua_State *L) {
  return reduce(L, NS_RED_VAR);
}
static int t_std(lua_State *L) {
  return reduce(L, NS_RED_STD);
}
static int t_min(lua_State *L) {
  return reduce(L, NS_RED_MIN);
}
static int t_max(lua_State *L) {
  return reduce(L, NS_RED_MAX);
}
/* t:kurtosis([axes]): Pearson's m4/m2^2 (3 for a normal), not the excess */
static int t_kurtosis(lua_State *L) {
  return reduce(L, NS_RED_KURT);
}

/* t:sort([axis]) -> a sorted copy along axis (default the last, as numpy), NaN last */
static int t_sort(lua_State *L) {
  lua_settop(L, 2); /* fixed argument slots: conversions push above them */
  ns_tensor *t = self(L);
  nsl_charge(L, nlogn(t->n));
  char err[NS_ERRLEN];
  int axis = lua_isnil(L, 2) ? t->rank - 1 : nsl_axisat(L, 2, 2, "axis", t->rank);
  ns_tensor **out = nsl_newbox(L);
  *out = ns_op_sort(t, axis, err);
  if (!*out) return luaL_error(L, "%s", err);
  return 1;
}

/* t:quantile(q) -> numpy's np.quantile over all elements (linear method): q a number in
 * [0, 1] gives a number, an array of them an array */
static int t_quantile(lua_State *L) {
  lua_settop(L, 2); /* fixed argument slots: conversions push above them */
  ns_tensor *t = self(L);
  nsl_charge(L, nlogn(t->n));
  char err[NS_ERRLEN];
  if (lua_type(L, 2) == LUA_TNUMBER) {
    double q = lua_tonumber(L, 2), v;
    if (!(q >= 0 && q <= 1))
      return nsl_argerror(L, 2, "q must be in [0, 1], got %s", nsl_got(L, 2));
    if (ns_op_quantile(t, &q, 1, &v, err)) return luaL_error(L, "%s", err);
    lua_pushnumber(L, v);
    return 1;
  }
  if (nsl_totensor(L, 2)) { /* a tensor of q values: read as a flat array */
    ns_tensor *qt = nsl_totensor(L, 2);
    if (qt->n > (1 << 24))
      return nsl_argerror(L, 2, "q must hold 1 to 16777216 numbers, got %I", (lua_Integer)qt->n);
    lua_createtable(L, (int)qt->n, 0);
    for (size_t k = 0; k < qt->n; k++) {
      lua_pushnumber(L, ns_tensor_get(qt, k));
      lua_rawseti(L, -2, (lua_Integer)k + 1);
    }
    lua_replace(L, 2);
  }
  if (lua_type(L, 2) != LUA_TTABLE)
    return nsl_argerror(L, 2, "q must be a number or an array of numbers, got %s", nsl_got(L, 2));
  lua_Integer nq = luaL_len(L, 2);
  if (nq < 1 || nq > (1 << 24))
    return nsl_argerror(L, 2, "q must hold 1 to 16777216 numbers, got %I", nq);
  double *q = nsl_scratch(L, (size_t)nq), *v = nsl_scratch(L, (size_t)nq);
  for (lua_Integer k = 0; k < nq; k++) {
    lua_rawgeti(L, 2, k + 1);
    q[k] = lua_tonumber(L, -1);
    if (lua_type(L, -1) != LUA_TNUMBER || !(q[k] >= 0 && q[k] <= 1))
      return nsl_argerror(L, 2, "q[%I] must be a number in [0, 1], got %s", k + 1, nsl_got(L, -1));
    lua_pop(L, 1); /* drop q[k] */
  }
  if (ns_op_quantile(t, q, (size_t)nq, v, err)) return luaL_error(L, "%s", err);
  lua_createtable(L, (int)nq, 0);
  for (lua_Integer k = 0; k < nq; k++) {
    lua_pushnumber(L, v[k]);
    lua_rawseti(L, -2, k + 1);
  }
  return 1;
}

/* t:median() -> numpy's np.median over all elements */
static int t_median(lua_State *L) {
  ns_tensor *t = self(L);
  nsl_charge(L, nlogn(t->n));
  char err[NS_ERRLEN];
  double v;
  if (!lua_isnone(L, 2)) return nsl_argerror(L, 2, "unexpected extra argument");
  if (ns_op_median(t, &v, err)) return luaL_error(L, "%s", err);
  lua_pushnumber(L, v);
  return 1;
}

/* ---- metamethods ------------------------------------------------------------------ */

/* The spare: the data of the last large tensor the collector freed, kept for the next
 * output of its size (nsl_take_spare), so a loop of normalizations writes into memory that
 * is mapped already instead of having the system fault in and zero 64 MB at every call
 * (half of a fresh output's time). One per Lua state, in the registry; a full userdata
 * whose __gc frees what it holds when the state closes. */
static const char SPARE_KEY[] = "normscope.spare";
#define NSL_SPARE_MIN ((size_t)1 << 20) /* bytes: smaller blocks come back quickly anyway */

typedef struct {
  ns_tensor *t;
  int closed; /* the state is closing and its spare went: free, do not keep */
} spare;

static int spare_gc(lua_State *L) {
  spare *sp = lua_touserdata(L, 1);
  if (sp) {
    ns_tensor_free(sp->t);
    sp->t = NULL;
    sp->closed = 1; /* tensors finalized after it (lua_close) are freed at once */
  }
  return 0;
}

/* The state's spare, or NULL when it has none (create: make it). */
static spare *spare_of(lua_State *L, int create) {
  if (!lua_checkstack(L, 3)) return NULL;
  spare *sp = NULL;
  if (lua_getfield(L, LUA_REGISTRYINDEX, SPARE_KEY) == LUA_TUSERDATA) sp = lua_touserdata(L, -1);
  lua_pop(L, 1);
  if (sp || !create) return sp;
  sp = lua_newuserdatauv(L, sizeof *sp, 0);
  sp->t = NULL;
  sp->closed = 0;
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, spare_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, SPARE_KEY);
  return sp;
}

ns_tensor *nsl_take_spare(lua_State *L, int rank, const size_t *shape, ns_dtype dtype) {
  spare *sp = spare_of(L, 1);
  ns_tensor *t = sp ? sp->t : NULL;
  size_t n = 1;
  for (int a = 0; a < rank; a++) n *= shape[a];
  if (!t || t->dtype != dtype || t->n != n || rank < 1 || rank > NS_MAXRANK) return NULL;
  sp->t = NULL;
  t->rank = rank; /* the same elements, in this shape */
  for (int a = 0; a < NS_MAXRANK; a++) t->shape[a] = a < rank ? shape[a] : 1;
  return t;
}

static int t_gc(lua_State *L) {
  ns_tensor **box = luaL_checkudata(L, 1, NSL_TENSOR_MT);
  ns_tensor *t = *box;
  *box = NULL;
  /* a tensor others still own (a state shares it) is theirs now, not a spare to write into */
  spare *sp = t && !ns_tensor_shared(t) && t->n * ns_dtype_size(t->dtype) >= NSL_SPARE_MIN
                  ? spare_of(L, 0)
                  : NULL;
  if (sp && !sp->closed) { /* the newest stays: the loop that dropped it likely makes another */
    ns_tensor_free(sp->t);
    sp->t = t;
  } else {
    ns_tensor_free(t);
  }
  return 0;
}

static int t_len(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)self(L)->n);
  return 1;
}

/* t[i]: flat 1-based read (nil outside 1..#t); t.name: a method */
static int t_index(lua_State *L) {
  ns_tensor *t = self(L);
  if (lua_type(L, 2) == LUA_TNUMBER) {
    int isint;
    lua_Integer i = lua_tointegerx(L, 2, &isint);
    if (!isint) return luaL_error(L, "tensor index must be an integer, got %s", lua_tostring(L, 2));
    if (i < 1 || (size_t)i > t->n) return 0;
    lua_pushnumber(L, ns_tensor_get(t, (size_t)i - 1));
    return 1;
  }
  if (lua_type(L, 2) != LUA_TSTRING) return 0;
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1)); /* methods[key] */
  return 1;
}

static int t_newindex(lua_State *L) {
  self(L);
  return luaL_error(L, "tensors are read-only (build a new one with ns.tensor, t:map or "
                       "arithmetic)");
}

static int arith(lua_State *L, ns_binop op, const char *name) {
  char err[NS_ERRLEN];
  lua_settop(L, 2); /* fixed argument slots: conversions push above them */
  ns_tensor *a = nsl_totensor(L, 1), *b = nsl_totensor(L, 2);
  int na = lua_type(L, 1) == LUA_TNUMBER, nb = lua_type(L, 2) == LUA_TNUMBER;
  /* tables convert; a released tensor gets its own message from nsl_tensorat */
  if (!a && (lua_type(L, 1) == LUA_TTABLE || luaL_testudata(L, 1, NSL_TENSOR_MT)))
    a = nsl_tensorat(L, 1, 1, "left operand");
  if (!b && (lua_type(L, 2) == LUA_TTABLE || luaL_testudata(L, 2, NSL_TENSOR_MT)))
    b = nsl_tensorat(L, 2, 2, "right operand");
  if (a && b) { /* the broadcast output's elements (aligned from the last axis) */
    double n = 1;
    for (int k = 0; k < NS_MAXRANK; k++) {
      size_t da = k < a->rank ? a->shape[a->rank - 1 - k] : 1;
      size_t db = k < b->rank ? b->shape[b->rank - 1 - k] : 1;
      n *= (double)(da > db ? da : db);
    }
    nsl_charge(L, n);
  } else if (a || b) {
    nsl_charge(L, 2 * (double)(a ? a : b)->n);
  }
  ns_tensor **out = nsl_newbox(L);
  if (a && b)
    *out = ns_op_binary(a, b, op, err);
  else if (a && nb)
    *out = ns_op_scalar(a, lua_tonumber(L, 2), op, 0, err);
  else if (b && na)
    *out = ns_op_scalar(b, lua_tonumber(L, 1), op, 1, err);
  else
    return luaL_error(L, "attempt to %s a %s and a %s", name, a ? "tensor" : luaL_typename(L, 1),
                      b ? "tensor" : luaL_typename(L, 2));
  if (!*out) return luaL_error(L, "tensor %s: %s", name, err);
  return 1;
}

static int t_add(lua_State *L) {
  return arith(L, NS_OP_ADD, "add");
}
static int t_sub(lua_State *L) {
  return arith(L, NS_OP_SUB, "subtract");
}
static int t_mul(lua_State *L) {
  return arith(L, NS_OP_MUL, "multiply");
}
static int t_div(lua_State *L) {
  return arith(L, NS_OP_DIV, "divide");
}
static int t_unm(lua_State *L) {
  return unary(L, NS_UN_NEG);
}

/* ---- printing --------------------------------------------------------------------- */

#define EDGE 3            /* elements shown at each end of a summarized axis */
#define SUMMARIZE_AT 1000 /* tensors with more elements are summarized */

static void fmt_num(char *buf, size_t len, double v) {
  if (isnan(v))
    snprintf(buf, len, "nan");
  else if (isinf(v))
    snprintf(buf, len, v > 0 ? "inf" : "-inf");
  else
    snprintf(buf, len, "%.6g", v);
}

/* Walks the displayed elements; with b == NULL only measures the widest number. */
static void show(luaL_Buffer *b, const ns_tensor *t, int depth, size_t base, int summ, int width,
                 int *maxw) {
  size_t len = t->shape[depth], stride = 1;
  for (int k = depth + 1; k < t->rank; k++) stride *= t->shape[k];
  int cut = summ && len > 2 * EDGE;
  if (b) luaL_addchar(b, '[');
  for (size_t i = 0; i < len; i++) {
    if (cut && i == EDGE) {
      if (b) {
        luaL_addstring(b, depth == t->rank - 1 ? "..., " : "...,\n");
        if (depth < t->rank - 1)
          for (int s = 0; s < 7 + depth + 1; s++) luaL_addchar(b, ' ');
      }
      i = len - EDGE;
    }
    if (depth == t->rank - 1) {
      char num[40];
      fmt_num(num, sizeof num, ns_tensor_get(t, base + i));
      int w = (int)strlen(num);
      if (b) {
        for (int s = w; s < width; s++) luaL_addchar(b, ' ');
        luaL_addstring(b, num);
        if (i + 1 < len) luaL_addstring(b, ", ");
      } else if (w > *maxw) {
        *maxw = w;
      }
    } else {
      show(b, t, depth + 1, base + i * stride, summ, width, maxw);
      if (b && i + 1 < len) {
        luaL_addchar(b, ',');
        for (int k = depth; k < t->rank - 1; k++) luaL_addchar(b, '\n');
        for (int s = 0; s < 7 + depth + 1; s++) luaL_addchar(b, ' ');
      }
    }
  }
  if (b) luaL_addchar(b, ']');
}

/* tostring(t): "tensor([[1, 2], [3, 4]], shape=(2, 2), dtype=fp64)" laid out by rows */
static int t_tostring(lua_State *L) {
  ns_tensor **box = luaL_checkudata(L, 1, NSL_TENSOR_MT);
  ns_tensor *t = *box;
  if (!t) {
    lua_pushliteral(L, "tensor(released)");
    return 1;
  }
  int summ = t->n > SUMMARIZE_AT, width = 0;
  show(NULL, t, 0, 0, summ, 0, &width);
  char shp[96];
  ns_shape_format(t->rank, t->shape, shp, sizeof shp);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "tensor(");
  show(&b, t, 0, 0, summ, width, NULL);
  luaL_addstring(&b, ", shape=");
  luaL_addstring(&b, shp);
  luaL_addstring(&b, ", dtype=");
  luaL_addstring(&b, ns_dtype_name(t->dtype));
  luaL_addchar(&b, ')');
  luaL_pushresult(&b);
  return 1;
}

/* ---- constructors ----------------------------------------------------------------- */

/* ns.tensor(values [, shape [, dtype]]) */
static int l_tensor(lua_State *L) {
  lua_settop(L, 3); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN];
  ns_tensor *v = nsl_tensorat(L, 1, 1, "values");
  int rank = v->rank;
  size_t shape[NS_MAXRANK];
  memcpy(shape, v->shape, sizeof shape);
  if (!lua_isnoneornil(L, 2)) {
    nsl_checkshape(L, 2, "shape", &rank, shape);
    size_t n = 1;
    for (int k = 0; k < rank; k++) n *= shape[k];
    if (n != v->n)
      return nsl_argerror(L, 2, "shape has %I elements but values has %I", (lua_Integer)n,
                          (lua_Integer)v->n);
  }
  ns_dtype d = nsl_checkdtype(L, 3, "dtype", v->dtype);
  nsl_charge(L, 2 * (double)v->n);
  ns_tensor **out = nsl_newbox(L);
  *out = ns_op_reshape(v, rank, shape, err);
  if (*out && d != v->dtype) {
    ns_tensor *r = ns_op_astype(*out, d, err);
    ns_tensor_free(*out);
    *out = r;
  }
  if (!*out) return luaL_error(L, "tensor: %s", err);
  return 1;
}

/* ns.zeros(shape [, dtype]) */
static int l_zeros(lua_State *L) {
  lua_settop(L, 2); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN];
  int rank;
  size_t shape[NS_MAXRANK];
  nsl_checkshape(L, 1, "shape", &rank, shape);
  ns_dtype d = nsl_checkdtype(L, 2, "dtype", NS_FP64);
  ns_tensor **out = nsl_newbox(L);
  *out = ns_op_full(rank, shape, 0.0, d, err);
  if (!*out) return luaL_error(L, "zeros: %s", err);
  return 1;
}

/* ns.full(shape, v [, dtype]) */
static int l_full(lua_State *L) {
  lua_settop(L, 3); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN];
  int rank;
  size_t shape[NS_MAXRANK];
  nsl_checkshape(L, 1, "shape", &rank, shape);
  if (lua_type(L, 2) != LUA_TNUMBER)
    return nsl_argerror(L, 2, "value must be a number, got %s", nsl_got(L, 2));
  double v = lua_tonumber(L, 2);
  ns_dtype d = nsl_checkdtype(L, 3, "dtype", NS_FP64);
  ns_tensor **out = nsl_newbox(L);
  *out = ns_op_full(rank, shape, v, d, err);
  if (!*out) return luaL_error(L, "full: %s", err);
  return 1;
}

/* ns.eye(n [, dtype]) */
static int l_eye(lua_State *L) {
  lua_settop(L, 2); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN];
  size_t n = nsl_sizeat(L, 1, 1, "n");
  nsl_charge(L, (double)n * (double)n);
  ns_dtype d = nsl_checkdtype(L, 2, "dtype", NS_FP64);
  ns_tensor **out = nsl_newbox(L);
  *out = ns_op_eye(n, d, err);
  if (!*out) return nsl_argerror(L, 1, "%s", err);
  return 1;
}

/* ns.concat(list [, axis]): joins tensors along axis (default 1) */
static int l_concat(lua_State *L) {
  lua_settop(L, 2); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN];
  if (lua_type(L, 1) != LUA_TTABLE)
    return nsl_argerror(L, 1, "list must be an array of tensors, got %s", nsl_got(L, 1));
  size_t n = lua_rawlen(L, 1);
  if (n == 0) return nsl_argerror(L, 1, "list must hold at least one tensor");
  if (n > 100000) return nsl_argerror(L, 1, "list holds too many tensors");
  const ns_tensor **parts = lua_newuserdatauv(L, n * sizeof *parts, 0);
  lua_newtable(L); /* keeps converted parts alive */
  int keep = lua_gettop(L);
  for (size_t i = 0; i < n; i++) {
    char what[48];
    snprintf(what, sizeof what, "list[%zu]", i + 1);
    lua_rawgeti(L, 1, (lua_Integer)i + 1);
    int top = lua_gettop(L);
    parts[i] = nsl_tensorat(L, -1, 1, what);
    if (lua_gettop(L) > top) lua_rawseti(L, keep, (lua_Integer)i + 1); /* anchor the box */
    lua_pop(L, 1);
  }
  int axis = 0;
  if (!lua_isnoneornil(L, 2)) axis = nsl_axisat(L, 2, 2, "axis", parts[0]->rank);
  double total = 0;
  for (size_t i = 0; i < n; i++) total += (double)parts[i]->n;
  nsl_charge(L, total); /* written (each was charged as read) */
  ns_tensor **out = nsl_newbox(L);
  *out = ns_op_concat(parts, n, axis, err);
  if (!*out) return nsl_argerror(L, 1, "%s", err);
  return 1;
}

/* ns.outer(u, v) -> (#u, #v) */
static int l_outer(lua_State *L) {
  lua_settop(L, 2); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN];
  ns_tensor *u = nsl_tensorarg(L, 1, "u");
  ns_tensor *v = nsl_tensorarg(L, 2, "v");
  nsl_charge(L, (double)u->n * (double)v->n);
  ns_tensor **out = nsl_newbox(L);
  *out = ns_op_outer(u, v, err);
  if (!*out) return luaL_error(L, "outer: %s", err);
  return 1;
}

/* ns.matmul(a, b) for rank-2 tensors */
static int l_matmul(lua_State *L) {
  lua_settop(L, 2); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN];
  ns_tensor *a = nsl_tensorarg(L, 1, "a");
  ns_tensor *b = nsl_tensorarg(L, 2, "b");
  if (a->rank != 2) return nsl_argerror(L, 1, "a must be a rank-2 tensor, got rank %d", a->rank);
  if (b->rank != 2) return nsl_argerror(L, 2, "b must be a rank-2 tensor, got rank %d", b->rank);
  if (a->shape[1] != b->shape[0])
    return nsl_argerror(L, 2, "b has %I rows but a has %I columns", (lua_Integer)b->shape[0],
                        (lua_Integer)a->shape[1]);
  double m = (double)a->shape[0], k = (double)a->shape[1], n = (double)b->shape[1];
  nsl_charge(L, m * n + 2 * m * k * n / NSL_FLOPS);
  ns_tensor **out = nsl_newbox(L);
  *out = ns_op_matmul(a, b, err);
  if (!*out) return luaL_error(L, "matmul: %s", err);
  return 1;
}

static const luaL_Reg methods[] = {{"shape", t_shape},
                                   {"dtype", t_dtype},
                                   {"flat", t_flat},
                                   {"totable", t_totable},
                                   {"reshape", t_reshape},
                                   {"slice", t_slice},
                                   {"copy", t_copy},
                                   {"astype", t_astype},
                                   {"T", t_T},
                                   {"tanh", t_tanh},
                                   {"relu", t_relu},
                                   {"exp", t_exp},
                                   {"log", t_log},
                                   {"abs", t_abs},
                                   {"sqrt", t_sqrt},
                                   {"square", t_square},
                                   {"map", t_map},
                                   {"sum", t_sum},
                                   {"mean", t_mean},
                                   {"var", t_var},
                                   {"std", t_std},
                                   {"min", t_min},
                                   {"max", t_max},
                                   {"kurtosis", t_kurtosis},
                                   {"sort", t_sort},
                                   {"quantile", t_quantile},
                                   {"median", t_median},
                                   {NULL, NULL}};

static const luaL_Reg metamethods[] = {
    {"__gc", t_gc},   {"__len", t_len}, {"__newindex", t_newindex}, {"__tostring", t_tostring},
    {"__add", t_add}, {"__sub", t_sub}, {"__mul", t_mul},           {"__div", t_div},
    {"__unm", t_unm}, {NULL, NULL}};

static const luaL_Reg functions[] = {{"tensor", l_tensor}, {"zeros", l_zeros},   {"full", l_full},
                                     {"eye", l_eye},       {"concat", l_concat}, {"outer", l_outer},
                                     {"matmul", l_matmul}, {NULL, NULL}};

void nsl_open_tensor(lua_State *L) {
  if (luaL_newmetatable(L, NSL_TENSOR_MT)) {
    luaL_setfuncs(L, metamethods, 0);
    luaL_newlib(L, methods);         /* mt methods */
    lua_pushcclosure(L, t_index, 1); /* mt __index(methods as upvalue) */
    lua_setfield(L, -2, "__index");  /* mt */
    lua_pushliteral(L, "tensor");
    lua_setfield(L, -2, "__name");
  }
  lua_pop(L, 1); /* drop the metatable */
  luaL_setfuncs(L, functions, 0);
}

int nsl_max_elements_from_env(char *err) {
  const char *s = getenv("NS_MAX_ELEMENTS");
  size_t cap;
  if (!s || !*s) return 0;
  if (ns_max_elements_parse(s, &cap, err) != 0) return -1;
  return ns_set_max_elements(cap, err);
}
