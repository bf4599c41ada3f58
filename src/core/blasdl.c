/* blasdl.c: LAPACKE and CBLAS opened at first use (see blasdl.h).
 *
 * One pthread_once per library fills its table or its error message; a mutex guards the
 * two settings (the sonames, the thread count) and the OpenBLAS thread setter found in
 * whichever library loaded first (liblapacke pulls in the BLAS through liblapack, so
 * either handle can see openblas_set_num_threads). These statics are the core's one
 * documented exception to "no globals". */
#include "core/blasdl.h"
#include "core/err.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define SONAME_MAX 256

typedef void (*set_threads_fn)(int);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char lapacke_name[SONAME_MAX] = NS_LAPACKE_SONAME;
static char cblas_name[SONAME_MAX] = NS_CBLAS_SONAME;
static int want_threads;           /* 0: the library's own choice */
static set_threads_fn set_threads; /* OpenBLAS's setter once a library is loaded */
static int lapacke_tried, cblas_tried;

static pthread_once_t lapacke_once = PTHREAD_ONCE_INIT, cblas_once = PTHREAD_ONCE_INIT;
static ns_lapack lapacke_table;
static ns_cblas cblas_table;
static int lapacke_ok, cblas_ok;
static char lapacke_err[NS_ERRLEN], cblas_err[NS_ERRLEN];

/* dlerror's text, or a fallback when it has none. */
static const char *dl_reason(void) {
  const char *e = dlerror();
  return e ? e : "unknown dynamic loader error";
}

/* Opens name; NULL with "cannot load NAME: reason" in msg. */
static void *open_lib(const char *name, char *msg) {
  dlerror();
  void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!h) snprintf(msg, NS_ERRLEN, "cannot load %s: %s", name, dl_reason());
  return h;
}

/* The address of sym in h; NULL with a message in msg. */
static void *need_sym(void *h, const char *name, const char *sym, char *msg) {
  dlerror();
  void *p = dlsym(h, sym);
  if (!p) snprintf(msg, NS_ERRLEN, "cannot load %s: no %s in it (%s)", name, sym, dl_reason());
  return p;
}

/* After a successful load: remember OpenBLAS's thread setter and apply a pending count. */
static void adopt_threads(void *h) {
  dlerror();
  set_threads_fn f;
  void *p = dlsym(h, "openblas_set_num_threads");
  /* POSIX's sanctioned conversion of a data pointer to a function pointer */
  memcpy(&f, &p, sizeof f);
  pthread_mutex_lock(&lock);
  if (p && !set_threads) set_threads = f;
  if (set_threads && want_threads > 0) set_threads(want_threads);
  pthread_mutex_unlock(&lock);
}

#define RESOLVE(h, name, field, sym, msg)                                                          \
  do {                                                                                             \
    void *p_ = need_sym(h, name, sym, msg);                                                        \
    if (!p_) return -1;                                                                            \
    memcpy(&(field), &p_, sizeof(field));                                                          \
  } while (0)

static int resolve_lapacke(void *h, const char *name, char *msg) {
  RESOLVE(h, name, lapacke_table.dsyevr, "LAPACKE_dsyevr", msg);
  RESOLVE(h, name, lapacke_table.dgeev, "LAPACKE_dgeev", msg);
  RESOLVE(h, name, lapacke_table.dgesdd, "LAPACKE_dgesdd", msg);
  return 0;
}

static int resolve_cblas(void *h, const char *name, char *msg) {
  RESOLVE(h, name, cblas_table.dgemm, "cblas_dgemm", msg);
  RESOLVE(h, name, cblas_table.sgemm, "cblas_sgemm", msg);
  return 0;
}

static void load_lapacke(void) {
  char name[SONAME_MAX];
  pthread_mutex_lock(&lock);
  lapacke_tried = 1;
  memcpy(name, lapacke_name, sizeof name);
  pthread_mutex_unlock(&lock);
  void *h = open_lib(name, lapacke_err);
  if (!h) return;
  if (resolve_lapacke(h, name, lapacke_err)) return; /* the handle stays: harmless */
  adopt_threads(h);
  lapacke_ok = 1;
}

static void load_cblas(void) {
  char name[SONAME_MAX];
  pthread_mutex_lock(&lock);
  cblas_tried = 1;
  memcpy(name, cblas_name, sizeof name);
  pthread_mutex_unlock(&lock);
  void *h = open_lib(name, cblas_err);
  if (!h) return;
  if (resolve_cblas(h, name, cblas_err)) return;
  adopt_threads(h);
  cblas_ok = 1;
}

const ns_lapack *ns_lapack_get(const char *fn, char *err) {
  pthread_once(&lapacke_once, load_lapacke);
  if (lapacke_ok) return &lapacke_table;
  ns_seterr(err, "%s: %s", fn ? fn : "lapack", lapacke_err);
  return NULL;
}

const ns_cblas *ns_cblas_get(const char *fn, char *err) {
  pthread_once(&cblas_once, load_cblas);
  if (cblas_ok) return &cblas_table;
  ns_seterr(err, "%s: %s", fn ? fn : "blas", cblas_err);
  return NULL;
}

void ns_blas_set_threads(int n) {
  pthread_mutex_lock(&lock);
  want_threads = n > 0 ? n : 0;
  if (set_threads && want_threads > 0) set_threads(want_threads);
  pthread_mutex_unlock(&lock);
}

static int check_name(const char *what, const char *s, char *err) {
  if (!s) return 0;
  if (!*s || strlen(s) >= SONAME_MAX) {
    ns_seterr(err, "blas_set_sonames: the %s soname is %s", what,
              *s ? "longer than 255 bytes" : "empty");
    return -1;
  }
  return 0;
}

int ns_blas_set_sonames(const char *lapacke, const char *cblas, char *err) {
  if (check_name("LAPACKE", lapacke, err) || check_name("CBLAS", cblas, err)) return -1;
  int rc = 0;
  pthread_mutex_lock(&lock);
  if ((lapacke && lapacke_tried) || (cblas && cblas_tried)) {
    ns_seterr(err, "blas_set_sonames: %s is already loaded (or its load failed)",
              lapacke && lapacke_tried ? lapacke_name : cblas_name);
    rc = -1;
  } else {
    if (lapacke) snprintf(lapacke_name, sizeof lapacke_name, "%s", lapacke);
    if (cblas) snprintf(cblas_name, sizeof cblas_name, "%s", cblas);
  }
  pthread_mutex_unlock(&lock);
  return rc;
}
