/* test_jvp.c: the closed-form Jacobian-vector product against J v from the full analytic
 * Jacobian (small inputs, every kind) and against central differences of ns_normalize
 * (large ones); the line walks (ns_stat_members, ns_stat_moments) against the plan's
 * index lists; the O(n) closed-form spectrum against LAPACK on the full J (small d); and
 * the eigenvector checks of ns_spectrum_check at d = 4096 and 1e6, which must both pass
 * and be sharp enough to catch a wrong eigenvalue. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jacobian.h"
#include "core/jvp.h"
#include "core/spectrum.h"
#include "tap.h"

static unsigned long long lcg_state = 12345;
static double lcg(void) {
  lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(lcg_state >> 11) / 9007199254740992.0;
}

static ns_tensor *rand_tensor(int rank, const size_t *shape, double loc, double scale) {
  char err[NS_ERRLEN];
  ns_tensor *t = ns_tensor_new(rank, shape, NS_FP64, err);
  for (size_t i = 0; t && i < t->n; i++) ns_tensor_set(t, i, loc + scale * (2 * lcg() - 1));
  return t;
}

typedef struct {
  const char *name;
  int rank;
  size_t shape[4];
  ns_kind kind;
  int groups;
  unsigned axes;
} shape_case;

static const shape_case cases[] = {
    {"layer (7)", 1, {7}, NS_KIND_LAYER, 1, 0},
    {"rms (5)", 1, {5}, NS_KIND_RMS, 1, 0},
    {"layer (3,6)", 2, {3, 6}, NS_KIND_LAYER, 1, 0},
    {"rms (4,5)", 2, {4, 5}, NS_KIND_RMS, 1, 0},
    {"batch (6,4)", 2, {6, 4}, NS_KIND_BATCH, 1, 0},
    {"group (3,6) G3", 2, {3, 6}, NS_KIND_GROUP, 3, 0},
    {"batch (3,2,4)", 3, {3, 2, 4}, NS_KIND_BATCH, 1, 0},
    {"instance (2,3,4)", 3, {2, 3, 4}, NS_KIND_INSTANCE, 1, 0},
    {"group (2,4,2,2) G2", 4, {2, 4, 2, 2}, NS_KIND_GROUP, 2, 0},
    {"batch (2,3,2,2)", 4, {2, 3, 2, 2}, NS_KIND_BATCH, 1, 0},
    {"layer axes {1} (4,3)", 2, {4, 3}, NS_KIND_LAYER, 1, 1u},
    {"batch axes {1} (3,4,2,2)", 4, {3, 4, 2, 2}, NS_KIND_BATCH, 1, 1u},
    {"layer axes {1,3} (2,3,4)", 3, {2, 3, 4}, NS_KIND_LAYER, 1, 5u},
};

/* s as batch norm in eval mode, with running statistics (run) from one update on x */
static void eval_batch(const ns_tensor *x, ns_spec *s, ns_running *run, char *err) {
  ns_running_init(run, 0.1, 0, 0, 0, err);
  s->kind = NS_KIND_BATCH;
  s->running = run;
  ns_norm_result r;
  memset(&r, 0, sizeof r);
  ns_normalize(x, s, &r, err); /* one update */
  ns_norm_result_free(&r);
  s->mode = NS_MODE_EVAL;
}

/* J v by the n x n analytic Jacobian */
static void matvec(const double *J, const double *v, size_t n, double *out) {
  for (size_t i = 0; i < n; i++) {
    double s = 0;
    for (size_t j = 0; j < n; j++) s += J[i * n + j] * v[j];
    out[i] = s;
  }
}

static double maxabs(const double *a, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; i++) m = fmax(m, fabs(a[i]));
  return m;
}

