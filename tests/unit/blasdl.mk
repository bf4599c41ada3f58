## tests/unit/blasdl.mk: LAPACKE and CBLAS opened at first use (src/core/blasdl.c):
## nothing mapped at start, the first call loads and works, threads racing for the load,
## missing sonames give clean errors; blas-lazy.sh checks the real binary with LD_DEBUG.
check_PROGRAMS += tests/unit/test_blasdl
TESTS += tests/unit/test_blasdl tests/unit/blas-lazy.sh
tests_unit_test_blasdl_SOURCES = tests/unit/test_blasdl.c tests/unit/tap.h
tests_unit_test_blasdl_CFLAGS = $(AM_CFLAGS) -pthread $(LAPACKE_CFLAGS) $(BLAS_CFLAGS)
tests_unit_test_blasdl_LDADD = libnscore.la -lm -lpthread
EXTRA_DIST += tests/unit/blas-lazy.sh
## the explorer without LAPACKE (tmux; skipped like the other screen tests without it)
TESTS += tests/tui/test_screen_nolapack.sh
EXTRA_DIST += tests/tui/test_screen_nolapack.sh
