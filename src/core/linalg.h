/* linalg.h: eigenvalues, singular values and rank through LAPACKE.
 *
 * Matrices are row-major doubles, never modified (copied before LAPACK sees them); the
 * caller owns every array, inputs and outputs alike. Functions return 0 or -1 with err
 * (LAPACK failure, n too large, NaN/Inf input). Typical call:
 *   double s[2];
 *   if (ns_svdvals(A, 2, 3, s, err)) return -1;   // s[0] >= s[1]
 */
#ifndef NS_LINALG_H
#define NS_LINALG_H

#include <stddef.h>

/* Square matrices above this order are refused: n^2 doubles would be 512 MiB and the
 * O(n^3) work would freeze an interactive session. */
#define NS_LINALG_MAXN 8192

/* Ascending eigenvalues w[0..n-1] of a symmetric matrix (dsyevr); V (n*n, row-major,
 * column k = eigenvector k) may be NULL. */
int ns_eig_sym(const double *A, size_t n, double *w, double *V, char *err);
/* Eigenvalues of a general matrix (dgeev), sorted by real part then imaginary part;
 * V (n*n, column k = real part of right eigenvector k) may be NULL. */
int ns_eig_general(const double *A, size_t n, double *wr, double *wi, double *V, char *err);
/* Descending singular values s[0..min(m,n)-1] (dgesdd). */
int ns_svdvals(const double *A, size_t m, size_t n, double *s, char *err);
/* Number of singular values > tol; tol < 0 means 1e-10 * largest. -1 on error. */
int ns_rank(const double *A, size_t m, size_t n, double tol, char *err);
/* 1 if |A_ij - A_ji| <= tol * max|A| for all i, j. */
int ns_is_symmetric(const double *A, size_t n, double tol);
/* 0 if the m x n matrix A is all finite, else -1 with a message (prefixed by fn) naming
 * the first bad entry. */
int ns_check_finite_matrix(const char *fn, const double *A, size_t m, size_t n, char *err);

#endif
