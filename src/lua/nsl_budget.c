/* nsl_budget.c: budgets of sandboxed runs (nsl_budget.h): work, a deadline and Ctrl-C. */
#define _POSIX_C_SOURCE 200809L
#include "lua/nsl_budget.h"

#include <signal.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>

/* The registry slot of the current run's budget (a light userdata, or false). */
static const char budget_key = 'b';

/* ---- Ctrl-C ----
 * One flag for the process: a SIGINT during a run ends every run in progress (the inner
 * first, then the ones around it when they next charge). The outermost enter installs the
 * handler and its leave puts the old one back. */
static volatile sig_atomic_t interrupted;
static int depth;
static int took_over;
static struct sigaction saved;

static void on_sigint(int sig) {
  if (interrupted) { /* a second Ctrl-C before the run noticed: the handler there was */
    sigaction(SIGINT, &saved, NULL);
    raise(sig);
    return;
  }
  interrupted = 1;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int set_raw(lua_State *L) {
  lua_pushvalue(L, 1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &budget_key);
  return 0;
}

/* Sets the registry slot in protected mode: the first set may allocate (a memory error
 * then leaves the state without a budget in the registry; the owner's hook still counts). */
static void set_budget(lua_State *L, nsl_budget *b) {
  if (!lua_checkstack(L, 3)) return;
  lua_pushcfunction(L, set_raw);
  if (b)
    lua_pushlightuserdata(L, b);
  else
    lua_pushboolean(L, 0); /* not nil: the slot stays, and later sets allocate nothing */
  if (lua_pcall(L, 1, 0, 0) != LUA_OK) lua_pop(L, 1);
}

nsl_budget *nsl_budget_of(lua_State *L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &budget_key);
  nsl_budget *b = lua_touserdata(L, -1);
  lua_pop(L, 1);
  return b;
}

void nsl_budget_enter(lua_State *L, nsl_budget *b) {
  b->used = 0;
  b->spent = NSL_SPENT_NONE;
  b->deadline = b->seconds > 0 ? now() + b->seconds : 0;
  b->prev = nsl_budget_of(L);
  set_budget(L, b);
  if (depth++ == 0) {
    interrupted = 0;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    took_over = 0;
    if (sigaction(SIGINT, NULL, &old) == 0 && old.sa_handler != SIG_IGN) {
      saved = old;
      took_over = sigaction(SIGINT, &sa, NULL) == 0;
    }
  }
}

void nsl_budget_leave(lua_State *L, nsl_budget *b) {
  set_budget(L, b->prev);
  b->prev = NULL;
  if (depth > 0 && --depth == 0) {
    if (took_over) sigaction(SIGINT, &saved, NULL);
    took_over = 0;
    interrupted = 0;
  }
}

int nsl_budget_add(nsl_budget *b, double units) {
  if (b->spent) return 1;
  if (units > 0) {
    if (b->limit > 0 && (double)b->used + units > (double)b->limit) {
      b->spent = NSL_SPENT_WORK;
      return 1;
    }
    b->used += units < 1e18 ? (long long)units : (long long)1e18; /* no limit: just count */
    if (b->used < 0) b->used = (long long)1e18;
  }
  if (interrupted) {
    b->spent = NSL_SPENT_INTERRUPT;
    return 1;
  }
  if (b->deadline > 0 && now() > b->deadline) {
    b->spent = NSL_SPENT_TIME;
    return 1;
  }
  return 0;
}

int nsl_budget_raise(lua_State *L, nsl_budget *b) {
  if (b->message)
    b->message(L, b);
  else
    lua_pushstring(L, b->spent == NSL_SPENT_INTERRUPT ? "interrupted (Ctrl-C)"
                      : b->spent == NSL_SPENT_TIME    ? "time limit exceeded"
                                                      : "work budget exceeded");
  return lua_error(L);
}

void nsl_charge(lua_State *L, double units) {
  nsl_budget *b = nsl_budget_of(L);
  if (b && nsl_budget_add(b, units)) nsl_budget_raise(L, b);
}
