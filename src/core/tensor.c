/* tensor.c: allocation, typed storage and element access of dense tensors. */
#define _GNU_SOURCE 1 /* madvise's MADV_HUGEPAGE, mremap's MREMAP_FIXED (Linux) beside POSIX */
#include "core/tensor.h"
#include "core/half.h"
#include "core/round.h"
#include "core/err.h"

#include <ctype.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Large tensors get mappings of their own (big_alloc, below), except under AddressSanitizer,
 * which checks malloc's blocks and not a program's mappings. */
#if defined(__SANITIZE_ADDRESS__)
#define NS_OWN_MAPPINGS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NS_OWN_MAPPINGS 0
#endif
#endif
#if !defined(NS_OWN_MAPPINGS) && defined(MAP_ANONYMOUS) && defined(MADV_HUGEPAGE)
#define NS_OWN_MAPPINGS 1
#endif
#ifndef NS_OWN_MAPPINGS
#define NS_OWN_MAPPINGS 0
#endif

int ns_shape_check(int rank, const size_t *shape, char *err) {
  if (rank < 1 || rank > NS_MAXRANK) {
    ns_seterr(err, "rank %d is not supported (tensors have rank 1 to %d)", rank, NS_MAXRANK);
    return -1;
  }
  if (!shape) {
    ns_seterr(err, "shape is missing");
    return -1;
  }
  size_t n = 1;
  for (int k = 0; k < rank; k++) {
    if (shape[k] == 0) {
      ns_seterr(err, "dimension %d of the shape is 0 (every dimension must be at least 1)", k + 1);
      return -1;
    }
    /* n * shape[k] > NS_MAXELEMS, tested without overflowing */
    if (shape[k] > NS_MAXELEMS / n) {
      char buf[128];
      ns_shape_format(rank, shape, buf, sizeof buf);
      ns_seterr(err, "shape %s has too many elements (at most %zu)", buf, (size_t)NS_MAXELEMS);
      return -1;
    }
    n *= shape[k];
  }
  return 0;
}

void ns_shape_format(int rank, const size_t *shape, char *buf, size_t len) {
  if (!buf || len == 0) return;
  buf[0] = '\0';
  if (!shape || rank < 0) {
    snprintf(buf, len, "(?)");
    return;
  }
  size_t used = 0;
  int w = snprintf(buf, len, "(");
  if (w > 0) used = (size_t)w;
  for (int k = 0; k < rank && used < len; k++) {
    w = snprintf(buf + used, len - used, k ? ", %zu" : "%zu", shape[k]);
    if (w < 0) return;
    used += (size_t)w;
  }
  if (used < len) snprintf(buf + used, len - used, ")");
}

int ns_parse_kmg(const char *s, int allow_b, unsigned long long *v) {
  if (!s || !isdigit((unsigned char)*s)) return -1;
  char *end;
  errno = 0;
  unsigned long long n = strtoull(s, &end, 10);
  if (errno) return -1;
  int shift = 0;
  switch (toupper((unsigned char)*end)) {
  case 'K':
    shift = 10, end++;
    break;
  case 'M':
    shift = 20, end++;
    break;
  case 'G':
    shift = 30, end++;
    break;
  default:
    break;
  }
  if (allow_b && toupper((unsigned char)*end) == 'B') end++;
  if (*end != '\0' || n > (~0ULL >> shift)) return -1;
  *v = n << shift;
  return 0;
}

int ns_max_elements_parse(const char *s, size_t *cap, char *err) {
  if (!s || !cap) {
    ns_seterr(err, "no value");
    return -1;
  }
  const char *p = s;
  while (isspace((unsigned char)*p)) p++;
  unsigned long long v = 0;
  int ok = ns_parse_kmg(p, 0, &v) == 0 && v >= 1 && v <= NS_MAXELEMS;
  if (!ok) {
    ns_seterr(err,
              "\"%.40s\" is not a number of elements from 1 to %zu (a K, M or G suffix "
              "multiplies by 2^10, 2^20, 2^30)",
              s, (size_t)NS_MAXELEMS);
    return -1;
  }
  *cap = (size_t)v;
  return 0;
}

/* The element cap (tensor.h): relaxed atomics, as it orders nothing else. */
static _Atomic size_t max_elements = NS_DEFAULT_MAX_ELEMENTS;

size_t ns_max_elements(void) {
  return atomic_load_explicit(&max_elements, memory_order_relaxed);
}

