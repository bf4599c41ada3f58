/* audit.c: the checks of a normalization audit, streamed over a file. See audit.h.
 *
 * Thresholds (each stated in the detail it affects):
 *   near_zero_variance  var < 100 eps: eps is then at least 1% of var + eps.
 *   precision           warn when the raw-moment formula loses half or more of fp32's
 *                       7.2 digits (mean^2/var >= 10^3.6), or fp32 storage and arithmetic
 *                       move an output by more than 1e-4.
 *   batch dependence    an output change above 1e-9 counts (per-example kinds give 0).
 *   train_eval_gap      warn when a channel's output moves by more than 0.1 rms.
 *   outliers            warn when some |z| exceeds 10 (a normal sample of 10^20 values
 *                       stays below it) or a kurtosis exceeds 50 (3 for a normal).
 *   axes                the channel axis is the one whose slices differ most
 *                       (H = var of slice means / mean slice variance + var of log slice
 *                       variances); warn when another layout's H is 4 times the used one's
 *                       and above 0.05. */
#include "audit/audit.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/stream.h"
#include "core/torchorder.h"
#include "explore/state_priv.h"
#include "plot/figure.h"

const char *const ns_audit_check_names[] = {
#define NS_AUDIT_NAME(ID, name, doc) name,
    NS_AUDIT_CHECKS(NS_AUDIT_NAME)
#undef NS_AUDIT_NAME
        NULL};
const char *const ns_audit_check_docs[] = {
#define NS_AUDIT_DOC(ID, name, doc) doc,
    NS_AUDIT_CHECKS(NS_AUDIT_DOC)
#undef NS_AUDIT_DOC
        NULL};
const char *const ns_verdict_names[] = {"ok", "warn", "yes", "no", NULL};
const char *const ns_layout_names[] = {"nchw", "nhwc", "ncl", "btd", "bd", NULL};
static const int layout_rank[NS_LAYOUT_COUNT] = {4, 4, 3, 3, 2};
static const int layout_chan[NS_LAYOUT_COUNT] = {1, 3, 1, 2, 1};

#define THRESH_VAR 100.0
#define THRESH_DIGITS 3.6
#define THRESH_FP32 1e-4
#define THRESH_COUPLE 1e-9
#define THRESH_GAP 0.1
#define THRESH_Z 10.0
#define THRESH_KURT 50.0
#define THRESH_H_RATIO 4.0
#define THRESH_H_MIN 0.05

int ns_layout_rank(ns_layout l) {
  return (unsigned)l < NS_LAYOUT_COUNT ? layout_rank[l] : 0;
}
int ns_layout_channel(ns_layout l) {
  return (unsigned)l < NS_LAYOUT_COUNT ? layout_chan[l] : -1;
}

unsigned ns_layout_axes(ns_kind k, ns_layout l, char *err) {
  if ((unsigned)l >= NS_LAYOUT_COUNT) {
    ns_explore_fail(err, "unknown layout");
    return 0;
  }
  int r = layout_rank[l], c = layout_chan[l];
  unsigned all = (1u << r) - 1, ch = 1u << c;
  switch (k) {
  case NS_KIND_BATCH:
    return all & ~ch;
  case NS_KIND_INSTANCE:
    if (r < 3) {
      ns_explore_fail(err, "instance norm needs a rank 3 or 4 layout, not %s", ns_layout_names[l]);
      return 0;
    }
    return all & ~ch & ~1u;
  case NS_KIND_GROUP:
    if (c != 1) {
      ns_explore_fail(err, "group norm needs the channels on axis 2 (nchw, ncl, bd), not %s",
                      ns_layout_names[l]);
      return 0;
    }
    return all & ~ch & ~1u; /* may be 0 (bd): only the channels within a group */
  case NS_KIND_LAYER:       /* the features of a token, or everything but the example */
  case NS_KIND_RMS:
    return (l == NS_LAYOUT_BTD || l == NS_LAYOUT_BD) ? ch : all & ~1u;
  default:
    break;
  }
  ns_explore_fail(err, "%s norm has no layout axes", ns_kind_name(k));
  return 0;
}

void ns_audit_opts_init(ns_audit_opts *o) {
  memset(o, 0, sizeof *o);
  o->kind = NS_KIND_LAYER;
  o->groups = 1;
  o->eps = 1e-5;
  o->layout = -1;
}

/* ---- the run's working state ---------------------------------------------------- */

enum { KEEP_DEAD, KEEP_CANCEL, KEEP_OUTLIER, NKEEP };

typedef struct {
  ns_file_map *m;
  const ns_audit_opts *o;
  ns_audit_report *r;
  ns_statmap map;
  int center;
  size_t chunk;
  double *buf;                /* chunk values */
  size_t *idx;                /* chunk statistics (main map) */
  ns_stream st;               /* pass 1: per statistic */
  ns_stream marg[NS_MAXRANK]; /* pass 1: per index of each axis */
  double *lo, *hi;            /* per statistic, pass 1 */
  double *mean, *denom, *var; /* per statistic, after pass 1 */
  double *m4;                 /* per statistic, pass 2 */
  ns_stream ymain;            /* pass 2: y per statistic */
  ns_stream yalt[NS_LAYOUT_COUNT];
  int alt[NS_LAYOUT_COUNT];
  size_t keep_stat[NKEEP];
  double *keep[NKEEP];
  size_t nkeep[NKEEP];
  size_t keep_at[NKEEP]; /* the element each points at (see audit.h's `at`) */
  double keep_dev;       /* the largest |x - mean| in the outlying statistic */
  double done, total;    /* progress, in elements over all passes */
  ns_tensor *slice;      /* leading examples in memory */
  size_t slice_ex;       /* examples in it */
} actx;

static void progress(actx *a, size_t add) {
  a->done += (double)add;
  if (a->o->progress) a->o->progress(a->o->progress_ctx, a->total > 0 ? a->done / a->total : 1);
}

/* 1 (with err) when the caller asked the run to stop. */
static int stopped(const actx *a, char *err) {
  if (!a->o->stop || !a->o->stop(a->o->progress_ctx)) return 0;
  ns_explore_fail(err, "stopped");
  return 1;
}

static void ctx_free(actx *a) {
  free(a->buf);
  free(a->idx);
  ns_stream_free(&a->st);
  for (int k = 0; k < NS_MAXRANK; k++) ns_stream_free(&a->marg[k]);
  free(a->lo);
  free(a->hi);
  free(a->mean);
  free(a->denom);
  free(a->var);
  free(a->m4);
  ns_stream_free(&a->ymain);
  for (int l = 0; l < NS_LAYOUT_COUNT; l++) ns_stream_free(&a->yalt[l]);
  for (int k = 0; k < NKEEP; k++) free(a->keep[k]);
  ns_tensor_free(a->slice);
}

static void setf(ns_audit_finding *f, ns_audit_check c, ns_verdict v, double value, const char *fmt,
                 ...) NS_PRINTF(5, 6);
static void setf(ns_audit_finding *f, ns_audit_check c, ns_verdict v, double value, const char *fmt,
                 ...) {
  f->check = c;
  f->verdict = v;
  f->value = value;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->detail, sizeof f->detail, fmt, ap);
  va_end(ap);
}

/* A figure of n values (labels may be NULL: bars labelled by index, or a histogram). */
static int fig_set(ns_audit_figure *g, int kind, const char *title, const double *v, size_t n,
                   const char *const *labels) {
  g->kind = kind;
  snprintf(g->title, sizeof g->title, "%s", title);
  g->v = malloc((n ? n : 1) * sizeof *g->v);
  g->labels = kind == 1 ? calloc(n ? n : 1, sizeof *g->labels) : NULL;
  if (!g->v || (kind == 1 && !g->labels)) return -1;
  memcpy(g->v, v, n * sizeof *v);
  g->n = n;
  for (size_t i = 0; kind == 1 && i < n; i++) {
    if (labels)
      snprintf(g->labels[i], sizeof g->labels[i], "%s", labels[i]);
    else
      snprintf(g->labels[i], sizeof g->labels[i], "%zu", i);
  }
  return 0;
}

