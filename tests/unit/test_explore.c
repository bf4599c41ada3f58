/* test_explore.c: the explorer state (apply is atomic), undo/redo, and the result record
 * checked against hand-computed values and claims.tsv. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "explore/explore.h"
#include "explore/panelfig.h"
#include "tap.h"

static ns_tensor *vec(const double *v, size_t n) {
  size_t shape[1] = {n};
  return ns_tensor_from(1, shape, NS_FP64, v, NULL);
}

static ns_tensor *mat(const double *v, size_t r, size_t c) {
  size_t shape[2] = {r, c};
  return ns_tensor_from(2, shape, NS_FP64, v, NULL);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void test_defaults(void) {
  char err[NS_ERRLEN];
  ns_state s;
  tap_ok(ns_state_init(&s, err) == 0, "init");
  tap_ok(s.x->n == 4 && ns_tensor_get(s.x, 0) == -2 && ns_tensor_get(s.x, 3) == 2,
         "default x = (-2,-1,1,2)");
  tap_ok(s.kind == NS_KIND_LAYER && s.eps == 1e-5 && s.eps_at == NS_EPS_VAR,
         "default layer norm, eps 1e-5 inside the sqrt");
  ns_state c;
  tap_ok(ns_state_copy(&c, &s, err) == 0 && ns_state_equal(&c, &s), "copy is equal");
  tap_ok(c.x == s.x && ns_tensor_shared(s.x), "the copy shares x (copy-on-write, state.h)");
  tap_ok(ns_tensor_unshare(&c.x) == 0 && c.x != s.x && !ns_tensor_shared(s.x),
         "  unshared before a write in place: a copy of its own");
  ns_tensor_set(c.x, 2, 7);
  ns_state_stamp_x(&c); /* written in place: the state is told (state.h, x_stamp) */
  tap_ok(!ns_state_equal(&c, &s) && ns_tensor_get(s.x, 2) == 1, "copy is deep");
  ns_state_free(&c);
  ns_state_free(&s);
  ns_state_free(&s); /* safe twice */
}

static void test_apply_atomic(void) {
  char err[NS_ERRLEN];
  ns_state s, before;
  ns_state_init(&s, err);
  ns_state_copy(&before, &s, err);
  ns_state_patch p;

  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_EPS);
  p.v.eps = -1;
  tap_ok(ns_state_apply(&s, &p, err) == -1 && strncmp(err, "eps:", 4) == 0, "eps -1 refused: %s",
         err);
  tap_ok(ns_state_equal(&s, &before), "  state unchanged");

  /* good eps and x, bad kind for a vector: nothing changes, the message blames kind */
  double xv[3] = {1, 2, 4};
  ns_tensor *x3 = vec(xv, 3);
  ns_patch_init(&p);
  p.set = (NS_FIELDBIT(NS_F_EPS)) | (NS_FIELDBIT(NS_F_KIND)) | (NS_FIELDBIT(NS_F_X));
  p.v.eps = 0.5;
  p.v.kind = NS_KIND_INSTANCE;
  p.v.x = x3;
  tap_ok(ns_state_apply(&s, &p, err) == -1 && strncmp(err, "kind:", 5) == 0,
         "instance norm of a vector refused: %s", err);
  tap_ok(ns_state_equal(&s, &before), "  state unchanged (eps and x not half-applied)");

  /* gamma of the wrong length */
  double g[3] = {1, 2, 3};
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_GAMMA);
  p.v.gamma = g;
  p.v.ngamma = 3;
  tap_ok(ns_state_apply(&s, &p, err) == -1 && strncmp(err, "gamma:", 6) == 0,
         "gamma of 3 for 4 elements refused: %s", err);
  /* ... but fine together with a 3-element x */
  p.set |= NS_FIELDBIT(NS_F_X);
  p.v.x = x3;
  tap_ok(ns_state_apply(&s, &p, err) == 0 && s.x->n == 3 && s.ngamma == 3,
         "gamma of 3 with x of 3 accepted");
  ns_tensor_free(x3);
  tap_ok(ns_tensor_get(s.x, 2) == 4, "  x copied, patch's tensor can be freed");
  ns_state mid;
  ns_state_copy(&mid, &s, err);
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_X);
  p.v.x = before.x; /* 4 elements again, gamma still has 3 */
  tap_ok(ns_state_apply(&s, &p, err) == -1 && strncmp(err, "x: gamma has 3", 14) == 0,
         "x that no longer fits gamma refused: %s", err);
  tap_ok(ns_state_equal(&s, &mid), "  state unchanged");
  /* a whole-state patch restores any state exactly */
  ns_patch_from_state(&p, &before);
  tap_ok(ns_state_apply(&s, &p, err) == 0 && ns_state_equal(&s, &before),
         "whole-state patch restores the default state");
  ns_patch_from_state(&p, &mid);
  tap_ok(ns_state_apply(&s, &p, err) == 0 && ns_state_equal(&s, &mid),
         "  and back to the edited one");
  ns_state_free(&mid);

  ns_state_free(&s);
  ns_state_copy(&s, &before, err);
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_COMPANION);
  p.v.companion = 1;
  tap_ok(ns_state_apply(&s, &p, err) == -1 && strncmp(err, "companion:", 10) == 0,
         "companion == target refused: %s", err);
  p.v.companion = 5;
  tap_ok(ns_state_apply(&s, &p, err) == -1 && strstr(err, "outside"),
         "companion outside the batch refused: %s", err);
  ns_patch_init(&p);
  p.set = (NS_FIELDBIT(NS_F_MOMENTUM)) | (NS_FIELDBIT(NS_F_SHIFT));
  p.v.momentum = 1.5;
  p.v.shift = 3;
  tap_ok(ns_state_apply(&s, &p, err) == -1 && strncmp(err, "momentum:", 9) == 0 && s.shift == 10,
         "momentum 1.5 refused, shift untouched: %s", err);
  p.v.momentum = 0;
  p.v.cumulative = 1;
  tap_ok(ns_state_apply(&s, &p, err) == 0 && s.cumulative == 1 && s.momentum == 0.1 && s.shift == 3,
         "momentum=false: cumulative, momentum value kept");
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_AXES);
  p.v.axes = 2; /* axis 2 of a vector */
  tap_ok(ns_state_apply(&s, &p, err) == -1 && strncmp(err, "axes:", 5) == 0,
         "axis 2 of a vector refused: %s", err);
  double bad[4] = {0, NAN, 2, 1};
  ns_tensor *bm = mat(bad, 2, 2);
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_BATCH);
  p.v.batch = bm;
  tap_ok(ns_state_apply(&s, &p, err) == -1 && strncmp(err, "batch:", 6) == 0,
         "batch with NaN refused: %s", err);
  ns_tensor_free(bm);
  ns_state_free(&s);
  ns_state_free(&before);
}

