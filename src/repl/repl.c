/* repl.c: evaluating typed Lua (shared with the screen's prompt), readline history
 * and completion, and the plain REPL of `normscope repl`. See repl.h. */
#include "config.h"

#include "repl/repl.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <lualib.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "core/err.h"
#include "core/text.h"
#include "explore/file.h"
#include "repl/complete.h"

#define PROMPT1 "> "
#define PROMPT2 ">> "

/* ---------------------------------------------------------------- evaluation */

int nslr_msghandler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) { /* not a string: try __tostring, else name the type */
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1); /* msg traceback */
  return 1;
}

/* The state that a SIGINT interrupts (only while nslr_docall runs). */
static lua_State *volatile interrupt_L;

/* Hook set by the signal handler: raises at the next Lua instruction, call or return. */
static void lstop(lua_State *L, lua_Debug *ar) {
  (void)ar;
  lua_sethook(L, NULL, 0, 0);
  luaL_error(L, "interrupted!");
}

/* SIGINT while Lua runs: ask the interpreter to stop (lua_sethook is signal safe). A
 * second SIGINT before Lua notices falls to the default action (stuck in C code). */
static void on_sigint_running(int sig) {
  signal(sig, SIG_DFL);
  if (interrupt_L)
    lua_sethook(interrupt_L, lstop, LUA_MASKCALL | LUA_MASKRET | LUA_MASKLINE | LUA_MASKCOUNT, 1);
}

int nslr_docall(lua_State *L, int narg, int nres) {
  int base = lua_gettop(L) - narg; /* function index */
  lua_pushcfunction(L, nslr_msghandler);
  lua_insert(L, base); /* handler below the function */
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint_running;
  sigemptyset(&sa.sa_mask);
  sigset_t unblock, oldmask;
  sigemptyset(&unblock);
  sigaddset(&unblock, SIGINT);
  interrupt_L = L;
  sigaction(SIGINT, &sa, &old);
  sigprocmask(SIG_UNBLOCK, &unblock, &oldmask);
  int status = lua_pcall(L, narg, nres, base);
  sigprocmask(SIG_SETMASK, &oldmask, NULL);
  sigaction(SIGINT, &old, NULL);
  interrupt_L = NULL;
  lua_sethook(L, NULL, 0, 0); /* a SIGINT that came too late must not stop later code */
  lua_remove(L, base);        /* drop the handler */
  return status;
}

/* Whether a syntax error message says the text ended too early (lua.c's test). */
static int incomplete(lua_State *L, int status) {
  if (status != LUA_ERRSYNTAX) return 0;
  size_t len;
  const char *msg = lua_tolstring(L, -1, &len);
  static const char mark[] = "<eof>";
  size_t n = sizeof mark - 1;
  return msg && len >= n && strcmp(msg + len - n, mark) == 0;
}

/* ---------------------------------------------------------------- showing values */

/* The shortest %.Ng form of a float that reads back as the same double. */
static void show_number(lua_State *L, int idx) {
  if (lua_isinteger(L, idx)) {
    lua_pushfstring(L, "%I", (LUAI_UACINT)lua_tointeger(L, idx));
    return;
  }
  double v = lua_tonumber(L, idx);
  char buf[40];
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (strtod(buf, NULL) == v) break;
  }
  if (v == (double)(long long)v && fabs(v) < 1e15 && !strchr(buf, 'e')) strcat(buf, ".0");
  lua_pushstring(L, buf);
}

/* Orders table keys: numbers first (ascending), then strings (alphabetical), then others. */
static int key_less(lua_State *L, int a, int b) {
  int ta = lua_type(L, a), tb = lua_type(L, b);
  int ra = ta == LUA_TNUMBER ? 0 : ta == LUA_TSTRING ? 1 : 2;
  int rb = tb == LUA_TNUMBER ? 0 : tb == LUA_TSTRING ? 1 : 2;
  if (ra != rb) return ra < rb;
  if (ra < 2) return lua_compare(L, a, b, LUA_OPLT);
  return 0;
}

static int is_identifier(const char *s) {
  if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
  for (const char *c = s + 1; *c; c++)
    if (!(isalnum((unsigned char)*c) || *c == '_')) return 0;
  return 1;
}

/* The text is built as pieces in a Lua table (out, an absolute index; *n pieces so far),
 * so the stack stays balanced whatever the nesting. */
static void put(lua_State *L, int out, int *n, const char *s) {
  lua_pushstring(L, s);
  lua_rawseti(L, out, ++*n);
}

static void put_top(lua_State *L, int out, int *n) { /* pops the string on top */
  lua_rawseti(L, out, ++*n);
}

static void show_value(lua_State *L, int idx, int out, int *n, int depth, int indent, int multi);

