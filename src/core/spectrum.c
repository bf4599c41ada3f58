/* spectrum.c: the labelled spectrum of a normalization's Jacobian, in closed form and
 * numerically (the LAPACK wrappers it uses are in linalg.c). */
#include "core/spectrum.h"
#include "core/err.h"
#include "core/jvp.h"
#include "core/lanes.h"
#include "core/round.h"
#include "core/split.h"

#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ns_label_name(ns_label l) {
  switch (l) {
  case NS_LABEL_ONES:
    return "ones";
  case NS_LABEL_RADIAL:
    return "radial";
  case NS_LABEL_BULK:
    return "bulk";
  case NS_LABEL_MASKED:
    return "masked";
  }
  return "?";
}

/* ---- labelled spectra ------------------------------------------------------------ */

/* Eigenvalues closer than this are one value (merged, or one cluster for labelling):
 * generous enough to absorb LAPACK's rounding and the ~1e-10 noise of a
 * finite-difference Jacobian, far tighter than any gap the closed form predicts. */
static double tol_of(double mx, double noise) { /* mx: the largest finite |value| */
  return 1e-8 * mx + noise + 1e-12;
}

static double merge_tol(const ns_eig *e, size_t k, double noise) {
  double mx = 0;
  for (size_t i = 0; i < k; i++)
    if (isfinite(e[i].value)) mx = fmax(mx, hypot(e[i].value, e[i].imag));
  return tol_of(mx, noise);
}

/* NaN sorts after everything; otherwise ascending. */
static int cmp_num(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) - isnan(b);
  return (a > b) - (a < b);
}

static int cmp_label_first(const void *pa, const void *pb) {
  const ns_eig *a = pa, *b = pb;
  if (a->label != b->label) return a->label < b->label ? -1 : 1;
  int c = cmp_num(a->value, b->value);
  return c ? c : cmp_num(a->imag, b->imag);
}

static int cmp_value_first(const void *pa, const void *pb) {
  const ns_eig *a = pa, *b = pb;
  int c = cmp_num(a->value, b->value);
  if (c) return c;
  c = cmp_num(a->imag, b->imag);
  if (c) return c;
  return (a->label > b->label) - (a->label < b->label);
}

static int near(double a, double b, double tol) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  if (a == b) return 1; /* also equal infinities */
  return fabs(a - b) <= tol;
}

/* ---- the sort of a large list of real entries: radix sorts, the order of the qsorts ----
 * A closed form has up to three entries a statistic (786,432 for the 262,144 statistics
 * of a (64,256,32,32) batch reduced over axis 1 alone), and qsort's comparisons of them
 * took 130 ms of a key. Real values (imag 0) sort as 64-bit keys instead, stably: by value
 * (six 11-bit passes), then by label (one counting pass); after the merge of equal values,
 * the labels' sorted runs are merged by value in one pass. Keys order as cmp_num does: -0 and +0
 * are one key, every NaN one key after all numbers; equal keys keep their order, and entries the
 * qsorts would see as equal are equal in everything merge_out reads, so the result is the qsorts'
 * (tested). */

typedef struct { /* a real entry and its key: sorted whole, read in order after */
  uint64_t key;
  double value;
  uint32_t label;
  int32_t mult;
} eig_key;

static uint64_t value_key(double v) {
  if (isnan(v)) return UINT64_MAX;
  v += 0.0; /* -0 -> +0 */
  uint64_t u;
  memcpy(&u, &v, sizeof u);
  return u >> 63 ? ~u : u | (UINT64_C(1) << 63);
}

/* stable LSD radix sort of a[0..n) by key, 11 bits a pass (6 passes; one where every key has
 * the same digit is skipped); tmp holds n. -1 when out of memory. One body for each element
 * type with a uint64_t key. */
#define NS_RADIX_BITS 11
#define NS_RADIX_PASSES 6
#define RADIX_BY_KEY(NAME, T, BITS, PASSES)                                                        \
  static int NAME(T *a, T *tmp, size_t n) {                                                        \
    const size_t nb = (size_t)1 << (BITS), mask = nb - 1;                                          \
    size_t *cnt = calloc((PASSES)*nb, sizeof *cnt);                                                \
    if (!cnt) return -1;                                                                           \
    for (size_t i = 0; i < n; i++)                                                                 \
      for (int b = 0; b < (PASSES); b++) cnt[b * nb + ((a[i].key >> ((BITS)*b)) & mask)]++;        \
    T *src = a, *dst = tmp;                                                                        \
    for (int b = 0; b < (PASSES); b++) {                                                           \
      size_t *c = cnt + b * nb;                                                                    \
      const int sh = (BITS)*b;                                                                     \
      if (c[(src[0].key >> sh) & mask] == n) continue; /* one digit: already in order */           \
      size_t pos = 0;                                                                              \
      for (size_t v = 0; v < nb; v++) {                                                            \
        size_t k = c[v];                                                                           \
        c[v] = pos;                                                                                \
        pos += k;                                                                                  \
      }                                                                                            \
      for (size_t i = 0; i < n; i++) dst[c[(src[i].key >> sh) & mask]++] = src[i];                 \
      T *t = src;                                                                                  \
      src = dst, dst = t;                                                                          \
    }                                                                                              \
    if (src != a) memcpy(a, src, n * sizeof *a);                                                   \
    free(cnt);                                                                                     \
    return 0;                                                                                      \
  }
RADIX_BY_KEY(radix_by_key, eig_key, NS_RADIX_BITS, NS_RADIX_PASSES)

/* A value's sort key alone: the closed form's sort (ns_eig_merge_closed) */
typedef struct {
  uint64_t key;
} key8;
RADIX_BY_KEY(radix_key8, key8, 8, 8)

/* stable counting sort of a[0..n) by label */
static void count_by_label(eig_key *a, eig_key *tmp, size_t n) {
  size_t cnt[NS_LABEL_MASKED + 2] = {0};
  for (size_t i = 0; i < n; i++) cnt[a[i].label + 1]++;
  for (int l = 1; l <= NS_LABEL_MASKED + 1; l++) cnt[l] += cnt[l - 1];
  for (size_t i = 0; i < n; i++) tmp[cnt[a[i].label]++] = a[i];
  memcpy(a, tmp, n * sizeof *a);
}

/* e sorted as qsort(cmp_label_first) sorts it, when every entry is real: 0, or -1 (the
 * caller's qsort instead) */
static int radix_eigs(ns_eig *e, size_t k) {
  if (k < 2) return -1;
  for (size_t i = 0; i < k; i++)
    if (e[i].imag != 0 || (unsigned)e[i].label > NS_LABEL_MASKED) return -1;
  eig_key *a = malloc(2 * k * sizeof *a);
  if (!a) return -1;
  for (size_t i = 0; i < k; i++)
    a[i] = (eig_key){value_key(e[i].value), e[i].value, (uint32_t)e[i].label, e[i].mult};
  if (radix_by_key(a, a + k, k) != 0) { /* by value, then (stably) by label */
    free(a);
    return -1;
  }
  count_by_label(a, a + k, k);
  for (size_t i = 0; i < k; i++) e[i] = (ns_eig){a[i].value, 0, (ns_label)a[i].label, a[i].mult};
  free(a);
  return 0;
}

/* e (w real entries sorted by label, then value, no two of a label with equal keys: merged)
 * put in the order of qsort(cmp_value_first): one merge of the labels' runs by (value,
 * label), O(w). 0, or -1 (the caller's qsort instead). */
static int merge_runs_by_value(ns_eig *e, size_t w) {
  if (w < 2) return -1;
  for (size_t i = 0; i < w; i++)
    if (e[i].imag != 0 || (i && e[i].label < e[i - 1].label)) return -1;
  ns_eig *t = malloc(w * sizeof *t);
  if (!t) return -1;
  size_t head[NS_LABEL_MASKED + 2], end[NS_LABEL_MASKED + 2];
  int nr = 0;
  for (size_t i = 0; i < w; nr++) { /* the runs: one per label present */
    head[nr] = i;
    while (i < w && e[i].label == e[head[nr]].label) i++;
    end[nr] = i;
  }
  for (size_t o = 0; o < w; o++) {
    int best = -1;
    uint64_t bk = 0;
    for (int r = 0; r < nr; r++) { /* the smallest head; ties to the lower label */
      if (head[r] == end[r]) continue;
      uint64_t k = value_key(e[head[r]].value);
      if (best < 0 || k < bk) best = r, bk = k;
    }
    t[o] = e[head[best]++];
  }
  memcpy(e, t, w * sizeof *e);
  free(t);
  return 0;
}

/* Values equal within tol but of different labels (the ones and radial zeros when eps = 0)
 * ordered by label, in e[0..w) sorted by value, so rounding noise never decides the order. */
