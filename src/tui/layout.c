/* layout.c: where each panel goes, for the full (>= 120x40) and the compact layout, from
 * the places and partners of the panel descriptors (panels.c); no panel is named here. */
#include <string.h>

#include "tui/screen.h"

const char *const *const tui_panel_names = ns_panel_names; /* explore/panelfig.h */

const char *tui_panel_title(tui_panel p) {
  return (unsigned)p < TUI_PANEL_COUNT ? tui_panels[p].title : "?";
}

int tui_panel_tabbed(tui_panel p) {
  return (unsigned)p < TUI_PANEL_COUNT && tui_panels[p].tabbed;
}

static tui_rect rect(int y, int x, int h, int w) {
  tui_rect r = {y, x, h < 0 ? 0 : h, w < 0 ? 0 : w};
  return r;
}

/* The columns' widths in per mille of the screen's (0: what the others leave), full and
 * compact. The full layout's right column is wide enough for batch, BN and LN of a
 * 2-column batch side by side at 120 columns. */
#define TUI_MAX_COLS 3
static const int full_cols[TUI_MAX_COLS] = {0, 340, 375};
static const int compact_cols[TUI_MAX_COLS] = {500, 0, -1}; /* -1: no such column */

/* The panels in body rows top .. top+B-1, each at its descriptor's place (full or compact,
 * as L->small says); in the compact layout the tabbed panels share one place, which L->tab
 * takes. */
static void arrange(tui_layout *L, int top, int B, int cols) {
  const int *cw = L->small ? compact_cols : full_cols;
  int x[TUI_MAX_COLS], w[TUI_MAX_COLS], used[TUI_MAX_COLS] = {0}, left = cols, rest = -1;
  for (int c = 0; c < TUI_MAX_COLS && cw[c] >= 0; c++) {
    w[c] = cols * cw[c] / 1000;
    left -= w[c];
    if (cw[c] == 0) rest = c;
  }
  if (rest >= 0) w[rest] = left;
  for (int c = 0, at = 0; c < TUI_MAX_COLS && cw[c] >= 0; c++) x[c] = at, at += w[c];
  /* the panels with a share of the rows first, then the one under them that takes the rest */
  for (int last = 0; last < 2; last++)
    for (int p = 0; p < TUI_PANEL_COUNT; p++) {
      const tui_place *pl = L->small ? &tui_panels[p].compact : &tui_panels[p].full;
      if ((pl->rows == 0) != last) continue;
      if (L->small && tui_panels[p].tabbed && p != (int)L->tab) continue;
      int c = pl->col, h = last ? B - used[c] : B * pl->rows / 100;
      L->panel[p] = rect(top + used[c], x[c], h, w[c]);
      used[c] += h;
    }
}

void tui_layout_make(tui_layout *L, int cols, int lines, tui_panel tab, int prompt_open) {
  memset(L, 0, sizeof *L);
  L->cols = cols;
  L->lines = lines;
  L->tab = tab; /* else the first tabbed panel */
  for (int p = 0; p < TUI_PANEL_COUNT && !tui_panel_tabbed(L->tab); p++) L->tab = (tui_panel)p;
  for (int p = 0; p < TUI_PANEL_COUNT; p++) L->tab_x[p] = -1;
  if (cols < TUI_MIN_W || lines < TUI_MIN_H) {
    L->too_small = 1;
    return;
  }
  L->small = cols < TUI_FULL_W || lines < TUI_FULL_H;
  L->header = rect(0, 0, 1, cols);
  L->status = rect(lines - 1, 0, 1, cols);
  L->prompt = rect(lines - 2, 0, 1, cols);
  /* Tab labels in the header, after the program name. */
  int x = 11;
  for (int p = 0; p < TUI_PANEL_COUNT; p++) {
    int w = (int)strlen(tui_panels[p].title) + 2;
    if (L->small && !tui_panel_tabbed((tui_panel)p)) continue;
    if (x + w > cols - 9) break;
    L->tab_x[p] = x;
    L->tab_w[p] = w;
    x += w + 1;
  }
  /* The Lua output is one line above the prompt while the prompt is closed; open, it takes
   * six rows at 40 lines and half of every line beyond (a taller terminal shows more of the
   * Lua session, not only taller panels), at most a third of the screen (full), or the
   * shared slot (compact). */
  if (!L->small) {
    int sb = 1;
    if (prompt_open) {
      sb = 6 + (lines - TUI_FULL_H) / 2;
      if (sb > lines / 3) sb = lines / 3;
      if (sb < 6) sb = 6;
    }
    L->scrollback = rect(lines - 2 - sb, 0, sb, cols);
    arrange(L, 1, lines - 3 - sb, cols);
    return;
  }
  /* open, the Lua pane takes the shared slot, and the panels the line the Lua output had */
  int top = 1, B = lines - 4 + (prompt_open != 0);
  arrange(L, top, B, cols);
  if (prompt_open) {
    L->scrollback = L->panel[L->tab];
    L->panel[L->tab] = rect(0, 0, 0, 0);
  } else {
    L->scrollback = rect(lines - 3, 0, 1, cols);
  }
}

