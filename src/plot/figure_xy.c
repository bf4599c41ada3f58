/* figure_xy.c: line and scatter plots of several series with round ticks, log axes,
 * a marker per series (so they differ without colour) and a legend.
 *
 * Resolution: blocks joins points at half-row resolution (upper and lower half
 * blocks), braille at 2 x 4 dots per cell, ASCII at one cell, drawn with the series'
 * marker. Markers sit on the data points when there are few enough of them to read
 * (at most one per three columns), else, with several series, on every point at least
 * eight columns after the series' previous marker. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot/figure_priv.h"

/* Braille dot bit for sub-cell (dx 0..1, dy 0..3). */
static const uint8_t dotbit[4][2] = {{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20}, {0x40, 0x80}};

typedef struct {
  fig *f;
  fig_frame *fr;
  uint8_t *mask; /* per plot cell: braille bits, or 1 top / 2 bottom half */
  int *style;
} dots;

static void dot(dots *d, int px, int py, int k) {
  const fig_frame *fr = d->fr;
  int cx = px / fr->sx, cy = py / fr->sy;
  if (cx < 0 || cy < 0 || cx >= fr->pw || cy >= fr->ph) return;
  if (d->f->ascii) {
    plot_put(d->f->c, fr->axis + 1 + cx, fr->top + cy, fig_marker_cp(d->f, k), fig_series_style(k));
    return;
  }
  size_t i = (size_t)cy * (size_t)fr->pw + (size_t)cx;
  d->mask[i] |= d->f->braille ? dotbit[py % 4][px % 2] : (uint8_t)(py % 2 ? 2 : 1);
  d->style[i] = fig_series_style(k);
}

/* Sub-cell points from (x0, y0) to (x1, y1), both ends included. */
static void segment(dots *d, int x0, int y0, int x1, int y1, int k) {
  int steps = abs(x1 - x0) > abs(y1 - y0) ? abs(x1 - x0) : abs(y1 - y0);
  if (steps == 0) {
    dot(d, x0, y0, k);
    return;
  }
  for (int j = 0; j <= steps; j++)
    dot(d, x0 + (int)lround((double)(x1 - x0) * j / steps),
        y0 + (int)lround((double)(y1 - y0) * j / steps), k);
}

/* A point that the axes can show (finite, positive on a log axis, inside a given range). */
typedef enum { P_OK, P_NAN, P_INF, P_NONPOS, P_OUTSIDE } pclass;

static pclass classify(const plot_opts *o, double x, double y) {
  if (isnan(x) || isnan(y)) return P_NAN;
  if (isinf(x) || isinf(y)) return P_INF;
  if ((o->logx && x <= 0) || (o->logy && y <= 0)) return P_NONPOS;
  if (o->has_range && (y < o->lo || y > o->hi)) return P_OUTSIDE;
  return P_OK;
}

/* Widens a constant range so the axis has a length. */
static void widen(double *lo, double *hi, int log) {
  if (*hi > *lo) return;
  double v = *lo;
  if (log) {
    *lo = v / 3, *hi = v * 3;
  } else {
    double d = v == 0 ? 1 : fabs(v) * 0.5;
    *lo = v - d, *hi = v + d;
  }
}

/* Series k's marker: o->marks[k], or k. */
static int mark_of(const plot_opts *o, size_t k) {
  int m = o->marks ? o->marks[k] : (int)k;
  return m >= 0 ? m % PLOT_MARKERS : 0;
}

static double xat(const plot_xy *s, size_t i) {
  return s->x ? s->x[i] : (double)(i + 1);
}

