/* test_spectrum.c: the LAPACK wrappers on matrices whose eigenvalues and singular
 * values are known by hand, rank with tolerances, refusals of bad input, and the
 * labelled spectrum of normalization Jacobians (closed form against LAPACK). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jacobian.h"
#include "core/spectrum.h"
#include "tap.h"

static unsigned long long lcg_state = 987654321;
static double lcg(void) {
  lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(lcg_state >> 11) / 9007199254740992.0;
}

/* max_i |A v_k - w_k v_k| over the columns of V (real eigenpairs only) */
static double eigpair_residual(const double *A, size_t n, const double *w, const double *V) {
  double worst = 0;
  for (size_t k = 0; k < n; k++)
    for (size_t i = 0; i < n; i++) {
      double av = 0;
      for (size_t j = 0; j < n; j++) av += A[i * n + j] * V[j * n + k];
      worst = fmax(worst, fabs(av - w[k] * V[i * n + k]));
    }
  return worst;
}

static void eig_known(void) {
  char err[NS_ERRLEN] = "";
  const double D[9] = {3, 0, 0, 0, 1, 0, 0, 0, 2};
  double w[3], V[9];
  int rc = ns_eig_sym(D, 3, w, V, err);
  tap_ok(rc == 0, "eig_sym of diag(3,1,2) runs %s", err);
  tap_ok(w[0] == 1 && w[1] == 2 && w[2] == 3, "eig_sym diag ascending 1 2 3 (got %g %g %g)", w[0],
         w[1], w[2]);
  tap_close(fabs(V[1 * 3 + 0]), 1, 1e-15, "eig_sym diag: first eigenvector is e2");
  const double S[4] = {2, 1, 1, 2};
  double V2[4];
  ns_eig_sym(S, 2, w, V2, err);
  tap_close(w[0], 1, 1e-14, "eig_sym [[2,1],[1,2]] smallest 1");
  tap_close(w[1], 3, 1e-14, "eig_sym [[2,1],[1,2]] largest 3");
  tap_close(eigpair_residual(S, 2, w, V2), 0, 1e-14, "eig_sym eigenvectors: A v = w v");
  tap_ok(ns_eig_sym(S, 2, w, NULL, err) == 0 && fabs(w[1] - 3) < 1e-14, "eig_sym without vectors");

  /* rotation by 90 degrees scaled by 2: eigenvalues +-2i, sorted by imaginary part */
  const double R[4] = {0, -2, 2, 0};
  double wr[2], wi[2], VR[4];
  rc = ns_eig_general(R, 2, wr, wi, VR, err);
  tap_ok(rc == 0, "eig_general of a rotation runs %s", err);
  tap_ok(fabs(wr[0]) < 1e-15 && fabs(wr[1]) < 1e-15 && fabs(wi[0] + 2) < 1e-14 &&
             fabs(wi[1] - 2) < 1e-14,
         "rotation eigenvalues -2i then +2i (got %g%+gi, %g%+gi)", wr[0], wi[0], wr[1], wi[1]);
  /* triangular, not symmetric: eigenvalues are the diagonal, sorted by real part */
  const double T[9] = {5, 1, 2, 0, -1, 3, 0, 0, 2};
  double tr[3], ti[3], TV[9];
  rc = ns_eig_general(T, 3, tr, ti, TV, err);
  tap_ok(rc == 0 && fabs(tr[0] + 1) < 1e-13 && fabs(tr[1] - 2) < 1e-13 && fabs(tr[2] - 5) < 1e-13 &&
             ti[0] == 0 && ti[1] == 0 && ti[2] == 0,
         "triangular eigenvalues -1, 2, 5 (got %g %g %g)", tr[0], tr[1], tr[2]);
  tap_close(eigpair_residual(T, 3, tr, TV), 0, 1e-13, "eig_general eigenvectors follow the sort");
  tap_ok(ns_eig_general(T, 3, tr, ti, NULL, err) == 0, "eig_general without vectors");
  /* the input is never modified */
  double T2[9];
  memcpy(T2, T, sizeof T);
  ns_eig_general(T2, 3, tr, ti, TV, err);
  ns_eig_sym(T2, 3, tr, TV, err);
  tap_ok(memcmp(T2, T, sizeof T) == 0, "inputs left untouched");
}

