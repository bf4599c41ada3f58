/* input.c: panel 1, the input tensor as an editable grid with its statistics. */
#include <stdio.h>
#include <string.h>

#include "tui/screen.h"

static int digits(size_t v) {
  int d = 1;
  while (v >= 10) v /= 10, d++;
  return d;
}

/* The label of grid row `line` (0-based), 1-based as the screen counts: the row number
 * of a matrix or a vector's first element on the line, or for rank 3 and 4 the indices of
 * the leading axes ("2,17,5": example, channel, row), which a flat row number hides. */
static void row_label(const ns_tensor *x, size_t line, size_t per, char *buf, size_t len) {
  if (x->rank == 1) {
    snprintf(buf, len, "%zu", line * per + 1);
  } else if (x->rank == 2) {
    snprintf(buf, len, "%zu", line + 1);
  } else {
    size_t idx[4], rest = line;
    for (int a = x->rank - 2; a >= 0; a--) idx[a] = rest % x->shape[a], rest /= x->shape[a];
    size_t at = 0;
    for (int a = 0; a < x->rank - 1 && at < len; a++)
      at += (size_t)snprintf(buf + at, len - at, a ? ",%zu" : "%zu", idx[a] + 1);
  }
}

/* The width of the row labels: the longest label and a space, at least the old 4 / 5. */
static int label_width(const ns_tensor *x) {
  size_t cols = x->shape[x->rank - 1];
  int w;
  if (x->rank == 1)
    w = digits(x->n > cols - 1 ? x->n - cols + 1 : 1);
  else if (x->rank == 2)
    w = digits(x->shape[0]);
  else {
    w = x->rank - 2; /* the commas */
    for (int a = 0; a < x->rank - 1; a++) w += digits(x->shape[a]);
  }
  w += 1;
  return w < (x->rank > 1 ? 5 : 4) ? (x->rank > 1 ? 5 : 4) : w;
}

void tui_input_geometry(const ns_state *s, int iw, int *lab, int *cw, int *per) {
  size_t cols = s->x->shape[s->x->rank - 1];
  *lab = label_width(s->x);
  /* 8 columns a cell, or 7 when that shows every column and 8 would not */
  *cw = 8;
  if ((size_t)((iw - *lab) / 8) < cols && (size_t)((iw - *lab) / 7) >= cols) *cw = 7;
  *per = (iw - *lab) / *cw;
  if (*per < 1) *per = 1;
}

/* A tensor of any rank viewed as rows x cols: the last axis across, the rest down;
 * a vector is one row (as explore.h's x_insert/x_remove see it), drawn wrapped. */
static void grid_shape(const ns_tensor *x, size_t *rows, size_t *cols) {
  *cols = x->shape[x->rank - 1];
  *rows = x->n / *cols;
}

/* The panel's title: the shape, and where x came from when the state records it. The
 * longest form that fits in room cells: for a tensor of a file, a narrow panel drops the
 * file's name before the tensor's, then the shape's spaces; the last form is cut (with an
 * ellipsis) if even it does not fit. */
static void input_title(const ns_state *s, int room, char *title, size_t len) {
  char shape[64], tight[64];
  ns_shape_format(s->x->rank, s->x->shape, shape, sizeof shape);
  size_t k = 0;
  for (const char *c = shape; *c && k + 1 < sizeof tight; c++)
    if (*c != ' ') tight[k++] = *c;
  tight[k] = 0;
  if (!s->source || !s->source[0]) {
    snprintf(title, len, "1 Input x %s", shape);
    return;
  }
  const char *base = strrchr(s->source, '/'), *tn = strstr(s->source, ".safetensors:");
  base = base ? base + 1 : s->source;
  char forms[3][160];
  int nf = 0;
  if (tn) { /* one tensor of a file: its name outlives the file's */
    const char *name = tn + 13;
    int flen = (int)(tn + 12 - base);
    snprintf(forms[nf++], sizeof forms[0], "1 Input x %s %s from %.*s", shape, name, flen, base);
    snprintf(forms[nf++], sizeof forms[0], "1 Input x %s %s", shape, name);
    snprintf(forms[nf++], sizeof forms[0], "1 Input x %s %s", tight, name);
  } else {
    snprintf(forms[nf++], sizeof forms[0], "1 Input x %s from %s", shape, base);
  }
  int f = 0;
  while (f + 1 < nf && (int)strlen(forms[f]) > room) f++;
  snprintf(title, len, "%s", forms[f]);
}

/* Element idx in its cell of cw columns at (y, x): what the normalization sees, x
 * rounded to the dtype setting (fp16 turns 9998 and 10002 into 10000, and the grid shows
 * it), coloured by sign; the selected cell in reverse, with the edit in progress. */
