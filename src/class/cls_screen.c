/* cls_screen.c: the classroom on the explorer screen, through tui.h's tui_hook.
 *
 * The teacher: after every frame drawn, if the state or the view changed since the last
 * frame published, the state (dump()) and the view (lesson, step, focus, cursor, selected
 * lines, full-screen view) go out as one frame to every follower (cls_net.c).
 *
 * A follower: reads frames as they come and keeps only the newest. While FOLLOWING it
 * applies it: the state through the state-file loader (nsx_load_text: only set and
 * ns.tensor, an instruction budget, a memory cap) against a copy, the lesson's step, then the
 * view; anything wrong in a frame refuses that frame with one line and keeps the state.
 * While DETACHED (Esc) the student has the whole explorer and the frames are kept, not
 * applied; F applies the newest and follows again (connecting again if the teacher had
 * gone). A teacher who leaves (a bye frame, or the socket closing) leaves it DETACHED.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "class/cls.h"
#include "class/cls_net.h"
#include "class/cls_proto.h"
#include "lesson/lesson_run.h"
#include "lua/explore_lua.h"
#include "tui/app.h"
#include "tui/screen.h"

typedef struct {
  tui_hook hook;
  /* the teacher */
  cls_server srv;
  ns_state last; /* the state last published */
  int have_last;
  cls_header lasth; /* and its view, seq 0 */
  unsigned long long seq;
  char err_said[CLS_ERRLEN];
  /* a follower */
  cls_client cli;
  int following, gone;
  char *newest; /* the newest state frame's payload, not applied yet (NULL: none) */
  size_t newest_len;
  int tstep, tsteps; /* the teacher's step in the last frame seen (0: no lesson) */
  char tlesson[CLS_NAMELEN];
  char lesson[CLS_NAMELEN]; /* the lesson this screen plays ("" none) */
  /* x's line of a dump when x is a file's (x = {file = ..., sha256 = ...}): the sha256 is a
   * pass over the data, so it is made once per x (x_stamp), by the teacher and the
   * follower alike (the follower then leaves x alone instead of reading the file again) */
  char *xline;
  uint64_t xstamp;
  ns_tensor *tiny; /* the teacher's stand-in for x in a dump whose x line is known */
} room;

/* A lesson file's name without its folder and .lua: what a frame carries. */
static void lesson_name(const char *path, char *out, size_t len) {
  out[0] = 0;
  if (!path) return;
  const char *b = strrchr(path, '/');
  b = b ? b + 1 : path;
  size_t n = strlen(b);
  if (n > 4 && strcmp(b + n - 4, ".lua") == 0) n -= 4;
  if (n >= len) n = len - 1;
  memcpy(out, b, n);
  out[n] = 0;
}

/* dump()'s line of field `name` with its newline (ns_dump_field), or NULL. */
static const char *dump_field(const char *dump, const char *name, size_t *len) {
  const char *s = ns_dump_field(dump, name, len);
  if (s && s[*len] == '\n') (*len)++;
  return s;
}

/* text with its bytes [at, at + cut) replaced by with (malloc'd), or NULL. */
static char *splice(const char *text, size_t at, size_t cut, const char *with) {
  size_t n = strlen(text), w = strlen(with);
  char *o = malloc(n - cut + w + 1);
  if (!o) return NULL;
  memcpy(o, text, at);
  memcpy(o + at, with, w);
  memcpy(o + at + w, text + at + cut, n - at - cut + 1);
  return o;
}

/* 1 when dump() writes x as a reference to its file (not its values). */
static int x_by_file(const ns_state *s) {
  return s->source && s->source[0] && s->x->n > NS_DUMP_INLINE_MAX && s->x_stamp != 0;
}

/* The teacher's dump of s: dump() itself, but with x's line made once per x when it is a
 * file's (the rest of the state dumped with a one-element stand-in for x). */
