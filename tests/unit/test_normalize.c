/* test_normalize.c: the normalization family against claims.tsv, identities on random
 * inputs, a slow reference loop for every kind at every rank, running statistics,
 * degenerate inputs and bad arguments. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/normalize.h"
#include "tap.h"

static char err[NS_ERRLEN];

/* ---- small helpers ---- */

static uint64_t st = 0x2545F4914F6CDD1Du;
static double urand(void) {
  st = st * 6364136223846793005u + 1442695040888963407u;
  return (double)(st >> 11) * 0x1p-53;
}
static double nrand(void) {
  double u = urand(), v = urand();
  return sqrt(-2 * log(1 - u)) * cos(6.283185307179586 * v);
}

static ns_tensor *vec(size_t n, const double *v) {
  size_t s[1] = {n};
  return ns_tensor_from(1, s, NS_FP64, v, err);
}

/* Normalizes and returns y as a malloc'd array (NULL on error, err set). */
static double *run(const ns_tensor *x, const ns_spec *s, ns_norm_result *r) {
  if (ns_normalize(x, s, r, err) != 0) return NULL;
  double *y = malloc(x->n * sizeof *y);
  ns_tensor_read(r->y, y);
  return y;
}

static double *norm1(size_t n, const double *v, const ns_spec *s) {
  ns_tensor *x = vec(n, v);
  ns_norm_result r = {0};
  double *y = run(x, s, &r);
  ns_norm_result_free(&r);
  ns_tensor_free(x);
  return y;
}

/* max |a[i] - b[i]|; NaN when either array is missing (a failed run). */
static double maxdiff(const double *a, const double *b, size_t n) {
  if (!a || !b) return NAN;
  double md = 0;
  for (size_t i = 0; i < n; i++) md = fmax(md, fabs(a[i] - b[i]));
  return md;
}

/* Largest |mean| over the rows (by_col 0) or the columns (by_col 1) of y (rows x cols). */
static double max_line_mean(const double *y, size_t rows, size_t cols, int by_col) {
  size_t nl = by_col ? cols : rows, len = by_col ? rows : cols;
  double md = 0;
  for (size_t l = 0; l < nl; l++) {
    double m = 0;
    for (size_t k = 0; k < len; k++) m += by_col ? y[k * cols + l] : y[l * cols + k];
    md = fmax(md, fabs(m / (double)len));
  }
  return md;
}

/* Normalizes x = (1, 3) with s and checks the second output to 1e-15. */
static void check_y13(const ns_spec *s, double want, const char *name) {
  const double x2[2] = {1, 3};
  double *y = norm1(2, x2, s);
  tap_close(y ? y[1] : NAN, want, 1e-15, name);
  free(y);
}

static const double X54[20] = {1, 3, 7, 2, 2, 5, 11, 4, 4, 7, 13, 8, 7, 9, 17, 10, 11, 15, 23, 14};

static ns_tensor *xmat(void) {
  size_t s[2] = {5, 4};
  return ns_tensor_from(2, s, NS_FP64, X54, err);
}

/* ---- claims.tsv ---- */

