/* scan.c: the audit's streaming passes, in rounds of chunks on threads. See scan.h. */
#include "audit/scan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/split.h"
#include "explore/priv.h"

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
  ns_explore_fail(err, "stopped");
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
  memset(c, 0, sizeof *c);
}

/* Allocates an accumulator holding up to cap statistics. */
static int acc_alloc(sacc *c, size_t cap) {
  c->cap = cap;
  c->m = calloc(cap ? cap : 1, sizeof *c->m);
  if (c->minmax) {
    c->lo = malloc((cap ? cap : 1) * sizeof *c->lo);
    c->hi = malloc((cap ? cap : 1) * sizeof *c->hi);
  }
  return c->m && (!c->minmax || (c->lo && c->hi)) ? 0 : -1;
}

/* Empties an accumulator for statistics [s0, s0 + ns). */
static void acc_reset(sacc *c, size_t s0, size_t ns) {
  c->s0 = s0;
  c->ns = ns;
  memset(c->m, 0, ns * sizeof *c->m);
  for (size_t k = 0; c->minmax && k < ns; k++) c->lo[k] = HUGE_VAL, c->hi[k] = -HUGE_VAL;
}

/* A global accumulator over a map: every statistic at once. */
static int acc_global(sacc *c, int pass, int minmax, const ns_statmap *m, size_t e0, size_t e1) {
  c->on = 1;
  c->pass = pass;
  c->minmax = minmax;
  c->map = *m;
  c->e0 = e0;
  c->e1 = e1;
  if (acc_alloc(c, m->nstat)) return -1;
  acc_reset(c, 0, m->nstat);
  return 0;
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
  free(a->mean);
  free(a->xmean);
  free(a->var);
  free(a->denom);
  free(a->inv);
  free(a->m4);
  free(a->sum.fig_var);
  free(a->sum.fig_z);
  free(a->gap2);
  free(a->gapn);
  for (int k = 0; k < NKEEP; k++) free(a->keep[k]);
  for (int t = 0; a->w && t < a->nw; t++) {
    free(a->w[t].x);
    free(a->w[t].y);
    for (int k = 0; k < A_COUNT; k++) ns_chunk_scratch_free(&a->w[t].sc[k]);
  }
  free(a->w);
  for (size_t q = 0; a->slot && q < a->nslot; q++) {
    for (int k = 0; k < A_COUNT; k++) ns_chunk_record_free(&a->slot[q].rec[k]);
    ns_chunk_record_free(&a->slot[q].pow);
  }
  free(a->slot);
  a->w = NULL;
  a->slot = NULL;
}

