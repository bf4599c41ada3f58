## src: the normscope binary. main.c is the command line. libnsrepl.la holds what the
## plain REPL and the explorer's prompt share: evaluating typed Lua, readline history
## and Lua name completion (src/lua/repl.c, src/lua/complete.c). It needs readline, so
## it stays out of libnslua.la and the stock-Lua module.
noinst_LTLIBRARIES += libnsrepl.la
libnsrepl_la_SOURCES = \
	src/lua/repl.c src/lua/repl.h \
	src/lua/complete.c src/lua/complete.h
libnsrepl_la_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS) $(READLINE_CFLAGS)
libnsrepl_la_LIBADD = $(READLINE_LIBS)

bin_PROGRAMS += normscope
normscope_SOURCES = src/main.c src/cmd_audit.c src/cmd_audit.h
normscope_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS) $(READLINE_CFLAGS)
# libnstui.la calls into libnslesson.la (the lesson player) and libnsrepl.la (the prompt),
# so it comes first; libnslesson.la needs the explorer's Lua side in libnslua.la.
normscope_LDADD = libnstui.la libnslesson.la libnsrepl.la libnslua.la libnsexplore.la libnsplot.la libnscore.la \
	$(LUA_LIBS) $(READLINE_LIBS) $(NCURSES_LIBS) $(LAPACKE_LIBS) $(BLAS_LIBS) -lm

# The manual page (doc/normscope.1) documents the command line above.
dist_man_MANS = doc/normscope.1
