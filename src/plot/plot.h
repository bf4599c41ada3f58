/* plot.h: small terminal plots drawn into a grid of cells, without curses.
 *
 * A canvas is a w x h grid; each cell holds one Unicode code point and a style
 * (a role such as "axis" or a level of the diverging palette, plus flags). The
 * screen (src/tui) copies cells into curses windows and maps roles to colours;
 * headless callers (ns.plot) turn the canvas into UTF-8 text with plot_canvas_text.
 *
 * Ownership: plot_canvas_new returns a canvas the caller frees with plot_canvas_free;
 * plot_canvas_text returns a malloc'd string the caller frees. Renderers borrow their
 * inputs and never keep pointers. Nothing here prints, exits or uses globals.
 *
 *   plot_canvas *c = plot_canvas_new(30, 4, 0);
 *   double v[4] = {-1.26, -0.63, 0.63, 1.26};
 *   plot_bars(c, 0, 0, 30, v, 4, 0.0, NULL);   // one bar per row, zero axis centred
 *   char *s = plot_canvas_text(c);  ...  free(s);  plot_canvas_free(c);
 *
 * ASCII canvases (ascii != 0) only ever receive code points below 128.
 */
#ifndef NS_PLOT_H
#define NS_PLOT_H

#include <stddef.h>
#include <stdint.h>

/* Roles (low byte of a style). The diverging palette runs blue (negative) through a
 * neutral middle to orange (positive): colour-blind safe. */
enum {
  PLOT_S_TEXT = 0,
  PLOT_S_AXIS,
  PLOT_S_LABEL,
  PLOT_S_TITLE,
  PLOT_S_POS,  /* positive bar */
  PLOT_S_NEG,  /* negative bar */
  PLOT_S_MARK, /* something to notice: a flip, a disagreement */
  PLOT_S_GOOD, /* agreement */
  PLOT_S_DIM,
  PLOT_S_SERIES0, /* line plot series 0..3 */
  PLOT_S_SERIES1,
  PLOT_S_SERIES2,
  PLOT_S_SERIES3,
  PLOT_S_SERIES4, /* series 4 and 5: figures only (figure.h) */
  PLOT_S_SERIES5,
  PLOT_S_FOCUS,    /* where the keyboard is: the focused frame, the cursor, the selected row */
  PLOT_S_DIV0 = 16 /* PLOT_S_DIV0 + PLOT_DIV_MID + level, level in -PLOT_DIV_MID..PLOT_DIV_MID */
};
#define PLOT_DIV_MID 4
#define PLOT_DIV_LEVELS (2 * PLOT_DIV_MID + 1)
#define PLOT_S_DIV(level) (PLOT_S_DIV0 + PLOT_DIV_MID + (level))
/* Flags (high byte). */
#define PLOT_F_REVERSE 0x100
#define PLOT_F_BOLD 0x200
#define PLOT_F_UNDERLINE 0x400
#define PLOT_ROLE(style) ((style)&0xff)

typedef struct {
  uint32_t ch; /* code point; 0 = empty (drawn as a space) */
  uint16_t style;
} plot_cell;

typedef struct {
  int w, h;
  int ascii; /* only ASCII glyphs */
  int color; /* the consumer shows colours (else glyphs carry the meaning alone) */
  plot_cell *cells;
} plot_canvas;

plot_canvas *plot_canvas_new(int w, int h, int ascii);
void plot_canvas_free(plot_canvas *c);
void plot_canvas_clear(plot_canvas *c);
/* Out-of-range coordinates are ignored (clipping). A cell is one column: control
 * characters and wide or combining code points are stored as '?' (as is anything
 * non-ASCII on an ASCII canvas), so a row of w cells is w columns on the terminal. */
void plot_put(plot_canvas *c, int x, int y, uint32_t ch, int style);
/* Writes UTF-8 text from (x, y) on one row, clipped to maxw cells (maxw < 0: to the
 * canvas edge). Returns the cells written. Non-ASCII characters become '?' on ASCII
 * canvases. */
int plot_text(plot_canvas *c, int x, int y, int maxw, const char *utf8, int style);
/* Writes UTF-8 text from (x, y) to the canvas's right edge, as the screen writes a line
 * of words: all of it when it fits, else up to its last space that does (never inside a
 * number), a single word longer than the room cut. Returns the cells written. */
