-- hostile: a string that doubles by concatenation until the memory cap
local s = "x"
for i = 1, 100 do s = s .. s end
