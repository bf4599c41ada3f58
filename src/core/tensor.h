/* tensor.h: dense row-major tensors of rank 1 to 4 in one storage dtype.
 *
 * Ownership: ns_tensor_new / ns_tensor_from / ns_tensor_copy return a tensor the
 * caller owns and frees with ns_tensor_free (NULL is fine). No function here keeps a
 * pointer to its arguments. Functions that can fail return NULL (or -1) and write a
 * one-line reason into err (size NS_ERRLEN) when err is not NULL.
 *
 * Storage: fp64 as double, fp32 as float, fp16/bf16 as uint16_t bit patterns.
 * Reads come back as double (exact); writes round once to the storage dtype.
 *
 *   char err[NS_ERRLEN];
 *   size_t shape[2] = {5, 4};
 *   ns_tensor *t = ns_tensor_new(2, shape, NS_FP64, err);
 *   ns_tensor_set(t, 0, 1.5);
 *   double v = ns_tensor_get(t, 0);
 *   ns_tensor_free(t);
 */
#ifndef NS_TENSOR_H
#define NS_TENSOR_H

#include <stddef.h>

#include "core/dtype.h"
#include "core/err.h" /* NS_ERRLEN */

#define NS_MAXRANK 4
/* The most elements a shape may describe (1 << 31): larger shapes are refused everywhere,
 * also by the readers that stream a file without holding it. */
#define NS_MAXELEMS ((size_t)1 << 31)
/* The cap on the elements of a tensor held in memory, by default 1 << 28 (2 GiB of fp64):
 * ns_tensor_new, and so every tensor made by the core, the explorer and the Lua module,
 * refuses more with a message naming both numbers, instead of attempting the allocation.
 * ns_set_max_elements changes it; the core reads no environment: the program's entry
 * points (main, luaopen_normscope) pass NS_MAX_ELEMENTS on (nsl_max_elements_from_env). */
#define NS_DEFAULT_MAX_ELEMENTS ((size_t)1 << 28)

struct ns_mem_account;

typedef struct ns_tensor {
  int rank;                 /* 1..4 */
  size_t shape[NS_MAXRANK]; /* unused trailing entries are 1 */
  size_t n;                 /* product of shape */
  ns_dtype dtype;
  void *data; /* n * ns_dtype_size(dtype) bytes, owned */
  /* owners besides the first (ns_tensor_share; atomic), and the memory account the
   * tensor was charged to (ns_mem_account, below; NULL: none). Made by ns_tensor_new. */
  unsigned extra_owners;
  struct ns_mem_account *acct;
  /* bytes of data's own mapping (a large tensor's, on 2 MB pages: tensor.c); 0 when data
   * came from malloc */
  size_t mapped;
  /* 1 when that mapping held an earlier tensor (ns_mem_keep_freed) and was handed over
   * unzeroed: its pages are mapped but not in the cache, where a fresh mapping's were just
   * zeroed through it. The kernels stream a new output into the first (norm_kernels.c). */
  int recycled;
} ns_tensor;

ns_tensor *ns_tensor_new(int rank, const size_t *shape, ns_dtype dtype, char *err);
/* As ns_tensor_new, but the data is not zeroed: for a producer that writes every element
 * anyway (a kernel's output), which then pays for one write of the bytes instead of two
 * (calloc clears memory it reuses from the heap). */
ns_tensor *ns_tensor_new_uninit(int rank, const size_t *shape, ns_dtype dtype, char *err);
/* New tensor holding vals[0..n-1] rounded to dtype. */
ns_tensor *ns_tensor_from(int rank, const size_t *shape, ns_dtype dtype, const double *vals,
                          char *err);
ns_tensor *ns_tensor_copy(const ns_tensor *t);
/* Drops one owner of t; the last frees it. */
void ns_tensor_free(ns_tensor *t);

/* Sharing: ns_tensor_share makes the caller another owner of t (returned; it frees its
 * share with ns_tensor_free), so states that hold the same values hold one copy (the
 * explorer's ns_state_copy, a lesson's step snapshots). A shared tensor is copy-on-write:
 * whoever writes into a tensor it did not just make calls ns_tensor_unshare first, which
 * gives it a copy of its own when others own the tensor too (0, or -1 out of memory with
 * *t unchanged). Safe across threads (atomic counts). */
