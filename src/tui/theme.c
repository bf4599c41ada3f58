/* theme.c: colours (none, 8, 256; blue-orange diverging), frames and text helpers. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/screen.h"
#include "tui/tui.h"

static int ncolors; /* 0, 8 or 256 */

/* Pairs: 1 + role for the plain roles, 32 + level index for the diverging palette. */
#define PAIR_ROLE(r) ((short)(1 + (r)))
#define PAIR_DIV(i) ((short)(32 + (i)))

/* The themes: foregrounds of the plain roles (8 and 256 colours), extra attributes, and
 * the diverging heatmap ramp (strong blue .. neutral .. strong orange). Positive is
 * orange and negative blue in every theme: the two ends of a diverging palette that stay
 * apart with any common colour-vision deficiency; marks are bold (and, without colour,
 * underlined) so they never rest on colour alone. */
#define NROLES (PLOT_S_FOCUS + 1)
_Static_assert(NROLES <= PLOT_S_DIV0, "the plain roles run into the diverging ones");
typedef struct {
  const char *name;
  short fg8[NROLES], fg256[NROLES];
  int bold[NROLES]; /* 1: the role is drawn bold */
  short bg256[PLOT_DIV_LEVELS], dfg256[PLOT_DIV_LEVELS];
} theme;

/* role order: TEXT AXIS LABEL TITLE POS NEG MARK GOOD DIM SERIES0..5 FOCUS. Each colour
 * means one thing: orange is a positive value, never the focus (bright white or black,
 * bold), magenta something to notice. */
#define W COLOR_WHITE
#define Y COLOR_YELLOW
#define B COLOR_BLUE
#define C COLOR_CYAN
#define M COLOR_MAGENTA
#define K COLOR_BLACK
#define R COLOR_RED
#define G COLOR_GREEN
static const theme themes[] = {
    {"dark",
     {-1, W, C, W, Y, B, M, C, W, Y, B, W, M, G, R, W},
     {-1, 244, 110, 255, 208, 33, 201, 45, 245, 214, 39, 250, 170, 113, 180, 231},
     {0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1},
     {18, 25, 32, 110, -1, 223, 215, 208, 166},
     {231, 231, 231, 16, -1, 16, 16, 16, 231}},
    /* for a light background: dark inks, the same hue pair */
    {"light",
     {-1, K, B, K, R, B, M, B, K, R, B, K, M, G, Y, K},
     {-1, 242, 24, 232, 166, 25, 125, 30, 242, 130, 25, 238, 90, 28, 94, 16},
     {0, 0, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1},
     {18, 25, 74, 153, -1, 223, 215, 208, 166},
     {231, 231, 16, 16, -1, 16, 16, 16, 231}},
    /* high contrast: saturated inks, bold signs, no grey that washes out on a projector */
    {"contrast",
     {-1, W, C, W, Y, C, M, G, W, Y, C, W, M, G, R, W},
     {-1, 255, 51, 231, 214, 45, 201, 118, 252, 214, 45, 231, 201, 118, 226, 231},
     {0, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1},
     {17, 19, 27, 117, -1, 229, 220, 208, 202},
     {231, 231, 231, 16, -1, 16, 16, 16, 16}},
};
#undef W
#undef Y
#undef B
#undef C
#undef M
#undef K
#undef R
#undef G

const char *const tui_theme_names[] = {"dark", "light", "contrast", NULL};

int tui_theme_find(const char *name) {
  for (int i = 0; tui_theme_names[i]; i++)
    if (name && strcmp(name, tui_theme_names[i]) == 0) return i;
  return -1;
}

static const theme *cur = &themes[0];

