/* stackview.c: the deep-stack view (key L; chapter 004 throughout).
 *
 * The essay's 20-layer tanh stack, width 256, default_rng(0) (core/stack.h): the per-layer
 * std of h_k for the three initialisations 1/16, 0.01 and 1, without normalization and
 * with batch norm (batch 512), and the layer-20 std against the batch size for batch and
 * layer norm (init 1/16). The runs do not depend on the explorer state, so they are made
 * once, by a thread started when the view first opens (keys stay free meanwhile); the
 * view says "computing..." until the last one is in.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/stack.h"
#include "plot/figure.h"
#include "tui/screen.h"

const double tui_stack_inits[TUI_STACK_NINIT] = {1.0 / 16, 0.01, 1};
static const char *const init_names[TUI_STACK_NINIT] = {"1/16", "0.01", "1"};
const int tui_stack_batches[TUI_STACK_NB] = {4, 8, 32, 256, 512};

/* Run k: 0..2 no norm and 3..5 batch norm at batch 512 for each init; then init 1/16:
 * batch norm at the smaller batches (512 is run 3), layer norm at every batch. */
static void run_opts(int k, ns_stack_opts *o, double **std_out, double **l20_out,
                     tui_stack_data *d) {
  ns_stack_default(o);
  o->layers = TUI_STACK_LAYERS;
  *std_out = NULL;
  *l20_out = NULL;
  if (k < 2 * TUI_STACK_NINIT) {
    int bn = k >= TUI_STACK_NINIT, i = k % TUI_STACK_NINIT;
    o->init = tui_stack_inits[i];
    o->norm = bn ? NS_STACK_BATCH : NS_STACK_NONE;
    o->batch = 512;
    *std_out = d->std[bn][i];
    if (bn && i == 0) *l20_out = &d->l20[0][TUI_STACK_NB - 1];
    return;
  }
  k -= 2 * TUI_STACK_NINIT;
  o->init = 1.0 / 16;
  if (k < TUI_STACK_NB - 1) {
    o->norm = NS_STACK_BATCH;
    o->batch = (size_t)tui_stack_batches[k];
    *l20_out = &d->l20[0][k];
  } else {
    k -= TUI_STACK_NB - 1;
    o->norm = NS_STACK_LAYER;
    o->batch = (size_t)tui_stack_batches[k];
    *l20_out = &d->l20[1][k];
  }
}

/* The thread: each run computed outside the lock, stored and counted under it. */
static void *worker(void *arg) {
  tui_stack_data *d = arg;
  for (int k = 0; k < TUI_STACK_RUNS; k++) {
    pthread_mutex_lock(&d->lock);
    int stop = d->stop;
    pthread_mutex_unlock(&d->lock);
    if (stop) break;
    ns_stack_opts o;
    double *std, *l20;
    run_opts(k, &o, &std, &l20, d);
    ns_stack_result res = {0};
    char err[NS_ERRLEN];
    int rc = ns_stack(&o, &res, err);
    pthread_mutex_lock(&d->lock);
    if (rc != 0) {
      d->failed = 1;
      snprintf(d->err, sizeof d->err, "%s", err);
    } else {
      if (std) memcpy(std, res.std, TUI_STACK_LAYERS * sizeof *std);
      if (l20) *l20 = res.std[TUI_STACK_LAYERS - 1];
      d->runs_done = k + 1;
    }
    pthread_mutex_unlock(&d->lock);
    ns_stack_result_free(&res);
    if (rc != 0) break;
  }
  return NULL;
}

void tui_stack_start(tui_stack_data *d) {
  if (d->started) return;
  d->started = 1;
  pthread_mutex_init(&d->lock, NULL);
  if (pthread_create(&d->thread, NULL, worker, d) == 0) {
    d->thread_on = 1;
  } else {
    d->failed = 1;
    snprintf(d->err, sizeof d->err, "cannot start a thread for the runs");
  }
}

int tui_stack_progress(tui_stack_data *d) {
  if (!d->started) return 0;
  pthread_mutex_lock(&d->lock);
  int n = d->failed ? -1 : d->runs_done;
  pthread_mutex_unlock(&d->lock);
  return n;
}

void tui_stack_stop(tui_stack_data *d) {
  if (!d->started) return;
  if (d->thread_on) {
    pthread_mutex_lock(&d->lock);
    d->stop = 1;
    pthread_mutex_unlock(&d->lock);
    pthread_join(d->thread, NULL);
    d->thread_on = 0;
  }
  pthread_mutex_destroy(&d->lock);
  d->started = 0;
}

static void draw_locked(const tui_stack_data *d, WINDOW *w, const tui_view *v);

