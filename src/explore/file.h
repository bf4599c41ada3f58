/* file.h: reading and writing the files the explorer uses, in one place for the screen,
 * the Lua module and the command line: tensors (.npy, .csv, .safetensors), state files
 * and atomic writes (temporary file, fsync, rename), so a crash never leaves half a file.
 * Files larger than memory are read through ns_file_map: the tensor's bytes are mapped a
 * window at a time and converted in chunks, so memory stays bounded.
 *
 * Messages name what was wrong but not the path (callers prefix it: "acts.npy: ...").
 *
 *   char err[NS_ERRLEN];
 *   ns_tensor *t = ns_file_load("acts.npy", err);     // NULL: err says why
 */
#ifndef NS_EXPLORE_FILE_H
#define NS_EXPLORE_FILE_H

#include <stddef.h>
#include <stdio.h>

#include "core/tensor.h"

#include "core/npy.h"
#include "core/safetensors.h"
#include "explore/state.h"

typedef enum { NS_FILE_UNKNOWN = 0, NS_FILE_NPY, NS_FILE_CSV, NS_FILE_SAFETENSORS } ns_file_kind;

/* The kind of a path by its extension (case-insensitive .npy, .csv or .safetensors). */
ns_file_kind ns_file_kind_of(const char *path);
/* Why a path of kind NS_FILE_UNKNOWN cannot be opened, for a usage message: "is a
 * directory", or that its name ends in none of the three. */
const char *ns_file_unknown_why(const char *path);
/* Every file the program reads goes through this one opener: it opens path without
 * blocking (a FIFO named as a lesson, a state file, a tensor file or the history would
 * otherwise wait for a writer forever; /dev/zero would be read forever) and refuses
 * anything but a regular file: "is a directory", "not a regular file". The descriptor
 * (blocking again), or -1 with err; ns_file_fopen_regular the same as a FILE ("rb"). */
int ns_file_open_regular(const char *path, char *err);
FILE *ns_file_fopen_regular(const char *path, char *err);
/* Reads a whole file of at most max bytes into a malloc'd, NUL-terminated buffer. NULL
 * with err (no such file, a directory, not a regular file, too large, read error). */
char *ns_file_read(const char *path, size_t max, size_t *len, char *err);
/* Loads a tensor: .npy keeps its dtype, .csv gives fp64 rank 2, .safetensors its only
 * loadable tensor (several: err lists them). NULL with err. */
ns_tensor *ns_file_load(const char *path, char *err);

/* Load flags: NS_FILE_U2_BF16 reads a .npy uint16 array as bf16 bit patterns. */
#define NS_FILE_U2_BF16 1u
/* ns_file_load with the tensor `name` of a .safetensors file (NULL: its only loadable
 * one; a wrong name: err lists the tensors there are) and flags. NULL with err. */
ns_tensor *ns_file_load_named(const char *path, const char *name, unsigned flags, char *err);
/* ns_file_load_named that also says what the load skipped, for the user: a CSV file's header
 * line ("its line 1, a,b,c, is a header of names: skipped"), else "" (note: NS_ERRLEN). */
ns_tensor *ns_file_load_note(const char *path, const char *name, unsigned flags, char *note,
                             char *err);
/* The header index of a .safetensors file, read without its data (safetensors.h);
 * ns_st_free it. 0, or -1 with err. */
int ns_file_tensors(const char *path, ns_st_index *ix, char *err);
/* "a (F32, [2, 3]), b (F64, [4])": the tensors of an index, cut to fit len. */
void ns_file_list_tensors(const ns_st_index *ix, char *buf, size_t len);

/* A tensor file opened for chunked reading. For .npy and .safetensors the data is mapped
 * from the file a window at a time (at most NS_FILE_MAP_WINDOW bytes mapped at once);
 * .csv files are parsed into memory (t). */
#define NS_FILE_MAP_WINDOW ((size_t)16 << 20)
typedef struct {
  int fd;
  unsigned long long file_size;
  ns_dtype dtype; /* the storage dtype the tensor would load as */
  int rank;
  size_t shape[NS_MAXRANK];
  size_t n;
  size_t elem_size;
  unsigned long long data_offset; /* file offset of element 0 */
  int npy;                        /* 1: elements decoded by ns_npy_value (info) */
  ns_npy_info info;
  ns_tensor *t;               /* in memory (CSV), else NULL */
  void *win;                  /* the mapped window */
  size_t win_len;             /* bytes mapped */
  unsigned long long win_off; /* file offset of win (page aligned) */
  char name[128];             /* the safetensors tensor's name, or "" */
  char note[NS_ERRLEN];       /* what the open skipped, as ns_file_load_note says it, or "" */
} ns_file_map;

