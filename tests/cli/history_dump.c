/* history_dump: the REPL's history as normscope itself reads it (nslr_history_open, so
 * the same folder, the same readline settings and the same parsing of multi-line
 * entries). Prints "entries N", then one line per entry with its newlines shown as
 * "\n". Exit status 1 when the history file cannot be used (the warning is printed).
 * For the SIGKILL test of history writes (test_kill_history.sh). */
#include <stdio.h>
#include <string.h>

#include <readline/history.h>

#include "repl/repl.h"

int main(int argc, char **argv) {
  (void)argv;
  if (argc != 1) {
    fprintf(stderr, "usage: history_dump (reads $XDG_STATE_HOME/normscope/history)\n");
    return 2;
  }
  if (nslr_history_open(1) != 0) {
    const char *w = nslr_history_error();
    fprintf(stderr, "%s\n", w ? w : "history_dump: the history cannot be used");
    return 1;
  }
  HIST_ENTRY **list = history_list();
  int n = 0;
  while (list && list[n]) n++;
  printf("entries %d\n", n);
  for (int i = 0; i < n; i++) {
    for (const char *c = list[i]->line; *c; c++)
      if (*c == '\n')
        fputs("\\n", stdout);
      else
        putchar(*c);
    putchar('\n');
  }
  return ferror(stdout) ? 1 : 0;
}
