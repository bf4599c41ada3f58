/* lesson_pane.c: the lesson player and the recorder of the explorer screen.
 *
 * Player: `normscope lesson X` loads X with the engine (lesson/lesson.h) and shows a pane under
 * the panels: a bar with the title and "step k/n" and a marker per step, the step's text,
 * its try-it and, live, the try's verdict on the learner's state. Every step change goes
 * through lesson_apply (one undoable change that puts the step's snapshot in place, so
 * stepping back restores a state bit for bit); the step's focus moves the screen's focus.
 * --present draws the lesson text and the focused panel alone on the whole screen.
 * The learner's place is kept in lesson-progress (lesson/lesson_progress.h) on every step.
 *
 * Recorder: `normscope record FILE.lua` starts the explorer as usual; M marks a step: the
 * fields that differ from the previous mark (the default state for the first) become that
 * step's `set`, written as dump() writes them (%.17g numbers: bit for bit), with the focus.
 * On the way out a change since the last mark becomes a last step, and the file is written.
 * With --every-change each change (a key, a set{} at the prompt) is a step by itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "explore/file.h"
#include "lesson/lesson.h"
#include "lesson/lesson_progress.h"
#include "lesson/lesson_run.h"
#include "tui/app.h"
#include "tui/screen.h"

typedef struct tui_player {
  lesson_registry *reg;
  lesson *ls;
  char name[512];
  int k, n;     /* current step (1-based) and count */
  int *failed;  /* per step: -1 no claims, else the number of claims that failed */
  int *done;    /* per step: the try was done at some point */
  int try_live; /* the current step's check on the live state: 1 done, 0 not, -1 none */
  char hint[256];
  int scroll; /* first line of the pane's text shown */
  int playing;
  int live;       /* the screen is up: progress is worth keeping from now on */
  double next_at; /* autoplay: when the next step comes (monotonic seconds) */
  lesson_progress prog;
  /* recording */
  const char *record;
  ns_state last; /* the state at the last mark */
  int have_last;
  char **steps; /* each marked step's Lua text */
  int nsteps;
} tui_player;

static int mark(app *a, char *err); /* recording: the state now as a step */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- opening ---- */

static void save_progress(tui_player *p) {
  char err[NS_ERRLEN];
  if (!p->ls || !p->live || lesson_progress_note(&p->prog, p->name, p->k, p->n) != 0) return;
  (void)lesson_progress_save(&p->prog, err); /* best effort: a read-only home still plays */
}

/* The current step's try verdict on the screen's state. */
static void live_check(app *a) {
  tui_player *p = a->player;
  char err[LESSON_ERRLEN];
  p->hint[0] = 0;
  p->try_live = -1;
  if (!p->ls || !lesson_step_has_check(p->ls, p->k)) return;
  int r = lesson_check_try(p->ls, p->k, &a->st, p->hint, sizeof p->hint, err);
  if (r < 0) {
    snprintf(p->hint, sizeof p->hint, "%.200s", err);
    r = 0;
  }
  p->try_live = r;
  if (r == 1) p->done[p->k - 1] = 1;
}

/* Puts the screen in step k (show: its try's answer) through the engine. */
static unsigned go_step(app *a, int k, int show) {
  tui_player *p = a->player;
  char err[LESSON_ERRLEN];
  if (k < 1) k = 1;
  if (k > p->n) k = p->n;
  int rc = show ? lesson_apply_show(p->ls, k, &a->st, &a->hist, err)
                : lesson_apply(p->ls, k, &a->st, &a->hist, err);
  if (rc != 0) return tui_say(a, PLOT_S_MARK, "%s", err);
  if (k != p->k) p->scroll = 0;
  p->k = k;
  const char *f = lesson_step_focus(p->ls, k);
  int fp = f ? ns_choice_parse(tui_panel_names, f) : -1;
  if (fp >= 0) {
    a->view.focus = (tui_panel)fp;
    if (tui_panel_tabbed((tui_panel)fp)) a->tab = (tui_panel)fp;
  }
  a->view.cursor_row = a->view.cursor_col = 0; /* the matrix may have a new shape */
  a->changed = 1;
  p->next_at = now_s() + a->opt.autoplay;
  save_progress(p);
  return TUI_R_RECOMPUTE | TUI_R_RELAYOUT;
}

