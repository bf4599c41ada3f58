-- what a lesson still holds when it ends (tensors, an explorer with undo steps, results)
-- is freed as its Lua state closes, after its memory account was let go: the sanitizer
-- build's leak check runs this too
keep = {x = ns.rng(1):normal(0, 1, {64, 64})}
keep.e = ns.explorer{x = keep.x}
for i = 1, 5 do keep.e:set{x = keep.x * i} end
keep.r = result()
keep.y = ns.normalize(keep.x, {kind = "layer"})
lesson{title = "t", source = "000", section = "s",
  steps = {{text = "x", set = {eps = 1e-3}}, {text = "y", set = {x = keep.x}}}}
