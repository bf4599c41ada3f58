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

#endif
