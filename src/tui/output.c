/* output.c: panel 3, the normalized values with bars, and the shift and scale probes
 * shown value by value so the invariance (or its failure) is visible. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/screen.h"

/* How far a probe may move y and still count as invariant: what rounding to the dtype
 * can do, 32 ulps of the largest output plus, for the shift probe, the rounding of the
 * shifted input itself (|x| + |b| in ulps, divided by the smallest denominator), so an
 * fp32 map is not called "NOT invariant" for its rounding while eps's genuine effect
 * (about 1e-6 on the default x) still shows in fp64. */
static double probe_tol(const ns_state *s, const ns_result *r, double ymax, double shift) {
  double u = ns_dtype_eps(s->dtype), tol = 32 * u * (1 + ymax);
  if (shift != 0 && r->norm.denom) {
    double smin = INFINITY, xmax = fmax(fabs(r->x_min), fabs(r->x_max));
    for (size_t k = 0; k < r->norm.plan.nstat; k++)
      if (r->norm.denom[k] > 0 && r->norm.denom[k] < smin) smin = r->norm.denom[k];
    if (isfinite(smin) && isfinite(xmax)) tol += 32 * u * (xmax + fabs(shift)) / smin;
  }
  return tol;
}
/* A probe whose tolerance covers every deviation y could show (twice its largest value)
 * cannot fail: its verdict is undetermined in the dtype, not "invariant". */
static int cannot_fail(double tol, double scale) {
  return tol >= 2 * fmax(scale, 1);
}
static const char *verdict(double dev, double tol, double scale, ns_dtype dt, char *buf,
                           size_t len) {
  if (!isnan(dev) && cannot_fail(tol, scale)) {
    snprintf(buf, len, "undet. in %s", ns_dtype_name(dt));
    return buf;
  }
  return isnan(dev) ? "undefined" : dev > tol ? "NOT invariant" : "invariant";
}
/* A deviation: 4 significant digits when it matters (2.055), 2 when it is tiny. */
static const char *dev_num(double dev, char *buf, size_t len) {
  if (dev == 0)
    snprintf(buf, len, "0");
  else
    snprintf(buf, len, dev >= 1e-3 || !isfinite(dev) ? "%.4g" : "%.2g", dev);
  return buf;
}
/* A mean or std of y: six decimals (a rounding-level -5.6e-17 reads as 0.000000). */
static const char *fixed6(double v, char *buf, size_t len) {
  if (!isfinite(v) || fabs(v) >= 1e6) return tui_num(v, buf, len);
  snprintf(buf, len, "%.6f", fabs(v) < 5e-7 ? 0.0 : v);
  return buf;
}
static int verdict_style(double dev, double tol, double scale) {
  return isnan(dev) || dev > tol || cannot_fail(tol, scale) ? PLOT_S_MARK : PLOT_S_GOOD;
}

/* The largest |y| (of the first 100000 values): the bars' and the probes' scale. */
static double y_scale(const ns_tensor *y) {
  double scale = 0;
  for (size_t i = 0; i < y->n && i < 100000; i++) {
    double t = fabs(ns_tensor_get(y, i));
    if (isfinite(t) && t > scale) scale = t;
  }
  return scale;
}

/* A vector, element by element from first (count of them): the index, y, y(x+b) and
 * y(a x) in one column format (the decimal points line up, equal values read as equal),
 * a probe that moved marked, and a bar of y. */
