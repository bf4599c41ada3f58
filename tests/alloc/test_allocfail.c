/* test_allocfail.c: every allocation of a small workload fails in turn, and each failure
 * must come back as a clean error: a message, no crash, nothing leaked.
 *
 * Linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free, so every call
 * from the statically linked normscope libraries goes through the counters below (as Lua's
 * own test suite does with its allocator). Two workloads:
 * - the core and explorer in C: .npy and CSV parse/serialize, normalize (layer, batch with
 *   running statistics, group), moments, the analytic Jacobian, both spectra, an explorer
 *   state computed and dumped;
 * - the Lua API (ns.tensor, normalize, moments, jacobian, spectrum, eigvals, save/load,
 *   ns.explorer set/dump/load/result, ns.plot), once with the k-th allocation of Lua's
 *   allocator failing (a lua_Alloc as in Lua's own tests), once with the k-th C malloc
 *   failing.
 * For every k from 1 to the number of allocations a clean run makes, the run must either
 * succeed or fail with a message, and the live allocation count must be back where it
 * started. Under the sanitizer build ASan also checks every access and, at exit, leaks. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/jacobian.h"
#include "core/moments.h"
#include "core/normalize.h"
#include "core/npy.h"
#include "core/spectrum.h"
#include "explore/explore.h"
#include "lua/nsl.h"
#include "tap.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);

static long c_count;   /* allocations so far */
static long c_fail_at; /* the one that fails (0: none) */
static long c_live;    /* blocks handed out and not freed */

static int c_fails(void) {
  return ++c_count == c_fail_at;
}

void *__wrap_malloc(size_t n) {
  if (c_fails()) return NULL;
  void *p = __real_malloc(n);
  if (p) c_live++;
  return p;
}

void *__wrap_calloc(size_t n, size_t m) {
  if (c_fails()) return NULL;
  void *p = __real_calloc(n, m);
  if (p) c_live++;
  return p;
}

void *__wrap_realloc(void *p, size_t n) {
  if (c_fails()) return NULL;
  void *q = __real_realloc(p, n);
  if (q && !p) c_live++;
  return q;
}

void __wrap_free(void *p) {
  if (p) c_live--;
  __real_free(p);
}

/* ------------------------------------------------------------------ the C workload */

#define FAIL(...)                                                                                  \
  do {                                                                                             \
    snprintf(err, NS_ERRLEN, __VA_ARGS__);                                                         \
    goto out;                                                                                      \
  } while (0)

