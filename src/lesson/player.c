/* player.c: the lesson engine's reader and player (lesson.h): the lesson{} format, the step
 * snapshots, the explorer adapter, the accessors and the calls into a lesson's functions.
 * The sandbox they run in is sandbox.c; the claims registry is claims.c. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "lesson/lesson_priv.h"
#include "lesson/schema.h"

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

/* The names of scope sc's attributes (schema.h), NULL-terminated, into list. */
static const char *const *scope_names(lesson_scope sc, const char **list) {
  int n = 0;
  for (int a = 0; a < LESSON_A_COUNT; a++)
    if (lesson_schema[a].scope == sc) list[n++] = lesson_schema[a].name;
  list[n] = NULL;
  return list;
}

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

/* Raises unless the table at t has only scope sc's attributes, each of one of its types,
 * and every required one. what names the table in messages ("step 3: try"). */
static void check_scope(lua_State *L, int t, lesson_scope sc, const char *what) {
  const char *names[LESSON_A_COUNT + 1];
  check_keys(L, t, scope_names(sc, names), what);
  for (int a = 0; a < LESSON_A_COUNT; a++) {
    const lesson_attr_row *r = &lesson_schema[a];
    if (r->scope != sc) continue;
    int got = rawfield(L, t, r->name);
    if (!(got == LUA_TNIL && !r->required) && !(got != LUA_TNIL && (r->types & (1u << got)))) {
      char ty[64];
      luaL_error(L, "lesson: %s%s%s must be a %s, got %s", what, *what ? "." : "", r->name,
                 lesson_types_text(r->types, ty, sizeof ty), luaL_typename(L, -1));
    }
    lua_pop(L, 1);
  }
}

/* Raises unless t[name], when present, is a non-empty list of strings (or, with fns, of
 * strings and functions). */
static void check_list(lua_State *L, int t, const char *name, const char *what, int fns) {
  if (rawfield(L, t, name) == LUA_TTABLE) {
    lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
    int count = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      count++;
      int isint = 0;
      lua_Integer k = lua_tointegerx(L, -2, &isint);
      int ok = lua_type(L, -1) == LUA_TSTRING || (fns && lua_type(L, -1) == LUA_TFUNCTION);
      if (lua_type(L, -2) != LUA_TNUMBER || !isint || k < 1 || k > n || !ok)
        luaL_error(L, "lesson: %s.%s must be a list of strings%s", what, name,
                   fns ? " (or functions(s) that return one)" : "");
      lua_pop(L, 1);
    }
    if (count == 0) luaL_error(L, "lesson: %s.%s must not be empty", what, name);
  }
  lua_pop(L, 1);
}

/* The checks of one step beyond the types: the values a focus and a view take, an answer's
 * source, a prediction's kind. */
