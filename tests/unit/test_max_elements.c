/* test_max_elements.c: the element cap as a setting of the core (ns_set_max_elements,
 * ns_max_elements), and how NS_MAX_ELEMENTS reaches it from outside the core: read by
 * nsl_max_elements_from_env, which main and luaopen_normscope call. The core itself reads
 * no environment, so here a variable set after the cap was passed on changes nothing until
 * an entry point reads it again. The numbers are the documented ones (2^28 by default,
 * 1 to 2^31 accepted, K = 2^10). */
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tensor.h"
#include "lua/nsl.h"
#include "tap.h"

static int has(const char *s, const char *frag) {
  return s && strstr(s, frag) != NULL;
}

/* 1 when a tensor of n elements can be made now */
static int fits(size_t n) {
  char err[NS_ERRLEN];
  ns_tensor *t = ns_tensor_new(1, &n, NS_FP16, err);
  ns_tensor_free(t);
  return t != NULL;
}

/* Runs chunk in a new state (luaopen_normscope reads the environment): 0 when it ran, else
 * -1 with its message in msg. */
static int run_lua(const char *chunk, char *msg, size_t len) {
  char err[NS_ERRLEN];
  msg[0] = '\0';
  lua_State *L = nsl_newstate(err);
  if (!L) {
    snprintf(msg, len, "%s", err);
    return -1;
  }
  int rc = luaL_dostring(L, chunk) == LUA_OK ? 0 : -1;
  if (rc) snprintf(msg, len, "%s", lua_tostring(L, -1));
  lua_close(L);
  return rc;
}

int main(void) {
  char err[NS_ERRLEN], msg[512];
  unsetenv("NS_MAX_ELEMENTS");

  /* the setting itself */
  tap_ok(ns_max_elements() == (size_t)1 << 28, "the cap starts at 2^28 (%zu)", ns_max_elements());
  int rc = ns_set_max_elements(1000, err);
  tap_ok(rc == 0 && ns_max_elements() == 1000, "set to 1000: %zu", ns_max_elements());
  tap_ok(fits(1000) && !fits(1001), "then 1000 elements are made and 1001 refused");
  size_t n = 1001;
  ns_tensor *t = ns_tensor_new(1, &n, NS_FP64, err);
  tap_ok(!t && has(err, "1001 elements is above the cap of 1000 elements per tensor") &&
             has(err, "(NS_MAX_ELEMENTS)"),
         "the refusal names both numbers and the variable: %s", err);
  err[0] = '\0';
  tap_ok(ns_set_max_elements(0, err) == -1 && has(err, "from 1 to 2147483648") &&
             ns_max_elements() == 1000,
         "0 refused, the cap kept: %s", err);
  err[0] = '\0';
  tap_ok(ns_set_max_elements(((size_t)1 << 31) + 1, err) == -1 && has(err, "2147483649") &&
             ns_max_elements() == 1000,
         "2^31 + 1 refused, the cap kept: %s", err);
  tap_ok(ns_set_max_elements((size_t)1 << 31, NULL) == 0 && ns_max_elements() == (size_t)1 << 31,
         "2^31 accepted (and a NULL err is fine)");
  tap_ok(ns_set_max_elements(1, err) == 0 && fits(1) && !fits(2), "a cap of 1");

  /* the core reads no environment */
  setenv("NS_MAX_ELEMENTS", "5", 1);
  tap_ok(ns_max_elements() == 1 && !fits(2), "NS_MAX_ELEMENTS set later is not read by the core");

  /* nsl_max_elements_from_env, the one place it is read */
  ns_set_max_elements(777, NULL);
  unsetenv("NS_MAX_ELEMENTS");
  tap_ok(nsl_max_elements_from_env(err) == 0 && ns_max_elements() == 777,
         "unset: the cap stays as it was (%zu)", ns_max_elements());
  setenv("NS_MAX_ELEMENTS", "", 1);
  tap_ok(nsl_max_elements_from_env(err) == 0 && ns_max_elements() == 777,
         "empty: the cap stays as it was (%zu)", ns_max_elements());
  setenv("NS_MAX_ELEMENTS", "1K", 1);
  rc = nsl_max_elements_from_env(err);
  tap_ok(rc == 0 && ns_max_elements() == 1024, "1K: %zu", ns_max_elements());
  setenv("NS_MAX_ELEMENTS", "lots", 1);
  err[0] = '\0';
  tap_ok(nsl_max_elements_from_env(err) == -1 &&
             has(err, "\"lots\" is not a number of elements from 1 to 2147483648") &&
             ns_max_elements() == 1024,
         "lots: refused with the parser's message, the cap kept: %s", err);
  setenv("NS_MAX_ELEMENTS", "3G", 1);
  tap_ok(nsl_max_elements_from_env(NULL) == -1 && ns_max_elements() == 1024,
         "3G (above 2^31) refused, the cap kept");

  /* luaopen_normscope, the entry point of `require "normscope"` in stock lua5.4 */
  ns_set_max_elements((size_t)1 << 28, NULL);
  setenv("NS_MAX_ELEMENTS", "100", 1);
  tap_ok(run_lua("ns.zeros({100})", msg, sizeof msg) == 0,
         "a new Lua state with "
         "NS_MAX_ELEMENTS=100: 100 elements (%s)",
         msg);
  tap_ok(run_lua("ns.zeros({101})", msg, sizeof msg) == -1 &&
             has(msg, "101 elements is above the cap of 100 elements per tensor"),
         "... and 101 refused: %s", msg);
  tap_ok(ns_max_elements() == 100, "the module passed it on to the core (%zu)", ns_max_elements());
  unsetenv("NS_MAX_ELEMENTS");
  ns_set_max_elements(50, NULL);
  tap_ok(run_lua("ns.zeros({51})", msg, sizeof msg) == -1 && has(msg, "cap of 50") &&
             ns_max_elements() == 50,
         "unset: a new state keeps the cap a C caller set: %s", msg);
  setenv("NS_MAX_ELEMENTS", "lots", 1);
  tap_ok(run_lua("ns.zeros({50})", msg, sizeof msg) == 0 && ns_max_elements() == 50,
         "a bad value: the module loads and keeps the cap (%s)", msg);
  unsetenv("NS_MAX_ELEMENTS");
  return tap_done();
}