static char *teacher_dump(room *r, const ns_state *s, char *err) {
  if (!x_by_file(s)) return ns_state_dump(s, NS_DUMP_INLINE_MAX, err);
  size_t l;
  if (!r->xline || r->xstamp != s->x_stamp) {
    char *full = ns_state_dump(s, NS_DUMP_INLINE_MAX, err);
    const char *x = full ? dump_field(full, "x", &l) : NULL;
    free(r->xline);
    r->xline = NULL;
    if (x && (r->xline = malloc(l + 1))) {
      memcpy(r->xline, x, l);
      r->xline[l] = 0;
      r->xstamp = s->x_stamp;
    }
    return full;
  }
  if (!r->tiny) {
    size_t one = 1;
    if (!(r->tiny = ns_tensor_new(1, &one, NS_FP64, err))) return NULL;
  }
  ns_state t = *s; /* a shallow copy: only read by dump */
  t.x = r->tiny;
  char *d = ns_state_dump(&t, NS_DUMP_INLINE_MAX, err);
  const char *x = d ? dump_field(d, "x", &l) : NULL;
  char *o = x ? splice(d, (size_t)(x - d), l, r->xline) : NULL;
  if (d && !o) snprintf(err, NS_ERRLEN, "out of memory");
  free(d);
  return o;
}

/* The view of the screen now, as a frame header (seq 0). */
static void view_header(const app *a, const room *r, cls_header *h) {
  memset(h, 0, sizeof *h);
  int n = 0, k = tui_player_step(a, &n);
  if (k > 0 && r->lesson[0]) {
    snprintf(h->lesson, sizeof h->lesson, "%s", r->lesson);
    h->step = k;
    h->steps = n;
  }
  h->focus = (int)a->view.focus;
  h->cursor_row = a->view.cursor_row;
  h->cursor_col = a->view.cursor_col;
  h->nrows = TUI_PANEL_COUNT;
  for (int p = 0; p < TUI_PANEL_COUNT; p++) h->rows[p] = a->view.row[p] < 0 ? 0 : a->view.row[p];
  h->tab = (int)a->tab;
  h->view = a->xview != TUI_XV_NONE ? (int)a->xview + 1 : a->figure_open ? 1 : 0;
  h->xfigure = a->xview != TUI_XV_NONE && a->xfigure;
  tui_pane_sync ps;
  if (h->lesson[0] && tui_player_pane(a, &ps)) {
    h->has_pane = 1;
    int v[5] = {ps.asking, ps.hints, ps.fig_open, ps.scroll, ps.note_good};
    memcpy(h->pane, v, sizeof v);
    snprintf(h->note, sizeof h->note, "%s", ps.note);
  }
}

/* ---------------------------------------------------------------- the teacher */

static int teacher_fd(void *ud) {
  return cls_server_fd(&((room *)ud)->srv);
}

static unsigned teacher_ready(void *ud, app *a) {
  room *r = ud;
  int before = cls_server_peers(&r->srv);
  cls_server_service(&r->srv);
  (void)a;
  /* the header counts the followers */
  return cls_server_peers(&r->srv) != before ? TUI_R_MESSAGE : TUI_R_NONE;
}

static void teacher_drawn(void *ud, app *a) {
  room *r = ud;
  cls_header h;
  view_header(a, r, &h);
  if (r->have_last && memcmp(&h, &r->lasth, sizeof h) == 0 && ns_state_equal(&r->last, &a->st))
    return;
  char err[NS_ERRLEN];
  char *dump = teacher_dump(r, &a->st, err);
  size_t len = 0;
  unsigned char *f = NULL;
  ns_state copy;
  int ok;
  if (dump) {
    h.seq = ++r->seq;
    f = cls_frame_state(&h, tui_panel_names, dump, &len, err);
    free(dump);
  }
  ok = f && cls_server_publish(&r->srv, f, len, err) == 0;
  free(f);
  /* kept even when it could not go out (a state over the frame's cap): tried again at the
   * next change, not at every frame */
  char cerr[NS_ERRLEN];
  if (ns_state_copy(&copy, &a->st, cerr) == 0) {
    if (r->have_last) ns_state_free(&r->last);
    r->last = copy;
    r->have_last = 1;
    h.seq = 0;
    r->lasth = h;
  }
  if (!ok && strcmp(err, r->err_said) != 0) { /* said once, not at every frame */
    snprintf(r->err_said, sizeof r->err_said, "%.250s", err);
    tui_say(a, PLOT_S_MARK, "broadcast: %s", err);
  }
}

