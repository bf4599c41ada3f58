/* test_explore_cache.c: ns_explore_update (the screen's incremental recompute) gives, after
 * every change of a long sequence, exactly the result a fresh ns_explore_compute gives;
 * and it recomputes only the parts the change touched (a cursor move or a probe
 * parameter must not renormalize x). The reference is the from-scratch compute, which
 * test_explore checks against hand-computed values and claims.tsv. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "explore/explore.h"
#include "tap.h"

/* ---- field-by-field, bit-for-bit comparison of two results (NaN equals NaN) ---- */

static int same_d(double a, double b) {
  return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

static int same_v(const double *a, const double *b, size_t n) {
  if (!a || !b) return a == b || n == 0;
  for (size_t i = 0; i < n; i++)
    if (!same_d(a[i], b[i])) return 0;
  return 1;
}

static int same_t(const ns_tensor *a, const ns_tensor *b) {
  if (!a || !b) return a == b;
  if (a->rank != b->rank || a->dtype != b->dtype || a->n != b->n) return 0;
  for (size_t i = 0; i < a->n; i++)
    if (!same_d(ns_tensor_get(a, i), ns_tensor_get(b, i))) return 0;
  return 1;
}

static int same_eigs(const ns_eig *a, int na, const ns_eig *b, int nb) {
  if (na != nb) return 0;
  for (int i = 0; i < na; i++)
    if (!same_d(a[i].value, b[i].value) || !same_d(a[i].imag, b[i].imag) ||
        a[i].label != b[i].label || a[i].mult != b[i].mult)
      return 0;
  return 1;
}

#define CHECK(cond, name)                                                                          \
  do {                                                                                             \
    if (!(cond)) return name;                                                                      \
  } while (0)

/* NULL if equal, else the name of the first field that differs. */
static const char *result_diff(const ns_result *a, const ns_result *b) {
  CHECK(a->n == b->n && same_d(a->x_mean, b->x_mean) && same_d(a->x_std, b->x_std) &&
            same_d(a->x_rms, b->x_rms) && same_d(a->x_min, b->x_min) &&
            same_d(a->x_max, b->x_max) && a->x_nan == b->x_nan && a->x_inf == b->x_inf,
        "input statistics");
  size_t ns = a->norm.plan.nstat;
  CHECK(ns == b->norm.plan.nstat, "norm.plan.nstat");
  CHECK(same_t(a->norm.y, b->norm.y), "norm.y");
  CHECK(same_v(a->norm.mean, b->norm.mean, ns) && same_v(a->norm.var, b->norm.var, ns) &&
            same_v(a->norm.denom, b->norm.denom, ns),
        "norm statistics");
  CHECK(a->norm.ndegenerate == b->norm.ndegenerate &&
            (!ns || memcmp(a->norm.degenerate, b->norm.degenerate, ns) == 0),
        "norm.degenerate");
  CHECK(same_d(a->y_mean, b->y_mean) && same_d(a->y_std, b->y_std), "y_mean/y_std");
  CHECK(strcmp(a->degenerate_why, b->degenerate_why) == 0, "degenerate_why");
  CHECK((!a->eval_note && !b->eval_note) ||
            (a->eval_note && b->eval_note && strcmp(a->eval_note, b->eval_note) == 0),
        "eval_note");
  CHECK(same_t(a->y_shift, b->y_shift) && same_d(a->shift_dev, b->shift_dev), "shift probe");
  CHECK(same_t(a->y_scale, b->y_scale) && same_d(a->scale_dev, b->scale_dev), "scale probe");
  CHECK(a->probe_n == b->probe_n && same_t(a->y_probe, b->y_probe), "probe slice");
  CHECK(a->jac_done == b->jac_done && strcmp(a->jac_skip, b->jac_skip) == 0, "jac_done/skip");
  /* the closed form and its checks (the cached m2 must give what a fresh one gives) */
  CHECK(same_eigs(a->spec_closed, a->nclosed, b->spec_closed, b->nclosed) &&
            strcmp(a->closed_skip, b->closed_skip) == 0 && a->closed_rank == b->closed_rank,
        "closed form");
  CHECK(a->neigchk == b->neigchk && a->eigchk_ok == b->eigchk_ok &&
            memcmp(a->eigchk, b->eigchk, (size_t)a->neigchk * sizeof *a->eigchk) == 0 &&
            memcmp(a->eigchk_stat, b->eigchk_stat, (size_t)a->neigchk * sizeof *a->eigchk_stat) ==
                0,
        "eigenvector checks");
  if (a->jac_done) {
    size_t n = a->jn;
    CHECK(n == b->jn && same_v(a->J, b->J, n * n) && same_v(a->J_fd, b->J_fd, n * n) &&
              same_d(a->jac_fd_diff, b->jac_fd_diff),
          "Jacobians");
    CHECK(same_eigs(a->spec_numeric, a->nnumeric, b->spec_numeric, b->nnumeric) &&
              same_eigs(a->spec_fd, a->nfd, b->spec_fd, b->nfd),
          "spectra");
    CHECK(same_d(a->eig_closed_vs_numeric, b->eig_closed_vs_numeric) &&
              same_d(a->eig_numeric_vs_fd, b->eig_numeric_vs_fd) &&
              same_d(a->eig_disagree, b->eig_disagree) && same_d(a->smax, b->smax) &&
              same_d(a->rank_tol, b->rank_tol) && a->rank == b->rank &&
              a->symmetric == b->symmetric,
          "rank/disagreement");
  }
  size_t bd = a->B * a->D;
  CHECK(a->B == b->B && a->D == b->D, "batch shape");
  CHECK(same_v(a->bn, b->bn, bd) && same_v(a->ln, b->ln, bd), "batch bn/ln");
  CHECK(same_v(a->target_now, b->target_now, a->D) &&
            same_v(a->target_base, b->target_base, a->D) && a->nflip == b->nflip &&
            memcmp(a->flip, b->flip, a->D) == 0,
        "batch target/flip");
  size_t ed = a->eval_n * a->train_d;
  CHECK(a->train_d == b->train_d && a->train_n == b->train_n && a->eval_n == b->eval_n,
        "train sizes");
  CHECK(same_v(a->eval_x, b->eval_x, ed) && same_v(a->eval_mean, b->eval_mean, a->train_d) &&
            same_v(a->eval_var, b->eval_var, a->train_d) && same_v(a->eval_y, b->eval_y, ed),
        "eval batch");
  for (int k = 0; k < 3; k++)
    CHECK(strcmp(a->est[k].name, b->est[k].name) == 0 &&
              same_v(a->est[k].mean, b->est[k].mean, a->train_d) &&
              same_v(a->est[k].var, b->est[k].var, a->train_d) &&
              same_v(a->est[k].y, b->est[k].y, ed) && same_d(a->est[k].gap, b->est[k].gap),
          "estimators");
  CHECK(a->est_active == b->est_active, "est_active");
  CHECK(same_v(a->est_gap, b->est_gap, 3) && same_d(a->shift_gap, b->shift_gap) &&
            same_d(a->eval_loc_used, b->eval_loc_used) &&
            same_d(a->eval_scale_used, b->eval_scale_used),
        "gap decomposition");
  CHECK(a->resid_done == b->resid_done && strcmp(a->resid_skip, b->resid_skip) == 0 &&
            a->rn == b->rn && a->rw == b->rw,
        "residual block");
  if (a->resid_done)
    CHECK(same_v(a->W, b->W, a->rw * a->rw) && same_v(a->J_pre, b->J_pre, a->rn * a->rn) &&
              same_v(a->J_post, b->J_post, a->rn * a->rn) &&
              same_v(a->J_none, b->J_none, a->rn * a->rn) && same_v(a->sv_pre, b->sv_pre, a->rn) &&
              same_v(a->sv_post, b->sv_post, a->rn) && a->rank_pre == b->rank_pre &&
              a->rank_post == b->rank_post,
          "residual Jacobians");
  CHECK(a->vjp_done == b->vjp_done && strcmp(a->vjp_skip, b->vjp_skip) == 0 && a->vn == b->vn,
        "backward pass");
  if (a->vjp_done)
    CHECK(same_v(a->g, b->g, a->vn) && same_v(a->dx, b->dx, a->vn) &&
              same_v(a->dx_direct, b->dx_direct, a->vn) && same_v(a->dx_mean, b->dx_mean, a->vn) &&
              same_v(a->dx_var, b->dx_var, a->vn) && a->naffine == b->naffine &&
              same_v(a->dgamma, b->dgamma, a->naffine) && same_v(a->dbeta, b->dbeta, a->naffine) &&
              same_d(a->dx_sum_max, b->dx_sum_max) && same_d(a->dx_xhat_max, b->dx_xhat_max) &&
              same_d(a->vjp_vs_jtg, b->vjp_vs_jtg),
          "backward pass values");
  CHECK(a->prec_n == b->prec_n && same_d(a->var_ref, b->var_ref) &&
            same_v(a->var_algo, b->var_algo, 3) && same_v(a->var_relerr, b->var_relerr, 3) &&
            same_v(a->var_digits, b->var_digits, 3) && same_v(a->var_lost, b->var_lost, 3) &&
            a->prec_dtype == b->prec_dtype && a->prec_acc == b->prec_acc,
        "precision");
  return NULL;
}

/* ---- the sequence of changes ---- */

typedef struct {
  const char *name;
  int (*apply)(ns_state *s, char *err);
  int renormalizes; /* 1: the main normalization of x must be recomputed */
} step;

/* a patch that gives fields their current values (a repeated key, set(get())) */
static int k_same(ns_state *s, char *err) {
  ns_state_patch p;
  ns_patch_from_state(&p, s);
  return ns_state_apply(s, &p, err);
}
static int k_same_eps(ns_state *s, char *err) {
  return ns_edit_set_eps(s, NULL, s->eps, err);
}
static int k_shift(ns_state *s, char *err) {
  return ns_edit_set_shift(s, NULL, s->shift - 3.5, err);
}
static int k_scale(ns_state *s, char *err) {
  return ns_edit_set_scale(s, NULL, s->scale * 0.5, err);
}
static int k_eps_up(ns_state *s, char *err) {
  return ns_edit_eps_decade(s, NULL, 1, err);
}
static int k_eps0(ns_state *s, char *err) {
  return ns_edit_set_eps(s, NULL, 0, err);
}
static int k_kind(ns_state *s, char *err) {
  return ns_edit_cycle_kind(s, NULL, 1, err);
}
static int k_mode(ns_state *s, char *err) {
  return ns_edit_toggle_mode(s, NULL, err);
}
static int k_cumul(ns_state *s, char *err) {
  return ns_edit_toggle_cumulative(s, NULL, err);
}
static int k_dtype(ns_state *s, char *err) {
  return ns_edit_cycle_dtype(s, NULL, 1, err);
}
static int k_acc(ns_state *s, char *err) {
  return ns_edit_cycle_acc(s, NULL, 1, err);
}
static int k_algo(ns_state *s, char *err) {
  return ns_edit_cycle_algo(s, NULL, 1, err);
}
static int k_ddof(ns_state *s, char *err) {
  return ns_edit_toggle_ddof(s, NULL, err);
}
static int k_eps_at(ns_state *s, char *err) {
  return ns_edit_toggle_eps_at(s, NULL, err);
}
static int k_center(ns_state *s, char *err) {
  return ns_edit_cycle_center(s, NULL, err);
}
static int k_cell(ns_state *s, char *err) {
  return ns_edit_set_x(s, NULL, 1, 0.75, err);
}
static int k_nan(ns_state *s, char *err) {
  return ns_edit_set_x(s, NULL, 0, NAN, err);
}
static int k_unnan(ns_state *s, char *err) {
  return ns_edit_set_x(s, NULL, 0, -2, err);
}
static int k_batch(ns_state *s, char *err) {
  return ns_edit_set_batch(s, NULL, 1, 0, ns_tensor_get(s->batch, 2) - 1.5, err);
}
static int k_target(ns_state *s, char *err) {
  ns_state_patch p; /* swap target and companion */
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_TARGET) | NS_FIELDBIT(NS_F_COMPANION);
  p.v.target = s->companion;
  p.v.companion = s->target;
  return ns_state_apply(s, &p, err);
}
static int k_momentum(ns_state *s, char *err) {
  return ns_edit_momentum_step(s, NULL, 1, err);
}
static int k_seed(ns_state *s, char *err) {
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_SEED);
  p.v.seed = s->seed + 17;
  return ns_state_apply(s, &p, err);
}
static int k_source(ns_state *s, char *err) {
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_TRAIN_SOURCE);
  p.v.train_source = s->train_source == NS_SOURCE_RNG ? NS_SOURCE_BATCH : NS_SOURCE_RNG;
  return ns_state_apply(s, &p, err);
}
static int k_placement(ns_state *s, char *err) {
  ns_state_patch p;
  ns_patch_init(&p);
  ns_patch_set(&p, NS_F_PLACEMENT);
  p.v.placement = s->placement == NS_PLACE_PRE ? NS_PLACE_POST : NS_PLACE_PRE;
  return ns_state_apply(s, &p, err);
}
static int k_w_seed(ns_state *s, char *err) {
  ns_state_patch p;
  ns_patch_init(&p);
  ns_patch_set(&p, NS_F_W_SEED);
  p.v.w_seed = s->w_seed + 3;
  return ns_state_apply(s, &p, err);
}
static int k_upstream(ns_state *s, char *err) {
  ns_tensor *u = ns_tensor_copy(s->x);
  if (!u) return -1;
  for (size_t i = 0; i < u->n; i++) ns_tensor_set(u, i, (double)i - 1.5);
  ns_state_patch p;
  ns_patch_init(&p);
  ns_patch_set(&p, NS_F_UPSTREAM);
  p.v.upstream = u;
  int rc = ns_state_apply(s, &p, err);
  ns_tensor_free(u);
  return rc;
}
static int k_eval_shift(ns_state *s, char *err) {
  ns_state_patch p;
  ns_patch_init(&p);
  ns_patch_set(&p, NS_F_EVAL_LOC);
  ns_patch_set(&p, NS_F_EVAL_SIZE);
  p.v.eval_loc = isnan(s->eval_loc) ? s->train_loc + 2 : NAN;
  p.v.eval_size = s->eval_size ? 0 : 50;
  return ns_state_apply(s, &p, err);
}
static int k_resample(ns_state *s, char *err) {
  ns_state_patch p;
  ns_patch_init(&p);
  ns_patch_set(&p, NS_F_TRAIN_SOURCE);
  p.v.train_source = NS_SOURCE_RESAMPLE;
  return ns_state_apply(s, &p, err);
}
static int k_gamma(ns_state *s, char *err) {
  static const double g[1] = {2};
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_GAMMA);
  p.v.gamma = (double *)g;
  p.v.ngamma = 1;
  return ns_state_apply(s, &p, err);
}
/* x becomes a (4, 2) matrix: batch norm over it uses 2 statistics, the rng train source 1
 * (eval mode then falls back to fresh statistics), the batch source 2. */
