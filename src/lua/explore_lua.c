/* explore_lua.c: the explorer state from Lua: set{}/get()/undo()/redo()/reset()/result()/
 * dump()/save()/load(), as globals over the screen's state (nsx_open) and as methods of a
 * headless explorer (ns.explorer()).
 *
 * set{} converts the whole table into one ns_state_patch first (any Lua error on the
 * way leaves the state untouched), then calls ns_history_apply once. The conversion goes
 * by the field's TYPE in the table of fields.h, never by field. Everything it allocates
 * lives in a garbage-collected "patch box" from the moment it exists, so an error in the
 * middle of the table leaks nothing. */
#include "lua/explore_lua.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>

#include "explore/file.h"
#include "explore/panelfig.h"
#include "lua/nsl.h"
#include "lua/nsl_budget.h"
#include "lua/nsl_field.h"
#include "lua/nsl_priv.h"

#define PATCHBOX_MT "normscope.explore.patch"
#define EXPLORER_MT "normscope.explorer"

/* A state file is text of at most this size. */
#define MAX_STATE_FILE ((size_t)1 << 28)
/* Work a state file may do (it is data: one set{} call): VM instructions, pattern steps and
 * tensor elements (nsl_budget.h), and the wall-clock seconds it may take; a large file
 * (x's values written out) gets one more unit per byte and one more second per 8 MiB, so
 * the largest, 256 MiB, may take 42 s on a loaded machine (parsing it takes a few). */
#define STATE_FILE_BUDGET 100000000
#define STATE_FILE_SECONDS 10.0
#define STATE_FILE_BYTES_PER_SECOND ((size_t)8 << 20)
/* The count hook of a state file runs every this many instructions. */
#define STATE_FILE_HOOK_EVERY 1000
/* Memory a state file may take while it runs, above what the state had before. */
#define STATE_FILE_MEMORY ((size_t)1 << 30)

typedef struct {
  ns_state_patch p;
  void *owned[NS_F_COUNT]; /* what the conversion allocated, per field */
  int notes; /* stack index of the table of what file loads skipped (set{} returns them) */
} patchbox;

struct nsx_ctx {
  ns_state *s;
  ns_history *h;
  void (*on_change)(void *);
  void *ud;
  const nsx_view *view;
  void *view_ud;
};

/* The headless explorer: a context that owns its state and history. */
typedef struct {
  nsx_ctx c;
  ns_state st;
  ns_history hist;
  int live;
} explorer;

static void free_owned(patchbox *b) {
  for (int f = 0; f < NS_F_COUNT; f++) {
    if (!b->owned[f]) continue;
    if (ns_fields[f].type == NS_FT_TENSOR)
      ns_tensor_free(b->owned[f]);
    else
      free(b->owned[f]);
    b->owned[f] = NULL;
  }
}

static int patchbox_gc(lua_State *L) {
  patchbox *b = luaL_checkudata(L, 1, PATCHBOX_MT);
  free_owned(b);
  return 0;
}

static patchbox *new_patchbox(lua_State *L) {
  nsl_gcmeta(L, PATCHBOX_MT, patchbox_gc);
  patchbox *b = nsl_newobj(L, sizeof *b, PATCHBOX_MT); /* +1 */
  ns_patch_init(&b->p);
  return b;
}

static const char *type_of(lua_State *L, int idx) {
  return luaL_typename(L, idx);
}

static lua_Integer get_integer(lua_State *L, int idx, const char *field) {
  lua_Integer v;
  char err[NS_ERRLEN];
  if (nsl_field_integer(L, idx, field, &v, err) != 0) luaL_error(L, "set: %s", err);
  return v;
}

static int get_int_range(lua_State *L, int idx, const char *field, lua_Integer lo, lua_Integer hi) {
  lua_Integer v = get_integer(L, idx, field);
  if (v < lo || v > hi) luaL_error(L, "set: %s: must be %I to %I, got %I", field, lo, hi, v);
  return (int)v;
}

/* Protected body: converts argument 1 into a tensor stored at the slot (argument 2). */
static int tensorlike_raw(lua_State *L) {
  ns_tensor **slot = lua_touserdata(L, 2);
  const char *what = lua_tostring(L, 3);
  *slot = nsl_checktensorlike(L, 1, what);
  return 0;
}

/* {file = PATH [, sha256 = HEX]}: the tensor of a file, checked against the digest of its
 * data when one is given (a dumped state names its large input that way). */
static ns_tensor *file_tensor(lua_State *L, int idx, const char *field, patchbox *b) {
  lua_getfield(L, idx, "file");
  if (lua_type(L, -1) != LUA_TSTRING)
    luaL_error(L, "set: %s: file must be a path string, got %s", field, type_of(L, -1));
  const char *given = lua_tostring(L, -1);
  /* a lesson's sandbox reads its own data, named beside it with a digest */
  int has_digest = lua_getfield(L, idx, "sha256") != LUA_TNIL;
  lua_pop(L, 1);
  char where[4096];
  nsl_datafile(L, given, given, has_digest, where, sizeof where);
  const char *path = where;
  lua_getfield(L, idx, "tensor"); /* the tensor of a .safetensors file with several */
  const char *name = lua_tostring(L, -1);
  if (!lua_isnil(L, -1) && !name)
    luaL_error(L, "set: %s: tensor must be the name of a tensor of the file", field);
  char err[NS_ERRLEN], note[NS_ERRLEN];
  ns_tensor *t = ns_file_load_note(path, name, 0, note, err);
  if (!t) luaL_error(L, "set: %s: %s: %s", field, path, err);
  if (note[0] && b->notes) { /* what the load skipped (a CSV header), as ns.load says it */
    lua_pushfstring(L, "%s: %s: %s", field, path, note);
    lua_rawseti(L, b->notes, (lua_Integer)lua_rawlen(L, b->notes) + 1);
  }
  lua_getfield(L, idx, "sha256");
  if (!lua_isnil(L, -1)) {
    char hex[65];
    size_t wl = 0;
    const char *want = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &wl) : NULL;
    int hexdigits = want && wl == 64;
    for (size_t i = 0; hexdigits && i < wl; i++)
      hexdigits = isxdigit((unsigned char)want[i]) && !isupper((unsigned char)want[i]);
    if (!hexdigits) {
      ns_tensor_free(t);
      luaL_error(L, "set: %s: sha256 must be a string of 64 lowercase hex digits, got %s", field,
                 nsl_got(L, -1));
    }
    ns_tensor_digest(t, hex);
    if (strcmp(want, hex) != 0) {
      ns_tensor_free(t);
      luaL_error(L,
                 "set: %s: %s has changed since the state was saved (sha256 of its data differs)",
                 field, path);
    }
  }
  lua_pop(L, 1);
  /* the file (and tensor) becomes the source, "path" or "path:name" */
  size_t sl = strlen(path) + (name ? strlen(name) + 1 : 0) + 1;
  char *src = malloc(sl);
  if (src) snprintf(src, sl, name ? "%s:%s" : "%s", path, name);
  lua_pop(L, 2); /* name, path */
  if (src) {
    free(b->owned[NS_F_SOURCE]); /* a source read before x: the file's name replaces it */
    b->owned[NS_F_SOURCE] = src;
    b->p.v.source = src;
    ns_patch_set(&b->p, NS_F_SOURCE);
  }
  return t;
}

/* Converts the value at idx into a tensor owned by the patch box. Errors from the
 * binding ("bad argument #1 to '?' (x must be ...)") are reworded as "set: x must be ...". */
static ns_tensor *get_tensor(lua_State *L, int idx, const char *field, patchbox *b, int f) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) == LUA_TTABLE) {
    lua_getfield(L, idx, "file");
    int is_file = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (is_file) return (ns_tensor *)(b->owned[f] = file_tensor(L, idx, field, b));
  }
  ns_tensor **slot = (ns_tensor **)&b->owned[f];
  lua_pushcfunction(L, tensorlike_raw);
  lua_pushvalue(L, idx);
  lua_pushlightuserdata(L, slot);
  lua_pushstring(L, field);
  if (lua_pcall(L, 3, 0, 0) != LUA_OK) {
    nsl_budget *bg = nsl_budget_of(L);
    if (bg && bg->spent) lua_error(L); /* the budget's own message, as it is */
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
  return *slot;
}

/* A list of doubles from a number, an array/nested table or a tensor. An empty table
 * gives n = 0. The array is owned by the patch box. */
static double *get_doubles(lua_State *L, int idx, const char *field, patchbox *b, int f,
                           size_t *n) {
  idx = lua_absindex(L, idx);
  *n = 0;
  if (lua_type(L, idx) == LUA_TNUMBER) {
    double *v = b->owned[f] = malloc(sizeof *v);
    if (!v) luaL_error(L, "set: %s: out of memory", field);
    v[0] = lua_tonumber(L, idx);
    *n = 1;
    return v;
  }
  if (lua_type(L, idx) == LUA_TTABLE) {
    lua_pushnil(L);
    if (lua_next(L, idx) == 0) return NULL; /* {}: none */
    lua_pop(L, 2);
  } else if (!nsl_totensor(L, idx)) {
    luaL_error(L, "set: %s: expected a number, an array of numbers or a tensor, got %s", field,
               type_of(L, idx));
  }
  patchbox *tmp = new_patchbox(L); /* holds the temporary tensor */
  tmp->notes = b->notes;
  /* in a tensor field's slot, so the box's GC frees it as a tensor (not just its struct) */
  ns_tensor *t = get_tensor(L, idx, field, tmp, NS_F_X);
  double *v = b->owned[f] = malloc(t->n * sizeof *v);
  if (!v) luaL_error(L, "set: %s: out of memory", field);
  ns_tensor_read(t, v);
  *n = t->n;
  lua_pop(L, 1); /* the temporary box (the GC frees its tensor) */
  return v;
}

