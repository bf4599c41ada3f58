/* test_text.c: ns_text_sanitize (core/text.h): what reaches a terminal from input. */
#include <string.h>

#include "core/text.h"
#include "tap.h"

static void same(const char *in, size_t len, unsigned flags, const char *want, const char *name) {
  char out[256];
  size_t n = ns_text_sanitize(out, sizeof out, in, len, flags);
  int ok = strcmp(out, want) == 0 && n == strlen(want);
  tap_ok(ok, "%s", name);
  if (!ok) tap_diag("got '%s' (%zu), want '%s'", out, n, want);
}

int main(void) {
  same("plain text", 10, 0, "plain text", "plain ASCII stays");
  same("\x1b]52;c;eA==\x07", 12, 0, "^[]52;c;eA==^G", "OSC 52: ESC and BEL in caret notation");
  same("\x1b[2J\x1b[H", 7, 0, "^[[2J^[[H", "clear screen");
  same("a\x7f"
       "b",
       3, 0, "a^?b", "DEL as ^?");
  same("a\nb\tc\rd", 7, 0, "a^Jb^Ic^Md", "newline, tab, CR shown without flags");
  same("a\nb\tc\rd", 7, NS_TEXT_KEEP_NL | NS_TEXT_KEEP_TAB | NS_TEXT_KEEP_CR, "a\nb\tc\rd",
       "  and kept with them");
  same("\xc2\x9b"
       "6n",
       4, 0,
       "\xef\xbf\xbd"
       "6n",
       "a C1 CSI (U+009B) as U+FFFD");
  same("x\x9by", 3, 0, "x\xef\xbf\xbdy", "a raw 0x9b byte (not UTF-8) as U+FFFD");
  same("\xe2\x80\xae"
       "abc",
       6, 0,
       "\xef\xbf\xbd"
       "abc",
       "a bidi override as U+FFFD");
  same("\xe2\x81\xa6"
       "x",
       4, 0,
       "\xef\xbf\xbd"
       "x",
       "a bidi isolate as U+FFFD");
  same("caf\xc3\xa9 \xe2\x88\x9a \xf0\x9f\x98\x80", 14, 0,
       "caf\xc3\xa9 \xe2\x88\x9a \xf0\x9f\x98\x80", "printable UTF-8 stays");
  same("\xc0\xaf", 2, 0, "\xef\xbf\xbd\xef\xbf\xbd", "an overlong form as U+FFFD");
  same("\xed\xa0\x80", 3, 0, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", "a surrogate as U+FFFD");
  same("a\0b", 3, 0, "a^@b", "NUL as ^@");
  char small[6];
  size_t n = ns_text_sanitize(small, sizeof small, "ab\x1b\x1b", 4, 0);
  tap_ok(n == 6 && strcmp(small, "ab^[") == 0, "cut at a character: '%s', needs %zu", small, n);
  tap_ok(ns_text_partial("ab\xe2\x80", 4) == 2 && ns_text_partial("ab\xe2\x80\xae", 5) == 0 &&
             ns_text_partial("ab\xf0", 3) == 1 && ns_text_partial("ab", 2) == 0,
         "partial: the start of a character the text cuts");
  tap_ok(ns_text_is_safe("ok \xc3\xa9", 5, 0) && !ns_text_is_safe("\x1b", 1, 0) &&
             ns_text_is_safe("a\n", 2, NS_TEXT_KEEP_NL),
         "is_safe");
  return tap_done();
}