static void claims(void) {
  ns_spec s;
  double x4[4] = {-2, -1, 1, 2}, x4s[4];
  for (int i = 0; i < 4; i++) x4s[i] = x4[i] + 10;

  ns_spec_default(&s);
  s.kind = NS_KIND_RMS;
  s.eps = 0;
  double *a = norm1(4, x4, &s), *b = norm1(4, x4s, &s);
  double md = maxdiff(a, b, 4);
  tap_close(md, 2.055094741, 5e-7, "c15-rms-shift-maxdiff");
  free(a);
  free(b);

  ns_spec_default(&s);
  s.eps = 0;
  a = norm1(4, x4, &s);
  b = norm1(4, x4s, &s);
  md = maxdiff(a, b, 4);
  tap_close(md, 0, 1e-12, "c15-centered-shift-dev");
  free(a);
  free(b);

  double r3a[3] = {1, 2, 4}, r3b[3] = {11, 12, 14};
  ns_spec_default(&s);
  a = norm1(3, r3a, &s);
  b = norm1(3, r3b, &s);
  md = maxdiff(a, b, 3);
  tap_close(md, 0, 1e-12, "r3-level-erased");
  free(a);
  free(b);

  double r4[3] = {1e-3, 2e-3, 4e-3};
  a = norm1(3, r4, &s);
  double ms = 0;
  for (int i = 0; i < 3; i++) ms += a[i] * a[i];
  tap_close(sqrt(ms / 3), 0.3668996929, 1e-9, "r4-small-scale-amplitude");
  free(a);

  ns_spec_default(&s);
  s.kind = NS_KIND_BATCH;
  double r6a[2] = {0, 2}, r6b[2] = {0, -2};
  a = norm1(2, r6a, &s);
  b = norm1(2, r6b, &s);
  /* claims.tsv prints -0.999995 with tol 1e-12, but its own formula -b/sqrt(b^2+4 eps)
   * is -0.9999950000375: the printed value is rounded to 6 digits. Check the formula
   * to 1e-12 and the printed value to its last digit. */
  tap_close(a ? a[0] : NAN, -2 / sqrt(4 + 4e-5), 1e-12, "r6-companion-first (formula)");
  tap_close(a ? a[0] : NAN, -0.999995, 5e-7, "r6-companion-first (printed value)");
  tap_close(b ? b[0] : NAN, 2 / sqrt(4 + 4e-5), 1e-12, "r6-companion-flipped (formula)");
  tap_close(b ? b[0] : NAN, 0.999995, 5e-7, "r6-companion-flipped (printed value)");
  free(a);
  free(b);

  ns_tensor *X = xmat();
  ns_norm_result r = {0};
  ns_spec_default(&s);
  s.kind = NS_KIND_BATCH;
  double *y = run(X, &s, &r);
  tap_close(y[2 * 4 + 0], -0.275240837, 1e-9, "n-bn-x31");
  tap_close(max_line_mean(y, 5, 4, 1), 0, 1e-12, "n-bn-col-means");
  tap_ok(r.plan.nstat == 4 && r.plan.stat_shape[0] == 1 && r.plan.stat_shape[1] == 4,
         "batch norm of (5, 4) has statistics of shape (1, 4)");
  free(y);
  ns_norm_result_free(&r);

  ns_spec_default(&s);
  y = run(X, &s, &r);
  tap_close(y[0 * 4 + 2], 1.646462313, 1e-9, "n-ln-row1-col3");
  tap_close(max_line_mean(y, 5, 4, 0), 0, 1e-12, "n-ln-row-means");
  tap_ok(r.plan.nstat == 5 && r.plan.stat_shape[0] == 5 && r.plan.stat_shape[1] == 1,
         "layer norm of (5, 4) has statistics of shape (5, 1)");
  free(y);
  ns_norm_result_free(&r);

  /* PyTorch BatchNorm1d, momentum 0.1, one training step on X */
  ns_running run0;
  ns_running_init(&run0, 0.1, 0, 0, 0, err);
  ns_spec_default(&s);
  s.kind = NS_KIND_BATCH;
  s.running = &run0;
  y = run(X, &s, &r);
  tap_close(run0.nstat == 4 ? run0.var[0] : NAN, 2.55, 1e-9, "n-torch-running-var-f1");
  tap_close(run0.nstat == 4 ? run0.mean[2] : NAN, 1.42, 1e-9, "n-torch-running-mean-f3");
  tap_ok(run0.count == 1, "one update counted");
  free(y);
  ns_norm_result_free(&r);
  ns_running_free(&run0);
  ns_tensor_free(X);

  double v5[5] = {2, 4, 7, 11, 16};
  double g15 = 1.5, b08 = 0.8;
  ns_spec_default(&s);
  s.eps = 0;
  s.gamma = &g15;
  s.ngamma = 1;
  s.beta = &b08;
  s.nbeta = 1;
  a = norm1(5, v5, &s);
  double mean = 0, var = 0;
  for (int i = 0; i < 5; i++) mean += a[i] / 5;
  for (int i = 0; i < 5; i++) var += (a[i] - mean) * (a[i] - mean) / 5;
  tap_close(sqrt(var), 1.5, 1e-12, "n-affine-std");
  tap_close(mean, 0.8, 1e-12, "affine mean is beta");
  free(a);

  double f[8] = {1, 2, 3, 8, 10, 12, 18, 20};
  ns_spec_default(&s);
  a = norm1(8, f, &s);
  tap_close(a[0], -1.22728307, 1e-9, "n-family-ln-f1");
  free(a);
  {
    size_t sh[2] = {1, 8};
    ns_tensor *t = ns_tensor_from(2, sh, NS_FP64, f, err);
    ns_spec_default(&s);
    s.kind = NS_KIND_GROUP;
    s.groups = 2;
    y = run(t, &s, &r);
    tap_close(y ? y[3] : NAN, 1.671256891, 1e-9, "n-family-gn2-f4");
    tap_ok(r.plan.nstat == 2 && r.plan.stat_shape[1] == 2 && r.plan.count == 4,
           "group norm (1, 8) with 2 groups: statistics (1, 2), 4 members each");
    free(y);
    ns_norm_result_free(&r);
    ns_tensor_free(t);
  }
  ns_spec_default(&s);
  s.kind = NS_KIND_RMS;
  a = norm1(8, f, &s);
  tap_close(a[7], 1.749077811, 1e-9, "n-family-rms-f8");
  free(a);

  double sh4[4] = {2, 3, 4, 5};
  ns_spec_default(&s);
  a = norm1(4, sh4, &s);
  tap_close(a[0], -1.34163542, 1e-9, "n-shift-ln-first");
  free(a);
  s.kind = NS_KIND_RMS;
  a = norm1(4, sh4, &s);
  tap_close((a[0] + a[1] + a[2] + a[3]) / 4, 0.9525789916, 1e-9, "n-shift-rms-mean");
  free(a);

  double gb[4] = {2, 4, 6, 8};
  ns_tensor *t = vec(4, gb);
  ns_spec_default(&s);
  s.kind = NS_KIND_BATCH;
  s.eps = 0;
  y = run(t, &s, &r);
  tap_close(r.var[0], 5, 0, "g-bn-var");
  /* claims.tsv prints -1.341640786 (10 digits) with tol 1e-12; the exact value is -3/sqrt(5) */
  tap_close(y[0], -3 / sqrt(5.0), 1e-12, "g-bn-xhat-1 (-3/sqrt(5))");
  tap_close(y[0], -1.341640786, 5e-10, "g-bn-xhat-1 (printed value)");
  free(y);
  ns_norm_result_free(&r);
  double two = 2, one = 1;
  s.gamma = &two;
  s.ngamma = 1;
  s.beta = &one;
  s.nbeta = 1;
  y = run(t, &s, &r);
  tap_close(y[3], 3.683281573, 1e-12, "g-bn-y-4");
  free(y);
  ns_norm_result_free(&r);
  ns_tensor_free(t);

  double c15[4] = {9998, 9999, 10001, 10002};
  t = vec(4, c15);
  ns_spec_default(&s);
  s.dtype = NS_FP32;
  s.algo = NS_ALGO_RAW;
  y = run(t, &s, &r);
  tap_close(r.var[0], 0, 0, "c15-fp32-raw-var (through ns_normalize, fp32 raw)");
  tap_ok(r.y->dtype == NS_FP32, "fp32 spec gives an fp32 output tensor");
  free(y);
  ns_norm_result_free(&r);
  s.algo = NS_ALGO_TWOPASS;
  y = run(t, &s, &r);
  tap_close(r.var[0], 2.5, 0, "c15-fp32-centered-var (through ns_normalize, fp32 two-pass)");
  free(y);
  ns_norm_result_free(&r);
  ns_tensor_free(t);
}

/* ---- the kinds table (kinds.h) ---- */

/* Every row is complete and agrees with what the core does with it: names parse back,
 * default axes are inside the rank and plan, the undefined ranks say why, and the
 * centering, batch, per_element and grouped columns are what the spec and plan report. */
static void kinds_table(void) {
  int bad = 0, nnames = 0;
  while (ns_kind_names[nnames]) nnames++;
  tap_ok(nnames == NS_KIND_COUNT, "ns_kind_names has NS_KIND_COUNT (%d) names (%d)", NS_KIND_COUNT,
         nnames);
  char words[256] = "";
  for (int k = 0; k < NS_KIND_COUNT; k++) {
    const ns_kind_info *ki = ns_kind_get(k);
    ns_kind back = NS_KIND_COUNT;
    size_t at = strlen(words);
    snprintf(words + at, sizeof words - at, " %s", ns_kind_names[k]);
    if (!ki || !ki->name[0] || !ki->title || !ki->title[0] || ki->name != ns_kind_names[k] ||
        ns_kind_parse(ki->name, &back) != 0 || back != (ns_kind)k ||
        strcmp(ns_kind_title((ns_kind)k), ki->title) != 0) {
      bad++;
      tap_diag("kind %d: name or title", k);
      continue;
    }
    for (int j = 0; j < k; j++)
      if (strcmp(ns_kinds[j].name, ki->name) == 0 || strcmp(ns_kinds[j].title, ki->title) == 0) {
        bad++;
        tap_diag("kind %d repeats kind %d's name or title", k, j);
      }
    for (int rank = 1; rank <= 4; rank++) {
      unsigned ax = ki->axes[rank - 1];
      err[0] = 0;
      if (ns_default_axes((ns_kind)k, rank, err) != ax || (ax >> rank) ||
          (!ax && (!ki->undefined || !err[0]))) {
        bad++;
        tap_diag("%s rank %d: axes 0x%x, err '%s'", ki->name, rank, ax, err);
        continue;
      }
      if (!ax) continue;
      size_t shape[4] = {2, 4, 3, 2};
      ns_spec s;
      ns_spec_default(&s);
      s.kind = (ns_kind)k;
      s.groups = ki->grouped ? 2 : 1;
      ns_norm_plan p;
      if (ns_norm_plan_shape(rank, shape, &s, &p, err) != 0 || p.axes != ax ||
          p.per_element != ki->per_element || (p.groups > 1) != ki->grouped ||
          ns_spec_is_batch(&s, rank) != ki->batch || ns_spec_center(&s) != ki->center) {
        bad++;
        tap_diag("%s rank %d: the plan disagrees with the row (%s)", ki->name, rank, err);
      }
      ns_norm_plan_free(&p);
    }
  }
  tap_ok(bad == 0, "every kind's row: names, titles, default axes, centering, batch, affine");
  tap_ok(strcmp(words, NS_KIND_WORDS) == 0, "NS_KIND_WORDS is the names in order: '%s'",
         NS_KIND_WORDS);
  ns_spec s;
  ns_spec_default(&s);
  s.kind = NS_KIND_COUNT;
  size_t shape[2] = {3, 4};
  ns_norm_plan p;
  tap_ok(!ns_kind_get(-1) && !ns_kind_get(NS_KIND_COUNT) &&
             strcmp(ns_kind_name(NS_KIND_COUNT), "?") == 0 &&
             strcmp(ns_kind_title(NS_KIND_COUNT), "?") == 0 && ns_spec_check(&s, err) != 0 &&
             ns_norm_plan_shape(2, shape, &s, &p, err) != 0 && strstr(err, "unknown"),
         "a kind past the table is refused everywhere: %s", err);
}

