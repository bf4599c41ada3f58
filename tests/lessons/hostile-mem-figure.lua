-- hostile: a figure's scratch grows with x's channels (plain memory, not tensors): the
-- per-channel bars of a million channels take some 72 MiB while they are drawn
set{x = ns.rng(1):normal(0, 1, {1, 1048576, 1})}
local s = plot("input", {width = 78, height = 22})
lesson{title = "t", source = "000", section = "s", steps = {{text = "x"}}}
