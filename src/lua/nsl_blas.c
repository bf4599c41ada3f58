/* nsl_blas.c: the process's settings for the lazily loaded BLAS and LAPACKE (core/blasdl.h).
 *
 * The core reads no environment; this is where these variables reach it, once per Lua state
 * made (luaopen_normscope), before any linear algebra runs:
 *   NS_LAPACK_SONAME, NS_BLAS_SONAME   other sonames to open (tests use a missing one to see
 *                                      the error path); ignored once a library is loaded
 *   OPENBLAS_NUM_THREADS               OpenBLAS reads it itself: then we set nothing
 *   NS_THREADS                         otherwise OpenBLAS's thread count (1..64)
 * and with neither, one OpenBLAS thread. Measured on the 2-core machine (farm-bench, pair
 * medians): `normscope verify` 10.1 s with one thread vs 12.3 s with two, chapter 004's
 * ns.stack{norm = "batch"} 0.68 s vs 0.86 s wall. The small matrices normscope multiplies
 * gain nothing from more threads, and idle OpenBLAS threads spin against the explorer. */
#include "core/blasdl.h"
#include "lua/nsl.h"

#include <stdlib.h>

void nsl_blas_from_env(void) {
  /* A second Lua state in the same process finds the libraries loaded: its names are
   * refused and the first ones stay, which is the only consistent outcome. */
  ns_blas_set_sonames(getenv("NS_LAPACK_SONAME"), getenv("NS_BLAS_SONAME"), NULL);
  const char *v = getenv("OPENBLAS_NUM_THREADS");
  if (v && *v) return;
  int t = 1;
  (void)nsl_threads_from_env(&t, NULL);
  ns_blas_set_threads(t);
}
