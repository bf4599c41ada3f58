/* csv.c: a small CSV dialect of numbers, to and from memory (see csv.h). Numbers are read
 * and written in the "C" locale, whatever the program's locale is. */
#include "core/csv.h"
#include "core/err.h"

#include <ctype.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- CSV ------------------------------------------------------------------------------ */

/* Numbers are read and written in the "C" locale whatever the program's locale is
 * (an ncurses program usually calls setlocale(LC_ALL, ""), which may make ',' the
 * decimal point). uselocale changes only this thread, and only until restored. */
typedef struct {
  locale_t c, old;
} c_numeric;

static void c_numeric_enter(c_numeric *s) {
  s->c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
  s->old = s->c ? uselocale(s->c) : (locale_t)0;
}

static void c_numeric_leave(c_numeric *s) {
  if (s->c) {
    uselocale(s->old);
    freelocale(s->c);
  }
}

/* Parses one trimmed field as a number: 0 on success. Accepts what numpy writes,
 * including nan, inf and -inf; refuses hex and anything with trailing characters. */
static int parse_number(const char *s, size_t n, double *out) {
  char tmp[512];
  if (n == 0 || n >= sizeof tmp) return -1;
  memcpy(tmp, s, n);
  tmp[n] = '\0';
  if (strlen(tmp) != n) return -1; /* a NUL inside */
  for (size_t k = 0; k < n; k++)
    if (tmp[k] == 'x' || tmp[k] == 'X' || tmp[k] == '(') return -1;
  char *end;
  *out = strtod(tmp, &end);
  return (end == tmp || *end != '\0') ? -1 : 0;
}

static int is_blank(char ch) {
  return ch == ' ' || ch == '\t' || ch == '\r';
}

/* The fields of a line, one at a time, trimmed: nothing is stored per field (a line of a
 * billion commas costs no memory of its own; the values are capped before they are kept). */
typedef struct {
  const char *s, *e;
  int done;
} fields;

static int field_next(fields *it, const char **f, size_t *n) {
  if (it->done) return 0;
  const char *a = it->s;
  while (it->s < it->e && *it->s != ',') it->s++;
  const char *fe = it->s;
  while (a < fe && is_blank(*a)) a++;
  while (fe > a && is_blank(fe[-1])) fe--;
  *f = a;
  *n = (size_t)(fe - a);
  if (it->s >= it->e)
    it->done = 1;
  else
    it->s++; /* past the comma */
  return 1;
}

/* Whether a field that is not a number is numbers separated by ';' (a CSV from a locale
 * with a decimal comma): such a line is no header, and the message says what to change. */
static int semicolon_numbers(const char *f, size_t n) {
  if (!memchr(f, ';', n)) return 0;
  const char *e = f + n;
  while (f <= e) {
    const char *q = memchr(f, ';', (size_t)(e - f));
    if (!q) q = e;
    const char *a = f, *b = q;
    while (a < b && is_blank(*a)) a++;
    while (b > a && is_blank(b[-1])) b--;
    double v;
    if (a == b || parse_number(a, (size_t)(b - a), &v) != 0) return 0;
    f = q + 1;
  }
  return 1;
}

ns_tensor *ns_csv_parse(const char *text, size_t len, char *err) {
  return ns_csv_parse_header(text, len, NULL, NULL, 0, err);
}

