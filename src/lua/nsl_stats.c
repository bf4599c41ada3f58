/* nsl_stats.c: ns.moments, ns.merge, ns.round and the running-statistics object. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/estimators.h"
#include "core/moments.h"
#include "core/normalize.h"
#include "lua/nsl.h"
#include "lua/nsl_priv.h"

#define NSL_PLAN_MT "normscope.plan"

/* A non-negative integer field (ddof), def when absent. */
static int ddof_field(lua_State *L, int idx, int arg, const char *what, int def) {
  int ty = lua_getfield(L, idx, "ddof");
  int d = def;
  if (ty != LUA_TNIL) {
    lua_Integer v;
    if (!nsl_intat(L, -1, 0, 1000000, &v))
      nsl_argerror(L, arg, "%s.ddof must be an integer >= 0, got %s", what, nsl_got(L, -1));
    d = (int)v;
  }
  lua_pop(L, 1);
  return d;
}

/* acc: the precision var is rounded to (fp64 for merged moments, which are exact doubles) */
static void push_moments(lua_State *L, const ns_moments *m, int ddof, ns_dtype acc) {
  lua_createtable(L, 0, 5);
  lua_pushnumber(L, m->n);
  lua_setfield(L, -2, "n");
  lua_pushnumber(L, m->mean);
  lua_setfield(L, -2, "mean");
  lua_pushnumber(L, ns_moments_var_acc(m, ddof, acc));
  lua_setfield(L, -2, "var");
  lua_pushnumber(L, m->m2);
  lua_setfield(L, -2, "m2");
  lua_pushinteger(L, ddof);
  lua_setfield(L, -2, "ddof");
}

/* ns.moments(x [, {dtype=, acc=, algo=, ddof=, order=, mask=}]) -> {n=, mean=, var=, m2=, ddof=}
 * (mask: a tensor broadcastable to x of 1s and 0s; the 1s alone count, in index order) */
static int l_moments(lua_State *L) {
  lua_settop(L, 2); /* fixed argument slots: conversions push above them */
  static const char *const names[] = {"dtype", "acc", "algo", "ddof", "order", "mask", NULL};
  static const char *const algos[] = {"twopass", "welford", "raw", NULL}; /* ns_algo order */
  static const char *const orders[] = {"sequential", "pairwise", NULL};   /* ns_order order */
  ns_tensor *x = nsl_tensorarg(L, 1, "x");
  ns_dtype dtype = NS_FP64;
  int acc = -1, ddof = 0;
  ns_algo algo = NS_ALGO_TWOPASS;
  ns_order order = NS_ORDER_SEQUENTIAL;
  const ns_tensor *mask = NULL;
  if (nsl_opttable(L, 2, "opts")) {
    nsl_checkfields(L, 2, "option field", names);
    if (lua_getfield(L, 2, "dtype") != LUA_TNIL) dtype = nsl_dtypeat(L, -1, 2, "opts.dtype");
    lua_pop(L, 1);
    if (lua_getfield(L, 2, "acc") != LUA_TNIL) acc = (int)nsl_dtypeat(L, -1, 2, "opts.acc");
    lua_pop(L, 1);
    lua_getfield(L, 2, "algo");
    algo = (ns_algo)nsl_choiceat(L, -1, 2, "opts.algo", algos, NS_ALGO_TWOPASS);
    lua_pop(L, 1);
    ddof = ddof_field(L, 2, 2, "opts", 0);
    lua_getfield(L, 2, "order");
    order = (ns_order)nsl_choiceat(L, -1, 2, "opts.order", orders, NS_ORDER_SEQUENTIAL);
    lua_pop(L, 1);
    mask = nsl_maskat(L, 2, "mask", x, "opts.mask");
  }
  if (acc < 0) acc = (dtype == NS_FP16 || dtype == NS_BF16) ? NS_FP32 : dtype;
  double *v = nsl_scratch(L, x->n);
  ns_tensor_read(x, v);
  size_t n = x->n;
  if (mask) { /* the kept elements only, still in index order */
    unsigned char *keep = (unsigned char *)nsl_scratch(L, (x->n + 7) / 8);
    char err[NS_ERRLEN];
    if (ns_mask_expand(mask, x->rank, x->shape, keep, err) != 0)
      return nsl_argerror(L, 2, "opts.%s", err);
    n = 0;
    for (size_t i = 0; i < x->n; i++)
      if (keep[i]) v[n++] = v[i];
  }
  ns_moments m;
  ns_moments_compute_ex(v, n, 1, dtype, (ns_dtype)acc, algo, order, &m);
  push_moments(L, &m, ddof, (ns_dtype)acc);
  return 1;
}