static void count_claim(void *ud, const lesson_claim *c) {
  (void)ud;
  (void)c; /* lesson_claims returns the failures; the verdicts are not printed here */
}

int tui_player_open(app *a) {
  const tui_options *o = &a->opt;
  if (!o->lesson && !o->record) return 0;
  tui_player *p = calloc(1, sizeof *p);
  if (!p) {
    fprintf(stderr, "normscope: out of memory\n");
    return -1;
  }
  a->player = p;
  char err[LESSON_ERRLEN];
  if (o->record) {
    p->record = o->record;
    if (ns_state_init(&p->last, err) != 0) {
      fprintf(stderr, "normscope: %s\n", err);
      return -1;
    }
    p->have_last = 1;
    return 0;
  }
  p->reg = lesson_registry_load(lesson_claims_path(), err);
  if (!p->reg) {
    fprintf(stderr, "normscope: claims registry: %s\n", err);
    return -1;
  }
  lesson_options lo;
  lesson_options_init(&lo);
  lo.registry = p->reg;
  lo.panels = tui_panel_names;
  lo.on_claim = count_claim;
  p->ls = lesson_load(o->lesson, &lo, err);
  if (!p->ls) {
    fprintf(stderr, "normscope: %s\n", err);
    return -1;
  }
  p->n = lesson_nsteps(p->ls);
  p->failed = calloc((size_t)p->n, sizeof *p->failed);
  p->done = calloc((size_t)p->n, sizeof *p->done);
  if (!p->failed || !p->done) {
    fprintf(stderr, "normscope: out of memory\n");
    return -1;
  }
  for (int k = 1; k <= p->n; k++) { /* the markers: each step's claims at its own state */
    p->failed[k - 1] = -1;
    if (!lesson_step_has_claims(p->ls, k)) continue;
    int f = lesson_claims(p->ls, k, err);
    if (f < 0) {
      fprintf(stderr, "normscope: %s\n", err);
      return -1;
    }
    p->failed[k - 1] = f;
  }
  lesson_progress_name(o->lesson, p->name, sizeof p->name);
  lesson_progress_load(&p->prog);
  p->playing = o->autoplay > 0;
  int k = o->lesson_step > 0 ? o->lesson_step : 1;
  p->k = 0;
  unsigned r = go_step(a, k, 0);
  if (r & TUI_R_MESSAGE) {
    fprintf(stderr, "normscope: %s\n", a->msg);
    return -1;
  }
  return 0;
}

void tui_player_free(app *a) {
  tui_player *p = a->player;
  if (!p) return;
  lesson_free(p->ls);
  lesson_registry_free(p->reg);
  free(p->failed);
  free(p->done);
  lesson_progress_free(&p->prog);
  if (p->have_last) ns_state_free(&p->last);
  for (int i = 0; i < p->nsteps; i++) free(p->steps[i]);
  free(p->steps);
  free(p);
  a->player = NULL;
}

int tui_player_presenting(const app *a) {
  return a->player && a->player->ls && a->opt.present;
}

/* ---- layout ---- */

/* Rows of the pane: a bar and the text (the recorder: a bar and one line). */
static int pane_rows(const app *a, const tui_layout *L) {
  if (a->player->record) return 2;
  return L->small ? 8 : 12;
}

