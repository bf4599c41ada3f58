-- hostile: a step snapshot per step, each with another 2 MB x
local x = ns.rng(1):normal(0, 1, {512, 512})
local steps = {}
for i = 1, 200 do steps[i] = {text = "step", set = {x = x + i}} end
lesson{title = "t", source = "000", section = "s", steps = steps}
