/* figure.c: the figure view: the focused panel's figure, drawn large with the plot layer
 * (plot/figure.h) and redrawn from the state and result at every change, like a panel.
 *
 *   Input      histograms of x and y
 *   Output     x, y, y(x+b) and y(ax) per coordinate
 *   Spectrum   the closed-form eigenvalues against eps (log axes), the current eps marked
 *   Batch      batch-norm and layer-norm heatmaps of the batch, side by side
 *   Train/eval the running mean and variance against the number of merged batches
 *   Precision  the variance by raw moments, two-pass and Welford against an offset added
 *              to x (log axis), relative to the exact variance
 * Settings has no figure of its own; it shows the output's. Nothing here changes the state
 * or the result: the sweeps (eps, offset) are computed into local arrays.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/moments.h"
#include "core/spectrum.h"
#include "plot/figure.h"
#include "tui/screen.h"

/* At most this many elements of x go into a figure (the first ones). */
#define FIG_MAXN 4096

void tui_fig_opts(plot_opts *o, int w, int h, const tui_view *v, const char *title) {
  plot_opts_init(o);
  o->width = w;
  o->height = h;
  o->glyphs = v->ascii ? PLOT_GLYPHS_ASCII : PLOT_GLYPHS_BLOCKS;
  o->color = v->colors > 0;
  o->title = title;
}

void tui_fig_paint(WINDOW *w, int y, int x, plot_canvas *c, const char *err) {
  if (!c) {
    tui_puts(w, y, x, PLOT_S_MARK, err[0] ? err : "no figure");
    return;
  }
  tui_blit(w, y, x, c);
  plot_canvas_free(c);
}

static size_t firstn(size_t n) {
  return n < FIG_MAXN ? n : FIG_MAXN;
}

static void fig_input(const ns_state *s, const ns_result *r, WINDOW *w, int iw, int ih,
                      const tui_view *v, char *err) {
  size_t n = firstn(s->x->n);
  double *xv = malloc(2 * n * sizeof *xv);
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
  tui_fig_opts(&o, iw, ih, v, title);
  tui_fig_paint(w, 1, 1, plot_fig_hist(sets, 2, &o, err), err);
  free(xv);
}

static void fig_output(const ns_state *s, const ns_result *r, WINDOW *w, int iw, int ih,
                       const tui_view *v, char *err) {
  size_t n = firstn(s->x->n);
  if (r->probe_n && n > r->probe_n) n = r->probe_n;
  double *d = malloc(5 * n * sizeof *d);
  if (!d || !r->norm.y || !r->y_shift || !r->y_scale) {
    free(d);
    tui_puts(w, 1, 1, PLOT_S_MARK, "no output to draw");
    return;
  }
  for (size_t i = 0; i < n; i++) {
    d[i] = (double)(i + 1);
    d[n + i] = ns_tensor_get(s->x, i);
    d[2 * n + i] = r->y_probe ? ns_tensor_get(r->y_probe, i) : ns_tensor_get(r->norm.y, i);
    d[3 * n + i] = ns_tensor_get(r->y_shift, i);
    d[4 * n + i] = ns_tensor_get(r->y_scale, i);
  }
  char lb[32], la[32];
  snprintf(lb, sizeof lb, "y(x%+g)", s->shift);
  snprintf(la, sizeof la, "y(%gx)", s->scale);
  plot_xy ser[4] = {
      {d, d + n, n, "x"}, {d, d + 2 * n, n, "y"}, {d, d + 3 * n, n, lb}, {d, d + 4 * n, n, la}};
  plot_opts o;
  tui_fig_opts(&o, iw, ih, v, "x, y and the probes per coordinate");
  o.xlabel = "element";
  tui_fig_paint(w, 1, 1, plot_fig_lines(ser, 4, &o, 0, err), err);
  free(d);
}

/* The closed-form spectrum for eps over 10^-12 .. 10^2 and at the state's eps. */
static void fig_spectrum(const ns_state *s, const ns_result *r, WINDOW *w, int iw, int ih,
                         const tui_view *v, char *err) {
  (void)r;
  enum { NEPS = 57 };
  size_t n = s->x->n;
  if (n > NS_EXPLORE_JAC_LIMIT) {
    tui_printf(w, 1, 1, PLOT_S_MARK, "x has %zu elements: the spectrum is drawn up to %d", n,
               NS_EXPLORE_JAC_LIMIT);
    return;
  }
  ns_spec spec;
  ns_state_spec(s, &spec);
  ns_eig *e = malloc(n * sizeof *e);
  size_t cap = (NEPS + 1) * n;
  double *px[3], *py[3];
  size_t np[3] = {0, 0, 0};
  double *buf = malloc(6 * cap * sizeof *buf);
  if (!e || !buf) {
    free(e);
    free(buf);
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
    int ne = ns_spectrum_closed(s->x, &spec, e, n, e2);
    if (ne <= 0) {
      closed = 0;
      break;
    }
    for (int j = 0; j < ne; j++) {
      int k = (int)e[j].label;
      if (np[k] < cap) {
        px[k][np[k]] = eps;
        py[k][np[k]++] = e[j].value;
      }
    }
  }
  if (!closed) {
    tui_puts(w, 1, 1, PLOT_S_MARK,
             "no closed form for this spec (gamma varies within a statistic): see panel 4");
  } else {
    /* the state's eps: its radial and bulk eigenvalues as a series of their own */
    double cx[64], cy[64];
    size_t nc = 0;
    spec.eps = s->eps;
    char e2[NS_ERRLEN];
    int ne = ns_spectrum_closed(s->x, &spec, e, n, e2);
    for (int j = 0; j < ne && nc < 64; j++)
      if (e[j].label != NS_LABEL_ONES && s->eps > 0) {
        cx[nc] = s->eps;
        cy[nc++] = e[j].value;
      }
    char now[48];
    snprintf(now, sizeof now, "eps = %g (now)", s->eps);
    plot_xy ser[4] = {{px[0], py[0], np[0], "ones (0: not on a log axis)"},
                      {px[1], py[1], np[1], "radial eps/s^3"},
                      {px[2], py[2], np[2], "bulk 1/s"},
                      {cx, cy, nc, now}};
    plot_opts o;
    tui_fig_opts(&o, iw, ih, v, "eigenvalues of J against eps (closed form, exact map)");
    o.logx = o.logy = 1;
    o.xlabel = "eps";
    tui_fig_paint(w, 1, 1, plot_fig_lines(ser, 4, &o, 0, err), err);
  }
  free(e);
  free(buf);
}

