/* lesson.c: the lesson engine (lesson.h): the claims registry, the sandbox, the lesson{}
 * format, the step snapshots and the calls into a lesson's functions.
 *
 * Every call into lesson code goes through sb_run: it resets the instruction count and runs
 * a C trampoline in protected mode with a message handler that adds FILE:LINE when the error
 * has none. The count hook ends runaway code; once the budget is spent (or the allocator has
 * refused memory) the sandbox's pcall/xpcall re-raise, so lesson code cannot catch its own
 * end and carry on. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "lua/lesson.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "core/dtype.h"
#include "lua/explore_lua.h"
#include "lua/nsl.h"
#include "lua/nsl_priv.h"

/* The count hook runs every HOOK_EVERY VM instructions (often enough that the position it
 * keeps for memory errors is the line that failed, in all but the shortest bombs). */
#define HOOK_EVERY 100

/* ------------------------------------------------------------------ registry */

static char *xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

void lesson_registry_free(lesson_registry *r) {
  if (!r) return;
  for (size_t i = 0; i < r->n; i++) {
    free(r->rows[i].id);
    free(r->rows[i].source);
    free(r->rows[i].setup);
    free(r->rows[i].kind);
  }
  free(r->rows);
  free(r);
}

/* A full number (surrounding blanks allowed) into *v; 0 or -1. */
static int parse_double(const char *s, double *v) {
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  if (end == s || errno == ERANGE) return -1;
  while (isspace((unsigned char)*end)) end++;
  return *end ? -1 : 0;
}

lesson_registry *lesson_registry_load(const char *path, char *err) {
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, LESSON_ERRLEN, "%s: %s", path, strerror(errno));
    return NULL;
  }
  lesson_registry *r = calloc(1, sizeof *r);
  size_t cap = 0, lineno = 0;
  char *line = NULL;
  size_t linecap = 0;
  ssize_t len;
  int bad = !r;
  if (bad) snprintf(err, LESSON_ERRLEN, "%s: out of memory", path);
  while (!bad && (len = getline(&line, &linecap, f)) >= 0) {
    lineno++;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
    if (len == 0 || line[0] == '#') continue;
    char *col[6];
    int n = 0;
    char *p = line;
    for (; n < 6 && p; n++) {
      col[n] = p;
      p = strchr(p, '\t');
      if (p) *p++ = '\0';
    }
    lesson_claim_row row = {0};
    if (n != 6 || p) {
      snprintf(err, LESSON_ERRLEN, "%s:%zu: expected 6 tab-separated columns", path, lineno);
      bad = 1;
    } else if (!col[0][0]) {
      snprintf(err, LESSON_ERRLEN, "%s:%zu: empty id", path, lineno);
      bad = 1;
    } else if (parse_double(col[3], &row.expected) || parse_double(col[4], &row.tol) ||
               !(row.tol >= 0)) {
      snprintf(err, LESSON_ERRLEN, "%s:%zu: %s: expected and tol must be numbers, tol >= 0", path,
               lineno, col[0]);
      bad = 1;
    } else if (lesson_registry_find(r, col[0])) {
      snprintf(err, LESSON_ERRLEN, "%s:%zu: duplicate id %s", path, lineno, col[0]);
      bad = 1;
    }
    if (bad) break;
    if (r->n == cap) {
      size_t nc = cap ? 2 * cap : 64;
      lesson_claim_row *nr = realloc(r->rows, nc * sizeof *nr);
      if (!nr) {
        snprintf(err, LESSON_ERRLEN, "%s: out of memory", path);
        bad = 1;
        break;
      }
      r->rows = nr;
      cap = nc;
    }
    row.id = xstrdup(col[0]);
    row.source = xstrdup(col[1]);
    row.setup = xstrdup(col[2]);
    row.kind = xstrdup(col[5]);
    r->rows[r->n++] = row;
    if (!row.id || !row.source || !row.setup || !row.kind) {
      snprintf(err, LESSON_ERRLEN, "%s: out of memory", path);
      bad = 1;
    }
  }
  if (!bad && ferror(f)) {
    snprintf(err, LESSON_ERRLEN, "%s: read error", path);
    bad = 1;
  }
  free(line);
  fclose(f);
  if (bad) {
    lesson_registry_free(r);
    return NULL;
  }
  return r;
}

const lesson_claim_row *lesson_registry_find(const lesson_registry *r, const char *id) {
  if (!r || !id) return NULL;
  for (size_t i = 0; i < r->n; i++)
    if (strcmp(r->rows[i].id, id) == 0) return &r->rows[i];
  return NULL;
}

int lesson_claim_ok(const lesson_claim_row *row, double value) {
  if (!row || isnan(value)) return 0;
  if (value == row->expected) return 1; /* also equal infinities */
  return fabs(value - row->expected) <= row->tol;
}

/* ------------------------------------------------------------------ options */

/* A size like 64M, 1G, 500000 (bytes); 0 on anything else. */
static size_t parse_size(const char *s) {
  if (!s || !*s) return 0;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || errno || !(v > 0)) return 0;
  double mul = 1;
  switch (toupper((unsigned char)*end)) {
  case 'K':
    mul = 1024.0, end++;
    break;
  case 'M':
    mul = 1024.0 * 1024, end++;
    break;
  case 'G':
    mul = 1024.0 * 1024 * 1024, end++;
    break;
  default:
    break;
  }
  if (toupper((unsigned char)*end) == 'B') end++;
  if (*end) return 0;
  v *= mul;
  return v >= 1e15 ? 0 : (size_t)v;
}

