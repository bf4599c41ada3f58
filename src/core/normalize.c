/* normalize.c: every normalization kind as one plan (which elements share a statistic)
 * and one map (centre, divide, affine), with every operation rounded to acc.
 *
 * Decisions not fixed by the header:
 * - A spec is a "batch kind" (running statistics are updated in train mode and used in
 *   eval mode) when kind is NS_KIND_BATCH, or when explicit axes include axis 1 (the
 *   batch axis) of an input of rank >= 2: such a statistic mixes examples. Every other
 *   kind ignores spec->running and normalizes with its own statistics in both modes.
 * - Group kind with explicit axes: the axes must include axis 2 (channels), which is
 *   then reduced within each group only.
 * - Uncentered maps (rms, or center = 0) use sum(x^2)/(m - ddof) as "var" whatever the
 *   algorithm; in eval mode their second moment is running var + running mean^2.
 * - Eval mode with a running object that has never been updated (nstat 0) uses
 *   PyTorch's fresh values, mean 0 and var 1.
 * - A running update from a statistic of one element stores an unbiased variance of
 *   0/0 = NaN (IEEE), as the normalization itself is flagged degenerate then.
 * - Inputs are rounded to dtype and then to acc, eps/gamma/beta to acc; outputs are
 *   rounded to dtype when stored in y.
 */
#include "core/normalize.h"
#include "core/round.h"
#include "core/err.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names and defaults ---- */

void ns_spec_default(ns_spec *s) {
  if (!s) return;
  memset(s, 0, sizeof *s);
  s->kind = NS_KIND_LAYER;
  s->axes = 0;
  s->groups = 1;
  s->eps = 1e-5;
  s->eps_at = NS_EPS_VAR;
  s->ddof = 0;
  s->center = -1;
  s->dtype = NS_FP64;
  s->acc = -1;
  s->algo = NS_ALGO_TWOPASS;
  s->mode = NS_MODE_TRAIN;
  s->running = NULL;
}

static const char *const KIND_NAMES[] = {"layer", "rms", "batch", "instance", "group"};
#define NKINDS 5

const char *ns_kind_name(ns_kind k) {
  return (unsigned)k < NKINDS ? KIND_NAMES[k] : "?";
}

int ns_kind_parse(const char *name, ns_kind *out) {
  if (!name) return -1;
  for (int k = 0; k < NKINDS; k++) {
    if (strcmp(name, KIND_NAMES[k]) == 0) {
      if (out) *out = (ns_kind)k;
      return 0;
    }
  }
  return -1;
}

const char *ns_eps_at_name(ns_eps_at e) {
  return e == NS_EPS_VAR ? "var" : e == NS_EPS_STD ? "std" : "?";
}

const char *ns_mode_name(ns_mode m) {
  return m == NS_MODE_TRAIN ? "train" : m == NS_MODE_EVAL ? "eval" : "?";
}

int ns_spec_center(const ns_spec *s) {
  if (s->center < 0) return s->kind != NS_KIND_RMS;
  return s->center != 0;
}

ns_dtype ns_spec_acc(const ns_spec *s) {
  if (s->acc >= 0 && s->acc < NS_DTYPE_COUNT) return (ns_dtype)s->acc;
  if (s->dtype == NS_FP16 || s->dtype == NS_BF16) return NS_FP32;
  return s->dtype;
}

/* Bit k = 0-based axis k; DESIGN.md section 4 lists them 1-based. */
unsigned ns_default_axes(ns_kind k, int rank, char *err) {
  if (rank < 1 || rank > NS_MAXRANK) {
    ns_seterr(err, "rank %d is not supported (1 to %d)", rank, NS_MAXRANK);
    return 0;
  }
  switch (k) {
  case NS_KIND_LAYER:
  case NS_KIND_RMS: {
    static const unsigned m[] = {0x1, 0x2, 0x4, 0xE};
    return m[rank - 1];
  }
  case NS_KIND_BATCH: {
    static const unsigned m[] = {0x1, 0x1, 0x5, 0xD};
    return m[rank - 1];
  }
  case NS_KIND_INSTANCE:
    if (rank < 3) {
      ns_seterr(err,
                "instance norm needs a rank 3 (B, C, L) or rank 4 (N, C, H, W) input, got rank %d",
                rank);
      return 0;
    }
    return rank == 3 ? 0x4 : 0xC;
  case NS_KIND_GROUP: {
    /* axis 2 (bit 1) stands for "channels within a group" */
    static const unsigned m[] = {0, 0x2, 0x6, 0xE};
    if (rank < 2) {
      ns_seterr(err, "group norm needs channels on axis 2: rank 1 input is not supported");
      return 0;
    }
    return m[rank - 1];
  }
  default:
    ns_seterr(err, "unknown normalization kind %d", (int)k);
    return 0;
  }
}

