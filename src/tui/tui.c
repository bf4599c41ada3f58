/* tui.c: the explorer's main loop: terminal set-up and restore, keys and mouse, and the
 * recompute -> redraw cycle.
 *
 * Keys never change state fields themselves: they call explore.h's helpers (or build a
 * patch) which go through ns_state_apply and the undo history; then the whole result is
 * recomputed and every panel redrawn from it. Signals only set flags; the loop reacts.
 */
#include <errno.h>
#include <lauxlib.h>
#include <langinfo.h>
#include <locale.h>
#include <lua.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "core/npy.h"
#include "lua/explore_lua.h"
#include "lua/nsl.h"
#include "tui/screen.h"
#include "tui/tui.h"

typedef enum { EDIT_NONE = 0, EDIT_CELL, EDIT_EPS } edit_kind;

typedef struct {
  tui_options opt;
  ns_state st;
  ns_history hist;
  ns_result res;
  ns_explore_cache cache; /* what res was computed for: a key recomputes only what it touched */
  int have_res;
  lua_State *L;
  tui_prompt *prompt;
  tui_layout lay;
  WINDOW *win[NS_PANEL_COUNT];
  WINDOW *header, *sb, *pwin, *status, *help;
  int colors;
  ns_panel tab;
  int help_open, help_scroll;
  edit_kind editing;
  char edit[64];
  char msg[NS_ERRLEN + 64];
  int msg_style;
  int changed; /* the state changed: recompute before drawing */
  double compute_ms;
} app;

static volatile sig_atomic_t got_int, got_term;
static int curses_on;

static void on_signal(int sig) {
  if (sig == SIGINT)
    got_int = 1;
  else
    got_term = sig;
}

/* Whatever way the process ends (q, a signal, os.exit() from the prompt), the terminal
 * is given back in a sane state. */
static void restore_terminal(void) {
  if (curses_on && !isendwin()) {
    endwin();
  }
  curses_on = 0;
}

/* A crash (a bug of ours) must not leave the user's terminal raw and without echo:
 * give it back, say what happened, then die of the same signal (as htop does). endwin
 * is not async-signal-safe, but the process is about to end either way. */
static void on_crash(int sig) {
  if (curses_on) endwin();
  static const char msg[] = "normscope: crashed (a bug); the terminal was restored. "
                            "Please report what you did.\n";
  ssize_t rc = write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)rc;
  signal(sig, SIG_DFL);
  raise(sig);
}

