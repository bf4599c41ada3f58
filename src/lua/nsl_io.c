/* nsl_io.c: ns.load / ns.save for .npy, .csv and .safetensors files, through the one
 * file loader of src/explore/file.h, with messages that name the path; ns.tensors lists a
 * .safetensors file; ns.audit runs the audit of src/audit/audit.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "audit/audit.h"
#include "explore/file.h"
#include "lua/nsl.h"
#include "lua/nsl_priv.h"

static const char *checkpath(lua_State *L, int arg) {
  if (lua_type(L, arg) != LUA_TSTRING)
    nsl_argerror(L, arg, "path must be a string, got %s", nsl_got(L, arg));
  size_t len;
  const char *p = lua_tolstring(L, arg, &len);
  if (len == 0) nsl_argerror(L, arg, "path is empty");
  if (strlen(p) != len) nsl_argerror(L, arg, "path contains a NUL byte");
  nsl_checkfiles(L, p);
  if (ns_file_kind_of(p) == NS_FILE_UNKNOWN)
    nsl_argerror(L, arg, "%s: unknown file type (the name must end in .npy, .csv or .safetensors)",
                 p);
  return p;
}

/* The tensor name and load flags of ns.load's second argument: a name, or a table
 * {tensor=NAME, bf16=true}. */
static const char *load_opts(lua_State *L, int arg, const char *path, unsigned *flags) {
  static const char *const names[] = {"tensor", "bf16", NULL};
  const char *name = NULL;
  *flags = 0;
  if (lua_type(L, arg) == LUA_TSTRING) {
    name = lua_tostring(L, arg);
  } else if (nsl_opttable(L, arg, "options")) {
    nsl_checkfields(L, arg, "load option", names);
    int ty = lua_getfield(L, arg, "tensor");
    if (ty == LUA_TSTRING)
      name = lua_tostring(L, -1);
    else if (ty != LUA_TNIL)
      nsl_argerror(L, arg, "tensor must be a string, got %s", nsl_got(L, -1));
    lua_pop(L, 1); /* the string stays alive in the options table */
    ty = lua_getfield(L, arg, "bf16");
    if (ty != LUA_TNIL && ty != LUA_TBOOLEAN)
      nsl_argerror(L, arg, "bf16 must be a boolean, got %s", nsl_got(L, -1));
    if (lua_toboolean(L, -1)) *flags |= NS_FILE_U2_BF16;
    lua_pop(L, 1);
  }
  if (name && ns_file_kind_of(path) != NS_FILE_SAFETENSORS)
    nsl_argerror(L, arg, "a tensor name is for .safetensors files, not %s", path);
  return name;
}

/* ns.load(path [, name | {tensor=, bf16=}]) -> tensor (.npy keeps the file's dtype, .csv
 * gives fp64 rank 2, .safetensors the named tensor, or its only one) [, note]: a second
 * result only when the load skipped something, saying what (a CSV header line, in the
 * words the screen's file open uses: "PATH: its line 1, a,b,c, is a header of names:
 * skipped"), as ns.spectrum's second result says which method it used */
static int l_load(lua_State *L) {
  lua_settop(L, 2); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN] = "", note[NS_ERRLEN];
  const char *path = checkpath(L, 1);
  unsigned flags;
  const char *name = load_opts(L, 2, path, &flags);
  ns_tensor *t = ns_file_load_note(path, name, flags, note, err);
  if (!t) return luaL_error(L, "%s: %s", path, err);
  nsl_pushtensor(L, t);
  if (!note[0]) return 1;
  lua_pushfstring(L, "%s: %s", path, note);
  return 2;
}

/* ns.tensors(path) -> {name = {dtype=, shape={...}, loadable=}} of a .safetensors file */
static int l_tensors(lua_State *L) {
  lua_settop(L, 1);
  char err[NS_ERRLEN] = "";
  const char *path = checkpath(L, 1);
  if (ns_file_kind_of(path) != NS_FILE_SAFETENSORS)
    return nsl_argerror(L, 1, "%s: ns.tensors lists .safetensors files", path);
  ns_st_index ix;
  if (ns_file_tensors(path, &ix, err) != 0) return luaL_error(L, "%s: %s", path, err);
  lua_createtable(L, 0, (int)(ix.ntensors < 1000 ? ix.ntensors : 1000));
  for (size_t k = 0; k < ix.ntensors; k++) {
    const ns_st_entry *e = &ix.t[k];
    lua_createtable(L, 0, 3);
    lua_pushstring(L, ns_st_dtype_names[e->dtype]);
    lua_setfield(L, -2, "dtype");
    lua_createtable(L, e->rank, 0);
    for (int d = 0; d < e->rank; d++) {
      lua_pushinteger(L, (lua_Integer)e->shape[d]);
      lua_rawseti(L, -2, d + 1);
    }
    lua_setfield(L, -2, "shape");
    lua_pushboolean(L, ns_st_loadable(&ix, k, NULL) == 0);
    lua_setfield(L, -2, "loadable");
    lua_setfield(L, -2, e->name); /* result[name] = info */
  }
  ns_st_free(&ix);
  return 1;
}

