/* cmd_audit.c: `normscope audit FILE [OPTION]...`, the command line of the audit
 * (src/audit/audit.h does the work). Exit 0 when the audit ran, whatever it found;
 * 1 when the input cannot be read; 2 on bad usage. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#include <stdint.h>
#include <sys/mman.h>
#endif

#include "audit/cmd_audit.h"
#include "core/normalize.h"
#include "audit/audit.h"
#include "audit/plan.h"
#include "explore/textout.h"
#include "explore/file.h"

#define PROG "normscope"

const char cmd_audit_help[] =
    "Usage: " PROG " audit FILE [--kind K] [--axes A] [--groups G] [--eps E]\n"
    "                [--layout nchw|nhwc|ncl|btd|bd] [--running MEAN,VAR] [--tensor NAME]\n"
    "                [--bf16] [--ascii] [--tsv | --json] [--report FILE.md]\n"
    "  or:  " PROG " audit CAPTURE.safetensors --plan [PLAN.tsv] [--tsv | --json]\n"
    "                [--report FILE.md]\n"
    "Audit the normalization of an activation tensor read from FILE (.npy, .csv or\n"
    ".safetensors), of any size: the file is mapped and streamed in chunks, once, on every\n"
    "core (NS_THREADS=N sets how many). Memory stays under 256 MB whatever the file's size\n"
    "(the statistics of a window of the file, one chunk per thread, a slice of at most\n"
    "2^18 elements for precision); NS_MAX_ELEMENTS caps what is held, not the file.\n"
    "\n"
    "  --kind K         one of" NS_KIND_WORDS " (default layer)\n"
    "  --axes A         1-based reduction axes, e.g. 1,3,4 (default: the kind's, or the\n"
    "                   layout's)\n"
    "  --groups G       channel groups of group norm\n"
    "  --eps E          epsilon inside the square root (default 1e-5)\n"
    "  --layout L       how the axes are meant: nchw, nhwc (rank 4), ncl, btd (rank 3), bd\n"
    "  --running M,V    running statistics of a batch norm (or of an instance norm that\n"
    "                   tracks them): two .npy files, or FILE.safetensors:MEAN_NAME,VAR_NAME,\n"
    "                   or FILE.safetensors:PREFIX (PREFIX.running_mean and .running_var,\n"
    "                   and PREFIX.num_batches_tracked when the file has it)\n"
    "  --tensor NAME    the tensor of a .safetensors file (several: listed when not given)\n"
    "  --bf16           a .npy uint16 array holds bf16 bit patterns\n"
    "  --ascii          figures in ASCII only\n"
    "  --tsv            one line per check: CHECK<TAB>ok|warn|yes|no|n/a<TAB>VALUE<TAB>DETAIL\n"
    "  --json           one JSON object\n"
    "  --report FILE.md also write a Markdown report with the figures\n"
    "  --plan PLAN.tsv  audit every tensor of the capture the plan names, one per line:\n"
    "                   TENSOR KIND AXES LAYOUT GROUPS EPS RUNNING (tab-separated; - for a\n"
    "                   default; RUNNING a PREFIX or MEAN,VAR of the capture); one summary\n"
    "                   table, a row per layer, worst first (--tsv: TENSOR before each line)\n"
    "  --plan           alone: write a draft plan from the capture's names and shapes\n"
    "\n"
    "Checks: axes (the reduction axes, the output's statistics along them and along the\n"
    "other layouts' axes, the layouts the shape allows and the one the statistics\n"
    "suggest, channels-last bytes under a channels-first shape), near_zero_variance\n"
    "(variance below 100 eps, or not finite), precision (non-finite values, fp16\n"
    "overflow, the raw-moment cancellation risk, numpy's and torch's float32 against\n"
    "fp64, fp16/bf16 storage, the step of 16-bit data), batch_dependence and\n"
    "batch_size_sensitivity (from the streamed moments of examples 1 and 2, of the last\n"
    "examples and of the batch), train_eval_gap (with --running) and outliers (|z|\n"
    "against sqrt(n-1), sqrt(n) for rms; kurtosis). A warning names the number that\n"
    "tripped it; n/a says a check cannot be measured (one example). Statistics,\n"
    "channels and examples are numbered from 1, like the axes. A progress bar naming the\n"
    "pass goes to standard error when it is a terminal.\n"
    "\n"
    "Exit status: 0 when the audit ran (whatever it found), 1 when FILE or the running\n"
    "statistics cannot be read (with --plan: a tensor of the plan, the others still\n"
    "audited), 2 on bad usage or a plan that does not parse.\n";

static int usage(const char *what, const char *why) {
  if (what)
    fprintf(stderr, PROG ": audit: %s: %s\n", what, why);
  else
    fprintf(stderr, PROG ": audit: %s\n", why);
  fprintf(stderr, "Try '" PROG " audit --help' for more information.\n");
  return 2;
}

/* A tensor of running statistics as doubles. */
static double *tensor_values(ns_tensor *t, size_t *n) {
  double *v = malloc((t->n ? t->n : 1) * sizeof *v);
  if (v) ns_tensor_read(t, v);
  *n = t->n;
  return v;
}