static void message(app *a, int style, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void message(app *a, int style, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(a->msg, sizeof a->msg, fmt, ap);
  va_end(ap);
  a->msg_style = style;
}

static void recompute(app *a) {
  char err[NS_ERRLEN];
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  a->have_res = ns_explore_update(&a->cache, &a->st, &a->res, err) == 0;
  if (!a->have_res) {
    message(a, PLOT_S_MARK, "cannot compute: %s", err);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  a->compute_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  a->changed = 0;
}

/* The result of a key helper: an error goes to the message line, nothing changes. */
static void done(app *a, int rc, const char *err, const char *what) {
  if (rc < 0)
    message(a, PLOT_S_MARK, "%s", err);
  else {
    a->changed = 1;
    if (what)
      message(a, PLOT_S_DIM, "%s", what);
    else
      a->msg[0] = 0;
  }
}

/* ---- the matrix under the cursor (input x, or the batch when panel 5 has focus) ---- */

static int on_batch(const app *a) {
  return a->st.focus == NS_PANEL_BATCH;
}

static void grid(const app *a, size_t *rows, size_t *cols) {
  const ns_tensor *t = on_batch(a) ? a->st.batch : a->st.x;
  *cols = t->shape[t->rank - 1];
  *rows = t->n / *cols;
}

static void clamp_cursor(app *a) {
  size_t rows, cols;
  grid(a, &rows, &cols);
  int r = a->st.cursor_row, c = a->st.cursor_col;
  if (r < 0) r = 0;
  if (c < 0) c = 0;
  if ((size_t)r >= rows) r = (int)rows - 1;
  if ((size_t)c >= cols) c = (int)cols - 1;
  if (r != a->st.cursor_row || c != a->st.cursor_col) ns_explore_cursor(&a->st, r, c, NULL);
}

static void focus(app *a, ns_panel p) {
  char err[NS_ERRLEN];
  if (p == a->st.focus) return;
  int matrix_change = (p == NS_PANEL_BATCH) != (a->st.focus == NS_PANEL_BATCH);
  ns_explore_focus(&a->st, p, err);
  if (matrix_change) ns_explore_cursor(&a->st, 0, 0, err);
  if (tui_panel_tabbed(p)) a->tab = p;
  clamp_cursor(a);
}

/* Arrows and typing work on the input unless the batch panel has the focus. */
static void matrix_focus(app *a) {
  if (a->st.focus != NS_PANEL_INPUT && a->st.focus != NS_PANEL_BATCH) focus(a, NS_PANEL_INPUT);
}

static void move_cursor(app *a, int dr, int dc) {
  matrix_focus(a);
  char err[NS_ERRLEN];
  size_t rows, cols;
  grid(a, &rows, &cols);
  long r = a->st.cursor_row + dr, c = a->st.cursor_col + dc;
  if (r < 0) r = 0;
  if (c < 0) c = 0;
  if ((size_t)r >= rows) r = (long)rows - 1;
  if ((size_t)c >= cols) c = (long)cols - 1;
  ns_explore_cursor(&a->st, (int)r, (int)c, err);
}

static size_t cursor_index(const app *a) {
  size_t rows, cols;
  grid(a, &rows, &cols);
  return (size_t)a->st.cursor_row * cols + (size_t)a->st.cursor_col;
}

static double cell_value(const app *a) {
  return ns_tensor_get(on_batch(a) ? a->st.batch : a->st.x, cursor_index(a));
}

static void set_cell(app *a, double v) {
  char err[NS_ERRLEN];
  int rc;
  if (on_batch(a))
    rc = ns_explore_set_batch(&a->st, &a->hist, (size_t)a->st.cursor_row, (size_t)a->st.cursor_col,
                              v, err);
  else
    rc = ns_explore_set_x(&a->st, &a->hist, cursor_index(a), v, err);
  done(a, rc, err, NULL);
}

static void commit_edit(app *a) {
  char *end;
  const char *s = a->edit;
  edit_kind k = a->editing;
  a->editing = EDIT_NONE;
  if (!*s) return;
  errno = 0;
  double v = strtod(s, &end);
  while (*end == ' ') end++;
  if (end == s || *end) {
    message(a, PLOT_S_MARK, "not a number: \"%s\" (nothing changed)", s);
    return;
  }
  if (k == EDIT_EPS) {
    char err[NS_ERRLEN];
    done(a, ns_explore_set_eps(&a->st, &a->hist, v, err), err, NULL);
  } else {
    set_cell(a, v);
  }
}

static void insert_remove(app *a, int axis, int insert) {
  matrix_focus(a);
  char err[NS_ERRLEN];
  size_t at = axis == 1 ? (size_t)a->st.cursor_row : (size_t)a->st.cursor_col;
  if (a->st.x->rank == 1 && !on_batch(a) && axis == 1) {
    message(a, PLOT_S_MARK, "x is a vector: i/x add and remove elements (set{x=...} for a matrix)");
    return;
  }
  if (insert) at++;
  int rc;
  if (on_batch(a))
    rc = insert ? ns_explore_batch_insert(&a->st, &a->hist, axis, at, err)
                : ns_explore_batch_remove(&a->st, &a->hist, axis, at, err);
  else
    rc = insert ? ns_explore_x_insert(&a->st, &a->hist, axis, at, err)
                : ns_explore_x_remove(&a->st, &a->hist, axis, at, err);
  done(a, rc, err, NULL);
  if (rc == 0 && insert) move_cursor(a, axis == 1 ? 1 : 0, axis == 2 ? 1 : 0);
  clamp_cursor(a);
}

static int apply(app *a, ns_state_patch *p, const char *what) {
  char err[NS_ERRLEN];
  int rc = ns_history_apply(&a->hist, &a->st, p, err);
  done(a, rc, err, what);
  return rc;
}

static void cycle_axes(app *a) {
  ns_state_patch p;
  ns_patch_init(&p);
  unsigned all = (1u << a->st.x->rank) - 1;
  p.set = 1u << NS_F_AXES;
  p.axes = (a->st.axes + 1) & all;
  apply(a, &p, NULL);
}

static void cycle_affine(app *a) {
  static const double two = 2, half = 0.5;
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = (1u << NS_F_GAMMA) | (1u << NS_F_BETA);
  if (a->st.ngamma == 0 && a->st.nbeta == 0) {
    p.gamma = &two;
    p.ngamma = 1;
  } else if (a->st.nbeta == 0) {
    p.gamma = &two;
    p.ngamma = 1;
    p.beta = &half;
    p.nbeta = 1;
  }
  apply(a, &p, NULL);
}

static void step_row(app *a, int which, int dir) {
  size_t B = a->st.batch->shape[0];
  int cur = which ? a->st.companion : a->st.target, other = which ? a->st.target : a->st.companion;
  int r = cur;
  for (size_t k = 0; k < B; k++) {
    r += dir;
    if (r < 1) r = (int)B;
    if (r > (int)B) r = 1;
    if (r != other) break;
  }
  if (r == cur) {
    message(a, PLOT_S_DIM, "the batch has %zu rows; add one with I while panel 5 has focus", B);
    return;
  }
  char err[NS_ERRLEN];
  done(a,
       which ? ns_explore_set_companion(&a->st, &a->hist, r, err)
             : ns_explore_set_target(&a->st, &a->hist, r, err),
       err, NULL);
}

static void train_batches(app *a, int dir) {
  ns_state_patch p;
  ns_patch_init(&p);
  long n = dir > 0 ? (long)a->st.train_batches * 2 : a->st.train_batches / 2;
  if (n < 1) n = 1;
  if (n > NS_EXPLORE_MAX_BATCHES) n = NS_EXPLORE_MAX_BATCHES;
  p.set = 1u << NS_F_TRAIN_BATCHES;
  p.train_batches = (int)n;
  apply(a, &p, NULL);
}

static void new_seed(app *a) {
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = 1u << NS_F_SEED;
  p.seed = a->st.seed + 1;
  apply(a, &p, NULL);
}

static void do_undo(app *a, int redo) {
  int ok = redo ? ns_history_redo(&a->hist, &a->st) : ns_history_undo(&a->hist, &a->st);
  if (ok) {
    a->changed = 1;
    message(a, PLOT_S_DIM, "%s (%zu undo, %zu redo left)", redo ? "redone" : "undone",
            a->hist.nundo, a->hist.nredo);
    clamp_cursor(a);
  } else {
    message(a, PLOT_S_DIM, "nothing to %s", redo ? "redo" : "undo");
  }
}

/* ---- drawing ---- */

static void free_windows(app *a) {
  for (int p = 0; p < NS_PANEL_COUNT; p++) {
    if (a->win[p]) delwin(a->win[p]);
    a->win[p] = NULL;
  }
  WINDOW **w[] = {&a->header, &a->sb, &a->pwin, &a->status, &a->help};
  for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
    if (*w[i]) delwin(*w[i]);
    *w[i] = NULL;
  }
}

static WINDOW *mkwin(tui_rect r) {
  if (r.h <= 0 || r.w <= 0) return NULL;
  return newwin(r.h, r.w, r.y, r.x);
}

static void relayout(app *a) {
  free_windows(a);
  werase(stdscr);
  tui_layout_make(&a->lay, COLS, LINES, a->tab, a->prompt && tui_prompt_is_open(a->prompt));
  if (a->lay.too_small) return;
  for (int p = 0; p < NS_PANEL_COUNT; p++) a->win[p] = mkwin(a->lay.panel[p]);
  a->header = mkwin(a->lay.header);
  a->sb = mkwin(a->lay.scrollback);
  a->pwin = mkwin(a->lay.prompt);
  a->status = mkwin(a->lay.status);
  tui_rect hr = {0, 0, LINES, COLS};
  a->help = mkwin(hr);
}

static void draw_header(app *a, const tui_view *base) {
  WINDOW *w = a->header;
  werase(w);
  wattrset(w, tui_attr(PLOT_S_TITLE) | A_REVERSE);
  mvwhline(w, 0, 0, ' ', COLS);
  mvwaddstr(w, 0, 1, "normscope");
  wattrset(w, A_NORMAL);
  for (int p = 0; p < NS_PANEL_COUNT; p++) {
    if (a->lay.tab_x[p] < 0) continue;
    int shown = !a->lay.small || a->lay.panel[p].h > 0;
    int foc = (int)a->st.focus == p;
    attr_t at =
        foc ? (tui_attr(PLOT_S_POS) | A_BOLD | A_REVERSE)
            : (shown ? (tui_attr(PLOT_S_TITLE) | A_REVERSE) : (tui_attr(PLOT_S_DIM) | A_REVERSE));
    wattrset(w, at);
    mvwprintw(w, 0, a->lay.tab_x[p], shown && a->lay.small ? "[%s]" : " %s ",
              tui_panel_title((ns_panel)p));
  }
  wattrset(w, tui_attr(PLOT_S_TITLE) | A_REVERSE);
  mvwaddstr(w, 0, COLS - 8, "? help ");
  if (!a->lay.small) { /* how long the last recompute took (the budget is one frame) */
    wattrset(w, tui_attr(PLOT_S_DIM) | A_REVERSE);
    mvwprintw(w, 0, COLS - 19, "%6.1f ms", a->compute_ms);
  }
  wattrset(w, A_NORMAL);
  (void)base;
  wnoutrefresh(w);
}

static void draw(app *a) {
  if (a->changed) recompute(a);
  if (tui_panel_tabbed(a->st.focus)) a->tab = a->st.focus; /* e.g. set{focus="batch"} */
  /* the compact layout's shared slot follows the focused tabbed panel */
  if (!a->lay.too_small && a->lay.small && a->lay.tab != a->tab) relayout(a);
  /* stdscr stays blank under the panels: refreshing it first clears whatever no window
   * covers, and keeps wget_wch from refreshing it over the panels later. */
  touchwin(stdscr);
  wnoutrefresh(stdscr);
  if (a->lay.too_small) {
    werase(stdscr);
    char l1[128], l2[128];
    snprintf(l1, sizeof l1, "normscope needs at least %dx%d", TUI_MIN_W, TUI_MIN_H);
    snprintf(l2, sizeof l2, "(this terminal is %dx%d)", COLS, LINES);
    const char *l3 = "enlarge it, or press q to quit";
    int y = LINES / 2 - 1;
    mvaddnstr(y < 0 ? 0 : y, 0, l1, COLS);
    if (LINES > 1) mvaddnstr(y + 1, 0, l2, COLS);
    if (LINES > 2) mvaddnstr(y + 2, 0, l3, COLS);
    curs_set(0);
    wnoutrefresh(stdscr);
    doupdate();
    return;
  }
  tui_view v = {0};
  v.ascii = a->opt.ascii;
  v.colors = a->colors;
  v.small = a->lay.small;
  v.file = a->opt.file;
  int prompt_open = tui_prompt_is_open(a->prompt);
  if (a->help_open) {
    werase(a->help);
    int n = tui_help_lines(), ih = LINES - 2;
    if (a->help_scroll > n - ih) a->help_scroll = n - ih;
    if (a->help_scroll < 0) a->help_scroll = 0;
    tui_draw_help(a->help, a->help_scroll, &v);
    curs_set(0);
    wnoutrefresh(a->help);
    doupdate();
    return;
  }
  draw_header(a, &v);
  static const tui_draw_fn fns[NS_PANEL_COUNT] = {
      tui_draw_input, tui_draw_settings,  tui_draw_output,   tui_draw_spectrum,
      tui_draw_batch, tui_draw_traineval, tui_draw_precision};
  for (int p = 0; p < NS_PANEL_COUNT; p++) {
    if (!a->win[p]) continue;
    tui_view pv = v;
    pv.focused = (int)a->st.focus == p && !prompt_open;
    pv.edit = a->editing == EDIT_CELL && pv.focused ? a->edit : NULL;
    werase(a->win[p]);
    fns[p](&a->st, &a->res, a->win[p], &pv);
    wnoutrefresh(a->win[p]);
  }
  if (a->sb) {
    werase(a->sb);
    tui_view sv = v;
    sv.focused = prompt_open;
    tui_draw_scrollback(a->prompt, a->sb, &sv);
    wnoutrefresh(a->sb);
  }
  werase(a->status);
  wattrset(a->status, tui_attr(PLOT_S_DIM));
  if (prompt_open)
    mvwaddnstr(a->status, 0, 0,
               "Lua: Enter runs  Tab completes  Up/Down history  PgUp/PgDn scroll  Esc leaves",
               COLS - 1);
  else if (a->editing)
    mvwaddnstr(a->status, 0, 0, "typing a number: Enter applies, Esc cancels, Backspace deletes",
               COLS - 1);
  else
    mvwaddnstr(a->status, 0, 0, tui_settings_keys(COLS - 1), COLS - 1);
  wattrset(a->status, A_NORMAL);
  wnoutrefresh(a->status);
  werase(a->pwin);
  if (prompt_open) {
    tui_draw_prompt(a->prompt, a->pwin, &v);
  } else if (a->editing == EDIT_EPS) {
    wattrset(a->pwin, tui_attr(PLOT_S_POS | PLOT_F_BOLD));
    mvwprintw(a->pwin, 0, 0, "eps = %s_", a->edit);
    wattrset(a->pwin, tui_attr(PLOT_S_DIM));
    wprintw(a->pwin, "   (now %g; Enter applies, Esc cancels)", a->st.eps);
  } else if (a->msg[0]) {
    wattrset(a->pwin, tui_attr(a->msg_style));
    mvwaddnstr(a->pwin, 0, 0, a->msg, COLS - 1);
  } else {
    wattrset(a->pwin, tui_attr(PLOT_S_DIM));
    mvwaddnstr(a->pwin, 0, 0,
               ": Lua prompt (try :set{kind=\"rms\"})   ? all keys   Tab next panel   q quit",
               COLS - 1);
  }
  wattrset(a->pwin, A_NORMAL);
  curs_set(prompt_open ? 1 : 0);
  wnoutrefresh(a->pwin); /* last: the cursor stays on the prompt */
  doupdate();
}

/* ---- keys ---- */

static int is_number_char(unsigned c) {
  return (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+';
}

static void key_edit(app *a, int code, unsigned ch) {
  size_t len = strlen(a->edit);
  if (!code && (is_number_char(ch) || ch == 'e' || ch == 'E' || ch == 'i' || ch == 'n' ||
                ch == 'f' || ch == 'a')) {
    if (len + 1 < sizeof a->edit) {
      a->edit[len] = (char)ch;
      a->edit[len + 1] = 0;
    }
  } else if ((code && ch == KEY_BACKSPACE) || (!code && (ch == 127 || ch == 8))) {
    /* an empty field stays open: extra Backspaces must not drop out of the edit and turn
     * the letters typed next ("nan", "inf") into setting keys */
    if (len) a->edit[len - 1] = 0;
  } else if ((code && ch == KEY_ENTER) || (!code && (ch == '\n' || ch == '\r'))) {
    commit_edit(a);
  } else if (!code && ch == 27) {
    a->editing = EDIT_NONE;
    message(a, PLOT_S_DIM, "edit cancelled");
  } else if (code && (ch == KEY_UP || ch == KEY_DOWN || ch == KEY_LEFT || ch == KEY_RIGHT) &&
             a->editing == EDIT_CELL) {
    commit_edit(a);
    move_cursor(a,
                ch == KEY_UP     ? -1
                : ch == KEY_DOWN ? 1
                                 : 0,
                ch == KEY_LEFT    ? -1
                : ch == KEY_RIGHT ? 1
                                  : 0);
  } else {
    message(a, PLOT_S_DIM, "typing a number: Enter applies, Esc cancels");
  }
}

static void cycle_focus(app *a, int dir) {
  focus(a, (ns_panel)(((int)a->st.focus + dir + NS_PANEL_COUNT) % NS_PANEL_COUNT));
}

static void mouse(app *a) {
  MEVENT ev;
  if (getmouse(&ev) != OK) return;
  if (ev.bstate & (BUTTON4_PRESSED)) {
    tui_prompt_scroll(a->prompt, 3);
    return;
  }
  if (!(ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON1_RELEASED))) return;
  int p = tui_layout_hit(&a->lay, ev.y, ev.x);
  if (p < 0) return;
  focus(a, (ns_panel)p);
  tui_rect r = a->lay.panel[p];
  /* a click on a cell of the input vector or of the batch moves the cursor there */
  if ((p == NS_PANEL_INPUT || p == NS_PANEL_BATCH) && r.h > 0 && ev.y > r.y) {
    size_t rows, cols;
    grid(a, &rows, &cols);
    int vec = p == NS_PANEL_INPUT && a->st.x->rank == 1;
    int lab = 4, cw = 8, per = 1;
    if (p == NS_PANEL_INPUT)
      tui_input_geometry(&a->st, r.w - 2, &lab, &cw, &per);
    else if (4 + 2 * ((int)cols * 8 + 1) > r.w - 2)
      cw = 7; /* batch.c */
    int row = ev.y - r.y - 2, col = (ev.x - r.x - 1 - lab) / cw;
    if (ev.x < r.x + 1 + lab || row < 0) return;
    if (vec) { /* the vector wraps (input.c) */
      if (col >= per) return;
      int vis = r.h - 5, cur_line = a->st.cursor_col / per;
      int l0 = a->st.focus == NS_PANEL_INPUT && cur_line >= vis ? cur_line - vis + 1 : 0;
      col += (row + l0) * per;
      row = 0;
    } else if (p == NS_PANEL_INPUT && a->st.focus == NS_PANEL_INPUT) {
      /* the window onto a large matrix follows the cursor (input.c) */
      int vis = r.h - 5;
      if (a->st.cursor_row >= vis) row += a->st.cursor_row - vis + 1;
      if (a->st.cursor_col >= per) col += a->st.cursor_col - per + 1;
    }
    if (row >= 0 && (size_t)row < rows && col >= 0 && (size_t)col < cols && ev.x > r.x + lab)
      ns_explore_cursor(&a->st, row, col, NULL);
  }
}

/* Returns 0 to quit. */
/* The main loop wakes at least this often (signals, pending redraws). */
#define TICK_MS 250

static int key(app *a, int code, unsigned ch) {
  char err[NS_ERRLEN];
  ns_state *s = &a->st;
  ns_history *h = &a->hist;
  if (code && ch == KEY_RESIZE) {
    relayout(a);
    return 1;
  }
  if (code && ch == KEY_MOUSE) {
    if (!a->help_open) mouse(a);
    return 1;
  }
  if (a->lay.too_small) return !(!code && (ch == 'q' || ch == 'Q'));
  if (a->help_open) {
    int page = LINES - 2;
    if (!code && (ch == 27 || ch == '?' || ch == 'q' || ch == '\n' || ch == '\r'))
      a->help_open = 0;
    else if (code && ch == KEY_DOWN)
      a->help_scroll++;
    else if (code && ch == KEY_UP)
      a->help_scroll--;
    else if ((code && ch == KEY_NPAGE) || (!code && ch == ' '))
      a->help_scroll += page;
    else if (code && ch == KEY_PPAGE)
      a->help_scroll -= page;
    else if (code && ch == KEY_HOME)
      a->help_scroll = 0;
    else if (code && ch == KEY_END)
      a->help_scroll = tui_help_lines();
    return 1;
  }
  if (tui_prompt_is_open(a->prompt)) {
    int was_open = 1;
    tui_prompt_key(a->prompt, code, ch);
    /* set{}, undo() and friends changed the state through explore's Lua side (on_change
     * marks it); a Lua error only reached the scrollback. */
    if (was_open && !tui_prompt_is_open(a->prompt)) relayout(a);
    clamp_cursor(a);
    return 1;
  }
  if (a->editing) {
    key_edit(a, code, ch);
    return 1;
  }
  if (code) {
    switch (ch) {
    case KEY_UP:
      move_cursor(a, -1, 0);
      break;
    case KEY_DOWN:
      move_cursor(a, 1, 0);
      break;
    case KEY_LEFT:
      move_cursor(a, 0, -1);
      break;
    case KEY_RIGHT:
      move_cursor(a, 0, 1);
      break;
    case KEY_BTAB:
      cycle_focus(a, -1);
      break;
    case KEY_PPAGE:
      tui_prompt_scroll(a->prompt, 5);
      break;
    case KEY_NPAGE:
      tui_prompt_scroll(a->prompt, -5);
      break;
    case KEY_ENTER:
      matrix_focus(a);
      a->editing = EDIT_CELL;
      plot_fmt(cell_value(a), 17, a->edit, sizeof a->edit);
      break;
    case KEY_IC:
      insert_remove(a, 2, 1);
      break;
    case KEY_DC:
      insert_remove(a, 2, 0);
      break;
    case KEY_F(1):
      a->help_open = 1;
      break;
    default:
      break;
    }
    return 1;
  }
  a->msg[0] = 0;
  if ((ch >= '0' && ch <= '9') || ch == '-' || ch == '.') {
    matrix_focus(a);
    a->editing = EDIT_CELL;
    a->edit[0] = (char)ch;
    a->edit[1] = 0;
    return 1;
  }
  switch (ch) {
  case 'q':
  case 'Q':
    return 0;
  case '?':
    a->help_open = 1;
    a->help_scroll = 0;
    break;
  case ':':
    tui_prompt_open(a->prompt);
    relayout(a);
    break;
  case '\t':
    cycle_focus(a, 1);
    break;
  case '\n':
  case '\r':
    matrix_focus(a);
    a->editing = EDIT_CELL;
    plot_fmt(cell_value(a), 17, a->edit, sizeof a->edit);
    break;
  case 12: /* Ctrl-L */
    clearok(curscr, TRUE);
    break;
  case 'u':
    do_undo(a, 0);
    break;
  case 'U':
  case 18: /* Ctrl-R */
    do_undo(a, 1);
    break;
  case 'k':
    done(a, ns_explore_cycle_kind(s, h, 1, err), err, NULL);
    break;
  case 'K':
    done(a, ns_explore_cycle_kind(s, h, -1, err), err, NULL);
    break;
  case 'a':
    cycle_axes(a);
    break;
  case 'g':
    done(a, ns_explore_groups_step(s, h, -1, err), err, NULL);
    break;
  case 'G':
    done(a, ns_explore_groups_step(s, h, 1, err), err, NULL);
    break;
  case 'e':
    done(a, ns_explore_eps_decade(s, h, -1, err), err, NULL);
    break;
  case 'E':
    done(a, ns_explore_eps_decade(s, h, 1, err), err, NULL);
    break;
  case '=':
    a->editing = EDIT_EPS;
    a->edit[0] = 0;
    break;
  case 'p':
    done(a, ns_explore_toggle_eps_at(s, h, err), err, NULL);
    break;
  case 'd':
    done(a, ns_explore_toggle_ddof(s, h, err), err, NULL);
    break;
  case 'c':
    done(a, ns_explore_cycle_center(s, h, err), err, NULL);
    break;
  case 'w':
    cycle_affine(a);
    break;
  case 't':
    done(a, ns_explore_cycle_dtype(s, h, 1, err), err, NULL);
    break;
  case 'T':
    done(a, ns_explore_cycle_acc(s, h, 1, err), err, NULL);
    break;
  case 'v':
    done(a, ns_explore_cycle_algo(s, h, 1, err), err, NULL);
    break;
  case 'm':
    done(a, ns_explore_toggle_mode(s, h, err), err, NULL);
    break;
  case 'o':
    done(a, ns_explore_momentum_step(s, h, -1, err), err, NULL);
    break;
  case 'O':
    done(a, ns_explore_momentum_step(s, h, 1, err), err, NULL);
    break;
  case 'C':
    done(a, ns_explore_toggle_cumulative(s, h, err), err, NULL);
    break;
  case 's':
    done(a, ns_explore_set_shift(s, h, s->shift - 1, err), err, NULL);
    break;
  case 'S':
    done(a, ns_explore_set_shift(s, h, s->shift + 1, err), err, NULL);
    break;
  case 'z':
    done(a, ns_explore_set_scale(s, h, s->scale / 2, err), err, NULL);
    break;
  case 'Z':
    done(a, ns_explore_set_scale(s, h, s->scale * 2, err), err, NULL);
    break;
  case '<':
    step_row(a, 0, -1);
    break;
  case '>':
    step_row(a, 0, 1);
    break;
  case '[':
    step_row(a, 1, -1);
    break;
  case ']':
    step_row(a, 1, 1);
    break;
  case 'j':
    train_batches(a, -1);
    break;
  case 'J':
    train_batches(a, 1);
    break;
  case 'r':
    new_seed(a);
    break;
  case 'n':
    matrix_focus(a);
    set_cell(a, -cell_value(a));
    break;
  case 'i':
    insert_remove(a, 2, 1);
    break;
  case 'I':
    insert_remove(a, 1, 1);
    break;
  case 'x':
    insert_remove(a, 2, 0);
    break;
  case 'X':
    insert_remove(a, 1, 0);
    break;
  case 27: {
    /* Alt-1 .. Alt-7 arrive as ESC then the digit: focus that panel directly (plain
     * digits type numbers into the input). A lone Esc does nothing here. */
    wtimeout(stdscr, 0);
    int next = getch();
    wtimeout(stdscr, TICK_MS);
    if (next >= '1' && next < '1' + NS_PANEL_COUNT)
      focus(a, (ns_panel)(next - '1'));
    else if (next != ERR)
      ungetch(next);
    break;
  }
  default:
    if (ch >= 32 && ch < 127)
      message(a, PLOT_S_DIM, "'%c' does nothing here; ? lists the keys", (int)ch);
    break;
  }
  return 1;
}

/* ---- start-up ---- */

static char *read_file(const char *path, size_t *len, char *why, size_t whylen) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(why, whylen, "%s", strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (n < cap) break;
    if (cap > ((size_t)1 << 34)) {
      snprintf(why, whylen, "file too large");
      free(buf);
      buf = NULL;
      break;
    }
    char *nb = realloc(buf, cap * 2 + 1);
    if (!nb) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = nb;
    cap *= 2;
  }
  if (!buf && !why[0]) snprintf(why, whylen, "out of memory");
  if (buf && ferror(f)) {
    snprintf(why, whylen, "%s", strerror(errno));
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) buf[n] = 0;
  *len = n;
  return buf;
}

