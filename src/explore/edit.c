/* edit.c: the undoable edits (ns_edit_cycle_kind, ns_edit_set_x, ...), each one validated
 * change of the explorer state through ns_history_apply. See edit.h for the contract. */
#include "explore/edit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "explore/state_priv.h"

/* ---------------------------------------------------------------- edits */

/* One field, one value, one undoable step. */
#define PATCH1(fld, member, val)                                                                   \
  ns_state_patch p;                                                                                \
  ns_patch_init(&p);                                                                               \
  ns_patch_set(&p, fld);                                                                           \
  p.v.member = (val);                                                                              \
  return ns_history_apply(h, s, &p, err)

int ns_edit_cycle_kind(ns_state *s, ns_history *h, int dir, char *err) {
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_KIND) | NS_FIELDBIT(NS_F_AXES);
  p.v.axes = 0;
  int step = dir < 0 ? NS_KIND_COUNT - 1 : 1;
  for (int i = 1; i <= NS_KIND_COUNT; i++) {
    p.v.kind = (ns_kind)(((int)s->kind + i * step) % NS_KIND_COUNT);
    char e[NS_ERRLEN];
    if (ns_default_axes(p.v.kind, s->x->rank, e) == 0) continue;
    /* gamma/beta sized for the old kind would not fit: drop them with the change */
    ns_state_patch q = p;
    if (ns_history_apply(h, s, &q, e) == 0) return 0;
    q.set |= NS_FIELDBIT(NS_F_GAMMA) | NS_FIELDBIT(NS_F_BETA);
    q.v.gamma = q.v.beta = NULL;
    q.v.ngamma = q.v.nbeta = 0;
    if (ns_history_apply(h, s, &q, e) == 0) return 0;
  }
  return ns_seterr(err, "kind: no other kind is defined for x's rank %d", s->x->rank);
}

int ns_edit_eps_decade(ns_state *s, ns_history *h, int dir, char *err) {
  double e = s->eps;
  if (dir > 0)
    e = e == 0 ? 1e-12 : e * 10;
  else if (dir < 0)
    e = e <= 1e-12 ? 0 : e / 10;
  /* keep exact decades exact: 1e-5 * 10 is 1.0000000000000001e-4 */
  if (e > 0) {
    double k = round(log10(e));
    if (fabs(log10(e) - k) < 1e-9) e = pow(10, k);
  }
  PATCH1(NS_F_EPS, eps, e);
}

int ns_edit_set_eps(ns_state *s, ns_history *h, double eps, char *err) {
  PATCH1(NS_F_EPS, eps, eps);
}

int ns_edit_toggle_eps_at(ns_state *s, ns_history *h, char *err) {
  PATCH1(NS_F_EPS_AT, eps_at, s->eps_at == NS_EPS_VAR ? NS_EPS_STD : NS_EPS_VAR);
}

int ns_edit_toggle_ddof(ns_state *s, ns_history *h, char *err) {
  PATCH1(NS_F_DDOF, ddof, 1 - s->ddof);
}

/* default -> the opposite of what the kind does by default -> default: every press
 * changes the map (an explicit value equal to the default would change nothing). */
int ns_edit_cycle_center(ns_state *s, ns_history *h, char *err) {
  ns_spec sp;
  ns_state_spec(s, &sp);
  sp.center = -1;
  int kind_default = ns_spec_center(&sp);
  PATCH1(NS_F_CENTER, center, s->center == -1 ? !kind_default : -1);
}

/* The next (dir > 0) or previous subset of x's axes in the order default, {1}, {2},
 * {1,2}, ... (bit masks 1, 2, 3, ...), skipping the subset the kind reduces over by
 * default (choosing it explicitly would change nothing). */
