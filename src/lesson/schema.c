/* schema.c: the rows of the lesson format (schema.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "lesson/schema.h"

#include <stdio.h>

const lesson_attr_row lesson_schema[LESSON_A_COUNT] = {
#define LESSON_X_ROW(scope, id, name, types, req, doc) {LESSON_S_##scope, name, types, req, doc},
    LESSON_SCHEMA(LESSON_X_ROW)
#undef LESSON_X_ROW
};

const char *const lesson_scope_names[LESSON_S_COUNT] = {"lesson", "step", "try", "try.answer",
                                                        "predict"};

const char *const lesson_focus_views[] = {"residual", "backward", "shift", "stacks", NULL};

const char *const lesson_view_names[] = {"pane", "figure", NULL};

const char *lesson_types_text(unsigned types, char *buf, unsigned long len) {
  static const struct {
    unsigned bit;
    const char *name;
  } names[] = {{LESSON_T_STRING, "string"},
               {LESSON_T_NUMBER, "number"},
               {LESSON_T_BOOLEAN, "boolean"},
               {LESSON_T_TABLE, "table"},
               {LESSON_T_FUNCTION, "function"}};
  size_t n = 0;
  buf[0] = 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0] && n < len; i++)
    if (types & names[i].bit)
      n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " or " : "", names[i].name);
  return buf;
}