/* ---- plan ---- */

int ns_spec_is_batch(const ns_spec *s, int rank) {
  return s->kind == NS_KIND_BATCH || (s->axes != 0 && (s->axes & 1u) && rank >= 2);
}

int ns_spec_eval_running(const ns_spec *s, int rank) {
  return s->mode == NS_MODE_EVAL && ns_spec_is_batch(s, rank);
}

double ns_spec_gamma(const ns_spec *s, const ns_norm_plan *p, size_t i) {
  if (!s->gamma) return 1.0;
  return s->gamma[s->ngamma == 1 ? 0 : p->affine_of[i]];
}

void ns_norm_plan_free(ns_norm_plan *p) {
  if (!p) return;
  free(p->members);
  free(p->stat_of);
  free(p->affine_of);
  memset(p, 0, sizeof *p);
}

int ns_norm_plan_make(int rank, const size_t *shape, const ns_spec *spec, ns_norm_plan *p,
                      char *err) {
  if (!p) {
    ns_seterr(err, "no plan to fill");
    return -1;
  }
  memset(p, 0, sizeof *p);
  if (!spec) {
    ns_seterr(err, "no normalization spec");
    return -1;
  }
  if (ns_shape_check(rank, shape, err) != 0) return -1;
  if ((unsigned)spec->kind >= NKINDS) {
    ns_seterr(err, "unknown normalization kind %d", (int)spec->kind);
    return -1;
  }
  char sh[96];
  ns_shape_format(rank, shape, sh, sizeof sh);
  unsigned axes = spec->axes;
  if (axes) {
    if (axes >> rank) {
      int bad = 0;
      while (!((axes >> bad) & 1u) || bad < rank) bad++;
      ns_seterr(err, "axis %d is out of range for an input of shape %s (axes are 1 to %d)", bad + 1,
                sh, rank);
      return -1;
    }
  } else {
    axes = ns_default_axes(spec->kind, rank, err);
    if (!axes) return -1;
  }
  int grouped = spec->kind == NS_KIND_GROUP;
  size_t G = 1, C = rank >= 2 ? shape[1] : 1;
  if (grouped) {
    if (rank < 2) {
      ns_seterr(err, "group norm needs channels on axis 2: rank 1 input is not supported");
      return -1;
    }
    if (!(axes & 2u)) {
      ns_seterr(err, "group norm reduces within channel groups: its axes must include axis 2");
      return -1;
    }
    if (spec->groups < 1) {
      ns_seterr(err, "groups must be at least 1 (got %d)", spec->groups);
      return -1;
    }
    G = (size_t)spec->groups;
    if (C % G != 0) {
      ns_seterr(err, "groups (%zu) must divide the %zu channels of axis 2 of shape %s", G, C, sh);
      return -1;
    }
  }
  size_t n = 1, nstat = 1, naff = 1;
  int per_element = spec->kind == NS_KIND_LAYER || spec->kind == NS_KIND_RMS;
  for (int a = 0; a < NS_MAXRANK; a++) p->stat_shape[a] = 1;
  for (int a = 0; a < rank; a++) {
    n *= shape[a];
    if (grouped && a == 1)
      p->stat_shape[a] = G;
    else if ((axes >> a) & 1u)
      p->stat_shape[a] = 1;
    else
      p->stat_shape[a] = shape[a];
    nstat *= p->stat_shape[a];
    if (per_element && ((axes >> a) & 1u)) naff *= shape[a];
  }
  if (!per_element) naff = C;
  p->n = n;
  p->nstat = nstat;
  p->count = n / nstat;
  p->naffine = naff;
  p->stat_rank = rank;
  p->axes = axes;
  p->members = malloc(n * sizeof *p->members);
  p->stat_of = malloc(n * sizeof *p->stat_of);
  p->affine_of = malloc(n * sizeof *p->affine_of);
  size_t *fill = calloc(nstat, sizeof *fill);
  if (!p->members || !p->stat_of || !p->affine_of || !fill) {
    free(fill);
    ns_norm_plan_free(p);
    ns_seterr(err, "out of memory planning the normalization of shape %s", sh);
    return -1;
  }
  /* Element i at coordinate c adds (c_a / div_a) * smul_a to its statistic's index and
   * c_a * amul_a to its gamma/beta index on each axis a (div is the channels per group on
   * the grouped axis, 1 elsewhere; smul is 0 on reduced axes; amul is the row-major
   * stride over the reduced axes for layer/rms, 1 on the channel axis otherwise). Axes
   * are padded in front to NS_MAXRANK so four loops cover every rank. */
  size_t ext[NS_MAXRANK], smul[NS_MAXRANK], sdiv[NS_MAXRANK], amul[NS_MAXRANK];
  size_t cpg = C / G; /* channels per group */
  int pad = NS_MAXRANK - rank;
  for (int k = 0; k < NS_MAXRANK; k++) ext[k] = 1, smul[k] = 0, sdiv[k] = 1, amul[k] = 0;
  size_t sst = 1, ast = 1;
  for (int a = rank - 1; a >= 0; a--) {
    int k = a + pad, red = (axes >> a) & 1u;
    ext[k] = shape[a];
    if (grouped && a == 1) {
      smul[k] = sst;
      sdiv[k] = cpg;
    } else if (!red) {
      smul[k] = sst;
    }
    sst *= p->stat_shape[a];
    if (per_element && red) {
      amul[k] = ast;
      ast *= shape[a];
    } else if (!per_element && a == 1) {
      amul[k] = 1;
    }
  }
  size_t i = 0;
  for (size_t c0 = 0; c0 < ext[0]; c0++) {
    size_t s0 = c0 / sdiv[0] * smul[0], a0 = c0 * amul[0];
    for (size_t c1 = 0; c1 < ext[1]; c1++) {
      size_t s1 = s0 + c1 / sdiv[1] * smul[1], a1 = a0 + c1 * amul[1];
      for (size_t c2 = 0; c2 < ext[2]; c2++) {
        size_t s2 = s1 + c2 / sdiv[2] * smul[2], a2 = a1 + c2 * amul[2];
        for (size_t c3 = 0, q = 0, r = 0; c3 < ext[3]; c3++, i++) {
          size_t si = s2 + q * smul[3];
          p->stat_of[i] = si;
          p->affine_of[i] = a2 + c3 * amul[3];
          p->members[si * p->count + fill[si]++] = i;
          if (++r == sdiv[3]) r = 0, q++;
        }
      }
    }
  }
  free(fill);
  return 0;
}

