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

/* ---- chunk records ----------------------------------------------------------------- */

#if defined(__SSE2__)
#include <emmintrin.h>
#define NS_HAVE_SSE2 1
#endif

void ns_runs_begin(ns_runs *it, const ns_statmap *m, size_t first, size_t len) {
  memset(it, 0, sizeof *it);
  it->m = m;
  it->left = len;
  int r = m->rank, last = r - 1;
  size_t i = first;
  for (int k = r - 1; k >= 0; k--) {
    it->c[k] = i % m->shape[k];
    i /= m->shape[k];
  }
  it->key = -1;
  for (int k = last; k >= 0; k--)
    if (!(m->axes >> k & 1u)) {
      it->key = k;
      break;
    }
  it->plain = it->key == last && last != m->group_axis;
  it->inner = 1;
  for (int k = it->key + 1; it->key >= 0 && k < r; k++) it->inner *= m->shape[k];
}

int ns_runs_next(ns_runs *it, size_t *off, size_t *len, size_t *s, int *step) {
  if (it->left == 0) return 0;
  const ns_statmap *m = it->m;
  int r = m->rank, last = r - 1;
  size_t run, st = 0;
  for (int k = 0; k < r; k++) st += contrib(m, k, it->c[k]);
  if (it->plain) {
    run = m->shape[last] - it->c[last];
    *step = 1;
  } else if (it->key < 0) {
    run = it->left;
    *step = 0;
  } else {
    size_t in = 0; /* offset within the block after axis key */
    for (int k = it->key + 1; k < r; k++) in = in * m->shape[k] + it->c[k];
    if (it->key == m->group_axis)
      run = (m->per_group - it->c[it->key] % m->per_group) * it->inner - in;
    else
      run = it->inner - in;
    *step = 0;
  }
  if (run > it->left) run = it->left;
  *off = it->pos;
  *len = run;
  *s = st;
  it->pos += run;
  it->left -= run;
  /* advance the coordinates by run elements */
  size_t carry = run;
  for (int k = last; k >= 0 && carry; k--) {
    size_t v = it->c[k] + carry;
    it->c[k] = v % m->shape[k];
    carry = v / m->shape[k];
  }
  return 1;
}

size_t ns_statmap_box(const ns_statmap *m, size_t s, size_t *lo, size_t *hi) {
  size_t first = 0, xs = 1;
  for (int k = m->rank - 1; k >= 0; k--) {
    size_t a = 0, b = m->shape[k];
    if (m->sstride[k]) {
      size_t c = (s / m->sstride[k]) % m->stat_shape[k];
      if (k == m->group_axis)
        a = c * m->per_group, b = a + m->per_group;
      else
        a = c, b = c + 1;
    }
    lo[k] = a;
    hi[k] = b;
    first += a * xs;
    xs *= m->shape[k];
  }
  return first;
}

int ns_chunk_scratch_init(ns_chunk_scratch *sc, size_t ns, char *err) {
  memset(sc, 0, sizeof *sc);
  sc->ns = ns;
  size_t n = ns ? ns : 1;
  sc->sum = calloc(n, sizeof *sc->sum);
  sc->cnt = calloc(n, sizeof *sc->cnt);
  sc->m2 = calloc(n, sizeof *sc->m2);
  sc->lo = malloc(n * sizeof *sc->lo);
  sc->hi = malloc(n * sizeof *sc->hi);
  if (!sc->sum || !sc->cnt || !sc->m2 || !sc->lo || !sc->hi) {
    ns_chunk_scratch_free(sc);
    ns_seterr(err, "out of memory for the scratch of %zu statistics", ns);
    return -1;
  }
  for (size_t k = 0; k < n; k++) sc->lo[k] = HUGE_VAL, sc->hi[k] = -HUGE_VAL;
  return 0;
}

void ns_chunk_scratch_free(ns_chunk_scratch *sc) {
  if (!sc) return;
  free(sc->sum);
  free(sc->cnt);
  free(sc->m2);
  free(sc->lo);
  free(sc->hi);
  free(sc->rng);
  memset(sc, 0, sizeof *sc);
}