static void draw_list(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v, int lab,
                      int nw, int barw, int show_probes, size_t first, size_t count, size_t cur) {
  const ns_tensor *y = r->norm.y;
  double *vals = malloc(4 * count * sizeof *vals); /* y, then y and both probes */
  if (!vals) return;
  double *col = vals + count;
  double scale = y_scale(y);
  for (size_t i = 0; i < count; i++) vals[i] = ns_tensor_get(y, first + i);
  size_t ncol = 0;
  for (size_t i = 0; i < count; i++) col[ncol++] = vals[i];
  if (show_probes && r->y_shift && r->y_scale)
    for (size_t i = 0; i < count; i++) {
      size_t pj = ns_probe_index(r, s->x, first + i);
      if (pj == NS_PROBE_NONE) continue;
      col[ncol++] = ns_tensor_get(r->y_shift, pj);
      col[ncol++] = ns_tensor_get(r->y_scale, pj);
    }
  int dec = plot_fmt_decimals(col, ncol, nw - 1, 5);
  plot_canvas *c = tui_canvas(barw, (int)count, v);
  if (c) {
    plot_bars(c, 0, 0, barw, vals, count, scale, NULL);
    tui_blit(w, 2, 1 + lab + (show_probes ? 3 * nw : nw) + 1, c);
    plot_canvas_free(c);
  }
  for (size_t i = 0; i < count; i++) {
    size_t idx = first + i;
    int yy = 2 + (int)i;
    /* the selected element's label in reverse video */
    int ls = idx == cur && v->focused ? PLOT_S_FOCUS | PLOT_F_REVERSE : PLOT_S_DIM;
    tui_printf(w, yy, 1, ls, "%*zu", lab - 1, idx + 1);
    char num[32];
    if (s->mask && !ns_mask_keeps(s->mask, s->x->rank, s->x->shape, idx)) {
      /* masked (padding): out of every statistic, its output the constant 0 */
      const char *dot = v->ascii ? "." : "\xc2\xb7";
      int cells = show_probes && r->y_shift && r->y_scale ? 3 : 1;
      for (int k = 0; k < cells; k++)
        tui_printf(w, yy, 1 + lab + k * nw + nw - 2, PLOT_S_DIM, "%s", dot);
      continue;
    }
    int deg = r->norm.degenerate && r->norm.degenerate[ns_norm_plan_stat_of(&r->norm.plan, idx)];
    tui_printf(w, yy, 1 + lab, deg ? PLOT_S_MARK : PLOT_S_TEXT, "%*s", nw,
               plot_fmt_fixed(vals[i], nw - 1, dec, num, sizeof num));
    size_t pj = show_probes ? ns_probe_index(r, s->x, idx) : NS_PROBE_NONE;
    if (show_probes && r->y_shift && r->y_scale && pj == NS_PROBE_NONE) {
      tui_printf(w, yy, 1 + lab + nw, PLOT_S_DIM, "%*s%*s", nw, "-", nw, "-");
    } else if (show_probes && r->y_shift && r->y_scale) {
      double ys = ns_tensor_get(r->y_shift, pj), ya = ns_tensor_get(r->y_scale, pj);
      double y0 = r->y_probe ? ns_tensor_get(r->y_probe, pj) : vals[i];
      /* A probe value that moved away from y is marked: the map is not invariant. */
      double tol = probe_tol(s, r, fabs(y0), s->shift), tola = probe_tol(s, r, fabs(y0), 0);
      tui_printf(w, yy, 1 + lab + nw, fabs(ys - y0) > tol ? PLOT_S_MARK : PLOT_S_DIM, "%*s", nw,
                 plot_fmt_fixed(ys, nw - 1, dec, num, sizeof num));
      tui_printf(w, yy, 1 + lab + 2 * nw, fabs(ya - y0) > tola ? PLOT_S_MARK : PLOT_S_DIM, "%*s",
                 nw, plot_fmt_fixed(ya, nw - 1, dec, num, sizeof num));
    }
  }
  free(vals);
}

/* A matrix as it is stored, rows first .. first+count-1 and columns c0 .. c0+per-1: a header
 * of column numbers, then per row its label (the indices of every axis but the last: the
 * 2-D slice and the row in it, "2,3" of a (2,4,3) tensor) in labw columns and a cell of mw
 * columns per value. The probes are judged in the lines under it (max|y'-y|); a value of a
 * degenerate statistic is marked, a masked cell is a dot, the selected cell in reverse. */
