/* file.h: reading and writing the files the explorer uses, in one place for the screen,
 * the Lua module and the command line: tensors (.npy, .csv), state files and atomic
 * writes (temporary file, fsync, rename), so a crash never leaves half a file.
 *
 * Messages name what was wrong but not the path (callers prefix it: "acts.npy: ...").
 *
 *   char err[NS_ERRLEN];
 *   ns_tensor *t = ns_file_load("acts.npy", err);     // NULL: err says why
 */
#ifndef NS_EXPLORE_FILE_H
#define NS_EXPLORE_FILE_H

#include <stddef.h>

#include "core/tensor.h"

typedef enum { NS_FILE_UNKNOWN = 0, NS_FILE_NPY, NS_FILE_CSV } ns_file_kind;

/* The kind of a path by its extension (case-insensitive .npy or .csv). */
ns_file_kind ns_file_kind_of(const char *path);
/* Reads a whole file of at most max bytes into a malloc'd, NUL-terminated buffer. NULL
 * with err (no such file, a directory, too large, read error). */
char *ns_file_read(const char *path, size_t max, size_t *len, char *err);
/* Loads a tensor: .npy keeps its dtype, .csv gives fp64 rank 2. NULL with err. */
ns_tensor *ns_file_load(const char *path, char *err);
/* Writes a tensor as .npy (its dtype) or .csv (rank 1 or 2), atomically. 0 or -1 with err. */
int ns_file_save(const char *path, const ns_tensor *t, char *err);
/* Writes len bytes to path through a temporary file in the same folder, fsync and
 * rename: the old file stays whole until the new one is. 0 or -1 with err. */
int ns_file_write_atomic(const char *path, const void *data, size_t len, char *err);
/* Creates a folder and its parents (mode 0700 for new ones). 0 or -1 with err. */
int ns_file_mkdirs(const char *dir, char *err);

#endif
