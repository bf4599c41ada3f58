-- not hostile: many large temporaries, dropped at once; must finish (the GC keeps up)
local s = 0
for i = 1, 400 do s = s + ns.full({256, 256}, 1):sum() end
assert(s == 400 * 256 * 256)
lesson{title = "garbage", source = "000", section = "test", steps = {{text = "done"}}}
-- and the module's metatables are out of reach (a lesson cannot swap a tensor's __gc)
assert(getmetatable(ns.zeros({1})) == false, "the tensor metatable is reachable")