static void test_history(void) {
  char err[NS_ERRLEN];
  ns_state s;
  ns_history h;
  ns_state_init(&s, err);
  ns_history_init(&h, 3);
  tap_ok(ns_edit_eps_decade(&s, &h, +1, err) == 0 && s.eps == 1e-4, "eps decade up: 1e-4");
  tap_ok(ns_edit_eps_decade(&s, &h, +1, err) == 0 && s.eps == 1e-3, "eps decade up: 1e-3");
  tap_ok(ns_edit_eps_decade(&s, &h, -1, err) == 0 && s.eps == 1e-4, "eps decade down: 1e-4");
  tap_ok(ns_history_undo(&h, &s) == 1 && s.eps == 1e-3, "undo -> 1e-3");
  tap_ok(ns_history_undo(&h, &s) == 1 && s.eps == 1e-4, "undo -> 1e-4");
  tap_ok(ns_history_undo(&h, &s) == 1 && s.eps == 1e-5, "undo -> 1e-5");
  tap_ok(ns_history_undo(&h, &s) == 0 && s.eps == 1e-5, "nothing more to undo");
  tap_ok(ns_history_redo(&h, &s) == 1 && s.eps == 1e-4, "redo -> 1e-4");
  /* a failed change records nothing; a change that changes nothing records nothing */
  size_t nu = h.nundo;
  tap_ok(ns_edit_set_target(&s, &h, 2, err) == -1 && h.nundo == nu,
         "failed change is not recorded: %s", err);
  tap_ok(ns_edit_set_eps(&s, &h, s.eps, err) == 0 && h.nundo == nu,
         "a change to the same value is not an undo step");
  /* a new change clears redo */
  size_t nr = h.nredo;
  ns_history_undo(&h, &s);
  tap_ok(h.nredo == nr + 1, "undo adds a redo step");
  ns_edit_toggle_eps_at(&s, &h, err);
  tap_ok(h.nredo == 0 && s.eps_at == NS_EPS_STD, "new change clears redo");
  /* depth bound */
  for (int i = 0; i < 10; i++) ns_edit_toggle_ddof(&s, &h, err);
  tap_ok(h.nundo == 3, "undo depth bounded at 3 (got %zu)", h.nundo);
  /* memory bound: room for about two copies of the state */
  h.max_bytes = 2 * ns_state_bytes(&s) + 1;
  for (int i = 0; i < 4; i++) ns_edit_toggle_ddof(&s, &h, err);
  tap_ok(h.nundo == 2, "undo steps bounded by memory (got %zu)", h.nundo);
  h.max_bytes = 1;
  ns_edit_toggle_ddof(&s, &h, err);
  tap_ok(h.nundo == 1, "  at least one step is kept (got %zu)", h.nundo);
  h.max_bytes = NS_HISTORY_MAX_BYTES;
  /* key helpers */
  ns_state_free(&s);
  ns_state_init(&s, err);
  tap_ok(ns_edit_cycle_kind(&s, &h, +1, err) == 0 && s.kind == NS_KIND_RMS, "kind -> rms");
  tap_ok(ns_edit_cycle_kind(&s, &h, +1, err) == 0 && s.kind == NS_KIND_BATCH, "kind -> batch");
  tap_ok(ns_edit_cycle_kind(&s, &h, +1, err) == 0 && s.kind == NS_KIND_LAYER,
         "kind -> layer (instance/group skipped for a vector)");
  tap_ok(ns_edit_cycle_kind(&s, &h, -1, err) == 0 && s.kind == NS_KIND_BATCH, "kind back -> batch");
  tap_ok(ns_edit_x_insert(&s, &h, 2, 4, err) == 0 && s.x->n == 5 && ns_tensor_get(s.x, 4) == 0,
         "append an element to x");
  tap_ok(ns_edit_x_remove(&s, &h, 2, 0, err) == 0 && s.x->n == 4 && ns_tensor_get(s.x, 0) == -1,
         "remove x's first element");
  tap_ok(ns_edit_set_x(&s, &h, 0, 5, err) == 0 && ns_tensor_get(s.x, 0) == 5, "edit a cell");
  tap_ok(ns_edit_x_insert(&s, &h, 1, 1, err) == 0 && s.x->rank == 2 && s.x->shape[0] == 2 &&
             s.x->shape[1] == 4 && ns_tensor_get(s.x, 0) == 5 && ns_tensor_get(s.x, 4) == 0,
         "add a row to the vector: a 2 x 4 matrix");
  tap_ok(ns_edit_x_remove(&s, &h, 1, 0, err) == 0 && s.x->rank == 2 && s.x->shape[0] == 1 &&
             ns_tensor_get(s.x, 0) == 0,
         "remove its first row: 1 x 4");
  tap_ok(ns_edit_x_remove(&s, &h, 1, 0, err) == -1, "cannot remove the last row: %s", err);
  ns_history_undo(&h, &s);
  ns_history_undo(&h, &s);
  tap_ok(ns_edit_batch_insert(&s, &h, 1, 0, err) == 0 && s.batch->shape[0] == 3 && s.target == 2 &&
             s.companion == 3,
         "insert a batch row before the target: target/companion follow");
  tap_ok(ns_edit_batch_remove(&s, &h, 1, 1, err) == -1, "cannot remove the target row: %s", err);
  tap_ok(ns_edit_batch_insert(&s, &h, 2, 2, err) == 0 && s.batch->shape[1] == 3 &&
             s.baseline[0] == 2 && s.baseline[2] == 0,
         "add a batch column: baseline follows the companion row");
  ns_history_free(&h);
  ns_state_free(&s);
}