static int ends_with(const char *s, const char *suf) {
  size_t n = strlen(s), m = strlen(suf);
  return n >= m && strcasecmp(s + n - m, suf) == 0;
}

/* Loads --running: "M.npy,V.npy", "F.safetensors:MEAN,VAR" or "F.safetensors:PREFIX". */
/* PREFIX.num_batches_tracked of a .safetensors file into *count: 0 (left at -1 when the
 * file has no such tensor), or 1 after printing why it does not load (a count that is not
 * one whole number, or that a double does not hold exactly: the loader refuses those). */
static int load_count(const char *file, const char *prefix, double *count) {
  char name[512], err[NS_ERRLEN] = "";
  snprintf(name, sizeof name, "%s.num_batches_tracked", prefix);
  ns_st_index ix;
  memset(&ix, 0, sizeof ix);
  if (ns_file_tensors(file, &ix, err)) {
    fprintf(stderr, PROG ": audit: --running %s: %s\n", file, err);
    return 1;
  }
  int have = ns_st_find(&ix, name) >= 0;
  ns_st_free(&ix);
  if (!have) return 0;
  ns_tensor *t = ns_file_load_named(file, name, 0, err);
  if (!t) {
    fprintf(stderr, PROG ": audit: --running %s: %s\n", file, err);
    return 1;
  }
  double v = t->n == 1 ? ns_tensor_get(t, 0) : NAN;
  ns_tensor_free(t);
  if (!(v >= 0) || v != floor(v)) {
    fprintf(stderr, PROG ": audit: --running %s: %s is not one whole number >= 0\n", file, name);
    return 1;
  }
  *count = v;
  return 0;
}

static int load_running(const char *spec, double **mean, double **var, size_t *n, double *count) {
  char buf[2048];
  char err[NS_ERRLEN] = "";
  snprintf(buf, sizeof buf, "%s", spec);
  char *colon = NULL;
  char *st = strstr(buf, ".safetensors:");
  if (st) colon = st + strlen(".safetensors");
  ns_tensor *tm = NULL, *tv = NULL;
  if (colon) {
    *colon = 0;
    const char *file = buf, *names = colon + 1;
    char mname[512], vname[512];
    const char *comma = strchr(names, ',');
    if (comma) {
      snprintf(mname, sizeof mname, "%.*s", (int)(comma - names), names);
      snprintf(vname, sizeof vname, "%s", comma + 1);
    } else {
      snprintf(mname, sizeof mname, "%s.running_mean", names);
      snprintf(vname, sizeof vname, "%s.running_var", names);
      if (load_count(file, names, count)) return 1;
    }
    tm = ns_file_load_named(file, mname, 0, err);
    if (tm) tv = ns_file_load_named(file, vname, 0, err);
    if (!tm || !tv) {
      fprintf(stderr, PROG ": audit: --running %s: %s\n", file, err);
      ns_tensor_free(tm);
      return 1;
    }
  } else {
    char *comma = strchr(buf, ',');
    if (!comma) return usage(spec, "--running takes MEAN.npy,VAR.npy or FILE.safetensors:M,V");
    *comma = 0;
    tm = ns_file_load(buf, err);
    if (!tm) {
      fprintf(stderr, PROG ": audit: --running %s: %s\n", buf, err);
      return 1;
    }
    tv = ns_file_load(comma + 1, err);
    if (!tv) {
      fprintf(stderr, PROG ": audit: --running %s: %s\n", comma + 1, err);
      ns_tensor_free(tm);
      return 1;
    }
  }
  size_t nm, nv;
  *mean = tensor_values(tm, &nm);
  *var = tensor_values(tv, &nv);
  ns_tensor_free(tm);
  ns_tensor_free(tv);
  if (!*mean || !*var) {
    fprintf(stderr, PROG ": audit: out of memory\n");
    return 1;
  }
  if (nm != nv) {
    fprintf(stderr, PROG ": audit: --running: the mean has %zu values, the variance %zu\n", nm, nv);
    return 1;
  }
  for (size_t i = 0; i < nv; i++)
    if (!((*var)[i] >= 0) || !isfinite((*var)[i]) || !isfinite((*mean)[i])) {
      fprintf(stderr, PROG ": audit: --running: value %zu is not finite or a variance < 0\n", i);
      return 1;
    }
  *n = nm;
  return 0;
}

/* ---- progress bar on standard error ---------------------------------------------- */

/* One line, redrawn in place: the pass under way, the bar, the percentage and the time
 * left. Only on a terminal, and only for runs longer than a second. */
typedef struct {
  double t0;
  int shown;
  int last;
  char phase[96];
  int on; /* standard error is a terminal */
} bar;

static double wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void bar_phase(void *ctx, const char *what) {
  bar *b = ctx;
  if (strcmp(b->phase, what) != 0) {
    snprintf(b->phase, sizeof b->phase, "%s", what);
    b->last = -1; /* redraw with the new name */
  }
}

