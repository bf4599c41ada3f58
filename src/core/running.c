/* running.c: the running statistics of batch kinds (moved out of normalize.c; see running.h). */
#include "core/running.h"
#include "core/err.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int ns_running_init(ns_running *r, double momentum, int cumulative, int exact, size_t nstat,
                    char *err) {
  if (!r) {
    ns_seterr(err, "no running-statistics object");
    return -1;
  }
  memset(r, 0, sizeof *r);
  if (!(momentum >= 0 && momentum <= 1)) {
    ns_seterr(err, "momentum must be between 0 and 1 (got %g)", momentum);
    return -1;
  }
  r->momentum = momentum;
  r->cumulative = cumulative != 0;
  r->exact = exact != 0;
  if (nstat == 0) return 0;
  if (nstat > SIZE_MAX / sizeof *r->acc) { /* the largest element: no byte count wraps */
    ns_seterr(err, "%zu running statistics is more than this machine can address", nstat);
    return -1;
  }
  r->mean = malloc(nstat * sizeof *r->mean);
  r->var = malloc(nstat * sizeof *r->var);
  if (r->exact) r->acc = calloc(nstat, sizeof *r->acc);
  if (!r->mean || !r->var || (r->exact && !r->acc)) {
    ns_running_free(r);
    ns_seterr(err, "out of memory for %zu running statistics", nstat);
    return -1;
  }
  for (size_t i = 0; i < nstat; i++) {
    r->mean[i] = 0.0; /* PyTorch's fresh state */
    r->var[i] = 1.0;
  }
  r->nstat = nstat;
  return 0;
}

void ns_running_free(ns_running *r) {
  if (!r) return;
  free(r->mean);
  free(r->var);
  free(r->acc);
  r->mean = r->var = NULL;
  r->acc = NULL;
  r->nstat = 0;
  r->count = 0;
}

int ns_running_copy(ns_running *dst, const ns_running *src, char *err) {
  if (!dst || !src) {
    ns_seterr(err, "no running-statistics object to copy");
    return -1;
  }
  ns_running tmp = *src;
  tmp.mean = tmp.var = NULL;
  tmp.acc = NULL;
  if (src->nstat) {
    tmp.mean = malloc(src->nstat * sizeof *tmp.mean);
    tmp.var = malloc(src->nstat * sizeof *tmp.var);
    if (src->acc) tmp.acc = malloc(src->nstat * sizeof *tmp.acc);
    if (!tmp.mean || !tmp.var || (src->acc && !tmp.acc)) {
      ns_running_free(&tmp);
      ns_seterr(err, "out of memory copying %zu running statistics", src->nstat);
      return -1;
    }
    memcpy(tmp.mean, src->mean, src->nstat * sizeof *tmp.mean);
    memcpy(tmp.var, src->var, src->nstat * sizeof *tmp.var);
    if (src->acc) memcpy(tmp.acc, src->acc, src->nstat * sizeof *tmp.acc);
  }
  *dst = tmp;
  return 0;
}

int ns_running_update(ns_running *r, const ns_moments *b, size_t nstat, char *err) {
  if (!r || !b || nstat == 0) {
    ns_seterr(err, "running update needs an object and at least one statistic");
    return -1;
  }
  if (r->nstat == 0) {
    ns_running fresh;
    if (ns_running_init(&fresh, r->momentum, r->cumulative, r->exact, nstat, err) != 0) return -1;
    fresh.count = r->count;
    ns_running_free(r);
    *r = fresh;
  } else if (r->nstat != nstat) {
    ns_seterr(err, "running statistics hold %zu channels but this batch has %zu", r->nstat, nstat);
    return -1;
  }
  if (r->exact && !r->acc) {
    r->acc = calloc(nstat, sizeof *r->acc);
    if (!r->acc) {
      ns_seterr(err, "out of memory for %zu running statistics", nstat);
      return -1;
    }
  }
  double f = r->cumulative ? 1.0 / (double)(r->count + 1) : r->momentum;
  for (size_t i = 0; i < nstat; i++) {
    if (r->exact) {
      r->acc[i] = ns_moments_merge(r->acc[i], b[i]);
      r->mean[i] = r->acc[i].mean;
      r->var[i] = r->acc[i].m2 / r->acc[i].n;
    } else {
      double unbiased = b[i].m2 / (b[i].n - 1.0);
      r->mean[i] = (1.0 - f) * r->mean[i] + f * b[i].mean;
      r->var[i] = (1.0 - f) * r->var[i] + f * unbiased;
    }
  }
  r->count++;
  return 0;
}
