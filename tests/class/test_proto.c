/* test_proto.c: the classroom's frames (src/class/cls_proto.h) in and out of buffers:
 * a state frame read back field for field, whatever the split of its bytes; the newest of
 * several frames; the head checks (magic, version, kind, reserved bytes, the size cap);
 * header values out of range refused with the line named. */
#include <stdlib.h>
#include <string.h>

#include "class/cls_proto.h"
#include "tap.h"

static const char *const panels[] = {"input", "settings", "output", NULL};

static cls_header sample(void) {
  cls_header h;
  memset(&h, 0, sizeof h);
  h.seq = 42;
  strcpy(h.lesson, "000-15.2-epsilon");
  h.step = 3;
  h.steps = 6;
  h.focus = 2;
  h.cursor_row = 1;
  h.cursor_col = 7;
  h.nrows = 3;
  h.rows[0] = 0;
  h.rows[1] = 5;
  h.rows[2] = 9;
  h.tab = 1;
  h.view = 3;
  h.xfigure = 1;
  return h;
}

/* Feeds the frame in pieces of `piece` bytes; 1 when exactly one frame came out equal. */
static int roundtrip(const unsigned char *f, size_t len, size_t piece, const cls_header *want,
                     const char *dump) {
  cls_reader r;
  cls_reader_init(&r);
  char err[CLS_ERRLEN];
  int kind = 0, got = 0, ok = 1;
  const char *pl;
  size_t pn;
  for (size_t i = 0; i < len && ok; i += piece) {
    size_t n = len - i < piece ? len - i : piece;
    ok = cls_reader_feed(&r, f + i, n, err) == 0;
    int rc = cls_reader_next(&r, &kind, &pl, &pn, err);
    if (rc < 0) ok = 0;
    if (rc == 1) {
      got++;
      cls_header h;
      const char *d;
      size_t dl;
      ok = ok && kind == CLS_KIND_STATE && cls_parse_state(pl, pn, panels, &h, &d, &dl, err) == 0 &&
           memcmp(&h, want, sizeof h) == 0 && dl == strlen(dump) && memcmp(d, dump, dl) == 0;
      cls_reader_drop(&r);
    }
  }
  cls_reader_free(&r);
  return ok && got == 1;
}

/* The head of a frame with bytes [at] changed to v: refused by the reader? */
static int head_refused(int at, unsigned char v, const char *why) {
  unsigned char f[CLS_HEAD + 2] = {'N', 'S', 'C', 'L', CLS_VERSION, CLS_KIND_STATE, 0, 0, 0,
                                   0,   0,   2,   'x', 'y'};
  f[at] = v;
  cls_reader r;
  cls_reader_init(&r);
  char err[CLS_ERRLEN] = "";
  int rc = cls_reader_feed(&r, f, sizeof f, err);
  int refused = rc < 0 && r.broken && strstr(err, why) != NULL;
  if (!refused) tap_diag("byte %d = %d: rc %d, err '%s'", at, v, rc, err);
  /* and nothing after it is read */
  int kind;
  const char *pl;
  size_t pn;
  refused = refused && cls_reader_next(&r, &kind, &pl, &pn, err) < 0;
  cls_reader_free(&r);
  return refused;
}

/* A payload's header refused, with text `why` in the message. */
static int header_refused(const char *payload, const char *why) {
  cls_header h;
  const char *d;
  size_t dl;
  char err[CLS_ERRLEN] = "";
  int rc = cls_parse_state(payload, strlen(payload), panels, &h, &d, &dl, err);
  if (rc == 0 || !strstr(err, why)) tap_diag("'%s': rc %d, err '%s'", payload, rc, err);
  return rc < 0 && strstr(err, why) != NULL;
}

