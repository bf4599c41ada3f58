/* scan.c: the audit's streaming pass, in rounds of chunks on threads. See scan.h. */
#include "audit/scan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/split.h"
#include "explore/state_priv.h"

#define FP16_MAX 65504.0
/* The records a round may hold at once, and the scratch per thread (bytes). */
#define ROUND_RECORD_BYTES ((size_t)64 << 20)
#define THREAD_SCRATCH_BYTES ((size_t)96 << 20)

void audit_progress(actx *a, double add, const char *phase) {
  a->done += add;
  if (a->done > a->total) a->done = a->total;
  if (phase) a->phase = phase;
  if (a->o->phase && phase) a->o->phase(a->o->progress_ctx, phase);
  if (a->o->progress) a->o->progress(a->o->progress_ctx, a->total > 0 ? a->done / a->total : 1);
}

int audit_stopped(const actx *a, char *err) {
  if (!a->o->stop || !a->o->stop(a->o->progress_ctx)) return 0;
  ns_seterr(err, "stopped");
  return 1;
}

/* The leading axes a map leaves unreduced and ungrouped: its statistics lie within the
 * blocks of those axes. */
static int map_prefix(const ns_statmap *m) {
  int p = 0;
  while (p < m->rank && !(m->axes >> p & 1u) && p != m->group_axis) p++;
  return p;
}

static void acc_free(sacc *c) {
  free(c->m);
  free(c->lo);
  free(c->hi);
  free(c->m3);
  free(c->m4);
  memset(c, 0, sizeof *c);
}

/* An accumulator over map m and elements [e0, e1), holding up to cap statistics. */
static int acc_make(sacc *c, unsigned flags, int windowed, const ns_statmap *m, size_t e0,
                    size_t e1, size_t cap) {
  c->on = 1;
  c->from = -1;
  c->flags = flags;
  c->windowed = windowed;
  c->map = *m;
  c->e0 = e0;
  c->e1 = e1;
  c->cap = cap;
  size_t k = cap ? cap : 1;
  c->m = calloc(k, sizeof *c->m);
  if (flags & NS_CHUNK_MINMAX) {
    c->lo = malloc(k * sizeof *c->lo);
    c->hi = malloc(k * sizeof *c->hi);
  }
  if (flags & NS_CHUNK_POWERS) {
    c->m3 = calloc(k, sizeof *c->m3);
    c->m4 = calloc(k, sizeof *c->m4);
  }
  int ok = c->m && (!(flags & NS_CHUNK_MINMAX) || (c->lo && c->hi)) &&
           (!(flags & NS_CHUNK_POWERS) || (c->m3 && c->m4));
  return ok ? 0 : -1;
}

/* Empties an accumulator for statistics [s0, s0 + ns). */
static void acc_reset(sacc *c, size_t s0, size_t ns) {
  c->s0 = s0;
  c->ns = ns;
  memset(c->m, 0, ns * sizeof *c->m);
  if (c->m3) memset(c->m3, 0, ns * sizeof *c->m3), memset(c->m4, 0, ns * sizeof *c->m4);
  for (size_t k = 0; c->lo && k < ns; k++) c->lo[k] = HUGE_VAL, c->hi[k] = -HUGE_VAL;
}

/* The most distinct statistics a chunk of `chunk` elements can touch in map m. */
static size_t touch_bound(const ns_statmap *m, size_t chunk, size_t cap) {
  ns_runs it;
  ns_runs_begin(&it, m, 0, m->n);
  size_t b = it.plain ? chunk : chunk / (it.key < 0 ? m->n : it.inner) + 2;
  return b < cap ? b : cap;
}

void audit_scan_free(actx *a) {
  for (int k = 0; k < A_COUNT; k++) acc_free(&a->acc[k]);
  for (int l = 0; l < NS_LAYOUT_COUNT; l++) free(a->alt[l].m);
  free(a->mean);
  free(a->var);
  free(a->denom);
  free(a->sum.fig_var);
  free(a->sum.fig_z);
  free(a->gap2);
  free(a->gapn);
  for (int k = 0; k < NKEEP; k++) free(a->keep[k]);
  for (int t = 0; a->w && t < a->nw; t++) {
    free(a->w[t].x);
    free(a->w[t].raw);
    for (int k = 0; k < A_COUNT; k++) ns_chunk_scratch_free(&a->w[t].sc[k]);
  }
  free(a->w);
  for (size_t q = 0; a->slot && q < a->nslot; q++)
    for (int k = 0; k < A_COUNT; k++) ns_chunk_record_free(&a->slot[q].rec[k]);
  free(a->slot);
  a->w = NULL;
  a->slot = NULL;
}

/* The layouts whose y the axes check reports: each a map of the same kind with that
 * layout's axes, and the joint map of the pieces it shares with the main statistics. */
