-- hostile: ask load for binary chunks explicitly
local f = load("return 1", "chunk", "b")