void tui_player_layout(app *a, tui_layout *L, tui_rect *pane) {
  memset(pane, 0, sizeof *pane);
  if (!a->player || L->too_small || tui_player_presenting(a)) return;
  /* the panels' body: rows 1 .. end-1, above the scrollback (full) or its line (compact) */
  int end = L->small ? L->lines - 3 : L->lines - 8;
  int B = end - 1, H = pane_rows(a, L), Bn = B - H;
  if (Bn < 8) return;
  for (int p = 0; p <= TUI_PANEL_COUNT; p++) {
    tui_rect *r = p < TUI_PANEL_COUNT ? &L->panel[p] : &L->scrollback;
    if (r->h <= 0 || r->y >= end) continue;
    int y0 = (r->y - 1) * Bn / B, y1 = (r->y + r->h - 1) * Bn / B;
    r->y = 1 + y0;
    r->h = y1 - y0;
  }
  pane->y = 1 + Bn;
  pane->x = 0;
  pane->h = H;
  pane->w = L->cols;
}

/* ---- text ---- */

typedef struct {
  const char *s;
  int len;   /* bytes */
  int style; /* plot style */
} line;

#define MAXLINES 256

/* Columns of n bytes of UTF-8. */
static int cols_of(const char *s, int n) {
  int c = 0;
  for (int i = 0; i < n; i++)
    if (((unsigned char)s[i] & 0xC0) != 0x80) c++;
  return c;
}

/* Splits text into lines of at most width columns at spaces (paragraph breaks kept). */
static int wrap(const char *text, int width, int style, line *out, int n, int max) {
  if (width < 8) width = 8;
  const char *p = text, *end = text + strlen(text);
  while (end > p && (end[-1] == '\n' || end[-1] == ' ')) end--;
  while (p < end && n < max) {
    const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
    if (le == p) out[n++] = (line){p, 0, style};
    while (p < le && n < max) {
      const char *cut = le;
      if (cols_of(p, (int)(le - p)) > width) {
        const char *sp = NULL;
        int c = 0;
        for (const char *r = p; r < le; r++) {
          if (((unsigned char)*r & 0xC0) != 0x80) c++;
          if (c > width) break;
          if (*r == ' ' && r > p) sp = r;
          cut = r + 1;
        }
        if (sp)
          cut = sp;
        else
          while (cut < le && ((unsigned char)*cut & 0xC0) == 0x80) cut++;
      }
      out[n++] = (line){p, (int)(cut - p), style};
      p = cut;
      while (p < le && *p == ' ') p++;
    }
    p = nl ? nl + 1 : end;
  }
  return n;
}

/* The step's marker: ✗ a claim failed, ? a try not done yet, ✓ claims verified (or the
 * try done), · nothing to verify. */
static const char *marker(const tui_player *p, int k, int ascii) {
  int f = p->failed[k - 1];
  int has_try = lesson_step_has_check(p->ls, k);
  if (f > 0) return ascii ? "x" : "\xe2\x9c\x97";
  if (has_try && !p->done[k - 1]) return "?";
  if (f == 0 || has_try) return ascii ? "+" : "\xe2\x9c\x93";
  return ascii ? "." : "\xc2\xb7";
}

/* The bar: title, "step k/n" and the markers (the current one reversed). */
static void draw_bar(const app *a, WINDOW *w, int y, int width) {
  const tui_player *p = a->player;
  wattrset(w, tui_attr(PLOT_S_TITLE) | A_REVERSE | A_BOLD);
  mvwhline(w, y, 0, ' ', width);
  char head[160];
  int autop = a->opt.autoplay > 0;
  snprintf(head, sizeof head, " step %d/%d%s ", p->k, p->n,
           autop ? (p->playing ? " (playing)" : " (paused)") : "");
  mvwaddstr(w, y, 1, head);
  int x = 1 + (int)strlen(head);
  for (int k = 1; k <= p->n && x < width - 2; k++, x += 2) {
    wattrset(w, tui_attr(k == p->k ? PLOT_S_POS : PLOT_S_TITLE) | (k == p->k ? A_BOLD : A_REVERSE));
    mvwaddstr(w, y, x, marker(p, k, a->opt.ascii));
  }
  wattrset(w, tui_attr(PLOT_S_TITLE) | A_REVERSE);
  x += 1;
  const char *t = lesson_title(p->ls);
  int room = width - x - 10; /* the last columns: "} more" */
  if (room > 8) mvwaddnstr(w, y, x, t, room);
  wattrset(w, A_NORMAL);
}

