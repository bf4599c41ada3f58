/* test_fsync.c: ns_file_write_atomic syncs the file, renames it into place, and then syncs
 * the folder that holds it (without that, a crash right after the rename may lose the new
 * name); a failure of either sync is reported. Linked with -Wl,--wrap=fsync, so every
 * fsync of the statically linked libraries is seen here: what it was called on (a regular
 * file or a folder, and which folder), and, when asked, it fails with EIO. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "explore/file.h"
#include "tap.h"

int __real_fsync(int fd);
int __wrap_fsync(int fd);

static int files, folders;      /* fsyncs seen, by the kind of thing synced */
static ino_t folder_ino;        /* the folder synced last */
static int order_ok = 1;        /* no folder synced before a file */
static int fail_file, fail_dir; /* make the next fsync of that kind fail with EIO */

int __wrap_fsync(int fd) {
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    folders++;
    folder_ino = st.st_ino;
    if (files == 0) order_ok = 0;
    if (fail_dir) {
      fail_dir = 0;
      errno = EIO;
      return -1;
    }
  } else {
    files++;
    if (fail_file) {
      fail_file = 0;
      errno = EIO;
      return -1;
    }
  }
  return __real_fsync(fd);
}

static char *slurp(const char *path) {
  static char buf[256];
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

/* the number of entries of dir other than . and .. */
static int entries(const char *dir) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
  FILE *p = popen(cmd, "r");
  int n = -1;
  if (p) {
    if (fscanf(p, "%d", &n) != 1) n = -1;
    pclose(p);
  }
  return n;
}

int main(void) {
  char dir[] = "/tmp/nsfsync.XXXXXX", path[64], err[NS_ERRLEN];
  if (!mkdtemp(dir)) {
    printf("1..0 # SKIP cannot make a scratch folder\n");
    return 77;
  }
  snprintf(path, sizeof path, "%s/state.lua", dir);
  struct stat dst;
  stat(dir, &dst);

  int rc = ns_file_write_atomic(path, "one\n", 4, err);
  const char *got = slurp(path);
  tap_ok(rc == 0 && got && strcmp(got, "one\n") == 0, "a write puts the file in place");
  tap_ok(files == 1 && folders == 1 && order_ok,
         "the file is synced, then its folder (%d file, %d folder fsyncs)", files, folders);
  tap_ok(folder_ino == dst.st_ino, "the folder synced is the one that holds the file");

  fail_dir = 1;
  err[0] = '\0';
  rc = ns_file_write_atomic(path, "two\n", 4, err);
  got = slurp(path);
  tap_ok(rc == -1 && strstr(err, "folder") && strstr(err, strerror(EIO)),
         "a failed fsync of the folder is reported: %s", err);
  tap_ok(got && strcmp(got, "two\n") == 0, "... after the rename (the new file is in place)");

  fail_file = 1;
  err[0] = '\0';
  rc = ns_file_write_atomic(path, "three\n", 6, err);
  got = slurp(path);
  tap_ok(rc == -1 && strstr(err, strerror(EIO)), "a failed fsync of the file is reported: %s", err);
  tap_ok(got && strcmp(got, "two\n") == 0, "... and the previous file stays whole");
  tap_ok(entries(dir) == 1, "no temporary file is left beside it (%d entries)", entries(dir));

  /* a path without a folder part syncs the current folder */
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) && chdir(dir) == 0) {
    folders = 0;
    rc = ns_file_write_atomic("bare.txt", "x", 1, err);
    tap_ok(rc == 0 && folders == 1 && folder_ino == dst.st_ino,
           "a bare name: the current folder is synced");
    unlink("bare.txt");
    if (chdir(cwd) != 0) tap_diag("cannot go back to %s", cwd);
  }
  unlink(path);
  rmdir(dir);
  return tap_done();
}
