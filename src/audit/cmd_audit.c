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

#include "audit/cmd_audit.h"
#include "core/normalize.h"
#include "audit/audit.h"
#include "explore/file.h"

#define PROG "normscope"

const char cmd_audit_help[] =
    "Usage: " PROG " audit FILE [--kind K] [--axes A] [--groups G] [--eps E]\n"
    "                [--layout nchw|nhwc|ncl|btd|bd] [--running MEAN,VAR] [--tensor NAME]\n"
    "                [--bf16] [--ascii] [--tsv | --json] [--report FILE.md]\n"
    "Audit the normalization of an activation tensor read from FILE (.npy, .csv or\n"
    ".safetensors), of any size: the file is mapped and streamed in chunks, once, on every\n"
    "core (NS_THREADS=N sets how many). Memory stays under 256 MB whatever the file's size\n"
    "(the statistics of a window of the file, one chunk per thread, a slice of at most\n"
    "2^18 elements for precision); NS_MAX_ELEMENTS caps what is held, not the file.\n"
    "\n"
    "  --kind K         layer (default), rms, batch, instance or group\n"
    "  --axes A         1-based reduction axes, e.g. 1,3,4 (default: the kind's, or the\n"
    "                   layout's)\n"
    "  --groups G       channel groups of group norm\n"
    "  --eps E          epsilon inside the square root (default 1e-5)\n"
    "  --layout L       how the axes are meant: nchw, nhwc (rank 4), ncl, btd (rank 3), bd\n"
    "  --running M,V    running statistics of a batch norm (or of an instance norm that\n"
    "                   tracks them): two .npy files, or FILE.safetensors:MEAN_NAME,VAR_NAME,\n"
    "                   or FILE.safetensors:PREFIX (PREFIX.running_mean and .running_var)\n"
    "  --tensor NAME    the tensor of a .safetensors file (several: listed when not given)\n"
    "  --bf16           a .npy uint16 array holds bf16 bit patterns\n"
    "  --ascii          figures in ASCII only\n"
    "  --tsv            one line per check: CHECK<TAB>ok|warn|yes|no|n/a<TAB>VALUE<TAB>DETAIL\n"
    "  --json           one JSON object\n"
    "  --report FILE.md also write a Markdown report with the figures\n"
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
    "statistics cannot be read, 2 on bad usage.\n";

static int usage(const char *what, const char *why) {
  if (what)
    fprintf(stderr, PROG ": audit: %s: %s\n", what, why);
  else
    fprintf(stderr, PROG ": audit: %s\n", why);
  fprintf(stderr, "Try '" PROG " audit --help' for more information.\n");
  return 2;
}

