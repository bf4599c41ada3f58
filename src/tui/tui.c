/* tui.c: placeholder until the explorer screen lands. */
#include <stdio.h>

#include "tui/tui.h"

int tui_run(const tui_options *opt) {
  (void)opt;
  fprintf(stderr, "normscope: the explorer screen is not built yet; try `normscope repl`\n");
  return 1;
}
