/* help.c: the help screen (every key, scrollable) and the key summary line. */
#include <stdio.h>
#include <string.h>

#include "tui/screen.h"

static const char *help[] = {
    "normscope explorer: every key",
    "",
    "One normalization of the input x, recomputed and redrawn at every change:",
    "1 Input, 2 Settings, 3 Output with shift/scale probes, 4 Jacobian spectrum,",
    "5 Batch companion, 6 Train/eval running statistics, 7 Variance precision.",
    "",
    "Moving around",
    "  Tab / Shift-Tab   next / previous panel (at 80x24, 2 5 6 7 share a tab)",
    "  Alt-1 .. Alt-7    focus panel 1 .. 7 directly (digits alone type numbers)",
    "  mouse click       focus a panel or tab, or pick a cell (off: --no-mouse)",
    "  arrows            move the cursor in the input (batch, when 5 has focus)",
    "  PgUp / PgDn       scroll the Lua output",
    "",
    "Editing the input (or the batch matrix when panel 5 has focus)",
    "  0-9 - . e         type a number into the cell under the cursor",
    "  Enter             edit the cell, or apply the number typed; Esc cancels",
    "  n                 negate the cell under the cursor",
    "  i / I             insert an element (column) / a row after the cursor",
    "  x / X             remove the element (column) / the row under the cursor",
    "",
    "Settings (panel 2 lists them with their values)",
    "  k / K             next / previous kind: layer rms batch instance group",
    "  a                 cycle the reduction axes (default, then each choice)",
    "  g / G             fewer / more groups (group norm)",
    "  e / E             eps ten times smaller / larger (below 1e-12: 0)",
    "  =                 type eps exactly",
    "  p                 eps placement: inside the sqrt (var) or added to the std",
    "  d                 ddof 0 / 1",
    "  c                 centering: default, on, off",
    "  w                 gamma/beta: none, gamma 2, gamma 2 and beta 0.5",
    "  t / T             storage dtype / accumulation dtype",
    "  v                 variance algorithm: two-pass, Welford, raw moments",
    "  m                 mode: train (batch statistics) / eval (running ones)",
    "  o / O             momentum halved / doubled;  C  cumulative average",
    "",
    "Probes",
    "  s / S             shift probe x + b*1: b down / up by 1",
    "  z / Z             scale probe a*x: a halved / doubled (set{scale=-1})",
    "  < / >             target row of the batch panel",
    "  [ / ]             companion row of the batch panel",
    "  j / J             fewer / more training batches;  r  another seed",
    "",
    "Everything else",
    "  u                 undo the last change;  U or Ctrl-R  redo",
    "  :                 Lua prompt (Esc leaves). set{...} changes the state,",
    "                    get() returns it, undo() and redo() step back and forth.",
    "                    Examples: set{kind=\"rms\"}   set{x={3,1,4,1,5}, eps=0}",
    "                    Tab completes; history is shared with `normscope repl`",
    "                    Fields of set{} and get(): x kind axes groups eps eps_at",
    "                    ddof center gamma beta dtype acc algo mode batch baseline",
    "                    target companion seed train_batches batch_size momentum",
    "                    train_source (\"rng\" or \"batch\") train_loc train_scale",
    "                    shift scale focus cursor.  reset() restores the default.",
    "  ?                 this help (arrows, PgUp/PgDn scroll; Esc, ? or q close)",
    "  Ctrl-L            redraw the screen",
    "  q                 quit (Ctrl-C too)",
    "",
    "Colours: orange is positive, blue negative (a colour-blind-safe pair);",
    "NO_COLOR or --no-color turns colour off, --ascii avoids Unicode drawing.",
};

int tui_help_lines(void) {
  return (int)(sizeof help / sizeof help[0]);
}

int tui_draw_help(WINDOW *w, int scroll, const tui_view *v) {
  int n = tui_help_lines(), ih = tui_ih(w);
  char title[96];
  snprintf(title, sizeof title, "Help  (lines %d-%d of %d; Esc closes)", scroll + 1,
           scroll + ih < n ? scroll + ih : n, n);
  tui_view fv = *v;
  fv.focused = 1;
  tui_frame(w, title, &fv);
  for (int i = 0; i < ih && scroll + i < n; i++) {
    const char *line = help[scroll + i];
    int style = line[0] && line[0] != ' ' && i + scroll > 0 ? PLOT_S_LABEL : PLOT_S_TEXT;
    if (scroll + i == 0) style = PLOT_S_TITLE;
    tui_puts(w, 1 + i, 2, style, line);
  }
  return n;
}

const char *tui_settings_keys(int width) {
  static const char *items[] = {"? help",  "q quit",  ": Lua",   "u undo",  "k kind",
                                "e/E eps", "a axes",  "g grp",   "p eps@",  "d ddof",
                                "c ctr",   "w gamma", "t dtype", "T acc",   "v algo",
                                "m mode",  "o mom",   "s shift", "z scale", "Tab panel"};
  static char buf[512];
  size_t n = sizeof items / sizeof items[0];
  buf[0] = 0;
  size_t len = 0;
  for (size_t i = 0; i < n; i++) {
    size_t l = strlen(items[i]);
    if ((int)(len + l + 2) > width) break;
    len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", len ? "  " : "", items[i]);
  }
  return buf;
}
