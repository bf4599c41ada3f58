/* cls_export.c: `normscope lesson X --export FILE.md|FILE.cast`.
 *
 * FILE.md, a handout: the lesson's title and source, then per step its text, its state as a
 * block to paste at the explorer's prompt (reset() and one set{} of the fields that differ
 * from the default state, written as dump() writes them, so bit for bit), its figure as
 * text, the claims it verifies with their values, and its predictions and try-its as
 * exercises; their answers come at the end: a prediction's true choice or number, a
 * try's hints, the number it asks for (try.answer, computed by the lesson) and the state
 * try.show gives, as a set{} to paste after the step's block.
 *
 * FILE.cast, a recording (asciinema v2): the real screen, played headless. This binary runs
 * `normscope lesson X` on a pseudo-terminal of the stated size, and steps it with the keys a
 * learner would press: Ctrl-L (a full repaint, so each step stands alone when a player seeks),
 * then the step's exercises answered (= and the truth of a prediction, H for each hint, = and
 * the number a try asks for, H once more for the state try.show gives), N to the next step,
 * q at the end. The
 * program's output goes into [time, "o", text] events. Times are the recording's own, not
 * the wall clock: a step every CLS_CAST_STEP seconds, its answer half-way, so the file is
 * the same whatever the machine's speed; the output of a key is taken when the screen has
 * been quiet for CLS_CAST_QUIET_MS.
 */
#undef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* posix_openpt */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "class/cls.h"
#include "explore/file.h"
#include "lesson/lesson.h"
#include "lesson/lesson_run.h"

#define CLS_CAST_STEP 4.0
#define CLS_CAST_QUIET_MS 150
/* A key the explorer reports no "settled" for: the screen silent this long is taken as done. */
#define CLS_CAST_SILENT_MS 2000
#define CLS_CAST_FIRST_MS 15000 /* the first screen may wait for a slow start */

/* ---- text into a growing buffer ---- */

typedef struct {
  char *s;
  size_t n, cap;
  int oom;
} buf;

static void put(buf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->n + n + 1 > b->cap) {
    size_t c = b->cap ? b->cap : 4096;
    while (c < b->n + n + 1) c *= 2;
    char *t = realloc(b->s, c);
    if (!t) {
      b->oom = 1;
      return;
    }
    b->s = t;
    b->cap = c;
  }
  memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = 0;
}

static void puts_b(buf *b, const char *s) {
  put(b, s, strlen(s));
}

