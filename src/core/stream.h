/* stream.h: per-statistic moments of a tensor that arrives in chunks, in one pass and
 * bounded memory: O(statistics + chunk), whatever the tensor's size.
 *
 * A statistic map (ns_statmap) says which statistic each flat (row-major) element
 * belongs to, by arithmetic on its coordinates rather than by a table of n entries (the
 * normalization plan of normalize.h lists every member and so needs O(n) memory). The
 * statistics are numbered as ns_norm_plan numbers them: row-major over x's shape with
 * the reduced axes set to 1 (and a grouped channel axis set to its group count).
 *
 * A stream (ns_stream) takes the elements in order, any number at a time. For each chunk
 * it computes every touched statistic's chunk moments by two passes over the chunk (sum,
 * then squared deviations from the chunk mean, in double), and merges them into the
 * running total with ns_moments_merge (Chan, Golub and LeVeque's pairwise update), the
 * merge the chapters teach. The result equals the two-pass moments of the whole
 * statistic to rounding, for any chunking.
 *
 * Ownership: ns_stream_init allocates; ns_stream_free releases (safe on a zeroed stream).
 *
 *   ns_statmap m;
 *   unsigned axes = 1u << 0 | 1u << 2 | 1u << 3;      // batch norm of (N, C, H, W)
 *   ns_statmap_make(4, shape, axes, -1, 1, &m, err);
 *   ns_stream s = {0};
 *   ns_stream_init(&s, &m, err);
 *   while ((got = next_chunk(buf, cap)) > 0) ns_stream_add(&s, buf, got, err);
 *   // s.m[c]: n, mean, m2 of channel c
 *   ns_stream_free(&s);
 */
#ifndef NS_STREAM_H
#define NS_STREAM_H

#include <stddef.h>

#include "core/moments.h"
#include "core/tensor.h"

typedef struct {
  int rank;
  size_t shape[NS_MAXRANK];
  size_t n;                   /* elements */
  unsigned axes;              /* reduced axes, bit k = axis k (0-based) */
  int group_axis;             /* -1, or the axis whose indices are grouped (group norm) */
  size_t groups;              /* groups of group_axis (1 when group_axis is -1) */
  size_t per_group;           /* shape[group_axis] / groups */
  size_t nstat, count;        /* statistics, elements per statistic */
  size_t sstride[NS_MAXRANK]; /* what a unit step of axis k adds to the statistic index */
  int stat_rank;
  size_t stat_shape[NS_MAXRANK];
} ns_statmap;

/* A map for x of the given shape reducing over `axes` (0-based bit mask; may be 0: each
 * element its own statistic) and, when group_axis >= 0, over each group of
 * shape[group_axis] / groups consecutive indices of that axis (which must not be in axes;
 * groups must divide it). 0, or -1 with err. */
int ns_statmap_make(int rank, const size_t *shape, unsigned axes, int group_axis, size_t groups,
                    ns_statmap *m, char *err);
/* The statistic of flat element i (the straightforward reference). */
size_t ns_statmap_stat(const ns_statmap *m, size_t i);
/* The statistics of flat elements first .. first+len-1 into out[0..len) (fast path). */
void ns_statmap_fill(const ns_statmap *m, size_t first, size_t len, size_t *out);

typedef struct {
  ns_statmap map;
  ns_moments *m; /* nstat: the moments of what has arrived so far */
  size_t pos;    /* elements seen */
  /* scratch for one chunk */
  double *sum;
  double *cnt;
  double *m2c;
  size_t *touched, ntouched;
  size_t *idx, idxcap;
} ns_stream;

int ns_stream_init(ns_stream *s, const ns_statmap *m, char *err);
/* The next len elements (row-major order). -1 with err if they go beyond the tensor or
 * memory for the chunk's scratch runs out. */
int ns_stream_add(ns_stream *s, const double *x, size_t len, char *err);
/* The same with the statistics of the chunk already computed (idx from ns_statmap_fill):
 * several streams over one chunk can share one fill when their maps agree. */
int ns_stream_add_idx(ns_stream *s, const double *x, const size_t *idx, size_t len, char *err);
void ns_stream_free(ns_stream *s);

