/* state.c: the explorer state (init, copy, free, equal), its field and panel names, and
 * the validated patch ns_state_apply. See explore.h for the contract. */
#include "explore/explore.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore/priv.h"

/* ---------------------------------------------------------------- names */

static const char *const field_names[NS_F_COUNT] = {
    "x",           "kind",          "axes",       "groups",   "eps",          "eps_at",
    "ddof",        "center",        "gamma",      "beta",     "dtype",        "acc",
    "algo",        "mode",          "batch",      "baseline", "target",       "companion",
    "seed",        "train_batches", "batch_size", "momentum", "train_source", "train_loc",
    "train_scale", "shift",         "scale",      "focus",    "cursor"};

const char *ns_field_name(ns_field f) {
  return (f >= 0 && f < NS_F_COUNT) ? field_names[f] : "?";
}

int ns_field_parse(const char *name) {
  for (int f = 0; f < NS_F_COUNT; f++)
    if (strcmp(name, field_names[f]) == 0) return f;
  return -1;
}

int ns_field_is_view(ns_field f) {
  return f == NS_F_FOCUS || f == NS_F_CURSOR;
}

static const char *const panel_names[NS_PANEL_COUNT] = {"input", "settings", "output",   "spectrum",
                                                        "batch", "train",    "precision"};

const char *ns_panel_name(ns_panel p) {
  return (p >= 0 && p < NS_PANEL_COUNT) ? panel_names[p] : "?";
}

int ns_panel_parse(const char *name, ns_panel *out) {
  for (int p = 0; p < NS_PANEL_COUNT; p++)
    if (strcmp(name, panel_names[p]) == 0) {
      *out = (ns_panel)p;
      return 0;
    }
  return -1;
}

const char *ns_source_name(ns_source s) {
  return s == NS_SOURCE_RNG ? "rng" : s == NS_SOURCE_BATCH ? "batch" : "?";
}

int ns_source_parse(const char *name, ns_source *out) {
  if (strcmp(name, "rng") == 0)
    *out = NS_SOURCE_RNG;
  else if (strcmp(name, "batch") == 0)
    *out = NS_SOURCE_BATCH;
  else
    return -1;
  return 0;
}

