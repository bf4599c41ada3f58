/* lesson_run.c: the headless lesson commands (lesson_run.h): listing, playing a lesson as
 * text, linting it, and verifying every claim. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "lesson/lesson_run.h"

#include <ctype.h>
#include <math.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "explore/state.h"
#include "explore/textout.h"
#include "lesson/lesson.h"
#include "lesson/lesson_progress.h"
#include "lesson/schema.h"

#define PROG "normscope"

#ifndef LESSON_PKGDATADIR
#define LESSON_PKGDATADIR "/usr/local/share/normscope"
#endif
#ifndef LESSON_SRCDIR
#define LESSON_SRCDIR "."
#endif

/* ------------------------------------------------------------------ locations */

/* Whether this binary sits in its build tree (config.status beside it). */
static int in_build_tree(void) {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 32);
  if (n <= 0) return 0;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (!slash) return 0;
  strcpy(slash, "/config.status");
  return access(exe, F_OK) == 0;
}

static const char *locate(const char *env, const char *in_src, const char *installed, char *buf,
                          size_t len) {
  const char *e = getenv(env);
  if (e && *e) return e;
  snprintf(buf, len, "%s/%s", in_build_tree() ? LESSON_SRCDIR : LESSON_PKGDATADIR,
           in_build_tree() ? in_src : installed);
  return buf;
}

static const char *const *run_panels;

void lesson_run_set_panels(const char *const *names) {
  run_panels = names;
}

const char *lesson_dir(void) {
  static char buf[4096];
  return locate("NORMSCOPE_LESSONS", "lessons", "lessons", buf, sizeof buf);
}

const char *lesson_claims_path(void) {
  static char buf[4096];
  return locate("NORMSCOPE_CLAIMS", "data/claims.tsv", "claims.tsv", buf, sizeof buf);
}

/* ------------------------------------------------------------------ text output */

/* The headless commands print what lessons wrote (titles, text, figures, print(), claim
 * ids): stdout goes through the sanitizing stream first (explore/textout.h). */
static void guard_stdout(void) {
  static int done;
  if (!done++) ns_text_guard(&stdout);
}

/* Columns of n bytes of UTF-8 (one per code point). */
static size_t columns(const char *s, size_t n) {
  size_t c = 0;
  for (size_t i = 0; i < n; i++)
    if (((unsigned char)s[i] & 0xC0) != 0x80) c++;
  return c;
}

/* Prints text with indent before every line, wrapping lines longer than width at spaces
 * (a wrapped line's continuation keeps its leading blanks). Trailing blank lines dropped. */
static void put_wrapped(const char *text, const char *indent, size_t width) {
  size_t ind = strlen(indent);
  size_t tl = strlen(text);
  while (tl > 0 && (text[tl - 1] == '\n' || text[tl - 1] == ' ')) tl--;
  const char *p = text, *end = text + tl;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl : end;
    size_t lead = 0;
    while (p + lead < le && p[lead] == ' ') lead++;
    const char *q = p;
    int first = 1;
    do {
      size_t room = width > ind + (first ? 0 : lead) ? width - ind - (first ? 0 : lead) : 1;
      const char *cut = le;
      if (columns(q, (size_t)(le - q)) > room) { /* the last space within room */
        const char *last = NULL;
        size_t c = 0;
        for (const char *r = q; r < le; r++) {
          if (((unsigned char)*r & 0xC0) != 0x80) c++;
          if (c > room) break;
          if (*r == ' ' && r > q) last = r;
        }
        if (last) cut = last;
      }
      printf("%s%*s%.*s\n", indent, first ? 0 : (int)lead, "", (int)(cut - q), q);
      q = cut;
      while (q < le && *q == ' ') q++;
      first = 0;
    } while (q < le);
    p = nl ? nl + 1 : end;
  }
}

/* printf, then put_wrapped at LESSON_COLUMNS. */
#if defined(__GNUC__) || defined(__clang__)
static void wrapf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#endif
static void wrapf(const char *fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  put_wrapped(buf, "", LESSON_COLUMNS);
}

static int load_registry(lesson_registry **reg) {
  char err[NS_ERRLEN];
  *reg = lesson_registry_load(lesson_claims_path(), err);
  if (!*reg) fprintf(stderr, PROG ": claims registry: %s\n", err);
  return *reg ? 0 : 1;
}

