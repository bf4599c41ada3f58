/* stream.c: chunked per-statistic moments with exact pairwise merges. See stream.h. */
#include "core/stream.h"
#include "core/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int ns_statmap_make(int rank, const size_t *shape, unsigned axes, int group_axis, size_t groups,
                    ns_statmap *m, char *err) {
  if (!m || !shape) {
    ns_seterr(err, "no shape or map");
    return -1;
  }
  memset(m, 0, sizeof *m);
  if (ns_shape_check(rank, shape, err)) return -1;
  if (axes >> rank) {
    ns_seterr(err, "reduction axes beyond rank %d", rank);
    return -1;
  }
  if (group_axis >= rank || (group_axis >= 0 && (axes >> group_axis & 1u))) {
    ns_seterr(err, "the grouped axis must be an axis of x that is not reduced");
    return -1;
  }
  if (group_axis >= 0 && (groups < 1 || shape[group_axis] % groups != 0)) {
    ns_seterr(err, "groups (%zu) must divide %zu channels", groups,
              group_axis >= 0 ? shape[group_axis] : 0);
    return -1;
  }
  m->rank = rank;
  m->axes = axes;
  m->group_axis = group_axis;
  m->groups = group_axis >= 0 ? groups : 1;
  m->per_group = group_axis >= 0 ? shape[group_axis] / groups : 1;
  m->n = 1;
  m->stat_rank = rank;
  for (int k = 0; k < NS_MAXRANK; k++) {
    m->shape[k] = k < rank ? shape[k] : 1;
    m->stat_shape[k] = 1;
  }
  for (int k = 0; k < rank; k++) {
    m->n *= shape[k];
    if (k == group_axis)
      m->stat_shape[k] = groups;
    else if (!(axes >> k & 1u))
      m->stat_shape[k] = shape[k];
  }
  size_t st = 1;
  for (int k = rank - 1; k >= 0; k--) {
    m->sstride[k] = (axes >> k & 1u) ? 0 : st;
    st *= m->stat_shape[k];
  }
  m->nstat = st;
  m->count = m->n / st;
  return 0;
}

/* The statistic-index contribution of coordinate c on axis k. */
static size_t contrib(const ns_statmap *m, int k, size_t c) {
  if (k == m->group_axis) return (c / m->per_group) * m->sstride[k];
  return c * m->sstride[k];
}

size_t ns_statmap_stat(const ns_statmap *m, size_t i) {
  size_t s = 0;
  for (int k = m->rank - 1; k >= 0; k--) {
    s += contrib(m, k, i % m->shape[k]);
    i /= m->shape[k];
  }
  return s;
}

void ns_statmap_fill(const ns_statmap *m, size_t first, size_t len, size_t *out) {
  if (len == 0) return;
  int r = m->rank, in = r - 1;
  size_t c[NS_MAXRANK] = {0};
  size_t i = first;
  for (int k = r - 1; k >= 0; k--) {
    c[k] = i % m->shape[k];
    i /= m->shape[k];
  }
  size_t outer = 0; /* contribution of the axes before the innermost */
  for (int k = 0; k < in; k++) outer += contrib(m, k, c[k]);
  size_t w = m->shape[in], done = 0;
  int grouped = in == m->group_axis;
  size_t step = m->sstride[in];
  while (done < len) {
    size_t run = w - c[in];
    if (run > len - done) run = len - done;
    if (step == 0) {
      for (size_t j = 0; j < run; j++) out[done + j] = outer;
    } else if (!grouped) {
      size_t s = outer + c[in] * step;
      for (size_t j = 0; j < run; j++, s += step) out[done + j] = s;
    } else {
      for (size_t j = 0; j < run; j++) out[done + j] = outer + contrib(m, in, c[in] + j);
    }
    done += run;
    c[in] += run;
    if (c[in] == w && done < len) { /* carry into the outer axes */
      c[in] = 0;
      for (int k = in - 1; k >= 0; k--) {
        if (++c[k] < m->shape[k]) break;
        c[k] = 0;
      }
      outer = 0;
      for (int k = 0; k < in; k++) outer += contrib(m, k, c[k]);
    }
  }
}

