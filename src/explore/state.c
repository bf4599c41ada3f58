/* state.c: the field table, the explorer state (init, copy, free, equal), and the
 * validated patch ns_state_apply. Every per-field rule here is per TYPE (as tmux checks
 * an option by its table entry's type); only the cross-field rules are written by hand.
 * See state.h for the contract. */
#define _XOPEN_SOURCE 700 /* realpath: a saved file reference as an absolute path */
#include "explore/state.h"

#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sha256.h"
#include "core/text.h"
#include "explore/state_priv.h"

const char *const ns_source_names[] = {"rng", "batch", "resample", NULL};
const char *const ns_placement_names[] = NS_PLACEMENT_NAMES;
const char *const ns_ftype_names[] = {"tensor", "string",  "choice", "boolean",  "axes", "integer",
                                      "number", "numbers", "seed",   "momentum", NULL};

/* clang-format off */
#define NS_FIELD_DESC(ID, NAME, TYPE, MEMBER, DEF, STALE, DOC, ...)                               \
  [NS_F_##ID] = {.name = NAME, .type = NS_FT_##TYPE, .off = offsetof(ns_state, MEMBER),           \
                 .def = (double)(DEF), .stale = (STALE), .doc = DOC, __VA_ARGS__},
const ns_field_desc ns_fields[NS_F_COUNT] = {NS_FIELDS(NS_FIELD_DESC)};
#undef NS_FIELD_DESC
/* clang-format on */

_Static_assert(NS_F_COUNT <= 64, "ns_fieldset holds at most 64 fields");

/* ---------------------------------------------------------------- names */

const char *ns_field_name(ns_field f) {
  return (f >= 0 && f < NS_F_COUNT) ? ns_fields[f].name : "?";
}

int ns_field_parse(const char *name) {
  for (int f = 0; f < NS_F_COUNT; f++)
    if (strcmp(name, ns_fields[f].name) == 0) return f;
  return -1;
}

int ns_choice_parse(const char *const *names, const char *name) {
  for (int i = 0; names && names[i]; i++)
    if (strcmp(names[i], name) == 0) return i;
  return -1;
}

const char *ns_choice_list(const char *const *names, char *buf, size_t len) {
  size_t k = 0;
  buf[0] = 0;
  for (int i = 0; names && names[i] && k < len; i++)
    k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? ", " : "", names[i]);
  return buf;
}

/* ---------------------------------------------------------------- member access */

#define AT(s, T, off) ((T *)((char *)(s) + (off)))
#define CAT(s, T, off) ((const T *)((const char *)(s) + (off)))

/* The member of an ENUM/TRIBOOL/INT field as an int (enums are int-sized). */
static int get_int(const ns_state *s, const ns_field_desc *d) {
  return *CAT(s, int, d->off);
}

static size_t count_of(const ns_state *s, const ns_field_desc *d) {
  return *CAT(s, size_t, d->count);
}

/* ---------------------------------------------------------------- patch */

void ns_patch_init(ns_state_patch *p) {
  memset(p, 0, sizeof *p);
}

void ns_patch_set(ns_state_patch *p, ns_field f) {
  p->set |= NS_FIELDBIT(f);
}

int ns_patch_has(const ns_state_patch *p, ns_field f) {
  return (p->set & NS_FIELDBIT(f)) != 0;
}

void ns_patch_from_state(ns_state_patch *p, const ns_state *src) {
  p->set = NS_ALLFIELDS;
  p->v = *src;
}

/* ---------------------------------------------------------------- state */

static double *dup_doubles(const double *v, size_t n) {
  if (!v || n == 0) return NULL;
  double *d = malloc(n * sizeof *d);
  if (d) memcpy(d, v, n * sizeof *d);
  return d;
}

static char *dup_string(const char *s) {
  size_t n = strlen(s ? s : "") + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s ? s : "", n);
  return d;
}

static uint64_t new_stamp(void) {
  static _Atomic uint64_t next = 1; /* stamps are never reused, so never confused */
  return atomic_fetch_add(&next, 1);
}

void ns_state_stamp_x(ns_state *s) {
  s->x_stamp = s->x_log_base = new_stamp();
  s->x_log_n = 0;
}

void ns_state_stamp_x_at(ns_state *s, const size_t *at, size_t k) {
  if (k > NS_STATE_XLOG) {
    ns_state_stamp_x(s);
    return;
  }
  uint64_t st = new_stamp();
  int drop = s->x_log_n + (int)k - NS_STATE_XLOG;
  if (drop > 0) {
    /* the oldest entries go, whole stamps at a time: the log then starts after them */
    while (drop < s->x_log_n && s->x_log[drop].stamp == s->x_log[drop - 1].stamp) drop++;
    s->x_log_base = s->x_log[drop - 1].stamp;
    memmove(s->x_log, s->x_log + drop, (size_t)(s->x_log_n - drop) * sizeof *s->x_log);
    s->x_log_n -= drop;
  }
  for (size_t i = 0; i < k; i++) {
    s->x_log[s->x_log_n].stamp = st;
    s->x_log[s->x_log_n++].at = at[i];
  }
  s->x_stamp = st;
}