static void test_compute_default(void) {
  char err[NS_ERRLEN];
  ns_state s;
  ns_result r;
  ns_state_init(&s, err);
  int rc = ns_explore_compute(&s, &r, err);
  tap_ok(rc == 0, "compute default: %s", rc ? err : "ok");
  if (rc != 0) {
    ns_state_free(&s);
    return;
  }
  /* hand values: mean 0, var 2.5, y = x / sqrt(2.5 + 1e-5) */
  double sd = sqrt(2.5 + 1e-5);
  tap_close(r.x_mean, 0, 0, "input mean 0");
  tap_close(r.x_std, sqrt(2.5), 1e-15, "input std sqrt(2.5)");
  tap_close(r.x_rms, sqrt(2.5), 1e-15, "input rms sqrt(2.5)");
  tap_close(ns_tensor_get(r.norm.y, 0), -2 / sd, 1e-15, "y1 = -2/sqrt(2.50001)");
  tap_close(ns_tensor_get(r.norm.y, 2), 1 / sd, 1e-15, "y3 = 1/sqrt(2.50001)");
  tap_close(r.shift_dev, 0, 1e-12, "shift probe: layer norm ignores x + 10");
  /* y(2x)_1 = -4/sqrt(10 + eps) */
  tap_close(r.scale_dev, fabs(-4 / sqrt(10.00001) + 2 / sd), 1e-15,
            "scale probe: eps makes y(2x) differ slightly");
  tap_ok(r.jac_done, "Jacobian computed");
  if (r.jac_done) {
    /* closed form: 0 (ones), eps/s^3 (radial), 1/s x2 (bulk) */
    double want[3] = {0, 1e-5 / (sd * sd * sd), 1 / sd};
    int mult[3] = {1, 1, 2};
    tap_ok(r.nclosed == 3, "three closed-form entries (got %d)", r.nclosed);
    for (int i = 0; i < r.nclosed && i < 3; i++) {
      tap_close(r.spec_closed[i].value, want[i], 1e-15, "closed-form eigenvalue");
      tap_ok(r.spec_closed[i].mult == mult[i], "  multiplicity %d", mult[i]);
    }
    tap_ok(r.eig_disagree < 1e-8, "closed/LAPACK/FD agree: %g", r.eig_disagree);
    tap_ok(r.jac_fd_diff < 1e-8, "analytic vs FD Jacobian: %g", r.jac_fd_diff);
    tap_ok(r.rank == 3, "rank 3 with eps > 0 (got %d)", r.rank);
    tap_close(r.rank_tol, 1e-10 / sd, 1e-20, "rank tolerance 1e-10 * smax");
    tap_ok(r.symmetric, "layer-norm Jacobian symmetric");
  }
  /* r6: batch column 1 = (0, 2): target BN output -2/sqrt(4 + 4 eps) = -0.999995 */
  /* -b/sqrt(b^2 + 4 eps) with b = 2 is -0.9999950000375; claims.tsv rounds it to -0.999995 */
  tap_close(r.target_now[0], -2 / sqrt(4 + 4e-5), 1e-15, "r6: -b/sqrt(b^2+4eps)");
  tap_close(r.target_now[0], -0.999995, 1e-10, "r6-companion-first (claims.tsv value)");
  tap_ok(r.nflip == 0, "no flip at the baseline");
  /* claims c15-*: seed 316832669, 8 x 32 from normal(4,2), exact merge */
  tap_close(r.est[2].mean[0], 4.096165652, 5e-6, "c15-running-mean (exact merge)");
  tap_close(r.est[2].var[0], 3.80065253, 5e-6, "c15-running-var");
  tap_close(r.eval_mean[0], 3.765887465, 5e-6, "c15-eval-mean");
  tap_close(r.eval_var[0], 3.062609751, 5e-6, "c15-eval-var");
  tap_close(r.est[2].gap, 0.4480854174, 5e-6, "c15-max-discrepancy");
  tap_ok(r.est[1].gap < r.est[0].gap, "cumulative closer than momentum 0.1 after 8 batches");
  tap_close(r.var_ref, 2.5, 0, "precision: fp64 variance 2.5");
  tap_close(r.var_digits[NS_ALGO_TWOPASS], NS_EXPLORE_DIGITS_CAP, 0, "  exact: digits capped");
  ns_result_free(&r);

  double t0 = now_ms();
  for (int i = 0; i < 20; i++) {
    ns_explore_compute(&s, &r, err);
    ns_result_free(&r);
  }
  double ms = (now_ms() - t0) / 20;
  tap_ok(ms < 16, "default example computes in %.3f ms (< 16 ms)", ms);
  ns_state_free(&s);
}