/* The options every command runs lessons with: the environment's limits, the registry
 * and the screen's panel names. */
static void run_options(lesson_options *o, const lesson_registry *reg) {
  lesson_options_init(o);
  o->panels = run_panels;
  o->registry = reg;
}

/* ------------------------------------------------------------------ NAME|N|FILE */

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

/* The lesson file that what names: a path to a file, a number in reading order, a lesson's
 * name (with or without .lua) or a unique prefix of one. malloc'd, or NULL (message
 * printed; *usage set when it is the user's mistake). */
static char *resolve(const char *what, int *usage) {
  struct stat st;
  *usage = 0;
  if (strchr(what, '/') ||
      (strlen(what) > 4 && strcmp(what + strlen(what) - 4, ".lua") == 0 && stat(what, &st) == 0)) {
    if (stat(what, &st) != 0) {
      fprintf(stderr, PROG ": %s: %s\n", what, strerror(errno));
      return NULL;
    }
    char *r = malloc(strlen(what) + 1);
    if (r) strcpy(r, what);
    return r;
  }
  char err[NS_ERRLEN];
  char **paths;
  int n = lesson_list_dir(lesson_dir(), &paths, err);
  if (n < 0) {
    fprintf(stderr, PROG ": lessons: %s\n", err);
    return NULL;
  }
  char *found = NULL;
  int matches = 0;
  char *end;
  long num = strtol(what, &end, 10);
  if (*what && !*end) {
    if (num >= 1 && num <= n) found = paths[num - 1], matches = 1;
  } else {
    size_t wl = strlen(what);
    for (int i = 0; i < n; i++) {
      const char *b = base_name(paths[i]);
      size_t bl = strlen(b) - 4;                                     /* without .lua */
      if ((wl == bl || wl == bl + 4) && strncmp(b, what, wl) == 0) { /* exact */
        found = paths[i];
        matches = 1;
        break;
      }
      if (strncmp(b, what, wl) == 0) found = paths[i], matches++;
    }
  }
  char *r = NULL;
  if (matches == 1) {
    r = malloc(strlen(found) + 1);
    if (r) strcpy(r, found);
  } else {
    *usage = 1;
    if (matches == 0)
      fprintf(stderr, PROG ": lesson %s: no such lesson (" PROG " lesson lists them)\n", what);
    else
      fprintf(stderr, PROG ": lesson %s: %d lessons start so; give more of the name\n", what,
              matches);
  }
  lesson_free_list(paths, n);
  return r;
}

/* ------------------------------------------------------------------ playing */

typedef struct {
  char *id;
  double value;
  int verified;
  const char *file; /* borrowed from the lesson list */
  int step;
} claim_rec;

typedef struct {
  int print;   /* print verdict lines (headless) */
  int collect; /* keep every claim (verify) */
  claim_rec *recs;
  size_t n, cap;
  const char *file;
  int oom;
} play_ctx;

static void on_claim(void *ud, const lesson_claim *c) {
  play_ctx *p = ud;
  if (p->print)
    wrapf("  claim %s = %.10g  %s (expected %.10g, tol %g)", c->id, c->value,
          c->verified ? "verified" : "FAILED", c->row ? c->row->expected : 0.0,
          c->row ? c->row->tol : 0.0);
  if (!p->collect) return;
  if (p->n == p->cap) {
    size_t nc = p->cap ? 2 * p->cap : 64;
    claim_rec *nr = realloc(p->recs, nc * sizeof *nr);
    if (!nr) {
      p->oom = 1;
      return;
    }
    p->recs = nr;
    p->cap = nc;
  }
  claim_rec r = {malloc(strlen(c->id) + 1), c->value, c->verified, p->file, c->step};
  if (!r.id) {
    p->oom = 1;
    return;
  }
  strcpy(r.id, c->id);
  p->recs[p->n++] = r;
}

static void print_fields(const char *label, const char *const *f) {
  if (!f || !*f) return;
  char buf[1024];
  size_t len = (size_t)snprintf(buf, sizeof buf, "%s:", label);
  for (int i = 0; f[i] && len < sizeof buf; i++)
    len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? ", " : " ", f[i]);
  if (len < sizeof buf) snprintf(buf + len, sizeof buf - len, "]");
  put_wrapped(buf, "", LESSON_COLUMNS);
}

