/* complete.c: completion of Lua names (globals, fields, methods); see complete.h. */
#include "repl/complete.h"

#include <ctype.h>
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

/* How many __index hops are followed when listing a value's fields (guards cycles). */
#define INDEX_DEPTH 16

static const char *const keywords[] = {"and",   "break", "do",       "else",  "elseif", "end",
                                       "false", "for",   "function", "goto",  "if",     "in",
                                       "local", "nil",   "not",      "or",    "repeat", "return",
                                       "then",  "true",  "until",    "while", NULL};

static int is_idstart(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_idchar(int c) {
  return is_idstart(c) || (c >= '0' && c <= '9');
}

static int is_keyword(const char *s, size_t n) {
  for (int i = 0; keywords[i]; i++)
    if (strlen(keywords[i]) == n && memcmp(keywords[i], s, n) == 0) return 1;
  return 0;
}

/* Whether s[0, n) is a name usable after '.' or ':' (an identifier, not a keyword). */
static int is_name(const char *s, size_t n) {
  if (n == 0 || !is_idstart((unsigned char)s[0])) return 0;
  for (size_t i = 1; i < n; i++)
    if (!is_idchar((unsigned char)s[i])) return 0;
  return !is_keyword(s, n);
}

int nslc_wordstart(const char *line, int end) {
  int i = end;
  while (i > 0) {
    unsigned char c = (unsigned char)line[i - 1];
    if (!is_idchar(c) && c != '.' && c != ':') break;
    i--;
  }
  return i;
}

/* The level of a long bracket opening at s ("[[" is 0, "[==[" is 2), or -1. */
static int long_bracket(const char *s) {
  if (s[0] != '[') return -1;
  int n = 0;
  while (s[1 + n] == '=') n++;
  return s[1 + n] == '[' ? n : -1;
}

/* Whether s closes a long bracket of the given level ("]]", "]=]", ...). */
static int closes_long(const char *s, int level) {
  if (s[0] != ']') return 0;
  for (int i = 0; i < level; i++)
    if (s[1 + i] != '=') return 0;
  return s[1 + level] == ']';
}

int nslc_in_string(const char *line, int pos) {
  int i = 0;
  while (i < pos && line[i]) {
    char c = line[i];
    if (c == '"' || c == '\'') { /* short string: up to the same quote */
      i++;
      while (i < pos && line[i] && line[i] != c) i += (line[i] == '\\' && line[i + 1]) ? 2 : 1;
      if (i >= pos || !line[i]) return 1;
      i++;
    } else if (c == '-' && line[i + 1] == '-') { /* comment: long, or to the end of line */
      int level = long_bracket(line + i + 2);
      if (level < 0) {
        while (i < pos && line[i] && line[i] != '\n') i++;
        if (i >= pos) return 1;
        continue;
      }
      i += 4 + level;
      while (i < pos && line[i] && !closes_long(line + i, level)) i++;
      if (i >= pos || !line[i]) return 1;
      i += 2 + level;
    } else if (long_bracket(line + i) >= 0) {
      int level = long_bracket(line + i);
      i += 2 + level;
      while (i < pos && line[i] && !closes_long(line + i, level)) i++;
      if (i >= pos || !line[i]) return 1;
      i += 2 + level;
    } else {
      i++;
    }
  }
  return 0;
}

/* What the protected collector needs: the word split at its last separator. */
typedef struct {
  const char *word; /* the whole word */
  size_t len;
  size_t last; /* index of the last '.' or ':' (only meaningful if has_sep) */
  int has_sep;
  int method;    /* last separator is ':' */
  int in_setter; /* the word is a key of an open set{ ... } table: offer the state's fields */
} query;

/* Whether line[0, start) ends inside the table of a set{...} call (set{, set({, e:set{),
 * where the word being typed is a field name: the last unclosed '{' follows "set". */
static int in_set_table(const char *line, int start) {
  int k = start - 1; /* a key stands right after '{' or ',' */
  while (k >= 0 && line[k] == ' ') k--;
  if (k < 0 || (line[k] != '{' && line[k] != ',')) return 0;
  int depth = 0;
  for (int i = start - 1; i >= 0; i--) {
    if (line[i] == '}') depth++;
    if (line[i] != '{') continue;
    if (depth > 0) {
      depth--;
      continue;
    }
    int j = i - 1;
    while (j >= 0 && (line[j] == ' ' || line[j] == '(')) j--;
    return j >= 2 && strncmp(line + j - 2, "set", 3) == 0 &&
           (j < 3 || !(isalnum((unsigned char)line[j - 3]) || line[j - 3] == '_'));
  }
  return 0;
}

/* Adds to the result table (at res) word[0, last] .. key for every string key of the
 * table at idx that extends the partial name. Stack: unchanged. */
static void add_keys(lua_State *L, int idx, int res, const query *q, int skip_meta) {
  size_t head = q->has_sep ? q->last + 1 : 0;
  const char *part = q->word + head;
  size_t plen = q->len - head;
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx)) { /* key value */
    if (lua_type(L, -2) == LUA_TSTRING) {
      size_t klen;
      const char *key = lua_tolstring(L, -2, &klen);
      int ok = klen >= plen && memcmp(key, part, plen) == 0 && is_name(key, klen);
      if (ok && skip_meta && klen >= 2 && key[0] == '_' && key[1] == '_') ok = 0;
      if (ok && q->method && lua_type(L, -1) != LUA_TFUNCTION) ok = 0;
      if (ok) {
        lua_pushlstring(L, q->word, head);
        lua_pushvalue(L, -3);
        lua_concat(L, 2); /* key value full */
        lua_pushboolean(L, 1);
        lua_rawset(L, res); /* res[full] = true */
      }
    }
    lua_pop(L, 1); /* drop value, keep key */
  }
}

