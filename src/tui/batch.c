/* batch.c: panel 5, the batch matrix as a heatmap with batch norm (down the columns) and
 * layer norm (across the rows) beside or below it, and the target example's BN output
 * compared with what it was before the companion changed: a sign flip is marked loudly.
 * Whatever does not fit is named, with the key that shows it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/screen.h"

/* Where everything goes for an inside of iw x ih. */
typedef struct {
  int lab, cw; /* row-label columns, cell width */
  int across;  /* blocks (batch, BN, LN) side by side: 1..3 */
  int bands;   /* bands of blocks shown one under the other */
  int blocks;  /* blocks shown: min(3, across * bands) */
  int vis;     /* matrix rows per band */
  int tcols;   /* target lines, one per column; a summary line covers the rest */
  int hint;    /* lines of explanation at the bottom */
} batch_layout;

/* The layout with nb blocks across at cell width cw. */
static void try_layout(size_t B, size_t D, int iw, int ih, int nb, int cw, batch_layout *L) {
  memset(L, 0, sizeof *L);
  L->lab = 4;
  L->across = nb;
  L->cw = cw;
  L->hint = 1;
  int minv = B < 2 ? (int)B : 2;
  /* the target lines take what the matrix leaves, down to none (a summary line) */
  int body = ih - L->hint;
  L->tcols = (int)D;
  if (body - L->tcols < 1 + minv) L->tcols = body - 1 - minv - 1;
  if (L->tcols < 0) L->tcols = 0;
  int tail = L->tcols + (L->tcols < (int)D);
  int avail = ih - L->hint - tail;
  L->bands = (3 + nb - 1) / nb;
  while (L->bands > 1 && avail / L->bands - 1 < minv) L->bands--;
  L->blocks = nb * L->bands < 3 ? nb * L->bands : 3;
  if (L->blocks < 3 && avail > 2) avail--; /* the note that names what is hidden */
  L->vis = avail / L->bands - 1;
  if (L->vis > (int)B) L->vis = (int)B;
  if (L->vis < 1) L->vis = 1;
  /* a second explanation line when there is room to spare */
  if (avail - L->bands * (L->vis + 1) >= 1 && L->blocks == 3) L->hint = 2;
}

/* The first candidate (widest cells, side by side first) that shows everything: the three
 * blocks, every row (so the target and the companion together) and every target line; else
 * the first that shows the three blocks; else the one that shows the most. */
static void layout(size_t B, size_t D, int iw, int ih, batch_layout *L) {
  static const int cand[][2] = {{3, 8}, {3, 7}, {3, 6}, {2, 8}, {2, 7}, {2, 6},
                                {3, 5}, {1, 8}, {1, 7}, {1, 6}, {1, 5}};
  batch_layout best, three;
  int have = 0, have3 = 0;
  for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
    if (4 + cand[i][0] * ((int)D * cand[i][1] + 1) > iw) continue;
    try_layout(B, D, iw, ih, cand[i][0], cand[i][1], L);
    if (L->blocks == 3 && L->vis == (int)B && L->tcols == (int)D) return;
    if (L->blocks == 3 && !have3) three = *L, have3 = 1;
    if (!have || L->blocks > best.blocks) best = *L;
    have = 1;
  }
  if (have3)
    *L = three;
  else if (have)
    *L = best;
  else
    try_layout(B, D, iw, ih, 1, 5, L);
}

void tui_batch_geometry(const ns_state *s, int iw, int *lab, int *cw) {
  batch_layout L;
  layout(s->batch->shape[0], s->batch->shape[1], iw, 20, &L);
  *lab = L.lab;
  *cw = L.cw;
}

static int first_row(size_t B, int cursor_row, int vis) {
  int first = cursor_row >= vis ? cursor_row - vis + 1 : 0;
  if (first > (int)B - vis) first = (int)B - vis;
  return first < 0 ? 0 : first;
}

int tui_batch_first_row(const ns_state *s, int cursor_row, int iw, int ih) {
  batch_layout L;
  layout(s->batch->shape[0], s->batch->shape[1], iw, ih, &L);
  return first_row(s->batch->shape[0], cursor_row, L.vis);
}

static const char *const block_names[3] = {"batch", "BN", "LN"};

/* One band of blocks (batch, BN, LN as the width allows) from row y: the block names,
 * which rows are shown when some are hidden, the heatmaps of rows first.., the row
 * labels (T the target, C the companion), and in the first band the batch cursor.
 * src: the batch, its BN and its LN output. */
