/* scan.h: the audit's streaming pass (internal to src/audit; audit.c runs the checks on
 * what it leaves).
 *
 * The tensor is read once, in fixed chunks (opts.chunk elements), a round of chunks at a
 * time: each thread reads its chunks (pread: no mapping to set up and tear down, nothing
 * shared), converts them and reduces them into a record per accumulator (stream.h), and
 * the records are merged in chunk order, so no total depends on the number of threads. The
 * accumulators:
 *
 *   main     moments up to the fourth (exact merges), min and max of every statistic of the
 *            audit's reduction
 *   marg[k]  moments of each index of a layout's channel axis k (the H of the axes check),
 *            merged from the main or a joint accumulator when one keeps axis k apart
 *   period   the mean of each class of the flat index modulo C, the size of axis 2 (rank
 *            >= 3: channels-last bytes under a channels-first shape show there)
 *   example  batch kinds: the main accumulator's, of each statistic within each example
 *            (streamed, in windows of examples); merged over the examples they give main,
 *   ex01     the statistics within examples 1 and 2 (batch_dependence,
 *            batch_size_sensitivity), and
 *   tail     the statistics within the last k examples
 *   joint[l] moments of x over the pieces a statistic shares with one of layout l's: once
 *            the statistics are known, they give the moments of y = (x - mean) / denom over
 *            layout l's statistics without a second pass (the axes check)
 *
 * The outlying statistic's farthest element is found afterwards by reading that statistic
 * alone. Memory does not grow with the file. Per-example reductions (axis 1 not reduced)
 * have as many statistics as the file has rows, so the file is taken in windows of whole
 * blocks (the slices of the leading unreduced axes), each window's statistics held at once
 * (about AUDIT_WINDOW_STATS) and reduced to the findings' summaries before the next; batch
 * reductions are one window of at most AUDIT_MAX_STATS statistics. Everything else is
 * bounded by the shape's axes (at most AUDIT_MAX_STATS each), the threads' chunk buffers
 * and the records of a round.
 */
#ifndef NS_AUDIT_SCAN_H
#define NS_AUDIT_SCAN_H

#include <stddef.h>

#include "audit/audit.h"
#include "core/stream.h"

#define AUDIT_MAX_STATS ((size_t)1 << 18)
#define AUDIT_WINDOW_STATS ((size_t)1 << 16)
/* Values kept per per-statistic figure (every k-th statistic beyond). */
#define AUDIT_FIG_MAX ((size_t)1 << 16)

enum { KEEP_DEAD, KEEP_CANCEL, KEEP_OUTLIER, NKEEP };
enum {
  A_MAIN,
  A_MARG0,
  A_PERIOD = A_MARG0 + NS_MAXRANK,
  A_EX01,
  A_TAIL,
  A_EXAMPLE,
  A_JOINT0,
  A_COUNT = A_JOINT0 + NS_LAYOUT_COUNT
};

/* An accumulator: per-statistic moments of a map over the elements [e0, e1) (element i is
 * element i - e0 of the map's tensor), holding statistics [s0, s0 + ns) at a time. */
typedef struct {
  int on, windowed;
  int from;       /* -1: streamed; else merged at each window's end from that accumulator's
                     statistics, finer ones (a marginal from the main or a joint map) */
  unsigned flags; /* NS_CHUNK_MINMAX, NS_CHUNK_POWERS */
  ns_statmap map;
  size_t e0, e1;
  size_t s0, ns, cap;
  ns_moments *m;
  double *lo, *hi, *m3, *m4;
} sacc;

typedef struct {
  double *x;          /* one chunk as doubles */
  unsigned char *raw; /* and as stored */
  ns_chunk_scratch sc[A_COUNT];
} sworker;

typedef struct {
  ns_chunk_record rec[A_COUNT];
  size_t nonfinite, over16;
  int failed; /* 1: out of memory, 2: a read error (err says which) */
  char err[NS_ERRLEN];
} sslot;

