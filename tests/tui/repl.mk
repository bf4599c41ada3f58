## tests/tui/repl.mk: the command line (tests/cli) and the plain REPL driven in tmux.
## Both are shell scripts printing TAP; they run the built binary ($NORMSCOPE).
REPL_TESTS = tests/cli/test_cli.sh tests/tui/test_repl.sh
TESTS += $(REPL_TESTS)
EXTRA_DIST += $(REPL_TESTS)