/* 0, or -1 with err; frees everything it made either way. */
static int core_workload(char *err) {
  int rc = -1;
  static const double xv[24] = {1, 2, 3, 4, 2, 3,  5, 7, -1, 0, 1, 8,
                                4, 4, 2, 1, 9, -3, 2, 2, 0,  5, 1, 6};
  size_t shape[3] = {2, 3, 4};
  ns_tensor *x = NULL, *u = NULL, *c = NULL;
  unsigned char *buf = NULL;
  char *text = NULL, *dump = NULL;
  double *J = NULL;
  ns_eig eig[32];
  ns_norm_result r1, r2, r3;
  ns_running run;
  int run_ok = 0, st_ok = 0;
  ns_state st;
  ns_result res;
  memset(&r1, 0, sizeof r1);
  memset(&r2, 0, sizeof r2);
  memset(&r3, 0, sizeof r3);
  memset(&res, 0, sizeof res);
  err[0] = '\0';

  if (!(x = ns_tensor_from(3, shape, NS_FP32, xv, err))) goto out;
  size_t len;
  if (!(buf = ns_npy_serialize(x, &len, err))) goto out;
  if (!(u = ns_npy_parse(buf, len, err))) goto out;
  size_t s2[2] = {6, 4};
  ns_tensor *m = ns_tensor_from(2, s2, NS_FP64, xv, err);
  if (!m) goto out;
  text = ns_csv_serialize(m, err);
  ns_tensor_free(m);
  if (!text) goto out;
  if (!(c = ns_csv_parse(text, strlen(text), err))) goto out;

  ns_spec sp;
  ns_spec_default(&sp);
  if (ns_normalize(x, &sp, &r1, err) != 0) goto out;
  if (ns_running_init(&run, 0.1, 0, 0, 0, err) != 0) goto out;
  run_ok = 1;
  sp.kind = NS_KIND_BATCH;
  sp.running = &run;
  if (ns_normalize(x, &sp, &r2, err) != 0) goto out;
  ns_spec_default(&sp);
  sp.kind = NS_KIND_GROUP;
  sp.groups = 3;
  if (ns_normalize(x, &sp, &r3, err) != 0) goto out;

  ns_moments mo;
  ns_moments_compute(xv, 24, 1, NS_FP16, NS_FP32, NS_ALGO_WELFORD, &mo);

  ns_spec_default(&sp);
  size_t n = x->n;
  if (!(J = malloc(n * n * sizeof *J))) FAIL("out of memory for J");
  if (ns_jacobian_analytic(x, &sp, J, err) != 0) goto out;
  if (ns_spectrum_closed(x, &sp, eig, 32, err) < 0) goto out;
  if (ns_spectrum_numeric(x, &sp, J, eig, 32, err) < 0) goto out;

  if (ns_state_init(&st, err) != 0) goto out;
  st_ok = 1;
  if (ns_explore_compute(&st, &res, err) != 0) goto out;
  if (!(dump = ns_state_dump(&st, NS_DUMP_INLINE_MAX, err))) goto out;
  rc = 0;
out:
  ns_result_free(&res);
  if (st_ok) ns_state_free(&st);
  free(dump);
  free(J);
  ns_norm_result_free(&r3);
  ns_norm_result_free(&r2);
  ns_norm_result_free(&r1);
  if (run_ok) ns_running_free(&run);
  ns_tensor_free(c);
  free(text);
  ns_tensor_free(u);
  free(buf);
  ns_tensor_free(x);
  return rc;
}

/* ------------------------------------------------------------------ the Lua workload */

static long l_count, l_fail_at;

/* Lua's allocator, failing its l_fail_at-th allocation or growth (frees never fail).
 * Lua answers a failed allocation with an emergency collection and the same request again:
 * that retry fails too, so the failure reaches the caller as a memory error, while the
 * requests after it succeed (finalizers can still run, as when memory comes back). */
static const void *l_failed_p;
static size_t l_failed_o, l_failed_n;
static int l_retry_pending;

static void *l_alloc(void *ud, void *p, size_t osize, size_t nsize) {
  (void)ud;
  if (nsize == 0) {
    __real_free(p);
    return NULL;
  }
  if (!p || nsize > osize) {
    if (l_retry_pending && p == l_failed_p && osize == l_failed_o && nsize == l_failed_n) {
      l_retry_pending = 0;
      return NULL;
    }
    l_retry_pending = 0;
    if (++l_count == l_fail_at) {
      l_failed_p = p;
      l_failed_o = osize;
      l_failed_n = nsize;
      l_retry_pending = 1;
      return NULL;
    }
  }
  return __real_realloc(p, nsize);
}

static const char lua_workload[] =
    "local tmp = ...\n"
    "local x = ns.tensor({{1, 2, 3, 4}, {2, 3, 5, 7}})\n"
    "local y, st = ns.normalize(x, {kind = 'layer'})\n"
    "local r = ns.running{momentum = 0.1}\n"
    "local y2 = ns.normalize(x, {kind = 'batch', running = r})\n"
    "local m = ns.moments(x, {dtype = 'fp32'})\n"
    "local J = ns.jacobian(x, {kind = 'layer'})\n"
    "local sp = ns.spectrum(x, {kind = 'rms'})\n"
    "local ev = ns.eigvals(J)\n"
    "ns.save(tmp .. '.npy', x:astype('fp16'))\n"
    "local z = ns.load(tmp .. '.npy')\n"
    "local e = ns.explorer{kind = 'rms'}\n"
    "e:set{eps = 0.5, gamma = {1, 2, 3, 4}, x = z:astype('fp64')}\n"
    "e:save(tmp .. '.lua')\n"
    "local e2 = ns.explorer()\n"
    "e2:load(tmp .. '.lua')\n"
    "assert(e2:dump() == e:dump())\n"
    "local res = e2:result()\n"
    "ns.save(tmp .. '.csv', x)\n"
    "local w = ns.load(tmp .. '.csv') + ns.rng(1):normal(0, 1, {2, 4})\n"
    "local s = w:sum({2}):flat()[1] + (x * 2 - 1):tanh():mean()\n"
    "local p = ns.plot.lines({{1, 2, 3}}, {width = 20, height = 5})\n"
    "return tostring(y) .. #ev .. res.jacobian.rank\n";

