/* nsl_args.c: argument checking shared by the files of the binding: shapes, dtypes,
 * axes, option tables and their fields, and the short "got ..." descriptions that
 * every message ends with. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "core/text.h"
#include "lua/nsl.h"
#include "lua/nsl_priv.h"

int nsl_argerror(lua_State *L, int arg, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const char *msg = lua_pushvfstring(L, fmt, ap);
  va_end(ap);
  return luaL_argerror(L, arg, msg);
}

const char *nsl_safe(lua_State *L, const char *s, size_t len) {
  char buf[256];
  size_t need = ns_text_sanitize(buf, sizeof buf, s, len, 0);
  if (need < sizeof buf) return lua_pushlstring(L, buf, need);
  luaL_Buffer b;
  char *p = luaL_buffinitsize(L, &b, need + 1);
  ns_text_sanitize(p, need + 1, s, len, 0);
  luaL_pushresultsize(&b, need);
  return lua_tostring(L, -1);
}

const char *nsl_got(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  switch (lua_type(L, idx)) {
  case LUA_TNUMBER:
  case LUA_TBOOLEAN:
    return luaL_tolstring(L, idx, NULL); /* as Lua writes them: 2, 0.5, -nan, true */
  case LUA_TSTRING: {
    size_t len;
    const char *s = lua_tolstring(L, idx, &len);
    if (len > 40 || strlen(s) != len)
      return lua_pushfstring(L, "a string of %I bytes", (lua_Integer)len);
    const char *q = lua_pushfstring(L, "'%s'", nsl_safe(L, s, len));
    lua_remove(L, -2);
    return q;
  }
  case LUA_TUSERDATA: {
    ns_tensor **box = luaL_testudata(L, idx, NSL_TENSOR_MT);
    if (box && !*box) return lua_pushliteral(L, "a released tensor");
    int ty = luaL_getmetafield(L, idx, "__name"); /* pushes nothing when absent */
    if (ty == LUA_TSTRING) return lua_tostring(L, -1);
    if (ty != LUA_TNIL) lua_pop(L, 1);
    return luaL_typename(L, idx);
  }
  default:
    return luaL_typename(L, idx);
  }
}

#define NOFILES_KEY "normscope.nofiles"

void nsl_files_deny(lua_State *L) {
  lua_pushboolean(L, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, NOFILES_KEY);
}

/* Whether nsl_files_deny ran on this state (a sandbox). */
static int files_denied(lua_State *L) {
  int denied = lua_getfield(L, LUA_REGISTRYINDEX, NOFILES_KEY) != LUA_TNIL;
  lua_pop(L, 1);
  return denied;
}

void nsl_checkfiles(lua_State *L, const char *what) {
  if (files_denied(L))
    luaL_error(L, "%s: a lesson runs in a sandbox and cannot read or write files", what);
}

#define DATADIR_KEY "normscope.datadir"

void nsl_files_dir(lua_State *L, const char *dir) {
  lua_pushstring(L, dir);
  lua_setfield(L, LUA_REGISTRYINDEX, DATADIR_KEY);
}

void nsl_datafile(lua_State *L, const char *what, const char *path, int has_digest, char *out,
                  size_t len) {
  if (!files_denied(L)) {
    if ((size_t)snprintf(out, len, "%s", path) >= len)
      luaL_error(L, "%s: the path is too long (%d bytes at most)", what, (int)len - 1);
    return;
  }
  lua_getfield(L, LUA_REGISTRYINDEX, DATADIR_KEY);
  const char *dir = lua_tostring(L, -1);
  size_t pl = strlen(path);
  int plain = pl > 4 && strcmp(path + pl - 4, ".npy") == 0 && !strchr(path, '/') &&
              path[0] != '.' && has_digest;
  struct stat st; /* a regular file itself: a link beside the lesson could point anywhere */
  if (!dir || !plain || (size_t)snprintf(out, len, "%s/%s", dir, path) >= len ||
      (lstat(out, &st) == 0 && !S_ISREG(st.st_mode))) {
    lua_pop(L, 1);
    luaL_error(L,
               "%s: a lesson runs in a sandbox and cannot read or write files, but for its "
               "own data: .npy files beside it, named without a folder and with their sha256 "
               "(as normscope record writes them)",
               what);
  }
  lua_pop(L, 1);
}

