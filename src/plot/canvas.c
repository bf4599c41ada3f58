/* canvas.c: the cell grid, UTF-8 text into it, and the grid back out as text. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot/plot.h"

plot_canvas *plot_canvas_new(int w, int h, int ascii) {
  if (w < 1) w = 1;
  if (h < 1) h = 1;
  plot_canvas *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->cells = calloc((size_t)w * (size_t)h, sizeof *c->cells);
  if (!c->cells) {
    free(c);
    return NULL;
  }
  c->w = w;
  c->h = h;
  c->ascii = ascii;
  c->color = 1;
  return c;
}

void plot_canvas_free(plot_canvas *c) {
  if (!c) return;
  free(c->cells);
  free(c);
}

void plot_canvas_clear(plot_canvas *c) {
  memset(c->cells, 0, (size_t)c->w * (size_t)c->h * sizeof *c->cells);
}

/* 1 for code points that do not take exactly one column: controls, combining marks,
 * and the East Asian wide and emoji blocks (a coarse, conservative table). */
static int not_one_column(uint32_t ch) {
  static const uint32_t ranges[][2] = {
      {0x00, 0x1F},     {0x7F, 0x9F},       {0x0300, 0x036F},   {0x1100, 0x115F},
      {0x200B, 0x200F}, {0x2E80, 0x303E},   {0x3041, 0x33FF},   {0x3400, 0x4DBF},
      {0x4E00, 0x9FFF}, {0xA000, 0xA4CF},   {0xAC00, 0xD7A3},   {0xD800, 0xDFFF},
      {0xF900, 0xFAFF}, {0xFE00, 0xFE0F},   {0xFE30, 0xFE4F},   {0xFF00, 0xFF60},
      {0xFFE0, 0xFFE6}, {0x1F300, 0x1F64F}, {0x1F900, 0x1F9FF}, {0x20000, 0x3FFFD}};
  for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
    if (ch >= ranges[i][0] && ch <= ranges[i][1]) return ch != 0;
  return ch > 0x10FFFF;
}

void plot_put(plot_canvas *c, int x, int y, uint32_t ch, int style) {
  if (x < 0 || y < 0 || x >= c->w || y >= c->h) return;
  if ((c->ascii && ch >= 128) || not_one_column(ch)) ch = '?';
  plot_cell *cell = &c->cells[(size_t)y * (size_t)c->w + (size_t)x];
  cell->ch = ch;
  cell->style = (uint16_t)style;
}

