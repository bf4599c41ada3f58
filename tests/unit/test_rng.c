/* test_rng.c: the numpy-compatible generator against numpy's own outputs.
 *
 * Reads tests/data/numpy-rng-vectors.tsv (shared vectors made with numpy 1.24.2) and
 * tests/data/rng-extra.tsv (made by tests/data/make-rng-extra.py: seeds beyond 64 bits,
 * long runs through the ziggurat's tail) at run time and checks every row bit for bit:
 * doubles are compared with == after strtod of numpy's round-trip repr.
 * The data folder is $top_srcdir/tests/data, or found from this file's path. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "core/sha256.h"
#include "core/tensor.h"
#include "tap.h"
#include "testdata.h"

/* ---- small helpers ------------------------------------------------------------------ */

#define data_path test_data_path

static char *slurp(const char *path) {
  return (char *)test_slurp(path, NULL);
}

/* Splits line (modified in place) at tabs; returns the field count. */
static int split_tabs(char *line, char **fields, int max) {
  int n = 0;
  fields[n++] = line;
  for (char *p = line; *p && n < max; p++)
    if (*p == '\t') {
      *p = '\0';
      fields[n++] = p + 1;
    }
  return n;
}

/* Parses a double written by numpy's repr; returns 0 on success. */
static int parse_double(const char *s, char **end, double *out) {
  errno = 0;
  *out = strtod(s, end);
  return (*end == s) ? -1 : 0;
}

static int seed_from(ns_rng *g, const char *seed) {
  char err[NS_ERRLEN];
  if (ns_rng_seed_decimal(g, seed, err) != 0) {
    tap_ok(0, "seed %s: %s", seed, err);
    return -1;
  }
  return 0;
}

/* ---- numpy-rng-vectors.tsv ---------------------------------------------------------- */

/* One call "normal(loc,scale,size)" with size an integer or a tuple "(a, b)". */
typedef struct {
  double loc, scale;
  size_t n;
} normal_call;

static int parse_calls(const char *s, normal_call *calls, int max) {
  int nc = 0;
  while (*s) {
    while (*s == ' ') s++;
    if (!*s) break;
    if (strncmp(s, "normal(", 7) != 0 || nc == max) return -1;
    char *e;
    s += 7;
    if (parse_double(s, &e, &calls[nc].loc) || *e != ',') return -1;
    if (parse_double(e + 1, &e, &calls[nc].scale) || *e != ',') return -1;
    s = e + 1;
    while (*s == ' ') s++;
    size_t n = 1;
    if (*s == '(') {
      s++;
      for (;;) {
        while (*s == ' ') s++;
        if (*s == ')') break;
        unsigned long long d = strtoull(s, &e, 10);
        if (e == s) return -1;
        n *= (size_t)d;
        s = e;
        while (*s == ' ') s++;
        if (*s == ',') s++;
      }
      s++;
    } else {
      unsigned long long d = strtoull(s, &e, 10);
      if (e == s) return -1;
      n = (size_t)d;
      s = e;
    }
    if (*s != ')') return -1;
    s++;
    calls[nc++].n = n;
  }
  return nc;
}

static void check_normal_row(char **f, int nf) {
  /* normal SEED CALLS total=N v0 v1 ... last=V */
  normal_call calls[8];
  int nc = nf >= 6 ? parse_calls(f[2], calls, 8) : -1;
  if (nc <= 0 || strncmp(f[3], "total=", 6) != 0 || strncmp(f[nf - 1], "last=", 5) != 0) {
    tap_ok(0, "normal row for seed %s is readable", f[1]);
    return;
  }
  ns_rng g;
  if (seed_from(&g, f[1])) return;
  size_t total = 0;
  for (int c = 0; c < nc; c++) total += calls[c].n;
  double *vals = malloc((total ? total : 1) * sizeof *vals);
  size_t k = 0;
  for (int c = 0; c < nc; c++)
    for (size_t i = 0; i < calls[c].n; i++)
      vals[k++] = ns_rng_normal(&g, calls[c].loc, calls[c].scale);
  size_t want_total = (size_t)strtoull(f[3] + 6, NULL, 10);
  tap_ok(total == want_total, "normal seed %s %s: %zu draws (numpy total=%zu)", f[1], f[2], total,
         want_total);

  /* The first values, space-separated, in field 4 */
  char *s = f[4], *e;
  size_t i = 0, bad = 0;
  double want;
  while (parse_double(s, &e, &want) == 0) {
    if (i >= total || vals[i] != want) {
      if (!bad) tap_diag("  value %zu: got %.17g, want %.17g", i, i < total ? vals[i] : NAN, want);
      bad++;
    }
    i++;
    s = e;
  }
  tap_ok(i >= 8 && bad == 0, "normal seed %s: first %zu values bit for bit (%zu differ)", f[1], i,
         bad);
  double last;
  parse_double(f[nf - 1] + 5, &e, &last);
  tap_ok(total > 0 && vals[total - 1] == last, "normal seed %s: last value %.17g (numpy %.17g)",
         f[1], total ? vals[total - 1] : NAN, last);
  free(vals);
}

