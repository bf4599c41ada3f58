## tests/lessons: the lesson engine. test_hostile.sh plays hostile lessons (each must end
## with FILE:LINE and a message); test_lessons.sh lints and plays every lesson of lessons/
## and runs `normscope verify`; test_claims_sync.sh compares data/claims.tsv's ids with the
## shared registry's (skipped when that file is not there); test_lesson checks the C API
## (step snapshots, the caller's state surviving a failing lesson).
LESSON_HOSTILE = \
	tests/lessons/hostile-bytecode-mode.lua tests/lessons/hostile-bytecode.lua \
	tests/lessons/hostile-claim-unknown.lua tests/lessons/hostile-collectgarbage.lua \
	tests/lessons/hostile-concat.lua tests/lessons/hostile-dump.lua \
	tests/lessons/hostile-error-table.lua tests/lessons/hostile-io.lua \
	tests/lessons/hostile-explorer-save.lua tests/lessons/hostile-explorer-load.lua \
	tests/lessons/hostile-set-file.lua tests/lessons/hostile-audit-file.lua \
	tests/lessons/hostile-loop-pcall.lua tests/lessons/hostile-loop.lua \
	tests/lessons/hostile-memory.lua tests/lessons/hostile-ns-save.lua \
	tests/lessons/hostile-os.lua tests/lessons/hostile-rep-method.lua \
	tests/lessons/hostile-rep.lua tests/lessons/hostile-require.lua \
	tests/lessons/hostile-runtime.lua tests/lessons/hostile-step-loop.lua \
	tests/lessons/hostile-syntax.lua tests/lessons/hostile-tensors.lua \
	tests/lessons/hostile-tensor-garbage.lua tests/lessons/hostile-gc.lua \
	tests/lessons/hostile-pattern.lua tests/lessons/hostile-pattern-long.lua \
	tests/lessons/hostile-pattern-plain.lua tests/lessons/hostile-gsub-pattern.lua \
	tests/lessons/hostile-table-move.lua tests/lessons/hostile-table-len.lua \
	tests/lessons/hostile-rep-empty.lua tests/lessons/hostile-c-loop.lua \
	tests/lessons/hostile-jacobian-loop.lua tests/lessons/hostile-explorer-gc.lua \
	tests/lessons/hostile-check-loop.lua tests/lessons/hostile-gc-loop.lua \
	tests/lessons/hostile-time.lua tests/lessons/hostile-mem-explorer.lua \
	tests/lessons/hostile-mem-explorers.lua tests/lessons/hostile-mem-steps.lua \
	tests/lessons/hostile-mem-results.lua tests/lessons/mem-shared-steps.lua \
	tests/lessons/hostile-print-flood.lua \
	tests/lessons/hostile-mem-history.lua tests/lessons/hostile-mem-figure.lua \
	tests/lessons/hostile-mem-compute.lua \
	tests/lessons/hostile-format-width.lua tests/lessons/mem-teardown.lua
TESTS += tests/lessons/test_hostile.sh
EXTRA_DIST += tests/lessons/test_hostile.sh $(LESSON_HOSTILE)
TESTS += tests/lessons/test_lessons.sh tests/lessons/test_claims_sync.sh
EXTRA_DIST += tests/lessons/test_lessons.sh tests/lessons/test_claims_sync.sh \
	tests/lessons/engine.lua tests/lessons/fail-claim.lua tests/lessons/fail-show.lua \
	tests/lessons/lint-bad.lua tests/lessons/player-views.lua

check_PROGRAMS += tests/lessons/test_lesson
TESTS += tests/lessons/test_lesson
tests_lessons_test_lesson_SOURCES = tests/lessons/test_lesson.c tests/unit/tap.h
tests_lessons_test_lesson_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit \
	-DLESSON_TEST_SRCDIR='"$(abs_top_srcdir)"'
tests_lessons_test_lesson_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS)
tests_lessons_test_lesson_LDADD = libnslesson.la libnslua.la libnsaudit.la libnsexplore.la libnsplot.la libnscore.la \
	$(LUA_LIBS) $(LAPACKE_LIBS) $(BLAS_LIBS) -lm

## plot(panel) in a lesson played headless (a step's figure, print in claims)
TESTS += tests/lessons/test_plot_lesson.sh
EXTRA_DIST += tests/lessons/test_plot_lesson.sh tests/lessons/plot-figure.lua

## lessons/README.md's attribute table against the engine's schema (src/lesson/schema.h)
TESTS += tests/lessons/test_schema.sh
EXTRA_DIST += tests/lessons/test_schema.sh
