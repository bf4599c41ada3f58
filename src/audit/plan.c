/* plan.c: reading and drafting the plan of a capture. See plan.h. */
#include "audit/plan.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "explore/file.h"
#include "explore/state_priv.h"

long audit_parse_axes(const char *s) {
  unsigned mask = 0;
  const char *p = s;
  int any = 0;
  while (*p) {
    if (*p == '{' || *p == '}' || *p == ',' || *p == ' ') {
      p++;
      continue;
    }
    if (*p < '1' || *p > '4') return -1;
    int a = *p++ - '1';
    if (*p >= '0' && *p <= '9') return -1;
    if (mask >> a & 1u) return -1;
    mask |= 1u << a;
    any = 1;
  }
  return any ? (long)mask : -1;
}

void audit_plan_free(audit_plan *p) {
  if (!p) return;
  free(p->row);
  memset(p, 0, sizeof *p);
}

/* The fields of a line: split at tabs when it has one, else at runs of blanks. */
static int split(char *line, char **f, int max) {
  int n = 0, tabs = strchr(line, '\t') != NULL;
  char *p = line;
  while (*p && n < max) {
    if (!tabs)
      while (*p == ' ') p++;
    if (!*p) break;
    f[n++] = p;
    char *e = tabs ? strchr(p, '\t') : strpbrk(p, " \t");
    if (!e) break;
    *e = 0;
    p = e + 1;
  }
  for (int k = 0; k < n; k++) { /* trim blanks around a tab-separated field */
    while (*f[k] == ' ') f[k]++;
    size_t l = strlen(f[k]);
    while (l && f[k][l - 1] == ' ') f[k][--l] = 0;
  }
  return n;
}

static int is_default(const char *s) {
  return !s || !*s || strcmp(s, "-") == 0;
}

static int row_fail(char *err, int line, const char *fmt, ...) NS_PRINTF(3, 4);
static int row_fail(char *err, int line, const char *fmt, ...) {
  char msg[NS_ERRLEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ns_seterr(err, "line %d: %s", line, msg);
}

int audit_plan_read(const char *path, audit_plan *p, char *err) {
  memset(p, 0, sizeof *p);
  size_t len = 0;
  char *text = ns_file_read(path, (size_t)16 << 20, &len, err);
  if (!text) return -1;
  size_t cap = 0;
  int lineno = 0, rc = 0;
  for (char *line = text; line && rc == 0;) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = 0;
    lineno++;
    size_t l = strlen(line);
    if (l && line[l - 1] == '\r') line[--l] = 0;
    char *f[8];
    int nf = split(line, f, 8);
    char *next = nl ? nl + 1 : NULL;
    if (nf == 0 || f[0][0] == '#' || (p->n == 0 && strcasecmp(f[0], "tensor") == 0)) {
      line = next;
      continue;
    }
    if (nf > 7) {
      rc = row_fail(err, lineno,
                    "%d fields, at most 7 (tensor kind axes layout groups eps running)", nf);
      break;
    }
    if (p->n == cap) {
      size_t nc = cap ? 2 * cap : 16;
      audit_plan_row *q = realloc(p->row, nc * sizeof *q);
      if (!q) {
        rc = ns_seterr(err, "out of memory");
        break;
      }
      p->row = q;
      cap = nc;
    }
    audit_plan_row *r = &p->row[p->n];
    memset(r, 0, sizeof *r);
    ns_audit_opts_init(&r->o);
    r->line = lineno;
    if (strlen(f[0]) >= sizeof r->tensor) {
      rc = row_fail(err, lineno, "the tensor name is longer than %zu bytes", sizeof r->tensor - 1);
      break;
    }
    snprintf(r->tensor, sizeof r->tensor, "%s", f[0]);
    const char *kind = nf > 1 ? f[1] : NULL, *axes = nf > 2 ? f[2] : NULL;
    const char *layout = nf > 3 ? f[3] : NULL, *groups = nf > 4 ? f[4] : NULL;
    const char *eps = nf > 5 ? f[5] : NULL, *running = nf > 6 ? f[6] : NULL;
    char *end;
    if (!is_default(kind) && ns_kind_parse(kind, &r->o.kind) != 0) {
      rc = row_fail(err, lineno, "kind \"%s\": layer, rms, batch, instance or group", kind);
    } else if (!is_default(axes)) {
      long m = audit_parse_axes(axes);
      if (m < 0) rc = row_fail(err, lineno, "axes \"%s\": distinct axes 1 to 4, e.g. 1,3,4", axes);
      r->o.axes = (unsigned)m;
    }
    if (rc == 0 && !is_default(layout)) {
      int lo = -1;
      for (int k = 0; ns_layout_names[k]; k++)
        if (strcasecmp(layout, ns_layout_names[k]) == 0) lo = k;
      if (lo < 0) rc = row_fail(err, lineno, "layout \"%s\": nchw, nhwc, ncl, btd or bd", layout);
      r->o.layout = lo;
    }
    if (rc == 0 && !is_default(groups)) {
      long g = strtol(groups, &end, 10);
      if (*end || g < 1 || g > (1L << 30))
        rc = row_fail(err, lineno, "groups \"%s\": a whole number >= 1", groups);
      else if (r->o.kind != NS_KIND_GROUP && g != 1)
        rc = row_fail(err, lineno, "groups are for kind group");
      r->o.groups = (int)g;
    }
    if (rc == 0 && !is_default(eps)) {
      double e = strtod(eps, &end);
      if (*end || !(e >= 0) || !isfinite(e))
        rc = row_fail(err, lineno, "eps \"%s\" " NS_EPS_RULE, eps);
      r->o.eps = e;
    }
    if (rc == 0 && !is_default(running)) {
      if (strlen(running) >= sizeof r->running)
        rc = row_fail(err, lineno, "the running statistics' names are too long");
      snprintf(r->running, sizeof r->running, "%s", running);
    }
    if (rc == 0) p->n++;
    line = next;
  }
  free(text);
  if (rc == 0 && p->n == 0) rc = ns_seterr(err, "the plan names no tensor");
  if (rc) audit_plan_free(p);
  return rc;
}

