/* evalshift.c: the train/eval view with a shifted evaluation distribution (key V; 002
 * "Evaluation uses the training reference distribution", 000 exercise 4).
 *
 * rng source: the running statistics come from train_batches draws of N(train_loc,
 * train_scale), the evaluation batch from N(eval_loc, eval_scale). Normalizing the eval
 * batch with the running statistics instead of its own misses by the gap, which splits
 * into
 *   est_gap    max|y(running) - y(exact training distribution)|: a finite sample's error
 *   shift_gap  max|y(exact training distribution) - y(own statistics)|: the shift's cost
 * batch source: one training step of a fresh module on the batch matrix as it is, then
 * eval on the same matrix: the outputs differ (002's "BN train/eval outputs equal:
 * False"). A thin view of the result record: it computes nothing.
 */
#include <math.h>
#include <stdio.h>

#include "tui/screen.h"

static const char *g6(double v, char *buf, size_t len) {
  if (isnan(v))
    snprintf(buf, len, "-");
  else
    snprintf(buf, len, "%.6g", v);
  return buf;
}

static double mean_of(const double *v, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; i++) s += v[i];
  return n ? s / (double)n : NAN;
}

void tui_draw_evalshift(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v) {
  char title[100], kv[16], kl[16], ks[16], kb[16];
  snprintf(title, sizeof title, "Train/eval: a shifted evaluation distribution  (%s or Esc closes)",
           tui_key_name('V', kv, sizeof kv));
  tui_frame(w, title, v);
  int iw = tui_iw(w), ih = tui_ih(w);
  char a[32], b[32], c[32], d[32];
  int y = 1;
  if (!r->est[0].name) {
    tui_puts(w, y, 1, PLOT_S_MARK, "no train/eval result");
    return;
  }
  size_t E = r->eval_n, D = r->train_d;
  if (s->train_source == NS_SOURCE_RNG) {
    tui_printf(w, y++, 1, PLOT_S_LABEL,
               "training: %d batches of %d draws of N(%s, %s), seed" TUI_GLUES "%llu",
               s->train_batches, s->batch_size, g6(s->train_loc, a, sizeof a),
               g6(s->train_scale, b, sizeof b), (unsigned long long)s->seed);
    tui_printf(w, y++, 1, PLOT_S_POS, "evaluation: %zu draws of N(%s, %s)%s", E,
               g6(r->eval_loc_used, a, sizeof a), g6(r->eval_scale_used, b, sizeof b),
               isnan(s->eval_loc) && isnan(s->eval_scale) ? "  (the training distribution)" : "");
    tui_printf(w, y++, 1, PLOT_S_DIM,
               "%s eval_loc -/+1   %s eval_scale /2 x2   set{eval_size=} at the prompt",
               tui_field_keys(NS_F_EVAL_LOC, kl, sizeof kl),
               tui_field_keys(NS_F_EVAL_SCALE, ks, sizeof ks));
  } else {
    tui_printf(w, y++, 1, PLOT_S_LABEL, "training: %s on the %zux%zu batch matrix",
               s->train_source == NS_SOURCE_BATCH ? "one step of a fresh module" : "resampled rows",
               s->batch->shape[0], s->batch->shape[1]);
    tui_printf(w, y++, 1, PLOT_S_POS, "evaluation: the same %zu rows", E);
    tui_printf(w, y++, 1, PLOT_S_DIM, "%s: training source rng / batch / resample",
               tui_field_keys(NS_F_TRAIN_SOURCE, kb, sizeof kb));
  }
  y++;
  /* the eval batch's mean output under each normalization (feature 1 for a matrix) */
  if (r->eval_y && r->est[2].y && D == 1)
    tui_printf(w, y++, 1, PLOT_S_TEXT, "mean eval output: stored (exact) stats %s   own stats %s",
               g6(mean_of(r->est[2].y, E), a, sizeof a), g6(mean_of(r->eval_y, E), b, sizeof b));
  if (s->train_source == NS_SOURCE_BATCH) {
    double gap = r->est[0].gap;
    tui_printf(w, y++, 1, gap > 0 ? PLOT_S_MARK : PLOT_S_GOOD,
               "BN train/eval outputs equal: %s   (max |train - eval| %s, momentum %g)",
               gap > 0 ? "False" : "True", g6(gap, a, sizeof a), s->momentum);
    tui_printf(w, y++, 1, PLOT_S_DIM, "running mean[1] %s = momentum x batch mean; var[1] %s",
               g6(r->est[0].mean[0], a, sizeof a), g6(r->est[0].var[0], b, sizeof b));
  }
  y++;
  tui_printf(w, y++, 1, PLOT_S_DIM, "%-12s %12s %12s %12s", "running", "gap", "estimator", "shift");
  double bars[6];
  int n = 0;
  for (int k = 0; k < 3 && r->est[k].name; k++, n++) {
    tui_printf(w, y++, 1, k == r->est_active ? PLOT_S_POS : PLOT_S_TEXT, "%-12s %12s %12s %12s",
               r->est[k].name, g6(r->est[k].gap, a, sizeof a), g6(r->est_gap[k], b, sizeof b),
               g6(r->shift_gap, c, sizeof c));
    bars[2 * k] = isnan(r->est_gap[k]) ? 0 : r->est_gap[k];
    bars[2 * k + 1] = isnan(r->shift_gap) ? 0 : r->shift_gap;
  }
  (void)d;
  tui_puts(w, y++, 1, PLOT_S_DIM,
           "gap max|y(running) - y(own)| <= estimator max|y(running) - y(exact dist.)|");
  tui_puts(w, y++, 1, PLOT_S_DIM,
           "  + shift max|y(exact dist.) - y(own)| (unshifted: the eval batch's own noise)");
  if (isnan(r->shift_gap)) {
    tui_printf(w, y++, 1, PLOT_S_DIM,
               "the split needs the rng source: a batch has no exact distribution (%s switches)",
               tui_field_keys(NS_F_TRAIN_SOURCE, kb, sizeof kb));
    return;
  }
  /* estimator and shift parts as bars, two per estimator */
  int barw = iw - 24;
  if (barw >= 8 && y + 2 * n <= ih) {
    plot_canvas *cv = tui_canvas(barw, 2 * n, v);
    if (cv) {
      int styles[6];
      for (int k = 0; k < n; k++) {
        styles[2 * k] = PLOT_S_SERIES0;
        styles[2 * k + 1] = PLOT_S_SERIES1;
      }
      double top = 0;
      for (int k = 0; k < 2 * n; k++)
        if (bars[k] > top) top = bars[k];
      plot_bars(cv, 0, 0, barw, bars, (size_t)(2 * n), top > 0 ? top : 1, styles);
      for (int k = 0; k < n; k++) {
        tui_printf(w, y + 2 * k, 1, PLOT_S_DIM, "%-10.10s estimator", r->est[k].name);
        tui_printf(w, y + 2 * k + 1, 1, PLOT_S_DIM, "%-10.10s shift", "");
      }
      tui_blit(w, y, 24, cv);
      plot_canvas_free(cv);
    }
  }
}
