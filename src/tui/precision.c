/* precision.c: panel 7, the variance of x by raw moments, two-pass and Welford in the
 * chosen dtypes, against fp64, with the decimal digits each one keeps and loses. */
#include <math.h>
#include <stdio.h>

#include "tui/screen.h"

void tui_draw_precision(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v) {
  char a[32], b[32], title[96];
  /* the sums run in index order (explore's precision probe): numpy's float32 var sums
     pairwise and keeps more digits, so the title says which order these are */
  snprintf(title, sizeof title, "7 Precision: %s, acc %s, sequential", ns_dtype_name(r->prec_dtype),
           ns_dtype_name(r->prec_acc));
  tui_frame(w, title, v);
  int iw = tui_iw(w), ih = tui_ih(w);
  int y = 1;
  /* the reference on a line of its own, and what it is computed on on the next */
  tui_printf(w, y++, 1, PLOT_S_LABEL, "var of all of x, fp64 ref:" TUI_GLUES "%s",
             tui_num(r->var_ref, a, sizeof a));
  if (r->prec_n < r->n) /* a large x: the first values only, and the line says so */
    tui_printf(w, y++, 1, PLOT_S_DIM,
               "(its first" TUI_GLUES "%zu" TUI_GLUES "of" TUI_GLUES "%zu" TUI_GLUES "values)",
               r->prec_n, r->n);
  if (!isfinite(r->var_ref)) { /* digits of a NaN or an overflow mean nothing */
    char msg[120], ku[16];
    snprintf(msg, sizeof msg,
             "x holds NaN or Inf: the variance is undefined, no digits to compare (edit the "
             "cell, or %s to undo)",
             tui_key_name('u', ku, sizeof ku));
    tui_wrap(w, y, 1, PLOT_S_MARK,
             isnan(r->var_ref) ? msg : "the fp64 variance overflows: no digits to compare",
             ih - y + 1);
    return;
  }
  /* digits are counted against what the accumulation dtype holds: an exact result keeps
   * all of them (7.2 in fp32), not 17 */
  double avail = -log10(ns_dtype_eps(r->prec_acc));
  char head[16];
  snprintf(head, sizeof head, "/%.1f", avail);
  tui_printf(w, y++, 1, PLOT_S_DIM, "%-7s %10s %8s %5s %4s %s", "algo", "variance", "rel err",
             "kept", "lost", head);
  static const ns_algo order[3] = {NS_ALGO_RAW, NS_ALGO_TWOPASS, NS_ALGO_WELFORD};
  double digits[3], col[3];
  for (int k = 0; k < 3; k++) col[k] = r->var_algo[order[k]];
  int dec, sci;
  plot_fmt_table_digits(col, 3, 10, 6, &dec, &sci);
  for (int k = 0; k < 3 && y <= ih; k++) {
    ns_algo al = order[k];
    digits[k] = r->var_digits[al] < avail ? r->var_digits[al] : avail;
    double lost = avail - digits[k];
    int bad = lost >= 3;
    char d[16];
    snprintf(d, sizeof d, "%.1f", digits[k] + 0.0); /* no "-0.0" */
    tui_printf(w, y++, 1, bad ? PLOT_S_MARK : PLOT_S_TEXT, "%-7s %10s %8s %5s %4.1f%s",
               ns_algo_name(al), plot_fmt_table(col[k], 10, dec, sci, a, sizeof a),
               plot_fmt(r->var_relerr[al], 8, b, sizeof b), d, lost + 0.0,
               al == s->algo ? (v->ascii ? " <" : " \u25c0") : "");
  }
  /* Digits kept, as bars (longer is better). */
  int barw = iw - 10;
  if (y + 4 <= ih + 1 && barw >= 8) { /* the bars only with their legend */
    plot_canvas *cv = tui_canvas(barw, 3, v);
    if (cv) {
      int styles[3] = {PLOT_S_NEG, PLOT_S_POS, PLOT_S_SERIES3};
      plot_bars(cv, 0, 0, barw, digits, 3, avail, styles);
      for (int k = 0; k < 3; k++)
        tui_printf(w, y + k, 1, PLOT_S_DIM, "%-8s", ns_algo_name(order[k]));
      tui_blit(w, y, 10, cv);
      plot_canvas_free(cv);
    }
    y += 3;
  }
  if (y <= ih) tui_printf(w, y++, 1, PLOT_S_DIM, "bars: digits kept, of %.1f", avail);
  /* the one framework case these numbers are not: say it where bf16 is chosen */
  if (r->prec_dtype == NS_BF16 && y <= ih) {
    const char *note = "torch with bf16 weights too rounds its statistics to bf16: not emulated";
    if (tui_wrap_lines(w, 1, note) > ih - y + 1) note = "not torch's all-bf16 modules (bf16 stats)";
    tui_wrap(w, y, 1, PLOT_S_DIM, note, ih - y + 1);
  }
}
