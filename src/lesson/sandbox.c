/* sandbox.c: the Lua state a lesson runs in (lesson.h), and its limits.
 *
 * Every call into lesson code goes through lesson_sb_run: it starts a fresh budget
 * (nsl_budget.h: NS_LESSON_STEPS work units, NS_LESSON_TIME seconds, Ctrl-C) and runs a C
 * trampoline in protected mode with a message handler that adds FILE:LINE when the error has
 * none. The count hook charges the VM instructions and looks at the clock; the C the hook
 * cannot see charges too (ns.* the elements it touches, the string matcher its steps, the
 * table functions their elements: nsl_bounded.c), so runaway code ends wherever it runs.
 * Once the budget is spent (or the allocator has refused memory) the sandbox's pcall/xpcall
 * re-raise, so lesson code cannot catch its own end and carry on. */
#define _XOPEN_SOURCE 700 /* realpath: the lesson's folder, where its own data may be read */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "lesson/lesson_priv.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "core/dtype.h"
#include "core/tensor.h"
#include "core/text.h"
#include "explore/file.h"
#include "lua/explore_lua.h"
#include "lua/nsl.h"
#include "lua/nsl_budget.h"
#include "lua/nsl_priv.h"

/* ------------------------------------------------------------------ options */

/* The sandbox's limits from the environment, each with its range: a value outside it is
 * refused with a message naming the variable (lesson_options_check_env, which the program
 * calls first thing: a usage error), never replaced by the default in silence. */
#define MEM_MIN ((size_t)1 << 20)
#define MEM_MAX ((size_t)1 << 40)
#define STEPS_MIN 1000LL
#define STEPS_MAX 1000000000000000LL
#define TIME_MIN 0.1
#define TIME_MAX 86400.0

/* NS_LESSON_MEM: bytes, or with a K, M or G suffix (times 2^10, 2^20, 2^30). 0 (unset or
 * empty: *v untouched), or -1 with err. */
static int mem_from_env(size_t *v, char *err) {
  const char *s = getenv("NS_LESSON_MEM");
  if (!s || !*s) return 0;
  unsigned long long n = 0;
  int ok = ns_parse_kmg(s, 1, &n) == 0 && n <= MEM_MAX && n >= MEM_MIN;
  if (!ok) {
    snprintf(err, LESSON_ERRLEN,
             "NS_LESSON_MEM: \"%.40s\" is not a size from 1M to 1024G (bytes, or with a K, M "
             "or G suffix)",
             s);
    return -1;
  }
  *v = (size_t)n;
  return 0;
}

/* NS_LESSON_STEPS: a whole number of work units per call. */
static int steps_from_env(long long *v, char *err) {
  const char *s = getenv("NS_LESSON_STEPS");
  if (!s || !*s) return 0;
  char *end;
  errno = 0;
  long long n = isdigit((unsigned char)s[0]) ? strtoll(s, &end, 10) : 0;
  if (!isdigit((unsigned char)s[0]) || errno || *end || n < STEPS_MIN || n > STEPS_MAX) {
    snprintf(err, LESSON_ERRLEN,
             "NS_LESSON_STEPS: \"%.40s\" is not a whole number of VM instructions from %lld "
             "to %lld",
             s, STEPS_MIN, STEPS_MAX);
    return -1;
  }
  *v = n;
  return 0;
}

/* NS_LESSON_TIME: seconds of wall clock per call. */
static int time_from_env(double *v, char *err) {
  const char *s = getenv("NS_LESSON_TIME");
  if (!s || !*s) return 0;
  char *end;
  errno = 0;
  double t = isdigit((unsigned char)s[0]) || s[0] == '.' ? strtod(s, &end) : 0;
  if ((!isdigit((unsigned char)s[0]) && s[0] != '.') || errno || *end || !(t >= TIME_MIN) ||
      !(t <= TIME_MAX)) {
    snprintf(err, LESSON_ERRLEN,
             "NS_LESSON_TIME: \"%.40s\" is not a number of seconds from 0.1 to 86400", s);
    return -1;
  }
  *v = t;
  return 0;
}

