/* state.h: the explorer state, its field table, and the one function that changes it.
 *
 * A key, a REPL set{}, a lesson step or a loaded state file all build an ns_state_patch
 * and call ns_state_apply (or ns_history_apply, history.h), which validates the whole
 * patch against the resulting state first and changes nothing on error. The fields are
 * listed once, in fields.h; the descriptor table ns_fields[] built from that list drives
 * validation, copy, equality, staleness, the Lua conversion and dump.
 *
 * Ownership: an ns_state owns x, batch, baseline, gamma, beta and source; ns_state_copy
 * makes a copy, ns_state_free releases them (safe on a zeroed or freed state). A patch only
 * BORROWS its pointers: ns_state_apply copies what it keeps. Tensors are not copied but
 * shared (ns_tensor_share: copy-on-write), so a copy of a state with a 64 MB x, a lesson's
 * step snapshots and an undo step cost no second x; whatever writes into a state's tensor
 * in place (the history's cell edits) calls ns_tensor_unshare first.
 *
 *   ns_state s;
 *   char err[NS_ERRLEN];
 *   ns_state_init(&s, err);                  // x = (-2,-1,1,2), layer norm, eps 1e-5
 *   ns_state_patch p;
 *   ns_patch_init(&p);
 *   ns_patch_set(&p, NS_F_EPS);
 *   p.v.eps = 0;
 *   if (ns_state_apply(&s, &p, err) != 0) puts(err);
 *   ns_state_free(&s);
 */
#ifndef NS_EXPLORE_STATE_H
#define NS_EXPLORE_STATE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "core/jacobian.h"
#include "core/normalize.h"
#include "core/tensor.h"
#include "explore/fields.h"

/* The parts of a result (result.h) that a field's change makes stale (ns_field_desc.stale). */
enum {
  NS_PART_INPUT = 1u << 0,  /* input statistics */
  NS_PART_TRAIN = 1u << 1,  /* train/eval panel */
  NS_PART_OUTPUT = 1u << 2, /* the normalization of x (norm, y_mean/y_std, y_probe) */
  NS_PART_SHIFT = 1u << 3,  /* y_shift, shift_dev */
  NS_PART_SCALE = 1u << 4,  /* y_scale, scale_dev */
  NS_PART_JAC = 1u << 5,    /* Jacobians, spectra, rank */
  NS_PART_BATCH = 1u << 6,  /* batch panel */
  NS_PART_PREC = 1u << 7,   /* precision panel */
  NS_PART_RESID = 1u << 8,  /* residual-block Jacobians (placement) */
  NS_PART_VJP = 1u << 9,    /* the backward pass (upstream gradient) */
  NS_PART_ALL = (1u << 10) - 1
};

/* Where the train/eval panel takes its data from. */
typedef enum {
  NS_SOURCE_RNG = 0, /* ns_rng(seed) normal(train_loc, train_scale), one scalar feature */
  NS_SOURCE_BATCH,   /* one training step on the batch matrix as it is (a fresh module),
                        evaluated on the same matrix */
  NS_SOURCE_RESAMPLE /* rows drawn (seeded, with replacement) from the batch matrix */
} ns_source;
extern const char *const ns_source_names[];    /* "rng", "batch", "resample", NULL */
extern const char *const ns_placement_names[]; /* "none", "pre", "post", NULL */

#define NS_EXPLORE_MAX_BATCHES 10000
#define NS_EXPLORE_MAX_BATCH_SIZE 100000
/* The batch matrix holds at most this many elements (its Jacobian-free panel stays cheap). */
#define NS_EXPLORE_MAX_BATCH_ELEMS 8192

/* The whole explorer state: plain data, one member per field of fields.h (momentum also
 * sets `cumulative`; nbaseline always equals the batch's column count). View state (the
 * focused panel, cursors, scroll positions) is not here: it belongs to the screen. */
/* In-place writes of x the state remembers (x_log), for the screen's cell edits. */
#define NS_STATE_XLOG 16

