/* lines.c: small line and scatter plots (braille dots, or '*' in ASCII). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot/plot.h"

/* Braille dot bit for sub-cell (dx 0..1, dy 0..3). */
static const uint8_t dotbit[4][2] = {{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20}, {0x40, 0x80}};

typedef struct {
  plot_canvas *c;
  int x, y, w, h;
  uint8_t *dots; /* w*h braille masks for the plot area */
  int *style;    /* w*h: last series style per cell */
} grid;

static void dot(grid *g, int px, int py, int style, uint32_t glyph) {
  int sw = g->c->ascii ? 1 : 2, sh = g->c->ascii ? 1 : 4;
  if (px < 0 || py < 0 || px >= g->w * sw || py >= g->h * sh) return;
  int cx = px / sw, cy = py / sh;
  size_t k = (size_t)cy * (size_t)g->w + (size_t)cx;
  if (g->c->ascii) {
    plot_put(g->c, g->x + cx, g->y + cy, glyph ? glyph : '*', style);
    return;
  }
  g->dots[k] |= dotbit[py % 4][px % 2];
  g->style[k] = style;
}

void plot_lines(plot_canvas *c, int x, int y, int w, int h, const plot_series *s, int ns,
                double ymin, double ymax, int lines) {
  if (ns > 4) ns = 4;
  if (w < 12 || h < 2) return;
  if (!(ymax > ymin)) {
    ymin = INFINITY;
    ymax = -INFINITY;
    for (int k = 0; k < ns; k++)
      for (size_t i = 0; i < s[k].n; i++)
        if (isfinite(s[k].y[i])) {
          if (s[k].y[i] < ymin) ymin = s[k].y[i];
          if (s[k].y[i] > ymax) ymax = s[k].y[i];
        }
    if (!(ymax >= ymin)) ymin = 0, ymax = 1;
    if (ymax == ymin) ymin -= 0.5, ymax += 0.5;
  }
  char lo[16], hi[16];
  plot_fmt(ymax, 8, hi, sizeof hi);
  plot_fmt(ymin, 8, lo, sizeof lo);
  int lw = (int)(strlen(hi) > strlen(lo) ? strlen(hi) : strlen(lo));
  plot_printf(c, x, y, lw, PLOT_S_LABEL, "%*s", lw, hi);
  plot_printf(c, x, y + h - 1, lw, PLOT_S_LABEL, "%*s", lw, lo);
  for (int r = 0; r < h; r++) plot_put(c, x + lw, y + r, c->ascii ? '|' : 0x2502, PLOT_S_AXIS);
  grid g = {c, x + lw + 1, y, w - lw - 1, h, NULL, NULL};
  if (!c->ascii) {
    g.dots = calloc((size_t)g.w * (size_t)g.h, 1);
    g.style = calloc((size_t)g.w * (size_t)g.h, sizeof(int));
    if (!g.dots || !g.style) {
      free(g.dots);
      free(g.style);
      return;
    }
  }
  int sw = c->ascii ? 1 : 2, sh = c->ascii ? 1 : 4;
  int pw = g.w * sw, ph = g.h * sh;
  for (int k = 0; k < ns; k++) {
    int havelast = 0, lx = 0, ly = 0;
    for (size_t i = 0; i < s[k].n; i++) {
      double v = s[k].y[i];
      if (!isfinite(v)) {
        havelast = 0;
        continue;
      }
      int px = s[k].n > 1 ? (int)lround((double)i * (pw - 1) / (double)(s[k].n - 1)) : 0;
      double t = (v - ymin) / (ymax - ymin);
      if (t < 0) t = 0;
      if (t > 1) t = 1;
      int py = (int)lround((1 - t) * (ph - 1));
      if (lines && havelast) {
        int steps = abs(px - lx) > abs(py - ly) ? abs(px - lx) : abs(py - ly);
        for (int j = 1; j < steps; j++)
          dot(&g, lx + (int)lround((double)(px - lx) * j / steps),
              ly + (int)lround((double)(py - ly) * j / steps), s[k].style, s[k].glyph);
      }
      dot(&g, px, py, s[k].style, s[k].glyph);
      havelast = 1;
      lx = px;
      ly = py;
    }
  }
  if (!c->ascii) {
    for (int r = 0; r < g.h; r++)
      for (int q = 0; q < g.w; q++) {
        size_t k = (size_t)r * (size_t)g.w + (size_t)q;
        if (g.dots[k]) plot_put(c, g.x + q, g.y + r, 0x2800u + g.dots[k], g.style[k]);
      }
    free(g.dots);
    free(g.style);
  }
}