/* The panels in the same column as p (in the arrangement L has), p's index among them. */
static int column_of(const tui_layout *L, tui_panel p, tui_panel *col) {
  int n = 0;
  for (int q = 0; q < TUI_PANEL_COUNT; q++)
    if (L->panel[q].h > 0 && L->panel[q].x == L->panel[p].x) col[n++] = (tui_panel)q;
  for (int i = 1; i < n; i++) /* top to bottom */
    for (int j = i; j > 0 && L->panel[col[j]].y < L->panel[col[j - 1]].y; j--) {
      tui_panel t = col[j];
      col[j] = col[j - 1];
      col[j - 1] = t;
    }
  return n;
}

/* Grows panel p to h rows inside its column (the others share what is left, each at least
 * TUI_PANEL_MIN_H or hidden). 1 when p got h rows. */
static int grow_in_column(tui_layout *L, tui_panel p, int h) {
  tui_panel col[TUI_PANEL_COUNT];
  int n = column_of(L, p, col);
  int top = L->panel[col[0]].y, bottom = L->panel[col[n - 1]].y + L->panel[col[n - 1]].h;
  int H = bottom - top;
  if (h > H) return 0;
  if (L->panel[p].h >= h) return 1;
  int rest = H - h, others = n - 1;
  while (others > 0 && rest / others < TUI_PANEL_MIN_H) others--;
  int y = top, given = 0;
  for (int i = 0; i < n; i++) {
    tui_rect *r = &L->panel[col[i]];
    if (col[i] == p) {
      r->y = y;
      r->h = h + (others == 0 ? rest : 0);
    } else if (given < others) {
      int share = rest / others + (given < rest % others);
      given++;
      r->y = y;
      r->h = share;
    } else
      r->h = 0;
    y += r->h;
  }
  return 1;
}

/* In every column of K: a panel other than f that cannot show all it has (n->need_at) is
 * hidden and its rows go to the panel above it (or below). 0 when that leaves a shown panel
 * short of its rows. */
static int fit_others(tui_layout *K, const tui_lesson_need *n, tui_panel f) {
  if (!n->need_at) return 1;
  for (int pass = 0; pass < TUI_PANEL_COUNT; pass++) {
    int changed = 0;
    for (int q = 0; q < TUI_PANEL_COUNT && !changed; q++) {
      tui_rect *r = &K->panel[q];
      if (q == (int)f || r->h <= 0 || n->need_at(n->ud, (tui_panel)q, r->w) <= r->h) continue;
      tui_panel col[TUI_PANEL_COUNT];
      int nc = column_of(K, (tui_panel)q, col), i = 0;
      while (col[i] != (tui_panel)q) i++;
      /* the neighbour that takes the rows: the focused panel if it is one, else above */
      int to = -1;
      if (i > 0 && col[i - 1] == f)
        to = i - 1;
      else if (i + 1 < nc && col[i + 1] == f)
        to = i + 1;
      else if (i > 0)
        to = i - 1;
      else if (i + 1 < nc)
        to = i + 1;
      if (to >= 0) {
        tui_rect *t = &K->panel[col[to]];
        if (to < i)
          t->h += r->h;
        else {
          t->y = r->y;
          t->h += r->h;
        }
      }
      r->h = 0;
      changed = 1;
    }
    if (!changed) break;
  }
  for (int q = 0; q < TUI_PANEL_COUNT; q++) {
    tui_rect *r = &K->panel[q];
    if (r->h > 0 && q != (int)f && n->need_at(n->ud, (tui_panel)q, r->w) > r->h) return 0;
  }
  return 1;
}

