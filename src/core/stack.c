/* stack.c: chapter 004's deep stack (see stack.h for the protocol). */
#include "core/stack.h"
#include "core/err.h"
#include "core/rng.h"
#include "core/blasdl.h"
#include "core/tensor_ops.h"
#include "core/norm_kernels_tanh.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ns_stack_default(ns_stack_opts *o) {
  o->layers = 20;
  o->width = 256;
  o->batch = 512;
  o->init = 1.0 / 16;
  o->norm = NS_STACK_NONE;
  o->eps = 1e-5;
  o->eps_at = NS_EPS_STD;
  o->act = NS_ACT_TANH;
  o->seed = 0;
  o->libm_tanh = 0;
}

void ns_stack_result_free(ns_stack_result *r) {
  if (!r) return;
  free(r->std);
  free(r->mean);
  free(r->kurt);
  free(r->maxabs);
  ns_tensor_free(r->h);
  memset(r, 0, sizeof *r);
}

static int check(const ns_stack_opts *o, char *err) {
  if (o->layers < 1 || o->layers > NS_STACK_MAXLAYERS) {
    ns_seterr(err, "stack: layers must be 1 .. %d, got %d", NS_STACK_MAXLAYERS, o->layers);
    return -1;
  }
  if (o->width < 1 || o->width > NS_STACK_MAXWIDTH) {
    ns_seterr(err, "stack: width must be 1 .. %d, got %zu", NS_STACK_MAXWIDTH, o->width);
    return -1;
  }
  if (o->batch < 1 || o->batch > NS_STACK_MAXELEMS / o->width) {
    ns_seterr(err, "stack: batch must be 1 .. %zu at width %zu (batch * width <= %zu), got %zu",
              NS_STACK_MAXELEMS / o->width, o->width, NS_STACK_MAXELEMS, o->batch);
    return -1;
  }
  if (!isfinite(o->init)) {
    ns_seterr(err, "stack: init must be finite, got %g", o->init);
    return -1;
  }
  if (o->norm != NS_STACK_NONE && o->norm != NS_STACK_BATCH && o->norm != NS_STACK_LAYER) {
    ns_seterr(err, "stack: unknown norm %d", (int)o->norm);
    return -1;
  }
  if (o->act != NS_ACT_TANH && o->act != NS_ACT_LINEAR) {
    ns_seterr(err, "stack: unknown act %d", (int)o->act);
    return -1;
  }
  if (!ns_eps_ok(o->eps)) {
    ns_seterr(err, "stack: eps " NS_EPS_RULE ", got %g", o->eps);
    return -1;
  }
  if (o->eps_at != NS_EPS_VAR && o->eps_at != NS_EPS_STD) {
    ns_seterr(err, "stack: unknown eps_at %d", (int)o->eps_at);
    return -1;
  }
  return 0;
}

/* Fills t (fp64) with normal(0, 1) draws times scale in row-major order, as numpy fills
 * it: the draw, then one product rounded (W * init as the Lua version writes it). */
static void draw_into(ns_rng *g, ns_tensor *t, double scale) {
  double *v = t->data;
  for (size_t i = 0; i < t->n; i++) v[i] = ns_rng_normal(g, 0.0, 1.0) * scale;
}

/* The kurtosis of z and its largest |value| (NaN once one is seen), the same sums in the
 * same order as ns_op_reduce_all(z, NS_RED_KURT) and the Lua z:abs():max(), with the
 * maximum taken in the first pass. */
static void kurt_maxabs(const double *z, size_t n, double *kurt, double *maxabs) {
  double s = 0, mx = 0, m2 = 0, m4 = 0;
  for (size_t i = 0; i < n; i++) {
    s += z[i];
    if (isnan(z[i]) || (!isnan(mx) && fabs(z[i]) > mx)) mx = isnan(mx) ? mx : fabs(z[i]);
  }
  double mean = s / (double)n;
  for (size_t i = 0; i < n; i++) {
    double d = z[i] - mean, d2 = d * d;
    m2 += d2;
    m4 += d2 * d2;
  }
  double v = m2 / (double)n;
  *kurt = (m4 / (double)n) / (v * v);
  *maxabs = mx;
}

/* h = act(z) with the sum of h in the same pass, then std(h) (ddof 0) and mean(h) as
 * ns_op_reduce_all computes them. h may be z (linear). */
