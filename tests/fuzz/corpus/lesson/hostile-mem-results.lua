-- hostile: results of a large x, kept (each holds y, y_shift, y_scale: three copies of x)
set{x = ns.rng(1):normal(0, 1, {256, 256})}
local keep = {}
for i = 1, 1000 do keep[i] = result() end