static void test_compute_claims(void) {
  char err[NS_ERRLEN];
  ns_state s;
  ns_result r;
  ns_history h;
  ns_history_init(&h, 16);
  ns_state_init(&s, err);

  /* r6: change the companion's 2 to -2 */
  tap_ok(ns_edit_set_batch(&s, &h, 1, 0, -2, err) == 0, "companion -> -2");
  if (ns_explore_compute(&s, &r, err) == 0) {
    tap_close(r.target_now[0], 2 / sqrt(4 + 4e-5), 1e-15, "r6: +b/sqrt(b^2+4eps)");
    tap_close(r.target_now[0], 0.999995, 1e-10, "r6-companion-flipped (claims.tsv value)");
    tap_close(r.target_base[0], -2 / sqrt(4 + 4e-5), 1e-15, "  baseline still -0.999995");
    tap_ok(r.flip[0] == 1 && r.flip[1] == 0 && r.nflip == 1, "sign flip flagged on feature 1");
    ns_result_free(&r);
  } else {
    tap_ok(0, "compute: %s", err);
  }

  /* c15-rank-centered / c15-rank-rms / c15-rms-shift-maxdiff: eps = 0 */
  ns_edit_set_eps(&s, &h, 0, err);
  if (ns_explore_compute(&s, &r, err) == 0) {
    tap_ok(r.rank == 2, "c15-rank-centered: 2 (got %d)", r.rank);
    tap_close(r.shift_dev, 0, 1e-12, "c15-centered-shift-dev");
    ns_result_free(&r);
  }
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_KIND);
  p.v.kind = NS_KIND_RMS;
  ns_history_apply(&h, &s, &p, err);
  if (ns_explore_compute(&s, &r, err) == 0) {
    tap_ok(r.rank == 3, "c15-rank-rms: 3 (got %d)", r.rank);
    tap_close(r.shift_dev, 2.055094741, 5e-7, "c15-rms-shift-maxdiff");
    ns_result_free(&r);
  }

  /* c15-fp32-*: x = (9998, 9999, 10001, 10002) in fp32 */
  double xv[4] = {9998, 9999, 10001, 10002};
  ns_tensor *x = vec(xv, 4);
  ns_patch_init(&p);
  p.set = (NS_FIELDBIT(NS_F_X)) | (NS_FIELDBIT(NS_F_DTYPE)) | (NS_FIELDBIT(NS_F_ACC));
  p.v.x = x;
  p.v.dtype = NS_FP32;
  p.v.acc = NS_FP32;
  tap_ok(ns_history_apply(&h, &s, &p, err) == 0, "fp32 x");
  ns_tensor_free(x);
  if (ns_explore_compute(&s, &r, err) == 0) {
    tap_close(r.var_algo[NS_ALGO_RAW], 0, 0, "c15-fp32-raw-var");
    tap_close(r.var_algo[NS_ALGO_TWOPASS], 2.5, 0, "c15-fp32-centered-var");
    tap_close(r.var_digits[NS_ALGO_RAW], 0, 0, "  raw: no correct digit");
    tap_ok(r.var_lost[NS_ALGO_RAW] > 6, "  raw: all fp32 digits lost (%.2f)",
           r.var_lost[NS_ALGO_RAW]);
    ns_result_free(&r);
  }

  /* a big input skips the Jacobian with a reason */
  size_t big = 100000;
  double *bv = malloc(big * sizeof *bv);
  for (size_t i = 0; i < big; i++) bv[i] = (double)(i % 17) - 8;
  x = vec(bv, big);
  free(bv);
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_X);
  p.v.x = x;
  ns_history_apply(&h, &s, &p, err);
  ns_tensor_free(x);
  double t0 = now_ms();
  if (ns_explore_compute(&s, &r, err) == 0) {
    tap_ok(!r.jac_done && strstr(r.jac_skip, "100000 elements") && strstr(r.jac_skip, "limit 1024"),
           "big x: %s", r.jac_skip);
    int zeros = 0, total = 0;
    for (int i = 0; i < r.nclosed; i++) {
      total += r.spec_closed[i].mult;
      if (r.spec_closed[i].value == 0) zeros += r.spec_closed[i].mult;
    }
    tap_ok(r.nclosed >= 2 && total == (int)big && r.neigchk == r.nclosed && r.eigchk_ok &&
               r.closed_rank == (int)big - zeros,
           "big x: closed form (%d entries, rank %d) checked along %d eigenvectors: %s", r.nclosed,
           r.closed_rank, r.neigchk, r.eigchk_ok ? "ok" : "FAILED");
    tap_ok(r.norm.y->n == big, "  output still computed");
    ns_result_free(&r);
  } else {
    tap_ok(0, "compute big: %s", err);
  }
  tap_diag("100000-element compute: %.1f ms", now_ms() - t0);

  /* undo all the way back to the default state */
  while (ns_history_undo(&h, &s)) {
  }
  ns_state d;
  ns_state_init(&d, err);
  tap_ok(ns_state_equal(&s, &d), "undo everything: back to the default state");
  ns_state_free(&d);
  ns_history_free(&h);
  ns_state_free(&s);
}