/* Plays every step of ls. quiet: no text (verify). Returns the number of failures (failed
 * claims, try.show that does not pass), or -1 when the lesson errs (message printed). */
static int play(lesson *ls, int quiet) {
  char err[NS_ERRLEN];
  int failures = 0, n = lesson_nsteps(ls);
  if (!quiet) {
    printf("%s\n", lesson_title(ls));
    const char *src = lesson_source(ls), *sec = lesson_section(ls);
    if (src && *src && sec && *sec)
      wrapf("from %s, section %s; %d step%s", src, sec, n, n == 1 ? "" : "s");
    else if (src && *src)
      wrapf("from %s; %d step%s", src, n, n == 1 ? "" : "s");
    else /* a recorded lesson names no text */
      wrapf("%d step%s", n, n == 1 ? "" : "s");
  }
  for (int k = 1; k <= n; k++) {
    if (!quiet) {
      const char *focus = lesson_step_focus(ls, k);
      printf("\n-- step %d/%d%s%s --\n", k, n, focus ? ", look at: " : "", focus ? focus : "");
      const char *q = lesson_step_question(ls, k);
      if (q) { /* asked before the step's set is applied */
        printf("Predict first:\n");
        put_wrapped(q, "  ", LESSON_COLUMNS);
        for (int i = 1; i <= lesson_step_nchoices(ls, k); i++)
          wrapf("  %d) %s", i, lesson_step_choice(ls, k, i));
        double v, tol;
        if (lesson_predict_truth(ls, k, &v, &tol, err) != 0) {
          fprintf(stderr, PROG ": %s\n", err);
          return -1;
        }
        if (lesson_step_nchoices(ls, k))
          wrapf("  [the truth: %d) %s]", (int)v, lesson_step_choice(ls, k, (int)v));
        else
          wrapf("  [the truth: %.6g, within %.3g]", v, tol);
      }
      put_wrapped(lesson_step_text(ls, k), "", LESSON_COLUMNS);
      print_fields("  [sets", lesson_step_fields(ls, k, "set"));
      char *fig = NULL;
      if (lesson_figure(ls, k, NULL, &fig, err) != 0) {
        fprintf(stderr, PROG ": %s\n", err);
        return -1;
      }
      if (fig) {
        put_wrapped(fig, "", 1000);
        free(fig);
      } else if (lesson_step_has_figure(ls, k))
        printf("  (a figure: shown when the plot module is there)\n");
    }
    int f = lesson_claims(ls, k, err);
    if (f < 0) {
      fprintf(stderr, PROG ": %s\n", err);
      return -1;
    }
    failures += f;
    const char *tt = lesson_step_try_text(ls, k);
    if (!quiet && tt) {
      printf("Try it:\n");
      put_wrapped(tt, "  ", LESSON_COLUMNS);
      for (int i = 1; i <= lesson_step_nhints(ls, k); i++) {
        char hint[512], line[600];
        if (lesson_hint(ls, k, i, NULL, hint, sizeof hint, err) != 0) {
          fprintf(stderr, PROG ": %s\n", err);
          return -1;
        }
        snprintf(line, sizeof line, "Hint %d/%d: %s", i, lesson_step_nhints(ls, k), hint);
        put_wrapped(line, "  ", LESSON_COLUMNS);
      }
      if (lesson_step_has_variant(ls, k)) printf("  [V draws another variant of its numbers]\n");
    }
    if (lesson_step_has_answer(ls, k)) {
      double v, tol;
      if (lesson_answer(ls, k, NULL, &v, &tol, err) != 0) {
        fprintf(stderr, PROG ": %s\n", err);
        return -1;
      }
      if (!quiet) wrapf("  [the answer: = %.6g, within %.3g]", v, tol);
    }
    const ns_state *show = lesson_step_show_state(ls, k);
    if (show && lesson_step_has_check(ls, k)) {
      char hint[256];
      int r = lesson_check_try(ls, k, show, hint, sizeof hint, err);
      if (r < 0) {
        fprintf(stderr, PROG ": %s\n", err);
        return -1;
      }
      if (r == 1) {
        if (!quiet)
          print_fields("  [the answer, try.show, sets", lesson_step_fields(ls, k, "show"));
        if (!quiet) printf("  the answer passes the check\n");
      } else {
        failures++;
        fprintf(stderr, PROG ": %s: step %d: try.show does not pass try.check: %s\n",
                lesson_path(ls), k, hint);
      }
    }
  }
  return failures;
}

