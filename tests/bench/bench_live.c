/* bench_live.c: what the user of the explorer waits on (run by `make bench`; timings are
 * printed, never asserted: they depend on the machine).
 *
 * 1. Start-up of the real binary: `normscope --version`, and the explorer's first frame
 *    on the default example (run on a pseudo-terminal until the frame's last line is on
 *    it). Medians of whole-process wall times.
 * 2. Keys on the screen's path (ns_explore_update on every core, NS_THREADS aside, with the
 *    full Jacobian deferred to its worker, as the screen does) on a 2000x512 and a
 *    (64,256,32,32) fp32 tensor: a view key
 *    (no state change), settings keys (eps; the kind and the dtype, which change more than
 *    the output; the shift probe's b; the train batches' seed),
 *    a cell edit. Targets: 16 ms for a view key, 100 ms for the others. (bench's
 *    frame lines are the same tensors from scratch, what a load costs.)
 * 2b. The same keys on the real screen, as the user waits for them: the explorer runs on a
 *    pseudo-terminal (120x40) on a (64,256,32,32) fp32 .npy file; each key is written to
 *    the terminal and timed until the explorer says the screen has settled (the frame
 *    drawn and no worker still computing a part of it: NS_TUI_SETTLED_FD, tui.c). The
 *    first frame is timed from the fork to its first "settled". Run it with NS_THREADS=2
 *    for a 2-core machine. Targets (issue 24): 500 ms for the first frame, 100 ms a key.
 * 3. The spectrum of a layer norm of d values at d = 64, 1024, 4096, 1e6: the closed form
 *    (O(d)), its checks along the eigenvectors (JVP and central differences), ns.spectrum's
 *    whole call (both, from one computation of the moments; wall time), and up to
 *    d = 1024 the full Jacobian's job (analytic and FD J, two LAPACK spectra) that the
 *    screen runs in a worker thread. The checks run on one thread and on two (their passes
 *    by fixed parts, the central differences' one map by row). Target (issue 24): 16 ms at
 *    1e6.
 *
 *   bench_live PATH-TO-NORMSCOPE [--screen [KEY] | --keys | --spectrum]
 *     (--screen: section 2b alone; KEY: only the keys whose name holds it; --keys: section
 *      2a on the 4-D tensor alone; --spectrum: section 3 alone)
 */
#define _XOPEN_SOURCE 600
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/jvp.h"
#include "core/npy.h"
#include "core/spectrum.h"
#include "core/blasdl.h"
#include "explore/explore.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmp);
  return t[n / 2];
}

/* ---- 1. start-up ---- */

