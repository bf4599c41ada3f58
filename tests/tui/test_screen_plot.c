/* test_screen_plot.c: the cell renderers of src/plot (used by the screen and ns.plot),
 * checked against hand-drawn expected text. */
#include <stdlib.h>
#include <string.h>

#include "plot/plot.h"
#include "tap.h"

static void text_is(plot_canvas *c, const char *want, const char *name) {
  char *got = plot_canvas_text(c);
  int ok = got && strcmp(got, want) == 0;
  tap_ok(ok, "%s", name);
  if (!ok) printf("#   got:\n%s#   want:\n%s", got ? got : "(null)\n", want);
  free(got);
}

int main(void) {
  /* UTF-8 round trip of 1-, 2-, 3- and 4-byte code points */
  uint32_t cps[] = {'A', 0xE9, 0x2588, 0x1F600};
  for (size_t i = 0; i < 4; i++) {
    char buf[8] = {0};
    uint32_t back = 0;
    int n = plot_utf8_encode(cps[i], buf);
    int m = plot_utf8_decode(buf, &back);
    tap_ok(n == (int)i + 1 && m == n && back == cps[i], "utf8 round trip U+%04X (%d bytes)",
           (unsigned)cps[i], n);
  }
  uint32_t bad;
  tap_ok(plot_utf8_decode("\xff", &bad) == 1 && bad == 0xFFFD, "invalid byte decodes to U+FFFD");

  /* Signed bars, ASCII: width 9 puts the axis in column 4 with 4 cells each side. */
  plot_canvas *c = plot_canvas_new(9, 3, 1);
  double v[3] = {-1, 0.5, 1};
  int axis = plot_bars(c, 0, 0, 9, v, 3, 0, NULL);
  tap_ok(axis == 4, "bars: axis column 4 (got %d)", axis);
  text_is(c, "####|\n    |##\n    |####\n", "bars: ASCII, scale from the data");
  plot_canvas_free(c);

  /* Values beyond a fixed scale are clipped and marked. */
  c = plot_canvas_new(9, 1, 1);
  double big = 3;
  plot_bars(c, 0, 0, 9, &big, 1, 1.0, NULL);
  text_is(c, "|#######>\n", "bars: all positive, clipped at the scale");
  plot_canvas_free(c);

  /* Unicode eighth blocks: 0.3 of 4 cells = 1.2 cells = one full block and 2/8. */
  c = plot_canvas_new(9, 2, 0);
  double u[2] = {0.3, -1};
  plot_bars(c, 0, 0, 9, u, 2, 1.0, NULL);
  text_is(c, "    \u2502\u2588\u258e\n\u2588\u2588\u2588\u2588\u2502\n",
          "bars: Unicode partial cell (1 2/8 blocks)");
  plot_canvas_free(c);

  /* Diverging levels: only an exact zero is neutral, the scale's ends are +-4. */
  tap_ok(plot_div_level(0, 1) == 0 && plot_div_level(1, 1) == 4 && plot_div_level(-1, 1) == -4 &&
             plot_div_level(-0.1, 1) == -1 && plot_div_level(0.6, 1) == 3 &&
             plot_div_level(5, 1) == 4,
         "diverging levels");

  /* Heatmap without colour: glyphs carry sign and size. */
  c = plot_canvas_new(4, 1, 1);
  c->color = 0;
  double m[4] = {-1, -0.1, 0, 0.6};
  plot_heatmap(c, 0, 0, m, 1, 4, 1, 1.0, 0);
  text_is(c, "#. *\n", "heatmap: ASCII glyph ramp");
  tap_ok(PLOT_ROLE(c->cells[0].style) == PLOT_S_DIV(-4) &&
             PLOT_ROLE(c->cells[3].style) == PLOT_S_DIV(3),
         "heatmap: cell styles are diverging levels");
  plot_canvas_free(c);

  /* Heatmap with values: right-aligned numbers. */
  c = plot_canvas_new(12, 1, 1);
  double mv[2] = {1.5, -2};
  plot_heatmap(c, 0, 0, mv, 1, 2, 6, 0, 1);
  text_is(c, "  1.5  -2.0\n", "heatmap: values in cells share one format");
  plot_canvas_free(c);

  /* Line plot, ASCII: y range printed, first point bottom-left, last top-right. */
  c = plot_canvas_new(12, 2, 1);
  double ys[2] = {0, 1};
  plot_series s = {ys, 2, PLOT_S_SERIES0, 0};
  plot_lines(c, 0, 0, 12, 2, &s, 1, 0, 0, 0);
  text_is(c, "1|         *\n0|*\n", "lines: ASCII scatter with the y range");
  plot_canvas_free(c);

  /* Number formatting fits the width. */
  char buf[32];
  tap_ok(strcmp(plot_fmt(2.52981e-06, 8, buf, sizeof buf), "2.53e-06") == 0, "fmt 2.53e-06 in 8");
  tap_ok(strcmp(plot_fmt(-0.632454, 8, buf, sizeof buf), "-0.63245") == 0, "fmt -0.63245 in 8");
  tap_ok(strcmp(plot_fmt(NAN, 5, buf, sizeof buf), "nan") == 0, "fmt nan");

  /* Text clipped at the canvas edge; ASCII canvases never hold non-ASCII. */
  c = plot_canvas_new(5, 1, 1);
  int n = plot_text(c, 2, 0, -1, "h\u00e9llo", PLOT_S_TEXT);
  text_is(c, "  h?l\n", "text: clipped, non-ASCII replaced on ASCII canvases");
  tap_ok(n == 3, "text: 3 cells written (got %d)", n);
  plot_canvas_free(c);
  return tap_done();
}
