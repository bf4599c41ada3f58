/* test_audit.c: the audit's report record from C: every finding's explorer state patch
 * applies to a fresh explorer state (as the screen's `a` key will apply it), the dead
 * channel's patch holds exactly that channel's values, the suggested layout's axes go into
 * the axes finding's patch, and the text forms hold one line per finding. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "audit/audit.h"
#include "explore/state.h"
#include "tap.h"

/* (N, C, H, W) = (6, 4, 5, 5); channel 1 nearly constant; optionally channels last. */
static ns_tensor *make(int channels_last, char *err) {
  size_t N = 6, C = 4, H = 5, W = 5;
  double loc[4] = {0, 2, -1, 5}, sc[4] = {1, 1e-4, 2, 0.5};
  size_t shape[4] = {N, C, H, W};
  if (channels_last) shape[1] = H, shape[2] = W, shape[3] = C;
  ns_rng g;
  ns_rng_seed_u64(&g, 5);
  double *v = malloc(N * C * H * W * sizeof *v);
  for (size_t n = 0; n < N; n++)
    for (size_t c = 0; c < C; c++)
      for (size_t h = 0; h < H; h++)
        for (size_t w = 0; w < W; w++) {
          size_t i = channels_last ? ((n * H + h) * W + w) * C + c : ((n * C + c) * H + h) * W + w;
          v[i] = ns_rng_normal(&g, loc[c], sc[c]);
        }
  ns_tensor *t = ns_tensor_from(4, shape, NS_FP64, v, err);
  free(v);
  return t;
}

static int stop_after_two(void *ctx) {
  int *calls = ctx;
  return ++*calls >= 2;
}

/* What the progress callbacks saw: the fractions (non-decreasing?) and the passes named. */
typedef struct {
  double last;
  int calls, backwards;
  char phases[512];
} seen;
static void on_progress(void *ctx, double done) {
  seen *s = ctx;
  if (done < s->last) s->backwards = 1;
  s->last = done;
  s->calls++;
}
static void on_phase(void *ctx, const char *what) {
  seen *s = ctx;
  size_t n = strlen(s->phases);
  if (!strstr(s->phases, what)) snprintf(s->phases + n, sizeof s->phases - n, "%s|", what);
}

