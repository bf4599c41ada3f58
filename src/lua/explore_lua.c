/* explore_lua.c: set{}/get()/undo()/redo()/reset() over the explorer state.
 *
 * set{} converts the whole table into one ns_state_patch first (any Lua error on the
 * way leaves the state untouched), then calls ns_history_apply once. Everything the
 * conversion allocates lives in a garbage-collected "patch box" from the moment it
 * exists, so an error in the middle of the table leaks nothing. */
#include "lua/explore_lua.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "lua/nsl.h"

#define PATCHBOX_MT "normscope.explore.patch"

typedef struct {
  ns_state_patch p;
  ns_tensor *x, *batch;            /* owned */
  double *gamma, *beta, *baseline; /* owned */
} patchbox;

typedef struct {
  ns_state *s;
  ns_history *h;
  void (*on_change)(void *);
  void *ud;
} nsx_ctx;

static int patchbox_gc(lua_State *L) {
  patchbox *b = luaL_checkudata(L, 1, PATCHBOX_MT);
  ns_tensor_free(b->x);
  ns_tensor_free(b->batch);
  free(b->gamma);
  free(b->beta);
  free(b->baseline);
  memset(b, 0, sizeof *b);
  return 0;
}

static patchbox *new_patchbox(lua_State *L) {
  patchbox *b = lua_newuserdatauv(L, sizeof *b, 0); /* +1 */
  memset(b, 0, sizeof *b);
  ns_patch_init(&b->p);
  if (luaL_newmetatable(L, PATCHBOX_MT)) {
    lua_pushcfunction(L, patchbox_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  return b;
}

static const char *type_of(lua_State *L, int idx) {
  return luaL_typename(L, idx);
}

static double get_number(lua_State *L, int idx, const char *field) {
  if (lua_type(L, idx) != LUA_TNUMBER)
    luaL_error(L, "set: %s: expected a number, got %s", field, type_of(L, idx));
  return lua_tonumber(L, idx);
}

static lua_Integer get_integer(lua_State *L, int idx, const char *field) {
  int isint = 0;
  lua_Integer v = lua_tointegerx(L, idx, &isint);
  if (lua_type(L, idx) != LUA_TNUMBER || !isint) /* a number as written, else its type */
    luaL_error(L, "set: %s: expected an integer, got %s", field,
               lua_type(L, idx) == LUA_TNUMBER ? lua_tostring(L, idx) : type_of(L, idx));
  return v;
}

static int get_int_range(lua_State *L, int idx, const char *field, lua_Integer lo, lua_Integer hi) {
  lua_Integer v = get_integer(L, idx, field);
  if (v < lo || v > hi) luaL_error(L, "set: %s: must be %I to %I, got %I", field, lo, hi, v);
  return (int)v;
}

static const char *get_string(lua_State *L, int idx, const char *field, const char *choices) {
  if (lua_type(L, idx) != LUA_TSTRING)
    luaL_error(L, "set: %s: expected %s, got %s", field, choices, type_of(L, idx));
  return lua_tostring(L, idx);
}

/* Protected body: converts argument 1 into a tensor stored at the slot (argument 2). */
static int tensorlike_raw(lua_State *L) {
  ns_tensor **slot = lua_touserdata(L, 2);
  const char *what = lua_tostring(L, 3);
  *slot = nsl_checktensorlike(L, 1, what);
  return 0;
}

/* Converts the value at idx into a tensor owned by *slot (inside a patch box). Errors
 * from the binding ("bad argument #1 to '?' (x must be ...)") are reworded as
 * "set: x must be ...". */
static void get_tensor(lua_State *L, int idx, const char *field, ns_tensor **slot) {
  idx = lua_absindex(L, idx);
  lua_pushcfunction(L, tensorlike_raw);
  lua_pushvalue(L, idx);
  lua_pushlightuserdata(L, slot);
  lua_pushstring(L, field);
  if (lua_pcall(L, 3, 0, 0) != LUA_OK) {
    const char *m = lua_tostring(L, -1);
    char msg[NS_ERRLEN];
    snprintf(msg, sizeof msg, "%s", m ? m : "conversion failed");
    const char *open = strstr(msg, "' (");
    if (strncmp(msg, "bad argument", 12) == 0 && open) {
      memmove(msg, open + 3, strlen(open + 3) + 1);
      size_t len = strlen(msg);
      if (len > 0 && msg[len - 1] == ')') msg[len - 1] = '\0';
    }
    /* the binding's message usually starts with the field name already */
    size_t fl = strlen(field);
    if (strncmp(msg, field, fl) == 0 && (msg[fl] == ' ' || msg[fl] == ':'))
      luaL_error(L, "set: %s", msg);
    luaL_error(L, "set: %s: %s", field, msg);
  }
}

/* A list of doubles from a number, an array/nested table or a tensor. An empty table
 * gives n = 0. The array is stored in *slot (owned by the patch box). */
static void get_doubles(lua_State *L, int idx, const char *field, double **slot, size_t *n) {
  idx = lua_absindex(L, idx);
  *n = 0;
  if (lua_type(L, idx) == LUA_TNUMBER) {
    *slot = malloc(sizeof **slot);
    if (!*slot) luaL_error(L, "set: %s: out of memory", field);
    (*slot)[0] = lua_tonumber(L, idx);
    *n = 1;
    return;
  }
  if (lua_type(L, idx) == LUA_TTABLE) {
    lua_pushnil(L);
    if (lua_next(L, idx) == 0) return; /* {}: none */
    lua_pop(L, 2);
  } else if (!nsl_totensor(L, idx)) {
    luaL_error(L, "set: %s: expected a number, an array of numbers or a tensor, got %s", field,
               type_of(L, idx));
  }
  patchbox *tmp = new_patchbox(L); /* holds the temporary tensor */
  get_tensor(L, idx, field, &tmp->x);
  *slot = malloc(tmp->x->n * sizeof **slot);
  if (!*slot) luaL_error(L, "set: %s: out of memory", field);
  ns_tensor_read(tmp->x, *slot);
  *n = tmp->x->n;
  lua_pop(L, 1); /* the temporary box (the GC frees its tensor) */
}

static void set_bit(ns_state_patch *p, ns_field f) {
  p->set |= 1u << f;
}

/* Reads one field (key at -2, value at -1) into the patch box. */
static void read_field(lua_State *L, patchbox *b, const ns_state *s) {
  if (lua_type(L, -2) != LUA_TSTRING)
    luaL_error(L, "set: field names must be strings, got a %s key", type_of(L, -2));
  const char *name = lua_tostring(L, -2);
  int f = ns_field_parse(name);
  if (f < 0) luaL_error(L, "set: unknown field '%s' (get() lists the fields)", name);
  int v = lua_absindex(L, -1);
  ns_state_patch *p = &b->p;
  set_bit(p, (ns_field)f);
  switch ((ns_field)f) {
  case NS_F_X:
    get_tensor(L, v, "x", &b->x);
    p->x = b->x;
    break;
  case NS_F_KIND: {
    const char *k = get_string(L, v, name, "a kind name");
    if (ns_kind_parse(k, &p->kind) != 0)
      luaL_error(L, "set: kind: unknown kind '%s' (layer, rms, batch, instance, group)", k);
    break;
  }
  case NS_F_AXES: {
    p->axes = 0;
    if (lua_type(L, v) == LUA_TSTRING && strcmp(lua_tostring(L, v), "default") == 0) break;
    if (lua_type(L, v) == LUA_TNUMBER) {
      p->axes = 1u << (get_int_range(L, v, name, 1, NS_MAXRANK) - 1);
      break;
    }
    if (lua_type(L, v) != LUA_TTABLE)
      luaL_error(L, "set: axes: expected an array of 1-based axes or \"default\", got %s",
                 type_of(L, v));
    lua_Integer len = (lua_Integer)lua_rawlen(L, v);
    if (len == 0) luaL_error(L, "set: axes: give at least one axis, or \"default\"");
    for (lua_Integer i = 1; i <= len; i++) {
      lua_rawgeti(L, v, i);
      int a = get_int_range(L, -1, "axes", 1, NS_MAXRANK);
      lua_pop(L, 1);
      if (p->axes & (1u << (a - 1))) luaL_error(L, "set: axes: axis %d given twice", a);
      p->axes |= 1u << (a - 1);
    }
    break;
  }
  case NS_F_GROUPS:
    p->groups = get_int_range(L, v, name, 1, 1 << 30);
    break;
  case NS_F_EPS:
    p->eps = get_number(L, v, name);
    break;
  case NS_F_EPS_AT: {
    const char *e = get_string(L, v, name, "\"var\" or \"std\"");
    if (strcmp(e, "var") == 0)
      p->eps_at = NS_EPS_VAR;
    else if (strcmp(e, "std") == 0)
      p->eps_at = NS_EPS_STD;
    else
      luaL_error(L, "set: eps_at: must be \"var\" or \"std\", got '%s'", e);
    break;
  }
  case NS_F_DDOF:
    p->ddof = (int)get_integer(L, v, name);
    if (p->ddof != 0 && p->ddof != 1) luaL_error(L, "set: ddof: must be 0 or 1, got %d", p->ddof);
    break;
  case NS_F_CENTER:
    if (lua_type(L, v) == LUA_TBOOLEAN)
      p->center = lua_toboolean(L, v);
    else if (lua_type(L, v) == LUA_TSTRING && strcmp(lua_tostring(L, v), "default") == 0)
      p->center = -1;
    else
      luaL_error(L, "set: center: expected true, false or \"default\", got %s", type_of(L, v));
    break;
  case NS_F_GAMMA:
    get_doubles(L, v, name, &b->gamma, &p->ngamma);
    p->gamma = b->gamma;
    break;
  case NS_F_BETA:
    get_doubles(L, v, name, &b->beta, &p->nbeta);
    p->beta = b->beta;
    break;
  case NS_F_DTYPE:
  case NS_F_ACC: {
    const char *d = get_string(L, v, name, "a dtype name");
    ns_dtype dt;
    if (f == NS_F_ACC && strcmp(d, "default") == 0) {
      p->acc = -1;
      break;
    }
    if (ns_dtype_parse(d, &dt) != 0)
      luaL_error(L, "set: %s: unknown dtype '%s' (fp64, fp32, fp16, bf16%s)", name, d,
                 f == NS_F_ACC ? ", default" : "");
    if (f == NS_F_DTYPE)
      p->dtype = dt;
    else
      p->acc = (int)dt;
    break;
  }
  case NS_F_ALGO: {
    const char *a = get_string(L, v, name, "\"twopass\", \"welford\" or \"raw\"");
    if (ns_algo_parse(a, &p->algo) != 0)
      luaL_error(L, "set: algo: must be \"twopass\", \"welford\" or \"raw\", got '%s'", a);
    break;
  }
  case NS_F_MODE: {
    const char *m = get_string(L, v, name, "\"train\" or \"eval\"");
    if (strcmp(m, "train") == 0)
      p->mode = NS_MODE_TRAIN;
    else if (strcmp(m, "eval") == 0)
      p->mode = NS_MODE_EVAL;
    else
      luaL_error(L, "set: mode: must be \"train\" or \"eval\", got '%s'", m);
    break;
  }
  case NS_F_BATCH:
    get_tensor(L, v, "batch", &b->batch);
    p->batch = b->batch;
    break;
  case NS_F_BASELINE:
    if (lua_type(L, v) == LUA_TBOOLEAN && !lua_toboolean(L, v)) {
      p->baseline = NULL; /* reset to the companion row */
      break;
    }
    get_doubles(L, v, name, &b->baseline, &p->nbaseline);
    if (p->nbaseline == 0) luaL_error(L, "set: baseline: give the values, or false to reset");
    p->baseline = b->baseline;
    break;
  case NS_F_TARGET:
    p->target = get_int_range(L, v, name, 1, 1 << 30);
    break;
  case NS_F_COMPANION:
    p->companion = get_int_range(L, v, name, 1, 1 << 30);
    break;
  case NS_F_SEED:
    if (lua_type(L, v) == LUA_TSTRING) {
      const char *d = lua_tostring(L, v);
      char *end;
      errno = 0;
      unsigned long long u = strtoull(d, &end, 10);
      if (!*d || *end || d[0] == '-' || d[0] == '+' || d[0] == ' ' || errno)
        luaL_error(L, "set: seed: '%s' is not an integer from 0 to 2^64-1", d);
      p->seed = (uint64_t)u;
    } else {
      lua_Integer i = get_integer(L, v, name);
      if (i < 0) luaL_error(L, "set: seed: must be >= 0, got %I", i);
      p->seed = (uint64_t)i;
    }
    break;
  case NS_F_TRAIN_BATCHES:
    p->train_batches = get_int_range(L, v, name, 1, NS_EXPLORE_MAX_BATCHES);
    break;
  case NS_F_BATCH_SIZE:
    p->batch_size = get_int_range(L, v, name, 2, NS_EXPLORE_MAX_BATCH_SIZE);
    break;
  case NS_F_MOMENTUM:
    if (lua_type(L, v) == LUA_TBOOLEAN && !lua_toboolean(L, v)) {
      p->cumulative = 1;
      p->momentum = s->momentum;
    } else if (lua_type(L, v) == LUA_TNUMBER) {
      p->cumulative = 0;
      p->momentum = lua_tonumber(L, v);
    } else {
      luaL_error(L, "set: momentum: expected a number in (0, 1] or false, got %s",
                 lua_type(L, v) == LUA_TBOOLEAN ? "true" : type_of(L, v));
    }
    break;
  case NS_F_TRAIN_SOURCE: {
    const char *src = get_string(L, v, name, "\"rng\" or \"batch\"");
    if (ns_source_parse(src, &p->train_source) != 0)
      luaL_error(L, "set: train_source: must be \"rng\" or \"batch\", got '%s'", src);
    break;
  }
  case NS_F_TRAIN_LOC:
    p->train_loc = get_number(L, v, name);
    break;
  case NS_F_TRAIN_SCALE:
    p->train_scale = get_number(L, v, name);
    break;
  case NS_F_SHIFT:
    p->shift = get_number(L, v, name);
    break;
  case NS_F_SCALE:
    p->scale = get_number(L, v, name);
    break;
  case NS_F_FOCUS: {
    const char *pn = get_string(L, v, name, "a panel name");
    if (ns_panel_parse(pn, &p->focus) != 0)
      luaL_error(L,
                 "set: focus: unknown panel '%s' (input, settings, output, spectrum, batch, "
                 "train, precision)",
                 pn);
    break;
  }
  case NS_F_CURSOR:
    if (lua_type(L, v) != LUA_TTABLE || lua_rawlen(L, v) != 2)
      luaL_error(L, "set: cursor: expected {row, col} (1-based)");
    lua_rawgeti(L, v, 1);
    p->cursor_row = get_int_range(L, -1, "cursor row", 1, 1 << 30) - 1;
    lua_rawgeti(L, v, 2);
    p->cursor_col = get_int_range(L, -1, "cursor column", 1, 1 << 30) - 1;
    lua_pop(L, 2);
    break;
  case NS_F_COUNT:
    break;
  }
}

int nsx_settable(lua_State *L, int idx, ns_state *s, ns_history *h) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) != LUA_TTABLE)
    return luaL_error(L, "set: expected a table of fields, e.g. set{eps = 0}, got %s",
                      type_of(L, idx));
  patchbox *b = new_patchbox(L); /* +1 */
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) { /* key at -2, value at -1 */
    read_field(L, b, s);
    lua_pop(L, 1); /* drop value, keep key */
  }
  char err[NS_ERRLEN];
  if (ns_history_apply(h, s, &b->p, err) != 0) luaL_error(L, "set: %s", err);
  lua_pop(L, 1); /* the patch box; the GC frees what it holds */
  return 0;
}

