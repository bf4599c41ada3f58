/* nsl_normalize.c: ns.normalize and its spec, ns.jacobian, ns.spectrum, the chapters'
 * experiments ns.vjp / ns.residual_jacobian / ns.stack, and the linear algebra helpers
 * ns.eigvals / ns.svdvals / ns.rank. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jacobian.h"
#include "core/jvp.h"
#include "core/spectrum.h"
#include "core/stack.h"
#include "explore/state.h"
#include "lua/nsl.h"
#include "lua/nsl_field.h"
#include "lua/nsl_priv.h"

#define NSL_RESULT_MT "normscope.normresult"

/* The names a spec table may hold: the explorer's spec fields (fields.h NS_SPEC_FIELDS,
 * named as set{} names them), and running, which only ns.normalize{} takes. */
static void spec_fields(const char *names[NS_SPEC_NFIELDS + 2]) {
  size_t k = 0;
#define SPEC_NAME_(ID, member, copy, flags) names[k++] = ns_fields[NS_F_##ID].name;
  NS_SPEC_FIELDS(SPEC_NAME_)
#undef SPEC_NAME_
  names[k++] = "running";
  names[k] = NULL;
}

/* Pushes spec[name] and returns its type. */
static int field(lua_State *L, int arg, const char *name) {
  return lua_getfield(L, arg, name);
}

/* A number or array or tensor of numbers as Lua scratch (pushed on the stack). */
static const double *affine(lua_State *L, int arg, const char *name, size_t *n) {
  int ty = field(L, arg, name);
  int idx = lua_gettop(L);
  if (ty == LUA_TNIL) {
    lua_pop(L, 1);
    *n = 0;
    return NULL;
  }
  if (ty == LUA_TNUMBER) {
    double *v = nsl_scratch(L, 1);
    v[0] = lua_tonumber(L, idx);
    *n = 1;
    return v;
  }
  if (ty != LUA_TTABLE && !luaL_testudata(L, idx, NSL_TENSOR_MT))
    nsl_argerror(L, arg, "spec.%s: expected a number, an array of numbers or a tensor, got %s",
                 name, nsl_got(L, idx));
  char what[32];
  snprintf(what, sizeof what, "spec.%s", name);
  ns_tensor *t = nsl_tensorat(L, idx, arg, what); /* messages blame the spec argument */
  double *v = nsl_scratch(L, t->n);
  ns_tensor_read(t, v);
  *n = t->n;
  return v;
}

#define AT(s, T, off) ((T *)((char *)(s) + (off)))

/* The spec's fields are read into a staging ns_state at the members set{} uses, by the
 * descriptors of fields.h, and copied out by ns_state_spec: the scalars through set{}'s own
 * reader (nsl_field_scalar, one wording: "spec.<name>: ..."); axes by the reductions' rule
 * (it knows x's rank); gamma, beta and the mask as Lua scratch that stays on the stack until
 * the caller returns. */
void nsl_checkspec(lua_State *L, int arg, const ns_tensor *x, ns_spec *s) {
  ns_spec_default(s); /* the choices: the core's name lists, in enum order */
  if (!nsl_opttable(L, arg, "spec")) return;
  arg = lua_absindex(L, arg);
  const char *names[NS_SPEC_NFIELDS + 2];
  spec_fields(names);
  nsl_checkfields(L, arg, "spec field", names);
  ns_state st;
  memset(&st, 0, sizeof st);
#define SPEC_IN_SCALAR(m)                                                                          \
  _Static_assert(sizeof st.m == sizeof s->m, "spec and state members of one size");                \
  memcpy(&st.m, &s->m, sizeof st.m);
#define SPEC_IN_ARRAY(m)
#define SPEC_IN_(ID, member, copy, flags) SPEC_IN_##copy(member)
  NS_SPEC_FIELDS(SPEC_IN_) /* the defaults */
#undef SPEC_IN_
#undef SPEC_IN_ARRAY
#undef SPEC_IN_SCALAR
  static const ns_field ids[] = {
#define SPEC_ID_(ID, member, copy, flags) NS_F_##ID,
      NS_SPEC_FIELDS(SPEC_ID_)
#undef SPEC_ID_
  };
  char err[NS_ERRLEN], what[32];
  for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
    const ns_field_desc *d = &ns_fields[ids[i]];
    snprintf(what, sizeof what, "spec.%s", d->name);
    switch (d->type) {
    case NS_FT_AXES:
      field(L, arg, d->name);
      *AT(&st, unsigned, d->off) = nsl_axesat(L, -1, arg, what, x->rank);
      lua_pop(L, 1);
      break;
    case NS_FT_DOUBLES:
      *AT(&st, const double *, d->off) = affine(L, arg, d->name, AT(&st, size_t, d->count));
      break;
    case NS_FT_TENSOR:
      *AT(&st, const ns_tensor *, d->off) = nsl_maskat(L, arg, d->name, x, what);
      break;
    default:
      if (field(L, arg, d->name) != LUA_TNIL && nsl_field_scalar(L, -1, d, &st, err) != 0)
        nsl_argerror(L, arg, "spec.%s", err);
      lua_pop(L, 1);
    }
  }
  ns_state_spec(&st, s);

  if (field(L, arg, "running") != LUA_TNIL) {
    ns_running *r = nsl_torunning(L, -1);
    if (!r)
      nsl_argerror(L, arg, "spec.running must be an object from ns.running, got %s",
                   nsl_got(L, -1));
    s->running = r;
  }
  lua_pop(L, 1);
}

