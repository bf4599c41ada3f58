/* linalg.c: LAPACKE wrappers: eigenvalues, singular values, rank, symmetry test.
 *
 * Every wrapper copies its row-major input into a column-major work array (LAPACK's
 * native layout) so the caller's matrix is never touched and LAPACKE never has to
 * transpose behind our back. */
#include "core/linalg.h"
#include "core/blasdl.h"
#include "core/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* General m x n matrices: at most this many elements. */
#define LINALG_MAXELEMS ((size_t)1 << 26)

int ns_check_finite_matrix(const char *fn, const double *A, size_t m, size_t n, char *err) {
  for (size_t i = 0; i < m * n; i++)
    if (!isfinite(A[i])) {
      ns_seterr(err, "%s: matrix entry (%zu, %zu) is %s; only finite values are accepted", fn,
                i / n, i % n, isnan(A[i]) ? "NaN" : "infinite");
      return -1;
    }
  return 0;
}

static int check_square(const char *fn, const double *A, size_t n, char *err) {
  if (!A) {
    ns_seterr(err, "%s: matrix is NULL", fn);
    return -1;
  }
  if (n == 0) {
    ns_seterr(err, "%s: matrix order is 0", fn);
    return -1;
  }
  if (n > NS_LINALG_MAXN) {
    ns_seterr(err, "%s: matrix order %zu is larger than the limit %d", fn, n, NS_LINALG_MAXN);
    return -1;
  }
  return ns_check_finite_matrix(fn, A, n, n, err);
}

/* Column-major copy of a row-major m x n matrix (leading dimension m). */
static double *colmajor_copy(const double *A, size_t m, size_t n) {
  double *c = malloc(m * n * sizeof *c);
  if (!c) return NULL;
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) c[i + j * m] = A[i * n + j];
  return c;
}

int ns_eig_sym(const double *A, size_t n, double *w, double *V, char *err) {
  if (check_square("eig_sym", A, n, err)) return -1;
  if (!w) {
    ns_seterr(err, "eig_sym: output array is NULL");
    return -1;
  }
  const ns_lapack *lk = ns_lapack_get("eig_sym", err);
  if (!lk) return -1;
  lapack_int ln = (lapack_int)n, found = 0, info;
  double *a = colmajor_copy(A, n, n);
  double *z = V ? malloc(n * n * sizeof *z) : NULL;
  lapack_int *isuppz = malloc(2 * n * sizeof *isuppz);
  double zdummy = 0;
  if (!a || (V && !z) || !isuppz) {
    free(a), free(z), free(isuppz);
    ns_seterr(err, "eig_sym: out of memory for a %zu x %zu matrix", n, n);
    return -1;
  }
  /* 'U': the upper triangle of the row-major input (its copy is column-major). */
  info = lk->dsyevr(LAPACK_COL_MAJOR, V ? 'V' : 'N', 'A', 'U', ln, a, ln, 0.0, 0.0, 0, 0, 0.0,
                    &found, w, V ? z : &zdummy, V ? ln : 1, isuppz);
  if (info == 0 && found != ln) info = -1000;
  if (info != 0) {
    free(a), free(z), free(isuppz);
    if (info == -1000)
      ns_seterr(err, "eig_sym: LAPACK dsyevr found %d of %zu eigenvalues", (int)found, n);
    else
      ns_seterr(err, "eig_sym: LAPACK dsyevr failed (info %d)", (int)info);
    return -1;
  }
  if (V)
    for (size_t i = 0; i < n; i++)
      for (size_t k = 0; k < n; k++) V[i * n + k] = z[i + k * n];
  free(a), free(z), free(isuppz);
  return 0;
}

typedef struct {
  double re, im;
  size_t idx;
} cplx_idx;

static int cmp_cplx(const void *pa, const void *pb) {
  const cplx_idx *a = pa, *b = pb;
  if (a->re < b->re) return -1;
  if (a->re > b->re) return 1;
  if (a->im < b->im) return -1;
  if (a->im > b->im) return 1;
  return (a->idx > b->idx) - (a->idx < b->idx);
}

