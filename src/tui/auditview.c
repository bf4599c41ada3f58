/* auditview.c: the audit panel (key a): the checks of audit/audit.h on what
 * the explorer shows, a cursor over the findings, and Enter to put the explorer in the
 * state that shows the selected one.
 *
 * What is audited: the file x came from when x is still that file's tensor (the state's
 * source names it), streamed from disk like `normscope audit FILE`; otherwise (the default
 * example, an edited x) a copy of x. Either way with the state's kind, axes, groups and
 * eps. The audit runs in a thread started by the key, so keys stay free on a big file; the
 * panel says "auditing... N%" until the report lands. Esc closes the panel and leaves the
 * run going: a on an unchanged state (the same x bytes, source, kind, axes, groups and eps:
 * a fingerprint) shows the same run again, its selection kept. The fields below `lock`
 * belong to the thread until it sets `done` (read them under the lock).
 *
 * Enter applies the finding's `here` patch (the audit's spec with the finding's change,
 * on the audited tensor itself) through the undo history, one step, and puts the cursor
 * on the element the finding points at (the dead channel, the outlier).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "audit/audit.h"
#include "explore/file.h"
#include "tui/app.h"
#include "tui/screen.h"

struct tui_audit {
  int open, cursor;
  int thread_on;
  pthread_t thread;
  pthread_mutex_t lock;
  int shown;                /* the percentage last drawn, -1: the report */
  unsigned long long print; /* what was audited (fingerprint below): a reopens an unchanged one */
  /* the run's input, fixed before the thread starts */
  int use_file;
  char path[1024], name[256], what[1100];
  ns_tensor *x; /* the copy of x (use_file 0), owned */
  ns_audit_opts o;
  /* the thread's, under lock */
  int stop, done, rc;
  double progress;
  char err[NS_ERRLEN];
  ns_audit_report rep;
};

static void on_progress(void *ctx, double done) {
  struct tui_audit *t = ctx;
  pthread_mutex_lock(&t->lock);
  t->progress = done;
  pthread_mutex_unlock(&t->lock);
}

static int on_stop(void *ctx) {
  struct tui_audit *t = ctx;
  pthread_mutex_lock(&t->lock);
  int s = t->stop;
  pthread_mutex_unlock(&t->lock);
  return s;
}

static void *worker(void *arg) {
  struct tui_audit *t = arg;
  char err[NS_ERRLEN] = "";
  ns_audit_report *r = calloc(1, sizeof *r);
  int rc = -1;
  if (!r) {
    snprintf(err, sizeof err, "out of memory");
  } else if (t->use_file) {
    ns_file_map m;
    if (ns_file_map_open(&m, t->path, t->name[0] ? t->name : NULL, 0, err) == 0) {
      rc = ns_audit_run(&m, &t->o, r, err);
      ns_file_map_close(&m);
    }
  } else {
    rc = ns_audit_tensor(t->x, &t->o, r, err);
  }
  pthread_mutex_lock(&t->lock);
  t->rc = rc;
  if (rc == 0) t->rep = *r;
  snprintf(t->err, sizeof t->err, "%s", err);
  t->done = 1;
  pthread_mutex_unlock(&t->lock);
  free(r);
  return NULL;
}

/* Ends the run (waiting for the thread) and frees its report. */
static void run_end(struct tui_audit *t) {
  if (t->thread_on) {
    pthread_mutex_lock(&t->lock);
    t->stop = 1;
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->thread, NULL);
    pthread_mutex_destroy(&t->lock);
    t->thread_on = 0;
  }
  ns_audit_free(&t->rep);
  ns_tensor_free(t->x);
  t->x = NULL;
}

void tui_audit_free(app *a) {
  if (!a->audit) return;
  run_end(a->audit);
  free(a->audit);
  a->audit = NULL;
}

/* Where x came from, when it is still that file's tensor: path and tensor name from the
 * state's source ("FILE" or "FILE:NAME"). 1 if there is such a file. */
