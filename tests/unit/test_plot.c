/* test_plot.c: the figures of src/plot/figure.h.
 *
 * 1. Golden pictures: every kind at fixed sizes in ASCII, blocks and braille, compared
 *    with tests/data/plot/goldens.txt (reviewed by hand: see tests/data/plot/README.md).
 *    PLOT_GOLDEN_OUT=FILE writes the current pictures to FILE instead, for review.
 * 2. References: quantiles against numpy, ticks at round values, bins against
 *    numpy.histogram, the numbers a heatmap prints against numpy's batch norm of the
 *    chapter's matrix.
 * 3. Properties over random data and sizes: no figure exceeds its box (display columns
 *    by wcwidth, not bytes), ASCII output is pure ASCII, plain text has no escape bytes,
 *    the ANSI text is the plain text plus escapes, the legend names every series, and
 *    degenerate data (NaN, Inf, constant, empty, one point) draws and says why.
 */
#define _XOPEN_SOURCE 700
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "plot/figure.h"
#include "tap.h"
#include "testdata.h"

/* ---- the golden cases ---------------------------------------------------------------- */

/* numpy: (X - X.mean(0)) / sqrt(X.var(0) + 1e-5) for the chapter's 5 x 4 matrix X */
static const double BN[20] = {
    -1.1009633480948684,  -1.1655426912135876,  -1.3198238134476057,  -1.3112197767791749,
    -0.82572251107115135, -0.67989990320792604, -0.58658836153226912, -0.84292699935804094,
    -0.2752408370237171,  -0.19425711520226455, -0.21997063557460084, 0.093658555484226871,
    0.5504816740474342,   0.29138567280339694,  0.51326481634073573,  0.56195133290536081,
    1.6514450221423027,   1.7483140368203813,   1.6131179942137406,   1.4985368877476286};

static const char *const glyph_tag[] = {"blocks", "braille", "ascii"};

typedef plot_canvas *(*builder)(plot_opts *o, char *err);