/* "{1,3,4}" from a 0-based mask (group: the grouped axis shown as "2/G"). */
static void axes_words(unsigned mask, int group_axis, int groups, int rank, char *buf, size_t len) {
  size_t w = 0;
  w += (size_t)snprintf(buf + w, len - w, "{");
  int first = 1;
  for (int k = 0; k < rank && w < len; k++) {
    if (k == group_axis) {
      w += (size_t)snprintf(buf + w, len - w, "%s%d in %d groups", first ? "" : ",", k + 1, groups);
      first = 0;
    } else if (mask >> k & 1u) {
      w += (size_t)snprintf(buf + w, len - w, "%s%d", first ? "" : ",", k + 1);
      first = 0;
    }
  }
  if (w < len) snprintf(buf + w, len - w, "}");
}

/* A tensor holding elements [first, first+count) of the file, reshaped to `shape`. */
static ns_tensor *read_block(actx *a, size_t first, int rank, const size_t *shape, char *err) {
  char e[NS_ERRLEN] = "";
  ns_tensor *t = ns_tensor_new(rank, shape, a->m->dtype, e);
  if (!t) {
    ns_explore_fail(err, "%s", e);
    return NULL;
  }
  size_t step = a->chunk, done = 0;
  while (done < t->n) {
    size_t len = t->n - done < step ? t->n - done : step;
    if (ns_file_map_read(a->m, first + done, len, a->buf, err)) {
      ns_tensor_free(t);
      return NULL;
    }
    for (size_t j = 0; j < len; j++) ns_tensor_set(t, done + j, a->buf[j]);
    done += len;
  }
  return t;
}

/* The spec the in-memory probes use: fp64, the audit's reduction. */
static void probe_spec(const actx *a, ns_spec *s) {
  ns_spec_default(s);
  s->kind = a->r->kind;
  s->eps = a->r->eps;
  s->groups = a->r->groups;
  s->axes = a->r->kind == NS_KIND_GROUP ? 0 : a->r->axes;
}

/* ---- the passes --------------------------------------------------------------------- */

static int pass1(actx *a, char *err) {
  ns_audit_report *r = a->r;
  size_t n = r->n;
  for (size_t first = 0; first < n; first += a->chunk) {
    size_t len = n - first < a->chunk ? n - first : a->chunk;
    if (ns_file_map_read(a->m, first, len, a->buf, err)) return -1;
    ns_statmap_fill(&a->map, first, len, a->idx);
    for (size_t j = 0; j < len; j++) {
      double v = a->buf[j];
      size_t s = a->idx[j];
      if (!isfinite(v)) r->nonfinite++;
      if (v < a->lo[s]) a->lo[s] = v;
      if (v > a->hi[s]) a->hi[s] = v;
    }
    if (ns_stream_add_idx(&a->st, a->buf, a->idx, len, err)) return -1;
    for (int k = 0; k < r->rank; k++)
      if (a->marg[k].m && ns_stream_add(&a->marg[k], a->buf, len, err)) return -1;
    progress(a, len);
    if (stopped(a, err)) return -1;
  }
  return 0;
}

static int pass2(actx *a, char *err) {
  ns_audit_report *r = a->r;
  size_t n = r->n;
  double *y = malloc(a->chunk * sizeof *y);
  if (!y) return ns_explore_fail(err, "out of memory");
  int rc = 0;
  for (size_t first = 0; first < n && rc == 0; first += a->chunk) {
    size_t len = n - first < a->chunk ? n - first : a->chunk;
    if ((rc = ns_file_map_read(a->m, first, len, a->buf, err))) break;
    ns_statmap_fill(&a->map, first, len, a->idx);
    for (size_t j = 0; j < len; j++) {
      size_t s = a->idx[j];
      double d = a->buf[j] - a->st.m[s].mean; /* fourth moment about the exact mean */
      a->m4[s] += d * d * d * d;
      y[j] = (a->buf[j] - a->mean[s]) / a->denom[s];
      for (int k = 0; k < NKEEP; k++) {
        if (s != a->keep_stat[k]) continue;
        if (a->keep[k] && a->nkeep[k] < NS_AUDIT_KEEP) a->keep[k][a->nkeep[k]++] = a->buf[j];
        double dev = fabs(a->buf[j] - a->mean[s]);
        if (a->keep_at[k] == NS_AUDIT_NOWHERE || (k == KEEP_OUTLIER && dev > a->keep_dev)) {
          a->keep_at[k] = first + j;
          if (k == KEEP_OUTLIER) a->keep_dev = dev;
        }
      }
    }
    if ((rc = ns_stream_add_idx(&a->ymain, y, a->idx, len, err))) break;
    for (int l = 0; l < NS_LAYOUT_COUNT && rc == 0; l++)
      if (a->alt[l]) rc = ns_stream_add(&a->yalt[l], y, len, err);
    progress(a, len);
    if (rc == 0 && stopped(a, err)) rc = -1;
  }
  free(y);
  return rc;
}

/* ---- the checks ------------------------------------------------------------------- */

/* 1 if axis k is the channel axis of some layout of this rank. */
static int candidate_axis(int rank, int k) {
  for (int l = 0; l < NS_LAYOUT_COUNT; l++)
    if (layout_rank[l] == rank && layout_chan[l] == k) return 1;
  return 0;
}

/* H of axis k: how much the slices along it differ (see the top of the file); 0 for an
 * axis that is no layout's channel axis (not measured). */
static double heterogeneity(const ns_stream *s) {
  if (!s->m) return 0;
  size_t m = s->map.nstat;
  if (m < 2) return 0;
  double mm = 0, mv = 0, ml = 0;
  for (size_t i = 0; i < m; i++) {
    double v = s->m[i].m2 / s->m[i].n;
    mm += s->m[i].mean;
    mv += v;
    ml += log(v > 1e-300 ? v : 1e-300);
  }
  mm /= (double)m;
  mv /= (double)m;
  ml /= (double)m;
  double vm = 0, vl = 0;
  for (size_t i = 0; i < m; i++) {
    double v = s->m[i].m2 / s->m[i].n;
    vm += (s->m[i].mean - mm) * (s->m[i].mean - mm);
    double l = log(v > 1e-300 ? v : 1e-300) - ml;
    vl += l * l;
  }
  vm /= (double)m;
  vl /= (double)m;
  double h = (mv > 0 ? vm / mv : (vm > 0 ? HUGE_VAL : 0)) + vl;
  return isfinite(h) ? h : 1e300;
}

/* The largest |mean| and the range of the variances of y over the statistics of a stream
 * (only those whose input variance is not near zero, for the main map). */
static void y_stats(const actx *a, const ns_stream *s, int main_map, double *maxmean, double *vlo,
                    double *vhi) {
  *maxmean = 0;
  *vlo = HUGE_VAL;
  *vhi = -HUGE_VAL;
  for (size_t k = 0; k < s->map.nstat; k++) {
    if (main_map && a->var[k] < THRESH_VAR * a->r->eps) continue;
    double mu = fabs(s->m[k].mean), v = s->m[k].m2 / s->m[k].n;
    if (mu > *maxmean) *maxmean = mu;
    if (v < *vlo) *vlo = v;
    if (v > *vhi) *vhi = v;
  }
  if (*vlo > *vhi) *vlo = *vhi = NAN;
}

/* The slice of x as the patch's x (at most NS_EXPLORE_PROBE_LIMIT-ish elements: whole
 * examples), or a copy of values as a rank-1 tensor. */
static ns_tensor *patch_slice(const actx *a) {
  if (!a->slice) return NULL;
  size_t per = a->slice->n / a->slice_ex, ex = a->slice_ex;
  while (ex > 1 && ex * per > 65536) ex--;
  if (ex * per > 65536) return NULL;
  size_t shape[NS_MAXRANK];
  memcpy(shape, a->slice->shape, sizeof shape);
  shape[0] = ex;
  ns_tensor *t = ns_tensor_new(a->slice->rank, shape, a->slice->dtype, NULL);
  if (!t) return NULL;
  memcpy(t->data, a->slice->data, t->n * ns_dtype_size(t->dtype));
  return t;
}

static ns_tensor *values_tensor(const double *v, size_t n, ns_dtype d) {
  if (!v || n == 0) return NULL;
  size_t shape[1] = {n};
  return ns_tensor_from(1, shape, d, v, NULL);
}