/* Wall time of one `ns --version` (stdout to /dev/null), in ms; < 0 on failure. */
static double run_version(const char *ns) {
  double t0 = now();
  pid_t p = fork();
  if (p < 0) return -1;
  if (p == 0) {
    int fd = open("/dev/null", O_WRONLY);
    if (fd >= 0) dup2(fd, 1);
    execl(ns, ns, "--version", (char *)NULL);
    _exit(127);
  }
  int st;
  if (waitpid(p, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return -1;
  return (now() - t0) * 1e3;
}

/* Wall time from the start of the explorer on a pseudo-terminal (80x24, TERM
 * xterm-256color, a private HOME) until its first frame's last line ("q quit") is
 * written, in ms; < 0 on failure. */
static double run_first_frame(const char *ns, const char *home) {
  int m = posix_openpt(O_RDWR | O_NOCTTY);
  if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0) return -1;
  const char *sname = ptsname(m);
  if (!sname) return -1;
  char slave[256];
  snprintf(slave, sizeof slave, "%s", sname);
  double t0 = now();
  pid_t p = fork();
  if (p < 0) return -1;
  if (p == 0) {
    setsid();
    int s = open(slave, O_RDWR);
    if (s < 0) _exit(127);
    dup2(s, 0), dup2(s, 1), dup2(s, 2);
    close(m);
    setenv("TERM", "xterm-256color", 1);
    setenv("LANG", "C.UTF-8", 1);
    setenv("LINES", "24", 1);
    setenv("COLUMNS", "80", 1);
    setenv("HOME", home, 1);
    setenv("XDG_STATE_HOME", home, 1);
    execl(ns, ns, (char *)NULL);
    _exit(127);
  }
  char buf[65536];
  size_t have = 0;
  double t = -1;
  while (now() - t0 < 10) {
    ssize_t k = read(m, buf + have, sizeof buf - 1 - have);
    if (k <= 0) break;
    have += (size_t)k;
    buf[have] = 0;
    if (strstr(buf, "q quit")) {
      t = (now() - t0) * 1e3;
      break;
    }
    if (have > sizeof buf / 2) { /* keep the tail: the text may straddle reads */
      memmove(buf, buf + have - 64, 64);
      have = 64;
    }
  }
  kill(p, SIGTERM);
  for (;;) { /* drain until the child lets go of the terminal */
    ssize_t k = read(m, buf, sizeof buf);
    if (k <= 0) break;
  }
  waitpid(p, NULL, 0);
  close(m);
  return t;
}

static void startup(const char *ns) {
  enum { REPS = 21 };
  double t[REPS];
  int k = 0;
  run_version(ns); /* warm the page cache */
  for (int i = 0; i < REPS; i++)
    if ((t[k] = run_version(ns)) >= 0) k++;
  if (k)
    printf("start  normscope --version                 median %8.2f ms   target  5 ms %s\n",
           median(t, k), median(t, k) <= 5 ? "ok" : "OVER");
  else
    printf("start  normscope --version                 failed\n");
  char home[] = "/tmp/ns-bench-XXXXXX";
  if (!mkdtemp(home)) return;
  k = 0;
  run_first_frame(ns, home);
  for (int i = 0; i < 11; i++)
    if ((t[k] = run_first_frame(ns, home)) >= 0) k++;
  if (k)
    printf("start  explorer's first frame (default)    median %8.2f ms   target 30 ms %s\n",
           median(t, k), median(t, k) <= 30 ? "ok" : "OVER");
  else
    printf("start  explorer's first frame              failed (no pseudo-terminal?)\n");
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", home);
  if (system(cmd) != 0) fprintf(stderr, "bench_live: could not remove %s\n", home);
}

/* ---- 2. keys ---- */

/* The screen normalizes on every core unless NS_THREADS says otherwise (tui.c); so do
 * these keys. */
static int screen_threads(void) {
  const char *v = getenv("NS_THREADS");
  long t = v && *v ? strtol(v, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
  return t < 1 ? 1 : t > 64 ? 64 : (int)t;
}

typedef int (*key_fn)(ns_state *s, int i, char *err);

static int key_view(ns_state *s, int i, char *err) {
  (void)i;
  return ns_edit_set_shift(s, NULL, s->shift, err); /* changes nothing */
}
static int key_eps(ns_state *s, int i, char *err) {
  return ns_edit_eps_decade(s, NULL, i % 2 ? -1 : 1, err);
}
/* settings keys that change more than the output: the kind (layer <-> rms: other
   statistics, another closed-form spectrum) and the dtype (fp32 <-> fp16: x is read rounded) */
static int key_kind(ns_state *s, int i, char *err) {
  return ns_edit_cycle_kind(s, NULL, i % 2 ? -1 : 1, err);
}
static int key_dtype(ns_state *s, int i, char *err) {
  return ns_edit_cycle_dtype(s, NULL, i % 2 ? -1 : 1, err);
}
/* the screen's t: every dtype in turn, each output of a new size (fp64's twice x's) */
static int key_dtype_cycle(ns_state *s, int i, char *err) {
  (void)i;
  return ns_edit_cycle_dtype(s, NULL, 1, err);
}
/* the axes key: other statistics (a new plan, per-statistic figures and checks) */
static int key_axes(ns_state *s, int i, char *err) {
  return ns_edit_cycle_axes(s, NULL, i % 2 ? -1 : 1, err);
}
static int key_shift(ns_state *s, int i, char *err) {
  return ns_edit_set_shift(s, NULL, i % 2 ? 10 : 3, err);
}
static int key_seed(ns_state *s, int i, char *err) {
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_SEED);
  p.v.seed = 1000u + (unsigned)i;
  return ns_state_apply(s, &p, err);
}
static ns_history bench_hist; /* the screen records every key in its undo history */
static int key_cell(ns_state *s, int i, char *err) {
  return ns_edit_set_x(s, &bench_hist, 7, i % 2 ? 1.5 : -0.5, err);
}

/* Median and max of reps keys on the screen's path, in ms. */
static int bench_key(const char *what, const char *name, ns_state *s, key_fn key, int reps,
                     double budget) {
  double t[64];
  char err[NS_ERRLEN];
  ns_explore_cache c;
  ns_result r;
  memset(&r, 0, sizeof r);
  ns_explore_cache_init(&c);
  c.defer_jac = 1;
  c.exec.threads = screen_threads();
  int rc = ns_explore_update(&c, s, &r, err);
  if (reps > 64) reps = 64;
  double ts[64];
  for (int i = 0; rc == 0 && i < reps; i++) {
    double t0 = now();
    rc = key(s, i, err);
    if (rc == 0) rc = ns_explore_update(&c, s, &r, err);
    t[i] = (now() - t0) * 1e3;
    /* the screen's worker runs the job (the checks along the eigenvectors, the full J):
       the screen has settled when it lands */
    ns_jac_job *j = ns_explore_take_job(&c);
    ns_jac_job_run(j);
    ns_jac_job_apply(j, &c, &r);
    ns_jac_job_free(j);
    ts[i] = (now() - t0) * 1e3;
  }
  if (rc == 0) {
    double med = median(t, reps), meds = median(ts, reps);
    printf("key    %-12s %-22s median %8.2f ms   max %8.2f ms   settled %8.2f ms   target %3.0f ms "
           "%s\n",
           what, name, med, t[reps - 1], meds, budget, meds <= budget ? "ok" : "OVER");
  } else {
    fprintf(stderr, "bench_live: %s %s: %s\n", what, name, err);
  }
  ns_result_free(&r);
  ns_explore_cache_free(&c);
  return rc;
}

static int keys_on(const char *name, int rank, const size_t *shape, int reps) {
  ns_state s;
  char err[NS_ERRLEN];
  if (ns_state_init(&s, err) != 0) return -1;
  ns_tensor *x = ns_tensor_new(rank, shape, NS_FP32, err);
  if (!x) {
    ns_state_free(&s);
    return -1;
  }
  unsigned long long q = 88172645463325252ULL;
  float *xv = x->data;
  for (size_t i = 0; i < x->n; i++) {
    q ^= q << 13, q ^= q >> 7, q ^= q << 17;
    xv[i] = (float)((double)(q >> 11) * 0x1p-53 * 4.0 - 2.0);
  }
  ns_state_patch p; /* as the screen opens a file: x in its own dtype */
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_X) | NS_FIELDBIT(NS_F_DTYPE);
  p.v.x = x;
  p.v.dtype = NS_FP32;
  int rc = ns_state_apply(&s, &p, err);
  ns_tensor_free(x);
  if (rc == 0) {
    rc |= bench_key("view key", name, &s, key_view, 4 * reps, 16);
    rc |= bench_key("settings eps", name, &s, key_eps, reps, 100);
    /* an even count, so the keys after them find the kind and dtype they started from */
    rc |= bench_key("kind key", name, &s, key_kind, reps + reps % 2, 100);
    rc |= bench_key("dtype key", name, &s, key_dtype, reps + reps % 2, 100);
    /* whole cycles, so the keys after them find the dtype they started from */
    rc |= bench_key("dtype cycle", name, &s, key_dtype_cycle, 2 * NS_DTYPE_COUNT, 100);
    rc |= bench_key("axes key", name, &s, key_axes, reps + reps % 2, 100);
    rc |= bench_key("probe shift", name, &s, key_shift, reps, 100);
    rc |= bench_key("train seed", name, &s, key_seed, reps, 100);
    ns_history_init(&bench_hist, 1000);
    rc |= bench_key("cell edit", name, &s, key_cell, reps, 100);
    ns_history_free(&bench_hist);
  } else {
    fprintf(stderr, "bench_live: %s: %s\n", name, err);
  }
  ns_state_free(&s);
  return rc;
}