int main(void) {
  char err[NS_ERRLEN] = "";
  ns_tensor *x = make(0, err);
  ns_audit_opts o;
  ns_audit_opts_init(&o);
  o.kind = NS_KIND_BATCH;
  double rm[4] = {0, 0, 0, 0}, rv[4] = {1, 1, 1, 1};
  o.run_mean = rm;
  o.run_var = rv;
  o.nrun = 4;
  ns_audit_report r;
  int rc = ns_audit_tensor(x, &o, &r, err);
  tap_ok(rc == 0, "audit of a (6, 4, 5, 5) tensor runs (%s)", err);
  if (rc) return tap_done();
  tap_ok(r.nfindings == 7, "seven findings with running statistics");
  int applied = 1;
  for (size_t k = 0; k < r.nfindings; k++) {
    ns_state s;
    ns_state_init(&s, err);
    if (ns_state_apply(&s, &r.f[k].patch, err) != 0) {
      applied = 0;
      tap_diag("%s: %s", ns_audit_check_names[r.f[k].check], err);
    }
    ns_state_free(&s);
  }
  tap_ok(applied, "every finding's patch applies to a fresh explorer state");
  const ns_audit_finding *nz = &r.f[NS_AUDIT_NEAR_ZERO_VARIANCE];
  tap_ok(nz->verdict == NS_VERDICT_WARN && nz->value == 1, "channel 1 is found dead");
  int same = nz->x && nz->x->n == 6 * 25;
  for (size_t n = 0; same && n < 6; n++)
    for (size_t j = 0; same && j < 25; j++)
      same = ns_tensor_get(nz->x, n * 25 + j) == ns_tensor_get(x, (n * 4 + 1) * 25 + j);
  tap_ok(same, "its patch's x holds exactly channel 1's 150 values, in order");
  tap_ok(ns_patch_has(&nz->patch, NS_F_EPS) && nz->patch.v.eps == 1e-5, "with the audit's eps");
  /* on the audited tensor itself (the screen's Enter): channel 1 starts at flat (0*4+1)*25 */
  tap_ok(nz->at == 25, "near_zero_variance points at element 25, channel 1's first (%zu)", nz->at);
  tap_ok(!ns_patch_has(&nz->here, NS_F_X) && ns_patch_has(&nz->here, NS_F_KIND) &&
             nz->here.v.kind == NS_KIND_BATCH && nz->here.v.eps == 1e-5,
         "its in-place patch keeps x and sets the audit's batch norm and eps");
  {
    /* the outlier's element: the largest |x - mean| of the statistic it names, found here
     * by scanning that channel directly */
    const ns_audit_finding *ou = &r.f[r.nfindings - 1];
    int ok = ou->check == NS_AUDIT_OUTLIERS && ou->at != NS_AUDIT_NOWHERE && ou->at < x->n;
    size_t c = ok ? (ou->at / 25) % 4 : 0, best = 0;
    double mu = 0, bd = -1;
    for (size_t n = 0; ok && n < 6; n++)
      for (size_t j = 0; j < 25; j++) mu += ns_tensor_get(x, (n * 4 + c) * 25 + j) / 150;
    for (size_t n = 0; ok && n < 6; n++)
      for (size_t j = 0; j < 25; j++) {
        size_t i = (n * 4 + c) * 25 + j;
        double d = fabs(ns_tensor_get(x, i) - mu);
        if (d > bd) bd = d, best = i;
      }
    tap_ok(ok && best == ou->at, "outliers points at its channel's farthest element (%zu, %zu)",
           ou->at, best);
  }
  int here_ok = 1;
  for (size_t k = 0; k < r.nfindings; k++) {
    ns_state s;
    ns_state_init(&s, err);
    ns_state_patch px;
    ns_patch_init(&px);
    ns_patch_set(&px, NS_F_X);
    px.v.x = x;
    if (ns_state_apply(&s, &px, err) != 0 || ns_state_apply(&s, &r.f[k].here, err) != 0) {
      here_ok = 0;
      tap_diag("%s: %s", ns_audit_check_names[r.f[k].check], err);
    }
    ns_state_free(&s);
  }
  tap_ok(here_ok, "every in-place patch applies to a state whose x is the audited tensor");
  const ns_audit_finding *bd = &r.f[NS_AUDIT_BATCH_DEPENDENCE];
  tap_ok(bd->verdict == NS_VERDICT_YES && ns_patch_has(&bd->patch, NS_F_BATCH) &&
             bd->batch->shape[0] == 6 && bd->patch.v.target == 1 && bd->patch.v.companion == 2,
         "batch_dependence: the batch panel gets the first 6 examples, target 1, companion 2");
  tap_ok(r.f[5].check == NS_AUDIT_TRAIN_EVAL_GAP && r.f[5].verdict == NS_VERDICT_WARN &&
             r.f[5].patch.v.mode == NS_MODE_EVAL,
         "train_eval_gap warns (running N(0,1) against channels at 2 and 5) and opens eval mode");
  char *tsv = ns_audit_format(&r, NS_AUDIT_TSV, "x.npy", 1);
  int lines = 0;
  for (char *p = tsv; p && *p; p++) lines += *p == '\n';
  tap_ok(lines == 7, "the TSV has one line per finding (%d)", lines);
  free(tsv);
  char *md = ns_audit_format(&r, NS_AUDIT_MARKDOWN, "x.npy", 1);
  tap_ok(md && strstr(md, "## near_zero_variance: warn") && strstr(md, "```text"),
         "the Markdown report has a section per finding and figures");
  free(md);
  ns_audit_free(&r);
  ns_tensor_free(x);

  /* channels last read as channels first: the patch carries the nhwc axes {1,2,3} */
  x = make(1, err);
  o.run_mean = o.run_var = NULL;
  o.nrun = 0;
  rc = ns_audit_tensor(x, &o, &r, err);
  const ns_audit_finding *ax = &r.f[NS_AUDIT_AXES];
  tap_ok(rc == 0 && ax->verdict == NS_VERDICT_WARN && r.layout_suggest == NS_LAYOUT_NHWC,
         "channels last: axes warns and suggests nhwc");
  tap_ok(rc == 0 && ns_patch_has(&ax->patch, NS_F_AXES) && ax->patch.v.axes == 0x7,
         "the axes patch reduces over axes {1,2,3} (mask 0x7, got 0x%x)", ax->patch.v.axes);
  ns_state s;
  ns_state_init(&s, err);
  tap_ok(rc == 0 && ns_state_apply(&s, &ax->patch, err) == 0 && s.axes == 0x7 &&
             s.kind == NS_KIND_BATCH && s.x->n == x->n,
         "applied, the explorer shows batch norm of the input over {1,2,3}");
  ns_state_free(&s);
  tap_ok(rc == 0 && !ns_patch_has(&ax->here, NS_F_X) && ax->here.v.axes == 0x7,
         "the in-place axes patch has the nhwc axes and no x");
  if (rc == 0) ns_audit_free(&r);

  /* the progress covers the whole run, naming each pass */
  {
    seen sp = {0, 0, 0, ""};
    o.chunk = 1;
    o.progress = on_progress;
    o.phase = on_phase;
    o.progress_ctx = &sp;
    rc = ns_audit_tensor(x, &o, &r, err);
    tap_ok(rc == 0 && sp.calls >= 4 && !sp.backwards && sp.last == 1,
           "progress: %d calls, never backwards, ending at %g", sp.calls, sp.last);
    tap_ok(strstr(sp.phases, "streaming") && strstr(sp.phases, "precision slice") &&
               strstr(sp.phases, "done"),
           "and names the parts of the run: %s", sp.phases);
    if (rc == 0) ns_audit_free(&r);
    o.progress = NULL;
    o.phase = NULL;
  }
  /* a stop request ends the run at the next round of chunks (a round holds at most 256
     chunks: with one element each, this tensor takes 3) */
  int calls = 0;
  o.chunk = 1;
  o.progress_ctx = &calls;
  o.stop = stop_after_two;
  rc = ns_audit_tensor(x, &o, &r, err);
  tap_ok(rc == -1 && strstr(err, "stopped") && calls == 2,
         "stop: the run ends after the round that asked (%d calls): %s", calls, err);
  o.stop = NULL;
  ns_tensor_free(x);

  /* the option checks */
  size_t shape3[3] = {2, 3, 4};
  ns_audit_opts_init(&o);
  o.layout = NS_LAYOUT_NHWC;
  tap_ok(ns_audit_check_opts(&o, 3, shape3, err) == -1 && strstr(err, "rank 4"),
         "a rank-4 layout on a rank-3 tensor: %s", err);
  ns_audit_opts_init(&o);
  o.kind = NS_KIND_GROUP;
  o.layout = NS_LAYOUT_BTD;
  tap_ok(ns_audit_check_opts(&o, 3, shape3, err) == -1 && strstr(err, "channels on axis 2"),
         "group norm with channels last: %s", err);
  ns_audit_opts_init(&o);
  o.kind = NS_KIND_INSTANCE;
  size_t shape2[2] = {4, 5};
  tap_ok(ns_audit_check_opts(&o, 2, shape2, err) == -1, "instance norm of a matrix: %s", err);
  return tap_done();
}