/* Copies text into dst joining the lines of a paragraph (lessons are written wrapped at 80
 * columns; the pane has its own width). A blank line, or a line that starts with a blank
 * (a formula, a table, a list), keeps its break. */
static const char *reflow(const char *src, char *dst, size_t len) {
  size_t j = 0;
  int indented = src[0] == ' ', empty = 1;
  for (size_t i = 0; src[i] && j + 1 < len; i++) {
    char c = src[i];
    if (c == '\n') {
      char nx = src[i + 1];
      int join = !empty && !indented && nx && nx != '\n' && nx != ' ';
      dst[j++] = join ? ' ' : '\n';
      indented = nx == ' ';
      empty = 1;
      continue;
    }
    empty = 0;
    dst[j++] = c;
  }
  dst[j] = 0;
  return dst;
}

/* The step's lines: its text, its try and (last) the live verdict. */
static int step_lines(const app *a, int width, line *out, char *verdict, size_t vlen) {
  const tui_player *p = a->player;
  static char xbuf[8192];
  int n = wrap(reflow(lesson_step_text(p->ls, p->k), xbuf, sizeof xbuf), width, PLOT_S_TEXT, out, 0,
               MAXLINES - 8);
  const char *tt = lesson_step_try_text(p->ls, p->k);
  verdict[0] = 0;
  if (tt) {
    out[n++] = (line){"", 0, PLOT_S_TEXT};
    static char tbuf[4160], tjoin[4096];
    snprintf(tbuf, sizeof tbuf, "Try it: %s", reflow(tt, tjoin, sizeof tjoin));
    n = wrap(tbuf, width, PLOT_S_POS, out, n, MAXLINES - 2);
    if (p->try_live == 1)
      snprintf(verdict, vlen, "%s done: that is it", a->opt.ascii ? "+" : "\xe2\x9c\x93");
    else if (p->try_live == 0)
      snprintf(verdict, vlen, "? not yet: %s%s", p->hint,
               lesson_step_show_state(p->ls, p->k) ? "  (H shows the answer)" : "");
  }
  return n;
}

void tui_player_draw(app *a) {
  tui_player *p = a->player;
  WINDOW *w = a->lwin;
  if (!p || !w) return;
  werase(w);
  int H = getmaxy(w), W = getmaxx(w);
  if (p->record) {
    wattrset(w, tui_attr(PLOT_S_TITLE) | A_REVERSE | A_BOLD);
    mvwhline(w, 0, 0, ' ', W);
    mvwprintw(w, 0, 1, " recording to %.*s ", W - 20, p->record);
    wattrset(w, tui_attr(PLOT_S_TEXT));
    mvwprintw(w, 1, 1, "%d step%s marked; M marks the state as a step, q writes the file",
              p->nsteps, p->nsteps == 1 ? "" : "s");
    wattrset(w, A_NORMAL);
    wnoutrefresh(w);
    return;
  }
  if (!p->live) { /* the first frame: the lesson is on screen, so it counts as started */
    p->live = 1;
    save_progress(p);
  }
  draw_bar(a, w, 0, W);
  line ln[MAXLINES];
  char verdict[512];
  int n = step_lines(a, W - 2, ln, verdict, sizeof verdict);
  int rows = H - 1 - (verdict[0] ? 1 : 0);
  if (p->scroll > n - rows) p->scroll = n - rows;
  if (p->scroll < 0) p->scroll = 0;
  for (int i = 0; i < rows && p->scroll + i < n; i++) {
    const line *l = &ln[p->scroll + i];
    wattrset(w, tui_attr(l->style));
    mvwaddnstr(w, 1 + i, 1, l->s, l->len);
  }
  if (p->scroll + rows < n || p->scroll > 0) { /* more text than rows: say how to see it */
    wattrset(w, tui_attr(PLOT_S_POS) | A_BOLD);
    mvwaddstr(w, 0, W - 9, p->scroll + rows < n ? " } more " : " { back ");
  }
  if (verdict[0]) {
    wattrset(w, tui_attr(p->try_live == 1 ? PLOT_S_POS : PLOT_S_MARK) | A_BOLD);
    mvwaddnstr(w, H - 1, 1, verdict, W - 2);
  }
  wattrset(w, A_NORMAL);
  wnoutrefresh(w);
}

