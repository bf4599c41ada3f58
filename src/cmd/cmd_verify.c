/* cmd_verify.c: `normscope verify`: every lesson headless, its claims checked (the work is
 * in src/lesson/lesson_run.c). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "lesson/lesson_run.h"

static int cmd_verify(int argc, char **argv, int first);

const cmd_entry cmd_verify_entry = {
    "verify", "[--tsv] [--source LIST]", "run every lesson headless and check its claims",
    "Usage: " PROG " verify [--tsv] [--source LIST]\n"
    "Run every lesson headless and print one line per claim. Exit status 1 if a claim\n"
    "fails, a lesson errs, a claim is verified twice, or a claim of the registry\n"
    "(claims.tsv) is verified by no lesson.\n"
    "\n"
    "  --tsv           print exactly ID<TAB>verified|failed<TAB>VALUE (VALUE with %.17g)\n"
    "  --source LIST   only the texts in LIST, comma-separated number prefixes (e.g.\n"
    "                  000,001): their lessons, and their registry claims only\n",
    cmd_verify};

static int cmd_verify(int argc, char **argv, int first) {
  int tsv = 0;
  const char *sources = NULL;
  for (int i = first + 1; i < argc; i++) {
    const char *a = argv[i];
    if (cmd_is_help(a)) return cmd_print_help(&cmd_verify_entry);
    if (strcmp(a, "--tsv") == 0)
      tsv = 1;
    else if (strcmp(a, "--source") == 0) {
      if (i + 1 >= argc || !argv[i + 1][0])
        return cmd_usage_error("verify: --source", "needs a list such as 000,001", "verify");
      sources = argv[++i];
    } else {
      char what[256];
      snprintf(what, sizeof what, "verify: %s", a);
      return cmd_usage_error(what, a[0] == '-' ? "unknown option" : "unexpected argument",
                             "verify");
    }
  }
  return lesson_cmd_verify(tsv, sources);
}
