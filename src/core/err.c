/* err.c: error messages of the numerics core (see err.h). */
#include "core/err.h"

#include <stdarg.h>
#include <stdio.h>

#include "core/text.h"

/* A message often quotes the input it refuses (a CSV token, a tensor's name, a dtype): it is
 * sanitized here, once for every message of the core (core/text.h). */
int ns_seterr(char *err, const char *fmt, ...) {
  if (!err) return -1;
  char raw[NS_ERRLEN];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(raw, sizeof raw, fmt, ap);
  va_end(ap);
  size_t len = n < 0 ? 0 : (size_t)n < sizeof raw ? (size_t)n : sizeof raw - 1;
  ns_text_sanitize(err, NS_ERRLEN, raw, len, 0);
  return -1;
}
