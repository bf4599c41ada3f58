/* fuzz_safetensors.c: arbitrary bytes as a .safetensors file. ns_st_parse must build an
 * index or refuse with a message, and must decide the same from the header alone (the
 * first 8 + header length bytes, the file size given apart) as from the whole file. In an
 * accepted index every entry lies inside the data section with end - begin = n * size.
 * Each loadable entry must load as a tensor of its shape; the loadable ones written back
 * with ns_st_serialize must parse and load again to the same names, shapes and bits. */
#include <string.h>

#include "core/safetensors.h"
#include "fuzz.h"

#define FUZZ_ST_MAXT 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char err[NS_ERRLEN] = "";
  ns_st_index ix = {0};
  int rc = ns_st_parse(data, size, size, &ix, err);
  /* the same decision from the header bytes only */
  uint64_t hlen = 0;
  char err2[NS_ERRLEN] = "";
  if (ns_st_header_len(data, size, size, &hlen, err2) == 0) {
    ns_st_index hx = {0};
    int rc2 = ns_st_parse(data, (size_t)(8 + hlen), size, &hx, err2);
    FUZZ_CHECK(rc2 == rc, "whole file %d (%s), header only %d (%s)", rc, err, rc2, err2);
    FUZZ_CHECK(rc || hx.ntensors == ix.ntensors, "a different index from the header alone");
    ns_st_free(&hx);
  } else {
    FUZZ_CHECK(rc != 0, "an index from a file whose header length is refused: %s", err2);
  }
  if (rc) {
    FUZZ_CHECK(err[0] != '\0', "a refusal without a message");
    FUZZ_CHECK(ix.ntensors == 0 && ix.t == NULL, "a refusal left an index behind");
    return 0;
  }
  FUZZ_CHECK(ix.data_start == 8 + ix.header_len && ix.data_start + ix.data_len == size,
             "data section %llu + %llu in a file of %zu bytes", (unsigned long long)ix.data_start,
             (unsigned long long)ix.data_len, size);
  const ns_tensor *keep[FUZZ_ST_MAXT];
  const char *names[FUZZ_ST_MAXT];
  size_t nkeep = 0;
  for (size_t k = 0; k < ix.ntensors; k++) {
    const ns_st_entry *e = &ix.t[k];
    FUZZ_CHECK(e->begin <= e->end && e->end <= ix.data_len, "entry %zu outside the data", k);
    FUZZ_CHECK(e->end - e->begin == (uint64_t)e->n * ns_st_dtype_size(e->dtype),
               "entry %zu: %llu bytes for %zu elements", k, (unsigned long long)(e->end - e->begin),
               e->n);
    FUZZ_CHECK(ns_st_find(&ix, e->name) == (int)k, "entry %zu not found by its name", k);
    if (ns_st_loadable(&ix, k, err)) continue;
    ns_tensor *t = ns_st_tensor(&ix, k, data, size, err);
    if (!t) { /* a loadable entry may still be refused, by the element cap or memory */
      FUZZ_CHECK(err[0] != '\0', "a load refused without a message");
      continue;
    }
    FUZZ_CHECK(e->rank == 0
                   ? t->rank == 1 && t->shape[0] == 1 && t->n == 1 /* a 0-d entry */
                   : t->rank == e->rank && t->n == e->n &&
                         memcmp(t->shape, e->shape, (size_t)t->rank * sizeof t->shape[0]) == 0,
               "entry %zu loads with another shape", k);
    if (nkeep < FUZZ_ST_MAXT) {
      keep[nkeep] = t;
      names[nkeep++] = e->name;
    } else {
      ns_tensor_free(t);
    }
  }
  if (nkeep) {
    size_t len = 0;
    unsigned char *buf = ns_st_serialize(keep, names, nkeep, &len, err);
    FUZZ_CHECK(buf != NULL, "cannot write loaded tensors back: %s", err);
    ns_st_index jx = {0};
    FUZZ_CHECK(ns_st_parse(buf, len, len, &jx, err) == 0, "cannot parse what was written: %s", err);
    FUZZ_CHECK(jx.ntensors == nkeep, "%zu tensors written, %zu read", nkeep, jx.ntensors);
    for (size_t k = 0; k < nkeep; k++) {
      int j = ns_st_find(&jx, names[k]);
      FUZZ_CHECK(j >= 0, "tensor \"%s\" lost in the round trip", names[k]);
      ns_tensor *u = ns_st_tensor(&jx, (size_t)j, buf, len, err);
      FUZZ_CHECK(u != NULL, "cannot load \"%s\" back: %s", names[k], err);
      FUZZ_CHECK(u->dtype == keep[k]->dtype && u->rank == keep[k]->rank &&
                     memcmp(u->shape, keep[k]->shape, sizeof u->shape) == 0,
                 "\"%s\": dtype or shape changed in the round trip", names[k]);
      FUZZ_CHECK(memcmp(u->data, keep[k]->data, u->n * ns_dtype_size(u->dtype)) == 0,
                 "\"%s\": data changed in the round trip", names[k]);
      ns_tensor_free(u);
    }
    ns_st_free(&jx);
    free(buf);
  }
  for (size_t k = 0; k < nkeep; k++) ns_tensor_free((ns_tensor *)keep[k]);
  ns_st_free(&ix);
  return 0;
}
