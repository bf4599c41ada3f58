/* err.h: the one helper every core file uses to report a failure (internal to the core,
 * not part of the public API).
 *
 * Functions that can fail take `char *err` (NS_ERRLEN bytes, or NULL when the caller
 * does not want the reason) and write a one-line message into it:
 *
 *   ns_seterr(err, "groups (%d) must divide %zu channels", g, c);
 */
#ifndef NS_ERR_H
#define NS_ERR_H

/* Size of every error buffer: a message is one line of at most NS_ERRLEN - 1 bytes. */
#define NS_ERRLEN 512

#if defined(__GNUC__) || defined(__clang__)
#define NS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define NS_PRINTF(f, a)
#endif

/* Formats the message into err (truncated to NS_ERRLEN - 1 characters), with control
 * characters and escape sequences from the quoted input made harmless (core/text.h); no-op
 * when err is NULL. Returns -1, so that `return ns_seterr(err, ...);` reports and fails at
 * once. */
int ns_seterr(char *err, const char *fmt, ...) NS_PRINTF(2, 3);

#endif