/* "1,3,4" or "{1, 3, 4}" -> a 0-based bit mask; -1 if malformed. */
static long parse_axes(const char *s) {
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
static int load_running(const char *spec, double **mean, double **var, size_t *n) {
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
  char cells[31];
  int full = (int)(done * 30);
  for (int i = 0; i < 30; i++) cells[i] = i < full ? '#' : '.';
  cells[30] = 0;
  double eta = done > 0 ? t * (1 - done) / done : 0;
  fprintf(stderr, "\r" PROG " audit [%s] %3d%% %4.0f s left  %-44.44s", cells, pct, eta, b->phase);
  fflush(stderr);
}

static void bar_end(bar *b) {
  if (b->shown) fprintf(stderr, "\r%*s\r", 100, "");
  fflush(stderr);
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
  OPT_CHUNK
};
static const struct {
  const char *name;
  int id;
  int value; /* takes a value */
} options[] = {
    {"--help", OPT_HELP, 0},     {"-h", OPT_HELP, 0},         {"--tsv", OPT_TSV, 0},
    {"--json", OPT_JSON, 0},     {"--ascii", OPT_ASCII, 0},   {"--bf16", OPT_BF16, 0},
    {"--kind", OPT_KIND, 1},     {"--axes", OPT_AXES, 1},     {"--groups", OPT_GROUPS, 1},
    {"--eps", OPT_EPS, 1},       {"--layout", OPT_LAYOUT, 1}, {"--running", OPT_RUNNING, 1},
    {"--tensor", OPT_TENSOR, 1}, {"--report", OPT_REPORT, 1}, {"--chunk", OPT_CHUNK, 1}};

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

int cmd_audit(int argc, char **argv, int first) {
  ns_audit_opts o;
  ns_audit_opts_init(&o);
  o.threads = audit_threads();
  const char *file = NULL, *tensor = NULL, *running = NULL, *report = NULL;
  int tsv = 0, json = 0, ascii = 0;
  unsigned flags = 0;
  for (int i = first + 1; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || a[1] == 0) {
      if (file) return usage(a, "give one file to audit");
      file = a;
      continue;
    }
    size_t len = strcspn(a, "=");
    int takes = 0, id = find_option(a, len, &takes);
    if (id < 0) return usage(a, "unknown option");
    const char *v = NULL;
    if (takes) {
      if (a[len] == '=')
        v = a + len + 1;
      else if (i + 1 < argc)
        v = argv[++i];
      else
        return usage(a, "this option needs a value");
    } else if (a[len] == '=') {
      return usage(a, "this option takes no value");
    }
    char *end;
    switch (id) {
    case OPT_HELP:
      fputs(cmd_audit_help, stdout);
      return 0;
    case OPT_TSV:
      tsv = 1;
      break;
    case OPT_JSON:
      json = 1;
      break;
    case OPT_ASCII:
      ascii = 1;
      break;
    case OPT_BF16:
      flags |= NS_FILE_U2_BF16;
      break;
    case OPT_KIND: {
      ns_kind k;
      if (ns_kind_parse(v, &k) != 0)
        return usage(v, "--kind must be layer, rms, batch, instance or group");
      o.kind = k;
      break;
    }
    case OPT_AXES: {
      long m = parse_axes(v);
      if (m < 0) return usage(v, "--axes must be distinct axes 1 to 4, e.g. 1,3,4");
      o.axes = (unsigned)m;
      break;
    }
    case OPT_GROUPS: {
      long g = strtol(v, &end, 10);
      if (*v == 0 || *end || g < 1 || g > (1L << 30))
        return usage(v, "--groups must be a whole number >= 1");
      o.groups = (int)g;
      break;
    }
    case OPT_EPS: {
      double e = strtod(v, &end);
      if (*v == 0 || *end || !(e >= 0) || !isfinite(e)) return usage(v, "--eps " NS_EPS_RULE);
      o.eps = e;
      break;
    }
    case OPT_LAYOUT: {
      int l = -1;
      for (int k = 0; ns_layout_names[k]; k++)
        if (strcasecmp(v, ns_layout_names[k]) == 0) l = k;
      if (l < 0) return usage(v, "--layout must be nchw, nhwc, ncl, btd or bd");
      o.layout = l;
      break;
    }
    case OPT_RUNNING:
      running = v;
      break;
    case OPT_TENSOR:
      tensor = v;
      break;
    case OPT_REPORT:
      if (!ends_with(v, ".md")) return usage(v, "--report writes a Markdown file: FILE.md");
      report = v;
      break;
    case OPT_CHUNK: { /* elements per chunk (tests use small chunks to exercise the merges) */
      long c = strtol(v, &end, 10);
      if (*v == 0 || *end || c < 1 || c > (1L << 28)) return usage(v, "--chunk must be >= 1");
      o.chunk = (size_t)c;
      break;
    }
    }
  }
  if (!file) return usage(NULL, "missing FILE (a .npy, .csv or .safetensors tensor)");
  if (tsv && json) return usage("--tsv", "give --tsv or --json, not both");
  if (o.kind != NS_KIND_GROUP && o.groups != 1) return usage("--groups", "only for --kind group");
  ns_file_kind fk = ns_file_kind_of(file);
  if (fk == NS_FILE_UNKNOWN) return usage(file, "not a .npy, .csv or .safetensors file");
  if (tensor && fk != NS_FILE_SAFETENSORS)
    return usage("--tensor", "only .safetensors files hold named tensors");
  char err[NS_ERRLEN] = "";
  if (fk == NS_FILE_SAFETENSORS) { /* several tensors and no name, or a wrong name: list */
    ns_st_index ix;
    if (ns_file_tensors(file, &ix, err) != 0) {
      fprintf(stderr, PROG ": %s: %s\n", file, err);
      return 1;
    }
    size_t loadable = 0;
    for (size_t k = 0; k < ix.ntensors; k++) loadable += ns_st_loadable(&ix, k, NULL) == 0;
    int wrong = tensor && ns_st_find(&ix, tensor) < 0;
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
      ns_st_free(&ix);
      return wrong ? 1 : 2;
    }
    ns_st_free(&ix);
  }
  double *rmean = NULL, *rvar = NULL;
  size_t nrun = 0;
  if (running) {
    int st = load_running(running, &rmean, &rvar, &nrun);
    if (st) {
      free(rmean);
      free(rvar);
      return st;
    }
    o.run_mean = rmean;
    o.run_var = rvar;
    o.nrun = nrun;
  }
  ns_file_map m;
  if (ns_file_map_open(&m, file, tensor, flags, err) != 0) {
    fprintf(stderr, PROG ": %s: %s\n", file, err);
    free(rmean);
    free(rvar);
    return 1;
  }
  if (ns_audit_check_opts(&o, m.rank, m.shape, err) != 0) {
    ns_file_map_close(&m);
    free(rmean);
    free(rvar);
    return usage(file, err);
  }
  bar b = {wall(), 0, -1, ""};
  if (isatty(2)) {
    o.progress = bar_update;
    o.phase = bar_phase;
    o.progress_ctx = &b;
  }
  ns_audit_report r;
  int rc = ns_audit_run(&m, &o, &r, err);
  bar_end(&b);
  ns_file_map_close(&m);
  free(rmean);
  free(rvar);
  if (rc != 0) {
    fprintf(stderr, PROG ": %s: %s\n", file, err);
    return 1;
  }
  int status = 0;
  char *out = ns_audit_format(&r,
                              tsv    ? NS_AUDIT_TSV
                              : json ? NS_AUDIT_JSON
                                     : NS_AUDIT_TEXT,
                              file, ascii);
  if (!out) {
    fprintf(stderr, PROG ": audit: out of memory\n");
    status = 1;
  } else {
    fputs(out, stdout);
    free(out);
  }
  if (report && status == 0) {
    char *md = ns_audit_format(&r, NS_AUDIT_MARKDOWN, file, 1);
    if (!md || ns_file_write_atomic(report, md, strlen(md), err) != 0) {
      fprintf(stderr, PROG ": %s: %s\n", report, md ? err : "out of memory");
      status = 1;
    }
    free(md);
  }
  ns_audit_free(&r);
  return status;
}
