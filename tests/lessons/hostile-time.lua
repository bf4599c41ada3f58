-- hostile: cheap instructions, expensive C: only the clock ends this one
local s = string.rep("xxxxxxxx", 1 << 20)
while true do local u = s:upper() end
