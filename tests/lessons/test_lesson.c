/* test_lesson.c: the lesson engine's C API (lesson.h), the one the screen will drive.
 * States are compared with references built here through ns_state_apply from hand-written
 * patches (not from the engine); claims with verdicts worked out from the registry rows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore/explore.h"
#include "lesson/lesson.h"
#include "tap.h"

#ifndef LESSON_TEST_SRCDIR
#define LESSON_TEST_SRCDIR "."
#endif

typedef struct {
  char id[64];
  double value;
  int verified, step, known;
} seen;
static seen claims[16];
static int nclaims;

static char outbuf[1024];
static void out(void *ud, const char *line) {
  (void)ud;
  size_t n = strlen(outbuf);
  snprintf(outbuf + n, sizeof outbuf - n, "%s\n", line);
}

static void on_claim(void *ud, const lesson_claim *c) {
  (void)ud;
  if (nclaims < 16) {
    seen *s = &claims[nclaims++];
    snprintf(s->id, sizeof s->id, "%s", c->id);
    s->value = c->value;
    s->verified = c->verified;
    s->step = c->step;
    s->known = c->row != NULL;
  }
}

/* ref := the default state with p applied */
static void ref_state(ns_state *ref, const ns_state_patch *p) {
  char err[NS_ERRLEN];
  if (ns_state_apply(ref, p, err) != 0) tap_diag("reference patch: %s", err);
}

/* Writes text to a file named path; 0 or -1. */
static int write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fputs(text, f);
  return fclose(f);
}

/* try.answer, try.hints, predict and variant through the fixture tests/lessons/player-views.lua:
 * values worked out here from the states the fixture sets. */
static void exercises(const lesson_options *o) {
  char err[NS_ERRLEN], buf[256];
  /* the default tolerance: half a unit in the third significant digit */
  tap_ok(lesson_default_tol(13.2) == 0.05 && fabs(lesson_default_tol(-0.27524) - 0.0005) < 1e-18 &&
             lesson_default_tol(0) == 1e-9,
         "default tolerance: 13.2 -> 0.05, -0.27524 -> 0.0005, 0 -> 1e-9");
  tap_ok(lesson_judge(-0.275, -0.27524, NAN) && !lesson_judge(-0.276, -0.27524, NAN) &&
             lesson_judge(13.25, 13.2, NAN) && !lesson_judge(13.26, 13.2, NAN) &&
             !lesson_judge(NAN, 1, 1) && lesson_judge(2.23607, sqrt(5), 1e-5),
         "judge: -0.275 for -0.27524 and 13.25 for 13.2 pass, a digit further off fails");
  lesson *ls = lesson_load(LESSON_TEST_SRCDIR "/tests/lessons/player-views.lua", o, err);
  tap_ok(ls != NULL, "the player fixture loads (%s)", ls ? "ok" : err);
  if (!ls) return;
  tap_ok(lesson_step_view(ls, 5) && strcmp(lesson_step_view(ls, 5), "figure") == 0 &&
             !lesson_step_view(ls, 4) && strcmp(lesson_step_focus(ls, 9), "stacks") == 0,
         "view and a focus that names a view are kept");
  /* step 7: a prediction with choices, asked on step 6's state, true at step 7's (rms: 2) */
  tap_ok(lesson_step_question(ls, 7) && lesson_step_nchoices(ls, 7) == 2 &&
             strcmp(lesson_step_choice(ls, 7, 2), "yes") == 0 && !lesson_step_choice(ls, 7, 3),
         "predict: the question and its choices");
  tap_ok(ns_state_equal(lesson_step_before(ls, 7), lesson_step_state(ls, 6)) &&
             lesson_step_state(ls, 7)->kind == NS_KIND_RMS &&
             lesson_step_before(ls, 7)->kind != NS_KIND_RMS,
         "predict: asked on the state before the step's set");
  double v = 0, tol = 1;
  int rc = lesson_predict_truth(ls, 7, &v, &tol, err);
  tap_ok(rc == 0 && v == 2 && tol == 0, "predict: the truth is computed at the step's state (%g)",
         v);
  /* step 8: a number, the mean of x = (1, 2, 4, 8) (step 1's), tol 1e-3 */
  rc = lesson_answer(ls, 8, NULL, &v, &tol, err);
  tap_ok(rc == 0 && v == 3.75 && tol == 1e-3, "answer: the value at the step's state (%g, %g)", v,
         tol);
  tap_ok(lesson_step_nhints(ls, 8) == 2 &&
             strcmp(lesson_step_hint(ls, 8, 1), "add the four and divide by 4") == 0 &&
             !lesson_step_hint(ls, 8, 2),
         "hints: a string, and a function (no text until computed)");
  rc = lesson_hint(ls, 8, 2, NULL, buf, sizeof buf, err);
  tap_ok(rc == 0 && strcmp(buf, "it is 3.7500") == 0, "hints: the function's at the state (%s)",
         rc == 0 ? buf : err);
  /* a variant: x from ns.rng(2), applied as one change; the answer follows it */
  ns_state screen;
  ns_history h;
  ns_state_init(&screen, err);
  ns_history_init(&h, 10);
  rc = lesson_apply_variant(ls, 8, 2, &screen, &h, err);
  double mean = 0;
  for (size_t i = 0; rc == 0 && i < screen.x->n; i++) mean += ns_tensor_get(screen.x, i) / 4;
  double v2 = 0;
  int rc2 = rc == 0 ? lesson_answer(ls, 8, &screen, &v2, &tol, err) : -1;
  tap_ok(rc == 0 && rc2 == 0 && v2 == mean && v2 != 3.75 && h.nundo == 1,
         "variant 2: a new x, one undo step, the answer recomputed on it (%g)", v2);
  rc = lesson_hint(ls, 8, 2, &screen, buf, sizeof buf, err);
  char want[64];
  snprintf(want, sizeof want, "it is %.4f", mean);
  tap_ok(rc == 0 && strcmp(buf, want) == 0, "  and its computed hint names its numbers (%s)", buf);
  tap_ok(lesson_apply_variant(ls, 7, 2, &screen, &h, err) == -1, "a step without a variant: -1");
  ns_history_free(&h);
  ns_state_free(&screen);
  lesson_free(ls);
}