static int alt_init(actx *a, int pm, char *err) {
  ns_audit_report *r = a->r;
  for (int l = 0; l < NS_LAYOUT_COUNT; l++) {
    salt *t = &a->alt[l];
    if (ns_layout_rank((ns_layout)l) != r->rank || l == r->layout) continue;
    char e2[NS_ERRLEN];
    unsigned ax = ns_layout_axes(r->kind, (ns_layout)l, e2);
    if ((!ax && r->kind != NS_KIND_GROUP) || ax == r->axes) continue;
    if (ns_statmap_make(r->rank, r->shape, ax, r->group_axis, (size_t)r->groups, &t->map, e2))
      continue;
    if (!a->coupled && map_prefix(&t->map) >= pm)
      t->on = t->windowed = 1; /* its statistics lie within the main windows */
    else if (t->map.nstat <= AUDIT_WINDOW_STATS)
      t->on = 1; /* few enough to hold them all */
    (void)err;
  }
  return 0;
}

/* The batch kinds' per-position means (the layout check's period) and examples 1 and 2
 * and the last k (the batch checks). */
static int batch_accs(actx *a, const ns_statmap *mm, const ns_statmap *em, char *err) {
  ns_audit_report *r = a->r;
  char e[NS_ERRLEN] = "";
  const size_t n = r->n;
  const ns_statmap mmap = *mm, emap = *em;
  if (r->rank >= 3 && r->shape[1] >= 2 && r->shape[1] <= AUDIT_MAX_STATS) {
    size_t P = r->shape[1], ps[2] = {n / P, P};
    ns_statmap pm2;
    if (ns_statmap_make(2, ps, 1u, -1, 1, &pm2, e)) return ns_seterr(err, "%s", e);
    if (acc_make(&a->acc[A_PERIOD], NS_CHUNK_MEANS, 0, &pm2, 0, n, P))
      return ns_seterr(err, "out of memory");
    acc_reset(&a->acc[A_PERIOD], 0, P);
  }
  if (a->coupled) { /* examples 1 and 2, and the last k, for the batch checks */
    sacc *ex = &a->acc[A_EX01], *tl = &a->acc[A_TAIL];
    size_t ne = (a->B >= 2 ? 2 : 1) * mmap.nstat;
    if (acc_make(ex, NS_CHUNK_MINMAX, 0, &emap, 0, n, ne)) return ns_seterr(err, "out of memory");
    ex->from = A_EXAMPLE;
    ex->e1 = ne; /* the example map's statistics it takes: [e0, e1) */
    acc_reset(ex, 0, ne);
    if (a->B >= 2) {
      a->tail_k = (a->B - 1) / 2 > 0 ? (a->B - 1) / 2 : 1;
      if (acc_make(tl, 0, 0, &emap, 0, n, mmap.nstat)) return ns_seterr(err, "out of memory");
      tl->from = A_EXAMPLE;
      tl->e0 = (a->B - a->tail_k) * mmap.nstat;
      tl->e1 = emap.nstat;
      acc_reset(tl, 0, mmap.nstat);
    }
  }
  return 0;
}

/* The joint accumulators of the layouts the axes check reports, and their y summaries. */
static int alt_accs(actx *a, const ns_statmap *joint, char *err) {
  const size_t n = a->r->n;
  for (int l = 0; l < NS_LAYOUT_COUNT; l++) {
    salt *t = &a->alt[l];
    if (!t->on) continue;
    size_t jcap = a->coupled ? joint[l].nstat : a->wblocks * (joint[l].nstat / a->nblocks);
    if (!t->from_main && acc_make(&a->acc[A_JOINT0 + l], 0, !a->coupled, &joint[l], 0, n, jcap))
      return ns_seterr(err, "out of memory");
    if (a->coupled && !t->from_main) acc_reset(&a->acc[A_JOINT0 + l], 0, jcap);
    t->cap = t->windowed ? a->wblocks * (t->map.nstat / a->nblocks) : t->map.nstat;
    t->m = calloc(t->cap ? t->cap : 1, sizeof *t->m);
    if (!t->m) return ns_seterr(err, "out of memory");
    t->s0 = 0;
    t->ns = t->windowed ? 0 : t->map.nstat;
    t->mean = 0;
    t->vlo = HUGE_VAL;
    t->vhi = -HUGE_VAL;
  }
  return 0;
}

