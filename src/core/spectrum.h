/* spectrum.h: eigenvalues, singular values and rank through LAPACKE, and the labelled
 * spectrum of a normalization's Jacobian.
 *
 * Matrices are row-major doubles, never modified (copied before LAPACK sees them).
 * Functions return 0 or -1 with err (LAPACK failure, n too large, NaN/Inf input).
 *
 * Labels: in train mode each statistic's block of J is g times the Jacobian of a
 * centered (or RMS) map of its m members, so the closed form per statistic is
 *   ones   (centered only): 0, on the all-ones vector of the members
 *   radial : eps/s^3 (eps_at var) or eps/s^2 (eps_at std), on c = x - mean (RMS: on x)
 *   bulk   : 1/s, multiplicity m-2 (centered) or m-1 (RMS), times g
 * and the spectrum of J is the union over statistics. Eval mode: g/s, all "bulk".
 */
#ifndef NS_SPECTRUM_H
#define NS_SPECTRUM_H

#include <stddef.h>

#include "core/normalize.h"

typedef enum { NS_LABEL_ONES = 0, NS_LABEL_RADIAL, NS_LABEL_BULK } ns_label;

typedef struct {
  double value; /* real part */
  double imag;  /* imaginary part (0 for symmetric or closed form) */
  ns_label label;
  int mult; /* multiplicity */
} ns_eig;

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

const char *ns_label_name(ns_label l); /* "ones", "radial", "bulk" */

/* Closed-form labelled spectrum: entries sorted by value, equal (value, label) pairs
 * merged into multiplicities. Returns the number of entries written (<= cap), 0 when no
 * closed form applies (gamma not constant within a statistic), -1 on error. */
int ns_spectrum_closed(const ns_tensor *x, const ns_spec *spec, ns_eig *out, size_t cap, char *err);
/* Numeric labelled spectrum of J (n x n, e.g. from ns_jacobian_*): eigenvalues by LAPACK
 * (dsyevr when J is symmetric, dgeev otherwise), each eigenvector labelled by its squared
 * projection (> 1/2) onto the span of the statistics' ones vectors (ones), their radial
 * vectors (radial), or neither (bulk); equal values with equal labels merged. Returns
 * the entry count or -1. */
int ns_spectrum_numeric(const ns_tensor *x, const ns_spec *spec, const double *J, ns_eig *out,
                        size_t cap, char *err);

#endif
