/* cmd_lesson.c: `normscope lesson`: lists the lessons, plays one in the explorer, or runs
 * one headless, lints it or prints its states (the work is in src/lesson/lesson_run.c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "class/cls.h"
#include "cmd/cmd.h"
#include "lesson/lesson_progress.h"
#include "lesson/lesson_run.h"
#include "tui/tui.h"

static int cmd_lesson(int argc, char **argv, int first);

const cmd_entry cmd_lesson_entry = {
    "lesson", "[NAME|N|FILE]", "list the lessons, or play one",
    "Usage: " PROG " lesson\n"
    "  or:  " PROG " lesson [--present] [--autoplay SECONDS] [--ascii] NAME|N|FILE\n"
    "  or:  " PROG " lesson --continue [--present] [--autoplay SECONDS]\n"
    "  or:  " PROG " lesson --headless NAME|N|FILE\n"
    "  or:  " PROG " lesson --states NAME|N|FILE\n"
    "  or:  " PROG " lesson --check FILE\n"
    "  or:  " PROG " lesson --export FILE.md|FILE.cast [--size COLSxROWS] NAME|N|FILE\n"
    "  or:  " PROG " lesson --schema\n"
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
    "  --autoplay S   go to the next step every S seconds; Space pauses and resumes;\n"
    "                 a try-it stops it until it is done\n"
    "  --show-answers with --autoplay: a try-it's answer is played and it goes on\n"
    "  --broadcast SOCKET  publish the lesson and every change on the Unix socket\n"
    "                 SOCKET: students run " PROG " follow SOCKET\n"
    "  --export FILE  write the lesson as a Markdown handout (FILE.md: each step's text,\n"
    "                 its state as a set{} block, figure, claims, the exercises and\n"
    "                 their answers) or a recording of its playback (FILE.cast, asciinema\n"
    "                 v2, at --size COLSxROWS, 120x40 by default)\n"
    "\n"
    "  --headless X   print lesson X step by step: its text, the state each step sets,\n"
    "                 its figures (as text), each claim's verdict and each try-it; exit\n"
    "                 status 1 if a claim fails. X is a lesson's number in the list, its\n"
    "                 name (or the start of it, e.g. 000-15.1) or a file.\n"
    "  --check FILE   lint a lesson file: unknown claim ids and state fields, steps\n"
    "                 without text, lines over 80 columns, try-its that cannot be done.\n"
    "\n"
    "  --states X     print the state of every step of X as dump() writes it\n"
    "  --schema       print the table of the lesson format's attributes (Markdown)\n"
    "  --layout-dump WxH[,WxH...] X   (for tests) play every step of X at each size\n"
    "                 without a terminal: ok or FAIL per step (overlapping regions, a cut\n"
    "                 panel, a text that does not fit); --layout-screens prints every screen\n"
    "\n"
    "Lessons run in a sandbox: NS_LESSON_MEM (bytes, or with K, M, G; default 128M, tensors\n"
    "included), NS_LESSON_STEPS (work per call: VM instructions and the C work they start;\n"
    "default 50000000) and NS_LESSON_TIME (seconds per call; default 10) set its limits;\n"
    "Ctrl-C ends a call. NORMSCOPE_LESSONS and NORMSCOPE_CLAIMS name another lessons\n"
    "folder or claims file.\n",
    cmd_lesson};

static int cmd_lesson(int argc, char **argv, int first) {
  const char *headless = NULL, *check = NULL, *states = NULL, *name = NULL, *dump = NULL;
  int dump_screens = 0;
  const char *broadcast = NULL, *export = NULL; /* the classroom (src/class) */
  int cast_w = 0, cast_h = 0;
  tui_options opt = {0};
  int cont = 0, play_opt = 0;
  for (int i = first + 1; i < argc; i++) {
    const char *a = argv[i];
    if (cmd_is_help(a)) return cmd_print_help(&cmd_lesson_entry);
    if (strcmp(a, "--headless") == 0 || strcmp(a, "--check") == 0 || strcmp(a, "--states") == 0) {
      if (i + 1 >= argc) return cmd_usage_error(a, "needs a lesson", "lesson");
      *(a[2] == 'h' ? &headless : a[2] == 'c' ? &check : &states) = argv[++i];
    } else if (strcmp(a, "--broadcast") == 0 || strcmp(a, "--export") == 0) {
      if (i + 1 >= argc || !argv[i + 1][0])
        return cmd_usage_error(
            a, a[2] == 'b' ? "needs a socket path" : "needs a FILE.md or FILE.cast", "lesson");
      *(a[2] == 'b' ? &broadcast : &export) = argv[++i];
      play_opt |= a[2] == 'b';
    } else if (strcmp(a, "--size") == 0) {
      char x = 0, end = 0;
      if (i + 1 >= argc || sscanf(argv[i + 1], "%d%c%d%c", &cast_w, &x, &cast_h, &end) != 3 ||
          x != 'x' || cast_w < 80 || cast_h < 24 || cast_w > 500 || cast_h > 200)
        return cmd_usage_error(a, "needs COLSxROWS, at least 80x24 (e.g. 120x40)", "lesson");
      i++;
    } else if (strcmp(a, "--schema") == 0) {
      return lesson_cmd_schema();
    } else if (strcmp(a, "--layout-dump") == 0 || strcmp(a, "--layout-screens") == 0) {
      if (i + 1 >= argc) return cmd_usage_error(a, "needs sizes, e.g. 80x24,120x40", "lesson");
      dump = argv[++i];
      dump_screens = a[9] == 's';
    } else if (strcmp(a, "--show-answers") == 0) {
      opt.show_answers = play_opt = 1;
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
        return cmd_usage_error(a, "needs a number of seconds (0 < S <= 3600)", "lesson");
      opt.autoplay = d;
      play_opt = 1;
      i++;
    } else if (a[0] == '-' && a[1] != '\0') {
      char what[256];
      snprintf(what, sizeof what, "lesson: %s", a);
      return cmd_usage_error(what, "unknown option", "lesson");
    } else if (name)
      return cmd_usage_error("lesson", "one lesson at a time", "lesson");
    else
      name = a;
  }
  if ((headless != NULL) + (check != NULL) + (states != NULL) + (name != NULL || cont) > 1)
    return cmd_usage_error("lesson", "give one of NAME, --headless X, --states X or --check FILE",
                           "lesson");
  if (export) {
    if (!name || play_opt || cont || headless || check || states)
      return cmd_usage_error("lesson --export", "give one lesson and no other option", "lesson");
    return cls_export(name, export, cast_w, cast_h);
  }
  if (cast_w) return cmd_usage_error("lesson --size", "is for --export FILE.cast", "lesson");
  if (headless) return lesson_cmd_headless(headless);
  if (check) return lesson_cmd_check(check);
  if (states) return lesson_cmd_states(states);
  if (!name && !cont) {
    if (play_opt)
      return cmd_usage_error("lesson", "--present, --autoplay and --ascii need a lesson to play",
                             "lesson");
    return lesson_cmd_list();
  }
  char last[512];
  if (cont) {
    if (name)
      return cmd_usage_error("lesson", "--continue plays the last lesson: give no NAME", "lesson");
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
  if (dump) { /* the layout test: every step at each size, without a terminal */
    int st = tui_layout_dump(&opt, dump, dump_screens);
    free(path);
    return st;
  }
  if (opt.present) opt.theme = "contrast"; /* for a projector */
  fflush(stdout);
  int st = broadcast ? cls_run_broadcast(&opt, broadcast) : tui_run(&opt);
  free(path);
  return st;
}
