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

/* Each row's value, long (full) or short (narrow panel), into buf. */
typedef void settings_fmt(const ns_state *s, int full, char *buf, size_t len);

static void fmt_kind(const ns_state *s, int full, char *buf, size_t len) {
  snprintf(buf, len, "%s", ns_kind_name(s->kind));
}
static void fmt_axes(const ns_state *s, int full, char *buf, size_t len) {
  axes_text(s, buf, len);
}
static void fmt_groups(const ns_state *s, int full, char *buf, size_t len) {
  snprintf(buf, len, "%d", s->groups);
}
static void fmt_eps(const ns_state *s, int full, char *buf, size_t len) {
  snprintf(buf, len, "%.3g", s->eps);
}
static void fmt_eps_at(const ns_state *s, int full, char *buf, size_t len) {
  int var = s->eps_at == NS_EPS_VAR;
  snprintf(buf, len, "%s", full ? (var ? "var (in sqrt)" : "std (+ eps)") : (var ? "var" : "std"));
}
static void fmt_ddof(const ns_state *s, int full, char *buf, size_t len) {
  snprintf(buf, len, "%s", full ? (s->ddof ? "1 (n-1)" : "0 (n)") : (s->ddof ? "1" : "0"));
}
static void fmt_center(const ns_state *s, int full, char *buf, size_t len) {
  ns_spec spec;
  ns_state_spec(s, &spec);
  snprintf(buf, len, "%s",
           s->center < 0 ? (ns_spec_center(&spec) ? "on*" : "off*") : (s->center ? "on" : "off"));
}
static void fmt_gamma(const ns_state *s, int full, char *buf, size_t len) {
  list_text(s->gamma, s->ngamma, "1*", buf, len);
}
static void fmt_beta(const ns_state *s, int full, char *buf, size_t len) {
  list_text(s->beta, s->nbeta, "0*", buf, len);
}
static void fmt_dtype(const ns_state *s, int full, char *buf, size_t len) {
  snprintf(buf, len, "%s", ns_dtype_name(s->dtype));
}
static void fmt_acc(const ns_state *s, int full, char *buf, size_t len) {
  ns_spec spec;
  ns_state_spec(s, &spec);
  if (s->acc < 0)
    snprintf(buf, len, "%s*", ns_dtype_name(ns_spec_acc(&spec)));
  else
    snprintf(buf, len, "%s", ns_dtype_name((ns_dtype)s->acc));
}
static void fmt_algo(const ns_state *s, int full, char *buf, size_t len) {
  snprintf(buf, len, "%s", ns_algo_name(s->algo));
}
static void fmt_mode(const ns_state *s, int full, char *buf, size_t len) {
  snprintf(buf, len, "%s", ns_mode_name(s->mode));
}
static void fmt_momentum(const ns_state *s, int full, char *buf, size_t len) {
  if (s->cumulative)
    snprintf(buf, len, "cumulative");
  else
    snprintf(buf, len, "%g", s->momentum);
}

/* The rows, in screen order, once: R(field, label, short label, value). Their keys come
 * from the keymap. */
#define SETTINGS_ROWS(R)                                                                           \
  R(KIND, "kind", "kind", fmt_kind)                                                                \
  R(AXES, "axes", "axes", fmt_axes)                                                                \
  R(GROUPS, "groups", "grp", fmt_groups)                                                           \
  R(EPS, "eps", "eps", fmt_eps)                                                                    \
  R(EPS_AT, "eps placement", "eps@", fmt_eps_at)                                                   \
  R(DDOF, "ddof", "ddof", fmt_ddof)                                                                \
  R(CENTER, "centering", "ctr", fmt_center)                                                        \
  R(GAMMA, "gamma", "gamma", fmt_gamma)                                                            \
  R(BETA, "beta", "beta", fmt_beta)                                                                \
  R(DTYPE, "dtype", "dtype", fmt_dtype)                                                            \
  R(ACC, "accumulate", "acc", fmt_acc)                                                             \
  R(ALGO, "variance algo", "algo", fmt_algo)                                                       \
  R(MODE, "mode", "mode", fmt_mode)                                                                \
  R(MOMENTUM, "momentum", "mom", fmt_momentum)

