/* npy.h: the .npy format (versions 1.0, 2.0, 3.0 read; 1.0 written, 2.0 when the header
 * needs it), parsed from and written to memory buffers: the core does no file I/O; callers
 * read or write the bytes. (CSV is csv.h; included here for the callers of both.)
 *
 * Reading keeps the file's float dtype ('<f2' -> fp16, '<f4' -> fp32, '<f8' -> fp64);
 * big-endian floats and integer/bool arrays are converted (ints to fp64). Fortran order,
 * object/structured/complex arrays, truncated data, bad magic, rank 0 or > 4 and
 * absurd header lengths or shapes are refused with a message naming what was wrong.
 *
 *   ns_tensor *t = ns_npy_parse(bytes, len, err);      // caller frees with ns_tensor_free
 *   size_t outlen; unsigned char *buf = ns_npy_serialize(t, &outlen, err);  // free()
 */
#ifndef NS_NPY_H
#define NS_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "core/csv.h"
#include "core/tensor.h"

ns_tensor *ns_npy_parse(const unsigned char *buf, size_t len, char *err);

/* bf16: '<V2' arrays (ml_dtypes' bfloat16 as numpy saves it) load as bf16; with this
 * flag, '<u2' (uint16) arrays are read as bf16 bit patterns too (torch's
 * t.view(torch.int16).numpy().view(numpy.uint16) convention). */
#define NS_NPY_U2_BF16 1u
ns_tensor *ns_npy_parse_flags(const unsigned char *buf, size_t len, unsigned flags, char *err);

/* What the header says, for readers that fetch the data themselves (a file larger than
 * memory): the data of n elements of elem_size bytes starts at data_offset. */
typedef enum { NS_NPY_FLOAT, NS_NPY_INT, NS_NPY_UINT, NS_NPY_BOOL } ns_npy_kind;
typedef struct {
  ns_dtype dtype; /* what ns_npy_parse would store */
  int rank;
  size_t shape[NS_MAXRANK];
  size_t n;
  size_t data_offset;
  size_t elem_size;
  int big; /* most significant byte first */
  ns_npy_kind elem_kind;
} ns_npy_info;
/* Parses the header from the first len bytes of a file of file_size bytes (the data
 * need not be in buf, but must fit in file_size). 0, or -1 with err. */
int ns_npy_header(const unsigned char *buf, size_t len, uint64_t file_size, unsigned flags,
                  ns_npy_info *info, char *err);
/* The value of the element whose bytes start at p, exactly. */
double ns_npy_value(const ns_npy_info *info, const unsigned char *p);
/* 1 if that value is exact as a double, 0 for an 8-byte integer beyond 2^53 that a double
 * would round (such an element is refused on loading, never rounded). */
int ns_npy_value_exact(const ns_npy_info *info, const unsigned char *p);
/* The wording of that refusal, for element i (0-based) of a tensor. */
void ns_npy_inexact_error(const ns_npy_info *info, const unsigned char *p, size_t i, char *err);
unsigned char *ns_npy_serialize(const ns_tensor *t, size_t *outlen, char *err);

#endif
