/* figure.c: the figure view: the focused panel's figure, drawn large and redrawn from the
 * state and result at every change, like a panel. What each panel's figure shows, and how
 * it is composed, is explore/panelfig.c's (plot(panel) returns the same cells as text);
 * this file frames it and paints it. Settings has no figure of its own; it shows the
 * output's. tui_fig_opts and tui_fig_paint serve the experiment views' figures
 * (xfigure.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore/panelfig.h"
#include "plot/figure.h"
#include "tui/screen.h"

_Static_assert((int)TUI_PANEL_COUNT == (int)NS_PANEL_COUNT, "one panel list");

void tui_fig_opts(plot_opts *o, int w, int h, const tui_view *v, const char *title) {
  plot_opts_init(o);
  o->width = w;
  o->height = h;
  o->glyphs = v->ascii ? PLOT_GLYPHS_ASCII : PLOT_GLYPHS_BLOCKS;
  o->color = v->colors > 0;
  o->title = title;
}

void tui_fig_paint(WINDOW *w, int y, int x, plot_canvas *c, const char *err) {
  if (!c) {
    tui_puts(w, y, x, PLOT_S_MARK, err[0] ? err : "no figure");
    return;
  }
  tui_blit(w, y, x, c);
  plot_canvas_free(c);
}

/* The panel figure options of the view: its glyphs, colours and cursor. */
static void panelfig_opts(ns_panelfig_opts *o, tui_panel p, int w, int h, const tui_view *v) {
  ns_panelfig_opts_init(o);
  o->panel = (ns_panel)p;
  o->width = w;
  o->height = h;
  o->glyphs = v->ascii ? PLOT_GLYPHS_ASCII : PLOT_GLYPHS_BLOCKS;
  o->color = v->colors > 0;
  o->row = v->vs->cursor_row < 0 ? 0 : (size_t)v->vs->cursor_row;
  o->col = v->vs->cursor_col < 0 ? 0 : (size_t)v->vs->cursor_col;
}

void tui_draw_figure(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v) {
  tui_panel p = v->vs->focus;
  if (p == TUI_PANEL_SETTINGS) p = TUI_PANEL_OUTPUT;
  char title[96], kf[16], kt[16];
  snprintf(title, sizeof title, "Figure: %s  (live; %s or Esc closes, %s the next panel's)",
           tui_panel_title(p), tui_key_name('f', kf, sizeof kf), tui_key_name('\t', kt, sizeof kt));
  tui_view fv = *v;
  fv.focused = 1;
  tui_frame(w, title, &fv);
  ns_panelfig_opts o;
  panelfig_opts(&o, p, tui_iw(w), tui_ih(w), v);
  char err[NS_ERRLEN] = "";
  tui_fig_paint(w, 1, 1, ns_panel_figure(s, r, &o, err), err);
}