#define SETTINGS_FIELD_(f, label, shortlabel, fmt) NS_F_##f,
const int tui_settings_rows[] = {SETTINGS_ROWS(SETTINGS_FIELD_)};
#undef SETTINGS_FIELD_
const int tui_nsettings = (int)(sizeof tui_settings_rows / sizeof tui_settings_rows[0]);

static const struct {
  const char *name, *shortname;
  settings_fmt *format;
} settings_rows[] = {
#define SETTINGS_DESC_(f, label, shortlabel, fmt) {label, shortlabel, fmt},
    SETTINGS_ROWS(SETTINGS_DESC_)
#undef SETTINGS_DESC_
};
#define NROWS (sizeof settings_rows / sizeof settings_rows[0])
_Static_assert(NROWS <= TUI_NSETTINGS_MAX, "panel 2 has more rows than TUI_NSETTINGS_MAX");

/* What a trailing `*` on a value means (nothing was set: the default applies). */
#define DEFAULT_NOTE "* = default (kind's or dtype's)"

/* The panel's last lines from y, maxlines of them: with the focus on a row, what that
 * row's keys do (from the keymap); else what a star means. */
static void settings_note(WINDOW *w, int y, int maxlines, int sel) {
  if (maxlines < 1) return;
  char help[400];
  if (sel >= 0 && tui_field_help(tui_settings_rows[sel], help, sizeof help)[0])
    tui_wrap(w, y, 1, PLOT_S_DIM, help, maxlines);
  else
    tui_puts(w, y, 1, PLOT_S_DIM, DEFAULT_NOTE);
}

void tui_draw_settings(const ns_state *s, const ns_result *r, WINDOW *w, const tui_view *v) {
  (void)r;
  tui_frame(w, "2 Settings", v);
  int narrow = tui_iw(w) < 50;
  struct {
    const char *name, *shortname;
    char value[96], shortvalue[96];
  } rows[NROWS];
  for (size_t i = 0; i < NROWS; i++) {
    rows[i].name = settings_rows[i].name;
    rows[i].shortname = settings_rows[i].shortname;
    settings_rows[i].format(s, 1, rows[i].value, sizeof rows[i].value);
    settings_rows[i].format(s, 0, rows[i].shortvalue, sizeof rows[i].shortvalue);
  }
  int n = (int)(sizeof rows / sizeof rows[0]), ih = tui_ih(w);
  int sel = v->focused ? v->vs->row[TUI_PANEL_SETTINGS] : -1;
  char keys[NROWS][24];
  for (int i = 0; i < n; i++) tui_field_keys(tui_settings_rows[i], keys[i], sizeof keys[i]);
  if (narrow && ih < n) {
    /* Two columns of short entries: key, name, value. */
    int half = (n + 1) / 2, colw = tui_iw(w) / 2;
    for (int i = 0; i < n; i++) {
      int y = 1 + i % half, x = 1 + (i / half) * colw;
      if (y > ih) continue;
      char key[8];
      snprintf(key, sizeof key, "%.1s", keys[i]);
      tui_printf(w, y, x, PLOT_S_FOCUS | PLOT_F_BOLD, "%s", key);
      tui_printf(w, y, x + 2, i == sel ? PLOT_S_FOCUS | PLOT_F_REVERSE : PLOT_S_LABEL, "%-5s",
                 rows[i].shortname);
      tui_printf(w, y, x + 8, PLOT_S_TEXT, "%.*s", colw - 9, rows[i].shortvalue);
    }
    settings_note(w, half + 1, ih - half, sel);
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
    tui_printf(w, y, 1, PLOT_S_FOCUS | PLOT_F_BOLD, "%-5s", keys[i]);
    tui_printf(w, y, 7, i == sel ? PLOT_S_FOCUS | PLOT_F_REVERSE : PLOT_S_LABEL, "%-13s",
               rows[i].name);
    tui_puts(w, y, 21, PLOT_S_TEXT, rows[i].value);
  }
  settings_note(w, n + 1, ih - n, sel);
}
