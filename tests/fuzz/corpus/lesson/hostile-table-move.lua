-- hostile: table.move over a huge range loops in C
local t = {}
table.move(t, 1, math.maxinteger - 1, 1, {})
