/* file.c: tensors and text from and to files; atomic writes. See file.h. */
#include "explore/file.h"
#include "core/text.h"

#include <dirent.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/half.h"
#include "core/npy.h"
#include "explore/state_priv.h"

/* Files above this size are refused before reading (the largest tensor plus headroom). */
#define MAX_TENSOR_FILE ((size_t)NS_MAXELEMS * 8 + ((size_t)1 << 20))

ns_file_kind ns_file_kind_of(const char *path) {
  const char *slash = strrchr(path, '/');
  const char *dot = strrchr(slash ? slash : path, '.');
  if (dot && strcasecmp(dot, ".npy") == 0) return NS_FILE_NPY;
  if (dot && strcasecmp(dot, ".csv") == 0) return NS_FILE_CSV;
  if (dot && strcasecmp(dot, ".safetensors") == 0) return NS_FILE_SAFETENSORS;
  return NS_FILE_UNKNOWN;
}

static int is_dir(const char *path) {
  struct stat st;
  return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *ns_file_unknown_why(const char *path) {
  if (is_dir(path)) return "is a directory (give a .npy, .csv or .safetensors file)";
  return "not a .npy, .csv or .safetensors file";
}

int ns_file_open_regular(const char *path, char *err) {
  /* O_NONBLOCK: opening a FIFO for reading would wait for a writer; a device may block too.
   * Whatever it is, it is looked at before anything is read. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return ns_seterr(err, "%s", strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return ns_seterr(err, "%s", strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return ns_seterr(err, S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
  }
  int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  return fd;
}

FILE *ns_file_fopen_regular(const char *path, char *err) {
  int fd = ns_file_open_regular(path, err);
  if (fd < 0) return NULL;
  FILE *f = fdopen(fd, "rb");
  if (!f) {
    int e = errno;
    close(fd);
    ns_seterr(err, "%s", strerror(e));
  }
  return f;
}

char *ns_file_read(const char *path, size_t max, size_t *len, char *err) {
  FILE *f = ns_file_fopen_regular(path, err);
  if (!f) return NULL;
  long long size = -1;
  if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
  if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
    int e = errno;
    fclose(f);
    ns_seterr(err, "cannot determine the file size: %s", strerror(e));
    return NULL;
  }
  if ((unsigned long long)size > max) {
    fclose(f);
    ns_seterr(err, "file of %lld bytes is too large (at most %zu)", size, max);
    return NULL;
  }
  char *buf = malloc((size_t)size + 1);
  if (!buf) {
    fclose(f);
    ns_seterr(err, "out of memory reading %lld bytes", size);
    return NULL;
  }
  size_t got = fread(buf, 1, (size_t)size, f);
  int rerr = ferror(f), e = errno;
  fclose(f);
  if (rerr || got != (size_t)size) {
    free(buf);
    ns_seterr(err, "read error: %s", rerr ? strerror(e) : "file changed size");
    return NULL;
  }
  buf[size] = '\0';
  if (len) *len = (size_t)size;
  return buf;
}

ns_tensor *ns_file_load(const char *path, char *err) {
  return ns_file_load_named(path, NULL, 0, err);
}

/* Opens path for reading: the descriptor and its size. -1 with err. */
static int open_sized(const char *path, unsigned long long *size, char *err) {
  int fd = ns_file_open_regular(path, err);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return ns_seterr(err, "%s", strerror(e));
  }
  *size = (unsigned long long)st.st_size;
  return fd;
}

/* Reads exactly len bytes at offset off. 0, or -1 with err. */
static int read_at(int fd, void *buf, size_t len, unsigned long long off, char *err) {
  unsigned char *p = buf;
  while (len > 0) {
    ssize_t r = pread(fd, p, len, (off_t)off);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return ns_seterr(err, "read error: %s", strerror(errno));
    if (r == 0) return ns_seterr(err, "read error: the file is shorter than expected");
    p += r;
    len -= (size_t)r;
    off += (unsigned long long)r;
  }
  return 0;
}

/* The safetensors header of an open file into ix. */
static int st_index_fd(int fd, unsigned long long size, ns_st_index *ix, char *err) {
  unsigned char head[8];
  char e[NS_ERRLEN] = "";
  uint64_t hlen;
  if (size < 8)
    return ns_seterr(
        err, "not a safetensors file: %llu bytes, shorter than its 8-byte header length", size);
  if (read_at(fd, head, 8, 0, err)) return -1;
  if (ns_st_header_len(head, 8, size, &hlen, e)) return ns_seterr(err, "%s", e);
  unsigned char *buf = malloc((size_t)hlen + 8);
  if (!buf)
    return ns_seterr(err, "out of memory for a header of %llu bytes", (unsigned long long)hlen);
  int rc = read_at(fd, buf, (size_t)hlen + 8, 0, err);
  if (rc == 0 && ns_st_parse(buf, (size_t)hlen + 8, size, ix, e) != 0) rc = ns_seterr(err, "%s", e);
  free(buf);
  return rc;
}

int ns_file_tensors(const char *path, ns_st_index *ix, char *err) {
  if (!path || !ix) return ns_seterr(err, "no path or index");
  memset(ix, 0, sizeof *ix);
  unsigned long long size;
  int fd = open_sized(path, &size, err);
  if (fd < 0) return -1;
  int rc = st_index_fd(fd, size, ix, err);
  close(fd);
  return rc;
}

/* One form of the list: full (name (dtype, [shape])) or names only; only whole entries,
 * then "and N more" when the rest does not fit. Returns how many entries it left out. */
static size_t list_form(const ns_st_index *ix, int full, char *buf, size_t len) {
  size_t at = 0, k = 0;
  buf[0] = '\0';
  for (; k < ix->ntensors; k++) {
    const ns_st_entry *e = &ix->t[k];
    char item[200], shp[96] = "";
    size_t w = 0;
    for (int d = 0; d < e->rank && w < sizeof shp - 24; d++)
      w += (size_t)snprintf(shp + w, sizeof shp - w, d ? ", %zu" : "%zu", e->shape[d]);
    int n = full ? snprintf(item, sizeof item, "%s%s (%s, [%s])", k ? ", " : "", e->name,
                            ns_st_dtype_names[e->dtype], shp)
                 : snprintf(item, sizeof item, "%s%s", k ? ", " : "", e->name);
    /* room for this entry and, after it, ", and 999 more (normscope audit FILE lists all)" */
    size_t tail = k + 1 < ix->ntensors ? 52 : 0;
    if (n < 0 || at + (size_t)n + tail >= len) break;
    memcpy(buf + at, item, (size_t)n + 1);
    at += (size_t)n;
  }
  if (k < ix->ntensors)
    snprintf(buf + at, len - at, "%sand %zu more (normscope audit FILE lists all)", at ? ", " : "",
             ix->ntensors - k);
  return ix->ntensors - k;
}

void ns_file_list_tensors(const ns_st_index *ix, char *buf, size_t len) {
  if (len == 0) return;
  buf[0] = '\0';
  if (!ix || ix->ntensors == 0) {
    snprintf(buf, len, "(no tensors)");
    return;
  }
  /* the full form when every entry fits whole, else the names (normscope audit FILE lists
     the dtypes and shapes) */
  if (list_form(ix, 1, buf, len) > 0) list_form(ix, 0, buf, len);
}

/* The entry of ix that `name` picks (NULL: the only loadable one), with a message that
 * lists the tensors when the choice is wrong or missing. -1 with err. */
static int st_pick(const ns_st_index *ix, const char *name, char *err) {
  char list[192]; /* a message names a few tensors: the list keeps its size, not err's */
  ns_file_list_tensors(ix, list, sizeof list);
  if (name) {
    int k = ns_st_find(ix, name);
    if (k < 0) return ns_seterr(err, "no tensor named \"%.40s\"; the file holds %s", name, list);
    char e[NS_ERRLEN];
    if (ns_st_loadable(ix, (size_t)k, e)) return ns_seterr(err, "%s", e);
    return k;
  }
  int found = -1, count = 0;
  for (size_t k = 0; k < ix->ntensors; k++)
    if (ns_st_loadable(ix, k, NULL) == 0) {
      if (found < 0) found = (int)k;
      count++;
    }
  if (count == 1) return found;
  if (count == 0)
    return ns_seterr(err, "no loadable tensor (F16, BF16, F32, F64 of rank 1 to 4): %s", list);
  /* the tensors no explorer can open (an I64 index, a rank-5 weight) are named too */
  int skipped = (int)ix->ntensors - count;
  char sk[48] = "";
  if (skipped > 0) snprintf(sk, sizeof sk, " (%d more not loadable)", skipped);
  return ns_seterr(err, "%d tensors%s; name one of %s", count, sk, list);
}

/* A .npy whose elements are stored as the tensor holds them (little-endian floats, or uint16
 * read as bf16, on a little-endian machine): its data read straight into the tensor, with
 * no buffer of the whole file and no pass over each element; the same bits as
 * ns_npy_parse_flags (tests/unit/test_file_load.c holds the two together). NULL with
 * *failed set and err on a failure; NULL alone when the file is stored otherwise. */
static ns_tensor *npy_read_native(const ns_file_map *m, int *failed, char *err) {
  const uint16_t one = 1;
  int little = *(const unsigned char *)&one == 1;
  *failed = 0;
  if (!m->npy || !little || m->info.big || m->elem_size != ns_dtype_size(m->dtype) ||
      (m->info.elem_kind != NS_NPY_FLOAT && m->dtype != NS_BF16))
    return NULL;
  char e[NS_ERRLEN] = "";
  ns_tensor *t = ns_tensor_new(m->rank, m->shape, m->dtype, e);
  if (!t) {
    *failed = 1;
    ns_seterr(err, "%s", e[0] ? e : "out of memory");
    return NULL;
  }
  if (read_at(m->fd, t->data, m->n * m->elem_size, m->data_offset, err) != 0) {
    *failed = 1;
    ns_tensor_free(t);
    return NULL;
  }
  return t;
}

ns_tensor *ns_file_load_named(const char *path, const char *name, unsigned flags, char *err) {
  return ns_file_load_note(path, name, flags, NULL, err);
}

ns_tensor *ns_file_load_note(const char *path, const char *name, unsigned flags, char *note,
                             char *err) {
  if (note) note[0] = 0;
  if (!path) {
    ns_seterr(err, "no path");
    return NULL;
  }
  ns_file_kind k = ns_file_kind_of(path);
  if (k == NS_FILE_UNKNOWN) {
    if (is_dir(path))
      ns_seterr(err, "is a directory");
    else
      ns_seterr(err, "unknown file type (the name must end in .npy, .csv or .safetensors)");
    return NULL;
  }
  if (name && k != NS_FILE_SAFETENSORS) {
    ns_seterr(err, "only .safetensors files hold named tensors");
    return NULL;
  }
  if (k == NS_FILE_SAFETENSORS) { /* header first, then only the chosen tensor's bytes */
    ns_file_map m;
    if (ns_file_map_open(&m, path, name, flags, err)) return NULL;
    if (note) snprintf(note, NS_ERRLEN, "%s", m.note);
    ns_tensor *t = ns_file_map_tensor(&m, err);
    ns_file_map_close(&m);
    return t;
  }
  if (k == NS_FILE_NPY) { /* the header first: a tensor above the cap is refused unread */
    ns_file_map m;
    if (ns_file_map_open(&m, path, NULL, flags, err)) return NULL;
    if (note) snprintf(note, NS_ERRLEN, "%s", m.note);
    char shp[128], why[NS_ERRLEN];
    int over = ns_elements_check(m.n, why);
    ns_shape_format(m.rank, m.shape, shp, sizeof shp);
    if (over) {
      ns_file_map_close(&m);
      ns_seterr(err, "a tensor of shape %s: %s", shp, why);
      return NULL;
    }
    int failed;
    ns_tensor *t = npy_read_native(&m, &failed, err);
    ns_file_map_close(&m);
    if (t || failed) return t; /* else stored otherwise: parsed element by element */
  }
  size_t len = 0;
  char e[NS_ERRLEN] = "";
  char *buf = ns_file_read(path, MAX_TENSOR_FILE, &len, err);
  if (!buf) return NULL;
  size_t hline = 0;
  char head[64];
  ns_tensor *t = k == NS_FILE_NPY
                     ? ns_npy_parse_flags((const unsigned char *)buf, len,
                                          (flags & NS_FILE_U2_BF16) ? NS_NPY_U2_BF16 : 0, e)
                     : ns_csv_parse_header(buf, len, &hline, head, sizeof head, e);
  free(buf);
  if (t && hline && note) { /* the file's bytes: shown with controls in caret notation */
    char safe[4 * sizeof head];
    ns_text_sanitize(safe, sizeof safe, head, strlen(head), 0);
    snprintf(note, NS_ERRLEN, "its line %zu, %s%s, is a header of names: skipped", hline, safe,
             strlen(head) == sizeof head - 1 ? "..." : "");
  }
  if (!t) ns_seterr(err, "%s", e[0] ? e : "cannot parse the file");
  return t;
}

/* ---- chunked reading ------------------------------------------------------------- */

void ns_file_map_close(ns_file_map *m) {
  if (!m) return;
  if (m->win) munmap(m->win, m->win_len);
  if (m->fd >= 0) close(m->fd);
  ns_tensor_free(m->t);
  memset(m, 0, sizeof *m);
  m->fd = -1;
}

/* m->note for integer or boolean elements, which load as fp64 (the explorer review: an
 * int32 file opened as fp64 without a word) */
static void int_note(ns_file_map *m) {
  if (!m->npy || m->info.elem_kind == NS_NPY_FLOAT || m->dtype != NS_FP64) return;
  if (m->info.elem_kind == NS_NPY_BOOL) {
    snprintf(m->note, sizeof m->note, "its bool values are read as fp64 0 and 1");
    return;
  }
  snprintf(m->note, sizeof m->note, "its %sint%zu values are read as fp64 (exact to 2^53)",
           m->info.elem_kind == NS_NPY_UINT ? "u" : "", 8 * m->elem_size);
}

int ns_file_map_open(ns_file_map *m, const char *path, const char *name, unsigned flags,
                     char *err) {
  if (!m) return ns_seterr(err, "no map");
  memset(m, 0, sizeof *m);
  m->fd = -1;
  if (!path) return ns_seterr(err, "no path");
  ns_file_kind k = ns_file_kind_of(path);
  if (k == NS_FILE_UNKNOWN || k == NS_FILE_CSV || (name && k != NS_FILE_SAFETENSORS)) {
    if (name && k != NS_FILE_SAFETENSORS)
      return ns_seterr(err, "only .safetensors files hold named tensors");
    m->t = ns_file_load_note(path, NULL, flags, m->note, err);
    if (!m->t) return -1;
    m->dtype = m->t->dtype;
    m->rank = m->t->rank;
    memcpy(m->shape, m->t->shape, sizeof m->shape);
    m->n = m->t->n;
    m->elem_size = ns_dtype_size(m->dtype);
    return 0;
  }
  int fd = open_sized(path, &m->file_size, err);
  if (fd < 0) return -1;
  m->fd = fd;
  char e[NS_ERRLEN] = "";
  if (k == NS_FILE_NPY) {
    size_t want = m->file_size < 65536 ? (size_t)m->file_size : 65536;
    unsigned char *head = malloc(want ? want : 1);
    if (!head) {
      ns_file_map_close(m);
      return ns_seterr(err, "out of memory");
    }
    int rc = read_at(fd, head, want, 0, err);
    if (rc == 0 && ns_npy_header(head, want, m->file_size,
                                 (flags & NS_FILE_U2_BF16) ? NS_NPY_U2_BF16 : 0, &m->info, e))
      rc = ns_seterr(err, "%s", e);
    free(head);
    if (rc) {
      ns_file_map_close(m);
      return -1;
    }
    m->npy = 1;
    m->dtype = m->info.dtype;
    m->rank = m->info.rank;
    memcpy(m->shape, m->info.shape, sizeof m->shape);
    m->n = m->info.n;
    m->elem_size = m->info.elem_size;
    m->data_offset = m->info.data_offset;
    int_note(m);
    return 0;
  }
  ns_st_index ix;
  if (st_index_fd(fd, m->file_size, &ix, err)) {
    ns_file_map_close(m);
    return -1;
  }
  int pick = st_pick(&ix, name, err);
  if (pick < 0) {
    ns_st_free(&ix);
    ns_file_map_close(m);
    return -1;
  }
  const ns_st_entry *en = &ix.t[pick];
  ns_st_dtype_storage(en->dtype, &m->dtype);
  m->rank = en->rank ? en->rank : 1; /* a 0-d tensor (num_batches_tracked) is one value */
  for (int d = 0; d < NS_MAXRANK; d++) m->shape[d] = d < en->rank ? en->shape[d] : 1;
  m->n = en->n;
  m->elem_size = ns_dtype_size(m->dtype);
  m->data_offset = ix.data_start + en->begin;
  if (en->dtype == NS_ST_I64) { /* decoded as .npy's '<i8', refused beyond 2^53 */
    m->npy = 1;
    m->info = (ns_npy_info){.dtype = NS_FP64,
                            .rank = m->rank,
                            .n = m->n,
                            .elem_size = 8,
                            .data_offset = (size_t)m->data_offset,
                            .elem_kind = NS_NPY_INT};
    memcpy(m->info.shape, m->shape, sizeof m->info.shape);
  }
  snprintf(m->name, sizeof m->name, "%s", en->name);
  ns_st_free(&ix);
  int_note(m);
  return 0;
}

/* Maps the window holding file bytes [off, off+len): at least NS_FILE_MAP_WINDOW bytes
 * from the page holding off, or to off+len when that is further, and no further than the
 * file's end. The pages are populated at once (one fault for the window, not one per page). */
static int map_window(ns_file_map *m, unsigned long long off, size_t len, char *err) {
  if (m->win && off >= m->win_off && off + len <= m->win_off + m->win_len) return 0;
  if (m->win) munmap(m->win, m->win_len);
  m->win = NULL;
  long pg = sysconf(_SC_PAGESIZE);
  unsigned long long page = pg > 0 ? (unsigned long long)pg : 4096;
  unsigned long long start = off / page * page;
  unsigned long long end = start + NS_FILE_MAP_WINDOW;
  if (end < off + len) end = off + len;
  if (end > m->file_size) end = m->file_size;
  int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
  flags |= MAP_POPULATE;
#endif
  void *w = mmap(NULL, (size_t)(end - start), PROT_READ, flags, m->fd, (off_t)start);
  if (w == MAP_FAILED) return ns_seterr(err, "cannot map the file: %s", strerror(errno));
#ifdef POSIX_MADV_SEQUENTIAL
  posix_madvise(w, (size_t)(end - start), POSIX_MADV_SEQUENTIAL);
#endif
  m->win = w;
  m->win_len = (size_t)(end - start);
  m->win_off = start;
  return 0;
}

static int host_little(void) {
  const uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 1;
}

/* Little-endian element bytes to a double, for the safetensors dtypes. */
static double st_value(ns_dtype d, const unsigned char *p) {
  switch (d) {
  case NS_FP16:
    return ns_fp16_value((uint16_t)(p[0] | p[1] << 8));
  case NS_BF16:
    return ns_bf16_value((uint16_t)(p[0] | p[1] << 8));
  case NS_FP32: {
    uint32_t w = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    float f;
    memcpy(&f, &w, 4);
    return f;
  }
  default: {
    uint64_t w = 0;
    for (int b = 7; b >= 0; b--) w = w << 8 | p[b];
    double v;
    memcpy(&v, &w, 8);
    return v;
  }
  }
}

/* Host floats to doubles (the common case: vector conversions where the CPU has them). */
static void floats_to_doubles(const unsigned char *p, size_t n, double *out) {
  size_t i = 0;
#if defined(__SSE2__)
  for (; i + 4 <= n; i += 4) {
    __m128 f = _mm_loadu_ps((const float *)(const void *)(p + 4 * i));
    _mm_storeu_pd(out + i, _mm_cvtps_pd(f));
    _mm_storeu_pd(out + i + 2, _mm_cvtps_pd(_mm_movehl_ps(f, f)));
  }
#endif
  for (; i < n; i++) {
    float f;
    memcpy(&f, p + 4 * i, 4);
    out[i] = f;
  }
}

/* Little-endian fp16 or bf16 patterns to doubles (exact). */
static void halves_to_doubles(const unsigned char *p, size_t n, int bf16, double *out) {
  if (bf16)
    for (size_t i = 0; i < n; i++) out[i] = nk_b2f((uint16_t)(p[2 * i] | p[2 * i + 1] << 8));
  else
    for (size_t i = 0; i < n; i++) out[i] = nk_h2f((uint16_t)(p[2 * i] | p[2 * i + 1] << 8));
}

void ns_file_map_decode(const ns_file_map *m, const void *bytes, size_t len, double *out) {
  const unsigned char *p = bytes;
  if (m->t) {
    size_t first = (size_t)(p - (const unsigned char *)m->t->data) / m->elem_size;
    ns_tensor_read_range(m->t, first, len, out);
  } else if (m->npy && m->info.elem_kind == NS_NPY_FLOAT && !m->info.big && host_little() &&
             m->elem_size == 4) { /* the common case, without per-element decoding */
    floats_to_doubles(p, len, out);
  } else if (m->npy && m->info.elem_kind == NS_NPY_FLOAT && !m->info.big && host_little() &&
             m->elem_size == 8) {
    memcpy(out, p, len * 8);
  } else if (m->npy && m->info.elem_kind == NS_NPY_FLOAT && !m->info.big && m->elem_size == 2) {
    halves_to_doubles(p, len, m->info.dtype == NS_BF16, out);
  } else if (m->npy) {
    for (size_t i = 0; i < len; i++, p += m->elem_size) out[i] = ns_npy_value(&m->info, p);
  } else if (m->dtype == NS_FP16 || m->dtype == NS_BF16) {
    halves_to_doubles(p, len, m->dtype == NS_BF16, out);
  } else if (m->dtype == NS_FP32 && host_little()) {
    floats_to_doubles(p, len, out);
  } else if (m->dtype == NS_FP64 && host_little()) {
    memcpy(out, p, len * 8);
  } else {
    for (size_t i = 0; i < len; i++, p += m->elem_size) out[i] = st_value(m->dtype, p);
  }
}

const void *ns_file_map_bytes(ns_file_map *m, size_t first, size_t len, char *err) {
  if (!m) {
    ns_seterr(err, "no map");
    return NULL;
  }
  if (first > m->n || len > m->n - first) {
    ns_seterr(err, "elements %zu..%zu are beyond the tensor's %zu", first, first + len, m->n);
    return NULL;
  }
  if (m->t) return (const unsigned char *)m->t->data + first * m->elem_size;
  if (len > NS_FILE_MAP_SPAN / m->elem_size) {
    ns_seterr(err, "%zu elements are more than one mapping holds", len);
    return NULL;
  }
  unsigned long long off = m->data_offset + (unsigned long long)first * m->elem_size;
  if (map_window(m, off, len * m->elem_size, err)) return NULL;
  return (const unsigned char *)m->win + (off - m->win_off);
}

int ns_file_map_pread(const ns_file_map *m, size_t first, size_t len, void *raw, double *out,
                      char *err) {
  if (!m || (len && (!out || !raw))) return ns_seterr(err, "no map or buffer");
  if (first > m->n || len > m->n - first)
    return ns_seterr(err, "elements %zu..%zu are beyond the tensor's %zu", first, first + len,
                     m->n);
  if (m->t) {
    ns_tensor_read_range(m->t, first, len, out);
    return 0;
  }
  unsigned long long off = m->data_offset + (unsigned long long)first * m->elem_size;
  if (read_at(m->fd, raw, len * m->elem_size, off, err)) return -1;
  ns_file_map_decode(m, raw, len, out);
  return 0;
}

int ns_file_map_read(ns_file_map *m, size_t first, size_t len, double *out, char *err) {
  if (!m || (len && !out)) return ns_seterr(err, "no map or buffer");
  if (first > m->n || len > m->n - first)
    return ns_seterr(err, "elements %zu..%zu are beyond the tensor's %zu", first, first + len,
                     m->n);
  if (m->t) {
    ns_tensor_read_range(m->t, first, len, out);
    return 0;
  }
  size_t per = NS_FILE_MAP_WINDOW / 2 / m->elem_size; /* elements per mapping step */
  while (len > 0) {
    size_t step = len < per ? len : per;
    const void *p = ns_file_map_bytes(m, first, step, err);
    if (!p) return -1;
    if (m->npy && m->info.elem_kind != NS_NPY_FLOAT) /* an 8-byte integer beyond 2^53 */
      for (size_t i = 0; i < step; i++) {
        const unsigned char *q = (const unsigned char *)p + i * m->elem_size;
        if (!ns_npy_value_exact(&m->info, q)) {
          char e[NS_ERRLEN];
          ns_npy_inexact_error(&m->info, q, first + i, e);
          return ns_seterr(err, "%s%s%s", m->name, m->name[0] ? ": " : "", e);
        }
      }
    ns_file_map_decode(m, p, step, out);
    out += step;
    first += step;
    len -= step;
  }
  return 0;
}

ns_tensor *ns_file_map_tensor(ns_file_map *m, char *err) {
  if (!m) {
    ns_seterr(err, "no map");
    return NULL;
  }
  if (m->t) return ns_tensor_copy(m->t);
  char e[NS_ERRLEN] = "";
  ns_tensor *t = ns_tensor_new(m->rank, m->shape, m->dtype, e);
  if (!t) {
    ns_seterr(err, "%s", e);
    return NULL;
  }
  size_t chunk = 1 << 16;
  double *buf = malloc(chunk * sizeof *buf);
  if (!buf) {
    ns_tensor_free(t);
    ns_seterr(err, "out of memory");
    return NULL;
  }
  for (size_t i = 0; i < m->n; i += chunk) {
    size_t len = m->n - i < chunk ? m->n - i : chunk;
    if (ns_file_map_read(m, i, len, buf, err)) {
      free(buf);
      ns_tensor_free(t);
      return NULL;
    }
    for (size_t j = 0; j < len; j++) ns_tensor_set(t, i + j, buf[j]);
  }
  free(buf);
  if (m->win) { /* the mapping is not needed once the tensor is in memory */
    munmap(m->win, m->win_len);
    m->win = NULL;
  }
  return t;
}

int ns_file_save(const char *path, const ns_tensor *t, char *err) {
  ns_file_kind k = ns_file_kind_of(path);
  if (k == NS_FILE_UNKNOWN)
    return ns_seterr(err, "unknown file type (the name must end in .npy, .csv or .safetensors)");
  if (k == NS_FILE_CSV && t->rank > 2)
    return ns_seterr(err, "CSV holds rank 1 or 2 tensors, got rank %d (use .npy)", t->rank);
  size_t len = 0;
  char e[NS_ERRLEN] = "";
  void *data;
  if (k == NS_FILE_NPY) {
    data = ns_npy_serialize(t, &len, e);
  } else if (k == NS_FILE_SAFETENSORS) { /* one tensor, named "x" as the explorer calls it */
    const char *name = "x";
    data = ns_st_serialize(&t, &name, 1, &len, e);
  } else {
    data = ns_csv_serialize(t, e);
    if (data) len = strlen(data);
  }
  if (!data) return ns_seterr(err, "%s", e[0] ? e : "cannot serialize the tensor");
  int rc = ns_file_write_atomic(path, data, len, err);
  free(data);
  return rc;
}

/* fsync of the folder that holds path, so the rename itself is on disk: 0, or an errno.
 * A folder that cannot be synced by its nature (EINVAL: some file systems) counts as
 * synced: there is nothing more to do. */
static int sync_folder(const char *path) {
  const char *slash = strrchr(path, '/');
  size_t n = slash ? (slash == path ? 1 : (size_t)(slash - path)) : 1;
  char *dir = malloc(n + 1); /* not strndup: its block would escape malloc's wrappers */
  if (!dir) return ENOMEM;
  memcpy(dir, slash ? path : ".", n);
  dir[n] = '\0';
  int e = 0, fd = open(dir, O_RDONLY | O_DIRECTORY);
  if (fd < 0) {
    e = errno;
  } else {
    if (fsync(fd) != 0 && errno != EINVAL) e = errno;
    close(fd);
  }
  free(dir);
  return e;
}

/* The process's umask, without changing it: /proc/self/status says it (Linux 4.7 and
 * later); elsewhere umask() is set and put back at once. */
static mode_t current_umask(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (f) {
    char line[128];
    unsigned m;
    while (fgets(line, sizeof line, f))
      if (sscanf(line, "Umask: %o", &m) == 1) {
        fclose(f);
        return (mode_t)(m & 0777);
      }
    fclose(f);
  }
  mode_t m = umask(022);
  umask(m);
  return m;
}

/* ns_state_save's spill: the tensor as PREFIX.FIELD.HEX12.npy, HEX12 the first 12 hex digits
 * of its digest (bf16 as ml_dtypes saves it, '<V2', which loads back as bf16), with the
 * state file's mode. Named by its values, a new file never replaces the one the state file
 * on disk names: a kill between the two renames leaves that pair whole. */
typedef struct {
  const char *prefix;
  unsigned mode;
  char kept[NS_F_COUNT][4096]; /* the files this state names (one a field at most), which the
                                  sweep keeps */
  int nkept;
  int base_only; /* the state names the file by its name alone (a lesson's, beside it) */
} spill_to;

/* t as a .npy at path (bf16 as ml_dtypes saves it, '<V2'), atomically, with mode. */
static int write_npy(const char *path, const ns_tensor *t, unsigned mode, char *err) {
  ns_tensor bits = *t; /* bf16: the same two bytes a value, under fp16's header */
  if (t->dtype == NS_BF16) bits.dtype = NS_FP16;
  size_t len;
  unsigned char *buf = ns_npy_serialize(&bits, &len, err);
  if (!buf) return -1;
  if (t->dtype == NS_BF16) {
    char *d = strstr((char *)buf + 10, "'<f2'");
    if (d) d[2] = 'V';
  }
  char e[NS_ERRLEN];
  int rc = ns_file_write_atomic_mode(path, buf, len, mode, e);
  free(buf);
  if (rc != 0) ns_seterr(err, "%s: %s", path, e);
  return rc;
}

/* The name the state gives a spilled file at path: path, or its name alone. */
static void spill_name(const spill_to *to, char *path) {
  const char *slash = to->base_only ? strrchr(path, '/') : NULL;
  if (slash) memmove(path, slash + 1, strlen(slash + 1) + 1);
}

static int spill_npy(void *ud, const char *field, const ns_tensor *t, const char *hex, char *path,
                     size_t cap, char *err) {
  spill_to *to = ud;
  if ((size_t)snprintf(path, cap, "%s.%s.%.12s.npy", to->prefix, field, hex) >= cap)
    return ns_seterr(err, "the path is too long");
  if (to->nkept < NS_F_COUNT) snprintf(to->kept[to->nkept++], sizeof to->kept[0], "%s", path);
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) { /* else these values, written before */
    int rc = write_npy(path, t, to->mode, err);
    if (rc != 0) return rc;
  }
  spill_name(to, path);
  return 0;
}

