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
 *   ns.explorer set/dump/load/result), once with Lua's allocator (a lua_Alloc like the
 *   one of Lua's own tests) failing from its k-th allocation on, once with the k-th C
 *   malloc failing.
 * For every k from 1 to the number of allocations a clean run makes, the run must either
 * succeed or fail with a message, and the live allocation count must be back where it
 * started. Under the sanitizer build ASan also checks every access and, at exit, leaks. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Lua's allocator: from its l_fail_at-th allocation or growth on, every one fails (frees
 * never do). Failing only the k-th would test little: Lua answers a failed allocation
 * with a full collection and a second try, which then succeeds. */
static void *l_alloc(void *ud, void *p, size_t osize, size_t nsize) {
  (void)ud;
  if (nsize == 0) {
    __real_free(p);
    return NULL;
  }
  if ((!p || nsize > osize) && ++l_count >= l_fail_at && l_fail_at > 0) return NULL;
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
  l_fail_at = 0; /* memory is back: lua_close runs the finalizers that free C memory */
  lua_close(L);
  return st != LUA_OK;
}

int main(void) {
  char err[NS_ERRLEN];
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

  /* the C workload */
  long base = c_live;
  c_count = 0;
  c_fail_at = 0;
  int rc = core_workload(err);
  long total = c_count;
  tap_ok(rc == 0 && c_live == base, "core: a clean run succeeds (%ld allocations): %s", total,
         rc ? err : "ok");
  long bad_msg = 0, leaked = 0, failed = 0;
  for (long k = 1; k <= total; k++) {
    c_count = 0;
    c_fail_at = k;
    err[0] = '\0';
    rc = core_workload(err);
    if (rc != 0) failed++;
    if (rc != 0 && !err[0]) {
      if (bad_msg++ < 5) tap_diag("core: allocation %ld failed without a message", k);
    }
    if (c_live != base) {
      if (leaked++ < 5)
        tap_diag("core: allocation %ld failed and %ld blocks leaked", k, c_live - base);
      base = c_live;
    }
  }
  c_fail_at = 0;
  tap_ok(bad_msg == 0,
         "core: each of the %ld allocations failing gives an error with a message (%ld "
         "runs failed, %ld without a message)",
         total, failed, bad_msg);
  tap_ok(leaked == 0, "core: and frees everything (%ld runs leaked)", leaked);

  /* the Lua workload */
  char tmp[] = "/tmp/nsallocXXXXXX";
  int fd = mkstemp(tmp);
  if (fd >= 0) close(fd);
  char msg[512];
  base = c_live;
  l_count = 0;
  l_fail_at = 0;
  c_count = 0;
  rc = lua_run(tmp, msg, sizeof msg);
  long ltotal = l_count, ctotal = c_count;
  tap_ok(rc == 0 && c_live == base,
         "Lua: a clean run succeeds (%ld Lua allocations, %ld C allocations) %s", ltotal, ctotal,
         msg);
  for (int pass = 0; pass < 2; pass++) {
    const char *what = pass == 0 ? "Lua allocator" : "C malloc";
    long n = pass == 0 ? ltotal : ctotal;
    bad_msg = leaked = failed = 0;
    long dropped = 0;
    for (long k = 1; k <= n; k++) {
      l_count = c_count = 0;
      l_fail_at = pass == 0 ? k : 0;
      c_fail_at = pass == 1 ? k : 0;
      gc_dropped = 0;
      rc = lua_run(tmp, msg, sizeof msg);
      if (rc) failed++;
      if (rc && !msg[0] && bad_msg++ < 5) tap_diag("%s: allocation %ld: an empty message", what, k);
      if (gc_dropped) { /* Lua lost finalizers: what they held is gone, not our leak */
        dropped++;
        base = c_live;
      } else if (c_live != base) {
        if (leaked++ < 5)
          tap_diag("%s: allocation %ld failed (%s) and %ld C blocks leaked", what, k, msg,
                   c_live - base);
        base = c_live;
      }
    }
    l_fail_at = c_fail_at = 0;
    tap_ok(bad_msg == 0,
           "Lua, %s: each of the %ld allocations failing is a Lua error with a "
           "message (%ld runs failed)",
           what, n, failed);
    tap_ok(leaked == 0,
           "Lua, %s: and no C block outlives lua_close (%ld runs leaked; in %ld more Lua "
           "had no memory to run a finalizer)",
           what, leaked, dropped);
  }
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
