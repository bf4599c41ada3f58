/* panelfig.c: the panels' figures (panelfig.h), each composed of plot/figure.h figures
 * placed side by side or one above the other in one canvas, with what cannot be drawn
 * said in words in its place. The screen paints the canvas as it is (tui/figure.c). Their
 * scratch, which grows with x's channels, is charged (ns_mem_alloc): a lesson's figures
 * count against its memory cap. */
#include "explore/panelfig.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/moments.h"
#include "core/spectrum.h"
#include "core/tensor_ops.h"
#include "explore/result.h"

#define NS_PANEL_NAME_(ID, name, figure) name,
const char *const ns_panel_names[NS_PANEL_COUNT + 1] = {NS_PANELS(NS_PANEL_NAME_) NULL};
#undef NS_PANEL_NAME_

/* At most this many elements of x go into a figure (the first ones). */
#define FIG_MAXN 4096

/* One figure being composed: the canvas, the options, and the reason the last part that
 * failed gave (a part the plot layer could not draw shows it in its place). */
typedef struct {
  plot_canvas *c;
  const ns_panelfig_opts *o;
  char err[PLOT_ERRLEN];
} comp;

void ns_panelfig_opts_init(ns_panelfig_opts *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->panel = NS_PANEL_OUTPUT;
  o->width = 100;
  o->height = 30;
  o->glyphs = PLOT_GLYPHS_BLOCKS;
}

/* Plot options for a part of w x h cells with the figure's glyphs and colours. */
static void fig_opts(plot_opts *o, int w, int h, const comp *fc, const char *title) {
  plot_opts_init(o);
  o->width = w;
  o->height = h;
  o->glyphs = fc->o->glyphs;
  o->color = fc->o->color;
  o->title = title;
}

/* Places part c (then frees it) with its top left at (y, x); a part the plot layer could
 * not make (NULL) is replaced by its reason. */
static void paint(comp *fc, int y, int x, plot_canvas *c) {
  if (!c) {
    plot_text_fit(fc->c, x, y, fc->err[0] ? fc->err : "no figure", PLOT_S_MARK);
    return;
  }
  plot_canvas_blit(fc->c, x, y, c);
  plot_canvas_free(c);
}

