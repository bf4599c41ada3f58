## src/lua
