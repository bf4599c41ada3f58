/* npy.c: the .npy format (numpy/lib/format.py: magic, version, a Python-dict header,
 * then the raw C-order data), to and from memory. (CSV: csv.c.)
 *
 * The reader trusts nothing in the buffer: every length is checked against what is
 * there before it is used, and every refusal says what was wrong. Element bytes are
 * assembled explicitly from the file's byte order, so the host's byte order and the
 * data's alignment in the buffer do not matter. */
#include "core/npy.h"
#include "core/err.h"

#include <ctype.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_MAX_HEADER ((size_t)1 << 20) /* 1 MiB; numpy's own headers are < 200 bytes */
#define NPY_ALIGN 64                     /* data starts at a multiple of this */
#define NPY_MAX_DIMS 32                  /* more than this in a shape is refused outright */

/* ---- header dict ------------------------------------------------------------------ *
 * numpy reads the header with ast.literal_eval and then requires a dict whose keys are
 * exactly 'descr', 'fortran_order' and 'shape' (format.py's _read_array_header), a bool
 * fortran_order and a tuple of ints as the shape. This reader follows the same grammar: a
 * dict literal, Python strings (single or double quotes, the escapes, adjacent strings
 * joined), True/False, and tuples of ints ("()", "(3,)", "(3, 4)", a trailing comma
 * allowed, ints in Python's decimal, 0x, 0o or 0b forms; "(3)" is an int and a list is not a tuple,
 * so both are refused); a key given twice keeps its last value, as a dict literal does; nothing but
 * white space may follow the dict. A descr holding a NUL byte, any other key and any other value
 * are refused. Headers of versions 1.0 and 2.0 may carry Python 2's long suffix ("3L"), which numpy
 * filters out. */

typedef struct {
  const char *p, *end;
  int longs; /* "3L" allowed (versions 1.0 and 2.0) */
} cursor;

static void skip_ws(cursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r' ||
                           *c->p == '\f' || *c->p == '\v'))
    c->p++;
}