const ns_tensor *nsl_maskat(lua_State *L, int arg, const char *name, const ns_tensor *x,
                            const char *what) {
  int ty = field(L, arg, name); /* stays on the stack, with a converted table's box */
  if (ty == LUA_TNIL || (ty == LUA_TBOOLEAN && !lua_toboolean(L, -1))) return NULL;
  if (ty != LUA_TTABLE && !luaL_testudata(L, -1, NSL_TENSOR_MT))
    nsl_argerror(L, arg, "%s must be a tensor or nested array of 0s and 1s (or false), got %s",
                 what, nsl_got(L, -1));
  ns_tensor *t = nsl_tensorat(L, -1, arg, what);
  char e[NS_ERRLEN];
  if (ns_mask_check(t, x->rank, x->shape, e) != 0)
    nsl_argerror(L, arg, "%s%s", what, e + 4); /* "mask: ..." -> "spec.mask: ..." */
  return t;
}

/* ---- ns.normalize ------------------------------------------------------------------ */

static int result_gc(lua_State *L) {
  ns_norm_result_free(luaL_checkudata(L, 1, NSL_RESULT_MT));
  return 0;
}

/* A tensor of the statistics' shape from v[0..nstat-1]. */
static void push_stat(lua_State *L, const ns_norm_plan *p, const double *v) {
  char err[NS_ERRLEN];
  ns_tensor **box = nsl_newbox(L);
  *box = ns_tensor_from(p->stat_rank, p->stat_shape, NS_FP64, v, err);
  if (!*box) luaL_error(L, "normalize: %s", err);
}

/* The kernels' settings from the environment: NS_SIMD=off (or 0) forces the portable
 * loops, NS_THREADS=N splits the statistics over N threads (default 1). The core reads no
 * environment; this is where the process's settings reach it. */
void nsl_exec_from_env(ns_exec *ex, int def_threads) {
  ns_exec_default(ex);
  ex->threads = def_threads < 1 ? 1 : def_threads > 64 ? 64 : def_threads;
  const char *v = getenv("NS_SIMD");
  if (v && (strcmp(v, "off") == 0 || strcmp(v, "0") == 0)) ex->simd = 0;
  int t = ex->threads;
  if (nsl_threads_from_env(&t, NULL) == 0) ex->threads = t;
}

int nsl_threads_from_env(int *threads, char *err) {
  const char *v = getenv("NS_THREADS");
  if (!v || !*v) return 0;
  char *end;
  errno = 0;
  long t = strtol(v, &end, 10);
  if (errno || end == v || *end != '\0' || t < 1 || t > 64 || v[0] == '+' || v[0] == ' ') {
    if (err) snprintf(err, NS_ERRLEN, "\"%.40s\" is not a number of threads from 1 to 64", v);
    return -1;
  }
  *threads = (int)t;
  return 0;
}

/* ns.kernels() -> {isa=, threads=}: what ns.normalize runs with in this process (from
 * NS_SIMD and NS_THREADS): "avx2", "sse2" or "portable", and the thread count. */
static int l_kernels(lua_State *L) {
  ns_exec ex;
  nsl_exec_from_env(&ex, 1);
  lua_createtable(L, 0, 2);
  lua_pushstring(L, ns_exec_isa(&ex));
  lua_setfield(L, -2, "isa");
  lua_pushinteger(L, ex.threads);
  lua_setfield(L, -2, "threads");
  return 1;
}

