## src: the normscope binary. main.c is the command line and its table of commands;
## src/cmd holds the commands' bodies, one file each.
bin_PROGRAMS += normscope
normscope_SOURCES = src/main.c src/audit/cmd_audit.c src/audit/cmd_audit.h \
	src/cmd/cmd.h src/cmd/cmd.c src/cmd/cmd_run.c src/cmd/cmd_repl.c src/cmd/cmd_lesson.c \
	src/cmd/cmd_verify.c src/cmd/cmd_record.c
normscope_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS) $(READLINE_CFLAGS)
# libnstui.la calls into libnslesson.la (the lesson player) and libnsrepl.la (the prompt),
# so it comes first; libnslesson.la needs the explorer's Lua side in libnslua.la.
normscope_LDADD = libnsclass.la libnstui.la libnslesson.la libnsrepl.la libnslua.la libnsaudit.la libnsexplore.la libnsplot.la libnscore.la \
	$(LUA_LIBS) $(READLINE_LIBS) $(NCURSES_LIBS) $(LAPACKE_LIBS) $(BLAS_LIBS) -lm

# The manual page (doc/normscope.1) documents the command line above.
dist_man_MANS = doc/normscope.1
