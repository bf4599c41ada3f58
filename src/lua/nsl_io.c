/* nsl_io.c: ns.load / ns.save for .npy and .csv files. The core parses and serializes
 * memory buffers; this file does the file I/O, with messages that name the path. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/npy.h"
#include "lua/nsl.h"
#include "lua/nsl_priv.h"

typedef enum { FMT_NPY, FMT_CSV } file_format;

/* Files above this size are refused before reading (the largest tensor plus headroom). */
#define MAX_FILE_BYTES ((long long)NS_MAXELEMS * 8 + (1 << 20))

static file_format format_of(lua_State *L, int arg, const char *path) {
  const char *slash = strrchr(path, '/');
  const char *dot = strrchr(slash ? slash : path, '.');
  if (dot && strcasecmp(dot, ".npy") == 0) return FMT_NPY;
  if (dot && strcasecmp(dot, ".csv") == 0) return FMT_CSV;
  nsl_argerror(L, arg, "%s: unknown file type (the name must end in .npy or .csv)", path);
  return FMT_NPY;
}

static const char *checkpath(lua_State *L, int arg) {
  if (lua_type(L, arg) != LUA_TSTRING)
    nsl_argerror(L, arg, "path must be a string, got %s", nsl_got(L, arg));
  size_t len;
  const char *p = lua_tolstring(L, arg, &len);
  if (len == 0) nsl_argerror(L, arg, "path is empty");
  if (strlen(p) != len) nsl_argerror(L, arg, "path contains a NUL byte");
  return p;
}

/* ns.load(path) -> tensor (.npy keeps the file's dtype; .csv gives fp64 rank 2) */
static int l_load(lua_State *L) {
  lua_settop(L, 1); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN] = "";
  const char *path = checkpath(L, 1);
  file_format fmt = format_of(L, 1, path);
  FILE *f = fopen(path, "rb");
  if (!f) return luaL_error(L, "%s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    fclose(f);
    return luaL_error(L, "%s: is a directory", path);
  }
  long long size = -1;
  if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
  if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
    int e = errno;
    fclose(f);
    return luaL_error(L, "%s: cannot determine the file size: %s", path, strerror(e));
  }
  if (size > MAX_FILE_BYTES) {
    fclose(f);
    return luaL_error(L, "%s: file of %I bytes is too large", path, (lua_Integer)size);
  }
  /* malloc'd buffer and file handle are released on every path before anything
   * can raise a Lua error */
  unsigned char *buf = malloc((size_t)size + 1);
  if (!buf) {
    fclose(f);
    return luaL_error(L, "%s: out of memory reading %I bytes", path, (lua_Integer)size);
  }
  size_t got = fread(buf, 1, (size_t)size, f);
  int rerr = ferror(f), e = errno;
  fclose(f);
  if (rerr || got != (size_t)size) {
    free(buf);
    return luaL_error(L, "%s: read error: %s", path, rerr ? strerror(e) : "file changed size");
  }
  buf[size] = '\0';
  ns_tensor *t = fmt == FMT_NPY ? ns_npy_parse(buf, (size_t)size, err)
                                : ns_csv_parse((const char *)buf, (size_t)size, err);
  free(buf);
  if (!t) return luaL_error(L, "%s: %s", path, err[0] ? err : "cannot parse the file");
  nsl_pushtensor(L, t);
  return 1;
}

/* ns.save(path, t): writes .npy (t's dtype) or .csv (rank 1 or 2); returns true */
static int l_save(lua_State *L) {
  lua_settop(L, 2); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN] = "";
  const char *path = checkpath(L, 1);
  file_format fmt = format_of(L, 1, path);
  ns_tensor *t = nsl_tensorarg(L, 2, "t");
  if (fmt == FMT_CSV && t->rank > 2)
    return nsl_argerror(L, 2, "CSV holds rank 1 or 2 tensors, got rank %d (use .npy)", t->rank);
  size_t len = 0;
  void *data;
  if (fmt == FMT_NPY) {
    data = ns_npy_serialize(t, &len, err);
  } else {
    data = ns_csv_serialize(t, err);
    if (data) len = strlen(data);
  }
  if (!data) return luaL_error(L, "%s: %s", path, err[0] ? err : "cannot serialize the tensor");
  FILE *f = fopen(path, "wb");
  if (!f) {
    int e = errno;
    free(data);
    return luaL_error(L, "%s: %s", path, strerror(e));
  }
  size_t put = fwrite(data, 1, len, f);
  int werr = ferror(f);
  int cerr = fclose(f);
  int e = errno;
  free(data);
  if (put != len || werr || cerr != 0)
    return luaL_error(L, "%s: write error: %s", path, strerror(e));
  lua_pushboolean(L, 1);
  return 1;
}

static const luaL_Reg functions[] = {{"load", l_load}, {"save", l_save}, {NULL, NULL}};

void nsl_open_io(lua_State *L) {
  luaL_setfuncs(L, functions, 0);
}
