/* precision.c: panel 7, the variance of x by raw moments, two-pass and Welford in the
 * chosen dtypes, against fp64, with the decimal digits each one keeps and loses. */
#include <math.h>
#include <stdio.h>

#include "tui/screen.h"

void tui_draw_precision(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v) {
  char a[32], b[32], title[96];
  snprintf(title, sizeof title, "7 Precision: %s, acc %s", ns_dtype_name(r->prec_dtype),
           ns_dtype_name(r->prec_acc));
  tui_frame(w, title, v);
  int iw = tui_iw(w), ih = tui_ih(w);
  int y = 1;
  if (r->prec_n < r->n) /* a large x: the first values only, and the line says so */
    tui_printf(w, y++, 1, PLOT_S_LABEL, "first %zu/%zu values: fp64 ref %s", r->prec_n, r->n,
               tui_num(r->var_ref, a, sizeof a));
  else
    tui_printf(w, y++, 1, PLOT_S_LABEL, "fp64 two-pass reference: %s",
               tui_num(r->var_ref, a, sizeof a));
  if (!isfinite(r->var_ref)) { /* digits of a NaN or an overflow mean nothing */
    tui_wrap(w, y, 1, PLOT_S_MARK,
             isnan(r->var_ref) ? "x holds NaN or Inf: the variance is undefined, no digits to "
                                 "compare (edit the cell, or u to undo)"
                               : "the fp64 variance overflows: no digits to compare",
             ih - y + 1);
    return;
  }
  tui_printf(w, y++, 1, PLOT_S_DIM, "%-7s %10s %8s %5s %4s", "algo", "variance", "rel err", "kept",
             "lost");
  static const ns_algo order[3] = {NS_ALGO_RAW, NS_ALGO_TWOPASS, NS_ALGO_WELFORD};
  double digits[3], col[3];
  for (int k = 0; k < 3; k++) col[k] = r->var_algo[order[k]];
  int dec, sci;
  plot_fmt_table_digits(col, 3, 10, 6, &dec, &sci);
  for (int k = 0; k < 3 && y <= ih; k++) {
    ns_algo al = order[k];
    digits[k] = r->var_digits[al];
    int bad = r->var_lost[al] >= 3;
    char d[16];
    snprintf(d, sizeof d, "%.1f", r->var_digits[al] + 0.0); /* no "-0.0" */
    tui_printf(w, y++, 1, bad ? PLOT_S_MARK : PLOT_S_TEXT, "%-7s %10s %8s %5s %4.1f%s",
               ns_algo_name(al), plot_fmt_table(col[k], 10, dec, sci, a, sizeof a),
               plot_fmt(r->var_relerr[al], 8, b, sizeof b), d, r->var_lost[al],
               al == s->algo ? (v->ascii ? " <" : " \u25c0") : "");
  }
  /* Digits kept, as bars (longer is better). */
  int barw = iw - 10;
  if (y + 3 <= ih + 1 && barw >= 8) {
    plot_canvas *cv = tui_canvas(barw, 3, v);
    if (cv) {
      int styles[3] = {PLOT_S_NEG, PLOT_S_POS, PLOT_S_SERIES3};
      plot_bars(cv, 0, 0, barw, digits, 3, NS_EXPLORE_DIGITS_CAP, styles);
      for (int k = 0; k < 3; k++)
        tui_printf(w, y + k, 1, PLOT_S_DIM, "%-8s", ns_algo_name(order[k]));
      tui_blit(w, y, 10, cv);
      plot_canvas_free(cv);
    }
    y += 3;
  }
  if (y <= ih) tui_puts(w, y++, 1, PLOT_S_DIM, "decimal digits kept (t dtype, T acc, v algo)");
}
