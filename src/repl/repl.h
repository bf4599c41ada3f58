/* repl.h: evaluating Lua typed by a person, and the plain `normscope repl`.
 *
 * Two layers. nslr_eval and nslr_docall know nothing of terminals: they take text and
 * hand back the text to show, so the explorer's in-screen prompt and the plain REPL
 * behave the same. The nslr_history_* and nslr_readline_* functions wrap GNU Readline
 * (history file, completion) and are shared by both front ends as well. nslr_repl is
 * the plain REPL on top of them.
 *
 * Typical use from a prompt that collects lines itself:
 *
 *   static void show(void *ud, const char *text, size_t len, int is_error) { ... }
 *   buffer = line;                              // or buffer .. "\n" .. line
 *   switch (nslr_eval(L, buffer, "=stdin", show, ud)) {
 *   case NSLR_INCOMPLETE: prompt ">> " and append the next line; break;
 *   default: nslr_history_add(buffer); clear the buffer; prompt "> ";
 *   }
 */
#ifndef NSLR_REPL_H
#define NSLR_REPL_H

#include <lua.h>
#include <stddef.h>

enum {
  NSLR_OK = 0,         /* ran; results (if any) were written */
  NSLR_INCOMPLETE = 1, /* the chunk ends too early: ask for more lines, nothing written */
  NSLR_ERROR = 2       /* syntax or runtime error; the message was written */
};

/* Receives the text to show: one call per result line (values separated by tabs,
 * ending in "\n") or per error (message and traceback, ending in "\n"). */
typedef void (*nslr_writer)(void *ud, const char *text, size_t len, int is_error);

/* Evaluates one chunk as lua.c 5.4 does: first as "return " .. chunk, so an expression
 * shows its values without a leading '='; otherwise as statements. A syntax error that
 * stops at the end of the text ("<eof>") means the chunk is incomplete. Runs in
 * protected mode with a traceback; the values are shown with tostring (so tensors use
 * their __tostring). A SIGINT during the run stops the Lua code with "interrupted!"
 * (the previous SIGINT handler is restored afterwards). chunkname is as for lua_load
 * ("=stdin" gives messages "stdin:1: ..."); NULL means "=stdin". out may be NULL.
 * The Lua stack is left as it was. Returns NSLR_OK, NSLR_INCOMPLETE or NSLR_ERROR. */
int nslr_eval(lua_State *L, const char *chunk, const char *chunkname, nslr_writer out, void *ud);
/* Pushes the value at idx as text for reading: tables nested with their keys sorted (the
 * array part first), one line when it fits in 78 columns, strings quoted inside tables,
 * numbers in full (the shortest form that reads back as the same double), cycles cut. Uses
 * the global string.format and table.concat; may raise an error (call it protected). */
void nslr_show(lua_State *L, int idx);

/* The message handler of lua.c: turns the error object into a string (using
 * __tostring, or "(error object is a X value)") with a traceback appended. */
int nslr_msghandler(lua_State *L);

/* Calls the function below narg arguments on the stack as lua_pcall(L, narg, nres)
 * with nslr_msghandler, interruptible by SIGINT as nslr_eval. On error the message
 * (with traceback) is left on the stack. */
int nslr_docall(lua_State *L, int narg, int nres);

/* ---- GNU Readline: history and completion, shared by the REPL and the screen ---- */

/* Maximum number of entries kept in the history file. */
#define NSLR_HISTORY_MAX 1000

/* Finds the history file, $XDG_STATE_HOME/normscope/history (default
 * ~/.local/state/normscope/history), creates its folder and loads it into readline's
 * history. When the file cannot be read or written, one warning goes to stderr and
 * history is kept in memory only. Safe to call more than once (later calls do
 * nothing). Returns 0 when the file is usable, -1 otherwise. */
int nslr_history_init(void);

/* nslr_history_init for a caller that owns the terminal (curses): with quiet set the
 * warning is not printed but kept for nslr_history_error, also later ones from
 * nslr_history_add. Same return value. */
int nslr_history_open(int quiet);

/* The last history warning (one line, no newline), or NULL if all went well. */
const char *nslr_history_error(void);

/* Adds an entry (a line or a whole multi-line chunk) to the history and rewrites the
 * file whole and atomically (temporary file, fsync, rename; mode 0600), so a crash
 * leaves the old file or the new one. When another session replaced the file since,
 * its entries are read back first. Empty entries and repeats of the previous entry
 * are skipped. */
void nslr_history_add(const char *entry);

/* Call once before exiting. Nothing is left to write today (every nslr_history_add
 * rewrote the file whole); kept so callers need not know that. */
void nslr_history_save(void);

/* Makes readline complete Lua names in state L (see complete.h): sets
 * rl_attempted_completion_function, the word break characters, and no space after a
 * completed name. Inside a string literal, readline completes file names instead. */
void nslr_readline_setup(lua_State *L);

/* ---- the plain REPL ---- */

/* Runs the REPL on stdin/stdout with readline until end of input. Prompts "> " and
 * ">> " (continuation); Ctrl-C abandons the current line or chunk; Ctrl-D on an empty
 * line exits (at the ">> " prompt it abandons the chunk and shows why it was
 * unfinished). Returns the exit status (0; 128+N after SIGTERM/SIGHUP). */
int nslr_repl(lua_State *L);

#endif
