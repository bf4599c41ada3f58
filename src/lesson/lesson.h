/* lesson.h: the lesson engine. A lesson is a Lua file that calls
 *
 *   lesson{title = "...", source = "000_b251982bd6a65d6e.txt", section = "15.1 ...",
 *          steps = {
 *            {text = "...", set = {kind = "rms", eps = 0}, focus = "spectrum",
 *             figure = function(s) return ns.plot.lines(...) end,
 *             claims = function(s) claim("c15-rank-rms", result().jacobian.rank) end,
 *             try = {text = "...", check = function(s) return s.eps > 0 or "raise eps" end,
 *                    show = {eps = 1e-3}}},
 *            {text = "...", predict = {question = "...", choices = {"...", "..."}, answer = 2},
 *             set = {...}, focus = "stacks", view = "figure",
 *             variant = function(seed, s) return {batch = ...} end,
 *             try = {text = "...", answer = {value = function(s) return ... end, tol = 1e-3},
 *                    hints = {"...", "... the answer"}}},
 * The attributes, their types and what they mean are schema.h's one table.
 *            ...}}
 *
 * Each file runs in its own sandbox: a fresh lua_State whose allocator caps the Lua heap (the
 * tensors the lesson holds count too, as ns.* returns them) and whose budget (lua/
 * nsl_budget.h) caps every call into the lesson (loading the file, a step's claims, a figure,
 * a check): NS_LESSON_STEPS work units, counted by the count hook as VM instructions and by
 * the C the hook cannot see as its work (ns.* the elements it touches, the string matcher its
 * steps, the table functions their elements), and NS_LESSON_TIME seconds of wall clock; Ctrl-C
 * ends the call too. No io, os, require, package, debug, coroutine, dofile/loadfile,
 * string.dump, ns.load/ns.save; load() takes text only; collectgarbage only "collect", "count"
 * and "step"; setmetatable refuses __gc and the module's metatables are out of reach (Lua runs
 * finalizers with hooks off); print() writes at most LESSON_OUTPUT_MAX bytes a call; pcall
 * cannot catch the end of the budget or a refused allocation. Any error, budget or memory
 * overrun ends that call with "FILE:LINE: message" in err and leaves the caller's state
 * untouched.
 *
 * Step states: step 1's state is the default explorer state with step 1's `set` applied,
 * step k's is step k-1's with step k's `set` applied (then `focus`). The engine computes all
 * of them when it loads the file and keeps them as snapshots (ns_state copies), so stepping
 * back restores a state bit for bit instead of replaying. `try.show` is applied on top of its
 * step's state.
 *
 * Inside the sandbox the explorer is the headless one of explore_lua.h (set, get, result,
 * reset over a state the engine owns): before a step's claims, figure or check run, that
 * state is the step's (or the learner's) state, so claims may read result(). [ADAPTER: this
 * uses nsx_open/nsx_settable/nsx_pushstate; when ns.explorer() lands, lesson.c's "explorer
 * adapter" section is the only place to change.]
 *
 * Claims: claim(id, value) looks id up in the registry (data/claims.tsv), says verified when
 * |value - expected| <= tol, reports it through lesson_options.on_claim and returns the
 * verdict; an unknown id or a non-number value is an error.
 *
 * Ownership: lesson_registry_load and lesson_load return objects the caller frees with
 * lesson_registry_free / lesson_free; a lesson borrows its registry (which must outlive it).
 * Strings returned by accessors belong to the lesson.
 *
 *   char err[NS_ERRLEN];
 *   lesson_registry *reg = lesson_registry_load("data/claims.tsv", err);
 *   lesson_options o;
 *   lesson_options_init(&o);            // NS_LESSON_MEM / NS_LESSON_STEPS or defaults
 *   o.registry = reg;
 *   lesson *ls = lesson_load("lessons/000-15.1-two-maps.lua", &o, err);
 *   for (int k = 1; k <= lesson_nsteps(ls); k++) {
 *     lesson_apply(ls, k, &screen_state, &history, err);    // one undoable change
 *     lesson_claims(ls, k, err);                            // verdicts via o.on_claim
 *   }
 *   lesson_free(ls);
 *   lesson_registry_free(reg);
 */
#ifndef LESSON_H
#define LESSON_H

#include <stddef.h>

#include "explore/explore.h"

/* The lessons' error buffers are the core's (core/err.h NS_ERRLEN): one length. The old name
 * stays for the files that still spell it. */