/* Opens path (and the tensor `name` of a .safetensors file, as ns_file_load_named) for
 * chunked reading. 0, or -1 with err (m is then closed). */
int ns_file_map_open(ns_file_map *m, const char *path, const char *name, unsigned flags, char *err);
/* Elements first .. first+len-1 (flat, row-major) as doubles into out (exact). */
int ns_file_map_read(ns_file_map *m, size_t first, size_t len, double *out, char *err);
/* For readers that convert on several threads: the stored bytes of elements first ..
 * first+len-1, mapped at once (len * elem_size at most NS_FILE_MAP_SPAN bytes), or the
 * data of a tensor held in memory. The pointer is valid until the next call on m. NULL
 * with err. */
#define NS_FILE_MAP_SPAN ((size_t)16 << 20)
const void *ns_file_map_bytes(ns_file_map *m, size_t first, size_t len, char *err);
/* len elements at p (a pointer into what ns_file_map_bytes returned) as doubles into out,
 * exact, as ns_file_map_read converts them; reads only m's description, so any number of
 * threads may call it at once. */
void ns_file_map_decode(const ns_file_map *m, const void *p, size_t len, double *out);
/* Elements first .. first+len-1 as doubles into out through raw, a buffer of len * elem_size
 * bytes: read with pread (no mapping, no shared state: any number of threads at once), or
 * copied from the tensor in memory. 0, or -1 with err. */
int ns_file_map_pread(const ns_file_map *m, size_t first, size_t len, void *raw, double *out,
                      char *err);
/* The whole tensor in memory (NULL with err when it does not fit in NS_MAXELEMS or memory). */
ns_tensor *ns_file_map_tensor(ns_file_map *m, char *err);
void ns_file_map_close(ns_file_map *m);
/* Writes a tensor as .npy (its dtype) or .csv (rank 1 or 2), atomically. 0 or -1 with err. */
int ns_file_save(const char *path, const ns_tensor *t, char *err);
/* Writes len bytes to path through a temporary file in the same folder, fsync, rename,
 * and fsync of the folder (so the new name is on disk too): the old file stays whole
 * until the new one is. 0 or -1 with err (also when only the folder's fsync failed: the
 * file is then in place, but may not survive a crash). */
int ns_file_write_atomic(const char *path, const void *data, size_t len, char *err);
/* ns_file_write_atomic with the new file's permission bits (0644 above; 0600 for a
 * private file such as the REPL history), less the umask's (as open(2) would), set before
 * the rename. Same return value. */
int ns_file_write_atomic_mode(const char *path, const void *data, size_t len, unsigned mode,
                              char *err);
/* The state (ns_state_dump) written to path atomically with mode's permission bits. A
 * tensor of NS_DUMP_SPILL_MIN elements or more that no file holds (x after a cell edit of a
 * large file) goes beside it, as PATH.FIELD.HEX12.npy (PATH without its .lua, HEX12 from
 * its sha256), and the state names that file with its sha256: saving a 64 MB x value by
 * value took 15 s and wrote 362 MB of text. Such files of earlier saves that the new state
 * does not name are removed once it is in place. */
int ns_state_save(const ns_state *s, const char *path, unsigned mode, char *err);
/* The state as a recorded lesson's step carries it (normscope record to lesson_path): every
 * tensor of more than NS_DUMP_INLINE_MAX elements, a file's or not, is written beside the
 * lesson as BASE.FIELD.HEX12.npy (BASE the lesson's path without .lua) and named by that
 * file's name alone with its sha256, which a lesson's sandbox reads (lesson/sandbox.c); a
 * 64 MB x written value by value made a 350 MB lesson, and one named by its absolute path
 * could not be read in the sandbox. Returns the malloc'd dump, or NULL with err. */
char *ns_state_dump_lesson(const ns_state *s, const char *lesson_path, char *err);
/* The folder normscope keeps its state in: $XDG_STATE_HOME/normscope, else
 * ~/.local/state/normscope, into buf; NULL when neither variable is set. */
const char *ns_file_state_dir(char *buf, size_t len);
/* Creates a folder and its parents (mode 0700 for new ones). 0 or -1 with err. */
int ns_file_mkdirs(const char *dir, char *err);

#endif
