/* fuzz_lua.h: a Lua state with the module as `ns` for the harnesses that fuzz through Lua,
 * made once per process, with a scratch folder (global FUZZ_TMP) for the files they write.
 * The harness's Lua program defines a global function `fuzz(bytes)` that raises an error
 * when a property breaks; fuzz_lua_run calls it and turns such an error into FUZZ_CHECK. */
#ifndef NS_FUZZ_LUA_H
#define NS_FUZZ_LUA_H

#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "lua/nsl.h"

static char fuzz_tmpdir[64];

static void fuzz_lua_cleanup(void) {
  char cmd[128];
  if (!fuzz_tmpdir[0]) return;
  /* the harness writes only plain files named f* into its own folder */
  for (char c = '0'; c <= '9'; c++) {
    snprintf(cmd, sizeof cmd, "%s/f%c", fuzz_tmpdir, c);
    unlink(cmd);
  }
  rmdir(fuzz_tmpdir);
}

static lua_State *fuzz_lua_state(const char *program) {
  static lua_State *L;
  if (L) return L;
  char err[NS_ERRLEN];
  L = nsl_newstate(err);
  FUZZ_CHECK(L != NULL, "%s", err);
  fuzz_scratch(fuzz_tmpdir, sizeof fuzz_tmpdir, "nsfuzz");
  atexit(fuzz_lua_cleanup);
  lua_pushstring(L, fuzz_tmpdir);
  lua_setglobal(L, "FUZZ_TMP");
  if (luaL_loadbuffer(L, program, strlen(program), "=harness") != LUA_OK ||
      lua_pcall(L, 0, 0, 0) != LUA_OK)
    FUZZ_CHECK(0, "the harness program: %s", lua_tostring(L, -1));
  return L;
}

static void fuzz_lua_run(lua_State *L, const uint8_t *data, size_t size) {
  /* The input runs in a thread of its own, so the call frames and stack it grows are that
   * thread's and go with it, instead of the main state's growing and shrinking by turns. */
  lua_State *T = lua_newthread(L);
  lua_getglobal(T, "fuzz");
  lua_pushlstring(T, (const char *)data, size);
  int nres = 0, rc = lua_resume(T, L, 1, &nres);
  FUZZ_CHECK(rc == LUA_OK, "%s", rc == LUA_YIELD ? "fuzz() yielded" : lua_tostring(T, -1));
  lua_pop(L, 1);
  /* Everything this input made is freed before the next: the first collection runs the
   * finalizers (tensors, explorers), the second frees those objects' own blocks, which
   * Lua keeps for one more cycle. With an input's leftovers freed during the next one,
   * inputs end with more mallocs than frees by turns, which libFuzzer takes for a possible
   * leak: it runs the input again and scans the heap (half of fuzz_set's time), and stops
   * looking for leaks at all after 1000 such scans. */
  lua_gc(L, LUA_GCCOLLECT, 0);
  lua_gc(L, LUA_GCCOLLECT, 0);
}

#endif
