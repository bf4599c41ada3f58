/* figure_bars.c: signed horizontal bars from a zero line, one per row, with the label
 * on the left, the value on the right and round ticks below.
 *
 * Both sides of the zero line use the same cells per unit. Bars that grow to the
 * right end in an eighth block; to the left, Unicode has only the right half and the
 * right eighth, so their end has half-cell resolution. A value beyond a given range
 * is cut at the edge and ends in '>' or '<'. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plot/figure_priv.h"

static const uint32_t eighths[9] = {' ',    0x258F, 0x258E, 0x258D, 0x258C,
                                    0x258B, 0x258A, 0x2589, 0x2588};

/* Columns a string takes (one per code point). */
static int ncells(const char *s) {
  int n = 0;
  for (uint32_t cp; *s; n++) s += plot_utf8_decode(s, &cp);
  return n;
}

/* Bar i's label: the options' or its number. */
static const char *bar_label(const plot_opts *o, size_t i, char *lab, size_t len) {
  if (o->labels && i < o->nlabels && o->labels[i]) return o->labels[i];
  snprintf(lab, len, "%zu", i + 1);
  return lab;
}

/* The bar of value x on its row: B columns from x0, the zero line zc of them in, cpu
 * cells per unit. A bar cut at the edge (an infinity, a value beyond the range) ends in
 * '>' or '<'. */
static void draw_bar(fig *f, int x0, int zc, int B, int row, double x, double cpu) {
  if (isnan(x) || x == 0) return;
  int dir = x > 0 ? 1 : -1;
  int room = dir > 0 ? B - 1 - zc : zc; /* cells between the zero line and the edge */
  /* |x| times the cells per unit from the zero line (so a value of 1e-17 draws
   * nothing, whichever side) */
  double cellsf = isinf(x) ? room : fabs(x) * cpu;
  int cut = isinf(x) || !(cellsf <= room + 1e-9);
  if (cut) cellsf = room;
  long units = f->ascii ? lround(cellsf) * 8 : lround(cellsf * 8);
  int full = (int)(units / 8), part = (int)(units % 8);
  int style = dir > 0 ? PLOT_S_POS : PLOT_S_NEG;
  uint32_t block = f->ascii ? '#' : 0x2588;
  for (int j = 0; j < full; j++) plot_put(f->c, x0 + zc + dir * (j + 1), row, block, style);
  if (part && full < room) {
    uint32_t g = dir > 0 ? eighths[part] : part <= 2 ? 0x2595 : part <= 5 ? 0x2590 : 0x2588;
    plot_put(f->c, x0 + zc + dir * (full + 1), row, g, style);
  }
  if (cut && room > 0)
    plot_put(f->c, x0 + zc + dir * room, row, dir > 0 ? '>' : '<', style | PLOT_F_BOLD);
}

/* The value axis on row axrow under the bars, its tick labels on the row below (a
 * label that would touch the one before it is left out); zero gets its own tick. */
static void draw_axis(fig *f, const plot_axis *ax, int x0, int zc, int B, int axrow, double cpu) {
  uint32_t hbar = f->ascii ? '-' : 0x2500, htick = f->ascii ? '+' : 0x252c;
  for (int q = 0; q < B; q++) plot_put(f->c, x0 + q, axrow, hbar, PLOT_S_AXIS);
  int lastend = -1;
  for (int i = 0; i < ax->n; i++) {
    int col = x0 + zc + (int)lround(ax->v[i] * cpu);
    plot_put(f->c, col, axrow, ax->v[i] == 0 ? (f->ascii ? '+' : 0x2534) : htick, PLOT_S_AXIS);
    int len = (int)strlen(ax->label[i]);
    int start = col - len / 2;
    if (start < 0) start = 0;
    if (start + len > f->W) start = f->W - len;
    if (lastend >= 0 && start <= lastend + 1) continue;
    plot_text(f->c, start, axrow + 1, len, ax->label[i], PLOT_S_LABEL);
    lastend = start + len - 1;
  }
}

