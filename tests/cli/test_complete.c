/* test_complete.c: Lua name completion (src/lua/complete.c) and the REPL evaluator's
 * verdicts (src/lua/repl.c) on a plain Lua state, without a terminal. The expected
 * candidate lists are written out by hand from the tables the test builds. */
#include <lauxlib.h>
#include <lualib.h>
#include <stdlib.h>
#include <string.h>

#include "repl/complete.h"
#include "repl/repl.h"
#include "tap.h"

/* Completes the word that ends the line and compares the candidates, joined by
 * spaces, with want ("" for none). */
static void expect(lua_State *L, const char *line, const char *want) {
  int end = (int)strlen(line);
  int start = nslc_wordstart(line, end);
  int top = lua_gettop(L);
  char **got = nslc_complete(L, line, start, end);
  char buf[1024] = "";
  for (char **p = got; p && *p; p++) {
    if (p != got) strncat(buf, " ", sizeof buf - strlen(buf) - 1);
    strncat(buf, *p, sizeof buf - strlen(buf) - 1);
  }
  int ok = strcmp(buf, want) == 0 && lua_gettop(L) == top;
  tap_ok(ok, "complete \"%s\"", line);
  if (!ok) tap_diag("got \"%s\" (stack %d -> %d), want \"%s\"", buf, top, lua_gettop(L), want);
  nslc_free(got);
}

static int t_index(lua_State *L) { /* methods from the upvalue; numbers read element 1 */
  if (lua_type(L, 2) == LUA_TNUMBER) {
    lua_pushinteger(L, 7);
    return 1;
  }
  lua_pushvalue(L, 2);
  lua_gettable(L, lua_upvalueindex(1));
  return 1;
}

static int noop(lua_State *L) {
  return 0;
}

static int bad_index(lua_State *L) {
  return luaL_error(L, "no fields here");
}

/* Collects what nslr_eval shows. */
typedef struct {
  char text[2048];
  int errors;
} sink;

static void collect(void *ud, const char *text, size_t len, int is_error) {
  sink *s = ud;
  size_t have = strlen(s->text);
  if (have + len < sizeof s->text) {
    memcpy(s->text + have, text, len);
    s->text[have + len] = '\0';
  }
  s->errors += is_error;
}

static void eval_is(lua_State *L, const char *chunk, int want_status, const char *want_text) {
  sink s = {"", 0};
  int top = lua_gettop(L);
  int st = nslr_eval(L, chunk, "=stdin", collect, &s);
  /* an error's text is handed over as an error, a result's as a result */
  int ok = st == want_status && lua_gettop(L) == top &&
           (s.errors > 0) == (want_status == NSLR_ERROR) &&
           (want_text ? strncmp(s.text, want_text, strlen(want_text)) == 0 : s.text[0] == 0);
  char shown[256]; /* the chunk on one line, for the TAP description */
  size_t k = 0;
  for (const char *c = chunk; *c && k + 3 < sizeof shown; c++) {
    if (*c == '\n') {
      shown[k++] = '\\';
      shown[k++] = 'n';
    } else {
      shown[k++] = *c;
    }
  }
  shown[k] = '\0';
  tap_ok(ok, "eval \"%s\"", shown);
  if (!ok)
    tap_diag("status %d (want %d), text \"%s\" (want \"%s\"), %d error call(s)", st, want_status,
             s.text, want_text ? want_text : "", s.errors);
}