int plot_utf8_encode(uint32_t cp, char *buf) {
  if (cp < 0x80) {
    buf[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    buf[0] = (char)(0xC0 | (cp >> 6));
    buf[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    buf[0] = (char)(0xE0 | (cp >> 12));
    buf[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    buf[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  if (cp > 0x10FFFF) cp = 0xFFFD;
  buf[0] = (char)(0xF0 | (cp >> 18));
  buf[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  buf[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
  buf[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

int plot_utf8_decode(const char *s, uint32_t *cp) {
  const unsigned char *u = (const unsigned char *)s;
  int len;
  uint32_t v;
  if (u[0] < 0x80) {
    *cp = u[0];
    return 1;
  } else if ((u[0] & 0xE0) == 0xC0) {
    len = 2;
    v = u[0] & 0x1F;
  } else if ((u[0] & 0xF0) == 0xE0) {
    len = 3;
    v = u[0] & 0x0F;
  } else if ((u[0] & 0xF8) == 0xF0) {
    len = 4;
    v = u[0] & 0x07;
  } else {
    *cp = 0xFFFD;
    return 1;
  }
  for (int i = 1; i < len; i++) {
    if ((u[i] & 0xC0) != 0x80) {
      *cp = 0xFFFD;
      return i;
    }
    v = (v << 6) | (u[i] & 0x3F);
  }
  *cp = v;
  return len;
}

int plot_text(plot_canvas *c, int x, int y, int maxw, const char *s, int style) {
  int n = 0;
  if (maxw < 0) maxw = c->w - x;
  while (*s && n < maxw) {
    uint32_t cp;
    s += plot_utf8_decode(s, &cp);
    plot_put(c, x + n, y, cp, style);
    n++;
  }
  return n;
}

/* Bytes of s that make its first `cells` code points. */
static size_t utf8_prefix(const char *s, int cells) {
  size_t cut = 0;
  for (int k = 0; s[cut] && k < cells; k++) {
    uint32_t cp;
    cut += (size_t)plot_utf8_decode(s + cut, &cp);
  }
  return cut;
}

int plot_text_fit(plot_canvas *c, int x, int y, const char *s, int style) {
  if (!c || !s || y < 0 || y >= c->h || x >= c->w) return 0;
  int room = c->w - x;
  size_t cut = utf8_prefix(s, room);
  if (s[cut])
    for (size_t b = cut; b > 0; b--)
      if (s[b] == ' ' && s[b - 1] != ' ') {
        cut = b;
        break;
      }
  int n = 0;
  for (size_t at = 0; at < cut; n++) {
    uint32_t cp;
    at += (size_t)plot_utf8_decode(s + at, &cp);
    plot_put(c, x + n, y, cp, style);
  }
  return n;
}

void plot_canvas_blit(plot_canvas *dst, int x, int y, const plot_canvas *src) {
  if (!dst || !src) return;
  for (int r = 0; r < src->h; r++)
    for (int q = 0; q < src->w; q++) {
      const plot_cell *cell = &src->cells[(size_t)r * (size_t)src->w + (size_t)q];
      int tx = x + q, ty = y + r;
      if ((!cell->ch && cell->style == 0) || tx < 0 || ty < 0 || tx >= dst->w || ty >= dst->h)
        continue;
      dst->cells[(size_t)ty * (size_t)dst->w + (size_t)tx] = *cell;
    }
}

int plot_printf(plot_canvas *c, int x, int y, int maxw, int style, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return plot_text(c, x, y, maxw, buf, style);
}

char *plot_canvas_text(const plot_canvas *c) {
  size_t cap = (size_t)c->w * (size_t)c->h * 4 + (size_t)c->h + 1, len = 0;
  char *out = malloc(cap);
  if (!out) return NULL;
  for (int y = 0; y < c->h; y++) {
    size_t last_nonspace = len;
    for (int x = 0; x < c->w; x++) {
      uint32_t ch = c->cells[(size_t)y * (size_t)c->w + (size_t)x].ch;
      if (!ch) ch = ' ';
      len += (size_t)plot_utf8_encode(ch, out + len);
      if (ch != ' ') last_nonspace = len;
    }
    len = last_nonspace;
    out[len++] = '\n';
  }
  out[len] = 0;
  return out;
}

int plot_div_level(double v, double scale) {
  if (isnan(v) || !(scale > 0)) return 0;
  double r = v / scale;
  if (r > 1) r = 1;
  if (r < -1) r = -1;
  /* |r| in (0, 1] maps to 1..MID; only an exact zero is neutral. */
  if (r == 0) return 0;
  int l = (int)ceil(fabs(r) * PLOT_DIV_MID - 1e-9);
  if (l < 1) l = 1;
  if (l > PLOT_DIV_MID) l = PLOT_DIV_MID;
  return r < 0 ? -l : l;
}

char *plot_fmt(double v, int width, char *buf, size_t len) {
  if (width < 1) width = 1;
  if ((size_t)width >= len) width = (int)len - 1;
  if (isnan(v)) {
    snprintf(buf, len, "%.*s", width, "nan");
    return buf;
  }
  if (isinf(v)) {
    snprintf(buf, len, "%.*s", width, v < 0 ? "-inf" : "inf");
    return buf;
  }
  for (int prec = width; prec >= 1; prec--) {
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.*g", prec, v);
    if ((int)strlen(tmp) <= width) {
      snprintf(buf, len, "%s", tmp);
      return buf;
    }
  }
  snprintf(buf, len, "%.*s", width, v < 0 ? "-#" : "#");
  return buf;
}

int plot_fmt_decimals(const double *v, size_t n, int width, int maxd) {
  double big = 0;
  for (size_t i = 0; i < n; i++)
    if (isfinite(v[i]) && fabs(v[i]) > big) big = fabs(v[i]);
  if (big > 0 && big < 1e-3) return -1; /* fixed decimals would show only zeros */
  for (int d = maxd; d >= 0; d--) {
    int fits = 1;
    for (size_t i = 0; i < n && fits; i++) {
      char tmp[400];
      if (!isfinite(v[i])) continue;
      fits = snprintf(tmp, sizeof tmp, "%.*f", d, v[i]) <= width;
    }
    if (fits) return d;
  }
  return -1;
}

char *plot_fmt_fixed(double v, int width, int d, char *buf, size_t len) {
  if (d >= 0 && isfinite(v) && snprintf(buf, len, "%.*f", d, v) <= width) return buf;
  return plot_fmt(v, width, buf, len);
}

/* 1 if v goes to fixed point (decimals d >= 0 and |v| >= 1e-3, below which fixed point
 * would show mostly zeros). */
static int table_fixed(double v, int d) {
  return d >= 0 && fabs(v) >= 1e-3;
}

void plot_fmt_table_digits_all(const double *v, size_t n, int width, int maxd, int *d, int *k) {
  char a[400];
  /* decimals: only values of at least 1e-3 decide them */
  int best = -1;
  for (int dd = maxd; dd >= 0 && best < 0; dd--) {
    int fits = 1;
    for (size_t i = 0; i < n && fits; i++)
      if (isfinite(v[i]) && fabs(v[i]) >= 1e-3)
        fits = snprintf(a, sizeof a, "%.*f", dd, v[i]) <= width;
    if (fits) best = dd;
  }
  /* ... then fewer when every value is exact with fewer (integers stay integers) */
  if (best > 0) {
    int need = 0;
    for (size_t i = 0; i < n; i++) {
      if (!isfinite(v[i]) || fabs(v[i]) < 1e-3) continue;
      while (need < best &&
             (snprintf(a, sizeof a, "%.*f", need, v[i]), fabs(atof(a) - v[i]) > 1e-12 * fabs(v[i])))
        need++;
    }
    best = need;
  }
  *d = best;
  /* mantissa decimals of the scientific ones (plot_fmt_table drops one for a value that
   * does not fit, such as a negative one) */
  int kk = 3;
  for (; kk > 0; kk--) {
    int fits = 1;
    for (size_t i = 0; i < n && fits; i++)
      if (isfinite(v[i]) && v[i] > 0 && !table_fixed(v[i], best))
        fits = snprintf(a, sizeof a, "%.*e", kk, v[i]) <= width;
    if (fits) break;
  }
  *k = kk;
}

/* plot_fmt_table_digits_all's choice, printing far fewer numbers (a Spectrum column of
 * 258,288 eigenvalues printed each of them seven times or more: 30 ms of every frame). A
 * value's %.{d}f grows no shorter as |v| grows (rounding is monotone), so the widest of a
 * sign is its largest magnitude's; likewise %.{k}e's exponent width is the extreme
 * values'. The exactness pass stops once d is reached, and a value equal to the one
 * before it or an integer (exact at 0 decimals) prints nothing. Tested against _all. */
void plot_fmt_table_digits(const double *v, size_t n, int width, int maxd, int *d, int *k) {
  char a[400];
  double pmax = 0, nmin = 0, emin = INFINITY, emax = 0;
  int havep = 0, haven = 0;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(v[i]) || fabs(v[i]) < 1e-3) continue;
    if (v[i] > 0 && (!havep || v[i] > pmax)) pmax = v[i], havep = 1;
    if (v[i] < 0 && (!haven || v[i] < nmin)) nmin = v[i], haven = 1;
  }
  int best = -1;
  for (int dd = maxd; dd >= 0 && best < 0; dd--) {
    int fits = (!havep || snprintf(a, sizeof a, "%.*f", dd, pmax) <= width) &&
               (!haven || snprintf(a, sizeof a, "%.*f", dd, nmin) <= width);
    if (fits) best = dd;
  }
  if (best > 0) {
    int need = 0;
    for (size_t i = 0; i < n && need < best; i++) {
      if (!isfinite(v[i]) || fabs(v[i]) < 1e-3) continue;
      if ((i > 0 && v[i] == v[i - 1]) || (fabs(v[i]) < 0x1p52 && v[i] == rint(v[i]))) continue;
      while (need < best &&
             (snprintf(a, sizeof a, "%.*f", need, v[i]), fabs(atof(a) - v[i]) > 1e-12 * fabs(v[i])))
        need++;
    }
    best = need;
  }
  *d = best;
  for (size_t i = 0; i < n; i++)
    if (isfinite(v[i]) && v[i] > 0 && !table_fixed(v[i], best)) {
      emin = fmin(emin, v[i]);
      emax = fmax(emax, v[i]);
    }
  int kk = 3;
  for (; kk > 0 && emax > 0; kk--)
    if (snprintf(a, sizeof a, "%.*e", kk, emin) <= width &&
        snprintf(a, sizeof a, "%.*e", kk, emax) <= width)
      break;
  *k = kk;
}

char *plot_fmt_table(double v, int width, int d, int k, char *buf, size_t len) {
  if (!isfinite(v)) return plot_fmt(v, width, buf, len);
  if (v == 0) {
    snprintf(buf, len, "0");
    return buf;
  }
  if (table_fixed(v, d)) {
    if (snprintf(buf, len, "%.*f", d, v) <= width) return buf;
  } else {
    for (int kk = k; kk >= 0 && kk >= k - 1; kk--)
      if (snprintf(buf, len, "%.*e", kk, v) <= width) return buf;
  }
  return plot_fmt(v, width, buf, len);
}
