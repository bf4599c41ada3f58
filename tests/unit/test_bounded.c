/* test_bounded.c: runs tests/lua/test_bounded.lua with B, a copy of the string table with
 * the sandbox's bounded functions (nsl_bound_string), T, the same for the table library
 * (nsl_bound_table), and with_budget(limit, f), which calls f under a work budget
 * (nsl_budget.h) and re-raises its message. The Lua file prints the TAP. */
#include <stdio.h>
#include <stdlib.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "lua/nsl_budget.h"

#ifndef NSX_SRCDIR
#define NSX_SRCDIR "."
#endif

static void copy_global(lua_State *L, const char *from, const char *to) {
  lua_getglobal(L, from);
  lua_newtable(L);
  lua_pushnil(L);
  while (lua_next(L, -3)) {
    lua_pushvalue(L, -2);
    lua_insert(L, -2);
    lua_rawset(L, -4);
  }
  lua_setglobal(L, to);
  lua_pop(L, 1);
}

/* Count hook: the budget counts instructions as a sandbox's does. */
static void hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  nsl_budget *b = nsl_budget_of(L);
  if (b && nsl_budget_add(b, 100)) nsl_budget_raise(L, b);
}

static int with_budget(lua_State *L) {
  nsl_budget b = {.limit = (long long)luaL_checkinteger(L, 1), .seconds = 30};
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_settop(L, 2);
  nsl_budget_enter(L, &b);
  lua_sethook(L, hook, LUA_MASKCOUNT, 100);
  int rc = lua_pcall(L, 0, LUA_MULTRET, 0);
  lua_sethook(L, NULL, 0, 0);
  nsl_budget_leave(L, &b);
  if (rc != LUA_OK) return lua_error(L);
  return lua_gettop(L) - 1;
}

int main(void) {
  char path[4096];
  const char *src = getenv("top_srcdir");
  snprintf(path, sizeof path, "%s/tests/lua/test_bounded.lua", src ? src : NSX_SRCDIR);
  lua_State *L = luaL_newstate();
  if (!L) {
    printf("1..0 # SKIP no Lua state\n");
    return 0;
  }
  luaL_openlibs(L);
  copy_global(L, "string", "B");
  lua_getglobal(L, "B");
  nsl_bound_string(L, -1);
  lua_pop(L, 1);
  copy_global(L, "table", "T");
  lua_getglobal(L, "T");
  nsl_bound_table(L, -1);
  lua_pop(L, 1);
  lua_register(L, "with_budget", with_budget);
  int rc = 0;
  if (luaL_dofile(L, path) != LUA_OK) {
    printf("not ok 9999 - Lua error: %s\n", lua_tostring(L, -1));
    rc = 1;
  } else {
    lua_getglobal(L, "tap_failed");
    if (lua_tointeger(L, -1) != 0) rc = 1;
  }
  lua_close(L);
  return rc;
}
