/* lesson_progress.h: where the learner is in each lesson, kept between sessions in
 * $XDG_STATE_HOME/normscope/lesson-progress (or ~/.local/state/normscope/...), one line per
 * lesson: NAME<TAB>STEP<TAB>NSTEPS<TAB>SEEN<TAB>TRIES, NAME being the file's base name
 * without .lua, SEEN the highest step reached, TRIES one character per step: '+' its try-it
 * passed (once is enough), '-' it has one not passed yet, '.' it has none (a line of four
 * columns, from before TRIES, is read with no marks). The last line written is the last lesson
 * played. Every write replaces the file atomically (explore/file.h), so a crash never leaves half
 * of it.
 *
 *   lesson_progress p;
 *   lesson_progress_load(&p);                 // empty when there is no file yet
 *   lesson_progress_note(&p, "000-15.1-two-maps", 3, 7);
 *   lesson_progress_save(&p, err);
 *   lesson_progress_free(&p);
 */
#ifndef LESSON_PROGRESS_H
#define LESSON_PROGRESS_H

#include <stddef.h>

typedef struct {
  char *name;
  int step, nsteps, seen;
  char *tries; /* NULL: not known */
} lesson_progress_row;

typedef struct {
  lesson_progress_row *rows; /* the last one is the lesson played last */
  size_t n;
} lesson_progress;

/* The progress file's path into buf; NULL when neither XDG_STATE_HOME nor HOME is set. */
const char *lesson_progress_path(char *buf, size_t len);
/* Reads the file (a missing or unreadable file, or malformed lines, give no rows). */
void lesson_progress_load(lesson_progress *p);
void lesson_progress_free(lesson_progress *p);
/* The row of lesson name, or NULL. */
const lesson_progress_row *lesson_progress_find(const lesson_progress *p, const char *name);
/* Records that name is at step (of nsteps), moving it to the end (the last played). 0 or -1
 * (out of memory). */
int lesson_progress_note(lesson_progress *p, const char *name, int step, int nsteps);
/* The same with the marks of every step (NULL: keep those known); a '+' already recorded
 * stays. */
int lesson_progress_note_tries(lesson_progress *p, const char *name, int step, int nsteps,
                               const char *tries);
/* 1 when the row says every step was reached and every try-it passed. */
int lesson_progress_done(const lesson_progress_row *r);
/* Writes the file atomically (creating its folder). 0, or -1 with err (NS_ERRLEN). */
int lesson_progress_save(const lesson_progress *p, char *err);
/* The base name of a lesson path without .lua into buf. */
const char *lesson_progress_name(const char *path, char *buf, size_t len);

#endif
