/* main.c: the normscope command line. Subcommands, options and exit statuses
 * (0 success, 1 a script error or failed check, 2 bad usage); everything else lives
 * in the libraries below: the explorer (tui), the Lua binding and REPL (lua), the core. */
#include "config.h"

#include <errno.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/cmd_audit.h"
#include "explore/file.h"
#include "explore/textout.h"
#include "lesson/lesson.h"
#include "lesson/lesson_progress.h"
#include "lesson/lesson_run.h"
#include "lua/nsl.h"
#include "repl/repl.h"
#include "tui/tui.h"

#define PROG "normscope"
#define EXIT_USAGE 2

/* A subcommand: argv[first] is its name, its arguments follow. run is NULL for the
 * commands that are announced but not built yet. */
typedef struct {
  const char *name;
  const char *synopsis; /* for the overview: arguments after the name */
  const char *summary;  /* one line for the overview */
  const char *help;     /* `normscope help NAME`, after the usage line(s) */
  int (*run)(int argc, char **argv, int first);
} command;

static int cmd_run(int argc, char **argv, int first);
static int cmd_repl(int argc, char **argv, int first);
static int cmd_help(int argc, char **argv, int first);
static int cmd_lesson(int argc, char **argv, int first);
static int cmd_verify(int argc, char **argv, int first);
static int cmd_record(int argc, char **argv, int first);