int ns_edit_cycle_axes(ns_state *s, ns_history *h, int dir, char *err) {
  int rank = s->x->rank;
  unsigned all = (1u << rank) - 1, m = s->axes;
  char e[NS_ERRLEN];
  unsigned def = ns_default_axes(s->kind, rank, e);
  if (all == def && s->axes == 0)
    return ns_seterr(err, "axes: x has one axis, and %s norm already reduces over it",
                     ns_kind_name(s->kind));
  for (unsigned i = 0; i <= all; i++) {
    m = (m + (dir < 0 ? all : 1)) & all;
    if (m == 0 || m != def) break;
  }
  PATCH1(NS_F_AXES, axes, m);
}

static int cycle(int v, int n, int dir) {
  return ((v + (dir < 0 ? -1 : 1)) % n + n) % n;
}

int ns_edit_cycle_dtype(ns_state *s, ns_history *h, int dir, char *err) {
  PATCH1(NS_F_DTYPE, dtype, (ns_dtype)cycle((int)s->dtype, NS_DTYPE_COUNT, dir));
}

int ns_edit_cycle_acc(ns_state *s, ns_history *h, int dir, char *err) {
  /* -1 (default) is slot 0, dtype d is slot d+1 */
  PATCH1(NS_F_ACC, acc, cycle(s->acc + 1, NS_DTYPE_COUNT + 1, dir) - 1);
}

int ns_edit_cycle_algo(ns_state *s, ns_history *h, int dir, char *err) {
  PATCH1(NS_F_ALGO, algo, (ns_algo)cycle((int)s->algo, 3, dir));
}

int ns_edit_toggle_mode(ns_state *s, ns_history *h, char *err) {
  PATCH1(NS_F_MODE, mode, s->mode == NS_MODE_TRAIN ? NS_MODE_EVAL : NS_MODE_TRAIN);
}

int ns_edit_toggle_axis(ns_state *s, ns_history *h, int axis, char *err) {
  if (axis < 1 || axis > s->x->rank)
    return ns_seterr(err, "axes: axis %d does not exist (x has rank %d)", axis, s->x->rank);
  char e[NS_ERRLEN];
  unsigned m = s->axes ? s->axes : ns_default_axes(s->kind, s->x->rank, e);
  m ^= 1u << (axis - 1);
  if (m == 0) return ns_seterr(err, "axes: at least one axis must be reduced");
  PATCH1(NS_F_AXES, axes, m);
}

int ns_edit_groups_step(ns_state *s, ns_history *h, int dir, char *err) {
  /* step to the next group count that divides the channels (axis 2) when there is one */
  size_t C = s->x->rank >= 2 ? s->x->shape[1] : 1;
  int g = s->groups;
  for (;;) {
    g += dir < 0 ? -1 : 1;
    if (g < 1 || (size_t)g > C) {
      char divs[96] = "";
      size_t used = 0;
      for (size_t d = 1; d <= C && used + 24 < sizeof divs; d++)
        if (C % d == 0)
          used += (size_t)snprintf(divs + used, sizeof divs - used, "%s%zu", used ? ", " : "", d);
      return ns_seterr(err, "groups: already the %s (%d); %zu channel%s divide into %s group%s",
                       dir < 0 ? "fewest" : "most", s->groups, C, C == 1 ? "" : "s", divs,
                       C == 1 ? "" : "s");
    }
    if (C % (size_t)g == 0) break;
  }
  PATCH1(NS_F_GROUPS, groups, g);
}

/* The momentum field sets the momentum and the cumulative flag together. */
static int apply_momentum(ns_state *s, ns_history *h, double m, int cumulative, char *err) {
  ns_state_patch p;
  ns_patch_init(&p);
  ns_patch_set(&p, NS_F_MOMENTUM);
  p.v.momentum = m;
  p.v.cumulative = cumulative;
  return ns_history_apply(h, s, &p, err);
}

int ns_edit_momentum_step(ns_state *s, ns_history *h, int dir, char *err) {
  double m = s->momentum * (dir < 0 ? 0.5 : 2.0);
  if (m > 1) m = 1;
  if (m < 1e-6) return ns_seterr(err, "momentum: already at its smallest step (%g)", s->momentum);
  return apply_momentum(s, h, m, 0, err);
}