/* ---- the map ---- */

void ns_norm_result_free(ns_norm_result *res) {
  if (!res) return;
  ns_tensor_free(res->y);
  ns_norm_plan_free(&res->plan);
  free(res->mean);
  free(res->var);
  free(res->denom);
  free(res->batch);
  free(res->degenerate);
  memset(res, 0, sizeof *res);
}

int ns_spec_check(const ns_spec *s, char *err) {
  if (!s) {
    ns_seterr(err, "no normalization spec");
    return -1;
  }
  if ((unsigned)s->kind >= NKINDS) {
    ns_seterr(err, "unknown normalization kind %d", (int)s->kind);
    return -1;
  }
  if (!(s->eps >= 0) || isinf(s->eps)) {
    ns_seterr(err, "eps must be a finite number >= 0 (got %g)", s->eps);
    return -1;
  }
  if (s->eps_at != NS_EPS_VAR && s->eps_at != NS_EPS_STD) {
    ns_seterr(err, "eps_at must be var or std (got %d)", (int)s->eps_at);
    return -1;
  }
  if (s->ddof != 0 && s->ddof != 1) {
    ns_seterr(err, "ddof must be 0 or 1 (got %d)", s->ddof);
    return -1;
  }
  if ((unsigned)s->dtype >= NS_DTYPE_COUNT) {
    ns_seterr(err, "unknown dtype %d", (int)s->dtype);
    return -1;
  }
  if (s->acc < -1 || s->acc >= NS_DTYPE_COUNT) {
    ns_seterr(err, "unknown accumulation dtype %d", s->acc);
    return -1;
  }
  if ((unsigned)s->algo > NS_ALGO_RAW) {
    ns_seterr(err, "unknown variance algorithm %d", (int)s->algo);
    return -1;
  }
  if (s->mode != NS_MODE_TRAIN && s->mode != NS_MODE_EVAL) {
    ns_seterr(err, "mode must be train or eval (got %d)", (int)s->mode);
    return -1;
  }
  return 0;
}