static void bar_update(void *ctx, double done) {
  bar *b = ctx;
  double t = wall() - b->t0;
  if (t < 1.0) return; /* only runs longer than a second get a bar */
  int pct = (int)(done * 100);
  if (b->shown && pct == b->last) return;
  b->shown = 1;
  b->last = pct;
  char cells[21];
  int full = (int)(done * 20);
  for (int i = 0; i < 20; i++) cells[i] = i < full ? '#' : '.';
  cells[20] = 0;
  double eta = done > 0 ? t * (1 - done) / done : 0;
  /* at most 79 columns */
  fprintf(stderr, "\r" PROG " audit [%s] %3d%% %3.0f s left  %-24.24s", cells, pct, eta, b->phase);
  fflush(stderr);
}

static void bar_end(bar *b) {
  if (b->shown) fprintf(stderr, "\r%*s\r", 79, "");
  fflush(stderr);
}

/* ---- a whole capture, by a plan ------------------------------------------------------- */

/* One tensor of the plan, audited: what the summary and the forms need (the report itself
 * is freed at once, so a capture of many layers holds only its text). */
typedef struct {
  const audit_plan_row *row;
  char shape[96];
  int nwarn;
  int verdict[NS_AUDIT_NCHECKS]; /* -1: not run */
  char first[160];               /* the first warning: check and the start of its detail */
  char *warns;                   /* every warning's check and detail, one per line */
  char *form;                    /* the TSV lines or the JSON object */
  char *md;                      /* the Markdown section (with --report) */
  char err[NS_ERRLEN];           /* not audited: why */
} plan_layer;

/* The progress of one tensor of several, on the bar. */
typedef struct {
  bar *b;
  size_t i, n;
  const char *name;
} plan_bar;

static void plan_progress(void *ctx, double done) {
  plan_bar *p = ctx;
  bar_update(p->b, ((double)p->i + done) / (double)p->n);
}

static void plan_phase(void *ctx, const char *what) {
  plan_bar *p = ctx;
  char buf[96];
  snprintf(buf, sizeof buf, "%zu/%zu %s: %s", p->i + 1, p->n, p->name, what);
  bar_phase(p->b, buf);
}

/* The running statistics of a row: "PREFIX" or "MEAN,VAR", tensors of the capture. */
static int plan_running(const char *capture, const char *spec, double **mean, double **var,
                        size_t *n, char *err) {
  char mname[560], vname[560];
  const char *comma = strchr(spec, ',');
  if (comma) {
    snprintf(mname, sizeof mname, "%.*s", (int)(comma - spec), spec);
    snprintf(vname, sizeof vname, "%s", comma + 1);
  } else {
    snprintf(mname, sizeof mname, "%s.running_mean", spec);
    snprintf(vname, sizeof vname, "%s.running_var", spec);
  }
  ns_tensor *tm = ns_file_load_named(capture, mname, 0, err), *tv = NULL;
  if (tm) tv = ns_file_load_named(capture, vname, 0, err);
  size_t nm = 0, nv = 0;
  if (tm && tv) {
    *mean = tensor_values(tm, &nm);
    *var = tensor_values(tv, &nv);
  }
  ns_tensor_free(tm);
  ns_tensor_free(tv);
  if (!*mean || !*var) {
    if (tm && tv) snprintf(err, NS_ERRLEN, "out of memory");
    return -1;
  }
  if (nm != nv) {
    snprintf(err, NS_ERRLEN, "running statistics: the mean has %zu values, the variance %zu", nm,
             nv);
    return -1;
  }
  for (size_t i = 0; i < nv; i++)
    if (!((*var)[i] >= 0) || !isfinite((*var)[i]) || !isfinite((*mean)[i])) {
      snprintf(err, NS_ERRLEN, "running statistics: value %zu is not finite or a variance < 0",
               i + 1);
      return -1;
    }
  *n = nm;
  return 0;
}

