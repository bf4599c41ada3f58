/* fuzz_lesson.c: arbitrary bytes as a lesson file, through the sandboxed loader. The bytes
 * are written to a scratch file (on a tmpfs when there is one) and given to lesson_load
 * with a small budget (so runaway inputs end quickly) and the project's claims registry. Either the
 * load is refused with a message, or it gives a lesson of at least one step whose every claims,
 * figure and check either runs or is refused with a message. Whatever the lesson does, the scratch
 * folder holds only the lesson file afterwards (the sandbox has no file system to write to).
 * FUZZ_LESSON_LOAD_ONLY in the environment skips the steps' functions (claims compute the
 * explorer's whole result, ten times the cost of a load): the long runs use it to reach
 * more inputs of the loader itself; the replay in make check runs everything. Tensors
 * are capped at 4096 elements (NS_MAX_ELEMENTS) for the same reason. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/tensor.h"
#include "fuzz.h"
#include "lesson/lesson.h"

#ifndef FUZZ_SRCDIR
#define FUZZ_SRCDIR "."
#endif

static char dir[64], path[96];
static lesson_registry *reg;

static void cleanup(void) {
  if (path[0]) unlink(path);
  if (dir[0]) rmdir(dir);
  lesson_registry_free(reg);
}

static void quiet(void *ud, const char *line) {
  (void)ud;
  (void)line;
}

static void on_claim(void *ud, const lesson_claim *c) {
  (void)ud;
  FUZZ_CHECK(c->id != NULL && c->row != NULL, "a claim reported without its registry row");
}

/* Only the lesson file may be in the scratch folder. */
static void check_folder(void) {
  DIR *d = opendir(dir);
  FUZZ_CHECK(d != NULL, "the scratch folder %s is gone", dir);
  for (struct dirent *e; (e = readdir(d));)
    FUZZ_CHECK(strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
                   strcmp(e->d_name, "l.lua") == 0,
               "the lesson made a file: %s", e->d_name);
  closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[NS_ERRLEN];
  if (!reg) {
    const char *top = getenv("top_srcdir");
    char rpath[4096];
    snprintf(rpath, sizeof rpath, "%s/data/claims.tsv", top && *top ? top : FUZZ_SRCDIR);
    reg = lesson_registry_load(rpath, err);
    FUZZ_CHECK(reg != NULL, "the claims registry: %s", err);
    fuzz_scratch(dir, sizeof dir, "nsfuzz-lesson");
    snprintf(path, sizeof path, "%s/l.lua", dir);
    atexit(cleanup);
    /* small tensors only: C work on big ones is outside the instruction budget and would
     * make an input slow without reaching more of the loader */
    ns_set_max_elements(4096, NULL);
  }
  FILE *f = fopen(path, "wb");
  FUZZ_CHECK(f != NULL, "cannot write %s", path);
  FUZZ_CHECK(fwrite(data, 1, size, f) == size && fclose(f) == 0, "cannot write %s", path);

  lesson_options o;
  lesson_options_init(&o);
  o.registry = reg;
  o.mem_limit = 16u << 20;
  /* twice what the hungriest shipped lesson needs in one call (001-s04's functions take
   * about 10,000 VM instructions, every load under 2,000): a runaway loop ends ten times
   * sooner than it did at 200,000, and every real lesson still runs whole */
  o.step_limit = 20000;
  o.out = quiet;
  o.on_claim = on_claim;
  err[0] = '\0';
  lesson *ls = lesson_load(path, &o, err);
  if (!ls) {
    FUZZ_CHECK(err[0] != '\0', "a refused lesson without a message");
    check_folder();
    return 0;
  }
  int n = lesson_nsteps(ls);
  FUZZ_CHECK(n >= 1, "a lesson of %d steps", n);
  FUZZ_CHECK(lesson_title(ls) != NULL, "a lesson without a title");
  static int load_only = -1;
  if (load_only < 0) load_only = getenv("FUZZ_LESSON_LOAD_ONLY") != NULL;
  for (int k = 1; k <= n; k++) {
    FUZZ_CHECK(lesson_step_text(ls, k) != NULL && lesson_step_state(ls, k) != NULL,
               "step %d has no text or no state", k);
    if (load_only) continue;
    err[0] = '\0';
    if (lesson_claims(ls, k, err) < 0) FUZZ_CHECK(err[0], "step %d: claims failed silently", k);
    char *text = NULL;
    err[0] = '\0';
    if (lesson_figure(ls, k, NULL, &text, err) < 0)
      FUZZ_CHECK(err[0], "step %d: figure failed silently", k);
    free(text);
    char hint[256];
    err[0] = '\0';
    if (lesson_check_try(ls, k, NULL, hint, sizeof hint, err) < 0)
      FUZZ_CHECK(err[0], "step %d: check failed silently", k);
  }
  lesson_free(ls);
  check_folder();
  return 0;
}