int ns_stream_init(ns_stream *s, const ns_statmap *m, char *err) {
  if (!s || !m || m->nstat == 0) {
    ns_seterr(err, "no stream or map");
    return -1;
  }
  memset(s, 0, sizeof *s);
  s->map = *m;
  size_t ns = m->nstat;
  s->m = malloc(ns * sizeof *s->m);
  s->sum = calloc(ns, sizeof *s->sum);
  s->cnt = calloc(ns, sizeof *s->cnt);
  s->m2c = calloc(ns, sizeof *s->m2c);
  s->touched = malloc(ns * sizeof *s->touched);
  if (!s->m || !s->sum || !s->cnt || !s->m2c || !s->touched) {
    ns_stream_free(s);
    ns_seterr(err, "out of memory for %zu statistics", ns);
    return -1;
  }
  for (size_t k = 0; k < ns; k++) s->m[k] = (ns_moments){0, 0, 0};
  return 0;
}

void ns_stream_free(ns_stream *s) {
  if (!s) return;
  free(s->m);
  free(s->sum);
  free(s->cnt);
  free(s->m2c);
  free(s->touched);
  free(s->idx);
  memset(s, 0, sizeof *s);
}

int ns_stream_add_idx(ns_stream *s, const double *x, const size_t *idx, size_t len, char *err) {
  if (!s || !s->m || (len && (!x || !idx))) {
    ns_seterr(err, "no stream or data");
    return -1;
  }
  if (len > s->map.n - s->pos) {
    ns_seterr(err, "%zu more elements than the tensor's %zu", len - (s->map.n - s->pos), s->map.n);
    return -1;
  }
  /* Elements of one statistic often come in runs (a channel's H x W block, a token's
   * features): each run is summed with four accumulators, which breaks the chain of
   * dependent additions; the order of a chunk's sum changes, its value only by rounding. */
  size_t nt = 0;
  for (size_t j = 0; j < len;) { /* pass 1: counts and sums of the chunk */
    size_t k = idx[j], e = j + 1;
    while (e < len && idx[e] == k) e++;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t q = j;
    for (; q + 4 <= e; q += 4) {
      s0 += x[q];
      s1 += x[q + 1];
      s2 += x[q + 2];
      s3 += x[q + 3];
    }
    for (; q < e; q++) s0 += x[q];
    if (s->cnt[k] == 0) s->touched[nt++] = k;
    s->cnt[k] += (double)(e - j);
    s->sum[k] += (s0 + s1) + (s2 + s3);
    j = e;
  }
  for (size_t t = 0; t < nt; t++) { /* sum[] becomes the chunk mean */
    size_t k = s->touched[t];
    s->sum[k] /= s->cnt[k];
  }
  for (size_t j = 0; j < len;) { /* pass 2: squared deviations from the chunk mean */
    size_t k = idx[j], e = j + 1;
    while (e < len && idx[e] == k) e++;
    double mu = s->sum[k], s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t q = j;
    for (; q + 4 <= e; q += 4) {
      double d0 = x[q] - mu, d1 = x[q + 1] - mu, d2 = x[q + 2] - mu, d3 = x[q + 3] - mu;
      s0 += d0 * d0;
      s1 += d1 * d1;
      s2 += d2 * d2;
      s3 += d3 * d3;
    }
    for (; q < e; q++) {
      double d = x[q] - mu;
      s0 += d * d;
    }
    s->m2c[k] += (s0 + s1) + (s2 + s3);
    j = e;
  }
  for (size_t t = 0; t < nt; t++) { /* merge each chunk statistic into the total */
    size_t k = s->touched[t];
    ns_moments c = {s->cnt[k], s->sum[k], s->m2c[k]};
    s->m[k] = s->m[k].n == 0 ? c : ns_moments_merge(s->m[k], c);
    s->cnt[k] = s->sum[k] = s->m2c[k] = 0;
  }
  s->pos += len;
  return 0;
}

int ns_stream_add(ns_stream *s, const double *x, size_t len, char *err) {
  if (!s || !s->m || (len && !x)) {
    ns_seterr(err, "no stream or data");
    return -1;
  }
  if (len > s->map.n - s->pos) {
    ns_seterr(err, "%zu more elements than the tensor's %zu", len - (s->map.n - s->pos), s->map.n);
    return -1;
  }
  if (s->idxcap < len) {
    size_t *ni = realloc(s->idx, len * sizeof *ni);
    if (!ni) {
      ns_seterr(err, "out of memory for a chunk of %zu elements", len);
      return -1;
    }
    s->idx = ni;
    s->idxcap = len;
  }
  ns_statmap_fill(&s->map, s->pos, len, s->idx);
  return ns_stream_add_idx(s, x, s->idx, len, err);
}
