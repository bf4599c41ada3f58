/* fields.h: THE list of the explorer state's fields. Everything that walks the fields (the
 * ns_field enum and names, the descriptor table, patches, validation, copy, equality,
 * staleness, Lua set{}/get(), completion, the help text of set, dump) is generated from
 * this one list or walks the table built from it, as jq's opcode_list.h or tmux's
 * options table. Adding a setting is one row here plus its computation.
 *
 * A row: FIELD(ID, name, type, member, default, stale, doc, extras...)
 *   ID       the enum constant is NS_F_##ID
 *   name     the set{}/get() name
 *   type     NS_FT_* (state.h): how the value is converted, checked, copied, compared
 *   member   the ns_state member that holds it
 *   default  the default value, for the scalar types (ignored for arrays and tensors,
 *            whose defaults ns_state_init builds)
 *   stale    the result parts (result.h NS_PART_*) a change of the field makes stale
 *   doc      one line for `help set`, the man page and completion
 *   extras   designated initializers of ns_field_desc: .names (choices), .lo/.hi (range),
 *            .count (offset of the element count of an array), .flags
 * The order is the order get(), dump() and the help list them in.
 */
#ifndef NS_EXPLORE_FIELDS_H
#define NS_EXPLORE_FIELDS_H

/* clang-format off */
#define NS_FIELDS(FIELD)                                                                           \
  FIELD(X, "x", TENSOR, x, 0, NS_PART_INPUT | NS_PART_OUTPUT | NS_PART_PREC,                       \
    "the input: tensor of rank 1 to 4, nested table, or {file=PATH [, sha256=HEX]}")               \
  FIELD(SOURCE, "source", STRING, source, 0, 0,                                                    \
    "where x came from (a file name), or \"\"; set by loading a file")                             \
  FIELD(KIND, "kind", ENUM, kind, NS_KIND_LAYER, NS_PART_OUTPUT,                                   \
    "the normalization: one of" NS_KIND_WORDS, .names = ns_kind_names)                           \
  FIELD(AXES, "axes", AXES, axes, 0, NS_PART_OUTPUT,                                               \
    "1-based reduction axes, e.g. {2,3,4}, or \"default\" (the kind's)")                           \
  FIELD(GROUPS, "groups", INT, groups, 1, NS_PART_OUTPUT,                                          \
    "channel groups of group norm (must divide the channels)", .lo = 1, .hi = 1 << 30)             \
  FIELD(EPS, "eps", DOUBLE, eps, 1e-5, NS_PART_OUTPUT | NS_PART_TRAIN | NS_PART_BATCH,             \
    "epsilon, finite and >= 0", .lo = 0, .hi = HUGE_VAL)                                           \
  FIELD(EPS_AT, "eps_at", ENUM, eps_at, NS_EPS_VAR, NS_PART_OUTPUT | NS_PART_TRAIN | NS_PART_BATCH,\
    "where eps goes: \"var\" sqrt(var+eps) or \"std\" std+eps", .names = ns_eps_at_names)          \
  FIELD(DDOF, "ddof", INT, ddof, 0, NS_PART_OUTPUT | NS_PART_TRAIN | NS_PART_BATCH,                \
    "0 (population variance) or 1 (unbiased)", .lo = 0, .hi = 1)                                   \
  FIELD(CENTER, "center", TRIBOOL, center, -1, NS_PART_OUTPUT,                                     \
    "subtract the mean: true, false or \"default\" (false for rms only)")                          \
  FIELD(GAMMA, "gamma", DOUBLES, gamma, 0, NS_PART_OUTPUT,                                         \
    "scale: a number, an array per channel/element, or {} for none",                               \
    .count = offsetof(ns_state, ngamma))                                                           \
  FIELD(BETA, "beta", DOUBLES, beta, 0, NS_PART_OUTPUT,                                            \
    "shift: a number, an array per channel/element, or {} for none",                               \
    .count = offsetof(ns_state, nbeta))                                                            \
  FIELD(ORDER, "order", ENUM, order, NS_ORDER_SEQUENTIAL, NS_PART_OUTPUT,                          \
    "summation order: sequential, pairwise (numpy's float32 sums), torch (its LayerNorm kernel)",  \
    .names = ns_order_names)                                                                       \
  FIELD(DTYPE, "dtype", ENUM, dtype, NS_FP64, NS_PART_OUTPUT | NS_PART_PREC,                       \
    "storage dtype: fp64, fp32, fp16 or bf16", .names = ns_dtype_names)                            \
  FIELD(ACC, "acc", ENUM, acc, -1, NS_PART_OUTPUT | NS_PART_PREC,                                  \
    "accumulation dtype, or \"default\" (dtype; fp32 for fp16/bf16)", .names = ns_dtype_names,     \
    .flags = NS_FF_DEFAULT)                                                                        \
  FIELD(ALGO, "algo", ENUM, algo, NS_ALGO_TWOPASS, NS_PART_OUTPUT,                                 \
    "variance algorithm: twopass, welford or raw", .names = ns_algo_names)                         \
  FIELD(MODE, "mode", ENUM, mode, NS_MODE_TRAIN, NS_PART_OUTPUT,                                   \
    "train (batch statistics) or eval (running statistics)", .names = ns_mode_names)               \
  FIELD(MASK, "mask", TENSOR, mask, 0, NS_PART_OUTPUT,                                             \
    "1 keeps an element in its statistic, 0 leaves it out (padding; output 0): broadcastable to "  \
    "x; false: none", .flags = NS_FF_FALSE_RESETS)                                                 \
  FIELD(BATCH, "batch", TENSOR, batch, 0, NS_PART_BATCH,                                           \
    "the batch panel's matrix: rows are examples, at least 2")                                     \
  FIELD(BASELINE, "baseline", DOUBLES, baseline, 0, NS_PART_BATCH,                                 \
    "the companion row the current one is compared with, or false (the companion row)",            \
    .count = offsetof(ns_state, nbaseline), .flags = NS_FF_FALSE_RESETS)                           \
  FIELD(TARGET, "target", INT, target, 1, NS_PART_BATCH,                                           \
    "batch row whose output we watch (1-based)", .lo = 1, .hi = 1 << 30)                           \
  FIELD(COMPANION, "companion", INT, companion, 2, NS_PART_BATCH,                                  \
    "batch row you change (1-based, not the target)", .lo = 1, .hi = 1 << 30)                      \
  FIELD(SEED, "seed", SEED, seed, 316832669, NS_PART_TRAIN,                                        \
    "seed of the training draws (numpy default_rng), 0 to 2^64-1")                                 \
  FIELD(TRAIN_BATCHES, "train_batches", INT, train_batches, 8, NS_PART_TRAIN,                      \
    "training batches merged into the running statistics", .lo = 1,                                \
    .hi = NS_EXPLORE_MAX_BATCHES)                                                                  \
  FIELD(BATCH_SIZE, "batch_size", INT, batch_size, 32, NS_PART_TRAIN,                              \
    "examples per training batch (and in the eval batch)", .lo = 2,                                \
    .hi = NS_EXPLORE_MAX_BATCH_SIZE)                                                               \
  FIELD(MOMENTUM, "momentum", MOMENTUM, momentum, 0.1, NS_PART_TRAIN,                              \
    "running-statistics momentum in (0, 1], or false for the cumulative average",                  \
    .lo = 0, .hi = 1, .flags = NS_FF_OPEN_LO)                                                      \
  FIELD(TRAIN_SOURCE, "train_source", ENUM, train_source, NS_SOURCE_RNG, NS_PART_TRAIN,            \
    "training data: \"rng\" (normal draws) or \"batch\" (rows of the batch)",                      \
    .names = ns_source_names)                                                                      \
  FIELD(TRAIN_LOC, "train_loc", DOUBLE, train_loc, 4, NS_PART_TRAIN,                               \
    "mean of the training draws", .lo = -HUGE_VAL, .hi = HUGE_VAL)                                 \
  FIELD(TRAIN_SCALE, "train_scale", DOUBLE, train_scale, 2, NS_PART_TRAIN,                         \
    "standard deviation of the training draws", .lo = 0, .hi = HUGE_VAL)                           \
  FIELD(SHIFT, "shift", DOUBLE, shift, 10, NS_PART_SHIFT,                                          \
    "the shift probe b: compare y(x + b) with y(x)", .lo = -HUGE_VAL, .hi = HUGE_VAL)              \
  FIELD(SCALE, "scale", DOUBLE, scale, 2, NS_PART_SCALE,                                           \
    "the scale probe a: compare y(a x) with y(x)", .lo = -HUGE_VAL, .hi = HUGE_VAL)                \
  FIELD(EVAL_LOC, "eval_loc", DOUBLE, eval_loc, NAN, NS_PART_TRAIN,                                \
    "mean of the evaluation draws, or \"default\" (train_loc: no shift)", .lo = -HUGE_VAL,         \
    .hi = HUGE_VAL, .flags = NS_FF_DEFAULT)                                                        \
  FIELD(EVAL_SCALE, "eval_scale", DOUBLE, eval_scale, NAN, NS_PART_TRAIN,                          \
    "standard deviation of the evaluation draws, or \"default\" (train_scale)", .lo = 0,           \
    .hi = HUGE_VAL, .flags = NS_FF_DEFAULT)                                                        \
  FIELD(EVAL_SIZE, "eval_size", INT, eval_size, 0, NS_PART_TRAIN,                                  \
    "examples in the evaluation batch; 0: batch_size", .lo = 0, .hi = NS_EXPLORE_MAX_BATCH_SIZE)   \
  FIELD(PLACEMENT, "placement", ENUM, placement, NS_PLACE_NONE, NS_PART_RESID,                     \
    "where N sits in a residual block: none (x + Wx), pre (x + W N(x)), post (N(x + Wx))",         \
    .names = ns_placement_names)                                                                   \
  FIELD(W, "W", TENSOR, W, 0, NS_PART_RESID,                                                       \
    "the residual branch: n x n over x, or D x D per row; false: random from w_seed",              \
    .flags = NS_FF_FALSE_RESETS)                                                                   \
  FIELD(UPSTREAM, "upstream", TENSOR, upstream, 0, NS_PART_VJP,                                    \
    "dL/dy for the backward pass (x's element count); false: random from w_seed",                  \
    .flags = NS_FF_FALSE_RESETS)                                                                   \
  FIELD(W_SEED, "w_seed", SEED, w_seed, 1, NS_PART_RESID | NS_PART_VJP,                            \
    "seed of the random W (normal, sd 1/sqrt(d)) and upstream gradient (normal)")