int ns_set_max_elements(size_t cap, char *err) {
  if (cap < 1 || cap > NS_MAXELEMS) {
    ns_seterr(err, "%zu is not a number of elements from 1 to %zu", cap, (size_t)NS_MAXELEMS);
    return -1;
  }
  atomic_store_explicit(&max_elements, cap, memory_order_relaxed);
  return 0;
}

int ns_elements_check(size_t n, char *err) {
  size_t cap = ns_max_elements();
  if (n <= cap) return 0;
  ns_seterr(err, "%zu elements is above the cap of %zu elements per tensor (NS_MAX_ELEMENTS)", n,
            cap);
  return -1;
}

/* ---- memory accounts (tensor.h) ---- */

struct ns_mem_account {
  _Atomic size_t used; /* tensors and charges */
  size_t limit;
  _Atomic unsigned refs; /* the owner's (until released), one per charged tensor, one per
                            borrowing thread */
  _Atomic int refused;
  const size_t *other;       /* the owner's, read on its thread only */
  _Atomic size_t other_seen; /* *other as the owner's thread last read it, for borrowers */
  void (*reclaim)(void *);   /* the owner's, called on its thread only */
  void *ud;
  int reclaiming;
};

static _Thread_local ns_mem_account *current_account;
/* current_account is borrowed for a job run for another thread (ns_mem_account_borrow) */
static _Thread_local int current_borrowed;

ns_mem_account *ns_mem_account_new(size_t limit) {
  ns_mem_account *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  a->limit = limit;
  atomic_store(&a->refs, 1);
  return a;
}

void ns_mem_account_set_owner(ns_mem_account *a, const size_t *other, void (*reclaim)(void *),
                              void *ud) {
  if (!a) return;
  a->other = other;
  a->reclaim = reclaim;
  a->ud = ud;
  atomic_store(&a->other_seen, other ? *other : 0);
}

static void account_drop(ns_mem_account *a) {
  if (a && atomic_fetch_sub(&a->refs, 1) == 1) free(a);
}

void ns_mem_account_release(ns_mem_account *a) {
  if (!a) return;
  a->other = NULL;
  a->reclaim = NULL;
  a->ud = NULL;
  atomic_store(&a->other_seen, 0);
  if (current_account == a) current_account = NULL;
  account_drop(a);
}

ns_mem_account *ns_mem_account_use(ns_mem_account *a) {
  ns_mem_account *prev = current_account;
  current_account = a;
  current_borrowed = 0;
  return prev;
}

ns_mem_account *ns_mem_account_current(void) {
  return current_account;
}

ns_mem_account *ns_mem_account_borrow(ns_mem_account *a) {
  ns_mem_account *prev = current_account;
  if (a) atomic_fetch_add(&a->refs, 1); /* the job's: the owner may release it meanwhile */
  current_account = a;
  current_borrowed = a != NULL;
  return prev;
}

void ns_mem_account_unborrow(ns_mem_account *prev) {
  ns_mem_account *a = current_borrowed ? current_account : NULL;
  current_account = prev;
  current_borrowed = 0;
  account_drop(a);
}

/* The owner's bytes outside tensors: read on its thread (and remembered for borrowers), or
 * as last remembered on a borrowing one. */
static size_t other_bytes(ns_mem_account *a, int owner) {
  if (!owner) return atomic_load(&a->other_seen);
  size_t o = a->other ? *a->other : 0;
  atomic_store(&a->other_seen, o);
  return o;
}

/* Adds bytes to a's use when they fit its limit with the owner's other bytes: 0, else -1.
 * One compare-and-swap, so threads charging at once never take it past the limit together. */
static int try_add(ns_mem_account *a, size_t bytes, size_t other) {
  size_t u = atomic_load(&a->used);
  do {
    if (u + other > a->limit || bytes > a->limit - u - other) return -1;
  } while (!atomic_compare_exchange_weak(&a->used, &u, u + bytes));
  return 0;
}

/* Charges bytes to a: 0, or -1 (refused) when they do not fit even after a reclaim, which
 * only the owner's thread runs (a Lua collector is not for other threads). */
static int account_charge(ns_mem_account *a, size_t bytes) {
  int owner = !current_borrowed;
  if (try_add(a, bytes, other_bytes(a, owner)) == 0) return 0;
  if (owner && a->reclaim && !a->reclaiming) {
    a->reclaiming = 1; /* the collector frees tensors, which uncharge: no charge recurses */
    a->reclaim(a->ud);
    a->reclaiming = 0;
    if (try_add(a, bytes, other_bytes(a, owner)) == 0) return 0;
  }
  atomic_store(&a->refused, 1);
  return -1;
}

