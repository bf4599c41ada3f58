/* figure_box.c: horizontal box plots, one group per row on a common value axis.
 *
 * Quartiles are numpy's default (linear between order statistics); the whiskers
 * reach the most extreme values within 1.5 IQR of the box (Tukey, as matplotlib
 * draws them); values beyond are outliers, each marked where it falls. An optional
 * reference line (o->ref) crosses every row at one value, drawn over the whiskers and
 * quartiles and under the median and the outliers, so both stay readable where they
 * meet it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot/figure_priv.h"

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct {
  double *v; /* sorted values that the axis can show */
  size_t n;
  double q1, med, q3, wlo, whi;
} group;

static int ncells(const char *s) {
  int n = 0;
  for (uint32_t cp; *s; n++) s += plot_utf8_decode(s, &cp);
  return n;
}

plot_canvas *plot_fig_box(const plot_set *g, size_t ng, const plot_opts *o, char *err) {
  for (size_t k = 0; k < ng; k++)
    if (g[k].n > 0 && !g[k].v) {
      if (err) snprintf(err, PLOT_ERRLEN, "group %zu has %zu values but no array", k + 1, g[k].n);
      return NULL;
    }
  fig f;
  if (fig_start(&f, o, err) < 0) return NULL;
  group *gr = calloc(ng ? ng : 1, sizeof *gr);
  if (!gr) goto oom;
  size_t nan = 0, inf = 0, nonpos = 0, outside = 0, good = 0;
  double lo = INFINITY, hi = -INFINITY;
  for (size_t k = 0; k < ng; k++) {
    gr[k].v = malloc((g[k].n ? g[k].n : 1) * sizeof(double));
    if (!gr[k].v) goto oom;
    for (size_t i = 0; i < g[k].n; i++) {
      double x = g[k].v[i];
      if (isnan(x))
        nan++;
      else if (isinf(x))
        inf++;
      else if (o->logx && x <= 0)
        nonpos++;
      else if (o->has_range && (x < o->lo || x > o->hi))
        outside++;
      else
        gr[k].v[gr[k].n++] = x;
    }
    good += gr[k].n;
    if (!gr[k].n) continue;
    qsort(gr[k].v, gr[k].n, sizeof(double), cmp);
    group *p = &gr[k];
    p->q1 = plot_quantile(p->v, p->n, 0.25);
    p->med = plot_quantile(p->v, p->n, 0.5);
    p->q3 = plot_quantile(p->v, p->n, 0.75);
    double iqr = p->q3 - p->q1, a = p->q1 - 1.5 * iqr, b = p->q3 + 1.5 * iqr;
    p->wlo = p->q1, p->whi = p->q3;
    for (size_t i = 0; i < p->n; i++) {
      if (p->v[i] >= a && p->v[i] < p->wlo) p->wlo = p->v[i];
      if (p->v[i] <= b && p->v[i] > p->whi) p->whi = p->v[i];
    }
    if (p->v[0] < lo) lo = p->v[0];
    if (p->v[p->n - 1] > hi) hi = p->v[p->n - 1];
  }
  fig_note_left_out(&f, nan, inf, nonpos, outside, "values");
  plot_canvas *res;
  if (good == 0) {
    res = fig_empty(&f, ng == 0 ? "nothing to plot: no groups" : "nothing to plot: no values");
    goto done;
  }
  int keep = o->has_range;
  if (keep) lo = o->lo, hi = o->hi;
  /* the reference line, when the axis can show it (it widens an automatic axis) */
  int ref = 0;
  if (o->has_ref) {
    if (!isfinite(o->ref))
      fig_note(&f, "the reference line (%g) left out: not finite", o->ref);
    else if (o->logx && o->ref <= 0)
      fig_note(&f, "the reference line (%g) left out: <= 0 on a log axis", o->ref);
    else if (keep && (o->ref < lo || o->ref > hi))
      fig_note(&f, "the reference line (%g) lies outside the range", o->ref);
    else
      ref = 1;
    if (ref && !keep) {
      if (o->ref < lo) lo = o->ref;
      if (o->ref > hi) hi = o->ref;
    }
  }
  if (!(hi > lo)) {
    if (o->logx)
      lo /= 3, hi *= 3;
    else {
      double d = lo == 0 ? 1 : fabs(lo) * 0.5;
      lo -= d, hi += d;
    }
  }
  int L = 1;
  char lab[32];
  for (size_t k = 0; k < ng; k++) {
    const char *s = fig_label(&f, (int)k, g[k].label, lab, sizeof lab);
    if (s == lab) snprintf(lab, sizeof lab, "%zu", k + 1);
    if (ncells(s) > L) L = ncells(s);
  }
  if (L > f.W / 3) L = f.W / 3;
  int B = f.W - L - 1;
  const int ascii = f.ascii;
  char refname[96];
  if (o->ref_label && *o->ref_label)
    snprintf(refname, sizeof refname, "%s", o->ref_label);
  else
    snprintf(refname, sizeof refname, "reference %g", o->ref);
  fig_entry e[5] = {{ascii ? "|-|" : "\u251c\u2500\u2524", "whiskers (1.5 IQR)", PLOT_S_SERIES1},
                    {ascii ? "=" : "\u2592", "quartiles", PLOT_S_SERIES1},
                    {ascii ? "#" : "\u2588", "median", PLOT_S_SERIES0},
                    {ascii ? "o" : "\u2022", "outliers", PLOT_S_MARK},
                    {ascii ? ":" : "\u250a", refname, PLOT_S_GOOD}};
  int ne = ref ? 5 : 4;
  int legend = o->legend != 0;
  int lrows = legend ? fig_legend_rows(&f, e, ne) : 0;
  int top = fig_heading(&f, 1);
  int xl = o->xlabel && *o->xlabel ? 1 : 0;
  if (B < 4 || top + 3 + xl + lrows > f.H) {
    char why[96];
    snprintf(why, sizeof why, "too small to draw: %d x %d cells", f.W, f.H);
    res = fig_empty(&f, why);
    goto done;
  }
  size_t shown = fig_fit(&f, top + 2 + xl + lrows, ng, "groups");
  fig_frame fr; /* only the x axis and the mapping are used */
  memset(&fr, 0, sizeof fr);
  fr.pw = B, fr.ph = 1, fr.sx = 1, fr.sy = 1, fr.axis = L;
  plot_axis_make(&fr.ax, lo, hi, o->logx, B / 10 + 1, keep);
  plot_axis_make(&fr.ay, 0, 1, 0, 2, 1);
  int x0 = L + 1;
  for (size_t k = 0; k < shown; k++) {
    int row = top + (int)k;
    const char *s = fig_label(&f, (int)k, g[k].label, lab, sizeof lab);
    if (s == lab) snprintf(lab, sizeof lab, "%zu", k + 1);
    int len = ncells(s);
    plot_text(f.c, len < L ? L - len : 0, row, L, s, PLOT_S_LABEL);
    const group *p = &gr[k];
    if (!p->n) {
      plot_text(f.c, x0, row, B, "(no values)", PLOT_S_DIM);
      continue;
    }
    /* outliers first: where one shares a cell with the whiskers, the box wins */
    for (size_t i = 0; i < p->n; i++)
      if (p->v[i] < p->wlo || p->v[i] > p->whi)
        plot_put(f.c, x0 + fig_px(&fr, p->v[i]), row, ascii ? 'o' : 0x2022, PLOT_S_MARK);
    int a = fig_px(&fr, p->wlo), b = fig_px(&fr, p->whi);
    int q1 = fig_px(&fr, p->q1), q3 = fig_px(&fr, p->q3), m = fig_px(&fr, p->med);
    for (int q = a; q <= b; q++) plot_put(f.c, x0 + q, row, ascii ? '-' : 0x2500, PLOT_S_SERIES1);
    plot_put(f.c, x0 + a, row, ascii ? '|' : 0x251c, PLOT_S_SERIES1);
    plot_put(f.c, x0 + b, row, ascii ? '|' : 0x2524, PLOT_S_SERIES1);
    for (int q = q1; q <= q3; q++) plot_put(f.c, x0 + q, row, ascii ? '=' : 0x2592, PLOT_S_SERIES1);
    if (ref) {
      int rc = fig_px(&fr, o->ref);
      int at = x0 + rc;
      if (at >= f.c->w || f.c->cells[(size_t)row * (size_t)f.c->w + (size_t)at].ch !=
                              (uint32_t)(ascii ? 'o' : 0x2022))
        plot_put(f.c, x0 + rc, row, ascii ? ':' : 0x250a, PLOT_S_GOOD);
    }
    plot_put(f.c, x0 + m, row, ascii ? '#' : 0x2588, PLOT_S_SERIES0);
  }
  int axrow = top + (int)shown;
  for (int q = 0; q < B; q++) plot_put(f.c, x0 + q, axrow, ascii ? '-' : 0x2500, PLOT_S_AXIS);
  int lastend = -1;
  for (int i = 0; i < fr.ax.n; i++) {
    int col = x0 + fig_px(&fr, fr.ax.v[i]);
    plot_put(f.c, col, axrow, ascii ? '+' : 0x252c, PLOT_S_AXIS);
    int len = (int)strlen(fr.ax.label[i]);
    int start = col - len / 2;
    if (start < 0) start = 0;
    if (start + len > f.W) start = f.W - len;
    if (lastend >= 0 && start <= lastend + 1) continue;
    plot_text(f.c, start, axrow + 1, len, fr.ax.label[i], PLOT_S_LABEL);
    lastend = start + len - 1;
  }
  int y = axrow + 2;
  if (xl) {
    int len = ncells(o->xlabel);
    int x = x0 + (B - len) / 2;
    if (x < 0 || x + len > f.W) x = len < f.W ? f.W - len : 0;
    plot_text(f.c, x, y++, f.W - x, o->xlabel, PLOT_S_LABEL);
  }
  if (legend) y += fig_legend(&f, y, e, ne);
  y = fig_notes(&f, y);
  res = fig_finish(&f, y);
done:
  for (size_t k = 0; k < ng; k++) free(gr[k].v);
  free(gr);
  return res;
oom:
  if (gr)
    for (size_t k = 0; k < ng; k++) free(gr[k].v);
  free(gr);
  plot_canvas_free(f.c);
  if (err) snprintf(err, PLOT_ERRLEN, "out of memory");
  return NULL;
}