/* ---- default axes and plan shapes ---- */

static void axes_table(void) {
  /* written out by hand (1-based digits) against kinds.h; group's "2" = channels in groups */
  static const struct {
    ns_kind k;
    const char *ax[4];
  } tab[] = {{NS_KIND_LAYER, {"1", "2", "3", "234"}},
             {NS_KIND_RMS, {"1", "2", "3", "234"}},
             {NS_KIND_BATCH, {"1", "1", "13", "134"}},
             {NS_KIND_INSTANCE, {"", "", "3", "34"}},
             {NS_KIND_GROUP, {"", "2", "23", "234"}}};
  int bad = 0;
  for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
    for (int rank = 1; rank <= 4; rank++) {
      unsigned want = 0;
      for (const char *c = tab[i].ax[rank - 1]; *c; c++) want |= 1u << (*c - '1');
      err[0] = 0;
      unsigned got = ns_default_axes(tab[i].k, rank, err);
      if (got != want || (want == 0 && err[0] == 0)) {
        bad++;
        tap_diag("%s rank %d: got 0x%x want 0x%x", ns_kind_name(tab[i].k), rank, got, want);
      }
    }
  }
  tap_ok(bad == 0, "default axes of every kind at every rank match the hand-written table");
  tap_ok(ns_default_axes(NS_KIND_INSTANCE, 2, err) == 0 && strstr(err, "instance"),
         "instance at rank 2 refused: %s", err);
  tap_ok(ns_default_axes(NS_KIND_LAYER, 5, err) == 0, "rank 5 refused: %s", err);

  static const struct {
    ns_kind k;
    int groups;
    unsigned axes;
    int rank;
    size_t shape[4];
    size_t stat[4];
    size_t naff;
  } ps[] = {
      {NS_KIND_BATCH, 1, 0, 4, {2, 3, 4, 5}, {1, 3, 1, 1}, 3},
      {NS_KIND_LAYER, 1, 0, 4, {2, 3, 4, 5}, {2, 1, 1, 1}, 60},
      {NS_KIND_INSTANCE, 1, 0, 4, {2, 3, 4, 5}, {2, 3, 1, 1}, 3},
      {NS_KIND_GROUP, 3, 0, 4, {2, 6, 4, 5}, {2, 3, 1, 1}, 6},
      {NS_KIND_GROUP, 2, 0, 3, {2, 6, 5}, {2, 2, 1, 1}, 6},
      {NS_KIND_INSTANCE, 1, 0, 3, {2, 3, 4}, {2, 3, 1, 1}, 3},
      {NS_KIND_BATCH, 1, 0, 3, {2, 3, 4}, {1, 3, 1, 1}, 3},
      {NS_KIND_RMS, 1, 0, 3, {2, 3, 4}, {2, 3, 1, 1}, 4},
      {NS_KIND_LAYER, 1, 0x3, 2, {5, 4}, {1, 1, 1, 1}, 20},
      {NS_KIND_LAYER, 1, 0x5, 3, {2, 3, 4}, {1, 3, 1, 1}, 8},
      {NS_KIND_BATCH, 1, 0, 1, {7}, {1, 1, 1, 1}, 1},
  };
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
    ns_spec s;
    ns_spec_default(&s);
    s.kind = ps[i].k;
    s.groups = ps[i].groups;
    s.axes = ps[i].axes;
    ns_norm_plan p = {0};
    int rc = ns_norm_plan_make(ps[i].rank, ps[i].shape, &s, &p, err);
    int ok = rc == 0 && p.naffine == ps[i].naff;
    size_t nstat = 1;
    for (int a = 0; a < 4 && ok; a++) {
      ok = p.stat_shape[a] == ps[i].stat[a];
      nstat *= ps[i].stat[a];
    }
    ok = ok && p.nstat == nstat && p.nstat * p.count == p.n && p.stat_rank == ps[i].rank;
    char buf[64], sb[64];
    ns_shape_format(ps[i].rank, ps[i].shape, buf, sizeof buf);
    ns_shape_format(ps[i].rank, p.stat_shape, sb, sizeof sb);
    tap_ok(ok, "plan %s%s of %s: statistics %s, %zu affine", ns_kind_name(ps[i].k),
           ps[i].axes ? " (explicit axes)" : "", buf, sb, ps[i].naff);
    /* members are in index order and partition the elements */
    int part = rc == 0;
    unsigned char *seen = calloc(p.n ? p.n : 1, 1);
    for (size_t q = 0; part && q < p.nstat; q++)
      for (size_t k = 0; k < p.count; k++) {
        size_t e = p.members[q * p.count + k];
        if (e >= p.n || seen[e] || p.stat_of[e] != q || (k && e <= p.members[q * p.count + k - 1]))
          part = 0;
        else
          seen[e] = 1;
      }
    free(seen);
    tap_ok(part, "  its members partition the elements, each list in index order");
    ns_norm_plan_free(&p);
  }
}

/* ---- slow reference: for each element, find its companions by comparing coordinates ---- */

static void coords(size_t i, int rank, const size_t *shape, size_t *c) {
  for (int a = rank - 1; a >= 0; a--) {
    c[a] = i % shape[a];
    i /= shape[a];
  }
}

