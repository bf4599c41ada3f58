/* figure_hist.c: histograms of one or several sets on common bins.
 *
 * Bins are equal in value (geometric on a log axis) from the smallest to the largest
 * value shown, the last bin closed (numpy's rule). Several sets share each bin side
 * by side, each with its own fill, so they differ without colour; every bin then
 * needs one column per set, and the number of bins drops to what the width allows
 * (the figure says so). Heights are counts, or densities (count / (n * bin width))
 * with o->density. The first set's bars end in an eighth block. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot/figure_priv.h"

static const char *const fill_u[PLOT_MAXSERIES] = {"\u2588", "\u2592", "\u2591",
                                                   "\u259a", "\u2573", "\u253c"};
static const char *const fill_a[PLOT_MAXSERIES] = {"#", "=", ":", "+", "x", "o"};

static int keepable(const plot_opts *o, double x) {
  return isfinite(x) && !(o->logx && x <= 0) && !(o->has_range && (x < o->lo || x > o->hi));
}

/* Fills h[b * ns + k] with set k's count in bin b (its density with o->density) over
 * nb bins from lo to hi; returns the largest. */
static double bin_counts(double *h, int nb, const plot_set *s, size_t ns, const size_t *kept,
                         const plot_opts *o, double lo, double hi) {
  double l0 = o->logx ? log10(lo) : lo, l1 = o->logx ? log10(hi) : hi;
  for (size_t k = 0; k < ns; k++) {
    for (size_t i = 0; i < s[k].n; i++) {
      double x = s[k].v[i];
      if (!keepable(o, x)) continue;
      double t = ((o->logx ? log10(x) : x) - l0) / (l1 - l0);
      int b = (int)floor(t * nb);
      if (b >= nb) b = nb - 1; /* the last bin holds its right edge */
      if (b < 0) b = 0;
      h[(size_t)b * ns + k] += 1;
    }
  }
  double top = 0;
  for (int b = 0; b < nb; b++)
    for (size_t k = 0; k < ns; k++) {
      double *p = &h[(size_t)b * ns + k];
      if (o->density && kept[k]) {
        double e0 = l0 + (l1 - l0) * b / nb, e1 = l0 + (l1 - l0) * (b + 1) / nb;
        double width = o->logx ? pow(10, e1) - pow(10, e0) : e1 - e0;
        *p /= (double)kept[k] * width;
      }
      if (*p > top) top = *p;
    }
  return top;
}

/* The bars: each bin's columns shared out among the sets, each set in its fill; only
 * the first set's bars (and none in ASCII) end in an eighth block. */
static void draw_bins(fig *f, const fig_frame *fr, const double *h, int nb, size_t ns) {
  for (int b = 0; b < nb; b++) {
    int c0 = (int)lround((double)b * fr->pw / nb);
    int c1 = (int)lround((double)(b + 1) * fr->pw / nb);
    for (size_t k = 0; k < ns; k++) {
      int a = c0 + (int)((c1 - c0) * k / ns), z = c0 + (int)((c1 - c0) * (k + 1) / ns);
      double v = h[(size_t)b * ns + k];
      if (!(v > 0)) continue;
      double cellsf = v / fr->ay.hi * fr->ph;
      long units = lround(cellsf * 8);
      if (units < 1) units = 1; /* a bin that holds something shows it */
      if (f->ascii || k > 0) units = (units + 4) / 8 * 8 > 0 ? (units + 4) / 8 * 8 : 8;
      int full = (int)(units / 8), part = (int)(units % 8);
      uint32_t g;
      plot_utf8_decode(f->ascii ? fill_a[k] : fill_u[k], &g);
      int st = fig_series_style((int)k);
      for (int q = a; q < z; q++) {
        for (int r = 0; r < full && r < fr->ph; r++)
          plot_put(f->c, fr->axis + 1 + q, fr->top + fr->ph - 1 - r, g, st);
        if (part && full < fr->ph)
          plot_put(f->c, fr->axis + 1 + q, fr->top + fr->ph - 1 - full, 0x2580u + (uint32_t)part,
                   st);
      }
    }
  }
}