/* ns.save(path, t): writes .npy (t's dtype) or .csv (rank 1 or 2) atomically; true */
static int l_save(lua_State *L) {
  lua_settop(L, 2); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN] = "";
  const char *path = checkpath(L, 1);
  ns_tensor *t = nsl_tensorarg(L, 2, "t");
  if (ns_file_kind_of(path) == NS_FILE_CSV && t->rank > 2)
    return nsl_argerror(L, 2, "CSV holds rank 1 or 2 tensors, got rank %d (use .npy)", t->rank);
  if (ns_file_save(path, t, err) != 0) return luaL_error(L, "%s: %s", path, err);
  lua_pushboolean(L, 1);
  return 1;
}

/* Reads a running object or {mean=, var=} table into two Lua-owned arrays. */
static size_t audit_running(lua_State *L, int idx, int arg, double **mean, double **var) {
  ns_running *r = nsl_torunning(L, idx);
  if (r) {
    if (r->nstat == 0) nsl_argerror(L, arg, "running has no statistics yet (never updated)");
    *mean = nsl_scratch(L, r->nstat);
    *var = nsl_scratch(L, r->nstat);
    memcpy(*mean, r->mean, r->nstat * sizeof **mean);
    memcpy(*var, r->var, r->nstat * sizeof **var);
    return r->nstat;
  }
  if (lua_type(L, idx) != LUA_TTABLE)
    nsl_argerror(L, arg, "running must be a running object or {mean=, var=}, got %s",
                 nsl_got(L, idx));
  lua_getfield(L, idx, "mean");
  ns_tensor *m = nsl_tensorat(L, -1, arg, "running.mean");
  int top = lua_gettop(L);
  lua_getfield(L, idx, "var");
  ns_tensor *v = nsl_tensorat(L, -1, arg, "running.var");
  if (m->n != v->n)
    nsl_argerror(L, arg, "running.mean has %I values, running.var %I", (lua_Integer)m->n,
                 (lua_Integer)v->n);
  (void)top;
  *mean = nsl_scratch(L, m->n);
  *var = nsl_scratch(L, v->n);
  ns_tensor_read(m, *mean);
  ns_tensor_read(v, *var);
  return m->n;
}

static void push_finding(lua_State *L, const ns_audit_finding *f) {
  lua_createtable(L, 0, 4);
  lua_pushstring(L, ns_audit_check_names[f->check]);
  lua_setfield(L, -2, "check");
  lua_pushstring(L, ns_verdict_names[f->verdict]);
  lua_setfield(L, -2, "verdict");
  lua_pushnumber(L, f->value);
  lua_setfield(L, -2, "value");
  lua_pushstring(L, f->detail);
  lua_setfield(L, -2, "detail");
}

/* ns.audit(x_or_path [, {kind=, axes=, groups=, eps=, layout=, running=, tensor=}]) ->
 * the findings: r[1..n] in report order and r[check] by name, each {check=, verdict=,
 * value=, detail=}; r.text is the readable report; r.note, for a file whose open skipped
 * something (a CSV header), says what, in ns.load's words. */