int ns_explore_fail(char *err, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, NS_ERRLEN, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* ---------------------------------------------------------------- state */

void ns_patch_init(ns_state_patch *p) {
  memset(p, 0, sizeof *p);
  p->acc = -1;
  p->center = -1;
}

void ns_patch_from_state(ns_state_patch *p, const ns_state *src) {
  ns_patch_init(p);
  p->set = (1u << NS_F_COUNT) - 1u;
  p->x = src->x;
  p->kind = src->kind;
  p->axes = src->axes;
  p->groups = src->groups;
  p->eps = src->eps;
  p->eps_at = src->eps_at;
  p->ddof = src->ddof;
  p->center = src->center;
  p->gamma = src->gamma;
  p->ngamma = src->ngamma;
  p->beta = src->beta;
  p->nbeta = src->nbeta;
  p->dtype = src->dtype;
  p->acc = src->acc;
  p->algo = src->algo;
  p->mode = src->mode;
  p->batch = src->batch;
  p->baseline = src->baseline;
  p->nbaseline = ns_batch_cols(src);
  p->target = src->target;
  p->companion = src->companion;
  p->seed = src->seed;
  p->train_batches = src->train_batches;
  p->batch_size = src->batch_size;
  p->momentum = src->momentum;
  p->cumulative = src->cumulative;
  p->train_source = src->train_source;
  p->train_loc = src->train_loc;
  p->train_scale = src->train_scale;
  p->shift = src->shift;
  p->scale = src->scale;
  p->focus = src->focus;
  p->cursor_row = src->cursor_row;
  p->cursor_col = src->cursor_col;
}

static double *dup_doubles(const double *v, size_t n) {
  if (!v || n == 0) return NULL;
  double *d = malloc(n * sizeof *d);
  if (d) memcpy(d, v, n * sizeof *d);
  return d;
}

int ns_state_init(ns_state *s, char *err) {
  memset(s, 0, sizeof *s);
  static const double x0[4] = {-2, -1, 1, 2};
  static const double b0[4] = {0, 1, 2, -1};
  size_t xs[1] = {4}, bs[2] = {2, 2};
  s->x = ns_tensor_from(1, xs, NS_FP64, x0, err);
  s->batch = ns_tensor_from(2, bs, NS_FP64, b0, err);
  s->baseline = dup_doubles(b0 + 2, 2);
  if (!s->x || !s->batch || !s->baseline) {
    ns_state_free(s);
    return ns_explore_fail(err, "out of memory");
  }
  /* the normalize spec's fields start at the core's defaults (no gamma/beta, no running) */
  ns_spec sp;
  ns_spec_default(&sp);
  s->kind = sp.kind;
  s->axes = sp.axes;
  s->groups = sp.groups;
  s->eps = sp.eps;
  s->eps_at = sp.eps_at;
  s->ddof = sp.ddof;
  s->center = sp.center;
  s->dtype = sp.dtype;
  s->acc = sp.acc;
  s->algo = sp.algo;
  s->mode = sp.mode;
  s->target = 1;
  s->companion = 2;
  /* the seed of the chapter 000 section 15.3 experiment: 8 batches of 32 from normal(4,2) */
  s->seed = 316832669u;
  s->train_batches = 8;
  s->batch_size = 32;
  s->momentum = 0.1;
  s->cumulative = 0;
  s->train_source = NS_SOURCE_RNG;
  s->train_loc = 4;
  s->train_scale = 2;
  s->shift = 10;
  s->scale = 2;
  s->focus = NS_PANEL_INPUT;
  return 0;
}

void ns_state_free(ns_state *s) {
  if (!s) return;
  ns_tensor_free(s->x);
  ns_tensor_free(s->batch);
  free(s->baseline);
  free(s->gamma);
  free(s->beta);
  s->x = s->batch = NULL;
  s->baseline = s->gamma = s->beta = NULL;
  s->ngamma = s->nbeta = 0;
}

size_t ns_batch_cols(const ns_state *s) {
  return s->batch ? s->batch->shape[1] : 0;
}

int ns_state_copy(ns_state *dst, const ns_state *src, char *err) {
  *dst = *src;
  dst->x = src->x ? ns_tensor_copy(src->x) : NULL;
  dst->batch = src->batch ? ns_tensor_copy(src->batch) : NULL;
  dst->baseline = dup_doubles(src->baseline, ns_batch_cols(src));
  dst->gamma = dup_doubles(src->gamma, src->ngamma);
  dst->beta = dup_doubles(src->beta, src->nbeta);
  if ((src->x && !dst->x) || (src->batch && !dst->batch) ||
      (src->baseline && ns_batch_cols(src) && !dst->baseline) || (src->gamma && !dst->gamma) ||
      (src->beta && !dst->beta)) {
    ns_state_free(dst);
    return ns_explore_fail(err, "out of memory copying the explorer state");
  }
  return 0;
}

int ns_same_double(double a, double b) {
  return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

int ns_same_doubles(const double *a, size_t na, const double *b, size_t nb) {
  if (na != nb) return 0;
  for (size_t i = 0; i < na; i++)
    if (!ns_same_double(a[i], b[i])) return 0;
  return 1;
}

int ns_same_tensor(const ns_tensor *a, const ns_tensor *b) {
  if (!a || !b) return a == b;
  if (a->rank != b->rank || a->dtype != b->dtype || a->n != b->n) return 0;
  for (int k = 0; k < a->rank; k++)
    if (a->shape[k] != b->shape[k]) return 0;
  return memcmp(a->data, b->data, a->n * ns_dtype_size(a->dtype)) == 0;
}

int ns_state_equal(const ns_state *a, const ns_state *b) {
  return ns_same_tensor(a->x, b->x) && a->kind == b->kind && a->axes == b->axes &&
         a->groups == b->groups && ns_same_double(a->eps, b->eps) && a->eps_at == b->eps_at &&
         a->ddof == b->ddof && a->center == b->center &&
         ns_same_doubles(a->gamma, a->ngamma, b->gamma, b->ngamma) &&
         ns_same_doubles(a->beta, a->nbeta, b->beta, b->nbeta) && a->dtype == b->dtype &&
         a->acc == b->acc && a->algo == b->algo && a->mode == b->mode &&
         ns_same_tensor(a->batch, b->batch) &&
         ns_same_doubles(a->baseline, ns_batch_cols(a), b->baseline, ns_batch_cols(b)) &&
         a->target == b->target && a->companion == b->companion && a->seed == b->seed &&
         a->train_batches == b->train_batches && a->batch_size == b->batch_size &&
         (ns_same_double(a->momentum, b->momentum) || (a->cumulative && b->cumulative)) &&
         a->cumulative == b->cumulative && a->train_source == b->train_source &&
         ns_same_double(a->train_loc, b->train_loc) &&
         ns_same_double(a->train_scale, b->train_scale) && ns_same_double(a->shift, b->shift) &&
         ns_same_double(a->scale, b->scale) && a->focus == b->focus &&
         a->cursor_row == b->cursor_row && a->cursor_col == b->cursor_col;
}

void ns_state_spec(const ns_state *s, ns_spec *spec) {
  ns_spec_default(spec);
  spec->kind = s->kind;
  spec->axes = s->axes;
  spec->groups = s->groups;
  spec->eps = s->eps;
  spec->eps_at = s->eps_at;
  spec->ddof = s->ddof;
  spec->center = s->center;
  spec->gamma = s->ngamma ? s->gamma : NULL;
  spec->ngamma = s->ngamma;
  spec->beta = s->nbeta ? s->beta : NULL;
  spec->nbeta = s->nbeta;
  spec->dtype = s->dtype;
  spec->acc = s->acc;
  spec->algo = s->algo;
  spec->mode = s->mode;
  spec->running = NULL;
}

/* ---------------------------------------------------------------- apply */

/* Free what `cand` owns but `keep` does not (the allocations made for a candidate). */
static void free_new(ns_state *cand, const ns_state *keep) {
  if (cand->x != keep->x) ns_tensor_free(cand->x);
  if (cand->batch != keep->batch) ns_tensor_free(cand->batch);
  if (cand->baseline != keep->baseline) free(cand->baseline);
  if (cand->gamma != keep->gamma) free(cand->gamma);
  if (cand->beta != keep->beta) free(cand->beta);
}

static int check_finite_array(const char *what, const double *v, size_t n, char *err) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(v[i]))
      return ns_explore_fail(err, "%s: element %zu is not finite (%g)", what, i + 1, v[i]);
  return 0;
}

