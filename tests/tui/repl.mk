## tests/tui/repl.mk: the plain REPL and command line, driven in a terminal
