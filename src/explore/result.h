/* result.h: the result record every view of the explorer is drawn from, computed from
 * the state (ns_explore_compute) or updated part by part through a cache
 * (ns_explore_update).
 *
 * Data flows one way: ns_state -> ns_explore_update -> ns_result -> views. The record
 * reports conditions as codes (ns_cond, ns_evalsrc); ns_cond_words and ns_evalsrc_words
 * are the one table that turns them into words, for the screen, Lua's result() and
 * headless lessons alike.
 *
 * Ownership: an ns_result owns all its arrays; free it with ns_result_free (safe on a
 * zeroed struct).
 *
 *   ns_result r = {0};
 *   if (ns_explore_compute(&s, &r, err) == 0) { ... r.norm.y, r.spec_closed ... }
 *   ns_result_free(&r);
 */
#ifndef NS_EXPLORE_RESULT_H
#define NS_EXPLORE_RESULT_H

#include <stddef.h>

#include "core/normalize.h"
#include "core/spectrum.h"
#include "explore/state.h"

/* The residual block's Jacobians run only when x has at most this many elements (above
 * it they are skipped with a reason), and the figure's spectrum sweep is of the whole of x
 * (above it, of one statistic's block). */
#define NS_EXPLORE_JAC_LIMIT 128
/* The full Jacobian (analytic and FD J, their LAPACK spectra, rank) is formed only when x
 * has at most this many elements (r.jac_skip says why not). Up to 1024 it costs about a
 * second, so the screen computes it in a worker thread (ns_explore_cache.defer_jac) while
 * the closed-form spectrum and its checks, which cost O(n) at any size, are on screen at
 * once. */
#define NS_EXPLORE_JAC_FULL_LIMIT 1024
/* What ns_explore_compute allocates besides tensors, at most, per element of x: its probes'
 * outputs, the statistics and the checks' directions and normalizations, all freed before it
 * returns or owned by the result. The peak measured (VmHWM over VmRSS around result(), x of
 * 2^20 elements) over every kind, 1-D to 4-D and the shapes that make one statistic hold all
 * of x (1-D, (4, 2^18), (2^18, 4)): 102, batch on (4, 2^18). A sandbox charges this much
 * (with the Jacobians' n x n arrays up to NS_EXPLORE_JAC_FULL_LIMIT) before it computes
 * (src/lua/explore_lua.c). */
#define NS_EXPLORE_SCRATCH_PER_ELEMENT 128
/* The closed form is checked on this many statistics at most (the first, and the one with
 * the smallest denominator), three labelled directions each. */
#define NS_EXPLORE_CHECK_STATS 2
/* Checks of statistics with more elements than this in all (seven normalizations of each
 * checked statistic) go to the job with the full Jacobian when the update defers it. */
#define NS_EXPLORE_CHECK_SYNC 65536
/* Above this many elements of x, the shift/scale probes run on a leading slice of x (whole
 * entries along axis 1, so each statistic stays whole for per-example kinds) and the
 * precision probe on the first values: a keypress on a 1M-element tensor then costs one
 * normalization instead of three plus three emulated-precision passes. */
#define NS_EXPLORE_PROBE_LIMIT 65536
/* Digits of agreement are capped at the digits the accumulation dtype can hold. */
#define NS_EXPLORE_DIGITS_CAP 17.0
/* Finite-difference step of the FD Jacobian. */
#define NS_EXPLORE_FD_H 1e-6

/* What makes the output's statistics degenerate (the first degenerate one), or y trivial.
 * One row per code: C(ID, name, words). name is what result().cond says; words is the
 * sentence ns_cond_format fills in (%s: the dtype, %g: the value). */
