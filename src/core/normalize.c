/* normalize.c: the spec (names, defaults, checks) and the plan (which elements share a
 * statistic) of every normalization kind. The map itself (centre, divide, affine, every
 * operation rounded to acc) runs in norm_kernels.c; normalize_ref.c keeps the reference.
 *
 * Decisions not fixed by the header:
 * - A spec is a "batch kind" (running statistics are updated in train mode and used in
 *   eval mode) when its kinds.h row says batch, or when explicit axes include axis 1 (the
 *   batch axis) of an input of rank >= 2: such a statistic mixes examples. Instance norm
 *   with running statistics keeps one per channel, as torch's InstanceNorm with
 *   track_running_stats (ns_spec_instance_running). Any other kind given running statistics
 *   is an error (ns_spec_running_check), not ignored.
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
 * - order pairwise applies to every sum (the mean's, the squared deviations', raw's sum of
 *   squares and the uncentered maps' sum of squares); Welford's recurrence ignores it, for
 *   its uncentered sum of squares too.
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

int ns_eps_ok(double eps) {
  return eps >= 0 && isfinite(eps);
}

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

#define NS_KIND_ROW_(ID, name, title, a1, a2, a3, a4, undef, center, batch, per_element, grouped)  \
  {name, title, {a1, a2, a3, a4}, undef, center, batch, per_element, grouped},
const ns_kind_info ns_kinds[NS_KIND_COUNT] = {NS_KINDS(NS_KIND_ROW_)};
#undef NS_KIND_ROW_
#define NS_KIND_NAME_(ID, name, ...) name,
const char *const ns_kind_names[] = {NS_KINDS(NS_KIND_NAME_) NULL};
#undef NS_KIND_NAME_
const char *const ns_eps_at_names[] = {"var", "std", NULL};
const char *const ns_mode_names[] = {"train", "eval", NULL};

const ns_kind_info *ns_kind_get(int k) {
  return k >= 0 && k < NS_KIND_COUNT ? &ns_kinds[k] : NULL;
}

const char *ns_kind_name(ns_kind k) {
  const ns_kind_info *ki = ns_kind_get((int)k);
  return ki ? ki->name : "?";
}

const char *ns_kind_title(ns_kind k) {
  const ns_kind_info *ki = ns_kind_get((int)k);
  return ki ? ki->title : "?";
}

int ns_kind_parse(const char *name, ns_kind *out) {
  if (!name) return -1;
  for (int k = 0; k < NS_KIND_COUNT; k++) {
    if (strcmp(name, ns_kind_names[k]) == 0) {
      if (out) *out = (ns_kind)k;
      return 0;
    }
  }
  return -1;
}

const char *ns_eps_at_name(ns_eps_at e) {
  return (unsigned)e <= NS_EPS_STD ? ns_eps_at_names[e] : "?";
}

const char *ns_mode_name(ns_mode m) {
  return (unsigned)m <= NS_MODE_EVAL ? ns_mode_names[m] : "?";
}

int ns_spec_center(const ns_spec *s) {
  if (s->center < 0) {
    const ns_kind_info *ki = ns_kind_get((int)s->kind);
    return ki ? ki->center : 1;
  }
  return s->center != 0;
}

ns_dtype ns_spec_acc(const ns_spec *s) {
  if (s->acc >= 0 && s->acc < NS_DTYPE_COUNT) return (ns_dtype)s->acc;
  if (s->dtype == NS_FP16 || s->dtype == NS_BF16) return NS_FP32;
  return s->dtype;
}

/* Bit k = 0-based axis k; kinds.h's rows list them per rank. */
unsigned ns_default_axes(ns_kind k, int rank, char *err) {
  if (rank < 1 || rank > NS_MAXRANK) {
    ns_seterr(err, "rank %d is not supported (1 to %d)", rank, NS_MAXRANK);
    return 0;
  }
  const ns_kind_info *ki = ns_kind_get((int)k);
  if (!ki) {
    ns_seterr(err, "unknown normalization kind %d", (int)k);
    return 0;
  }
  unsigned m = ki->axes[rank - 1];
  if (!m && ki->undefined)
    ns_seterr(err, ki->undefined, rank);
  else if (!m)
    ns_seterr(err, "%s norm has no default axes at rank %d", ki->name, rank);
  return m;
}

/* ---- plan ---- */

int ns_spec_is_batch(const ns_spec *s, int rank) {
  const ns_kind_info *ki = ns_kind_get((int)s->kind);
  return (ki && ki->batch) || (s->axes != 0 && (s->axes & 1u) && rank >= 2);
}

