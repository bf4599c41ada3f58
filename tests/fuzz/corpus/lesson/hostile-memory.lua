-- hostile: a table that grows until the memory cap
local t = {}
local i = 0
while true do i = i + 1; t[i] = {i, i, i, i} end
