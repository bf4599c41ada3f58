/* lesson_priv.h: what the three files of the lesson engine share, and nothing outside
 * src/lesson includes. claims.c reads the claims registry; sandbox.c builds the Lua state a
 * lesson runs in and runs every call into it (lesson_sb_run); player.c reads lesson{},
 * keeps the step snapshots and answers the accessors of lesson.h. */
#ifndef LESSON_PRIV_H
#define LESSON_PRIV_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lua.h>

#include "explore/explore.h"
#include "lesson/lesson.h"
#include "lua/nsl_budget.h"

/* The count hook runs every HOOK_EVERY VM instructions (often enough that the position it
 * keeps for memory errors is the line that failed, in all but the shortest bombs). */
#define HOOK_EVERY 100

typedef struct {
  char *text, *focus, *view, *try_text;
  int has_claims, has_figure, has_check, has_show, has_set, has_variant;
  /* try.hints, try.answer (a value function, or a claim's id), predict */
  char **hints;
  int nhints;
  int has_answer;
  char *answer_claim; /* the claim id, or NULL: the value function */
  double answer_tol;  /* NAN: the default */
  char *question;     /* predict.question, or NULL: no prediction */
  char **choices;
  int nchoices;
  double predict_tol;
  ns_state state, show; /* snapshots; show only with has_show */
  const char **set_fields, **show_fields;
} step;

typedef struct {
  size_t used, limit; /* bytes of Lua heap, and the cap on heap and tensors together */
  /* The tensors the lesson's calls make, wherever they end up (its values, its explorers and
   * their undo steps, the step snapshots, results): core/tensor.h's account, made when the
   * sandbox opens and let go when its Lua state closes. */
  struct ns_mem_account *acct;
  long long budget; /* work units per call: VM instructions and elements of tensor work */
  nsl_budget b;     /* the current call's (nsl_budget.h): work, deadline, Ctrl-C */
  int mem_hit;      /* the allocator refused memory during this call */
  size_t out_bytes; /* printed during this call */
  int out_cut;      /* the output cap was reached (the note is out) */
  char where[LUA_IDSIZE + 32]; /* last position the hook saw */
} sandbox;

struct lesson {
  lua_State *L;
  sandbox sb;
  lesson_options opt;
  char *path, *title, *source, *section;
  const char *name; /* base name of path: the chunk name */
  int nsteps;
  step *steps;
  ns_state start; /* the state before step 1 (the default explorer state) */
  ns_state cur;   /* the sandbox explorer's state (set/get/result) */
  int cur_step;   /* step whose claims run now (for on_claim) */
  int nfailed;    /* failed claims of the current call */
};

/* Registry key of the table lesson{} was given. */
#define DEF_KEY "normscope.lesson.def"

/* A malloc'd copy of s, or NULL when out of memory. */
static inline char *lesson_xstrdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* ---- sandbox.c ---- */
/* The sandbox's allocator (ud: the lesson's sandbox) and its instruction count hook. */
void *lesson_sb_alloc(void *ud, void *ptr, size_t osize, size_t nsize);
void lesson_sb_hook(lua_State *L, lua_Debug *ar);
/* The lesson file open for reading (explore/file.h's one opener: a FIFO, a device or a
 * folder named as the lesson is refused at once), or a Lua error "cannot open PATH: why". */
FILE *lesson_sb_fopen(lua_State *L, const char *path);
/* Protected body of the sandbox set-up (argument 1: the lesson). */
int lesson_sb_open(lua_State *L);
/* Runs fn(ud) in protected mode with a fresh budget; see sandbox.c. */
int lesson_sb_run(lesson *ls, lua_CFunction fn, void *ud, int nres, const char *prefix, char *err);

/* ---- player.c: the globals lesson{} and claim() that the sandbox installs ---- */
int lesson_l_lesson(lua_State *L);
int lesson_l_claim(lua_State *L);

#endif
