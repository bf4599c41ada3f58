/* panelfig.h: the figure of each panel, composed from the state and its result into one
 * canvas of cells (plot/plot.h), without curses or Lua: the screen's figure view paints
 * it, plot(panel) at the prompt, in a lesson or on a headless ns.explorer() returns it as
 * text. The panels are the explorer's views of one state; this file declares their names
 * once (set{focus=}, get(), a lesson step's focus and plot(panel) all read them here).
 *
 *   input      histograms of x and y; per channel (axis 2) for a tensor of rank 3 or 4;
 *              for those and a loaded matrix, bars of the per-channel mean and variance
 *              of x and of y below (an axis mistake leaves y's not 0 and 1)
 *   output     x, y, y(x+b) and y(ax) per coordinate (settings shows this one too)
 *   spectrum   the closed-form eigenvalues against eps (log axes), the current eps marked;
 *              beside them the amplitude of N(a x) against a for two eps
 *   batch      batch-norm and layer-norm heatmaps of the batch, side by side
 *   train      the running mean and variance against the number of merged batches; beside
 *              them eval-mode against train-mode outputs on the evaluation batch
 *   precision  the variance by raw moments, two-pass and Welford against an offset added
 *              to x (log axis), relative to the exact variance
 *
 * Ownership: the state and result are borrowed and never changed (the sweeps over eps,
 * the input scale and the offset run on local copies); the canvas returned is the
 * caller's (plot_canvas_free). A typical call:
 *
 *   ns_panelfig_opts o;
 *   ns_panelfig_opts_init(&o);
 *   o.panel = NS_PANEL_SPECTRUM, o.width = 100, o.height = 30;
 *   plot_canvas *c = ns_panel_figure(&state, &result, &o, err);   // result computed for state
 *   char *text = plot_canvas_text(c);  ...  free(text);  plot_canvas_free(c);
 */
#ifndef NS_EXPLORE_PANELFIG_H
#define NS_EXPLORE_PANELFIG_H

#include <stddef.h>

#include "explore/result.h"
#include "explore/state.h"
#include "plot/figure.h"

/* The panels, in screen order (the screen's tui_panel and its descriptors, tui/panels.c,
 * follow it), once: P(ID, name, figure). name is what set{focus = ...}, get() and
 * plot(panel) read; figure is the panelfig.c function that composes the panel's figure
 * (settings has none of its own: the output's). */
#define NS_PANELS(P)                                                                               \
  P(INPUT, "input", fig_input)                                                                     \
  P(SETTINGS, "settings", fig_output)                                                              \
  P(OUTPUT, "output", fig_output)                                                                  \
  P(SPECTRUM, "spectrum", fig_spectrum)                                                            \
  P(BATCH, "batch", fig_batch)                                                                     \
  P(TRAIN, "train", fig_train)                                                                     \
  P(PRECISION, "precision", fig_precision)
#define NS_PANEL_ENUM_(ID, name, figure) NS_PANEL_##ID,
typedef enum { NS_PANELS(NS_PANEL_ENUM_) NS_PANEL_COUNT } ns_panel;
#undef NS_PANEL_ENUM_
/* Their names, by ns_panel, NULL-terminated. */
extern const char *const ns_panel_names[];

/* Smallest box a panel figure is composed in. */
#define NS_PANELFIG_MIN_W 20
#define NS_PANELFIG_MIN_H 6

typedef struct {
  ns_panel panel;
  int width, height; /* the box the figure fills: width x height cells */
  plot_glyphs glyphs;
  int color; /* the consumer shows colours (a heatmap then explains them) */
  /* The input figure keeps the channel of this element of x among its histograms: row
   * and column (0-based) of x read as a matrix whose columns are its last axis, as the
   * input panel shows it (the screen passes its cursor; out-of-range values clamp). */
  size_t row, col;
} ns_panelfig_opts;

/* The output panel, 100 x 30, blocks, no colour, element (0, 0). */
void ns_panelfig_opts_init(ns_panelfig_opts *o);

/* The figure of panel o->panel for state s and its result r (ns_explore_compute of s):
 * a new canvas of exactly o->width x o->height cells (ASCII only with PLOT_GLYPHS_ASCII),
 * empty cells where nothing is drawn. What a part cannot draw is said in words in its
 * place ("no closed form for this spec"). NULL with err (NS_ERRLEN) only for a bad
 * argument (NULL pointers, an unknown panel, a box below NS_PANELFIG_MIN_W x
 * NS_PANELFIG_MIN_H) or when memory runs out. */
plot_canvas *ns_panel_figure(const ns_state *s, const ns_result *r, const ns_panelfig_opts *o,
                             char *err);

#endif