static void order_near_by_label(ns_eig *e, size_t w, double tol) {
  for (size_t lo = 0, hi; lo < w; lo = hi) {
    for (hi = lo + 1;
         hi < w && near(e[hi].value, e[lo].value, tol) && near(e[hi].imag, e[lo].imag, tol); hi++)
      ;
    if (hi - lo > 1) qsort(e + lo, hi - lo, sizeof *e, cmp_label_first);
  }
}

static int too_many(const char *fn, size_t w, size_t cap, char *err) {
  ns_seterr(err, "%s: %zu distinct eigenvalues do not fit in an output of %zu", fn, w, cap);
  return -1;
}

/* Below this many entries the qsorts are as quick. */
#define NS_EIG_RADIX_MIN 2048

/* Merges entries of equal label whose values agree within tol (each group keeps its
 * first, smallest value and sums the multiplicities), sorts by value, and copies them
 * to out. Returns the count, or -1 when out holds fewer than needed. radix: 1 sorts real
 * entries as keys (the same order), 0 with qsort alone, -1 by the size. */
static int merge_out_sorted(ns_eig *e, size_t k, double noise, ns_eig *out, size_t cap,
                            const char *fn, int radix, char *err) {
  double tol = merge_tol(e, k, noise);
  if (radix < 0) radix = k >= NS_EIG_RADIX_MIN;
  if (!radix || radix_eigs(e, k) != 0) qsort(e, k, sizeof *e, cmp_label_first);
  size_t w = 0;
  for (size_t i = 0; i < k; i++) {
    if (w > 0 && e[w - 1].label == e[i].label && near(e[w - 1].value, e[i].value, tol) &&
        near(e[w - 1].imag, e[i].imag, tol)) {
      e[w - 1].mult += e[i].mult;
      continue;
    }
    e[w++] = e[i];
  }
  if (!radix || merge_runs_by_value(e, w) != 0) qsort(e, w, sizeof *e, cmp_value_first);
  order_near_by_label(e, w, tol);
  if (w > cap) return too_many(fn, w, cap, err);
  if (out != e) memcpy(out, e, w * sizeof *e);
  return (int)w;
}

static int merge_out(ns_eig *e, size_t k, double noise, ns_eig *out, size_t cap, const char *fn,
                     char *err) {
  return merge_out_sorted(e, k, noise, out, cap, fn, -1, err);
}

int ns_eig_merge(ns_eig *e, size_t k, double noise, ns_eig *out, size_t cap, int radix, char *err) {
  if (!e || !out) {
    ns_seterr(err, "eig_merge: %s is NULL", !e ? "entry list" : "output");
    return -1;
  }
  return merge_out_sorted(e, k, noise, out, cap, "eig_merge", radix, err);
}

/* The value whose key is k (value_key's inverse): exact but for -0 (read as +0) and NaN
 * (one NaN), where near() decides as it does for the value itself. */
static double key_value(uint64_t k) {
  uint64_t u = k >> 63 ? k & ~(UINT64_C(1) << 63) : ~k;
  double v;
  memcpy(&v, &u, sizeof v);
  return v;
}

/* One label's values for ns_eig_merge_closed: their buffer turned into their sorted keys
 * (stably), the first zero and the first NaN in index order, the values a group headed by
 * the zero or the NaN key keeps (the keys lose -0's sign and a NaN's bits), and the sizes
 * of its groups (glen[0..ng): those within tol of their first, as merge_out_sorted merges
 * them). */
typedef struct {
  double *v; /* the values in, then (the same memory) the keys */
  const key8 *k;
  size_t n, head, *glen, ng, gi;
  double zero, nan;
  ns_label label;
  int mult, rc;
  key8 *tmp; /* the sort's n keys of scratch, then glen */
} closed_run;

/* The size of the group of r's sorted values that starts at i (the values are read off
 * the keys, which keep what near() reads) */
static size_t closed_group(const closed_run *r, size_t i, double tol) {
  double first = key_value(r->k[i].key);
  size_t j = i + 1;
  while (j < r->n && near(first, key_value(r->k[j].key), tol)) j++;
  return j - i;
}

static void closed_run_make(closed_run *r, double tol) {
  const size_t n = r->n;
  int zero = 0, nan = 0;
  key8 *k = (key8 *)(void *)r->v; /* the same memory, from here on keys */
  for (size_t i = 0; i < n; i++) {
    double x;
    memcpy(&x, &k[i], sizeof x);
    if (x == 0 && !zero) r->zero = x, zero = 1;
    if (x != x && !nan) r->nan = x, nan = 1;
    k[i].key = value_key(x);
  }
  r->k = k;
  r->rc = radix_key8(k, r->tmp, n);
  if (r->rc != 0) return;
  /* the scratch holds the group sizes now: at most n of them, each no wider than a key */
  r->glen = (size_t *)(void *)r->tmp;
  for (size_t i = 0; i < n; i += r->glen[r->ng++]) r->glen[r->ng] = closed_group(r, i, tol);
}

typedef struct {
  closed_run *run;
  double tol;
} closed_job;

static void closed_runs_part(void *ctx, size_t a, size_t z) {
  closed_job *j = ctx;
  for (size_t r = a; r < z; r++) closed_run_make(&j->run[r], j->tol);
}

_Static_assert(sizeof(size_t) <= sizeof(key8), "a group size fits where a key was");

int ns_eig_merge_closed(int nones, double *radial, double *bulk, int nbulk, size_t nstat,
                        ns_eig *out, size_t cap, int threads, char *err) {
  static const char fn[] = "spectrum";
  if (!out || (nstat && !radial && !bulk)) {
    ns_seterr(err, "eig_merge_closed: %s", !out ? "output is NULL" : "no values");
    return -1;
  }
  /* the tolerance of the list (merge_tol: the largest finite |value|) */
  double mx = 0;
  for (size_t st = 0; st < nstat; st++) {
    if (radial && isfinite(radial[st])) mx = fmax(mx, fabs(radial[st]));
    if (bulk && isfinite(bulk[st])) mx = fmax(mx, fabs(bulk[st]));
  }
  const double tol = tol_of(mx, 0);
  /* the runs, in label order after the ones entry: radial, bulk; sorted side by side (on
     a thread each when threads > 1: each run is its own, the same bits) */
  closed_run run[2];
  int nr = 0;
  double *vals[2] = {radial, bulk};
  const ns_label labels[2] = {NS_LABEL_RADIAL, NS_LABEL_BULK};
  const int mults[2] = {1, nbulk};
  int nv = (radial != NULL) + (bulk != NULL);
  key8 *tmp = nstat ? malloc(nstat * (size_t)nv * sizeof *tmp) : NULL;
  if (nstat && !tmp) {
    ns_seterr(err, "%s: out of memory", fn);
    return -1;
  }
  for (int q = 0; q < 2; q++)
    if (vals[q]) {
      closed_run *r = &run[nr];
      memset(r, 0, sizeof *r);
      r->v = vals[q], r->n = nstat, r->label = labels[q], r->mult = mults[q], r->nan = NAN;
      r->tmp = tmp + (size_t)nr * nstat;
      nr++;
    }
  closed_job job = {run, tol};
  ns_split_run((size_t)nr, nstat >= NS_EIG_RADIX_MIN ? threads : 1, closed_runs_part, &job);
  int rc = 0;
  size_t w = nones > 0;
  for (int r = 0; r < nr; r++) rc |= run[r].rc, w += run[r].ng;
  if (rc != 0) {
    free(tmp);
    ns_seterr(err, "%s: out of memory", fn);
    return -1;
  }
  if (w > cap) {
    free(tmp);
    return too_many(fn, w, cap, err);
  }
  /* merged by value as merge_runs_by_value does: the smallest head, ties to the lower label */
  int ones_left = nones > 0;
  const uint64_t ones_key = value_key(0.0);
  for (size_t o = 0; o < w; o++) {
    int best = ones_left ? -1 : -2;
    uint64_t bk = ones_key;
    for (int r = 0; r < nr; r++) {
      if (run[r].head == run[r].n) continue;
      uint64_t k = run[r].k[run[r].head].key;
      if (best == -2 || k < bk) best = r, bk = k;
    }
    if (best == -1) {
      out[o] = (ns_eig){0.0, 0, NS_LABEL_ONES, nones};
      ones_left = 0;
      continue;
    }
    closed_run *q = &run[best];
    size_t g = q->glen[q->gi++];
    double val = key_value(bk);
    if (val == 0) val = q->zero;
    if (val != val) val = q->nan;
    out[o] = (ns_eig){val, 0, q->label, (int)g * q->mult};
    q->head += g;
  }
  free(tmp);
  order_near_by_label(out, w, tol);
  return (int)w;
}

/* Shared set-up: argument checks and the reduction plan. */
static int prepare(const char *fn, const ns_tensor *x, const ns_spec *spec, const void *out,
                   ns_norm_plan *p, char *err) {
  memset(p, 0, sizeof *p);
  if (!x || !spec || !out) {
    ns_seterr(err, "%s: %s is NULL", fn, !x ? "input tensor" : !spec ? "spec" : "output array");
    return -1;
  }
  return ns_spec_prepare(fn, x, spec, p, 1, err);
}