/* ---- 2b. keys on the real screen ---- */

typedef struct {
  int m;   /* the pseudo-terminal's master */
  int sfd; /* the read end of the settled pipe */
  pid_t pid;
} screen_run;

/* Waits until the explorer writes "settled" (draining its terminal output meanwhile), up
 * to limit seconds; the wall time in ms since t0, < 0 on timeout or exit. */
static double wait_settled(screen_run *sr, double t0, double limit) {
  char buf[65536];
  while (now() - t0 < limit) {
    struct pollfd pf[2] = {{sr->m, POLLIN, 0}, {sr->sfd, POLLIN, 0}};
    if (poll(pf, 2, 100) < 0) return -1;
    if (pf[0].revents & POLLIN) {
      if (read(sr->m, buf, sizeof buf) <= 0) return -1;
    } else if (pf[0].revents & (POLLHUP | POLLERR)) {
      return -1;
    }
    if (pf[1].revents & POLLIN) {
      ssize_t k = read(sr->sfd, buf, sizeof buf);
      if (k <= 0) return -1;
      return (now() - t0) * 1e3;
    }
  }
  return -1;
}

/* Starts the explorer on FILE on a 120x40 pseudo-terminal; the first frame's settled time
 * in ms, or < 0. */
static double screen_start(screen_run *sr, const char *ns, const char *home, const char *file) {
  int pp[2];
  sr->m = posix_openpt(O_RDWR | O_NOCTTY);
  if (sr->m < 0 || grantpt(sr->m) != 0 || unlockpt(sr->m) != 0 || pipe(pp) != 0) return -1;
  const char *sname = ptsname(sr->m);
  if (!sname) return -1;
  char slave[256], fdv[16];
  snprintf(slave, sizeof slave, "%s", sname);
  snprintf(fdv, sizeof fdv, "%d", pp[1]);
  double t0 = now();
  sr->pid = fork();
  if (sr->pid < 0) return -1;
  if (sr->pid == 0) {
    setsid();
    int s = open(slave, O_RDWR);
    if (s < 0) _exit(127);
    dup2(s, 0), dup2(s, 1), dup2(s, 2);
    close(sr->m);
    close(pp[0]);
    setenv("TERM", "xterm-256color", 1);
    setenv("LANG", "C.UTF-8", 1);
    setenv("LINES", "40", 1);
    setenv("COLUMNS", "120", 1);
    setenv("HOME", home, 1);
    setenv("XDG_STATE_HOME", home, 1);
    setenv("NS_TUI_SETTLED_FD", fdv, 1);
    execl(ns, ns, file, (char *)NULL);
    _exit(127);
  }
  close(pp[1]);
  sr->sfd = pp[0];
  return wait_settled(sr, t0, 30);
}

