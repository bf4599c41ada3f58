/* cls_net.c: the teacher's listening socket and its followers, a follower's connection. */
#include "class/cls_net.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int set_flags(int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) return -1;
  return fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 ? -1 : 0;
}

static int make_addr(struct sockaddr_un *a, const char *path, char *err) {
  memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  if (!path[0] || strlen(path) >= sizeof a->sun_path) {
    snprintf(err, CLS_ERRLEN, "%.80s: a socket path must have 1 to %zu bytes", path,
             sizeof a->sun_path - 1);
    return -1;
  }
  memcpy(a->sun_path, path, strlen(path));
  return 0;
}

static void frame_unref(cls_frame *f) {
  if (f && --f->refs == 0) free(f);
}

/* ---- the teacher ---- */

int cls_server_open(cls_server *s, const char *path, char *err) {
  memset(s, 0, sizeof *s);
  s->lfd = s->ep = -1;
  struct sockaddr_un addr;
  if (make_addr(&addr, path, err) != 0) return -1;
  snprintf(s->path, sizeof s->path, "%s", path);
  struct stat st;
  if (lstat(path, &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      snprintf(err, CLS_ERRLEN, "%.100s: exists and is not a socket", path);
      return -1;
    }
    int probe = socket(AF_UNIX, SOCK_STREAM, 0);
    int live = probe >= 0 && connect(probe, (struct sockaddr *)&addr, sizeof addr) == 0;
    int e = errno;
    if (probe >= 0) close(probe);
    if (live) {
      snprintf(err, CLS_ERRLEN, "%.100s: a teacher broadcasts there already", path);
      return -1;
    }
    if (e != ECONNREFUSED && e != ENOENT) {
      snprintf(err, CLS_ERRLEN, "%.100s: %s", path, strerror(e));
      return -1;
    }
    unlink(path); /* a socket nobody listens on: left by a teacher who was killed */
  }
  s->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (s->lfd < 0 || set_flags(s->lfd) != 0 ||
      bind(s->lfd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(s->lfd, 64) != 0) {
    snprintf(err, CLS_ERRLEN, "%.100s: %s", path, strerror(errno));
    if (s->lfd >= 0) close(s->lfd);
    s->lfd = -1;
    return -1;
  }
  /* connecting needs write permission on the socket: the teacher and its group may, never
   * others; the folder it is in (its group, its mode) decides who reaches it */
  if (chmod(path, 0660) != 0 || lstat(path, &st) != 0) {
    snprintf(err, CLS_ERRLEN, "%.100s: %s", path, strerror(errno));
    cls_server_close(s);
    return -1;
  }
  s->dev = st.st_dev;
  s->ino = st.st_ino;
  s->ep = epoll_create1(EPOLL_CLOEXEC);
  struct epoll_event ev = {.events = EPOLLIN, .data = {.fd = s->lfd}};
  if (s->ep < 0 || epoll_ctl(s->ep, EPOLL_CTL_ADD, s->lfd, &ev) != 0) {
    snprintf(err, CLS_ERRLEN, "epoll: %s", strerror(errno));
    cls_server_close(s);
    return -1;
  }
  return 0;
}

int cls_server_fd(const cls_server *s) {
  return s->ep;
}

int cls_server_peers(const cls_server *s) {
  return s->npeers;
}

static void drop_peer(cls_server *s, int i) {
  cls_peer *p = &s->peers[i];
  epoll_ctl(s->ep, EPOLL_CTL_DEL, p->fd, NULL);
  close(p->fd);
  frame_unref(p->cur);
  frame_unref(p->next);
  s->peers[i] = s->peers[--s->npeers];
}

static void want_output(cls_server *s, cls_peer *p, int on) {
  if (p->waiting == on) return;
  struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | (on ? EPOLLOUT : 0u),
                           .data = {.fd = p->fd}};
  epoll_ctl(s->ep, EPOLL_CTL_MOD, p->fd, &ev);
  p->waiting = on;
}

/* Sends what peer i has waiting, as far as its socket takes it. 0, or -1: drop it. */
static int flush_peer(cls_server *s, int i) {
  cls_peer *p = &s->peers[i];
  while (p->cur) {
    while (p->off < p->cur->len) {
      ssize_t w =
          send(p->fd, p->cur->data + p->off, p->cur->len - p->off, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        want_output(s, p, 1);
        return 0;
      }
      if (w <= 0) return -1;
      p->off += (size_t)w;
    }
    frame_unref(p->cur);
    p->cur = p->next;
    p->next = NULL;
    p->off = 0;
    s->sent_frames++;
  }
  want_output(s, p, 0);
  return 0;
}

/* Gives peer i frame f: now, or after the frame it is in the middle of (replacing an older
 * one waiting there). */
static void offer(cls_server *s, int i, cls_frame *f) {
  cls_peer *p = &s->peers[i];
  f->refs++;
  if (!p->cur) {
    p->cur = f;
    p->off = 0;
  } else {
    if (p->next) s->dropped_frames++;
    frame_unref(p->next);
    p->next = f;
  }
}

