/* nsl_field.h: the Lua reader of the explorer's scalar fields, shared by set{} and
 * ns.normalize{} (nsl_field.c). */
#ifndef NS_LUA_NSL_FIELD_H
#define NS_LUA_NSL_FIELD_H

#include <lua.h>

#include "explore/state.h"

/* The value at idx as field d (an ENUM, TRIBOOL, INT or DOUBLE field), checked against the
 * descriptor's choices and range, stored at d's offset in dst. 0, or -1 and err
 * (NS_ERRLEN) "<name>: <what is wrong>"; the caller prefixes it ("set: ", "spec."). */
int nsl_field_scalar(lua_State *L, int idx, const ns_field_desc *d, ns_state *dst, char *err);
/* The integer at idx (a number with an integer value), else -1 and err "<name>: expected
 * an integer, got ...". */
int nsl_field_integer(lua_State *L, int idx, const char *name, lua_Integer *out, char *err);

#endif
