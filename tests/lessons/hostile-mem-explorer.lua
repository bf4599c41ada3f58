-- hostile: an explorer's undo steps keep every x it was given (C memory, not the Lua heap)
local x = ns.rng(1):normal(0, 1, {512, 512})
local e = ns.explorer()
for i = 1, 1000 do e:set{x = x * i} end