/* What `lesson --headless X` and `--states X` share: X resolved to a path, the claims
 * registry loaded and the run's options made. 0, or the exit status to return. */
static int open_named(const char *what, char **path, lesson_registry **reg, lesson_options *o) {
  guard_stdout();
  int usage;
  *path = resolve(what, &usage);
  if (!*path) return usage ? 2 : 1;
  if (load_registry(reg)) {
    free(*path);
    return 1;
  }
  run_options(o, *reg);
  return 0;
}

int lesson_cmd_headless(const char *what) {
  char *path;
  lesson_registry *reg;
  lesson_options o;
  int st = open_named(what, &path, &reg, &o);
  if (st) return st;
  play_ctx pc = {1, 0, NULL, 0, 0, path, 0};
  o.on_claim = on_claim;
  o.ud = &pc;
  char err[NS_ERRLEN];
  lesson *ls = lesson_load(path, &o, err);
  int status = 1;
  if (!ls)
    fprintf(stderr, PROG ": %s\n", err);
  else {
    fflush(stdout);
    int f = play(ls, 0);
    fflush(stdout);
    if (f > 0) fprintf(stderr, PROG ": %s: %d check%s failed\n", path, f, f == 1 ? "" : "s");
    status = f == 0 ? 0 : 1;
  }
  lesson_free(ls);
  lesson_registry_free(reg);
  free(path);
  return status;
}

int lesson_cmd_list(void) {
  guard_stdout();
  char err[NS_ERRLEN];
  char **paths;
  int n = lesson_list_dir(lesson_dir(), &paths, err);
  if (n < 0) {
    fprintf(stderr, PROG ": lessons: %s\n", err);
    return 1;
  }
  lesson_registry *reg;
  if (load_registry(&reg)) {
    lesson_free_list(paths, n);
    return 1;
  }
  lesson_options o;
  run_options(&o, reg);
  int status = 0;
  lesson_progress prog;
  lesson_progress_load(&prog);
  printf("Lessons in %s (play one: " PROG " lesson N, or " PROG " lesson --headless N):\n",
         lesson_dir());
  for (int i = 0; i < n; i++) {
    lesson *ls = lesson_load(paths[i], &o, err);
    if (!ls) {
      printf("%3d  %s: does not load\n", i + 1, base_name(paths[i]));
      fprintf(stderr, PROG ": %s\n", err);
      status = 1;
      continue;
    }
    const char *b = base_name(paths[i]);
    char nm[512], mark[64] = "";
    const lesson_progress_row *pr =
        lesson_progress_find(&prog, lesson_progress_name(paths[i], nm, sizeof nm));
    if (pr && pr->nsteps == lesson_nsteps(ls)) { /* ✓ every try-it passed, · started */
      int left = 0;
      for (int k = 0; pr->tries && k < pr->nsteps; k++) left += pr->tries[k] == '-';
      if (lesson_progress_done(pr))
        snprintf(mark, sizeof mark, "  \xe2\x9c\x93 done");
      else if (pr->seen == pr->nsteps && pr->tries)
        snprintf(mark, sizeof mark, "  \xc2\xb7 read, %d try-it%s to pass", left,
                 left == 1 ? "" : "s");
      else
        snprintf(mark, sizeof mark, "  \xc2\xb7 started, at step %d", pr->step);
    }
    printf("%3d  %.*s (%d step%s)%s\n", i + 1, (int)(strlen(b) - 4), b, lesson_nsteps(ls),
           lesson_nsteps(ls) == 1 ? "" : "s", mark);
    put_wrapped(lesson_title(ls), "     ", LESSON_COLUMNS);
    char where[NS_ERRLEN];
    snprintf(where, sizeof where, "text %.3s, section %s", lesson_source(ls), lesson_section(ls));
    put_wrapped(where, "     ", LESSON_COLUMNS);
    lesson_free(ls);
  }
  if (n == 0) printf("  (none)\n");
  if (prog.n > 0) { /* a hint, never a question: the list must not wait for input */
    const lesson_progress_row *last = &prog.rows[prog.n - 1];
    printf("\nLast played: %s, step %d of %d; continue with: " PROG " lesson --continue\n",
           last->name, last->step, last->nsteps);
  }
  lesson_progress_free(&prog);
  lesson_registry_free(reg);
  lesson_free_list(paths, n);
  return status;
}

