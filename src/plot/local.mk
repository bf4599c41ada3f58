## src/plot: terminal plots rendered into cells and text (no curses), for the screen and ns.plot.
## plot.h: the cell grid and the panels' small renderers; figure.h: whole figures.
noinst_LTLIBRARIES += libnsplot.la
libnsplot_la_SOURCES = src/plot/plot.h src/plot/canvas.c src/plot/bars.c src/plot/heatmap.c \
	src/plot/lines.c \
	src/plot/figure.h src/plot/figure_priv.h src/plot/figure.c src/plot/figure_xy.c \
	src/plot/figure_bars.c src/plot/figure_box.c src/plot/figure_hist.c src/plot/figure_heatmap.c
libnsplot_la_LIBADD = -lm