static void printf_b(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#include <stdarg.h>
static void printf_b(buf *b, const char *fmt, ...) {
  char tmp[2048];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof tmp) {
    put(b, tmp, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  if (!big) {
    b->oom = 1;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  put(b, big, (size_t)n);
  free(big);
}

/* ---- the handout ---- */

/* A set{} of the fields of s that differ from base, as dump() writes them. 0, or -1. */
static int set_block(buf *b, const ns_state *base, const ns_state *s, char *err) {
  ns_fieldset d = ns_state_diff(base, s);
  /* the baseline follows the batch and the companion unless given: give it with them */
  if (d & (NS_FIELDBIT(NS_F_BATCH) | NS_FIELDBIT(NS_F_COMPANION))) d |= NS_FIELDBIT(NS_F_BASELINE);
  char *dump = ns_state_dump(s, NS_DUMP_INLINE_MAX, err);
  if (!dump) return -1;
  puts_b(b, "set{\n");
  for (int f = 0; f < NS_F_COUNT; f++) {
    if (!(d & NS_FIELDBIT(f))) continue;
    size_t l = 0;
    const char *line = ns_dump_field(dump, ns_field_name((ns_field)f), &l);
    if (line) {
      put(b, line, l);
      puts_b(b, "\n");
    }
  }
  puts_b(b, "}\n");
  free(dump);
  return 0;
}

typedef struct {
  buf *b;
  int n;
} claims_ctx;

static void on_claim(void *ud, const lesson_claim *c) {
  claims_ctx *cc = ud;
  if (cc->n++ == 0)
    puts_b(cc->b, "It verifies:\n\n| claim | value | expected | tolerance | verdict |\n"
                  "|---|---|---|---|---|\n");
  printf_b(cc->b, "| `%s` | %.10g | %.10g | %g | %s |\n", c->id, c->value,
           c->row ? c->row->expected : 0.0, c->row ? c->row->tol : 0.0,
           c->verified ? "verified" : "**failed**");
}

/* Markdown text: the lesson's words as written (they are plain text; a backquote or a star
 * in them is the author's). */
static void text_b(buf *b, const char *t) {
  puts_b(b, t);
  size_t n = strlen(t);
  if (n == 0 || t[n - 1] != '\n') puts_b(b, "\n");
}

/* A prediction of step k (asked before the step's set applies): the question and its
 * choices in the text as exercise nex, and its truth in the answers. 0, or -1. */
static int md_predict(lesson *ls, int k, buf *b, buf *answers, int nex, char *err) {
  printf_b(b, "\n**Exercise %d (predict, before the block below).** ", nex);
  text_b(b, lesson_step_question(ls, k));
  int nc = lesson_step_nchoices(ls, k);
  for (int i = 1; i <= nc; i++)
    printf_b(b, "%s%d. %s\n", i == 1 ? "\n" : "", i, lesson_step_choice(ls, k, i));
  double v, tol;
  if (lesson_predict_truth(ls, k, &v, &tol, err) != 0) return -1;
  printf_b(answers, "\n### Exercise %d (step %d)\n\n", nex, k);
  if (nc > 0)
    printf_b(answers, "Choice %d: %s.\n", (int)v, lesson_step_choice(ls, k, (int)v));
  else
    printf_b(answers, "%.6g (within %.3g).\n", v, tol);
  return 0;
}

/* Step k's state as a block to paste, its figure, and its claims (cc's table). 0, or -1. */
static int md_state(lesson *ls, int k, buf *b, const ns_state *base, claims_ctx *cc, char *err) {
  puts_b(b, "\n```lua\nreset()\n");
  if (set_block(b, base, lesson_step_state(ls, k), err) != 0) return -1;
  puts_b(b, "```\n");
  char *fig = NULL;
  if (lesson_figure(ls, k, NULL, &fig, err) != 0) return -1;
  if (fig) {
    puts_b(b, "\nIts figure:\n\n```text\n");
    text_b(b, fig);
    puts_b(b, "```\n");
    free(fig);
  }
  cc->n = 0;
  if (lesson_step_has_claims(ls, k)) {
    puts_b(b, "\n");
    if (lesson_claims(ls, k, err) < 0) return -1;
  }
  return 0;
}

/* Step k's try-it tt as exercise nex, and in the answers its hints (a hint may be
 * computed from the step's state), its number, the state that answers it, or that the
 * lesson leaves it open. 0, or -1. */
static int md_try(lesson *ls, int k, const char *tt, buf *b, buf *answers, int nex, char *err) {
  printf_b(b, "\n**Exercise %d.** ", nex);
  text_b(b, tt);
  printf_b(answers, "\n### Exercise %d (step %d)\n\n", nex, k);
  int nh = lesson_step_nhints(ls, k);
  if (nh > 0) {
    puts_b(answers, "Hints, one at a time:\n\n");
    for (int i = 1; i <= nh; i++) {
      char hint[1024];
      if (lesson_hint(ls, k, i, NULL, hint, sizeof hint, err) != 0) return -1;
      printf_b(answers, "%d. %s\n", i, hint);
    }
    puts_b(answers, "\n");
  }
  if (lesson_step_has_answer(ls, k)) {
    double v, tol;
    if (lesson_answer(ls, k, NULL, &v, &tol, err) != 0) return -1;
    printf_b(answers, "The number: %.6g (an answer within %.3g counts).\n\n", v, tol);
  }
  const ns_state *show = lesson_step_show_state(ls, k);
  if (show) {
    puts_b(answers, "After the step's block, this state is the answer:\n\n```lua\n");
    if (set_block(answers, lesson_step_state(ls, k), show, err) != 0) return -1;
    puts_b(answers, "```\n");
  } else if (nh == 0 && !lesson_step_has_answer(ls, k)) {
    puts_b(answers, "The lesson leaves this one open: try it in the explorer.\n");
  }
  return 0;
}

static int write_md(lesson *ls, claims_ctx *cc, const char *file) {
  char err[LESSON_ERRLEN];
  buf b = {0}, answers = {0};
  cc->b = &b;
  ns_state base;
  if (ns_state_init(&base, err) != 0) {
    fprintf(stderr, "normscope: %s\n", err);
    return 1;
  }
  int n = lesson_nsteps(ls), nex = 0, status = 0;
  printf_b(&b, "# %s\n\n", lesson_title(ls));
  printf_b(&b, "From *%s*, section %s. %d step%s.\n\n", lesson_source(ls), lesson_section(ls), n,
           n == 1 ? "" : "s");
  puts_b(&b, "Each step's state is a block to paste at the explorer's prompt (run `normscope`, "
             "press `:`): `reset()` and one `set{}` put the explorer exactly in the step's "
             "state, bit for bit.\n");
  for (int k = 1; k <= n && !status; k++) {
    const char *focus = lesson_step_focus(ls, k);
    printf_b(&b, "\n## Step %d of %d%s%s\n\n", k, n, focus ? ": look at " : "", focus ? focus : "");
    text_b(&b, lesson_step_text(ls, k));
    if (lesson_step_question(ls, k) && md_predict(ls, k, &b, &answers, ++nex, err) != 0) goto fail;
    if (md_state(ls, k, &b, &base, cc, err) != 0) goto fail;
    const char *tt = lesson_step_try_text(ls, k);
    if (tt && md_try(ls, k, tt, &b, &answers, ++nex, err) != 0) goto fail;
  }
  if (nex) {
    puts_b(&b, "\n## Answers\n");
    if (answers.s) puts_b(&b, answers.s);
  }
  if (b.oom || answers.oom) {
    fprintf(stderr, "normscope: --export: out of memory\n");
    status = 1;
  } else if (ns_file_write_atomic(file, b.s, b.n, err) != 0) {
    fprintf(stderr, "normscope: --export: %s\n", err);
    status = 1;
  }
  ns_state_free(&base);
  free(b.s);
  free(answers.s);
  return status;
fail:
  fprintf(stderr, "normscope: %s\n", err);
  ns_state_free(&base);
  free(b.s);
  free(answers.s);
  return 1;
}

/* ---- the recording ---- */

/* JSON string of n bytes: UTF-8 kept, control bytes and invalid bytes escaped/replaced. */
static void json_str(buf *b, const unsigned char *s, size_t n) {
  puts_b(b, "\"");
  for (size_t i = 0; i < n;) {
    unsigned char c = s[i];
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      put(b, e, 2);
      i++;
    } else if (c < 0x20 || c == 0x7f) {
      printf_b(b, "\\u%04x", c);
      i++;
    } else if (c < 0x80) {
      put(b, (const char *)&c, 1);
      i++;
    } else {
      int len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
      int ok = len > 0 && i + (size_t)len <= n;
      for (int k = 1; ok && k < len; k++) ok = (s[i + k] & 0xc0) == 0x80;
      if (ok) {
        put(b, (const char *)s + i, (size_t)len);
        i += (size_t)len;
      } else {
        puts_b(b, "\\ufffd");
        i++;
      }
    }
  }
  puts_b(b, "\"");
}

/* The bytes of a UTF-8 string that end in the middle of a character (kept for the next
 * event). */
static size_t utf8_tail(const unsigned char *s, size_t n) {
  for (size_t k = 1; k <= 3 && k <= n; k++) {
    unsigned char c = s[n - k];
    if ((c & 0xc0) == 0x80) continue;
    int len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return (size_t)len > k ? k : 0;
  }
  return 0;
}

typedef struct {
  int fd;
  pid_t pid;
  buf out;  /* the cast being written */
  buf pend; /* output not yet in an event */
  int exited;
  int sfd; /* read end of the explorer's NS_TUI_SETTLED_FD, or -1 */
} player;

static long ms_since(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long)(t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Reads the screen's output until it has been quiet for quiet_ms after some came (or
 * limit_ms passed, or the program ended). */
static void settle(player *p, int quiet_ms, int limit_ms) {
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int got = 0;
  while (!p->exited) {
    long left = limit_ms - ms_since(&t0);
    if (left <= 0) break;
    struct pollfd pf = {p->fd, POLLIN, 0};
    int r = poll(&pf, 1, got ? quiet_ms : (int)(left < 200 ? left : 200));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) {
      if (got) break;
      continue;
    }
    char chunk[65536];
    ssize_t n = read(p->fd, chunk, sizeof chunk);
    if (n <= 0) {
      p->exited = 1; /* EIO: the program closed the terminal */
      break;
    }
    put(&p->pend, chunk, (size_t)n);
    got = 1;
  }
}

/* The pending output as one event at time t. */
static void event(player *p, double t) {
  size_t keep = utf8_tail((unsigned char *)p->pend.s, p->pend.n);
  size_t n = p->pend.n - keep;
  if (n == 0) return;
  printf_b(&p->out, "[%.3f, \"o\", ", t);
  json_str(&p->out, (unsigned char *)p->pend.s, n);
  puts_b(&p->out, "]\n");
  memmove(p->pend.s, p->pend.s + n, keep);
  p->pend.n = keep;
}

static void key(player *p, const char *k) {
  if (write(p->fd, k, strlen(k)) < 0) p->exited = 1;
}

/* Reads the screen's output until the explorer says "settled" (NS_TUI_SETTLED_FD: the frame
 * is drawn and no worker computes), or the screen has been quiet for quiet_ms (a key that
 * changed nothing reports nothing), or limit_ms passed, or the program ended. */
static void await_settled(player *p, int quiet_ms, int limit_ms) {
  struct timespec t0, last;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  last = t0;
  while (!p->exited) {
    long left = limit_ms - ms_since(&t0);
    if (left <= 0 || ms_since(&last) >= quiet_ms) break;
    struct pollfd pf[2] = {{p->fd, POLLIN, 0}, {p->sfd, POLLIN, 0}};
    int r = poll(pf, 2, (int)(left < 100 ? left : 100));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    if (pf[0].revents) {
      char chunk[65536];
      ssize_t n = read(p->fd, chunk, sizeof chunk);
      if (n <= 0) {
        p->exited = 1;
        break;
      }
      put(&p->pend, chunk, (size_t)n);
      clock_gettime(CLOCK_MONOTONIC, &last);
    }
    if (pf[1].revents) {
      char note[64];
      if (read(p->sfd, note, sizeof note) <= 0) p->sfd = -1;
      break;
    }
  }
}

/* Types k, then reads the screen until it has caught up with the last byte, so a slow step
 * (a prediction's truth computed from three deep stacks, on a loaded machine) is on the
 * screen before the next key, whatever the machine's speed. The bytes before the last
 * (an answer's digits) only edit a line. Without the settled signal: the screen quiet for
 * CLS_CAST_QUIET_MS. */
static void type_keys(player *p, const char *k) {
  size_t n = strlen(k);
  if (n > 1) {
    char head[64];
    snprintf(head, sizeof head, "%.*s", (int)(n - 1), k);
    key(p, head);
    settle(p, CLS_CAST_QUIET_MS, 5000);
  }
  if (p->sfd >= 0) { /* a "settled" from before this key says nothing about it */
    char junk[256];
    while (read(p->sfd, junk, sizeof junk) > 0) {
    }
  }
  key(p, k + (n ? n - 1 : 0));
  /* an answer's Enter may compute for long (the truth of a prediction): wait for the
     explorer to say so; other keys only redraw */
  int slow = n && k[n - 1] == '\r' && p->sfd >= 0;
  if (slow) await_settled(p, CLS_CAST_SILENT_MS, 20000);
  settle(p, slow ? 30 : CLS_CAST_QUIET_MS, 5000);
}

/* The player's side of the pseudo-terminal (in the child): a session of its own on the
 * slave side, at W x H, its state in dir, its "settled" notes on sp[1]; runs
 * `self lesson lesson_path` and does not return. */
static _Noreturn void exec_player(const char *slave, const struct winsize *ws, int mfd,
                                  const char *dir, const int sp[2], const char *self,
                                  const char *lesson_path) {
  setsid();
  int sfd = open(slave, O_RDWR);
  if (sfd < 0) _exit(127);
  ioctl(sfd, TIOCSCTTY, 0);
  ioctl(sfd, TIOCSWINSZ, ws);
  dup2(sfd, 0);
  dup2(sfd, 1);
  dup2(sfd, 2);
  if (sfd > 2) close(sfd);
  close(mfd);
  setenv("TERM", "xterm-256color", 1);
  setenv("XDG_STATE_HOME", dir, 1); /* the recording's lesson progress and autosave */
  unsetenv("LINES");
  unsetenv("COLUMNS");
  if (!getenv("LANG") || !strstr(getenv("LANG"), "UTF-8")) setenv("LANG", "C.UTF-8", 1);
  unsetenv("LC_ALL");
  if (sp[1] > 2) {
    char v[16];
    snprintf(v, sizeof v, "%d", sp[1]);
    setenv("NS_TUI_SETTLED_FD", v, 1);
    close(sp[0]);
  } else
    unsetenv("NS_TUI_SETTLED_FD");
  execl(self, "normscope", "lesson", lesson_path, (char *)NULL);
  _exit(127);
}

/* What the learner does on step k, as keys (each one's screen an event of its own): a
 * prediction answered with its truth, every hint, the number a try asks for, and H once
 * more for the state that answers it. The count, or -1 with err. */
static int step_keys(lesson *ls, int k, char acts[16][64], char *err) {
  int na = 0, nh = lesson_step_nhints(ls, k);
  double v, tol;
  if (lesson_step_question(ls, k)) {
    if (lesson_predict_truth(ls, k, &v, &tol, err) != 0) return -1;
    snprintf(acts[na++], sizeof acts[0], "=%.17g\r", v);
  }
  for (int i = 1; i <= nh && na < 12; i++) snprintf(acts[na++], sizeof acts[0], "H");
  if (lesson_step_has_answer(ls, k)) {
    if (lesson_answer(ls, k, NULL, &v, &tol, err) != 0) return -1;
    snprintf(acts[na++], sizeof acts[0], "=%.17g\r", v);
  }
  if (lesson_step_show_state(ls, k)) snprintf(acts[na++], sizeof acts[0], "H");
  return na;
}

/* The recording itself: the header, then every step (its whole screen, then each of its
 * keys' screens spread over CLS_CAST_STEP seconds), then q. */
static void record(player *p, lesson *ls, int W, int H) {
  char err[NS_ERRLEN];
  int n = lesson_nsteps(ls);
  time_t now = time(NULL);
  printf_b(&p->out, "{\"version\": 2, \"width\": %d, \"height\": %d, \"timestamp\": %lld, ", W, H,
           (long long)now);
  puts_b(&p->out, "\"title\": ");
  json_str(&p->out, (const unsigned char *)lesson_title(ls), strlen(lesson_title(ls)));
  puts_b(&p->out, ", \"env\": {\"TERM\": \"xterm-256color\"}}\n");
  if (p->sfd >= 0) await_settled(p, CLS_CAST_FIRST_MS, CLS_CAST_FIRST_MS); /* step 1 */
  settle(p, p->sfd >= 0 ? 30 : 400, CLS_CAST_FIRST_MS);
  double t = 0;
  for (int k = 1; k <= n && !p->exited; k++) {
    if (k > 1) type_keys(p, "N");
    type_keys(p, "\x0c"); /* Ctrl-L: the whole screen again */
    event(p, t);
    char acts[16][64];
    int na = step_keys(ls, k, acts, err);
    if (na < 0) {
      fprintf(stderr, "normscope: %s\n", err);
      p->exited = 1;
      break;
    }
    for (int i = 0; i < na && !p->exited; i++) {
      type_keys(p, acts[i]);
      event(p, t + CLS_CAST_STEP * (i + 1) / (na + 1));
    }
    t += CLS_CAST_STEP;
  }
  key(p, "q");
  settle(p, CLS_CAST_QUIET_MS, 3000);
  event(p, t);
}

/* The player's exit status: five seconds to quit, then SIGTERM. */
static int reap(pid_t pid) {
  int st = 0;
  for (int i = 0; i < 50 && waitpid(pid, &st, WNOHANG) == 0; i++) {
    struct timespec d = {0, 100000000L};
    nanosleep(&d, NULL);
  }
  if (waitpid(pid, &st, WNOHANG) == 0) {
    kill(pid, SIGTERM);
    waitpid(pid, &st, 0);
  }
  return st;
}

/* Removes the recording's private state folder and what the player left in it. */
static void remove_state_dir(const char *dir) {
  char path[256];
  const char *files[] = {"normscope/lesson-progress", "normscope/last.lua", "normscope/history",
                         "normscope/history.lock", NULL};
  for (int i = 0; files[i]; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    unlink(path);
  }
  snprintf(path, sizeof path, "%s/normscope", dir);
  rmdir(path);
  rmdir(dir);
}

static int write_cast(lesson *ls, const char *lesson_path, const char *file, int W, int H) {
  char err[NS_ERRLEN];
  char dir[] = "/tmp/normscope-cast.XXXXXX";
  if (!mkdtemp(dir)) {
    fprintf(stderr, "normscope: --export: %s: %s\n", dir, strerror(errno));
    return 1;
  }
  int mfd = posix_openpt(O_RDWR | O_NOCTTY);
  if (mfd < 0 || grantpt(mfd) != 0 || unlockpt(mfd) != 0 || !ptsname(mfd)) {
    fprintf(stderr, "normscope: --export: no pseudo-terminal: %s\n", strerror(errno));
    if (mfd >= 0) close(mfd);
    rmdir(dir);
    return 1;
  }
  char slave[256];
  snprintf(slave, sizeof slave, "%s", ptsname(mfd));
  struct winsize ws = {(unsigned short)H, (unsigned short)W, 0, 0};
  char self[4096];
  ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
  if (sl <= 0) {
    fprintf(stderr, "normscope: --export: cannot find this program (/proc/self/exe)\n");
    close(mfd);
    rmdir(dir);
    return 1;
  }
  self[sl] = 0;
  fflush(NULL);
  int sp[2] = {-1, -1}; /* the explorer's "settled" notes (NS_TUI_SETTLED_FD) */
  if (pipe(sp) != 0) sp[0] = sp[1] = -1;
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "normscope: --export: fork: %s\n", strerror(errno));
    close(mfd);
    if (sp[0] >= 0) close(sp[0]), close(sp[1]);
    rmdir(dir);
    return 1;
  }
  if (pid == 0) exec_player(slave, &ws, mfd, dir, sp, self, lesson_path);
  if (sp[1] >= 0) close(sp[1]);
  if (sp[0] >= 0) fcntl(sp[0], F_SETFL, O_NONBLOCK);
  player p = {mfd, pid, {0}, {0}, 0, sp[0]};
  record(&p, ls, W, H);
  int st = reap(pid), status = 0;
  close(mfd);
  if (p.sfd >= 0) close(p.sfd);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    fprintf(stderr, "normscope: --export: the playback ended with status %d\n",
            WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
    status = 1;
  }
  if (!status && (p.out.oom || ns_file_write_atomic(file, p.out.s, p.out.n, err) != 0)) {
    fprintf(stderr, "normscope: --export: %s\n", p.out.oom ? "out of memory" : err);
    status = 1;
  }
  free(p.out.s);
  free(p.pend.s);
  remove_state_dir(dir);
  return status;
}