/* y of every element, computed in long double straight from the definition. */
static void reference(const ns_tensor *x, const ns_spec *s, double *y) {
  int rank = x->rank;
  unsigned axes = s->axes ? s->axes : ns_default_axes(s->kind, rank, NULL);
  int centered = s->center < 0 ? s->kind != NS_KIND_RMS : s->center;
  size_t C = rank >= 2 ? x->shape[1] : 1, per = s->kind == NS_KIND_GROUP ? C / s->groups : 0;
  for (size_t i = 0; i < x->n; i++) {
    size_t ci[4], cj[4];
    coords(i, rank, x->shape, ci);
    long double sum = 0, m = 0;
    for (int pass = 0; pass < 2; pass++) {
      long double mu = centered && m > 0 ? sum / m : 0, ss = 0;
      for (size_t j = 0; j < x->n; j++) {
        coords(j, rank, x->shape, cj);
        int same = 1;
        for (int a = 0; a < rank; a++) {
          if (s->kind == NS_KIND_GROUP && a == 1) {
            if (ci[1] / per != cj[1] / per) same = 0;
          } else if (!((axes >> a) & 1u) && ci[a] != cj[a]) {
            same = 0;
          }
        }
        if (!same) continue;
        long double v = ns_tensor_get(x, j);
        if (pass == 0) {
          sum += v;
          m += 1;
        } else {
          ss += (v - mu) * (v - mu);
        }
      }
      if (pass == 1) {
        long double var = ss / (m - s->ddof);
        long double den = s->eps_at == NS_EPS_VAR ? sqrtl(var + s->eps) : sqrtl(var) + s->eps;
        long double out = ((long double)ns_tensor_get(x, i) - mu) / den;
        size_t ai = 0;
        if (s->kind == NS_KIND_LAYER || s->kind == NS_KIND_RMS) {
          for (int a = 0; a < rank; a++)
            if ((axes >> a) & 1u) ai = ai * x->shape[a] + ci[a];
        } else {
          ai = rank >= 2 ? ci[1] : 0;
        }
        if (s->gamma) out *= s->gamma[s->ngamma == 1 ? 0 : ai];
        if (s->beta) out += s->beta[s->nbeta == 1 ? 0 : ai];
        y[i] = (double)out;
      }
    }
  }
}

static void against_reference(void) {
  int total = 0, bad = 0;
  double worst = 0;
  for (int trial = 0; trial < 400; trial++) {
    ns_spec s;
    ns_spec_default(&s);
    s.kind = (ns_kind)(trial % 5);
    int rank = 1 + (trial / 5) % 4;
    if (s.kind == NS_KIND_INSTANCE && rank < 3) rank += 2;
    if (s.kind == NS_KIND_GROUP && rank < 2) rank = 2 + trial % 3;
    size_t shape[4] = {1, 1, 1, 1};
    for (int a = 0; a < rank; a++) shape[a] = 1 + (size_t)(urand() * 4);
    if (s.kind == NS_KIND_GROUP) {
      int gs[] = {1, 2, 3};
      s.groups = gs[trial % 3];
      shape[1] = (size_t)s.groups * (1 + (size_t)(urand() * 3));
    }
    /* explicit axes now and then */
    if (trial % 7 == 3) {
      s.axes = 1u + (unsigned)(urand() * ((1u << rank) - 1));
      if (s.axes >> rank) s.axes = 1;
      if (s.kind == NS_KIND_GROUP) s.axes |= 2u; /* group axes must include the channels */
    }
    s.eps = (trial % 3 == 0) ? 0.0 : 1e-3;
    s.eps_at = (trial % 4 == 1) ? NS_EPS_STD : NS_EPS_VAR;
    s.ddof = (trial % 6 == 5) ? 1 : 0;
    if (trial % 9 == 4) s.center = s.kind == NS_KIND_RMS ? 1 : 0;
    ns_tensor *x = ns_tensor_new(rank, shape, NS_FP64, err);
    for (size_t i = 0; i < x->n; i++) ns_tensor_set(x, i, 3 + 2 * nrand());
    ns_norm_plan p = {0};
    if (ns_norm_plan_make(rank, shape, &s, &p, err) != 0) {
      bad++;
      tap_diag("plan failed: %s", err);
      ns_tensor_free(x);
      continue;
    }
    double gam[64], bet[64];
    size_t na = p.naffine;
    ns_norm_plan_free(&p);
    int aff = trial % 4;
    if (aff && na <= 64) {
      for (size_t k = 0; k < na; k++) {
        gam[k] = 0.5 + urand();
        bet[k] = urand() - 0.5;
      }
      s.gamma = gam;
      s.ngamma = aff == 1 ? 1 : na;
      if (aff == 3) {
        s.beta = bet;
        s.nbeta = na;
      }
    }
    double *want = malloc(x->n * sizeof *want);
    reference(x, &s, want);
    ns_norm_result r = {0};
    double *y = run(x, &s, &r);
    total++;
    if (!y) {
      bad++;
      tap_diag("normalize failed: %s", err);
    } else {
      for (size_t i = 0; i < x->n; i++) {
        double d = fabs(y[i] - want[i]);
        if (isnan(want[i]) != isnan(y[i])) d = INFINITY;
        if (isnan(d)) d = 0;
        if (d > worst) worst = d;
        if (d > 1e-11 * (1 + fabs(want[i]))) {
          bad++;
          char sh[64];
          ns_shape_format(rank, shape, sh, sizeof sh);
          tap_diag("%s %s axes 0x%x elem %zu: %.17g vs %.17g", ns_kind_name(s.kind), sh, s.axes, i,
                   y[i], want[i]);
          break;
        }
      }
    }
    free(y);
    free(want);
    ns_norm_result_free(&r);
    ns_tensor_free(x);
  }
  tap_ok(bad == 0,
         "%d random specs (every kind, rank, eps placement, ddof, centering, affine) "
         "agree with the slow reference (worst %.2g)",
         total, worst);
}

/* Gives a result the per-element lists that ns_normalize no longer builds. */
static void with_lists(ns_norm_result *r, const ns_spec *s) {
  ns_norm_plan_free(&r->plan);
  if (ns_norm_plan_make(r->y->rank, r->y->shape, s, &r->plan, err) != 0) exit(99);
}

/* ---- identities ---- */