int tui_theme_init(int want_color, int which) {
  ncolors = 0;
  cur = &themes[which >= 0 && which < (int)(sizeof themes / sizeof themes[0]) ? which : 0];
  if (!want_color || !has_colors()) return 0;
  if (start_color() == ERR) return 0;
  use_default_colors();
  ncolors = COLORS >= 256 ? 256 : 8;
  int big = ncolors == 256;
  for (int role = 0; role < NROLES; role++)
    init_pair(PAIR_ROLE(role), big ? cur->fg256[role] : cur->fg8[role], -1);
  static const short bg8[PLOT_DIV_LEVELS] = {COLOR_BLUE,   COLOR_BLUE,   COLOR_BLUE,  -1, -1, -1,
                                             COLOR_YELLOW, COLOR_YELLOW, COLOR_YELLOW};
  static const short fg8[PLOT_DIV_LEVELS] = {COLOR_WHITE,  COLOR_WHITE, COLOR_WHITE, COLOR_BLUE, -1,
                                             COLOR_YELLOW, COLOR_BLACK, COLOR_BLACK, COLOR_BLACK};
  for (int i = 0; i < PLOT_DIV_LEVELS; i++)
    init_pair(PAIR_DIV(i), big ? cur->dfg256[i] : fg8[i], big ? cur->bg256[i] : bg8[i]);
  return ncolors;
}

short tui_pair(int style) {
  int role = PLOT_ROLE(style);
  if (!ncolors) return 0;
  if (role >= PLOT_S_DIV0 && role < PLOT_S_DIV0 + PLOT_DIV_LEVELS)
    return PAIR_DIV(role - PLOT_S_DIV0);
  if (role < NROLES) return PAIR_ROLE(role);
  return 0;
}

attr_t tui_attr(int style) {
  int role = PLOT_ROLE(style);
  attr_t a = A_NORMAL;
  if (style & PLOT_F_REVERSE) a |= A_REVERSE;
  if (style & PLOT_F_BOLD) a |= A_BOLD;
  if (style & PLOT_F_UNDERLINE) a |= A_UNDERLINE;
  if (role == PLOT_S_TITLE || role == PLOT_S_MARK) a |= A_BOLD;
  if (ncolors && role < NROLES && cur->bold[role]) a |= A_BOLD;
  if (!ncolors) {
    /* Without colour, strong diverging levels show in reverse video; marks are bold
     * and underlined so a flip or a disagreement still stands out. */
    if (role == PLOT_S_MARK) a |= A_UNDERLINE;
    if (role == PLOT_S_DIM) a |= A_DIM;
    if (role >= PLOT_S_DIV0 && role < PLOT_S_DIV0 + PLOT_DIV_LEVELS) {
      int level = role - PLOT_S_DIV0 - PLOT_DIV_MID;
      if (level <= -3 || level >= 3) a |= A_REVERSE;
    }
    return a;
  }
  return a | COLOR_PAIR(tui_pair(style));
}

int tui_iw(WINDOW *w) {
  return getmaxx(w) - 2;
}
int tui_ih(WINDOW *w) {
  return getmaxy(w) - 2;
}

/* Bytes of the longest prefix of s that is at most `cells` code points. */
static size_t utf8_prefix(const char *s, int cells) {
  size_t cut = 0;
  for (int k = 0; s[cut] && k < cells; k++) {
    uint32_t cp;
    cut += (size_t)plot_utf8_decode(s + cut, &cp);
  }
  return cut;
}

int tui_title_room(WINDOW *w, const tui_view *v) {
  return getmaxx(w) - 5 - (v->focused ? 2 : 0);
}

