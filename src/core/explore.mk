## src/core/explore.mk: the explorer's state and apply (state.c), undo/redo (history.c), key
## helpers (keys.c) and result record (explore.c),
## its Lua side (set/get/undo/redo/reset in libnsexplore.la), and their tests.
libnscore_la_SOURCES += src/core/state.c src/core/history.c src/core/keys.c \
	src/core/explore.c src/core/explore.h src/core/explore_priv.h

check_PROGRAMS += tests/unit/test_explore
TESTS += tests/unit/test_explore
tests_unit_test_explore_SOURCES = tests/unit/test_explore.c tests/unit/tap.h
tests_unit_test_explore_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_test_explore_LDADD = libnscore.la $(LAPACKE_LIBS) $(BLAS_LIBS) -lm

check_PROGRAMS += tests/unit/test_explore_cache
TESTS += tests/unit/test_explore_cache
tests_unit_test_explore_cache_SOURCES = tests/unit/test_explore_cache.c tests/unit/tap.h
tests_unit_test_explore_cache_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_test_explore_cache_LDADD = libnscore.la $(LAPACKE_LIBS) $(BLAS_LIBS) -lm

## The Lua side of the state (set/get/undo/redo/reset), linked by the screen and any
## program that embeds the explorer; it uses the binding's tensor helpers (libnslua.la).
noinst_LTLIBRARIES += libnsexplore.la
libnsexplore_la_SOURCES = src/lua/explore_lua.c src/lua/explore_lua.h
libnsexplore_la_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS)

check_PROGRAMS += tests/unit/test_explore_lua
TESTS += tests/unit/test_explore_lua
EXTRA_DIST += tests/lua/test_explore_state.lua
tests_unit_test_explore_lua_SOURCES = tests/unit/test_explore_lua.c
tests_unit_test_explore_lua_CPPFLAGS = $(AM_CPPFLAGS) -DNSX_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_explore_lua_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS)
tests_unit_test_explore_lua_LDADD = libnsexplore.la libnslua.la libnscore.la \
	$(LUA_LIBS) $(LAPACKE_LIBS) $(BLAS_LIBS) -lm
