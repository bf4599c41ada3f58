/* test_mask.c: the spec's mask (normalize.h, "Masks") against references that do not use
 * it: a mask of ones against no mask (bit for bit, through ns_normalize and
 * ns_normalize_ref, every kind, dtype, algorithm and order); padded sequences against the
 * unpadded computation on the real tokens gathered into their own tensor (bit for bit);
 * the masked Jacobian against central differences and the unpadded Jacobian; the closed
 * spectrum against LAPACK eigenvalues of J; ns_vjp against J^T g; refusals of bad masks;
 * the empty statistic; the running update. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jacobian.h"
#include "core/spectrum.h"
#include "tap.h"

static unsigned long long lcg_state = 20261201;
static double lcg(void) {
  lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(lcg_state >> 11) / 9007199254740992.0;
}

static ns_tensor *rand_tensor(int rank, const size_t *shape, ns_dtype dt, double scale) {
  char err[NS_ERRLEN];
  ns_tensor *t = ns_tensor_new(rank, shape, dt, err);
  for (size_t i = 0; t && i < t->n; i++) ns_tensor_set(t, i, scale * (2 * lcg() - 1) + 0.3);
  return t;
}

static ns_tensor *filled(int rank, const size_t *shape, double v) {
  char err[NS_ERRLEN];
  ns_tensor *t = ns_tensor_new(rank, shape, NS_FP64, err);
  for (size_t i = 0; t && i < t->n; i++) ns_tensor_set(t, i, v);
  return t;
}

/* Same bits in y and in every statistic (NaN equal to NaN). */
static int same_bits(const ns_norm_result *a, const ns_norm_result *b) {
  if (a->y->n != b->y->n || a->plan.nstat != b->plan.nstat) return 0;
  for (size_t i = 0; i < a->y->n; i++) {
    double u = ns_tensor_get(a->y, i), v = ns_tensor_get(b->y, i);
    if (memcmp(&u, &v, sizeof u) != 0) return 0;
  }
  for (size_t s = 0; s < a->plan.nstat; s++)
    if (memcmp(&a->mean[s], &b->mean[s], sizeof(double)) ||
        memcmp(&a->var[s], &b->var[s], sizeof(double)) ||
        memcmp(&a->denom[s], &b->denom[s], sizeof(double)) || a->batch[s].n != b->batch[s].n ||
        a->degenerate[s] != b->degenerate[s])
      return 0;
  return 1;
}

/* A mask of ones (full shape, and broadcast ones of smaller shapes) gives the bits of no
 * mask, for every path. */
static void ones_equal_none(void) {
  static const size_t shape[3] = {3, 5, 7};
  static const size_t mshapes[3][3] = {{3, 5, 7}, {5, 1}, {1}};
  static const int mranks[3] = {3, 2, 1};
  const ns_kind kinds[] = {NS_KIND_LAYER, NS_KIND_RMS, NS_KIND_BATCH, NS_KIND_INSTANCE,
                           NS_KIND_GROUP};
  const ns_dtype dts[] = {NS_FP64, NS_FP32, NS_FP16, NS_BF16};
  int bad = 0, runs = 0;
  char err[NS_ERRLEN] = "";
  for (int dk = 0; dk < 4; dk++) {
    ns_tensor *x = rand_tensor(3, shape, dts[dk] == NS_FP32 ? NS_FP32 : NS_FP64, 3);
    for (int ki = 0; ki < 5; ki++)
      for (int algo = 0; algo < 3; algo++)
        for (int order = 0; order < 2; order++)
          for (int mi = 0; mi < 3; mi++) {
            ns_tensor *mask = filled(mranks[mi], mshapes[mi], 1);
            ns_spec s;
            ns_spec_default(&s);
            s.kind = kinds[ki];
            s.groups = 1;
            s.dtype = dts[dk];
            s.algo = (ns_algo)algo;
            s.order = (ns_order)order;
            s.ddof = (algo + mi) % 2;
            s.eps_at = order ? NS_EPS_STD : NS_EPS_VAR;
            double g[1] = {1.5}, b[1] = {-0.25};
            if (mi == 1) s.gamma = g, s.ngamma = 1, s.beta = b, s.nbeta = 1;
            ns_norm_result r0, r1, r2, r3;
            int rc0 = ns_normalize(x, &s, &r0, err);
            int rc3 = ns_normalize_ref(x, &s, &r3, err); /* no mask: the reference route */
            s.mask = mask;
            int rc1 = ns_normalize(x, &s, &r1, err);
            int rc2 = ns_normalize_ref(x, &s, &r2, err);
            runs++;
            if (rc0 || rc1 || rc2 || rc3 || !same_bits(&r0, &r1) || !same_bits(&r0, &r2) ||
                !same_bits(&r0, &r3)) {
              if (!bad)
                tap_diag("differs: kind %s dtype %s algo %d order %d mask rank %d: %s",
                         ns_kind_name(kinds[ki]), ns_dtype_name(dts[dk]), algo, order, mranks[mi],
                         err);
              bad++;
            }
            ns_norm_result_free(&r0), ns_norm_result_free(&r1), ns_norm_result_free(&r2);
            ns_norm_result_free(&r3);
            ns_tensor_free(mask);
          }
    ns_tensor_free(x);
  }
  tap_ok(bad == 0,
         "a mask of ones gives the bits of no mask, and the masked route without a mask those of "
         "the kernels (%d of %d specs differ)",
         bad, runs);
}

