/* nsl_budget.h: what a sandboxed script (a lesson, a state file) may spend, counted in C too.
 *
 * A budget belongs to one run of sandboxed code on a lua_State: work units, a wall-clock
 * deadline and Ctrl-C. The owner's count hook adds the VM instructions it counts; the C code
 * the hook never sees charges its own work before doing it: every ns.* function the elements
 * it touches (nsl_charge, in the binding: the core stays pure), the sandbox's string.find/
 * match/gmatch/gsub the steps of their matcher, table.move/insert/remove/concat/sort the
 * elements they visit (nsl_bounded.c). Each charge also looks at the clock and at Ctrl-C, so
 * whatever runs out first ends the run within one charge of it, with the owner's message.
 * Once spent the budget stays spent until the run ends: the sandbox's pcall re-raises, so
 * the script cannot catch its own end and carry on.
 *
 * Without a budget on the state (the REPL, `normscope run`, stock lua5.4) nsl_charge does
 * nothing but one registry lookup.
 *
 *   nsl_budget b = {.limit = 1000000, .seconds = 10, .message = my_message};
 *   nsl_budget_enter(L, &b);                 // fresh count, deadline now + 10 s, Ctrl-C
 *   int rc = lua_pcall(L, 0, 0, 0);          // ends with my_message's text when spent
 *   nsl_budget_leave(L, &b);                 // the previous budget and SIGINT handler back
 */
#ifndef NSL_BUDGET_H
#define NSL_BUDGET_H

#include <lua.h>

/* Why a run ended. */
typedef enum {
  NSL_SPENT_NONE = 0,
  NSL_SPENT_WORK,     /* the work units (instructions and elements) ran out */
  NSL_SPENT_TIME,     /* the wall-clock deadline passed */
  NSL_SPENT_INTERRUPT /* Ctrl-C (SIGINT) */
} nsl_spent;

typedef struct nsl_budget {
  long long used, limit; /* work units spent and allowed; limit <= 0: no limit */
  double seconds;        /* wall-clock seconds a run may take; <= 0: no limit */
  nsl_spent spent;       /* set when the run is over; stays until nsl_budget_enter */
  /* Pushes the message for b->spent (the owner's words: what ran out, what raises it). */
  void (*message)(lua_State *L, struct nsl_budget *b);
  void *ud;
  /* kept by nsl_budget_enter for nsl_budget_leave */
  double deadline;
  struct nsl_budget *prev;
} nsl_budget;

/* Starts a run: zero work used, not spent, the deadline `seconds` from now; b becomes L's
 * budget and Ctrl-C sets its interrupt (the outermost enter takes SIGINT over: a second
 * Ctrl-C before the run notices goes to the handler there was). Runs nest: leave restores. */
void nsl_budget_enter(lua_State *L, nsl_budget *b);
void nsl_budget_leave(lua_State *L, nsl_budget *b);
/* The budget of L's current run, or NULL. */
nsl_budget *nsl_budget_of(lua_State *L);

/* Adds `units` of work to b, then looks at the clock and at Ctrl-C. 1 when the run is over
 * (b->spent says why), else 0. Raises nothing (hooks word their own errors). */
int nsl_budget_add(nsl_budget *b, double units);
/* Raises b's message (b->spent set). */
int nsl_budget_raise(lua_State *L, nsl_budget *b);
/* nsl_budget_add on L's budget, raising its message when the run is over; nothing without
 * a budget. Call before C work of about `units` element operations (a VM instruction is
 * one unit; touching one element of a tensor is one). */
void nsl_charge(lua_State *L, double units);

/* nsl_bounded.c: the standard functions whose C loops the count hook cannot see, as
 * versions that charge L's budget (the same results and messages otherwise). The string
 * table at idx gets find, match, gmatch, gsub (a matcher that counts its steps) and rep,
 * and its other functions charge the bytes they are given (nsl_bound_linear); the table
 * library at idx gets move, insert, remove, concat, sort and unpack. */
void nsl_bound_string(lua_State *L, int idx);
/* Every C function in the table at idx charges a unit per 16 bytes of its arguments (and
 * so looks at Ctrl-C and the clock) before it runs. */
void nsl_bound_linear(lua_State *L, int idx);
void nsl_bound_table(lua_State *L, int idx);

#endif
