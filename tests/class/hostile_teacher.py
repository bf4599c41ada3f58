#!/usr/bin/env python3
"""hostile_teacher.py SOCKET: a fake teacher for tests/class/test_hostile.sh.

A second implementation of the classroom's frame format (src/class/cls_proto.h), written
from the header's description: it listens on SOCKET, and for every line read on standard
input sends the follower the frame that line names (see FRAMES below). "accept" waits for
a (new) follower; "close" hangs up on it; "quit" ends.
"""
import socket
import struct
import sys

MAGIC = b"NSCL"
VERSION = 1
STATE, BYE = 1, 2


def frame(kind, payload, version=VERSION, magic=MAGIC, length=None, reserved=b"\0\0"):
    n = len(payload) if length is None else length
    return magic + bytes([version, kind]) + reserved + struct.pack(">I", n) + payload


def state(dump, header="seq=1\nfocus=settings\ncursor=0,0\n"):
    return frame(STATE, (header + "\n" + dump).encode())


def good(eps):
    return state("set{eps = %s}\n" % eps)


FRAMES = {
    # data that is not a state: each is refused, the follower keeps its state
    "loop": state("while true do end\n"),
    "os": state("os.exit(3)\n"),
    "io": state('io.open("/tmp/normscope-hostile", "w")\n'),
    "load": state('load("os.exit(4)")()\n'),
    "require": state('require("os")\n'),
    "mem": state('local s = ("x"):rep(1 << 31)\n'),
    # growth past the cap: 200 MiB is held, then 900 MiB more is asked for. Every byte
    # written costs a page fault, slow on a sanitizer build or a loaded machine, so the
    # script writes as little as reaching the cap allows (the deadline must not come first)
    "grow": state('local u = ("x"):rep(1 << 20) local t = {} '
                  't[1] = u:rep(200) t[2] = u:rep(900)\n'),
    "binary": state("\x1bLua\x54\x00 garbage\n"),
    "syntax": state("set{eps = }\n"),
    "field": state("set{nope = 1}\n"),
    "value": state("set{eps = -1}\n"),
    "file": state('set{x = {file = "/etc/passwd"}}\n'),
    "partial": state("set{eps = 0.125}\nerror('after the first set')\n"),
    "focus": state("set{eps = 0.125}\n", "seq=2\nfocus=nowhere\n"),
    "lesson": state("set{eps = 0.125}\n", "seq=2\nfocus=settings\nlesson=../../etc/x\nstep=1\nsteps=2\n"),
    "step": state("set{eps = 0.125}\n", "seq=2\nfocus=settings\nlesson=000-15.2-epsilon\nstep=9\nsteps=6\n"),
    "unknown": state("set{eps = 0.125}\n", "seq=2\nfocus=settings\nevil=1\n"),
    "twice": state("set{eps = 0.125}\n", "seq=2\nseq=3\nfocus=settings\n"),
    "nohead": frame(STATE, b"set{eps = 0.125}\n"),
    "note": state("set{eps = 0.125}\n", "seq=2\nfocus=settings\nlesson=000-15.2-epsilon\nstep=1\n"
                  "steps=6\npane=0,0,0,0,1\nnote=\x1b[2J\x1b]0;pwned\x07\n"),
    "nul": state("set{eps = 0.125}\0\n"),
    # framing errors: the stream cannot go on; the follower detaches and keeps its state
    "huge": frame(STATE, b"", length=(64 << 20)),
    "magic": frame(STATE, b"x", magic=b"HTTP"),
    "version": frame(STATE, b"x", version=9),
    "kind": frame(7, b"x"),
    "reserved": frame(STATE, b"x", reserved=b"\1\0"),
}


def main():
    path = sys.argv[1]
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(4)
    print("listening", flush=True)
    conn = None
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        try:
            if cmd[0] == "accept":
                conn, _ = srv.accept()
            elif cmd[0] == "close":
                conn.close()
                conn = None
            elif cmd[0] == "quit":
                break
            elif cmd[0] == "good":
                conn.sendall(good(cmd[1]))
            elif cmd[0] == "split":  # one good frame a byte at a time
                for b in good(cmd[1]):
                    conn.sendall(bytes([b]))
            elif cmd[0] == "bye":
                conn.sendall(frame(BYE, b""))
            else:
                conn.sendall(FRAMES[cmd[0]])
        except (OSError, AttributeError):
            pass  # the follower hung up (as it should after a framing error)
        print("done", cmd[0], flush=True)
    srv.close()


if __name__ == "__main__":
    main()
