-- hostile: cheap instructions, expensive C: the clock ends this one (each upper charges
-- its 8 MiB, but the test's budget is larger than 2 s of them)
local s = string.rep("xxxxxxxx", 1 << 20)
while true do local u = s:upper() end
