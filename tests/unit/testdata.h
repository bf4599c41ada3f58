/* testdata.h: finding and reading the fixtures under tests/data from a C unit test.
 *
 * The folder comes from $top_srcdir (set by the test harness) or, when a test is run by
 * hand, from this header's own path (__FILE__ ends in tests/unit/testdata.h).
 *
 *   size_t len;
 *   unsigned char *buf = test_slurp(test_data_path("npy/f8.npy"), &len);  // free()
 */
#ifndef NS_TESTDATA_H
#define NS_TESTDATA_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* tests/data/<rel> (a static buffer, overwritten by the next call). */
static inline char *test_data_path(const char *rel) {
  static char path[4096];
  const char *top = getenv("top_srcdir");
  if (top && *top) {
    snprintf(path, sizeof path, "%s/tests/data/%s", top, rel);
  } else {
    const char *me = __FILE__, *suffix = "tests/unit/testdata.h";
    size_t n = strlen(me), k = strlen(suffix);
    size_t pre = (n >= k && strcmp(me + n - k, suffix) == 0) ? n - k : 0;
    snprintf(path, sizeof path, "%.*stests/data/%s", (int)pre, me, rel);
  }
  return path;
}

/* The whole file, NUL-terminated (the NUL not counted in *len); NULL if unreadable. */
static inline unsigned char *test_slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0, got;
  unsigned char *buf = malloc(cap + 1);
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      unsigned char *nb = realloc(buf, (cap *= 2) + 1);
      if (!nb) free(buf);
      buf = nb;
    }
  }
  fclose(f);
  if (buf) buf[n] = '\0';
  if (len) *len = n;
  return buf;
}

#endif
