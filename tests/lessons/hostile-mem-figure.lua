-- hostile: a figure of a million channels: the panels' computation it needs first (128 MiB
-- at most, charged before it runs) is over the cap; the figure's own scratch, some 72 MiB
-- of per-channel bars, is charged too (tests/unit/test_explore.c, test_figure_charged)
set{x = ns.rng(1):normal(0, 1, {1, 1048576, 1})}
local s = plot("input", {width = 78, height = 22})
lesson{title = "t", source = "000", section = "s", steps = {{text = "x"}}}