static void draw_band(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v,
                      const batch_layout *L, int band, int y, int first,
                      const double *const src[3]) {
  size_t B = r->B, D = r->D;
  int block = (int)D * L->cw + 1;
  int focused = v->focused && v->vs->focus == TUI_PANEL_BATCH;
  for (int k = 0; k < L->across; k++) {
    int bi = band * L->across + k;
    if (bi >= L->blocks) break;
    tui_printf(w, y, 1 + L->lab + k * block, PLOT_S_DIM, "%s", block_names[bi]);
  }
  if (band == 0 && B > (size_t)L->vis) { /* rows hidden: which are shown (arrows move) */
    char where[48];
    int l = snprintf(where, sizeof where, "rows %d-%d/%zu", first + 1, first + L->vis, B);
    tui_puts(w, y, tui_iw(w) - l + 1, PLOT_S_DIM, where);
  }
  plot_canvas *c = tui_canvas(L->across * block, L->vis, v);
  if (c) {
    for (int k = 0; k < L->across; k++) {
      int bi = band * L->across + k;
      if (bi >= L->blocks) break;
      plot_heatmap(c, k * block, 0, src[bi] + (size_t)first * D, (size_t)L->vis, D, L->cw, 0, 1);
    }
    tui_blit(w, y + 1, 1 + L->lab, c);
    plot_canvas_free(c);
  }
  for (int i = 0; i < L->vis; i++) {
    int row = first + i + 1;
    const char *mark = row == s->target      ? (v->ascii ? "T>" : "T\u25b6")
                       : row == s->companion ? "C*"
                                             : "  ";
    tui_printf(w, y + 1 + i, 1, row == s->target ? PLOT_S_POS : PLOT_S_LABEL, "%s%d", mark, row);
  }
  /* the batch cursor, in the first band's batch block */
  if (band == 0 && focused && v->vs->cursor_row >= first && v->vs->cursor_row < first + L->vis &&
      v->vs->cursor_col >= 0 && (size_t)v->vs->cursor_col < D) {
    char num[32], cell[48];
    size_t idx = (size_t)v->vs->cursor_row * D + (size_t)v->vs->cursor_col;
    if (v->edit)
      snprintf(cell, sizeof cell, "%*.*s_", L->cw - 2, L->cw - 2, v->edit);
    else
      snprintf(cell, sizeof cell, "%*s ", L->cw - 1,
               plot_fmt(src[0][idx], L->cw - 1, num, sizeof num));
    tui_puts(w, y + 1 + v->vs->cursor_row - first, 1 + L->lab + v->vs->cursor_col * L->cw,
             PLOT_S_POS | PLOT_F_REVERSE, cell);
  }
}

/* The target's BN output now and with the companion's baseline row, one format for both
 * (*dec, *sci); returns the widest number. */
static int target_format(const ns_result *r, size_t D, int *dec, int *sci) {
  double *tv = malloc(2 * D * sizeof *tv);
  int nw = 1;
  *dec = -1, *sci = 2;
  if (!tv) return nw;
  for (size_t j = 0; j < D; j++) {
    tv[j] = r->target_now[j];
    tv[D + j] = r->target_base[j];
  }
  plot_fmt_table_digits(tv, 2 * D, 9, 6, dec, sci);
  for (size_t j = 0; j < 2 * D; j++) {
    char a[32];
    int l = (int)strlen(plot_fmt_table(tv[j], 9, *dec, *sci, a, sizeof a));
    if (l > nw) nw = l;
  }
  free(tv);
  return nw;
}

/* The target's columns from row y, each "T col j: now (was base)" with FLIP where the
 * sign changed, in the longest form that fits; the columns without room in one line. */
static void draw_target(const ns_result *r, WINDOW *w, const batch_layout *L, size_t D, int y) {
  int iw = tui_iw(w), dec, sci;
  int nw = target_format(r, D, &dec, &sci);
  for (int j = 0; j < L->tcols; j++, y++) {
    int flip = r->flip && r->flip[j];
    char line[128], a[32], b[32];
    plot_fmt_table(r->target_now[j], 9, dec, sci, a, sizeof a);
    plot_fmt_table(r->target_base[j], 9, dec, sci, b, sizeof b);
    /* the whole line, shorter forms first dropping "T " and then the padding */
    int l = snprintf(line, sizeof line, "T col %d: %*s (was %*s)%s", j + 1, nw, a, nw, b,
                     flip ? " FLIP" : "");
    if (l > iw)
      l = snprintf(line, sizeof line, "col %d: %*s (was %*s)%s", j + 1, nw, a, nw, b,
                   flip ? " FLIP" : "");
    if (l > iw)
      snprintf(line, sizeof line, "col %d: %s (was %s)%s", j + 1, a, b, flip ? " FLIP" : "");
    tui_puts(w, y, 1, flip ? PLOT_S_MARK : PLOT_S_TEXT, line);
  }
  if (L->tcols < (int)D) {
    int more = 0;
    for (size_t j = (size_t)L->tcols; j < D; j++) more += r->flip && r->flip[j];
    tui_printf(w, y++, 1, more ? PLOT_S_MARK : PLOT_S_DIM, "T cols %d-%zu: %d FLIP%s", L->tcols + 1,
               D, more, more == 1 ? "" : "s");
  }
}