/* clang-format off */
#define NS_CONDS(C)                                                                                \
  C(NONE, "none", "")                                                                              \
  /* one value per statistic of a centered kind: y = beta */                                       \
  C(ONE_VALUE, "one_value", "1 value per statistic: x - mean = 0, so y = beta")                    \
  /* one value and ddof 1: the variance is 0/0 */                                                  \
  C(DDOF_ONE, "ddof_one", "1 value and ddof 1: variance 0/0")                                      \
  C(X_NONFINITE, "x_nonfinite", "x holds NaN or Inf")                                              \
  /* the mean overflows the dtype */                                                               \
  C(X_OVERFLOW, "x_overflow", "x overflows %s (inf)")                                              \
  /* all values equal and eps 0 */                                                                 \
  C(ALL_EQUAL, "all_equal", "all equal and eps = 0: s = 0, y = 0/0")                               \
  /* the values differ but the variance cancelled to 0 in the accumulation dtype (raw) */          \
  C(CANCELLED, "cancelled",                                                                        \
    "variance cancelled to 0 in %s (the values differ): s = 0, y = +-inf")                         \
  /* eval mode with a running variance 0 and eps 0 */                                              \
  C(RUNNING_ZERO, "running_zero", "running var 0 and eps = 0: s = 0, y = +-inf or 0/0")            \
  /* uncentered: all zero and eps 0 */                                                             \
  C(ALL_ZERO, "all_zero", "all zero and eps = 0: rms = 0, y = 0/0")                                \
  C(DENOM_INF, "denom_inf", "s = inf: the variance overflows %s")                                  \
  /* another non-finite denominator (cond_value) */                                                \
  C(DENOM_BAD, "denom_bad", "the denominator is %g")                                               \
  /* the mask keeps no element of a statistic: outputs 0, mean NaN */                              \
  C(MASK_EMPTY, "mask_empty", "the mask keeps no element of a statistic: its outputs are 0")
/* clang-format on */
#define NS_COND_ENUM_(ID, name, words) NS_COND_##ID,
typedef enum { NS_CONDS(NS_COND_ENUM_) NS_COND_COUNT } ns_cond;
#undef NS_COND_ENUM_
/* The names, in enum order, NULL-terminated. */
extern const char *const ns_cond_names[NS_COND_COUNT + 1];

/* Where eval mode takes the statistics of the output from. */
typedef enum {
  NS_EVALSRC_NONE = 0,   /* train mode */
  NS_EVALSRC_NOT_BATCH,  /* eval mode, but the kind uses per-example statistics */
  NS_EVALSRC_MOMENTUM,   /* the train panel's momentum running statistics */
  NS_EVALSRC_CUMULATIVE, /* the train panel's cumulative average */
  NS_EVALSRC_FRESH,      /* fresh running statistics (mean 0, var 1): features differ */
  NS_EVALSRC_COUNT
} ns_evalsrc;

/* One running-statistics estimator of the train/eval panel. */
typedef struct {
  const char *name;   /* "momentum", "cumulative", "exact" */
  double *mean, *var; /* train_d: the running statistics after all training batches */
  double *y;          /* eval_n * train_d: the eval batch normalized with them (eval mode) */
  double gap;         /* max |y - own-statistics y| */
} ns_estimator;

/* The members of ns_result, one row each, in struct order: X(part, own, type, name, dim).
 * The struct is declared from this list, and result.c clears, frees and moves every member
 * by walking it; explore_lua.c checks that result() shows each member or says why not.
 *   part  the part that computes it and clears it before (NS_RP_*): IN, PROBE, GAP and
 *         PREC are written whole by their part and only freed with the result; OUTD is
 *         what the output part derives from r.norm; JACW is the screen's own of the
 *         Jacobian part (a job's result does not move it)
 *   own   VAL   a value or fixed array of values: cleared to 0, copied by a move
 *         KEEP  as VAL, but its part's clear leaves it (the part always sets it)
 *         ONE, NAN_  as VAL, cleared to 1 or NaN
 *         MEM   malloc'd pointer(s) (an array: each): freed; a move takes it
 *         TENSOR ns_tensor_free; NORM ns_norm_result_free; EST each ns_estimator's arrays
 *   dim   empty, or the array's [size] */