/* ------------------------------------------------------------------ --check */

typedef struct {
  int step, seq;
  char *text; /* the whole line */
} lint_msg;

typedef struct {
  const char *file;
  int problems, warnings;
  char **ids;
  int *id_step;
  size_t nids, cap;
  lint_msg *msgs; /* printed at the end, by step */
  size_t nmsgs, msgcap;
} lint_ctx;

static int cmp_msg(const void *a, const void *b) {
  const lint_msg *x = a, *y = b;
  if (x->step != y->step) return x->step < y->step ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void lint_problem(void *ud, int k, const char *msg) {
  lint_ctx *c = ud;
  c->problems++;
  char line[NS_ERRLEN + 300];
  /* messages from the engine may already start with the file name */
  size_t fl = strlen(c->file);
  if (strncmp(msg, c->file, fl) == 0 && msg[fl] == ':')
    snprintf(line, sizeof line, "%s", msg);
  else if (k > 0)
    snprintf(line, sizeof line, "%s: step %d: %s", c->file, k, msg);
  else
    snprintf(line, sizeof line, "%s: %s", c->file, msg);
  if (c->nmsgs == c->msgcap) {
    size_t nc = c->msgcap ? 2 * c->msgcap : 16;
    lint_msg *nm = realloc(c->msgs, nc * sizeof *nm);
    if (!nm) {
      printf("%s\n", line); /* no room to sort it: print it now */
      return;
    }
    c->msgs = nm;
    c->msgcap = nc;
  }
  char *text = malloc(strlen(line) + 1);
  if (!text) {
    printf("%s\n", line);
    return;
  }
  strcpy(text, line);
  c->msgs[c->nmsgs] = (lint_msg){k, (int)c->nmsgs, text};
  c->nmsgs++;
}

/* A warning: printed in order with the problems, not counted as one. */
static void lint_warn(lint_ctx *c, int k, const char *msg) {
  char w[2 * NS_ERRLEN];
  snprintf(w, sizeof w, "warning: %s", msg);
  int before = c->problems;
  lint_problem(c, k, w);
  c->problems = before;
  c->warnings++;
}

/* Whether text shows the number v as a reader would write it (3 or 4 significant digits,
 * or as a whole number), as a word of its own. */
static int text_shows(const char *text, double v) {
  if (!text || !isfinite(v)) return 0;
  char forms[4][48];
  int nf = 0;
  if (v == floor(v) && fabs(v) < 1e9) {
    if (fabs(v) < 10) return 0; /* 0, 1, 2 ... are everywhere */
    snprintf(forms[nf++], sizeof forms[0], "%.0f", v);
  } else {
    snprintf(forms[nf++], sizeof forms[0], "%.3g", v);
    snprintf(forms[nf++], sizeof forms[0], "%.4g", v);
  }
  for (int i = 0; i < nf; i++) {
    size_t l = strlen(forms[i]);
    if (l < 3) continue;
    for (const char *p = strstr(text, forms[i]); p; p = strstr(p + 1, forms[i])) {
      char before = p > text ? p[-1] : ' ', after = p[l];
      if (!isdigit((unsigned char)before) && before != '.' && !isdigit((unsigned char)after))
        return 1;
    }
  }
  return 0;
}

static void lint_claim(void *ud, const lesson_claim *cl) {
  lint_ctx *c = ud;
  char msg[NS_ERRLEN];
  if (!cl->row) {
    snprintf(msg, sizeof msg, "claim: unknown id '%s' (not in claims.tsv)", cl->id);
    lint_problem(c, cl->step, msg);
    return;
  }
  for (size_t i = 0; i < c->nids; i++)
    if (strcmp(c->ids[i], cl->id) == 0) {
      snprintf(msg, sizeof msg, "claim %s is already verified by step %d", cl->id, c->id_step[i]);
      lint_problem(c, cl->step, msg);
      return;
    }
  if (c->nids == c->cap) {
    size_t nc = c->cap ? 2 * c->cap : 32;
    char **ni = realloc(c->ids, nc * sizeof *ni);
    if (ni) c->ids = ni;
    int *ns = realloc(c->id_step, nc * sizeof *ns);
    if (ns) c->id_step = ns;
    if (!ni || !ns) return;
    c->cap = nc;
  }
  char *id = malloc(strlen(cl->id) + 1);
  if (!id) return;
  strcpy(id, cl->id);
  c->ids[c->nids] = id;
  c->id_step[c->nids++] = cl->step;
}

/* Lines of text longer than LESSON_COLUMNS. */
static void lint_lines(lint_ctx *c, int k, const char *what, const char *text) {
  int line = 1;
  for (const char *p = text; *p; line++) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    size_t cols = columns(p, len);
    if (cols > LESSON_COLUMNS) {
      char msg[128];
      snprintf(msg, sizeof msg, "%s line %d is %zu columns (at most %d)", what, line, cols,
               LESSON_COLUMNS);
      lint_problem(c, k, msg);
    }
    if (!nl) break;
    p = nl + 1;
  }
}

