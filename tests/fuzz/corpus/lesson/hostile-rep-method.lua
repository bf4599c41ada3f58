-- hostile: strings that double until the memory cap (method syntax)
local s = "x"
while true do s = s:rep(2) end
