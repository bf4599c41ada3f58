/* err.c: error messages of the numerics core (see err.h). */
#include "core/err.h"

#include <stdarg.h>
#include <stdio.h>

void ns_seterr(char *err, const char *fmt, ...) {
  if (!err) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, NS_ERRLEN, fmt, ap);
  va_end(ap);
}
