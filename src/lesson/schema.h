/* schema.h: the lesson format, declared once. Every attribute a lesson{} table, a step, a
 * step's try, its answer and its prediction may carry is one row of LESSON_SCHEMA:
 *
 *   X(SCOPE, ID, "name", TYPES, REQUIRED, "what it is")
 *
 * SCOPE is the table it belongs to (LESSON, STEP, TRY, ANSWER, PREDICT), TYPES the Lua types
 * it may take (LESSON_T_* bits). The reader and its type checks (player.c), `lesson --check`
 * and `lesson --schema` (lesson_run.c, which prints the table lessons/README.md carries; a
 * test compares the two), and the recorder (tui/lesson_pane.c) walk this list; adding an
 * attribute is a row here plus what it does. The attribute's enum is LESSON_A_SCOPE_ID. */
#ifndef LESSON_SCHEMA_H
#define LESSON_SCHEMA_H

#include <lua.h>

#define LESSON_T_STRING (1u << LUA_TSTRING)
#define LESSON_T_NUMBER (1u << LUA_TNUMBER)
#define LESSON_T_TABLE (1u << LUA_TTABLE)
#define LESSON_T_FUNCTION (1u << LUA_TFUNCTION)
#define LESSON_T_BOOLEAN (1u << LUA_TBOOLEAN)

/* clang-format off */
#define LESSON_SCHEMA(X)                                                                           \
  X(LESSON, TITLE, "title", LESSON_T_STRING, 1, "the lesson's title (the bar shows it)")          \
  X(LESSON, SOURCE, "source", LESSON_T_STRING, 1,                                                 \
    "the text's file name; its number (000..004) starts the lesson's file name")                 \
  X(LESSON, SECTION, "section", LESSON_T_STRING, 1, "the section of the text it follows")         \
  X(LESSON, STEPS, "steps", LESSON_T_TABLE, 1, "the list of steps, played in order")              \
  X(STEP, TEXT, "text", LESSON_T_STRING, 0,                                                       \
    "what to look at, in our own words; lines of at most 80 columns; names the key that "         \
    "reaches what it shows")                                                                      \
  X(STEP, SET, "set", LESSON_T_TABLE, 0,                                                          \
    "a set{} table: the state changes of this step, on top of the previous step's state")         \
  X(STEP, FOCUS, "focus", LESSON_T_STRING, 0,                                                     \
    "a panel (input settings output spectrum batch train precision) or an experiment view "      \
    "(residual backward shift stacks: the D B V L views) the step opens")                         \
  X(STEP, VIEW, "view", LESSON_T_STRING, 0,                                                       \
    "where the step's figure goes: \"pane\" (the default: in the lesson pane, under the text) "   \
    "or \"figure\" (it fills the screen above the pane; without a figure: the focused panel's)") \
  X(STEP, FIGURE, "figure", LESSON_T_FUNCTION, 0,                                                 \
    "function(s): the text of a plot (ns.plot.*), drawn on the screen and by --headless")         \
  X(STEP, CLAIMS, "claims", LESSON_T_FUNCTION, 0,                                                 \
    "function(s): claim(id, value) for each number of the text this step verifies")               \
  X(STEP, PREDICT, "predict", LESSON_T_TABLE, 0,                                                  \
    "a question asked before the step's set is applied; the answer is recorded, then the "       \
    "screen shows the truth")                                                                     \
  X(STEP, VARIANT, "variant", LESSON_T_FUNCTION, 0,                                               \
    "function(seed, s): a set{} table for another draw of the exercise (V in a lesson: seed "     \
    "2, 3, ...), applied on the step's state; checks and answers are recomputed on it")          \
  X(STEP, TRY, "try", LESSON_T_TABLE, 0, "an exercise: something the learner does or answers")    \
  X(TRY, TEXT, "text", LESSON_T_STRING, 1, "the task; it never contains its own answer")          \
  X(TRY, CHECK, "check", LESSON_T_FUNCTION, 0,                                                    \
    "function(s): true when the learner's state does it, else a hint (a string)")                 \
  X(TRY, SHOW, "show", LESSON_T_TABLE, 0,                                                         \
    "the answer as a set{} table: H applies it after the last hint")                              \
  X(TRY, ANSWER, "answer", LESSON_T_TABLE, 0,                                                     \
    "a number the learner types (= 13.2, or any Lua expression, in the pane or at the prompt)")  \
  X(TRY, HINTS, "hints", LESSON_T_TABLE, 0,                                                       \
    "a list of strings (or functions(s) that return one, for numbers that vary) H reveals one "  \
    "at a time (a wrong answer reveals the next); the last one is the answer")                   \
  X(ANSWER, VALUE, "value", LESSON_T_FUNCTION, 0,                                                 \
    "function(s): the right number, computed from the state (never typed into the lesson)")      \
  X(ANSWER, CLAIM, "claim", LESSON_T_STRING, 0,                                                   \
    "instead of value: the id of a claim whose expected value is the right number")               \
  X(ANSWER, TOL, "tol", LESSON_T_NUMBER, 0,                                                       \
    "how far off an answer may be (absolute; default: the value to 3 significant digits)")       \
  X(PREDICT, QUESTION, "question", LESSON_T_STRING, 1,                                            \
    "what will happen when the step's set is applied")                                            \
  X(PREDICT, CHOICES, "choices", LESSON_T_TABLE, 0,                                               \
    "a list of strings to pick from (= 2 picks the second); without it the answer is a number")  \
  X(PREDICT, ANSWER, "answer", LESSON_T_NUMBER | LESSON_T_FUNCTION, 0,                            \
    "which choice is true: its index, or function(s) returning it at the step's state")          \
  X(PREDICT, VALUE, "value", LESSON_T_FUNCTION, 0,                                                \
    "without choices: function(s), the true number at the step's state")                          \
  X(PREDICT, TOL, "tol", LESSON_T_NUMBER, 0,                                                      \
    "without choices: how close counts as right (default: 3 significant digits)")
/* clang-format on */

typedef enum {
  LESSON_S_LESSON = 0,
  LESSON_S_STEP,
  LESSON_S_TRY,
  LESSON_S_ANSWER,
  LESSON_S_PREDICT,
  LESSON_S_COUNT
} lesson_scope;

typedef enum {
#define LESSON_X_ENUM(scope, id, name, types, req, doc) LESSON_A_##scope##_##id,
  LESSON_SCHEMA(LESSON_X_ENUM)
#undef LESSON_X_ENUM
      LESSON_A_COUNT
} lesson_attr;

typedef struct {
  lesson_scope scope;
  const char *name;
  unsigned types; /* LESSON_T_* */
  int required;
  const char *doc;
} lesson_attr_row;

/* The rows, by lesson_attr. */
extern const lesson_attr_row lesson_schema[LESSON_A_COUNT];
/* The scopes' names as the format spells them ("lesson", "step", "try", "try.answer",
 * "predict"). */
extern const char *const lesson_scope_names[LESSON_S_COUNT];
/* The experiment views a step's focus may open, in the screen's order (D B V L). */
extern const char *const lesson_focus_views[];
/* The values of a step's view. */
extern const char *const lesson_view_names[];
/* The attribute's name ("text"). */
static inline const char *lesson_attr_name(lesson_attr a) {
  return lesson_schema[a].name;
}
/* "string", "table or function" ... for the types of row a, into buf. */
const char *lesson_types_text(unsigned types, char *buf, unsigned long len);

#endif