/* Copies the n values of gamma or beta (none when n == 0) into *dst, *ndst. */
static int copy_affine(const char *what, const double *v, size_t n, double **dst, size_t *ndst,
                       char *err) {
  if (n && !v) return ns_explore_fail(err, "%s: missing values", what);
  *dst = dup_doubles(v, n);
  *ndst = *dst ? n : 0;
  if (n && !*dst) return ns_explore_fail(err, "%s: out of memory", what);
  return 0;
}

/* The field to blame for a spec that does not fit x. */
static const char *spec_blame(const ns_state_patch *p) {
  static const ns_field order[] = {NS_F_GROUPS, NS_F_AXES, NS_F_KIND,  NS_F_X,
                                   NS_F_GAMMA,  NS_F_BETA, NS_F_CENTER};
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
    if (NS_HAS(p, order[i])) return field_names[order[i]];
  return "spec";
}

/* Checks a candidate's normalize spec against its x. */
static int check_spec(const ns_state *c, const ns_state_patch *p, char *err) {
  const char *who = spec_blame(p);
  char e[NS_ERRLEN] = "";
  ns_spec spec;
  ns_state_spec(c, &spec);
  unsigned rank_mask = (1u << c->x->rank) - 1u;
  if (c->axes & ~rank_mask) {
    int k = 0;
    while (!((c->axes >> k) & 1u) || ((rank_mask >> k) & 1u)) k++;
    return ns_explore_fail(err, "%s: axis %d is beyond x's rank %d",
                           NS_HAS(p, NS_F_AXES) ? "axes" : who, k + 1, c->x->rank);
  }
  ns_norm_plan plan;
  memset(&plan, 0, sizeof plan);
  if (ns_norm_plan_make(c->x->rank, c->x->shape, &spec, &plan, e) != 0)
    return ns_explore_fail(err, "%s: %s", who, e[0] ? e : "does not fit x");
  size_t naff = plan.naffine;
  ns_norm_plan_free(&plan);
  if (c->ngamma > 1 && c->ngamma != naff) {
    if (NS_HAS(p, NS_F_GAMMA))
      return ns_explore_fail(err, "gamma: has %zu values, x needs 1 or %zu", c->ngamma, naff);
    return ns_explore_fail(err, "%s: gamma has %zu values but would need 1 or %zu (set gamma too)",
                           who, c->ngamma, naff);
  }
  if (c->nbeta > 1 && c->nbeta != naff) {
    if (NS_HAS(p, NS_F_BETA))
      return ns_explore_fail(err, "beta: has %zu values, x needs 1 or %zu", c->nbeta, naff);
    return ns_explore_fail(err, "%s: beta has %zu values but would need 1 or %zu (set beta too)",
                           who, c->nbeta, naff);
  }
  return 0;
}

