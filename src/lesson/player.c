/* player.c: the lesson engine's reader and player (lesson.h): the lesson{} format, the step
 * snapshots, the explorer adapter, the accessors and the calls into a lesson's functions.
 * The sandbox they run in is sandbox.c; the claims registry is claims.c. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "lesson/lesson_priv.h"

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
int lesson_l_lesson(lua_State *L) {
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
int lesson_l_claim(lua_State *L) {
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
 * and lesson_sb_run puts the path back in messages. */
static int load_raw(lua_State *L) {
  lesson *ls = lua_touserdata(L, 1);
  FILE *f = lesson_sb_fopen(L, ls->path); /* a regular file only (raises) */
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
    *dst[i] = lesson_xstrdup(lua_tostring(L, -1));
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
    s->text = lesson_xstrdup(lua_isstring(L, -1) ? lua_tostring(L, -1) : "");
    lua_pop(L, 1);
    if (rawfield(L, -1, "focus") == LUA_TSTRING) s->focus = lesson_xstrdup(lua_tostring(L, -1));
    lua_pop(L, 1);
    s->has_claims = rawfield(L, -1, "claims") == LUA_TFUNCTION;
    s->has_figure = rawfield(L, -2, "figure") == LUA_TFUNCTION;
    lua_pop(L, 2);
    if (rawfield(L, -1, "try") == LUA_TTABLE) {
      if (rawfield(L, -1, "text") == LUA_TSTRING) s->try_text = lesson_xstrdup(lua_tostring(L, -1));
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
  if (lesson_sb_run(ls, unknown_keys_raw, &a, 1, ls->path, err) != 0) return -1;
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
  return lesson_sb_run(ls, apply_raw, &a, 0, prefix, err);
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
  if (!ls || !(ls->path = lesson_xstrdup(path))) {
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
  ls->L = lua_newstate(lesson_sb_alloc, &ls->sb);
  if (!ls->L) {
    snprintf(err, LESSON_ERRLEN, "%s: cannot create a Lua state (memory limit too low?)", path);
    lesson_free(ls);
    return NULL;
  }
  lua_sethook(ls->L, lesson_sb_hook, LUA_MASKCOUNT, HOOK_EVERY);
  if (lesson_sb_run(ls, lesson_sb_open, ls, 0, path, err) != 0 || lesson_sb_run(ls, load_raw, ls, 0, path, err) != 0 ||
      lesson_sb_run(ls, read_def_raw, ls, 0, path, err) != 0) {
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
    if (lesson_sb_run(ls, fields_raw, &a, 0, path, err) != 0) {
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
      if (lesson_sb_run(ls, fields_raw, &b, 0, path, err) != 0) {
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
  return lesson_sb_run(ls, call_raw, &c, 1, prefix, err);
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
  if (lesson_sb_run(ls, has_plot_raw, ls, 1, ls->path, err) != 0) return -1;
  int has = lua_toboolean(ls->L, -1);
  lua_pop(ls->L, 1);
  if (!has) return 0;
  if (call_step(ls, k, "figure", s ? s : &st->state, err) != 0) return -1;
  int ok = lua_type(ls->L, -1) == LUA_TSTRING;
  if (ok)
    *text = lesson_xstrdup(lua_tostring(ls->L, -1));
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
