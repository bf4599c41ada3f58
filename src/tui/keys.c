/* keys.c: what a key or a mouse click does in the explorer: the one key table
 * (tui_keymap), its actions, the dispatcher (tui_key), typing a number into a cell and
 * the mouse.
 *
 * Keys never change state fields themselves: they call explore/edit.h's helpers (or
 * build a patch) which go through ns_state_apply and the undo history. An action returns
 * what the main loop must do next (TUI_R_RECOMPUTE, TUI_R_RELAYOUT, TUI_R_QUIT,
 * TUI_R_MESSAGE) and never calls back into tui.c.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/app.h"
#include "tui/cellnum.h"
#include "tui/screen.h"

/* The result of an edit helper: an error goes to the message line, nothing changes. */
static unsigned done(app *a, int rc, const char *err, const char *what) {
  if (rc < 0) return tui_say(a, PLOT_S_MARK, "%s", err);
  if (what) return TUI_R_RECOMPUTE | tui_say(a, PLOT_S_DIM, "%s", what);
  a->msg[0] = 0;
  return TUI_R_RECOMPUTE;
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
  if ((size_t)(r < 0 ? 0 : r) >= rows) r = (long)rows - 1;
  if ((size_t)(c < 0 ? 0 : c) >= cols) c = (long)cols - 1;
  if (r < 0) r = 0;
  if (c < 0) c = 0;
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

/* Typing and Enter work on the focused panel's cells (the input's, the batch's, or the
 * output's, which shares the input's cursor); elsewhere on the input. */
static void matrix_focus(app *a) {
  tui_nav nav = tui_panels[a->view.focus].nav;
  if (nav != TUI_NAV_CELLS && nav != TUI_NAV_FLAT) focus(a, TUI_PANEL_INPUT);
}

static size_t cursor_index(const app *a) {
  size_t rows, cols;
  grid(a, &rows, &cols);
  return (size_t)a->view.cursor_row * cols + (size_t)a->view.cursor_col;
}

const char *tui_edit_cell_name(const app *a, char *buf, size_t len) {
  const ns_tensor *t = on_batch(a) ? a->st.batch : a->st.x;
  size_t idx = cursor_index(a), n = (size_t)snprintf(buf, len, "%s[", on_batch(a) ? "batch" : "x");
  size_t sub[NS_MAXRANK];
  for (int k = t->rank - 1; k >= 0; k--) {
    sub[k] = idx % t->shape[k];
    idx /= t->shape[k];
  }
  for (int k = 0; k < t->rank && n < len; k++)
    n += (size_t)snprintf(buf + n, len - n, "%s%zu", k ? "," : "", sub[k] + 1);
  if (n < len) snprintf(buf + n, len - n, "]");
  return buf;
}

/* The flat element under the cursor, moved by d and kept inside the matrix. */
static void cursor_flat(app *a, long d) {
  size_t rows, cols;
  grid(a, &rows, &cols);
  long i = (long)cursor_index(a) + d, n = (long)(rows * cols);
  if (i >= n) i = n - 1;
  if (i < 0) i = 0;
  cursor_to(a, i / (long)cols, i % (long)cols);
}

static double cell_value(const app *a) {
  return ns_tensor_get(on_batch(a) ? a->st.batch : a->st.x, cursor_index(a));
}

static unsigned set_cell(app *a, double v) {
  char err[NS_ERRLEN];
  int rc;
  if (on_batch(a))
    rc = ns_edit_set_batch(&a->st, &a->hist, (size_t)a->view.cursor_row, (size_t)a->view.cursor_col,
                           v, err);
  else
    rc = ns_edit_set_x(&a->st, &a->hist, cursor_index(a), v, err);
  return done(a, rc, err, NULL);
}

/* Lines a list panel shows: its height less the frame, header and footer lines. */
static int page_of(const app *a, tui_panel p) {
  int h = a->lay.panel[p].h - 6;
  return h < 1 ? 1 : h;
}

/* Elements per screen line of the input when x is a vector (it wraps). */
static int vector_per(const app *a) {
  int lab, cw, per;
  tui_input_geometry(&a->st, a->lay.panel[TUI_PANEL_INPUT].w - 2, &lab, &cw, &per);
  return per;
}

/* ---- the settings panel's rows and the spectrum's entries ---- */

static int spectrum_rows(const app *a) {
  if (!a->have_res) return 0; /* the closed form is listed at any size, LAPACK's with J */
  return a->res.nclosed > 0 ? a->res.nclosed : a->res.jac_done ? a->res.nnumeric : 0;
}

static void select_row(app *a, tui_panel p, long row, int count) {
  if (row >= count) row = count - 1;
  if (row < 0) row = 0;
  a->view.row[p] = (int)row;
}

static unsigned settings_step(app *a, int back) {
  int f = tui_settings_rows[a->view.row[TUI_PANEL_SETTINGS]];
  /* Right (and Enter) step a row up, Left back: the rows whose first key makes the value
     smaller (e eps /10, g fewer groups, o momentum /2) take their second key for up; a
     one-key row steps back with which 1 (its action's other direction) */
  int first_lowers = f == NS_F_EPS || f == NS_F_GROUPS || f == NS_F_MOMENTUM;
  for (int i = 0; i < tui_nkeymap; i++) {
    const tui_binding *b = &tui_keymap[i];
    if (!(b->fields & NS_FIELDBIT(f))) continue;
    return b->act(a, back != first_lowers ? 1 : 0);
  }
  return tui_say(a, PLOT_S_DIM, "%s: set it at the prompt (:set{...})", ns_field_name(f));
}

/* ---- actions: one per row of the key table; `which` is the key's index in its row ---- */

static unsigned act_tab(app *a, int which) {
  int dir = which ? -1 : 1;
  int p = ((int)a->view.focus + dir + TUI_PANEL_COUNT) % TUI_PANEL_COUNT;
  /* the figure view shows the Output's figure for Settings: Tab would seem to do nothing */
  if (a->figure_open && p == TUI_PANEL_SETTINGS) p = (p + dir + TUI_PANEL_COUNT) % TUI_PANEL_COUNT;
  focus(a, (tui_panel)p);
  return TUI_R_NONE;
}

static unsigned act_alt(app *a, int which) {
  focus(a, (tui_panel)which);
  return TUI_R_NONE;
}

/* The lines of a list panel (TUI_NAV_LIST). */
static int list_rows(app *a, tui_panel p) {
  return p == TUI_PANEL_SPECTRUM ? spectrum_rows(a) : tui_nsettings;
}

/* Up Down Left Right: the cursor of a matrix, the selected line of a list. */
static unsigned act_move(app *a, int which) {
  static const int dr[4] = {-1, 1, 0, 0}, dc[4] = {0, 0, -1, 1};
  tui_panel p = a->view.focus;
  switch (tui_panels[p].nav) {
  case TUI_NAV_CELLS:
    if (!on_batch(a) && a->st.x->rank == 1 && dr[which])
      cursor_flat(a, (long)dr[which] * vector_per(a)); /* a vector wraps: Up/Down a line */
    else
      cursor_to(a, (long)a->view.cursor_row + dr[which], (long)a->view.cursor_col + dc[which]);
    break;
  case TUI_NAV_FLAT: /* a vector's elements in order; a matrix as stored, a row a line */
    if (a->st.x->rank == 1)
      cursor_flat(a, which == 0 || which == 2 ? -1 : 1);
    else
      cursor_to(a, (long)a->view.cursor_row + dr[which], (long)a->view.cursor_col + dc[which]);
    break;
  case TUI_NAV_LIST:
    if (dr[which])
      select_row(a, p, a->view.row[p] + dr[which], list_rows(a, p));
    else if (p == TUI_PANEL_SETTINGS) /* Left/Right press the row's keys */
      return settings_step(a, which == 2);
    else
      return tui_say(a, PLOT_S_DIM, "the spectrum is one list: Up/Down select");
    break;
  case TUI_NAV_NONE:
    break;
  }
  return TUI_R_NONE;
}

/* PgUp PgDn (which 0, 1) and Home End (2, 3). */
static unsigned act_page(app *a, int which) {
  tui_panel p = a->view.focus;
  int end = which >= 2, dir = which % 2 ? 1 : -1;
  long far = end ? dir * (1L << 30) : 0;
  long page = page_of(a, p);
  switch (tui_panels[p].nav) {
  case TUI_NAV_CELLS:
    if (!on_batch(a) && a->st.x->rank == 1)
      cursor_flat(a, end ? far : dir * page * vector_per(a));
    else
      cursor_to(a, end ? far : a->view.cursor_row + dir * page, end ? 0 : a->view.cursor_col);
    break;
  case TUI_NAV_FLAT:
    if (a->st.x->rank == 1)
      cursor_flat(a, end ? far : dir * page);
    else
      cursor_to(a, end ? far : a->view.cursor_row + dir * page, end ? 0 : a->view.cursor_col);
    break;
  case TUI_NAV_LIST:
    select_row(a, p, end ? far : a->view.row[p] + dir * page, list_rows(a, p));
    break;
  case TUI_NAV_NONE: /* no list here: the Lua output pages instead */
    if (end) return tui_say(a, PLOT_S_DIM, "Home/End: this panel has no list to go through");
    tui_prompt_scroll(a->prompt, -dir * 5);
    break;
  }
  return TUI_R_NONE;
}

static unsigned act_type(app *a, int which) {
  static const char chars[] = "0123456789-.";
  matrix_focus(a);
  a->editing = EDIT_CELL;
  a->edit[0] = chars[which];
  a->edit[1] = 0;
  return TUI_R_NONE;
}

/* Enter on a cell: edit it, starting from its value; on a settings row: step it. */
static unsigned act_enter(app *a, int which) {
  (void)which;
  if (a->view.focus == TUI_PANEL_SETTINGS) return settings_step(a, 0);
  matrix_focus(a);
  a->editing = EDIT_CELL;
  /* the digits the stored value has: 9 for fp32, 5 for fp16 and bf16, 17 for fp64 */
  ns_dtype d = on_batch(a) ? NS_FP64 : a->st.x->dtype;
  plot_fmt(cell_value(a), d == NS_FP64 ? 17 : d == NS_FP32 ? 11 : 7, a->edit, sizeof a->edit);
  return TUI_R_NONE;
}

static unsigned act_negate(app *a, int which) {
  (void)which;
  matrix_focus(a);
  double v = -cell_value(a);
  return set_cell(a, v == 0 ? 0.0 : v); /* 0 stays 0: no -0 in the cell and in y */
}

/* i I Ins: insert a column (element) / a row / a column after the cursor; x X Del remove. */
static unsigned insert_remove(app *a, int axis, int insert) {
  matrix_focus(a);
  char err[NS_ERRLEN];
  size_t at = axis == 1 ? (size_t)a->view.cursor_row : (size_t)a->view.cursor_col;
  if (a->st.x->rank == 1 && !on_batch(a) && axis == 1 && !insert)
    return tui_say(a, PLOT_S_MARK, "x is a vector: x removes an element (X would remove it all)");
  if (insert) at++;
  int rc;
  if (on_batch(a))
    rc = insert ? ns_edit_batch_insert(&a->st, &a->hist, axis, at, err)
                : ns_edit_batch_remove(&a->st, &a->hist, axis, at, err);
  else
    rc = insert ? ns_edit_x_insert(&a->st, &a->hist, axis, at, err)
                : ns_edit_x_remove(&a->st, &a->hist, axis, at, err);
  unsigned r = done(a, rc, err, NULL);
  if (rc == 0 && insert)
    cursor_to(a, (long)a->view.cursor_row + (axis == 1), (long)a->view.cursor_col + (axis == 2));
  clamp_cursor(a);
  return r;
}

static unsigned act_insert(app *a, int which) {
  return insert_remove(a, which == 1 ? 1 : 2, 1);
}
static unsigned act_remove(app *a, int which) {
  return insert_remove(a, which == 1 ? 1 : 2, 0);
}

static unsigned apply(app *a, ns_state_patch *p, const char *what) {
  char err[NS_ERRLEN];
  return done(a, ns_history_apply(&a->hist, &a->st, p, err), err, what);
}

/* k K: the next kind the input's rank allows; the skipped ones are named with the reason. */
static unsigned act_kind(app *a, int which) {
  char err[NS_ERRLEN];
  ns_kind old = a->st.kind;
  int dir = which ? -1 : 1;
  if (ns_edit_cycle_kind(&a->st, &a->hist, dir, err) != 0)
    return tui_say(a, PLOT_S_MARK, "%s", err);
  char skipped[96] = "", why[NS_ERRLEN] = "";
  for (int k = ((int)old + dir + NS_KIND_COUNT) % NS_KIND_COUNT; k != (int)a->st.kind;
       k = (k + dir + NS_KIND_COUNT) % NS_KIND_COUNT) {
    size_t at = strlen(skipped);
    snprintf(skipped + at, sizeof skipped - at, "%s%s", at ? ", " : "", ns_kind_name((ns_kind)k));
    if (!why[0]) { /* the reason the first skipped kind gives, from the core's own check */
      ns_spec sp;
      ns_state_spec(&a->st, &sp);
      sp.kind = (ns_kind)k;
      sp.axes = 0;
      ns_norm_plan plan;
      memset(&plan, 0, sizeof plan);
      if (ns_norm_plan_make(a->st.x->rank, a->st.x->shape, &sp, &plan, why) == 0) why[0] = 0;
      ns_norm_plan_free(&plan);
    }
  }
  if (skipped[0])
    return TUI_R_RECOMPUTE | tui_say(a, PLOT_S_DIM, "kind %s; skipped %s: %s",
                                     ns_kind_name(a->st.kind), skipped, why[0] ? why : "not here");
  a->msg[0] = 0;
  return TUI_R_RECOMPUTE;
}

static unsigned act_axes(app *a, int which) {
  char err[NS_ERRLEN];
  return done(a, ns_edit_cycle_axes(&a->st, &a->hist, which ? -1 : 1, err), err, NULL);
}

static unsigned act_affine(app *a, int which) {
  (void)which;
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
  return apply(a, &p, NULL);
}

/* Edit helpers that step one setting: (state, history, dir, err). */
#define STEP_ACTION(name, fn, d0, d1)                                                              \
  static unsigned name(app *a, int which) {                                                        \
    char err[NS_ERRLEN];                                                                           \
    return done(a, fn(&a->st, &a->hist, which ? (d1) : (d0), err), err, NULL);                     \
  }
#define TOGGLE_ACTION(name, fn)                                                                    \
  static unsigned name(app *a, int which) {                                                        \
    (void)which;                                                                                   \
    char err[NS_ERRLEN];                                                                           \
    return done(a, fn(&a->st, &a->hist, err), err, NULL);                                          \
  }
STEP_ACTION(act_groups, ns_edit_groups_step, -1, 1)
STEP_ACTION(act_eps, ns_edit_eps_decade, -1, 1)
STEP_ACTION(act_dtype, ns_edit_cycle_dtype, 1, -1)
STEP_ACTION(act_acc, ns_edit_cycle_acc, 1, -1)
STEP_ACTION(act_algo, ns_edit_cycle_algo, 1, -1)
STEP_ACTION(act_momentum, ns_edit_momentum_step, -1, 1)
TOGGLE_ACTION(act_eps_at, ns_edit_toggle_eps_at)
TOGGLE_ACTION(act_ddof, ns_edit_toggle_ddof)
TOGGLE_ACTION(act_center, ns_edit_cycle_center)
TOGGLE_ACTION(act_mode, ns_edit_toggle_mode)
TOGGLE_ACTION(act_cumulative, ns_edit_toggle_cumulative)

unsigned tui_act_eps_exact(app *a, int which) {
  (void)which;
  a->editing = EDIT_EPS;
  a->edit[0] = 0;
  return TUI_R_NONE;
}

static unsigned act_shift(app *a, int which) {
  char err[NS_ERRLEN];
  return done(a, ns_edit_set_shift(&a->st, &a->hist, a->st.shift + (which ? 1 : -1), err), err,
              NULL);
}

static unsigned act_scale(app *a, int which) {
  char err[NS_ERRLEN];
  double s = which ? a->st.scale * 2 : a->st.scale / 2;
  return done(a, ns_edit_set_scale(&a->st, &a->hist, s, err), err, NULL);
}

/* < > the target row, [ ] the companion (which 0: previous, 1: next). */
static unsigned step_row(app *a, int companion, int dir) {
  size_t B = a->st.batch->shape[0];
  int cur = companion ? a->st.companion : a->st.target;
  int other = companion ? a->st.target : a->st.companion;
  int r = cur;
  for (size_t k = 0; k < B; k++) {
    r += dir;
    if (r < 1) r = (int)B;
    if (r > (int)B) r = 1;
    if (r != other) break;
  }
  if (r == cur)
    return tui_say(a, PLOT_S_DIM, "the batch has %zu rows; add one with I while panel 5 has focus",
                   B);
  char err[NS_ERRLEN];
  return done(a,
              companion ? ns_edit_set_companion(&a->st, &a->hist, r, err)
                        : ns_edit_set_target(&a->st, &a->hist, r, err),
              err, NULL);
}
static unsigned act_target(app *a, int which) {
  return step_row(a, 0, which ? 1 : -1);
}
static unsigned act_companion(app *a, int which) {
  return step_row(a, 1, which ? 1 : -1);
}

static unsigned act_batches(app *a, int which) {
  ns_state_patch p;
  ns_patch_init(&p);
  long n = which ? (long)a->st.train_batches * 2 : a->st.train_batches / 2;
  if (n < 1) n = 1;
  if (n > NS_EXPLORE_MAX_BATCHES) n = NS_EXPLORE_MAX_BATCHES;
  ns_patch_set(&p, NS_F_TRAIN_BATCHES);
  p.v.train_batches = (int)n;
  return apply(a, &p, NULL);
}

static unsigned act_seed(app *a, int which) {
  (void)which;
  ns_state_patch p;
  ns_patch_init(&p);
  ns_patch_set(&p, NS_F_SEED);
  p.v.seed = a->st.seed + 1;
  return apply(a, &p, NULL);
}

static unsigned act_undo(app *a, int which) {
  int redo = which > 0;
  int ok = redo ? ns_history_redo(&a->hist, &a->st) : ns_history_undo(&a->hist, &a->st);
  if (!ok) return tui_say(a, PLOT_S_DIM, "nothing to %s", redo ? "redo" : "undo");
  clamp_cursor(a);
  return TUI_R_RECOMPUTE | tui_say(a, PLOT_S_DIM, "%s (%zu undo, %zu redo left)",
                                   redo ? "redone" : "undone", a->hist.nundo, a->hist.nredo);
}

static unsigned act_prompt(app *a, int which) {
  (void)which;
  if (tui_player_presenting(a)) return tui_say(a, PLOT_S_DIM, "--present has no prompt");
  tui_prompt_open(a->prompt);
  return TUI_R_RELAYOUT;
}

static unsigned act_help(app *a, int which) {
  (void)which;
  a->help_open = 1;
  a->help_scroll = 0;
  return TUI_R_NONE;
}

static unsigned act_figure(app *a, int which) {
  (void)which;
  if (a->xview) { /* an experiment view: f toggles between it and its figure */
    a->xfigure = !a->xfigure;
    return TUI_R_NONE;
  }
  a->figure_open = !a->figure_open;
  return TUI_R_NONE;
}

static unsigned act_redraw(app *a, int which) {
  (void)which;
  (void)a;
  return TUI_R_REPAINT;
}

static unsigned act_quit(app *a, int which) {
  (void)a;
  (void)which;
  return TUI_R_QUIT;
}

/* F without a teacher to follow (a follower's hook takes it first). */
static unsigned act_follow(app *a, int which) {
  (void)which;
  return tui_say(a, PLOT_S_DIM, "F follows a teacher: normscope follow SOCKET");
}

/* ---- the experiment views and the fields they show ---- */

/* D B V L: open an experiment view, or close it when it is the one open. */
unsigned tui_act_view(app *a, int which) {
  static const tui_xview views[] = {TUI_XV_PLACEMENT, TUI_XV_BACKWARD, TUI_XV_SHIFT, TUI_XV_STACK};
  tui_xview x = views[which];
  a->xview = a->xview == x ? TUI_XV_NONE : x;
  a->figure_open = 0;
  a->xfigure = 0;
  if (a->xview == TUI_XV_STACK) tui_stack_start(&a->stack); /* once: a thread makes them */
  return TUI_R_NONE;
}

/* l: placement none -> pre -> post -> none. */
static unsigned act_placement(app *a, int which) {
  (void)which;
  ns_state_patch p;
  ns_patch_init(&p);
  ns_patch_set(&p, NS_F_PLACEMENT);
  p.v.placement = (ns_placement)(((int)a->st.placement + 1) % 3);
  return apply(a, &p, NULL);
}

/* b: training source rng -> batch -> resample -> rng. */
static unsigned act_source(app *a, int which) {
  (void)which;
  ns_state_patch p;
  ns_patch_init(&p);
  ns_patch_set(&p, NS_F_TRAIN_SOURCE);
  p.v.train_source = (ns_source)(((int)a->st.train_source + 1) % 3);
  return apply(a, &p, NULL);
}

/* h H: the evaluation mean down / up by 1, from the one in use (train_loc by default). */
static unsigned act_eval_loc(app *a, int which) {
  double now = isnan(a->st.eval_loc) ? a->st.train_loc : a->st.eval_loc;
  ns_state_patch p;
  ns_patch_init(&p);
  ns_patch_set(&p, NS_F_EVAL_LOC);
  p.v.eval_loc = now + (which ? 1 : -1);
  return apply(a, &p, NULL);
}

/* y Y: the evaluation standard deviation halved / doubled. */
static unsigned act_eval_scale(app *a, int which) {
  double now = isnan(a->st.eval_scale) ? a->st.train_scale : a->st.eval_scale;
  ns_state_patch p;
  ns_patch_init(&p);
  ns_patch_set(&p, NS_F_EVAL_SCALE);
  p.v.eval_scale = which ? now * 2 : now / 2;
  return apply(a, &p, NULL);
}

/* W: the next w_seed (another random W and upstream gradient, where they are random). */
static unsigned act_w_seed(app *a, int which) {
  (void)which;
  ns_state_patch p;
  ns_patch_init(&p);
  ns_patch_set(&p, NS_F_W_SEED);
  p.v.w_seed = a->st.w_seed + 1;
  if (a->st.W && a->st.upstream)
    return apply(a, &p, "w_seed changes nothing here: W and upstream are given (W=false)");
  return apply(a, &p, NULL);
}

/* ---- the table ---- */

#define P(x) TUI_PBIT(TUI_PANEL_##x)
#define LISTS (P(INPUT) | P(OUTPUT) | P(SPECTRUM) | P(SETTINGS) | P(BATCH))
#define F(x) NS_FIELDBIT(NS_F_##x)
#define K(x) TUI_KEY(KEY_##x)

const char *const tui_section_names[TUI_SEC_COUNT] = {
    "Moving around",
    "Editing the input (the batch matrix when panel 5 has focus)",
    "Settings (panel 2 lists them with their values)",
    "Probes",
    "The chapters' experiments (views that fill the screen)",
    "Everything else",
    "Lessons (normscope lesson NAME, normscope record FILE)"};

/* clang-format off */
const tui_binding tui_keymap[] = {
  {"Tab S-Tab", {'\t', K(BTAB)}, act_tab, TUI_PALL, NULL, "panel",
   "next / previous panel (at 80x24, panels 2 5 6 7 share one place)", TUI_SEC_MOVE, 0},
  {"Alt-1..7",
   {TUI_ALT('1'), TUI_ALT('2'), TUI_ALT('3'), TUI_ALT('4'), TUI_ALT('5'), TUI_ALT('6'),
    TUI_ALT('7')}, act_alt, TUI_PALL, NULL, NULL,
   "Alt-1 .. Alt-7: focus panel 1 .. 7 (digits alone type numbers)", TUI_SEC_MOVE, 0},
  {"Up Down Left Right", {K(UP), K(DOWN), K(LEFT), K(RIGHT)}, act_move,
   P(INPUT) | P(OUTPUT) | P(SPECTRUM) | P(SETTINGS) | P(BATCH), NULL, "move",
   "move the cursor (input, batch), the element (output), the entry (spectrum); "
   "settings: Up/Down pick a row, Left/Right step it", TUI_SEC_MOVE, 0},
  {"PgUp PgDn Home End", {K(PPAGE), K(NPAGE), K(HOME), K(END)}, act_page, LISTS,
   "panels 6 and 7 have no list: PgUp/PgDn page the Lua output there", "page",
   "a page up / down, first / last line of the focused list", TUI_SEC_MOVE, 0},
  {"0-9 - .", {'0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '-', '.'},
   act_type, P(INPUT) | P(OUTPUT) | P(BATCH), "types into the input cell (the focus moves there)",
   NULL, "type a number into the cell under the cursor (Enter applies, Esc cancels)",
   TUI_SEC_EDIT, F(X) | F(BATCH)},
  {"Enter", {'\r', '\n', K(ENTER)}, act_enter, P(INPUT) | P(OUTPUT) | P(BATCH) | P(SETTINGS),
   "edits the input cell under the cursor", "edit",
   "edit the cell under the cursor; on a settings row: step it", TUI_SEC_EDIT, 0},
  {"n", {'n'}, act_negate, P(INPUT) | P(OUTPUT) | P(BATCH) | TUI_NO_LESSON, "negates the input cell",
   NULL, "negate the cell under the cursor (with a lesson open: ~)", TUI_SEC_EDIT, 0},
  {"~", {'~'}, act_negate, P(INPUT) | P(OUTPUT) | P(BATCH), "negates the input cell",
   NULL, "negate the cell under the cursor (n too, while no lesson is open)", TUI_SEC_EDIT, 0},
  {"i I Ins", {'i', 'I', K(IC)}, act_insert, P(INPUT) | P(OUTPUT) | P(BATCH),
   "inserts into the input", NULL,
   "insert an element (column) / a row / a column after the cursor", TUI_SEC_EDIT, 0},
  {"x X Del", {'x', 'X', K(DC)}, act_remove, P(INPUT) | P(OUTPUT) | P(BATCH),
   "removes from the input", NULL,
   "remove the element (column) / the row / the column under the cursor", TUI_SEC_EDIT,
   F(X) | F(BATCH)},
  {"k K", {'k', 'K'}, act_kind, TUI_PALL, NULL, "kind",
   "next / previous kind the input's rank allows:" NS_KIND_WORDS,
   TUI_SEC_SETTINGS, F(KIND)},
  {"A M-a", {'A', TUI_ALT('a')}, act_axes, TUI_PALL, NULL, "axes",
   "next / previous reduction axes (1-based; default, then each subset)", TUI_SEC_SETTINGS,
   F(AXES)},
  {"g G", {'g', 'G'}, act_groups, TUI_PALL, NULL, "grp", "fewer / more groups (group norm)",
   TUI_SEC_SETTINGS, F(GROUPS)},
  {"e E", {'e', 'E'}, act_eps, TUI_PALL, NULL, "eps",
   "eps ten times smaller / larger (below 1e-12: 0)", TUI_SEC_SETTINGS, F(EPS)},
  {"=", {'='}, tui_act_eps_exact, TUI_PALL, NULL, NULL, "type eps exactly", TUI_SEC_SETTINGS,
   F(EPS)},
  {"p", {'p'}, act_eps_at, TUI_PALL | TUI_NO_LESSON, NULL, "eps@",
   "eps placement: inside the sqrt (var) or added to the std (with a lesson open: @)",
   TUI_SEC_SETTINGS, F(EPS_AT)},
  {"@", {'@'}, act_eps_at, TUI_PALL, NULL, NULL,
   "eps placement (p too, while no lesson is open)", TUI_SEC_SETTINGS, F(EPS_AT)},
  {"d", {'d'}, act_ddof, TUI_PALL, NULL, "ddof", "ddof 0 (n) / 1 (n-1)", TUI_SEC_SETTINGS,
   F(DDOF)},
  {"c", {'c'}, act_center, TUI_PALL, NULL, "ctr", "centering: default, on, off",
   TUI_SEC_SETTINGS, F(CENTER)},
  {"w", {'w'}, act_affine, TUI_PALL, NULL, "gamma",
   "gamma/beta: none, gamma 2, gamma 2 and beta 0.5", TUI_SEC_SETTINGS, F(GAMMA) | F(BETA)},
  {"t", {'t'}, act_dtype, TUI_PALL, NULL, "dtype", "storage dtype: fp64 fp32 fp16 bf16",
   TUI_SEC_SETTINGS, F(DTYPE)},
  {"T", {'T'}, act_acc, TUI_PALL, NULL, "acc", "accumulation dtype (default: the dtype's)",
   TUI_SEC_SETTINGS, F(ACC)},
  {"v", {'v'}, act_algo, TUI_PALL, NULL, "algo",
   "variance algorithm: two-pass, Welford, raw moments", TUI_SEC_SETTINGS, F(ALGO)},
  {"m", {'m'}, act_mode, TUI_PALL, NULL, "mode",
   "mode: train (batch statistics) / eval (running ones)", TUI_SEC_SETTINGS, F(MODE)},
  {"o O", {'o', 'O'}, act_momentum, TUI_PALL, NULL, "mom", "momentum halved / doubled",
   TUI_SEC_SETTINGS, F(MOMENTUM)},
  {"C", {'C'}, act_cumulative, TUI_PALL, NULL, NULL,
   "running statistics: momentum / cumulative average", TUI_SEC_SETTINGS, F(MOMENTUM)},
  {"s S", {'s', 'S'}, act_shift, TUI_PALL, NULL, "shift", "shift probe x + b: b down / up by 1",
   TUI_SEC_PROBES, F(SHIFT)},
  {"z Z", {'z', 'Z'}, act_scale, TUI_PALL, NULL, "scale",
   "scale probe a x: a halved / doubled (set{scale=-1} for a sign)", TUI_SEC_PROBES, F(SCALE)},
  {"< >", {'<', '>'}, act_target, TUI_PALL, NULL, NULL,
   "previous / next target row T of the batch panel", TUI_SEC_PROBES, F(TARGET)},
  {"[ ]", {'[', ']'}, act_companion, TUI_PALL, NULL, NULL,
   "previous / next companion row C of the batch panel", TUI_SEC_PROBES, F(COMPANION)},
  {"j J", {'j', 'J'}, act_batches, TUI_PALL, NULL, NULL,
   "half / twice as many training batches", TUI_SEC_PROBES, F(TRAIN_BATCHES)},
  {"r", {'r'}, act_seed, TUI_PALL, NULL, NULL, "another seed for the training draws",
   TUI_SEC_PROBES, F(SEED)},
  /* the experiment views and their fields */
  {"D B V L", {'D', 'B', 'V', 'L'}, tui_act_view, TUI_PALL, NULL, "views",
   "views: D residual block (placement), B backward pass, V shifted evaluation, "
   "L deep stacks; the same key or Esc closes", TUI_SEC_EXPERIMENTS, 0},
  {"l", {'l'}, act_placement, TUI_PALL, NULL, NULL,
   "placement of N in the residual block: none, pre (x + W N(x)), post (N(x + W x))",
   TUI_SEC_EXPERIMENTS, F(PLACEMENT)},
  {"W", {'W'}, act_w_seed, TUI_PALL, NULL, NULL,
   "next w_seed: another random W and upstream gradient (set{W=...} gives W)",
   TUI_SEC_EXPERIMENTS, F(W_SEED)},
  {"b", {'b'}, act_source, TUI_PALL, NULL, NULL,
   "training source: rng draws, one step on the batch matrix, resampled rows",
   TUI_SEC_EXPERIMENTS, F(TRAIN_SOURCE)},
  {"( )", {'(', ')'}, act_eval_loc, TUI_PALL, NULL, NULL,
   "evaluation mean down / up by 1 (a shifted evaluation distribution)",
   TUI_SEC_EXPERIMENTS, F(EVAL_LOC)},
  {"y Y", {'y', 'Y'}, act_eval_scale, TUI_PALL, NULL, NULL,
   "evaluation standard deviation halved / doubled", TUI_SEC_EXPERIMENTS, F(EVAL_SCALE)},
  {"u U C-r", {'u', 'U', TUI_CTRL('r')}, act_undo, TUI_PALL, NULL, "undo",
   "undo the last change / redo (U or Ctrl-R)", TUI_SEC_OTHER, 0},
  {":", {':'}, act_prompt, TUI_PALL, NULL, "Lua",
   "Lua prompt: set{...}, get(), result(), :w FILE saves, :e FILE loads; Esc leaves",
   TUI_SEC_OTHER, 0},
  {"f", {'f'}, act_figure, TUI_PALL, NULL, "figure",
   "the focused panel's figure, large and live (f or Esc closes)", TUI_SEC_OTHER, 0},
  /* the audit panel (auditview.c) */
  {"a", {'a'}, tui_act_audit, TUI_PALL, NULL, "audit",
   "audit x (or the file it came from) with these settings: each check's verdict; Enter on "
   "one shows it here (one undo step); a or Esc closes", TUI_SEC_OTHER, 0},
  {"? F1", {'?', TUI_KEY(KEY_F(1))}, act_help, TUI_PALL, NULL, "help",
   "this help: the focused panel first (arrows, PgUp/PgDn, wheel scroll; Esc closes)",
   TUI_SEC_OTHER, 0},
  {"C-l", {TUI_CTRL('l')}, act_redraw, TUI_PALL, NULL, NULL, "redraw the screen",
   TUI_SEC_OTHER, 0},
  {"q Q", {'q', 'Q'}, act_quit, TUI_PALL, NULL, "quit", "quit (Ctrl-C too)", TUI_SEC_OTHER, 0},
  /* the classroom (src/class): the follower's hook takes F and Esc before this table */
  {"F", {'F'}, act_follow, TUI_PALL, NULL, NULL,
   "normscope follow: follow the teacher again, at the teacher's state (Esc detaches)",
   TUI_SEC_OTHER, 0},
  /* ---- lessons (lesson_pane.c): keys that were free, since n p g r s edit and set ---- */
  {"n N Space p P } {", {'n', 'N', ' ', 'p', 'P', '}', '{'}, tui_act_lesson_step, TUI_PALL | TUI_LESSON_ONLY,
   NULL, NULL,
   "next lesson step (n N Space; at the last one, twice: the next lesson) / previous (p P); "
   "} { scroll a long step text first, then step; under --autoplay Space pauses and resumes",
   TUI_SEC_LESSON, 0},
  {"#", {'#'}, tui_act_lesson_jump, TUI_PALL | TUI_LESSON_ONLY, NULL, NULL,
   "go to a lesson step: type its number, Enter", TUI_SEC_LESSON, 0},
  {"R", {'R'}, tui_act_lesson_reapply, TUI_PALL | TUI_LESSON_ONLY, NULL, NULL,
   "put the lesson step's state back after changing things (undoable)", TUI_SEC_LESSON, 0},
  {"H", {'H'}, tui_act_lesson_show, TUI_PALL | TUI_LESSON_ONLY, NULL, NULL,
   "the next hint of the step's try-it (the last is the answer); then its answer's state "
   "(undoable)", TUI_SEC_LESSON, 0},
  {"=", {'='}, tui_act_lesson_answer, TUI_PALL | TUI_LESSON_ONLY, NULL, NULL,
   "answer the step's question or prediction: = 13.2 (any Lua expression), Enter; a step "
   "without one: eps exactly", TUI_SEC_LESSON, 0},
  {"V", {'V'}, tui_act_lesson_variant, TUI_PALL | TUI_LESSON_ONLY, NULL, NULL,
   "another variant of the step's numbers (a step with one; else the shifted-evaluation view)",
   TUI_SEC_LESSON, 0},
  {"F", {'F'}, tui_act_lesson_figure, TUI_PALL | TUI_LESSON_ONLY, NULL, NULL,
   "the step's figure over the panels, above the lesson text (F or Esc closes)", TUI_SEC_LESSON,
   0},
  {"M", {'M'}, tui_act_lesson_mark, TUI_PALL, NULL, NULL,
   "normscope record: mark the state as a lesson step", TUI_SEC_LESSON, 0},
};
/* clang-format on */
const int tui_nkeymap = (int)(sizeof tui_keymap / sizeof tui_keymap[0]);

/* The fields no key changes, and why (every other field is some row's `fields`). */
const tui_unbound tui_unbound_fields[] = {
    {NS_F_SOURCE, "where x came from: set by opening a file (normscope FILE, :e FILE)"},
    {NS_F_BASELINE, "follows the companion row; set{baseline={...}} fixes it"},
    {NS_F_BATCH_SIZE, "set{batch_size=64} at the prompt"},
    {NS_F_TRAIN_LOC, "set{train_loc=...}: the mean of the training draws"},
    {NS_F_TRAIN_SCALE, "set{train_scale=...}: their standard deviation"},
    {NS_F_ORDER, "set{order=\"pairwise\"}: numpy's summation order (\"torch\": torch's LayerNorm; "
                 "\"sequential\": in index order)"},
    {NS_F_EVAL_SIZE, "set{eval_size=...}: evaluation batch size (0: batch_size)"},
    {NS_F_W, "set{W={...}}: the residual branch (false: random from w_seed)"},
    {NS_F_UPSTREAM, "set{upstream={...}}: dL/dy of the backward pass (result().backward)"},
    {NS_F_MASK, "set{mask={...}}: 1 keeps, 0 leaves an element out (padding; shown as .)"},
};
const int tui_nunbound = (int)(sizeof tui_unbound_fields / sizeof tui_unbound_fields[0]);

/* The row of code in force with a lesson open (lesson 1) or not (0); -1: the first row that
 * has it. While a lesson is open its rows come first (= answers, V draws a variant). */
static const tui_binding *lookup_in(int code, int *which, int lesson) {
  for (int pass = lesson == 1 ? 0 : 1; pass < 2; pass++)
    for (int i = 0; i < tui_nkeymap; i++) {
      unsigned m = tui_keymap[i].panels;
      if (pass == 0 && !(m & TUI_LESSON_ONLY)) continue;
      if (lesson >= 0 && (((m & TUI_LESSON_ONLY) && !lesson) || ((m & TUI_NO_LESSON) && lesson)))
        continue;
      for (int k = 0; k < TUI_MAXCODES && tui_keymap[i].code[k]; k++)
        if (tui_keymap[i].code[k] == code) {
          if (which) *which = k;
          return &tui_keymap[i];
        }
    }
  return NULL;
}

static const tui_binding *lookup(int code, int *which) {
  return lookup_in(code, which, -1);
}

const tui_binding *tui_binding_of(int code) {
  return lookup(code, NULL);
}

const tui_binding *tui_binding_in(int code, int lesson) {
  return lookup_in(code, NULL, lesson);
}

/* The bindings that change field f, into buf: their keys ("e E ="), or each with its help
 * ("e E: ...; =: ..."). */
static const char *field_bindings(int f, int with_help, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = 0;
  for (int i = 0; i < tui_nkeymap && n < len; i++)
    if (tui_keymap[i].fields & NS_FIELDBIT(f))
      n += (size_t)snprintf(buf + n, len - n, "%s%s%s%s", n ? (with_help ? "; " : " ") : "",
                            tui_keymap[i].keys, with_help ? ": " : "",
                            with_help ? tui_keymap[i].help : "");
  return buf;
}

const char *tui_field_keys(int f, char *buf, size_t len) {
  return field_bindings(f, 0, buf, len);
}

const char *tui_field_help(int f, char *buf, size_t len) {
  return field_bindings(f, 1, buf, len);
}

/* Word k of a binding's key names ("k K" -> "K"). */
static const char *key_word(const tui_binding *b, int k, char *buf, size_t len) {
  const char *s = b->keys;
  for (int i = 0; i < k && s; i++) {
    s = strchr(s, ' ');
    if (s) s++;
  }
  if (!s) s = b->keys;
  size_t l = strcspn(s, " ");
  snprintf(buf, len, "%.*s", (int)l, s);
  return buf;
}

const char *tui_key_name(int code, char *buf, size_t len) {
  int k = 0;
  const tui_binding *b = lookup(code, &k);
  if (!b) {
    snprintf(buf, len, "?");
    return buf;
  }
  return key_word(b, k, buf, len);
}

/* A key pressed where it does nothing: say where it works. */
static unsigned why_not(app *a, const tui_binding *b, int which) {
  char key[16], where[160] = "";
  size_t n = 0;
  for (int p = 0; p < TUI_PANEL_COUNT; p++)
    if (b->panels & TUI_PBIT(p))
      n += (size_t)snprintf(where + n, sizeof where - n, "%s%s", n ? ", " : "", tui_panel_names[p]);
  return tui_say(a, PLOT_S_DIM, "%s does nothing in %s: it works in %s",
                 key_word(b, which, key, sizeof key), tui_panel_title(a->view.focus), where);
}

/* A classroom's look at a key first (code 27: a lone Esc); TUI_HOOK_PASS: not its key. */
static unsigned hook_key(app *a, int code) {
  const tui_hook *h = a->opt.hook;
  return h && h->key ? h->key(h->ud, a, code) : TUI_HOOK_PASS;
}

/* ---- typing a number ---- */

static unsigned commit_edit(app *a) {
  const char *s = a->edit;
  edit_kind k = a->editing;
  a->editing = EDIT_NONE;
  if (!*s) return tui_say(a, PLOT_S_DIM, "nothing typed (nothing changed)");
  if (k == EDIT_ANSWER) return tui_player_answer(a, s); /* any Lua expression */
  double v;
  if (tui_cell_number(s, &v) != 0) {
    const char *hint = strchr(s, ',')   ? "; decimals take a point: 1.5"
                       : strchr(s, ' ') ? "; one number per cell"
                                        : "";
    return tui_say(a, PLOT_S_MARK, "not a number: \"%s\"%s (nothing changed)", s, hint);
  }
  if (k == EDIT_STEP) return tui_player_goto(a, v);
  if (k == EDIT_EPS) {
    char err[NS_ERRLEN];
    return done(a, ns_edit_set_eps(&a->st, &a->hist, v, err), err, NULL);
  }
  return set_cell(a, v);
}

/* While a number is typed every printable character goes into it (so "1,5" shows as
 * typed and is refused whole on Enter, never read as 15). */
static unsigned key_edit(app *a, int code, unsigned ch) {
  size_t len = strlen(a->edit);
  if (!code && ch >= 32 && ch < 127) {
    if (len + 1 < sizeof a->edit) {
      a->edit[len] = (char)ch;
      a->edit[len + 1] = 0;
    }
  } else if ((code && ch == KEY_BACKSPACE) || (!code && (ch == 127 || ch == 8))) {
    /* an empty field stays open: extra Backspaces must not drop out of the edit and turn
     * the letters typed next ("nan", "inf") into setting keys */
    if (len) a->edit[len - 1] = 0;
  } else if ((code && ch == KEY_ENTER) || (!code && (ch == '\n' || ch == '\r'))) {
    return commit_edit(a);
  } else if (!code && ch == 27) {
    a->editing = EDIT_NONE;
    return tui_say(a, PLOT_S_DIM, "edit cancelled");
  } else if (code && (ch == KEY_UP || ch == KEY_DOWN || ch == KEY_LEFT || ch == KEY_RIGHT) &&
             a->editing == EDIT_CELL) {
    unsigned r = commit_edit(a);
    if (a->msg_style == PLOT_S_MARK && (r & TUI_R_MESSAGE)) return r;
    int w = ch == KEY_UP ? 0 : ch == KEY_DOWN ? 1 : ch == KEY_LEFT ? 2 : 3;
    return r | act_move(a, w);
  } else {
    return tui_say(a, PLOT_S_DIM, "typing a number: Enter applies, Esc cancels");
  }
  return TUI_R_NONE;
}

/* ---- the mouse ---- */

static unsigned wheel(app *a, int p, int down) {
  if (p < 0 || tui_panels[p].nav == TUI_NAV_NONE) { /* nothing to move: the Lua output */
    tui_prompt_scroll(a->prompt, down ? -3 : 3);
    return TUI_R_NONE;
  }
  focus(a, (tui_panel)p);
  unsigned r = 0;
  for (int i = 0; i < 3; i++) r |= act_move(a, down ? 1 : 0);
  return r;
}

static unsigned mouse(app *a) {
  MEVENT ev;
  if (getmouse(&ev) != OK) return TUI_R_NONE;
  int up = (ev.bstate & BUTTON4_PRESSED) != 0;
#ifdef BUTTON5_PRESSED
  int down = (ev.bstate & BUTTON5_PRESSED) != 0;
#else
  int down = 0;
#endif
  if (a->help_open) {
    if (up || down) a->help_scroll += down ? 3 : -3;
    return TUI_R_NONE;
  }
  int p = tui_layout_hit(&a->lay, ev.y, ev.x);
  if (up || down) return wheel(a, p, down);
  if (!(ev.bstate & (BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON1_RELEASED))) return TUI_R_NONE;
  if (p < 0) return TUI_R_NONE;
  focus(a, (tui_panel)p);
  tui_rect r = a->lay.panel[p];
  /* a click on a cell of the input or of the batch moves the cursor there */
  if (!(tui_panels[p].nav == TUI_NAV_CELLS && r.h > 0 && ev.y > r.y)) return TUI_R_NONE;
  size_t rows, cols;
  grid(a, &rows, &cols);
  int lab, cw, per;
  if (p == TUI_PANEL_INPUT)
    tui_input_geometry(&a->st, r.w - 2, &lab, &cw, &per);
  else
    tui_batch_geometry(&a->st, r.w - 2, &lab, &cw);
  int row = ev.y - r.y - 2, col = (ev.x - r.x - 1 - lab) / cw;
  if (ev.x < r.x + 1 + lab || row < 0) return TUI_R_NONE;
  int vis = r.h - 5;
  if (p == TUI_PANEL_INPUT && a->st.x->rank == 1) { /* the vector wraps (input.c) */
    if (col >= per) return TUI_R_NONE;
    int cur_line = a->view.cursor_col / per;
    int l0 = cur_line >= vis ? cur_line - vis + 1 : 0;
    col += (row + l0) * per;
    row = 0;
  } else if (p == TUI_PANEL_INPUT) { /* the window onto a large matrix follows the cursor */
    if (a->view.cursor_row >= vis) row += a->view.cursor_row - vis + 1;
    if (a->view.cursor_col >= per) col += a->view.cursor_col - per + 1;
  } else {
    row += tui_batch_first_row(&a->st, a->view.cursor_row, r.w - 2, r.h - 2);
  }
  if (row >= 0 && (size_t)row < rows && col >= 0 && (size_t)col < cols) {
    a->view.cursor_row = row;
    a->view.cursor_col = col;
    clamp_cursor(a);
  }
  return TUI_R_NONE;
}

/* ---- the help screen and the figure view take the keys while open ---- */

static unsigned help_key(app *a, int code, unsigned ch) {
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
    a->help_scroll = 1 << 20;
  return TUI_R_NONE;
}

/* Reads the key after an Esc: Alt-c arrives as Esc then c. 0: a lone Esc. */
static int alt_code(void) {
  wtimeout(stdscr, 0);
  int next = getch();
  wtimeout(stdscr, TICK_MS);
  if (next == ERR) return 0;
  if (lookup(TUI_ALT(next), NULL)) return TUI_ALT(next);
  ungetch(next);
  return 0;
}

unsigned tui_key(app *a, int code, unsigned ch) {
  if (code && ch == KEY_RESIZE) return TUI_R_RELAYOUT;
  if (code && ch == KEY_MOUSE) return mouse(a);
  if (a->lay.too_small) return !code && (ch == 'q' || ch == 'Q') ? TUI_R_QUIT : TUI_R_NONE;
  if (a->help_open) return help_key(a, code, ch);
  if (tui_prompt_is_open(a->prompt)) {
    int figure = a->figure_open;
    tui_prompt_key(a->prompt, code, ch);
    /* plot(panel) opened the figure view behind the prompt: the prompt keeps the keys (what
     * is typed next is Lua, not explorer keys) and Esc shows the figure */
    if (a->figure_open && !figure)
      tui_prompt_echo(a->prompt, "the figure view is open behind the prompt: Esc shows it",
                      PLOT_S_DIM);
    /* set{}, undo() and friends changed the state through explore's Lua side (on_change
     * marks it); a Lua error only reached the scrollback. */
    clamp_cursor(a);
    return tui_prompt_is_open(a->prompt) ? TUI_R_NONE : TUI_R_RELAYOUT;
  }
  if (a->editing) return key_edit(a, code, ch);
  if (tui_audit_is_open(a)) return tui_audit_key(a, code, ch);
  int kc = code ? TUI_KEY((int)ch) : (int)ch;
  if (!code && ch == 27) {
    kc = alt_code();
    if (!kc) {
      unsigned hr = hook_key(a, 27);
      if (hr != TUI_HOOK_PASS) return hr;
      unsigned r = tui_player_escape(a); /* the step's figure closes first */
      if (r) return r;
      if (a->figure_open)
        a->figure_open = 0; /* Esc closes the figure view */
      else
        a->xview = TUI_XV_NONE; /* or the experiment view */
      a->xfigure = 0;
      return TUI_R_NONE;
    }
  }
  unsigned hr = hook_key(a, kc);
  if (hr != TUI_HOOK_PASS) return hr;
  a->msg[0] = 0;
  int which = 0;
  int lesson = tui_player_lesson_open(a);
  const tui_binding *b = lookup_in(kc, &which, lesson);
  if (!b && lookup(kc, NULL) && !lesson)
    return tui_say(a, PLOT_S_DIM, "'%c' is a lesson key (normscope lesson NAME plays one)",
                   kc < 127 ? kc : '?');
  if (!b) {
    if (!code && ch >= 32 && ch < 127)
      return tui_say(a, PLOT_S_DIM, "'%c' does nothing; ? lists the keys", (int)ch);
    return TUI_R_NONE;
  }
  if (!(b->panels & TUI_PBIT(a->view.focus)) && !b->elsewhere) return why_not(a, b, which);
  /* typing into a cell the figure view hides would be an edit nobody sees */
  if (a->figure_open && (b->act == act_type || b->act == act_enter))
    return tui_say(a, PLOT_S_DIM, "the figure view hides the cells: Esc closes it, then type");
  return b->act(a, which);
}