static void teacher_tag(void *ud, const app *a, char *title, char *note, size_t len) {
  const room *r = ud;
  (void)a;
  (void)title;
  int n = cls_server_peers(&r->srv);
  snprintf(note, len, "%d following", n);
}

int cls_run_broadcast(tui_options *opt, const char *socket) {
  static room R; /* outlives tui_run's atexit paths */
  room *r = &R;
  memset(r, 0, sizeof *r);
  char err[CLS_ERRLEN];
  if (cls_server_open(&r->srv, socket, err) != 0) {
    fprintf(stderr, "normscope: --broadcast %s\n", err);
    return 1;
  }
  lesson_name(opt->lesson, r->lesson, sizeof r->lesson);
  r->hook = (tui_hook){r, teacher_fd, teacher_ready, teacher_drawn, NULL, teacher_tag};
  opt->hook = &r->hook;
  int st = tui_run(opt);
  cls_server_close(&r->srv); /* the followers hear a bye */
  if (r->have_last) ns_state_free(&r->last);
  free(r->xline);
  ns_tensor_free(r->tiny);
  return st;
}

/* ---------------------------------------------------------------- a follower */

static int follower_fd(void *ud) {
  return ((room *)ud)->cli.fd;
}

/* The rows x cols matrix the cursor moves on with panel p focused. */
static void grid_of(const app *a, int p, size_t *rows, size_t *cols) {
  const ns_tensor *t = p == TUI_PANEL_BATCH ? a->st.batch : a->st.x;
  *cols = t->shape[t->rank - 1];
  *rows = t->n / *cols;
}

