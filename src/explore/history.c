/* history.c: undo/redo steps that keep only what changed. See history.h.
 *
 * The step lists and the element lists are charged blocks (ns_mem_alloc): a sandbox's
 * explorers count them against its memory cap, as they do the tensors the steps keep. */
#include "explore/history.h"

#include <stdlib.h>
#include <string.h>

#include "explore/state_priv.h"

#define AT(s, T, off) ((T *)((char *)(s) + (off)))

static int owns_array(ns_ftype t) {
  return t == NS_FT_TENSOR || t == NS_FT_STRING || t == NS_FT_DOUBLES;
}

static void step_free(ns_history_step *st) {
  for (int f = 0; f < NS_F_COUNT; f++) {
    const ns_field_desc *d = &ns_fields[f];
    if (!(st->set & NS_FIELDBIT(f)) || !owns_array(d->type)) continue;
    if (d->type == NS_FT_TENSOR)
      ns_tensor_free(*AT(&st->v, ns_tensor *, d->off));
    else
      free(*AT(&st->v, void *, d->off));
  }
  ns_mem_free(st->dx_idx);
  ns_mem_free(st->dx_val);
  memset(st, 0, sizeof *st);
}

static size_t step_bytes(const ns_history_step *st) {
  size_t b = sizeof *st + st->ndx * sizeof(size_t);
  if (st->ndx && st->v.x == NULL && st->dx_val) b += st->ndx * 8;
  for (int f = 0; f < NS_F_COUNT; f++) {
    const ns_field_desc *d = &ns_fields[f];
    if (!(st->set & NS_FIELDBIT(f))) continue;
    if (d->type == NS_FT_TENSOR) {
      const ns_tensor *t = *AT((ns_state *)&st->v, ns_tensor *, d->off);
      if (t) b += t->n * ns_dtype_size(t->dtype);
    } else if (d->type == NS_FT_DOUBLES) {
      b += *AT((ns_state *)&st->v, size_t, d->count) * sizeof(double);
    }
  }
  return b;
}

size_t ns_history_bytes(const ns_history *h) {
  size_t b = 0;
  for (size_t i = 0; i < h->nundo; i++) b += step_bytes(&h->undo[i]);
  for (size_t i = 0; i < h->nredo; i++) b += step_bytes(&h->redo[i]);
  return b;
}

void ns_history_init(ns_history *h, size_t depth) {
  memset(h, 0, sizeof *h);
  h->depth = depth ? depth : 1;
  h->max_bytes = NS_HISTORY_MAX_BYTES;
}

static void free_stack(ns_history_step **v, size_t *n) {
  for (size_t i = 0; i < *n; i++) step_free(&(*v)[i]);
  ns_mem_free(*v);
  *v = NULL;
  *n = 0;
}

void ns_history_free(ns_history *h) {
  free_stack(&h->undo, &h->nundo);
  free_stack(&h->redo, &h->nredo);
}

/* Drops the oldest undo steps while the steps exceed max_bytes (keeping one). */
static void history_trim(ns_history *h) {
  size_t total = ns_history_bytes(h), drop = 0;
  while (total > h->max_bytes && h->nundo - drop > 1) total -= step_bytes(&h->undo[drop++]);
  if (drop == 0) return;
  for (size_t i = 0; i < drop; i++) step_free(&h->undo[i]);
  memmove(h->undo, h->undo + drop, (h->nundo - drop) * sizeof *h->undo);
  h->nundo -= drop;
}

/* Takes ownership of *st (moved into the stack; freed on failure). */
static int stack_push(ns_history_step **v, size_t *n, size_t depth, ns_history_step *st,
                      char *err) {
  if (*n >= depth) { /* drop the oldest */
    step_free(&(*v)[0]);
    memmove(*v, *v + 1, (*n - 1) * sizeof **v);
    (*n)--;
  }
  ns_history_step *nv = ns_mem_realloc(*v, (*n + 1) * sizeof **v);
  if (!nv) {
    step_free(st);
    return ns_seterr(err, "out of memory recording the undo step");
  }
  *v = nv;
  nv[(*n)++] = *st;
  return 0;
}

static void swap_bytes(void *a, void *b, size_t n) {
  unsigned char tmp[16];
  memcpy(tmp, a, n);
  memcpy(a, b, n);
  memcpy(b, tmp, n);
}

/* Bytes of the member of a field of type t (but momentum, which is two members). */
static size_t member_size(ns_ftype t) {
  switch (t) {
  case NS_FT_DOUBLE:
    return sizeof(double);
  case NS_FT_SEED:
    return sizeof(uint64_t);
  case NS_FT_AXES:
    return sizeof(unsigned);
  case NS_FT_TENSOR:
  case NS_FT_STRING:
  case NS_FT_DOUBLES:
    return sizeof(void *);
  default:
    return sizeof(int);
  }
}

