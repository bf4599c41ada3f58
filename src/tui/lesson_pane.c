/* lesson_pane.c: the lesson player and the recorder of the explorer screen.
 *
 * Player: `normscope lesson X` loads X with the engine (lesson/lesson.h) and shows a pane under
 * the panels: a bar with "step k/n", a marker per step and the title, then the step's text,
 * its try-it, the hints revealed so far, the live verdict, and the step's figure when it
 * goes in the pane. Every step change goes through the engine (one undoable change that
 * puts the step's snapshot in place, so stepping back restores a state bit for bit); the
 * step's focus moves the screen's focus or opens an experiment view, which then fills the
 * panels' region above the pane (as does a figure, view = "figure", or F).
 *
 * Exercises: `=` (or "= EXPR" at the prompt) answers a try.answer or a prediction with any
 * Lua expression evaluated in the prompt's Lua; H reveals the next hint (then applies
 * try.show); V draws the next variant of a step's numbers; R puts the step back.
 *
 * Marks (the bar): ✗ a claim failed, ? a try-it (or a question) not passed, ✓ passed (on
 * the state the learner left it in: going back to the step re-judges it) or, for a step
 * with nothing to do, shown; · not reached. The progress file keeps each try-it that ever
 * passed: `normscope lesson` lists a lesson as done when all did.
 *
 * Layout: the pane takes the rows its text needs and the focused panel (or the view) the
 * rows its numbers need, measured by drawing it into a pad tall enough for everything and
 * finding the least height that shows every line of it, or, for a list longer than
 * TUI_LIST_MIN rows, a window of that many (tui_layout_lesson places them). The focused
 * panel comes first: the pane may shrink to a line of text; its try-it, hints and verdicts
 * then stay on its last rows and the text scrolls above them with } and { (pane_view).
 * --present draws the lesson text and the focused panel alone on the whole screen.
 *
 * Recorder: `normscope record FILE.lua` starts the explorer as usual; M marks a step: the
 * fields that differ from the previous mark (the default state for the first) become that
 * step's `set`, written as dump() writes them (%.17g numbers: bit for bit), with the focus.
 * On the way out a change since the last mark becomes a last step, and the file is written.
 * With --every-change each change (a key, a set{} at the prompt) is a step by itself.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include <lauxlib.h>
#include <lua.h>

#include "explore/file.h"
#include "lesson/lesson.h"
#include "lesson/lesson_progress.h"
#include "lesson/lesson_run.h"
#include "lesson/schema.h"
#include "tui/app.h"
#include "tui/screen.h"

typedef struct tui_player {
  lesson_registry *reg;
  lesson *ls;
  char *path;
  char name[512];
  int k, n;                 /* current step (1-based) and count */
  int *failed;              /* per step: -1 no claims, else the number of claims that failed */
  unsigned char *seen;      /* per step: reached */
  unsigned char *passed;    /* its try passed, the last time it was judged */
  unsigned char *ever;      /* its try passed at some point (the progress file) */
  unsigned char *answered;  /* its try.answer was given right (for the variant shown) */
  unsigned char *predicted; /* its prediction was answered (or skipped) */
  double *prediction;       /* the answer given (NAN: skipped) */
  int *hints;               /* hints revealed */
  char hint_text[8][512];   /* the current step's hints revealed, as computed when revealed */
  int hint_have;            /* how many of them are computed */
  int *variant;             /* the variant shown (0: the step's own numbers) */
  int asking;               /* the step shows its question; its set is not applied yet */
  int try_live;             /* the check on the live state: 1 done, 0 not, -1 none */
  char hint[256];           /* the check's hint */
  char note[400];           /* the last answer's verdict, or the prediction's truth */
  int note_good;
  char *fig;        /* the step's figure at the live state, or NULL */
  char figerr[300]; /* why it is not there */
  int fig_open;     /* the step's figure fills the panels' region (view = "figure", F) */
  int scroll;       /* first line of the pane's text shown */
  int playing;
  int waiting;          /* autoplay stopped at a try-it */
  int end_offer;        /* at the last step, n was pressed once: again opens the next lesson */
  int live;             /* the screen is up: progress is worth keeping from now on */
  double next_at;       /* autoplay: when the next step comes (monotonic seconds) */
  tui_lesson_need need; /* what the last layout was made for */
  int need_pane;
  lesson_progress prog;
  /* recording */
  const char *record;
  ns_state last; /* the state at the last mark */
  int have_last;
  char **steps; /* each marked step's Lua text */
  int nsteps;
} tui_player;

static int mark(app *a, char *err);       /* recording: the state now as a step */
static unsigned reveal(app *a, double v); /* a prediction's truth */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int lesson_open(const app *a) {
  return a->player && a->player->ls;
}

/* ---- marks and progress ---- */

/* Step k is something to do: a try-it, or a question to answer. */
static int has_task(const tui_player *p, int k) {
  return lesson_step_is_try(p->ls, k) || lesson_step_question(p->ls, k);
}

/* Whether step k's task is done: its check (on the state last judged) and its answer, or
 * its question answered. */
static int task_done(const tui_player *p, int k) {
  const lesson *ls = p->ls;
  if (lesson_step_question(ls, k) && !p->predicted[k - 1]) return 0;
  if (!lesson_step_is_try(ls, k)) return 1;
  if (lesson_step_has_check(ls, k) && !p->passed[k - 1]) return 0;
  if (lesson_step_has_answer(ls, k) && !p->answered[k - 1]) return 0;
  return 1;
}

static void note_done(tui_player *p, int k) {
  if (has_task(p, k) && task_done(p, k)) p->ever[k - 1] = 1;
}

static void save_progress(tui_player *p) {
  char err[NS_ERRLEN];
  if (!p->ls || !p->live) return;
  char *tries = malloc((size_t)p->n + 1);
  if (!tries) return;
  for (int k = 1; k <= p->n; k++) tries[k - 1] = !has_task(p, k) ? '.' : p->ever[k - 1] ? '+' : '-';
  tries[p->n] = 0;
  int rc = lesson_progress_note_tries(&p->prog, p->name, p->k, p->n, tries);
  free(tries);
  if (rc == 0) (void)lesson_progress_save(&p->prog, err); /* best effort: a read-only home plays */
}

/* The current step's try verdict on the screen's state. */
static void live_check(app *a) {
  tui_player *p = a->player;
  char err[LESSON_ERRLEN];
  p->hint[0] = 0;
  p->try_live = -1;
  if (!p->ls || p->asking || !lesson_step_has_check(p->ls, p->k)) return;
  int r = lesson_check_try(p->ls, p->k, &a->st, p->hint, sizeof p->hint, err);
  if (r < 0) {
    snprintf(p->hint, sizeof p->hint, "%.200s", err);
    r = 0;
  }
  p->try_live = r;
  p->passed[p->k - 1] = r == 1;
  note_done(p, p->k);
}

/* The step's figure at the screen's state (NULL without one). */
static void make_figure(app *a) {
  tui_player *p = a->player;
  free(p->fig);
  p->fig = NULL;
  p->figerr[0] = 0;
  if (!lesson_step_has_figure(p->ls, p->k) || p->asking) return;
  char err[LESSON_ERRLEN];
  if (lesson_figure(p->ls, p->k, &a->st, &p->fig, err) != 0)
    snprintf(p->figerr, sizeof p->figerr, "the figure: %.280s", err);
  else if (!p->fig)
    snprintf(p->figerr, sizeof p->figerr, "(the figure needs the plot module)");
}

