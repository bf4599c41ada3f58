/* safetensors.c: a strict reader of the safetensors header and a writer. See
 * safetensors.h. The JSON subset is what the format uses: one object of objects, strings
 * with the standard escapes, non-negative integers in arrays. Anything else is refused
 * with the byte offset of the problem in the header. */
#include "core/safetensors.h"
#include "core/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const ns_st_dtype_names[] = {"BOOL", "U8",      "I8",      "I16", "U16", "F16",
                                         "BF16", "I32",     "U32",     "F32", "F64", "I64",
                                         "U64",  "F8_E4M3", "F8_E5M2", NULL};
static const unsigned char st_sizes[NS_ST_DTYPE_COUNT] = {1, 1, 1, 2, 2, 2, 2, 4,
                                                          4, 4, 8, 8, 8, 1, 1};

size_t ns_st_dtype_size(ns_st_dtype d) {
  return (unsigned)d < NS_ST_DTYPE_COUNT ? st_sizes[d] : 0;
}

int ns_st_dtype_storage(ns_st_dtype d, ns_dtype *out) {
  ns_dtype v;
  switch (d) {
  case NS_ST_F16:
    v = NS_FP16;
    break;
  case NS_ST_BF16:
    v = NS_BF16;
    break;
  case NS_ST_F32:
    v = NS_FP32;
    break;
  case NS_ST_F64:
  case NS_ST_I64: /* integers (num_batches_tracked) as doubles; ns_st_tensor checks each fits */
    v = NS_FP64;
    break;
  default:
    return -1;
  }
  if (out) *out = v;
  return 0;
}

/* ---- the JSON subset ----------------------------------------------------------- */

typedef struct {
  const unsigned char *s, *p, *end;
  char *err;
  int failed;
} jp;

/* Records the first failure with the offset into the header. */
static int jfail(jp *j, const char *what) {
  if (!j->failed)
    ns_seterr(j->err, "safetensors header: %s at byte %zu of the header", what,
              (size_t)(j->p - j->s));
  j->failed = 1;
  return -1;
}