void lesson_options_init(lesson_options *o) {
  memset(o, 0, sizeof *o);
  o->mem_limit = parse_size(getenv("NS_LESSON_MEM"));
  const char *st = getenv("NS_LESSON_STEPS");
  if (st && *st) {
    char *end;
    errno = 0;
    long long v = strtoll(st, &end, 10);
    if (!errno && !*end && v > 0) o->step_limit = v;
  }
}

/* ------------------------------------------------------------------ the lesson */

typedef struct {
  char *text, *focus, *try_text;
  int has_claims, has_figure, has_check, has_show;
  ns_state state, show; /* snapshots; show only with has_show */
  const char **set_fields, **show_fields;
} step;

typedef struct {
  size_t used, limit;
  size_t cbytes; /* bytes of live tensors the lesson got from ns.* (C memory) */
  long long count, budget;
  int dead;                    /* the budget is spent: nothing may catch that */
  int mem_hit;                 /* the allocator refused memory during this call */
  char where[LUA_IDSIZE + 32]; /* last position the hook saw */
} sandbox;

struct lesson {
  lua_State *L;
  sandbox sb;
  lesson_options opt;
  char *path, *title, *source, *section;
  const char *name; /* base name of path: the chunk name */
  int nsteps;
  step *steps;
  ns_state cur; /* the sandbox explorer's state (set/get/result) */
  int cur_step; /* step whose claims run now (for on_claim) */
  int nfailed;  /* failed claims of the current call */
};

#define DEF_KEY "normscope.lesson.def"

