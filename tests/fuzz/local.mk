## tests/fuzz: libFuzzer harnesses (fuzz_NAME.c, one entry point LLVMFuzzerTestOneInput
## each) and their seed corpora (corpus/NAME/; the lesson harness also takes lessons/ as
## seeds, read where they are). Every build links each harness with
## replay.c into tests/fuzz/replay_NAME, a TAP test that runs the corpus through it; with
## ./configure --enable-fuzz (clang) they are also linked with libFuzzer as
## tests/fuzz/fuzz_NAME, and `make fuzz-smoke` (part of `make check` there) runs each
## briefly on its corpus. A longer run by hand:
##   build/tests/fuzz/fuzz_npy -runs=1000000 /tmp/new tests/fuzz/corpus/npy
FUZZ_HARNESSES = npy csv file cellnum set state safetensors lesson
EXTRA_DIST += tests/fuzz/fuzz.h tests/fuzz/fuzz_lua.h tests/fuzz/corpus tests/fuzz/fuzz-smoke.sh \
	tests/fuzz/lesson.dict


check_PROGRAMS += tests/fuzz/replay_npy
TESTS += tests/fuzz/replay_npy
tests_fuzz_replay_npy_SOURCES = tests/fuzz/fuzz_npy.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_replay_npy_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_NAME='"npy"'
tests_fuzz_replay_npy_CFLAGS = $(AM_CFLAGS)
tests_fuzz_replay_npy_LDADD = libnscore.la -lm

check_PROGRAMS += tests/fuzz/replay_csv
TESTS += tests/fuzz/replay_csv
tests_fuzz_replay_csv_SOURCES = tests/fuzz/fuzz_csv.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_replay_csv_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_NAME='"csv"'
tests_fuzz_replay_csv_CFLAGS = $(AM_CFLAGS)
tests_fuzz_replay_csv_LDADD = libnscore.la -lm

check_PROGRAMS += tests/fuzz/replay_file
TESTS += tests/fuzz/replay_file
tests_fuzz_replay_file_SOURCES = tests/fuzz/fuzz_file.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_replay_file_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_NAME='"file"'
tests_fuzz_replay_file_CFLAGS = $(AM_CFLAGS)
tests_fuzz_replay_file_LDADD = libnsaudit.la libnsexplore.la libnscore.la -lm

check_PROGRAMS += tests/fuzz/replay_cellnum
TESTS += tests/fuzz/replay_cellnum
tests_fuzz_replay_cellnum_SOURCES = tests/fuzz/fuzz_cellnum.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_replay_cellnum_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_NAME='"cellnum"'
tests_fuzz_replay_cellnum_CFLAGS = $(AM_CFLAGS)
tests_fuzz_replay_cellnum_LDADD = libnsaudit.la libnsexplore.la libnscore.la $(LAPACKE_LIBS) $(BLAS_LIBS) -lm

check_PROGRAMS += tests/fuzz/replay_set
TESTS += tests/fuzz/replay_set
tests_fuzz_replay_set_SOURCES = tests/fuzz/fuzz_set.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_replay_set_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_NAME='"set"'
tests_fuzz_replay_set_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS)
tests_fuzz_replay_set_LDADD = libnslua.la libnsaudit.la libnsexplore.la libnscore.la $(LUA_LIBS) $(LAPACKE_LIBS) $(BLAS_LIBS) -lm

check_PROGRAMS += tests/fuzz/replay_state
TESTS += tests/fuzz/replay_state
tests_fuzz_replay_state_SOURCES = tests/fuzz/fuzz_state.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_replay_state_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_NAME='"state"'
tests_fuzz_replay_state_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS)
tests_fuzz_replay_state_LDADD = libnslua.la libnsaudit.la libnsexplore.la libnscore.la $(LUA_LIBS) $(LAPACKE_LIBS) $(BLAS_LIBS) -lm

check_PROGRAMS += tests/fuzz/replay_safetensors
TESTS += tests/fuzz/replay_safetensors
tests_fuzz_replay_safetensors_SOURCES = tests/fuzz/fuzz_safetensors.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_replay_safetensors_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_NAME='"safetensors"'
tests_fuzz_replay_safetensors_CFLAGS = $(AM_CFLAGS)
tests_fuzz_replay_safetensors_LDADD = libnscore.la -lm

check_PROGRAMS += tests/fuzz/replay_lesson
TESTS += tests/fuzz/replay_lesson
tests_fuzz_replay_lesson_SOURCES = tests/fuzz/fuzz_lesson.c tests/fuzz/replay.c tests/fuzz/fuzz.h
tests_fuzz_replay_lesson_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_NAME='"lesson"' -DFUZZ_SRCDIR='"$(abs_top_srcdir)"' \
	-DFUZZ_SEEDS_DIR='"lessons"'
tests_fuzz_replay_lesson_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS)
tests_fuzz_replay_lesson_LDADD = libnslesson.la libnslua.la libnsaudit.la libnsexplore.la libnsplot.la libnscore.la $(LUA_LIBS) $(LAPACKE_LIBS) $(BLAS_LIBS) -lm