#define LESSON_ERRLEN NS_ERRLEN
/* Defaults of the sandbox limits (NS_LESSON_MEM bytes, NS_LESSON_STEPS instructions). */
#define LESSON_DEFAULT_MEM ((size_t)128 << 20)
#define LESSON_DEFAULT_STEPS 50000000LL
/* Wall-clock seconds one call into a lesson may take (NS_LESSON_TIME), whatever it runs:
 * Lua, the C of ns.*, a pattern, the collector. */
#define LESSON_DEFAULT_SECONDS 10.0
/* What print() may write in one call into a lesson; the rest is cut, with a note. */
#define LESSON_OUTPUT_MAX ((size_t)1 << 20)
/* Width lesson text is written for; --check flags longer lines. */
#define LESSON_COLUMNS 80

/* ---- the claims registry (data/claims.tsv) ---- */

typedef struct {
  char *id, *source, *setup, *kind;
  double expected, tol;
} lesson_claim_row;

typedef struct {
  lesson_claim_row *rows;
  size_t n;
} lesson_registry;

/* Reads a claims file: '#' lines are comments, others have six tab-separated columns (id,
 * source, setup, expected, tol, kind). NULL with err naming FILE:LINE on a malformed row, a
 * duplicate id or a read error. */
lesson_registry *lesson_registry_load(const char *path, char *err);
void lesson_registry_free(lesson_registry *r);
/* The row of id, or NULL. */
const lesson_claim_row *lesson_registry_find(const lesson_registry *r, const char *id);
/* 1 if value verifies the row (|value - expected| <= tol, never for NaN). */
int lesson_claim_ok(const lesson_claim_row *row, double value);

/* ---- a lesson ---- */

/* One claim(id, value) call, as reported to on_claim. */
typedef struct {
  const char *id;
  const lesson_claim_row *row; /* NULL in check mode for an unknown id */
  double value;
  int verified;
  int step; /* 1-based */
} lesson_claim;

typedef struct {
  size_t mem_limit;                /* bytes of Lua heap; 0 = LESSON_DEFAULT_MEM */
  long long step_limit;            /* VM instructions per call into the lesson; 0 = default */
  double time_limit;               /* seconds per call into the lesson; 0 = default */
  const lesson_registry *registry; /* required for claim(); borrowed */
  /* Lines the lesson prints (print(...)); NULL: standard output. */
  void (*out)(void *ud, const char *line);
  /* Every claim(id, value) call; NULL: a verdict line goes where print() output goes. */
  void (*on_claim)(void *ud, const lesson_claim *c);
  void *ud;
  /* Check mode (lesson --check): claim() reports an unknown id through on_claim (row NULL)
   * instead of raising, so a lint sees every id. */
  int check_mode;
  /* The panel names a step's focus may take (the screen's, NULL-terminated); NULL: any. */
  const char *const *panels;
} lesson_options;

/* Defaults, with mem_limit, step_limit and time_limit from NS_LESSON_MEM (bytes, or with a
 * K, M or G suffix), NS_LESSON_STEPS and NS_LESSON_TIME (seconds) when they are set and
 * valid. */
void lesson_options_init(lesson_options *o);
/* 0 when NS_LESSON_MEM (1M to 1024G), NS_LESSON_STEPS (1000 to 10^15) and NS_LESSON_TIME
 * (0.1 to 86400 s) are unset, empty or in their range; else -1 with err naming the variable
 * and its range. The program checks them first thing and refuses to start otherwise. */
int lesson_options_check_env(char *err);

typedef struct lesson lesson;

/* Runs FILE in a fresh sandbox and computes every step's state. NULL with err
 * ("FILE:LINE: ..." or "FILE: step 3: set: eps: ...") on any failure. o is copied. */
lesson *lesson_load(const char *path, const lesson_options *o, char *err);
void lesson_free(lesson *ls);
/* For lesson --check: like lesson_load, but a step whose set, focus or try.show is wrong is
 * reported through problem(ud, step, message) (each unknown field by name) and the load goes
 * on, that step keeping the previous step's state. Errors of the file itself still fail. */
lesson *lesson_load_checked(const char *path, const lesson_options *o,
                            void (*problem)(void *ud, int step, const char *msg), void *ud,
                            char *err);

const char *lesson_path(const lesson *ls);
const char *lesson_title(const lesson *ls);
const char *lesson_source(const lesson *ls);
const char *lesson_section(const lesson *ls);
int lesson_nsteps(const lesson *ls);

