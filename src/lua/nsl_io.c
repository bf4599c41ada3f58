/* nsl_io.c: ns.load / ns.save for .npy and .csv files, through the one file loader of
 * src/explore/file.h, with messages that name the path. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "explore/file.h"
#include "lua/nsl.h"
#include "lua/nsl_priv.h"

static const char *checkpath(lua_State *L, int arg) {
  if (lua_type(L, arg) != LUA_TSTRING)
    nsl_argerror(L, arg, "path must be a string, got %s", nsl_got(L, arg));
  size_t len;
  const char *p = lua_tolstring(L, arg, &len);
  if (len == 0) nsl_argerror(L, arg, "path is empty");
  if (strlen(p) != len) nsl_argerror(L, arg, "path contains a NUL byte");
  if (ns_file_kind_of(p) == NS_FILE_UNKNOWN)
    nsl_argerror(L, arg, "%s: unknown file type (the name must end in .npy or .csv)", p);
  return p;
}

/* ns.load(path) -> tensor (.npy keeps the file's dtype; .csv gives fp64 rank 2) */
static int l_load(lua_State *L) {
  lua_settop(L, 1); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN] = "";
  const char *path = checkpath(L, 1);
  ns_tensor *t = ns_file_load(path, err);
  if (!t) return luaL_error(L, "%s: %s", path, err);
  nsl_pushtensor(L, t);
  return 1;
}

/* ns.save(path, t): writes .npy (t's dtype) or .csv (rank 1 or 2) atomically; true */
static int l_save(lua_State *L) {
  lua_settop(L, 2); /* fixed argument slots: conversions push above them */
  char err[NS_ERRLEN] = "";
  const char *path = checkpath(L, 1);
  ns_tensor *t = nsl_tensorarg(L, 2, "t");
  if (ns_file_kind_of(path) == NS_FILE_CSV && t->rank > 2)
    return nsl_argerror(L, 2, "CSV holds rank 1 or 2 tensors, got rank %d (use .npy)", t->rank);
  if (ns_file_save(path, t, err) != 0) return luaL_error(L, "%s: %s", path, err);
  lua_pushboolean(L, 1);
  return 1;
}

static const luaL_Reg functions[] = {{"load", l_load}, {"save", l_save}, {NULL, NULL}};

void nsl_open_io(lua_State *L) {
  luaL_setfuncs(L, functions, 0);
}
