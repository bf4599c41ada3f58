/* cls_net.h: the classroom's Unix domain socket: the teacher's side (a listening socket
 * and its followers) and a follower's (one connection). Frames are cls_proto.h's.
 *
 * Only the teacher writes. It never blocks on a follower: every socket is non-blocking, a
 * follower keeps at most the frame it is being sent and the newest one after it (older
 * ones are dropped), and a follower that writes anything, or whose socket fails, is
 * dropped. Who may follow: the socket is made 0660 (the teacher and the socket's group may
 * connect, others never), and the folder it is in decides the rest: a private folder keeps
 * everyone else out, a setgid folder of the class's group lets the class in.
 *
 * The teacher's descriptor (cls_server_fd) is an epoll set of the listening socket and of
 * the followers that wait for output: it is readable when cls_server_service has work.
 */
#ifndef CLS_NET_H
#define CLS_NET_H

#include <stddef.h>
#include <sys/types.h>

#include "class/cls_proto.h"

/* A frame shared by the followers it goes to (reference counted). */
typedef struct cls_frame {
  int refs;
  size_t len;
  unsigned char data[];
} cls_frame;

typedef struct {
  int fd;
  cls_frame *cur; /* being sent, from off */
  size_t off;
  cls_frame *next; /* the newest frame after it, or NULL */
  int waiting;     /* registered for EPOLLOUT */
} cls_peer;

#define CLS_MAX_PEERS 1024

typedef struct {
  char path[108];
  int lfd, ep;
  dev_t dev;
  ino_t ino;
  cls_peer *peers;
  int npeers, cap;
  cls_frame *latest; /* what a new follower gets first */
  unsigned long long sent_frames, dropped_frames;
} cls_server;

/* Listens on path: a stale socket left there (nobody answers) is replaced; a live one, or
 * any other file, is an error. 0, or -1 with err. */
int cls_server_open(cls_server *s, const char *path, char *err);
/* Sends frame (data, len: copied) to every follower, and to those who come later. */
int cls_server_publish(cls_server *s, const void *data, size_t len, char *err);
/* Accepts followers, sends what waits, drops those gone. Never blocks. */
void cls_server_service(cls_server *s);
int cls_server_fd(const cls_server *s);
int cls_server_peers(const cls_server *s);
/* Sends a bye frame to each follower (best effort), closes and removes the socket. */
void cls_server_close(cls_server *s);

typedef struct {
  char path[108];
  int fd; /* -1: not connected */
  cls_reader rd;
} cls_client;

void cls_client_init(cls_client *c, const char *path);
/* Connects (again) to the teacher's socket. 0, or -1 with err. */
int cls_client_connect(cls_client *c, char *err);
/* Reads what has arrived without blocking into c->rd: 0, or -1 with err when the teacher is
 * gone or the stream broke (the descriptor is closed then; the whole frames read before stay
 * in c->rd). */
int cls_client_read(cls_client *c, char *err);
void cls_client_close(cls_client *c);

#endif
