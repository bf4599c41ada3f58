/* spectrum.c: panel 4, the Jacobian's eigenvalues: closed form, LAPACK on the analytic
 * Jacobian and LAPACK on finite differences side by side, their largest disagreement,
 * and the rank at a stated tolerance. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/screen.h"

/* The entry of list[0..n) an eigenvalue pairs with (result.h's rule, the one the
 * agreement figures use), or NULL. */
static const ns_eig *match(const ns_eig *list, int n, ns_label label, double value) {
  int k = ns_eig_pair(list, n, NULL, label, value, 1e-6, NULL);
  return k >= 0 ? &list[k] : NULL;
}

/* What the rank says: which directions J sends to zero (rows whose numeric eigenvalue is
 * below the rank tolerance), e.g. "rank 2 = d-2: ones, radial removed". */
static const char *rank_meaning(const ns_result *r, const ns_eig *rows, int nrows, char *buf,
                                size_t len) {
  int null = (int)r->jn - r->rank;
  if (null <= 0) {
    snprintf(buf, len, "rank %d = d: full, no direction lost", r->rank);
    return buf;
  }
  char names[64] = "";
  int named = 0;
  for (int i = 0; i < nrows; i++) {
    const ns_eig *num = r->nclosed > 0
                            ? match(r->spec_numeric, r->nnumeric, rows[i].label, rows[i].value)
                            : &rows[i];
    if (!num || fabs(num->value) > r->rank_tol) continue;
    size_t at = strlen(names);
    snprintf(names + at, sizeof names - at, "%s%s", named ? "+" : "", ns_label_name(rows[i].label));
    named += rows[i].mult;
  }
  if (named == null)
    snprintf(buf, len, "rank %d = d-%d: %s dir%s removed", r->rank, null, names,
             null > 1 ? "s" : "");
  else
    snprintf(buf, len, "rank %d = d-%d: %d directions removed", r->rank, null, null);
  return buf;
}

static int is_centered(const ns_state *s) {
  ns_spec spec;
  ns_state_spec(s, &spec);
  return ns_spec_center(&spec);
}

/* The check of entry e: ns_spectrum_check's of the same label whose value e stands for
 * (the closed form merges values within 1e-8 of the largest into one entry), or NULL. */
static const ns_eigcheck *check_of(const ns_result *r, const ns_eig *e) {
  double big = 0;
  for (int i = 0; i < r->nclosed; i++) big = fmax(big, fabs(r->spec_closed[i].value));
  for (int i = 0; i < r->neigchk; i++) {
    const ns_eigcheck *c = &r->eigchk[i];
    if (c->label == e->label && fabs(c->value - e->value) <= 1e-8 * big + 1e-12) return c;
  }
  return NULL;
}

/* The formula line at the bottom: what each label's eigenvalue is. */
static void formula_line(const ns_state *s, const ns_result *r, WINDOW *w, int y, int symm) {
  const char *sym = is_centered(s) ? "s" : "r";
  ns_spec spec;
  ns_state_spec(s, &spec);
  (void)r;
  if (ns_spec_eval_running(&spec, s->x->rank)) /* the core's rule, explicit axes included */
    tui_printf(w, y, 1, PLOT_S_DIM, "eval: fixed statistics, J diagonal");
  else
    tui_printf(w, y, 1, PLOT_S_DIM, "%sradial eps/%s^%d  bulk 1/%s%s",
               is_centered(s) ? "ones 0  " : "", sym, s->eps_at == NS_EPS_VAR ? 3 : 2, sym,
               symm ? "" : "  J not symm.");
}

/* The m column's width: 2, or the digits of the largest multiplicity and a space. */
static int mult_width(const ns_eig *e, int n) {
  int big = 0;
  for (int i = 0; i < n; i++)
    if (e[i].mult > big) big = e[i].mult;
  int wd = 1;
  while (big >= 10) big /= 10, wd++;
  return wd < 2 ? 2 : wd + 1; /* a space after a 6-letter label */
}

/* Without the full J (above NS_EXPLORE_JAC_FULL_LIMIT elements, or while the worker computes
 * it): the closed form, each row with its check along its eigenvector (J v by the
 * closed-form JVP and by central differences, against lambda v), and where LAPACK is. */