static int source_file(const ns_state *s, char *path, size_t plen, char *name, size_t nlen) {
  struct stat sb;
  if (!s->source || !s->source[0]) return 0;
  name[0] = 0;
  snprintf(path, plen, "%s", s->source);
  if (stat(path, &sb) == 0) return S_ISREG(sb.st_mode);
  char *colon = strrchr(path, ':');
  if (!colon) return 0;
  *colon = 0;
  snprintf(name, nlen, "%s", colon + 1);
  return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* A fingerprint of what the audit depends on: x's bytes and shape, the source and the
 * settings the audit takes (FNV-1a, 64 bits; a pass over x at memory speed). */
static unsigned long long fingerprint(const ns_state *s) {
  unsigned long long h = 1469598103934665603ull;
#define MIX(p, n)                                                                                  \
  for (size_t i_ = 0; i_ < (n); i_++) h = (h ^ ((const unsigned char *)(p))[i_]) * 1099511628211ull
  const ns_tensor *x = s->x;
  MIX(x->data, x->n * ns_dtype_size(x->dtype));
  MIX(x->shape, sizeof x->shape);
  MIX(&x->dtype, sizeof x->dtype);
  if (s->source) MIX(s->source, strlen(s->source));
  MIX(&s->kind, sizeof s->kind);
  MIX(&s->axes, sizeof s->axes);
  MIX(&s->groups, sizeof s->groups);
  MIX(&s->eps, sizeof s->eps);
#undef MIX
  return h;
}

/* Starts an audit of what the explorer shows. 0, or -1 with err (nothing started). */
static int run_start(app *a, char *err) {
  struct tui_audit *t = a->audit;
  run_end(t);
  memset(&t->rep, 0, sizeof t->rep);
  t->stop = t->done = t->rc = 0;
  t->progress = 0;
  t->err[0] = 0;
  t->shown = 0;
  t->cursor = 0;
  t->print = fingerprint(&a->st);
  ns_audit_opts_init(&t->o);
  t->o.kind = a->st.kind;
  t->o.axes = a->st.kind == NS_KIND_GROUP ? 0 : a->st.axes;
  t->o.groups = a->st.groups;
  t->o.eps = a->st.eps;
  t->o.progress = on_progress;
  t->o.stop = on_stop;
  t->o.progress_ctx = t;
  if (ns_audit_check_opts(&t->o, a->st.x->rank, a->st.x->shape, err) != 0) return -1;
  char shp[96];
  ns_shape_format(a->st.x->rank, a->st.x->shape, shp, sizeof shp);
  t->use_file = source_file(&a->st, t->path, sizeof t->path, t->name, sizeof t->name);
  if (t->use_file) {
    snprintf(t->what, sizeof t->what, "%s (the file x came from, %s)", a->st.source, shp);
  } else {
    snprintf(t->what, sizeof t->what, "x (%s %s, in memory)", shp, ns_dtype_name(a->st.x->dtype));
    if (!(t->x = ns_tensor_copy(a->st.x))) {
      snprintf(err, NS_ERRLEN, "out of memory for a copy of x");
      return -1;
    }
  }
  pthread_mutex_init(&t->lock, NULL);
  if (pthread_create(&t->thread, NULL, worker, t) != 0) {
    pthread_mutex_destroy(&t->lock);
    ns_tensor_free(t->x);
    t->x = NULL;
    snprintf(err, NS_ERRLEN, "cannot start a thread for the audit");
    return -1;
  }
  t->thread_on = 1;
  return 0;
}

/* a: opens the panel and starts the audit, or closes it. */
unsigned tui_act_audit(app *a, int which) {
  (void)which;
  if (!a->audit && !(a->audit = calloc(1, sizeof *a->audit)))
    return tui_say(a, PLOT_S_MARK, "audit: out of memory");
  struct tui_audit *t = a->audit;
  if (t->open) {
    t->open = 0;
    return TUI_R_NONE;
  }
  char err[NS_ERRLEN];
  int failed;
  int again = t->thread_on && t->print == fingerprint(&a->st);
  if (again) { /* nothing it depends on changed: the same run (landed or still going) */
    pthread_mutex_lock(&t->lock);
    failed = t->done && t->rc != 0;
    pthread_mutex_unlock(&t->lock);
    again = !failed;
    if (again) t->shown = 0; /* redraw it */
  }
  if (!again && run_start(a, err) != 0) return tui_say(a, PLOT_S_MARK, "cannot audit x: %s", err);
  t->open = 1;
  a->figure_open = 0;
  a->xview = TUI_XV_NONE;
  a->xfigure = 0;
  return TUI_R_NONE;
}

int tui_audit_is_open(const app *a) {
  return a->audit && a->audit->open;
}

/* The report when it has landed (the thread is done with it), else NULL. */
static const ns_audit_report *report(struct tui_audit *t, int *failed) {
  *failed = 0;
  if (!t->thread_on) return NULL;
  pthread_mutex_lock(&t->lock);
  int done = t->done, rc = t->rc;
  pthread_mutex_unlock(&t->lock);
  if (!done) return NULL;
  *failed = rc != 0;
  return rc == 0 ? &t->rep : NULL;
}

int tui_audit_tick(app *a) {
  struct tui_audit *t = a->audit;
  if (!t || !t->open || !t->thread_on || t->shown < 0) return 0;
  pthread_mutex_lock(&t->lock);
  int now = t->done ? -1 : (int)(100 * t->progress);
  pthread_mutex_unlock(&t->lock);
  return now != t->shown;
}

int tui_audit_busy(const app *a) {
  return a->audit && a->audit->open && a->audit->thread_on && a->audit->shown >= 0;
}

/* Enter: the state that shows finding k, one undo step, and the cursor on its element. */
static unsigned jump(app *a, const ns_audit_report *r, size_t k) {
  const ns_audit_finding *f = &r->f[k];
  const ns_tensor *x = a->st.x;
  int same = x->rank == r->rank;
  for (int i = 0; same && i < r->rank; i++) same = x->shape[i] == r->shape[i];
  if (!same) return tui_say(a, PLOT_S_MARK, "x changed shape since the audit: press a to rerun it");
  char err[NS_ERRLEN];
  if (ns_history_apply(&a->hist, &a->st, &f->here, err) != 0)
    return tui_say(a, PLOT_S_MARK, "cannot show %s: %s", ns_audit_check_names[f->check], err);
  a->audit->open = 0;
  a->view.focus = TUI_PANEL_INPUT;
  if (f->at != NS_AUDIT_NOWHERE && f->at < a->st.x->n) {
    size_t cols = a->st.x->shape[a->st.x->rank - 1];
    a->view.cursor_row = (int)(f->at / cols);
    a->view.cursor_col = (int)(f->at % cols);
  }
  char where[64] = "";
  if (f->at != NS_AUDIT_NOWHERE)
    snprintf(where, sizeof where, "; the cursor is on element %zu", f->at + 1);
  return TUI_R_RECOMPUTE | tui_say(a, PLOT_S_DIM, "%s: %s%s (u undoes)",
                                   ns_audit_check_names[f->check], ns_verdict_names[f->verdict],
                                   where);
}

unsigned tui_audit_key(app *a, int code, unsigned ch) {
  struct tui_audit *t = a->audit;
  if (!code && (ch == 27 || ch == 'a' || ch == 'q')) {
    t->open = 0;
    return TUI_R_NONE;
  }
  int failed;
  const ns_audit_report *r = report(t, &failed);
  if (!r) {
    if (code || ch != '?') return tui_say(a, PLOT_S_DIM, "auditing: a or Esc closes the panel");
    return TUI_R_NONE;
  }
  int n = (int)r->nfindings;
  if (code && ch == KEY_UP && t->cursor > 0)
    t->cursor--;
  else if (code && ch == KEY_DOWN && t->cursor + 1 < n)
    t->cursor++;
  else if (code && ch == KEY_HOME)
    t->cursor = 0;
  else if (code && ch == KEY_END)
    t->cursor = n - 1;
  else if ((code && ch == KEY_ENTER) || (!code && (ch == '\n' || ch == '\r')))
    return n ? jump(a, r, (size_t)t->cursor) : TUI_R_NONE;
  else if (!(code && (ch == KEY_UP || ch == KEY_DOWN)))
    return tui_say(a, PLOT_S_DIM,
                   "the audit: Up/Down choose a check, Enter shows it, a or Esc "
                   "closes");
  return TUI_R_NONE;
}

static int verdict_style(ns_verdict v) {
  return v == NS_VERDICT_WARN ? (PLOT_S_MARK | PLOT_F_BOLD)
         : v == NS_VERDICT_OK ? PLOT_S_GOOD
                              : PLOT_S_LABEL;
}

/* The selected finding's figure in the rows left (bars or a histogram). */
static void draw_figure(WINDOW *w, int y, int h, const ns_audit_figure *g, const tui_view *v) {
  if (g->kind == 0 || g->n == 0 || h < 6) return;
  plot_opts o;
  tui_fig_opts(&o, tui_iw(w), h, v, g->title);
  char err[PLOT_ERRLEN] = "";
  plot_canvas *c;
  if (g->kind == 1) {
    const char *labels[NS_AUDIT_MAXBARS];
    size_t n = g->n < NS_AUDIT_MAXBARS ? g->n : NS_AUDIT_MAXBARS;
    for (size_t i = 0; g->labels && i < n; i++) labels[i] = g->labels[i];
    if (g->labels) {
      o.labels = labels;
      o.nlabels = n;
    }
    c = plot_fig_bars(g->v, n, &o, err);
  } else {
    plot_set s = {g->v, g->n, NULL};
    c = plot_fig_hist(&s, 1, &o, err);
  }
  tui_fig_paint(w, y, 1, c, err);
}

int tui_audit_draw(app *a, const tui_view *v) {
  struct tui_audit *t = a->audit;
  if (!t || !t->open) return 0;
  WINDOW *w = a->help;
  werase(w);
  tui_view fv = *v;
  fv.focused = 1;
  tui_frame(w, "Audit  (Up/Down choose, Enter shows it in the explorer, a or Esc closes)", &fv);
  int ih = tui_ih(w);
  tui_printf(w, 1, 1, PLOT_S_LABEL, "of %s: %s norm, eps %g", t->what, ns_kind_name(t->o.kind),
             t->o.eps);
  int failed;
  const ns_audit_report *r = report(t, &failed);
  if (!r) {
    pthread_mutex_lock(&t->lock);
    int pct = (int)(100 * t->progress);
    char err[NS_ERRLEN];
    snprintf(err, sizeof err, "%s", t->err);
    pthread_mutex_unlock(&t->lock);
    if (failed)
      tui_printf(w, 3, 1, PLOT_S_MARK, "the audit could not run: %s", err);
    else
      tui_printf(w, 3, 1, PLOT_S_TEXT, "auditing... %d%%%s  (Esc closes; it goes on, a shows it)",
                 pct, pct >= 100 ? ": the checks on the leading examples" : "");
    t->shown = failed ? -1 : pct;
  } else {
    t->shown = -1;
    int y = 3;
    for (size_t k = 0; k < r->nfindings && y < ih; k++, y++) {
      const ns_audit_finding *f = &r->f[k];
      int sel = (int)k == t->cursor;
      char val[32];
      tui_num(f->value, val, sizeof val);
      tui_printf(w, y, 1, sel ? PLOT_S_FOCUS | PLOT_F_REVERSE : PLOT_S_TEXT, "%s %-22s",
                 sel ? ">" : " ", ns_audit_check_names[f->check]);
      tui_printf(w, y, 26, verdict_style(f->verdict) | (sel ? PLOT_F_REVERSE : 0), "%-5s",
                 ns_verdict_names[f->verdict]);
      tui_printf(w, y, 32, PLOT_S_TEXT, "%-10s %s", val, f->detail);
    }
    if (t->cursor < (int)r->nfindings && y + 2 < ih) {
      const ns_audit_finding *f = &r->f[t->cursor];
      y++;
      tui_printf(w, y++, 1, PLOT_S_TITLE | PLOT_F_BOLD, "%s: %s", ns_audit_check_names[f->check],
                 ns_audit_check_docs[f->check]);
      y += tui_wrap(w, y, 1, PLOT_S_TEXT, f->detail, ih - y - 1);
      draw_figure(w, y + 1, ih - y - 1, &f->fig, v);
    }
  }
  if (a->msg[0]) {
    wattrset(w, tui_attr(a->msg_style));
    mvwaddnstr(w, LINES - 1, 2, a->msg, COLS - 4);
    wattrset(w, A_NORMAL);
  }
  curs_set(0);
  wnoutrefresh(w);
  doupdate();
  return 1;
}