/* Audits one row into l. */
static void plan_one(const char *capture, const audit_plan_row *row, const ns_audit_opts *base,
                     ns_audit_form form, int md, int ascii, plan_bar *pb, plan_layer *l) {
  memset(l, 0, sizeof *l);
  l->row = row;
  for (int k = 0; k < NS_AUDIT_NCHECKS; k++) l->verdict[k] = -1;
  ns_audit_opts o = row->o;
  o.threads = base->threads;
  o.chunk = base->chunk;
  double *rmean = NULL, *rvar = NULL;
  size_t nrun = 0;
  if (row->running[0] && plan_running(capture, row->running, &rmean, &rvar, &nrun, l->err)) {
    free(rmean);
    free(rvar);
    return;
  }
  o.run_mean = rmean;
  o.run_var = rvar;
  o.nrun = nrun;
  ns_file_map m;
  if (ns_file_map_open(&m, capture, row->tensor, 0, l->err) != 0) {
    free(rmean);
    free(rvar);
    return;
  }
  ns_shape_format(m.rank, m.shape, l->shape, sizeof l->shape);
  ns_audit_report r;
  int rc = ns_audit_check_opts(&o, m.rank, m.shape, l->err);
  if (rc == 0) {
    if (pb->b->on) {
      o.progress = plan_progress;
      o.phase = plan_phase;
      o.progress_ctx = pb;
    }
    rc = ns_audit_run(&m, &o, &r, l->err);
  }
  ns_file_map_close(&m);
  free(rmean);
  free(rvar);
  if (rc) return;
  size_t wl = 0, wcap = 0;
  for (size_t k = 0; k < r.nfindings; k++) {
    const ns_audit_finding *f = &r.f[k];
    l->verdict[f->check] = f->verdict;
    if (f->verdict != NS_VERDICT_WARN) continue;
    if (l->nwarn++ == 0)
      snprintf(l->first, sizeof l->first, "%s: %s", ns_audit_check_names[f->check], f->detail);
    size_t need = strlen(f->detail) + 64;
    if (wl + need > wcap) {
      size_t nc = (wcap + need) * 2;
      char *q = realloc(l->warns, nc);
      if (!q) break;
      l->warns = q;
      wcap = nc;
    }
    wl += (size_t)snprintf(l->warns + wl, wcap - wl, "  %s: %s\n", ns_audit_check_names[f->check],
                           f->detail);
  }
  char *one = ns_audit_format(&r, form, capture, ascii);
  if (form == NS_AUDIT_TSV && one) { /* each line with the tensor first */
    size_t lines = 0, n = strlen(one), tl = strlen(row->tensor);
    for (size_t i = 0; i < n; i++) lines += one[i] == '\n';
    l->form = malloc(n + lines * (tl + 1) + 1);
    if (l->form) {
      char *w = l->form;
      for (const char *p = one; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) + 1 : strlen(p);
        w += sprintf(w, "%s\t", row->tensor);
        memcpy(w, p, len);
        w += len;
        p += len;
      }
      *w = 0;
    }
    free(one);
  } else {
    l->form = one;
  }
  if (md) l->md = ns_audit_format(&r, NS_AUDIT_MARKDOWN, capture, 1);
  ns_audit_free(&r);
}

/* Worst first: tensors that could not be audited, then by warnings, else in plan order. */
static int plan_worse(const void *x, const void *y) {
  const plan_layer *a = x, *b = y;
  int ea = a->err[0] != 0, eb = b->err[0] != 0;
  if (ea != eb) return eb - ea;
  if (a->nwarn != b->nwarn) return b->nwarn - a->nwarn;
  return a->row->line - b->row->line;
}

/* s as a JSON string on f. */
static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      fprintf(f, "\\%c", *p);
    else if (*p < 0x20)
      fprintf(f, "\\u%04x", *p);
    else
      fputc(*p, f);
  }
  fputc('"', f);
}

static const char *verdict_word(int v) {
  return v < 0 ? "-" : ns_verdict_names[v];
}

/* The summary table (text or Markdown) of the audited layers, worst first. */
static char *plan_table(const plan_layer *ls, size_t n, const char *capture, const char *planf,
                        int md) {
  static const char *const heads[NS_AUDIT_NCHECKS] = {"axes",  "nzv", "prec", "bdep",
                                                      "bsize", "gap", "outl"};
  size_t cap = 4096 + n * 512, w = 0;
  char *s = malloc(cap);
  if (!s) return NULL;
  size_t nw = 0, ne = 0, tw = 6;
  for (size_t i = 0; i < n; i++) {
    nw += ls[i].nwarn > 0;
    ne += ls[i].err[0] != 0;
    size_t l = strlen(ls[i].row->tensor);
    if (l > tw) tw = l < 40 ? l : 40;
  }
#define TB(...)                                                                                    \
  do {                                                                                             \
    if (w < cap) w += (size_t)snprintf(s + w, cap - w, __VA_ARGS__);                               \
  } while (0)
  TB("%s%s, plan %s: %zu tensors, %zu with warnings%s%.0zu%s (worst first)\n\n", md ? "" : "",
     capture, planf, n, nw, ne ? ", " : "", ne, ne ? " not audited" : "");
  if (md) {
    TB("| tensor | kind | shape | warnings |");
    for (int k = 0; k < NS_AUDIT_NCHECKS; k++) TB(" %s |", ns_audit_check_names[k]);
    TB("\n|---|---|---|---|");
    for (int k = 0; k < NS_AUDIT_NCHECKS; k++) TB("---|");
    TB("\n");
  } else {
    TB("%-*s  %-8s %-18s %4s", (int)tw, "tensor", "kind", "shape", "warn");
    for (int k = 0; k < NS_AUDIT_NCHECKS; k++) TB(" %-5s", heads[k]);
    TB("\n");
  }
  for (size_t i = 0; i < n; i++) {
    const plan_layer *l = &ls[i];
    const char *kind = ns_kind_name(l->row->o.kind);
    if (md) {
      TB("| %s | %s | %s | %s |", l->row->tensor, kind, l->err[0] ? "-" : l->shape,
         l->err[0] ? "not audited" : "");
      if (!l->err[0]) {
        w -= 2;
        TB("%d |", l->nwarn);
      }
      for (int k = 0; k < NS_AUDIT_NCHECKS; k++) TB(" %s |", verdict_word(l->verdict[k]));
      TB("\n");
    } else {
      TB("%-*.*s  %-8s %-18s ", (int)tw, (int)tw, l->row->tensor, kind, l->err[0] ? "-" : l->shape);
      if (l->err[0]) {
        TB("error: %s\n", l->err);
        continue;
      }
      TB("%4d", l->nwarn);
      for (int k = 0; k < NS_AUDIT_NCHECKS; k++) TB(" %-5s", verdict_word(l->verdict[k]));
      TB("\n");
    }
  }
  if (md)
    for (size_t i = 0; i < n; i++)
      if (ls[i].err[0]) TB("\n%s (line %d): %s\n", ls[i].row->tensor, ls[i].row->line, ls[i].err);
#undef TB
  return s;
}

