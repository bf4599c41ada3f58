/* keys.c: what a key or a mouse click does in the explorer: the one dispatcher (tui_key),
 * typing a number into a cell, inserting and removing rows and columns, and moving the
 * cursor and the focus.
 *
 * Keys never change state fields themselves: they call explore.h's helpers (or build a
 * patch) which go through ns_state_apply and the undo history; then the whole result is
 * recomputed and every panel redrawn from it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tui/app.h"
#include "tui/cellnum.h"
#include "tui/screen.h"

/* The result of a key helper: an error goes to the message line, nothing changes. */
static void done(app *a, int rc, const char *err, const char *what) {
  if (rc < 0)
    tui_message(a, PLOT_S_MARK, "%s", err);
  else {
    a->changed = 1;
    if (what)
      tui_message(a, PLOT_S_DIM, "%s", what);
    else
      a->msg[0] = 0;
  }
}

/* ---- the matrix under the cursor (input x, or the batch when panel 5 has focus) ---- */

static int on_batch(const app *a) {
  return a->view.focus == TUI_PANEL_BATCH;
}

static void grid(const app *a, size_t *rows, size_t *cols) {
  const ns_tensor *t = on_batch(a) ? a->st.batch : a->st.x;
  *cols = t->shape[t->rank - 1];
  *rows = t->n / *cols;
}

/* Puts the cursor at (r, c), or at the nearest cell of the matrix. */
static void cursor_to(app *a, long r, long c) {
  size_t rows, cols;
  grid(a, &rows, &cols);
  if (r < 0) r = 0;
  if (c < 0) c = 0;
  if ((size_t)r >= rows) r = (long)rows - 1;
  if ((size_t)c >= cols) c = (long)cols - 1;
  a->view.cursor_row = (int)r;
  a->view.cursor_col = (int)c;
}

/* After the matrix changed shape: keep the cursor on it. */
static void clamp_cursor(app *a) {
  cursor_to(a, a->view.cursor_row, a->view.cursor_col);
}

static void focus(app *a, tui_panel p) {
  if (p == a->view.focus) return;
  int matrix_change = (p == TUI_PANEL_BATCH) != (a->view.focus == TUI_PANEL_BATCH);
  a->view.focus = p;
  if (matrix_change) a->view.cursor_row = a->view.cursor_col = 0;
  if (tui_panel_tabbed(p)) a->tab = p;
  clamp_cursor(a);
}

/* Arrows and typing work on the input unless the batch panel has the focus. */
static void matrix_focus(app *a) {
  if (a->view.focus != TUI_PANEL_INPUT && a->view.focus != TUI_PANEL_BATCH)
    focus(a, TUI_PANEL_INPUT);
}

static void move_cursor(app *a, int dr, int dc) {
  matrix_focus(a);
  cursor_to(a, (long)a->view.cursor_row + dr, (long)a->view.cursor_col + dc);
}

static size_t cursor_index(const app *a) {
  size_t rows, cols;
  grid(a, &rows, &cols);
  return (size_t)a->view.cursor_row * cols + (size_t)a->view.cursor_col;
}

static double cell_value(const app *a) {
  return ns_tensor_get(on_batch(a) ? a->st.batch : a->st.x, cursor_index(a));
}

static void set_cell(app *a, double v) {
  char err[NS_ERRLEN];
  int rc;
  if (on_batch(a))
    rc = ns_edit_set_batch(&a->st, &a->hist, (size_t)a->view.cursor_row, (size_t)a->view.cursor_col,
                           v, err);
  else
    rc = ns_edit_set_x(&a->st, &a->hist, cursor_index(a), v, err);
  done(a, rc, err, NULL);
}

static void commit_edit(app *a) {
  const char *s = a->edit;
  edit_kind k = a->editing;
  a->editing = EDIT_NONE;
  if (!*s) return;
  double v;
  if (tui_cell_number(s, &v) != 0) {
    tui_message(a, PLOT_S_MARK, "not a number: \"%s\" (nothing changed)", s);
    return;
  }
  if (k == EDIT_EPS) {
    char err[NS_ERRLEN];
    done(a, ns_edit_set_eps(&a->st, &a->hist, v, err), err, NULL);
  } else {
    set_cell(a, v);
  }
}

/* Enter on a cell: edit it, starting from its value. */
static void edit_cell(app *a) {
  matrix_focus(a);
  a->editing = EDIT_CELL;
  plot_fmt(cell_value(a), 17, a->edit, sizeof a->edit);
}

