## src/explore: the explorer model between the Lua binding and the numerics: the state and
## its field table, patches, undo history, the undoable edits, compute-and-cache into the
## result record, and dump of a state. No curses, no Lua.
noinst_LTLIBRARIES += libnsexplore.la
libnsexplore_la_SOURCES = \
	src/explore/explore.h src/explore/priv.h \
	src/explore/state.c src/explore/history.c src/explore/edit.c src/explore/result.c
libnsexplore_la_CFLAGS = $(AM_CFLAGS)
