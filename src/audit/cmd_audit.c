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
#include "explore/textout.h"
#include "explore/file.h"

#define PROG "normscope"

const char cmd_audit_help[] =
    "Usage: " PROG " audit FILE [--kind K] [--axes A] [--groups G] [--eps E]\n"
    "                [--layout nchw|nhwc|ncl|btd|bd] [--running MEAN,VAR] [--tensor NAME]\n"
    "                [--bf16] [--ascii] [--tsv | --json] [--report FILE.md]\n"
    "Audit the normalization of an activation tensor read from FILE (.npy, .csv or\n"
    ".safetensors), of any size: the file is mapped and streamed in chunks, twice.\n"
    "\n"
    "  --kind K         layer (default), rms, batch, instance or group\n"
    "  --axes A         1-based reduction axes, e.g. 1,3,4 (default: the kind's, or the\n"
    "                   layout's)\n"
    "  --groups G       channel groups of group norm\n"
    "  --eps E          epsilon inside the square root (default 1e-5)\n"
    "  --layout L       how the axes are meant: nchw, nhwc (rank 4), ncl, btd (rank 3), bd\n"
    "  --running M,V    running statistics of a batch norm: two .npy files, or\n"
    "                   FILE.safetensors:MEAN_NAME,VAR_NAME, or FILE.safetensors:PREFIX\n"
    "                   (PREFIX.running_mean and PREFIX.running_var)\n"
    "  --tensor NAME    the tensor of a .safetensors file (several: listed when not given)\n"
    "  --bf16           a .npy uint16 array holds bf16 bit patterns\n"
    "  --ascii          figures in ASCII only\n"
    "  --tsv            one line per check: CHECK<TAB>ok|warn|yes|no<TAB>VALUE<TAB>DETAIL\n"
    "  --json           one JSON object\n"
    "  --report FILE.md also write a Markdown report with the figures\n"
    "\n"
    "Checks: axes (the reduction axes, the output's statistics along them and along the\n"
    "other layouts' axes, the layouts the shape allows and the one the statistics\n"
    "suggest), near_zero_variance (variance below 100 eps), precision (fp32, fp16, bf16\n"
    "against fp64 and the raw-moment cancellation risk), batch_dependence,\n"
    "batch_size_sensitivity, train_eval_gap (with --running) and outliers (|z| against\n"
    "sqrt(n-1), kurtosis). A progress bar goes to standard error when it is a terminal.\n"
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

typedef struct {
  double t0;
  int shown;
  int last;
} bar;

static double wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void bar_update(void *ctx, double done) {
  bar *b = ctx;
  double t = wall() - b->t0;
  if (t < 1.0) return; /* only runs longer than a second get a bar */
  int pct = (int)(done * 100);
  if (b->shown && pct == b->last) return;
  b->shown = 1;
  b->last = pct;
  char cells[41];
  int full = (int)(done * 40);
  for (int i = 0; i < 40; i++) cells[i] = i < full ? '#' : '.';
  cells[40] = 0;
  double eta = done > 0 ? t * (1 - done) / done : 0;
  fprintf(stderr, "\r" PROG " audit [%s] %3d%%  %.0f s left ", cells, pct, eta);
  fflush(stderr);
}

static void bar_end(bar *b) {
  if (b->shown) fprintf(stderr, "\r%*s\r", 78, "");
}

/* ---- the command ------------------------------------------------------------------- */

int cmd_audit(int argc, char **argv, int first) {
  ns_text_guard(&stdout); /* the report names the file's tensors: sanitized (textout.h) */
  ns_audit_opts o;
  ns_audit_opts_init(&o);
  const char *file = NULL, *tensor = NULL, *running = NULL, *report = NULL;
  int tsv = 0, json = 0, ascii = 0;
  unsigned flags = 0;
  for (int i = first + 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(cmd_audit_help, stdout);
      return 0;
    }
    if (a[0] != '-' || a[1] == 0) {
      if (file) return usage(a, "give one file to audit");
      file = a;
      continue;
    }
    if (strcmp(a, "--tsv") == 0) {
      tsv = 1;
      continue;
    }
    if (strcmp(a, "--json") == 0) {
      json = 1;
      continue;
    }
    if (strcmp(a, "--ascii") == 0) {
      ascii = 1;
      continue;
    }
    if (strcmp(a, "--bf16") == 0) {
      flags |= NS_FILE_U2_BF16;
      continue;
    }
    /* options with a value: --opt VALUE or --opt=VALUE */
    static const char *const valued[] = {"--kind",    "--axes",   "--groups", "--eps",   "--layout",
                                         "--running", "--tensor", "--report", "--chunk", NULL};
    size_t len = strcspn(a, "=");
    int which = -1;
    for (int k = 0; valued[k]; k++)
      if (strlen(valued[k]) == len && strncmp(a, valued[k], len) == 0) which = k;
    if (which < 0) return usage(a, "unknown option");
    const char *v;
    if (a[len] == '=')
      v = a + len + 1;
    else if (i + 1 < argc)
      v = argv[++i];
    else
      return usage(a, "this option needs a value");
    char *end;
    switch (which) {
    case 0: {
      ns_kind k;
      if (ns_kind_parse(v, &k) != 0)
        return usage(v, "--kind must be layer, rms, batch, instance or group");
      o.kind = k;
      break;
    }
    case 1: {
      long m = parse_axes(v);
      if (m < 0) return usage(v, "--axes must be distinct axes 1 to 4, e.g. 1,3,4");
      o.axes = (unsigned)m;
      break;
    }
    case 2: {
      long g = strtol(v, &end, 10);
      if (*v == 0 || *end || g < 1 || g > (1L << 30))
        return usage(v, "--groups must be a whole number >= 1");
      o.groups = (int)g;
      break;
    }
    case 3: {
      double e = strtod(v, &end);
      if (*v == 0 || *end || !(e >= 0) || !isfinite(e)) return usage(v, "--eps " NS_EPS_RULE);
      o.eps = e;
      break;
    }
    case 4: {
      int l = -1;
      for (int k = 0; ns_layout_names[k]; k++)
        if (strcasecmp(v, ns_layout_names[k]) == 0) l = k;
      if (l < 0) return usage(v, "--layout must be nchw, nhwc, ncl, btd or bd");
      o.layout = l;
      break;
    }
    case 5:
      running = v;
      break;
    case 6:
      tensor = v;
      break;
    case 7:
      if (!ends_with(v, ".md")) return usage(v, "--report writes a Markdown file: FILE.md");
      report = v;
      break;
    case 8: { /* elements per chunk (tests use small chunks to exercise the merges) */
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
  bar b = {wall(), 0, -1};
  if (isatty(2)) {
    o.progress = bar_update;
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
