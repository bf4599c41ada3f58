-- hostile: one huge string.rep
local s = string.rep("x", 1 << 40)