/* Per-statistic centred values c[0..m-1] of xv over members mem, and the denominator
 * s (returned). */
static double stat_denom(const double *xv, const size_t *mem, size_t m, const ns_spec *spec,
                         int center, double *c) {
  double mean = 0, ss = 0;
  if (center) {
    for (size_t a = 0; a < m; a++) mean += xv[mem[a]];
    mean /= (double)m;
  }
  for (size_t a = 0; a < m; a++) {
    c[a] = xv[mem[a]] - mean;
    ss += c[a] * c[a];
  }
  double var = ss / ((double)m - spec->ddof);
  return spec->eps_at == NS_EPS_STD ? sqrt(var) + spec->eps : sqrt(var + spec->eps);
}

/* The denominator of a statistic from its m2 (the same arithmetic as stat_denom). */
static double denom_of_m2(double m2, size_t m, const ns_spec *spec) {
  double var = m2 / ((double)m - spec->ddof);
  return spec->eps_at == NS_EPS_STD ? sqrt(var) + spec->eps : sqrt(var + spec->eps);
}

/* Eval-mode denominators per statistic as ns_normalize resolves them (fp64, running
 * statistics). */
static int eval_denoms(const ns_tensor *x, const ns_spec *spec, double *denom, char *err) {
  ns_spec s = *spec;
  s.dtype = NS_FP64;
  s.acc = NS_FP64;
  ns_tensor *xt = ns_tensor_new(x->rank, x->shape, NS_FP64, err);
  if (!xt) return -1;
  ns_tensor_read(x, (double *)xt->data);
  ns_norm_result r;
  memset(&r, 0, sizeof r);
  int rc = ns_normalize(xt, &s, &r, err);
  if (rc == 0) memcpy(denom, r.denom, r.plan.nstat * sizeof *denom);
  ns_norm_result_free(&r);
  ns_tensor_free(xt);
  return rc;
}

/* gamma of each statistic into g (nstat values) when it is constant over the statistic's
 * members; returns 0 when it is not (no closed form), 1 when it is. Without gamma, or a
 * broadcast one, O(nstat); otherwise one walk over the elements. */
static int gamma_per_stat(const ns_spec *spec, const ns_norm_plan *p, double *g) {
  if (!spec->gamma || spec->ngamma == 1) {
    double g0 = spec->gamma ? spec->gamma[0] : 1.0;
    for (size_t k = 0; k < p->nstat; k++) g[k] = g0;
    return 1;
  }
  unsigned char *seen = calloc(p->nstat, 1);
  if (!seen) return -1;
  int ok = 1;
  for (size_t i = 0; i < p->n && ok; i++) {
    size_t k = ns_norm_plan_stat_of(p, i);
    double gi = ns_spec_gamma(spec, p, i);
    if (!seen[k])
      g[k] = gi, seen[k] = 1;
    else if (g[k] != gi)
      ok = 0;
  }
  free(seen);
  return ok;
}

int ns_spectrum_closed_m2(const ns_tensor *x, const ns_spec *spec, const double *m2, ns_eig *out,
                          size_t cap, int threads, char *err) {
  static const char fn[] = "spectrum";
  if (spec && spec->mask) return ns_spectrum_closed_masked(x, spec, out, cap, err);
  ns_norm_plan p;
  memset(&p, 0, sizeof p);
  if (!x || !spec || !out) {
    ns_seterr(err, "%s: %s is NULL", fn, !x ? "input tensor" : !spec ? "spec" : "output array");
    return -1;
  }
  if (ns_spec_prepare(fn, x, spec, &p, 0, err) != 0) return -1;
  size_t m = p.count, nstat = p.nstat, k = 0;
  int center = ns_spec_center(spec), rc = -1;
  /* A large train-mode closed form is sorted from its values (ns_eig_merge_closed), with
     no list of entries. Otherwise the entries are made in out itself when they fit there
     (it is written in the end anyway), so their memory is faulted in once, not twice. */
  int eval = ns_spec_eval_running(spec, x->rank), fast = !eval && 3 * nstat >= NS_EIG_RADIX_MIN;
  ns_eig *e = fast ? NULL : 3 * nstat <= cap ? out : malloc(3 * nstat * sizeof *e);
  double *g = malloc(nstat * sizeof *g), *s = malloc(nstat * sizeof *s);
  double *own = m2 ? NULL : malloc(nstat * sizeof *own);
  if ((!fast && !e) || !g || !s || (!m2 && !own)) {
    ns_seterr(err, "%s: out of memory", fn);
    goto done;
  }
  int gc = gamma_per_stat(spec, &p, g);
  if (gc < 0) {
    ns_seterr(err, "%s: out of memory", fn);
    goto done;
  }
  if (eval) {
    /* J = diag(g_i / s_i): every direction is bulk, one value per statistic when gamma is
     * constant on it (a batch kind's gamma is per channel, so it is) */
    if (!gc) { /* gamma varies within a statistic: one entry per element */
      double *d = malloc(nstat * sizeof *d);
      ns_eig *pe = malloc(x->n * sizeof *pe);
      if (!d || !pe || eval_denoms(x, spec, d, err)) {
        if (!d || !pe) ns_seterr(err, "%s: out of memory", fn);
        free(d), free(pe);
        goto done;
      }
      for (size_t i = 0; i < x->n; i++)
        pe[i] = (ns_eig){ns_spec_gamma(spec, &p, i) / d[ns_norm_plan_stat_of(&p, i)], 0,
                         NS_LABEL_BULK, 1};
      rc = merge_out(pe, x->n, 0, out, cap, fn, err);
      free(d), free(pe);
      goto done;
    }
    if (eval_denoms(x, spec, s, err)) goto done;
    for (size_t st = 0; st < nstat; st++)
      e[k++] = (ns_eig){g[st] / s[st], 0, NS_LABEL_BULK, (int)m};
    rc = merge_out(e, k, 0, out, cap, fn, err);
    goto done;
  }
  if (!gc) { /* no closed form: J is not g times a symmetric block */
    rc = 0;
    goto done;
  }
  if (!m2) {
    if (ns_stat_moments(x, &p, center, NULL, own, err)) goto done;
    m2 = own;
  }
  /* each statistic's radial value into s and bulk value into g (its gamma read first) */
  for (size_t st = 0; st < nstat; st++) {
    double sd = denom_of_m2(m2[st], m, spec), gs = g[st];
    /* radial: J c = g eps/s^3 c (eps in the sqrt) or g eps/s^2 c (eps added to the std) */
    double radial =
        spec->eps_at == NS_EPS_STD ? gs * spec->eps / (sd * sd) : gs * spec->eps / (sd * sd * sd);
    s[st] = radial + 0.0; /* -0 (negative gamma, eps 0) shows as 0 */
    g[st] = gs / sd;
  }
  size_t nbulk = center ? (m >= 2 ? m - 2 : 0) : m - 1;
  int has_radial = !center || m >= 2;
  /* every statistic's ones eigenvalue is 0: one entry for all (the merge would make it) */
  if (fast) {
    rc = ns_eig_merge_closed(center ? (int)nstat : 0, has_radial ? s : NULL, nbulk ? g : NULL,
                             (int)nbulk, nstat, out, cap, threads, err);
    goto done;
  }
  if (center) e[k++] = (ns_eig){0.0, 0, NS_LABEL_ONES, (int)nstat};
  for (size_t st = 0; st < nstat; st++) {
    if (has_radial) e[k++] = (ns_eig){s[st], 0, NS_LABEL_RADIAL, 1};
    if (nbulk) e[k++] = (ns_eig){g[st], 0, NS_LABEL_BULK, (int)nbulk};
  }
  rc = merge_out(e, k, 0, out, cap, fn, err);
done:
  if (e != out) free(e);
  free(g), free(s), free(own);
  ns_norm_plan_free(&p);
  return rc;
}

int ns_spectrum_closed(const ns_tensor *x, const ns_spec *spec, ns_eig *out, size_t cap,
                       char *err) {
  return ns_spectrum_closed_m2(x, spec, NULL, out, cap, 1, err);
}

/* ---- the closed form checked along its eigenvectors, without J ------------------ */

/* A statistic whose members are one run of x (its reduced axes are the trailing ones, no
 * channel groups): statistic k is x[k count .. (k + 1) count). */
static int members_contiguous(const ns_norm_plan *p) {
  if (p->groups > 1) return 0;
  unsigned all = (1u << p->rank) - 1, ax = p->axes & all;
  if (!ax) return 0;
  unsigned low = ax & (~ax + 1u); /* the lowest reduced axis */
  return ax == (all & ~(low - 1u));
}

/* ns_stat_block, or with view set a borrowed block: when x is fp64 and the statistic's
 * members are one run of it, *view is a rank-1 tensor over that run (x's data, not owned:
 * read it, never free it) and *out is NULL; the map and its gamma are as ns_stat_block's. */
