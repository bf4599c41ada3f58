/* normalize_mask.c: masks (normalize.h, "Masks"): their check, their expansion to one
 * keep byte per element, and the lookup for drawing.
 *
 * A masked spec is normalized by the reference path (normalize_ref.c) with one change per
 * statistic: only its kept members are gathered (still in index order) and counted, so k
 * replaces the plan's count in the mean, in m - ddof and in the degenerate test; masked
 * outputs are 0. Every rounding is the reference's, which is why a mask of ones reproduces
 * ns_normalize bit for bit (tests/unit/test_mask.c). There are no fast kernels for masks:
 * the cost is the reference's (about 40 bytes per element) plus one byte per element.
 */
#include "core/normalize.h"
#include "core/round.h"
#include "core/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int ns_mask_check(const ns_tensor *mask, int rank, const size_t *shape, char *err) {
  if (!mask || !shape) {
    ns_seterr(err, "mask: %s is NULL", !mask ? "the mask tensor" : "x's shape");
    return -1;
  }
  char ms[96], xs[96];
  ns_shape_format(mask->rank, mask->shape, ms, sizeof ms);
  ns_shape_format(rank, shape, xs, sizeof xs);
  int ok = mask->rank >= 1 && mask->rank <= rank;
  for (int k = 1; ok && k <= mask->rank; k++) { /* aligned at the last axis */
    size_t a = mask->shape[mask->rank - k], b = shape[rank - k];
    ok = a == 1 || a == b;
  }
  if (!ok) {
    ns_seterr(err,
              "mask: shape %s does not broadcast to x's shape %s (align at the last axis; "
              "each size 1 or x's: e.g. a (B,T) padding mask of a (B,T,D) input is (B,T,1))",
              ms, xs);
    return -1;
  }
  for (size_t i = 0; i < mask->n; i++) {
    double v = ns_tensor_get(mask, i);
    if (v != 0 && v != 1) {
      ns_seterr(err, "mask: element %zu is %g; a mask holds only 1 (keep) and 0 (leave out)", i + 1,
                v);
      return -1;
    }
  }
  return 0;
}

int ns_mask_expand(const ns_tensor *mask, int rank, const size_t *shape, unsigned char *keep,
                   char *err) {
  if (!keep) {
    ns_seterr(err, "mask: no keep array to fill");
    return -1;
  }
  if (ns_mask_check(mask, rank, shape, err) != 0) return -1;
  /* stride of each of x's axes into the mask: 0 where the mask broadcasts (size 1 or
   * absent), else the mask's own row-major stride */
  size_t mstride[NS_MAXRANK] = {0}, idx[NS_MAXRANK] = {0}, n = 1, step = 1;
  for (int k = 1; k <= mask->rank; k++) {
    size_t a = mask->shape[mask->rank - k];
    mstride[rank - k] = a == 1 ? 0 : step;
    step *= a;
  }
  for (int k = 0; k < rank; k++) n *= shape[k];
  size_t at = 0; /* the mask's flat index of x's element i, kept up to date like an odometer */
  for (size_t i = 0; i < n; i++) {
    keep[i] = ns_tensor_get(mask, at) != 0;
    for (int k = rank - 1; k >= 0; k--) {
      if (++idx[k] < shape[k]) {
        at += mstride[k];
        break;
      }
      at -= mstride[k] * (shape[k] - 1);
      idx[k] = 0;
    }
  }
  return 0;
}

int ns_mask_keeps(const ns_tensor *mask, int rank, const size_t *shape, size_t i) {
  if (!mask || !shape || rank < mask->rank) return 1;
  size_t at = 0, step = 1;
  for (int k = 1; k <= rank; k++) { /* x's axes from the last; i's index along each */
    size_t along = i % shape[rank - k];
    i /= shape[rank - k];
    if (k <= mask->rank) {
      size_t a = mask->shape[mask->rank - k];
      if (a != 1) at += along * step;
      step *= a;
    }
  }
  return at < mask->n && ns_tensor_get(mask, at) != 0;
}

int ns_mask_unsupported(const ns_spec *spec, const char *fn, char *err) {
  if (!spec->mask) return 0;
  ns_seterr(err, "%s: a masked spec is not supported (ns_jacobian honours the mask)", fn);
  return 1;
}
