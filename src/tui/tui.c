/* tui.c: the explorer's main loop: terminal set-up and restore, layout and the
 * recompute -> redraw cycle (keys.c handles the keys and the mouse).
 *
 * After a key (or a set{} at the prompt) the whole result is recomputed and every panel
 * redrawn from it. Signals only set flags; the loop reacts.
 */
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <lua.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include <lauxlib.h>

#include "explore/file.h"
#include "lua/explore_lua.h"
#include "lua/nsl.h"
#include "tui/app.h"
#include "tui/screen.h"
#include "tui/tui.h"

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

/* NS_TUI_SLOW_MS: milliseconds added to every recompute (0 to 60000, default 0), a slow
 * machine's stand-in for the screen tests of the busy mark and of key folding
 * (tests/tui/test_screen_busy.sh), which must not depend on how fast this one is. Read once
 * at start-up; the numerics never see it. */
static long slow_ms;

static void read_slow_ms(void) {
  const char *v = getenv("NS_TUI_SLOW_MS");
  char *end;
  long ms = v && v[0] ? strtol(v, &end, 10) : 0;
  slow_ms = v && v[0] && *end == 0 && ms > 0 && ms <= 60000 ? ms : 0;
}

/* NS_TUI_SETTLED_FD: a file descriptor the explorer writes "settled\n" to each time the
 * screen has caught up with the last key (or with the start): the frame is drawn and no
 * worker is still computing a part of it. The live bench (tests/bench/bench_live.c) times
 * keys to it: what the user waits for, not only the recompute. */
static int settled_fd = -1, settle_due = 1;

static void read_settled_fd(void) {
  const char *v = getenv("NS_TUI_SETTLED_FD");
  char *end;
  long fd = v && v[0] ? strtol(v, &end, 10) : -1;
  settled_fd = v && v[0] && *end == 0 && fd > 2 && fd < 1024 ? (int)fd : -1;
}

static void report_settled(const app *a) {
  if (settled_fd < 0 || !settle_due || a->changed || tui_jac_busy(a)) return;
  settle_due = 0;
  if (write(settled_fd, "settled\n", 8) != 8) settled_fd = -1;
}

static void recompute(app *a) {
  char err[NS_ERRLEN];
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (slow_ms > 0) {
    struct timespec d = {slow_ms / 1000, (slow_ms % 1000) * 1000000L};
    while (nanosleep(&d, &d) != 0 && errno == EINTR) {
    }
  }
  /* the keys this recompute covers: the one that asked for it and those folded after it */
  a->calc_keys = 1 + a->folded;
  a->folded = 0;
  a->have_res = ns_explore_update(&a->cache, &a->st, &a->res, err) == 0;
  if (!a->have_res) {
    tui_say(a, PLOT_S_MARK, "cannot compute: %s", err);
  }
  tui_jac_after_recompute(a); /* the full Jacobian, if stale, goes to the worker */
  clock_gettime(CLOCK_MONOTONIC, &t1);
  a->compute_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  a->changed = 0;
}

/* Key folding: after a key that changed the state, the keys already waiting (typed during
 * the last recompute) are handled too before anything is recomputed, so a burst of keys
 * costs one recompute of the latest state. Each still changes the state through the one
 * entry point, so undo has every step. Returns the union of the keys' TUI_R_* flags. */
static unsigned fold_pending(app *a, unsigned r) {
  a->folded = 0;
  wtimeout(stdscr, 0);
  while (!(r & TUI_R_QUIT) && !got_term && !got_int) {
    wint_t wc;
    int rc = wget_wch(stdscr, &wc);
    if (rc == ERR) break;
    r |= tui_key(a, rc == KEY_CODE_YES, (unsigned)wc);
    a->folded++;
  }
  return r;
}

/* ---- drawing ---- */

static void free_windows(app *a) {
  for (int p = 0; p < TUI_PANEL_COUNT; p++) {
    if (a->win[p]) delwin(a->win[p]);
    a->win[p] = NULL;
  }
  WINDOW **w[] = {&a->header, &a->sb, &a->pwin, &a->status, &a->help, &a->lwin, &a->vwin};
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
  tui_rect pane, view; /* a lesson's pane takes rows from the panels, its view their place */
  tui_player_layout(a, &a->lay, &pane, &view);
  a->lwin = mkwin(pane);
  a->vwin = mkwin(view);
  for (int p = 0; p < TUI_PANEL_COUNT; p++) a->win[p] = mkwin(a->lay.panel[p]);
  a->header = mkwin(a->lay.header);
  a->sb = mkwin(a->lay.scrollback);
  a->pwin = mkwin(a->lay.prompt);
  a->status = mkwin(a->lay.status);
  tui_rect hr = {0, 0, LINES, COLS};
  a->help = mkwin(hr);
}

