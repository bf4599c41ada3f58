-- hostile: Jacobians of large x in a loop (n^2 elements each)
local x = ns.rng(1):normal(0, 1, {2000})
for i = 1, 1e9 do local j = ns.jacobian(x, {kind = "layer"}) end