/* clang-format off */
#define NS_RESULT(X)                                                                               \
  /* 1 input (statistics over all elements, fp64, population std) */                               \
  X(IN, VAL, size_t, n, )                                                                          \
  X(IN, VAL, double, x_mean, )                                                                     \
  X(IN, VAL, double, x_std, )                                                                      \
  X(IN, VAL, double, x_rms, )                                                                      \
  X(IN, VAL, double, x_min, ) /* min/max over the non-NaN values */                                \
  X(IN, VAL, double, x_max, )                                                                      \
  X(IN, VAL, size_t, x_nan, ) /* NaN and +-Inf entries of x */                                     \
  X(IN, VAL, size_t, x_inf, )                                                                      \
  /* 3 output: y = r.norm.y with the statistics in r.norm (mean, var, denom, degenerate) */        \
  X(OUT, NORM, ns_norm_result, norm, )                                                             \
  X(OUTD, VAL, double, y_mean, ) /* over all elements of y (with a mask: the kept ones) */         \
  X(OUTD, VAL, double, y_std, )                                                                    \
  X(OUT, VAL, ns_evalsrc, evalsrc, ) /* where eval mode's statistics came from */                  \
  X(OUT, VAL, const char *, eval_note, ) /* ns_evalsrc_words(evalsrc), NULL in train mode */       \
  /* why statistics are degenerate (r.norm.ndegenerate of them), or what makes y trivial */        \
  X(OUTD, VAL, ns_cond, cond, )                                                                    \
  X(OUTD, KEEP, ns_dtype, cond_dtype, ) /* the dtype the condition happened in */                  \
  X(OUTD, KEEP, double, cond_value, ) /* the denominator, for NS_COND_DENOM_BAD */                 \
  X(OUTD, VAL, char, degenerate_why, [160]) /* ns_cond_format of the above; "" if nothing is */    \
  X(PROBE, TENSOR, ns_tensor *, y_shift, ) /* y(x + shift*1) */                                    \
  X(PROBE, TENSOR, ns_tensor *, y_scale, ) /* y(scale*x) */                                        \
  X(PROBE, VAL, double, shift_dev, ) /* max |y(x + shift*1) - y(x)| */                             \
  X(PROBE, VAL, double, scale_dev, ) /* max |y(scale*x) - y(x)| */                                 \
  /* the slice of x the probes cover: its first probe_k entries along probe_axis, probe_n     \
     elements (probe_n == n: all of x; ns_probe_index maps x's elements into it) */            \
  X(OUTD, VAL, size_t, probe_n, )                                                                  \
  X(OUTD, VAL, int, probe_axis, )                                                                  \
  X(OUTD, VAL, size_t, probe_k, )                                                                  \
  X(OUTD, TENSOR, ns_tensor *, y_probe, ) /* y of that slice alone (NULL when probe_n == n) */     \
  /* 4 spectrum. The closed form and its checks exist at any size (nclosed > 0; else the           \
     reason is in closed_skip, "" when there is simply no closed form); the full J only            \
     when jac_done (jac_pending: a worker is computing it, see ns_explore_take_job). */            \
  X(CLOSED, MEM, ns_eig *, spec_closed, ) /* closed form of the exact map (fp64 at x rounded) */   \
  X(CLOSED, VAL, int, nclosed, ) /* 0: no closed form (or undefined: closed_skip) */               \
  X(CLOSED, VAL, char, closed_skip, [NS_ERRLEN])                                                   \
  X(CLOSED, VAL, int, closed_rank, ) /* eigenvalues above 1e-10 of the largest |value| */          \
  /* J v = lambda v without J: JVP and FD, and the statistic (0-based) of each */                  \
  X(CLOSED, KEEP, ns_eigcheck, eigchk, [3 * NS_EXPLORE_CHECK_STATS])                               \
  X(CLOSED, KEEP, size_t, eigchk_stat, [3 * NS_EXPLORE_CHECK_STATS])                               \
  X(CLOSED, VAL, int, neigchk, )                                                                   \
  X(CLOSED, ONE, int, eigchk_ok, ) /* every check within its tolerance (1 when there are none) */  \
  X(CLOSED, VAL, double, eigchk_jvp, ) /* largest jvp_res / jvp_tol of the checks */               \
  X(CLOSED, VAL, double, eigchk_fd, ) /* largest fd_res / fd_tol */                                \
  X(CLOSED, VAL, size_t, eigchk_m, ) /* elements per statistic */                                  \
  X(CLOSED, VAL, int, eigchk_pending, ) /* the checks run off the key path (large statistics) */   \
  X(JACW, VAL, int, jac_pending, ) /* the full J is being computed off the key path */             \
  X(JAC, VAL, int, jac_done, )                                                                     \
  X(JAC, VAL, char, jac_skip, [NS_ERRLEN]) /* why not, when !jac_done */                           \
  X(JAC, VAL, size_t, jn, ) /* n */                                                                \
  X(JAC, MEM, double *, J, ) /* jn*jn, row-major */                                                \
  X(JAC, MEM, double *, J_fd, )                                                                    \
  X(JAC, VAL, double, jac_fd_diff, ) /* max |J - J_fd| */                                          \
  X(JAC, MEM, ns_eig *, spec_numeric, ) /* LAPACK on the analytic J */                             \
  X(JAC, VAL, int, nnumeric, )                                                                     \
  X(JAC, MEM, ns_eig *, spec_fd, ) /* LAPACK on the FD J */                                        \
  X(JAC, VAL, int, nfd, )                                                                          \
  /* largest |difference| of the eigenvalue lists, paired by label (ns_eig_pair; NaN when no       \
     closed form), and the larger of the two */                                                    \
  X(JAC, VAL, double, eig_closed_vs_numeric, )                                                     \
  X(JAC, VAL, double, eig_numeric_vs_fd, )                                                         \
  X(JAC, VAL, double, eig_disagree, )                                                              \
  /* J, its closed form and LAPACK spectrum are of the exact map (fp64, two-pass) at x             \
     rounded to the dtype; J_fd is of the map on screen (jac_dtype, jac_acc, jac_algo) */          \
  X(JAC, VAL, int, jac_exact, ) /* 1 when that differs from the map on screen */                   \
  X(JAC, KEEP, ns_dtype, jac_dtype, ) /* the map the finite differences ran on */                  \
  X(JAC, KEEP, ns_dtype, jac_acc, )                                                                \
  X(JAC, KEEP, ns_algo, jac_algo, )                                                                \
  X(JAC, VAL, double, jac_fd_h, ) /* the finite-difference step (one the dtype resolves) */        \
  /* the FD's expected relative error at that step: (h/s)^2 + u|x|/(s h); above 0.5 the dtype      \
     cannot resolve the derivative; and the s (smallest denominator) it used */                    \
  X(JAC, VAL, double, jac_fd_err, )                                                                \
  X(JAC, VAL, double, jac_fd_s, )                                                                  \
  X(JAC, VAL, double, jac_tol, ) /* closed form vs LAPACK agree within this (1e-6 of the scale) */ \
  X(JAC, VAL, double, jac_fd_tol, ) /* LAPACK vs FD agree within this (the FD's accuracy) */       \
  X(JAC, VAL, double, smax, ) /* largest singular value of J */                                    \
  X(JAC, VAL, double, rank_tol, ) /* 1e-10 * smax */                                               \
  X(JAC, VAL, int, rank, ) /* singular values of J above rank_tol */                               \
  X(JAC, VAL, int, symmetric, ) /* J symmetric (to 1e-12 relative) */                              \
  /* 5 batch (B x D, row-major) */                                                                 \
  X(BATCH, VAL, size_t, B, )                                                                       \
  X(BATCH, VAL, size_t, D, )                                                                       \
  X(BATCH, MEM, double *, bn, ) /* B*D: batch norm of each column (population var, state eps) */   \
  X(BATCH, MEM, double *, ln, ) /* B*D: layer norm of each row */                                  \
  X(BATCH, MEM, double *, target_now, ) /* D: BN output of the target row with the batch */        \
  X(BATCH, MEM, double *, target_base, ) /* D: the same with the companion row the baseline */     \
  X(BATCH, MEM, unsigned char *, flip, ) /* D: 1 where the two have opposite signs */              \
  X(BATCH, VAL, int, nflip, )                                                                      \
  /* 6 train/eval */                                                                               \
  X(TRAIN, VAL, size_t, train_d, ) /* features (1 for the rng source) */                           \
  X(TRAIN, VAL, size_t, train_n, ) /* training values per feature: train_batches * batch_size */   \
  X(TRAIN, VAL, size_t, eval_n, ) /* eval batch rows */                                            \
  X(TRAIN, MEM, double *, eval_x, ) /* eval_n * train_d */                                         \
  X(TRAIN, MEM, double *, eval_mean, ) /* train_d: the eval batch's own (population) stats */      \
  X(TRAIN, MEM, double *, eval_var, )                                                              \
  X(TRAIN, MEM, double *, eval_y, ) /* eval_n * train_d: normalized under its own statistics */    \
  X(TRAIN, EST, ns_estimator, est, [3]) /* momentum (state's), cumulative average, exact merge */  \
  X(TRAIN, VAL, int, est_active, ) /* the one the state selects: 1 when cumulative, else 0 */      \
  /* train_batches values each: feature 1's running mean and var of est[k] after each merged       \
     batch (the screen's figure) */                                                                \
  X(TRAIN, MEM, double *, trace_mean, [3])                                                         \
  X(TRAIN, MEM, double *, trace_var, [3])                                                          \
  /* 6b the gap decomposed (rng source): with y_true the eval batch normalized with the            \
     training distribution's exact mean and variance (train_loc, train_scale^2),                   \
     est_gap = max|y(running) - y_true| is the finite-sample estimation error and                  \
     shift_gap = max|y_true - y(own stats)| what the shift of the evaluation distribution          \
     costs; NaN for a batch source (no exact distribution). */                                     \
  X(GAP, VAL, double, est_gap, [3])                                                                \
  X(GAP, VAL, double, shift_gap, )                                                                 \
  X(GAP, VAL, double, eval_loc_used, ) /* the evaluation distribution drawn from */                \
  X(GAP, VAL, double, eval_scale_used, )                                                           \
  /* residual block (placement): J of x + W N(x) and of N(x + W x), side by side */                \
  X(RESID, VAL, int, resid_done, )                                                                 \
  X(RESID, VAL, char, resid_skip, [NS_ERRLEN])                                                     \
  X(RESID, VAL, size_t, rn, ) /* n */                                                              \
  X(RESID, VAL, size_t, rw, ) /* W is rw x rw: n (over x) or D (per row) */                        \
  X(RESID, MEM, double *, W, ) /* rw * rw: the W used (the state's, or the random one) */          \
  X(RESID, MEM, double *, J_pre, ) /* rn * rn */                                                   \
  X(RESID, MEM, double *, J_post, )                                                                \
  X(RESID, MEM, double *, sv_pre, ) /* rn singular values each, descending */                      \
  X(RESID, MEM, double *, sv_post, )                                                               \
  X(RESID, VAL, int, rank_pre, ) /* above 1e-10 * the largest */                                   \
  X(RESID, VAL, int, rank_post, )                                                                  \
  X(RESID, MEM, double *, J_none, ) /* I + W: no normalization (rn * rn) */                        \
  /* the backward pass for the upstream gradient g (closed form) */                                \
  X(VJP, VAL, int, vjp_done, )                                                                     \
  X(VJP, VAL, char, vjp_skip, [NS_ERRLEN])                                                         \
  X(VJP, VAL, size_t, vn, ) /* n */                                                                \
  X(VJP, MEM, double *, g, ) /* vn: the upstream gradient used */                                  \
  X(VJP, MEM, double *, dx, ) /* vn: dL/dx and its three paths */                                  \
  X(VJP, MEM, double *, dx_direct, )                                                               \
  X(VJP, MEM, double *, dx_mean, )                                                                 \
  X(VJP, MEM, double *, dx_var, )                                                                  \
  X(VJP, MEM, double *, dgamma, ) /* naffine each */                                               \
  X(VJP, MEM, double *, dbeta, )                                                                   \
  X(VJP, VAL, size_t, naffine, )                                                                   \
  X(VJP, VAL, double, dx_sum_max, ) /* max over statistics |sum of dL/dx| (0 when centered) */     \
  X(VJP, VAL, double, dx_xhat_max, ) /* max over statistics |dL/dx . x_hat| (0 with eps 0) */      \
  X(VJP, NAN_, double, vjp_vs_jtg, ) /* max |dL/dx - J^T g| when J was computed, else NaN */       \
  /* 7 precision: variance of x (all elements, population) */                                      \
  X(PREC, VAL, size_t, prec_n, ) /* values used: the first min(n, NS_EXPLORE_PROBE_LIMIT) */       \
  X(PREC, VAL, double, var_ref, ) /* fp64 two-pass on the stored values */                         \
  X(PREC, VAL, double, var_algo, [3]) /* indexed by ns_algo, in the state's dtype/acc */           \
  X(PREC, VAL, double, var_relerr, [3]) /* |var - var_ref| / |var_ref| (absolute at 0) */          \
  X(PREC, VAL, double, var_digits, [3]) /* -log10(relerr), capped at NS_EXPLORE_DIGITS_CAP */      \
  X(PREC, VAL, double, var_lost, [3]) /* digits of the acc dtype minus var_digits, >= 0 */         \
  X(PREC, VAL, ns_dtype, prec_dtype, )                                                             \
  X(PREC, VAL, ns_dtype, prec_acc, )
