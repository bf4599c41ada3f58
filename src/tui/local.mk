## src/tui
