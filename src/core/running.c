/* running.c: the running statistics of batch kinds (moved out of normalize.c; see running.h). */
#include "core/running.h"
#include "core/err.h"
#include "core/round.h"
#include "core/torchorder.h"

#include <math.h>
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

/* Fixes the statistic count on the first update (nstat statistics at mean 0, var 1). */
static int running_fix(ns_running *r, size_t nstat, char *err) {
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
  if (r->exact && !r->acc && !(r->acc = calloc(nstat, sizeof *r->acc))) {
    ns_seterr(err, "out of memory for %zu running statistics", nstat);
    return -1;
  }
  return 0;
}

/* torch's update of one running mean and var (see running.h), in acc. */
static void torch_rule(double *rm, double *rv, const ns_moments *b, double m, ns_dtype acc) {
#define R(v) ns_round_fast((v), acc)
  double om = R(1.0 - m);
  double mean = R(R(m * b->mean) + R(om * R(*rm)));
  double unbiased = R(b->m2 / R(b->n - 1.0));
  *rv = R(m * unbiased + R(om * R(*rv))); /* m * unbiased is exact in double for fp32 */
  *rm = mean;
#undef R
}

static int acc_ok(ns_dtype acc, char *err) {
  if (acc == NS_FP32 || acc == NS_FP64) return 0;
  ns_seterr(err, "torch's running update is in fp32 or fp64 (got %s)", ns_dtype_name(acc));
  return -1;
}

int ns_running_update_torch(ns_running *r, const ns_moments *b, size_t nstat, ns_dtype acc,
                            char *err) {
  if (!r || !b || nstat == 0) {
    ns_seterr(err, "running update needs an object and at least one statistic");
    return -1;
  }
  if (r->exact) return ns_running_update(r, b, nstat, err);
  if (acc_ok(acc, err) || running_fix(r, nstat, err)) return -1;
  double m = ns_round_fast(r->cumulative ? 1.0 / (double)(r->count + 1) : r->momentum, acc);
  for (size_t i = 0; i < nstat; i++) torch_rule(&r->mean[i], &r->var[i], &b[i], m, acc);
  r->count++;
  return 0;
}

int ns_running_update_instance(ns_running *r, const ns_moments *b, size_t nbatch, size_t nchan,
                               int acc, char *err) {
  if (!r || !b || nbatch == 0 || nchan == 0) {
    ns_seterr(err, "running update needs an object and at least one statistic");
    return -1;
  }
  if (r->cumulative) {
    ns_seterr(err, "instance norm's running statistics need a momentum: torch's InstanceNorm "
                   "has no cumulative average (momentum=None)");
    return -1;
  }
  if (acc >= 0 && acc_ok((ns_dtype)acc, err)) return -1;
  if (running_fix(r, nchan, err)) return -1;
  const ns_dtype a = acc >= 0 ? (ns_dtype)acc : NS_FP64;
#define R(v) (acc >= 0 ? ns_round_fast((v), a) : (v))
  const double m = R(r->momentum), nb = R((double)nbatch);
  double *cm = NULL, *cv = NULL; /* every example's copies, (nbatch, nchan), for torch's sum */
  if (acc >= 0 && !r->exact) {
    cm = nbatch <= SIZE_MAX / 2 / nchan / sizeof *cm ? malloc(2 * nbatch * nchan * sizeof *cm)
                                                     : NULL;
    if (!cm) {
      ns_seterr(err, "out of memory updating %zu running statistics", nchan);
      return -1;
    }
    cv = cm + nbatch * nchan;
  }
  for (size_t c = 0; c < nchan; c++) {
    if (r->exact) {
      for (size_t e = 0; e < nbatch; e++) r->acc[c] = ns_moments_merge(r->acc[c], b[e * nchan + c]);
      r->mean[c] = r->acc[c].mean;
      r->var[c] = r->acc[c].m2 / r->acc[c].n;
      continue;
    }
    double sm = 0, sv = 0;
    for (size_t e = 0; e < nbatch; e++) {
      double rm = r->mean[c], rv = r->var[c];
      const ns_moments *bb = &b[e * nchan + c];
      if (acc >= 0) {
        torch_rule(&rm, &rv, bb, m, a);
        cm[e * nchan + c] = rm;
        cv[e * nchan + c] = rv;
      } else {
        sm += (1.0 - m) * rm + m * bb->mean;
        sv += (1.0 - m) * rv + m * (bb->m2 / (bb->n - 1.0));
      }
    }
    if (acc < 0) {
      r->mean[c] = sm / nb;
      r->var[c] = sv / nb;
    }
  }
  for (size_t c = 0; cm && c < nchan; c++) { /* torch: running_.view({b, c}).mean(0) */
    r->mean[c] = R(ns_torch_sum_dim0(cm, nbatch, nchan, c, a) / nb);
    r->var[c] = R(ns_torch_sum_dim0(cv, nbatch, nchan, c, a) / nb);
  }
  free(cm);
#undef R
  return 0; /* torch's InstanceNorm leaves num_batches_tracked alone */
}

int ns_running_repeat(const ns_running *src, size_t nstat, size_t times, ns_running *dst,
                      char *err) {
  if (!src || !dst) {
    ns_seterr(err, "no running-statistics object to repeat");
    return -1;
  }
  if (src->nstat && src->nstat != nstat) {
    ns_seterr(err, "running statistics hold %zu channels but the input has %zu", src->nstat, nstat);
    return -1;
  }
  if (times && nstat > SIZE_MAX / times) {
    ns_seterr(err, "too many running statistics to repeat");
    return -1;
  }
  if (ns_running_init(dst, src->momentum, src->cumulative, 0, nstat * times, err) != 0) return -1;
  if (src->nstat)
    for (size_t k = 0; k < times; k++)
      for (size_t i = 0; i < nstat; i++) {
        dst->mean[k * nstat + i] = src->mean[i];
        dst->var[k * nstat + i] = src->var[i];
      }
  dst->count = src->count;
  return 0;
}