/* Limits the Lua heap: refusing a growth makes Lua raise a memory error (after a GC). */
static void *sb_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  sandbox *sb = ud;
  size_t old = ptr ? osize : 0;
  if (nsize == 0) {
    free(ptr);
    sb->used -= old;
    return NULL;
  }
  if (nsize > old && nsize - old > sb->limit - sb->used) {
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

/* Counts instructions; remembers where the lesson is (for memory errors, which carry no
 * position); ends the call when the budget is spent. */
static void sb_hook(lua_State *L, lua_Debug *ar) {
  sandbox *sb = sb_of(L);
  if (lua_getinfo(L, "Sl", ar) && ar->currentline > 0)
    snprintf(sb->where, sizeof sb->where, "%s:%d", ar->short_src, ar->currentline);
  sb->count += HOOK_EVERY;
  if (sb->count > sb->budget) {
    sb->dead = 1;
    lua_pushfstring(L,
                    "%s: instruction budget exceeded (%I VM instructions per call; "
                    "NS_LESSON_STEPS raises it)",
                    sb->where, (lua_Integer)sb->budget);
    lua_error(L);
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
  for (int lv = 1; lua_getstack(L, lv, &ar); lv++) {
    if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
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
  if (sb->dead || (status == LUA_ERRMEM && sb->mem_hit)) return lua_error(L);
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

/* string.find, match, gmatch and gsub run in C, where the count hook never fires, and a
 * pattern with k quantifiers can backtrack about n^(k+1) times on a subject of n bytes.
 * Refuse the cases above MATCH_COST, with a position. */
#define MATCH_COST 1e9

static int sb_match(lua_State *L) {
  size_t n, lp;
  luaL_checklstring(L, 1, &n);
  const char *p = luaL_checklstring(L, 2, &lp);
  int q = 0;
  for (size_t i = 0; i < lp; i++) {
    if (p[i] == '%')
      i++; /* an escaped character */
    else if (p[i] == '*' || p[i] == '+' || p[i] == '-' || p[i] == '?')
      q++;
  }
  if (q > 0 && pow((double)n + 1, q + 1) > MATCH_COST)
    return luaL_error(L,
                      "string.%s: a pattern with %d repetition%s on %d bytes could run for "
                      "hours; lessons keep patterns simple or subjects short",
                      lua_tostring(L, lua_upvalueindex(2)), q, q == 1 ? "" : "s", (int)n);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

/* print: one line to the lesson's output. */
static int sb_print(lua_State *L) {
  lesson *ls = lua_touserdata(L, lua_upvalueindex(1));
  int n = lua_gettop(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 1; i <= n; i++) {
    size_t len;
    const char *s = luaL_tolstring(L, i, &len); /* +1 */
    if (i > 1) luaL_addchar(&b, '\t');
    luaL_addvalue(&b);
    (void)s;
  }
  luaL_pushresult(&b);
  const char *line = lua_tostring(L, -1);
  if (ls->opt.out)
    ls->opt.out(ls->opt.ud, line);
  else {
    fputs(line, stdout);
    fputc('\n', stdout);
  }
  return 0;
}

/* ---- tensors count against the memory cap ----
 * Tensor storage is C memory that the allocator never sees. Every C function the lesson
 * can reach from ns.*, from the module's metatables and from the explorer globals is
 * wrapped: each tensor it returns gets a tracker (a userdata holding the tensor's bytes)
 * in a weak-keyed table, so when the tensor is collected its tracker goes too and gives
 * the bytes back. When Lua heap plus live tensors pass the cap, a full collection runs;
 * if they still do, the call ends as a memory bomb. */
#define TRACK_MT "normscope.lesson.tracker"
#define LIVE_KEY "normscope.lesson.live"

static int tracker_gc(lua_State *L) {
  size_t *b = lua_touserdata(L, 1);
  sandbox *sb = sb_of(L);
  sb->cbytes -= *b <= sb->cbytes ? *b : sb->cbytes;
  *b = 0;
  return 0;
}

/* Tracks the tensor at idx, or the tensors in the table at idx down to depth levels. */
static void track_value(lua_State *L, int idx, int depth) {
  idx = lua_absindex(L, idx);
  ns_tensor *t = nsl_totensor(L, idx);
  if (t) {
    lua_getfield(L, LUA_REGISTRYINDEX, LIVE_KEY); /* live */
    lua_pushvalue(L, idx);
    if (lua_rawget(L, -2) == LUA_TNIL) { /* live nil */
      lua_pop(L, 1);
      size_t bytes = sizeof *t + t->n * ns_dtype_size(t->dtype);
      size_t *b = lua_newuserdatauv(L, sizeof *b, 0); /* live tracker */
      *b = bytes;
      luaL_setmetatable(L, TRACK_MT);
      lua_pushvalue(L, idx);
      lua_insert(L, -2); /* live tensor tracker */
      lua_rawset(L, -3); /* live */
      sb_of(L)->cbytes += bytes;
    } else
      lua_pop(L, 1);
    lua_pop(L, 1);
    return;
  }
  if (depth > 0 && lua_type(L, idx) == LUA_TTABLE) {
    lua_pushnil(L);
    while (lua_next(L, idx)) {
      track_value(L, -1, depth - 1);
      lua_pop(L, 1);
    }
  }
}

static int sb_tracked(lua_State *L) {
  int n = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  int st = lua_pcall(L, n, LUA_MULTRET, 0);
  sandbox *sb = sb_of(L);
  if (st != LUA_OK) {
    /* called from here the function has no name: argument errors say '?'; put it back */
    const char *m = lua_tostring(L, -1);
    const char *q = m && !sb->dead && !sb->mem_hit ? strstr(m, " to '?'") : NULL;
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
  int nr = lua_gettop(L);
  for (int i = 1; i <= nr; i++) track_value(L, i, 2);
  if (sb->used + sb->cbytes > sb->limit) {
    lua_gc(L, LUA_GCCOLLECT); /* dead tensors are freed; their trackers go in the next one */
    lua_gc(L, LUA_GCCOLLECT);
    if (sb->used + sb->cbytes > sb->limit) {
      sb->dead = 1;
      return luaL_error(L,
                        "memory limit exceeded: tensors hold %d MiB (the lesson may use %d MiB; "
                        "NS_LESSON_MEM raises it)",
                        (int)(sb->cbytes >> 20), (int)(sb->limit >> 20));
    }
  }
  return nr;
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
  luaL_newmetatable(L, TRACK_MT);
  lua_pushcfunction(L, tracker_gc);
  lua_setfield(L, -2, "__gc");
  lua_pop(L, 1);
  lua_newtable(L);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, LIVE_KEY);

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

/* Text-only load, collectgarbage without the tuning options, and setmetatable without __gc:
 * Lua runs finalizers with hooks off, so one could loop beyond the budget. */
static const char sb_prelude[] =
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
    "    return collectgarbage(opt, ...)\n"
    "  end\n"
    "  error(\"collectgarbage: lessons may use 'collect', 'count' and 'step' only\", 2)\n"
    "end\n";

static int l_lesson(lua_State *L);
static int l_claim(lua_State *L);

/* ns functions a lesson does not get: they read or write files. */
static const char *const ns_denied[] = {"load", "save", "tensors", NULL};
/* Base functions a lesson does not get. */
static const char *const base_denied[] = {"dofile", "loadfile", "require", NULL};

/* Protected body of the sandbox setup (argument 1: the lesson). */
static int sb_open(lua_State *L) {
  lesson *ls = lua_touserdata(L, 1);
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
  lua_getfield(L, -1, "rep");
  lua_pushcclosure(L, sb_rep, 1);
  lua_setfield(L, -2, "rep");
  static const char *const matchers[] = {"find", "match", "gmatch", "gsub", NULL};
  for (const char *const *m = matchers; *m; m++) {
    lua_getfield(L, -1, *m);
    lua_pushstring(L, *m);
    lua_pushcclosure(L, sb_match, 2);
    lua_setfield(L, -2, *m);
  }
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
  lua_call(L, 0, 0);

  nsl_files_deny(L); /* every path-taking function of the binding refuses from now on */
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
  lua_pushcclosure(L, l_lesson, 1);
  lua_setglobal(L, "lesson");
  lua_pushlightuserdata(L, ls);
  lua_pushcclosure(L, l_claim, 1);
  lua_setglobal(L, "claim");
  return 0;
}

/* Runs fn(ud) in protected mode with a fresh instruction budget; nres results stay on the
 * stack on success. On failure err gets "FILE:LINE: message" (prefix, when not NULL, goes
 * before a message that has no position) and the stack is as before. */
static int sb_run(lesson *ls, lua_CFunction fn, void *ud, int nres, const char *prefix, char *err) {
  lua_State *L = ls->L;
  sandbox *sb = &ls->sb;
  sb->count = 0;
  sb->dead = 0;
  sb->mem_hit = 0;
  snprintf(sb->where, sizeof sb->where, "%s", ls->name);
  int base = lua_gettop(L);
  lua_pushcfunction(L, sb_msgh);
  lua_pushcfunction(L, fn);
  lua_pushlightuserdata(L, ud);
  int status = lua_pcall(L, 1, nres, base + 1);
  if (status == LUA_OK) {
    lua_remove(L, base + 1);
    return 0;
  }
  char msg[LESSON_ERRLEN];
  if (sb->mem_hit && !sb->dead) /* a refused allocation, maybe re-raised by a wrapper */
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
  if (strncmp(msg, ls->name, nl) == 0 && msg[nl] == ':' && ls->name != ls->path)
    snprintf(err, LESSON_ERRLEN, "%s%s", ls->path, msg + nl);
  else
    snprintf(err, LESSON_ERRLEN, "%s", msg);
  lua_settop(L, base);
  return -1;
}

/* ------------------------------------------------------------------ lesson{} */

static const char *const lesson_fields[] = {"title", "source", "section", "steps", NULL};
static const char *const step_fields[] = {"text", "set", "focus", "figure", "claims", "try", NULL};
static const char *const try_fields[] = {"text", "check", "show", NULL};

static int in_list(const char *s, const char *const *list) {
  for (; *list; list++)
    if (strcmp(s, *list) == 0) return 1;
  return 0;
}

/* Pushes t[name] without metamethods. */
static int rawfield(lua_State *L, int t, const char *name) {
  t = lua_absindex(L, t);
  lua_pushstring(L, name);
  return lua_rawget(L, t);
}

/* Raises unless every key of the table at t is a string in list. */
static void check_keys(lua_State *L, int t, const char *const *list, const char *what) {
  t = lua_absindex(L, t);
  lua_pushnil(L);
  while (lua_next(L, t)) {
    if (lua_type(L, -2) != LUA_TSTRING || !in_list(lua_tostring(L, -2), list)) {
      luaL_Buffer b;
      luaL_buffinit(L, &b);
      for (const char *const *f = list; *f; f++) {
        if (f != list) luaL_addstring(&b, ", ");
        luaL_addstring(&b, *f);
      }
      luaL_pushresult(&b);
      if (lua_type(L, -3) == LUA_TSTRING)
        luaL_error(L, "lesson: %s: unknown field '%s' (%s)", what, lua_tostring(L, -3),
                   lua_tostring(L, -1));
      luaL_error(L, "lesson: %s: field names are strings (%s), got a %s key", what,
                 lua_tostring(L, -1), luaL_typename(L, -3));
    }
    lua_pop(L, 1);
  }
}

/* Raises unless t[name] is nil (and optional) or of type ty. */
static void check_type(lua_State *L, int t, const char *name, int ty, int required,
                       const char *what) {
  int got = rawfield(L, t, name);
  if (got == LUA_TNIL && !required) {
    lua_pop(L, 1);
    return;
  }
  if (got != ty)
    luaL_error(L, "lesson: %s%s%s must be a %s, got %s", what, *what ? "." : "", name,
               lua_typename(L, ty), luaL_typename(L, -1));
  lua_pop(L, 1);
}

/* lesson{...}: checks the shape of the definition and keeps it for the engine. */
static int l_lesson(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  if (lua_getfield(L, LUA_REGISTRYINDEX, DEF_KEY) != LUA_TNIL)
    return luaL_error(L, "lesson: a file defines one lesson; lesson{} was called twice");
  lua_pop(L, 1);
  check_keys(L, 1, lesson_fields, "lesson");
  check_type(L, 1, "title", LUA_TSTRING, 1, "");
  check_type(L, 1, "source", LUA_TSTRING, 1, "");
  check_type(L, 1, "section", LUA_TSTRING, 1, "");
  check_type(L, 1, "steps", LUA_TTABLE, 1, "");
  rawfield(L, 1, "steps"); /* 2: steps */
  lua_Integer n = (lua_Integer)lua_rawlen(L, 2);
  if (n < 1) return luaL_error(L, "lesson: steps must be a non-empty list of step tables");
  lua_pushnil(L);
  while (lua_next(L, 2)) { /* the list has no holes and no other keys */
    int isint = 0;
    lua_Integer k = lua_tointegerx(L, -2, &isint);
    if (lua_type(L, -2) != LUA_TNUMBER || !isint || k < 1 || k > n)
      return luaL_error(L, "lesson: steps must be a list (1..%I), got the key %s", n,
                        luaL_tolstring(L, -2, NULL));
    lua_pop(L, 1);
  }
  for (lua_Integer k = 1; k <= n; k++) {
    char what[32];
    snprintf(what, sizeof what, "step %lld", (long long)k);
    if (lua_rawgeti(L, 2, k) != LUA_TTABLE)
      return luaL_error(L, "lesson: %s must be a table, got %s", what, luaL_typename(L, -1));
    check_keys(L, -1, step_fields, what);
    check_type(L, -1, "text", LUA_TSTRING, 0, what);
    check_type(L, -1, "set", LUA_TTABLE, 0, what);
    check_type(L, -1, "focus", LUA_TSTRING, 0, what);
    check_type(L, -1, "figure", LUA_TFUNCTION, 0, what);
    check_type(L, -1, "claims", LUA_TFUNCTION, 0, what);
    check_type(L, -1, "try", LUA_TTABLE, 0, what);
    if (rawfield(L, -1, "try") == LUA_TTABLE) {
      snprintf(what, sizeof what, "step %lld: try", (long long)k);
      check_keys(L, -1, try_fields, what);
      check_type(L, -1, "text", LUA_TSTRING, 0, what);
      check_type(L, -1, "check", LUA_TFUNCTION, 0, what);
      check_type(L, -1, "show", LUA_TTABLE, 0, what);
    }
    lua_pop(L, 2);
  }
  lua_pushvalue(L, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, DEF_KEY);
  return 0;
}

/* claim(id, value) -> verified */
static int l_claim(lua_State *L) {
  lesson *ls = lua_touserdata(L, lua_upvalueindex(1));
  const char *id = luaL_checkstring(L, 1);
  if (lua_type(L, 2) != LUA_TNUMBER)
    return luaL_error(L, "claim: the value of %s must be a number, got %s", id,
                      luaL_typename(L, 2));
  double v = lua_tonumber(L, 2);
  const lesson_claim_row *row = lesson_registry_find(ls->opt.registry, id);
  if (!row && !ls->opt.check_mode)
    return luaL_error(L, "claim: unknown id '%s' (not in claims.tsv)", id);
  lesson_claim c = {id, row, v, row ? lesson_claim_ok(row, v) : 0, ls->cur_step};
  if (!c.verified) ls->nfailed++;
  if (ls->opt.on_claim)
    ls->opt.on_claim(ls->opt.ud, &c);
  else { /* nobody collects verdicts: say it where print() goes */
    char line[LESSON_ERRLEN];
    snprintf(line, sizeof line, "claim %s = %.17g: %s", id, v,
             c.verified ? "verified"
             : row      ? "FAILED"
                        : "unknown id");
    if (ls->opt.out)
      ls->opt.out(ls->opt.ud, line);
    else
      printf("%s\n", line);
  }
  lua_pushboolean(L, c.verified);
  return 1;
}

/* ------------------------------------------------------------------ loading */

/* The lesson file's text; chunk names are the file's base name (Lua shortens long names),
 * and sb_run puts the path back in messages. */
static int load_raw(lua_State *L) {
  lesson *ls = lua_touserdata(L, 1);
  FILE *f = fopen(ls->path, "rb");
  if (!f) return luaL_error(L, "cannot open %s: %s", ls->path, strerror(errno));
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  char chunk[4096];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) luaL_addlstring(&b, chunk, got);
  int bad = ferror(f);
  fclose(f);
  if (bad) return luaL_error(L, "cannot read %s", ls->path);
  luaL_pushresult(&b); /* text */
  size_t len;
  const char *text = lua_tolstring(L, -1, &len);
  lua_pushfstring(L, "@%s", ls->name); /* text name */
  if (luaL_loadbufferx(L, text, len, lua_tostring(L, -1), "t") != LUA_OK) return lua_error(L);
  lua_call(L, 0, 0);
  return 0;
}

/* Copies the definition's strings and flags into ls (the shape was checked by lesson{}). */
static int read_def_raw(lua_State *L) {
  lesson *ls = lua_touserdata(L, 1);
  if (lua_getfield(L, LUA_REGISTRYINDEX, DEF_KEY) != LUA_TTABLE)
    return luaL_error(L, "the file does not call lesson{...}");
  int d = lua_gettop(L);
  const char *names[] = {"title", "source", "section"};
  char **dst[] = {&ls->title, &ls->source, &ls->section};
  for (int i = 0; i < 3; i++) {
    rawfield(L, d, names[i]);
    *dst[i] = xstrdup(lua_tostring(L, -1));
    lua_pop(L, 1);
    if (!*dst[i]) return luaL_error(L, "out of memory");
  }
  rawfield(L, d, "steps");
  int n = (int)lua_rawlen(L, -1);
  ls->steps = calloc((size_t)n, sizeof *ls->steps);
  if (!ls->steps) return luaL_error(L, "out of memory");
  ls->nsteps = n;
  for (int k = 1; k <= n; k++) {
    step *s = &ls->steps[k - 1];
    lua_rawgeti(L, -1, k); /* step */
    rawfield(L, -1, "text");
    s->text = xstrdup(lua_isstring(L, -1) ? lua_tostring(L, -1) : "");
    lua_pop(L, 1);
    if (rawfield(L, -1, "focus") == LUA_TSTRING) s->focus = xstrdup(lua_tostring(L, -1));
    lua_pop(L, 1);
    s->has_claims = rawfield(L, -1, "claims") == LUA_TFUNCTION;
    s->has_figure = rawfield(L, -2, "figure") == LUA_TFUNCTION;
    lua_pop(L, 2);
    if (rawfield(L, -1, "try") == LUA_TTABLE) {
      if (rawfield(L, -1, "text") == LUA_TSTRING) s->try_text = xstrdup(lua_tostring(L, -1));
      s->has_check = rawfield(L, -2, "check") == LUA_TFUNCTION;
      s->has_show = rawfield(L, -3, "show") == LUA_TTABLE;
      lua_pop(L, 3);
    }
    lua_pop(L, 2); /* try, step */
    if (!s->text) return luaL_error(L, "out of memory");
  }
  return 0;
}

/* ---- explorer adapter: applying a step's tables to a state (nsx_settable) ---- */

typedef struct {
  lesson *ls;
  int k;
  const char *what; /* "set" or "show" */
  ns_state *s;      /* changed in place */
} apply_spec;

/* Pushes step k's table (or its try table) of the definition. */
static void push_step(lua_State *L, int k) {
  lua_getfield(L, LUA_REGISTRYINDEX, DEF_KEY);
  rawfield(L, -1, "steps");
  lua_rawgeti(L, -1, k);
  lua_replace(L, -3);
  lua_pop(L, 1);
}

static int apply_raw(lua_State *L) {
  apply_spec *a = lua_touserdata(L, 1);
  push_step(L, a->k);
  if (strcmp(a->what, "show") == 0) {
    rawfield(L, -1, "try");
    rawfield(L, -1, "show");
    nsx_settable(L, -1, a->s, NULL);
    return 0;
  }
  if (rawfield(L, -1, "set") == LUA_TTABLE) nsx_settable(L, -1, a->s, NULL);
  lua_pop(L, 1);
  if (rawfield(L, -1, "focus") == LUA_TSTRING) { /* a panel of the screen, which keeps it */
    const char *const *panels = a->ls->opt.panels;
    const char *f = lua_tostring(L, -1);
    if (panels && ns_choice_parse(panels, f) < 0) {
      char list[160];
      luaL_error(L, "focus: unknown panel '%s' (%s)", f, ns_choice_list(panels, list, sizeof list));
    }
  }
  return 0;
}

/* The names of the explorer fields the table gives, in field-table order. */
static int fields_raw(lua_State *L) {
  apply_spec *a = lua_touserdata(L, 1);
  push_step(L, a->k);
  if (strcmp(a->what, "show") == 0) {
    rawfield(L, -1, "try");
    lua_replace(L, -2);
  }
  rawfield(L, -1, a->what);
  const char **list = calloc(NS_F_COUNT + 1, sizeof *list);
  if (!list) return luaL_error(L, "out of memory");
  int n = 0;
  if (lua_type(L, -1) == LUA_TTABLE)
    for (int f = 0; f < NS_F_COUNT; f++) {
      int ty = rawfield(L, -1, ns_field_name((ns_field)f));
      lua_pop(L, 1);
      if (ty != LUA_TNIL) list[n++] = ns_field_name((ns_field)f);
    }
  if (strcmp(a->what, "show") == 0)
    a->ls->steps[a->k - 1].show_fields = list;
  else
    a->ls->steps[a->k - 1].set_fields = list;
  return 0;
}

/* Unknown keys of step k's set (or show) table, for --check: each one reported. */
typedef struct {
  lesson *ls;
  int k;
  const char *what;
  void (*report)(void *ud, int step, const char *msg);
  void *ud;
} keys_spec;

static int unknown_keys_raw(lua_State *L) {
  keys_spec *a = lua_touserdata(L, 1);
  push_step(L, a->k);
  if (strcmp(a->what, "show") == 0) {
    rawfield(L, -1, "try");
    lua_replace(L, -2);
  }
  int n = 0;
  if (rawfield(L, -1, a->what) == LUA_TTABLE) {
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      lua_pop(L, 1);
      if (lua_type(L, -1) != LUA_TSTRING || ns_field_parse(lua_tostring(L, -1)) < 0) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s: unknown state field '%s'",
                 strcmp(a->what, "show") == 0 ? "try.show" : "set",
                 lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "(not a string)");
        a->report(a->ud, a->k, msg);
        n++;
      }
    }
  }
  lua_pushinteger(L, n);
  return 1;
}

/* Counts and reports the unknown fields of step k's table; -1 on a Lua error. */
static int unknown_fields(lesson *ls, int k, const char *what,
                          void (*report)(void *, int, const char *), void *ud, char *err) {
  keys_spec a = {ls, k, what, report, ud};
  if (sb_run(ls, unknown_keys_raw, &a, 1, ls->path, err) != 0) return -1;
  int n = (int)lua_tointeger(ls->L, -1);
  lua_pop(ls->L, 1);
  return n;
}

/* Applies step k's set/focus (or show) to s; err "FILE: step k: ..." on failure. */
static int apply_step(lesson *ls, int k, const char *what, ns_state *s, char *err) {
  apply_spec a = {ls, k, what, s};
  char prefix[LESSON_ERRLEN];
  snprintf(prefix, sizeof prefix, "%s: step %d%s", ls->path, k,
           strcmp(what, "show") == 0 ? ": try.show" : "");
  return sb_run(ls, apply_raw, &a, 0, prefix, err);
}

static int copy_state(ns_state *dst, const ns_state *src, char *err) {
  char e[NS_ERRLEN];
  if (ns_state_copy(dst, src, e) != 0) {
    snprintf(err, LESSON_ERRLEN, "%s", e);
    return -1;
  }
  return 0;
}

void lesson_free(lesson *ls) {
  if (!ls) return;
  if (ls->L) lua_close(ls->L);
  for (int k = 0; k < ls->nsteps; k++) {
    step *s = &ls->steps[k];
    free(s->text);
    free(s->focus);
    free(s->try_text);
    ns_state_free(&s->state);
    ns_state_free(&s->show);
    free(s->set_fields);
    free(s->show_fields);
  }
  free(ls->steps);
  ns_state_free(&ls->cur);
  free(ls->path);
  free(ls->title);
  free(ls->source);
  free(ls->section);
  free(ls);
}

/* In check mode (o->check_mode with a problem reporter), step errors are reported and the
 * load goes on; see lesson_load_checked. */
static lesson *load(const char *path, const lesson_options *o,
                    void (*problem)(void *, int, const char *), void *pud, char *err) {
  lesson *ls = calloc(1, sizeof *ls);
  if (!ls || !(ls->path = xstrdup(path))) {
    free(ls);
    snprintf(err, LESSON_ERRLEN, "%s: out of memory", path);
    return NULL;
  }
  ls->opt = *o;
  const char *slash = strrchr(ls->path, '/');
  ls->name = slash ? slash + 1 : ls->path;
  ls->sb.limit = o->mem_limit ? o->mem_limit : LESSON_DEFAULT_MEM;
  ls->sb.budget = o->step_limit > 0 ? o->step_limit : LESSON_DEFAULT_STEPS;
  char e[NS_ERRLEN];
  if (ns_state_init(&ls->cur, e) != 0) {
    snprintf(err, LESSON_ERRLEN, "%s: %s", path, e);
    lesson_free(ls);
    return NULL;
  }
  ls->L = lua_newstate(sb_alloc, &ls->sb);
  if (!ls->L) {
    snprintf(err, LESSON_ERRLEN, "%s: cannot create a Lua state (memory limit too low?)", path);
    lesson_free(ls);
    return NULL;
  }
  lua_sethook(ls->L, sb_hook, LUA_MASKCOUNT, HOOK_EVERY);
  if (sb_run(ls, sb_open, ls, 0, path, err) != 0 || sb_run(ls, load_raw, ls, 0, path, err) != 0 ||
      sb_run(ls, read_def_raw, ls, 0, path, err) != 0) {
    lesson_free(ls);
    return NULL;
  }
  /* the snapshots: each step from the previous one */
  ns_state prev;
  if (ns_state_init(&prev, e) != 0) {
    snprintf(err, LESSON_ERRLEN, "%s: %s", path, e);
    lesson_free(ls);
    return NULL;
  }
  int bad = 0;
  for (int k = 1; k <= ls->nsteps && !bad; k++) {
    step *s = &ls->steps[k - 1];
    char perr[LESSON_ERRLEN];
    if (copy_state(&s->state, &prev, err) != 0) {
      bad = 1;
      break;
    }
    int unknown = 0;
    if (problem) {
      unknown = unknown_fields(ls, k, "set", problem, pud, err);
      if (unknown < 0) {
        bad = 1;
        break;
      }
    }
    if (!unknown && apply_step(ls, k, "set", &s->state, perr) != 0) {
      if (!problem) {
        snprintf(err, LESSON_ERRLEN, "%s", perr);
        bad = 1;
        break;
      }
      problem(pud, k, perr);
    }
    apply_spec a = {ls, k, "set", NULL};
    if (sb_run(ls, fields_raw, &a, 0, path, err) != 0) {
      bad = 1;
      break;
    }
    if (s->has_show) {
      if (copy_state(&s->show, &s->state, err) != 0) {
        bad = 1;
        break;
      }
      int unk = problem ? unknown_fields(ls, k, "show", problem, pud, err) : 0;
      if (unk < 0) {
        bad = 1;
        break;
      }
      if (!unk && apply_step(ls, k, "show", &s->show, perr) != 0) {
        if (!problem) {
          snprintf(err, LESSON_ERRLEN, "%s", perr);
          bad = 1;
          break;
        }
        problem(pud, k, perr);
      }
      apply_spec b = {ls, k, "show", NULL};
      if (sb_run(ls, fields_raw, &b, 0, path, err) != 0) {
        bad = 1;
        break;
      }
    }
    ns_state_free(&prev);
    if (copy_state(&prev, &s->state, err) != 0) {
      memset(&prev, 0, sizeof prev);
      bad = 1;
    }
  }
  ns_state_free(&prev);
  if (bad) {
    lesson_free(ls);
    return NULL;
  }
  return ls;
}

lesson *lesson_load(const char *path, const lesson_options *o, char *err) {
  return load(path, o, NULL, NULL, err);
}

lesson *lesson_load_checked(const char *path, const lesson_options *o,
                            void (*problem)(void *, int, const char *), void *ud, char *err) {
  return load(path, o, problem, ud, err);
}

/* ------------------------------------------------------------------ accessors */

const char *lesson_path(const lesson *ls) {
  return ls->path;
}
const char *lesson_title(const lesson *ls) {
  return ls->title;
}
const char *lesson_source(const lesson *ls) {
  return ls->source;
}
const char *lesson_section(const lesson *ls) {
  return ls->section;
}
int lesson_nsteps(const lesson *ls) {
  return ls->nsteps;
}

static const step *step_of(const lesson *ls, int k) {
  return ls && k >= 1 && k <= ls->nsteps ? &ls->steps[k - 1] : NULL;
}

const char *lesson_step_text(const lesson *ls, int k) {
  const step *s = step_of(ls, k);
  return s ? s->text : NULL;
}
const char *lesson_step_focus(const lesson *ls, int k) {
  const step *s = step_of(ls, k);
  return s ? s->focus : NULL;
}
const char *lesson_step_try_text(const lesson *ls, int k) {
  const step *s = step_of(ls, k);
  return s ? s->try_text : NULL;
}
int lesson_step_has_claims(const lesson *ls, int k) {
  const step *s = step_of(ls, k);
  return s && s->has_claims;
}
int lesson_step_has_figure(const lesson *ls, int k) {
  const step *s = step_of(ls, k);
  return s && s->has_figure;
}
int lesson_step_has_check(const lesson *ls, int k) {
  const step *s = step_of(ls, k);
  return s && s->has_check;
}
const ns_state *lesson_step_state(const lesson *ls, int k) {
  const step *s = step_of(ls, k);
  return s ? &s->state : NULL;
}
const ns_state *lesson_step_show_state(const lesson *ls, int k) {
  const step *s = step_of(ls, k);
  return s && s->has_show ? &s->show : NULL;
}
const char *const *lesson_step_fields(const lesson *ls, int k, const char *what) {
  const step *s = step_of(ls, k);
  if (!s || !what) return NULL;
  return (const char *const *)(strcmp(what, "show") == 0 ? s->show_fields : s->set_fields);
}

static int apply_state(const ns_state *src, ns_state *s, ns_history *h, char *err) {
  ns_state_patch p;
  ns_patch_from_state(&p, src);
  char e[NS_ERRLEN];
  if (ns_history_apply(h, s, &p, e) != 0) {
    snprintf(err, LESSON_ERRLEN, "%s", e);
    return -1;
  }
  return 0;
}

int lesson_apply(const lesson *ls, int k, ns_state *s, ns_history *h, char *err) {
  const step *st = step_of(ls, k);
  if (!st || !s) {
    snprintf(err, LESSON_ERRLEN, "lesson_apply: no step %d", k);
    return -1;
  }
  return apply_state(&st->state, s, h, err);
}

int lesson_apply_show(const lesson *ls, int k, ns_state *s, ns_history *h, char *err) {
  const step *st = step_of(ls, k);
  if (!st || !st->has_show || !s) {
    snprintf(err, LESSON_ERRLEN, "lesson_apply_show: step %d has no try.show", k);
    return -1;
  }
  return apply_state(&st->show, s, h, err);
}

/* ------------------------------------------------------------------ calls */

typedef struct {
  lesson *ls;
  int k;
  const char *field; /* "claims", "figure" or "check" (in try) */
} call_spec;

/* Calls step k's function with the state table (get()) of ls->cur; leaves one result. */
static int call_raw(lua_State *L) {
  call_spec *c = lua_touserdata(L, 1);
  push_step(L, c->k);
  if (strcmp(c->field, "check") == 0) {
    rawfield(L, -1, "try");
    lua_replace(L, -2);
  }
  rawfield(L, -1, c->field);
  nsx_pushstate(L, &c->ls->cur); /* adapter: the state as get() returns it */
  lua_call(L, 1, 1);
  return 1;
}

/* Makes the sandbox explorer's state a copy of s. */
static int enter(lesson *ls, const ns_state *s, char *err) {
  ns_state c;
  if (copy_state(&c, s, err) != 0) return -1;
  ns_state_free(&ls->cur);
  ls->cur = c;
  return 0;
}

static int call_step(lesson *ls, int k, const char *field, const ns_state *s, char *err) {
  if (enter(ls, s, err) != 0) return -1;
  call_spec c = {ls, k, field};
  char prefix[LESSON_ERRLEN];
  snprintf(prefix, sizeof prefix, "%s: step %d: %s", ls->path, k, field);
  ls->cur_step = k;
  return sb_run(ls, call_raw, &c, 1, prefix, err);
}

int lesson_claims(lesson *ls, int k, char *err) {
  const step *st = step_of(ls, k);
  if (!st) {
    snprintf(err, LESSON_ERRLEN, "lesson_claims: no step %d", k);
    return -1;
  }
  if (!st->has_claims) return 0;
  ls->nfailed = 0;
  if (call_step(ls, k, "claims", &st->state, err) != 0) return -1;
  lua_pop(ls->L, 1);
  return ls->nfailed;
}

static int has_plot_raw(lua_State *L) {
  lua_getglobal(L, "ns");
  lua_pushboolean(L, lua_type(L, -1) == LUA_TTABLE && rawfield(L, -1, "plot") != LUA_TNIL);
  return 1;
}

int lesson_figure(lesson *ls, int k, const ns_state *s, char **text, char *err) {
  *text = NULL;
  const step *st = step_of(ls, k);
  if (!st) {
    snprintf(err, LESSON_ERRLEN, "lesson_figure: no step %d", k);
    return -1;
  }
  if (!st->has_figure) return 0;
  if (sb_run(ls, has_plot_raw, ls, 1, ls->path, err) != 0) return -1;
  int has = lua_toboolean(ls->L, -1);
  lua_pop(ls->L, 1);
  if (!has) return 0;
  if (call_step(ls, k, "figure", s ? s : &st->state, err) != 0) return -1;
  int ok = lua_type(ls->L, -1) == LUA_TSTRING;
  if (ok)
    *text = xstrdup(lua_tostring(ls->L, -1));
  else
    snprintf(err, LESSON_ERRLEN, "%s: step %d: figure must return a string, got %s", ls->path, k,
             luaL_typename(ls->L, -1));
  lua_pop(ls->L, 1);
  if (ok && !*text) snprintf(err, LESSON_ERRLEN, "out of memory");
  return ok && *text ? 0 : -1;
}

int lesson_check_try(lesson *ls, int k, const ns_state *s, char *hint, size_t hintlen, char *err) {
  const step *st = step_of(ls, k);
  if (hint && hintlen) hint[0] = '\0';
  if (!st) {
    snprintf(err, LESSON_ERRLEN, "lesson_check_try: no step %d", k);
    return -1;
  }
  if (!st->has_check) {
    if (hint && hintlen) snprintf(hint, hintlen, "this step has nothing to check");
    return 0;
  }
  if (call_step(ls, k, "check", s ? s : &st->state, err) != 0) return -1;
  lua_State *L = ls->L;
  int r = -1;
  if (lua_type(L, -1) == LUA_TBOOLEAN && lua_toboolean(L, -1))
    r = 1;
  else if (lua_type(L, -1) == LUA_TSTRING || lua_isnoneornil(L, -1) ||
           lua_type(L, -1) == LUA_TBOOLEAN) {
    r = 0;
    if (hint && hintlen)
      snprintf(hint, hintlen, "%s",
               lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "not yet");
  } else
    snprintf(err, LESSON_ERRLEN, "%s: step %d: try.check must return true or a hint, got %s",
             ls->path, k, luaL_typename(L, -1));
  lua_pop(L, 1);
  return r;
}

/* ------------------------------------------------------------------ finding lessons */

static int is_lesson_name(const char *n) {
  size_t len = strlen(n);
  return len > 8 && isdigit((unsigned char)n[0]) && isdigit((unsigned char)n[1]) &&
         isdigit((unsigned char)n[2]) && n[3] == '-' && strcmp(n + len - 4, ".lua") == 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int lesson_list_dir(const char *dir, char ***paths, char *err) {
  *paths = NULL;
  DIR *d = opendir(dir);
  if (!d) {
    snprintf(err, LESSON_ERRLEN, "%s: %s", dir, strerror(errno));
    return -1;
  }
  char **list = NULL;
  int n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!is_lesson_name(e->d_name)) continue;
    if (n == cap) {
      int nc = cap ? 2 * cap : 16;
      char **nl = realloc(list, (size_t)nc * sizeof *nl);
      if (!nl) break;
      list = nl;
      cap = nc;
    }
    size_t len = strlen(dir) + strlen(e->d_name) + 2;
    if (!(list[n] = malloc(len))) break;
    snprintf(list[n], len, "%s/%s", dir, e->d_name);
    n++;
  }
  closedir(d);
  if (e) { /* stopped early: out of memory */
    lesson_free_list(list, n);
    snprintf(err, LESSON_ERRLEN, "%s: out of memory", dir);
    return -1;
  }
  if (n > 1) qsort(list, (size_t)n, sizeof *list, cmp_str);
  *paths = list;
  return n;
}

void lesson_free_list(char **paths, int n) {
  for (int i = 0; i < n; i++) free(paths[i]);
  free(paths);
}