/* --present: the bar, the text large (bold, wide margins) and the focused panel under it. */
int tui_player_present(app *a, const tui_view *v) {
  if (!tui_player_presenting(a)) return 0;
  tui_player *p = a->player;
  WINDOW *w = a->help;
  werase(w);
  int W = COLS, H = LINES;
  if (!p->live) {
    p->live = 1;
    save_progress(p);
  }
  draw_bar(a, w, 0, W);
  line ln[MAXLINES];
  char verdict[512];
  int n = step_lines(a, W - 6, ln, verdict, sizeof verdict);
  /* the text takes what it needs, up to half the screen; the panel the rest */
  int maxrows = (H - 2) / 2, rows = n < maxrows ? n : maxrows;
  if (p->scroll > n - rows) p->scroll = n - rows;
  if (p->scroll < 0) p->scroll = 0;
  for (int i = 0; i < rows && p->scroll + i < n; i++) {
    const line *l = &ln[p->scroll + i];
    wattrset(w, tui_attr(l->style) | A_BOLD);
    mvwaddnstr(w, 1 + i, 3, l->s, l->len);
  }
  if (p->scroll + rows < n) {
    wattrset(w, tui_attr(PLOT_S_POS) | A_BOLD);
    mvwaddstr(w, 0, W - 9, " } more ");
  }
  int y = 1 + rows;
  if (verdict[0]) {
    wattrset(w, tui_attr(p->try_live == 1 ? PLOT_S_POS : PLOT_S_MARK) | A_BOLD);
    mvwaddnstr(w, y++, 3, verdict, W - 6);
  }
  wattrset(w, tui_attr(PLOT_S_DIM));
  mvwaddnstr(w, H - 1, 1,
             a->msg[0] ? a->msg : "N next  P back  # step  R again  H answer  space pause  q quit",
             W - 2);
  wattrset(w, A_NORMAL);
  wnoutrefresh(w);
  int ph = H - 1 - y;
  if (ph >= 5) { /* the focused panel, as wide as the screen */
    WINDOW *pw = newwin(ph, W, y, 0);
    if (pw) {
      tui_view pv = *v;
      pv.focused = 1;
      pv.small = 0;
      if (a->have_res) tui_panels[a->view.focus].draw(&a->st, &a->res, pw, &pv);
      wnoutrefresh(pw);
      delwin(pw);
    }
  }
  curs_set(0);
  doupdate();
  return 1;
}

void tui_player_changed(app *a) {
  if (!a->player) return;
  if (a->player->ls) live_check(a);
  char err[NS_ERRLEN];
  if (a->player->record && a->opt.record_each && mark(a, err) < 0)
    tui_say(a, PLOT_S_MARK, "cannot record: %s", err);
}

unsigned tui_player_tick(app *a) {
  tui_player *p = a->player;
  if (!p || !p->ls || !p->playing || now_s() < p->next_at) return TUI_R_NONE;
  if (p->k >= p->n) {
    p->playing = 0;
    return tui_say(a, PLOT_S_DIM, "the end of the lesson (P steps back, q quits)");
  }
  return go_step(a, p->k + 1, 0);
}

/* ---- keys ---- */

static unsigned no_lesson(app *a) {
  return tui_say(a, PLOT_S_DIM, "no lesson is open (normscope lesson NAME plays one)");
}