/* The non-array keys of the table at idx, sorted, as a new array on top of the stack;
 * returns their count. */
static int sorted_keys(lua_State *L, int idx, lua_Integer alen) {
  lua_newtable(L);
  int keys = lua_gettop(L), nk = 0;
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    lua_pop(L, 1);
    if (lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 1 && lua_tointeger(L, -1) <= alen) continue;
    int j = nk;
    lua_pushvalue(L, -1); /* the key to place */
    while (j > 0) {
      lua_rawgeti(L, keys, j);
      if (!key_less(L, -2, -1)) {
        lua_pop(L, 1);
        break;
      }
      lua_rawseti(L, keys, j + 1); /* move keys[j] up one */
      j--;
    }
    lua_rawseti(L, keys, j + 1);
    nk++;
  }
  return nk;
}

static void newline(lua_State *L, int out, int *n, int indent) {
  char pad[82];
  int k = indent < 80 ? indent : 80;
  pad[0] = '\n';
  memset(pad + 1, ' ', (size_t)k);
  pad[k + 1] = 0;
  put(L, out, n, pad);
}

/* A table as {1, 2, a = 1, b = {...}}: keys sorted after the array part; one line when it
 * fits (multi 0), else one entry per line indented. */
static void show_table(lua_State *L, int idx, int out, int *n, int depth, int indent, int multi) {
  lua_Integer alen = (lua_Integer)lua_rawlen(L, idx);
  int nk = sorted_keys(L, idx, alen);
  int keys = lua_gettop(L);
  put(L, out, n, "{");
  for (lua_Integer i = 1; i <= alen + nk; i++) {
    if (i > 1) put(L, out, n, ",");
    if (multi)
      newline(L, out, n, indent + 2);
    else if (i > 1)
      put(L, out, n, " ");
    if (i <= alen) {
      lua_rawgeti(L, idx, i);
    } else {
      lua_rawgeti(L, keys, (lua_Integer)(i - alen));
      if (lua_type(L, -1) == LUA_TSTRING && is_identifier(lua_tostring(L, -1))) {
        lua_pushvalue(L, -1);
        put_top(L, out, n);
      } else {
        put(L, out, n, "[");
        show_value(L, -1, out, n, depth + 1, indent + 2, 0);
        put(L, out, n, "]");
      }
      put(L, out, n, " = ");
      lua_rawget(L, idx);
    }
    show_value(L, -1, out, n, depth + 1, indent + 2, -1);
    lua_pop(L, 1);
  }
  if (multi && alen + nk > 0) newline(L, out, n, indent);
  put(L, out, n, "}");
  lua_pop(L, 1); /* keys */
}

/* Appends the value at idx as the REPL shows it (strings quoted inside tables). multi:
 * 1 one entry per line, 0 one line, -1 one line if it fits in 78 columns. */
static void show_value(lua_State *L, int idx, int out, int *n, int depth, int indent, int multi) {
  idx = lua_absindex(L, idx);
  switch (lua_type(L, idx)) {
  case LUA_TNUMBER:
    show_number(L, idx);
    put_top(L, out, n);
    return;
  case LUA_TSTRING:
    if (depth == 0) {
      lua_pushvalue(L, idx);
    } else {
      lua_getglobal(L, "string");
      lua_getfield(L, -1, "format");
      lua_remove(L, -2);
      lua_pushliteral(L, "%q");
      lua_pushvalue(L, idx);
      lua_call(L, 2, 1);
    }
    put_top(L, out, n);
    return;
  case LUA_TTABLE:
    if (luaL_getmetafield(L, idx, "__tostring") != LUA_TNIL) {
      lua_pop(L, 1);
      break;
    }
    lua_getfield(L, LUA_REGISTRYINDEX, "normscope.show.seen");
    lua_pushvalue(L, idx);
    if (lua_rawget(L, -2) != LUA_TNIL || depth > 6) {
      lua_pop(L, 2);
      put(L, out, n, depth > 6 ? "{...}" : "{...cycle}");
      return;
    }
    lua_pop(L, 1);
    lua_pushvalue(L, idx);
    lua_pushboolean(L, 1);
    lua_rawset(L, -3); /* seen[t] = true */
    if (multi < 0) {   /* one line if it fits */
      lua_newtable(L);
      int one = lua_gettop(L), k = 0;
      show_table(L, idx, one, &k, depth, indent, 0);
      lua_getglobal(L, "table");
      lua_getfield(L, -1, "concat");
      lua_remove(L, -2);
      lua_pushvalue(L, one);
      lua_call(L, 1, 1);
      size_t len = lua_rawlen(L, -1);
      if ((size_t)indent + len <= 78) {
        put_top(L, out, n);
      } else {
        lua_pop(L, 1);
        show_table(L, idx, out, n, depth, indent, 1);
      }
      lua_pop(L, 1); /* one */
    } else {
      show_table(L, idx, out, n, depth, indent, multi);
    }
    lua_pushvalue(L, idx);
    lua_pushnil(L);
    lua_rawset(L, -3); /* seen[t] = nil */
    lua_pop(L, 1);     /* seen */
    return;
  default:
    break;
  }
  luaL_tolstring(L, idx, NULL);
  put_top(L, out, n);
}