static const command commands[] = {
    {"run", "FILE.lua [ARG]...", "run a Lua script with the module loaded as `ns`",
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
     cmd_run},
    {"repl", "", "an interactive Lua prompt, without the screen",
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
     cmd_repl},
    {"lesson", "[NAME|N|FILE]", "list the lessons, or play one",
     "Usage: " PROG " lesson\n"
     "  or:  " PROG " lesson [--present] [--autoplay SECONDS] [--ascii] NAME|N|FILE\n"
     "  or:  " PROG " lesson --continue [--present] [--autoplay SECONDS]\n"
     "  or:  " PROG " lesson --headless NAME|N|FILE\n"
     "  or:  " PROG " lesson --states NAME|N|FILE\n"
     "  or:  " PROG " lesson --check FILE\n"
     "Without arguments, list the lessons in reading order: number, title, the text and\n"
     "section they teach, their steps and how far you got (\xe2\x9c\x93 done, \xc2\xb7 started).\n"
     "\n"
     "With a lesson, open the explorer with the lesson's pane: N and P step (the state of\n"
     "each step comes back exactly when you step back), # goes to a step, R puts the\n"
     "step's state back after you changed things, H shows a try-it's answer; every step is\n"
     "one undo step. The place you reached is kept in $XDG_STATE_HOME/normscope/\n"
     "lesson-progress.\n"
     "\n"
     "  --continue     the lesson and step played last\n"
     "  --present      the lesson text and the step's panel fill the screen, in the\n"
     "                 high-contrast theme, without the prompt (for a projector)\n"
     "  --autoplay S   go to the next step every S seconds; Space pauses and resumes\n"
     "\n"
     "  --headless X   print lesson X step by step: its text, the state each step sets,\n"
     "                 its figures (as text), each claim's verdict and each try-it; exit\n"
     "                 status 1 if a claim fails. X is a lesson's number in the list, its\n"
     "                 name (or the start of it, e.g. 000-15.1) or a file.\n"
     "  --check FILE   lint a lesson file: unknown claim ids and state fields, steps\n"
     "                 without text, lines over 80 columns, try-its that cannot be done.\n"
     "\n"
     "  --states X     print the state of every step of X as dump() writes it\n"
     "\n"
     "Lessons run in a sandbox: NS_LESSON_MEM (bytes, or with K, M, G; default 128M, tensors\n"
     "included), NS_LESSON_STEPS (work per call: VM instructions and the C work they start;\n"
     "default 50000000) and NS_LESSON_TIME (seconds per call; default 10) set its limits;\n"
     "Ctrl-C ends a call. NORMSCOPE_LESSONS and NORMSCOPE_CLAIMS name another lessons\n"
     "folder or claims file.\n",
     cmd_lesson},
    {"verify", "[--tsv] [--source LIST]", "run every lesson headless and check its claims",
     "Usage: " PROG " verify [--tsv] [--source LIST]\n"
     "Run every lesson headless and print one line per claim. Exit status 1 if a claim\n"
     "fails, a lesson errs, a claim is verified twice, or a claim of the registry\n"
     "(claims.tsv) is verified by no lesson.\n"
     "\n"
     "  --tsv           print exactly ID<TAB>verified|failed<TAB>VALUE (VALUE with %.17g)\n"
     "  --source LIST   only the texts in LIST, comma-separated number prefixes (e.g.\n"
     "                  000,001): their lessons, and their registry claims only\n",
     cmd_verify},
    {"record", "FILE.lua", "record the changes made in the explorer as a lesson",
     "Usage: " PROG " record [--every-change] [--ascii] FILE.lua\n"
     "Open the explorer and record a lesson for FILE.lua: M marks the state as a step (the\n"
     "fields changed since the last mark become its set{}, written bit for bit); on q a\n"
     "change since the last mark becomes the last step, and the file is written with\n"
     "placeholder text for every step.\n"
     "\n"
     "  --every-change   every change (a key, a set{} at the prompt) is a step; no M needed\n",
     cmd_record},
    {"audit", "FILE [OPTION]...", "audit an activation tensor", cmd_audit_help, cmd_audit},
    {"help", "[COMMAND]", "show this help, or the help of COMMAND",
     "Usage: " PROG " help [COMMAND]\n"
     "Show the overview, or the help of COMMAND.\n",
     cmd_help},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const command *find_command(const char *name) {
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (strcmp(commands[i].name, name) == 0) return &commands[i];
  return NULL;
}

/* The options before a command: flags, and --state, which takes a value. */
enum {
  OPT_HELP,
  OPT_VERSION,
  OPT_ASCII,
  OPT_NO_MOUSE,
  OPT_NO_COLOR,
  OPT_STATE,
  OPT_RESUME,
  OPT_TENSOR,
  OPT_THEME
};
static const struct {
  const char *name;
  int id;
  int value; /* takes a value (--state FILE or --state=FILE) */
} options[] = {{"--help", OPT_HELP, 0},         {"-h", OPT_HELP, 0},
               {"--version", OPT_VERSION, 0},   {"-V", OPT_VERSION, 0},
               {"--ascii", OPT_ASCII, 0},       {"--no-mouse", OPT_NO_MOUSE, 0},
               {"--no-color", OPT_NO_COLOR, 0}, {"--no-colour", OPT_NO_COLOR, 0},
               {"--state", OPT_STATE, 1},       {"--resume", OPT_RESUME, 0},
               {"--tensor", OPT_TENSOR, 1},     {"--theme", OPT_THEME, 1}};

/* The option whose name is the first len characters of a, or -1 (*value: it takes one). */
static int find_option_v(const char *a, size_t len, int *value) {
  for (size_t i = 0; i < sizeof options / sizeof options[0]; i++)
    if (strlen(options[i].name) == len && strncmp(a, options[i].name, len) == 0) {
      if (value) *value = options[i].value;
      return options[i].id;
    }
  return -1;
}

static int find_option(const char *a, size_t len) {
  return find_option_v(a, len, NULL);
}

/* --help or -h, which every command takes. */
static int is_help(const char *a) {
  return find_option(a, strlen(a)) == OPT_HELP;
}

/* ---------------------------------------------------------------- messages */

/* Prints "normscope: what: why" and the hint to --help; returns the usage status. */
static int usage_error(const char *what, const char *why, const char *help_for) {
  fprintf(stderr, PROG ": %s: %s\n", what, why);
  if (help_for)
    fprintf(stderr, "Try '" PROG " %s --help' for more information.\n", help_for);
  else
    fprintf(stderr, "Try '" PROG " --help' for more information.\n");
  return EXIT_USAGE;
}

static void print_overview(void) {
  printf("Usage: " PROG " [OPTION]... [FILE.npy|FILE.csv]\n"
         "  or:  " PROG " COMMAND [ARG]...\n"
         "Explore normalization layers (layer, RMS, batch, instance and group norm) in the\n"
         "terminal: outputs, invariances, Jacobian spectra, batch coupling, train/eval gaps\n"
         "and floating-point precision, updated live as you change the input or settings.\n"
         "\n"
         "Without a FILE the explorer opens on x = (-2, -1, 1, 2); with a .npy or .csv\n"
         "FILE, on the tensor it holds.\n"
         "\n"
         "Explorer options:\n"
         "      --ascii       draw with ASCII characters only\n"
         "      --no-mouse    do not use the mouse\n"
         "      --no-color    no colours (as does a non-empty NO_COLOR variable)\n"
         "      --state FILE  start from a state file (written by save() or :w FILE)\n"
         "      --resume      start from the state the last session left (autosaved on exit)\n"
         "      --tensor NAME the tensor to open from a .safetensors FILE with several\n"
         "      --theme NAME  colours: dark (the default), light or contrast\n"
         "  -h, --help        show this help and exit\n"
         "  -V, --version     show the version and exit\n"
         "\n"
         "Commands:\n");
  for (size_t i = 0; i < NCOMMANDS; i++) {
    char head[64];
    snprintf(head, sizeof head, "%s %s", commands[i].name, commands[i].synopsis);
    printf("  %-24s%s%s\n", head, commands[i].summary, commands[i].run ? "" : " (not yet)");
  }
  printf("\n"
         "'" PROG " help COMMAND' or '" PROG " COMMAND --help' shows a command's help.\n"
         "Exit status: 0 success, 1 a script error or a failed check, 2 bad usage.\n");
}

static void print_version(void) {
  printf(PROG " %s\n"
              "Lua %s embedded.\n"
              "Copyright (c) 2026 the normscope authors. MIT License.\n"
              "This is free software: you are free to change and redistribute it.\n"
              "There is NO WARRANTY, to the extent permitted by law.\n",
         PACKAGE_VERSION, LUA_VERSION_MAJOR "." LUA_VERSION_MINOR "." LUA_VERSION_RELEASE);
}

static int print_command_help(const command *c) {
  fputs(c->help, stdout);
  return 0;
}

/* GNU close_stdout: a write error on stdout (a full disk, /dev/full) must not pass
 * silently as success. Runs at exit, also after os.exit from a script. */
static void close_stdout(void) {
  int prev_fail = ferror(stdout) != 0;
  errno = 0;
  int close_fail = fclose(stdout) != 0;
  if (prev_fail || close_fail) {
    int e = close_fail ? errno : 0;
    if (e)
      fprintf(stderr, PROG ": write error: %s\n", strerror(e));
    else
      fprintf(stderr, PROG ": write error\n");
    _exit(1);
  }
  if (fclose(stderr) != 0) _exit(1);
}

/* ---------------------------------------------------------------- Lua */

static lua_State *new_state(void) {
  char err[512] = "";
  lua_State *L = nsl_newstate(err);
  if (!L) fprintf(stderr, PROG ": cannot start Lua: %s\n", err[0] ? err : "out of memory");
  return L;
}

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
    if (is_help(a)) return print_command_help(find_command("run"));
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    }
    if (a[0] == '-' && a[1] != '\0') {
      char what[256];
      snprintf(what, sizeof what, "run: %s", a);
      return usage_error(what, "unknown option", "run");
    }
    break;
  }
  if (i >= argc) return usage_error("run", "missing script file", "run");
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

  lua_State *L = new_state();
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