static void identities(void) {
  int bad_shift = 0, bad_scale = 0, bad_rms = 0, bad_stats = 0, n = 0;
  for (int trial = 0; trial < 200; trial++) {
    ns_spec s;
    ns_spec_default(&s);
    s.kind = (ns_kind)(trial % 5);
    int rank = s.kind == NS_KIND_INSTANCE ? 3 + trial % 2 : 2 + trial % 3;
    size_t shape[4];
    for (int a = 0; a < rank; a++) shape[a] = 2 + (size_t)(urand() * 3);
    if (s.kind == NS_KIND_GROUP) {
      s.groups = 2;
      shape[1] = 4;
    }
    ns_tensor *x = ns_tensor_new(rank, shape, NS_FP64, err);
    ns_tensor *xs = ns_tensor_new(rank, shape, NS_FP64, err);
    ns_tensor *xa = ns_tensor_new(rank, shape, NS_FP64, err);
    double shift = 50 * (urand() - 0.5), scale = pow(10, 4 * urand() - 2);
    for (size_t i = 0; i < x->n; i++) {
      double v = nrand();
      ns_tensor_set(x, i, v);
      ns_tensor_set(xs, i, v + shift);
      ns_tensor_set(xa, i, v * scale);
    }
    ns_norm_result r0 = {0}, r1 = {0}, r2 = {0};
    s.eps = 0;
    double *y0 = run(x, &s, &r0), *y1 = run(xs, &s, &r1), *y2 = run(xa, &s, &r2);
    double dsh = 0, dsc = 0;
    for (size_t i = 0; i < x->n; i++) {
      dsh = fmax(dsh, fabs(y0[i] - y1[i]));
      dsc = fmax(dsc, fabs(y0[i] - y2[i]));
    }
    if (s.kind == NS_KIND_RMS) {
      if (dsh < 1e-3) bad_rms++; /* the offset survives RMS norm */
    } else if (dsh > 1e-9) {
      bad_shift++;
    }
    if (dsc > 1e-12) bad_scale++;
    /* per statistic: mean 0, var 1 (centered), mean square 1 (rms), with eps 0 */
    with_lists(&r0, &s);
    const ns_norm_plan *p = &r0.plan;
    for (size_t q = 0; q < p->nstat; q++) {
      double m = 0, v = 0;
      for (size_t k = 0; k < p->count; k++) m += y0[p->members[q * p->count + k]];
      m /= (double)p->count;
      for (size_t k = 0; k < p->count; k++) {
        double d = y0[p->members[q * p->count + k]] - (s.kind == NS_KIND_RMS ? 0 : m);
        v += d * d;
      }
      v /= (double)p->count;
      if ((s.kind != NS_KIND_RMS && fabs(m) > 1e-12) || fabs(v - 1) > 1e-12) bad_stats++;
    }
    n++;
    free(y0);
    free(y1);
    free(y2);
    ns_norm_result_free(&r0);
    ns_norm_result_free(&r1);
    ns_norm_result_free(&r2);
    ns_tensor_free(x);
    ns_tensor_free(xs);
    ns_tensor_free(xa);
  }
  tap_ok(bad_shift == 0, "shift invariance of centered kinds on %d random inputs", n);
  tap_ok(bad_scale == 0, "scale invariance with eps = 0 on %d random inputs", n);
  tap_ok(bad_rms == 0, "RMS norm retains a shift on random inputs");
  tap_ok(bad_stats == 0, "outputs have mean 0 / variance 1 (RMS: mean square 1) per statistic");

  /* eps placement, hand computed: x = (1, 3), var 1, std 1 */
  ns_spec s;
  ns_spec_default(&s);
  s.eps = 0.44;
  check_y13(&s, 1 / 1.2, "eps inside the sqrt: 1/sqrt(1 + 0.44)");
  s.eps_at = NS_EPS_STD;
  check_y13(&s, 1 / 1.44, "eps added to the std: 1/(1 + 0.44)");
  ns_spec_default(&s);
  s.eps = 0;
  s.ddof = 1;
  check_y13(&s, 1 / sqrt(2.0), "ddof 1: var 2, y = 1/sqrt(2)");
  ns_spec_default(&s);
  s.eps = 0;
  s.center = 0;
  check_y13(&s, 3 / sqrt(5.0), "uncentered layer: 3/sqrt(mean(x^2))");
  ns_spec_default(&s);
  s.kind = NS_KIND_RMS;
  s.center = 1;
  s.eps = 0;
  check_y13(&s, 1, "centered rms behaves as layer norm");
}

/* ---- precision: native float reference ---- */

static void precision(void) {
  int bad = 0;
  for (int trial = 0; trial < 200; trial++) {
    size_t n = 2 + (size_t)(urand() * 60);
    double x[64];
    for (size_t i = 0; i < n; i++) x[i] = 1000 + 3 * nrand();
    ns_spec s;
    ns_spec_default(&s);
    s.dtype = NS_FP32;
    double g = 1.25, b = -0.5;
    s.gamma = &g;
    s.ngamma = 1;
    s.beta = &b;
    s.nbeta = 1;
    double *y = norm1(n, x, &s);
    volatile float sum = 0, ss = 0, mu, d, den, t;
    for (size_t i = 0; i < n; i++) sum = sum + (float)x[i];
    mu = sum / (float)n;
    for (size_t i = 0; i < n; i++) {
      d = (float)x[i] - mu;
      ss = ss + d * d;
    }
    volatile float var = ss / (float)n;
    den = sqrtf(var + 1e-5f);
    for (size_t i = 0; i < n; i++) {
      t = ((float)x[i] - mu) / den;
      t = t * 1.25f;
      t = t + -0.5f;
      if ((double)t != y[i]) {
        if (!bad) tap_diag("n %zu elem %zu: %.9g vs %.9g", n, i, y[i], (double)t);
        bad++;
        break;
      }
    }
    free(y);
  }
  tap_ok(bad == 0, "fp32 layer norm matches native float arithmetic bit for bit (200 inputs)");

  /* fp16 storage, fp32 accumulation: inputs rounded to fp16, float arithmetic, output
   * rounded to fp16 (bf16 likewise) */
  for (int d = 0; d < 2; d++) {
    ns_dtype dt = d ? NS_BF16 : NS_FP16;
    int bad16 = 0;
    for (int trial = 0; trial < 200; trial++) {
      size_t n = 2 + (size_t)(urand() * 60);
      double x[64];
      for (size_t i = 0; i < n; i++) x[i] = 20 + 5 * nrand();
      ns_spec s;
      ns_spec_default(&s);
      s.kind = trial % 2 ? NS_KIND_RMS : NS_KIND_LAYER;
      s.dtype = dt;
      double *y = norm1(n, x, &s);
      volatile float sum = 0, ss = 0, mu = 0, d2, den, t;
      for (size_t i = 0; i < n; i++) sum = sum + (float)ns_round(x[i], dt);
      if (s.kind == NS_KIND_LAYER) mu = sum / (float)n;
      for (size_t i = 0; i < n; i++) {
        d2 = (float)ns_round(x[i], dt) - mu;
        ss = ss + d2 * d2;
      }
      volatile float var = ss / (float)n;
      den = sqrtf(var + 1e-5f);
      for (size_t i = 0; i < n; i++) {
        t = ((float)ns_round(x[i], dt) - mu) / den;
        if (ns_round(t, dt) != y[i]) {
          if (!bad16)
            tap_diag("%s n %zu elem %zu: %.9g vs %.9g", ns_dtype_name(dt), n, i, y[i],
                     ns_round(t, dt));
          bad16++;
          break;
        }
      }
      free(y);
    }
    tap_ok(bad16 == 0,
           "%s layer and rms norm match fp32 float arithmetic on %s inputs (200 inputs)",
           ns_dtype_name(dt), ns_dtype_name(dt));
  }

  double x[6] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6};
  ns_spec s;
  ns_spec_default(&s);
  s.dtype = NS_FP16;
  tap_ok(ns_spec_acc(&s) == NS_FP32, "fp16 accumulates in fp32 by default");
  s.dtype = NS_BF16;
  tap_ok(ns_spec_acc(&s) == NS_FP32, "bf16 accumulates in fp32 by default");
  s.acc = NS_FP64;
  tap_ok(ns_spec_acc(&s) == NS_FP64, "explicit acc wins");
  s.dtype = NS_FP16;
  s.acc = -1;
  ns_tensor *t = vec(6, x);
  ns_norm_result r = {0};
  double *y = run(t, &s, &r);
  int rep = y && r.y->dtype == NS_FP16;
  for (int i = 0; rep && i < 6; i++) rep = ns_round(y[i], NS_FP16) == y[i];
  tap_ok(rep, "fp16 outputs are fp16 values");
  tap_ok(r.mean[0] == ns_round(r.mean[0], NS_FP32) && r.mean[0] != 0.35,
         "fp16 statistics are computed in fp32 from fp16 inputs (mean %.17g)", r.mean[0]);
  free(y);
  ns_norm_result_free(&r);
  ns_tensor_free(t);
}

