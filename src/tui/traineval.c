/* traineval.c: panel 6, running statistics after the training batches, and one
 * evaluation batch normalized under its own statistics and under each estimator. */
#include <math.h>
#include <stdio.h>

#include "tui/screen.h"

void tui_draw_traineval(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v) {
  char a[32], b[32], c[32];
  tui_frame(w, "6 Train/eval", v);
  int iw = tui_iw(w), ih = tui_ih(w);
  int y = 1;
  /* where the training batches came from, one line for each source (short enough for the
     panel at 120x40, where the seed used to be cut off) */
  if (s->train_source == NS_SOURCE_RNG)
    tui_printf(w, y++, 1, PLOT_S_LABEL,
               "%d x %d of N(%g, std" TUI_GLUES "%g), seed" TUI_GLUES "%llu", s->train_batches,
               s->batch_size, s->train_loc, s->train_scale, (unsigned long long)s->seed);
  else if (s->train_source == NS_SOURCE_BATCH)
    tui_printf(w, y++, 1, PLOT_S_LABEL, "one step on the %zux%zu batch matrix", s->batch->shape[0],
               s->batch->shape[1]);
  else
    tui_printf(w, y++, 1, PLOT_S_LABEL, "%d x %d rows drawn from the %zux%zu batch",
               s->train_batches, s->batch_size, s->batch->shape[0], s->batch->shape[1]);
  if (!r->est[0].name) {
    tui_puts(w, y, 1, PLOT_S_MARK, "no train/eval result");
    return;
  }
  if (r->eval_mean && r->eval_var)
    tui_printf(w, y++, 1, PLOT_S_TEXT, "eval (%zu): own mean %s var %s", r->eval_n,
               plot_fmt(r->eval_mean[0], 6, a, sizeof a), plot_fmt(r->eval_var[0], 6, b, sizeof b));
  tui_printf(w, y++, 1, PLOT_S_DIM, "%-10s %8s %8s %8s", "running", "mean", "var", "gap");
  double gaps[3];
  int n = 0;
  for (int k = 0; k < 3 && r->est[k].name; k++) n = k + 1;
  /* each column in one format */
  double col[3][3];
  int dec[3], sci[3];
  for (int k = 0; k < n; k++) {
    col[0][k] = r->est[k].mean ? r->est[k].mean[0] : NAN;
    col[1][k] = r->est[k].var ? r->est[k].var[0] : NAN;
    col[2][k] = r->est[k].gap;
  }
  for (int j = 0; j < 3; j++) plot_fmt_table_digits(col[j], (size_t)n, 8, 4, &dec[j], &sci[j]);
  for (int k = 0; k < n && y <= ih; k++) {
    const ns_estimator *e = &r->est[k];
    char name[32];
    if (k == 0 && !s->cumulative)
      snprintf(name, sizeof name, "mom. %g", s->momentum);
    else
      snprintf(name, sizeof name, "%s", e->name);
    int active = k == r->est_active;
    tui_printf(w, y, 1, active ? PLOT_S_POS : PLOT_S_TEXT, "%-10.10s %8s %8s %8s%s", name,
               e->mean ? plot_fmt_table(col[0][k], 8, dec[0], sci[0], a, sizeof a) : "-",
               e->var ? plot_fmt_table(col[1][k], 8, dec[1], sci[1], b, sizeof b) : "-",
               plot_fmt_table(col[2][k], 8, dec[2], sci[2], c, sizeof c),
               active ? (v->ascii ? " <" : " \u25c0") : "");
    gaps[k] = e->gap;
    y++;
  }
  /* what the gap is comes before the bars, and the key line stays last: one line each */
  if (y + 1 <= ih) tui_wrap(w, y++, 1, PLOT_S_DIM, "gap: max|y(running) - y(own stats)|", 1);
  /* The gaps as bars: how far eval-mode outputs land from the batch's own. */
  int barw = iw - 14;
  if (y + n <= ih && barw >= 8) {
    plot_canvas *cv = tui_canvas(barw, n, v);
    if (cv) {
      int styles[3] = {PLOT_S_SERIES0, PLOT_S_SERIES1, PLOT_S_SERIES2};
      plot_bars(cv, 0, 0, barw, gaps, (size_t)n, 0, styles);
      for (int k = 0; k < n; k++) tui_printf(w, y + k, 1, PLOT_S_DIM, "gap %-8.8s", r->est[k].name);
      tui_blit(w, y, 14, cv);
      plot_canvas_free(cv);
    }
    y += n;
  }
  if (y <= ih) {
    char km[16], kj[16], kr[16];
    tui_field_keys(NS_F_MODE, km, sizeof km);
    tui_field_keys(NS_F_TRAIN_BATCHES, kj, sizeof kj);
    tui_field_keys(NS_F_SEED, kr, sizeof kr);
    if (s->mode == NS_MODE_EVAL)
      tui_printf(w, y++, 1, PLOT_S_DIM, "eval mode: panels 3-4 use running stats");
    else
      tui_printf(w, y++, 1, PLOT_S_DIM, "%s eval mode  %s batches  %s seed", km, kj, kr);
  }
}