/* A layout's channel axis: how its slices differ (the marginals over every other axis). */
static int marginal_accs(actx *a, const ns_statmap *mm, char *err) {
  ns_audit_report *r = a->r;
  char e[NS_ERRLEN] = "";
  const size_t n = r->n;
  const ns_statmap mmap = *mm;
  unsigned all = (1u << r->rank) - 1;
  for (int k = 1; k < r->rank; k++) { /* a layout's channel axis: how its slices differ */
    int cand = 0;
    for (int l = 0; l < NS_LAYOUT_COUNT; l++)
      cand |= ns_layout_rank((ns_layout)l) == r->rank && ns_layout_channel((ns_layout)l) == k;
    if (!cand || r->shape[k] > AUDIT_MAX_STATS) continue;
    ns_statmap mk;
    if (ns_statmap_make(r->rank, r->shape, all & ~(1u << k), -1, 1, &mk, e))
      return ns_seterr(err, "%s", e);
    if (a->coupled && mk.axes == mmap.axes && mmap.group_axis < 0) continue; /* main holds it */
    sacc *c = &a->acc[A_MARG0 + k];
    if (acc_make(c, 0, 0, &mk, 0, n, mk.nstat)) return ns_seterr(err, "out of memory");
    acc_reset(c, 0, mk.nstat);
    /* merged from a finer accumulator that keeps axis k apart, when there is one */
    int srcs[1 + NS_LAYOUT_COUNT], ns = 0;
    srcs[ns++] = A_MAIN;
    for (int l = 0; l < NS_LAYOUT_COUNT; l++)
      if (a->acc[A_JOINT0 + l].on) srcs[ns++] = A_JOINT0 + l;
    for (int q = 0; q < ns && c->from < 0; q++) {
      const ns_statmap *sm = &a->acc[srcs[q]].map;
      if (sm->sstride[k] && sm->group_axis != k) c->from = srcs[q];
    }
  }
  return 0;
}

/* The summaries the checks read, the figure's samples and the instance gaps. */
static int summaries_init(actx *a, const ns_statmap *mm, char *err) {
  ns_audit_report *r = a->r;
  const ns_statmap mmap = *mm;
  /* summaries */
  ssum *s = &a->sum;
  memset(s, 0, sizeof *s);
  s->vmin = HUGE_VAL;
  s->cancel = -1;
  s->z = -1;
  s->kurt = 0;
  s->ymean = 0;
  s->yvlo = HUGE_VAL;
  s->yvhi = -HUGE_VAL;
  s->fig_stride = (mmap.nstat + AUDIT_FIG_MAX - 1) / AUDIT_FIG_MAX;
  if (s->fig_stride < 1) s->fig_stride = 1;
  size_t nfig = (mmap.nstat + s->fig_stride - 1) / s->fig_stride;
  s->fig_var = malloc((nfig ? nfig : 1) * sizeof *s->fig_var);
  s->fig_z = malloc((nfig ? nfig : 1) * sizeof *s->fig_z);
  if (!s->fig_var || !s->fig_z) return ns_seterr(err, "out of memory");
  for (int k = 0; k < NKEEP; k++) a->keep_at[k] = NS_AUDIT_NOWHERE;
  a->inst_axis = -1;
  if (a->o->run_mean && r->kind == NS_KIND_INSTANCE) {
    for (int k = 1; k < r->rank; k++)
      if (!(r->axes >> k & 1u)) a->inst_axis = k;
    if (a->inst_axis > 0) {
      size_t C = r->shape[a->inst_axis];
      a->gap2 = calloc(C, sizeof *a->gap2);
      a->gapn = calloc(C, sizeof *a->gapn);
      if (!a->gap2 || !a->gapn) return ns_seterr(err, "out of memory");
    }
  }
  return 0;
}

/* The threads, each with a chunk's buffer and a scratch per accumulator. */
static int workers_init(actx *a, char *err) {
  char e[NS_ERRLEN] = "";
  /* threads, each with a chunk's buffer and a scratch per accumulator */
  size_t chunk = a->chunk, per_thread = chunk * sizeof(double), est = 0;
  for (int k = 0; k < A_COUNT; k++)
    if (a->acc[k].on && a->acc[k].from < 0) {
      per_thread += a->acc[k].cap * 7 * sizeof(double);
      est += touch_bound(&a->acc[k].map, chunk, a->acc[k].cap);
    }
  int T = a->o->threads < 1                     ? 1
          : a->o->threads > NS_SPLIT_MAXTHREADS ? NS_SPLIT_MAXTHREADS
                                                : a->o->threads;
  while (T > 1 && (size_t)T * per_thread > THREAD_SCRATCH_BYTES) T--;
  size_t R = ((size_t)16 << 20) / (chunk * a->m->elem_size); /* rounds of 16 MB */
  if (R > 256) R = 256;
  while (R > 1 && R * est * sizeof(ns_chunk_entry) > ROUND_RECORD_BYTES) R--;
  if (R < 1) R = 1;
  if ((size_t)T > R) T = (int)R;
  a->threads = T;
  a->nw = T;
  a->w = calloc((size_t)T, sizeof *a->w);
  a->nslot = R;
  a->slot = calloc(R, sizeof *a->slot);
  if (!a->w || !a->slot) return ns_seterr(err, "out of memory");
  for (int t = 0; t < T; t++) {
    sworker *w = &a->w[t];
    w->x = malloc(chunk * sizeof *w->x);
    w->raw = malloc(chunk * a->m->elem_size);
    if (!w->x || !w->raw) return ns_seterr(err, "out of memory for the chunk buffers");
    for (int k = 0; k < A_COUNT; k++)
      if (a->acc[k].on && a->acc[k].from < 0 && ns_chunk_scratch_init(&w->sc[k], a->acc[k].cap, e))
        return ns_seterr(err, "%s", e);
  }
  return 0;
}

