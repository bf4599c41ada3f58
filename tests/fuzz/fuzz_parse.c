/* fuzz_parse.c: feeds arbitrary bytes to ns_npy_parse and ns_csv_parse. Whatever comes
 * in, each must either return a tensor or refuse with a message, never crash, read out of
 * bounds or leak; an accepted .npy must survive serialize -> parse unchanged.
 *
 * Two ways to run it:
 * - under `make check` (built as tests/fuzz/fuzz_parse): a deterministic mutation run over
 *   the numpy fixtures in tests/data/npy/ and a few CSV texts; most useful in a
 *   --enable-sanitizers build, where ASan/UBSan turn any memory error into a failure;
 * - with libFuzzer, for open-ended fuzzing:
 *     clang -g -O1 -fsanitize=fuzzer,address,undefined -DNS_LIBFUZZER -I src \
 *       tests/fuzz/fuzz_parse.c src/core/npy.c src/core/tensor.c src/core/dtype.c -lm \
 *       -o fuzz_parse && ./fuzz_parse tests/data/npy/
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/npy.h"
#include "core/tensor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fuzz_failures;

/* libFuzzer learns of a failure only by a crash; the standalone run counts them. */
static void fail(void) {
#ifdef NS_LIBFUZZER
  abort();
#endif
  fuzz_failures++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[NS_ERRLEN];
  err[0] = '\0';
  ns_tensor *t = ns_npy_parse(data, size, err);
  if (!t && err[0] == '\0') fail(); /* a refusal must say why */
  if (t) {
    size_t len = 0;
    unsigned char *buf = ns_npy_serialize(t, &len, err);
    ns_tensor *u = buf ? ns_npy_parse(buf, len, err) : NULL;
    size_t isz = ns_dtype_size(t->dtype);
    if (!u || u->n != t->n || u->dtype != t->dtype || memcmp(u->data, t->data, t->n * isz) != 0)
      fail();
    ns_tensor_free(u);
    free(buf);
    ns_tensor_free(t);
  }
  err[0] = '\0';
  t = ns_csv_parse((const char *)data, size, err);
  if (!t && err[0] == '\0') fail();
  if (t) {
    char *text = ns_csv_serialize(t, err);
    if (!text) fail();
    free(text);
    ns_tensor_free(t);
  }
  return 0;
}

#ifndef NS_LIBFUZZER
static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

static uint64_t next(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* One random edit of buf[0..*len) (capacity cap): flip a bit, set a byte to an
 * interesting value, put a digit or punctuation into the header, cut, or duplicate. */
static void mutate(unsigned char *buf, size_t *len, size_t cap) {
  static const unsigned char interesting[] = {0,   1,   0x7f, 0x80, 0xff, '(', ')', ',', ':',
                                              '{', '}', '\'', '"',  ' ',  '9', '0', '-', '\n',
                                              '#', 'e', '.',  'T',  'F',  '<', '>', '|'};
  if (*len == 0) {
    buf[0] = (unsigned char)next();
    *len = 1;
    return;
  }
  size_t pos = (size_t)(next() % *len);
  switch (next() % 6) {
  case 0:
    buf[pos] ^= (unsigned char)(1u << (next() % 8));
    break;
  case 1:
  case 2:
    buf[pos] = interesting[next() % sizeof interesting];
    break;
  case 3: /* truncate */
    *len = pos;
    break;
  case 4: /* insert a byte */
    if (*len < cap) {
      memmove(buf + pos + 1, buf + pos, *len - pos);
      buf[pos] = interesting[next() % sizeof interesting];
      (*len)++;
    }
    break;
  default: /* delete a byte */
    memmove(buf + pos, buf + pos + 1, *len - pos - 1);
    (*len)--;
    break;
  }
}

static const char *data_dir(void) {
  static char path[4096];
  const char *top = getenv("top_srcdir");
  if (top && *top) {
    snprintf(path, sizeof path, "%s/tests/data/npy", top);
  } else {
    const char *me = __FILE__, *suffix = "tests/fuzz/fuzz_parse.c";
    size_t n = strlen(me), k = strlen(suffix);
    size_t pre = (n >= k && strcmp(me + n - k, suffix) == 0) ? n - k : 0;
    snprintf(path, sizeof path, "%.*stests/data/npy", (int)pre, me);
  }
  return path;
}

#define MAXSEEDS 64
#define CAP 4096

int main(int argc, char **argv) {
  static unsigned char seeds[MAXSEEDS][CAP];
  size_t seedlen[MAXSEEDS], nseeds = 0;
  const char *csv[] = {"a,b\n1,2\n3,4\n", "# c\n1.5e3, -2\r\n nan,inf\n", "1\n2\n3", "x\n",
                       "1,2,3\n4,5\n"};
  for (size_t i = 0; i < sizeof csv / sizeof csv[0]; i++) {
    seedlen[nseeds] = strlen(csv[i]);
    memcpy(seeds[nseeds++], csv[i], strlen(csv[i]));
  }
  const char *dir = data_dir();
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d)) && nseeds < MAXSEEDS) {
    size_t nl = strlen(e->d_name);
    if (nl < 4 || strcmp(e->d_name + nl - 4, ".npy") != 0) continue;
    char path[4600];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    FILE *f = fopen(path, "rb");
    if (!f) continue;
    seedlen[nseeds] = fread(seeds[nseeds], 1, CAP, f);
    fclose(f);
    nseeds++;
  }
  if (d) closedir(d);
  long iters = argc > 1 ? strtol(argv[1], NULL, 10) : 30000;
  if (nseeds < 10) {
    printf("not ok 1 - seed corpus: only %zu inputs found (fixtures in %s?)\n1..1\n", nseeds, dir);
    return 1;
  }
  static unsigned char buf[CAP];
  for (long it = 0; it < iters; it++) {
    size_t s = (size_t)(next() % nseeds), len = seedlen[s];
    memcpy(buf, seeds[s], len);
    int edits = 1 + (int)(next() % 4);
    for (int k = 0; k < edits; k++) mutate(buf, &len, CAP);
    /* Exact-size heap copy, so ASan catches a read even one byte past the end. */
    unsigned char *exact = malloc(len ? len : 1);
    if (len) memcpy(exact, buf, len);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
  }
  printf("%sok 1 - %ld mutated inputs from %zu seeds: parsed or refused with a message, npy "
         "round trips intact (%d failures)\n1..1\n",
         fuzz_failures ? "not " : "", iters, nseeds, fuzz_failures);
  return fuzz_failures ? 1 : 0;
}
#endif
