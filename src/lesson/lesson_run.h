/* lesson_run.h: the headless lesson commands on top of the engine (lesson.h), called by
 * main.c's `lesson` and `verify` subcommands. Each returns an exit status (0 success, 1 a
 * failed claim, check or lesson error, 2 bad usage) and prints its own messages
 * ("normscope: ..." on standard error).
 *
 * Where lessons and claims are found (lesson_dir, lesson_claims_path): the environment
 * (NORMSCOPE_LESSONS, NORMSCOPE_CLAIMS) first; then, for a binary in its build tree (a
 * config.status beside it), the source tree's lessons/ and data/claims.tsv; otherwise the
 * installed $(pkgdatadir)/lessons and $(pkgdatadir)/claims.tsv.
 *
 *   return lesson_cmd_headless("000-15.1");   // a NAME, a NUMBER or a FILE
 */
#ifndef LESSON_RUN_H
#define LESSON_RUN_H

/* The screen's panel names, against which a step's focus is checked (main sets them once;
 * NULL: not checked). */
void lesson_run_set_panels(const char *const *names);

/* The lessons folder and the claims file (static strings). */
const char *lesson_dir(void);
const char *lesson_claims_path(void);

/* `lesson`: the lessons in reading order (number, title, source and section, steps). */
int lesson_cmd_list(void);
/* `lesson --headless X`: prints every step (text wrapped to 80 columns, the fields it sets,
 * its figure when ns.plot exists, its claims' verdicts, its try and whether try.show passes
 * try.check). 1 if a claim fails, a try.show does not pass, or the lesson errs. */
int lesson_cmd_headless(const char *what);
/* `lesson --check FILE`: lints a lesson (unknown claim ids, unknown state fields, steps
 * without text, lines over 80 columns, try-its already done or whose show fails). */
int lesson_cmd_check(const char *file);
/* `verify [--tsv] [--source LIST]`: every lesson (of the texts whose number prefixes are in
 * the comma-separated LIST, e.g. "000,001"; NULL: all), one line per claim; 1 if a claim
 * fails, a lesson errs, an id is claimed twice, or a registry id of those texts is verified
 * by no lesson. */
int lesson_cmd_verify(int tsv, const char *sources);

/* `lesson --schema`: the table of the lesson format's attributes (schema.h) in Markdown, as
 * lessons/README.md carries it. */
int lesson_cmd_schema(void);

/* The lesson file X names (as --headless takes it), malloc'd; NULL with a message printed
 * (*usage set when X names no lesson or several). */
char *lesson_resolve(const char *what, int *usage);
/* `lesson --states X`: every step's state as dump() writes it, each after a line
 * "-- step K" (the recorder's test compares them with the states it saved). */
int lesson_cmd_states(const char *what);

#endif