int audit_scan_init(actx *a, char *err) {
  ns_audit_report *r = a->r;
  char e[NS_ERRLEN] = "";
  const size_t n = r->n;
  sacc *main = &a->acc[A_MAIN];
  ns_statmap mmap;
  if (ns_statmap_make(r->rank, r->shape, r->axes, r->group_axis, (size_t)r->groups, &mmap, e))
    return ns_seterr(err, "%s", e);
  main->map = mmap;
  a->coupled = (r->axes & 1u) != 0;
  a->B = r->rank >= 2 ? r->shape[0] : (r->kind == NS_KIND_BATCH ? n : 1);
  a->per = n / a->B;
  /* a batch reduction streams each example's statistics (the example map) and merges them */
  ns_statmap emap = mmap;
  if (a->coupled) {
    size_t shp[NS_MAXRANK];
    memcpy(shp, r->shape, sizeof shp);
    int rk = r->rank;
    if (rk == 1) rk = 2, shp[0] = n, shp[1] = 1; /* a vector: each element an example */
    if (ns_statmap_make(rk, shp, (r->axes & ~1u) << (rk - r->rank), r->group_axis,
                        (size_t)r->groups, &emap, e))
      return ns_seterr(err, "%s", e);
    if (mmap.nstat > AUDIT_MAX_STATS)
      return ns_seterr(err,
                       "%zu statistics would be held at once (the reduction spans the "
                       "whole tensor); the audit holds at most %zu",
                       mmap.nstat, AUDIT_MAX_STATS);
  }
  int pm = a->coupled ? 1 : map_prefix(&mmap), p = pm;
  if (alt_init(a, pm, err)) return -1;
  for (int l = 0; l < NS_LAYOUT_COUNT; l++)
    if (a->alt[l].windowed && map_prefix(&a->alt[l].map) < p) p = map_prefix(&a->alt[l].map);
  /* windows of whole blocks of the leading p axes (batch kinds: of examples) */
  a->prefix = p;
  a->nblocks = a->coupled ? a->B : 1;
  for (int k = 0; !a->coupled && k < p; k++) a->nblocks *= r->shape[k];
  a->bsize = n / a->nblocks;
  size_t spb = (a->coupled ? emap.nstat : mmap.nstat) / a->nblocks, spb_all = spb;
  if (spb > AUDIT_MAX_STATS)
    return ns_seterr(err,
                     "%zu statistics would be held at once (the reduction spans the whole "
                     "tensor); the audit holds at most %zu",
                     spb, AUDIT_MAX_STATS);
  ns_statmap joint[NS_LAYOUT_COUNT];
  for (int l = 0; l < NS_LAYOUT_COUNT; l++) {
    salt *t = &a->alt[l];
    if (!t->on) continue;
    unsigned ja = mmap.axes & t->map.axes;
    if (ns_statmap_make(r->rank, r->shape, ja, r->group_axis, (size_t)r->groups, &joint[l], e)) {
      t->on = 0;
      continue;
    }
    t->from_main = joint[l].nstat == mmap.nstat;
    size_t sj = t->from_main ? 0 : a->coupled ? joint[l].nstat : joint[l].nstat / a->nblocks;
    size_t sa = t->windowed ? t->map.nstat / a->nblocks : 0;
    if (spb_all + sj + sa > AUDIT_MAX_STATS) { /* too fine to hold: not reported */
      t->on = 0;
      continue;
    }
    spb_all += sj + sa;
  }
  a->wblocks = AUDIT_WINDOW_STATS / (a->coupled ? spb : spb_all);
  if (a->wblocks < 1) a->wblocks = 1;
  if (a->wblocks > a->nblocks) a->wblocks = a->nblocks;
  size_t wcap = a->coupled ? mmap.nstat : a->wblocks * spb;
  if (acc_make(main, NS_CHUNK_MINMAX | NS_CHUNK_POWERS, !a->coupled, &mmap, 0, n, wcap))
    return ns_seterr(err, "out of memory for %zu statistics", wcap);
  if (a->coupled) {
    main->from = A_EXAMPLE;
    main->e1 = emap.nstat; /* the example map's statistics it takes: all */
    acc_reset(main, 0, mmap.nstat);
    if (acc_make(&a->acc[A_EXAMPLE], NS_CHUNK_MINMAX | NS_CHUNK_POWERS, 1, &emap, 0, n,
                 a->wblocks * spb))
      return ns_seterr(err, "out of memory for %zu statistics", a->wblocks * spb);
  }
  a->mean = malloc(wcap * sizeof *a->mean);
  a->var = malloc(wcap * sizeof *a->var);
  a->denom = malloc(wcap * sizeof *a->denom);
  if (!a->mean || !a->var || !a->denom)
    return ns_seterr(err, "out of memory for %zu statistics", wcap);
  if (batch_accs(a, &mmap, &emap, err)) return -1;
  if (alt_accs(a, joint, err)) return -1;
  if (marginal_accs(a, &mmap, err)) return -1;
  if (summaries_init(a, &mmap, err)) return -1;
  return workers_init(a, err);
}

