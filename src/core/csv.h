/* csv.h: tensors as CSV text of numbers, parsed from and written to memory buffers (the
 * core does no file I/O).
 *
 *   ns_tensor *t = ns_csv_parse(text, len, err);   // caller frees with ns_tensor_free
 *   char *s = ns_csv_serialize(t, err);            // free()
 */
#ifndef NS_CSV_H
#define NS_CSV_H

#include <stddef.h>

#include "core/tensor.h"

/* CSV: one row per line, numbers separated by commas (spaces/tabs around them allowed),
 * optional header line of non-numbers skipped, blank lines and '#' comments ignored.
 * All rows must have the same count; a single column or single row still gives rank 2.
 * Errors name the line and column. Result fp64. */
ns_tensor *ns_csv_parse(const char *text, size_t len, char *err);
/* ns_csv_parse that also says which header line it skipped: its number (0: none) into
 * *header_line and its text, cut to hcap - 1 bytes, into header (either may be NULL). */
ns_tensor *ns_csv_parse_header(const char *text, size_t len, size_t *header_line, char *header,
                               size_t hcap, char *err);
/* Rank 1 or 2 tensors; values with %.17g. Returns a malloc'd NUL-terminated string. */
char *ns_csv_serialize(const ns_tensor *t, char *err);

#endif
