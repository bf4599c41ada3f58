/* jacwork.c: the full Jacobian off the key path. After a recompute the explorer's cache
 * may hold a job (result.h: ns_explore_take_job); one worker thread runs it while keys
 * keep coming, and the main loop moves the finished Jacobian into the result when it is
 * still the current one. A newer job waits while an older one runs (which is asked to
 * stop at its next stage); only the latest waits, so a burst of keys costs one Jacobian.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "tui/app.h"

struct tui_jacwork {
  pthread_t thread;
  ns_jac_job *running; /* the worker's job (NULL: idle) */
  ns_jac_job *queued;  /* the latest job, started when the worker is free */
  atomic_int done;     /* the worker finished running */
};

static void *work(void *arg) {
  tui_jacwork *w = arg;
  ns_jac_job_run(w->running);
  atomic_store(&w->done, 1);
  return NULL;
}

/* Starts job j in the worker (it must be idle); runs it here if no thread can start. */
static void start(app *a, ns_jac_job *j) {
  tui_jacwork *w = a->jacw;
  w->running = j;
  atomic_store(&w->done, 0);
  if (pthread_create(&w->thread, NULL, work, w) != 0) {
    ns_jac_job_run(j);
    atomic_store(&w->done, 2); /* 2: no thread to join */
  }
}

void tui_jac_after_recompute(app *a) {
  ns_jac_job *j = ns_explore_take_job(&a->cache);
  if (!j) return;
  if (!a->jacw && !(a->jacw = calloc(1, sizeof *a->jacw))) { /* no worker: block once */
    ns_jac_job_run(j);
    ns_jac_job_apply(j, &a->cache, &a->res);
    ns_jac_job_free(j);
    return;
  }
  tui_jacwork *w = a->jacw;
  if (w->running) { /* busy with an older state: stop it, keep only the newest */
    ns_jac_job_cancel(w->running);
    ns_jac_job_free(w->queued);
    w->queued = j;
    return;
  }
  start(a, j);
}

int tui_jac_busy(const app *a) {
  return a->jacw && (a->jacw->running || a->jacw->queued);
}

int tui_jac_poll(app *a) {
  tui_jacwork *w = a->jacw;
  if (!w || !w->running || !atomic_load(&w->done)) return 0;
  if (atomic_load(&w->done) == 1) pthread_join(w->thread, NULL);
  int landed = ns_jac_job_apply(w->running, &a->cache, &a->res);
  ns_jac_job_free(w->running);
  w->running = NULL;
  if (w->queued) {
    ns_jac_job *j = w->queued;
    w->queued = NULL;
    start(a, j);
  }
  return landed;
}

void tui_jac_stop(app *a) {
  tui_jacwork *w = a->jacw;
  if (!w) return;
  if (w->running) {
    /* the job stops at its next stage; one LAPACK call on 1024 elements can take a second,
     * and the thread is joined all the same: left running, it could be inside OpenBLAS
     * while the library's destructor frees its buffers at exit */
    ns_jac_job_cancel(w->running);
    if (atomic_load(&w->done) != 2) pthread_join(w->thread, NULL);
    ns_jac_job_free(w->running);
  }
  ns_jac_job_free(w->queued);
  free(w);
  a->jacw = NULL;
}