static int stat_block(const ns_tensor *x, const ns_spec *spec, size_t stat, ns_tensor *view,
                      ns_tensor **out, ns_spec *out_spec, double *g, char *err) {
  static const char fn[] = "stat_block";
  if (!x || !spec || !out || !out_spec || !g) {
    ns_seterr(err, "%s: %s is NULL", fn, !x ? "input tensor" : !spec ? "spec" : "an output");
    return -1;
  }
  if (ns_mask_unsupported(spec, fn, err)) return -1;
  *out = NULL;
  ns_norm_plan p;
  if (ns_spec_prepare(fn, x, spec, &p, 0, err) != 0) return -1;
  if (stat >= p.nstat) {
    ns_seterr(err, "%s: statistic %zu of %zu", fn, stat + 1, p.nstat);
    ns_norm_plan_free(&p);
    return -1;
  }
  if (ns_spec_eval_running(spec, x->rank)) { /* J is diagonal: no block map */
    ns_norm_plan_free(&p);
    return 0;
  }
  size_t m = p.count;
  int center = ns_spec_center(spec), rc = -1;
  int run = view && x->dtype == NS_FP64 && members_contiguous(&p);
  size_t *idx = run ? NULL : malloc(m * sizeof *idx), first = stat * m;
  if (!run && !idx) {
    ns_seterr(err, "%s: out of memory", fn);
    goto done;
  }
  if (!run && ns_stat_members(&p, stat, idx, err)) goto done;
#define MEMBER(a) (run ? first + (a) : idx[a])
  *g = ns_spec_gamma(spec, &p, MEMBER(0));
  if (spec->gamma && spec->ngamma > 1) /* one gamma is constant everywhere */
    for (size_t a = 1; a < m; a++)
      if (ns_spec_gamma(spec, &p, MEMBER(a)) != *g) { /* no closed form on this statistic */
        rc = 0;
        goto done;
      }
#undef MEMBER
  size_t shape1[1] = {m};
  if (run) { /* the run itself: no copy */
    memset(view, 0, sizeof *view);
    view->rank = 1;
    view->shape[0] = m;
    for (int a = 1; a < NS_MAXRANK; a++) view->shape[a] = 1;
    view->n = m;
    view->dtype = NS_FP64;
    view->data = (double *)x->data + first;
  } else {
    /* the values straight into the block's fp64 tensor (no zeroed copy filled element by
       element): at 1e6 members that copy was a tenth of the check */
    if (!(*out = ns_tensor_new_uninit(1, shape1, NS_FP64, err))) goto done;
    double *xk = (*out)->data;
    if (x->dtype == NS_FP64) {
      const double *xv = x->data;
      for (size_t a = 0; a < m; a++) xk[a] = xv[idx[a]];
    } else
      for (size_t a = 0; a < m; a++) xk[a] = ns_tensor_get(x, idx[a]);
  }
  ns_spec_default(out_spec);
  out_spec->kind = center ? NS_KIND_LAYER : NS_KIND_RMS;
  out_spec->center = center;
  out_spec->eps = spec->eps;
  out_spec->eps_at = spec->eps_at;
  out_spec->ddof = spec->ddof;
  out_spec->gamma = g;
  out_spec->ngamma = 1;
  rc = 1;
done:
  free(idx);
  ns_norm_plan_free(&p);
  return rc;
}

int ns_stat_block(const ns_tensor *x, const ns_spec *spec, size_t stat, ns_tensor **out,
                  ns_spec *out_spec, double *g, char *err) {
  return stat_block(x, spec, stat, NULL, out, out_spec, g, err);
}

/* The check's sums and vector loops: lanes.h. */
#define CK_PERIOD ((size_t)1 << 17) /* of the bulk pattern (below) */

/* The labelled directions of the check, value by value. Each value is computed where a
 * pass needs it, by the one expression below, rather than stored and read back (at 1e6
 * values a direction is 8 MB of memory traffic each way):
 * - ones: every entry `one` (1/sqrt(m));
 * - radial: r_i = (x_i - mean) rn, the unit vector along x - mean (RMS: x);
 * - bulk: a fixed spread-out pattern of signs and sizes,
 *   p_i = ((i 2654435761 mod 2^32) >> 7 mod 1024) / 512 - 1, with the unit ones vector
 *   (coefficient c: one, or 0 for RMS) and r projected out twice (so it is orthogonal to
 *   them to rounding), then scaled to unit length:
 *   w_i = p_i - (dc1 + dr1 r_i), b_i = (w_i - (dc2 + dr2 r_i)) inv,
 *   with dc1 = (p.1) c^2, dr1 = p.r, dc2 = (w.1) c^2, dr2 = w.r, inv = 1 / |w - ...|.
 *   p_i depends on bits 7..16 of i 2654435761 alone, so its period is 2^17: a table of
 *   one period (1 MB at most, made once a check) gives it, where computing it took most
 *   of a pass's time. */
typedef struct {
  double one, mean, rn, dc1, dr1, dc2, dr2, inv;
  const double *pat; /* p_i = pat[i mod CK_PERIOD], the table padded by 3 (see ck_pattern) */
} ck_dirs;

static inline double bulk_pattern(size_t a) {
  return (double)(((uint32_t)a * 2654435761u >> 7) % 1024) / 512.0 - 1.0;
}
/* The table of p for m values: min(m, CK_PERIOD) + 3 entries (past a period they repeat
   its first, so four consecutive values from any i mod CK_PERIOD are in it); its length */
static size_t ck_pattern_len(size_t m) {
  return m < CK_PERIOD ? m + 3 : CK_PERIOD + 3;
}
static void ck_pattern(double *pat, size_t m) {
  for (size_t a = 0, n = ck_pattern_len(m); a < n; a++) pat[a] = bulk_pattern(a);
}
static inline const double *ck_pat(const ck_dirs *k, size_t i) {
  return k->pat + (i & (CK_PERIOD - 1));
}

/* r_i, w_i and w_i - (dc2 + dr2 r_i) of x_i, p_i and r_i: one text for a value and for a
   vector pair of them (below), so both take the same operations */
#define CK_RADIAL(k, x) (((x) - (k)->mean) * (k)->rn)
#define CK_BULK1(k, p, r) ((p) - ((k)->dc1 + (k)->dr1 * (r)))
#define CK_BULK2(k, p, r) (CK_BULK1(k, p, r) - ((k)->dc2 + (k)->dr2 * (r)))
/* direction lb's value i (x: x_i); lb a constant where it is called, so each loop is one
   direction's. Only the bulk direction reads the pattern: without one, k->pat is NULL. */
NS_ALWAYS_INLINE static inline double ck_value(const ck_dirs *k, ns_label lb, size_t i, double x) {
  return lb == NS_LABEL_ONES     ? k->one
         : lb == NS_LABEL_RADIAL ? CK_RADIAL(k, x)
                                 : CK_BULK2(k, *ck_pat(k, i), CK_RADIAL(k, x)) * k->inv;
}

/* the pair form of ck_value (lanes.h): values i and i + 1 */
NS_ALWAYS_INLINE static inline ns_v2 ck_value2(const ck_dirs *k, ns_label lb, size_t i, ns_v2 x) {
  if (lb == NS_LABEL_ONES) return (ns_v2){k->one, k->one};
  if (lb == NS_LABEL_RADIAL) return CK_RADIAL(k, x);
  return CK_BULK2(k, ns_v2_ld(ck_pat(k, i)), CK_RADIAL(k, x)) * k->inv;
}

/* LOOP(LB) with LB the constant label lb: each loop is compiled for one direction */
#define CK_BY_LABEL(lb, LOOP)                                                                      \
  do {                                                                                             \
    if ((lb) == NS_LABEL_ONES)                                                                     \
      LOOP(NS_LABEL_ONES);                                                                         \
    else if ((lb) == NS_LABEL_RADIAL)                                                              \
      LOOP(NS_LABEL_RADIAL);                                                                       \
    else                                                                                           \
      LOOP(NS_LABEL_BULK);                                                                         \
  } while (0)

/* The bulk direction's sums, in two passes over x: pass 0 p.1 and p.r; pass 1 w.1, w.r,
 * w.w, r.1 and r.r, from which |w - (dc2 + dr2 r)|^2 follows without a third pass (dc2 and
 * dr2 are the rounding the first projection left: the terms they weigh are tiny, and the
 * length only scales the direction). Per part, into s[part][sum]. */
typedef struct {
  const double *x;
  const ck_dirs *k;
  size_t m;
  int pass;
  double s[NS_LANE_PARTS][5];
} bulk_job;