static plot_canvas *g_heatmap_values(plot_opts *o, char *err) {
  o->width = 40, o->height = 10, o->title = "batch norm";
  return plot_fig_heatmap(BN, 5, 4, o, err);
}
static plot_canvas *g_heatmap_glyphs(plot_opts *o, char *err) {
  o->width = 18, o->height = 12;
  static const char *const cols[] = {"a", "b", "c", "d"};
  o->labels = cols, o->nlabels = 4;
  return plot_fig_heatmap(BN, 5, 4, o, err);
}
static plot_canvas *g_heatmap_narrow(plot_opts *o, char *err) {
  o->width = 10, o->height = 14;
  return plot_fig_heatmap(BN, 5, 4, o, err);
}
static plot_canvas *g_heatmap_ramp(plot_opts *o, char *err) {
  static const double v[8] = {-1, -0.6, -0.3, -0.1, 0, 0.2, 0.5, 1};
  o->width = 10, o->height = 14;
  return plot_fig_heatmap(v, 1, 8, o, err);
}
static plot_canvas *g_lines(plot_opts *o, char *err) {
  static const double up[5] = {0, 1, 2, 3, 4}, down[5] = {4, 3, 2, 1, 0};
  plot_xy s[2] = {{NULL, up, 5, "up"}, {NULL, down, 5, "down"}};
  o->width = 30, o->height = 10;
  return plot_fig_lines(s, 2, o, 1, err);
}
static plot_canvas *g_scatter_log(plot_opts *o, char *err) {
  static const double x[4] = {1, 10, 100, 1000}, y[4] = {1, 2, 3, 4};
  plot_xy s = {x, y, 4, NULL};
  o->width = 30, o->height = 8, o->logx = 1, o->xlabel = "x (log)";
  return plot_fig_lines(&s, 1, o, 0, err);
}
static plot_canvas *g_bars(plot_opts *o, char *err) {
  static const double v[3] = {-1, 2, 0.5};
  static const char *const lab[] = {"a", "b", "c"};
  o->width = 30, o->height = 8, o->labels = lab, o->nlabels = 3;
  return plot_fig_bars(v, 3, o, err);
}
static plot_canvas *g_box(plot_opts *o, char *err) {
  static const double a[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, b[5] = {2, 3, 4, 5, 20};
  plot_set g[2] = {{a, 9, "a"}, {b, 5, "b"}};
  o->width = 40, o->height = 8;
  return plot_fig_box(g, 2, o, err);
}
static plot_canvas *g_box_ref(plot_opts *o, char *err) {
  /* 1..9 and (2, 3, 4, 5, 20) with a reference at 6: through a's upper quartile and b's
   * right whisker gap; the automatic axis 0..20 already holds it */
  static const double a[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, b[5] = {2, 3, 4, 5, 20};
  plot_set g[2] = {{a, 9, "a"}, {b, 5, "b"}};
  o->width = 40, o->height = 8, o->has_ref = 1, o->ref = 6, o->ref_label = "population 6";
  return plot_fig_box(g, 2, o, err);
}
static plot_canvas *g_box_ref_wide(plot_opts *o, char *err) {
  /* a reference beyond the data (-4) widens the axis to reach it; no label: "reference -4" */
  static const double a[5] = {1, 2, 3, 4, 5};
  plot_set g = {a, 5, "a"};
  o->width = 40, o->height = 8, o->has_ref = 1, o->ref = -4;
  return plot_fig_box(&g, 1, o, err);
}
static plot_canvas *g_hist(plot_opts *o, char *err) {
  static const double v[10] = {1, 2, 2, 3, 3, 3, 4, 4, 4, 4};
  plot_set s = {v, 10, NULL};
  o->width = 30, o->height = 8, o->bins = 4;
  return plot_fig_hist(&s, 1, o, err);
}
static plot_canvas *g_hist2(plot_opts *o, char *err) {
  static const double a[4] = {1, 1, 2, 3}, b[3] = {2, 3, 3};
  plot_set s[2] = {{a, 4, "first"}, {b, 3, "second"}};
  o->width = 30, o->height = 8, o->bins = 3;
  return plot_fig_hist(s, 2, o, err);
}
static plot_canvas *g_degenerate(plot_opts *o, char *err) {
  /* one figure per kind would be long: the lines figure with every kind of trouble */
  static const double y[6] = {NAN, 1, INFINITY, 1, NAN, 1};
  plot_xy s = {NULL, y, 6, NULL};
  o->width = 30, o->height = 8;
  return plot_fig_lines(&s, 1, o, 1, err);
}

static plot_canvas *g_heatmap_nan(plot_opts *o, char *err) {
  static const double m[4] = {-2, NAN, 0, 1};
  o->width = 16, o->height = 10, o->values = 0;
  return plot_fig_heatmap(m, 2, 2, o, err);
}
static plot_canvas *g_bars_range(plot_opts *o, char *err) {
  static const double v[3] = {-3, 1, 5};
  o->width = 30, o->height = 8, o->has_range = 1, o->lo = -2, o->hi = 4;
  return plot_fig_bars(v, 3, o, err);
}
static plot_canvas *g_lines_logy(plot_opts *o, char *err) {
  static const double y[5] = {1, 10, 100, 1000, 10000};
  plot_xy s = {NULL, y, 5, NULL};
  o->width = 30, o->height = 9, o->logy = 1;
  return plot_fig_lines(&s, 1, o, 1, err);
}

static const struct {
  const char *name;
  builder fn;
  int modes; /* bit per plot_glyphs: which glyph sets have their own golden */
} cases[] = {
    {"heatmap-values", g_heatmap_values, 1 | 4},
    {"heatmap-glyphs", g_heatmap_glyphs, 1 | 4},
    {"heatmap-narrow", g_heatmap_narrow, 1 | 4},
    {"heatmap-ramp", g_heatmap_ramp, 1 | 4},
    {"heatmap-nan", g_heatmap_nan, 4},
    {"bars-range", g_bars_range, 1 | 4},
    {"lines-logy", g_lines_logy, 7},
    {"lines", g_lines, 7},
    {"scatter-log", g_scatter_log, 7},
    {"bars", g_bars, 1 | 4},
    {"box", g_box, 1 | 4},
    {"box-ref", g_box_ref, 1 | 4},
    {"box-ref-wide", g_box_ref_wide, 1 | 4},
    {"hist", g_hist, 1 | 4},
    {"hist-two", g_hist2, 1 | 4},
    {"lines-degenerate", g_degenerate, 7},
};
#define NCASES (sizeof cases / sizeof cases[0])

static char *render(builder fn, plot_glyphs g) {
  plot_opts o;
  plot_opts_init(&o);
  o.glyphs = g;
  char err[PLOT_ERRLEN];
  plot_canvas *c = fn(&o, err);
  if (!c) return NULL;
  char *s = plot_canvas_text(c);
  plot_canvas_free(c);
  return s;
}

/* The block "=== name" of the golden file (malloc'd), or NULL. */
static char *golden(const char *all, const char *name) {
  char head[128];
  snprintf(head, sizeof head, "=== %s\n", name);
  const char *p = all;
  while ((p = strstr(p, head))) {
    if (p == all || p[-1] == '\n') break;
    p++;
  }
  if (!p) return NULL;
  p += strlen(head);
  const char *end = strstr(p, "\n=== ");
  size_t n = end ? (size_t)(end - p) + 1 : strlen(p);
  char *s = malloc(n + 1);
  memcpy(s, p, n);
  s[n] = 0;
  return s;
}

static void goldens(void) {
  const char *out = getenv("PLOT_GOLDEN_OUT");
  if (out && *out) {
    FILE *f = fopen(out, "w");
    for (size_t i = 0; f && i < NCASES; i++)
      for (int g = 0; g < 3; g++) {
        if (!(cases[i].modes >> g & 1)) continue;
        char *s = render(cases[i].fn, (plot_glyphs)g);
        fprintf(f, "=== %s %s\n%s", cases[i].name, glyph_tag[g], s ? s : "(null)\n");
        free(s);
      }
    if (f) fclose(f);
    tap_diag("wrote the current pictures to %s", out);
  }
  size_t len;
  char *all = (char *)test_slurp(test_data_path("plot/goldens.txt"), &len);
  tap_ok(all != NULL, "goldens.txt read");
  if (!all) return;
  for (size_t i = 0; i < NCASES; i++)
    for (int g = 0; g < 3; g++) {
      char name[96];
      char *got = render(cases[i].fn, (plot_glyphs)g);
      if (!(cases[i].modes >> g & 1)) {
        /* no picture of its own: this glyph set draws exactly as blocks */
        char *blocks = render(cases[i].fn, PLOT_GLYPHS_BLOCKS);
        tap_ok(got && blocks && strcmp(got, blocks) == 0, "%s: %s draws as blocks", cases[i].name,
               glyph_tag[g]);
        free(blocks);
        free(got);
        continue;
      }
      snprintf(name, sizeof name, "%s %s", cases[i].name, glyph_tag[g]);
      char *want = golden(all, name);
      int ok = got && want && strcmp(got, want) == 0;
      tap_ok(ok, "golden: %s", name);
      if (!ok)
        printf("#   got:\n%s#   want:\n%s", got ? got : "(null)\n", want ? want : "(none)\n");
      free(want);
      free(got);
    }
  free(all);
}

/* ---- references ---------------------------------------------------------------------- */

static void references(void) {
  /* numpy.quantile(..., [.25, .5, .75]) */
  double a[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, b[5] = {2, 3, 4, 5, 20};
  tap_ok(plot_quantile(a, 9, 0.25) == 3 && plot_quantile(a, 9, 0.5) == 5 &&
             plot_quantile(a, 9, 0.75) == 7,
         "quantiles of 1..9 are numpy's 3, 5, 7");
  tap_ok(plot_quantile(b, 5, 0.25) == 3 && plot_quantile(b, 5, 0.5) == 4 &&
             plot_quantile(b, 5, 0.75) == 5,
         "quantiles of (2,3,4,5,20) are numpy's 3, 4, 5");
  double c[4] = {1, 2, 3, 4};
  tap_close(plot_quantile(c, 4, 0.25), 1.75, 0, "quantile between order statistics (numpy 1.75)");

  /* ticks: evenly spaced multiples of 1, 2 or 5 x 10^k that cover the data */
  uint64_t st = 12345;
  int bad = 0;
  for (int t = 0; t < 2000 && !bad; t++) {
    st ^= st << 13, st ^= st >> 7, st ^= st << 17;
    double lo = ((double)(st % 20001) - 10000) * pow(10, (int)(st >> 20) % 9 - 4) / 100;
    st ^= st << 13, st ^= st >> 7, st ^= st << 17;
    double hi = lo + (double)(st % 10000 + 1) * pow(10, (int)(st >> 20) % 9 - 4) / 100;
    int target = 2 + (int)(st >> 40) % 8;
    plot_axis ax;
    plot_axis_make(&ax, lo, hi, 0, target, 0);
    double step = ax.n >= 2 ? ax.v[1] - ax.v[0] : 0;
    /* covering the data, up to a millionth of a step */
    if (ax.n < 2 || ax.lo > lo + 1e-6 * step || ax.hi < hi - 1e-6 * step) bad = 1;
    double mag = pow(10, floor(log10(step) + 1e-3)), m = step / mag;
    /* (the difference of two large ticks carries their rounding: compare loosely) */
    if (!(fabs(m - 1) < 1e-3 || fabs(m - 2) < 1e-3 || fabs(m - 5) < 1e-3)) bad = 2;
    step = round(m) * mag; /* the nominal step */
    for (int i = 0; i < ax.n && !bad; i++) {
      double k = ax.v[i] / step;
      if (fabs(k - round(k)) > 1e-6 + 1e-9 * fabs(k)) bad = 3;
      if (i && fabs(ax.v[i] - ax.v[i - 1] - step) > 1e-9 * fmax(1, fabs(step) * 1e3)) bad = 4;
    }
    if (ax.n > target + 3) bad = 5;
    for (int i = 1; i < ax.n && !bad; i++)
      if (strcmp(ax.label[i], ax.label[i - 1]) == 0) bad = 6; /* labels tell ticks apart */
    if (bad) tap_diag("lo %.17g hi %.17g target %d: failure %d", lo, hi, target, bad);
  }
  tap_ok(!bad, "linear ticks: round, evenly spaced, covering the data (2000 random ranges)");
  plot_axis ax;
  plot_axis_make(&ax, 3e-5, 0.7, 1, 8, 0);
  int pow10 = ax.n == 6 && ax.lo == 1e-5 && ax.hi == 1;
  for (int i = 0; i < ax.n; i++) pow10 &= fabs(log10(ax.v[i]) - round(log10(ax.v[i]))) < 1e-12;
  tap_ok(pow10, "log ticks: the decades 1e-5 .. 1 around 3e-5 .. 0.7 (got %d ticks)", ax.n);
  tap_ok(strcmp(ax.label[0], "1e-5") == 0 && strcmp(ax.label[ax.n - 1], "1") == 0 &&
             strcmp(ax.label[2], "0.001") == 0,
         "log tick labels 1e-5, 0.001, 1");
  plot_axis_make(&ax, -0.3, 1.7, 0, 5, 0);
  tap_ok(ax.n == 6 && strcmp(ax.label[0], "-0.5") == 0 && strcmp(ax.label[1], "0.0") == 0 &&
             strcmp(ax.label[5], "2.0") == 0,
         "tick labels share their decimals: -0.5 0.0 0.5 .. 2.0 (got %d: %s .. %s)", ax.n,
         ax.label[0], ax.label[ax.n - 1]);
}

/* the diverging palette: one colour per level, the default at zero, and the series'
 * colours all different */
static void palette(void) {
  int distinct = 1;
  for (int a = -PLOT_DIV_MID; a <= PLOT_DIV_MID; a++)
    for (int b = a + 1; b <= PLOT_DIV_MID; b++)
      distinct &= plot_style_colors(PLOT_S_DIV(a)).bg != plot_style_colors(PLOT_S_DIV(b)).bg;
  tap_ok(distinct && plot_style_colors(PLOT_S_DIV(0)).bg == -1,
         "heatmap levels have distinct backgrounds, zero the default");
  int series = 1;
  for (int a = PLOT_S_SERIES0; a <= PLOT_S_SERIES5; a++)
    for (int b = a + 1; b <= PLOT_S_SERIES5; b++)
      series &= plot_style_colors(a).fg != plot_style_colors(b).fg;
  tap_ok(series, "the six series have different colours");
  plot_colors c = plot_style_colors(PLOT_S_POS | PLOT_F_BOLD | PLOT_F_REVERSE);
  char sgr[64];
  tap_ok(c.bold && c.reverse && !c.underline && c.fg == 208 &&
             strcmp(plot_role_sgr(PLOT_S_POS | PLOT_F_BOLD, sgr, sizeof sgr), "1;38;5;208") == 0,
         "flags and colours of a style, and its SGR (%s)", sgr);
}

/* ---- properties ---------------------------------------------------------------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return rng_state;
}
static int below(int n) {
  return (int)(next() % (uint64_t)n);
}
static double uniform(void) {
  return (double)(next() >> 11) / 9007199254740992.0;
}

/* A random value, now and then a troublesome one. */
static double value(int style) {
  int r = below(40);
  if (r == 0) return NAN;
  if (r == 1) return INFINITY;
  if (r == 2) return -INFINITY;
  switch (style) {
  case 0:
    return 3.0; /* constant */
  case 1:
    return (uniform() - 0.5) * 20;
  case 2:
    return pow(10, uniform() * 10 - 5); /* positive, decades */
  default:
    return (uniform() - 0.3) * pow(10, below(12) - 6);
  }
}

static int has_byte(const char *s, int lo, int hi) {
  for (; *s; s++)
    if ((unsigned char)*s >= lo && (unsigned char)*s <= hi && *s != '\n') return 1;
  return 0;
}

/* Rows and the widest row in display columns; -1 when a character is not printable in
 * one column (wcwidth != 1) or the UTF-8 is invalid. */
static int measure(const char *s, int *rows, int *maxcols, int use_wcwidth) {
  *rows = 0, *maxcols = 0;
  int cols = 0;
  mbstate_t ms;
  memset(&ms, 0, sizeof ms);
  while (*s) {
    if (*s == '\n') {
      (*rows)++;
      if (cols > *maxcols) *maxcols = cols;
      cols = 0;
      s++;
      continue;
    }
    wchar_t wc;
    size_t n = mbrtowc(&wc, s, MB_CUR_MAX, &ms);
    if (n == (size_t)-1 || n == (size_t)-2 || n == 0) return -1;
    if (use_wcwidth && wcwidth(wc) != 1) return -1;
    cols++;
    s += n;
  }
  if (cols > *maxcols) *maxcols = cols;
  return 0;
}

/* The ANSI text without its escapes and with trailing spaces dropped per line. */
static char *strip(const char *s) {
  char *out = malloc(strlen(s) + 1);
  size_t n = 0;
  while (*s) {
    if (*s == '\x1b') {
      while (*s && *s != 'm') s++;
      if (*s) s++;
      continue;
    }
    if (*s == '\n')
      while (n > 0 && out[n - 1] == ' ') n--;
    out[n++] = *s++;
  }
  out[n] = 0;
  return out;
}

static const char *const NAMES[PLOT_MAXSERIES] = {"alpha", "beta", "gamma", "delta", "eps", "zeta"};

static void properties(void) {
  int wc = setlocale(LC_CTYPE, "C.UTF-8") != NULL || setlocale(LC_CTYPE, "en_US.UTF-8") != NULL;
  if (!wc) tap_diag("no UTF-8 locale: display columns counted as code points");
  int fails[8] = {0};
  const char *what[8] = {"fits its box (rows, display columns)",
                         "ASCII output is pure ASCII",
                         "plain text has no escape or control bytes",
                         "ANSI text is the plain text plus escapes",
                         "the legend names every series",
                         "every figure renders (never NULL)",
                         "a figure with left-out values says so",
                         "a figure with nothing to draw says why"};
  int trials = 1500; /* NS_PLOT_TRIALS=N for a longer run */
  if (getenv("NS_PLOT_TRIALS")) trials = atoi(getenv("NS_PLOT_TRIALS"));
  if (trials < 1) trials = 1;
  for (int t = 0; t < trials; t++) {
    plot_opts o;
    plot_opts_init(&o);
    o.width = 10 + below(110);
    o.height = 3 + below(40);
    o.glyphs = (plot_glyphs)below(3);
    if (below(3) == 0) o.title = "a title that may be long enough to need cutting";
    if (below(3) == 0) o.xlabel = "x label";
    if (below(3) == 0) o.ylabel = "y label";
    int kind = below(6), style = below(4);
    if (style == 2 && below(2)) o.logx = 1;
    if (kind == 1 && below(3) == 0) o.logy = 1;
    if (below(6) == 0) {
      o.has_range = 1, o.lo = style == 2 ? 1e-3 : -2, o.hi = 5;
    }
    size_t nser = (size_t)(1 + below(kind == 4 ? 4 : PLOT_MAXSERIES));
    size_t npts = below(8) == 0 ? (size_t)below(2) : (size_t)(1 + below(300));
    double *xs = malloc(PLOT_MAXSERIES * 300 * sizeof(double));
    double *ys = malloc(PLOT_MAXSERIES * 300 * sizeof(double));
    plot_xy sx[PLOT_MAXSERIES];
    plot_set ss[PLOT_MAXSERIES];
    size_t nbad = 0, nbad0 = 0;
    double *mat = malloc(PLOT_MAXSERIES * 300 * sizeof(double) + 1);
    for (size_t k = 0; k < nser; k++) {
      for (size_t i = 0; i < npts; i++) {
        xs[k * 300 + i] = style == 2 ? pow(10, uniform() * 6 - 3) : (double)i;
        ys[k * 300 + i] = value(style);
        nbad += !isfinite(ys[k * 300 + i]);
        nbad0 += k == 0 && !isfinite(ys[i]);
        mat[k * npts + i] = ys[k * 300 + i];
      }
      sx[k] = (plot_xy){xs + k * 300, ys + k * 300, npts, NAMES[k]};
      ss[k] = (plot_set){ys + k * 300, npts, NAMES[k]};
    }
    if (kind == 4) o.bins = below(3) ? 0 : 1 + below(60), o.density = below(2);
    /* box plots: now and then a reference line, anywhere (also off the axis or NaN) */
    if (kind == 3 && below(2)) {
      o.has_ref = 1, o.ref = value(style == 0 ? 1 : style);
      if (below(2)) o.ref_label = "the ref";
    }
    char err[PLOT_ERRLEN];
    plot_canvas *c = NULL;
    size_t nlegend = 0; /* series a legend must name */
    switch (kind) {
    case 0:
      c = plot_fig_heatmap(ys, nser, npts, &o, err);
      break;
    case 1:
      c = plot_fig_lines(sx, nser, &o, below(2), err);
      nlegend = nser > 1 ? nser : 0;
      break;
    case 2:
      c = plot_fig_bars(ys, npts, &o, err);
      break;
    case 3:
      c = plot_fig_box(ss, nser, &o, err);
      if (o.has_ref && o.ref_label) nlegend = 1; /* the reference's own name */
      break;
    case 4:
      c = plot_fig_hist(ss, nser, &o, err);
      nlegend = nser > 1 ? nser : 0;
      break;
    default: {
      /* a figure of one degenerate kind */
      double one[1] = {style == 0 ? NAN : 2.5};
      plot_xy s1 = {NULL, one, 1, NULL};
      c = plot_fig_lines(&s1, 1, &o, 1, err);
      break;
    }
    }
    if (!c) {
      fails[5]++;
      free(xs), free(ys), free(mat);
      continue;
    }
    char *text = plot_canvas_text(c), *ansi = plot_canvas_ansi(c);
    int rows, cols;
    if (measure(text, &rows, &cols, wc) < 0 || rows > o.height || cols > o.width) {
      if (!fails[0]++)
        tap_diag("%d x %d kind %d: %d rows, %d columns:\n%s", o.width, o.height, kind, rows, cols,
                 text);
    }
    if (o.glyphs == PLOT_GLYPHS_ASCII && has_byte(text, 128, 255)) fails[1]++;
    if (has_byte(text, 0, 31) || has_byte(text, 127, 127)) fails[2]++;
    char *plain = strip(ansi);
    if (strcmp(plain, text) != 0) {
      if (!fails[3]++) tap_diag("ansi stripped:\n%s\nplain:\n%s", plain, text);
    }
    char *joined = strdup(text); /* the words of notes that wrap */
    for (char *p = joined; *p; p++)
      if (*p == '\n') *p = ' ';
    /* a figure too small for its plot says so instead; only judge those that drew */
    int drew = !strstr(joined, "too small") && !strstr(joined, "nothing to plot");
    if (kind == 2) nbad = nbad0; /* bars draw the first series only */
    if (drew && nlegend && o.height >= 14 && o.width >= 30)
      for (size_t k = 0; k < nlegend; k++)
        if (kind == 3
                ? isfinite(o.ref) && !(o.logx && o.ref <= 0) &&
                      !(o.has_range && (o.ref < o.lo || o.ref > o.hi)) && !strstr(text, "the ref")
                : !strstr(text, NAMES[k])) {
          if (!fails[4]++) tap_diag("legend lacks %s:\n%s", NAMES[k], text);
          break;
        }
    /* words: left-out values are reported unless the box is too small for the notes */
    if (drew && kind != 0 && kind != 5 && nbad && o.height >= 24 && o.width >= 40 &&
        !strstr(joined, "left out") && !strstr(joined, "cut at the edge")) {
      if (!fails[6]++) tap_diag("no note of %zu bad values:\n%s", nbad, text);
    }
    if (npts == 0 && kind != 5 && o.height >= 6 && !strstr(joined, "nothing to plot")) {
      if (!fails[7]++) tap_diag("empty data without a reason:\n%s", text);
    }
    free(joined);
    free(plain);
    free(text);
    free(ansi);
    plot_canvas_free(c);
    free(xs);
    free(ys);
    free(mat);
  }
  for (int i = 0; i < 8; i++)
    tap_ok(fails[i] == 0, "%s (%d random figures, %d failed)", what[i], trials, fails[i]);
}

/* ---- degenerate data: every kind ------------------------------------------------------- */

/* 1 when the figure holds the words (lines joined, as notes wrap). */
static int says(plot_canvas *c, const char *words) {
  if (!c) return 0;
  char *s = plot_canvas_text(c);
  for (char *p = s; p && *p; p++)
    if (*p == '\n' && p[1]) *p = ' ';
  int ok = s && strstr(s, words) != NULL;
  if (!ok) printf("#   wanted \"%s\" in:\n%s", words, s ? s : "(null)");
  free(s);
  plot_canvas_free(c);
  return ok;
}

static void degenerate(void) {
  plot_opts o;
  plot_opts_init(&o);
  o.width = 40, o.height = 12;
  char err[PLOT_ERRLEN];
  double nan3[3] = {NAN, NAN, NAN}, c3[3] = {2, 2, 2}, one = 7, mixed[4] = {1, NAN, 3, INFINITY};
  plot_set sn = {nan3, 3, NULL}, sc = {c3, 3, NULL}, s1 = {&one, 1, NULL}, s0 = {NULL, 0, NULL};
  plot_set sm = {mixed, 4, NULL};
  plot_xy xn = {NULL, nan3, 3, NULL}, xc = {NULL, c3, 3, NULL}, x1 = {NULL, &one, 1, NULL};
  plot_xy x0 = {NULL, NULL, 0, NULL}, xm = {NULL, mixed, 4, NULL};

  tap_ok(says(plot_fig_heatmap(NULL, 0, 0, &o, err), "nothing to plot"), "heatmap: empty");
  tap_ok(says(plot_fig_heatmap(nan3, 1, 3, &o, err), "3 NaN values shown as ?"), "heatmap: NaN");
  tap_ok(says(plot_fig_heatmap(c3, 1, 3, &o, err), "2"), "heatmap: constant");
  tap_ok(says(plot_fig_heatmap(&one, 1, 1, &o, err), "7"), "heatmap: one value");
  tap_ok(says(plot_fig_heatmap(mixed, 2, 2, &o, err), "1 Inf value"), "heatmap: Inf");

  tap_ok(says(plot_fig_lines(&x0, 1, &o, 1, err), "nothing to plot: no points"), "lines: empty");
  tap_ok(says(plot_fig_lines(NULL, 0, &o, 1, err), "nothing to plot: no series"),
         "lines: no series");
  tap_ok(says(plot_fig_lines(&xn, 1, &o, 1, err), "3 NaN points left out"), "lines: NaN");
  tap_ok(says(plot_fig_lines(&xc, 1, &o, 1, err), "every y is 2"), "lines: constant");
  tap_ok(says(plot_fig_lines(&x1, 1, &o, 0, err), "\u25cf"), "scatter: one point (its marker)");
  tap_ok(says(plot_fig_lines(&xm, 1, &o, 1, err), "1 Inf point left out"), "lines: Inf");
  plot_opts lg = o;
  lg.logy = 1;
  double neg[3] = {-1, 0, 5};
  plot_xy xneg = {NULL, neg, 3, NULL};
  tap_ok(says(plot_fig_lines(&xneg, 1, &lg, 1, err), "2 points <= 0 left out (log axis)"),
         "lines: log axis leaves out values <= 0");

  tap_ok(says(plot_fig_bars(NULL, 0, &o, err), "nothing to plot: no values"), "bars: empty");
  tap_ok(says(plot_fig_bars(nan3, 3, &o, err), "every value is NaN"), "bars: NaN");
  tap_ok(says(plot_fig_bars(c3, 3, &o, err), "2"), "bars: constant");
  tap_ok(says(plot_fig_bars(&one, 1, &o, err), "7"), "bars: one value");
  double zeros[2] = {0, 0};
  tap_ok(says(plot_fig_bars(zeros, 2, &o, err), "every value is 0"), "bars: zeros");
  tap_ok(says(plot_fig_bars(mixed, 4, &o, err), "1 Inf value cut at the edge"), "bars: Inf");

  tap_ok(says(plot_fig_box(&s0, 1, &o, err), "nothing to plot"), "box: empty");
  tap_ok(says(plot_fig_box(NULL, 0, &o, err), "no groups"), "box: no groups");
  tap_ok(says(plot_fig_box(&sn, 1, &o, err), "3 NaN values left out"), "box: NaN");
  tap_ok(says(plot_fig_box(&sc, 1, &o, err), "median"), "box: constant");
  tap_ok(says(plot_fig_box(&s1, 1, &o, err), "\u2588"), "box: one value (its median)");
  tap_ok(says(plot_fig_box(&sm, 1, &o, err), "1 Inf value left out"), "box: Inf");
  plot_opts rf = o;
  rf.has_ref = 1, rf.ref = NAN;
  tap_ok(says(plot_fig_box(&sc, 1, &rf, err), "reference line (nan) left out: not finite"),
         "box: a NaN reference is left out, in words");
  rf.ref = 9, rf.has_range = 1, rf.lo = 0, rf.hi = 5;
  tap_ok(says(plot_fig_box(&sc, 1, &rf, err), "reference line (9) lies outside the range"),
         "box: a reference outside the given range says so");
  rf.has_range = 0, rf.logx = 1, rf.ref = -1;
  tap_ok(says(plot_fig_box(&sc, 1, &rf, err), "left out: <= 0 on a log axis"),
         "box: a reference <= 0 on a log axis says so");
  rf.logx = 0, rf.ref = 2;
  tap_ok(says(plot_fig_box(&sc, 1, &rf, err), "reference 2"),
         "box: a constant group with its reference on the median: drawn, named");
  tap_ok(says(plot_fig_box(&s0, 1, &rf, err), "nothing to plot"),
         "box: no values and a reference: still nothing to plot");

  tap_ok(says(plot_fig_hist(&s0, 1, &o, err), "nothing to plot"), "hist: empty");
  tap_ok(says(plot_fig_hist(&sn, 1, &o, err), "3 NaN values left out"), "hist: NaN");
  tap_ok(says(plot_fig_hist(&sc, 1, &o, err), "every value is 2"), "hist: constant");
  tap_ok(says(plot_fig_hist(&s1, 1, &o, err), "every value is 7"), "hist: one value");
  tap_ok(says(plot_fig_hist(&sm, 1, &o, err), "1 NaN value left out; 1 Inf value left out"),
         "hist: NaN and Inf, in words");
  plot_opts tiny = o;
  tiny.width = 5, tiny.height = 2;
  tap_ok(says(plot_fig_lines(&xc, 1, &tiny, 1, err), "too"), "lines: a box too small says so");

  /* impossible arguments are errors, not crashes */
  plot_xy many[PLOT_MAXSERIES + 1];
  for (int k = 0; k <= PLOT_MAXSERIES; k++) many[k] = xc;
  tap_ok(plot_fig_lines(many, PLOT_MAXSERIES + 1, &o, 1, err) == NULL &&
             strstr(err, "at most") != NULL,
         "lines: too many series is an error (%s)", err);
  tap_ok(plot_fig_bars(NULL, 3, &o, err) == NULL, "bars: a count without values is an error");
}

/* the numbers a heatmap prints are numpy's batch norm to two decimals */
static void heatmap_numbers(void) {
  plot_opts o;
  plot_opts_init(&o);
  o.width = 40;
  char err[PLOT_ERRLEN];
  plot_canvas *c = plot_fig_heatmap(BN, 5, 4, &o, err);
  char *s = plot_canvas_text(c);
  int ok = 1;
  for (int i = 0; i < 20 && ok; i++) {
    char num[16];
    snprintf(num, sizeof num, " %.2f", BN[i]);
    if (!strstr(s, num)) ok = 0, tap_diag("missing %s", num);
  }
  tap_ok(ok, "heatmap prints each of numpy's 20 values with 2 decimals");
  free(s);
  plot_canvas_free(c);
}

/* Lines that coincide: each series' marker is seen somewhere on the shared line (the one
 * drawn last hid the others in every cell: the L view's top row showed only its last
 * series). plot_opts.marks gives a series another marker, as the legend says. */
static int count_of(const char *s, const char *glyph) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, glyph)); p += strlen(glyph)) n++;
  return n;
}
static void coinciding(void) {
  char err[PLOT_ERRLEN] = "";
  double x[20], same[20], low[20];
  for (int i = 0; i < 20; i++) x[i] = i + 1, same[i] = 0.63, low[i] = pow(10, -i * 0.8);
  plot_xy s[4] = {{x, low, 20, "low"}, {x, same, 20, "a"}, {x, same, 20, "b"}, {x, same, 20, "c"}};
  plot_opts o;
  plot_opts_init(&o);
  o.width = 66, o.height = 20, o.logy = 1;
  plot_canvas *c = plot_fig_lines(s, 4, &o, 1, err);
  char *t = c ? plot_canvas_text(c) : NULL;
  /* each glyph once in the legend, and on the plot more than that */
  int ok = t != NULL;
  const char *glyph[4] = {"\u25cf", "\u25cb", "\u25c6", "\u25b3"};
  for (int k = 0; ok && k < 4; k++)
    if (count_of(t, glyph[k]) < 4)
      ok = 0, tap_diag("series %d's %s: %d", k, glyph[k], count_of(t, glyph[k]));
  tap_ok(ok, "three coinciding lines: each series' marker shows on the shared line %s", err);
  if (!ok && t) tap_diag("%s", t);
  free(t);
  plot_canvas_free(c);
  int marks[2] = {3, 6};
  plot_xy two[2] = {{x, same, 20, "bn"}, {x, low, 20, "ln"}};
  o.marks = marks;
  c = plot_fig_lines(two, 2, &o, 1, err);
  t = c ? plot_canvas_text(c) : NULL;
  tap_ok(t && strstr(t, "\u25b3 bn") && strstr(t, "\u25bd ln") && !strstr(t, "\u25cf"),
         "marks {3, 6}: the legend and the plot use triangle up and down, never the disc");
  free(t);
  plot_canvas_free(c);
}