int ns_state_apply(ns_state *s, const ns_state_patch *p, char *err) {
  if (p->set >> NS_F_COUNT) return ns_explore_fail(err, "patch: unknown field bit");
  ns_state c = *s; /* shares s's arrays until a field replaces one */
  char e[NS_ERRLEN];
  int rc = -1;

  /* 1. scalar and enum fields, each checked on its own */
  if (NS_HAS(p, NS_F_KIND)) {
    if (p->kind < NS_KIND_LAYER || p->kind > NS_KIND_GROUP) {
      ns_explore_fail(err, "kind: unknown kind %d", (int)p->kind);
      goto out;
    }
    c.kind = p->kind;
  }
  if (NS_HAS(p, NS_F_AXES)) {
    if (p->axes >= (1u << NS_MAXRANK)) {
      ns_explore_fail(err, "axes: only axes 1 to %d exist", NS_MAXRANK);
      goto out;
    }
    c.axes = p->axes;
  }
  if (NS_HAS(p, NS_F_GROUPS)) {
    if (p->groups < 1) {
      ns_explore_fail(err, "groups: must be >= 1, got %d", p->groups);
      goto out;
    }
    c.groups = p->groups;
  }
  if (NS_HAS(p, NS_F_EPS)) {
    if (!isfinite(p->eps) || p->eps < 0) {
      ns_explore_fail(err, "eps: must be finite and >= 0, got %g", p->eps);
      goto out;
    }
    c.eps = p->eps;
  }
  if (NS_HAS(p, NS_F_EPS_AT)) {
    if (p->eps_at != NS_EPS_VAR && p->eps_at != NS_EPS_STD) {
      ns_explore_fail(err, "eps_at: must be \"var\" or \"std\"");
      goto out;
    }
    c.eps_at = p->eps_at;
  }
  if (NS_HAS(p, NS_F_DDOF)) {
    if (p->ddof != 0 && p->ddof != 1) {
      ns_explore_fail(err, "ddof: must be 0 or 1, got %d", p->ddof);
      goto out;
    }
    c.ddof = p->ddof;
  }
  if (NS_HAS(p, NS_F_CENTER)) {
    if (p->center < -1 || p->center > 1) {
      ns_explore_fail(err, "center: must be true, false or default");
      goto out;
    }
    c.center = p->center;
  }
  if (NS_HAS(p, NS_F_DTYPE)) {
    if (p->dtype < NS_FP64 || p->dtype >= NS_DTYPE_COUNT) {
      ns_explore_fail(err, "dtype: unknown dtype %d", (int)p->dtype);
      goto out;
    }
    c.dtype = p->dtype;
  }
  if (NS_HAS(p, NS_F_ACC)) {
    if (p->acc < -1 || p->acc >= NS_DTYPE_COUNT) {
      ns_explore_fail(err, "acc: unknown dtype %d", p->acc);
      goto out;
    }
    c.acc = p->acc;
  }
  if (NS_HAS(p, NS_F_ALGO)) {
    if (p->algo < NS_ALGO_TWOPASS || p->algo > NS_ALGO_RAW) {
      ns_explore_fail(err, "algo: must be \"twopass\", \"welford\" or \"raw\"");
      goto out;
    }
    c.algo = p->algo;
  }
  if (NS_HAS(p, NS_F_MODE)) {
    if (p->mode != NS_MODE_TRAIN && p->mode != NS_MODE_EVAL) {
      ns_explore_fail(err, "mode: must be \"train\" or \"eval\"");
      goto out;
    }
    c.mode = p->mode;
  }
  if (NS_HAS(p, NS_F_TARGET)) c.target = p->target;
  if (NS_HAS(p, NS_F_COMPANION)) c.companion = p->companion;
  if (NS_HAS(p, NS_F_SEED)) c.seed = p->seed;
  if (NS_HAS(p, NS_F_TRAIN_BATCHES)) {
    if (p->train_batches < 1 || p->train_batches > NS_EXPLORE_MAX_BATCHES) {
      ns_explore_fail(err, "train_batches: must be 1 to %d, got %d", NS_EXPLORE_MAX_BATCHES,
                      p->train_batches);
      goto out;
    }
    c.train_batches = p->train_batches;
  }
  if (NS_HAS(p, NS_F_BATCH_SIZE)) {
    if (p->batch_size < 2 || p->batch_size > NS_EXPLORE_MAX_BATCH_SIZE) {
      ns_explore_fail(err, "batch_size: must be 2 to %d, got %d", NS_EXPLORE_MAX_BATCH_SIZE,
                      p->batch_size);
      goto out;
    }
    c.batch_size = p->batch_size;
  }
  if (NS_HAS(p, NS_F_MOMENTUM)) {
    if (!p->cumulative && !(p->momentum > 0 && p->momentum <= 1)) {
      ns_explore_fail(err, "momentum: must be in (0, 1] or false (cumulative average), got %g",
                      p->momentum);
      goto out;
    }
    c.cumulative = p->cumulative ? 1 : 0;
    if (!p->cumulative || (p->momentum > 0 && p->momentum <= 1)) c.momentum = p->momentum;
  }
  if (NS_HAS(p, NS_F_TRAIN_SOURCE)) {
    if (p->train_source != NS_SOURCE_RNG && p->train_source != NS_SOURCE_BATCH) {
      ns_explore_fail(err, "train_source: must be \"rng\" or \"batch\"");
      goto out;
    }
    c.train_source = p->train_source;
  }
  if (NS_HAS(p, NS_F_TRAIN_LOC)) {
    if (!isfinite(p->train_loc)) {
      ns_explore_fail(err, "train_loc: must be finite, got %g", p->train_loc);
      goto out;
    }
    c.train_loc = p->train_loc;
  }
  if (NS_HAS(p, NS_F_TRAIN_SCALE)) {
    if (!isfinite(p->train_scale) || p->train_scale < 0) {
      ns_explore_fail(err, "train_scale: must be finite and >= 0, got %g", p->train_scale);
      goto out;
    }
    c.train_scale = p->train_scale;
  }
  if (NS_HAS(p, NS_F_SHIFT)) {
    if (!isfinite(p->shift)) {
      ns_explore_fail(err, "shift: must be finite, got %g", p->shift);
      goto out;
    }
    c.shift = p->shift;
  }
  if (NS_HAS(p, NS_F_SCALE)) {
    if (!isfinite(p->scale)) {
      ns_explore_fail(err, "scale: must be finite, got %g", p->scale);
      goto out;
    }
    c.scale = p->scale;
  }
  if (NS_HAS(p, NS_F_FOCUS)) {
    if (p->focus < 0 || p->focus >= NS_PANEL_COUNT) {
      ns_explore_fail(err, "focus: unknown panel %d", (int)p->focus);
      goto out;
    }
    c.focus = p->focus;
  }
  if (NS_HAS(p, NS_F_CURSOR)) {
    if (p->cursor_row < 0 || p->cursor_col < 0) {
      ns_explore_fail(err, "cursor: row and column must be >= 0");
      goto out;
    }
    c.cursor_row = p->cursor_row;
    c.cursor_col = p->cursor_col;
  }

  /* 2. owned arrays: validated, then copied into the candidate */
  if (NS_HAS(p, NS_F_X)) {
    if (!p->x) {
      ns_explore_fail(err, "x: missing tensor");
      goto out;
    }
    if (ns_shape_check(p->x->rank, p->x->shape, e) != 0) {
      ns_explore_fail(err, "x: %s", e);
      goto out;
    }
    if (!(c.x = ns_tensor_copy(p->x))) {
      c.x = s->x;
      ns_explore_fail(err, "x: out of memory");
      goto out;
    }
  }
  if (NS_HAS(p, NS_F_GAMMA) && copy_affine("gamma", p->gamma, p->ngamma, &c.gamma, &c.ngamma, err))
    goto out;
  if (NS_HAS(p, NS_F_BETA) && copy_affine("beta", p->beta, p->nbeta, &c.beta, &c.nbeta, err))
    goto out;
  int reset_baseline = NS_HAS(p, NS_F_COMPANION) && p->companion != s->companion;
  if (NS_HAS(p, NS_F_BATCH)) {
    const ns_tensor *b = p->batch;
    if (!b) {
      ns_explore_fail(err, "batch: missing matrix");
      goto out;
    }
    if (b->rank != 2) {
      ns_explore_fail(err,
                      "batch: must be a matrix (rows = examples, columns = features), got rank %d",
                      b->rank);
      goto out;
    }
    if (b->shape[0] < 2) {
      ns_explore_fail(err, "batch: needs at least 2 rows (examples), got %zu", b->shape[0]);
      goto out;
    }
    if (b->n > NS_EXPLORE_JAC_LIMIT * 64) {
      ns_explore_fail(err, "batch: at most %d elements, got %zu", NS_EXPLORE_JAC_LIMIT * 64, b->n);
      goto out;
    }
    double *v = malloc(b->n * sizeof *v);
    if (!v) {
      ns_explore_fail(err, "batch: out of memory");
      goto out;
    }
    ns_tensor_read(b, v);
    for (size_t i = 0; i < b->n; i++)
      if (!isfinite(v[i])) {
        ns_explore_fail(err, "batch: element (%zu,%zu) is not finite", i / b->shape[1] + 1,
                        i % b->shape[1] + 1);
        free(v);
        goto out;
      }
    c.batch = ns_tensor_from(2, b->shape, NS_FP64, v, e);
    free(v);
    if (!c.batch) {
      c.batch = s->batch;
      ns_explore_fail(err, "batch: %s", e);
      goto out;
    }
    if (c.batch->shape[0] != s->batch->shape[0] || c.batch->shape[1] != s->batch->shape[1])
      reset_baseline = 1;
  }

  /* 3. the combination */
  /* the reduction plan depends on these only (rebuilding it costs O(n) on a big x) */
  const uint32_t spec_fields = (1u << NS_F_X) | (1u << NS_F_KIND) | (1u << NS_F_AXES) |
                               (1u << NS_F_GROUPS) | (1u << NS_F_GAMMA) | (1u << NS_F_BETA) |
                               (1u << NS_F_CENTER);
  if ((p->set & spec_fields) && check_spec(&c, p, err) != 0) goto out;
  size_t B = c.batch->shape[0], D = c.batch->shape[1];
  if (c.target < 1 || (size_t)c.target > B) {
    ns_explore_fail(err, "target: row %d is outside the batch (rows 1 to %zu)", c.target, B);
    goto out;
  }
  if (c.companion < 1 || (size_t)c.companion > B) {
    ns_explore_fail(err, "companion: row %d is outside the batch (rows 1 to %zu)", c.companion, B);
    goto out;
  }
  if (c.target == c.companion) {
    ns_explore_fail(err, "%s: target and companion must be different rows (both %d)",
                    NS_HAS(p, NS_F_COMPANION) ? "companion" : "target", c.target);
    goto out;
  }
  if (NS_HAS(p, NS_F_BASELINE) && p->baseline) {
    if (p->nbaseline != D) {
      ns_explore_fail(err, "baseline: has %zu values, the batch has %zu columns", p->nbaseline, D);
      goto out;
    }
    if (check_finite_array("baseline", p->baseline, D, err) != 0) goto out;
    if (!(c.baseline = dup_doubles(p->baseline, D))) {
      c.baseline = s->baseline;
      ns_explore_fail(err, "baseline: out of memory");
      goto out;
    }
  } else if (reset_baseline || (NS_HAS(p, NS_F_BASELINE) && !p->baseline)) {
    double *row = malloc(D * sizeof *row);
    if (!row) {
      ns_explore_fail(err, "baseline: out of memory");
      goto out;
    }
    for (size_t j = 0; j < D; j++)
      row[j] = ns_tensor_get(c.batch, (size_t)(c.companion - 1) * D + j);
    c.baseline = row;
  }
  if ((double)c.train_batches * (double)c.batch_size > 1e6) {
    ns_explore_fail(err, "%s: train_batches * batch_size must be at most 1000000, got %d * %d",
                    NS_HAS(p, NS_F_BATCH_SIZE) ? "batch_size" : "train_batches", c.train_batches,
                    c.batch_size);
    goto out;
  }
  rc = 0;

out:
  if (rc == 0) {
    free_new(s, &c); /* s's old arrays that c replaced */
    *s = c;
  } else {
    free_new(&c, s);
  }
  return rc;
}
