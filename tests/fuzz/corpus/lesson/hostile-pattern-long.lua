-- hostile: a long pattern without a repetition still takes n * m steps in C (2e6 x 2e4)
local s = string.rep("a", 2000000)
local found = s:find(string.rep("a", 20000) .. "%d")