int audit_scan_init(actx *a, char *err) {
  ns_audit_report *r = a->r;
  char e[NS_ERRLEN] = "";
  const size_t n = r->n;
  sacc *main = &a->acc[A_MAIN];
  if (ns_statmap_make(r->rank, r->shape, r->axes, r->group_axis, (size_t)r->groups, &main->map, e))
    return ns_explore_fail(err, "%s", e);
  const ns_statmap *mm = &main->map;
  a->coupled = (r->axes & 1u) != 0;
  a->B = r->rank >= 2 ? r->shape[0] : (r->kind == NS_KIND_BATCH ? n : 1);
  a->per = n / a->B;
  /* the layouts' y accumulators (pass 2): within the main windows, or global when small */
  int pm = map_prefix(mm), p = pm;
  ns_statmap alt[NS_LAYOUT_COUNT];
  int alt_on[NS_LAYOUT_COUNT] = {0}, alt_win[NS_LAYOUT_COUNT] = {0};
  for (int l = 0; l < NS_LAYOUT_COUNT; l++) {
    if (ns_layout_rank((ns_layout)l) != r->rank || l == r->layout) continue;
    char e2[NS_ERRLEN];
    unsigned ax = ns_layout_axes(r->kind, (ns_layout)l, e2);
    if ((!ax && r->kind != NS_KIND_GROUP) || ax == r->axes) continue;
    if (ns_statmap_make(r->rank, r->shape, ax, r->group_axis, (size_t)r->groups, &alt[l], e2))
      continue;
    int pa = map_prefix(&alt[l]);
    if (pa >= pm && !a->coupled) {
      alt_on[l] = alt_win[l] = 1;
    } else if (alt[l].nstat <= AUDIT_WINDOW_STATS) {
      alt_on[l] = 1;
    }
  }
  /* windows of whole blocks of the leading p axes */
  a->prefix = p;
  a->nblocks = 1;
  for (int k = 0; k < p; k++) a->nblocks *= r->shape[k];
  a->bsize = n / a->nblocks;
  size_t spb = mm->nstat / a->nblocks, spb_all = spb;
  if (spb > AUDIT_MAX_STATS)
    return ns_explore_fail(err,
                           "%zu statistics would be held at once (the reduction spans the whole "
                           "tensor); the audit holds at most %zu",
                           spb, AUDIT_MAX_STATS);
  for (int l = 0; l < NS_LAYOUT_COUNT; l++)
    if (alt_win[l]) {
      size_t sa = alt[l].nstat / a->nblocks;
      if (spb_all + sa > AUDIT_MAX_STATS) {
        alt_on[l] = alt_win[l] = 0;
        continue;
      }
      spb_all += sa;
    }
  a->wblocks = a->coupled ? 1 : AUDIT_WINDOW_STATS / spb_all;
  if (a->wblocks < 1) a->wblocks = 1;
  if (a->wblocks > a->nblocks) a->wblocks = a->nblocks;
  size_t wcap = a->wblocks * spb;
  /* pass 1 */
  main->on = 1;
  main->pass = 1;
  main->minmax = 1;
  main->windowed = 1;
  main->e0 = 0;
  main->e1 = n;
  if (acc_alloc(main, wcap)) return ns_explore_fail(err, "out of memory for %zu statistics", wcap);
  a->mean = malloc(wcap * sizeof *a->mean);
  a->xmean = malloc(wcap * sizeof *a->xmean);
  a->var = malloc(wcap * sizeof *a->var);
  a->denom = malloc(wcap * sizeof *a->denom);
  a->inv = malloc(wcap * sizeof *a->inv);
  a->m4 = malloc(wcap * sizeof *a->m4);
  if (!a->mean || !a->xmean || !a->var || !a->denom || !a->inv || !a->m4)
    return ns_explore_fail(err, "out of memory for %zu statistics", wcap);
  unsigned all = (1u << r->rank) - 1;
  for (int k = 1; k < r->rank; k++) { /* a layout's channel axis: how its slices differ */
    int cand = 0;
    for (int l = 0; l < NS_LAYOUT_COUNT; l++)
      cand |= ns_layout_rank((ns_layout)l) == r->rank && ns_layout_channel((ns_layout)l) == k;
    if (!cand || r->shape[k] > AUDIT_MAX_STATS) continue;
    ns_statmap mk;
    if (ns_statmap_make(r->rank, r->shape, all & ~(1u << k), -1, 1, &mk, e))
      return ns_explore_fail(err, "%s", e);
    if (a->coupled && mk.axes == mm->axes && mm->group_axis < 0) continue; /* main holds it */
    if (acc_global(&a->acc[A_MARG0 + k], 1, 0, &mk, 0, n))
      return ns_explore_fail(err, "out of memory");
  }
  if (r->rank >= 3 && r->shape[1] >= 2 && r->shape[1] <= AUDIT_MAX_STATS) {
    size_t P = r->shape[1], ps[2] = {n / P, P};
    ns_statmap pm2;
    if (ns_statmap_make(2, ps, 1u, -1, 1, &pm2, e)) return ns_explore_fail(err, "%s", e);
    if (acc_global(&a->acc[A_PERIOD], 1, 0, &pm2, 0, n))
      return ns_explore_fail(err, "out of memory");
  }
  if (a->coupled && a->B >= 1 && r->rank >= 1) {
    size_t shp[NS_MAXRANK];
    memcpy(shp, r->shape, sizeof shp);
    int rank = r->rank;
    if (rank == 1) rank = 1;
    shp[0] = a->B >= 2 ? 2 : 1;
    ns_statmap em;
    if (ns_statmap_make(rank, shp, r->axes & ~1u, r->group_axis, (size_t)r->groups, &em, e))
      return ns_explore_fail(err, "%s", e);
    if (acc_global(&a->acc[A_EX01], 1, 1, &em, 0, shp[0] * a->per))
      return ns_explore_fail(err, "out of memory");
    if (a->B >= 2) {
      a->tail_k = (a->B - 1) / 2 > 0 ? (a->B - 1) / 2 : 1;
      shp[0] = a->tail_k;
      ns_statmap tm;
      if (ns_statmap_make(rank, shp, r->axes, r->group_axis, (size_t)r->groups, &tm, e))
        return ns_explore_fail(err, "%s", e);
      if (acc_global(&a->acc[A_TAIL], 1, 0, &tm, (a->B - a->tail_k) * a->per, n))
        return ns_explore_fail(err, "out of memory");
    }
  }
  /* pass 2 */
  for (int l = 0; l < NS_LAYOUT_COUNT; l++) {
    if (!alt_on[l]) continue;
    sacc *c = &a->acc[A_ALT0 + l];
    if (alt_win[l]) {
      c->on = 1;
      c->pass = 2;
      c->windowed = 1;
      c->map = alt[l];
      c->e0 = 0;
      c->e1 = n;
      if (acc_alloc(c, a->wblocks * (alt[l].nstat / a->nblocks)))
        return ns_explore_fail(err, "out of memory");
    } else if (acc_global(c, 2, 0, &alt[l], 0, n)) {
      return ns_explore_fail(err, "out of memory");
    }
    a->alt_mean[l] = 0;
    a->alt_vlo[l] = HUGE_VAL;
    a->alt_vhi[l] = -HUGE_VAL;
  }
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
  s->fig_stride = (mm->nstat + AUDIT_FIG_MAX - 1) / AUDIT_FIG_MAX;
  if (s->fig_stride < 1) s->fig_stride = 1;
  size_t nfig = (mm->nstat + s->fig_stride - 1) / s->fig_stride;
  s->fig_var = malloc((nfig ? nfig : 1) * sizeof *s->fig_var);
  s->fig_z = malloc((nfig ? nfig : 1) * sizeof *s->fig_z);
  if (!s->fig_var || !s->fig_z) return ns_explore_fail(err, "out of memory");
  for (int k = 0; k < NKEEP; k++) a->keep_at[k] = NS_AUDIT_NOWHERE;
  a->inst_axis = -1;
  if (a->o->run_mean && r->kind == NS_KIND_INSTANCE) {
    for (int k = 1; k < r->rank; k++)
      if (!(r->axes >> k & 1u)) a->inst_axis = k;
    if (a->inst_axis > 0) {
      size_t C = r->shape[a->inst_axis];
      a->gap2 = calloc(C, sizeof *a->gap2);
      a->gapn = calloc(C, sizeof *a->gapn);
      if (!a->gap2 || !a->gapn) return ns_explore_fail(err, "out of memory");
    }
  }
  /* threads, each with a chunk's buffers and a scratch per accumulator */
  size_t chunk = a->chunk, per_thread = 2 * chunk * sizeof(double), est = 0;
  for (int k = 0; k < A_COUNT; k++)
    if (a->acc[k].on) {
      per_thread += a->acc[k].cap * 5 * sizeof(double);
      est += touch_bound(&a->acc[k].map, chunk, a->acc[k].cap);
    }
  int T = a->o->threads < 1                     ? 1
          : a->o->threads > NS_SPLIT_MAXTHREADS ? NS_SPLIT_MAXTHREADS
                                                : a->o->threads;
  while (T > 1 && (size_t)T * per_thread > THREAD_SCRATCH_BYTES) T--;
  size_t R = NS_FILE_MAP_SPAN / (chunk * a->m->elem_size);
  if (R > 256) R = 256;
  while (R > 1 && R * est * sizeof(ns_chunk_entry) > ROUND_RECORD_BYTES) R--;
  if (R < 1) R = 1;
  if ((size_t)T > R) T = (int)R;
  a->threads = T;
  a->nw = T;
  a->w = calloc((size_t)T, sizeof *a->w);
  a->nslot = R;
  a->slot = calloc(R, sizeof *a->slot);
  if (!a->w || !a->slot) return ns_explore_fail(err, "out of memory");
  for (int t = 0; t < T; t++) {
    sworker *w = &a->w[t];
    w->x = malloc(chunk * sizeof *w->x);
    w->y = malloc(chunk * sizeof *w->y);
    if (!w->x || !w->y) return ns_explore_fail(err, "out of memory for the chunk buffers");
    for (int k = 0; k < A_COUNT; k++)
      if (a->acc[k].on && ns_chunk_scratch_init(&w->sc[k], a->acc[k].cap, e))
        return ns_explore_fail(err, "%s", e);
  }
  return 0;
}

