-- hostile: a print loop that would write gigabytes before its budget ran out
local line = string.rep("x", 1000)
for i = 1, 1e9 do print(line) end
