## src/plot: terminal plots rendered into cells and text (no curses), for the screen and ns.plot.
noinst_LTLIBRARIES += libnsplot.la
libnsplot_la_SOURCES = src/plot/plot.h src/plot/canvas.c src/plot/bars.c src/plot/heatmap.c \
	src/plot/lines.c
libnsplot_la_LIBADD = -lm