/* The patch: x (when given) and the audit's spec fields. */
static void patch_spec(const actx *a, ns_audit_finding *f, ns_tensor *x, unsigned axes,
                       ns_kind kind) {
  ns_patch_init(&f->patch);
  f->x = x;
  if (x) {
    ns_patch_set(&f->patch, NS_F_X);
    f->patch.v.x = x;
  }
  ns_patch_set(&f->patch, NS_F_KIND);
  f->patch.v.kind = kind;
  ns_patch_set(&f->patch, NS_F_AXES);
  f->patch.v.axes = axes;
  ns_patch_set(&f->patch, NS_F_EPS);
  f->patch.v.eps = a->r->eps;
  if (kind == NS_KIND_GROUP) {
    ns_patch_set(&f->patch, NS_F_GROUPS);
    f->patch.v.groups = a->r->groups;
  }
}

/* The finding on the audited tensor itself: the audit's kind, eps and groups over `axes`,
 * pointing at element `at`. */
static void here_spec(const actx *a, ns_audit_finding *f, unsigned axes, size_t at) {
  ns_patch_init(&f->here);
  ns_patch_set(&f->here, NS_F_KIND);
  f->here.v.kind = a->r->kind;
  ns_patch_set(&f->here, NS_F_AXES);
  f->here.v.axes = axes;
  ns_patch_set(&f->here, NS_F_EPS);
  f->here.v.eps = a->r->eps;
  if (a->r->kind == NS_KIND_GROUP) {
    ns_patch_set(&f->here, NS_F_GROUPS);
    f->here.v.groups = a->r->groups;
  }
  f->at = at;
}

/* The state's axes for the audit's reduction on the slice (0: the kind's default). */
static unsigned state_axes(const actx *a) {
  return a->r->kind == NS_KIND_GROUP ? 0 : a->r->axes;
}

static int check_axes(actx *a, ns_audit_finding *f) {
  ns_audit_report *r = a->r;
  char used[96], buf[640];
  axes_words(r->axes, r->group_axis, r->groups, r->rank, used, sizeof used);
  double mm, vlo, vhi;
  y_stats(a, &a->ymain, 1, &mm, &vlo, &vhi);
  size_t w = (size_t)snprintf(buf, sizeof buf,
                              "%s norm over axes %s: y has |mean| <= %.2g, var in [%.6g, %.6g]",
                              ns_kind_name(r->kind), used, mm, vlo, vhi);
  double h[NS_MAXRANK] = {0};
  for (int k = 0; k < r->rank; k++) h[k] = heterogeneity(&a->marg[k]);
  /* the layouts the shape allows, and which the statistics suggest */
  int best = -1;
  char allowed[64] = "";
  size_t aw = 0;
  for (int l = 0; l < NS_LAYOUT_COUNT; l++) {
    if (layout_rank[l] != r->rank) continue;
    if (r->kind == NS_KIND_GROUP && layout_chan[l] != 1) continue;
    aw += (size_t)snprintf(allowed + aw, sizeof allowed - aw, "%s%s", aw ? ", " : "",
                           ns_layout_names[l]);
    if (best < 0 || h[layout_chan[l]] > h[layout_chan[best]]) best = l;
  }
  for (int l = 0; l < NS_LAYOUT_COUNT && w < sizeof buf; l++) {
    if (!a->alt[l]) continue;
    double am, alo, ahi;
    y_stats(a, &a->yalt[l], 0, &am, &alo, &ahi);
    char ax[64];
    axes_words(a->yalt[l].map.axes, a->yalt[l].map.group_axis, r->groups, r->rank, ax, sizeof ax);
    w += (size_t)snprintf(buf + w, sizeof buf - w,
                          "; along %s's axes %s: |mean| up to %.2g, var in [%.3g, %.3g]",
                          ns_layout_names[l], ax, am, alo, ahi);
  }
  ns_verdict v = NS_VERDICT_OK;
  double value = 1;
  r->layout_suggest = best;
  if (best >= 0 && w < sizeof buf) {
    w += (size_t)snprintf(buf + w, sizeof buf - w, "; the shape allows %s", allowed);
    if (r->layout >= 0) {
      double hu = h[layout_chan[r->layout]], hb = h[layout_chan[best]];
      value = hu > 0 ? hb / hu : (hb > 0 ? HUGE_VAL : 1);
      if (best != r->layout && hb > THRESH_H_RATIO * hu && hb > THRESH_H_MIN) {
        v = NS_VERDICT_WARN;
        snprintf(buf + w, sizeof buf - w,
                 "; the statistics suggest %s (axis %d's slices differ most: H %.3g against "
                 "%.3g for axis %d of %s %s): try --layout %s",
                 ns_layout_names[best], layout_chan[best] + 1, hb, hu, layout_chan[r->layout] + 1,
                 r->layout_given ? "the given" : "the assumed", ns_layout_names[r->layout],
                 ns_layout_names[best]);
      } else {
        snprintf(buf + w, sizeof buf - w, "; the statistics agree with %s (H %.3g on axis %d)",
                 ns_layout_names[r->layout], hu, layout_chan[r->layout] + 1);
      }
    } else {
      snprintf(buf + w, sizeof buf - w, "; the statistics suggest %s", ns_layout_names[best]);
    }
  }
  setf(f, NS_AUDIT_AXES, v, value, "%s", buf);
  /* the figure: H of each layout's channel axis */
  double hv[NS_LAYOUT_COUNT];
  char lab[NS_LAYOUT_COUNT][24];
  const char *labels[NS_LAYOUT_COUNT];
  size_t nh = 0;
  for (int l = 0; l < NS_LAYOUT_COUNT; l++) {
    if (layout_rank[l] != r->rank) continue;
    hv[nh] = h[layout_chan[l]];
    snprintf(lab[nh], sizeof lab[nh], "axis %d (%s)", layout_chan[l] + 1, ns_layout_names[l]);
    labels[nh] = lab[nh];
    nh++;
  }
  if (nh &&
      fig_set(&f->fig, 1, "how much the slices along each channel axis differ (H)", hv, nh, labels))
    return -1;
  unsigned ax = state_axes(a);
  if (v == NS_VERDICT_WARN && r->kind != NS_KIND_GROUP) {
    char e[NS_ERRLEN];
    unsigned s = ns_layout_axes(r->kind, (ns_layout)best, e);
    if (s) ax = s;
  }
  patch_spec(a, f, patch_slice(a), ax, r->kind);
  here_spec(a, f, ax, NS_AUDIT_NOWHERE);
  return 0;
}

static int check_near_zero(actx *a, ns_audit_finding *f) {
  ns_audit_report *r = a->r;
  double thr = THRESH_VAR * r->eps;
  size_t count = 0, worst = 0;
  char list[160] = "";
  size_t lw = 0;
  for (size_t k = 0; k < r->nstat; k++) {
    if (a->var[k] < a->var[worst]) worst = k;
    if (a->var[k] < thr || a->var[k] == 0) { /* with eps 0, a zero variance is 0/0 */
      if (count < 8 && lw < sizeof list)
        lw += (size_t)snprintf(list + lw, sizeof list - lw, "%s%zu", count ? ", " : "", k);
      count++;
    }
  }
  if (count > 8 && lw < sizeof list) snprintf(list + lw, sizeof list - lw, ", ...");
  const char *what = a->center ? "variance" : "mean square";
  double vw = a->var[worst];
  if (count && !(vw + r->eps > 0)) {
    setf(f, NS_AUDIT_NEAR_ZERO_VARIANCE, NS_VERDICT_WARN, (double)count,
         "%zu of %zu statistics have %s 0 with eps 0 (0-based indices %s): their denominator is "
         "0 and their outputs 0/0; give eps > 0",
         count, r->nstat, what, list);
  } else if (count) {
    setf(f, NS_AUDIT_NEAR_ZERO_VARIANCE, NS_VERDICT_WARN, (double)count,
         "%zu of %zu statistics have %s below 100 eps = %.3g (0-based indices %s); the smallest, "
         "%.3g at %zu, gets the denominator sqrt(var+eps) = %.3g instead of sqrt(var) = %.3g: eps "
         "is %.4g%% of var+eps, so its outputs are shrunk by %.3g",
         count, r->nstat, what, thr, list, vw, worst, sqrt(vw + r->eps), sqrt(vw),
         100 * r->eps / (vw + r->eps), sqrt(vw / (vw + r->eps)));
  } else {
    setf(f, NS_AUDIT_NEAR_ZERO_VARIANCE, NS_VERDICT_OK, 0,
         "every %s is at least 100 eps = %.3g (the smallest %.3g, statistic %zu): eps is at most "
         "%.3g%% of var+eps",
         what, thr, vw, worst, 100 * r->eps / (vw + r->eps));
  }
  size_t nb = r->nstat;
  double *lv = malloc((nb ? nb : 1) * sizeof *lv);
  if (!lv) return -1;
  for (size_t k = 0; k < nb; k++) lv[k] = log10(a->var[k] > 1e-300 ? a->var[k] : 1e-300);
  int rc = fig_set(&f->fig, nb <= NS_AUDIT_MAXBARS ? 1 : 2, "log10 variance per statistic", lv, nb,
                   NULL);
  free(lv);
  patch_spec(a, f, values_tensor(a->keep[KEEP_DEAD], a->nkeep[KEEP_DEAD], a->m->dtype), 0,
             a->center ? NS_KIND_LAYER : NS_KIND_RMS);
  here_spec(a, f, state_axes(a), count ? a->keep_at[KEEP_DEAD] : NS_AUDIT_NOWHERE);
  return rc;
}