static void account_uncharge(ns_mem_account *a, size_t bytes) {
  size_t u = atomic_load(&a->used);
  while (!atomic_compare_exchange_weak(&a->used, &u, u > bytes ? u - bytes : 0)) {
  }
}

int ns_mem_charge(size_t bytes) {
  return current_account ? account_charge(current_account, bytes) : 0;
}

void ns_mem_uncharge(size_t bytes) {
  if (current_account) account_uncharge(current_account, bytes);
}

/* A charged block: its account and size before the caller's bytes (aligned as malloc's). */
typedef union {
  struct {
    ns_mem_account *acct;
    size_t bytes;
  } h;
  max_align_t align;
} mem_head;

/* Charges bytes to a, which may be another thread's than this one's (a block freed or grown
 * elsewhere): only the thread that owns a and uses it may run its reclaim. */
static int charge_to(ns_mem_account *a, size_t bytes) {
  if (a == current_account) return account_charge(a, bytes);
  int was = current_borrowed;
  ns_mem_account *cur = current_account;
  current_account = a, current_borrowed = 1;
  int rc = account_charge(a, bytes);
  current_account = cur, current_borrowed = was;
  return rc;
}

void *ns_mem_alloc(size_t bytes) {
  ns_mem_account *a = current_account;
  if (bytes > SIZE_MAX - sizeof(mem_head)) return NULL;
  if (a && account_charge(a, bytes) != 0) return NULL;
  mem_head *m = malloc(sizeof *m + bytes);
  if (!m) {
    if (a) account_uncharge(a, bytes);
    return NULL;
  }
  if (a) atomic_fetch_add(&a->refs, 1);
  m->h.acct = a;
  m->h.bytes = bytes;
  return m + 1;
}

void *ns_mem_realloc(void *p, size_t bytes) {
  if (!p) return ns_mem_alloc(bytes);
  mem_head *m = (mem_head *)p - 1;
  ns_mem_account *a = m->h.acct;
  size_t old = m->h.bytes;
  if (bytes > SIZE_MAX - sizeof(mem_head)) return NULL;
  if (a && bytes > old && charge_to(a, bytes - old) != 0) return NULL;
  mem_head *nm = realloc(m, sizeof *m + bytes);
  if (!nm) {
    if (a && bytes > old) account_uncharge(a, bytes - old);
    return NULL;
  }
  if (a && bytes < old) account_uncharge(a, old - bytes);
  nm->h.bytes = bytes;
  return nm + 1;
}

void ns_mem_free(void *p) {
  if (!p) return;
  mem_head *m = (mem_head *)p - 1;
  ns_mem_account *a = m->h.acct;
  if (a) {
    account_uncharge(a, m->h.bytes);
    account_drop(a);
  }
  free(m);
}

size_t ns_mem_used(const ns_mem_account *a) {
  return a ? atomic_load(&a->used) : 0;
}

size_t ns_mem_limit(const ns_mem_account *a) {
  return a ? a->limit : 0;
}

int ns_mem_refused(const ns_mem_account *a) {
  return a ? atomic_load(&a->refused) : 0;
}

void ns_mem_clear_refused(ns_mem_account *a) {
  if (a) atomic_store(&a->refused, 0);
}

/* Bytes a tensor of n elements of dtype charges: its struct and its data. */
static size_t tensor_bytes(size_t n, ns_dtype dtype) {
  return sizeof(ns_tensor) + n * ns_dtype_size(dtype);
}

#define NS_HUGE_PAGE ((size_t)2 << 20)
#define NS_HUGE_ALIGN_MIN (4 * NS_HUGE_PAGE)

#if NS_OWN_MAPPINGS
/* Mappings freed by large tensors, kept for the next one (ns_mem_keep_freed turns this on):
 * pages of a kept mapping are mapped already, so the next output of that size faults nothing
 * in, as the heap's kept memory did for smaller blocks. At most NS_KEPT of them and
 * NS_KEPT_BYTES in all; the oldest goes first. */
