/* textout.h: standard streams that cannot carry escape sequences from input.
 *
 * ns_text_guard replaces a stream (stderr for every command, stdout for the headless ones:
 * lesson --headless/--check/--states, the lesson list, verify, audit) by one that passes
 * what is written through ns_text_sanitize (core/text.h) on its way to the same descriptor,
 * keeping newlines, tabs and carriage returns: every message that quotes a file's bytes (a
 * tensor name, a CSV token, a state file's error, a lesson's text) reaches the terminal
 * with ESC as ^[ and C1 controls as U+FFFD, whichever code printed it. A UTF-8 character
 * cut between two writes is kept for the next. Not for the streams the screen or the REPL's
 * readline draw on (they need the descriptor: they sanitize what they show themselves).
 *
 *   ns_text_guard(&stderr);     // from now on fprintf(stderr, ...) is safe
 */
#ifndef NS_EXPLORE_TEXTOUT_H
#define NS_EXPLORE_TEXTOUT_H

#include <stdio.h>

/* Flushes *stream and replaces it with the sanitizing one (unbuffered for stderr, line
 * buffered on a terminal, else fully buffered). 0, or -1 leaving it as it was. */
int ns_text_guard(FILE **stream);

#endif
