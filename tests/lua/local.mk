## tests/lua