int ns_spec_eval_running(const ns_spec *s, int rank) {
  return s->mode == NS_MODE_EVAL &&
         (ns_spec_is_batch(s, rank) || ns_spec_instance_running(s, rank));
}

int ns_spec_instance_running(const ns_spec *s, int rank) {
  return s->kind == NS_KIND_INSTANCE && s->running && !ns_spec_is_batch(s, rank);
}

int ns_spec_running_check(const ns_spec *s, int rank, char *err) {
  if (!s->running || ns_spec_is_batch(s, rank)) return 0;
  if (s->kind == NS_KIND_INSTANCE) { /* one running statistic per channel */
    char e[NS_ERRLEN];
    if (!s->axes || s->axes == ns_default_axes(NS_KIND_INSTANCE, rank, e)) return 0;
    ns_seterr(err, "instance norm's running statistics are per channel: they need its default "
                   "axes (one statistic per example and channel), not these");
    return -1;
  }
  ns_seterr(err,
            "running statistics are for batch and instance norm: %s norm%s normalizes "
            "every input with its own statistics",
            ns_kind_name(s->kind), s->axes ? " over these axes" : "");
  return -1;
}

double ns_spec_gamma(const ns_spec *s, const ns_norm_plan *p, size_t i) {
  if (!s->gamma) return 1.0;
  return s->gamma[s->ngamma == 1 ? 0 : ns_norm_plan_affine_of(p, i)];
}

/* Coordinates of flat element i of the plan's shape. */
static void coords_of(const ns_norm_plan *p, size_t i, size_t c[NS_MAXRANK]) {
  for (int a = p->rank - 1; a >= 0; a--) {
    c[a] = i % p->shape[a];
    i /= p->shape[a];
  }
}

size_t ns_norm_plan_stat_at(const ns_norm_plan *p, const size_t *c) {
  size_t s = 0;
  for (int a = 0; a < p->rank; a++) {
    size_t k;
    if (a == 1 && p->groups > 1)
      k = c[1] / (p->shape[1] / p->groups);
    else
      k = (p->axes >> a) & 1u ? 0 : c[a];
    s = s * p->stat_shape[a] + k;
  }
  return s;
}

size_t ns_norm_plan_stat_of(const ns_norm_plan *p, size_t i) {
  if (!p || i >= p->n) return 0;
  if (p->stat_of) return p->stat_of[i];
  size_t c[NS_MAXRANK];
  coords_of(p, i, c);
  return ns_norm_plan_stat_at(p, c);
}

size_t ns_norm_plan_affine_of(const ns_norm_plan *p, size_t i) {
  if (!p || i >= p->n) return 0;
  if (p->affine_of) return p->affine_of[i];
  size_t c[NS_MAXRANK];
  coords_of(p, i, c);
  if (!p->per_element) return p->rank >= 2 ? c[1] : 0;
  size_t k = 0;
  for (int a = 0; a < p->rank; a++)
    if ((p->axes >> a) & 1u) k = k * p->shape[a] + c[a];
  return k;
}

void ns_norm_plan_free(ns_norm_plan *p) {
  if (!p) return;
  free(p->members);
  free(p->stat_of);
  free(p->affine_of);
  memset(p, 0, sizeof *p);
}

