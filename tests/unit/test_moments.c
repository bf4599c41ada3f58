/* test_moments.c: moments in a chosen precision and Chan's merge.
 *
 * fp32 results are checked bit for bit against the same algorithms written here with
 * native float variables (x86-64 SSE float arithmetic rounds each operation once). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/moments.h"
#include "tap.h"

static uint64_t st = 12345;
static double urand(void) { /* [0, 1) */
  st = st * 6364136223846793005u + 1442695040888963407u;
  return (double)(st >> 11) * 0x1p-53;
}
static double nrand(double mu, double sd) { /* Box-Muller; any normal-ish data will do */
  double u = urand(), v = urand();
  return mu + sd * sqrt(-2 * log(1 - u)) * cos(6.283185307179586 * v);
}

static void float_ref(const double *x, int n, int algo, double *mean, double *m2) {
  volatile float s = 0, q = 0, mu, d, v;
  float fn = (float)n;
  if (algo == NS_ALGO_RAW) {
    for (int i = 0; i < n; i++) {
      v = (float)x[i];
      s = s + v;
      q = q + v * v;
    }
    mu = s / fn;
    volatile float msq = q / fn;
    volatile float var = msq - mu * mu;
    *mean = mu;
    *m2 = (float)(var * fn);
  } else if (algo == NS_ALGO_TWOPASS) {
    for (int i = 0; i < n; i++) s = s + (float)x[i];
    mu = s / fn;
    for (int i = 0; i < n; i++) {
      d = (float)x[i] - mu;
      q = q + d * d;
    }
    *mean = mu;
    *m2 = q;
  } else {
    mu = 0;
    for (int i = 0; i < n; i++) {
      v = (float)x[i];
      d = v - mu;
      mu = mu + d / (float)(i + 1);
      q = q + d * (v - mu);
    }
    *mean = mu;
    *m2 = q;
  }
}

