/* cls_proto.h: the classroom's wire format, the one thing a teacher (normscope --broadcast)
 * and its followers (normscope follow) share. No sockets, no screen: frames in and out of
 * byte buffers, so the tests and a copy in another language (tests/class/hostile.py) can
 * speak it.
 *
 * A frame is a 12-byte head and a payload:
 *
 *   bytes 0-3   "NSCL"                        magic
 *   byte  4     CLS_VERSION (1)               a follower refuses another version
 *   byte  5     kind: 1 state, 2 bye          bye: the teacher ends the broadcast
 *   bytes 6-7   0                             reserved
 *   bytes 8-11  payload length, big-endian    at most CLS_MAX_PAYLOAD
 *
 * A state payload is UTF-8 text: header lines "key=value" up to an empty line, then the
 * explorer state exactly as dump() writes it (one set{...} chunk). The header keys, each
 * at most once, in any order (unknown keys are refused, so a change of meaning needs a new
 * version):
 *
 *   seq=N        the teacher's frame counter (decimal)                    required
 *   lesson=NAME  the lesson played: its file name without .lua, letters,
 *                digits and . _ - only (no path); absent: the plain explorer
 *   step=K       the lesson's current step, 1 <= K <= steps               with lesson
 *   steps=N      its number of steps                                      with lesson
 *   focus=PANEL  the focused panel (explore/panelfig.h's names)           required
 *   cursor=R,C   the matrix cursor, 0-based
 *   rows=A,B,..  the selected line of each panel, 0-based, one per panel
 *   tab=PANEL    the panel in the compact layout's shared slot
 *   view=NAME    the full-screen view: none, figure, or an experiment view
 *                (placement, backward, shift, stack)
 *   xfigure=0|1  with an experiment view: its figure instead
 *   pane=Q,H,F,S,G  with lesson: the lesson pane beyond its step: Q 1 while the step's
 *                question is asked (its set not applied yet), H the hints revealed, F 1
 *                when the step's figure is open, S the text's first line shown, G 1 when
 *                the verdict below is good
 *   note=TEXT    with pane: the pane's last verdict (an answer's, a prediction's truth),
 *                at most 399 bytes, no control characters
 *
 * A bye payload is empty. Framing errors (magic, version, kind, reserved bytes, a length
 * over the cap) cannot be skipped safely: the reader stops there. A frame that is well
 * framed but whose header or state is wrong is refused alone.
 *
 * Ownership: cls_frame_state returns a malloc'd frame the caller frees; a cls_reader owns
 * its buffer (cls_reader_free) and lends the frames it returns until the next call.
 */
#ifndef CLS_PROTO_H
#define CLS_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define CLS_MAGIC "NSCL"
#define CLS_VERSION 1
#define CLS_HEAD 12
/* A payload larger than this is refused (and ends the connection): 16 MiB. */
#define CLS_MAX_PAYLOAD ((uint32_t)16 << 20)
#define CLS_ERRLEN 256

enum { CLS_KIND_STATE = 1, CLS_KIND_BYE = 2 };

/* The view part of a state frame. */
#define CLS_MAX_PANELS 16
#define CLS_NAMELEN 128
typedef struct {
  unsigned long long seq;
  char lesson[CLS_NAMELEN]; /* "" without a lesson */
  int step, steps;
  int focus; /* index in the panel names */
  int cursor_row, cursor_col;
  int nrows, rows[CLS_MAX_PANELS];
  int tab;  /* panel index, -1 when absent */
  int view; /* index in cls_view_names (0 none) */
  int xfigure;
  int has_pane;   /* pane= and note= were given */
  int pane[5];    /* asking, hints, figure open, scroll, verdict good */
  char note[400]; /* the pane's verdict */
} cls_header;

/* The full-screen views a frame names, in the screen's order: "none", "figure", then the
 * experiment views; NULL-terminated. */
extern const char *const cls_view_names[];

/* A state frame: head, header lines from h, an empty line, then the dump text. malloc'd
 * (*len its size), or NULL with err (too large, out of memory). */
unsigned char *cls_frame_state(const cls_header *h, const char *const *panels, const char *dump,
                               size_t *len, char *err);
/* The 12 bytes of a bye frame. */
void cls_frame_bye(unsigned char out[CLS_HEAD]);

/* Reads the header of a state payload (its text up to the empty line) into h, checking
 * every value against panels (NULL-terminated names, at most CLS_MAX_PANELS); *dump points
 * to the state text after it. 0, or -1 with err naming the line. */
int cls_parse_state(const char *payload, size_t len, const char *const *panels, cls_header *h,
                    const char **dump, size_t *dumplen, char *err);

/* An incremental reader: bytes in (any split), whole frames out. */
typedef struct {
  unsigned char *buf;
  size_t len, cap;
  int broken;           /* a framing error was seen: nothing more is read */
  char why[CLS_ERRLEN]; /* what it was */
} cls_reader;

void cls_reader_init(cls_reader *r);
void cls_reader_free(cls_reader *r);
/* Appends n bytes. 0, or -1 with err on a framing error (then r->broken). */
int cls_reader_feed(cls_reader *r, const void *data, size_t n, char *err);
/* The next whole frame: 1 with *kind, *payload (lent, len bytes, not NUL-terminated) and
 * *len; 0 when none is complete yet; -1 with err on a framing error (then r->broken).
 * Call cls_reader_drop(r) after using a frame. */
int cls_reader_next(cls_reader *r, int *kind, const char **payload, size_t *len, char *err);
void cls_reader_drop(cls_reader *r);

#endif