static void draw_cell(const ns_state *s, WINDOW *w, const tui_view *v, int y, int x, int cw,
                      size_t idx, int here) {
  double val = ns_round(ns_tensor_get(s->x, idx), s->dtype);
  int style = here ? (PLOT_S_FOCUS | PLOT_F_REVERSE)
                   : (val < 0   ? PLOT_S_NEG
                      : val > 0 ? PLOT_S_POS
                                : PLOT_S_TEXT);
  char num[32], cell[48];
  if (here && v->edit) {
    size_t el = strlen(v->edit);
    const char *tail = el > (size_t)(cw - 2) ? v->edit + el - (size_t)(cw - 2) : v->edit;
    snprintf(cell, sizeof cell, "%*s_", cw - 2, tail);
  } else {
    plot_fmt(val, cw - 1, num, sizeof num);
    snprintf(cell, sizeof cell, "%*s", cw - 1, num);
  }
  tui_puts(w, y, x, style, cell);
}

/* The fields of the lines at the bottom, into f (room for 12): statistics over all
 * elements (why they are NaN when they are), then the storage dtype, the count, the range
 * and which part of the grid is shown when not all of it (rows, cols: texts in rtext,
 * ctext). buf holds the texts. Returns the number of fields. */
static int summary_fields(const ns_state *s, const ns_result *r, const char *rlabel,
                          const char *rtext, const char *ctext, char (*buf)[48], tui_field *f) {
  int n = 0;
  if (r->x_nan || r->x_inf) { /* say why the statistics are nan, not just that they are */
    snprintf(buf[0], sizeof buf[0], "x has %zu NaN %zu Inf:", r->x_nan, r->x_inf);
    f[n++] = (tui_field){.text = buf[0], .style = PLOT_S_MARK};
    f[n++] = (tui_field){.label = "mean", .v = r->x_mean, .style = PLOT_S_MARK};
    f[n++] = (tui_field){.label = "std", .v = r->x_std, .style = PLOT_S_MARK};
  } else {
    f[n++] = (tui_field){.label = "mean", .v = r->x_mean, .style = PLOT_S_LABEL};
    f[n++] = (tui_field){.label = "std", .v = r->x_std, .style = PLOT_S_LABEL};
    f[n++] = (tui_field){.label = "rms", .v = r->x_rms, .style = PLOT_S_LABEL};
  }
  int first = n;
  /* the tensor's own storage (the normalization rounds it to the dtype setting): the dtype
   * is the point when they differ */
  const char *st = ns_dtype_name(s->x->dtype), *dt = ns_dtype_name(s->dtype);
  if (s->dtype != s->x->dtype) {
    snprintf(buf[2], sizeof buf[2], "%s, shown" TUI_GLUES "as" TUI_GLUES "%s", st, dt);
    snprintf(buf[3], sizeof buf[3], "%s" TUI_GLUES "as" TUI_GLUES "%s", st, dt);
    f[n++] = (tui_field){.text = buf[2], .shrt_text = buf[3], .style = PLOT_S_DIM};
  } else {
    f[n++] = (tui_field){.text = st, .style = PLOT_S_DIM};
  }
  /* the count, which the title's shape gives too when room is short */
  snprintf(buf[1], sizeof buf[1], "%zu", r->n);
  f[n++] = (tui_field){.label = "n", .text = buf[1], .style = PLOT_S_DIM, .opt = 1};
  f[n++] = (tui_field){.label = "min", .v = r->x_min, .style = PLOT_S_DIM};
  f[n++] = (tui_field){.label = "max", .v = r->x_max, .style = PLOT_S_DIM};
  if (rtext[0]) f[n++] = (tui_field){.label = rlabel, .text = rtext, .style = PLOT_S_DIM};
  if (ctext[0]) f[n++] = (tui_field){.label = "cols", .text = ctext, .style = PLOT_S_DIM};
  f[first].brk = 1;
  return n;
}

/* The grid's window for vis_rows rows: its first line *l0, and the rows and cols it
 * shows, as texts ("" when all are). */
static void grid_window(size_t lines, size_t cur_line, size_t cols, size_t per, size_t c0,
                        int vector, int vis_rows, size_t *l0, char *rtext, char *ctext,
                        size_t len) {
  *l0 = cur_line >= (size_t)vis_rows ? cur_line - (size_t)vis_rows + 1 : 0;
  size_t last = *l0 + (size_t)vis_rows < lines ? *l0 + (size_t)vis_rows : lines;
  rtext[0] = ctext[0] = 0;
  if (lines > (size_t)vis_rows) snprintf(rtext, len, "%zu-%zu/%zu", *l0 + 1, last, lines);
  if (!vector && cols > per)
    snprintf(ctext, len, "%zu-%zu/%zu", c0 + 1, c0 + per < cols ? c0 + per : cols, cols);
}

