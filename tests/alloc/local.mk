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
tests_alloc_test_allocfail_LDADD = libnslua.la libnsaudit.la libnsexplore.la libnscore.la \
	$(LUA_LIBS) $(LAPACKE_LIBS) $(BLAS_LIBS) -lm

## test_limits: the element cap (NS_MAX_ELEMENTS) and the Jacobian limit refuse with a
## message, before the memory is asked for (the same wrapping records the largest request).
check_PROGRAMS += tests/alloc/test_limits
TESTS += tests/alloc/test_limits
tests_alloc_test_limits_SOURCES = tests/alloc/test_limits.c tests/unit/tap.h
tests_alloc_test_limits_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_alloc_test_limits_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc
tests_alloc_test_limits_LDADD = libnscore.la $(LAPACKE_LIBS) $(BLAS_LIBS) -lm

## test_fsync: ns_file_write_atomic syncs the file, then its folder after the rename, and
## reports a failure of either (fsync wrapped to see each call and to fail one).
check_PROGRAMS += tests/alloc/test_fsync
TESTS += tests/alloc/test_fsync
tests_alloc_test_fsync_SOURCES = tests/alloc/test_fsync.c tests/unit/tap.h
tests_alloc_test_fsync_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_alloc_test_fsync_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=fsync
tests_alloc_test_fsync_LDADD = libnsaudit.la libnsexplore.la libnscore.la $(LAPACKE_LIBS) $(BLAS_LIBS) -lm