static void draw_matrix(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v,
                        int labw, int mw, int per, size_t first, size_t count, size_t c0,
                        size_t cur) {
  const ns_tensor *y = r->norm.y, *x = s->x;
  size_t cols = x->shape[x->rank - 1];
  if (c0 + (size_t)per > cols) per = (int)(cols - c0);
  double *vals = malloc(count * (size_t)per * sizeof *vals);
  if (!vals) return;
  size_t nv = 0;
  for (size_t i = 0; i < count; i++)
    for (int k = 0; k < per; k++) vals[nv++] = ns_tensor_get(y, (first + i) * cols + c0 + k);
  int dec = plot_fmt_decimals(vals, nv, mw - 1, 5);
  tui_printf(w, 1, 1, PLOT_S_DIM, "%-*s", labw, "y");
  for (int k = 0; k < per; k++)
    tui_printf(w, 1, 2 + labw + k * mw, PLOT_S_DIM, "%*zu", mw - 1, c0 + (size_t)k + 1);
  for (size_t i = 0; i < count; i++) {
    size_t row = first + i;
    int yy = 2 + (int)i;
    /* the label: the row's index along every axis but the last, 1-based */
    char label[96];
    size_t rest = row, at = sizeof label - 1;
    label[at] = 0;
    for (int k = x->rank - 2; k >= 0 && at > 24; k--) {
      char d[24];
      int l = snprintf(d, sizeof d, "%s%zu", k > 0 ? "," : "", rest % x->shape[k] + 1);
      rest /= x->shape[k];
      at -= (size_t)l;
      memcpy(label + at, d, (size_t)l);
    }
    int here_row = cur / cols == row && v->focused;
    tui_printf(w, yy, 1, here_row ? PLOT_S_FOCUS : PLOT_S_DIM, "%*s", labw, label + at);
    for (int k = 0; k < per; k++) {
      size_t idx = row * cols + c0 + (size_t)k;
      int cx = 2 + labw + k * mw;
      int here = idx == cur && v->focused;
      if (s->mask && !ns_mask_keeps(s->mask, x->rank, x->shape, idx)) {
        tui_printf(w, yy, cx + mw - 2, PLOT_S_DIM, "%s", v->ascii ? "." : "\xc2\xb7");
        continue;
      }
      double val = vals[i * (size_t)per + (size_t)k];
      int style = PLOT_S_TEXT;
      if (r->norm.degenerate && r->norm.degenerate[ns_norm_plan_stat_of(&r->norm.plan, idx)])
        style = PLOT_S_MARK;
      if (here) style = PLOT_S_FOCUS | PLOT_F_REVERSE;
      char num[32];
      tui_printf(w, yy, cx, style, "%*s", mw - 1,
                 plot_fmt_fixed(val, mw - 1, dec, num, sizeof num));
    }
  }
  free(vals);
}

/* A vector's columns: the element numbers (as wide as the largest one and a space, at
 * least 4), y, y(x+b) and y(a x) as numbers of nw columns, then a bar of y of barw (odd,
 * so the zero axis sits in the middle). The probes show when the bar keeps 5 columns. */
static void list_columns(int iw, size_t n, int *lab, int *nw, int *barw, int *show_probes) {
  *lab = 4;
  for (size_t t = n, d = 0;; t /= 10) {
    if (!t) {
      if ((int)d + 1 > *lab) *lab = (int)d + 1;
      break;
    }
    d++;
  }
  *nw = iw >= 44 ? 10 : 9, *barw = iw - *lab - 3 * *nw - 1;
  if (*barw < 5 && *lab > 4 && iw - *lab - 3 * 8 - 1 >= 5) /* long labels: narrower numbers */
    *nw = 8, *barw = iw - *lab - 3 * *nw - 1;
  *show_probes = *barw >= 5;
  if (!*show_probes) *barw = iw - *lab - *nw - 1;
  /* an odd width puts the zero axis in the middle: as many cells left as right */
  if (*barw % 2 == 0) (*barw)--;
}

/* A matrix's columns: the row label (every index but the last's, "2,3,1") in labw, then
 * per cells of mw (8 when that fits every column and 9 does not). */
