## src/class: the classroom (issue 25). cls_proto.c is the wire format of the teacher's
## socket, cls_net.c its sockets, cls_screen.c joins them to the explorer screen through
## tui.h's tui_hook (--broadcast, `normscope follow`), cls_export.c writes a lesson as a
## Markdown handout or an asciinema recording (lesson --export). Above the screen, like
## the commands: main -> class -> tui.
noinst_LTLIBRARIES += libnsclass.la
libnsclass_la_SOURCES = src/class/cls.h src/class/cls_proto.c src/class/cls_proto.h \
	src/class/cls_net.c src/class/cls_net.h src/class/cls_screen.c src/class/cls_export.c
libnsclass_la_CFLAGS = $(AM_CFLAGS) $(NCURSES_CFLAGS) $(READLINE_CFLAGS) $(LUA_CFLAGS) \
	-D_XOPEN_SOURCE_EXTENDED -DNCURSES_WIDECHAR=1