/* Reads a moments table {n=, mean=, m2=} (or var= instead of m2, with its ddof). */
static void check_moments(lua_State *L, int idx, int arg, const char *what, ns_moments *m) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) != LUA_TTABLE)
    nsl_argerror(L, arg, "%s must be a moments table {n=, mean=, m2=}, got %s", what,
                 nsl_got(L, idx));
  if (lua_getfield(L, idx, "n") != LUA_TNUMBER || !(lua_tonumber(L, -1) >= 0))
    nsl_argerror(L, arg, "%s.n must be a number >= 0, got %s", what, nsl_got(L, -1));
  m->n = lua_tonumber(L, -1);
  lua_pop(L, 1);
  if (lua_getfield(L, idx, "mean") != LUA_TNUMBER)
    nsl_argerror(L, arg, "%s.mean must be a number, got %s", what, nsl_got(L, -1));
  m->mean = lua_tonumber(L, -1);
  lua_pop(L, 1);
  int ty = lua_getfield(L, idx, "m2");
  if (ty == LUA_TNUMBER) {
    m->m2 = lua_tonumber(L, -1);
  } else if (ty == LUA_TNIL) {
    if (lua_getfield(L, idx, "var") != LUA_TNUMBER)
      nsl_argerror(L, arg, "%s needs m2 (or var), got %s", what, nsl_got(L, -1));
    double var = lua_tonumber(L, -1);
    lua_pop(L, 1);
    int ddof = ddof_field(L, idx, arg, what, 0);
    m->m2 = var * (m->n - ddof);
  } else {
    nsl_argerror(L, arg, "%s.m2 must be a number, got %s", what, nsl_got(L, -1));
  }
  lua_pop(L, 1);
  if (m->n == 0) { /* an empty side contributes nothing */
    m->mean = 0;
    m->m2 = 0;
  }
}

/* ns.merge(a, b) -> the moments of the union (Chan et al.), ddof taken from a */
static int l_merge(lua_State *L) {
  lua_settop(L, 2); /* fixed argument slots: conversions push above them */
  ns_moments a, b;
  check_moments(L, 1, 1, "a", &a);
  check_moments(L, 2, 2, "b", &b);
  int ddof = ddof_field(L, 1, 1, "a", 0);
  ns_moments m = ns_moments_merge(a, b);
  push_moments(L, &m, ddof, NS_FP64);
  return 1;
}

/* ns.round(v, dtype) -> v correctly rounded to dtype (number, or tensor of v's storage) */
static int l_round(lua_State *L) {
  lua_settop(L, 2); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN];
  ns_dtype d = nsl_checkdtype(L, 2, "dtype", -1);
  if (lua_type(L, 1) == LUA_TNUMBER) {
    lua_pushnumber(L, ns_round(lua_tonumber(L, 1), d));
    return 1;
  }
  if (lua_type(L, 1) != LUA_TTABLE && !luaL_testudata(L, 1, NSL_TENSOR_MT))
    return nsl_argerror(L, 1, "value must be a number or a tensor, got %s", nsl_got(L, 1));
  ns_tensor *t = nsl_tensorarg(L, 1, "value");
  nsl_charge(L, 2 * (double)t->n);
  ns_tensor **out = nsl_newbox(L);
  *out = ns_tensor_new(t->rank, t->shape, t->dtype, err);
  if (!*out) return luaL_error(L, "round: %s", err);
  for (size_t i = 0; i < t->n; i++) ns_tensor_set(*out, i, ns_round(ns_tensor_get(t, i), d));
  return 1;
}

/* ns.lgamma(x) -> log |Gamma(x)| */
static int l_lgamma(lua_State *L) {
  if (lua_type(L, 1) != LUA_TNUMBER)
    return nsl_argerror(L, 1, "x must be a number, got %s", nsl_got(L, 1));
  lua_pushnumber(L, ns_lgamma(lua_tonumber(L, 1)));
  return 1;
}

/* ns.c4(n) -> sqrt(2/(n-1)) Gamma(n/2) / Gamma((n-1)/2), E[std_ddof1] / sigma */
static int l_c4(lua_State *L) {
  char err[NS_ERRLEN];
  double c;
  if (lua_type(L, 1) != LUA_TNUMBER)
    return nsl_argerror(L, 1, "n must be a number, got %s", nsl_got(L, 1));
  if (ns_c4(lua_tonumber(L, 1), &c, err))
    return nsl_argerror(L, 1, "n must be a finite number > 1, got %s", nsl_got(L, 1));
  lua_pushnumber(L, c);
  return 1;
}