/* The schema's newer attributes of step k: the answer, the hints, the prediction and the
 * variants compute at the step's state (and at a variant's); a question does not print its
 * own answer; a step shows something new or asks something. */
static void lint_exercise(lint_ctx *c, lesson *ls, int k) {
  char err[NS_ERRLEN], msg[NS_ERRLEN + 64], buf[512];
  const char *text = lesson_step_text(ls, k), *tt = lesson_step_try_text(ls, k);
  double v, tol;
  if (lesson_step_has_answer(ls, k)) {
    if (lesson_answer(ls, k, NULL, &v, &tol, err) != 0)
      lint_problem(c, k, err);
    else if (text_shows(text, v) || text_shows(tt, v)) {
      snprintf(msg, sizeof msg, "the text shows the answer (%.4g): put it in the last hint", v);
      lint_warn(c, k, msg);
    }
    if (!lesson_step_nhints(ls, k)) lint_warn(c, k, "try.answer without hints: H has nothing");
  }
  for (int i = 1; i <= lesson_step_nhints(ls, k); i++)
    if (lesson_hint(ls, k, i, NULL, buf, sizeof buf, err) != 0) lint_problem(c, k, err);
  if (lesson_step_question(ls, k)) {
    if (lesson_predict_truth(ls, k, &v, &tol, err) != 0)
      lint_problem(c, k, err);
    else if (!lesson_step_nchoices(ls, k) && text_shows(lesson_step_question(ls, k), v)) {
      snprintf(msg, sizeof msg, "the question shows its answer (%.4g)", v);
      lint_warn(c, k, msg);
    }
  }
  if (lesson_step_has_variant(ls, k)) {
    ns_state s;
    char e[NS_ERRLEN];
    if (ns_state_init(&s, e) != 0) return;
    if (lesson_apply_variant(ls, k, 2, &s, NULL, err) != 0)
      lint_problem(c, k, err);
    else {
      if (lesson_step_has_answer(ls, k) && lesson_answer(ls, k, &s, &v, &tol, err) != 0)
        lint_problem(c, k, err);
      char hint[256];
      if (lesson_step_has_check(ls, k) && lesson_check_try(ls, k, &s, hint, sizeof hint, err) < 0)
        lint_problem(c, k, err);
    }
    ns_state_free(&s);
  }
  /* something new on the screen: the state, the focus, a figure or a view, or a question */
  const ns_state *now = lesson_step_state(ls, k), *before = lesson_step_before(ls, k);
  const char *f = lesson_step_focus(ls, k);
  const char *pf = NULL;
  for (int j = k - 1; j >= 1 && !pf; j--) pf = lesson_step_focus(ls, j);
  int changes = ns_state_diff(before, now) != 0 || (f && (!pf || strcmp(f, pf) != 0)) ||
                lesson_step_has_figure(ls, k) || lesson_step_view(ls, k) ||
                (f && ns_choice_parse(lesson_focus_views, f) >= 0);
  int asks = lesson_step_is_try(ls, k) || lesson_step_question(ls, k) || tt;
  if (!changes && !asks)
    lint_warn(c, k,
              "changes nothing on the screen (no set that changes the state, no new "
              "focus, no figure, no view) and asks nothing");
}

