/* settings.c: panel 2, every setting of the normalization with the key that changes it. */
#include <stdio.h>
#include <string.h>

#include "tui/screen.h"

#define TUI_NSETTINGS_MAX 16

static void axes_text(const ns_state *s, char *buf, size_t len) {
  unsigned mask = s->axes;
  const char *how = "explicit"; /* default ones are starred, as other defaults are */
  char err[NS_ERRLEN];
  if (!mask) {
    mask = ns_default_axes(s->kind, s->x->rank, err);
    how = "default";
  }
  size_t n = (size_t)snprintf(buf, len, "{");
  for (int k = 0; k < NS_MAXRANK && n < len; k++)
    if (mask & (1u << k)) n += (size_t)snprintf(buf + n, len - n, "%s%d", n > 1 ? "," : "", k + 1);
  if (n < len) snprintf(buf + n, len - n, "}%s", how[0] == 'd' ? "*" : "");
}

static void list_text(const double *a, size_t n, const char *none, char *buf, size_t len) {
  if (!a || n == 0) {
    snprintf(buf, len, "%s", none);
    return;
  }
  size_t k = 0;
  for (size_t i = 0; i < n && k + 16 < len; i++) {
    char num[32];
    k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? "," : "", tui_num(a[i], num, sizeof num));
    if (i == 2 && n > 3) {
      snprintf(buf + k, len - k, ",... (%zu)", n);
      return;
    }
  }
}

/* The rows, in screen order: the field each shows (its keys come from the keymap). */
const int tui_settings_rows[] = {NS_F_KIND, NS_F_AXES,   NS_F_GROUPS, NS_F_EPS,     NS_F_EPS_AT,
                                 NS_F_DDOF, NS_F_CENTER, NS_F_GAMMA,  NS_F_BETA,    NS_F_DTYPE,
                                 NS_F_ACC,  NS_F_ALGO,   NS_F_MODE,   NS_F_MOMENTUM};
const int tui_nsettings = (int)(sizeof tui_settings_rows / sizeof tui_settings_rows[0]);

/* What a trailing `*` on a value means (nothing was set: the default applies). */
#define DEFAULT_NOTE "* = default (kind's or dtype's)"

void tui_draw_settings(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v) {
  (void)r;
  tui_frame(w, "2 Settings", v);
  char axes[64], eps[32], gam[96], bet[96], mom[48], acc[32];
  axes_text(s, axes, sizeof axes);
  snprintf(eps, sizeof eps, "%.3g", s->eps);
  list_text(s->gamma, s->ngamma, "1*", gam, sizeof gam);
  list_text(s->beta, s->nbeta, "0*", bet, sizeof bet);
  if (s->cumulative)
    snprintf(mom, sizeof mom, "cumulative");
  else
    snprintf(mom, sizeof mom, "%g", s->momentum);
  ns_spec spec;
  ns_state_spec(s, &spec);
  if (s->acc < 0)
    snprintf(acc, sizeof acc, "%s*", ns_dtype_name(ns_spec_acc(&spec)));
  else
    snprintf(acc, sizeof acc, "%s", ns_dtype_name((ns_dtype)s->acc));
  const char *center =
      s->center < 0 ? (ns_spec_center(&spec) ? "on*" : "off*") : (s->center ? "on" : "off");
  char groups[16];
  snprintf(groups, sizeof groups, "%d", s->groups);
  int narrow = tui_iw(w) < 50;
  struct {
    const char *name, *shortname, *value, *shortvalue;
  } rows[] = {
      {"kind", "kind", ns_kind_name(s->kind), ns_kind_name(s->kind)},
      {"axes", "axes", axes, axes},
      {"groups", "grp", groups, groups},
      {"eps", "eps", eps, eps},
      {"eps placement", "eps@", s->eps_at == NS_EPS_VAR ? "var (in sqrt)" : "std (+ eps)",
       s->eps_at == NS_EPS_VAR ? "var" : "std"},
      {"ddof", "ddof", s->ddof ? "1 (n-1)" : "0 (n)", s->ddof ? "1" : "0"},
      {"centering", "ctr", center, center},
      {"gamma", "gamma", gam, gam},
      {"beta", "beta", bet, bet},
      {"dtype", "dtype", ns_dtype_name(s->dtype), ns_dtype_name(s->dtype)},
      {"accumulate", "acc", acc, acc},
      {"variance algo", "algo", ns_algo_name(s->algo), ns_algo_name(s->algo)},
      {"mode", "mode", ns_mode_name(s->mode), ns_mode_name(s->mode)},
      {"momentum", "mom", mom, mom},
  };
  int n = (int)(sizeof rows / sizeof rows[0]), ih = tui_ih(w);
  int sel = v->focused ? v->vs->row[TUI_PANEL_SETTINGS] : -1;
  char keys[TUI_NSETTINGS_MAX][24];
  for (int i = 0; i < n && i < TUI_NSETTINGS_MAX; i++)
    tui_field_keys(tui_settings_rows[i], keys[i], sizeof keys[i]);
  if (narrow && ih < n) {
    /* Two columns of short entries: key, name, value. */
    int half = (n + 1) / 2, colw = tui_iw(w) / 2;
    for (int i = 0; i < n; i++) {
      int y = 1 + i % half, x = 1 + (i / half) * colw;
      if (y > ih) continue;
      char key[8];
      snprintf(key, sizeof key, "%.1s", keys[i]);
      tui_printf(w, y, x, PLOT_S_POS | PLOT_F_BOLD, "%s", key);
      tui_printf(w, y, x + 2, i == sel ? PLOT_S_POS | PLOT_F_REVERSE : PLOT_S_LABEL, "%-5s",
                 rows[i].shortname);
      tui_printf(w, y, x + 8, PLOT_S_TEXT, "%.*s", colw - 9, rows[i].shortvalue);
    }
    if (half < ih) tui_puts(w, half + 1, 1, PLOT_S_DIM, DEFAULT_NOTE);
    return;
  }
  /* not every row fits: the window follows the selected row and the last line says how
   * many are hidden */
  int first = 0, room = ih < n ? ih - 1 : n;
  if (room < 1) room = 1;
  if (sel >= room) first = sel - room + 1;
  if (ih < n)
    tui_printf(w, ih, 1, PLOT_S_DIM, "rows %d-%d/%d (Up/Down, PgUp/PgDn)", first + 1, first + room,
               n);
  for (int i = first, y = 1; i < n && y <= room; i++, y++) {
    tui_printf(w, y, 1, PLOT_S_POS | PLOT_F_BOLD, "%-5s", keys[i]);
    tui_printf(w, y, 7, i == sel ? PLOT_S_POS | PLOT_F_REVERSE : PLOT_S_LABEL, "%-13s",
               rows[i].name);
    tui_puts(w, y, 21, PLOT_S_TEXT, rows[i].value);
  }
  if (ih > n) tui_puts(w, ih, 1, PLOT_S_DIM, DEFAULT_NOTE);
}