/* ---- running statistics ------------------------------------------------------------ */

static ns_running *checkrunning(lua_State *L, int idx) {
  ns_running *r = nsl_torunning(L, idx);
  if (!r) nsl_argerror(L, idx, "running-statistics object expected, got %s", nsl_got(L, idx));
  return r;
}

/* A fresh, GC-owned running object pushed on the stack. */
static ns_running *new_running(lua_State *L) {
  return nsl_newobj(L, sizeof(ns_running), NSL_RUNNING_MT);
}

/* The values of a buffer field (a tensor or an array of numbers), or NULL when absent;
 * Lua scratch on the stack, *n values. */
static double *buffer_field(lua_State *L, const char *name, size_t *n) {
  if (lua_getfield(L, 1, name) == LUA_TNIL) {
    lua_pop(L, 1);
    return NULL;
  }
  char what[32];
  snprintf(what, sizeof what, "options.%s", name);
  ns_tensor *t = nsl_tensorat(L, lua_gettop(L), 1, what);
  double *v = nsl_scratch(L, t->n);
  ns_tensor_read(t, v);
  *n = t->n;
  return v;
}

/* ns.running{momentum=0.1 | false, exact=false, mean=, var=, count=}: mean/var start the
 * statistics from a model's buffers (running_mean, running_var), count is its
 * num_batches_tracked (a cumulative average continues from it): an integer, or the
 * one-value tensor ns.load reads from the I64 buffer. */
static int l_running(lua_State *L) {
  lua_settop(L, 1); /* fixed argument slots: conversions push above them */
  static const char *const names[] = {"momentum", "exact", "mean", "var", "count", NULL};
  char err[NS_ERRLEN];
  double momentum = 0.1;
  int cumulative = 0, exact = 0;
  double *mean = NULL, *var = NULL;
  size_t nmean = 0, nvar = 0;
  lua_Integer count = 0;
  if (nsl_opttable(L, 1, "options")) {
    nsl_checkfields(L, 1, "running option field", names);
    int ty = lua_getfield(L, 1, "momentum");
    if (ty == LUA_TBOOLEAN && !lua_toboolean(L, -1)) {
      cumulative = 1;
    } else if (ty == LUA_TNUMBER) {
      momentum = lua_tonumber(L, -1);
      if (!(momentum >= 0 && momentum <= 1))
        nsl_argerror(L, 1, "momentum must be between 0 and 1, got %s", lua_tostring(L, -1));
    } else if (ty != LUA_TNIL) {
      nsl_argerror(L, 1, "momentum must be a number in [0, 1] or false, got %s", nsl_got(L, -1));
    }
    lua_pop(L, 1);
    ty = lua_getfield(L, 1, "exact");
    if (ty != LUA_TNIL && ty != LUA_TBOOLEAN)
      nsl_argerror(L, 1, "exact must be a boolean, got %s", nsl_got(L, -1));
    exact = lua_toboolean(L, -1);
    lua_pop(L, 1);
    if (lua_getfield(L, 1, "count") != LUA_TNIL && luaL_testudata(L, -1, NSL_TENSOR_MT)) {
      /* a model's num_batches_tracked, as ns.load gives it: one integer value */
      ns_tensor *ct = nsl_tensorat(L, lua_gettop(L), 1, "options.count");
      double cv = ct->n == 1 ? ns_tensor_get(ct, 0) : -1;
      if (ct->n != 1 || !(cv >= 0 && cv <= 0x1p53) || cv != floor(cv))
        nsl_argerror(L, 1,
                     "count must be one integer >= 0 (num_batches_tracked), got a tensor "
                     "of %I values, the first %f",
                     (lua_Integer)ct->n, ct->n ? ns_tensor_get(ct, 0) : 0.0);
      count = (lua_Integer)cv;
    } else if (lua_type(L, -1) != LUA_TNIL && !nsl_intat(L, -1, 0, (lua_Integer)1 << 53, &count)) {
      nsl_argerror(L, 1, "count must be an integer >= 0 or a one-value tensor, got %s",
                   nsl_got(L, -1));
    }
    lua_pop(L, 1);
    mean = buffer_field(L, "mean", &nmean); /* scratch stays on the stack */
    var = buffer_field(L, "var", &nvar);
    if (!mean != !var) nsl_argerror(L, 1, "give mean and var together (a model's buffers)");
    if (mean && nmean != nvar)
      nsl_argerror(L, 1, "mean has %I values, var %I", (lua_Integer)nmean, (lua_Integer)nvar);
    if (mean && exact)
      nsl_argerror(L, 1, "exact merges moments from the start: it takes no mean/var buffers");
    for (size_t i = 0; mean && i < nvar; i++)
      if (!isfinite(mean[i]) || !(var[i] >= 0) || !isfinite(var[i]))
        nsl_argerror(L, 1, "mean[%I] and var[%I] must be finite, var >= 0", (lua_Integer)i + 1,
                     (lua_Integer)i + 1);
  }
  ns_running *r = new_running(L);
  if (ns_running_init(r, momentum, cumulative, exact, mean ? nmean : 0, err) != 0)
    return luaL_error(L, "running: %s", err);
  if (mean) {
    memcpy(r->mean, mean, nmean * sizeof *mean);
    memcpy(r->var, var, nvar * sizeof *var);
  }
  r->count = (long)count;
  return 1;
}

