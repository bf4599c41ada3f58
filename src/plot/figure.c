/* figure.c: what every figure shares: options, round ticks, the two-axis frame, legend,
 * notes in words, and the canvas as ANSI-coloured text. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot/figure_priv.h"

const char *const plot_glyph_names[] = {"blocks", "braille", "ascii", NULL};

void plot_opts_init(plot_opts *o) {
  memset(o, 0, sizeof *o);
  o->width = 64;
  o->height = 16;
  o->glyphs = PLOT_GLYPHS_BLOCKS;
  o->legend = -1;
  o->values = -1;
}

/* ---- ticks ---- */

/* The one of 1, 2, 5 times a power of ten closest to raw (> 0, geometrically). */
static double nice_step(double raw) {
  double mag = pow(10, floor(log10(raw)));
  double f = raw / mag;
  return (f < 1.5 ? 1 : f < 3.2 ? 2 : f < 7 ? 5 : 10) * mag;
}

/* The next larger of 1, 2, 5 times a power of ten. */
static double next_step(double step) {
  double mag = pow(10, floor(log10(step) + 1e-9));
  double f = step / mag;
  return (f < 1.5 ? 2 : f < 3.5 ? 5 : 10) * mag;
}

static void tick_label(char *buf, size_t len, double v, double step) {
  if (v == 0) v = 0; /* no "-0" */
  double big = fabs(v);
  if (big >= 1e6 || step < 1e-4) {
    if (v == 0) {
      snprintf(buf, len, "0");
      return;
    }
    /* enough significant digits to tell neighbouring ticks apart */
    int sig = (int)ceil(log10(big / step) - 1e-9) + 1;
    if (sig < 1) sig = 1;
    if (sig > 11) sig = 11;
    snprintf(buf, len, "%.*g", sig, v);
    return;
  }
  int d = (int)-floor(log10(step) + 1e-9);
  if (d < 0) d = 0;
  snprintf(buf, len, "%.*f", d, v);
}

static void decade_label(char *buf, size_t len, int e) {
  if (e >= -3 && e <= 4)
    snprintf(buf, len, "%g", pow(10, e));
  else
    snprintf(buf, len, "1e%d", e);
}

void plot_axis_make(plot_axis *a, double lo, double hi, int log, int target, int keep) {
  memset(a, 0, sizeof *a);
  a->log = log;
  if (target < 2) target = 2;
  if (target > PLOT_MAXTICKS - 2) target = PLOT_MAXTICKS - 2;
  /* what callers should never pass: non-finite ends, a log axis reaching 0, a span that
   * overflows */
  if (!isfinite(lo) || !isfinite(hi)) lo = 0, hi = 1;
  if (log && !(hi > 0)) hi = 1;
  if (log && !(lo > 0)) lo = hi / 1000;
  if (!log) {
    lo = fmax(lo, -1e300);
    hi = fmin(hi, 1e300);
  }
  /* callers widen constants; this guards them, and ranges too narrow for doubles to
   * tell their ticks apart */
  if (!(hi - lo > 1e-8 * fmax(fabs(lo), fabs(hi)))) {
    double d = lo == 0 ? 1 : fabs(lo) * 0.1;
    if (log) {
      lo /= 2, hi = lo * 4;
    } else {
      lo -= d, hi = lo + 2 * d;
    }
  }
  if (log) {
    double l0 = log10(lo), l1 = log10(hi);
    int e0 = (int)floor(l0 + 1e-9), e1 = (int)ceil(l1 - 1e-9);
    if (e1 <= e0) e1 = e0 + 1;
    if (keep) {
      a->lo = lo, a->hi = hi;
    } else {
      a->lo = pow(10, e0), a->hi = pow(10, e1);
    }
    int span = e1 - e0, ds = 1;
    while (span / ds + 1 > target) ds++;
    for (int e = e0; e <= e1 && a->n < PLOT_MAXTICKS; e++) {
      if (((e % ds) + ds) % ds) continue;
      double v = pow(10, e);
      if (v < a->lo * (1 - 1e-9) || v > a->hi * (1 + 1e-9)) continue;
      a->v[a->n] = v;
      decade_label(a->label[a->n], sizeof a->label[0], e);
      a->n++;
    }
    return;
  }
  double step = nice_step((hi - lo) / (target - 1));
  double k0 = floor(lo / step + 1e-9), k1 = ceil(hi / step - 1e-9);
  while (k1 - k0 + 1 > target + 2 || k1 - k0 + 1 > PLOT_MAXTICKS) {
    step = next_step(step);
    k0 = floor(lo / step + 1e-9), k1 = ceil(hi / step - 1e-9);
  }
  if (keep) {
    a->lo = lo, a->hi = hi;
  } else {
    a->lo = k0 * step, a->hi = k1 * step;
  }
  for (double k = k0; k <= k1 && a->n < PLOT_MAXTICKS; k++) {
    double v = k * step;
    if (v < a->lo - 1e-9 * step || v > a->hi + 1e-9 * step) continue;
    a->v[a->n] = v;
    tick_label(a->label[a->n], sizeof a->label[0], v, step);
    a->n++;
  }
}