static void check_random_row(char **f, int nf) {
  ns_rng g;
  if (nf < 4 || seed_from(&g, f[1])) return;
  char *s = f[3], *e;
  size_t i = 0, bad = 0;
  double want;
  while (parse_double(s, &e, &want) == 0) {
    double got = ns_rng_random(&g);
    if (got != want) {
      if (!bad) tap_diag("  value %zu: got %.17g, want %.17g", i, got, want);
      bad++;
    }
    i++;
    s = e;
  }
  tap_ok(i > 0 && bad == 0, "random seed %s %s: %zu values bit for bit", f[1], f[2], i);
}

static void check_raw_row(char **f, int nf) {
  ns_rng g;
  if (nf < 4 || seed_from(&g, f[1])) return;
  uint64_t want = strtoull(f[3], NULL, 16), got = ns_rng_next_u64(&g);
  tap_ok(got == want, "raw seed %s: first next_uint64 0x%016" PRIx64 " (numpy %s)", f[1], got,
         f[3]);
}

/* seedseq rows: "pool" (four uint32) or "generate_state(4,uint64)" / "state" (four uint64). */
static void check_seedseq_row(char **f, int nf) {
  if (nf < 4) return;
  /* Seed words from the decimal seed, via a generator-free route: parse by hand. */
  uint32_t words[256] = {0};
  size_t nw = 1;
  for (const char *p = f[1]; *p; p++) {
    uint64_t carry = (uint64_t)(*p - '0');
    for (size_t j = 0; j < nw; j++) {
      uint64_t t = (uint64_t)words[j] * 10 + carry;
      words[j] = (uint32_t)t;
      carry = t >> 32;
    }
    if (carry && nw < 256) words[nw++] = (uint32_t)carry;
  }
  uint32_t pool[4];
  ns_seedseq_pool(words, nw, pool);
  char *s = f[3], *e;
  if (strcmp(f[2], "pool") == 0) {
    int ok = 1;
    for (int i = 0; i < 4; i++, s = e) {
      unsigned long w = strtoul(s, &e, 16);
      if (e == s || pool[i] != (uint32_t)w) ok = 0;
    }
    tap_ok(ok, "seedseq %s pool %08" PRIx32 " %08" PRIx32 " %08" PRIx32 " %08" PRIx32, f[1],
           pool[0], pool[1], pool[2], pool[3]);
  } else {
    uint64_t st[4];
    ns_seedseq_generate_u64(pool, st, 4);
    int ok = 1;
    for (int i = 0; i < 4; i++, s = e) {
      unsigned long long w = strtoull(s, &e, 16);
      if (e == s || st[i] != (uint64_t)w) ok = 0;
    }
    tap_ok(ok, "seedseq %s generate_state(4) %016" PRIx64 " ...", f[1], st[0]);
  }
}

static void check_sha_row(char **f, int nf) {
  /* sha256 NAME HEX comment "first 8 hex as int = N" */
  char hex[65];
  if (nf < 3) return;
  ns_sha256_hex(f[1], strlen(f[1]), hex);
  tap_ok(strcmp(hex, f[2]) == 0, "sha256(\"%s\") = %s", f[1], hex);
  if (nf >= 4) {
    const char *eq = strrchr(f[3], '=');
    char first8[9];
    memcpy(first8, hex, 8);
    first8[8] = '\0';
    unsigned long long want = eq ? strtoull(eq + 1, NULL, 10) : 0;
    tap_ok(strtoull(first8, NULL, 16) == want, "sha256 \"%s\": first 8 hex digits as int = %llu",
           f[1], want);
  }
}

