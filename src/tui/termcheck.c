/* termcheck.c: whether the terminal type can run the screen, asked before newterm (in a file
 * of its own: <term.h> defines macros named like ordinary words, lines and columns among
 * them). ncursesw's newterm on a type its database lacks returns NULL but keeps a block it
 * never frees (LeakSanitizer saw it: TERM=xyz-no-such-terminal); setupterm answers the same
 * question and gives back what it took. */
#include <curses.h>
#include <term.h>
#include <unistd.h>

#include "tui/tui.h"

int tui_term_known(void) {
  int err = 0;
  TERMINAL *saved = cur_term;
  if (setupterm(NULL, STDOUT_FILENO, &err) != OK) return 0;
  TERMINAL *mine = cur_term;
  set_curterm(saved);
  del_curterm(mine);
  return 1;
}