/* y over one layout's statistics: their moments (window or global), merged from the joint
 * pieces, and the summary the axes check prints. */
typedef struct {
  int on, windowed, from_main; /* from_main: the pieces are the main statistics themselves */
  ns_statmap map;
  ns_moments *m;
  size_t s0, ns, cap;
  double mean, vlo, vhi; /* the largest |mean| of y, the range of its variances */
} salt;

/* Running summaries of the main statistics, over every window so far (0-based indices). */
typedef struct {
  size_t nz, nz_list[8];   /* variance below 100 eps (or 0) */
  size_t zero;             /* of them, variance exactly 0 */
  size_t nan, nan_list[8]; /* mean or variance not finite */
  size_t vmin_s;           /* the smallest variance (finite), and where */
  double vmin;
  size_t cancel_s; /* the largest mean^2/var with var > 0, and where */
  double cancel;
  size_t z_s; /* the largest |z|, and where */
  double z;
  size_t kurt_s; /* the largest kurtosis, and where */
  double kurt;
  double ymean, yvlo, yvhi; /* y over the statistics not near zero: |mean| and var range */
  ns_moments all;           /* the moments of every element */
  double *fig_var, *fig_z;  /* every fig_stride-th statistic's variance and |z| */
  size_t fig_n, fig_stride;
} ssum;

typedef struct actx {
  ns_file_map *m;
  const ns_audit_opts *o;
  ns_audit_report *r;
  int center;  /* the kind subtracts the mean (not rms) */
  int coupled; /* the reduction spans the examples (axis 1 reduced): one window */
  size_t chunk;
  int threads;
  size_t B, per; /* examples along axis 1 and elements per example */
  size_t tail_k; /* examples in the tail accumulator */
  /* windows of whole blocks */
  int prefix;
  size_t nblocks, bsize, wblocks;
  sacc acc[A_COUNT];
  salt alt[NS_LAYOUT_COUNT];
  /* the main statistics of the window: what normalizes them */
  double *mean, *var, *denom;
  ssum sum;
  /* the running statistics' channel of each statistic, for instance norm */
  int inst_axis;
  double *gap2; /* per channel: sum over instances of the squared rms gap */
  size_t *gapn;
  /* the elements of the findings' statistics */
  size_t keep_stat[NKEEP];
  double *keep[NKEEP];
  size_t nkeep[NKEEP];
  size_t keep_at[NKEEP];
  size_t nonfinite, over16;
  /* threads and rounds */
  sworker *w;
  int nw;
  sslot *slot;
  size_t nslot;
  double done, total;
  const char *phase;
} actx;

/* Sets up the accumulators for the resolved report a->r (kind, axes, layout, shape):
 * 0, or -1 with err. */
int audit_scan_init(actx *a, char *err);
/* The pass over every window, leaving the summaries in a. 0, or -1 with err. */
int audit_scan_run(actx *a, char *err);
void audit_scan_free(actx *a);
/* Progress: adds `add` elements of work done. */
void audit_progress(actx *a, double add, const char *phase);
/* 1 (with err) when the caller asked the run to stop. */
int audit_stopped(const actx *a, char *err);

/* Elements [first, first + len) as doubles into out, read with pread (no mapping): 0, or -1
 * with err. */
int audit_read(actx *a, size_t first, size_t len, double *out, char *err);
/* One axis of a box of the tensor: `count` indices, list[i] or start + i. */
typedef struct {
  const size_t *list;
  size_t start, count;
} sbox_axis;
/* The elements of the box (row-major over its axes) as doubles into out (at most max of
 * them); the number read, or (size_t)-1 with err. */
size_t audit_read_box(actx *a, const sbox_axis *ax, double *out, size_t max, char *err);
/* The first `max` elements of main statistic s into out (their count), or -1 with err. */
size_t audit_read_stat(actx *a, size_t s, double *out, size_t max, char *err);

#endif
