/* normalize.h: the normalization family as one map with a reduction plan.
 *
 * Every kind is "reduce over some axes, subtract the mean (unless uncentered), divide
 * by a denominator, apply gamma/beta". A plan says which elements share a statistic, so
 * batch, layer, instance, group, RMS and explicit axes share one definition and the
 * Jacobian (jacobian.h) uses the same grouping. ns_norm_plan_make also lists, for each
 * statistic, the flat indices of its elements (24 bytes per element: for small inputs,
 * the Jacobian and spectrum); ns_normalize never builds those lists: its kernels
 * (norm_kernels.c) walk the statistics with strides, and ns_normalize_ref (normalize_ref.c)
 * keeps the straightforward list-based path that defines the results bit for bit.
 *
 * Ownership: results and plans own their arrays; free them with ns_norm_result_free /
 * ns_norm_plan_free (safe on zeroed structs). The spec's gamma/beta arrays and
 * running pointer are borrowed; ns_normalize updates *spec->running in train mode
 * (batch kinds and instance norm only) and reads it in eval mode.
 *
 *   ns_spec s;
 *   ns_spec_default(&s);            // layer norm, eps 1e-5 inside the sqrt, fp64
 *   s.kind = NS_KIND_RMS;
 *   ns_norm_result r = {0};
 *   if (ns_normalize(x, &s, &r, err) == 0) { ... r.y ...; }
 *   ns_norm_result_free(&r);
 *
 * Maths (c = x - mean when centered, else x; m = count of the statistic):
 *   var   = sum(c^2) / (m - ddof)
 *   eps_at var: denom = sqrt(var + eps)      eps_at std: denom = sqrt(var) + eps
 *   y     = gamma * c / denom + beta
 */
#ifndef NS_NORMALIZE_H
#define NS_NORMALIZE_H

#include <stddef.h>

#include "core/kinds.h"
#include "core/moments.h"
#include "core/running.h"
#include "core/tensor.h"

typedef enum { NS_EPS_VAR = 0, NS_EPS_STD } ns_eps_at;
typedef enum { NS_MODE_TRAIN = 0, NS_MODE_EVAL } ns_mode;

typedef struct {
  ns_kind kind;
  unsigned axes; /* bit k set: reduce over axis k (0-based); 0: the kind's default */
  int groups;    /* channel groups for NS_KIND_GROUP (default 1; must divide C) */
  double eps;    /* >= 0, default 1e-5 */
  ns_eps_at eps_at;
  int ddof;            /* 0 or 1 */
  int center;          /* 1 centered, 0 not, -1: default (0 for rms, 1 otherwise) */
  const double *gamma; /* NULL: 1. ngamma 1 broadcasts; else per channel (batch, instance,
                          group: axis 2, or the single channel of rank 1) or per normalized
                          element (layer, rms: the reduced axes' shape) */
  size_t ngamma;
  const double *beta; /* as gamma; NULL: 0 */
  size_t nbeta;
  ns_dtype dtype; /* inputs rounded to it, outputs rounded to it */
  int acc;        /* accumulation ns_dtype, or -1: dtype, but fp32 for fp16/bf16 */
  ns_algo algo;
  ns_mode mode;
  ns_running *running; /* borrowed; may be NULL */
  ns_order order;      /* every sum: sequential (default), pairwise, or a framework's own order:
                          torch or numpy (torchorder.h) */
  /* borrowed; NULL: every element counts; else 1 keeps, 0 leaves out (see "Masks") */
  const ns_tensor *mask;
} ns_spec;

void ns_spec_default(ns_spec *s);
/* The rule for eps, stated once for every caller: finite and >= 0. NS_EPS_RULE is its
 * wording ("eps: " NS_EPS_RULE ", got -1"). */
#define NS_EPS_RULE "must be finite and >= 0"
int ns_eps_ok(double eps);
/* 0 if every field of the spec is in range (kind, eps finite and >= 0, eps_at, ddof 0 or 1,
 * dtype, acc, algo, mode, order), else -1 with err naming the field. Shape-dependent checks
 * (axes, groups, gamma/beta lengths) belong to ns_norm_plan_make and ns_normalize. */
int ns_spec_check(const ns_spec *s, char *err);
/* The names of each enum, in enum order, NULL-terminated (for luaL_checkoption-style
 * lookups): the one list every caller spells them from. */
