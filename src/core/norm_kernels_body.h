/* norm_kernels_body.h: one arithmetic flavour of the kernels (see norm_kernels_impl.h).
 * Included with KT (float or double), KN(name) (a suffix), KGEN (1: round every operation
 * to the runtime acc, as the reference does; 0: native arithmetic in KT is already exact)
 * and KF32 (KT is float). Not a header of its own: no include guard on purpose. */

#if KGEN
#define KR(v) ((KT)ns_round_fast((v), acc))
#else
#define KR(v) (v)
#endif

/* element i of x as the reference holds it: rounded to dtype, then to acc */
NS_ALWAYS_INLINE static inline KT KN(ld)(const void *x, size_t i, ns_dtype xdt, ns_dtype dt,
                                         ns_dtype acc) {
#if KGEN
  return ns_round_fast(ns_round_fast(nk_read(x, i, xdt), dt), acc);
#else
  (void)dt;
  (void)acc;
  switch (xdt) {
  case NS_FP32:
    return (KT)((const float *)x)[i];
  case NS_FP64:
    return (KT)((const double *)x)[i];
  case NS_FP16:
    return (KT)nk_h2f(((const uint16_t *)x)[i]);
  case NS_BF16:
    return (KT)nk_b2f(((const uint16_t *)x)[i]);
  case NK_F32_AS_F16:
    return (KT)nk_h2f(nk_f2h(((const float *)x)[i]));
  default: /* NK_F32_AS_BF16 */
    return (KT)nk_b2f(nk_f2b(((const float *)x)[i]));
  }
#endif
}

/* The vector loops' storage pairs: x as loaded by nk_v_load8 and y as nk_v_store8 writes it
 * (float lanes), or in double lanes each of fp64 and fp32 (acc fp64 on an fp32 tensor: 4
 * floats widened, computed in double and rounded back, the scalar loop's operations; fp32
 * values into an fp64 output: the exact statistics of an fp32 file, which the spectrum
 * reads, took the scalar blocks before, at 20 of the axes key's 90 ms). */
NS_ALWAYS_INLINE static inline int KN(vec_pair)(ns_dtype xdt, ns_dtype ydt) {
#if KF32
  return (xdt == ydt && xdt != NS_FP64) || (xdt == NK_F32_AS_F16 && ydt == NS_FP16) ||
         (xdt == NK_F32_AS_BF16 && ydt == NS_BF16);
#else
  return (xdt == NS_FP64 || xdt == NS_FP32) && (ydt == NS_FP64 || ydt == NS_FP32);
#endif
}

NS_ALWAYS_INLINE static inline void KN(st)(void *y, size_t i, KT v, ns_dtype ydt) {
  if (ydt == NS_FP32)
    ((float *)y)[i] = (float)v;
  else if (ydt == NS_FP64)
    ((double *)y)[i] = (double)v;
  else
#if KF32
    nk_write_f(y, i, v, ydt);
#else
    nk_write(y, i, (double)v, ydt);
#endif
}

