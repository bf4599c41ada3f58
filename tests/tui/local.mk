## tests/tui