static int run_vectors(void) {
  const char *path = data_path("numpy-rng-vectors.tsv");
  char *text = slurp(path);
  if (!text) {
    tap_ok(0, "cannot read %s", path);
    return 0;
  }
  int rows = 0;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (line[0] == '#' || line[0] == '\0') continue;
    char *f[64];
    char *save = strdup(line);
    int nf = split_tabs(save, f, 64);
    rows++;
    if (strcmp(f[0], "normal") == 0)
      check_normal_row(f, nf);
    else if (strcmp(f[0], "random") == 0)
      check_random_row(f, nf);
    else if (strcmp(f[0], "raw") == 0)
      check_raw_row(f, nf);
    else if (strcmp(f[0], "seedseq") == 0)
      check_seedseq_row(f, nf);
    else if (strcmp(f[0], "sha256") == 0)
      check_sha_row(f, nf);
    else
      tap_ok(0, "unknown row kind '%s' in %s", f[0], path);
    free(save);
  }
  free(text);
  return rows;
}

/* ---- rng-extra.tsv ---------------------------------------------------------------------- */

/* std/random/normal rows: SEED N [LOC SCALE] "i=v i=v ...": generate N values, compare
 * the listed ones. kind: 0 random, 1 standard normal, 2 normal(LOC, SCALE). */
static void check_sampled_row(char **f, int nf, int kind) {
  ns_rng g;
  int vf = kind == 2 ? 5 : 3;
  if (nf <= vf || seed_from(&g, f[1])) return;
  size_t n = (size_t)strtoull(f[2], NULL, 10);
  double loc = kind == 2 ? strtod(f[3], NULL) : 0, scale = kind == 2 ? strtod(f[4], NULL) : 1;
  double *v = malloc(n * sizeof *v);
  for (size_t i = 0; i < n; i++)
    v[i] = kind == 2   ? ns_rng_normal(&g, loc, scale)
           : kind == 1 ? ns_rng_standard_normal(&g)
                       : ns_rng_random(&g);
  size_t checked = 0, bad = 0, tail = 0;
  char *s = f[vf], *e;
  while (*s) {
    size_t i = (size_t)strtoull(s, &e, 10);
    double want;
    if (e == s || *e != '=' || parse_double(e + 1, &e, &want) || i >= n) {
      tap_ok(0, "row %s %s is readable", f[0], f[1]);
      break;
    }
    if (v[i] != want) {
      if (!bad) tap_diag("  index %zu: got %.17g, want %.17g", i, v[i], want);
      bad++;
    }
    if (fabs(want) > 3.6541528853610088) tail++;
    checked++;
    s = e;
    while (*s == ' ') s++;
  }
  if (kind == 1)
    tap_ok(checked > 0 && bad == 0,
           "standard_normal seed %s: %zu of %zu draws checked (%zu in the tail), %zu differ", f[1],
           checked, n, tail, bad);
  else if (kind == 2)
    tap_ok(checked > 0 && bad == 0, "normal(%s, %s) seed %s: %zu of %zu draws checked, %zu differ",
           f[3], f[4], f[1], checked, n, bad);
  else
    tap_ok(checked > 0 && bad == 0, "random seed %s: %zu of %zu draws checked, %zu differ", f[1],
           checked, n, bad);
  free(v);
}

static void run_extra(void) {
  const char *path = data_path("rng-extra.tsv");
  char *text = slurp(path);
  if (!text) {
    tap_ok(0, "cannot read %s", path);
    return;
  }
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (line[0] == '#' || line[0] == '\0') continue;
    char *save = strdup(line), *f[8];
    int nf = split_tabs(save, f, 8);
    if (strcmp(f[0], "seedseq") == 0)
      check_seedseq_row(f, nf);
    else if (strcmp(f[0], "std") == 0)
      check_sampled_row(f, nf, 1);
    else if (strcmp(f[0], "random") == 0)
      check_sampled_row(f, nf, 0);
    else if (strcmp(f[0], "normal") == 0)
      check_sampled_row(f, nf, 2);
    else if (strcmp(f[0], "raw") == 0)
      check_raw_row(f, nf);
    else
      tap_ok(0, "unknown row kind '%s' in %s", f[0], path);
    free(save);
  }
  free(text);
}