/* Applies a state frame's payload; 0, or -1 with err (nothing changed then). */
static unsigned apply_frame(room *r, app *a, const char *payload, size_t len, char *err,
                            int *failed) {
  cls_header h;
  const char *dump;
  size_t dl;
  *failed = 1;
  if (cls_parse_state(payload, len, tui_panel_names, &h, &dump, &dl, err) != 0) return TUI_R_NONE;
  /* x given by its file, as the last frame gave it, and untouched here since: left out (the
   * file is not read and hashed again) */
  char *text = malloc(dl + 1), *slim = NULL;
  if (!text) {
    snprintf(err, NS_ERRLEN, "out of memory");
    return TUI_R_NONE;
  }
  memcpy(text, dump, dl);
  text[dl] = 0;
  size_t xl = 0;
  const char *x = memchr(text, 0, dl) ? NULL : dump_field(text, "x", &xl);
  int same_x = x && r->xline && strlen(r->xline) == xl && memcmp(x, r->xline, xl) == 0 &&
               a->st.x_stamp == r->xstamp && strncmp(x, "  x = {file", 11) == 0;
  if (same_x) slim = splice(text, (size_t)(x - text), xl, "");
  /* the state first, against a copy: a frame is all or nothing */
  ns_state next;
  if (ns_state_copy(&next, &a->st, err) != 0) {
    free(text);
    free(slim);
    return TUI_R_NONE;
  }
  /* the frame's own length: a NUL inside it stays (and makes it the syntax error it is) */
  const char *chunk = slim ? slim : text;
  size_t clen = slim ? strlen(slim) : dl;
  if (nsx_load_text(a->L, &next, NULL, chunk, clen, "@teacher", err) != 0) {
    ns_state_free(&next);
    free(text);
    free(slim);
    return TUI_R_NONE;
  }
  char *newx = NULL; /* the x line to remember */
  if (x && strncmp(x, "  x = {file", 11) == 0 && (newx = malloc(xl + 1))) {
    memcpy(newx, x, xl);
    newx[xl] = 0;
  }
  free(text);
  free(slim);
  unsigned flags = TUI_R_RECOMPUTE;
  snprintf(r->tlesson, sizeof r->tlesson, "%s", h.lesson);
  r->tstep = h.step;
  r->tsteps = h.steps;
  int n = 0, k = tui_player_step(a, &n);
  int same_lesson = h.lesson[0] && strcmp(h.lesson, r->lesson) == 0 && h.steps == n;
  if (same_lesson && h.step != k)
    flags |= tui_player_goto(a, h.step); /* the pane's text; the state comes next */
  ns_state_patch p;
  ns_patch_from_state(&p, &next);
  int rc = ns_history_apply(&a->hist, &a->st, &p, err);
  ns_state_free(&next);
  if (rc != 0) {
    free(newx);
    return flags;
  }
  *failed = 0;
  free(r->xline); /* x as it is now, and the line that gave it */
  r->xline = newx;
  r->xstamp = a->st.x_stamp;
  /* the view, kept inside what this screen can show */
  a->view.focus = (tui_panel)h.focus;
  size_t rows, cols;
  grid_of(a, h.focus, &rows, &cols);
  a->view.cursor_row = (size_t)h.cursor_row < rows ? h.cursor_row : 0;
  a->view.cursor_col = (size_t)h.cursor_col < cols ? h.cursor_col : 0;
  for (int q = 0; q < TUI_PANEL_COUNT && q < h.nrows; q++) a->view.row[q] = h.rows[q];
  if (a->view.row[TUI_PANEL_SETTINGS] >= tui_nsettings)
    a->view.row[TUI_PANEL_SETTINGS] = tui_nsettings - 1;
  if (h.tab >= 0 && tui_panel_tabbed((tui_panel)h.tab)) a->tab = (tui_panel)h.tab;
  a->figure_open = h.view == 1;
  a->xview = h.view >= 2 ? (tui_xview)(h.view - 1) : TUI_XV_NONE;
  a->xfigure = a->xview != TUI_XV_NONE && h.xfigure;
  if (a->xview == TUI_XV_STACK) tui_stack_start(&a->stack);
  if (same_lesson && h.has_pane) { /* the question, hints, figure and verdict the teacher has */
    tui_pane_sync ps = {h.pane[0], h.pane[1], h.pane[2], h.pane[3], h.pane[4], ""};
    snprintf(ps.note, sizeof ps.note, "%s", h.note);
    flags |= tui_player_set_pane(a, &ps);
  }
  a->changed = 1;
  return flags;
}

/* Applies the newest frame kept, if any. */
static unsigned apply_newest(room *r, app *a) {
  if (!r->newest) return TUI_R_NONE;
  char err[NS_ERRLEN];
  int failed;
  unsigned f = apply_frame(r, a, r->newest, r->newest_len, err, &failed);
  free(r->newest);
  r->newest = NULL;
  if (failed) f |= tui_say(a, PLOT_S_MARK, "refused a message from the teacher: %s", err);
  return f;
}

static unsigned went_away(room *r, app *a, const char *why) {
  r->following = 0;
  r->gone = 1;
  return tui_say(a, PLOT_S_MARK, "%s: you are on your own now (F follows again)", why);
}

/* Takes the frames that have arrived: the newest state is kept, a bye ends the class. */
static unsigned take_frames(room *r, app *a, int *bye, int *broken) {
  char err[CLS_ERRLEN];
  int kind;
  const char *pl;
  size_t len;
  int rc;
  unsigned redraw = TUI_R_NONE; /* the header's step changed */
  *bye = *broken = 0;
  while ((rc = cls_reader_next(&r->cli.rd, &kind, &pl, &len, err)) == 1) {
    if (kind == CLS_KIND_BYE) {
      *bye = 1;
    } else {
      cls_header h; /* the teacher's step, for the header even while detached */
      const char *dump;
      size_t dl;
      char perr[CLS_ERRLEN];
      if (cls_parse_state(pl, len, tui_panel_names, &h, &dump, &dl, perr) == 0 &&
          (h.step != r->tstep || h.steps != r->tsteps)) {
        r->tstep = h.step;
        r->tsteps = h.steps;
        redraw = TUI_R_MESSAGE;
      }
      char *copy = malloc(len ? len : 1);
      if (copy) {
        memcpy(copy, pl, len);
        free(r->newest);
        r->newest = copy;
        r->newest_len = len;
      }
    }
    cls_reader_drop(&r->cli.rd);
  }
  if (rc < 0) {
    cls_client_close(&r->cli);
    r->following = 0;
    r->gone = 1;
    *broken = 1;
    if (!a) return TUI_R_MESSAGE; /* before the screen */
    return tui_say(a, PLOT_S_MARK,
                   "refused a message from the teacher: %s; detached (F follows again)", err);
  }
  return redraw;
}