plot_canvas *plot_fig_lines(const plot_xy *s, size_t ns, const plot_opts *o, int joined,
                            char *err) {
  if (ns > PLOT_MAXSERIES) {
    if (err) snprintf(err, PLOT_ERRLEN, "at most %d series, got %zu", PLOT_MAXSERIES, ns);
    return NULL;
  }
  for (size_t k = 0; k < ns; k++)
    if (s[k].n > 0 && !s[k].y) {
      if (err)
        snprintf(err, PLOT_ERRLEN, "series %zu has %zu points but no y values", k + 1, s[k].n);
      return NULL;
    }
  fig f;
  if (fig_start(&f, o, err) < 0) return NULL;
  size_t cnt[5] = {0}, total = 0;
  double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
  int labelled = 0;
  for (size_t k = 0; k < ns; k++) {
    if (s[k].label || (o->labels && k < o->nlabels)) labelled = 1;
    for (size_t i = 0; i < s[k].n; i++) {
      double x = xat(&s[k], i), y = s[k].y[i];
      pclass p = classify(o, x, y);
      cnt[p]++;
      total++;
      if (p != P_OK) continue;
      if (x < xlo) xlo = x;
      if (x > xhi) xhi = x;
      if (y < ylo) ylo = y;
      if (y > yhi) yhi = y;
    }
  }
  fig_note_left_out(&f, cnt[P_NAN], cnt[P_INF], cnt[P_NONPOS], cnt[P_OUTSIDE], "points");
  if (cnt[P_OK] == 0) {
    const char *why = ns == 0      ? "nothing to plot: no series"
                      : total == 0 ? "nothing to plot: no points"
                                   : "nothing to plot: no point can be shown";
    return fig_empty(&f, why);
  }
  if (cnt[P_OK] > 1 && ylo == yhi) {
    char b[32];
    fig_note(&f, "every y is %s", fig_num(ylo, 12, b, sizeof b));
  }
  widen(&xlo, &xhi, o->logx);
  int ykeep = o->has_range;
  if (ykeep) {
    ylo = o->lo, yhi = o->hi;
  }
  widen(&ylo, &yhi, o->logy);

  fig_entry e[PLOT_MAXSERIES];
  char names[PLOT_MAXSERIES][24];
  for (size_t k = 0; k < ns; k++) {
    e[k].glyph = fig_marker(&f, mark_of(o, k));
    e[k].name = fig_label(&f, (int)k, s[k].label, names[k], sizeof names[k]);
    e[k].style = fig_series_style(mark_of(o, k));
  }
  int legend = fig_want_legend(&f, (int)ns, labelled);
  int lrows = legend ? fig_legend_rows(&f, e, (int)ns) : 0;
  fig_frame fr;
  if (fig_frame_make(&f, &fr, xlo, xhi, o->logx, 1, ylo, yhi, o->logy, ykeep, lrows) < 0)
    return f.c;

  dots d = {&f, &fr, NULL, NULL};
  if (!f.ascii) {
    d.mask = calloc((size_t)fr.pw * (size_t)fr.ph, 1);
    d.style = calloc((size_t)fr.pw * (size_t)fr.ph, sizeof(int));
    if (!d.mask || !d.style) {
      free(d.mask);
      free(d.style);
      plot_canvas_free(f.c);
      if (err) snprintf(err, PLOT_ERRLEN, "out of memory");
      return NULL;
    }
  }
  /* braille dots alone only for one dense series: sparse points read better as markers */
  int braille_scatter = f.braille && !joined && ns == 1 && (int)cnt[P_OK] > fr.pw / 2;
  /* dots and paths of every series first, markers on top */
  for (size_t k = 0; k < ns; k++) {
    int have = 0, lx = 0, ly = 0;
    for (size_t i = 0; i < s[k].n; i++) {
      double x = xat(&s[k], i), y = s[k].y[i];
      if (classify(o, x, y) != P_OK) {
        have = 0; /* a gap breaks the line */
        continue;
      }
      int px = fig_px(&fr, x), py = fig_py(&fr, y);
      if (joined && have)
        segment(&d, lx, ly, px, py, mark_of(o, k));
      else if (joined || braille_scatter || f.ascii)
        dot(&d, px, py, mark_of(o, k));
      have = 1, lx = px, ly = py;
    }
  }
  if (!f.ascii) {
    for (int r = 0; r < fr.ph; r++)
      for (int q = 0; q < fr.pw; q++) {
        size_t i = (size_t)r * (size_t)fr.pw + (size_t)q;
        if (!d.mask[i]) continue;
        uint32_t ch = f.braille        ? 0x2800u + d.mask[i]
                      : d.mask[i] == 3 ? 0x2588
                      : d.mask[i] == 1 ? 0x2580
                                       : 0x2584;
        plot_put(f.c, fr.axis + 1 + q, fr.top + r, ch, d.style[i]);
      }
    free(d.mask);
    free(d.style);
  }
  if (!braille_scatter && !(f.ascii && joined)) {
    /* the cells each series puts a marker in, as a bit per series; where several meet
       (lines that coincide), the cells show each of them in turn along the row, so no
       series hides wholly under the one drawn last */
    size_t ncell = (size_t)fr.pw * (size_t)fr.ph;
    uint8_t *at = calloc(ncell ? ncell : 1, 1);
    if (!at) {
      plot_canvas_free(f.c);
      if (err) snprintf(err, PLOT_ERRLEN, "out of memory");
      return NULL;
    }
    for (size_t k = 0; k < ns; k++) {
      size_t good = 0;
      for (size_t i = 0; i < s[k].n; i++) good += classify(o, xat(&s[k], i), s[k].y[i]) == P_OK;
      int every = !joined || (int)good * 3 <= fr.pw;
      if (!every && ns == 1) continue;
      int lastcol = -1000;
      for (size_t i = 0; i < s[k].n; i++) {
        double x = xat(&s[k], i), y = s[k].y[i];
        if (classify(o, x, y) != P_OK) continue;
        int cx = fig_px(&fr, x) / fr.sx, cy = fig_py(&fr, y) / fr.sy;
        if (!every && cx < lastcol + 8) continue;
        at[(size_t)cy * (size_t)fr.pw + (size_t)cx] |= (uint8_t)(1u << k);
        lastcol = cx;
      }
    }
    for (int r = 0; r < fr.ph; r++) {
      int shared = 0; /* cells of several series so far in this row */
      for (int q = 0; q < fr.pw; q++) {
        unsigned m = at[(size_t)r * (size_t)fr.pw + (size_t)q];
        if (!m) continue;
        /* the first shared cell of a row shows the series drawn last (as one on top of
           the others would), the next ones the others in turn */
        int meet = __builtin_popcount(m), pick = meet - 1 - (meet > 1 ? shared++ % meet : 0);
        int k = 0;
        for (;; k++)
          if ((m >> k) & 1u && pick-- == 0) break;
        plot_put(f.c, fr.axis + 1 + q, fr.top + r, fig_marker_cp(&f, mark_of(o, (size_t)k)),
                 fig_series_style(mark_of(o, (size_t)k)));
      }
    }
    free(at);
  }
  int y = fr.below;
  if (legend) y += fig_legend(&f, y, e, (int)ns);
  y = fig_notes(&f, y);
  return fig_finish(&f, y);
}