void nslr_show(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, "normscope.show.seen");
  lua_newtable(L);
  int out = lua_gettop(L), n = 0;
  show_value(L, idx, out, &n, 0, 0, -1);
  lua_getglobal(L, "table");
  lua_getfield(L, -1, "concat");
  lua_remove(L, -2);
  lua_insert(L, out);
  lua_call(L, 1, 1);
}

/* Protected: formats the values on the stack for reading, tab separated, with a final
 * newline: tables nested with their keys sorted, numbers in full. Returns one string. */
static int format_values(lua_State *L) {
  int n = lua_gettop(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b); /* the buffer may occupy a stack slot: push the values above it */
  for (int i = 1; i <= n; i++) {
    if (i > 1) luaL_addchar(&b, '\t');
    nslr_show(L, i);
    luaL_addvalue(&b);
  }
  luaL_addchar(&b, '\n');
  luaL_pushresult(&b);
  return 1;
}

/* The REPL's and the screen prompt's one sink: a value or a message, sanitized (a string
 * from a file, a state file's error, can hold escape sequences: core/text.h); a message in
 * one call with its final newline, like a result line. */
static void emit(nslr_writer out, void *ud, lua_State *L, int idx, int is_error) {
  size_t len;
  const char *s = lua_tolstring(L, idx, &len);
  if (!out || !s) return;
  const unsigned keep = NS_TEXT_KEEP_NL | NS_TEXT_KEEP_TAB;
  size_t need = ns_text_sanitize(NULL, 0, s, len, keep);
  char *c = malloc(need + 2);
  if (!c) { /* no room for a safe copy: say so rather than show it raw */
    static const char oom[] = "normscope: out of memory\n";
    out(ud, oom, sizeof oom - 1, 1);
    return;
  }
  ns_text_sanitize(c, need + 1, s, len, keep);
  if (is_error) c[need++] = '\n';
  out(ud, c, need, is_error);
  free(c);
}

int nslr_eval(lua_State *L, const char *chunk, const char *chunkname, nslr_writer out, void *ud) {
  int top = lua_gettop(L);
  if (!chunkname) chunkname = "=stdin";
  if (!lua_checkstack(L, 8)) return NSLR_ERROR;
  size_t len = strlen(chunk);

  /* "return " .. chunk first: an expression shows its values. */
  lua_pushliteral(L, "return ");
  lua_pushlstring(L, chunk, len);
  lua_concat(L, 2);
  size_t rlen;
  const char *ret = lua_tolstring(L, -1, &rlen);
  int status = luaL_loadbuffer(L, ret, rlen, chunkname);
  lua_remove(L, -2); /* drop the text: func-or-error */
  if (status != LUA_OK) {
    int ret_incomplete = incomplete(L, status);
    lua_pop(L, 1);
    status = luaL_loadbuffer(L, chunk, len, chunkname);
    /* More text could make either reading valid ("for i = 1, 3 do", "1 +"). */
    if (status == LUA_ERRSYNTAX && (incomplete(L, status) || ret_incomplete)) {
      lua_settop(L, top);
      return NSLR_INCOMPLETE;
    }
  }
  if (status == LUA_OK) status = nslr_docall(L, 0, LUA_MULTRET);
  if (status != LUA_OK) {
    emit(out, ud, L, -1, 1);
    lua_settop(L, top);
    return NSLR_ERROR;
  }
  int n = lua_gettop(L) - top;
  if (n > 0) {
    if (!lua_checkstack(L, LUA_MINSTACK)) {
      lua_settop(L, top);
      lua_pushliteral(L, "too many results to print");
      emit(out, ud, L, -1, 1);
      lua_settop(L, top);
      return NSLR_ERROR;
    }
    lua_pushcfunction(L, format_values);
    lua_insert(L, top + 1);
    if (nslr_docall(L, n, 1) != LUA_OK) {
      lua_pushfstring(L, "error converting a result to text (%s)", lua_tostring(L, -1));
      emit(out, ud, L, -1, 1);
      lua_settop(L, top);
      return NSLR_ERROR;
    }
    emit(out, ud, L, -1, 0);
  }
  lua_settop(L, top);
  return NSLR_OK;
}