#define NS_KEPT 8
#define NS_HEAP_WARM ((size_t)128 << 20)
#define NS_KEPT_BYTES ((size_t)512 << 20)
static struct {
  pthread_mutex_t lock;
  int on, n;
  size_t bytes;
  void *p[NS_KEPT];
  size_t len[NS_KEPT];
} kept = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, {0}, {0}};

/* Drops entry i of the kept list (the lock held). */
static void kept_remove(int i) {
  kept.bytes -= kept.len[i];
  for (; i + 1 < kept.n; i++) kept.p[i] = kept.p[i + 1], kept.len[i] = kept.len[i + 1];
  kept.n--;
}

/* Takes the kept mapping kept_take wants (the shortest of at least len bytes) or, with
 * longest, the longest of all off the list: NULL when there is none; its length in *got. */
static void *kept_pop(int longest, size_t len, size_t *got) {
  pthread_mutex_lock(&kept.lock);
  int best = -1;
  for (int i = 0; i < kept.n; i++) {
    int fits = longest || kept.len[i] >= len;
    int better =
        best < 0 || (longest ? kept.len[i] > kept.len[best] : kept.len[i] < kept.len[best]);
    if (fits && better) best = i;
  }
  void *p = NULL;
  *got = 0;
  if (best >= 0) {
    p = kept.p[best];
    *got = kept.len[best];
    kept_remove(best);
  }
  pthread_mutex_unlock(&kept.lock);
  return p;
}

/* A kept mapping of at least len bytes (the smallest such), or NULL; its length in *got.
 * The part past len is given back only when it is more than three times len: the dtype
 * key cycles fp32, fp16, bf16, fp64 outputs of one shape, and an fp16 output that gave back
 * three quarters of the fp64 one's mapping left the next fp64 output 128 MB of new pages to
 * fault in (160 of that key's 180 ms on the 64 MB file). */
static void *kept_take(size_t len, size_t *got) {
  char *p = kept_pop(0, len, got);
  if (p && *got - len > 3 * len) {
    munmap(p + len, *got - len); /* on a 2 MB boundary: len is */
    *got = len;
  }
  return p;
}

/* The longest kept mapping, taken off the list, or NULL; its length in *got. */
static void *kept_take_largest(size_t *got) {
  return kept_pop(1, 0, got);
}

/* Gives every kept mapping back (a new one found no memory: ulimit -v, say). */
static void kept_flush(void) {
  void *drop[NS_KEPT];
  size_t droplen[NS_KEPT];
  pthread_mutex_lock(&kept.lock);
  int n = kept.n;
  for (int i = 0; i < n; i++) drop[i] = kept.p[i], droplen[i] = kept.len[i];
  kept.n = 0;
  kept.bytes = 0;
  pthread_mutex_unlock(&kept.lock);
  for (int i = 0; i < n; i++) munmap(drop[i], droplen[i]);
}

/* Keeps a freed mapping when keeping is on and it fits; 0 when the caller is to unmap it. */
static int kept_put(void *p, size_t len) {
  void *drop[NS_KEPT + 1];
  size_t droplen[NS_KEPT + 1];
  int ndrop = 0, took = 0;
  pthread_mutex_lock(&kept.lock);
  if (kept.on && len <= NS_KEPT_BYTES) {
    while (kept.n > 0 && (kept.n == NS_KEPT || kept.bytes + len > NS_KEPT_BYTES)) {
      drop[ndrop] = kept.p[0], droplen[ndrop++] = kept.len[0];
      kept_remove(0);
    }
    kept.p[kept.n] = p, kept.len[kept.n++] = len;
    kept.bytes += len;
    took = 1;
  }
  pthread_mutex_unlock(&kept.lock);
  for (int i = 0; i < ndrop; i++) munmap(drop[i], droplen[i]);
  return took;
}
#endif

size_t ns_mem_kept_bytes(void) {
#if NS_OWN_MAPPINGS
  pthread_mutex_lock(&kept.lock);
  size_t b = kept.bytes;
  pthread_mutex_unlock(&kept.lock);
  return b;
#else
  return 0;
#endif
}

/* The data of a large tensor (NS_HUGE_ALIGN_MIN bytes and more) in a mapping of its own on a
 * 2 MB boundary that asks for 2 MB pages; its length in *mapped. The heap does not get them
 * (glibc's posix_memalign with MADV_HUGEPAGE on it was never granted one), and 4 KB pages
 * cost a fault each: a fresh 128 MB output took 340 ms to fault in 4 KB at a time on the
 * 2-core VM, 9 ms in 2 MB pages once the host had backed the memory. A kept mapping
 * (kept_take) is reused first, and zeroed when zero asks it; a new one is the kernel's zero
 * pages. Under AddressSanitizer, malloc (which it checks) instead. NULL when there is no
 * memory. */