extern const char *const ns_kind_names[];   /* from kinds.h: "layer", "rms", ... */
extern const char *const ns_eps_at_names[]; /* "var", "std" */
extern const char *const ns_mode_names[];   /* "train", "eval" */
const char *ns_kind_name(ns_kind k);        /* ns_kind_names[k], "?" outside the enum */
const char *ns_kind_title(ns_kind k);       /* "LayerNorm", ...; "?" outside the enum */
int ns_kind_parse(const char *name, ns_kind *out);
const char *ns_eps_at_name(ns_eps_at e); /* "var", "std" */
const char *ns_mode_name(ns_mode m);     /* "train", "eval" */
int ns_spec_center(const ns_spec *s);    /* resolved centering (the kind's default for -1) */
ns_dtype ns_spec_acc(const ns_spec *s);  /* resolved accumulation dtype */
/* 1 if the spec is a batch kind at this rank (kind batch, or explicit axes that include
 * axis 1 of an input of rank >= 2): only these read and update running statistics. */
int ns_spec_is_batch(const ns_spec *s, int rank);
/* Default reduction axes (bit mask) of a kind at a rank, from kinds.h; 0 with err when
 * the kind is undefined at that rank (instance at rank 1 or 2, group at rank 1). */
unsigned ns_default_axes(ns_kind k, int rank, char *err);

/* Which elements each statistic reduces over. */
typedef struct {
  size_t n;          /* elements of x */
  size_t nstat;      /* statistics */
  size_t count;      /* elements per statistic (all statistics have the same count) */
  size_t *members;   /* nstat * count flat indices, statistic-major, each in index order */
  size_t *stat_of;   /* n: statistic of each element */
  size_t *affine_of; /* n: gamma/beta index of each element */
  size_t naffine;    /* expected gamma/beta length (1 always accepted too) */
  int stat_rank;     /* shape of the statistics: x's shape with reduced axes set to 1 */
  size_t stat_shape[NS_MAXRANK]; /* (group kind: axis 2 becomes the group count) */
  unsigned axes;                 /* resolved reduction mask */
  int rank;                      /* x's rank and shape */
  size_t shape[NS_MAXRANK];
  size_t groups;   /* channel groups (1 unless kind group) */
  int per_element; /* gamma/beta per normalized element (kinds.h), else per channel */
} ns_norm_plan;

/* The full plan, with the members/stat_of/affine_of lists (3 * 8 bytes per element). */
int ns_norm_plan_make(int rank, const size_t *shape, const ns_spec *spec, ns_norm_plan *p,
                      char *err);
/* The same without the three lists (members, stat_of, affine_of stay NULL): O(1) memory.
 * ns_normalize's result holds a plan of this kind. */
int ns_norm_plan_shape(int rank, const size_t *shape, const ns_spec *spec, ns_norm_plan *p,
                       char *err);
/* Statistic and gamma/beta index of flat element i (< p->n), from the lists when the plan
 * has them, else computed from the shape. */
size_t ns_norm_plan_stat_of(const ns_norm_plan *p, size_t i);
/* The same from element coordinates c[0..rank-1] (no divisions to find them). */
size_t ns_norm_plan_stat_at(const ns_norm_plan *p, const size_t *c);
size_t ns_norm_plan_affine_of(const ns_norm_plan *p, size_t i);
void ns_norm_plan_free(ns_norm_plan *p);
/* 0 if gamma and beta are absent, broadcast (1 value) or have the plan's naffine values;
 * else -1 with err naming the array, its length and what the kind at this shape needs. */
int ns_spec_check_affine(const ns_spec *s, const ns_norm_plan *p, int rank, const size_t *shape,
                         char *err);
/* The one gate of the derivative entry points (ns_jvp, ns_vjp, the Jacobian, the spectra):
 * the spec is valid (ns_spec_check), and when p is given, its plan for x (full: with the
 * per-element lists, ns_norm_plan_make; else ns_norm_plan_shape) has gamma/beta that fit.
 * 0, or -1 with err "fn: why" (a plan that does not fit x: its own message; a full plan is
 * freed on failure). */
int ns_spec_prepare(const char *fn, const ns_tensor *x, const ns_spec *s, ns_norm_plan *p, int full,
                    char *err);
/* The one gate of the normalization entry points (ns_normalize_exec, ns_normalize_ref)
 * once they have the plan: gamma/beta fit it (ns_spec_check_affine), eval mode of a batch
 * kind has running statistics, and running statistics already updated have the plan's
 * statistic count. 0, or -1 with err. */
int ns_spec_check_plan(const ns_spec *s, const ns_norm_plan *p, int rank, const size_t *shape,
                       char *err);