static void test_eval_mode(void) {
  char err[NS_ERRLEN];
  ns_state s;
  ns_result r;
  ns_state_init(&s, err);
  /* batch norm of a single feature vector, eval mode: the train panel's running stats */
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = (NS_FIELDBIT(NS_F_KIND)) | (NS_FIELDBIT(NS_F_MODE));
  p.v.kind = NS_KIND_BATCH;
  p.v.mode = NS_MODE_EVAL;
  tap_ok(ns_state_apply(&s, &p, err) == 0, "batch kind, eval mode");
  if (ns_explore_compute(&s, &r, err) == 0) {
    double m = r.est[0].mean[0], v = r.est[0].var[0];
    tap_close(ns_tensor_get(r.norm.y, 0), (-2 - m) / sqrt(v + 1e-5), 1e-12,
              "eval output uses the momentum running statistics");
    tap_ok(r.eval_note != NULL && strstr(r.eval_note, "train panel (momentum)"), "eval note: %s",
           r.eval_note ? r.eval_note : "(none)");
    ns_result_free(&r);
  } else {
    tap_ok(0, "compute: %s", err);
  }
  /* layer norm with explicit axes that include axis 1 reduces over the batch, so it is a
   * batch kind too (ns_spec_is_batch): eval mode reads running statistics for it as well
   * (here fresh ones: 2 columns vs 1 train feature, y = x / sqrt(1 + eps)) */
  double m6[6] = {1, 2, 3, 4, 5, 7};
  ns_tensor *x = mat(m6, 3, 2);
  ns_patch_init(&p);
  p.set = (NS_FIELDBIT(NS_F_X)) | (NS_FIELDBIT(NS_F_KIND)) | (NS_FIELDBIT(NS_F_AXES));
  p.v.x = x;
  p.v.kind = NS_KIND_LAYER;
  p.v.axes = 1u; /* axis 1 */
  tap_ok(ns_state_apply(&s, &p, err) == 0, "layer kind over axis 1 of a 3 x 2 x, eval mode");
  ns_tensor_free(x);
  if (ns_explore_compute(&s, &r, err) == 0) {
    tap_close(ns_tensor_get(r.norm.y, 5), 7 / sqrt(1 + 1e-5), 1e-15,
              "  eval uses (fresh) running statistics");
    tap_ok(r.eval_note && strstr(r.eval_note, "fresh"), "  eval note: %s",
           r.eval_note ? r.eval_note : "(none)");
    ns_result_free(&r);
  } else {
    tap_ok(0, "  compute: %s", err);
  }
  ns_state_free(&s);
}

