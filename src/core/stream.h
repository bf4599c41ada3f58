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

#endif
