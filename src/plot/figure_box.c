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

/* A group's label: its own, the options' labels, or its number. */
static const char *group_label(const fig *f, const plot_set *g, size_t k, char *lab, size_t len) {
  const char *s = fig_label(f, (int)k, g[k].label, lab, len);
  if (s == lab) snprintf(lab, len, "%zu", k + 1);
  return s;
}

/* Copies the values the axis can show into p->v (counting the others in left[]: NaN,
 * infinite, <= 0 on a log axis, outside the range), sorts them and finds the quartiles
 * and the whiskers. -1 when out of memory. */
static int group_fill(group *p, const plot_set *s, const plot_opts *o, size_t left[4]) {
  p->v = malloc((s->n ? s->n : 1) * sizeof(double));
  if (!p->v) return -1;
  for (size_t i = 0; i < s->n; i++) {
    double x = s->v[i];
    if (isnan(x))
      left[0]++;
    else if (isinf(x))
      left[1]++;
    else if (o->logx && x <= 0)
      left[2]++;
    else if (o->has_range && (x < o->lo || x > o->hi))
      left[3]++;
    else
      p->v[p->n++] = x;
  }
  if (!p->n) return 0;
  qsort(p->v, p->n, sizeof(double), cmp);
  p->q1 = plot_quantile(p->v, p->n, 0.25);
  p->med = plot_quantile(p->v, p->n, 0.5);
  p->q3 = plot_quantile(p->v, p->n, 0.75);
  double iqr = p->q3 - p->q1, a = p->q1 - 1.5 * iqr, b = p->q3 + 1.5 * iqr;
  p->wlo = p->q1, p->whi = p->q3;
  for (size_t i = 0; i < p->n; i++) {
    if (p->v[i] >= a && p->v[i] < p->wlo) p->wlo = p->v[i];
    if (p->v[i] <= b && p->v[i] > p->whi) p->whi = p->v[i];
  }
  return 0;
}

/* Whether the reference line is drawn, with a note when it is not; a drawn line widens
 * an automatic axis ([*lo, *hi]) to show it. */
static int ref_shown(fig *f, const plot_opts *o, int keep, double *lo, double *hi) {
  if (!o->has_ref) return 0;
  if (!isfinite(o->ref)) {
    fig_note(f, "the reference line (%g) left out: not finite", o->ref);
    return 0;
  }
  if (o->logx && o->ref <= 0) {
    fig_note(f, "the reference line (%g) left out: <= 0 on a log axis", o->ref);
    return 0;
  }
  if (keep && (o->ref < *lo || o->ref > *hi)) {
    fig_note(f, "the reference line (%g) lies outside the range", o->ref);
    return 0;
  }
  if (!keep) {
    if (o->ref < *lo) *lo = o->ref;
    if (o->ref > *hi) *hi = o->ref;
  }
  return 1;
}

/* A range of one value becomes a visible one around it. */
static void widen_flat(int logx, double *lo, double *hi) {
  if (logx) {
    *lo /= 3, *hi *= 3;
  } else {
    double d = *lo == 0 ? 1 : fabs(*lo) * 0.5;
    *lo -= d, *hi += d;
  }
}

