/* test_safetensors.c: the safetensors reader against files written by an independent
 * writer (tests/data/make-safetensors.py: Python's struct and json only), malformed
 * headers, every truncation, the writer round trip; the streaming moments against the
 * whole-tensor two-pass moments of ns_normalize; and chunked file reading against
 * whole-file loading. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/normalize.h"
#include "core/npy.h"
#include "core/rng.h"
#include "core/safetensors.h"
#include "core/stream.h"
#include "explore/file.h"
#include "tap.h"
#include "testdata.h"

static void test_small(void) {
  size_t len;
  unsigned char *buf = test_slurp(test_data_path("safetensors/small.safetensors"), &len);
  tap_ok(buf != NULL, "small.safetensors is there");
  if (!buf) return;
  ns_st_index ix;
  char err[NS_ERRLEN] = "";
  int rc = ns_st_parse(buf, len, len, &ix, err);
  tap_ok(rc == 0, "small.safetensors parses (%s)", err);
  if (rc) {
    free(buf);
    return;
  }
  tap_ok(ix.ntensors == 5, "5 tensors (got %zu)", ix.ntensors);
  int a = ns_st_find(&ix, "layer.a"), ids = ns_st_find(&ix, "ids");
  tap_ok(a >= 0 && ix.t[a].dtype == NS_ST_F32 && ix.t[a].rank == 2 && ix.t[a].shape[0] == 2 &&
             ix.t[a].shape[1] == 3,
         "layer.a is F32 (2, 3)");
  tap_ok(ids >= 0 && ix.t[ids].dtype == NS_ST_I32, "ids is listed as I32");
  tap_ok(ids >= 0 && ns_st_tensor(&ix, (size_t)ids, buf, len, err) == NULL &&
             strstr(err, "I32") != NULL,
         "an I32 tensor does not load and says why (%s)", err);
  tap_ok(ns_st_find(&ix, "nope") == -1, "an unknown name is not found");

  /* every value against the writer's own list */
  size_t tl;
  char *tsv = (char *)test_slurp(test_data_path("safetensors/small.tsv"), &tl);
  tap_ok(tsv != NULL, "small.tsv is there");
  int checked = 0, wrong = 0;
  char *save = NULL;
  for (char *line = tsv ? strtok_r(tsv, "\n", &save) : NULL; line;
       line = strtok_r(NULL, "\n", &save)) {
    if (line[0] == '#') continue;
    char name[64];
    size_t i;
    double want;
    if (sscanf(line, "%63s %zu %lf", name, &i, &want) != 3) continue;
    int k = ns_st_find(&ix, name);
    ns_tensor *t = k >= 0 ? ns_st_tensor(&ix, (size_t)k, buf, len, err) : NULL;
    if (!t || i >= t->n || ns_tensor_get(t, i) != want) {
      wrong++;
      tap_diag("%s[%zu]: got %.17g want %.17g", name, i, t && i < t->n ? ns_tensor_get(t, i) : NAN,
               want);
    }
    checked++;
    ns_tensor_free(t);
  }
  tap_ok(checked == 17 && wrong == 0, "all %d values equal the writer's (%d wrong)", checked,
         wrong);
  free(tsv);

  /* every truncation of the file is refused, never read beyond the buffer */
  int refused = 0;
  for (size_t cut = 0; cut < len; cut++) {
    unsigned char *c = malloc(cut ? cut : 1);
    memcpy(c, buf, cut);
    ns_st_index j;
    if (ns_st_parse(c, cut, cut, &j, err) != 0) refused++;
    ns_st_free(&j);
    free(c);
  }
  tap_ok(refused == (int)len, "every one of the %zu truncations is refused (%d)", len, refused);
  /* every single-byte change of the header parses or is refused (ASan watches) */
  int survived = 0;
  for (size_t at = 8; at < 8 + ix.header_len; at++) {
    unsigned char *c = malloc(len);
    memcpy(c, buf, len);
    c[at] ^= 0x5a;
    ns_st_index j;
    int r = ns_st_parse(c, len, len, &j, err);
    if (r == 0) ns_st_free(&j);
    survived++;
    free(c);
  }
  tap_ok(survived == (int)ix.header_len, "single-byte corruptions of the header handled");
  ns_st_free(&ix);
  free(buf);
}

