/* torchorder.c: torch's CPU LayerNorm, GroupNorm and BatchNorm arithmetic (see torchorder.h). */
#include "core/torchorder.h"

#include <math.h>
#include <string.h>

#include "core/round.h"
#include "core/tensor.h"

#define TORCH_CHUNK 16   /* kChunkSize: vectors per Welford chunk */
#define TORCH_MAXLANES 8 /* fp32 in 32-byte vectors */
#define TORCH_MAXDEPTH 64

int ns_torch_lanes(ns_dtype acc) {
  return acc == NS_FP32 ? 8 : acc == NS_FP64 ? 4 : 0;
}

/* ceil(log2(m)) with torch's floor of 1 (CeilLog2: m <= 2 gives 1). */
static int ceil_log2(size_t m) {
  if (m <= 2) return 1;
  int d = 0;
  for (size_t v = m - 1; v; v >>= 1) d++;
  return d;
}

/* One vector's worth of partial moments: a count shared by the lanes, and per lane. */
typedef struct {
  size_t n;
  double m1[TORCH_MAXLANES], m2[TORCH_MAXLANES];
} lanes;

/* AddMomentsVec: merges (add) into (to), every operation rounded to acc:
 *   c = n_add / n; delta = m1_add - m1; m1 += c delta; m2 += m2_add + delta^2 c n_old. */
static void add_vec(const lanes *add, lanes *to, int L, ns_dtype acc) {
#define R(v) ns_round_fast((v), acc)
  size_t n = to->n + add->n;
  double c = n == 0 ? 0.0 : R(R((double)add->n) / R((double)n));
  double m0 = R((double)to->n);
  for (int l = 0; l < L; l++) {
    double d = R(add->m1[l] - to->m1[l]);
    to->m1[l] = R(to->m1[l] + R(c * d));
    to->m2[l] = R(to->m2[l] + R(add->m2[l] + R(R(R(d * d) * c) * m0)));
  }
  to->n = n;
#undef R
}

void ns_moments_torch(const double *x, size_t N, ns_dtype acc, ns_moments *out) {
  if (!out) return;
  const int L = ns_torch_lanes(acc);
  out->n = (double)N;
  if (!x || L == 0) {
    out->mean = out->m2 = NAN;
    return;
  }
#define R(v) ns_round_fast((v), acc)
  const size_t n = N / (size_t)L, m = (n + TORCH_CHUNK - 1) / TORCH_CHUNK;
  const int depth = ceil_log2(m);
  lanes stk[TORCH_MAXDEPTH];
  memset(stk, 0, sizeof stk);
  double cv[TORCH_CHUNK];
  for (int j = 0; j < TORCH_CHUNK; j++) cv[j] = R(1.0 / R((double)(j + 1)));
  for (size_t i = 0; i < m; i++) {
    const double *xp = x + i * TORCH_CHUNK * (size_t)L;
    size_t m0 = n - i * TORCH_CHUNK < TORCH_CHUNK ? n - i * TORCH_CHUNK : TORCH_CHUNK;
    lanes c;
    memset(&c, 0, sizeof c);
    c.n = m0;
    for (size_t j = 0; j < m0; j++)
      for (int l = 0; l < L; l++) {
        double xv = xp[j * (size_t)L + (size_t)l], d = R(xv - c.m1[l]);
        c.m1[l] = R(c.m1[l] + R(d * cv[j]));
        c.m2[l] = R(c.m2[l] + R(d * R(xv - c.m1[l])));
      }
    add_vec(&c, &stk[0], L, acc);
    /* the cascade: level j-1 folds into level j while i+1 has trailing zero bits */
    size_t mask = i + 1;
    for (int j = 1; j < depth && (mask & 1) == 0; j++) {
      add_vec(&stk[j - 1], &stk[j], L, acc);
      memset(&stk[j - 1], 0, sizeof stk[j - 1]);
      mask >>= 1;
    }
  }
  for (int j = 1; j < depth; j++) add_vec(&stk[j], &stk[0], L, acc);
  /* the scalar tail by Welford, then each lane merged into it (AddMoments) */
  size_t k = 0;
  double m1 = 0, m2 = 0;
  for (size_t i = n * (size_t)L; i < N; i++) {
    double d = R(x[i] - m1);
    k++;
    m1 = R(m1 + R(d / R((double)k)));
    m2 = R(m2 + R(d * R(x[i] - m1)));
  }
  for (int l = 0; l < L; l++) {
    size_t nn = k + n;
    double c = nn == 0 ? 0.0 : R(R((double)n) / R((double)nn));
    double d = R(stk[0].m1[l] - m1);
    m1 = R(m1 + R(c * d));
    m2 = R(m2 + R(stk[0].m2[l] + R(R(R(d * d) * c) * R((double)k))));
    k = nn;
  }
  out->mean = m1;
  out->m2 = m2;
#undef R
}