/* The reader's messages for the newer attributes, each with FILE:LINE. */
static void schema_errors(const lesson_options *o) {
  static const struct {
    const char *body, *want;
  } cases[] = {
      {"{text = 'x', try = {text = 't', answr = {}}}", "step 1: try: unknown field 'answr'"},
      {"{text = 'x', try = {text = 't', answer = {tol = 1}}}", "give value (a function) or claim"},
      {"{text = 'x', try = {text = 't', answer = {value = 3}}}",
       "try.answer.value must be a function"},
      {"{text = 'x', try = {text = 't', hints = {'a', 3}}}", "try.hints must be a list of strings"},
      {"{text = 'x', try = {check = function() end}}", "try.text must be a string"},
      {"{text = 'x', predict = {question = 'q', choices = {'a', 'b'}}}",
       "with choices, answer says which is true"},
      {"{text = 'x', predict = {question = 'q'}}", "without choices, value gives the true number"},
      {"{text = 'x', predict = {choices = {'a'}, answer = 1}}",
       "predict.question must be a string"},
      {"{text = 'x', view = 'panel'}", "step 1.view: unknown view 'panel'"},
      {"{text = 'x', variant = {}}", "step 1.variant must be a function"},
      {"{text = 'x', focus = 'nowhere'}", "unknown panel 'nowhere'"},
  };
  char err[NS_ERRLEN], text[512];
  lesson_options lo = *o;
  static const char *const panels[] = {"input", "output", NULL};
  lo.panels = panels;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(text, sizeof text,
             "lesson{title = 't', source = 's', section = 's',\n  steps = {%s}}\n", cases[i].body);
    write_file("test_lesson_schema.lua", text);
    lesson *ls = lesson_load("test_lesson_schema.lua", &lo, err);
    tap_ok(!ls && strstr(err, "test_lesson_schema.lua:") && strstr(err, cases[i].want),
           "reader: %s -> %s", cases[i].body, ls ? "loaded" : err);
    lesson_free(ls);
  }
  remove("test_lesson_schema.lua");
}

/* A check judges what the screen shows: at 003-02 step 7, gamma and beta as the output panel
 * prints the std and the mean (2.23607, 5) give y = x to every digit shown, and pass. The
 * lessons are rewritten elsewhere: until that lesson's check uses shown(), this is a TODO
 * (reported, not failing). shown() itself is checked through the fixture of a file here. */
