-- hostile: full collections in a loop, each a walk of the heap in C
local keep = {}
for i = 1, 200000 do keep[i] = {i} end
while true do collectgarbage() end
