## src: the normscope binary. main.c is the command line; the REPL, its evaluator and
## Lua name completion (src/lua/repl.c, src/lua/complete.c) are linked into the binary
## only (they need readline), not into the stock-Lua module.
bin_PROGRAMS += normscope
normscope_SOURCES = src/main.c \
	src/lua/repl.c src/lua/repl.h \
	src/lua/complete.c src/lua/complete.h
normscope_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS) $(READLINE_CFLAGS)
normscope_LDADD = libnstui.la libnslua.la libnscore.la \
	$(LUA_LIBS) $(READLINE_LIBS) $(NCURSES_LIBS) $(LAPACKE_LIBS) $(BLAS_LIBS) -lm