static void accept_peers(cls_server *s) {
  for (;;) {
    int fd = accept(s->lfd, NULL, NULL);
    if (fd < 0) {
      if (errno == EINTR) continue;
      return; /* EAGAIN: no more; anything else: try again on the next wake */
    }
    if (s->npeers >= CLS_MAX_PEERS || set_flags(fd) != 0) {
      close(fd);
      continue;
    }
    if (s->npeers == s->cap) {
      int cap = s->cap ? 2 * s->cap : 16;
      cls_peer *np = realloc(s->peers, (size_t)cap * sizeof *np);
      if (!np) {
        close(fd);
        continue;
      }
      s->peers = np;
      s->cap = cap;
    }
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data = {.fd = fd}};
    if (epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev) != 0) {
      close(fd);
      continue;
    }
    int i = s->npeers++;
    memset(&s->peers[i], 0, sizeof s->peers[i]);
    s->peers[i].fd = fd;
    if (s->latest) offer(s, i, s->latest);
    if (flush_peer(s, i) != 0) drop_peer(s, i);
  }
}

static int peer_of(const cls_server *s, int fd) {
  for (int i = 0; i < s->npeers; i++)
    if (s->peers[i].fd == fd) return i;
  return -1;
}

void cls_server_service(cls_server *s) {
  if (s->ep < 0) return;
  struct epoll_event evs[64];
  for (int round = 0; round < 16; round++) {
    int n = epoll_wait(s->ep, evs, 64, 0);
    if (n <= 0) return;
    for (int k = 0; k < n; k++) {
      if (evs[k].data.fd == s->lfd) {
        accept_peers(s);
        continue;
      }
      int i = peer_of(s, evs[k].data.fd);
      if (i < 0) continue;
      /* followers never write: data, a hang-up or an error all end the follower */
      if (evs[k].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
        drop_peer(s, i);
        continue;
      }
      if ((evs[k].events & EPOLLOUT) && flush_peer(s, i) != 0) drop_peer(s, i);
    }
    if (n < 64) return;
  }
}

int cls_server_publish(cls_server *s, const void *data, size_t len, char *err) {
  cls_frame *f = malloc(sizeof *f + len);
  if (!f) {
    snprintf(err, CLS_ERRLEN, "out of memory");
    return -1;
  }
  f->refs = 1; /* s->latest's */
  f->len = len;
  memcpy(f->data, data, len);
  frame_unref(s->latest);
  s->latest = f;
  for (int i = 0; i < s->npeers; i++) offer(s, i, f);
  for (int i = s->npeers - 1; i >= 0; i--)
    if (flush_peer(s, i) != 0) drop_peer(s, i);
  return 0;
}

void cls_server_close(cls_server *s) {
  unsigned char bye[CLS_HEAD];
  cls_frame_bye(bye);
  while (s->npeers > 0) {
    cls_peer *p = &s->peers[s->npeers - 1];
    /* a follower in the middle of a frame cannot take a bye now: closing says the same */
    if (!p->cur || p->off == 0) (void)send(p->fd, bye, sizeof bye, MSG_NOSIGNAL | MSG_DONTWAIT);
    drop_peer(s, s->npeers - 1);
  }
  free(s->peers);
  s->peers = NULL;
  s->cap = 0;
  frame_unref(s->latest);
  s->latest = NULL;
  if (s->lfd >= 0) {
    struct stat st;
    /* remove the socket only if it is still ours (not one a new teacher made there) */
    if (lstat(s->path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino) unlink(s->path);
    close(s->lfd);
  }
  if (s->ep >= 0) close(s->ep);
  s->lfd = s->ep = -1;
}

/* ---- a follower ---- */

void cls_client_init(cls_client *c, const char *path) {
  memset(c, 0, sizeof *c);
  snprintf(c->path, sizeof c->path, "%s", path);
  c->fd = -1;
  cls_reader_init(&c->rd);
}

int cls_client_connect(cls_client *c, char *err) {
  cls_client_close(c);
  struct sockaddr_un addr;
  if (make_addr(&addr, c->path, err) != 0) return -1;
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || set_flags(fd) != 0) {
    int e = errno;
    if (fd >= 0) close(fd);
    snprintf(err, CLS_ERRLEN, "%.100s: %s", c->path,
             e == ECONNREFUSED ? "nobody broadcasts there (the teacher has left)" : strerror(e));
    return -1;
  }
  c->fd = fd; /* a follower only listens: anything it wrote would end it */
  return 0;
}

int cls_client_read(cls_client *c, char *err) {
  if (c->fd < 0) {
    snprintf(err, CLS_ERRLEN, "not connected");
    return -1;
  }
  unsigned char buf[65536];
  for (int round = 0; round < 64; round++) {
    ssize_t n = read(c->fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (n <= 0) { /* the frames read before the end stay in the reader */
      snprintf(err, CLS_ERRLEN, "%s", n == 0 ? "the teacher's broadcast ended" : strerror(errno));
      close(c->fd);
      c->fd = -1;
      return -1;
    }
    if (cls_reader_feed(&c->rd, buf, (size_t)n, err) != 0) {
      close(c->fd);
      c->fd = -1;
      return -1;
    }
  }
  return 0;
}

void cls_client_close(cls_client *c) {
  if (c->fd >= 0) close(c->fd);
  c->fd = -1;
  cls_reader_free(&c->rd);
  cls_reader_init(&c->rd);
}