/* The fields above that are the normalization spec's (core/normalize.h ns_spec), once:
 * S(ID, member, copy, flags). ns_state_spec copies them, the shape check of ns_state_apply runs
 * when a field flagged NS_SPEC_SHAPE changes, the m2 cache is keyed by those flagged
 * NS_SPEC_M2, and ns.normalize{} accepts their names (plus its own "running").
 *   ID     the field NS_F_##ID
 *   member the ns_state member, and the ns_spec member of the same name
 *   copy   SCALAR (the value) or ARRAY (pointer and count n##member, NULL when empty)
 *   flags  NS_SPEC_SHAPE: checked against x's shape (plan, mask, gamma/beta lengths);
 *          NS_SPEC_M2: the exact second moments depend on it (with the resolved
 *          centering and x's dtype, which the cache keeps beside these) */
#define NS_SPEC_SHAPE 1
#define NS_SPEC_M2 2
#define NS_SPEC_FIELDS(S)                                                                          \
  S(KIND, kind, SCALAR, NS_SPEC_SHAPE | NS_SPEC_M2)                                                \
  S(AXES, axes, SCALAR, NS_SPEC_SHAPE | NS_SPEC_M2)                                                \
  S(GROUPS, groups, SCALAR, NS_SPEC_SHAPE | NS_SPEC_M2)                                            \
  S(EPS, eps, SCALAR, 0)                                                                           \
  S(EPS_AT, eps_at, SCALAR, 0)                                                                     \
  S(DDOF, ddof, SCALAR, 0)                                                                         \
  S(CENTER, center, SCALAR, NS_SPEC_SHAPE)                                                         \
  S(GAMMA, gamma, ARRAY, NS_SPEC_SHAPE)                                                            \
  S(BETA, beta, ARRAY, NS_SPEC_SHAPE)                                                              \
  S(ORDER, order, SCALAR, 0)                                                                       \
  S(DTYPE, dtype, SCALAR, 0)                                                                       \
  S(ACC, acc, SCALAR, 0)                                                                           \
  S(ALGO, algo, SCALAR, 0)                                                                         \
  S(MODE, mode, SCALAR, 0)                                                                         \
  S(MASK, mask, SCALAR, NS_SPEC_SHAPE)
/* clang-format on */

#endif