/* A line of words at (y, x), in the style of a notice, cut at a space to fit. */
static void say(comp *fc, int y, int x, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void say(comp *fc, int y, int x, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  plot_text_fit(fc->c, x, y, buf, PLOT_S_MARK);
}

static size_t firstn(size_t n) {
  return n < FIG_MAXN ? n : FIG_MAXN;
}

/* ---- input: histograms, per channel for a tensor of rank 3 or 4, and the per-channel
 * statistics of x and of y for a loaded file ---------------------------------------------- */

/* Channels are axis 2 (1-based), as doc/ARCHITECTURE.md reads the shapes: C of (N,C,H,W)
 * and (B,C,L), D of (B,D); the one batch norm keeps and group norm groups. */
typedef struct {
  size_t C, inner; /* channels; elements of one channel per leading index */
} chanlayout;

static chanlayout chan_layout(const ns_tensor *x) {
  chanlayout L = {1, 1};
  if (x->rank < 2) return L;
  L.C = x->shape[1];
  for (int k = 2; k < x->rank; k++) L.inner *= x->shape[k];
  return L;
}

static size_t chan_of(const chanlayout *L, size_t i) {
  return (i / L->inner) % L->C;
}

/* Per-channel mean and population variance of t (two passes; NaN or Inf stays in its
 * channel's numbers, as the bars then say). mean, var: C each. */
static void chan_moments(const ns_tensor *t, const chanlayout *L, double *mean, double *var,
                         size_t *count) {
  for (size_t c = 0; c < L->C; c++) mean[c] = var[c] = 0, count[c] = 0;
  for (size_t i = 0; i < t->n; i++) {
    size_t c = chan_of(L, i);
    mean[c] += ns_tensor_get(t, i);
    count[c]++;
  }
  for (size_t c = 0; c < L->C; c++) mean[c] = count[c] ? mean[c] / (double)count[c] : NAN;
  for (size_t i = 0; i < t->n; i++) {
    size_t c = chan_of(L, i);
    double d = ns_tensor_get(t, i) - mean[c];
    var[c] += d * d;
  }
  for (size_t c = 0; c < L->C; c++) var[c] = count[c] ? var[c] / (double)count[c] : NAN;
}

/* The channels the histograms show: the first k, with the cursor's channel in the last
 * place when it is not among them. Returns how many (<= k). */
static size_t chan_pick(size_t C, size_t k, size_t cursor, size_t *pick) {
  size_t n = C < k ? C : k;
  for (size_t j = 0; j < n; j++) pick[j] = j;
  if (n > 0 && cursor >= n && cursor < C) pick[n - 1] = cursor;
  return n;
}

/* The flat index of the element the options name (row and column of x read as a matrix
 * of its last axis, clamped); 0 for a vector. */
static size_t cursor_index(const ns_state *s, const ns_panelfig_opts *o) {
  if (s->x->rank < 2) return 0;
  size_t cols = s->x->shape[s->x->rank - 1], rows = s->x->n / cols;
  size_t cr = o->row, cc = o->col;
  if (cr >= rows) cr = rows - 1;
  if (cc >= cols) cc = cols - 1;
  return cr * cols + cc;
}

/* Histograms of x and y per channel, side by side, in rows y0 .. y0+h-1. */
static void fig_chan_hists(const ns_state *s, const ns_result *r, comp *fc, int y0, int iw, int h) {
  chanlayout L = chan_layout(s->x);
  size_t pick[4], k = iw >= 110 ? 4 : 3;
  size_t cur = chan_of(&L, cursor_index(s, fc->o));
  size_t np = chan_pick(L.C, k, cur, pick);
  /* up to FIG_MAXN values of each picked channel, in index order */
  size_t per = FIG_MAXN / (np ? np : 1);
  double *buf = ns_mem_alloc(2 * np * per * sizeof *buf + 1);
  if (!buf) return;
  size_t cnt[4] = {0, 0, 0, 0}, full = 0;
  for (size_t i = 0; i < s->x->n && full < np; i++) {
    size_t c = chan_of(&L, i);
    for (size_t j = 0; j < np; j++)
      if (pick[j] == c && cnt[j] < per) {
        buf[j * per + cnt[j]] = ns_tensor_get(s->x, i);
        buf[(np + j) * per + cnt[j]] = r->norm.y ? ns_tensor_get(r->norm.y, i) : NAN;
        if (++cnt[j] == per) full++;
      }
  }
  char names[4][24];
  plot_set xs[4], ys[4];
  size_t inchan = s->x->n / L.C;
  for (size_t j = 0; j < np; j++) {
    snprintf(names[j], sizeof names[j], "c%zu%s", pick[j] + 1,
             pick[j] == cur && cur >= np - 1 && np < L.C ? " (cursor)" : "");
    xs[j] = (plot_set){buf + j * per, cnt[j], names[j]};
    ys[j] = (plot_set){buf + (np + j) * per, cnt[j], names[j]};
  }
  char shape[64], tx[128], ty[128], more[64] = "";
  ns_shape_format(s->x->rank, s->x->shape, shape, sizeof shape);
  snprintf(tx, sizeof tx, "x %s, channels: axis 2", shape);
  if (np < L.C)
    snprintf(more, sizeof more, ": %zu of %zu channels", np, L.C);
  else
    snprintf(more, sizeof more, " per channel");
  snprintf(ty, sizeof ty, "y = %s(x)%s%s", ns_kind_name(s->kind), more,
           per < inchan ? " (first values)" : "");
  int half = (iw - 2) / 2;
  plot_opts o;
  fig_opts(&o, half, h, fc, tx);
  paint(fc, y0, 0, plot_fig_hist(xs, np, &o, fc->err));
  fig_opts(&o, half, h, fc, ty);
  paint(fc, y0, 2 + half, plot_fig_hist(ys, np, &o, fc->err));
  ns_mem_free(buf);
}

/* Bars of the per-channel mean and variance of x and of y in rows y0 .. y0+h-1: after a
 * normalization along the channels' axes, y's means are 0 and its variances 1 (less
 * eps); normalizing the wrong axes shows as bars that are not. */
static void fig_chan_bars(const ns_state *s, const ns_result *r, comp *fc, int y0, int iw, int h) {
  chanlayout L = chan_layout(s->x);
  size_t C = L.C;
  double *st = ns_mem_alloc(4 * C * sizeof *st);
  size_t *count = ns_mem_alloc(C * sizeof *count);
  char(*lab)[24] = ns_mem_alloc(C * sizeof *lab);
  const char **labs = ns_mem_alloc(C * sizeof *labs);
  if (!st || !count || !lab || !labs || !r->norm.y) {
    ns_mem_free(st), ns_mem_free(count), ns_mem_free(lab), ns_mem_free(labs);
    say(fc, y0, 0, "no output to draw");
    return;
  }
  chan_moments(s->x, &L, st, st + C, count);
  chan_moments(r->norm.y, &L, st + 2 * C, st + 3 * C, count);
  for (size_t c = 0; c < C; c++) {
    snprintf(lab[c], sizeof lab[c], "c%zu", c + 1);
    labs[c] = lab[c];
  }
  /* y's bars on fixed scales, so 0 and 1 read as such: means on [-m, m] with m >= 1,
   * variances on [0, max(2, largest)] */
  double my = 1, vy = 2;
  for (size_t c = 0; c < C; c++) {
    if (isfinite(st[2 * C + c]) && fabs(st[2 * C + c]) > my) my = fabs(st[2 * C + c]);
    if (isfinite(st[3 * C + c]) && st[3 * C + c] > vy) vy = st[3 * C + c];
  }
  static const char *const what[4] = {"mean of x", "var of x", "mean of y (0?)", "var of y (1?)"};
  int q = (iw - 3) / 4;
  for (int k = 0; k < 4; k++) {
    plot_opts o;
    fig_opts(&o, q, h, fc, what[k]);
    o.labels = labs;
    o.nlabels = C;
    if (k >= 2) {
      o.has_range = 1;
      o.lo = k == 2 ? -my : 0;
      o.hi = k == 2 ? my : vy;
    }
    paint(fc, y0, k * (q + 1), plot_fig_bars(st + (size_t)k * C, C, &o, fc->err));
  }
  ns_mem_free(st), ns_mem_free(count), ns_mem_free(lab), ns_mem_free(labs);
}

static void fig_input(const ns_state *s, const ns_result *r, comp *fc, int iw, int ih) {
  int rank = s->x->rank;
  int perchan = rank >= 3;
  int bars = rank >= 3 || (rank == 2 && s->source && s->source[0]);
  /* the bars take what their channels need (title, one row each, the axis, a note), at
   * most half; the histograms the rest */
  int top = ih;
  if (bars) {
    size_t need = chan_layout(s->x).C + 5;
    top = ih - (need < (size_t)(ih / 2) ? (int)need : ih / 2);
  }
  if (perchan) {
    fig_chan_hists(s, r, fc, 0, iw, top);
  } else {
    size_t n = firstn(s->x->n);
    double *xv = ns_mem_alloc(2 * n * sizeof *xv);
    if (!xv) return;
    for (size_t i = 0; i < n; i++) {
      xv[i] = ns_tensor_get(s->x, i);
      xv[n + i] = r->norm.y ? ns_tensor_get(r->norm.y, i) : NAN;
    }
    plot_set sets[2] = {{xv, n, "x"}, {xv + n, n, "y"}};
    plot_opts o;
    char title[96];
    snprintf(title, sizeof title, "x and y = %s(x): histograms%s", ns_kind_name(s->kind),
             n < s->x->n ? " (first 4096 values)" : "");
    fig_opts(&o, iw, top, fc, title);
    paint(fc, 0, 0, plot_fig_hist(sets, 2, &o, fc->err));
    ns_mem_free(xv);
  }
  if (bars) fig_chan_bars(s, r, fc, top, iw, ih - top);
}

static void fig_output(const ns_state *s, const ns_result *r, comp *fc, int iw, int ih) {
  /* the slice's first run: x's leading elements (probe_k entries of its axis, whole) */
  size_t n = firstn(s->x->n), run = r->probe_n;
  if (r->probe_n < s->x->n && s->x->rank > 1) {
    run = r->probe_k;
    for (int a = r->probe_axis + 1; a < s->x->rank; a++) run *= s->x->shape[a];
  }
  if (run && n > run) n = run;
  double *d = ns_mem_alloc(5 * n * sizeof *d);
  if (!d || !r->norm.y || !r->y_shift || !r->y_scale) {
    ns_mem_free(d);
    say(fc, 0, 0, "no output to draw");
    return;
  }
  for (size_t i = 0; i < n; i++) {
    d[i] = (double)(i + 1);
    d[n + i] = ns_tensor_get(s->x, i);
    d[2 * n + i] = r->y_probe ? ns_tensor_get(r->y_probe, i) : ns_tensor_get(r->norm.y, i);
    d[3 * n + i] = ns_tensor_get(r->y_shift, i);
    d[4 * n + i] = ns_tensor_get(r->y_scale, i);
  }
  /* a probe that leaves y as it is (an invariant map) would be drawn exactly over y and
     hide it: it joins y's label instead ("y = y(x+10)"), and y is drawn last, on top */
  double lo = INFINITY, hi = -INFINITY, ds = 0, da = 0;
  for (size_t i = 0; i < n; i++) {
    for (int k = 1; k < 5; k++) lo = fmin(lo, d[k * n + i]), hi = fmax(hi, d[k * n + i]);
    ds = fmax(ds, fabs(d[3 * n + i] - d[2 * n + i]));
    da = fmax(da, fabs(d[4 * n + i] - d[2 * n + i]));
  }
  double res = 1e-3 * (hi > lo ? hi - lo : 1); /* far below one plotted row */
  int same_s = ds <= res, same_a = da <= res;
  char lb[32], la[32], ly[80];
  snprintf(lb, sizeof lb, "y(x%+g)", s->shift);
  snprintf(la, sizeof la, "y(%gx)", s->scale);
  snprintf(ly, sizeof ly, "y%s%s%s%s", same_s ? " = " : "", same_s ? lb : "", same_a ? " = " : "",
           same_a ? la : "");
  plot_xy ser[4];
  size_t ns = 0;
  ser[ns++] = (plot_xy){d, d + n, n, "x"};
  if (!same_s) ser[ns++] = (plot_xy){d, d + 3 * n, n, lb};
  if (!same_a) ser[ns++] = (plot_xy){d, d + 4 * n, n, la};
  ser[ns++] = (plot_xy){d, d + 2 * n, n, ly};
  plot_opts o;
  fig_opts(&o, iw, ih, fc, "x, y and the probes per coordinate");
  o.xlabel = "element";
  o.xint = 1;
  paint(fc, 0, 0, plot_fig_lines(ser, ns, &o, 0, fc->err));
  ns_mem_free(d);
}

/* The eps/scale transition: the RMS of N(a x) (gamma 1, beta 0, train mode) against the
 * input scale a on a log axis, for the state's eps and a second eps 100 times larger (or
 * 1e-5 when the state's is 0). With eps = 0 the amplitude is 1 at every a; with eps > 0
 * it falls once a^2 var(x) drops below eps, near a = sqrt(eps) / std(x). The sweep runs
 * on a leading slice of x (whole entries along axis 1) of at most FIG_MAXN elements, or
 * on the first entry when that is larger (up to NS_EXPLORE_PROBE_LIMIT elements). */
static void fig_amplitude(const ns_state *s, const ns_result *r, comp *fc, int y0, int x0, int fw,
                          int fh) {
  enum { NA = 49 };
  double eps[2] = {s->eps, s->eps > 0 ? 100 * s->eps : 1e-5};
  double sig = r->x_std > 0 ? r->x_std : r->x_rms;
  if (!(sig > 0) || !isfinite(sig)) {
    say(fc, y0, x0, "amplitude against a: x has no spread to scale");
    return;
  }
  /* the a range: two decades either side of both transitions */
  double e_lo = eps[0] > 0 ? eps[0] : eps[1];
  double lo = pow(10, floor(log10(sqrt(e_lo) / sig)) - 2);
  double hi = pow(10, ceil(log10(sqrt(eps[1]) / sig)) + 2);
  size_t rows = s->x->shape[0], per = s->x->n / rows, take = rows;
  if (per > NS_EXPLORE_PROBE_LIMIT) {
    say(fc, y0, x0, "amplitude against a:");
    say(fc, y0 + 1, x0, "each x[i, ...] has %zu elements,", per);
    say(fc, y0 + 2, x0, "drawn up to %d", NS_EXPLORE_PROBE_LIMIT);
    return;
  }
  if (s->x->n > FIG_MAXN) take = FIG_MAXN / per > 0 ? FIG_MAXN / per : 1;
  ns_tensor *xs = take < rows ? ns_op_slice(s->x, 0, 0, take, fc->err) : ns_tensor_copy(s->x);
  ns_tensor *ax = xs ? ns_tensor_copy(xs) : NULL;
  if (!xs || !ax) {
    ns_tensor_free(xs), ns_tensor_free(ax);
    say(fc, y0, x0, "amplitude against a: out of memory");
    return;
  }
  ns_spec spec;
  ns_state_spec(s, &spec);
  spec.gamma = spec.beta = NULL;
  spec.ngamma = spec.nbeta = 0;
  spec.mode = NS_MODE_TRAIN;
  spec.running = NULL;
  double av[NA], amp[2][NA];
  int failed = 0;
  for (int i = 0; i < NA; i++) {
    av[i] = lo * pow(hi / lo, (double)i / (NA - 1));
    for (size_t j = 0; j < xs->n; j++) ns_tensor_set(ax, j, av[i] * ns_tensor_get(xs, j));
    for (int k = 0; k < 2; k++) {
      spec.eps = eps[k];
      ns_norm_result nr = {0};
      char e2[NS_ERRLEN];
      double sq = 0;
      if (ns_normalize(ax, &spec, &nr, e2) == 0) {
        for (size_t j = 0; j < nr.y->n; j++) {
          double y = ns_tensor_get(nr.y, j);
          sq += y * y;
        }
        amp[k][i] = sqrt(sq / (double)nr.y->n);
      } else {
        amp[k][i] = NAN, failed = 1;
        snprintf(fc->err, PLOT_ERRLEN, "%.250s", e2);
      }
      ns_norm_result_free(&nr);
    }
  }
  char l0[48], l1[48], title[128];
  snprintf(l0, sizeof l0, "eps %g (now)", eps[0]);
  snprintf(l1, sizeof l1, s->eps > 0 ? "eps %g (100x)" : "eps %g (default)", eps[1]);
  snprintf(title, sizeof title, "amplitude RMS N(a x) against a%s",
           take < rows ? " (leading rows)" : "");
  plot_xy ser[2] = {{av, amp[0], NA, l0}, {av, amp[1], NA, l1}};
  plot_opts o;
  fig_opts(&o, fw, fh, fc, title);
  o.logx = 1;
  o.xlabel = "input scale a (gamma 1, beta 0)";
  if (failed)
    say(fc, y0, x0, "amplitude: %s", fc->err);
  else
    paint(fc, y0, x0, plot_fig_lines(ser, 2, &o, 1, fc->err));
  ns_tensor_free(xs);
  ns_tensor_free(ax);
}

/* The closed-form spectrum of x under spec (its entries at most ecap) for eps over
 * 10^-12 .. 10^2 and at eps_now, in a half of w x h titled by title (or the short title
 * where the half is narrow). */
static void fig_eps_sweep(const ns_tensor *x, ns_spec spec, size_t ecap, double eps_now,
                          const char *title, const char *short_title, comp *fc, int w, int h) {
  enum { NEPS = 57 };
  ns_eig *e = ns_mem_alloc(ecap * sizeof *e);
  size_t cap = (NEPS + 1) * ecap;
  double *px[3], *py[3];
  size_t np[3] = {0, 0, 0};
  double *buf = ns_mem_alloc(6 * cap * sizeof *buf);
  if (!e || !buf) {
    ns_mem_free(e);
    ns_mem_free(buf);
    say(fc, 0, 0, "the spectrum figure: out of memory");
    return;
  }
  for (int k = 0; k < 3; k++) {
    px[k] = buf + (size_t)(2 * k) * cap;
    py[k] = buf + (size_t)(2 * k + 1) * cap;
  }
  int closed = 1;
  for (int i = 0; i < NEPS && closed; i++) {
    double eps = pow(10, -12 + 14.0 * i / (NEPS - 1));
    spec.eps = eps;
    char e2[NS_ERRLEN];
    int ne = ns_spectrum_closed(x, &spec, e, ecap, e2);
    if (ne <= 0) {
      closed = 0;
      break;
    }
    for (int j = 0; j < ne; j++) {
      int k = (int)e[j].label;
      if (k < 3 && np[k] < cap) {
        px[k][np[k]] = eps;
        py[k][np[k]++] = e[j].value;
      }
    }
  }
  if (!closed) {
    say(fc, 0, 0, "no closed form for this spec");
    say(fc, 1, 0, "(gamma varies within a statistic):");
    say(fc, 2, 0, "see panel 4");
  } else {
    /* the state's eps: its radial and bulk eigenvalues as a series of their own */
    double cx[64], cy[64];
    size_t nc = 0;
    spec.eps = eps_now;
    char e2[NS_ERRLEN];
    int ne = ns_spectrum_closed(x, &spec, e, ecap, e2);
    for (int j = 0; j < ne && nc < 64; j++)
      if (e[j].label != NS_LABEL_ONES && eps_now > 0) {
        cx[nc] = eps_now;
        cy[nc++] = e[j].value;
      }
    char now[48];
    snprintf(now, sizeof now, "eps = %g (now)", eps_now);
    plot_xy ser[4] = {{px[0], py[0], np[0], "ones (0: not on a log axis)"},
                      {px[1], py[1], np[1], "radial eps/s^3"},
                      {px[2], py[2], np[2], "bulk 1/s"},
                      {cx, cy, nc, now}};
    plot_opts o;
    /* the long title where the half has room for it, else the short one (the review's
       replay: at width 80 the title was cut to "(closed fo") */
    fig_opts(&o, w, h, fc, w >= (int)strlen(title) ? title : short_title);
    o.logx = o.logy = 1;
    o.xlabel = "eps";
    paint(fc, 0, 0, plot_fig_lines(ser, 4, &o, 0, fc->err));
  }
  ns_mem_free(e);
  ns_mem_free(buf);
  fc->err[0] = 0;
}

/* The closed-form spectrum against eps (left) and the amplitude against the input scale
 * (right). Above NS_EXPLORE_JAC_LIMIT elements the left half is one statistic's: its
 * closed form is that of its block alone (ns_stat_block), whatever the size of x. */
static void fig_spectrum(const ns_state *s, const ns_result *r, comp *fc, int iw, int ih) {
  size_t n = s->x->n;
  int half = (iw - 2) / 2;
  ns_spec spec;
  ns_state_spec(s, &spec);
  if (n <= NS_EXPLORE_JAC_LIMIT) {
    fig_eps_sweep(s->x, spec, n, s->eps, "eigenvalues of J against eps (closed form)",
                  "eigenvalues of J against eps", fc, half, ih);
  } else {
    /* the statistic the panel's eigenvector check is on (the first one otherwise) */
    size_t stat = r && r->neigchk > 0 ? r->eigchk_stat[0] : 0;
    ns_tensor *xb = NULL;
    ns_spec bs;
    double g = 1;
    char e2[NS_ERRLEN];
    int got = ns_stat_block(s->x, &spec, stat, &xb, &bs, &g, e2);
    if (got == 1) {
      size_t nstat = r ? r->norm.plan.nstat : 0;
      char title[96], short_title[64];
      if (nstat > 1)
        snprintf(title, sizeof title, "statistic %zu of %zu (m %zu): eigenvalues against eps",
                 stat + 1, nstat, xb->n);
      else
        snprintf(title, sizeof title, "eigenvalues of J (m %zu) against eps", xb->n);
      snprintf(short_title, sizeof short_title, "stat %zu/%zu against eps", stat + 1,
               nstat ? nstat : 1);
      fig_eps_sweep(xb, bs, 3, s->eps, title, short_title, fc, half, ih);
    } else {
      say(fc, 0, 0, "x has %zu elements:", n);
      say(fc, 1, 0, "%s", got < 0 ? e2 : "no statistic's block to draw here");
      say(fc, 2, 0, "(eval mode, or gamma varies within one)");
    }
    ns_tensor_free(xb);
  }
  fig_amplitude(s, r, fc, 0, 2 + half, iw - 2 - half, ih);
}

static void fig_batch(const ns_state *s, const ns_result *r, comp *fc, int iw, int ih) {
  (void)s;
  if (!r->bn || !r->ln) {
    say(fc, 0, 0, "no batch result");
    return;
  }
  int half = (iw - 2) / 2;
  char bt[96], lt[96];
  snprintf(bt, sizeof bt, "BN down the columns (T %d, C %d)", s->target, s->companion);
  snprintf(lt, sizeof lt, "LN across the rows");
  plot_opts o;
  fig_opts(&o, half, ih, fc, bt);
  paint(fc, 0, 0, plot_fig_heatmap(r->bn, r->B, r->D, &o, fc->err));
  fig_opts(&o, half, ih, fc, lt);
  paint(fc, 0, 2 + half, plot_fig_heatmap(r->ln, r->B, r->D, &o, fc->err));
}

/* Train-mode against eval-mode outputs on the evaluation batch: each point one value of
 * the batch, at its output under the batch's own statistics (x axis) and under the
 * running statistics of the selected estimator (y axis); the diagonal is where the two
 * modes agree. Each feature's points lie on a line of its own (both outputs are affine
 * in x); the gap to the diagonal is the train/eval discrepancy. */
static void fig_modes(const ns_state *s, const ns_result *r, comp *fc, int y0, int x0, int fw,
                      int fh) {
  int k = r->est_active >= 0 && r->est_active < 3 ? r->est_active : 0;
  size_t n = r->eval_n * r->train_d;
  if (!r->eval_y || !r->est[k].y || n == 0) {
    say(fc, y0, x0, "no evaluation outputs");
    return;
  }
  if (n > FIG_MAXN) n = FIG_MAXN;
  /* the diagonal over the range of both */
  enum { ND = 41 };
  double lo = INFINITY, hi = -INFINITY, dx[ND];
  for (size_t i = 0; i < n; i++) {
    double a = r->eval_y[i], b = r->est[k].y[i];
    if (isfinite(a)) lo = fmin(lo, a), hi = fmax(hi, a);
    if (isfinite(b)) lo = fmin(lo, b), hi = fmax(hi, b);
  }
  size_t nd = 0;
  if (hi >= lo)
    for (int i = 0; i < ND; i++) dx[nd++] = lo + (hi - lo) * i / (ND - 1);
  char name[64], title[128];
  snprintf(name, sizeof name, "eval mode (%s)", r->est[k].name);
  snprintf(title, sizeof title, "y in eval mode against train mode (%zu x %zu)", r->eval_n,
           r->train_d);
  plot_xy ser[2] = {{r->eval_y, r->est[k].y, n, name}, {dx, dx, nd, "equal (no gap)"}};
  plot_opts o;
  fig_opts(&o, fw, fh, fc, title);
  o.xlabel = "train mode (the batch's own statistics)";
  (void)s;
  paint(fc, y0, x0, plot_fig_lines(ser, 2, &o, 0, fc->err));
}

/* Series that would be drawn over one another (the same values to well below a plotted
 * row) become one, labelled "a = b" (lab holds the labels), so none hides another.
 * Returns the number left in s. */
static size_t merge_same(plot_xy *s, size_t n, char (*lab)[96]) {
  double lo = INFINITY, hi = -INFINITY;
  for (size_t k = 0; k < n; k++)
    for (size_t i = 0; i < s[k].n; i++)
      if (isfinite(s[k].y[i])) lo = fmin(lo, s[k].y[i]), hi = fmax(hi, s[k].y[i]);
  double res = 1e-3 * (hi > lo ? hi - lo : 1);
  size_t m = 0;
  for (size_t k = 0; k < n; k++) {
    size_t j = 0;
    for (; j < m; j++) {
      if (s[j].n != s[k].n || s[j].x != s[k].x) continue;
      double dmax = 0;
      for (size_t i = 0; i < s[k].n; i++) dmax = fmax(dmax, fabs(s[k].y[i] - s[j].y[i]));
      if (dmax <= res) break;
    }
    if (j < m) { /* joins series j */
      size_t l = strlen(lab[j]);
      snprintf(lab[j] + l, 96 - l, " = %s", s[k].label);
      continue;
    }
    snprintf(lab[m], 96, "%s", s[k].label);
    s[m] = s[k];
    s[m].label = lab[m];
    m++;
  }
  return m;
}

/* The running mean and variance against the merged batches (left, one above the other)
 * and the two modes' outputs on the evaluation batch (right). */
static void fig_train(const ns_state *s, const ns_result *r, comp *fc, int iw, int ih) {
  size_t nb = (size_t)s->train_batches;
  if (!r->trace_mean[0] || nb == 0) {
    say(fc, 0, 0, "no train/eval result");
    return;
  }
  double *bx = ns_mem_alloc(nb * sizeof *bx);
  if (!bx) return;
  for (size_t b = 0; b < nb; b++) bx[b] = (double)(b + 1);
  int top = (ih - 1) / 2, half = (iw - 2) / 2;
  static const char *const names[3] = {"momentum", "cumulative", "exact"};
  plot_xy ms[3], vs[3];
  for (int k = 0; k < 3; k++) {
    ms[k] = (plot_xy){bx, r->trace_mean[k], nb, names[k]};
    vs[k] = (plot_xy){bx, r->trace_var[k], nb, names[k]};
  }
  char lm[3][96], lv[3][96];
  size_t nm = merge_same(ms, 3, lm), nv = merge_same(vs, 3, lv);
  plot_opts o;
  fig_opts(&o, half, top, fc, "running mean of feature 1");
  o.xint = 1;
  paint(fc, 0, 0, plot_fig_lines(ms, nm, &o, 1, fc->err));
  fig_opts(&o, half, ih - top, fc, "running var of feature 1");
  o.xlabel = "batches merged";
  o.xint = 1;
  paint(fc, top, 0, plot_fig_lines(vs, nv, &o, 1, fc->err));
  ns_mem_free(bx);
  fig_modes(s, r, fc, 0, 2 + half, iw - 2 - half, ih);
}

/* Relative error of each variance algorithm in the state's dtype and acc on x + offset,
 * for offsets 1 .. 1e12 (the variance does not change with the offset; the error does). */
static void fig_precision(const ns_state *s, const ns_result *r, comp *fc, int iw, int ih) {
  (void)r;
  enum { NOFF = 25 };
  size_t n = firstn(s->x->n);
  double *xv = ns_mem_alloc(2 * n * sizeof *xv);
  double off[NOFF], rel[3][NOFF];
  if (!xv) return;
  for (size_t i = 0; i < n; i++) xv[i] = ns_tensor_get(s->x, i);
  ns_spec spec;
  ns_state_spec(s, &spec);
  ns_dtype acc = ns_spec_acc(&spec);
  ns_moments m;
  ns_moments_compute(xv, n, 1, NS_FP64, NS_FP64, NS_ALGO_TWOPASS, &m);
  double ref = ns_moments_var(&m, 0);
  for (int i = 0; i < NOFF; i++) {
    off[i] = pow(10, 12.0 * i / (NOFF - 1));
    for (size_t j = 0; j < n; j++) xv[n + j] = xv[j] + off[i];
    for (int a = 0; a < 3; a++) {
      ns_moments_compute(xv + n, n, 1, s->dtype, acc, (ns_algo)a, &m);
      double e = fabs(ns_moments_var(&m, 0) - ref) / (ref != 0 ? fabs(ref) : 1);
      /* an exact result is drawn at the dtype's epsilon: a log axis has no 0 */
      rel[a][i] = e > 0 ? e : ns_dtype_eps(acc) / 2;
    }
  }
  plot_xy ser[3];
  for (int a = 0; a < 3; a++) ser[a] = (plot_xy){off, rel[a], NOFF, ns_algo_name((ns_algo)a)};
  char title[128];
  snprintf(title, sizeof title, "relative error of var(x + offset) in %s, acc %s",
           ns_dtype_name(s->dtype), ns_dtype_name(acc));
  plot_opts o;
  fig_opts(&o, iw, ih, fc, title);
  o.logx = o.logy = 1;
  o.xlabel = "offset added to x";
  paint(fc, 0, 0, plot_fig_lines(ser, 3, &o, 1, fc->err));
  ns_mem_free(xv);
}

/* Each panel's figure, from NS_PANELS. */
typedef void panel_fig(const ns_state *s, const ns_result *r, comp *fc, int iw, int ih);
#define NS_PANEL_FIG_(ID, name, figure) [NS_PANEL_##ID] = figure,
static panel_fig *const panel_figs[NS_PANEL_COUNT] = {NS_PANELS(NS_PANEL_FIG_)};
#undef NS_PANEL_FIG_

plot_canvas *ns_panel_figure(const ns_state *s, const ns_result *r, const ns_panelfig_opts *o,
                             char *err) {
  if (!s || !r || !o || !s->x) {
    if (err) snprintf(err, NS_ERRLEN, "panel figure: no state, result or options");
    return NULL;
  }
  if ((unsigned)o->panel >= NS_PANEL_COUNT) {
    snprintf(err, NS_ERRLEN, "panel figure: unknown panel %d", (int)o->panel);
    return NULL;
  }
  if (o->width < NS_PANELFIG_MIN_W || o->height < NS_PANELFIG_MIN_H || o->width > 100000 ||
      o->height > 100000) {
    snprintf(err, NS_ERRLEN, "panel figure: the box must be at least %dx%d, got %dx%d",
             NS_PANELFIG_MIN_W, NS_PANELFIG_MIN_H, o->width, o->height);
    return NULL;
  }
  if ((unsigned)o->glyphs > PLOT_GLYPHS_ASCII) {
    snprintf(err, NS_ERRLEN, "panel figure: unknown glyph set %d", (int)o->glyphs);
    return NULL;
  }
  comp fc = {NULL, o, ""};
  fc.c = plot_canvas_new(o->width, o->height, o->glyphs == PLOT_GLYPHS_ASCII);
  if (!fc.c) {
    snprintf(err, NS_ERRLEN, "panel figure: out of memory");
    return NULL;
  }
  fc.c->color = o->color;
  panel_figs[o->panel](s, r, &fc, o->width, o->height); /* o->panel checked above */
  return fc.c;
}
