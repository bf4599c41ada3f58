-- not hostile: 200 steps over one 8 MB x; the snapshots share it (one copy, not 200)
local x = ns.rng(1):normal(0, 1, {1024, 1024})
local steps = {}
for i = 1, 200 do steps[i] = {text = "step " .. i, set = {x = x, eps = i / 1000}} end
lesson{title = "shared", source = "000", section = "test", steps = steps}