static void jvp_vs_full_j(void) {
  char err[NS_ERRLEN] = "";
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    for (int variant = 0; variant < 4; variant++) {
      const shape_case *sc = &cases[c];
      ns_tensor *x = rand_tensor(sc->rank, sc->shape, 0.5, 2);
      ns_spec s;
      ns_spec_default(&s);
      s.kind = sc->kind;
      s.groups = sc->groups;
      s.axes = sc->axes;
      s.eps = variant & 1 ? 0.3 : 1e-5;
      s.eps_at = variant & 2 ? NS_EPS_STD : NS_EPS_VAR;
      s.ddof = variant == 3;
      /* gamma per element (layer, rms) or per channel, not constant */
      ns_norm_plan p;
      ns_norm_plan_shape(x->rank, x->shape, &s, &p, err);
      double gamma[64];
      for (size_t k = 0; k < p.naffine && k < 64; k++) gamma[k] = 0.5 + lcg();
      if (variant >= 2 && p.naffine <= 64) s.gamma = gamma, s.ngamma = p.naffine;
      size_t n = x->n;
      double *J = malloc(n * n * sizeof *J), *v = malloc(n * sizeof *v);
      double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
      for (size_t i = 0; i < n; i++) v[i] = 2 * lcg() - 1;
      int rc = ns_jacobian_analytic(x, &s, J, err);
      rc |= ns_jvp(x, &s, v, a, err);
      matvec(J, v, n, b);
      double d = ns_max_abs_diff(a, b, n), sc2 = maxabs(b, n);
      tap_ok(rc == 0 && d <= 1e-13 * (1 + sc2), "jvp = J v: %s eps %g at %s ddof %d%s: %.2g %s",
             sc->name, s.eps, ns_eps_at_name(s.eps_at), s.ddof, s.gamma ? " gamma" : "", d, err);
      free(J), free(v), free(a), free(b);
      ns_norm_plan_free(&p);
      ns_tensor_free(x);
    }
  /* eval mode of batch norm: the running statistics are constants, J diagonal */
  size_t sh[2] = {5, 3};
  ns_tensor *x = rand_tensor(2, sh, 1, 1);
  ns_running run;
  ns_spec s;
  ns_spec_default(&s);
  eval_batch(x, &s, &run, err);
  double J[225], v[15], a[15], b[15];
  for (int i = 0; i < 15; i++) v[i] = lcg() - 0.5;
  int rc = ns_jacobian_analytic(x, &s, J, err) | ns_jvp(x, &s, v, a, err);
  matvec(J, v, 15, b);
  tap_ok(rc == 0 && ns_max_abs_diff(a, b, 15) <= 1e-14, "jvp = J v in eval mode %s", err);
  ns_running_free(&run);
  ns_tensor_free(x);
}

/* (y(x + h v) - y(x - h v)) / 2h */
static int fd_along(const ns_tensor *x, const ns_spec *s, const double *v, double h, double *out) {
  char err[NS_ERRLEN];
  size_t n = x->n;
  double *y[2];
  for (int k = 0; k < 2; k++) {
    ns_tensor *t = ns_tensor_copy(x);
    for (size_t i = 0; i < n; i++) ns_tensor_set(t, i, ns_tensor_get(x, i) + (k ? -h : h) * v[i]);
    ns_norm_result r;
    memset(&r, 0, sizeof r);
    if (ns_normalize(t, s, &r, err) != 0) return -1;
    y[k] = malloc(n * sizeof *y[k]);
    ns_tensor_read(r.y, y[k]);
    ns_norm_result_free(&r);
    ns_tensor_free(t);
  }
  for (size_t i = 0; i < n; i++) out[i] = (y[0][i] - y[1][i]) / (2 * h);
  free(y[0]), free(y[1]);
  return 0;
}

