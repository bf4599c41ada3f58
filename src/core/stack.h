/* stack.h: chapter 004's deep stack. A batch h_0 of normal inputs goes through `layers`
 * layers z = h W_k (init * a standard normal W_k), optionally normalized, then an
 * activation: h_k = act(N(z)). The draws follow the essay's protocol with the
 * numpy-compatible generator (rng.h): default_rng(seed), h_0 = normal(0, 1, (batch,
 * width)) first, then W_1, ..., W_layers = normal(0, 1, (width, width)) in order, so
 * the runs for different init values share their random numbers.
 *
 * Normalization (ns_normalize, fp64): "batch" over the batch axis, "layer" over the
 * features, eps and eps_at as in a spec (the essay: eps 1e-5 added to the std).
 *
 * Per layer k (1-based in the text, index k-1 in the arrays):
 *   std[k], mean[k]   population std and mean of all of h_k (the layer's output)
 *   kurt[k], maxabs[k] Pearson kurtosis (3 for a normal) and max |.| of the normalized
 *                      pre-activation N(z_k), what the activation sees
 *
 * Ownership: ns_stack fills a result whose arrays and h it owns; free it with
 * ns_stack_result_free (safe on a zeroed struct). Typical call:
 *   ns_stack_opts o;
 *   ns_stack_default(&o);               // 20 layers, 256 wide, batch 512, init 1/16
 *   o.norm = NS_STACK_BATCH;
 *   ns_stack_result r = {0};
 *   if (ns_stack(&o, &r, err) == 0) { ... r.std[19] ...; }
 *   ns_stack_result_free(&r);
 */
#ifndef NS_STACK_H
#define NS_STACK_H

#include <stddef.h>
#include <stdint.h>

#include "core/normalize.h"
#include "core/tensor.h"

typedef enum { NS_STACK_NONE = 0, NS_STACK_BATCH, NS_STACK_LAYER } ns_stack_norm;
#define NS_STACK_NORM_NAMES                                                                        \
  { "none", "batch", "layer", NULL } /* in ns_stack_norm order */
typedef enum { NS_ACT_TANH = 0, NS_ACT_LINEAR } ns_stack_act;
#define NS_STACK_ACT_NAMES                                                                         \
  { "tanh", "linear", NULL } /* in ns_stack_act order */

/* Limits: a run's arrays stay below about 200 MB. */
#define NS_STACK_MAXLAYERS 1000
#define NS_STACK_MAXWIDTH 2048
#define NS_STACK_MAXELEMS ((size_t)1 << 22) /* batch * width */

typedef struct {
  int layers;   /* 1 .. NS_STACK_MAXLAYERS, default 20 */
  size_t width; /* 1 .. NS_STACK_MAXWIDTH, default 256 */
  size_t batch; /* >= 1, batch * width <= NS_STACK_MAXELEMS, default 512 */
  double init;  /* finite; W_k = init * normal draws; default 1/16 */
  ns_stack_norm norm;
  double eps;       /* >= 0, default 1e-5 */
  ns_eps_at eps_at; /* default NS_EPS_STD, as the essay writes it */
  ns_stack_act act; /* default tanh */
  uint64_t seed;    /* default 0 */
  /* tanh: 0 (default) ns_tanh_array, vectorized, within NS_TANH_ULPS of the correctly
     rounded value (norm_kernels_tanh.h); 1 the C library's tanh, the reference loop's bits */
  int libm_tanh;
} ns_stack_opts;

typedef struct {
  int layers;
  double *std, *mean, *kurt, *maxabs; /* layers entries each */
  ns_tensor *h;                       /* (batch, width) fp64: the last layer's output */
} ns_stack_result;

void ns_stack_default(ns_stack_opts *o);
/* 0, or -1 with err naming the option out of range. */
int ns_stack(const ns_stack_opts *o, ns_stack_result *r, char *err);
void ns_stack_result_free(ns_stack_result *r);

#endif
