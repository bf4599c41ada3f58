## src/core/explore.mk: the explorer's state, apply/undo and result record (explore.c),
## its Lua side (set/get/undo/redo/reset in libnsexplore.la), and their tests.
libnscore_la_SOURCES += src/core/explore.c src/core/explore.h

check_PROGRAMS += tests/unit/test_explore
TESTS += tests/unit/test_explore
tests_unit_test_explore_SOURCES = tests/unit/test_explore.c tests/unit/tap.h
tests_unit_test_explore_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_unit_test_explore_LDADD = libnscore.la $(LAPACKE_LIBS) $(BLAS_LIBS) -lm