static void *big_alloc(size_t bytes, int zero, size_t *mapped, int *recycled) {
  *mapped = 0;
  *recycled = 0;
#if NS_OWN_MAPPINGS
  size_t len = (bytes + NS_HUGE_PAGE - 1) & ~(NS_HUGE_PAGE - 1);
  if (len < bytes) return NULL;
  size_t have = 0;
  char *p = kept_take(len, &have);
  if (p) {
    if (zero) memset(p, 0, bytes);
    *mapped = have;
    *recycled = !zero;
    return p;
  }
  p = mmap(NULL, len + NS_HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED && ns_mem_kept_bytes()) { /* the kept ones may be what is in the way */
    kept_flush();
    p = mmap(NULL, len + NS_HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  if (p == MAP_FAILED) return NULL;
  /* the aligned len bytes, the rest given back */
  size_t head = (NS_HUGE_PAGE - ((uintptr_t)p & (NS_HUGE_PAGE - 1))) & (NS_HUGE_PAGE - 1);
  if (head) munmap(p, head);
  if (NS_HUGE_PAGE - head) munmap(p + head + len, NS_HUGE_PAGE - head);
  (void)madvise(p + head, len, MADV_HUGEPAGE); /* a hint: nothing depends on it */
#if defined(MREMAP_FIXED)
  /* no kept mapping is long enough (kept_take): the longest one's pages move to the head
     of the new one (the page tables move, nothing is copied), so only the rest is memory
     to fault in. The first fp64 output of the 64 MB file after fp32 ones: 64 MB of new
     pages where it was 128. */
  size_t oldlen = 0;
  char *old = kept_take_largest(&oldlen);
  if (old && mremap(old, oldlen, oldlen, MREMAP_MAYMOVE | MREMAP_FIXED, p + head) == MAP_FAILED)
    munmap(old, oldlen);
  else if (old && zero)
    memset(p + head, 0, oldlen < bytes ? oldlen : bytes);
#endif
  *mapped = len;
  return p + head;
#else
  return zero ? calloc(1, bytes) : malloc(bytes);
#endif
}

static void data_free(void *data, size_t mapped) {
#if NS_OWN_MAPPINGS
  if (mapped) {
    if (!kept_put(data, mapped)) munmap(data, mapped);
    return;
  }
#endif
  (void)mapped;
  free(data);
}

void ns_mem_keep_freed(void) {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
#if NS_OWN_MAPPINGS
  pthread_mutex_lock(&kept.lock);
  kept.on = 1;
  pthread_mutex_unlock(&kept.lock);
#if defined(__GLIBC__)
  /* the heap's next NS_HEAP_WARM bytes asked for 2 MB pages too: the top of the heap grows
     by them (address space only, nothing touched) and the free keeps them there (below the
     trim threshold), so the work arrays of a key (a closed form's entries, per-statistic
     arrays: malloc's) fault in 2 MB at a time */
  char *w = malloc(NS_HEAP_WARM);
  if (w) {
    uintptr_t a0 = ((uintptr_t)w + NS_HUGE_PAGE - 1) & ~(uintptr_t)(NS_HUGE_PAGE - 1);
    uintptr_t a1 = ((uintptr_t)w + NS_HEAP_WARM) & ~(uintptr_t)(NS_HUGE_PAGE - 1);
    if (a1 > a0) (void)madvise((void *)a0, a1 - a0, MADV_HUGEPAGE);
    free(w);
  }
#endif
#endif
}

/* ns_tensor_new and ns_tensor_new_uninit: zeroed (calloc) or not (malloc) data. */
static ns_tensor *tensor_alloc(int rank, const size_t *shape, ns_dtype dtype, int zero, char *err) {
  if ((unsigned)dtype >= NS_DTYPE_COUNT) {
    ns_seterr(err, "unknown dtype %d", (int)dtype);
    return NULL;
  }
  if (ns_shape_check(rank, shape, err) != 0) return NULL;
  size_t n = 1;
  for (int k = 0; k < rank; k++) n *= shape[k]; /* <= NS_MAXELEMS: checked above */
  char e[NS_ERRLEN];
  if (ns_elements_check(n, e)) {
    char buf[128];
    ns_shape_format(rank, shape, buf, sizeof buf);
    ns_seterr(err, "a tensor of shape %s: %s", buf, e);
    return NULL;
  }
  ns_mem_account *acct = current_account;
  if (acct && account_charge(acct, tensor_bytes(n, dtype)) != 0) {
    char buf[128];
    ns_shape_format(rank, shape, buf, sizeof buf);
    if (acct->limit >= (size_t)1 << 20)
      ns_seterr(err, "a tensor of shape %s: over the memory cap of %zu MiB", buf,
                acct->limit >> 20);
    else
      ns_seterr(err, "a tensor of shape %s: over the memory cap of %zu bytes", buf, acct->limit);
    return NULL;
  }
  ns_tensor *t = calloc(1, sizeof *t);
  if (!t) {
    if (acct) account_uncharge(acct, tensor_bytes(n, dtype));
    ns_seterr(err, "out of memory allocating a tensor");
    return NULL;
  }
  t->rank = rank;
  t->n = 1;
  for (int k = 0; k < NS_MAXRANK; k++) {
    t->shape[k] = k < rank ? shape[k] : 1;
    t->n *= t->shape[k];
  }
  t->dtype = dtype;
  size_t bytes = t->n * ns_dtype_size(dtype);
  if (bytes >= NS_HUGE_ALIGN_MIN)
    t->data = big_alloc(bytes, zero, &t->mapped, &t->recycled);
  else
    t->data = zero ? calloc(t->n, ns_dtype_size(dtype)) : malloc(bytes);
  if (!t->data) {
    char buf[128];
    ns_shape_format(rank, shape, buf, sizeof buf);
    ns_seterr(err, "out of memory allocating a %s tensor of shape %s", ns_dtype_name(dtype), buf);
    free(t);
    if (acct) account_uncharge(acct, tensor_bytes(n, dtype));
    return NULL;
  }
  if (acct) {
    atomic_fetch_add(&acct->refs, 1);
    t->acct = acct;
  }
  return t;
}

ns_tensor *ns_tensor_new(int rank, const size_t *shape, ns_dtype dtype, char *err) {
  return tensor_alloc(rank, shape, dtype, 1, err);
}

ns_tensor *ns_tensor_new_uninit(int rank, const size_t *shape, ns_dtype dtype, char *err) {
  return tensor_alloc(rank, shape, dtype, 0, err);
}

ns_tensor *ns_tensor_from(int rank, const size_t *shape, ns_dtype dtype, const double *vals,
                          char *err) {
  ns_tensor *t = ns_tensor_new(rank, shape, dtype, err);
  if (!t) return NULL;
  if (vals)
    for (size_t i = 0; i < t->n; i++) ns_tensor_set(t, i, vals[i]);
  return t;
}

ns_tensor *ns_tensor_copy(const ns_tensor *t) {
  if (!t) return NULL;
  ns_tensor *c = ns_tensor_new(t->rank, t->shape, t->dtype, NULL);
  if (!c) return NULL;
  memcpy(c->data, t->data, t->n * ns_dtype_size(t->dtype));
  return c;
}

void ns_tensor_free(ns_tensor *t) {
  if (!t) return;
  unsigned e = __atomic_load_n(&t->extra_owners, __ATOMIC_ACQUIRE);
  while (e > 0) /* another owner remains: drop this one's share */
    if (__atomic_compare_exchange_n(&t->extra_owners, &e, e - 1, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
      return;
  ns_mem_account *acct = t->acct;
  size_t bytes = tensor_bytes(t->n, t->dtype);
  data_free(t->data, t->mapped);
  free(t);
  if (acct) {
    account_uncharge(acct, bytes);
    account_drop(acct);
  }
}

ns_tensor *ns_tensor_share(const ns_tensor *t) {
  if (!t) return NULL;
  ns_tensor *m = (ns_tensor *)t; /* the count is not the values: sharing does not write them */
  __atomic_fetch_add(&m->extra_owners, 1, __ATOMIC_ACQ_REL);
  return m;
}

int ns_tensor_shared(const ns_tensor *t) {
  return t && __atomic_load_n(&t->extra_owners, __ATOMIC_ACQUIRE) > 0;
}

int ns_tensor_unshare(ns_tensor **t) {
  if (!t || !*t || !ns_tensor_shared(*t)) return 0;
  ns_tensor *c = ns_tensor_copy(*t);
  if (!c) return -1;
  ns_tensor_free(*t); /* drops this owner's share */
  *t = c;
  return 0;
}

double ns_tensor_get(const ns_tensor *t, size_t i) {
  switch (t->dtype) {
  case NS_FP64:
    return ((const double *)t->data)[i];
  case NS_FP32:
    return (double)((const float *)t->data)[i];
  case NS_FP16:
    return ns_fp16_value(((const uint16_t *)t->data)[i]);
  case NS_BF16:
    return ns_bf16_value(((const uint16_t *)t->data)[i]);
  default:
    return 0.0;
  }
}

void ns_tensor_set(ns_tensor *t, size_t i, double v) {
  switch (t->dtype) {
  case NS_FP64:
    ((double *)t->data)[i] = v;
    break;
  case NS_FP32:
    ((float *)t->data)[i] = (float)v; /* one correctly rounded conversion */
    break;
  case NS_FP16:
    ((uint16_t *)t->data)[i] = ns_fp16_bits(v);
    break;
  case NS_BF16:
    ((uint16_t *)t->data)[i] = ns_bf16_bits(v);
    break;
  default:
    break;
  }
}

void ns_tensor_read(const ns_tensor *t, double *out) {
  ns_tensor_read_range(t, 0, t->n, out);
}

void ns_tensor_read_range(const ns_tensor *t, size_t i0, size_t len, double *out) {
  switch (t->dtype) {
  case NS_FP64:
    memcpy(out, (const double *)t->data + i0, len * sizeof(double));
    break;
  case NS_FP32: {
    const float *f = (const float *)t->data + i0;
    for (size_t a = 0; a < len; a++) out[a] = f[a];
    break;
  }
  case NS_FP16: {
    const uint16_t *h = (const uint16_t *)t->data + i0;
    for (size_t a = 0; a < len; a++) out[a] = nk_h2f(h[a]); /* exactly ns_fp16_value */
    break;
  }
  case NS_BF16: {
    const uint16_t *h = (const uint16_t *)t->data + i0;
    for (size_t a = 0; a < len; a++) out[a] = nk_b2f(h[a]); /* exactly ns_bf16_value */
    break;
  }
  default:
    for (size_t a = 0; a < len; a++) out[a] = ns_tensor_get(t, i0 + a);
  }
}

NS_VECTORIZE static void f32_to_f16(const float *f, uint16_t *h, size_t n) {
  for (size_t i = 0; i < n; i++) h[i] = nk_f2h(f[i]);
}

NS_VECTORIZE static void f32_to_bf16(const float *f, uint16_t *h, size_t n) {
  for (size_t i = 0; i < n; i++) h[i] = nk_f2b(f[i]);
}

void ns_tensor_convert_range(const ns_tensor *src, ns_tensor *dst, size_t i0, size_t len) {
  if (src->dtype == NS_FP32 && dst->dtype == NS_FP16) {
    f32_to_f16((const float *)src->data + i0, (uint16_t *)dst->data + i0, len);
    return;
  }
  if (src->dtype == NS_FP32 && dst->dtype == NS_BF16) {
    f32_to_bf16((const float *)src->data + i0, (uint16_t *)dst->data + i0, len);
    return;
  }
  double buf[1024];
  for (size_t a = 0; a < len; a += 1024) {
    size_t k = len - a < 1024 ? len - a : 1024;
    ns_tensor_read_range(src, i0 + a, k, buf);
    ns_tensor_write_range(dst, i0 + a, k, buf);
  }
}

void ns_tensor_write_range(ns_tensor *t, size_t i0, size_t len, const double *v) {
  switch (t->dtype) {
  case NS_FP64:
    memcpy((double *)t->data + i0, v, len * sizeof(double));
    break;
  case NS_FP32: {
    float *f = (float *)t->data + i0;
    for (size_t a = 0; a < len; a++) f[a] = (float)v[a];
    break;
  }
  case NS_FP16: {
    uint16_t *h = (uint16_t *)t->data + i0;
    for (size_t a = 0; a < len; a++) h[a] = ns_fp16_bits(v[a]);
    break;
  }
  case NS_BF16: {
    uint16_t *h = (uint16_t *)t->data + i0;
    for (size_t a = 0; a < len; a++) h[a] = ns_bf16_bits(v[a]);
    break;
  }
  default:
    for (size_t a = 0; a < len; a++) ns_tensor_set(t, i0 + a, v[a]);
  }
}
