## tests/class: the classroom (issue 25). test_proto: the frame format (C, TAP).
## test_follow.sh: a teacher and three followers in tmux (equal panels after a sequence of
## steps, detach and rejoin, a teacher killed with SIGKILL). test_hostile.sh: a follower
## against a fake teacher speaking a Python copy of the protocol (hostile_teacher.py).
## test_export.sh: every lesson as a handout (check_handout.lua pastes its blocks) and
## recordings (check_cast.py reads them). bench_class.sh (make bench): the teacher's CPU
## with 30 followers, measured.
check_PROGRAMS += tests/class/test_proto
TESTS += tests/class/test_proto
tests_class_test_proto_SOURCES = tests/class/test_proto.c tests/unit/tap.h
tests_class_test_proto_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_class_test_proto_LDADD = libnsclass.la libnstui.la libnslesson.la libnsrepl.la libnslua.la \
	libnsaudit.la libnsexplore.la libnsplot.la libnscore.la $(LUA_LIBS) $(READLINE_LIBS) \
	$(NCURSES_LIBS) $(LAPACKE_LIBS) $(BLAS_LIBS) -lm

CLASS_TESTS = tests/class/test_follow.sh tests/class/test_hostile.sh tests/class/test_export.sh
TESTS += $(CLASS_TESTS)
EXTRA_DIST += $(CLASS_TESTS) tests/class/hostile_teacher.py tests/class/bench_class.sh \
	tests/class/check_handout.lua tests/class/check_cast.py tests/class/exercises.lua

bench: bench-class
bench-class: normscope$(EXEEXT)
	$(SHELL) $(top_srcdir)/tests/class/bench_class.sh $(top_builddir)/normscope$(EXEEXT)
.PHONY: bench-class