/* plot_fmt_table_digits prints only the values that can decide (the extremes, the first
 * inexact ones): the same choice as printing them all (plot_fmt_table_digits_all), on
 * columns of every sort: wide and narrow, signs, values that round up a digit (9.9996),
 * exponents of three digits, integers, repeats, zeros, NaN and Inf, below 1e-3. */
static void table_digits_vs_all(void) {
  unsigned long long q = 0x853c49e6748fea9bULL;
  int bad = 0, trials = 0;
  double v[300];
  for (int t = 0; t < 4000; t++) {
    size_t n = 1 + (size_t)(t % 37) * (t % 3 ? 1 : 8);
    int kind = t % 9;
    for (size_t i = 0; i < n; i++) {
      q ^= q << 13, q ^= q >> 7, q ^= q << 17;
      double u = (double)(q >> 11) * 0x1p-53, e = (double)((q >> 3) % 41) - 20;
      /* 0 both signs, 1 decades, 2 values that round up a digit, 3 integers, 4 exponents
         past +-100, 5 repeats, 6 NaN, -Inf and small ones, 7 zeros, 8 a harmonic column */
      if (kind == 0)
        v[i] = u * 2 - 1;
      else if (kind == 1)
        v[i] = pow(10, e) * (u < 0.5 ? 1 : -1);
      else if (kind == 2)
        v[i] = 9.9995 + 1e-4 * u;
      else if (kind == 3)
        v[i] = (double)((q >> 5) % 2000) - 1000;
      else if (kind == 4)
        v[i] = pow(10, 6 * e) * u;
      else if (kind == 5)
        v[i] = i % 3 ? v[i > 0 ? i - 1 : 0] : u * 50;
      else if (kind == 6)
        v[i] = i % 5 == 0 ? NAN : i % 7 == 0 ? -INFINITY : u * 1e-4;
      else if (kind == 7)
        v[i] = i % 2 ? 0.0 : 123456.789 * u;
      else
        v[i] = 1.0 / (1.0 + (double)i) + (i % 4 == 0 ? 0.5 : 0);
    }
    int width = 4 + t % 9, maxd = t % 7, d1, k1, d2, k2;
    plot_fmt_table_digits(v, n, width, maxd, &d1, &k1);
    plot_fmt_table_digits_all(v, n, width, maxd, &d2, &k2);
    trials++;
    if (d1 != d2 || k1 != k2) {
      if (bad < 3)
        tap_diag("trial %d (kind %d, n %zu, width %d, maxd %d): %d/%d, all %d/%d", t, kind, n,
                 width, maxd, d1, k1, d2, k2);
      bad++;
    }
  }
  tap_ok(bad == 0,
         "table digits from the deciding values = from every value, %d columns (%d differ)", trials,
         bad);
}

int main(void) {
  table_digits_vs_all();
  goldens();
  coinciding();
  references();
  heatmap_numbers();
  palette();
  degenerate();
  properties();
  return tap_done();
}
