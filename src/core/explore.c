/* explore.c: the explorer state, its validated patches, undo history, and the result
 * record that every panel of the screen reads. See explore.h for the contract. */
#include "core/explore.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jacobian.h"
#include "core/moments.h"
#include "core/rng.h"

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

static int fail(char *err, const char *fmt, ...) {
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
  p->nbaseline = src->batch ? src->batch->shape[1] : 0;
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
    return fail(err, "out of memory");
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

static size_t batch_cols(const ns_state *s) {
  return s->batch ? s->batch->shape[1] : 0;
}

int ns_state_copy(ns_state *dst, const ns_state *src, char *err) {
  *dst = *src;
  dst->x = src->x ? ns_tensor_copy(src->x) : NULL;
  dst->batch = src->batch ? ns_tensor_copy(src->batch) : NULL;
  dst->baseline = dup_doubles(src->baseline, batch_cols(src));
  dst->gamma = dup_doubles(src->gamma, src->ngamma);
  dst->beta = dup_doubles(src->beta, src->nbeta);
  if ((src->x && !dst->x) || (src->batch && !dst->batch) ||
      (src->baseline && batch_cols(src) && !dst->baseline) || (src->gamma && !dst->gamma) ||
      (src->beta && !dst->beta)) {
    ns_state_free(dst);
    return fail(err, "out of memory copying the explorer state");
  }
  return 0;
}

static int same_double(double a, double b) {
  return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

static int same_doubles(const double *a, size_t na, const double *b, size_t nb) {
  if (na != nb) return 0;
  for (size_t i = 0; i < na; i++)
    if (!same_double(a[i], b[i])) return 0;
  return 1;
}

static int same_tensor(const ns_tensor *a, const ns_tensor *b) {
  if (!a || !b) return a == b;
  if (a->rank != b->rank || a->dtype != b->dtype || a->n != b->n) return 0;
  for (int k = 0; k < a->rank; k++)
    if (a->shape[k] != b->shape[k]) return 0;
  return memcmp(a->data, b->data, a->n * ns_dtype_size(a->dtype)) == 0;
}

int ns_state_equal(const ns_state *a, const ns_state *b) {
  return same_tensor(a->x, b->x) && a->kind == b->kind && a->axes == b->axes &&
         a->groups == b->groups && same_double(a->eps, b->eps) && a->eps_at == b->eps_at &&
         a->ddof == b->ddof && a->center == b->center &&
         same_doubles(a->gamma, a->ngamma, b->gamma, b->ngamma) &&
         same_doubles(a->beta, a->nbeta, b->beta, b->nbeta) && a->dtype == b->dtype &&
         a->acc == b->acc && a->algo == b->algo && a->mode == b->mode &&
         same_tensor(a->batch, b->batch) &&
         same_doubles(a->baseline, batch_cols(a), b->baseline, batch_cols(b)) &&
         a->target == b->target && a->companion == b->companion && a->seed == b->seed &&
         a->train_batches == b->train_batches && a->batch_size == b->batch_size &&
         (same_double(a->momentum, b->momentum) || (a->cumulative && b->cumulative)) &&
         a->cumulative == b->cumulative && a->train_source == b->train_source &&
         same_double(a->train_loc, b->train_loc) && same_double(a->train_scale, b->train_scale) &&
         same_double(a->shift, b->shift) && same_double(a->scale, b->scale) &&
         a->focus == b->focus && a->cursor_row == b->cursor_row && a->cursor_col == b->cursor_col;
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

#define HAS(p, f) (((p)->set >> (f)) & 1u)

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
    if (!isfinite(v[i])) return fail(err, "%s: element %zu is not finite (%g)", what, i + 1, v[i]);
  return 0;
}

/* The field to blame for a spec that does not fit x. */
static const char *spec_blame(const ns_state_patch *p) {
  static const ns_field order[] = {NS_F_GROUPS, NS_F_AXES, NS_F_KIND,  NS_F_X,
                                   NS_F_GAMMA,  NS_F_BETA, NS_F_CENTER};
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
    if (HAS(p, order[i])) return field_names[order[i]];
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
    return fail(err, "%s: axis %d is beyond x's rank %d", HAS(p, NS_F_AXES) ? "axes" : who, k + 1,
                c->x->rank);
  }
  ns_norm_plan plan;
  memset(&plan, 0, sizeof plan);
  if (ns_norm_plan_make(c->x->rank, c->x->shape, &spec, &plan, e) != 0)
    return fail(err, "%s: %s", who, e[0] ? e : "does not fit x");
  size_t naff = plan.naffine;
  ns_norm_plan_free(&plan);
  if (c->ngamma > 1 && c->ngamma != naff) {
    if (HAS(p, NS_F_GAMMA))
      return fail(err, "gamma: has %zu values, x needs 1 or %zu", c->ngamma, naff);
    return fail(err, "%s: gamma has %zu values but would need 1 or %zu (set gamma too)", who,
                c->ngamma, naff);
  }
  if (c->nbeta > 1 && c->nbeta != naff) {
    if (HAS(p, NS_F_BETA))
      return fail(err, "beta: has %zu values, x needs 1 or %zu", c->nbeta, naff);
    return fail(err, "%s: beta has %zu values but would need 1 or %zu (set beta too)", who,
                c->nbeta, naff);
  }
  return 0;
}

int ns_state_apply(ns_state *s, const ns_state_patch *p, char *err) {
  if (p->set >> NS_F_COUNT) return fail(err, "patch: unknown field bit");
  ns_state c = *s; /* shares s's arrays until a field replaces one */
  char e[NS_ERRLEN];
  int rc = -1;

  /* 1. scalar and enum fields, each checked on its own */
  if (HAS(p, NS_F_KIND)) {
    if (p->kind < NS_KIND_LAYER || p->kind > NS_KIND_GROUP) {
      fail(err, "kind: unknown kind %d", (int)p->kind);
      goto out;
    }
    c.kind = p->kind;
  }
  if (HAS(p, NS_F_AXES)) {
    if (p->axes >= (1u << NS_MAXRANK)) {
      fail(err, "axes: only axes 1 to %d exist", NS_MAXRANK);
      goto out;
    }
    c.axes = p->axes;
  }
  if (HAS(p, NS_F_GROUPS)) {
    if (p->groups < 1) {
      fail(err, "groups: must be >= 1, got %d", p->groups);
      goto out;
    }
    c.groups = p->groups;
  }
  if (HAS(p, NS_F_EPS)) {
    if (!isfinite(p->eps) || p->eps < 0) {
      fail(err, "eps: must be finite and >= 0, got %g", p->eps);
      goto out;
    }
    c.eps = p->eps;
  }
  if (HAS(p, NS_F_EPS_AT)) {
    if (p->eps_at != NS_EPS_VAR && p->eps_at != NS_EPS_STD) {
      fail(err, "eps_at: must be \"var\" or \"std\"");
      goto out;
    }
    c.eps_at = p->eps_at;
  }
  if (HAS(p, NS_F_DDOF)) {
    if (p->ddof != 0 && p->ddof != 1) {
      fail(err, "ddof: must be 0 or 1, got %d", p->ddof);
      goto out;
    }
    c.ddof = p->ddof;
  }
  if (HAS(p, NS_F_CENTER)) {
    if (p->center < -1 || p->center > 1) {
      fail(err, "center: must be true, false or default");
      goto out;
    }
    c.center = p->center;
  }
  if (HAS(p, NS_F_DTYPE)) {
    if (p->dtype < NS_FP64 || p->dtype >= NS_DTYPE_COUNT) {
      fail(err, "dtype: unknown dtype %d", (int)p->dtype);
      goto out;
    }
    c.dtype = p->dtype;
  }
  if (HAS(p, NS_F_ACC)) {
    if (p->acc < -1 || p->acc >= NS_DTYPE_COUNT) {
      fail(err, "acc: unknown dtype %d", p->acc);
      goto out;
    }
    c.acc = p->acc;
  }
  if (HAS(p, NS_F_ALGO)) {
    if (p->algo < NS_ALGO_TWOPASS || p->algo > NS_ALGO_RAW) {
      fail(err, "algo: must be \"twopass\", \"welford\" or \"raw\"");
      goto out;
    }
    c.algo = p->algo;
  }
  if (HAS(p, NS_F_MODE)) {
    if (p->mode != NS_MODE_TRAIN && p->mode != NS_MODE_EVAL) {
      fail(err, "mode: must be \"train\" or \"eval\"");
      goto out;
    }
    c.mode = p->mode;
  }
  if (HAS(p, NS_F_TARGET)) c.target = p->target;
  if (HAS(p, NS_F_COMPANION)) c.companion = p->companion;
  if (HAS(p, NS_F_SEED)) c.seed = p->seed;
  if (HAS(p, NS_F_TRAIN_BATCHES)) {
    if (p->train_batches < 1 || p->train_batches > NS_EXPLORE_MAX_BATCHES) {
      fail(err, "train_batches: must be 1 to %d, got %d", NS_EXPLORE_MAX_BATCHES, p->train_batches);
      goto out;
    }
    c.train_batches = p->train_batches;
  }
  if (HAS(p, NS_F_BATCH_SIZE)) {
    if (p->batch_size < 2 || p->batch_size > NS_EXPLORE_MAX_BATCH_SIZE) {
      fail(err, "batch_size: must be 2 to %d, got %d", NS_EXPLORE_MAX_BATCH_SIZE, p->batch_size);
      goto out;
    }
    c.batch_size = p->batch_size;
  }
  if (HAS(p, NS_F_MOMENTUM)) {
    if (!p->cumulative && !(p->momentum > 0 && p->momentum <= 1)) {
      fail(err, "momentum: must be in (0, 1] or false (cumulative average), got %g", p->momentum);
      goto out;
    }
    c.cumulative = p->cumulative ? 1 : 0;
    if (!p->cumulative || (p->momentum > 0 && p->momentum <= 1)) c.momentum = p->momentum;
  }
  if (HAS(p, NS_F_TRAIN_SOURCE)) {
    if (p->train_source != NS_SOURCE_RNG && p->train_source != NS_SOURCE_BATCH) {
      fail(err, "train_source: must be \"rng\" or \"batch\"");
      goto out;
    }
    c.train_source = p->train_source;
  }
  if (HAS(p, NS_F_TRAIN_LOC)) {
    if (!isfinite(p->train_loc)) {
      fail(err, "train_loc: must be finite, got %g", p->train_loc);
      goto out;
    }
    c.train_loc = p->train_loc;
  }
  if (HAS(p, NS_F_TRAIN_SCALE)) {
    if (!isfinite(p->train_scale) || p->train_scale < 0) {
      fail(err, "train_scale: must be finite and >= 0, got %g", p->train_scale);
      goto out;
    }
    c.train_scale = p->train_scale;
  }
  if (HAS(p, NS_F_SHIFT)) {
    if (!isfinite(p->shift)) {
      fail(err, "shift: must be finite, got %g", p->shift);
      goto out;
    }
    c.shift = p->shift;
  }
  if (HAS(p, NS_F_SCALE)) {
    if (!isfinite(p->scale)) {
      fail(err, "scale: must be finite, got %g", p->scale);
      goto out;
    }
    c.scale = p->scale;
  }
  if (HAS(p, NS_F_FOCUS)) {
    if (p->focus < 0 || p->focus >= NS_PANEL_COUNT) {
      fail(err, "focus: unknown panel %d", (int)p->focus);
      goto out;
    }
    c.focus = p->focus;
  }
  if (HAS(p, NS_F_CURSOR)) {
    if (p->cursor_row < 0 || p->cursor_col < 0) {
      fail(err, "cursor: row and column must be >= 0");
      goto out;
    }
    c.cursor_row = p->cursor_row;
    c.cursor_col = p->cursor_col;
  }

  /* 2. owned arrays: validated, then copied into the candidate */
  if (HAS(p, NS_F_X)) {
    if (!p->x) {
      fail(err, "x: missing tensor");
      goto out;
    }
    if (ns_shape_check(p->x->rank, p->x->shape, e) != 0) {
      fail(err, "x: %s", e);
      goto out;
    }
    if (!(c.x = ns_tensor_copy(p->x))) {
      c.x = s->x;
      fail(err, "x: out of memory");
      goto out;
    }
  }
  if (HAS(p, NS_F_GAMMA)) {
    if (p->ngamma && !p->gamma) {
      fail(err, "gamma: missing values");
      goto out;
    }
    c.gamma = dup_doubles(p->gamma, p->ngamma);
    c.ngamma = c.gamma ? p->ngamma : 0;
    if (p->ngamma && !c.gamma) {
      fail(err, "gamma: out of memory");
      goto out;
    }
  }
  if (HAS(p, NS_F_BETA)) {
    if (p->nbeta && !p->beta) {
      fail(err, "beta: missing values");
      goto out;
    }
    c.beta = dup_doubles(p->beta, p->nbeta);
    c.nbeta = c.beta ? p->nbeta : 0;
    if (p->nbeta && !c.beta) {
      fail(err, "beta: out of memory");
      goto out;
    }
  }
  int reset_baseline = HAS(p, NS_F_COMPANION) && p->companion != s->companion;
  if (HAS(p, NS_F_BATCH)) {
    const ns_tensor *b = p->batch;
    if (!b) {
      fail(err, "batch: missing matrix");
      goto out;
    }
    if (b->rank != 2) {
      fail(err, "batch: must be a matrix (rows = examples, columns = features), got rank %d",
           b->rank);
      goto out;
    }
    if (b->shape[0] < 2) {
      fail(err, "batch: needs at least 2 rows (examples), got %zu", b->shape[0]);
      goto out;
    }
    if (b->n > NS_EXPLORE_JAC_LIMIT * 64) {
      fail(err, "batch: at most %d elements, got %zu", NS_EXPLORE_JAC_LIMIT * 64, b->n);
      goto out;
    }
    double *v = malloc(b->n * sizeof *v);
    if (!v) {
      fail(err, "batch: out of memory");
      goto out;
    }
    ns_tensor_read(b, v);
    for (size_t i = 0; i < b->n; i++)
      if (!isfinite(v[i])) {
        fail(err, "batch: element (%zu,%zu) is not finite", i / b->shape[1] + 1,
             i % b->shape[1] + 1);
        free(v);
        goto out;
      }
    c.batch = ns_tensor_from(2, b->shape, NS_FP64, v, e);
    free(v);
    if (!c.batch) {
      c.batch = s->batch;
      fail(err, "batch: %s", e);
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
    fail(err, "target: row %d is outside the batch (rows 1 to %zu)", c.target, B);
    goto out;
  }
  if (c.companion < 1 || (size_t)c.companion > B) {
    fail(err, "companion: row %d is outside the batch (rows 1 to %zu)", c.companion, B);
    goto out;
  }
  if (c.target == c.companion) {
    fail(err, "%s: target and companion must be different rows (both %d)",
         HAS(p, NS_F_COMPANION) ? "companion" : "target", c.target);
    goto out;
  }
  if (HAS(p, NS_F_BASELINE) && p->baseline) {
    if (p->nbaseline != D) {
      fail(err, "baseline: has %zu values, the batch has %zu columns", p->nbaseline, D);
      goto out;
    }
    if (check_finite_array("baseline", p->baseline, D, err) != 0) goto out;
    if (!(c.baseline = dup_doubles(p->baseline, D))) {
      c.baseline = s->baseline;
      fail(err, "baseline: out of memory");
      goto out;
    }
  } else if (reset_baseline || (HAS(p, NS_F_BASELINE) && !p->baseline)) {
    double *row = malloc(D * sizeof *row);
    if (!row) {
      fail(err, "baseline: out of memory");
      goto out;
    }
    for (size_t j = 0; j < D; j++)
      row[j] = ns_tensor_get(c.batch, (size_t)(c.companion - 1) * D + j);
    c.baseline = row;
  }
  if ((double)c.train_batches * (double)c.batch_size > 1e6) {
    fail(err, "%s: train_batches * batch_size must be at most 1000000, got %d * %d",
         HAS(p, NS_F_BATCH_SIZE) ? "batch_size" : "train_batches", c.train_batches, c.batch_size);
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

/* ---------------------------------------------------------------- history */

size_t ns_state_bytes(const ns_state *s) {
  size_t b = sizeof *s;
  if (s->x) b += s->x->n * ns_dtype_size(s->x->dtype);
  if (s->batch) b += s->batch->n * ns_dtype_size(s->batch->dtype) + s->batch->shape[1] * 8;
  return b + (s->ngamma + s->nbeta) * sizeof(double);
}

void ns_history_init(ns_history *h, size_t depth) {
  memset(h, 0, sizeof *h);
  h->depth = depth ? depth : 1;
  h->max_bytes = NS_HISTORY_MAX_BYTES;
}

/* Drops the oldest undo steps while the copies exceed max_bytes (keeping one). */
static void history_trim(ns_history *h) {
  size_t total = 0;
  for (size_t i = 0; i < h->nundo; i++) total += ns_state_bytes(&h->undo[i]);
  for (size_t i = 0; i < h->nredo; i++) total += ns_state_bytes(&h->redo[i]);
  size_t drop = 0;
  while (total > h->max_bytes && h->nundo - drop > 1) total -= ns_state_bytes(&h->undo[drop++]);
  if (drop == 0) return;
  for (size_t i = 0; i < drop; i++) ns_state_free(&h->undo[i]);
  memmove(h->undo, h->undo + drop, (h->nundo - drop) * sizeof *h->undo);
  h->nundo -= drop;
}

static void free_stack(ns_state **v, size_t *n) {
  for (size_t i = 0; i < *n; i++) ns_state_free(&(*v)[i]);
  free(*v);
  *v = NULL;
  *n = 0;
}

void ns_history_free(ns_history *h) {
  free_stack(&h->undo, &h->nundo);
  free_stack(&h->redo, &h->nredo);
}

/* Takes ownership of *st (moved into the stack). */
static int stack_push(ns_state **v, size_t *n, size_t depth, ns_state *st, char *err) {
  if (*n >= depth) { /* drop the oldest */
    ns_state_free(&(*v)[0]);
    memmove(*v, *v + 1, (*n - 1) * sizeof **v);
    (*n)--;
  }
  ns_state *nv = realloc(*v, (*n + 1) * sizeof **v);
  if (!nv) {
    ns_state_free(st);
    return fail(err, "out of memory recording the undo step");
  }
  *v = nv;
  nv[(*n)++] = *st;
  return 0;
}

int ns_history_push(ns_history *h, const ns_state *s, char *err) {
  ns_state c;
  if (ns_state_copy(&c, s, err) != 0) return -1;
  free_stack(&h->redo, &h->nredo);
  if (stack_push(&h->undo, &h->nundo, h->depth, &c, err) != 0) return -1;
  history_trim(h);
  return 0;
}

int ns_history_apply(ns_history *h, ns_state *s, const ns_state_patch *p, char *err) {
  int view_only = 1;
  for (int f = 0; f < NS_F_COUNT; f++)
    if (HAS(p, f) && !ns_field_is_view((ns_field)f)) view_only = 0;
  if (!h || view_only) return ns_state_apply(s, p, err);
  ns_state before;
  if (ns_state_copy(&before, s, err) != 0) return -1;
  if (ns_state_apply(s, p, err) != 0) {
    ns_state_free(&before);
    return -1;
  }
  free_stack(&h->redo, &h->nredo);
  if (stack_push(&h->undo, &h->nundo, h->depth, &before, err) == 0) history_trim(h);
  return 0; /* applied (even if the undo step could not be recorded) */
}

static int history_swap(ns_state **from, size_t *nfrom, ns_state **to, size_t *nto, size_t depth,
                        ns_state *s) {
  if (*nfrom == 0) return 0;
  ns_state prev = (*from)[--(*nfrom)];
  ns_state cur = *s;
  *s = prev;
  if (stack_push(to, nto, depth, &cur, NULL) != 0) return 1; /* cur was freed */
  return 1;
}

int ns_history_undo(ns_history *h, ns_state *s) {
  return history_swap(&h->undo, &h->nundo, &h->redo, &h->nredo, (size_t)-1, s);
}

int ns_history_redo(ns_history *h, ns_state *s) {
  return history_swap(&h->redo, &h->nredo, &h->undo, &h->nundo, h->depth, s);
}

/* ---------------------------------------------------------------- key helpers */

#define PATCH1(fld, member, val)                                                                   \
  ns_state_patch p;                                                                                \
  ns_patch_init(&p);                                                                               \
  p.set = 1u << (fld);                                                                             \
  p.member = (val);                                                                                \
  return ns_history_apply(h, s, &p, err)

int ns_explore_cycle_kind(ns_state *s, ns_history *h, int dir, char *err) {
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = (1u << NS_F_KIND) | (1u << NS_F_AXES);
  p.axes = 0;
  int step = dir < 0 ? NS_KIND_GROUP : 1;
  for (int i = 1; i <= NS_KIND_GROUP + 1; i++) {
    p.kind = (ns_kind)(((int)s->kind + i * step) % (NS_KIND_GROUP + 1));
    char e[NS_ERRLEN];
    if (ns_default_axes(p.kind, s->x->rank, e) == 0) continue;
    /* gamma/beta sized for the old kind would not fit: drop them with the change */
    ns_state_patch q = p;
    if (ns_history_apply(h, s, &q, e) == 0) return 0;
    q.set |= (1u << NS_F_GAMMA) | (1u << NS_F_BETA);
    q.ngamma = q.nbeta = 0;
    if (ns_history_apply(h, s, &q, e) == 0) return 0;
  }
  return fail(err, "kind: no other kind is defined for x's rank %d", s->x->rank);
}

int ns_explore_eps_decade(ns_state *s, ns_history *h, int dir, char *err) {
  double e = s->eps;
  if (dir > 0)
    e = e == 0 ? 1e-12 : e * 10;
  else if (dir < 0)
    e = e <= 1e-12 ? 0 : e / 10;
  /* keep exact decades exact: 1e-5 * 10 is 1.0000000000000001e-4 */
  if (e > 0) {
    double k = round(log10(e));
    if (fabs(log10(e) - k) < 1e-9) e = pow(10, k);
  }
  PATCH1(NS_F_EPS, eps, e);
}

int ns_explore_set_eps(ns_state *s, ns_history *h, double eps, char *err) {
  PATCH1(NS_F_EPS, eps, eps);
}

int ns_explore_toggle_eps_at(ns_state *s, ns_history *h, char *err) {
  PATCH1(NS_F_EPS_AT, eps_at, s->eps_at == NS_EPS_VAR ? NS_EPS_STD : NS_EPS_VAR);
}

int ns_explore_toggle_ddof(ns_state *s, ns_history *h, char *err) {
  PATCH1(NS_F_DDOF, ddof, 1 - s->ddof);
}

int ns_explore_cycle_center(ns_state *s, ns_history *h, char *err) {
  PATCH1(NS_F_CENTER, center, s->center == -1 ? 1 : s->center == 1 ? 0 : -1);
}

static int cycle(int v, int n, int dir) {
  return ((v + (dir < 0 ? -1 : 1)) % n + n) % n;
}

int ns_explore_cycle_dtype(ns_state *s, ns_history *h, int dir, char *err) {
  PATCH1(NS_F_DTYPE, dtype, (ns_dtype)cycle((int)s->dtype, NS_DTYPE_COUNT, dir));
}

int ns_explore_cycle_acc(ns_state *s, ns_history *h, int dir, char *err) {
  /* -1 (default) is slot 0, dtype d is slot d+1 */
  PATCH1(NS_F_ACC, acc, cycle(s->acc + 1, NS_DTYPE_COUNT + 1, dir) - 1);
}

int ns_explore_cycle_algo(ns_state *s, ns_history *h, int dir, char *err) {
  PATCH1(NS_F_ALGO, algo, (ns_algo)cycle((int)s->algo, 3, dir));
}

int ns_explore_toggle_mode(ns_state *s, ns_history *h, char *err) {
  PATCH1(NS_F_MODE, mode, s->mode == NS_MODE_TRAIN ? NS_MODE_EVAL : NS_MODE_TRAIN);
}

int ns_explore_toggle_axis(ns_state *s, ns_history *h, int axis, char *err) {
  if (axis < 1 || axis > s->x->rank)
    return fail(err, "axes: axis %d does not exist (x has rank %d)", axis, s->x->rank);
  char e[NS_ERRLEN];
  unsigned m = s->axes ? s->axes : ns_default_axes(s->kind, s->x->rank, e);
  m ^= 1u << (axis - 1);
  if (m == 0) return fail(err, "axes: at least one axis must be reduced");
  PATCH1(NS_F_AXES, axes, m);
}

int ns_explore_groups_step(ns_state *s, ns_history *h, int dir, char *err) {
  /* step to the next group count that divides the channels (axis 2) when there is one */
  size_t C = s->x->rank >= 2 ? s->x->shape[1] : 1;
  int g = s->groups;
  for (;;) {
    g += dir < 0 ? -1 : 1;
    if (g < 1 || (size_t)g > C) {
      char divs[96] = "";
      size_t used = 0;
      for (size_t d = 1; d <= C && used + 24 < sizeof divs; d++)
        if (C % d == 0)
          used += (size_t)snprintf(divs + used, sizeof divs - used, "%s%zu", used ? ", " : "", d);
      return fail(err, "groups: already the %s (%d); %zu channel%s divide into %s group%s",
                  dir < 0 ? "fewest" : "most", s->groups, C, C == 1 ? "" : "s", divs,
                  C == 1 ? "" : "s");
    }
    if (C % (size_t)g == 0) break;
  }
  PATCH1(NS_F_GROUPS, groups, g);
}

int ns_explore_momentum_step(ns_state *s, ns_history *h, int dir, char *err) {
  double m = s->momentum * (dir < 0 ? 0.5 : 2.0);
  if (m > 1) m = 1;
  if (m < 1e-6) return fail(err, "momentum: already at its smallest step (%g)", s->momentum);
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = 1u << NS_F_MOMENTUM;
  p.momentum = m;
  p.cumulative = 0;
  return ns_history_apply(h, s, &p, err);
}

int ns_explore_toggle_cumulative(ns_state *s, ns_history *h, char *err) {
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = 1u << NS_F_MOMENTUM;
  p.momentum = s->momentum;
  p.cumulative = !s->cumulative;
  return ns_history_apply(h, s, &p, err);
}

int ns_explore_set_x(ns_state *s, ns_history *h, size_t i, double v, char *err) {
  if (i >= s->x->n)
    return fail(err, "x: element %zu does not exist (%zu elements)", i + 1, s->x->n);
  ns_tensor *t = ns_tensor_copy(s->x);
  if (!t) return fail(err, "x: out of memory");
  ns_tensor_set(t, i, v);
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = 1u << NS_F_X;
  p.x = t;
  int rc = ns_history_apply(h, s, &p, err);
  ns_tensor_free(t);
  return rc;
}

/* A matrix with one row (axis 1) or column (axis 2) inserted (insert) or removed at `at`;
 * a vector counts as one row. New cells are 0. */
static ns_tensor *matrix_edit(const ns_tensor *m, int axis, size_t at, int insert, const char *what,
                              char *err) {
  if (m->rank > 2) {
    fail(err, "%s: rows and columns can only be edited for a vector or matrix (rank %d)", what,
         m->rank);
    return NULL;
  }
  if (axis != 1 && axis != 2) {
    fail(err, "%s: axis must be 1 (rows) or 2 (columns), got %d", what, axis);
    return NULL;
  }
  int vec = m->rank == 1;
  size_t R = vec ? 1 : m->shape[0], C = vec ? m->shape[0] : m->shape[1];
  if (vec && axis == 1 && !insert) {
    fail(err, "%s: a vector has one row; remove columns (elements) instead", what);
    return NULL;
  }
  int to_matrix = vec && axis == 1; /* a second row turns the vector into a (2, D) matrix */
  size_t cnt = axis == 1 ? R : C;
  if (insert ? at > cnt : at >= cnt) {
    fail(err, "%s: %s %zu does not exist", what, axis == 1 ? "row" : "column", at + 1);
    return NULL;
  }
  if (!insert && cnt <= 1) {
    fail(err, "%s: cannot remove the last %s", what, axis == 1 ? "row" : "column");
    return NULL;
  }
  size_t R2 = R, C2 = C;
  if (axis == 1)
    R2 = insert ? R + 1 : R - 1;
  else
    C2 = insert ? C + 1 : C - 1;
  double *v = calloc(R2 * C2, sizeof *v);
  if (!v) {
    fail(err, "%s: out of memory", what);
    return NULL;
  }
  for (size_t i = 0; i < R2; i++)
    for (size_t j = 0; j < C2; j++) {
      size_t si = i, sj = j;
      if (axis == 1) {
        if (insert && i == at) continue;
        si = insert ? (i > at ? i - 1 : i) : (i >= at ? i + 1 : i);
      } else {
        if (insert && j == at) continue;
        sj = insert ? (j > at ? j - 1 : j) : (j >= at ? j + 1 : j);
      }
      v[i * C2 + j] = ns_tensor_get(m, si * C + sj);
    }
  int vec_out = vec && !to_matrix;
  size_t shape[2] = {vec_out ? C2 : R2, C2};
  ns_tensor *t = ns_tensor_from(vec_out ? 1 : 2, shape, m->dtype, v, err);
  free(v);
  return t;
}

static int x_edit(ns_state *s, ns_history *h, int axis, size_t at, int insert, char *err) {
  ns_tensor *t = matrix_edit(s->x, axis, at, insert, "x", err);
  if (!t) return -1;
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = 1u << NS_F_X;
  p.x = t;
  int rc = ns_history_apply(h, s, &p, NULL);
  if (rc != 0) { /* gamma/beta sized for the old x no longer fit: drop them */
    p.set |= (1u << NS_F_GAMMA) | (1u << NS_F_BETA);
    rc = ns_history_apply(h, s, &p, err);
  }
  ns_tensor_free(t);
  return rc;
}

int ns_explore_x_insert(ns_state *s, ns_history *h, int axis, size_t at, char *err) {
  return x_edit(s, h, axis, at, 1, err);
}

int ns_explore_x_remove(ns_state *s, ns_history *h, int axis, size_t at, char *err) {
  return x_edit(s, h, axis, at, 0, err);
}

int ns_explore_set_batch(ns_state *s, ns_history *h, size_t row, size_t col, double v, char *err) {
  size_t B = s->batch->shape[0], D = s->batch->shape[1];
  if (row >= B || col >= D)
    return fail(err, "batch: cell (%zu,%zu) is outside the %zu x %zu batch", row + 1, col + 1, B,
                D);
  ns_tensor *t = ns_tensor_copy(s->batch);
  if (!t) return fail(err, "batch: out of memory");
  ns_tensor_set(t, row * D + col, v);
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = 1u << NS_F_BATCH;
  p.batch = t;
  int rc = ns_history_apply(h, s, &p, err);
  ns_tensor_free(t);
  return rc;
}

static int batch_edit(ns_state *s, ns_history *h, int axis, size_t at, int insert, char *err) {
  ns_tensor *t = matrix_edit(s->batch, axis, at, insert, "batch", err);
  if (!t) return -1;
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = 1u << NS_F_BATCH;
  p.batch = t;
  if (axis == 1) { /* keep target and companion on the same examples */
    int tg = s->target, cp = s->companion, a = (int)at + 1;
    if (insert) {
      if (tg >= a) tg++;
      if (cp >= a) cp++;
    } else {
      if (a == tg || a == cp) {
        ns_tensor_free(t);
        return fail(err, "batch: row %d is the %s; choose another row to remove", a,
                    a == tg ? "target" : "companion");
      }
      if (tg > a) tg--;
      if (cp > a) cp--;
    }
    p.set |= (1u << NS_F_TARGET) | (1u << NS_F_COMPANION);
    p.target = tg;
    p.companion = cp;
  }
  int rc = ns_history_apply(h, s, &p, err);
  ns_tensor_free(t);
  return rc;
}

int ns_explore_batch_insert(ns_state *s, ns_history *h, int axis, size_t at, char *err) {
  return batch_edit(s, h, axis, at, 1, err);
}

int ns_explore_batch_remove(ns_state *s, ns_history *h, int axis, size_t at, char *err) {
  return batch_edit(s, h, axis, at, 0, err);
}

int ns_explore_set_target(ns_state *s, ns_history *h, int row, char *err) {
  PATCH1(NS_F_TARGET, target, row);
}

int ns_explore_set_companion(ns_state *s, ns_history *h, int row, char *err) {
  PATCH1(NS_F_COMPANION, companion, row);
}

int ns_explore_set_shift(ns_state *s, ns_history *h, double b, char *err) {
  PATCH1(NS_F_SHIFT, shift, b);
}

int ns_explore_set_scale(ns_state *s, ns_history *h, double a, char *err) {
  PATCH1(NS_F_SCALE, scale, a);
}

int ns_explore_focus(ns_state *s, ns_panel panel, char *err) {
  ns_history *h = NULL;
  PATCH1(NS_F_FOCUS, focus, panel);
}

int ns_explore_cursor(ns_state *s, int row, int col, char *err) {
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = 1u << NS_F_CURSOR;
  p.cursor_row = row;
  p.cursor_col = col;
  return ns_state_apply(s, &p, err);
}

/* ---------------------------------------------------------------- compute */

/* Each part of the result frees and zeroes what it owns, so a part can be recomputed
 * while the others are kept. */
static void clear_output(ns_result *r) {
  ns_norm_result_free(&r->norm);
  ns_tensor_free(r->y_probe);
  r->y_probe = NULL;
  r->y_mean = r->y_std = 0;
  r->eval_note = NULL;
  r->degenerate_why[0] = 0;
  r->probe_n = 0;
}

static void clear_jac(ns_result *r) {
  free(r->J);
  free(r->J_fd);
  free(r->spec_closed);
  free(r->spec_numeric);
  free(r->spec_fd);
  r->J = r->J_fd = NULL;
  r->spec_closed = r->spec_numeric = r->spec_fd = NULL;
  r->nclosed = r->nnumeric = r->nfd = 0;
  r->jac_done = 0;
  r->jac_skip[0] = 0;
  r->jn = 0;
  r->jac_fd_diff = r->eig_closed_vs_numeric = r->eig_numeric_vs_fd = r->eig_disagree = 0;
  r->smax = r->rank_tol = 0;
  r->rank = r->symmetric = 0;
}

static void clear_batch(ns_result *r) {
  free(r->bn);
  free(r->ln);
  free(r->target_now);
  free(r->target_base);
  free(r->flip);
  r->bn = r->ln = r->target_now = r->target_base = NULL;
  r->flip = NULL;
  r->B = r->D = 0;
  r->nflip = 0;
}

static void clear_train(ns_result *r) {
  free(r->eval_x);
  free(r->eval_mean);
  free(r->eval_var);
  free(r->eval_y);
  r->eval_x = r->eval_mean = r->eval_var = r->eval_y = NULL;
  for (int k = 0; k < 3; k++) {
    free(r->est[k].mean);
    free(r->est[k].var);
    free(r->est[k].y);
  }
  memset(r->est, 0, sizeof r->est);
  r->train_d = r->train_n = r->eval_n = 0;
  r->est_active = 0;
}

void ns_result_free(ns_result *r) {
  if (!r) return;
  clear_output(r);
  ns_tensor_free(r->y_shift);
  ns_tensor_free(r->y_scale);
  clear_jac(r);
  clear_batch(r);
  clear_train(r);
  memset(r, 0, sizeof *r);
}

static double max_abs_diff_tensor(const ns_tensor *a, const ns_tensor *b) {
  double m = 0;
  for (size_t i = 0; i < a->n; i++) {
    double d = fabs(ns_tensor_get(a, i) - ns_tensor_get(b, i));
    if (d > m || isnan(d)) m = d;
    if (isnan(m)) break;
  }
  return m;
}

/* Normalizes a B x D fp64 matrix with one of the state's settings (kind batch: down the
 * columns; kind layer: across the rows; no affine, fp64). out: B*D values. */
static int norm_matrix(const double *v, size_t B, size_t D, ns_kind kind, const ns_state *s,
                       ns_mode mode, ns_running *run, double *out, char *err) {
  size_t shape[2] = {B, D};
  ns_tensor *t = ns_tensor_from(2, shape, NS_FP64, v, err);
  if (!t) return -1;
  ns_spec sp;
  ns_spec_default(&sp);
  sp.kind = kind;
  sp.eps = s->eps;
  sp.eps_at = s->eps_at;
  sp.ddof = s->ddof;
  sp.mode = mode;
  sp.running = run;
  ns_norm_result nr;
  memset(&nr, 0, sizeof nr);
  int rc = ns_normalize(t, &sp, &nr, err);
  if (rc == 0) ns_tensor_read(nr.y, out);
  ns_norm_result_free(&nr);
  ns_tensor_free(t);
  return rc;
}

/* Eigenvalue lists expanded by multiplicity, as complex numbers sorted by (re, im). */
static int expand_eigs(const ns_eig *e, int ne, double *re, double *im, size_t n) {
  size_t k = 0;
  for (int i = 0; i < ne; i++)
    for (int m = 0; m < e[i].mult; m++) {
      if (k >= n) return -1;
      re[k] = e[i].value;
      im[k] = e[i].imag;
      k++;
    }
  if (k != n) return -1;
  for (size_t i = 1; i < n; i++) { /* insertion sort: n <= NS_EXPLORE_JAC_LIMIT */
    double a = re[i], b = im[i];
    size_t j = i;
    while (j > 0 && (re[j - 1] > a || (re[j - 1] == a && im[j - 1] > b))) {
      re[j] = re[j - 1];
      im[j] = im[j - 1];
      j--;
    }
    re[j] = a;
    im[j] = b;
  }
  return 0;
}

/* Largest |difference| between two labelled spectra over n eigenvalues; NaN if either
 * does not account for exactly n values. */
static double eig_disagreement(const ns_eig *a, int na, const ns_eig *b, int nb, size_t n) {
  double *w = malloc(4 * n * sizeof *w);
  if (!w) return NAN;
  double m = NAN;
  if (expand_eigs(a, na, w, w + n, n) == 0 && expand_eigs(b, nb, w + 2 * n, w + 3 * n, n) == 0) {
    m = 0;
    for (size_t i = 0; i < n; i++) {
      double d = hypot(w[i] - w[2 * n + i], w[n + i] - w[3 * n + i]);
      if (d > m || isnan(d)) m = d;
    }
  }
  free(w);
  return m;
}

/* Needs r's input statistics and output (a degenerate statistic makes J undefined). */
static void jac_probe(const ns_tensor *x, const ns_spec *spec, ns_result *r) {
  size_t n = x->n;
  char e[NS_ERRLEN] = "";
  r->jac_done = 0;
  if (n > NS_EXPLORE_JAC_LIMIT) {
    snprintf(r->jac_skip, sizeof r->jac_skip, "Jacobian skipped: %zu elements, limit %d", n,
             NS_EXPLORE_JAC_LIMIT);
    return;
  }
  if (r->x_nan || r->x_inf || r->norm.ndegenerate) {
    snprintf(r->jac_skip, sizeof r->jac_skip, "Jacobian undefined: %s",
             r->norm.ndegenerate ? r->degenerate_why : "x holds NaN or Inf");
    return;
  }
  r->jn = n;
  r->J = malloc(n * n * sizeof *r->J);
  r->J_fd = malloc(n * n * sizeof *r->J_fd);
  r->spec_closed = malloc(n * sizeof *r->spec_closed);
  r->spec_numeric = malloc(n * sizeof *r->spec_numeric);
  r->spec_fd = malloc(n * sizeof *r->spec_fd);
  double *sv = malloc(n * sizeof *sv);
  if (!r->J || !r->J_fd || !r->spec_closed || !r->spec_numeric || !r->spec_fd || !sv) {
    snprintf(r->jac_skip, sizeof r->jac_skip, "Jacobian skipped: out of memory");
    free(sv);
    return;
  }
  const char *stage = "analytic Jacobian";
  if (ns_jacobian_analytic(x, spec, r->J, e) != 0) goto fail;
  stage = "finite-difference Jacobian";
  if (ns_jacobian_fd(x, spec, NS_EXPLORE_FD_H, r->J_fd, e) != 0) goto fail;
  r->jac_fd_diff = ns_max_abs_diff(r->J, r->J_fd, n * n);
  stage = "closed-form spectrum";
  r->nclosed = ns_spectrum_closed(x, spec, r->spec_closed, n, e);
  if (r->nclosed < 0) goto fail;
  stage = "LAPACK spectrum";
  r->nnumeric = ns_spectrum_numeric(x, spec, r->J, r->spec_numeric, n, e);
  if (r->nnumeric < 0) goto fail;
  stage = "spectrum of the FD Jacobian";
  r->nfd = ns_spectrum_numeric(x, spec, r->J_fd, r->spec_fd, n, e);
  if (r->nfd < 0) goto fail;
  r->symmetric = ns_is_symmetric(r->J, n, 1e-12);
  stage = "singular values";
  if (r->symmetric && ns_is_symmetric(r->J, n, 0)) {
    /* exactly symmetric: the singular values are |eigenvalues| (saves an SVD) */
    size_t k = 0;
    for (int i = 0; i < r->nnumeric; i++)
      for (int m = 0; m < r->spec_numeric[i].mult && k < n; m++)
        sv[k++] = fabs(r->spec_numeric[i].value);
    if (k != n) goto fail;
  } else if (ns_svdvals(r->J, n, n, sv, e) != 0) {
    goto fail;
  }
  r->smax = 0;
  for (size_t i = 0; i < n; i++)
    if (sv[i] > r->smax) r->smax = sv[i];
  r->rank_tol = 1e-10 * r->smax;
  r->rank = 0;
  for (size_t i = 0; i < n; i++)
    if (sv[i] > r->rank_tol) r->rank++;
  r->eig_closed_vs_numeric =
      r->nclosed > 0 ? eig_disagreement(r->spec_closed, r->nclosed, r->spec_numeric, r->nnumeric, n)
                     : NAN;
  r->eig_numeric_vs_fd = eig_disagreement(r->spec_numeric, r->nnumeric, r->spec_fd, r->nfd, n);
  r->eig_disagree = r->eig_numeric_vs_fd;
  if (r->nclosed > 0 && !(r->eig_closed_vs_numeric <= r->eig_disagree))
    r->eig_disagree = r->eig_closed_vs_numeric;
  free(sv);
  r->jac_done = 1;
  return;
fail:
  free(sv);
  snprintf(r->jac_skip, sizeof r->jac_skip, "%s failed: %.200s", stage, e[0] ? e : "unknown error");
}

static void batch_probe(const ns_state *s, ns_result *r, char *err, int *rc) {
  size_t B = s->batch->shape[0], D = s->batch->shape[1];
  r->B = B;
  r->D = D;
  r->bn = malloc(B * D * sizeof *r->bn);
  r->ln = malloc(B * D * sizeof *r->ln);
  r->target_now = malloc(D * sizeof *r->target_now);
  r->target_base = malloc(D * sizeof *r->target_base);
  r->flip = calloc(D, 1);
  double *v = malloc(B * D * sizeof *v), *yb = malloc(B * D * sizeof *yb);
  if (!r->bn || !r->ln || !r->target_now || !r->target_base || !r->flip || !v || !yb) {
    *rc = fail(err, "batch panel: out of memory");
    goto out;
  }
  ns_tensor_read(s->batch, v);
  if (norm_matrix(v, B, D, NS_KIND_BATCH, s, NS_MODE_TRAIN, NULL, r->bn, err) != 0 ||
      norm_matrix(v, B, D, NS_KIND_LAYER, s, NS_MODE_TRAIN, NULL, r->ln, err) != 0) {
    *rc = -1;
    goto out;
  }
  size_t t = (size_t)s->target - 1, c = (size_t)s->companion - 1;
  for (size_t j = 0; j < D; j++) v[c * D + j] = s->baseline[j];
  if (norm_matrix(v, B, D, NS_KIND_BATCH, s, NS_MODE_TRAIN, NULL, yb, err) != 0) {
    *rc = -1;
    goto out;
  }
  r->nflip = 0;
  for (size_t j = 0; j < D; j++) {
    r->target_now[j] = r->bn[t * D + j];
    r->target_base[j] = yb[t * D + j];
    r->flip[j] = (r->target_now[j] > 0 && r->target_base[j] < 0) ||
                 (r->target_now[j] < 0 && r->target_base[j] > 0);
    r->nflip += r->flip[j];
  }
out:
  free(v);
  free(yb);
}

/* Per-feature population moments of a rows x D matrix, fp64 two-pass. */
static void column_moments(const double *v, size_t rows, size_t D, ns_moments *m) {
  for (size_t j = 0; j < D; j++)
    ns_moments_compute(v + j, rows, D, NS_FP64, NS_FP64, NS_ALGO_TWOPASS, &m[j]);
}

/* Train/eval panel. On success runs[] hold the three estimators (caller frees). */
static int train_probe(const ns_state *s, ns_result *r, ns_running runs[3], char *err) {
  ns_rng g;
  ns_rng_seed_u64(&g, s->seed);
  size_t D = s->train_source == NS_SOURCE_RNG ? 1 : s->batch->shape[1];
  size_t bs = (size_t)s->batch_size, nb = (size_t)s->train_batches;
  size_t B = s->batch->shape[0];
  size_t E = s->train_source == NS_SOURCE_RNG ? bs : B;
  r->train_d = D;
  r->train_n = nb * bs;
  r->eval_n = E;
  double *bv = NULL, *bx = malloc(bs * D * sizeof *bx);
  ns_moments *bm = malloc(D * sizeof *bm);
  r->eval_x = malloc(E * D * sizeof *r->eval_x);
  r->eval_y = malloc(E * D * sizeof *r->eval_y);
  r->eval_mean = malloc(D * sizeof *r->eval_mean);
  r->eval_var = malloc(D * sizeof *r->eval_var);
  if (s->train_source == NS_SOURCE_BATCH) bv = malloc(B * D * sizeof *bv);
  int rc = -1;
  if (!bx || !bm || !r->eval_x || !r->eval_y || !r->eval_mean || !r->eval_var ||
      (s->train_source == NS_SOURCE_BATCH && !bv)) {
    fail(err, "train/eval panel: out of memory");
    goto out;
  }
  if (bv) ns_tensor_read(s->batch, bv);
  static const char *const names[3] = {"momentum", "cumulative", "exact"};
  for (int k = 0; k < 3; k++) {
    r->est[k].name = names[k];
    if (ns_running_init(&runs[k], s->momentum, k == 1, k == 2, D, err) != 0) goto out;
  }
  for (size_t b = 0; b < nb; b++) {
    if (bv) {
      for (size_t i = 0; i < bs; i++) { /* a row of the user's batch, with replacement */
        size_t row = (size_t)(ns_rng_random(&g) * (double)B);
        if (row >= B) row = B - 1;
        memcpy(bx + i * D, bv + row * D, D * sizeof *bx);
      }
    } else {
      for (size_t i = 0; i < bs; i++) bx[i] = ns_rng_normal(&g, s->train_loc, s->train_scale);
    }
    column_moments(bx, bs, D, bm);
    for (int k = 0; k < 3; k++)
      if (ns_running_update(&runs[k], bm, D, err) != 0) goto out;
  }
  if (bv)
    memcpy(r->eval_x, bv, E * D * sizeof *bv);
  else
    for (size_t i = 0; i < E; i++) r->eval_x[i] = ns_rng_normal(&g, s->train_loc, s->train_scale);
  column_moments(r->eval_x, E, D, bm);
  for (size_t j = 0; j < D; j++) {
    r->eval_mean[j] = bm[j].mean;
    r->eval_var[j] = ns_moments_var(&bm[j], 0);
  }
  if (norm_matrix(r->eval_x, E, D, NS_KIND_BATCH, s, NS_MODE_TRAIN, NULL, r->eval_y, err) != 0)
    goto out;
  for (int k = 0; k < 3; k++) {
    ns_estimator *est = &r->est[k];
    est->mean = malloc(D * sizeof *est->mean);
    est->var = malloc(D * sizeof *est->var);
    est->y = malloc(E * D * sizeof *est->y);
    if (!est->mean || !est->var || !est->y) {
      fail(err, "train/eval panel: out of memory");
      goto out;
    }
    memcpy(est->mean, runs[k].mean, D * sizeof *est->mean);
    memcpy(est->var, runs[k].var, D * sizeof *est->var);
    if (norm_matrix(r->eval_x, E, D, NS_KIND_BATCH, s, NS_MODE_EVAL, &runs[k], est->y, err) != 0)
      goto out;
    est->gap = 0;
    for (size_t i = 0; i < E * D; i++) {
      double d = fabs(est->y[i] - r->eval_y[i]);
      if (d > est->gap || isnan(d)) est->gap = d;
    }
  }
  r->est_active = s->cumulative ? 1 : 0;
  rc = 0;
out:
  free(bx);
  free(bv);
  free(bm);
  return rc;
}

static void precision_probe(const double *xv, size_t n, const ns_state *s, ns_result *r) {
  ns_spec sp;
  ns_state_spec(s, &sp);
  ns_dtype acc = ns_spec_acc(&sp);
  ns_moments m;
  ns_moments_compute(xv, n, 1, NS_FP64, NS_FP64, NS_ALGO_TWOPASS, &m);
  r->var_ref = ns_moments_var(&m, 0);
  r->prec_dtype = s->dtype;
  r->prec_acc = acc;
  double avail = -log10(ns_dtype_eps(acc));
  for (int a = 0; a < 3; a++) {
    ns_moments_compute(xv, n, 1, s->dtype, acc, (ns_algo)a, &m);
    double v = ns_moments_var(&m, 0);
    double rel = r->var_ref != 0 ? fabs(v - r->var_ref) / fabs(r->var_ref) : fabs(v);
    double dig = rel == 0 ? NS_EXPLORE_DIGITS_CAP : -log10(rel);
    if (isnan(dig) || dig < 0) dig = 0;
    if (dig > NS_EXPLORE_DIGITS_CAP) dig = NS_EXPLORE_DIGITS_CAP;
    r->var_algo[a] = v;
    r->var_relerr[a] = rel;
    r->var_digits[a] = dig;
    r->var_lost[a] = avail - dig > 0 ? avail - dig : 0;
  }
}

/* The leading part of x the probes use: all of it up to NS_EXPLORE_PROBE_LIMIT elements,
 * else whole entries along axis 1 (at least one; a vector is cut to its first values).
 * Sets rank/shape and returns the element count. */
static size_t probe_slice(const ns_tensor *x, int *rank, size_t shape[4]) {
  *rank = x->rank;
  for (int k = 0; k < x->rank; k++) shape[k] = x->shape[k];
  if (x->n <= NS_EXPLORE_PROBE_LIMIT) return x->n;
  if (x->rank == 1) return shape[0] = NS_EXPLORE_PROBE_LIMIT;
  size_t per = x->n / x->shape[0], k = NS_EXPLORE_PROBE_LIMIT / per;
  shape[0] = k ? k : 1;
  return shape[0] * per;
}

/* The probe slice of x with every element mapped to a*x + b (fp64). */
static ns_tensor *affine_copy(const ns_tensor *x, const double *xv, double a, double b, char *err) {
  int rank;
  size_t shape[4], n = probe_slice(x, &rank, shape);
  double *v = malloc(n * sizeof *v);
  if (!v) {
    fail(err, "out of memory");
    return NULL;
  }
  for (size_t i = 0; i < n; i++) v[i] = a * xv[i] + b;
  ns_tensor *t = ns_tensor_from(rank, shape, NS_FP64, v, err);
  free(v);
  return t;
}

/* The parts of a result computed for state a that differ for state b. */
static unsigned stale_parts(const ns_state *a, const ns_state *b) {
  unsigned m = 0;
  int stat = !same_double(a->eps, b->eps) || a->eps_at != b->eps_at || a->ddof != b->ddof;
  int batch = !same_tensor(a->batch, b->batch);
  if (!same_tensor(a->x, b->x)) m |= NS_PART_INPUT | NS_PART_OUTPUT | NS_PART_PREC;
  if (stat || a->kind != b->kind || a->axes != b->axes || a->groups != b->groups ||
      a->center != b->center || !same_doubles(a->gamma, a->ngamma, b->gamma, b->ngamma) ||
      !same_doubles(a->beta, a->nbeta, b->beta, b->nbeta) || a->dtype != b->dtype ||
      a->acc != b->acc || a->algo != b->algo || a->mode != b->mode)
    m |= NS_PART_OUTPUT;
  if (a->dtype != b->dtype || a->acc != b->acc) m |= NS_PART_PREC;
  if (stat || a->seed != b->seed || a->train_batches != b->train_batches ||
      a->batch_size != b->batch_size || !same_double(a->momentum, b->momentum) ||
      a->cumulative != b->cumulative || a->train_source != b->train_source ||
      !same_double(a->train_loc, b->train_loc) || !same_double(a->train_scale, b->train_scale) ||
      (b->train_source == NS_SOURCE_BATCH && batch)) {
    m |= NS_PART_TRAIN;
    if (b->mode == NS_MODE_EVAL && b->kind == NS_KIND_BATCH) m |= NS_PART_OUTPUT;
  }
  if (stat || batch || !same_doubles(a->baseline, batch_cols(a), b->baseline, batch_cols(b)) ||
      a->target != b->target || a->companion != b->companion)
    m |= NS_PART_BATCH;
  if (m & NS_PART_OUTPUT) m |= NS_PART_SHIFT | NS_PART_SCALE | NS_PART_JAC;
  if (!same_double(a->shift, b->shift)) m |= NS_PART_SHIFT;
  if (!same_double(a->scale, b->scale)) m |= NS_PART_SCALE;
  return m;
}

static void input_stats(const double *xv, size_t n, ns_result *r) {
  r->n = n;
  double sum = 0, sq = 0;
  r->x_min = INFINITY;
  r->x_max = -INFINITY;
  r->x_nan = r->x_inf = 0;
  for (size_t i = 0; i < n; i++) {
    r->x_nan += isnan(xv[i]) != 0;
    r->x_inf += isinf(xv[i]) != 0;
    sum += xv[i];
    if (xv[i] < r->x_min) r->x_min = xv[i];
    if (xv[i] > r->x_max) r->x_max = xv[i];
  }
  r->x_mean = sum / (double)n;
  for (size_t i = 0; i < n; i++) {
    double d = xv[i] - r->x_mean;
    sq += d * d;
  }
  r->x_std = sqrt(sq / (double)n);
  sq = 0;
  for (size_t i = 0; i < n; i++) sq += xv[i] * xv[i];
  r->x_rms = sqrt(sq / (double)n);
}

/* y(a*x + b) on the probe slice, with the output's spec (and running object). */
static ns_tensor *affine_probe(const ns_state *s, const double *xv, const ns_spec *spec, double a,
                               double b, char *err) {
  ns_norm_result nr;
  memset(&nr, 0, sizeof nr);
  ns_tensor *t = affine_copy(s->x, xv, a, b, err), *y = NULL;
  if (t && ns_normalize(t, spec, &nr, err) == 0) {
    y = nr.y;
    nr.y = NULL;
  }
  ns_norm_result_free(&nr);
  ns_tensor_free(t);
  return y;
}

/* The running statistics eval-mode batch norm of x uses (into *out, owned): the train
 * panel's selected estimator `run` when its statistic count fits x's nstat (0: unknown,
 * planned here), else fresh ones (mean 0, var 1). Sets the output's note. */
static int eval_running(const ns_state *s, const ns_running *run, size_t nstat, ns_running *out,
                        const char **note, char *err) {
  if (!nstat) { /* not known from a current output: plan the normalization of x */
    ns_spec spec;
    ns_state_spec(s, &spec);
    ns_norm_plan plan;
    memset(&plan, 0, sizeof plan);
    if (ns_norm_plan_make(s->x->rank, s->x->shape, &spec, &plan, err) != 0) return -1;
    nstat = plan.nstat;
    ns_norm_plan_free(&plan);
  }
  if (run->nstat == nstat) {
    *note = s->cumulative ? "eval mode: running statistics of the train panel (cumulative)"
                          : "eval mode: running statistics of the train panel (momentum)";
    return ns_running_copy(out, run, err);
  }
  *note = "eval mode: fresh running stats (mean 0, var 1): train panel features differ";
  if (ns_running_init(out, s->momentum, s->cumulative, 0, nstat, err) != 0) return -1;
  for (size_t j = 0; j < nstat; j++) {
    out->mean[j] = 0;
    out->var[j] = 1;
  }
  return 0;
}

/* Says in words why the output's statistics are degenerate (the first degenerate one's
 * cause; they are counted in r->norm.ndegenerate), or that a centered kind with one value
 * per statistic maps everything to beta. */
static void degenerate_words(const ns_state *s, ns_result *r) {
  const ns_norm_result *nr = &r->norm;
  char *buf = r->degenerate_why;
  size_t len = sizeof r->degenerate_why;
  ns_spec spec;
  ns_state_spec(s, &spec);
  int centered = s->center < 0 ? s->kind != NS_KIND_RMS : s->center;
  buf[0] = 0;
  if (!nr->ndegenerate) {
    if (centered && nr->plan.count == 1 && s->mode == NS_MODE_TRAIN)
      snprintf(buf, len, "1 value per statistic: x - mean = 0, so y = beta");
    return;
  }
  size_t k = 0;
  while (k < nr->plan.nstat && !nr->degenerate[k]) k++;
  if (k == nr->plan.nstat) return;
  const char *st = centered ? "s" : "rms";
  int eval = s->mode == NS_MODE_EVAL && s->kind == NS_KIND_BATCH;
  if (!eval && nr->plan.count <= (size_t)s->ddof)
    snprintf(buf, len, "1 value and ddof 1: variance 0/0");
  else if (!eval && !isfinite(nr->batch[k].mean))
    snprintf(buf, len, "%s",
             r->x_nan || r->x_inf ? "x holds NaN or Inf" : "x overflows the dtype (inf)");
  else if (nr->denom[k] == 0 && centered)
    snprintf(buf, len, "%s and eps = 0: s = 0, y = 0/0", eval ? "running var 0" : "all equal");
  else if (nr->denom[k] == 0)
    snprintf(buf, len, "all zero and eps = 0: rms = 0, y = 0/0");
  else if (isinf(nr->denom[k]))
    snprintf(buf, len, "%s = inf: variance overflows %s", st, ns_dtype_name(s->dtype));
  else
    snprintf(buf, len, "%s is %g", st, nr->denom[k]);
}

/* The main normalization of x with spec (and, for a large x, of its probe slice on its
 * own: the probes compare against that). */
static int output_part(const ns_state *s, const double *xv, const ns_spec *spec, ns_result *r,
                       char *err) {
  const ns_tensor *x = s->x;
  size_t n = x->n;
  if (ns_normalize(x, spec, &r->norm, err) != 0) return -1;
  double *yv = malloc(n * sizeof *yv);
  if (!yv) return fail(err, "out of memory");
  ns_tensor_read(r->norm.y, yv);
  double ys = 0, yq = 0;
  for (size_t i = 0; i < n; i++) ys += yv[i];
  r->y_mean = ys / (double)n;
  for (size_t i = 0; i < n; i++) yq += (yv[i] - r->y_mean) * (yv[i] - r->y_mean);
  r->y_std = sqrt(yq / (double)n);
  free(yv);
  degenerate_words(s, r);
  int prank;
  size_t pshape[4];
  r->probe_n = probe_slice(x, &prank, pshape);
  if (r->probe_n < n && !(r->y_probe = affine_probe(s, xv, spec, 1, 0, err))) return -1;
  return 0;
}

void ns_explore_cache_init(ns_explore_cache *c) {
  memset(c, 0, sizeof *c);
}

void ns_explore_cache_free(ns_explore_cache *c) {
  if (!c) return;
  ns_state_free(&c->prev);
  ns_running_free(&c->run);
  memset(c, 0, sizeof *c);
}

/* Remembers s as the state the result now belongs to. x is copied only when it changed
 * (a 1M-element x costs a copy per keypress otherwise). */
static int cache_store(ns_explore_cache *c, const ns_state *s, int x_same, char *err) {
  ns_tensor *keepx = x_same ? c->prev.x : NULL;
  if (keepx) c->prev.x = NULL;
  ns_state_free(&c->prev);
  ns_state tmp = *s;
  if (keepx) tmp.x = NULL;
  if (ns_state_copy(&c->prev, &tmp, err) != 0) {
    ns_tensor_free(keepx);
    return -1;
  }
  if (keepx) c->prev.x = keepx;
  return 0;
}

int ns_explore_update(ns_explore_cache *c, const ns_state *s, ns_result *r, char *err) {
  unsigned parts = c->valid ? stale_parts(&c->prev, s) : NS_PART_ALL;
  c->last_parts = parts;
  if (!c->valid) {
    ns_result_free(r);
    ns_running_free(&c->run);
  }
  if (!parts) return 0;
  const ns_tensor *x = s->x;
  size_t n = x->n;
  ns_running runs[3], eval_run;
  memset(runs, 0, sizeof runs);
  memset(&eval_run, 0, sizeof eval_run);
  double *xv = NULL;
  int rc = -1;
  c->valid = 0; /* until every stale part is recomputed */
  if (parts & (NS_PART_INPUT | NS_PART_OUTPUT | NS_PART_SHIFT | NS_PART_SCALE | NS_PART_PREC)) {
    if (!(xv = malloc(n * sizeof *xv))) {
      fail(err, "out of memory reading x");
      goto out;
    }
    ns_tensor_read(x, xv);
  }

  /* 1 input: two-pass statistics over all elements */
  if (parts & NS_PART_INPUT) input_stats(xv, n, r);

  /* 6 train/eval first: eval mode of the output may use its running statistics */
  if (parts & NS_PART_TRAIN) {
    clear_train(r);
    if (train_probe(s, r, runs, err) != 0) goto out;
    ns_running_free(&c->run);
    if (ns_running_copy(&c->run, &runs[r->est_active], err) != 0) goto out;
  }

  /* 3 output, and the spec every probe of it shares */
  ns_spec spec;
  ns_state_spec(s, &spec);
  const char *note = s->mode == NS_MODE_EVAL ? "eval mode changes batch norm only" : NULL;
  if (s->mode == NS_MODE_EVAL && s->kind == NS_KIND_BATCH &&
      (parts & (NS_PART_OUTPUT | NS_PART_SHIFT | NS_PART_SCALE | NS_PART_JAC))) {
    size_t nstat = parts & NS_PART_OUTPUT ? 0 : r->norm.plan.nstat;
    if (eval_running(s, &c->run, nstat, &eval_run, &note, err) != 0) goto out;
    spec.running = &eval_run;
  }
  if (parts & NS_PART_OUTPUT) {
    clear_output(r);
    r->eval_note = note;
    if (output_part(s, xv, &spec, r, err) != 0) goto out;
  }
  const ns_tensor *ybase = r->y_probe ? r->y_probe : r->norm.y;
  if (parts & NS_PART_SHIFT) {
    ns_tensor_free(r->y_shift);
    if (!(r->y_shift = affine_probe(s, xv, &spec, 1, s->shift, err))) goto out;
    r->shift_dev = max_abs_diff_tensor(r->y_shift, ybase);
  }
  if (parts & NS_PART_SCALE) {
    ns_tensor_free(r->y_scale);
    if (!(r->y_scale = affine_probe(s, xv, &spec, s->scale, 0, err))) goto out;
    r->scale_dev = max_abs_diff_tensor(r->y_scale, ybase);
  }

  /* 4 spectrum */
  if (parts & NS_PART_JAC) {
    clear_jac(r);
    jac_probe(x, &spec, r);
  }

  /* 5 batch */
  if (parts & NS_PART_BATCH) {
    clear_batch(r);
    rc = 0;
    batch_probe(s, r, err, &rc);
    if (rc != 0) goto out;
  }

  /* 7 precision, on the first values of a large x */
  if (parts & NS_PART_PREC) {
    r->prec_n = n < NS_EXPLORE_PROBE_LIMIT ? n : NS_EXPLORE_PROBE_LIMIT;
    precision_probe(xv, r->prec_n, s, r);
  }
  rc = cache_store(c, s, !(parts & NS_PART_INPUT), err);
  c->valid = rc == 0;
out:
  ns_running_free(&eval_run);
  for (int k = 0; k < 3; k++) ns_running_free(&runs[k]);
  free(xv);
  if (rc != 0) {
    ns_result_free(r);
    ns_running_free(&c->run);
    c->valid = 0;
  }
  return rc;
}

int ns_explore_compute(const ns_state *s, ns_result *r, char *err) {
  ns_explore_cache c;
  ns_explore_cache_init(&c);
  memset(r, 0, sizeof *r);
  int rc = ns_explore_update(&c, s, r, err);
  ns_explore_cache_free(&c);
  return rc;
}
