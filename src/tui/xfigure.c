/* xfigure.c: the figure view (f) of an experiment view, drawn with the plot
 * layer from the state and result like the panels' figures (figure.c):
 *   residual block  J_pre and J_post as heatmaps side by side
 *   backward pass   dL/dx and its three paths as a heatmap (one row per element)
 *   shifted eval    histograms of the evaluation outputs under the stored (exact)
 *                   statistics and under the batch's own
 * The deep-stack view is made of figures already; f shows it as it is.
 */
#include <stdio.h>
#include <stdlib.h>

#include "plot/figure.h"
#include "tui/screen.h"

static void fig_resid(const ns_result *r, WINDOW *w, int iw, int ih, const tui_view *v, char *err) {
  if (!r->resid_done) {
    tui_printf(w, 1, 1, PLOT_S_MARK, "no residual block: %s", r->resid_skip);
    return;
  }
  int half = (iw - 2) / 2;
  char tp[64], tq[64];
  snprintf(tp, sizeof tp, "J_pre = I + W J_N(x)  (rank %d)", r->rank_pre);
  snprintf(tq, sizeof tq, "J_post = J_N(x+Wx)(I+W)  (rank %d)", r->rank_post);
  plot_opts o;
  tui_fig_opts(&o, half, ih, v, tp);
  tui_fig_paint(w, 1, 1, plot_fig_heatmap(r->J_pre, r->rn, r->rn, &o, err), err);
  tui_fig_opts(&o, half, ih, v, tq);
  tui_fig_paint(w, 1, 3 + half, plot_fig_heatmap(r->J_post, r->rn, r->rn, &o, err), err);
}

static void fig_backward(const ns_result *r, WINDOW *w, int iw, int ih, const tui_view *v,
                         char *err) {
  if (!r->vjp_done) {
    tui_printf(w, 1, 1, PLOT_S_MARK, "no backward pass: %s", r->vjp_skip);
    return;
  }
  size_t n = r->vn, rows = n < 256 ? n : 256;
  double *m = malloc(rows * 5 * sizeof *m);
  if (!m) return;
  for (size_t i = 0; i < rows; i++) {
    m[i * 5 + 0] = r->g[i];
    m[i * 5 + 1] = r->dx[i];
    m[i * 5 + 2] = r->dx_direct[i];
    m[i * 5 + 3] = r->dx_mean[i];
    m[i * 5 + 4] = r->dx_var[i];
  }
  static const char *const cols[5] = {"g", "dL/dx", "direct", "via mean", "via var"};
  char title[96];
  snprintf(title, sizeof title, "upstream g and dL/dx = direct + via mean + via var%s",
           rows < n ? " (first 256)" : "");
  plot_opts o;
  tui_fig_opts(&o, iw, ih, v, title);
  o.labels = cols;
  o.nlabels = 5;
  tui_fig_paint(w, 1, 1, plot_fig_heatmap(m, rows, 5, &o, err), err);
  free(m);
}

static void fig_shift(const ns_state *s, const ns_result *r, WINDOW *w, int iw, int ih,
                      const tui_view *v, char *err) {
  if (!r->eval_y || !r->est[2].y) {
    tui_puts(w, 1, 1, PLOT_S_MARK, "no train/eval result");
    return;
  }
  size_t n = r->eval_n * r->train_d;
  plot_set sets[2] = {{r->est[2].y, n, "y(stored stats)"}, {r->eval_y, n, "y(own stats)"}};
  char title[128];
  if (s->train_source == NS_SOURCE_RNG)
    snprintf(title, sizeof title, "evaluation outputs, eval N(%g, %g) against training N(%g, %g)",
             r->eval_loc_used, r->eval_scale_used, s->train_loc, s->train_scale);
  else
    snprintf(title, sizeof title, "evaluation outputs on the batch matrix");
  plot_opts o;
  tui_fig_opts(&o, iw, ih, v, title);
  tui_fig_paint(w, 1, 1, plot_fig_hist(sets, 2, &o, err), err);
}

void tui_draw_xfigure(const ns_state *s, const ns_result *r, tui_stack_data *stack, int xview,
                      WINDOW *w, const tui_view *v) {
  if (xview == TUI_XV_STACK) {
    tui_draw_stack(stack, w, v);
    return;
  }
  static const char *const names[TUI_XV_COUNT] = {"", "residual block", "backward pass",
                                                  "shifted evaluation", "deep stacks"};
  char title[96], kf[16];
  snprintf(title, sizeof title, "Figure: %s  (live; %s returns to the view, Esc closes)",
           xview > 0 && xview < TUI_XV_COUNT ? names[xview] : "?",
           tui_key_name('f', kf, sizeof kf));
  tui_view fv = *v;
  fv.focused = 1;
  tui_frame(w, title, &fv);
  int iw = tui_iw(w), ih = tui_ih(w);
  char err[PLOT_ERRLEN] = "";
  if (xview == TUI_XV_PLACEMENT)
    fig_resid(r, w, iw, ih, v, err);
  else if (xview == TUI_XV_BACKWARD)
    fig_backward(r, w, iw, ih, v, err);
  else
    fig_shift(s, r, w, iw, ih, v, err);
}