static int k_matrix(ns_state *s, char *err) {
  static const double v[8] = {1, -2, 3, 0.5, -1, 4, 2, 2};
  size_t shape[2] = {4, 2};
  ns_tensor *x = ns_tensor_from(2, shape, NS_FP64, v, err);
  if (!x) return -1;
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_X);
  p.v.x = x;
  int rc = ns_state_apply(s, &p, err);
  ns_tensor_free(x);
  return rc;
}
static int k_batch_kind(ns_state *s, char *err) {
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_KIND);
  p.v.kind = NS_KIND_BATCH;
  return ns_state_apply(s, &p, err);
}
/* layer norm over axis 1 only: a batch kind by its axes (reads running stats in eval) */
static int k_layer_axis1(ns_state *s, char *err) {
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_KIND) | NS_FIELDBIT(NS_F_AXES);
  p.v.kind = NS_KIND_LAYER;
  p.v.axes = 1u;
  return ns_state_apply(s, &p, err);
}

static const step steps[] = {
    {"the same state again", k_same, 0},
    {"placement pre", k_placement, 0},
    {"w_seed", k_w_seed, 0},
    {"upstream gradient", k_upstream, 0},
    {"a shifted evaluation distribution", k_eval_shift, 0},
    {"placement post", k_placement, 0},
    {"the same eps again", k_same_eps, 0},
    {"shift probe", k_shift, 0},
    {"scale probe", k_scale, 0},
    {"seed", k_seed, 0},
    {"momentum", k_momentum, 0},
    {"batch cell", k_batch, 0},
    {"target row", k_target, 0},
    {"eps up", k_eps_up, 1},
    {"x cell", k_cell, 1},
    {"kind", k_kind, 1},
    {"ddof", k_ddof, 1},
    {"eps placement", k_eps_at, 1},
    {"centering", k_center, 1},
    {"gamma", k_gamma, 1},
    {"dtype", k_dtype, 1},
    {"acc", k_acc, 1},
    {"algo", k_algo, 1},
    {"eps 0", k_eps0, 1},
    {"NaN in x", k_nan, 1},
    {"NaN removed", k_unnan, 1},
    {"x matrix", k_matrix, 1},
    {"batch kind", k_batch_kind, 1},
    {"eval mode", k_mode, 1},
    {"cumulative (eval batch norm: renormalizes)", k_cumul, 1},
    {"seed (eval batch norm: renormalizes)", k_seed, 1},
    {"train source batch", k_source, 1},
    {"train source resample", k_resample, 1},
    {"the same state again in eval", k_same, 0},
    {"shift probe in eval", k_shift, 0},
    {"batch cell (batch source, eval)", k_batch, 1},
    {"train mode", k_mode, 1},
    {"scale probe", k_scale, 0},
    {"layer kind over axis 1", k_layer_axis1, 1},
    {"eval mode (layer over axis 1)", k_mode, 1},
    {"seed (eval, layer over axis 1: renormalizes)", k_seed, 1},
    {"shift probe (eval, layer over axis 1)", k_shift, 0},
    {"train mode", k_mode, 1},
};