static void jvp_vs_fd_large(void) {
  char err[NS_ERRLEN] = "";
  struct {
    const char *name;
    int rank;
    size_t shape[4];
    ns_kind kind;
  } big[] = {{"layer d=100000", 1, {100000}, NS_KIND_LAYER},
             {"rms (200,512)", 2, {200, 512}, NS_KIND_RMS},
             {"batch (16,8,16,16)", 4, {16, 8, 16, 16}, NS_KIND_BATCH}};
  for (size_t c = 0; c < sizeof big / sizeof *big; c++) {
    ns_tensor *x = rand_tensor(big[c].rank, big[c].shape, 1, 3);
    ns_spec s;
    ns_spec_default(&s);
    s.kind = big[c].kind;
    size_t n = x->n;
    double *v = malloc(n * sizeof *v), *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    for (size_t i = 0; i < n; i++) v[i] = 2 * lcg() - 1;
    int rc = ns_jvp(x, &s, v, a, err) | fd_along(x, &s, v, 1e-5, b);
    double d = ns_max_abs_diff(a, b, n);
    tap_ok(rc == 0 && d < 1e-7 * (1 + maxabs(a, n)), "jvp = central differences, %s: %.2g %s",
           big[c].name, d, err);
    free(v), free(a), free(b);
    ns_tensor_free(x);
  }
}

static void walks_vs_lists(void) {
  char err[NS_ERRLEN] = "";
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    const shape_case *sc = &cases[c];
    ns_tensor *x = rand_tensor(sc->rank, sc->shape, 3, 1);
    ns_spec s;
    ns_spec_default(&s);
    s.kind = sc->kind;
    s.groups = sc->groups;
    s.axes = sc->axes;
    ns_norm_plan full, lean;
    ns_norm_plan_make(x->rank, x->shape, &s, &full, err);
    ns_norm_plan_shape(x->rank, x->shape, &s, &lean, err);
    size_t m = full.count, *idx = malloc(m * sizeof *idx);
    int same = 1;
    for (size_t k = 0; k < full.nstat; k++) {
      if (ns_stat_members(&lean, k, idx, err) != 0) same = 0;
      for (size_t a = 0; a < m && same; a++) same = idx[a] == full.members[k * m + a];
    }
    double *mu = malloc(full.nstat * sizeof *mu), *m2 = malloc(full.nstat * sizeof *m2);
    int center = ns_spec_center(&s);
    double worst = 0;
    int rc = 0;
    /* one thread, and split over two and three (a part reads its statistics' elements
       only, also of lines that cross statistics): the same bits */
    for (int th = 1; th <= 3; th++) {
      rc |= ns_stat_moments_exec(x, &lean, center, mu, m2, th, err);
      for (size_t k = 0; k < full.nstat; k++) { /* the straightforward sums over the lists */
        double mean = 0, ss = 0;
        for (size_t a = 0; a < m && center; a++) mean += ns_tensor_get(x, full.members[k * m + a]);
        mean /= center ? (double)m : 1;
        for (size_t a = 0; a < m; a++) {
          double d = ns_tensor_get(x, full.members[k * m + a]) - mean;
          ss += d * d;
        }
        worst = fmax(worst, fabs(mean - mu[k]) + fabs(ss - m2[k]));
      }
    }
    tap_ok(same && rc == 0 && worst == 0,
           "stat walks = the plan's lists (members, moments bit for bit on 1-3 threads): %s",
           sc->name);
    free(idx), free(mu), free(m2);
    ns_norm_plan_free(&full);
    ns_norm_plan_free(&lean);
    ns_tensor_free(x);
  }
  ns_norm_plan lean;
  ns_spec s;
  ns_spec_default(&s);
  size_t sh[1] = {4}, idx[4];
  ns_norm_plan_shape(1, sh, &s, &lean, err);
  tap_ok(ns_stat_members(&lean, 1, idx, err) == -1 && strstr(err, "statistic 2 of 1"),
         "stat_members refuses a statistic out of range: %s", err);
  tap_ok(ns_stat_moments(NULL, &lean, 1, NULL, NULL, err) == -1 && strstr(err, "NULL"),
         "stat_moments refuses NULL: %s", err);
  tap_ok(ns_jvp(NULL, &s, NULL, NULL, err) == -1 && strstr(err, "input tensor"),
         "jvp refuses NULL: %s", err);
  ns_tensor *x = rand_tensor(1, sh, 0, 1);
  double v[4] = {1, NAN, 0, 0}, jv[4];
  tap_ok(ns_jvp(x, &s, v, jv, err) == -1 && strstr(err, "element 2 of v"),
         "jvp refuses a non-finite v: %s", err);
  ns_tensor_free(x);
}

