/* claims.c: the claims registry (data/claims.tsv) and the verdict on one value (lesson.h). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "lesson/lesson_priv.h"
#include "explore/file.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "core/dtype.h"
#include "lua/explore_lua.h"
#include "lua/nsl.h"
#include "lua/nsl_priv.h"

/* ------------------------------------------------------------------ registry */

void lesson_registry_free(lesson_registry *r) {
  if (!r) return;
  for (size_t i = 0; i < r->n; i++) {
    free(r->rows[i].id);
    free(r->rows[i].source);
    free(r->rows[i].setup);
    free(r->rows[i].kind);
  }
  free(r->rows);
  free(r);
}

/* A full number (surrounding blanks allowed) into *v; 0 or -1. */
static int parse_double(const char *s, double *v) {
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  if (end == s || errno == ERANGE) return -1;
  while (isspace((unsigned char)*end)) end++;
  return *end ? -1 : 0;
}

lesson_registry *lesson_registry_load(const char *path, char *err) {
  char e[NS_ERRLEN];
  FILE *f = ns_file_fopen_regular(path, e); /* a FIFO or a device is refused, not waited on */
  if (!f) {
    snprintf(err, NS_ERRLEN, "%.200s: %.300s", path, e);
    return NULL;
  }
  lesson_registry *r = calloc(1, sizeof *r);
  size_t cap = 0, lineno = 0;
  char *line = NULL;
  size_t linecap = 0;
  ssize_t len;
  int bad = !r;
  if (bad) snprintf(err, NS_ERRLEN, "%s: out of memory", path);
  while (!bad && (len = getline(&line, &linecap, f)) >= 0) {
    lineno++;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
    if (len == 0 || line[0] == '#') continue;
    char *col[6];
    int n = 0;
    char *p = line;
    for (; n < 6 && p; n++) {
      col[n] = p;
      p = strchr(p, '\t');
      if (p) *p++ = '\0';
    }
    lesson_claim_row row = {0};
    if (n != 6 || p) {
      snprintf(err, NS_ERRLEN, "%s:%zu: expected 6 tab-separated columns", path, lineno);
      bad = 1;
    } else if (!col[0][0]) {
      snprintf(err, NS_ERRLEN, "%s:%zu: empty id", path, lineno);
      bad = 1;
    } else if (parse_double(col[3], &row.expected) || parse_double(col[4], &row.tol) ||
               !(row.tol >= 0)) {
      snprintf(err, NS_ERRLEN, "%s:%zu: %s: expected and tol must be numbers, tol >= 0", path,
               lineno, col[0]);
      bad = 1;
    } else if (lesson_registry_find(r, col[0])) {
      snprintf(err, NS_ERRLEN, "%s:%zu: duplicate id %s", path, lineno, col[0]);
      bad = 1;
    }
    if (bad) break;
    if (r->n == cap) {
      size_t nc = cap ? 2 * cap : 64;
      lesson_claim_row *nr = realloc(r->rows, nc * sizeof *nr);
      if (!nr) {
        snprintf(err, NS_ERRLEN, "%s: out of memory", path);
        bad = 1;
        break;
      }
      r->rows = nr;
      cap = nc;
    }
    row.id = lesson_xstrdup(col[0]);
    row.source = lesson_xstrdup(col[1]);
    row.setup = lesson_xstrdup(col[2]);
    row.kind = lesson_xstrdup(col[5]);
    r->rows[r->n++] = row;
    if (!row.id || !row.source || !row.setup || !row.kind) {
      snprintf(err, NS_ERRLEN, "%s: out of memory", path);
      bad = 1;
    }
  }
  if (!bad && ferror(f)) {
    snprintf(err, NS_ERRLEN, "%s: read error", path);
    bad = 1;
  }
  free(line);
  fclose(f);
  if (bad) {
    lesson_registry_free(r);
    return NULL;
  }
  return r;
}

const lesson_claim_row *lesson_registry_find(const lesson_registry *r, const char *id) {
  if (!r || !id) return NULL;
  for (size_t i = 0; i < r->n; i++)
    if (strcmp(r->rows[i].id, id) == 0) return &r->rows[i];
  return NULL;
}

int lesson_claim_ok(const lesson_claim_row *row, double value) {
  if (!row || isnan(value)) return 0;
  if (value == row->expected) return 1; /* also equal infinities */
  return fabs(value - row->expected) <= row->tol;
}
