/* hold_lock FILE: takes the fcntl write lock on FILE (created 0600 if missing) as the REPL's
 * history writer does, says "locked" on stdout, and holds it until stdin reaches its end.
 * For test_history_lock.sh (the writer's bounded wait for a lock it cannot have). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: hold_lock FILE (held until stdin ends)\n");
    return 2;
  }
  int fd = open(argv[1], O_RDWR | O_CREAT, 0600);
  if (fd < 0) {
    fprintf(stderr, "hold_lock: %s: %s\n", argv[1], strerror(errno));
    return 1;
  }
  struct flock fl;
  memset(&fl, 0, sizeof fl);
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  while (fcntl(fd, F_SETLKW, &fl) != 0)
    if (errno != EINTR) {
      fprintf(stderr, "hold_lock: %s: %s\n", argv[1], strerror(errno));
      return 1;
    }
  printf("locked\n");
  fflush(stdout);
  char buf[256];
  while (read(0, buf, sizeof buf) > 0) continue;
  return 0;
}
