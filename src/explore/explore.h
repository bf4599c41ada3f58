/* explore.h: the explorer's state, the one function that changes it, and the result
 * record every panel of the screen is drawn from.
 *
 * Data flows one way: ns_state -> ns_explore_compute -> ns_result -> views. A key, a
 * REPL set{} or a lesson step all build an ns_state_patch and call ns_state_apply, which
 * validates the whole patch against the resulting state first and changes nothing on
 * error. Undo, lesson step-back and recording are therefore all "keep a copy of the
 * state" (ns_history does that for undo/redo).
 *
 * Ownership: an ns_state owns x, batch, baseline, gamma and beta; ns_state_copy makes a
 * deep copy, ns_state_free releases them (safe on a zeroed or freed state). A patch only
 * BORROWS its pointers: ns_state_apply copies what it keeps. An ns_result owns all its
 * arrays; free it with ns_result_free (safe on a zeroed struct).
 *
 *   ns_state s;
 *   ns_result r = {0};
 *   char err[NS_ERRLEN];
 *   ns_state_init(&s, err);                       // x = (-2,-1,1,2), layer norm, eps 1e-5
 *   ns_history h;
 *   ns_history_init(&h, 256);
 *   ns_edit_eps_decade(&s, &h, +1, err);       // eps 1e-5 -> 1e-4, undoable
 *   if (ns_explore_compute(&s, &r, err) == 0) { ... r.norm.y, r.spec_closed ... }
 *   ns_history_undo(&h, &s);                      // back to eps 1e-5
 *   ns_result_free(&r);
 *   ns_history_free(&h);
 *   ns_state_free(&s);
 */
#ifndef NS_EXPLORE_H
#define NS_EXPLORE_H

#include <stddef.h>
#include <stdint.h>

#include "core/normalize.h"
#include "core/spectrum.h"
#include "core/tensor.h"

/* Jacobian-based probes (analytic/FD Jacobian, spectra, rank) run only when x has at most
 * this many elements; above it they are skipped with a reason (r.jac_skip). 128 keeps a
 * whole recompute inside one 16 ms frame (make bench: about 12 ms at 128, 100 ms at 256). */
#define NS_EXPLORE_JAC_LIMIT 128
/* Above this many elements of x, the shift/scale probes run on a leading slice of x (whole
 * entries along axis 1, so each statistic stays whole for per-example kinds) and the
 * precision probe on the first values: a keypress on a 1M-element tensor then costs one
 * normalization instead of three plus three emulated-precision passes. */
#define NS_EXPLORE_PROBE_LIMIT 65536
/* Digits of agreement are capped here (an exact result would be infinitely many). */
#define NS_EXPLORE_DIGITS_CAP 17.0
/* Finite-difference step of the FD Jacobian. */
#define NS_EXPLORE_FD_H 1e-6

/* Panels, in the order of issue 4 (a view hint: which one has the keyboard focus). */
typedef enum {
  NS_PANEL_INPUT = 0,
  NS_PANEL_SETTINGS,
  NS_PANEL_OUTPUT,
  NS_PANEL_SPECTRUM,
  NS_PANEL_BATCH,
  NS_PANEL_TRAIN,
  NS_PANEL_PRECISION,
  NS_PANEL_COUNT
} ns_panel;

/* Where the train/eval panel takes its data from. */
typedef enum {
  NS_SOURCE_RNG = 0, /* ns_rng(seed) normal(train_loc, train_scale), one scalar feature */
  NS_SOURCE_BATCH    /* rows drawn (seeded, with replacement) from the batch matrix */
} ns_source;

/* The whole explorer state. Plain data; every field is a set{}/get() field of the same
 * name (see ns_field_name) except where noted. */
