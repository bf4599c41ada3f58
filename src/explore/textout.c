/* textout.c: sanitizing standard streams (textout.h). */
#define _GNU_SOURCE 1 /* fopencookie */
#include "explore/textout.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/text.h"

#define GUARD_FLAGS (NS_TEXT_KEEP_NL | NS_TEXT_KEEP_TAB | NS_TEXT_KEEP_CR)
#define PIECE 4096

typedef struct {
  int fd;
  char pend[4]; /* the start of a character the last write cut */
  size_t npend;
} guard;

static int write_all(int fd, const char *b, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, b, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    b += w;
    n -= (size_t)w;
  }
  return 0;
}

static ssize_t guard_write(void *c, const char *buf, size_t size) {
  guard *g = c;
  char in[PIECE + 4], out[3 * (PIECE + 4) + 1];
  size_t done = 0;
  while (done < size) {
    size_t take = size - done < PIECE ? size - done : PIECE;
    memcpy(in, g->pend, g->npend);
    memcpy(in + g->npend, buf + done, take);
    size_t n = g->npend + take;
    size_t keep = ns_text_partial(in, n);
    size_t len = ns_text_sanitize(out, sizeof out, in, n - keep, GUARD_FLAGS);
    if (write_all(g->fd, out, len) != 0) return -1;
    memcpy(g->pend, in + n - keep, keep);
    g->npend = keep;
    done += take;
  }
  return (ssize_t)size;
}

static int guard_close(void *c) {
  guard *g = c;
  int rc = 0;
  if (g->npend) { /* the text ended inside a character */
    char out[16];
    size_t len = ns_text_sanitize(out, sizeof out, g->pend, g->npend, GUARD_FLAGS);
    rc = write_all(g->fd, out, len);
  }
  free(g);
  return rc; /* the descriptor stays open: it is the process's */
}

int ns_text_guard(FILE **stream) {
  if (!stream || !*stream) return -1;
  int fd = fileno(*stream);
  if (fd < 0) return -1;
  guard *g = calloc(1, sizeof *g);
  if (!g) return -1;
  g->fd = fd;
  cookie_io_functions_t io = {NULL, guard_write, NULL, guard_close};
  FILE *f = fopencookie(g, "w", io);
  if (!f) {
    free(g);
    return -1;
  }
  int mode = *stream == stderr ? _IONBF : isatty(fd) ? _IOLBF : _IOFBF;
  setvbuf(f, NULL, mode, mode == _IONBF ? 0 : BUFSIZ);
  fflush(*stream);
  *stream = f;
  return 0;
}