int nsl_optint(lua_State *L, int arg, const char *name, int lo, int hi, int def) {
  int v = def;
  if (lua_getfield(L, arg, name) != LUA_TNIL) {
    lua_Integer i;
    if (!nsl_intat(L, -1, lo, hi, &i))
      nsl_argerror(L, arg, "opts.%s must be an integer from %d to %d, got %s", name, lo, hi,
                   nsl_got(L, -1));
    v = (int)i;
  }
  lua_pop(L, 1);
  return v;
}

int nsl_optbool(lua_State *L, int arg, const char *name, int def) {
  int ty = lua_getfield(L, arg, name), v = def;
  if (ty == LUA_TBOOLEAN)
    v = lua_toboolean(L, -1);
  else if (ty != LUA_TNIL)
    nsl_argerror(L, arg, "opts.%s must be a boolean, got %s", name, nsl_got(L, -1));
  lua_pop(L, 1);
  return v;
}

int nsl_opttable(lua_State *L, int arg, const char *what) {
  if (lua_isnoneornil(L, arg)) return 0;
  if (lua_type(L, arg) != LUA_TTABLE)
    nsl_argerror(L, arg, "%s must be a table, got %s", what, nsl_got(L, arg));
  return 1;
}

/* "'a', 'b', 'c'" pushed on the stack. */
static const char *name_list(lua_State *L, const char *const *names) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 0; names[i]; i++) {
    if (i) luaL_addstring(&b, ", ");
    luaL_addchar(&b, '\'');
    luaL_addstring(&b, names[i]);
    luaL_addchar(&b, '\'');
  }
  luaL_pushresult(&b);
  return lua_tostring(L, -1);
}

void nsl_checkfields(lua_State *L, int arg, const char *noun, const char *const *names) {
  arg = lua_absindex(L, arg);
  lua_pushnil(L);
  while (lua_next(L, arg)) {
    lua_pop(L, 1); /* keep the key */
    int ok = 0;
    if (lua_type(L, -1) == LUA_TSTRING)
      for (int i = 0; names[i]; i++) ok |= strcmp(lua_tostring(L, -1), names[i]) == 0;
    if (!ok) {
      const char *key =
          lua_type(L, -1) == LUA_TSTRING
              ? lua_pushfstring(L, "'%s'", nsl_safe(L, lua_tostring(L, -1), lua_rawlen(L, -1)))
              : nsl_got(L, -1);
      nsl_argerror(L, arg, "unknown %s %s (known: %s)", noun, key, name_list(L, names));
    }
  }
}

int nsl_choiceat(lua_State *L, int idx, int arg, const char *what, const char *const *names,
                 int def) {
  int ty = lua_type(L, idx);
  if (ty == LUA_TNIL || ty == LUA_TNONE) return def;
  if (ty == LUA_TSTRING) {
    const char *s = lua_tostring(L, idx);
    for (int i = 0; names[i]; i++)
      if (strcmp(s, names[i]) == 0) return i;
  }
  idx = lua_absindex(L, idx);
  const char *list = name_list(L, names);
  nsl_argerror(L, arg, "%s must be one of %s, got %s", what, list, nsl_got(L, idx));
  return def;
}

int nsl_intat(lua_State *L, int idx, lua_Integer lo, lua_Integer hi, lua_Integer *out) {
  int isint;
  lua_Integer v = lua_tointegerx(L, idx, &isint);
  if (!isint || lua_type(L, idx) != LUA_TNUMBER || v < lo || v > hi) return 0;
  *out = v;
  return 1;
}

/* ---- shapes, dtypes, axes ------------------------------------------------------------ */

size_t nsl_sizeat(lua_State *L, int idx, int arg, const char *what) {
  lua_Integer v;
  if (!nsl_intat(L, idx, 1, LUA_MAXINTEGER, &v))
    nsl_argerror(L, arg, "%s must be a positive integer, got %s", what, nsl_got(L, idx));
  if ((unsigned long long)v > NS_MAXELEMS)
    nsl_argerror(L, arg, "%s = %I is too large (at most %I)", what, v, (lua_Integer)NS_MAXELEMS);
  return (size_t)v;
}