double plot_axis_frac(const plot_axis *a, double v) {
  if (a->log) return (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
  return (v - a->lo) / (a->hi - a->lo);
}

double plot_quantile(const double *s, size_t n, double q) {
  if (n == 1) return s[0];
  double pos = q * (double)(n - 1);
  size_t i = (size_t)floor(pos);
  if (i >= n - 1) return s[n - 1];
  double t = pos - (double)i;
  return s[i] + t * (s[i + 1] - s[i]);
}

/* ---- the figure ---- */

int fig_start(fig *f, const plot_opts *o, char *err) {
  memset(f, 0, sizeof *f);
  f->o = o;
  f->W = o->width < 1 ? 1 : o->width;
  f->H = o->height < 1 ? 1 : o->height;
  f->ascii = o->glyphs == PLOT_GLYPHS_ASCII;
  f->braille = o->glyphs == PLOT_GLYPHS_BRAILLE;
  f->c = plot_canvas_new(f->W, f->H, f->ascii);
  if (!f->c) {
    if (err) snprintf(err, PLOT_ERRLEN, "out of memory for a %d x %d figure", f->W, f->H);
    return -1;
  }
  f->c->color = 0;
  return 0;
}

void fig_note(fig *f, const char *fmt, ...) {
  size_t len = strlen(f->note);
  if (len && len + 2 < sizeof f->note) {
    memcpy(f->note + len, "; ", 3);
    len += 2;
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->note + len, sizeof f->note - len, fmt, ap);
  va_end(ap);
}

void fig_note_left_out(fig *f, size_t nan, size_t inf, size_t nonpos, size_t outside,
                       const char *what) {
  /* singular of "values"/"points": drop the final s */
  char one[32];
  snprintf(one, sizeof one, "%.*s", (int)strlen(what) - 1, what);
  if (nan) fig_note(f, "%zu NaN %s left out", nan, nan == 1 ? one : what);
  if (inf) fig_note(f, "%zu Inf %s left out", inf, inf == 1 ? one : what);
  if (nonpos) fig_note(f, "%zu %s <= 0 left out (log axis)", nonpos, nonpos == 1 ? one : what);
  if (outside) fig_note(f, "%zu %s outside the range left out", outside, outside == 1 ? one : what);
}

/* Code points of a UTF-8 string (one cell each: plot_put keeps it so). */
static int cells(const char *s) {
  int n = 0;
  while (*s) {
    uint32_t cp;
    s += plot_utf8_decode(s, &cp);
    n++;
  }
  return n;
}

/* Bytes of the next line of text wrapped at w cells: up to the last space that fits
 * (or w cells when a word is longer). *skip gets the bytes to skip after it. */
static size_t wrap_line(const char *s, int w, size_t *skip) {
  size_t i = 0, brk = 0;
  int n = 0;
  while (s[i] && n < w) {
    uint32_t cp;
    int b = plot_utf8_decode(s + i, &cp);
    if (cp == ' ') brk = i;
    i += (size_t)b;
    n++;
  }
  if (!s[i]) {
    *skip = 0;
    return i;
  }
  if (s[i] == ' ') {
    *skip = 1;
    return i;
  }
  if (brk > 0) {
    *skip = 1;
    return brk;
  }
  *skip = 0;
  return i;
}

int fig_wrap_rows(const char *s, int w) {
  int rows = 0;
  if (w < 1) w = 1;
  while (s && *s) {
    size_t skip, n = wrap_line(s, w, &skip);
    s += n + skip;
    rows++;
  }
  return rows;
}

int fig_wrap(fig *f, int y, const char *s, int style, int maxrows) {
  int rows = 0;
  char line[1024];
  while (s && *s && rows < maxrows) {
    size_t skip, n = wrap_line(s, f->W, &skip);
    if (n >= sizeof line) n = sizeof line - 1;
    memcpy(line, s, n);
    line[n] = 0;
    plot_text(f->c, 0, y + rows, f->W, line, style);
    s += n + skip;
    rows++;
  }
  return rows;
}

size_t fig_fit(fig *f, int fixed, size_t total, const char *noun) {
  char base[FIG_NOTELEN];
  snprintf(base, sizeof base, "%s", f->note);
  size_t shown = total;
  for (;;) {
    snprintf(f->note, sizeof f->note, "%s", base);
    if (shown < total) fig_note(f, "%zu %s left out (height %d)", total - shown, noun, f->H);
    if (shown <= 1 || fixed + (int)shown + fig_wrap_rows(f->note, f->W) <= f->H) break;
    shown--;
  }
  return shown;
}

int fig_want_legend(const fig *f, int n, int labelled) {
  if (f->o->legend >= 0) return f->o->legend;
  return n > 1 || labelled;
}

/* Lays out legend entries in rows of the figure's width; with draw, writes them from
 * row y. Returns the rows used. An entry longer than the width is cut. */
static int legend_pass(fig *f, int y, const fig_entry *e, int n, int draw) {
  int rows = n > 0, x = 0;
  for (int i = 0; i < n; i++) {
    int gl = cells(e[i].glyph), len = gl + (gl > 0) + cells(e[i].name);
    if (x > 0 && x + 2 + len > f->W) {
      rows++;
      x = 0;
    } else if (x > 0) {
      x += 2;
    }
    if (draw) {
      int r = y + rows - 1;
      int g = plot_text(f->c, x, r, f->W - x, e[i].glyph, e[i].style);
      g += g > 0; /* a space after the glyph */
      plot_text(f->c, x + g, r, f->W - x - g, e[i].name, PLOT_S_TEXT);
    }
    x += len;
  }
  return rows;
}

int fig_legend_rows(const fig *f, const fig_entry *e, int n) {
  return legend_pass((fig *)f, 0, e, n, 0);
}

int fig_legend(fig *f, int y, const fig_entry *e, int n) {
  return legend_pass(f, y, e, n, 1);
}

int fig_heading(fig *f, int with_ylabel) {
  int y = 0;
  if (f->o->title && *f->o->title) {
    int len = cells(f->o->title);
    int x = len < f->W ? (f->W - len) / 2 : 0;
    plot_text(f->c, x, y++, f->W - x, f->o->title, PLOT_S_TITLE | PLOT_F_BOLD);
  }
  if (with_ylabel && f->o->ylabel && *f->o->ylabel)
    plot_text(f->c, 0, y++, f->W, f->o->ylabel, PLOT_S_LABEL);
  return y;
}

int fig_notes(fig *f, int y) {
  return y + fig_wrap(f, y, f->note, PLOT_S_DIM, f->H - y);
}

plot_canvas *fig_finish(fig *f, int rows) {
  if (rows < 1) rows = 1;
  if (rows < f->c->h) f->c->h = rows; /* the cells beyond stay allocated, unused */
  /* drop trailing rows that hold nothing */
  while (f->c->h > 1) {
    int y = f->c->h - 1, blank = 1;
    for (int x = 0; x < f->c->w && blank; x++) {
      uint32_t ch = f->c->cells[(size_t)y * (size_t)f->c->w + (size_t)x].ch;
      blank = !ch || ch == ' ';
    }
    if (!blank) break;
    f->c->h--;
  }
  return f->c;
}

plot_canvas *fig_empty(fig *f, const char *why) {
  int y = fig_heading(f, 0);
  y += fig_wrap(f, y, why, PLOT_S_MARK, f->H - y);
  y = fig_notes(f, y);
  return fig_finish(f, y);
}

/* ---- markers and series ---- */

static const char *const markers_u[PLOT_MARKERS] = {"\u25cf", "\u25cb", "\u25c6", "\u25b3",
                                                    "\u00d7", "\u25a1", "\u25bd", "\u25c7"};
static const char *const markers_a[PLOT_MARKERS] = {"*", "o", "+", "x", "#", "@", "v", "%"};

const char *fig_marker(const fig *f, int k) {
  k %= PLOT_MARKERS;
  return f->ascii ? markers_a[k] : markers_u[k];
}

uint32_t fig_marker_cp(const fig *f, int k) {
  uint32_t cp;
  plot_utf8_decode(fig_marker(f, k), &cp);
  return cp;
}

int fig_series_style(int k) {
  static const int st[PLOT_MAXSERIES] = {PLOT_S_SERIES0, PLOT_S_SERIES1, PLOT_S_SERIES2,
                                         PLOT_S_SERIES3, PLOT_S_SERIES4, PLOT_S_SERIES5};
  return st[k % PLOT_MAXSERIES];
}

const char *fig_label(const fig *f, int k, const char *own, char *buf, size_t len) {
  if (own && *own) return own;
  if (f->o->labels && (size_t)k < f->o->nlabels && f->o->labels[k]) return f->o->labels[k];
  snprintf(buf, len, "series %d", k + 1);
  return buf;
}

char *fig_num(double v, int width, char *buf, size_t len) {
  if (v == 0) v = 0; /* -0 prints as 0 */
  plot_fmt(v, width, buf, len);
  if (strcmp(buf, "-0") == 0) snprintf(buf, len, "0");
  return buf;
}

/* ---- the two-axis frame ---- */

int fig_px(const fig_frame *fr, double x) {
  double t = plot_axis_frac(&fr->ax, x);
  int n = fr->pw * fr->sx;
  long p = lround(t * (n - 1));
  if (p < 0) p = 0;
  if (p > n - 1) p = n - 1;
  return (int)p;
}

int fig_py(const fig_frame *fr, double y) {
  double t = plot_axis_frac(&fr->ay, y);
  int n = fr->ph * fr->sy;
  long p = lround((1 - t) * (n - 1));
  if (p < 0) p = 0;
  if (p > n - 1) p = n - 1;
  return (int)p;
}

int fig_frame_make(fig *f, fig_frame *fr, double xlo, double xhi, int xlog, int xkeep, double ylo,
                   double yhi, int ylog, int ykeep, int legend_rows) {
  memset(fr, 0, sizeof *fr);
  const plot_opts *o = f->o;
  int has_ylabel = o->ylabel && *o->ylabel;
  int top = (o->title && *o->title ? 1 : 0) + (has_ylabel ? 1 : 0);
  int xl = o->xlabel && *o->xlabel ? 1 : 0;
  int notes = fig_wrap_rows(f->note, f->W);
  fr->ph = f->H - top - 2 - xl - legend_rows - notes;
  if (fr->ph < 2) {
    /* give up the notes before the plot */
    fr->ph = f->H - top - 2 - xl - legend_rows;
    notes = 0;
  }
  fr->sx = f->braille ? 2 : 1;
  fr->sy = f->braille ? 4 : f->ascii ? 1 : 2;
  plot_axis_make(&fr->ay, ylo, yhi, ylog, fr->ph >= 2 ? fr->ph / 2 + 1 : 2, ykeep);
  int lw = 1;
  for (int i = 0; i < fr->ay.n; i++)
    if ((int)strlen(fr->ay.label[i]) > lw) lw = (int)strlen(fr->ay.label[i]);
  fr->axis = lw;
  fr->pw = f->W - lw - 1;
  if (fr->ph < 2 || fr->pw < 4) {
    char why[128];
    snprintf(why, sizeof why, "too small to draw: %d x %d cells", f->W, f->H);
    fig_empty(f, why);
    return -1;
  }
  fr->top = fig_heading(f, 1);
  /* x ticks: labels need room, about one per 10 columns */
  int target = fr->pw / 8 + 1;
  /* indices: at most one tick a whole number, so the step is 1, 2, 5 ... never 0.2 */
  if (o->xint && !xlog && xhi - xlo + 1 < target)
    target = xhi - xlo + 1 < 2 ? 2 : (int)(xhi - xlo + 1);
  plot_axis_make(&fr->ax, xlo, xhi, xlog, target, xkeep);
  if (fr->ax.n < 2 && xkeep) plot_axis_make(&fr->ax, xlo, xhi, xlog, target, 0);
  int axrow = fr->top + fr->ph;
  uint32_t vbar = f->ascii ? '|' : 0x2502, vtick = f->ascii ? '+' : 0x2524;
  uint32_t hbar = f->ascii ? '-' : 0x2500, htick = f->ascii ? '+' : 0x252c;
  for (int r = 0; r < fr->ph; r++) plot_put(f->c, fr->axis, fr->top + r, vbar, PLOT_S_AXIS);
  int lastrow = -1;
  for (int i = 0; i < fr->ay.n; i++) {
    int row = fr->top + fig_py(fr, fr->ay.v[i]) / fr->sy;
    if (row == lastrow) continue;
    plot_put(f->c, fr->axis, row, vtick, PLOT_S_AXIS);
    plot_printf(f->c, 0, row, lw, PLOT_S_LABEL, "%*s", lw, fr->ay.label[i]);
    lastrow = row;
  }
  plot_put(f->c, fr->axis, axrow, f->ascii ? '+' : 0x2514, PLOT_S_AXIS);
  for (int q = 0; q < fr->pw; q++) plot_put(f->c, fr->axis + 1 + q, axrow, hbar, PLOT_S_AXIS);
  int lastend = -1;
  for (int i = 0; i < fr->ax.n; i++) {
    int col = fr->axis + 1 + fig_px(fr, fr->ax.v[i]) / fr->sx;
    int len = (int)strlen(fr->ax.label[i]);
    int start = col - len / 2;
    if (start < 0) start = 0;
    if (start + len > f->W) start = f->W - len;
    plot_put(f->c, col, axrow, htick, PLOT_S_AXIS);
    if (start <= lastend + 1 && lastend >= 0) continue;
    plot_text(f->c, start, axrow + 1, len, fr->ax.label[i], PLOT_S_LABEL);
    lastend = start + len - 1;
  }
  fr->below = axrow + 2;
  if (xl) {
    int len = cells(o->xlabel);
    int x = len < f->W ? fr->axis + 1 + (fr->pw - len) / 2 : 0;
    if (x < 0 || x + len > f->W) x = len < f->W ? f->W - len : 0;
    plot_text(f->c, x, fr->below++, f->W - x, o->xlabel, PLOT_S_LABEL);
  }
  if (!notes) f->note[0] = 0; /* no room: the figure keeps the plot */
  return 0;
}

/* ---- ANSI text ---- */

plot_colors plot_style_colors(int style) {
  /* Okabe-Ito-like series colours and a blue-orange diverging ramp (both colour-blind
   * safe), as xterm-256 indexes; -1: the terminal's default. */
  static const short fg[PLOT_S_DIV0] = {
      [PLOT_S_TEXT] = -1,     [PLOT_S_AXIS] = 244,    [PLOT_S_LABEL] = 110,  [PLOT_S_TITLE] = -1,
      [PLOT_S_POS] = 208,     [PLOT_S_NEG] = 33,      [PLOT_S_MARK] = 201,   [PLOT_S_GOOD] = 45,
      [PLOT_S_DIM] = 245,     [PLOT_S_SERIES0] = 208, [PLOT_S_SERIES1] = 75, [PLOT_S_SERIES2] = 36,
      [PLOT_S_SERIES3] = 175, [PLOT_S_SERIES4] = 220, [PLOT_S_SERIES5] = 25, [PLOT_S_FOCUS] = 231};
  static const short divbg[PLOT_DIV_LEVELS] = {18, 25, 32, 110, -1, 223, 215, 208, 166};
  static const short divfg[PLOT_DIV_LEVELS] = {231, 231, 231, 16, -1, 16, 16, 16, 231};
  int role = PLOT_ROLE(style);
  plot_colors c = {-1, -1, !!(style & PLOT_F_BOLD), !!(style & PLOT_F_UNDERLINE),
                   !!(style & PLOT_F_REVERSE)};
  if (role >= PLOT_S_DIV0 && role < PLOT_S_DIV0 + PLOT_DIV_LEVELS) {
    c.fg = divfg[role - PLOT_S_DIV0];
    c.bg = divbg[role - PLOT_S_DIV0];
  } else if (role < PLOT_S_DIV0) {
    c.fg = fg[role];
  }
  return c;
}

const char *plot_role_sgr(int style, char *buf, size_t len) {
  plot_colors c = plot_style_colors(style);
  size_t n = 0;
  buf[0] = 0;
#define ADD(...)                                                                                   \
  do {                                                                                             \
    int w_ = snprintf(buf + n, len - n, "%s" __VA_ARGS__);                                         \
    if (w_ > 0 && (size_t)w_ < len - n) n += (size_t)w_;                                           \
  } while (0)
  if (c.bold) ADD("1", n ? ";" : "");
  if (c.underline) ADD("4", n ? ";" : "");
  if (c.reverse) ADD("7", n ? ";" : "");
  if (c.fg >= 0) ADD("38;5;%d", n ? ";" : "", c.fg);
  if (c.bg >= 0) ADD("48;5;%d", n ? ";" : "", c.bg);
#undef ADD
  return buf;
}

char *plot_canvas_ansi(const plot_canvas *c) {
  /* worst case per cell: an SGR of ~40 bytes and 4 bytes of UTF-8 */
  size_t cap = (size_t)c->w * (size_t)c->h * 48 + (size_t)c->h * 8 + 1, len = 0;
  char *out = malloc(cap);
  if (!out) return NULL;
  for (int y = 0; y < c->h; y++) {
    /* last cell worth printing: not blank, or blank with a background */
    int last = -1;
    for (int x = 0; x < c->w; x++) {
      const plot_cell *cell = &c->cells[(size_t)y * (size_t)c->w + (size_t)x];
      char sgr[64];
      if ((cell->ch && cell->ch != ' ') ||
          strstr(plot_role_sgr(cell->style, sgr, sizeof sgr), "48;"))
        last = x;
    }
    char cur[64] = "";
    for (int x = 0; x <= last; x++) {
      const plot_cell *cell = &c->cells[(size_t)y * (size_t)c->w + (size_t)x];
      char sgr[64];
      plot_role_sgr(cell->style, sgr, sizeof sgr);
      if (strcmp(sgr, cur) != 0) {
        len += (size_t)snprintf(out + len, cap - len, "\x1b[0%s%sm", *sgr ? ";" : "", sgr);
        snprintf(cur, sizeof cur, "%s", sgr);
      }
      len += (size_t)plot_utf8_encode(cell->ch ? cell->ch : ' ', out + len);
    }
    if (*cur) len += (size_t)snprintf(out + len, cap - len, "\x1b[0m");
    out[len++] = '\n';
  }
  out[len] = 0;
  return out;
}
