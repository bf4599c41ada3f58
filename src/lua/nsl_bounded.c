/* nsl_bounded.c: string and table functions for sandboxes, whose C loops charge the budget
 * (nsl_budget.h).
 *
 * The standard string.find, match, gmatch and gsub run Lua's backtracking matcher in C: a
 * pattern with k repetitions can take about n^(k+1) steps on n bytes (("a"):rep(5e4):find
 * (("a*"):rep(3) .. "b")), and even a pattern without any takes n * m ((("a"):rep(2e6)):find
 * (("a"):rep(2e4) .. "b")); the count hook sees one instruction either way. The matcher here
 * implements the same patterns (the reference manual's section 6.4.1: classes, sets, the four
 * repetitions, anchors, captures and position captures, back references, %b and %f), with
 * the same results and messages, and charges every step it takes: a pattern runs as long as
 * the budget lets it and no longer, whatever its shape. Plain finds charge the bytes they
 * compare.
 *
 * The other string functions (upper, sub, byte, format...) pass over their arguments once:
 * they charge those bytes, and so a loop of them on a large string sees Ctrl-C and the
 * clock at every call rather than once per count hook.
 *
 * table.move over a huge range, table.insert/remove under a __len that says 2^60, concat,
 * sort and unpack loop in C as well: they charge the elements they will visit first. */
#include <ctype.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "lua/nsl_budget.h"

/* ------------------------------------------------------------------ the matcher */

#define ESC '%'
#define MAXCAPTURES 32 /* LUA_MAXCAPTURES */
#define MAXDEPTH 200   /* nested matches before "pattern too complex" (MAXCCALLS) */
#define CAP_UNFINISHED (-1)
#define CAP_POSITION (-2)
/* Steps are charged in chunks of this many. */
#define STEP_CHUNK 4096

typedef struct {
  const char *src, *src_end; /* the subject */
  const char *p_end;         /* end of the pattern */
  lua_State *L;
  int depth; /* nested do_match calls left */
  int level; /* captures open or closed */
  struct {
    const char *init;
    ptrdiff_t len;
  } cap[MAXCAPTURES];
  long steps; /* not charged yet */
} mstate;

/* Counts n steps, charging the budget every STEP_CHUNK of them (which may raise). */
static void step(mstate *ms, long n) {
  ms->steps += n;
  if (ms->steps >= STEP_CHUNK) {
    long c = ms->steps;
    ms->steps = 0;
    nsl_charge(ms->L, (double)c);
  }
}

static void flush(mstate *ms) {
  long c = ms->steps;
  ms->steps = 0;
  if (c) nsl_charge(ms->L, (double)c);
}

/* The pattern's byte at p, or '\0' at its end (patterns are counted, not terminated). */
static int pat(const mstate *ms, const char *p) {
  return p < ms->p_end ? (unsigned char)*p : 0;
}

/* Whether byte c is in class %cl (cl a letter; its upper case negates). */
static int in_class(int c, int cl) {
  int r;
  switch (tolower(cl)) {
  case 'a':
    r = isalpha(c);
    break;
  case 'c':
    r = iscntrl(c);
    break;
  case 'd':
    r = isdigit(c);
    break;
  case 'g':
    r = isgraph(c);
    break;
  case 'l':
    r = islower(c);
    break;
  case 'p':
    r = ispunct(c);
    break;
  case 's':
    r = isspace(c);
    break;
  case 'u':
    r = isupper(c);
    break;
  case 'w':
    r = isalnum(c);
    break;
  case 'x':
    r = isxdigit(c);
    break;
  case 'z': /* deprecated, still there: the zero byte */
    r = c == 0;
    break;
  default:
    return cl == c; /* %. %% %[ ...: the character itself */
  }
  if (isupper(cl)) r = !r;
  return r != 0;
}

/* The end of the single-character class at p (one past it). */
static const char *class_end(mstate *ms, const char *p) {
  int c = (unsigned char)*p++;
  if (c == ESC) {
    if (p >= ms->p_end) luaL_error(ms->L, "malformed pattern (ends with '%%')");
    return p + 1;
  }
  if (c == '[') {
    if (pat(ms, p) == '^') p++;
    do { /* the first character is always in the set, even a ']' */
      if (p >= ms->p_end) luaL_error(ms->L, "malformed pattern (missing ']')");
      c = (unsigned char)*p++;
      if (c == ESC && p < ms->p_end) p++; /* %] and the like */
    } while (p >= ms->p_end || *p != ']');
    return p + 1;
  }
  return p;
}

