/* fuzz_csv.c: arbitrary bytes as CSV text. ns_csv_parse must return a rank-2 fp64 tensor
 * or refuse with a message; an accepted text must serialize and parse back to the same
 * shape and values (NaN stays NaN; every other value bit for bit). */
#include <math.h>
#include <string.h>

#include "core/npy.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[NS_ERRLEN] = "";
  ns_tensor *t = ns_csv_parse((const char *)data, size, err);
  if (!t) {
    FUZZ_CHECK(err[0] != '\0', "a refusal without a message");
    return 0;
  }
  FUZZ_CHECK(t->rank == 2 && t->dtype == NS_FP64 && t->n == t->shape[0] * t->shape[1],
             "rank %d dtype %d", t->rank, (int)t->dtype);
  char *text = ns_csv_serialize(t, err);
  FUZZ_CHECK(text != NULL, "cannot serialize an accepted tensor: %s", err);
  ns_tensor *u = ns_csv_parse(text, strlen(text), err);
  FUZZ_CHECK(u != NULL, "cannot parse what was serialized: %s", err);
  FUZZ_CHECK(u->shape[0] == t->shape[0] && u->shape[1] == t->shape[1], "shape changed");
  const double *a = t->data, *b = u->data;
  for (size_t i = 0; i < t->n; i++)
    FUZZ_CHECK((isnan(a[i]) && isnan(b[i])) || memcmp(&a[i], &b[i], sizeof a[i]) == 0,
               "value %zu: %.17g became %.17g", i, a[i], b[i]);
  ns_tensor_free(u);
  free(text);
  ns_tensor_free(t);
  return 0;
}