/* After the state file is in place: the spilled files of earlier saves of it (PREFIX.*.HEX12.npy
 * that this state does not name) go. */
static void spill_sweep(const spill_to *to) {
  const char *slash = strrchr(to->prefix, '/');
  const char *base = slash ? slash + 1 : to->prefix;
  char dir[4096] = ".";
  if (slash) /* "/x" is in "/" */
    snprintf(dir, sizeof dir, "%.*s", slash == to->prefix ? 1 : (int)(slash - to->prefix),
             to->prefix);
  DIR *d = opendir(dir);
  if (!d) return;
  size_t bl = strlen(base);
  for (struct dirent *e; (e = readdir(d));) {
    const char *n = e->d_name;
    size_t l = strlen(n);
    /* BASE.FIELD.HEX12.npy */
    if (l < bl + 19 || strncmp(n, base, bl) != 0 || n[bl] != '.' || strcmp(n + l - 4, ".npy"))
      continue;
    const char *h = n + l - 16;
    int ok = h[-1] == '.' && h - 1 > n + bl + 1;
    /* FIELD has no dot: demo.b.x.HEX12.npy is state demo.b's, not demo's */
    for (const char *c = n + bl + 1; ok && c < h - 1; c++) ok = *c != '.';
    for (int i = 0; ok && i < 12; i++)
      ok = isxdigit((unsigned char)h[i]) && !isupper((unsigned char)h[i]);
    if (!ok) continue;
    char full[8192];
    snprintf(full, sizeof full, "%s/%s", dir, n);
    int named = 0;
    for (int i = 0; i < to->nkept; i++) {
      const char *k = strrchr(to->kept[i], '/');
      named |= strcmp(k ? k + 1 : to->kept[i], n) == 0;
    }
    if (!named) (void)unlink(full);
  }
  closedir(d);
}