ns_tensor *ns_tensor_share(const ns_tensor *t);
int ns_tensor_shared(const ns_tensor *t);
int ns_tensor_unshare(ns_tensor **t);

/* Memory accounts: what a sandbox (a lesson, a state file) may hold in tensors. While a
 * thread uses an account (ns_mem_account_use), every tensor it makes is charged to it, its
 * struct and data, until the tensor's last owner frees it (on whatever thread, whenever:
 * the account lives as long as a tensor charged to it does). A tensor that would take the
 * account past its limit is refused: ns_tensor_new returns NULL with err ("over the memory
 * cap of N MiB") and ns_mem_refused says so; first the account's reclaim callback may free
 * what it can (a Lua state's collector) and the charge is tried again. The limit counts
 * `other` too, bytes the owner holds elsewhere (a Lua heap), read when a tensor is charged.
 * The core reads no limit from anywhere: the sandbox that makes the account gives it one.
 *   ns_mem_account *a = ns_mem_account_new(128 << 20);
 *   ns_mem_account *prev = ns_mem_account_use(a);   // this thread's tensors charge a
 *   ...                                              // ns_tensor_new refuses past 128 MiB
 *   ns_mem_account_use(prev);
 *   ns_mem_account_release(a);                       // the owner is done with it */
typedef struct ns_mem_account ns_mem_account;
/* A new account (NULL when out of memory), owned by the caller. */
ns_mem_account *ns_mem_account_new(size_t limit);
/* The owner's bytes outside tensors (read when a tensor is charged; NULL: none) and the
 * callback that frees what it can when a tensor would not fit (NULL: none). */
void ns_mem_account_set_owner(ns_mem_account *a, const size_t *other, void (*reclaim)(void *),
                              void *ud);
/* The owner is done: other and reclaim are forgotten, and the account goes with the last
 * tensor charged to it. NULL is fine. */
void ns_mem_account_release(ns_mem_account *a);
/* Makes a this thread's account (NULL: none); returns the one it had. */
ns_mem_account *ns_mem_account_use(ns_mem_account *a);
/* Jobs one thread runs for another (ns_split_run's parts) charge the submitting thread's
 * account: the submitter reads it with ns_mem_account_current, and the worker makes it its
 * own for the job with ns_mem_account_borrow (which holds a reference, so the account
 * outlives the job; NULL borrows none) and ns_mem_account_unborrow(what borrow returned)
 * after. A borrowing thread's charges never call the reclaim callback (the owner's thread
 * runs it) and count the owner's other bytes as its thread last read them. Charges from
 * several threads at once never take an account past its limit together. */
ns_mem_account *ns_mem_account_current(void);
ns_mem_account *ns_mem_account_borrow(ns_mem_account *a);
void ns_mem_account_unborrow(ns_mem_account *prev);
/* Charges bytes that are not a tensor's (a computation's scratch) to this thread's account:
 * 0, or -1 when they do not fit (the account is then marked refused); ns_mem_uncharge gives
 * them back. Nothing without an account. */
int ns_mem_charge(size_t bytes);
void ns_mem_uncharge(size_t bytes);
/* Charged blocks, for memory a sandbox's script causes that is not a tensor (an undo step's
 * element list, a figure's canvas): ns_mem_alloc is malloc charged to this thread's account
 * (NULL, with the account refused, past its limit, as ns_tensor_new), and the block keeps
 * the account until ns_mem_free gives the bytes back, on whatever thread, whenever.
 * ns_mem_realloc resizes one (charging the difference; NULL leaves it as it was). Without
 * an account they are malloc, realloc and free. A block from these goes to ns_mem_free only. */
void *ns_mem_alloc(size_t bytes);
void *ns_mem_realloc(void *p, size_t bytes);
void ns_mem_free(void *p);
/* Bytes the account's tensors (and charges) hold, its limit, and whether a charge was
 * refused since ns_mem_clear_refused. */
size_t ns_mem_used(const ns_mem_account *a);
size_t ns_mem_limit(const ns_mem_account *a);
int ns_mem_refused(const ns_mem_account *a);
void ns_mem_clear_refused(ns_mem_account *a);