static int cmd_repl(int argc, char **argv, int first) {
  for (int i = first + 1; i < argc; i++) {
    if (is_help(argv[i])) return print_command_help(find_command("repl"));
    char what[256];
    snprintf(what, sizeof what, "repl: %s", argv[i]);
    return usage_error(what, argv[i][0] == '-' ? "unknown option" : "unexpected argument", "repl");
  }
  lua_State *L = new_state();
  if (!L) return 1;
  int status = nslr_repl(L);
  lua_close(L);
  return status;
}

/* `lesson` and `verify`: argument parsing here, the work in lesson_run.c. */
static int cmd_lesson(int argc, char **argv, int first) {
  const char *headless = NULL, *check = NULL, *states = NULL, *name = NULL;
  tui_options opt = {0};
  int cont = 0, play_opt = 0;
  for (int i = first + 1; i < argc; i++) {
    const char *a = argv[i];
    if (is_help(a)) return print_command_help(find_command("lesson"));
    if (strcmp(a, "--headless") == 0 || strcmp(a, "--check") == 0 || strcmp(a, "--states") == 0) {
      if (i + 1 >= argc) return usage_error(a, "needs a lesson", "lesson");
      *(a[2] == 'h' ? &headless : a[2] == 'c' ? &check : &states) = argv[++i];
    } else if (strcmp(a, "--present") == 0) {
      opt.present = play_opt = 1;
    } else if (strcmp(a, "--ascii") == 0) {
      opt.ascii = play_opt = 1;
    } else if (strcmp(a, "--continue") == 0) {
      cont = play_opt = 1;
    } else if (strcmp(a, "--autoplay") == 0) {
      char *end = NULL;
      double d = i + 1 < argc ? strtod(argv[i + 1], &end) : 0;
      if (i + 1 >= argc || end == argv[i + 1] || *end || !(d > 0 && d <= 3600))
        return usage_error(a, "needs a number of seconds (0 < S <= 3600)", "lesson");
      opt.autoplay = d;
      play_opt = 1;
      i++;
    } else if (a[0] == '-' && a[1] != '\0') {
      char what[256];
      snprintf(what, sizeof what, "lesson: %s", a);
      return usage_error(what, "unknown option", "lesson");
    } else if (name)
      return usage_error("lesson", "one lesson at a time", "lesson");
    else
      name = a;
  }
  if ((headless != NULL) + (check != NULL) + (states != NULL) + (name != NULL || cont) > 1)
    return usage_error("lesson", "give one of NAME, --headless X, --states X or --check FILE",
                       "lesson");
  if (headless) return lesson_cmd_headless(headless);
  if (check) return lesson_cmd_check(check);
  if (states) return lesson_cmd_states(states);
  if (!name && !cont) {
    if (play_opt)
      return usage_error("lesson", "--present, --autoplay and --ascii need a lesson to play",
                         "lesson");
    return lesson_cmd_list();
  }
  char last[512];
  if (cont) {
    if (name)
      return usage_error("lesson", "--continue plays the last lesson: give no NAME", "lesson");
    lesson_progress p;
    lesson_progress_load(&p);
    if (p.n == 0) {
      lesson_progress_free(&p);
      fprintf(stderr,
              PROG ": lesson --continue: no lesson played yet (" PROG " lesson lists them)\n");
      return 1;
    }
    snprintf(last, sizeof last, "%s", p.rows[p.n - 1].name);
    opt.lesson_step = p.rows[p.n - 1].step;
    lesson_progress_free(&p);
    name = last;
  }
  int usage;
  char *path = lesson_resolve(name, &usage);
  if (!path) return usage ? EXIT_USAGE : 1;
  opt.lesson = path;
  if (opt.present) opt.theme = "contrast"; /* for a projector */
  fflush(stdout);
  int st = tui_run(&opt);
  free(path);
  return st;
}

