/* err.c: error messages of the numerics core (see err.h). */
#include "core/err.h"

#include <stdarg.h>
#include <stdio.h>

int ns_seterr(char *err, const char *fmt, ...) {
  if (!err) return -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, NS_ERRLEN, fmt, ap);
  va_end(ap);
  return -1;
}