/* ---- the pass over a window ------------------------------------------------------------ */

typedef struct {
  actx *a;
  size_t first, end; /* the round's elements */
  size_t nchunks;
} sround;

static void chunk_work(actx *a, sworker *w, const sround *rd, size_t q) {
  sslot *sl = &a->slot[q];
  size_t first = rd->first + q * a->chunk;
  size_t len = rd->end - first < a->chunk ? rd->end - first : a->chunk;
  sl->failed = 0;
  sl->nonfinite = sl->over16 = 0;
  for (int k = 0; k < A_COUNT; k++) sl->rec[k].n = 0;
  if (ns_file_map_pread(a->m, first, len, w->raw, w->x, sl->err)) {
    sl->failed = 2;
    return;
  }
  for (int k = 0; k < A_COUNT; k++) {
    const sacc *c = &a->acc[k];
    sl->rec[k].n = 0;
    if (!c->on || c->from >= 0) continue;
    size_t a0 = first > c->e0 ? first : c->e0, a1 = first + len < c->e1 ? first + len : c->e1;
    if (a0 >= a1) continue;
    if (ns_chunk_moments(&c->map, c->s0, w->x + (a0 - first), a0 - c->e0, a1 - a0, c->flags,
                         &sl->rec[k], &w->sc[k]))
      sl->failed = 1;
  }
  /* values that are not finite, or too large for fp16 (from the streamed statistics) */
  const ns_chunk_record *mr = &sl->rec[a->coupled ? A_EXAMPLE : A_MAIN];
  int nf = 0, big = 0;
  for (size_t e = 0; e < mr->n; e++) {
    const ns_chunk_entry *en = &mr->e[e];
    nf |= !isfinite(en->mean) || !isfinite(en->m2);
    big |= en->lo < -FP16_MAX || en->hi > FP16_MAX;
  }
  for (size_t j = 0; (nf || big) && j < len; j++) {
    double v = w->x[j];
    if (!isfinite(v))
      sl->nonfinite++;
    else if (fabs(v) > FP16_MAX)
      sl->over16++;
  }
}

static void round_part(void *ctx, size_t t0, size_t t1) {
  sround *rd = ctx;
  actx *a = rd->a;
  for (size_t t = t0; t < t1; t++) {
    size_t T = (size_t)a->threads, q0 = rd->nchunks * t / T, q1 = rd->nchunks * (t + 1) / T;
    for (size_t q = q0; q < q1; q++) chunk_work(a, &a->w[t], rd, q);
  }
}

static int pass_run(actx *a, size_t ea, size_t eb, const char *phase, char *err) {
  size_t span = a->nslot * a->chunk;
  for (size_t f = ea; f < eb;) {
    size_t end = eb - f < span ? eb : f + span;
    sround rd = {a, f, end, (end - f + a->chunk - 1) / a->chunk};
    if (a->threads > 1 && rd.nchunks > 1)
      ns_split_run((size_t)a->threads, a->threads, round_part, &rd);
    else
      round_part(&rd, 0, (size_t)a->threads);
    for (size_t q = 0; q < rd.nchunks; q++) { /* merged in chunk order */
      sslot *sl = &a->slot[q];
      if (sl->failed == 2) return ns_seterr(err, "%s", sl->err);
      if (sl->failed) return ns_seterr(err, "out of memory for a chunk's record");
      for (int k = 0; k < A_COUNT; k++) {
        sacc *c = &a->acc[k];
        if (c->on && sl->rec[k].n)
          ns_chunk_merge(&sl->rec[k], c->s0, c->m, c->lo, c->hi, c->m3, c->m4);
      }
      a->nonfinite += sl->nonfinite;
      a->over16 += sl->over16;
    }
    audit_progress(a, (double)(end - f), phase);
    if (audit_stopped(a, err)) return -1;
    f = end;
  }
  return 0;
}

/* ---- reading parts of the tensor ------------------------------------------------------- */

int audit_read(actx *a, size_t first, size_t len, double *out, char *err) {
  unsigned char raw[4096 * 8];
  size_t per = sizeof raw / a->m->elem_size;
  for (size_t done = 0; done < len;) {
    size_t k = len - done < per ? len - done : per;
    if (ns_file_map_pread(a->m, first + done, k, raw, out + done, err)) return -1;
    done += k;
  }
  return 0;
}

static size_t box_index(const sbox_axis *x, size_t i) {
  return x->list ? x->list[i] : x->start + i;
}

/* Calls fn on the box's elements in row-major order, a run at a time (its first flat index,
 * its values, its length), until fn returns nonzero. 0, or -1 with err. */
