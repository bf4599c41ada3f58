-- hostile: table.insert shifts #t elements in C; __len says there are 2^60
local t = setmetatable({}, {__len = function() return 1 << 60 end})
table.insert(t, 1, "x")
