/* cmd.h: a subcommand of normscope. Each src/cmd/cmd_NAME.c defines one cmd_entry (as each
 * of tmux's cmd-*.c defines one cmd_entry); main.c keeps the table of them, the overview
 * and the dispatch. A body gets argv with argv[first] its own name, and returns the exit
 * status: 0 success, 1 a script error or a failed check, CMD_EXIT_USAGE bad usage. */
#ifndef NS_CMD_H
#define NS_CMD_H

#define PROG "normscope"
#define EXIT_USAGE 2

typedef struct lua_State lua_State;

typedef struct {
  const char *name;
  const char *synopsis;                         /* for the overview: arguments after the name */
  const char *summary;                          /* one line for the overview */
  const char *help;                             /* `normscope help NAME`, after the usage line(s) */
  int (*run)(int argc, char **argv, int first); /* NULL: announced, not built yet */
} cmd_entry;

extern const cmd_entry cmd_run_entry, cmd_repl_entry, cmd_lesson_entry, cmd_verify_entry,
    cmd_record_entry;

/* --help or -h, which every command takes. */
int cmd_is_help(const char *a);
/* Prints "normscope: what: why" and the hint to help_for's --help (NULL: the program's);
 * returns EXIT_USAGE. */
int cmd_usage_error(const char *what, const char *why, const char *help_for);
/* Prints c's help on stdout; returns 0. */
int cmd_print_help(const cmd_entry *c);
/* A Lua state with the module loaded as `ns`, or NULL after saying why on stderr. */
lua_State *cmd_new_state(void);

#endif
