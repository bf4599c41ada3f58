## src/plot (owned by the screen work)