typedef struct {
  ns_tensor *x; /* the input (owned), rank 1..4, any storage dtype */

  /* The normalize spec (meanings as in ns_spec, normalize.h). */
  ns_kind kind;
  unsigned axes; /* bit k: reduce over axis k+1; 0 = the kind's default */
  int groups;    /* >= 1 */
  double eps;    /* >= 0, finite */
  ns_eps_at eps_at;
  int ddof;      /* 0 or 1 */
  int center;    /* 1, 0, or -1 = the kind's default */
  double *gamma; /* owned, ngamma values; NULL/0 = none (1) */
  size_t ngamma;
  double *beta; /* owned, nbeta values; NULL/0 = none (0) */
  size_t nbeta;
  ns_dtype dtype;
  int acc; /* ns_dtype, or -1: the default for dtype */
  ns_algo algo;
  ns_mode mode;

  /* Batch panel: BN down the columns, LN across the rows of a B x D matrix. */
  ns_tensor *batch; /* owned, rank 2, fp64, B >= 2 rows, D >= 1 columns */
  double *baseline; /* owned, D values: the companion row the current one is compared with.
                       Kept when batch values change; reset to the companion row when the
                       batch shape or the companion index changes (unless set explicitly). */
  int target;       /* 1-based row of the example we watch */
  int companion;    /* 1-based row the user changes; != target */

  /* Train/eval panel. */
  uint64_t seed;     /* ns_rng seed */
  int train_batches; /* 1..NS_EXPLORE_MAX_BATCHES */
  int batch_size;    /* 2..NS_EXPLORE_MAX_BATCH_SIZE; also the eval batch size */
  double momentum;   /* in (0, 1]; set{momentum=false} -> cumulative = 1 */
  int cumulative;    /* 1: running stats are the cumulative average */
  ns_source train_source;
  double train_loc, train_scale; /* normal(loc, scale) for NS_SOURCE_RNG (scale > 0) */

  /* Output probes: y(x + shift*1) and y(scale*x) compared with y(x). */
  double shift; /* finite */
  double scale; /* finite */

  /* View hints (lessons may set them; they do not change any result). */
  ns_panel focus;
  int cursor_row, cursor_col; /* 0-based cell of the focused matrix (input or batch) */
} ns_state;

#define NS_EXPLORE_MAX_BATCHES 10000
#define NS_EXPLORE_MAX_BATCH_SIZE 100000

/* The fields a patch can set, in the order get() lists them. */
typedef enum {
  NS_F_X = 0,
  NS_F_KIND,
  NS_F_AXES,
  NS_F_GROUPS,
  NS_F_EPS,
  NS_F_EPS_AT,
  NS_F_DDOF,
  NS_F_CENTER,
  NS_F_GAMMA,
  NS_F_BETA,
  NS_F_DTYPE,
  NS_F_ACC,
  NS_F_ALGO,
  NS_F_MODE,
  NS_F_BATCH,
  NS_F_BASELINE,
  NS_F_TARGET,
  NS_F_COMPANION,
  NS_F_SEED,
  NS_F_TRAIN_BATCHES,
  NS_F_BATCH_SIZE,
  NS_F_MOMENTUM, /* sets momentum and cumulative together */
  NS_F_TRAIN_SOURCE,
  NS_F_TRAIN_LOC,
  NS_F_TRAIN_SCALE,
  NS_F_SHIFT,
  NS_F_SCALE,
  NS_F_FOCUS,
  NS_F_CURSOR, /* cursor_row and cursor_col together */
  NS_F_COUNT
} ns_field;

/* set{}/get() name of a field: "x", "kind", "axes", "groups", "eps", "eps_at", "ddof",
 * "center", "gamma", "beta", "dtype", "acc", "algo", "mode", "batch", "baseline",
 * "target", "companion", "seed", "train_batches", "batch_size", "momentum",
 * "train_source", "train_loc", "train_scale", "shift", "scale", "focus", "cursor". */
const char *ns_field_name(ns_field f);
/* The field of a name, or -1. */
int ns_field_parse(const char *name);
/* 1 for view-hint fields (focus, cursor): they never push an undo step. */
int ns_field_is_view(ns_field f);
const char *ns_panel_name(ns_panel p); /* "input", "settings", "output", "spectrum", "batch",
                                          "train", "precision" */
int ns_panel_parse(const char *name, ns_panel *out);
const char *ns_source_name(ns_source s); /* "rng", "batch" */
int ns_source_parse(const char *name, ns_source *out);

/* A change: bit (1u << f) of `set` says field f is given. Values have the ns_state
 * meanings; pointers are borrowed (copied by ns_state_apply). baseline == NULL with its
 * bit set means "reset the baseline to the current companion row". */
typedef struct {
  uint32_t set;
  const ns_tensor *x;
  ns_kind kind;
  unsigned axes;
  int groups;
  double eps;
  ns_eps_at eps_at;
  int ddof;
  int center;
  const double *gamma; /* NULL or ngamma == 0: no gamma */
  size_t ngamma;
  const double *beta;
  size_t nbeta;
  ns_dtype dtype;
  int acc;
  ns_algo algo;
  ns_mode mode;
  const ns_tensor *batch;
  const double *baseline;
  size_t nbaseline;
  int target, companion;
  uint64_t seed;
  int train_batches, batch_size;
  double momentum;
  int cumulative;
  ns_source train_source;
  double train_loc, train_scale;
  double shift, scale;
  ns_panel focus;
  int cursor_row, cursor_col;
} ns_state_patch;