/* clang-format on */

/* The parts of NS_RESULT, as bits. */
enum {
  NS_RP_IN = 1u << 0,
  NS_RP_OUT = 1u << 1,
  NS_RP_OUTD = 1u << 2,
  NS_RP_PROBE = 1u << 3,
  NS_RP_CLOSED = 1u << 4,
  NS_RP_JAC = 1u << 5,
  NS_RP_JACW = 1u << 6,
  NS_RP_BATCH = 1u << 7,
  NS_RP_TRAIN = 1u << 8,
  NS_RP_GAP = 1u << 9,
  NS_RP_RESID = 1u << 10,
  NS_RP_VJP = 1u << 11,
  NS_RP_PREC = 1u << 12,
  NS_RP_ALL = (1u << 13) - 1
};

#define NS_RESULT_MEMBER_(part, own, type, name, dim) type name dim;
typedef struct {
  NS_RESULT(NS_RESULT_MEMBER_)
} ns_result;
#undef NS_RESULT_MEMBER_

/* Computes every panel's content for s into r (r must be zeroed or freed before). 0, or -1
 * with err (r is then freed). The full Jacobian is skipped (r->jac_done = 0, reason in
 * r->jac_skip) when x has more than NS_EXPLORE_JAC_FULL_LIMIT elements or a probe fails;
 * it is always computed here, synchronously (the result is the same on every call). */