static void draw_header(app *a) {
  WINDOW *w = a->header;
  werase(w);
  wattrset(w, tui_attr(PLOT_S_TITLE) | A_REVERSE);
  mvwhline(w, 0, 0, ' ', COLS);
  /* a classroom's words (FOLLOWING, the teacher's step) in place of the name and the timing */
  char title[16] = "normscope", note[64] = "";
  const tui_hook *hook = a->opt.hook;
  if (hook && hook->tag) hook->tag(hook->ud, a, title, note, sizeof note);
  mvwaddnstr(w, 0, 1, title, 9);
  wattrset(w, A_NORMAL);
  for (int p = 0; p < TUI_PANEL_COUNT; p++) {
    if (a->lay.tab_x[p] < 0) continue;
    int shown = !a->lay.small || a->lay.panel[p].h > 0;
    int foc = (int)a->view.focus == p;
    attr_t at =
        foc ? (tui_attr(PLOT_S_FOCUS) | A_BOLD | A_REVERSE)
            : (shown ? (tui_attr(PLOT_S_TITLE) | A_REVERSE) : (tui_attr(PLOT_S_DIM) | A_REVERSE));
    wattrset(w, at);
    mvwprintw(w, 0, a->lay.tab_x[p], shown && a->lay.small ? "[%s]" : " %s ",
              tui_panel_title((tui_panel)p));
  }
  wattrset(w, tui_attr(PLOT_S_TITLE) | A_REVERSE);
  mvwaddstr(w, 0, COLS - 8, "? help ");
  int end = 0;
  for (int p = 0; p < TUI_PANEL_COUNT; p++)
    if (a->lay.tab_x[p] >= 0 && a->lay.tab_x[p] + a->lay.tab_w[p] > end)
      end = a->lay.tab_x[p] + a->lay.tab_w[p];
  int nl = (int)strlen(note);
  if (nl && COLS - 9 - nl > end) {
    wattrset(w, tui_attr(PLOT_S_MARK) | A_BOLD | A_REVERSE);
    mvwaddstr(w, 0, COLS - 9 - nl, note);
  } else { /* wherever the tabs leave room for it (the compact layouts too) */
    /* how long the last recompute took (the budget is one frame), marked above 100 ms;
     * "busy" while a recompute that is expected to be that slow runs */
    int slow = a->busy || a->compute_ms > TUI_BUSY_MS;
    wattrset(w, tui_attr(slow ? PLOT_S_MARK : PLOT_S_DIM) | A_REVERSE);
    /* ", 5 keys": that many keys were folded into the last recompute (dropped first
     * when the header is short of room) */
    char ms[64], keys[24] = "";
    if (a->calc_keys > 1) snprintf(keys, sizeof keys, ", %d keys", a->calc_keys);
    for (int full = 1; full >= 0; full--) {
      int l = a->busy ? snprintf(ms, sizeof ms, "* busy *")
                      : snprintf(ms, sizeof ms, "calc %.1f ms%s%s", a->compute_ms, full ? keys : "",
                                 tui_jac_busy(a) ? " +J" : "");
      if (COLS - 9 - l > end) {
        mvwaddstr(w, 0, COLS - 9 - l, ms);
        break;
      }
    }
  }
  wattrset(w, A_NORMAL);
  wnoutrefresh(w);
}

void tui_draw_xview_in(app *a, WINDOW *w, const tui_view *v) {
  tui_view xv = *v;
  xv.focused = 1;
  switch (a->xfigure ? TUI_XV_COUNT : a->xview) {
  case TUI_XV_COUNT:
    tui_draw_xfigure(&a->st, &a->res, &a->stack, a->xview, w, &xv);
    break;
  case TUI_XV_PLACEMENT:
    tui_draw_placement(&a->st, &a->res, w, &xv);
    break;
  case TUI_XV_BACKWARD:
    tui_draw_backward(&a->st, &a->res, w, &xv);
    break;
  case TUI_XV_SHIFT:
    tui_draw_evalshift(&a->st, &a->res, w, &xv);
    break;
  default:
    tui_draw_stack(&a->stack, w, &xv);
    break;
  }
}

/* A full-screen view drawn into a->help: the message line below it, then shown. */
static void show_full(app *a) {
  if (a->msg[0]) {
    wattrset(a->help, tui_attr(a->msg_style));
    mvwaddnstr(a->help, LINES - 1, 2, a->msg, COLS - 4);
    wattrset(a->help, A_NORMAL);
  }
  curs_set(0);
  wnoutrefresh(a->help);
  doupdate();
}

/* The open experiment view fills the screen; the message line stays below. */
static void draw_xview(app *a, const tui_view *v) {
  werase(a->help);
  tui_draw_xview_in(a, a->help, v);
  show_full(a);
}

/* The screen is too small: say what it needs. */
static void draw_too_small(void) {
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
}

/* The help screen over everything. */
static void draw_help_screen(app *a, const tui_view *v) {
  werase(a->help);
  int n = tui_help_lines(a->view.focus, COLS - 4), ih = LINES - 2;
  if (a->help_scroll > n - ih) a->help_scroll = n - ih;
  if (a->help_scroll < 0) a->help_scroll = 0;
  tui_draw_help(a->help, a->help_scroll, v);
  curs_set(0);
  wnoutrefresh(a->help);
  doupdate();
}

/* The focused panel's figure, full screen, redrawn live, with the message line. */
static void draw_figure_screen(app *a, const tui_view *v) {
  werase(a->help);
  tui_draw_figure(&a->st, &a->res, a->help, v);
  show_full(a);
}