/* Degenerate and non-finite inputs never fail the whole computation. */
static void test_degenerate(void) {
  char err[NS_ERRLEN];
  ns_state s;
  ns_result r;
  ns_state_init(&s, err);
  double c[4] = {3, 3, 3, 3}, nanv[4] = {1, NAN, 2, INFINITY};
  ns_tensor *x = vec(c, 4);
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = (NS_FIELDBIT(NS_F_X)) | (NS_FIELDBIT(NS_F_EPS));
  p.v.x = x;
  p.v.eps = 0;
  tap_ok(ns_state_apply(&s, &p, err) == 0, "constant x with eps 0 accepted");
  ns_tensor_free(x);
  tap_ok(ns_explore_compute(&s, &r, err) == 0, "constant x, eps 0: computes (%s)",
         r.jac_done ? "Jacobian done" : r.jac_skip);
  tap_ok(r.norm.ndegenerate == 1, "  the statistic is flagged degenerate");
  tap_diag("jacobian: %s; var digits %g %g %g", r.jac_done ? "done" : r.jac_skip, r.var_digits[0],
           r.var_digits[1], r.var_digits[2]);
  ns_result_free(&r);
  x = vec(nanv, 4);
  p.v.x = x;
  p.v.eps = 1e-5;
  tap_ok(ns_state_apply(&s, &p, err) == 0, "x with NaN and Inf accepted");
  ns_tensor_free(x);
  tap_ok(ns_explore_compute(&s, &r, err) == 0, "NaN/Inf x computes (%s)",
         r.jac_done ? "Jacobian done" : r.jac_skip);
  ns_result_free(&r);
  /* matrix x with batch kind in eval mode: running statistics of another feature count */
  double m[6] = {1, 2, 3, 4, 5, 7};
  x = mat(m, 3, 2);
  ns_patch_init(&p);
  p.set = (NS_FIELDBIT(NS_F_X)) | (NS_FIELDBIT(NS_F_KIND)) | (NS_FIELDBIT(NS_F_MODE));
  p.v.x = x;
  p.v.kind = NS_KIND_BATCH;
  p.v.mode = NS_MODE_EVAL;
  tap_ok(ns_state_apply(&s, &p, err) == 0, "3 x 2 batch norm in eval mode");
  ns_tensor_free(x);
  if (ns_explore_compute(&s, &r, err) == 0) {
    /* fresh running statistics: y = (x - 0) / sqrt(1 + eps) */
    tap_close(ns_tensor_get(r.norm.y, 5), 7 / sqrt(1 + 1e-5), 1e-15,
              "eval with fresh statistics (2 features vs 1 in the train panel)");
    ns_result_free(&r);
  } else {
    tap_ok(0, "compute: %s", err);
  }
  /* the train panel on the user's batch */
  ns_patch_init(&p);
  p.set = (NS_FIELDBIT(NS_F_TRAIN_SOURCE)) | (NS_FIELDBIT(NS_F_MODE));
  p.v.train_source = NS_SOURCE_RESAMPLE;
  p.v.mode = NS_MODE_TRAIN;
  tap_ok(ns_state_apply(&s, &p, err) == 0, "train source: rows resampled from the batch matrix");
  if (ns_explore_compute(&s, &r, err) == 0) {
    tap_ok(r.train_d == 2 && r.eval_n == 2 && r.train_n == 256, "  2 features, eval = batch rows");
    /* eval batch = the default batch ((0,1),(2,-1)): own statistics mean (1, 0) */
    tap_close(r.eval_mean[0], 1, 0, "  eval mean of feature 1");
    tap_close(r.eval_var[1], 1, 0, "  eval var of feature 2");
    tap_ok(isnan(r.shift_gap) && isnan(r.est_gap[0]), "  no exact distribution: no decomposition");
    ns_result_free(&r);
  } else {
    tap_ok(0, "compute: %s", err);
  }
  /* one training step on the batch matrix as it is: a fresh module (PyTorch: mean 0, var 1,
   * momentum 0.1) after one update, evaluated on the same batch */
  ns_patch_init(&p);
  ns_patch_set(&p, NS_F_TRAIN_SOURCE);
  p.v.train_source = NS_SOURCE_BATCH;
  tap_ok(ns_state_apply(&s, &p, err) == 0, "train source: one step on the batch matrix");
  if (ns_explore_compute(&s, &r, err) == 0) {
    tap_ok(r.train_n == 2 && r.eval_n == 2, "  one step of the 2 rows");
    /* feature 1 = (0, 2): batch mean 1, unbiased var 2 -> running 0.1, 0.9 + 0.2 = 1.1 */
    tap_close(r.est[0].mean[0], 0.1, 1e-15, "  running mean 0.9*0 + 0.1*1");
    tap_close(r.est[0].var[0], 1.1, 1e-15, "  running var 0.9*1 + 0.1*2 (unbiased)");
    /* BN in train mode gives (-1, 1) on feature 1; eval mode (x - 0.1)/sqrt(1.1 + eps) */
    double want = fabs((0 - 0.1) / sqrt(1.1 + 1e-5) - (-1 / sqrt(1 + 1e-5)));
    double w2 = fabs((2 - 0.1) / sqrt(1.1 + 1e-5) - (1 / sqrt(1 + 1e-5)));
    if (w2 > want) want = w2;
    tap_ok(r.est[0].gap > 0.5, "  train and eval outputs differ (gap %g)", r.est[0].gap);
    tap_ok(r.est[0].gap >= want - 1e-12, "  gap at least the feature-1 difference %g", want);
    ns_result_free(&r);
  } else {
    tap_ok(0, "compute: %s", err);
  }
  ns_state_free(&s);
}

/* Undo steps keep what changed, not copies of x: hundreds of steps on a large x fit in a
 * little memory, and undoing all of them gives back the starting state bit for bit. */
static void test_history_compact(void) {
  char err[NS_ERRLEN];
  ns_state s, start;
  ns_state_init(&s, err);
  size_t shape[2] = {1024, 1024};
  ns_tensor *x = ns_tensor_new(2, shape, NS_FP32, err);
  for (size_t i = 0; i < x->n; i++) ns_tensor_set(x, i, (double)(i % 97) - 48.5);
  ns_state_patch p;
  ns_patch_init(&p);
  ns_patch_set(&p, NS_F_X);
  p.v.x = x;
  tap_ok(ns_state_apply(&s, &p, err) == 0, "a 1M-element fp32 x");
  ns_tensor_free(x);
  ns_state_copy(&start, &s, err);
  ns_history h;
  ns_history_init(&h, 1000);
  int ok = 1;
  for (int k = 0; k < 150; k++) ok &= ns_edit_eps_decade(&s, &h, k % 2 ? -1 : 1, err) == 0;
  for (int k = 0; k < 50; k++) ok &= ns_edit_set_x(&s, &h, (size_t)k * 1000, 1e3 + k, err) == 0;
  tap_ok(ok && h.nundo == 200, "200 changes, 200 undo steps (%zu)", h.nundo);
  size_t bytes = ns_history_bytes(&h);
  tap_ok(bytes < ((size_t)1 << 20), "they hold %zu bytes, not 200 copies of a 4 MB x", bytes);
  int n = 0;
  while (ns_history_undo(&h, &s)) n++;
  tap_ok(n == 200 && ns_state_equal(&s, &start), "undoing all 200 gives the start back (%d)", n);
  n = 0;
  while (ns_history_redo(&h, &s)) n++;
  tap_ok(n == 200 && ns_tensor_get(s.x, 49000) == 1049 && s.eps == 1e-5,
         "redoing all 200 gives the end back");
  size_t before = h.nundo;
  tap_ok(ns_edit_set_x(&s, &h, 49000, 1049, err) == 0 && h.nundo == before,
         "a cell set to the value it holds is no undo step");
  tap_ok(ns_edit_set_x(&s, &h, 7, 1.0 / 3, err) == 0 && h.nundo == before + 1 &&
             ns_tensor_get(s.x, 7) == (double)(float)(1.0 / 3),
         "a cell edit rounds to x's dtype (fp32)");
  /* x still from a file: the edit goes through the patch route, which forgets the source */
  free(s.source);
  s.source = strdup("acts.npy");
  tap_ok(ns_edit_set_x(&s, &h, 8, 2, err) == 0 && s.source[0] == 0 && ns_tensor_get(s.x, 8) == 2,
         "editing a loaded file's x forgets the file (source \"\")");
  ns_history_undo(&h, &s);
  tap_ok(strcmp(s.source, "acts.npy") == 0 && ns_tensor_get(s.x, 8) == (double)(8 % 97) - 48.5,
         "undo brings the source and the cell back");
  ns_history_free(&h);
  ns_state_free(&start);
  ns_state_free(&s);
}