static void svd_known(void) {
  char err[NS_ERRLEN] = "";
  /* [[3,2,2],[2,3,-2]] has singular values 5 and 3 */
  const double A[6] = {3, 2, 2, 2, 3, -2};
  double s[3];
  int rc = ns_svdvals(A, 2, 3, s, err);
  tap_ok(rc == 0, "svdvals of a 2x3 matrix runs %s", err);
  tap_close(s[0], 5, 1e-14, "svd 2x3 largest 5");
  tap_close(s[1], 3, 1e-14, "svd 2x3 second 3");
  /* its transpose (3x2): same values */
  const double At[6] = {3, 2, 2, 3, 2, -2};
  ns_svdvals(At, 3, 2, s, err);
  tap_ok(fabs(s[0] - 5) < 1e-14 && fabs(s[1] - 3) < 1e-14, "svd 3x2 transpose 5, 3");
  const double B[4] = {1, 1, 1, 1};
  ns_svdvals(B, 2, 2, s, err);
  tap_ok(fabs(s[0] - 2) < 1e-14 && fabs(s[1]) < 1e-14, "svd of all-ones 2x2: 2, 0");

  tap_ok(ns_rank(B, 2, 2, -1, err) == 1, "rank of all-ones 2x2 is 1");
  const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  tap_ok(ns_rank(I3, 3, 3, -1, err) == 3, "rank of I3 is 3");
  const double Dm[4] = {1, 0, 0, 1e-5};
  tap_ok(ns_rank(Dm, 2, 2, 1e-3, err) == 1, "rank of diag(1,1e-5) at tol 1e-3 is 1");
  tap_ok(ns_rank(Dm, 2, 2, -1, err) == 2, "rank of diag(1,1e-5) at the default tol is 2");
  const double Dt[4] = {1, 0, 0, 1e-11};
  tap_ok(ns_rank(Dt, 2, 2, -1, err) == 1, "rank of diag(1,1e-11) at 1e-10 relative is 1");

  const double Sy[9] = {1, 2, 3, 2, 4, 5, 3, 5, 6};
  const double Ns[9] = {1, 2, 3, 2, 4, 5, 3, 5.1, 6};
  tap_ok(ns_is_symmetric(Sy, 3, 0) == 1, "symmetric matrix recognised");
  tap_ok(ns_is_symmetric(Ns, 3, 1e-3) == 0, "asymmetry 0.1 detected at tol 1e-3");
  tap_ok(ns_is_symmetric(Ns, 3, 0.1) == 1, "asymmetry 0.1 tolerated at tol 0.1 * max");
}

static void bad_input(void) {
  char err[NS_ERRLEN];
  double w[3], wi[3], s[3];
  double A[9] = {1, 0, 0, 0, NAN, 0, 0, 0, 1};
  err[0] = 0;
  tap_ok(ns_eig_sym(A, 3, w, NULL, err) == -1 && strstr(err, "NaN"), "NaN refused by eig_sym: %s",
         err);
  A[4] = INFINITY;
  err[0] = 0;
  tap_ok(ns_eig_general(A, 3, w, wi, NULL, err) == -1 && strstr(err, "infinite"),
         "Inf refused by eig_general: %s", err);
  err[0] = 0;
  tap_ok(ns_svdvals(A, 3, 3, s, err) == -1 && err[0], "Inf refused by svdvals: %s", err);
  err[0] = 0;
  tap_ok(ns_rank(A, 3, 3, -1, err) == -1 && err[0], "Inf refused by rank: %s", err);
  A[4] = 1;
  err[0] = 0;
  tap_ok(ns_eig_sym(A, 0, w, NULL, err) == -1 && err[0], "n = 0 refused: %s", err);
  err[0] = 0;
  tap_ok(ns_svdvals(A, 0, 3, s, err) == -1 && err[0], "m = 0 refused: %s", err);
  err[0] = 0;
  /* the order is checked before the matrix is read, so a small buffer is safe here */
  tap_ok(ns_eig_general(A, 100000, w, wi, NULL, err) == -1 && err[0], "n too large refused: %s",
         err);
  err[0] = 0;
  tap_ok(ns_svdvals(A, 3, 1000000, s, err) == -1 && err[0], "shape too large refused: %s", err);
  err[0] = 0;
  tap_ok(ns_eig_sym(NULL, 3, w, NULL, err) == -1 && err[0], "NULL matrix refused: %s", err);
  err[0] = 0;
  tap_ok(ns_rank(A, 3, 3, NAN, err) == -1 && err[0], "NaN tolerance refused: %s", err);
  tap_ok(strcmp(ns_label_name(NS_LABEL_ONES), "ones") == 0 &&
             strcmp(ns_label_name(NS_LABEL_RADIAL), "radial") == 0 &&
             strcmp(ns_label_name(NS_LABEL_BULK), "bulk") == 0,
         "label names");
}