/* The status line: the keys that work now. */
static void draw_status(app *a, int prompt_open) {
  werase(a->status);
  wattrset(a->status, tui_attr(PLOT_S_DIM));
  if (prompt_open)
    mvwaddnstr(a->status, 0, 0,
               "Lua: Enter runs  Tab completes  Up/Down history  PgUp/PgDn scroll  Esc leaves",
               COLS - 1);
  else if (a->editing)
    mvwaddnstr(a->status, 0, 0, "typing a number: Enter applies, Esc cancels, Backspace deletes",
               COLS - 1);
  else {
    char keys[512];
    mvwaddnstr(a->status, 0, 0, tui_status_keys(a->view.focus, COLS - 1, keys, sizeof keys),
               COLS - 1);
  }
  wattrset(a->status, A_NORMAL);
  wnoutrefresh(a->status);
}

/* The prompt line: the Lua prompt, a number being typed, the message or the hint. */
static void draw_prompt_line(app *a, const tui_view *v, int prompt_open) {
  werase(a->pwin);
  if (prompt_open) {
    tui_draw_prompt(a->prompt, a->pwin, v);
  } else if (a->editing == EDIT_EPS) {
    wattrset(a->pwin, tui_attr(PLOT_S_FOCUS | PLOT_F_BOLD));
    mvwprintw(a->pwin, 0, 0, "eps = %s_", a->edit);
    wattrset(a->pwin, tui_attr(PLOT_S_DIM));
    wprintw(a->pwin, "   (now %g; Enter applies, Esc cancels)", a->st.eps);
  } else if (a->editing == EDIT_CELL) { /* the whole number: the cell shows only its tail */
    char name[64];
    wattrset(a->pwin, tui_attr(PLOT_S_FOCUS | PLOT_F_BOLD));
    mvwprintw(a->pwin, 0, 0, "%s = %s_", tui_edit_cell_name(a, name, sizeof name), a->edit);
    wattrset(a->pwin, tui_attr(PLOT_S_DIM));
    wprintw(a->pwin, "   (Enter applies, Esc cancels)");
  } else if (a->editing == EDIT_STEP) {
    wattrset(a->pwin, tui_attr(PLOT_S_FOCUS | PLOT_F_BOLD));
    mvwprintw(a->pwin, 0, 0, "go to step %s_", a->edit);
    wattrset(a->pwin, tui_attr(PLOT_S_DIM));
    wprintw(a->pwin, "   (a number; Enter goes, Esc cancels)");
  } else if (a->editing == EDIT_ANSWER) {
    wattrset(a->pwin, tui_attr(PLOT_S_FOCUS | PLOT_F_BOLD));
    mvwprintw(a->pwin, 0, 0, "answer = %s_", a->edit);
    wattrset(a->pwin, tui_attr(PLOT_S_DIM));
    wprintw(a->pwin, "   (a number or a Lua expression; Enter answers, Esc cancels)");
  } else if (a->msg[0]) {
    wattrset(a->pwin, tui_attr(a->msg_style));
    mvwaddnstr(a->pwin, 0, 0, a->msg, COLS - 1);
  } else {
    wattrset(a->pwin, tui_attr(PLOT_S_DIM));
    const char *hint = tui_player_hint(a);
    mvwaddnstr(a->pwin, 0, 0,
               hint ? hint
                    : ": opens the Lua prompt (try set{kind=\"rms\"})   ? keys   f figure   q quit",
               COLS - 1);
  }
  wattrset(a->pwin, A_NORMAL);
}

static void draw_screen(app *a) {
  if (a->changed) {
    /* the last recompute was slow, so this one likely is: say so before it starts */
    if (a->compute_ms > TUI_BUSY_MS && a->header && !a->lay.too_small) {
      a->busy = 1;
      draw_header(a);
      doupdate();
    }
    recompute(a);
    a->busy = 0;
    tui_player_changed(a); /* the try-it's verdict on the new state */
  }
  /* a lesson's step: the pane and the focused panel get the rows they need now */
  if (!a->lay.too_small && tui_player_layout_stale(a)) relayout(a);
  if (tui_panel_tabbed(a->view.focus)) a->tab = a->view.focus; /* e.g. set{focus="batch"} */
  /* the compact layout's shared slot follows the focused tabbed panel */
  if (!a->lay.too_small && a->lay.small && a->lay.tab != a->tab) relayout(a);
  /* stdscr stays blank under the panels: refreshing it first clears whatever no window
   * covers, and keeps wget_wch from refreshing it over the panels later. */
  touchwin(stdscr);
  wnoutrefresh(stdscr);
  if (a->lay.too_small) {
    draw_too_small();
    return;
  }
  tui_view v = {0};
  v.vs = &a->view;
  v.ascii = a->opt.ascii;
  v.colors = a->colors;
  v.small = a->lay.small;
  int prompt_open = tui_prompt_is_open(a->prompt);
  if (a->help_open) {
    draw_help_screen(a, &v);
    return;
  }
  int lesson = a->lwin && tui_player_lesson_open(a); /* views go above the lesson pane */
  /* the focused panel's figure; the prompt (:) shows the panels, as below */
  if (a->figure_open && !prompt_open && !lesson) {
    draw_figure_screen(a, &v);
    return;
  }
  if (!prompt_open && tui_audit_draw(a, &v)) return; /* the audit panel (a) */
  if (a->xview && !prompt_open && !lesson) { /* an experiment view, full screen, redrawn live; the
                                     prompt (:) shows the panels and returns to it */
    draw_xview(a, &v);
    return;
  }
  if (tui_player_present(a, &v)) return; /* --present: the lesson fills the screen */
  draw_header(a);
  int viewed = tui_player_draw_view(a, &v); /* a lesson's view in the panels' place */
  for (int p = 0; p < TUI_PANEL_COUNT && !viewed; p++) {
    if (!a->win[p]) continue;
    tui_view pv = v;
    pv.focused = (int)a->view.focus == p && !prompt_open;
    pv.edit = a->editing == EDIT_CELL && pv.focused ? a->edit : NULL;
    werase(a->win[p]);
    tui_panels[p].draw(&a->st, &a->res, a->win[p], &pv);
    wnoutrefresh(a->win[p]);
  }
  tui_player_draw(a);
  if (a->sb) {
    werase(a->sb);
    tui_view sv = v;
    sv.focused = prompt_open;
    tui_draw_scrollback(a->prompt, a->sb, &sv);
    wnoutrefresh(a->sb);
  }
  draw_status(a, prompt_open);
  draw_prompt_line(a, &v, prompt_open);
  curs_set(prompt_open ? 1 : 0);
  wnoutrefresh(a->pwin); /* last: the cursor stays on the prompt */
  doupdate();
}