static void draw_closed(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v) {
  int iw = tui_iw(w), ih = tui_ih(w), footer = 4, y = 1;
  int mw = mult_width(r->spec_closed, r->nclosed);
  int ow = iw - 6 - mw - 2 * 8;
  if (ow > 14) ow = 14;
  if (ow < 8) ow = 8;
  int cw = (iw - 6 - mw - ow) / 2; /* the two residual columns */
  if (cw > 9) cw = 9;
  if (cw < 6) cw = 6;
  const char *lam = v->ascii ? "l" : "\xce\xbb"; /* lambda */
  char hj[16];
  /* right-aligned over its column like the values, and never touching "closed": the label
     is 7 columns wide (lambda is 2 bytes, 1 column) */
  snprintf(hj, sizeof hj, "%*s|Jv-%sv|", cw - 7 > 1 ? cw - 7 : 1, "", lam);
  tui_printf(w, y++, 1, PLOT_S_DIM, "%-6s%*s%*s%s%*s", "label", mw, "m", ow, "closed", hj, cw,
             "FD");
  double *all = malloc((size_t)(r->nclosed > 0 ? r->nclosed : 1) * sizeof *all);
  int dec = 3, sci = 1;
  if (all) {
    for (int i = 0; i < r->nclosed; i++) all[i] = r->spec_closed[i].value;
    plot_fmt_table_digits(all, (size_t)r->nclosed, ow - 1, 6, &dec, &sci);
    free(all);
  }
  int room = ih - footer - y + 1, shown = r->nclosed;
  int hidden = room < shown;
  if (hidden) room--;
  if (room < 1) room = 1;
  int sel = v->vs->row[TUI_PANEL_SPECTRUM];
  if (sel >= shown) sel = shown - 1;
  if (sel < 0) sel = 0;
  int first = sel >= room ? sel - room + 1 : 0;
  for (int i = first; i < shown && i < first + room; i++, y++) {
    const ns_eig *e = &r->spec_closed[i];
    const ns_eigcheck *c = check_of(r, e);
    char val[32], jr[16] = "", fr[16] = "";
    plot_fmt_table(e->value, ow - 1, dec, sci, val, sizeof val);
    if (c) {
      snprintf(jr, sizeof jr, "%.1e", c->jvp_res);
      snprintf(fr, sizeof fr, "%.1e", c->fd_res);
    }
    int bad = c && !(c->jvp_res <= c->jvp_tol && c->fd_res <= c->fd_tol);
    int style = bad                           ? PLOT_S_MARK
                : e->label == NS_LABEL_ONES   ? PLOT_S_DIM
                : e->label == NS_LABEL_RADIAL ? PLOT_S_POS
                                              : PLOT_S_TEXT;
    if (v->focused && i == sel) style = PLOT_S_FOCUS | PLOT_F_REVERSE;
    tui_printf(w, y, 1, style, "%-6s%*d%*s%*s%*s", ns_label_name(e->label), mw, e->mult, ow, val,
               cw, jr, cw, fr);
  }
  if (hidden)
    tui_printf(w, y++, 1, PLOT_S_DIM, "entries %d-%d/%d  (Alt-4, arrows)", first + 1,
               first + room < shown ? first + room : shown, r->nclosed);
  y = ih - footer + 1;
  if (r->eigchk_pending) {
    tui_printf(w, y++, 1, PLOT_S_DIM, "Jv=%sv: checking... (m %zu)", lam, r->eigchk_m);
  } else if (r->neigchk > 0) { /* J v = lambda v by the JVP and by FD, on 1 or 2 statistics */
    size_t st = r->eigchk_stat[0];
    int nst = r->eigchk_stat[r->neigchk - 1] != st ? 2 : 1;
    tui_printf(w, y++, 1, r->eigchk_ok ? PLOT_S_GOOD : PLOT_S_MARK, "Jv=%sv %s: %d stat%s, m %zu",
               lam, r->eigchk_ok ? "ok" : "FAILS", nst, nst > 1 ? "s" : "", r->eigchk_m);
  } else {
    tui_puts(w, y++, 1, PLOT_S_DIM, "no eigenvector check here");
  }
  if (r->jac_pending)
    tui_puts(w, y++, 1, PLOT_S_DIM, "LAPACK on J: computing...");
  else if (r->n > NS_EXPLORE_JAC_FULL_LIMIT)
    tui_printf(w, y++, 1, PLOT_S_DIM, "LAPACK: J not formed (n %zu)", r->n);
  else
    tui_printf(w, y++, 1, PLOT_S_DIM, "LAPACK: %s", r->jac_skip[0] ? r->jac_skip : "not run");
  char rk[48];
  tui_printf(w, y++, 1, r->closed_rank < (int)r->n ? PLOT_S_POS : PLOT_S_DIM, "%s (closed form)",
             tui_rank(r->closed_rank, r->n, rk, sizeof rk));
  formula_line(s, r, w, y, 1);
}