static void matrix_columns(const ns_tensor *x, int iw, int *labw, int *mw, int *per) {
  size_t cols = x->shape[x->rank - 1];
  *labw = 0, *mw = 9;
  for (int k = 0; k + 1 < x->rank; k++) {
    char d[24];
    *labw += snprintf(d, sizeof d, "%zu", x->shape[k]) + (k > 0);
  }
  if (*labw < 1) *labw = 1;
  if ((size_t)((iw - *labw - 1) / *mw) < cols && (size_t)((iw - *labw - 1) / 8) >= cols) *mw = 8;
  *per = (iw - *labw - 1) / *mw;
  if (*per < 1) *per = 1;
  if ((size_t)*per > cols) *per = (int)cols;
}

/* What is degenerate, in words: "2 degenerate statistics: zero variance: ...". */
static void degenerate_words(const ns_result *r, char *why, size_t len) {
  why[0] = 0;
  if (r->norm.ndegenerate)
    snprintf(why, len, "%zu degenerate statistic%s: %s", r->norm.ndegenerate,
             r->norm.ndegenerate > 1 ? "s" : "", r->degenerate_why);
  else if (r->degenerate_why[0])
    snprintf(why, len, "%s", r->degenerate_why);
}

/* The statistic that normalized element cur, whole on one line: its mean, variance (or
 * mean square) and s (the number that explains y), with fewer digits and without the word
 * "stat" when the line is narrow. */
static void draw_stat_line(const ns_state *s, const ns_result *r, WINDOW *w, int py, size_t cur,
                           int iw) {
  size_t k = ns_norm_plan_stat_of(&r->norm.plan, cur);
  ns_spec sp;
  ns_state_spec(s, &sp);
  char which[48];
  snprintf(which, sizeof which, "%zu/%zu:", k + 1, r->norm.plan.nstat);
  /* RMS: the mean square ("ms" read as milliseconds next to the header's calc time) */
  tui_field f[4] = {
      {.label = "stat", .shrt = "", .text = which, .style = PLOT_S_DIM},
      {.label = "mean", .v = r->norm.mean ? r->norm.mean[k] : NAN, .style = PLOT_S_DIM},
      {.label = ns_spec_center(&sp) ? "var" : "msq",
       .v = r->norm.var ? r->norm.var[k] : NAN,
       .style = PLOT_S_DIM},
      {.label = "s", .v = r->norm.denom ? r->norm.denom[k] : NAN, .style = PLOT_S_DIM},
  };
  tui_fields(w, py, 1, iw, 1, f, 4);
}

/* y's mean and std; with a mask, first how many elements it kept (the statistics saw
 * only those), when that fits. */
static void draw_moments(const ns_state *s, const ns_result *r, WINDOW *w, int py, int iw) {
  char a[32], b[32], yl[128];
  double kept = 0;
  for (size_t k = 0; s->mask && r->norm.batch && k < r->norm.plan.nstat; k++)
    kept += r->norm.batch[k].n;
  fixed6(r->y_mean, a, sizeof a), fixed6(r->y_std, b, sizeof b);
  int yn = snprintf(yl, sizeof yl,
                    "kept" TUI_GLUES "%.0f/%zu:" TUI_GLUES "mean" TUI_GLUES "%s std" TUI_GLUES "%s",
                    kept, r->norm.y->n, a, b);
  if (!s->mask || yn > iw)
    snprintf(yl, sizeof yl, "y: mean" TUI_GLUES "%s  std" TUI_GLUES "%s", a, b);
  tui_printf(w, py, 1, PLOT_S_LABEL, "%s", yl);
}

/* The two probes' verdicts (hs and ha name them), then, with verdict_note, a line on
 * what they were judged against or what breaks scale invariance; returns the next row. */