/* The c and a keys' edits: every press changes the map (no explicit copy of the default). */
static void test_cycles_change_something(void) {
  char err[NS_ERRLEN];
  ns_state s;
  ns_state_init(&s, err);
  ns_history h;
  ns_history_init(&h, 16);
  tap_ok(ns_edit_cycle_center(&s, &h, err) == 0 && s.center == 0,
         "c on layer norm: default (centered) -> off");
  tap_ok(ns_edit_cycle_center(&s, &h, err) == 0 && s.center == -1, "c again: back to default");
  s.kind = NS_KIND_RMS;
  tap_ok(ns_edit_cycle_center(&s, &h, err) == 0 && s.center == 1,
         "c on rms norm: default (uncentered) -> on");
  s.kind = NS_KIND_LAYER;
  s.center = -1;
  /* a vector: layer norm reduces over {1} by default, the only subset: nothing else */
  tap_ok(ns_edit_cycle_axes(&s, &h, 1, err) == -1 && s.axes == 0 && strstr(err, "one axis"),
         "a on a vector: {1} is the default and the only choice: said, nothing changes");
  size_t shape[3] = {2, 3, 4};
  ns_state_patch p;
  ns_patch_init(&p);
  ns_patch_set(&p, NS_F_X);
  p.v.x = ns_tensor_new(3, shape, NS_FP64, err);
  ns_state_apply(&s, &p, err);
  ns_tensor_free(p.v.x);
  unsigned seen = 0;
  int steps = 0, ok = 1;
  do {
    ok &= ns_edit_cycle_axes(&s, &h, 1, err) == 0;
    ok &= s.axes != 4u; /* {3}: layer norm's default at rank 3 */
    seen |= 1u << s.axes;
    steps++;
  } while (s.axes != 0 && steps < 20);
  tap_ok(ok && steps == 7 && seen == 0xEFu, "rank 3: default and the 6 other subsets (%d)", steps);
  ns_edit_cycle_axes(&s, &h, -1, err);
  tap_ok(s.axes == 7u, "A steps backwards: default -> {1,2,3}");
  ns_history_free(&h);
  ns_state_free(&s);
}

/* k and K walk the kinds table: on a rank 4 input, where every kind is defined, the
 * cycle visits each kind once and comes back to the start, in both directions. */
static void test_kind_cycle(void) {
  char err[NS_ERRLEN];
  ns_state s;
  ns_state_init(&s, err);
  size_t shape[4] = {2, 4, 2, 2};
  ns_tensor *x = ns_tensor_new(4, shape, NS_FP64, err);
  for (size_t i = 0; i < x->n; i++) ns_tensor_set(x, i, (double)(i % 7) - 3);
  ns_state_patch p;
  ns_patch_init(&p);
  ns_patch_set(&p, NS_F_X);
  p.v.x = x;
  err[0] = 0;
  tap_ok(ns_state_apply(&s, &p, err) == 0, "a rank 4 x %s", err);
  ns_tensor_free(x);
  ns_history h;
  ns_history_init(&h, 64);
  for (int dir = 1; dir >= -1; dir -= 2) {
    int seen[NS_KIND_COUNT] = {0}, ok = 1;
    ns_kind start = s.kind;
    for (int i = 0; i < NS_KIND_COUNT; i++) {
      ok &= ns_edit_cycle_kind(&s, &h, dir, err) == 0;
      seen[s.kind]++;
    }
    for (int k = 0; k < NS_KIND_COUNT; k++) ok &= seen[k] == 1;
    tap_ok(ok && s.kind == start, "%s: %d presses visit every kind once and return to %s",
           dir > 0 ? "k" : "K", NS_KIND_COUNT, ns_kind_name(start));
  }
  ns_history_free(&h);
  ns_state_free(&s);
}

/* A figure's scratch grows with x's channels and is charged to the thread's memory account
 * (a lesson's cap): the input figure of a million channels, some 72 MiB of histograms and
 * labels, is refused under a 16 MiB account, and drawn without one. */