/* ---------------------------------------------------------------- history */

/* The file is rewritten whole on every entry through ns_file_write_atomic_mode
 * (temporary file, fsync, rename, fsync of the folder, mode 0600): a crash or SIGKILL
 * leaves the previous file or the new one, never a mix. Another session's writes are
 * seen by the file's identity changing (every rename makes a new inode); its entries are
 * then read back before ours is added, so two sessions do not erase each other's.
 *
 * Read-back and write are one step under an advisory lock (fcntl) on the file beside it,
 * <history>.lock (mode 0600, never removed): without it, two sessions writing at the same
 * moment could each read the file before the other's rename, and the second rename would
 * drop the first one's entry. The wait is bounded (HIST_LOCK_WAIT_MS): a lock that cannot
 * be had (held by a stuck process, or a folder where locks fail) is warned about once and
 * the entry written anyway, and while it stays unavailable later entries wait only
 * HIST_LOCK_RETRY_MS, so the REPL never hangs on it. */
#define HIST_LOCK_WAIT_MS 5000
#define HIST_LOCK_RETRY_MS 200
static int hist_ready;        /* nslr_history_init ran */
static char *hist_path;       /* NULL: no file */
static int hist_writable;     /* writing the file works */
static struct stat hist_seen; /* the file as last read or written by us */
static int hist_seen_ok;      /* hist_seen is valid (the file existed) */

static int hist_quiet;       /* keep warnings in hist_err only (the screen shows them) */
static char hist_err[512];   /* the last warning, "" if none */
static int hist_lock_failed; /* the last lock attempt failed: retry briefly only */
static int hist_lock_warned; /* the lock's warning was given (once per session) */

static void hist_warn_msg(const char *what, const char *path, const char *why) {
  snprintf(hist_err, sizeof hist_err, "normscope: history: %s %s: %.300s (history is not saved)",
           what, path ? path : "", why);
  if (!hist_quiet) fprintf(stderr, "%s\n", hist_err);
}

static void hist_warn(const char *what, const char *path, int err) {
  hist_warn_msg(what, path, err ? strerror(err) : "no home folder");
}

/* The lock's warning, once per session: the entry is still written. */
static void hist_lock_warn(const char *lock, const char *why) {
  if (hist_lock_warned) return;
  hist_lock_warned = 1;
  snprintf(hist_err, sizeof hist_err,
           "normscope: history: cannot lock %s: %s (writing without the lock: another "
           "session's entry written at the same moment may be lost)",
           lock, why);
  if (!hist_quiet) fprintf(stderr, "%s\n", hist_err);
}