/* ---- cell edits on an x of many chunks: only the touched chunks are rescanned and the
 * touched statistics renormalized, and the result still equals a fresh compute ---- */

typedef struct {
  const char *name;
  ns_kind kind;
  int groups;
  ns_dtype xdt, dt;
  ns_algo algo;
  ns_mode mode;
  int eps_at_std, restat; /* restat: the edit is expected to renormalize alone */
} big_case;

static const big_case big_cases[] = {
    {"layer fp32", NS_KIND_LAYER, 1, NS_FP32, NS_FP32, NS_ALGO_WELFORD, NS_MODE_TRAIN, 0, 1},
    {"batch fp32", NS_KIND_BATCH, 1, NS_FP32, NS_FP32, NS_ALGO_TWOPASS, NS_MODE_TRAIN, 0, 1},
    {"instance fp16", NS_KIND_INSTANCE, 1, NS_FP32, NS_FP16, NS_ALGO_WELFORD, NS_MODE_TRAIN, 1, 1},
    {"group4 bf16", NS_KIND_GROUP, 4, NS_FP32, NS_BF16, NS_ALGO_RAW, NS_MODE_TRAIN, 0, 1},
    {"rms fp64 x", NS_KIND_RMS, 1, NS_FP64, NS_FP64, NS_ALGO_TWOPASS, NS_MODE_TRAIN, 0, 1},
    {"layer x fp64 in fp32", NS_KIND_LAYER, 1, NS_FP64, NS_FP32, NS_ALGO_TWOPASS, NS_MODE_TRAIN, 0,
     1},
    {"batch eval (running)", NS_KIND_BATCH, 1, NS_FP32, NS_FP32, NS_ALGO_TWOPASS, NS_MODE_EVAL, 0,
     0},
};