/* y, st = ns.normalize(x, spec [, {out = t}]): with out, y is t, written in place */
static int l_normalize(lua_State *L) {
  static const char *const opt_names[] = {"out", NULL};
  lua_settop(L, 3); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN] = "";
  ns_tensor *x = nsl_tensorarg(L, 1, "x");
  ns_spec spec;
  nsl_checkspec(L, 2, x, &spec);
  /* opts.out: a tensor of x's shape and the spec's dtype that y is written into (and
     returned as), so a loop allocates no output at all */
  ns_tensor *out = NULL;
  if (nsl_opttable(L, 3, "opts")) {
    nsl_checkfields(L, 3, "option", opt_names);
    if (lua_getfield(L, 3, "out") != LUA_TNIL) {
      ns_tensor **ob = luaL_testudata(L, -1, NSL_TENSOR_MT);
      if (!ob || !*ob)
        return nsl_argerror(L, 3, "opts.out must be a tensor, got %s", nsl_got(L, -1));
      out = *ob;
    }
    lua_replace(L, 3); /* slot 3: opts.out (or nil) */
  }
  nsl_charge(L, 2 * (double)x->n); /* a second pass over x, and y written */
  ns_norm_result *res = nsl_newobj(L, sizeof *res, NSL_RESULT_MT);
  ns_exec ex;
  nsl_exec_from_env(&ex, 1);
  if (out) {
    if (ns_normalize_into(x, &spec, &ex, out, res, err) != 0)
      return nsl_argerror(L, 3, "opts.out: %s", err);
    lua_pushvalue(L, 3); /* y is the out tensor itself */
  } else {
    /* the memory of an output a loop dropped, when one of this size waits (freed if not
       taken); the masked and torch-order paths make their own */
    ns_tensor *spare = spec.mask || spec.order == NS_ORDER_TORCH || spec.order == NS_ORDER_NUMPY
                           ? NULL
                           : nsl_take_spare(L, x->rank, x->shape, spec.dtype);
    if (ns_normalize_reuse(x, &spec, &ex, spare, res, err) != 0)
      return nsl_argerror(L, 2, "%s", err);
    ns_tensor **y = nsl_newbox(L);
    *y = res->y; /* the box owns y now */
    res->y = NULL;
  }
  const ns_norm_plan *p = &res->plan;
  lua_createtable(L, 0, 8);
  push_stat(L, p, res->mean);
  lua_setfield(L, -2, "mean");
  push_stat(L, p, res->var);
  lua_setfield(L, -2, "var");
  push_stat(L, p, res->denom);
  lua_setfield(L, -2, "denom");
  lua_pushboolean(L, res->ndegenerate > 0);
  lua_setfield(L, -2, "degenerate");
  lua_createtable(L, 0, 0); /* 1-based numbers of the degenerate statistics */
  for (size_t i = 0, k = 0; i < p->nstat; i++)
    if (res->degenerate[i]) {
      lua_pushinteger(L, (lua_Integer)i + 1);
      lua_rawseti(L, -2, (lua_Integer)++k);
    }
  lua_setfield(L, -2, "degenerate_stats");
  lua_pushinteger(L, (lua_Integer)p->count);
  lua_setfield(L, -2, "count");
  double *kept = nsl_scratch(L, p->nstat); /* elements each statistic counted (mask: kept) */
  for (size_t i = 0; i < p->nstat; i++) kept[i] = res->batch[i].n;
  push_stat(L, p, kept);
  lua_setfield(L, -3, "n");
  lua_pop(L, 1);            /* the scratch */
  lua_createtable(L, 4, 0); /* resolved reduction axes, 1-based */
  for (int k = 0, j = 0; k < NS_MAXRANK; k++)
    if (p->axes & (1u << k)) {
      lua_pushinteger(L, k + 1);
      lua_rawseti(L, -2, ++j);
    }
  lua_setfield(L, -2, "axes");
  return 2;
}

/* ---- ns.jacobian ------------------------------------------------------------------- */

/* The (x, spec) arguments of jacobian and spectrum, x at most NS_JAC_MAXN elements. */
static ns_tensor *x_and_spec(lua_State *L, ns_spec *spec, const char *what) {
  ns_tensor *x = nsl_tensorarg(L, 1, "x");
  nsl_checkspec(L, 2, x, spec);
  if (x->n > NS_JAC_MAXN)
    nsl_argerror(L, 1, "x has %I elements; %s are limited to %d", (lua_Integer)x->n, what,
                 NS_JAC_MAXN);
  return x;
}

