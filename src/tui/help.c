/* help.c: the help screen and the status line, both built from the keymap (keys.c): the
 * focused panel's keys and what its numbers mean first, then every key by section, then
 * a glossary of the words and symbols the panels use without explaining them. */
#include <stdio.h>
#include <string.h>

#include "tui/screen.h"

static const char *const glossary[] = {
    "ones, radial, bulk: eigen-directions of J (panel 4): the all-ones vector of a statistic, "
    "x - mean, and everything else.",
    "s: the denominator sqrt(var + eps) (or std + eps). m: multiplicity of an eigenvalue.",
    "stat k/n: statistic k of n, the group of elements normalized together.",
    "kept / lost: decimal digits of the variance that agree with fp64 / that the "
    "accumulation dtype could have held but lost (panel 7).",
    "T / C: the target and companion rows of the batch panel. *: a default setting, and "
    "nothing else. \u25c0 (< with --ascii): the focused panel and the chosen algorithm or "
    "estimator.",
    "ms at the top right: how long the last recompute took (a key is meant to settle within "
    "100 ms; the header marks a longer one).",
    "Colours: orange positive (and the line a panel is about), blue negative (a "
    "colour-blind-safe pair); bold white (black in the light theme) where the keyboard is: "
    "the focused frame, the cursor, the selected row; magenta (bold) something to notice: "
    "NOT invariant, a FLIP, a disagreement, a slow key. --theme dark, light or contrast; "
    "NO_COLOR or --no-color turns colour off, --ascii avoids Unicode drawing.",
    "fp16, bf16: 16-bit storage; the statistics accumulate in fp32 (T changes that), as torch "
    "does for 16-bit inputs with fp32 weights. torch's all-bf16 modules (bf16 weights too) "
    "round their statistics to bf16, which normscope does not emulate.",
};

/* The help text is built for a focus and a width into one static buffer of lines. */
#define HELP_MAX 400
static char *lines[HELP_MAX];
static int styles[HELP_MAX];
static int nlines;
static char store[48000];
static size_t used;

static void add(int style, const char *text) {
  size_t l = strlen(text) + 1;
  if (nlines >= HELP_MAX || used + l > sizeof store) return;
  lines[nlines] = memcpy(store + used, text, l);
  styles[nlines++] = style;
  used += l;
}

/* text wrapped at spaces to width, each line after the first indented by `hang`. */
static void add_wrapped(int style, const char *text, int width, int indent, int hang) {
  size_t len = strlen(text), at = 0;
  int first = 1;
  while (at < len) {
    int pad = first ? indent : hang, room = width - pad;
    if (room < 10) room = 10;
    size_t n = len - at;
    if (n > (size_t)room) {
      n = (size_t)room;
      while (n > 0 && text[at + n] != ' ') n--;
      if (n == 0) n = (size_t)room;
    }
    char buf[512];
    snprintf(buf, sizeof buf, "%*s%.*s", pad, "", (int)n, text + at);
    add(style, buf);
    at += n;
    while (text[at] == ' ') at++;
    first = 0;
  }
}

static void add_key(const tui_binding *b, const char *text, int width) {
  char buf[640];
  snprintf(buf, sizeof buf, "%-20s %s", b->keys, text);
  add_wrapped(PLOT_S_TEXT, buf, width, 2, 23);
}