int ns_state_x_changes(const ns_state *s, uint64_t since, size_t *at) {
  if (since == s->x_stamp) return 0;
  int from = -1;
  if (since == s->x_log_base)
    from = 0;
  else
    for (int i = 0; i < s->x_log_n; i++)
      if (s->x_log[i].stamp == since) from = i + 1; /* after the last entry of that stamp */
  if (from < 0 || s->x_log_base == 0) return -1;
  int k = 0;
  for (int i = from; i < s->x_log_n; i++) at[k++] = s->x_log[i].at;
  return k;
}

int ns_state_init(ns_state *s, char *err) {
  memset(s, 0, sizeof *s);
  ns_state_stamp_x(s);
  for (int f = 0; f < NS_F_COUNT; f++) {
    const ns_field_desc *d = &ns_fields[f];
    switch (d->type) {
    case NS_FT_ENUM:
    case NS_FT_TRIBOOL:
    case NS_FT_INT:
      *AT(s, int, d->off) = (int)d->def;
      break;
    case NS_FT_AXES:
      *AT(s, unsigned, d->off) = (unsigned)d->def;
      break;
    case NS_FT_DOUBLE:
    case NS_FT_MOMENTUM:
      *AT(s, double, d->off) = d->def;
      break;
    case NS_FT_SEED:
      *AT(s, uint64_t, d->off) = (uint64_t)d->def;
      break;
    default:
      break;
    }
  }
  static const double x0[4] = {-2, -1, 1, 2};
  static const double b0[4] = {0, 1, 2, -1};
  size_t xs[1] = {4}, bs[2] = {2, 2};
  s->x = ns_tensor_from(1, xs, NS_FP64, x0, err);
  s->batch = ns_tensor_from(2, bs, NS_FP64, b0, err);
  s->baseline = dup_doubles(b0 + 2, 2);
  s->nbaseline = 2;
  s->source = dup_string("");
  if (!s->x || !s->batch || !s->baseline || !s->source) {
    ns_state_free(s);
    return ns_seterr(err, "out of memory");
  }
  return 0;
}

/* Frees the owned member of field f (and zeroes it). */
static void free_member(ns_state *s, const ns_field_desc *d) {
  switch (d->type) {
  case NS_FT_TENSOR:
    ns_tensor_free(*AT(s, ns_tensor *, d->off));
    *AT(s, ns_tensor *, d->off) = NULL;
    break;
  case NS_FT_STRING:
    free(*AT(s, char *, d->off));
    *AT(s, char *, d->off) = NULL;
    break;
  case NS_FT_DOUBLES:
    free(*AT(s, double *, d->off));
    *AT(s, double *, d->off) = NULL;
    *AT(s, size_t, d->count) = 0;
    break;
  default:
    break;
  }
}

void ns_state_free(ns_state *s) {
  if (!s) return;
  for (int f = 0; f < NS_F_COUNT; f++) free_member(s, &ns_fields[f]);
}

/* Replaces dst's member of field f by a copy of src's (a tensor shared; dst's old one is not
 * freed). */
int ns_field_copy(ns_state *dst, const ns_state *src, ns_field f) {
  const ns_field_desc *d = &ns_fields[f];
  switch (d->type) {
  case NS_FT_TENSOR: {
    const ns_tensor *t = *CAT(src, ns_tensor *, d->off);
    *AT(dst, ns_tensor *, d->off) = ns_tensor_share(t);
    return 0;
  }
  case NS_FT_STRING: {
    const char *t = *CAT(src, char *, d->off);
    char *c = t ? dup_string(t) : NULL;
    *AT(dst, char *, d->off) = c;
    return t && !c ? -1 : 0;
  }
  case NS_FT_DOUBLES: {
    const double *v = *CAT(src, double *, d->off);
    size_t n = count_of(src, d);
    double *c = dup_doubles(v, n);
    *AT(dst, double *, d->off) = c;
    *AT(dst, size_t, d->count) = c ? n : 0;
    return v && n && !c ? -1 : 0;
  }
  case NS_FT_MOMENTUM:
    dst->momentum = src->momentum;
    dst->cumulative = src->cumulative;
    return 0;
  case NS_FT_ENUM:
  case NS_FT_TRIBOOL:
  case NS_FT_INT:
    *AT(dst, int, d->off) = get_int(src, d);
    return 0;
  case NS_FT_AXES:
    *AT(dst, unsigned, d->off) = *CAT(src, unsigned, d->off);
    return 0;
  case NS_FT_DOUBLE:
    *AT(dst, double, d->off) = *CAT(src, double, d->off);
    return 0;
  case NS_FT_SEED:
    *AT(dst, uint64_t, d->off) = *CAT(src, uint64_t, d->off);
    return 0;
  case NS_FT_COUNT:
    break;
  }
  return 0;
}

