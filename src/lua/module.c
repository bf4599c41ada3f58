/* module.c: the "normscope" module table and the interpreter states that carry it. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <lualib.h>
#include <stdio.h>

#include "lua/explore_lua.h"
#include "lua/nsl.h"
#include "lua/nsl_priv.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0"
#endif

int luaopen_normscope(lua_State *L) {
  /* the element cap from NS_MAX_ELEMENTS; a bad value keeps the cap (main reports it) */
  (void)nsl_max_elements_from_env(NULL);
  nsl_blas_from_env(); /* before any linear algebra can load the libraries */
  lua_newtable(L);     /* the module */
  nsl_open_tensor(L);
  nsl_open_normalize(L);
  nsl_open_stats(L);
  nsl_open_rng(L);
  nsl_open_io(L);
  nsl_open_plot(L);
  nsx_open_module(L);
  lua_pushliteral(L, PACKAGE_VERSION);
  lua_setfield(L, -2, "version");
  return 1;
}

/* Protected body of nsl_newstate: standard libraries, then the module as `ns`. */
static int open_all(lua_State *L) {
  luaL_openlibs(L);
  luaL_requiref(L, "normscope", luaopen_normscope, 0); /* package.loaded.normscope */
  lua_setglobal(L, "ns");
  return 0;
}

lua_State *nsl_newstate(char *err) {
  lua_State *L = luaL_newstate();
  if (!L) {
    if (err) snprintf(err, NS_ERRLEN, "cannot create a Lua state: out of memory");
    return NULL;
  }
  lua_pushcfunction(L, open_all);
  if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
    if (err) snprintf(err, NS_ERRLEN, "cannot load the Lua libraries: %s", lua_tostring(L, -1));
    lua_close(L);
    return NULL;
  }
  return L;
}