/* Keeps freed buffers in the process for reuse (glibc: mmap only above 256 MiB, the heap
 * trimmed only past 512 MiB free). The explorer, the lessons and the audit allocate and free
 * buffers of a few megabytes over and over (a key's probes, the eigenvector checks' work
 * vectors, an audit chunk); by default glibc gives each fresh pages (mmap above 128 KiB,
 * trimming after a free), and the kernel faults and zeroes every page again on first touch:
 * on a virtual machine some 10-20 microseconds a fault, 60 of a key's 100 ms on a 64 MB file.
 * Freed memory then stays mapped for the next buffer (peak memory is unchanged). Called once
 * at start-up by the program (main.c) and by the benchmarks; nothing elsewhere on non-glibc. */
void ns_mem_keep_freed(void);
/* Large tensors (8 MiB and more) have mappings of their own on 2 MB pages; with
 * ns_mem_keep_freed, up to 8 freed ones (512 MiB in all) are kept for the next large tensor
 * (given back when a new mapping finds no room), and the heap's next 128 MiB ask for 2 MB
 * pages too. The bytes kept now. */
size_t ns_mem_kept_bytes(void);

double ns_tensor_get(const ns_tensor *t, size_t i);
void ns_tensor_set(ns_tensor *t, size_t i, double v);
/* Copies all elements into out[0..n-1] as doubles (exact). */
void ns_tensor_read(const ns_tensor *t, double *out);
/* Copies elements [i0, i0+len) into out[0..len-1] as doubles (exact), one loop per dtype
 * (ns_tensor_get's switch and call per element cost more than the conversion). */
void ns_tensor_read_range(const ns_tensor *t, size_t i0, size_t len, double *out);
/* Stores v[0..len-1] into elements [i0, i0+len), rounded to t's dtype as ns_tensor_set does. */
void ns_tensor_write_range(ns_tensor *t, size_t i0, size_t len, const double *v);
/* Elements [i0, i0+len) of src rounded to dst's dtype into the same places of dst (the two of
 * at least i0+len elements): the bits of ns_tensor_read_range then ns_tensor_write_range, and
 * from fp32 to fp16 or bf16 (an explorer's dtype key on an fp32 file) without the detour
 * through double, in a loop the compiler vectorizes. */
void ns_tensor_convert_range(const ns_tensor *src, ns_tensor *dst, size_t i0, size_t len);
/* The cap in force: NS_DEFAULT_MAX_ELEMENTS until ns_set_max_elements changes it.
 *
 * The cap is a process-wide value, the core's one configuration global (blasdl.h keeps the
 * other state the core holds for the process: the loaded libraries). It is atomic, so any
 * thread may read it while another sets it; a tensor already made is not affected.
 *   ns_set_max_elements(1000, err);   // then ns_tensor_new refuses 1001 elements */
size_t ns_max_elements(void);
/* Sets the cap: 1 to NS_MAXELEMS. 0, or -1 with err and the cap unchanged. */
int ns_set_max_elements(size_t cap, char *err);
/* A whole number with an optional K, M or G suffix (times 2^10, 2^20, 2^30) and, when
 * allow_b, a trailing B ("64M", "1GB", "500000"): 0 with *v, or -1 when s is anything else
 * or the value does not fit 64 bits. No sign, no spaces. */
int ns_parse_kmg(const char *s, int allow_b, unsigned long long *v);
/* Parses a cap: a whole number from 1 to NS_MAXELEMS, optionally with a K, M or G suffix
 * (times 2^10, 2^20, 2^30). 0 with *cap set, or -1 with err. */
int ns_max_elements_parse(const char *s, size_t *cap, char *err);
/* 0 when a tensor of n elements fits the cap in force, else -1 with err naming n, the cap
 * and NS_MAX_ELEMENTS. */
int ns_elements_check(size_t n, char *err);
/* Checks rank and shape: 0 if acceptable, -1 with err otherwise (rank 1..4, no zero
 * dimension, product <= NS_MAXELEMS and free of overflow). */
int ns_shape_check(int rank, const size_t *shape, char *err);
/* Formats a shape as "(5, 4)". */
void ns_shape_format(int rank, const size_t *shape, char *buf, size_t len);

#endif
