/* cmd_repl.c: `normscope repl`, the plain Lua prompt (src/repl does the work). */
#include "config.h"

#include <lua.h>
#include <stdio.h>

#include "cmd/cmd.h"
#include "repl/repl.h"

static int cmd_repl(int argc, char **argv, int first);

const cmd_entry cmd_repl_entry = {
    "repl", "", "an interactive Lua prompt, without the screen",
    "Usage: " PROG " repl\n"
    "An interactive Lua 5.4 prompt with the normscope module loaded as `ns`.\n"
    "\n"
    "Type an expression to see its value (no leading '=' needed), or statements.\n"
    "An unfinished chunk continues on the next line (prompt \">> \"). Tab completes\n"
    "globals, fields (ns.nor<Tab>) and methods (t:<Tab>). Ctrl-C abandons the line,\n"
    "Ctrl-D on an empty line exits.\n"
    "\n"
    "History is kept in $XDG_STATE_HOME/normscope/history (by default\n"
    "~/.local/state/normscope/history), shared with the explorer's prompt.\n",
    cmd_repl};

static int cmd_repl(int argc, char **argv, int first) {
  for (int i = first + 1; i < argc; i++) {
    if (cmd_is_help(argv[i])) return cmd_print_help(&cmd_repl_entry);
    char what[256];
    snprintf(what, sizeof what, "repl: %s", argv[i]);
    return cmd_usage_error(what, argv[i][0] == '-' ? "unknown option" : "unexpected argument",
                           "repl");
  }
  lua_State *L = cmd_new_state();
  if (!L) return 1;
  int status = nslr_repl(L);
  lua_close(L);
  return status;
}