int ns_explore_compute(const ns_state *s, ns_result *r, char *err);
void ns_result_free(ns_result *r);

/* Where x's element i (row-major) sits in the probe slice of r (y_shift, y_scale, y_probe),
 * or NS_PROBE_NONE when the probes do not cover it; and the other way, x's element of the
 * slice's element j < r->probe_n. */
#define NS_PROBE_NONE ((size_t)-1)
size_t ns_probe_index(const ns_result *r, const ns_tensor *x, size_t i);
size_t ns_probe_elem(const ns_result *r, const ns_tensor *x, size_t j);

/* Incremental recompute for a screen that recomputes on every key. The cache remembers
 * the state its result was computed for; ns_explore_update compares the new state with
 * it and recomputes only the parts of the result whose inputs changed:
 *   input statistics        x
 *   output, probes, J       x, the normalize spec (and the train panel in eval batch norm);
 *                           the shift (scale) probe also its shift (scale)
 *   batch panel             batch, baseline, target, companion, eps, eps_at, ddof
 *   train/eval panel        seed, train_batches, batch_size, momentum, train_source,
 *                           train_loc, train_scale, eps, eps_at, ddof (and the batch when
 *                           it is the source)
 *   precision               x, dtype, acc
 * View fields (focus, cursor) change nothing. The result equals ns_explore_compute's.
 * r must be zeroed before the first call and passed unchanged between calls with the
 * same cache. On error: -1 with err, r freed, the cache emptied (the next call computes
 * everything). Free with ns_explore_cache_free (the result separately).
 *
 *   ns_explore_cache c;
 *   ns_result r = {0};
 *   ns_explore_cache_init(&c);
 *   for (each key) { ...change s...; ns_explore_update(&c, &s, &r, err); draw(&s, &r); }
 *   ns_result_free(&r);
 *   ns_explore_cache_free(&c);
 */