/* ---- one pass over a window ------------------------------------------------------------ */

typedef struct {
  actx *a;
  int pass;
  const unsigned char *bytes; /* the round's bytes, from element `first` */
  size_t first, end;          /* the round's elements */
  size_t nchunks;
} sround;

/* The largest |x - mean| of statistic t in the chunk, and where (first of equals). */
static void target_scan(const actx *a, const double *x, size_t first, size_t len, sslot *sl) {
  const sacc *mc = &a->acc[A_MAIN];
  size_t t = a->target;
  if (t < mc->s0 || t >= mc->s0 + mc->ns) return;
  double mu = a->xmean[t - mc->s0];
  ns_runs it;
  size_t off, n, s;
  int step;
  ns_runs_begin(&it, &mc->map, first, len);
  while (ns_runs_next(&it, &off, &n, &s, &step)) {
    size_t j0 = off, j1 = off + n;
    if (step) {
      if (t < s || t >= s + n) continue;
      j0 = off + (t - s);
      j1 = j0 + 1;
    } else if (s != t) {
      continue;
    }
    for (size_t j = j0; j < j1; j++) {
      double d = fabs(x[j] - mu);
      if (d > sl->dev) sl->dev = d, sl->at = first + j;
    }
  }
}

static void chunk_work(actx *a, sworker *w, const sround *rd, size_t q) {
  sslot *sl = &a->slot[q];
  size_t first = rd->first + q * a->chunk;
  size_t len = rd->end - first < a->chunk ? rd->end - first : a->chunk;
  sl->failed = 0;
  sl->nonfinite = sl->over16 = 0;
  sl->dev = -1;
  sl->at = NS_AUDIT_NOWHERE;
  sl->pow.n = 0;
  ns_file_map_decode(a->m, rd->bytes + (first - rd->first) * a->m->elem_size, len, w->x);
  const sacc *mc = &a->acc[A_MAIN];
  if (rd->pass == 2) {
    int any = 0;
    for (int k = A_ALT0; k < A_COUNT; k++) any |= a->acc[k].on;
    if (ns_chunk_powers(&mc->map, mc->s0, w->x, first, len, a->xmean, a->mean, a->inv,
                        any ? w->y : NULL, &w->sc[A_MAIN], &sl->pow))
      sl->failed = 1;
    target_scan(a, w->x, first, len, sl);
  }
  for (int k = 0; k < A_COUNT; k++) {
    const sacc *c = &a->acc[k];
    sl->rec[k].n = 0;
    if (!c->on || c->pass != rd->pass) continue;
    size_t a0 = first > c->e0 ? first : c->e0, a1 = first + len < c->e1 ? first + len : c->e1;
    if (a0 >= a1) continue;
    const double *v = (rd->pass == 1 ? w->x : w->y) + (a0 - first);
    if (ns_chunk_moments(&c->map, c->s0, v, a0 - c->e0, a1 - a0, c->minmax, &w->sc[k], &sl->rec[k]))
      sl->failed = 1;
  }
  if (rd->pass == 1) { /* values that are not finite, or too large for fp16 */
    const ns_chunk_record *mr = &sl->rec[A_MAIN];
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
}

static void round_part(void *ctx, size_t t0, size_t t1) {
  sround *rd = ctx;
  actx *a = rd->a;
  for (size_t t = t0; t < t1; t++) {
    size_t q0 = rd->nchunks * t / (size_t)a->threads,
           q1 = rd->nchunks * (t + 1) / (size_t)a->threads;
    for (size_t q = q0; q < q1; q++) chunk_work(a, &a->w[t], rd, q);
  }
}

static int pass_run(actx *a, int pass, size_t ea, size_t eb, const char *phase, char *err) {
  size_t span = a->nslot * a->chunk;
  for (size_t f = ea; f < eb;) {
    size_t end = eb - f < span ? eb : f + span;
    sround rd = {a, pass, NULL, f, end, (end - f + a->chunk - 1) / a->chunk};
    rd.bytes = ns_file_map_bytes(a->m, f, end - f, err);
    if (!rd.bytes) return -1;
    if (a->threads > 1 && rd.nchunks > 1)
      ns_split_run((size_t)a->threads, a->threads, round_part, &rd);
    else
      round_part(&rd, 0, (size_t)a->threads);
    for (size_t q = 0; q < rd.nchunks; q++) { /* merged in chunk order */
      sslot *sl = &a->slot[q];
      if (sl->failed) return ns_explore_fail(err, "out of memory for a chunk's record");
      for (int k = 0; k < A_COUNT; k++) {
        sacc *c = &a->acc[k];
        if (c->on && c->pass == pass && sl->rec[k].n)
          ns_chunk_merge(&sl->rec[k], c->s0, c->m, c->minmax ? c->lo : NULL,
                         c->minmax ? c->hi : NULL);
      }
      if (pass == 1) {
        a->nonfinite += sl->nonfinite;
        a->over16 += sl->over16;
      } else {
        ns_chunk_add(&sl->pow, a->acc[A_MAIN].s0, a->m4);
        if (sl->dev > a->target_dev) a->target_dev = sl->dev, a->target_at = sl->at;
      }
    }
    audit_progress(a, (double)(end - f), phase);
    if (audit_stopped(a, err)) return -1;
    f = end;
  }
  return 0;
}

/* ---- the summaries of a window --------------------------------------------------------- */

static void list_add(size_t *list, size_t count, size_t s) {
  if (count < 8) list[count] = s;
}

/* After pass 1: what normalizes each statistic, and the summaries that need only that. */
static void window_stats(actx *a) {
  ns_audit_report *r = a->r;
  sacc *mc = &a->acc[A_MAIN];
  ssum *S = &a->sum;
  double thr = 100.0 * r->eps, zbest = -1;
  a->target = mc->s0;
  for (size_t k = 0; k < mc->ns; k++) {
    size_t s = mc->s0 + k;
    double mu = mc->m[k].mean, v = mc->m[k].m2 / mc->m[k].n;
    a->xmean[k] = mu;
    a->mean[k] = a->center ? mu : 0;
    a->var[k] = a->center ? v : v + mu * mu;
    a->denom[k] = sqrt(a->var[k] + r->eps);
    a->inv[k] = 1 / a->denom[k];
    a->m4[k] = 0;
    double vk = a->var[k];
    double z = fmax(mc->hi[k] - a->mean[k], a->mean[k] - mc->lo[k]) / a->denom[k];
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
    if (isfinite(z) && z > zbest) zbest = z, a->target = s;
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
  a->target_dev = -1;
  a->target_at = NS_AUDIT_NOWHERE;
  a->target_pending = 0;
  if (zbest > S->z) { /* a new largest |z|: pass 2 finds its element */
    S->z = zbest;
    S->z_s = a->target;
    a->keep_stat[KEEP_OUTLIER] = a->target;
    a->target_pending = 1;
  }
}

/* y's moments over an accumulator's statistics: the largest |mean| and the range of the
 * variances, into the layout's summary. */
static void alt_summary(actx *a, int l) {
  const sacc *c = &a->acc[A_ALT0 + l];
  for (size_t k = 0; k < c->ns; k++) {
    if (!(c->m[k].n > 0)) continue;
    double mu = fabs(c->m[k].mean), v = c->m[k].m2 / c->m[k].n;
    if (!isfinite(mu) || !isfinite(v)) continue;
    if (mu > a->alt_mean[l]) a->alt_mean[l] = mu;
    if (v < a->alt_vlo[l]) a->alt_vlo[l] = v;
    if (v > a->alt_vhi[l]) a->alt_vhi[l] = v;
  }
}

/* After pass 2: the kurtosis, the outlier's element, the windowed layouts' y. */
static void window_finish(actx *a) {
  sacc *mc = &a->acc[A_MAIN];
  ssum *S = &a->sum;
  for (size_t k = 0; k < mc->ns; k++) {
    double m2 = mc->m[k].m2, kurt = m2 > 0 ? mc->m[k].n * a->m4[k] / (m2 * m2) : NAN;
    if (kurt > S->kurt) S->kurt = kurt, S->kurt_s = mc->s0 + k;
  }
  if (a->target_pending) a->keep_at[KEEP_OUTLIER] = a->target_at;
  for (int l = 0; l < NS_LAYOUT_COUNT; l++)
    if (a->acc[A_ALT0 + l].on && a->acc[A_ALT0 + l].windowed) alt_summary(a, l);
}

int audit_scan_run(actx *a, char *err) {
  ns_audit_report *r = a->r;
  sacc *mc = &a->acc[A_MAIN];
  size_t spb = mc->map.nstat / a->nblocks;
  size_t nwin = (a->nblocks + a->wblocks - 1) / a->wblocks;
  char ph1[96], ph2[96];
  for (size_t b0 = 0; b0 < a->nblocks; b0 += a->wblocks) {
    size_t b1 = b0 + a->wblocks < a->nblocks ? b0 + a->wblocks : a->nblocks;
    size_t w = b0 / a->wblocks + 1;
    if (nwin > 1) {
      snprintf(ph1, sizeof ph1, "pass 1 of 2 (moments), window %zu of %zu", w, nwin);
      snprintf(ph2, sizeof ph2, "pass 2 of 2 (outputs), window %zu of %zu", w, nwin);
    } else {
      snprintf(ph1, sizeof ph1, "pass 1 of 2 (moments)");
      snprintf(ph2, sizeof ph2, "pass 2 of 2 (outputs)");
    }
    acc_reset(mc, b0 * spb, (b1 - b0) * spb);
    for (int l = 0; l < NS_LAYOUT_COUNT; l++) {
      sacc *c = &a->acc[A_ALT0 + l];
      if (!c->on || !c->windowed) continue;
      size_t sa = c->map.nstat / a->nblocks;
      acc_reset(c, b0 * sa, (b1 - b0) * sa);
    }
    size_t ea = b0 * a->bsize, eb = b1 * a->bsize;
    if (pass_run(a, 1, ea, eb, ph1, err)) return -1;
    window_stats(a);
    if (pass_run(a, 2, ea, eb, ph2, err)) return -1;
    window_finish(a);
  }
  for (int l = 0; l < NS_LAYOUT_COUNT; l++)
    if (a->acc[A_ALT0 + l].on && !a->acc[A_ALT0 + l].windowed) alt_summary(a, l);
  r->passes = 2;
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
    if (!a->keep[k]) return ns_explore_fail(err, "out of memory");
    size_t got = audit_read_stat(a, a->keep_stat[k], a->keep[k], want, err);
    if (got == (size_t)-1) return -1;
    a->nkeep[k] = got;
  }
  return 0;
}

/* ---- reading parts of the tensor ---------------------------------------------------------- */

static size_t box_index(const sbox_axis *x, size_t i) {
  return x->list ? x->list[i] : x->start + i;
}

size_t audit_read_box(actx *a, const sbox_axis *ax, double *out, size_t max, char *err) {
  const ns_audit_report *r = a->r;
  int rank = r->rank, last = rank - 1;
  size_t xs[NS_MAXRANK], st = 1, c[NS_MAXRANK] = {0}, got = 0;
  for (int k = rank - 1; k >= 0; k--) xs[k] = st, st *= r->shape[k];
  for (int k = 0; k < rank; k++)
    if (ax[k].count == 0) return 0;
  for (;;) {
    size_t base = 0;
    for (int k = 0; k < last; k++) base += box_index(&ax[k], c[k]) * xs[k];
    const sbox_axis *l = &ax[last];
    if (!l->list) { /* one run along the last axis */
      size_t len = l->count < max - got ? l->count : max - got;
      if (ns_file_map_read(a->m, base + l->start, len, out + got, err)) return (size_t)-1;
      got += len;
    } else {
      for (size_t j = 0; j < l->count && got < max; j++)
        if (ns_file_map_read(a->m, base + l->list[j], 1, out + got++, err)) return (size_t)-1;
    }
    if (got >= max) return got;
    int k = last - 1;
    for (; k >= 0; k--) {
      if (++c[k] < ax[k].count) break;
      c[k] = 0;
    }
    if (k < 0) return got;
  }
}

size_t audit_read_stat(actx *a, size_t s, double *out, size_t max, char *err) {
  size_t lo[NS_MAXRANK], hi[NS_MAXRANK];
  ns_statmap_box(&a->acc[A_MAIN].map, s, lo, hi);
  sbox_axis ax[NS_MAXRANK];
  for (int k = 0; k < a->r->rank; k++) ax[k] = (sbox_axis){NULL, lo[k], hi[k] - lo[k]};
  return audit_read_box(a, ax, out, max, err);
}
