/* tap.h: a tiny TAP producer shared by the C unit tests (automake's tap-driver.sh
 * reads the output). Each check prints "ok N - name" or "not ok N - name" with the
 * values involved; tap_done() prints the plan and returns the exit status.
 *
 *   tap_close(got, 2.055094741, 5e-7, "rms shift max diff");
 *   return tap_done();
 */
#ifndef NS_TAP_H
#define NS_TAP_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

static int tap_n, tap_failed;

static inline void tap_ok(int cond, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  if (!cond) tap_failed++;
}

/* |got - want| <= tol (tol 0: exact equality; NaN == NaN counts as equal). */
static inline int tap_close(double got, double want, double tol, const char *name) {
  int ok = (isnan(got) && isnan(want)) || got == want || fabs(got - want) <= tol;
  tap_ok(ok, "%s", name);
  if (!ok)
    printf("#   got %.17g, want %.17g (tol %g, diff %.3g)\n", got, want, tol, fabs(got - want));
  return ok;
}

static inline void tap_diag(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("# ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
}

static inline int tap_done(void) {
  printf("1..%d\n", tap_n);
  return tap_failed ? 1 : 0;
}

#endif
