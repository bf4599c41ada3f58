-- hostile: computing the panels takes scratch besides tensors (the probes' outputs, the
-- statistics, the checks' directions): x of 2^20 elements is 8 MiB and fits a 32 MiB cap,
-- the 128 MiB its computation may take does not
set{x = ns.rng(1):normal(0, 1, {1048576})}
local r = result()
lesson{title = "t", source = "000", section = "s", steps = {{text = "x"}}}
