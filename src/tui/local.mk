## src/tui: the explorer screen (ncursesw) and its readline prompt. One file per panel.
noinst_LTLIBRARIES += libnstui.la
libnstui_la_SOURCES = src/tui/tui.c src/tui/tui.h src/tui/app.h src/tui/keys.c src/tui/cellnum.h src/tui/screen.h \
	src/tui/theme.c src/tui/layout.c src/tui/prompt.c src/tui/help.c \
	src/tui/input.c src/tui/settings.c src/tui/output.c src/tui/spectrum.c \
	src/tui/batch.c src/tui/traineval.c src/tui/precision.c src/tui/figure.c \
	src/tui/lesson_pane.c src/tui/message.c \
	src/tui/placement.c src/tui/backward.c src/tui/evalshift.c src/tui/stackview.c \
	src/tui/xfigure.c src/tui/jacwork.c \
	src/tui/auditview.c src/tui/panels.c src/tui/termcheck.c
libnstui_la_CFLAGS = $(AM_CFLAGS) $(NCURSES_CFLAGS) $(READLINE_CFLAGS) $(LUA_CFLAGS) \
	-D_XOPEN_SOURCE_EXTENDED -DNCURSES_WIDECHAR=1 -pthread
libnstui_la_LIBADD = libnsplot.la $(NCURSES_LIBS) $(READLINE_LIBS) -lpthread