/* ---- running statistics and eval mode ---- */

static void running(void) {
  ns_running mom, cum, ex;
  tap_ok(ns_running_init(&mom, 0.1, 0, 0, 0, err) == 0, "running init (momentum 0.1)");
  ns_running_init(&cum, 0.1, 1, 0, 0, err);
  ns_running_init(&ex, 0.1, 0, 1, 0, err);
  double rm[3] = {0, 0, 0}, rv[3] = {1, 1, 1};
  double bm[5][3], bv[5][3]; /* per batch: mean and unbiased var, by hand */
  double all[5][8][3];
  for (int k = 0; k < 5; k++) {
    size_t sh[2] = {8, 3};
    ns_tensor *x = ns_tensor_new(2, sh, NS_FP64, err);
    for (int i = 0; i < 8; i++)
      for (int c = 0; c < 3; c++) {
        all[k][i][c] = c + 2 * nrand() + k;
        ns_tensor_set(x, (size_t)(i * 3 + c), all[k][i][c]);
      }
    for (int c = 0; c < 3; c++) {
      double m = 0, q = 0;
      for (int i = 0; i < 8; i++) m += all[k][i][c] / 8;
      for (int i = 0; i < 8; i++) q += (all[k][i][c] - m) * (all[k][i][c] - m);
      bm[k][c] = m;
      bv[k][c] = q / 7;
      rm[c] = 0.9 * rm[c] + 0.1 * m;
      rv[c] = 0.9 * rv[c] + 0.1 * q / 7;
    }
    ns_spec s;
    ns_spec_default(&s);
    s.kind = NS_KIND_BATCH;
    ns_norm_result r = {0};
    s.running = &mom;
    ns_normalize(x, &s, &r, err);
    ns_norm_result_free(&r);
    s.running = &cum;
    ns_normalize(x, &s, &r, err);
    ns_norm_result_free(&r);
    s.running = &ex;
    ns_normalize(x, &s, &r, err);
    ns_norm_result_free(&r);
    ns_tensor_free(x);
  }
  double d1 = 0, d2 = 0, d3 = 0;
  for (int c = 0; c < 3; c++) {
    d1 = fmax(d1, fmax(fabs(mom.mean[c] - rm[c]), fabs(mom.var[c] - rv[c])));
    double am = 0, av = 0, om = 0, oq = 0;
    for (int k = 0; k < 5; k++) {
      am += bm[k][c] / 5;
      av += bv[k][c] / 5;
      for (int i = 0; i < 8; i++) om += all[k][i][c] / 40;
    }
    for (int k = 0; k < 5; k++)
      for (int i = 0; i < 8; i++) oq += (all[k][i][c] - om) * (all[k][i][c] - om);
    d2 = fmax(d2, fmax(fabs(cum.mean[c] - am), fabs(cum.var[c] - av)));
    d3 = fmax(d3, fmax(fabs(ex.mean[c] - om), fabs(ex.var[c] - oq / 40)));
  }
  tap_close(d1, 0, 1e-13, "momentum running stats follow the PyTorch update (5 batches)");
  tap_close(d2, 0, 1e-13, "cumulative running stats are the average of batch means/unbiased vars");
  tap_close(d3, 0, 1e-13, "exact running stats equal one pass over all 40 rows (population var)");
  tap_ok(mom.count == 5 && cum.count == 5 && ex.count == 5, "5 updates counted");

  /* eval mode uses the running statistics */
  size_t sh[2] = {4, 3};
  double xv[12];
  for (int i = 0; i < 12; i++) xv[i] = nrand();
  ns_tensor *x = ns_tensor_from(2, sh, NS_FP64, xv, err);
  ns_spec s;
  ns_spec_default(&s);
  s.kind = NS_KIND_BATCH;
  s.mode = NS_MODE_EVAL;
  s.running = &mom;
  ns_norm_result r = {0};
  double *y = run(x, &s, &r);
  double de = 0;
  for (int i = 0; i < 12; i++)
    de = fmax(de, fabs(y[i] - (xv[i] - rm[i % 3]) / sqrt(rv[i % 3] + 1e-5)));
  tap_close(de, 0, 1e-12, "eval mode normalizes with running mean/var");
  tap_ok(mom.count == 5, "eval mode does not update the running statistics");
  tap_ok(r.batch[1].n == 4, "eval mode still reports the batch's own moments");
  free(y);
  ns_norm_result_free(&r);

  /* explicit axes including the batch axis count as a batch kind */
  ns_running fresh;
  ns_running_init(&fresh, 0.5, 0, 0, 0, err);
  ns_spec_default(&s);
  s.axes = 1; /* axis 1 of a rank 2 input: batch norm written with explicit axes */
  s.running = &fresh;
  y = run(x, &s, &r);
  tap_ok(fresh.count == 1 && fresh.nstat == 3, "explicit axes {1} in train mode update running");
  free(y);
  ns_norm_result_free(&r);
  ns_running_free(&fresh);

  /* layer norm cannot use running statistics: an error, not ignored */
  ns_running_init(&fresh, 0.5, 0, 0, 0, err);
  ns_spec_default(&s);
  s.running = &fresh;
  err[0] = 0;
  tap_ok(ns_normalize(x, &s, &r, err) == -1 && strstr(err, "for batch and instance norm") &&
             fresh.count == 0,
         "layer norm refuses running statistics: %s", err);
  ns_norm_result_free(&r);
  s.mode = NS_MODE_EVAL;
  s.running = NULL;
  y = run(x, &s, &r);
  tap_ok(y != NULL, "layer norm in eval mode needs no running statistics");
  free(y);
  ns_norm_result_free(&r);
  ns_running_free(&fresh);

  /* fresh running object in eval: PyTorch's mean 0, var 1 */
  ns_running_init(&fresh, 0.1, 0, 0, 0, err);
  ns_spec_default(&s);
  s.kind = NS_KIND_BATCH;
  s.mode = NS_MODE_EVAL;
  s.running = &fresh;
  y = run(x, &s, &r);
  tap_close(y ? y[4] : NAN, xv[4] / sqrt(1 + 1e-5), 1e-15, "fresh running stats: mean 0, var 1");
  free(y);
  ns_norm_result_free(&r);
  ns_running_free(&fresh);

  /* errors */
  s.running = NULL;
  tap_ok(ns_normalize(x, &s, &r, err) == -1 && strstr(err, "running"),
         "eval batch norm without running statistics: %s", err);
  ns_running_init(&fresh, 0.1, 0, 0, 5, err);
  s.running = &fresh;
  tap_ok(ns_normalize(x, &s, &r, err) == -1 && strstr(err, "5"),
         "eval with running stats of another channel count: %s", err);
  s.mode = NS_MODE_TRAIN;
  tap_ok(ns_normalize(x, &s, &r, err) == -1 && fresh.count == 0,
         "train with running stats of another channel count: %s", err);
  ns_running_free(&fresh);
  tap_ok(ns_running_init(&fresh, 1.5, 0, 0, 0, err) == -1 && strstr(err, "momentum"),
         "momentum 1.5 refused: %s", err);
  tap_ok(ns_running_init(&fresh, NAN, 0, 0, 0, err) == -1, "momentum NaN refused");
  ns_moments bm1[2] = {{2, 1, 1}, {2, 1, 1}};
  ns_running_init(&fresh, 0.1, 0, 0, 3, err);
  tap_ok(ns_running_update(&fresh, bm1, 2, err) == -1, "update with 2 statistics into 3: %s", err);
  ns_running cp;
  tap_ok(ns_running_copy(&cp, &mom, err) == 0 && cp.nstat == 3 && cp.mean != mom.mean &&
             cp.mean[2] == mom.mean[2] && cp.count == 5,
         "running copy is deep");
  ns_running_free(&cp);
  ns_running_copy(&cp, &ex, err);
  tap_ok(cp.acc && cp.acc != ex.acc && cp.acc[0].n == 40,
         "exact running copy keeps the merge state");
  ns_running_free(&cp);
  ns_running_free(&fresh);
  ns_tensor_free(x);
  ns_running_free(&mom);
  ns_running_free(&cum);
  ns_running_free(&ex);
}