/* x's elements from an xorshift stream: uniform in [-2, width - 2) plus i mod period, so
 * the statistics differ. */
static void fill_xorshift(ns_tensor *x, uint64_t q, double width, size_t period) {
  for (size_t i = 0; i < x->n; i++) {
    q ^= q << 13, q ^= q >> 7, q ^= q << 17;
    ns_tensor_set(x, i, (double)(q >> 11) * 0x1p-53 * width - 2.0 + (double)(i % period));
  }
}

static int big_state(ns_state *s, const big_case *bc, char *err) {
  size_t shape[4] = {5, 8, 48, 40}; /* 76800 values: 5 chunks of the display scan */
  ns_tensor *x = ns_tensor_new(4, shape, bc->xdt, err);
  if (!x) return -1;
  fill_xorshift(x, 0x9e3779b97f4a7c15ULL, 6.0, 7);
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_X) | NS_FIELDBIT(NS_F_KIND) | NS_FIELDBIT(NS_F_GROUPS) |
          NS_FIELDBIT(NS_F_DTYPE) | NS_FIELDBIT(NS_F_ALGO) | NS_FIELDBIT(NS_F_MODE) |
          NS_FIELDBIT(NS_F_EPS_AT);
  p.v.x = x;
  p.v.kind = bc->kind;
  p.v.groups = bc->groups;
  p.v.dtype = bc->dt;
  p.v.algo = bc->algo;
  p.v.mode = bc->mode;
  p.v.eps_at = bc->eps_at_std ? NS_EPS_STD : NS_EPS_VAR;
  int rc = ns_state_apply(s, &p, err);
  ns_tensor_free(x);
  return rc;
}