/* A batch of B sequences of T positions x D features with lengths len[b]: x (B,T,D) with
 * padding values pad, the mask (B,T,1) and the real tokens gathered as rows (sum len, D). */
typedef struct {
  ns_tensor *x, *mask, *real;
} padded;

static padded make_padded(size_t B, size_t T, size_t D, const size_t *len, double pad) {
  char err[NS_ERRLEN];
  size_t sx[3] = {B, T, D}, sm[3] = {B, T, 1}, nreal = 0;
  for (size_t b = 0; b < B; b++) nreal += len[b];
  size_t sr[2] = {nreal, D};
  padded p = {ns_tensor_new(3, sx, NS_FP64, err), ns_tensor_new(3, sm, NS_FP64, err),
              ns_tensor_new(2, sr, NS_FP64, err)};
  size_t r = 0;
  for (size_t b = 0; b < B; b++)
    for (size_t t = 0; t < T; t++) {
      int real = t < len[b];
      ns_tensor_set(p.mask, b * T + t, real);
      for (size_t d = 0; d < D; d++) {
        double v = real ? 4 * lcg() - 1 + (double)d : pad;
        ns_tensor_set(p.x, (b * T + t) * D + d, v);
        if (real) ns_tensor_set(p.real, r * D + d, v);
      }
      r += real;
    }
  return p;
}

static void padded_free(padded *p) {
  ns_tensor_free(p->x), ns_tensor_free(p->mask), ns_tensor_free(p->real);
}

/* Batch norm per feature over every real token (axes 1 and 2 of (B,T,D)): with the mask,
 * the real tokens' outputs are those of batch norm of the real tokens alone; without it,
 * the padding moves them. Per-token layer norm needs no mask: padding never enters. */