/* A spill beside the state or lesson file at path (PREFIX is path without its .lua), or
 * NULL with err; spill_free lets it go. */
static spill_to *spill_new(const char *path, unsigned mode, int base_only, char *err) {
  size_t n = strlen(path);
  spill_to *to = calloc(1, sizeof *to);
  char *prefix = malloc(n + 1);
  if (!to || !prefix) {
    free(to);
    free(prefix);
    ns_seterr(err, "out of memory");
    return NULL;
  }
  memcpy(prefix, path, n + 1);
  if (n > 4 && strcmp(prefix + n - 4, ".lua") == 0) prefix[n - 4] = 0;
  to->prefix = prefix;
  to->mode = mode;
  to->base_only = base_only;
  return to;
}

static void spill_free(spill_to *to) {
  if (to) free((char *)to->prefix);
  free(to);
}

int ns_state_save(const ns_state *s, const char *path, unsigned mode, char *err) {
  if (!path || !path[0]) return ns_seterr(err, "no path");
  spill_to *to = spill_new(path, mode, 0, err);
  if (!to) return -1;
  char *text = ns_state_dump_spill(s, NS_DUMP_INLINE_MAX, spill_npy, to, err);
  int rc = text ? ns_file_write_atomic_mode(path, text, strlen(text), mode, err) : -1;
  if (rc == 0) spill_sweep(to);
  free(text);
  spill_free(to);
  return rc;
}

