/* blasdl.h: LAPACKE and CBLAS loaded at first use (dlopen), not when the program starts.
 *
 * Loading OpenBLAS costs milliseconds (its constructor starts a thread pool), which would be
 * most of `normscope --version`. So no binary links the libraries: the first call that needs
 * one opens its runtime soname (liblapacke.so.3, libblas.so.3; Debian's alternatives choose
 * OpenBLAS or the reference implementation behind them) and resolves the few functions the
 * core uses. The tables are filled once per process under pthread_once, so any thread may
 * ask first (the explorer's Jacobian worker calls LAPACK). A library that cannot be loaded is
 * an error message through err, the same one on every later call, never a crash.
 *
 * This file holds the core's one exception to "no globals" besides the element cap of
 * tensor.h: the resolved function tables and the two settings below. The process owns them;
 * nothing is ever unloaded. Typical call:
 *   const ns_lapack *lk = ns_lapack_get("eig_sym", err);
 *   if (!lk) return -1;               // "eig_sym: cannot load liblapacke.so.3: ..."
 *   info = lk->dsyevr(LAPACK_COL_MAJOR, ...);
 */
#ifndef NS_BLASDL_H
#define NS_BLASDL_H

#include <cblas.h>
#include <lapacke.h>

/* The default sonames (ns_blas_set_sonames replaces them). */
#define NS_LAPACKE_SONAME "liblapacke.so.3"
#define NS_CBLAS_SONAME "libblas.so.3"

/* The prototypes come from the headers, so a mismatch is a compile error. */
typedef struct {
  __typeof__(LAPACKE_dsyevr) *dsyevr;
  __typeof__(LAPACKE_dgeev) *dgeev;
  __typeof__(LAPACKE_dgesdd) *dgesdd;
} ns_lapack;

typedef struct {
  __typeof__(cblas_dgemm) *dgemm;
  __typeof__(cblas_sgemm) *sgemm;
} ns_cblas;

/* The loaded LAPACKE functions, or NULL with "fn: cannot load SONAME: reason" in err. */
const ns_lapack *ns_lapack_get(const char *fn, char *err);
/* The loaded CBLAS functions, or NULL with "fn: cannot load SONAME: reason" in err. */
const ns_cblas *ns_cblas_get(const char *fn, char *err);

/* Threads of OpenBLAS (the reference BLAS has none: then a no-op). n >= 1 is applied now to
 * a library already loaded and otherwise as soon as one loads; n <= 0 leaves the library's
 * own choice (OPENBLAS_NUM_THREADS or the number of cores). Any thread may call it. */
void ns_blas_set_threads(int n);

/* Other sonames for the two libraries (NULL keeps the current one); for tests and odd
 * installations. Takes effect only before the library's first load: returns -1 with a
 * message in err once it is loaded (or its load failed), or when a name is empty or longer
 * than 255 bytes. */
int ns_blas_set_sonames(const char *lapacke, const char *cblas, char *err);

#endif
