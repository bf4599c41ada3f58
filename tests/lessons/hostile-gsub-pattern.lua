-- hostile: gsub and gmatch run the same matcher
local s = string.rep("a", 3000)
local t = s:gsub("a*a*a*b", "x")