typedef struct ns_jac_job ns_jac_job;
/* What one chunk of NS_EXPLORE_CHUNK consecutive values adds to the display statistics
 * (x: every field; y: sum and m2). A cell edit recomputes the chunks it touched only. */
typedef struct {
  double sum, m2, sq; /* sum; sum of (v - the chunk's mean)^2; sum of v^2 */
  double mn, mx;      /* over the non-NaN values */
  size_t nnan, ninf;
} ns_chunk_sum;
#define NS_EXPLORE_CHUNK 16384
typedef struct {
  ns_state prev;       /* the state the result belongs to (a deep copy without x: its stamp
                          and log say what changed) */
  int valid;           /* prev describes the caller's result */
  unsigned last_parts; /* bit mask of the parts the last update recomputed (0: none) */
  /* Set by the caller: 1 leaves the full Jacobian to a job (r->jac_pending = 1) instead of
     computing it inside the update; 0 (the default) computes it at once. */
  int defer_jac;
  /* Set by the caller: how the main normalization runs (SIMD, threads: the screen uses
     every core); the bits never depend on it. ns_exec_default after init. */
  ns_exec exec;
  ns_jac_job *job;  /* the job the last update left, until ns_explore_take_job */
  unsigned jac_gen; /* counts the recomputes of the Jacobian part (a job knows its own) */
  /* the exact per-statistic m2 of x at its dtype, kept while only eps, eps_at, ddof or gamma
     change (the closed form then costs O(nstat)) */
  double *m2;
  size_t m2_nstat;
  int m2_valid, m2_center, m2_dtype;
  ns_spec m2_spec; /* its NS_SPEC_M2 fields (ns_spec_same_m2) key the cache */
  unsigned m2_gen; /* counts the times m2 was computed or updated (a change of x that did
                      not bring it up to date, in eval mode or with NaN in x, drops it) */
  /* x rounded to a narrower dtype than its own (an fp32 file seen at fp16), as the closed
     form reads it, for x's stamp xd_stamp: kept while x is, and a cell edit rewrites only
     the elements x's log names (NULL while the dtype needs no copy) */
  ns_tensor *xd;
  uint64_t xd_stamp;
  /* the chunks of the result's x and y (NULL: not kept) and how many there are; with
     them a cell edit rescans and renormalizes only what it touched */
  ns_chunk_sum *xck, *yck;
  size_t nck;
  int xck_ok, yck_ok; /* they describe the result's x and y */
  size_t last_restat; /* statistics the last update renormalized alone (0: all or none) */
  /* the statistics whose eigenvector checks the result holds (chk_n of them; 0: none
     kept): after a cell edit that touched neither, with the same picks, the checks are the
     same bits and are kept instead of rerun */
  int chk_n;
  size_t chk_stat[NS_EXPLORE_CHECK_STATS];
  int last_chk_kept; /* the last update kept the checks (a test's view of the fast path) */
} ns_explore_cache;

