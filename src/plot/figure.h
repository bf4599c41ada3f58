/* figure.h: whole figures (axes, ticks, legend, notes) drawn into a canvas of cells.
 *
 * plot.h has the cell grid and the small renderers the screen's panels use; this
 * header builds complete figures on it: heatmap, lines, scatter, bars, box and hist.
 * Each returns a new canvas at most o->width x o->height cells (fewer rows when the
 * figure needs fewer), which the screen can paint and ns.plot turns into text with
 * plot_canvas_text or, for ANSI colours, plot_canvas_ansi.
 *
 * Every figure reads without colour: series differ by marker, overlaid histograms by
 * fill, heatmap cells carry their value or a sign and a density glyph. A cell is a code
 * point and a style: a role (plot.h) and attribute flags. plot_style_colors gives its
 * foreground, background and attributes in the plot layer's one palette (used for the
 * ANSI text); the screen maps the same roles through its themes instead.
 * Degenerate data (NaN, Inf, values a log axis cannot show, a constant, no data) never
 * fail: what was left out, or why nothing is drawn, is written in words below the
 * figure ("2 NaN values left out").
 *
 * Ownership: the functions borrow their inputs; the canvas they return belongs to the
 * caller (plot_canvas_free); plot_canvas_ansi returns a malloc'd string. They return
 * NULL with a reason in err (PLOT_ERRLEN bytes) only when memory runs out or an
 * argument is impossible (a NULL array with a positive count, more series than
 * PLOT_MAXSERIES).
 *
 *   plot_opts o;
 *   plot_opts_init(&o);
 *   o.width = 60, o.height = 12, o.title = "y against x";
 *   double y[4] = {1, 4, 9, 16};
 *   plot_xy s = {NULL, y, 4, "squares"};   // x NULL: 1..n
 *   plot_canvas *c = plot_fig_lines(&s, 1, &o, 1, err);
 *   char *text = plot_canvas_text(c);  ...  free(text);  plot_canvas_free(c);
 */
#ifndef NS_PLOT_FIGURE_H
#define NS_PLOT_FIGURE_H

#include <stddef.h>

#include "plot/plot.h"

#define PLOT_ERRLEN 256
#define PLOT_MAXSERIES 6
/* Markers (lines, scatter): one per series, and two more for figures that share their
 * markers' meanings across plots (plot_opts.marks). */
#define PLOT_MARKERS 8

/* Glyph sets, in the order of plot_glyph_names. ASCII is pure 7-bit; blocks uses
 * half and eighth blocks; braille gives 2x4 dots per cell to lines and scatter (the
 * other kinds draw as with blocks). */
typedef enum { PLOT_GLYPHS_BLOCKS, PLOT_GLYPHS_BRAILLE, PLOT_GLYPHS_ASCII } plot_glyphs;
extern const char *const plot_glyph_names[]; /* "blocks", "braille", "ascii", NULL */

typedef struct {
  int width, height; /* the box the figure never exceeds (cells) */
  plot_glyphs glyphs;
  int legend;                          /* -1: when there is more than one series or any label */
  const char *title, *xlabel, *ylabel; /* NULL: none */
  const char *const *labels;           /* series, bar, group or heatmap column names */
  size_t nlabels;
  const char *const *rowlabels; /* heatmap rows */
  size_t nrowlabels;
  int has_range; /* value axis fixed to [lo, hi] (heatmap: colour scale max(|lo|,|hi|)) */
  double lo, hi;
  int logx, logy; /* log10 axes (lines, scatter); box and hist use logx for their values */
  int xint;       /* lines, scatter: the x values are indices, so ticks only on whole numbers */
  int bins;       /* hist: number of bins (0: chosen from the data and the width) */
  int density;    /* hist: bar heights are densities (area 1) instead of counts */
  int values;     /* heatmap: -1 print values when they fit, 0 never, 1 always when possible */
  int color;      /* the consumer shows the colours (a heatmap then explains them) */
  int has_ref;    /* box: a reference line at the value ref across every group */
  double ref;
  const char *ref_label; /* its legend entry (NULL: "reference <ref>") */
  /* lines, scatter: the marker of each series (0 .. PLOT_MARKERS-1), so two figures side by
   * side give one thing one marker; NULL: series k has marker k */
  const int *marks;
} plot_opts;

/* Defaults: 64 x 16, blocks, legend auto, values auto, nothing else. */
void plot_opts_init(plot_opts *o);

/* One series of a line or scatter plot: x NULL means 1, 2, ..., n. */
typedef struct {
  const double *x, *y;
  size_t n;
  const char *label; /* NULL: o->labels[k] or "series k" */
} plot_xy;

/* One set of values: a box-plot group or one of several overlaid histograms. */
typedef struct {
  const double *v;
  size_t n;
  const char *label;
} plot_set;

/* rows x cols matrix m (row-major); diverging palette centred at zero. */
plot_canvas *plot_fig_heatmap(const double *m, size_t rows, size_t cols, const plot_opts *o,
                              char *err);
/* Line plot (joined != 0) or scatter plot of ns <= PLOT_MAXSERIES series. */
plot_canvas *plot_fig_lines(const plot_xy *s, size_t ns, const plot_opts *o, int joined, char *err);
/* Signed horizontal bars, one per row, from a zero line. */
plot_canvas *plot_fig_bars(const double *v, size_t n, const plot_opts *o, char *err);
/* Horizontal box plots, one group per row: median, quartiles, whiskers at 1.5 IQR; with
 * o->has_ref, a dashed vertical line at o->ref through every row (a population value the
 * groups estimate), named in the legend; the axis then reaches it unless o gives a range. */
plot_canvas *plot_fig_box(const plot_set *g, size_t ng, const plot_opts *o, char *err);
/* Histogram of ns <= PLOT_MAXSERIES sets on common bins (several: side by side). */
plot_canvas *plot_fig_hist(const plot_set *s, size_t ns, const plot_opts *o, char *err);

/* A cell's colours and attributes: what its style (a role and flags) stands for in the
 * plot layer's palette. fg and bg are xterm-256 indexes, -1 for the terminal's default. */
typedef struct {
  int fg, bg;
  int bold, underline, reverse;
} plot_colors;
plot_colors plot_style_colors(int style);
/* The canvas as UTF-8 lines with ANSI SGR colours (each line ends with a reset). */
char *plot_canvas_ansi(const plot_canvas *c);
/* SGR parameters ("38;5;208") of a style, or "" for the terminal's default. */
const char *plot_role_sgr(int style, char *buf, size_t len);

/* Quantile q (0..1) of sorted finite v[0..n-1], n >= 1, linear between order
 * statistics (numpy's default). */
double plot_quantile(const double *sorted, size_t n, double q);

/* Axis ticks at round values: 1, 2 or 5 times a power of ten (linear), powers of ten
 * (log). plot_axis_make fills the ticks for data in [lo, hi] (finite, lo <= hi; on a
 * log axis lo > 0) aiming at about `target` ticks; unless `keep`, the range grows to
 * the outer ticks. */
#define PLOT_MAXTICKS 24
typedef struct {
  double lo, hi; /* the axis range */
  int log;
  int n;
  double v[PLOT_MAXTICKS];
  char label[PLOT_MAXTICKS][24];
} plot_axis;
void plot_axis_make(plot_axis *a, double lo, double hi, int log, int target, int keep);
/* Where v falls on the axis, 0 at lo and 1 at hi (not clamped). */
double plot_axis_frac(const plot_axis *a, double v);

#endif
