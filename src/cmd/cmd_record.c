/* cmd_record.c: `normscope record FILE.lua`: the explorer, recording a lesson. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "tui/tui.h"

static int cmd_record(int argc, char **argv, int first);

const cmd_entry cmd_record_entry = {
    "record", "FILE.lua", "record the changes made in the explorer as a lesson",
    "Usage: " PROG " record [--every-change] [--ascii] FILE.lua\n"
    "Open the explorer and record a lesson for FILE.lua: M marks the state as a step (the\n"
    "fields changed since the last mark become its set{}, written bit for bit); on q a\n"
    "change since the last mark becomes the last step, and the file is written with\n"
    "placeholder text for every step.\n"
    "\n"
    "  --every-change   every change (a key, a set{} at the prompt) is a step; no M needed\n",
    cmd_record};

/* `record FILE.lua`: the explorer, with M marking steps of the lesson it writes on q. */
static int cmd_record(int argc, char **argv, int first) {
  tui_options opt = {0};
  for (int i = first + 1; i < argc; i++) {
    const char *a = argv[i];
    if (cmd_is_help(a)) return cmd_print_help(&cmd_record_entry);
    if (strcmp(a, "--ascii") == 0)
      opt.ascii = 1;
    else if (strcmp(a, "--every-change") == 0)
      opt.record_each = 1;
    else if (a[0] == '-' && a[1] != '\0') {
      char what[256];
      snprintf(what, sizeof what, "record: %s", a);
      return cmd_usage_error(what, "unknown option", "record");
    } else if (opt.record)
      return cmd_usage_error("record", "one file at a time", "record");
    else
      opt.record = a;
  }
  if (!opt.record)
    return cmd_usage_error("record", "needs the lesson file to write (FILE.lua)", "record");
  size_t l = strlen(opt.record);
  if (l < 5 || strcmp(opt.record + l - 4, ".lua") != 0)
    return cmd_usage_error(opt.record, "a lesson file ends in .lua", "record");
  fflush(stdout);
  return tui_run(&opt);
}