/* Without J and without a closed form: why, wrapped at word boundaries. */
static void draw_skipped(const ns_result *r, WINDOW *w, int ih) {
  const char *why = r->closed_skip[0] ? r->closed_skip
                    : r->jac_skip[0]  ? r->jac_skip
                                      : "Jacobian probes skipped (no reason given)";
  int y = 1 + tui_wrap(w, 1, 1, PLOT_S_MARK, why, ih);
  if (y <= ih && r->jac_pending)
    tui_puts(w, y++, 1, PLOT_S_DIM, "(no closed form: LAPACK is computing...)");
  else if (y <= ih && r->n > NS_EXPLORE_JAC_FULL_LIMIT && !r->closed_skip[0])
    tui_puts(w, y++, 1, PLOT_S_DIM, "no closed form here (gamma varies within a statistic)");
}

enum { MAXROWS = 128 };

/* A row of the table: its closed-form, LAPACK and FD entries (NULL: none left to pair
 * with) and whether each was paired across a different label. */
typedef struct {
  const ns_eig *cell[3];
  int relab[3];
} spec_row;

/* Pairs each of rows[0..shown) with the LAPACK and FD entries by label (result.h's
 * ns_eig_pair), each entry used as often as its multiplicity; every paired value goes
 * into all[], and the count is returned. */
static int pair_rows(const ns_result *r, const ns_eig *rows, int shown, spec_row *out,
                     double *all) {
  int nall = 0, left[2][MAXROWS];
  for (int i = 0; i < r->nnumeric && i < MAXROWS; i++) left[0][i] = r->spec_numeric[i].mult;
  for (int i = 0; i < r->nfd && i < MAXROWS; i++) left[1][i] = r->spec_fd[i].mult;
  for (int i = 0; i < shown; i++) {
    const ns_eig *e = &rows[i];
    spec_row *o = &out[i];
    o->cell[0] = r->nclosed > 0 ? e : NULL;
    o->relab[0] = o->relab[1] = o->relab[2] = 0;
    if (r->nclosed > 0) {
      int k = ns_eig_pair(r->spec_numeric, r->nnumeric < MAXROWS ? r->nnumeric : MAXROWS, left[0],
                          e->label, e->value, 1e-6, &o->relab[1]);
      o->cell[1] = k >= 0 ? &r->spec_numeric[k] : NULL;
      if (k >= 0) left[0][k] -= left[0][k] >= e->mult ? e->mult : left[0][k];
    } else {
      o->cell[1] = e;
    }
    int k = ns_eig_pair(r->spec_fd, r->nfd < MAXROWS ? r->nfd : MAXROWS, left[1], e->label,
                        e->value, r->jac_fd_tol / (r->smax > 1 ? r->smax : 1), &o->relab[2]);
    o->cell[2] = k >= 0 ? &r->spec_fd[k] : NULL;
    if (k >= 0) left[1][k] -= left[1][k] >= e->mult ? e->mult : left[1][k];
    for (int c = 0; c < 3; c++)
      if (o->cell[c]) all[nall++] = o->cell[c]->value;
  }
  return nall;
}

/* The three cells of row e: its values in the table's format (vw columns, dec or sci,
 * with a ~ column when any_relab), "undet." for an FD the map cannot resolve, "-" or
 * "none" for no entry. */
static void row_cells(const ns_result *r, const ns_eig *e, const spec_row *p, int any_relab, int vw,
                      int dec, int sci, char c[3][32]) {
  /* FD of a map that cannot resolve J (the whole column), or an eigenvalue smaller than
     what the FD resolves: undetermined in that dtype, not a number to compare */
  int undet = r->jac_exact &&
              (r->jac_fd_err > 0.5 || (e->value != 0 && r->jac_fd_tol > 0.5 * fabs(e->value)));
  for (int k = 0; k < 3; k++) {
    if (k == 2 && undet) {
      snprintf(c[k], 32, "undet.");
    } else if (p->cell[k]) {
      plot_fmt_table(p->cell[k]->value, vw, dec, sci, c[k], 32);
      if (any_relab) strcat(c[k], p->relab[k] ? "~" : " ");
    } else {
      /* no eigenvalue left to pair with: say so rather than print a bare ? */
      snprintf(c[k], 32, k == 0 ? "-" : "none");
    }
  }
}

