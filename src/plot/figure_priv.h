/* figure_priv.h: what the figure kinds share (not a public interface): the figure under
 * construction, its notes, the legend, and the frame of a plot with two axes. */
#ifndef NS_PLOT_FIGURE_PRIV_H
#define NS_PLOT_FIGURE_PRIV_H

#include "plot/figure.h"

#define FIG_NOTELEN 1024

typedef struct {
  plot_canvas *c;
  const plot_opts *o;
  int W, H;
  int ascii, braille;
  char note[FIG_NOTELEN]; /* words below the figure, sentences joined by "; " */
} fig;

/* A legend entry: a glyph (UTF-8) and a name. */
typedef struct {
  const char *glyph;
  const char *name;
  int style;
} fig_entry;

/* The plot area of a two-axis figure and its axes. Rows: title, ylabel, ph rows of
 * plot, the x axis line, its tick labels, xlabel, legend, notes. */
typedef struct {
  int top, ph;  /* first row and height of the plot area */
  int axis, pw; /* the y axis column; the plot area is columns axis+1 .. axis+pw */
  int sx, sy;   /* sub-cell resolution of the dots */
  int below;    /* first row after the tick labels (xlabel, legend, notes) */
  plot_axis ax, ay;
} fig_frame;

/* Creates the canvas (o->width x o->height, at least 1 x 1); -1 with err on no memory. */
int fig_start(fig *f, const plot_opts *o, char *err);
/* Appends a sentence to the notes. */
void fig_note(fig *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "2 NaN values left out" and friends, for counts that are not zero; `what` is the
 * plural noun ("values", "points"). */
void fig_note_left_out(fig *f, size_t nan, size_t inf, size_t nonpos, size_t outside,
                       const char *what);
/* How many of `total` items (one row each) fit when `fixed` other rows are taken,
 * with the notes below them; when some do not fit, notes "N <noun> left out (height
 * H)". Returns the items shown (at least 1 when total > 0). */
size_t fig_fit(fig *f, int fixed, size_t total, const char *noun);
/* Rows that text needs wrapped at width w (0 for empty text). */
int fig_wrap_rows(const char *text, int w);
/* Writes text wrapped at width w from row y, at most maxrows rows; returns rows used. */
int fig_wrap(fig *f, int y, const char *text, int style, int maxrows);
/* Rows the legend needs at the figure's width, and drawing it from row y. */
int fig_legend_rows(const fig *f, const fig_entry *e, int n);
int fig_legend(fig *f, int y, const fig_entry *e, int n);
/* 1 when a legend is shown for n series (o->legend, or auto: n > 1 or a label given). */
int fig_want_legend(const fig *f, int n, int labelled);
/* Title (and ylabel) rows from the top; returns the next row. */
int fig_heading(fig *f, int with_ylabel);
/* A figure with nothing to draw: the heading and the reason in words. */
plot_canvas *fig_empty(fig *f, const char *why);
/* Lays out a two-axis frame for the data ranges (xlo..xhi, ylo..yhi) with legend_rows
 * reserved; draws the axes, ticks and labels. Returns 0, or -1 when the box is too
 * small (the figure then says so). */
int fig_frame_make(fig *f, fig_frame *fr, double xlo, double xhi, int xlog, int xkeep, double ylo,
                   double yhi, int ylog, int ykeep, int legend_rows);
/* Sub-cell position of a value on the frame's axes (clamped to the area). */
int fig_px(const fig_frame *fr, double x);
int fig_py(const fig_frame *fr, double y);
/* Drops rows below the last one used and returns the canvas. */
plot_canvas *fig_finish(fig *f, int rows);
/* Draws the notes from row y; returns the next row. */
int fig_notes(fig *f, int y);
/* A series' marker (UTF-8, ASCII in ASCII mode) and its style. */
const char *fig_marker(const fig *f, int k);
uint32_t fig_marker_cp(const fig *f, int k);
int fig_series_style(int k);
/* The name of series k: its own label, o->labels[k], or "series k+1" (buf). */
const char *fig_label(const fig *f, int k, const char *own, char *buf, size_t len);
/* Formats v in at most width characters (plot_fmt, but "-0" prints as "0"). */
char *fig_num(double v, int width, char *buf, size_t len);

#endif
