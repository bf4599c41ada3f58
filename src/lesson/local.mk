## src/lesson: the lesson engine (the claims registry: claims.c; the sandbox: sandbox.c; the
## lesson{} format, step snapshots and accessors: player.c) and its headless commands
## (lesson_run.c), linked into the normscope binary. The installed binary finds lessons in $(pkgdatadir)/lessons and the registry in
## $(pkgdatadir)/claims.tsv; in its build tree it reads the source tree's (lesson_run.h).
noinst_LTLIBRARIES += libnslesson.la
libnslesson_la_SOURCES = src/lesson/lesson.h src/lesson/lesson_priv.h \
	src/lesson/claims.c src/lesson/sandbox.c src/lesson/player.c \
	src/lesson/schema.h src/lesson/schema.c \
	src/lesson/lesson_run.c src/lesson/lesson_run.h \
	src/lesson/lesson_progress.c src/lesson/lesson_progress.h
libnslesson_la_CPPFLAGS = $(AM_CPPFLAGS) -DLESSON_PKGDATADIR='"$(pkgdatadir)"' \
	-DLESSON_SRCDIR='"$(abs_top_srcdir)"'
libnslesson_la_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS) $(BLAS_CFLAGS) $(LAPACKE_CFLAGS)

# data/claims.tsv is distributed by Makefile.am's EXTRA_DIST.
pkgdata_DATA = data/claims.tsv
