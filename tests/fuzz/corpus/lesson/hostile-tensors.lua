-- hostile: keep allocating tensors (C memory the Lua allocator never sees)
local keep = {}
for i = 1, 1e6 do keep[i] = ns.full({512, 512}, i) end
