-- hostile: a plain find compares n * m bytes in C as well
local s = string.rep("a", 2000000)
local found = s:find(string.rep("a", 20000) .. "b", 1, true)
