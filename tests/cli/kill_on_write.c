/* kill_on_write: SIGKILLs a process at a random moment shortly after it starts to write
 * a file, however it writes it: a new file beside it whose name starts with the file's
 * ("last.lua.tmpXXXXXX", an atomic writer's temporary file) or any change of the file
 * itself (inode, size, time: an in-place writer); such files there before are not
 * counted. Polls every 20 microseconds; after the
 * write is seen it waits a random 0 .. MAX_US microseconds (seeded by SEED) and kills.
 *
 *   kill_on_write PID FILE MAX_US SEED TIMEOUT_MS
 *
 * Prints what it saw and did. Exit status 0 after a kill upon a write, 3 when the
 * process ended first, 4 when no write was seen in time (then it kills anyway), 2 on
 * bad usage. For the SIGKILL tests of the screen's writes (test_kill_exit.sh). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void pause_us(long us) {
  struct timespec t = {us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

/* Names beside the file that were there before (left by earlier killed writers). */
enum { MAX_OLD = 256 };
static char old_names[MAX_OLD][256];
static int n_old;

static int is_old(const char *name) {
  for (int i = 0; i < n_old; i++)
    if (strcmp(old_names[i], name) == 0) return 1;
  return 0;
}

/* 1 when the folder holds an entry named base + "." + something that is not an old
 * one; with remember set, notes the present ones as old instead. */
static int temp_beside(const char *dir, const char *base, int remember) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  size_t n = strlen(base);
  int found = 0;
  struct dirent *e;
  while (!found && (e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, base, n) != 0 || e->d_name[n] != '.') continue;
    if (remember) {
      if (n_old < MAX_OLD) snprintf(old_names[n_old++], sizeof old_names[0], "%s", e->d_name);
    } else if (!is_old(e->d_name))
      found = 1;
  }
  closedir(d);
  return found;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: kill_on_write PID FILE MAX_US SEED TIMEOUT_MS\n");
    return 2;
  }
  char *end;
  long pid = strtol(argv[1], &end, 10);
  if (*end || pid <= 1) {
    fprintf(stderr, "kill_on_write: PID must be a process id above 1, got %s\n", argv[1]);
    return 2;
  }
  const char *file = argv[2];
  long max_us = strtol(argv[3], &end, 10);
  if (*end || max_us < 0) {
    fprintf(stderr, "kill_on_write: MAX_US must be a number >= 0, got %s\n", argv[3]);
    return 2;
  }
  unsigned seed = (unsigned)strtoul(argv[4], NULL, 10);
  long timeout_ms = strtol(argv[5], &end, 10);
  if (*end || timeout_ms <= 0) {
    fprintf(stderr, "kill_on_write: TIMEOUT_MS must be a number > 0, got %s\n", argv[5]);
    return 2;
  }
  char dir[4096];
  const char *slash = strrchr(file, '/');
  const char *base = slash ? slash + 1 : file;
  snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - file) : 1, slash ? file : ".");
  if (slash == file) snprintf(dir, sizeof dir, "/");

  temp_beside(dir, base, 1);
  struct stat before;
  int existed = stat(file, &before) == 0;
  double t0 = now_us();
  const char *how = NULL;
  while (now_us() - t0 < timeout_ms * 1e3) {
    if (kill((pid_t)pid, 0) != 0) {
      printf("the process ended before writing %s\n", base);
      return 3;
    }
    struct stat st;
    int exists = stat(file, &st) == 0;
    if (exists != existed ||
        (exists && (st.st_ino != before.st_ino || st.st_size != before.st_size ||
                    st.st_mtim.tv_sec != before.st_mtim.tv_sec ||
                    st.st_mtim.tv_nsec != before.st_mtim.tv_nsec)))
      how = "the file itself changed";
    else if (temp_beside(dir, base, 0))
      how = "a temporary file appeared beside it";
    if (how) break;
    pause_us(20);
  }
  if (!how) {
    kill((pid_t)pid, SIGKILL);
    printf("no write of %s seen in %ld ms; killed anyway\n", base, timeout_ms);
    return 4;
  }
  srand(seed);
  long wait = max_us ? (long)((double)rand() / ((double)RAND_MAX + 1) * (double)(max_us + 1)) : 0;
  pause_us(wait);
  kill((pid_t)pid, SIGKILL);
  printf("%s; killed %ld us later\n", how, wait);
  return 0;
}
