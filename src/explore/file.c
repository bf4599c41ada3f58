/* file.c: tensors and text from and to files; atomic writes. See file.h. */
#include "explore/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/npy.h"
#include "explore/priv.h"

/* Files above this size are refused before reading (the largest tensor plus headroom). */
#define MAX_TENSOR_FILE ((size_t)NS_MAXELEMS * 8 + ((size_t)1 << 20))

ns_file_kind ns_file_kind_of(const char *path) {
  const char *slash = strrchr(path, '/');
  const char *dot = strrchr(slash ? slash : path, '.');
  if (dot && strcasecmp(dot, ".npy") == 0) return NS_FILE_NPY;
  if (dot && strcasecmp(dot, ".csv") == 0) return NS_FILE_CSV;
  return NS_FILE_UNKNOWN;
}

char *ns_file_read(const char *path, size_t max, size_t *len, char *err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    ns_explore_fail(err, "%s", strerror(errno));
    return NULL;
  }
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(f);
    ns_explore_fail(err, "is a directory");
    return NULL;
  }
  long long size = -1;
  if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
  if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
    int e = errno;
    fclose(f);
    ns_explore_fail(err, "cannot determine the file size: %s", strerror(e));
    return NULL;
  }
  if ((unsigned long long)size > max) {
    fclose(f);
    ns_explore_fail(err, "file of %lld bytes is too large (at most %zu)", size, max);
    return NULL;
  }
  char *buf = malloc((size_t)size + 1);
  if (!buf) {
    fclose(f);
    ns_explore_fail(err, "out of memory reading %lld bytes", size);
    return NULL;
  }
  size_t got = fread(buf, 1, (size_t)size, f);
  int rerr = ferror(f), e = errno;
  fclose(f);
  if (rerr || got != (size_t)size) {
    free(buf);
    ns_explore_fail(err, "read error: %s", rerr ? strerror(e) : "file changed size");
    return NULL;
  }
  buf[size] = '\0';
  if (len) *len = (size_t)size;
  return buf;
}

ns_tensor *ns_file_load(const char *path, char *err) {
  ns_file_kind k = ns_file_kind_of(path);
  if (k == NS_FILE_UNKNOWN) {
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
      ns_explore_fail(err, "is a directory");
    else
      ns_explore_fail(err, "unknown file type (the name must end in .npy or .csv)");
    return NULL;
  }
  size_t len = 0;
  char e[NS_ERRLEN] = "";
  char *buf = ns_file_read(path, MAX_TENSOR_FILE, &len, err);
  if (!buf) return NULL;
  ns_tensor *t = k == NS_FILE_NPY ? ns_npy_parse((const unsigned char *)buf, len, e)
                                  : ns_csv_parse(buf, len, e);
  free(buf);
  if (!t) ns_explore_fail(err, "%s", e[0] ? e : "cannot parse the file");
  return t;
}

int ns_file_save(const char *path, const ns_tensor *t, char *err) {
  ns_file_kind k = ns_file_kind_of(path);
  if (k == NS_FILE_UNKNOWN)
    return ns_explore_fail(err, "unknown file type (the name must end in .npy or .csv)");
  if (k == NS_FILE_CSV && t->rank > 2)
    return ns_explore_fail(err, "CSV holds rank 1 or 2 tensors, got rank %d (use .npy)", t->rank);
  size_t len = 0;
  char e[NS_ERRLEN] = "";
  void *data;
  if (k == NS_FILE_NPY) {
    data = ns_npy_serialize(t, &len, e);
  } else {
    data = ns_csv_serialize(t, e);
    if (data) len = strlen(data);
  }
  if (!data) return ns_explore_fail(err, "%s", e[0] ? e : "cannot serialize the tensor");
  int rc = ns_file_write_atomic(path, data, len, err);
  free(data);
  return rc;
}

int ns_file_write_atomic(const char *path, const void *data, size_t len, char *err) {
  size_t n = strlen(path);
  char *tmp = malloc(n + 16);
  if (!tmp) return ns_explore_fail(err, "out of memory");
  snprintf(tmp, n + 16, "%s.tmpXXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    int e = errno;
    free(tmp);
    return ns_explore_fail(err, "cannot create a temporary file beside it: %s", strerror(e));
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
  (void)fchmod(fd, 0644); /* mkstemp makes 0600: a saved file is an ordinary file */
  if (close(fd) != 0 && !e) e = errno;
  if (!e && rename(tmp, path) != 0) e = errno;
  if (e) {
    unlink(tmp);
    free(tmp);
    return ns_explore_fail(err, "write error: %s", strerror(e));
  }
  free(tmp);
  return 0;
}

int ns_file_mkdirs(const char *dir, char *err) {
  size_t n = strlen(dir);
  char *p = malloc(n + 1);
  if (!p) return ns_explore_fail(err, "out of memory");
  memcpy(p, dir, n + 1);
  for (char *c = p + 1;; c++) {
    if (*c == '/' || *c == 0) {
      char keep = *c;
      *c = 0;
      if (mkdir(p, 0700) != 0 && errno != EEXIST) {
        int e = errno;
        ns_explore_fail(err, "cannot create %s: %s", p, strerror(e));
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