static void shown_digits(const lesson_options *o) {
  char err[NS_ERRLEN], hint[256];
  write_file("test_lesson_shown.lua",
             "lesson{title = 't', source = 's', section = 's', steps = {\n"
             "  {text = 'x', set = {x = {2, 4, 6, 8}},\n"
             "   try = {text = 't', check = function(s)\n"
             "     return shown(result().y:flat(), s.x:flat()) or 'not the same digits'\n"
             "   end}}}}\n");
  lesson *ls = lesson_load("test_lesson_shown.lua", o, err);
  ns_state s;
  ns_state_init(&s, err);
  ns_state_patch p;
  ns_patch_init(&p);
  ns_patch_set(&p, NS_F_GAMMA);
  ns_patch_set(&p, NS_F_BETA);
  double g = 2.23607, b = 5;
  p.v.gamma = &g;
  p.v.ngamma = 1;
  p.v.beta = &b;
  p.v.nbeta = 1;
  int rc = -1, rc0 = -1;
  if (ls && lesson_apply(ls, 1, &s, NULL, err) == 0) {
    rc0 = lesson_check_try(ls, 1, &s, hint, sizeof hint, err);
    if (ns_state_apply(&s, &p, err) == 0) rc = lesson_check_try(ls, 1, &s, hint, sizeof hint, err);
  }
  tap_ok(rc0 == 0 && rc == 1,
         "shown(): y = x to the panels' 6 digits at gamma 2.23607, beta 5 passes (not before)");
  lesson_free(ls);
  remove("test_lesson_shown.lua");
  /* the lesson itself */
  ls = lesson_load(LESSON_TEST_SRCDIR "/lessons/003-02-batch-normalization.lua", o, err);
  int k = 0;
  for (int i = 1; ls && i <= lesson_nsteps(ls); i++)
    if (lesson_step_try_text(ls, i) && strstr(lesson_step_try_text(ls, i), "give back x")) k = i;
  rc = -1;
  ns_state_free(&s);
  ns_state_init(&s, err);
  if (k && lesson_apply(ls, k, &s, NULL, err) == 0 && ns_state_apply(&s, &p, err) == 0)
    rc = lesson_check_try(ls, k, &s, hint, sizeof hint, err);
  printf("%sok %d - 003-02 step %d: set{gamma=2.23607, beta=5} passes its check%s\n",
         rc == 1 ? "" : "not ", ++tap_n, k,
         rc == 1 ? "" : " # TODO the lesson's check compares with 1e-9; shown() judges digits");
  ns_state_free(&s);
  lesson_free(ls);
}

