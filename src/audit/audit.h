/* audit.h: the normalization audit of an activation tensor (the chapters'
 * "a normalisation audit tests dependencies, not only moments" and "a practical
 * diagnostic sequence"), on files of any size.
 *
 * ns_audit_run reads the tensor through a chunked file map (file.h) in one streaming
 * pass (scan.h says how, on how many threads), merging per-chunk moments (up to the
 * fourth) of every statistic (stream.h), of every index of a layout's channel axis, of
 * each class of the flat index modulo the channel count, of the pieces each statistic
 * shares with another layout's (which give the normalized output's moments along those
 * axes), and, for batch kinds, of the statistics within the first two and the last k
 * examples. Every check but precision comes from these merged moments; precision
 * renormalizes a slice of at most NS_AUDIT_SLICE elements (the leading examples, or some
 * of their channels, with the statistic that cancels worst). Memory: under 256 MB for any
 * file (scan.h).
 *
 * The report is a list of findings, one per check: a verdict (ok, warn, yes, no, n/a), a
 * value, a one-line detail, a figure's data, and an explorer state patch that shows the
 * finding (state.h): for example the dead channel's values as x with the audit's eps, or the
 * suggested layout's axes on a slice of the input. To open a finding in the explorer:
 *
 *   ns_state_apply(&state, &report.f[k].patch, err);   // or ns_history_apply, undoable
 *
 * The patch borrows its tensors from the finding: apply it before ns_audit_free.
 *
 * A finding also says where it shows on the audited tensor itself, for a caller whose x
 * is that tensor (the explorer's `a` panel): `here`, a patch of the audit's spec with the
 * finding's change (the suggested layout's axes, fp32 storage for precision, the batch
 * for batch_dependence) and no x, and `at`, the flat index of the element it points at
 * (the first element of the dead or cancelling statistic, the largest |x - mean| of the
 * outlying one), or NS_AUDIT_NOWHERE.
 *
 * Ownership: ns_audit_run fills a report the caller frees with ns_audit_free (safe on a
 * zeroed report); the text forms are malloc'd strings.
 *
 *   ns_file_map m;
 *   ns_audit_opts o;
 *   ns_audit_report r = {0};
 *   ns_audit_opts_init(&o);
 *   o.kind = NS_KIND_BATCH;
 *   if (ns_file_map_open(&m, "acts.npy", NULL, 0, err) == 0 && ns_audit_run(&m, &o, &r, err) == 0)
 *     fputs(s = ns_audit_format(&r, NS_AUDIT_TSV), stdout);
 *   ns_audit_free(&r);
 *   ns_file_map_close(&m);
 */
#ifndef NS_EXPLORE_AUDIT_H
#define NS_EXPLORE_AUDIT_H

#include <stddef.h>

#include "core/normalize.h"
#include "explore/file.h"
#include "explore/state.h"

/* The checks, in report order: one list for the enum, the names and the help. */
#define NS_AUDIT_CHECKS(X)                                                                         \
  X(AXES, "axes", "the reduction axes and the output's statistics along them and others")          \
  X(NEAR_ZERO_VARIANCE, "near_zero_variance", "statistics with variance below 100 eps")            \
  X(PRECISION, "precision", "fp32/fp16/bf16 against fp64, and raw-moment cancellation")            \
  X(BATCH_DEPENDENCE, "batch_dependence", "does changing one example change another's output")     \
  X(BATCH_SIZE_SENSITIVITY, "batch_size_sensitivity", "the target alone, in another batch, full")  \
  X(TRAIN_EVAL_GAP, "train_eval_gap", "batch statistics against given running statistics")         \
  X(OUTLIERS, "outliers", "largest |z| against sqrt(n-1) (rms: sqrt(n)), and the kurtosis")

typedef enum {
#define NS_AUDIT_ENUM(ID, name, doc) NS_AUDIT_##ID,
  NS_AUDIT_CHECKS(NS_AUDIT_ENUM)
#undef NS_AUDIT_ENUM
      NS_AUDIT_NCHECKS
} ns_audit_check;
extern const char *const ns_audit_check_names[]; /* "axes", ..., NULL */
extern const char *const ns_audit_check_docs[];

/* n/a: the check cannot be measured on this tensor (one example, say); the detail says why. */
typedef enum {
  NS_VERDICT_OK = 0,
  NS_VERDICT_WARN,
  NS_VERDICT_YES,
  NS_VERDICT_NO,
  NS_VERDICT_NA
} ns_verdict;
extern const char *const ns_verdict_names[]; /* "ok", "warn", "yes", "no", "n/a", NULL */

/* Tensor layouts: the rank and the channel (feature) axis, 0-based. */
typedef enum {
  NS_LAYOUT_NCHW = 0,
  NS_LAYOUT_NHWC,
  NS_LAYOUT_NCL,
  NS_LAYOUT_BTD,
  NS_LAYOUT_BD,
  NS_LAYOUT_COUNT
} ns_layout;
extern const char *const ns_layout_names[]; /* "nchw", "nhwc", "ncl", "btd", "bd", NULL */
int ns_layout_rank(ns_layout l);
int ns_layout_channel(ns_layout l); /* 0-based channel/feature axis */
/* The reduction mask (0-based bits) of a kind under a layout; 0 with err when the kind does
 * not apply (instance below rank 3, group with channels last). Group: the mask of the
 * axes besides the grouped channel axis. */