/* Whether c is in the set [...] from p ('[') to ec (its ']'). */
static int in_set(mstate *ms, int c, const char *p, const char *ec) {
  int yes = 1;
  step(ms, ec - p);
  if (p[1] == '^') {
    yes = 0;
    p++;
  }
  while (++p < ec) {
    if (*p == ESC) {
      p++;
      if (in_class(c, (unsigned char)*p)) return yes;
    } else if (p[1] == '-' && p + 2 < ec) {
      p += 2;
      if ((unsigned char)p[-2] <= c && c <= (unsigned char)*p) return yes;
    } else if ((unsigned char)*p == c) {
      return yes;
    }
  }
  return !yes;
}

/* Whether the subject byte at s matches the class from p to ep. */
static int single(mstate *ms, const char *s, const char *p, const char *ep) {
  if (s >= ms->src_end) return 0;
  int c = (unsigned char)*s;
  switch (*p) {
  case '.':
    return 1;
  case ESC:
    return in_class(c, (unsigned char)p[1]);
  case '[':
    return in_set(ms, c, p, ep - 1);
  default:
    return (unsigned char)*p == c;
  }
}

static const char *do_match(mstate *ms, const char *s, const char *p);

static const char *balance(mstate *ms, const char *s, const char *p) {
  if (p + 1 >= ms->p_end) luaL_error(ms->L, "malformed pattern (missing arguments to '%%b')");
  if (s >= ms->src_end || *s != *p) return NULL;
  int open = *p, close = p[1], cont = 1;
  const char *s0 = s;
  while (++s < ms->src_end) {
    if (*s == close) {
      if (--cont == 0) {
        step(ms, s - s0);
        return s + 1;
      }
    } else if (*s == open) {
      cont++;
    }
  }
  step(ms, s - s0);
  return NULL;
}

static const char *max_expand(mstate *ms, const char *s, const char *p, const char *ep) {
  ptrdiff_t i = 0;
  while (single(ms, s + i, p, ep)) i++;
  step(ms, i);
  for (; i >= 0; i--) { /* the longest first, then shorter */
    const char *r = do_match(ms, s + i, ep + 1);
    if (r) return r;
  }
  return NULL;
}

static const char *min_expand(mstate *ms, const char *s, const char *p, const char *ep) {
  for (;;) {
    const char *r = do_match(ms, s, ep + 1);
    if (r) return r;
    if (!single(ms, s, p, ep)) return NULL;
    s++;
  }
}

static const char *start_capture(mstate *ms, const char *s, const char *p, ptrdiff_t what) {
  if (ms->level >= MAXCAPTURES) luaL_error(ms->L, "too many captures");
  ms->cap[ms->level].init = s;
  ms->cap[ms->level].len = what;
  ms->level++;
  const char *r = do_match(ms, s, p);
  if (!r) ms->level--;
  return r;
}

static const char *end_capture(mstate *ms, const char *s, const char *p) {
  int l = ms->level - 1;
  while (l >= 0 && ms->cap[l].len != CAP_UNFINISHED) l--;
  if (l < 0) luaL_error(ms->L, "invalid pattern capture");
  ms->cap[l].len = s - ms->cap[l].init;
  const char *r = do_match(ms, s, p);
  if (!r) ms->cap[l].len = CAP_UNFINISHED;
  return r;
}

static const char *back_reference(mstate *ms, const char *s, int digit) {
  int l = digit - '1';
  if (l < 0 || l >= ms->level || ms->cap[l].len == CAP_UNFINISHED)
    luaL_error(ms->L, "invalid capture index %%%d", l + 1);
  size_t len = (size_t)ms->cap[l].len; /* a position capture: huge, never fits */
  if ((size_t)(ms->src_end - s) >= len && memcmp(ms->cap[l].init, s, len) == 0) {
    step(ms, (long)len);
    return s + len;
  }
  return NULL;
}