static void test_figure_charged(void) {
  char err[NS_ERRLEN];
  ns_state s;
  ns_result r;
  memset(&r, 0, sizeof r);
  size_t shape[3] = {1, 1 << 20, 1};
  ns_tensor *x = ns_state_init(&s, err) == 0 ? ns_tensor_new(3, shape, NS_FP64, err) : NULL;
  if (!x) {
    tap_ok(0, "figure charged: %s", err);
    return;
  }
  for (size_t i = 0; i < x->n; i++) ns_tensor_set(x, i, (double)(i % 7) - 3);
  ns_tensor_free(s.x);
  s.x = x;
  if (ns_explore_compute(&s, &r, err) != 0) {
    tap_ok(0, "figure charged: compute: %s", err);
    ns_state_free(&s);
    return;
  }
  ns_panelfig_opts o;
  ns_panelfig_opts_init(&o);
  o.panel = NS_PANEL_INPUT;
  ns_mem_account *a = ns_mem_account_new((size_t)16 << 20);
  ns_mem_account *prev = ns_mem_account_use(a);
  plot_canvas *c = ns_panel_figure(&s, &r, &o, err);
  ns_mem_account_use(prev);
  tap_ok(a && ns_mem_refused(a),
         "the input figure of 2^20 channels is refused by a 16 MiB account");
  tap_ok(ns_mem_used(a) == 0, "  and gives back what it was charged (%zu bytes held)",
         ns_mem_used(a));
  plot_canvas_free(c);
  ns_mem_account_release(a);
  c = ns_panel_figure(&s, &r, &o, err);
  tap_ok(c != NULL, "  without an account it is drawn");
  plot_canvas_free(c);
  ns_result_free(&r);
  ns_state_free(&s);
}

/* The probes of a large x run on a slice whose statistics are x's own, whole: over the
 * first axis of a (64, 8, 16, 16) x, the first 4 channels (x[:, :4]); cut along the first
 * axis (as they were) each statistic kept one element and y was 0 whatever the probe. */
static int probe_matches_y(const ns_result *r, const ns_tensor *x, size_t *bad) {
  for (size_t j = 0; j < r->probe_n; j++) {
    size_t i = ns_probe_elem(r, x, j);
    if (ns_probe_index(r, x, i) != j || ns_tensor_get(r->y_probe, j) != ns_tensor_get(r->norm.y, i))
      return *bad = j, 0;
  }
  return *bad = r->probe_n, 1;
}

static void test_probe_slice(void) {
  char err[NS_ERRLEN];
  ns_state s;
  ns_result r;
  ns_state_init(&s, err);
  size_t shape[4] = {64, 8, 16, 16};
  ns_tensor *x = ns_tensor_new(4, shape, NS_FP32, err);
  unsigned long long q = 0x9e3779b97f4a7c15ULL;
  for (size_t i = 0; i < x->n; i++) {
    q ^= q << 13, q ^= q >> 7, q ^= q << 17;
    ns_tensor_set(x, i, (double)(q >> 11) * 0x1p-53 * 4.0 - 2.0 + (double)(i % 7));
  }
  double gam[8] = {1, 2, 0.5, -1, 3, 1, 1, 2};
  struct {
    const char *what;
    ns_kind kind;
    unsigned axes;
    int gamma, axis;
    size_t k;
  } cases[] = {
      {"batch over the first axis", NS_KIND_BATCH, 1u, 0, 1, 4},
      {"batch over the first axis, gamma per channel", NS_KIND_BATCH, 1u, 1, 1, 4},
      {"batch (first, third, fourth axes)", NS_KIND_BATCH, 0, 1, 1, 4},
      {"layer: whole entries of the first axis", NS_KIND_LAYER, 0, 0, 0, 32},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    ns_state_patch p;
    ns_patch_init(&p);
    p.set = NS_FIELDBIT(NS_F_X) | NS_FIELDBIT(NS_F_KIND) | NS_FIELDBIT(NS_F_AXES) |
            NS_FIELDBIT(NS_F_GAMMA) | NS_FIELDBIT(NS_F_DTYPE);
    p.v.x = x;
    p.v.dtype = NS_FP32;
    p.v.kind = cases[c].kind;
    p.v.axes = cases[c].axes;
    p.v.gamma = cases[c].gamma ? gam : NULL;
    p.v.ngamma = cases[c].gamma ? 8 : 0;
    if (ns_state_apply(&s, &p, err) != 0 || ns_explore_compute(&s, &r, err) != 0) {
      tap_ok(0, "probe slice, %s: %s", cases[c].what, err);
      continue;
    }
    size_t bad = 0;
    tap_ok(r.probe_axis == cases[c].axis && r.probe_k == cases[c].k && r.probe_n == 65536,
           "probe slice, %s: %zu entries of axis %d, %zu values", cases[c].what, r.probe_k,
           r.probe_axis + 1, r.probe_n);
    tap_ok(r.y_probe && probe_matches_y(&r, x, &bad),
           "  its y is y itself (statistics whole): the first %zu of %zu elements agree", bad,
           r.probe_n);
    double ymax = 0;
    for (size_t j = 0; r.y_shift && j < r.probe_n; j++)
      ymax = fmax(ymax, fabs(ns_tensor_get(r.y_shift, j)));
    tap_ok(ymax > 1 && r.shift_dev < 1e-4 * ymax,
           "  the shift probe has values to move (max |y| %.3g) and moves them %.3g", ymax,
           r.shift_dev);
    ns_result_free(&r);
  }
  ns_tensor_free(x);
  ns_state_free(&s);
}

int main(void) {
  test_degenerate();
  test_defaults();
  test_apply_atomic();
  test_history();
  test_compute_default();
  test_compute_claims();
  test_eval_mode();
  test_history_compact();
  test_cycles_change_something();
  test_kind_cycle();
  test_figure_charged();
  test_probe_slice();
  return tap_done();
}
