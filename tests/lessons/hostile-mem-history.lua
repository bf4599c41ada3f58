-- hostile: an explorer's undo steps keep the cells each set{} changed, as element lists
-- (plain memory, not tensors): 1000 steps of 16384 cells are 256 MiB
local x = ns.rng(1):normal(0, 1, {64, 4096})
local head, rest, e = x:slice(1, 1, 4), x:slice(1, 5, 64), ns.explorer{x = x}
for i = 1, 1000 do e:set{x = ns.concat({head * (1 + i), rest})} end
lesson{title = "t", source = "000", section = "s", steps = {{text = "x"}}}
