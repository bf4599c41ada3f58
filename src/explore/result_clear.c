/* result_clear.c: freeing and resetting the parts of a result, walking NS_RESULT
 * (result.h): what result.c and probes.c both call, so neither calls the other for it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "explore/result_priv.h"

/* Each part of the result frees and zeroes what it owns, so a part can be recomputed
 * while the others are kept; every member is cleared, freed and moved by its NS_RESULT row
 * (result.h), never by name. */

/* Frees the pointers of a MEM member (one, or an array of them). */
static void free_pointers(void *m, size_t size) {
  for (size_t i = 0; i + sizeof(void *) <= size; i += sizeof(void *)) {
    void *q;
    memcpy(&q, (char *)m + i, sizeof q);
    free(q);
  }
}

static void free_estimators(ns_estimator *e, size_t n) {
  for (size_t k = 0; k < n; k++) {
    free(e[k].mean);
    free(e[k].var);
    free(e[k].y);
  }
}

/* clang-format off */
#define CLEAR_VAL(m) memset(&r->m, 0, sizeof r->m);
#define CLEAR_KEEP(m)
#define CLEAR_ONE(m) r->m = 1;
#define CLEAR_NAN_(m) r->m = NAN;
#define CLEAR_MEM(m) free_pointers(&r->m, sizeof r->m), memset(&r->m, 0, sizeof r->m);
#define CLEAR_TENSOR(m) ns_tensor_free(r->m), r->m = NULL;
#define CLEAR_NORM(m) ns_norm_result_free(&r->m);
#define CLEAR_EST(m) free_estimators(r->m, sizeof r->m / sizeof r->m[0]), memset(r->m, 0, sizeof r->m);
#define CLEAR_(part, own, type, m, dim)                                                            \
  if (parts & NS_RP_##part) { CLEAR_##own(m) }
/* clang-format on */
void ns_result_clear_parts(ns_result *r, unsigned parts) {
  NS_RESULT(CLEAR_)
}

void ns_resid_clear(ns_result *r) {
  ns_result_clear_parts(r, NS_RP_RESID);
}

void ns_vjp_clear(ns_result *r) {
  ns_result_clear_parts(r, NS_RP_VJP);
}