/* Lua reports a finalizer it could not run (no memory to call it) as a warning "error in
 * __gc" and never runs it again, so the C memory that finalizer would free is lost: Lua's
 * limit, not ours. Runs where that happened are counted apart. */
static long gc_dropped;
static int warn_cont;

static void warn_count(void *ud, const char *msg, int tocont) {
  (void)ud;
  if (!warn_cont && strncmp(msg, "error in ", 9) == 0) gc_dropped++; /* "__gc" follows */
  if (getenv("ALLOCFAIL_LUA")) fprintf(stderr, "%s%s", msg, tocont ? "" : "\n");
  warn_cont = tocont;
}

/* Protected body: the libraries, the module as `ns`, then the workload with the scratch
 * path (a light userdata at 1). Everything that may allocate runs in here. */
static int run_all(lua_State *L) {
  const char *tmp = lua_touserdata(L, 1);
  luaL_openlibs(L);
  luaL_requiref(L, "normscope", luaopen_normscope, 0);
  lua_setglobal(L, "ns");
  if (luaL_loadstring(L, lua_workload) != LUA_OK) return lua_error(L);
  lua_pushstring(L, tmp);
  lua_call(L, 1, 1);
  return 1;
}

/* 0 on success, 1 on a Lua error with a message in msg; never more. */
static int lua_run(const char *tmp, char *msg, size_t cap) {
  msg[0] = '\0';
  lua_State *L = lua_newstate(l_alloc, NULL);
  if (!L) {
    snprintf(msg, cap, "no state");
    return 1;
  }
  lua_setwarnf(L, warn_count, NULL);
  lua_pushcfunction(L, run_all); /* a light C function: no allocation */
  lua_pushlightuserdata(L, (void *)tmp);
  int st = lua_pcall(L, 1, 1, 0);
  if (st != LUA_OK) {
    const char *m = lua_tostring(L, -1);
    snprintf(msg, cap, "%s", m ? m : "(an error object that is not a string)");
  }
  l_fail_at = 0;
  lua_close(L);
  return st != LUA_OK;
}

/* What a run with one failing allocation came to (bits of the child's exit status). */
enum { RUN_DONE = 64, RUN_FAILED = 1, RUN_NO_MESSAGE = 2, RUN_LEAKED = 4, RUN_GC_DROPPED = 8 };

static const char *scratch;

/* One run of workload w (0 core, 1 Lua) with allocation k of kind (0 C malloc, 1 Lua's
 * allocator) failing, in a child process: a crash stays a finding about this k, and in the
 * sanitizer build LeakSanitizer checks each run on its own when the child exits (a report
 * turns the status into ASan's, 1: without RUN_DONE). A run where Lua dropped a finalizer ends with
 * _exit, past that check: what the finalizer held is lost by Lua's design, not by ours. */
static int run_child(int w, int kind, long k, char *msg, size_t cap) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    long base = c_live;
    l_count = c_count = 0;
    l_retry_pending = 0;
    c_fail_at = kind == 0 ? k : 0;
    l_fail_at = kind == 1 ? k : 0;
    gc_dropped = 0;
    char err[NS_ERRLEN] = "";
    int rc = w == 0 ? core_workload(err) : lua_run(scratch, err, sizeof err);
    c_fail_at = l_fail_at = 0;
    int st = (rc ? RUN_FAILED : 0) | (rc && !err[0] ? RUN_NO_MESSAGE : 0) |
             (c_live != base ? RUN_LEAKED : 0) | (gc_dropped ? RUN_GC_DROPPED : 0);
    if ((st & (RUN_NO_MESSAGE | RUN_LEAKED)) && !gc_dropped) fprintf(stderr, "# %s\n", err);
    if (gc_dropped) _exit(RUN_DONE | st);
    exit(RUN_DONE | st);
  }
  int status;
  if (waitpid(pid, &status, 0) != pid) return -1;
  snprintf(msg, cap, "%s", "");
  if (WIFSIGNALED(status)) return 256 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