if FUZZ
check_PROGRAMS += tests/fuzz/fuzz_npy
tests_fuzz_fuzz_npy_SOURCES = tests/fuzz/fuzz_npy.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_npy_CFLAGS = $(AM_CFLAGS)
tests_fuzz_fuzz_npy_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LDFLAGS)
tests_fuzz_fuzz_npy_LDADD = libnscore.la -lm
check_PROGRAMS += tests/fuzz/fuzz_csv
tests_fuzz_fuzz_csv_SOURCES = tests/fuzz/fuzz_csv.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_csv_CFLAGS = $(AM_CFLAGS)
tests_fuzz_fuzz_csv_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LDFLAGS)
tests_fuzz_fuzz_csv_LDADD = libnscore.la -lm
check_PROGRAMS += tests/fuzz/fuzz_file
tests_fuzz_fuzz_file_SOURCES = tests/fuzz/fuzz_file.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_file_CFLAGS = $(AM_CFLAGS)
tests_fuzz_fuzz_file_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LDFLAGS)
tests_fuzz_fuzz_file_LDADD = libnsaudit.la libnsexplore.la libnscore.la -lm
check_PROGRAMS += tests/fuzz/fuzz_cellnum
tests_fuzz_fuzz_cellnum_SOURCES = tests/fuzz/fuzz_cellnum.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_cellnum_CFLAGS = $(AM_CFLAGS)
tests_fuzz_fuzz_cellnum_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LDFLAGS)
tests_fuzz_fuzz_cellnum_LDADD = libnsaudit.la libnsexplore.la libnscore.la $(LAPACKE_LIBS) $(BLAS_LIBS) -lm
check_PROGRAMS += tests/fuzz/fuzz_set
tests_fuzz_fuzz_set_SOURCES = tests/fuzz/fuzz_set.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_set_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS)
tests_fuzz_fuzz_set_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LDFLAGS)
tests_fuzz_fuzz_set_LDADD = libnslua.la libnsaudit.la libnsexplore.la libnscore.la $(LUA_LIBS) $(LAPACKE_LIBS) $(BLAS_LIBS) -lm
check_PROGRAMS += tests/fuzz/fuzz_state
tests_fuzz_fuzz_state_SOURCES = tests/fuzz/fuzz_state.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_state_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS)
tests_fuzz_fuzz_state_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LDFLAGS)
tests_fuzz_fuzz_state_LDADD = libnslua.la libnsaudit.la libnsexplore.la libnscore.la $(LUA_LIBS) $(LAPACKE_LIBS) $(BLAS_LIBS) -lm
check_PROGRAMS += tests/fuzz/fuzz_safetensors
tests_fuzz_fuzz_safetensors_SOURCES = tests/fuzz/fuzz_safetensors.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_safetensors_CFLAGS = $(AM_CFLAGS)
tests_fuzz_fuzz_safetensors_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LDFLAGS)
tests_fuzz_fuzz_safetensors_LDADD = libnscore.la -lm
check_PROGRAMS += tests/fuzz/fuzz_lesson
tests_fuzz_fuzz_lesson_SOURCES = tests/fuzz/fuzz_lesson.c tests/fuzz/fuzz.h
tests_fuzz_fuzz_lesson_CPPFLAGS = $(AM_CPPFLAGS) -DFUZZ_SRCDIR='"$(abs_top_srcdir)"'
tests_fuzz_fuzz_lesson_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS)
tests_fuzz_fuzz_lesson_LDFLAGS = $(AM_LDFLAGS) $(FUZZ_LDFLAGS)
tests_fuzz_fuzz_lesson_LDADD = libnslesson.la libnslua.la libnsaudit.la libnsexplore.la libnsplot.la libnscore.la $(LUA_LIBS) $(LAPACKE_LIBS) $(BLAS_LIBS) -lm
TESTS += tests/fuzz/fuzz-smoke.sh
# the stock-Lua tests load the instrumented normscope.so: lua5.4 preloads clang's ASan
AM_TESTS_ENVIRONMENT += NS_ASAN_RUNTIME='$(ASAN_RUNTIME)'; export NS_ASAN_RUNTIME;
endif

## make fuzz-smoke: each libFuzzer harness a few seconds on its corpus (--enable-fuzz builds)
fuzz-smoke:
if FUZZ
	$(MAKE) $(AM_MAKEFLAGS) $(FUZZ_HARNESSES:%=tests/fuzz/fuzz_%)
	top_srcdir='$(abs_top_srcdir)' top_builddir='$(abs_top_builddir)' \
	  FUZZ_HARNESSES='$(FUZZ_HARNESSES)' $(SHELL) $(top_srcdir)/tests/fuzz/fuzz-smoke.sh
else
	@echo "fuzz-smoke: configure with --enable-fuzz (clang) to build the libFuzzer harnesses"; exit 1
endif
.PHONY: fuzz-smoke