void tui_frame(WINDOW *w, const char *title, const tui_view *v) {
  attr_t a = v->focused ? (A_BOLD | (ncolors ? COLOR_PAIR(PAIR_ROLE(PLOT_S_FOCUS)) : 0))
                        : (ncolors ? COLOR_PAIR(PAIR_ROLE(PLOT_S_AXIS)) : A_NORMAL);
  wattrset(w, a);
  if (v->ascii) {
    wborder(w, '|', '|', '-', '-', '+', '+', '+', '+');
  } else {
    /* Unicode box characters directly (not the alternate character set), so the frame
     * reads the same in every UTF-8 terminal and in tmux's captures. */
    static const wchar_t g[6] = {0x2502, 0x2500, 0x256D, 0x256E, 0x2570, 0x256F};
    cchar_t c[6];
    for (int i = 0; i < 6; i++) {
      wchar_t wc[2] = {g[i], 0};
      setcchar(&c[i], wc, a, PAIR_NUMBER(a), NULL);
    }
    wborder_set(w, &c[0], &c[0], &c[1], &c[1], &c[2], &c[3], &c[4], &c[5]);
  }
  wattrset(w, A_NORMAL);
  if (title) {
    /* clip to the frame: a title must never wrap into the panel; a cut one ends in an
     * ellipsis, and the focus marker stays after it */
    const char *mark = v->focused ? (v->ascii ? " <" : " \u25c0") : "";
    int room = tui_title_room(w, v) + 1; /* with the space before the title */
    char buf[200];
    snprintf(buf, sizeof buf, " %s", title);
    if (buf[utf8_prefix(buf, room)]) {
      size_t cut = utf8_prefix(buf, room - 2);
      snprintf(buf + cut, sizeof buf - cut, "%s", v->ascii ? "~" : "\u2026");
    }
    size_t l = strlen(buf);
    snprintf(buf + l, sizeof buf - l, "%s ", mark);
    wattrset(w, a | A_BOLD);
    if (room > 0) mvwaddstr(w, 0, 2, buf);
    wattrset(w, A_NORMAL);
  }
}

/* Bytes of s to print in `room` cells: all of it when it fits, else up to the last space
 * before the room runs out, so a line never ends in the middle of a number. A label and
 * its value are glued with TUI_GLUE (drawn as a space), so they go together. A single
 * word longer than the room is cut. */
static size_t fit(const char *s, int room) {
  size_t cut = utf8_prefix(s, room);
  if (!s[cut] || room <= 0) return cut;
  for (size_t b = cut; b > 0; b--)
    if (s[b] == ' ' && s[b - 1] != ' ') return b;
  return cut;
}

void tui_puts(WINDOW *w, int y, int x, int style, const char *s) {
  int maxx = getmaxx(w) - 1; /* keep off the right frame */
  if (y < 1 || y >= getmaxy(w) - 1 || x >= maxx) return;
  wattrset(w, tui_attr(style));
  int col = x;
  const char *end = s + fit(s, maxx - x);
  while (s < end && col < maxx) {
    uint32_t cp;
    int n = plot_utf8_decode(s, &cp);
    if (cp >= 128 && cp != 0xFFFD) {
      wchar_t wc[2] = {(wchar_t)cp, 0};
      cchar_t cc;
      setcchar(&cc, wc, tui_attr(style), tui_pair(style), NULL);
      mvwadd_wch(w, y, col, &cc);
    } else {
      mvwaddch(w, y, col, cp == TUI_GLUE ? ' ' : cp < 32 || cp == 0xFFFD ? '?' : (chtype)cp);
    }
    s += n;
    col++;
  }
  wattrset(w, A_NORMAL);
}

void tui_printf(WINDOW *w, int y, int x, int style, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  tui_puts(w, y, x, style, buf);
}

void tui_blit(WINDOW *w, int y, int x, const plot_canvas *c) {
  int maxy = getmaxy(w) - 1, maxx = getmaxx(w) - 1;
  for (int r = 0; r < c->h && y + r < maxy; r++)
    for (int q = 0; q < c->w && x + q < maxx; q++) {
      const plot_cell *cell = &c->cells[(size_t)r * (size_t)c->w + (size_t)q];
      uint32_t ch = cell->ch ? cell->ch : ' ';
      if (!cell->ch && cell->style == 0) continue;
      wchar_t wc[2] = {(wchar_t)ch, 0};
      cchar_t cc;
      setcchar(&cc, wc, tui_attr(cell->style), tui_pair(cell->style), NULL);
      mvwadd_wch(w, y + r, x + q, &cc);
    }
}

plot_canvas *tui_canvas(int w, int h, const tui_view *v) {
  plot_canvas *c = plot_canvas_new(w, h, v->ascii);
  if (c) c->color = v->colors > 0;
  return c;
}