/* ns.jacobian(x, spec [, opts]) -> n x n tensor, row i = dy_i/dx */
static int l_jacobian(lua_State *L) {
  static const char *const opt_names[] = {"method", "h", NULL};
  static const char *const methods[] = {"analytic", "fd", NULL};
  lua_settop(L, 3); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN] = "";
  ns_spec spec;
  ns_tensor *x = x_and_spec(L, &spec, "Jacobians");
  int fd = 0;
  double h = 1e-6;
  if (nsl_opttable(L, 3, "opts")) {
    nsl_checkfields(L, 3, "option", opt_names);
    lua_getfield(L, 3, "method");
    fd = nsl_choiceat(L, -1, 3, "opts.method", methods, 0) == 1;
    lua_pop(L, 1);
    if (lua_getfield(L, 3, "h") != LUA_TNIL) {
      h = lua_tonumber(L, -1);
      if (lua_type(L, -1) != LUA_TNUMBER || !(h > 0) || isinf(h))
        nsl_argerror(L, 3, "opts.h must be a finite number > 0, got %s", nsl_got(L, -1));
    }
    lua_pop(L, 1);
  }
  size_t shape[2] = {x->n, x->n};
  nsl_charge(L, (double)x->n * (double)x->n); /* n^2 written; fd: n normalizations */
  ns_tensor **J = nsl_newbox(L);
  *J = ns_tensor_new(2, shape, NS_FP64, err);
  if (!*J) return luaL_error(L, "jacobian: %s", err);
  int rc = fd ? ns_jacobian_fd(x, &spec, h, (*J)->data, err)
              : ns_jacobian_analytic(x, &spec, (*J)->data, err);
  if (rc != 0) return nsl_argerror(L, 2, "%s", err);
  return 1;
}

/* ---- ns.vjp ----------------------------------------------------------------------------- */

/* A new fp64 tensor of x's shape from n doubles, pushed. */
static void push_like(lua_State *L, const ns_tensor *x, const double *v) {
  char err[NS_ERRLEN];
  ns_tensor **box = nsl_newbox(L);
  *box = ns_tensor_from(x->rank, x->shape, NS_FP64, v, err);
  if (!*box) luaL_error(L, "vjp: %s", err);
}

/* dgamma or dbeta: a number when there is one entry (or the spec gave one number), else
 * a rank-1 tensor of the plan's naffine entries. */
static void push_affine_grad(lua_State *L, const double *v, size_t naff, int scalar) {
  if (naff == 1 || scalar) {
    double sum = 0;
    for (size_t a = 0; a < naff; a++) sum += v[a];
    lua_pushnumber(L, sum);
    return;
  }
  char err[NS_ERRLEN];
  size_t shape[1] = {naff};
  ns_tensor **box = nsl_newbox(L);
  *box = ns_tensor_from(1, shape, NS_FP64, v, err);
  if (!*box) luaL_error(L, "vjp: %s", err);
}

/* ns.vjp(x, spec, g) -> dx, dgamma, dbeta, paths: the backward pass for upstream gradient
 * g (x's shape) in closed form; paths = {direct=, mean=, var=} (tensors of x's shape that
 * sum to dx: the route through x alone, through the mean, through the variance). */
static int l_vjp(lua_State *L) {
  lua_settop(L, 3); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN] = "";
  ns_spec spec;
  ns_tensor *x = nsl_tensorarg(L, 1, "x");
  nsl_checkspec(L, 2, x, &spec);
  ns_tensor *g = nsl_tensorarg(L, 3, "g");
  if (g->rank != x->rank || memcmp(g->shape, x->shape, sizeof g->shape) != 0) {
    char fx[64], fg[64];
    ns_shape_format(x->rank, x->shape, fx, sizeof fx);
    ns_shape_format(g->rank, g->shape, fg, sizeof fg);
    return nsl_argerror(L, 3, "g must have x's shape %s, got %s", fx, fg);
  }
  ns_norm_plan p;
  memset(&p, 0, sizeof p);
  if (ns_norm_plan_make(x->rank, x->shape, &spec, &p, err)) return nsl_argerror(L, 2, "%s", err);
  size_t naff = p.naffine, n = x->n;
  ns_norm_plan_free(&p);
  nsl_charge(L, 8 * (double)n); /* the backward pass and its four outputs */
  double *gy = nsl_scratch(L, n), *dx = nsl_scratch(L, n);
  double *dg = nsl_scratch(L, naff), *db = nsl_scratch(L, naff);
  double *pd = nsl_scratch(L, n), *pm = nsl_scratch(L, n), *pv = nsl_scratch(L, n);
  ns_tensor_read(g, gy);
  for (size_t i = 0; i < n; i++)
    if (!isfinite(gy[i]))
      return nsl_argerror(L, 3, "g has a non-finite element at %I", (lua_Integer)i + 1);
  ns_vjp_paths paths = {pd, pm, pv};
  if (ns_vjp(x, &spec, gy, dx, dg, db, &paths, err)) return nsl_argerror(L, 2, "%s", err);
  push_like(L, x, dx);
  push_affine_grad(L, dg, naff, spec.gamma && spec.ngamma == 1);
  push_affine_grad(L, db, naff, spec.beta && spec.nbeta == 1);
  lua_createtable(L, 0, 3);
  push_like(L, x, pd);
  lua_setfield(L, -2, "direct");
  push_like(L, x, pm);
  lua_setfield(L, -2, "mean");
  push_like(L, x, pv);
  lua_setfield(L, -2, "var");
  return 4;
}