static unsigned follower_ready(void *ud, app *a) {
  room *r = ud;
  unsigned f = TUI_R_NONE;
  if (r->cli.fd >= 0) {
    char err[CLS_ERRLEN];
    int rc = cls_client_read(&r->cli, err), bye = 0, broken = 0;
    f |= take_frames(r, a, &bye, &broken);
    if (broken) return f; /* said */
    if (r->following) f |= apply_newest(r, a);
    if (bye || rc != 0) {
      cls_client_close(&r->cli);
      f |= went_away(r, a, bye ? "the teacher ended the broadcast" : err);
    }
  } else if (r->following) {
    f |= apply_newest(r, a); /* the first frame, read before the screen started */
  }
  return f;
}

/* Keys while following: Esc detaches, F follows again; only help, redraw and quit pass. */
static unsigned follower_key(void *ud, app *a, int code) {
  room *r = ud;
  if (code == 'F') {
    if (r->following) return tui_say(a, PLOT_S_DIM, "following the teacher already (Esc detaches)");
    if (r->cli.fd < 0) {
      char err[CLS_ERRLEN];
      if (cls_client_connect(&r->cli, err) != 0)
        return tui_say(a, PLOT_S_MARK, "cannot follow: %s", err);
      r->gone = 0;
      /* the teacher sends its state to every new follower at once: wait for it briefly */
      struct pollfd pf = {r->cli.fd, POLLIN, 0};
      if (poll(&pf, 1, 1000) > 0) {
        int bye, broken;
        (void)cls_client_read(&r->cli, err);
        (void)take_frames(r, a, &bye, &broken);
      }
    }
    r->following = 1;
    unsigned f = apply_newest(r, a);
    if (f & TUI_R_MESSAGE) return f;
    return f | tui_say(a, PLOT_S_DIM, "following the teacher again");
  }
  if (!r->following) return TUI_HOOK_PASS;
  if (code == 27) {
    r->following = 0;
    return tui_say(a, PLOT_S_DIM, "detached: the explorer is yours; F follows the teacher again");
  }
  if (code == '?' || code == TUI_KEY(KEY_F(1)) || code == 'q' || code == 'Q' ||
      code == TUI_CTRL('l'))
    return TUI_HOOK_PASS;
  return tui_say(a, PLOT_S_DIM,
                 "following the teacher: Esc detaches (then explore), F follows again");
}

static void follower_tag(void *ud, const app *a, char *title, char *note, size_t len) {
  const room *r = ud;
  (void)a;
  snprintf(title, 16, "%s", r->following ? "FOLLOWING" : "DETACHED");
  /* short: at 120 columns the tabs leave 20 */
  if (r->gone)
    snprintf(note, len, "gone");
  else if (r->tstep > 0)
    snprintf(note, len, "step %d/%d", r->tstep, r->tsteps);
}

const char cls_follow_help[] =
    "Usage: normscope follow [--ascii] [--no-color] [--no-mouse] SOCKET\n"
    "Follow a teacher's screen (normscope --broadcast SOCKET, or normscope lesson X\n"
    "--broadcast SOCKET): the same panels, lesson step and view, each change within a\n"
    "frame of the teacher's. The header says FOLLOWING and the teacher's step.\n"
    "\n"
    "  Esc   detach: the explorer is yours (the header says DETACHED)\n"
    "  F     follow again, at the teacher's state now\n"
    "\n"
    "What the teacher sends is data: it is applied as a state file is (only set{} and\n"
    "ns.tensor, an instruction budget and a memory cap); a message that is malformed, too\n"
    "large or refused by the explorer is refused with one line and the state stays. When\n"
    "the teacher quits, the screen stays, detached.\n"
    "\n"
    "  --ascii, --no-color, --no-mouse   as for the explorer\n";