typedef struct {
  ns_tensor *x;  /* the input (owned), rank 1..4, any storage dtype */
  char *source;  /* owned; "" or the file x was loaded from */
  ns_kind kind;  /* the normalize spec (meanings as in ns_spec, normalize.h) */
  unsigned axes; /* bit k: reduce over axis k+1; 0 = the kind's default */
  int groups;
  double eps;
  ns_eps_at eps_at;
  int ddof;
  int center;    /* 1, 0, or -1 = the kind's default */
  double *gamma; /* owned, ngamma values; 0 = none (1) */
  size_t ngamma;
  double *beta; /* owned, nbeta values; 0 = none (0) */
  size_t nbeta;
  ns_dtype dtype;
  int acc; /* ns_dtype, or -1: the default for dtype */
  ns_algo algo;
  ns_order order;
  ns_mode mode;
  ns_tensor *mask; /* owned or NULL (no mask): 1 keeps, 0 leaves out; broadcasts to x */

  /* Batch panel: BN down the columns, LN across the rows of a B x D matrix. */
  ns_tensor *batch; /* owned, rank 2, fp64, B >= 2 rows, D >= 1 columns, finite */
  double *baseline; /* owned, D values: the companion row the current one is compared with.
                       Kept when batch values change; reset to the companion row when the
                       batch shape or the companion index changes (unless set explicitly). */
  size_t nbaseline; /* D */
  int target;       /* 1-based row of the example we watch */
  int companion;    /* 1-based row the user changes; != target */

  /* Train/eval panel. */
  uint64_t seed;
  int train_batches;
  int batch_size; /* also the eval batch size */
  double momentum;
  int cumulative; /* 1: running stats are the cumulative average (set{momentum=false}) */
  ns_source train_source;
  double train_loc, train_scale;

  /* Output probes: y(x + shift*1) and y(scale*x) compared with y(x). */
  double shift;
  double scale;

  /* Evaluation distribution of the train/eval panel (NaN: the training one's). */
  double eval_loc, eval_scale;
  int eval_size; /* 0: batch_size */

  /* Residual block and backward pass. */
  ns_placement placement;
  ns_tensor *W;        /* owned or NULL (random, from w_seed) */
  ns_tensor *upstream; /* owned or NULL (random, from w_seed) */
  uint64_t w_seed;
  /* Not fields: a number that changes whenever x may have changed (a new tensor, an
   * element written in place by the history), kept by ns_state_copy. Equal nonzero stamps
   * mean equal x, so comparing two states (the screen's cache, every key) does not read a
   * 64 MB x twice. The log holds the last elements written in place, each with the stamp
   * it gave x, oldest first, from x_log_base on (ns_state_x_changes). */
  uint64_t x_stamp, x_log_base;
  int x_log_n;
  struct {
    uint64_t stamp;
    size_t at;
  } x_log[NS_STATE_XLOG];
} ns_state;

/* How a field's value is converted, checked, copied and compared. */
typedef enum {
  NS_FT_TENSOR,   /* ns_tensor * (owned) */
  NS_FT_STRING,   /* char * (owned) */
  NS_FT_ENUM,     /* an enum member; .names lists the choices; NS_FF_DEFAULT adds -1 */
  NS_FT_TRIBOOL,  /* int: 1 true, 0 false, -1 "default" */
  NS_FT_AXES,     /* unsigned bit mask of 1-based axes; 0 = "default" */
  NS_FT_INT,      /* int in [lo, hi] */
  NS_FT_DOUBLE,   /* double, finite, in [lo, hi]; NS_FF_DEFAULT adds NaN, "default" */
  NS_FT_DOUBLES,  /* double * (owned) with a size_t count at .count; finite values */
  NS_FT_SEED,     /* uint64_t */
  NS_FT_MOMENTUM, /* double in (lo, hi], or "false": the int `cumulative` member */
  NS_FT_COUNT
} ns_ftype;
extern const char *const ns_ftype_names[]; /* "tensor", "string", ... */

enum {
  NS_FF_DEFAULT = 1u << 0,      /* an enum that also takes "default" (stored as -1) */
  NS_FF_FALSE_RESETS = 1u << 1, /* an array or tensor that takes false (NULL): back to its
                                   derived value */
  NS_FF_OPEN_LO = 1u << 2       /* the range excludes lo */
};

