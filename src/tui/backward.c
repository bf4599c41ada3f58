/* backward.c: the backward-pass view (key B; 003 "The forward pass as an algorithm").
 *
 * For the upstream gradient g = dL/dy, dL/dx in closed form and split into its three
 * paths: direct (through x_hat's numerator, gamma g / s), through the mean and through
 * the variance (the denominator s). Per element a table and a signed bar of dL/dx, then
 * the checks: dL/dx sums to 0 per statistic (a centered kind ignores shifts), is
 * orthogonal to x_hat per statistic (with eps 0 it ignores scale) and equals J^T g. A thin
 * view of the result record (r->dx, r->dx_direct, ...): it computes nothing.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui/screen.h"

/* v in at most 9 columns: 6 significant digits, fewer when that is too wide. */
static const char *num9(double v, char *buf, size_t len) {
  snprintf(buf, len, "%.6g", v);
  if (strlen(buf) > 9) snprintf(buf, len, "%.3g", v);
  return buf;
}

/* A check line: the value and whether it is ~0 (below tol). */
static void check_line(WINDOW *w, int y, const char *what, double v, double tol, const char *why) {
  char b[32];
  int good = fabs(v) <= tol;
  tui_printf(w, y, 1, good ? PLOT_S_GOOD : PLOT_S_MARK, "%-36s %-9s %s", what, num9(v, b, sizeof b),
             good ? why : "not ~ 0");
}

void tui_draw_backward(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v) {
  char title[100], kv[16];
  snprintf(title, sizeof title, "Backward pass: dL/dx and its three paths  (%s or Esc closes)",
           tui_key_name('B', kv, sizeof kv));
  tui_frame(w, title, v);
  int iw = tui_iw(w), ih = tui_ih(w);
  char eps[32];
  tui_printf(w, 1, 1, PLOT_S_LABEL, "%s, eps" TUI_GLUES "%s, %zu values; upstream g = dL/dy %s",
             ns_kind_name(s->kind), tui_num(s->eps, eps, sizeof eps), s->x->n,
             s->upstream ? "given" : "random (w_seed)");
  if (!r->vjp_done) {
    tui_printf(w, 3, 1, PLOT_S_MARK, "no backward pass: %s", r->vjp_skip);
    return;
  }
  tui_puts(w, 2, 1, PLOT_S_DIM,
           "dL/dx = direct (g through x_hat) + via the mean + via the variance");
  int y = 3;
  tui_printf(w, y++, 1, PLOT_S_DIM, "%4s %9s %9s %9s %9s %9s %9s", "i", "x", "g", "dL/dx", "direct",
             "via mean", "via var");
  /* the checks take the last four lines */
  int rows = ih - 4 - y + 1;
  size_t n = r->vn, shown = n < (size_t)(rows > 0 ? rows : 0) ? n : (size_t)(rows > 0 ? rows : 0);
  if (shown < n && shown > 0) shown--; /* room for "... more" */
  int barx = 1 + 4 + 6 * 10 + 2, barw = iw - barx;
  double big = 0;
  for (size_t i = 0; i < n; i++)
    if (fabs(r->dx[i]) > big) big = fabs(r->dx[i]);
  char b[6][32];
  for (size_t i = 0; i < shown; i++) {
    tui_printf(w, y + (int)i, 1, PLOT_S_TEXT, "%4zu %9s %9s %9s %9s %9s %9s", i + 1,
               num9(ns_tensor_get(s->x, i), b[0], 32), num9(r->g[i], b[1], 32),
               num9(r->dx[i], b[2], 32), num9(r->dx_direct[i], b[3], 32),
               num9(r->dx_mean[i], b[4], 32), num9(r->dx_var[i], b[5], 32));
  }
  if (barw >= 4 && shown > 0) {
    plot_canvas *c = tui_canvas(barw, (int)shown, v);
    if (c) {
      plot_bars(c, 0, 0, barw, r->dx, shown, big > 0 ? big : 1, NULL);
      tui_blit(w, y, barx, c);
      plot_canvas_free(c);
    }
  }
  y += (int)shown;
  if (shown < n) tui_printf(w, y++, 1, PLOT_S_DIM, "... %zu more (result().backward)", n - shown);
  y = ih - 3;
  ns_spec sp;
  ns_state_spec(s, &sp);
  int centered = ns_spec_center(&sp);
  double tol = 1e-9 * (big > 0 ? big : 1);
  if (centered)
    check_line(w, y++, "sum of dL/dx per statistic, max |.|", r->dx_sum_max, tol,
               "~ 0: shifts change no output");
  else
    tui_printf(w, y++, 1, PLOT_S_DIM, "%-36s %-9s %s", "sum of dL/dx per statistic, max |.|",
               num9(r->dx_sum_max, b[0], 32), "uncentered: shifts count");
  if (s->eps == 0)
    check_line(w, y++, "dL/dx . x_hat per statistic, max |.|", r->dx_xhat_max, tol,
               "~ 0: scale changes nothing");
  else
    tui_printf(w, y++, 1, PLOT_S_DIM, "%-36s %-9s %s", "dL/dx . x_hat per statistic, max |.|",
               num9(r->dx_xhat_max, b[0], 32), "eps > 0: scale counts a bit");
  if (isnan(r->vjp_vs_jtg))
    tui_printf(w, y++, 1, PLOT_S_DIM, "J^T g: not computed (%s)",
               r->jac_skip[0] ? r->jac_skip : "no Jacobian");
  else
    check_line(w, y++, "agreement with J^T g, max |dx-J^T g|", r->vjp_vs_jtg, tol, "~ 0: agrees");
  if (r->naffine > 0)
    tui_printf(w, y, 1, PLOT_S_DIM, "dL/dgamma[1] %s   dL/dbeta[1] %s   (%zu each)",
               num9(r->dgamma[0], b[0], 32), num9(r->dbeta[0], b[1], 32), r->naffine);
}
