/* batch.c: panel 5, the batch matrix as a heatmap with batch norm (down the columns) and
 * layer norm (across the rows) beside it, and the target example's BN output compared
 * with what it was before the companion changed: a sign flip is marked loudly. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/screen.h"

void tui_draw_batch(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v) {
  char title[96], a[32], b[32];
  int iw = tui_iw(w), ih = tui_ih(w);
  if (!r->bn || !s->batch) {
    tui_frame(w, "5 Batch", v);
    tui_puts(w, 1, 1, PLOT_S_MARK, "no batch result");
    return;
  }
  size_t B = r->B, D = r->D;
  int lab = 4, cw = lab + 2 * ((int)D * 8 + 1) <= iw ? 8 : 7;
  int block = (int)D * cw + 1;
  /* Side by side when the three fit, else batch | BN with LN below when there is room. */
  int side = lab + 3 * block <= iw;
  int two = lab + 2 * block <= iw;
  /* one line per column for the target, then one or two lines saying what to look at */
  int hint = ih - 1 - ((int)D + 2) >= (int)B ? 2 : 1;
  /* A wide batch has more columns than lines: the matrix keeps at least min(B, 2) rows,
   * the target lines get what is left and one line sums up the rest (never drawn over
   * the matrix). */
  int minv = B < 2 ? (int)B : 2;
  int tcols = (int)D;
  if (ih - 1 - hint - tcols < minv) tcols = ih - 1 - hint - minv - 1;
  if (tcols < 0) tcols = 0;
  int tail = tcols + (tcols < (int)D) + hint;
  int vis = ih - 1 - tail;
  int ln_below = !side && two && vis >= 2 * (int)B + 1;
  size_t vis_rows = (size_t)(ln_below ? (vis - 1) / 2 : vis);
  if (vis_rows < 1) vis_rows = 1;
  if (vis_rows > B) vis_rows = B;
  snprintf(title, sizeof title, "5 Batch %zux%zu: BN down columns%s", B, D,
           side || ln_below ? ", LN across rows" : "");
  tui_frame(w, title, v);
  double *m = malloc(B * D * sizeof *m);
  if (!m) return;
  ns_tensor_read(s->batch, m);
  int y0 = 2;
  tui_printf(w, 1, 1 + lab, PLOT_S_DIM, "%-*s", block, "batch");
  if (two) tui_printf(w, 1, 1 + lab + block, PLOT_S_DIM, "%-*s", block, "BN");
  if (side) tui_printf(w, 1, 1 + lab + 2 * block, PLOT_S_DIM, "%-*s", block, "LN");
  plot_canvas *c = tui_canvas(3 * block, (int)vis_rows, v);
  if (c) {
    plot_heatmap(c, 0, 0, m, vis_rows, D, cw, 0, 1);
    if (two) plot_heatmap(c, block, 0, r->bn, vis_rows, D, cw, 0, 1);
    if (side) plot_heatmap(c, 2 * block, 0, r->ln, vis_rows, D, cw, 0, 1);
    tui_blit(w, y0, 1 + lab, c);
    plot_canvas_free(c);
  }
  for (size_t i = 0; i < vis_rows; i++) {
    int row = (int)i + 1;
    const char *mark =
        row == s->target ? (v->ascii ? "T>" : "T\u25b6") : (row == s->companion ? "C*" : "  ");
    tui_printf(w, y0 + (int)i, 1, row == s->target ? PLOT_S_POS : PLOT_S_LABEL, "%s%d", mark, row);
  }
  /* the batch cursor */
  if (v->focused && v->vs->focus == TUI_PANEL_BATCH && v->vs->cursor_row >= 0 &&
      (size_t)v->vs->cursor_row < vis_rows && v->vs->cursor_col >= 0 &&
      (size_t)v->vs->cursor_col < D) {
    char num[32], cell[48];
    size_t idx = (size_t)v->vs->cursor_row * D + (size_t)v->vs->cursor_col;
    if (v->edit)
      snprintf(cell, sizeof cell, "%*.*s_", cw - 2, cw - 2, v->edit);
    else
      snprintf(cell, sizeof cell, "%*s ", cw - 1, plot_fmt(m[idx], cw - 1, num, sizeof num));
    tui_puts(w, y0 + v->vs->cursor_row, 1 + lab + v->vs->cursor_col * cw,
             PLOT_S_POS | PLOT_F_REVERSE, cell);
  }
  int y = y0 + (int)vis_rows;
  if (ln_below) {
    tui_printf(w, y++, 1 + lab, PLOT_S_DIM, "LN");
    c = tui_canvas(block, (int)vis_rows, v);
    if (c) {
      plot_heatmap(c, 0, 0, r->ln, vis_rows, D, cw, 0, 1);
      tui_blit(w, y, 1 + lab, c);
      plot_canvas_free(c);
    }
    y += (int)vis_rows;
  }
  free(m);
  if (vis_rows < B && y <= ih - tail)
    tui_printf(w, y++, 1, PLOT_S_DIM, "(%zu more rows)", B - vis_rows);
  /* The target's BN output now, and with the companion's baseline row, in one format. */
  double *tv = malloc(2 * D * sizeof *tv);
  int dec = -1, sci = 2, nw = 1;
  if (tv) {
    for (size_t j = 0; j < D; j++) {
      tv[j] = r->target_now[j];
      tv[D + j] = r->target_base[j];
    }
    plot_fmt_table_digits(tv, 2 * D, 9, 6, &dec, &sci);
    for (size_t j = 0; j < 2 * D; j++) {
      int l = (int)strlen(plot_fmt_table(tv[j], 9, dec, sci, a, sizeof a));
      if (l > nw) nw = l;
    }
    free(tv);
  }
  y = ih - tail + 1;
  for (size_t j = 0; j < (size_t)tcols && y <= ih - hint; j++, y++) {
    int flip = r->flip && r->flip[j];
    tui_printf(w, y, 1, flip ? PLOT_S_MARK : PLOT_S_TEXT, "T col %zu: %*s (was %*s)%s", j + 1, nw,
               plot_fmt_table(r->target_now[j], 9, dec, sci, a, sizeof a), nw,
               plot_fmt_table(r->target_base[j], 9, dec, sci, b, sizeof b), flip ? " FLIP" : "");
  }
  if (tcols < (int)D && y <= ih - hint) {
    int more = 0;
    for (size_t j = (size_t)tcols; j < D; j++) more += r->flip && r->flip[j];
    tui_printf(w, y, 1, more ? PLOT_S_MARK : PLOT_S_DIM, "T cols %d-%zu: %d FLIP%s", tcols + 1, D,
               more, more == 1 ? "" : "s");
  }
  y = ih - hint + 1;
  if (r->nflip) {
    const char *msg = v->ascii ? "!! SIGN FLIP: T unchanged, only C moved"
                               : "\u26a0 SIGN FLIP: T unchanged, only C moved";
    tui_puts(w, y++, 1, PLOT_S_MARK | PLOT_F_REVERSE, msg);
    if (hint > 1) tui_wrap(w, y, 1, PLOT_S_DIM, "BN mixes the rows of a batch", 1);
  } else {
    tui_wrap(w, y, 1, PLOT_S_DIM, "Edit C (Alt-5, arrows, n negates) and watch T's BN value", hint);
  }
}