int ns_edit_toggle_cumulative(ns_state *s, ns_history *h, char *err) {
  return apply_momentum(s, h, s->momentum, !s->cumulative, err);
}

/* A patch that sets the tensor field f (x or batch) to t (borrowed). */
static void tensor_patch(ns_state_patch *p, ns_field f, const ns_tensor *t) {
  ns_patch_init(p);
  ns_patch_set(p, f);
  if (f == NS_F_X)
    p->v.x = (ns_tensor *)t;
  else
    p->v.batch = (ns_tensor *)t;
}

/* Sets flat element i (in range) of the tensor field f (x or batch) to v. */
static int set_element(ns_state *s, ns_history *h, ns_field f, size_t i, double v, char *err) {
  ns_tensor *t = ns_tensor_copy(f == NS_F_X ? s->x : s->batch);
  if (!t) return ns_seterr(err, "%s: out of memory", ns_field_name(f));
  ns_tensor_set(t, i, v);
  ns_state_patch p;
  tensor_patch(&p, f, t);
  int rc = ns_history_apply(h, s, &p, err);
  ns_tensor_free(t);
  return rc;
}

int ns_edit_set_x(ns_state *s, ns_history *h, size_t i, double v, char *err) {
  if (i >= s->x->n)
    return ns_seterr(err, "x: element %zu does not exist (%zu elements)", i + 1, s->x->n);
  if (h) return ns_history_set_x(h, s, i, v, err); /* in place (a source is forgotten) */
  return set_element(s, h, NS_F_X, i, v, err);
}

/* A matrix with one row (axis 1) or column (axis 2) inserted (insert) or removed at `at`;
 * a vector counts as one row. New cells are 0. */
static ns_tensor *matrix_edit(const ns_tensor *m, int axis, size_t at, int insert, const char *what,
                              char *err) {
  if (m->rank > 2) {
    ns_seterr(err, "%s: rows and columns can only be edited for a vector or matrix (rank %d)", what,
              m->rank);
    return NULL;
  }
  if (axis != 1 && axis != 2) {
    ns_seterr(err, "%s: axis must be 1 (rows) or 2 (columns), got %d", what, axis);
    return NULL;
  }
  int vec = m->rank == 1;
  size_t R = vec ? 1 : m->shape[0], C = vec ? m->shape[0] : m->shape[1];
  if (vec && axis == 1 && !insert) {
    ns_seterr(err, "%s: a vector has one row; remove columns (elements) instead", what);
    return NULL;
  }
  int to_matrix = vec && axis == 1; /* a second row turns the vector into a (2, D) matrix */
  size_t cnt = axis == 1 ? R : C;
  if (insert ? at > cnt : at >= cnt) {
    ns_seterr(err, "%s: %s %zu does not exist", what, axis == 1 ? "row" : "column", at + 1);
    return NULL;
  }
  if (!insert && cnt <= 1) {
    ns_seterr(err, "%s: cannot remove the last %s", what, axis == 1 ? "row" : "column");
    return NULL;
  }
  size_t R2 = R, C2 = C;
  if (axis == 1)
    R2 = insert ? R + 1 : R - 1;
  else
    C2 = insert ? C + 1 : C - 1;
  double *v = calloc(R2 * C2, sizeof *v);
  if (!v) {
    ns_seterr(err, "%s: out of memory", what);
    return NULL;
  }
  for (size_t i = 0; i < R2; i++)
    for (size_t j = 0; j < C2; j++) {
      size_t si = i, sj = j;
      if (axis == 1) {
        if (insert && i == at) continue;
        si = insert ? (i > at ? i - 1 : i) : (i >= at ? i + 1 : i);
      } else {
        if (insert && j == at) continue;
        sj = insert ? (j > at ? j - 1 : j) : (j >= at ? j + 1 : j);
      }
      v[i * C2 + j] = ns_tensor_get(m, si * C + sj);
    }
  int vec_out = vec && !to_matrix;
  size_t shape[2] = {vec_out ? C2 : R2, C2};
  ns_tensor *t = ns_tensor_from(vec_out ? 1 : 2, shape, m->dtype, v, err);
  free(v);
  return t;
}