static void big_edits(void) {
  char err[NS_ERRLEN];
  for (size_t b = 0; b < sizeof big_cases / sizeof *big_cases; b++) {
    const big_case *bc = &big_cases[b];
    ns_state s;
    ns_history h;
    ns_explore_cache c;
    ns_result r;
    memset(&r, 0, sizeof r);
    ns_explore_cache_init(&c);
    ns_history_init(&h, 100);
    if (ns_state_init(&s, err) != 0 || big_state(&s, bc, err) != 0) {
      tap_ok(0, "%s: state: %s", bc->name, err);
      ns_state_free(&s);
      continue;
    }
    tap_ok(ns_explore_update(&c, &s, &r, err) == 0, "%s: first update%s%s", bc->name,
           c.valid ? "" : ": ", c.valid ? "" : err);
    /* one cell (as the screen edits: through the history), a NaN and back, two cells of
       different statistics at once, one cell of the last chunk */
    struct {
      const char *what;
      size_t i[2];
      double v[2];
      int n;
    } ed[] = {{"one cell", {1234}, {7.5}, 1},
              {"a NaN", {40000}, {NAN}, 1},
              {"the NaN back", {40000}, {-3.25}, 1},
              {"two cells", {17, 61000}, {0.5, -9}, 2},
              {"the last cell", {76799}, {1e4}, 1}};
    for (size_t k = 0; k < sizeof ed / sizeof *ed; k++) {
      int rc = 0;
      for (int m = 0; m < ed[k].n && rc == 0; m++)
        rc = ns_edit_set_x(&s, &h, ed[k].i[m], ed[k].v[m], err);
      if (rc == 0) rc = ns_explore_update(&c, &s, &r, err);
      ns_result fresh;
      int fc = rc == 0 ? ns_explore_compute(&s, &fresh, err) : -1;
      const char *d = fc == 0 ? result_diff(&r, &fresh) : "update or fresh compute failed";
      tap_ok(d == NULL, "%s: %s: the result equals a fresh compute%s%s", bc->name, ed[k].what,
             d ? ": differs in " : "", d ? d : "");
      if (fc == 0) ns_result_free(&fresh);
      /* the statistics touched: one per cell (two cells of one statistic count once) */
      size_t want = 0;
      if (bc->restat && rc == 0) {
        size_t k0 = ns_norm_plan_stat_of(&r.norm.plan, ed[k].i[0]);
        want = ed[k].n == 2 && ns_norm_plan_stat_of(&r.norm.plan, ed[k].i[1]) != k0 ? 2 : 1;
      }
      tap_ok(c.last_restat == want, "%s: %s renormalized %zu statistic(s) alone (want %zu)",
             bc->name, ed[k].what, c.last_restat, want);
    }
    /* a NaN stops the closed form (its m2 not updated); a cell of another statistic changes
       meanwhile; the NaN goes: the m2 kept from before must not come back */
    {
      int rc = ns_edit_set_x(&s, &h, 5, NAN, err);
      if (rc == 0) rc = ns_explore_update(&c, &s, &r, err);
      if (rc == 0) rc = ns_edit_set_x(&s, &h, 70000, 2.5, err);
      if (rc == 0) rc = ns_explore_update(&c, &s, &r, err);
      if (rc == 0) rc = ns_edit_set_x(&s, &h, 5, 0.25, err);
      if (rc == 0) rc = ns_explore_update(&c, &s, &r, err);
      ns_result fresh;
      int fc = rc == 0 ? ns_explore_compute(&s, &fresh, err) : -1;
      const char *d = fc == 0 ? result_diff(&r, &fresh) : "update or fresh compute failed";
      tap_ok(d == NULL,
             "%s: a cell edited while x held a NaN: the result equals a fresh compute%s%s",
             bc->name, d ? ": differs in " : "", d ? d : "");
      if (fc == 0) ns_result_free(&fresh);
      /* the other mode (eval: no m2 kept up to date), an edit, and back */
      ns_state_patch mp;
      ns_patch_init(&mp);
      mp.set = NS_FIELDBIT(NS_F_MODE);
      mp.v.mode = bc->mode == NS_MODE_TRAIN ? NS_MODE_EVAL : NS_MODE_TRAIN;
      if (rc == 0) rc = ns_history_apply(&h, &s, &mp, err);
      if (rc == 0) rc = ns_explore_update(&c, &s, &r, err);
      if (rc == 0) rc = ns_edit_set_x(&s, &h, 33333, -4, err);
      if (rc == 0) rc = ns_explore_update(&c, &s, &r, err);
      mp.v.mode = bc->mode;
      if (rc == 0) rc = ns_history_apply(&h, &s, &mp, err);
      if (rc == 0) rc = ns_explore_update(&c, &s, &r, err);
      fc = rc == 0 ? ns_explore_compute(&s, &fresh, err) : -1;
      d = fc == 0 ? result_diff(&r, &fresh) : "update or fresh compute failed";
      tap_ok(d == NULL,
             "%s: a cell edited in the other mode, then back: equal to a fresh compute%s%s",
             bc->name, d ? ": differs in " : "", d ? d : "");
      if (fc == 0) ns_result_free(&fresh);
    }
    /* more cells than x's log holds between two updates: everything is recomputed */
    {
      int rc = 0;
      for (size_t m = 0; m < NS_STATE_XLOG + 4 && rc == 0; m++)
        rc = ns_edit_set_x(&s, &h, 3000 * m + 11, 0.125 * (double)m, err);
      if (rc == 0) rc = ns_explore_update(&c, &s, &r, err);
      ns_result fresh;
      int fc = rc == 0 ? ns_explore_compute(&s, &fresh, err) : -1;
      const char *d = fc == 0 ? result_diff(&r, &fresh) : "update or fresh compute failed";
      tap_ok(d == NULL && c.last_restat == 0,
             "%s: %d cells at once: recomputed whole (%zu alone), equal to a fresh compute%s%s",
             bc->name, NS_STATE_XLOG + 4, c.last_restat, d ? ": differs in " : "", d ? d : "");
      if (fc == 0) ns_result_free(&fresh);
    }
    /* undo takes x back (a patch into x in place): the result is the first one again */
    int rc = 0;
    while (ns_history_undo(&h, &s) == 1) {
    }
    if (rc == 0) rc = ns_explore_update(&c, &s, &r, err);
    ns_state first;
    ns_result fresh;
    int fc = ns_state_init(&first, err) == 0 && big_state(&first, bc, err) == 0
                 ? ns_explore_compute(&first, &fresh, err)
                 : -1;
    const char *d = rc == 0 && fc == 0 ? result_diff(&r, &fresh) : "undo or compute failed";
    tap_ok(d == NULL, "%s: undoing every edit gives the first result%s%s", bc->name,
           d ? ": differs in " : "", d ? d : "");
    if (fc == 0) ns_result_free(&fresh);
    ns_state_free(&first);
    /* redo puts the first edit back in place: the cache sees it (x's stamp changed) */
    rc = ns_history_redo(&h, &s) == 1 ? ns_explore_update(&c, &s, &r, err) : -1;
    fc = rc == 0 ? ns_explore_compute(&s, &fresh, err) : -1;
    d = fc == 0 ? result_diff(&r, &fresh) : "redo or compute failed";
    tap_ok(d == NULL && ns_tensor_get(s.x, 1234) == ns_round(7.5, bc->xdt),
           "%s: redo of the first edit: the result equals a fresh compute%s%s", bc->name,
           d ? ": differs in " : "", d ? d : "");
    if (fc == 0) ns_result_free(&fresh);
    ns_result_free(&r);
    ns_explore_cache_free(&c);
    ns_history_free(&h);
    ns_state_free(&s);
  }
}