double ns_torch_fma(double a, double b, double c, ns_dtype acc) {
  if (acc == NS_FP32) return (double)fmaf((float)a, (float)b, (float)c);
  return ns_round_fast(fma(a, b, c), acc);
}

void ns_torch_bn_moments(const double *x, size_t n, size_t plane, ns_dtype acc, ns_moments *out) {
  if (!out) return;
  out->n = (double)n;
  if (!x || ns_torch_lanes(acc) == 0) {
    out->mean = out->m2 = NAN;
    return;
  }
#define R(v) ns_round_fast((v), acc)
  if (n == 0) {
    out->mean = out->m2 = NAN; /* torch's sum / 0 */
    return;
  }
  if (plane == 1) { /* batch_norm_cpu_collect_stats_channels_last_impl: float buffers */
    double s = 0;
    for (size_t i = 0; i < n; i++) s = R(s + x[i]);
    double mean = R(s / (double)n), v = 0;
    for (size_t i = 0; i < n; i++) {
      double d = R(x[i] - mean);
      v = ns_torch_fma(d, d, v, acc);
    }
    out->mean = mean;
    out->m2 = v;
  } else { /* batch_norm_cpu_collect_stats_contiguous_impl: sums in double */
    double s = 0;
    for (size_t i = 0; i < n; i++) s += x[i];
    double mean = R(s / (double)n), v = 0;
    for (size_t i = 0; i < n; i++) {
      double d = R(x[i] - mean);
      v += R(d * d);
    }
    out->mean = mean;
    out->m2 = R(v);
  }
#undef R
}

double ns_torch_bn_invstd(double var, double eps, int eval, ns_dtype acc) {
#define R(v) ns_round_fast((v), acc)
  if (eval) return R(1.0 / R(sqrt(R(var + R(eps)))));
  return R(1.0 / sqrt(var + eps));
#undef R
}

double ns_torch_bn_out(double x, double mean, double invstd, double g, double b, ns_dtype acc) {
  double alpha = ns_round_fast(invstd * g, acc);
  return ns_torch_fma(x, alpha, ns_torch_fma(-mean, alpha, b, acc), acc);
}

double ns_torch_gn_out(double x, double mean, double rstd, double g, double b, int affine,
                       ns_dtype acc) {
#define R(v) ns_round_fast((v), acc)
  if (!affine) return R(R(x - mean) * rstd);
  double scale = R(rstd * g);
  return ns_torch_fma(scale, x, R(R(-scale * mean) + b), acc);
#undef R
}

/* multi_row_sum for one column: v[0], v[stride], ... v[(n-1) stride] */
static double sum_levels(const double *v, size_t n, size_t stride, ns_dtype acc) {
#define R(x) ns_round_fast((x), acc)
  enum { LEVELS = 4 };
  int lp = ceil_log2(n) / LEVELS;
  if (lp < 4) lp = 4;
  const size_t step = (size_t)1 << lp, mask = step - 1;
  double a[LEVELS] = {0, 0, 0, 0};
  size_t i = 0;
  while (i + step <= n) {
    for (size_t j = 0; j < step; j++, i++) a[0] = R(a[0] + v[i * stride]);
    for (int j = 1; j < LEVELS; j++) {
      a[j] = R(a[j] + a[j - 1]);
      a[j - 1] = 0;
      if (i & (mask << (j * lp))) break;
    }
  }
  for (; i < n; i++) a[0] = R(a[0] + v[i * stride]);
  for (int j = 1; j < LEVELS; j++) a[0] = R(a[0] + a[j]);
  return a[0];
}