plot_canvas *plot_fig_hist(const plot_set *s, size_t ns, const plot_opts *o, char *err) {
  if (ns > PLOT_MAXSERIES) {
    if (err) snprintf(err, PLOT_ERRLEN, "at most %d sets, got %zu", PLOT_MAXSERIES, ns);
    return NULL;
  }
  for (size_t k = 0; k < ns; k++)
    if (s[k].n > 0 && !s[k].v) {
      if (err) snprintf(err, PLOT_ERRLEN, "set %zu has %zu values but no array", k + 1, s[k].n);
      return NULL;
    }
  fig f;
  if (fig_start(&f, o, err) < 0) return NULL;
  size_t nan = 0, inf = 0, nonpos = 0, outside = 0, good = 0, biggest = 0;
  size_t kept[PLOT_MAXSERIES] = {0};
  double lo = INFINITY, hi = -INFINITY;
  int labelled = 0;
  for (size_t k = 0; k < ns; k++) {
    if (s[k].label || (o->labels && k < o->nlabels)) labelled = 1;
    for (size_t i = 0; i < s[k].n; i++) {
      double x = s[k].v[i];
      if (isnan(x))
        nan++;
      else if (isinf(x))
        inf++;
      else if (o->logx && x <= 0)
        nonpos++;
      else if (!keepable(o, x))
        outside++;
      else {
        kept[k]++;
        if (x < lo) lo = x;
        if (x > hi) hi = x;
      }
    }
    good += kept[k];
    if (kept[k] > biggest) biggest = kept[k];
  }
  fig_note_left_out(&f, nan, inf, nonpos, outside, "values");
  if (good == 0)
    return fig_empty(&f, ns == 0 ? "nothing to plot: no sets" : "nothing to plot: no values");
  if (o->has_range) lo = o->lo, hi = o->hi;
  int constant = !(hi > lo);
  if (constant) {
    char b[32];
    fig_note(&f, "every value is %s", fig_num(lo, 12, b, sizeof b));
    if (o->logx)
      lo /= 2, hi *= 2;
    else {
      double d = lo == 0 ? 0.5 : fabs(lo) * 0.25;
      lo -= d, hi += d;
    }
  }
  /* bins: asked, or Sturges' rule for the largest set */
  int asked = o->bins > 0 ? o->bins : (int)ceil(log2((double)biggest)) + 1;
  if (constant) asked = 1;
  int pw_guess = f.W - 6 - 1; /* the y labels take about 5 columns */
  int nb = asked;
  if (nb * (int)ns > pw_guess) nb = pw_guess / (int)ns;
  if (nb < 1) nb = 1;
  if (nb < asked && o->bins > 0) fig_note(&f, "%d bins asked, %d fit the width", asked, nb);

  /* counts (or densities) per set and bin */
  double *h = calloc((size_t)nb * ns, sizeof(double));
  if (!h) {
    plot_canvas_free(f.c);
    if (err) snprintf(err, PLOT_ERRLEN, "out of memory");
    return NULL;
  }
  double top = bin_counts(h, nb, s, ns, kept, o, lo, hi);

  fig_entry e[PLOT_MAXSERIES];
  char names[PLOT_MAXSERIES][96], own[24];
  for (size_t k = 0; k < ns; k++) {
    e[k].glyph = f.ascii ? fill_a[k] : fill_u[k];
    snprintf(names[k], sizeof names[k], "%s (n=%zu)",
             fig_label(&f, (int)k, s[k].label, own, sizeof own), kept[k]);
    e[k].name = names[k];
    e[k].style = fig_series_style((int)k);
  }
  int legend = fig_want_legend(&f, (int)ns, labelled);
  int lrows = legend ? fig_legend_rows(&f, e, (int)ns) : 0;
  fig_frame fr;
  if (fig_frame_make(&f, &fr, lo, hi, o->logx, 1, 0, top > 0 ? top : 1, 0, 0, lrows) < 0) {
    free(h);
    return f.c;
  }
  draw_bins(&f, &fr, h, nb, ns);
  free(h);
  int y = fr.below;
  if (legend) y += fig_legend(&f, y, e, (int)ns);
  y = fig_notes(&f, y);
  return fig_finish(&f, y);
}
