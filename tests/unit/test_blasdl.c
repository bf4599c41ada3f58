/* test_blasdl.c: LAPACKE and CBLAS are opened at first use (src/core/blasdl.c).
 *
 * The process starts without them mapped (it would fail if the build linked them again);
 * the first eigenvalue call maps liblapacke and gives the closed-form eigenvalues; the first
 * matmul maps the BLAS. Children forked before any load check the other paths: eight
 * threads racing for the first load, and sonames that do not exist (a clean error, the same
 * on every call, never a crash). */
#include "core/blasdl.h"
#include "core/err.h"
#include "core/linalg.h"
#include "core/tensor.h"
#include "core/tensor_ops.h"
#include "tap.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* 1 if a mapping of this process names a file containing needle. */
static int mapped(const char *needle) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) return -1;
  char line[1024];
  int found = 0;
  while (fgets(line, sizeof line, f))
    if (strstr(line, needle)) found = 1;
  fclose(f);
  return found;
}

/* OpenBLAS's own thread count, seen through the loaded libblas.so.3; -1 for another BLAS. */
static int openblas_threads(void) {
  void *h = dlopen(NS_CBLAS_SONAME, RTLD_NOW | RTLD_NOLOAD);
  if (!h) return -2;
  void *p = dlsym(h, "openblas_get_num_threads");
  int (*f)(void);
  memcpy(&f, &p, sizeof f);
  int n = p ? f() : -1;
  dlclose(h);
  return n;
}

/* Eigenvalues of [[2,1],[1,2]] are 1 and 3; singular values of [[3,0],[4,5]] are
 * 3*sqrt(5) and sqrt(5). */
static int eig_ok(char *err) {
  const double A[4] = {2, 1, 1, 2};
  double w[2];
  if (ns_eig_sym(A, 2, w, NULL, err)) return 0;
  return fabs(w[0] - 1) < 1e-14 && fabs(w[1] - 3) < 1e-14;
}

static void *race(void *arg) {
  char err[NS_ERRLEN];
  const double A[4] = {3, 0, 4, 5};
  double s[2];
  int ok = ns_svdvals(A, 2, 2, s, err) == 0 && fabs(s[0] - 3 * sqrt(5.0)) < 1e-13 &&
           fabs(s[1] - sqrt(5.0)) < 1e-13;
  *(int *)arg = ok;
  return NULL;
}

/* Runs body in a child forked before any load; its exit status is the result (0 ok). */
static int in_child(int (*body)(void)) {
  fflush(stdout);
  pid_t p = fork();
  if (p < 0) return -1;
  if (p == 0) _exit(body());
  int st;
  if (waitpid(p, &st, 0) != p) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static int child_race(void) {
  pthread_t t[8];
  int ok[8] = {0};
  for (int i = 0; i < 8; i++)
    if (pthread_create(&t[i], NULL, race, &ok[i])) return 2;
  int bad = 0;
  for (int i = 0; i < 8; i++) {
    pthread_join(t[i], NULL);
    bad += !ok[i];
  }
  return bad ? 1 : 0;
}

static int child_missing(void) {
  char err[NS_ERRLEN] = "", err2[NS_ERRLEN] = "";
  if (ns_blas_set_sonames("libns-no-such-lapacke.so.3", "libns-no-such-blas.so.3", err)) return 2;
  if (eig_ok(err)) return 3;
  if (!strstr(err, "eig_sym: cannot load libns-no-such-lapacke.so.3: ")) {
    printf("# %s\n", err);
    return 4;
  }
  const double A[4] = {3, 0, 4, 5};
  double s[2];
  if (ns_svdvals(A, 2, 2, s, err2) == 0) return 5;
  if (!strstr(err2, "svdvals: cannot load libns-no-such-lapacke.so.3: ")) return 6;
  size_t sh[2] = {2, 2};
  ns_tensor *a = ns_tensor_from(2, sh, NS_FP64, A, err);
  if (!a) return 7;
  ns_tensor *y = ns_op_matmul(a, a, err);
  ns_tensor_free(a);
  if (y) return 8;
  if (!strstr(err, "matmul: cannot load libns-no-such-blas.so.3: ")) return 9;
  /* too late now: the failed load is final */
  if (ns_blas_set_sonames(NS_LAPACKE_SONAME, NULL, err) == 0) return 10;
  return 0;
}

int main(void) {
  char err[NS_ERRLEN] = "";
  int before = mapped("/liblapacke") + mapped("/libblas") + mapped("/libopenblas");
  tap_ok(before == 0, "no LAPACKE or BLAS mapped before the first call (%d)", before);

  tap_ok(in_child(child_race) == 0, "eight threads racing for the first load all get svdvals");
  tap_ok(in_child(child_missing) == 0,
         "missing sonames: clean errors from eig_sym, svdvals and matmul, the same each time");

  tap_ok(ns_blas_set_sonames("", NULL, err) == -1 && strstr(err, "empty"),
         "an empty soname is refused: %s", err);
  ns_blas_set_threads(1); /* before the load: applied when OpenBLAS loads */
  err[0] = '\0';
  tap_ok(eig_ok(err), "eig_sym after the lazy load: eigenvalues 1 and 3 %s", err);
  tap_ok(mapped("/liblapacke") == 1, "liblapacke is mapped after the first eigenvalue call");
  tap_ok(ns_blas_set_sonames("libother.so", NULL, err) == -1 && strstr(err, "already loaded"),
         "a soname change after the load is refused: %s", err);
  tap_ok(ns_lapack_get("x", err) == ns_lapack_get("y", err), "one table for every caller");

  err[0] = '\0';
  const double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12};
  size_t sa[2] = {2, 3}, sb[2] = {3, 2};
  ns_tensor *ta = ns_tensor_from(2, sa, NS_FP32, a, err),
            *tb = ns_tensor_from(2, sb, NS_FP32, b, err);
  ns_tensor *y = ta && tb ? ns_op_matmul(ta, tb, err) : NULL;
  /* [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]] = [[58,64],[139,154]] */
  tap_ok(y && ns_tensor_get(y, 0) == 58 && ns_tensor_get(y, 1) == 64 &&
             ns_tensor_get(y, 2) == 139 && ns_tensor_get(y, 3) == 154,
         "sgemm through the loaded table: the hand-computed product %s", err);
  tap_ok(mapped("/libblas") == 1, "the BLAS is mapped after the first matmul");
  int t1 = openblas_threads();
  tap_ok(t1 == 1 || t1 == -1, "the thread count asked before the load was applied (%d)", t1);
  ns_blas_set_threads(2); /* after the load: applied at once */
  int t2 = openblas_threads();
  tap_ok(t2 == 2 || t2 == -1, "a thread count asked after the load is applied at once (%d)", t2);
  if (t1 == -1) tap_diag("not OpenBLAS behind %s: no threads to check", NS_CBLAS_SONAME);
  ns_blas_set_threads(0);
  ns_tensor_free(ta);
  ns_tensor_free(tb);
  ns_tensor_free(y);
  return tap_done();
}
