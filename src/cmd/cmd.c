/* cmd.c: what the command bodies share (see cmd.h). */
#include "config.h"

#include <lua.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "lua/nsl.h"

int cmd_is_help(const char *a) {
  return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

int cmd_usage_error(const char *what, const char *why, const char *help_for) {
  fprintf(stderr, PROG ": %s: %s\n", what, why);
  if (help_for)
    fprintf(stderr, "Try '" PROG " %s --help' for more information.\n", help_for);
  else
    fprintf(stderr, "Try '" PROG " --help' for more information.\n");
  return EXIT_USAGE;
}

int cmd_print_help(const cmd_entry *c) {
  fputs(c->help, stdout);
  return 0;
}

lua_State *cmd_new_state(void) {
  char err[512] = "";
  lua_State *L = nsl_newstate(err);
  if (!L) fprintf(stderr, PROG ": cannot start Lua: %s\n", err[0] ? err : "out of memory");
  return L;
}
