## tests/tui: the explorer screen driven in tmux (send-keys, capture-pane) at 80x24 and
## 120x40. Shell scripts printing TAP; they run the built binary ($NORMSCOPE) and skip
## when tmux is missing ($TMUX_BIN empty).
SCREEN_TESTS = tests/tui/test_screen.sh tests/tui/test_screen_term.sh \
	tests/tui/test_screen_file.sh tests/tui/test_screen_degenerate.sh tests/tui/test_screen_state.sh
TESTS += $(SCREEN_TESTS)
EXTRA_DIST += $(SCREEN_TESTS) tests/tui/test_screen-lib.sh

check_PROGRAMS += tests/tui/test_screen_plot
TESTS += tests/tui/test_screen_plot
tests_tui_test_screen_plot_SOURCES = tests/tui/test_screen_plot.c
tests_tui_test_screen_plot_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_tui_test_screen_plot_LDADD = libnsplot.la -lm