/* One group's box on its row, x0 the column of the axis' first cell. */
static void draw_box(fig *f, const fig_frame *fr, const group *p, int x0, int row, int ref) {
  const int ascii = f->ascii;
  /* outliers first: where one shares a cell with the whiskers, the box wins */
  for (size_t i = 0; i < p->n; i++)
    if (p->v[i] < p->wlo || p->v[i] > p->whi)
      plot_put(f->c, x0 + fig_px(fr, p->v[i]), row, ascii ? 'o' : 0x2022, PLOT_S_MARK);
  int a = fig_px(fr, p->wlo), b = fig_px(fr, p->whi);
  int q1 = fig_px(fr, p->q1), q3 = fig_px(fr, p->q3), m = fig_px(fr, p->med);
  for (int q = a; q <= b; q++) plot_put(f->c, x0 + q, row, ascii ? '-' : 0x2500, PLOT_S_SERIES1);
  plot_put(f->c, x0 + a, row, ascii ? '|' : 0x251c, PLOT_S_SERIES1);
  plot_put(f->c, x0 + b, row, ascii ? '|' : 0x2524, PLOT_S_SERIES1);
  for (int q = q1; q <= q3; q++) plot_put(f->c, x0 + q, row, ascii ? '=' : 0x2592, PLOT_S_SERIES1);
  if (ref) {
    int at = x0 + fig_px(fr, f->o->ref);
    if (at >= f->c->w || f->c->cells[(size_t)row * (size_t)f->c->w + (size_t)at].ch !=
                             (uint32_t)(ascii ? 'o' : 0x2022))
      plot_put(f->c, at, row, ascii ? ':' : 0x250a, PLOT_S_GOOD);
  }
  plot_put(f->c, x0 + m, row, ascii ? '#' : 0x2588, PLOT_S_SERIES0);
}

/* The value axis on row axrow, B cells from x0, its tick labels on the row below
 * (a label that would touch the one before it is left out). */
static void draw_axis(fig *f, const fig_frame *fr, int x0, int B, int axrow) {
  const int ascii = f->ascii;
  for (int q = 0; q < B; q++) plot_put(f->c, x0 + q, axrow, ascii ? '-' : 0x2500, PLOT_S_AXIS);
  int lastend = -1;
  for (int i = 0; i < fr->ax.n; i++) {
    int col = x0 + fig_px(fr, fr->ax.v[i]);
    plot_put(f->c, col, axrow, ascii ? '+' : 0x252c, PLOT_S_AXIS);
    int len = (int)strlen(fr->ax.label[i]);
    int start = col - len / 2;
    if (start < 0) start = 0;
    if (start + len > f->W) start = f->W - len;
    if (lastend >= 0 && start <= lastend + 1) continue;
    plot_text(f->c, start, axrow + 1, len, fr->ax.label[i], PLOT_S_LABEL);
    lastend = start + len - 1;
  }
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
  size_t left[4] = {0}, good = 0;
  double lo = INFINITY, hi = -INFINITY;
  for (size_t k = 0; k < ng; k++) {
    if (group_fill(&gr[k], &g[k], o, left) < 0) goto oom;
    good += gr[k].n;
    if (!gr[k].n) continue;
    if (gr[k].v[0] < lo) lo = gr[k].v[0];
    if (gr[k].v[gr[k].n - 1] > hi) hi = gr[k].v[gr[k].n - 1];
  }
  fig_note_left_out(&f, left[0], left[1], left[2], left[3], "values");
  plot_canvas *res;
  if (good == 0) {
    res = fig_empty(&f, ng == 0 ? "nothing to plot: no groups" : "nothing to plot: no values");
    goto done;
  }
  int keep = o->has_range;
  if (keep) lo = o->lo, hi = o->hi;
  int ref = ref_shown(&f, o, keep, &lo, &hi);
  if (!(hi > lo)) widen_flat(o->logx, &lo, &hi);
  int L = 1;
  char lab[32];
  for (size_t k = 0; k < ng; k++) {
    int len = ncells(group_label(&f, g, k, lab, sizeof lab));
    if (len > L) L = len;
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
    const char *s = group_label(&f, g, k, lab, sizeof lab);
    int len = ncells(s);
    plot_text(f.c, len < L ? L - len : 0, row, L, s, PLOT_S_LABEL);
    if (gr[k].n)
      draw_box(&f, &fr, &gr[k], x0, row, ref);
    else
      plot_text(f.c, x0, row, B, "(no values)", PLOT_S_DIM);
  }
  draw_axis(&f, &fr, x0, B, top + (int)shown);
  int y = top + (int)shown + 2;
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
