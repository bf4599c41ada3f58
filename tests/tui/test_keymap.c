/* test_keymap.c: the screen's one key table against itself and against the manual page.
 *
 *   test_keymap            TAP: the KEYS section of doc/normscope.1 lists exactly the keys
 *                          of the table, in its order, with its words; no key code is bound
 *                          twice; every row has help text, a section and a panel; every
 *                          setting row of panel 2 has a key.
 *   test_keymap --man      prints the KEYS section the table makes (paste it into
 *                          doc/normscope.1 after changing the table).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "tui/screen.h"

/* roff: a minus is \- */
static void roff(const char *s, char *out, size_t len) {
  size_t n = 0;
  for (; *s && n + 3 < len; s++) {
    if (*s == '-') out[n++] = '\\';
    out[n++] = *s;
  }
  out[n] = 0;
}

static void unroff(const char *s, char *out, size_t len) {
  size_t n = 0;
  for (; *s && n + 1 < len; s++) {
    if (s[0] == '\\' && s[1] == '-') s++;
    out[n++] = *s;
  }
  out[n] = 0;
}

static void print_man(void) {
  printf(".SH KEYS\n"
         "The explorer's keys, from its key table (the ? screen lists the focused\n"
         "panel's keys first, with what its numbers mean).\n");
  for (int sec = 0; sec < TUI_SEC_COUNT; sec++) {
    char b[512], h[1024];
    printf(".SS %s\n", tui_section_names[sec]);
    for (int i = 0; i < tui_nkeymap; i++) {
      if (tui_keymap[i].section != (tui_section)sec) continue;
      roff(tui_keymap[i].keys, b, sizeof b);
      roff(tui_keymap[i].help, h, sizeof h);
      printf(".TP\n.B \"%s\"\n%s\n", b, h);
    }
  }
}

/* Two rows that may share a code: one is in force only while a lesson is open (and then
 * comes first), the other is not. */
static int disjoint(const tui_binding *a, const tui_binding *b) {
  return ((a->panels & TUI_LESSON_ONLY) != 0) != ((b->panels & TUI_LESSON_ONLY) != 0);
}

/* 1 when item ("k kind") is a binding's first key and its status-line label. */
static int is_table_item(const char *item) {
  for (int i = 0; i < tui_nkeymap; i++) {
    const tui_binding *b = &tui_keymap[i];
    char want[64];
    if (!b->label) continue;
    snprintf(want, sizeof want, "%.*s %s", (int)strcspn(b->keys, " "), b->keys, b->label);
    if (strcmp(item, want) == 0) return 1;
  }
  return 0;
}

/* The status line at every width (explorer review (c): at 120 columns it stopped at
 * "g grp" with no word that more keys exist): its items are the key table's, whole, the
 * full list's first ones in its order, within the width, and when some are left out it
 * ends in "? more" (the help key lists them all). */