int cls_cmd_follow(int argc, char **argv, int first) {
  tui_options opt = {0};
  const char *sock = NULL;
  for (int i = first + 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(cls_follow_help, stdout);
      return 0;
    }
    if (strcmp(a, "--ascii") == 0)
      opt.ascii = 1;
    else if (strcmp(a, "--no-color") == 0 || strcmp(a, "--no-colour") == 0)
      opt.no_color = 1;
    else if (strcmp(a, "--no-mouse") == 0)
      opt.no_mouse = 1;
    else if (a[0] == '-' && a[1]) {
      fprintf(stderr,
              "normscope: follow: %s: unknown option\n"
              "Try 'normscope follow --help' for more information.\n",
              a);
      return 2;
    } else if (sock) {
      fprintf(stderr, "normscope: follow: one socket at a time\n");
      return 2;
    } else
      sock = a;
  }
  if (!sock) {
    fprintf(stderr, "normscope: follow: needs the teacher's SOCKET\n"
                    "Try 'normscope follow --help' for more information.\n");
    return 2;
  }
  static room R;
  room *r = &R;
  memset(r, 0, sizeof *r);
  cls_client_init(&r->cli, sock);
  char err[CLS_ERRLEN];
  if (cls_client_connect(&r->cli, err) != 0) {
    fprintf(stderr, "normscope: follow: %s\n", err);
    return 1;
  }
  /* the teacher's first frame says which lesson to open */
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int bye = 0;
  for (;;) {
    struct pollfd pf = {r->cli.fd, POLLIN, 0};
    int rc = poll(&pf, 1, 200);
    if (rc > 0 && cls_client_read(&r->cli, err) != 0 && r->cli.rd.len == 0) {
      fprintf(stderr, "normscope: follow: %s\n", err);
      return 1;
    }
    int kind;
    const char *pl;
    size_t len;
    int got = cls_reader_next(&r->cli.rd, &kind, &pl, &len, err);
    if (got < 0) {
      fprintf(stderr, "normscope: follow: %s\n", err);
      return 1;
    }
    if (got == 1) {
      bye = kind == CLS_KIND_BYE;
      break;
    }
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (t.tv_sec - t0.tv_sec >= 5 || r->cli.fd < 0) {
      fprintf(stderr, "normscope: follow: %s: the teacher sent nothing in 5 s\n", sock);
      return 1;
    }
  }
  if (bye) {
    fprintf(stderr, "normscope: follow: the teacher ended the broadcast\n");
    return 1;
  }
  int kind;
  const char *pl;
  size_t len;
  (void)cls_reader_next(&r->cli.rd, &kind, &pl, &len, err);
  cls_header h;
  const char *dump;
  size_t dl;
  char *path = NULL;
  if (cls_parse_state(pl, len, tui_panel_names, &h, &dump, &dl, err) == 0 && h.lesson[0]) {
    int usage;
    path = lesson_resolve(h.lesson, &usage);
    if (!path)
      fprintf(stderr,
              "normscope: follow: the teacher's lesson %s is not here: following "
              "without its text\n",
              h.lesson);
    else {
      opt.lesson = path;
      opt.lesson_step = h.step;
      lesson_name(path, r->lesson, sizeof r->lesson);
    }
  }
  /* the frame stays in the reader: the first ready applies it */
  r->following = 1;
  int b2, b3;
  (void)take_frames(r, NULL, &b2, &b3);
  r->hook = (tui_hook){r, follower_fd, follower_ready, NULL, follower_key, follower_tag};
  opt.hook = &r->hook;
  fflush(stdout);
  int st = tui_run(&opt);
  cls_client_close(&r->cli);
  cls_reader_free(&r->cli.rd);
  free(r->newest);
  free(r->xline);
  free(path);
  return st;
}