static void padding_matches_unpadded(void) {
  const size_t B = 3, T = 6, D = 4, len[3] = {6, 2, 4};
  char err[NS_ERRLEN] = "";
  for (int dk = 0; dk < 2; dk++) {
    padded p = make_padded(B, T, D, len, 0.0);
    ns_spec s;
    ns_spec_default(&s);
    s.kind = NS_KIND_BATCH;
    s.axes = 1u | 2u; /* 0-based axes 0 and 1: the batch and the positions */
    s.dtype = dk ? NS_FP32 : NS_FP64;
    s.order = dk ? NS_ORDER_PAIRWISE : NS_ORDER_SEQUENTIAL;
    ns_spec su = s;
    su.axes = 0; /* batch norm of the (tokens, D) matrix: down the rows */
    ns_norm_result rm, ru, rn;
    s.mask = p.mask;
    int rc = ns_normalize(p.x, &s, &rm, err);
    rc |= ns_normalize(p.real, &su, &ru, err);
    s.mask = NULL;
    rc |= ns_normalize(p.x, &s, &rn, err);
    tap_ok(rc == 0, "padded batch norm runs (%s) %s", ns_dtype_name(s.dtype), err);
    int same = 1, moved = 0, zero = 1;
    size_t r = 0;
    for (size_t b = 0; b < B; b++)
      for (size_t t = 0; t < T; t++)
        for (size_t d = 0; d < D; d++) {
          size_t i = (b * T + t) * D + d;
          double y = ns_tensor_get(rm.y, i);
          if (t < len[b]) {
            double want = ns_tensor_get(ru.y, (r + t) * D + d);
            same &= memcmp(&y, &want, sizeof y) == 0;
            moved |= fabs(ns_tensor_get(rn.y, i) - want) > 1e-3;
          } else {
            zero &= y == 0 && !signbit(y);
          }
          if (d == D - 1 && t == T - 1) r += len[b];
        }
    tap_ok(same, "%s: masked outputs of the real tokens are the unpadded computation, bit for bit",
           ns_dtype_name(s.dtype));
    tap_ok(moved, "%s: without the mask the padding zeros move them", ns_dtype_name(s.dtype));
    tap_ok(zero, "%s: outputs at padded positions are +0", ns_dtype_name(s.dtype));
    int stats = 1;
    for (size_t k = 0; k < D; k++)
      stats &= rm.mean[k] == ru.mean[k] && rm.var[k] == ru.var[k] &&
               rm.batch[k].n == (double)(len[0] + len[1] + len[2]);
    tap_ok(stats, "%s: mean, var and count n are those of the real tokens", ns_dtype_name(s.dtype));
    ns_norm_result_free(&rm), ns_norm_result_free(&ru), ns_norm_result_free(&rn);

    /* per-token layer norm: the same with and without the mask at the real tokens */
    ns_spec l;
    ns_spec_default(&l);
    l.dtype = s.dtype;
    ns_norm_result a, c;
    rc = ns_normalize(p.x, &l, &a, err);
    l.mask = p.mask;
    rc |= ns_normalize(p.x, &l, &c, err);
    int eq = rc == 0;
    for (size_t i = 0; eq && i < p.x->n; i++)
      if (ns_tensor_get(p.mask, i / D) != 0) eq = ns_tensor_get(a.y, i) == ns_tensor_get(c.y, i);
    tap_ok(eq, "%s: per-token layer norm: the mask changes no real token", ns_dtype_name(l.dtype));
    ns_norm_result_free(&a), ns_norm_result_free(&c);
    padded_free(&p);
  }
}

static void refusals(void) {
  char err[NS_ERRLEN] = "";
  size_t sx[2] = {2, 3}, s1[1] = {2}, s3[3] = {1, 2, 3}, s23[2] = {2, 3};
  ns_tensor *x = rand_tensor(2, sx, NS_FP64, 1);
  ns_spec s;
  ns_spec_default(&s);
  ns_norm_result r;
  ns_tensor *m = filled(1, s1, 1);
  s.mask = m;
  int rc = ns_normalize(x, &s, &r, err);
  tap_ok(rc == -1 && strstr(err, "mask: shape (2) does not broadcast to x's shape (2, 3)"),
         "a mask of shape (2) for x (2,3) is refused: %s", err);
  ns_tensor_free(m);
  m = filled(3, s3, 1);
  s.mask = m;
  rc = ns_normalize(x, &s, &r, err);
  tap_ok(rc == -1 && strstr(err, "mask: shape (1, 2, 3)"), "a mask of higher rank is refused: %s",
         err);
  ns_tensor_free(m);
  const double vals[3] = {0.5, NAN, 2};
  const char *want[3] = {"element 4 is 0.5", "element 4 is nan", "element 4 is 2"};
  for (int k = 0; k < 3; k++) {
    m = filled(2, s23, 1);
    ns_tensor_set(m, 3, vals[k]);
    s.mask = m;
    rc = ns_normalize(x, &s, &r, err);
    tap_ok(rc == -1 && strstr(err, want[k]) && strstr(err, "only 1 (keep) and 0"),
           "a mask value %g is refused: %s", vals[k], err);
    double J[36];
    rc = ns_jacobian_analytic(x, &s, J, err);
    tap_ok(rc == -1 && strstr(err, "jacobian: mask:"), "and by the Jacobian: %s", err);
    ns_eig e[6];
    rc = ns_spectrum_closed(x, &s, e, 6, err);
    tap_ok(rc == -1 && strstr(err, "spectrum: mask:"), "and by the spectrum: %s", err);
    ns_tensor_free(m);
  }
  ns_tensor_free(x);
}