/* Two states compare their x by its stamp when they share it: a copy is equal without
 * reading x, every change made through the state or the history gives a new stamp. */
static void stamps(void) {
  char err[NS_ERRLEN];
  ns_state a, b;
  ns_history h;
  ns_history_init(&h, 10);
  ns_state_init(&a, err);
  ns_state_copy(&b, &a, err);
  tap_ok(a.x_stamp != 0 && b.x_stamp == a.x_stamp && ns_state_diff(&a, &b) == 0,
         "stamps: a copy shares x's stamp and equals its original");
  ns_state c;
  ns_state_init(&c, err);
  tap_ok(c.x_stamp != a.x_stamp && ns_state_diff(&a, &c) == 0,
         "stamps: another state has another stamp, and its equal x is compared by value");
  ns_history_set_x(&h, &b, 0, 42, err);
  tap_ok(b.x_stamp != a.x_stamp && ns_state_diff(&a, &b) == NS_FIELDBIT(NS_F_X),
         "stamps: a cell written in place gives x a new stamp and a difference");
  ns_history_undo(&h, &b);
  tap_ok(b.x_stamp != a.x_stamp && ns_state_diff(&a, &b) == 0,
         "stamps: undo restamps x, which then equals the original by value");
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_X);
  p.v.x = a.x;
  uint64_t before = c.x_stamp;
  ns_state_apply(&c, &p, err);
  tap_ok(c.x_stamp != before, "stamps: x set by a patch (a new tensor) gets a new stamp");
  /* the log of in-place writes: what changed since each earlier stamp, while it reaches */
  uint64_t st[NS_STATE_XLOG + 6];
  st[0] = b.x_stamp;
  int ok = 1;
  for (int m = 1; m < NS_STATE_XLOG + 6; m++) {
    ns_history_set_x(&h, &b, (size_t)m % 4, 10.0 + m, err);
    st[m] = b.x_stamp;
  }
  for (int m = 0; m < NS_STATE_XLOG + 6; m++) {
    size_t at[NS_STATE_XLOG];
    int k = ns_state_x_changes(&b, st[m], at), last = NS_STATE_XLOG + 5, want = last - m;
    if (want > NS_STATE_XLOG) want = -1;
    ok &= k == want;
    for (int i = 0; i < k; i++) ok &= at[i] == (size_t)(m + 1 + i) % 4;
  }
  tap_ok(ok,
         "stamps: the log gives the cells written since each of the last %d stamps, in "
         "order, and -1 before them",
         NS_STATE_XLOG);
  size_t at[NS_STATE_XLOG];
  uint64_t was = b.x_stamp;
  ns_state_apply(&b, &p, err);
  tap_ok(ns_state_x_changes(&b, was, at) == -1 && ns_state_x_changes(&b, b.x_stamp, at) == 0,
         "stamps: after a new x the log reaches back to nothing before it");
  ns_history_free(&h);
  ns_state_free(&a);
  ns_state_free(&b);
  ns_state_free(&c);
}