unsigned tui_act_lesson_step(app *a, int which) {
  tui_player *p = a->player;
  if (!p || !p->ls) return no_lesson(a);
  int fwd = which == 0 || which == 2;
  if (which >= 2) { /* } { scroll the text first; at its end they step */
    line ln[MAXLINES];
    char v[512];
    int W = a->lwin ? getmaxx(a->lwin) - 2 : COLS - 6;
    int n = step_lines(a, W, ln, v, sizeof v);
    int rows = a->lwin ? getmaxy(a->lwin) - 1 - (v[0] ? 1 : 0) : (LINES - 2) / 2;
    if (fwd && p->scroll + rows < n) {
      p->scroll += rows > 1 ? rows - 1 : 1;
      return TUI_R_NONE;
    }
    if (!fwd && p->scroll > 0) {
      p->scroll -= rows > 1 ? rows - 1 : 1;
      return TUI_R_NONE;
    }
  }
  if (fwd && p->k >= p->n) return tui_say(a, PLOT_S_DIM, "the last step (%d/%d)", p->k, p->n);
  if (!fwd && p->k <= 1) return tui_say(a, PLOT_S_DIM, "the first step");
  return go_step(a, p->k + (fwd ? 1 : -1), 0);
}

unsigned tui_act_lesson_jump(app *a, int which) {
  (void)which;
  if (!a->player || !a->player->ls) return no_lesson(a);
  a->editing = EDIT_STEP;
  a->edit[0] = 0;
  return TUI_R_NONE;
}

unsigned tui_player_goto(app *a, double step) {
  tui_player *p = a->player;
  if (!p || !p->ls) return no_lesson(a);
  if (!(step >= 1 && step <= p->n) || step != (double)(int)step)
    return tui_say(a, PLOT_S_MARK, "no step %g: the lesson has steps 1 to %d", step, p->n);
  return go_step(a, (int)step, 0);
}

unsigned tui_act_lesson_reapply(app *a, int which) {
  (void)which;
  if (!a->player || !a->player->ls) return no_lesson(a);
  unsigned r = go_step(a, a->player->k, 0);
  return r | tui_say(a, PLOT_S_DIM, "step %d's state again (u undoes)", a->player->k);
}

unsigned tui_act_lesson_show(app *a, int which) {
  (void)which;
  tui_player *p = a->player;
  if (!p || !p->ls) return no_lesson(a);
  if (!lesson_step_show_state(p->ls, p->k))
    return tui_say(a, PLOT_S_DIM, "step %d has no answer to show", p->k);
  unsigned r = go_step(a, p->k, 1);
  return r | tui_say(a, PLOT_S_DIM, "the try's answer (u undoes, R goes back to the step)");
}

unsigned tui_act_lesson_pause(app *a, int which) {
  (void)which;
  tui_player *p = a->player;
  if (!p || !p->ls) return no_lesson(a);
  if (a->opt.autoplay <= 0) return tui_say(a, PLOT_S_DIM, "space pauses --autoplay");
  p->playing = !p->playing;
  p->next_at = now_s() + a->opt.autoplay;
  return tui_say(a, PLOT_S_DIM, p->playing ? "playing" : "paused (space plays on)");
}

/* ---- recording ---- */

/* dump()'s line of field f ("  eps = 0.5,") out of a whole dump; NULL if absent. */
static const char *dump_line(const char *dump, const char *name, int *len) {
  size_t nl = strlen(name);
  for (const char *s = dump; s && *s;) {
    const char *e = strchr(s, '\n');
    if (strncmp(s, "  ", 2) == 0 && strncmp(s + 2, name, nl) == 0 &&
        strncmp(s + 2 + nl, " = ", 3) == 0) {
      /* a long value (a tensor) goes on over lines indented deeper than a field's */
      while (e && strncmp(e + 1, "   ", 3) == 0) e = strchr(e + 1, '\n');
      *len = (int)(e ? e - s : (long)strlen(s));
      return s;
    }
    s = e ? e + 1 : NULL;
  }
  return NULL;
}

/* The state now as a step: the fields that differ from the last mark. 1 added, 0 nothing
 * changed, -1 error (err). */