static void screen_stop(screen_run *sr) {
  char buf[4096];
  if (write(sr->m, "q", 1) != 1) kill(sr->pid, SIGTERM);
  double t0 = now();
  while (now() - t0 < 10) { /* drain until the child lets go of the terminal */
    struct pollfd pf = {sr->m, POLLIN, 0};
    if (poll(&pf, 1, 100) > 0 && read(sr->m, buf, sizeof buf) <= 0) break;
    if (waitpid(sr->pid, NULL, WNOHANG) == sr->pid) {
      sr->pid = 0;
      break;
    }
  }
  if (sr->pid > 0) {
    kill(sr->pid, SIGKILL);
    waitpid(sr->pid, NULL, 0);
  }
  close(sr->m);
  close(sr->sfd);
}

/* The keys, as typed; each is timed alone (the name says what it is). pre: typed first
 * and waited for, untimed (the digit that starts a cell edit; its Enter is timed). */
static const struct {
  const char *name, *pre, *bytes;
} screen_keys[] = {
    {"e eps /10", "", "e"},
    {"E eps x10", "", "E"},
    {"k kind rms", "", "k"},
    {"K kind layer", "", "K"},
    {"t dtype fp16", "", "t"},
    {"t dtype bf16", "", "t"},
    {"t dtype fp64", "", "t"},
    {"t dtype fp32", "", "t"},
    {"v algo", "", "v"},
    {"d ddof", "", "d"},
    {"p eps placement", "", "p"},
    {"c centering", "", "c"},
    {"w gamma", "", "w"},
    {"m mode eval", "", "m"},
    {"m mode train", "", "m"},
    {"T accumulate", "", "T"},
    {"s shift", "", "s"},
    {"r seed", "", "r"},
    {"5 Enter cell edit", "5", "\r"},
    {"u undo", "", "u"},
    {"U redo", "", "U"},
    {"A axes", "", "A"},
    {"7 Enter edit, axes", "7", "\r"},
    {"M-a axes back", "", "\033a"},
    {"Tab panel", "", "\t"},
    {"Down move", "", "\033[B"},
    {"f figure", "", "f"},
    {"f figure closes", "", "f"},
};