static int draw_verdicts(const ns_state *s, const ns_result *r, WINDOW *w, int py, double scale,
                         const char *hs, const char *ha, int verdict_note) {
  char dv[32], note[128] = "", vb[40];
  double tol_s = probe_tol(s, r, scale, s->shift), tol_a = probe_tol(s, r, scale, 0);
  if (cannot_fail(tol_s, scale) || cannot_fail(tol_a, scale))
    snprintf(note, sizeof note, "%s can't resolve x: tol" TUI_GLUES "%.2g", ns_dtype_name(s->dtype),
             cannot_fail(tol_s, scale) ? tol_s : tol_a);
  else if (r->scale_dev > tol_a && s->eps > 0)
    snprintf(note, sizeof note, "eps %g breaks the scale invariance", s->eps);
  else if (s->dtype != NS_FP64)
    snprintf(note, sizeof note, "verdicts allow %s rounding:" TUI_GLUES "%.2g",
             ns_dtype_name(s->dtype), tol_s > tol_a ? tol_s : tol_a);
  tui_printf(w, py++, 1, verdict_style(r->shift_dev, tol_s, scale),
             "%-5s max|y'-y|" TUI_GLUES "%s" TUI_GLUES "%s", hs,
             dev_num(r->shift_dev, dv, sizeof dv),
             verdict(r->shift_dev, tol_s, scale, s->dtype, vb, sizeof vb));
  tui_printf(w, py++, 1, verdict_style(r->scale_dev, tol_a, scale),
             "%-5s max|y'-y|" TUI_GLUES "%s" TUI_GLUES "%s", ha,
             dev_num(r->scale_dev, dv, sizeof dv),
             verdict(r->scale_dev, tol_a, scale, s->dtype, vb, sizeof vb));
  if (verdict_note) {
    if (note[0]) tui_puts(w, py, 1, PLOT_S_DIM, note);
    py++;
  }
  return py;
}