/* ---- the draft ------------------------------------------------------------------------- */

typedef struct {
  char *s;
  size_t n, cap;
  int failed;
} tbuf;

static void tb_add(tbuf *b, const char *fmt, ...) NS_PRINTF(2, 3);
static void tb_add(tbuf *b, const char *fmt, ...) {
  if (b->failed) return;
  va_list ap;
  va_start(ap, fmt);
  char tmp[1024];
  int w = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (w < 0) w = 0;
  if ((size_t)w >= sizeof tmp) w = (int)sizeof tmp - 1;
  if (b->n + (size_t)w + 1 > b->cap) {
    size_t nc = (b->cap + (size_t)w + 1) * 2;
    char *q = realloc(b->s, nc);
    if (!q) {
      b->failed = 1;
      return;
    }
    b->s = q;
    b->cap = nc;
  }
  memcpy(b->s + b->n, tmp, (size_t)w + 1);
  b->n += (size_t)w;
}

/* The name's words, lower case and without trailing digits ("m01.bn0.train" -> m, bn,
 * train): 1 if one of them is in the list. */
static int has_word(const char *name, const char *const *words) {
  char w[64];
  size_t k = 0;
  for (const char *p = name;; p++) {
    int sep = !*p || *p == '.' || *p == '_' || *p == '/' || *p == '-' || *p == ':';
    if (!sep) {
      if (k < sizeof w - 1) w[k++] = (char)tolower((unsigned char)*p);
      continue;
    }
    while (k && isdigit((unsigned char)w[k - 1])) k--;
    w[k] = 0;
    for (int i = 0; k && words[i]; i++)
      if (strcmp(w, words[i]) == 0) return 1;
    k = 0;
    if (!*p) return 0;
  }
}

/* The name's last component (after the last '.'). */
static const char *last_part(const char *name) {
  const char *d = strrchr(name, '.');
  return d ? d + 1 : name;
}

/* 1 if w[0..wl) appears in name between separators (or its ends). */
static int has_part(const char *name, const char *w, size_t wl) {
  size_t nl = strlen(name);
  for (size_t i = 0; i + wl <= nl; i++)
    if (strncmp(name + i, w, wl) == 0 && (i == 0 || strchr("._/-", name[i - 1])) &&
        (i + wl == nl || strchr("._/-", name[i + wl])))
      return 1;
  return 0;
}

/* The running statistics beside a tensor: the longest P with P.running_mean and
 * P.running_var in the capture that begins the name (P.) or is one of its words. */