static void push_doubles(lua_State *L, const double *v, size_t n) {
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    lua_pushnumber(L, v[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

void nsx_pushstate(lua_State *L, const ns_state *s) {
  lua_createtable(L, 0, NS_F_COUNT);
  nsl_pushtensor(L, ns_tensor_copy(s->x));
  lua_setfield(L, -2, "x");
  lua_pushstring(L, ns_kind_name(s->kind));
  lua_setfield(L, -2, "kind");
  if (s->axes == 0) {
    lua_pushliteral(L, "default");
  } else {
    lua_newtable(L);
    int k = 0;
    for (int a = 0; a < NS_MAXRANK; a++)
      if ((s->axes >> a) & 1u) {
        lua_pushinteger(L, a + 1);
        lua_rawseti(L, -2, ++k);
      }
  }
  lua_setfield(L, -2, "axes");
  lua_pushinteger(L, s->groups);
  lua_setfield(L, -2, "groups");
  lua_pushnumber(L, s->eps);
  lua_setfield(L, -2, "eps");
  lua_pushstring(L, ns_eps_at_name(s->eps_at));
  lua_setfield(L, -2, "eps_at");
  lua_pushinteger(L, s->ddof);
  lua_setfield(L, -2, "ddof");
  if (s->center < 0)
    lua_pushliteral(L, "default");
  else
    lua_pushboolean(L, s->center);
  lua_setfield(L, -2, "center");
  push_doubles(L, s->gamma, s->ngamma);
  lua_setfield(L, -2, "gamma");
  push_doubles(L, s->beta, s->nbeta);
  lua_setfield(L, -2, "beta");
  lua_pushstring(L, ns_dtype_name(s->dtype));
  lua_setfield(L, -2, "dtype");
  if (s->acc < 0)
    lua_pushliteral(L, "default");
  else
    lua_pushstring(L, ns_dtype_name((ns_dtype)s->acc));
  lua_setfield(L, -2, "acc");
  lua_pushstring(L, ns_algo_name(s->algo));
  lua_setfield(L, -2, "algo");
  lua_pushstring(L, ns_mode_name(s->mode));
  lua_setfield(L, -2, "mode");
  nsl_pushtensor(L, ns_tensor_copy(s->batch));
  lua_setfield(L, -2, "batch");
  push_doubles(L, s->baseline, s->batch->shape[1]);
  lua_setfield(L, -2, "baseline");
  lua_pushinteger(L, s->target);
  lua_setfield(L, -2, "target");
  lua_pushinteger(L, s->companion);
  lua_setfield(L, -2, "companion");
  if (s->seed <= (uint64_t)LUA_MAXINTEGER) {
    lua_pushinteger(L, (lua_Integer)s->seed);
  } else {
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)s->seed);
    lua_pushstring(L, buf);
  }
  lua_setfield(L, -2, "seed");
  lua_pushinteger(L, s->train_batches);
  lua_setfield(L, -2, "train_batches");
  lua_pushinteger(L, s->batch_size);
  lua_setfield(L, -2, "batch_size");
  if (s->cumulative)
    lua_pushboolean(L, 0);
  else
    lua_pushnumber(L, s->momentum);
  lua_setfield(L, -2, "momentum");
  lua_pushstring(L, ns_source_name(s->train_source));
  lua_setfield(L, -2, "train_source");
  lua_pushnumber(L, s->train_loc);
  lua_setfield(L, -2, "train_loc");
  lua_pushnumber(L, s->train_scale);
  lua_setfield(L, -2, "train_scale");
  lua_pushnumber(L, s->shift);
  lua_setfield(L, -2, "shift");
  lua_pushnumber(L, s->scale);
  lua_setfield(L, -2, "scale");
  lua_pushstring(L, ns_panel_name(s->focus));
  lua_setfield(L, -2, "focus");
  lua_createtable(L, 2, 0);
  lua_pushinteger(L, s->cursor_row + 1);
  lua_rawseti(L, -2, 1);
  lua_pushinteger(L, s->cursor_col + 1);
  lua_rawseti(L, -2, 2);
  lua_setfield(L, -2, "cursor");
}

static void push_matrix(lua_State *L, const double *v, size_t rows, size_t cols) {
  size_t shape[2] = {rows, cols};
  char err[NS_ERRLEN];
  ns_tensor *t = ns_tensor_from(2, shape, NS_FP64, v, err);
  if (!t) luaL_error(L, "result: %s", err);
  nsl_pushtensor(L, t);
}

static void setnum(lua_State *L, const char *k, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}

void nsx_pushresult(lua_State *L, const ns_result *r) {
  lua_createtable(L, 0, 24);
  lua_pushinteger(L, (lua_Integer)r->n);
  lua_setfield(L, -2, "n");
  setnum(L, "x_mean", r->x_mean);
  setnum(L, "x_std", r->x_std);
  setnum(L, "x_rms", r->x_rms);
  setnum(L, "x_min", r->x_min);
  setnum(L, "x_max", r->x_max);
  nsl_pushtensor(L, ns_tensor_copy(r->norm.y));
  lua_setfield(L, -2, "y");
  setnum(L, "y_mean", r->y_mean);
  setnum(L, "y_std", r->y_std);
  push_doubles(L, r->norm.mean, r->norm.plan.nstat);
  lua_setfield(L, -2, "mean");
  push_doubles(L, r->norm.var, r->norm.plan.nstat);
  lua_setfield(L, -2, "var");
  push_doubles(L, r->norm.denom, r->norm.plan.nstat);
  lua_setfield(L, -2, "denom");
  lua_pushinteger(L, (lua_Integer)r->norm.ndegenerate);
  lua_setfield(L, -2, "ndegenerate");
  if (r->eval_note) {
    lua_pushstring(L, r->eval_note);
    lua_setfield(L, -2, "eval_note");
  }
  nsl_pushtensor(L, ns_tensor_copy(r->y_shift));
  lua_setfield(L, -2, "y_shift");
  nsl_pushtensor(L, ns_tensor_copy(r->y_scale));
  lua_setfield(L, -2, "y_scale");
  setnum(L, "shift_dev", r->shift_dev);
  setnum(L, "scale_dev", r->scale_dev);

  lua_createtable(L, 0, 12); /* jacobian */
  lua_pushboolean(L, r->jac_done);
  lua_setfield(L, -2, "done");
  if (!r->jac_done) {
    lua_pushstring(L, r->jac_skip);
    lua_setfield(L, -2, "skip");
  } else {
    setnum(L, "fd_diff", r->jac_fd_diff);
    nsl_pusheigs(L, r->spec_closed, r->nclosed);
    lua_setfield(L, -2, "closed");
    nsl_pusheigs(L, r->spec_numeric, r->nnumeric);
    lua_setfield(L, -2, "numeric");
    nsl_pusheigs(L, r->spec_fd, r->nfd);
    lua_setfield(L, -2, "fd");
    setnum(L, "closed_vs_numeric", r->eig_closed_vs_numeric);
    setnum(L, "numeric_vs_fd", r->eig_numeric_vs_fd);
    setnum(L, "disagree", r->eig_disagree);
    setnum(L, "smax", r->smax);
    setnum(L, "rank_tol", r->rank_tol);
    lua_pushinteger(L, r->rank);
    lua_setfield(L, -2, "rank");
    lua_pushboolean(L, r->symmetric);
    lua_setfield(L, -2, "symmetric");
  }
  lua_setfield(L, -2, "jacobian");

  lua_createtable(L, 0, 6); /* batch */
  push_matrix(L, r->bn, r->B, r->D);
  lua_setfield(L, -2, "bn");
  push_matrix(L, r->ln, r->B, r->D);
  lua_setfield(L, -2, "ln");
  push_doubles(L, r->target_now, r->D);
  lua_setfield(L, -2, "target_now");
  push_doubles(L, r->target_base, r->D);
  lua_setfield(L, -2, "target_base");
  lua_createtable(L, (int)r->D, 0);
  for (size_t j = 0; j < r->D; j++) {
    lua_pushboolean(L, r->flip[j]);
    lua_rawseti(L, -2, (lua_Integer)j + 1);
  }
  lua_setfield(L, -2, "flip");
  lua_pushinteger(L, r->nflip);
  lua_setfield(L, -2, "nflip");
  lua_setfield(L, -2, "batch");

  lua_createtable(L, 0, 8); /* train */
  lua_pushinteger(L, (lua_Integer)r->train_d);
  lua_setfield(L, -2, "d");
  lua_pushinteger(L, (lua_Integer)r->train_n);
  lua_setfield(L, -2, "n");
  push_matrix(L, r->eval_x, r->eval_n, r->train_d);
  lua_setfield(L, -2, "eval_x");
  push_doubles(L, r->eval_mean, r->train_d);
  lua_setfield(L, -2, "eval_mean");
  push_doubles(L, r->eval_var, r->train_d);
  lua_setfield(L, -2, "eval_var");
  for (int k = 0; k < 3; k++) {
    lua_createtable(L, 0, 3);
    push_doubles(L, r->est[k].mean, r->train_d);
    lua_setfield(L, -2, "mean");
    push_doubles(L, r->est[k].var, r->train_d);
    lua_setfield(L, -2, "var");
    setnum(L, "gap", r->est[k].gap);
    lua_setfield(L, -2, r->est[k].name);
  }
  lua_pushstring(L, r->est[r->est_active].name);
  lua_setfield(L, -2, "active");
  lua_setfield(L, -2, "train");

  lua_createtable(L, 0, 4); /* precision */
  setnum(L, "ref", r->var_ref);
  lua_pushstring(L, ns_dtype_name(r->prec_dtype));
  lua_setfield(L, -2, "dtype");
  lua_pushstring(L, ns_dtype_name(r->prec_acc));
  lua_setfield(L, -2, "acc");
  for (int a = 0; a < 3; a++) {
    lua_createtable(L, 0, 4);
    setnum(L, "var", r->var_algo[a]);
    setnum(L, "relerr", r->var_relerr[a]);
    setnum(L, "digits", r->var_digits[a]);
    setnum(L, "lost", r->var_lost[a]);
    lua_setfield(L, -2, ns_algo_name((ns_algo)a));
  }
  lua_setfield(L, -2, "precision");
}

static nsx_ctx *ctx_of(lua_State *L) {
  return lua_touserdata(L, lua_upvalueindex(1));
}

/* A result record in a userdata, so a Lua error while it is pushed frees it. */
static int resultbox_gc(lua_State *L) {
  ns_result_free(lua_touserdata(L, 1));
  return 0;
}

static int l_result(lua_State *L) {
  nsx_ctx *c = ctx_of(L);
  ns_result *r = lua_newuserdatauv(L, sizeof *r, 0); /* +1 */
  memset(r, 0, sizeof *r);
  if (luaL_newmetatable(L, "normscope.explore.result")) {
    lua_pushcfunction(L, resultbox_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  char err[NS_ERRLEN];
  if (ns_explore_compute(c->s, r, err) != 0) return luaL_error(L, "result: %s", err);
  nsx_pushresult(L, r);
  ns_result_free(r); /* the box stays valid (zeroed) until the GC */
  return 1;
}

static void changed(nsx_ctx *c) {
  if (c->on_change) c->on_change(c->ud);
}

static int l_set(lua_State *L) {
  nsx_ctx *c = ctx_of(L);
  nsx_settable(L, 1, c->s, c->h);
  changed(c);
  return 0;
}

static int l_get(lua_State *L) {
  nsx_pushstate(L, ctx_of(L)->s);
  return 1;
}

/* undo() and redo(): step is ns_history_undo or ns_history_redo; true if it did one. */
static int history_step(lua_State *L, int (*step)(ns_history *, ns_state *)) {
  nsx_ctx *c = ctx_of(L);
  int done = c->h ? step(c->h, c->s) : 0;
  if (done) changed(c);
  lua_pushboolean(L, done);
  return 1;
}

static int l_undo(lua_State *L) {
  return history_step(L, ns_history_undo);
}

static int l_redo(lua_State *L) {
  return history_step(L, ns_history_redo);
}

/* reset(): one undoable patch back to the default state (freed before any error). */
static int l_reset(lua_State *L) {
  nsx_ctx *c = ctx_of(L);
  char err[NS_ERRLEN];
  ns_state d;
  if (ns_state_init(&d, err) != 0) return luaL_error(L, "reset: %s", err);
  ns_state_patch p;
  ns_patch_from_state(&p, &d);
  int rc = ns_history_apply(c->h, c->s, &p, err);
  ns_state_free(&d);
  if (rc != 0) return luaL_error(L, "reset: %s", err);
  changed(c);
  return 0;
}

void nsx_open(lua_State *L, ns_state *s, ns_history *h, void (*on_change)(void *), void *ud) {
  static const luaL_Reg fns[] = {{"set", l_set},   {"get", l_get},     {"undo", l_undo},
                                 {"redo", l_redo}, {"reset", l_reset}, {"result", l_result},
                                 {NULL, NULL}};
  lua_pushglobaltable(L);                          /* G */
  nsx_ctx *c = lua_newuserdatauv(L, sizeof *c, 0); /* G ctx */
  c->s = s;
  c->h = h;
  c->on_change = on_change;
  c->ud = ud;
  luaL_setfuncs(L, fns, 1); /* each function keeps ctx as upvalue 1; pops ctx */
  lua_pop(L, 1);            /* G */
}
