/* replay.c: main() of a harness in the ordinary build: runs LLVMFuzzerTestOneInput on every
 * file of the folders (or files) given, by default tests/fuzz/corpus/FUZZ_NAME under
 * $top_srcdir and, when FUZZ_SEEDS_DIR names one (lessons: the project's own lessons are
 * seeds, not copied into the corpus), that folder of the tree too; it prints one TAP line
 * per input. Each input is passed in a heap block of
 * exactly its size, so a sanitizer build sees a read one byte past the end. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

#ifndef FUZZ_NAME
#error "FUZZ_NAME names the corpus folder"
#endif

static int count;

static unsigned char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  unsigned char *buf = malloc(cap);
  for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
    n += got;
    if (n == cap) {
      unsigned char *b = realloc(buf, cap *= 2);
      if (!b) free(buf);
      buf = b;
    }
  }
  fclose(f);
  if (!buf) return NULL;
  unsigned char *exact = malloc(n ? n : 1); /* exactly n bytes: no slack to read into */
  if (exact) memcpy(exact, buf, n);
  free(buf);
  *len = n;
  return exact;
}

static int run_file(const char *path) {
  size_t len = 0;
  unsigned char *data = slurp(path, &len);
  if (!data) {
    printf("not ok %d - cannot read %s\n", ++count, path);
    return 1;
  }
  fflush(stdout);
  LLVMFuzzerTestOneInput(data, len);
  free(data);
  printf("ok %d - %s (%zu bytes)\n", ++count, path, len);
  return 0;
}

static int cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files of a folder in name order (so a failure reproduces in the same order). */
static int run_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) {
    printf("not ok %d - cannot open %s\n", ++count, dir);
    return 1;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    if (n == cap) {
      char **nn = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
      if (!nn) break;
      names = nn;
    }
    size_t l = strlen(dir) + strlen(e->d_name) + 2;
    if (!(names[n] = malloc(l))) break;
    snprintf(names[n++], l, "%s/%s", dir, e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, cmp);
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    bad |= run_file(names[i]);
    free(names[i]);
  }
  free(names);
  if (n == 0) {
    printf("not ok %d - %s holds no inputs\n", ++count, dir);
    bad = 1;
  }
  return bad;
}

int main(int argc, char **argv) {
  int bad = 0;
  if (argc > 1) {
    for (int i = 1; i < argc; i++) {
      struct stat st;
      bad |= stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode) ? run_dir(argv[i]) : run_file(argv[i]);
    }
  } else {
    const char *top = getenv("top_srcdir");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/%s", top && *top ? top : ".", FUZZ_NAME);
    bad = run_dir(dir);
#ifdef FUZZ_SEEDS_DIR
    snprintf(dir, sizeof dir, "%s/%s", top && *top ? top : ".", FUZZ_SEEDS_DIR);
    bad |= run_dir(dir);
#endif
  }
  printf("1..%d\n", count);
  return bad;
}
