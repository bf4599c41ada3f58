/* figure_heatmap.c: a matrix as a grid of cells on a diverging palette centred at zero
 * (blue for negative, orange for positive: colour-blind safe).
 *
 * Without colour the cells still read: wide cells print the value; narrower ones a
 * sign and a density glyph (4 levels of |v| against the scale); one-column cells a
 * signed ramp. A legend maps each glyph to its range of values. The scale is the
 * largest |v| (or max(|lo|, |hi|) of a given range); exact zeros print as 0, NaN as ?. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot/figure_priv.h"

static const char *const dens_u[PLOT_DIV_MID] = {"\u2591", "\u2592", "\u2593", "\u2588"};
static const char *const dens_a[PLOT_DIV_MID] = {".", ":", "=", "#"};
/* one column: negative levels 1..4, then positive 1..4 */
static const char ramp_neg[PLOT_DIV_MID + 1] = "-=x#";
static const char ramp_pos[PLOT_DIV_MID + 1] = ".+*@";

static int ncells(const char *s) {
  int n = 0;
  for (uint32_t cp; *s; n++) s += plot_utf8_decode(s, &cp);
  return n;
}

plot_canvas *plot_fig_heatmap(const double *m, size_t rows, size_t cols, const plot_opts *o,
                              char *err) {
  if (rows * cols > 0 && !m) {
    if (err) snprintf(err, PLOT_ERRLEN, "a %zu x %zu matrix but no array", rows, cols);
    return NULL;
  }
  fig f;
  if (fig_start(&f, o, err) < 0) return NULL;
  size_t n = rows * cols, nan = 0, inf = 0;
  double scale = 0;
  for (size_t i = 0; i < n; i++) {
    if (isnan(m[i]))
      nan++;
    else if (isinf(m[i]))
      inf++;
    else if (fabs(m[i]) > scale)
      scale = fabs(m[i]);
  }
  if (n == 0) return fig_empty(&f, "nothing to plot: an empty matrix");
  if (nan) fig_note(&f, "%zu NaN value%s shown as ?", nan, nan == 1 ? "" : "s");
  if (inf) fig_note(&f, "%zu Inf value%s shown at the end of the scale", inf, inf == 1 ? "" : "s");
  if (o->has_range) scale = fmax(fabs(o->lo), fabs(o->hi));
  if (!(scale > 0) || !isfinite(scale)) {
    if (nan + inf < n && !o->has_range) fig_note(&f, "every value is 0");
    scale = 1;
  }

  /* labels: rows on the left, columns on a header line */
  char lab[32];
  int RL = 1;
  for (size_t r = 0; r < rows; r++) {
    const char *s = r < o->nrowlabels && o->rowlabels && o->rowlabels[r] ? o->rowlabels[r] : NULL;
    int len = s ? ncells(s) : snprintf(lab, sizeof lab, "%zu", r + 1);
    if (len > RL) RL = len;
  }
  if (RL > f.W / 4) RL = f.W / 4;
  int avail = f.W - RL - 1;
  int cw = cols ? avail / (int)cols : 1;
  if (cw > 8) cw = 8;
  size_t shown_c = cols;
  if (cw < 1) {
    cw = 1;
    shown_c = avail > 0 ? (size_t)avail : 0;
    fig_note(&f, "%zu columns left out (width %d)", cols - shown_c, f.W);
  }
  int values = o->values != 0 && cw >= 5;
  int d = -1, sci = 2;
  if (values) plot_fmt_table_digits(m, n, cw - 1, 2, &d, &sci);
  const char *const *dens = f.ascii ? dens_a : dens_u;

  /* legend: what each glyph means */
  fig_entry e[2 * PLOT_DIV_MID + 3];
  char names[2 * PLOT_DIV_MID + 3][48], g1[2 * PLOT_DIV_MID][2];
  const char *le = f.ascii ? "<=" : "\u2264", *ge = f.ascii ? ">=" : "\u2265";
  int ne = 0;
  char a[16];
  if (values && o->color) { /* the numbers speak for themselves; the colours need a key */
    e[ne++] = (fig_entry){"", "colour: blue < 0 < orange", PLOT_S_DIM};
    snprintf(names[ne], sizeof names[0], "scale %s", fig_num(scale, 7, a, sizeof a));
    e[ne] = (fig_entry){"", names[ne], PLOT_S_DIM};
    ne++;
  } else if (values) {
    /* no legend needed */
  } else if (cw >= 2) {
    e[ne++] = (fig_entry){"-+", "sign", PLOT_S_TEXT};
    for (int l = 1; l <= PLOT_DIV_MID; l++) {
      fig_num(scale * l / PLOT_DIV_MID, 6, a, sizeof a);
      /* "|v|" says what the shades measure, where the width allows */
      int wide = l == 1 && 2 + 3 + 2 + (int)strlen(a) <= f.W;
      snprintf(names[ne], sizeof names[0], "%s%s%s", wide ? "|v|" : "", le, a);
      e[ne] = (fig_entry){dens[l - 1], names[ne], PLOT_S_DIV(l)};
      ne++;
    }
  } else {
    for (int side = -1; side <= 1; side += 2)
      for (int l = 1; l <= PLOT_DIV_MID; l++) {
        char *g = g1[(side > 0) * PLOT_DIV_MID + l - 1];
        g[0] = side < 0 ? ramp_neg[l - 1] : ramp_pos[l - 1], g[1] = 0;
        snprintf(names[ne], sizeof names[0], "%s%s", side < 0 ? ge : le,
                 fig_num(side * scale * l / PLOT_DIV_MID, 6, a, sizeof a));
        e[ne] = (fig_entry){g, names[ne], PLOT_S_DIV(side * l)};
        ne++;
      }
  }
  size_t zeros = 0;
  for (size_t i = 0; i < n; i++) zeros += m[i] == 0;
  if (!values && zeros) e[ne++] = (fig_entry){"0", "zero", PLOT_S_DIV(0)};
  if (nan) e[ne++] = (fig_entry){"?", "NaN", PLOT_S_MARK};
  int legend = o->legend != 0 && ne > 0;
  int lrows = legend ? fig_legend_rows(&f, e, ne) : 0;

  int y = fig_heading(&f, 1);
  int xl = o->xlabel && *o->xlabel ? 1 : 0;
  if (avail < 1 || y + 2 + xl + lrows > f.H) {
    char why[96];
    snprintf(why, sizeof why, "too small to draw: %d x %d cells", f.W, f.H);
    return fig_empty(&f, why);
  }
  size_t shown_r = fig_fit(&f, y + 1 + xl + lrows, rows, "rows");
  int x0 = RL + 1;
  /* header: column labels right-aligned over their cells */
  for (size_t k = 0; k < shown_c; k++) {
    const char *s = k < o->nlabels && o->labels && o->labels[k] ? o->labels[k] : NULL;
    if (!s) snprintf(lab, sizeof lab, "%zu", k + 1), s = lab;
    int len = ncells(s);
    int w = values ? cw - 1 : cw;
    if (len > w) len = w;
    plot_text(f.c, x0 + (int)k * cw + w - len, y, len, s, PLOT_S_LABEL);
  }
  y++;
  for (size_t r = 0; r < shown_r; r++, y++) {
    const char *s = r < o->nrowlabels && o->rowlabels && o->rowlabels[r] ? o->rowlabels[r] : NULL;
    if (!s) snprintf(lab, sizeof lab, "%zu", r + 1), s = lab;
    int len = ncells(s);
    plot_text(f.c, len < RL ? RL - len : 0, y, RL, s, PLOT_S_LABEL);
    for (size_t k = 0; k < shown_c; k++) {
      double v = m[r * cols + k];
      int level = plot_div_level(v, scale);
      int st = PLOT_S_DIV(level), x = x0 + (int)k * cw;
      if (isnan(v)) {
        for (int j = 0; j < cw; j++) plot_put(f.c, x + j, y, ' ', st);
        plot_put(f.c, x + (values ? cw - 2 : cw - 1), y, '?', PLOT_S_MARK);
      } else if (values) {
        char num[32], cell[48];
        plot_fmt_table(v, cw - 1, d, sci, num, sizeof num);
        snprintf(cell, sizeof cell, "%*s ", cw - 1, num);
        plot_text(f.c, x, y, cw, cell, st);
      } else if (level == 0) {
        for (int j = 0; j < cw; j++) plot_put(f.c, x + j, y, ' ', st);
        plot_put(f.c, x + cw - 1, y, '0', st);
      } else if (cw >= 2) {
        plot_put(f.c, x, y, level < 0 ? '-' : '+', st);
        uint32_t g;
        plot_utf8_decode(dens[abs(level) - 1], &g);
        for (int j = 1; j < cw; j++) plot_put(f.c, x + j, y, g, st);
      } else {
        plot_put(f.c, x, y, (uint32_t)(level < 0 ? ramp_neg[-level - 1] : ramp_pos[level - 1]), st);
      }
    }
  }
  if (xl) {
    int len = ncells(o->xlabel);
    int x = x0 + ((int)shown_c * cw - len) / 2;
    if (x < 0 || x + len > f.W) x = len < f.W ? f.W - len : 0;
    plot_text(f.c, x, y++, f.W - x, o->xlabel, PLOT_S_LABEL);
  }
  if (legend) y += fig_legend(&f, y, e, ne);
  y = fig_notes(&f, y);
  return fig_finish(&f, y);
}
