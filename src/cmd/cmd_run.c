/* cmd_run.c: `normscope run FILE.lua [ARG]...`: a Lua script with the module loaded as
 * `ns`, without the screen, its `arg` and `...` built as lua5.4 builds them. */
#include "config.h"

#include <errno.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/cmd.h"
#include "explore/file.h"
#include "repl/repl.h"

static int cmd_run(int argc, char **argv, int first);

const cmd_entry cmd_run_entry = {
    "run", "FILE.lua [ARG]...", "run a Lua script with the module loaded as `ns`",
    "Usage: " PROG " run [--] FILE.lua [ARG]...\n"
    "  or:  " PROG " run - [ARG]...\n"
    "Run a Lua 5.4 script with the normscope module loaded as the global `ns`, without\n"
    "the screen. A FILE of - reads the script from standard input.\n"
    "\n"
    "The script receives its arguments as `...` and in the table `arg`, built as lua5.4\n"
    "builds it: arg[0] is the script, arg[1] the first argument, and the words before\n"
    "the script (" PROG ", run) sit at negative indices.\n"
    "\n"
    "An error stops the script: its message (FILE:LINE: ...) and a traceback go to\n"
    "standard error and the exit status is 1; a missing script or a syntax error are\n"
    "reported the same way. os.exit(n) ends the script with status n.\n",
    cmd_run};

/* The global `arg` as lua.c builds it: argv[script] at index 0, the script's arguments
 * at 1.., the words before the script at negative indices. */
static void create_arg_table(lua_State *L, int argc, char **argv, int script) {
  int narg = argc - (script + 1);
  lua_createtable(L, narg > 0 ? narg : 0, script + 1);
  for (int i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - script);
  }
  lua_setglobal(L, "arg");
}

/* Loads the script (NULL: stdin; text only, since a malformed binary chunk could crash
 * the interpreter), passes arg[1..n] as `...` and runs it in protected mode. Returns
 * the status, with the error message on the stack when it is not LUA_OK. */
static int run_script(lua_State *L, const char *fname) {
  int status = luaL_loadfilex(L, fname, "t"); /* fname NULL: stdin */
  if (status != LUA_OK) return status;
  lua_getglobal(L, "arg");
  int n = (int)luaL_len(L, -1);
  if (!lua_checkstack(L, n + 3)) {
    lua_pop(L, 2);
    lua_pushliteral(L, "too many arguments to script");
    return LUA_ERRMEM;
  }
  for (int i = 1; i <= n; i++) lua_rawgeti(L, -i, i);
  lua_remove(L, -n - 1); /* drop the arg table: func args... */
  return nslr_docall(L, n, 0);
}

/* Whether the script file can be read as Lua text: 0 yes, an errno when it cannot be
 * opened or read (so the message is "FILE: Permission denied", not Lua's "cannot open
 * FILE"), -1 when its first block holds a NUL byte or a precompiled chunk's signature
 * (luaL_loadfilex would report the first stray byte as a syntax error). */
static int script_problem(const char *fname) {
  FILE *f = ns_file_fopen_regular(fname, NULL); /* not a FIFO: it would wait for a writer */
  if (!f) return errno ? errno : EIO;
  unsigned char buf[4096];
  size_t got = fread(buf, 1, sizeof buf, f);
  int e = ferror(f) ? (errno ? errno : EIO) : 0;
  fclose(f);
  if (e) return e;
  if (got > 0 && buf[0] == 0x1b) return -1; /* LUA_SIGNATURE starts with ESC */
  return memchr(buf, '\0', got) ? -1 : 0;
}

static int cmd_run(int argc, char **argv, int first) {
  int i = first + 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (cmd_is_help(a)) return cmd_print_help(&cmd_run_entry);
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    }
    if (a[0] == '-' && a[1] != '\0') {
      char what[256];
      snprintf(what, sizeof what, "run: %s", a);
      return cmd_usage_error(what, "unknown option", "run");
    }
    break;
  }
  if (i >= argc) return cmd_usage_error("run", "missing script file", "run");
  int script = i;
  const char *fname = argv[script];
  int from_stdin = strcmp(fname, "-") == 0 && strcmp(argv[script - 1], "--") != 0;

  if (!from_stdin) { /* say plainly what is wrong with the file before Lua does */
    struct stat st;
    if (stat(fname, &st) != 0) {
      fprintf(stderr, PROG ": %s: %s\n", fname, strerror(errno));
      return 1;
    }
    if (S_ISDIR(st.st_mode)) {
      fprintf(stderr, PROG ": %s: is a directory\n", fname);
      return 1;
    }
    if (!S_ISREG(st.st_mode)) { /* a FIFO, a device: `run -` reads standard input */
      fprintf(stderr, PROG ": %s: not a regular file (run - reads standard input)\n", fname);
      return 1;
    }
    int why = script_problem(fname);
    if (why) {
      fprintf(stderr, PROG ": %s: %s\n", fname,
              why > 0 ? strerror(why) : "a binary file, not a Lua script");
      return 1;
    }
  }

  lua_State *L = cmd_new_state();
  if (!L) return 1;
  create_arg_table(L, argc, argv, script);
  int status = run_script(L, from_stdin ? NULL : fname);
  if (status != LUA_OK) {
    const char *msg = lua_tostring(L, -1);
    fflush(stdout); /* the script's output first, then the error */
    fprintf(stderr, PROG ": %s\n", msg ? msg : "(error object is not a string)");
    lua_close(L);
    return 1;
  }
  lua_close(L);
  return 0;
}