static const char *running_of(const ns_st_index *ix, const char *name, char *buf, size_t len) {
  const char *best = NULL;
  size_t bl = 0;
  for (size_t k = 0; k < ix->ntensors; k++) {
    const char *t = ix->t[k].name;
    size_t tl = strlen(t), sl = strlen(".running_mean");
    if (tl <= sl || strcmp(t + tl - sl, ".running_mean") != 0) continue;
    size_t pl = tl - sl;
    char var[600];
    snprintf(var, sizeof var, "%.*s.running_var", (int)pl, t);
    if (ns_st_find(ix, var) < 0 || pl >= len) continue;
    int starts = strncmp(name, t, pl) == 0 && name[pl] == '.';
    int word = has_part(name, t, pl);
    if ((starts || word) && pl > bl) {
      snprintf(buf, len, "%.*s", (int)pl, t);
      best = buf;
      bl = pl;
    }
  }
  return best;
}

char *audit_plan_draft(const ns_st_index *ix, const char *capture) {
  static const char *const skip_last[] = {
      "weight", "bias", "running_mean", "running_var", "num_batches_tracked", "gamma",
      "beta",   NULL};
  static const char *const skip_words[] = {"y", "out", "output", "outputs", "grad", NULL};
  static const char *const w_batch[] = {"bn", "batchnorm", "batch", NULL};
  static const char *const w_group[] = {"gn", "groupnorm", "group", NULL};
  static const char *const w_inst[] = {"in", "instancenorm", "instance", "inorm", NULL};
  static const char *const w_rms[] = {"rms", "rmsnorm", NULL};
  static const char *const w_layer[] = {"ln", "layernorm", "layer", "norm", NULL};
  tbuf b = {0};
  tb_add(&b,
         "# normscope audit plan for %s: one tensor per line. The kinds, groups and running\n"
         "# statistics are guesses from the names and shapes: check them, then run\n"
         "#   normscope audit %s --plan THIS.tsv\n"
         "# \"-\" keeps the audit's default (axes: the kind's or the layout's; eps 1e-5).\n"
         "tensor\tkind\taxes\tlayout\tgroups\teps\trunning\n",
         capture, capture);
  size_t rows = 0;
  for (size_t k = 0; k < ix->ntensors; k++) {
    const ns_st_entry *e = &ix->t[k];
    if (ns_st_loadable(ix, k, NULL) != 0 || e->rank < 2) continue;
    int skip = 0;
    for (int i = 0; skip_last[i]; i++) skip |= strcmp(last_part(e->name), skip_last[i]) == 0;
    if (skip || has_word(e->name, skip_words)) continue;
    ns_kind kind = has_word(e->name, w_batch)   ? NS_KIND_BATCH
                   : has_word(e->name, w_group) ? NS_KIND_GROUP
                   : has_word(e->name, w_inst)  ? NS_KIND_INSTANCE
                   : has_word(e->name, w_rms)   ? NS_KIND_RMS
                   : has_word(e->name, w_layer) ? NS_KIND_LAYER
                   : e->rank == 4               ? NS_KIND_BATCH
                                                : NS_KIND_LAYER;
    if (kind == NS_KIND_INSTANCE && e->rank < 3) kind = NS_KIND_LAYER;
    char groups[16] = "-", run[512] = "-", rb[512];
    if (kind == NS_KIND_GROUP) { /* the most groups, up to 32, of at least 2 channels */
      size_t C = e->shape[1], g = 1;
      for (size_t q = 32; q >= 2 && g == 1; q /= 2)
        if (C % q == 0 && C / q >= 2) g = q;
      snprintf(groups, sizeof groups, "%zu", g);
    }
    if (kind == NS_KIND_BATCH || kind == NS_KIND_INSTANCE) {
      const char *p = running_of(ix, e->name, rb, sizeof rb);
      if (p) snprintf(run, sizeof run, "%s", p);
    }
    tb_add(&b, "%s\t%s\t-\t-\t%s\t-\t%s\n", e->name, ns_kind_name(kind), groups, run);
    rows++;
  }
  if (rows == 0) tb_add(&b, "# no tensor of rank 2 to 4 looks like a normalization's input\n");
  if (b.failed) {
    free(b.s);
    return NULL;
  }
  return b.s;
}
