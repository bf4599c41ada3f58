/* spectrum.h: the labelled spectrum of a normalization's Jacobian (the LAPACK wrappers,
 * ns_eig_sym, ns_svdvals, ns_rank, ..., are in linalg.h, included here for old callers).
 *
 * Matrices are row-major doubles, never modified. Functions return 0 or -1 with err.
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

#include "core/linalg.h"
#include "core/normalize.h"

typedef enum { NS_LABEL_ONES = 0, NS_LABEL_RADIAL, NS_LABEL_BULK } ns_label;

typedef struct {
  double value; /* real part */
  double imag;  /* imaginary part (0 for symmetric or closed form) */
  ns_label label;
  int mult; /* multiplicity */
} ns_eig;

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
