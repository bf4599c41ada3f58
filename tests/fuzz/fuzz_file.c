/* fuzz_file.c: the tensor file loader (src/explore/file.c) on arbitrary bytes. The first
 * byte picks the name (.npy, .csv, upper case, no extension, a folder), the rest is the
 * content. ns_file_load must return a tensor or refuse with a message; an accepted tensor
 * saved by ns_file_save (atomically, in the same format) loads back equal bit for bit. */
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "explore/file.h"
#include "fuzz.h"

static char dir[64];

static void cleanup(void) {
  static const char *const names[] = {"a.npy", "b.csv", "C.NPY", "d.Csv", "e.txt", "f", "g.npy"};
  char p[128];
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    snprintf(p, sizeof p, "%s/%s", dir, names[i]);
    unlink(p);
    rmdir(p);
  }
  rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *const names[] = {"a.npy", "b.csv", "C.NPY", "d.Csv", "e.txt", "f", "g.npy"};
  if (!dir[0]) {
    fuzz_scratch(dir, sizeof dir, "nsfuzz");
    atexit(cleanup);
  }
  if (size < 1) return 0;
  const char *name = names[data[0] % 7];
  char path[128];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  if (data[0] % 7 == 6) {
    mkdir(path, 0700); /* a folder named like a tensor file */
  } else {
    FILE *f = fopen(path, "wb");
    FUZZ_CHECK(f != NULL, "cannot write %s", path);
    FUZZ_CHECK(fwrite(data + 1, 1, size - 1, f) == size - 1, "short write");
    fclose(f);
  }
  char err[NS_ERRLEN] = "";
  ns_tensor *t = ns_file_load(path, err);
  if (!t) {
    FUZZ_CHECK(err[0] != '\0', "a refusal without a message");
    return 0;
  }
  FUZZ_CHECK(ns_file_kind_of(path) != NS_FILE_UNKNOWN, "%s loaded", name);
  err[0] = '\0';
  FUZZ_CHECK(ns_file_save(path, t, err) == 0, "cannot save what loaded: %s", err);
  ns_tensor *u = ns_file_load(path, err);
  FUZZ_CHECK(u != NULL, "cannot load what was saved: %s", err);
  FUZZ_CHECK(u->dtype == t->dtype && u->n == t->n && u->rank == t->rank &&
                 memcmp(u->shape, t->shape, sizeof t->shape) == 0,
             "shape or dtype changed");
  for (size_t i = 0; i < t->n; i++) {
    double a = ns_tensor_get(t, i), b = ns_tensor_get(u, i);
    FUZZ_CHECK((isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0, "element %zu changed", i);
  }
  ns_tensor_free(u);
  ns_tensor_free(t);
  return 0;
}