#define AT(s, T, off) ((T *)((char *)(s) + (off)))

/* Reads one field (key at -2, value at -1) into the patch box. */
static void read_field(lua_State *L, patchbox *b, const ns_state *s) {
  if (lua_type(L, -2) != LUA_TSTRING)
    luaL_error(L, "set: field names must be strings, got a %s key", type_of(L, -2));
  const char *name = lua_tostring(L, -2);
  int f = ns_field_parse(name);
  if (f < 0)
    luaL_error(L, "set: unknown field '%s' (get() lists the fields)",
               nsl_safe(L, name, lua_rawlen(L, -2)));
  const ns_field_desc *d = &ns_fields[f];
  int v = lua_absindex(L, -1);
  ns_state *pv = &b->p.v;
  ns_patch_set(&b->p, (ns_field)f);
  switch (d->type) {
  case NS_FT_TENSOR:
    if ((d->flags & NS_FF_FALSE_RESETS) && lua_type(L, v) == LUA_TBOOLEAN && !lua_toboolean(L, v))
      *AT(pv, ns_tensor *, d->off) = NULL; /* back to the derived one */
    else
      *AT(pv, ns_tensor *, d->off) = get_tensor(L, v, name, b, f);
    break;
  case NS_FT_STRING: {
    if (lua_type(L, v) != LUA_TSTRING)
      luaL_error(L, "set: %s: expected a string, got %s", name, type_of(L, v));
    if (b->owned[f]) break; /* set by x = {file = ...} already: that wins */
    size_t len;
    const char *str = lua_tolstring(L, v, &len);
    char *c = b->owned[f] = malloc(len + 1);
    if (!c) luaL_error(L, "set: %s: out of memory", name);
    memcpy(c, str, len + 1);
    *AT(pv, char *, d->off) = c;
    break;
  }
  case NS_FT_ENUM:
  case NS_FT_TRIBOOL:
  case NS_FT_INT:
  case NS_FT_DOUBLE: { /* the reader ns.normalize{} shares */
    char err[NS_ERRLEN];
    if (nsl_field_scalar(L, v, d, pv, err) != 0) luaL_error(L, "set: %s", err);
    break;
  }
  case NS_FT_AXES: {
    unsigned m = 0;
    if (lua_type(L, v) == LUA_TSTRING && strcmp(lua_tostring(L, v), "default") == 0) {
    } else if (lua_type(L, v) == LUA_TNUMBER) {
      m = 1u << (get_int_range(L, v, name, 1, NS_MAXRANK) - 1);
    } else if (lua_type(L, v) == LUA_TTABLE) {
      lua_Integer len = (lua_Integer)lua_rawlen(L, v);
      if (len == 0) luaL_error(L, "set: %s: give at least one axis, or \"default\"", name);
      for (lua_Integer i = 1; i <= len; i++) {
        lua_rawgeti(L, v, i);
        int a = get_int_range(L, -1, name, 1, NS_MAXRANK);
        lua_pop(L, 1);
        if (m & (1u << (a - 1))) luaL_error(L, "set: %s: axis %d given twice", name, a);
        m |= 1u << (a - 1);
      }
    } else {
      luaL_error(L, "set: %s: expected an array of 1-based axes or \"default\", got %s", name,
                 type_of(L, v));
    }
    *AT(pv, unsigned, d->off) = m;
    break;
  }
  case NS_FT_DOUBLES: {
    size_t n = 0;
    double *a = NULL;
    if ((d->flags & NS_FF_FALSE_RESETS) && lua_type(L, v) == LUA_TBOOLEAN && !lua_toboolean(L, v)) {
      a = NULL; /* back to the derived value */
    } else {
      a = get_doubles(L, v, name, b, f, &n);
      if ((d->flags & NS_FF_FALSE_RESETS) && n == 0)
        luaL_error(L, "set: %s: give the values, or false to reset", name);
    }
    *AT(pv, double *, d->off) = a;
    *AT(pv, size_t, d->count) = n;
    break;
  }
  case NS_FT_SEED:
    if (lua_type(L, v) == LUA_TSTRING) {
      const char *str = lua_tostring(L, v);
      char *end;
      errno = 0;
      unsigned long long u = strtoull(str, &end, 10);
      if (!*str || *end || str[0] == '-' || str[0] == '+' || str[0] == ' ' || errno)
        luaL_error(L, "set: %s: '%s' is not an integer from 0 to 2^64-1", name,
                   nsl_safe(L, str, lua_rawlen(L, v)));
      *AT(pv, uint64_t, d->off) = (uint64_t)u;
    } else {
      lua_Integer i = get_integer(L, v, name);
      if (i < 0) luaL_error(L, "set: %s: must be >= 0, got %I", name, i);
      *AT(pv, uint64_t, d->off) = (uint64_t)i;
    }
    break;
  case NS_FT_MOMENTUM:
    if (lua_type(L, v) == LUA_TBOOLEAN && !lua_toboolean(L, v)) {
      pv->cumulative = 1;
      pv->momentum = s->momentum;
    } else if (lua_type(L, v) == LUA_TNUMBER) {
      pv->cumulative = 0;
      pv->momentum = lua_tonumber(L, v);
    } else {
      luaL_error(L, "set: %s: expected a number in (0, 1] or false, got %s", name,
                 lua_type(L, v) == LUA_TBOOLEAN ? "true" : type_of(L, v));
    }
    break;
  case NS_FT_COUNT:
    break;
  }
}

/* ---- work (nsl_budget.h units: one per element touched, one per NSL_FLOPS operations) */

/* Elements the state holds (x, the batch, the arrays): what a copy or a compare touches. */
static double state_work(const ns_state *s) {
  return (double)ns_state_bytes(s) / 8;
}

/* What ns_explore_compute costs on s: the normalization of x with its probes and
 * statistics (about 10 units an element: 0.17 s for a million); up to
 * NS_EXPLORE_JAC_FULL_LIMIT elements the full Jacobians (analytic and FD) and their
 * spectra, about 7 n^3 / NSL_FLOPS (0.55 s at 1024); the batch and train/eval panels. */
static double compute_work(const ns_state *s) {
  double n = (double)s->x->n, w = 10 * n + state_work(s);
  if (s->x->n <= NS_EXPLORE_JAC_FULL_LIMIT) w += 2 * n * n + 7 * n * n * n / NSL_FLOPS;
  w += 20 * (double)s->train_batches * (double)s->batch_size + 20 * (double)s->batch->n;
  return w;
}

/* The memory ns_explore_compute takes besides tensors: its scratch, at most
 * NS_EXPLORE_SCRATCH_PER_ELEMENT bytes an element, and up to NS_EXPLORE_JAC_FULL_LIMIT
 * elements its Jacobians and their spectra's workspace, a few n x n arrays of doubles. */
static size_t compute_bytes(const ns_state *s) {
  size_t n = s->x->n, b = NS_EXPLORE_SCRATCH_PER_ELEMENT * n;
  return n <= NS_EXPLORE_JAC_FULL_LIMIT ? b + 6 * n * n * sizeof(double) : b;
}

/* ns_explore_compute with its scratch charged to the sandbox's memory account (if any). */
static int compute_charged(lua_State *L, const ns_state *s, ns_result *r, char *err) {
  size_t bytes = compute_bytes(s);
  if (ns_mem_charge(bytes) != 0)
    return luaL_error(L, "computing the panels of %I elements needs %I MiB: over the memory cap",
                      (lua_Integer)s->x->n, (lua_Integer)((bytes + (1 << 20) - 1) >> 20));
  int rc = ns_explore_compute(s, r, err);
  ns_mem_uncharge(bytes);
  return rc;
}

/* The view's fields of a set{} table go to the view (after the state's have applied). */
static int is_view_field(const nsx_view *view, const char *name) {
  for (int i = 0; view && view->fields && view->fields[i]; i++)
    if (strcmp(view->fields[i], name) == 0) return 1;
  return 0;
}

/* Applies the set{} table at idx. With push_notes, pushes what the tensor files' loads
 * skipped, one string each ("x: a.csv: its line 1, a,b, is a header of names: skipped"),
 * and returns how many; without, pushes nothing and returns 0. */
