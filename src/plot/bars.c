/* bars.c: signed horizontal bars with eighth-block resolution. */
#include <math.h>

#include "plot/plot.h"

/* Left-aligned eighth blocks U+258F (1/8) .. U+2588 (full): index k = eighths filled. */
static const uint32_t eighths[9] = {' ',    0x258F, 0x258E, 0x258D, 0x258C,
                                    0x258B, 0x258A, 0x2589, 0x2588};

/* Draws a bar of `len` cells (fractional) from column `from` rightwards (dir > 0) or
 * leftwards (dir < 0) on row y, at most `room` cells. */
static void bar(plot_canvas *c, int from, int y, double len, int room, int dir, int style) {
  int clipped = len > room;
  if (clipped) len = room;
  int full = (int)floor(len);
  int part = (int)lround((len - full) * 8);
  if (part == 8) {
    full++;
    part = 0;
  }
  if (c->ascii) {
    full = (int)lround(len);
    part = 0;
  } else if (!c->color) {
    /* without attributes a leftward bar has only the right half block: both sides round
       to half cells, so a value and its negative get bars of one length */
    double halves = (double)lround(len * 2);
    full = (int)floor(halves / 2);
    part = halves / 2 > full ? 4 : 0;
  }
  for (int i = 0; i < full && i < room; i++)
    plot_put(c, from + dir * i, y, c->ascii ? '#' : 0x2588, style);
  if (part > 0 && full < room) {
    int x = from + dir * full;
    if (dir > 0) {
      plot_put(c, x, y, eighths[part], style); /* without attributes: part is 4, a half */
    } else if (c->color) {
      /* A leftward partial cell: the complementary left block in reverse video
       * fills the right-hand `part` eighths. */
      plot_put(c, x, y, eighths[8 - part], style | PLOT_F_REVERSE);
    } else {
      /* Without attributes only a right half block is available. */
      if (part >= 4) plot_put(c, x, y, 0x2590, style);
    }
  }
  if (clipped) plot_put(c, from + dir * (room - 1), y, dir > 0 ? '>' : '<', style | PLOT_F_BOLD);
}

int plot_bars(plot_canvas *c, int x, int y, int w, const double *v, size_t n, double scale,
              const int *styles) {
  if (w < 3) return x;
  int allpos = 1;
  double mx = 0;
  for (size_t i = 0; i < n; i++) {
    if (isnan(v[i])) continue;
    if (v[i] < 0) allpos = 0;
    if (fabs(v[i]) > mx) mx = fabs(v[i]);
  }
  if (!(scale > 0)) scale = mx > 0 ? mx : 1;
  if (isinf(scale)) scale = 1;
  int axis, left, right; /* cells available on each side of the axis */
  if (allpos) {
    axis = x;
    left = 0;
    right = w - 1;
  } else {
    left = (w - 1) / 2;
    right = w - 1 - left;
    axis = x + left;
  }
  for (size_t i = 0; i < n; i++) {
    int row = y + (int)i;
    int style = styles ? styles[i] : (v[i] < 0 ? PLOT_S_NEG : PLOT_S_POS);
    plot_put(c, axis, row, c->ascii ? '|' : 0x2502, PLOT_S_AXIS);
    if (isnan(v[i])) {
      plot_text(c, axis + 1, row, right, "nan", PLOT_S_MARK);
      continue;
    }
    double len = fabs(v[i]) / scale;
    if (v[i] > 0)
      bar(c, axis + 1, row, len * right, right, 1, style);
    else if (v[i] < 0)
      bar(c, axis - 1, row, len * left, left, -1, style);
  }
  return axis;
}
