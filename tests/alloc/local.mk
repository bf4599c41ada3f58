## tests/alloc: the allocation-failure test. Every malloc/calloc/realloc of the statically
## linked libraries goes through the counters of test_allocfail.c (-Wl,--wrap), which fail
## the k-th one for every k of a small workload of the core and of the Lua API.
check_PROGRAMS += tests/alloc/test_allocfail
TESTS += tests/alloc/test_allocfail
tests_alloc_test_allocfail_SOURCES = tests/alloc/test_allocfail.c tests/unit/tap.h
tests_alloc_test_allocfail_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_alloc_test_allocfail_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS)
tests_alloc_test_allocfail_LDFLAGS = $(AM_LDFLAGS) \
	-Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free
tests_alloc_test_allocfail_LDADD = libnslua.la libnsexplore.la libnscore.la \
	$(LUA_LIBS) $(LAPACKE_LIBS) $(BLAS_LIBS) -lm