/* The panels' part of a lesson layout in the rectangle (top, x0, R, W), the focused panel
 * first: the usual arrangement with the focused panel grown in its column and every other
 * panel that cannot show all it has hidden; else the focused panel across the width with
 * its partners under it when they fit. Returns the focused panel's shortfall in rows. */
static int place_panels(tui_layout *L, const tui_lesson_need *n, int top, int x0, int R, int W,
                        int usual) {
  tui_panel f = n->focus;
  int focus_need = n->region_need > 0 ? n->region_need : TUI_PANEL_MIN_H;
  for (int p = 0; p < TUI_PANEL_COUNT; p++) L->panel[p] = rect(0, 0, 0, 0);
  if (usual) {
    tui_layout K = *L;
    if (L->small && tui_panel_tabbed(f)) K.tab = f;
    arrange(&K, top, R, W);
    int need = n->need_at ? n->need_at(n->ud, f, K.panel[f].w) : focus_need;
    if (K.panel[f].h > 0 && grow_in_column(&K, f, need) && fit_others(&K, n, f)) {
      /* two columns of which one is left empty: the other takes the whole width */
      int left = 0, right = 0;
      for (int p = 0; p < TUI_PANEL_COUNT; p++)
        if (K.panel[p].h > 0) {
          if (K.panel[p].x == 0)
            left++;
          else
            right++;
        }
      if (L->small && (!left || !right))
        for (int p = 0; p < TUI_PANEL_COUNT; p++)
          if (K.panel[p].h > 0) K.panel[p].x = 0, K.panel[p].w = W;
      for (int p = 0; p < TUI_PANEL_COUNT; p++) K.panel[p].x += K.panel[p].h > 0 ? x0 : 0;
      memcpy(L->panel, K.panel, sizeof L->panel);
      L->tab = K.tab;
      return 0;
    }
    for (int p = 0; p < TUI_PANEL_COUNT; p++) L->panel[p] = rect(0, 0, 0, 0);
  }
  int need = n->need_at ? n->need_at(n->ud, f, W) : focus_need;
  int h = need < R ? need : R, rest = R - h;
  L->panel[f] = rect(top, x0, h, W);
  if (rest >= TUI_PANEL_MIN_H && n->need_at) {
    int half = W / 2;
    tui_panel a = (tui_panel)tui_panels[f].partners[0], b = (tui_panel)tui_panels[f].partners[1];
    int fa = n->need_at(n->ud, a, half) <= rest, fb = n->need_at(n->ud, b, W - half) <= rest;
    if (fa && fb) {
      L->panel[a] = rect(top + h, x0, rest, half);
      L->panel[b] = rect(top + h, x0 + half, rest, W - half);
    } else if (fa || fb) { /* the one that fits, across the width */
      tui_panel q = fa ? a : b;
      if (n->need_at(n->ud, q, W) <= rest) L->panel[q] = rect(top + h, x0, rest, W);
    }
  }
  if (L->small && tui_panel_tabbed(f)) L->tab = f;
  return need > h ? need - h : 0;
}

