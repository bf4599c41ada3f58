## tests/unit/explore.mk: unit tests of the explorer model (src/explore) and its Lua side.
check_PROGRAMS += tests/unit/test_explore tests/unit/test_explore_cache tests/unit/test_explore_lua
TESTS += tests/unit/test_explore tests/unit/test_explore_cache tests/unit/test_explore_lua
tests_unit_test_explore_SOURCES = tests/unit/test_explore.c tests/unit/tap.h
tests_unit_test_explore_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_test_explore_LDADD = libnsaudit.la libnsexplore.la libnsplot.la libnscore.la $(LAPACKE_LIBS) $(BLAS_LIBS) -lm

tests_unit_test_explore_cache_SOURCES = tests/unit/test_explore_cache.c tests/unit/tap.h
tests_unit_test_explore_cache_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_test_explore_cache_LDADD = libnsaudit.la libnsexplore.la libnscore.la $(LAPACKE_LIBS) $(BLAS_LIBS) -lm

EXTRA_DIST += tests/lua/test_explore_state.lua
tests_unit_test_explore_lua_SOURCES = tests/unit/test_explore_lua.c
tests_unit_test_explore_lua_CPPFLAGS = $(AM_CPPFLAGS) -DNSX_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_explore_lua_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS)
tests_unit_test_explore_lua_LDADD = libnslua.la libnsaudit.la libnsexplore.la libnscore.la \
	$(LUA_LIBS) $(LAPACKE_LIBS) $(BLAS_LIBS) -lm

## a .npy read straight into the tensor, against the element by element parse
check_PROGRAMS += tests/unit/test_file_load
TESTS += tests/unit/test_file_load
tests_unit_test_file_load_SOURCES = tests/unit/test_file_load.c tests/unit/tap.h
tests_unit_test_file_load_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_test_file_load_LDADD = libnsexplore.la libnscore.la $(LAPACKE_LIBS) $(BLAS_LIBS) -lm