int lesson_options_check_env(char *err) {
  size_t m;
  long long st;
  double t;
  return mem_from_env(&m, err) || steps_from_env(&st, err) || time_from_env(&t, err) ? -1 : 0;
}

void lesson_options_init(lesson_options *o) {
  char err[LESSON_ERRLEN];
  memset(o, 0, sizeof *o);
  /* a value the check refuses keeps the default here (the program refused it already) */
  (void)mem_from_env(&o->mem_limit, err);
  (void)steps_from_env(&o->step_limit, err);
  (void)time_from_env(&o->time_limit, err);
}

/* Limits the Lua heap: refusing a growth makes Lua raise a memory error (after a GC). */
void *lesson_sb_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  sandbox *sb = ud;
  size_t old = ptr ? osize : 0;
  if (nsize == 0) {
    free(ptr);
    sb->used -= old;
    return NULL;
  }
  size_t held = sb->used + ns_mem_used(sb->acct); /* tensors count too */
  if (nsize > old && (held > sb->limit || nsize - old > sb->limit - held)) {
    sb->mem_hit = 1;
    return NULL;
  }
  void *p = realloc(ptr, nsize);
  if (!p) {
    if (nsize <= old) return ptr; /* Lua assumes shrinking never fails */
    sb->mem_hit = 1;
    return NULL;
  }
  sb->used = sb->used - old + nsize;
  return p;
}

static sandbox *sb_of(lua_State *L) {
  void *ud;
  lua_getallocf(L, &ud);
  return ud;
}

/* Counts instructions against the budget (which also looks at the clock and at Ctrl-C);
 * remembers where the lesson is (for memory errors, which carry no position). */
void lesson_sb_hook(lua_State *L, lua_Debug *ar) {
  sandbox *sb = sb_of(L);
  if (lua_getinfo(L, "Sl", ar) && ar->currentline > 0)
    snprintf(sb->where, sizeof sb->where, "%s:%d", ar->short_src, ar->currentline);
  if (nsl_budget_add(&sb->b, HOOK_EVERY)) nsl_budget_raise(L, &sb->b);
}

/* The budget's message (without a position: the message handler adds the line that runs). */
static void sb_budget_message(lua_State *L, nsl_budget *b) {
  switch (b->spent) {
  case NSL_SPENT_TIME:
    lua_pushfstring(L, "time limit exceeded (%f s per call; NS_LESSON_TIME raises it)",
                    (lua_Number)b->seconds);
    break;
  case NSL_SPENT_INTERRUPT:
    lua_pushliteral(L, "interrupted (Ctrl-C)");
    break;
  default:
    lua_pushfstring(L,
                    "instruction budget exceeded (%I VM instructions per call; "
                    "NS_LESSON_STEPS raises it)",
                    (lua_Integer)b->limit); /* C work counts too: nsl_budget.h */
    break;
  }
}

/* Whether msg starts with "chunk:LINE:" (a Lua error position). */
static int has_position(const char *m) {
  const char *c = strchr(m, ':');
  while (c) {
    const char *d = c + 1;
    if (isdigit((unsigned char)*d)) {
      while (isdigit((unsigned char)*d)) d++;
      if (*d == ':') return 1;
    }
    if (c - m > LUA_IDSIZE + 8) return 0;
    c = strchr(c + 1, ':');
  }
  return 0;
}

/* Message handler: a string message with a position stays; others get the position of the
 * innermost Lua function on the stack. */
static int sb_msgh(lua_State *L) {
  const char *m = lua_tostring(L, 1);
  if (m && has_position(m)) return 1;
  char where[LUA_IDSIZE + 32] = "";
  lua_Debug ar;
  for (int lv = 1; lua_getstack(L, lv, &ar); lv++) { /* the prelude's wrappers are not it */
    if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0 && strcmp(ar.short_src, "prelude") != 0) {
      snprintf(where, sizeof where, "%s:%d: ", ar.short_src, ar.currentline);
      break;
    }
  }
  if (!m) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
      m = lua_tostring(L, -1);
    else
      m = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  lua_pushfstring(L, "%s%s", where, m);
  return 1;
}