/* numpy's pairwise sum of one chunk, every addition rounded to acc (moments.c's scheme) */
static KT KN(pw_block)(const KT *t, size_t n, ns_dtype acc) {
  (void)acc;
  if (n < 8) {
    KT r = 0;
    for (size_t i = 0; i < n; i++) r = KR(r + t[i]);
    return r;
  }
  if (n <= 128) {
    KT r[8];
    for (int q = 0; q < 8; q++) r[q] = t[q];
    size_t i;
    for (i = 8; i < n - n % 8; i += 8)
      for (int q = 0; q < 8; q++) r[q] = KR(r[q] + t[i + q]);
    KT res = KR(KR(KR(r[0] + r[1]) + KR(r[2] + r[3])) + KR(KR(r[4] + r[5]) + KR(r[6] + r[7])));
    for (; i < n; i++) res = KR(res + t[i]);
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return KR(KN(pw_block)(t, n2, acc) + KN(pw_block)(t + n2, n - n2, acc));
}

/* Pairwise sum over one statistic's elements of: what 0: v, 1: v*v, 2: (v - mu)^2. */
static double KN(pw_stat)(const nk_job *j, size_t base, int what, KT mu, ns_dtype xdt) {
  const ns_dtype acc = j->acc, dt = j->dt;
  KT buf[NS_PAIRWISE_CHUNK];
  KT res = 0;
  size_t k = 0;
  for (size_t i0 = 0; i0 < j->mext[0]; i0++)
    for (size_t i1 = 0; i1 < j->mext[1]; i1++)
      for (size_t i2 = 0; i2 < j->mext[2]; i2++) {
        size_t o2 = base + i0 * j->mstr[0] + i1 * j->mstr[1] + i2 * j->mstr[2];
        for (size_t i3 = 0; i3 < j->mext[3]; i3++) {
          KT v = KN(ld)(j->x, o2 + i3 * j->mstr[3], xdt, dt, acc), t;
          if (what == 0)
            t = v;
          else if (what == 1)
            t = KR(v * v);
          else {
            KT d = KR(v - mu);
            t = KR(d * d);
          }
          buf[k++] = t;
          if (k == NS_PAIRWISE_CHUNK) {
            res = KR(res + KN(pw_block)(buf, k, acc));
            k = 0;
          }
        }
      }
  if (k) res = KR(res + KN(pw_block)(buf, k, acc));
  return (double)res;
}

/* Loops over the members of the lanes' statistics in index order; o is the offset
 * relative to each statistic's base and k the member's ordinal. */
#define NK_MEMBERS(...)                                                                            \
  do {                                                                                             \
    size_t k = 0;                                                                                  \
    for (size_t i0 = 0; i0 < j->mext[0]; i0++)                                                     \
      for (size_t i1 = 0; i1 < j->mext[1]; i1++)                                                   \
        for (size_t i2 = 0; i2 < j->mext[2]; i2++) {                                               \
          size_t o2 = i0 * j->mstr[0] + i1 * j->mstr[1] + i2 * j->mstr[2];                         \
          for (size_t i3 = 0; i3 < j->mext[3]; i3++, k++) {                                        \
            size_t o = o2 + i3 * j->mstr[3];                                                       \
            __VA_ARGS__                                                                            \
          }                                                                                        \
        }                                                                                          \
    (void)k;                                                                                       \
  } while (0)

/* One output value in acc (beta -0.0 and gamma 1 when absent change nothing). */
NS_ALWAYS_INLINE static inline KT KN(y1)(KT v, KT mu, KT den, KT g, KT b, const int centered,
                                         ns_dtype acc) {
  (void)acc;
  KT c = centered ? KR(v - mu) : v;
  return KR(KR(KR(c / den) * g) + b);
}

/* y over one statistic: y = ((x - mu) / den) * gamma + beta, each operation in acc. */
NS_ALWAYS_INLINE static inline void KN(out)(const nk_job *j, size_t base, size_t abase, KT mu,
                                            KT den, const int centered, const ns_dtype xdt,
                                            const ns_dtype ydt) {
  const ns_dtype acc = j->acc, dt = j->dt;
#if KF32
  const KT *G = j->g32, *B = j->b32;
#else
  const KT *G = j->g64, *B = j->b64;
#endif
  const void *x = j->x;
  void *y = j->y;
  const size_t e3 = j->mext[3], t3 = j->mstr[3], a3 = j->mamul[3];
  for (size_t i0 = 0; i0 < j->mext[0]; i0++)
    for (size_t i1 = 0; i1 < j->mext[1]; i1++)
      for (size_t i2 = 0; i2 < j->mext[2]; i2++) {
        size_t o2 = base + i0 * j->mstr[0] + i1 * j->mstr[1] + i2 * j->mstr[2];
        size_t q2 = abase + i0 * j->mamul[0] + i1 * j->mamul[1] + i2 * j->mamul[2];
        if (t3 == 1 && a3 == 0) {
          const KT g = G[q2], b = B[q2];
          size_t i3 = 0;
#if NK_AVX2 && !KGEN
          if (KN(vec_pair)(xdt, ydt)) {
#if KF32
            const __m256 vm = _mm256_set1_ps(mu), vd = _mm256_set1_ps(den), vg = _mm256_set1_ps(g),
                         vb = _mm256_set1_ps(b);
            if (j->stream) /* scalar up to a 32-byte boundary of y, then streaming stores */
              for (; i3 < e3 && ((uintptr_t)y + (o2 + i3) * ns_dtype_size(ydt)) % 32; i3++) KN(st)
            (y, o2 + i3, KN(y1)(KN(ld)(x, o2 + i3, xdt, dt, acc), mu, den, g, b, centered, acc),
             ydt);
            for (; i3 + 8 <= e3; i3 += 8) {
              __m256 v = nk_v_load8(x, o2 + i3, xdt);
              if (centered) v = _mm256_sub_ps(v, vm);
              v = _mm256_add_ps(_mm256_mul_ps(_mm256_div_ps(v, vd), vg), vb);
              nk_v_store8(y, o2 + i3, v, ydt, j->stream);
            }
#else
            const __m256d vm = _mm256_set1_pd(mu), vd = _mm256_set1_pd(den), vg = _mm256_set1_pd(g),
                          vb = _mm256_set1_pd(b);
            if (j->stream && ydt == NS_FP64)
              for (; i3 < e3 && ((uintptr_t)y + (o2 + i3) * sizeof(double)) % 32; i3++) KN(st)
            (y, o2 + i3, KN(y1)(KN(ld)(x, o2 + i3, xdt, dt, acc), mu, den, g, b, centered, acc),
             ydt);
            for (; i3 + 4 <= e3; i3 += 4) {
              __m256d v = nk_v_load4d(x, o2 + i3, xdt);
              if (centered) v = _mm256_sub_pd(v, vm);
              v = _mm256_add_pd(_mm256_mul_pd(_mm256_div_pd(v, vd), vg), vb);
              nk_v_store4d(y, o2 + i3, v, ydt, j->stream);
            }
#endif
          }
#endif
          for (; i3 < e3; i3++) KN(st)
          (y, o2 + i3, KN(y1)(KN(ld)(x, o2 + i3, xdt, dt, acc), mu, den, g, b, centered, acc), ydt);
        } else if (t3 == 1 && a3 == 1) {
          const KT *g = G + q2, *b = B + q2;
          size_t i3 = 0;
#if NK_AVX2 && !KGEN
          if (KN(vec_pair)(xdt, ydt)) {
#if KF32
            const __m256 vm = _mm256_set1_ps(mu), vd = _mm256_set1_ps(den);
            if (j->stream)
              for (; i3 < e3 && ((uintptr_t)y + (o2 + i3) * ns_dtype_size(ydt)) % 32; i3++) KN(st)
            (y, o2 + i3,
             KN(y1)(KN(ld)(x, o2 + i3, xdt, dt, acc), mu, den, g[i3], b[i3], centered, acc), ydt);
            for (; i3 + 8 <= e3; i3 += 8) {
              __m256 v = nk_v_load8(x, o2 + i3, xdt);
              if (centered) v = _mm256_sub_ps(v, vm);
              v = _mm256_mul_ps(_mm256_div_ps(v, vd), _mm256_loadu_ps(g + i3));
              nk_v_store8(y, o2 + i3, _mm256_add_ps(v, _mm256_loadu_ps(b + i3)), ydt, j->stream);
            }
#else
            const __m256d vm = _mm256_set1_pd(mu), vd = _mm256_set1_pd(den);
            if (j->stream && ydt == NS_FP64)
              for (; i3 < e3 && ((uintptr_t)y + (o2 + i3) * sizeof(double)) % 32; i3++) KN(st)
            (y, o2 + i3,
             KN(y1)(KN(ld)(x, o2 + i3, xdt, dt, acc), mu, den, g[i3], b[i3], centered, acc), ydt);
            for (; i3 + 4 <= e3; i3 += 4) {
              __m256d v = nk_v_load4d(x, o2 + i3, xdt);
              if (centered) v = _mm256_sub_pd(v, vm);
              v = _mm256_mul_pd(_mm256_div_pd(v, vd), _mm256_loadu_pd(g + i3));
              v = _mm256_add_pd(v, _mm256_loadu_pd(b + i3));
              nk_v_store4d(y, o2 + i3, v, ydt, j->stream);
            }
#endif
          }
#endif
          for (; i3 < e3; i3++) KN(st)
          (y, o2 + i3,
           KN(y1)(KN(ld)(x, o2 + i3, xdt, dt, acc), mu, den, g[i3], b[i3], centered, acc), ydt);
        } else {
          for (size_t i3 = 0; i3 < e3; i3++) {
            size_t q = q2 + i3 * a3, o = o2 + i3 * t3;
            KN(st)
            (y, o, KN(y1)(KN(ld)(x, o, xdt, dt, acc), mu, den, G[q], B[q], centered, acc), ydt);
          }
        }
      }
}

/* Statistics s0 .. s0+nb-1 (nb <= NK_LANES) side by side; lanes past nb repeat the last
 * statistic and are dropped. */
NS_ALWAYS_INLINE static inline void KN(block)(const nk_job *j, size_t s0, size_t nb,
                                              const int centered, const ns_dtype xdt,
                                              const ns_dtype ydt) {
  const ns_dtype acc = j->acc, dt = j->dt;
  const void *x = j->x;
  size_t base[NK_LANES], abase[NK_LANES];
  for (size_t l = 0; l < NK_LANES; l++)
    nk_stat_base(j, s0 + (l < nb ? l : nb - 1), &base[l], &abase[l]);
  double mean[NK_LANES], m2[NK_LANES], sq[NK_LANES];
  if (j->order == NS_ORDER_PAIRWISE && j->algo != NS_ALGO_WELFORD) {
    for (size_t l = 0; l < nb; l++) {
      double sum = KN(pw_stat)(j, base[l], 0, 0, xdt);
      sq[l] = (!centered || j->algo == NS_ALGO_RAW) ? KN(pw_stat)(j, base[l], 1, 0, xdt) : 0;
      if (j->algo == NS_ALGO_RAW) {
        nk_raw(j, sum, sq[l], &mean[l], &m2[l]);
      } else {
        mean[l] = ns_round_fast(sum / j->rn, acc);
        m2[l] = KN(pw_stat)(j, base[l], 2, (KT)mean[l], xdt);
      }
    }
  } else if (j->algo == NS_ALGO_WELFORD) {
    KT mn[NK_LANES] = {0}, mm[NK_LANES] = {0}, s2[NK_LANES] = {0};
    NK_MEMBERS({
      KT kk = (KT)ns_round_fast((double)(k + 1), acc);
      NK_UNROLL
      for (size_t l = 0; l < NK_LANES; l++) {
        KT v = KN(ld)(x, base[l] + o, xdt, dt, acc);
        KT d = KR(v - mn[l]);
        mn[l] = KR(mn[l] + KR(d / kk));
        mm[l] = KR(mm[l] + KR(d * KR(v - mn[l])));
        if (!centered) s2[l] = KR(s2[l] + KR(v * v));
      }
    });
    for (size_t l = 0; l < nb; l++) mean[l] = mn[l], m2[l] = mm[l], sq[l] = s2[l];
  } else if (j->algo == NS_ALGO_RAW) {
    KT s1[NK_LANES] = {0}, s2[NK_LANES] = {0};
    NK_MEMBERS({
      NK_UNROLL
      for (size_t l = 0; l < NK_LANES; l++) {
        KT v = KN(ld)(x, base[l] + o, xdt, dt, acc);
        s1[l] = KR(s1[l] + v);
        s2[l] = KR(s2[l] + KR(v * v));
      }
    });
    for (size_t l = 0; l < nb; l++) {
      sq[l] = s2[l];
      nk_raw(j, s1[l], s2[l], &mean[l], &m2[l]);
    }
  } else {
    KT s1[NK_LANES] = {0}, s2[NK_LANES] = {0}, mk[NK_LANES];
    int done = 0;
#if NK_AVX2 && KF32 && !KGEN
    if (xdt == NS_FP32 || xdt == NS_FP16 || xdt == NS_BF16 || xdt == NK_F32_AS_F16 ||
        xdt == NK_F32_AS_BF16) {
      KT t2[NK_LANES];
      nk_v_twopass(j, base, centered, xdt, s1, s2, t2, mean);
      for (size_t l = 0; l < nb; l++) m2[l] = t2[l], sq[l] = s2[l];
      done = 1;
    }
#endif
#if NK_AVX2 && !KF32 && !KGEN
    if (xdt == NS_FP64 || xdt == NS_FP32 || xdt == NS_FP16 || xdt == NS_BF16) {
      KT t2[NK_LANES];
      nk_v_twopass_d(j, base, centered, xdt, s1, s2, t2, mean);
      for (size_t l = 0; l < nb; l++) m2[l] = t2[l], sq[l] = s2[l];
      done = 1;
    }
#endif
    if (!done) {
      NK_MEMBERS({
        NK_UNROLL
        for (size_t l = 0; l < NK_LANES; l++) {
          KT v = KN(ld)(x, base[l] + o, xdt, dt, acc);
          s1[l] = KR(s1[l] + v);
          if (!centered) s2[l] = KR(s2[l] + KR(v * v));
        }
      });
      for (size_t l = 0; l < NK_LANES; l++)
        mean[l] = ns_round_fast((double)s1[l] / j->rn, acc), mk[l] = (KT)mean[l];
      KT t2[NK_LANES] = {0};
      if (j->m2_used) /* RMS needs no second pass: nk_finish stores m2 as NaN */
        NK_MEMBERS({
          NK_UNROLL
          for (size_t l = 0; l < NK_LANES; l++) {
            KT d = KR(KN(ld)(x, base[l] + o, xdt, dt, acc) - mk[l]);
            t2[l] = KR(t2[l] + KR(d * d));
          }
        });
      for (size_t l = 0; l < nb; l++) m2[l] = t2[l], sq[l] = s2[l];
    }
  }
  KT muk[NK_LANES], denk[NK_LANES];
  for (size_t l = 0; l < nb; l++) {
    double mu, den;
    nk_finish(j, s0 + l, mean[l], m2[l], sq[l], &mu, &den);
    muk[l] = (KT)mu, denk[l] = (KT)den;
  }
  if (!j->y) return; /* the statistics alone */
#if NK_AVX2 && !KGEN
  /* 8 adjacent statistics whose elements are not contiguous (batch norm over (B, D)):
   * vectors run across the statistics instead of along them */
  int adj = nb == NK_LANES && j->mstr[3] != 1 && KN(vec_pair)(xdt, ydt);
  for (int q = 0; q < NK_LEVELS; q++) adj &= j->mamul[q] == 0;
  for (size_t l = 1; l < NK_LANES; l++) adj &= base[l] == base[0] + l;
  if (adj) {
#if KF32
    nk_v_out_lanes(j, base[0], abase, muk, denk, centered, xdt, ydt);
#else
    nk_v_out_lanes_d(j, base[0], abase, muk, denk, centered, xdt, ydt);
#endif
    return;
  }
#endif
  for (size_t l = 0; l < nb; l++)
    KN(out)(j, base[l], abase[l], muk[l], denk[l], centered, xdt, ydt);
}

NS_ALWAYS_INLINE static inline void KN(run)(const nk_job *j, size_t s0, size_t s1,
                                            const ns_dtype xdt, const ns_dtype ydt) {
#if NK_AVX2 && !KGEN
  /* adjacent statistics with strided elements: wide blocks along each row of statistics */
  if (j->nsl > 0 && j->sstr[j->nsl - 1] == 1 && j->mstr[3] != 1 &&
      (j->algo == NS_ALGO_WELFORD || j->order == NS_ORDER_SEQUENTIAL) && j->mamul[0] == 0 &&
      j->mamul[1] == 0 && j->mamul[2] == 0 && j->mamul[3] == 0 && KN(vec_pair)(xdt, ydt)) {
    const size_t row = j->sext[j->nsl - 1];
    size_t s = s0;
    while (s < s1) {
      size_t end = (s / row + 1) * row < s1 ? (s / row + 1) * row : s1, nw = end - s;
      if (nw > NK_WIDE) nw = NK_WIDE;
      nw -= nw % 8;
      if (nw == 0) { /* fewer than 8 left in this row */
        nw = end - s;
        if (j->centered)
          KN(block)(j, s, nw, 1, xdt, ydt);
        else
          KN(block)(j, s, nw, 0, xdt, ydt);
      } else {
#if KF32
        nk_v_wide(j, s, nw, j->centered, xdt, ydt);
#else
        nk_v_wide_d(j, s, nw, j->centered, xdt, ydt);
#endif
      }
      s += nw;
    }
    return;
  }
#endif
  for (size_t s = s0; s < s1; s += NK_LANES) {
    size_t nb = s1 - s < NK_LANES ? s1 - s : NK_LANES;
    if (j->centered)
      KN(block)(j, s, nb, 1, xdt, ydt);
    else
      KN(block)(j, s, nb, 0, xdt, ydt);
  }
}

#undef KR