/* ---- linear algebra ------------------------------------------------------------------ */

/* A rank-2 matrix argument read into Lua scratch; *m x *n. */
static double *matrix_arg(lua_State *L, int arg, const char *what, size_t *m, size_t *n,
                          int square) {
  ns_tensor *t = nsl_tensorarg(L, arg, what);
  if (t->rank != 2)
    nsl_argerror(L, arg, "%s must be a matrix (rank 2), got rank %d", what, t->rank);
  if (square && t->shape[0] != t->shape[1])
    nsl_argerror(L, arg, "%s must be square, got %I x %I", what, (lua_Integer)t->shape[0],
                 (lua_Integer)t->shape[1]);
  if (t->shape[0] > 8192 || t->shape[1] > 8192)
    nsl_argerror(L, arg, "%s is too large (at most 8192 x 8192)", what);
  /* a decomposition: about 10 mn min(m, n) operations (LAPACK's general eigensolver) */
  double m0 = (double)t->shape[0], n0 = (double)t->shape[1];
  nsl_charge(L, 10 * m0 * n0 * (m0 < n0 ? m0 : n0) / NSL_FLOPS);
  double *a = nsl_scratch(L, t->n);
  ns_tensor_read(t, a);
  for (size_t i = 0; i < t->n; i++)
    if (!isfinite(a[i]))
      nsl_argerror(L, arg, "%s has a non-finite entry at element %I", what, (lua_Integer)i + 1);
  *m = t->shape[0];
  *n = t->shape[1];
  return a;
}

