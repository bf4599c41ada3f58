## tests/bench: speed and memory benchmarks, run by `make bench` (never by make check:
## timings are measured and printed, not asserted).
EXTRA_PROGRAMS = tests/bench/bench
tests_bench_bench_SOURCES = tests/bench/bench.c
tests_bench_bench_LDADD = libnsexplore.la libnscore.la
CLEANFILES += tests/bench/bench

bench: tests/bench/bench$(EXEEXT)
	$(top_builddir)/tests/bench/bench$(EXEEXT)