static int settable_ctx(lua_State *L, int idx, nsx_ctx *c, int push_notes) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) != LUA_TTABLE)
    return luaL_error(L, "set: expected a table of fields, e.g. set{eps = 0}, got %s",
                      type_of(L, idx));
  if (c->view) { /* the view's push also starts its pending copy from the view as it is */
    lua_newtable(L);
    c->view->push(L, c->view_ud);
    lua_pop(L, 1);
  }
  lua_newtable(L); /* +1: the notes */
  int notes = lua_gettop(L);
  patchbox *b = new_patchbox(L); /* +1 */
  b->notes = notes;
  int nview = 0;
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) { /* key at -2, value at -1 */
    if (lua_type(L, -2) == LUA_TSTRING && is_view_field(c->view, lua_tostring(L, -2))) {
      char err[NS_ERRLEN] = "";
      if (c->view->check(L, c->view_ud, lua_tostring(L, -2), lua_absindex(L, -1), err) != 0)
        luaL_error(L, "set: %s: %s", lua_tostring(L, -2), err);
      nview++;
    } else if (lua_type(L, -2) == LUA_TSTRING && (strcmp(lua_tostring(L, -2), "focus") == 0 ||
                                                  strcmp(lua_tostring(L, -2), "cursor") == 0 ||
                                                  strcmp(lua_tostring(L, -2), "figure") == 0)) {
      /* view hints: only a screen has them; headless they are accepted and ignored, so a
         lesson or a state file runs the same with and without one */
    } else {
      read_field(L, b, c->s);
    }
    lua_pop(L, 1); /* drop value, keep key */
  }
  char err[NS_ERRLEN];
  /* the checks of the whole state (about 5 us), each old value compared and kept */
  double work = 256 + state_work(c->s);
  for (int f = 0; f < NS_F_COUNT; f++) /* the new tensors copied in */
    if (ns_fields[f].type == NS_FT_TENSOR && ns_patch_has(&b->p, (ns_field)f)) {
      const ns_tensor *t = *(ns_tensor *const *)((const char *)&b->p.v + ns_fields[f].off);
      if (t) work += 2 * (double)t->n;
    }
  nsl_charge(L, work);
  if (ns_history_apply(c->h, c->s, &b->p, err) != 0) luaL_error(L, "set: %s", err);
  if (nview) c->view->commit(c->view_ud);
  lua_pop(L, 1); /* the patch box; the GC frees what it holds */
  int n = push_notes ? (int)lua_rawlen(L, notes) : 0;
  luaL_checkstack(L, n, "set: too many notes");
  for (int i = 1; i <= n; i++) lua_rawgeti(L, notes, i);
  lua_remove(L, notes);
  return n;
}

int nsx_settable(lua_State *L, int idx, ns_state *s, ns_history *h) {
  nsx_ctx c = {s, h, NULL, NULL, NULL, NULL};
  return settable_ctx(L, idx, &c, 0);
}