static int r_gc(lua_State *L) {
  ns_running_free(luaL_checkudata(L, 1, NSL_RUNNING_MT));
  return 0;
}

static int plan_gc(lua_State *L) {
  ns_norm_plan_free(luaL_checkudata(L, 1, NSL_PLAN_MT));
  return 0;
}

/* Per-statistic moments of a batch tensor, statistics as batch norm takes them (one per
 * channel of axis 2, or one for a rank-1 batch); Lua scratch, *nstat entries. */
static ns_moments *batch_moments(lua_State *L, const ns_tensor *x, size_t *nstat) {
  char err[NS_ERRLEN] = "";
  ns_spec spec;
  ns_spec_default(&spec);
  spec.kind = NS_KIND_BATCH;
  ns_norm_plan *p = nsl_newobj(L, sizeof *p, NSL_PLAN_MT);
  if (ns_norm_plan_make(x->rank, x->shape, &spec, p, err) != 0) nsl_argerror(L, 2, "%s", err);
  size_t ns = p->nstat, m = p->count;
  ns_moments *b = lua_newuserdatauv(L, ns * sizeof *b, 0);
  double *buf = nsl_scratch(L, m);
  for (size_t s = 0; s < ns; s++) {
    for (size_t j = 0; j < m; j++) buf[j] = ns_tensor_get(x, p->members[s * m + j]);
    ns_moments_compute(buf, m, 1, NS_FP64, NS_FP64, NS_ALGO_TWOPASS, &b[s]);
  }
  lua_pop(L, 1); /* buf; b stays on the stack (below it, the plan) */
  *nstat = ns;
  return b;
}

/* r:update(batch): batch is a tensor (or array of numbers), a moments table, or an
 * array of moments tables (one per statistic). Returns r. */
static int r_update(lua_State *L) {
  lua_settop(L, 2); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN] = "";
  ns_running *r = checkrunning(L, 1);
  ns_moments *b = NULL;
  size_t nstat = 0;
  if (luaL_testudata(L, 2, NSL_TENSOR_MT)) { /* a released one gets its own message */
    b = batch_moments(L, nsl_tensorarg(L, 2, "batch"), &nstat);
  } else if (lua_type(L, 2) == LUA_TTABLE) {
    int has_n = lua_getfield(L, 2, "n") != LUA_TNIL;
    lua_pop(L, 1);
    int first = lua_rawgeti(L, 2, 1);
    lua_pop(L, 1);
    if (has_n) {
      b = lua_newuserdatauv(L, sizeof *b, 0);
      check_moments(L, 2, 2, "batch", b);
      nstat = 1;
    } else if (first == LUA_TTABLE) {
      lua_rawgeti(L, 2, 1);
      int nested_n = lua_getfield(L, -1, "n") != LUA_TNIL;
      lua_pop(L, 2);
      if (nested_n) {
        nstat = lua_rawlen(L, 2);
        b = lua_newuserdatauv(L, nstat * sizeof *b, 0);
        for (size_t i = 0; i < nstat; i++) {
          char what[48];
          snprintf(what, sizeof what, "batch[%zu]", i + 1);
          lua_rawgeti(L, 2, (lua_Integer)i + 1);
          check_moments(L, -1, 2, what, &b[i]);
          lua_pop(L, 1);
        }
      } else {
        b = batch_moments(L, nsl_tensorarg(L, 2, "batch"), &nstat);
      }
    } else {
      b = batch_moments(L, nsl_tensorarg(L, 2, "batch"), &nstat);
    }
  } else {
    return nsl_argerror(L, 2, "batch must be a tensor or a moments table, got %s", nsl_got(L, 2));
  }
  if (ns_running_update(r, b, nstat, err) != 0) return nsl_argerror(L, 2, "%s", err);
  lua_settop(L, 1);
  return 1;
}

