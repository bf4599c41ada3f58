/* cls_proto.c: frames of the classroom's socket (cls_proto.h has the format). */
#include "class/cls_proto.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const cls_view_names[] = {"none",  "figure", "placement", "backward",
                                      "shift", "stack",  NULL};

static void put_head(unsigned char *o, int kind, uint32_t n) {
  memcpy(o, CLS_MAGIC, 4);
  o[4] = CLS_VERSION;
  o[5] = (unsigned char)kind;
  o[6] = o[7] = 0;
  o[8] = (unsigned char)(n >> 24);
  o[9] = (unsigned char)(n >> 16);
  o[10] = (unsigned char)(n >> 8);
  o[11] = (unsigned char)n;
}

void cls_frame_bye(unsigned char out[CLS_HEAD]) {
  put_head(out, CLS_KIND_BYE, 0);
}

static int count_names(const char *const *names) {
  int n = 0;
  while (names[n]) n++;
  return n;
}

unsigned char *cls_frame_state(const cls_header *h, const char *const *panels, const char *dump,
                               size_t *len, char *err) {
  char head[1024];
  int np = count_names(panels);
  size_t n = 0;
  n += (size_t)snprintf(head + n, sizeof head - n, "seq=%llu\n", h->seq);
  if (h->lesson[0])
    n += (size_t)snprintf(head + n, sizeof head - n, "lesson=%s\nstep=%d\nsteps=%d\n", h->lesson,
                          h->step, h->steps);
  n +=
      (size_t)snprintf(head + n, sizeof head - n, "focus=%s\ncursor=%d,%d\nrows=", panels[h->focus],
                       h->cursor_row, h->cursor_col);
  for (int i = 0; i < h->nrows && n < sizeof head; i++)
    n += (size_t)snprintf(head + n, sizeof head - n, "%s%d", i ? "," : "", h->rows[i]);
  if (n < sizeof head && h->tab >= 0 && h->tab < np)
    n += (size_t)snprintf(head + n, sizeof head - n, "\ntab=%s", panels[h->tab]);
  if (n < sizeof head)
    n += (size_t)snprintf(head + n, sizeof head - n, "\nview=%s\nxfigure=%d\n",
                          cls_view_names[h->view], h->xfigure ? 1 : 0);
  if (n < sizeof head && h->has_pane && h->lesson[0]) {
    char note[sizeof h->note];
    size_t j = 0;
    for (size_t i = 0; h->note[i] && j + 1 < sizeof note; i++) /* one line, no controls */
      note[j++] = (unsigned char)h->note[i] < 0x20 || h->note[i] == 0x7f ? ' ' : h->note[i];
    note[j] = 0;
    n += (size_t)snprintf(head + n, sizeof head - n, "pane=%d,%d,%d,%d,%d\nnote=%s\n", h->pane[0],
                          h->pane[1], h->pane[2], h->pane[3], h->pane[4], note);
  }
  if (n < sizeof head) n += (size_t)snprintf(head + n, sizeof head - n, "\n");
  if (n >= sizeof head) {
    snprintf(err, CLS_ERRLEN, "frame header too long");
    return NULL;
  }
  size_t dl = strlen(dump), pl = n + dl;
  if (pl > CLS_MAX_PAYLOAD) {
    snprintf(err, CLS_ERRLEN, "the state takes %zu bytes, more than a frame holds (%u)", pl,
             (unsigned)CLS_MAX_PAYLOAD);
    return NULL;
  }
  unsigned char *f = malloc(CLS_HEAD + pl);
  if (!f) {
    snprintf(err, CLS_ERRLEN, "out of memory");
    return NULL;
  }
  put_head(f, CLS_KIND_STATE, (uint32_t)pl);
  memcpy(f + CLS_HEAD, head, n);
  memcpy(f + CLS_HEAD + n, dump, dl);
  *len = CLS_HEAD + pl;
  return f;
}

/* ---- parsing a state payload's header ---- */

/* A decimal integer in [lo, hi] spanning exactly s[0..n). */
static int parse_int(const char *s, size_t n, long lo, long hi, int *out) {
  if (n == 0 || n > 10) return -1;
  long v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  if (v < lo || v > hi) return -1;
  *out = (int)v;
  return 0;
}

/* Comma-separated integers in [0, hi]: how many (at most max), or -1. */
static int parse_ints(const char *s, size_t n, long hi, int *out, int max) {
  int k = 0;
  size_t i = 0;
  while (i <= n) {
    size_t j = i;
    while (j < n && s[j] != ',') j++;
    if (k >= max || parse_int(s + i, j - i, 0, hi, &out[k]) != 0) return -1;
    k++;
    i = j + 1;
  }
  return k;
}

static int name_index(const char *const *names, const char *s, size_t n) {
  for (int i = 0; names[i]; i++)
    if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0) return i;
  return -1;
}

/* A lesson's name: a file name without a path (letters, digits, . _ -), not . or .. */
static int lesson_name_ok(const char *s, size_t n) {
  if (n == 0 || n >= CLS_NAMELEN || s[0] == '.') return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
          c == '_' || c == '-'))
      return 0;
  }
  return 1;
}

