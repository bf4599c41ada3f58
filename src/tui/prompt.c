/* prompt.c: the Lua prompt inside the screen.
 *
 * GNU Readline runs through its callback interface and never sees the terminal: keys
 * arrive from curses and are handed over one byte at a time through our getc function;
 * our redisplay function does nothing (the screen draws rl_line_buffer itself); the
 * terminal preparation hooks are no-ops and readline's signal handlers are off. Chunks
 * are evaluated by nslr_eval (shared with `normscope repl`), results and errors go to
 * the scrollback, and history is the REPL's history file.
 */
#include <lauxlib.h>
#include <lua.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "repl/complete.h"
#include "repl/repl.h"
#include "tui/screen.h"

#define SB_MAX 2000

struct tui_prompt {
  lua_State *L;
  int open;
  char *chunk; /* lines of an incomplete chunk so far */
  char **lines;
  int *styles;
  int n;      /* lines in the scrollback (oldest first) */
  int scroll; /* lines scrolled back from the newest */
  unsigned char q[256];
  int qh, qt;
  int evaluated;
  FILE *devnull;
  FILE *noinput; /* read end of an empty pipe (nofd[1] kept open, never written) */
  int nofd[2];
  char hist_warned[NS_ERRLEN]; /* the last history warning shown in the scrollback */
  char *last_list;             /* the completion list shown last (Tab Tab shows it once) */
  int (*answer)(void *ud, const char *expr); /* "= EXPR" lines (a lesson's answer), or NULL */
  void *answer_ud;
};

void tui_prompt_set_answer(tui_prompt *p, int (*fn)(void *ud, const char *expr), void *ud) {
  p->answer = fn;
  p->answer_ud = ud;
}

static tui_prompt *active; /* readline's callbacks are global: the prompt they serve */

void tui_prompt_echo(tui_prompt *p, const char *text, int style);

/* A history file that cannot be read or written is said in the scrollback (once per
 * distinct warning): stderr belongs to curses while the screen is up. */
static void history_warning(tui_prompt *p) {
  const char *w = nslr_history_error();
  if (!w || strcmp(w, p->hist_warned) == 0) return;
  snprintf(p->hist_warned, sizeof p->hist_warned, "%s", w);
  tui_prompt_echo(p, w, PLOT_S_MARK);
}

void tui_prompt_echo(tui_prompt *p, const char *text, int style) {
  /* one scrollback entry per line of text */
  const char *s = text;
  do {
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) : strlen(s);
    if (!nl && len == 0 && s != text) break;
    if (p->n == SB_MAX) {
      free(p->lines[0]);
      memmove(p->lines, p->lines + 1, (SB_MAX - 1) * sizeof *p->lines);
      memmove(p->styles, p->styles + 1, (SB_MAX - 1) * sizeof *p->styles);
      p->n--;
    }
    char *line = malloc(len + 1);
    if (!line) return;
    memcpy(line, s, len);
    line[len] = 0;
    for (char *c = line; *c; c++)
      if (*c == '\t') *c = ' ';
    p->lines[p->n] = line;
    p->styles[p->n] = style;
    p->n++;
    s = nl ? nl + 1 : s + len;
  } while (*s);
  p->scroll = 0;
}

static void writer(void *ud, const char *text, size_t len, int is_error) {
  tui_prompt *p = ud;
  char *t = malloc(len + 1);
  if (!t) return;
  memcpy(t, text, len);
  t[len] = 0;
  if (len && t[len - 1] == '\n') t[len - 1] = 0;
  /* The screen has little room: an error shows its message, not the traceback. */
  char *tb = is_error ? strstr(t, "\nstack traceback:") : NULL;
  if (tb) *tb = 0;
  tui_prompt_echo(p, t, is_error ? PLOT_S_MARK : PLOT_S_TEXT);
  free(t);
}

/* print() and io.write() inside the screen write to the scrollback, not to the
 * terminal behind curses. */
static int l_print(lua_State *L) {
  tui_prompt *p = lua_touserdata(L, lua_upvalueindex(1));
  int n = lua_gettop(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 1; i <= n; i++) {
    if (i > 1) luaL_addchar(&b, '\t');
    luaL_tolstring(L, i, NULL); /* push the string form */
    luaL_addvalue(&b);          /* move it into the buffer */
  }
  luaL_pushresult(&b);
  tui_prompt_echo(p, lua_tostring(L, -1), PLOT_S_TEXT);
  return 0;
}