/* An empty patch (nothing set). */
void ns_patch_init(ns_state_patch *p);
/* A patch that sets every field to src's value (borrowing src's arrays): applying it
 * makes the state equal to src (reset, lesson steps, replaying a recording). */
void ns_patch_from_state(ns_state_patch *p, const ns_state *src);

/* The default state: x = (-2,-1,1,2) fp64, layer norm, eps 1e-5 inside the sqrt,
 * ddof 0, default centering, no gamma/beta, fp64 with default acc, two-pass, train;
 * batch ((0, 1), (2, -1)) with target 1, companion 2, baseline (2, -1) (column 1 is the
 * sign-flip example: change the companion's 2 to -2 and the target's BN output goes
 * from -0.999995 to +0.999995); seed 316832669, 8 training batches of 32 from
 * normal(4, 2), momentum 0.1; probes shift 10, scale 2; focus input. 0, or -1 with err
 * (allocation failure). */
int ns_state_init(ns_state *s, char *err);
/* Deep copy into dst (dst's old contents are NOT freed). 0, or -1 with err. */
int ns_state_copy(ns_state *dst, const ns_state *src, char *err);
void ns_state_free(ns_state *s);
/* 1 if every field (tensor shapes, dtypes and values bit for bit, arrays) is equal; the
 * momentum value is not compared when both states use the cumulative average. */
int ns_state_equal(const ns_state *a, const ns_state *b);

/* Applies p to s. Every given field is checked, then the combination (the spec must be
 * valid for x: axes within x's rank, groups dividing the channels, gamma/beta lengths;
 * target/companion within the batch and different; ...). On error returns -1 with err
 * naming the field ("eps: must be finite and >= 0, got -1") and s is unchanged. */
int ns_state_apply(ns_state *s, const ns_state_patch *p, char *err);

/* Fills an ns_spec (borrowing s's gamma/beta) from the state; running = NULL. */
void ns_state_spec(const ns_state *s, ns_spec *spec);

/* Bytes a state holds (tensors and arrays), for the history's memory bound. */
size_t ns_state_bytes(const ns_state *s);

/* Undo/redo: a bounded stack of state copies. Each step copies the whole state, so besides
 * the step count the stacks are bounded in memory: when the copies (undo plus redo) hold
 * more than max_bytes, the oldest undo steps are dropped (at least one step is kept). */
#define NS_HISTORY_MAX_BYTES ((size_t)256 << 20)
typedef struct {
  ns_state *undo; /* oldest first */
  size_t nundo;
  ns_state *redo; /* most recently undone last */
  size_t nredo;
  size_t depth;     /* at most this many undo steps are kept (>= 1) */
  size_t max_bytes; /* NS_HISTORY_MAX_BYTES after ns_history_init; may be changed */
} ns_history;

void ns_history_init(ns_history *h, size_t depth);
void ns_history_free(ns_history *h);
/* Records a copy of s as an undo step and clears redo. 0 or -1 (allocation). */
int ns_history_push(ns_history *h, const ns_state *s, char *err);
/* Applies p to s (ns_state_apply); on success pushes the previous state onto h, unless the
 * patch sets view fields only or h is NULL. 0 or -1 with err (s unchanged). */
int ns_history_apply(ns_history *h, ns_state *s, const ns_state_patch *p, char *err);
/* Swap s with the last undo (redo) step. 1 if something was undone (redone), else 0. */
int ns_history_undo(ns_history *h, ns_state *s);
int ns_history_redo(ns_history *h, ns_state *s);

/* Helpers for the screen's keys: each builds a patch and calls ns_history_apply (h may be
 * NULL: no undo step). 0, or -1 with err (s unchanged). */
/* Next/previous kind (dir +1/-1) that is defined for x's rank (skips instance/group for a
 * vector); clears explicit axes. */