int ns_state_copy(ns_state *dst, const ns_state *src, char *err) {
  *dst = *src;
  int bad = 0;
  for (int f = 0; f < NS_F_COUNT; f++) {
    ns_ftype t = ns_fields[f].type;
    if (t == NS_FT_TENSOR || t == NS_FT_STRING || t == NS_FT_DOUBLES)
      bad |= ns_field_copy(dst, src, (ns_field)f) != 0;
  }
  if (bad) {
    ns_state_free(dst);
    return ns_seterr(err, "out of memory copying the explorer state");
  }
  return 0;
}

int ns_same_double(double a, double b) {
  return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

int ns_same_doubles(const double *a, size_t na, const double *b, size_t nb) {
  if (na != nb) return 0;
  for (size_t i = 0; i < na; i++)
    if (!ns_same_double(a[i], b[i])) return 0;
  return 1;
}

int ns_same_tensor(const ns_tensor *a, const ns_tensor *b) {
  if (!a || !b) return a == b;
  if (a == b) return 1;
  if (a->rank != b->rank || a->dtype != b->dtype || a->n != b->n) return 0;
  for (int k = 0; k < a->rank; k++)
    if (a->shape[k] != b->shape[k]) return 0;
  return memcmp(a->data, b->data, a->n * ns_dtype_size(a->dtype)) == 0;
}

int ns_field_equal(ns_field f, const ns_state *a, const ns_state *b) {
  const ns_field_desc *d = &ns_fields[f];
  switch (d->type) {
  case NS_FT_TENSOR:
    if (f == NS_F_X && a->x_stamp && a->x_stamp == b->x_stamp) return 1; /* see x_stamp */
    return ns_same_tensor(*CAT(a, ns_tensor *, d->off), *CAT(b, ns_tensor *, d->off));
  case NS_FT_STRING: {
    const char *x = *CAT(a, char *, d->off), *y = *CAT(b, char *, d->off);
    return strcmp(x ? x : "", y ? y : "") == 0;
  }
  case NS_FT_DOUBLES:
    return ns_same_doubles(*CAT(a, double *, d->off), count_of(a, d), *CAT(b, double *, d->off),
                           count_of(b, d));
  case NS_FT_MOMENTUM:
    return a->cumulative == b->cumulative &&
           (a->cumulative || ns_same_double(a->momentum, b->momentum));
  case NS_FT_ENUM:
  case NS_FT_TRIBOOL:
  case NS_FT_INT:
    return get_int(a, d) == get_int(b, d);
  case NS_FT_AXES:
    return *CAT(a, unsigned, d->off) == *CAT(b, unsigned, d->off);
  case NS_FT_DOUBLE:
    return ns_same_double(*CAT(a, double, d->off), *CAT(b, double, d->off));
  case NS_FT_SEED:
    return *CAT(a, uint64_t, d->off) == *CAT(b, uint64_t, d->off);
  case NS_FT_COUNT:
    break;
  }
  return 1;
}

ns_fieldset ns_state_diff(const ns_state *a, const ns_state *b) {
  ns_fieldset m = 0;
  for (int f = 0; f < NS_F_COUNT; f++)
    if (!ns_field_equal((ns_field)f, a, b)) m |= NS_FIELDBIT(f);
  return m;
}

int ns_state_equal(const ns_state *a, const ns_state *b) {
  return ns_state_diff(a, b) == 0;
}

#define SPEC_COPY_SCALAR(m) spec->m = s->m;
#define SPEC_COPY_ARRAY(m)                                                                         \
  spec->m = s->n##m ? s->m : NULL;                                                                 \
  spec->n##m = s->n##m;
#define SPEC_COPY_(ID, member, copy, flags) SPEC_COPY_##copy(member)
void ns_state_spec(const ns_state *s, ns_spec *spec) {
  ns_spec_default(spec);
  NS_SPEC_FIELDS(SPEC_COPY_)
  spec->running = NULL;
}
#undef SPEC_COPY_
#undef SPEC_COPY_ARRAY
#undef SPEC_COPY_SCALAR

ns_fieldset ns_spec_fieldset(int flags) {
  ns_fieldset set = 0;
#define SPEC_BIT_(ID, member, copy, fl)                                                            \
  if ((fl)&flags) set |= NS_FIELDBIT(NS_F_##ID);
  NS_SPEC_FIELDS(SPEC_BIT_)
#undef SPEC_BIT_
  return set;
}

int ns_spec_same_m2(const ns_spec *a, const ns_spec *b) {
  int same = 1;
#define SPEC_SAME_(ID, member, copy, fl)                                                           \
  if ((fl)&NS_SPEC_M2) same &= a->member == b->member;
  NS_SPEC_FIELDS(SPEC_SAME_)
#undef SPEC_SAME_
  return same;
}

size_t ns_state_bytes(const ns_state *s) {
  size_t b = sizeof *s;
  for (int f = 0; f < NS_F_COUNT; f++) {
    const ns_field_desc *d = &ns_fields[f];
    if (d->type == NS_FT_TENSOR) {
      const ns_tensor *t = *CAT(s, ns_tensor *, d->off);
      if (t) b += t->n * ns_dtype_size(t->dtype);
    } else if (d->type == NS_FT_DOUBLES) {
      b += count_of(s, d) * sizeof(double);
    } else if (d->type == NS_FT_STRING && *CAT(s, char *, d->off)) {
      b += strlen(*CAT(s, char *, d->off)) + 1;
    }
  }
  return b;
}

/* ---------------------------------------------------------------- apply */

/* Frees what `cand` owns but `keep` does not (the allocations made for a candidate). */
static void free_new(ns_state *cand, const ns_state *keep) {
  for (int f = 0; f < NS_F_COUNT; f++) {
    const ns_field_desc *d = &ns_fields[f];
    if (d->type != NS_FT_TENSOR && d->type != NS_FT_STRING && d->type != NS_FT_DOUBLES) continue;
    if (*CAT(cand, void *, d->off) != *CAT(keep, void *, d->off)) free_member(cand, d);
  }
}

/* Moves into `old` (owned) the arrays of s that c replaced (their fields into *replaced);
 * the rest of old is s's values. */
static void keep_replaced(ns_state *s, const ns_state *c, ns_state *old, ns_fieldset *replaced) {
  *old = *s;
  *replaced = 0;
  for (int f = 0; f < NS_F_COUNT; f++) {
    const ns_field_desc *d = &ns_fields[f];
    if (d->type != NS_FT_TENSOR && d->type != NS_FT_STRING && d->type != NS_FT_DOUBLES) continue;
    if (*CAT(c, void *, d->off) == *CAT(s, void *, d->off)) {
      *AT(old, void *, d->off) = NULL; /* shared: old does not own it */
      if (d->count) *AT(old, size_t, d->count) = 0;
    } else {
      *replaced |= NS_FIELDBIT(f);
    }
  }
}

/* The message of a number outside its field's range (state.h). */
int ns_field_range_fail(const ns_field_desc *d, double v, char *err) {
  if (d->type == NS_FT_INT) {
    if (d->lo == d->hi - 1)
      return ns_seterr(err, "%s: must be %g or %g, got %g", d->name, d->lo, d->hi, v);
    if (d->hi >= (1 << 30)) return ns_seterr(err, "%s: must be >= %g, got %g", d->name, d->lo, v);
    return ns_seterr(err, "%s: must be %g to %g, got %g", d->name, d->lo, d->hi, v);
  }
  if (d->lo == -HUGE_VAL) return ns_seterr(err, "%s: must be finite, got %g", d->name, v);
  if (d->hi == HUGE_VAL)
    return ns_seterr(err, "%s: must be finite and >= %g, got %g", d->name, d->lo, v);
  return ns_seterr(err, "%s: must be in %s%g, %g], got %g", d->name,
                   d->flags & NS_FF_OPEN_LO ? "(" : "[", d->lo, d->hi, v);
}

/* Checks field f's value in the patch by its type and puts it into the candidate c (arrays
 * are copied: c then owns them). */
static int take_field(ns_state *c, const ns_state *s, const ns_state_patch *p, ns_field f,
                      char *err) {
  const ns_field_desc *d = &ns_fields[f];
  const ns_state *v = &p->v;
  char e[NS_ERRLEN];
  switch (d->type) {
  case NS_FT_ENUM: {
    int k = get_int(v, d), n = 0;
    while (d->names[n]) n++;
    if (k < ((d->flags & NS_FF_DEFAULT) ? -1 : 0) || k >= n) {
      char list[160];
      return ns_seterr(err, "%s: unknown choice %d (%s%s)", d->name, k,
                       ns_choice_list(d->names, list, sizeof list),
                       (d->flags & NS_FF_DEFAULT) ? ", default" : "");
    }
    break;
  }
  case NS_FT_TRIBOOL:
    if (get_int(v, d) < -1 || get_int(v, d) > 1)
      return ns_seterr(err, "%s: must be true, false or default", d->name);
    break;
  case NS_FT_INT:
    if (get_int(v, d) < d->lo || get_int(v, d) > d->hi)
      return ns_field_range_fail(d, get_int(v, d), err);
    break;
  case NS_FT_DOUBLE: {
    double x = *CAT(v, double, d->off);
    if (isnan(x) && (d->flags & NS_FF_DEFAULT)) break; /* "default" */
    if (!isfinite(x) || x < d->lo || x > d->hi) return ns_field_range_fail(d, x, err);
    break;
  }
  case NS_FT_MOMENTUM:
    if (!v->cumulative && !(v->momentum > d->lo && v->momentum <= d->hi))
      return ns_seterr(err, "%s: must be in (0, 1] or false (cumulative average), got %g", d->name,
                       v->momentum);
    c->cumulative = v->cumulative ? 1 : 0;
    if (!v->cumulative) c->momentum = v->momentum; /* cumulative keeps the momentum */
    return 0;
  case NS_FT_AXES:
    if (*CAT(v, unsigned, d->off) >= (1u << NS_MAXRANK))
      return ns_seterr(err, "%s: only axes 1 to %d exist", d->name, NS_MAXRANK);
    break;
  case NS_FT_SEED:
    break;
  case NS_FT_TENSOR: {
    const ns_tensor *t = *CAT(v, ns_tensor *, d->off);
    if (!t && (d->flags & NS_FF_FALSE_RESETS)) {
      *AT(c, ns_tensor *, d->off) = NULL; /* back to the derived one */
      return 0;
    }
    if (!t) return ns_seterr(err, "%s: missing tensor", d->name);
    if (ns_shape_check(t->rank, t->shape, e) != 0) return ns_seterr(err, "%s: %s", d->name, e);
    if (t == *CAT(s, ns_tensor *, d->off)) return 0;  /* unchanged (a patch of the state) */
    *AT(c, ns_tensor *, d->off) = ns_tensor_share(t); /* copy-on-write: no second copy */
    return 0;
  }
  case NS_FT_STRING: {
    const char *t = *CAT(v, char *, d->off);
    if (t == *CAT(s, char *, d->off)) return 0;
    char *cp = dup_string(t);
    if (!cp) return ns_seterr(err, "%s: out of memory", d->name);
    *AT(c, char *, d->off) = cp;
    return 0;
  }
  case NS_FT_DOUBLES: {
    const double *a = *CAT(v, double *, d->off);
    size_t n = count_of(v, d);
    if (!a && (d->flags & NS_FF_FALSE_RESETS)) return 0; /* derived below */
    if (n && !a) return ns_seterr(err, "%s: missing values", d->name);
    for (size_t i = 0; i < n; i++)
      if (!isfinite(a[i]))
        return ns_seterr(err, "%s: element %zu is not finite (%g)", d->name, i + 1, a[i]);
    if (a == *CAT(s, double *, d->off) && n == count_of(s, d)) return 0;
    double *cp = dup_doubles(a, n);
    if (n && !cp) return ns_seterr(err, "%s: out of memory", d->name);
    *AT(c, double *, d->off) = cp;
    *AT(c, size_t, d->count) = n;
    return 0;
  }
  case NS_FT_COUNT:
    return 0;
  }
  return ns_field_copy(c, v, f); /* scalars */
}

/* The field to blame for a spec that does not fit x. */
static const char *spec_blame(const ns_state_patch *p) {
  static const ns_field order[] = {NS_F_GROUPS, NS_F_AXES, NS_F_KIND,  NS_F_X,
                                   NS_F_GAMMA,  NS_F_BETA, NS_F_CENTER};
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
    if (ns_patch_has(p, order[i])) return ns_fields[order[i]].name;
  return "spec";
}

/* Checks a candidate's normalize spec against its x. */
static int check_spec(const ns_state *c, const ns_state_patch *p, char *err) {
  const char *who = spec_blame(p);
  char e[NS_ERRLEN] = "";
  ns_spec spec;
  ns_state_spec(c, &spec);
  unsigned rank_mask = (1u << c->x->rank) - 1u;
  if (c->axes & ~rank_mask) {
    int k = 0;
    while (!((c->axes >> k) & 1u) || ((rank_mask >> k) & 1u)) k++;
    return ns_seterr(err, "%s: axis %d is beyond x's rank %d",
                     ns_patch_has(p, NS_F_AXES) ? "axes" : who, k + 1, c->x->rank);
  }
  ns_norm_plan plan;
  memset(&plan, 0, sizeof plan);
  if (ns_norm_plan_shape(c->x->rank, c->x->shape, &spec, &plan, e) != 0)
    return ns_seterr(err, "%s: %s", who, e[0] ? e : "does not fit x");
  size_t naff = plan.naffine;
  ns_norm_plan_free(&plan);
  if (c->mask && ns_mask_check(c->mask, c->x->rank, c->x->shape, e) != 0) {
    if (ns_patch_has(p, NS_F_MASK)) return ns_seterr(err, "%s", e);
    return ns_seterr(err, "%s: does not fit the mask (%s; set mask too, or mask = false)", who,
                     e + 6); /* e: "mask: ..." */
  }
  static const ns_field aff[2] = {NS_F_GAMMA, NS_F_BETA};
  for (int i = 0; i < 2; i++) {
    const ns_field_desc *d = &ns_fields[aff[i]];
    size_t n = count_of(c, d);
    if (n <= 1 || n == naff) continue;
    if (ns_patch_has(p, aff[i]))
      return ns_seterr(err, "%s: has %zu values, x needs 1 or %zu", d->name, n, naff);
    return ns_seterr(err, "%s: %s has %zu values but would need 1 or %zu (set %s too)", who,
                     d->name, n, naff, d->name);
  }
  return 0;
}

/* The batch matrix: a finite fp64 matrix of at least 2 rows. Converts c->batch in place. */
static int check_batch(ns_state *c, const ns_state *s, char *err) {
  const ns_tensor *b = c->batch;
  char e[NS_ERRLEN];
  if (b->rank != 2)
    return ns_seterr(
        err, "batch: must be a matrix (rows = examples, columns = features), got rank %d", b->rank);
  if (b->shape[0] < 2)
    return ns_seterr(err, "batch: needs at least 2 rows (examples), got %zu", b->shape[0]);
  if (b->n > NS_EXPLORE_MAX_BATCH_ELEMS)
    return ns_seterr(err, "batch: at most %d elements, got %zu", NS_EXPLORE_MAX_BATCH_ELEMS, b->n);
  double *v = malloc(b->n * sizeof *v);
  if (!v) return ns_seterr(err, "batch: out of memory");
  ns_tensor_read(b, v);
  for (size_t i = 0; i < b->n; i++)
    if (!isfinite(v[i])) {
      free(v);
      return ns_seterr(err, "batch: element (%zu,%zu) is not finite", i / b->shape[1] + 1,
                       i % b->shape[1] + 1);
    }
  if (b->dtype != NS_FP64) {
    ns_tensor *t = ns_tensor_from(2, b->shape, NS_FP64, v, e);
    if (!t) {
      free(v);
      return ns_seterr(err, "batch: %s", e);
    }
    if (c->batch != s->batch) ns_tensor_free(c->batch);
    c->batch = t;
  }
  free(v);
  return 0;
}

/* A tensor of finite values (W, upstream). */
static int check_finite_tensor(const char *what, const ns_tensor *t, char *err) {
  for (size_t i = 0; i < t->n; i++)
    if (!isfinite(ns_tensor_get(t, i)))
      return ns_seterr(err, "%s: element %zu is not finite", what, i + 1);
  return 0;
}

int ns_state_apply(ns_state *s, const ns_state_patch *p, char *err) {
  return ns_state_apply_keep(s, p, NULL, NULL, err);
}

int ns_state_apply_keep(ns_state *s, const ns_state_patch *p, ns_state *old, ns_fieldset *replaced,
                        char *err) {
  if (p->set & ~NS_ALLFIELDS) return ns_seterr(err, "patch: unknown field bit");
  ns_state c = *s; /* shares s's arrays until a field replaces one */
  int rc = -1;

  /* 1. every given field, by its type */
  for (int f = 0; f < NS_F_COUNT; f++)
    if (ns_patch_has(p, (ns_field)f) && take_field(&c, s, p, (ns_field)f, err) != 0) goto out;
  /* x set without a source: it no longer comes from the file */
  if (ns_patch_has(p, NS_F_X) && !ns_patch_has(p, NS_F_SOURCE) && c.x != s->x && s->source &&
      s->source[0]) {
    if (!(c.source = dup_string(""))) {
      ns_seterr(err, "source: out of memory");
      goto out;
    }
  }

  /* 2. the combination */
  const ns_fieldset spec_fields = NS_FIELDBIT(NS_F_X) | ns_spec_fieldset(NS_SPEC_SHAPE);
  if ((p->set & spec_fields) && check_spec(&c, p, err) != 0) goto out;
  int reset_baseline = ns_patch_has(p, NS_F_COMPANION) && p->v.companion != s->companion;
  if (c.batch != s->batch) {
    if (check_batch(&c, s, err) != 0) goto out;
    if (c.batch->shape[0] != s->batch->shape[0] || c.batch->shape[1] != s->batch->shape[1])
      reset_baseline = 1;
  }
  if (c.W && c.W != s->W) {
    if (c.W->rank != 2 || c.W->shape[0] != c.W->shape[1]) {
      ns_seterr(err, "W: must be a square matrix (n x n over x, or D x D per row), got %s",
                c.W->rank != 2 ? "another rank" : "a non-square matrix");
      goto out;
    }
    if (check_finite_tensor("W", c.W, err) != 0) goto out;
  }
  if (c.upstream && c.upstream != s->upstream && check_finite_tensor("upstream", c.upstream, err))
    goto out;
  size_t B = c.batch->shape[0], D = c.batch->shape[1];
  if ((size_t)c.target > B) {
    ns_seterr(err, "target: row %d is outside the batch (rows 1 to %zu)", c.target, B);
    goto out;
  }
  if ((size_t)c.companion > B) {
    ns_seterr(err, "companion: row %d is outside the batch (rows 1 to %zu)", c.companion, B);
    goto out;
  }
  if (c.target == c.companion) {
    ns_seterr(err, "%s: target and companion must be different rows (both %d)",
              ns_patch_has(p, NS_F_COMPANION) ? "companion" : "target", c.target);
    goto out;
  }
  int given_baseline = ns_patch_has(p, NS_F_BASELINE) && p->v.baseline;
  if (given_baseline) {
    if (c.nbaseline != D) {
      ns_seterr(err, "baseline: has %zu values, the batch has %zu columns", c.nbaseline, D);
      goto out;
    }
  } else if (reset_baseline || ns_patch_has(p, NS_F_BASELINE)) {
    double *row = malloc(D * sizeof *row);
    if (!row) {
      ns_seterr(err, "baseline: out of memory");
      goto out;
    }
    for (size_t j = 0; j < D; j++)
      row[j] = ns_tensor_get(c.batch, (size_t)(c.companion - 1) * D + j);
    if (c.baseline != s->baseline) free(c.baseline);
    c.baseline = row;
    c.nbaseline = D;
  }
  if ((double)c.train_batches * (double)c.batch_size > 1e6) {
    ns_seterr(err, "%s: train_batches * batch_size must be at most 1000000, got %d * %d",
              ns_patch_has(p, NS_F_BATCH_SIZE) ? "batch_size" : "train_batches", c.train_batches,
              c.batch_size);
    goto out;
  }
  rc = 0;

out:
  if (rc == 0) {
    if (old)
      keep_replaced(s, &c, old, replaced);
    else
      free_new(s, &c); /* s's old arrays that c replaced */
    if (c.x != s->x) ns_state_stamp_x(&c);
    *s = c;
  } else {
    free_new(&c, s);
  }
  return rc;
}

/* ---------------------------------------------------------------- dump */

/* A growing string. */
typedef struct {
  char *b;
  size_t n, cap;
  int oom;
  char spill_err[NS_ERRLEN]; /* a spill that failed: why, or "" */
} strbuf;

static void sb_printf(strbuf *sb, const char *fmt, ...) NS_PRINTF(2, 3);
static void sb_printf(strbuf *sb, const char *fmt, ...) {
  if (sb->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(sb->b ? sb->b + sb->n : NULL, sb->b ? sb->cap - sb->n : 0, fmt, ap);
    va_end(ap);
    if (k < 0) {
      sb->oom = 1;
      return;
    }
    if (sb->b && sb->n + (size_t)k < sb->cap) {
      sb->n += (size_t)k;
      return;
    }
    size_t cap = (sb->cap ? sb->cap * 2 : 256) + (size_t)k + 1;
    char *nb = realloc(sb->b, cap);
    if (!nb) {
      sb->oom = 1;
      return;
    }
    sb->b = nb;
    sb->cap = cap;
  }
}

/* A double that Lua reads back bit for bit. */
static void sb_number(strbuf *sb, double v) {
  if (isnan(v))
    sb_printf(sb, "0/0");
  else if (isinf(v))
    sb_printf(sb, v > 0 ? "1/0" : "-1/0");
  else if (v == 0 && signbit(v))
    sb_printf(sb, "-0.0");
  else { /* %.15g when it reads back as v (1e-07, not 9.9999999999999995e-08), else %.17g */
    char b[40];
    snprintf(b, sizeof b, "%.15g", v);
    if (strtod(b, NULL) != v) snprintf(b, sizeof b, "%.17g", v);
    sb_printf(sb, "%s", b);
  }
}

static void sb_string(strbuf *sb, const char *s) {
  sb_printf(sb, "\"");
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*c == '"' || *c == '\\')
      sb_printf(sb, "\\%c", *c);
    else if (*c < 32 || *c == 127)
      sb_printf(sb, "\\%03d", *c);
    else
      sb_printf(sb, "%c", *c);
  }
  sb_printf(sb, "\"");
}

