/* message.c: the status line's message, set by the key actions of keys.c and
 * lesson_pane.c (a leaf they share, so neither calls into the other for it). */
#include <stdarg.h>
#include <stdio.h>

#include "tui/app.h"

unsigned tui_say(app *a, int style, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(a->msg, sizeof a->msg, fmt, ap);
  va_end(ap);
  a->msg_style = style;
  return TUI_R_MESSAGE;
}
