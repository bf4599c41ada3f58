/* progress_dump: the lesson progress file as normscope reads it (lesson_progress_load:
 * $XDG_STATE_HOME/normscope/lesson-progress, malformed lines dropped). Prints "rows N"
 * and then each row as NAME<TAB>STEP<TAB>NSTEPS<TAB>SEEN. For the SIGKILL test of the
 * screen's writes (test_kill_exit.sh): a torn file shows as missing or wrong rows. */
#include <stdio.h>

#include "lesson/lesson_progress.h"

int main(int argc, char **argv) {
  (void)argv;
  if (argc != 1) {
    fprintf(stderr, "usage: progress_dump (reads $XDG_STATE_HOME/normscope/lesson-progress)\n");
    return 2;
  }
  lesson_progress p;
  lesson_progress_load(&p);
  printf("rows %zu\n", p.n);
  for (size_t i = 0; i < p.n; i++)
    printf("%s\t%d\t%d\t%d\n", p.rows[i].name, p.rows[i].step, p.rows[i].nsteps, p.rows[i].seen);
  lesson_progress_free(&p);
  return ferror(stdout) ? 1 : 0;
}