void nsl_checkshape(lua_State *L, int arg, const char *what, int *rank, size_t *shape) {
  char err[NS_ERRLEN];
  for (int k = 0; k < NS_MAXRANK; k++) shape[k] = 1;
  if (lua_type(L, arg) == LUA_TNUMBER) {
    *rank = 1;
    shape[0] = nsl_sizeat(L, arg, arg, what);
    nsl_charge(L, (double)shape[0]); /* the callers write a tensor of this shape */
    return;
  }
  if (lua_type(L, arg) != LUA_TTABLE)
    nsl_argerror(L, arg, "%s must be an integer or an array of integers, got %s", what,
                 nsl_got(L, arg));
  size_t r = lua_rawlen(L, arg);
  if (r < 1 || r > NS_MAXRANK)
    nsl_argerror(L, arg, "%s must have 1 to 4 sizes, got %I", what, (lua_Integer)r);
  for (size_t k = 0; k < r; k++) {
    lua_rawgeti(L, arg, (lua_Integer)k + 1);
    char name[64];
    snprintf(name, sizeof name, "%s[%zu]", what, k + 1);
    shape[k] = nsl_sizeat(L, -1, arg, name);
    lua_pop(L, 1);
  }
  *rank = (int)r;
  if (ns_shape_check(*rank, shape, err) < 0) nsl_argerror(L, arg, "%s: %s", what, err);
  double n = 1;
  for (int k = 0; k < *rank; k++) n *= (double)shape[k];
  nsl_charge(L, n); /* the callers write a tensor of this shape */
}

ns_dtype nsl_dtypeat(lua_State *L, int idx, int arg, const char *what) {
  ns_dtype d;
  if (lua_type(L, idx) != LUA_TSTRING || ns_dtype_parse(lua_tostring(L, idx), &d) < 0)
    nsl_argerror(L, arg, "%s must be one of 'fp64', 'fp32', 'fp16', 'bf16', got %s", what,
                 nsl_got(L, idx));
  return d;
}

ns_dtype nsl_checkdtype(lua_State *L, int arg, const char *what, int def) {
  if (def >= 0 && lua_isnoneornil(L, arg)) return (ns_dtype)def;
  return nsl_dtypeat(L, arg, arg, what);
}

int nsl_axisat(lua_State *L, int idx, int arg, const char *what, int rank) {
  int isint;
  lua_Integer v = lua_tointegerx(L, idx, &isint);
  if (!isint || lua_type(L, idx) != LUA_TNUMBER)
    nsl_argerror(L, arg, "%s must be an integer axis, got %s", what, nsl_got(L, idx));
  if (v < 1 || v > rank)
    nsl_argerror(L, arg, "%s = %I is out of range 1..%d for a rank-%d tensor", what, v, rank, rank);
  return (int)v - 1;
}

unsigned nsl_axesat(lua_State *L, int idx, int arg, const char *what, int rank) {
  idx = lua_absindex(L, idx);
  if (lua_isnoneornil(L, idx)) return 0;
  if (lua_type(L, idx) == LUA_TNUMBER) return 1u << nsl_axisat(L, idx, arg, what, rank);
  if (lua_type(L, idx) != LUA_TTABLE)
    nsl_argerror(L, arg, "%s must be an axis or an array of axes, got %s", what, nsl_got(L, idx));
  size_t n = lua_rawlen(L, idx);
  if (n == 0) nsl_argerror(L, arg, "%s must not be empty", what);
  if (n > (size_t)rank)
    nsl_argerror(L, arg, "%s lists %I axes but the tensor has rank %d", what, (lua_Integer)n, rank);
  unsigned mask = 0;
  for (size_t k = 1; k <= n; k++) {
    lua_rawgeti(L, idx, (lua_Integer)k);
    char name[64];
    snprintf(name, sizeof name, "%s[%zu]", what, k);
    int a = nsl_axisat(L, -1, arg, name, rank);
    lua_pop(L, 1);
    if (mask & (1u << a)) nsl_argerror(L, arg, "%s lists axis %d twice", what, a + 1);
    mask |= 1u << a;
  }
  return mask;
}

unsigned nsl_checkaxes(lua_State *L, int arg, const char *what, int rank) {
  return nsl_axesat(L, arg, arg, what, rank);
}