/* Every k of 1..n: counts and TAP lines. */
static void sweep(int w, int kind, long n, const char *what) {
  long failed = 0, nomsg = 0, leaked = 0, crashed = 0, dropped = 0;
  char msg[8];
  for (long k = 1; k <= n; k++) {
    int st = run_child(w, kind, k, msg, sizeof msg);
    if (st < 0 || st >= 256) {
      if (crashed++ < 5)
        tap_diag("%s: allocation %ld failing: crashed (signal %d)", what, k, st - 256);
      continue;
    }
    if (!(st & RUN_DONE)) { /* the sanitizer's status: it found something at exit */
      if (leaked++ < 5)
        tap_diag("%s: allocation %ld failing: a sanitizer report at exit (status %d)", what, k, st);
      continue;
    }
    if (st & RUN_FAILED) failed++;
    if ((st & RUN_NO_MESSAGE) && nomsg++ < 5)
      tap_diag("%s: allocation %ld failing: an error without a message", what, k);
    if (st & RUN_GC_DROPPED) {
      dropped++;
    } else if ((st & RUN_LEAKED) && leaked++ < 5) {
      tap_diag("%s: allocation %ld failing: C blocks left behind", what, k);
    }
  }
  tap_ok(crashed == 0 && nomsg == 0,
         "%s: each of the %ld allocations failing gives a clean error with a message (%ld "
         "runs failed, %ld crashed, %ld without a message)",
         what, n, failed, crashed, nomsg);
  tap_ok(leaked == 0,
         "%s: and leaves no C block behind (%ld runs leaked; in %ld more Lua had no memory "
         "to call a finalizer)",
         what, leaked, dropped);
}

int main(void) {
  /* ALLOCFAIL_LUA=K runs the Lua workload once with Lua's allocation K failing, to find a
   * leak it reported with valgrind or ASan */
  const char *one = getenv("ALLOCFAIL_LUA");
  if (one) {
    char m[512];
    l_fail_at = atol(one);
    int r = lua_run("/tmp/nsallocfail-one", m, sizeof m);
    printf("# %d %s\n", r, m);
    return 0;
  }
  char err[NS_ERRLEN];
  char tmp[] = "/tmp/nsallocXXXXXX";
  int fd = mkstemp(tmp);
  if (fd >= 0) close(fd);
  scratch = tmp;

  /* clean runs count the allocations */
  long base = c_live;
  c_count = 0;
  int rc = core_workload(err);
  long total = c_count;
  tap_ok(rc == 0 && c_live == base, "core: a clean run succeeds (%ld allocations): %s", total,
         rc ? err : "ok");
  char msg[512];
  l_count = c_count = 0;
  rc = lua_run(tmp, msg, sizeof msg);
  long ltotal = l_count, ctotal = c_count;
  tap_ok(rc == 0 && c_live == base,
         "Lua: a clean run succeeds (%ld Lua allocations, %ld C allocations) %s", ltotal, ctotal,
         msg);

  sweep(0, 0, total, "core, C malloc");
  sweep(1, 1, ltotal, "Lua, Lua's allocator");
  sweep(1, 0, ctotal, "Lua, C malloc");

  char p[64];
  snprintf(p, sizeof p, "%s.npy", tmp);
  unlink(p);
  snprintf(p, sizeof p, "%s.csv", tmp);
  unlink(p);
  snprintf(p, sizeof p, "%s.lua", tmp);
  unlink(p);
  unlink(tmp);
  return tap_done();
}