static int l_audit(lua_State *L) {
  lua_settop(L, 2);
  static const char *const names[] = {"kind",    "axes",   "groups", "eps",   "layout",
                                      "running", "tensor", "bf16",   "chunk", NULL};
  static const char *const layouts[] = {"nchw", "nhwc", "ncl", "btd", "bd", NULL};
  char err[NS_ERRLEN] = "";
  ns_audit_opts o;
  ns_audit_opts_init(&o);
  const char *path = NULL, *tensor = NULL;
  unsigned flags = 0;
  ns_tensor *x = NULL;
  if (lua_type(L, 1) == LUA_TSTRING)
    path = checkpath(L, 1);
  else
    x = nsl_tensorarg(L, 1, "x");
  int rank = x ? x->rank : NS_MAXRANK;
  if (nsl_opttable(L, 2, "opts")) {
    nsl_checkfields(L, 2, "audit option", names);
    lua_getfield(L, 2, "kind");
    o.kind = (ns_kind)nsl_choiceat(L, -1, 2, "opts.kind", ns_kind_names, NS_KIND_LAYER);
    lua_pop(L, 1);
    lua_getfield(L, 2, "axes");
    o.axes = nsl_axesat(L, -1, 2, "opts.axes", rank);
    lua_pop(L, 1);
    if (lua_getfield(L, 2, "groups") != LUA_TNIL) {
      lua_Integer g;
      if (!nsl_intat(L, -1, 1, 1 << 30, &g))
        nsl_argerror(L, 2, "opts.groups must be an integer >= 1, got %s", nsl_got(L, -1));
      o.groups = (int)g;
    }
    lua_pop(L, 1);
    if (lua_getfield(L, 2, "eps") != LUA_TNIL) {
      if (lua_type(L, -1) != LUA_TNUMBER || !(lua_tonumber(L, -1) >= 0) ||
          !isfinite(lua_tonumber(L, -1)))
        nsl_argerror(L, 2, "opts.eps " NS_EPS_RULE ", got %s", nsl_got(L, -1));
      o.eps = lua_tonumber(L, -1);
    }
    lua_pop(L, 1);
    lua_getfield(L, 2, "layout");
    o.layout = lua_isnil(L, -1) ? -1 : nsl_choiceat(L, -1, 2, "opts.layout", layouts, 0);
    lua_pop(L, 1);
    if (lua_getfield(L, 2, "tensor") != LUA_TNIL) {
      if (lua_type(L, -1) != LUA_TSTRING)
        nsl_argerror(L, 2, "opts.tensor must be a string, got %s", nsl_got(L, -1));
      tensor = lua_tostring(L, -1);
    }
    lua_pop(L, 1);
    if (lua_getfield(L, 2, "bf16") != LUA_TNIL && lua_toboolean(L, -1)) flags |= NS_FILE_U2_BF16;
    lua_pop(L, 1);
    if (lua_getfield(L, 2, "chunk") != LUA_TNIL) { /* elements per streamed chunk (tests) */
      lua_Integer c;
      if (!nsl_intat(L, -1, 1, (lua_Integer)1 << 28, &c))
        nsl_argerror(L, 2, "opts.chunk must be an integer >= 1, got %s", nsl_got(L, -1));
      o.chunk = (size_t)c;
    }
    lua_pop(L, 1);
    if (lua_getfield(L, 2, "running") != LUA_TNIL) {
      double *m, *v;
      int at = lua_gettop(L);
      o.nrun = audit_running(L, at, 2, &m, &v); /* scratch stays on the stack */
      o.run_mean = m;
      o.run_var = v;
    } else {
      lua_pop(L, 1);
    }
  }
  if (tensor && !path) return nsl_argerror(L, 2, "opts.tensor is for a file path");
  if (!(o.kind == NS_KIND_GROUP) && o.groups != 1)
    return nsl_argerror(L, 2, "opts.groups is for kind \"group\"");
  ns_file_map m;
  memset(&m, 0, sizeof m);
  m.fd = -1;
  if (path && ns_file_map_open(&m, path, tensor, flags, err) != 0)
    return luaL_error(L, "%s: %s", path, err);
  const int *shape_rank = path ? &m.rank : &x->rank;
  const size_t *shape = path ? m.shape : x->shape;
  if (ns_audit_check_opts(&o, *shape_rank, shape, err) != 0) {
    if (path) ns_file_map_close(&m);
    return nsl_argerror(L, 2, "%s", err);
  }
  ns_audit_report *r = malloc(sizeof *r);
  if (!r) {
    if (path) ns_file_map_close(&m);
    return luaL_error(L, "audit: out of memory");
  }
  int rc = path ? ns_audit_run(&m, &o, r, err) : ns_audit_tensor(x, &o, r, err);
  char note[sizeof m.note + 1];
  snprintf(note, sizeof note, "%s", path ? m.note : "");
  if (path) ns_file_map_close(&m);
  if (rc != 0) {
    free(r);
    return luaL_error(L, "audit: %s", err);
  }
  char *text = ns_audit_format(r, NS_AUDIT_TEXT, path ? path : "x", 1);
  lua_createtable(L, (int)r->nfindings, (int)r->nfindings + 1);
  for (size_t k = 0; k < r->nfindings; k++) {
    push_finding(L, &r->f[k]);
    lua_pushvalue(L, -1);
    lua_rawseti(L, -3, (lua_Integer)k + 1);
    lua_setfield(L, -2, ns_audit_check_names[r->f[k].check]);
  }
  if (text)
    lua_pushstring(L, text);
  else
    lua_pushliteral(L, "");
  lua_setfield(L, -2, "text");
  if (note[0]) { /* what the open skipped (a CSV header), as ns.load's note says it */
    lua_pushfstring(L, "%s: %s", path, note);
    lua_setfield(L, -2, "note");
  }
  free(text);
  ns_audit_free(r);
  free(r);
  return 1;
}

static const luaL_Reg functions[] = {
    {"load", l_load}, {"save", l_save}, {"tensors", l_tensors}, {"audit", l_audit}, {NULL, NULL}};

void nsl_open_io(lua_State *L) {
  luaL_setfuncs(L, functions, 0);
}