/* The end of a match of the pattern from p at s, or NULL. */
static const char *do_match(mstate *ms, const char *s, const char *p) {
  if (ms->depth-- == 0) luaL_error(ms->L, "pattern too complex");
  for (;;) {
    step(ms, 1);
    if (p >= ms->p_end) break; /* the whole pattern matched */
    switch (*p) {
    case '(':
      if (pat(ms, p + 1) == ')')
        s = start_capture(ms, s, p + 2, CAP_POSITION);
      else
        s = start_capture(ms, s, p + 1, CAP_UNFINISHED);
      goto done;
    case ')':
      s = end_capture(ms, s, p + 1);
      goto done;
    case '$':
      if (p + 1 == ms->p_end) { /* at the end of the pattern: the end of the subject */
        if (s != ms->src_end) s = NULL;
        goto done;
      }
      break; /* elsewhere a plain '$' */
    case ESC:
      switch (pat(ms, p + 1)) {
      case 'b':
        s = balance(ms, s, p + 2);
        if (!s) goto done;
        p += 4;
        continue;
      case 'f': {
        p += 2;
        if (pat(ms, p) != '[') luaL_error(ms->L, "missing '[' after '%%f' in pattern");
        const char *ep = class_end(ms, p);
        int prev = s == ms->src ? 0 : (unsigned char)s[-1];
        int cur = s < ms->src_end ? (unsigned char)*s : 0;
        if (!in_set(ms, prev, p, ep - 1) && in_set(ms, cur, p, ep - 1)) {
          p = ep;
          continue;
        }
        s = NULL;
        goto done;
      }
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7':
      case '8':
      case '9':
        s = back_reference(ms, s, pat(ms, p + 1));
        if (!s) goto done;
        p += 2;
        continue;
      default:
        break; /* a class */
      }
      break;
    default:
      break;
    }
    /* a single-character class, maybe with a repetition */
    const char *ep = class_end(ms, p);
    int rep = pat(ms, ep);
    if (!single(ms, s, p, ep)) {
      if (rep == '*' || rep == '?' || rep == '-') { /* zero repetitions will do */
        p = ep + 1;
        continue;
      }
      s = NULL;
      goto done;
    }
    switch (rep) {
    case '?': {
      const char *r = do_match(ms, s + 1, ep + 1);
      if (r) {
        s = r;
        goto done;
      }
      p = ep + 1;
      continue;
    }
    case '+':
      s = max_expand(ms, s + 1, p, ep);
      goto done;
    case '*':
      s = max_expand(ms, s, p, ep);
      goto done;
    case '-':
      s = min_expand(ms, s, p, ep);
      goto done;
    default:
      s++;
      p = ep;
      continue;
    }
  }
done:
  ms->depth++;
  return s;
}

static void prepare(mstate *ms, lua_State *L, const char *s, size_t ls, const char *p, size_t lp) {
  ms->L = L;
  ms->src = s;
  ms->src_end = s + ls;
  ms->p_end = p + lp;
  ms->steps = 0;
}

static void restart(mstate *ms) {
  ms->level = 0;
  ms->depth = MAXDEPTH;
}

/* Capture i of a match from s to e: its length (CAP_POSITION: the position is pushed). */
static ptrdiff_t get_capture(mstate *ms, int i, const char *s, const char *e, const char **cap) {
  if (i >= ms->level) {
    if (i != 0) luaL_error(ms->L, "invalid capture index %%%d", i + 1);
    *cap = s;
    return e - s;
  }
  ptrdiff_t l = ms->cap[i].len;
  *cap = ms->cap[i].init;
  if (l == CAP_UNFINISHED) luaL_error(ms->L, "unfinished capture");
  if (l == CAP_POSITION) lua_pushinteger(ms->L, (ms->cap[i].init - ms->src) + 1);
  return l;
}

static void push_capture(mstate *ms, int i, const char *s, const char *e) {
  const char *cap;
  ptrdiff_t l = get_capture(ms, i, s, e, &cap);
  if (l != CAP_POSITION) lua_pushlstring(ms->L, cap, (size_t)l);
}

/* Pushes the captures (the whole match when there are none and s is given). */
static int push_captures(mstate *ms, const char *s, const char *e) {
  int n = ms->level == 0 && s ? 1 : ms->level;
  luaL_checkstack(ms->L, n, "too many captures");
  for (int i = 0; i < n; i++) push_capture(ms, i, s, e);
  return n;
}

/* A 1-based start position (negative from the end) as Lua reads it, clamped at 1. */
static size_t start_at(lua_Integer pos, size_t len) {
  if (pos > 0) return (size_t)pos;
  if (pos == 0) return 1;
  if (pos < -(lua_Integer)len) return 1;
  return len + (size_t)pos + 1;
}

/* The first occurrence of the l2 bytes of s2 in the l1 bytes of s1, charging the bytes
 * looked at. */