/* closed form (O(n)) against LAPACK on the full analytic J, matched value by value */
static void closed_vs_lapack(void) {
  char err[NS_ERRLEN] = "";
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    for (int variant = 0; variant < 3; variant++) {
      const shape_case *sc = &cases[c];
      ns_tensor *x = rand_tensor(sc->rank, sc->shape, 0.2, 1.5);
      ns_spec s;
      ns_spec_default(&s);
      s.kind = sc->kind;
      s.groups = sc->groups;
      s.axes = sc->axes;
      s.eps = variant ? 0.1 : 1e-5;
      s.eps_at = variant == 2 ? NS_EPS_STD : NS_EPS_VAR;
      double g = 1.7;
      if (variant == 1) s.gamma = &g, s.ngamma = 1;
      size_t n = x->n;
      double *J = malloc(n * n * sizeof *J);
      ns_eig *ec = malloc(n * sizeof *ec), *en = malloc(n * sizeof *en);
      int rc = ns_jacobian_analytic(x, &s, J, err);
      int nc = ns_spectrum_closed(x, &s, ec, n, err);
      int nn = ns_spectrum_numeric(x, &s, J, en, n, err);
      /* expand both to n sorted values with their labels */
      double *vc = malloc(n * sizeof *vc), *vn = malloc(n * sizeof *vn);
      size_t kc = 0, kn = 0;
      for (int i = 0; i < nc; i++)
        for (int k = 0; k < ec[i].mult && kc < n; k++) vc[kc++] = ec[i].value;
      for (int i = 0; i < nn; i++)
        for (int k = 0; k < en[i].mult && kn < n; k++) vn[kn++] = en[i].value;
      double worst = kc == n && kn == n ? 0 : INFINITY, scale = 1;
      for (size_t i = 0; i < kn; i++) scale = fmax(scale, fabs(vn[i]));
      for (size_t i = 0; i < n && kc == n && kn == n; i++) worst = fmax(worst, fabs(vc[i] - vn[i]));
      tap_ok(rc == 0 && nc > 0 && nn > 0 && worst <= 1e-9 * scale,
             "closed form = LAPACK on J: %s eps %g at %s%s: %.2g %s", sc->name, s.eps,
             ns_eps_at_name(s.eps_at), s.gamma ? " gamma 1.7" : "", worst, err);
      free(J), free(ec), free(en), free(vc), free(vn);
      ns_tensor_free(x);
    }
}

