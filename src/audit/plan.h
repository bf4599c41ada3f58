/* plan.h: the plan of a whole capture for `normscope audit CAPTURE --plan PLAN.tsv`
 * (cmd_audit.c runs it): which tensors of a .safetensors capture to audit, and how.
 *
 * A plan is a tab-separated text file, one tensor per line:
 *
 *   TENSOR  KIND  AXES  LAYOUT  GROUPS  EPS  RUNNING
 *
 * TENSOR names a tensor of the capture; KIND is layer, rms, batch, instance or group; AXES
 * are 1-based reduction axes such as 1,3,4; LAYOUT is nchw, nhwc, ncl, btd or bd; GROUPS
 * the channel groups of group norm; EPS the epsilon; RUNNING the running statistics in the
 * capture, as a PREFIX (PREFIX.running_mean and PREFIX.running_var) or MEAN_NAME,VAR_NAME.
 * "-" (or a missing trailing column) leaves a field at the audit's default. Blank lines and
 * lines starting with # are skipped, and so is a first line whose first field is "tensor".
 *
 * audit_plan_draft writes a plan for the user to edit from the capture's tensor names and
 * shapes: the rank 2 to 4 tensors that are not parameters, buffers or outputs by their
 * names (weight, bias, running_mean, running_var, num_batches_tracked, y, out, output), with
 * the kind their names suggest (bn/batchnorm, gn/groupnorm, in/instancenorm, rms, ln/
 * layernorm/norm) or else their rank does, and the running statistics found beside them.
 */
#ifndef NS_AUDIT_PLAN_H
#define NS_AUDIT_PLAN_H

#include <stddef.h>

#include "audit/audit.h"
#include "core/safetensors.h"

typedef struct {
  char tensor[256];
  ns_audit_opts o;   /* kind, axes, layout, groups, eps; the rest as ns_audit_opts_init */
  char running[512]; /* "" or a prefix or MEAN,VAR: tensors of the capture */
  int line;          /* its line in the plan file */
} audit_plan_row;

typedef struct {
  audit_plan_row *row;
  size_t n;
} audit_plan;

/* Reads a plan file: 0, or -1 with err naming the line and the field that is wrong. */
int audit_plan_read(const char *path, audit_plan *p, char *err);
void audit_plan_free(audit_plan *p);
/* A draft plan for the tensors of a capture (malloc'd text, NULL on no memory). */
char *audit_plan_draft(const ns_st_index *ix, const char *capture);

/* "1,3,4" or "{1, 3, 4}" -> a 0-based bit mask; -1 if malformed. */
long audit_parse_axes(const char *s);

#endif
