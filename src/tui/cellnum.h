/* cellnum.h: the number typed into an input cell (or the eps field) of the screen: what
 * strtod reads, with trailing spaces allowed and nothing else after it. Kept in a header
 * of its own so the fuzzer (tests/fuzz/fuzz_cellnum.c) runs the very code the keys use.
 *
 *   double v;
 *   if (tui_cell_number(a->edit, &v) == 0) ...   // -1: not a number, nothing changes
 */
#ifndef TUI_CELLNUM_H
#define TUI_CELLNUM_H

#include <errno.h>
#include <stdlib.h>

/* 0 with *v set when s holds a number, -1 otherwise (s not NULL, NUL-terminated). */
static inline int tui_cell_number(const char *s, double *v) {
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  while (*end == ' ') end++;
  return (end == s || *end) ? -1 : 0;
}

#endif