static void push_array(lua_State *L, const double *v, size_t n) {
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    lua_pushnumber(L, v[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

/* ns.residual_jacobian(x, spec, W, placement) -> n x n tensor: J of x + W N(x) ("pre"),
 * N(x + W x) ("post") or x + W x ("none"); W acts on all of x or on its last axis */
static int l_residual_jacobian(lua_State *L) {
  static const char *const places[] = NS_PLACEMENT_NAMES;
  lua_settop(L, 4); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN] = "";
  ns_spec spec;
  ns_tensor *x = x_and_spec(L, &spec, "residual Jacobians");
  size_t m, w;
  double *W = matrix_arg(L, 3, "W", &m, &w, 1);
  size_t last = x->shape[x->rank - 1];
  if (w != x->n && w != last)
    return nsl_argerror(L, 3,
                        "W must be %I x %I (all of x) or %I x %I (x's last axis), got %I x %I",
                        (lua_Integer)x->n, (lua_Integer)x->n, (lua_Integer)last, (lua_Integer)last,
                        (lua_Integer)m, (lua_Integer)w);
  if (lua_isnil(L, 4))
    return nsl_argerror(L, 4, "placement must be one of \"none\", \"pre\", \"post\", got nil");
  int place = nsl_choiceat(L, 4, 4, "placement", places, 0);
  nsl_charge(L, 2 * (double)x->n * (double)x->n); /* J written (W's product was charged) */
  size_t shape[2] = {x->n, x->n};
  ns_tensor **J = nsl_newbox(L);
  *J = ns_tensor_new(2, shape, NS_FP64, err);
  if (!*J) return luaL_error(L, "residual_jacobian: %s", err);
  if (ns_residual_jacobian(x, &spec, W, w, (ns_placement)place, (*J)->data, err))
    return nsl_argerror(L, 2, "%s", err);
  return 1;
}

/* ---- ns.stack ---------------------------------------------------------------------------- */

/* An integer field of the options table at arg in lo..hi, or def when absent. */
static lua_Integer int_field(lua_State *L, int arg, const char *name, lua_Integer lo,
                             lua_Integer hi, lua_Integer def) {
  lua_Integer v = def;
  if (lua_getfield(L, arg, name) != LUA_TNIL && !nsl_intat(L, -1, lo, hi, &v))
    nsl_argerror(L, arg, "opts.%s must be an integer in %I .. %I, got %s", name, lo, hi,
                 nsl_got(L, -1));
  lua_pop(L, 1); /* drop the field */
  return v;
}

static double num_field(lua_State *L, int arg, const char *name, double def) {
  double v = def;
  if (lua_getfield(L, arg, name) != LUA_TNIL) {
    v = lua_tonumber(L, -1);
    if (lua_type(L, -1) != LUA_TNUMBER || !isfinite(v))
      nsl_argerror(L, arg, "opts.%s must be a finite number, got %s", name, nsl_got(L, -1));
  }
  lua_pop(L, 1); /* drop the field */
  return v;
}

/* GC owner of a stack result while its values move into Lua tables. */
static int stack_gc(lua_State *L) {
  ns_stack_result_free(lua_touserdata(L, 1));
  return 0;
}
#define NSL_STACK_MT "normscope.stackresult"

/* ns.stack{layers=20, width=256, batch=512, init=1/16, norm="none", eps=1e-5, eps_at="std",
 * act="tanh", seed=0, tanh="fast"} -> {std=, mean=, kurtosis=, maxabs= (arrays, one per layer), h=}
 * (core/stack.h: std and mean of each layer's output, kurtosis and max |.| of its
 * normalized pre-activation; h the last layer's output, batch x width). tanh "fast" is
 * ns_tanh_array (within NS_TANH_ULPS ulps), "libm" the C library's, bit for bit the loop over
 * the module's primitives */
static int l_stack(lua_State *L) {
  static const char *const names[] = {"layers", "width", "batch", "init", "norm", "eps",
                                      "eps_at", "act",   "seed",  "tanh", NULL};
  static const char *const norms[] = NS_STACK_NORM_NAMES;
  static const char *const tanhs[] = {"fast", "libm", NULL}; /* libm_tanh 0, 1 */
  static const char *const acts[] = NS_STACK_ACT_NAMES;
  static const char *const eps_ats[] = {"var", "std", NULL}; /* ns_eps_at order */
  lua_settop(L, 1); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN] = "";
  if (!lua_istable(L, 1)) return nsl_argerror(L, 1, "opts must be a table, got %s", nsl_got(L, 1));
  nsl_checkfields(L, 1, "option", names);
  ns_stack_opts o;
  ns_stack_default(&o);
  o.layers = (int)int_field(L, 1, "layers", 1, NS_STACK_MAXLAYERS, o.layers);
  o.width = (size_t)int_field(L, 1, "width", 1, NS_STACK_MAXWIDTH, (lua_Integer)o.width);
  o.batch = (size_t)int_field(L, 1, "batch", 1, (lua_Integer)(NS_STACK_MAXELEMS / o.width),
                              (lua_Integer)o.batch);
  o.init = num_field(L, 1, "init", o.init);
  o.eps = num_field(L, 1, "eps", o.eps);
  if (!ns_eps_ok(o.eps)) return nsl_argerror(L, 1, "opts.eps " NS_EPS_RULE ", got %f", o.eps);
  o.seed = (uint64_t)int_field(L, 1, "seed", 0, LUA_MAXINTEGER, 0);
  lua_getfield(L, 1, "norm");
  o.norm = (ns_stack_norm)nsl_choiceat(L, -1, 1, "opts.norm", norms, NS_STACK_NONE);
  lua_getfield(L, 1, "act");
  o.act = (ns_stack_act)nsl_choiceat(L, -1, 1, "opts.act", acts, NS_ACT_TANH);
  lua_getfield(L, 1, "eps_at");
  o.eps_at = (ns_eps_at)nsl_choiceat(L, -1, 1, "opts.eps_at", eps_ats, NS_EPS_STD);
  lua_getfield(L, 1, "tanh");
  o.libm_tanh = nsl_choiceat(L, -1, 1, "opts.tanh", tanhs, 0);
  lua_pop(L, 4); /* drop norm, act, eps_at, tanh */
  /* each layer: its weights drawn, a batch x width x width product (BLAS: 4 times NSL_FLOPS to
   * a unit), its activations (0.11 s for the defaults, 20 x 512 x 256) */
  {
    double l = o.layers, w = (double)o.width, b = (double)o.batch;
    nsl_charge(L, l * (w * w + b * w + 2 * b * w * w / (4 * NSL_FLOPS)));
  }
  ns_stack_result *r = nsl_newobj(L, sizeof *r, NSL_STACK_MT);
  if (ns_stack(&o, r, err)) return luaL_error(L, "%s", err);
  lua_createtable(L, 0, 5);
  push_array(L, r->std, (size_t)r->layers);
  lua_setfield(L, -2, "std");
  push_array(L, r->mean, (size_t)r->layers);
  lua_setfield(L, -2, "mean");
  push_array(L, r->kurt, (size_t)r->layers);
  lua_setfield(L, -2, "kurtosis");
  push_array(L, r->maxabs, (size_t)r->layers);
  lua_setfield(L, -2, "maxabs");
  ns_tensor **box = nsl_newbox(L);
  *box = r->h; /* the box owns h now */
  r->h = NULL;
  lua_setfield(L, -2, "h");
  return 1;
}

/* ns.eigvals(m) -> ascending eigenvalues (symmetric), or re, im sorted by real part */
static int l_eigvals(lua_State *L) {
  lua_settop(L, 1); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN] = "";
  size_t m, n;
  double *a = matrix_arg(L, 1, "m", &m, &n, 1);
  double *wr = nsl_scratch(L, n), *wi = nsl_scratch(L, n);
  if (ns_is_symmetric(a, n, 1e-12)) {
    if (ns_eig_sym(a, n, wr, NULL, err) != 0) return luaL_error(L, "eigvals: %s", err);
    push_array(L, wr, n);
    return 1;
  }
  if (ns_eig_general(a, n, wr, wi, NULL, err) != 0) return luaL_error(L, "eigvals: %s", err);
  push_array(L, wr, n);
  push_array(L, wi, n);
  return 2;
}