/* A frame, then the classroom's look at it (the teacher publishes a change). */
static void draw(app *a) {
  draw_screen(a);
  if (a->opt.hook && a->opt.hook->drawn) a->opt.hook->drawn(a->opt.hook->ud, a);
}

/* The next key within ms, or ERR. With a classroom, its descriptor wakes the wait too (a
 * key curses holds already comes first); the caller then hands the news to the hook. */
static int wait_key(app *a, int ms, wint_t *wc) {
  const tui_hook *h = a->opt.hook;
  int fd = h && h->fd ? h->fd(h->ud) : -1;
  wtimeout(stdscr, fd < 0 ? ms : 0);
  int rc = wget_wch(stdscr, wc);
  if (rc != ERR || fd < 0) return rc;
  struct pollfd pf[2] = {{STDIN_FILENO, POLLIN, 0}, {fd, POLLIN, 0}};
  (void)poll(pf, 2, ms);
  return wget_wch(stdscr, wc);
}

/* ---- start-up ---- */

/* The view fields of set{} and get(): focus (a panel name), cursor ({row, col}) and figure
 * (true: the figure view is open; plot(panel) sets it with focus). */
static const char *const view_fields[] = {"focus", "cursor", "figure", NULL};

static int view_check(lua_State *L, void *ud, const char *field, int idx, char *err) {
  app *a = ud;
  if (strcmp(field, "focus") == 0) {
    const char *pn = lua_type(L, idx) == LUA_TSTRING ? lua_tostring(L, idx) : NULL;
    int k = pn ? ns_choice_parse(tui_panel_names, pn) : -1;
    if (k < 0) {
      char list[160];
      snprintf(err, NS_ERRLEN, "unknown panel '%s' (%s)", pn ? pn : luaL_typename(L, idx),
               ns_choice_list(tui_panel_names, list, sizeof list));
      return -1;
    }
    a->pending.focus = (tui_panel)k;
    return 0;
  }
  if (strcmp(field, "figure") == 0) {
    if (lua_type(L, idx) != LUA_TBOOLEAN) {
      snprintf(err, NS_ERRLEN, "expected true (open the figure view) or false, got %s",
               luaL_typename(L, idx));
      return -1;
    }
    a->figure_req = lua_toboolean(L, idx) ? 1 : 2;
    return 0;
  }
  /* cursor */
  lua_Integer rc[2];
  if (lua_type(L, idx) != LUA_TTABLE || lua_rawlen(L, idx) != 2) {
    snprintf(err, NS_ERRLEN, "expected {row, col} (1-based)");
    return -1;
  }
  for (int k = 0; k < 2; k++) {
    lua_rawgeti(L, idx, k + 1);
    int isint = 0;
    rc[k] = lua_tointegerx(L, -1, &isint);
    lua_pop(L, 1);
    if (!isint || rc[k] < 1 || rc[k] > (1 << 30)) {
      snprintf(err, NS_ERRLEN, "%s must be an integer >= 1", k ? "column" : "row");
      return -1;
    }
  }
  a->pending.cursor_row = (int)rc[0] - 1;
  a->pending.cursor_col = (int)rc[1] - 1;
  return 0;
}

static void view_commit(void *ud) {
  app *a = ud;
  a->view = a->pending;
  if (a->figure_req) a->figure_open = a->figure_req == 1;
  a->figure_req = 0;
  a->changed = 1;
}

static void view_push(lua_State *L, void *ud) {
  app *a = ud;
  a->pending = a->view; /* set{} calls this first: its checks start from the view as it is */
  a->figure_req = 0;
  lua_pushstring(L, tui_panel_names[a->view.focus]);
  lua_setfield(L, -2, "focus");
  lua_createtable(L, 2, 0);
  lua_pushinteger(L, a->view.cursor_row + 1);
  lua_rawseti(L, -2, 1);
  lua_pushinteger(L, a->view.cursor_col + 1);
  lua_rawseti(L, -2, 2);
  lua_setfield(L, -2, "cursor");
  lua_pushboolean(L, a->figure_open);
  lua_setfield(L, -2, "figure");
}

