/* lesson_progress.c: the learner's place in each lesson (lesson_progress.h). */
#include "lesson/lesson_progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/err.h"
#include "explore/file.h"

const char *lesson_progress_path(char *buf, size_t len) {
  char dir[1024];
  if (!buf || len == 0 || !ns_file_state_dir(dir, sizeof dir)) return NULL;
  snprintf(buf, len, "%s/lesson-progress", dir);
  return buf;
}

const char *lesson_progress_name(const char *path, char *buf, size_t len) {
  if (!buf || len == 0) return "";
  const char *b = path ? strrchr(path, '/') : NULL;
  b = b ? b + 1 : (path ? path : "");
  size_t l = strlen(b);
  if (l > 4 && strcmp(b + l - 4, ".lua") == 0) l -= 4;
  snprintf(buf, len, "%.*s", (int)l, b);
  return buf;
}

void lesson_progress_free(lesson_progress *p) {
  if (!p) return;
  for (size_t i = 0; i < p->n; i++) {
    free(p->rows[i].name);
    free(p->rows[i].tries);
  }
  free(p->rows);
  p->rows = NULL;
  p->n = 0;
}

/* Appends a row (name copied, tries taken). 0 or -1. */
static int add(lesson_progress *p, const char *name, int step, int nsteps, int seen, char *tries) {
  lesson_progress_row *r = realloc(p->rows, (p->n + 1) * sizeof *r);
  if (!r) {
    free(tries);
    return -1;
  }
  p->rows = r;
  char *nm = malloc(strlen(name) + 1);
  if (!nm) {
    free(tries);
    return -1;
  }
  strcpy(nm, name);
  p->rows[p->n++] = (lesson_progress_row){nm, step, nsteps, seen, tries};
  return 0;
}

/* Whether t is a marks string for n steps (each '+', '-' or '.'). */
static int tries_ok(const char *t, int n) {
  if ((int)strlen(t) != n) return 0;
  for (; *t; t++)
    if (*t != '+' && *t != '-' && *t != '.') return 0;
  return 1;
}

int lesson_progress_done(const lesson_progress_row *r) {
  if (!r || r->seen != r->nsteps) return 0;
  if (!r->tries) return 0; /* a file from before the marks: nothing says a try passed */
  return strchr(r->tries, '-') == NULL;
}

/* FNV-1a of a name, for the set of names seen while loading. */
static size_t name_hash(const char *s) {
  size_t h = (size_t)14695981039346656037ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * (size_t)1099511628211ull;
  return h;
}

/* The set of names loaded so far: open addressing over row numbers plus one (0 is an
 * empty slot), at most half full. One probe sequence per row makes a load linear in the
 * file's rows; a linear lesson_progress_find per row made it quadratic (40,000 rows took
 * seconds, most of it in strcmp). */
typedef struct {
  size_t *slot;
  size_t size; /* a power of two, 0 before the first row */
} name_set;

/* The slot of name: where it is, or the empty slot where it would go. */
static size_t *set_slot(const name_set *s, const lesson_progress *p, const char *name) {
  size_t i = name_hash(name) & (s->size - 1);
  while (s->slot[i] && strcmp(p->rows[s->slot[i] - 1].name, name) != 0) i = (i + 1) & (s->size - 1);
  return &s->slot[i];
}

/* Makes room for one more name (rehashing the rows p holds). 0 or -1. */
static int set_reserve(name_set *s, const lesson_progress *p) {
  if (2 * (p->n + 1) <= s->size) return 0;
  size_t size = s->size ? 2 * s->size : 64;
  size_t *slot = calloc(size, sizeof *slot);
  if (!slot) return -1;
  free(s->slot);
  s->slot = slot;
  s->size = size;
  for (size_t i = 0; i < p->n; i++) *set_slot(s, p, p->rows[i].name) = i + 1;
  return 0;
}