int ns_norm_plan_shape(int rank, const size_t *shape, const ns_spec *spec, ns_norm_plan *p,
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
  if ((unsigned)spec->kind >= NS_KIND_COUNT) {
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
  const ns_kind_info *ki = &ns_kinds[spec->kind];
  int grouped = ki->grouped;
  size_t G = 1, C = rank >= 2 ? shape[1] : 1;
  if (grouped) {
    if (rank < 2) {
      ns_seterr(err, "%s norm needs channels on axis 2: rank 1 input is not supported", ki->name);
      return -1;
    }
    if (!(axes & 2u)) {
      ns_seterr(err, "%s norm reduces within channel groups: its axes must include axis 2",
                ki->name);
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
  int per_element = ki->per_element;
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
  p->rank = rank;
  for (int a = 0; a < rank; a++) p->shape[a] = shape[a];
  p->groups = G;
  p->per_element = per_element;
  return 0;
}

int ns_norm_plan_make(int rank, const size_t *shape, const ns_spec *spec, ns_norm_plan *p,
                      char *err) {
  if (ns_norm_plan_shape(rank, shape, spec, p, err) != 0) return -1;
  char sh[96];
  ns_shape_format(rank, shape, sh, sizeof sh);
  const size_t n = p->n, nstat = p->nstat, G = p->groups, C = rank >= 2 ? shape[1] : 1;
  const unsigned axes = p->axes;
  const int grouped = ns_kinds[spec->kind].grouped, per_element = p->per_element;
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
  if ((unsigned)s->kind >= NS_KIND_COUNT) {
    ns_seterr(err, "unknown normalization kind %d", (int)s->kind);
    return -1;
  }
  if (!ns_eps_ok(s->eps)) {
    ns_seterr(err, "eps " NS_EPS_RULE ", got %g", s->eps);
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
  if ((unsigned)s->order > NS_ORDER_NUMPY) {
    ns_seterr(err, "order must be sequential, pairwise, torch or numpy (got %d)", (int)s->order);
    return -1;
  }
  if (s->order == NS_ORDER_NUMPY && (s->algo != NS_ALGO_TWOPASS || s->mask)) {
    ns_seterr(err, "order numpy is np.mean and np.var over the axes: algo twopass, no mask");
    return -1;
  }
  if (s->order == NS_ORDER_TORCH) { /* torchorder.h: torch's LayerNorm, GroupNorm, BatchNorm
                                       and InstanceNorm kernels, nothing else */
    ns_dtype a = ns_spec_acc(s);
    if (s->kind == NS_KIND_RMS || !ns_spec_center(s) || s->eps_at != NS_EPS_VAR) {
      ns_seterr(err, "order torch reproduces torch's LayerNorm, GroupNorm, BatchNorm and "
                     "InstanceNorm kernels: kind layer, group, batch or instance, centered, "
                     "eps_at var (torch 1.13 has no RMSNorm)");
      return -1;
    }

    if (a != NS_FP32 && a != NS_FP64) {
      ns_seterr(err, "order torch needs acc fp32 or fp64 (torch's float and double kernels)");
      return -1;
    }
    if (s->mask) { /* the masked path sums in index order or pairwise, never torch's way */
      ns_seterr(err, "order torch has no masked form (torch's LayerNorm takes no mask): use "
                     "order sequential or pairwise with a mask");
      return -1;
    }
  }
  return 0;
}

static int check_affine(const char *what, size_t nv, const ns_spec *s, const ns_norm_plan *p,
                        int rank, const size_t *shape, char *err) {
  if (nv == 1 || nv == p->naffine) return 0;
  char sh[96];
  ns_shape_format(rank, shape, sh, sizeof sh);
  int per_element = p->per_element;
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

int ns_spec_prepare(const char *fn, const ns_tensor *x, const ns_spec *s, ns_norm_plan *p, int full,
                    char *err) {
  char why[NS_ERRLEN];
  if (ns_spec_check(s, why) != 0) return ns_seterr(err, "%s: %s", fn, why);
  if (!p) return 0;
  if ((full ? ns_norm_plan_make : ns_norm_plan_shape)(x->rank, x->shape, s, p, err) != 0) return -1;
  if (ns_spec_check_affine(s, p, x->rank, x->shape, why) != 0) {
    if (full) ns_norm_plan_free(p);
    return ns_seterr(err, "%s: %s", fn, why);
  }
  return 0;
}

int ns_spec_check_plan(const ns_spec *s, const ns_norm_plan *p, int rank, const size_t *shape,
                       char *err) {
  if (ns_spec_check_affine(s, p, rank, shape, err) != 0) return -1;
  /* instance norm keeps one running statistic per channel (ns_spec_instance_running), so
     its count is the channels', not the plan's statistics (one per example and channel) */
  const int inst = ns_spec_instance_running(s, rank);
  const ns_running *run = ns_spec_is_batch(s, rank) || inst ? s->running : NULL;
  const size_t want = inst ? (rank >= 2 ? shape[1] : 1) : p->nstat;
  if (ns_spec_eval_running(s, rank) && !run) {
    ns_seterr(err, "eval mode of %s norm needs running statistics (none given)",
              ns_kind_name(s->kind));
    return -1;
  }
  if (run && run->nstat != 0 && run->nstat != want) {
    char sh[96];
    ns_shape_format(rank, shape, sh, sizeof sh);
    ns_seterr(err, "running statistics hold %zu channels but input of shape %s has %zu %s",
              run->nstat, sh, want, inst ? "channels" : "statistics");
    return -1;
  }
  return 0;
}
