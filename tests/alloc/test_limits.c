/* test_limits.c: the element cap (NS_MAX_ELEMENTS, default 2^28) and the Jacobian limit.
 * Linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc, so the largest request any
 * call makes is known: a tensor above the cap must be refused with a message naming its
 * size and the cap, and without the allocation being attempted (on Linux a huge calloc may
 * well succeed, so "it did not crash" would prove nothing). The readers that stream a file
 * (ns_npy_header, ns_st_parse) describe any shape up to NS_MAXELEMS: the cap is on what is
 * held in memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/csv.h"
#include "core/jacobian.h"
#include "core/npy.h"
#include "core/safetensors.h"
#include "core/tensor_ops.h"
#include "tap.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);

static size_t biggest; /* the largest request since the last reset, in bytes */

static void note(size_t n) {
  if (n > biggest) biggest = n;
}
void *__wrap_malloc(size_t n) {
  note(n);
  return __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t m) {
  note(m && n > SIZE_MAX / m ? SIZE_MAX : n * m);
  return __real_calloc(n, m);
}
void *__wrap_realloc(void *p, size_t n) {
  note(n);
  return __real_realloc(p, n);
}

static int has(const char *s, const char *frag) {
  return strstr(s, frag) != NULL;
}

/* the shape (n) as a tensor of value i at i, in dtype d, with the cap lifted */
static ns_tensor *ramp(size_t n, ns_dtype d) {
  char err[NS_ERRLEN];
  ns_tensor *t = ns_tensor_new(1, &n, d, err);
  for (size_t i = 0; t && i < n; i++) ns_tensor_set(t, i, (double)i);
  return t;
}