static void build(tui_panel focus, int width) {
  nlines = 0;
  used = 0;
  if (width > 200) width = 200;
  add(PLOT_S_TITLE, "normscope explorer: keys and meanings");
  add(PLOT_S_TEXT, "");
  char head[96];
  snprintf(head, sizeof head, "%s (the focused panel)", tui_panel_title(focus));
  add(PLOT_S_LABEL, head);
  add_wrapped(PLOT_S_TEXT, tui_panels[focus].meaning, width, 2, 2);
  add(PLOT_S_LABEL, "Its own keys (the setting keys below work everywhere)");
  for (int i = 0; i < tui_nkeymap; i++) {
    const tui_binding *b = &tui_keymap[i];
    if ((b->panels & TUI_PALL) == TUI_PALL) continue;
    if (b->panels & TUI_PBIT(focus))
      add_key(b, b->help, width);
    else if (b->elsewhere)
      add_key(b, b->elsewhere, width);
    else {
      char why[256];
      size_t n = (size_t)snprintf(why, sizeof why, "nothing here (works in");
      for (int p = 0; p < TUI_PANEL_COUNT; p++)
        if (b->panels & TUI_PBIT(p))
          n += (size_t)snprintf(why + n, sizeof why - n, " %s", tui_panel_names[p]);
      snprintf(why + n, sizeof why - n, ")");
      add_key(b, why, width);
    }
  }
  for (int sec = 0; sec < TUI_SEC_COUNT; sec++) {
    add(PLOT_S_TEXT, "");
    add(PLOT_S_LABEL, tui_section_names[sec]);
    for (int i = 0; i < tui_nkeymap; i++)
      if (tui_keymap[i].section == (tui_section)sec)
        add_key(&tui_keymap[i], tui_keymap[i].help, width);
    if (sec == TUI_SEC_MOVE)
      add_wrapped(PLOT_S_TEXT,
                  "mouse                click: focus a panel or tab, or pick a cell; wheel up "
                  "and down: scroll the list under the pointer (the Lua output elsewhere) and "
                  "this help (off: --no-mouse)",
                  width, 2, 23);
    if (sec == TUI_SEC_OTHER) {
      add(PLOT_S_TEXT, "  Settings without a key (set them at the prompt):");
      for (int i = 0; i < tui_nunbound; i++) {
        char buf[256];
        snprintf(buf, sizeof buf, "%-20s %s", ns_field_name(tui_unbound_fields[i].field),
                 tui_unbound_fields[i].how);
        add_wrapped(PLOT_S_TEXT, buf, width, 4, 25);
      }
    }
    if (sec == TUI_SEC_OTHER)
      add_wrapped(PLOT_S_TEXT,
                  "At the prompt: set{kind=\"rms\"} changes the state (one undo step), get() "
                  "shows it, result() has every number on screen (ns.save(\"y.npy\", "
                  "result().y)), set{x=ns.load(\"f.npy\")} opens a file, reset() restores the "
                  "default, dump() prints the state as a set{} line, plot(\"spectrum\") "
                  "opens a panel's figure and returns it as text. Tab completes; the "
                  "history is shared with `normscope repl`.",
                  width, 2, 2);
  }
  add(PLOT_S_TEXT, "");
  add(PLOT_S_LABEL, "The state's fields: set{field = value} at the prompt (get() shows them)");
  for (int f = 0; f < NS_F_COUNT; f++) { /* the one field table, as ns.fields() lists it */
    char buf[320];
    snprintf(buf, sizeof buf, "%-20s %s", ns_fields[f].name, ns_fields[f].doc);
    add_wrapped(PLOT_S_TEXT, buf, width, 2, 23);
  }
  add(PLOT_S_TEXT, "");
  add(PLOT_S_LABEL, "Glossary");
  for (size_t i = 0; i < sizeof glossary / sizeof glossary[0]; i++)
    add_wrapped(PLOT_S_TEXT, glossary[i], width, 2, 4);
  for (int p = 0; p < TUI_PANEL_COUNT; p++) {
    if (p == (int)focus) continue;
    add(PLOT_S_TEXT, "");
    add(PLOT_S_LABEL, tui_panel_title((tui_panel)p));
    add_wrapped(PLOT_S_TEXT, tui_panels[p].meaning, width, 2, 2);
  }
}

int tui_help_lines(tui_panel focus, int width) {
  build(focus, width);
  return nlines;
}

int tui_draw_help(WINDOW *w, int scroll, const tui_view *v) {
  int ih = tui_ih(w);
  build(v->vs->focus, tui_iw(w) - 2);
  char title[96];
  snprintf(title, sizeof title, "Help  (lines %d-%d of %d; Esc closes)", scroll + 1,
           scroll + ih < nlines ? scroll + ih : nlines, nlines);
  tui_view fv = *v;
  fv.focused = 1;
  tui_frame(w, title, &fv);
  for (int i = 0; i < ih && scroll + i < nlines; i++)
    tui_puts(w, 1 + i, 2, styles[scroll + i], lines[scroll + i]);
  return nlines;
}

/* "k kind": the first key of a binding and its label. */
static int status_item(const tui_binding *b, char *buf, size_t len) {
  size_t k = strcspn(b->keys, " ");
  return snprintf(buf, len, "%.*s %s", (int)k, b->keys, b->label);
}

const char *tui_status_keys(tui_panel focus, int width, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = 0;
  /* the marker for the keys left out: the help key, which lists them all */
  char hk[16], more[32];
  snprintf(more, sizeof more, "%s more", tui_key_name('?', hk, sizeof hk));
  int ml = (int)strlen(more), total = 0, items = 0;
  /* help, quit and the prompt first, then the focused panel's own keys, then the ones
   * that work everywhere; as many whole items as fit, and when not all do, the marker */
  for (int fill = 0; fill < 2; fill++)
    for (int pass = 0; pass < 3; pass++)
      for (int i = 0; i < tui_nkeymap; i++) {
        const tui_binding *b = &tui_keymap[i];
        int other = b->section == TUI_SEC_OTHER;
        int own = !other && (b->panels & TUI_PALL) != TUI_PALL && (b->panels & TUI_PBIT(focus));
        int all = !other && (b->panels & TUI_PALL) == TUI_PALL;
        if (!b->label || !(pass == 0 ? other : pass == 1 ? own : all)) continue;
        char item[64];
        int l = status_item(b, item, sizeof item);
        if (!fill) { /* the first round measures the whole list */
          total += (items++ ? 2 : 0) + l;
          continue;
        }
        int room = total <= width ? width : width - 2 - ml;
        if ((int)n + (n ? 2 : 0) + l > room || n + (size_t)l + 3 > len) {
          if (n + (size_t)ml + 3 <= len) snprintf(buf + n, len - n, "%s%s", n ? "  " : "", more);
          return buf;
        }
        n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "  " : "", item);
      }
  return buf;
}
