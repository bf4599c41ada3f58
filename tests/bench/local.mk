## tests/bench: speed and memory benchmarks, run by `make bench` (never by make check:
## timings are measured and printed, not asserted). bench_norm times ns_normalize against
## numpy and torch (ref_timings.py, when /usr/bin/python3 has them); bench times the
## explorer's frames and keys.
EXTRA_PROGRAMS = tests/bench/bench tests/bench/bench_norm
tests_bench_bench_SOURCES = tests/bench/bench.c
tests_bench_bench_LDADD = libnsaudit.la libnsexplore.la libnscore.la
tests_bench_bench_norm_SOURCES = tests/bench/bench_norm.c
tests_bench_bench_norm_LDADD = libnscore.la
CLEANFILES += tests/bench/bench tests/bench/bench_norm tests/bench/refs.tsv tests/bench/cases.tsv
EXTRA_DIST += tests/bench/ref_timings.py tests/bench/bench_lua.lua

bench: tests/bench/bench$(EXEEXT) tests/bench/bench_norm$(EXEEXT) normscope$(EXEEXT)
	@if test -x /usr/bin/python3; then \
	  $(top_builddir)/tests/bench/bench_norm$(EXEEXT) --cases | \
	    /usr/bin/python3 $(top_srcdir)/tests/bench/ref_timings.py > tests/bench/refs.tsv || :; \
	else : > tests/bench/refs.tsv; fi
	$(top_builddir)/tests/bench/bench_norm$(EXEEXT) tests/bench/refs.tsv
	$(top_builddir)/tests/bench/bench_norm$(EXEEXT) --cases > tests/bench/cases.tsv
	$(top_builddir)/normscope$(EXEEXT) run $(top_srcdir)/tests/bench/bench_lua.lua \
	  tests/bench/cases.tsv tests/bench/refs.tsv
	$(top_builddir)/tests/bench/bench$(EXEEXT)

## bench_live (the explorer's start-up, keys on large files, the spectrum at any size): its
## own program, run by the same target (as its prerequisite, so before the others).
EXTRA_PROGRAMS += tests/bench/bench_live
tests_bench_bench_live_SOURCES = tests/bench/bench_live.c
tests_bench_bench_live_LDADD = libnsaudit.la libnsexplore.la libnscore.la
CLEANFILES += tests/bench/bench_live
bench: bench-live
bench-live: tests/bench/bench_live$(EXEEXT) normscope$(EXEEXT)
	$(top_builddir)/tests/bench/bench_live$(EXEEXT) $(top_builddir)/normscope$(EXEEXT)
.PHONY: bench-live