void ns_chunk_record_free(ns_chunk_record *r) {
  if (!r) return;
  free(r->e);
  memset(r, 0, sizeof *r);
}

/* Notes statistics [a, b) as touched (a repeat of the last range is not noted again). */
static int touch(ns_chunk_scratch *sc, size_t a, size_t b) {
  if (sc->nrng && sc->rng[2 * sc->nrng - 2] == a && sc->rng[2 * sc->nrng - 1] == b) return 0;
  if (sc->nrng == sc->rngcap) {
    size_t nc = sc->rngcap ? 2 * sc->rngcap : 256;
    size_t *p = realloc(sc->rng, 2 * nc * sizeof *p);
    if (!p) return -1;
    sc->rng = p;
    sc->rngcap = nc;
  }
  sc->rng[2 * sc->nrng] = a;
  sc->rng[2 * sc->nrng + 1] = b;
  sc->nrng++;
  return 0;
}

static int rec_push(ns_chunk_record *r, const ns_chunk_entry *e) {
  if (r->n == r->cap) {
    size_t nc = r->cap ? 2 * r->cap : 64;
    ns_chunk_entry *p = realloc(r->e, nc * sizeof *p);
    if (!p) return -1;
    r->e = p;
    r->cap = nc;
  }
  r->e[r->n++] = *e;
  return 0;
}

/* sum of x[0..n) with eight lanes */
static double vsum(const double *x, size_t n) {
  size_t i = 0;
#ifdef NS_HAVE_SSE2
  __m128d a0 = _mm_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
  for (; i + 8 <= n; i += 8) {
    a0 = _mm_add_pd(a0, _mm_loadu_pd(x + i));
    a1 = _mm_add_pd(a1, _mm_loadu_pd(x + i + 2));
    a2 = _mm_add_pd(a2, _mm_loadu_pd(x + i + 4));
    a3 = _mm_add_pd(a3, _mm_loadu_pd(x + i + 6));
  }
  __m128d a = _mm_add_pd(_mm_add_pd(a0, a1), _mm_add_pd(a2, a3));
  double t[2];
  _mm_storeu_pd(t, a);
  double r = t[0] + t[1];
#else
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (; i + 4 <= n; i += 4) s0 += x[i], s1 += x[i + 1], s2 += x[i + 2], s3 += x[i + 3];
  double r = (s0 + s1) + (s2 + s3);
#endif
  for (; i < n; i++) r += x[i];
  return r;
}

/* sum of (x - mu)^2 over x[0..n), and (with lo) the smallest and largest x into *lo, *hi */
static double vdev2(const double *x, size_t n, double mu, double *lo, double *hi) {
  size_t i = 0;
  double r, l = lo ? *lo : 0, h = hi ? *hi : 0;
#ifdef NS_HAVE_SSE2
  __m128d m = _mm_set1_pd(mu), a0 = _mm_setzero_pd(), a1 = a0;
  if (lo) {
    __m128d vl = _mm_set1_pd(l), vh = _mm_set1_pd(h);
    for (; i + 4 <= n; i += 4) {
      __m128d x0 = _mm_loadu_pd(x + i), x1 = _mm_loadu_pd(x + i + 2);
      __m128d d0 = _mm_sub_pd(x0, m), d1 = _mm_sub_pd(x1, m);
      a0 = _mm_add_pd(a0, _mm_mul_pd(d0, d0));
      a1 = _mm_add_pd(a1, _mm_mul_pd(d1, d1));
      vl = _mm_min_pd(x0, _mm_min_pd(x1, vl)); /* a NaN x leaves the bound as it was */
      vh = _mm_max_pd(x0, _mm_max_pd(x1, vh));
    }
    double t[2];
    _mm_storeu_pd(t, vl);
    l = t[0] < t[1] ? t[0] : t[1];
    _mm_storeu_pd(t, vh);
    h = t[0] > t[1] ? t[0] : t[1];
  } else {
    for (; i + 4 <= n; i += 4) {
      __m128d d0 = _mm_sub_pd(_mm_loadu_pd(x + i), m), d1 = _mm_sub_pd(_mm_loadu_pd(x + i + 2), m);
      a0 = _mm_add_pd(a0, _mm_mul_pd(d0, d0));
      a1 = _mm_add_pd(a1, _mm_mul_pd(d1, d1));
    }
  }
  double t[2];
  _mm_storeu_pd(t, _mm_add_pd(a0, a1));
  r = t[0] + t[1];
#else
  double s0 = 0, s1 = 0;
  for (; i + 2 <= n; i += 2) {
    double d0 = x[i] - mu, d1 = x[i + 1] - mu;
    s0 += d0 * d0;
    s1 += d1 * d1;
    if (lo) {
      if (x[i] < l) l = x[i];
      if (x[i] > h) h = x[i];
      if (x[i + 1] < l) l = x[i + 1];
      if (x[i + 1] > h) h = x[i + 1];
    }
  }
  r = s0 + s1;
#endif
  for (; i < n; i++) {
    double d = x[i] - mu;
    r += d * d;
    if (lo) {
      if (x[i] < l) l = x[i];
      if (x[i] > h) h = x[i];
    }
  }
  if (lo) *lo = l, *hi = h;
  return r;
}