static const char *plain_find(mstate *ms, const char *s1, size_t l1, const char *s2, size_t l2) {
  if (l2 == 0) return s1;
  if (l2 > l1) return NULL;
  l2--; /* the first byte is found by memchr */
  l1 -= l2;
  const char *init;
  while (l1 > 0 && (init = memchr(s1, *s2, l1)) != NULL) {
    init++;
    step(ms, (long)(init - s1) + (long)l2);
    if (memcmp(init, s2 + 1, l2) == 0) return init - 1;
    l1 -= (size_t)(init - s1);
    s1 = init;
  }
  step(ms, (long)l1);
  return NULL;
}

static int no_specials(const char *p, size_t l) {
  for (size_t i = 0; i < l; i++)
    if (p[i] && strchr("^$*+?.([%-", p[i])) return 0;
  return 1;
}

static int find_aux(lua_State *L, int find) {
  size_t ls, lp;
  const char *s = luaL_checklstring(L, 1, &ls);
  const char *p = luaL_checklstring(L, 2, &lp);
  size_t init = start_at(luaL_optinteger(L, 3, 1), ls) - 1;
  if (init > ls) {
    luaL_pushfail(L);
    return 1;
  }
  mstate ms;
  prepare(&ms, L, s, ls, p, lp);
  if (find && (lua_toboolean(L, 4) || no_specials(p, lp))) {
    const char *at = plain_find(&ms, s + init, ls - init, p, lp);
    flush(&ms);
    if (at) {
      lua_pushinteger(L, (at - s) + 1);
      lua_pushinteger(L, (lua_Integer)((at - s) + lp));
      return 2;
    }
  } else {
    const char *s1 = s + init;
    int anchor = lp > 0 && *p == '^';
    if (anchor) {
      p++;
      lp--;
      prepare(&ms, L, s, ls, p, lp);
    }
    do {
      restart(&ms);
      const char *e = do_match(&ms, s1, p);
      if (e) {
        flush(&ms);
        if (find) {
          lua_pushinteger(L, (s1 - s) + 1);
          lua_pushinteger(L, e - s);
          return push_captures(&ms, NULL, NULL) + 2;
        }
        return push_captures(&ms, s1, e);
      }
    } while (s1++ < ms.src_end && !anchor);
    flush(&ms);
  }
  luaL_pushfail(L);
  return 1;
}

static int b_find(lua_State *L) {
  return find_aux(L, 1);
}

static int b_match(lua_State *L) {
  return find_aux(L, 0);
}

typedef struct {
  const char *src; /* where the next search starts */
  const char *p;
  const char *last; /* end of the last match */
  int done;         /* nothing more to find */
  mstate ms;
} gstate;

static int gmatch_next(lua_State *L) {
  gstate *g = lua_touserdata(L, lua_upvalueindex(3));
  g->ms.L = L;
  if (g->done) return 0;
  for (const char *s = g->src; s <= g->ms.src_end; s++) {
    restart(&g->ms);
    const char *e = do_match(&g->ms, s, g->p);
    if (e && e != g->last) {
      flush(&g->ms);
      g->src = g->last = e;
      return push_captures(&g->ms, s, e);
    }
  }
  flush(&g->ms);
  g->done = 1; /* later calls find nothing either: at once */
  return 0;
}

static int b_gmatch(lua_State *L) {
  size_t ls, lp;
  const char *s = luaL_checklstring(L, 1, &ls);
  const char *p = luaL_checklstring(L, 2, &lp);
  size_t init = start_at(luaL_optinteger(L, 3, 1), ls) - 1;
  lua_settop(L, 2); /* the strings stay alive as upvalues */
  gstate *g = lua_newuserdatauv(L, sizeof *g, 0);
  prepare(&g->ms, L, s, ls, p, lp);
  g->done = init > ls;
  g->src = s + (g->done ? ls : init);
  g->p = p;
  g->last = NULL;
  lua_pushcclosure(L, gmatch_next, 3);
  return 1;
}

/* gsub's replacement string (argument 3) for the match from s to e. */
static void add_string(mstate *ms, luaL_Buffer *b, const char *s, const char *e) {
  size_t l;
  lua_State *L = ms->L;
  const char *r = lua_tolstring(L, 3, &l), *end = r + l, *q;
  step(ms, (long)l);
  while ((q = memchr(r, ESC, (size_t)(end - r))) != NULL) {
    luaL_addlstring(b, r, (size_t)(q - r));
    q++; /* the character after the % */
    int c = q < end ? (unsigned char)*q : 0;
    if (c == ESC) {
      luaL_addchar(b, ESC);
    } else if (c == '0') {
      luaL_addlstring(b, s, (size_t)(e - s));
    } else if (isdigit(c)) {
      const char *cap;
      ptrdiff_t cl = get_capture(ms, c - '1', s, e, &cap);
      if (cl == CAP_POSITION)
        luaL_addvalue(b);
      else
        luaL_addlstring(b, cap, (size_t)cl);
    } else {
      luaL_error(L, "invalid use of '%c' in replacement string", ESC);
    }
    r = q + 1;
  }
  luaL_addlstring(b, r, (size_t)(end - r));
}

