## src/repl: what the plain REPL and the explorer's prompt share: evaluating typed Lua,
## readline history and Lua name completion. It needs readline, so it stays out of
## libnslua.la and the stock-Lua module.
noinst_LTLIBRARIES += libnsrepl.la
libnsrepl_la_SOURCES = \
	src/repl/repl.c src/repl/repl.h \
	src/repl/complete.c src/repl/complete.h
libnsrepl_la_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS) $(READLINE_CFLAGS)
libnsrepl_la_LIBADD = $(READLINE_LIBS)