#define MAX_INDEX (1 << 30)

int cls_parse_state(const char *payload, size_t len, const char *const *panels, cls_header *h,
                    const char **dump, size_t *dumplen, char *err) {
  memset(h, 0, sizeof *h);
  h->tab = -1;
  int np = count_names(panels);
  enum {
    K_SEQ,
    K_LESSON,
    K_STEP,
    K_STEPS,
    K_FOCUS,
    K_CURSOR,
    K_ROWS,
    K_TAB,
    K_VIEW,
    K_XFIG,
    K_PANE,
    K_NOTE
  };
  static const char *const keys[] = {"seq", "lesson", "step",    "steps", "focus", "cursor", "rows",
                                     "tab", "view",   "xfigure", "pane",  "note",  NULL};
  unsigned seen = 0;
  size_t i = 0;
  int line = 0;
  for (;;) {
    line++;
    if (i >= len) {
      snprintf(err, CLS_ERRLEN, "the header has no end (an empty line before the state)");
      return -1;
    }
    const char *s = payload + i, *nl = memchr(s, '\n', len - i);
    if (!nl) {
      snprintf(err, CLS_ERRLEN, "header line %d has no end", line);
      return -1;
    }
    size_t n = (size_t)(nl - s);
    i += n + 1;
    if (n == 0) break;
    const char *eq = memchr(s, '=', n);
    int k = eq ? name_index(keys, s, (size_t)(eq - s)) : -1;
    if (k < 0) {
      snprintf(err, CLS_ERRLEN, "header line %d: not a known key=value", line);
      return -1;
    }
    if (seen & (1u << k)) {
      snprintf(err, CLS_ERRLEN, "header line %d: %s given twice", line, keys[k]);
      return -1;
    }
    seen |= 1u << k;
    const char *v = eq + 1;
    size_t vn = n - (size_t)(v - s);
    int bad = 0;
    switch (k) {
    case K_SEQ: {
      unsigned long long q = 0;
      if (vn == 0 || vn > 19) bad = 1;
      for (size_t j = 0; j < vn && !bad; j++) {
        if (v[j] < '0' || v[j] > '9') bad = 1;
        q = q * 10 + (unsigned)(v[j] - '0');
      }
      h->seq = q;
      break;
    }
    case K_LESSON:
      if (!lesson_name_ok(v, vn))
        bad = 1;
      else {
        memcpy(h->lesson, v, vn);
        h->lesson[vn] = 0;
      }
      break;
    case K_STEP:
      bad = parse_int(v, vn, 1, 100000, &h->step) != 0;
      break;
    case K_STEPS:
      bad = parse_int(v, vn, 1, 100000, &h->steps) != 0;
      break;
    case K_FOCUS:
      bad = (h->focus = name_index(panels, v, vn)) < 0;
      break;
    case K_TAB:
      bad = (h->tab = name_index(panels, v, vn)) < 0;
      break;
    case K_CURSOR: {
      int rc[2];
      bad = parse_ints(v, vn, MAX_INDEX, rc, 2) != 2;
      h->cursor_row = bad ? 0 : rc[0];
      h->cursor_col = bad ? 0 : rc[1];
      break;
    }
    case K_ROWS:
      h->nrows = parse_ints(v, vn, MAX_INDEX, h->rows, CLS_MAX_PANELS);
      bad = h->nrows != np;
      break;
    case K_VIEW:
      bad = (h->view = name_index(cls_view_names, v, vn)) < 0;
      break;
    case K_XFIG:
      bad = parse_int(v, vn, 0, 1, &h->xfigure) != 0;
      break;
    case K_PANE: {
      static const long hi[5] = {1, 1000, 1, MAX_INDEX, 1};
      bad = parse_ints(v, vn, MAX_INDEX, h->pane, 5) != 5;
      for (int q = 0; q < 5 && !bad; q++) bad = h->pane[q] > hi[q];
      h->has_pane = !bad;
      break;
    }
    case K_NOTE:
      bad = vn >= sizeof h->note;
      for (size_t q = 0; q < vn && !bad; q++) bad = (unsigned char)v[q] < 0x20 || v[q] == 0x7f;
      if (!bad) {
        memcpy(h->note, v, vn);
        h->note[vn] = 0;
      }
      break;
    }
    if (bad) {
      snprintf(err, CLS_ERRLEN, "header line %d: a bad value for %s", line, keys[k]);
      return -1;
    }
  }
  if (!(seen & (1u << K_SEQ)) || !(seen & (1u << K_FOCUS))) {
    snprintf(err, CLS_ERRLEN, "the header lacks %s", seen & (1u << K_SEQ) ? "focus" : "seq");
    return -1;
  }
  int with_lesson = (seen & (1u << K_LESSON)) != 0;
  int panes = (seen >> K_PANE & 1) + (seen >> K_NOTE & 1);
  if (panes == 1 || (panes == 2 && !with_lesson)) {
    snprintf(err, CLS_ERRLEN, "pane and note go together, with a lesson");
    return -1;
  }
  int steps = (seen >> K_STEP & 1) + (seen >> K_STEPS & 1);
  if (with_lesson ? steps != 2 || h->step > h->steps : steps != 0) {
    snprintf(err, CLS_ERRLEN, "lesson, step and steps go together (1 <= step <= steps)");
    return -1;
  }
  *dump = payload + i;
  *dumplen = len - i;
  return 0;
}