static int check_affine(const char *what, size_t nv, const ns_spec *s, const ns_norm_plan *p,
                        int rank, const size_t *shape, char *err) {
  if (nv == 1 || nv == p->naffine) return 0;
  char sh[96];
  ns_shape_format(rank, shape, sh, sizeof sh);
  int per_element = s->kind == NS_KIND_LAYER || s->kind == NS_KIND_RMS;
  ns_seterr(err, "%s has %zu values; %s norm of shape %s needs 1 or %zu (one per %s)", what, nv,
            ns_kind_name(s->kind), sh, p->naffine,
            per_element ? "normalized element" : "channel of axis 2");
  return -1;
}

int ns_spec_check_affine(const ns_spec *s, const ns_norm_plan *p, int rank, const size_t *shape,
                         char *err) {
  if (s->gamma && check_affine("gamma", s->ngamma, s, p, rank, shape, err) != 0) return -1;
  if (s->beta && check_affine("beta", s->nbeta, s, p, rank, shape, err) != 0) return -1;
  return 0;
}

/* y = gamma * (x - mean) / denom + beta for every element, each operation rounded to acc
 * and y stored in dt; inlined once per common (acc, dt) pair so the roundings compile to
 * plain conversions. */
NS_ALWAYS_INLINE static inline void map_out(const ns_norm_plan *p, const double *xa,
                                            const ns_spec *spec, int centered, ns_dtype acc,
                                            ns_dtype dt, ns_norm_result *res) {
#define R(v) ns_round_fast((v), acc)
  double *yd = res->y->data;
  float *yf = res->y->data;
  for (size_t i = 0; i < p->n; i++) {
    size_t s = p->stat_of[i];
    double c = centered ? R(xa[i] - res->mean[s]) : xa[i];
    double t = R(c / res->denom[s]);
    if (spec->gamma) t = R(t * R(spec->gamma[spec->ngamma == 1 ? 0 : p->affine_of[i]]));
    if (spec->beta) t = R(t + R(spec->beta[spec->nbeta == 1 ? 0 : p->affine_of[i]]));
    if (dt == NS_FP64)
      yd[i] = t;
    else if (dt == NS_FP32)
      yf[i] = (float)t; /* as ns_tensor_set: one correctly rounded conversion */
    else
      ns_tensor_set(res->y, i, t);
  }
#undef R
}