/* ---- degenerate inputs ---- */

static void degenerate(void) {
  double c[4] = {3, 3, 3, 3};
  ns_tensor *t = vec(4, c);
  ns_spec s;
  ns_spec_default(&s);
  s.eps = 0;
  ns_norm_result r = {0};
  double *y = run(t, &s, &r);
  tap_ok(y && isnan(y[0]) && r.degenerate[0] == 1 && r.ndegenerate == 1,
         "constant input with eps 0: 0/0 = NaN, flagged");
  free(y);
  ns_norm_result_free(&r);
  s.eps = 1e-5;
  y = run(t, &s, &r);
  tap_ok(y && y[0] == 0 && r.ndegenerate == 0, "constant input with eps: zeros, not flagged");
  free(y);
  ns_norm_result_free(&r);
  ns_tensor_free(t);

  double one[1] = {2};
  t = vec(1, one);
  s.ddof = 1;
  y = run(t, &s, &r);
  tap_ok(y && isnan(y[0]) && r.degenerate[0], "one element with ddof 1: NaN, flagged");
  free(y);
  ns_norm_result_free(&r);
  ns_tensor_free(t);

  double nn[4] = {1, NAN, 2, 3};
  t = vec(4, nn);
  ns_spec_default(&s);
  y = run(t, &s, &r);
  tap_ok(y && isnan(y[0]) && isnan(y[3]) && r.degenerate[0], "NaN input: NaN outputs, flagged");
  free(y);
  ns_norm_result_free(&r);
  ns_tensor_free(t);

  double inf[4] = {1, INFINITY, 2, 3};
  t = vec(4, inf);
  y = run(t, &s, &r);
  tap_ok(y && r.degenerate[0], "Inf input: flagged, no crash");
  free(y);
  ns_norm_result_free(&r);
  ns_tensor_free(t);

  /* partly degenerate: batch norm with one constant column */
  size_t sh[2] = {3, 2};
  double m[6] = {1, 5, 2, 5, 3, 5};
  t = ns_tensor_from(2, sh, NS_FP64, m, err);
  ns_spec_default(&s);
  s.kind = NS_KIND_BATCH;
  s.eps = 0;
  y = run(t, &s, &r);
  tap_ok(y && r.ndegenerate == 1 && !r.degenerate[0] && r.degenerate[1] && isnan(y[1]) &&
             fabs(y[0] + sqrt(1.5)) < 1e-15,
         "one constant column: only its statistic is flagged");
  free(y);
  ns_norm_result_free(&r);
  ns_tensor_free(t);

  /* fp16 overflow of the statistics */
  double big[2] = {60000, -60000};
  t = vec(2, big);
  ns_spec_default(&s);
  s.dtype = NS_FP16;
  s.acc = NS_FP16;
  s.center = 0;
  y = run(t, &s, &r);
  tap_ok(y && r.degenerate[0] && isinf(r.var[0]), "fp16 accumulation overflow: var inf, flagged");
  free(y);
  ns_norm_result_free(&r);
  ns_tensor_free(t);
}

/* ---- bad arguments ---- */

static void expect_err(const ns_tensor *x, const ns_spec *s, const char *word, const char *what) {
  ns_norm_result r = {0};
  err[0] = 0;
  int rc = ns_normalize(x, s, &r, err);
  tap_ok(rc == -1 && strstr(err, word) && r.y == NULL, "%s: %s", what, err);
  ns_norm_result_free(&r);
}

