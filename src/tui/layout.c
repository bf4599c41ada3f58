/* layout.c: where each panel goes, for the full (>= 120x40) and the compact layout. */
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

void tui_layout_make(tui_layout *L, int cols, int lines, tui_panel tab, int prompt_open) {
  memset(L, 0, sizeof *L);
  L->cols = cols;
  L->lines = lines;
  L->tab = tui_panel_tabbed(tab) ? tab : TUI_PANEL_SETTINGS;
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
  if (!L->small) {
    L->scrollback = rect(lines - 8, 0, 6, cols);
    int top = 1, B = lines - 9;
    /* the right column is wide enough for batch, BN and LN of a 2-column batch side by
     * side at 120 columns */
    int c1 = cols * 34 / 100, c2 = cols * 375 / 1000, c0 = cols - c1 - c2;
    int hin = B * 42 / 100;
    L->panel[TUI_PANEL_INPUT] = rect(top, 0, hin, c0);
    L->panel[TUI_PANEL_SETTINGS] = rect(top + hin, 0, B - hin, c0);
    int hout = B / 2;
    L->panel[TUI_PANEL_OUTPUT] = rect(top, c0, hout, c1);
    L->panel[TUI_PANEL_SPECTRUM] = rect(top + hout, c0, B - hout, c1);
    int hb = B * 36 / 100, ht = B * 35 / 100;
    L->panel[TUI_PANEL_BATCH] = rect(top, c0 + c1, hb, c2);
    L->panel[TUI_PANEL_TRAIN] = rect(top + hb, c0 + c1, ht, c2);
    L->panel[TUI_PANEL_PRECISION] = rect(top + hb + ht, c0 + c1, B - hb - ht, c2);
    return;
  }
  /* Compact: one line of scrollback above the prompt; the body in two columns, the
   * right-hand bottom slot shared by the tabbed panels (or the scrollback while the
   * prompt is open). */
  int top = 1, B = lines - 4;
  int cl = cols / 2, cr = cols - cl;
  int hin = B * 2 / 5;
  L->panel[TUI_PANEL_INPUT] = rect(top, 0, hin, cl);
  L->panel[TUI_PANEL_OUTPUT] = rect(top + hin, 0, B - hin, cl);
  int hs = B / 2;
  L->panel[TUI_PANEL_SPECTRUM] = rect(top, cl, hs, cr);
  tui_rect slot = rect(top + hs, cl, B - hs, cr);
  if (prompt_open) {
    L->scrollback = slot;
  } else {
    L->scrollback = rect(lines - 3, 0, 1, cols);
    L->panel[L->tab] = slot;
  }
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