/* max |y - ref| over the elements where ref is finite (inf if y is not). */
static double maxdiff(const ns_tensor *y, const ns_tensor *ref) {
  double d = 0;
  for (size_t i = 0; i < ref->n; i++) {
    double b = ns_tensor_get(ref, i), v = ns_tensor_get(y, i);
    if (!isfinite(b)) continue;
    double e = isfinite(v) ? fabs(v - b) : HUGE_VAL;
    if (e > d) d = e;
  }
  return d;
}

/* What torch 1.13 on CPU computes for a kind (its float32 modules), as a spec change of the
 * probe spec, and the words that say so (core/torchorder.h). 0 when torch has no such
 * module. */
static int torch_setting(ns_kind k, int center, ns_spec *t, const char **words) {
  ns_spec in = *t;
  in.kind = k;
  in.center = center;
  return ns_framework_spec(&in, NS_FW_TORCH, t, words);
}

static int check_precision(actx *a, ns_audit_finding *f, char *err) {
  /* the raw-moment cancellation risk, over every statistic (the worst found in pass 1) */
  size_t ws = a->keep_stat[KEEP_CANCEL];
  double v0 = a->st.m[ws].m2 / a->st.m[ws].n, mu0 = a->st.m[ws].mean;
  double worst = v0 > 0 ? mu0 * mu0 / v0 : (mu0 != 0 ? HUGE_VAL : 0);
  double lost = fmin(log10(1 + worst), 17.0); /* 17: every digit of a double */
  enum { NV = 7 };
  static const char *const names[NV] = {"fp32 (acc fp32)", "fp32 acc fp64",    "fp16 (acc fp32)",
                                        "bf16 (acc fp32)", "fp32 raw moments", "numpy float32",
                                        "torch float32"};
  double errs[NV] = {NAN, NAN, NAN, NAN, NAN, NAN, NAN};
  const char *torch_words = "";
  ns_spec s;
  probe_spec(a, &s);
  ns_spec tv = s;
  int have_torch = torch_setting(a->r->kind, a->center, &tv, &torch_words);
  if (a->slice) {
    ns_norm_result ref = {0};
    if (ns_normalize(a->slice, &s, &ref, err)) return -1;
    static const struct {
      ns_dtype d;
      ns_dtype acc;
      ns_algo algo;
      ns_order order;
    } v[NV - 1] = {{NS_FP32, NS_FP32, NS_ALGO_TWOPASS, NS_ORDER_SEQUENTIAL},
                   {NS_FP32, NS_FP64, NS_ALGO_TWOPASS, NS_ORDER_SEQUENTIAL},
                   {NS_FP16, NS_FP32, NS_ALGO_TWOPASS, NS_ORDER_SEQUENTIAL},
                   {NS_BF16, NS_FP32, NS_ALGO_TWOPASS, NS_ORDER_SEQUENTIAL},
                   {NS_FP32, NS_FP32, NS_ALGO_RAW, NS_ORDER_SEQUENTIAL},
                   /* numpy: np.mean and np.var in float32, in numpy's summation order */
                   {NS_FP32, NS_FP32, NS_ALGO_TWOPASS, NS_ORDER_NUMPY}};
    for (int k = 0; k < NV; k++) {
      ns_spec t = s;
      if (k < NV - 1) {
        t.dtype = v[k].d;
        t.acc = (int)v[k].acc;
        t.algo = v[k].algo;
        t.order = v[k].order;
      } else if (have_torch) {
        t = tv;
      } else {
        continue;
      }
      ns_norm_result y = {0};
      if (k == NV - 1 && ns_normalize(a->slice, &t, &y, err)) { /* a layout torch's kernels */
        have_torch = 0;                                        /* do not take: not emulated */
        torch_words = "not emulated for these axes";
        continue;
      }
      if (k < NV - 1 && ns_normalize(a->slice, &t, &y, err)) {
        ns_norm_result_free(&ref);
        return -1;
      }
      errs[k] = maxdiff(y.y, ref.y);
      ns_norm_result_free(&y);
    }
    ns_norm_result_free(&ref);
  }
  ns_verdict verdict = (lost >= THRESH_DIGITS || (!isnan(errs[0]) && !(errs[0] <= THRESH_FP32)))
                           ? NS_VERDICT_WARN
                           : NS_VERDICT_OK;
  char slice[64] = "no slice in memory";
  if (a->slice) snprintf(slice, sizeof slice, "on the first %zu examples", a->slice_ex);
  setf(f, NS_AUDIT_PRECISION, verdict, lost,
       "raw moments E[x^2]-E[x]^2 lose %.2g digits (mean^2/var up to %.3g, statistic %zu; fp32 "
       "keeps 7.2, bf16 2.4); max |y - y_fp64| %s: fp32 %.2g, fp32 with fp64 accumulation %.2g, "
       "fp16 %.2g, bf16 %.2g, fp32 raw %.2g; as the frameworks compute it: numpy float32 %.2g "
       "(np.mean and np.var in float32, in numpy's order: order=numpy), torch float32 %.2g (%s)",
       lost, worst, ws, slice, errs[0], errs[1], errs[2], errs[3], errs[4], errs[5], errs[6],
       torch_words);
  double lg[NV];
  for (int k = 0; k < NV; k++) lg[k] = isfinite(errs[k]) && errs[k] > 0 ? log10(errs[k]) : -17;
  if (fig_set(&f->fig, 1, "log10 max |y - y_fp64|", lg, have_torch ? NV : NV - 1, names)) return -1;
  patch_spec(a, f, values_tensor(a->keep[KEEP_CANCEL], a->nkeep[KEEP_CANCEL], a->m->dtype), 0,
             a->center ? NS_KIND_LAYER : NS_KIND_RMS);
  ns_patch_set(&f->patch, NS_F_DTYPE);
  f->patch.v.dtype = NS_FP32;
  here_spec(a, f, state_axes(a), a->keep_at[KEEP_CANCEL]);
  ns_patch_set(&f->here, NS_F_DTYPE);
  f->here.v.dtype = NS_FP32;
  return 0;
}

/* Examples [first, first+count) of the file as a tensor. */
static ns_tensor *read_examples(actx *a, size_t first, size_t count, char *err) {
  size_t shape[NS_MAXRANK];
  memcpy(shape, a->r->shape, sizeof shape);
  size_t per = a->r->n / shape[0];
  shape[0] = count;
  return read_block(a, first * per, a->r->rank, shape, err);
}

/* The output of example 0's elements within x (a tensor of whole examples) -> out. */
static int example0_output(actx *a, const ns_tensor *x, double *out, size_t per, char *err) {
  ns_spec s;
  probe_spec(a, &s);
  ns_norm_result y = {0};
  if (ns_normalize(x, &s, &y, err)) return -1;
  for (size_t i = 0; i < per; i++) out[i] = ns_tensor_get(y.y, i);
  ns_norm_result_free(&y);
  return 0;
}

