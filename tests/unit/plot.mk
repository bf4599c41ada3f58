## tests/unit/plot.mk: the figures of src/plot (golden pictures in tests/data/plot,
## references, random properties).
check_PROGRAMS += tests/unit/test_plot
TESTS += tests/unit/test_plot
tests_unit_test_plot_SOURCES = tests/unit/test_plot.c tests/unit/tap.h tests/unit/testdata.h
tests_unit_test_plot_LDADD = libnsplot.la -lm
EXTRA_DIST += tests/data/plot/goldens.txt tests/data/plot/README.md