static void test_bad(void) {
  size_t tl;
  char *tsv = (char *)test_slurp(test_data_path("safetensors/bad.tsv"), &tl);
  tap_ok(tsv != NULL, "bad.tsv is there");
  if (!tsv) return;
  char *save = NULL;
  int n = 0;
  for (char *line = strtok_r(tsv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (line[0] == '#') continue;
    char *tab = strchr(line, '\t');
    if (!tab) continue;
    *tab = 0;
    const char *word = tab + 1;
    char rel[256];
    snprintf(rel, sizeof rel, "safetensors/%s", line);
    size_t len;
    unsigned char *buf = test_slurp(test_data_path(rel), &len);
    ns_st_index ix;
    char err[NS_ERRLEN] = "";
    int rc = buf ? ns_st_parse(buf, len, len, &ix, err) : 0;
    tap_ok(buf && rc == -1 && strstr(err, word) != NULL, "%s refused: %s", line, err);
    if (buf && rc == 0) ns_st_free(&ix);
    /* the file loader says the same, with nothing allocated from the bad sizes */
    char ferr[NS_ERRLEN] = "";
    ns_tensor *t = ns_file_load(test_data_path(rel), ferr);
    tap_ok(t == NULL && strstr(ferr, word) != NULL, "%s: ns_file_load refuses too", line);
    ns_tensor_free(t);
    free(buf);
    n++;
  }
  tap_ok(n >= 19, "%d malformed files checked", n);
  free(tsv);
}

static void test_roundtrip(void) {
  char err[NS_ERRLEN] = "";
  size_t s1[2] = {3, 2}, s2[1] = {5};
  double v1[6] = {1, -2.5, 3.25, 1e-8, -0.0, 65504};
  double v2[5] = {0.1, 0.2, 1.0 / 3, -7, 1e300};
  ns_tensor *t[4];
  t[0] = ns_tensor_from(2, s1, NS_FP16, v1, err);
  t[1] = ns_tensor_from(1, s2, NS_FP64, v2, err);
  t[2] = ns_tensor_from(1, s2, NS_BF16, v2, err);
  t[3] = ns_tensor_from(2, s1, NS_FP32, v1, err);
  const char *names[4] = {"half", "dbl \"quoted\"", "b\\f", "f"};
  size_t len;
  unsigned char *buf = ns_st_serialize((const ns_tensor *const *)t, names, 4, &len, err);
  ns_st_index ix;
  int rc = buf ? ns_st_parse(buf, len, len, &ix, err) : -1;
  tap_ok(rc == 0, "a written file parses (%s)", err);
  int same = rc == 0 && ix.ntensors == 4;
  for (int k = 0; same && k < 4; k++) {
    int j = ns_st_find(&ix, names[k]);
    ns_tensor *u = j >= 0 ? ns_st_tensor(&ix, (size_t)j, buf, len, err) : NULL;
    same = u && u->dtype == t[k]->dtype && u->n == t[k]->n &&
           memcmp(u->data, t[k]->data, u->n * ns_dtype_size(u->dtype)) == 0;
    ns_tensor_free(u);
  }
  tap_ok(same, "write -> read is bit for bit for fp16, fp64, bf16, fp32 and escaped names");
  tap_ok(rc == 0 && ix.data_start % 8 == 0, "the data section starts 8-byte aligned");
  if (rc == 0) ns_st_free(&ix);
  const char *dup[2] = {"a", "a"};
  tap_ok(ns_st_serialize((const ns_tensor *const *)t, dup, 2, &len, err) == NULL,
         "writing two tensors of one name is refused (%s)", err);
  free(buf);
  for (int k = 0; k < 4; k++) ns_tensor_free(t[k]);
}

/* The statistic map against the normalization plan, and the stream against the plan's
 * two-pass moments, for each kind of reduction and many chunkings. */
static void test_stream(void) {
  char err[NS_ERRLEN] = "";
  size_t shape[4] = {4, 6, 5, 3};
  size_t n = 4 * 6 * 5 * 3;
  double *v = malloc(n * sizeof *v);
  ns_rng g;
  ns_rng_seed_u64(&g, 7);
  for (size_t i = 0; i < n; i++) v[i] = 1000 + ns_rng_normal(&g, 0, 1) * (1 + (double)(i % 6));
  ns_tensor *x = ns_tensor_from(4, shape, NS_FP64, v, err);
  struct {
    ns_kind kind;
    unsigned axes;
    int groups;
  } cases[] = {{NS_KIND_LAYER, 0, 1},           {NS_KIND_BATCH, 0, 1},
               {NS_KIND_INSTANCE, 0, 1},        {NS_KIND_GROUP, 0, 3},
               {NS_KIND_LAYER, 1u << 1, 1},     {NS_KIND_LAYER, 1u << 3, 1},
               {NS_KIND_BATCH, 1u | 1u << 2, 1}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    ns_spec s;
    ns_spec_default(&s);
    s.kind = cases[c].kind;
    s.axes = cases[c].axes;
    s.groups = cases[c].groups;
    ns_norm_result r = {0};
    if (ns_normalize(x, &s, &r, err) != 0) {
      tap_ok(0, "normalize case %zu: %s", c, err);
      continue;
    }
    unsigned axes = r.plan.axes;
    int gaxis = -1;
    if (s.kind == NS_KIND_GROUP && s.axes == 0) {
      axes &= ~(1u << 1);
      gaxis = 1;
    }
    ns_statmap m;
    int rc = ns_statmap_make(4, shape, axes, gaxis, (size_t)s.groups, &m, err);
    tap_ok(rc == 0 && m.nstat == r.plan.nstat && m.count == r.plan.count,
           "case %zu (%s): %zu statistics of %zu", c, ns_kind_name(s.kind), m.nstat, m.count);
    size_t *idx = malloc(n * sizeof *idx);
    int same = rc == 0;
    for (size_t i = 0; same && i < n; i++)
      same = ns_statmap_stat(&m, i) == ns_norm_plan_stat_of(&r.plan, i);
    for (size_t first = 0; same && first < n; first += 37) {
      size_t len = n - first < 101 ? n - first : 101;
      ns_statmap_fill(&m, first, len, idx);
      for (size_t j = 0; same && j < len; j++)
        same = idx[j] == ns_norm_plan_stat_of(&r.plan, first + j);
    }
    tap_ok(same, "case %zu: the map numbers statistics as the plan does", c);
    size_t chunks[] = {1, 7, 64, 359, n};
    double worst = 0;
    for (size_t q = 0; rc == 0 && q < sizeof chunks / sizeof chunks[0]; q++) {
      ns_stream st = {0};
      ns_stream_init(&st, &m, err);
      for (size_t i = 0; i < n; i += chunks[q])
        ns_stream_add(&st, v + i, n - i < chunks[q] ? n - i : chunks[q], err);
      for (size_t k = 0; k < m.nstat; k++) {
        double dm = fabs(st.m[k].mean - r.batch[k].mean) / fabs(r.batch[k].mean);
        double dv = fabs(st.m[k].m2 - r.batch[k].m2) / r.batch[k].m2;
        if (st.m[k].n != r.batch[k].n) dm = 1;
        if (dm > worst) worst = dm;
        if (dv > worst) worst = dv;
      }
      ns_stream_free(&st);
    }
    tap_ok(worst < 1e-12, "case %zu: streamed moments equal the two-pass ones (rel %.3g)", c,
           worst);
    free(idx);
    ns_norm_result_free(&r);
  }
  ns_statmap m;
  tap_ok(ns_statmap_make(4, shape, 1u << 4, -1, 1, &m, err) == -1, "axes beyond the rank refused");
  tap_ok(ns_statmap_make(4, shape, 0, 1, 4, &m, err) == -1, "groups not dividing refused (%s)",
         err);
  ns_stream st = {0};
  ns_statmap_make(1, shape, 1, -1, 1, &m, err);
  ns_stream_init(&st, &m, err);
  tap_ok(ns_stream_add(&st, v, 5, err) == -1, "more elements than the tensor refused (%s)", err);
  ns_stream_free(&st);
  ns_tensor_free(x);
  free(v);
}

/* The chunk records (stream.h) against the two-pass moments of each statistic (up to the
 * fourth), for every kind of map (last axis reduced, unreduced rows, grouped), any chunking
 * and a window of the statistics; the runs cover each element once with its statistic; a
 * statistic's box holds exactly its elements. */
static void test_chunks(void) {
  char err[NS_ERRLEN] = "";
  size_t shape[4] = {4, 6, 5, 3};
  size_t n = 4 * 6 * 5 * 3;
  double *v = malloc(n * sizeof *v);
  ns_rng g;
  ns_rng_seed_u64(&g, 9);
  for (size_t i = 0; i < n; i++) v[i] = 50 + ns_rng_normal(&g, 0, 1) * (1 + (double)(i % 7));
  struct {
    unsigned axes;
    int gaxis;
    size_t groups;
  } maps[] = {{0xd, -1, 1}, {0xe, -1, 1}, {0xc, -1, 1}, {0xc, 1, 3},  {0x2, -1, 1},
              {0x8, -1, 1}, {0x5, -1, 1}, {0x7, -1, 1}, {0x0, -1, 1}, {0xf, -1, 1}};
  for (size_t c = 0; c < sizeof maps / sizeof maps[0]; c++) {
    ns_statmap m;
    ns_statmap_make(4, shape, maps[c].axes, maps[c].gaxis, maps[c].groups, &m, err);
    size_t ns = m.nstat;
    ns_moments *ref = calloc(ns, sizeof *ref), *got = calloc(ns, sizeof *got);
    double *lo = malloc(ns * sizeof *lo), *hi = malloc(ns * sizeof *hi);
    double *rlo = malloc(ns * sizeof *rlo), *rhi = malloc(ns * sizeof *rhi);
    double *sum = calloc(ns, sizeof *sum), *s4 = calloc(ns, sizeof *s4);
    double *s3 = calloc(ns, sizeof *s3);
    /* the reference: two passes per statistic over ns_statmap_stat */
    for (size_t k = 0; k < ns; k++) rlo[k] = HUGE_VAL, rhi[k] = -HUGE_VAL;
    for (size_t i = 0; i < n; i++) {
      size_t s = ns_statmap_stat(&m, i);
      sum[s] += v[i];
      ref[s].n += 1;
      if (v[i] < rlo[s]) rlo[s] = v[i];
      if (v[i] > rhi[s]) rhi[s] = v[i];
    }
    for (size_t k = 0; k < ns; k++) ref[k].mean = sum[k] / ref[k].n;
    for (size_t i = 0; i < n; i++) {
      size_t s = ns_statmap_stat(&m, i);
      double d = v[i] - ref[s].mean;
      ref[s].m2 += d * d;
      s3[s] += d * d * d;
      s4[s] += d * d * d * d;
    }
    /* the runs: every element once, in order, with its statistic */
    int runs_ok = 1;
    for (size_t first = 0; runs_ok && first < n; first += 41) {
      size_t len = n - first < 53 ? n - first : 53, seen = 0, off, rl, s;
      int step;
      ns_runs it;
      ns_runs_begin(&it, &m, first, len);
      while (runs_ok && ns_runs_next(&it, &off, &rl, &s, &step)) {
        runs_ok = off == seen && rl > 0;
        for (size_t j = 0; runs_ok && j < rl; j++)
          runs_ok = ns_statmap_stat(&m, first + off + j) == s + (step ? j : 0);
        seen += rl;
      }
      runs_ok = runs_ok && seen == len;
    }
    tap_ok(runs_ok, "map %zu: the runs cover each element once, with its statistic", c);
    int box_ok = 1;
    for (size_t s = 0; box_ok && s < ns; s++) {
      size_t blo[4], bhi[4], cnt = 1;
      size_t f = ns_statmap_box(&m, s, blo, bhi);
      for (int k = 0; k < 4; k++) cnt *= bhi[k] - blo[k];
      box_ok = cnt == m.count && ns_statmap_stat(&m, f) == s;
      size_t first_seen = n;
      for (size_t i = 0; i < n && first_seen == n; i++)
        if (ns_statmap_stat(&m, i) == s) first_seen = i;
      box_ok = box_ok && first_seen == f;
    }
    tap_ok(box_ok, "map %zu: each statistic's box holds its %zu elements, from its first", c,
           m.count);
    /* chunk records merged in order, for several chunk sizes, over a window of statistics
       when the map's statistics come in blocks of whole leading axes */
    size_t chunks[] = {1, 7, 64, 359, n};
    double worst = 0, wpow = 0;
    int ext = 1;
    for (size_t q = 0; q < sizeof chunks / sizeof chunks[0]; q++) {
      ns_chunk_scratch sc;
      ns_chunk_record rec = {0};
      ns_chunk_scratch_init(&sc, ns, err);
      for (size_t k = 0; k < ns; k++)
        got[k] = (ns_moments){0, 0, 0}, lo[k] = HUGE_VAL, hi[k] = -HUGE_VAL;
      double *m3 = calloc(ns, sizeof *m3), *m4 = calloc(ns, sizeof *m4);
      for (size_t i = 0; i < n; i += chunks[q]) {
        size_t len = n - i < chunks[q] ? n - i : chunks[q];
        ns_chunk_moments(&m, 0, v + i, i, len, NS_CHUNK_MINMAX | NS_CHUNK_POWERS, &rec, &sc);
        ns_chunk_merge(&rec, 0, got, lo, hi, m3, m4);
      }
      for (size_t k = 0; k < ns; k++) {
        double dm = fabs(got[k].mean - ref[k].mean) / fabs(ref[k].mean);
        double dv = ref[k].m2 > 0 ? fabs(got[k].m2 - ref[k].m2) / ref[k].m2 : fabs(got[k].m2);
        if (got[k].n != ref[k].n) dm = 1;
        if (dm > worst) worst = dm;
        if (dv > worst) worst = dv;
        ext = ext && lo[k] == rlo[k] && hi[k] == rhi[k];
        /* the third moment against the scale of the fourth: it may be near 0 */
        double sc3 = sqrt(s4[k] * ref[k].m2) + 1e-300;
        double dp = s4[k] > 0 ? fabs(m4[k] - s4[k]) / s4[k] : fabs(m4[k]);
        double d3 = fabs(m3[k] - s3[k]) / sc3;
        if (dp > wpow) wpow = dp;
        if (d3 > wpow) wpow = d3;
      }
      free(m3);
      free(m4);
      ns_chunk_record_free(&rec);
      ns_chunk_scratch_free(&sc);
    }
    tap_ok(worst < 1e-12 && ext,
           "map %zu: chunk records merge to the two-pass moments (rel %.3g), min and max exact", c,
           worst);
    tap_ok(wpow < 1e-11, "map %zu: third and fourth moments merged as the two-pass ones (rel %.3g)",
           c, wpow);
    /* a window: statistics [s0, s0 + w) held alone, for maps whose statistics lie in the
       blocks of the leading axis (axis 1 unreduced) */
    if (!(maps[c].axes & 1u) && maps[c].gaxis != 0) {
      size_t per = ns / shape[0], s0 = 2 * per, e0 = 2 * n / shape[0], e1 = 3 * n / shape[0];
      ns_chunk_scratch sc;
      ns_chunk_record rec = {0};
      ns_chunk_scratch_init(&sc, per, err);
      ns_moments *w = calloc(per, sizeof *w);
      for (size_t i = e0; i < e1; i += 17) {
        size_t len = e1 - i < 17 ? e1 - i : 17;
        ns_chunk_moments(&m, s0, v + i, i, len, 0, &rec, &sc);
        ns_chunk_merge(&rec, s0, w, NULL, NULL, NULL, NULL);
      }
      double wd = 0;
      for (size_t k = 0; k < per; k++) {
        double d = fabs(w[k].m2 - ref[s0 + k].m2) / ref[s0 + k].m2;
        if (w[k].n != ref[s0 + k].n) d = 1;
        if (d > wd) wd = d;
      }
      tap_ok(wd < 1e-12, "map %zu: a window of example 3's %zu statistics alone (rel %.3g)", c, per,
             wd);
      free(w);
      ns_chunk_record_free(&rec);
      ns_chunk_scratch_free(&sc);
    }
    free(ref);
    free(got);
    free(lo);
    free(hi);
    free(rlo);
    free(rhi);
    free(sum);
    free(s4);
    free(s3);
  }
  free(v);
}

/* Chunked reads of .npy and .safetensors files equal whole-file loads. */
static void test_map(void) {
  char err[NS_ERRLEN] = "";
  const char *tmp = getenv("TMPDIR");
  char dir[512], p1[600], p2[600];
  snprintf(dir, sizeof dir, "%s/ns-st-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    tap_ok(0, "mkdtemp");
    return;
  }
  snprintf(p1, sizeof p1, "%s/a.npy", dir);
  snprintf(p2, sizeof p2, "%s/a.safetensors", dir);
  size_t shape[3] = {5, 7, 9};
  double v[315];
  for (int i = 0; i < 315; i++) v[i] = sin(i * 0.37) * 100;
  int ok = 1;
  for (int d = 0; d < NS_DTYPE_COUNT; d++) {
    ns_tensor *t = ns_tensor_from(3, shape, (ns_dtype)d, v, err);
    for (int f = 0; f < 2; f++) {
      const char *p = f ? p2 : p1;
      if (ns_file_save(p, t, err) != 0) {
        if (!(d == NS_BF16 && f == 0)) ok = 0, tap_diag("save %s: %s", p, err);
        continue;
      }
      ns_file_map m;
      if (ns_file_map_open(&m, p, NULL, 0, err) != 0) {
        ok = 0;
        tap_diag("map %s: %s", p, err);
        continue;
      }
      double out[315];
      for (size_t first = 0; first < 315; first += 50)
        ns_file_map_read(&m, first, 315 - first < 50 ? 315 - first : 50, out + first, err);
      ns_tensor *u = ns_file_load(p, err);
      for (int i = 0; i < 315; i++)
        if (!u || out[i] != ns_tensor_get(u, (size_t)i) ||
            (d != NS_BF16 && out[i] != ns_tensor_get(t, (size_t)i)))
          ok = 0;
      if (m.n != 315 || m.rank != 3) ok = 0;
      ns_tensor_free(u);
      ns_file_map_close(&m);
    }
    ns_tensor_free(t);
  }
  tap_ok(ok, "chunked reads of .npy and .safetensors equal whole loads, each dtype");
  ns_file_map m;
  tap_ok(ns_file_map_open(&m, test_data_path("safetensors/small.safetensors"), NULL, 0, err) ==
                 -1 &&
             strstr(err, "layer.a (F32, [2, 3])") != NULL,
         "several tensors and no name: the message lists them (%s)", err);
  tap_ok(ns_file_map_open(&m, test_data_path("safetensors/small.safetensors"), "zz", 0, err) ==
                 -1 &&
             strstr(err, "no tensor named \"zz\"") != NULL,
         "a wrong name: %s", err);
  ns_tensor *t = ns_file_load_named(test_data_path("safetensors/small.safetensors"), "bf", 0, err);
  tap_ok(t && t->dtype == NS_BF16 && ns_tensor_get(t, 1) == -2.25, "a named BF16 tensor loads");
  ns_tensor_free(t);
  t = ns_file_load_named(test_data_path("safetensors/utf8.safetensors"),
                         "\xc3\xa9t\xc3\xa9.\xce\xbc", 0, err);
  tap_ok(t && ns_tensor_get(t, 0) == 2.5, "a name in raw UTF-8 is found (%s)", err);
  ns_tensor_free(t);
  t = ns_file_load(test_data_path("safetensors/one.safetensors"), err);
  tap_ok(t && t->n == 4 && ns_tensor_get(t, 3) == 4, "a file of one tensor loads without a name");
  ns_tensor_free(t);
  unlink(p1);
  unlink(p2);
  rmdir(dir);
}

/* .npy bf16: '<V2' (ml_dtypes' bfloat16) and '<u2' with the flag. */
static void test_npy_bf16(void) {
  char err[NS_ERRLEN] = "";
  const char *kinds[3] = {"<V2", "<u2", "|V2"};
  uint16_t bits[3] = {0x3FC0, 0xC010, 0x0001}; /* 1.5, -2.25, the smallest subnormal */
  for (int k = 0; k < 3; k++) {
    char hdr[128];
    int hl = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (3,), }",
                      kinds[k]);
    while ((10 + hl + 1) % 64) hdr[hl++] = ' ';
    hdr[hl++] = '\n';
    unsigned char buf[256];
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)hl;
    buf[9] = 0;
    memcpy(buf + 10, hdr, (size_t)hl);
    for (int i = 0; i < 3; i++) {
      buf[10 + hl + 2 * i] = (unsigned char)(bits[i] & 0xff);
      buf[10 + hl + 2 * i + 1] = (unsigned char)(bits[i] >> 8);
    }
    size_t len = (size_t)(10 + hl + 6);
    ns_tensor *plain = ns_npy_parse(buf, len, err);
    ns_tensor *flag = ns_npy_parse_flags(buf, len, NS_NPY_U2_BF16, err);
    if (k == 1) {
      tap_ok(plain && plain->dtype == NS_FP64 && ns_tensor_get(plain, 0) == 0x3FC0,
             "'<u2' without the flag stays integers");
    } else {
      tap_ok(plain && plain->dtype == NS_BF16, "'%s' loads as bf16", kinds[k]);
    }
    tap_ok(flag && flag->dtype == NS_BF16 && ns_tensor_get(flag, 0) == 1.5 &&
               ns_tensor_get(flag, 1) == -2.25 && ns_tensor_get(flag, 2) == ldexp(1, -133),
           "'%s' (with the flag) holds 1.5, -2.25 and 2^-133", kinds[k]);
    ns_tensor_free(plain);
    ns_tensor_free(flag);
  }
}

int main(void) {
  test_small();
  test_bad();
  test_roundtrip();
  test_stream();
  test_chunks();
  test_map();
  test_npy_bf16();
  return tap_done();
}