int lesson_cmd_check(const char *file) {
  guard_stdout();
  lesson_registry *reg;
  if (load_registry(&reg)) return 1;
  lint_ctx c = {file, 0, 0, NULL, NULL, 0, 0, NULL, 0, 0};
  lesson_options o;
  run_options(&o, reg);
  o.check_mode = 1;
  o.on_claim = lint_claim;
  o.ud = &c;
  char err[NS_ERRLEN];
  lesson *ls = lesson_load_checked(file, &o, lint_problem, &c, err);
  if (!ls) {
    printf("%s\n", err);
    c.problems++;
  } else {
    for (int k = 1; k <= lesson_nsteps(ls); k++) {
      const char *t = lesson_step_text(ls, k);
      const char *s = t;
      while (*s && isspace((unsigned char)*s)) s++;
      if (!*s) lint_problem(&c, k, "no text");
      lint_lines(&c, k, "text", t);
      const char *tt = lesson_step_try_text(ls, k);
      if (tt) lint_lines(&c, k, "try.text", tt);
      if (lesson_claims(ls, k, err) < 0) lint_problem(&c, k, err);
      char *fig = NULL;
      if (lesson_figure(ls, k, NULL, &fig, err) != 0) lint_problem(&c, k, err);
      free(fig);
      int has_try = tt || lesson_step_has_check(ls, k) || lesson_step_show_state(ls, k);
      if (has_try && !tt) lint_problem(&c, k, "try has no text");
      lint_exercise(&c, ls, k);
      if (lesson_step_has_check(ls, k)) {
        char hint[256];
        int r = lesson_check_try(ls, k, NULL, hint, sizeof hint, err);
        if (r < 0)
          lint_problem(&c, k, err);
        else if (r == 1)
          lint_problem(&c, k, "try.check already passes at the step's own state");
        const ns_state *show = lesson_step_show_state(ls, k);
        if (show) {
          r = lesson_check_try(ls, k, show, hint, sizeof hint, err);
          if (r < 0)
            lint_problem(&c, k, err);
          else if (r == 0) {
            char msg[NS_ERRLEN];
            snprintf(msg, sizeof msg, "try.show does not pass try.check (%s)", hint);
            lint_problem(&c, k, msg);
          }
        }
      }
    }
  }
  if (c.nmsgs > 1) qsort(c.msgs, c.nmsgs, sizeof *c.msgs, cmp_msg);
  for (size_t i = 0; i < c.nmsgs; i++) {
    printf("%s\n", c.msgs[i].text);
    free(c.msgs[i].text);
  }
  free(c.msgs);
  if (c.problems == 0)
    printf("%s: ok, %d steps%s\n", file, lesson_nsteps(ls),
           c.warnings ? " (see the warnings)" : "");
  for (size_t i = 0; i < c.nids; i++) free(c.ids[i]);
  free(c.ids);
  free(c.id_step);
  lesson_free(ls);
  lesson_registry_free(reg);
  return c.problems ? 1 : 0;
}

/* ------------------------------------------------------------------ verify */

/* Whether src (a text file name like "000_b25...txt 15.1" or "000") starts with one of the
 * comma-separated prefixes in list (NULL: everything). */
static int source_in(const char *src, const char *list) {
  if (!list) return 1;
  const char *p = list;
  while (*p) {
    size_t n = strcspn(p, ",");
    if (n > 0 && strncmp(src, p, n) == 0) return 1;
    p += n;
    if (*p == ',') p++;
  }
  return 0;
}

