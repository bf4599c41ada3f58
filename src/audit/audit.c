/* audit.c: the checks of a normalization audit, streamed over a file (scan.c does the
 * pass). See audit.h. Statistics, channels and examples are named 1-based, like the axes.
 *
 * Thresholds (each stated in the detail it affects):
 *   near_zero_variance  var < 100 eps: eps is then at least 1% of var + eps; statistics
 *                       whose mean or variance is not finite warn as well.
 *   precision           warn when values are not finite or overflow fp16 (|x| > 65504),
 *                       when the raw-moment formula loses half or more of fp32's 7.2
 *                       digits (mean^2/var >= 10^3.6, over the statistics of nonzero
 *                       finite variance), when a framework's float32 (numpy's pairwise
 *                       sums, torch's kernels) moves an output by more than 1e-4, when
 *                       storing x in fp16 or bf16 moves an output by more than 0.05 of
 *                       max(1, |y|), or, for data already in 16 bits, when the values'
 *                       step does (half a step against max(std, |x - mean|)). normscope's
 *                       own fp32 column (sums in index order) is shown, never a verdict.
 *   batch dependence    an output change above 1e-9 counts (per-example kinds give 0).
 *   train_eval_gap      warn when a channel's output moves by more than 0.1 rms.
 *   outliers            warn when some |z| exceeds 10 (a normal sample of 10^20 values
 *                       stays below it) or a kurtosis exceeds 50 (3 for a normal).
 *   axes                the channel axis is the one whose slices differ most
 *                       (H = var of slice means / mean slice variance + var of log slice
 *                       variances); warn when another layout's H is 4 times the used one's
 *                       and above 0.05, or when the flat index modulo the channel count
 *                       sorts the values 4 times better than any axis (channels-last bytes
 *                       under a channels-first shape). */
#include "audit/audit.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "audit/scan.h"
#include "core/half.h"
#include "core/round.h"
#include "core/split.h"
#include "core/torchorder.h"
#include "explore/result_priv.h"
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
const char *const ns_verdict_names[] = {"ok", "warn", "yes", "no", "n/a", NULL};
const char *const ns_layout_names[] = {"nchw", "nhwc", "ncl", "btd", "bd", NULL};
static const int layout_rank[NS_LAYOUT_COUNT] = {4, 4, 3, 3, 2};
static const int layout_chan[NS_LAYOUT_COUNT] = {1, 3, 1, 2, 1};

#define THRESH_VAR 100.0
#define THRESH_DIGITS 3.6
#define THRESH_FP32 1e-4
#define THRESH_16 0.05
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
    ns_seterr(err, "unknown layout");
    return 0;
  }
  int r = layout_rank[l], c = layout_chan[l];
  unsigned all = (1u << r) - 1, ch = 1u << c;
  switch (k) {
  case NS_KIND_BATCH:
    return all & ~ch;
  case NS_KIND_INSTANCE:
    if (r < 3) {
      ns_seterr(err, "instance norm needs a rank 3 or 4 layout, not %s", ns_layout_names[l]);
      return 0;
    }
    return all & ~ch & ~1u;
  case NS_KIND_GROUP:
    if (c != 1) {
      ns_seterr(err, "group norm needs the channels on axis 2 (nchw, ncl, bd), not %s",
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
  ns_seterr(err, "%s norm has no layout axes", ns_kind_name(k));
  return 0;
}

void ns_audit_opts_init(ns_audit_opts *o) {
  memset(o, 0, sizeof *o);
  o->kind = NS_KIND_LAYER;
  o->groups = 1;
  o->eps = 1e-5;
  o->layout = -1;
  o->run_count = -1;
}

/* ---- the findings' parts -------------------------------------------------------------- */

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

/* A figure of n values (labels may be NULL: bars labelled 1, 2, ..., or a histogram). */
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
      snprintf(g->labels[i], sizeof g->labels[i], "%zu", i + 1);
  }
  return 0;
}

/* A per-statistic figure from the sampled values (finite ones only): bars labelled by the
 * 1-based statistic when they are few, else a histogram. */
static int fig_stats(const actx *a, ns_audit_figure *g, const char *title, const double *v,
                     double (*tf)(double)) {
  const ssum *S = &a->sum;
  double *w = malloc((S->fig_n ? S->fig_n : 1) * sizeof *w);
  char(*lab)[24] = malloc((S->fig_n ? S->fig_n : 1) * sizeof *lab);
  const char **lp = malloc((S->fig_n ? S->fig_n : 1) * sizeof *lp);
  int rc = -1;
  if (w && lab && lp) {
    size_t n = 0, left = 0;
    for (size_t i = 0; i < S->fig_n; i++) {
      double t = tf ? tf(v[i]) : v[i];
      if (!isfinite(t)) {
        left++;
        continue;
      }
      snprintf(lab[n], sizeof lab[n], "%zu", i * S->fig_stride + 1);
      lp[n] = lab[n];
      w[n++] = t;
    }
    char t2[96];
    size_t tw = (size_t)snprintf(t2, sizeof t2, "%s", title);
    if (S->fig_stride > 1 && tw < sizeof t2)
      tw += (size_t)snprintf(t2 + tw, sizeof t2 - tw, " (every %zu-th)", S->fig_stride);
    if (left && tw < sizeof t2) snprintf(t2 + tw, sizeof t2 - tw, " (%zu not drawn)", left);
    int bars = n <= NS_AUDIT_MAXBARS && S->fig_stride == 1;
    rc = fig_set(g, bars ? 1 : 2, t2, w, n, bars ? lp : NULL);
  }
  free(w);
  free(lab);
  free(lp);
  return rc;
}

/* "{1,3,4}" from a 0-based mask (group: the grouped axis shown as "2 in G groups"). */
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

/* A statistic, 1-based like the axes: "7", or with its 1-based coordinates over the
 * unreduced axes when there are several ("1025 (2, 1)"). */
static void stat_words(const actx *a, size_t s, char *buf, size_t len) {
  const ns_statmap *m = &a->acc[A_MAIN].map;
  size_t w = (size_t)snprintf(buf, len, "%zu", s + 1);
  int nfree = 0;
  for (int k = 0; k < m->rank; k++) nfree += m->sstride[k] != 0;
  if (nfree < 2 || w >= len) return;
  w += (size_t)snprintf(buf + w, len - w, " (");
  int first = 1;
  for (int k = 0; k < m->rank && w < len; k++) {
    if (!m->sstride[k]) continue;
    size_t c = (s / m->sstride[k]) % m->stat_shape[k];
    w += (size_t)snprintf(buf + w, len - w, "%s%zu", first ? "" : ", ", c + 1);
    first = 0;
  }
  if (w < len) snprintf(buf + w, len - w, ")");
}

/* "3, 7, 12" (1-based) from a summary list of count statistics (at most 8 kept). */
static void list_words(const size_t *list, size_t count, char *buf, size_t len) {
  size_t w = 0;
  buf[0] = 0;
  for (size_t i = 0; i < count && i < 8 && w < len; i++)
    w += (size_t)snprintf(buf + w, len - w, "%s%zu", i ? ", " : "", list[i] + 1);
  if (count > 8 && w < len) snprintf(buf + w, len - w, ", ...");
}

/* The spec the in-memory probes use: fp64, the audit's reduction. */
static void probe_spec(const actx *a, ns_spec *s) {
  ns_spec_default(s);
  s->kind = a->r->kind;
  s->eps = a->r->eps;
  s->groups = a->r->groups;
  s->axes = a->r->kind == NS_KIND_GROUP ? 0 : a->r->axes;
}