plot_canvas *plot_fig_bars(const double *v, size_t n, const plot_opts *o, char *err) {
  if (n > 0 && !v) {
    if (err) snprintf(err, PLOT_ERRLEN, "%zu values but no array", n);
    return NULL;
  }
  fig f;
  if (fig_start(&f, o, err) < 0) return NULL;
  size_t nan = 0, inf = 0, finite = 0;
  double lo = 0, hi = 0;
  for (size_t i = 0; i < n; i++) {
    if (isnan(v[i])) {
      nan++;
    } else if (isinf(v[i])) {
      inf++;
    } else {
      finite++;
      if (v[i] < lo) lo = v[i];
      if (v[i] > hi) hi = v[i];
    }
  }
  if (nan) fig_note(&f, "%zu NaN value%s left out", nan, nan == 1 ? "" : "s");
  if (inf) fig_note(&f, "%zu Inf value%s cut at the edge", inf, inf == 1 ? "" : "s");
  if (n == 0) return fig_empty(&f, "nothing to plot: no values");
  if (finite == 0 && inf == 0) return fig_empty(&f, "nothing to plot: every value is NaN");
  if (finite > 0 && lo == 0 && hi == 0) fig_note(&f, "every value is 0");
  int keep = o->has_range;
  if (keep) {
    /* bars start at zero, so the axis always shows it */
    lo = o->lo < 0 ? o->lo : 0;
    hi = o->hi > 0 ? o->hi : 0;
    size_t out = 0;
    for (size_t i = 0; i < n; i++) out += isfinite(v[i]) && (v[i] < lo || v[i] > hi);
    if (out)
      fig_note(&f, "%zu value%s outside the range cut at the edge", out, out == 1 ? "" : "s");
  }
  if (!(hi > lo)) hi = 1;

  /* columns: label, space, bar area, space, value */
  char lab[32];
  int L = 0, V = 0;
  for (size_t i = 0; i < n; i++) {
    const char *s = bar_label(o, i, lab, sizeof lab);
    int len = ncells(s);
    if (len > L) L = len;
    char num[16];
    len = (int)strlen(fig_num(v[i], 8, num, sizeof num));
    if (len > V) V = len;
  }
  if (L > f.W / 3) L = f.W / 3;
  int B = f.W - L - 1 - 1 - V;
  int top = fig_heading(&f, 1);
  int xl = o->xlabel && *o->xlabel ? 1 : 0;
  if (B < 4 || top + 3 + xl > f.H) {
    char why[96];
    snprintf(why, sizeof why, "too small to draw: %d x %d cells", f.W, f.H);
    return fig_empty(&f, why);
  }
  size_t shown = fig_fit(&f, top + 2 + xl, n, "bars");

  plot_axis ax;
  plot_axis_make(&ax, lo, hi, 0, B / 10 + 1, keep);
  /* cells per unit, the same on both sides of a zero line that sits on a column: where
   * the exact zero falls between two, the side that would overflow sets the scale */
  double cpu = (double)(B - 1) / (ax.hi - ax.lo);
  int zc = (int)lround(-ax.lo * cpu);
  if (ax.lo < 0 && ax.hi > 0) cpu = fmin(zc / -ax.lo, (B - 1 - zc) / ax.hi);
  int x0 = L + 1; /* first bar column */
  uint32_t vbar = f.ascii ? '|' : 0x2502;
  for (size_t i = 0; i < shown; i++) {
    int row = top + (int)i;
    const char *s = bar_label(o, i, lab, sizeof lab);
    int len = ncells(s);
    plot_text(f.c, len < L ? L - len : 0, row, L, s, PLOT_S_LABEL);
    plot_put(f.c, x0 + zc, row, vbar, PLOT_S_AXIS);
    char num[16];
    plot_printf(f.c, x0 + B + 1, row, V, isfinite(v[i]) ? PLOT_S_TEXT : PLOT_S_MARK, "%*s", V,
                fig_num(v[i], 8, num, sizeof num));
    draw_bar(&f, x0, zc, B, row, v[i], cpu);
  }
  int axrow = top + (int)shown;
  draw_axis(&f, &ax, x0, zc, B, axrow, cpu);
  int y = axrow + 2;
  if (xl) {
    int len = ncells(o->xlabel);
    int x = x0 + (B - len) / 2;
    if (x < 0 || x + len > f.W) x = len < f.W ? f.W - len : 0;
    plot_text(f.c, x, y++, f.W - x, o->xlabel, PLOT_S_LABEL);
  }
  y = fig_notes(&f, y);
  return fig_finish(&f, y);
}