static int x_edit(ns_state *s, ns_history *h, int axis, size_t at, int insert, char *err) {
  ns_tensor *t = matrix_edit(s->x, axis, at, insert, "x", err);
  if (!t) return -1;
  ns_state_patch p;
  tensor_patch(&p, NS_F_X, t);
  int rc = ns_history_apply(h, s, &p, NULL);
  if (rc != 0) { /* gamma/beta sized for the old x no longer fit: drop them */
    p.set |= NS_FIELDBIT(NS_F_GAMMA) | NS_FIELDBIT(NS_F_BETA);
    rc = ns_history_apply(h, s, &p, err);
  }
  ns_tensor_free(t);
  return rc;
}

int ns_edit_x_insert(ns_state *s, ns_history *h, int axis, size_t at, char *err) {
  return x_edit(s, h, axis, at, 1, err);
}

int ns_edit_x_remove(ns_state *s, ns_history *h, int axis, size_t at, char *err) {
  return x_edit(s, h, axis, at, 0, err);
}

int ns_edit_set_batch(ns_state *s, ns_history *h, size_t row, size_t col, double v, char *err) {
  size_t B = s->batch->shape[0], D = s->batch->shape[1];
  if (row >= B || col >= D)
    return ns_seterr(err, "batch: cell (%zu,%zu) is outside the %zu x %zu batch", row + 1, col + 1,
                     B, D);
  return set_element(s, h, NS_F_BATCH, row * D + col, v, err);
}

static int batch_edit(ns_state *s, ns_history *h, int axis, size_t at, int insert, char *err) {
  ns_tensor *t = matrix_edit(s->batch, axis, at, insert, "batch", err);
  if (!t) return -1;
  ns_state_patch p;
  tensor_patch(&p, NS_F_BATCH, t);
  if (axis == 1) { /* keep target and companion on the same examples */
    int tg = s->target, cp = s->companion, a = (int)at + 1;
    if (insert) {
      if (tg >= a) tg++;
      if (cp >= a) cp++;
    } else {
      if (a == tg || a == cp) {
        ns_tensor_free(t);
        return ns_seterr(err, "batch: row %d is the %s; choose another row to remove", a,
                         a == tg ? "target" : "companion");
      }
      if (tg > a) tg--;
      if (cp > a) cp--;
    }
    p.set |= NS_FIELDBIT(NS_F_TARGET) | NS_FIELDBIT(NS_F_COMPANION);
    p.v.target = tg;
    p.v.companion = cp;
  }
  int rc = ns_history_apply(h, s, &p, err);
  ns_tensor_free(t);
  return rc;
}

int ns_edit_batch_insert(ns_state *s, ns_history *h, int axis, size_t at, char *err) {
  return batch_edit(s, h, axis, at, 1, err);
}

int ns_edit_batch_remove(ns_state *s, ns_history *h, int axis, size_t at, char *err) {
  return batch_edit(s, h, axis, at, 0, err);
}

int ns_edit_set_target(ns_state *s, ns_history *h, int row, char *err) {
  PATCH1(NS_F_TARGET, target, row);
}

int ns_edit_set_companion(ns_state *s, ns_history *h, int row, char *err) {
  PATCH1(NS_F_COMPANION, companion, row);
}

int ns_edit_set_shift(ns_state *s, ns_history *h, double b, char *err) {
  PATCH1(NS_F_SHIFT, shift, b);
}

int ns_edit_set_scale(ns_state *s, ns_history *h, double a, char *err) {
  PATCH1(NS_F_SCALE, scale, a);
}