/* Adds the replacement of the match from s to e; 1 if it changed the text. */
static int add_value(mstate *ms, luaL_Buffer *b, const char *s, const char *e, int tr) {
  lua_State *L = ms->L;
  if (tr == LUA_TFUNCTION) {
    lua_pushvalue(L, 3);
    int n = push_captures(ms, s, e);
    lua_call(L, n, 1);
  } else if (tr == LUA_TTABLE) {
    push_capture(ms, 0, s, e);
    lua_gettable(L, 3);
  } else {
    add_string(ms, b, s, e);
    return 1;
  }
  if (!lua_toboolean(L, -1)) { /* nil or false: the match stays */
    lua_pop(L, 1);
    luaL_addlstring(b, s, (size_t)(e - s));
    return 0;
  }
  if (!lua_isstring(L, -1))
    return luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
  luaL_addvalue(b);
  return 1;
}

static int b_gsub(lua_State *L) {
  size_t ls, lp;
  const char *src = luaL_checklstring(L, 1, &ls);
  const char *p = luaL_checklstring(L, 2, &lp);
  const char *last = NULL;
  int tr = lua_type(L, 3);
  lua_Integer max = luaL_optinteger(L, 4, (lua_Integer)ls + 1);
  int anchor = lp > 0 && *p == '^';
  lua_Integer n = 0;
  int changed = 0;
  luaL_argexpected(
      L, tr == LUA_TNUMBER || tr == LUA_TSTRING || tr == LUA_TFUNCTION || tr == LUA_TTABLE, 3,
      "string/function/table");
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  if (anchor) {
    p++;
    lp--;
  }
  mstate ms;
  prepare(&ms, L, src, ls, p, lp);
  while (n < max) {
    restart(&ms);
    const char *e = do_match(&ms, src, p);
    if (e && e != last) {
      n++;
      changed = add_value(&ms, &b, src, e, tr) | changed;
      src = last = e;
    } else if (src < ms.src_end) {
      luaL_addchar(&b, *src++);
    } else {
      break;
    }
    if (anchor) break;
  }
  flush(&ms);
  if (!changed) {
    lua_pushvalue(L, 1);
  } else {
    luaL_addlstring(&b, src, (size_t)(ms.src_end - src));
    luaL_pushresult(&b);
  }
  lua_pushinteger(L, n);
  return 2;
}

/* string.rep: the result is n copies, a few ns each (memory bounds n then, a unit per 16);
 * n copies of nothing would loop n times for an empty result: that one is answered at once. */
static int b_rep(lua_State *L) {
  size_t l, lsep = 0;
  luaL_checklstring(L, 1, &l);
  lua_Integer n = luaL_checkinteger(L, 2);
  luaL_optlstring(L, 3, "", &lsep);
  if (n > 0 && l + lsep == 0) {
    lua_pushliteral(L, "");
    return 1;
  }
  if (n > 0) nsl_charge(L, (double)n / 16);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

/* The standard function (upvalue 1) called with the arguments as they are. Called from C
 * it has no name, so its argument errors say "to '?'": the name (upvalue 2) goes back in. */
static int call_through(lua_State *L, int nres) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  if (lua_pcall(L, lua_gettop(L) - 1, nres, 0) != LUA_OK) {
    const char *m = lua_tostring(L, -1), *q = m ? strstr(m, " to '?'") : NULL;
    if (q)
      lua_pushfstring(L, "%s to '%s'%s", lua_pushlstring(L, m, (size_t)(q - m)),
                      lua_tostring(L, lua_upvalueindex(2)), q + 7);
    return lua_error(L);
  }
  return nres == LUA_MULTRET ? lua_gettop(L) : nres;
}

/* Any other function of a bounded library (upper, lower, reverse, sub, byte, char, format,
 * pack, unpack, len; utf8's): one pass in C over its arguments, so a unit per 16 of their
 * bytes (a number counts as one), charged before it runs. The charge also looks at Ctrl-C
 * and the clock, which a loop of such calls on a large string would otherwise escape until
 * the next count hook, 1000 instructions and as many passes later. */