/* `normscope audit CAPTURE --plan [PLAN.tsv]`: 0 when every tensor was audited, 1 when one
 * could not be (the others still are), 2 on a plan that does not parse. */
static int run_plan(const char *capture, const char *planf, const ns_audit_opts *base,
                    ns_audit_form form, const char *report, int ascii) {
  char err[NS_ERRLEN] = "";
  ns_st_index ix;
  if (ns_file_tensors(capture, &ix, err) != 0) {
    fprintf(stderr, PROG ": %s: %s\n", capture, err);
    return 1;
  }
  if (!planf) { /* a draft to edit */
    char *d = audit_plan_draft(&ix, capture);
    ns_st_free(&ix);
    if (!d) {
      fprintf(stderr, PROG ": audit: out of memory\n");
      return 1;
    }
    fputs(d, stdout);
    free(d);
    return 0;
  }
  ns_st_free(&ix);
  audit_plan p;
  if (audit_plan_read(planf, &p, err) != 0) return usage(planf, err);
  plan_layer *ls = calloc(p.n, sizeof *ls);
  if (!ls) {
    audit_plan_free(&p);
    fprintf(stderr, PROG ": audit: out of memory\n");
    return 1;
  }
  bar b = {wall(), 0, -1, "", isatty(2)};
  for (size_t i = 0; i < p.n; i++) {
    plan_bar pb = {&b, i, p.n, p.row[i].tensor};
    plan_one(capture, &p.row[i], base, form, report != NULL, ascii, &pb, &ls[i]);
  }
  bar_end(&b);
  qsort(ls, p.n, sizeof *ls, plan_worse);
  int status = 0;
  for (size_t i = 0; i < p.n; i++)
    if (ls[i].err[0]) {
      fprintf(stderr, PROG ": audit: %s: %s (line %d of %s): %s\n", capture, ls[i].row->tensor,
              ls[i].row->line, planf, ls[i].err);
      status = 1;
    }
  if (form == NS_AUDIT_TSV) {
    for (size_t i = 0; i < p.n; i++)
      if (ls[i].form) fputs(ls[i].form, stdout);
  } else if (form == NS_AUDIT_JSON) {
    fputs("{\"file\":", stdout);
    json_string(stdout, capture);
    fputs(",\"plan\":", stdout);
    json_string(stdout, planf);
    fputs(",\"layers\":[", stdout);
    int first = 1;
    for (size_t i = 0; i < p.n; i++) {
      if (!ls[i].form) continue;
      size_t n = strlen(ls[i].form);
      while (n && ls[i].form[n - 1] == '\n') n--;
      printf("%s%.*s", first ? "" : ",", (int)n, ls[i].form);
      first = 0;
    }
    fputs("],\"errors\":[", stdout);
    first = 1;
    for (size_t i = 0; i < p.n; i++) {
      if (!ls[i].err[0]) continue;
      fputs(first ? "{\"tensor\":" : ",{\"tensor\":", stdout);
      json_string(stdout, ls[i].row->tensor);
      printf(",\"line\":%d,\"error\":", ls[i].row->line);
      json_string(stdout, ls[i].err);
      fputs("}", stdout);
      first = 0;
    }
    fputs("]}\n", stdout);
  } else {
    char *t = plan_table(ls, p.n, capture, planf, 0);
    if (t) fputs(t, stdout);
    free(t);
    for (size_t i = 0; i < p.n; i++)
      if (ls[i].warns) printf("\n%s:\n%s", ls[i].row->tensor, ls[i].warns);
  }
  if (report) {
    char *t = plan_table(ls, p.n, capture, planf, 1);
    size_t cap = (t ? strlen(t) : 0) + 256, w = 0;
    for (size_t i = 0; i < p.n; i++) cap += (ls[i].md ? strlen(ls[i].md) * 2 : 0) + 256;
    char *md = malloc(cap);
    if (md && t) {
      w += (size_t)snprintf(md + w, cap - w, "# normscope audit of a capture\n\n%s", t);
      for (size_t i = 0; i < p.n; i++) {
        if (!ls[i].md) continue;
        /* the tensor's report one level down: its title becomes the tensor's name */
        const char *body = strstr(ls[i].md, "\n\n");
        w += (size_t)snprintf(md + w, cap - w, "\n## %s\n", ls[i].row->tensor);
        for (const char *q = body ? body : ""; *q && w + 2 < cap;) {
          const char *e = strchr(q, '\n');
          size_t len = e ? (size_t)(e - q) + 1 : strlen(q);
          if (strncmp(q, "## ", 3) == 0) md[w++] = '#';
          if (w + len >= cap) break;
          memcpy(md + w, q, len);
          w += len;
          q += len;
        }
        md[w] = 0;
      }
    }
    if (!md || !t || ns_file_write_atomic(report, md, strlen(md), err) != 0) {
      fprintf(stderr, PROG ": %s: %s\n", report, md && t ? err : "out of memory");
      status = 1;
    }
    free(md);
    free(t);
  }
  for (size_t i = 0; i < p.n; i++) {
    free(ls[i].warns);
    free(ls[i].form);
    free(ls[i].md);
  }
  free(ls);
  audit_plan_free(&p);
  return status;
}