static int check_batch_dependence(actx *a, ns_audit_finding *f, char *err) {
  if (!a->slice || a->slice_ex < 2) {
    setf(f, NS_AUDIT_BATCH_DEPENDENCE, NS_VERDICT_NO, 0,
         a->slice ? "one example along axis 1: there is no other example to couple with"
                  : "not measured: one example is larger than the in-memory limit");
    return 0;
  }
  size_t per = a->slice->n / a->slice_ex;
  double *y0 = malloc(per * sizeof *y0), *y1 = malloc(per * sizeof *y1);
  ns_tensor *alt = ns_tensor_copy(a->slice);
  if (!y0 || !y1 || !alt) {
    free(y0);
    free(y1);
    ns_tensor_free(alt);
    return ns_explore_fail(err, "out of memory");
  }
  for (size_t i = per; i < 2 * per; i++) ns_tensor_set(alt, i, 3 * ns_tensor_get(alt, i) + 1);
  int rc = example0_output(a, a->slice, y0, per, err);
  if (rc == 0) rc = example0_output(a, alt, y1, per, err);
  double d = 0;
  for (size_t i = 0; rc == 0 && i < per; i++) {
    double e = fabs(y1[i] - y0[i]);
    if (e > d || isnan(e)) d = e;
  }
  if (rc == 0 && isnan(d)) {
    setf(f, NS_AUDIT_BATCH_DEPENDENCE, NS_VERDICT_WARN, d,
         "not measurable: example 1's outputs are not finite (NaN or Inf input, or a zero "
         "variance with eps 0)");
  } else if (rc == 0) {
    int yes = !(d <= THRESH_COUPLE);
    setf(f, NS_AUDIT_BATCH_DEPENDENCE, yes ? NS_VERDICT_YES : NS_VERDICT_NO, d,
         "changing example 2 (x -> 3x + 1) in a batch of the first %zu moves example 1's output "
         "by up to %.3g: %s",
         a->slice_ex, d,
         yes ? "its statistics span the examples (a batch kind couples them)"
             : "each example is normalized by its own statistics");
    /* the batch panel: the first rows, as many columns as fit */
    size_t rows = a->slice_ex < 8 ? a->slice_ex : 8;
    size_t cols = per < NS_EXPLORE_MAX_BATCH_ELEMS / rows ? per : NS_EXPLORE_MAX_BATCH_ELEMS / rows;
    size_t shape[2] = {rows, cols};
    f->batch = ns_tensor_new(2, shape, NS_FP64, NULL);
    int finite = f->batch != NULL;
    for (size_t i = 0; finite && i < rows; i++)
      for (size_t j = 0; j < cols; j++) {
        double v = ns_tensor_get(a->slice, i * per + j);
        finite = finite && isfinite(v);
        ns_tensor_set(f->batch, i * cols + j, v);
      }
    ns_patch_init(&f->patch);
    here_spec(a, f, state_axes(a), NS_AUDIT_NOWHERE);
    if (finite) {
      ns_state_patch *ps[2] = {&f->patch, &f->here};
      for (int k = 0; k < 2; k++) {
        ns_patch_set(ps[k], NS_F_BATCH);
        ps[k]->v.batch = f->batch;
        ns_patch_set(ps[k], NS_F_TARGET);
        ps[k]->v.target = 1;
        ns_patch_set(ps[k], NS_F_COMPANION);
        ps[k]->v.companion = 2;
      }
    }
  }
  free(y0);
  free(y1);
  ns_tensor_free(alt);
  return rc;
}

static int check_batch_size(actx *a, ns_audit_finding *f, char *err) {
  ns_audit_report *r = a->r;
  if (!a->slice) {
    setf(f, NS_AUDIT_BATCH_SIZE_SENSITIVITY, NS_VERDICT_NO, 0,
         "not measured: one example is larger than the in-memory limit");
    return 0;
  }
  size_t per = r->n / r->shape[0], B = r->shape[0];
  double *full = malloc(per * sizeof *full), *alone = malloc(per * sizeof *alone);
  double *other = malloc(per * sizeof *other), *x0 = malloc(per * sizeof *x0);
  int rc = (full && alone && other && x0) ? 0 : ns_explore_fail(err, "out of memory");
  /* the full batch: the streamed statistics of the whole file */
  for (size_t i = 0; rc == 0 && i < per; i++) {
    x0[i] = ns_tensor_get(a->slice, i);
    size_t s = ns_statmap_stat(&a->map, i);
    full[i] = (x0[i] - a->mean[s]) / a->denom[s];
  }
  ns_tensor *t = NULL;
  if (rc == 0) t = read_examples(a, 0, 1, err);
  if (rc == 0 && !t) rc = -1;
  if (rc == 0) rc = example0_output(a, t, alone, per, err);
  ns_tensor_free(t);
  t = NULL;
  double d_alone = 0, d_other = NAN, d_eval = NAN;
  size_t k = 0;
  if (rc == 0 && B >= 2) { /* the target with the last examples of the file */
    /* at most half the other examples, so for B >= 3 the batch differs from the full one */
    k = (B - 1) / 2 > 0 ? (B - 1) / 2 : 1;
    if (a->slice_ex > 1 && k > a->slice_ex - 1) k = a->slice_ex - 1;
    size_t shape[NS_MAXRANK];
    memcpy(shape, r->shape, sizeof shape);
    shape[0] = k + 1;
    char e[NS_ERRLEN] = "";
    t = ns_tensor_new(r->rank, shape, a->m->dtype, e);
    if (!t) rc = ns_explore_fail(err, "%s", e);
    ns_tensor *tail = rc == 0 ? read_examples(a, B - k, k, err) : NULL;
    if (rc == 0 && !tail) rc = -1;
    if (rc == 0) {
      for (size_t i = 0; i < per; i++) ns_tensor_set(t, i, x0[i]);
      for (size_t i = 0; i < tail->n; i++) ns_tensor_set(t, per + i, ns_tensor_get(tail, i));
      rc = example0_output(a, t, other, per, err);
    }
    ns_tensor_free(tail);
    ns_tensor_free(t);
    d_other = 0;
  }
  ns_spec sp;
  probe_spec(a, &sp);
  int batch = ns_spec_is_batch(&sp, r->rank);
  if (rc == 0 && a->o->run_mean && batch) d_eval = 0;
  for (size_t i = 0; rc == 0 && i < per; i++) {
    double e = fabs(alone[i] - full[i]);
    if (e > d_alone || isnan(e)) d_alone = e;
    if (B >= 2) {
      e = fabs(other[i] - full[i]);
      if (e > d_other || isnan(e)) d_other = e;
    }
    if (!isnan(d_eval)) {
      size_t s = ns_statmap_stat(&a->map, i);
      double y = (x0[i] - a->o->run_mean[s]) / sqrt(a->o->run_var[s] + r->eps);
      e = fabs(y - full[i]);
      if (e > d_eval || isnan(e)) d_eval = e;
    }
  }
  if (rc == 0) {
    double worst = d_alone;
    if (d_other > worst) worst = d_other;
    int yes = worst > THRESH_COUPLE;
    int nan = isnan(d_alone) || (B >= 2 && isnan(d_other));
    char ev[96] = "";
    if (!isnan(d_eval))
      snprintf(ev, sizeof ev, "; in eval mode with the running statistics %.3g", d_eval);
    setf(f, NS_AUDIT_BATCH_SIZE_SENSITIVITY,
         nan   ? NS_VERDICT_WARN
         : yes ? NS_VERDICT_YES
               : NS_VERDICT_NO,
         worst,
         "example 1's output against the full batch of %zu: alone it differs by %.3g, with the "
         "last %zu examples by %.3g%s%s",
         B, d_alone, k, d_other, ev,
         nan   ? " (outputs not finite: NaN or Inf input, or a zero variance with eps 0)"
         : yes ? ""
               : " (the same function whatever the batch)");
    double bars[3] = {d_alone, d_other, d_eval};
    const char *labels[3] = {"alone", "other batch", "eval"};
    rc = fig_set(&f->fig, 1, "max |y - y_full| of example 1", bars, isnan(d_eval) ? 2 : 3, labels);
    patch_spec(a, f, patch_slice(a), state_axes(a), r->kind);
    here_spec(a, f, state_axes(a), NS_AUDIT_NOWHERE);
  }
  free(full);
  free(alone);
  free(other);
  free(x0);
  return rc;
}

