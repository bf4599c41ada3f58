/* complete.h: completion of Lua names for the REPL and the explorer's prompt.
 *
 * Plain C over the Lua API, no readline: the caller supplies the line and the cursor,
 * gets back the candidates and draws them however it likes.
 *
 * What completes (the word is the run of identifier characters, '.' and ':' before the
 * cursor):
 *   pri          globals and Lua keywords starting with "pri" (print, ...)
 *   ns.nor       fields of ns: "ns.normalize"
 *   a.b.c        fields of a.b (tables, and values whose metatable's __index lists fields)
 *   t:sh         methods of t found through its metatable: "t:shape"
 *   set{ep       a key of a set{...} table (also e:set{, set({): the explorer state's
 *                fields, from ns.fields(): "eps", "eps_at"
 * Fields are looked up with metamethods, in protected mode: a failing __index only
 * means no candidates. Inside a string literal nothing completes (NULL), so a caller
 * may fall back to file names there.
 *
 * Ownership: nslc_complete returns a malloc'd, NULL-terminated array of malloc'd
 * strings; free it with nslc_free. The Lua stack is left as it was.
 *
 * Typical call, for a prompt with the text `line` and the cursor at byte `end`:
 *
 *   int start = nslc_wordstart(line, end);
 *   char **c = nslc_complete(L, line, start, end);
 *   if (c) { ... replace line[start, end) by c[0] if it is the only one ...; nslc_free(c); }
 */
#ifndef NSLC_COMPLETE_H
#define NSLC_COMPLETE_H

#include <lua.h>

/* The characters that end a completion word (for rl_completer_word_break_characters):
 * everything except identifier characters, '.' and ':'. */
#define NSLC_WORD_BREAKS " \t\n\"'`@$><=;|&{}()[],+-*/%^~#"

/* The start of the completion word that ends at byte `end` of line. */
int nslc_wordstart(const char *line, int end);

/* Whether byte `pos` of line lies inside a string literal or a comment (a cheap scan
 * of quotes, escapes, long brackets and `--`; good enough for one line of input). */
int nslc_in_string(const char *line, int pos);

/* The candidates that complete line[start, end), each the whole replacement of that
 * range (e.g. "ns.normalize" for "ns.nor"), sorted and without duplicates. NULL when
 * there are none, when the word cannot be completed (inside a string, an unknown table)
 * or when memory runs out. */
char **nslc_complete(lua_State *L, const char *line, int start, int end);

/* Frees the result of nslc_complete (NULL is fine). */
void nslc_free(char **list);

/* The longest common prefix of the candidates, malloc'd ("" when they share nothing);
 * NULL if list is NULL. */
char *nslc_common_prefix(char *const *list);

#endif