static void check_status_line(void) {
  static char full[4096], line[4096];
  for (int p = 0; p < TUI_PANEL_COUNT; p++) {
    tui_status_keys((tui_panel)p, (int)sizeof full - 1, full, sizeof full);
    int bad = 0, items = 0, nfull = 0;
    for (const char *c = full; (c = strstr(c, "  ")); c += 2) nfull++;
    nfull++;
    for (int width = 10; width <= 300; width++) {
      tui_status_keys((tui_panel)p, width, line, sizeof line);
      size_t l = strlen(line);
      int more = l >= 6 && strcmp(line + l - 6, "? more") == 0;
      if ((int)l > width) bad++;
      /* the items before the marker: a prefix of the full list, each a table item */
      size_t keep = more ? (l > 6 ? l - 8 : 0) : l;
      if (keep && (strncmp(full, line, keep) != 0 || (full[keep] && full[keep] != ' '))) bad++;
      int n = 0;
      char copy[4096];
      snprintf(copy, sizeof copy, "%.*s", (int)keep, line);
      for (char *it = copy, *end; it && *it; it = end ? end + 2 : NULL, n++) {
        end = strstr(it, "  ");
        if (end) *end = 0;
        if (!is_table_item(it)) bad++;
      }
      if (n < nfull && !more) bad++; /* keys left out without a word */
      if (n == nfull && more) bad++;
      if (width == 120) items = n;
    }
    tap_ok(bad == 0,
           "panel %d: the status line at widths 10-300 is whole table items, then "
           "\"? more\" when some are left out (%d of %d at 120)",
           p + 1, items, nfull);
  }
  char at120[512];
  tui_status_keys(TUI_PANEL_INPUT, 119, at120, sizeof at120);
  size_t l = strlen(at120);
  tap_ok(l >= 6 && strcmp(at120 + l - 6, "? more") == 0 && l <= 119,
         "at 120 columns the status line ends in \"? more\": %s", at120);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--man") == 0) {
    print_man();
    return 0;
  }
  const char *top = getenv("top_srcdir");
  char path[4096];
  snprintf(path, sizeof path, "%s/doc/normscope.1", top ? top : ".");
  FILE *f = fopen(path, "r");
  tap_ok(f != NULL, "the manual page opens (%s)", path);
  if (!f) return tap_done();

  /* the KEYS section: every ".B" line right after a ".TP", and the line after it */
  char line[2048], keys[128][128], text[128][1024];
  int nk = 0, in = 0, after_tp = 0, want_text = -1;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    if (strncmp(line, ".SH ", 4) == 0) {
      in = strcmp(line, ".SH KEYS") == 0;
      continue;
    }
    if (!in) continue;
    if (want_text >= 0) {
      unroff(line, text[want_text], sizeof text[want_text]);
      want_text = -1;
      continue;
    }
    if (strcmp(line, ".TP") == 0) {
      after_tp = 1;
      continue;
    }
    if (after_tp && strncmp(line, ".B \"", 4) == 0 && nk < 128) {
      char *q = strrchr(line + 4, '"');
      if (q) *q = 0;
      unroff(line + 4, keys[nk], sizeof keys[nk]);
      text[nk][0] = 0;
      want_text = nk++;
    }
    after_tp = 0;
  }
  fclose(f);

  /* the table in section order, as the help and the man page list it */
  int order[256], no = 0;
  for (int sec = 0; sec < TUI_SEC_COUNT; sec++)
    for (int i = 0; i < tui_nkeymap; i++)
      if (tui_keymap[i].section == (tui_section)sec) order[no++] = i;
  tap_ok(no == tui_nkeymap, "every key row has a section (%d of %d)", no, tui_nkeymap);
  tap_ok(nk == tui_nkeymap, "the man page's KEYS section has %d entries, the table %d rows", nk,
         tui_nkeymap);
  for (int k = 0; k < nk && k < no; k++) {
    const tui_binding *b = &tui_keymap[order[k]];
    int same = strcmp(keys[k], b->keys) == 0 && strcmp(text[k], b->help) == 0;
    tap_ok(same, "man KEYS entry %d is \"%s\": %s", k + 1, b->keys, b->help);
    if (!same) printf("#   the man page has \"%s\": %s\n", keys[k], text[k]);
  }

  /* the table itself */
  int dup = 0;
  for (int i = 0; i < tui_nkeymap; i++)
    for (int c = 0; c < TUI_MAXCODES && tui_keymap[i].code[c]; c++)
      for (int j = 0; j < tui_nkeymap; j++)
        for (int d = 0; d < TUI_MAXCODES && tui_keymap[j].code[d]; d++)
          if ((i != j || c != d) && tui_keymap[i].code[c] == tui_keymap[j].code[d] &&
              !disjoint(&tui_keymap[i], &tui_keymap[j])) {
            printf("#   code %#x in rows \"%s\" and \"%s\"\n", (unsigned)tui_keymap[i].code[c],
                   tui_keymap[i].keys, tui_keymap[j].keys);
            dup++;
          }
  tap_ok(dup == 0, "no key code is bound twice (but by a lesson row and another)");
  /* with a lesson open, n p and Space step; without one, n negates and p moves eps */
  const tui_binding *ln = tui_binding_in('n', 1), *en = tui_binding_in('n', 0);
  const tui_binding *lp = tui_binding_in('p', 1), *ep = tui_binding_in('p', 0);
  const tui_binding *ls = tui_binding_in(' ', 1);
  tap_ok(ln && ln->section == TUI_SEC_LESSON && lp == ln && ls == ln,
         "a lesson open: n, p and Space are the lesson's step keys");
  tap_ok(en && en->section == TUI_SEC_EDIT && ep && ep->section == TUI_SEC_SETTINGS,
         "no lesson: n negates a cell, p moves eps");
  tap_ok(tui_binding_in('~', 1) == tui_binding_in('~', 0) && tui_binding_in('~', 1) &&
             tui_binding_in('@', 1) && tui_binding_in('@', 1)->fields == ep->fields,
         "what n and p do moves to ~ and @, in force with a lesson open too");
  const tui_binding *eq = tui_binding_in('=', 1), *v = tui_binding_in('V', 1);
  tap_ok(eq && eq->section == TUI_SEC_LESSON && v && v->section == TUI_SEC_LESSON &&
             tui_binding_in('=', 0)->section == TUI_SEC_SETTINGS &&
             tui_binding_in('V', 0)->section == TUI_SEC_EXPERIMENTS,
         "a lesson open: = answers and V draws a variant; else eps exactly and the V view");
  int bad = 0;
  for (int i = 0; i < tui_nkeymap; i++) {
    const tui_binding *b = &tui_keymap[i];
    if (!b->act || !b->help || !b->help[0] || !b->panels || !b->code[0]) {
      printf("#   row \"%s\" lacks an action, help, panels or codes\n", b->keys);
      bad++;
    }
  }
  tap_ok(bad == 0, "every row has an action, help text, panels and a key code");
  /* a key that works in only some panels says what it does elsewhere, or the dispatcher
   * names the panels where it works: either way it needs at least one */
  for (int i = 0; i < tui_nsettings; i++) {
    char buf[64];
    tui_field_keys(tui_settings_rows[i], buf, sizeof buf);
    tap_ok(buf[0] != 0, "settings row %s has a key (%s)", ns_field_name(tui_settings_rows[i]), buf);
  }
  /* every field of the state is changed by some key, or the table says how instead */
  for (int fi = 0; fi < NS_F_COUNT; fi++) {
    int keyed = 0, unbound = 0;
    for (int i = 0; i < tui_nkeymap; i++) keyed += (tui_keymap[i].fields & NS_FIELDBIT(fi)) != 0;
    for (int i = 0; i < tui_nunbound; i++) unbound += tui_unbound_fields[i].field == fi;
    tap_ok((keyed > 0) != (unbound > 0), "field %s: %s", ns_field_name((ns_field)fi),
           keyed     ? "reached by a key"
           : unbound ? "says how to set it instead"
                     : "NEITHER");
  }
  check_status_line();
  const tui_binding *q = tui_binding_of('q'), *k = tui_binding_of(TUI_KEY(KEY_NPAGE));
  tap_ok(q && strcmp(q->label, "quit") == 0, "q is quit");
  tap_ok(k && (k->panels & TUI_PBIT(TUI_PANEL_OUTPUT)), "PgDn pages the output list (B8/B13)");
  return tap_done();
}