int main(void) {
  ns_moments m;
  double c15[4] = {9998, 9999, 10001, 10002};
  ns_moments_compute(c15, 4, 1, NS_FP32, NS_FP32, NS_ALGO_RAW, &m);
  tap_close(ns_moments_var(&m, 0), 0.0, 0, "c15-fp32-raw-var: fp32 raw variance cancels to 0");
  ns_moments_compute(c15, 4, 1, NS_FP32, NS_FP32, NS_ALGO_TWOPASS, &m);
  tap_close(ns_moments_var(&m, 0), 2.5, 0, "c15-fp32-centered-var: fp32 two-pass variance 2.5");
  ns_moments_compute(c15, 4, 1, NS_FP32, NS_FP32, NS_ALGO_WELFORD, &m);
  tap_close(ns_moments_var(&m, 0), 2.5, 1e-3,
            "fp32 Welford variance of the c15 data is 2.5 to fp32 rounding of the running mean");
  ns_moments_compute(c15, 4, 1, NS_FP64, NS_FP64, NS_ALGO_RAW, &m);
  tap_close(ns_moments_var(&m, 0), 2.5, 0, "fp64 raw variance of the c15 data is 2.5");

  double g[4] = {2, 4, 6, 8};
  for (int a = 0; a < 3; a++) {
    ns_moments_compute(g, 4, 1, NS_FP64, NS_FP64, (ns_algo)a, &m);
    char nm[80];
    snprintf(nm, sizeof nm, "g-bn-var: population variance of (2,4,6,8) is 5 (%s)",
             ns_algo_name((ns_algo)a));
    tap_close(ns_moments_var(&m, 0), 5.0, 0, nm);
    tap_ok(m.n == 4 && m.mean == 5 && m.m2 == 20, "n 4, mean 5, m2 20 (%s)",
           ns_algo_name((ns_algo)a));
  }
  tap_close(ns_moments_var(&m, 1), 20.0 / 3, 1e-15,
            "sample variance (ddof 1) of (2,4,6,8) is 20/3");

  /* stride */
  double strided[8] = {2, -1, 4, -1, 6, -1, 8, -1};
  ns_moments_compute(strided, 4, 2, NS_FP64, NS_FP64, NS_ALGO_TWOPASS, &m);
  tap_ok(m.mean == 5 && m.m2 == 20, "stride 2 reads every other element");

  /* hand-computed narrow cases */
  double h[3] = {2048, 1, 1};
  ns_moments_compute(h, 3, 1, NS_FP16, NS_FP16, NS_ALGO_TWOPASS, &m);
  tap_close(m.mean, 682.5, 0, "fp16 sums: 2048+1+1 stays 2048 (ties to even), mean 682.5");
  ns_moments_compute(h, 3, 1, NS_FP16, NS_FP32, NS_ALGO_TWOPASS, &m);
  tap_close(m.mean, (double)(2050.0f / 3.0f), 0,
            "fp16 data with fp32 accumulation: mean 2050/3 in fp32");
  double tenth[2] = {0.1, 0.1};
  ns_moments_compute(tenth, 2, 1, NS_FP16, NS_FP64, NS_ALGO_TWOPASS, &m);
  tap_close(m.mean, 0.0999755859375, 0, "inputs are rounded to dtype (fp16 0.1)");
  tap_close(m.m2, 0.0, 0, "equal inputs: m2 0");
  ns_moments_compute(tenth, 2, 1, NS_FP64, NS_BF16, NS_ALGO_TWOPASS, &m);
  tap_close(m.mean, 0.10009765625, 0, "fp64 data, bf16 accumulation: mean is bf16(0.1)");

  /* empty and tiny */
  ns_moments_compute(g, 0, 1, NS_FP64, NS_FP64, NS_ALGO_TWOPASS, &m);
  tap_ok(m.n == 0 && isnan(m.mean) && isnan(m.m2), "n = 0 gives mean NaN, m2 NaN");
  ns_moments_compute(g, 1, 1, NS_FP64, NS_FP64, NS_ALGO_WELFORD, &m);
  tap_ok(m.mean == 2 && m.m2 == 0 && isnan(ns_moments_var(&m, 1)) && ns_moments_var(&m, 0) == 0,
         "one element: var 0 at ddof 0, NaN at ddof 1");
  tap_ok(isnan(ns_moments_var(NULL, 0)), "var(NULL) is NaN");

  /* fp32 bit-exact against native float loops, every algorithm */
  for (int a = 0; a < 3; a++) {
    int bad = 0;
    for (int trial = 0; trial < 300; trial++) {
      int n = 1 + (int)(urand() * 200);
      double x[200];
      double mu = (urand() - 0.5) * pow(10, (int)(urand() * 8) - 2);
      double sd = pow(10, (int)(urand() * 6) - 3);
      for (int i = 0; i < n; i++) x[i] = nrand(mu, sd);
      double rm, rq;
      float_ref(x, n, a, &rm, &rq);
      ns_moments_compute(x, (size_t)n, 1, NS_FP32, NS_FP32, (ns_algo)a, &m);
      if (m.mean != rm || m.m2 != rq) {
        if (!bad) tap_diag("n %d: mean %.9g vs %.9g, m2 %.9g vs %.9g", n, m.mean, rm, m.m2, rq);
        bad++;
      }
    }
    tap_ok(bad == 0, "fp32 %s matches native float arithmetic bit for bit (300 inputs)",
           ns_algo_name((ns_algo)a));
  }

  /* fp64 results against a long double reference */
  {
    double worst = 0;
    for (int trial = 0; trial < 200; trial++) {
      int n = 2 + (int)(urand() * 300);
      double x[300];
      long double s = 0, q = 0;
      for (int i = 0; i < n; i++) {
        x[i] = nrand(3, 0.5);
        s += x[i];
      }
      long double mu = s / n;
      for (int i = 0; i < n; i++) q += (x[i] - mu) * (x[i] - mu);
      for (int a = 0; a < 2; a++) { /* twopass, welford: stable */
        ns_moments_compute(x, (size_t)n, 1, NS_FP64, NS_FP64, (ns_algo)a, &m);
        double e1 = fabs(m.mean - (double)mu) / 3, e2 = fabs(m.m2 - (double)q) / (double)q;
        if (e1 > worst) worst = e1;
        if (e2 > worst) worst = e2;
      }
    }
    tap_ok(worst < 1e-13, "fp64 two-pass and Welford agree with a long double reference (%.2g)",
           worst);
  }

  /* Chan's merge equals one pass (c15-merge-vs-direct) on random splits */
  {
    double worst_mean = 0, worst_m2 = 0;
    for (int trial = 0; trial < 500; trial++) {
      double x[256];
      int n = 2 + (int)(urand() * 255);
      for (int i = 0; i < n; i++) x[i] = nrand(4, 2);
      ns_moments whole, acc = {0, 0, 0}, part;
      ns_moments_compute(x, (size_t)n, 1, NS_FP64, NS_FP64, NS_ALGO_TWOPASS, &whole);
      int i = 0;
      while (i < n) {
        int len = 1 + (int)(urand() * 40);
        if (i + len > n) len = n - i;
        ns_moments_compute(x + i, (size_t)len, 1, NS_FP64, NS_FP64, NS_ALGO_TWOPASS, &part);
        acc = ns_moments_merge(acc, part);
        i += len;
      }
      if (acc.n != whole.n) worst_mean = INFINITY;
      double dm = fabs(acc.mean - whole.mean), dv = fabs(acc.m2 - whole.m2) / whole.m2;
      if (dm > worst_mean) worst_mean = dm;
      if (dv > worst_m2) worst_m2 = dv;
    }
    tap_close(worst_mean, 0, 1e-13,
              "c15-merge-vs-direct: merged mean = one-pass mean (500 splits)");
    tap_close(worst_m2, 0, 1e-13, "merged m2 = one-pass m2 (relative, 500 splits)");
  }
  {
    ns_moments a = {3, 2, 8}, e = {0, NAN, NAN};
    ns_moments r = ns_moments_merge(a, e);
    tap_ok(r.n == 3 && r.mean == 2 && r.m2 == 8, "merge with an empty right side");
    r = ns_moments_merge(e, a);
    tap_ok(r.n == 3 && r.mean == 2 && r.m2 == 8, "merge with an empty left side");
    ns_moments p = {2, 3, 2}, q2 = {2, 7, 2}; /* (2,4) and (6,8) */
    r = ns_moments_merge(p, q2);
    tap_ok(r.n == 4 && r.mean == 5 && r.m2 == 20, "merge of (2,4) and (6,8) is (2,4,6,8)");
  }

  /* names */
  ns_algo al = NS_ALGO_RAW;
  tap_ok(strcmp(ns_algo_name(NS_ALGO_TWOPASS), "twopass") == 0 &&
             strcmp(ns_algo_name(NS_ALGO_WELFORD), "welford") == 0 &&
             strcmp(ns_algo_name(NS_ALGO_RAW), "raw") == 0,
         "algo names");
  tap_ok(ns_algo_parse("welford", &al) == 0 && al == NS_ALGO_WELFORD &&
             ns_algo_parse("twopass", &al) == 0 && al == NS_ALGO_TWOPASS &&
             ns_algo_parse("raw", &al) == 0 && al == NS_ALGO_RAW,
         "algo names parse");
  tap_ok(ns_algo_parse("kahan", &al) == -1 && al == NS_ALGO_RAW && ns_algo_parse(NULL, &al) == -1,
         "unknown algo refused");
  return tap_done();
}
