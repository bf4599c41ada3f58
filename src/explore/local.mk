## src/explore: the explorer model between the Lua binding and the numerics: the state and
## its field table, patches, undo history, the undoable edits, compute-and-cache into the
## result record, and dump of a state. No curses, no Lua.
noinst_LTLIBRARIES += libnsexplore.la
libnsexplore_la_SOURCES = \
	src/explore/explore.h src/explore/state_priv.h src/explore/result_priv.h src/explore/fields.h \
	src/explore/state.c src/explore/state.h \
	src/explore/history.c src/explore/history.h \
	src/explore/edit.c src/explore/edit.h \
	src/explore/result.c src/explore/result.h src/explore/result_clear.c src/explore/probes.c \
	src/explore/file.c src/explore/file.h \
	src/explore/textout.c src/explore/textout.h \
	src/explore/panelfig.c src/explore/panelfig.h
libnsexplore_la_CFLAGS = $(AM_CFLAGS)
