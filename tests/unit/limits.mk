## tests/unit/limits.mk: the element cap as a setting of the core, and NS_MAX_ELEMENTS
## passed on to it by the entry points (nsl_max_elements_from_env, luaopen_normscope).
check_PROGRAMS += tests/unit/test_max_elements
TESTS += tests/unit/test_max_elements
tests_unit_test_max_elements_SOURCES = tests/unit/test_max_elements.c tests/unit/tap.h
tests_unit_test_max_elements_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_test_max_elements_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS)
tests_unit_test_max_elements_LDADD = libnslua.la libnsaudit.la libnsexplore.la libnscore.la \
	$(LUA_LIBS) $(LAPACKE_LIBS) $(BLAS_LIBS) -lm

## the sandbox's bounded string and table functions against the standard ones (issue 23)
check_PROGRAMS += tests/unit/test_bounded
TESTS += tests/unit/test_bounded
EXTRA_DIST += tests/lua/test_bounded.lua
tests_unit_test_bounded_SOURCES = tests/unit/test_bounded.c
tests_unit_test_bounded_CPPFLAGS = $(AM_CPPFLAGS) -DNSX_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_bounded_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS)
tests_unit_test_bounded_LDADD = libnslua.la libnsaudit.la libnsexplore.la libnscore.la \
	$(LUA_LIBS) $(LAPACKE_LIBS) $(BLAS_LIBS) -lm

## ns_text_sanitize: what of a file's bytes reaches a terminal (issue 23)
check_PROGRAMS += tests/unit/test_text
TESTS += tests/unit/test_text
tests_unit_test_text_SOURCES = tests/unit/test_text.c tests/unit/tap.h
tests_unit_test_text_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_test_text_LDADD = libnscore.la -lm