typedef int (*box_fn)(void *ctx, size_t at, const double *v, size_t len);
static int box_visit(actx *a, const sbox_axis *ax, box_fn fn, void *ctx, char *err) {
  const ns_audit_report *r = a->r;
  int rank = r->rank, last = rank - 1;
  size_t xs[NS_MAXRANK], st = 1, c[NS_MAXRANK] = {0};
  for (int k = rank - 1; k >= 0; k--) xs[k] = st, st *= r->shape[k];
  for (int k = 0; k < rank; k++)
    if (ax[k].count == 0) return 0;
  enum { BUF = 4096 };
  double buf[BUF];
  for (;;) {
    size_t base = 0;
    for (int k = 0; k < last; k++) base += box_index(&ax[k], c[k]) * xs[k];
    const sbox_axis *l = &ax[last];
    if (!l->list) { /* runs along the last axis */
      for (size_t j = 0; j < l->count; j += BUF) {
        size_t len = l->count - j < BUF ? l->count - j : BUF, at = base + l->start + j;
        if (audit_read(a, at, len, buf, err)) return -1;
        if (fn(ctx, at, buf, len)) return 0;
      }
    } else {
      for (size_t j = 0; j < l->count; j++) {
        size_t at = base + l->list[j];
        if (audit_read(a, at, 1, buf, err)) return -1;
        if (fn(ctx, at, buf, 1)) return 0;
      }
    }
    int k = last - 1;
    for (; k >= 0; k--) {
      if (++c[k] < ax[k].count) break;
      c[k] = 0;
    }
    if (k < 0) return 0;
  }
}

typedef struct {
  double *out;
  size_t got, max;
} box_copy;

static int copy_fn(void *ctx, size_t at, const double *v, size_t len) {
  box_copy *b = ctx;
  (void)at;
  size_t k = len < b->max - b->got ? len : b->max - b->got;
  memcpy(b->out + b->got, v, k * sizeof *v);
  b->got += k;
  return b->got >= b->max;
}

size_t audit_read_box(actx *a, const sbox_axis *ax, double *out, size_t max, char *err) {
  box_copy b = {out, 0, max};
  if (max && box_visit(a, ax, copy_fn, &b, err)) return (size_t)-1;
  return b.got;
}

/* The box of main statistic s. */
static void stat_box(const actx *a, size_t s, sbox_axis *ax) {
  size_t lo[NS_MAXRANK], hi[NS_MAXRANK];
  ns_statmap_box(&a->acc[A_MAIN].map, s, lo, hi);
  for (int k = 0; k < a->r->rank; k++) ax[k] = (sbox_axis){NULL, lo[k], hi[k] - lo[k]};
}

size_t audit_read_stat(actx *a, size_t s, double *out, size_t max, char *err) {
  sbox_axis ax[NS_MAXRANK];
  stat_box(a, s, ax);
  return audit_read_box(a, ax, out, max, err);
}

typedef struct {
  double mu, dev;
  size_t at;
} box_far;

static int far_fn(void *ctx, size_t at, const double *v, size_t len) {
  box_far *b = ctx;
  for (size_t j = 0; j < len; j++) {
    double d = fabs(v[j] - b->mu);
    if (d > b->dev) b->dev = d, b->at = at + j;
  }
  return 0;
}

/* ---- the summaries of a window --------------------------------------------------------- */

static void list_add(size_t *list, size_t count, size_t s) {
  if (count < 8) list[count] = s;
}