void tui_draw_output(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v) {
  char title[96];
  snprintf(title, sizeof title, "3 Output y = %s(x%s)", ns_kind_title(s->kind),
           s->mask ? ", mask" : "");
  tui_frame(w, title, v);
  int iw = tui_iw(w), ih = tui_ih(w);
  const ns_tensor *y = r->norm.y;
  if (!y) {
    tui_puts(w, 1, 1, PLOT_S_MARK, "no output (see the message line)");
    return;
  }
  size_t n = y->n, cols = s->x->shape[s->x->rank - 1];
  /* A vector is listed element by element, with its probes and a bar; a matrix (and a
   * tensor of higher rank, as its 2-D slices) is shown as it is stored, a row a line. */
  int matrix = s->x->rank > 1;
  size_t lines = matrix ? n / cols : n;
  int lab = 4, nw = 9, barw = 0, show_probes = 0, labw = 0, mw = 9, per = 1;
  if (matrix)
    matrix_columns(s->x, iw, &labw, &mw, &per);
  else
    list_columns(iw, n, &lab, &nw, &barw, &show_probes);
  char hs[32], ha[32];
  snprintf(hs, sizeof hs, "x%+g", s->shift);
  snprintf(ha, sizeof ha, "%gx", s->scale);
  if (!matrix) {
    tui_printf(w, 1, 1 + lab, PLOT_S_DIM, "%*s", nw, "y");
    if (show_probes) {
      tui_printf(w, 1, 1 + lab + nw, PLOT_S_DIM, "%*.*s", nw, nw - 1, hs);
      tui_printf(w, 1, 1 + lab + 2 * nw, PLOT_S_DIM, "%*.*s", nw, nw - 1, ha);
    }
  }
  /* Lines under the values: y's moments, the probes, flags, and (when there is room)
   * the statistics that normalized. */
  int note_lines = r->eval_note ? tui_wrap_lines(w, 1, r->eval_note) : 0;
  if (note_lines > 2) note_lines = 2;
  char why[sizeof r->degenerate_why + 48];
  degenerate_words(r, why, sizeof why);
  /* the lines under the values come once a long list has its TUI_LIST_MIN rows */
  int want = (int)(lines < TUI_LIST_MIN ? lines : TUI_LIST_MIN);
  int base = 3 + (r->probe_n < n ? 1 : 0) + note_lines;
  /* why y is degenerate: whole where the rows leave room for it, else its first two lines
     (the review: "cancelled to 0 in fp32 (the values" over three empty rows) */
  int why_full = why[0] ? tui_wrap_lines(w, 1, why) : 0;
  int why_lines = why_full > 2 && ih - 1 - (base + why_full) - 1 < want ? 2 : why_full;
  int probe_lines = base + why_lines;
  int stats_line = ih - 1 - probe_lines - 1 >= want;
  probe_lines += stats_line;
  /* one line on what the verdicts were judged against, when the rows leave room for it */
  int verdict_note = ih - 1 - probe_lines - 1 >= (want < 4 ? want : 4);
  probe_lines += verdict_note;
  int vis = ih - 1 - probe_lines;
  int hidden = (size_t)vis < lines || (matrix && (size_t)per < cols);
  if (hidden) { /* then one more line says which rows are listed */
    probe_lines++;
    vis--;
  }
  if (vis < 1) vis = 1;
  /* The rows shown follow the input cursor, so a large tensor shows the same window here. */
  size_t cur = 0, crow = 0, ccol = 0;
  int follows = v->vs->focus == TUI_PANEL_INPUT || v->vs->focus == TUI_PANEL_OUTPUT;
  if (follows && v->vs->cursor_row >= 0 && v->vs->cursor_col >= 0) {
    crow = (size_t)v->vs->cursor_row;
    ccol = (size_t)v->vs->cursor_col;
    cur = crow * cols + ccol;
  }
  if (cur >= n) cur = n - 1;
  crow = cur / cols;
  ccol = cur % cols;
  size_t curline = matrix ? crow : cur;
  size_t first = curline >= (size_t)vis ? curline - (size_t)vis + 1 : 0;
  size_t count = lines - first < (size_t)vis ? lines - first : (size_t)vis;
  size_t c0 = matrix && ccol >= (size_t)per ? ccol - (size_t)per + 1 : 0;
  if (matrix)
    draw_matrix(s, r, w, v, labw, mw, per, first, count, c0, cur);
  else
    draw_list(s, r, w, v, lab, nw, barw, show_probes, first, count, cur);
  int py = ih - probe_lines + 1;
  /* which elements are listed, always: a list that hides some says so */
  if (hidden && matrix && (size_t)per < cols)
    tui_printf(w, py++, 1, PLOT_S_DIM,
               "rows" TUI_GLUES "%zu-%zu/%zu  cols" TUI_GLUES "%zu-%zu/%zu  (arrows)", first + 1,
               first + count, lines, c0 + 1, c0 + (size_t)per, cols);
  else if (hidden)
    tui_printf(w, py++, 1, PLOT_S_DIM, "rows %zu-%zu/%zu  (arrows," TUI_GLUES "PgUp/PgDn)",
               first + 1, first + count, lines);
  if (stats_line) draw_stat_line(s, r, w, py++, cur, iw);
  draw_moments(s, r, w, py++, iw);
  py = draw_verdicts(s, r, w, py, y_scale(y), hs, ha, verdict_note);
  if (r->probe_n < n && (r->probe_axis == 0 || s->x->rank == 1)) {
    tui_printf(w, py++, 1, PLOT_S_DIM, "probes: first" TUI_GLUES "%zu/%zu" TUI_GLUES "values",
               r->probe_n, n);
  } else if (r->probe_n < n) { /* whole statistics: the leading entries of a later axis */
    char at[48] = "";
    for (int a = 0; a < r->probe_axis && a < 8; a++) strcat(at, ":,");
    tui_printf(w, py++, 1, PLOT_S_DIM, "probes: x[%s:%zu]," TUI_GLUES "%zu/%zu" TUI_GLUES "values",
               at, r->probe_k, r->probe_n, n);
  }
  if (why_lines) py += tui_wrap(w, py, 1, PLOT_S_MARK, why, why_lines);
  if (r->eval_note) tui_wrap(w, py, 1, PLOT_S_DIM, r->eval_note, note_lines);
}