/* The hints revealed on the current step, computed on the screen's state now (a hint may be
 * a function of it: the numbers of a variant). */
static void make_hints(app *a) {
  tui_player *p = a->player;
  int k = p->k, shown = p->hints[k - 1];
  char err[LESSON_ERRLEN];
  p->hint_have = 0;
  for (int i = 1; i <= shown && i <= 8; i++) {
    if (lesson_hint(p->ls, k, i, &a->st, p->hint_text[i - 1], sizeof p->hint_text[0], err) != 0)
      snprintf(p->hint_text[i - 1], sizeof p->hint_text[0], "%.500s", err);
    p->hint_have = i;
  }
}

/* ---- going to a step ---- */

/* The experiment view a step's focus names (TUI_XV_NONE: a panel or none). */
static tui_xview focus_view(const char *f) {
  int v = f ? ns_choice_parse(lesson_focus_views, f) : -1;
  return v < 0 ? TUI_XV_NONE : (tui_xview)(TUI_XV_PLACEMENT + v);
}

/* Puts the screen in step k (show: its try's answer) through the engine. */
static unsigned go_step(app *a, int k, int show) {
  tui_player *p = a->player;
  char err[LESSON_ERRLEN];
  if (k < 1) k = 1;
  if (k > p->n) k = p->n;
  int asking = !show && lesson_step_question(p->ls, k) && !p->predicted[k - 1];
  int rc = show     ? lesson_apply_show(p->ls, k, &a->st, &a->hist, err)
           : asking ? lesson_apply_before(p->ls, k, &a->st, &a->hist, err)
                    : lesson_apply(p->ls, k, &a->st, &a->hist, err);
  if (rc != 0) return tui_say(a, PLOT_S_MARK, "%s", err);
  if (k != p->k) {
    p->scroll = 0;
    p->note[0] = 0;
    p->end_offer = 0;
  }
  if (!show) p->variant[k - 1] = 0;
  p->k = k;
  p->asking = asking;
  p->seen[k - 1] = 1;
  const char *f = lesson_step_focus(p->ls, k);
  int fp = f ? ns_choice_parse(tui_panel_names, f) : -1;
  if (fp >= 0) {
    a->view.focus = (tui_panel)fp;
    if (tui_panel_tabbed((tui_panel)fp)) a->tab = (tui_panel)fp;
  }
  a->xview = focus_view(f);
  if (a->xview == TUI_XV_STACK) tui_stack_start(&a->stack);
  a->xfigure = 0;
  const char *view = lesson_step_view(p->ls, k);
  int figure_view = view && strcmp(view, "figure") == 0 && !asking;
  p->fig_open = figure_view && lesson_step_has_figure(p->ls, k);
  a->figure_open = figure_view && !lesson_step_has_figure(p->ls, k);
  a->view.cursor_row = a->view.cursor_col = 0; /* the matrix may have a new shape */
  a->changed = 1;
  p->next_at = now_s() + a->opt.autoplay;
  p->waiting = 0;
  p->hint_have = 0; /* computed again on the new state (tui_player_changed) */
  free(p->fig);     /* made again on the new state, once it is computed (tui_player_changed) */
  p->fig = NULL;
  p->figerr[0] = 0;
  save_progress(p);
  return TUI_R_RECOMPUTE | TUI_R_RELAYOUT;
}

static void count_claim(void *ud, const lesson_claim *c) {
  (void)ud;
  (void)c; /* lesson_claims returns the failures; the verdicts are not printed here */
}

static void free_lesson(tui_player *p) {
  lesson_free(p->ls);
  p->ls = NULL;
  free(p->path);
  free(p->failed);
  free(p->seen);
  free(p->passed);
  free(p->ever);
  free(p->answered);
  free(p->predicted);
  free(p->prediction);
  free(p->hints);
  free(p->variant);
  free(p->fig);
  p->path = NULL;
  p->failed = p->hints = p->variant = NULL;
  p->seen = p->passed = p->ever = p->answered = p->predicted = NULL;
  p->prediction = NULL;
  p->fig = NULL;
}