static void act_stats(const double *z, double *h, size_t n, int tanh_act, int libm, double *std,
                      double *mean) {
  double s = 0, m2 = 0;
  if (tanh_act && !libm) {
    ns_tanh_array(z, h, n, 1);
    for (size_t i = 0; i < n; i++) s += h[i];
  } else
    for (size_t i = 0; i < n; i++) {
      double v = tanh_act ? tanh(z[i]) : z[i];
      h[i] = v;
      s += v;
    }
  double mu = s / (double)n;
  for (size_t i = 0; i < n; i++) {
    double d = h[i] - mu;
    m2 += d * d;
  }
  *std = sqrt(m2 / (double)n);
  *mean = mu;
}

/* The layers run in four buffers made once (h, W, z and the normalized z), W drawn in
 * place, z = h W by one dgemm straight into z, the normalization written into its buffer
 * (ns_normalize_into), the activation fused with the sum its statistics need: no
 * allocation, copy or page fault per layer. The bits are those of the loop over the
 * module's primitives (tests/lua/stack.lua checks them). */
int ns_stack(const ns_stack_opts *o, ns_stack_result *r, char *err) {
  if (!o || !r) {
    ns_seterr(err, "stack: %s is NULL", o ? "result" : "options");
    return -1;
  }
  memset(r, 0, sizeof *r);
  if (check(o, err)) return -1;
  size_t L = (size_t)o->layers;
  r->layers = o->layers;
  r->std = malloc(L * sizeof *r->std);
  r->mean = malloc(L * sizeof *r->mean);
  r->kurt = malloc(L * sizeof *r->kurt);
  r->maxabs = malloc(L * sizeof *r->maxabs);
  if (!r->std || !r->mean || !r->kurt || !r->maxabs) {
    ns_stack_result_free(r);
    ns_seterr(err, "stack: out of memory");
    return -1;
  }
  const ns_cblas *cb = ns_cblas_get("stack", err);
  if (!cb) {
    ns_stack_result_free(r);
    return -1;
  }
  ns_rng g;
  ns_rng_seed_u64(&g, o->seed);
  ns_spec spec;
  ns_spec_default(&spec);
  spec.kind = o->norm == NS_STACK_BATCH ? NS_KIND_BATCH : NS_KIND_LAYER;
  spec.eps = o->eps;
  spec.eps_at = o->eps_at;
  size_t B = o->batch, D = o->width, hs[2] = {B, D}, ws[2] = {D, D};
  ns_tensor *h = ns_tensor_new_uninit(2, hs, NS_FP64, err);
  ns_tensor *W = h ? ns_tensor_new_uninit(2, ws, NS_FP64, err) : NULL;
  ns_tensor *z = W ? ns_tensor_new_uninit(2, hs, NS_FP64, err) : NULL;
  ns_tensor *zn = z && o->norm != NS_STACK_NONE ? ns_tensor_new_uninit(2, hs, NS_FP64, err) : NULL;
  int rc = z && (zn || o->norm == NS_STACK_NONE) ? 0 : -1;
  if (rc == 0) draw_into(&g, h, 1.0);
  for (size_t k = 0; k < L && rc == 0; k++) {
    draw_into(&g, W, o->init);
    cb->dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)B, (int)D, (int)D, 1.0,
              (const double *)h->data, (int)D, (const double *)W->data, (int)D, 0.0,
              (double *)z->data, (int)D);
    const ns_tensor *zk = z;
    if (o->norm != NS_STACK_NONE) {
      ns_norm_result nr;
      if (ns_normalize_into(z, &spec, NULL, zn, &nr, err)) {
        rc = -1;
        break;
      }
      ns_norm_result_free(&nr);
      zk = zn;
    }
    kurt_maxabs(zk->data, zk->n, &r->kurt[k], &r->maxabs[k]);
    act_stats(zk->data, h->data, h->n, o->act == NS_ACT_TANH, o->libm_tanh, &r->std[k],
              &r->mean[k]);
  }
  ns_tensor_free(W);
  ns_tensor_free(z);
  ns_tensor_free(zn);
  if (rc) {
    ns_tensor_free(h);
    ns_stack_result_free(r);
    return -1;
  }
  r->h = h;
  return 0;
}
