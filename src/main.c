/* main.c: the normscope command line: the explorer's options, the table of commands
 * (their bodies are src/cmd/cmd_NAME.c, the audit's src/audit/cmd_audit.c), the overview
 * and the dispatch. Exit statuses: 0 success, 1 a script error or failed check, 2 bad
 * usage; everything else lives in the libraries below. */
#include "config.h"

#include <errno.h>
#include <lua.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/cmd_audit.h"
#include "class/cls.h"
#include "cmd/cmd.h"
#include "core/kinds.h"
#include "core/tensor.h"
#include "explore/file.h"
#include "explore/textout.h"
#include "lesson/lesson.h"
#include "lesson/lesson_run.h"
#include "lua/nsl.h"
#include "tui/tui.h"

typedef cmd_entry command;

static int cmd_help(int argc, char **argv, int first);

/* The audit's body stays with the audit (src/audit/cmd_audit.c). */
static const command audit_entry = {"audit", "FILE [OPTION]...", "audit an activation tensor",
                                    cmd_audit_help, cmd_audit};
/* The classroom's follower (src/class). */
static const command follow_entry = {"follow", "SOCKET",
                                     "follow a teacher's screen (--broadcast SOCKET)",
                                     cls_follow_help, cls_cmd_follow};
static const command help_entry = {"help", "[COMMAND]", "show this help, or the help of COMMAND",
                                   "Usage: " PROG " help [COMMAND]\n"
                                   "Show the overview, or the help of COMMAND.\n",
                                   cmd_help};

/* The commands, in the overview's order; each body is in src/cmd/cmd_NAME.c. */
static const command *const commands[] = {&cmd_run_entry,    &cmd_repl_entry,   &cmd_lesson_entry,
                                          &cmd_verify_entry, &cmd_record_entry, &audit_entry,
                                          &follow_entry,     &help_entry};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const command *find_command(const char *name) {
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (strcmp(commands[i]->name, name) == 0) return commands[i];
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
  OPT_THEME,
  OPT_BROADCAST
};
static const struct {
  const char *name;
  int id;
  int value; /* takes a value (--state FILE or --state=FILE) */
} options[] = {{"--help", OPT_HELP, 0},          {"-h", OPT_HELP, 0},
               {"--version", OPT_VERSION, 0},    {"-V", OPT_VERSION, 0},
               {"--ascii", OPT_ASCII, 0},        {"--no-mouse", OPT_NO_MOUSE, 0},
               {"--no-color", OPT_NO_COLOR, 0},  {"--no-colour", OPT_NO_COLOR, 0},
               {"--state", OPT_STATE, 1},        {"--resume", OPT_RESUME, 0},
               {"--tensor", OPT_TENSOR, 1},      {"--theme", OPT_THEME, 1},
               {"--broadcast", OPT_BROADCAST, 1}};

/* The option whose name is the first len characters of a, or -1 (*value: it takes one). */
static int find_option_v(const char *a, size_t len, int *value) {
  for (size_t i = 0; i < sizeof options / sizeof options[0]; i++)
    if (strlen(options[i].name) == len && strncmp(a, options[i].name, len) == 0) {
      if (value) *value = options[i].value;
      return options[i].id;
    }
  return -1;
}

/* ---------------------------------------------------------------- messages */

