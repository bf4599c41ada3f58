## tests/tui: the explorer screen driven in tmux (send-keys, capture-pane) at 80x24 and
## 120x40. Shell scripts printing TAP; they run the built binary ($NORMSCOPE) and skip
## when tmux is missing ($TMUX_BIN empty).
SCREEN_TESTS = tests/tui/test_screen.sh tests/tui/test_screen_term.sh \
	tests/tui/test_screen_file.sh tests/tui/test_screen_degenerate.sh \
	tests/tui/test_screen_review.sh tests/tui/test_screen_figure.sh tests/tui/test_screen_state.sh \
	tests/tui/test_screen_lesson.sh tests/tui/test_screen_views.sh
## the mask field on screen
SCREEN_TESTS += tests/tui/test_screen_mask.sh
## the output panel: a matrix a row a line, its labels, its arrows
SCREEN_TESTS += tests/tui/test_screen_output.sh
## the lesson pane: a long text scrolls above its try-it (the fixture pane-scroll.lua)
SCREEN_TESTS += tests/tui/test_screen_pane.sh
EXTRA_DIST += tests/tui/pane-scroll.lua
## plot(panel): the figure view's cells, headless and at the prompt
SCREEN_TESTS += tests/tui/test_screen_plotfn.sh
# the spectrum above the full Jacobian's limit, the worker thread, key folding
SCREEN_TESTS += tests/tui/test_screen_live.sh
# the busy mark and key folding, each shown to happen
SCREEN_TESTS += tests/tui/test_screen_busy.sh
# missing state files named, saved file references absolute (explorer review N3, N4)
SCREEN_TESTS += tests/tui/test_screen_paths.sh
# the keys the views' hints name do what the hints say (review N6)
SCREEN_TESTS += tests/tui/test_screen_hints.sh
# the finite differences are of the map on screen; undetermined where it cannot resolve (N5)
SCREEN_TESTS += tests/tui/test_screen_fd.sh
# a probe that cannot fail in the dtype says so (N8)
SCREEN_TESTS += tests/tui/test_screen_undet.sh
# a safetensors file's tensors named whole when none is chosen (N7)
SCREEN_TESTS += tests/tui/test_screen_stlist.sh
# row labels as wide as they need, (n,c,h) for 4-D rows (N10)
SCREEN_TESTS += tests/tui/test_screen_labels.sh
# figures: coincident series merged, index axes with whole-number ticks (N11)
SCREEN_TESTS += tests/tui/test_screen_figseries.sh
# Settings Left/Right, no hidden edits and no dead Tab in the figure view (N12)
SCREEN_TESTS += tests/tui/test_screen_keysteps.sh
# NO_COLOR bars symmetric about the axis (N13)
SCREEN_TESTS += tests/tui/test_screen_nocolor_bars.sh
# n on 0, last.lua's mode, a saved eps as typed (N15)
SCREEN_TESTS += tests/tui/test_screen_odds.sh
# the third replay of the review: Train/eval's source and seed, the help's budget, the
# Spectrum header's columns
SCREEN_TESTS += tests/tui/test_screen_wording.sh
# the review's (c) items still open at its replay: one meaning of *, whole values, keys
# explained, the 80x24 Lua pane, narrow titles, the README's lines in any order
SCREEN_TESTS += tests/tui/test_screen_newuser.sh
# statistics lines whole at 80x24 and 120x40: the Input footer, the Output's stat line (B8)
SCREEN_TESTS += tests/tui/test_screen_footer.sh
# the Batch panel: LN drawn when there is room, what is left out named with its key (B14)
SCREEN_TESTS += tests/tui/test_screen_batchln.sh
TESTS += $(SCREEN_TESTS)
EXTRA_DIST += $(SCREEN_TESTS) tests/tui/test_screen-lib.sh

# The audit panel.
TESTS += tests/tui/test_screen_audit.sh
EXTRA_DIST += tests/tui/test_screen_audit.sh

check_PROGRAMS += tests/tui/test_screen_plot
TESTS += tests/tui/test_screen_plot
tests_tui_test_screen_plot_SOURCES = tests/tui/test_screen_plot.c
tests_tui_test_screen_plot_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_tui_test_screen_plot_LDADD = libnsplot.la -lm

# The key table against the manual page's KEYS section (and against itself).
check_PROGRAMS += tests/tui/test_keymap
TESTS += tests/tui/test_keymap
tests_tui_test_keymap_SOURCES = tests/tui/test_keymap.c
tests_tui_test_keymap_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit \
	-D_XOPEN_SOURCE_EXTENDED -DNCURSES_WIDECHAR=1
tests_tui_test_keymap_CFLAGS = $(AM_CFLAGS) $(NCURSES_CFLAGS) $(LUA_CFLAGS)
tests_tui_test_keymap_LDADD = libnstui.la libnslesson.la libnsrepl.la libnslua.la libnsaudit.la libnsexplore.la libnsplot.la \
	libnscore.la $(LUA_LIBS) $(READLINE_LIBS) $(NCURSES_LIBS) $(LAPACKE_LIBS) $(BLAS_LIBS) -lm

# The lesson layout at 80x24, 100x30 and 120x40, every step of every lesson, without a
# terminal (lesson --layout-dump); and in tmux, the screens the issue names (lessons 2, 15,
# 22), answers, hints, variants, predictions and the player's keys.
TESTS += tests/tui/test_layout.sh tests/tui/test_screen_player.sh
EXTRA_DIST += tests/tui/test_layout.sh tests/tui/test_screen_player.sh
