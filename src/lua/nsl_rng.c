/* nsl_rng.c: ns.rng (numpy.random.default_rng-compatible generators), ns.torch_rng
 * (PyTorch's CPU generator: torch.manual_seed, torch.rand, torch.randn) and ns.sha256.
 *
 *   local g = ns.torch_rng(12)          -- torch.manual_seed(12)
 *   local x = g:randn{2, 5, 8}          -- torch.randn(2, 5, 8): an fp32 tensor
 *   local u = g:rand(3)                 -- torch.rand(3)
 * The generator keeps torch's cached normal, so a sequence of calls matches the same
 * sequence in torch (randn of fewer than 16 values caches one; see core/torch_rng.h). */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "core/rng.h"
#include "core/sha256.h"
#include "core/torch_rng.h"
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
  nsl_charge(L, (double)len / 16);
  char hex[65];
  ns_sha256_hex(s, len, hex);
  lua_pushstring(L, hex);
  return 1;
}

/* ---- ns.torch_rng ----------------------------------------------------------------- */

#define NSL_TORCH_RNG_MT "normscope.torch_rng"
/* torch's CPU generator before any manual_seed (c10's default_rng_seed_val). */
#define TORCH_DEFAULT_SEED INT64_C(67280421310721)

static ns_torch_rng *checktorch(lua_State *L) {
  ns_torch_rng *g = luaL_testudata(L, 1, NSL_TORCH_RNG_MT);
  if (!g) nsl_argerror(L, 1, "generator from ns.torch_rng expected, got %s", nsl_got(L, 1));
  return g;
}

/* ns.torch_rng([seed]): torch.manual_seed(seed) on a new CPU generator. seed an integer
 * (torch keeps seed mod 2^32; a negative one counts as seed + 2^64, as torch reads it);
 * absent: torch's own initial seed, 67280421310721. */
static int l_torch_rng(lua_State *L) {
  lua_settop(L, 1); /* fixed argument slots: conversions push above them */
  lua_Integer s = TORCH_DEFAULT_SEED;
  if (!lua_isnil(L, 1)) {
    if (lua_type(L, 1) != LUA_TNUMBER)
      return nsl_argerror(L, 1, "seed must be an integer, got %s", nsl_got(L, 1));
    if (!nsl_intat(L, 1, LUA_MININTEGER, LUA_MAXINTEGER, &s))
      return nsl_argerror(L, 1, "seed must be an integer, got %s", lua_tostring(L, 1));
  }
  ns_torch_rng *g = lua_newuserdatauv(L, sizeof *g, 0);
  ns_torch_rng_seed(g, (uint64_t)s);
  luaL_setmetatable(L, NSL_TORCH_RNG_MT);
  return 1;
}

/* g:randn(shape) / g:rand(shape) -> fp32 tensor in C order, as torch fills it; shape a
 * size, an array of sizes, or the sizes as separate arguments (g:randn(2, 5, 8)). */
static int torch_draw(lua_State *L, int normal) {
  int nargs = lua_gettop(L);
  ns_torch_rng *g = checktorch(L);
  char err[NS_ERRLEN];
  int rank;
  size_t shape[NS_MAXRANK];
  if (nargs > 2) { /* separate sizes: gather them into an array at index 2 */
    if (nargs > 1 + NS_MAXRANK)
      return nsl_argerror(L, 2 + NS_MAXRANK, "at most %d sizes, got %d", NS_MAXRANK, nargs - 1);
    lua_createtable(L, nargs - 1, 0);
    for (int k = 2; k <= nargs; k++) {
      lua_pushvalue(L, k);
      lua_rawseti(L, -2, k - 1);
    }
    lua_replace(L, 2);
  }
  lua_settop(L, 2); /* fixed argument slots: conversions push above them */
  nsl_checkshape(L, 2, "shape", &rank, shape);
  ns_tensor **box = nsl_newbox(L);
  *box = ns_tensor_new(rank, shape, NS_FP32, err);
  if (!*box) return nsl_argerror(L, 2, "%s", err);
  float *v = (*box)->data;
  int rc =
      normal ? ns_torch_rng_randn(g, v, (*box)->n, err) : ns_torch_rng_rand(g, v, (*box)->n, err);
  if (rc) return luaL_error(L, "%s", err);
  return 1;
}

static int tg_randn(lua_State *L) {
  return torch_draw(L, 1);
}
static int tg_rand(lua_State *L) {
  return torch_draw(L, 0);
}

static int tg_tostring(lua_State *L) {
  lua_pushfstring(L, "torch_rng(%p)", lua_topointer(L, 1));
  return 1;
}

static const luaL_Reg torch_methods[] = {{"randn", tg_randn}, {"rand", tg_rand}, {NULL, NULL}};

static const luaL_Reg rng_methods[] = {{"normal", g_normal},
                                       {"standard_normal", g_standard_normal},
                                       {"random", g_random},
                                       {NULL, NULL}};

static const luaL_Reg functions[] = {
    {"rng", l_rng}, {"torch_rng", l_torch_rng}, {"sha256", l_sha256}, {NULL, NULL}};

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
  if (luaL_newmetatable(L, NSL_TORCH_RNG_MT)) {
    luaL_newlib(L, torch_methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, tg_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushliteral(L, "torch_rng");
    lua_setfield(L, -2, "__name");
  }
  lua_pop(L, 1);
  luaL_setfuncs(L, functions, 0);
}