/* S += T(p, r) for the four lanes of pairs a, b (p = p_i, r = r_i); the tail into lane 0 */
#define CK_ADD(S, T) (S##a += T(pa, ra), S##b += T(pb, rb))
#define CK_ADD1(S, T) (S##a[0] += T(p0, r0))
#define CK_LOOP(BODY4, BODY1)                                                                      \
  do {                                                                                             \
    for (; i + 4 <= hi; i += 4) {                                                                  \
      const double *p = ck_pat(k, i);                                                              \
      ns_v2 pa = ns_v2_ld(p), pb = ns_v2_ld(p + 2);                                                \
      ns_v2 ra = CK_RADIAL(k, ns_v2_ld(x + i)), rb = CK_RADIAL(k, ns_v2_ld(x + i + 2));            \
      BODY4;                                                                                       \
    }                                                                                              \
    for (; i < hi; i++) {                                                                          \
      double p0 = *ck_pat(k, i), r0 = CK_RADIAL(k, x[i]);                                          \
      BODY1;                                                                                       \
    }                                                                                              \
  } while (0)
#define P_1(p, r) (p)
#define P_R(p, r) ((p) * (r))
#define W_1(p, r) CK_BULK1(k, p, r)
#define W_R(p, r) (CK_BULK1(k, p, r) * (r))
#define W_W(p, r) (CK_BULK1(k, p, r) * CK_BULK1(k, p, r))
#define R_1(p, r) (r)
#define R_R(p, r) ((r) * (r))

static void bulk_part(void *ctx, size_t qa, size_t qz) {
  bulk_job *b = ctx;
  const ck_dirs *k = b->k;
  const double *x = b->x;
  for (size_t q = qa; q < qz; q++) {
    size_t i = NS_LANE_LO(q, b->m), hi = NS_LANE_LO(q + 1, b->m);
    ns_v2 s0a = {0, 0}, s0b = {0, 0}, s1a = {0, 0}, s1b = {0, 0}, s2a = {0, 0}, s2b = {0, 0};
    ns_v2 s3a = {0, 0}, s3b = {0, 0}, s4a = {0, 0}, s4b = {0, 0};
    if (b->pass == 0)
      CK_LOOP((CK_ADD(s0, P_1), CK_ADD(s1, P_R)), (CK_ADD1(s0, P_1), CK_ADD1(s1, P_R)));
    else
      CK_LOOP((CK_ADD(s0, W_1), CK_ADD(s1, W_R), CK_ADD(s2, W_W), CK_ADD(s3, R_1), CK_ADD(s4, R_R)),
              (CK_ADD1(s0, W_1), CK_ADD1(s1, W_R), CK_ADD1(s2, W_W), CK_ADD1(s3, R_1),
               CK_ADD1(s4, R_R)));
    double *o = b->s[q];
    o[0] = ns_v2_sum4(s0a, s0b), o[1] = ns_v2_sum4(s1a, s1b), o[2] = ns_v2_sum4(s2a, s2b);
    o[3] = ns_v2_sum4(s3a, s3b), o[4] = ns_v2_sum4(s4a, s4b);
  }
}
#undef R_R
#undef R_1
#undef W_W
#undef W_R
#undef W_1
#undef P_R
#undef P_1
#undef CK_LOOP
#undef CK_ADD1
#undef CK_ADD

/* The bulk direction's coefficients into k (its one, mean, rn and pat set; c: the ones
 * coefficient). Returns the length before the scaling (not > 0: nothing is left, there
 * is no bulk direction). */
static double bulk_coefficients(ck_dirs *k, double c, const double *x, size_t m, int threads) {
  bulk_job b = {x, k, m, 0, {{0}}};
  double t[5];
  for (b.pass = 0; b.pass < 2; b.pass++) {
    ns_split_run(NS_LANE_PARTS, threads, bulk_part, &b);
    for (int j = 0; j < 5; j++) {
      t[j] = 0;
      for (int q = 0; q < NS_LANE_PARTS; q++) t[j] += b.s[q][j];
    }
    if (b.pass == 0)
      k->dc1 = t[0] * c * c, k->dr1 = t[1];
    else
      k->dc2 = t[0] * c * c, k->dr2 = t[1];
  }
  /* |w - a - b r|^2 = w.w - 2 (a w.1 + b w.r) + a^2 m + 2 a b r.1 + b^2 r.r */
  double a = k->dc2, bb = k->dr2;
  double n2 =
      t[2] - 2 * (a * t[0] + bb * t[1]) + a * a * (double)m + 2 * a * bb * t[3] + bb * bb * t[4];
  double nv = n2 > 0 ? sqrt(n2) : 0;
  k->inv = nv > 0 ? 1 / nv : 0;
  return nv;
}

/* The passes of the check around the JVP (which reduces J v to its residuals itself,
 * ns_jvp_resid), over the nd directions (lab[d]), split over threads by part:
 * - fill writes the directions' values into their rows v[d];
 * - in, after the JVP, writes the inputs of the two sides of the central differences,
 *   x + h v over v and x - h v into the rows after them: one (2 nd, m) tensor;
 * - out, after the map of those inputs, sums |(y+ - y-) / 2h - lambda v|^2 and finds the
 *   largest |y+|, with v recomputed from x. */
typedef struct {
  const double *x;
  const ck_dirs *k;
  double *const *v, *const *xm; /* row d of v (then of x + h v), and of x - h v */
  const double *y;              /* the map's output: (2 nd, m), the y+ rows first */
  const ns_label *lab;
  const double *lv;
  double h, inv2h;
  size_t m;
  int nd;
  double fs[3][NS_LANE_PARTS], ymax[3][NS_LANE_PARTS]; /* per direction and part */
} ck_job;

static void ck_fill_part(void *ctx, size_t qa, size_t qz) {
  ck_job *c = ctx;
  const ck_dirs *k = c->k;
  const double *restrict x = c->x;
  for (size_t q = qa; q < qz; q++)
    for (int d = 0; d < c->nd; d++) {
      double *restrict vd = c->v[d];
      size_t i = NS_LANE_LO(q, c->m), hi = NS_LANE_LO(q + 1, c->m);
#define CK_FILL(LB)                                                                                \
  do {                                                                                             \
    for (; i + 4 <= hi; i += 4) {                                                                  \
      ns_v2_st(vd + i, ck_value2(k, LB, i, ns_v2_ld(x + i)));                                      \
      ns_v2_st(vd + i + 2, ck_value2(k, LB, i + 2, ns_v2_ld(x + i + 2)));                          \
    }                                                                                              \
    for (; i < hi; i++) vd[i] = ck_value(k, LB, i, x[i]);                                          \
  } while (0)
      CK_BY_LABEL(c->lab[d], CK_FILL);
#undef CK_FILL
    }
}

static void ck_in_part(void *ctx, size_t qa, size_t qz) {
  ck_job *c = ctx;
  const double h = c->h;
  for (size_t q = qa; q < qz; q++)
    for (int d = 0; d < c->nd; d++) {
      size_t i = NS_LANE_LO(q, c->m), hi = NS_LANE_LO(q + 1, c->m);
      double *restrict vd = c->v[d], *restrict md = c->xm[d];
      const double *restrict x = c->x;
      for (; i + 4 <= hi; i += 4) {
        ns_v2 va = ns_v2_ld(vd + i), vb = ns_v2_ld(vd + i + 2);
        ns_v2 xa = ns_v2_ld(x + i), xb = ns_v2_ld(x + i + 2);
        ns_v2_st(vd + i, xa + h * va), ns_v2_st(vd + i + 2, xb + h * vb);
        ns_v2_st(md + i, xa - h * va), ns_v2_st(md + i + 2, xb - h * vb);
      }
      for (; i < hi; i++) {
        double v0 = vd[i];
        vd[i] = x[i] + h * v0, md[i] = x[i] - h * v0;
      }
    }
}

static void ck_out_part(void *ctx, size_t qa, size_t qz) {
  ck_job *c = ctx;
  const ck_dirs *k = c->k;
  const double *restrict x = c->x, inv2h = c->inv2h;
  for (size_t q = qa; q < qz; q++)
    for (int d = 0; d < c->nd; d++) {
      size_t i = NS_LANE_LO(q, c->m), hi = NS_LANE_LO(q + 1, c->m);
      const double *restrict yp = c->y + (size_t)d * c->m;
      const double *restrict ym = c->y + (size_t)(c->nd + d) * c->m;
      const double lv = c->lv[d];
      ns_v2 sa = {0, 0}, sb = {0, 0}, ya = {0, 0}, yb = {0, 0};
      /* the residual's sum and |y+|'s largest (a NaN output is in the sum: the maxima skip
         it) for direction LB */
#define CK_RESID(LB)                                                                               \
  do {                                                                                             \
    for (; i + 4 <= hi; i += 4) {                                                                  \
      ns_v2 pa = ns_v2_ld(yp + i), pb = ns_v2_ld(yp + i + 2);                                      \
      ns_v2 fa = (pa - ns_v2_ld(ym + i)) * inv2h - lv * ck_value2(k, LB, i, ns_v2_ld(x + i));      \
      ns_v2 fb =                                                                                   \
          (pb - ns_v2_ld(ym + i + 2)) * inv2h - lv * ck_value2(k, LB, i + 2, ns_v2_ld(x + i + 2)); \
      sa += fa * fa, sb += fb * fb;                                                                \
      ya = ns_v2_max(ns_v2_abs(pa), ya), yb = ns_v2_max(ns_v2_abs(pb), yb);                        \
    }                                                                                              \
    for (; i < hi; i++) {                                                                          \
      double f0 = (yp[i] - ym[i]) * inv2h - lv * ck_value(k, LB, i, x[i]);                         \
      double a0 = fabs(yp[i]);                                                                     \
      sa[0] += f0 * f0;                                                                            \
      ya[0] = a0 > ya[0] ? a0 : ya[0];                                                             \
    }                                                                                              \
  } while (0)
      CK_BY_LABEL(c->lab[d], CK_RESID);
#undef CK_RESID
      c->fs[d][q] = ns_v2_sum4(sa, sb);
      ya = ns_v2_max(ya, yb);
      c->ymax[d][q] = ya[0] > ya[1] ? ya[0] : ya[1];
    }
}