static void fig_batch(const ns_state *s, const ns_result *r, WINDOW *w, int iw, int ih,
                      const tui_view *v, char *err) {
  (void)s;
  if (!r->bn || !r->ln) {
    tui_puts(w, 1, 1, PLOT_S_MARK, "no batch result");
    return;
  }
  int half = (iw - 2) / 2;
  char bt[96], lt[96];
  snprintf(bt, sizeof bt, "BN down the columns (T %d, C %d)", s->target, s->companion);
  snprintf(lt, sizeof lt, "LN across the rows");
  plot_opts o;
  tui_fig_opts(&o, half, ih, v, bt);
  tui_fig_paint(w, 1, 1, plot_fig_heatmap(r->bn, r->B, r->D, &o, err), err);
  tui_fig_opts(&o, half, ih, v, lt);
  tui_fig_paint(w, 1, 3 + half, plot_fig_heatmap(r->ln, r->B, r->D, &o, err), err);
}

static void fig_train(const ns_state *s, const ns_result *r, WINDOW *w, int iw, int ih,
                      const tui_view *v, char *err) {
  size_t nb = (size_t)s->train_batches;
  if (!r->trace_mean[0] || nb == 0) {
    tui_puts(w, 1, 1, PLOT_S_MARK, "no train/eval result");
    return;
  }
  double *bx = malloc(nb * sizeof *bx);
  if (!bx) return;
  for (size_t b = 0; b < nb; b++) bx[b] = (double)(b + 1);
  int top = (ih - 1) / 2;
  static const char *const names[3] = {"momentum", "cumulative", "exact"};
  plot_xy ms[3], vs[3];
  for (int k = 0; k < 3; k++) {
    ms[k] = (plot_xy){bx, r->trace_mean[k], nb, names[k]};
    vs[k] = (plot_xy){bx, r->trace_var[k], nb, names[k]};
  }
  plot_opts o;
  tui_fig_opts(&o, iw, top, v, "running mean (feature 1) against merged batches");
  tui_fig_paint(w, 1, 1, plot_fig_lines(ms, 3, &o, 1, err), err);
  tui_fig_opts(&o, iw, ih - top, v, "running var (feature 1) against merged batches");
  o.xlabel = "batches merged";
  tui_fig_paint(w, 1 + top, 1, plot_fig_lines(vs, 3, &o, 1, err), err);
  free(bx);
}

/* Relative error of each variance algorithm in the state's dtype and acc on x + offset,
 * for offsets 1 .. 1e12 (the variance does not change with the offset; the error does). */
static void fig_precision(const ns_state *s, const ns_result *r, WINDOW *w, int iw, int ih,
                          const tui_view *v, char *err) {
  (void)r;
  enum { NOFF = 25 };
  size_t n = firstn(s->x->n);
  double *xv = malloc(2 * n * sizeof *xv);
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
  tui_fig_opts(&o, iw, ih, v, title);
  o.logx = o.logy = 1;
  o.xlabel = "offset added to x";
  tui_fig_paint(w, 1, 1, plot_fig_lines(ser, 3, &o, 1, err), err);
  free(xv);
}

void tui_draw_figure(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v) {
  tui_panel p = v->vs->focus;
  if (p == TUI_PANEL_SETTINGS) p = TUI_PANEL_OUTPUT;
  char title[96];
  snprintf(title, sizeof title, "Figure: %s  (live; f or Esc closes, Tab the next panel's)",
           tui_panel_title(p));
  tui_view fv = *v;
  fv.focused = 1;
  tui_frame(w, title, &fv);
  int iw = tui_iw(w), ih = tui_ih(w);
  char err[PLOT_ERRLEN] = "";
  switch (p) {
  case TUI_PANEL_INPUT:
    fig_input(s, r, w, iw, ih, v, err);
    break;
  case TUI_PANEL_SPECTRUM:
    fig_spectrum(s, r, w, iw, ih, v, err);
    break;
  case TUI_PANEL_BATCH:
    fig_batch(s, r, w, iw, ih, v, err);
    break;
  case TUI_PANEL_TRAIN:
    fig_train(s, r, w, iw, ih, v, err);
    break;
  case TUI_PANEL_PRECISION:
    fig_precision(s, r, w, iw, ih, v, err);
    break;
  default:
    fig_output(s, r, w, iw, ih, v, err);
    break;
  }
}