void tui_draw_input(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v) {
  char title[160];
  input_title(s, tui_title_room(w, v), title, sizeof title);
  tui_frame(w, title, v);
  int iw = tui_iw(w), ih = tui_ih(w);
  size_t rows, cols;
  grid_shape(s->x, &rows, &cols);
  int here_focus = v->focused && v->vs->focus == TUI_PANEL_INPUT;
  int lab, cw, vis_cols;
  tui_input_geometry(s, iw, &lab, &cw, &vis_cols);
  if (vis_cols < 1) vis_cols = 1;
  size_t cr = (size_t)(v->vs->cursor_row < 0 ? 0 : v->vs->cursor_row);
  size_t cc = (size_t)(v->vs->cursor_col < 0 ? 0 : v->vs->cursor_col);
  if (v->vs->focus != TUI_PANEL_INPUT) cr = cc = 0;
  if (cr >= rows) cr = rows - 1;
  if (cc >= cols) cc = cols - 1;
  /* Screen lines: a vector wraps vis_cols elements per line; a matrix shows a window
   * of rows x columns that follows the cursor. */
  int vector = s->x->rank == 1;
  size_t per = (size_t)vis_cols, lines, cur_line, c0 = 0;
  if (vector) {
    lines = (cols + per - 1) / per;
    cur_line = cc / per;
  } else {
    lines = rows;
    cur_line = cr;
    c0 = cc >= per ? cc - per + 1 : 0;
  }
  /* The lines at the bottom: two, or as many more as give the fields the most digits (the
   * fewest lines for those): the grid's unused rows, and up to two rows of a long grid
   * (it keeps three). */
  tui_field f[12];
  char buf[4][48], rtext[48], ctext[48];
  const char *rlabel = vector ? "lines" : "rows";
  int most = ih - 2 < 1 ? 1 : ih - 2, foot = most < 2 ? most : 2, nf = 0;
  int spare = ih - 3 - (int)lines, free_most = foot + (spare > 0 ? spare : 0);
  size_t l0 = 0;
  for (int k = foot, best = 0; k <= most; k++) {
    int vr = ih - 1 - k;
    /* a long grid keeps three rows, or two when its fields would not all be shown */
    if (k > free_most && (k > free_most + 2 || vr < (best ? 3 : 2))) break;
    grid_window(lines, cur_line, cols, per, c0, vector, vr, &l0, rtext, ctext, sizeof rtext);
    nf = summary_fields(s, r, rlabel, rtext, ctext, buf, f);
    int q = 0;
    /* a grid row is given for more digits, the grid's unused rows for any roomier form */
    if (tui_fields_fit(iw, k, f, nf, &q) &&
        (k > free_most && best ? TUI_FIELDS_DIGITS(q) > TUI_FIELDS_DIGITS(best) : q > best)) {
      best = q, foot = k;
      if (q == TUI_FIELDS_ROOMY) break;
    }
  }
  int vis_rows = ih - 1 - foot;
  if (vis_rows < 1) vis_rows = 1;
  grid_window(lines, cur_line, cols, per, c0, vector, vis_rows, &l0, rtext, ctext, sizeof rtext);
  nf = summary_fields(s, r, rlabel, rtext, ctext, buf, f);
  for (int k = 0; k < vis_cols; k++) {
    size_t col = vector ? (size_t)k : c0 + (size_t)k;
    if (col >= cols) break;
    tui_printf(w, 1, 1 + lab + k * cw, PLOT_S_DIM, "%*zu", cw - 1,
               vector ? (size_t)k + 1 : col + 1);
  }
  if (s->x->rank == 1) tui_puts(w, 1, 1, PLOT_S_DIM, "i");
  if (s->x->rank == 3) tui_puts(w, 1, 1, PLOT_S_DIM, "n,c");
  if (s->x->rank == 4 && lab > 6) tui_puts(w, 1, 1, PLOT_S_DIM, "n,c,h");
  for (int i = 0; i < vis_rows && l0 + (size_t)i < lines; i++) {
    size_t line = l0 + (size_t)i;
    char rl[48];
    row_label(s->x, line, per, rl, sizeof rl);
    tui_printf(w, 2 + i, 1, PLOT_S_DIM, "%*s", lab - 1, rl);
    for (int k = 0; k < vis_cols; k++) {
      size_t row = vector ? 0 : line, col = vector ? line * per + (size_t)k : c0 + (size_t)k;
      if (col >= cols) break;
      draw_cell(s, w, v, 2 + i, 1 + lab + k * cw, cw, row * cols + col,
                here_focus && row == cr && col == cc);
    }
  }
  int used = tui_fields_fit(iw, foot, f, nf, NULL);
  tui_fields(w, ih - (used ? used : foot) + 1, 1, iw, foot, f, nf);
}
