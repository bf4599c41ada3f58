/* stack.c: chapter 004's deep stack (see stack.h for the protocol). */
#include "core/stack.h"
#include "core/err.h"
#include "core/rng.h"
#include "core/tensor_ops.h"

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

/* A (rows, cols) fp64 tensor of normal(0, 1) draws in row-major order, as numpy fills it. */
static ns_tensor *draw(ns_rng *g, size_t rows, size_t cols, double scale, char *err) {
  size_t shape[2] = {rows, cols};
  ns_tensor *t = ns_tensor_new(2, shape, NS_FP64, err);
  if (!t) return NULL;
  double *v = t->data;
  /* W * init as the Lua version writes it: the draw, then one product rounded */
  for (size_t i = 0; i < t->n; i++) v[i] = ns_rng_normal(g, 0.0, 1.0) * scale;
  return t;
}

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
  ns_rng g;
  ns_rng_seed_u64(&g, o->seed);
  ns_spec spec;
  ns_spec_default(&spec);
  spec.kind = o->norm == NS_STACK_BATCH ? NS_KIND_BATCH : NS_KIND_LAYER;
  spec.eps = o->eps;
  spec.eps_at = o->eps_at;
  ns_tensor *h = draw(&g, o->batch, o->width, 1.0, err), *W = NULL, *z = NULL;
  int rc = h ? 0 : -1;
  for (size_t k = 0; k < L && rc == 0; k++) {
    W = draw(&g, o->width, o->width, o->init, err);
    z = W ? ns_op_matmul(h, W, err) : NULL;
    ns_tensor_free(W);
    W = NULL;
    if (!z) {
      rc = -1;
      break;
    }
    if (o->norm != NS_STACK_NONE) {
      ns_norm_result nr;
      memset(&nr, 0, sizeof nr);
      if (ns_normalize(z, &spec, &nr, err)) {
        ns_norm_result_free(&nr);
        rc = -1;
        break;
      }
      ns_tensor_free(z);
      z = nr.y; /* keep the output, free the rest */
      nr.y = NULL;
      ns_norm_result_free(&nr);
    }
    r->kurt[k] = ns_op_reduce_all(z, NS_RED_KURT, 0);
    double mx = 0;
    const double *zv = z->data;
    for (size_t i = 0; i < z->n && !isnan(mx); i++) /* NaN, once seen, is the answer */
      if (isnan(zv[i]) || fabs(zv[i]) > mx) mx = fabs(zv[i]);
    r->maxabs[k] = mx;
    ns_tensor_free(h);
    if (o->act == NS_ACT_TANH) {
      h = ns_op_unary(z, NS_UN_TANH, err);
      ns_tensor_free(z);
    } else {
      h = z;
    }
    z = NULL;
    if (!h) {
      rc = -1;
      break;
    }
    r->std[k] = ns_op_reduce_all(h, NS_RED_STD, 0);
    r->mean[k] = ns_op_reduce_all(h, NS_RED_MEAN, 0);
  }
  if (rc) {
    ns_tensor_free(h);
    ns_stack_result_free(r);
    return -1;
  }
  r->h = h;
  return 0;
}