static void check_large(void) {
  char err[NS_ERRLEN] = "";
  struct {
    size_t d;
    ns_kind kind;
    ns_eps_at at;
    double eps;
  } big[] = {{4096, NS_KIND_LAYER, NS_EPS_VAR, 1e-5},
             {4096, NS_KIND_RMS, NS_EPS_VAR, 1e-5},
             {4096, NS_KIND_LAYER, NS_EPS_STD, 0.5},
             {1000000, NS_KIND_LAYER, NS_EPS_VAR, 1e-5},
             {1000000, NS_KIND_RMS, NS_EPS_VAR, 0.1}};
  for (size_t c = 0; c < sizeof big / sizeof *big; c++) {
    size_t sh[1] = {big[c].d};
    ns_tensor *x = rand_tensor(1, sh, 0.3, 2);
    ns_spec s;
    ns_spec_default(&s);
    s.kind = big[c].kind;
    s.eps = big[c].eps;
    s.eps_at = big[c].at;
    ns_eig e[3];
    ns_eigcheck ck[3];
    int ne = ns_spectrum_closed(x, &s, e, 3, err);
    int nk = ns_spectrum_check(x, &s, 0, ck, 3, err);
    int want = s.kind == NS_KIND_LAYER ? 3 : 2, pass = nk == want;
    double gap = INFINITY; /* between distinct eigenvalues */
    for (int i = 0; i < ne; i++)
      for (int j = 0; j < ne; j++)
        if (i != j) gap = fmin(gap, fabs(e[i].value - e[j].value));
    for (int i = 0; i < nk; i++) {
      pass &= ck[i].jvp_res <= ck[i].jvp_tol && ck[i].fd_res <= ck[i].fd_tol;
      /* an eigenvalue off by 10% (or, for 0, by a tenth of the nearest other) fails */
      double wrong = 0.1 * (ck[i].value != 0 ? fabs(ck[i].value) : gap);
      pass &= ck[i].fd_tol < wrong && ck[i].jvp_tol < wrong;
      tap_diag("d=%zu %s %s: lambda %.10g jvp %.2g (tol %.2g) fd %.2g (tol %.2g)", big[c].d,
               ns_kind_name(s.kind), ns_label_name(ck[i].label), ck[i].value, ck[i].jvp_res,
               ck[i].jvp_tol, ck[i].fd_res, ck[i].fd_tol);
    }
    tap_ok(ne == want && pass,
           "d = %zu %s eps %g at %s: closed form verified along ones/radial/bulk by JVP and FD %s",
           big[c].d, ns_kind_name(s.kind), s.eps, ns_eps_at_name(s.eps_at), err);
    ns_tensor_free(x);
  }
  /* the check catches a wrong eigenvalue: along the radial vector, J v is eps/s^3 v,
   * nowhere near the bulk 1/s (what a formula with the eps term dropped would claim) */
  size_t sh[2] = {50, 64};
  ns_tensor *x = rand_tensor(2, sh, 1, 1);
  ns_spec s;
  ns_spec_default(&s);
  ns_eigcheck ck[3];
  int nk = ns_spectrum_check(x, &s, 7, ck, 3, err);
  int found = 0;
  for (int i = 0; i < nk; i++)
    if (ck[i].label == NS_LABEL_BULK) found = ck[i].value > 0 && ck[i].fd_res <= ck[i].fd_tol;
  tap_ok(nk == 3 && found, "spectrum_check on statistic 8 of a (50,64) layer norm %s", err);
  tap_ok(ns_spectrum_check(x, &s, 50, ck, 3, err) == -1 && strstr(err, "statistic 51 of 50"),
         "spectrum_check refuses a statistic out of range: %s", err);
  ns_tensor_free(x);
}

/* A statistic of equal values (zero variance, the dead channel an audit finds): eps alone
 * sets the map's curvature, J = (I - 11'/m)/s with s = sqrt(eps). A finite-difference step
 * taken from |x - mean| = 0 was a whole unit, 300 times the curvature's radius sqrt(m eps),
 * and failed the bulk direction that holds; the step from sqrt(m) s passes it. A variance
 * that is tiny beside eps is the same case. */
static void check_flat(void) {
  char err[NS_ERRLEN] = "";
  const double spreads[] = {0, 1e-9, 1e-4};
  const size_t ms[] = {4, 128, 4096};
  const ns_kind kinds[] = {NS_KIND_LAYER, NS_KIND_RMS};
  for (size_t a = 0; a < sizeof spreads / sizeof *spreads; a++)
    for (size_t b = 0; b < sizeof ms / sizeof *ms; b++)
      for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        size_t sh[1] = {ms[b]};
        ns_tensor *x = rand_tensor(1, sh, 0, spreads[a]);
        ns_spec s;
        ns_spec_default(&s);
        s.kind = kinds[k];
        ns_eigcheck ck[3];
        int nk = ns_spectrum_check(x, &s, 0, ck, 3, err), pass = nk >= 1;
        for (int i = 0; i < nk; i++) {
          pass &= ck[i].jvp_res <= ck[i].jvp_tol && ck[i].fd_res <= ck[i].fd_tol;
          if (!(ck[i].fd_res <= ck[i].fd_tol))
            tap_diag("%s: lambda %.10g fd %.2g (tol %.2g), step %.2g", ns_label_name(ck[i].label),
                     ck[i].value, ck[i].fd_res, ck[i].fd_tol, ck[i].h);
        }
        tap_ok(pass, "m = %zu %s, spread %g beside eps 1e-5: %d directions verified %s", ms[b],
               ns_kind_name(s.kind), spreads[a], nk, err);
        ns_tensor_free(x);
      }
}