void tui_draw_stack(tui_stack_data *d, WINDOW *w, const tui_view *v) {
  if (!d->started) {
    tui_frame(w, "Deep stacks", v);
    return;
  }
  pthread_mutex_lock(&d->lock);
  draw_locked(d, w, v);
  pthread_mutex_unlock(&d->lock);
}

static void draw_locked(const tui_stack_data *d, WINDOW *w, const tui_view *v) {
  char title[100], kv[16];
  snprintf(title, sizeof title,
           "Deep stacks: 20 tanh layers, width 256, default_rng(0)  (%s or Esc closes)",
           tui_key_name('L', kv, sizeof kv));
  tui_frame(w, title, v);
  int iw = tui_iw(w), ih = tui_ih(w);
  if (d->failed) {
    tui_printf(w, 1, 1, PLOT_S_MARK, "the stack failed: %s", d->err);
    return;
  }
  if (d->runs_done < TUI_STACK_RUNS) {
    tui_printf(w, 1, 1, PLOT_S_LABEL, "computing... run %d of %d (keys still work)",
               d->runs_done + 1, TUI_STACK_RUNS);
    return;
  }
  char b[8][32];
  /* the layer-20 numbers first: they are what the chapter prints */
  int y = 1;
  tui_printf(w, y++, 1, PLOT_S_TEXT, "layer-20 std, batch 512  init %12s %12s %12s", init_names[0],
             init_names[1], init_names[2]);
  static const char *const rowname[2] = {"no norm", "batch norm"};
  for (int bn = 0; bn < 2; bn++) {
    for (int i = 0; i < TUI_STACK_NINIT; i++)
      snprintf(b[i], sizeof b[i], "%.6g", d->std[bn][i][TUI_STACK_LAYERS - 1]);
    tui_printf(w, y++, 1, PLOT_S_TEXT, "  %-27s %12s %12s %12s", rowname[bn], b[0], b[1], b[2]);
  }
  char hdr[128];
  int n = snprintf(hdr, sizeof hdr, "layer-20 std at batch");
  for (int k = 0; k < TUI_STACK_NB; k++)
    n += snprintf(hdr + n, sizeof hdr - (size_t)n, " %9d", tui_stack_batches[k]);
  tui_puts(w, y++, 1, PLOT_S_TEXT, hdr);
  static const char *const nname[2] = {"  batch norm (1/16)  ", "  layer norm (1/16)  "};
  for (int m = 0; m < 2; m++) {
    n = snprintf(hdr, sizeof hdr, "%s", nname[m]);
    for (int k = 0; k < TUI_STACK_NB; k++)
      n += snprintf(hdr + n, sizeof hdr - (size_t)n, " %9.6g", d->l20[m][k]);
    tui_puts(w, y++, 1, PLOT_S_TEXT, hdr);
  }
  /* the figures share what is left: per-layer std (log axis: init 0.01 dies out to 1e-16)
   * on the left, layer 20 against the batch size on the right */
  int fh = ih - y + 1;
  if (fh < 6) return;
  int lw = iw * 3 / 5, rw = iw - lw - 1;
  double layer[TUI_STACK_LAYERS];
  for (int k = 0; k < TUI_STACK_LAYERS; k++) layer[k] = k + 1;
  char labels[6][24];
  plot_xy ser[6];
  for (int bn = 0; bn < 2; bn++)
    for (int i = 0; i < TUI_STACK_NINIT; i++) {
      snprintf(labels[3 * bn + i], sizeof labels[0], "%s %s", bn ? "BN" : "none", init_names[i]);
      ser[3 * bn + i] = (plot_xy){layer, d->std[bn][i], TUI_STACK_LAYERS, labels[3 * bn + i]};
    }
  char err[PLOT_ERRLEN] = "";
  plot_opts o;
  tui_fig_opts(&o, lw, fh, v, "std of h_k per layer (batch 512)");
  o.logy = 1;
  o.xlabel = "layer";
  tui_fig_paint(w, y, 1, plot_fig_lines(ser, 6, &o, 1, err), err);
  double bx[TUI_STACK_NB];
  for (int k = 0; k < TUI_STACK_NB; k++) bx[k] = tui_stack_batches[k];
  plot_xy bs[2] = {{bx, d->l20[0], TUI_STACK_NB, "batch norm (1/16)"},
                   {bx, d->l20[1], TUI_STACK_NB, "layer norm (1/16)"}};
  tui_fig_opts(&o, rw, fh, v, "layer-20 std against batch");
  /* batch norm at init 1/16 is the left figure's "BN 1/16": its marker (3); layer norm one
     the left does not use (6), so no marker means two things on this screen */
  static const int marks[2] = {3, 6};
  o.marks = marks;
  o.logx = 1;
  o.xlabel = "batch";
  err[0] = 0;
  tui_fig_paint(w, y, 2 + lw, plot_fig_lines(bs, 2, &o, 1, err), err);
}