/* only: time just the keys whose name contains it (NULL: all) */
static int screen_keys_on(const char *ns, const char *only) {
  if (!getenv("NS_THREADS"))
    printf("screen (set NS_THREADS=2 to time a 2-core machine; this run uses every core)\n");
  char home[] = "/tmp/ns-bench-XXXXXX";
  if (!mkdtemp(home)) return -1;
  char file[300], cmd[400], err[NS_ERRLEN];
  snprintf(file, sizeof file, "%s/big4d.npy", home);
  size_t shape[4] = {64, 256, 32, 32};
  ns_tensor *x = ns_tensor_new(4, shape, NS_FP32, err);
  int rc = -1;
  if (x) {
    unsigned long long q = 88172645463325252ULL;
    float *xv = x->data;
    for (size_t i = 0; i < x->n; i++) {
      q ^= q << 13, q ^= q >> 7, q ^= q << 17;
      xv[i] = (float)((double)(q >> 11) * 0x1p-53 * 4.0 - 2.0);
    }
    size_t len = 0;
    unsigned char *buf = ns_npy_serialize(x, &len, err);
    FILE *f = buf ? fopen(file, "wb") : NULL;
    if (f && fwrite(buf, 1, len, f) == len && fclose(f) == 0)
      rc = 0;
    else if (f)
      fclose(f);
    free(buf);
    ns_tensor_free(x);
  }
  if (rc == 0) {
    enum { REPS = 3 };
    double first[REPS], t[REPS][sizeof screen_keys / sizeof *screen_keys];
    int nk = (int)(sizeof screen_keys / sizeof *screen_keys), got = 0;
    for (int rep = 0; rep < REPS; rep++) {
      screen_run sr;
      first[rep] = screen_start(&sr, ns, home, file);
      if (first[rep] < 0) {
        fprintf(stderr, "bench_live: the explorer did not settle on %s\n", file);
        screen_stop(&sr);
        rc = -1;
        break;
      }
      for (int k = 0; k < nk; k++) {
        if (only && !strstr(screen_keys[k].name, only)) {
          t[rep][k] = 0;
          continue;
        }
        size_t l = strlen(screen_keys[k].pre);
        if (l &&
            (write(sr.m, screen_keys[k].pre, l) != (ssize_t)l || wait_settled(&sr, now(), 30) < 0))
          t[rep][k] = -1;
        double t0 = now();
        l = strlen(screen_keys[k].bytes);
        t[rep][k] =
            write(sr.m, screen_keys[k].bytes, l) == (ssize_t)l ? wait_settled(&sr, t0, 30) : -1;
        /* the terminal splits Esc sequences by time: a pause keeps the next key apart */
        struct timespec d = {0, 30000000L};
        nanosleep(&d, NULL);
      }
      screen_stop(&sr);
      got++;
    }
    if (got) {
      double a[REPS];
      for (int r = 0; r < got; r++) a[r] = first[r];
      double med = median(a, got);
      printf("screen (64,256,32,32) fp32 first frame       median %8.1f ms   max %8.1f ms   target "
             "500 ms %s\n",
             med, a[got - 1], med <= 500 ? "ok" : "OVER");
      int over = 0;
      for (int k = 0; k < nk; k++) {
        for (int r = 0; r < got; r++) a[r] = t[r][k];
        med = median(a, got);
        over += med > 100 || med < 0;
        printf("screen key %-22s settled median %8.1f ms   max %8.1f ms   target 100 ms %s\n",
               screen_keys[k].name, med, a[got - 1], med >= 0 && med <= 100 ? "ok" : "OVER");
      }
      printf("screen %d of %d keys over 100 ms (NS_THREADS=%s)\n", over, nk,
             getenv("NS_THREADS") ? getenv("NS_THREADS") : "all cores");
    }
  }
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", home);
  if (system(cmd) != 0) fprintf(stderr, "bench_live: could not remove %s\n", home);
  return rc;
}