int main(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  /* A module table, a nested table, and a userdata whose __index is a C closure over
   * its methods (as the tensor binding does). */
  (void)luaL_dostring(L, "mod = { normalize = 1, norm2 = 2, other = 3, ['not a name'] = 4,"
                         "        ['end'] = 5, sub = { alpha = 1, beta = 2 }, __hidden = 6 }");
  lua_newtable(L); /* methods */
  lua_pushcfunction(L, noop);
  lua_setfield(L, -2, "shape");
  lua_pushcfunction(L, noop);
  lua_setfield(L, -2, "sum");
  lua_pushcfunction(L, noop);
  lua_setfield(L, -2, "sqrt");
  lua_pushinteger(L, 1);
  lua_setfield(L, -2, "count"); /* not a function: no method */
  luaL_newmetatable(L, "test.obj");
  lua_pushvalue(L, -2);
  lua_pushcclosure(L, t_index, 1);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, noop);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 2);
  lua_newuserdatauv(L, 1, 0);
  luaL_setmetatable(L, "test.obj");
  lua_setglobal(L, "obj");
  lua_newuserdatauv(L, 1, 0);
  lua_newtable(L);
  lua_pushcfunction(L, bad_index);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  lua_setglobal(L, "grumpy");
  (void)luaL_dostring(L, "base = { inherited = 1 }; derived = setmetatable({ own = 1 },"
                         " { __index = base }); str = 'abc'");

  /* keys of a set{} table complete to the explorer's fields, as ns.fields() lists them */
  (void)luaL_dostring(L, "ns = {fields = function() return {{name = 'eps'}, {name = 'eps_at'},"
                         " {name = 'x'}} end}; epsilon = 1");
  expect(L, "set{ep", "eps eps_at");
  expect(L, "e:set{x = 1, ep", "eps eps_at");
  expect(L, "set({ e", "eps eps_at");
  expect(L, "set{x = ep", "epsilon");
  expect(L, "set{y = {ep", "epsilon");
  expect(L, "reset{ep", "epsilon");
  expect(L, "mod.nor", "mod.norm2 mod.normalize");
  expect(L, "x = mod.normal", "mod.normalize");
  expect(L, "mod.", "mod.__hidden mod.norm2 mod.normalize mod.other mod.sub");
  expect(L, "mod.sub.a", "mod.sub.alpha");
  expect(L, "print(mod.sub.", "mod.sub.alpha mod.sub.beta");
  expect(L, "mod.zzz", "");
  expect(L, "mod.nothing.x", "");
  expect(L, "obj:s", "obj:shape obj:sqrt obj:sum");
  expect(L, "obj:c", "");
  expect(L, "obj.co", "obj.count");
  expect(L, "str:up", "str:upper");
  expect(L, "derived.", "derived.inherited derived.own");
  expect(L, "grumpy.a", "");
  expect(L, "grumpy.x.y", "");
  expect(L, "mod:sub:x", "");
  expect(L, "mod..n", "");
  expect(L, "1.5e", "");
  expect(L, "prin", "print");
  expect(L, "whi", "while");
  expect(L, "derive", "derived");
  expect(L, "print(\"mod.nor", "");
  expect(L, "s = [[ mod.nor", "");
  expect(L, "x = 1 -- mod.nor", "");
  expect(L, "print('a') mod.nor", "mod.norm2 mod.normalize");
  expect(L, "x = [[a]] .. mod.nor", "mod.norm2 mod.normalize");

  tap_ok(nslc_wordstart("f(ns.nor", 8) == 2, "word start after '('");
  tap_ok(nslc_wordstart("a+b:c", 5) == 2, "word start after '+'");
  tap_ok(nslc_in_string("x = 'it\\'s", 10) == 1, "an escaped quote keeps the string open");
  tap_ok(nslc_in_string("x = 'a' .. b", 12) == 0, "a closed string");
  tap_ok(nslc_in_string("x = [==[ ]] ", 12) == 1, "a long string needs its own level");
  char *common = NULL;
  char *two[] = {"mod.norm2", "mod.normalize", NULL};
  common = nslc_common_prefix(two);
  tap_ok(common && strcmp(common, "mod.norm") == 0, "common prefix");
  free(common);

  eval_is(L, "1 + 1", NSLR_OK, "2\n");
  eval_is(L, "return 'a', nil, 3", NSLR_OK, "a\tnil\t3\n");
  eval_is(L, "x = 5", NSLR_OK, NULL);
  eval_is(L, "x", NSLR_OK, "5\n");
  /* tables are shown, not as addresses: keys sorted, array part first, nested, full numbers */
  eval_is(L, "{b = 2, a = {1, 2}, 0.1, 'q'}", NSLR_OK, "{0.1, \"q\", a = {1, 2}, b = 2}\n");
  eval_is(L, "{[3] = true, x = 1 / 3, [1.5] = 0}", NSLR_OK,
          "{[1.5] = 0, [3] = true, x = 0.3333333333333333}\n");
  eval_is(L, "local t = {} t.me = t return t", NSLR_OK, "{me = {...cycle}}\n");
  eval_is(L, "{s = string.rep('x', 90)}", NSLR_OK, "{\n  s = \"xxxx");
  eval_is(L, "2.0, 1e300, -0.0", NSLR_OK, "2.0\t1e+300\t-0.0\n");
  eval_is(L, "for i = 1, 2 do", NSLR_INCOMPLETE, NULL);
  eval_is(L, "for i = 1, 2 do\nx = x + i\nend", NSLR_OK, NULL);
  eval_is(L, "x", NSLR_OK, "8\n");
  eval_is(L, "1 +", NSLR_INCOMPLETE, NULL);
  eval_is(L, "1 +\n2", NSLR_OK, "3\n");
  eval_is(L, "f(", NSLR_INCOMPLETE, NULL);
  eval_is(L, "x = = 1", NSLR_ERROR, "stdin:1: unexpected symbol near '='");
  eval_is(L, "error('boom')", NSLR_ERROR, "stdin:1: boom\nstack traceback:");
  eval_is(L, "error({})", NSLR_ERROR, "(error object is a table value)");
  eval_is(L, "obj", NSLR_ERROR, "error converting a result to text");
  eval_is(L, "print", NSLR_OK, "function: ");
  lua_close(L);
  return tap_done();
}