static const nsx_view screen_view = {view_fields, view_check, view_commit, view_push};

/* Opens a tensor file as x (in the file's dtype, as the framework that wrote it would
 * compute); a matrix also becomes the batch of panel 5 (one example per row). */
static int open_file(app *a, const char *path, const char *name, char *err) {
  char e[NS_ERRLEN], note[NS_ERRLEN];
  ns_tensor *t = ns_file_load_note(path, name, 0, note, e);
  if (!t) { /* the path and the whole message (a safetensors file's list of tensors) */
    fprintf(stderr, "normscope: %s: %s\n", path, e);
    err[0] = 0;
    return -1;
  }
  ns_state_patch p;
  ns_patch_init(&p);
  ns_patch_set(&p, NS_F_X);
  ns_patch_set(&p, NS_F_DTYPE);
  ns_patch_set(&p, NS_F_SOURCE);
  p.v.x = t;
  p.v.dtype = t->dtype;
  char src[1024];
  snprintf(src, sizeof src, name ? "%s:%s" : "%s", path, name); /* a dump names the tensor */
  p.v.source = src;
  int rc = ns_state_apply(&a->st, &p, e);
  if (rc == 0 && t->rank == 2 && t->shape[0] >= 2 && t->n <= NS_EXPLORE_MAX_BATCH_ELEMS) {
    ns_state_patch q;
    ns_patch_init(&q);
    ns_patch_set(&q, NS_F_BATCH);
    q.v.batch = t;
    (void)ns_state_apply(&a->st, &q, NULL);
  }
  ns_tensor_free(t);
  if (rc != 0) snprintf(err, NS_ERRLEN, "%.96s: %.150s", path, e);
  if (rc == 0 && note[0]) { /* what the load skipped (a CSV header), on the message line */
    const char *base = strrchr(path, '/');
    tui_say(a, PLOT_S_DIM, "%.60s: %s", base ? base + 1 : path, note);
  }
  return rc;
}

const char *tui_last_state_path(char *buf, size_t len) {
  char dir[1024];
  if (!ns_file_state_dir(dir, sizeof dir)) return NULL;
  snprintf(buf, len, "%s/last.lua", dir);
  return buf;
}

/* Writes the state to last.lua on the way out (atomically), for --resume. */
static void autosave(const app *a) {
  char dir[1024], path[1100], err[NS_ERRLEN];
  if (!ns_file_state_dir(dir, sizeof dir) || ns_file_mkdirs(dir, err) != 0) return;
  snprintf(path, sizeof path, "%s/last.lua", dir);
  /* private, as the history beside it is: it may name the user's files (the mode is set
     before the rename, so the file is never readable by others) */
  (void)ns_state_save(&a->st, path, 0600, err);
}

/* Applies a state file (--state, --resume) through the prompt's load(). */
static int load_state(app *a, const char *path, char *err) {
  lua_getglobal(a->L, "load");
  lua_pushstring(a->L, path);
  if (lua_pcall(a->L, 1, 0, 0) != LUA_OK) {
    snprintf(err, NS_ERRLEN, "%s", lua_tostring(a->L, -1));
    lua_pop(a->L, 1);
    return -1;
  }
  return 0;
}

/* --resume whose saved state cannot be applied (a file it names is gone, say): asked at a
 * terminal, set it aside as last.lua.failed and go on from the default state; else say how
 * to start. Returns 0 to go on. */
static int offer_fresh_start(const char *path) {
  char aside[1100];
  snprintf(aside, sizeof aside, "%s.failed", path);
  if (!isatty(STDIN_FILENO) || !isatty(STDERR_FILENO)) {
    fprintf(stderr,
            "normscope: start without --resume for the default screen (the saved state "
            "stays in %s until that session ends)\n",
            path);
    return -1;
  }
  fprintf(stderr,
          "normscope: start from the default screen instead, keeping the saved state "
          "as %s? [y/N] ",
          aside);
  fflush(stderr);
  char line[64];
  if (!fgets(line, sizeof line, stdin) || (line[0] != 'y' && line[0] != 'Y')) return -1;
  if (rename(path, aside) != 0) {
    fprintf(stderr, "normscope: %s: %s (nothing started)\n", aside, strerror(errno));
    return -1;
  }
  return 0;
}

/* "= EXPR" at the prompt with a lesson open: its answer, the verdict in the scrollback. */
static int prompt_answer(void *ud, const char *expr) {
  app *a = ud;
  if (!tui_player_lesson_open(a)) return 0;
  a->msg[0] = 0;
  tui_player_answer(a, expr);
  const char *said = a->msg[0] ? a->msg : tui_player_note(a);
  tui_prompt_echo(a->prompt, said && said[0] ? said : "answered",
                  a->msg[0] ? a->msg_style : PLOT_S_GOOD);
  a->changed = 1;
  return 1;
}

static void on_change(void *ud) {
  app *a = ud;
  a->changed = 1;
}

/* Ctrl-C, SIGTERM and SIGHUP end the loop; a crash restores the terminal first. */
static void install_signals(void) {
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
}

/* Starts curses on the terminal (*out: its screen, for delscreen): keys, colours, the
 * mouse. 0, or -1 after saying why on stderr. */
