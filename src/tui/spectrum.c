/* spectrum.c: panel 4, the Jacobian's eigenvalues: closed form, LAPACK on the analytic
 * Jacobian and LAPACK on finite differences side by side, their largest disagreement,
 * and the rank at a stated tolerance. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tui/screen.h"

/* The entry of list[0..n) with the same label whose value is closest to `value`. */
static const ns_eig *match(const ns_eig *list, int n, ns_label label, double value) {
  const ns_eig *best = NULL;
  for (int i = 0; i < n; i++)
    if (list[i].label == label &&
        (!best || fabs(list[i].value - value) < fabs(best->value - value)))
      best = &list[i];
  return best;
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

void tui_draw_spectrum(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v) {
  tui_frame(w, "4 Spectrum of J = dy/dx", v);
  int iw = tui_iw(w), ih = tui_ih(w);
  if (!r->jac_done) {
    /* The reason, wrapped at word boundaries. */
    const char *why = r->jac_skip[0] ? r->jac_skip : "Jacobian probes skipped (no reason given)";
    int y = 1 + tui_wrap(w, 1, 1, PLOT_S_MARK, why, ih);
    if (y <= ih && r->n > NS_EXPLORE_JAC_LIMIT)
      tui_puts(w, y++, 1, PLOT_S_DIM, "set{x=...} with a smaller x to see it");
    return;
  }
  /* label(6) mult(3), then closed form, LAPACK and finite differences in three equal
   * columns sharing one number format, so agreeing values read the same. */
  int ow = (iw - 8) / 3;
  if (ow > 12) ow = 12;
  if (ow < 7) ow = 7;
  tui_printf(w, 1, 1, PLOT_S_DIM, "%-6s%2s%*s%*s%*s", "label", "m", ow, "closed", ow, "LAPACK", ow,
             ow >= 10 ? "fin.diff" : "FD");
  /* Rows: the closed-form entries when there are any, else the numeric ones. */
  const ns_eig *rows = r->nclosed > 0 ? r->spec_closed : r->spec_numeric;
  int nrows = r->nclosed > 0 ? r->nclosed : r->nnumeric;
  int footer = 4;
  const ns_eig *cell[64][3];
  double all[192];
  int nall = 0, shown = nrows < 64 ? nrows : 64;
  for (int i = 0; i < shown; i++) {
    const ns_eig *e = &rows[i];
    cell[i][0] = r->nclosed > 0 ? e : NULL;
    cell[i][1] = r->nclosed > 0 ? match(r->spec_numeric, r->nnumeric, e->label, e->value) : e;
    cell[i][2] = match(r->spec_fd, r->nfd, e->label, e->value);
    for (int k = 0; k < 3; k++)
      if (cell[i][k]) all[nall++] = cell[i][k]->value;
  }
  int dec, sci;
  plot_fmt_table_digits(all, (size_t)nall, ow - 1, 6, &dec, &sci);
  int y = 2;
  for (int i = 0; i < shown && y <= ih - footer; i++, y++) {
    const ns_eig *e = &rows[i];
    char c[3][32];
    for (int k = 0; k < 3; k++) {
      if (cell[i][k])
        plot_fmt_table(cell[i][k]->value, ow - 1, dec, sci, c[k], sizeof c[k]);
      else
        snprintf(c[k], sizeof c[k], k == 0 ? "-" : "?");
    }
    int style = e->label == NS_LABEL_ONES
                    ? PLOT_S_DIM
                    : (e->label == NS_LABEL_RADIAL ? PLOT_S_POS : PLOT_S_TEXT);
    tui_printf(w, y, 1, style, "%-6s%2d%*s%*s%*s", ns_label_name(e->label), e->mult, ow, c[0], ow,
               c[1], ow, c[2]);
  }
  if (nrows == 0) tui_puts(w, y++, 1, PLOT_S_DIM, "(no eigenvalues)");
  if (r->nclosed <= 0) tui_puts(w, y++, 1, PLOT_S_DIM, "no closed form here: LAPACK labels");
  /* With room to spare, J itself: a heatmap with its entries when they fit. */
  int room = ih - footer - y + 1, n = (int)r->jn;
  if (r->J && n > 0 && room >= n + 2) {
    int jcw = 4 + n * 8 <= iw ? 8 : (4 + n * 2 <= iw ? 2 : 0);
    if (jcw) {
      tui_puts(w, ++y, 1, PLOT_S_DIM, jcw == 8 ? "J:" : "J (colour = sign and size):");
      plot_canvas *cv = tui_canvas(n * jcw, n, v);
      if (cv) {
        plot_heatmap(cv, 0, 0, r->J, r->jn, r->jn, jcw, 0, jcw == 8);
        tui_blit(w, y + 1, jcw == 8 ? 3 : 1, cv);
        plot_canvas_free(cv);
      }
    }
  }
  y = ih - footer + 1;
  double dis = r->eig_disagree;
  tui_printf(w, y++, 1, dis > 1e-6 ? PLOT_S_MARK : PLOT_S_GOOD, "%s: max diff %.2g (J-FD %.2g)",
             dis > 1e-6 ? "DISAGREE" : "agree", dis, r->jac_fd_diff);
  char rk[96];
  snprintf(rk, sizeof rk, "rank %d of %zu at tol %.3g (1e-10 smax)", r->rank, r->jn, r->rank_tol);
  if ((int)strlen(rk) > iw)
    snprintf(rk, sizeof rk, "rank %d/%zu at tol %.3g (1e-10 smax)", r->rank, r->jn, r->rank_tol);
  if ((int)strlen(rk) > iw)
    snprintf(rk, sizeof rk, "rank %d/%zu at tol %.3g", r->rank, r->jn, r->rank_tol);
  tui_puts(w, y++, 1, PLOT_S_LABEL, rk);
  tui_puts(w, y++, 1, r->rank < (int)r->jn ? PLOT_S_POS : PLOT_S_DIM,
           rank_meaning(r, rows, nrows, rk, sizeof rk));
  const char *sym = is_centered(s) ? "s" : "r";
  ns_spec spec;
  ns_state_spec(s, &spec);
  if (ns_spec_eval_running(&spec, s->x->rank)) /* the core's rule, explicit axes included */
    tui_printf(w, y++, 1, PLOT_S_DIM, "eval: fixed statistics, J diagonal");
  else
    tui_printf(w, y++, 1, PLOT_S_DIM, "%sradial eps/%s^%d  bulk 1/%s%s",
               is_centered(s) ? "ones 0  " : "", sym, s->eps_at == NS_EPS_VAR ? 3 : 2, sym,
               r->symmetric ? "" : "  J not symm.");
}