static int check_train_eval(actx *a, ns_audit_finding *f) {
  ns_audit_report *r = a->r;
  ns_spec sp;
  probe_spec(a, &sp);
  if (!ns_spec_is_batch(&sp, r->rank)) {
    setf(f, NS_AUDIT_TRAIN_EVAL_GAP, NS_VERDICT_NO, 0,
         "%s norm uses each example's own statistics: train and eval mode compute the same "
         "function and the running statistics are not used",
         ns_kind_name(r->kind));
    patch_spec(a, f, patch_slice(a), state_axes(a), r->kind);
    here_spec(a, f, state_axes(a), NS_AUDIT_NOWHERE);
    return 0;
  }
  size_t ns = r->nstat, worst = 0;
  double *gap = malloc(ns * sizeof *gap);
  if (!gap) return -1;
  double sum = 0;
  for (size_t c = 0; c < ns; c++) {
    double mb = a->st.m[c].mean, vb = a->st.m[c].m2 / a->st.m[c].n;
    double mr = a->o->run_mean[c], vr = a->o->run_var[c];
    double ae = 1 / sqrt(vr + r->eps), at = 1 / sqrt(vb + r->eps);
    /* y_eval - y_train over the channel: mean (mb - mr) ae, spread sqrt(vb) |ae - at| */
    double d = (mb - mr) * ae;
    gap[c] = sqrt(d * d + vb * (ae - at) * (ae - at));
    sum += gap[c];
    if (gap[c] > gap[worst] || isnan(gap[c])) worst = c;
  }
  double mb = a->st.m[worst].mean, vb = a->st.m[worst].m2 / a->st.m[worst].n;
  double mr = a->o->run_mean[worst], vr = a->o->run_var[worst];
  ns_verdict v = !(gap[worst] <= THRESH_GAP) ? NS_VERDICT_WARN : NS_VERDICT_OK;
  setf(f, NS_AUDIT_TRAIN_EVAL_GAP, v, gap[worst],
       "worst channel %zu: batch mean %.4g against running %.4g (%.3g running std), variance "
       "ratio %.3g: eval mode moves its outputs by %.3g rms from train mode (mean over %zu "
       "channels %.3g)%s",
       worst, mb, mr, (mb - mr) / sqrt(vr + r->eps), vb / vr, gap[worst], ns, sum / (double)ns,
       v == NS_VERDICT_WARN ? ": the running statistics describe other data" : "");
  int rc =
      fig_set(&f->fig, ns <= NS_AUDIT_MAXBARS ? 1 : 2, "rms output gap per channel", gap, ns, NULL);
  free(gap);
  patch_spec(a, f, patch_slice(a), state_axes(a), r->kind);
  ns_patch_set(&f->patch, NS_F_MODE);
  f->patch.v.mode = NS_MODE_EVAL;
  here_spec(a, f, state_axes(a), NS_AUDIT_NOWHERE);
  return rc;
}

static int check_outliers(actx *a, ns_audit_finding *f) {
  ns_audit_report *r = a->r;
  size_t ns = r->nstat, wz = 0, wk = 0;
  double *z = malloc(ns * sizeof *z);
  if (!z) return -1;
  double kmax = 0;
  for (size_t k = 0; k < ns; k++) {
    double dev = fmax(a->hi[k] - a->mean[k], a->mean[k] - a->lo[k]);
    z[k] = dev / a->denom[k];
    if (z[k] > z[wz] || isnan(z[k])) wz = k;
    double m2 = a->st.m[k].m2, kurt = m2 > 0 ? a->st.m[k].n * a->m4[k] / (m2 * m2) : NAN;
    if (kurt > kmax) {
      kmax = kurt;
      wk = k;
    }
  }
  double bound = sqrt((double)r->count - 1);
  ns_verdict v = (!(z[wz] <= THRESH_Z) || kmax > THRESH_KURT) ? NS_VERDICT_WARN : NS_VERDICT_OK;
  setf(f, NS_AUDIT_OUTLIERS, v, z[wz],
       "largest |z| %.4g in statistic %zu, against the self-standardization bound sqrt(n-1) = "
       "%.4g for n = %zu (%.3g%% of it); largest kurtosis %.4g in statistic %zu (3 for a normal)%s",
       z[wz], wz, bound, r->count, 100 * z[wz] / bound, kmax, wk,
       v == NS_VERDICT_WARN ? ": a few values dominate their statistic" : "");
  int rc =
      fig_set(&f->fig, ns <= NS_AUDIT_MAXBARS ? 1 : 2, "largest |z| per statistic", z, ns, NULL);
  free(z);
  patch_spec(a, f, values_tensor(a->keep[KEEP_OUTLIER], a->nkeep[KEEP_OUTLIER], a->m->dtype), 0,
             a->center ? NS_KIND_LAYER : NS_KIND_RMS);
  here_spec(a, f, state_axes(a), a->keep_at[KEEP_OUTLIER]);
  return rc;
}

/* ---- the run --------------------------------------------------------------------- */

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Resolves the reduction of the audit into r (axes, group axis, layout). */
static int resolve(const ns_audit_opts *o, ns_audit_report *r, char *err) {
  char e[NS_ERRLEN] = "";
  r->kind = o->kind;
  r->groups = o->groups > 0 ? o->groups : 1;
  r->eps = o->eps;
  r->group_axis = -1;
  r->layout = -1;
  r->layout_suggest = -1;
  if (!ns_kind_get((int)o->kind))
    return ns_explore_fail(err, "unknown normalization kind %d", (int)o->kind);
  if (!ns_eps_ok(o->eps)) return ns_explore_fail(err, "eps " NS_EPS_RULE ", got %g", o->eps);
  if (o->kind == NS_KIND_GROUP && o->axes)
    return ns_explore_fail(err, "group norm takes its axes from the groups: give --groups, not "
                                "--axes");
  if (o->layout >= 0) {
    if (o->layout >= NS_LAYOUT_COUNT) return ns_explore_fail(err, "unknown layout");
    if (layout_rank[o->layout] != r->rank)
      return ns_explore_fail(err, "layout %s is for rank %d tensors; this one has rank %d",
                             ns_layout_names[o->layout], layout_rank[o->layout], r->rank);
    r->layout = o->layout;
    r->layout_given = 1;
  } else if (r->rank == 4) {
    r->layout = NS_LAYOUT_NCHW;
  } else if (r->rank == 3) {
    r->layout = ns_kinds[o->kind].per_element ? NS_LAYOUT_BTD : NS_LAYOUT_NCL;
  } else if (r->rank == 2) {
    r->layout = NS_LAYOUT_BD;
  }
  if (o->axes) {
    if (o->axes >> r->rank) return ns_explore_fail(err, "axes beyond rank %d", r->rank);
    r->axes = o->axes;
  } else if (o->layout >= 0) {
    r->axes = ns_layout_axes(o->kind, (ns_layout)o->layout, e);
    if (!r->axes && e[0]) return ns_explore_fail(err, "%s", e);
  } else {
    r->axes = ns_default_axes(o->kind, r->rank, e);
    if (!r->axes && e[0]) return ns_explore_fail(err, "%s", e);
  }
  if (o->kind == NS_KIND_GROUP) {
    if (r->rank < 2) return ns_explore_fail(err, "group norm needs channels on axis 2");
    r->group_axis = 1;
    r->axes &= ~2u;
  }
  return 0;
}

int ns_audit_check_opts(const ns_audit_opts *o, int rank, const size_t *shape, char *err) {
  if (!o || !shape) return ns_explore_fail(err, "no options or shape");
  ns_audit_report *r = calloc(1, sizeof *r);
  if (!r) return ns_explore_fail(err, "out of memory");
  r->rank = rank;
  memcpy(r->shape, shape, (size_t)rank * sizeof *shape);
  int rc = resolve(o, r, err);
  ns_statmap m;
  char e[NS_ERRLEN] = "";
  if (rc == 0 && ns_statmap_make(rank, shape, r->axes, r->group_axis, (size_t)r->groups, &m, e))
    rc = ns_explore_fail(err, "%s", e);
  if (rc == 0 && o->run_mean && (!o->run_var || o->nrun != m.nstat)) {
    ns_spec sp;
    ns_spec_default(&sp);
    sp.kind = r->kind;
    sp.axes = r->axes;
    if (ns_spec_is_batch(&sp, rank))
      rc = ns_explore_fail(err,
                           "the running statistics have %zu values, the audit has %zu "
                           "statistics (channels)",
                           o->nrun, m.nstat);
  }
  free(r);
  return rc;
}