int ns_normalize(const ns_tensor *x, const ns_spec *spec, ns_norm_result *res, char *err) {
  if (!res) {
    ns_seterr(err, "no result to fill");
    return -1;
  }
  memset(res, 0, sizeof *res);
  if (!x || !spec) {
    ns_seterr(err, x ? "no normalization spec" : "no input tensor");
    return -1;
  }
  if (ns_spec_check(spec, err) != 0) return -1;
  char sh[96];
  ns_shape_format(x->rank, x->shape, sh, sizeof sh);
  ns_norm_plan *p = &res->plan;
  if (ns_norm_plan_make(x->rank, x->shape, spec, p, err) != 0) return -1;
  if (ns_spec_check_affine(spec, p, x->rank, x->shape, err) != 0) {
    ns_norm_result_free(res);
    return -1;
  }
  const size_t nstat = p->nstat, m = p->count;
  const int centered = ns_spec_center(spec);
  const ns_dtype dt = spec->dtype, acc = ns_spec_acc(spec);
  const int eval = ns_spec_eval_running(spec, x->rank);
  ns_running *run = ns_spec_is_batch(spec, x->rank) ? spec->running : NULL;
  if (eval && !run) {
    ns_seterr(err, "eval mode of %s norm needs running statistics (none given)",
              ns_kind_name(spec->kind));
    ns_norm_result_free(res);
    return -1;
  }
  if (run && run->nstat != 0 && run->nstat != nstat) {
    ns_seterr(err, "running statistics hold %zu channels but input of shape %s has %zu statistics",
              run->nstat, sh, nstat);
    ns_norm_result_free(res);
    return -1;
  }
  res->y = ns_tensor_new(x->rank, x->shape, dt, err);
  res->mean = malloc(nstat * sizeof *res->mean);
  res->var = malloc(nstat * sizeof *res->var);
  res->denom = malloc(nstat * sizeof *res->denom);
  res->batch = malloc(nstat * sizeof *res->batch);
  res->degenerate = calloc(nstat, 1);
  double *xa = malloc(p->n * sizeof *xa); /* inputs in dtype, then acc */
  double *buf = malloc(m * sizeof *buf);
  if (!res->y || !res->mean || !res->var || !res->denom || !res->batch || !res->degenerate || !xa ||
      !buf) {
    free(xa);
    free(buf);
    ns_norm_result_free(res);
    ns_seterr(err, "out of memory normalizing shape %s", sh);
    return -1;
  }
#define R(v) ns_round_fast((v), acc)
  if (x->dtype == NS_FP32) { /* the same values ns_tensor_read gives, without a call each */
    const float *xf = x->data;
    for (size_t i = 0; i < p->n; i++) xa[i] = R(ns_round_fast((double)xf[i], dt));
  } else {
    ns_tensor_read(x, xa);
    for (size_t i = 0; i < p->n; i++) xa[i] = R(ns_round_fast(xa[i], dt));
  }
  const double eps = R(spec->eps);
  const double rdof = R((double)m - spec->ddof);
  for (size_t s = 0; s < nstat; s++) {
    /* members are distinct and ascending: first and last m-1 apart means contiguous,
     * read in place; otherwise gather them */
    const size_t *mem = p->members + s * m;
    const double *xs = buf;
    if (mem[m - 1] - mem[0] == m - 1)
      xs = xa + mem[0];
    else
      for (size_t k = 0; k < m; k++) buf[k] = xa[mem[k]];
    ns_moments_compute(xs, m, 1, acc, acc, spec->algo, &res->batch[s]);
    double mu, v;
    if (eval) {
      double rm = run->nstat ? run->mean[s] : 0.0, rv = run->nstat ? run->var[s] : 1.0;
      mu = centered ? R(rm) : 0.0;
      v = centered ? R(rv) : R(R(rv) + R(R(rm) * R(rm)));
    } else if (centered) {
      mu = res->batch[s].mean;
      v = R(res->batch[s].m2 / rdof);
    } else {
      double sq = 0;
      for (size_t k = 0; k < m; k++) sq = R(sq + R(xs[k] * xs[k]));
      mu = 0.0;
      v = R(sq / rdof);
    }
    double den = spec->eps_at == NS_EPS_VAR ? R(sqrt(R(v + eps))) : R(R(sqrt(v)) + eps);
    res->mean[s] = mu;
    res->var[s] = v;
    res->denom[s] = den;
    if (!(den > 0) || !isfinite(den) || (!eval && m <= (size_t)spec->ddof)) {
      res->degenerate[s] = 1;
      res->ndegenerate++;
    }
  }
  if (acc == NS_FP64 && dt == NS_FP64)
    map_out(p, xa, spec, centered, NS_FP64, NS_FP64, res);
  else if (acc == NS_FP32 && dt == NS_FP32)
    map_out(p, xa, spec, centered, NS_FP32, NS_FP32, res);
  else
    map_out(p, xa, spec, centered, acc, dt, res);
#undef R
  free(xa);
  free(buf);
  if (run && !eval && ns_running_update(run, res->batch, nstat, err) != 0) {
    ns_norm_result_free(res);
    return -1;
  }
  return 0;
}