/* Swaps the values of the step's fields between s and the step (x's element list too). -1
 * (nothing changed) when x is shared and there is no memory for a copy of its own. */
static int step_swap(ns_history_step *st, ns_state *s) {
  if (st->ndx && !st->v.x && ns_tensor_unshare(&s->x) != 0) return -1; /* written in place */
  for (int f = 0; f < NS_F_COUNT; f++) {
    const ns_field_desc *d = &ns_fields[f];
    if (!(st->set & NS_FIELDBIT(f))) continue;
    if (f == NS_F_X && !st->v.x) continue; /* the element list below */
    switch (d->type) {
    case NS_FT_MOMENTUM: {
      double m = s->momentum;
      int c = s->cumulative;
      s->momentum = st->v.momentum;
      s->cumulative = st->v.cumulative;
      st->v.momentum = m;
      st->v.cumulative = c;
      break;
    }
    case NS_FT_DOUBLES:
      swap_bytes((char *)s + d->count, (char *)&st->v + d->count, sizeof(size_t));
      swap_bytes((char *)s + d->off, (char *)&st->v + d->off, sizeof(void *));
      break;
    default:
      swap_bytes((char *)s + d->off, (char *)&st->v + d->off, member_size(d->type));
      break;
    }
  }
  if (st->ndx && !st->v.x) {
    size_t es = ns_dtype_size(s->x->dtype);
    unsigned char *data = s->x->data;
    for (size_t k = 0; k < st->ndx; k++)
      swap_bytes(data + st->dx_idx[k] * es, st->dx_val + k * es, es);
    ns_state_stamp_x_at(s, st->dx_idx, st->ndx); /* written in place */
  } else if (st->set & NS_FIELDBIT(NS_F_X)) {
    ns_state_stamp_x(s); /* another tensor */
  }
  return 0;
}

/* Turns the change of x (old -> cur, same shape and dtype) into an element list when few
 * elements changed. 1 if it did (old may then be freed), 0 to keep the copy. */
static int x_as_list(ns_history_step *st, const ns_tensor *old, const ns_tensor *cur) {
  if (old->rank != cur->rank || old->dtype != cur->dtype || old->n != cur->n) return 0;
  for (int k = 0; k < old->rank; k++)
    if (old->shape[k] != cur->shape[k]) return 0;
  size_t es = ns_dtype_size(old->dtype), n = old->n, limit = n / 16 + 1, cnt = 0;
  const unsigned char *a = old->data, *b = cur->data;
  for (size_t i = 0; i < n; i++)
    if (memcmp(a + i * es, b + i * es, es) != 0 && ++cnt > limit) return 0;
  st->dx_idx = ns_mem_alloc((cnt ? cnt : 1) * sizeof *st->dx_idx);
  st->dx_val = ns_mem_alloc((cnt ? cnt : 1) * es);
  if (!st->dx_idx || !st->dx_val) {
    ns_mem_free(st->dx_idx);
    ns_mem_free(st->dx_val);
    st->dx_idx = NULL;
    st->dx_val = NULL;
    return 0;
  }
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (memcmp(a + i * es, b + i * es, es) != 0) {
      st->dx_idx[k] = i;
      memcpy(st->dx_val + k * es, a + i * es, es);
      k++;
    }
  st->ndx = cnt;
  return 1;
}

int ns_history_push(ns_history *h, const ns_state *s, char *err) {
  ns_history_step st;
  memset(&st, 0, sizeof st);
  if (ns_state_copy(&st.v, s, err) != 0) return -1;
  st.set = NS_ALLFIELDS;
  free_stack(&h->redo, &h->nredo);
  if (stack_push(&h->undo, &h->nundo, h->depth, &st, err) != 0) return -1;
  history_trim(h);
  return 0;
}