/* Settles r as the screen does: the job the update left (the deferred checks) run and
 * applied. */
static void settle(ns_explore_cache *c, ns_result *r) {
  ns_jac_job *j = ns_explore_take_job(c);
  ns_jac_job_run(j);
  ns_jac_job_apply(j, c, r);
  ns_jac_job_free(j);
}

/* The statistics whose eigenvector checks r holds, in order (at most two). */
static int check_stats(const ns_result *r, size_t *st) {
  int n = 0;
  for (int i = 0; i < r->neigchk; i++)
    if (n == 0 || st[n - 1] != r->eigchk_stat[i]) st[n++] = r->eigchk_stat[i];
  return n;
}

/* A cell edit of an x loaded from a file, on the screen's path (checks deferred to the
 * job: statistics of 73728 values): x is written in place and forgets its source, only the
 * touched statistic is renormalized, the checks of a statistic the edit did not touch are
 * kept, and the result is a fresh compute's, bit for bit; undo brings the source back. */
static void file_edits(void) {
  char err[NS_ERRLEN];
  ns_state s;
  ns_history h;
  ns_explore_cache c;
  ns_result r;
  memset(&r, 0, sizeof r);
  ns_explore_cache_init(&c);
  c.defer_jac = 1;
  c.exec.threads = 2;
  ns_history_init(&h, 100);
  size_t shape[4] = {4, 8, 96, 96};
  ns_tensor *x = ns_state_init(&s, err) == 0 ? ns_tensor_new(4, shape, NS_FP32, err) : NULL;
  if (!x) {
    tap_ok(0, "file edits: state: %s", err);
    ns_state_free(&s);
    return;
  }
  fill_xorshift(x, 0x2545f4914f6cdd1dULL, 4.0, 5);
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_X) | NS_FIELDBIT(NS_F_DTYPE) | NS_FIELDBIT(NS_F_SOURCE);
  p.v.x = x;
  p.v.dtype = NS_FP32;
  p.v.source = "x.npy";
  int rc = ns_state_apply(&s, &p, err);
  ns_tensor_free(x);
  if (rc == 0) rc = ns_explore_update(&c, &s, &r, err);
  settle(&c, &r);
  tap_ok(rc == 0 && r.neigchk > 0, "file edits: first update, with its checks%s%s", rc ? ": " : "",
         rc ? err : "");
  /* cells of statistic 0 (always checked) and of the last one, one at a time */
  size_t cells[] = {5, 294000, 77};
  double vals[] = {40.5, -3.75, 0.125};
  for (size_t k = 0; k < sizeof cells / sizeof *cells && rc == 0; k++) {
    size_t before[2];
    int nbefore = check_stats(&r, before);
    const ns_tensor *xp = s.x;
    rc = ns_edit_set_x(&s, &h, cells[k], vals[k], err);
    tap_ok(rc == 0 && s.x == xp && s.source && s.source[0] == 0,
           "file edits: cell %zu is written in place and x forgets its file%s%s", cells[k],
           rc ? ": " : "", rc ? err : "");
    if (rc == 0) rc = ns_explore_update(&c, &s, &r, err);
    settle(&c, &r);
    size_t after[2], edited = ns_norm_plan_stat_of(&r.norm.plan, cells[k]);
    int nafter = check_stats(&r, after), want = 0;
    for (int a = 0; a < nafter; a++)
      for (int b = 0; b < nbefore; b++) want += after[a] == before[b] && after[a] != edited;
    tap_ok(rc == 0 && c.last_restat == 1 && c.last_chk_kept == want,
           "file edits: cell %zu renormalizes 1 statistic alone (%zu) and keeps %d of the "
           "checks (want %d)",
           cells[k], c.last_restat, c.last_chk_kept, want);
    ns_result fresh;
    int fc = rc == 0 ? ns_explore_compute(&s, &fresh, err) : -1;
    const char *d = fc == 0 ? result_diff(&r, &fresh) : "update or fresh compute failed";
    tap_ok(d == NULL, "file edits: cell %zu: the result equals a fresh compute%s%s", cells[k],
           d ? ": differs in " : "", d ? d : "");
    if (fc == 0) ns_result_free(&fresh);
  }
  /* undo every edit: the file's values and its name come back, x still in place */
  const ns_tensor *xp = s.x;
  while (ns_history_undo(&h, &s) == 1) {
  }
  if (rc == 0) rc = ns_explore_update(&c, &s, &r, err);
  settle(&c, &r);
  tap_ok(rc == 0 && s.x == xp && s.source && strcmp(s.source, "x.npy") == 0 && c.last_restat > 0,
         "file edits: undo brings back the source, in place (%zu statistics renormalized)",
         c.last_restat);
  ns_result fresh;
  int fc = rc == 0 ? ns_explore_compute(&s, &fresh, err) : -1;
  const char *d = fc == 0 ? result_diff(&r, &fresh) : "undo or fresh compute failed";
  tap_ok(d == NULL, "file edits: after undo the result equals a fresh compute%s%s",
         d ? ": differs in " : "", d ? d : "");
  if (fc == 0) ns_result_free(&fresh);
  ns_result_free(&r);
  ns_explore_cache_free(&c);
  ns_history_free(&h);
  ns_state_free(&s);
}