/* ---- 3. the spectrum ---- */

static int spectrum_at(size_t d) {
  char err[NS_ERRLEN];
  size_t shape[1] = {d};
  ns_tensor *x = ns_tensor_new(1, shape, NS_FP64, err);
  if (!x) return -1;
  unsigned long long q = 2463534242ULL;
  for (size_t i = 0; i < d; i++) {
    q ^= q << 13, q ^= q >> 7, q ^= q << 17;
    ns_tensor_set(x, i, (double)(q >> 11) * 0x1p-53 * 6.0 - 2.0);
  }
  ns_spec sp;
  ns_spec_default(&sp);
  ns_eig e[3];
  ns_eigcheck ck[3];
  double tc[9], tk[9], tk2[9];
  int nc = 0, nk = 0, ok = 1;
  for (int i = 0; i < 9; i++) {
    double t0 = now();
    nc = ns_spectrum_closed(x, &sp, e, 3, err);
    tc[i] = (now() - t0) * 1e3;
    t0 = now();
    nk = ns_spectrum_check(x, &sp, 0, ck, 3, err);
    tk[i] = (now() - t0) * 1e3;
    t0 = now(); /* the two maps of each central difference side by side */
    nk = ns_spectrum_check_exec(x, &sp, 0, 2, ck, 3, err);
    tk2[i] = (now() - t0) * 1e3;
  }
  for (int i = 0; i < nk; i++) ok &= ck[i].jvp_res <= ck[i].jvp_tol && ck[i].fd_res <= ck[i].fd_tol;
  /* ns.spectrum's whole call (nsl_normalize.c): the moments once, the closed form from them,
     then the checks from the same moments; wall time, on 1 thread (the Lua default) and on
     2 (NS_THREADS=2) */
  double tl[2][9];
  for (int i = 0; i < 9; i++)
    for (int t = 0; t < 2; t++) {
      double t0 = now(), mean, m2;
      ns_norm_plan p;
      int rc = ns_norm_plan_shape(1, shape, &sp, &p, err);
      if (rc == 0) rc = ns_stat_moments(x, &p, 1, &mean, &m2, err), ns_norm_plan_free(&p);
      if (rc != 0 || ns_spectrum_closed_m2(x, &sp, &m2, e, 3, 1, err) < 0 ||
          ns_spectrum_check_moments(x, &sp, 0, &mean, &m2, t + 1, ck, 3, err) < 0) {
        ns_tensor_free(x);
        return -1;
      }
      tl[t][i] = (now() - t0) * 1e3;
    }
  printf("spec   d = %-8zu closed form %8.3f ms   JVP+FD check %8.3f ms, 2 threads %8.3f ms (%d "
         "directions %s)   ns.spectrum %8.3f ms, 2 threads %8.3f ms",
         d, median(tc, 9), median(tk, 9), median(tk2, 9), nk, nc > 0 && ok ? "agree" : "DISAGREE",
         median(tl[0], 9), median(tl[1], 9));
  if (d <= NS_EXPLORE_JAC_FULL_LIMIT) { /* the worker's job: full J, LAPACK twice */
    ns_state s;
    ns_state_init(&s, err);
    ns_state_patch p;
    ns_patch_init(&p);
    p.set = NS_FIELDBIT(NS_F_X);
    p.v.x = x;
    ns_explore_cache c;
    ns_result r;
    memset(&r, 0, sizeof r);
    ns_explore_cache_init(&c);
    c.defer_jac = 1;
    double tj = -1;
    if (ns_state_apply(&s, &p, err) == 0 && ns_explore_update(&c, &s, &r, err) == 0) {
      ns_jac_job *j = ns_explore_take_job(&c);
      double t0 = now();
      ns_jac_job_run(j);
      tj = (now() - t0) * 1e3;
      ns_jac_job_apply(j, &c, &r);
      ns_jac_job_free(j);
    }
    printf("   full J + LAPACK (worker) %8.1f ms%s", tj, r.jac_done ? "" : " FAILED");
    ns_result_free(&r);
    ns_explore_cache_free(&c);
    ns_state_free(&s);
  }
  printf("\n");
  ns_tensor_free(x);
  return nc > 0 ? 0 : -1;
}