int main(void) {
  cls_header h = sample();
  const char *dump = "-- a state\nset{\n  eps = 0.5,\n}\n";
  char err[CLS_ERRLEN];
  size_t len = 0;
  unsigned char *f = cls_frame_state(&h, panels, dump, &len, err);
  tap_ok(f != NULL, "a state frame is made (%s)", f ? "ok" : err);
  if (!f) return tap_done();
  tap_ok(memcmp(f, CLS_MAGIC, 4) == 0 && f[4] == CLS_VERSION && f[5] == CLS_KIND_STATE,
         "its head: magic, version, kind");
  size_t pl = (size_t)f[8] << 24 | (size_t)f[9] << 16 | (size_t)f[10] << 8 | f[11];
  tap_ok(pl + CLS_HEAD == len, "its length field is the payload's size (%zu)", pl);
  static const size_t pieces[] = {1, 2, 5, 11, 12, 13, 64, 4096};
  for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++)
    tap_ok(roundtrip(f, len, pieces[i], &h, dump), "read back equal, fed %zu bytes at a time",
           pieces[i]);

  /* three frames at once: all come out, in order */
  unsigned char *three = malloc(3 * len + CLS_HEAD);
  for (int k = 0; k < 3; k++) memcpy(three + (size_t)k * len, f, len);
  cls_frame_bye(three + 3 * len);
  cls_reader r;
  cls_reader_init(&r);
  int ok = cls_reader_feed(&r, three, 3 * len + CLS_HEAD, err) == 0, n = 0, kind, bye = 0;
  const char *p;
  size_t pn;
  while (cls_reader_next(&r, &kind, &p, &pn, err) == 1) {
    n++;
    bye = kind == CLS_KIND_BYE && pn == 0;
    cls_reader_drop(&r);
  }
  tap_ok(ok && n == 4 && bye && r.len == 0, "three states and a bye in one read: four frames");
  cls_reader_free(&r);
  free(three);

  /* a frame without a lesson has no step */
  cls_header e = sample();
  memset(e.lesson, 0, sizeof e.lesson);
  e.step = e.steps = 0;
  unsigned char *g = cls_frame_state(&e, panels, "set{}\n", &len, err);
  tap_ok(g && roundtrip(g, len, 7, &e, "set{}\n"), "a frame of the plain explorer reads back");
  free(g);

  /* the lesson pane's part: the question, hints, figure, scroll, verdict */
  cls_header q = sample();
  q.has_pane = 1;
  int pv[5] = {1, 2, 0, 7, 1};
  memcpy(q.pane, pv, sizeof pv);
  strcpy(q.note, "\xe2\x9c\x93 13.2 is right (13.2 to 0.05)");
  unsigned char *qf = cls_frame_state(&q, panels, "set{}\n", &len, err);
  tap_ok(qf && roundtrip(qf, len, 3, &q, "set{}\n"), "a frame with the pane's part reads back");
  free(qf);
  cls_header c = q;
  memset(c.note, 0, sizeof c.note);
  strcpy(c.note, "two\nlines");
  qf = cls_frame_state(&c, panels, "set{}\n", &len, err);
  strcpy(c.note, "two lines"); /* the teacher sends one line */
  tap_ok(qf && roundtrip(qf, len, 64, &c, "set{}\n"), "a verdict of two lines is sent as one");
  free(qf);

  /* the head */
  tap_ok(head_refused(0, 'H', "bad magic"), "bad magic refused");
  tap_ok(head_refused(4, 2, "protocol version 2"), "another version refused, named");
  tap_ok(head_refused(5, 9, "unknown frame kind 9"), "an unknown kind refused");
  tap_ok(head_refused(6, 1, "reserved"), "reserved bytes not zero refused");
  tap_ok(head_refused(8, 0x7f, "over the"), "a length over the cap refused");
  tap_ok(head_refused(5, CLS_KIND_BYE, "bye frame with a payload"), "a bye with a payload refused");
  unsigned char just[4] = {'N', 'S', 'C', 'X'};
  cls_reader_init(&r);
  tap_ok(cls_reader_feed(&r, just, 3, err) == 0 && cls_reader_feed(&r, just + 3, 1, err) < 0,
         "bad magic seen as soon as its bytes come");
  cls_reader_free(&r);

  /* payload headers */
  tap_ok(header_refused("focus=input\n\nset{}", "lacks seq"), "no seq: refused");
  tap_ok(header_refused("seq=1\n\nset{}", "lacks focus"), "no focus: refused");
  tap_ok(header_refused("seq=1\nfocus=nowhere\n\nset{}", "line 2: a bad value for focus"),
         "an unknown panel: refused, line named");
  tap_ok(header_refused("seq=1\nfocus=input\nlesson=../x\nstep=1\nsteps=1\n\n", "lesson"),
         "a lesson name with a path: refused");
  tap_ok(header_refused("seq=1\nfocus=input\nlesson=a\nstep=3\nsteps=2\n\n", "go together"),
         "a step past the lesson's end: refused");
  tap_ok(header_refused("seq=1\nfocus=input\nstep=1\n\n", "go together"),
         "a step without a lesson: refused");
  tap_ok(header_refused("seq=1\nfocus=input\nrows=1,2\n\n", "rows"),
         "rows for fewer panels than there are: refused");
  tap_ok(header_refused("seq=1\nfocus=input\ncursor=-1,2\n\n", "cursor"),
         "a negative cursor: refused");
  tap_ok(header_refused("seq=1\nfocus=input\ncursor=99999999999,2\n\n", "cursor"),
         "a cursor past 2^30: refused");
  tap_ok(header_refused("seq=1\nseq=2\nfocus=input\n\n", "twice"), "a key twice: refused");
  tap_ok(header_refused("seq=1\nfocus=input\nview=shell\n\n", "view"), "an unknown view: refused");
  tap_ok(header_refused("seq=1\nfocus=input\nevil=1\n\n", "not a known"),
         "an unknown key: refused");
  tap_ok(header_refused("seq=1\nfocus=input\n", "no end"), "no empty line: refused");
  tap_ok(header_refused("seq=1\nfocus=input\npane=0,0,0,0,0\nnote=\n\n", "with a lesson"),
         "a pane without a lesson: refused");
  tap_ok(header_refused("seq=1\nfocus=input\nlesson=a\nstep=1\nsteps=1\npane=0,0,0,0,0\n\n",
                        "go together"),
         "a pane without its note: refused");
  tap_ok(header_refused("seq=1\nfocus=input\nlesson=a\nstep=1\nsteps=1\npane=2,0,0,0,0\nnote=\n\n",
                        "pane"),
         "a pane flag out of range: refused");
  tap_ok(header_refused(
             "seq=1\nfocus=input\nlesson=a\nstep=1\nsteps=1\npane=0,0,0,0,0\nnote=a\x1b[2Jb\n\n",
             "note"),
         "a verdict with an escape sequence: refused");
  tap_ok(header_refused("seq=1\nfocus=input", "no end"),
         "a last line without its newline: refused");

  /* too large to send */
  size_t big = CLS_MAX_PAYLOAD + 1;
  char *huge = malloc(big + 1);
  memset(huge, ' ', big);
  huge[big] = 0;
  unsigned char *hf = cls_frame_state(&h, panels, huge, &len, err);
  tap_ok(hf == NULL && strstr(err, "more than a frame holds"), "a state over the cap is not sent");
  free(hf);
  free(huge);
  free(f);
  return tap_done();
}
