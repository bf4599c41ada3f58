-- hostile: a pattern that backtracks for hours (string matching runs in C, unhooked)
local s = string.rep("a", 40)
local found = s:find(string.rep("a*", 40) .. "b")