/* ---- Chunk records: the same moments, computed by any thread, merged in order ----
 *
 * For a reader that splits a tensor into fixed chunks and hands them to threads: each
 * thread turns its chunk into a record (the moments the chunk adds to each statistic it
 * touches, computed by two passes over the chunk, as ns_stream does), and one thread
 * merges the records in chunk order (ns_chunk_merge, Chan's update). The totals then do
 * not depend on how many threads there were, bit for bit. The chunk's elements are found
 * from the map's strides, in runs (no per-element index lists): a run is either elements
 * of one statistic (the map reduces the last axis, or groups it) or the elements of a row
 * of the last axis, which belong to consecutive statistics s, s+1, ... (the last axis is
 * not reduced). Sums use several vector accumulators, so a chunk's sum differs from the
 * sequential one by rounding only.
 *
 *   ns_chunk_scratch sc;        // per thread: the statistics s0 .. s0+ns-1 it may touch
 *   ns_chunk_record rec = {0};  // per chunk
 *   ns_chunk_scratch_init(&sc, map.nstat, err);
 *   ns_chunk_moments(&map, 0, x, first, len, NS_CHUNK_MINMAX, &rec, &sc);  // any thread
 *   ns_chunk_merge(&rec, 0, totals, lo, hi, NULL, NULL);                   // in chunk order
 */

/* Walks the runs of elements [first, first+len) (see above). */
typedef struct {
  const ns_statmap *m;
  size_t c[NS_MAXRANK]; /* coordinates of the next element */
  size_t pos, left;     /* its offset in the chunk, elements left */
  int plain;            /* the last axis is not reduced: rows of consecutive statistics */
  int key;              /* the innermost axis whose coordinate changes the statistic, or -1 */
  size_t inner;         /* elements per unit step of axis key */
  int key2;             /* plain: the same before the last axis (rows of the same statistics) */
  size_t inner2;        /* plain: rows per unit step of axis key2 */
} ns_runs;
void ns_runs_begin(ns_runs *it, const ns_statmap *m, size_t first, size_t len);
/* The next run: its offset in the chunk, its length, its (first) statistic, and step 0 (every
 * element is of statistic s) or 1 (element j of the run is of statistic s + j). 0 at the end. */
int ns_runs_next(ns_runs *it, size_t *off, size_t *len, size_t *s, int *step);
/* The same, with consecutive whole rows of the same statistics (step 1) taken together:
 * *rows rows of *len elements each, one after another (*rows is 1 otherwise). */
int ns_runs_rows(ns_runs *it, size_t *off, size_t *len, size_t *s, int *step, size_t *rows);
/* The flat index of the first element of statistic s, and, per axis, the coordinates its
 * elements take: [lo[k], hi[k]). */
size_t ns_statmap_box(const ns_statmap *m, size_t s, size_t *lo, size_t *hi);

typedef struct {
  size_t s;           /* the statistic */
  double n, mean, m2; /* the moments of the chunk's elements of s */
  double m3, m4;      /* sums of cubed and fourth-power deviations (NS_CHUNK_POWERS) */
  double lo, hi;      /* their smallest and largest (NS_CHUNK_MINMAX) */
} ns_chunk_entry;
typedef struct {
  ns_chunk_entry *e;
  size_t n, cap;
} ns_chunk_record;
/* A thread's scratch for statistics s0 .. s0+ns-1 (7 doubles each) and one chunk's runs. */
typedef struct {
  size_t ns;
  double *sum, *cnt, *m2, *m3, *m4, *lo, *hi;
  size_t *rng; /* touched ranges, two entries each */
  size_t nrng, rngcap;
} ns_chunk_scratch;
int ns_chunk_scratch_init(ns_chunk_scratch *sc, size_t ns, char *err);
void ns_chunk_scratch_free(ns_chunk_scratch *sc);
void ns_chunk_record_free(ns_chunk_record *r);

#define NS_CHUNK_MINMAX 1u /* also the smallest and largest value of each statistic */
#define NS_CHUNK_POWERS 2u /* also the third and fourth central moments (for the kurtosis) */
#define NS_CHUNK_MEANS 4u  /* the counts and means only (m2 left 0): one pass over the chunk */
/* The moments that elements [first, first+len) of the tensor, whose values are x[0..len),
 * add to each statistic of map, for statistics s0 .. s0+sc->ns-1 (the chunk touches no other),
 * into rec (emptied first) in the order they are first met, with what flags ask for.
 * 0, or -1 when rec cannot grow (out of memory). */
int ns_chunk_moments(const ns_statmap *map, size_t s0, const double *x, size_t first, size_t len,
                     unsigned flags, ns_chunk_record *rec, ns_chunk_scratch *sc);
/* Merges a record into m (and lo, hi; m3, m4 when not NULL), indexed from s0: Chan's update
 * for the mean and m2, Pebay's for m3 and m4 (exact, as the two-pass sums are). */
void ns_chunk_merge(const ns_chunk_record *rec, size_t s0, ns_moments *m, double *lo, double *hi,
                    double *m3, double *m4);

#endif
