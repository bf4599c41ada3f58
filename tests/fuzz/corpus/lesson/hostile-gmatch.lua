-- hostile: gmatch's iterator runs the matcher a step at a time, each charged
local s = string.rep("a", 4000)
for w in s:gmatch("a*a*a*b") do end
lesson{title = "t", source = "000", section = "s", steps = {{text = "x"}}}