const char *tui_num_prec(double v, int prec, char *buf, size_t len) {
  if (isnan(v))
    snprintf(buf, len, "nan");
  else if (isinf(v))
    snprintf(buf, len, v < 0 ? "-inf" : "inf");
  else if (v == 0)
    snprintf(buf, len, "0");
  else
    snprintf(buf, len, "%.*g", prec, v);
  return buf;
}

const char *tui_num(double v, char *buf, size_t len) {
  return tui_num_prec(v, 6, buf, len);
}

const char *tui_rank(int rank, size_t n, char *buf, size_t len) {
  snprintf(buf, len, "rank" TUI_GLUES "%d" TUI_GLUES "of" TUI_GLUES "%zu", rank, n);
  return buf;
}

/* ---- statistics lines (tui_fields) ---- */
/* The forms tried at each number of digits, roomiest first: the line breaks the fields
 * ask for and two spaces between fields; one space; no breaks; the short forms. */
enum { FORM_BREAKS2, FORM_BREAKS1, FORM_FLOW, FORM_SHORT, FORM_COUNT };
_Static_assert(TUI_FIELDS_ROOMY == 4 * FORM_COUNT && TUI_FIELDS_DIGITS(TUI_FIELDS_ROOMY) == 6 &&
                   TUI_FIELDS_DIGITS(1) == 3,
               "tui_fields_fit's quality: FORM_COUNT forms for each of 6..3 digits");
#define FIELDS_MAX 16

static int cells(const char *s) {
  int k = 0;
  for (uint32_t cp; *s; k++) s += plot_utf8_decode(s, &cp);
  return k;
}

/* Field f as drawn at prec digits in form (label, a glued space, value); its cells, or 0
 * when the form leaves it out. */
static int field_str(const tui_field *f, int prec, int form, char *buf, size_t len) {
  int shrt = form == FORM_SHORT;
  if (shrt && f->opt) return 0;
  const char *label = shrt && f->shrt ? f->shrt : f->label;
  char num[40];
  const char *val = shrt && f->shrt_text ? f->shrt_text
                    : f->text            ? f->text
                                         : tui_num_prec(f->v, prec, num, sizeof num);
  if (label && label[0])
    snprintf(buf, len, "%s" TUI_GLUES "%s", label, val);
  else
    snprintf(buf, len, "%s", val);
  return cells(buf);
}

/* Places fields in lines of width cells: line[i] and col[i] of field i (line -1: not
 * shown). Returns the lines used, or 0 when a field did not fit (*placed: the fields
 * before it). */
static int fields_place(int width, int maxlines, const tui_field *f, int n, int prec, int form,
                        int *line, int *col, int *placed) {
  int sep = form == FORM_BREAKS2 ? 2 : 1, ln = 0, used = 0;
  *placed = 0;
  for (int i = 0; i < n; i++) line[i] = -1;
  for (int i = 0; i < n; i++) {
    char buf[160];
    int len = field_str(&f[i], prec, form, buf, sizeof buf);
    if (!len) {
      *placed = i + 1;
      continue;
    }
    if (used > 0 && ((f[i].brk && form <= FORM_BREAKS1) || used + sep + len > width))
      ln++, used = 0;
    if (ln >= maxlines || len > width) return 0;
    line[i] = ln;
    col[i] = used ? used + sep : 0;
    used = col[i] + len;
    *placed = i + 1;
  }
  return ln + 1;
}

/* The roomiest layout that fits: its lines (0: none), digits and form. */
static int fields_best(int width, int maxlines, const tui_field *f, int n, int *line, int *col,
                       int *prec, int *form) {
  int placed;
  for (int p = 6; p >= 3; p--)
    for (int fm = 0; fm < FORM_COUNT; fm++) {
      int lines = fields_place(width, maxlines, f, n, p, fm, line, col, &placed);
      if (lines) {
        *prec = p, *form = fm;
        return lines;
      }
    }
  *prec = 3, *form = FORM_SHORT;
  return 0;
}