void ns_explore_cache_init(ns_explore_cache *c);
void ns_explore_cache_free(ns_explore_cache *c);
int ns_explore_update(ns_explore_cache *c, const ns_state *s, ns_result *r, char *err);

/* The full Jacobian off the key path. With c->defer_jac set, an update that makes the
 * Jacobian part stale and has at most NS_EXPLORE_JAC_FULL_LIMIT elements leaves a job in
 * the cache and r->jac_pending = 1; so does one whose eigenvector checks cover more than
 * NS_EXPLORE_CHECK_SYNC elements (r->eigchk_pending = 1). The job holds copies of everything it
 * reads, so ns_jac_job_run may run in another thread while the state changes; ns_jac_job_apply then
 * moves its fields into r if r is still the result the job was made for (same jac_gen):
 *
 *   ns_jac_job *j = ns_explore_take_job(&c);      // the caller owns it
 *   ...in a thread: ns_jac_job_run(j);
 *   ...back in the main thread: if (ns_jac_job_apply(j, &c, &r)) redraw();
 *   ns_jac_job_free(j);
 */
ns_jac_job *ns_explore_take_job(ns_explore_cache *c);
void ns_jac_job_run(ns_jac_job *j);
/* Asks a running job to stop at its next stage (safe from any thread); apply then refuses. */
void ns_jac_job_cancel(ns_jac_job *j);
/* 1 when the job's results went into r (the pending flags cleared), 0 when it is stale
 * (another update came since) or was cancelled. */
int ns_jac_job_apply(ns_jac_job *j, const ns_explore_cache *c, ns_result *r);
void ns_jac_job_free(ns_jac_job *j);

/* The entry of list[0..n) to pair an eigenvalue (label, value) with: the closest one with
 * the same label, unless that is farther than tol*(1+|value|) and one of another label is
 * closer (then *relabelled = 1). left (may be NULL): multiplicity still unpaired per
 * entry; entries with none are skipped. -1 when nothing is left. */
int ns_eig_pair(const ns_eig *list, int n, const int *left, ns_label label, double value,
                double tol, int *relabelled);

/* The words of a condition: a printf format whose %s is the dtype name and %g the value
 * (ns_cond_format fills them). One table for every caller. */
const char *ns_cond_words(ns_cond c);
/* The condition of r in words into buf ("" for NS_COND_NONE); returns buf. */
const char *ns_cond_format(const ns_result *r, char *buf, size_t len);
/* Words of an eval source (NULL for NS_EVALSRC_NONE). */
const char *ns_evalsrc_words(ns_evalsrc e);

#endif