/* What normalizes each statistic of the window, and every summary of the main statistics. */
static int window_stats(actx *a, char *err) {
  ns_audit_report *r = a->r;
  sacc *mc = &a->acc[A_MAIN];
  ssum *S = &a->sum;
  double thr = 100.0 * r->eps, zbest = -1;
  size_t zs = mc->s0;
  for (size_t k = 0; k < mc->ns; k++) {
    size_t s = mc->s0 + k;
    double mu = mc->m[k].mean, v = mc->m[k].m2 / mc->m[k].n;
    a->mean[k] = a->center ? mu : 0;
    a->var[k] = a->center ? v : v + mu * mu;
    a->denom[k] = sqrt(a->var[k] + r->eps);
    double vk = a->var[k];
    double z = fmax(mc->hi[k] - a->mean[k], a->mean[k] - mc->lo[k]) / a->denom[k];
    S->all = S->all.n == 0 ? mc->m[k] : ns_moments_merge(S->all, mc->m[k]);
    if (s % S->fig_stride == 0) {
      S->fig_var[S->fig_n] = vk;
      S->fig_z[S->fig_n] = z;
      S->fig_n++;
    }
    if (!isfinite(mu) || !isfinite(vk)) {
      list_add(S->nan_list, S->nan, s);
      S->nan++;
      continue;
    }
    if (vk < thr || vk == 0) {
      list_add(S->nz_list, S->nz, s);
      S->nz++;
      S->zero += vk == 0;
    } else {
      double ym = fabs(mu - a->mean[k]) / a->denom[k], yv = v / (a->denom[k] * a->denom[k]);
      if (ym > S->ymean) S->ymean = ym;
      if (yv < S->yvlo) S->yvlo = yv;
      if (yv > S->yvhi) S->yvhi = yv;
    }
    if (vk < S->vmin) S->vmin = vk, S->vmin_s = s;
    if (v > 0 && isfinite(v)) { /* variance 0 (a constant) has nothing to cancel */
      double ratio = mu * mu / v;
      if (ratio > S->cancel) S->cancel = ratio, S->cancel_s = s;
    }
    double m2 = mc->m[k].m2, kurt = m2 > 0 ? mc->m[k].n * mc->m4[k] / (m2 * m2) : NAN;
    if (kurt > S->kurt) S->kurt = kurt, S->kurt_s = s;
    if (isfinite(z) && z > zbest) zbest = z, zs = s;
    if (a->gap2) { /* instance norm against the running statistics of its channel */
      size_t c = (s / mc->map.sstride[a->inst_axis]) % mc->map.stat_shape[a->inst_axis];
      if (c < a->o->nrun) {
        double mr = a->o->run_mean[c], vr = a->o->run_var[c];
        double ae = 1 / sqrt(vr + r->eps), at = 1 / sqrt(v + r->eps), d = (mu - mr) * ae;
        a->gap2[c] += d * d + v * (ae - at) * (ae - at);
        a->gapn[c]++;
      }
    }
  }
  if (zbest > S->z) { /* a new largest |z|: read its statistic for the farthest element */
    S->z = zbest;
    S->z_s = zs;
    sbox_axis ax[NS_MAXRANK];
    stat_box(a, zs, ax);
    box_far b = {a->mean[zs - mc->s0], -1, NS_AUDIT_NOWHERE};
    if (box_visit(a, ax, far_fn, &b, err)) return -1;
    a->keep_at[KEEP_OUTLIER] = b.at;
  }
  return 0;
}

/* A marginal from the window's statistics of a finer accumulator: each of those merged into
 * the index it has on axis k. */
static void marg_merge(actx *a, int k) {
  sacc *c = &a->acc[A_MARG0 + k];
  const sacc *f = &a->acc[c->from];
  size_t st = f->map.sstride[k], ext = f->map.stat_shape[k];
  for (size_t q = 0; q < f->ns; q++) {
    if (!(f->m[q].n > 0)) continue;
    size_t i = ((f->s0 + q) / st) % ext;
    c->m[i] = c->m[i].n == 0 ? f->m[q] : ns_moments_merge(c->m[i], f->m[q]);
  }
}

/* y's moments over layout l's statistics, from the pieces they share with the window's
 * main statistics: piece j of main statistic s has x's moments (n, m, M2), so y's are (n,
 * (m - mean_s) / denom_s, M2 / denom_s^2), merged into its layout statistic. */
static void alt_merge(actx *a, int l) {
  salt *t = &a->alt[l];
  const sacc *mc = &a->acc[A_MAIN], *jc = t->from_main ? mc : &a->acc[A_JOINT0 + l];
  for (size_t k = 0; k < jc->ns; k++) {
    size_t j = jc->s0 + k, lo[NS_MAXRANK], hi[NS_MAXRANK];
    if (!(jc->m[k].n > 0)) continue;
    size_t f = ns_statmap_box(&jc->map, j, lo, hi);
    size_t s = ns_statmap_stat(&mc->map, f) - mc->s0, al = ns_statmap_stat(&t->map, f) - t->s0;
    double d = a->denom[s];
    ns_moments y = {jc->m[k].n, (jc->m[k].mean - a->mean[s]) / d, jc->m[k].m2 / (d * d)};
    t->m[al] = t->m[al].n == 0 ? y : ns_moments_merge(t->m[al], y);
  }
}

/* The largest |mean| and the range of the variances of y over layout l's statistics held. */
static void alt_summary(actx *a, int l) {
  salt *t = &a->alt[l];
  for (size_t k = 0; k < t->ns; k++) {
    if (!(t->m[k].n > 0)) continue;
    double mu = fabs(t->m[k].mean), v = t->m[k].m2 / t->m[k].n;
    if (!isfinite(mu) || !isfinite(v)) continue;
    if (mu > t->mean) t->mean = mu;
    if (v < t->vlo) t->vlo = v;
    if (v > t->vhi) t->vhi = v;
  }
}

/* The example accumulator's window merged into an accumulator made from it: example
 * statistic e in [dst->e0, dst->e1) into dst's statistic e % dst->cap, in order. */
