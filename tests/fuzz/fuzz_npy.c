/* fuzz_npy.c: arbitrary bytes as a .npy file. ns_npy_parse must return a tensor or refuse
 * with a message; an accepted file must serialize and parse back to the same shape, dtype
 * and bits. */
#include <string.h>

#include "core/npy.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[NS_ERRLEN] = "";
  ns_tensor *t = ns_npy_parse(data, size, err);
  if (!t) {
    FUZZ_CHECK(err[0] != '\0', "a refusal without a message");
    return 0;
  }
  FUZZ_CHECK(t->rank >= 1 && t->rank <= NS_MAXRANK && t->n >= 1, "rank %d, n %zu", t->rank, t->n);
  size_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= t->shape[i];
  FUZZ_CHECK(n == t->n, "shape product %zu, n %zu", n, t->n);
  size_t len = 0;
  unsigned char *buf = ns_npy_serialize(t, &len, err);
  FUZZ_CHECK(buf != NULL, "cannot serialize an accepted tensor: %s", err);
  ns_tensor *u = ns_npy_parse(buf, len, err);
  FUZZ_CHECK(u != NULL, "cannot parse what was serialized: %s", err);
  FUZZ_CHECK(u->rank == t->rank && u->dtype == t->dtype && u->n == t->n &&
                 memcmp(u->shape, t->shape, sizeof t->shape) == 0,
             "shape or dtype changed in the round trip");
  FUZZ_CHECK(memcmp(u->data, t->data, t->n * ns_dtype_size(t->dtype)) == 0,
             "data changed in the round trip");
  ns_tensor_free(u);
  free(buf);
  ns_tensor_free(t);
  return 0;
}
