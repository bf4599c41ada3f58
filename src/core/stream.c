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
  it->key2 = -1;
  it->inner2 = 1;
  if (it->plain) {
    for (int k = last - 1; k >= 0; k--)
      if (!(m->axes >> k & 1u)) {
        it->key2 = k;
        break;
      }
    for (int k = it->key2 + 1; k < last; k++) it->inner2 *= m->shape[k];
  }
}

/* Advances the coordinates by run elements. */
static void runs_advance(ns_runs *it, size_t run) {
  const ns_statmap *m = it->m;
  it->pos += run;
  it->left -= run;
  size_t carry = run;
  for (int k = m->rank - 1; k >= 0 && carry; k--) {
    size_t v = it->c[k] + carry, d = m->shape[k];
    if (v < d) { /* the common cases without a division */
      it->c[k] = v, carry = 0;
    } else if (v == d) {
      it->c[k] = 0, carry = 1;
    } else {
      it->c[k] = v % d, carry = v / d;
    }
  }
}

int ns_runs_rows(ns_runs *it, size_t *off, size_t *len, size_t *s, int *step, size_t *rows) {
  *rows = 1;
  const ns_statmap *m = it->m;
  int last = m->rank - 1;
  size_t w = m->shape[last];
  if (!it->plain || it->c[last] != 0 || it->left < 2 * w)
    return ns_runs_next(it, off, len, s, step);
  size_t same = it->left / w; /* whole rows left, and rows before the statistics change */
  if (it->key2 >= 0) {
    size_t in = 0;
    for (int k = it->key2 + 1; k < last; k++) in = in * m->shape[k] + it->c[k];
    size_t upto = it->key2 == m->group_axis
                      ? (m->per_group - it->c[it->key2] % m->per_group) * it->inner2 - in
                      : it->inner2 - in;
    if (upto < same) same = upto;
  }
  size_t st = 0;
  for (int k = 0; k <= last; k++) st += contrib(m, k, it->c[k]);
  *off = it->pos;
  *len = w;
  *s = st;
  *step = 1;
  *rows = same;
  runs_advance(it, same * w);
  return 1;
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
  runs_advance(it, run);
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
  sc->m3 = calloc(n, sizeof *sc->m3);
  sc->m4 = calloc(n, sizeof *sc->m4);
  sc->lo = malloc(n * sizeof *sc->lo);
  sc->hi = malloc(n * sizeof *sc->hi);
  if (!sc->sum || !sc->cnt || !sc->m2 || !sc->m3 || !sc->m4 || !sc->lo || !sc->hi) {
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
  free(sc->m3);
  free(sc->m4);
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

/* Rows of consecutive statistics (the last axis unreduced): `rows` rows of n elements one
 * after another, element j of each going to statistic j. The rows go in tiles of eight:
 * a tile's column sums are formed in registers and added once, so each statistic's
 * running sum is stored once per tile rather than once per row. */
#define NS_TILE 8
static void rows_add(double *restrict sm, double *restrict ct, const double *restrict p, size_t n,
                     size_t rows) {
  size_t r = 0;
#ifdef NS_HAVE_SSE2
  for (; r + NS_TILE <= rows; r += NS_TILE) {
    const double *q = p + r * n;
    size_t j = 0;
    for (; j + 2 <= n; j += 2) {
      __m128d a = _mm_loadu_pd(q + j), b = _mm_loadu_pd(q + n + j);
      a = _mm_add_pd(a, _mm_loadu_pd(q + 2 * n + j));
      b = _mm_add_pd(b, _mm_loadu_pd(q + 3 * n + j));
      a = _mm_add_pd(a, _mm_loadu_pd(q + 4 * n + j));
      b = _mm_add_pd(b, _mm_loadu_pd(q + 5 * n + j));
      a = _mm_add_pd(a, _mm_loadu_pd(q + 6 * n + j));
      b = _mm_add_pd(b, _mm_loadu_pd(q + 7 * n + j));
      _mm_storeu_pd(sm + j, _mm_add_pd(_mm_loadu_pd(sm + j), _mm_add_pd(a, b)));
    }
    for (; j < n; j++) {
      double a = 0;
      for (int t = 0; t < NS_TILE; t++) a += q[t * n + j];
      sm[j] += a;
    }
  }
#endif
  for (; r < rows; r++) {
    const double *q = p + r * n;
    for (size_t j = 0; j < n; j++) sm[j] += q[j];
  }
  for (size_t j = 0; j < n; j++) ct[j] += (double)rows;
}

static void rows_dev2(double *restrict m2, const double *restrict mu, const double *restrict p,
                      size_t n, size_t rows, double *restrict lo, double *restrict hi) {
  size_t r = 0;
#ifdef NS_HAVE_SSE2
  for (; r + NS_TILE <= rows; r += NS_TILE) {
    const double *q = p + r * n;
    size_t j = 0;
    for (; j + 2 <= n; j += 2) {
      __m128d m = _mm_loadu_pd(mu + j), a = _mm_setzero_pd(), b = a;
      if (lo) {
        __m128d l = _mm_loadu_pd(lo + j), h = _mm_loadu_pd(hi + j);
        for (int t = 0; t < NS_TILE; t += 2) {
          __m128d x0 = _mm_loadu_pd(q + t * n + j), x1 = _mm_loadu_pd(q + (t + 1) * n + j);
          __m128d d0 = _mm_sub_pd(x0, m), d1 = _mm_sub_pd(x1, m);
          a = _mm_add_pd(a, _mm_mul_pd(d0, d0));
          b = _mm_add_pd(b, _mm_mul_pd(d1, d1));
          l = _mm_min_pd(x0, _mm_min_pd(x1, l)); /* a NaN x leaves the bound as it was */
          h = _mm_max_pd(x0, _mm_max_pd(x1, h));
        }
        _mm_storeu_pd(lo + j, l);
        _mm_storeu_pd(hi + j, h);
      } else {
        for (int t = 0; t < NS_TILE; t += 2) {
          __m128d d0 = _mm_sub_pd(_mm_loadu_pd(q + t * n + j), m);
          __m128d d1 = _mm_sub_pd(_mm_loadu_pd(q + (t + 1) * n + j), m);
          a = _mm_add_pd(a, _mm_mul_pd(d0, d0));
          b = _mm_add_pd(b, _mm_mul_pd(d1, d1));
        }
      }
      _mm_storeu_pd(m2 + j, _mm_add_pd(_mm_loadu_pd(m2 + j), _mm_add_pd(a, b)));
    }
    for (; j < n; j++)
      for (int t = 0; t < NS_TILE; t++) {
        double v = q[t * n + j], d = v - mu[j];
        m2[j] += d * d;
        if (lo) {
          if (v < lo[j]) lo[j] = v;
          if (v > hi[j]) hi[j] = v;
        }
      }
  }
#endif
  for (; r < rows; r++) {
    const double *q = p + r * n;
    for (size_t j = 0; j < n; j++) {
      double v = q[j], d = v - mu[j];
      m2[j] += d * d;
      if (lo) {
        if (v < lo[j]) lo[j] = v;
        if (v > hi[j]) hi[j] = v;
      }
    }
  }
}

/* sums of (x - mu)^2, ^3 and ^4 over x[0..n) (and the extremes) */
static void vdev234(const double *x, size_t n, double mu, double *s2, double *s3, double *s4,
                    double *lo, double *hi) {
  size_t i = 0;
  double a2 = 0, a3 = 0, a4 = 0, l = *lo, h = *hi;
#ifdef NS_HAVE_SSE2
  __m128d m = _mm_set1_pd(mu), v2 = _mm_setzero_pd(), v3 = v2, v4 = v2;
  __m128d vl = _mm_set1_pd(l), vh = _mm_set1_pd(h);
  for (; i + 2 <= n; i += 2) {
    __m128d xv = _mm_loadu_pd(x + i), d = _mm_sub_pd(xv, m), d2 = _mm_mul_pd(d, d);
    v2 = _mm_add_pd(v2, d2);
    v3 = _mm_add_pd(v3, _mm_mul_pd(d2, d));
    v4 = _mm_add_pd(v4, _mm_mul_pd(d2, d2));
    vl = _mm_min_pd(xv, vl);
    vh = _mm_max_pd(xv, vh);
  }
  double t[2];
  _mm_storeu_pd(t, v2);
  a2 = t[0] + t[1];
  _mm_storeu_pd(t, v3);
  a3 = t[0] + t[1];
  _mm_storeu_pd(t, v4);
  a4 = t[0] + t[1];
  _mm_storeu_pd(t, vl);
  l = t[0] < t[1] ? t[0] : t[1];
  _mm_storeu_pd(t, vh);
  h = t[0] > t[1] ? t[0] : t[1];
#endif
  for (; i < n; i++) {
    double d = x[i] - mu, d2 = d * d;
    a2 += d2, a3 += d2 * d, a4 += d2 * d2;
    if (x[i] < l) l = x[i];
    if (x[i] > h) h = x[i];
  }
  *s2 += a2, *s3 += a3, *s4 += a4;
  *lo = l, *hi = h;
}

/* rows_dev2 with the third and fourth powers too (and the extremes) */
static void rows_dev234(const ns_chunk_scratch *sc, size_t k, const double *p, size_t n,
                        size_t rows) {
  const double *mu = sc->sum + k;
  double *m2 = sc->m2 + k, *m3 = sc->m3 + k, *m4 = sc->m4 + k, *lo = sc->lo + k, *hi = sc->hi + k;
  for (size_t r = 0; r < rows; r++, p += n)
    for (size_t j = 0; j < n; j++) {
      double v = p[j], d = v - mu[j], d2 = d * d;
      m2[j] += d2, m3[j] += d2 * d, m4[j] += d2 * d2;
      if (v < lo[j]) lo[j] = v;
      if (v > hi[j]) hi[j] = v;
    }
}

static void reset_scratch(ns_chunk_scratch *sc, size_t k) {
  sc->sum[k] = sc->cnt[k] = sc->m2[k] = sc->m3[k] = sc->m4[k] = 0;
  sc->lo[k] = HUGE_VAL;
  sc->hi[k] = -HUGE_VAL;
}

int ns_chunk_moments(const ns_statmap *map, size_t s0, const double *x, size_t first, size_t len,
                     unsigned flags, ns_chunk_record *rec, ns_chunk_scratch *sc) {
  const int minmax = (flags & NS_CHUNK_MINMAX) != 0, powers = (flags & NS_CHUNK_POWERS) != 0;
  rec->n = 0;
  sc->nrng = 0;
  ns_runs it;
  size_t off, n, s, rows;
  int step;
  /* pass 1: counts and sums */
  ns_runs_begin(&it, map, first, len);
  while (ns_runs_rows(&it, &off, &n, &s, &step, &rows)) {
    const double *p = x + off;
    size_t k = s - s0;
    if (!step) {
      sc->sum[k] += vsum(p, n);
      sc->cnt[k] += (double)n;
      if (touch(sc, k, k + 1)) return -1;
    } else {
      rows_add(sc->sum + k, sc->cnt + k, p, n, rows);
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
  /* pass 2: squared (cubed, fourth-power) deviations from the chunk means, the extremes */
  ns_runs_begin(&it, map, first, len);
  while (!(flags & NS_CHUNK_MEANS) && ns_runs_rows(&it, &off, &n, &s, &step, &rows)) {
    const double *p = x + off;
    size_t k = s - s0;
    if (powers && !step)
      vdev234(p, n, sc->sum[k], &sc->m2[k], &sc->m3[k], &sc->m4[k], &sc->lo[k], &sc->hi[k]);
    else if (powers)
      rows_dev234(sc, k, p, n, rows);
    else if (!step)
      sc->m2[k] += vdev2(p, n, sc->sum[k], minmax ? &sc->lo[k] : NULL, minmax ? &sc->hi[k] : NULL);
    else
      rows_dev2(sc->m2 + k, sc->sum + k, p, n, rows, minmax ? sc->lo + k : NULL,
                minmax ? sc->hi + k : NULL);
  }
  /* the record, in the order the statistics were first met */
  int rc = 0;
  for (size_t q = 0; q < sc->nrng; q++)
    for (size_t k = sc->rng[2 * q]; k < sc->rng[2 * q + 1]; k++) {
      if (!(sc->cnt[k] < 0)) continue;
      ns_chunk_entry e = {k + s0,    -sc->cnt[k], sc->sum[k], sc->m2[k],
                          sc->m3[k], sc->m4[k],   sc->lo[k],  sc->hi[k]};
      if (rc == 0 && rec_push(rec, &e)) rc = -1;
      reset_scratch(sc, k);
    }
  sc->nrng = 0;
  return rc;
}

void ns_chunk_merge(const ns_chunk_record *rec, size_t s0, ns_moments *m, double *lo, double *hi,
                    double *m3, double *m4) {
  for (size_t q = 0; q < rec->n; q++) {
    const ns_chunk_entry *e = &rec->e[q];
    size_t k = e->s - s0;
    ns_moments c = {e->n, e->mean, e->m2};
    if (m3 && m[k].n > 0) { /* Pebay's update, from the totals before this chunk */
      double na = m[k].n, nb = c.n, nn = na + nb, d = c.mean - m[k].mean, dn = d / nn;
      double a3 = m3[k], a2 = m[k].m2;
      m4[k] += e->m4 + d * dn * dn * dn * na * nb * (na * na - na * nb + nb * nb) +
               6 * dn * dn * (na * na * c.m2 + nb * nb * a2) + 4 * dn * (na * e->m3 - nb * a3);
      m3[k] += e->m3 + d * dn * dn * na * nb * (na - nb) + 3 * dn * (na * c.m2 - nb * a2);
    } else if (m3) {
      m3[k] = e->m3;
      m4[k] = e->m4;
    }
    m[k] = m[k].n == 0 ? c : ns_moments_merge(m[k], c);
    if (lo) {
      if (e->lo < lo[k]) lo[k] = e->lo;
      if (e->hi > hi[k]) hi[k] = e->hi;
    }
  }
}