/* `record FILE.lua`: the explorer, with M marking steps of the lesson it writes on q. */
static int cmd_record(int argc, char **argv, int first) {
  tui_options opt = {0};
  for (int i = first + 1; i < argc; i++) {
    const char *a = argv[i];
    if (is_help(a)) return print_command_help(find_command("record"));
    if (strcmp(a, "--ascii") == 0)
      opt.ascii = 1;
    else if (strcmp(a, "--every-change") == 0)
      opt.record_each = 1;
    else if (a[0] == '-' && a[1] != '\0') {
      char what[256];
      snprintf(what, sizeof what, "record: %s", a);
      return usage_error(what, "unknown option", "record");
    } else if (opt.record)
      return usage_error("record", "one file at a time", "record");
    else
      opt.record = a;
  }
  if (!opt.record)
    return usage_error("record", "needs the lesson file to write (FILE.lua)", "record");
  size_t l = strlen(opt.record);
  if (l < 5 || strcmp(opt.record + l - 4, ".lua") != 0)
    return usage_error(opt.record, "a lesson file ends in .lua", "record");
  fflush(stdout);
  return tui_run(&opt);
}

static int cmd_verify(int argc, char **argv, int first) {
  int tsv = 0;
  const char *sources = NULL;
  for (int i = first + 1; i < argc; i++) {
    const char *a = argv[i];
    if (is_help(a)) return print_command_help(find_command("verify"));
    if (strcmp(a, "--tsv") == 0)
      tsv = 1;
    else if (strcmp(a, "--source") == 0) {
      if (i + 1 >= argc || !argv[i + 1][0])
        return usage_error("verify: --source", "needs a list such as 000,001", "verify");
      sources = argv[++i];
    } else {
      char what[256];
      snprintf(what, sizeof what, "verify: %s", a);
      return usage_error(what, a[0] == '-' ? "unknown option" : "unexpected argument", "verify");
    }
  }
  return lesson_cmd_verify(tsv, sources);
}