int main(void) {
  char err[NS_ERRLEN];
  lesson_registry *reg = lesson_registry_load(LESSON_TEST_SRCDIR "/data/claims.tsv", err);
  tap_ok(reg != NULL, "the registry loads (%s)", reg ? "ok" : err);
  if (!reg) return tap_done();
  tap_ok(reg->n == 163, "163 claims in data/claims.tsv (got %zu)", reg->n);
  const lesson_claim_row *row = lesson_registry_find(reg, "c15-eps-radial");
  tap_ok(row && row->expected == 2.5298069492778294e-06 && row->tol == 1e-15 &&
             strcmp(row->kind, "exact") == 0,
         "c15-eps-radial: expected, tol and kind as written in the file");
  tap_ok(!lesson_registry_find(reg, "no-such-claim"), "an unknown id is not found");
  /* verdicts: |v - e| <= tol; tol 0 means equal; NaN never */
  lesson_claim_row r0 = {NULL, NULL, NULL, NULL, 2.0, 0.0};
  lesson_claim_row r1 = {NULL, NULL, NULL, NULL, 1.0, 0.5};
  tap_ok(lesson_claim_ok(&r0, 2.0) && !lesson_claim_ok(&r0, nextafter(2.0, 3.0)),
         "tol 0: only the value itself verifies");
  tap_ok(lesson_claim_ok(&r1, 1.5) && lesson_claim_ok(&r1, 0.5) && !lesson_claim_ok(&r1, 1.51),
         "tol 0.5: the closed interval [0.5, 1.5]");
  tap_ok(!lesson_claim_ok(&r1, NAN), "NaN never verifies");

  /* a malformed registry names its line */
  FILE *bad = fopen("test_lesson_bad.tsv", "w");
  if (bad) {
    fputs("# comment\nid1\tsrc\tsetup\t1\t0\texact\nid2\tsrc\tsetup\tnot-a-number\t0\texact\n",
          bad);
    fclose(bad);
  }
  lesson_registry *br = lesson_registry_load("test_lesson_bad.tsv", err);
  tap_ok(!br && strstr(err, "test_lesson_bad.tsv:3:"), "a bad row is reported as FILE:LINE (%s)",
         err);
  remove("test_lesson_bad.tsv");

  lesson_options o;
  lesson_options_init(&o);
  o.registry = reg;
  o.on_claim = on_claim;
  o.step_limit = 2000000; /* the runaway check ends quickly */
  o.mem_limit = 4u << 20; /* and the memory bomb before the budget */
  lesson *ls = lesson_load(LESSON_TEST_SRCDIR "/tests/lessons/engine.lua", &o, err);
  tap_ok(ls != NULL, "the fixture loads (%s)", ls ? "ok" : err);
  if (!ls) return tap_done();
  tap_ok(lesson_nsteps(ls) == 5 && strcmp(lesson_title(ls), "engine fixture") == 0 &&
             strcmp(lesson_source(ls), "999") == 0,
         "title, source, step count");
  tap_ok(strcmp(lesson_step_text(ls, 2), "two") == 0 && lesson_step_text(ls, 6) == NULL &&
             lesson_step_text(ls, 0) == NULL,
         "step text; no step 0 or 6");
  tap_ok(lesson_step_focus(ls, 2) && strcmp(lesson_step_focus(ls, 2), "spectrum") == 0 &&
             !lesson_step_focus(ls, 1),
         "focus of step 2 only");
  const char *const *f = lesson_step_fields(ls, 2, "set");
  tap_ok(f && f[0] && strcmp(f[0], "x") == 0 && f[1] && strcmp(f[1], "shift") == 0 && !f[2],
         "step 2 sets x and shift (in field-table order)");

  /* the snapshots, against states built here */
  ns_state ref1, ref2, ref5;
  ns_state_init(&ref1, err);
  ns_state_patch p;
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_KIND) | NS_FIELDBIT(NS_F_EPS);
  p.v.kind = NS_KIND_RMS;
  p.v.eps = 0;
  ref_state(&ref1, &p);
  ns_state_copy(&ref2, &ref1, err);
  size_t shape[1] = {4};
  ns_tensor *x = ns_tensor_new(1, shape, NS_FP64, err);
  double xs[4] = {1, 2, 3, 5};
  memcpy(x->data, xs, sizeof xs);
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_X) | NS_FIELDBIT(NS_F_SHIFT);
  p.v.x = x;
  p.v.shift = 3;
  ref_state(&ref2, &p);
  ns_state_copy(&ref5, &ref2, err);
  ns_patch_init(&p);
  p.set = NS_FIELDBIT(NS_F_EPS);
  p.v.eps = 1e-3;
  ref_state(&ref5, &p);
  tap_ok(ns_state_equal(lesson_step_state(ls, 1), &ref1), "step 1: default + {kind rms, eps 0}");
  tap_ok(ns_state_equal(lesson_step_state(ls, 2), &ref2),
         "step 2: step 1 + x, shift (focus is a view hint, not state)");
  tap_ok(ns_state_equal(lesson_step_state(ls, 3), &ref2) &&
             ns_state_equal(lesson_step_state(ls, 4), &ref2),
         "steps 3 and 4 set nothing: step 2's state");
  tap_ok(ns_state_equal(lesson_step_state(ls, 5), &ref5), "step 5: eps 1e-3 on top");

  /* a screen's state: forward, a change of its own, back -> bit-identical snapshots */
  ns_state screen;
  ns_history h;
  ns_state_init(&screen, err);
  ns_history_init(&h, 64);
  int rc = lesson_apply(ls, 1, &screen, &h, err);
  rc |= lesson_apply(ls, 2, &screen, &h, err);
  rc |= ns_edit_set_eps(&screen, &h, 0.25, err);
  rc |= lesson_apply(ls, 5, &screen, &h, err);
  tap_ok(rc == 0 && ns_state_equal(&screen, &ref5), "apply 1, 2, change eps, apply 5: step 5");
  rc = lesson_apply(ls, 2, &screen, &h, err);
  tap_ok(rc == 0 && ns_state_equal(&screen, &ref2) &&
             memcmp(screen.x->data, ref2.x->data, 4 * sizeof(double)) == 0 &&
             screen.eps == ref2.eps,
         "back to step 2: its state bit for bit");
  tap_ok(ns_history_undo(&h, &screen) && ns_state_equal(&screen, &ref5),
         "each apply is one undo step");
  ns_history_undo(&h, &screen);
  tap_ok(screen.eps == 0.25, "and the learner's own change is undone after it");

  /* try: check at the learner's state, and the show state */
  char hint[128];
  ns_state mine;
  ns_state_copy(&mine, lesson_step_state(ls, 2), err);
  tap_ok(lesson_check_try(ls, 2, &mine, hint, sizeof hint, err) == 0 &&
             strcmp(hint, "eps is 0.0") == 0,
         "check at step 2's state: not done, with its hint (%s)", hint);
  tap_ok(lesson_step_show_state(ls, 2) &&
             lesson_check_try(ls, 2, lesson_step_show_state(ls, 2), hint, sizeof hint, err) == 1,
         "check at the show state: done");
  rc = lesson_apply_show(ls, 2, &screen, &h, err);
  tap_ok(rc == 0 && screen.eps == 0.5, "apply_show puts the answer on the screen's state");

  /* a runaway check ends with a message; the caller's state is untouched; the lesson goes on */
  ns_state before;
  ns_state_copy(&before, &screen, err);
  rc = lesson_check_try(ls, 3, &screen, hint, sizeof hint, err);
  tap_ok(rc == -1 && strstr(err, "engine.lua:") && strstr(err, "instruction budget exceeded"),
         "an endless check: -1 with FILE:LINE (%s)", err);
  tap_ok(ns_state_equal(&screen, &before), "the screen's state is unchanged");
  rc = lesson_claims(ls, 4, err);
  tap_ok(rc == -1 && strstr(err, "engine.lua:") && strstr(err, "memory limit exceeded"),
         "a memory bomb in claims: -1 with FILE:LINE (%s)", err);
  nclaims = 0;
  rc = lesson_claims(ls, 5, err);
  tap_ok(rc == 2, "after both, step 5's claims still run: 2 of 3 fail (got %d)", rc);
  tap_ok(nclaims == 3 && strcmp(claims[0].id, "c15-rank-centered") == 0 && claims[0].verified &&
             !claims[1].verified && claims[1].value == 2.5 && !claims[2].verified &&
             isnan(claims[2].value) && claims[0].step == 5,
         "verdicts: 2 = 2 verified, 2.5 != 3 failed, NaN failed; reported as step 5");
  tap_ok(lesson_check_try(ls, 1, NULL, hint, sizeof hint, err) == 0,
         "a step without a check is never done");

  ns_state_free(&before);
  ns_state_free(&mine);
  ns_history_free(&h);
  ns_state_free(&screen);
  ns_state_free(&ref1);
  ns_state_free(&ref2);
  ns_state_free(&ref5);
  ns_tensor_free(x);
  lesson_free(ls);

  /* print() and, without on_claim, the verdicts go to opt.out */
  lesson_options o2 = o;
  o2.on_claim = NULL;
  o2.out = out;
  ls = lesson_load(LESSON_TEST_SRCDIR "/tests/lessons/engine.lua", &o2, err);
  outbuf[0] = '\0';
  rc = ls ? lesson_claims(ls, 5, err) : -1;
  tap_ok(rc == 2 && strstr(outbuf, "five\t5\n") &&
             strstr(outbuf, "claim c15-rank-centered = 2: verified\n") &&
             strstr(outbuf, "claim c15-rank-rms = 2.5: FAILED\n"),
         "print and the verdicts reach opt.out");
  if (rc != 2) tap_diag("claims: %d (%s)", rc, err);
  lesson_free(ls);

  /* a file that never calls lesson{} */
  FILE *nf = fopen("test_lesson_none.lua", "w");
  if (nf) {
    fputs("local a = 1\n", nf);
    fclose(nf);
  }
  ls = lesson_load("test_lesson_none.lua", &o, err);
  tap_ok(!ls && strstr(err, "does not call lesson{"), "no lesson{}: %s", err);
  lesson_free(ls);
  remove("test_lesson_none.lua");
  /* a wrong field name in a step */
  nf = fopen("test_lesson_field.lua", "w");
  if (nf) {
    fputs("lesson{title = 't', source = 's', section = 's',\n  steps = {{txet = 'x'}}}\n", nf);
    fclose(nf);
  }
  ls = lesson_load("test_lesson_field.lua", &o, err);
  tap_ok(!ls && strstr(err, "test_lesson_field.lua:1:") && strstr(err, "unknown field 'txet'"),
         "a misspelt step field, with its line: %s", err);
  lesson_free(ls);
  remove("test_lesson_field.lua");

  exercises(&o);
  schema_errors(&o);
  shown_digits(&o);
  lesson_registry_free(reg);
  return tap_done();
}