/* ---- seeding API ------------------------------------------------------------------------ */

static int same_stream(ns_rng *a, ns_rng *b) {
  for (int i = 0; i < 16; i++)
    if (ns_rng_next_u64(a) != ns_rng_next_u64(b)) return 0;
  return 1;
}

static void check_seeding(void) {
  ns_rng a, b;
  char err[NS_ERRLEN];

  /* The three seeding routes agree. 2^63 + 5 needs two words; 4294967295 one. */
  const struct {
    const char *dec;
    uint64_t u;
  } cases[] = {{"0", 0},
               {"124", 124},
               {"4294967295", 4294967295u},
               {"4294967296", 4294967296u},
               {"9223372036854775813", 9223372036854775813u},
               {"18446744073709551615", UINT64_MAX}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ns_rng_seed_u64(&a, cases[i].u);
    int rc = ns_rng_seed_decimal(&b, cases[i].dec, err);
    tap_ok(rc == 0 && same_stream(&a, &b), "seed_u64(%s) and seed_decimal(\"%s\") agree",
           cases[i].dec, cases[i].dec);
  }
  uint32_t w[3] = {5, 0, 1}; /* 2^64 + 5 */
  ns_rng_seed_words(&a, w, 3);
  tap_ok(ns_rng_seed_decimal(&b, "18446744073709551621", err) == 0 && same_stream(&a, &b),
         "seed_words {5,0,1} equals decimal 2^64+5");
  ns_rng_seed_u64(&a, 124);
  tap_ok(ns_rng_seed_decimal(&b, "000124", err) == 0 && same_stream(&a, &b),
         "leading zeros do not change the seed");

  /* Bad decimal seeds are refused with a message naming the input. */
  const char *bad[] = {"", "-1", "12a", " 1", "1.5", "0x10", "+3"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err[0] = '\0';
    int rc = ns_rng_seed_decimal(&b, bad[i], err);
    tap_ok(rc == -1 && strstr(err, "seed") != NULL, "seed_decimal(\"%s\") refused: %s", bad[i],
           err);
  }
  tap_ok(ns_rng_seed_decimal(&b, NULL, NULL) == -1, "seed_decimal(NULL) refused without err");
  /* A very long seed (beyond the small stack buffer) works: 1000 nines. */
  char *big = malloc(1001);
  memset(big, '9', 1000);
  big[1000] = '\0';
  tap_ok(ns_rng_seed_decimal(&b, big, err) == 0, "a 1000-digit seed is accepted");
  free(big);

  /* Basic range facts over many draws. */
  ns_rng_seed_u64(&a, 1);
  double lo = 1, hi = 0;
  for (int i = 0; i < 100000; i++) {
    double u = ns_rng_random(&a);
    if (u < lo) lo = u;
    if (u > hi) hi = u;
  }
  tap_ok(lo >= 0 && hi < 1 && lo < 1e-3 && hi > 1 - 1e-3, "random() in [0,1): min %g max %.17g", lo,
         hi);
  /* normal(loc, 0) is loc exactly; normal(0, 1) is the standard normal draw itself. */
  ns_rng_seed_u64(&a, 3);
  ns_rng_seed_u64(&b, 3);
  tap_close(ns_rng_normal(&a, 2.5, 0.0), 2.5, 0, "normal(2.5, 0) = 2.5");
  tap_close(ns_rng_normal(&a, 0.0, 1.0), (ns_rng_standard_normal(&b), ns_rng_standard_normal(&b)),
            0, "normal(0, 1) continues the standard normal stream");
}

int main(void) {
  int rows = run_vectors();
  tap_ok(rows >= 15, "numpy-rng-vectors.tsv: %d data rows read", rows);
  run_extra();
  check_seeding();
  return tap_done();
}