/* pcall and xpcall as the base library has them, except that the end of the budget and a
 * refused allocation pass through. */
static int sb_finish(lua_State *L, int status, int extra) {
  sandbox *sb = sb_of(L);
  /* a refused allocation re-raised by a C wrapper comes as a runtime error: mem_hit says */
  if (status != LUA_OK && (sb->b.spent || sb->mem_hit || ns_mem_refused(sb->acct)))
    return lua_error(L);
  if (status != LUA_OK) {
    lua_pushboolean(L, 0);
    lua_pushvalue(L, -2);
    return 2;
  }
  return lua_gettop(L) - extra;
}

static int sb_pcall(lua_State *L) {
  luaL_checkany(L, 1);
  lua_pushboolean(L, 1); /* first result if no error */
  lua_insert(L, 1);
  int status = lua_pcall(L, lua_gettop(L) - 2, LUA_MULTRET, 0);
  return sb_finish(L, status, 0);
}

static int sb_xpcall(lua_State *L) {
  int n = lua_gettop(L);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_pushboolean(L, 1);
  lua_pushvalue(L, 1);
  lua_rotate(L, 3, 2); /* f msgh true f args... */
  int status = lua_pcall(L, n - 2, LUA_MULTRET, 2);
  return sb_finish(L, status, 2);
}

