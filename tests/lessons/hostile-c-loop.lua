-- hostile: heavy C calls in a loop: each is one VM instruction, its work is not
local x = ns.rng(1):normal(0, 1, {1000, 1000})
for i = 1, 1e9 do local y = ns.normalize(x, {kind = "layer"}) end