int lesson_cmd_verify(int tsv, const char *sources) {
  guard_stdout();
  char err[NS_ERRLEN];
  char **paths;
  int n = lesson_list_dir(lesson_dir(), &paths, err);
  if (n < 0) {
    fprintf(stderr, PROG ": verify: %s\n", err);
    return 1;
  }
  lesson_registry *reg;
  if (load_registry(&reg)) {
    lesson_free_list(paths, n);
    return 1;
  }
  lesson_options o;
  run_options(&o, reg);
  play_ctx pc = {0, 1, NULL, 0, 0, NULL, 0};
  o.on_claim = on_claim;
  o.ud = &pc;
  int bad = 0, played = 0, failures = 0;
  for (int i = 0; i < n; i++) {
    pc.file = paths[i];
    lesson *ls = lesson_load(paths[i], &o, err);
    if (!ls) {
      fprintf(stderr, PROG ": %s\n", err);
      bad = 1;
      continue;
    }
    if (source_in(lesson_source(ls), sources)) {
      played++;
      int f = play(ls, 1);
      if (f < 0) bad = 1;
      if (f > 0) failures += f;
    }
    lesson_free(ls);
  }
  size_t nver = 0, nfail = 0;
  for (size_t i = 0; i < pc.n; i++) {
    claim_rec *r = &pc.recs[i];
    if (tsv)
      printf("%s\t%s\t%.17g\n", r->id, r->verified ? "verified" : "failed", r->value);
    else
      printf("%-8s  %-34s %.17g  (%s, step %d)\n", r->verified ? "verified" : "FAILED", r->id,
             r->value, base_name(r->file), r->step);
    if (r->verified)
      nver++;
    else
      nfail++;
    for (size_t j = 0; j < i; j++)
      if (strcmp(pc.recs[j].id, r->id) == 0) {
        fprintf(stderr, PROG ": verify: %s is claimed twice (%s step %d, %s step %d)\n", r->id,
                base_name(pc.recs[j].file), pc.recs[j].step, base_name(r->file), r->step);
        bad = 1;
        break;
      }
  }
  size_t missing = 0;
  for (size_t i = 0; i < reg->n; i++) {
    if (!source_in(reg->rows[i].source, sources)) continue;
    int seen = 0;
    for (size_t j = 0; j < pc.n && !seen; j++) seen = strcmp(pc.recs[j].id, reg->rows[i].id) == 0;
    if (!seen) {
      fprintf(stderr, PROG ": verify: no lesson verifies %s\n", reg->rows[i].id);
      missing++;
    }
  }
  if (pc.oom) {
    fprintf(stderr, PROG ": verify: out of memory\n");
    bad = 1;
  }
  fflush(stdout);
  if (!tsv || nfail || missing || bad || failures) {
    char texts[128] = "";
    if (sources) snprintf(texts, sizeof texts, " (texts %s)", sources);
    fprintf(stderr,
            PROG ": verify: %d lesson%s%s, %zu claim%s verified, %zu failed, %zu registry id%s "
                 "not verified\n",
            played, played == 1 ? "" : "s", texts, nver, nver == 1 ? "" : "s", nfail, missing,
            missing == 1 ? "" : "s");
  }
  for (size_t i = 0; i < pc.n; i++) free(pc.recs[i].id);
  free(pc.recs);
  lesson_registry_free(reg);
  lesson_free_list(paths, n);
  return bad || nfail || missing || failures ? 1 : 0;
}

/* ------------------------------------------------------------------ the player's helpers */

char *lesson_resolve(const char *what, int *usage) {
  int u = 0;
  char *r = what ? resolve(what, &u) : NULL;
  if (usage) *usage = u;
  return r;
}

int lesson_cmd_states(const char *what) {
  char *path;
  lesson_registry *reg;
  lesson_options o;
  int st = open_named(what, &path, &reg, &o);
  if (st) return st;
  char err[NS_ERRLEN];
  lesson *ls = lesson_load(path, &o, err);
  int status = 0;
  if (!ls) {
    fprintf(stderr, PROG ": %s\n", err);
    status = 1;
  }
  for (int k = 1; ls && k <= lesson_nsteps(ls); k++) {
    char *d = ns_state_dump(lesson_step_state(ls, k), NS_DUMP_INLINE_MAX, err);
    if (!d) {
      fprintf(stderr, PROG ": %s: step %d: %s\n", path, k, err);
      status = 1;
      break;
    }
    printf("-- step %d\n%s", k, d);
    free(d);
  }
  lesson_free(ls);
  lesson_registry_free(reg);
  free(path);
  return status;
}

/* ------------------------------------------------------------------ --schema */

int lesson_cmd_schema(void) {
  printf("| table | attribute | type | required | what it is |\n"
         "|---|---|---|---|---|\n");
  for (int a = 0; a < LESSON_A_COUNT; a++) {
    const lesson_attr_row *r = &lesson_schema[a];
    char ty[64];
    printf("| %s | `%s` | %s | %s | ", lesson_scope_names[r->scope], r->name,
           lesson_types_text(r->types, ty, sizeof ty), r->required ? "yes" : "");
    for (const char *c = r->doc; *c; c++) /* a | would end the cell */
      if (*c == '|')
        fputs("\\|", stdout);
      else
        putchar(*c);
    printf(" |\n");
  }
  return ferror(stdout) ? 1 : 0;
}
