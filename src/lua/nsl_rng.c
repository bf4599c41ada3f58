/* nsl_rng.c: ns.rng (numpy.random.default_rng-compatible generators) and ns.sha256. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "core/rng.h"
#include "core/sha256.h"
#include "lua/nsl.h"
#include "lua/nsl_priv.h"

static ns_rng *checkrng(lua_State *L) {
  ns_rng *g = luaL_testudata(L, 1, NSL_RNG_MT);
  if (!g) nsl_argerror(L, 1, "generator from ns.rng expected, got %s", nsl_got(L, 1));
  return g;
}

/* ns.rng(seed): seed a non-negative integer (a decimal string for any size, e.g. seeds
 * above 2^53 that a float cannot hold); no seed: one from the clock. */
static int l_rng(lua_State *L) {
  lua_settop(L, 1); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN] = "";
  ns_rng g;
  int ty = lua_type(L, 1);
  if (ty == LUA_TNONE || ty == LUA_TNIL) {
    uint64_t s = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32) ^ (uint64_t)(uintptr_t)&g;
    ns_rng_seed_u64(&g, s);
  } else if (ty == LUA_TNUMBER) {
    if (lua_isinteger(L, 1)) {
      lua_Integer s = lua_tointeger(L, 1);
      if (s < 0) return nsl_argerror(L, 1, "seed must be >= 0, got %I", s);
      ns_rng_seed_u64(&g, (uint64_t)s);
    } else {
      double s = lua_tonumber(L, 1);
      if (!(s >= 0) || s != floor(s))
        return nsl_argerror(L, 1, "seed must be a non-negative integer, got %s",
                            lua_tostring(L, 1));
      if (s > 9007199254740992.0)
        return nsl_argerror(L, 1,
                            "seed %s is above 2^53 and not exact as a float: pass it as "
                            "a decimal string",
                            lua_tostring(L, 1));
      ns_rng_seed_u64(&g, (uint64_t)s);
    }
  } else if (ty == LUA_TSTRING) {
    size_t len;
    const char *s = lua_tolstring(L, 1, &len);
    if (len == 0 || len > 4096 || strspn(s, "0123456789") != len)
      return nsl_argerror(L, 1, "seed string must hold only decimal digits, got '%s'", s);
    if (ns_rng_seed_decimal(&g, s, err) != 0) return nsl_argerror(L, 1, "%s", err);
  } else {
    return nsl_argerror(L, 1, "seed must be an integer or a decimal string, got %s", nsl_got(L, 1));
  }
  ns_rng *u = lua_newuserdatauv(L, sizeof *u, 0);
  *u = g;
  luaL_setmetatable(L, NSL_RNG_MT);
  return 1;
}

typedef enum { DRAW_NORMAL, DRAW_RANDOM } draw_kind;

/* Draws into a new tensor of the shape at arg (or returns a single number when the
 * shape is absent), in row-major order as numpy fills its arrays. */
static int draw(lua_State *L, int arg, draw_kind k, double loc, double scale) {
  ns_rng *g = checkrng(L);
  if (lua_isnoneornil(L, arg)) {
    lua_pushnumber(L, k == DRAW_NORMAL ? ns_rng_normal(g, loc, scale) : ns_rng_random(g));
    return 1;
  }
  char err[NS_ERRLEN];
  int rank;
  size_t shape[NS_MAXRANK];
  nsl_checkshape(L, arg, "n_or_shape", &rank, shape);
  ns_tensor **box = nsl_newbox(L);
  *box = ns_tensor_new(rank, shape, NS_FP64, err);
  if (!*box) return nsl_argerror(L, arg, "%s", err);
  double *v = (*box)->data;
  for (size_t i = 0; i < (*box)->n; i++)
    v[i] = k == DRAW_NORMAL ? ns_rng_normal(g, loc, scale) : ns_rng_random(g);
  return 1;
}

static double optnum(lua_State *L, int arg, const char *what, double def) {
  if (lua_isnoneornil(L, arg)) return def;
  if (lua_type(L, arg) != LUA_TNUMBER)
    nsl_argerror(L, arg, "%s must be a number, got %s", what, nsl_got(L, arg));
  return lua_tonumber(L, arg);
}

/* g:normal([loc [, scale [, n_or_shape]]]) -> number or tensor; numpy's normal */
static int g_normal(lua_State *L) {
  lua_settop(L, 4); /* fixed argument slots: conversions push above them */
  checkrng(L);
  double loc = optnum(L, 2, "loc", 0.0), scale = optnum(L, 3, "scale", 1.0);
  if (!(scale >= 0)) return nsl_argerror(L, 3, "scale must be >= 0, got %s", lua_tostring(L, 3));
  return draw(L, 4, DRAW_NORMAL, loc, scale);
}

/* g:standard_normal([n_or_shape]) */
static int g_standard_normal(lua_State *L) {
  lua_settop(L, 2); /* fixed argument slots: conversions push above them */
  return draw(L, 2, DRAW_NORMAL, 0.0, 1.0);
}

/* g:random([n_or_shape]) -> uniform [0, 1) */
static int g_random(lua_State *L) {
  lua_settop(L, 2); /* fixed argument slots: conversions push above them */
  return draw(L, 2, DRAW_RANDOM, 0.0, 1.0);
}

static int g_tostring(lua_State *L) {
  lua_pushfstring(L, "rng(%p)", lua_topointer(L, 1));
  return 1;
}

/* ns.sha256(s) -> lowercase hex digest of the string's bytes */
static int l_sha256(lua_State *L) {
  if (lua_type(L, 1) != LUA_TSTRING) /* before lua_tolstring, which converts numbers */
    return nsl_argerror(L, 1, "string expected, got %s", nsl_got(L, 1));
  size_t len;
  const char *s = lua_tolstring(L, 1, &len);
  char hex[65];
  ns_sha256_hex(s, len, hex);
  lua_pushstring(L, hex);
  return 1;
}

static const luaL_Reg rng_methods[] = {{"normal", g_normal},
                                       {"standard_normal", g_standard_normal},
                                       {"random", g_random},
                                       {NULL, NULL}};

static const luaL_Reg functions[] = {{"rng", l_rng}, {"sha256", l_sha256}, {NULL, NULL}};

void nsl_open_rng(lua_State *L) {
  if (luaL_newmetatable(L, NSL_RNG_MT)) {
    luaL_newlib(L, rng_methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, g_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushliteral(L, "rng");
    lua_setfield(L, -2, "__name");
  }
  lua_pop(L, 1);
  luaL_setfuncs(L, functions, 0);
}