/* ---- the command ------------------------------------------------------------------- */

/* The options: flags, and options with a value (--opt VALUE or --opt=VALUE). */
enum {
  OPT_HELP,
  OPT_TSV,
  OPT_JSON,
  OPT_ASCII,
  OPT_BF16,
  OPT_KIND,
  OPT_AXES,
  OPT_GROUPS,
  OPT_EPS,
  OPT_LAYOUT,
  OPT_RUNNING,
  OPT_TENSOR,
  OPT_REPORT,
  OPT_CHUNK,
  OPT_PLAN
};
static const struct {
  const char *name;
  int id;
  int value; /* 1: takes a value; 2: takes one when the next argument is not an option or a
               tensor file (--plan PLAN.tsv, or --plan alone) */
} options[] = {
    {"--help", OPT_HELP, 0},     {"-h", OPT_HELP, 0},         {"--tsv", OPT_TSV, 0},
    {"--json", OPT_JSON, 0},     {"--ascii", OPT_ASCII, 0},   {"--bf16", OPT_BF16, 0},
    {"--kind", OPT_KIND, 1},     {"--axes", OPT_AXES, 1},     {"--groups", OPT_GROUPS, 1},
    {"--eps", OPT_EPS, 1},       {"--layout", OPT_LAYOUT, 1}, {"--running", OPT_RUNNING, 1},
    {"--tensor", OPT_TENSOR, 1}, {"--report", OPT_REPORT, 1}, {"--chunk", OPT_CHUNK, 1},
    {"--plan", OPT_PLAN, 2}};

/* The option named by the first len characters of a, or -1 (*value: it takes one). */
static int find_option(const char *a, size_t len, int *value) {
  for (size_t i = 0; i < sizeof options / sizeof options[0]; i++)
    if (strlen(options[i].name) == len && strncmp(a, options[i].name, len) == 0) {
      *value = options[i].value;
      return options[i].id;
    }
  return -1;
}