static int cmd_help(int argc, char **argv, int first) {
  if (first + 1 >= argc) {
    print_overview();
    return 0;
  }
  if (first + 2 < argc) return usage_error("help", "too many arguments", "help");
  const char *name = argv[first + 1];
  if (is_help(name)) return print_command_help(find_command("help"));
  const command *c = find_command(name);
  if (!c) {
    char what[256];
    snprintf(what, sizeof what, "help: %s", name);
    return usage_error(what, "no such command", NULL);
  }
  return print_command_help(c);
}

/* ---------------------------------------------------------------- dispatch */

/* Whether s ends in suffix, ignoring case. */
static int has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* A future command: its --help works, anything else says it is not there yet. */
static int not_yet(const command *c, int argc, char **argv, int first) {
  for (int i = first + 1; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) break;
    if (is_help(argv[i])) return print_command_help(c);
  }
  fprintf(stderr, PROG ": %s: not available yet\n", c->name);
  return EXIT_USAGE;
}

/* The explorer's file argument: it must exist and be .npy or .csv. */
static int check_file(const char *file) {
  if (ns_file_kind_of(file) == NS_FILE_UNKNOWN) {
    struct stat st;
    if (stat(file, &st) != 0) return usage_error(file, "no such command or file", NULL);
    if (has_suffix(file, ".lua")) {
      fprintf(stderr,
              PROG
              ": %s: the explorer opens .npy, .csv and .safetensors files; to run a script: " PROG
              " run %s\n",
              file, file);
      return EXIT_USAGE;
    }
    return usage_error(file, "not a .npy, .csv or .safetensors file", NULL);
  }
  if (access(file, R_OK) != 0) {
    fprintf(stderr, PROG ": %s: %s\n", file, strerror(errno));
    return 1;
  }
  return 0;
}

/* NS_MAX_ELEMENTS to the core, for every subcommand (also those that make tensors without
 * Lua: the explorer, audit). A value the core cannot use is a usage error here, not a
 * silent default. */
static int check_max_elements(void) {
  char err[NS_ERRLEN];
  if (nsl_max_elements_from_env(err) == 0) return 0;
  fprintf(stderr, PROG ": NS_MAX_ELEMENTS: %s\n", err);
  return 2;
}

/* The other settings from the environment, refused as loudly: NS_THREADS and the lesson
 * sandbox's limits (NS_LESSON_MEM, NS_LESSON_STEPS, NS_LESSON_TIME). */
