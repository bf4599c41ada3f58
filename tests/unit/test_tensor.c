/* test_tensor.c: tensor allocation, shape checks, typed storage and formatting. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdint.h>
#include <string.h>

#include "core/split.h"
#include "core/tensor.h"
#include "tap.h"

static int has(const char *err, const char *word) {
  return strstr(err, word) != NULL;
}

typedef struct {
  ns_tensor *t[4];
  char err[4][NS_ERRLEN];
  pthread_t owner;
  int reclaim_elsewhere;
} split_ctx;

/* each part makes one tensor of 1000 doubles */
static void alloc_part(void *ctx, size_t a, size_t b) {
  split_ctx *c = ctx;
  size_t one[1] = {1000};
  for (size_t k = a; k < b; k++) c->t[k] = ns_tensor_new(1, one, NS_FP64, c->err[k]);
}

static void count_reclaim(void *ud) {
  split_ctx *c = ud;
  if (!pthread_equal(pthread_self(), c->owner)) c->reclaim_elsewhere = 1;
}

int main(void) {
  char err[NS_ERRLEN];
  size_t s54[2] = {5, 4};
  ns_tensor *t = ns_tensor_new(2, s54, NS_FP64, err);
  tap_ok(t != NULL, "new (5, 4) fp64");
  tap_ok(t && t->n == 20 && t->rank == 2 && t->shape[0] == 5 && t->shape[1] == 4 &&
             t->shape[2] == 1 && t->shape[3] == 1,
         "n = 20, trailing shape entries are 1");
  tap_ok(t && ns_tensor_get(t, 7) == 0.0, "new tensor is zero-filled");
  ns_tensor_set(t, 7, 0.1);
  tap_close(ns_tensor_get(t, 7), 0.1, 0, "fp64 set/get keeps 0.1 exactly");
  ns_tensor *c = ns_tensor_copy(t);
  ns_tensor_set(t, 7, 2.0);
  tap_close(c ? ns_tensor_get(c, 7) : -1, 0.1, 0, "copy is deep");
  ns_tensor_free(c);
  ns_tensor_free(t);

  /* typed storage rounds once on write */
  size_t s3[1] = {3};
  double vals[3] = {1.00390625 + 1e-12, 65520.0, 0.1};
  ns_tensor *b = ns_tensor_from(1, s3, NS_BF16, vals, err);
  tap_close(ns_tensor_get(b, 0), 1.0078125, 0, "bf16 storage rounds once (1.0078125)");
  tap_ok(((uint16_t *)b->data)[0] == 0x3f81, "bf16 storage holds the 16-bit pattern 0x3f81");
  ns_tensor *h = ns_tensor_from(1, s3, NS_FP16, vals, err);
  tap_close(ns_tensor_get(h, 1), INFINITY, 0, "fp16 storage: 65520 -> inf");
  tap_close(ns_tensor_get(h, 2), 0.0999755859375, 0, "fp16 storage: 0.1 -> 0.0999755859375");
  ns_tensor *f = ns_tensor_from(1, s3, NS_FP32, vals, err);
  tap_close(ns_tensor_get(f, 2), (double)0.1f, 0, "fp32 storage: 0.1 -> 0.1f");
  tap_ok(f->dtype == NS_FP32 && ns_dtype_size(f->dtype) == 4, "fp32 storage is 4 bytes");
  double out[3];
  ns_tensor_read(h, out);
  tap_ok(out[0] == 1.00390625 && isinf(out[1]) && out[2] == 0.0999755859375,
         "read copies all elements (fp16: 1.00390625, inf, 0.0999755859375)");
  ns_tensor *hc = ns_tensor_copy(h);
  tap_ok(hc && hc->dtype == NS_FP16 && memcmp(hc->data, h->data, 6) == 0, "copy keeps fp16 bits");
  ns_tensor_free(hc);
  ns_tensor_free(b);
  ns_tensor_free(h);
  ns_tensor_free(f);

  /* rank 4 */
  size_t s4[4] = {2, 3, 4, 5};
  t = ns_tensor_new(4, s4, NS_FP16, err);
  tap_ok(t && t->n == 120, "rank 4 (2, 3, 4, 5) has 120 elements");
  ns_tensor_free(t);

  /* shape errors */
  t = ns_tensor_new(0, s4, NS_FP64, err);
  tap_ok(!t && has(err, "rank 0"), "rank 0 refused: %s", err);
  t = ns_tensor_new(5, s4, NS_FP64, err);
  tap_ok(!t && has(err, "rank 5"), "rank 5 refused: %s", err);
  size_t z[3] = {2, 0, 3};
  t = ns_tensor_new(3, z, NS_FP64, err);
  tap_ok(!t && has(err, "dimension 2"), "zero dimension refused: %s", err);
  size_t big[2] = {(size_t)1 << 16, ((size_t)1 << 15) + 1};
  t = ns_tensor_new(2, big, NS_FP64, err);
  tap_ok(!t && has(err, "too many"), "2^31 + 2^16 elements refused: %s", err);
  size_t ok31[2] = {(size_t)1 << 16, (size_t)1 << 15};
  tap_ok(ns_shape_check(2, ok31, err) == 0, "exactly NS_MAXELEMS passes the shape check");
  size_t huge[3] = {SIZE_MAX / 2, 4, 4};
  tap_ok(ns_shape_check(3, huge, err) == -1 && has(err, "too many"),
         "overflowing product refused: %s", err);
  size_t wrap[4] = {(size_t)1 << 32, (size_t)1 << 32, 1, 1};
  tap_ok(ns_shape_check(4, wrap, err) == -1, "product that wraps to 0 refused");
  tap_ok(ns_shape_check(1, NULL, err) == -1, "NULL shape refused");
  t = ns_tensor_new(1, s3, (ns_dtype)9, err);
  tap_ok(!t && has(err, "dtype"), "bad dtype refused: %s", err);
  tap_ok(ns_tensor_new(0, s4, NS_FP64, NULL) == NULL, "NULL err buffer is fine");
  ns_tensor_free(NULL);
  tap_ok(ns_tensor_copy(NULL) == NULL, "copy(NULL) is NULL, free(NULL) is fine");

  /* formatting */
  char buf[64];
  ns_shape_format(2, s54, buf, sizeof buf);
  tap_ok(strcmp(buf, "(5, 4)") == 0, "format (5, 4): %s", buf);
  ns_shape_format(1, s3, buf, sizeof buf);
  tap_ok(strcmp(buf, "(3)") == 0, "format (3): %s", buf);
  ns_shape_format(4, s4, buf, sizeof buf);
  tap_ok(strcmp(buf, "(2, 3, 4, 5)") == 0, "format rank 4: %s", buf);
  ns_shape_format(4, s4, buf, 6);
  tap_ok(strlen(buf) == 5 && strncmp(buf, "(2, 3", 5) == 0, "format truncates safely: %s", buf);

  /* sharing: one copy, many owners; the last frees it; unshare gives a writer its own */
  {
    ns_tensor *a = ns_tensor_new(1, s3, NS_FP64, err);
    ns_tensor *tb = ns_tensor_share(a), *w = ns_tensor_share(a);
    tap_ok(tb == a && w == a && ns_tensor_shared(a), "share: the same tensor, shared");
    tap_ok(ns_tensor_unshare(&w) == 0 && w != a && ns_tensor_shared(a),
           "unshare: a copy of its own, the others still share");
    ns_tensor_set(w, 0, 5);
    tap_ok(ns_tensor_get(a, 0) == 0, "  writing it leaves the shared one");
    ns_tensor_free(w);
    ns_tensor_free(tb);
    tap_ok(!ns_tensor_shared(a) && ns_tensor_unshare(&a) == 0, "the last owner is alone");
    ns_tensor_free(a);
  }

  /* memory accounts: tensors charge the thread's account; past the limit, refused */
  {
    size_t one[1] = {1000}; /* 8000 bytes and the struct */
    ns_mem_account *acct = ns_mem_account_new(20000);
    ns_mem_account *prev = ns_mem_account_use(acct);
    ns_tensor *a = ns_tensor_new(1, one, NS_FP64, err);
    ns_tensor *tb = ns_tensor_new(1, one, NS_FP64, err);
    tap_ok(a && tb && ns_mem_used(acct) == 2 * (8000 + sizeof *a) && !ns_mem_refused(acct),
           "two tensors charged: %zu bytes", ns_mem_used(acct));
    ns_tensor *tc = ns_tensor_new(1, one, NS_FP64, err);
    tap_ok(!tc && has(err, "over the memory cap") && ns_mem_refused(acct), "a third is refused: %s",
           err);
    ns_tensor *d = ns_tensor_share(a);
    tap_ok(ns_mem_used(acct) == 2 * (8000 + sizeof *a), "a share charges nothing");
    ns_tensor_free(d);
    ns_tensor_free(tb);
    tap_ok(ns_mem_used(acct) == 8000 + sizeof *a, "the freed one gives its bytes back");
    size_t other = 15000;
    ns_mem_account_set_owner(acct, &other, NULL, NULL);
    tap_ok(!ns_tensor_new(1, one, NS_FP64, err), "the owner's other bytes count too");
    ns_mem_account_use(prev);
    ns_mem_account_release(acct); /* a still holds it */
    ns_tensor *e = ns_tensor_new(1, one, NS_FP64, err);
    tap_ok(e && !e->acct, "without an account nothing is charged");
    ns_tensor_free(e);
    ns_tensor_free(a); /* the account goes with it (ASan would see a leak) */
  }
  /* the parts ns_split_run gives to other threads charge the caller's account */
  {
    size_t one[1] = {1000};
    size_t each = 8000 + sizeof(ns_tensor);
    ns_mem_account *acct = ns_mem_account_new(4 * each);
    split_ctx sc = {{NULL}, {""}, pthread_self(), 0};
    ns_mem_account_set_owner(acct, NULL, count_reclaim, &sc);
    ns_mem_account *prev = ns_mem_account_use(acct);
    ns_split_run(4, 4, alloc_part, &sc);
    int all = 1;
    for (int k = 0; k < 4; k++) all = all && sc.t[k] && sc.t[k]->acct == acct;
    tap_ok(all && ns_mem_used(acct) == 4 * each && !ns_mem_refused(acct),
           "four parts on four threads: all four tensors charged (%zu bytes)", ns_mem_used(acct));
    for (int k = 0; k < 4; k++) ns_tensor_free(sc.t[k]), sc.t[k] = NULL;
    ns_tensor *room = ns_tensor_new(1, one, NS_FP64, err); /* one part's room taken */
    ns_split_run(4, 4, alloc_part, &sc);
    int got = 0, said = 0;
    for (int k = 0; k < 4; k++) {
      got += sc.t[k] != NULL;
      said += !sc.t[k] && has(sc.err[k], "over the memory cap");
    }
    tap_ok(got == 3 && said == 1 && ns_mem_refused(acct) && ns_mem_used(acct) == 4 * each,
           "past the cap one part is refused, whichever thread it ran on (%d made)", got);
    tap_ok(!sc.reclaim_elsewhere, "the reclaim callback ran on the owner's thread only");
    for (int k = 0; k < 4; k++) ns_tensor_free(sc.t[k]);
    ns_tensor_free(room);
    tap_ok(ns_mem_used(acct) == 0, "every part's tensor gave its bytes back");

    /* charged blocks: plain memory charged like a tensor, given back whenever it is freed */
    ns_mem_clear_refused(acct);
    char *blk = ns_mem_alloc(3 * each);
    tap_ok(blk && ns_mem_used(acct) == 3 * each, "a charged block counts its bytes");
    tap_ok(!ns_mem_alloc(2 * each) && ns_mem_refused(acct), "a block past the cap is refused");
    char *g = ns_mem_realloc(blk, 4 * each);
    tap_ok(g && ns_mem_used(acct) == 4 * each, "growing a block charges the difference");
    tap_ok(!ns_mem_realloc(g, 5 * each) && ns_mem_used(acct) == 4 * each,
           "growing past the cap leaves the block as it was");
    g = ns_mem_realloc(g, each);
    tap_ok(g && ns_mem_used(acct) == each, "shrinking gives the difference back");
    ns_mem_account_use(prev);
    ns_mem_account_release(acct); /* the block still holds it */
    ns_mem_free(g);               /* and the account goes with it (ASan would see a leak) */
    char *u = ns_mem_alloc(16);
    tap_ok(u != NULL, "without an account a block is plain malloc");
    ns_mem_free(u);
  }
  {
    /* ns_tensor_convert_range: the bits of read_range then write_range, for every pair of
       dtypes, on random bit patterns (NaNs with payloads, infinities, subnormals, the
       rounding boundaries of fp16 and bf16 among them) */
    size_t nn[1] = {70000};
    ns_tensor *src[NS_DTYPE_COUNT];
    uint64_t q = 0x9e3779b97f4a7c15ull;
    for (int d = 0; d < NS_DTYPE_COUNT; d++) {
      src[d] = ns_tensor_new_uninit(1, nn, (ns_dtype)d, err);
      unsigned char *bytes = src[d]->data;
      for (size_t i = 0; i < nn[0] * ns_dtype_size((ns_dtype)d); i++) {
        q ^= q << 13, q ^= q >> 7, q ^= q << 17;
        bytes[i] = (unsigned char)(q >> 24);
      }
    }
    float *f32 = src[NS_FP32]->data; /* the fp16/bf16 halfway points and the edges, exactly */
    const uint32_t edge[] = {0x33000000u, 0x33000001u, 0x387fe000u, 0x38800000u, 0x477ff000u,
                             0x477fefffu, 0x47800000u, 0x7f800000u, 0x7f800001u, 0xffc00001u,
                             0x3f808000u, 0x3f818000u, 0x7f7f8000u, 0x00000001u, 0x80000000u};
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++) memcpy(&f32[i], &edge[i], 4);
    int same = 1;
    for (int a = 0; a < NS_DTYPE_COUNT; a++)
      for (int bd = 0; bd < NS_DTYPE_COUNT; bd++) {
        ns_tensor *fast = ns_tensor_new(1, nn, (ns_dtype)bd, err);
        ns_tensor *slow = ns_tensor_new(1, nn, (ns_dtype)bd, err);
        double *mid = malloc(nn[0] * sizeof *mid);
        ns_tensor_convert_range(src[a], fast, 3, nn[0] - 3);
        ns_tensor_read_range(src[a], 3, nn[0] - 3, mid);
        ns_tensor_write_range(slow, 3, nn[0] - 3, mid);
        int ok = memcmp(fast->data, slow->data, nn[0] * ns_dtype_size((ns_dtype)bd)) == 0;
        if (!ok)
          tap_diag("convert_range %s -> %s differs", ns_dtype_name((ns_dtype)a),
                   ns_dtype_name((ns_dtype)bd));
        same &= ok;
        free(mid);
        ns_tensor_free(fast);
        ns_tensor_free(slow);
      }
    tap_ok(same, "convert_range gives the bits of read_range + write_range for every dtype pair");
    for (int d = 0; d < NS_DTYPE_COUNT; d++) ns_tensor_free(src[d]);
  }