/* Threads for the pass: NS_THREADS (1 to 64) when set, else every core. */
static int audit_threads(void) {
  const char *v = getenv("NS_THREADS");
  if (v && *v) {
    char *end;
    long t = strtol(v, &end, 10);
    if (*end == 0 && t >= 1 && t <= 64) return (int)t;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

/* The audit allocates and frees buffers of a few megabytes over and over (the precision
 * check's normalizations of its slice, the chunks' records): main() keeps freed buffers for
 * reuse (ns_mem_keep_freed; without it page faults were half the audit's processor time),
 * and here one arena, so the threads' buffers are reused too. */
static void audit_malloc_keep(void) {
#if defined(__GLIBC__)
  mallopt(M_ARENA_MAX, 1);
#if defined(MADV_HUGEPAGE)
  /* and the heap in huge pages where the system gives them on request (madvise): one fault
     per 2 MiB instead of 512 */
  mallopt(M_TOP_PAD, 128 << 20);
  void *p = malloc(1 << 20); /* grows the heap by the pad */
  uintptr_t lo = ((uintptr_t)p + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1);
  uintptr_t hi = (uintptr_t)sbrk(0) & ~(uintptr_t)((2u << 20) - 1);
  if (p && hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
  free(p);
#endif
#endif
}

/* What the command line asked for. */
typedef struct {
  ns_audit_opts o;
  const char *file, *tensor, *running, *report, *plan_file;
  int tsv, json, ascii, plan, specs, help;
  unsigned flags;
} audit_args;

/* The value of option a (argv[*i]) into *v: after '=', or the next argument (an optional
 * value, takes 2, only when the next argument is not an option or a file). 0, or usage's
 * status. */
static int option_value(int argc, char **argv, int *i, size_t len, int takes, const char **v) {
  const char *a = argv[*i];
  *v = NULL;
  if (takes == 2) {
    if (a[len] == '=')
      *v = a + len + 1;
    else if (*i + 1 < argc && argv[*i + 1][0] != '-' &&
             ns_file_kind_of(argv[*i + 1]) == NS_FILE_UNKNOWN)
      *v = argv[++*i];
  } else if (takes) {
    if (a[len] == '=')
      *v = a + len + 1;
    else if (*i + 1 < argc)
      *v = argv[++*i];
    else
      return usage(a, "this option needs a value");
  } else if (a[len] == '=') {
    return usage(a, "this option takes no value");
  }
  return 0;
}

/* Option id with value v into g. 0, or usage's status. */
static int apply_option(audit_args *g, int id, const char *v) {
  char *end;
  ns_audit_opts *o = &g->o;
  g->specs |= id == OPT_KIND || id == OPT_AXES || id == OPT_GROUPS || id == OPT_EPS ||
              id == OPT_LAYOUT || id == OPT_RUNNING || id == OPT_TENSOR || id == OPT_BF16;
  switch (id) {
  case OPT_HELP:
    g->help = 1;
    break;
  case OPT_TSV:
    g->tsv = 1;
    break;
  case OPT_JSON:
    g->json = 1;
    break;
  case OPT_ASCII:
    g->ascii = 1;
    break;
  case OPT_BF16:
    g->flags |= NS_FILE_U2_BF16;
    break;
  case OPT_KIND: {
    ns_kind k;
    if (ns_kind_parse(v, &k) != 0) return usage(v, "--kind must be one of" NS_KIND_WORDS);
    o->kind = k;
    break;
  }
  case OPT_AXES: {
    long m = audit_parse_axes(v);
    if (m < 0) return usage(v, "--axes must be distinct axes 1 to 4, e.g. 1,3,4");
    o->axes = (unsigned)m;
    break;
  }
  case OPT_GROUPS: {
    long n = strtol(v, &end, 10);
    if (*v == 0 || *end || n < 1 || n > (1L << 30))
      return usage(v, "--groups must be a whole number >= 1");
    o->groups = (int)n;
    break;
  }
  case OPT_EPS: {
    double e = strtod(v, &end);
    if (*v == 0 || *end || !(e >= 0) || !isfinite(e)) return usage(v, "--eps " NS_EPS_RULE);
    o->eps = e;
    break;
  }
  case OPT_LAYOUT: {
    int l = -1;
    for (int k = 0; ns_layout_names[k]; k++)
      if (strcasecmp(v, ns_layout_names[k]) == 0) l = k;
    if (l < 0) return usage(v, "--layout must be nchw, nhwc, ncl, btd or bd");
    o->layout = l;
    break;
  }
  case OPT_RUNNING:
    g->running = v;
    break;
  case OPT_TENSOR:
    g->tensor = v;
    break;
  case OPT_REPORT:
    if (!ends_with(v, ".md")) return usage(v, "--report writes a Markdown file: FILE.md");
    g->report = v;
    break;
  case OPT_PLAN:
    g->plan = 1;
    g->plan_file = v;
    break;
  case OPT_CHUNK: { /* elements per chunk (tests use small chunks to exercise the merges) */
    long c = strtol(v, &end, 10);
    if (*v == 0 || *end || c < 1 || c > (1L << 28)) return usage(v, "--chunk must be >= 1");
    o->chunk = (size_t)c;
    break;
  }
  }
  return 0;
}

/* The arguments after argv[first] into g. 0, or usage's status. --help stops at once. */
static int parse_args(int argc, char **argv, int first, audit_args *g) {
  for (int i = first + 1; i < argc && !g->help; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || a[1] == 0) {
      if (g->file) return usage(a, "give one file to audit");
      g->file = a;
      continue;
    }
    size_t len = strcspn(a, "=");
    int takes = 0, id = find_option(a, len, &takes);
    if (id < 0) return usage(a, "unknown option");
    const char *v;
    int st = option_value(argc, argv, &i, len, takes, &v);
    if (!st) st = apply_option(g, id, v);
    if (st) return st;
  }
  return 0;
}

/* A .safetensors file with several tensors and none named, or a wrong name: lists the
 * loadable ones on stderr and returns 2 (none named) or 1 (a wrong name); 0 when the
 * choice is clear; 1 when the file does not read. */
static int pick_tensor(const char *file, const char *tensor) {
  char err[NS_ERRLEN] = "";
  ns_st_index ix;
  if (ns_file_tensors(file, &ix, err) != 0) {
    fprintf(stderr, PROG ": %s: %s\n", file, err);
    return 1;
  }
  size_t loadable = 0;
  for (size_t k = 0; k < ix.ntensors; k++) loadable += ns_st_loadable(&ix, k, NULL) == 0;
  int wrong = tensor && ns_st_find(&ix, tensor) < 0;
  int st = 0;
  if ((!tensor && loadable > 1) || wrong) {
    if (wrong)
      fprintf(stderr, PROG ": audit: %s: no tensor named \"%s\"; it holds:\n", file, tensor);
    else
      fprintf(stderr, PROG ": audit: %s holds %zu tensors; name one with --tensor NAME:\n", file,
              loadable);
    for (size_t k = 0; k < ix.ntensors; k++) {
      const ns_st_entry *e = &ix.t[k];
      if (ns_st_loadable(&ix, k, NULL) != 0) continue;
      fprintf(stderr, "  %s  %s [", e->name, ns_st_dtype_names[e->dtype]);
      for (int d = 0; d < e->rank; d++) fprintf(stderr, d ? ", %zu" : "%zu", e->shape[d]);
      fprintf(stderr, "]\n");
    }
    st = wrong ? 1 : 2;
  }
  ns_st_free(&ix);
  return st;
}

/* The report of r on stdout in g's format, and as Markdown into --report. 0 or 1. */
static int write_report(const audit_args *g, const ns_audit_report *r) {
  char err[NS_ERRLEN] = "";
  char *out = ns_audit_format(r,
                              g->tsv    ? NS_AUDIT_TSV
                              : g->json ? NS_AUDIT_JSON
                                        : NS_AUDIT_TEXT,
                              g->file, g->ascii);
  if (!out) {
    fprintf(stderr, PROG ": audit: out of memory\n");
    return 1;
  }
  fputs(out, stdout);
  free(out);
  if (!g->report) return 0;
  int status = 0;
  char *md = ns_audit_format(r, NS_AUDIT_MARKDOWN, g->file, 1);
  if (!md || ns_file_write_atomic(g->report, md, strlen(md), err) != 0) {
    fprintf(stderr, PROG ": %s: %s\n", g->report, md ? err : "out of memory");
    status = 1;
  }
  free(md);
  return status;
}

/* Audits the one tensor g names, with its running statistics, and writes the report. */
static int audit_one(audit_args *g) {
  char err[NS_ERRLEN] = "";
  double *rmean = NULL, *rvar = NULL;
  int rc = 0;
  if (g->running) {
    size_t nrun = 0;
    rc = load_running(g->running, &rmean, &rvar, &nrun, &g->o.run_count);
    g->o.run_mean = rmean;
    g->o.run_var = rvar;
    g->o.nrun = nrun;
  }
  ns_file_map m;
  if (rc == 0 && ns_file_map_open(&m, g->file, g->tensor, g->flags, err) != 0) {
    fprintf(stderr, PROG ": %s: %s\n", g->file, err);
    rc = 1;
  } else if (rc == 0) {
    /* what the open skipped (a CSV header line), in the words the explorer's file open uses */
    if (m.note[0]) fprintf(stderr, PROG ": %s: %s\n", g->file, m.note);
    if (ns_audit_check_opts(&g->o, m.rank, m.shape, err) != 0) {
      ns_file_map_close(&m);
      rc = usage(g->file, err);
    } else {
      bar b = {wall(), 0, -1, "", isatty(2)};
      if (b.on) {
        g->o.progress = bar_update;
        g->o.phase = bar_phase;
        g->o.progress_ctx = &b;
      }
      ns_audit_report r;
      rc = ns_audit_run(&m, &g->o, &r, err);
      bar_end(&b);
      ns_file_map_close(&m);
      if (rc != 0) {
        fprintf(stderr, PROG ": %s: %s\n", g->file, err);
        rc = 1;
      } else {
        rc = write_report(g, &r);
        ns_audit_free(&r);
      }
    }
  }
  free(rmean);
  free(rvar);
  return rc;
}

int cmd_audit(int argc, char **argv, int first) {
  audit_malloc_keep();
  ns_text_guard(&stdout); /* the report names the file's tensors: sanitized (textout.h) */
  audit_args g;
  memset(&g, 0, sizeof g);
  ns_audit_opts_init(&g.o);
  g.o.threads = audit_threads();
  int st = parse_args(argc, argv, first, &g);
  if (st) return st;
  if (g.help) {
    fputs(cmd_audit_help, stdout);
    return 0;
  }
  if (!g.file) return usage(NULL, "missing FILE (a .npy, .csv or .safetensors tensor)");
  if (g.tsv && g.json) return usage("--tsv", "give --tsv or --json, not both");
  if (g.plan) {
    if (g.specs)
      return usage("--plan", "the plan gives each tensor's kind, axes, layout, groups, eps and "
                             "running statistics: not the options");
    if (ns_file_kind_of(g.file) != NS_FILE_SAFETENSORS)
      return usage(g.file, "--plan audits the tensors of a .safetensors capture");
    return run_plan(g.file, g.plan_file, &g.o,
                    g.tsv    ? NS_AUDIT_TSV
                    : g.json ? NS_AUDIT_JSON
                             : NS_AUDIT_TEXT,
                    g.report, g.ascii);
  }
  if (g.o.kind != NS_KIND_GROUP && g.o.groups != 1)
    return usage("--groups", "only for --kind group");
  ns_file_kind fk = ns_file_kind_of(g.file);
  if (fk == NS_FILE_UNKNOWN) return usage(g.file, ns_file_unknown_why(g.file));
  if (g.tensor && fk != NS_FILE_SAFETENSORS)
    return usage("--tensor", "only .safetensors files hold named tensors");
  if (fk == NS_FILE_SAFETENSORS && (st = pick_tensor(g.file, g.tensor)) != 0) return st;
  return audit_one(&g);
}