char *ns_state_dump_lesson(const ns_state *s, const char *lesson_path, char *err) {
  spill_to *to = spill_new(lesson_path, 0644, 1, err); /* a lesson's data is shared with it */
  if (!to) return NULL;
  ns_dump_opts o = {NS_DUMP_INLINE_MAX, spill_npy, to, NS_DUMP_INLINE_MAX, 1, 1};
  char *text = ns_state_dump_with(s, &o, err);
  spill_free(to);
  return text;
}

int ns_file_write_atomic(const char *path, const void *data, size_t len, char *err) {
  return ns_file_write_atomic_mode(path, data, len, 0644, err);
}

int ns_file_write_atomic_mode(const char *path, const void *data, size_t len, unsigned mode,
                              char *err) {
  if (!path || !path[0]) return ns_seterr(err, "no path");
  if (len && !data) return ns_seterr(err, "no data");
  if (mode & ~0777u) return ns_seterr(err, "mode %o is not a file permission", mode);
  size_t n = strlen(path);
  char *tmp = malloc(n + 16);
  if (!tmp) return ns_seterr(err, "out of memory");
  snprintf(tmp, n + 16, "%s.tmpXXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    int e = errno;
    free(tmp);
    return ns_seterr(err, "cannot create a temporary file beside it: %s", strerror(e));
  }
  const char *p = data;
  size_t left = len;
  int e = 0;
  while (left > 0) {
    ssize_t w = write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      e = w < 0 ? errno : EIO;
      break;
    }
    p += w;
    left -= (size_t)w;
  }
  if (!e && fsync(fd) != 0) e = errno;
  /* mkstemp makes 0600; the mode, less what the umask takes away (a private user's umask
   * 077 keeps a saved state 0600, as any new file of theirs), is set before the name is
   * visible. A file system that cannot change it leaves 0600, the safe side. */
  (void)fchmod(fd, (mode_t)mode & ~current_umask());
  if (close(fd) != 0 && !e) e = errno;
  if (!e && rename(tmp, path) != 0) e = errno;
  if (e) {
    unlink(tmp);
    free(tmp);
    return ns_seterr(err, "write error: %s", strerror(e));
  }
  free(tmp);
  if ((e = sync_folder(path)) != 0)
    return ns_seterr(err,
                     "written, but its folder cannot be synced (the new name may "
                     "not survive a crash): %s",
                     strerror(e));
  return 0;
}

const char *ns_file_state_dir(char *buf, size_t len) {
  const char *x = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
  if (x && x[0] == '/')
    snprintf(buf, len, "%s/normscope", x);
  else if (home && home[0])
    snprintf(buf, len, "%s/.local/state/normscope", home);
  else
    return NULL;
  return buf;
}

int ns_file_mkdirs(const char *dir, char *err) {
  size_t n = strlen(dir);
  char *p = malloc(n + 1);
  if (!p) return ns_seterr(err, "out of memory");
  memcpy(p, dir, n + 1);
  for (char *c = p + 1;; c++) {
    if (*c == '/' || *c == 0) {
      char keep = *c;
      *c = 0;
      if (mkdir(p, 0700) != 0 && errno != EEXIST) {
        int e = errno;
        ns_seterr(err, "cannot create %s: %s", p, strerror(e));
        free(p);
        return -1;
      }
      *c = keep;
      if (!keep) break;
    }
  }
  free(p);
  return 0;
}