/* With room to spare (spare rows from y), J itself: a heatmap with its entries when they
 * fit. */
static void draw_j(const ns_result *r, WINDOW *w, const tui_view *v, int y, int iw, int spare) {
  int n = (int)r->jn;
  if (!r->J || n <= 0 || spare < n + 2) return;
  int jcw = 4 + n * 8 <= iw ? 8 : (4 + n * 2 <= iw ? 2 : 0);
  if (!jcw) return;
  tui_puts(w, ++y, 1, PLOT_S_DIM, jcw == 8 ? "J:" : "J (colour = sign and size):");
  plot_canvas *cv = tui_canvas(n * jcw, n, v);
  if (cv) {
    plot_heatmap(cv, 0, 0, r->J, r->jn, r->jn, jcw, 0, jcw == 8);
    tui_blit(w, y + 1, jcw == 8 ? 3 : 1, cv);
    plot_canvas_free(cv);
  }
}

/* The footer: whether the columns agree, the rank and what it removes, the formulas.
 * Closed form vs LAPACK is a check of the program; LAPACK vs FD of another dtype's map
 * measures how far that map is from the exact one. */
static void draw_footer(const ns_state *s, const ns_result *r, WINDOW *w, int y, const ns_eig *rows,
                        int nrows) {
  double dc = r->eig_closed_vs_numeric, df = r->eig_numeric_vs_fd;
  char line[160];
  if (r->nclosed > 0 && !(dc <= r->jac_tol))
    snprintf(line, sizeof line, "DISAGREE: closed vs LAPACK %.2g", dc);
  else if (r->jac_exact && !isfinite(r->jac_fd_err))
    snprintf(line, sizeof line, "FD undetermined in %s: not finite", ns_dtype_name(r->jac_dtype));
  else if (r->jac_exact && r->jac_fd_err > 0.5)
    snprintf(line, sizeof line, "FD undetermined in %s: err" TUI_GLUES "~%.2g",
             ns_dtype_name(r->jac_dtype), r->jac_fd_err);
  else if (!(df <= r->jac_fd_tol) && r->jac_exact)
    snprintf(line, sizeof line, "FD off by %.2g: %s map isn't exact", df,
             ns_dtype_name(r->jac_dtype));
  else if (!(df <= r->jac_fd_tol))
    snprintf(line, sizeof line, "DISAGREE: LAPACK vs FD %.2g  (J-FD" TUI_GLUES "%.2g)", df,
             r->jac_fd_diff);
  else
    snprintf(line, sizeof line, "agree: max diff %.2g  (J-FD" TUI_GLUES "%.2g)", r->eig_disagree,
             r->jac_fd_diff);
  tui_puts(w, y++, 1, line[0] == 'a' ? PLOT_S_GOOD : PLOT_S_MARK, line);
  /* the rank, its tolerance and how that was chosen, whole (", tol" when narrow) */
  char rk[64], full[96], shrt[96];
  tui_rank(r->rank, r->jn, rk, sizeof rk);
  snprintf(full, sizeof full, "%s at" TUI_GLUES "tol" TUI_GLUES "%.3g", rk, r->rank_tol);
  snprintf(shrt, sizeof shrt, "%s," TUI_GLUES "tol" TUI_GLUES "%.3g", rk, r->rank_tol);
  tui_field f[2] = {
      {.text = full, .shrt_text = shrt, .style = PLOT_S_LABEL},
      {.text = "(1e-10" TUI_GLUES "smax)", .style = PLOT_S_LABEL},
  };
  tui_fields(w, y++, 1, tui_iw(w), 1, f, 2);
  tui_puts(w, y++, 1, r->rank < (int)r->jn ? PLOT_S_POS : PLOT_S_DIM,
           rank_meaning(r, rows, nrows, rk, sizeof rk));
  formula_line(s, r, w, y, r->symmetric);
}