/* r:copy() -> an independent running object with the same state */
static int r_copy(lua_State *L) {
  char err[NS_ERRLEN] = "";
  ns_running *r = checkrunning(L, 1);
  ns_running *c = new_running(L);
  if (ns_running_copy(c, r, err) != 0) return luaL_error(L, "copy: %s", err);
  return 1;
}

/* mean/var: a number for one statistic (or before the first update), else an array */
static void push_stats(lua_State *L, const ns_running *r, const double *v, double fresh) {
  if (r->nstat == 0) {
    lua_pushnumber(L, fresh);
  } else if (r->nstat == 1) {
    lua_pushnumber(L, v[0]);
  } else {
    lua_createtable(L, (int)r->nstat, 0);
    for (size_t i = 0; i < r->nstat; i++) {
      lua_pushnumber(L, v[i]);
      lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
  }
}

static int r_index(lua_State *L) {
  ns_running *r = checkrunning(L, 1);
  const char *k = lua_tostring(L, 2);
  if (lua_type(L, 2) != LUA_TSTRING) return 0;
  if (strcmp(k, "mean") == 0)
    push_stats(L, r, r->mean, 0.0);
  else if (strcmp(k, "var") == 0)
    push_stats(L, r, r->var, 1.0);
  else if (strcmp(k, "count") == 0)
    lua_pushinteger(L, r->count);
  else if (strcmp(k, "nstat") == 0)
    lua_pushinteger(L, (lua_Integer)r->nstat);
  else if (strcmp(k, "exact") == 0)
    lua_pushboolean(L, r->exact);
  else if (strcmp(k, "momentum") == 0) {
    if (r->cumulative)
      lua_pushboolean(L, 0);
    else
      lua_pushnumber(L, r->momentum);
  } else {
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1)); /* methods[k] */
  }
  return 1;
}

static int r_newindex(lua_State *L) {
  checkrunning(L, 1);
  return luaL_error(L, "running statistics change only through :update()");
}

static int r_tostring(lua_State *L) {
  ns_running *r = checkrunning(L, 1);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  lua_pushfstring(L, "running(count=%I, ", (lua_Integer)r->count);
  luaL_addvalue(&b);
  if (r->exact)
    luaL_addstring(&b, "exact");
  else if (r->cumulative)
    luaL_addstring(&b, "momentum=false");
  else {
    lua_pushfstring(L, "momentum=%f", (LUAI_UACNUMBER)r->momentum);
    luaL_addvalue(&b);
  }
  size_t show = r->nstat < 4 ? r->nstat : 4;
  if (r->nstat == 0) luaL_addstring(&b, ", mean=0, var=1");
  for (int which = 0; which < 2 && r->nstat; which++) {
    luaL_addstring(&b, which ? ", var=" : ", mean=");
    if (r->nstat > 1) luaL_addchar(&b, '{');
    for (size_t i = 0; i < show; i++) {
      lua_pushfstring(L, "%s%f", i ? ", " : "", (LUAI_UACNUMBER)(which ? r->var : r->mean)[i]);
      luaL_addvalue(&b);
    }
    if (r->nstat > show) luaL_addstring(&b, ", ...");
    if (r->nstat > 1) luaL_addchar(&b, '}');
  }
  luaL_addchar(&b, ')');
  luaL_pushresult(&b);
  return 1;
}

static const luaL_Reg running_methods[] = {{"update", r_update}, {"copy", r_copy}, {NULL, NULL}};

static const luaL_Reg functions[] = {
    {"moments", l_moments}, {"merge", l_merge}, {"round", l_round}, {"running", l_running},
    {"lgamma", l_lgamma},   {"c4", l_c4},       {NULL, NULL}};

void nsl_open_stats(lua_State *L) {
  nsl_gcmeta(L, NSL_PLAN_MT, plan_gc);
  if (luaL_newmetatable(L, NSL_RUNNING_MT)) {
    lua_pushcfunction(L, r_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, r_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_pushcfunction(L, r_tostring);
    lua_setfield(L, -2, "__tostring");
    luaL_newlib(L, running_methods);
    lua_pushcclosure(L, r_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pushliteral(L, "running");
    lua_setfield(L, -2, "__name");
  }
  lua_pop(L, 1);
  luaL_setfuncs(L, functions, 0);
}