static int mark(app *a, char *err) {
  tui_player *p = a->player;
  ns_fieldset d = ns_state_diff(&p->last, &a->st);
  if (d & NS_FIELDBIT(NS_F_BATCH)) d |= NS_FIELDBIT(NS_F_BASELINE); /* derived from it */
  if (d & NS_FIELDBIT(NS_F_COMPANION)) d |= NS_FIELDBIT(NS_F_BASELINE);
  if (!d) return 0;
  char *dump = ns_state_dump(&a->st, NS_DUMP_INLINE_MAX, err);
  if (!dump) return -1;
  size_t cap = strlen(dump) + 512, len = 0;
  char *step = malloc(cap);
  char **ns = realloc(p->steps, (size_t)(p->nsteps + 1) * sizeof *ns);
  if (!step || !ns) {
    free(step);
    free(dump);
    snprintf(err, NS_ERRLEN, "out of memory");
    return -1;
  }
  p->steps = ns;
  len += (size_t)snprintf(step + len, cap - len,
                          "    {text = [[Step %d: say here what to look at.]],\n"
                          "     focus = \"%s\",\n     set = {\n",
                          p->nsteps + 1, tui_panel_names[a->view.focus]);
  for (int f = 0; f < NS_F_COUNT; f++) {
    if (!(d & NS_FIELDBIT(f))) continue;
    int l = 0;
    const char *s = dump_line(dump, ns_field_name((ns_field)f), &l);
    if (s && len + (size_t)l + 8 < cap)
      len += (size_t)snprintf(step + len, cap - len, "    %.*s\n", l, s);
  }
  snprintf(step + len, cap - len, "     }},\n");
  free(dump);
  ns_state tmp;
  if (ns_state_copy(&tmp, &a->st, err) != 0) {
    free(step);
    return -1;
  }
  ns_state_free(&p->last);
  p->last = tmp;
  p->steps[p->nsteps++] = step;
  return 1;
}

unsigned tui_act_lesson_mark(app *a, int which) {
  (void)which;
  tui_player *p = a->player;
  if (!p || !p->record)
    return tui_say(a, PLOT_S_DIM, "M marks a step while recording (normscope record FILE.lua)");
  char err[NS_ERRLEN];
  int r = mark(a, err);
  if (r < 0) return tui_say(a, PLOT_S_MARK, "cannot mark: %s", err);
  if (r == 0) return tui_say(a, PLOT_S_DIM, "nothing changed since the last mark");
  return tui_say(a, PLOT_S_DIM, "step %d marked", p->nsteps);
}

void tui_player_finish(app *a) {
  tui_player *p = a->player;
  if (!p) return;
  if (!p->record) {
    if (p->ls) save_progress(p);
    return;
  }
  char err[NS_ERRLEN];
  if (mark(a, err) < 0) fprintf(stderr, "normscope: record: %s\n", err);
  if (p->nsteps == 0) {
    fprintf(stderr, "normscope: record: nothing changed; %s not written\n", p->record);
    return;
  }
  size_t cap = 1024, len = 0;
  for (int i = 0; i < p->nsteps; i++) cap += strlen(p->steps[i]);
  char *buf = malloc(cap);
  if (!buf) {
    fprintf(stderr, "normscope: record: out of memory\n");
    return;
  }
  len += (size_t)snprintf(buf + len, cap - len,
                          "-- Recorded with normscope record: replace each step's text with what\n"
                          "-- to look at, and add claims and try-its (lessons/README.md).\n"
                          "lesson{\n  title = \"A recorded lesson\",\n  source = \"\",\n"
                          "  section = \"\",\n  steps = {\n");
  for (int i = 0; i < p->nsteps; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s", p->steps[i]);
  len += (size_t)snprintf(buf + len, cap - len, "  },\n}\n");
  if (ns_file_write_atomic(p->record, buf, len, err) != 0)
    fprintf(stderr, "normscope: record: %s\n", err);
  else
    fprintf(stderr, "normscope: record: %d step%s written to %s\n", p->nsteps,
            p->nsteps == 1 ? "" : "s", p->record);
  free(buf);
}

const char *tui_player_hint(const app *a) {
  if (!a->player) return NULL;
  if (a->player->record) return "M marks a step   q writes the lesson   : Lua   ? keys";
  return "N next  P back  # step  R again  H answer  } more  : Lua  ? keys  q quit";
}