/* row_sum: four interleaved multi_row_sums, the rest into the first, then the others */
static double sum_interleaved(const double *v, size_t n, size_t stride, ns_dtype acc) {
  const size_t q = n / 4;
  double p[4];
  for (int k = 0; k < 4; k++) p[k] = sum_levels(v + (size_t)k * stride, q, 4 * stride, acc);
  for (size_t i = 4 * q; i < n; i++) p[0] = R(p[0] + v[i * stride]);
  for (int k = 1; k < 4; k++) p[0] = R(p[0] + p[k]);
  return p[0];
}

double ns_torch_sum_dim0(const double *v, size_t rows, size_t cols, size_t col, ns_dtype acc) {
  if (!v || rows == 0 || col >= cols) return 0.0;
  if (rows == 1) return R(0.0 + v[col]);
  if (cols == 1) { /* a contiguous reduction: vectorized_inner_sum, or scalar_inner_sum */
    if (rows < 8) return sum_interleaved(v, rows, 1, acc);
    const size_t nv = rows / 8;
    double f = 0;
    for (size_t k = 8 * nv; k < rows; k++) f = R(f + v[k]);
    for (size_t l = 0; l < 8; l++) f = R(f + sum_interleaved(v + l, nv, 8, acc));
    return f;
  }
  size_t block = cols >= 8 ? 32 : 4; /* vectorized_outer_sum / scalar_outer_sum */
  if (col < cols / block * block) return sum_levels(v + col, rows, cols, acc);
  return sum_interleaved(v + col, rows, cols, acc);
#undef R
}

void ns_numpy_order_of(int rank, const size_t *shape, unsigned axes, size_t groups,
                       ns_numpy_order *o) {
  o->mode = 0;
  o->run = 1;
  if (groups > 1) return; /* numpy: x.reshape(N, G, -1), reduced over the last axis */
  int red[NS_MAXRANK], k = 0;
  size_t ext[NS_MAXRANK];
  for (int a = 0; a < rank && a < NS_MAXRANK; a++) /* axes of size 1 take no part */
    if (shape[a] > 1) ext[k] = shape[a], red[k++] = (axes >> a) & 1u;
  if (k == 0) return;
  if (!red[k - 1]) {
    o->mode = 2;
    return;
  }
  int a = k - 1;
  size_t run = 1;
  for (; a >= 0 && red[a]; a--) run *= ext[a];
  for (; a >= 0; a--)
    if (red[a]) { /* a reduced axis outside the trailing run */
      o->mode = 1;
      o->run = run;
      return;
    }
}

double ns_numpy_sum(const double *t, size_t n, const ns_numpy_order *o, ns_dtype acc) {
  if (o->mode == 0 || (o->mode == 1 && o->run >= n)) return ns_sum_pairwise(t, n, acc);
  double s = 0;
  if (o->mode == 2) {
    for (size_t i = 0; i < n; i++) s = ns_round_fast(s + t[i], acc);
    return s;
  }
  for (size_t i = 0; i < n; i += o->run)
    s = ns_round_fast(s + ns_sum_pairwise(t + i, n - i < o->run ? n - i : o->run, acc), acc);
  return s;
}

int ns_framework_spec(const ns_spec *in, ns_framework fw, ns_spec *out, const char **words) {
  static const char *const torch_words[] = {
      [NS_KIND_LAYER] = "its LayerNorm runs an 8-lane float32 Welford cascade and fused "
                        "multiply-adds: order=torch, bit for bit",
      [NS_KIND_BATCH] = "its BatchNorm sums in double and forms x*alpha + beta in float32: "
                        "order=torch, bit for bit",
      [NS_KIND_INSTANCE] = "its InstanceNorm is batch norm of (1, N*C, ...): order=torch, bit "
                           "for bit",
      [NS_KIND_GROUP] = "its GroupNorm runs LayerNorm's float32 Welford cascade: order=torch, "
                        "bit for bit",
      [NS_KIND_RMS] = NULL};
  const char *w = NULL;
  if (fw == NS_FW_NUMPY)
    w = "np.mean and np.var in float32, in numpy's order: order=numpy";
  else if ((unsigned)in->kind <= NS_KIND_GROUP && ns_spec_center(in))
    w = torch_words[in->kind];
  if (!w) {
    if (words) *words = "torch 1.13 has no such module";
    return 0;
  }
  *out = *in;
  out->dtype = NS_FP32;
  out->acc = NS_FP32;
  out->order = fw == NS_FW_NUMPY ? NS_ORDER_NUMPY : NS_ORDER_TORCH;
  if (words) *words = w;
  return 1;
}