int ns_edit_cycle_kind(ns_state *s, ns_history *h, int dir, char *err);
/* eps times 10^dir; from 0 up goes to 1e-12; down from <= 1e-12 goes to 0. */
int ns_edit_eps_decade(ns_state *s, ns_history *h, int dir, char *err);
int ns_edit_set_eps(ns_state *s, ns_history *h, double eps, char *err);
int ns_edit_toggle_eps_at(ns_state *s, ns_history *h, char *err);
int ns_edit_toggle_ddof(ns_state *s, ns_history *h, char *err);
/* default -> on -> off -> default */
int ns_edit_cycle_center(ns_state *s, ns_history *h, char *err);
int ns_edit_cycle_dtype(ns_state *s, ns_history *h, int dir, char *err);
/* default -> fp64 -> fp32 -> fp16 -> bf16 -> default */
int ns_edit_cycle_acc(ns_state *s, ns_history *h, int dir, char *err);
int ns_edit_cycle_algo(ns_state *s, ns_history *h, int dir, char *err);
int ns_edit_toggle_mode(ns_state *s, ns_history *h, char *err);
/* Toggle axis k (1-based) in the explicit axes (starting from the kind's default). */
int ns_edit_toggle_axis(ns_state *s, ns_history *h, int axis, char *err);
int ns_edit_groups_step(ns_state *s, ns_history *h, int dir, char *err);
/* momentum * 2^dir clamped to (0, 1]; */
int ns_edit_momentum_step(ns_state *s, ns_history *h, int dir, char *err);
int ns_edit_toggle_cumulative(ns_state *s, ns_history *h, char *err);
/* Sets the flat element i of x (0-based) to v. */
int ns_edit_set_x(ns_state *s, ns_history *h, size_t i, double v, char *err);
/* x as a vector or matrix: add/remove a row (axis 1) or column (axis 2) at index `at`
 * (0-based; insertion before it, at == count appends). A vector is one row of columns:
 * axis 2 adds/removes elements, adding a row makes it a (2, D) matrix. New cells are 0.
 * gamma/beta that no longer fit are dropped. x of rank 3/4: error. */
int ns_edit_x_insert(ns_state *s, ns_history *h, int axis, size_t at, char *err);
int ns_edit_x_remove(ns_state *s, ns_history *h, int axis, size_t at, char *err);
/* The same on the batch matrix (row, col 0-based). */
int ns_edit_set_batch(ns_state *s, ns_history *h, size_t row, size_t col, double v, char *err);
int ns_edit_batch_insert(ns_state *s, ns_history *h, int axis, size_t at, char *err);
int ns_edit_batch_remove(ns_state *s, ns_history *h, int axis, size_t at, char *err);
/* Target/companion rows (1-based). */
int ns_edit_set_target(ns_state *s, ns_history *h, int row, char *err);
int ns_edit_set_companion(ns_state *s, ns_history *h, int row, char *err);
/* Probe parameters. */
int ns_edit_set_shift(ns_state *s, ns_history *h, double b, char *err);
int ns_edit_set_scale(ns_state *s, ns_history *h, double a, char *err);
/* View hints (never pushed onto the history). */
int ns_edit_focus(ns_state *s, ns_panel p, char *err);
int ns_edit_cursor(ns_state *s, int row, int col, char *err);

/* One running-statistics estimator of the train/eval panel. */
typedef struct {
  const char *name;   /* "momentum", "cumulative", "exact" */
  double *mean, *var; /* train_d: the running statistics after all training batches */
  double *y;          /* eval_n * train_d: the eval batch normalized with them (eval mode) */
  double gap;         /* max |y - own-statistics y| */
} ns_estimator;

