-- hostile: many explorers, each with its own copy of x
local x = ns.rng(1):normal(0, 1, {512, 512})
local keep = {}
for i = 1, 1000 do keep[i] = ns.explorer{x = x + i} end