int tui_fields_fit(int width, int maxlines, const tui_field *f, int n, int *quality) {
  int line[FIELDS_MAX], col[FIELDS_MAX], p, form;
  if (n > FIELDS_MAX) n = FIELDS_MAX;
  int lines = fields_best(width, maxlines, f, n, line, col, &p, &form);
  if (quality) *quality = lines ? (p - 3) * FORM_COUNT + (FORM_COUNT - form) : 0;
  return lines;
}

/* The column after the last field shown before field `upto`, and its line (-1: none). */
static int fields_end(const tui_field *f, int upto, int prec, int form, const int *line,
                      const int *col, int *end) {
  char buf[160];
  for (int i = upto - 1; i >= 0; i--)
    if (line[i] >= 0) {
      *end = col[i] + field_str(&f[i], prec, form, buf, sizeof buf);
      return line[i];
    }
  *end = 0;
  return -1;
}

int tui_fields(WINDOW *w, int y, int x, int width, int maxlines, const tui_field *f, int n) {
  int line[FIELDS_MAX], col[FIELDS_MAX], prec, form, placed = n;
  if (n > FIELDS_MAX) n = FIELDS_MAX;
  int lines = fields_best(width, maxlines, f, n, line, col, &prec, &form);
  char more[24] = "";
  int mline = 0, mcol = 0;
  if (!lines) { /* the most compact form, as many fields as leave room for the marker */
    fields_place(width, maxlines, f, n, prec, form, line, col, &placed);
    for (;;) {
      int left = 0;
      char tmp[160];
      for (int i = placed; i < n; i++) left += field_str(&f[i], prec, form, tmp, sizeof tmp) > 0;
      snprintf(more, sizeof more, "(%d more)", left);
      int end, last = fields_end(f, placed, prec, form, line, col, &end);
      if (last < 0)
        mline = 0, mcol = 0;
      else if (end + 1 + cells(more) <= width)
        mline = last, mcol = end + 1;
      else if (last + 1 < maxlines)
        mline = last + 1, mcol = 0;
      else {
        line[--placed] = -1;
        continue;
      }
      break;
    }
    lines = mline + 1;
  }
  char buf[160];
  for (int i = 0; i < placed; i++)
    if (line[i] >= 0 && field_str(&f[i], prec, form, buf, sizeof buf))
      tui_puts(w, y + line[i], x + col[i], f[i].style, buf);
  if (more[0]) tui_puts(w, y + mline, x + mcol, PLOT_S_DIM, more);
  return lines;
}

/* The length of the next wrapped line of text from `at`: up to the last space that keeps
 * it within width, or width characters when a word is longer. */
static size_t wrap_line(const char *text, size_t at, size_t len, int width) {
  size_t n = len - at;
  if (n > (size_t)width) {
    n = (size_t)width;
    while (n > 0 && text[at + n] != ' ') n--;
    if (n == 0) n = (size_t)width;
  }
  return n;
}

/* The start of the line after one of n characters from `at`: its spaces are skipped. */
static size_t wrap_next(const char *text, size_t at, size_t n) {
  at += n;
  while (text[at] == ' ') at++;
  return at;
}

int tui_wrap(WINDOW *w, int y, int x, int style, const char *text, int maxlines) {
  int width = getmaxx(w) - 1 - x, used = 0;
  size_t len = strlen(text), at = 0;
  if (width < 8) return 0;
  while (at < len && used < maxlines) {
    size_t n = wrap_line(text, at, len, width);
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)n, text + at);
    tui_puts(w, y + used, x, style, line);
    used++;
    at = wrap_next(text, at, n);
  }
  return used;
}

int tui_wrap_lines(WINDOW *w, int x, const char *text) {
  int width = getmaxx(w) - 1 - x, lines = 0;
  size_t len = strlen(text), at = 0;
  if (width < 8) return 0;
  while (at < len) {
    at = wrap_next(text, at, wrap_line(text, at, len, width));
    lines++;
  }
  return lines;
}
