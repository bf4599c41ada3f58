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
  int gap;     /* columns between blocks side by side (a cell ends in a space of its own) */
  int across;  /* blocks (batch, BN, LN) side by side: 1..3 */
  int bands;   /* bands of blocks shown one under the other */
  int blocks;  /* blocks shown: min(3, across * bands) */
  int vis;     /* matrix rows per band */
  int tcols;   /* target lines, one per column; a summary line covers the rest */
  int hint;    /* lines of explanation at the bottom */
  int worded;  /* the first band's names leave room for "rows a-b/B" and "cols 1-k/D" */
} batch_layout;

static int digits(size_t v) {
  int d = 1;
  while (v >= 10) v /= 10, d++;
  return d;
}

/* The columns nb blocks of D cells of width cw take (the last cell's space may go). */
static int blocks_width(size_t D, int nb, int cw, int gap) {
  return 4 + nb * (int)D * cw + (nb - 1) * gap - 1;
}

/* The layout with nb blocks across at cell width cw and tcols target lines. */
static void try_layout(size_t B, size_t D, int iw, int ih, int nb, int cw, int gap, int tcols,
                       batch_layout *L) {
  memset(L, 0, sizeof *L);
  L->lab = 4;
  L->across = nb;
  L->cw = cw;
  L->gap = gap;
  L->hint = 1;
  L->tcols = tcols;
  int minv = B < 2 ? (int)B : 2;
  int tail = L->tcols + (L->tcols < (int)D);
  int avail = ih - L->hint - tail;
  L->bands = (3 + nb - 1) / nb;
  /* fewer bands when they leave a band fewer than minv rows (then a line names what is
     hidden) */
  while (L->bands > 1 && (avail - (nb * L->bands < 3)) / L->bands - 1 < minv) L->bands--;
  L->blocks = nb * L->bands < 3 ? nb * L->bands : 3;
  if (L->blocks < 3 && avail > 2) avail--; /* the note that names what is hidden */
  L->vis = avail / L->bands - 1;
  if (L->vis > (int)B) L->vis = (int)B;
  if (L->vis < 1) L->vis = 1;
  /* a second explanation line when there is room to spare */
  if (avail - L->bands * (L->vis + 1) >= 1 && L->blocks == 3) L->hint = 2;
  /* the first band's names, and at the right the rows and columns it shows when not all */
  int names = L->blocks < nb ? L->blocks : nb, block = (int)D * cw + gap;
  int names_end = 1 + L->lab + (names - 1) * block + (names == 1 ? 5 : 2);
  int shown = (iw - L->lab + 1) / cw, where = 0;
  if ((size_t)L->vis < B) where = 5 + 3 * digits(B) + 2;
  if ((size_t)shown < D) where += (where ? 1 : 0) + 7 + digits((size_t)shown) + digits(D);
  L->worded = !where || iw - where + 1 > names_end;
}

/* Whether layout a shows more than b: first the target and its companion (two rows),
 * then the three blocks, more target lines (the BN values the panel is about, with what
 * they were), more rows, room to say in words which rows it shows, cells of 6 or more,
 * blocks side by side, wider cells, a gap between blocks. */
static int better(const batch_layout *a, const batch_layout *b, size_t B, size_t D) {
  int minv = B < 2 ? (int)B : 2;
  int ka[] = {a->vis >= minv, a->blocks, a->tcols, a->vis, a->worded,
              a->cw >= 6,     -a->bands, a->cw,    a->gap};
  int kb[] = {b->vis >= minv, b->blocks, b->tcols, b->vis, b->worded,
              b->cw >= 6,     -b->bands, b->cw,    b->gap};
  for (size_t i = 0; i < sizeof ka / sizeof ka[0]; i++)
    if (ka[i] != kb[i]) return ka[i] > kb[i];
  return 0;
}

/* The layout that shows the most (better()) of those whose blocks fit the width; when
 * none does, of one block of the narrowest cells (its columns cut at the frame). */