/* string.rep that refuses, with a position, a result larger than the memory left. */
static int sb_rep(lua_State *L) {
  size_t l, lsep = 0;
  luaL_checklstring(L, 1, &l);
  lua_Integer n = luaL_checkinteger(L, 2);
  luaL_optlstring(L, 3, "", &lsep);
  if (n > 0) {
    sandbox *sb = sb_of(L);
    /* the result is built in a buffer, then copied into the string: twice its size */
    double total = (double)l * (double)n + (double)lsep * (double)(n - 1);
    if (2 * total > (double)(sb->limit - sb->used)) {
      char bytes[64];
      snprintf(bytes, sizeof bytes, "%.0f", total);
      return luaL_error(L,
                        "string.rep: a result of %s bytes is over the lesson's memory limit "
                        "(%d MiB; NS_LESSON_MEM raises it)",
                        bytes, (int)(sb->limit >> 20));
    }
    luaL_where(L, 1); /* a memory error inside carries no position: keep this one */
    snprintf(sb->where, sizeof sb->where, "%s", lua_tostring(L, -1));
    size_t wl = strlen(sb->where);
    while (wl > 0 && (sb->where[wl - 1] == ' ' || sb->where[wl - 1] == ':')) sb->where[--wl] = 0;
    lua_pop(L, 1);
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

/* One line to the lesson's output, sanitized (core/text.h: a lesson's print must not reach
 * the terminal with escape sequences: OSC 52, a title, a clear screen). */
static void sb_emit(lesson *ls, const char *line) {
  char safe[4096], *big = NULL;
  size_t len = strlen(line);
  const unsigned keep = NS_TEXT_KEEP_NL | NS_TEXT_KEEP_TAB;
  size_t need = ns_text_sanitize(NULL, 0, line, len, keep);
  char *out = need < sizeof safe ? safe : (big = malloc(need + 1));
  if (!out) return; /* no room for a safe copy: nothing rather than the raw line */
  ns_text_sanitize(out, need + 1, line, len, keep);
  if (ls->opt.out)
    ls->opt.out(ls->opt.ud, out);
  else {
    fputs(out, stdout);
    fputc('\n', stdout);
  }
  free(big);
}

/* print: one line to the lesson's output, while the call has printed less than
 * LESSON_OUTPUT_MAX; the line that passes it is cut there and a note says so, and the rest
 * of the call prints nothing (a loop of prints must not fill a disk or a terminal). */
static int sb_print(lua_State *L) {
  lesson *ls = lua_touserdata(L, lua_upvalueindex(1));
  sandbox *sb = &ls->sb;
  if (sb->out_cut) return 0;
  int n = lua_gettop(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 1; i <= n; i++) {
    luaL_tolstring(L, i, NULL); /* +1 */
    if (i > 1) luaL_addchar(&b, '\t');
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  size_t len;
  const char *line = lua_tolstring(L, -1, &len);
  if (len + 1 > LESSON_OUTPUT_MAX - sb->out_bytes) {
    size_t keep = LESSON_OUTPUT_MAX - sb->out_bytes;
    sb->out_cut = 1;
    if (keep > 1) {
      lua_pushlstring(L, line, keep - 1);
      sb_emit(ls, lua_tostring(L, -1));
    }
    char note[160];
    snprintf(note, sizeof note, "[output cut here: a lesson prints at most %zu KiB per call]",
             LESSON_OUTPUT_MAX >> 10);
    sb_emit(ls, note);
    return 0;
  }
  sb->out_bytes += len + 1;
  sb_emit(ls, line);
  return 0;
}

/* ---- the C functions the lesson reaches ----
 * Every C function the lesson can reach from ns.*, from the module's metatables and from the
 * explorer globals is wrapped: argument errors get the function's name back, and the clock is
 * looked at after each (C work of any length). The tensors they make are charged to the
 * lesson's memory account as they are made (core/tensor.h): a tensor that would pass the cap
 * first makes the collector free what the lesson dropped; if that is not enough, it is
 * refused and the call ends as a memory bomb. */

static int sb_tracked(lua_State *L) {
  int n = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  int st = lua_pcall(L, n, LUA_MULTRET, 0);
  sandbox *sb = sb_of(L);
  if (st != LUA_OK) {
    /* called from here the function has no name: argument errors say '?'; put it back */
    const char *m = lua_tostring(L, -1);
    const char *q = m && !sb->b.spent && !sb->mem_hit && !ns_mem_refused(sb->acct)
                        ? strstr(m, " to '?'")
                        : NULL;
    if (q) {
      const char *name = lua_tostring(L, lua_upvalueindex(2));
      const char *hash = strstr(m, "bad argument #");
      int arg = hash && hash < q ? atoi(hash + 14) : 0;
      if (lua_toboolean(L, lua_upvalueindex(3)) && arg > 0) { /* a method: self is not #1 */
        if (arg == 1)
          lua_pushfstring(L, "%scalling '%s' on bad self%s",
                          lua_pushlstring(L, m, (size_t)(hash - m)), name, q + 7);
        else
          lua_pushfstring(L, "%sbad argument #%d to '%s'%s",
                          lua_pushlstring(L, m, (size_t)(hash - m)), arg - 1, name, q + 7);
      } else
        lua_pushfstring(L, "%s to '%s'%s", lua_pushlstring(L, m, (size_t)(q - m)), name, q + 7);
    }
    return lua_error(L);
  }
  nsl_charge(L, 0); /* the clock and Ctrl-C, after C work of any length */
  return lua_gettop(L);
}

static const char *const mt_skip[] = {"__gc", "__close", "__mode", "__name", "__metatable", NULL};

/* Wraps every C function of the table at idx (keeping their names), and the functions of the
 * tables that are upvalues of a C-closure __index. */
static void wrap_table(lua_State *L, int idx, int depth, int method) {
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) { /* key value */
    if (lua_type(L, -2) == LUA_TSTRING) {
      const char *k = lua_tostring(L, -2);
      int skip = 0;
      for (const char *const *s = mt_skip; *s; s++) skip |= strcmp(k, *s) == 0;
      if (!skip && lua_iscfunction(L, -1)) {
        for (int u = 1; lua_getupvalue(L, -1, u); u++) { /* method tables of __index */
          if (lua_type(L, -1) == LUA_TTABLE) wrap_table(L, -1, 0, 1);
          lua_pop(L, 1);
        }
        lua_pushvalue(L, -2); /* key value key */
        lua_pushboolean(L, method);
        lua_pushcclosure(L, sb_tracked, 3);
        lua_pushvalue(L, -2); /* key wrapped key */
        lua_insert(L, -2);
        lua_rawset(L, idx); /* key */
        continue;
      }
      if (!skip && lua_type(L, -1) == LUA_TTABLE && (depth > 0 || strcmp(k, "__index") == 0))
        wrap_table(L, -1, depth > 0 ? depth - 1 : 0, method || strcmp(k, "__index") == 0);
    }
    lua_pop(L, 1);
  }
}

/* Wraps ns (and its subtables), the module's metatables and the explorer globals. */
static void wrap_all(lua_State *L) {
  lua_getglobal(L, "ns");
  wrap_table(L, -1, 1, 0);
  lua_pop(L, 1);
  lua_pushnil(L);
  while (lua_next(L, LUA_REGISTRYINDEX)) { /* the module's metatables, "normscope.*" */
    if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TTABLE &&
        strncmp(lua_tostring(L, -2), "normscope.", 10) == 0 &&
        strncmp(lua_tostring(L, -2), "normscope.lesson.", 17) != 0) {
      wrap_table(L, -1, 0, 0);
      /* getmetatable(t) gives false: a lesson cannot swap a tensor's __gc and leak */
      lua_pushboolean(L, 0);
      lua_setfield(L, -2, "__metatable");
    }
    lua_pop(L, 1);
  }
  static const char *const globals[] = {"set", "get", "result", "reset", "plot", NULL};
  for (const char *const *g = globals; *g; g++) {
    lua_getglobal(L, *g);
    lua_pushstring(L, *g);
    lua_pushboolean(L, 0);
    lua_pushcclosure(L, sb_tracked, 3);
    lua_setglobal(L, *g);
  }
}

/* A collection walks the whole heap in C: it costs one unit per 32 bytes the lesson holds
 * (a 16 MB heap takes about 10 ms). */
static int sb_charge_gc(lua_State *L) {
  sandbox *sb = sb_of(L);
  nsl_charge(L, (double)(sb->used + ns_mem_used(sb->acct)) / 32);
  return 0;
}

/* Text-only load, collectgarbage without the tuning options, and setmetatable without __gc:
 * Lua runs finalizers with hooks off, so one could loop beyond the budget. */
static const char sb_prelude[] =
    "local charge_gc = ...\n"
    "local load, error, collectgarbage = load, error, collectgarbage\n"
    "_G.load = function(chunk, name, mode, ...)\n"
    "  if mode ~= nil and mode ~= 't' then\n"
    "    error(\"load: lessons load text chunks only (mode 't')\", 2)\n"
    "  end\n"
    "  return load(chunk, name, 't', ...)\n"
    "end\n"
    "local setmetatable, rawget, type = setmetatable, rawget, type\n"
    "_G.setmetatable = function(t, mt)\n"
    "  if type(mt) == 'table' and rawget(mt, '__gc') ~= nil then\n"
    "    error('setmetatable: lessons cannot set __gc (finalizers run outside the ' ..\n"
    "          'instruction budget)', 2)\n"
    "  end\n"
    "  return setmetatable(t, mt)\n"
    "end\n"
    "_G.collectgarbage = function(opt, ...)\n"
    "  if opt == nil or opt == 'collect' or opt == 'count' or opt == 'step' then\n"
    "    if opt ~= 'count' then charge_gc() end\n"
    "    return collectgarbage(opt, ...)\n"
    "  end\n"
    "  error(\"collectgarbage: lessons may use 'collect', 'count' and 'step' only\", 2)\n"
    "end\n";

/* ns functions a lesson does not get: they read or write files. */
static const char *const ns_denied[] = {"load", "save", "tensors", NULL};
/* Base functions a lesson does not get. */
static const char *const base_denied[] = {"dofile", "loadfile", "require", NULL};

/* The account's reclaim: the collector frees the tensors the lesson dropped (their boxes
 * are small, so it may not have run for them), then their blocks. */
static void sb_reclaim(void *ud) {
  lesson *ls = ud;
  lua_gc(ls->L, LUA_GCCOLLECT);
  lua_gc(ls->L, LUA_GCCOLLECT);
}

/* When the Lua state closes the sandbox lets go of its account (the tensors charged to it
 * that outlive the state, the step snapshots, keep it until they go). */
static int sb_account_gc(lua_State *L) {
  sandbox *sb = sb_of(L);
  ns_mem_account_release(sb->acct);
  sb->acct = NULL;
  return 0;
}

FILE *lesson_sb_fopen(lua_State *L, const char *path) {
  char err[NS_ERRLEN];
  FILE *f = ns_file_fopen_regular(path, err);
  if (!f) luaL_error(L, "cannot open %s: %s", path, err);
  return f;
}

/* Protected body of the sandbox setup (argument 1: the lesson). */
int lesson_sb_open(lua_State *L) {
  lesson *ls = lua_touserdata(L, 1);
  sandbox *sb = &ls->sb;
  if (!sb->acct) { /* the memory account, let go by the finalizer of a registry userdata */
    lua_newuserdatauv(L, 1, 0);
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, sb_account_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, "normscope.lesson.account");
    if (!(sb->acct = ns_mem_account_new(sb->limit))) return luaL_error(L, "out of memory");
    ns_mem_account_set_owner(sb->acct, &sb->used, sb_reclaim, ls);
    ns_mem_account_use(sb->acct); /* lesson_sb_run puts the caller's back */
  }
  luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
  luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
  luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
  luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
  luaL_requiref(L, LUA_UTF8LIBNAME, luaopen_utf8, 1);
  lua_pop(L, 5);
  for (const char *const *d = base_denied; *d; d++) {
    lua_pushnil(L);
    lua_setglobal(L, *d);
  }
  lua_getglobal(L, "string"); /* string */
  lua_pushnil(L);
  lua_setfield(L, -2, "dump");
  nsl_bound_string(L, -1); /* find, match, gmatch, gsub and rep's loop charge the budget */
  lua_getfield(L, -1, "rep");
  lua_pushcclosure(L, sb_rep, 1); /* and rep refuses what the memory cap could not hold */
  lua_setfield(L, -2, "rep");
  lua_pop(L, 1);
  lua_getglobal(L, "table");
  nsl_bound_table(L, -1); /* move, insert, remove, concat, sort, unpack */
  lua_pop(L, 1);
  lua_getglobal(L, "utf8");
  nsl_bound_linear(L, -1); /* utf8.len and codepoint walk their string in C */
  lua_pop(L, 1);
  lua_pushcfunction(L, sb_pcall);
  lua_setglobal(L, "pcall");
  lua_pushcfunction(L, sb_xpcall);
  lua_setglobal(L, "xpcall");
  lua_pushlightuserdata(L, ls);
  lua_pushcclosure(L, sb_print, 1);
  lua_setglobal(L, "print");
  if (luaL_loadbufferx(L, sb_prelude, sizeof sb_prelude - 1, "=prelude", "t") != LUA_OK)
    return lua_error(L);
  lua_pushcfunction(L, sb_charge_gc);
  lua_call(L, 1, 0);

  nsl_files_deny(L); /* every path-taking function of the binding refuses from now on */
  /* but for the lesson's own data beside it (normscope record's large tensors) */
  char real[PATH_MAX];
  char *slash = ls->path && realpath(ls->path, real) ? strrchr(real, '/') : NULL;
  if (slash) {
    slash[slash == real] = 0; /* "/l.lua" is in "/" */
    nsl_files_dir(L, real);
  }
  luaL_requiref(L, "normscope", luaopen_normscope, 0); /* ns */
  for (const char *const *d = ns_denied; *d; d++) {
    lua_pushnil(L);
    lua_setfield(L, -2, *d);
  }
  lua_setglobal(L, "ns");

  /* explorer adapter: set/get/result/reset over ls->cur (no undo history in a lesson) */
  nsx_open_ex(L, &ls->cur, NULL, NULL, NULL, NSX_NO_FILES); /* no save/load: no files */
  lua_pushnil(L);
  lua_setglobal(L, "undo");
  lua_pushnil(L);
  lua_setglobal(L, "redo");

  wrap_all(L);

  lua_pushlightuserdata(L, ls);
  lua_pushcclosure(L, lesson_l_lesson, 1);
  lua_setglobal(L, "lesson");
  lua_pushlightuserdata(L, ls);
  lua_pushcclosure(L, lesson_l_claim, 1);
  lua_setglobal(L, "claim");
  return 0;
}