static long ms_since(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long)(t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Takes the write lock on <history>.lock, waiting at most HIST_LOCK_WAIT_MS (polled:
 * fcntl's blocking wait could only be bounded by a signal). Returns the descriptor to
 * give hist_unlock, or -1 when the lock was not had (warned once). */
static int hist_lock(void) {
  size_t n = strlen(hist_path) + sizeof ".lock";
  char *lock = malloc(n);
  if (!lock) {
    hist_lock_warn(hist_path, strerror(ENOMEM));
    return -1;
  }
  snprintf(lock, n, "%s.lock", hist_path);
  int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    hist_lock_warn(lock, strerror(errno));
    free(lock);
    return -1;
  }
  struct flock fl;
  memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET; /* l_start 0, l_len 0: the whole file */
  long limit = hist_lock_failed ? HIST_LOCK_RETRY_MS : HIST_LOCK_WAIT_MS;
  long pause_us = 500; /* doubled up to 8 ms: short, as the holder keeps it briefly */
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while (fcntl(fd, F_SETLK, &fl) != 0) {
    int e = errno;
    if (e == EINTR) continue;
    if ((e != EACCES && e != EAGAIN) || ms_since(&t0) >= limit) {
      char why[128];
      if (e == EACCES || e == EAGAIN)
        snprintf(why, sizeof why, "still held by another process after %ld ms", limit);
      else
        snprintf(why, sizeof why, "%s", strerror(e));
      hist_lock_warn(lock, why);
      hist_lock_failed = 1;
      close(fd);
      free(lock);
      return -1;
    }
    struct timespec d = {0, pause_us * 1000};
    nanosleep(&d, NULL);
    if (pause_us < 8000) pause_us *= 2;
  }
  hist_lock_failed = 0;
  free(lock);
  return fd;
}

/* Releases the lock of hist_lock (closing its descriptor drops it); -1 is fine. */
static void hist_unlock(int fd) {
  if (fd >= 0) close(fd);
}

/* Remembers the file's identity after reading or writing it. */
static void hist_note_file(void) {
  hist_seen_ok = stat(hist_path, &hist_seen) == 0;
}

/* 1 when someone else replaced the file since hist_note_file (inode, size or time). */
static int hist_changed(void) {
  struct stat st;
  if (stat(hist_path, &st) != 0) return 0; /* gone: nothing to take over */
  if (!hist_seen_ok) return 1;
  /* the times to the nanosecond: inode numbers are reused, and a file replaced twice in
   * one second may come back with our old number and size */
  return st.st_ino != hist_seen.st_ino || st.st_dev != hist_seen.st_dev ||
         st.st_size != hist_seen.st_size || st.st_mtim.tv_sec != hist_seen.st_mtim.tv_sec ||
         st.st_mtim.tv_nsec != hist_seen.st_mtim.tv_nsec ||
         st.st_ctim.tv_sec != hist_seen.st_ctim.tv_sec ||
         st.st_ctim.tv_nsec != hist_seen.st_ctim.tv_nsec;
}

/* readline's in-memory history in its own file format, as read_history reads it back
 * with history_multiline_entries: each entry is a "#<seconds>" line and then its lines.
 * malloc'd, length in *len; NULL when out of memory. */
static char *hist_serialize(size_t *len) {
  HIST_ENTRY **list = history_list();
  size_t cap = 1;
  for (int i = 0; list && list[i]; i++) cap += strlen(list[i]->line ? list[i]->line : "") + 32;
  char *buf = malloc(cap);
  if (!buf) return NULL;
  size_t at = 0;
  for (int i = 0; list && list[i]; i++) {
    time_t t = history_get_time(list[i]); /* 0: none or unreadable, so now */
    if (t <= 0) t = time(NULL);
    at += (size_t)snprintf(buf + at, cap - at, "#%lld\n%s\n", (long long)t,
                           list[i]->line ? list[i]->line : "");
  }
  buf[at] = '\0';
  *len = at;
  return buf;
}

/* The history file is read by its end only, and only its last NSLR_HISTORY_MAX entries are
 * kept (a junk file of 20 MB made readline's own reader take minutes: each line beyond the
 * limit shifted the whole list). */
#define HIST_READ_MAX ((size_t)16 << 20)

/* A "#<digits>" line: an entry's timestamp. */
static int is_stamp(const char *l, size_t n) {
  if (n < 2 || l[0] != '#') return 0;
  for (size_t i = 1; i < n; i++)
    if (l[i] < '0' || l[i] > '9') return 0;
  return 1;
}

typedef struct {
  const char *text, *stamp;
  size_t tlen, slen;
} hist_span;

/* Keeps the entry in the ring of the last NSLR_HISTORY_MAX. */
static void hist_keep(hist_span *ring, size_t *n, const char *text, size_t tlen, const char *stamp,
                      size_t slen) {
  hist_span *e = &ring[*n % NSLR_HISTORY_MAX];
  e->text = text, e->tlen = tlen, e->stamp = stamp, e->slen = slen;
  (*n)++;
}

/* Adds one entry (its lines joined) with its timestamp line, if any. */
static void hist_take(const hist_span *h) {
  char *e = malloc(h->tlen + 1), *ts = h->stamp ? malloc(h->slen + 1) : NULL;
  if (e && (!h->stamp || ts)) {
    memcpy(e, h->text, h->tlen);
    e[h->tlen] = '\0';
    add_history(e);
    if (ts) {
      memcpy(ts, h->stamp, h->slen);
      ts[h->slen] = '\0';
      add_history_time(ts);
    }
  }
  free(e);
  free(ts);
}

/* read_history's work on the file's last HIST_READ_MAX bytes, through the one opener that
 * refuses what is not a regular file (a FIFO there would wait forever): each "#<seconds>"
 * line starts an entry whose lines follow it (history_multiline_entries); lines before the
 * first are an entry each. 0, ENOENT, or another errno (why says more). */
static int hist_read(const char *path, char *why, size_t cap) {
  if (access(path, F_OK) != 0 && errno == ENOENT) return ENOENT;
  char err[NS_ERRLEN];
  int fd = ns_file_open_regular(path, err);
  if (fd < 0) {
    snprintf(why, cap, "%s", err);
    return EINVAL;
  }
  struct stat st;
  off_t size = fstat(fd, &st) == 0 ? st.st_size : 0, from = 0;
  if ((size_t)size > HIST_READ_MAX) from = size - (off_t)HIST_READ_MAX;
  size_t want = (size_t)(size - from), got = 0;
  char *buf = malloc(want + 1);
  hist_span *ring = malloc(NSLR_HISTORY_MAX * sizeof *ring);
  int e = buf && ring ? 0 : ENOMEM;
  if (!e && lseek(fd, from, SEEK_SET) != from) e = errno;
  while (!e && got < want) {
    ssize_t r = read(fd, buf + got, want - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) e = errno;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd);
  if (e) {
    free(buf);
    free(ring);
    snprintf(why, cap, "%s", strerror(e));
    return e;
  }
  char *p = buf, *end = buf + got;
  if (from > 0) { /* cut inside the file: begin at the first entry that starts after it */
    char *q = p;
    while (q < end) {
      char *nl = memchr(q, '\n', (size_t)(end - q));
      size_t n = (size_t)((nl ? nl : end) - q);
      if (q > p && is_stamp(q, n)) break;
      q = nl ? nl + 1 : end;
    }
    p = q;
  }
  const char *stamp = NULL, *text = NULL;
  size_t slen = 0, tlen = 0, kept = 0;
  while (p < end) {
    char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = (size_t)((nl ? nl : end) - p);
    if (is_stamp(p, n)) {
      if (stamp && text) hist_keep(ring, &kept, text, tlen, stamp, slen);
      stamp = p, slen = n, text = NULL, tlen = 0;
    } else if (stamp) { /* a line of the entry: its text runs on to here */
      if (!text) text = p;
      tlen = (size_t)(p + n - text);
    } else if (n > 0) {
      hist_keep(ring, &kept, p, n, NULL, 0);
    }
    p = nl ? nl + 1 : end;
  }
  if (stamp && text) hist_keep(ring, &kept, text, tlen, stamp, slen);
  size_t first = kept > NSLR_HISTORY_MAX ? kept - NSLR_HISTORY_MAX : 0;
  for (size_t k = first; k < kept; k++) hist_take(&ring[k % NSLR_HISTORY_MAX]);
  free(ring);
  free(buf);
  return 0;
}

/* Writes the whole history to the file, atomically and private. 0, or -1 with a warning. */
static int hist_write(void) {
  size_t len = 0;
  char *buf = hist_serialize(&len);
  if (!buf) {
    hist_warn("cannot write", hist_path, ENOMEM);
    return -1;
  }
  char err[NS_ERRLEN];
  int rc = ns_file_write_atomic_mode(hist_path, buf, len, 0600, err);
  free(buf);
  if (rc != 0) {
    hist_warn_msg("cannot write", hist_path, err);
    return -1;
  }
  hist_note_file();
  return 0;
}

/* mkdir -p with mode 0700 for the created folders. Returns 0 or -1 with errno. */
static int make_dirs(char *path) {
  for (char *p = path + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    int r = mkdir(path, 0700);
    int e = errno;
    *p = '/';
    if (r != 0 && e != EEXIST) {
      errno = e;
      return -1;
    }
  }
  if (mkdir(path, 0700) != 0 && errno != EEXIST) return -1;
  struct stat st;
  if (stat(path, &st) != 0) return -1;
  if (!S_ISDIR(st.st_mode)) {
    errno = ENOTDIR;
    return -1;
  }
  return 0;
}

int nslr_history_init(void) {
  return nslr_history_open(0);
}

const char *nslr_history_error(void) {
  return hist_err[0] ? hist_err : NULL;
}

int nslr_history_open(int quiet) {
  hist_quiet = quiet;
  if (hist_ready) return hist_writable ? 0 : -1;
  hist_ready = 1;
  using_history();
  stifle_history(NSLR_HISTORY_MAX);
  /* A multi-line chunk stays one entry in the file: each entry starts with a
   * "#<time>" line and the lines up to the next one belong to it (bash's lithist). */
  history_comment_char = '#';
  history_write_timestamps = 1;
  history_multiline_entries = 1;

  const char *state = getenv("XDG_STATE_HOME");
  const char *suffix = "/normscope";
  if (!state || state[0] != '/') { /* unset, empty or relative: the XDG default */
    state = getenv("HOME");
    if (!state || !state[0]) {
      struct passwd *pw = getpwuid(getuid());
      state = pw ? pw->pw_dir : NULL;
    }
    suffix = "/.local/state/normscope";
  }
  if (!state) {
    hist_warn("cannot find", "$HOME", 0);
    return -1;
  }
  size_t n = strlen(state) + strlen(suffix) + sizeof "/history";
  char *dir = malloc(n);
  if (!dir) return -1;
  snprintf(dir, n, "%s%s", state, suffix);
  if (make_dirs(dir) != 0) {
    hist_warn("cannot create", dir, errno);
    free(dir);
    return -1;
  }
  /* Writing makes a temporary file in the folder and renames it over the file: the
   * folder must be writable (the file itself is never opened for writing). */
  int can_write = access(dir, W_OK | X_OK) == 0;
  int write_errno = errno;
  strcat(dir, "/history");
  hist_path = dir;

  char why[NS_ERRLEN] = "";
  int e = hist_read(hist_path, why, sizeof why);
  if (e != 0 && e != ENOENT) {
    hist_warn_msg("cannot read", hist_path, why);
    return -1;
  }
  hist_note_file();
  if (!can_write) {
    hist_warn("cannot write", hist_path, write_errno);
    return -1;
  }
  hist_writable = 1;
  return 0;
}

void nslr_history_add(const char *entry) {
  if (!entry || !entry[0]) return;
  int lock = hist_writable ? hist_lock() : -1; /* until our write has been renamed */
  /* Another session wrote: take its entries (which include ours written before) first.
   * A file that cannot be read now leaves our entries as they are. */
  if (hist_writable && hist_changed() && access(hist_path, R_OK) == 0) {
    char why[NS_ERRLEN];
    clear_history();
    (void)hist_read(hist_path, why, sizeof why);
    hist_note_file();
  }
  HIST_ENTRY *last = history_length > 0 ? history_get(history_base + history_length - 1) : NULL;
  if (last && last->line && strcmp(last->line, entry) == 0) {
    hist_unlock(lock);
    return;
  }
  add_history(entry);
  using_history(); /* Up starts from the newest entry (also after a merge) */
  if (hist_writable && hist_write() != 0) hist_writable = 0;
  hist_unlock(lock);
}

void nslr_history_save(void) {
  /* Nothing left to do: every nslr_history_add wrote the whole file, at most
   * NSLR_HISTORY_MAX entries (readline's history is stifled to that). */
}

/* ---------------------------------------------------------------- completion */

static lua_State *complete_L;

/* Hands out the candidates one by one (readline's generator protocol). */
static char **gen_list;
static char *generator(const char *text, int state) {
  static int next;
  (void)text;
  if (state == 0) next = 0;
  if (!gen_list || !gen_list[next]) return NULL;
  return strdup(gen_list[next++]);
}

static char **attempt_completion(const char *text, int start, int end) {
  (void)text;
  if (nslc_in_string(rl_line_buffer, start)) return NULL; /* readline: file names */
  rl_attempted_completion_over = 1;
  rl_completion_append_character = '\0';
  gen_list = nslc_complete(complete_L, rl_line_buffer, start, end);
  if (!gen_list) return NULL;
  char **matches = rl_completion_matches(text, generator);
  nslc_free(gen_list);
  gen_list = NULL;
  return matches;
}

void nslr_readline_setup(lua_State *L) {
  complete_L = L;
  rl_readline_name = "normscope";
  rl_attempted_completion_function = attempt_completion;
  rl_completer_word_break_characters = NSLC_WORD_BREAKS;
  rl_basic_word_break_characters = NSLC_WORD_BREAKS;
}

/* ---------------------------------------------------------------- the REPL */

static lua_State *repl_L;
static char *pending; /* the lines of an incomplete chunk, or NULL */
static int repl_done;
static volatile sig_atomic_t got_sigint, got_sigwinch, got_tstp, got_term;

static void on_signal(int sig) {
  if (sig == SIGINT)
    got_sigint = 1;
  else if (sig == SIGWINCH)
    got_sigwinch = 1;
  else if (sig == SIGTSTP)
    got_tstp = 1;
  else
    got_term = sig;
}

static void write_out(void *ud, const char *text, size_t len, int is_error) {
  (void)ud;
  FILE *f = is_error ? stderr : stdout;
  fflush(stdout);
  fwrite(text, 1, len, f);
  fflush(f);
}

static void drop_pending(void) {
  free(pending);
  pending = NULL;
}

static void on_line(char *line) {
  if (!line) {     /* Ctrl-D on an empty line, or end of input */
    if (pending) { /* inside a chunk: abandon it and show why it was unfinished */
      fputs("\n", stdout);
      fflush(stdout);
      if (luaL_loadbuffer(repl_L, pending, strlen(pending), "=stdin") != LUA_OK)
        fprintf(stderr, "%s\n", lua_tostring(repl_L, -1));
      lua_pop(repl_L, 1);
      drop_pending();
      rl_callback_handler_install(PROMPT1, on_line);
      return;
    }
    fputs("\n", stdout);
    repl_done = 1;
    rl_callback_handler_remove(); /* no new prompt */
    return;
  }
  char *chunk;
  if (pending) {
    size_t n = strlen(pending) + strlen(line) + 2;
    chunk = malloc(n);
    if (chunk) snprintf(chunk, n, "%s\n%s", pending, line);
    free(line);
    drop_pending();
  } else {
    chunk = line;
  }
  if (!chunk) {
    fputs("normscope: out of memory\n", stderr);
    rl_callback_handler_install(PROMPT1, on_line);
    return;
  }
  /* While Lua runs the terminal is in its normal mode: Ctrl-Z may stop us at once. */
  struct sigaction dfl, old_tstp;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigset_t tstp;
  sigemptyset(&tstp);
  sigaddset(&tstp, SIGTSTP);
  sigaction(SIGTSTP, &dfl, &old_tstp);
  sigprocmask(SIG_UNBLOCK, &tstp, NULL);
  int status = nslr_eval(repl_L, chunk, "=stdin", write_out, NULL);
  sigprocmask(SIG_BLOCK, &tstp, NULL);
  sigaction(SIGTSTP, &old_tstp, NULL);
  fflush(stdout);
  if (status == NSLR_INCOMPLETE) {
    pending = chunk;
    rl_callback_handler_install(PROMPT2, on_line);
    return;
  }
  /* The prompt first: readline puts the terminal back in its own mode, so keys typed
   * while the history file is written (two fsyncs) wait for it, not echoed by the tty. */
  rl_callback_handler_install(PROMPT1, on_line);
  nslr_history_add(chunk);
  free(chunk);
}

/* Ctrl-Z at the prompt: give the terminal back in its normal mode, stop, and take it
 * again (with the line being edited) when continued. */
static void suspend(void) {
  rl_deprep_terminal();
  struct sigaction dfl, mine;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGTSTP, &dfl, &mine);
  sigset_t tstp;
  sigemptyset(&tstp);
  sigaddset(&tstp, SIGTSTP);
  raise(SIGTSTP); /* pending while blocked: delivered (and we stop) on unblocking */
  sigprocmask(SIG_UNBLOCK, &tstp, NULL);
  sigprocmask(SIG_BLOCK, &tstp, NULL);
  sigaction(SIGTSTP, &mine, NULL);
  rl_prep_terminal(1);
  rl_forced_update_display();
}