static void sb_tensor(strbuf *sb, const ns_tensor *t, const char *field, const char *source,
                      const ns_dump_opts *o) {
  char spilled[4096], hex[65] = "";
  size_t inline_max = o->inline_max;
  int sourced = source && source[0], as_given = 0;
  if (o->spill && t->n > inline_max && (o->spill_all || (t->n >= o->spill_min && !sourced))) {
    /* no file holds these values (or the dump carries its own): the spill writes them to
       one, which the state names */
    char e[NS_ERRLEN] = "";
    ns_tensor_digest(t, hex);
    if (o->spill(o->ud, field, t, hex, spilled, sizeof spilled, e) != 0) {
      snprintf(sb->spill_err, sizeof sb->spill_err, "%s: %s", field, e[0] ? e : "not written");
      return;
    }
    source = spilled;
    as_given = o->as_given;
  }
  if (t->n > inline_max && source && source[0]) {
    char *path = dup_string(source);
    if (!path) {
      sb->oom = 1;
      return;
    }
    if (!hex[0]) ns_tensor_digest(t, hex);
    /* "file.safetensors:NAME" names one tensor of the file */
    char *colon = strstr(path, ".safetensors:");
    const char *name = NULL;
    if (colon) {
      colon += strlen(".safetensors");
      *colon = 0;
      name = colon + 1;
    }
    /* the path as an absolute one, so the state loads from any folder (--resume, a demo
     * shared with a class); as typed when the file is gone */
    char *abs = path[0] != '/' && !as_given ? realpath(path, NULL) : NULL;
    sb_printf(sb, "{file = ");
    sb_string(sb, abs ? abs : path);
    free(abs);
    if (name) {
      sb_printf(sb, ", tensor = ");
      sb_string(sb, name);
    }
    sb_printf(sb, ", sha256 = \"%s\"}", hex);
    free(path);
    return;
  }
  sb_printf(sb, "ns.tensor({");
  for (size_t i = 0; i < t->n; i++) {
    if (i) sb_printf(sb, i % 8 ? ", " : ",\n    ");
    sb_number(sb, ns_tensor_get(t, i));
  }
  sb_printf(sb, "}, {");
  for (int k = 0; k < t->rank; k++) sb_printf(sb, "%s%zu", k ? ", " : "", t->shape[k]);
  sb_printf(sb, "}, \"%s\")", ns_dtype_name(t->dtype));
}