/* The bottom lines from row y: what eval mode does, the sign flip, or what to try. */
static void draw_hint(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v,
                      int lines, int y) {
  if (s->mode == NS_MODE_EVAL) {
    /* BN in eval mode uses fixed running statistics: rows no longer couple */
    tui_wrap(w, y, 1, r->nflip ? PLOT_S_MARK : PLOT_S_DIM,
             r->nflip ? "train-mode FLIP; in eval mode (m) BN uses running stats: no coupling"
                      : "eval mode (m): BN uses running stats, rows are independent",
             lines);
  } else if (r->nflip) {
    const char *msg = v->ascii ? "!! SIGN FLIP: T unchanged, only C moved"
                               : "\u26a0 SIGN FLIP: T unchanged, only C moved";
    tui_puts(w, y++, 1, PLOT_S_MARK | PLOT_F_REVERSE, msg);
    if (lines > 1) tui_wrap(w, y, 1, PLOT_S_DIM, "BN mixes the rows of a batch", 1);
  } else {
    char hint[80], kn[16];
    snprintf(hint, sizeof hint, "Edit C (Alt-5, arrows, %s negates); watch T's BN value",
             tui_key_name('~', kn, sizeof kn));
    tui_wrap(w, y, 1, PLOT_S_DIM, hint, lines);
  }
}

/* A BN or LN cell that is nan: a row (LN) or a column (BN) whose values are all equal has
 * variance 0, and with eps 0 its output is 0/0 (a row of one value, as a one-feature batch
 * has, always does). */
static int has_nan(const ns_result *r) {
  for (size_t i = 0, n = r->B * r->D; i < n; i++)
    if (isnan(r->bn[i]) || (r->ln && isnan(r->ln[i]))) return 1;
  return 0;
}

static const char *nan_why(const ns_state *s) {
  return s->eps == 0 ? "nan = 0/0: var 0 and eps 0" : "nan: NaN or Inf in the batch";
}

void tui_draw_batch(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v) {
  char title[128];
  int iw = tui_iw(w), ih = tui_ih(w);
  if (!r->bn || !s->batch || s->batch->n != r->B * r->D) { /* no result, or not this batch's */
    tui_frame(w, "5 Batch", v);
    tui_puts(w, 1, 1, PLOT_S_MARK, "no batch result");
    return;
  }
  size_t B = r->B, D = r->D;
  batch_layout L;
  layout(B, D, iw, ih, &L);
  snprintf(title, sizeof title, "5 Batch %zux%zu%s: BN columns, LN rows", B, D,
           s->mode == NS_MODE_EVAL ? " (train mode)" : "");
  tui_frame(w, title, v);
  double *m = malloc(B * D * sizeof *m);
  if (!m) return;
  ns_tensor_read(s->batch, m);
  int focused = v->focused && v->vs->focus == TUI_PANEL_BATCH;
  int first = first_row(B, focused ? v->vs->cursor_row : 0, L.vis);
  const double *const src[3] = {m, r->bn, r->ln};
  int y = 1;
  for (int band = 0; band < L.bands; band++, y += L.vis + 1)
    draw_band(s, r, w, v, &L, band, y, first, src);
  free(m);
  if (L.blocks < 3) {
    char hidden[32] = "";
    for (int bi = L.blocks; bi < 3; bi++) {
      size_t at = strlen(hidden);
      snprintf(hidden + at, sizeof hidden - at, "%s%s", at ? " and " : "", block_names[bi]);
    }
    tui_printf(w, y++, 1, PLOT_S_DIM, "%s: no room here; f shows all three", hidden);
  }
  int ty = ih - L.hint - L.tcols - (L.tcols < (int)D) + 1; /* the target's first line */
  int nan = has_nan(r), hint = L.hint;
  if (nan && y < ty) /* why a cell says nan: on a free line, else in the hint's first */
    tui_puts(w, y, 1, PLOT_S_MARK, nan_why(s)), nan = 0;
  draw_target(r, w, &L, D, ty);
  if (nan && hint > 0) tui_puts(w, ih - hint + 1, 1, PLOT_S_MARK, nan_why(s)), hint--;
  if (hint > 0) draw_hint(s, r, w, v, hint, ih - hint + 1);
}