static int l_write(lua_State *L) {
  tui_prompt *p = lua_touserdata(L, lua_upvalueindex(1));
  int n = lua_gettop(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (int i = 1; i <= n; i++) {
    luaL_checkany(L, i);
    luaL_tolstring(L, i, NULL);
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  tui_prompt_echo(p, lua_tostring(L, -1), PLOT_S_TEXT);
  return 0;
}

/* The keyboard belongs to the screen: io.read() would block on raw keys behind curses. */
static int l_noread(lua_State *L) {
  return luaL_error(L, "io.read is not available inside the explorer (use normscope repl)");
}

static int rl_getc_queue(FILE *f) {
  (void)f;
  if (!active || active->qh == active->qt) return EOF;
  int c = active->q[active->qh];
  active->qh = (active->qh + 1) % (int)sizeof active->q;
  return c;
}

static void rl_redisplay_none(void) {}
static void rl_prep_none(int meta) {
  (void)meta;
}
static void rl_deprep_none(void) {}

static void set_prompt(const char *s) {
  rl_set_prompt(s);
}

/* ":w FILE" and ":e FILE" (typed as "w FILE" / "e FILE" after the ':' that opened the
 * prompt, or with the colon): the state is saved to or loaded from FILE through the Lua
 * globals save() and load(). Returns 1 when the line was such a command. */
static int file_command(tui_prompt *p, const char *line) {
  const char *c = line;
  while (*c == ' ') c++;
  if (*c == ':') c++;
  if ((c[0] != 'w' && c[0] != 'e') || (c[1] != ' ' && c[1] != 0)) return 0;
  const char *f = c + 1;
  while (*f == ' ') f++;
  size_t len = strlen(f);
  while (len && f[len - 1] == ' ') len--;
  int save = c[0] == 'w';
  if (!len) {
    tui_prompt_echo(p, save ? ":w needs a file name (:w FILE)" : ":e needs a file name (:e FILE)",
                    PLOT_S_MARK);
    return 1;
  }
  char msg[NS_ERRLEN + 64];
  if (!save) { /* a file that cannot be read is named, and nothing is loaded */
    snprintf(msg, sizeof msg, "%.*s", (int)len, f);
    FILE *fp = fopen(msg, "rb");
    if (!fp) {
      int e = errno;
      snprintf(msg, sizeof msg, ":e %.*s: %s (nothing changed)", (int)len, f, strerror(e));
      tui_prompt_echo(p, msg, PLOT_S_MARK);
      p->evaluated = 1;
      return 1;
    }
    fclose(fp);
  }
  lua_getglobal(p->L, save ? "save" : "load");
  lua_pushlstring(p->L, f, len);
  if (lua_pcall(p->L, 1, 0, 0) != LUA_OK) {
    snprintf(msg, sizeof msg, "%s", lua_tostring(p->L, -1));
    lua_pop(p->L, 1);
    tui_prompt_echo(p, msg, PLOT_S_MARK);
  } else {
    snprintf(msg, sizeof msg, "%s %.*s", save ? "state saved to" : "state loaded from", (int)len,
             f);
    tui_prompt_echo(p, msg, PLOT_S_GOOD);
  }
  p->evaluated = 1;
  return 1;
}

static void on_line(char *line) {
  tui_prompt *p = active;
  if (!p) {
    free(line);
    return;
  }
  if (!line) { /* Ctrl-D on an empty line: leave the prompt */
    p->open = 0;
    return;
  }
  free(p->last_list);
  p->last_list = NULL;
  tui_prompt_echo(p, p->chunk ? ">> " : "> ", PLOT_S_DIM);
  /* the echo above is its own line: append the typed text to it */
  {
    char *e = p->lines[p->n - 1];
    size_t a = strlen(e), b = strlen(line);
    char *m = realloc(e, a + b + 1);
    if (m) {
      memcpy(m + a, line, b + 1);
      for (char *c = m; *c; c++)
        if (*c == '\t') *c = ' ';
      p->lines[p->n - 1] = m;
    }
  }
  char *chunk;
  if (p->chunk) {
    size_t a = strlen(p->chunk), b = strlen(line);
    chunk = malloc(a + b + 2);
    if (chunk) {
      memcpy(chunk, p->chunk, a);
      chunk[a] = '\n';
      memcpy(chunk + a + 1, line, b + 1);
    }
    free(p->chunk);
    p->chunk = NULL;
  } else {
    chunk = strdup(line);
  }
  free(line);
  if (!chunk) return;
  /* a ':' typed again inside the prompt (":set{...}") is the prompt's own, not Lua's (a
   * "::label::" is Lua's) */
  {
    char *c = chunk;
    while (*c == ' ') c++;
    if (c[0] == ':' && c[1] != ':') memmove(chunk, c + 1, strlen(c + 1) + 1);
  }
  /* "= 13.2": a lesson's answer, when the screen takes one (the hook says so) */
  {
    const char *c = chunk;
    while (*c == ' ') c++;
    if (*c == '=' && p->answer && p->answer(p->answer_ud, c + 1)) {
      nslr_history_add(chunk);
      free(chunk);
      set_prompt("> ");
      p->evaluated = 1;
      return;
    }
    if (*c == '=') { /* no question open: the value of EXPR, as Lua 5.1's "= EXPR" gave */
      tui_prompt_echo(p, "(no question is open: = shows the value)", PLOT_S_DIM);
      memmove(chunk, c + 1, strlen(c + 1) + 1);
    }
  }
  if (file_command(p, chunk)) {
    nslr_history_add(chunk);
    free(chunk);
    set_prompt("> ");
    return;
  }
  int st = nslr_eval(p->L, chunk, "=prompt", writer, p);
  if (st == NSLR_INCOMPLETE) {
    p->chunk = chunk;
    set_prompt(">> ");
    return;
  }
  nslr_history_add(chunk);
  history_warning(p);
  free(chunk);
  set_prompt("> ");
  p->evaluated = 1;
}

tui_prompt *tui_prompt_new(lua_State *L) {
  tui_prompt *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->lines = calloc(SB_MAX, sizeof *p->lines);
  p->styles = calloc(SB_MAX, sizeof *p->styles);
  if (!p->lines || !p->styles) {
    free(p->lines);
    free(p->styles);
    free(p);
    return NULL;
  }
  p->L = L;
  lua_pushlightuserdata(L, p);
  lua_pushcclosure(L, l_print, 1);
  lua_setglobal(L, "print");
  if (lua_getglobal(L, "io") == LUA_TTABLE) {
    lua_pushlightuserdata(L, p);
    lua_pushcclosure(L, l_write, 1);
    lua_setfield(L, -2, "write");
    lua_pushcfunction(L, l_noread);
    lua_setfield(L, -2, "read");
  }
  lua_pop(L, 1); /* io */
  /* Readline must never touch the terminal: curses owns it. */
  p->devnull = fopen("/dev/null", "w");
  rl_readline_name = "normscope";
  rl_catch_signals = 0;
  rl_catch_sigwinch = 0;
  rl_change_environment = 0; /* keep LINES/COLUMNS out of the environment (curses resizes) */
  rl_getc_function = rl_getc_queue;
  rl_redisplay_function = rl_redisplay_none;
  rl_prep_term_function = rl_prep_none;
  rl_deprep_term_function = rl_deprep_none;
  /* rl_instream is only polled for typeahead (rl_insert reads ahead while input is
   * "queued"): give it an empty pipe so it never finds any and asks our getc instead. */
  if (pipe(p->nofd) == 0) p->noinput = fdopen(p->nofd[0], "r");
  rl_instream = p->noinput;
  rl_outstream = p->devnull;
  rl_variable_bind("bell-style", "none");
  rl_variable_bind("horizontal-scroll-mode", "on");
  nslr_history_open(1);
  active = p;
  rl_callback_handler_install("> ", on_line);
  tui_prompt_echo(p, "Lua prompt: set{...} changes the state, get() shows it, Esc leaves.",
                  PLOT_S_DIM);
  history_warning(p);
  return p;
}

void tui_prompt_free(tui_prompt *p) {
  if (!p) return;
  rl_callback_handler_remove();
  nslr_history_save();
  for (int i = 0; i < p->n; i++) free(p->lines[i]);
  free(p->lines);
  free(p->styles);
  free(p->chunk);
  free(p->last_list);
  if (p->devnull) fclose(p->devnull);
  if (p->noinput) {
    fclose(p->noinput);
    close(p->nofd[1]);
  }
  if (active == p) active = NULL;
  free(p);
}

void tui_prompt_open(tui_prompt *p) {
  p->open = 1;
  p->scroll = 0;
}
void tui_prompt_close(tui_prompt *p) {
  p->open = 0;
}
int tui_prompt_is_open(const tui_prompt *p) {
  return p->open;
}

static void feed(tui_prompt *p, const unsigned char *bytes, int n) {
  for (int i = 0; i < n; i++) {
    int next = (p->qt + 1) % (int)sizeof p->q;
    if (next == p->qh) break;
    p->q[p->qt] = bytes[i];
    p->qt = next;
  }
  active = p;
  while (p->qh != p->qt && p->open) rl_callback_read_char();
  p->qh = p->qt = 0;
}

static void complete(tui_prompt *p) {
  int end = rl_point;
  const char *line = rl_line_buffer;
  int start = nslc_wordstart(line, end);
  char **list = nslc_complete(p->L, line, start, end);
  if (!list) return;
  const char *rep = NULL;
  char *prefix = NULL;
  if (list[0] && !list[1])
    rep = list[0];
  else {
    prefix = nslc_common_prefix(list);
    rep = prefix;
    char buf[1024];
    size_t len = 0;
    int k;
    for (k = 0; list[k] && len + strlen(list[k]) + 3 < sizeof buf; k++)
      len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", k ? "  " : "", list[k]);
    if (list[k]) snprintf(buf + len, sizeof buf - len, "  ...");
    /* a second Tab on the same list shows nothing new */
    if (!p->last_list || strcmp(p->last_list, buf) != 0) {
      tui_prompt_echo(p, buf, PLOT_S_DIM);
      free(p->last_list);
      p->last_list = strdup(buf);
    }
  }
  if (rep && (int)strlen(rep) >= end - start) {
    rl_delete_text(start, end);
    rl_point = start;
    rl_insert_text(rep);
  }
  free(prefix);
  nslc_free(list);
}

/* Curses keys the prompt passes on to readline as the byte of their emacs binding. */
static const struct {
  unsigned key;
  unsigned char byte;
} rl_keys[] = {
    {KEY_LEFT, 2 /* C-b */},  {KEY_RIGHT, 6 /* C-f */}, {KEY_UP, 16 /* C-p */},
    {KEY_DOWN, 14 /* C-n */}, {KEY_HOME, 1 /* C-a */},  {KEY_END, 5 /* C-e */},
    {KEY_BACKSPACE, 127},     {KEY_ENTER, '\r'},
};

int tui_prompt_key(tui_prompt *p, int is_key_code, unsigned int ch) {
  p->evaluated = 0;
  unsigned char b[8];
  int n = 0;
  if (is_key_code) {
    for (size_t i = 0; i < sizeof rl_keys / sizeof rl_keys[0]; i++)
      if (ch == rl_keys[i].key) b[n++] = rl_keys[i].byte;
    if (ch == KEY_DC && rl_end > 0) b[n++] = 4; /* C-d deletes; on an empty line it would end */
    if (ch == KEY_PPAGE) tui_prompt_scroll(p, 5);
    if (ch == KEY_NPAGE) tui_prompt_scroll(p, -5);
    if (!n) return 0;
  } else if (ch == 27) {
    p->open = 0;
    return 0;
  } else if (ch == '\t') {
    complete(p);
    return 0;
  } else if (ch == '\n' || ch == '\r') {
    b[n++] = '\r';
  } else if (ch == 8) {
    b[n++] = 127;
  } else if (ch == 4 && rl_end == 0) {
    p->open = 0; /* Ctrl-D on an empty line leaves, as in the REPL */
    return 0;
  } else {
    n = plot_utf8_encode(ch, (char *)b);
  }
  if (n) feed(p, b, n);
  return p->evaluated;
}

void tui_prompt_cancel(tui_prompt *p) {
  free(p->chunk);
  p->chunk = NULL;
  rl_replace_line("", 0);
  rl_point = 0;
  set_prompt("> ");
  tui_prompt_echo(p, "^C (line dropped)", PLOT_S_DIM);
}

void tui_prompt_scroll(tui_prompt *p, int lines) {
  p->scroll += lines;
  if (p->scroll > p->n - 1) p->scroll = p->n - 1;
  if (p->scroll < 0) p->scroll = 0;
}

/* Code points in s. */
static int cplen(const char *s) {
  int n = 0;
  for (; *s; s++)
    if (((unsigned char)*s & 0xC0) != 0x80) n++;
  return n;
}

/* Byte offset of code point k of s. */
static size_t cpoff(const char *s, int k) {
  const char *p = s;
  while (*p && k > 0) {
    uint32_t cp;
    p += plot_utf8_decode(p, &cp);
    k--;
  }
  return (size_t)(p - s);
}

/* Where each row of s starts, wrapped at width code points: after the row's last space
 * when it has one in its second half (so a phrase is not cut mid-word), else at width.
 * Returns the rows, or -1 when they are more than max (the caller then cuts at width). */
#define WRAP_MAX 256
static int wrap_rows(const char *s, int width, size_t *start, int max) {
  int n = 0;
  size_t off = 0;
  for (;;) {
    if (n == max) return -1;
    start[n++] = off;
    const char *seg = s + off;
    if (cplen(seg) <= width) return n;
    size_t cut = cpoff(seg, width), sp = cut;
    while (sp > 0 && seg[sp] != ' ') sp--;
    if (sp > cpoff(seg, width / 2)) cut = sp + 1;
    off += cut;
  }
}

void tui_draw_scrollback(const tui_prompt *p, WINDOW *w, const tui_view *v) {
  int h = getmaxy(w), wd = getmaxx(w);
  int framed = h >= 3;
  if (framed) tui_frame(w, p->scroll ? "Lua (scrolled: PgDn)" : "Lua  (: opens, Esc leaves)", v);
  int rows = framed ? h - 2 : h, y0 = framed ? 1 : 0, x0 = framed ? 1 : 0;
  int width = framed ? wd - 2 : wd;
  if (width < 1) return;
  /* Fill from the bottom up; long entries wrap onto several rows. */
  int y = y0 + rows - 1;
  for (int k = p->n - 1 - p->scroll; k >= 0 && y >= y0; k--) {
    size_t start[WRAP_MAX];
    const char *line = p->lines[k];
    int nrows = framed ? wrap_rows(line, width, start, WRAP_MAX) : 1, at_spaces = nrows > 0;
    if (!framed) start[0] = 0;
    if (nrows < 0) { /* a very long entry: cut at the width, its end at the bottom */
      int len = cplen(line);
      nrows = (len + width - 1) / width;
    }
    for (int r = nrows - 1; r >= 0 && y >= y0; r--, y--) {
      const char *seg = line + (at_spaces || !framed ? start[r] : cpoff(line, r * width));
      char buf[1024];
      size_t nb = at_spaces && r + 1 < nrows ? start[r + 1] - start[r] : cpoff(seg, width);
      if (nb >= sizeof buf) nb = sizeof buf - 1;
      memcpy(buf, seg, nb);
      buf[nb] = 0;
      wattrset(w, tui_attr(p->styles[k]));
      mvwaddstr(w, y, x0, buf);
      wattrset(w, A_NORMAL);
    }
  }
}

void tui_draw_prompt(const tui_prompt *p, WINDOW *w, const tui_view *v) {
  int wd = getmaxx(w);
  if (!p->open) return;
  const char *pr = p->chunk ? ">> " : "> ";
  const char *line = rl_line_buffer ? rl_line_buffer : "";
  /* cursor column: code points before rl_point */
  int col = 0, pw = (int)strlen(pr);
  for (int i = 0; i < rl_point && line[i]; i++)
    if (((unsigned char)line[i] & 0xC0) != 0x80) col++;
  int room = wd - pw - 1, skip = col > room ? col - room : 0;
  wattrset(w, tui_attr(PLOT_S_FOCUS | PLOT_F_BOLD));
  mvwaddstr(w, 0, 0, pr);
  wattrset(w, A_NORMAL);
  const char *s = line;
  int k = 0;
  while (*s && k < skip) {
    uint32_t cp;
    s += plot_utf8_decode(s, &cp);
    k++;
  }
  /* a recalled multi-line chunk shows its line breaks as a visible mark */
  int x = pw;
  while (*s && x < wd) {
    uint32_t cp;
    int nb = plot_utf8_decode(s, &cp);
    if (cp == '\n') {
      wattrset(w, tui_attr(PLOT_S_DIM));
      if (v->ascii)
        mvwaddch(w, 0, x, '|');
      else
        mvwaddstr(w, 0, x, "\u21b5");
      wattrset(w, A_NORMAL);
    } else {
      mvwaddnstr(w, 0, x, s, nb);
    }
    s += nb;
    x++;
  }
  wmove(w, 0, pw + col - skip);
}