/* Ctrl-C at the prompt: forget the line and any pending chunk, start afresh. */
static void cancel_input(void) {
  rl_free_line_state();
  rl_callback_sigcleanup();
  rl_echo_signal_char(SIGINT);
  rl_replace_line("", 0);
  rl_point = rl_end = 0;
  rl_crlf();
  drop_pending();
  rl_callback_handler_install(PROMPT1, on_line);
}

int nslr_repl(lua_State *L) {
  repl_L = L;
  repl_done = 0;
  nslr_history_init();
  nslr_readline_setup(L);
  rl_catch_signals = 0; /* our handlers: readline would re-raise SIGINT and exit */
  rl_catch_sigwinch = 0;

  if (isatty(STDIN_FILENO))
    printf("normscope %s (%s); the module is `ns`. Ctrl-D exits.\n", PACKAGE_VERSION, LUA_RELEASE);

  /* Signals are blocked except while waiting for input, so none is lost between
   * checking the flags and waiting again. */
  static const int sigs[] = {SIGINT, SIGWINCH, SIGTERM, SIGHUP, SIGTSTP};
  enum { NSIGS = sizeof sigs / sizeof sigs[0] };
  struct sigaction sa, old[NSIGS];
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigset_t block, waitmask;
  sigemptyset(&block);
  for (int k = 0; k < NSIGS; k++) {
    sigaction(sigs[k], &sa, &old[k]);
    sigaddset(&block, sigs[k]);
  }
  sigprocmask(SIG_BLOCK, &block, &waitmask);
  for (int k = 0; k < NSIGS; k++) sigdelset(&waitmask, sigs[k]);

  rl_callback_handler_install(PROMPT1, on_line);
  int fd = fileno(rl_instream ? rl_instream : stdin);
  int status = 0;
  while (!repl_done) {
    fd_set in;
    FD_ZERO(&in);
    FD_SET(fd, &in);
    int r = pselect(fd + 1, &in, NULL, NULL, NULL, &waitmask);
    int wait_errno = errno; /* the handlers below may change errno */
    if (got_term) {
      status = 128 + got_term;
      break;
    }
    if (got_sigwinch) {
      got_sigwinch = 0;
      rl_resize_terminal();
    }
    if (got_tstp) {
      got_tstp = 0;
      suspend();
    }
    if (got_sigint) {
      got_sigint = 0;
      cancel_input();
      continue;
    }
    if (r < 0) {
      if (wait_errno == EINTR) continue;
      fprintf(stderr, "normscope: repl: waiting for input: %s\n", strerror(wait_errno));
      status = 1;
      break;
    }
    if (r > 0) rl_callback_read_char();
  }
  rl_callback_handler_remove();
  drop_pending();
  nslr_history_save();
  for (int k = 0; k < NSIGS; k++) sigaction(sigs[k], &old[k], NULL);
  sigprocmask(SIG_UNBLOCK, &block, NULL);
  fflush(stdout);
  return status;
}