int ns_audit_run(ns_file_map *m, const ns_audit_opts *o, ns_audit_report *r, char *err) {
  if (!m || !o || !r) return ns_explore_fail(err, "no file, options or report");
  memset(r, 0, sizeof *r);
  double t0 = now();
  r->rank = m->rank;
  memcpy(r->shape, m->shape, sizeof r->shape);
  r->n = m->n;
  r->dtype = m->dtype;
  snprintf(r->name, sizeof r->name, "%s", m->name);
  if (resolve(o, r, err)) return -1;
  actx a;
  memset(&a, 0, sizeof a);
  a.m = m;
  a.o = o;
  a.r = r;
  a.center = ns_kinds[o->kind].center;
  a.chunk = o->chunk ? o->chunk : NS_AUDIT_CHUNK;
  char e[NS_ERRLEN] = "";
  int rc = ns_statmap_make(r->rank, r->shape, r->axes, r->group_axis, (size_t)r->groups, &a.map, e);
  if (rc) {
    ns_explore_fail(err, "%s", e);
    return -1;
  }
  r->nstat = a.map.nstat;
  r->count = a.map.count;
  if (o->run_mean && (!o->run_var || o->nrun != r->nstat)) {
    ns_spec sp;
    ns_spec_default(&sp);
    sp.kind = r->kind;
    sp.axes = r->axes;
    if (ns_spec_is_batch(&sp, r->rank))
      return ns_explore_fail(err,
                             "the running statistics have %zu values, the audit has %zu "
                             "statistics (channels)",
                             o->nrun, r->nstat);
  }
  size_t ns = r->nstat;
  a.buf = malloc(a.chunk * sizeof *a.buf);
  a.idx = malloc(a.chunk * sizeof *a.idx);
  a.lo = malloc(ns * sizeof *a.lo);
  a.hi = malloc(ns * sizeof *a.hi);
  a.mean = malloc(ns * sizeof *a.mean);
  a.denom = malloc(ns * sizeof *a.denom);
  a.var = malloc(ns * sizeof *a.var);
  a.m4 = calloc(ns, sizeof *a.m4);
  if (!a.buf || !a.idx || !a.lo || !a.hi || !a.mean || !a.denom || !a.var || !a.m4) {
    ctx_free(&a);
    return ns_explore_fail(err, "out of memory for %zu statistics", ns);
  }
  for (size_t k = 0; k < ns; k++) {
    a.lo[k] = HUGE_VAL;
    a.hi[k] = -HUGE_VAL;
  }
  rc = ns_stream_init(&a.st, &a.map, e);
  for (int k = 0; rc == 0 && k < r->rank; k++) {
    if (!candidate_axis(r->rank, k)) continue; /* only a layout's channel axis can be */
    ns_statmap mk;
    unsigned all = (1u << r->rank) - 1;
    rc = ns_statmap_make(r->rank, r->shape, all & ~(1u << k), -1, 1, &mk, e);
    if (rc == 0) rc = ns_stream_init(&a.marg[k], &mk, e);
  }
  if (rc) {
    ctx_free(&a);
    return ns_explore_fail(err, "%s", e);
  }
  a.total = 2.0 * (double)r->n;
  /* pass 1 */
  if (pass1(&a, err)) {
    ctx_free(&a);
    return -1;
  }
  size_t dead = 0;
  for (size_t k = 0; k < ns; k++) {
    double mu = a.st.m[k].mean, v = a.st.m[k].m2 / a.st.m[k].n;
    a.mean[k] = a.center ? mu : 0;
    a.var[k] = a.center ? v : v + mu * mu;
    a.denom[k] = sqrt(a.var[k] + r->eps);
    if (a.var[k] < a.var[dead]) dead = k;
  }
  /* which statistics' elements pass 2 keeps for the findings' explorer states */
  a.keep_stat[KEEP_DEAD] = dead;
  for (int k = 0; k < NKEEP; k++) a.keep_at[k] = NS_AUDIT_NOWHERE;
  double worst_ratio = -1, worst_z = -1;
  for (size_t k = 0; k < ns; k++) {
    double v = a.st.m[k].m2 / a.st.m[k].n, mu = a.st.m[k].mean;
    double ratio = v > 0 ? mu * mu / v : HUGE_VAL;
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      a.keep_stat[KEEP_CANCEL] = k;
    }
    double z = fmax(a.hi[k] - a.mean[k], a.mean[k] - a.lo[k]) / a.denom[k];
    if (z > worst_z) {
      worst_z = z;
      a.keep_stat[KEEP_OUTLIER] = k;
    }
  }
  for (int k = 0; k < NKEEP && rc == 0; k++) {
    a.keep[k] = malloc(NS_AUDIT_KEEP * sizeof *a.keep[k]);
    if (!a.keep[k]) rc = -1;
  }
  /* pass 2 streams: y per statistic and along each other layout's axes */
  if (rc == 0) rc = ns_stream_init(&a.ymain, &a.map, e);
  for (int l = 0; l < NS_LAYOUT_COUNT && rc == 0; l++) {
    if (layout_rank[l] != r->rank || l == r->layout) continue;
    char e2[NS_ERRLEN];
    unsigned ax = ns_layout_axes(r->kind, (ns_layout)l, e2);
    if (!ax && r->kind != NS_KIND_GROUP) continue;
    if (ax == r->axes) continue;
    ns_statmap am;
    if (ns_statmap_make(r->rank, r->shape, ax, r->group_axis, (size_t)r->groups, &am, e2) != 0)
      continue;
    if (am.nstat > ((size_t)1 << 24)) continue; /* too many to track */
    rc = ns_stream_init(&a.yalt[l], &am, e);
    a.alt[l] = rc == 0;
  }
  if (rc) {
    ctx_free(&a);
    return ns_explore_fail(err, "%s", e[0] ? e : "out of memory");
  }
  if (pass2(&a, err)) {
    ctx_free(&a);
    return -1;
  }
  r->passes = 2;
  /* the leading slice of whole examples, for the checks that renormalize */
  size_t per = r->n / r->shape[0];
  size_t ex = per > NS_AUDIT_SLICE ? 1 : NS_AUDIT_SLICE / per;
  if (ex > r->shape[0]) ex = r->shape[0];
  if (ex > 64 && r->rank > 1) ex = 64;
  if (ex * per <= 4 * NS_AUDIT_SLICE) {
    a.slice = read_examples(&a, 0, ex, err);
    if (!a.slice) {
      ctx_free(&a);
      return -1;
    }
    a.slice_ex = ex;
  }
  ns_audit_finding *f = r->f;
  rc = check_axes(&a, &f[0]);
  if (rc == 0) rc = check_near_zero(&a, &f[1]);
  if (rc == 0) rc = check_precision(&a, &f[2], err);
  if (rc == 0) rc = check_batch_dependence(&a, &f[3], err);
  if (rc == 0) rc = check_batch_size(&a, &f[4], err);
  size_t nf = 5;
  if (rc == 0 && o->run_mean) rc = check_train_eval(&a, &f[nf++]);
  if (rc == 0) rc = check_outliers(&a, &f[nf++]);
  r->nfindings = nf;
  r->seconds = now() - t0;
  ctx_free(&a);
  if (rc) {
    if (!err || !err[0]) ns_explore_fail(err, "out of memory");
    ns_audit_free(r);
    return -1;
  }
  return 0;
}

int ns_audit_tensor(const ns_tensor *x, const ns_audit_opts *o, ns_audit_report *r, char *err) {
  if (!x) return ns_explore_fail(err, "no tensor");
  ns_file_map m;
  memset(&m, 0, sizeof m);
  m.fd = -1;
  m.t = (ns_tensor *)x; /* borrowed: not closed below */
  m.dtype = x->dtype;
  m.rank = x->rank;
  memcpy(m.shape, x->shape, sizeof m.shape);
  m.n = x->n;
  m.elem_size = ns_dtype_size(x->dtype);
  return ns_audit_run(&m, o, r, err);
}