/* Random symmetric matrices: eigenvalues sum to the trace and match dgeev's. */
static void random_matrices(void) {
  double worst_tr = 0, worst_gen = 0, worst_res = 0;
  for (int t = 0; t < 50; t++) {
    size_t n = 1 + (size_t)(lcg() * 9);
    double A[100], w[10], wr[10], wi[10], V[100];
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j <= i; j++) A[i * n + j] = A[j * n + i] = 2 * lcg() - 1;
    char err[NS_ERRLEN];
    if (ns_eig_sym(A, n, w, V, err) || ns_eig_general(A, n, wr, wi, NULL, err)) {
      worst_tr = INFINITY;
      continue;
    }
    double tr = 0, sw = 0;
    for (size_t i = 0; i < n; i++) tr += A[i * n + i], sw += w[i];
    worst_tr = fmax(worst_tr, fabs(tr - sw));
    for (size_t i = 0; i < n; i++) worst_gen = fmax(worst_gen, fabs(w[i] - wr[i]) + fabs(wi[i]));
    worst_res = fmax(worst_res, eigpair_residual(A, n, w, V));
  }
  tap_diag("random symmetric: trace err %.3g, dsyevr vs dgeev %.3g, residual %.3g", worst_tr,
           worst_gen, worst_res);
  tap_ok(worst_tr < 1e-12, "eigenvalues sum to the trace");
  tap_ok(worst_gen < 1e-12, "dsyevr and dgeev agree on symmetric matrices");
  tap_ok(worst_res < 1e-12, "eigenpairs satisfy A v = w v");
}

/* A value for the merges' tests from a random word: 0, -0, NaNs of different bits (the
 * first is kept), infinities, values that merge within the tolerance, distinct values, and
 * many ties. */
static double awkward(unsigned long long q) {
  double v;
  switch (q % 13) {
  case 0:
    return 0.0;
  case 1:
    return -0.0;
  case 2: {
    uint64_t u = UINT64_C(0x7ff8000000000000) | (q >> 40);
    memcpy(&v, &u, sizeof v);
    return v;
  }
  case 3:
    return (q >> 8) % 2 ? INFINITY : -INFINITY;
  case 4:
    return 1.0 + (double)((q >> 8) % 4) * 1e-12; /* merge within tol */
  case 5:
    return (double)(q >> 11) * 0x1p-53 * 100.0 - 20.0; /* all distinct */
  default:
    return (double)((q >> 8) % 50) / 7.0 - 3.0; /* many ties */
  }
}

/* ns_eig_merge: the radix sorts give the qsorts' result, entry for entry, on lists with
 * ties within and across labels, -0 and +0, infinities, NaN and values that merge within
 * the tolerance; and a closed form of many statistics (the radix path) equals LAPACK's
 * order where both apply is covered by test_jvp. */
static void merge_radix_vs_qsort(void) {
  char err[NS_ERRLEN] = "";
  unsigned long long q = 0x9e3779b97f4a7c15ULL;
  int bad = 0, trials = 0;
  for (int t = 0; t < 40; t++) {
    size_t k = 1 + (size_t)(t * 997 % 9000);
    ns_eig *a = malloc(k * sizeof *a), *b = malloc(k * sizeof *b);
    ns_eig *oa = malloc(k * sizeof *oa), *ob = malloc(k * sizeof *ob);
    for (size_t i = 0; i < k; i++) {
      q ^= q << 13, q ^= q >> 7, q ^= q << 17;
      double v = awkward(q);
      a[i] = (ns_eig){v, 0, (ns_label)((q >> 20) % 4), (int)((q >> 24) % 5) + 1};
    }
    memcpy(b, a, k * sizeof *a);
    int na = ns_eig_merge(a, k, 0, oa, k, 0, err), nb = ns_eig_merge(b, k, 0, ob, k, 1, err);
    trials++;
    if (na < 0 || na != nb || memcmp(oa, ob, (size_t)na * sizeof *oa) != 0) {
      tap_diag("merge of %zu entries: qsort %d, radix %d entries differ", k, na, nb);
      bad++;
    }
    free(a), free(b), free(oa), free(ob);
  }
  tap_ok(bad == 0, "eig_merge: radix sort = qsort, entry for entry, on %d lists %s", trials, err);
  ns_eig e[2] = {{1, 0.5, NS_LABEL_BULK, 1}, {1, -0.5, NS_LABEL_BULK, 1}}, o[2];
  tap_ok(ns_eig_merge(e, 2, 0, o, 2, 1, err) == 2 && o[0].imag == -0.5,
         "eig_merge: complex entries take the qsort (by imag after value)");
}