const char *ns_dump_field(const char *dump, const char *name, size_t *len) {
  size_t nl = strlen(name);
  for (const char *s = dump; s && *s;) {
    const char *e = strchr(s, '\n');
    if (strncmp(s, "  ", 2) == 0 && strncmp(s + 2, name, nl) == 0 &&
        strncmp(s + 2 + nl, " = ", 3) == 0) {
      while (e && strncmp(e + 1, "   ", 3) == 0) e = strchr(e + 1, '\n');
      *len = e ? (size_t)(e - s) : strlen(s);
      return s;
    }
    s = e ? e + 1 : NULL;
  }
  return NULL;
}

char *ns_state_dump(const ns_state *s, size_t inline_max, char *err) {
  return ns_state_dump_spill(s, inline_max, NULL, NULL, err);
}

char *ns_state_dump_spill(const ns_state *s, size_t inline_max, ns_dump_spill spill, void *ud,
                          char *err) {
  ns_dump_opts o = {inline_max, spill, ud, NS_DUMP_SPILL_MIN, 0, 0};
  return ns_state_dump_with(s, &o, err);
}

char *ns_state_dump_with(const ns_state *s, const ns_dump_opts *o, char *err) {
  strbuf sb = {0};
  sb_printf(&sb, "-- normscope explorer state (load it with :e FILE, load(FILE) or --state)\n");
  sb_printf(&sb, "set{\n");
  for (int f = 0; f < NS_F_COUNT; f++) {
    const ns_field_desc *d = &ns_fields[f];
    sb_printf(&sb, "  %s = ", d->name);
    switch (d->type) {
    case NS_FT_TENSOR:
      if (!*CAT(s, ns_tensor *, d->off))
        sb_printf(&sb, "false");
      else
        sb_tensor(&sb, *CAT(s, ns_tensor *, d->off), d->name, f == NS_F_X ? s->source : NULL, o);
      break;
    case NS_FT_STRING:
      sb_string(&sb, *CAT(s, char *, d->off) ? *CAT(s, char *, d->off) : "");
      break;
    case NS_FT_ENUM:
      if (get_int(s, d) < 0)
        sb_printf(&sb, "\"default\"");
      else
        sb_printf(&sb, "\"%s\"", d->names[get_int(s, d)]);
      break;
    case NS_FT_TRIBOOL:
      sb_printf(&sb, "%s", get_int(s, d) < 0 ? "\"default\"" : get_int(s, d) ? "true" : "false");
      break;
    case NS_FT_AXES: {
      unsigned m = *CAT(s, unsigned, d->off);
      if (!m) {
        sb_printf(&sb, "\"default\"");
        break;
      }
      sb_printf(&sb, "{");
      for (int a = 0, k = 0; a < NS_MAXRANK; a++)
        if ((m >> a) & 1u) sb_printf(&sb, "%s%d", k++ ? ", " : "", a + 1);
      sb_printf(&sb, "}");
      break;
    }
    case NS_FT_INT:
      sb_printf(&sb, "%d", get_int(s, d));
      break;
    case NS_FT_DOUBLE:
      if (isnan(*CAT(s, double, d->off)) && (d->flags & NS_FF_DEFAULT))
        sb_printf(&sb, "\"default\"");
      else
        sb_number(&sb, *CAT(s, double, d->off));
      break;
    case NS_FT_DOUBLES: {
      const double *v = *CAT(s, double *, d->off);
      size_t n = count_of(s, d);
      sb_printf(&sb, "{");
      for (size_t i = 0; i < n; i++) {
        if (i) sb_printf(&sb, ", ");
        sb_number(&sb, v[i]);
      }
      sb_printf(&sb, "}");
      break;
    }
    case NS_FT_SEED: {
      uint64_t v = *CAT(s, uint64_t, d->off);
      if (v > (uint64_t)INT64_MAX)
        sb_printf(&sb, "\"%" PRIu64 "\"", v);
      else
        sb_printf(&sb, "%" PRIu64, v);
      break;
    }
    case NS_FT_MOMENTUM:
      if (s->cumulative)
        sb_printf(&sb, "false");
      else
        sb_number(&sb, s->momentum);
      break;
    case NS_FT_COUNT:
      break;
    }
    sb_printf(&sb, ",\n");
  }
  sb_printf(&sb, "}\n");
  if (sb.oom || sb.spill_err[0]) {
    free(sb.b);
    if (sb.spill_err[0])
      ns_seterr(err, "%s", sb.spill_err);
    else
      ns_seterr(err, "out of memory writing the state");
    return NULL;
  }
  return sb.b;
}

void ns_tensor_digest(const ns_tensor *t, char hex[65]) {
  /* sha256 over "dtype,shape...,sha256(data)": the data is hashed in place, not copied */
  char head[160], dh[65];
  ns_sha256_hex(t->data, t->n * ns_dtype_size(t->dtype), dh);
  int k = snprintf(head, sizeof head, "%s", ns_dtype_name(t->dtype));
  for (int i = 0; i < t->rank; i++)
    k += snprintf(head + k, sizeof head - (size_t)k, ",%zu", t->shape[i]);
  k += snprintf(head + k, sizeof head - (size_t)k, ",%s", dh);
  ns_sha256_hex(head, (size_t)k, hex);
}