static int start_curses(app *a, const tui_options *opt, SCREEN **out) {
  /* an unknown TERM is refused before newterm, which would leak it (termcheck.c) */
  SCREEN *scr = *out = tui_term_known() ? newterm(NULL, stdout, stdin) : NULL;
  if (!scr) {
    const char *term = getenv("TERM");
    fprintf(stderr,
            "normscope: cannot start the screen on terminal type '%s'; try "
            "`normscope repl`\n",
            term ? term : "(unset)");
    return -1;
  }
  curses_on = 1;
  if (!tigetstr("cup") || tigetstr("cup") == (char *)-1) {
    const char *term = getenv("TERM");
    restore_terminal();
    fprintf(stderr,
            "normscope: terminal type '%s' cannot place the cursor; the explorer "
            "needs a full-screen terminal (try TERM=xterm-256color, or `normscope repl`)\n",
            term ? term : "(unset)");
    return -1;
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
  a->colors = tui_theme_init(!opt->no_color && !(nc && nc[0]), tui_theme_find(opt->theme));
  if (!opt->no_mouse) {
    mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
    mouseinterval(0);
  }
  return 0;
}

/* What the screen's model holds, after the windows and curses are gone: the prompt, the Lua
 * state, the result and its cache, the undo history and the state. */
static void free_model(app *a) {
  tui_prompt_free(a->prompt);
  if (a->L) lua_close(a->L);
  ns_result_free(&a->res);
  ns_explore_cache_free(&a->cache);
  ns_history_free(&a->hist);
  ns_state_free(&a->st);
}

/* The key loop: waits for a key or a worker, dispatches, draws. Returns the exit status
 * (0, or 128 + the signal that ended it). */
static int key_loop(app *a) {
  const tui_hook *hook = a->opt.hook;
  int status = 0;
  for (;;) {
    wint_t wc;
    report_settled(a);
    /* while the deep-stack view's thread works, look at its progress ten times a second */
    int shown = a->stack_shown;
    int busy = a->stack.started && shown >= 0 && shown < TUI_STACK_RUNS;
    /* while the Jacobian's worker runs, look for its result every few frames */
    int ms = tui_jac_busy(a) ? TUI_JAC_POLL_MS : busy || tui_audit_busy(a) ? 100 : TICK_MS;
    int rc = wait_key(a, ms, &wc);
    if (tui_jac_poll(a) && rc == ERR && !got_term && !got_int) {
      draw(a); /* the full Jacobian landed */
      continue;
    }
    if (rc == ERR && tui_audit_tick(a) && !got_term && !got_int) { /* the audit's progress */
      draw(a);
      continue;
    }
    if (busy && (a->stack_shown = tui_stack_progress(&a->stack)) != shown && rc == ERR &&
        !got_term && !got_int) {
      draw(a);
      continue;
    }
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
      unsigned t = tui_player_tick(a); /* --autoplay's next step */
      if (hook && hook->ready) t |= hook->ready(hook->ud, a);
      if (t & TUI_R_RELAYOUT) relayout(a);
      if (t) draw(a);
      continue;
    }
    unsigned r = tui_key(a, rc == KEY_CODE_YES, (unsigned)wc);
    settle_due = 1;
    if (r & TUI_R_RECOMPUTE) r = fold_pending(a, r);
    if (r & TUI_R_QUIT) break;
    if (r & TUI_R_RECOMPUTE) a->changed = 1;
    if (r & TUI_R_RELAYOUT) relayout(a);
    if (r & TUI_R_REPAINT) clearok(curscr, TRUE);
    draw(a);
  }
  return status;
}