/* ns.svdvals(m) -> descending singular values */
static int l_svdvals(lua_State *L) {
  lua_settop(L, 1); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN] = "";
  size_t m, n;
  double *a = matrix_arg(L, 1, "m", &m, &n, 0);
  size_t k = m < n ? m : n;
  double *s = nsl_scratch(L, k);
  if (ns_svdvals(a, m, n, s, err) != 0) return luaL_error(L, "svdvals: %s", err);
  push_array(L, s, k);
  return 1;
}

/* ns.rank(m [, tol]) -> number of singular values above tol (default 1e-10 * largest) */
static int l_rank(lua_State *L) {
  lua_settop(L, 2); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN] = "";
  size_t m, n;
  double tol = -1;
  if (!lua_isnoneornil(L, 2)) {
    if (lua_type(L, 2) != LUA_TNUMBER)
      return nsl_argerror(L, 2, "tol must be a number, got %s", nsl_got(L, 2));
    tol = lua_tonumber(L, 2);
    if (!(tol >= 0)) return nsl_argerror(L, 2, "tol must be >= 0, got %s", lua_tostring(L, 2));
  }
  double *a = matrix_arg(L, 1, "m", &m, &n, 0);
  int r = ns_rank(a, m, n, tol, err);
  if (r < 0) return luaL_error(L, "rank: %s", err);
  lua_pushinteger(L, r);
  return 1;
}

void nsl_pusheigs(lua_State *L, const ns_eig *e, int n) {
  lua_createtable(L, n > 0 ? n : 0, 0);
  for (int i = 0; i < n; i++) {
    lua_createtable(L, 0, 4);
    lua_pushnumber(L, e[i].value);
    lua_setfield(L, -2, "value");
    lua_pushstring(L, ns_label_name(e[i].label));
    lua_setfield(L, -2, "label");
    lua_pushinteger(L, e[i].mult);
    lua_setfield(L, -2, "mult");
    if (e[i].imag != 0) { /* a complex pair (non-symmetric J) */
      lua_pushnumber(L, e[i].imag);
      lua_setfield(L, -2, "imag");
    }
    lua_rawseti(L, -2, i + 1); /* list[i+1] = entry */
  }
}

/* ns.spectrum(x, spec [, opts]) -> array of {value=, label=, mult=}, "closed" or
 * "numeric", and (closed form, no mask) the checks along its eigenvectors.
 * The closed form at any size: O(n), no J. It is checked as the explorer checks it, along
 * the ones, radial and a bulk vector of the first statistic (J v by the JVP and by central
 * differences of the map, no J either): the third result is a list of {label=, value=,
 * jvp_res=, jvp_tol=, fd_res=, fd_tol=, ok=}. opts: method = "auto" (closed form where one
 * exists, else LAPACK on the analytic J), "closed" (an error where none exists) or "lapack"
 * (LAPACK even where a closed form exists); check = false skips the checks. LAPACK forms
 * the n x n J, so it takes at most NS_JAC_MAXN elements. */