/* Loads the lesson at path into p (the one open before is freed first). 0, or -1 with err. */
static int load_lesson(tui_player *p, const char *path, char *err) {
  free_lesson(p);
  lesson_options lo;
  lesson_options_init(&lo);
  lo.registry = p->reg;
  lo.panels = tui_panel_names;
  lo.on_claim = count_claim;
  p->ls = lesson_load(path, &lo, err);
  if (!p->ls) return -1;
  p->path = malloc(strlen(path) + 1);
  if (p->path) strcpy(p->path, path);
  int n = p->n = lesson_nsteps(p->ls);
  p->failed = calloc((size_t)n, sizeof *p->failed);
  p->hints = calloc((size_t)n, sizeof *p->hints);
  p->variant = calloc((size_t)n, sizeof *p->variant);
  p->prediction = calloc((size_t)n, sizeof *p->prediction);
  unsigned char **flags[] = {&p->seen, &p->passed, &p->ever, &p->answered, &p->predicted};
  int oom = !p->path || !p->failed || !p->hints || !p->variant || !p->prediction;
  for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
    oom |= !(*flags[i] = calloc((size_t)n, 1));
  if (oom) {
    snprintf(err, LESSON_ERRLEN, "out of memory");
    return -1;
  }
  for (int k = 1; k <= n; k++) { /* the markers: each step's claims at its own state */
    p->failed[k - 1] = -1;
    if (!lesson_step_has_claims(p->ls, k)) continue;
    int f = lesson_claims(p->ls, k, err);
    if (f < 0) return -1;
    p->failed[k - 1] = f;
  }
  lesson_progress_name(path, p->name, sizeof p->name);
  const lesson_progress_row *r = lesson_progress_find(&p->prog, p->name);
  if (r && r->nsteps == n && r->tries) /* the try-its passed before stay passed */
    for (int k = 0; k < n; k++) p->ever[k] = r->tries[k] == '+';
  p->k = 0;
  p->asking = 0;
  return 0;
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
  lesson_progress_load(&p->prog);
  if (load_lesson(p, o->lesson, err) != 0) {
    fprintf(stderr, "normscope: %s\n", err);
    return -1;
  }
  p->playing = o->autoplay > 0;
  int k = o->lesson_step > 0 ? o->lesson_step : 1;
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
  free_lesson(p);
  lesson_registry_free(p->reg);
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

int tui_player_lesson_open(const app *a) {
  return lesson_open(a);
}

/* ---- text ---- */

typedef struct {
  const char *s;
  int len;   /* bytes */
  int style; /* plot style */
} line;

#define MAXLINES 512

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

/* Lines of text as they are (a figure), clipped later to the width. */
static int verbatim(const char *text, int style, line *out, int n, int max) {
  const char *p = text, *end = text + strlen(text);
  while (end > p && end[-1] == '\n') end--;
  while (p < end && n < max) {
    const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
    out[n++] = (line){p, (int)(le - p), style};
    p = nl ? nl + 1 : end;
  }
  return n;
}

/* The step's marker: ✗ a claim failed, ? a task not done, ✓ done or (nothing to do) shown,
 * · not reached. */
static const char *marker(const tui_player *p, int k, int ascii) {
  int f = p->failed[k - 1];
  if (f > 0) return ascii ? "x" : "\xe2\x9c\x97";
  if (has_task(p, k)) return task_done(p, k) ? (ascii ? "+" : "\xe2\x9c\x93") : "?";
  if (p->seen[k - 1]) return ascii ? "+" : "\xe2\x9c\x93";
  return ascii ? "." : "\xc2\xb7";
}

/* The bar: "step k/n", the markers (the current one reversed) and the title. */
static void draw_bar(const app *a, WINDOW *w, int y, int width) {
  const tui_player *p = a->player;
  wattrset(w, tui_attr(PLOT_S_TITLE) | A_REVERSE | A_BOLD);
  mvwhline(w, y, 0, ' ', width);
  char head[160];
  int autop = a->opt.autoplay > 0;
  snprintf(head, sizeof head, " step %d/%d%s ", p->k, p->n,
           !autop       ? ""
           : p->waiting ? " (waits: try it)"
           : p->playing ? " (playing)"
                        : " (paused)");
  mvwaddstr(w, y, 1, head);
  int x = 1 + (int)strlen(head);
  for (int k = 1; k <= p->n && x < width - 2; k++, x += 2) {
    wattrset(w,
             tui_attr(k == p->k ? PLOT_S_FOCUS : PLOT_S_TITLE) | (k == p->k ? A_BOLD : A_REVERSE));
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

/* The pane's lines, in order: the step's text (or, while it asks, its question and
 * choices), its try-it, the hints revealed, the verdict, then the figure when it goes in
 * the pane. *task: where the try-it starts; *figline: where the figure starts (n: none). */
typedef struct {
  line ln[MAXLINES];
  int n, task, fig;
  /* one text each: the question or the step's text, its instruction or the try-it, the
     hints, the verdict, the variant line (step_lines takes them in turn, at most 5) */
  char buf[6][8192];
} pane_text;

static void step_lines(const app *a, int width, pane_text *t) {
  const tui_player *p = a->player;
  const lesson *ls = p->ls;
  int k = p->k, n = 0, nb = 0;
  char *b;
  if (p->asking) {
    b = t->buf[nb++];
    char join[4096];
    size_t len = (size_t)snprintf(b, sizeof t->buf[0], "Predict first: %s",
                                  reflow(lesson_step_question(ls, k), join, sizeof join));
    for (int i = 1; i <= lesson_step_nchoices(ls, k) && len < sizeof t->buf[0]; i++)
      len += (size_t)snprintf(b + len, sizeof t->buf[0] - len, "\n  %d) %s", i,
                              lesson_step_choice(ls, k, i));
    n = wrap(b, width, PLOT_S_POS, t->ln, 0, MAXLINES - 8);
    t->task = n;
    b = t->buf[nb++];
    snprintf(b, sizeof t->buf[0],
             "%s, Enter records it; then the screen shows what happens (n skips)",
             lesson_step_nchoices(ls, k) ? "= and a choice's number" : "= and your number");
    n = wrap(b, width, PLOT_S_DIM, t->ln, n, MAXLINES - 4);
  } else {
    n = wrap(reflow(lesson_step_text(ls, k), t->buf[nb++], sizeof t->buf[0]), width, PLOT_S_TEXT,
             t->ln, 0, MAXLINES - 16);
    t->task = n;
    const char *tt = lesson_step_try_text(ls, k);
    if (tt) { /* no blank line before it: at 80x24 a row is worth more than the air */
      char join[4096];
      b = t->buf[nb++];
      snprintf(b, sizeof t->buf[0], "Try it: %s", reflow(tt, join, sizeof join));
      n = wrap(b, width, PLOT_S_POS, t->ln, n, MAXLINES - 12);
    }
    /* the hints revealed so far, one per line group */
    int nh = lesson_step_nhints(ls, k), shown = p->hints[k - 1];
    if (shown > 0) {
      b = t->buf[nb++];
      size_t len = 0;
      for (int i = 1; i <= shown && i <= nh && len < sizeof t->buf[0]; i++)
        len += (size_t)snprintf(b + len, sizeof t->buf[0] - len, "%sHint %d/%d%s: %s",
                                i > 1 ? "\n" : "", i, nh, i == nh ? " (the answer)" : "",
                                i <= p->hint_have ? p->hint_text[i - 1] : "");
      n = wrap(b, width, PLOT_S_DIM, t->ln, n, MAXLINES - 8);
    }
  }
  /* the verdicts: the last answer's (or the prediction's truth), then the check's */
  if (p->note[0])
    n = wrap(p->note, width, p->note_good ? PLOT_S_POS : PLOT_S_MARK, t->ln, n, MAXLINES - 6);
  b = t->buf[nb++];
  b[0] = 0;
  if (!p->asking && lesson_step_is_try(ls, k)) {
    int more = lesson_step_nhints(ls, k) > p->hints[k - 1] || lesson_step_show_state(ls, k);
    const char *ok = a->opt.ascii ? "+" : "\xe2\x9c\x93";
    if (task_done(p, k))
      snprintf(b, sizeof t->buf[0], "%s done: that is it", ok);
    else if (lesson_step_has_check(ls, k) && p->try_live == 0)
      snprintf(b, sizeof t->buf[0], "? not yet: %s%s", p->hint, more ? "  (H: a hint)" : "");
    else if (lesson_step_has_answer(ls, k))
      snprintf(b, sizeof t->buf[0], "? type = and your number, then Enter%s",
               more ? "  (H: a hint)" : "");
  }
  if (b[0]) n = wrap(b, width, task_done(p, k) ? PLOT_S_POS : PLOT_S_MARK, t->ln, n, MAXLINES - 4);
  if (lesson_step_has_variant(ls, k) && !p->asking) {
    b = t->buf[nb++];
    if (p->variant[k - 1])
      snprintf(b, sizeof t->buf[0], "variant %d of the numbers (V another, R the step's own)",
               p->variant[k - 1]);
    else
      snprintf(b, sizeof t->buf[0], "V: another variant of these numbers");
    n = wrap(b, width, PLOT_S_DIM, t->ln, n, MAXLINES - 3);
  }
  t->fig = n;
  if (!p->fig_open && !p->asking) { /* the figure in the pane */
    if (p->fig) {
      t->ln[n++] = (line){"", 0, PLOT_S_TEXT};
      n = verbatim(p->fig, PLOT_S_TEXT, t->ln, n, MAXLINES);
    } else if (p->figerr[0])
      n = wrap(p->figerr, width, PLOT_S_DIM, t->ln, n, MAXLINES);
  }
  t->n = n;
}

/* Which of the pane's lines stand on its rows (idx[i] for row i, -1 for none), from line
 * *scroll (clamped here) of what scrolls. When everything up to the verdict fits, the lines
 * go in order and only a figure after them scrolls. Else the try-it, hints and verdicts
 * stay on the pane's last rows (the instruction always above its verdict, always seen)
 * and the step's text (then the figure) scrolls above them. *more: lines below the window
 * (the bar says "} more"), *back: lines above it. Returns the rows of the window that
 * scrolls (the step for } and {). */
static int pane_view(const pane_text *t, int rows, int *scroll, int *idx, int *more, int *back) {
  int tl = t->fig - t->task, pinned = t->fig > rows && tl < rows;
  int m = pinned ? t->task + (t->n - t->fig) : t->n, sr = pinned ? rows - tl : rows;
  if (*scroll > m - sr) *scroll = m - sr;
  if (*scroll < 0) *scroll = 0;
  for (int i = 0; i < rows; i++) {
    int j = *scroll + i;
    if (i >= sr) /* the pinned task lines */
      idx[i] = t->task + (i - sr);
    else if (j >= m)
      idx[i] = -1;
    else
      idx[i] = pinned && j >= t->task ? t->fig + (j - t->task) : j;
  }
  *more = *scroll + sr < m;
  *back = *scroll > 0;
  return sr;
}

/* ---- layout ---- */

/* The inside of a window, row by row, trimmed: the text a draw left there. */
#define MEASURE_H 100
#define MEASURE_W 400
typedef struct {
  wchar_t row[MEASURE_H][MEASURE_W + 1];
  int n;
} window_text;

static void read_rows(WINDOW *w, window_text *t) {
  int h = getmaxy(w), width = getmaxx(w);
  if (width > MEASURE_W) width = MEASURE_W;
  t->n = 0;
  for (int y = 1; y < h - 1 && t->n < MEASURE_H; y++) {
    wchar_t *r = t->row[t->n];
    if (mvwinnwstr(w, y, 0, r, width) == ERR) r[0] = 0;
    size_t l = wcslen(r);
    while (l > 0 && (r[l - 1] == L' ' || r[l - 1] == 0x2502 || r[l - 1] == L'|')) l--;
    r[l] = 0;
    /* an empty line inside the frame is the frame's edge alone */
    if (l <= 1) continue;
    t->n++;
  }
}

typedef void (*region_draw)(app *a, WINDOW *w, const tui_view *v, int which);

static void draw_panel_into(app *a, WINDOW *w, const tui_view *v, int which) {
  tui_panels[which].draw(&a->st, &a->res, w, v);
}

static void draw_view_into(app *a, WINDOW *w, const tui_view *v, int which) {
  (void)which;
  tui_draw_region_view(a, w, v);
}

/* Whether two renders show the same lines. */
static int same_rows(const window_text *x, const window_text *y) {
  if (x->n != y->n) return 0;
  for (int i = 0; i < x->n; i++)
    if (wcscmp(x->row[i], y->row[i]) != 0) return 0;
  return 1;
}

/* A list longer than the screen scrolls: a panel that shows a window of at least
 * TUI_LIST_MIN of its rows, and says which ("rows 3-10/300"), has what a step needs of it
 * (the lines under the list are drawn once it has that many). 1 when t shows such a window. */
static int shows_window(const window_text *t) {
  for (int i = 0; i < t->n; i++) {
    const wchar_t *r = wcsstr(t->row[i], L"rows ");
    unsigned a, b, n;
    if (r && swscanf(r + 5, L"%u-%u/%u", &a, &b, &n) == 3 && b >= a && n > b &&
        b - a + 1 >= TUI_LIST_MIN)
      return 1;
  }
  return 0;
}

static void render(app *a, region_draw draw, int which, int w, int h, const tui_view *v,
                   window_text *t) {
  t->n = 0;
  WINDOW *pad = newpad(h, w);
  if (!pad) return;
  draw(a, pad, v, which);
  read_rows(pad, t);
  delwin(pad);
}

/* The rows (frame included) a region needs at width w: the fewest from which two more rows
 * change nothing it shows. A region keeps showing more as it gets rows (list entries, a
 * matrix's rows, the lines under them) until what it has is all there; what it draws only
 * with rows to spare (the spectrum's J when several rows are free) does not count. A list
 * too long for the screen (more than TUI_LIST_MIN rows) needs a window of TUI_LIST_MIN of
 * them, the panel saying which it lists (shows_window): fewer rows cut it.
 * MEASURE_H when it never settles (a figure drawn to the window's size). */
static int measure(app *a, region_draw draw, int which, int w) {
  /* the result must be the state's: a panel drawn from a stale one reads the wrong shapes */
  if (!a->have_res || a->changed || w < 8) return TUI_PANEL_MIN_H;
  static window_text t[3];
  tui_view v = {0};
  v.vs = &a->view;
  v.ascii = a->opt.ascii;
  v.colors = a->colors;
  v.small = a->lay.small;
  v.focused = 1;
  int h = TUI_PANEL_MIN_H;
  render(a, draw, which, w, h, &v, &t[0]);
  render(a, draw, which, w, h + 1, &v, &t[1]);
  for (; h + 2 < MEASURE_H; h++) {
    render(a, draw, which, w, h + 2, &v, &t[(h + 2) % 3]);
    if (same_rows(&t[h % 3], &t[(h + 1) % 3]) && same_rows(&t[h % 3], &t[(h + 2) % 3])) return h;
    if (shows_window(&t[h % 3])) return h;
  }
  return MEASURE_H;
}

static int need_at(void *ud, tui_panel p, int w) {
  return measure(ud, draw_panel_into, (int)p, w);
}

/* The panels' region shows a view (an experiment view, a panel's figure, the step's). */
static int region_is_view(const app *a) {
  return a->xview || a->figure_open || (a->player && a->player->fig_open && a->player->fig);
}

/* The rows of the step's figure in a frame. */
static int figure_rows(const char *fig) {
  int n = 0;
  for (const char *c = fig; *c; c++) n += *c == '\n';
  return n + 1 + 2;
}

/* The pane's rows at width w (the bar, the text, the try-it and verdicts, the figure in the
 * pane: *extra of them), and the fewest it may have (*min: the bar, a line of text, the
 * try-it and the verdicts). */
static int pane_rows(app *a, int w, int *min, int *extra) {
  static pane_text t;
  step_lines(a, w - 2, &t);
  int rest = t.fig - t.task; /* the try-it, hints and verdicts: always shown */
  *min = 1 + rest + (t.task < 1 ? t.task : 1);
  if (extra) *extra = t.n - t.fig;
  return 1 + t.n;
}

static int pane_at(void *ud, int w, int *min) {
  int extra;
  return pane_rows(ud, w, min, &extra) - extra;
}

/* What the step needs of the screen now (the pane's rows at the screen's width). Until the
 * result is the state's (a->changed), what the last layout was made for. */
static void step_need(app *a, tui_lesson_need *n) {
  tui_player *p = a->player;
  if (a->changed && n != &p->need) {
    *n = p->need;
    return;
  }
  memset(n, 0, sizeof *n);
  n->focus = a->view.focus;
  n->view = region_is_view(a);
  n->ud = a;
  n->pane_want = pane_rows(a, COLS, &n->pane_min, &n->pane_extra);
  n->pane_at = pane_at;
  if (p->fig_open && p->fig)
    n->region_need = figure_rows(p->fig);
  else if (a->figure_open)
    n->region_need = 12;
  else if (a->xview)
    n->region_need = measure(a, draw_view_into, 0, COLS);
  else {
    n->need_at = need_at;
    n->region_need = measure(a, draw_panel_into, (int)n->focus, COLS);
  }
}

void tui_player_layout(app *a, tui_layout *L, tui_rect *pane, tui_rect *view) {
  memset(pane, 0, sizeof *pane);
  memset(view, 0, sizeof *view);
  if (!a->player || L->too_small || tui_player_presenting(a)) return;
  tui_player *p = a->player;
  if (p->record) { /* a bar and a line under the panels */
    int end = L->scrollback.h == 1 ? L->scrollback.y : L->prompt.y;
    for (int q = 0; q < TUI_PANEL_COUNT; q++) {
      tui_rect *r = &L->panel[q];
      if (r->h > 0 && r->y + r->h > end - 2) r->h = end - 2 - r->y;
      if (r->h < TUI_PANEL_MIN_H) r->h = 0;
    }
    *pane = (tui_rect){end - 2, 0, 2, L->cols};
    return;
  }
  step_need(a, &p->need);
  tui_layout_lesson(L, &p->need, pane, view);
  p->need_pane = pane->h;
}

int tui_player_layout_stale(app *a) {
  tui_player *p = a->player;
  if (!lesson_open(a) || tui_player_presenting(a) || a->lay.too_small) return 0;
  tui_lesson_need n;
  step_need(a, &n);
  return n.focus != p->need.focus || n.view != p->need.view ||
         n.region_need != p->need.region_need || n.pane_want != p->need.pane_want ||
         n.pane_min != p->need.pane_min;
}

int tui_player_fits(app *a, char *why, size_t len) {
  why[0] = 0;
  if (!lesson_open(a) || !a->lwin) return 1;
  static pane_text t;
  step_lines(a, getmaxx(a->lwin) - 2, &t);
  int rows = getmaxy(a->lwin) - 1;
  if (t.fig <= rows) return 1;
  int tl = t.fig - t.task;
  if (tl >= rows) {
    snprintf(why, len, "the try-it and its verdict need %d rows, the pane has %d", tl, rows);
    return 0;
  }
  /* the text scrolls above the try-it: the bar must say so, and the try-it's first line
   * must stand on the row above its verdicts (read back from the screen) */
  wchar_t bar[512], got[64];
  int W = getmaxx(a->lwin) < 511 ? getmaxx(a->lwin) : 511;
  if (mvwinnwstr(a->lwin, 0, 0, bar, W) == ERR) bar[0] = 0;
  int sr = rows - tl, ok = 1;
  const line *l = &t.ln[t.task];
  int k = 0;
  if (mvwinnwstr(a->lwin, 1 + sr, 1, got, 63) == ERR) got[0] = 0;
  for (; tl > 0 && k < l->len && k < 12 && (unsigned char)l->s[k] < 0x80; k++)
    if (got[k] != (wchar_t)(unsigned char)l->s[k]) ok = 0;
  if (!wcsstr(bar, L"} more")) {
    snprintf(why, len, "the step's text needs %d rows, the pane has %d, and no \"} more\" says so",
             t.fig, rows);
    return 0;
  }
  if (!ok) {
    snprintf(why, len, "the text scrolls, but the try-it is not on the pane's row %d", 1 + sr);
    return 0;
  }
  snprintf(why, len,
           "scrolls: the step's text and try-it need %d rows, the pane has %d at width %d (} more)",
           t.fig, rows, getmaxx(a->lwin) - 2);
  return 2;
}

int tui_player_frame_problems(app *a, char *out, size_t len) {
  tui_player *p = a->player;
  size_t n = 0;
  int bad = 0;
  out[0] = 0;
  if (!lesson_open(a)) return 0;
#define SAY(...)                                                                                   \
  do {                                                                                             \
    bad++;                                                                                         \
    if (n < len) n += (size_t)snprintf(out + n, len - n, __VA_ARGS__);                             \
  } while (0)
  if (region_is_view(a)) {
    int need = p->fig_open && p->fig ? figure_rows(p->fig)
               : a->figure_open      ? 12
                                : measure(a, draw_view_into, 0, a->vwin ? getmaxx(a->vwin) : COLS);
    int h = a->vwin ? getmaxy(a->vwin) : 0;
    if (need > h) SAY("; the view is cut (%d of the %d rows it needs)", h, need);
  } else {
    for (int q = 0; q < TUI_PANEL_COUNT; q++) {
      tui_rect r = a->lay.panel[q];
      int focused = q == (int)a->view.focus;
      if (r.h <= 0) {
        if (focused) SAY("; the focused panel (%s) is not shown", tui_panel_names[q]);
        continue;
      }
      int need = measure(a, draw_panel_into, q, r.w);
      if (need > r.h)
        SAY("; %s panel %s is cut (%d of the %d rows it needs at width %d)",
            focused ? "the focused" : "the", tui_panel_names[q], r.h, need, r.w);
    }
  }
  char why[200];
  int fits = tui_player_fits(a, why, sizeof why);
  if (!fits) SAY("; %s", why);
  if (fits == 2 && n < len) /* not a problem: the pane says how to see the rest */
    n += (size_t)snprintf(out + n, len - n, "; %s", why);
#undef SAY
  return bad;
}

int tui_player_dump_steps(app *a, int *asking) {
  tui_player *p = a->player;
  *asking = lesson_open(a) && p->asking;
  return lesson_open(a) ? p->n : 0;
}

unsigned tui_player_dump_reveal(app *a) {
  if (!lesson_open(a) || !a->player->asking) return 0;
  return reveal(a, NAN) | TUI_R_RELAYOUT;
}

/* ---- drawing ---- */

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
  static pane_text t;
  step_lines(a, W - 2, &t);
  int rows = H - 1, more, back;
  static int idx[MAXLINES];
  if (rows > MAXLINES) rows = MAXLINES;
  pane_view(&t, rows, &p->scroll, idx, &more, &back);
  for (int i = 0; i < rows; i++) {
    if (idx[i] < 0) continue;
    const line *l = &t.ln[idx[i]];
    wattrset(w, tui_attr(l->style));
    mvwaddnstr(w, 1 + i, 1, l->s, l->len);
  }
  if (more || back) { /* more text than rows: say how to see it */
    wattrset(w, tui_attr(PLOT_S_POS) | A_BOLD);
    mvwaddstr(w, 0, W - 9, more ? " } more " : " { back ");
  }
  wattrset(w, A_NORMAL);
  wnoutrefresh(w);
}

/* The step's figure in a frame, from its first line (the view region). */
static void draw_step_figure(app *a, WINDOW *w, const tui_view *v) {
  tui_player *p = a->player;
  char title[96];
  snprintf(title, sizeof title, "Figure of step %d  (F or Esc closes)", p->k);
  tui_view fv = *v;
  fv.focused = 1;
  tui_frame(w, title, &fv);
  static line ln[MAXLINES];
  int n = verbatim(p->fig, PLOT_S_TEXT, ln, 0, MAXLINES);
  int ih = getmaxy(w) - 2, iw = getmaxx(w) - 2;
  wattrset(w, tui_attr(PLOT_S_TEXT));
  for (int i = 0; i < n && i < ih; i++) {
    int len = ln[i].len, c = 0, cut = 0;
    for (; cut < len && c < iw; cut++) /* clip at iw columns, never inside a character */
      if (((unsigned char)ln[i].s[cut] & 0xC0) != 0x80) c++;
    while (cut < len && ((unsigned char)ln[i].s[cut] & 0xC0) == 0x80) cut++;
    mvwaddnstr(w, 1 + i, 1, ln[i].s, cut);
  }
  wattrset(w, A_NORMAL);
}

void tui_draw_region_view(app *a, WINDOW *w, const tui_view *v) {
  if (a->player && a->player->fig_open && a->player->fig)
    draw_step_figure(a, w, v);
  else if (a->figure_open && !a->xview)
    tui_draw_figure(&a->st, &a->res, w, v);
  else
    tui_draw_xview_in(a, w, v);
}

int tui_player_draw_view(app *a, const tui_view *v) {
  if (!lesson_open(a) || !a->vwin || !region_is_view(a)) return 0;
  werase(a->vwin);
  tui_view xv = *v;
  xv.focused = 1;
  tui_draw_region_view(a, a->vwin, &xv);
  wnoutrefresh(a->vwin);
  return 1;
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
  static pane_text t;
  step_lines(a, W - 6, &t);
  int n = t.fig; /* the figure goes in the panel's place below */
  /* the text takes what it needs, up to half the screen; the panel the rest */
  int maxrows = (H - 2) / 2, rows = n < maxrows ? n : maxrows;
  if (p->scroll > n - rows) p->scroll = n - rows;
  if (p->scroll < 0) p->scroll = 0;
  for (int i = 0; i < rows && p->scroll + i < n; i++) {
    const line *l = &t.ln[p->scroll + i];
    wattrset(w, tui_attr(l->style) | A_BOLD);
    mvwaddnstr(w, 1 + i, 3, l->s, l->len);
  }
  if (p->scroll + rows < n) {
    wattrset(w, tui_attr(PLOT_S_POS) | A_BOLD);
    mvwaddstr(w, 0, W - 9, " } more ");
  }
  int y = 1 + rows;
  char edit[128] = "";
  if (a->editing == EDIT_ANSWER || a->editing == EDIT_STEP) /* the prompt line's place */
    snprintf(edit, sizeof edit, "%s%s_   (Enter, Esc cancels)",
             a->editing == EDIT_ANSWER ? "answer = " : "go to step ", a->edit);
  wattrset(w, tui_attr(edit[0] ? PLOT_S_FOCUS : PLOT_S_DIM));
  mvwaddnstr(w, H - 1, 1,
             edit[0]     ? edit
             : a->msg[0] ? a->msg
                         : "n next  p back  # step  R again  H hint  = answer  q quit",
             W - 2);
  wattrset(w, A_NORMAL);
  wnoutrefresh(w);
  int ph = H - 1 - y;
  if (ph >= 5) { /* the focused panel (or the step's view), as wide as the screen */
    WINDOW *pw = newwin(ph, W, y, 0);
    if (pw) {
      tui_view pv = *v;
      pv.focused = 1;
      pv.small = 0;
      if (a->have_res) {
        if (region_is_view(a) || (p->fig && !p->asking)) {
          int fo = p->fig_open;
          p->fig_open = p->fig != NULL; /* present: the figure takes the panel's place */
          tui_draw_region_view(a, pw, &pv);
          p->fig_open = fo;
        } else
          draw_panel_into(a, pw, &pv, (int)a->view.focus);
      }
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
  tui_player *p = a->player;
  if (p->ls) {
    int was = task_done(p, p->k);
    live_check(a);
    make_figure(a);
    make_hints(a);
    if (!was && task_done(p, p->k)) {
      save_progress(p);
      if (p->waiting) { /* autoplay goes on once the try-it passed */
        p->waiting = 0;
        p->next_at = now_s() + a->opt.autoplay;
      }
    }
  }
  char err[NS_ERRLEN];
  if (p->record && a->opt.record_each && mark(a, err) < 0)
    tui_say(a, PLOT_S_MARK, "cannot record: %s", err);
}

/* ---- answers ---- */

/* "off by 0.2 (1.5 %)" */
static void off_by(double got, double want, char *buf, size_t len) {
  char d[32];
  double diff = got - want;
  if (want != 0)
    snprintf(buf, len, "%s by %s (%.2g %%)", diff > 0 ? "too high" : "too low",
             tui_num(fabs(diff), d, sizeof d), 100 * fabs(diff / want));
  else
    snprintf(buf, len, "%s by %s", diff > 0 ? "too high" : "too low",
             tui_num(fabs(diff), d, sizeof d));
}

/* Reveals the truth of a prediction answered with v (NAN: skipped): applies the step. */
static unsigned reveal(app *a, double v) {
  tui_player *p = a->player;
  int k = p->k;
  p->predicted[k - 1] = 1;
  p->prediction[k - 1] = v;
  p->asking = 0;
  unsigned r = go_step(a, k, 0);
  char err[LESSON_ERRLEN], got[64], truth[64];
  double t, tol;
  if (lesson_predict_truth(p->ls, k, &t, &tol, err) != 0) {
    snprintf(p->note, sizeof p->note, "%.390s", err);
    p->note_good = 0;
    return r;
  }
  int nch = lesson_step_nchoices(p->ls, k);
  if (nch)
    snprintf(truth, sizeof truth, "%d) %.50s", (int)t, lesson_step_choice(p->ls, k, (int)t));
  else
    tui_num(t, truth, sizeof truth);
  if (isnan(v)) {
    snprintf(p->note, sizeof p->note, "Not predicted. What happens: %s", truth);
    p->note_good = 1;
    return r;
  }
  int right = nch ? v == t : lesson_judge(v, t, tol);
  if (nch)
    snprintf(got, sizeof got, "%d", (int)v);
  else
    tui_num(v, got, sizeof got);
  snprintf(p->note, sizeof p->note, "You predicted %s. What happens: %s%s", got, truth,
           right ? " (right)" : " (the screen shows why)");
  p->note_good = right;
  save_progress(p);
  return r;
}

unsigned tui_player_answer_value(app *a, double v) {
  tui_player *p = a->player;
  if (!lesson_open(a)) return tui_say(a, PLOT_S_DIM, "no lesson is open");
  int k = p->k;
  if (p->asking) {
    int nch = lesson_step_nchoices(p->ls, k);
    if (nch && (v != floor(v) || v < 1 || v > nch))
      return tui_say(a, PLOT_S_MARK, "pick a choice: = 1 to = %d", nch);
    return reveal(a, v) | TUI_R_RELAYOUT;
  }
  if (!lesson_step_has_answer(p->ls, k))
    return tui_say(a, PLOT_S_DIM, "step %d asks for no number", k);
  char err[LESSON_ERRLEN], want[64], got[64], off[96];
  double val, tol;
  if (lesson_answer(p->ls, k, &a->st, &val, &tol, err) != 0)
    return tui_say(a, PLOT_S_MARK, "%s", err);
  tui_num(v, got, sizeof got);
  if (lesson_judge(v, val, tol)) {
    p->answered[k - 1] = 1;
    tui_num(val, want, sizeof want);
    snprintf(p->note, sizeof p->note, "%s %s is right (%s to %.3g)",
             a->opt.ascii ? "+" : "\xe2\x9c\x93", got, want, tol);
    p->note_good = 1;
    note_done(p, k);
    save_progress(p);
    if (p->waiting && task_done(p, k)) {
      p->waiting = 0;
      p->next_at = now_s() + a->opt.autoplay;
    }
    return TUI_R_RELAYOUT;
  }
  off_by(v, val, off, sizeof off);
  int nh = lesson_step_nhints(p->ls, k);
  /* a wrong answer reveals the next hint, never the last one (the answer: H gives it) */
  if (p->hints[k - 1] < nh - 1) p->hints[k - 1]++;
  make_hints(a);
  snprintf(p->note, sizeof p->note, "%s is %s%s", got, off,
           p->hints[k - 1] > 0 ? "; the hint below may help" : "");
  p->note_good = 0;
  p->answered[k - 1] = 0;
  return TUI_R_RELAYOUT;
}

unsigned tui_player_answer(app *a, const char *expr) {
  if (!lesson_open(a)) return tui_say(a, PLOT_S_DIM, "no lesson is open");
  while (*expr == ' ' || *expr == '=') expr++;
  if (!*expr) return tui_say(a, PLOT_S_DIM, "nothing typed: = and a number (or an expression)");
  lua_State *L = a->L;
  int top = lua_gettop(L);
  lua_pushfstring(L, "return (%s)", expr);
  int st = luaL_loadbuffer(L, lua_tostring(L, -1), lua_rawlen(L, -1), "=answer");
  if (st == LUA_OK) st = lua_pcall(L, 0, 1, 0);
  unsigned r;
  if (st != LUA_OK)
    r = tui_say(a, PLOT_S_MARK, "= %s: %s", expr, lua_tostring(L, -1));
  else if (lua_type(L, -1) != LUA_TNUMBER)
    r = tui_say(a, PLOT_S_MARK, "= %s gives %s, not a number", expr, luaL_typename(L, -1));
  else
    r = tui_player_answer_value(a, lua_tonumber(L, -1));
  lua_settop(L, top);
  return r;
}

const char *tui_player_note(const app *a) {
  return a->player ? a->player->note : "";
}

/* ---- autoplay ---- */

/* Plays the answer of the current step's task: the truth of its question, its answer's
 * value, its try.show. 1 when something was played. */
static int play_answer(app *a) {
  tui_player *p = a->player;
  int k = p->k;
  char err[LESSON_ERRLEN];
  if (p->asking) {
    reveal(a, NAN);
    return 1;
  }
  int played = 0;
  if (lesson_step_show_state(p->ls, k) && !(lesson_step_has_check(p->ls, k) && p->passed[k - 1])) {
    go_step(a, k, 1);
    played = 1;
  }
  if (lesson_step_has_answer(p->ls, k) && !p->answered[k - 1]) {
    double v, tol;
    if (lesson_answer(p->ls, k, &a->st, &v, &tol, err) == 0) {
      p->hints[k - 1] = lesson_step_nhints(p->ls, k);
      make_hints(a);
      tui_player_answer_value(a, v);
    }
    played = 1;
  }
  return played;
}

unsigned tui_player_tick(app *a) {
  tui_player *p = a->player;
  if (!p || !p->ls || !p->playing || p->waiting || now_s() < p->next_at) return TUI_R_NONE;
  if (has_task(p, p->k) && !task_done(p, p->k)) {
    if (a->opt.show_answers && play_answer(a)) {
      p->next_at = now_s() + a->opt.autoplay;
      return TUI_R_RECOMPUTE | TUI_R_RELAYOUT |
             tui_say(a, PLOT_S_DIM, "the answer of step %d (--show-answers)", p->k);
    }
    if (!a->opt.show_answers) {
      p->waiting = 1;
      return tui_say(a, PLOT_S_DIM, "autoplay waits at step %d: do the try-it (n goes on)", p->k);
    }
  }
  if (p->k >= p->n) {
    p->playing = 0;
    return tui_say(a, PLOT_S_DIM, "the end of the lesson (n opens the next one, q quits)");
  }
  return go_step(a, p->k + 1, 0);
}

/* ---- keys ---- */

static unsigned no_lesson(app *a) {
  return tui_say(a, PLOT_S_DIM, "no lesson is open (normscope lesson NAME plays one)");
}

/* The lesson after the open one in reading order: its path (malloc'd) or NULL. */
static char *next_lesson(const tui_player *p) {
  char err[LESSON_ERRLEN];
  char **paths;
  int n = lesson_list_dir(lesson_dir(), &paths, err);
  char *next = NULL;
  for (int i = 0; i + 1 < n && !next; i++) {
    char nm[512];
    if (strcmp(lesson_progress_name(paths[i], nm, sizeof nm), p->name) == 0) {
      next = malloc(strlen(paths[i + 1]) + 1);
      if (next) strcpy(next, paths[i + 1]);
    }
  }
  if (n > 0) lesson_free_list(paths, n);
  return next;
}

/* At the last step: the first n names the next lesson, the second opens it. */
static unsigned at_end(app *a) {
  tui_player *p = a->player;
  char *next = next_lesson(p);
  if (!next) return tui_say(a, PLOT_S_DIM, "the last step (%d/%d) of the last lesson", p->k, p->n);
  char nm[512];
  lesson_progress_name(next, nm, sizeof nm);
  if (!p->end_offer) {
    p->end_offer = 1;
    free(next);
    return tui_say(a, PLOT_S_POS, "the end of this lesson: n again opens the next one, %s", nm);
  }
  char err[LESSON_ERRLEN];
  save_progress(p);
  int rc = load_lesson(p, next, err);
  free(next);
  if (rc != 0) {
    /* the lesson could not be loaded: the player has none open now */
    tui_say(a, PLOT_S_MARK, "%s", err);
    return TUI_R_RELAYOUT;
  }
  unsigned r = go_step(a, 1, 0);
  return r | tui_say(a, PLOT_S_DIM, "lesson %s", nm);
}

unsigned tui_act_lesson_step(app *a, int which) {
  tui_player *p = a->player;
  if (!p || !p->ls) return no_lesson(a);
  /* which: 0 n, 1 N, 2 Space: forward; 3 p, 4 P back; 5 } 6 { scroll first */
  int fwd = which <= 2 || which == 5;
  if (which == 2 && a->opt.autoplay > 0) return tui_act_lesson_pause(a, 0);
  if (which >= 5 && a->lwin) { /* } { scroll the text first; at its end they step */
    static pane_text t;
    step_lines(a, getmaxx(a->lwin) - 2, &t);
    int rows = getmaxy(a->lwin) - 1, more, back;
    static int idx[MAXLINES];
    if (rows > MAXLINES) rows = MAXLINES;
    int sr = pane_view(&t, rows, &p->scroll, idx, &more, &back);
    if (fwd && more) {
      p->scroll += sr > 1 ? sr - 1 : 1;
      return TUI_R_NONE;
    }
    if (!fwd && back) {
      p->scroll -= sr > 1 ? sr - 1 : 1;
      return TUI_R_NONE;
    }
  }
  if (fwd && p->asking) return reveal(a, NAN) | TUI_R_RELAYOUT;
  if (fwd && p->k >= p->n) return at_end(a);
  if (!fwd && p->k <= 1) return tui_say(a, PLOT_S_DIM, "the first step");
  if (p->waiting && fwd) p->waiting = 0;
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
  int k = p->k, nh = lesson_step_nhints(p->ls, k);
  if (p->asking) return tui_say(a, PLOT_S_DIM, "predict first (= and your answer), or n to skip");
  if (p->hints[k - 1] < nh) {
    p->hints[k - 1]++;
    make_hints(a);
    return TUI_R_RELAYOUT | tui_say(a, PLOT_S_DIM, "hint %d of %d%s", p->hints[k - 1], nh,
                                    p->hints[k - 1] == nh ? ": the answer" : "");
  }
  if (!lesson_step_show_state(p->ls, k))
    return tui_say(a, PLOT_S_DIM,
                   nh ? "every hint is shown" : "step %d has no hint or answer to show", k);
  unsigned r = go_step(a, k, 1);
  return r | tui_say(a, PLOT_S_DIM, "the try's answer (u undoes, R goes back to the step)");
}

unsigned tui_act_lesson_pause(app *a, int which) {
  (void)which;
  tui_player *p = a->player;
  if (!p || !p->ls) return no_lesson(a);
  if (a->opt.autoplay <= 0) return tui_act_lesson_step(a, 0);
  p->playing = !p->playing;
  p->next_at = now_s() + a->opt.autoplay;
  return tui_say(a, PLOT_S_DIM, p->playing ? "playing" : "paused (space plays on)");
}

unsigned tui_act_lesson_answer(app *a, int which) {
  (void)which;
  tui_player *p = a->player;
  if (!p || !p->ls) return no_lesson(a);
  if (!p->asking && !lesson_step_has_answer(p->ls, p->k)) return tui_act_eps_exact(a, 0);
  a->editing = EDIT_ANSWER;
  a->edit[0] = 0;
  return TUI_R_NONE;
}

unsigned tui_act_lesson_variant(app *a, int which) {
  tui_player *p = a->player;
  if (!p || !p->ls) return no_lesson(a);
  int k = p->k;
  (void)which;
  if (!lesson_step_has_variant(p->ls, k) || p->asking) return tui_act_view(a, 2); /* V: the view */
  int seed = p->variant[k - 1] ? p->variant[k - 1] + 1 : 2;
  char err[LESSON_ERRLEN];
  if (lesson_apply_variant(p->ls, k, seed, &a->st, &a->hist, err) != 0)
    return tui_say(a, PLOT_S_MARK, "%s", err);
  p->variant[k - 1] = seed;
  p->answered[k - 1] = 0;
  p->passed[k - 1] = 0;
  p->note[0] = 0;
  p->hints[k - 1] = 0;
  a->changed = 1;
  return TUI_R_RECOMPUTE | TUI_R_RELAYOUT |
         tui_say(a, PLOT_S_DIM, "variant %d: new numbers, the same question (R: the step's own)",
                 seed);
}

unsigned tui_act_lesson_figure(app *a, int which) {
  (void)which;
  tui_player *p = a->player;
  if (!p || !p->ls) return no_lesson(a);
  if (!p->fig)
    return tui_say(a, PLOT_S_DIM, "step %d has no figure (f: the focused panel's)", p->k);
  p->fig_open = !p->fig_open;
  if (p->fig_open) {
    a->xview = TUI_XV_NONE;
    a->figure_open = 0;
  }
  return TUI_R_RELAYOUT;
}

unsigned tui_player_escape(app *a) {
  tui_player *p = a->player;
  if (!lesson_open(a) || !p->fig_open) return 0;
  p->fig_open = 0;
  return TUI_R_RELAYOUT;
}

const char *tui_player_hint(const app *a) {
  static char buf[160];
  if (!a->player) return NULL;
  if (a->player->record) return "M marks a step   q writes the lesson   : Lua   ? keys";
  const tui_player *p = a->player;
  if (!p->ls) return NULL;
  int k = p->k;
  snprintf(buf, sizeof buf,
           "n next  p back%s%s%s%s  R again  # step  } more  : Lua  ? keys  q quit",
           p->asking || lesson_step_has_answer(p->ls, k) ? "  = answer" : "",
           lesson_step_nhints(p->ls, k) || lesson_step_show_state(p->ls, k) ? "  H hint" : "",
           lesson_step_has_variant(p->ls, k) ? "  V variant" : "", p->fig ? "  F figure" : "");
  return buf;
}

/* ---- recording ---- */

/* The state now as a step: the fields that differ from the last mark. 1 added, 0 nothing
 * changed, -1 error (err). */
static int mark(app *a, char *err) {
  tui_player *p = a->player;
  ns_fieldset d = ns_state_diff(&p->last, &a->st);
  if (d & NS_FIELDBIT(NS_F_BATCH)) d |= NS_FIELDBIT(NS_F_BASELINE); /* derived from it */
  if (d & NS_FIELDBIT(NS_F_COMPANION)) d |= NS_FIELDBIT(NS_F_BASELINE);
  if (!d) return 0;
  /* large tensors go beside the lesson, named so its sandbox reads them */
  char *dump = ns_state_dump_lesson(&a->st, p->record, err);
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
  /* the attributes by the lesson format's names (lesson/schema.h); an open experiment view
   * is the step's focus */
  const char *focus =
      a->xview ? lesson_focus_views[a->xview - TUI_XV_PLACEMENT] : tui_panel_names[a->view.focus];
  len += (size_t)snprintf(step + len, cap - len,
                          "    {%s = [[Step %d: say here what to look at.]],\n"
                          "     %s = \"%s\",\n%s     %s = {\n",
                          lesson_attr_name(LESSON_A_STEP_TEXT), p->nsteps + 1,
                          lesson_attr_name(LESSON_A_STEP_FOCUS), focus,
                          a->figure_open ? "     view = \"figure\",\n" : "",
                          lesson_attr_name(LESSON_A_STEP_SET));
  /* x's file names the source: a source recorded beside it would name the recorder's file */
  if (d & NS_FIELDBIT(NS_F_X)) d &= ~NS_FIELDBIT(NS_F_SOURCE);
  for (int f = 0; f < NS_F_COUNT; f++) {
    if (!(d & NS_FIELDBIT(f))) continue;
    size_t l = 0;
    const char *s = ns_dump_field(dump, ns_field_name((ns_field)f), &l);
    if (s && len + l + 8 < cap)
      len += (size_t)snprintf(step + len, cap - len, "    %.*s\n", (int)l, s);
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
  int failed = mark(a, err) < 0;
  if (failed) fprintf(stderr, "normscope: record: %s\n", err);
  if (p->nsteps == 0) {
    fprintf(stderr, "normscope: record: %s; %s not written\n",
            failed ? "no step could be marked" : "nothing changed", p->record);
    return;
  }
  size_t cap = 1024, len = 0;
  for (int i = 0; i < p->nsteps; i++) cap += strlen(p->steps[i]);
  char *buf = malloc(cap);
  if (!buf) {
    fprintf(stderr, "normscope: record: out of memory\n");
    return;
  }
  len += (size_t)snprintf(
      buf + len, cap - len,
      "-- Recorded with normscope record: replace each step's text with what\n"
      "-- to look at, and add claims and try-its (lessons/README.md).\n"
      "lesson{\n  %s = \"A recorded lesson\",\n  %s = \"\",\n"
      "  %s = \"\",\n  %s = {\n",
      lesson_attr_name(LESSON_A_LESSON_TITLE), lesson_attr_name(LESSON_A_LESSON_SOURCE),
      lesson_attr_name(LESSON_A_LESSON_SECTION), lesson_attr_name(LESSON_A_LESSON_STEPS));
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

int tui_player_step(const app *a, int *n) {
  const tui_player *p = a->player;
  if (!p || !p->ls) return 0;
  if (n) *n = p->n;
  return p->k;
}

int tui_player_pane(const app *a, tui_pane_sync *o) {
  const tui_player *p = a->player;
  memset(o, 0, sizeof *o);
  if (!p || !p->ls) return 0;
  o->asking = p->asking;
  o->hints = p->hints[p->k - 1];
  o->fig_open = p->fig_open;
  o->scroll = p->scroll;
  o->note_good = p->note_good;
  snprintf(o->note, sizeof o->note, "%s", p->note);
  return 1;
}

unsigned tui_player_set_pane(app *a, const tui_pane_sync *in) {
  tui_player *p = a->player;
  if (!p || !p->ls) return TUI_R_NONE;
  int k = p->k, nh = lesson_step_nhints(p->ls, k);
  int asking = in->asking && lesson_step_question(p->ls, k) != NULL;
  int fig = in->fig_open && lesson_step_has_figure(p->ls, k);
  unsigned r = asking != p->asking || fig != p->fig_open ? TUI_R_RELAYOUT : TUI_R_NONE;
  if (in->hints != p->hints[k - 1]) r |= TUI_R_RELAYOUT; /* the pane's text grows */
  p->asking = asking;
  p->predicted[k - 1] = !asking;
  p->hints[k - 1] = in->hints < 0 ? 0 : in->hints > nh ? nh : in->hints;
  p->fig_open = fig;
  p->scroll = in->scroll < 0 ? 0 : in->scroll;
  p->note_good = in->note_good;
  snprintf(p->note, sizeof p->note, "%s", in->note);
  return r | TUI_R_MESSAGE;
}