/* Step k (1-based) fields; NULL when absent (text is "" when absent). */
const char *lesson_step_text(const lesson *ls, int k);
const char *lesson_step_focus(const lesson *ls, int k);
const char *lesson_step_try_text(const lesson *ls, int k);
int lesson_step_has_claims(const lesson *ls, int k);
int lesson_step_has_figure(const lesson *ls, int k);
int lesson_step_has_check(const lesson *ls, int k);
/* step k's view ("pane", "figure") or NULL; whether it has a set table, a variant */
const char *lesson_step_view(const lesson *ls, int k);
int lesson_step_has_set(const lesson *ls, int k);
int lesson_step_has_variant(const lesson *ls, int k);
/* A try the learner must pass: it has a check or takes an answer. */
int lesson_step_is_try(const lesson *ls, int k);
/* try.answer: whether the step takes a number; try.hints: their count and hint i (1-based;
 * NULL for a hint that is a function: lesson_hint computes it). */
int lesson_step_has_answer(const lesson *ls, int k);
int lesson_step_nhints(const lesson *ls, int k);
const char *lesson_step_hint(const lesson *ls, int k, int i);
/* predict: the question (NULL: none), its choices (0: the answer is a number) and choice i. */
const char *lesson_step_question(const lesson *ls, int k);
int lesson_step_nchoices(const lesson *ls, int k);
const char *lesson_step_choice(const lesson *ls, int k, int i);
/* The state before step k's set: step k-1's, or the default state for step 1 (what a
 * prediction is asked on). */
const ns_state *lesson_step_before(const lesson *ls, int k);
/* Step k's state (the snapshot), and the state its try's `show` gives (NULL without one). */
const ns_state *lesson_step_state(const lesson *ls, int k);
const ns_state *lesson_step_show_state(const lesson *ls, int k);
/* The keys step k's `set` (what = "set") or its try's `show` (what = "show") gives, in
 * the order of the explorer's field table; NULL-terminated, owned by the lesson. */
const char *const *lesson_step_fields(const lesson *ls, int k, const char *what);

/* Puts s into step k's state (show: its try's show state) as one change through the
 * explorer's entry point (ns_history_apply; h may be NULL). 0, or -1 with err. */
int lesson_apply(const lesson *ls, int k, ns_state *s, ns_history *h, char *err);
int lesson_apply_show(const lesson *ls, int k, ns_state *s, ns_history *h, char *err);
/* Puts s into the state before step k's set (lesson_step_before): a prediction's question. */
int lesson_apply_before(const lesson *ls, int k, ns_state *s, ns_history *h, char *err);

/* Runs step k's claims at its state; each claim goes to on_claim. Returns the number of
 * claims that failed (0 also when the step has none), or -1 with err. */
int lesson_claims(lesson *ls, int k, char *err);
/* Runs step k's figure at state s (NULL: the step's state). *text is a malloc'd string the
 * caller frees, or NULL when the step has no figure or ns.plot is not there. 0 or -1. */
int lesson_figure(lesson *ls, int k, const ns_state *s, char **text, char *err);
/* Runs step k's try.check at state s (NULL: the step's state): 1 done, 0 not done (the hint,
 * or "not yet", copied into hint), -1 error (err). A step without a check is never done. */
int lesson_check_try(lesson *ls, int k, const ns_state *s, char *hint, size_t hintlen, char *err);

/* ---- exercises: answers, predictions, variants ---- */

/* The default tolerance of a number the learner types: half a unit in the third
 * significant digit of value (13.2: 0.05; -0.27524: 0.0005; 0: 1e-9). */
double lesson_default_tol(double value);
/* 1 when got is within tol of value (tol NAN: the default), else 0. */
int lesson_judge(double got, double value, double tol);
/* The right answer of step k's try.answer at state s (NULL: the step's state): its value
 * function, or its claim's expected value; *tol is try.answer.tol or the default. 0 or -1. */
int lesson_answer(lesson *ls, int k, const ns_state *s, double *value, double *tol, char *err);
/* Hint i of step k as text, a function's computed at state s (NULL: the step's). 0 or -1. */
int lesson_hint(lesson *ls, int k, int i, const ns_state *s, char *buf, size_t len, char *err);
/* The truth of step k's prediction at the step's state: with choices the index of the true
 * one (*tol 0), else the number and its tolerance. 0 or -1. */
int lesson_predict_truth(lesson *ls, int k, double *value, double *tol, char *err);
/* Puts s into variant seed (2, 3, ...) of step k: the step's state with the table its
 * variant(seed, s) returns applied, as one change on h. 0 or -1. */
int lesson_apply_variant(lesson *ls, int k, int seed, ns_state *s, ns_history *h, char *err);

/* Lessons found in dir (files NNN-*.lua, sorted by name: reading order). *paths is a malloc'd
 * array of malloc'd strings; lesson_free_list frees it. Count, or -1 with err. */
int lesson_list_dir(const char *dir, char ***paths, char *err);
void lesson_free_list(char **paths, int n);

#endif