int ns_eig_general(const double *A, size_t n, double *wr, double *wi, double *V, char *err) {
  if (check_square("eig_general", A, n, err)) return -1;
  if (!wr || !wi) {
    ns_seterr(err, "eig_general: output array is NULL");
    return -1;
  }
  const ns_lapack *lk = ns_lapack_get("eig_general", err);
  if (!lk) return -1;
  lapack_int ln = (lapack_int)n, info;
  double *a = colmajor_copy(A, n, n);
  double *vr = V ? malloc(n * n * sizeof *vr) : NULL;
  double *r = malloc(n * sizeof *r), *im = malloc(n * sizeof *im);
  cplx_idx *ord = malloc(n * sizeof *ord);
  double vldummy = 0, vrdummy = 0;
  if (!a || (V && !vr) || !r || !im || !ord) {
    free(a), free(vr), free(r), free(im), free(ord);
    ns_seterr(err, "eig_general: out of memory for a %zu x %zu matrix", n, n);
    return -1;
  }
  info = lk->dgeev(LAPACK_COL_MAJOR, 'N', V ? 'V' : 'N', ln, a, ln, r, im, &vldummy, 1,
                   V ? vr : &vrdummy, V ? ln : 1);
  if (info != 0) {
    free(a), free(vr), free(r), free(im), free(ord);
    if (info > 0)
      ns_seterr(err, "eig_general: LAPACK dgeev did not converge (info %d)", (int)info);
    else
      ns_seterr(err, "eig_general: LAPACK dgeev failed (info %d)", (int)info);
    return -1;
  }
  for (size_t k = 0; k < n; k++) ord[k] = (cplx_idx){r[k], im[k], k};
  qsort(ord, n, sizeof *ord, cmp_cplx);
  for (size_t k = 0; k < n; k++) {
    wr[k] = ord[k].re;
    wi[k] = ord[k].im;
  }
  if (V) {
    /* dgeev stores a complex pair (k, k+1) as re = column k, im = column k+1; both
     * members of the pair have the same real part. */
    for (size_t k = 0; k < n; k++) {
      size_t src = ord[k].idx;
      if (im[src] != 0 && src > 0 && im[src] < 0 && im[src - 1] > 0) src--;
      for (size_t i = 0; i < n; i++) V[i * n + k] = vr[i + src * n];
    }
  }
  free(a), free(vr), free(r), free(im), free(ord);
  return 0;
}

int ns_svdvals(const double *A, size_t m, size_t n, double *s, char *err) {
  if (!A || !s) {
    ns_seterr(err, "svdvals: %s is NULL", A ? "output array" : "matrix");
    return -1;
  }
  if (m == 0 || n == 0) {
    ns_seterr(err, "svdvals: matrix shape (%zu, %zu) has a zero dimension", m, n);
    return -1;
  }
  if (m > NS_LINALG_MAXN || n > NS_LINALG_MAXN || m * n > LINALG_MAXELEMS) {
    ns_seterr(err,
              "svdvals: matrix shape (%zu, %zu) is larger than the limit (%d per side, %zu "
              "elements)",
              m, n, NS_LINALG_MAXN, LINALG_MAXELEMS);
    return -1;
  }
  if (ns_check_finite_matrix("svdvals", A, m, n, err)) return -1;
  const ns_lapack *lk = ns_lapack_get("svdvals", err);
  if (!lk) return -1;
  /* The row-major buffer read column-major is A^T (n x m): same singular values. */
  double *a = malloc(m * n * sizeof *a);
  if (!a) {
    ns_seterr(err, "svdvals: out of memory for a %zu x %zu matrix", m, n);
    return -1;
  }
  memcpy(a, A, m * n * sizeof *a);
  double udummy = 0, vtdummy = 0;
  lapack_int info = lk->dgesdd(LAPACK_COL_MAJOR, 'N', (lapack_int)n, (lapack_int)m, a,
                               (lapack_int)n, s, &udummy, 1, &vtdummy, 1);
  free(a);
  if (info != 0) {
    if (info > 0)
      ns_seterr(err, "svdvals: LAPACK dgesdd did not converge (info %d)", (int)info);
    else
      ns_seterr(err, "svdvals: LAPACK dgesdd failed (info %d)", (int)info);
    return -1;
  }
  return 0;
}

int ns_rank(const double *A, size_t m, size_t n, double tol, char *err) {
  if (isnan(tol)) {
    ns_seterr(err, "rank: tolerance is NaN");
    return -1;
  }
  size_t k = m < n ? m : n;
  if (k == 0) {
    ns_seterr(err, "rank: matrix shape (%zu, %zu) has a zero dimension", m, n);
    return -1;
  }
  if (k > NS_LINALG_MAXN) k = NS_LINALG_MAXN; /* ns_svdvals refuses it below */
  double *s = malloc(k * sizeof *s);
  if (!s) {
    ns_seterr(err, "rank: out of memory");
    return -1;
  }
  if (ns_svdvals(A, m, n, s, err)) {
    free(s);
    return -1;
  }
  if (tol < 0) tol = 1e-10 * s[0];
  int r = 0;
  for (size_t i = 0; i < k; i++)
    if (s[i] > tol) r++;
  free(s);
  return r;
}

int ns_is_symmetric(const double *A, size_t n, double tol) {
  if (!A) return 0;
  double mx = 0;
  for (size_t i = 0; i < n * n; i++) {
    if (isnan(A[i])) return 0;
    if (fabs(A[i]) > mx) mx = fabs(A[i]);
  }
  double lim = tol * mx;
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++)
      if (!(fabs(A[i * n + j] - A[j * n + i]) <= lim)) return 0;
  return 1;
}