static ns_tensor *load(const char *path, char *why, size_t whylen) {
  size_t len = 0;
  why[0] = 0;
  const char *dot = strrchr(path, '.');
  int npy = dot && strcasecmp(dot, ".npy") == 0, csv = dot && strcasecmp(dot, ".csv") == 0;
  if (!npy && !csv) {
    snprintf(why, whylen, "not a .npy or .csv file");
    return NULL;
  }
  char *buf = read_file(path, &len, why, whylen);
  if (!buf) return NULL;
  char err[NS_ERRLEN] = "";
  ns_tensor *t =
      npy ? ns_npy_parse((const unsigned char *)buf, len, err) : ns_csv_parse(buf, len, err);
  free(buf);
  if (!t) snprintf(why, whylen, "%s", err[0] ? err : "cannot parse");
  return t;
}

static void on_change(void *ud) {
  app *a = ud;
  a->changed = 1;
}

int tui_run(const tui_options *opt) {
  static app A; /* static: the atexit restore and the signal flags outlive any frame */
  app *a = &A;
  memset(a, 0, sizeof *a);
  ns_explore_cache_init(&a->cache);
  a->opt = *opt;
  char err[NS_ERRLEN];
  if (ns_state_init(&a->st, err) != 0) {
    fprintf(stderr, "normscope: %s\n", err);
    return 1;
  }
  ns_history_init(&a->hist, 1000);
  if (opt->file) {
    char why[NS_ERRLEN + 32];
    ns_tensor *t = load(opt->file, why, sizeof why);
    if (!t) {
      fprintf(stderr, "normscope: %s: %s\n", opt->file, why);
      ns_state_free(&a->st);
      ns_history_free(&a->hist);
      return 1;
    }
    ns_state_patch p;
    ns_patch_init(&p);
    /* x is computed in the file's dtype, as the framework that wrote it would */
    p.set = 1u << NS_F_X | 1u << NS_F_DTYPE;
    p.x = t;
    p.dtype = t->dtype;
    int rc = ns_state_apply(&a->st, &p, err);
    if (rc == 0 && t->rank == 2 && t->shape[0] >= 2 && t->n <= ((size_t)1 << 20)) {
      /* a matrix also becomes the batch of panel 5 (one example per row) */
      ns_state_patch q;
      ns_patch_init(&q);
      q.set = 1u << NS_F_BATCH;
      q.batch = t;
      ns_state_apply(&a->st, &q, err);
      err[0] = 0;
    }
    ns_tensor_free(t);
    if (rc != 0) {
      fprintf(stderr, "normscope: %s: %s\n", opt->file, err);
      ns_state_free(&a->st);
      ns_history_free(&a->hist);
      return 1;
    }
  }
  if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
    fprintf(stderr, "normscope: the explorer needs a terminal (stdin and stdout); "
                    "for scripts use `normscope run FILE.lua`\n");
    ns_state_free(&a->st);
    ns_history_free(&a->hist);
    return 1;
  }
  a->L = nsl_newstate(err);
  if (!a->L) {
    fprintf(stderr, "normscope: %s\n", err);
    return 1;
  }
  nsx_open(a->L, &a->st, &a->hist, on_change, a);

  setlocale(LC_ALL, "");
  /* Outside a UTF-8 locale the Unicode drawing characters would come out as garbage. */
  if (strcmp(nl_langinfo(CODESET), "UTF-8") != 0) a->opt.ascii = 1;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  sa.sa_handler = on_crash;
  sa.sa_flags = SA_RESETHAND;
  static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
  for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++) sigaction(fatal[i], &sa, NULL);
  atexit(restore_terminal);

  a->prompt = tui_prompt_new(a->L); /* before curses: readline reads its init file now */
  if (!a->prompt) {
    fprintf(stderr, "normscope: out of memory\n");
    return 1;
  }
  SCREEN *scr = newterm(NULL, stdout, stdin);
  if (!scr) {
    const char *term = getenv("TERM");
    fprintf(stderr,
            "normscope: cannot start the screen on terminal type '%s'; try "
            "`normscope repl`\n",
            term ? term : "(unset)");
    tui_prompt_free(a->prompt);
    lua_close(a->L);
    return 1;
  }
  curses_on = 1;
  if (!tigetstr("cup") || tigetstr("cup") == (char *)-1) {
    const char *term = getenv("TERM");
    restore_terminal();
    delscreen(scr);
    fprintf(stderr,
            "normscope: terminal type '%s' cannot place the cursor; the explorer "
            "needs a full-screen terminal (try TERM=xterm-256color, or `normscope repl`)\n",
            term ? term : "(unset)");
    tui_prompt_free(a->prompt);
    lua_close(a->L);
    return 1;
  }
  cbreak();
  noecho();
  nonl();
  keypad(stdscr, TRUE);
  /* Home/End as other terminals (and tmux) send them, whatever TERM's terminfo says, so
   * a mismatched TERM does not turn them into Esc + digits. */
  static const struct {
    const char *seq;
    int key;
  } extra[] = {{"\033[1~", KEY_HOME}, {"\033[4~", KEY_END}, {"\033[7~", KEY_HOME},
               {"\033[8~", KEY_END},  {"\033[H", KEY_HOME}, {"\033[F", KEY_END},
               {"\033OH", KEY_HOME},  {"\033OF", KEY_END}};
  for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
    if (key_defined(extra[i].seq) == 0) define_key(extra[i].seq, extra[i].key);
  set_escdelay(25);
  curs_set(0);
  const char *nc = getenv("NO_COLOR");
  a->colors = tui_theme_init(!opt->no_color && !(nc && nc[0]));
  if (!opt->no_mouse) {
    mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
    mouseinterval(0);
  }
  refresh();
  a->changed = 1;
  a->tab = NS_PANEL_SETTINGS;
  relayout(a);
  draw(a);
  wtimeout(stdscr, TICK_MS);
  int status = 0;
  for (;;) {
    wint_t wc;
    int rc = wget_wch(stdscr, &wc);
    if (got_term) {
      status = 128 + (int)got_term;
      break;
    }
    if (got_int) {
      got_int = 0;
      if (tui_prompt_is_open(a->prompt))
        tui_prompt_cancel(a->prompt);
      else if (a->editing)
        a->editing = EDIT_NONE;
      else
        break;
      draw(a);
      continue;
    }
    if (rc == ERR) {
      /* A timeout is normal; input gone for good (the terminal closed) is not. */
      if (!isatty(STDIN_FILENO)) break;
      continue;
    }
    int go = key(a, rc == KEY_CODE_YES, (unsigned)wc);
    if (!go) break;
    draw(a);
  }
  free_windows(a);
  restore_terminal();
  delscreen(scr);
  tui_prompt_free(a->prompt);
  lua_close(a->L);
  ns_result_free(&a->res);
  ns_explore_cache_free(&a->cache);
  ns_history_free(&a->hist);
  ns_state_free(&a->st);
  return status;
}