static void check_step(lua_State *L, int st, const char *what) {
  char sub[64];
  if (rawfield(L, st, "view") == LUA_TSTRING && !in_list(lua_tostring(L, -1), lesson_view_names))
    luaL_error(L, "lesson: %s.view: unknown view '%s' (pane, figure)", what, lua_tostring(L, -1));
  lua_pop(L, 1);
  if (rawfield(L, st, "try") == LUA_TTABLE) {
    snprintf(sub, sizeof sub, "%s: try", what);
    check_scope(L, -1, LESSON_S_TRY, sub);
    check_list(L, -1, "hints", sub, 1);
    if (rawfield(L, -1, "answer") == LUA_TTABLE) {
      snprintf(sub, sizeof sub, "%s: try.answer", what);
      check_scope(L, -1, LESSON_S_ANSWER, sub);
      int v = rawfield(L, -1, "value") != LUA_TNIL, c = rawfield(L, -2, "claim") != LUA_TNIL;
      lua_pop(L, 2);
      if (v == c) luaL_error(L, "lesson: %s: give value (a function) or claim (an id), one", sub);
      if (rawfield(L, -1, "tol") == LUA_TNUMBER && !(lua_tonumber(L, -1) >= 0))
        luaL_error(L, "lesson: %s.tol must be >= 0", sub);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  if (rawfield(L, st, "predict") == LUA_TTABLE) {
    snprintf(sub, sizeof sub, "%s: predict", what);
    check_scope(L, -1, LESSON_S_PREDICT, sub);
    check_list(L, -1, "choices", sub, 0);
    int ch = rawfield(L, -1, "choices") != LUA_TNIL, an = rawfield(L, -2, "answer") != LUA_TNIL,
        va = rawfield(L, -3, "value") != LUA_TNIL;
    lua_pop(L, 3);
    if (ch && (!an || va))
      luaL_error(L, "lesson: %s: with choices, answer says which is true (and no value)", sub);
    if (!ch && (!va || an))
      luaL_error(L, "lesson: %s: without choices, value gives the true number (and no answer)",
                 sub);
    lua_pop(L, 1);
  } else
    lua_pop(L, 1);
}

/* lesson{...}: checks the shape of the definition and keeps it for the engine. */
int lesson_l_lesson(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  if (lua_getfield(L, LUA_REGISTRYINDEX, DEF_KEY) != LUA_TNIL)
    return luaL_error(L, "lesson: a file defines one lesson; lesson{} was called twice");
  lua_pop(L, 1);
  check_scope(L, 1, LESSON_S_LESSON, "lesson");
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
    check_scope(L, -1, LESSON_S_STEP, what);
    check_step(L, lua_gettop(L), what);
    lua_pop(L, 1);
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
    char line[NS_ERRLEN];
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

/* shown(a, b [, digits]) -> true when the numbers (or two lists of numbers) agree to the
 * digits the panels print (6 significant digits: within one unit of the last one). */
static int shown_one(lua_State *L, double a, double b, int digits) {
  (void)L;
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  if (isinf(a) || isinf(b)) return a == b;
  double m = fmax(fabs(a), fabs(b));
  if (m == 0) return 1;
  return fabs(a - b) <= pow(10, floor(log10(m)) - (digits - 1)) * (1 + 1e-9);
}

static int lesson_l_shown(lua_State *L) {
  int digits = (int)luaL_optinteger(L, 3, 6);
  luaL_argcheck(L, digits >= 1 && digits <= 17, 3, "digits must be 1 to 17");
  if (lua_type(L, 1) == LUA_TNUMBER && lua_type(L, 2) == LUA_TNUMBER) {
    lua_pushboolean(L, shown_one(L, lua_tonumber(L, 1), lua_tonumber(L, 2), digits));
    return 1;
  }
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
  if ((lua_Integer)lua_rawlen(L, 2) != n) {
    lua_pushboolean(L, 0);
    return 1;
  }
  int same = 1;
  for (lua_Integer i = 1; i <= n && same; i++) {
    lua_rawgeti(L, 1, i);
    lua_rawgeti(L, 2, i);
    if (lua_type(L, -1) != LUA_TNUMBER || lua_type(L, -2) != LUA_TNUMBER)
      return luaL_error(L, "shown: lists of numbers only (entry %I)", i);
    same = shown_one(L, lua_tonumber(L, -2), lua_tonumber(L, -1), digits);
    lua_pop(L, 2);
  }
  lua_pushboolean(L, same);
  return 1;
}

/* The player's own globals, after the sandbox's (shown). */
static int player_globals_raw(lua_State *L) {
  lua_pushcfunction(L, lesson_l_shown);
  lua_setglobal(L, "shown");
  return 0;
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

/* A malloc'd copy of the string at the top of the stack, or NULL when it is not one. */
static char *top_string(lua_State *L) {
  return lua_type(L, -1) == LUA_TSTRING ? lesson_xstrdup(lua_tostring(L, -1)) : NULL;
}

/* Copies the list of strings t[name] (checked by lesson{}) into *out, *n; raises when out
 * of memory. */
static void copy_strings(lua_State *L, int t, const char *name, char ***out, int *n) {
  *out = NULL;
  *n = 0;
  if (rawfield(L, t, name) == LUA_TTABLE) {
    int len = (int)lua_rawlen(L, -1);
    *out = calloc((size_t)len, sizeof **out);
    if (!*out) luaL_error(L, "out of memory");
    for (int i = 1; i <= len; i++) {
      int fn = lua_rawgeti(L, -1, i) == LUA_TFUNCTION; /* a hint computed from the state */
      (*out)[i - 1] = fn ? NULL : top_string(L);
      lua_pop(L, 1);
      if (!fn && !(*out)[i - 1]) luaL_error(L, "out of memory");
      *n = i;
    }
  }
  lua_pop(L, 1);
}

/* Copies the definition's strings and flags into ls (the shape was checked by lesson{}). */
static int read_def_raw(lua_State *L) {
  lesson *ls = lua_touserdata(L, 1);
  if (lua_getfield(L, LUA_REGISTRYINDEX, DEF_KEY) != LUA_TTABLE)
    return luaL_error(L, "the file does not call lesson{...}");
  int d = lua_gettop(L);
  static const lesson_attr heads[] = {LESSON_A_LESSON_TITLE, LESSON_A_LESSON_SOURCE,
                                      LESSON_A_LESSON_SECTION};
  char **dst[] = {&ls->title, &ls->source, &ls->section};
  for (int i = 0; i < 3; i++) {
    rawfield(L, d, lesson_attr_name(heads[i]));
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
    s->answer_tol = s->predict_tol = NAN;
    lua_rawgeti(L, -1, k); /* step */
    int st = lua_gettop(L);
    rawfield(L, st, "text");
    s->text = lesson_xstrdup(lua_isstring(L, -1) ? lua_tostring(L, -1) : "");
    lua_pop(L, 1);
    if (!s->text) return luaL_error(L, "out of memory");
    rawfield(L, st, "focus");
    s->focus = top_string(L);
    rawfield(L, st, "view");
    s->view = top_string(L);
    s->has_set = rawfield(L, st, "set") == LUA_TTABLE;
    s->has_claims = rawfield(L, st, "claims") == LUA_TFUNCTION;
    s->has_figure = rawfield(L, st, "figure") == LUA_TFUNCTION;
    s->has_variant = rawfield(L, st, "variant") == LUA_TFUNCTION;
    lua_settop(L, st);
    if (rawfield(L, st, "try") == LUA_TTABLE) {
      int t = lua_gettop(L);
      rawfield(L, t, "text");
      s->try_text = top_string(L);
      s->has_check = rawfield(L, t, "check") == LUA_TFUNCTION;
      s->has_show = rawfield(L, t, "show") == LUA_TTABLE;
      copy_strings(L, t, "hints", &s->hints, &s->nhints);
      if (rawfield(L, t, "answer") == LUA_TTABLE) {
        s->has_answer = 1;
        rawfield(L, -1, "claim");
        s->answer_claim = top_string(L);
        if (rawfield(L, -2, "tol") == LUA_TNUMBER) s->answer_tol = lua_tonumber(L, -1);
        if (s->answer_claim && !lesson_registry_find(ls->opt.registry, s->answer_claim) &&
            !ls->opt.check_mode)
          return luaL_error(L, "lesson: step %d: try.answer.claim: unknown id '%s'", k,
                            s->answer_claim);
      }
    }
    lua_settop(L, st);
    if (rawfield(L, st, "predict") == LUA_TTABLE) {
      int t = lua_gettop(L);
      rawfield(L, t, "question");
      s->question = top_string(L);
      if (!s->question) return luaL_error(L, "out of memory");
      copy_strings(L, t, "choices", &s->choices, &s->nchoices);
      if (rawfield(L, t, "tol") == LUA_TNUMBER) s->predict_tol = lua_tonumber(L, -1);
    }
    lua_settop(L, st - 1); /* the step */
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
    if (panels && ns_choice_parse(panels, f) < 0 && ns_choice_parse(lesson_focus_views, f) < 0) {
      char list[160], views[80];
      luaL_error(L, "focus: unknown panel '%s' (%s; or a view: %s)", f,
                 ns_choice_list(panels, list, sizeof list),
                 ns_choice_list(lesson_focus_views, views, sizeof views));
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
  char prefix[NS_ERRLEN];
  snprintf(prefix, sizeof prefix, "%s: step %d%s", ls->path, k,
           strcmp(what, "show") == 0 ? ": try.show" : "");
  return lesson_sb_run(ls, apply_raw, &a, 0, prefix, err);
}

static int copy_state(ns_state *dst, const ns_state *src, char *err) {
  char e[NS_ERRLEN];
  if (ns_state_copy(dst, src, e) != 0) {
    snprintf(err, NS_ERRLEN, "%s", e);
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
    free(s->view);
    free(s->try_text);
    free(s->answer_claim);
    free(s->question);
    for (int i = 0; i < s->nhints; i++) free(s->hints[i]);
    free(s->hints);
    for (int i = 0; i < s->nchoices; i++) free(s->choices[i]);
    free(s->choices);
    ns_state_free(&s->state);
    ns_state_free(&s->show);
    free(s->set_fields);
    free(s->show_fields);
  }
  free(ls->steps);
  ns_state_free(&ls->cur);
  ns_state_free(&ls->start);
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
    snprintf(err, NS_ERRLEN, "%s: out of memory", path);
    return NULL;
  }
  ls->opt = *o;
  const char *slash = strrchr(ls->path, '/');
  ls->name = slash ? slash + 1 : ls->path;
  ls->sb.limit = o->mem_limit ? o->mem_limit : LESSON_DEFAULT_MEM;
  ls->sb.budget = o->step_limit > 0 ? o->step_limit : LESSON_DEFAULT_STEPS;
  char e[NS_ERRLEN];
  if (ns_state_init(&ls->cur, e) != 0) {
    snprintf(err, NS_ERRLEN, "%.200s: %.300s", path, e);
    lesson_free(ls);
    return NULL;
  }
  ls->L = lua_newstate(lesson_sb_alloc, &ls->sb);
  if (!ls->L) {
    snprintf(err, NS_ERRLEN, "%s: cannot create a Lua state (memory limit too low?)", path);
    lesson_free(ls);
    return NULL;
  }
  lua_sethook(ls->L, lesson_sb_hook, LUA_MASKCOUNT, HOOK_EVERY);
  if (lesson_sb_run(ls, lesson_sb_open, ls, 0, path, err) != 0 ||
      lesson_sb_run(ls, player_globals_raw, ls, 0, path, err) != 0 ||
      lesson_sb_run(ls, load_raw, ls, 0, path, err) != 0 ||
      lesson_sb_run(ls, read_def_raw, ls, 0, path, err) != 0) {
    lesson_free(ls);
    return NULL;
  }
  /* the snapshots: each step from the previous one */
  ns_state prev;
  if (ns_state_init(&ls->start, e) != 0 || ns_state_init(&prev, e) != 0) {
    snprintf(err, NS_ERRLEN, "%.200s: %.300s", path, e);
    lesson_free(ls);
    return NULL;
  }
  int bad = 0;
  for (int k = 1; k <= ls->nsteps && !bad; k++) {
    step *s = &ls->steps[k - 1];
    char perr[NS_ERRLEN];
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
        snprintf(err, NS_ERRLEN, "%s", perr);
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
          snprintf(err, NS_ERRLEN, "%s", perr);
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

const char *lesson_step_view(const lesson *ls, int k) {
  const step *s = step_of(ls, k);
  return s ? s->view : NULL;
}
int lesson_step_has_set(const lesson *ls, int k) {
  const step *s = step_of(ls, k);
  return s && s->has_set;
}
int lesson_step_has_variant(const lesson *ls, int k) {
  const step *s = step_of(ls, k);
  return s && s->has_variant;
}
int lesson_step_has_answer(const lesson *ls, int k) {
  const step *s = step_of(ls, k);
  return s && s->has_answer;
}
int lesson_step_nhints(const lesson *ls, int k) {
  const step *s = step_of(ls, k);
  return s ? s->nhints : 0;
}
const char *lesson_step_hint(const lesson *ls, int k, int i) {
  const step *s = step_of(ls, k);
  return s && i >= 1 && i <= s->nhints ? s->hints[i - 1] : NULL;
}
const char *lesson_step_question(const lesson *ls, int k) {
  const step *s = step_of(ls, k);
  return s ? s->question : NULL;
}
int lesson_step_nchoices(const lesson *ls, int k) {
  const step *s = step_of(ls, k);
  return s ? s->nchoices : 0;
}
const char *lesson_step_choice(const lesson *ls, int k, int i) {
  const step *s = step_of(ls, k);
  return s && i >= 1 && i <= s->nchoices ? s->choices[i - 1] : NULL;
}
const ns_state *lesson_step_before(const lesson *ls, int k) {
  const step *s = step_of(ls, k);
  if (!s) return NULL;
  return k == 1 ? &ls->start : &ls->steps[k - 2].state;
}
int lesson_step_is_try(const lesson *ls, int k) {
  const step *s = step_of(ls, k);
  return s && (s->has_check || s->has_answer);
}

static int apply_state(const ns_state *src, ns_state *s, ns_history *h, char *err) {
  ns_state_patch p;
  ns_patch_from_state(&p, src);
  char e[NS_ERRLEN];
  if (ns_history_apply(h, s, &p, e) != 0) {
    snprintf(err, NS_ERRLEN, "%s", e);
    return -1;
  }
  return 0;
}

int lesson_apply(const lesson *ls, int k, ns_state *s, ns_history *h, char *err) {
  const step *st = step_of(ls, k);
  if (!st || !s) {
    snprintf(err, NS_ERRLEN, "lesson_apply: no step %d", k);
    return -1;
  }
  return apply_state(&st->state, s, h, err);
}

int lesson_apply_before(const lesson *ls, int k, ns_state *s, ns_history *h, char *err) {
  const ns_state *b = lesson_step_before(ls, k);
  if (!b || !s) {
    snprintf(err, NS_ERRLEN, "lesson_apply_before: no step %d", k);
    return -1;
  }
  return apply_state(b, s, h, err);
}

int lesson_apply_show(const lesson *ls, int k, ns_state *s, ns_history *h, char *err) {
  const step *st = step_of(ls, k);
  if (!st || !st->has_show || !s) {
    snprintf(err, NS_ERRLEN, "lesson_apply_show: step %d has no try.show", k);
    return -1;
  }
  return apply_state(&st->show, s, h, err);
}

/* ------------------------------------------------------------------ calls */

typedef struct {
  lesson *ls;
  int k;
  const char *field; /* a path in the step: "claims", "figure", "try.check", "variant"... */
  int seed;          /* > 0: passed before the state (variant) */
} call_spec;

/* Calls step k's function at c->field with the state table (get()) of ls->cur; leaves one
 * result. A value that is not a function is the result itself (predict.answer = 2). */
static int call_raw(lua_State *L) {
  call_spec *c = lua_touserdata(L, 1);
  push_step(L, c->k);
  const char *p = c->field;
  while (*p) {
    size_t n = strcspn(p, ".");
    if (n > 0 && strspn(p, "0123456789") == n) /* a list's entry: try.hints.2 */
      lua_pushinteger(L, strtol(p, NULL, 10));
    else
      lua_pushlstring(L, p, n);
    if (lua_type(L, -2) != LUA_TTABLE) luaL_error(L, "no %s", c->field);
    lua_rawget(L, -2);
    lua_replace(L, -2);
    p += n;
    if (*p == '.') p++;
  }
  if (lua_type(L, -1) != LUA_TFUNCTION) return 1;
  int nargs = 1;
  if (c->seed > 0) {
    lua_pushinteger(L, c->seed);
    nargs++;
  }
  nsx_pushstate(L, &c->ls->cur); /* adapter: the state as get() returns it */
  lua_call(L, nargs, 1);
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

static int call_step_seed(lesson *ls, int k, const char *field, int seed, const ns_state *s,
                          char *err) {
  if (enter(ls, s, err) != 0) return -1;
  call_spec c = {ls, k, field, seed};
  char prefix[NS_ERRLEN];
  snprintf(prefix, sizeof prefix, "%s: step %d: %s", ls->path, k, field);
  ls->cur_step = k;
  return lesson_sb_run(ls, call_raw, &c, 1, prefix, err);
}

static int call_step(lesson *ls, int k, const char *field, const ns_state *s, char *err) {
  return call_step_seed(ls, k, field, 0, s, err);
}

/* Calls field at state s and takes its result as a finite number into *v; 0 or -1 (err). */
static int call_number(lesson *ls, int k, const char *field, const ns_state *s, double *v,
                       char *err) {
  if (call_step(ls, k, field, s, err) != 0) return -1;
  lua_State *L = ls->L;
  int ok = lua_type(L, -1) == LUA_TNUMBER && isfinite(lua_tonumber(L, -1));
  if (ok)
    *v = lua_tonumber(L, -1);
  else
    snprintf(err, NS_ERRLEN, "%s: step %d: %s must give a finite number, got %s", ls->path, k,
             field, lua_type(L, -1) == LUA_TNUMBER ? "nan or inf" : luaL_typename(L, -1));
  lua_pop(L, 1);
  return ok ? 0 : -1;
}

int lesson_claims(lesson *ls, int k, char *err) {
  const step *st = step_of(ls, k);
  if (!st) {
    snprintf(err, NS_ERRLEN, "lesson_claims: no step %d", k);
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
    snprintf(err, NS_ERRLEN, "lesson_figure: no step %d", k);
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
    snprintf(err, NS_ERRLEN, "%s: step %d: figure must return a string, got %s", ls->path, k,
             luaL_typename(ls->L, -1));
  lua_pop(ls->L, 1);
  if (ok && !*text) snprintf(err, NS_ERRLEN, "out of memory");
  return ok && *text ? 0 : -1;
}

int lesson_check_try(lesson *ls, int k, const ns_state *s, char *hint, size_t hintlen, char *err) {
  const step *st = step_of(ls, k);
  if (hint && hintlen) hint[0] = '\0';
  if (!st) {
    snprintf(err, NS_ERRLEN, "lesson_check_try: no step %d", k);
    return -1;
  }
  if (!st->has_check) {
    if (hint && hintlen) snprintf(hint, hintlen, "this step has nothing to check");
    return 0;
  }
  if (call_step(ls, k, "try.check", s ? s : &st->state, err) != 0) return -1;
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
    snprintf(err, NS_ERRLEN, "%s: step %d: try.check must return true or a hint, got %s", ls->path,
             k, luaL_typename(L, -1));
  lua_pop(L, 1);
  return r;
}

/* ------------------------------------------------------------------ exercises */

int lesson_hint(lesson *ls, int k, int i, const ns_state *s, char *buf, size_t len, char *err) {
  const step *st = step_of(ls, k);
  buf[0] = 0;
  if (!st || i < 1 || i > st->nhints) {
    snprintf(err, NS_ERRLEN, "step %d has no hint %d", k, i);
    return -1;
  }
  if (st->hints[i - 1]) {
    snprintf(buf, len, "%s", st->hints[i - 1]);
    return 0;
  }
  char field[48];
  snprintf(field, sizeof field, "try.hints.%d", i);
  if (call_step(ls, k, field, s ? s : &st->state, err) != 0) return -1;
  lua_State *L = ls->L;
  int ok = lua_type(L, -1) == LUA_TSTRING;
  if (ok)
    snprintf(buf, len, "%s", lua_tostring(L, -1));
  else
    snprintf(err, NS_ERRLEN, "%s: step %d: %s must return a string, got %s", ls->path, k, field,
             luaL_typename(L, -1));
  lua_pop(L, 1);
  return ok ? 0 : -1;
}

double lesson_default_tol(double v) {
  double m = fabs(v);
  if (!(m > 0) || !isfinite(m)) return 1e-9;
  /* half a unit in the third significant digit: 13.2 -> 0.05, -0.27524 -> 0.0005 */
  return 0.5 * pow(10, floor(log10(m)) - 2);
}

int lesson_judge(double got, double value, double tol) {
  if (!isfinite(got)) return 0;
  if (isnan(tol)) tol = lesson_default_tol(value);
  /* a relative slack of rounding, so that the printed digits of a value always pass */
  return fabs(got - value) <= tol * (1 + 1e-12) + 1e-15 * fabs(value);
}

int lesson_answer(lesson *ls, int k, const ns_state *s, double *value, double *tol, char *err) {
  const step *st = step_of(ls, k);
  if (!st || !st->has_answer) {
    snprintf(err, NS_ERRLEN, "step %d takes no answer", k);
    return -1;
  }
  *tol = st->answer_tol;
  if (st->answer_claim) {
    const lesson_claim_row *row = lesson_registry_find(ls->opt.registry, st->answer_claim);
    if (!row) {
      snprintf(err, NS_ERRLEN, "%s: step %d: try.answer.claim: unknown id '%s'", ls->path, k,
               st->answer_claim);
      return -1;
    }
    *value = row->expected;
  } else if (call_number(ls, k, "try.answer.value", s ? s : &st->state, value, err) != 0)
    return -1;
  if (isnan(*tol)) *tol = lesson_default_tol(*value);
  return 0;
}

int lesson_predict_truth(lesson *ls, int k, double *value, double *tol, char *err) {
  const step *st = step_of(ls, k);
  if (!st || !st->question) {
    snprintf(err, NS_ERRLEN, "step %d asks no prediction", k);
    return -1;
  }
  if (st->nchoices > 0) {
    if (call_number(ls, k, "predict.answer", &st->state, value, err) != 0) return -1;
    if (*value != floor(*value) || *value < 1 || *value > st->nchoices) {
      snprintf(err, NS_ERRLEN, "%s: step %d: predict.answer must be a choice, 1 to %d, got %g",
               ls->path, k, st->nchoices, *value);
      return -1;
    }
    *tol = 0;
    return 0;
  }
  if (call_number(ls, k, "predict.value", &st->state, value, err) != 0) return -1;
  *tol = isnan(st->predict_tol) ? lesson_default_tol(*value) : st->predict_tol;
  return 0;
}

typedef struct {
  call_spec c;
  ns_state *out; /* the step's state, changed in place */
} variant_spec;

static int variant_raw(lua_State *L) {
  variant_spec *v = lua_touserdata(L, 1);
  lua_pushcfunction(L, call_raw);
  lua_pushlightuserdata(L, &v->c);
  lua_call(L, 1, 1);
  if (lua_type(L, -1) != LUA_TTABLE)
    luaL_error(L, "variant must return a set{} table, got %s", luaL_typename(L, -1));
  nsx_settable(L, -1, v->out, NULL);
  return 0;
}

int lesson_apply_variant(lesson *ls, int k, int seed, ns_state *s, ns_history *h, char *err) {
  const step *st = step_of(ls, k);
  if (!st || !st->has_variant || seed < 1 || !s) {
    snprintf(err, NS_ERRLEN, "step %d has no variant %d", k, seed);
    return -1;
  }
  ns_state v;
  if (copy_state(&v, &st->state, err) != 0) return -1;
  int rc = enter(ls, &st->state, err);
  if (rc == 0) {
    variant_spec a = {{ls, k, "variant", seed}, &v};
    char prefix[NS_ERRLEN];
    snprintf(prefix, sizeof prefix, "%s: step %d: variant %d", ls->path, k, seed);
    ls->cur_step = k;
    rc = lesson_sb_run(ls, variant_raw, &a, 0, prefix, err);
  }
  if (rc == 0) rc = apply_state(&v, s, h, err);
  ns_state_free(&v);
  return rc;
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
    snprintf(err, NS_ERRLEN, "%s: %s", dir, strerror(errno));
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
    snprintf(err, NS_ERRLEN, "%s: out of memory", dir);
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