unsigned ns_layout_axes(ns_kind k, ns_layout l, char *err);

/* Where the output of a finding points the explorer, as figure data. */
#define NS_AUDIT_MAXBARS 64
typedef struct {
  int kind; /* 0 none, 1 bars (values with labels), 2 histogram of values */
  char title[96];
  double *v; /* owned */
  size_t n;
  char (*labels)[24]; /* owned, n labels (bars only) */
} ns_audit_figure;

typedef struct {
  ns_audit_check check;
  ns_verdict verdict;
  double value;
  char detail[1024];
  ns_audit_figure fig;
  ns_state_patch patch; /* the state that shows it (borrows x and batch below) */
  ns_state_patch here;  /* the same on the audited tensor: no x (borrows batch) */
  size_t at;            /* the element of the audited tensor it points at, or NS_AUDIT_NOWHERE */
  ns_tensor *x, *batch; /* owned */
} ns_audit_finding;

typedef struct {
  ns_kind kind;
  unsigned axes; /* 1-based axes as a bit mask like the state's (bit k: axis k+1); 0: default */
  int groups;
  double eps;
  int layout;                       /* ns_layout, or -1: not given */
  const double *run_mean, *run_var; /* borrowed, nrun each; NULL: no running statistics */
  size_t nrun;
  double run_count; /* their num_batches_tracked (a whole number), or -1: not given */
  size_t chunk;     /* elements per streamed chunk (0: NS_AUDIT_CHUNK) */
  int threads;      /* threads for the pass (0 or 1: one) */
  void (*progress)(void *ctx, double done);   /* 0..1 over the whole run, called once per round
                                                 of chunks; may be NULL */
  void (*phase)(void *ctx, const char *what); /* the pass under way ("pass 1 of 2 (moments)"),
                                                 with progress; may be NULL */
  void *progress_ctx;
  int (*stop)(void *ctx); /* polled once per round of chunks with progress_ctx: nonzero
                             stops the run (it fails with "stopped"); may be NULL */
} ns_audit_opts;
#define NS_AUDIT_NOWHERE ((size_t)-1)
#define NS_AUDIT_CHUNK ((size_t)1 << 16)
/* The slice precision renormalizes in memory holds at most this many elements. */
#define NS_AUDIT_SLICE ((size_t)1 << 18)
/* Elements of one statistic kept for a finding's explorer state. */
#define NS_AUDIT_KEEP 4096

void ns_audit_opts_init(ns_audit_opts *o); /* layer norm, default axes, eps 1e-5, no layout,
                                              one thread */

typedef struct {
  char name[128]; /* the safetensors tensor, or "" */
  int rank;
  size_t shape[NS_MAXRANK];
  size_t n;
  ns_dtype dtype;
  ns_kind kind;
  unsigned axes; /* resolved, 0-based bits (group: besides the grouped channel axis) */
  int group_axis;
  int groups;
  double eps;
  int layout;         /* the layout used (given or assumed), or -1 */
  int layout_given;   /* 1 if --layout was given */
  int layout_suggest; /* the layout the statistics suggest, or -1 */
  size_t nstat, count;
  size_t nonfinite;
  double seconds;
  int passes;
  size_t nfindings;
  ns_audit_finding f[NS_AUDIT_NCHECKS];
} ns_audit_report;

/* Checks the options against a tensor of this shape (kind, axes, groups, layout, eps,
 * and the running statistics' count for batch kinds) without reading anything: 0, or -1
 * with err (a usage error for the command line). */
int ns_audit_check_opts(const ns_audit_opts *o, int rank, const size_t *shape, char *err);
/* Runs every check (train_eval_gap only with running statistics). 0, or -1 with err on
 * a bad option for this tensor (axes beyond the rank, groups not dividing the channels,
 * a layout of another rank, running statistics of the wrong count) or a read error. */
int ns_audit_run(ns_file_map *m, const ns_audit_opts *o, ns_audit_report *r, char *err);
/* The same on a tensor in memory (borrowed). */
int ns_audit_tensor(const ns_tensor *x, const ns_audit_opts *o, ns_audit_report *r, char *err);
void ns_audit_free(ns_audit_report *r);

typedef enum { NS_AUDIT_TEXT = 0, NS_AUDIT_TSV, NS_AUDIT_JSON, NS_AUDIT_MARKDOWN } ns_audit_form;
/* The report as terminal text with figures (ascii: 7-bit glyphs only), TSV lines
 * CHECK<TAB>VERDICT<TAB>VALUE<TAB>DETAIL, JSON, or a Markdown report with the figures in
 * text blocks. source names the file in the headings. malloc'd, NULL on no memory. */
char *ns_audit_format(const ns_audit_report *r, ns_audit_form form, const char *source, int ascii);

#endif