static int check_environment(void) {
  char err[LESSON_ERRLEN];
  int t;
  if (nsl_threads_from_env(&t, err) != 0) {
    fprintf(stderr, PROG ": NS_THREADS: %s\n", err);
    return 2;
  }
  if (lesson_options_check_env(err) != 0) {
    fprintf(stderr, PROG ": %s\n", err);
    return 2;
  }
  return 0;
}

int main(int argc, char **argv) {
  ns_text_guard(&stderr); /* every message that quotes input, sanitized (explore/textout.h) */
  atexit(close_stdout);
  if (check_max_elements() || check_environment()) return 2;
  nsl_blas_from_env(); /* every command, Lua state or not: sonames and one OpenBLAS thread */
  lesson_run_set_panels(tui_panel_names); /* a lesson step's focus names a panel */
  tui_options opt = {0};
  char last[1200];
  int explorer_option = 0; /* an option only the explorer takes was given */
  int only_files = 0;      /* after "--" */

  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!only_files && a[0] == '-' && a[1] != '\0') {
      if (strcmp(a, "--") == 0) {
        only_files = 1;
        continue;
      }
      /* a long option's name ends at '=' ("--ascii=yes" names --ascii) */
      size_t len = a[1] == '-' ? strcspn(a, "=") : strlen(a);
      int takes = 0;
      int id = find_option_v(a, len, &takes);
      const char *value = NULL;
      if (takes) {
        if (a[len] == '=')
          value = a + len + 1;
        else if (i + 1 < argc)
          value = argv[++i];
        else
          return usage_error(a, "this option needs a value (a file)", NULL);
      } else if (a[len] == '=') {
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)len, a);
        return usage_error(id >= 0 ? name : a,
                           id >= 0 ? "this option takes no argument" : "unknown option", NULL);
      }
      switch (id) {
      case OPT_HELP:
        print_overview();
        return 0;
      case OPT_VERSION:
        print_version();
        return 0;
      case OPT_ASCII:
        opt.ascii = explorer_option = 1;
        break;
      case OPT_NO_MOUSE:
        opt.no_mouse = explorer_option = 1;
        break;
      case OPT_NO_COLOR:
        opt.no_color = explorer_option = 1;
        break;
      case OPT_TENSOR:
        opt.tensor = value;
        explorer_option = 1;
        break;
      case OPT_STATE:
        if (opt.state_file) return usage_error(a, "give one state to start from", NULL);
        opt.state_file = value;
        explorer_option = 1;
        break;
      case OPT_THEME:
        if (tui_theme_find(value) < 0)
          return usage_error(a, "unknown theme (dark, light or contrast)", NULL);
        opt.theme = value;
        explorer_option = 1;
        break;
      case OPT_RESUME:
        if (opt.state_file) return usage_error(a, "give one state to start from", NULL);
        if (!tui_last_state_path(last, sizeof last))
          return usage_error(a, "neither XDG_STATE_HOME nor HOME is set", NULL);
        if (access(last, R_OK) != 0) {
          fprintf(stderr, PROG ": --resume: no saved state yet (%s): %s\n", last, strerror(errno));
          return 1;
        }
        opt.state_file = last;
        explorer_option = 1;
        break;
      default:
        return usage_error(a, "unknown option", NULL);
      }
      continue;
    }
    /* A word: a command (only as the first word, before any explorer option), else the
     * explorer's file. */
    const command *c = only_files || opt.file ? NULL : find_command(a);
    if (c) {
      if (explorer_option)
        return usage_error(
            a, "--ascii, --no-mouse, --no-color, --state and --resume are for the explorer", NULL);
      if (!c->run) return not_yet(c, argc, argv, i);
      return c->run(argc, argv, i);
    }
    if (opt.file) return usage_error(a, "only one file can be opened", NULL);
    opt.file = a;
  }
  if (opt.file) {
    int st = check_file(opt.file);
    if (st) return st;
  }
  fflush(stdout);
  return tui_run(&opt);
}