int main(void) {
  char err[NS_ERRLEN];
  size_t cap = 0;

  /* the value of NS_MAX_ELEMENTS */
  static const struct {
    const char *s;
    size_t want; /* 0: refused */
  } parse[] = {{"1", 1},
               {"268435456", (size_t)1 << 28},
               {"64K", 65536},
               {"3m", (size_t)3 << 20},
               {"2G", (size_t)1 << 31},
               {"2147483648", (size_t)1 << 31},
               {"2147483649", 0},
               {"3G", 0},
               {"0", 0},
               {"-5", 0},
               {"", 0},
               {"abc", 0},
               {"12x", 0},
               {"1.5M", 0},
               {"99999999999999999999999", 0}};
  for (size_t i = 0; i < sizeof parse / sizeof parse[0]; i++) {
    err[0] = '\0';
    cap = 0;
    int rc = ns_max_elements_parse(parse[i].s, &cap, err);
    if (parse[i].want)
      tap_ok(rc == 0 && cap == parse[i].want, "NS_MAX_ELEMENTS=\"%s\" is %zu (got %zu)", parse[i].s,
             parse[i].want, cap);
    else
      tap_ok(rc == -1 && has(err, "2147483648"), "NS_MAX_ELEMENTS=\"%s\" refused: %s", parse[i].s,
             err);
  }

  /* the cap in force (tests/unit/test_max_elements checks the setting and NS_MAX_ELEMENTS) */
  tap_ok(ns_max_elements() == (size_t)1 << 28, "by default the cap is 2^28 (%zu)",
         ns_max_elements());

  /* the default cap: 2^14 x (2^14 + 1) = 268451840 fp64 elements (2 GiB) refused unasked */
  size_t over[2] = {(size_t)1 << 14, ((size_t)1 << 14) + 1};
  biggest = 0;
  ns_tensor *t = ns_tensor_new(2, over, NS_FP64, err);
  tap_ok(!t && has(err, "268451840") && has(err, "268435456") && has(err, "NS_MAX_ELEMENTS") &&
             has(err, "(16384, 16385)"),
         "2^28 + 2^14 elements refused by the default cap: %s", err);
  tap_ok(biggest < 4096, "... without asking for the memory (largest request %zu bytes)", biggest);
  ns_tensor_free(t);
  size_t at[2] = {(size_t)1 << 14, (size_t)1 << 14};
  tap_ok(ns_shape_check(2, over, err) == 0 && ns_shape_check(2, at, err) == 0,
         "the shape itself is valid (a stream may describe it)");

  /* a small cap, as a test or a small machine would set it */
  ns_set_max_elements(100, NULL);
  size_t n100 = 100, n101 = 101;
  biggest = 0;
  t = ns_tensor_new(1, &n100, NS_FP16, err);
  tap_ok(t != NULL && biggest >= 200,
         "100 elements with a cap of 100 (and the wrapper saw its %zu bytes)", biggest);
  ns_tensor_free(t);
  biggest = 0;
  t = ns_tensor_new(1, &n101, NS_FP16, err);
  tap_ok(!t && has(err, "101 elements") && has(err, "cap of 100"), "101 refused: %s", err);
  tap_ok(biggest < 202, "... before its 202 bytes were asked for (largest request %zu)", biggest);

  /* files, parsed from memory: .npy, CSV and safetensors of 101 elements */
  ns_set_max_elements(1000, NULL);
  ns_tensor *r = ramp(101, NS_FP32), *r64 = ramp(101, NS_FP64);
  size_t nlen = 0, slen = 0;
  unsigned char *npy = r ? ns_npy_serialize(r, &nlen, err) : NULL;
  const ns_tensor *tl[1] = {r};
  const char *names[1] = {"w"};
  unsigned char *st = r ? ns_st_serialize(tl, names, 1, &slen, err) : NULL;
  size_t shape[2] = {1, 101};
  ns_tensor *row = r64 ? ns_tensor_from(2, shape, NS_FP64, r64->data, err) : NULL;
  char *csv = row ? ns_csv_serialize(row, err) : NULL;
  tap_ok(npy && st && csv, "101-element files made under a cap of 1000");
  ns_set_max_elements(100, NULL);
  if (npy && st && csv) {
    t = ns_npy_parse(npy, nlen, err);
    tap_ok(!t && has(err, "101 elements") && has(err, "cap of 100"), ".npy refused: %s", err);
    ns_tensor_free(t);
    ns_npy_info info;
    tap_ok(ns_npy_header(npy, nlen, nlen, 0, &info, err) == 0 && info.n == 101,
           ".npy header (the streaming reader) still reads the shape (%s)", err);
    t = ns_csv_parse(csv, strlen(csv), err);
    tap_ok(!t && has(err, "more than 100 numbers") && has(err, "NS_MAX_ELEMENTS"),
           "CSV refused: %s", err);
    ns_tensor_free(t);
    ns_st_index ix = {0};
    tap_ok(ns_st_parse(st, slen, slen, &ix, err) == 0 && ix.ntensors == 1 && ix.t[0].n == 101,
           "safetensors index (the streaming reader) lists the tensor (%s)", err);
    t = ns_st_tensor(&ix, 0, st, slen, err);
    tap_ok(!t && has(err, "101 elements") && has(err, "cap of 100"), "safetensors refused: %s",
           err);
    ns_tensor_free(t);
    ns_st_free(&ix);
  }
  free(npy);
  free(st);
  free(csv);
  ns_tensor_free(row);
  ns_tensor_free(r64);

  /* made by arithmetic: an outer product of 11 x 11 over a cap of 100 */
  ns_set_max_elements(1000, NULL);
  ns_tensor *a = ramp(11, NS_FP64);
  ns_set_max_elements(100, NULL);
  t = a ? ns_op_outer(a, a, err) : NULL;
  tap_ok(a && !t && has(err, "121 elements") && has(err, "cap of 100"),
         "an outer product over the cap refused: %s", err);
  ns_tensor_free(t);
  ns_tensor_free(a);
  ns_set_max_elements(NS_DEFAULT_MAX_ELEMENTS, NULL);

  /* the Jacobian limit: NS_JAC_MAXN elements, refused above with a message */
  size_t nj = NS_JAC_MAXN + 1;
  ns_tensor *xj = ns_tensor_new(1, &nj, NS_FP64, err);
  ns_spec sp;
  ns_spec_default(&sp);
  double J[1]; /* the limit is checked before J is touched */
  char lim[32];
  snprintf(lim, sizeof lim, "%d", NS_JAC_MAXN);
  int rc = xj ? ns_jacobian_analytic(xj, &sp, J, err) : 0;
  tap_ok(rc == -1 && has(err, lim) && has(err, "4097"), "an analytic Jacobian of %zu refused: %s",
         nj, err);
  rc = xj ? ns_jacobian_fd(xj, &sp, 1e-6, J, err) : 0;
  tap_ok(rc == -1 && has(err, lim), "a finite-difference Jacobian of %zu refused: %s", nj, err);
  ns_tensor_free(xj);
  ns_tensor_free(r);
  return tap_done();
}