#if defined(__SANITIZE_ADDRESS__)
#define ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN 1
#endif
#endif
#ifdef ASAN /* tensor.c uses malloc there, which AddressSanitizer checks */
  tap_diag("large tensors' own mappings: not under AddressSanitizer");
#else
  {
    /* large tensors: their own 2 MB-aligned mappings, kept when freed and reused, and a
       reused mapping handed to ns_tensor_new is zeroed first */
    size_t big24[1] = {(size_t)3 << 20}; /* 24 MB of fp64 */
    ns_tensor *u = ns_tensor_new_uninit(1, big24, NS_FP64, err);
    tap_ok(u && ((uintptr_t)u->data & (((uintptr_t)2 << 20) - 1)) == 0 && u->mapped >= 24u << 20,
           "a 24 MB tensor has a mapping of its own on a 2 MB boundary");
    ns_mem_keep_freed();
    size_t kept0 = ns_mem_kept_bytes();
    memset(u->data, 0xff, u->n * sizeof(double));
    void *where = u->data;
    ns_tensor_free(u);
    tap_ok(ns_mem_kept_bytes() == kept0 + (24u << 20), "freed, its mapping is kept (24 MB)");
    ns_tensor *zt = ns_tensor_new(1, big24, NS_FP64, err);
    int zero = zt && zt->data == where;
    for (size_t i = 0; zero && i < zt->n; i++) zero = ((uint64_t *)zt->data)[i] == 0;
    tap_ok(zero && ns_mem_kept_bytes() == kept0,
           "the next one takes the kept mapping, zeroed: its 0xff bytes are gone");
    ns_tensor_free(zt);
    size_t small[1] = {(size_t)1 << 20}; /* 8 MB */
    ns_tensor *s8 = ns_tensor_new_uninit(1, small, NS_FP64, err);
    tap_ok(s8 && s8->data == where && s8->mapped == 24u << 20 && ns_mem_kept_bytes() == kept0,
           "a smaller tensor takes a kept mapping up to four times its size whole");
    ns_tensor_free(s8);
    ns_tensor *again = ns_tensor_new_uninit(1, big24, NS_FP64, err);
    tap_ok(again && again->data == where,
           "  which the next tensor of the first size finds whole (an fp16 output between two "
           "fp64 ones)");
    size_t big40[1] = {(size_t)5 << 20}; /* 40 MB */
    ns_tensor *b40 = ns_tensor_new_uninit(1, big40, NS_FP64, err);
    void *where40 = b40 ? b40->data : NULL;
    ns_tensor_free(b40);
    s8 = ns_tensor_new_uninit(1, small, NS_FP64, err);
    tap_ok(s8 && s8->data == where40 && s8->mapped == 8u << 20 && ns_mem_kept_bytes() == kept0,
           "a kept mapping more than four times the size is cut to it, the rest given back");
    ns_tensor_free(s8);
    ns_tensor_free(again);
#if defined(__linux__)
    /* a tensor longer than every kept mapping gets the longest one's pages at its head
       (moved, not copied: its bytes are still there), zeroed when ns_tensor_new asks */
    size_t big56[1] = {(size_t)7 << 20}, big120[1] = {(size_t)15 << 20};
    ns_tensor *u56 = ns_tensor_new_uninit(1, big56, NS_FP64, err);
    if (u56) memset(u56->data, 0xab, u56->n * sizeof(double));
    ns_tensor_free(u56);
    ns_tensor *u120 = ns_tensor_new_uninit(1, big120, NS_FP64, err);
    const unsigned char *mb = u120 ? u120->data : NULL;
    size_t last = ((size_t)56 << 20) - 1;
    tap_ok(mb && mb[0] == 0xab && mb[last] == 0xab,
           "a longer tensor takes the longest kept mapping's pages at its head (bytes %02x %02x)",
           mb ? mb[0] : 0, mb ? mb[last] : 0);
    ns_tensor_free(u120);
    size_t big200[1] = {(size_t)25 << 20};
    ns_tensor *z200 = ns_tensor_new(1, big200, NS_FP64, err);
    int zeroed = z200 != NULL;
    for (size_t i = 0; zeroed && i < ((size_t)120 << 20); i += 4096)
      zeroed = ((const unsigned char *)z200->data)[i] == 0;
    tap_ok(zeroed, "  and ns_tensor_new zeroes them");
    ns_tensor_free(z200);
#endif
    /* under an address-space limit, the kept mappings give way to a new one that would not
       fit beside them (in a child: the limit stays there) */
    pid_t pid = fork();
    if (pid == 0) {
      ns_tensor *k3[3];
      for (int i = 0; i < 3; i++) k3[i] = ns_tensor_new_uninit(1, big24, NS_FP64, err);
      for (int i = 0; i < 3; i++) ns_tensor_free(k3[i]); /* 72 MB kept */
      unsigned long vm = 0;
      char line[256];
      FILE *fs = fopen("/proc/self/status", "r");
      while (fs && fgets(line, sizeof line, fs))
        if (strncmp(line, "VmSize:", 7) == 0) vm = strtoul(line + 7, NULL, 10);
      if (fs) fclose(fs);
      /* room for 40 MB more than now: a 48 MB tensor fits only once the 72 MB are gone */
      struct rlimit rl = {(vm + (40ul << 10)) << 10, (vm + (40ul << 10)) << 10};
      if (!vm || setrlimit(RLIMIT_AS, &rl) != 0) _exit(2);
      size_t b48[1] = {(size_t)6 << 20};
      ns_tensor *t48 = ns_tensor_new_uninit(1, b48, NS_FP64, err);
      _exit(t48 && ns_mem_kept_bytes() == 0 ? 0 : 1);
    }
    int wst = 0;
    waitpid(pid, &wst, 0);
    tap_ok(pid > 0 && WIFEXITED(wst) && WEXITSTATUS(wst) == 0,
           "under ulimit -v, kept mappings are given back for a new tensor (child status %d)",
           WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
    size_t little[1] = {1000};
    ns_tensor *m = ns_tensor_new(1, little, NS_FP64, err);
    tap_ok(m && m->mapped == 0, "a small tensor comes from malloc");
    ns_tensor_free(m);
  }
#endif
  tap_diag("tensor tests done");
  return tap_done();
}