/* ---- the reader ---- */

void cls_reader_init(cls_reader *r) {
  memset(r, 0, sizeof *r);
}

void cls_reader_free(cls_reader *r) {
  free(r->buf);
  memset(r, 0, sizeof *r);
}

static uint32_t head_len(const unsigned char *b) {
  return (uint32_t)b[8] << 24 | (uint32_t)b[9] << 16 | (uint32_t)b[10] << 8 | b[11];
}

/* Checks the head at the start of the buffer (its first min(len, 12) bytes). */
static int check_head(const cls_reader *r, char *err) {
  const unsigned char *b = r->buf;
  size_t n = r->len < CLS_HEAD ? r->len : CLS_HEAD;
  if (memcmp(b, CLS_MAGIC, n < 4 ? n : 4) != 0) {
    snprintf(err, CLS_ERRLEN, "not a normscope frame (bad magic)");
    return -1;
  }
  if (n > 4 && b[4] != CLS_VERSION) {
    snprintf(err, CLS_ERRLEN, "protocol version %d, this normscope speaks %d", b[4], CLS_VERSION);
    return -1;
  }
  if (n > 5 && b[5] != CLS_KIND_STATE && b[5] != CLS_KIND_BYE) {
    snprintf(err, CLS_ERRLEN, "unknown frame kind %d", b[5]);
    return -1;
  }
  if ((n > 6 && b[6]) || (n > 7 && b[7])) {
    snprintf(err, CLS_ERRLEN, "reserved bytes not zero");
    return -1;
  }
  if (n == CLS_HEAD) {
    uint32_t pl = head_len(b);
    if (pl > CLS_MAX_PAYLOAD) {
      snprintf(err, CLS_ERRLEN, "a frame of %lu bytes, over the %u-byte cap", (unsigned long)pl,
               (unsigned)CLS_MAX_PAYLOAD);
      return -1;
    }
    if (b[5] == CLS_KIND_BYE && pl != 0) {
      snprintf(err, CLS_ERRLEN, "a bye frame with a payload");
      return -1;
    }
  }
  return 0;
}

int cls_reader_feed(cls_reader *r, const void *data, size_t n, char *err) {
  if (r->broken) {
    snprintf(err, CLS_ERRLEN, "%s", r->why);
    return -1;
  }
  if (r->len + n + 1 > r->cap) {
    size_t cap = r->cap ? r->cap : 4096;
    while (cap < r->len + n + 1) cap *= 2;
    /* never more than a whole frame and the next head */
    if (cap > (size_t)CLS_MAX_PAYLOAD + 2 * CLS_HEAD + 65536 &&
        r->len + n + 1 <= (size_t)CLS_MAX_PAYLOAD + 2 * CLS_HEAD + 65536)
      cap = (size_t)CLS_MAX_PAYLOAD + 2 * CLS_HEAD + 65536;
    unsigned char *b = realloc(r->buf, cap);
    if (!b) {
      r->broken = 1;
      snprintf(err, CLS_ERRLEN, "out of memory");
      snprintf(r->why, sizeof r->why, "out of memory");
      return -1;
    }
    r->buf = b;
    r->cap = cap;
  }
  memcpy(r->buf + r->len, data, n);
  r->len += n;
  if (check_head(r, err) != 0) { /* early: a bad head needs no whole frame to be seen */
    r->broken = 1;
    snprintf(r->why, sizeof r->why, "%s", err);
    return -1;
  }
  return 0;
}

int cls_reader_next(cls_reader *r, int *kind, const char **payload, size_t *len, char *err) {
  if (r->broken) {
    snprintf(err, CLS_ERRLEN, "%s", r->why);
    return -1;
  }
  if (r->len == 0) return 0;
  if (check_head(r, err) != 0) { /* the head after a frame just dropped */
    r->broken = 1;
    snprintf(r->why, sizeof r->why, "%s", err);
    return -1;
  }
  if (r->len < CLS_HEAD) return 0;
  uint32_t pl = head_len(r->buf);
  if (r->len < CLS_HEAD + (size_t)pl) return 0;
  *kind = r->buf[5];
  *payload = (const char *)r->buf + CLS_HEAD;
  *len = pl;
  return 1;
}

void cls_reader_drop(cls_reader *r) {
  if (r->len < CLS_HEAD) return;
  size_t whole = CLS_HEAD + (size_t)head_len(r->buf);
  if (whole > r->len) return;
  memmove(r->buf, r->buf + whole, r->len - whole);
  r->len -= whole;
}
