## src/tui: the explorer screen (ncursesw) and its readline prompt.
noinst_LTLIBRARIES += libnstui.la
libnstui_la_SOURCES = src/tui/tui.c src/tui/tui.h
libnstui_la_CFLAGS = $(AM_CFLAGS) $(NCURSES_CFLAGS) $(READLINE_CFLAGS) $(LUA_CFLAGS)
libnstui_la_LIBADD = $(NCURSES_LIBS) $(READLINE_LIBS)
