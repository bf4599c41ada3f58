## tests/tui/repl.mk: the command line (tests/cli) and the plain REPL driven in tmux.
## Both are shell scripts printing TAP; they run the built binary ($NORMSCOPE).
REPL_TESTS = tests/cli/test_cli.sh tests/tui/test_repl.sh
TESTS += $(REPL_TESTS)
EXTRA_DIST += $(REPL_TESTS)

## Completion and the evaluator's verdicts on a plain Lua state (no terminal).
check_PROGRAMS += tests/cli/test_complete
TESTS += tests/cli/test_complete
tests_cli_test_complete_SOURCES = tests/cli/test_complete.c tests/unit/tap.h
tests_cli_test_complete_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/unit
tests_cli_test_complete_CFLAGS = $(AM_CFLAGS) $(LUA_CFLAGS)
tests_cli_test_complete_LDADD = libnsrepl.la libnsaudit.la libnsexplore.la libnscore.la $(LUA_LIBS) $(READLINE_LIBS) -lm