void tui_draw_spectrum(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v) {
  int iw = tui_iw(w), ih = tui_ih(w);
  /* say plainly which map each column is of when that is not the map on screen */
  tui_frame(w, r->jac_done && r->jac_exact ? "4 Spectrum: exact fp64 J" : "4 Spectrum of J = dy/dx",
            v);
  if (!r->jac_done && r->nclosed > 0) {
    draw_closed(s, r, w, v);
    return;
  }
  if (!r->jac_done) {
    draw_skipped(r, w, ih);
    return;
  }
  /* label(6) mult(3), then closed form, LAPACK and finite differences in three equal
   * columns sharing one number format, so agreeing values read the same. */
  int mwid = r->nclosed > 0 ? mult_width(r->spec_closed, r->nclosed) : 2;
  int ow = (iw - 6 - mwid) / 3;
  if (ow > 12) ow = 12;
  if (ow < 7) ow = 7;
  int y = 1;
  if (r->jac_exact) {
    char what[128];
    snprintf(what, sizeof what, "FD: %s%s%s %s map, step" TUI_GLUES "%.2g",
             ns_dtype_name(r->jac_dtype), r->jac_acc != r->jac_dtype ? "/" : "",
             r->jac_acc != r->jac_dtype ? ns_dtype_name(r->jac_acc) : "", ns_algo_name(r->jac_algo),
             r->jac_fd_h);
    tui_puts(w, y++, 1, PLOT_S_DIM, what);
  }
  int mw = r->nclosed > 0 ? mwid : mult_width(r->spec_numeric, r->nnumeric);
  tui_printf(w, y++, 1, PLOT_S_DIM, "%-6s%*s%*s%*s%*s", "label", mw, "m", ow, "closed", ow,
             "LAPACK", ow, ow >= 10 ? "fin.diff" : "FD");
  /* Rows: the closed-form entries when there are any, else the numeric ones; ~ marks a
   * pair whose labels differ. */
  const ns_eig *rows = r->nclosed > 0 ? r->spec_closed : r->spec_numeric;
  int nrows = r->nclosed > 0 ? r->nclosed : r->nnumeric;
  int footer = 4;
  static spec_row pairs[MAXROWS];
  static double all[3 * MAXROWS];
  int shown = nrows < MAXROWS ? nrows : MAXROWS;
  int nall = pair_rows(r, rows, shown, pairs, all);
  /* a ~ after a value takes a column: then every value gives one up */
  int any_relab = 0;
  for (int i = 0; i < shown; i++) any_relab |= pairs[i].relab[1] | pairs[i].relab[2];
  int vw = ow - 1 - any_relab;
  int dec, sci;
  plot_fmt_table_digits(all, (size_t)nall, vw, 6, &dec, &sci);
  /* the window onto the entries follows the selected one */
  int room = ih - footer - y + 1;
  int hidden = room < shown;
  if (hidden) room--; /* a line says which entries are listed */
  if (room < 1) room = 1;
  int sel = v->vs->row[TUI_PANEL_SPECTRUM];
  if (sel >= shown) sel = shown - 1;
  if (sel < 0) sel = 0;
  int first = sel >= room ? sel - room + 1 : 0;
  for (int i = first; i < shown && i < first + room; i++, y++) {
    const ns_eig *e = &rows[i];
    char c[3][32];
    row_cells(r, e, &pairs[i], any_relab, vw, dec, sci, c);
    int style = e->label == NS_LABEL_ONES
                    ? PLOT_S_DIM
                    : (e->label == NS_LABEL_RADIAL ? PLOT_S_POS : PLOT_S_TEXT);
    if (v->focused && i == sel) style = PLOT_S_FOCUS | PLOT_F_REVERSE;
    tui_printf(w, y, 1, style, "%-6s%*d%*s%*s%*s", ns_label_name(e->label), mw, e->mult, ow, c[0],
               ow, c[1], ow, c[2]);
  }
  if (hidden)
    tui_printf(w, y++, 1, PLOT_S_DIM, "entries %d-%d/%d  (Alt-4, arrows)", first + 1,
               first + room < shown ? first + room : shown, nrows);
  if (nrows == 0) tui_puts(w, y++, 1, PLOT_S_DIM, "(no eigenvalues)");
  if (r->nclosed <= 0) tui_puts(w, y++, 1, PLOT_S_DIM, "no closed form here: LAPACK labels");
  draw_j(r, w, v, y, iw, ih - footer - y + 1);
  draw_footer(s, r, w, ih - footer + 1, rows, nrows);
}