static void layout(size_t B, size_t D, int iw, int ih, batch_layout *L) {
  batch_layout best, c;
  int have = 0, tmax = (int)D < ih ? (int)D : ih;
  for (int wide = 0; wide < 2 && !have; wide++)
    for (int nb = wide ? 1 : 3; nb >= 1; nb--)
      for (int cw = wide ? 5 : 8; cw >= 5; cw--)
        for (int gap = 1; gap >= 0; gap--) {
          if (nb == 1 && gap == 0) continue; /* one block: the gap changes nothing */
          if (!wide && blocks_width(D, nb, cw, gap) > iw) continue;
          for (int t = tmax; t >= 0; t--) {
            try_layout(B, D, iw, ih, nb, cw, gap, t, &c);
            if (!have || better(&c, &best, B, D)) best = c, have = 1;
          }
        }
  *L = best;
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
  int block = (int)D * L->cw + L->gap;
  int focused = v->focused && v->vs->focus == TUI_PANEL_BATCH;
  int names_end = 0; /* the column after the last block name */
  for (int k = 0; k < L->across; k++) {
    int bi = band * L->across + k;
    if (bi >= L->blocks) break;
    tui_printf(w, y, 1 + L->lab + k * block, PLOT_S_DIM, "%s", block_names[bi]);
    names_end = 1 + L->lab + k * block + (int)strlen(block_names[bi]);
  }
  /* columns that do not fit the frame (a wide batch in one block of the narrowest cells) */
  size_t cols_shown = (size_t)((tui_iw(w) - L->lab + 1) / L->cw);
  if (band == 0 && (B > (size_t)L->vis || cols_shown < D)) { /* which rows, columns are shown */
    char where[64];
    /* after the names and a space: the words, else the bare ranges (the row labels say
       which rows they are too) */
    for (int words = 1; words >= 0; words--) {
      int l = 0;
      if (B > (size_t)L->vis) /* the arrows move the rows */
        l = snprintf(where, sizeof where, "%s%d-%d/%zu", words ? "rows " : "", first + 1,
                     first + L->vis, B);
      if (cols_shown < D)
        l += snprintf(where + l, sizeof where - (size_t)l, "%s%s1-%zu/%zu", l ? " " : "",
                      words ? "cols " : "", cols_shown, D);
      if (tui_iw(w) - l + 1 > names_end || !words) {
        tui_puts(w, y, tui_iw(w) - l + 1 > names_end ? tui_iw(w) - l + 1 : names_end + 1,
                 PLOT_S_DIM, where);
        break;
      }
    }
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
                       : row == s->companion ? "C "
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
             PLOT_S_FOCUS | PLOT_F_REVERSE, cell);
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

/* The line that names the blocks not drawn (from `blocks` on) and the key whose figure
 * shows them (BN and LN), in the longest form that fits whole; returns the lines used. */
static int hidden_note(WINDOW *w, int blocks, int y) {
  char fk[16], line[96];
  tui_key_name('f', fk, sizeof fk);
  const char *what = blocks == 1 ? "BN and LN" : "LN";
  int iw = tui_iw(w);
  const char *them = blocks == 1 ? "them" : "it";
  int l = snprintf(line, sizeof line, "%s not shown (no room): %s shows %s", what, fk, them);
  if (l > iw) l = snprintf(line, sizeof line, "%s not shown: %s shows %s", what, fk, them);
  if (l > iw) snprintf(line, sizeof line, "no %s here: %s", blocks == 1 ? "BN, LN" : "LN", fk);
  tui_puts(w, y, 1, PLOT_S_DIM, line);
  return 1;
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
  /* the title names the blocks drawn: BN normalizes down the columns, LN across the rows */
  static const char *const shown[3] = {"", ": BN columns", ": BN columns, LN rows"};
  snprintf(title, sizeof title, "5 Batch %zux%zu%s%s", B, D,
           s->mode == NS_MODE_EVAL ? " (train mode)" : "", shown[L.blocks - 1]);
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
  if (L.blocks < 3) y += hidden_note(w, L.blocks, y);
  int ty = ih - L.hint - L.tcols - (L.tcols < (int)D) + 1; /* the target's first line */
  int nan = has_nan(r), hint = L.hint;
  if (nan && y < ty) /* why a cell says nan: on a free line, else in the hint's first */
    tui_puts(w, y, 1, PLOT_S_MARK, nan_why(s)), nan = 0;
  draw_target(r, w, &L, D, ty);
  if (nan && hint > 0) tui_puts(w, ih - hint + 1, 1, PLOT_S_MARK, nan_why(s)), hint--;
  if (hint > 0) draw_hint(s, r, w, v, hint, ih - hint + 1);
}