typedef struct {
  const char *name;
  ns_ftype type;
  size_t off;               /* offsetof(ns_state, member) */
  size_t count;             /* NS_FT_DOUBLES: offsetof the element count */
  const char *const *names; /* NS_FT_ENUM: choices in enum order, NULL-terminated */
  double lo, hi;            /* NS_FT_INT, NS_FT_DOUBLE, NS_FT_MOMENTUM: range */
  unsigned flags;           /* NS_FF_* */
  unsigned stale;           /* result parts (result.h NS_PART_*) a change makes stale */
  double def;               /* default of a scalar field */
  const char *doc;          /* one line */
} ns_field_desc;

typedef enum {
#define NS_FIELD_ENUM(ID, ...) NS_F_##ID,
  NS_FIELDS(NS_FIELD_ENUM)
#undef NS_FIELD_ENUM
      NS_F_COUNT
} ns_field;

/* The descriptor of every field, indexed by ns_field. */
extern const ns_field_desc ns_fields[NS_F_COUNT];

/* set{}/get() name of a field ("?" out of range), and the field of a name or -1. */
const char *ns_field_name(ns_field f);
int ns_field_parse(const char *name);
/* The choice index of name in a NULL-terminated list, or -1. */
int ns_choice_parse(const char *const *names, const char *name);
/* The list of a NULL-terminated name array joined by ", " into buf. */
const char *ns_choice_list(const char *const *names, char *buf, size_t len);
/* -1 and err "<name>: must be ..., got v": the one wording of a number outside field d's
 * range (lo, hi, NS_FF_OPEN_LO), for set{} and ns.normalize{} alike. */
int ns_field_range_fail(const ns_field_desc *d, double v, char *err);

/* A set of fields (bit f for field f). */
typedef uint64_t ns_fieldset;
#define NS_FIELDBIT(f) ((ns_fieldset)1 << (f))
#define NS_ALLFIELDS ((NS_F_COUNT >= 64) ? ~(ns_fieldset)0 : (NS_FIELDBIT(NS_F_COUNT) - 1))

/* A change: field f is given when bit f of `set` is on; its value is the member of `v`
 * (pointers borrowed, copied by ns_state_apply). A DOUBLES field given with a NULL
 * pointer and NS_FF_FALSE_RESETS (the baseline) goes back to its derived value. */
typedef struct {
  ns_fieldset set;
  ns_state v;
} ns_state_patch;

/* An empty patch (nothing set). */
void ns_patch_init(ns_state_patch *p);
/* Marks field f as given. */
void ns_patch_set(ns_state_patch *p, ns_field f);
/* 1 if the patch gives field f. */
int ns_patch_has(const ns_state_patch *p, ns_field f);
/* A patch that sets every field to src's value (borrowing src's arrays): applying it
 * makes the state equal to src (reset, lesson steps, replaying a recording). */
void ns_patch_from_state(ns_state_patch *p, const ns_state *src);

/* The default state (each scalar field at its table default): x = (-2,-1,1,2) fp64,
 * layer norm, eps 1e-5 inside the sqrt, batch ((0, 1), (2, -1)) with target 1,
 * companion 2, baseline (2, -1) (column 1 is the sign-flip example: change the
 * companion's 2 to -2 and the target's BN output goes from -0.999995 to +0.999995); 8
 * training batches of 32 from normal(4, 2); probes shift 10, scale 2. 0, or -1 with err. */
int ns_state_init(ns_state *s, char *err);
/* Deep copy into dst (dst's old contents are NOT freed). 0, or -1 with err. */
int ns_state_copy(ns_state *dst, const ns_state *src, char *err);
void ns_state_free(ns_state *s);
/* 1 if field f holds the same value in a and b (tensors: shape, dtype and data bit for bit;
 * numbers bit for bit, NaN equal to NaN; momentum not compared when both are cumulative). */
int ns_field_equal(ns_field f, const ns_state *a, const ns_state *b);
/* 1 if every field is equal. */
int ns_state_equal(const ns_state *a, const ns_state *b);
/* The fields whose values differ. */
ns_fieldset ns_state_diff(const ns_state *a, const ns_state *b);
/* Gives s->x a new stamp (see x_stamp) and empties its log: call after changing s->x in
 * any way other than the history's own writes. */
void ns_state_stamp_x(ns_state *s);
/* The same after elements at[0..k) were written in place: they go into the log. */
void ns_state_stamp_x_at(ns_state *s, const size_t *at, size_t k);
/* The elements written in place since x had stamp `since`, into at (NS_STATE_XLOG of
 * room, in the order written, possibly repeated): how many (0 when the stamp is s's own),
 * or -1 when the log does not reach back to it (x may differ anywhere). */