/* The (rows, m) fp64 tensor over data (a view: not owned, never freed). */
static void rows_view(ns_tensor *t, double *data, size_t rows, size_t m) {
  memset(t, 0, sizeof *t);
  t->rank = rows > 1 ? 2 : 1;
  t->shape[0] = rows > 1 ? rows : m;
  t->shape[1] = rows > 1 ? m : 1;
  for (int a = 2; a < NS_MAXRANK; a++) t->shape[a] = 1;
  t->n = rows * m;
  t->dtype = NS_FP64;
  t->data = data;
}

int ns_spectrum_check(const ns_tensor *x, const ns_spec *spec, size_t stat, ns_eigcheck *out,
                      int cap, char *err) {
  return ns_spectrum_check_exec(x, spec, stat, 1, out, cap, err);
}

int ns_spectrum_check_exec(const ns_tensor *x, const ns_spec *spec, size_t stat, int threads,
                           ns_eigcheck *out, int cap, char *err) {
  return ns_spectrum_check_moments(x, spec, stat, NULL, NULL, threads, out, cap, err);
}

int ns_spectrum_check_moments(const ns_tensor *x, const ns_spec *spec, size_t stat,
                              const double *smean, const double *sm2, int threads, ns_eigcheck *out,
                              int cap, char *err) {
  static const char fn[] = "spectrum_check";
  if (!x || !spec || !out || cap < 3) {
    ns_seterr(err, "%s: %s", fn,
              !x      ? "input tensor is NULL"
              : !spec ? "spec is NULL"
              : !out  ? "output array is NULL"
                      : "the output needs room for 3 checks");
    return -1;
  }
  if (ns_mask_unsupported(spec, fn, err)) return -1;
  /* Statistic k's block of J is J of the same map on its m values alone: a layer (or
   * RMS) norm of a vector with the statistic's gamma, in fp64 (x's own values when they
   * are fp64 and one run of x: no copy). */
  ns_tensor *xt = NULL, *wt = NULL, *pat = NULL, view;
  ns_spec s1;
  double g;
  int got = stat_block(x, spec, stat, &view, &xt, &s1, &g, err);
  if (got <= 0) return got;
  const ns_tensor *xb = xt ? xt : &view;
  size_t m = xb->n;
  int center = s1.center, rc = -1, nd = 0;
  const double *xk = xb->data;
  /* a thread costs about 50 us to start: worth it from 2^16 members (0.1 ms a pass) */
  int th = m >= ((size_t)1 << 16) ? threads : 1;
  /* the block's moments once, as ns_stat_moments gives them: for the closed form, the
     directions and the products (the same bits as each computing its own) */
  double mean = 0, m2 = 0;
  if (smean && sm2) { /* the caller's ns_stat_moments of x: the same values */
    mean = center ? *smean : 0, m2 = *sm2;
  } else {
    ns_norm_plan bp;
    if (ns_norm_plan_shape(1, xb->shape, &s1, &bp, err) != 0) goto done;
    int mrc = ns_stat_moments(xb, &bp, center, &mean, &m2, err);
    ns_norm_plan_free(&bp);
    if (mrc != 0) goto done;
  }
  ns_eig lam[3];
  int nl = ns_spectrum_closed_m2(xb, &s1, &m2, lam, 3, 1, err);
  if (nl < 0) goto done;
  /* the labelled directions: ones, radial (x - mean; RMS: x), bulk (a fixed pattern with
   * those two projected out) */
  double nc = sqrt(m2), rn = nc > 0 ? 1 / nc : 0;
  ck_dirs k = {1 / sqrt((double)m), mean, rn, 0, 0, 0, 0, 0, NULL};
  double sden = denom_of_m2(nc * nc, m, spec);
  /* the FD step: relative to the spread the map feels, c = sqrt(m) s (sqrt(m2 + m eps) with
   * eps in the variance and ddof 0), so each element moves by about cbrt(u) of it (balances
   * truncation, (h/c)^2, and rounding, u/h). Not |x - mean| alone: at zero variance eps
   * sets the curvature, and a step of |x - mean| = 0 (taken as 1) was far too long. */
  const double u = 0x1p-52, cu = cbrt(u);
  double cs = sden * sqrt((double)m);
  double spread = cs > 0 && isfinite(cs) ? cs : nc > 0 && isfinite(nc) ? nc : 1;
  double h = cu * spread;
  double scale = fabs(g) / sden; /* the size of J */
  ns_label lab[3];
  double val[3];
  for (int i = 0; i < nl; i++) {
    ns_label lb = lam[i].label;
    if (lb == NS_LABEL_RADIAL && !(nc > 0)) continue; /* all values equal: no radial direction */
    if (lb == NS_LABEL_BULK) {
      /* a tensor, so a sandbox's account is charged for it like the work block */
      size_t plen[1] = {ck_pattern_len(m)};
      if (!(pat = ns_tensor_new_uninit(1, plen, NS_FP64, err))) goto done;
      ck_pattern(pat->data, m);
      k.pat = pat->data;
      if (!(bulk_coefficients(&k, center ? k.one : 0, xk, m, th) > 0))
        continue; /* nothing is left of the pattern */
    }
    lab[nd] = lb, val[nd] = lam[i].value;
    nd++;
  }
  if (!nd) {
    rc = 0;
    goto done;
  }
  /* one block of 4 nd m values: the directions v (nd rows), then the inputs of the two
     sides of the differences (x + h v over v, then x - h v: one (2 nd, m) tensor), then
     the map's output. No allocation, copy or fresh page per direction. A tensor, not
     malloc: large ones get the 2 MB page hint (tensor.c), a 96 MB block at 1e6 elements
     otherwise faults in 4 KB at a time at every call */
  size_t shape1[1] = {4 * (size_t)nd * m};
  if (!(wt = ns_tensor_new_uninit(1, shape1, NS_FP64, err))) {
    ns_seterr(err, "%s: out of memory", fn);
    goto done;
  }
  double *work = wt->data, *v[3], *xm[3], js[3];
  for (int d = 0; d < nd; d++) v[d] = work + (size_t)d * m, xm[d] = work + (size_t)(nd + d) * m;
  ck_job c;
  memset(&c, 0, sizeof c);
  c.x = xk, c.k = &k, c.v = v, c.xm = xm, c.y = work + (size_t)(2 * nd) * m, c.lab = lab;
  c.lv = val, c.h = h, c.inv2h = 1 / (2 * h), c.m = m, c.nd = nd;
  ns_split_run(NS_LANE_PARTS, th, ck_fill_part, &c);
  /* J v by the JVP, checked against lambda v: ||J v - lambda v||^2 per direction */
  if (ns_jvp_resid(xb, &s1, &mean, &m2, nd, (const double *const *)v, val, th, js, err)) goto done;
  ns_split_run(NS_LANE_PARTS, th, ck_in_part, &c);
  /* central differences of ns_normalize along each direction: one map of the 2 nd inputs,
     its rows split over the threads (its statistics are the rows) */
  ns_exec ex;
  ns_exec_default(&ex);
  ex.threads = th;
  ns_tensor tin, tout;
  rows_view(&tin, work, (size_t)(2 * nd), m);
  rows_view(&tout, work + (size_t)(2 * nd) * m, (size_t)(2 * nd), m);
  ns_norm_result r;
  memset(&r, 0, sizeof r);
  int nrc = ns_normalize_into(&tin, &s1, &ex, &tout, &r, err);
  ns_norm_result_free(&r);
  if (nrc != 0) goto done;
  ns_split_run(NS_LANE_PARTS, th, ck_out_part, &c);
  for (int d = 0; d < nd; d++) {
    ns_eigcheck *o = &out[d];
    memset(o, 0, sizeof *o);
    o->label = lab[d];
    o->value = val[d];
    o->h = h;
    double fs = 0, ymax = 0;
    for (int q = 0; q < NS_LANE_PARTS; q++) {
      fs += c.fs[d][q];
      ymax = c.ymax[d][q] > ymax ? c.ymax[d][q] : ymax;
    }
    o->jvp_res = sqrt(js[d]);
    /* rounding of the sums over m terms (each off by up to m ulps): 4 m u of J's size */
    o->jvp_tol = 4 * u * ((double)m + 16) * scale;
    o->fd_res = sqrt(fs);
    /* ten times the truncation, (h/|c|)^2 of J's size, plus the rounding of y: its sums
     * over m terms make each y_i off by up to about m u |y|, which the 2h divides */
    double hr = h / spread;
    o->fd_tol = 10 * hr * hr * scale + 2 * u * (double)(m + 16) * fmax(ymax, 1) / h;
  }
  rc = nd;
done:
  ns_tensor_free(pat);
  ns_tensor_free(wt);
  ns_tensor_free(xt);
  return rc;
}