/* gamma of element i under the plan: 1 without gamma, gamma[0] when it broadcasts (ngamma 1),
 * else gamma[ns_norm_plan_affine_of(p, i)]. */
double ns_spec_gamma(const ns_spec *s, const ns_norm_plan *p, size_t i);
/* 1 if the spec normalizes with the running statistics as constants: eval mode of a batch
 * kind (ns_spec_is_batch) at this rank, or of instance norm given running statistics (one
 * per channel, as torch's InstanceNorm with track_running_stats). Every other spec uses the
 * input's own statistics. */
int ns_spec_eval_running(const ns_spec *s, int rank);
/* 0 unless the spec has running statistics its kind cannot use at this rank (-1 with err):
 * only batch kinds (ns_spec_is_batch) and instance norm read and update them. */
int ns_spec_running_check(const ns_spec *s, int rank, char *err);
/* 1 if the spec is instance norm (not a batch kind at this rank) with running statistics:
 * one per channel, used in eval mode and updated in train mode as torch's InstanceNorm with
 * track_running_stats (running.h, ns_running_update_instance). */
int ns_spec_instance_running(const ns_spec *s, int rank);

typedef struct {
  ns_tensor *y;      /* x's shape, spec dtype */
  ns_norm_plan plan; /* from ns_normalize: without per-element lists (ns_norm_plan_shape); use
                        ns_norm_plan_stat_of / ns_norm_plan_affine_of for one element */
  double *mean;      /* nstat: the statistics used (batch ones in train mode, running ones
                        in eval mode); mean is 0 for uncentered maps */
  double *var;       /* nstat: the variance that normalized (m2/(count-ddof)) */
  double *denom;     /* nstat */
  ns_moments *batch; /* nstat: this input's own moments (also in eval mode); m2 is NaN for an
                        uncentered kind (RMS) without a running update to feed: its
                        statistic is the mean square, and m2 would cost a second pass */
  unsigned char *degenerate; /* nstat: 1 where denom is 0 or not finite, or count <= ddof */
  size_t ndegenerate;
} ns_norm_result;

/* 0 on success; -1 with err on a bad spec, shape, gamma/beta length, or a running object
 * whose statistic count does not match. Degenerate statistics are not errors: outputs
 * follow IEEE (0/0 = NaN) and are flagged. Memory: y, the per-statistic arrays and gamma/
 * beta in acc; nothing per element. Runs with ns_exec_default (SIMD, one thread). */
int ns_normalize(const ns_tensor *x, const ns_spec *spec, ns_norm_result *res, char *err);
void ns_norm_result_free(ns_norm_result *res);

/* How the kernels run (the core reads no environment: callers such as the Lua module
 * turn NS_SIMD / NS_THREADS into this). Results never depend on it, bit for bit. */
typedef struct {
  int simd;    /* 1: the best instruction set this CPU has (AVX2 or the SSE2 baseline);
                  0: the portable C loops only */
  int threads; /* statistics split over this many threads (1: none; capped at 64) */
} ns_exec;
/* simd 1, threads 1: what ns_normalize uses. */
void ns_exec_default(ns_exec *e);
/* ns_normalize with explicit execution settings (NULL: the defaults). */
int ns_normalize_exec(const ns_tensor *x, const ns_spec *spec, const ns_exec *ex,
                      ns_norm_result *res, char *err);
/* ns_normalize_exec writing its output into reuse, a tensor the call takes over (NULL:
 * none; never x itself, which is refused): when reuse has the output's shape and dtype
 * its memory becomes res->y, otherwise (or on an error) it is freed and res->y is new.
 * For callers that recompute one shape often, such as the explorer: a fresh 64 MB output
 * costs the kernel (the operating system) about as long to map and zero as the whole
 * normalization, a reused one nothing. The bits of y never depend on it.
 *   ns_tensor *old = res.y;
 *   res.y = NULL;
 *   ns_norm_result_free(&res);
 *   if (ns_normalize_reuse(x, spec, NULL, old, &res, err) != 0) ...
 */
int ns_normalize_reuse(const ns_tensor *x, const ns_spec *spec, const ns_exec *ex, ns_tensor *reuse,
                       ns_norm_result *res, char *err);
/* ns_normalize_exec writing its output into y, which stays the caller's (never freed, not
 * even on an error): y must have x's shape and the spec's dtype and must not be x. On
 * success res->y is NULL and y holds the output, the same bits as ns_normalize_exec's. */
int ns_normalize_into(const ns_tensor *x, const ns_spec *spec, const ns_exec *ex, ns_tensor *y,
                      ns_norm_result *res, char *err);
