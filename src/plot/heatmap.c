/* heatmap.c: a matrix as coloured cells (diverging blue-orange), readable without colour. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plot/plot.h"

/* Glyph of a cell too narrow for a number. With colour the background carries the
 * value; without, the glyph does: sign by the side of the ramp, size by weight. */
static uint32_t glyph(const plot_canvas *c, int level) {
  static const char ramp[PLOT_DIV_LEVELS + 1] = "#=-. .+*@";
  return c->color ? ' ' : (uint32_t)ramp[level + PLOT_DIV_MID];
}

void plot_heatmap(plot_canvas *c, int x, int y, const double *m, size_t rows, size_t cols, int cw,
                  double scale, int show_values) {
  if (cw < 1) cw = 1;
  if (!(scale > 0)) {
    scale = 0;
    for (size_t i = 0; i < rows * cols; i++)
      if (isfinite(m[i]) && fabs(m[i]) > scale) scale = fabs(m[i]);
    if (!(scale > 0)) scale = 1;
  }
  /* Printed values share one format, so a column reads evenly. */
  int d = -1, sci = 2;
  if (show_values && cw >= 5) plot_fmt_table_digits(m, rows * cols, cw - 1, 5, &d, &sci);
  for (size_t r = 0; r < rows; r++) {
    for (size_t k = 0; k < cols; k++) {
      double v = m[r * cols + k];
      int level = plot_div_level(v, scale);
      int style = PLOT_S_DIV(level);
      int x0 = x + (int)k * cw, yy = y + (int)r;
      if (show_values && cw >= 5) {
        char num[32], cell[40];
        plot_fmt_table(v, cw - 1, d, sci, num, sizeof num);
        snprintf(cell, sizeof cell, "%*s ", cw - 1, num);
        plot_text(c, x0, yy, cw, cell, style);
      } else {
        uint32_t g = glyph(c, level);
        for (int j = 0; j < cw; j++) plot_put(c, x0 + j, yy, g, style);
      }
    }
  }
}