static int b_linear(lua_State *L) {
  double bytes = 0;
  for (int i = 1, n = lua_gettop(L); i <= n; i++)
    bytes += lua_type(L, i) == LUA_TSTRING ? (double)lua_rawlen(L, i) : 1;
  nsl_charge(L, 1 + bytes / 16);
  return call_through(L, LUA_MULTRET);
}

void nsl_bound_linear(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) { /* k v */
    if (lua_type(L, -2) == LUA_TSTRING && lua_tocfunction(L, -1)) {
      lua_pushvalue(L, -2);             /* k v k: the name, for call_through's messages */
      lua_pushcclosure(L, b_linear, 2); /* k wrapped */
      lua_pushvalue(L, -2);             /* k wrapped k */
      lua_insert(L, -2);                /* k k wrapped */
      lua_rawset(L, idx);               /* an existing field: the traversal goes on */
    } else {
      lua_pop(L, 1);
    }
  }
}

void nsl_bound_string(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  lua_getfield(L, idx, "rep"); /* the standard one, before it is wrapped */
  nsl_bound_linear(L, idx);
  lua_pushcclosure(L, b_rep, 1);
  lua_setfield(L, idx, "rep");
  static const luaL_Reg fns[] = {
      {"find", b_find}, {"match", b_match}, {"gmatch", b_gmatch}, {"gsub", b_gsub}, {NULL, NULL}};
  for (const luaL_Reg *r = fns; r->name; r++) {
    lua_pushcfunction(L, r->func);
    lua_setfield(L, idx, r->name);
  }
}

/* ------------------------------------------------------------------ table */

/* #t as the table functions read it (__len included), as a double (0 when not a number). */
static double length_of(lua_State *L, int idx) {
  lua_len(L, idx);
  int ok = 0;
  lua_Number n = lua_tonumberx(L, -1, &ok);
  lua_pop(L, 1);
  return ok && n > 0 ? (double)n : 0;
}

/* (e - f + 1) elements, or 0 when the range is empty. */
static double span(lua_Integer f, lua_Integer e) {
  return e >= f ? (double)e - (double)f + 1 : 0;
}

static int t_move(lua_State *L) {
  lua_Integer f = luaL_checkinteger(L, 2), e = luaL_checkinteger(L, 3);
  luaL_checkinteger(L, 4);
  nsl_charge(L, span(f, e));
  return call_through(L, 1);
}

static int t_insert(lua_State *L) {
  if (lua_gettop(L) == 3 && lua_type(L, 1) == LUA_TTABLE) nsl_charge(L, length_of(L, 1));
  return call_through(L, 0);
}

static int t_remove(lua_State *L) {
  if (lua_type(L, 1) == LUA_TTABLE) nsl_charge(L, length_of(L, 1));
  return call_through(L, 1);
}

static int t_concat(lua_State *L) {
  if (lua_type(L, 1) == LUA_TTABLE) {
    lua_Integer i = luaL_optinteger(L, 3, 1);
    double j = lua_isnoneornil(L, 4) ? length_of(L, 1) : (double)luaL_checkinteger(L, 4);
    nsl_charge(L, j >= (double)i ? j - (double)i + 1 : 0);
  }
  return call_through(L, 1);
}

static int t_sort(lua_State *L) {
  if (lua_type(L, 1) == LUA_TTABLE) {
    double n = length_of(L, 1), lg = 1;
    for (double m = n; m > 1; m /= 2) lg++;
    nsl_charge(L, n * lg);
  }
  return call_through(L, 0);
}

static int t_unpack(lua_State *L) {
  lua_Integer i = luaL_optinteger(L, 2, 1);
  double j = lua_isnoneornil(L, 3) ? length_of(L, 1) : (double)luaL_checkinteger(L, 3);
  nsl_charge(L, j >= (double)i ? j - (double)i + 1 : 0);
  return call_through(L, LUA_MULTRET);
}

void nsl_bound_table(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  static const luaL_Reg fns[] = {{"move", t_move},     {"insert", t_insert}, {"remove", t_remove},
                                 {"concat", t_concat}, {"sort", t_sort},     {"unpack", t_unpack},
                                 {NULL, NULL}};
  for (const luaL_Reg *r = fns; r->name; r++) {
    if (lua_getfield(L, idx, r->name) != LUA_TFUNCTION) {
      lua_pop(L, 1);
      continue;
    }
    lua_pushstring(L, r->name);
    lua_pushcclosure(L, r->func, 2);
    lua_setfield(L, idx, r->name);
  }
}
