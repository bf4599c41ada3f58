/* cls.h: the classroom (issue 25): a teacher's screen broadcast on a Unix domain socket,
 * students' screens following it, and a lesson exported as a handout or a recording.
 *
 *   normscope lesson N --broadcast SOCKET   the teacher: publishes every change
 *   normscope --broadcast SOCKET            the same for the plain explorer
 *   normscope follow SOCKET                 a student: follows (Esc detaches, F follows again)
 *   normscope lesson N --export FILE.md     a Markdown handout of the lesson
 *   normscope lesson N --export FILE.cast   an asciinema v2 recording of its playback
 *
 * The wire format is cls_proto.h's, the sockets cls_net.h's; cls_screen.c joins them to the
 * explorer screen through tui.h's tui_hook, and cls_export.c writes handouts and recordings.
 * Main calls only what is below.
 */
#ifndef CLS_H
#define CLS_H

#include "tui/tui.h"

/* `normscope follow`: its help (after the usage line) and its body. */
extern const char cls_follow_help[];
int cls_cmd_follow(int argc, char **argv, int first);

/* --broadcast SOCKET: runs the screen of opt as a teacher on SOCKET. Returns the exit
 * status (1 when the socket cannot be made, with a message printed). */
int cls_run_broadcast(tui_options *opt, const char *socket);

/* --export FILE for lesson X (a name, number or file): .md or .cast by FILE's ending.
 * width x height: the recording's screen (0: 120 x 40). Exit status. */
int cls_export(const char *lesson, const char *file, int width, int height);

#endif