/* ns_eig_merge_closed: a closed form's merge from its values equals ns_eig_merge of its
 * list of entries (radix and qsort), entry for entry, with ties within and across labels,
 * -0 and +0, infinities, NaN, values that merge within the tolerance, no ones entry, no
 * radial or no bulk entries (the list is made first: the merge sorts the values in place) */
static void merge_closed_vs_list(void) {
  char err[NS_ERRLEN] = "";
  unsigned long long q = 0x2545f4914f6cdd1dULL;
  int bad = 0, trials = 0;
  for (int t = 0; t < 48; t++) {
    size_t nstat = 1 + (size_t)(t * 1499 % 7000);
    double *rad = malloc(nstat * sizeof *rad), *blk = malloc(nstat * sizeof *blk);
    for (size_t i = 0; i < 2 * nstat; i++) {
      q ^= q << 13, q ^= q >> 7, q ^= q << 17;
      double v = awkward(q);
      (i < nstat ? rad : blk)[i % nstat] = v;
    }
    int nones = t % 3 == 0 ? 0 : (int)nstat, nbulk = 1 + t % 5;
    double *r = t % 7 == 3 ? NULL : rad, *b = t % 7 == 5 ? NULL : blk; /* its scratch */
    size_t k = 0, cap = 2 * nstat + 1;
    ns_eig *list = malloc(cap * sizeof *list), *list2 = malloc(cap * sizeof *list2);
    ns_eig *oa = malloc(cap * sizeof *oa), *ob = malloc(cap * sizeof *ob),
           *oc = malloc(cap * sizeof *oc);
    if (nones) list[k++] = (ns_eig){0.0, 0, NS_LABEL_ONES, nones};
    for (size_t st = 0; st < nstat; st++) {
      if (r) list[k++] = (ns_eig){r[st], 0, NS_LABEL_RADIAL, 1};
      if (b) list[k++] = (ns_eig){b[st], 0, NS_LABEL_BULK, nbulk};
    }
    memcpy(list2, list, k * sizeof *list);
    int na = ns_eig_merge(list, k, 0, oa, cap, 1, err),
        nb = ns_eig_merge(list2, k, 0, ob, cap, 0, err);
    /* on one thread or two (the runs sorted side by side) alternately: nstat reaches the
       threaded size (2048) in most trials */
    int nc = ns_eig_merge_closed(nones, r, b, nbulk, nstat, oc, cap, 1 + t % 2, err);
    trials++;
    if (na < 0 || nb != na || nc != na || memcmp(oa, oc, (size_t)na * sizeof *oa) != 0 ||
        memcmp(ob, oc, (size_t)na * sizeof *oa) != 0) {
      tap_diag("closed merge of %zu statistics: radix %d, qsort %d, closed %d: differ %s", nstat,
               na, nb, nc, err);
      bad++;
    }
    free(rad), free(blk), free(list), free(list2), free(oa), free(ob), free(oc);
  }
  tap_ok(bad == 0, "eig_merge_closed = eig_merge of the list of entries, on %d closed forms",
         trials);
  double v[3] = {3, 1, 2}, u[3] = {3, 1, 2};
  ns_eig o[4];
  tap_ok(ns_eig_merge_closed(3, v, u, 2, 3, o, 3, 1, err) == -1 && strstr(err, "do not fit"),
         "eig_merge_closed: an output too small is refused: %s", err);
}

int main(void) {
  eig_known();
  svd_known();
  bad_input();
  random_matrices();
  merge_radix_vs_qsort();
  merge_closed_vs_list();
  return tap_done();
}