int tui_run(const tui_options *opt) {
  static app A; /* static: the atexit restore and the signal flags outlive any frame */
  app *a = &A;
  memset(a, 0, sizeof *a);
  ns_explore_cache_init(&a->cache);
  a->cache.defer_jac = 1; /* the full Jacobian runs in a worker: keys never wait for it */
  /* the main normalization uses every core unless NS_THREADS says otherwise */
  nsl_exec_from_env(&a->cache.exec, (int)sysconf(_SC_NPROCESSORS_ONLN));
  a->opt = *opt;
  read_slow_ms();
  read_settled_fd();
  char err[NS_ERRLEN];
  if (ns_state_init(&a->st, err) != 0) {
    fprintf(stderr, "normscope: %s\n", err);
    return 1;
  }
  ns_history_init(&a->hist, 1000);
  /* from here on every way out goes through `out`, which frees what exists so far */
  int status = 1, looped = 0;
  SCREEN *scr = NULL;
  if (opt->file && open_file(a, opt->file, opt->tensor, err) != 0) {
    if (err[0]) fprintf(stderr, "normscope: %s\n", err);
    goto out;
  }
  a->L = nsl_newstate(err);
  if (!a->L) {
    fprintf(stderr, "normscope: %s\n", err);
    goto out;
  }
  nsx_ctx *ctx = nsx_open(a->L, &a->st, &a->hist, on_change, a);
  nsx_set_view(ctx, &screen_view, a);
  if (opt->state_file && load_state(a, opt->state_file, err) != 0) {
    fprintf(stderr, "normscope: %s\n", err);
    if (!opt->resume || offer_fresh_start(opt->state_file) != 0) goto out;
  }
  /* a lesson's first step, or the recorder */
  if (tui_player_open(a) != 0) goto out;
  ns_history_free(&a->hist); /* the starting state is not an undo step */
  ns_history_init(&a->hist, 1000);
  if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
    fprintf(stderr, "normscope: the explorer needs a terminal (stdin and stdout); "
                    "for scripts use `normscope run FILE.lua`\n");
    goto out;
  }

  setlocale(LC_ALL, "");
  /* Outside a UTF-8 locale the Unicode drawing characters would come out as garbage. */
  if (strcmp(nl_langinfo(CODESET), "UTF-8") != 0) a->opt.ascii = 1;
  install_signals();

  a->prompt = tui_prompt_new(a->L); /* before curses: readline reads its init file now */
  if (!a->prompt) {
    fprintf(stderr, "normscope: out of memory\n");
    goto out;
  }
  tui_prompt_set_answer(a->prompt, prompt_answer, a);
  if (start_curses(a, opt, &scr) != 0) goto out;
  refresh();
  a->changed = 1;
  a->tab = TUI_PANEL_SETTINGS;
  relayout(a);
  /* a follower's first frame (read before the screen started) is on the first screen */
  const tui_hook *hook = a->opt.hook;
  if (hook && hook->ready && (hook->ready(hook->ud, a) & TUI_R_RELAYOUT)) relayout(a);
  draw(a);
  wtimeout(stdscr, TICK_MS);
  status = key_loop(a);
  looped = 1;
  autosave(a); /* q, Ctrl-C, SIGTERM, SIGHUP, a closed terminal: --resume brings it back */
out:
  tui_stack_stop(&a->stack);
  tui_audit_free(a);
  tui_jac_stop(a);
  free_windows(a);
  restore_terminal();
  if (looped) tui_player_finish(a); /* the lesson's progress, the recording (it may print) */
  tui_player_free(a);
  if (scr) delscreen(scr);
  free_model(a);
  return status;
}

/* ---- the layout test ---- */

/* The rectangles of the screen's regions, for the overlap check. */
typedef struct {
  const char *name;
  tui_rect r;
} region;

static int regions_of(const app *a, region *out) {
  int n = 0;
  out[n++] = (region){"header", a->lay.header};
  for (int p = 0; p < TUI_PANEL_COUNT; p++)
    if (a->win[p] && a->lay.panel[p].h > 0)
      out[n++] = (region){tui_panel_names[p], a->lay.panel[p]};
  WINDOW *const ws[] = {a->lwin, a->vwin, a->sb};
  const char *const names[] = {"lesson pane", "view", "Lua output"};
  for (int i = 0; i < 3; i++)
    if (ws[i]) {
      tui_rect r = {getbegy(ws[i]), getbegx(ws[i]), getmaxy(ws[i]), getmaxx(ws[i])};
      out[n++] = (region){names[i], r};
    }
  out[n++] = (region){"prompt line", a->lay.prompt};
  out[n++] = (region){"status line", a->lay.status};
  return n;
}

/* The overlaps of the regions shown and the regions off the screen, into out; counted. */
static int overlaps(const app *a, char *out, size_t len) {
  region rg[TUI_PANEL_COUNT + 8];
  int n = regions_of(a, rg), bad = 0;
  size_t at = strlen(out);
  int viewing = a->vwin != NULL;
  for (int i = 0; i < n; i++) {
    tui_rect r = rg[i].r;
    if (r.y < 0 || r.x < 0 || r.y + r.h > LINES || r.x + r.w > COLS) {
      bad++;
      at +=
          (size_t)snprintf(out + at, at < len ? len - at : 0, "; %s is off the screen", rg[i].name);
    }
    for (int j = i + 1; j < n; j++) {
      tui_rect q = rg[j].r;
      /* the view is drawn instead of the panels: they do not count under it */
      int panel_i = i >= 1 && i <= TUI_PANEL_COUNT, is_view = strcmp(rg[j].name, "view") == 0;
      if (viewing && is_view && panel_i) continue;
      if (r.y < q.y + q.h && q.y < r.y + r.h && r.x < q.x + q.w && q.x < r.x + r.w) {
        bad++;
        at += (size_t)snprintf(out + at, at < len ? len - at : 0, "; %s and %s overlap", rg[i].name,
                               rg[j].name);
      }
    }
  }
  return bad;
}

/* The screen as text, from curses' idea of the terminal. */
static void print_screen(FILE *out) {
  static wchar_t row[1024];
  for (int y = 0; y < LINES; y++) {
    if (mvwinnwstr(curscr, y, 0, row, COLS < 1023 ? COLS : 1023) == ERR) row[0] = 0;
    size_t l = wcslen(row);
    while (l > 0 && row[l - 1] == L' ') l--;
    row[l] = 0;
    fprintf(out, "  |%ls\n", row);
  }
}

/* One frame of the dump: the step drawn at the size, checked, reported. */
static int dump_frame(app *a, int k, const char *phase, int screens) {
  draw(a);
  draw(a); /* the first draw may lay the screen out again for what the step needs */
  char why[2048] = "";
  int bad = tui_player_frame_problems(a, why, sizeof why);
  bad += overlaps(a, why, sizeof why);
  /* an ok frame may carry a note ("; scrolls: ..."): the text scrolls above its try-it */
  printf("%dx%d step %d%s: %s%s\n", COLS, LINES, k, phase, bad ? "FAIL" : "ok", why);
  if (screens || bad) print_screen(stdout);
  return bad ? 1 : 0;
}