static void reset_scratch(ns_chunk_scratch *sc, size_t k) {
  sc->sum[k] = sc->cnt[k] = sc->m2[k] = 0;
  sc->lo[k] = HUGE_VAL;
  sc->hi[k] = -HUGE_VAL;
}

int ns_chunk_moments(const ns_statmap *map, size_t s0, const double *x, size_t first, size_t len,
                     int minmax, ns_chunk_scratch *sc, ns_chunk_record *rec) {
  rec->n = 0;
  sc->nrng = 0;
  ns_runs it;
  size_t off, n, s;
  int step;
  /* pass 1: counts and sums */
  ns_runs_begin(&it, map, first, len);
  while (ns_runs_next(&it, &off, &n, &s, &step)) {
    const double *p = x + off;
    size_t k = s - s0;
    if (!step) {
      sc->sum[k] += vsum(p, n);
      sc->cnt[k] += (double)n;
      if (touch(sc, k, k + 1)) return -1;
    } else {
      double *sm = sc->sum + k, *ct = sc->cnt + k;
      for (size_t j = 0; j < n; j++) sm[j] += p[j], ct[j] += 1;
      if (touch(sc, k, k + n)) return -1;
    }
  }
  /* sums become chunk means; a negative count marks a statistic done */
  for (size_t q = 0; q < sc->nrng; q++)
    for (size_t k = sc->rng[2 * q]; k < sc->rng[2 * q + 1]; k++)
      if (sc->cnt[k] > 0) {
        sc->sum[k] /= sc->cnt[k];
        sc->cnt[k] = -sc->cnt[k];
      }
  /* pass 2: squared deviations from the chunk means (and the extremes) */
  ns_runs_begin(&it, map, first, len);
  while (ns_runs_next(&it, &off, &n, &s, &step)) {
    const double *p = x + off;
    size_t k = s - s0;
    if (!step) {
      sc->m2[k] += vdev2(p, n, sc->sum[k], minmax ? &sc->lo[k] : NULL, minmax ? &sc->hi[k] : NULL);
    } else {
      const double *mu = sc->sum + k;
      double *m2 = sc->m2 + k;
      for (size_t j = 0; j < n; j++) {
        double d = p[j] - mu[j];
        m2[j] += d * d;
      }
      if (minmax) {
        double *lo = sc->lo + k, *hi = sc->hi + k;
        for (size_t j = 0; j < n; j++) {
          if (p[j] < lo[j]) lo[j] = p[j];
          if (p[j] > hi[j]) hi[j] = p[j];
        }
      }
    }
  }
  /* the record, in the order the statistics were first met */
  int rc = 0;
  for (size_t q = 0; q < sc->nrng; q++)
    for (size_t k = sc->rng[2 * q]; k < sc->rng[2 * q + 1]; k++) {
      if (!(sc->cnt[k] < 0)) continue;
      ns_chunk_entry e = {k + s0, -sc->cnt[k], sc->sum[k], sc->m2[k], sc->lo[k], sc->hi[k]};
      if (rc == 0 && rec_push(rec, &e)) rc = -1;
      reset_scratch(sc, k);
    }
  sc->nrng = 0;
  return rc;
}