static int example_merge(actx *a, sacc *dst, char *err) {
  const sacc *src = &a->acc[A_EXAMPLE];
  ns_chunk_record rec = {0};
  for (size_t k = 0; k < src->ns; k++) {
    size_t e = src->s0 + k;
    if (e < dst->e0 || e >= dst->e1 || !(src->m[k].n > 0)) continue;
    ns_chunk_entry en = {e % dst->cap, src->m[k].n, src->m[k].mean, src->m[k].m2,
                         src->m3[k],   src->m4[k],  src->lo[k],     src->hi[k]};
    if (rec.n == rec.cap) {
      size_t nc = rec.cap ? 2 * rec.cap : 256;
      ns_chunk_entry *q = realloc(rec.e, nc * sizeof *q);
      if (!q) {
        ns_chunk_record_free(&rec);
        return ns_seterr(err, "out of memory");
      }
      rec.e = q;
      rec.cap = nc;
    }
    rec.e[rec.n++] = en;
  }
  ns_chunk_merge(&rec, 0, dst->m, dst->lo, dst->hi, dst->m3, dst->m4);
  ns_chunk_record_free(&rec);
  return 0;
}

/* What needs every statistic of a window (or, for batch kinds, of the whole tensor): the
 * marginals made from them, the summaries, the layouts' y. */
static int stats_done(actx *a, char *err) {
  for (int k = 0; k < NS_MAXRANK; k++)
    if (a->acc[A_MARG0 + k].on && a->acc[A_MARG0 + k].from >= 0) marg_merge(a, k);
  if (window_stats(a, err)) return -1;
  for (int l = 0; l < NS_LAYOUT_COUNT; l++)
    if (a->alt[l].on) {
      alt_merge(a, l);
      if (a->alt[l].windowed) alt_summary(a, l);
    }
  return 0;
}

int audit_scan_run(actx *a, char *err) {
  ns_audit_report *r = a->r;
  sacc *mc = &a->acc[A_MAIN], *ex = &a->acc[A_EXAMPLE];
  sacc *win = a->coupled ? ex : mc; /* the statistics held a window at a time */
  size_t spb = win->map.nstat / a->nblocks;
  size_t nwin = (a->nblocks + a->wblocks - 1) / a->wblocks;
  char ph[96];
  for (size_t b0 = 0; b0 < a->nblocks; b0 += a->wblocks) {
    size_t b1 = b0 + a->wblocks < a->nblocks ? b0 + a->wblocks : a->nblocks;
    if (nwin > 1)
      snprintf(ph, sizeof ph, "streaming, window %zu/%zu", b0 / a->wblocks + 1, nwin);
    else
      snprintf(ph, sizeof ph, "streaming");
    acc_reset(win, b0 * spb, (b1 - b0) * spb);
    for (int l = 0; l < NS_LAYOUT_COUNT; l++) {
      salt *t = &a->alt[l];
      if (!t->on) continue;
      sacc *jc = &a->acc[A_JOINT0 + l];
      if (jc->on && jc->windowed) {
        size_t sj = jc->map.nstat / a->nblocks;
        acc_reset(jc, b0 * sj, (b1 - b0) * sj);
      }
      if (t->windowed) {
        size_t sa = t->map.nstat / a->nblocks;
        t->s0 = b0 * sa;
        t->ns = (b1 - b0) * sa;
        memset(t->m, 0, t->ns * sizeof *t->m);
      }
    }
    if (pass_run(a, b0 * a->bsize, b1 * a->bsize, ph, err)) return -1;
    if (a->coupled) { /* each example's statistics into the batch's, examples 1-2's, the tail's */
      int ds[3] = {A_MAIN, A_EX01, A_TAIL};
      for (int q = 0; q < 3; q++)
        if (a->acc[ds[q]].on && example_merge(a, &a->acc[ds[q]], err)) return -1;
    } else if (stats_done(a, err)) {
      return -1;
    }
  }
  if (a->coupled && stats_done(a, err)) return -1;
  for (int l = 0; l < NS_LAYOUT_COUNT; l++)
    if (a->alt[l].on && !a->alt[l].windowed) alt_summary(a, l);
  r->passes = 1;
  /* the findings' statistics: their first elements, for the explorer */
  ssum *S = &a->sum;
  a->keep_stat[KEEP_DEAD] = S->vmin_s;
  a->keep_stat[KEEP_CANCEL] = S->cancel >= 0 ? S->cancel_s : S->vmin_s;
  a->keep_stat[KEEP_OUTLIER] = S->z >= 0 ? S->z_s : S->vmin_s;
  for (int k = 0; k < NKEEP; k++) {
    size_t lo[NS_MAXRANK], hi[NS_MAXRANK];
    size_t at = ns_statmap_box(&mc->map, a->keep_stat[k], lo, hi);
    if (k != KEEP_OUTLIER || a->keep_at[k] == NS_AUDIT_NOWHERE) a->keep_at[k] = at;
    size_t want = mc->map.count < NS_AUDIT_KEEP ? mc->map.count : NS_AUDIT_KEEP;
    a->keep[k] = malloc(want * sizeof *a->keep[k]);
    if (!a->keep[k]) return ns_seterr(err, "out of memory");
    size_t got = audit_read_stat(a, a->keep_stat[k], a->keep[k], want, err);
    if (got == (size_t)-1) return -1;
    a->nkeep[k] = got;
  }
  return 0;
}