int ns_state_x_changes(const ns_state *s, uint64_t since, size_t *at);

/* Applies p to s. Every given field is checked by its type's rule (range, choices,
 * finiteness), then the combination (the spec must be valid for x: axes within x's rank,
 * groups dividing the channels, gamma/beta lengths; target/companion within the batch and
 * different; ...). On error returns -1 with err naming the field ("eps: must be finite and
 * >= 0, got -1") and s is unchanged. */
int ns_state_apply(ns_state *s, const ns_state_patch *p, char *err);

/* Fills an ns_spec (borrowing s's gamma/beta) from the state; running = NULL. The fields
 * copied are fields.h's NS_SPEC_FIELDS. */
void ns_state_spec(const ns_state *s, ns_spec *spec);
/* The spec fields (NS_SPEC_FIELDS) whose flags include one of flags, as a field set. */
ns_fieldset ns_spec_fieldset(int flags);
/* 1 if a and b agree on every NS_SPEC_M2 field (the grouping the exact moments use). */
int ns_spec_same_m2(const ns_spec *a, const ns_spec *b);
/* The number of spec fields (NS_SPEC_FIELDS rows). */
#define NS_SPEC_ROW_(ID, member, copy, flags) +1
enum { NS_SPEC_NFIELDS = 0 NS_SPEC_FIELDS(NS_SPEC_ROW_) };
#undef NS_SPEC_ROW_

/* Bytes a state holds (tensors and arrays). */
size_t ns_state_bytes(const ns_state *s);

/* The state as a Lua chunk of one set{...} call that reproduces it bit for bit (numbers
 * in %.17g, which round-trips a double; NaN and infinities as 0/0 and 1/0). A tensor of
 * more than inline_max elements with a source file is written as {file=, sha256=} of its
 * data instead of its values. Returns a malloc'd string, or NULL with err. */
char *ns_state_dump(const ns_state *s, size_t inline_max, char *err);
/* As ns_state_dump, with a place for the values of a tensor of NS_DUMP_SPILL_MIN elements
 * or more that no file holds (x after a cell edit of a large file): spill writes t (of the
 * field named field, whose ns_tensor_digest is hex) to a file and puts its path in
 * path[0..cap), 0, or fails with err (the dump then fails, naming the field); the dump names
 * the file as for a source. Without spill, or below that size, such a tensor is written out
 * value by value (20 MB of text at the threshold; 16M values took 15 s and 362 MB). */
#define NS_DUMP_SPILL_MIN ((size_t)1 << 20)
typedef int (*ns_dump_spill)(void *ud, const char *field, const ns_tensor *t, const char *hex,
                             char *path, size_t cap, char *err);
char *ns_state_dump_spill(const ns_state *s, size_t inline_max, ns_dump_spill spill, void *ud,
                          char *err);
/* The general dump: which tensors are written value by value, which spilled to files and
 * how those are named. ns_state_dump_spill is inline_max, spill, ud and NS_DUMP_SPILL_MIN. */
typedef struct {
  size_t inline_max;   /* tensors of more elements are named by a file, not written out */
  ns_dump_spill spill; /* NULL: no spill */
  void *ud;
  size_t spill_min; /* a tensor no file holds is spilled from this many elements */
  int spill_all;    /* 1: every tensor of more than inline_max elements is spilled, one a
                       source file holds too (a recorded lesson carries its own data) */
  int as_given;     /* 1: a spilled file is named by the path spill gave (a lesson's, relative
                       to it), not made absolute */
} ns_dump_opts;
char *ns_state_dump_with(const ns_state *s, const ns_dump_opts *o, char *err);
/* Default inline_max: larger tensors loaded from a file are referenced by name. */
#define NS_DUMP_INLINE_MAX 4096
/* The line "  name = ...," of field name in a dump (a value that goes on over lines indented
 * deeper, a tensor's, included), and its length without the final newline; NULL when the
 * dump has no such field. Points into dump. */
const char *ns_dump_field(const char *dump, const char *name, size_t *len);

/* sha256 of a tensor's dtype, shape and data bytes, as 64 hex digits into hex[65]. */
void ns_tensor_digest(const ns_tensor *t, char hex[65]);

#endif