int main(void) {
  char err[NS_ERRLEN];
  stamps();
  ns_state s;
  if (ns_state_init(&s, err) != 0) {
    tap_ok(0, "init: %s", err);
    return tap_done();
  }
  ns_explore_cache c;
  ns_explore_cache_init(&c);
  ns_result r;
  memset(&r, 0, sizeof r);
  tap_ok(ns_explore_update(&c, &s, &r, err) == 0, "first update computes everything");
  tap_ok(c.last_parts == NS_PART_ALL, "  and says it recomputed every part");
  tap_ok(ns_explore_update(&c, &s, &r, err) == 0 && c.last_parts == 0,
         "an unchanged state recomputes nothing");
  size_t nsteps = sizeof steps / sizeof *steps;
  for (size_t i = 0; i < nsteps; i++) {
    int rc = steps[i].apply(&s, err);
    tap_ok(rc == 0, "%s applies%s%s", steps[i].name, rc ? ": " : "", rc ? err : "");
    const ns_tensor *y_before = r.norm.y;
    ns_tensor *y_copy = y_before ? ns_tensor_copy(y_before) : NULL;
    rc = ns_explore_update(&c, &s, &r, err);
    tap_ok(rc == 0, "  update after %s%s%s", steps[i].name, rc ? ": " : "", rc ? err : "");
    ns_result fresh;
    rc = ns_explore_compute(&s, &fresh, err);
    const char *d = rc == 0 ? result_diff(&r, &fresh) : "fresh compute failed";
    tap_ok(d == NULL, "  cached result equals a fresh compute after %s%s%s", steps[i].name,
           d ? ": differs in " : "", d ? d : "");
    /* a step that must not renormalize keeps the very same y tensor (not a recomputed
     * copy); one that must, replaces it */
    int renorm = (c.last_parts & NS_PART_OUTPUT) != 0;
    if (!steps[i].renormalizes)
      tap_ok(!renorm && r.norm.y == y_before && same_t(r.norm.y, y_copy),
             "  %s does not renormalize x", steps[i].name);
    else
      tap_ok(renorm, "  %s renormalizes x", steps[i].name);
    ns_tensor_free(y_copy);
    ns_result_free(&fresh);
  }
  tap_ok(ns_explore_update(&c, &s, &r, err) == 0 && c.last_parts == 0,
         "after the sequence, an unchanged state recomputes nothing");

  /* an error empties the cache and frees the result; the next call computes all again */
  ns_explore_cache_free(&c);
  ns_result_free(&r);
  ns_explore_cache_init(&c);
  memset(&r, 0, sizeof r);
  ns_state_free(&s);
  ns_state_init(&s, err);
  tap_ok(ns_explore_update(&c, &s, &r, err) == 0, "fresh cache on the default state");
  ns_state broken;
  ns_state_copy(&broken, &s, err);
  broken.kind = NS_KIND_INSTANCE; /* undefined for a vector: state apply refuses it */
  int rc = ns_explore_update(&c, &broken, &r, err);
  tap_ok(rc != 0 && !c.valid && r.norm.y == NULL && r.bn == NULL,
         "an update that fails empties cache and result (%s)", rc ? err : "no error");
  tap_ok(ns_explore_update(&c, &s, &r, err) == 0 && c.last_parts == NS_PART_ALL && r.norm.y,
         "the next update computes everything again");
  ns_result fresh;
  ns_explore_compute(&s, &fresh, err);
  const char *d = result_diff(&r, &fresh);
  tap_ok(d == NULL, "  and equals a fresh compute%s%s", d ? ": differs in " : "", d ? d : "");
  ns_result_free(&fresh);
  ns_state_free(&broken);
  ns_result_free(&r);
  ns_explore_cache_free(&c);
  ns_state_free(&s);
  big_edits();
  file_edits();
  return tap_done();
}
