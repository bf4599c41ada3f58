/* fuzz.h: what the harnesses of tests/fuzz share.
 *
 * Each harness defines LLVMFuzzerTestOneInput and nothing else global. It is linked two
 * ways: with libFuzzer (./configure --enable-fuzz; `make fuzz-smoke` or run it by hand on
 * tests/fuzz/corpus/NAME), and in every build with replay.c, whose main() feeds it each file
 * of its corpus, so `make check` exercises the corpora (and the regression inputs kept
 * there) through the same entry point.
 *
 * A broken property is reported by FUZZ_CHECK, which prints it and aborts: libFuzzer keeps
 * the input as a crash, the replay run fails on the file it names.
 */
#ifndef NS_FUZZ_H
#define NS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                                      \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: property broken: %s: ", __FILE__, __LINE__, #cond);                  \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fputc('\n', stderr);                                                                         \
      abort();                                                                                     \
    }                                                                                              \
  } while (0)

/* Makes a scratch folder named NAME.XXXXXX into dir (size n, at least 64): in /dev/shm
 * when it is there (a tmpfs: the files the harnesses write and read back on every input
 * never reach a disk, which took a tenth of fuzz_set's time on ext4), else in $TMPDIR or
 * /tmp. Aborts when none can be made. */
static inline void fuzz_scratch(char *dir, size_t n, const char *name) {
  struct stat st;
  const char *t = getenv("TMPDIR");
  const char *base[] = {"/dev/shm", t && *t ? t : "/tmp", "/tmp"};
  for (size_t i = 0; i < sizeof base / sizeof *base; i++) {
    if (stat(base[i], &st) != 0 || !S_ISDIR(st.st_mode) || access(base[i], W_OK) != 0) continue;
    if ((size_t)snprintf(dir, n, "%s/%s.XXXXXX", base[i], name) < n && mkdtemp(dir)) return;
  }
  FUZZ_CHECK(0, "cannot make a scratch folder for %s", name);
}

#endif
