/* test_explore_lua.c: runs tests/lua/test_explore_state.lua in a Lua state with the
 * normscope module and the explorer's set/get/undo/redo/reset (nsx_open), and reports its
 * TAP. The Lua file prints the plan; a Lua error becomes a failed test. */
#include <stdio.h>
#include <stdlib.h>

#include <lauxlib.h>
#include <lua.h>

#include "explore/explore.h"
#include "lua/explore_lua.h"
#include "lua/nsl.h"

#ifndef NSX_SRCDIR
#define NSX_SRCDIR "."
#endif

static int nchanges;

static void on_change(void *ud) {
  (void)ud;
  nchanges++;
}

static int l_changes(lua_State *L) {
  lua_pushinteger(L, nchanges);
  return 1;
}

/* result_check() -> true, or false and what is wrong: result()'s tables against the list of
 * ns_result members (nsx_result_check). */
static int l_result_check(lua_State *L) {
  static char e[4096];
  int rc = nsx_result_check(e, sizeof e);
  lua_pushboolean(L, rc == 0);
  lua_pushstring(L, e);
  return 2;
}

int main(void) {
  char err[NS_ERRLEN], path[4096];
  const char *src = getenv("top_srcdir");
  snprintf(path, sizeof path, "%s/tests/lua/test_explore_state.lua", src ? src : NSX_SRCDIR);
  lua_State *L = nsl_newstate(err);
  if (!L) {
    printf("1..0 # SKIP no Lua state: %s\n", err);
    return 0;
  }
  ns_state s;
  ns_history h;
  if (ns_state_init(&s, err) != 0) {
    printf("not ok 1 - state init: %s\n1..1\n", err);
    return 1;
  }
  ns_history_init(&h, 64);
  nsx_open(L, &s, &h, on_change, NULL);
  lua_register(L, "changes", l_changes);
  lua_register(L, "result_check", l_result_check);
  int rc = 0;
  if (luaL_dofile(L, path) != LUA_OK) {
    printf("not ok 9999 - Lua error: %s\n", lua_tostring(L, -1));
    rc = 1;
  } else {
    lua_getglobal(L, "tap_failed");
    if (lua_tointeger(L, -1) != 0) rc = 1;
  }
  lua_close(L);
  ns_history_free(&h);
  ns_state_free(&s);
  return rc;
}