/* Recomputes statistics stats[0..k) of res, a result of ns_normalize_exec/_reuse of a
 * tensor of x's shape under this same spec, after x changed in those statistics' members
 * only: their outputs, mean, var, denom, batch moments and degenerate flags, the same bits
 * as a new ns_normalize_exec of x (statistics never depend on one another). The other
 * statistics are left as they are. For the explorer's cell edit: one statistic of a 64 MB
 * tensor instead of all of it. Train mode without running statistics, no mask, the kernels'
 * orders only (-1 with err otherwise: the caller normalizes again). stats ascending. */
int ns_normalize_restat(const ns_tensor *x, const ns_spec *spec, const ns_exec *ex,
                        const size_t *stats, size_t k, ns_norm_result *res, char *err);
/* The statistics of ns_normalize_exec without its output: res->y is NULL; its plan, mean,
 * var, denom, batch moments and degenerate flags are ns_normalize_exec's, bit for bit. sq,
 * when not NULL, gets each statistic's sum of squared values (in acc, in the spec's order)
 * where the kernels form one: an uncentered spec (RMS, whose batch m2 is NaN) or the raw
 * algorithm; else 0. Only what the
 * kernels compute: a mask, torch's or numpy's order, or running statistics (read or
 * updated) give -1 with err, and the caller takes another route. For the explorer's exact
 * moments: two passes over x, eight statistics side by side, where a sum per statistic in
 * a chain of its own runs at the adder's latency. */
int ns_normalize_stats(const ns_tensor *x, const ns_spec *spec, const ns_exec *ex,
                       ns_norm_result *res, double *sq, char *err);

/* ns_tensor_convert_range(src, dst, i0, len), the same bits, with the kernels' vector
 * conversions where ex allows them and the CPU has them (fp32 to fp16 or bf16: F16C, and
 * AVX2 integer rounding). The explorer's fp16 copy of a 64 MB x. */
void ns_exec_convert(const ns_exec *ex, const ns_tensor *src, ns_tensor *dst, size_t i0,
                     size_t len);

/* The instruction set the kernels use under ex: "avx2", "sse2" or "portable". */
const char *ns_exec_isa(const ns_exec *ex);

/* The reference path (normalize_ref.c): the same results as ns_normalize, bit for bit, by
 * the slow, obviously right route: a full plan with per-element lists, the whole input
 * copied to doubles, every statistic gathered, every operation rounded through
 * ns_round. Kept to test the kernels against; its result's plan has the lists. */
int ns_normalize_ref(const ns_tensor *x, const ns_spec *spec, ns_norm_result *res, char *err);

/* ---- Masks (normalize_mask.c) ----
 * spec->mask is a tensor that broadcasts to x (numpy's rule: shapes aligned at the last
 * axis, each mask size 1 or x's size, rank at most x's) and holds only 0 and 1: 1 keeps an
 * element in its statistic, 0 leaves it out (a padding position). Per statistic with k
 * kept elements: mean, var = m2 / (k - ddof), denom as usual, over the kept ones only, in
 * index order with the rounding of the unmasked path, so a mask of ones gives the same
 * bits as no mask. Outputs at masked positions are exactly 0 (no gamma, no beta). A
 * statistic with no kept element has mean, var and denom NaN, batch n = 0, is flagged
 * degenerate, and its outputs (all masked) are 0; in train mode the running statistics
 * of such a channel are left as they were. */

/* 0 if mask broadcasts to (rank, shape) and holds only 0 and 1; else -1 with err
 * starting "mask: " and saying what was wrong. */
int ns_mask_check(const ns_tensor *mask, int rank, const size_t *shape, char *err);
/* keep[i] = 1 or 0 for each of the n = prod(shape) elements of x: mask broadcast to x.
 * Checks as ns_mask_check first. keep is the caller's (n bytes). */
int ns_mask_expand(const ns_tensor *mask, int rank, const size_t *shape, unsigned char *keep,
                   char *err);
/* 1 if the mask (already checked against the shape) keeps flat element i of x, else 0: one
 * element at a time, for drawing (no n-byte list). */
int ns_mask_keeps(const ns_tensor *mask, int rank, const size_t *shape, size_t i);
/* For a function that walks whole statistics and has no masked form (fn names it): 1 with
 * err "fn: a masked spec is not supported ..." when spec has a mask, else 0. */
int ns_mask_unsupported(const ns_spec *spec, const char *fn, char *err);
/* A masked spec is normalized by the reference path (ns_normalize sends it there), which
 * gathers only the kept members of each statistic. */

#endif