static int hexval(int ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

/* One Python string literal (no prefix, not triple-quoted) with its escapes decoded, appended
 * to out (n bytes so far, at most cap - 1: the rest is counted in *n but not stored). 0, or
 * -1 when it is not one (unterminated, a raw newline, a bad \x escape). */
static int parse_one_string(cursor *c, char *out, size_t cap, size_t *n) {
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return -1;
  char q = *c->p++;
  if (c->end - c->p >= 2 && c->p[0] == q && c->p[1] == q) return -1; /* triple quotes */
  while (c->p < c->end && *c->p != q) {
    unsigned ch = (unsigned char)*c->p++;
    if (ch == '\n' || ch == '\r') return -1; /* a single-quoted string ends on its line */
    if (ch == '\\') {
      if (c->p >= c->end) return -1;
      unsigned e = (unsigned char)*c->p++;
      switch (e) {
      case '\n': /* a continued line: nothing */
        continue;
      case '\\':
      case '\'':
      case '"':
        ch = e;
        break;
      case 'a':
        ch = 7;
        break;
      case 'b':
        ch = 8;
        break;
      case 'f':
        ch = 12;
        break;
      case 'n':
        ch = 10;
        break;
      case 'r':
        ch = 13;
        break;
      case 't':
        ch = 9;
        break;
      case 'v':
        ch = 11;
        break;
      case 'x': {
        int h1 = c->p < c->end ? hexval((unsigned char)c->p[0]) : -1;
        int h2 = c->p + 1 < c->end ? hexval((unsigned char)c->p[1]) : -1;
        if (h1 < 0 || h2 < 0) return -1;
        ch = (unsigned)(h1 * 16 + h2);
        c->p += 2;
        break;
      }
      default:
        if (e >= '0' && e <= '7') { /* up to three octal digits */
          ch = e - '0';
          for (int k = 0; k < 2 && c->p < c->end && *c->p >= '0' && *c->p <= '7'; k++)
            ch = ch * 8 + (unsigned)(*c->p++ - '0');
          ch &= 0xFF;
        } else { /* an unknown escape keeps its backslash */
          if (*n + 1 < cap) out[*n] = '\\';
          (*n)++;
          ch = e;
        }
      }
    }
    if (*n + 1 < cap) out[*n] = (char)ch;
    (*n)++;
  }
  if (c->p >= c->end) return -1;
  c->p++; /* closing quote */
  return 0;
}

/* A string value: one literal or several adjacent ones, joined. Its length in *len (NUL
 * bytes included); at most cap - 1 bytes stored, NUL-terminated. */
static int parse_string(cursor *c, char *out, size_t cap, size_t *len) {
  size_t n = 0;
  if (parse_one_string(c, out, cap, &n)) return -1;
  for (;;) {
    const char *save = c->p;
    skip_ws(c);
    if (c->p < c->end && (*c->p == '\'' || *c->p == '"')) {
      if (parse_one_string(c, out, cap, &n)) return -1;
      continue;
    }
    c->p = save;
    break;
  }
  out[n < cap ? n : cap - 1] = '\0';
  if (len) *len = n;
  return 0;
}

/* A shape: a tuple of non-negative decimal ints. Returns the rank or -1. */
static int parse_shape(cursor *c, size_t *dims, char *err) {
  if (c->p < c->end && *c->p == '[') {
    ns_seterr(err, "npy header: 'shape' is a list; numpy writes (and reads) a tuple");
    return -1;
  }
  if (c->p >= c->end || *c->p != '(') {
    ns_seterr(err, "npy header: 'shape' is not a tuple");
    return -1;
  }
  int rank = 0, comma = 0;
  c->p++;
  for (;;) {
    skip_ws(c);
    if (c->p < c->end && *c->p == ')') {
      c->p++;
      if (rank == 1 && !comma) { /* "(3)" is the int 3, not a tuple */
        ns_seterr(err, "npy header: 'shape' is not a tuple (a one-element tuple is (n,))");
        return -1;
      }
      return rank;
    }
    if (c->p < c->end && (*c->p == '-' || *c->p == '+')) {
      ns_seterr(err, "npy header: 'shape' holds something other than non-negative integers");
      return -1;
    }
    if (c->p >= c->end || !isdigit((unsigned char)*c->p)) {
      ns_seterr(err, "npy header: 'shape' holds something other than non-negative integers");
      return -1;
    }
    const char *start = c->p;
    size_t v = 0;
    int nonzero = 0, base = 10;
    if (c->end - c->p >= 2 && c->p[0] == '0' && strchr("xXoObB", c->p[1]) && c->p[1]) {
      base = tolower((unsigned char)c->p[1]) == 'x'   ? 16
             : tolower((unsigned char)c->p[1]) == 'o' ? 8
                                                      : 2;
      c->p += 2; /* Python's 0x, 0o and 0b ints */
      if (c->p < c->end && *c->p == '_') c->p++;
      int any = 0;
      while (c->p < c->end) {
        int d = hexval((unsigned char)*c->p);
        if (*c->p == '_' && any && c->p + 1 < c->end && hexval((unsigned char)c->p[1]) >= 0 &&
            hexval((unsigned char)c->p[1]) < base) {
          c->p++;
          continue;
        }
        if (d < 0 || d >= base) break;
        if (v > (SIZE_MAX - (size_t)d) / (size_t)base) {
          ns_seterr(err, "npy header: a dimension of 'shape' is too large for this machine");
          return -1;
        }
        v = v * (size_t)base + (size_t)d;
        any = 1;
        c->p++;
      }
      if (!any) {
        ns_seterr(err, "npy header: a dimension of 'shape' is not a Python int");
        return -1;
      }
    }
    while (base == 10 && c->p < c->end && (isdigit((unsigned char)*c->p) || *c->p == '_')) {
      if (*c->p == '_') { /* Python's digit groups: one underscore between digits */
        if (c->p + 1 >= c->end || !isdigit((unsigned char)c->p[1])) {
          ns_seterr(err, "npy header: a dimension of 'shape' is not a Python int");
          return -1;
        }
        c->p++;
        continue;
      }
      size_t d = (size_t)(*c->p - '0');
      if (v > (SIZE_MAX - d) / 10) {
        ns_seterr(err, "npy header: a dimension of 'shape' is too large for this machine");
        return -1;
      }
      if (d && !nonzero && c->p > start) { /* "07": leading zeros are a syntax error */
        ns_seterr(err, "npy header: a dimension of 'shape' is not a Python int (leading zero)");
        return -1;
      }
      nonzero |= d != 0;
      v = v * 10 + d;
      c->p++;
    }
    if (c->longs && c->p < c->end && (*c->p == 'L' || *c->p == 'l')) c->p++; /* Python 2 */
    if (c->p < c->end && (isalpha((unsigned char)*c->p) || *c->p == '.')) {
      ns_seterr(err, "npy header: a dimension of 'shape' is not an int");
      return -1;
    }
    if (rank == NPY_MAX_DIMS) {
      ns_seterr(err, "npy header: 'shape' has more than %d dimensions", NPY_MAX_DIMS);
      return -1;
    }
    dims[rank++] = v;
    skip_ws(c);
    comma = 0;
    if (c->p < c->end && *c->p == ',') {
      c->p++;
      comma = 1;
    } else if (c->p >= c->end || *c->p != ')') {
      ns_seterr(err, "npy header: 'shape' is not a well-formed tuple");
      return -1;
    }
  }
}

typedef struct {
  char descr[64];
  int has_descr, has_order, has_shape, fortran;
  int rank;
  size_t dims[NPY_MAX_DIMS];
} npy_header;

static int parse_header(const char *text, size_t len, int longs, npy_header *h, char *err) {
  cursor c = {text, text + len, longs};
  memset(h, 0, sizeof *h);
  skip_ws(&c);
  if (c.p >= c.end || *c.p != '{') {
    ns_seterr(err, "npy header is not a Python dict (it does not start with '{')");
    return -1;
  }
  c.p++;
  for (;;) {
    char key[64];
    size_t klen;
    skip_ws(&c);
    if (c.p < c.end && *c.p == '}') break;
    if (parse_string(&c, key, sizeof key, &klen)) {
      ns_seterr(err, "npy header: expected a quoted key in the dict");
      return -1;
    }
    skip_ws(&c);
    if (c.p >= c.end || *c.p != ':') {
      ns_seterr(err, "npy header: expected ':' after the key '%s'", key);
      return -1;
    }
    c.p++;
    int which = klen != strlen(key)                 ? -1
                : strcmp(key, "descr") == 0         ? 0
                : strcmp(key, "fortran_order") == 0 ? 1
                : strcmp(key, "shape") == 0         ? 2
                                                    : -1;
    if (which < 0) { /* numpy: "Header does not contain the correct keys" */
      ns_seterr(err,
                "npy header has the key '%s': numpy's headers have descr, fortran_order and "
                "shape, and nothing else",
                key);
      return -1;
    }
    skip_ws(&c);
    if (which == 0) {
      if (c.p < c.end && *c.p == '[') {
        ns_seterr(err, "structured arrays (a 'descr' with named fields) are not supported: "
                       "only plain numeric arrays");
        return -1;
      }
      size_t dlen;
      if (parse_string(&c, h->descr, sizeof h->descr, &dlen)) {
        ns_seterr(err, "npy header: 'descr' is not a string");
        return -1;
      }
      if (dlen != strlen(h->descr)) {
        ns_seterr(err, dlen >= sizeof h->descr ? "npy header: 'descr' is too long"
                                               : "npy header: 'descr' holds a NUL byte");
        return -1;
      }
      h->has_descr = 1;
    } else if (which == 1) {
      if ((size_t)(c.end - c.p) >= 4 && strncmp(c.p, "True", 4) == 0) {
        h->fortran = 1;
        c.p += 4;
      } else if ((size_t)(c.end - c.p) >= 5 && strncmp(c.p, "False", 5) == 0) {
        h->fortran = 0;
        c.p += 5;
      } else {
        ns_seterr(err, "npy header: 'fortran_order' is neither True nor False");
        return -1;
      }
      if (c.p < c.end && (isalnum((unsigned char)*c.p) || *c.p == '_')) {
        ns_seterr(err, "npy header: 'fortran_order' is neither True nor False");
        return -1;
      }
      h->has_order = 1;
    } else {
      h->rank = parse_shape(&c, h->dims, err);
      if (h->rank < 0) return -1;
      h->has_shape = 1;
    }
    skip_ws(&c);
    if (c.p < c.end && *c.p == ',') {
      c.p++;
      continue;
    }
    if (c.p < c.end && *c.p == '}') break;
    ns_seterr(err, "npy header: expected ',' or '}' after the value of '%s'", key);
    return -1;
  }
  c.p++; /* the '}' */
  skip_ws(&c);
  if (c.p < c.end) { /* numpy pads with spaces and a newline; literal_eval takes no more */
    ns_seterr(err, "npy header: text after the dict (numpy's header is the dict alone)");
    return -1;
  }
  const char *missing = !h->has_descr   ? "descr"
                        : !h->has_order ? "fortran_order"
                        : !h->has_shape ? "shape"
                                        : NULL;
  if (missing) {
    ns_seterr(err, "npy header has no '%s' entry", missing);
    return -1;
  }
  return 0;
}

/* ---- dtype strings ---------------------------------------------------------------- */

typedef enum { K_FLOAT, K_INT, K_UINT, K_BOOL } elem_kind;

typedef struct {
  elem_kind kind;
  size_t size;
  int big;        /* bytes stored most significant first */
  ns_dtype dtype; /* what the tensor stores */
} elem_type;

static int host_is_big_endian(void) {
  const uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 0;
}

static int parse_descr(const char *d, elem_type *et, char *err) {
  char order = d[0];
  const char *p = d;
  if (order == '<' || order == '>' || order == '|' || order == '=')
    p++;
  else
    order = '=';
  char kind = *p ? p[0] : '\0';
  char *end;
  long size = (kind && isdigit((unsigned char)p[1])) ? strtol(p + 1, &end, 10) : -1;
  int digits_ok = size > 0 && *end == '\0';

  switch (kind) {
  case 'O':
    ns_seterr(err,
              "dtype '%s' is an object array (Python objects, pickled): only numeric arrays can "
              "be loaded",
              d);
    return -1;
  case 'c':
    ns_seterr(err, "dtype '%s' is complex: only real numbers are supported", d);
    return -1;
  case 'S':
  case 'U':
  case 'a':
    ns_seterr(err, "dtype '%s' holds strings: only numeric arrays can be loaded", d);
    return -1;
  case 'V':
    if (strcmp(p, "V2") == 0 && order != '>') { /* ml_dtypes' bfloat16 saves as '<V2' */
      et->kind = K_FLOAT;
      et->size = 2;
      et->dtype = NS_BF16;
      et->big = 0;
      return 0;
    }
    ns_seterr(
        err, "dtype '%s' is a structured or void type: only plain numeric arrays are supported", d);
    return -1;
  case 'M':
  case 'm':
    ns_seterr(err, "dtype '%s' holds dates or time spans: only numeric arrays can be loaded", d);
    return -1;
  default:
    break;
  }
  if (!digits_ok) {
    ns_seterr(err, "dtype '%s' is not supported", d);
    return -1;
  }
  et->size = (size_t)size;
  if (kind == 'f') {
    et->kind = K_FLOAT;
    if (size == 2)
      et->dtype = NS_FP16;
    else if (size == 4)
      et->dtype = NS_FP32;
    else if (size == 8)
      et->dtype = NS_FP64;
    else {
      ns_seterr(err, "dtype '%s' (a %ld-byte float) is not supported: only f2, f4 and f8", d, size);
      return -1;
    }
  } else if (kind == 'i' || kind == 'u') {
    et->kind = kind == 'i' ? K_INT : K_UINT;
    et->dtype = NS_FP64;
    if (size != 1 && size != 2 && size != 4 && size != 8) {
      ns_seterr(err, "dtype '%s' is not a supported integer size", d);
      return -1;
    }
  } else if (kind == 'b' && size == 1) {
    et->kind = K_BOOL;
    et->dtype = NS_FP64;
  } else {
    ns_seterr(err, "dtype '%s' is not supported", d);
    return -1;
  }
  if (order == '|' && size != 1) {
    ns_seterr(err, "dtype '%s' has no byte order but more than one byte per element", d);
    return -1;
  }
  et->big = order == '>' || (order == '=' && host_is_big_endian());
  return 0;
}

/* The size-byte integer at p, in the given byte order. */
static uint64_t load_bits(const unsigned char *p, size_t size, int big) {
  uint64_t v = 0;
  for (size_t k = 0; k < size; k++) v |= (uint64_t)p[big ? size - 1 - k : k] << (8 * k);
  return v;
}

static void store_element(ns_tensor *t, size_t i, uint64_t bits, const elem_type *et) {
  switch (et->kind) {
  case K_FLOAT:
    if (et->size == 2) {
      ((uint16_t *)t->data)[i] = (uint16_t)bits;
    } else if (et->size == 4) {
      uint32_t b = (uint32_t)bits;
      float f;
      memcpy(&f, &b, 4);
      ((float *)t->data)[i] = f;
    } else {
      double v;
      memcpy(&v, &bits, 8);
      ((double *)t->data)[i] = v;
    }
    break;
  case K_INT: {
    /* two's complement of size bytes: negative values as minus their magnitude */
    uint64_t sign = (uint64_t)1 << (8 * et->size - 1), mask = sign | (sign - 1);
    ((double *)t->data)[i] = (bits & sign) ? -(double)((~bits + 1) & mask) : (double)bits;
    break;
  }
  case K_UINT:
    ((double *)t->data)[i] = (double)bits;
    break;
  case K_BOOL:
    ((double *)t->data)[i] = bits ? 1.0 : 0.0;
    break;
  }
}

/* ---- .npy reader ------------------------------------------------------------------ */

/* The header of a .npy file: everything ns_npy_parse checks before the data. */
static int npy_header_info(const unsigned char *buf, size_t len, uint64_t file_size, unsigned flags,
                           ns_npy_info *info, elem_type *et_out, char *err) {
  if (!buf || !info) {
    ns_seterr(err, "no data to parse");
    return -1;
  }
  if (len < NPY_MAGIC_LEN || memcmp(buf, NPY_MAGIC, NPY_MAGIC_LEN) != 0) {
    ns_seterr(err, "not a .npy file: bad magic (it must start with \\x93NUMPY)");
    return -1;
  }
  if (len < 10) {
    ns_seterr(err, "truncated .npy file: %zu bytes, too short for the version and header length",
              len);
    return -1;
  }
  unsigned major = buf[6], minor = buf[7];
  size_t hlen, hstart;
  if (major == 1) {
    hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (len < 12) {
      ns_seterr(err, "truncated .npy file: %zu bytes, too short for a version %u header length",
                len, major);
      return -1;
    }
    hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
    hstart = 12;
  } else {
    ns_seterr(err, ".npy version %u.%u is not supported (1.0, 2.0 and 3.0 are)", major, minor);
    return -1;
  }
  if (hlen > NPY_MAX_HEADER) {
    ns_seterr(err, "npy header length %zu is absurd (more than %zu bytes): corrupt file?", hlen,
              NPY_MAX_HEADER);
    return -1;
  }
  if (hlen > len - hstart) {
    ns_seterr(err,
              "npy header length %zu goes beyond the end of the data (%zu bytes after the "
              "length field): truncated file?",
              hlen, len - hstart);
    return -1;
  }

  npy_header h;
  if (parse_header((const char *)buf + hstart, hlen, major <= 2, &h, err)) return -1;
  elem_type et;
  if ((flags & NS_NPY_U2_BF16) &&
      (strcmp(h.descr, "<u2") == 0 || strcmp(h.descr, "=u2") == 0 || strcmp(h.descr, "u2") == 0)) {
    et.kind = K_FLOAT; /* bf16 bit patterns saved as uint16 */
    et.size = 2;
    et.dtype = NS_BF16;
    et.big = host_is_big_endian() && h.descr[0] != '<';
  } else if (parse_descr(h.descr, &et, err)) {
    return -1;
  }
  if (h.fortran) {
    ns_seterr(err, "Fortran-order arrays are not supported: save a C-order copy "
                   "(numpy.ascontiguousarray) instead");
    return -1;
  }
  char shp[160];
  ns_shape_format(h.rank, h.dims, shp, sizeof shp);
  if (h.rank == 0) { /* a scalar (np.save of num_batches_tracked): one value of shape (1) */
    h.rank = 1;
    h.dims[0] = 1;
  }
  if (h.rank > NS_MAXRANK) {
    ns_seterr(err, "shape %s has rank %d: arrays of rank 1 to %d are supported", shp, h.rank,
              NS_MAXRANK);
    return -1;
  }
  if (ns_shape_check(h.rank, h.dims, err)) return -1;

  size_t n = 1;
  for (int k = 0; k < h.rank; k++) n *= h.dims[k]; /* <= NS_MAXELEMS: checked above */
  size_t need = n * et.size, dstart = hstart + hlen;
  if (need > file_size - dstart) {
    ns_seterr(err,
              "truncated .npy data: shape %s of '%s' needs %zu bytes, only %llu follow the header",
              shp, h.descr, need, (unsigned long long)(file_size - dstart));
    return -1;
  }
  memset(info, 0, sizeof *info);
  info->dtype = et.dtype;
  info->rank = h.rank;
  for (int k = 0; k < NS_MAXRANK; k++) info->shape[k] = k < h.rank ? h.dims[k] : 1;
  info->n = n;
  info->data_offset = dstart;
  info->elem_size = et.size;
  info->big = et.big;
  info->elem_kind = et.kind == K_FLOAT  ? NS_NPY_FLOAT
                    : et.kind == K_INT  ? NS_NPY_INT
                    : et.kind == K_UINT ? NS_NPY_UINT
                                        : NS_NPY_BOOL;
  if (et_out) *et_out = et;
  return 0;
}

int ns_npy_header(const unsigned char *buf, size_t len, uint64_t file_size, unsigned flags,
                  ns_npy_info *info, char *err) {
  if (file_size < len) file_size = len;
  return npy_header_info(buf, len, file_size, flags, info, NULL, err);
}

double ns_npy_value(const ns_npy_info *info, const unsigned char *p) {
  elem_type et = {K_FLOAT, info->elem_size, info->big, info->dtype};
  et.kind = info->elem_kind == NS_NPY_FLOAT  ? K_FLOAT
            : info->elem_kind == NS_NPY_INT  ? K_INT
            : info->elem_kind == NS_NPY_UINT ? K_UINT
                                             : K_BOOL;
  uint64_t bits = load_bits(p, et.size, et.big);
  switch (et.kind) {
  case K_FLOAT:
    if (et.size == 2)
      return et.dtype == NS_BF16 ? ns_bf16_value((uint16_t)bits) : ns_fp16_value((uint16_t)bits);
    if (et.size == 4) {
      uint32_t b = (uint32_t)bits;
      float f;
      memcpy(&f, &b, 4);
      return f;
    } else {
      double v;
      memcpy(&v, &bits, 8);
      return v;
    }
  case K_INT: {
    uint64_t sign = (uint64_t)1 << (8 * et.size - 1), mask = sign | (sign - 1);
    return (bits & sign) ? -(double)((~bits + 1) & mask) : (double)bits;
  }
  case K_UINT:
    return (double)bits;
  default:
    return bits ? 1.0 : 0.0;
  }
}

int ns_npy_value_exact(const ns_npy_info *info, const unsigned char *p) {
  if (info->elem_size != 8 || (info->elem_kind != NS_NPY_INT && info->elem_kind != NS_NPY_UINT))
    return 1;
  uint64_t bits = load_bits(p, 8, info->big);
  double v = ns_npy_value(info, p);
  if (info->elem_kind == NS_NPY_UINT) return v < 0x1p64 && (uint64_t)v == bits;
  return v >= -0x1p63 && v < 0x1p63 && (int64_t)v == (int64_t)bits;
}

void ns_npy_inexact_error(const ns_npy_info *info, const unsigned char *p, size_t i, char *err) {
  uint64_t bits = load_bits(p, 8, info->big);
  int neg = info->elem_kind == NS_NPY_INT && (int64_t)bits < 0;
  ns_seterr(err, "element %zu, %s%llu, is an integer a double cannot hold exactly (beyond 2^53)",
            i + 1, neg ? "-" : "",
            neg ? 0ULL - (unsigned long long)bits : (unsigned long long)bits);
}

ns_tensor *ns_npy_parse_flags(const unsigned char *buf, size_t len, unsigned flags, char *err) {
  ns_npy_info info;
  elem_type et;
  if (npy_header_info(buf, len, len, flags, &info, &et, err)) return NULL;
  ns_tensor *t = ns_tensor_new(info.rank, info.shape, et.dtype, err);
  if (!t) return NULL;
  const unsigned char *p = buf + info.data_offset;
  for (size_t i = 0; i < info.n; i++, p += et.size) {
    uint64_t bits = load_bits(p, et.size, et.big);
    store_element(t, i, bits, &et);
    /* an 8-byte integer beyond 2^53 may not survive as a double: refuse it, never round it */
    if ((et.kind == K_INT || et.kind == K_UINT) && et.size == 8 && !ns_npy_value_exact(&info, p)) {
      ns_npy_inexact_error(&info, p, i, err);
      ns_tensor_free(t);
      return NULL;
    }
  }
  return t;
}

ns_tensor *ns_npy_parse(const unsigned char *buf, size_t len, char *err) {
  return ns_npy_parse_flags(buf, len, 0, err);
}

/* ---- .npy writer ------------------------------------------------------------------ */

static void put_le(unsigned char *p, uint64_t v, size_t size) {
  for (size_t k = 0; k < size; k++) p[k] = (unsigned char)(v >> (8 * k));
}

unsigned char *ns_npy_serialize(const ns_tensor *t, size_t *outlen, char *err) {
  if (!t || !outlen) {
    ns_seterr(err, "no tensor to serialize");
    return NULL;
  }
  if (ns_shape_check(t->rank, t->shape, err)) return NULL;
  /* bf16 has no numpy dtype; every bf16 value is exact in fp32, so it is written as '<f4'. */
  const char *descr;
  size_t isize;
  switch (t->dtype) {
  case NS_FP64:
    descr = "<f8";
    isize = 8;
    break;
  case NS_FP32:
  case NS_BF16:
    descr = "<f4";
    isize = 4;
    break;
  case NS_FP16:
    descr = "<f2";
    isize = 2;
    break;
  default:
    ns_seterr(err, "tensor has an unknown dtype %d", (int)t->dtype);
    return NULL;
  }
  /* numpy's own form: "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }",
   * a 1-tuple written "(3,)". */
  char dict[256];
  int w = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int k = 0; k < t->rank; k++)
    w += snprintf(dict + w, sizeof dict - (size_t)w, k ? ", %zu" : "%zu", t->shape[k]);
  w += snprintf(dict + w, sizeof dict - (size_t)w, "%s), }", t->rank == 1 ? "," : "");
  size_t dlen = (size_t)w;

  /* Version 1.0 has a 2-byte header length; 2.0 a 4-byte one, used only if needed.
   * Spaces pad the header so that the data starts at a multiple of 64; '\n' ends it. */
  size_t pre = 10, total_hdr = (pre + dlen + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
  int major = 1;
  if (total_hdr - pre > 0xffff) {
    major = 2;
    pre = 12;
    total_hdr = (pre + dlen + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
  }
  size_t hlen = total_hdr - pre, nbytes = t->n * isize;
  unsigned char *out = malloc(total_hdr + nbytes);
  if (!out) {
    ns_seterr(err, "out of memory serializing %zu bytes", total_hdr + nbytes);
    return NULL;
  }
  memcpy(out, NPY_MAGIC, NPY_MAGIC_LEN);
  out[6] = (unsigned char)major;
  out[7] = 0;
  put_le(out + 8, hlen, major == 1 ? 2 : 4);
  memcpy(out + pre, dict, dlen);
  memset(out + pre + dlen, ' ', hlen - dlen - 1);
  out[total_hdr - 1] = '\n';

  unsigned char *p = out + total_hdr;
  for (size_t i = 0; i < t->n; i++, p += isize) {
    uint64_t bits = 0;
    if (t->dtype == NS_FP64) {
      memcpy(&bits, (const double *)t->data + i, 8);
    } else if (t->dtype == NS_FP32) {
      uint32_t b;
      memcpy(&b, (const float *)t->data + i, 4);
      bits = b;
    } else if (t->dtype == NS_BF16) {
      bits = (uint64_t)((const uint16_t *)t->data)[i] << 16; /* bf16 is fp32's top half */
    } else {
      bits = ((const uint16_t *)t->data)[i];
    }
    put_le(p, bits, isize);
  }
  *outlen = total_hdr + nbytes;
  return out;
}
