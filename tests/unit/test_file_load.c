/* test_file_load.c: a .npy file loaded by ns_file_load_named, whose natively stored data is
 * read straight into the tensor, against ns_npy_parse_flags on the same bytes, the element
 * by element path: the same dtype, shape and bits, for every dtype and for the layouts that
 * take the slow path (big-endian, integers), with NaN payloads, signed zeros, infinities
 * and subnormals among random bit patterns; and a truncated file refused. */
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/dtype.h"
#include "core/npy.h"
#include "explore/file.h"
#include "tap.h"

/* A version 1 .npy of n elements of descr, data bits from a xorshift stream (the first
 * few the special values of a float of that size), header padded to 64 bytes. */
static unsigned char *npy_bytes(const char *descr, size_t elem, size_t n, size_t *len) {
  char dict[128];
  int w = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%zu,), }",
                   descr, n);
  size_t hl = 10 + (size_t)w + 1, pad = (64 - hl % 64) % 64;
  size_t hlen = (size_t)w + pad + 1;
  *len = 10 + hlen + n * elem;
  unsigned char *b = malloc(*len);
  memcpy(b, "\x93NUMPY\x01\x00", 8);
  b[8] = (unsigned char)(hlen & 255);
  b[9] = (unsigned char)(hlen >> 8);
  memcpy(b + 10, dict, (size_t)w);
  memset(b + 10 + w, ' ', pad);
  b[10 + hlen - 1] = '\n';
  unsigned char *d = b + 10 + hlen;
  uint64_t q = 0x9e3779b97f4a7c15u;
  for (size_t i = 0; i < n * elem; i++) {
    q ^= q << 13, q ^= q >> 7, q ^= q << 17;
    d[i] = (unsigned char)q;
  }
  /* -0, +inf, a quiet NaN with a payload, the smallest subnormal (little-endian bytes) */
  static const unsigned char s2[][2] = {{0, 0x80}, {0, 0x7c}, {0x01, 0x7e}, {1, 0}};
  static const unsigned char s4[][4] = {
      {0, 0, 0, 0x80}, {0, 0, 0x80, 0x7f}, {5, 0, 0xc0, 0x7f}, {1, 0, 0, 0}};
  static const unsigned char s8[][8] = {{0, 0, 0, 0, 0, 0, 0, 0x80},
                                        {0, 0, 0, 0, 0, 0, 0xf0, 0x7f},
                                        {7, 0, 0, 0, 0, 0, 0xf8, 0x7f},
                                        {1, 0, 0, 0, 0, 0, 0, 0}};
  for (size_t k = 0; k < 4 && k < n; k++)
    memcpy(d + k * elem, elem == 2 ? s2[k] : elem == 4 ? s4[k] : s8[k], elem);
  return b;
}

static void check(const char *descr, size_t elem, unsigned flags, const char *path) {
  size_t n = 100003, len;
  unsigned char *b = npy_bytes(descr, elem, n, &len);
  FILE *f = fopen(path, "wb");
  int wrote = f && fwrite(b, 1, len, f) == len;
  if (f) fclose(f);
  char e1[NS_ERRLEN] = "", e2[NS_ERRLEN] = "";
  ns_tensor *fast = wrote ? ns_file_load_named(path, NULL, flags, e1) : NULL;
  ns_tensor *ref = ns_npy_parse_flags(b, len, (flags & NS_FILE_U2_BF16) ? NS_NPY_U2_BF16 : 0, e2);
  int same = fast && ref && fast->dtype == ref->dtype && fast->rank == ref->rank &&
             fast->n == ref->n &&
             memcmp(fast->data, ref->data, ref->n * ns_dtype_size(ref->dtype)) == 0;
  tap_ok(same, "%s%s: the file's load and the parse give the same bits%s%s%s%s", descr,
         flags ? " (as bf16)" : "", e1[0] ? ": " : "", e1, e2[0] ? ": " : "", e2);
  ns_tensor_free(fast);
  ns_tensor_free(ref);
  if (wrote && truncate(path, (off_t)(len - 1)) == 0) {
    char e[NS_ERRLEN] = "";
    ns_tensor *t = ns_file_load_named(path, NULL, flags, e);
    tap_ok(!t && e[0], "  a byte short: refused (%s)", e);
    ns_tensor_free(t);
  }
  free(b);
}

int main(void) {
  char path[] = "/tmp/ns-file-load-XXXXXX.npy";
  int fd = mkstemps(path, 4);
  if (fd < 0) {
    tap_ok(0, "a scratch file");
    return tap_done();
  }
  close(fd);
  check("<f2", 2, 0, path);
  check("<f4", 4, 0, path);
  check("<f8", 8, 0, path);
  check("<u2", 2, NS_FILE_U2_BF16, path);
  check(">f4", 4, 0, path);
  check(">f8", 8, 0, path);
  check("<i4", 4, 0, path);
  check("|u1", 1, 0, path);
  unlink(path);
  return tap_done();
}