static void insert_remove(app *a, int axis, int insert) {
  matrix_focus(a);
  char err[NS_ERRLEN];
  size_t at = axis == 1 ? (size_t)a->view.cursor_row : (size_t)a->view.cursor_col;
  if (a->st.x->rank == 1 && !on_batch(a) && axis == 1) {
    tui_message(a, PLOT_S_MARK,
                "x is a vector: i/x add and remove elements (set{x=...} for a matrix)");
    return;
  }
  if (insert) at++;
  int rc;
  if (on_batch(a))
    rc = insert ? ns_edit_batch_insert(&a->st, &a->hist, axis, at, err)
                : ns_edit_batch_remove(&a->st, &a->hist, axis, at, err);
  else
    rc = insert ? ns_edit_x_insert(&a->st, &a->hist, axis, at, err)
                : ns_edit_x_remove(&a->st, &a->hist, axis, at, err);
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
  ns_patch_set(&p, NS_F_AXES);
  p.v.axes = (a->st.axes + 1) & all;
  apply(a, &p, NULL);
}

static void cycle_affine(app *a) {
  static const double two = 2, half = 0.5;
  ns_state_patch p;
  ns_patch_init(&p);
  ns_patch_set(&p, NS_F_GAMMA);
  ns_patch_set(&p, NS_F_BETA);
  if (a->st.ngamma == 0 && a->st.nbeta == 0) {
    p.v.gamma = (double *)&two;
    p.v.ngamma = 1;
  } else if (a->st.nbeta == 0) {
    p.v.gamma = (double *)&two;
    p.v.ngamma = 1;
    p.v.beta = (double *)&half;
    p.v.nbeta = 1;
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
    tui_message(a, PLOT_S_DIM, "the batch has %zu rows; add one with I while panel 5 has focus", B);
    return;
  }
  char err[NS_ERRLEN];
  done(a,
       which ? ns_edit_set_companion(&a->st, &a->hist, r, err)
             : ns_edit_set_target(&a->st, &a->hist, r, err),
       err, NULL);
}

static void train_batches(app *a, int dir) {
  ns_state_patch p;
  ns_patch_init(&p);
  long n = dir > 0 ? (long)a->st.train_batches * 2 : a->st.train_batches / 2;
  if (n < 1) n = 1;
  if (n > NS_EXPLORE_MAX_BATCHES) n = NS_EXPLORE_MAX_BATCHES;
  ns_patch_set(&p, NS_F_TRAIN_BATCHES);
  p.v.train_batches = (int)n;
  apply(a, &p, NULL);
}

static void new_seed(app *a) {
  ns_state_patch p;
  ns_patch_init(&p);
  ns_patch_set(&p, NS_F_SEED);
  p.v.seed = a->st.seed + 1;
  apply(a, &p, NULL);
}

static void do_undo(app *a, int redo) {
  int ok = redo ? ns_history_redo(&a->hist, &a->st) : ns_history_undo(&a->hist, &a->st);
  if (ok) {
    a->changed = 1;
    tui_message(a, PLOT_S_DIM, "%s (%zu undo, %zu redo left)", redo ? "redone" : "undone",
                a->hist.nundo, a->hist.nredo);
    clamp_cursor(a);
  } else {
    tui_message(a, PLOT_S_DIM, "nothing to %s", redo ? "redo" : "undo");
  }
}

/* ---- keys ---- */

/* Keys that only step or toggle one setting through explore.h's helpers. */
static const struct {
  unsigned char key;
  int (*step)(ns_state *, ns_history *, int dir, char *err);
  int dir;
} step_keys[] = {
    {'k', ns_edit_cycle_kind, 1},    {'K', ns_edit_cycle_kind, -1},
    {'g', ns_edit_groups_step, -1},  {'G', ns_edit_groups_step, 1},
    {'e', ns_edit_eps_decade, -1},   {'E', ns_edit_eps_decade, 1},
    {'t', ns_edit_cycle_dtype, 1},   {'T', ns_edit_cycle_acc, 1},
    {'v', ns_edit_cycle_algo, 1},    {'o', ns_edit_momentum_step, -1},
    {'O', ns_edit_momentum_step, 1},
};
static const struct {
  unsigned char key;
  int (*toggle)(ns_state *, ns_history *, char *err);
} toggle_keys[] = {
    {'p', ns_edit_toggle_eps_at}, {'d', ns_edit_toggle_ddof},       {'c', ns_edit_cycle_center},
    {'m', ns_edit_toggle_mode},   {'C', ns_edit_toggle_cumulative},
};

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
    tui_message(a, PLOT_S_DIM, "edit cancelled");
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
    tui_message(a, PLOT_S_DIM, "typing a number: Enter applies, Esc cancels");
  }
}

