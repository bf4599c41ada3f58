/* placement.c: the residual-block view (key R; 000 section 15.4, 003 "Placement").
 *
 * A block y = x + W x with the normalization N placed before the branch (pre: x + W N(x))
 * or after the sum (post: N(x + W x)). Their Jacobians side by side,
 *   J_pre = I + W J_N(x)          the identity path skips N: J_N's null space is not lost
 *   J_post = J_N(x + W x)(I + W)  every path goes through N: rank J_post <= rank J_N
 * each as a matrix (when it fits), its singular values as bars and its rank. A thin view of
 * the result record (r->J_pre, r->sv_pre, r->rank_pre, ...): it computes nothing.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui/screen.h"

/* One side: title, formula, matrix, singular values (bars), rank, from line y in columns
 * x .. x+cw-1. Returns the next free line. */
static int side(WINDOW *w, int y, int x, int cw, int ih, const char *name, const char *formula,
                const double *J, const double *sv, int rank, size_t n, int current,
                const tui_view *v) {
  char buf[64];
  tui_printf(w, y++, x, current ? PLOT_S_FOCUS | PLOT_F_BOLD : PLOT_S_TITLE, "%s%s", name,
             current ? "  (the placement now)" : "");
  tui_puts(w, y++, x, PLOT_S_LABEL, formula);
  /* the matrix, when each entry gets 7 columns and enough lines are left for the rest */
  if (n * 7 <= (size_t)cw && (int)(y + n + n + 3) <= ih) {
    for (size_t i = 0; i < n; i++) {
      for (size_t j = 0; j < n; j++) {
        double e = J[i * n + j];
        snprintf(buf, sizeof buf, "%6.3f", fabs(e) < 5e-4 ? 0.0 : e);
        tui_puts(w, y, x + (int)j * 7, e < -5e-4 ? PLOT_S_NEG : PLOT_S_TEXT, buf);
      }
      y++;
    }
  }
  tui_puts(w, y++, x, PLOT_S_DIM, "singular values");
  int shown = (int)n;
  if (y + shown + 1 > ih) shown = ih - y - 1;
  if (shown < 0) shown = 0;
  int barw = cw - 14;
  double top = sv[0] > 0 ? sv[0] : 1;
  for (int k = 0; k < shown; k++) {
    snprintf(buf, sizeof buf, "%.6g", sv[k]);
    if (strlen(buf) > 9) snprintf(buf, sizeof buf, "%.3g", sv[k]);
    tui_printf(w, y + k, x, sv[k] > 1e-10 * top ? PLOT_S_TEXT : PLOT_S_MARK, "s%-2d %s", k + 1,
               buf);
  }
  if (barw >= 4 && shown > 0) {
    plot_canvas *c = tui_canvas(barw, shown, v);
    if (c) {
      plot_bars(c, 0, 0, barw, sv, (size_t)shown, top, NULL);
      tui_blit(w, y, x + 14, c);
      plot_canvas_free(c);
    }
  }
  y += shown;
  if (shown < (int)n && y <= ih) {
    snprintf(buf, sizeof buf, "%.6g", sv[n - 1]);
    tui_printf(w, y++, x, PLOT_S_DIM, "... smallest s%zu %s", n, buf);
  }
  if (y <= ih)
    tui_puts(w, y++, x, rank < (int)n ? PLOT_S_MARK : PLOT_S_GOOD,
             tui_rank(rank, n, buf, sizeof buf));
  return y;
}

void tui_draw_placement(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v) {
  char title[120], kv[16], kl[16];
  snprintf(title, sizeof title,
           "Residual block: where N goes  (%s or Esc closes; %s: none pre post)",
           tui_key_name('D', kv, sizeof kv), tui_field_keys(NS_F_PLACEMENT, kl, sizeof kl));
  tui_frame(w, title, v);
  int iw = tui_iw(w), ih = tui_ih(w);
  char eps[32];
  char wdesc[48];
  if (s->W)
    snprintf(wdesc, sizeof wdesc, "given");
  else
    snprintf(wdesc, sizeof wdesc, "random (w_seed %llu)", (unsigned long long)s->w_seed);
  tui_printf(w, 1, 1, PLOT_S_LABEL, "placement %s   N = %s, eps" TUI_GLUES "%s   W %s",
             ns_placement_names[s->placement], ns_kind_name(s->kind),
             tui_num(s->eps, eps, sizeof eps), wdesc);
  if (!r->resid_done) {
    if (s->placement == NS_PLACE_NONE) {
      char msg[200];
      snprintf(msg, sizeof msg,
               "placement none: the block is x + W x, no normalization. Press %s for pre "
               "(x + W N(x)) or post (N(x + W x)) to see both Jacobians side by side.",
               kl);
      tui_wrap(w, 3, 1, PLOT_S_TEXT, msg, 4);
    } else
      tui_printf(w, 3, 1, PLOT_S_MARK, "no residual block: %s", r->resid_skip);
    return;
  }
  size_t n = r->rn;
  int half = (iw - 3) / 2;
  int pre = s->placement == NS_PLACE_PRE;
  /* the last three lines say which paths pass through J_N */
  int body = ih - 3;
  int y1 = side(w, 3, 1, half, body, "pre: x + W N(x)", "J_pre = I + W J_N(x)", r->J_pre, r->sv_pre,
                r->rank_pre, n, pre, v);
  int y2 = side(w, 3, 3 + half, half, body, "post: N(x + W x)", "J_post = J_N(x+Wx)(I+W)",
                r->J_post, r->sv_post, r->rank_post, n, !pre, v);
  (void)y1;
  (void)y2;
  int y = ih - 1;
  tui_printf(w, y++, 1, PLOT_S_TEXT,
             "pre: the identity path skips N, so J_pre keeps rank %d of %zu", r->rank_pre, n);
  tui_printf(w, y++, 1, PLOT_S_TEXT,
             "post: every path goes through N, so J_post has rank %d (J_N's rank at most)",
             r->rank_post);
}
