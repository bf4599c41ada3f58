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

typedef enum { NS_LABEL_ONES = 0, NS_LABEL_RADIAL, NS_LABEL_BULK, NS_LABEL_MASKED } ns_label;

typedef struct {
  double value; /* real part */
  double imag;  /* imaginary part (0 for symmetric or closed form) */
  ns_label label;
  int mult; /* multiplicity */
} ns_eig;

const char *ns_label_name(ns_label l); /* "ones", "radial", "bulk", "masked" */

/* The merge every spectrum here ends with: entries of one label whose values agree within
 * 1e-8 of the largest (plus noise) become one (the smallest value, the multiplicities
 * summed), sorted by value (then label). e (k entries) is reordered; the result goes to out
 * (cap entries). radix: 1 sorts real entries as 64-bit keys, 0 with qsort, -1 by the size
 * (the spectra's choice): the same result, tested. Returns the count or -1. */
int ns_eig_merge(ns_eig *e, size_t k, double noise, ns_eig *out, size_t cap, int radix, char *err);
/* ns_eig_merge (noise 0) of a closed form's entries, from their values, without a list of
 * them: the ones entry (value 0, multiplicity nones; none when nones is 0), then for each
 * statistic st < nstat its radial entry radial[st] (multiplicity 1; none when radial is
 * NULL) and its bulk entry bulk[st] (multiplicity nbulk; none when bulk is NULL). The same
 * result in out as that list's merge, tested. radial and bulk are its scratch (their
 * contents are unspecified after): each is sorted in place as 8-byte keys, where the list
 * took 48 bytes an entry, so 262,144 statistics fault in 4 MB of new memory, not 37. The
 * two labels' values are sorted on a thread each when threads > 1: the same result. */
int ns_eig_merge_closed(int nones, double *radial, double *bulk, int nbulk, size_t nstat,
                        ns_eig *out, size_t cap, int threads, char *err);

/* Closed-form labelled spectrum: entries sorted by value, equal (value, label) pairs
 * merged into multiplicities. Returns the number of entries written (<= cap), 0 when no
 * closed form applies (gamma not constant within a statistic), -1 on error (out's contents
 * then unspecified: it may have served as scratch). O(n) time and O(nstat) memory (no J, no
 * index lists): at most min(n, 3 nstat) entries in train mode, so a 1e6-element vector
 * costs one pass over it. */
int ns_spectrum_closed(const ns_tensor *x, const ns_spec *spec, ns_eig *out, size_t cap, char *err);
/* The same with the statistics' m2 given (ns_stat_moments of x under spec's plan, centered
 * as spec; NULL: computed here): O(nstat) in train mode, for a caller that keeps m2 while
 * eps, eps_at, ddof or gamma change; threads as ns_eig_merge_closed's. */
int ns_spectrum_closed_m2(const ns_tensor *x, const ns_spec *spec, const double *m2, ns_eig *out,
                          size_t cap, int threads, char *err);

/* One labelled eigenpair of the closed form checked without forming J. v is the unit
 * direction (supported on one statistic's members), value the closed-form eigenvalue. */
typedef struct {
  ns_label label;
  double value;
  double jvp_res; /* ||J v - value v||_2, J v by ns_jvp (jvp.h) */
  double jvp_tol; /* what rounding allows: about 4 m u |g|/s */
  double fd_res;  /* ||(y(x + h v) - y(x - h v)) / 2h - value v||_2, y by ns_normalize */
  double fd_tol;  /* its expected truncation (times ten) and rounding error */
  double h;       /* the step: cbrt(u) times ||x - mean|| of the statistic */
} ns_eigcheck;
/* Checks the closed-form eigenpairs of statistic stat (0-based) along its ones vector
 * (centered kinds), its radial vector (x - mean; RMS: x) and a bulk vector orthogonal to
 * both, in fp64 at x's stored values. The statistic's block of J is the Jacobian of a
 * layer (RMS) norm of its m values alone, so both products run on those: O(n) to find the
 * members, then O(m). Writes up to 3 checks (cap >= 3); returns their count, 0 when there
 * is nothing to check (eval mode: J diagonal; gamma not constant on the statistic), -1 on
 * error. A check passes when jvp_res <= jvp_tol and fd_res <= fd_tol. */
int ns_spectrum_check(const ns_tensor *x, const ns_spec *spec, size_t stat, ns_eigcheck *out,
                      int cap, char *err);
/* The same on up to `threads` threads (1: the caller's alone): the passes over the m
 * values and the JVP's residuals by fixed parts (core/lanes.h), and the central differences' one
 * map of both sides (x + h v and x - h v for every direction, as the rows of one tensor)
 * by row. The checks do not depend on the count, bit for bit. */
int ns_spectrum_check_exec(const ns_tensor *x, const ns_spec *spec, size_t stat, int threads,
                           ns_eigcheck *out, int cap, char *err);
/* The same with statistic stat's moments given, *mean and *m2 as ns_stat_moments(x, plan
 * of spec, center of spec) writes them (both NULL: computed here, a chain of m additions
 * twice), for a caller that has them from the closed form: the same checks, bit for bit. */
int ns_spectrum_check_moments(const ns_tensor *x, const ns_spec *spec, size_t stat,
                              const double *mean, const double *m2, int threads, ns_eigcheck *out,
                              int cap, char *err);
/* The map of statistic stat's block on its own: its m values (fp64, in index order) as a
 * rank-1 tensor *out (the caller frees it) and the layer (centered) or RMS spec *out_spec of
 * the same eps, eps_at and ddof with gamma *g (the statistic's constant gamma; out_spec
 * points at g). ns_spectrum_check(*out, out_spec, 0, ...) is the check of that statistic.
 * Returns 1, 0 when there is no such block (eval mode; gamma not constant on it), -1. */
int ns_stat_block(const ns_tensor *x, const ns_spec *spec, size_t stat, ns_tensor **out,
                  ns_spec *out_spec, double *g, char *err);
/* Numeric labelled spectrum of J (n x n, e.g. from ns_jacobian_*): eigenvalues by LAPACK
 * (dsyevr when J is symmetric, dgeev otherwise), each eigenvector labelled by its squared
 * projection (> 1/2) onto the span of the statistics' ones vectors (ones), their radial
 * vectors (radial), or neither (bulk); equal values with equal labels merged. Returns
 * the entry count or -1. */
int ns_spectrum_numeric(const ns_tensor *x, const ns_spec *spec, const double *J, ns_eig *out,
                        size_t cap, char *err);

/* ---- Masks (the end of spectrum.c; ns_spectrum_closed and ns_spectrum_numeric send a spec with a
 * mask there). J of a masked spec is 0 in the rows and columns of masked elements, so its
 * spectrum is that of the kept elements' map plus one 0 per masked element, labelled
 * "masked" (eigenvector: that element's unit vector). Per statistic with k kept members
 * the closed form above holds with k for m (none for k = 0). The numeric labels add
 * "masked" by the squared projection onto the masked coordinates. */
int ns_spectrum_closed_masked(const ns_tensor *x, const ns_spec *spec, ns_eig *out, size_t cap,
                              char *err);
int ns_spectrum_numeric_masked(const ns_tensor *x, const ns_spec *spec, const double *J,
                               ns_eig *out, size_t cap, char *err);

#endif