static int ends_with(const char *s, const char *suf) {
  size_t n = strlen(s), m = strlen(suf);
  return n >= m && strcmp(s + n - m, suf) == 0;
}

int cls_export(const char *what, const char *file, int width, int height) {
  int md = ends_with(file, ".md"), cast = ends_with(file, ".cast");
  if (!md && !cast) {
    fprintf(stderr,
            "normscope: --export %s: the file ends in .md (a handout) or .cast (a "
            "recording)\n",
            file);
    return 2;
  }
  if (md && width) {
    fprintf(stderr, "normscope: --size is for a recording (.cast)\n");
    return 2;
  }
  int usage;
  char *path = lesson_resolve(what, &usage);
  if (!path) return usage ? 2 : 1;
  char err[LESSON_ERRLEN];
  lesson_registry *reg = lesson_registry_load(lesson_claims_path(), err);
  if (!reg) {
    fprintf(stderr, "normscope: claims registry: %s\n", err);
    free(path);
    return 1;
  }
  claims_ctx cc = {0};
  lesson_options o;
  lesson_options_init(&o);
  o.registry = reg;
  o.panels = tui_panel_names;
  o.on_claim = on_claim;
  o.ud = &cc;
  lesson *ls = lesson_load(path, &o, err);
  int st = 1;
  if (!ls)
    fprintf(stderr, "normscope: %s\n", err);
  else
    st = md ? write_md(ls, &cc, file)
            : write_cast(ls, path, file, width ? width : 120, height ? height : 40);
  lesson_free(ls);
  lesson_registry_free(reg);
  free(path);
  return st;
}