static int lesson_place(tui_layout *L, const tui_lesson_need *n, tui_rect *pane, tui_rect *view,
                        int sbrows) {
  memset(pane, 0, sizeof *pane);
  memset(view, 0, sizeof *view);
  if (L->too_small) return 0;
  /* the body: under the header, above the scrollback (its one line; while the prompt is
   * open, the sbrows rows it takes from the body's bottom) */
  int top = 1, end = L->scrollback.h == 1 ? L->scrollback.y : L->prompt.y;
  int A = end - top - sbrows;
  if (sbrows) L->scrollback = rect(top + A, 0, sbrows, L->cols);
  int focus_need = n->region_need > 0 ? n->region_need : TUI_PANEL_MIN_H;
  /* Stacked: the pane under the region, with all its lines when the region keeps its need,
   * else down to its minimum (it scrolls). */
  int want = n->pane_want, min = n->pane_min;
  int P = want;
  if (P > A - focus_need) P = A - focus_need;
  if (P < min) P = min;
  if (P > A - TUI_PANEL_MIN_H) P = A - TUI_PANEL_MIN_H;
  int R = A - P;
  if (n->view) { /* a view (an experiment view or a figure) takes the whole region */
    for (int p = 0; p < TUI_PANEL_COUNT; p++) L->panel[p] = rect(0, 0, 0, 0);
    *pane = rect(top + R, 0, P, L->cols);
    *view = rect(top, 0, R, L->cols);
    return R >= focus_need && P >= want - n->pane_extra;
  }
  tui_layout S = *L;
  int short_s = place_panels(&S, n, top, 0, R, L->cols, 1);
  int text_s = want - n->pane_extra - P; /* the text and try-it rows it lacks */
  if (text_s < 0) text_s = 0;
  if (!short_s && !text_s) {
    *L = S;
    *pane = rect(top + R, 0, P, L->cols);
    return 1;
  }
  /* Side by side: the panels in the left part of the screen, the pane in the right one down
   * the whole body, when that gives both what they need (or less short of it). */
  if (n->pane_at) {
    for (int wl = L->cols / 2; wl <= L->cols * 3 / 5; wl += L->cols / 10) {
      int pmin, pw = n->pane_at(n->ud, L->cols - wl, &pmin);
      tui_layout T = *L;
      int short_t = place_panels(&T, n, top, 0, A, wl, 0);
      int text_t = pw - A > 0 ? pw - A : 0;
      if (short_t + text_t < short_s + text_s) {
        *L = T;
        *pane = rect(top, wl, A, L->cols - wl);
        return !short_t && !text_t;
      }
    }
  }
  *L = S;
  *pane = rect(top + R, 0, P, L->cols);
  return 0;
}

/* Whether the focused panel (or the view) got the rows it needs. */
static int focus_fits(const tui_layout *L, const tui_lesson_need *n, const tui_rect *view) {
  int need = n->region_need > 0 ? n->region_need : TUI_PANEL_MIN_H;
  if (n->view) return view->h >= need;
  const tui_rect *r = &L->panel[n->focus];
  if (r->h <= 0) return 0;
  return n->need_at ? n->need_at(n->ud, n->focus, r->w) <= r->h : r->h >= need;
}

int tui_layout_lesson(tui_layout *L, const tui_lesson_need *n, tui_rect *pane, tui_rect *view) {
  if (L->scrollback.h == 1) return lesson_place(L, n, pane, view, 0);
  /* The prompt is open: the Lua output takes four rows from the body's bottom, fewer (down
   * to one, the last answer) when the focused panel would be cut for them. */
  tui_layout K;
  for (int sb = 4; sb >= 1; sb--) {
    K = *L;
    int ok = lesson_place(&K, n, pane, view, sb);
    if (focus_fits(&K, n, view) || sb == 1) {
      *L = K;
      return ok;
    }
  }
  return 0;
}

static int inside(tui_rect r, int y, int x) {
  return r.h > 0 && y >= r.y && y < r.y + r.h && x >= r.x && x < r.x + r.w;
}

int tui_layout_hit(const tui_layout *L, int y, int x) {
  if (L->too_small) return -1;
  if (y == 0) {
    for (int p = 0; p < TUI_PANEL_COUNT; p++)
      if (L->tab_x[p] >= 0 && x >= L->tab_x[p] && x < L->tab_x[p] + L->tab_w[p]) return p;
    return -1;
  }
  for (int p = 0; p < TUI_PANEL_COUNT; p++)
    if (inside(L->panel[p], y, x)) return p;
  return -1;
}