static void push_doubles(lua_State *L, const double *v, size_t n) {
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    lua_pushnumber(L, v[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

/* Pushes the value of field f of s as get() shows it. */
static void push_field(lua_State *L, const ns_state *s, int f) {
  const ns_field_desc *d = &ns_fields[f];
  const char *base = (const char *)s;
  switch (d->type) {
  case NS_FT_TENSOR:
    if (*(ns_tensor *const *)(base + d->off))
      nsl_pushtensor(L, ns_tensor_copy(*(ns_tensor *const *)(base + d->off)));
    else
      lua_pushboolean(L, 0);
    break;
  case NS_FT_STRING: {
    const char *str = *(char *const *)(base + d->off);
    lua_pushstring(L, str ? str : "");
    break;
  }
  case NS_FT_ENUM: {
    int k = *(const int *)(base + d->off);
    lua_pushstring(L, k < 0 ? "default" : d->names[k]);
    break;
  }
  case NS_FT_TRIBOOL: {
    int k = *(const int *)(base + d->off);
    if (k < 0)
      lua_pushliteral(L, "default");
    else
      lua_pushboolean(L, k);
    break;
  }
  case NS_FT_AXES: {
    unsigned m = *(const unsigned *)(base + d->off);
    if (!m) {
      lua_pushliteral(L, "default");
      break;
    }
    lua_newtable(L);
    for (int a = 0, k = 0; a < NS_MAXRANK; a++)
      if ((m >> a) & 1u) {
        lua_pushinteger(L, a + 1);
        lua_rawseti(L, -2, ++k);
      }
    break;
  }
  case NS_FT_INT:
    lua_pushinteger(L, *(const int *)(base + d->off));
    break;
  case NS_FT_DOUBLE:
    if (isnan(*(const double *)(base + d->off)) && (d->flags & NS_FF_DEFAULT))
      lua_pushliteral(L, "default");
    else
      lua_pushnumber(L, *(const double *)(base + d->off));
    break;
  case NS_FT_DOUBLES:
    push_doubles(L, *(double *const *)(base + d->off), *(const size_t *)(base + d->count));
    break;
  case NS_FT_SEED: {
    uint64_t v = *(const uint64_t *)(base + d->off);
    if (v <= (uint64_t)LUA_MAXINTEGER) {
      lua_pushinteger(L, (lua_Integer)v);
    } else {
      char buf[32];
      snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
      lua_pushstring(L, buf);
    }
    break;
  }
  case NS_FT_MOMENTUM:
    if (s->cumulative)
      lua_pushboolean(L, 0);
    else
      lua_pushnumber(L, s->momentum);
    break;
  case NS_FT_COUNT:
    lua_pushnil(L);
    break;
  }
}

void nsx_pushstate(lua_State *L, const ns_state *s) {
  lua_createtable(L, 0, NS_F_COUNT);
  for (int f = 0; f < NS_F_COUNT; f++) {
    push_field(L, s, f);
    lua_setfield(L, -2, ns_fields[f].name);
  }
}

static void push_matrix(lua_State *L, const double *v, size_t rows, size_t cols) {
  size_t shape[2] = {rows, cols};
  char err[NS_ERRLEN];
  ns_tensor *t = ns_tensor_from(2, shape, NS_FP64, v, err);
  if (!t) luaL_error(L, "result: %s", err);
  nsl_pushtensor(L, t);
}

/* t[k] = an array of the n values, for the table on top. */
static void setdoubles(lua_State *L, const char *k, const double *v, size_t n) {
  push_doubles(L, v, n);
  lua_setfield(L, -2, k);
}

/* t[k] = a rows x cols fp64 tensor of v, for the table on top. */
static void setmatrix(lua_State *L, const char *k, const double *v, size_t rows, size_t cols) {
  push_matrix(L, v, rows, cols);
  lua_setfield(L, -2, k);
}

static void setnum(lua_State *L, const char *k, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}

static void setstr(lua_State *L, const char *k, const char *v) {
  lua_pushstring(L, v);
  lua_setfield(L, -2, k);
}

/* ---- result(): the values of ns_result that Lua sees, one row each. A section is one
 * table of result() (the top, jacobian, batch, ...); a row says the key, how the member
 * is pushed, and when: always, only when the section's part is done, or only when it is
 * not. The values that are not one member (cond, the eigenvector checks, the sign
 * flips, the estimators, the precision per algorithm) are pushed by the code after. */

typedef enum {
  RV_NUM,
  RV_INT,
  RV_BOOL,
  RV_STR,
  RV_SOME_STR,
  RV_TENSOR,
  RV_DOUBLES,
  RV_MATRIX,
  RV_EIGS
} rv_type;
enum { RV_ALWAYS, RV_DONE, RV_NOT_DONE };
typedef struct {
  const char *key;
  unsigned char type, when;
  size_t off, size;      /* the member */
  size_t n1, s1, n2, s2; /* its count (rows), and columns for a matrix */
} rv_row;

#define RM_(m) offsetof(ns_result, m), sizeof(((const ns_result *)0)->m)
#define RV(key, type, when, m)                                                                     \
  { key, type, when, RM_(m), 0, 0, 0, 0 }
#define RVN(key, type, when, m, n)                                                                 \
  { key, type, when, RM_(m), RM_(n), 0, 0 }
#define RVM(key, when, m, rows, cols)                                                              \
  { key, RV_MATRIX, when, RM_(m), RM_(rows), RM_(cols) }

/* An int or size_t member, by its size. */
static size_t rv_count(const ns_result *r, size_t off, size_t size) {
  const char *p = (const char *)r + off;
  return size == sizeof(int) ? (size_t) * (const int *)p : *(const size_t *)p;
}

static void push_rows(lua_State *L, const ns_result *r, const rv_row *rows, size_t nrows,
                      int done) {
  for (size_t i = 0; i < nrows; i++) {
    const rv_row *w = &rows[i];
    if ((w->when == RV_DONE && !done) || (w->when == RV_NOT_DONE && done)) continue;
    const char *p = (const char *)r + w->off;
    switch (w->type) {
    case RV_NUM:
      lua_pushnumber(L, *(const double *)p);
      break;
    case RV_INT:
      lua_pushinteger(L, (lua_Integer)rv_count(r, w->off, w->size));
      break;
    case RV_BOOL:
      lua_pushboolean(L, *(const int *)p);
      break;
    case RV_SOME_STR:
      if (!p[0]) continue;
      /* fall through */
    case RV_STR:
      lua_pushstring(L, p);
      break;
    case RV_TENSOR:
      nsl_pushtensor(L, ns_tensor_copy(*(ns_tensor *const *)p));
      break;
    case RV_DOUBLES:
      push_doubles(L, *(const double *const *)p, rv_count(r, w->n1, w->s1));
      break;
    case RV_MATRIX:
      push_matrix(L, *(const double *const *)p, rv_count(r, w->n1, w->s1),
                  rv_count(r, w->n2, w->s2));
      break;
    case RV_EIGS:
      nsl_pusheigs(L, *(const ns_eig *const *)p, (int)rv_count(r, w->n1, w->s1));
      break;
    }
    lua_setfield(L, -2, w->key);
  }
}
#define PUSH_ROWS(L, r, rows, done) push_rows(L, r, rows, sizeof rows / sizeof rows[0], done)

/* clang-format off */
static const rv_row rv_top[] = {
    RV("n", RV_INT, RV_ALWAYS, n),
    RV("x_mean", RV_NUM, RV_ALWAYS, x_mean), RV("x_std", RV_NUM, RV_ALWAYS, x_std),
    RV("x_rms", RV_NUM, RV_ALWAYS, x_rms), RV("x_min", RV_NUM, RV_ALWAYS, x_min),
    RV("x_max", RV_NUM, RV_ALWAYS, x_max),
    RV("y", RV_TENSOR, RV_ALWAYS, norm.y),
    RV("y_mean", RV_NUM, RV_ALWAYS, y_mean), RV("y_std", RV_NUM, RV_ALWAYS, y_std),
    RVN("mean", RV_DOUBLES, RV_ALWAYS, norm.mean, norm.plan.nstat),
    RVN("var", RV_DOUBLES, RV_ALWAYS, norm.var, norm.plan.nstat),
    RVN("denom", RV_DOUBLES, RV_ALWAYS, norm.denom, norm.plan.nstat),
    RV("ndegenerate", RV_INT, RV_ALWAYS, norm.ndegenerate),
    RV("y_shift", RV_TENSOR, RV_ALWAYS, y_shift), RV("y_scale", RV_TENSOR, RV_ALWAYS, y_scale),
    RV("shift_dev", RV_NUM, RV_ALWAYS, shift_dev), RV("scale_dev", RV_NUM, RV_ALWAYS, scale_dev),
};
/* the closed form and its checks along the eigenvectors exist at any size */
static const rv_row rv_jacobian[] = {
    RV("done", RV_BOOL, RV_ALWAYS, jac_done),
    RVN("closed", RV_EIGS, RV_ALWAYS, spec_closed, nclosed),
    RV("closed_skip", RV_SOME_STR, RV_ALWAYS, closed_skip),
    RV("closed_rank", RV_INT, RV_ALWAYS, closed_rank),
    RV("check_ok", RV_BOOL, RV_ALWAYS, eigchk_ok),
    RV("skip", RV_STR, RV_NOT_DONE, jac_skip),
    RV("fd_diff", RV_NUM, RV_DONE, jac_fd_diff),
    RVN("numeric", RV_EIGS, RV_DONE, spec_numeric, nnumeric),
    RVN("fd", RV_EIGS, RV_DONE, spec_fd, nfd),
    RV("closed_vs_numeric", RV_NUM, RV_DONE, eig_closed_vs_numeric),
    RV("numeric_vs_fd", RV_NUM, RV_DONE, eig_numeric_vs_fd),
    RV("disagree", RV_NUM, RV_DONE, eig_disagree),
    RV("smax", RV_NUM, RV_DONE, smax), RV("rank_tol", RV_NUM, RV_DONE, rank_tol),
    RV("rank", RV_INT, RV_DONE, rank), RV("symmetric", RV_BOOL, RV_DONE, symmetric),
};
static const rv_row rv_batch[] = {
    RVM("bn", RV_ALWAYS, bn, B, D), RVM("ln", RV_ALWAYS, ln, B, D),
    RVN("target_now", RV_DOUBLES, RV_ALWAYS, target_now, D),
    RVN("target_base", RV_DOUBLES, RV_ALWAYS, target_base, D),
    RV("nflip", RV_INT, RV_ALWAYS, nflip),
};
static const rv_row rv_train[] = {
    RV("d", RV_INT, RV_ALWAYS, train_d), RV("n", RV_INT, RV_ALWAYS, train_n),
    RVM("eval_x", RV_ALWAYS, eval_x, eval_n, train_d),
    RVN("eval_mean", RV_DOUBLES, RV_ALWAYS, eval_mean, train_d),
    RVN("eval_var", RV_DOUBLES, RV_ALWAYS, eval_var, train_d),
    RVM("eval_y", RV_ALWAYS, eval_y, eval_n, train_d),
    RV("shift_gap", RV_NUM, RV_ALWAYS, shift_gap),
    RV("eval_loc", RV_NUM, RV_ALWAYS, eval_loc_used),
    RV("eval_scale", RV_NUM, RV_ALWAYS, eval_scale_used),
};
static const rv_row rv_residual[] = {
    RV("done", RV_BOOL, RV_ALWAYS, resid_done), RV("skip", RV_STR, RV_NOT_DONE, resid_skip),
    RVM("W", RV_DONE, W, rw, rw), RVM("J_none", RV_DONE, J_none, rn, rn),
    RVM("J_pre", RV_DONE, J_pre, rn, rn), RVM("J_post", RV_DONE, J_post, rn, rn),
    RVN("sv_pre", RV_DOUBLES, RV_DONE, sv_pre, rn), RVN("sv_post", RV_DOUBLES, RV_DONE, sv_post, rn),
    RV("rank_pre", RV_INT, RV_DONE, rank_pre), RV("rank_post", RV_INT, RV_DONE, rank_post),
};
static const rv_row rv_backward[] = {
    RV("done", RV_BOOL, RV_ALWAYS, vjp_done), RV("skip", RV_STR, RV_NOT_DONE, vjp_skip),
    RVN("g", RV_DOUBLES, RV_DONE, g, vn), RVN("dx", RV_DOUBLES, RV_DONE, dx, vn),
    RVN("direct", RV_DOUBLES, RV_DONE, dx_direct, vn),
    RVN("via_mean", RV_DOUBLES, RV_DONE, dx_mean, vn),
    RVN("via_var", RV_DOUBLES, RV_DONE, dx_var, vn),
    RVN("dgamma", RV_DOUBLES, RV_DONE, dgamma, naffine),
    RVN("dbeta", RV_DOUBLES, RV_DONE, dbeta, naffine),
    RV("sum_max", RV_NUM, RV_DONE, dx_sum_max), RV("xhat_max", RV_NUM, RV_DONE, dx_xhat_max),
    RV("vs_jtg", RV_NUM, RV_DONE, vjp_vs_jtg),
};
static const rv_row rv_precision[] = {RV("ref", RV_NUM, RV_ALWAYS, var_ref)};
/* clang-format on */

/* What each section adds to its rows by hand (the parts that are not one member). */
static void push_top_extra(lua_State *L, const ns_result *r) {
  setstr(L, "cond", ns_cond_names[(unsigned)r->cond < NS_COND_COUNT ? r->cond : 0]);
  if (r->cond != NS_COND_NONE) setstr(L, "why", r->degenerate_why);
  if (r->eval_note) setstr(L, "eval_note", r->eval_note);
}

static void push_jacobian_extra(lua_State *L, const ns_result *r) {
  lua_createtable(L, r->neigchk, 0); /* {stat=, label=, value=, jvp=, jvp_tol=, fd=, fd_tol=} */
  for (int i = 0; i < r->neigchk; i++) {
    const ns_eigcheck *ck = &r->eigchk[i];
    lua_createtable(L, 0, 7);
    lua_pushinteger(L, (lua_Integer)r->eigchk_stat[i] + 1);
    lua_setfield(L, -2, "stat");
    setstr(L, "label", ns_label_name(ck->label));
    setnum(L, "value", ck->value);
    setnum(L, "jvp", ck->jvp_res);
    setnum(L, "jvp_tol", ck->jvp_tol);
    setnum(L, "fd", ck->fd_res);
    setnum(L, "fd_tol", ck->fd_tol);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "check");
}

static void push_batch_extra(lua_State *L, const ns_result *r) {
  lua_createtable(L, (int)r->D, 0);
  for (size_t j = 0; j < r->D; j++) {
    lua_pushboolean(L, r->flip[j]);
    lua_rawseti(L, -2, (lua_Integer)j + 1);
  }
  lua_setfield(L, -2, "flip");
}

static void push_train_extra(lua_State *L, const ns_result *r) {
  for (int k = 0; k < 3; k++) {
    lua_createtable(L, 0, 5);
    setdoubles(L, "mean", r->est[k].mean, r->train_d);
    setdoubles(L, "var", r->est[k].var, r->train_d);
    setmatrix(L, "y", r->est[k].y, r->eval_n, r->train_d);
    setnum(L, "gap", r->est[k].gap);
    setnum(L, "estimator_gap", r->est_gap[k]);
    lua_setfield(L, -2, r->est[k].name);
  }
  setstr(L, "active", r->est[r->est_active].name);
}

static void push_precision_extra(lua_State *L, const ns_result *r) {
  setstr(L, "dtype", ns_dtype_name(r->prec_dtype));
  setstr(L, "acc", ns_dtype_name(r->prec_acc));
  for (int a = 0; a < 3; a++) {
    lua_createtable(L, 0, 4);
    setnum(L, "var", r->var_algo[a]);
    setnum(L, "relerr", r->var_relerr[a]);
    setnum(L, "digits", r->var_digits[a]);
    setnum(L, "lost", r->var_lost[a]);
    lua_setfield(L, -2, ns_algo_name((ns_algo)a));
  }
}

/* The sections of result(), in order: the table's key (NULL: the top level), its rows, the
 * member that says whether the deferred part was computed (RV_DONE/RV_NOT_DONE rows; 0:
 * always), and the keys its extra function pushes (words of ns.result_keys(), which a test
 * compares with what result() returns). */
typedef struct {
  const char *name;
  const rv_row *rows;
  size_t nrows;
  size_t done_off; /* offset of an int member, or (size_t)-1: always done */
  void (*extra)(lua_State *L, const ns_result *r);
  const char *members;       /* the ns_result members extra reads, space-separated */
  const char *extra_keys[8]; /* "key type" */
} rv_section;
#define RV_SEC(name, rows, done, extra, members, ...)                                              \
  {                                                                                                \
    name, rows, sizeof rows / sizeof rows[0], done, extra, members, {                              \
      __VA_ARGS__                                                                                  \
    }                                                                                              \
  }
#define RV_ALWAYS_DONE ((size_t)-1)
/* clang-format off */
static const rv_section rv_sections[] = {
    RV_SEC(NULL, rv_top, RV_ALWAYS_DONE, push_top_extra, "cond degenerate_why eval_note",
           "cond choice", "why string (when cond is not none)", "eval_note string (eval mode)"),
    RV_SEC("jacobian", rv_jacobian, offsetof(ns_result, jac_done), push_jacobian_extra,
           "eigchk eigchk_stat neigchk",
           "check array of {stat, label, value, jvp, jvp_tol, fd, fd_tol}"),
    RV_SEC("batch", rv_batch, RV_ALWAYS_DONE, push_batch_extra, "flip", "flip array of booleans"),
    RV_SEC("train", rv_train, RV_ALWAYS_DONE, push_train_extra, "est est_gap est_active",
           "momentum {mean, var, y, gap, estimator_gap}", "cumulative (as momentum)",
           "exact (as momentum)", "active string"),
    RV_SEC("residual", rv_residual, offsetof(ns_result, resid_done), NULL, ""),
    RV_SEC("backward", rv_backward, offsetof(ns_result, vjp_done), NULL, ""),
    RV_SEC("precision", rv_precision, RV_ALWAYS_DONE, push_precision_extra,
           "prec_dtype prec_acc var_algo var_relerr var_digits var_lost", "dtype string",
           "acc string", "twopass {var, relerr, digits, lost}", "welford (as twopass)",
           "raw (as twopass)"),
};
/* The members of ns_result that result() does not show, and why: the screen's details of
 * how a value was computed (counts, steps, tolerances, the map the FD ran on), the pending
 * flags of a deferred part, the matrices Lua gets as spectra, the figure's traces. */
static const char rv_not_shown[] =
    "x_nan x_inf evalsrc cond_dtype cond_value probe_n probe_axis probe_k y_probe eigchk_jvp "
    "eigchk_fd eigchk_m eigchk_pending jac_pending jn J J_fd jac_exact jac_dtype jac_acc jac_algo jac_fd_h "
    "jac_fd_err jac_fd_s jac_tol jac_fd_tol trace_mean trace_var prec_n";
/* clang-format on */

static int rv_done(const ns_result *r, const rv_section *sec) {
  return sec->done_off == RV_ALWAYS_DONE ? 1 : *(const int *)((const char *)r + sec->done_off);
}

void nsx_pushresult(lua_State *L, const ns_result *r) {
  lua_createtable(L, 0, 24);
  for (size_t i = 0; i < sizeof rv_sections / sizeof rv_sections[0]; i++) {
    const rv_section *sec = &rv_sections[i];
    if (sec->name) lua_createtable(L, 0, (int)sec->nrows + 4);
    push_rows(L, r, sec->rows, sec->nrows, rv_done(r, sec));
    if (sec->extra) sec->extra(L, r);
    if (sec->name) lua_setfield(L, -2, sec->name);
  }
}

/* ns.result_keys() -> {{section=, key=, type=, when=}...}: what result() returns, from the
 * tables above ("" is the top level; when: "always", "done" or "not done" of the section's
 * deferred part; the hand-pushed keys have type words and when "always"). */
static int l_result_keys(lua_State *L) {
  static const char *const types[] = {
      "number", "integer", "boolean", "string",     "string (when not empty)",
      "tensor", "array",   "matrix",  "eigenvalues"};
  static const char *const whens[] = {"always", "done", "not done"};
  lua_newtable(L);
  lua_Integer k = 0;
  for (size_t i = 0; i < sizeof rv_sections / sizeof rv_sections[0]; i++) {
    const rv_section *sec = &rv_sections[i];
    for (size_t j = 0; j < sec->nrows + 8; j++) {
      const char *key, *type, *when = whens[0];
      char buf[96];
      if (j < sec->nrows) {
        key = sec->rows[j].key;
        type = types[sec->rows[j].type];
        when = whens[sec->rows[j].when];
      } else {
        const char *e = sec->extra_keys[j - sec->nrows];
        if (!e) break;
        const char *sp = strchr(e, ' ');
        snprintf(buf, sizeof buf, "%.*s", (int)(sp - e), e);
        key = buf;
        type = sp + 1;
      }
      lua_createtable(L, 0, 4);
      setstr(L, "section", sec->name ? sec->name : "");
      setstr(L, "key", key);
      setstr(L, "type", type);
      setstr(L, "when", when);
      lua_rawseti(L, -2, ++k);
    }
  }
  return 1;
}

/* The members of ns_result (result.h's list), for nsx_result_check. */
#define RV_MEMBER_(part, own, type, m, dim)                                                        \
  {#m, offsetof(ns_result, m), sizeof(((ns_result *)0)->m)},
static const struct {
  const char *name;
  size_t off, size;
} rv_members[] = {NS_RESULT(RV_MEMBER_)};
#undef RV_MEMBER_

/* 1 when the space-separated words hold name. */
static int has_word(const char *words, const char *name) {
  size_t n = strlen(name);
  for (const char *w = words; *w;) {
    while (*w == ' ') w++;
    size_t k = strcspn(w, " ");
    if (k == n && strncmp(w, name, n) == 0) return 1;
    w += k;
  }
  return 0;
}

static int rv_member_index(const char *name, size_t len) {
  for (size_t i = 0; i < sizeof rv_members / sizeof rv_members[0]; i++)
    if (strlen(rv_members[i].name) == len && strncmp(rv_members[i].name, name, len) == 0)
      return (int)i;
  return -1;
}

/* How result() covers member i: 1 a row pushes it (or part of it, or counts with it), 2 an
 * extra function reads it, 4 it is listed as not shown. */
static int rv_cover(size_t i) {
  size_t a = rv_members[i].off, z = a + rv_members[i].size;
  int how = 0;
  for (size_t k = 0; k < sizeof rv_sections / sizeof rv_sections[0]; k++) {
    const rv_section *sec = &rv_sections[k];
    for (size_t j = 0; j < sec->nrows; j++) {
      const rv_row *w = &sec->rows[j];
      int counts = (w->s1 && w->n1 >= a && w->n1 < z) || (w->s2 && w->n2 >= a && w->n2 < z);
      if ((w->off >= a && w->off < z) || counts) how |= 1;
    }
    if (has_word(sec->members, rv_members[i].name)) how |= 2;
  }
  if (has_word(rv_not_shown, rv_members[i].name)) how |= 4;
  return how;
}

static void rv_complain(char *err, size_t len, const char *what, const char *name, int nlen) {
  size_t u = strlen(err);
  if (u + 1 < len) snprintf(err + u, len - u, "%s%s %.*s", u ? "; " : "", what, nlen, name);
}

/* Every word of words names a member. */
static void rv_check_words(const char *words, char *err, size_t len) {
  for (const char *w = words; *w;) {
    while (*w == ' ') w++;
    size_t k = strcspn(w, " ");
    if (k && rv_member_index(w, k) < 0) rv_complain(err, len, "no such member:", w, (int)k);
    w += k;
  }
}

int nsx_result_check(char *err, size_t len) {
  err[0] = 0;
  for (size_t i = 0; i < sizeof rv_members / sizeof rv_members[0]; i++) {
    int how = rv_cover(i);
    const char *nm = rv_members[i].name;
    if (!how) rv_complain(err, len, "neither shown by result() nor listed as not shown:", nm, -1);
    if ((how & 4) && (how & 3)) rv_complain(err, len, "shown, yet listed as not shown:", nm, -1);
  }
  for (size_t k = 0; k < sizeof rv_sections / sizeof rv_sections[0]; k++)
    rv_check_words(rv_sections[k].members, err, len);
  rv_check_words(rv_not_shown, err, len);
  return err[0] ? -1 : 0;
}

/* ---------------------------------------------------------------- the functions */

/* The context and the index of the first real argument: a global gets its context as
 * upvalue 1; a method (e:set{...}) from its explorer at argument 1. */
static nsx_ctx *ctx_args(lua_State *L, int *arg) {
  nsx_ctx *c = lua_touserdata(L, lua_upvalueindex(1));
  if (c) {
    *arg = 1;
    return c;
  }
  explorer *e = luaL_checkudata(L, 1, EXPLORER_MT);
  if (!e->live) luaL_error(L, "explorer: already closed");
  *arg = 2;
  return &e->c;
}

/* A result record in a userdata, so a Lua error while it is pushed frees it. */
static int resultbox_gc(lua_State *L) {
  ns_result_free(lua_touserdata(L, 1));
  return 0;
}

static int l_result(lua_State *L) {
  int a;
  nsx_ctx *c = ctx_args(L, &a);
  nsl_gcmeta(L, "normscope.explore.result", resultbox_gc);
  ns_result *r = nsl_newobj(L, sizeof *r, "normscope.explore.result"); /* +1 */
  char err[NS_ERRLEN];
  nsl_charge(L, compute_work(c->s));
  if (compute_charged(L, c->s, r, err) != 0) return luaL_error(L, "result: %s", err);
  nsx_pushresult(L, r);
  ns_result_free(r); /* the box stays valid (zeroed) until the GC */
  return 1;
}

static void changed(nsx_ctx *c) {
  if (c->on_change) c->on_change(c->ud);
}

/* set{...} -> what the tensor files' loads skipped, a string each (none: no results), in
 * the words of ns.load's second result with the field first */
static int l_set(lua_State *L) {
  int a;
  nsx_ctx *c = ctx_args(L, &a);
  int n = settable_ctx(L, a, c, 1);
  changed(c);
  return n;
}

static int l_get(lua_State *L) {
  int a;
  nsx_ctx *c = ctx_args(L, &a);
  nsl_charge(L, 2 * state_work(c->s));
  nsx_pushstate(L, c->s);
  if (c->view) c->view->push(L, c->view_ud); /* the screen adds focus, cursor */
  return 1;
}

/* undo() and redo(): step is ns_history_undo or ns_history_redo; true if it did one. */
static int history_step(lua_State *L, int (*step)(ns_history *, ns_state *)) {
  int a;
  nsx_ctx *c = ctx_args(L, &a);
  nsl_charge(L, state_work(c->s));
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
  int a;
  nsx_ctx *c = ctx_args(L, &a);
  char err[NS_ERRLEN];
  ns_state d;
  nsl_charge(L, state_work(c->s));
  if (ns_state_init(&d, err) != 0) return luaL_error(L, "reset: %s", err);
  ns_state_patch p;
  ns_patch_from_state(&p, &d);
  int rc = ns_history_apply(c->h, c->s, &p, err);
  ns_state_free(&d);
  if (rc != 0) return luaL_error(L, "reset: %s", err);
  changed(c);
  return 0;
}

/* dump() -> the state as a Lua chunk of set{...} that reproduces it bit for bit. */
static int l_dump(lua_State *L) {
  int a;
  nsx_ctx *c = ctx_args(L, &a);
  char err[NS_ERRLEN];
  nsl_charge(L, 16 * state_work(c->s)); /* each number printed in %.17g */
  char *text = ns_state_dump(c->s, NS_DUMP_INLINE_MAX, err);
  if (!text) return luaL_error(L, "dump: %s", err);
  nsl_pushtext_free(L, text, strlen(text));
  return 1;
}

/* save(FILE): dump() written atomically; true. */
static int l_save(lua_State *L) {
  int a;
  nsx_ctx *c = ctx_args(L, &a);
  const char *path = luaL_checkstring(L, a);
  nsl_checkfiles(L, path);
  char err[NS_ERRLEN];
  if (nsx_save(c->s, path, err) != 0) return luaL_error(L, "save: %s: %s", path, err);
  lua_pushboolean(L, 1);
  return 1;
}

/* Count hook of a state file: data, not a program, so a small budget (the hook also looks at
 * the clock and at Ctrl-C). */
static void budget_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  nsl_budget *b = nsl_budget_of(L);
  if (b && nsl_budget_add(b, STATE_FILE_HOOK_EVERY)) nsl_budget_raise(L, b);
}

static void state_file_message(lua_State *L, nsl_budget *b) {
  if (b->spent == NSL_SPENT_INTERRUPT)
    lua_pushliteral(L, "interrupted (Ctrl-C); the state is as it was");
  else if (b->spent == NSL_SPENT_TIME)
    lua_pushfstring(L,
                    "the file runs too long for a state file (over %d s; it should be one "
                    "set{...} call)",
                    (int)b->seconds);
  else
    lua_pushliteral(L, "the file runs too long for a state file (it should be one set{...} call)");
}

/* Strings' methods, as a state file reaches them (("x"):find(p)): a copy of the table the
 * strings' metatable has, with the matcher and rep that charge the budget (nsl_bounded.c).
 * Pushes the metatable's old __index (nil when strings have no metatable) for
 * restore_strings. */
static void bound_strings(lua_State *L) {
  lua_pushliteral(L, "");
  if (!lua_getmetatable(L, -1)) { /* "" */
    lua_pop(L, 1);
    lua_pushnil(L);
    return;
  }
  lua_remove(L, -2);              /* mt */
  lua_getfield(L, -1, "__index"); /* mt old */
  lua_newtable(L);                /* mt old copy */
  if (lua_type(L, -2) == LUA_TTABLE) {
    lua_pushnil(L);
    while (lua_next(L, -3)) { /* mt old copy k v */
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_rawset(L, -4);
    }
  }
  nsl_bound_string(L, -1);
  lua_setfield(L, -3, "__index"); /* mt old */
  lua_remove(L, -2);              /* old */
}

static void restore_strings(lua_State *L, int old) {
  lua_pushliteral(L, "");
  if (lua_getmetatable(L, -1)) {
    lua_pushvalue(L, old);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* The allocator while a state file runs (its parse included): the state's own, refusing
 * growth past the budget, tensors counted (net of what the file frees), so a file cannot
 * take all memory ((""):rep(...), a table of a billion numbers). */
typedef struct {
  lua_Alloc f;
  void *ud;
  size_t used, limit;
  ns_mem_account *acct; /* the tensors the file makes (core/tensor.h) */
  int refused;
} membudget;

static void *budget_alloc(void *ud, void *p, size_t osize, size_t nsize) {
  membudget *m = ud;
  size_t old = p ? osize : 0, held = m->used + ns_mem_used(m->acct);
  if (nsize > old && (held > m->limit || nsize - old > m->limit - held)) {
    m->refused = 1;
    return NULL;
  }
  void *q = m->f(m->ud, p, osize, nsize);
  if (q || nsize == 0) {
    if (nsize > old)
      m->used += nsize - old;
    else /* freeing what the state held before gives room too, down to nothing used */
      m->used -= old - nsize < m->used ? old - nsize : m->used;
  }
  return q;
}

/* A tensor that would not fit: the collector frees what the file dropped first. */
static void state_file_reclaim(void *ud) {
  lua_gc(ud, LUA_GCCOLLECT);
  lua_gc(ud, LUA_GCCOLLECT);
}

/* Raises the error at the top, prefixed with "load: PATH: " unless it names the file
 * already (as syntax and runtime errors do; a binary chunk or the budget does not). */
static void chunk_error(lua_State *L, const char *chunkname) {
  const char *m = lua_tostring(L, -1), *path = chunkname + (chunkname[0] == '@');
  if (m && strncmp(m, path, strlen(path)) != 0) lua_pushfstring(L, "load: %s: %s", path, m);
  lua_error(L);
}

typedef struct {
  nsx_ctx *c;
  const char *text, *chunkname;
  size_t len;
} chunk_args;

/* Protected body: parses the text and runs it with only set (into c), ns.tensor and math.huge
 * in its environment: a state file is data, so it gets no io, os, require or load. */
static int state_chunk_raw(lua_State *L) {
  chunk_args *a = lua_touserdata(L, 1);
  if (luaL_loadbufferx(L, a->text, a->len, a->chunkname, "t") != LUA_OK) return lua_error(L);
  lua_createtable(L, 0, 2); /* env */
  lua_pushlightuserdata(L, a->c);
  lua_pushcclosure(L, l_set, 1);
  lua_setfield(L, -2, "set");
  lua_createtable(L, 0, 1); /* ns: only the tensor constructor */
  lua_getglobal(L, "ns");
  if (lua_istable(L, -1)) {
    lua_getfield(L, -1, "tensor");
    lua_setfield(L, -3, "tensor");
  }
  lua_pop(L, 1);
  lua_setfield(L, -2, "ns");
  lua_setupvalue(L, -2, 1); /* the chunk's _ENV */
  lua_call(L, 0, 0);
  return 0;
}

/* Runs a state file's text (chunkname "@PATH") against c under the file's limits: memory
 * (STATE_FILE_MEMORY for its Lua heap, its parse and its tensors), work and time
 * (STATE_FILE_BUDGET, STATE_FILE_SECONDS) and Ctrl-C; its strings' methods are the bounded
 * ones while it runs. Raises "load: PATH: ..." on any failure. */
static void run_state_chunk(lua_State *L, nsx_ctx *c, const char *text, size_t len,
                            const char *chunkname) {
  chunk_args a = {c, text, chunkname, len};
  membudget m = {0};
  m.limit = STATE_FILE_MEMORY;
  m.used = len;     /* the text, held while the file runs */
  bound_strings(L); /* old (the strings' own __index) */
  int old_index = lua_gettop(L);
  if (!(m.acct = ns_mem_account_new(STATE_FILE_MEMORY))) { /* made last: nothing leaks it */
    restore_strings(L, old_index);
    luaL_error(L, "load: out of memory");
  }
  ns_mem_account_set_owner(m.acct, &m.used, state_file_reclaim, L);
  lua_pushcfunction(L, state_chunk_raw);
  lua_pushlightuserdata(L, &a);
  /* from here to the end nothing raises: the allocator, the hook and the account are the
   * file's until they are put back */
  m.f = lua_getallocf(L, &m.ud);
  lua_setallocf(L, budget_alloc, &m);
  /* the caller's hook (a lesson's instruction budget, the REPL's interrupt) comes back after */
  lua_Hook old_hook = lua_gethook(L);
  int old_mask = lua_gethookmask(L), old_count = lua_gethookcount(L);
  nsl_budget b = {.limit = STATE_FILE_BUDGET + (long long)len,
                  .seconds = STATE_FILE_SECONDS + (double)(len / STATE_FILE_BYTES_PER_SECOND),
                  .message = state_file_message};
  nsl_budget_enter(L, &b);
  ns_mem_account *caller = ns_mem_account_use(m.acct);
  lua_sethook(L, budget_hook, LUA_MASKCOUNT, STATE_FILE_HOOK_EVERY);
  int rc = lua_pcall(L, 1, 0, 0);
  lua_sethook(L, old_hook, old_mask, old_count);
  ns_mem_account_use(caller);
  nsl_budget_leave(L, &b);
  lua_setallocf(L, m.f, m.ud);
  int over = m.refused || ns_mem_refused(m.acct);
  ns_mem_account_release(m.acct); /* the tensors the state keeps keep it */
  restore_strings(L, old_index);
  lua_remove(L, old_index);
  if (rc != LUA_OK && over && !b.spent) {
    lua_pop(L, 1);
    lua_pushfstring(L,
                    "the file needs more than %d MB of memory (a state file is one set{...} call)",
                    (int)(STATE_FILE_MEMORY >> 20));
  }
  if (rc != LUA_OK) chunk_error(L, chunkname);
}

/* The copy of the state a state file runs against (freed by the GC after an error). */
typedef struct {
  nsx_ctx c;
  ns_state st;
  int live;
} loadbox;

static void loadbox_free(loadbox *b) {
  if (b->live) ns_state_free(&b->st);
  b->live = 0;
}

static int loadbox_gc(lua_State *L) {
  loadbox_free(lua_touserdata(L, 1));
  return 0;
}

/* load(FILE): applies a state file written by save() or dump() (one undo step). The file
 * runs against a copy of the state, so an error anywhere in it (a second set{} that fails,
 * a runtime error after the first) leaves the state as it was. */
static int l_load(lua_State *L) {
  int a;
  nsx_ctx *c = ctx_args(L, &a);
  const char *path = luaL_checkstring(L, a);
  nsl_checkfiles(L, path);
  char err[NS_ERRLEN];
  size_t len = 0;
  nsl_gcmeta(L, "normscope.explore.load", loadbox_gc);
  loadbox *b = nsl_newobj(L, sizeof *b, "normscope.explore.load"); /* +1 */
  if (ns_state_copy(&b->st, c->s, err) != 0) return luaL_error(L, "load: %s", err);
  b->live = 1;
  b->c = *c;
  b->c.s = &b->st;
  b->c.h = NULL;
  b->c.on_change = NULL;
  char *text = ns_file_read(path, MAX_STATE_FILE, &len, err);
  if (!text) return luaL_error(L, "load: %s: %s", path, err);
  nsl_pushtext_free(L, text, len);
  lua_pushfstring(L, "@%s", path);
  size_t tl;
  const char *t = lua_tolstring(L, -2, &tl);
  run_state_chunk(L, &b->c, t, tl, lua_tostring(L, -1));
  ns_state_patch p;
  ns_patch_from_state(&p, &b->st);
  int rc = ns_history_apply(c->h, c->s, &p, err);
  loadbox_free(b);
  if (rc != 0) return luaL_error(L, "load: %s: %s", path, err);
  changed(c);
  lua_pushboolean(L, 1);
  return 1;
}

/* nsx_load_text's work in protected mode: l_load's steps over a chunk in memory. */
typedef struct {
  ns_state *s;
  ns_history *h;
  const char *text, *name;
  size_t len;
} load_text_args;

static int load_text_protected(lua_State *L) {
  load_text_args *g = lua_touserdata(L, 1);
  char err[NS_ERRLEN];
  nsl_gcmeta(L, "normscope.explore.load", loadbox_gc);
  loadbox *b = nsl_newobj(L, sizeof *b, "normscope.explore.load"); /* +1 */
  if (ns_state_copy(&b->st, g->s, err) != 0) return luaL_error(L, "%s", err);
  b->live = 1;
  memset(&b->c, 0, sizeof b->c);
  b->c.s = &b->st;
  run_state_chunk(L, &b->c, g->text, g->len, g->name);
  ns_state_patch p;
  ns_patch_from_state(&p, &b->st);
  int rc = ns_history_apply(g->h, g->s, &p, err);
  loadbox_free(b);
  if (rc != 0) return luaL_error(L, "%s: %s", g->name, err);
  return 0;
}

int nsx_load_text(lua_State *L, ns_state *s, ns_history *h, const char *text, size_t len,
                  const char *name, char *err) {
  load_text_args g = {s, h, text, name, len};
  lua_pushcfunction(L, load_text_protected);
  lua_pushlightuserdata(L, &g);
  if (lua_pcall(L, 1, 0, 0) == LUA_OK) return 0;
  const char *m = lua_tostring(L, -1);
  snprintf(err, NS_ERRLEN, "%s", m ? m : "error object is not a string");
  lua_pop(L, 1);
  return -1;
}

/* ---------------------------------------------------------------- plot(panel) */

/* plot's options, checked against this one list. */
static const char *const plot_opt_names[] = {"width", "height", "ascii", "glyphs",
                                             "color", "cursor", NULL};

/* {row, col} (1-based) at idx into o->row, o->col (0-based); errors blame argument arg. */
static void plot_cursor(lua_State *L, int idx, int arg, const char *what, ns_panelfig_opts *o) {
  idx = lua_absindex(L, idx);
  lua_Integer rc[2];
  if (lua_type(L, idx) != LUA_TTABLE || lua_rawlen(L, idx) != 2)
    nsl_argerror(L, arg, "%s must be {row, col} (1-based), got %s", what, nsl_got(L, idx));
  for (int k = 0; k < 2; k++) {
    lua_rawgeti(L, idx, k + 1);
    if (!nsl_intat(L, -1, 1, (lua_Integer)1 << 40, &rc[k]))
      nsl_argerror(L, arg, "%s[%d] (the %s) must be an integer >= 1, got %s", what, k + 1,
                   k ? "column" : "row", nsl_got(L, -1));
    lua_pop(L, 1);
  }
  o->row = (size_t)(rc[0] - 1);
  o->col = (size_t)(rc[1] - 1);
}

/* plot([panel] [, opts]) -> the figure of a panel (explore/panelfig.h) as a string of lines,
 * the cells the screen's figure view shows at that size (without the empty rows below).
 * panel: a name of ns_panel_names (default: the screen's focused panel, headless the
 * first, "input"); opts: width (20..1000, default 100), height (6..500, default 30),
 * ascii, glyphs ("blocks", "braille", "ascii"), color (ANSI escapes), cursor ({row, col}:
 * the input figure's element; default the screen's cursor, else {1, 1}). On the screen it
 * also opens the figure view on the panel (the view fields focus and figure); headless it
 * only returns the text. */
static int l_plot(lua_State *L) {
  int a;
  nsx_ctx *c = ctx_args(L, &a);
  int pa = a, oa = a + 1; /* plot(opts) alone: the options */
  if (lua_type(L, a) == LUA_TTABLE && lua_isnone(L, a + 1)) pa = 0, oa = a;
  ns_panelfig_opts o;
  ns_panelfig_opts_init(&o);
  o.panel = NS_PANEL_INPUT;
  int screen = c->view && is_view_field(c->view, "focus") && is_view_field(c->view, "figure");
  if (c->view) { /* the screen's focus and cursor are the defaults */
    lua_newtable(L);
    c->view->push(L, c->view_ud);
    if (lua_getfield(L, -1, "focus") == LUA_TSTRING) {
      int k = ns_choice_parse(ns_panel_names, lua_tostring(L, -1));
      if (k >= 0) o.panel = (ns_panel)k;
    }
    lua_pop(L, 1);
    if (lua_getfield(L, -1, "cursor") == LUA_TTABLE) plot_cursor(L, -1, 0, "cursor", &o);
    lua_pop(L, 2);
  }
  if (pa && !lua_isnoneornil(L, pa)) {
    int k =
        lua_type(L, pa) == LUA_TSTRING ? ns_choice_parse(ns_panel_names, lua_tostring(L, pa)) : -1;
    if (k < 0) {
      char list[160];
      return nsl_argerror(L, pa, "panel must be one of %s, got %s",
                          ns_choice_list(ns_panel_names, list, sizeof list), nsl_got(L, pa));
    }
    o.panel = (ns_panel)k;
  }
  int color = 0;
  if (nsl_opttable(L, oa, "opts")) {
    nsl_checkfields(L, oa, "option", plot_opt_names);
    o.width = nsl_optint(L, oa, "width", NS_PANELFIG_MIN_W, 1000, o.width);
    o.height = nsl_optint(L, oa, "height", NS_PANELFIG_MIN_H, 500, o.height);
    o.glyphs = (plot_glyphs)nsl_optglyphs(L, oa);
    color = nsl_optbool(L, oa, "color", 0);
    o.color = color;
    if (lua_getfield(L, oa, "cursor") != LUA_TNIL) plot_cursor(L, -1, oa, "opts.cursor", &o);
    lua_pop(L, 1);
  }
  if (screen) { /* open the figure view on the panel, as set{focus = panel, figure = true} */
    char err[NS_ERRLEN] = "";
    lua_pushstring(L, ns_panel_names[o.panel]);
    lua_pushboolean(L, 1);
    int top = lua_gettop(L);
    if (c->view->check(L, c->view_ud, "focus", top - 1, err) != 0 ||
        c->view->check(L, c->view_ud, "figure", top, err) != 0)
      return luaL_error(L, "plot: %s", err);
    c->view->commit(c->view_ud);
    lua_pop(L, 2);
  }
  nsl_gcmeta(L, "normscope.explore.result", resultbox_gc);
  ns_result *r = nsl_newobj(L, sizeof *r, "normscope.explore.result"); /* +1 */
  char err[NS_ERRLEN];
  nsl_charge(L, compute_work(c->s) + 16 * (double)o.width * (double)o.height);
  if (compute_charged(L, c->s, r, err) != 0) return luaL_error(L, "plot: %s", err);
  ns_mem_account *acct = ns_mem_account_current();
  int was_refused = ns_mem_refused(acct);
  plot_canvas *cv = ns_panel_figure(c->s, r, &o, err);
  ns_result_free(r); /* the box stays valid (zeroed) until the GC */
  if (!cv) return luaL_error(L, "plot: %s", err);
  if (!was_refused && ns_mem_refused(acct)) { /* a part went unsaid for the memory cap */
    plot_canvas_free(cv);
    return luaL_error(L, "plot: the figure's scratch is over the memory cap");
  }
  char *text = color ? plot_canvas_ansi(cv) : plot_canvas_text(cv);
  plot_canvas_free(cv);
  if (!text) return luaL_error(L, "plot: out of memory");
  size_t len = strlen(text);
  while (len && text[len - 1] == '\n') len--; /* the empty rows below the figure */
  nsl_pushtext_free(L, text, len);
  return 1;
}

static const luaL_Reg state_fns[] = {{"set", l_set},   {"get", l_get},     {"undo", l_undo},
                                     {"redo", l_redo}, {"reset", l_reset}, {"result", l_result},
                                     {"dump", l_dump}, {"save", l_save},   {"load", l_load},
                                     {"plot", l_plot}, {NULL, NULL}};

const char *const nsx_function_names[] = {"set",  "get",  "undo", "redo", "reset", "result",
                                          "dump", "save", "load", "plot", NULL};

/* A one-line string ending in ".lua" names a state file (no Lua chunk ends that way). */
static int names_state_file(const char *s, size_t n) {
  return n > 4 && strcmp(s + n - 4, ".lua") == 0 && !memchr(s, '\n', n);
}

/* The global load: a state file when called with one string naming an existing file,
 * else Lua's own load (upvalue 2), so load(chunk) keeps working in the prompt. A missing
 * FILE.lua is an error naming it, not Lua's load of the name as a chunk. */
static int l_load_global(lua_State *L) {
  if (lua_gettop(L) == 1 && lua_type(L, 1) == LUA_TSTRING) { /* not opened: a FIFO blocks */
    size_t n;
    const char *path = lua_tolstring(L, 1, &n);
    if (access(path, F_OK) == 0) return l_load(L);
    if (names_state_file(path, n))
      return luaL_error(L, "load: %s: %s (nothing changed)", nsl_safe(L, path, n), strerror(errno));
  }
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

nsx_ctx *nsx_open_ex(lua_State *L, ns_state *s, ns_history *h, void (*on_change)(void *), void *ud,
                     unsigned flags) {
  lua_pushglobaltable(L);                          /* G */
  nsx_ctx *c = lua_newuserdatauv(L, sizeof *c, 0); /* G ctx */
  memset(c, 0, sizeof *c);
  c->s = s;
  c->h = h;
  c->on_change = on_change;
  c->ud = ud;
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, "normscope.explore.ctx"); /* keeps ctx alive */
  for (const luaL_Reg *r = state_fns; r->name; r++) {
    int file = strcmp(r->name, "save") == 0 || strcmp(r->name, "load") == 0;
    if (file && (flags & NSX_NO_FILES)) continue;
    lua_pushvalue(L, -1); /* G ctx ctx */
    if (strcmp(r->name, "load") == 0) {
      lua_getfield(L, -3, "load"); /* Lua's own load */
      lua_pushcclosure(L, l_load_global, 2);
    } else {
      lua_pushcclosure(L, r->func, 1);
    }
    lua_setfield(L, -3, r->name);
  }
  lua_pop(L, 2); /* ctx, G */
  return c;
}

nsx_ctx *nsx_open(lua_State *L, ns_state *s, ns_history *h, void (*on_change)(void *), void *ud) {
  return nsx_open_ex(L, s, h, on_change, ud, 0);
}

void nsx_set_view(nsx_ctx *c, const nsx_view *view, void *ud) {
  c->view = view;
  c->view_ud = ud;
}

int nsx_save(const ns_state *s, const char *path, char *err) {
  return ns_state_save(s, path, 0644, err);
}

/* ---------------------------------------------------------------- ns.explorer() */

static int explorer_gc(lua_State *L) {
  explorer *e = luaL_checkudata(L, 1, EXPLORER_MT);
  if (e->live) {
    ns_history_free(&e->hist);
    ns_state_free(&e->st);
    e->live = 0;
  }
  return 0;
}

static int explorer_tostring(lua_State *L) {
  explorer *e = luaL_checkudata(L, 1, EXPLORER_MT);
  if (!e->live) {
    lua_pushliteral(L, "explorer (closed)");
    return 1;
  }
  char shape[96], buf[200];
  ns_shape_format(e->st.x->rank, e->st.x->shape, shape, sizeof shape);
  snprintf(buf, sizeof buf, "explorer: x %s %s, %s norm, eps %g", shape,
           ns_dtype_name(e->st.x->dtype), ns_kind_name(e->st.kind), e->st.eps);
  lua_pushstring(L, buf);
  return 1;
}

/* Creates the explorers' metatable (when the module opens: a sandbox locks every metatable
 * of the module it finds then, so none may appear later where a lesson could reach it and
 * put a finalizer of its own in). */
static void explorer_meta(lua_State *L) {
  if (luaL_newmetatable(L, EXPLORER_MT)) {
    lua_pushcfunction(L, explorer_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, explorer_gc);
    lua_setfield(L, -2, "__close");
    lua_pushcfunction(L, explorer_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_newtable(L);
    for (const luaL_Reg *r = state_fns; r->name; r++) {
      lua_pushnil(L); /* upvalue 1 nil: the method form */
      lua_pushcclosure(L, r->func, 1);
      lua_setfield(L, -2, r->name);
    }
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
}

/* Protected body: applies the table at 1 to the explorer at 2. */
static int explorer_init_set(lua_State *L) {
  explorer *e = lua_touserdata(L, 2);
  settable_ctx(L, 1, &e->c, 0);
  return 0;
}

/* ns.explorer([state]) -> a headless explorer with the prompt's functions as methods;
 * `state` (a set{} table) is applied over the defaults. */
static int l_explorer(lua_State *L) {
  lua_settop(L, 1);
  if (!lua_isnoneornil(L, 1) && !lua_istable(L, 1))
    return nsl_argerror(L, 1, "state must be a table of fields, got %s", nsl_got(L, 1));
  explorer_meta(L);
  explorer *e = nsl_newobj(L, sizeof *e, EXPLORER_MT); /* +1 */
  char err[NS_ERRLEN];
  if (ns_state_init(&e->st, err) != 0) return luaL_error(L, "explorer: %s", err);
  ns_history_init(&e->hist, 1000);
  e->live = 1;
  e->c.s = &e->st;
  e->c.h = &e->hist;
  if (lua_istable(L, 1)) {
    lua_pushcfunction(L, explorer_init_set);
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 2); /* the explorer */
    if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
      nsl_budget *bg = nsl_budget_of(L);
      if (bg && bg->spent) lua_error(L); /* the budget's own message, as it is */
      const char *m = lua_tostring(L, -1);
      if (m && strncmp(m, "set: ", 5) == 0) m += 5;
      return nsl_argerror(L, 1, "state: %s", m ? m : "cannot apply it");
    }
    ns_history_free(&e->hist); /* the initial state is not an undo step */
    ns_history_init(&e->hist, 1000);
  }
  return 1;
}

/* ns.fields() -> the explorer state's fields in table order: {name=, type=, doc=,
 * choices= (enum names), lo=, hi= (ranges)}, for completion, help and tests. */
static int l_fields(lua_State *L) {
  lua_createtable(L, NS_F_COUNT, 0);
  for (int f = 0; f < NS_F_COUNT; f++) {
    const ns_field_desc *d = &ns_fields[f];
    lua_createtable(L, 0, 6);
    setstr(L, "name", d->name);
    setstr(L, "type", ns_ftype_names[d->type]);
    setstr(L, "doc", d->doc);
    if (d->names) {
      lua_newtable(L);
      int k = 0;
      for (; d->names[k]; k++) {
        lua_pushstring(L, d->names[k]);
        lua_rawseti(L, -2, k + 1);
      }
      if (d->flags & NS_FF_DEFAULT) {
        lua_pushliteral(L, "default");
        lua_rawseti(L, -2, k + 1);
      }
      lua_setfield(L, -2, "choices");
    }
    if (d->type == NS_FT_INT || d->type == NS_FT_DOUBLE || d->type == NS_FT_MOMENTUM) {
      setnum(L, "lo", d->lo);
      setnum(L, "hi", d->hi);
    }
    lua_rawseti(L, -2, f + 1);
  }
  return 1;
}

void nsx_open_module(lua_State *L) {
  explorer_meta(L);
  lua_pushcfunction(L, l_explorer);
  lua_setfield(L, -2, "explorer");
  lua_pushcfunction(L, l_fields);
  lua_setfield(L, -2, "fields");
  lua_pushcfunction(L, l_result_keys);
  lua_setfield(L, -2, "result_keys");
}