int ns_chunk_powers(const ns_statmap *map, size_t s0, const double *x, size_t first, size_t len,
                    const double *mu, const double *ymu, const double *inv, double *y,
                    ns_chunk_scratch *sc, ns_chunk_record *rec) {
  rec->n = 0;
  sc->nrng = 0;
  ns_runs it;
  size_t off, n, s;
  int step;
  ns_runs_begin(&it, map, first, len);
  while (ns_runs_next(&it, &off, &n, &s, &step)) {
    const double *p = x + off;
    size_t k = s - s0;
    if (!step) {
      double m = mu[k], ym = ymu[k], iv = inv[k], a0 = 0, a1 = 0, a2 = 0, a3 = 0;
      if (y)
        for (size_t j = 0; j < n; j++) y[off + j] = (p[j] - ym) * iv;
      size_t j = 0;
      for (; j + 4 <= n; j += 4) {
        double d0 = p[j] - m, d1 = p[j + 1] - m, d2 = p[j + 2] - m, d3 = p[j + 3] - m;
        double e0 = d0 * d0, e1 = d1 * d1, e2 = d2 * d2, e3 = d3 * d3;
        a0 += e0 * e0, a1 += e1 * e1, a2 += e2 * e2, a3 += e3 * e3;
      }
      for (; j < n; j++) {
        double d = p[j] - m, e = d * d;
        a0 += e * e;
      }
      sc->sum[k] += (a0 + a1) + (a2 + a3);
      if (sc->cnt[k] == 0 && touch(sc, k, k + 1)) return -1;
      sc->cnt[k] += (double)n;
    } else {
      const double *m = mu + k, *iv = inv + k;
      double *sm = sc->sum + k, *ct = sc->cnt + k;
      for (size_t j = 0; j < n; j++) {
        double d = p[j] - m[j], e = d * d;
        sm[j] += e * e;
        ct[j] += 1;
      }
      if (y) {
        const double *ym = ymu + k;
        for (size_t j = 0; j < n; j++) y[off + j] = (p[j] - ym[j]) * iv[j];
      }
      if (touch(sc, k, k + n)) return -1;
    }
  }
  int rc = 0;
  for (size_t q = 0; q < sc->nrng; q++)
    for (size_t k = sc->rng[2 * q]; k < sc->rng[2 * q + 1]; k++) {
      if (!(sc->cnt[k] > 0)) continue;
      ns_chunk_entry e = {k + s0, sc->cnt[k], 0, sc->sum[k], 0, 0};
      if (rc == 0 && rec_push(rec, &e)) rc = -1;
      reset_scratch(sc, k);
    }
  sc->nrng = 0;
  return rc;
}

void ns_chunk_merge(const ns_chunk_record *rec, size_t s0, ns_moments *m, double *lo, double *hi) {
  for (size_t q = 0; q < rec->n; q++) {
    const ns_chunk_entry *e = &rec->e[q];
    size_t k = e->s - s0;
    ns_moments c = {e->n, e->mean, e->m2};
    m[k] = m[k].n == 0 ? c : ns_moments_merge(m[k], c);
    if (lo) {
      if (e->lo < lo[k]) lo[k] = e->lo;
      if (e->hi > hi[k]) hi[k] = e->hi;
    }
  }
}

void ns_chunk_add(const ns_chunk_record *rec, size_t s0, double *sum) {
  for (size_t q = 0; q < rec->n; q++) sum[rec->e[q].s - s0] += rec->e[q].m2;
}