int main(int argc, char **argv) {
  int rc = 0;
  /* one OpenBLAS thread, as the normscope program sets it (src/lua/nsl_blas.c): left to
     itself OpenBLAS starts one per core, and on a busy 2-core machine its spinning threads
     made a 128-element frame with the full Jacobian take 345 ms instead of 6 ms */
  ns_blas_set_threads(1);
  ns_mem_keep_freed(); /* as the program does at start-up (core/tensor.h) */
  if (argc > 2 && strcmp(argv[2], "--screen") == 0) /* only section 2b */
    return screen_keys_on(argv[1], argc > 3 ? argv[3] : NULL) ? 1 : 0;
  static const size_t ds[] = {64, 1024, 4096, 1000000};
  if (argc > 2 && strcmp(argv[2], "--spectrum") == 0) { /* only section 3 */
    for (size_t i = 0; i < sizeof ds / sizeof *ds; i++) rc |= spectrum_at(ds[i]);
    return rc ? 1 : 0;
  }
  if (argc > 2 && strcmp(argv[2], "--keys") == 0) { /* only section 2a on the 4-D tensor */
    size_t a4k[4] = {64, 256, 32, 32};
    return keys_on("(64,256,32,32) fp32", 4, a4k, 5) ? 1 : 0;
  }
  if (argc > 1) startup(argv[1]);
  size_t m2[2] = {2000, 512}, a4[4] = {64, 256, 32, 32};
  rc |= keys_on("2000x512 fp32", 2, m2, 10);
  rc |= keys_on("(64,256,32,32) fp32", 4, a4, 5);
  if (argc > 1) rc |= screen_keys_on(argv[1], NULL);
  for (size_t i = 0; i < sizeof ds / sizeof *ds; i++) rc |= spectrum_at(ds[i]);
  return rc ? 1 : 0;
}