int ns_history_apply(ns_history *h, ns_state *s, const ns_state_patch *p, char *err) {
  if (!h) return ns_state_apply(s, p, err);
  ns_history_step st;
  memset(&st, 0, sizeof st);
  ns_fieldset replaced = 0;
  if (ns_state_apply_keep(s, p, &st.v, &replaced, err) != 0) return -1;
  /* st.v: the old values; it owns the arrays the patch replaced, NULL where s kept them */
  for (int f = 0; f < NS_F_COUNT; f++) {
    const ns_field_desc *d = &ns_fields[f];
    int arr = owns_array(d->type), was_replaced = (replaced & NS_FIELDBIT(f)) != 0;
    int changed = (!arr || was_replaced) && !ns_field_equal((ns_field)f, &st.v, s);
    if (was_replaced && !changed) { /* replaced by an equal copy: nothing to keep */
      void *old = *AT(&st.v, void *, d->off);
      if (d->type == NS_FT_TENSOR)
        ns_tensor_free(old);
      else
        free(old);
      *AT(&st.v, void *, d->off) = NULL;
    }
    if (changed) st.set |= NS_FIELDBIT(f);
  }
  if ((st.set & NS_FIELDBIT(NS_F_X)) && x_as_list(&st, st.v.x, s->x)) {
    ns_tensor_free(st.v.x);
    st.v.x = NULL;
  }
  if (!st.set) {
    step_free(&st);
    return 0;
  }
  /* the step's room first: when a sandbox's memory cap refuses it, the change is taken
     back and refused (its message is the sandbox's), rather than kept without its undo */
  if (h->nundo < h->depth) {
    ns_history_step *nv = ns_mem_realloc(h->undo, (h->nundo + 1) * sizeof *nv);
    if (!nv) {
      (void)step_swap(&st, s);
      step_free(&st);
      return ns_seterr(err, "no memory to record the undo step (nothing changed)");
    }
    h->undo = nv;
  }
  free_stack(&h->redo, &h->nredo);
  if (stack_push(&h->undo, &h->nundo, h->depth, &st, NULL) == 0) history_trim(h);
  return 0; /* applied (even if the undo step could not be recorded) */
}

int ns_history_set_x(ns_history *h, ns_state *s, size_t i, double v, char *err) {
  if (!h || !s || i >= s->x->n)
    return ns_seterr(err, "x: element %zu does not exist (%zu elements)", i + 1, s ? s->x->n : 0);
  ns_history_step st;
  memset(&st, 0, sizeof st);
  size_t es = ns_dtype_size(s->x->dtype);
  st.dx_idx = ns_mem_alloc(sizeof *st.dx_idx);
  st.dx_val = ns_mem_alloc(es);
  if (!st.dx_idx || !st.dx_val) {
    step_free(&st);
    return ns_seterr(err, "x: out of memory");
  }
  if (ns_tensor_unshare(&s->x) != 0) { /* others hold this x: a copy of its own first */
    step_free(&st);
    return ns_seterr(err, "x: out of memory");
  }
  unsigned char *at = (unsigned char *)s->x->data + i * es;
  memcpy(st.dx_val, at, es);
  ns_tensor_set(s->x, i, v);
  ns_state_stamp_x_at(s, &i, 1);
  if (memcmp(st.dx_val, at, es) == 0) { /* the same bits: nothing to undo */
    step_free(&st);
    return 0;
  }
  st.set = NS_FIELDBIT(NS_F_X);
  st.dx_idx[0] = i;
  st.ndx = 1;
  if (s->source && s->source[0]) {
    /* x no longer holds the file's values: the source goes, and the step brings it back
       (the element is written in place all the same: a copy of a 64 MB x would cost the
       copy, and the explorer a full recompute instead of the touched statistic's) */
    char *none = malloc(1);
    if (!none) { /* put the element back: nothing changed */
      memcpy(at, st.dx_val, es);
      ns_state_stamp_x_at(s, &i, 1);
      step_free(&st);
      return ns_seterr(err, "x: out of memory");
    }
    none[0] = 0;
    st.v.source = s->source;
    s->source = none;
    st.set |= NS_FIELDBIT(NS_F_SOURCE);
  }
  free_stack(&h->redo, &h->nredo);
  if (stack_push(&h->undo, &h->nundo, h->depth, &st, NULL) == 0) history_trim(h);
  return 0;
}

static int history_move(ns_history_step **from, size_t *nfrom, ns_history_step **to, size_t *nto,
                        size_t depth, ns_state *s) {
  if (*nfrom == 0) return 0;
  if (step_swap(&(*from)[*nfrom - 1], s) != 0) return 0;
  ns_history_step st = (*from)[--(*nfrom)];
  (void)stack_push(to, nto, depth, &st, NULL); /* on failure the step is freed: no redo */
  return 1;
}

int ns_history_undo(ns_history *h, ns_state *s) {
  return history_move(&h->undo, &h->nundo, &h->redo, &h->nredo, (size_t)-1, s);
}

int ns_history_redo(ns_history *h, ns_state *s) {
  return history_move(&h->redo, &h->nredo, &h->undo, &h->nundo, h->depth, s);
}