typedef struct {
  double pones, prad; /* squared projections of the unit eigenvector */
  size_t idx;
} proj_idx;

static int cmp_pones(const void *pa, const void *pb) {
  const proj_idx *a = pa, *b = pb;
  return (a->pones < b->pones) - (a->pones > b->pones); /* descending */
}

static int cmp_prad(const void *pa, const void *pb) {
  const proj_idx *a = pa, *b = pb;
  return (a->prad < b->prad) - (a->prad > b->prad);
}

/* The eigenvalues of J (n x n) as bulk-labelled e[0..n-1], with the eigenvectors in the
 * columns of V and the noise of J (as merge_tol takes it) in *noise. Symmetric to 1e-8 (a
 * finite-difference J is, to its noise): the symmetric part (into A, n x n scratch) and
 * dsyevr, whose eigenvectors are orthonormal; otherwise dgeev. wi must be zeroed. */
static int eig_of_J(const char *fn, const double *J, size_t n, double *A, double *wr, double *wi,
                    double *V, ns_eig *e, double *noise, char *err) {
  if (ns_check_finite_matrix(fn, J, n, n, err)) return -1;
  *noise = 0;
  if (ns_is_symmetric(J, n, 1e-8)) {
    /* The asymmetry measures the noise in J (zero for an analytic J, ~1e-10 for central
     * differences); eigenvalues of the symmetric part move by up to about sqrt(n) times
     * it, so values that close count as equal. */
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < n; j++) {
        A[i * n + j] = 0.5 * (J[i * n + j] + J[j * n + i]);
        *noise = fmax(*noise, fabs(J[i * n + j] - J[j * n + i]));
      }
    *noise *= 4 * sqrt((double)n);
    if (ns_eig_sym(A, n, wr, V, err)) return -1;
  } else if (ns_eig_general(J, n, wr, wi, V, err)) {
    return -1;
  }
  for (size_t k = 0; k < n; k++) e[k] = (ns_eig){wr[k], wi[k], NS_LABEL_BULK, 1};
  return 0;
}

/* The checks every numeric spectrum makes of its Jacobian before the plan. */
static int check_J(const char *fn, const ns_tensor *x, const double *J, char *err) {
  if (!J) {
    ns_seterr(err, "%s: Jacobian is NULL", fn);
    return -1;
  }
  if (x && x->n > NS_LINALG_MAXN) {
    ns_seterr(err, "%s: %zu elements is larger than the limit %d", fn, x->n, NS_LINALG_MAXN);
    return -1;
  }
  return 0;
}

int ns_spectrum_numeric(const ns_tensor *x, const ns_spec *spec, const double *J, ns_eig *out,
                        size_t cap, char *err) {
  static const char fn[] = "spectrum_numeric";
  if (spec && spec->mask) return ns_spectrum_numeric_masked(x, spec, J, out, cap, err);
  ns_norm_plan p;
  if (check_J(fn, x, J, err) || prepare(fn, x, spec, out, &p, err)) return -1;
  size_t n = x->n, m = p.count;
  int center = ns_spec_center(spec), rc = -1;
  double *A = malloc(n * n * sizeof *A), *V = malloc(n * n * sizeof *V);
  double *wr = malloc(n * sizeof *wr), *wi = calloc(n, sizeof *wi), *xv = malloc(n * sizeof *xv);
  double *rad = malloc(n * sizeof *rad), *c = malloc(m * sizeof *c);
  ns_eig *e = malloc(n * sizeof *e);
  proj_idx *pr = malloc(n * sizeof *pr);
  if (!A || !V || !wr || !wi || !xv || !rad || !c || !e || !pr) {
    ns_seterr(err, "%s: out of memory", fn);
    goto done;
  }
  double noise;
  if (eig_of_J(fn, J, n, A, wr, wi, V, e, &noise, err)) goto done;
  if (!ns_spec_eval_running(spec, x->rank)) {
    /* unit radial vector of each statistic: its centred values (RMS: the values) */
    ns_tensor_read(x, xv);
    for (size_t st = 0; st < p.nstat; st++) {
      const size_t *mem = p.members + st * m;
      stat_denom(xv, mem, m, spec, center, c);
      double nrm = 0;
      for (size_t a = 0; a < m; a++) nrm += c[a] * c[a];
      nrm = sqrt(nrm);
      for (size_t a = 0; a < m; a++) rad[mem[a]] = nrm > 0 && isfinite(nrm) ? c[a] / nrm : 0;
    }
    for (size_t k = 0; k < n; k++) {
      double nv = 0, po = 0, prr = 0;
      for (size_t i = 0; i < n; i++) nv += V[i * n + k] * V[i * n + k];
      for (size_t st = 0; st < p.nstat && nv > 0; st++) {
        const size_t *mem = p.members + st * m;
        double so = 0, sr = 0;
        for (size_t a = 0; a < m; a++) {
          so += V[mem[a] * n + k];
          sr += V[mem[a] * n + k] * rad[mem[a]];
        }
        if (center) po += so * so / (double)m;
        prr += sr * sr;
      }
      pr[k] = (proj_idx){nv > 0 ? po / nv : 0, nv > 0 ? prr / nv : 0, k};
    }
    /* Within a cluster of equal eigenvalues the eigenvectors are any basis of the
     * eigenspace, so count its ones and radial directions by the summed projections
     * (the trace of the product of projectors) and hand the labels to the vectors that
     * project most. A lone eigenvector is "ones" when its projection exceeds 1/2. */
    double tol = merge_tol(e, n, noise);
    for (size_t lo = 0, hi; lo < n; lo = hi) {
      for (hi = lo + 1; hi < n && near(e[hi].value, e[hi - 1].value, tol) &&
                        near(e[hi].imag, e[hi - 1].imag, tol);
           hi++)
        ;
      double so = 0, sr = 0;
      for (size_t k = lo; k < hi; k++) so += pr[k].pones, sr += pr[k].prad;
      size_t size = hi - lo, nones = (size_t)floor(so + 0.5), nrad = (size_t)floor(sr + 0.5);
      if (nones > size) nones = size;
      if (nrad > size - nones) nrad = size - nones;
      qsort(pr + lo, size, sizeof *pr, cmp_pones);
      for (size_t k = lo; k < lo + nones; k++) e[pr[k].idx].label = NS_LABEL_ONES;
      qsort(pr + lo + nones, size - nones, sizeof *pr, cmp_prad);
      for (size_t k = lo + nones; k < lo + nones + nrad; k++) e[pr[k].idx].label = NS_LABEL_RADIAL;
    }
  }
  rc = merge_out(e, n, noise, out, cap, fn, err);
done:
  free(A), free(V), free(wr), free(wi), free(xv), free(rad), free(c), free(e), free(pr);
  ns_norm_plan_free(&p);
  return rc;
}

/* ---- Masks (spectrum.h, "Masks"). A masked element's output is the constant 0 and its
 * input enters no statistic, so J is the Jacobian of the kept elements' map padded with
 * zero rows and columns: the closed form per statistic is the one above with the kept
 * count k for m, and every masked element adds the eigenvalue 0 on its own unit vector
 * ("masked"). ---- */

/* prepare() plus the mask's check and its keep list (malloc'd into *keep). */
static int prepare_masked(const char *fn, const ns_tensor *x, const ns_spec *spec, const void *out,
                          ns_norm_plan *p, unsigned char **keep, char *err) {
  *keep = NULL;
  if (prepare(fn, x, spec, out, p, err)) return -1;
  char why[NS_ERRLEN];
  if (spec->mask && ns_mask_check(spec->mask, x->rank, x->shape, why) != 0) {
    ns_seterr(err, "%s: %s", fn, why);
    ns_norm_plan_free(p);
    return -1;
  }
  if (!(*keep = malloc(x->n ? x->n : 1))) {
    ns_seterr(err, "%s: out of memory", fn);
    ns_norm_plan_free(p);
    return -1;
  }
  if (spec->mask)
    ns_mask_expand(spec->mask, x->rank, x->shape, *keep, why); /* checked above */
  else
    memset(*keep, 1, x->n);
  return 0;
}

