/* text.h: text that came from input, made safe to show on a terminal.
 *
 * A lesson's text and print(), a state file's error, a tensor's name in a .safetensors file,
 * a CSV token quoted by a message: any of them can hold escape sequences that a terminal
 * obeys (OSC 52 writes the clipboard, OSC 0 the title, CSI 2J clears the screen, C1 CSI
 * 0x9b and bidi overrides reorder or hide text). ns_text_sanitize is the one function every
 * sink uses (the sanitizing stdout and stderr of explore/textout.h, the sandbox's print, the
 * REPL's values): the text's printable UTF-8 stays as it is, and
 *   - C0 controls and DEL show in caret notation: ESC as ^[, BEL as ^G, DEL as ^?
 *     (newline, tab and carriage return pass when flags keep them);
 *   - C1 controls (U+0080 to U+009F), bidi embeddings, overrides and isolates
 *     (U+202A-U+202E, U+2066-U+2069), and bytes that are not UTF-8 show as U+FFFD.
 * Pure: no I/O, no state.
 *
 *   char safe[256];
 *   ns_text_sanitize(safe, sizeof safe, name, strlen(name), 0);   // "^[]0;PWNED^G"
 */
#ifndef NS_TEXT_H
#define NS_TEXT_H

#include <stddef.h>

enum {
  NS_TEXT_KEEP_NL = 1u << 0,  /* '\n' passes */
  NS_TEXT_KEEP_TAB = 1u << 1, /* '\t' passes */
  NS_TEXT_KEEP_CR = 1u << 2   /* '\r' passes (a progress line redraws itself) */
};

/* Writes the sanitized form of s[0..len) into dst (cap bytes, NUL-terminated, cut at a
 * character boundary when it does not fit; dst may be NULL when cap is 0) and returns the
 * length the whole of it takes (as snprintf). */
size_t ns_text_sanitize(char *dst, size_t cap, const char *s, size_t len, unsigned flags);
/* How many of the last bytes of s[0..len) are the start of a UTF-8 sequence the text does
 * not finish (0 to 3): a stream keeps them for its next write. */
size_t ns_text_partial(const char *s, size_t len);
/* 1 if s[0..len) would come out of ns_text_sanitize unchanged. */
int ns_text_is_safe(const char *s, size_t len, unsigned flags);

#endif
