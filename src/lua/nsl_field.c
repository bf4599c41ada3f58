/* nsl_field.c: the one Lua reader of the explorer's scalar fields (fields.h ns_field_desc:
 * choices, true/false/"default", integers and numbers with their ranges). set{} reads its
 * fields with it, and ns.normalize{} reads the spec's scalar fields with it, so the two
 * accept the same values and say the same thing about a bad one. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/err.h"
#include "explore/state.h"
#include "lua/nsl_field.h"

#include "core/text.h"

#include <lauxlib.h>

#define AT(s, T, off) ((T *)((char *)(s) + (off)))

/* The value as the message quotes it: a number as written, else its type. */
static const char *got(lua_State *L, int idx) {
  return lua_type(L, idx) == LUA_TNUMBER ? lua_tostring(L, idx) : luaL_typename(L, idx);
}

static int fail(char *err, const char *fmt, ...) NS_PRINTF(2, 3);
static int fail(char *err, const char *fmt, ...) {
  char raw[NS_ERRLEN]; /* the value quoted may come from a file: sanitized (core/text.h) */
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(raw, sizeof raw, fmt, ap);
  va_end(ap);
  size_t len = n < 0 ? 0 : (size_t)n < sizeof raw ? (size_t)n : sizeof raw - 1;
  ns_text_sanitize(err, NS_ERRLEN, raw, len, 0);
  return -1;
}

static int read_choice(lua_State *L, int idx, const ns_field_desc *d, int *out, char *err) {
  char list[200];
  ns_choice_list(d->names, list, sizeof list);
  int dflt = (d->flags & NS_FF_DEFAULT) != 0;
  if (lua_type(L, idx) != LUA_TSTRING)
    return fail(err, "%s: expected one of %s%s, got %s", d->name, list, dflt ? ", default" : "",
                luaL_typename(L, idx));
  const char *v = lua_tostring(L, idx);
  if (dflt && strcmp(v, "default") == 0) return *out = -1, 0;
  int k = ns_choice_parse(d->names, v);
  if (k < 0 && d->names == ns_dtype_names) { /* dtypes also go by numpy's names */
    ns_dtype dt;
    if (ns_dtype_parse(v, &dt) == 0) k = (int)dt;
  }
  if (k < 0 && d->names == ns_algo_names) {
    ns_algo a;
    if (ns_algo_parse(v, &a) == 0) k = (int)a;
  }
  if (k < 0)
    return fail(err, "%s: unknown %s '%s' (%s%s)", d->name,
                d->names == ns_kind_names    ? "kind"
                : d->names == ns_dtype_names ? "dtype"
                                             : "choice",
                v, list, dflt ? ", default" : "");
  *out = k;
  return 0;
}

int nsl_field_integer(lua_State *L, int idx, const char *name, lua_Integer *out, char *err) {
  int isint = 0;
  *out = lua_tointegerx(L, idx, &isint);
  if (lua_type(L, idx) != LUA_TNUMBER || !isint)
    return fail(err, "%s: expected an integer, got %s", name, got(L, idx));
  return 0;
}

int nsl_field_scalar(lua_State *L, int idx, const ns_field_desc *d, ns_state *dst, char *err) {
  switch (d->type) {
  case NS_FT_ENUM:
    return read_choice(L, idx, d, AT(dst, int, d->off), err);
  case NS_FT_TRIBOOL:
    if (lua_type(L, idx) == LUA_TBOOLEAN)
      *AT(dst, int, d->off) = lua_toboolean(L, idx);
    else if (lua_type(L, idx) == LUA_TSTRING && strcmp(lua_tostring(L, idx), "default") == 0)
      *AT(dst, int, d->off) = -1;
    else
      return fail(err, "%s: expected true, false or \"default\", got %s", d->name,
                  luaL_typename(L, idx));
    return 0;
  case NS_FT_INT: {
    lua_Integer v;
    if (nsl_field_integer(L, idx, d->name, &v, err) != 0) return -1;
    if ((double)v < d->lo || (double)v > d->hi) return ns_field_range_fail(d, (double)v, err);
    *AT(dst, int, d->off) = (int)v;
    return 0;
  }
  case NS_FT_DOUBLE: {
    int dflt = (d->flags & NS_FF_DEFAULT) != 0;
    if (dflt && lua_type(L, idx) == LUA_TSTRING && strcmp(lua_tostring(L, idx), "default") == 0) {
      *AT(dst, double, d->off) = NAN;
      return 0;
    }
    if (lua_type(L, idx) != LUA_TNUMBER)
      return fail(err, "%s: expected a number%s, got %s", d->name, dflt ? " or \"default\"" : "",
                  luaL_typename(L, idx));
    double v = lua_tonumber(L, idx);
    if (isnan(v) && dflt) /* NaN means "default" */
      return fail(err, "%s: must be a finite number or \"default\", got nan", d->name);
    if (!isfinite(v) || v < d->lo || v > d->hi) return ns_field_range_fail(d, v, err);
    *AT(dst, double, d->off) = v;
    return 0;
  }
  default:
    return fail(err, "%s: not a scalar field", d->name);
  }
}