int plot_text_fit(plot_canvas *c, int x, int y, const char *utf8, int style);
/* Copies the cells of src into dst with src's top left at (x, y), clipped to dst; the
 * empty cells of src (code point 0, style 0) leave dst's as they are. */
void plot_canvas_blit(plot_canvas *dst, int x, int y, const plot_canvas *src);
/* printf into the canvas. */
int plot_printf(plot_canvas *c, int x, int y, int maxw, int style, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* The canvas as UTF-8 lines ending in '\n', trailing spaces removed (malloc'd). */
char *plot_canvas_text(const plot_canvas *c);

/* Encodes one code point as UTF-8 into buf (>= 5 bytes); returns the length. */
int plot_utf8_encode(uint32_t cp, char *buf);
/* Decodes one code point from s; returns bytes consumed (>= 1; invalid bytes give U+FFFD). */
int plot_utf8_decode(const char *s, uint32_t *cp);

/* Diverging level (-PLOT_DIV_MID..PLOT_DIV_MID) of v against the scale (> 0). NaN -> 0. */
int plot_div_level(double v, double scale);

/* Horizontal bars, one per row from (x, y), w cells wide, for v[0..n-1]. The zero axis
 * sits where the range [-scale, scale] puts it (scale <= 0: the largest |v|; bars that
 * exceed the scale are clipped and end in a '>' or '<'). When every value is >= 0 the
 * axis is at the left edge. Partial cells use eighth blocks (Unicode) or round (ASCII).
 * styles (may be NULL) overrides the role of each bar. Returns the axis column. */
int plot_bars(plot_canvas *c, int x, int y, int w, const double *v, size_t n, double scale,
              const int *styles);

/* Heatmap of a rows x cols matrix m (row-major) from (x, y), each entry cw cells wide.
 * Each cell gets the diverging style of its value against scale (<= 0: the largest |m|).
 * With show_values and cw >= 5 the value is printed in the cell; otherwise the cell is
 * filled with a glyph (Unicode shades, or ASCII - = + # by sign and size) so the meaning
 * survives without colour. */
void plot_heatmap(plot_canvas *c, int x, int y, const double *m, size_t rows, size_t cols, int cw,
                  double scale, int show_values);

/* Line / scatter plot of up to 4 series in the rectangle (x, y, w, h): a y-axis with
 * its range printed, points joined by lines (lines != 0) or not. Unicode canvases use
 * braille dots (2x4 per cell), ASCII ones a '*' per cell. NaN points are skipped.
 * ymin == ymax: the range of the data. */
typedef struct {
  const double *y;
  size_t n;
  int style;      /* role, e.g. PLOT_S_SERIES0 */
  uint32_t glyph; /* ASCII point glyph (0: '*') */
} plot_series;
void plot_lines(plot_canvas *c, int x, int y, int w, int h, const plot_series *s, int ns,
                double ymin, double ymax, int lines);

/* Formats v in at most width characters with as many significant digits as fit
 * (%g-like; "nan", "inf"); returns buf. */
char *plot_fmt(double v, int width, char *buf, size_t len);

/* A column of numbers reads best with one number of decimals: the largest d <= maxd for
 * which every finite v[i] printed as %.{d}f fits in width, or -1 when even d = 0 does not
 * fit or the largest |v| is below 1e-3 (then format each value with plot_fmt). */
int plot_fmt_decimals(const double *v, size_t n, int width, int maxd);
/* v with d decimals (%.{d}f) when d >= 0 and it fits, else plot_fmt; returns buf. */
char *plot_fmt_fixed(double v, int width, int d, char *buf, size_t len);

/* A table's format: numbers of at least 1e-3 share decimals d, smaller non-zero ones share k
 * mantissa decimals in scientific notation, exact zeros print "0". plot_fmt_table_digits picks d
 * (the most within width and maxd, fewer when all values are exact with fewer; -1: all scientific)
 * and k (<= 3, the most that fits every positive one; a negative
 * one that does not fit gets k - 1) for v[0..n-1]; NaN and Inf are ignored (printed as words). */
void plot_fmt_table_digits(const double *v, size_t n, int width, int maxd, int *d, int *k);
/* The same by printing every value at every candidate format: the reference it is tested
 * against (tests/unit/test_plot.c). */
void plot_fmt_table_digits_all(const double *v, size_t n, int width, int maxd, int *d, int *k);
char *plot_fmt_table(double v, int width, int d, int k, char *buf, size_t len);

#endif
