/* safetensors.h: the safetensors format (huggingface/safetensors), parsed from memory.
 *
 * A file is an 8-byte little-endian header length N, N bytes of JSON (an object whose
 * keys are tensor names, each {"dtype": "F32", "shape": [2, 3], "data_offsets": [b, e]},
 * plus an optional "__metadata__" object of strings), then the data section. Offsets are
 * relative to the data section. The JSON is parsed by hand and strictly: every length,
 * shape product and offset is checked against the file size before anything is
 * allocated from it; tensors must not overlap and must cover the data section exactly
 * (as the reference implementation requires), names must be unique.
 *
 * The index can be built from the first bytes of a file only (header_len + 8 of them),
 * with the file's full size given separately, so a loader can read the header of a file
 * larger than memory and then map or read the data it needs.
 *
 * Ownership: ns_st_parse fills an index the caller frees with ns_st_free (safe on a
 * zeroed index); ns_st_tensor returns a tensor the caller frees with ns_tensor_free.
 *
 *   ns_st_index ix = {0};
 *   if (ns_st_parse(buf, len, len, &ix, err) == 0) {
 *     int k = ns_st_find(&ix, "bn.running_mean");
 *     ns_tensor *t = k >= 0 ? ns_st_tensor(&ix, k, buf, len, err) : NULL;
 *   }
 *   ns_st_free(&ix);
 */
#ifndef NS_SAFETENSORS_H
#define NS_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"

/* Header lengths above this are refused (the reference implementation's own limit). */
#define NS_ST_MAX_HEADER ((uint64_t)100000000)
/* Shapes of more dimensions than this are refused when parsing (tensors of rank > 4 are
 * listed but cannot be loaded). */
#define NS_ST_MAXRANK 8

/* The dtypes of the format, in this order; only F16, BF16, F32 and F64 load. */
typedef enum {
  NS_ST_BOOL = 0,
  NS_ST_U8,
  NS_ST_I8,
  NS_ST_I16,
  NS_ST_U16,
  NS_ST_F16,
  NS_ST_BF16,
  NS_ST_I32,
  NS_ST_U32,
  NS_ST_F32,
  NS_ST_F64,
  NS_ST_I64,
  NS_ST_U64,
  NS_ST_F8_E4M3,
  NS_ST_F8_E5M2,
  NS_ST_DTYPE_COUNT
} ns_st_dtype;
/* "BOOL", "U8", ..., "F8_E5M2", NULL (the format's spelling, ns_st_dtype order). */
extern const char *const ns_st_dtype_names[];
/* Bytes per element of a format dtype. */
size_t ns_st_dtype_size(ns_st_dtype d);
/* The storage dtype a format dtype loads as: 0 with *out set for F16, BF16, F32, F64;
 * -1 otherwise. */
int ns_st_dtype_storage(ns_st_dtype d, ns_dtype *out);

typedef struct {
  char *name; /* NUL-terminated UTF-8 (a name with a NUL byte is refused) */
  ns_st_dtype dtype;
  int rank; /* 0..NS_ST_MAXRANK */
  size_t shape[NS_ST_MAXRANK];
  size_t n;            /* product of the shape (1 for rank 0) */
  uint64_t begin, end; /* byte offsets inside the data section, end - begin = n * size */
} ns_st_entry;

typedef struct {
  uint64_t header_len; /* N */
  uint64_t data_start; /* 8 + N: where offsets count from in the file */
  uint64_t data_len;   /* file size - data_start */
  size_t ntensors;
  ns_st_entry *t; /* ntensors entries, in the order of the header */
} ns_st_index;

/* Header length from the first 8 bytes (len >= 8). 0, or -1 with err (too short, absurd
 * length, or a length beyond file_size). */
int ns_st_header_len(const unsigned char *buf, size_t len, uint64_t file_size, uint64_t *hlen,
                     char *err);
/* Parses the header in buf[0..len) (at least 8 + header length bytes of the file; the
 * data itself need not be there) of a file of file_size bytes into ix. 0, or -1 with err
 * naming what was wrong (and ix left empty). */
int ns_st_parse(const unsigned char *buf, size_t len, uint64_t file_size, ns_st_index *ix,
                char *err);
void ns_st_free(ns_st_index *ix);
/* The entry named name, or -1. */
int ns_st_find(const ns_st_index *ix, const char *name);
/* Whether entry k can load as a tensor (a float dtype, rank 1..4, no zero dimension):
 * 0, or -1 with err saying why not. */
int ns_st_loadable(const ns_st_index *ix, size_t k, char *err);
/* Entry k as a tensor of its own dtype; file[0..len) holds the whole file. NULL with err. */
ns_tensor *ns_st_tensor(const ns_st_index *ix, size_t k, const unsigned char *file, size_t len,
                        char *err);
/* Writes tensors t[0..n) named names[0..n) as one safetensors file (F64, F32, F16, BF16,
 * keys in the given order, no metadata). Returns a malloc'd buffer and its length, or
 * NULL with err. */
unsigned char *ns_st_serialize(const ns_tensor *const *t, const char *const *names, size_t n,
                               size_t *outlen, char *err);

#endif