/* ns_jvp_n: each direction's J v has the bits of ns_jvp on it alone, for every walk (lines
 * of one statistic, lines crossing statistics, groups in a line), and with the moments
 * given; a non-finite entry is named with its vector */
static void jvp_n_bits(void) {
  char err[NS_ERRLEN] = "";
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    const shape_case *sc = &cases[c];
    ns_tensor *x = rand_tensor(sc->rank, sc->shape, 0.4, 1.5);
    ns_spec s;
    ns_spec_default(&s);
    s.kind = sc->kind;
    s.groups = sc->groups;
    s.axes = sc->axes;
    size_t n = x->n;
    /* six directions: a group of four summed side by side, then a group of two */
    enum { ND = 6 };
    double *buf = malloc(2 * ND * n * sizeof *buf), *one = malloc(n * sizeof *one);
    const double *v[ND];
    double *jv[ND];
    for (int d = 0; d < ND; d++) v[d] = buf + (size_t)d * n, jv[d] = buf + (size_t)(ND + d) * n;
    for (size_t i = 0; i < ND * n; i++) buf[i] = 2 * lcg() - 1;
    int rc = ns_jvp_n(x, &s, ND, v, jv, err), same = rc == 0;
    for (int d = 0; d < ND && same; d++) {
      same &= ns_jvp(x, &s, v[d], one, err) == 0;
      same &= memcmp(one, jv[d], n * sizeof *one) == 0;
    }
    tap_ok(same, "jvp_n of %d directions = ns_jvp of each, bit for bit: %s %s", ND, sc->name, err);
    free(buf), free(one);
    ns_tensor_free(x);
  }
  /* the moments given: the same bits */
  size_t sh[2] = {6, 257};
  ns_tensor *x = rand_tensor(2, sh, 3, 0.5);
  ns_spec s;
  ns_spec_default(&s);
  ns_norm_plan p;
  double mean[6], m2[6], *v = malloc(x->n * sizeof *v), *a = malloc(x->n * sizeof *a),
                         *b = malloc(x->n * sizeof *b);
  for (size_t i = 0; i < x->n; i++) v[i] = 2 * lcg() - 1;
  int ok = ns_norm_plan_shape(2, sh, &s, &p, err) == 0 &&
           ns_stat_moments(x, &p, 1, mean, m2, err) == 0 &&
           ns_jvp_n_m2(x, &s, mean, m2, 1, (const double *const *)&v, 1, &a, err) == 0 &&
           ns_jvp(x, &s, v, b, err) == 0 && memcmp(a, b, x->n * sizeof *a) == 0;
  ns_norm_plan_free(&p);
  tap_ok(ok, "jvp_n_m2 with the moments of ns_stat_moments = ns_jvp, bit for bit %s", err);
  v[300] = NAN;
  const double *vv[2] = {b, v};
  double *jj[2] = {a, b};
  tap_ok(ns_jvp_n(x, &s, 2, vv, jj, err) == -1 && strstr(err, "element 301 of vector 2"),
         "jvp_n names the vector and element that is not finite: %s", err);
  tap_ok(ns_jvp(x, &s, v, a, err) == -1 && strstr(err, "element 301 of v is not finite"),
         "jvp names the element of v that is not finite: %s", err);
  v[300] = 0, v[1000] = INFINITY, v[1001] = -INFINITY; /* their sum is NaN */
  tap_ok(ns_jvp_n(x, &s, 2, vv, jj, err) == -1 && strstr(err, "element 1001 of vector 2"),
         "an infinity of each sign in one statistic is found: %s", err);
  ns_spec se = s; /* eval mode: no sums of v, the values are scanned */
  ns_running run;
  eval_batch(x, &se, &run, err);
  tap_ok(ns_jvp_n(x, &se, 2, vv, jj, err) == -1 && strstr(err, "element 1001 of vector 2"),
         "eval mode names the element that is not finite too: %s", err);
  ns_running_free(&run);
  for (size_t i = 0; i < x->n; i++) v[i] = 1.5e308; /* finite, but their sums overflow */
  err[0] = 0;
  tap_ok(ns_jvp_n(x, &s, 2, vv, jj, err) == 0,
         "sums of v that overflow are not a value that is not finite: %s", err);
  free(v), free(a), free(b);
  ns_tensor_free(x);
  /* one line of one statistic over threads: the same bits */
  size_t sh1[1] = {70001};
  x = rand_tensor(1, sh1, 1.1, 0.4);
  double *w[3], *j1[3], *j2[3];
  for (int d = 0; d < 3; d++) {
    w[d] = malloc(x->n * sizeof *w[d]), j1[d] = malloc(x->n * sizeof *j1[d]);
    j2[d] = malloc(x->n * sizeof *j2[d]);
    for (size_t i = 0; i < x->n; i++) w[d][i] = 2 * lcg() - 1;
  }
  ns_spec_default(&s);
  err[0] = 0;
  ok = ns_jvp_n_m2(x, &s, NULL, NULL, 3, (const double *const *)w, 1, j1, err) == 0 &&
       ns_jvp_n_m2(x, &s, NULL, NULL, 3, (const double *const *)w, 2, j2, err) == 0;
  for (int d = 0; d < 3; d++) ok &= memcmp(j1[d], j2[d], x->n * sizeof *j1[d]) == 0;
  tap_ok(ok,
         "jvp_n_m2 of one statistic of 70001 values, 3 directions: 2 threads = 1, bit for "
         "bit %s",
         err);
  /* the residuals alone: the products' values, summed in the order lanes.h describes (two
     parts, four sums side by side in each, the tail into the first), on 1 and 2 threads */
  const double lam[3] = {0.5, -1.25, 3};
  double r1[3], r2[3], want[3];
  ok = ns_jvp_resid(x, &s, NULL, NULL, 3, (const double *const *)w, lam, 1, r1, err) == 0 &&
       ns_jvp_resid(x, &s, NULL, NULL, 3, (const double *const *)w, lam, 2, r2, err) == 0;
  for (int d = 0; d < 3; d++) {
    want[d] = 0;
    for (int q = 0; q < 2; q++) {
      size_t lo = x->n * q / 2, hi = x->n * (q + 1) / 2, quad = lo + (hi - lo) / 4 * 4;
      double l4[4] = {0, 0, 0, 0};
      for (size_t i = lo; i < hi; i++) {
        double f = j1[d][i] - lam[d] * w[d][i];
        l4[i < quad ? (i - lo) % 4 : 0] += f * f;
      }
      want[d] += (l4[0] + l4[1]) + (l4[2] + l4[3]);
    }
    ok &=
        memcmp(&r1[d], &want[d], sizeof want[d]) == 0 && memcmp(&r2[d], &r1[d], sizeof r1[d]) == 0;
  }
  tap_ok(ok,
         "jvp_resid = the products' residuals summed by lanes.h, bit for bit, on 1 and 2 "
         "threads (%.17g %.17g %.17g) %s",
         r1[0], r1[1], r1[2], err);
  for (int d = 0; d < 3; d++) free(w[d]), free(j1[d]), free(j2[d]);
  ns_tensor_free(x);
  size_t sh2[2] = {2, 300}; /* two statistics: not the check's block */
  x = rand_tensor(2, sh2, 1, 1);
  double *u = calloc(x->n, sizeof *u), one;
  const double *uu = u;
  tap_ok(ns_jvp_resid(x, &s, NULL, NULL, 1, &uu, lam, 1, &one, err) == -1 &&
             strstr(err, "one statistic"),
         "jvp_resid refuses x of two statistics: %s", err);
  free(u);
  ns_tensor_free(x);
}