ns_tensor *ns_csv_parse_header(const char *text, size_t len, size_t *header_line, char *header,
                               size_t hcap, char *err) {
  if (header_line) *header_line = 0;
  if (header && hcap) header[0] = 0;
  if (!text) {
    ns_seterr(err, "no CSV text to parse");
    return NULL;
  }
  c_numeric loc;
  c_numeric_enter(&loc);
  double *vals = NULL;
  size_t nvals = 0, cap = 0, rows = 0, cols = 0, first_line = 0, maxn = ns_max_elements();
  int header_seen = 0, ok = 0;
  size_t lineno = 0;
  const char *p = text, *end = text + len;
  ns_tensor *t = NULL;

  while (p < end) {
    const char *ls = p, *le = memchr(p, '\n', (size_t)(end - p));
    if (!le) le = end;
    p = le < end ? le + 1 : end;
    lineno++;
    const char *hash = memchr(ls, '#', (size_t)(le - ls));
    if (hash) le = hash; /* a comment runs to the end of the line */
    const char *a = ls, *b = le;
    while (a < b && is_blank(*a)) a++;
    while (b > a && is_blank(b[-1])) b--;
    if (a == b) continue;

    /* Which fields are numbers? (the first that is not, for the message) */
    size_t nf = 0, bad = SIZE_MAX, numeric = 0, badlen = 0;
    int semis = 0;
    const char *badf = NULL, *f;
    size_t fn;
    fields it = {a, b, 0};
    while (field_next(&it, &f, &fn)) {
      double v;
      if (parse_number(f, fn, &v) == 0)
        numeric++;
      else {
        if (bad == SIZE_MAX) bad = nf, badf = f, badlen = fn;
        semis |= semicolon_numbers(f, fn);
      }
      nf++;
    }
    if (numeric == 0 && !semis && rows == 0 && !header_seen) {
      header_seen = 1; /* a header line of names: skipped, and said to the caller */
      if (header_line) *header_line = lineno;
      if (header && hcap) {
        size_t hl = (size_t)(b - a) < hcap - 1 ? (size_t)(b - a) : hcap - 1;
        memcpy(header, a, hl);
        header[hl] = 0;
      }
      continue;
    }
    if (bad != SIZE_MAX) {
      if (badlen == 0)
        ns_seterr(err, "line %zu, column %zu: empty value", lineno, bad + 1);
      else
        ns_seterr(err, "line %zu, column %zu: '%.*s%s' is not a number%s", lineno, bad + 1,
                  (int)(badlen > 40 ? 40 : badlen), badf, badlen > 40 ? "..." : "",
                  semis ? " (values are separated by commas, not ';', and decimals take a point)"
                        : "");
      goto done;
    }
    if (rows == 0) {
      cols = nf;
      first_line = lineno;
    } else if (nf != cols) {
      ns_seterr(err, "line %zu has %zu value%s, but line %zu (the first row) has %zu", lineno, nf,
                nf == 1 ? "" : "s", first_line, cols);
      goto done;
    }
    if (nvals + nf > maxn) { /* refused before the values are collected, not after */
      ns_seterr(err,
                "line %zu: the CSV text has more than %zu numbers, the cap of elements per "
                "tensor (NS_MAX_ELEMENTS)",
                lineno, maxn);
      goto done;
    }
    if (nvals + nf > cap) {
      size_t nc = cap ? cap : 256;
      while (nc < nvals + nf) nc *= 2;
      double *nv = realloc(vals, nc * sizeof *nv);
      if (!nv) {
        ns_seterr(err, "out of memory reading line %zu of the CSV text", lineno);
        goto done;
      }
      vals = nv;
      cap = nc;
    }
    fields again = {a, b, 0};
    while (field_next(&again, &f, &fn)) parse_number(f, fn, &vals[nvals++]);
    rows++;
  }
  if (rows == 0) {
    ns_seterr(err, header_seen ? "the CSV text has a header line but no rows of numbers"
                               : "the CSV text has no numbers");
    goto done;
  }
  ok = 1;
done:
  c_numeric_leave(&loc);
  if (ok) {
    size_t shape[2] = {rows, cols};
    t = ns_tensor_from(2, shape, NS_FP64, vals, err);
  }
  free(vals);
  return t;
}

char *ns_csv_serialize(const ns_tensor *t, char *err) {
  if (!t) {
    ns_seterr(err, "no tensor to write as CSV");
    return NULL;
  }
  if (t->rank != 1 && t->rank != 2) {
    char shp[128];
    ns_shape_format(t->rank, t->shape, shp, sizeof shp);
    ns_seterr(err, "CSV holds rank 1 or 2 tensors; this one has shape %s (reshape it first)", shp);
    return NULL;
  }
  /* Rank 1 is written one value per line, as numpy.savetxt does. */
  size_t cols = t->rank == 2 ? t->shape[1] : 1;
  size_t cap = t->n * 26 + 1; /* "%.17g" is at most 24 characters, plus a separator */
  char *out = malloc(cap);
  if (!out) {
    ns_seterr(err, "out of memory writing %zu values as CSV", t->n);
    return NULL;
  }
  c_numeric loc;
  c_numeric_enter(&loc);
  size_t used = 0;
  for (size_t i = 0; i < t->n; i++) {
    double v = ns_tensor_get(t, i);
    int w;
    if (isnan(v))
      w = snprintf(out + used, cap - used, "nan");
    else if (isinf(v))
      w = snprintf(out + used, cap - used, v > 0 ? "inf" : "-inf");
    else
      w = snprintf(out + used, cap - used, "%.17g", v);
    used += (size_t)w;
    out[used++] = (i + 1) % cols == 0 ? '\n' : ',';
  }
  out[used] = '\0';
  c_numeric_leave(&loc);
  return out;
}