static void cycle_focus(app *a, int dir) {
  focus(a, (tui_panel)(((int)a->view.focus + dir + TUI_PANEL_COUNT) % TUI_PANEL_COUNT));
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
  focus(a, (tui_panel)p);
  tui_rect r = a->lay.panel[p];
  /* a click on a cell of the input vector or of the batch moves the cursor there */
  if ((p == TUI_PANEL_INPUT || p == TUI_PANEL_BATCH) && r.h > 0 && ev.y > r.y) {
    size_t rows, cols;
    grid(a, &rows, &cols);
    int vec = p == TUI_PANEL_INPUT && a->st.x->rank == 1;
    int lab = 4, cw = 8, per = 1;
    if (p == TUI_PANEL_INPUT)
      tui_input_geometry(&a->st, r.w - 2, &lab, &cw, &per);
    else if (4 + 2 * ((int)cols * 8 + 1) > r.w - 2)
      cw = 7; /* batch.c */
    int row = ev.y - r.y - 2, col = (ev.x - r.x - 1 - lab) / cw;
    if (ev.x < r.x + 1 + lab || row < 0) return;
    if (vec) { /* the vector wraps (input.c) */
      if (col >= per) return;
      int vis = r.h - 5, cur_line = a->view.cursor_col / per;
      int l0 = a->view.focus == TUI_PANEL_INPUT && cur_line >= vis ? cur_line - vis + 1 : 0;
      col += (row + l0) * per;
      row = 0;
    } else if (p == TUI_PANEL_INPUT && a->view.focus == TUI_PANEL_INPUT) {
      /* the window onto a large matrix follows the cursor (input.c) */
      int vis = r.h - 5;
      if (a->view.cursor_row >= vis) row += a->view.cursor_row - vis + 1;
      if (a->view.cursor_col >= per) col += a->view.cursor_col - per + 1;
    }
    if (row >= 0 && (size_t)row < rows && col >= 0 && (size_t)col < cols && ev.x > r.x + lab) {
      a->view.cursor_row = row;
      a->view.cursor_col = col;
      clamp_cursor(a);
    }
  }
}

/* Returns 0 to quit. */
int tui_key(app *a, int code, unsigned ch) {
  char err[NS_ERRLEN];
  ns_state *s = &a->st;
  ns_history *h = &a->hist;
  if (code && ch == KEY_RESIZE) {
    tui_relayout(a);
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
    tui_prompt_key(a->prompt, code, ch);
    /* set{}, undo() and friends changed the state through explore's Lua side (on_change
     * marks it); a Lua error only reached the scrollback. */
    if (!tui_prompt_is_open(a->prompt)) tui_relayout(a);
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
      edit_cell(a);
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
  for (size_t i = 0; i < sizeof step_keys / sizeof step_keys[0]; i++)
    if (ch == step_keys[i].key) {
      done(a, step_keys[i].step(s, h, step_keys[i].dir, err), err, NULL);
      return 1;
    }
  for (size_t i = 0; i < sizeof toggle_keys / sizeof toggle_keys[0]; i++)
    if (ch == toggle_keys[i].key) {
      done(a, toggle_keys[i].toggle(s, h, err), err, NULL);
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
    tui_relayout(a);
    break;
  case '\t':
    cycle_focus(a, 1);
    break;
  case '\n':
  case '\r':
    edit_cell(a);
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
  case 'a':
    cycle_axes(a);
    break;
  case '=':
    a->editing = EDIT_EPS;
    a->edit[0] = 0;
    break;
  case 'w':
    cycle_affine(a);
    break;
  case 's':
    done(a, ns_edit_set_shift(s, h, s->shift - 1, err), err, NULL);
    break;
  case 'S':
    done(a, ns_edit_set_shift(s, h, s->shift + 1, err), err, NULL);
    break;
  case 'z':
    done(a, ns_edit_set_scale(s, h, s->scale / 2, err), err, NULL);
    break;
  case 'Z':
    done(a, ns_edit_set_scale(s, h, s->scale * 2, err), err, NULL);
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
    if (next >= '1' && next < '1' + TUI_PANEL_COUNT)
      focus(a, (tui_panel)(next - '1'));
    else if (next != ERR)
      ungetch(next);
    break;
  }
  default:
    if (ch >= 32 && ch < 127)
      tui_message(a, PLOT_S_DIM, "'%c' does nothing here; ? lists the keys", (int)ch);
    break;
  }
  return 1;
}