void lesson_progress_load(lesson_progress *p) {
  if (!p) return;
  p->rows = NULL;
  p->n = 0;
  char path[1100];
  if (!lesson_progress_path(path, sizeof path)) return;
  FILE *f = ns_file_fopen_regular(path, NULL); /* a FIFO there is refused, not waited on */
  if (!f) return;
  char line[2048], name[512], tries[1024];
  name_set seen = {NULL, 0};
  size_t cap = 0; /* rows allocated: doubled, so the appends are linear too */
  while (fgets(line, sizeof line, f)) {
    int step, nsteps, seen_step;
    tries[0] = 0;
    int got =
        sscanf(line, "%511[^\t]\t%d\t%d\t%d\t%1023[-+.]", name, &step, &nsteps, &seen_step, tries);
    if (got != 4 && got != 5) continue;
    if (step < 1 || nsteps < 1 || step > nsteps || seen_step < step || seen_step > nsteps) continue;
    if (got == 5 && !tries_ok(tries, nsteps)) tries[0] = 0;
    if (set_reserve(&seen, p) != 0) break;
    size_t *at = set_slot(&seen, p, name);
    if (*at) continue; /* keep the first of duplicates */
    if (p->n == cap) {
      size_t ncap = cap ? 2 * cap : 16;
      lesson_progress_row *r = realloc(p->rows, ncap * sizeof *r);
      if (!r) break;
      p->rows = r;
      cap = ncap;
    }
    char *nm = malloc(strlen(name) + 1), *tr = NULL;
    if (tries[0] && (tr = malloc(strlen(tries) + 1))) strcpy(tr, tries);
    if (!nm || (tries[0] && !tr)) {
      free(nm);
      free(tr);
      break;
    }
    strcpy(nm, name);
    p->rows[p->n++] = (lesson_progress_row){nm, step, nsteps, seen_step, tr};
    *at = p->n;
  }
  free(seen.slot);
  fclose(f);
}

const lesson_progress_row *lesson_progress_find(const lesson_progress *p, const char *name) {
  if (!p || !name) return NULL;
  for (size_t i = 0; i < p->n; i++)
    if (strcmp(p->rows[i].name, name) == 0) return &p->rows[i];
  return NULL;
}

int lesson_progress_note(lesson_progress *p, const char *name, int step, int nsteps) {
  return lesson_progress_note_tries(p, name, step, nsteps, NULL);
}

int lesson_progress_note_tries(lesson_progress *p, const char *name, int step, int nsteps,
                               const char *tries) {
  if (!p || !name || !*name || strchr(name, '\t') || strchr(name, '\n') || step < 1 ||
      nsteps < step || (tries && !tries_ok(tries, nsteps)))
    return -1;
  int seen = step;
  char *tr = NULL;
  if (tries) {
    tr = malloc((size_t)nsteps + 1);
    if (!tr) return -1;
    strcpy(tr, tries);
  }
  for (size_t i = 0; i < p->n; i++)
    if (strcmp(p->rows[i].name, name) == 0) { /* drop it; it goes to the end */
      const lesson_progress_row *o = &p->rows[i];
      if (o->nsteps == nsteps && o->seen > seen) seen = o->seen;
      if (o->nsteps == nsteps && o->tries) { /* a try once passed stays passed */
        if (!tr) {
          tr = malloc((size_t)nsteps + 1);
          if (!tr) return -1;
          strcpy(tr, o->tries);
        } else
          for (int k = 0; k < nsteps; k++)
            if (o->tries[k] == '+' && tr[k] == '-') tr[k] = '+';
      }
      free(p->rows[i].name);
      free(p->rows[i].tries);
      memmove(&p->rows[i], &p->rows[i + 1], (p->n - i - 1) * sizeof *p->rows);
      p->n--;
      break;
    }
  return add(p, name, step, nsteps, seen, tr);
}

int lesson_progress_save(const lesson_progress *p, char *err) {
  char dir[1024], path[1100];
  if (!p) {
    snprintf(err, NS_ERRLEN, "no progress");
    return -1;
  }
  if (!ns_file_state_dir(dir, sizeof dir)) {
    snprintf(err, NS_ERRLEN, "neither XDG_STATE_HOME nor HOME is set");
    return -1;
  }
  if (ns_file_mkdirs(dir, err) != 0) return -1;
  snprintf(path, sizeof path, "%s/lesson-progress", dir);
  size_t cap = 64, len = 0;
  for (size_t i = 0; i < p->n; i++)
    cap += strlen(p->rows[i].name) + 48 + (p->rows[i].tries ? strlen(p->rows[i].tries) + 1 : 0);
  char *buf = malloc(cap);
  if (!buf) {
    snprintf(err, NS_ERRLEN, "out of memory");
    return -1;
  }
  buf[0] = 0;
  for (size_t i = 0; i < p->n; i++)
    len += (size_t)snprintf(buf + len, cap - len, "%s\t%d\t%d\t%d%s%s\n", p->rows[i].name,
                            p->rows[i].step, p->rows[i].nsteps, p->rows[i].seen,
                            p->rows[i].tries ? "\t" : "", p->rows[i].tries ? p->rows[i].tries : "");
  int rc = ns_file_write_atomic(path, buf, len, err);
  free(buf);
  return rc;
}
