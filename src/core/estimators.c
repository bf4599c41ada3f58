/* estimators.c: lgamma and the c4 bias constant (see estimators.h). */
#include "core/estimators.h"
#include "core/err.h"

#include <math.h>

double ns_lgamma(double x) {
  return lgamma(x);
}

int ns_c4(double n, double *out, char *err) {
  if (!out) {
    ns_seterr(err, "c4: output is NULL");
    return -1;
  }
  if (!(n > 1) || isinf(n)) {
    ns_seterr(err, "c4: n must be a finite number > 1, got %g", n);
    return -1;
  }
  if (n <= 300) { /* tgamma(150) is about 1e260: no overflow, a few ulps */
    *out = sqrt(2 / (n - 1)) * (tgamma(n / 2) / tgamma((n - 1) / 2));
    return 0;
  }
  /* Stirling: lgamma(w) = (w - 1/2) log w - w + log(2 pi)/2 + sum_k c_k w^(1-2k) with
   * c_k = B_2k / (2k (2k - 1)) = 1/12, -1/360, 1/1260, -1/1680. The difference at
   * w = z + 1/2 and w = z, plus log sqrt(1/z), leaves z log(1 + 1/(2z)) - 1/2; the
   * series terms are below 1e-20 after the fourth for z > 149. */
  static const double c[4] = {1.0 / 12, -1.0 / 360, 1.0 / 1260, -1.0 / 1680};
  double z = (n - 1) / 2, a = 1 / (z + 0.5), b = 1 / z;
  double lc = z * log1p(0.5 / z) - 0.5, pa = a, pb = b;
  for (int k = 0; k < 4; k++) {
    lc += c[k] * (pa - pb);
    pa *= a * a;
    pb *= b * b;
  }
  *out = exp(lc);
  return 0;
}