static void jws(jp *j) {
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static int jexpect(jp *j, unsigned char c, const char *what) {
  jws(j);
  if (j->p >= j->end || *j->p != c) return jfail(j, what);
  j->p++;
  return 0;
}

static int hexval(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static int read_hex4(jp *j, unsigned *v) {
  if (j->end - j->p < 4) return jfail(j, "truncated \\u escape");
  unsigned r = 0;
  for (int k = 0; k < 4; k++) {
    int h = hexval(j->p[k]);
    if (h < 0) return jfail(j, "bad \\u escape");
    r = r << 4 | (unsigned)h;
  }
  j->p += 4;
  *v = r;
  return 0;
}

static size_t put_utf8(char *o, unsigned cp) {
  if (cp < 0x80) {
    o[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    o[0] = (char)(0xC0 | cp >> 6);
    o[1] = (char)(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    o[0] = (char)(0xE0 | cp >> 12);
    o[1] = (char)(0x80 | (cp >> 6 & 0x3F));
    o[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  o[0] = (char)(0xF0 | cp >> 18);
  o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
  o[2] = (char)(0x80 | (cp >> 6 & 0x3F));
  o[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

/* The length of the valid UTF-8 sequence at p (1 to 4), or 0 (overlong forms, surrogates
 * and code points above U+10FFFF are invalid). */
static size_t utf8_len(const unsigned char *p, const unsigned char *end) {
  unsigned c = p[0];
  size_t n;
  unsigned lo = 0x80, hi = 0xBF;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF)
    n = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else
    return 0;
  if ((size_t)(end - p) < n) return 0;
  if (p[1] < lo || p[1] > hi) return 0;
  for (size_t k = 2; k < n; k++)
    if (p[k] < 0x80 || p[k] > 0xBF) return 0;
  return n;
}

/* A string; *out (malloc'd, NUL-terminated) when out is not NULL. Decoded text is never
 * longer than its escaped form, so the buffer is bounded by the header's length. */
static int jstring(jp *j, char **out) {
  jws(j);
  if (j->p >= j->end || *j->p != '"') return jfail(j, "expected a string");
  j->p++;
  const unsigned char *q = j->p;
  while (q < j->end && *q != '"') q += (*q == '\\' && q + 1 < j->end) ? 2 : 1;
  if (q >= j->end) return jfail(j, "unterminated string");
  char *o = NULL;
  size_t n = 0;
  if (out) {
    o = malloc((size_t)(q - j->p) + 1);
    if (!o) return jfail(j, "out of memory");
  }
  while (*j->p != '"') {
    unsigned char c = *j->p;
    if (c < 0x20) {
      free(o);
      return jfail(j, "control character in a string");
    }
    if (c >= 0x80) { /* the format's JSON is UTF-8 */
      size_t k = utf8_len(j->p, j->end);
      if (k == 0) {
        free(o);
        return jfail(j, "invalid UTF-8 in a string");
      }
      if (o) memcpy(o + n, j->p, k);
      n += k;
      j->p += k;
      continue;
    }
    if (c != '\\') {
      if (o) o[n] = (char)c;
      n++;
      j->p++;
      continue;
    }
    j->p++;
    unsigned char e = *j->p++;
    char lit = 0;
    switch (e) {
    case '"':
      lit = '"';
      break;
    case '\\':
      lit = '\\';
      break;
    case '/':
      lit = '/';
      break;
    case 'b':
      lit = '\b';
      break;
    case 'f':
      lit = '\f';
      break;
    case 'n':
      lit = '\n';
      break;
    case 'r':
      lit = '\r';
      break;
    case 't':
      lit = '\t';
      break;
    case 'u': {
      unsigned cp, lo;
      if (read_hex4(j, &cp)) {
        free(o);
        return -1;
      }
      if (cp >= 0xD800 && cp < 0xDC00) { /* a surrogate pair */
        if (j->end - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u') {
          free(o);
          return jfail(j, "unpaired surrogate in a \\u escape");
        }
        j->p += 2;
        if (read_hex4(j, &lo) || lo < 0xDC00 || lo >= 0xE000) {
          free(o);
          return jfail(j, "unpaired surrogate in a \\u escape");
        }
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
      } else if (cp >= 0xDC00 && cp < 0xE000) {
        free(o);
        return jfail(j, "unpaired surrogate in a \\u escape");
      }
      if (cp == 0) {
        free(o);
        return jfail(j, "NUL character in a string");
      }
      char tmp[4];
      size_t k = put_utf8(tmp, cp);
      if (o) memcpy(o + n, tmp, k);
      n += k;
      continue;
    }
    default:
      free(o);
      j->p--;
      return jfail(j, "bad escape in a string");
    }
    if (o) o[n] = lit;
    n++;
  }
  j->p++; /* closing quote */
  if (o) {
    o[n] = '\0';
    *out = o;
  }
  return 0;
}

/* A non-negative integer without sign, fraction, exponent or leading zeros. */
static int juint(jp *j, uint64_t *v) {
  jws(j);
  if (j->p >= j->end || *j->p < '0' || *j->p > '9') return jfail(j, "expected an integer >= 0");
  if (*j->p == '0' && j->p + 1 < j->end && j->p[1] >= '0' && j->p[1] <= '9')
    return jfail(j, "integer with a leading zero");
  uint64_t r = 0;
  while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
    unsigned d = (unsigned)(*j->p - '0');
    if (r > (UINT64_MAX - d) / 10) return jfail(j, "integer too large");
    r = r * 10 + d;
    j->p++;
  }
  if (j->p < j->end && (*j->p == '.' || *j->p == 'e' || *j->p == 'E'))
    return jfail(j, "expected an integer, got a fraction or exponent");
  *v = r;
  return 0;
}

/* An array of at most max integers. */
static int juint_array(jp *j, uint64_t *v, int max, int *count, const char *what) {
  if (jexpect(j, '[', what)) return -1;
  int n = 0;
  jws(j);
  if (j->p < j->end && *j->p == ']') {
    j->p++;
    *count = 0;
    return 0;
  }
  for (;;) {
    if (n >= max) return jfail(j, "too many entries in an array");
    if (juint(j, &v[n])) return -1;
    n++;
    jws(j);
    if (j->p < j->end && *j->p == ',') {
      j->p++;
      continue;
    }
    if (jexpect(j, ']', "expected ',' or ']' in an array")) return -1;
    break;
  }
  *count = n;
  return 0;
}

/* "__metadata__": an object of string values (or null). */
static int jmetadata(jp *j) {
  jws(j);
  if (j->end - j->p >= 4 && memcmp(j->p, "null", 4) == 0) {
    j->p += 4;
    return 0;
  }
  if (jexpect(j, '{', "__metadata__ must be an object of strings")) return -1;
  jws(j);
  if (j->p < j->end && *j->p == '}') {
    j->p++;
    return 0;
  }
  for (;;) {
    if (jstring(j, NULL) || jexpect(j, ':', "expected ':'") || jstring(j, NULL)) return -1;
    jws(j);
    if (j->p < j->end && *j->p == ',') {
      j->p++;
      continue;
    }
    return jexpect(j, '}', "expected ',' or '}' in __metadata__");
  }
}

/* A tensor's object: exactly dtype, shape and data_offsets, each once. */
static int jentry(jp *j, ns_st_entry *e) {
  if (jexpect(j, '{', "a tensor's value must be an object")) return -1;
  int have_d = 0, have_s = 0, have_o = 0;
  for (;;) {
    char *key = NULL;
    if (jstring(j, &key)) return -1;
    if (jexpect(j, ':', "expected ':'")) {
      free(key);
      return -1;
    }
    int rc = 0;
    if (strcmp(key, "dtype") == 0 && !have_d) {
      char *d = NULL;
      rc = jstring(j, &d);
      if (rc == 0) {
        int k = 0;
        while (ns_st_dtype_names[k] && strcmp(ns_st_dtype_names[k], d) != 0) k++;
        if (!ns_st_dtype_names[k]) {
          j->p--;
          char msg[96];
          snprintf(msg, sizeof msg, "unknown dtype \"%.40s\"", d);
          rc = jfail(j, msg);
        }
        e->dtype = (ns_st_dtype)k;
        free(d);
      }
      have_d = 1;
    } else if (strcmp(key, "shape") == 0 && !have_s) {
      uint64_t v[NS_ST_MAXRANK];
      int n = 0;
      rc = juint_array(j, v, NS_ST_MAXRANK, &n, "shape must be an array of integers");
      e->rank = n;
      for (int k = 0; k < n; k++) {
        if (v[k] > SIZE_MAX) rc = jfail(j, "dimension too large");
        e->shape[k] = (size_t)v[k];
      }
      have_s = 1;
    } else if (strcmp(key, "data_offsets") == 0 && !have_o) {
      uint64_t v[2];
      int n = 0;
      rc = juint_array(j, v, 2, &n, "data_offsets must be an array of two integers");
      if (rc == 0 && n != 2) rc = jfail(j, "data_offsets must hold two integers");
      if (rc == 0) {
        e->begin = v[0];
        e->end = v[1];
      }
      have_o = 1;
    } else {
      int dup = strcmp(key, "dtype") == 0 || strcmp(key, "shape") == 0 ||
                strcmp(key, "data_offsets") == 0;
      char msg[96];
      snprintf(msg, sizeof msg, "%s key \"%.40s\" in a tensor", dup ? "repeated" : "unknown", key);
      rc = jfail(j, msg);
    }
    free(key);
    if (rc) return -1;
    jws(j);
    if (j->p < j->end && *j->p == ',') {
      j->p++;
      continue;
    }
    if (jexpect(j, '}', "expected ',' or '}' in a tensor")) return -1;
    break;
  }
  if (!have_d || !have_s || !have_o)
    return jfail(j, !have_d   ? "a tensor without \"dtype\""
                    : !have_s ? "a tensor without \"shape\""
                              : "a tensor without \"data_offsets\"");
  return 0;
}

/* ---- the index --------------------------------------------------------------------- */

int ns_st_header_len(const unsigned char *buf, size_t len, uint64_t file_size, uint64_t *hlen,
                     char *err) {
  if (!buf || !hlen || len < 8 || file_size < 8) {
    ns_seterr(err, "not a safetensors file: shorter than its 8-byte header length");
    return -1;
  }
  uint64_t n = 0;
  for (int k = 7; k >= 0; k--) n = n << 8 | buf[k];
  if (n > NS_ST_MAX_HEADER) {
    ns_seterr(err, "safetensors header length %llu is absurd (more than %llu bytes)",
              (unsigned long long)n, (unsigned long long)NS_ST_MAX_HEADER);
    return -1;
  }
  if (n > file_size - 8) {
    ns_seterr(err,
              "truncated safetensors file: the header is %llu bytes but only %llu follow the "
              "length",
              (unsigned long long)n, (unsigned long long)(file_size - 8));
    return -1;
  }
  if (n < 2) {
    ns_seterr(err, "safetensors header of %llu bytes cannot hold a JSON object",
              (unsigned long long)n);
    return -1;
  }
  *hlen = n;
  return 0;
}

void ns_st_free(ns_st_index *ix) {
  if (!ix) return;
  for (size_t k = 0; k < ix->ntensors; k++) free(ix->t[k].name);
  free(ix->t);
  memset(ix, 0, sizeof *ix);
}

static int cmp_begin(const void *a, const void *b) {
  const ns_st_entry *x = *(const ns_st_entry *const *)a, *y = *(const ns_st_entry *const *)b;
  return (x->begin > y->begin) - (x->begin < y->begin);
}

/* Sizes, offsets and names of the parsed entries against each other and the data. */
static int check_entries(ns_st_index *ix, char *err) {
  for (size_t k = 0; k < ix->ntensors; k++) {
    ns_st_entry *e = &ix->t[k];
    uint64_t n = 1, sz = ns_st_dtype_size(e->dtype);
    for (int d = 0; d < e->rank; d++) {
      if (e->shape[d] != 0 && n > UINT64_MAX / e->shape[d]) {
        ns_seterr(err, "safetensors: tensor \"%.60s\": shape product overflows", e->name);
        return -1;
      }
      n *= e->shape[d];
    }
    if (n > UINT64_MAX / sz || n > SIZE_MAX) {
      ns_seterr(err, "safetensors: tensor \"%.60s\": size overflows", e->name);
      return -1;
    }
    e->n = (size_t)n;
    if (e->end < e->begin) {
      ns_seterr(err,
                "safetensors: tensor \"%.60s\": data_offsets [%llu, %llu] end before they begin",
                e->name, (unsigned long long)e->begin, (unsigned long long)e->end);
      return -1;
    }
    if (e->end - e->begin != n * sz) {
      ns_seterr(err,
                "safetensors: tensor \"%.60s\": %s of %llu elements needs %llu bytes, its "
                "data_offsets [%llu, %llu] span %llu",
                e->name, ns_st_dtype_names[e->dtype], (unsigned long long)n,
                (unsigned long long)(n * sz), (unsigned long long)e->begin,
                (unsigned long long)e->end, (unsigned long long)(e->end - e->begin));
      return -1;
    }
    if (e->end > ix->data_len) {
      ns_seterr(err,
                "safetensors: tensor \"%.60s\" ends at byte %llu of the data, which holds only "
                "%llu bytes (truncated file?)",
                e->name, (unsigned long long)e->end, (unsigned long long)ix->data_len);
      return -1;
    }
  }
  if (ix->ntensors == 0) {
    if (ix->data_len != 0) {
      ns_seterr(err, "safetensors: no tensors, but %llu bytes of data follow the header",
                (unsigned long long)ix->data_len);
      return -1;
    }
    return 0;
  }
  ns_st_entry **by = malloc(ix->ntensors * sizeof *by);
  if (!by) {
    ns_seterr(err, "out of memory");
    return -1;
  }
  for (size_t k = 0; k < ix->ntensors; k++) by[k] = &ix->t[k];
  qsort(by, ix->ntensors, sizeof *by, cmp_begin);
  uint64_t at = 0;
  int rc = 0;
  for (size_t k = 0; k < ix->ntensors && rc == 0; k++) {
    if (by[k]->begin < at) {
      ns_seterr(err, "safetensors: tensor \"%.60s\" (bytes %llu to %llu) overlaps \"%.60s\"",
                by[k]->name, (unsigned long long)by[k]->begin, (unsigned long long)by[k]->end,
                by[k - 1]->name);
      rc = -1;
    } else if (by[k]->begin > at) {
      ns_seterr(err, "safetensors: a gap of %llu unused bytes before tensor \"%.60s\"",
                (unsigned long long)(by[k]->begin - at), by[k]->name);
      rc = -1;
    }
    at = by[k]->end;
  }
  if (rc == 0 && at != ix->data_len) {
    ns_seterr(err, "safetensors: the tensors cover %llu bytes but the data section holds %llu",
              (unsigned long long)at, (unsigned long long)ix->data_len);
    rc = -1;
  }
  for (size_t k = 1; k < ix->ntensors && rc == 0; k++)
    for (size_t m = 0; m < k && rc == 0; m++)
      if (strcmp(ix->t[k].name, ix->t[m].name) == 0) {
        ns_seterr(err, "safetensors: tensor name \"%.60s\" appears twice", ix->t[k].name);
        rc = -1;
      }
  free(by);
  return rc;
}

int ns_st_parse(const unsigned char *buf, size_t len, uint64_t file_size, ns_st_index *ix,
                char *err) {
  if (!ix) {
    ns_seterr(err, "no index to fill");
    return -1;
  }
  memset(ix, 0, sizeof *ix);
  uint64_t hlen;
  if (ns_st_header_len(buf, len, file_size, &hlen, err)) return -1;
  if (hlen > len - 8) {
    ns_seterr(err, "safetensors: only %zu of the header's %llu bytes are in the buffer", len - 8,
              (unsigned long long)hlen);
    return -1;
  }
  ix->header_len = hlen;
  ix->data_start = 8 + hlen;
  ix->data_len = file_size - ix->data_start;
  jp j = {buf + 8, buf + 8, buf + 8 + hlen, err, 0};
  size_t cap = 0;
  jws(&j);
  if (j.p >= j.end || *j.p != '{') {
    ns_seterr(err, "safetensors header: not a JSON object (it must start with '{')");
    return -1;
  }
  j.p++;
  jws(&j);
  int rc = 0, seen_meta = 0;
  if (j.p < j.end && *j.p == '}') {
    j.p++;
  } else {
    for (;;) {
      char *key = NULL;
      if (jstring(&j, &key) || jexpect(&j, ':', "expected ':'")) {
        free(key);
        rc = -1;
        break;
      }
      if (strcmp(key, "__metadata__") == 0) {
        free(key);
        if (seen_meta) {
          rc = jfail(&j, "__metadata__ appears twice");
          break;
        }
        seen_meta = 1;
        if (jmetadata(&j)) {
          rc = -1;
          break;
        }
      } else {
        if (ix->ntensors == cap) {
          size_t nc = cap ? cap * 2 : 8;
          ns_st_entry *nt = realloc(ix->t, nc * sizeof *nt);
          if (!nt) {
            free(key);
            rc = jfail(&j, "out of memory");
            break;
          }
          ix->t = nt;
          cap = nc;
        }
        ns_st_entry *e = &ix->t[ix->ntensors++];
        memset(e, 0, sizeof *e);
        e->name = key;
        if (jentry(&j, e)) {
          rc = -1;
          break;
        }
      }
      jws(&j);
      if (j.p < j.end && *j.p == ',') {
        j.p++;
        continue;
      }
      if (jexpect(&j, '}', "expected ',' or '}' after a tensor")) rc = -1;
      break;
    }
  }
  if (rc == 0) {
    jws(&j); /* the format pads the header with spaces */
    if (j.p != j.end) rc = jfail(&j, "text after the JSON object");
  }
  if (rc == 0) rc = check_entries(ix, err);
  if (rc) ns_st_free(ix);
  return rc;
}

int ns_st_find(const ns_st_index *ix, const char *name) {
  if (!ix || !name) return -1;
  for (size_t k = 0; k < ix->ntensors; k++)
    if (strcmp(ix->t[k].name, name) == 0) return (int)k;
  return -1;
}

int ns_st_loadable(const ns_st_index *ix, size_t k, char *err) {
  if (!ix || k >= ix->ntensors) {
    ns_seterr(err, "no such tensor");
    return -1;
  }
  const ns_st_entry *e = &ix->t[k];
  if (ns_st_dtype_storage(e->dtype, NULL)) {
    ns_seterr(err, "tensor \"%.60s\" is %s: only F16, BF16, F32, F64 and I64 tensors load", e->name,
              ns_st_dtype_names[e->dtype]);
    return -1;
  }
  if (e->rank > NS_MAXRANK) { /* rank 0 (a scalar) loads as one value of shape (1) */
    ns_seterr(err, "tensor \"%.60s\" has rank %d: tensors of rank 1 to %d load", e->name, e->rank,
              NS_MAXRANK);
    return -1;
  }
  char e2[NS_ERRLEN];
  if (e->rank && ns_shape_check(e->rank, e->shape, e2)) {
    ns_seterr(err, "tensor \"%.60s\": %s", e->name, e2);
    return -1;
  }
  return 0;
}

ns_tensor *ns_st_tensor(const ns_st_index *ix, size_t k, const unsigned char *file, size_t len,
                        char *err) {
  if (ns_st_loadable(ix, k, err)) return NULL;
  const ns_st_entry *e = &ix->t[k];
  if (!file || ix->data_start + e->end > len) {
    ns_seterr(err, "tensor \"%.60s\": its data is not in the buffer", e->name);
    return NULL;
  }
  ns_dtype d;
  ns_st_dtype_storage(e->dtype, &d);
  const size_t one = 1;
  ns_tensor *t =
      e->rank ? ns_tensor_new(e->rank, e->shape, d, err) : ns_tensor_new(1, &one, d, err);
  if (!t) return NULL;
  const unsigned char *p = file + ix->data_start + e->begin;
  size_t sz = ns_dtype_size(d);
  /* little-endian bytes assembled explicitly: no alignment or host-order assumption */
  for (size_t i = 0; i < e->n; i++, p += sz) {
    uint64_t bits = 0;
    for (size_t b = 0; b < sz; b++) bits |= (uint64_t)p[b] << (8 * b);
    if (sz == 2) {
      ((uint16_t *)t->data)[i] = (uint16_t)bits;
    } else if (sz == 4) {
      uint32_t w = (uint32_t)bits;
      memcpy((float *)t->data + i, &w, 4);
    } else if (e->dtype == NS_ST_I64) { /* two's complement; a double holds it or it is refused */
      int64_t v = bits >> 63 ? -(int64_t)(~bits) - 1 : (int64_t)bits;
      double dv = (double)v;
      if (dv >= 0x1p63 || (int64_t)dv != v) {
        ns_seterr(err,
                  "tensor \"%.60s\": element %zu, %lld, is an integer a double cannot hold "
                  "exactly (beyond 2^53)",
                  e->name, i + 1, (long long)v);
        ns_tensor_free(t);
        return NULL;
      }
      ((double *)t->data)[i] = dv;
    } else {
      memcpy((double *)t->data + i, &bits, 8);
    }
  }
  return t;
}

/* ---- writer ------------------------------------------------------------------------ */

/* Appends the JSON-escaped name to o at *n (o has room for 6 bytes per input byte). */
static void put_json_string(char *o, size_t *n, const char *s) {
  o[(*n)++] = '"';
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') {
      o[(*n)++] = '\\';
      o[(*n)++] = (char)*p;
    } else if (*p < 0x20) {
      *n += (size_t)sprintf(o + *n, "\\u%04x", *p);
    } else {
      o[(*n)++] = (char)*p;
    }
  }
  o[(*n)++] = '"';
}

unsigned char *ns_st_serialize(const ns_tensor *const *t, const char *const *names, size_t n,
                               size_t *outlen, char *err) {
  if (!outlen || (n && (!t || !names))) {
    ns_seterr(err, "nothing to serialize");
    return NULL;
  }
  size_t hcap = 16, dlen = 0;
  for (size_t k = 0; k < n; k++) {
    if (!t[k] || !names[k] || !names[k][0]) {
      ns_seterr(err, "tensor %zu has no data or no name", k + 1);
      return NULL;
    }
    if (strcmp(names[k], "__metadata__") == 0) {
      ns_seterr(err, "\"__metadata__\" is not a tensor name");
      return NULL;
    }
    for (size_t m = 0; m < k; m++)
      if (strcmp(names[k], names[m]) == 0) {
        ns_seterr(err, "tensor name \"%.60s\" given twice", names[k]);
        return NULL;
      }
    hcap += 6 * strlen(names[k]) + 128 + 22 * (size_t)t[k]->rank;
    dlen += t[k]->n * ns_dtype_size(t[k]->dtype);
  }
  char *h = malloc(hcap + 8);
  if (!h) {
    ns_seterr(err, "out of memory");
    return NULL;
  }
  static const char *const st_of[NS_DTYPE_COUNT] = {"F64", "F32", "F16", "BF16"};
  size_t hn = 0, off = 0;
  h[hn++] = '{';
  for (size_t k = 0; k < n; k++) {
    size_t bytes = t[k]->n * ns_dtype_size(t[k]->dtype);
    if (k) h[hn++] = ',';
    put_json_string(h, &hn, names[k]);
    hn += (size_t)sprintf(h + hn, ":{\"dtype\":\"%s\",\"shape\":[", st_of[t[k]->dtype]);
    for (int d = 0; d < t[k]->rank; d++)
      hn += (size_t)sprintf(h + hn, d ? ",%zu" : "%zu", t[k]->shape[d]);
    hn += (size_t)sprintf(h + hn, "],\"data_offsets\":[%zu,%zu]}", off, off + bytes);
    off += bytes;
  }
  h[hn++] = '}';
  while (hn % 8) h[hn++] = ' '; /* the data section starts 8-byte aligned */
  unsigned char *out = malloc(8 + hn + dlen);
  if (!out) {
    free(h);
    ns_seterr(err, "out of memory");
    return NULL;
  }
  for (int b = 0; b < 8; b++) out[b] = (unsigned char)((uint64_t)hn >> (8 * b));
  memcpy(out + 8, h, hn);
  free(h);
  unsigned char *p = out + 8 + hn;
  for (size_t k = 0; k < n; k++) {
    size_t sz = ns_dtype_size(t[k]->dtype);
    const unsigned char *src = t[k]->data;
    for (size_t i = 0; i < t[k]->n; i++) {
      uint64_t bits = 0;
      if (sz == 2) {
        bits = ((const uint16_t *)src)[i];
      } else if (sz == 4) {
        uint32_t w;
        memcpy(&w, src + 4 * i, 4);
        bits = w;
      } else {
        memcpy(&bits, src + 8 * i, 8);
      }
      for (size_t b = 0; b < sz; b++) *p++ = (unsigned char)(bits >> (8 * b));
    }
  }
  *outlen = 8 + hn + dlen;
  return out;
}