/* Runs fn(ud) in protected mode with a fresh instruction budget; nres results stay on the
 * stack on success. On failure err gets "FILE:LINE: message" (prefix, when not NULL, goes
 * before a message that has no position) and the stack is as before. */
int lesson_sb_run(lesson *ls, lua_CFunction fn, void *ud, int nres, const char *prefix, char *err) {
  lua_State *L = ls->L;
  sandbox *sb = &ls->sb;
  sb->mem_hit = 0;
  ns_mem_clear_refused(sb->acct);
  sb->out_bytes = 0;
  sb->out_cut = 0;
  sb->b.limit = sb->budget;
  sb->b.seconds = ls->opt.time_limit > 0 ? ls->opt.time_limit : LESSON_DEFAULT_SECONDS;
  sb->b.message = sb_budget_message;
  sb->b.ud = sb;
  snprintf(sb->where, sizeof sb->where, "%s", ls->name);
  int base = lua_gettop(L);
  lua_pushcfunction(L, sb_msgh);
  lua_pushcfunction(L, fn);
  lua_pushlightuserdata(L, ud);
  nsl_budget_enter(L, &sb->b);
  ns_mem_account *caller = ns_mem_account_use(sb->acct); /* the tensors the call makes */
  int status = lua_pcall(L, 1, nres, base + 1);
  ns_mem_account_use(caller);
  nsl_budget_leave(L, &sb->b);
  if (status == LUA_OK) {
    lua_remove(L, base + 1);
    return 0;
  }
  char msg[LESSON_ERRLEN];
  const char *em = lua_tostring(L, -1);
  if (ns_mem_refused(sb->acct) && !sb->b.spent) { /* a tensor refused: where the call was */
    int pl = em && has_position(em) ? (int)(strchr(strchr(em, ':') + 1, ':') - em) : -1;
    /* a charge that says what it needed ("computing the panels of N elements needs M MiB:
     * over the memory cap") keeps that */
    const char *what = pl >= 0 ? em + pl + 2 : em,
               *cap = what ? strstr(what, ": over the memory cap") : NULL;
    int wl = cap && strstr(what, " needs ") ? (int)(cap - what) : 0;
    snprintf(msg, sizeof msg,
             "%.*s: memory limit exceeded: %.*s%stensors hold %zu MiB and Lua %zu MiB (the "
             "lesson may use %zu MiB; NS_LESSON_MEM raises it)",
             pl >= 0 ? pl : (int)strlen(sb->where), pl >= 0 ? em : sb->where, wl, wl ? what : "",
             wl ? ", where " : "", ns_mem_used(sb->acct) >> 20, sb->used >> 20, sb->limit >> 20);
  } else if (sb->mem_hit && !sb->b.spent) /* a refused allocation, maybe re-raised */
    snprintf(msg, sizeof msg,
             "%s: memory limit exceeded (the lesson may use %zu MiB; NS_LESSON_MEM raises it)",
             sb->where, sb->limit >> 20);
  else {
    const char *m = lua_tostring(L, -1);
    if (!m) m = status == LUA_ERRMEM ? "not enough memory" : "error";
    if (prefix && !has_position(m))
      snprintf(msg, sizeof msg, "%s: %s", prefix, m);
    else
      snprintf(msg, sizeof msg, "%s", m);
  }
  size_t nl = strlen(ls->name);
  char full[LESSON_ERRLEN];
  if (strncmp(msg, ls->name, nl) == 0 && msg[nl] == ':' && ls->name != ls->path)
    snprintf(full, sizeof full, "%s%s", ls->path, msg + nl);
  else
    snprintf(full, sizeof full, "%s", msg);
  /* the message may quote the lesson's own strings: sanitized wherever it is shown */
  ns_text_sanitize(err, LESSON_ERRLEN, full, strlen(full), 0);
  lua_settop(L, base);
  return -1;
}