/* The sizes of --layout-dump, "WxH[,WxH...]", into W and H: how many, or -1 (said). */
static int parse_sizes(const char *sizes, int W[16], int H[16]) {
  int nsize = 0;
  for (const char *s = sizes; *s;) {
    int used = 0;
    if (nsize == 16 || sscanf(s, "%dx%d%n", &W[nsize], &H[nsize], &used) != 2 || W[nsize] < 1 ||
        H[nsize] < 1 || W[nsize] > 1000 || H[nsize] > 500) {
      fprintf(stderr, "normscope: --layout-dump: sizes are WxH[,WxH...] (at most 16), got %s\n", s);
      return -1;
    }
    nsize++;
    s += used;
    if (*s == ',') s++;
  }
  return nsize;
}

/* The deep stacks' runs of an experiment view: waits for them (at most 30 s). */
static void wait_stack(app *a) {
  for (int t = 0; t < 1200 && tui_stack_progress(&a->stack) >= 0 &&
                  tui_stack_progress(&a->stack) < TUI_STACK_RUNS;
       t++) {
    struct timespec d = {0, 25000000L};
    nanosleep(&d, NULL);
  }
}

/* Step k of the lesson at every size: its question, then its truth for a prediction
 * (*asking), else also with the Lua box open. 0, or 1 when a frame failed. */
static int dump_step(app *a, int k, int *asking, const int *W, const int *H, int nsize,
                     int screens) {
  int status = 0;
  for (int phase = 0; phase < 2; phase++) {
    if (phase == 0) {
      unsigned r = tui_player_goto(a, k);
      if (r & TUI_R_RECOMPUTE) a->changed = 1;
    } else if (!*asking || !tui_player_dump_reveal(a))
      break;
    else
      a->changed = 1;
    if (a->xview == TUI_XV_STACK) wait_stack(a);
    if (phase == 0) tui_player_dump_steps(a, asking);
    for (int i = 0; i < nsize; i++) {
      resize_term(H[i], W[i]);
      relayout(a);
      status |= dump_frame(a, k,
                           phase     ? " (the truth)"
                           : *asking ? " (its question)"
                                     : "",
                           screens);
      if (phase == 0 && !*asking) { /* the Lua box open, as when the try-it is being done */
        tui_prompt_open(a->prompt);
        relayout(a);
        status |= dump_frame(a, k, " (Lua prompt open)", screens);
        tui_prompt_close(a->prompt);
        relayout(a);
      }
    }
  }
  return status;
}

int tui_layout_dump(const tui_options *opt, const char *sizes, int screens) {
  static app A;
  app *a = &A;
  memset(a, 0, sizeof *a);
  ns_explore_cache_init(&a->cache);
  nsl_exec_from_env(&a->cache.exec, 1);
  a->opt = *opt;
  char err[NS_ERRLEN];
  if (ns_state_init(&a->st, err) != 0) {
    fprintf(stderr, "normscope: %s\n", err);
    return 1;
  }
  ns_history_init(&a->hist, 1000);
  int status = 1;
  SCREEN *scr = NULL;
  FILE *fo = NULL, *fi = NULL;
  a->L = nsl_newstate(err);
  if (!a->L) {
    fprintf(stderr, "normscope: %s\n", err);
    goto out;
  }
  nsx_ctx *ctx = nsx_open(a->L, &a->st, &a->hist, on_change, a);
  nsx_set_view(ctx, &screen_view, a);
  if (tui_player_open(a) != 0) goto out;
  a->prompt = tui_prompt_new(a->L);
  if (!a->prompt) goto out;
  setlocale(LC_ALL, "");
  if (strcmp(nl_langinfo(CODESET), "UTF-8") != 0) a->opt.ascii = 1;
  fo = fopen("/dev/null", "w");
  fi = fopen("/dev/null", "r");
  static const char *const terms[] = {"xterm-256color", "xterm", "vt100"};
  for (size_t i = 0; i < 3 && fo && fi && !scr; i++) scr = newterm(terms[i], fo, fi);
  if (!scr) {
    fprintf(stderr, "normscope: --layout-dump: no terminal description to draw with\n");
    goto out;
  }
  a->colors = tui_theme_init(0, 0);
  a->tab = TUI_PANEL_SETTINGS;
  status = 0;
  /* the sizes, checked once */
  int W[16], H[16], nsize = parse_sizes(sizes, W, H);
  if (nsize < 0) status = 2;
  int asking, n = status ? 0 : tui_player_dump_steps(a, &asking);
  /* each step once (its state computed once), drawn at every size */
  for (int k = 1; k <= n; k++) status |= dump_step(a, k, &asking, W, H, nsize, screens);
  endwin();
out:
  tui_stack_stop(&a->stack);
  tui_jac_stop(a);
  free_windows(a);
  tui_player_free(a);
  if (scr) delscreen(scr);
  if (fo) fclose(fo);
  if (fi) fclose(fi);
  free_model(a);
  return status;
}