/* ns_spectrum_check's paths give the same checks, bit for bit: one thread or two for the
 * central differences, and a statistic read in place (fp64, its members one run of x)
 * or gathered into a block (the same values as a column of the transpose) */
static void check_paths_at(size_t m) {
  char err[NS_ERRLEN] = "";
  size_t k = 3, sh[2] = {k, m}, sht[2] = {m, k};
  ns_tensor *x = rand_tensor(2, sh, 0.7, 1.3), *xt = ns_tensor_new(2, sht, NS_FP64, err);
  for (size_t r = 0; r < k; r++)
    for (size_t i = 0; i < m; i++) ns_tensor_set(xt, i * k + r, ns_tensor_get(x, r * m + i));
  for (int rms = 0; rms < 2; rms++) {
    ns_spec s, st;
    ns_spec_default(&s);
    s.kind = rms ? NS_KIND_RMS : NS_KIND_LAYER;
    s.eps = 0.01;
    ns_spec_default(&st);
    st.kind = NS_KIND_BATCH; /* the statistics of the transpose's columns */
    if (rms) st.center = 0;
    st.eps = 0.01;
    ns_eigcheck a[3], b[3], c[3], d[3];
    memset(a, 0, sizeof a), memset(b, 0, sizeof b), memset(c, 0, sizeof c);
    memset(d, 0, sizeof d);
    int na = ns_spectrum_check_exec(x, &s, 2, 1, a, 3, err);
    int nb = ns_spectrum_check_exec(x, &s, 2, 2, b, 3, err);
    int nc = ns_spectrum_check_exec(xt, &st, 2, 1, c, 3, err);
    /* the moments of every statistic from ns_stat_moments, as ns.spectrum passes them */
    ns_norm_plan p;
    double mean[3], m2[3];
    int nd = -1;
    if (ns_norm_plan_shape(2, sh, &s, &p, err) == 0) {
      if (ns_stat_moments(x, &p, !rms, mean, m2, err) == 0)
        nd = ns_spectrum_check_moments(x, &s, 2, &mean[2], &m2[2], 2, d, 3, err);
      ns_norm_plan_free(&p);
    }
    int ok = na == (rms ? 2 : 3) && nb == na && nc == na && nd == na;
    for (int i = 0; i < na && ok; i++) {
      ok &= a[i].jvp_res <= a[i].jvp_tol && a[i].fd_res <= a[i].fd_tol;
      ok &= memcmp(&a[i], &b[i], sizeof a[i]) == 0 && memcmp(&a[i], &c[i], sizeof a[i]) == 0;
      ok &= memcmp(&a[i], &d[i], sizeof a[i]) == 0;
    }
    tap_ok(ok,
           "spectrum_check %s statistic 3 of %zu values: 1 thread = 2 threads = the gathered "
           "block = the moments given, bit for bit (%d checks) %s",
           rms ? "rms" : "layer", m, na, err);
  }
  ns_tensor_free(x);
  ns_tensor_free(xt);
}

/* below 2^16 values the check runs on one thread whatever it is given; from there its
 * inputs, maps and residuals split over two */
static void check_paths(void) {
  check_paths_at(20011);
  check_paths_at(70001);
}

int main(void) {
  jvp_vs_full_j();
  jvp_vs_fd_large();
  walks_vs_lists();
  closed_vs_lapack();
  check_large();
  check_flat();
  jvp_n_bits();
  check_paths();
  return tap_done();
}