/* A statistic with no kept element: degenerate, NaN statistics, zero outputs, the others
 * untouched; a batch-norm running update leaves that channel as it was. */
static void empty_statistic(void) {
  char err[NS_ERRLEN] = "";
  size_t sx[2] = {4, 3};
  const double xv[12] = {1, 5, -2, 2, 6, 0, 4, 9, 3, 7, 1, 8};
  const double mv[12] = {1, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0}; /* column 2 all masked */
  ns_tensor *x = ns_tensor_from(2, sx, NS_FP64, xv, err),
            *m = ns_tensor_from(2, sx, NS_FP64, mv, err);
  ns_running run;
  ns_running_init(&run, 0.1, 0, 0, 3, err);
  run.mean[1] = 7, run.var[1] = 3;
  ns_spec s;
  ns_spec_default(&s);
  s.kind = NS_KIND_BATCH;
  s.mask = m;
  s.running = &run;
  ns_norm_result r;
  int rc = ns_normalize(x, &s, &r, err);
  tap_ok(rc == 0 && r.ndegenerate == 1 && r.degenerate[1] && !r.degenerate[0] && !r.degenerate[2],
         "the all-masked column is the one degenerate statistic %s", err);
  tap_ok(isnan(r.mean[1]) && isnan(r.var[1]) && isnan(r.denom[1]) && r.batch[1].n == 0,
         "its mean, var and denom are NaN and its count 0");
  int zero = 1;
  for (size_t i = 1; i < 12; i += 3) zero &= ns_tensor_get(r.y, i) == 0;
  tap_ok(zero, "its outputs are 0");
  /* column 1 keeps rows 1, 2, 4: 1, 2, 7 -> mean 10/3; column 3 keeps rows 1..3 */
  tap_close(r.mean[0], 10.0 / 3, 1e-15, "column 1: the mean of its kept values");
  tap_close(r.var[0],
            ((1 - 10. / 3) * (1 - 10. / 3) + (2 - 10. / 3) * (2 - 10. / 3) +
             (7 - 10. / 3) * (7 - 10. / 3)) /
                3,
            1e-14, "column 1: the variance of its kept values over their count 3");
  tap_close(run.mean[1], 7, 0, "running mean of the empty channel unchanged");
  tap_close(run.var[1], 3, 0, "running var of the empty channel unchanged");
  tap_close(run.mean[0], 0.1 * (10.0 / 3), 1e-15, "a kept channel's running mean moves");
  tap_close(run.var[2], 0.9 + 0.1 * (114.0 / 9 / 2), 1e-14,
            "and its running var mixes in the unbiased variance of the kept values");
  ns_norm_result_free(&r);
  ns_running_free(&run);
  ns_tensor_free(x), ns_tensor_free(m);
}

/* Masked J: rows and columns of masked elements exactly 0; the kept block equals the J of
 * the unpadded computation; analytic against central differences; vjp against J^T g. */