/* Adds the fields reachable through the metatables of the value at idx: an __index
 * table is listed and followed; for an __index function, the metatable's own non-meta
 * entries and the table upvalues of a C function (where bindings keep their methods). */
static void add_meta(lua_State *L, int idx, int res, const query *q) {
  lua_pushvalue(L, idx); /* v */
  for (int depth = 0; depth < INDEX_DEPTH; depth++) {
    if (!lua_getmetatable(L, -1)) break; /* v mt */
    lua_getfield(L, -1, "__index");      /* v mt index (raw access would miss nothing here) */
    if (lua_istable(L, -1)) {
      add_keys(L, -1, res, q, 0);
      lua_remove(L, -2); /* v index */
      lua_remove(L, -2); /* index: follow its metatable next */
      continue;
    }
    if (lua_isfunction(L, -1)) {
      add_keys(L, -2, res, q, 1);
      if (lua_iscfunction(L, -1)) {
        for (int n = 1; lua_getupvalue(L, -1, n); n++) {
          if (lua_istable(L, -1)) add_keys(L, -1, res, q, 1);
          lua_pop(L, 1);
        }
      }
    }
    lua_pop(L, 2); /* v */
    break;
  }
  lua_pop(L, 1);
}

/* Protected body: (query*) -> table of candidates as keys. */
static int collect(lua_State *L) {
  const query *q = (const query *)lua_touserdata(L, 1);
  lua_newtable(L);
  int res = lua_gettop(L);
  if (!q->has_sep && q->in_setter) { /* the field names of the explorer state: ns.fields() */
    lua_getglobal(L, "ns");
    if (lua_istable(L, -1) && lua_getfield(L, -1, "fields") == LUA_TFUNCTION &&
        lua_pcall(L, 0, 1, 0) == LUA_OK && lua_istable(L, -1)) {
      for (lua_Integer i = 1; lua_rawgeti(L, -1, i) == LUA_TTABLE; i++) {
        lua_getfield(L, -1, "name");
        size_t n;
        const char *name = lua_tolstring(L, -1, &n);
        if (name && n >= q->len && memcmp(name, q->word, q->len) == 0) {
          lua_pushboolean(L, 1);
          lua_setfield(L, res, name);
        }
        lua_pop(L, 2);
      }
      lua_pop(L, 1);
    }
    lua_settop(L, res);
    return 1; /* keys of set{} are field names only */
  }
  if (!q->has_sep) {
    lua_pushglobaltable(L);
    add_keys(L, -1, res, q, 0);
    add_meta(L, lua_gettop(L), res, q);
    lua_pop(L, 1);
    for (int i = 0; keywords[i]; i++) {
      size_t n = strlen(keywords[i]);
      if (n >= q->len && memcmp(keywords[i], q->word, q->len) == 0) {
        lua_pushboolean(L, 1);
        lua_setfield(L, res, keywords[i]);
      }
    }
    return 1;
  }
  /* Walk the prefix a.b.c with ordinary (metamethod-aware) indexing. */
  lua_pushglobaltable(L);
  size_t i = 0;
  while (i < q->last) {
    size_t j = i;
    while (j < q->last && q->word[j] != '.' && q->word[j] != ':') j++;
    int t = lua_type(L, -1);
    if (t != LUA_TTABLE && t != LUA_TUSERDATA && t != LUA_TSTRING) return 1;
    lua_pushlstring(L, q->word + i, j - i);
    lua_gettable(L, -2); /* parent child */
    lua_remove(L, -2);
    i = j + 1;
  }
  if (lua_istable(L, -1)) add_keys(L, -1, res, q, 0);
  add_meta(L, lua_gettop(L), res, q);
  lua_pop(L, 1);
  return 1;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Checks the word's shape: name ( ('.'|':') name )*, the last name possibly empty or
 * partial, ':' only as the last separator. Fills q. */
static int parse_word(const char *w, size_t n, query *q) {
  q->word = w;
  q->len = n;
  q->has_sep = 0;
  q->method = 0;
  q->last = 0;
  if (n == 0 || !is_idstart((unsigned char)w[0])) return n == 0;
  size_t seg = 0;
  for (size_t i = 0; i < n; i++) {
    if (w[i] == '.' || w[i] == ':') {
      if (q->method) return 0;                  /* nothing may follow a method name */
      if (!is_name(w + seg, i - seg)) return 0; /* a.'', a..b, 1.x, end.x */
      q->has_sep = 1;
      q->last = i;
      q->method = w[i] == ':';
      seg = i + 1;
    }
  }
  if (seg < n && !is_idstart((unsigned char)w[seg])) return 0;
  return 1;
}

char **nslc_complete(lua_State *L, const char *line, int start, int end) {
  if (!L || !line || start < 0 || end < start) return NULL;
  if (nslc_in_string(line, start)) return NULL;
  /* A word right after a number ("1.5e") or a closing bracket is not a name. */
  if (start > 0 && (line[start - 1] == '.' || line[start - 1] == ':')) return NULL;
  query q;
  if (!parse_word(line + start, (size_t)(end - start), &q)) return NULL;
  q.in_setter = !q.has_sep && in_set_table(line, start);

  int top = lua_gettop(L);
  if (!lua_checkstack(L, 8)) return NULL;
  lua_pushcfunction(L, collect);
  lua_pushlightuserdata(L, &q);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK || !lua_istable(L, -1)) {
    lua_settop(L, top);
    return NULL;
  }
  size_t count = 0, cap = 16;
  char **list = malloc(cap * sizeof *list);
  if (!list) {
    lua_settop(L, top);
    return NULL;
  }
  lua_pushnil(L);
  while (lua_next(L, -2)) { /* res key true */
    lua_pop(L, 1);
    if (count + 1 >= cap) {
      char **grown = realloc(list, 2 * cap * sizeof *list);
      if (!grown) goto oom;
      list = grown;
      cap *= 2;
    }
    size_t klen;
    const char *key = lua_tolstring(L, -1, &klen); /* keys are strings: no conversion */
    char *copy = malloc(klen + 1);
    if (!copy) goto oom;
    memcpy(copy, key, klen + 1);
    list[count++] = copy;
  }
  lua_settop(L, top);
  if (count == 0) {
    free(list);
    return NULL;
  }
  list[count] = NULL;
  qsort(list, count, sizeof *list, cmp_str);
  return list;
oom:
  lua_settop(L, top);
  list[count] = NULL;
  nslc_free(list);
  return NULL;
}

void nslc_free(char **list) {
  if (!list) return;
  for (char **p = list; *p; p++) free(*p);
  free(list);
}

char *nslc_common_prefix(char *const *list) {
  if (!list || !list[0]) return NULL;
  size_t n = strlen(list[0]);
  for (char *const *p = list + 1; *p; p++) {
    size_t i = 0;
    while (i < n && (*p)[i] == list[0][i]) i++;
    n = i;
  }
  char *s = malloc(n + 1);
  if (!s) return NULL;
  memcpy(s, list[0], n);
  s[n] = '\0';
  return s;
}