/* The leading whole examples as the explorer's x (at most 65536 elements), or NULL. */
static ns_tensor *patch_slice(actx *a) {
  const ns_audit_report *r = a->r;
  if (a->per > 65536) return NULL;
  size_t ex = 65536 / a->per;
  if (ex > a->B) ex = a->B;
  size_t shape[NS_MAXRANK];
  memcpy(shape, r->shape, sizeof shape);
  if (r->rank >= 2) {
    shape[0] = ex;
  } else {
    shape[0] = ex * a->per;
  }
  double *v = malloc(ex * a->per * sizeof *v);
  char e[NS_ERRLEN];
  ns_tensor *t = NULL;
  if (v && audit_read(a, 0, ex * a->per, v, e) == 0)
    t = ns_tensor_from(r->rank, shape, a->m->dtype, v, NULL);
  free(v);
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

/* ---- the checks ------------------------------------------------------------------- */

/* H of a set of slices (see the top of the file), over the finite ones; 0 with fewer
 * than two. */
static double heterogeneity(const ns_moments *mo, size_t m) {
  double mm = 0, mv = 0, ml = 0;
  size_t k = 0;
  for (size_t i = 0; i < m; i++) {
    double v = mo[i].m2 / mo[i].n;
    if (!(mo[i].n > 0) || !isfinite(v) || !isfinite(mo[i].mean)) continue;
    mm += mo[i].mean;
    mv += v;
    ml += log(v > 1e-300 ? v : 1e-300);
    k++;
  }
  if (k < 2) return m < 2 ? 0 : NAN; /* not measured: too few finite slices */
  mm /= (double)k;
  mv /= (double)k;
  ml /= (double)k;
  double vm = 0, vl = 0;
  for (size_t i = 0; i < m; i++) {
    double v = mo[i].m2 / mo[i].n;
    if (!(mo[i].n > 0) || !isfinite(v) || !isfinite(mo[i].mean)) continue;
    vm += (mo[i].mean - mm) * (mo[i].mean - mm);
    double l = log(v > 1e-300 ? v : 1e-300) - ml;
    vl += l * l;
  }
  vm /= (double)k;
  vl /= (double)k;
  double h = (mv > 0 ? vm / mv : (vm > 0 ? HUGE_VAL : 0)) + vl;
  return isfinite(h) ? h : 1e300;
}

/* The first term of H from the slices' means alone (equal slices): the variance of the
 * slice means against the mean variance within a slice, which is the variance of every
 * element less that of the means. */
static double mean_heterogeneity(const actx *a, const sacc *c) {
  const ns_moments *all = &a->sum.all;
  size_t m = c->map.nstat;
  if (m < 2 || !(all->n > 0)) return 0;
  double between = 0;
  for (size_t i = 0; i < m; i++) {
    double d = c->m[i].mean - all->mean;
    between += c->m[i].n * d * d;
  }
  double within = all->m2 - between;
  if (!isfinite(between) || !isfinite(within)) return NAN;
  if (!(within > 0)) return between > 0 ? 1e300 : 0;
  return between / within;
}

/* H of axis k (0: not measured, no layout has its channels there). */
static double axis_h(const actx *a, int k) {
  const sacc *c = &a->acc[A_MARG0 + k];
  if (c->on) return heterogeneity(c->m, c->map.nstat);
  const sacc *mc = &a->acc[A_MAIN];
  unsigned all = (1u << a->r->rank) - 1;
  if (a->coupled && mc->map.axes == (all & ~(1u << k)) && mc->map.group_axis < 0)
    return heterogeneity(mc->m, mc->map.nstat);
  return 0;
}

/* The axes check's figure: H of each layout's channel axis (h, by axis) and of the flat
 * index modulo C (hp, when the period was measured). */
static int axes_figure(actx *a, ns_audit_finding *f, const double *h, double hp) {
  ns_audit_report *r = a->r;
  double hv[NS_LAYOUT_COUNT + 1];
  char lab[NS_LAYOUT_COUNT + 1][24];
  const char *labels[NS_LAYOUT_COUNT + 1];
  size_t nh = 0;
  for (int l = 0; l < NS_LAYOUT_COUNT; l++) {
    if (layout_rank[l] != r->rank) continue;
    hv[nh] = h[layout_chan[l]];
    snprintf(lab[nh], sizeof lab[nh], "axis %d (%s)", layout_chan[l] + 1, ns_layout_names[l]);
    labels[nh] = lab[nh];
    nh++;
  }
  if (a->acc[A_PERIOD].on) {
    hv[nh] = hp;
    snprintf(lab[nh], sizeof lab[nh], "i mod %zu (means)", r->shape[1]);
    labels[nh] = lab[nh];
    nh++;
  }
  if (nh &&
      fig_set(&f->fig, 1, "how much the slices along each channel axis differ (H)", hv, nh, labels))
    return -1;
  return 0;
}

static int check_axes(actx *a, ns_audit_finding *f) {
  ns_audit_report *r = a->r;
  const ssum *S = &a->sum;
  char used[96], buf[1024];
  axes_words(r->axes, r->group_axis, r->groups, r->rank, used, sizeof used);
  size_t w;
  if (S->yvlo <= S->yvhi)
    w = (size_t)snprintf(buf, sizeof buf,
                         "%s norm over axes %s: y has |mean| <= %.2g, var in [%.6g, %.6g]",
                         ns_kind_name(r->kind), used, S->ymean, S->yvlo, S->yvhi);
  else
    w = (size_t)snprintf(buf, sizeof buf, "%s norm over axes %s", ns_kind_name(r->kind), used);
  double h[NS_MAXRANK] = {0};
  for (int k = 0; k < r->rank; k++) h[k] = axis_h(a, k);
  /* the layouts the shape allows, and which the statistics suggest */
  int best = -1;
  char allowed[64] = "";
  size_t aw = 0;
  for (int l = 0; l < NS_LAYOUT_COUNT; l++) {
    if (layout_rank[l] != r->rank) continue;
    if (r->kind == NS_KIND_GROUP && layout_chan[l] != 1) continue;
    aw += (size_t)snprintf(allowed + aw, sizeof allowed - aw, "%s%s", aw ? ", " : "",
                           ns_layout_names[l]);
    if (best < 0 || h[layout_chan[l]] > h[layout_chan[best]] || isnan(h[layout_chan[best]]))
      best = l;
  }
  for (int l = 0; l < NS_LAYOUT_COUNT && w < sizeof buf; l++) {
    const salt *c = &a->alt[l];
    if (!c->on || !(c->vlo <= c->vhi)) continue;
    char ax[64];
    axes_words(c->map.axes, c->map.group_axis, r->groups, r->rank, ax, sizeof ax);
    w += (size_t)snprintf(buf + w, sizeof buf - w,
                          "; along %s's axes %s: |mean| up to %.2g, var in [%.3g, %.3g]",
                          ns_layout_names[l], ax, c->mean, c->vlo, c->vhi);
  }
  /* the flat index modulo C: channels-last bytes under a channels-first shape */
  double hp = a->acc[A_PERIOD].on ? mean_heterogeneity(a, &a->acc[A_PERIOD]) : 0;
  int hk = -1;
  for (int k = 0; k < r->rank; k++)
    if (h[k] > 0 && (hk < 0 || h[k] > h[hk])) hk = k;
  double hmax = hk >= 0 ? h[hk] : 0;
  ns_verdict v = NS_VERDICT_OK;
  double value = 1;
  r->layout_suggest = best;
  if (hp > THRESH_H_RATIO * hmax && hp > THRESH_H_MIN && w < sizeof buf) {
    size_t C = r->shape[1];
    char shp[96];
    if (r->rank == 4)
      snprintf(shp, sizeof shp, "(N, H, W, C) = (%zu, %zu, %zu, %zu) and --layout nhwc",
               r->shape[0], r->shape[2], r->shape[3], C);
    else
      snprintf(shp, sizeof shp, "(N, L, C) = (%zu, %zu, %zu) and --layout btd", r->shape[0],
               r->shape[2], C);
    v = NS_VERDICT_WARN;
    value = hmax > 0 ? hp / hmax : HUGE_VAL;
    r->layout_suggest = -1;
    snprintf(buf + w, sizeof buf - w,
             "; the flat index modulo %zu (axis 2's size) sorts the values better than any axis "
             "(H %.3g from its classes' means, against %.3g for axis %d): these are channels-last "
             "bytes under a "
             "channels-first shape (the channel of element i is i mod %zu), which no --layout "
             "reads right; save or reshape the array as %s",
             C, hp, hmax, hk + 1, C, shp);
  } else if (best >= 0 && w < sizeof buf) {
    w += (size_t)snprintf(buf + w, sizeof buf - w, "; the shape allows %s", allowed);
    if (r->layout >= 0) {
      double hu = h[layout_chan[r->layout]], hb = h[layout_chan[best]];
      value = hu > 0 ? hb / hu : (hb > 0 ? HUGE_VAL : 1);
      if (isnan(hu) || isnan(hb)) {
        value = NAN;
        snprintf(buf + w, sizeof buf - w,
                 "; the layout is not judged: too few slices have finite statistics (NaN or "
                 "infinite values)");
      } else if (best != r->layout && hb > THRESH_H_RATIO * hu && hb > THRESH_H_MIN) {
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
  if (axes_figure(a, f, h, hp)) return -1;
  unsigned ax = state_axes(a);
  if (v == NS_VERDICT_WARN && r->layout_suggest >= 0 && r->kind != NS_KIND_GROUP) {
    char e[NS_ERRLEN];
    unsigned s = ns_layout_axes(r->kind, (ns_layout)best, e);
    if (s) ax = s;
  }
  patch_spec(a, f, patch_slice(a), ax, r->kind);
  here_spec(a, f, ax, NS_AUDIT_NOWHERE);
  return 0;
}

static double log10_pos(double v) {
  return v > 0 ? log10(v) : NAN;
}

static int check_near_zero(actx *a, ns_audit_finding *f) {
  ns_audit_report *r = a->r;
  const ssum *S = &a->sum;
  double thr = THRESH_VAR * r->eps;
  char list[160], nans[320] = "", ws[48];
  list_words(S->nz_list, S->nz, list, sizeof list);
  stat_words(a, S->vmin_s, ws, sizeof ws);
  const char *what = a->center ? "variance" : "mean square";
  double vw = S->vmin;
  char *d = f->detail;
  size_t dl = sizeof f->detail, w = 0;
  if (S->nan) {
    char nl[160];
    list_words(S->nan_list, S->nan, nl, sizeof nl);
    snprintf(nans, sizeof nans,
             "%zu of %zu statistics are not finite (NaN or infinite values; 1-based %s)", S->nan,
             r->nstat, nl);
  }
  f->check = NS_AUDIT_NEAR_ZERO_VARIANCE;
  f->value = (double)(S->nz + S->nan);
  f->verdict = S->nz || S->nan ? NS_VERDICT_WARN : NS_VERDICT_OK;
  if (S->nan) w += (size_t)snprintf(d + w, dl - w, "%s; ", nans);
  if (S->nz && !(vw + r->eps > 0)) {
    snprintf(d + w, dl - w,
             "%zu of %zu statistics have %s 0 with eps 0 (1-based %s): their denominator is 0 "
             "and their outputs 0/0; give eps > 0",
             S->nz, r->nstat, what, list);
  } else if (S->nz && vw == 0) {
    snprintf(d + w, dl - w,
             "%zu of %zu statistics have %s below 100 eps = %.3g (1-based %s), %zu of them 0 "
             "(constant values, statistic %s the first): their outputs are 0 whatever eps, "
             "which alone keeps them from 0/0",
             S->nz, r->nstat, what, thr, list, S->zero, ws);
  } else if (S->nz) {
    snprintf(d + w, dl - w,
             "%zu of %zu statistics have %s below 100 eps = %.3g (1-based %s); the smallest, "
             "%.3g at %s, gets the denominator sqrt(var+eps) = %.3g instead of sqrt(var) = %.3g: "
             "eps is %.4g%% of var+eps, so its outputs are shrunk by a factor %.3g",
             S->nz, r->nstat, what, thr, list, vw, ws, sqrt(vw + r->eps), sqrt(vw),
             100 * r->eps / (vw + r->eps), sqrt(vw / (vw + r->eps)));
  } else if (isfinite(vw)) {
    snprintf(d + w, dl - w,
             "every finite %s is at least 100 eps = %.3g (the smallest %.3g, statistic %s): eps "
             "is at most %.3g%% of var+eps",
             what, thr, vw, ws, 100 * r->eps / (vw + r->eps));
  }
  char title[96];
  snprintf(title, sizeof title, "log10 %s per statistic%s", what,
           S->zero ? ", zeros left out" : "");
  int rc = fig_stats(a, &f->fig, title, S->fig_var, log10_pos);
  patch_spec(a, f, values_tensor(a->keep[KEEP_DEAD], a->nkeep[KEEP_DEAD], a->m->dtype), 0,
             a->center ? NS_KIND_LAYER : NS_KIND_RMS);
  here_spec(a, f, state_axes(a), S->nz ? a->keep_at[KEEP_DEAD] : NS_AUDIT_NOWHERE);
  return rc;
}

/* max |y - ref| over the elements where ref (n doubles) is finite (inf if y is not); with
 * rel, each difference is divided by max(1, |ref|). */
static double maxdiff(const ns_tensor *y, const double *ref, int rel) {
  double d = 0, buf[4096];
  for (size_t i0 = 0; i0 < y->n; i0 += 4096) {
    size_t len = y->n - i0 < 4096 ? y->n - i0 : 4096;
    ns_tensor_read_range(y, i0, len, buf);
    const double *b = ref + i0;
    size_t j = 0;
#if defined(__SSE2__)
    /* pairs where nothing is new (|y - ref| <= d max(1, |ref|), no NaN) skip the scalar test */
    const __m128d sign = _mm_set1_pd(-0.0), one = _mm_set1_pd(1);
    for (; j + 2 <= len; j += 2) {
      __m128d bv = _mm_loadu_pd(b + j),
              e = _mm_andnot_pd(sign, _mm_sub_pd(_mm_loadu_pd(buf + j), bv));
      __m128d sc = rel ? _mm_max_pd(one, _mm_andnot_pd(sign, bv)) : one;
      __m128d bad =
          _mm_or_pd(_mm_cmpgt_pd(e, _mm_mul_pd(_mm_set1_pd(d), sc)), _mm_cmpunord_pd(e, e));
      if (!_mm_movemask_pd(bad)) continue;
      for (size_t q = j; q < j + 2; q++) {
        if (!isfinite(b[q])) continue;
        double s = rel && fabs(b[q]) > 1 ? fabs(b[q]) : 1;
        double eq = isfinite(buf[q]) ? fabs(buf[q] - b[q]) / s : HUGE_VAL;
        if (eq > d) d = eq;
      }
    }
#endif
    for (; j < len; j++) {
      if (!isfinite(b[j])) continue;
      double s = rel && fabs(b[j]) > 1 ? fabs(b[j]) : 1;
      double e = isfinite(buf[j]) ? fabs(buf[j] - b[j]) / s : HUGE_VAL;
      if (e > d) d = e;
    }
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

/* The slice precision renormalizes: at most NS_AUDIT_SLICE elements (or the element cap).
 * For a batch kind, up to 64 examples (its statistics run over them) and as many channels
 * (or groups) as fit, the cancelling one first; for a per-example kind, whole examples when
 * they fit (with the worst statistic's among them), else fewer channels; else fewer rows. */
typedef struct {
  ns_tensor *t;
  int groups;
  char words[256];
} pslice;

static int cmp_size(const void *x, const void *y) {
  size_t a = *(const size_t *)x, b = *(const size_t *)y;
  return a < b ? -1 : a > b;
}

static int precision_slice(actx *a, pslice *ps, char *err) {
  const ns_audit_report *r = a->r;
  size_t limit = NS_AUDIT_SLICE < ns_max_elements() ? NS_AUDIT_SLICE : ns_max_elements();
  size_t shape[NS_MAXRANK] = {1, 1, 1, 1}, *ex = NULL, *ch = NULL;
  sbox_axis ax[NS_MAXRANK];
  size_t lo[NS_MAXRANK], hi[NS_MAXRANK];
  ns_statmap_box(&a->acc[A_MAIN].map, a->keep_stat[KEEP_CANCEL], lo, hi);
  ps->groups = r->groups;
  int rank = r->rank;
  if (rank == 1) {
    shape[0] = r->n < limit ? r->n : limit;
    ax[0] = (sbox_axis){NULL, 0, shape[0]};
    snprintf(ps->words, sizeof ps->words, "on the first %zu elements", shape[0]);
  } else {
    /* a batch kind's statistics run over the examples: as many of them as the file has (up
       to 64), fewer channels; a per-example kind's are whole within an example */
    size_t E = a->coupled ? 64 : limit / a->per;
    if (E < 1) E = 1;
    if (E > 64) E = 64;
    if (E > a->B) E = a->B;
    int grouped = r->group_axis == 1;
    size_t upc = grouped ? r->shape[1] / (size_t)r->groups : 1; /* channels per unit */
    size_t nunits = r->shape[1] / upc, per_unit = a->per / nunits;
    size_t U = nunits;
    if (E * a->per > limit) U = limit / (E * per_unit) > 0 ? limit / (E * per_unit) : 1;
    if (U > nunits) U = nunits;
    ex = malloc(E * sizeof *ex);
    ch = malloc(U * upc * sizeof *ch);
    if (!ex || !ch) {
      free(ex);
      free(ch);
      return ns_seterr(err, "out of memory");
    }
    for (size_t i = 0; i < E; i++) ex[i] = i;
    if (!a->coupled && lo[0] >= E) ex[E - 1] = lo[0]; /* the worst statistic's example */
    /* units: the worst statistic's first when axis 2 is not reduced, then in order */
    size_t wu = (r->axes >> 1 & 1u) ? 0 : lo[1] / upc, nu = 0;
    size_t *units = malloc(U * sizeof *units);
    if (!units) {
      free(ex);
      free(ch);
      return ns_seterr(err, "out of memory");
    }
    units[nu++] = wu;
    for (size_t u = 0; nu < U && u < nunits; u++)
      if (u != wu) units[nu++] = u;
    qsort(units, U, sizeof *units, cmp_size);
    for (size_t i = 0; i < U; i++)
      for (size_t j = 0; j < upc; j++) ch[i * upc + j] = units[i] * upc + j;
    free(units);
    shape[0] = E;
    shape[1] = U * upc;
    size_t tot = E * U * upc;
    for (int k = 2; k < rank; k++) shape[k] = r->shape[k], tot *= r->shape[k];
    for (int k = 2; k < rank && tot > limit; k++) { /* fewer rows, from the outer axis in */
      size_t others = tot / shape[k], d = limit / others;
      if (d < 1) d = 1;
      if (d < shape[k]) tot = others * d, shape[k] = d;
    }
    ax[0] = (sbox_axis){ex, 0, E};
    ax[1] = (sbox_axis){U == nunits ? NULL : ch, 0, U * upc};
    for (int k = 2; k < rank; k++) ax[k] = (sbox_axis){NULL, 0, shape[k]};
    if (grouped) ps->groups = (int)U;
    char shp[96];
    ns_shape_format(rank, shape, shp, sizeof shp);
    int alle = E == a->B, allc = U == nunits;
    snprintf(ps->words, sizeof ps->words, "on a slice %s: %s%zu example%s%s%s", shp,
             alle ? "all " : "", E, E == 1 ? "" : "s",
             !a->coupled && lo[0] >= E - 1 && E < a->B ? " (with the worst statistic's)" : "",
             allc ? "" : (grouped ? ", some groups" : ", some channels (the worst's among them)"));
  }
  size_t tot = 1;
  for (int k = 0; k < rank; k++) tot *= shape[k];
  double *v = malloc(tot * sizeof *v);
  int rc = 0;
  if (!v) {
    rc = ns_seterr(err, "out of memory");
  } else {
    size_t got = audit_read_box(a, ax, v, tot, err);
    if (got == (size_t)-1) {
      rc = -1;
    } else {
      char e[NS_ERRLEN] = "";
      ps->t = ns_tensor_from(rank, shape, a->m->dtype, v, e);
      if (!ps->t) rc = ns_seterr(err, "%s", e);
    }
  }
  audit_progress(a, (double)tot, "precision slice");
  free(v);
  free(ex);
  free(ch);
  return rc;
}

/* The 16-bit dtype's spacing at |x| (normal numbers; its smallest subnormal below). */
static double ulp16(double x, ns_dtype d) {
  int p = d == NS_BF16 ? 7 : 10, emin = d == NS_BF16 ? -126 : -14;
  int e;
  frexp(fabs(x), &e);
  e -= 1; /* |x| in [2^e, 2^(e+1)) */
  if (x == 0 || e < emin) e = emin;
  return ldexp(1, e - p);
}

/* Storage in a 16-bit dtype: how far y moves when x is rounded to d first (everything else
 * exact), relative to max(1, |y|). */
static double storage_damage(const ns_tensor *x, const ns_spec *s, const double *yref, ns_dtype d,
                             char *err) {
  ns_tensor *xr = ns_tensor_new_uninit(x->rank, x->shape, NS_FP64, err);
  if (!xr) return NAN;
  double *v = xr->data;
  ns_tensor_read(x, v);
  if (x->dtype == NS_FP64) { /* doubles: rounded as ns_round rounds */
    for (size_t i = 0; i < x->n; i++) v[i] = ns_round_fast(v[i], d);
  } else { /* floats (or 16-bit values): the float conversions round them exactly */
    for (size_t i = 0; i < x->n; i++) {
      float f = (float)v[i];
      v[i] = d == NS_FP16 ? nk_h2f(nk_f2h(f)) : nk_b2f(nk_f2b(f));
    }
  }
  ns_norm_result y = {0};
  double dmg = NAN;
  if (ns_normalize(xr, s, &y, err) == 0) dmg = maxdiff(y.y, yref, 1);
  ns_norm_result_free(&y);
  ns_tensor_free(xr);
  return dmg;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

/* For data stored in 16 bits: the largest half step of its values against the spread they
 * are normalized by (max(std, |x - mean|)), which is how far the storage has already moved
 * y (relative to max(1, |y|)); the statistic where, its distinct values and its step. */
typedef struct {
  double dmg, step, std;
  size_t distinct, count;
} grain;

static void granularity(const ns_tensor *x, const ns_norm_result *ref, grain *g) {
  memset(g, 0, sizeof *g);
  size_t worst = 0;
  for (size_t i = 0; i < x->n; i++) {
    size_t s = ns_norm_plan_stat_of(&ref->plan, i);
    double v = ns_tensor_get(x, i), sd = sqrt(ref->var[s]);
    double spread = fmax(sd, fabs(v - ref->mean[s]));
    if (!isfinite(v) || !(spread > 0)) continue;
    double dm = ulp16(v, x->dtype) / 2 / spread;
    if (dm > g->dmg) g->dmg = dm, worst = s, g->step = ulp16(v, x->dtype), g->std = sd;
  }
  if (!(g->dmg > 0)) return;
  double *vals = malloc(ref->plan.count * sizeof *vals);
  if (!vals) return;
  size_t n = 0;
  for (size_t i = 0; i < x->n && n < ref->plan.count; i++)
    if (ns_norm_plan_stat_of(&ref->plan, i) == worst) vals[n++] = ns_tensor_get(x, i);
  qsort(vals, n, sizeof *vals, cmp_double);
  g->count = n;
  for (size_t i = 0; i < n; i++) g->distinct += i == 0 || vals[i] != vals[i - 1];
  free(vals);
}

/* The measurements of the precision check, each against the fp64 reference on the slice:
 * max |y - y_fp64| of the variants below (the frameworks' columns come last: numpy's
 * pairwise float32 sums, then torch's kernels as torch_setting states them), and how far
 * storing x in fp16 or bf16 moves y. Independent of one another: they run on the threads. */
enum { NV = 7, NJOBS = NV + 2, JOB_FP16 = NV, JOB_BF16 = NV + 1 };
static const char *const variant_names[NV] = {
    "fp32 sequential",  "fp32 acc fp64", "fp16 (acc fp32)", "bf16 (acc fp32)",
    "fp32 raw moments", "numpy float32", "torch float32"};
static const struct {
  ns_dtype d;
  ns_dtype acc;
  ns_algo algo;
  ns_order order;
} variants[NV - 1] = {{NS_FP32, NS_FP32, NS_ALGO_TWOPASS, NS_ORDER_SEQUENTIAL},
                      {NS_FP32, NS_FP64, NS_ALGO_TWOPASS, NS_ORDER_SEQUENTIAL},
                      {NS_FP16, NS_FP32, NS_ALGO_TWOPASS, NS_ORDER_SEQUENTIAL},
                      {NS_BF16, NS_FP32, NS_ALGO_TWOPASS, NS_ORDER_SEQUENTIAL},
                      {NS_FP32, NS_FP32, NS_ALGO_RAW, NS_ORDER_SEQUENTIAL},
                      /* numpy: np.mean and np.var in float32, in numpy's order */
                      {NS_FP32, NS_FP32, NS_ALGO_TWOPASS, NS_ORDER_NUMPY}};

typedef struct {
  const ns_tensor *x;
  const ns_spec *s, *torch; /* the fp64 spec; torch's (NULL: no such module) */
  const double *yref;
  double out[NJOBS];
  int rc[NJOBS];
  char err[NJOBS][NS_ERRLEN];
} pjobs;

static void precision_jobs(void *ctx, size_t j0, size_t j1) {
  pjobs *p = ctx;
  for (size_t j = j0; j < j1; j++) {
    p->out[j] = NAN;
    p->rc[j] = 0;
    if (j == JOB_FP16 || j == JOB_BF16) {
      ns_dtype d = j == JOB_FP16 ? NS_FP16 : NS_BF16;
      if (p->x->dtype != d) p->out[j] = storage_damage(p->x, p->s, p->yref, d, p->err[j]);
      continue;
    }
    ns_spec t = *p->s;
    if (j < NV - 1) {
      t.dtype = variants[j].d;
      t.acc = (int)variants[j].acc;
      t.algo = variants[j].algo;
      t.order = variants[j].order;
    } else if (p->torch) {
      t = *p->torch;
    } else {
      continue;
    }
    ns_norm_result y = {0};
    p->rc[j] = ns_normalize(p->x, &t, &y, p->err[j]);
    if (p->rc[j] && j == NV - 1) p->rc[j] = 0; /* axes torch's kernels do not take: NaN */
    if (p->rc[j] == 0 && y.y) p->out[j] = maxdiff(y.y, p->yref, 0);
    ns_norm_result_free(&y);
  }
}

static int check_precision(actx *a, ns_audit_finding *f, char *err) {
  ns_audit_report *r = a->r;
  const ssum *S = &a->sum;
  /* the raw-moment cancellation risk, over every statistic of finite, nonzero variance */
  double worst = S->cancel > 0 ? S->cancel : 0;
  double lost = a->center ? fmin(log10(1 + worst), 17.0) : 0; /* 17: every digit of a double */
  char ws[48];
  stat_words(a, S->cancel_s, ws, sizeof ws);
  const char *const *names = variant_names;
  double errs[NV], dmg16, dmgbf;
  grain gr = {0};
  const char *torch_words = "";
  ns_spec s;
  probe_spec(a, &s);
  ns_spec tv = s;
  int have_torch = torch_setting(r->kind, a->center, &tv, &torch_words);
  pslice ps = {0};
  if (precision_slice(a, &ps, err)) return -1;
  s.groups = ps.groups;
  tv.groups = ps.groups;
  ns_norm_result ref = {0};
  double *yref = malloc(ps.t->n * sizeof *yref);
  if (!yref || ns_normalize(ps.t, &s, &ref, err)) {
    if (!yref) ns_seterr(err, "out of memory");
    free(yref);
    ns_tensor_free(ps.t);
    return -1;
  }
  ns_tensor_read(ref.y, yref);
  pjobs *pj = calloc(1, sizeof *pj);
  int rc = pj ? 0 : ns_seterr(err, "out of memory");
  if (rc == 0) {
    pj->x = ps.t;
    pj->s = &s;
    pj->torch = have_torch ? &tv : NULL;
    pj->yref = yref;
    ns_split_run(NJOBS, a->threads, precision_jobs, pj);
    for (int j = 0; j < NJOBS && rc == 0; j++)
      if (pj->rc[j]) rc = ns_seterr(err, "%s", pj->err[j]);
  }
  for (int k = 0; k < NV; k++) errs[k] = pj ? pj->out[k] : NAN;
  dmg16 = pj ? pj->out[JOB_FP16] : NAN;
  dmgbf = pj ? pj->out[JOB_BF16] : NAN;
  free(pj);
  ns_dtype dt = ps.t->dtype;
  int half = dt == NS_FP16 || dt == NS_BF16;
  if (rc == 0 && half) granularity(ps.t, &ref, &gr);
  ns_norm_result_free(&ref);
  free(yref);
  if (rc) {
    ns_tensor_free(ps.t);
    return -1;
  }
  /* the verdict, and the numbers that tripped it first */
  char why[512] = "";
  size_t ww = 0;
#define WHY(...)                                                                                   \
  do {                                                                                             \
    if (ww < sizeof why) ww += (size_t)snprintf(why + ww, sizeof why - ww, "%s", ww ? "; " : "");  \
    if (ww < sizeof why) ww += (size_t)snprintf(why + ww, sizeof why - ww, __VA_ARGS__);           \
  } while (0)
  if (a->nonfinite) WHY("%zu values are NaN or infinite", a->nonfinite);
  if (a->over16) WHY("%zu values overflow fp16 (|x| > 65504)", a->over16);
  if (lost >= THRESH_DIGITS)
    WHY("raw moments lose %.2g digits (>= %.2g: mean^2/var %.3g at statistic %s)", lost,
        THRESH_DIGITS, worst, ws);
  if (!(errs[5] <= THRESH_FP32) && !isnan(errs[5]))
    WHY("numpy float32 moves y by %.2g (> %.0e)", errs[5], THRESH_FP32);
  if (have_torch && !(errs[6] <= THRESH_FP32) && !isnan(errs[6]))
    WHY("torch float32 moves y by %.2g (> %.0e)", errs[6], THRESH_FP32);
  if (!(dmg16 <= THRESH_16) && !isnan(dmg16))
    WHY("storing x in fp16 moves y by %.2g (> %.2g of max(1, |y|))", dmg16, THRESH_16);
  if (!(dmgbf <= THRESH_16) && !isnan(dmgbf))
    WHY("storing x in bf16 moves y by %.2g (> %.2g of max(1, |y|))", dmgbf, THRESH_16);
  if (half && gr.dmg > THRESH_16)
    WHY("the file's %s values are coarse: their step moves y by up to %.2g (> %.2g; a statistic "
        "with %zu distinct values of %zu, step %.3g against a std of %.3g)",
        ns_dtype_name(dt), gr.dmg, THRESH_16, gr.distinct, gr.count, gr.step, gr.std);
#undef WHY
  ns_verdict verdict = ww ? NS_VERDICT_WARN : NS_VERDICT_OK;
  char raw[200];
  if (a->center)
    snprintf(raw, sizeof raw,
             "raw moments E[x^2]-E[x]^2 lose %.2g digits (mean^2/var up to %.3g, statistic %s, "
             "variance 0 left out; fp32 keeps 7.2, bf16 2.4)",
             lost, worst, ws);
  else
    snprintf(raw, sizeof raw, "rms norm divides by the root mean square: nothing cancels");
  char grs[160] = "";
  if (half)
    snprintf(grs, sizeof grs, "; the %s values' step moves y by up to %.2g", ns_dtype_name(dt),
             gr.dmg);
  setf(f, NS_AUDIT_PRECISION, verdict, lost,
       "%s%s%s; max |y - y_fp64| %s: as the frameworks compute it, numpy float32 %.2g (np.mean "
       "and np.var in float32, in numpy's order: order=numpy), torch float32 %.2g (%s); fp32 "
       "storage "
       "with fp64 accumulation %.2g, fp16 %.2g, bf16 %.2g, fp32 raw %.2g, and fp32 summed in "
       "index order %.2g (normscope's own order, which no framework uses: not a verdict); "
       "storing x in fp16 moves y by %.2g, in bf16 %.2g (relative to max(1, |y|)); warns at "
       "%.0e for the frameworks and %.2g for 16-bit storage%s",
       ww ? why : "", ww ? ". " : "", raw, ps.words, errs[5], errs[6], torch_words, errs[1],
       errs[2], errs[3], errs[4], errs[0], dmg16, dmgbf, THRESH_FP32, THRESH_16, grs);
  ns_tensor_free(ps.t);
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

/* The batch panel of the explorer: the first examples' leading elements. */
static void batch_panel(actx *a, ns_audit_finding *f) {
  ns_patch_init(&f->patch);
  here_spec(a, f, state_axes(a), NS_AUDIT_NOWHERE);
  if (a->B < 2) return;
  size_t rows = a->B < 8 ? a->B : 8;
  size_t cols =
      a->per < NS_EXPLORE_MAX_BATCH_ELEMS / rows ? a->per : NS_EXPLORE_MAX_BATCH_ELEMS / rows;
  size_t shape[2] = {rows, cols};
  f->batch = ns_tensor_new(2, shape, NS_FP64, NULL);
  double *v = malloc(cols * sizeof *v);
  int finite = f->batch && v;
  char e[NS_ERRLEN];
  for (size_t i = 0; finite && i < rows; i++) {
    finite = audit_read(a, i * a->per, cols, v, e) == 0;
    for (size_t j = 0; finite && j < cols; j++) {
      finite = isfinite(v[j]);
      ns_tensor_set(f->batch, i * cols + j, v[j]);
    }
  }
  free(v);
  if (!finite) return;
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

/* What normalizes with moments mo (n, mean, m2): the mean taken off and the denominator. */
static void norm_of(const actx *a, ns_moments mo, double *mu, double *den) {
  double v = mo.m2 / mo.n;
  *mu = a->center ? mo.mean : 0;
  *den = sqrt((a->center ? v : v + mo.mean * mo.mean) + a->r->eps);
}

/* max |y' - y| over x in [lo, hi] for y = (x - mu) / den: linear in x, so at an end. */
static double lin_gap(double lo, double hi, double mu1, double d1, double mu0, double d0) {
  double e1 = fabs((lo - mu1) / d1 - (lo - mu0) / d0), e2 = fabs((hi - mu1) / d1 - (hi - mu0) / d0);
  if (isnan(e1) || isnan(e2)) return NAN;
  return e1 > e2 ? e1 : e2;
}

/* The statistics without one part: Chan's update run backwards. */
static ns_moments moments_remove(ns_moments t, ns_moments p) {
  ns_moments r = {t.n - p.n, 0, 0};
  if (!(r.n > 0)) return r;
  r.mean = (t.n * t.mean - p.n * p.mean) / r.n;
  double d = p.mean - r.mean;
  r.m2 = t.m2 - p.m2 - d * d * p.n * r.n / t.n;
  if (r.m2 < 0) r.m2 = 0;
  return r;
}

static int check_batch_dependence(actx *a, ns_audit_finding *f) {
  ns_audit_report *r = a->r;
  batch_panel(a, f);
  if (!a->coupled) {
    if (r->rank == 1)
      setf(f, NS_AUDIT_BATCH_DEPENDENCE, NS_VERDICT_NA, 0,
           "not measured: a rank-1 tensor is one example (a vector of features), with no other "
           "example to couple with");
    else
      setf(f, NS_AUDIT_BATCH_DEPENDENCE, NS_VERDICT_NO, 0,
           "%s norm leaves axis 1 (the examples) unreduced: each example is normalized by its "
           "own statistics, so changing one never moves another's output",
           ns_kind_name(r->kind));
    return 0;
  }
  if (a->B < 2) {
    setf(f, NS_AUDIT_BATCH_DEPENDENCE, NS_VERDICT_NA, 0,
         "not measured: one example along axis 1, with no other to couple with");
    return 0;
  }
  const sacc *mc = &a->acc[A_MAIN], *ex = &a->acc[A_EX01];
  size_t ns = r->nstat;
  double d = 0;
  for (size_t s = 0; s < ns; s++) {
    ns_moments e1 = ex->m[ns + s], e1x = {e1.n, 3 * e1.mean + 1, 9 * e1.m2};
    ns_moments t2 = ns_moments_merge(moments_remove(mc->m[s], e1), e1x);
    double mu0, d0, mu1, d1;
    norm_of(a, mc->m[s], &mu0, &d0);
    norm_of(a, t2, &mu1, &d1);
    double g = lin_gap(ex->lo[s], ex->hi[s], mu1, d1, mu0, d0);
    if (g > d || isnan(g)) d = g;
    if (isnan(d)) break;
  }
  if (isnan(d)) {
    setf(f, NS_AUDIT_BATCH_DEPENDENCE, NS_VERDICT_WARN, d,
         "not measurable: example 1's outputs are not finite (NaN or Inf input, or a zero "
         "variance with eps 0)");
    return 0;
  }
  int yes = !(d <= THRESH_COUPLE);
  setf(f, NS_AUDIT_BATCH_DEPENDENCE, yes ? NS_VERDICT_YES : NS_VERDICT_NO, d,
       "changing example 2 (x -> 3x + 1) in the batch of all %zu moves example 1's output by up "
       "to %.3g (from the streamed moments of both examples and of the batch): %s",
       a->B, d,
       yes ? "its statistics span the examples (a batch kind couples them)"
           : "the batch statistics barely depend on one example");
  return 0;
}

static int check_batch_size(actx *a, ns_audit_finding *f) {
  ns_audit_report *r = a->r;
  if (!a->coupled || a->B < 2) {
    int na = a->coupled || r->rank == 1;
    setf(f, NS_AUDIT_BATCH_SIZE_SENSITIVITY, na ? NS_VERDICT_NA : NS_VERDICT_NO, 0, "%s",
         na ? "not measured: one example, so no other batch to put it in"
            : "each example is normalized by its own statistics: the same function whatever the "
              "batch");
    patch_spec(a, f, patch_slice(a), state_axes(a), r->kind);
    here_spec(a, f, state_axes(a), NS_AUDIT_NOWHERE);
    return 0;
  }
  const sacc *mc = &a->acc[A_MAIN], *ex = &a->acc[A_EX01], *tl = &a->acc[A_TAIL];
  size_t ns = r->nstat;
  double d_alone = 0, d_other = 0, d_eval = a->o->run_mean ? 0 : NAN;
  for (size_t s = 0; s < ns; s++) {
    double mu, den, m1, d1;
    norm_of(a, mc->m[s], &mu, &den);
    norm_of(a, ex->m[s], &m1, &d1);
    double g = lin_gap(ex->lo[s], ex->hi[s], m1, d1, mu, den);
    if (g > d_alone || isnan(g)) d_alone = g;
    norm_of(a, ns_moments_merge(ex->m[s], tl->m[s]), &m1, &d1);
    g = lin_gap(ex->lo[s], ex->hi[s], m1, d1, mu, den);
    if (g > d_other || isnan(g)) d_other = g;
    if (!isnan(d_eval) && s < a->o->nrun) {
      double rm = a->o->run_mean[s], rv = a->o->run_var[s];
      g = lin_gap(ex->lo[s], ex->hi[s], a->center ? rm : 0,
                  sqrt((a->center ? rv : rv + rm * rm) + r->eps), mu, den);
      if (g > d_eval || isnan(g)) d_eval = g;
    }
  }
  double worst = d_alone > d_other ? d_alone : d_other;
  int yes = worst > THRESH_COUPLE, nan = isnan(d_alone) || isnan(d_other);
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
       a->B, d_alone, a->tail_k, d_other, ev,
       nan   ? " (outputs not finite: NaN or Inf input, or a zero variance with eps 0)"
       : yes ? ""
             : " (the same function whatever the batch)");
  double bars[3] = {d_alone, d_other, d_eval};
  const char *labels[3] = {"alone", "other batch", "eval"};
  int rc =
      fig_set(&f->fig, 1, "max |y - y_full| of example 1", bars, isnan(d_eval) ? 2 : 3, labels);
  patch_spec(a, f, patch_slice(a), state_axes(a), r->kind);
  here_spec(a, f, state_axes(a), NS_AUDIT_NOWHERE);
  return rc;
}

static int check_train_eval(actx *a, ns_audit_finding *f) {
  ns_audit_report *r = a->r;
  if (!a->coupled && !a->gap2) {
    setf(f, NS_AUDIT_TRAIN_EVAL_GAP, NS_VERDICT_NO, 0,
         "%s norm uses each example's own statistics: train and eval mode compute the same "
         "function and the running statistics are not used",
         ns_kind_name(r->kind));
    patch_spec(a, f, patch_slice(a), state_axes(a), r->kind);
    here_spec(a, f, state_axes(a), NS_AUDIT_NOWHERE);
    return 0;
  }
  size_t ns = a->gap2 ? r->shape[a->inst_axis] : r->nstat, worst = 0;
  double *gap = malloc((ns ? ns : 1) * sizeof *gap);
  if (!gap) return -1;
  double sum = 0;
  const sacc *mc = &a->acc[A_MAIN];
  for (size_t c = 0; c < ns; c++) {
    if (a->gap2) { /* instance norm: rms over the channel's instances */
      gap[c] = a->gapn[c] ? sqrt(a->gap2[c] / (double)a->gapn[c]) : NAN;
    } else {
      double mb = mc->m[c].mean, vb = mc->m[c].m2 / mc->m[c].n;
      double mr = a->o->run_mean[c], vr = a->o->run_var[c];
      double ae = 1 / sqrt(vr + r->eps), at = 1 / sqrt(vb + r->eps);
      /* y_eval - y_train over the channel: mean (mb - mr) ae, spread sqrt(vb) |ae - at| */
      double d = (mb - mr) * ae;
      gap[c] = sqrt(d * d + vb * (ae - at) * (ae - at));
    }
    sum += gap[c];
    if (gap[c] > gap[worst] || isnan(gap[c])) worst = c;
  }
  ns_verdict v = !(gap[worst] <= THRESH_GAP) ? NS_VERDICT_WARN : NS_VERDICT_OK;
  double mr = a->o->run_mean[worst], vr = a->o->run_var[worst];
  if (a->gap2) {
    setf(f, NS_AUDIT_TRAIN_EVAL_GAP, v, gap[worst],
         "instance norm with running statistics (torch's track_running_stats): eval mode "
         "normalizes each channel by them instead of each instance's own; worst channel %zu "
         "(1-based; running mean %.4g, var %.4g): eval moves its outputs by %.3g rms from train "
         "mode over its %zu instances (mean over %zu channels %.3g)%s",
         worst + 1, mr, vr, gap[worst], a->gapn[worst], ns, sum / (double)ns,
         v == NS_VERDICT_WARN ? "; above 0.1: the running statistics describe other data" : "");
  } else {
    double mb = mc->m[worst].mean, vb = mc->m[worst].m2 / mc->m[worst].n;
    char cnt[200] = "";
    if (a->o->run_count >= 0) {
      /* momentum=None: the running statistics are the average of every batch so far, so one
         more batch weighs 1/(count+1); torch's update of the variance uses the unbiased one */
      double k = a->o->run_count + 1, n = mc->m[worst].n;
      double vu = n > 1 ? mc->m[worst].m2 / (n - 1) : NAN;
      snprintf(cnt, sizeof cnt,
               "; tracked over %.17g batches (num_batches_tracked): with momentum=None this "
               "batch would move channel %zu's running mean by %.3g and its variance by %.3g",
               a->o->run_count, worst + 1, (mb - mr) / k, (vu - vr) / k);
    }
    setf(f, NS_AUDIT_TRAIN_EVAL_GAP, v, gap[worst],
         "worst channel %zu (1-based): batch mean %.4g against running %.4g (%.3g running std), "
         "variance ratio %.3g: eval mode moves its outputs by %.3g rms from train mode (mean "
         "over %zu channels %.3g)%s%s",
         worst + 1, mb, mr, (mb - mr) / sqrt(vr + r->eps), vb / vr, gap[worst], ns,
         sum / (double)ns, cnt,
         v == NS_VERDICT_WARN ? "; above 0.1: the running statistics describe other data" : "");
  }
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
  const ssum *S = &a->sum;
  /* the self-standardization bound: centered, |z| <= sqrt(n-1); uncentered (rms), sqrt(n) */
  double z = S->z > 0 ? S->z : 0, bound = sqrt((double)r->count - (a->center ? 1 : 0));
  ns_verdict v = (!(z <= THRESH_Z) || S->kurt > THRESH_KURT) ? NS_VERDICT_WARN : NS_VERDICT_OK;
  char zs[48], ks[48], nan[96] = "", why[96] = "";
  stat_words(a, S->z_s, zs, sizeof zs);
  stat_words(a, S->kurt_s, ks, sizeof ks);
  if (S->nan) snprintf(nan, sizeof nan, " (%zu statistics that are not finite left out)", S->nan);
  if (v == NS_VERDICT_WARN)
    snprintf(why, sizeof why, ": %s%s%s, a few values dominate their statistic",
             z > THRESH_Z ? "|z| above 10" : "",
             z > THRESH_Z && S->kurt > THRESH_KURT ? " and " : "",
             S->kurt > THRESH_KURT ? "kurtosis above 50" : "");
  setf(f, NS_AUDIT_OUTLIERS, v, z,
       "largest |z| %.4g in statistic %s, against the self-standardization bound %s = %.4g for "
       "n = %zu (%.3g%% of it); largest kurtosis %.4g in statistic %s (3 for a normal)%s%s",
       z, zs, a->center ? "sqrt(n-1)" : "sqrt(n)", bound, r->count, 100 * z / bound, S->kurt, ks,
       nan, why);
  int rc = fig_stats(a, &f->fig, "largest |z| per statistic", S->fig_z, NULL);
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
    return ns_seterr(err, "unknown normalization kind %d", (int)o->kind);
  if (!ns_eps_ok(o->eps)) return ns_seterr(err, "eps " NS_EPS_RULE ", got %g", o->eps);
  if (o->kind == NS_KIND_GROUP && o->axes)
    return ns_seterr(err, "group norm takes its axes from the groups: give --groups, not "
                          "--axes");
  if (o->layout >= 0) {
    if (o->layout >= NS_LAYOUT_COUNT) return ns_seterr(err, "unknown layout");
    if (layout_rank[o->layout] != r->rank)
      return ns_seterr(err, "layout %s is for rank %d tensors; this one has rank %d",
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
    if (o->axes >> r->rank) return ns_seterr(err, "axes beyond rank %d", r->rank);
    r->axes = o->axes;
  } else if (o->layout >= 0) {
    r->axes = ns_layout_axes(o->kind, (ns_layout)o->layout, e);
    if (!r->axes && e[0]) return ns_seterr(err, "%s", e);
  } else {
    r->axes = ns_default_axes(o->kind, r->rank, e);
    if (!r->axes && e[0]) return ns_seterr(err, "%s", e);
  }
  if (o->kind == NS_KIND_GROUP) {
    if (r->rank < 2) return ns_seterr(err, "group norm needs channels on axis 2");
    r->group_axis = 1;
    r->axes &= ~2u;
  }
  return 0;
}

/* The running statistics against the reduction: one value per statistic for a batch kind,
 * one per channel for instance norm (torch's track_running_stats); other kinds ignore them. */
static int running_check(const ns_audit_opts *o, const ns_audit_report *r, const ns_statmap *m,
                         char *err) {
  if (!o->run_mean) return 0;
  if (!o->run_var) return ns_seterr(err, "running statistics without variances");
  if (r->axes & 1u) {
    if (o->nrun != m->nstat)
      return ns_seterr(err,
                       "the running statistics have %zu values, the audit has %zu "
                       "statistics (channels)",
                       o->nrun, m->nstat);
  } else if (r->kind == NS_KIND_INSTANCE) {
    for (int k = 1; k < r->rank; k++)
      if (!(r->axes >> k & 1u) && o->nrun != r->shape[k])
        return ns_seterr(err,
                         "the running statistics have %zu values, instance norm's axis %d "
                         "has %zu channels",
                         o->nrun, k + 1, r->shape[k]);
  }
  return 0;
}

int ns_audit_check_opts(const ns_audit_opts *o, int rank, const size_t *shape, char *err) {
  if (!o || !shape) return ns_seterr(err, "no options or shape");
  ns_audit_report *r = calloc(1, sizeof *r);
  if (!r) return ns_seterr(err, "out of memory");
  r->rank = rank;
  memcpy(r->shape, shape, (size_t)rank * sizeof *shape);
  int rc = resolve(o, r, err);
  ns_statmap m;
  char e[NS_ERRLEN] = "";
  if (rc == 0 && ns_statmap_make(rank, shape, r->axes, r->group_axis, (size_t)r->groups, &m, e))
    rc = ns_seterr(err, "%s", e);
  if (rc == 0) rc = running_check(o, r, &m, err);
  free(r);
  return rc;
}

int ns_audit_run(ns_file_map *m, const ns_audit_opts *o, ns_audit_report *r, char *err) {
  if (!m || !o || !r) return ns_seterr(err, "no file, options or report");
  memset(r, 0, sizeof *r);
  double t0 = now();
  r->rank = m->rank;
  memcpy(r->shape, m->shape, sizeof r->shape);
  r->n = m->n;
  r->dtype = m->dtype;
  snprintf(r->name, sizeof r->name, "%s", m->name);
  if (resolve(o, r, err)) return -1;
  actx *a = calloc(1, sizeof *a);
  if (!a) return ns_seterr(err, "out of memory");
  a->m = m;
  a->o = o;
  a->r = r;
  a->center = o->kind != NS_KIND_RMS;
  a->chunk = o->chunk ? o->chunk : NS_AUDIT_CHUNK;
  int rc = audit_scan_init(a, err);
  if (rc == 0) {
    r->nstat = a->acc[A_MAIN].map.nstat;
    r->count = a->acc[A_MAIN].map.count;
    rc = running_check(o, r, &a->acc[A_MAIN].map, err);
  }
  a->total = (double)r->n + (double)(r->n < NS_AUDIT_SLICE ? r->n : NS_AUDIT_SLICE);
  if (rc == 0) rc = audit_scan_run(a, err);
  ns_audit_finding *f = r->f;
  size_t nf = 0;
  if (rc == 0) rc = check_axes(a, &f[nf++]);
  if (rc == 0) rc = check_near_zero(a, &f[nf++]);
  if (rc == 0) rc = check_precision(a, &f[nf++], err);
  if (rc == 0) rc = check_batch_dependence(a, &f[nf++]);
  if (rc == 0) rc = check_batch_size(a, &f[nf++]);
  if (rc == 0 && o->run_mean) rc = check_train_eval(a, &f[nf++]);
  if (rc == 0) rc = check_outliers(a, &f[nf++]);
  r->nfindings = nf;
  r->nonfinite = a->nonfinite;
  r->seconds = now() - t0;
  if (rc == 0) audit_progress(a, a->total - a->done, "done");
  audit_scan_free(a);
  free(a);
  if (rc) {
    if (!err || !err[0]) ns_seterr(err, "out of memory");
    ns_audit_free(r);
    return -1;
  }
  return 0;
}

int ns_audit_tensor(const ns_tensor *x, const ns_audit_opts *o, ns_audit_report *r, char *err) {
  if (!x) return ns_seterr(err, "no tensor");
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
             "\n---\n%d streaming pass%s in %.3g s. Thresholds and methods: `normscope help "
             "audit`.\n",
             r->passes, r->passes == 1 ? "" : "es", r->seconds);
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