typedef struct {
  /* 1 input (statistics over all elements, fp64, population std) */
  size_t n;
  double x_mean, x_std, x_rms, x_min, x_max; /* min/max over the non-NaN values */
  size_t x_nan, x_inf;                       /* NaN and +-Inf entries of x */

  /* 3 output: y = r.norm.y with the statistics in r.norm (mean, var, denom, degenerate) */
  ns_norm_result norm;
  double y_mean, y_std;     /* over all elements of y */
  const char *eval_note;    /* eval mode: where the running statistics came from */
  char degenerate_why[160]; /* in words, why statistics are degenerate (r.norm.ndegenerate
                               of them), or what makes y trivial (one value per statistic
                               of a centered kind: y = beta); "" if nothing is */
  ns_tensor *y_shift;       /* y(x + shift*1) */
  ns_tensor *y_scale;       /* y(scale*x) */
  double shift_dev;         /* max |y(x + shift*1) - y(x)| */
  double scale_dev;         /* max |y(scale*x) - y(x)| */
  size_t probe_n;           /* elements of x the probes cover (its leading probe_n values) */
  ns_tensor *y_probe;       /* y of that slice on its own (NULL when probe_n == n: r.norm.y) */

  /* 4 spectrum (only when jac_done) */
  int jac_done;
  char jac_skip[NS_ERRLEN]; /* why not, when !jac_done */
  size_t jn;                /* n */
  double *J, *J_fd;         /* jn*jn, row-major */
  double jac_fd_diff;       /* max |J - J_fd| */
  ns_eig *spec_closed;      /* closed form; nclosed == 0: no closed form */
  int nclosed;
  ns_eig *spec_numeric; /* LAPACK on the analytic J */
  int nnumeric;
  ns_eig *spec_fd; /* LAPACK on the FD J */
  int nfd;
  double eig_closed_vs_numeric; /* largest |difference| of the sorted eigenvalue lists (NaN
                                   when no closed form) */
  double eig_numeric_vs_fd;
  double eig_disagree; /* the larger of the two */
  double smax;         /* largest singular value of J */
  double rank_tol;     /* 1e-10 * smax */
  int rank;            /* singular values of J above rank_tol */
  int symmetric;       /* J symmetric (to 1e-12 relative) */

  /* 5 batch (B x D, row-major) */
  size_t B, D;
  double *bn;          /* B*D: batch norm of each column (population variance, state eps) */
  double *ln;          /* B*D: layer norm of each row */
  double *target_now;  /* D: BN output of the target row with the current batch */
  double *target_base; /* D: the same with the companion row replaced by the baseline */
  unsigned char *flip; /* D: 1 where target_now and target_base have opposite signs */
  int nflip;

  /* 6 train/eval */
  size_t train_d;               /* features (1 for the rng source) */
  size_t train_n;               /* training values per feature: train_batches * batch_size */
  size_t eval_n;                /* eval batch rows */
  double *eval_x;               /* eval_n * train_d */
  double *eval_mean, *eval_var; /* train_d: the eval batch's own (population) statistics */
  double *eval_y;      /* eval_n * train_d: normalized under its own statistics (train mode) */
  ns_estimator est[3]; /* momentum (state's momentum), cumulative average, exact merge */
  int est_active;      /* the one the state selects: 1 when cumulative, else 0 */

  /* 7 precision: variance of x (all elements, population) */
  size_t prec_n;        /* values used: the first min(n, NS_EXPLORE_PROBE_LIMIT) of x */
  double var_ref;       /* fp64 two-pass on the stored values */
  double var_algo[3];   /* indexed by ns_algo, in the state's dtype/acc */
  double var_relerr[3]; /* |var - var_ref| / |var_ref| (absolute when var_ref == 0) */
  double var_digits[3]; /* -log10(relerr), capped at NS_EXPLORE_DIGITS_CAP */
  double var_lost[3];   /* digits of the acc dtype minus var_digits, >= 0 */
  ns_dtype prec_dtype, prec_acc;
} ns_result;

/* Computes every panel's content for s into r (r must be zeroed or freed before). 0, or -1
 * with err (r is then freed). Jacobian probes are skipped (r->jac_done = 0, reason in
 * r->jac_skip) when x has more than NS_EXPLORE_JAC_LIMIT elements or a probe fails. */
int ns_explore_compute(const ns_state *s, ns_result *r, char *err);
void ns_result_free(ns_result *r);

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
/* The parts of a result (bits of ns_explore_cache.last_parts). */
enum {
  NS_PART_INPUT = 1u << 0,  /* input statistics */
  NS_PART_TRAIN = 1u << 1,  /* train/eval panel */
  NS_PART_OUTPUT = 1u << 2, /* the normalization of x (norm, y_mean/y_std, y_probe) */
  NS_PART_SHIFT = 1u << 3,  /* y_shift, shift_dev */
  NS_PART_SCALE = 1u << 4,  /* y_scale, scale_dev */
  NS_PART_JAC = 1u << 5,    /* Jacobians, spectra, rank */
  NS_PART_BATCH = 1u << 6,  /* batch panel */
  NS_PART_PREC = 1u << 7,   /* precision panel */
  NS_PART_ALL = (1u << 8) - 1
};

typedef struct {
  ns_state prev;       /* the state the result belongs to (deep copy) */
  int valid;           /* prev describes the caller's result */
  unsigned last_parts; /* bit mask of the parts the last update recomputed (0: none) */
} ns_explore_cache;

void ns_explore_cache_init(ns_explore_cache *c);
void ns_explore_cache_free(ns_explore_cache *c);
int ns_explore_update(ns_explore_cache *c, const ns_state *s, ns_result *r, char *err);

#endif