static void masked_jacobian(void) {
  const size_t B = 2, T = 4, D = 3, len[2] = {4, 1};
  char err[NS_ERRLEN] = "";
  padded p = make_padded(B, T, D, len, 9.5);
  size_t n = p.x->n, nr = p.real->n;
  double *J = malloc(n * n * sizeof *J), *F = malloc(n * n * sizeof *F);
  double *Ju = malloc(nr * nr * sizeof *Ju);
  struct {
    const char *name;
    ns_kind kind;
    unsigned axes;
    int eps_at, center, gamma;
  } cases[] = {{"batch over tokens", NS_KIND_BATCH, 3u, NS_EPS_VAR, -1, 0},
               {"batch over tokens, eps at std", NS_KIND_BATCH, 3u, NS_EPS_STD, -1, 0},
               {"rms over tokens", NS_KIND_RMS, 3u, NS_EPS_VAR, -1, 0},
               {"batch over tokens, gamma per channel", NS_KIND_BATCH, 3u, NS_EPS_VAR, -1, 1},
               {"layer per token", NS_KIND_LAYER, 0u, NS_EPS_VAR, -1, 0}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    ns_spec s;
    ns_spec_default(&s);
    s.kind = cases[c].kind;
    s.axes = cases[c].axes;
    s.eps_at = (ns_eps_at)cases[c].eps_at;
    s.eps = 1e-3;
    double g[4] = {1.5, -0.5, 2, 0.75}; /* batch kinds: per channel, axis 2 (here T) */
    if (cases[c].gamma) s.gamma = g, s.ngamma = 4;
    err[0] = 0;
    s.mask = p.mask;
    int rc = ns_jacobian_analytic(p.x, &s, J, err);
    rc |= ns_jacobian_fd(p.x, &s, 1e-6, F, err);
    tap_ok(rc == 0, "%s: Jacobians run %s", cases[c].name, err);
    double fd = ns_max_abs_diff(J, F, n * n);
    tap_ok(fd < 1e-7, "%s: analytic vs central differences %.3g", cases[c].name, fd);
    int zero = 1;
    for (size_t i = 0; i < n; i++)
      if (ns_tensor_get(p.mask, i / D) == 0)
        for (size_t j = 0; j < n; j++) zero &= J[i * n + j] == 0 && J[j * n + i] == 0;
    tap_ok(zero, "%s: masked rows and columns are exactly 0", cases[c].name);
    if (s.kind != NS_KIND_LAYER && !cases[c].gamma) {
      ns_spec su = s;
      su.mask = NULL;
      su.axes = 0;
      if (su.kind == NS_KIND_RMS) su.axes = 1u; /* down the rows of (tokens, D) */
      rc = ns_jacobian_analytic(p.real, &su, Ju, err);
      /* kept index i of x <-> row-major index of p.real */
      size_t *map = malloc(nr * sizeof *map), k = 0;
      for (size_t i = 0; i < n; i++)
        if (ns_tensor_get(p.mask, i / D) != 0) map[k++] = i;
      double worst = 0;
      for (size_t a = 0; a < nr; a++)
        for (size_t b = 0; b < nr; b++)
          worst = fmax(worst, fabs(J[map[a] * n + map[b]] - Ju[a * nr + b]));
      tap_ok(rc == 0 && worst < 1e-14, "%s: the kept block is the unpadded J (%.3g) %s",
             cases[c].name, worst, err);
      free(map);
    }
    /* vjp = J^T g, 0 at masked positions */
    double *gy = malloc(n * sizeof *gy), *dx = malloc(n * sizeof *dx);
    for (size_t i = 0; i < n; i++) gy[i] = 2 * lcg() - 1, dx[i] = 99;
    rc = ns_vjp(p.x, &s, gy, dx, NULL, NULL, NULL, err);
    double worst = 0;
    int zeros = 1;
    for (size_t j = 0; j < n; j++) {
      double acc = 0;
      for (size_t i = 0; i < n; i++) acc += J[i * n + j] * gy[i];
      worst = fmax(worst, fabs(acc - dx[j]));
      if (ns_tensor_get(p.mask, j / D) == 0) zeros &= dx[j] == 0;
    }
    tap_ok(rc == 0 && worst < 1e-12 && zeros, "%s: vjp is J^T g (%.3g), 0 at masked inputs %s",
           cases[c].name, worst, err);
    free(gy), free(dx);

    /* closed spectrum against LAPACK eigenvalues of J (symmetric for constant gamma) */
    if (!cases[c].gamma) {
      ns_eig e[64], en[64];
      int k = ns_spectrum_closed(p.x, &s, e, 64, err);
      int kn = ns_spectrum_numeric(p.x, &s, J, en, 64, err);
      double *w = malloc(n * sizeof *w), *V = malloc(n * n * sizeof *V);
      double *A = malloc(n * n * sizeof *A);
      for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) A[i * n + j] = 0.5 * (J[i * n + j] + J[j * n + i]);
      int re = ns_eig_sym(A, n, w, V, err);
      /* expand the closed form into n ascending values */
      double *cl = malloc(n * sizeof *cl);
      size_t t = 0, masked = 0;
      for (int a = 0; a < k; a++)
        for (int r2 = 0; r2 < e[a].mult && t < n; r2++) cl[t++] = e[a].value;
      for (int a = 0; a < k; a++)
        if (e[a].label == NS_LABEL_MASKED) masked += (size_t)e[a].mult;
      double dev = t == n ? 0 : INFINITY;
      for (size_t i = 0; i < t && i < n; i++) dev = fmax(dev, fabs(cl[i] - w[i]));
      tap_ok(k > 0 && re == 0 && dev < 1e-12, "%s: closed form vs LAPACK eigenvalues %.3g %s",
             cases[c].name, dev, err);
      size_t npad = 0;
      for (size_t i = 0; i < B * T; i++) npad += ns_tensor_get(p.mask, i) == 0;
      tap_ok(masked == npad * D, "%s: %zu zeros labelled masked (%zu padded elements)",
             cases[c].name, masked, npad * D);
      /* the numeric labels agree with the closed form's, label by label */
      int agree = kn == k;
      for (int a = 0; agree && a < k; a++)
        agree = en[a].label == e[a].label && en[a].mult == e[a].mult &&
                fabs(en[a].value - e[a].value) < 1e-10;
      if (!agree)
        for (int a = 0; a < (k > kn ? k : kn); a++)
          tap_diag("  closed %s %.17g x%d | numeric %s %.17g x%d",
                   a < k ? ns_label_name(e[a].label) : "", a < k ? e[a].value : 0,
                   a < k ? e[a].mult : 0, a < kn ? ns_label_name(en[a].label) : "",
                   a < kn ? en[a].value : 0, a < kn ? en[a].mult : 0);
      tap_ok(agree, "%s: LAPACK's labelled spectrum matches the closed form", cases[c].name);
      free(w), free(V), free(A), free(cl);
    }
  }
  /* eval mode: diagonal g/s at kept elements, 0 elsewhere */
  ns_running run;
  ns_running_init(&run, 0.1, 0, 0, D, err);
  for (size_t d = 0; d < D; d++) run.mean[d] = 0.5 * (double)d, run.var[d] = 1 + (double)d;
  ns_spec s;
  ns_spec_default(&s);
  s.kind = NS_KIND_BATCH;
  s.axes = 3u;
  s.mode = NS_MODE_EVAL;
  s.running = &run;
  s.mask = p.mask;
  int rc = ns_jacobian_analytic(p.x, &s, J, err);
  rc |= ns_jacobian_fd(p.x, &s, 1e-6, F, err);
  tap_ok(rc == 0 && ns_max_abs_diff(J, F, n * n) < 1e-8, "eval mode: analytic vs FD %s", err);
  int diag = 1;
  for (size_t i = 0; i < n; i++) {
    int kept = ns_tensor_get(p.mask, i / D) != 0;
    double want = kept ? 1 / sqrt(1 + (double)(i % D) + 1e-5) : 0;
    diag &= fabs(J[i * n + i] - want) < 1e-15;
  }
  tap_ok(diag, "eval mode: J is diag(1/s) at kept elements and 0 at masked ones");
  ns_running_free(&run);
  free(J), free(F), free(Ju);
  padded_free(&p);
}

int main(void) {
  ones_equal_none();
  padding_matches_unpadded();
  refusals();
  empty_statistic();
  masked_jacobian();
  return tap_done();
}