static int l_spectrum(lua_State *L) {
  static const char *const opt_names[] = {"method", "check", NULL};
  static const char *const methods[] = {"auto", "closed", "lapack", NULL};
  lua_settop(L, 3); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN] = "";
  ns_spec spec;
  ns_tensor *x = nsl_tensorarg(L, 1, "x");
  nsl_checkspec(L, 2, x, &spec);
  int method = 0, check = 1;
  if (nsl_opttable(L, 3, "opts")) {
    nsl_checkfields(L, 3, "option", opt_names);
    lua_getfield(L, 3, "method");
    method = nsl_choiceat(L, -1, 3, "opts.method", methods, 0);
    lua_pop(L, 1);
    check = nsl_optbool(L, 3, "check", 1);
  }
  int cnt = 0;
  const char *how = "closed";
  ns_eig *e = NULL;
  double *mean = NULL, *m2 = NULL; /* train mode: the moments, for the closed form and checks */
  if (method != 2) {
    /* at most 3 entries a statistic (plus the masked zeros): the plan's count, not n */
    ns_norm_plan p;
    size_t cap = x->n + 8;
    if (ns_norm_plan_shape(x->rank, x->shape, &spec, &p, NULL) == 0) {
      size_t c3 = 3 * p.nstat + 8;
      if (c3 < cap) cap = c3;
      /* computed once for both (at 1e6 values, two chains of 1e6 additions: 1.7 ms) */
      if (!spec.mask && !ns_spec_eval_running(&spec, x->rank)) {
        mean = lua_newuserdatauv(L, 2 * p.nstat * sizeof *mean, 0), m2 = mean + p.nstat;
        if (ns_stat_moments(x, &p, ns_spec_center(&spec), mean, m2, err) != 0) mean = m2 = NULL;
      }
      ns_norm_plan_free(&p);
    }
    e = lua_newuserdatauv(L, cap * sizeof *e, 0);
    cnt = m2 ? ns_spectrum_closed_m2(x, &spec, m2, e, cap, 1, err)
             : ns_spectrum_closed(x, &spec, e, cap, err);
    if (cnt < 0) return nsl_argerror(L, 2, "%s", err);
    if (cnt == 0 && method == 1)
      return nsl_argerror(L, 2, "no closed form here (gamma varies within a statistic)");
  }
  if (cnt == 0) {
    if (x->n > NS_JAC_MAXN)
      return nsl_argerror(L, 1,
                          "x has %I elements: LAPACK forms the n x n Jacobian, limited to %d "
                          "elements (%s)",
                          (lua_Integer)x->n, NS_JAC_MAXN,
                          method == 2 ? "the closed form takes any size: method = \"auto\""
                                      : "no closed form here");
    how = "numeric"; /* J, then its eigenvalues */
    double nn = (double)x->n;
    nsl_charge(L, nn * nn + 10 * nn * nn * nn / NSL_FLOPS);
    size_t cap = x->n + 8;
    e = lua_newuserdatauv(L, cap * sizeof *e, 0);
    double *J = nsl_scratch(L, x->n * x->n);
    if (ns_jacobian_analytic(x, &spec, J, err) != 0) return nsl_argerror(L, 2, "%s", err);
    cnt = ns_spectrum_numeric(x, &spec, J, e, cap, err);
    if (cnt < 0) return luaL_error(L, "spectrum: %s", err);
  }
  nsl_pusheigs(L, e, cnt);
  lua_pushstring(L, how);
  /* a mask's kept subsets have no per-statistic block to check (the explorer checks them
     through the full J): no third result, as with check = false */
  if (!check || strcmp(how, "closed") != 0 || spec.mask) return 2;
  ns_eigcheck ck[3];
  ns_exec ex; /* NS_THREADS: the check's passes, its JVP and its map over threads */
  nsl_exec_from_env(&ex, 1);
  int nk = ns_spectrum_check_moments(x, &spec, 0, mean, m2, ex.threads, ck, 3, err);
  if (nk < 0) return luaL_error(L, "spectrum: %s", err);
  lua_createtable(L, nk, 0);
  for (int i = 0; i < nk; i++) {
    lua_createtable(L, 0, 7);
    lua_pushstring(L, ns_label_name(ck[i].label));
    lua_setfield(L, -2, "label");
    lua_pushnumber(L, ck[i].value);
    lua_setfield(L, -2, "value");
    lua_pushnumber(L, ck[i].jvp_res);
    lua_setfield(L, -2, "jvp_res");
    lua_pushnumber(L, ck[i].jvp_tol);
    lua_setfield(L, -2, "jvp_tol");
    lua_pushnumber(L, ck[i].fd_res);
    lua_setfield(L, -2, "fd_res");
    lua_pushnumber(L, ck[i].fd_tol);
    lua_setfield(L, -2, "fd_tol");
    lua_pushboolean(L, ck[i].jvp_res <= ck[i].jvp_tol && ck[i].fd_res <= ck[i].fd_tol);
    lua_setfield(L, -2, "ok");
    lua_rawseti(L, -2, i + 1);
  }
  return 3;
}

static const luaL_Reg functions[] = {{"normalize", l_normalize},
                                     {"kernels", l_kernels},
                                     {"jacobian", l_jacobian},
                                     {"vjp", l_vjp},
                                     {"residual_jacobian", l_residual_jacobian},
                                     {"stack", l_stack},
                                     {"eigvals", l_eigvals},
                                     {"svdvals", l_svdvals},
                                     {"rank", l_rank},
                                     {"spectrum", l_spectrum},
                                     {NULL, NULL}};

void nsl_open_normalize(lua_State *L) {
  nsl_gcmeta(L, NSL_RESULT_MT, result_gc);
  nsl_gcmeta(L, NSL_STACK_MT, stack_gc);
  luaL_setfuncs(L, functions, 0);
}