static void bad_args(void) {
  size_t sh[2] = {2, 6};
  double v[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  ns_tensor *x = ns_tensor_from(2, sh, NS_FP64, v, err);
  ns_tensor *x1 = vec(6, v);
  ns_spec s;
  ns_spec_default(&s);
  s.eps = -1e-5;
  expect_err(x, &s, "eps", "eps < 0 refused");
  s.eps = NAN;
  expect_err(x, &s, "eps", "eps NaN refused");
  ns_spec_default(&s);
  s.ddof = 2;
  expect_err(x, &s, "ddof", "ddof 2 refused");
  ns_spec_default(&s);
  s.kind = (ns_kind)9;
  expect_err(x, &s, "kind", "unknown kind refused");
  ns_spec_default(&s);
  s.kind = NS_KIND_INSTANCE;
  expect_err(x, &s, "instance", "instance norm of a rank 2 input refused");
  ns_spec_default(&s);
  s.kind = NS_KIND_GROUP;
  expect_err(x1, &s, "rank 1", "group norm of a rank 1 input refused");
  s.groups = 4;
  expect_err(x, &s, "divide", "4 groups of 6 channels refused");
  s.groups = 0;
  expect_err(x, &s, "groups", "0 groups refused");
  s.groups = 2;
  s.axes = 1;
  expect_err(x, &s, "axis 2", "group norm with axes leaving out the channels refused");
  ns_spec_default(&s);
  s.axes = 4;
  expect_err(x, &s, "axis 3", "axis 3 of a rank 2 input refused");
  ns_spec_default(&s);
  double g[4] = {1, 1, 1, 1};
  s.gamma = g;
  s.ngamma = 4;
  expect_err(x, &s, "gamma has 4", "layer gamma of 4 for 6 features refused");
  ns_spec_default(&s);
  s.kind = NS_KIND_BATCH;
  s.beta = g;
  s.nbeta = 2;
  expect_err(x, &s, "beta has 2", "batch beta of 2 for 6 channels refused");
  s.beta = NULL;
  s.gamma = g;
  s.ngamma = 0;
  expect_err(x, &s, "gamma has 0", "empty gamma refused");
  ns_spec_default(&s);
  s.acc = 7;
  expect_err(x, &s, "accumulation", "unknown acc dtype refused");
  ns_spec_default(&s);
  s.dtype = (ns_dtype)5;
  expect_err(x, &s, "dtype", "unknown dtype refused");
  ns_spec_default(&s);
  s.algo = (ns_algo)3;
  expect_err(x, &s, "algorithm", "unknown algo refused");
  ns_spec_default(&s);
  s.eps_at = (ns_eps_at)2;
  expect_err(x, &s, "eps_at", "unknown eps placement refused");
  ns_spec_default(&s);
  s.mode = (ns_mode)2;
  expect_err(x, &s, "mode", "unknown mode refused");
  expect_err(NULL, &s, "input", "NULL input refused");
  expect_err(x, NULL, "spec", "NULL spec refused");
  tap_ok(ns_normalize(x, &s, NULL, err) == -1, "NULL result refused");

  /* a statistic count whose byte size overflows size_t: refused, not a short allocation
   * written past its end */
  ns_running huge;
  err[0] = 0;
  tap_ok(ns_running_init(&huge, 0.1, 0, 0, ((size_t)1 << 61) + 1, err) == -1 && err[0] &&
             huge.mean == NULL && huge.nstat == 0,
         "running statistics of 2^61+1 channels refused: %s", err);
  ns_running_free(&huge);

  /* per-channel gamma for batch (6 channels) and per-element for layer are accepted */
  ns_spec_default(&s);
  s.kind = NS_KIND_BATCH;
  double g6[6] = {1, 2, 3, 4, 5, 6};
  s.gamma = g6;
  s.ngamma = 6;
  ns_norm_result r = {0};
  tap_ok(ns_normalize(x, &s, &r, err) == 0, "batch gamma per channel accepted");
  ns_norm_result_free(&r);
  ns_norm_result_free(&r); /* twice is safe */

  /* names */
  ns_kind k = NS_KIND_RMS;
  int okn = 1;
  for (int i = 0; i < 5; i++)
    okn = okn && ns_kind_parse(ns_kind_name((ns_kind)i), &k) == 0 && k == (ns_kind)i;
  tap_ok(okn && ns_kind_parse("batchnorm", &k) == -1 &&
             strcmp(ns_kind_name(NS_KIND_GROUP), "group") == 0,
         "kind names round-trip; unknown refused");
  tap_ok(strcmp(ns_eps_at_name(NS_EPS_STD), "std") == 0 &&
             strcmp(ns_mode_name(NS_MODE_EVAL), "eval") == 0,
         "eps_at and mode names");
  ns_spec_default(&s);
  tap_ok(s.kind == NS_KIND_LAYER && s.eps == 1e-5 && s.eps_at == NS_EPS_VAR && s.dtype == NS_FP64 &&
             ns_spec_center(&s) == 1 && ns_spec_acc(&s) == NS_FP64 && s.groups == 1,
         "spec defaults: layer, eps 1e-5 inside the sqrt, fp64, centered");
  s.kind = NS_KIND_RMS;
  tap_ok(ns_spec_center(&s) == 0, "rms is uncentered by default");
  ns_tensor_free(x);
  ns_tensor_free(x1);
}

/* ---- fast paths against native float arithmetic and against each other ---- */

static void fast_paths(void) {
  /* (3, 4, 5) fp32 tensors: every kind at rank 3 covers contiguous statistics (layer,
   * instance: read in place) and strided ones (batch, group: gathered) */
  size_t sh[3] = {3, 4, 5};
  int bad = 0, badpath = 0, trials = 0;
  for (int trial = 0; trial < 40; trial++) {
    double v[60];
    for (int i = 0; i < 60; i++) v[i] = (double)(float)(7 + 2 * nrand());
    ns_tensor *x32 = ns_tensor_from(3, sh, NS_FP32, v, err);
    ns_tensor *x64 = ns_tensor_from(3, sh, NS_FP64, v, err);
    for (int k = 0; k < 5; k++) {
      ns_spec s;
      ns_spec_default(&s);
      s.kind = (ns_kind)k;
      s.groups = 2;
      s.dtype = NS_FP32;
      double g = 0.75, b = 0.125;
      s.gamma = &g;
      s.ngamma = 1;
      s.beta = &b;
      s.nbeta = 1;
      ns_norm_result r = {0}, r64 = {0};
      double *y = run(x32, &s, &r), *y64 = run(x64, &s, &r64);
      trials++;
      if (!y || !y64) {
        bad++;
        continue;
      }
      /* storage dtype of x must not matter: fp64 storage goes through ns_tensor_read */
      if (memcmp(y, y64, 60 * sizeof *y) != 0) badpath++;
      with_lists(&r, &s);
      const ns_norm_plan *p = &r.plan;
      int centered = s.kind != NS_KIND_RMS;
      for (size_t q = 0; q < p->nstat; q++) {
        const size_t *mem = p->members + q * p->count;
        volatile float sum = 0, ss = 0, mu = 0, d, den, t;
        for (size_t j = 0; j < p->count; j++) sum = sum + (float)v[mem[j]];
        if (centered) mu = sum / (float)p->count;
        for (size_t j = 0; j < p->count; j++) {
          d = (float)v[mem[j]] - mu;
          ss = ss + d * d;
        }
        volatile float var = ss / (float)p->count;
        den = sqrtf(var + 1e-5f);
        for (size_t j = 0; j < p->count; j++) {
          t = centered ? ((float)v[mem[j]] - mu) / den : (float)v[mem[j]] / den;
          t = t * 0.75f;
          t = t + 0.125f;
          if ((double)t != y[mem[j]]) {
            if (!bad)
              tap_diag("%s elem %zu: %.9g vs %.9g", ns_kind_name(s.kind), mem[j], y[mem[j]],
                       (double)t);
            bad++;
          }
        }
      }
      free(y);
      free(y64);
      ns_norm_result_free(&r);
      ns_norm_result_free(&r64);
    }
    ns_tensor_free(x32);
    ns_tensor_free(x64);
  }
  tap_ok(bad == 0,
         "fp32 normalize of every kind on (3, 4, 5) matches native float arithmetic "
         "bit for bit (%d runs)",
         trials);
  tap_ok(badpath == 0, "fp32 and fp64 storage of the same values give the same bits (%d runs)",
         trials);
}

int main(void) {
  claims();
  kinds_table();
  axes_table();
  against_reference();
  identities();
  precision();
  running();
  degenerate();
  bad_args();
  fast_paths();
  return tap_done();
}