void ns_audit_free(ns_audit_report *r) {
  if (!r) return;
  for (size_t k = 0; k < NS_AUDIT_NCHECKS; k++) {
    free(r->f[k].fig.v);
    free(r->f[k].fig.labels);
    ns_tensor_free(r->f[k].x);
    ns_tensor_free(r->f[k].batch);
  }
  memset(r, 0, sizeof *r);
}

/* ---- output ------------------------------------------------------------------------ */

typedef struct {
  char *s;
  size_t n, cap;
  int failed;
} sbuf;

static void sb_add(sbuf *b, const char *fmt, ...) NS_PRINTF(2, 3);
static void sb_add(sbuf *b, const char *fmt, ...) {
  if (b->failed) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    if (w < 0) {
      b->failed = 1;
      return;
    }
    if (b->s && (size_t)w < b->cap - b->n) {
      b->n += (size_t)w;
      return;
    }
    size_t nc = (b->cap + (size_t)w + 1) * 2;
    char *ns = realloc(b->s, nc);
    if (!ns) {
      b->failed = 1;
      return;
    }
    b->s = ns;
    b->cap = nc;
  }
}

static void sb_json_string(sbuf *b, const char *s) {
  sb_add(b, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      sb_add(b, "\\%c", *p);
    else if (*p < 0x20)
      sb_add(b, "\\u%04x", *p);
    else
      sb_add(b, "%c", *p);
  }
  sb_add(b, "\"");
}

static void sb_json_number(sbuf *b, double v) {
  if (isfinite(v))
    sb_add(b, "%.17g", v);
  else
    sb_add(b, "null");
}

/* The figure of a finding as text (NULL when it has none). */
static char *figure_text(const ns_audit_figure *g, int ascii, int width) {
  if (g->kind == 0 || g->n == 0) return NULL;
  plot_opts o;
  plot_opts_init(&o);
  o.width = width;
  o.height = g->kind == 1 ? (int)(g->n + 4 < 20 ? g->n + 4 : 20) : 12;
  o.glyphs = ascii ? PLOT_GLYPHS_ASCII : PLOT_GLYPHS_BLOCKS;
  o.title = g->title;
  char err[PLOT_ERRLEN];
  plot_canvas *c = NULL;
  const char *labels[NS_AUDIT_MAXBARS];
  if (g->kind == 1) {
    size_t n = g->n < NS_AUDIT_MAXBARS ? g->n : NS_AUDIT_MAXBARS;
    for (size_t i = 0; i < n; i++) labels[i] = g->labels[i];
    o.labels = labels;
    o.nlabels = n;
    c = plot_fig_bars(g->v, n, &o, err);
  } else {
    plot_set s = {g->v, g->n, NULL};
    c = plot_fig_hist(&s, 1, &o, err);
  }
  if (!c) return NULL;
  char *t = plot_canvas_text(c);
  plot_canvas_free(c);
  return t;
}

static void header_words(const ns_audit_report *r, const char *source, char *buf, size_t len) {
  char shp[96], ax[96];
  ns_shape_format(r->rank, r->shape, shp, sizeof shp);
  axes_words(r->axes, r->group_axis, r->groups, r->rank, ax, sizeof ax);
  snprintf(buf, len,
           "%s%s%s%s: %s %s, %zu elements; %s norm over axes %s (%zu statistics of %zu), eps %g, "
           "layout %s%s",
           source ? source : "tensor", r->name[0] ? " [" : "", r->name, r->name[0] ? "]" : "", shp,
           ns_dtype_name(r->dtype), r->n, ns_kind_name(r->kind), ax, r->nstat, r->count, r->eps,
           r->layout >= 0 ? ns_layout_names[r->layout] : "none",
           r->layout >= 0 ? (r->layout_given ? " (given)" : " (assumed)") : "");
}

char *ns_audit_format(const ns_audit_report *r, ns_audit_form form, const char *source, int ascii) {
  if (!r) return NULL;
  sbuf b = {0};
  char head[512];
  header_words(r, source, head, sizeof head);
  if (form == NS_AUDIT_TSV) {
    for (size_t k = 0; k < r->nfindings; k++) {
      const ns_audit_finding *f = &r->f[k];
      char d[sizeof f->detail];
      snprintf(d, sizeof d, "%s", f->detail);
      for (char *p = d; *p; p++)
        if (*p == '\t' || *p == '\n') *p = ' ';
      sb_add(&b, "%s\t%s\t%.17g\t%s\n", ns_audit_check_names[f->check],
             ns_verdict_names[f->verdict], f->value, d);
    }
  } else if (form == NS_AUDIT_JSON) {
    sb_add(&b, "{\"file\":");
    sb_json_string(&b, source ? source : "");
    sb_add(&b, ",\"tensor\":");
    sb_json_string(&b, r->name);
    sb_add(&b, ",\"shape\":[");
    for (int k = 0; k < r->rank; k++) sb_add(&b, k ? ",%zu" : "%zu", r->shape[k]);
    sb_add(&b, "],\"dtype\":\"%s\",\"kind\":\"%s\",\"axes\":[", ns_dtype_name(r->dtype),
           ns_kind_name(r->kind));
    int first = 1;
    for (int k = 0; k < r->rank; k++)
      if (r->axes >> k & 1u) {
        sb_add(&b, first ? "%d" : ",%d", k + 1);
        first = 0;
      }
    sb_add(&b, "],\"groups\":%d,\"eps\":", r->groups);
    sb_json_number(&b, r->eps);
    sb_add(&b, ",\"layout\":");
    if (r->layout >= 0)
      sb_json_string(&b, ns_layout_names[r->layout]);
    else
      sb_add(&b, "null");
    sb_add(&b, ",\"layout_suggested\":");
    if (r->layout_suggest >= 0)
      sb_json_string(&b, ns_layout_names[r->layout_suggest]);
    else
      sb_add(&b, "null");
    sb_add(&b, ",\"statistics\":%zu,\"count\":%zu,\"nonfinite\":%zu,\"seconds\":", r->nstat,
           r->count, r->nonfinite);
    sb_json_number(&b, r->seconds);
    sb_add(&b, ",\"findings\":[");
    for (size_t k = 0; k < r->nfindings; k++) {
      const ns_audit_finding *f = &r->f[k];
      sb_add(&b, "%s{\"check\":\"%s\",\"verdict\":\"%s\",\"value\":", k ? "," : "",
             ns_audit_check_names[f->check], ns_verdict_names[f->verdict]);
      sb_json_number(&b, f->value);
      sb_add(&b, ",\"detail\":");
      sb_json_string(&b, f->detail);
      sb_add(&b, "}");
    }
    sb_add(&b, "]}\n");
  } else {
    int md = form == NS_AUDIT_MARKDOWN;
    if (md)
      sb_add(&b, "# normscope audit\n\n%s\n\n| check | verdict | value |\n|---|---|---|\n", head);
    else
      sb_add(&b, "%s\n\n", head);
    for (size_t k = 0; md && k < r->nfindings; k++)
      sb_add(&b, "| %s | %s | %.6g |\n", ns_audit_check_names[r->f[k].check],
             ns_verdict_names[r->f[k].verdict], r->f[k].value);
    if (r->nonfinite)
      sb_add(&b, "%s%zu values are NaN or infinite: the statistics they enter are not finite\n",
             md ? "\n" : "", r->nonfinite);
    for (size_t k = 0; k < r->nfindings; k++) {
      const ns_audit_finding *f = &r->f[k];
      if (md)
        sb_add(&b, "\n## %s: %s\n\n%s\n", ns_audit_check_names[f->check],
               ns_verdict_names[f->verdict], f->detail);
      else
        sb_add(&b, "%-23s %-4s %-11.4g %s\n", ns_audit_check_names[f->check],
               ns_verdict_names[f->verdict], f->value, f->detail);
      char *fig = figure_text(&f->fig, ascii || md, 72);
      if (fig) {
        sb_add(&b, md ? "\n```text\n%s```\n" : "\n%s\n", fig);
        free(fig);
      }
    }
    if (md)
      sb_add(&b,
             "\n---\n%d streaming passes in %.3g s. Thresholds and methods: `normscope help "
             "audit`.\n",
             r->passes, r->seconds);
  }
  if (b.failed) {
    free(b.s);
    return NULL;
  }
  if (!b.s) {
    b.s = malloc(1);
    if (b.s) b.s[0] = 0;
  }
  return b.s;
}