static void print_overview(void) {
  printf("Usage: " PROG " [OPTION]... [FILE.npy|FILE.csv|FILE.safetensors]\n"
         "  or:  " PROG " COMMAND [ARG]...\n"
         "Explore normalization layers in the terminal: outputs, invariances, Jacobian\n"
         "spectra, batch coupling, train/eval gaps and floating-point precision, updated\n"
         "live as you change the input or settings. Kinds:" NS_KIND_WORDS ".\n"
         "\n"
         "Without a FILE the explorer opens on x = (-2, -1, 1, 2); with a .npy, .csv or\n"
         ".safetensors FILE, on the tensor it holds (--tensor NAME picks one of several).\n"
         "\n"
         "Explorer options:\n"
         "      --ascii       draw with ASCII characters only\n"
         "      --no-mouse    do not use the mouse\n"
         "      --no-color    no colours (as does a non-empty NO_COLOR variable)\n"
         "      --state FILE  start from a state file (written by save() or :w FILE)\n"
         "      --resume      start from the state the last session left (autosaved on exit)\n"
         "      --tensor NAME the tensor to open from a .safetensors FILE with several\n"
         "      --theme NAME  colours: dark (the default), light or contrast\n"
         "      --broadcast SOCKET  publish every change on the Unix socket SOCKET for\n"
         "                    students who run " PROG " follow SOCKET\n"
         "  -h, --help        show this help and exit\n"
         "  -V, --version     show the version and exit\n"
         "\n"
         "Commands:\n");
  for (size_t i = 0; i < NCOMMANDS; i++) {
    char head[64];
    snprintf(head, sizeof head, "%s %s", commands[i]->name, commands[i]->synopsis);
    /* a synopsis too long for its column gets a line of its own, as GNU help does */
    if (strlen(head) >= 24) printf("  %s\n", head), head[0] = 0;
    printf("  %-24s%s%s\n", head, commands[i]->summary, commands[i]->run ? "" : " (not yet)");
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

static int cmd_help(int argc, char **argv, int first) {
  if (first + 1 >= argc) {
    print_overview();
    return 0;
  }
  if (first + 2 < argc) return cmd_usage_error("help", "too many arguments", "help");
  const char *name = argv[first + 1];
  if (cmd_is_help(name)) return cmd_print_help(find_command("help"));
  const command *c = find_command(name);
  if (!c) {
    char what[256];
    snprintf(what, sizeof what, "help: %s", name);
    return cmd_usage_error(what, "no such command", NULL);
  }
  return cmd_print_help(c);
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
    if (cmd_is_help(argv[i])) return cmd_print_help(c);
  }
  fprintf(stderr, PROG ": %s: not available yet\n", c->name);
  return EXIT_USAGE;
}

/* The explorer's file argument: it must exist and be .npy or .csv. */
static int check_file(const char *file) {
  if (ns_file_kind_of(file) == NS_FILE_UNKNOWN) {
    struct stat st;
    if (stat(file, &st) != 0) return cmd_usage_error(file, "no such command or file", NULL);
    if (has_suffix(file, ".lua")) {
      fprintf(stderr,
              PROG
              ": %s: the explorer opens .npy, .csv and .safetensors files; to run a script: " PROG
              " run %s\n",
              file, file);
      return EXIT_USAGE;
    }
    return cmd_usage_error(file, ns_file_unknown_why(file), NULL);
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
  char err[NS_ERRLEN];
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
  ns_mem_keep_freed();    /* freed buffers reused, not faulted in again (core/tensor.h) */
  ns_text_guard(&stderr); /* every message that quotes input, sanitized (explore/textout.h) */
  atexit(close_stdout);
  if (check_max_elements() || check_environment()) return 2;
  nsl_blas_from_env(); /* every command, Lua state or not: sonames and one OpenBLAS thread */
  lesson_run_set_panels(tui_panel_names); /* a lesson step's focus names a panel */
  tui_options opt = {0};
  const char *broadcast = NULL; /* --broadcast SOCKET */
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
          return cmd_usage_error(a, "this option needs a value (a file)", NULL);
      } else if (a[len] == '=') {
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)len, a);
        return cmd_usage_error(id >= 0 ? name : a,
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
        if (opt.state_file) return cmd_usage_error(a, "give one state to start from", NULL);
        if (access(value, R_OK) != 0) { /* as --resume: a missing state is not the default */
          fprintf(stderr, PROG ": --state %s: %s\n", value, strerror(errno));
          return 1;
        }
        opt.state_file = value;
        explorer_option = 1;
        break;
      case OPT_THEME:
        if (tui_theme_find(value) < 0)
          return cmd_usage_error(a, "unknown theme (dark, light or contrast)", NULL);
        opt.theme = value;
        explorer_option = 1;
        break;
      case OPT_BROADCAST:
        broadcast = value;
        explorer_option = 1;
        break;
      case OPT_RESUME:
        if (opt.state_file) return cmd_usage_error(a, "give one state to start from", NULL);
        if (!tui_last_state_path(last, sizeof last))
          return cmd_usage_error(a, "neither XDG_STATE_HOME nor HOME is set", NULL);
        if (access(last, R_OK) != 0) {
          fprintf(stderr, PROG ": --resume: no saved state yet (%s): %s\n", last, strerror(errno));
          return 1;
        }
        opt.state_file = last;
        opt.resume = 1;
        explorer_option = 1;
        break;
      default:
        return cmd_usage_error(a, "unknown option", NULL);
      }
      continue;
    }
    /* A word: a command (only as the first word, before any explorer option), else the
     * explorer's file. */
    const command *c = only_files || opt.file ? NULL : find_command(a);
    if (c) {
      if (explorer_option)
        return cmd_usage_error(
            a, "--ascii, --no-mouse, --no-color, --state and --resume are for the explorer", NULL);
      if (!c->run) return not_yet(c, argc, argv, i);
      return c->run(argc, argv, i);
    }
    if (opt.file) return cmd_usage_error(a, "only one file can be opened", NULL);
    opt.file = a;
  }
  if (opt.file) {
    int st = check_file(opt.file);
    if (st) return st;
  }
  fflush(stdout);
  if (broadcast) return cls_run_broadcast(&opt, broadcast);
  return tui_run(&opt);
}