/* The kept members of statistic st into kmem; returns their count. */
static size_t kept_of(const ns_norm_plan *p, size_t st, const unsigned char *keep, size_t *kmem) {
  const size_t *mem = p->members + st * p->count;
  size_t k = 0;
  for (size_t a = 0; a < p->count; a++)
    if (keep[mem[a]]) kmem[k++] = mem[a];
  return k;
}

int ns_spectrum_closed_masked(const ns_tensor *x, const ns_spec *spec, ns_eig *out, size_t cap,
                              char *err) {
  static const char fn[] = "spectrum";
  ns_norm_plan p;
  unsigned char *keep;
  if (prepare_masked(fn, x, spec, out, &p, &keep, err)) return -1;
  size_t n = x->n, m = p.count, ne = 0, nmasked = 0;
  int center = ns_spec_center(spec), rc = -1;
  ns_eig *e = malloc((n + 3 * p.nstat + 1) * sizeof *e);
  double *xv = malloc(n * sizeof *xv), *c = malloc(m * sizeof *c);
  size_t *kmem = malloc(m * sizeof *kmem);
  ns_tensor *xt = NULL;
  ns_norm_result r;
  memset(&r, 0, sizeof r);
  if (!e || !xv || !c || !kmem) {
    ns_seterr(err, "%s: out of memory", fn);
    goto done;
  }
  for (size_t i = 0; i < n; i++) nmasked += !keep[i];
  if (ns_spec_eval_running(spec, x->rank)) {
    /* J = diag(g_i / s_i) at the kept elements, with s from the running statistics as
     * ns_normalize resolves them */
    ns_spec s = *spec;
    s.dtype = NS_FP64;
    s.acc = NS_FP64;
    if (!(xt = ns_tensor_new(x->rank, x->shape, NS_FP64, err))) goto done;
    ns_tensor_read(x, (double *)xt->data);
    if (ns_normalize(xt, &s, &r, err) != 0) goto done;
    for (size_t i = 0; i < n; i++)
      if (keep[i])
        e[ne++] = (ns_eig){ns_spec_gamma(spec, &p, i) / r.denom[p.stat_of[i]], 0, NS_LABEL_BULK, 1};
  } else {
    ns_tensor_read(x, xv);
    for (size_t st = 0; st < p.nstat; st++) {
      size_t k = kept_of(&p, st, keep, kmem);
      if (k == 0) continue; /* all masked: only "masked" zeros */
      double g = ns_spec_gamma(spec, &p, kmem[0]);
      for (size_t a = 1; a < k; a++)
        if (ns_spec_gamma(spec, &p, kmem[a]) != g) { /* no closed form */
          rc = 0;
          goto done;
        }
      double s = stat_denom(xv, kmem, k, spec, center, c);
      double radial =
          spec->eps_at == NS_EPS_STD ? g * spec->eps / (s * s) : g * spec->eps / (s * s * s);
      radial += 0.0; /* -0 (negative gamma, eps 0) shows as 0 */
      size_t nbulk = center ? (k >= 2 ? k - 2 : 0) : k - 1;
      if (center) e[ne++] = (ns_eig){0.0, 0, NS_LABEL_ONES, 1};
      if (!center || k >= 2) e[ne++] = (ns_eig){radial, 0, NS_LABEL_RADIAL, 1};
      if (nbulk) e[ne++] = (ns_eig){g / s, 0, NS_LABEL_BULK, (int)nbulk};
    }
  }
  if (nmasked) e[ne++] = (ns_eig){0.0, 0, NS_LABEL_MASKED, (int)nmasked};
  rc = merge_out(e, ne, 0, out, cap, fn, err);
done:
  ns_norm_result_free(&r);
  ns_tensor_free(xt);
  free(e), free(xv), free(c), free(kmem), free(keep);
  ns_norm_plan_free(&p);
  return rc;
}

typedef struct {
  double proj[3]; /* squared projections of the unit eigenvector: ones, masked, radial */
  size_t idx;
} proj3;

#define PROJ_CMP(NAME, K)                                                                          \
  static int NAME(const void *pa, const void *pb) {                                                \
    const proj3 *a = pa, *b = pb;                                                                  \
    return (a->proj[K] < b->proj[K]) - (a->proj[K] > b->proj[K]); /* descending */                 \
  }
PROJ_CMP(cmp_ones, 0)
PROJ_CMP(cmp_masked, 1)
PROJ_CMP(cmp_radial, 2)

static int near_tol(double a, double b, double tol) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return a == b || fabs(a - b) <= tol;
}

int ns_spectrum_numeric_masked(const ns_tensor *x, const ns_spec *spec, const double *J,
                               ns_eig *out, size_t cap, char *err) {
  static const char fn[] = "spectrum_numeric";
  ns_norm_plan p;
  unsigned char *keep;
  if (check_J(fn, x, J, err) || prepare_masked(fn, x, spec, out, &p, &keep, err)) return -1;
  size_t n = x->n, m = p.count;
  int center = ns_spec_center(spec), rc = -1;
  double *A = malloc(n * n * sizeof *A), *V = malloc(n * n * sizeof *V);
  double *wr = malloc(n * sizeof *wr), *wi = calloc(n, sizeof *wi), *xv = malloc(n * sizeof *xv);
  double *rad = calloc(n, sizeof *rad), *c = malloc(m * sizeof *c);
  size_t *kmem = malloc(m * sizeof *kmem);
  ns_eig *e = malloc(n * sizeof *e);
  proj3 *pr = malloc(n * sizeof *pr);
  if (!A || !V || !wr || !wi || !xv || !rad || !c || !kmem || !e || !pr) {
    ns_seterr(err, "%s: out of memory", fn);
    goto done;
  }
  double noise;
  if (eig_of_J(fn, J, n, A, wr, wi, V, e, &noise, err)) goto done;

  int eval = ns_spec_eval_running(spec, x->rank);
  if (!eval) { /* unit radial vector of each statistic over its kept members */
    ns_tensor_read(x, xv);
    for (size_t st = 0; st < p.nstat; st++) {
      size_t k = kept_of(&p, st, keep, kmem);
      if (k == 0) continue;
      stat_denom(xv, kmem, k, spec, center, c);
      double nrm = 0;
      for (size_t a = 0; a < k; a++) nrm += c[a] * c[a];
      nrm = sqrt(nrm);
      for (size_t a = 0; a < k; a++) rad[kmem[a]] = nrm > 0 && isfinite(nrm) ? c[a] / nrm : 0;
    }
  }
  for (size_t q = 0; q < n; q++) {
    double nv = 0, po = 0, pm = 0, prr = 0;
    for (size_t i = 0; i < n; i++) {
      double v = V[i * n + q];
      nv += v * v;
      if (!keep[i]) pm += v * v;
    }
    for (size_t st = 0; !eval && st < p.nstat && nv > 0; st++) {
      size_t k = kept_of(&p, st, keep, kmem);
      double so = 0, sr = 0;
      for (size_t a = 0; a < k; a++) {
        so += V[kmem[a] * n + q];
        sr += V[kmem[a] * n + q] * rad[kmem[a]];
      }
      if (center && k) po += so * so / (double)k;
      prr += sr * sr;
    }
    pr[q] = (proj3){{nv > 0 ? po / nv : 0, nv > 0 ? pm / nv : 0, nv > 0 ? prr / nv : 0}, q};
  }
  /* As spectrum.c: within a cluster of equal eigenvalues count each family's directions by
   * the summed projections and hand its label to the vectors that project most, ones
   * first, then masked, then radial. */
  double tol = merge_tol(e, n, noise);
  static int (*const cmp[3])(const void *, const void *) = {cmp_ones, cmp_masked, cmp_radial};
  static const ns_label lab[3] = {NS_LABEL_ONES, NS_LABEL_MASKED, NS_LABEL_RADIAL};
  for (size_t lo = 0, hi; lo < n; lo = hi) {
    for (hi = lo + 1; hi < n && near_tol(e[hi].value, e[hi - 1].value, tol) &&
                      near_tol(e[hi].imag, e[hi - 1].imag, tol);
         hi++)
      ;
    size_t from = lo;
    for (int f = 0; f < 3; f++) {
      double sum = 0;
      for (size_t q = from; q < hi; q++) sum += pr[q].proj[f];
      size_t cnt = (size_t)floor(sum + 0.5);
      if (cnt > hi - from) cnt = hi - from;
      qsort(pr + from, hi - from, sizeof *pr, cmp[f]);
      for (size_t q = from; q < from + cnt; q++) e[pr[q].idx].label = lab[f];
      from += cnt;
    }
  }
  rc = merge_out(e, n, noise, out, cap, fn, err);
done:
  free(A), free(V), free(wr), free(wi), free(xv), free(rad), free(c), free(kmem), free(e), free(pr);
  free(keep);
  ns_norm_plan_free(&p);
  return rc;
}
